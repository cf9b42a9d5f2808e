/*
 * zcor-bench — performance benchmarks of zcor. Not tests: nothing here
 * passes or fails; it prints numbers to record in docs/PERFORMANCE.md.
 *
 *   zcor-bench write [--nodes N[,N…]] [--samples K] [--json]
 *
 * write: creates memories through the same entry point the tools use
 * (zcor_tool_call "zcor_memory_write"), filling a fresh store up to each
 * N, and times K further writes there. In the same run it times the
 * seed-000 way of persisting: the whole state serialised to one JSON file
 * and replaced (temp file + fsync + rename) on every write, at the same N.
 * Generated text is deterministic (a fixed seed), so runs are comparable.
 */
#include <fcntl.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "zcor.h"

static uint64_t rng = 0x2545F4914F6CDD1DULL;

static uint32_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

static const char *const words[] = {
	"周五", "开黑", "群主", "打本", "奶茶", "考研", "原神", "王者荣耀", "生日", "猫咪",
	"加班", "火锅", "北京", "上海", "周末", "早睡", "摸鱼", "表情包", "学长", "室友",
	"蚌埠住了", "副本", "抽卡", "番剧", "实习", "面试", "旅游", "演唱会", "健身", "外卖",
};

static void gen_text(char *out, size_t cap, int nwords)
{
	size_t len = 0;
	out[0] = '\0';
	for (int i = 0; i < nwords; i++) {
		const char *w = words[next_rand() % (sizeof(words) / sizeof(words[0]))];
		int n = snprintf(out + len, cap - len, "%s%s", i ? "，" : "", w);
		if (n < 0 || (size_t)n >= cap - len)
			break;
		len += (size_t)n;
	}
}

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double pct(double *v, size_t n, double p)
{
	qsort(v, n, sizeof(double), cmp_double);
	size_t i = (size_t)(p * (double)(n - 1) + 0.5);
	return v[i];
}

static char *tmpdir(void)
{
	const char *base = getenv("TMPDIR");
	char *t = malloc(512);
	snprintf(t, 512, "%s/zcor-bench-XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(t)) {
		perror("mkdtemp");
		exit(3);
	}
	return t;
}

static void rm_rf(const char *dir)
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "zcor-bench: could not remove %s\n", dir);
}

static char *write_args(void)
{
	char title[256], content[1024];
	gen_text(title, sizeof(title), 3);
	gen_text(content, sizeof(content), 24);
	json_t *a = json_pack("{s:s, s:s, s:[s, s]}", "title", title, "content", content, "keywords",
			      words[next_rand() % 30], words[next_rand() % 30]);
	char *s = json_dumps(a, JSON_COMPACT);
	json_decref(a);
	return s;
}

/* zcor: fill to n, then time k writes. */
static void bench_zcor(long n, long k, double *p50, double *p99, double *fill_s)
{
	char *dir = tmpdir();
	zcor *z = NULL;
	char *err = NULL;
	if (zcor_open(&z, dir, &err)) {
		fprintf(stderr, "zcor-bench: %s\n", err);
		exit(3);
	}
	struct zcor_ctx ctx = {ZCOR_ACTOR_MODEL, NULL};
	double t0 = now_us();
	double *lat = malloc(sizeof(double) * (size_t)k);
	for (long i = 0; i < n + k; i++) {
		char *args = write_args(), *out = NULL;
		double a = now_us();
		int rc = zcor_tool_call(z, &ctx, "zcor_memory_write", args, &out);
		double b = now_us();
		if (rc) {
			fprintf(stderr, "zcor-bench: write failed: %s\n", out);
			exit(3);
		}
		if (i >= n)
			lat[i - n] = b - a;
		else if (i == n - 1)
			*fill_s = (b - t0) / 1e6;
		free(args);
		zcor_free(out);
	}
	*p50 = pct(lat, (size_t)k, 0.50);
	*p99 = pct(lat, (size_t)k, 0.99);
	free(lat);
	zcor_close(z);
	rm_rf(dir);
	free(dir);
}

/* The seed-000 way: the whole state in one JSON file, rewritten on every
 * write (temp file + fsync + rename), with the history appended to it. */
