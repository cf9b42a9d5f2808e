/*
 * fuzz_import.c — a libFuzzer target for `zcor import qq-memory` (the
 * seed-003 directory layout, src/memory/exchange.c with view.c, qqmem.c,
 * transcript.c) and `zcor export qq-memory` after it.
 *
 * The input is a small archive format that builds a directory tree under
 * a temporary root: records of
 *
 *   op          bits 0-1: 0 file, 1 directory, 2 symbolic link, 3 FIFO;
 *               bits 2-3: the path's depth - 1 (1 to 4 components);
 *               bit 4: in the export directory (there before the export)
 *               instead of the tree to import
 *   component×  a byte < 0xE0 names one of names[] (the layout's own
 *               names and a few others); 0xE0 | n takes the next n + 1
 *               bytes as the name ('/' and NUL become '_', "." and ".."
 *               become "_")
 *   file        two bytes of length (little-endian, at most 4096), then
 *               the content
 *   link        a byte: targets[] (inside the tree, up and out of it to the
 *               canary, absolute paths, devices, loops), or 0xF0 | n and
 *               n + 1 bytes of raw target
 *
 * under root/src (or root/out), then imports root/src into a fresh memory
 * directory root/mem and exports that to root/out. root/canary holds a
 * file, an image and a directory that the trees' links point at.
 *
 * Oracle, besides ASan/UBSan/LeakSanitizer and libFuzzer's timeout (a
 * FIFO or a link loop must not hang the import):
 * - nothing is written outside the memory directory and the export
 *   directory: root/src and root/canary are exactly as they were (every
 *   entry's type, size, modification time, content or link target), and
 *   root holds nothing else;
 * - zcor creates no symbolic link in either (a link that was in root/out
 *   may be replaced, never written through);
 * - import and export answer a JSON report, or an error with a message.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

const char *fz_target = "fuzz_import";

#define MAX_RECORDS 48
#define MAX_FILE 4096

static const char *const names[] = {
	"INDEX.md", "PEOPLE.md", "COGNITION.md", "STICKERS.md", "digest.json", "memory-state.json",
	"conversations", "group-1", "group-100000001", "private-2", "console-x", "group-", "MEMORY.md",
	"archive", "2026-01.md", "2026-13.md", "log", "2026-01-01.jsonl", "2026-02-30.jsonl", ".qq-stickers",
	"stickers", "media", ".qq-media", "无语.gif", "a.gif", "b.png", "c.jpg", "x", "中文", ".hidden",
	"README", "memory.db",
};
#define NNAMES (sizeof(names) / sizeof(names[0]))

/* "@" stands for the root directory (an absolute path out of the tree) */
static const char *const targets[] = {
	"INDEX.md", "a.gif", ".", "..", "../..", "/", "nonexistent", "/dev/zero", "/dev/null",
	"../canary/secret.txt", "../../canary/secret.txt", "../../../canary/secret.txt",
	"../../../../canary/secret.txt", "../../../../../canary/secret.txt", "@/canary/secret.txt",
	"@/canary/img.gif", "@/canary", "@/canary/dir", "../canary", "../../canary", "../../../canary",
	"@/mem", "@/out", "@/mem/memory.db", "loop", "/proc/self/cwd",
};
#define NTARGETS (sizeof(targets) / sizeof(targets[0]))

static char *root;
static char src[4096], mem[4096], out[4096], canary[4096];

/* ---- building the tree ---------------------------------------------------- */

struct input {
	const uint8_t *p;
	size_t n;
};

static int next(struct input *in, uint8_t *b)
{
	if (!in->n)
		return 0;
	*b = *in->p++;
	in->n--;
	return 1;
}

static void raw_name(struct input *in, size_t len, char *buf, size_t cap)
{
	size_t k = 0;
	uint8_t b;
	while (k < len && k + 1 < cap && next(in, &b))
		buf[k++] = b == '/' || b == 0 ? '_' : (char)b;
	buf[k] = '\0';
	if (!k || strcmp(buf, ".") == 0 || strcmp(buf, "..") == 0)
		snprintf(buf, cap, "_");
}

/* Is every directory above path (under src) a real directory, made if
 * missing? A link or a file on the way: no (we never write through a
 * link, so the tree stays under src). */
static int parents(char *path, const char *top)
{
	for (char *s = path + strlen(top) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		struct stat st;
		int ok = lstat(path, &st) == 0 ? S_ISDIR(st.st_mode) : mkdir(path, 0755) == 0;
		*s = '/';
		if (!ok)
			return 0;
	}
	return 1;
}

