/*
 * zcor-bench — performance benchmarks of zcor. Not tests: nothing here
 * passes or fails; it prints numbers to record in docs/PERFORMANCE.md.
 *
 *   zcor-bench write [--nodes N[,N…]] [--samples K] [--json] [--explain]
 *                    [--fts automerge=8,crisismerge=16,…] [--fts-batch N] [--keep DIR]
 *
 * write: creates memories through the same entry point the tools use
 * (zcor_tool_call "zcor_memory_write"), filling a fresh store up to each
 * N, and times K further writes there. Between two timed writes it times
 * a bare 4 KiB pwrite + fdatasync of a file in the same directory: the
 * floor any durable write pays on this disk, measured in the same minute,
 * so the ratio of the two medians is what the store adds. It counts the
 * pages SQLite wrote per write (WAL frames: SQLITE_DBSTATUS_CACHE_WRITE)
 * and, after a checkpoint, the bytes memory.db holds per memory. In the
 * same run it times the seed-000 way of persisting: the whole state
 * serialised to one JSON file and replaced (temp file + fsync + rename) on
 * every write, at the same N. --explain also names the b-trees the timed
 * writes wrote (WAL frames per table or index, through dbstat; a page is
 * named by its owner at the end, so a page freed by one b-tree and reused
 * by another counts for the second) and what each table and index holds
 * after the checkpoint; it turns off automatic checkpoints during the
 * timed writes, so its times are not the ones to quote. Generated text is
 * deterministic (a fixed seed), so runs are comparable.
 */
/* memmem, and RTLD_NEXT for turn_bench.inc's curl_easy_perform wrapper */
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "zcor.h"
#include "memory/memory.h"

struct zc_mem *zc_bench_mem(zcor *z); /* zcor.c */

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

/* CPU time of the calling thread: the part of a wall time not spent
 * waiting (for fsync, or for the CPU another process holds). */
static double cpu_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
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

struct write_run {
	double p50, p99;           /* zcor_memory_write */
	double sync_p50, sync_p99; /* bare 4 KiB pwrite + fdatasync, between them */
	double fill_s;
	double pages_per_write;    /* WAL frames the timed writes appended, per write */
	double bytes_per_memory;   /* memory.db after a checkpoint / memories in it */
	double bytes_per_added;    /* its growth over the timed writes / k */
	long long db_bytes;
	json_t *explain;           /* --explain: {frames: {btree: per write}, bytes: {btree: n}} */
};

static long long file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

static void checkpoint(sqlite3 *db)
{
	if (sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL) != SQLITE_OK) {
		fprintf(stderr, "zcor-bench: checkpoint failed: %s\n", sqlite3_errmsg(db));
		exit(3);
	}
}

/* pgno -> the table or index it belongs to, from dbstat (names in an
 * object keyed by the decimal page number). */
static json_t *page_owners(sqlite3 *db)
{
	json_t *m = json_object();
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, "SELECT name, pageno FROM dbstat", -1, &st, NULL) != SQLITE_OK) {
		fprintf(stderr, "zcor-bench: dbstat: %s\n", sqlite3_errmsg(db));
		return m;
	}
	while (sqlite3_step(st) == SQLITE_ROW) {
		char k[24];
		snprintf(k, sizeof(k), "%lld", (long long)sqlite3_column_int64(st, 1));
		json_object_set_new(m, k, json_string((const char *)sqlite3_column_text(st, 0)));
	}
	sqlite3_finalize(st);
	return m;
}