static void bench_whole_file(long n, long k, double *p50, double *p99)
{
	char *dir = tmpdir();
	char path[600], tmp[640];
	snprintf(path, sizeof(path), "%s/memory-state.json", dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	json_t *state = json_pack("{s:i, s:[], s:[], s:[], s:[]}", "version", 3, "nodes", "important",
				  "relationships", "history");
	json_t *nodes = json_object_get(state, "nodes"), *hist = json_object_get(state, "history");
	double *lat = malloc(sizeof(double) * (size_t)k);
	for (long i = 0; i < n + k; i++) {
		char *args = write_args();
		double a = now_us();
		json_t *node = json_loads(args, 0, NULL);
		char id[32];
		snprintf(id, sizeof(id), "m%06ld", i + 1);
		json_object_set_new(node, "id", json_string(id));
		json_object_set_new(node, "parentId", json_null());
		json_object_set_new(node, "createdAt", json_string("2026-11-29T00:00:00.000Z"));
		json_object_set_new(node, "updatedAt", json_string("2026-11-29T00:00:00.000Z"));
		json_array_append(nodes, node);
		json_array_append_new(hist, json_pack("{s:s, s:s, s:o}", "operation", "zcor_memory_write",
						      "status", "ok", "after", node));
		if (i >= n) {
			char *text = json_dumps(state, JSON_COMPACT);
			int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			size_t len = strlen(text), off = 0;
			while (off < len) {
				ssize_t w = write(fd, text + off, len - off);
				if (w <= 0) {
					perror("write");
					exit(3);
				}
				off += (size_t)w;
			}
			fsync(fd);
			close(fd);
			rename(tmp, path);
			int dfd = open(dir, O_RDONLY);
			fsync(dfd);
			close(dfd);
			free(text);
			lat[i - n] = now_us() - a;
		}
		free(args);
	}
	*p50 = pct(lat, (size_t)k, 0.50);
	*p99 = pct(lat, (size_t)k, 0.99);
	free(lat);
	json_decref(state);
	rm_rf(dir);
	free(dir);
}

static int cmd_write(int argc, char **argv)
{
	long sizes[16] = {1000, 10000, 100000};
	int nsizes = 3, as_json = 0;
	long k = 200, kfile = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			as_json = 1;
		} else if (!strcmp(argv[i], "--nodes") && i + 1 < argc) {
			nsizes = 0;
			for (char *p = argv[++i]; *p && nsizes < 16;) {
				sizes[nsizes++] = strtol(p, &p, 10);
				if (*p == ',')
					p++;
			}
		} else if (!strcmp(argv[i], "--samples") && i + 1 < argc) {
			k = strtol(argv[++i], NULL, 10);
		} else if (!strcmp(argv[i], "--file-samples") && i + 1 < argc) {
			kfile = strtol(argv[++i], NULL, 10);
		} else {
			fprintf(stderr, "usage: zcor-bench write [--nodes N[,N…]] [--samples K] "
					"[--file-samples K] [--json]\n");
			return 2;
		}
	}
	struct utsname u;
	uname(&u);
	json_t *out = json_pack("{s:s, s:s, s:i, s:[]}", "benchmark", "write", "machine", u.machine,
				"cpus", (int)sysconf(_SC_NPROCESSORS_ONLN), "results");
	double base_p50 = 0;
	for (int i = 0; i < nsizes; i++) {
		long n = sizes[i];
		double zp50, zp99, fill = 0, fp50, fp99;
		long kf = kfile ? kfile : (n >= 100000 ? 30 : n >= 10000 ? 100 : k);
		rng = 0x2545F4914F6CDD1DULL;
		bench_zcor(n, k, &zp50, &zp99, &fill);
		rng = 0x2545F4914F6CDD1DULL;
		bench_whole_file(n, kf, &fp50, &fp99);
		if (i == 0)
			base_p50 = zp50;
		json_t *r = json_pack("{s:I, s:{s:f, s:f, s:I, s:f}, s:{s:f, s:f, s:I}, s:f, s:f}",
				      "nodes", (json_int_t)n, "zcor", "p50_us", zp50, "p99_us", zp99,
				      "samples", (json_int_t)k, "fill_seconds", fill, "wholeFile",
				      "p50_us", fp50, "p99_us", fp99, "samples", (json_int_t)kf,
				      "speedup_p50", fp50 / zp50, "p50_vs_first_size", zp50 / base_p50);
		json_array_append_new(json_object_get(out, "results"), r);
		if (!as_json)
			printf("N=%-7ld zcor write p50 %8.0f us p99 %8.0f us | whole-file rewrite p50 %10.0f "
			       "us p99 %10.0f us | speedup %.1fx | zcor p50 vs N=%ld: %.2fx\n",
			       n, zp50, zp99, fp50, fp99, fp50 / zp50, sizes[0], zp50 / base_p50);
		fflush(stdout);
	}
	if (as_json) {
		char *s = json_dumps(out, JSON_INDENT(2));
		puts(s);
		free(s);
	}
	json_decref(out);
	return 0;
}

#include "recall_bench.inc"
#include "quality_bench.inc"

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "write"))
		return cmd_write(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "recall"))
		return cmd_recall(argc - 1, argv + 1, argv[0]);
	if (argc >= 2 && !strcmp(argv[1], "recall-run"))
		return cmd_recall_run(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "quality"))
		return cmd_quality(argc - 1, argv + 1);
	fprintf(stderr, "usage: zcor-bench write [--nodes N[,N…]] [--samples K] [--json]\n"
			"       zcor-bench recall [--nodes N[,N…]] [--messages K] [--warmup W] [--warm MB] [--json] "
			"[--keep DIR]\n"
			"       zcor-bench recall-run --dir D [--mode zcor|scan] [--messages K] [--warmup W] [--warm MB] "
			"[--idle S]\n"
			"       zcor-bench quality --data FILE [--json] [--conversation KEY] [--trace]\n");
	return 2;
}