static void build(const uint8_t *data, size_t size)
{
	struct input in = {data, size};
	uint8_t op, b;
	for (int r = 0; r < MAX_RECORDS && next(&in, &op); r++) {
		char path[4096];
		int depth = ((op >> 2) & 3) + 1;
		const char *top = op & 0x10 ? out : src;
		size_t len = (size_t)snprintf(path, sizeof(path), "%s", top);
		for (int d = 0; d < depth && next(&in, &b); d++) {
			char name[64];
			if (b < 0xE0)
				snprintf(name, sizeof(name), "%s", names[b % NNAMES]);
			else
				raw_name(&in, (size_t)(b & 0x1F) + 1, name, sizeof(name));
			len += (size_t)snprintf(path + len, sizeof(path) - len, "/%s", name);
		}
		if (len == strlen(top) || !parents(path, top))
			continue;
		switch (op & 3) {
		case 0: { /* a file: never through a link that is there already */
			uint8_t lo = 0, hi = 0;
			next(&in, &lo);
			next(&in, &hi);
			size_t n = ((size_t)hi << 8 | lo) % (MAX_FILE + 1);
			n = n < in.n ? n : in.n;
			int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK, 0644);
			struct stat st;
			if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && write(fd, in.p, n) < 0)
				fz_bug("cannot write %s: %s", path, strerror(errno));
			if (fd >= 0)
				close(fd);
			in.p += n;
			in.n -= n;
			break;
		}
		case 1:
			mkdir(path, 0755);
			break;
		case 2: {
			char target[4096];
			if (!next(&in, &b))
				break;
			if (b >= 0xF0) {
				raw_name(&in, (size_t)(b & 0x0F) + 1, target, sizeof(target));
				for (char *t = target; *t; t++)
					if (*t == '_' && t == target)
						*t = '/'; /* let a raw target be absolute */
			} else if (targets[b % NTARGETS][0] == '@') {
				snprintf(target, sizeof(target), "%s%s", root, targets[b % NTARGETS] + 1);
			} else {
				snprintf(target, sizeof(target), "%s", targets[b % NTARGETS]);
			}
			if (strcmp(target, "loop") == 0)
				snprintf(target, sizeof(target), "%s", strrchr(path, '/') + 1); /* itself */
			symlink(target, path);
			break;
		}
		default:
			mkfifo(path, 0644);
			break;
		}
	}
}

/* ---- what must not change ------------------------------------------------- */

/* One line per entry under a directory: relative path, type, size,
 * mtime, and a hash of a file's content or a link's target. */
static struct {
	char *text;
	size_t len, cap;
	size_t skip; /* length of the prefix to drop from paths */
	int links;   /* symbolic links seen */
} snap;

static unsigned long long fnv(const unsigned char *p, size_t n)
{
	unsigned long long h = 1469598103934665603ULL;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return h;
}

static void snap_add(const char *line)
{
	size_t n = strlen(line);
	if (snap.len + n + 1 > snap.cap) {
		snap.cap = (snap.len + n + 1) * 2;
		snap.text = realloc(snap.text, snap.cap);
	}
	memcpy(snap.text + snap.len, line, n + 1);
	snap.len += n;
}

static int snap_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)flag, (void)ftw;
	unsigned long long h = 0;
	if (S_ISLNK(st->st_mode)) {
		char t[4096];
		ssize_t n = readlink(path, t, sizeof(t));
		h = fnv((const unsigned char *)t, n > 0 ? (size_t)n : 0);
		snap.links++;
	} else if (S_ISREG(st->st_mode)) {
		int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
		unsigned char buf[8192];
		ssize_t n;
		while (fd >= 0 && (n = read(fd, buf, sizeof(buf))) > 0)
			h = h * 31 + fnv(buf, (size_t)n);
		if (fd >= 0)
			close(fd);
	}
	char line[4096 + 128];
	snprintf(line, sizeof(line), "%s %o %lld %lld.%09ld %llx\n", path + snap.skip, st->st_mode,
		 (long long)st->st_size, (long long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec, h);
	snap_add(line);
	return 0;
}

/* The snapshot of dir as text (caller frees); *links = links in it. */
static char *snapshot(const char *dir, int *links)
{
	snap.text = NULL;
	snap.len = snap.cap = 0;
	snap.skip = strlen(root);
	snap.links = 0;
	snap_add("");
	nftw(dir, snap_entry, 16, FTW_PHYS);
	if (links)
		*links = snap.links;
	return snap.text;
}