/* The frames of the WAL file, counted per b-tree and divided by k. */
static json_t *wal_frames_by_btree(sqlite3 *db, const char *wal, long k)
{
	json_t *owners = page_owners(db), *out = json_object();
	FILE *f = fopen(wal, "rb");
	unsigned char hdr[32], fh[24];
	if (!f || fread(hdr, 1, 32, f) != 32) {
		if (f)
			fclose(f);
		json_decref(owners);
		return out;
	}
	uint32_t pgsz = (uint32_t)hdr[8] << 24 | (uint32_t)hdr[9] << 16 | (uint32_t)hdr[10] << 8 | hdr[11];
	json_t *counts = json_object();
	while (fread(fh, 1, 24, f) == 24 && fseek(f, (long)pgsz, SEEK_CUR) == 0) {
		uint32_t pgno = (uint32_t)fh[0] << 24 | (uint32_t)fh[1] << 16 | (uint32_t)fh[2] << 8 | fh[3];
		char key[24];
		snprintf(key, sizeof(key), "%u", pgno);
		const char *name = json_string_value(json_object_get(owners, key));
		if (!name)
			name = pgno == 1 ? "(header)" : "(freelist or new)";
		json_t *c = json_object_get(counts, name);
		json_object_set_new(counts, name, json_integer((c ? json_integer_value(c) : 0) + 1));
	}
	fclose(f);
	const char *name;
	json_t *c;
	json_object_foreach(counts, name, c)
		json_object_set_new(out, name, json_real((double)json_integer_value(c) / (double)k));
	json_decref(counts);
	json_decref(owners);
	return out;
}

static json_t *bytes_by_btree(sqlite3 *db)
{
	json_t *out = json_object();
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, "SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC",
			       -1, &st, NULL) != SQLITE_OK)
		return out;
	while (sqlite3_step(st) == SQLITE_ROW)
		json_object_set_new(out, (const char *)sqlite3_column_text(st, 0),
				    json_integer(sqlite3_column_int64(st, 1)));
	sqlite3_finalize(st);
	return out;
}

static double bare_sync_us(int fd)
{
	static char block[4096];
	double a = now_us();
	if (pwrite(fd, block, sizeof(block), 0) != (ssize_t)sizeof(block) || fdatasync(fd) != 0) {
		perror("zcor-bench: bare fdatasync");
		exit(3);
	}
	return now_us() - a;
}

/* --fts "automerge=8,crisismerge=16": FTS5 settings (persistent in the
 * store) applied to nodes_fts and recall_fts before the fill, to measure
 * a merge policy before making it the schema's */
static void fts_settings(sqlite3 *db, const char *spec)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", spec);
	for (char *p = buf; p && *p;) {
		char *next = strchr(p, ',');
		if (next)
			*next++ = 0;
		char *eq = strchr(p, '=');
		if (eq) {
			*eq = 0;
			const char *tabs[] = {"nodes_fts", "recall_fts"};
			for (int t = 0; t < 2; t++) {
				char sql[400];
				snprintf(sql, sizeof(sql), "INSERT INTO %s(%s, rank) VALUES('%s', %ld)", tabs[t],
					 tabs[t], p, strtol(eq + 1, NULL, 10));
				if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) {
					fprintf(stderr, "zcor-bench: %s: %s\n", sql, sqlite3_errmsg(db));
					exit(3);
				}
			}
		}
		p = next;
	}
}

/* zcor: fill to n, then time k writes, each followed by a bare fdatasync;
 * keep: a directory the store is moved to (as write-N), for the readers'
 * benchmarks on a store written one memory at a time. */
static long fts_batch; /* --fts-batch N: nodes per full-text batch (0: ZC_FTS_BATCH) */