/* ---- the target ----------------------------------------------------------- */

static void cleanup(void)
{
	fz_rmtree(root);
	free(root);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	root = fz_mkdtemp("import");
	atexit(cleanup);
	snprintf(src, sizeof(src), "%s/src", root);
	snprintf(mem, sizeof(mem), "%s/mem", root);
	snprintf(out, sizeof(out), "%s/out", root);
	snprintf(canary, sizeof(canary), "%s/canary", root);
	char p[4200];
	if (mkdir(canary, 0755) != 0)
		fz_bug("mkdir %s: %s", canary, strerror(errno));
	snprintf(p, sizeof(p), "%s/dir", canary);
	mkdir(p, 0755);
	static const unsigned char gif[] = "GIF89a\1\0\1\0\x80\0\0\0\0\0\xff\xff\xff!\xf9\4\1\0\0\0\0,\0\0\0\0\1\0\1\0\0\2\2D\1\0;";
	const struct {
		const char *name;
		const void *data;
		size_t len;
	} files[] = {
		{"secret.txt", "# MEMORY.md\n\n## 事实\n- 不该被改写的秘密｜2026-01-01\n", 0},
		{"img.gif", gif, sizeof(gif) - 1},
		{"dir/INDEX.md", "# INDEX\n\n- canary\n", 0},
	};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", canary, files[i].name);
		FILE *f = fopen(p, "wb");
		if (!f)
			fz_bug("cannot create %s", p);
		fwrite(files[i].data, 1, files[i].len ? files[i].len : strlen(files[i].data), f);
		fclose(f);
	}
	return 0;
}

/* A report, or an error naming what failed (zcor_errmsg). */
static void check_report(const char *what, int rc, char *report)
{
	if (rc == ZCOR_OK) {
		json_t *v = json_loads(report ? report : "", 0, NULL);
		if (!json_is_object(v))
			fz_bug("%s answered a report that is not a JSON object: %.300s", what, report ? report : "(null)");
		json_decref(v);
	}
	zcor_free(report);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz_rmtree(src);
	fz_rmtree(mem);
	fz_rmtree(out);
	if (mkdir(src, 0755) != 0 || mkdir(out, 0755) != 0)
		fz_bug("cannot make %s or %s: %s", src, out, strerror(errno));
	build(data, size);
	int out_links = 0;
	char *before_src = snapshot(src, NULL), *before_canary = snapshot(canary, NULL);
	free(snapshot(out, &out_links));

	zcor *z = fz_open(mem);
	char *report = NULL;
	int rc = zcor_import_qq(z, src, NULL, NULL, &report);
	if (rc != ZCOR_OK && !*zcor_errmsg(z))
		fz_bug("import failed without a message");
	check_report("import", rc, report);
	report = NULL;
	rc = zcor_export_qq(z, out, &report);
	if (rc != ZCOR_OK && !*zcor_errmsg(z))
		fz_bug("export failed without a message");
	check_report("export", rc, report);
	zcor_close(z);

	char *after_src = snapshot(src, NULL), *after_canary = snapshot(canary, NULL);
	if (strcmp(before_src, after_src) != 0)
		fz_bug("the imported tree changed:\n--- before\n%s--- after\n%s", before_src, after_src);
	if (strcmp(before_canary, after_canary) != 0)
		fz_bug("something outside the memory and export directories changed:\n--- before\n%s--- after\n%s",
		       before_canary, after_canary);
	int links = 0;
	free(snapshot(mem, &links));
	if (links)
		fz_bug("the import left %d symbolic link(s) in the memory directory", links);
	free(snapshot(out, &links));
	if (links > out_links)
		fz_bug("the export wrote %d symbolic link(s)", links - out_links);
	/* and nothing new beside them */
	static const char *const own[] = {"src", "mem", "out", "canary"};
	char p[4200];
	DIR *d = opendir(root);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		int known = de->d_name[0] == '.' && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2]));
		for (size_t i = 0; i < 4 && !known; i++)
			known = strcmp(de->d_name, own[i]) == 0;
		if (!known) {
			snprintf(p, sizeof(p), "%s/%s", root, de->d_name);
			fz_bug("%s appeared beside the memory directory", p);
		}
	}
	if (d)
		closedir(d);
	free(before_src);
	free(before_canary);
	free(after_src);
	free(after_canary);
	return 0;
}