static void bench_zcor(long n, long k, int explain, const char *fts, const char *keep,
		       struct write_run *r)
{
	char *dir = tmpdir();
	zcor *z = NULL;
	if (zcor_open(&z, dir)) {
		fprintf(stderr, "zcor-bench: %s\n", zcor_errmsg(z));
		exit(3);
	}
	sqlite3 *db = zc_bench_mem(z)->store.db;
	if (fts)
		fts_settings(db, fts);
	if (fts_batch > 0)
		zc_mem_set_fts_batch(zc_bench_mem(z), fts_batch);
	char path[600], wal[640], probe[640];
	snprintf(path, sizeof(path), "%s/memory.db", dir);
	snprintf(wal, sizeof(wal), "%s-wal", path);
	snprintf(probe, sizeof(probe), "%s/fdatasync-probe", dir);
	int fd = open(probe, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		perror("zcor-bench: probe file");
		exit(3);
	}
	bare_sync_us(fd); /* allocate its block: later calls overwrite it */
	struct zcor_ctx ctx = {ZCOR_ACTOR_MODEL, NULL};
	double t0 = now_us();
	double *lat = malloc(sizeof(double) * (size_t)k), *sync = malloc(sizeof(double) * (size_t)k);
	long long size_at_n = 0;
	int cur = 0, hi = 0;
	for (long i = 0; i < n + k; i++) {
		if (i == n) {
			r->fill_s = (now_us() - t0) / 1e6;
			checkpoint(db);
			size_at_n = file_size(path);
			if (explain)
				sqlite3_exec(db, "PRAGMA wal_autocheckpoint = 0", NULL, NULL, NULL);
			sqlite3_db_status(db, SQLITE_DBSTATUS_CACHE_WRITE, &cur, &hi, 1);
		}
		char *args = write_args(), *out = NULL;
		double a = now_us();
		int rc = zcor_tool_call(z, &ctx, "zcor_memory_write", args, &out);
		double b = now_us();
		if (rc) {
			fprintf(stderr, "zcor-bench: write failed: %s\n", out);
			exit(3);
		}
		if (i >= n) {
			lat[i - n] = b - a;
			sync[i - n] = bare_sync_us(fd);
		}
		free(args);
		zcor_free(out);
	}
	sqlite3_db_status(db, SQLITE_DBSTATUS_CACHE_WRITE, &cur, &hi, 0);
	r->pages_per_write = (double)cur / (double)k;
	if (explain) {
		json_t *frames = wal_frames_by_btree(db, wal, k);
		r->explain = json_pack("{s:o}", "framesPerWrite", frames);
		sqlite3_exec(db, "PRAGMA wal_autocheckpoint = 1000", NULL, NULL, NULL);
	}
	checkpoint(db);
	r->db_bytes = file_size(path);
	r->bytes_per_memory = (double)r->db_bytes / (double)(n + k);
	r->bytes_per_added = (double)(r->db_bytes - size_at_n) / (double)k;
	if (explain)
		json_object_set_new(r->explain, "bytes", bytes_by_btree(db));
	r->p50 = pct(lat, (size_t)k, 0.50);
	r->p99 = pct(lat, (size_t)k, 0.99);
	r->sync_p50 = pct(sync, (size_t)k, 0.50);
	r->sync_p99 = pct(sync, (size_t)k, 0.99);
	free(lat);
	free(sync);
	close(fd);
	zcor_close(z);
	if (keep) {
		char to[700];
		unlink(probe);
		snprintf(to, sizeof(to), "%s/write-%ld", keep, n);
		rm_rf(to);
		if (rename(dir, to) != 0) {
			perror("zcor-bench: --keep");
			exit(3);
		}
	} else {
		rm_rf(dir);
	}
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
	int nsizes = 3, as_json = 0, explain = 0;
	long k = 200, kfile = 0;
	const char *fts = NULL, *keep = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--fts") && i + 1 < argc) {
			fts = argv[++i];
		} else if (!strcmp(argv[i], "--fts-batch") && i + 1 < argc) {
			fts_batch = strtol(argv[++i], NULL, 10);
		} else if (!strcmp(argv[i], "--keep") && i + 1 < argc) {
			keep = argv[++i];
		} else if (!strcmp(argv[i], "--json")) {
			as_json = 1;
		} else if (!strcmp(argv[i], "--explain")) {
			explain = 1;
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
					"[--file-samples K] [--json] [--explain] [--fts automerge=8,…] [--fts-batch N] [--keep DIR]\n");
			return 2;
		}
	}
	if (k < 1) {
		fprintf(stderr, "zcor-bench: --samples must be at least 1\n");
		return 2;
	}
	struct utsname u;
	uname(&u);
	json_t *out = json_pack("{s:s, s:s, s:i, s:[]}", "benchmark", "write", "machine", u.machine,
				"cpus", (int)sysconf(_SC_NPROCESSORS_ONLN), "results");
	double base_p50 = 0;
	for (int i = 0; i < nsizes; i++) {
		long n = sizes[i];
		struct write_run w = {0};
		double fp50, fp99;
		long kf = kfile ? kfile : (n >= 100000 ? 30 : n >= 10000 ? 100 : k);
		rng = 0x2545F4914F6CDD1DULL;
		bench_zcor(n, k, explain, fts, keep, &w);
		rng = 0x2545F4914F6CDD1DULL;
		bench_whole_file(n, kf, &fp50, &fp99);
		if (i == 0)
			base_p50 = w.p50;
		json_t *r = json_pack("{s:I, s:{s:f, s:f, s:I, s:f, s:f, s:f, s:I, s:f, s:f}, "
				      "s:{s:f, s:f, s:f}, s:{s:f, s:f, s:I}, s:f, s:f}",
				      "nodes", (json_int_t)n, "zcor", "p50_us", w.p50, "p99_us", w.p99,
				      "samples", (json_int_t)k, "fill_seconds", w.fill_s,
				      "pages_per_write", w.pages_per_write, "bytes_per_memory",
				      w.bytes_per_memory, "db_bytes", (json_int_t)w.db_bytes,
				      "bytes_per_added_memory", w.bytes_per_added, "p50_vs_fdatasync",
				      w.p50 / w.sync_p50, "fdatasync4k", "p50_us", w.sync_p50, "p99_us",
				      w.sync_p99, "zcor_p50_ratio", w.p50 / w.sync_p50, "wholeFile",
				      "p50_us", fp50, "p99_us", fp99, "samples", (json_int_t)kf,
				      "speedup_p50", fp50 / w.p50, "p50_vs_first_size", w.p50 / base_p50);
		if (w.explain)
			json_object_set_new(r, "explain", w.explain);
		json_array_append_new(json_object_get(out, "results"), r);
		if (!as_json) {
			printf("N=%-7ld zcor write p50 %6.0f us p99 %6.0f us | fdatasync 4k p50 %5.0f us "
			       "-> %.2fx | %.1f pages/write | %.0f B/memory (%.0f B per added) | "
			       "whole-file p50 %9.0f us, speedup %.1fx | p50 vs N=%ld: %.2fx\n",
			       n, w.p50, w.p99, w.sync_p50, w.p50 / w.sync_p50, w.pages_per_write,
			       w.bytes_per_memory, w.bytes_per_added, fp50, fp50 / w.p50, sizes[0],
			       w.p50 / base_p50);
			if (w.explain) {
				char *s = json_dumps(w.explain, JSON_INDENT(2) | JSON_SORT_KEYS);
				puts(s);
				free(s);
			}
		}
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
#include "turn_bench.inc"
#include "qq_bench.inc"
#include "digest_bench.inc"

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
	if (argc >= 2 && !strcmp(argv[1], "turn"))
		return cmd_turn(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "qq"))
		return cmd_qq(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "digest"))
		return cmd_digest(argc - 1, argv + 1);
	fprintf(stderr, "usage: zcor-bench write [--nodes N[,N…]] [--samples K] [--json] [--explain]\n"
			"       zcor-bench recall [--nodes N[,N…]] [--messages K] [--warmup W] [--warm MB] [--json] "
			"[--keep DIR]\n"
			"       zcor-bench recall-run --dir D [--mode zcor|scan] [--messages K] [--warmup W] [--warm MB] "
			"[--idle S]\n"
			"       zcor-bench quality --data FILE [--json] [--conversation KEY] [--trace] [--keep]\n"
			"                          [--weights PRESET|JSON] [--shape NAME=V,…]\n"
			"       zcor-bench turn [--memories N[,N…]] [--conversations C] [--turns K] [--warmup W] "
			"[--dir D] [--json] [--callgrind]\n"
			"       zcor-bench qq [--events N] [--groups G] [--mentions P] [--rate R] [--quiet-ms Q] "
			"[--pipeline] [--json]\n"
			"       zcor-bench digest [--lines N] [--runs R] [--upserts K] [--json]\n");
	return 2;
}
