/*
 * test_powerloss.c — issue 12, "no silent loss": power loss, not only
 * kill -9. A kill keeps the page cache, so everything written reaches
 * the disk sooner or later; a power cut keeps only what was synced. This
 * test cuts the power the way SQLite's crash tests do (test6.c) and
 * checks what a rebooted machine would find.
 *
 * 1. A stream of writes (script.c) runs once in this process, against a
 *    copy of its starting directory: the state after the open and after
 *    every step (memory.db as a canonical dump, the plain files by hash)
 *    is the reference.
 * 2. The same stream runs in powerloss_writer under libzcor_powerloss.so
 *    (powerloss.c), which records every change to the directory and every
 *    fsync in a journal; the writer acknowledges each step that returned
 *    OK on a pipe. One run without a cut counts the operations (T).
 * 3. For each chosen point N in 1..T: a fresh copy, a run cut before
 *    operation N (SIGKILL; the operation never happens), then a "reboot":
 *    the directory is rebuilt from the starting copy and the journal —
 *    every synced byte; of what was not synced, according to the point's
 *    seeded mode, nothing, everything (what kill -9 leaves), or a random
 *    part (each write kept, dropped, or torn into 512-byte pieces kept,
 *    dropped or filled with garbage; each unsynced name created, removed
 *    or renamed kept or dropped). A file's data is durable once the file
 *    was fsynced; a name once its directory was. SQLite's -shm is lost.
 * 4. The rebooted directory is opened normally and must hold every
 *    acknowledged write and the in-flight one wholly or not at all:
 *    integrity_check ok, no foreign key broken, memory.db exactly the
 *    reference state after the last acknowledged step or the next one,
 *    synonyms.json / config.json / mirror/ files old or new (never torn),
 *    every backup, sticker and cached image the store names present with
 *    its content; zcor_doctor finds nothing, and a new write succeeds.
 *    A quarter of the points cut the power a second time while the
 *    rebooted directory is opened (WAL recovery, the checkpoint at close),
 *    and the store must stay exactly as it was.
 *
 * Points: ZCOR_POWERLOSS_POINTS (default 200, over the main stream and the
 * first writes in an empty directory), seed ZCOR_POWERLOSS_SEED (default
 * fixed, so a run repeats exactly). A failing point keeps its directory
 * and names how to repeat it. docs/OPERATIONS.md ("Durability") describes
 * the model.
 */
#define _GNU_SOURCE
#include "harness.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <spawn.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "journal.h"
#include "script.h"

extern char **environ;

/* ---- small things ---------------------------------------------------------- */

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p) {
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
	return p;
}

static char *xstrdup(const char *s)
{
	char *p = strdup(s);
	if (!p)
		exit(2);
	return p;
}

static char *path2(const char *a, const char *b)
{
	char *p = NULL;
	if (asprintf(&p, "%s/%s", a, b) < 0)
		exit(2);
	return p;
}

struct bytes {
	unsigned char *p;
	size_t len, cap;
};

static void bytes_reserve(struct bytes *b, size_t n)
{
	if (n > b->cap) {
		b->cap = n > b->cap * 2 ? n : b->cap * 2;
		b->p = xrealloc(b->p, b->cap);
	}
}

static void bytes_add(struct bytes *b, const void *d, size_t n)
{
	bytes_reserve(b, b->len + n + 1);
	memcpy(b->p + b->len, d, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void bytes_adds(struct bytes *b, const char *s) { bytes_add(b, s, strlen(s)); }

static int read_all(const char *path, struct bytes *b)
{
	b->len = 0;
	bytes_reserve(b, 1);
	b->p[0] = '\0';
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	unsigned char chunk[65536];
	ssize_t n;
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		bytes_add(b, chunk, (size_t)n);
	close(fd);
	return n < 0 ? -1 : 0;
}

static int write_all(const char *path, const void *d, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	const char *p = d;
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w <= 0) {
			close(fd);
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return close(fd);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)f;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

static void rm_rf(const char *path) { nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS); }

static int copy_tree(const char *src, const char *dst)
{
	if (mkdir(dst, 0755) != 0 && errno != EEXIST)
		return -1;
	DIR *d = opendir(src);
	if (!d)
		return -1;
	struct dirent *de;
	int rc = 0;
	struct bytes b = {0};
	while (!rc && (de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		char *s = path2(src, de->d_name), *t = path2(dst, de->d_name);
		struct stat st;
		if (lstat(s, &st) != 0)
			rc = -1;
		else if (S_ISDIR(st.st_mode))
			rc = copy_tree(s, t);
		else if (S_ISREG(st.st_mode))
			rc = read_all(s, &b) || write_all(t, b.p, b.len);
		free(s);
		free(t);
	}
	free(b.p);
	closedir(d);
	return rc;
}

/* A fresh empty directory at path. */
static void fresh_dir(const char *path)
{
	rm_rf(path);
	if (mkdir(path, 0755) != 0) {
		perror(path);
		exit(2);
	}
}

static uint64_t fnv(const unsigned char *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h | 1; /* 0 is "absent" */
}

/* splitmix64: the seeded randomness of the reboots */
static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static unsigned pct(uint64_t *s) { return (unsigned)(rnd(s) % 100); }

/* ---- the plain files of a directory ------------------------------------------ */

/* Relative path -> content hash of every file but memory.db's own and
 * the temp files an interrupted atomic write leaves (name.tmp-PID-N). */
struct fmap {
	size_t n, cap;
	char **path;
	uint64_t *hash;
};

static void fmap_put(struct fmap *m, const char *path, uint64_t h)
{
	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 32;
		m->path = xrealloc(m->path, m->cap * sizeof(*m->path));
		m->hash = xrealloc(m->hash, m->cap * sizeof(*m->hash));
	}
	m->path[m->n] = xstrdup(path);
	m->hash[m->n++] = h;
}

static uint64_t fmap_get(const struct fmap *m, const char *path)
{
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->path[i], path) == 0)
			return m->hash[i];
	return 0;
}

static void fmap_free(struct fmap *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->path[i]);
	free(m->path);
	free(m->hash);
	memset(m, 0, sizeof(*m));
}

static int store_file(const char *rel)
{
	static const char *const own[] = {"memory.db", "memory.db-wal", "memory.db-shm",
					  "memory.db-journal", "serve.token"};
	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (strcmp(rel, own[i]) == 0)
			return 1;
	return 0;
}

static void fmap_walk(struct fmap *m, const char *root, const char *rel, struct bytes *b)
{
	char *abs = *rel ? path2(root, rel) : xstrdup(root);
	DIR *d = opendir(abs);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 || strstr(de->d_name, ".tmp-"))
			continue;
		char *r = *rel ? path2(rel, de->d_name) : xstrdup(de->d_name);
		char *p = path2(abs, de->d_name);
		struct stat st;
		if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
			fmap_walk(m, root, r, b);
		else if (!store_file(r) && read_all(p, b) == 0)
			fmap_put(m, r, fnv(b->p, b->len));
		free(r);
		free(p);
	}
	if (d)
		closedir(d);
	free(abs);
}

static void fmap_scan(struct fmap *m, const char *root)
{
	struct bytes b = {0};
	fmap_walk(m, root, "", &b);
	free(b.p);
}

/* ---- the state of memory.db ---------------------------------------------------- */

/* Derived data (rebuilt by zcor doctor --rebuild; hit counts skip the
 * fsync by design, docs/FORMATS.md) is not part of the state. */
static int derived_table(const char *t)
{
	static const char *const prefix[] = {"sqlite_", "nodes_fts", "messages_fts", "nodes_vocab",
					     "recall_fts"};
	static const char *const name[] = {"terms", "term_prefix", "hit_batch", "hit_log",
					   "recall_stats", "recall_df", "recall_gen"};
	for (size_t i = 0; i < sizeof(prefix) / sizeof(prefix[0]); i++)
		if (strncmp(t, prefix[i], strlen(prefix[i])) == 0)
			return 1;
	for (size_t i = 0; i < sizeof(name) / sizeof(name[0]); i++)
		if (strcmp(t, name[i]) == 0)
			return 1;
	return 0;
}

static int derived_column(const char *t, const char *c)
{
	return strcmp(t, "nodes") == 0 && (strcmp(c, "hits") == 0 || strcmp(c, "last_hit_at") == 0);
}

/* memory.db as text: every row of every table that is not derived, in a
 * fixed order. The history records of reads are left out: they commit
 * without an fsync (op.c), so the last of them may go in a power cut;
 * check_dir makes sure only those after the last change can. "EMPTY" when there is no
 * store yet (no file, or nothing committed). NULL and *why on failure.
 * Opened read-write, so a hot WAL is recovered as by any first open. */
static char *dump_db(const char *dir, char *why, size_t cap)
{
	char *path = path2(dir, "memory.db");
	sqlite3 *db = NULL;
	struct bytes out = {0};
	sqlite3_stmt *tables = NULL;
	int ok = 1;
	if (access(path, F_OK) != 0) {
		free(path);
		return xstrdup("EMPTY");
	}
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		snprintf(why, cap, "cannot open memory.db: %s", sqlite3_errmsg(db));
		ok = 0;
		goto out;
	}
	sqlite3_busy_timeout(db, 5000);
	sqlite3_stmt *st = NULL;
	int version = -1;
	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (version < 0) {
		snprintf(why, cap, "cannot read memory.db: %s", sqlite3_errmsg(db));
		ok = 0;
		goto out;
	}
	if (version == 0) {
		bytes_adds(&out, "EMPTY");
		goto out;
	}
	char line[64];
	snprintf(line, sizeof(line), "user_version %d\n", version);
	bytes_adds(&out, line);
	if (sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name", -1,
			       &tables, NULL) != SQLITE_OK) {
		snprintf(why, cap, "cannot list tables: %s", sqlite3_errmsg(db));
		ok = 0;
		goto out;
	}
	while (ok && sqlite3_step(tables) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(tables, 0);
		if (derived_table(t))
			continue;
		struct bytes q = {0};
		bytes_adds(&q, "SELECT ''");
		sqlite3_stmt *cols = NULL;
		sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_info(?1)", -1, &cols, NULL);
		sqlite3_bind_text(cols, 1, t, -1, SQLITE_STATIC);
		while (sqlite3_step(cols) == SQLITE_ROW) {
			const char *c = (const char *)sqlite3_column_text(cols, 0);
			if (derived_column(t, c))
				continue;
			bytes_adds(&q, " || '|' || quote(\"");
			bytes_adds(&q, c);
			bytes_adds(&q, "\")");
		}
		sqlite3_finalize(cols);
		bytes_adds(&q, " FROM \"");
		bytes_adds(&q, t);
		bytes_adds(&q, "\"");
		if (strcmp(t, "history") == 0)
			bytes_adds(&q, " WHERE operation NOT IN ('zcor_memory_read', 'zcor_memory_children')");
		/* the one-time look for seed files to import (Z-MIGRATE) commits
		 * on its own before the first operation: not a write of a stream */
		/* and the full-text index's bookkeeping is derived: which new
		 * nodes' rows are written yet (they are written in batches,
		 * and by whoever reads the index first), and the generations
		 * recall's cache follows */
		if (strcmp(t, "meta") == 0)
			bytes_adds(&q, " WHERE key NOT IN ('migrated', 'fts_upto', 'terms_upto', 'recall_gen')");
		bytes_adds(&q, " ORDER BY 1");
		bytes_adds(&out, "[");
		bytes_adds(&out, t);
		bytes_adds(&out, "]\n");
		sqlite3_stmt *rows = NULL;
		if (sqlite3_prepare_v2(db, (const char *)q.p, -1, &rows, NULL) != SQLITE_OK) {
			snprintf(why, cap, "cannot read table %s: %s", t, sqlite3_errmsg(db));
			ok = 0;
		}
		int rc;
		while (ok && (rc = sqlite3_step(rows)) == SQLITE_ROW) {
			bytes_adds(&out, (const char *)sqlite3_column_text(rows, 0));
			bytes_adds(&out, "\n");
		}
		if (ok && rc != SQLITE_DONE) {
			snprintf(why, cap, "cannot read table %s: %s", t, sqlite3_errmsg(db));
			ok = 0;
		}
		sqlite3_finalize(rows);
		free(q.p);
	}
out:
	sqlite3_finalize(tables);
	sqlite3_close(db);
	free(path);
	if (!ok) {
		free(out.p);
		return NULL;
	}
	return (char *)out.p;
}

/* ---- the reference: the state after each acknowledgment ---------------------------- */

struct refs {
	int n; /* states: [0] before the open, [1] after it, [1 + i] after step i */
	char **dump;
	struct fmap *files;
	char **reads; /* ",seq,seq," of the history records of reads */
};

#define READS_SQL                                                                          \
	"SELECT ',' || coalesce(group_concat(seq, ','), '') || ',' FROM (SELECT seq FROM history " \
	"WHERE operation IN ('zcor_memory_read', 'zcor_memory_children') ORDER BY seq)"

static void ref_take(struct refs *r, const char *dir)
{
	char why[512] = "";
	r->dump = xrealloc(r->dump, (size_t)(r->n + 1) * sizeof(*r->dump));
	r->files = xrealloc(r->files, (size_t)(r->n + 1) * sizeof(*r->files));
	r->reads = xrealloc(r->reads, (size_t)(r->n + 1) * sizeof(*r->reads));
	r->dump[r->n] = dump_db(dir, why, sizeof(why));
	r->reads[r->n] = strcmp(r->dump[r->n] ? r->dump[r->n] : "EMPTY", "EMPTY") == 0 ? xstrdup(",")
										       : t_sql_str(dir, READS_SQL);
	if (!r->dump[r->n]) {
		fprintf(stderr, "reference state %d: %s\n", r->n, why);
		t_failures++;
		r->dump[r->n] = xstrdup("?");
	}
	memset(&r->files[r->n], 0, sizeof(r->files[r->n]));
	fmap_scan(&r->files[r->n], dir);
	r->n++;
}

/* A finding of zcor_doctor that needs a person, as text (caller frees), or NULL. */
static char *doctor_trouble(zcor *z)
{
	char *out = NULL;
	int rc = zcor_doctor(z, 0, &out);
	json_t *r = out ? json_loads(out, 0, NULL) : NULL;
	char *trouble = NULL;
	if (rc || !r || json_is_true(json_object_get(r, "needsAttention")))
		trouble = xstrdup(out ? out : "(no report)");
	json_decref(r);
	zcor_free(out);
	return trouble;
}

/* Runs a stream in this process on dir (a copy of its start), recording
 * the state before the open, after it and after each step in ref (when
 * not NULL: the base stream only builds a directory). */
static void reference(const char *dir, int script, struct refs *ref)
{
	if (ref)
		ref_take(ref, dir);
	zcor *z = t_open_dir(dir);
	if (ref)
		ref_take(ref, dir);
	struct pl_run run;
	pl_run_init(&run, z, script);
	char msg[1000];
	for (int i = 0; i < pl_script_steps(script); i++) {
		int rc = pl_run_step(&run, z, i, msg, sizeof(msg));
		if (rc) {
			fprintf(stderr, "stream %d step %d failed: %s\n", script, i, msg);
			t_failures++;
		}
		/* the history records of reads are queued on the handle and
		 * written a few ms later (op.c, group commit): the reference is
		 * what the handle writes once they are, so that every read
		 * record a cut directory holds is one the stream made */
		zcor_flush(z);
		if (ref)
			ref_take(ref, dir);
	}
	char *trouble = doctor_trouble(z);
	if (trouble) {
		fprintf(stderr, "stream %d: the doctor has findings without any power cut: %s\n", script,
			trouble);
		t_failures++;
		free(trouble);
	}
	zcor_close(z);
}

/* ---- running the writer under the shim ---------------------------------------------- */

struct run {
	int acks;    /* 'A' records */
	int closed;  /* the writer closed its handle */
	int crashed; /* SIGKILLed by the shim */
	char err[1200];
};

static const char *need_env(const char *name)
{
	const char *v = getenv(name);
	if (!v || !*v) {
		fprintf(stderr, "%s is not set (ctest sets it; see tests/CMakeLists.txt)\n", name);
		exit(2);
	}
	return v;
}

/* Runs powerloss_writer MODE DIR under the shim, journal at `journal`,
 * the power cut before operation crash_at (0: never). */
static int cut_at_mark; /* the point's "op" is the acknowledgment after which to cut */

static void run_writer(const char *mode, const char *dir, const char *journal, uint64_t crash_at,
		       struct run *out)
{
	memset(out, 0, sizeof(*out));
	const char *writer = need_env("ZCOR_POWERLOSS_WRITER"), *shim = need_env("ZCOR_POWERLOSS_SHIM");
	size_t n = 0;
	while (environ[n])
		n++;
	char **env = xrealloc(NULL, (n + 5) * sizeof(*env));
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0 && strncmp(environ[i], "ZCOR_POWERLOSS_", 15) != 0)
			env[k++] = environ[i];
	char *vars[4];
	if (asprintf(&vars[0], "LD_PRELOAD=%s", shim) < 0 ||
	    asprintf(&vars[1], "%s=%s", PL_ENV_DIR, dir) < 0 ||
	    asprintf(&vars[2], "%s=%s", PL_ENV_JOURNAL, journal) < 0 ||
	    asprintf(&vars[3], "%s=%s%llu", PL_ENV_CRASH_AT, cut_at_mark ? "m" : "", (unsigned long long)crash_at) < 0)
		exit(2);
	for (int i = 0; i < 4; i++)
		env[k++] = vars[i];
	env[k] = NULL;
	int p[2];
	if (pipe2(p, O_CLOEXEC) != 0) {
		perror("pipe2");
		exit(2);
	}
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], PL_ACK_FD);
	char *argv[] = {(char *)writer, (char *)mode, (char *)dir, NULL};
	pid_t pid;
	int rc = posix_spawn(&pid, writer, &fa, NULL, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	for (int i = 0; i < 4; i++)
		free(vars[i]);
	free(env);
	if (rc != 0) {
		fprintf(stderr, "cannot start %s: %s\n", writer, strerror(rc));
		exit(2);
	}
	struct pl_ack a;
	size_t got = 0;
	for (;;) {
		ssize_t r = read(p[0], (char *)&a + got, sizeof(a) - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
		if (got < sizeof(a))
			continue;
		got = 0;
		if (a.kind == 'A')
			out->acks = a.n;
		else if (a.kind == 'C')
			out->closed = 1;
		else
			snprintf(out->err, sizeof(out->err), "step %d failed (%s): %s", a.n, zcor_code_name(a.rc),
				 a.msg);
	}
	close(p[0]);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	out->crashed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
	if (!out->crashed && !out->err[0] && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
		snprintf(out->err, sizeof(out->err), "the writer ended with status %d", status);
}

/* ---- the journal ------------------------------------------------------------------ */

struct jrec {
	struct pl_rec h;
	char *name, *name2;
	const unsigned char *data;
};

struct journal {
	struct bytes raw;
	struct jrec *r;
	size_t n;
	uint64_t maxfid, ops;
	size_t fsyncs, writes, names;
	uint64_t marks[64]; /* operations done when acknowledgment i + 1 was sent */
	int nmarks;
	int cut;
	char unmodelled[600];
};

static void journal_free(struct journal *j)
{
	for (size_t i = 0; i < j->n; i++) {
		free(j->r[i].name);
		free(j->r[i].name2);
	}
	free(j->r);
	free(j->raw.p);
	memset(j, 0, sizeof(*j));
}

static char *dup_bytes(const unsigned char *p, size_t n)
{
	char *s = xrealloc(NULL, n + 1);
	memcpy(s, p, n);
	s[n] = '\0';
	return s;
}

static int journal_load(const char *path, struct journal *j)
{
	memset(j, 0, sizeof(*j));
	if (read_all(path, &j->raw) != 0)
		return -1;
	size_t cap = 0, at = 0;
	while (at + sizeof(struct pl_rec) <= j->raw.len) {
		struct jrec x = {0};
		memcpy(&x.h, j->raw.p + at, sizeof(x.h));
		at += sizeof(x.h);
		if (at + x.h.namelen + x.h.len > j->raw.len)
			return -1;
		x.name = dup_bytes(j->raw.p + at, x.h.namelen);
		at += x.h.namelen;
		if (x.h.kind == PL_RENAME)
			x.name2 = dup_bytes(j->raw.p + at, (size_t)x.h.len);
		if (x.h.kind == PL_UNMODELLED && !j->unmodelled[0])
			snprintf(j->unmodelled, sizeof(j->unmodelled), "%.*s", (int)x.h.len, j->raw.p + at);
		x.data = j->raw.p + at;
		at += (size_t)x.h.len;
		if (j->n == cap) {
			cap = cap ? cap * 2 : 1024;
			j->r = xrealloc(j->r, cap * sizeof(*j->r));
		}
		j->r[j->n++] = x;
		if (x.h.fid > j->maxfid)
			j->maxfid = x.h.fid;
		if (x.h.op > j->ops)
			j->ops = x.h.op;
		j->fsyncs += x.h.kind == PL_FSYNC;
		j->writes += x.h.kind == PL_WRITE;
		j->names += x.h.kind >= PL_CREATE_FILE && x.h.kind <= PL_RENAME;
		j->cut |= x.h.kind == PL_CRASH;
		if (x.h.kind == PL_MARK && j->nmarks < 64)
			j->marks[j->nmarks++] = x.h.op;
	}
	return at == j->raw.len ? 0 : -1;
}

/* ---- the reboot -------------------------------------------------------------------- */

enum keep { KEEP_NONE, KEEP_ALL, KEEP_SOME };
static const char *const keep_names[] = {"nothing unsynced", "everything (as kill -9)", "a random part"};

struct inode {
	int kind; /* 0 unknown, 'f' file, 'd' directory */
	int vol;
	struct bytes data;
	char *made; /* where the reboot wrote it (a second name is a link) */
};

struct entry {
	uint64_t dir, fid;
	char *name;
	int live;
};

struct image {
	struct inode *ino;
	uint64_t nino;
	struct entry *e;
	size_t ne, cap;
	uint64_t root;
	char *relpath_buf;
};

static struct entry *entry_find(struct image *im, uint64_t dir, const char *name)
{
	for (size_t i = im->ne; i-- > 0;)
		if (im->e[i].live && im->e[i].dir == dir && strcmp(im->e[i].name, name) == 0)
			return &im->e[i];
	return NULL;
}

static void entry_set(struct image *im, uint64_t dir, const char *name, uint64_t fid)
{
	struct entry *e = entry_find(im, dir, name);
	if (e) {
		e->fid = fid;
		return;
	}
	if (im->ne == im->cap) {
		im->cap = im->cap ? im->cap * 2 : 256;
		im->e = xrealloc(im->e, im->cap * sizeof(*im->e));
	}
	im->e[im->ne++] = (struct entry){dir, fid, xstrdup(name), 1};
}

static void entry_del(struct image *im, uint64_t dir, const char *name, uint64_t only_fid)
{
	struct entry *e = entry_find(im, dir, name);
	if (e && (!only_fid || e->fid == only_fid))
		e->live = 0;
}

static void image_free(struct image *im)
{
	for (uint64_t i = 0; i < im->nino; i++) {
		free(im->ino[i].data.p);
		free(im->ino[i].made);
	}
	for (size_t i = 0; i < im->ne; i++)
		free(im->e[i].name);
	free(im->ino);
	free(im->e);
	memset(im, 0, sizeof(*im));
}

/* The path of an entry relative to the root, from its chain of parents. */
static int relpath_of(struct image *im, uint64_t dir, const char *name, char *out, size_t cap)
{
	char tmp[4096] = "";
	snprintf(tmp, sizeof(tmp), "%s", name);
	for (int depth = 0; dir != im->root; depth++) {
		struct entry *up = NULL;
		for (size_t i = 0; i < im->ne && !up; i++)
			if (im->e[i].live && im->e[i].fid == dir)
				up = &im->e[i];
		if (!up || depth > 64)
			return -1;
		char t2[4096];
		snprintf(t2, sizeof(t2), "%s/%s", up->name, tmp);
		snprintf(tmp, sizeof(tmp), "%s", t2);
		dir = up->dir;
	}
	snprintf(out, cap, "%s", tmp);
	return 0;
}

static void write_at(struct bytes *b, uint64_t off, const unsigned char *d, size_t n)
{
	if (off + n > b->len) {
		bytes_reserve(b, (size_t)(off + n) + 1);
		memset(b->p + b->len, 0, (size_t)(off + n) - b->len);
		b->len = (size_t)(off + n);
	}
	memcpy(b->p + off, d, n);
}

/* An unsynced write survives whole, not at all, or torn: each 512-byte
 * piece (aligned in the file) kept, dropped or garbage. Only the bytes
 * written are touched: SQLite assumes powersafe overwrite (a cut never
 * damages bytes of a sector that were not being written). */
static void apply_write(struct bytes *b, const struct jrec *x, enum keep keep, uint64_t *rng, int durable)
{
	if (!durable && keep == KEEP_NONE)
		return;
	unsigned r = durable || keep == KEEP_ALL ? 0 : pct(rng);
	if (r < 40) {
		write_at(b, x->h.off, x->data, (size_t)x->h.len);
		return;
	}
	if (r < 70)
		return;
	uint64_t end = x->h.off + x->h.len;
	for (uint64_t s = x->h.off; s < end;) {
		uint64_t e = (s / 512 + 1) * 512;
		if (e > end)
			e = end;
		unsigned q = pct(rng);
		if (q < 45) {
			write_at(b, s, x->data + (s - x->h.off), (size_t)(e - s));
		} else if (q >= 90) {
			unsigned char junk[512];
			for (size_t i = 0; i < e - s; i++)
				junk[i] = (unsigned char)rnd(rng);
			write_at(b, s, junk, (size_t)(e - s));
		}
		s = e;
	}
}

static int keep_name(enum keep keep, uint64_t *rng, int durable)
{
	return durable || keep == KEEP_ALL || (keep == KEEP_SOME && pct(rng) < 50);
}

static int materialize(struct image *im, uint64_t dir, const char *path, int depth, enum keep keep,
		       uint64_t *rng)
{
	if (depth > 32)
		return -1;
	for (size_t i = 0; i < im->ne; i++) {
		struct entry *e = &im->e[i];
		if (!e->live || e->dir != dir || e->fid >= im->nino)
			continue;
		struct inode *in = &im->ino[e->fid];
		char *p = path2(path, e->name);
		int rc = 0;
		if (in->kind == 'd') {
			rc = mkdir(p, 0755) != 0 || materialize(im, e->fid, p, depth + 1, keep, rng);
		} else if (in->vol) {
			/* SQLite's WAL index: gone, or garbage it must ignore */
			if (keep != KEEP_NONE && pct(rng) < 50) {
				unsigned char junk[4096];
				for (size_t k = 0; k < sizeof(junk); k++)
					junk[k] = (unsigned char)rnd(rng);
				rc = write_all(p, junk, sizeof(junk));
			}
		} else if (in->made) {
			rc = link(in->made, p);
		} else {
			rc = write_all(p, in->data.p, in->data.len);
			in->made = xstrdup(p);
		}
		free(p);
		if (rc)
			return -1;
	}
	return 0;
}

/*
 * Rebuilds dir as the disk would hold it after the power cut the journal
 * ends with: base (the directory before the run, all durable), then every
 * recorded operation in order — durable ones always, the others as
 * `keep` says. Returns 0, or -1 with *why.
 */
static int reboot(const struct journal *j, const char *base, const char *dir, enum keep keep,
		  uint64_t seed, char *why, size_t cap)
{
	uint64_t rng = seed;
	struct image im = {0};
	im.nino = j->maxfid + 1;
	im.ino = xrealloc(NULL, im.nino * sizeof(*im.ino));
	memset(im.ino, 0, im.nino * sizeof(*im.ino));
	/* an operation is durable when its file (data) or directory (names)
	 * is fsynced later, or everything is */
	size_t *synced = xrealloc(NULL, im.nino * sizeof(*synced));
	memset(synced, 0, im.nino * sizeof(*synced));
	size_t all = 0;
	for (size_t i = 0; i < j->n; i++) {
		if (j->r[i].h.kind == PL_FSYNC && j->r[i].h.fid < im.nino)
			synced[j->r[i].h.fid] = i + 1;
		if (j->r[i].h.kind == PL_SYNCALL)
			all = i + 1;
	}
#define DURABLE(i, f) ((f) < im.nino && ((i) + 1 < synced[f] || (i) + 1 < all))
	int rc = 0;
	struct bytes b = {0};
	for (size_t i = 0; i < j->n && !rc; i++) {
		const struct jrec *x = &j->r[i];
		uint64_t fid = x->h.fid;
		if (fid >= im.nino && x->h.kind != PL_UNLINK && x->h.kind != PL_CRASH &&
		    x->h.kind != PL_SYNCALL && x->h.kind != PL_UNMODELLED) {
			snprintf(why, cap, "journal record %zu names file %llu", i, (unsigned long long)fid);
			rc = -1;
			break;
		}
		switch (x->h.kind) {
		case PL_INIT_DIR:
		case PL_INIT_FILE: {
			struct inode *in = &im.ino[fid];
			in->kind = x->h.kind == PL_INIT_DIR ? 'd' : 'f';
			in->vol = strlen(x->name) >= 4 && strcmp(x->name + strlen(x->name) - 4, "-shm") == 0;
			if (x->h.dir == 0) {
				im.root = fid;
				break;
			}
			entry_set(&im, x->h.dir, x->name, fid);
			if (in->kind == 'f') {
				char rel[4096];
				if (relpath_of(&im, x->h.dir, x->name, rel, sizeof(rel)) != 0) {
					snprintf(why, cap, "no path for starting file '%s'", x->name);
					rc = -1;
					break;
				}
				char *p = path2(base, rel);
				if (read_all(p, &b) != 0) {
					snprintf(why, cap, "cannot read %s", p);
					rc = -1;
				}
				free(p);
				bytes_add(&in->data, b.p, b.len);
			}
			break;
		}
		case PL_CREATE_FILE:
		case PL_CREATE_DIR:
			im.ino[fid].kind = x->h.kind == PL_CREATE_DIR ? 'd' : 'f';
			im.ino[fid].vol = strlen(x->name) >= 4 && strcmp(x->name + strlen(x->name) - 4, "-shm") == 0;
			im.ino[fid].data.len = 0;
			__attribute__((fallthrough)); /* and its name, as a link's */
		case PL_LINK:
			if (keep_name(keep, &rng, DURABLE(i, x->h.dir)))
				entry_set(&im, x->h.dir, x->name, fid);
			break;
		case PL_UNLINK:
			if (keep_name(keep, &rng, DURABLE(i, x->h.dir)))
				entry_del(&im, x->h.dir, x->name, 0);
			break;
		case PL_RENAME:
			if (x->h.dir == x->h.dir2) {
				if (keep_name(keep, &rng, DURABLE(i, x->h.dir))) {
					entry_del(&im, x->h.dir, x->name, fid);
					entry_set(&im, x->h.dir2, x->name2, fid);
				}
			} else {
				if (keep_name(keep, &rng, DURABLE(i, x->h.dir)))
					entry_del(&im, x->h.dir, x->name, fid);
				if (keep_name(keep, &rng, DURABLE(i, x->h.dir2)))
					entry_set(&im, x->h.dir2, x->name2, fid);
			}
			break;
		case PL_WRITE:
			apply_write(&im.ino[fid].data, x, keep, &rng, DURABLE(i, fid));
			break;
		case PL_TRUNC:
			if (keep_name(keep, &rng, DURABLE(i, fid))) {
				struct bytes *d = &im.ino[fid].data;
				if (x->h.off > d->len) {
					bytes_reserve(d, (size_t)x->h.off + 1);
					memset(d->p + d->len, 0, (size_t)x->h.off - d->len);
				}
				d->len = (size_t)x->h.off;
			}
			break;
		default: /* PL_FSYNC, PL_SYNCALL: counted above; PL_CRASH: the end */
			break;
		}
	}
#undef DURABLE
	free(b.p);
	free(synced);
	if (!rc && !im.root) {
		snprintf(why, cap, "the journal has no root directory");
		rc = -1;
	}
	if (!rc) {
		fresh_dir(dir);
		if (materialize(&im, im.root, dir, 0, keep, &rng) != 0) {
			snprintf(why, cap, "cannot rebuild %s: %s", dir, strerror(errno));
			rc = -1;
		}
	}
	image_free(&im);
	return rc;
}

/* ---- the checks -------------------------------------------------------------------- */

/* Files written before their step's commit: when the store shows the step,
 * they are there. A cached image or a sticker whose removal (after the
 * commit) was not synced may still lie about, unreferenced. */
static int before_commit(const char *p)
{
	return strcmp(p, "synonyms.json") == 0 || strncmp(p, "backups/", 8) == 0 ||
	       strncmp(p, "stickers/", 9) == 0 || strncmp(p, "media/", 6) == 0;
}

static int may_linger(const char *p) { return strncmp(p, "stickers/", 9) == 0 || strncmp(p, "media/", 6) == 0; }

static int seen_before(const struct refs *ref, int upto, const char *p, uint64_t h)
{
	for (int i = 0; i <= upto; i++)
		if (fmap_get(&ref->files[i], p) == h)
			return 1;
	return 0;
}

/* What a file's content is, for a message. */
static const char *hash_words(const struct refs *ref, int hi, const char *p, uint64_t h, char *buf,
			      size_t cap)
{
	if (!h)
		return "absent";
	for (int i = hi; i >= 0; i--)
		if (fmap_get(&ref->files[i], p) == h) {
			snprintf(buf, cap, "as in state %d", i);
			return buf;
		}
	return "torn (content no state had)";
}

static int has_seq(const char *list, long long seq)
{
	char probe[32];
	snprintf(probe, sizeof(probe), ",%lld,", seq);
	return strstr(list, probe) != NULL;
}

/* The first line where a and b differ, for a message. */
static void first_difference(const char *a, const char *b, char *out, size_t cap)
{
	const char *la = a, *lb = b;
	while (*la && *lb) {
		const char *ea = strchr(la, '\n'), *eb = strchr(lb, '\n');
		size_t na = ea ? (size_t)(ea - la) : strlen(la), nb = eb ? (size_t)(eb - lb) : strlen(lb);
		if (na != nb || memcmp(la, lb, na) != 0)
			break;
		la += na + (ea ? 1 : 0);
		lb += nb + (eb ? 1 : 0);
	}
	snprintf(out, cap, "has «%.160s», expected «%.160s»", la, lb);
}

/*
 * The rebooted dir against the reference: memory.db must be state klo or
 * khi (*k says which), the plain files those of states lo..hi as the
 * rules above allow. 0, or -1 with *why.
 */
static int check_dir(const char *dir, const struct refs *ref, int lo, int hi, int klo, int khi, int *k,
		     char *why, size_t cap)
{
	struct fmap got = {0};
	fmap_scan(&got, dir);
	int rc = 0;
	char *ic = NULL, *dump = NULL;
	char *dbp = path2(dir, "memory.db");
	if (access(dbp, F_OK) == 0) {
		sqlite3 *db = NULL;
		if (sqlite3_open_v2(dbp, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK) {
			sqlite3_busy_timeout(db, 5000);
			sqlite3_stmt *st = NULL;
			if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL) == SQLITE_OK &&
			    sqlite3_step(st) == SQLITE_ROW)
				ic = xstrdup((const char *)sqlite3_column_text(st, 0));
			sqlite3_finalize(st);
			if (ic && strcmp(ic, "ok") == 0 &&
			    sqlite3_prepare_v2(db, "PRAGMA foreign_key_check", -1, &st, NULL) == SQLITE_OK &&
			    sqlite3_step(st) == SQLITE_ROW) {
				free(ic);
				ic = xstrdup("a foreign key is broken");
			}
			sqlite3_finalize(st);
		}
		if (!ic)
			ic = xstrdup(sqlite3_errmsg(db));
		sqlite3_close(db);
		if (strcmp(ic, "ok") != 0) {
			snprintf(why, cap, "integrity_check: %s", ic);
			rc = -1;
			goto out;
		}
	}
	if (!(dump = dump_db(dir, why, cap))) {
		rc = -1;
		goto out;
	}
	*k = -1;
	for (int s = khi; s >= klo && *k < 0; s--)
		if (strcmp(dump, ref->dump[s]) == 0)
			*k = s;
	if (*k < 0) {
		char d[400];
		first_difference(dump, ref->dump[klo], d, sizeof(d));
		if (klo == khi)
			snprintf(why, cap, "memory.db is not state %d (a write is lost or partly there): it %s", klo, d);
		else
			snprintf(why, cap, "memory.db is neither state %d (what was acknowledged) nor %d (and the "
					   "step in flight): a write is lost or partly there; against %d it %s",
				 klo, khi, klo, d);
		rc = -1;
		goto out;
	}
	/* every path any of the states or the directory has */
	struct fmap all = {0};
	for (int s = lo; s <= hi; s++)
		for (size_t i = 0; i < ref->files[s].n; i++)
			if (!fmap_get(&all, ref->files[s].path[i]))
				fmap_put(&all, ref->files[s].path[i], 1);
	for (size_t i = 0; i < got.n; i++)
		if (!fmap_get(&all, got.path[i]))
			fmap_put(&all, got.path[i], 1);
	why[0] = '\0';
	for (size_t i = 0; i < all.n; i++) {
		const char *p = all.path[i];
		uint64_t a = fmap_get(&got, p), o = fmap_get(&ref->files[lo], p), n = fmap_get(&ref->files[hi], p);
		uint64_t want = fmap_get(&ref->files[*k], p);
		int ok;
		if (before_commit(p)) {
			if (want)
				ok = a == want || (*k == lo && n && a == n) ||
				     /* made from the built-in groups at first use, which
				      * may come after the first commit */
				     (!a && !o && *k == hi && strcmp(p, "synonyms.json") == 0);
			else
				ok = !a || a == n || (may_linger(p) && seen_before(ref, hi, p, a));
		} else {
			ok = a == o || a == n;
		}
		if (!ok) {
			char b1[64], b2[64], b3[64];
			size_t used = strlen(why);
			if (used + 300 >= cap)
				;
			else if (before_commit(p))
				snprintf(why + used, cap - used, "%s%s is %s, but the store is state %d, which %s",
					 used ? "; " : "", p, hash_words(ref, hi, p, a, b1, sizeof(b1)), *k,
					 want ? "needs it as it was then" : "has no such file");
			else
				snprintf(why + used, cap - used, "%s%s is %s; state %d has it %s, state %d %s",
					 used ? "; " : "", p, hash_words(ref, hi, p, a, b1, sizeof(b1)), lo,
					 hash_words(ref, hi, p, o, b2, sizeof(b2)), hi,
					 hash_words(ref, hi, p, n, b3, sizeof(b3)));
			rc = -1;
		}
	}
	fmap_free(&all);
	/* reads commit without an fsync: only those after the last change
	 * may be missing, and none may appear from nowhere */
	if (!rc && strcmp(dump, "EMPTY") != 0) {
		char *reads = t_sql_str(dir, READS_SQL);
		long long last = t_sql_int(dir, "SELECT coalesce(max(seq), 0) FROM history WHERE operation "
						"NOT IN ('zcor_memory_read', 'zcor_memory_children')");
		for (const char *s = ref->reads[*k]; *s == ',' && !rc;) {
			char *e;
			long long seq = strtoll(s + 1, &e, 10);
			if (e == s + 1)
				break;
			if (seq < last && !has_seq(reads, seq)) {
				snprintf(why, cap, "the history record %lld of a read is lost, yet a later change is there",
					 seq);
				rc = -1;
			}
			s = e;
		}
		for (const char *s = reads; *s == ',' && !rc;) {
			char *e;
			long long seq = strtoll(s + 1, &e, 10);
			if (e == s + 1)
				break;
			if (!has_seq(ref->reads[khi], seq)) {
				snprintf(why, cap, "history record %lld of a read was never written", seq);
				rc = -1;
			}
			s = e;
		}
		free(reads);
	}
out:
	free(ic);
	free(dump);
	free(dbp);
	fmap_free(&got);
	return rc;
}

/* zcor itself on the rebooted directory: opens it, its doctor is content,
 * and (with write) it takes a new write. 0, or -1 with *why. */
static int check_zcor(const char *dir, int write, char *why, size_t cap)
{
	zcor *z = NULL;
	if (zcor_open(&z, dir) != ZCOR_OK) {
		snprintf(why, cap, "zcor_open: %s", zcor_errmsg(z));
		zcor_close(z);
		return -1;
	}
	int rc = 0;
	char *trouble = doctor_trouble(z);
	if (trouble) {
		snprintf(why, cap, "zcor_doctor: %.900s", trouble);
		free(trouble);
		rc = -1;
	}
	struct zcor_ctx ctx = {ZCOR_ACTOR_MODEL, NULL};
	char *out = NULL;
	if (!rc && write && zcor_tool_call(z, &ctx, "zcor_memory_write", "{\"title\":\"重启以后\",\"content\":\"还能写\"}",
				  &out) != ZCOR_OK) {
		snprintf(why, cap, "a write after the reboot failed: %.900s", out ? out : "?");
		rc = -1;
	}
	zcor_free(out);
	zcor_close(z);
	return rc;
}

/* ---- a stream under power cuts --------------------------------------------------------- */

static const char *const stream_names[] = {"base", "main", "fresh", "reopen"};

/* Where the time of the cuts goes (ms): copies, writer runs, reboots,
 * checks of the directory, zcor on it. */
static long long phase_ms[5];
static const char *const phase_names[] = {"copy", "writer", "reboot", "check", "zcor"};

static long long phase(int i, long long since)
{
	long long t = now_ms();
	phase_ms[i] += t - since;
	return t;
}

/* One stream's directories and reference, made once per run of the test. */
struct stream {
	int script;
	char *work, *base, *run, *journal0, *journal, *again, *journal2;
	struct refs ref;
	uint64_t ops; /* T: the operations of a run without a cut */
	size_t fsyncs;
	uint64_t marks[64]; /* operations done at each acknowledgment of that run */
	int nmarks;
	int ready;
};

static struct stream streams[4];

static uint64_t env_u64(const char *name, uint64_t dflt)
{
	const char *v = getenv(name);
	return v && *v ? strtoull(v, NULL, 10) : dflt;
}

/* The randomness of one point depends on the seed, the stream and the
 * operation cut before, nothing else: ZCOR_POWERLOSS_ONLY repeats it. */
static uint64_t point_seed(int script, uint64_t op)
{
	uint64_t s = env_u64("ZCOR_POWERLOSS_SEED", 20261130) ^ ((uint64_t)script << 56) ^ (op * 0x9e3779b97f4a7c15ull);
	rnd(&s);
	return s;
}

static enum keep keep_for(uint64_t *rng)
{
	unsigned r = (unsigned)(rnd(rng) % 8);
	return r < 2 ? KEEP_NONE : r == 2 ? KEEP_ALL : KEEP_SOME;
}

static int cut_twice; /* the point being run cuts the power twice */

/* Keeps a failed directory for a look and says how to repeat the point
 * (op 0: the cut after the whole stream). */
static void report(struct stream *st, uint64_t op, enum keep keep, int acks, const char *what, const char *why)
{
	char *keepdir = NULL, when[160];
	if (asprintf(&keepdir, "%s/failed-%llu-%d", st->work, (unsigned long long)op, (int)keep) < 0)
		exit(2);
	copy_tree(st->run, keepdir);
	if (op && cut_at_mark)
		snprintf(when, sizeof(when), "just after acknowledgment %llu", (unsigned long long)op);
	else if (op)
		snprintf(when, sizeof(when), "before operation %llu of %llu", (unsigned long long)op,
			 (unsigned long long)st->ops);
	else
		snprintf(when, sizeof(when), "after the whole stream");
	fprintf(stderr, "power cut in stream '%s' %s (%s survived, %d acknowledged): %s: %s\n"
			"  the rebooted directory is kept in %s",
		stream_names[st->script], when, keep_names[keep], acks, what, why, keepdir);
	if (op && !cut_at_mark)
		fprintf(stderr, "; repeat with ZCOR_POWERLOSS_SEED=%llu ZCOR_POWERLOSS_ONLY=%s:%llu%s",
			(unsigned long long)env_u64("ZCOR_POWERLOSS_SEED", 20261130), stream_names[st->script],
			(unsigned long long)op, cut_twice ? " ZCOR_POWERLOSS_TWICE=1" : "");
	fprintf(stderr, "\n");
	free(keepdir);
	t_failures++;
}

static struct stream *stream_get(int script)
{
	struct stream *st = &streams[script];
	if (st->ready)
		return st->ready > 0 ? st : NULL;
	st->ready = -1;
	st->script = script;
	st->work = xstrdup(t_tmpdir());
	st->base = path2(st->work, "base");
	st->run = path2(st->work, "run");
	st->journal0 = path2(st->work, "journal-whole");
	st->journal = path2(st->work, "journal");
	st->again = path2(st->work, "again");
	st->journal2 = path2(st->work, "journal2");
	fresh_dir(st->base);
	if (script == PL_SCRIPT_MAIN)
		reference(st->base, PL_SCRIPT_BASE, NULL); /* the working memory it starts from */
	char *refdir = path2(st->work, "reference");
	fresh_dir(refdir);
	copy_tree(st->base, refdir);
	long long t0 = now_ms();
	reference(refdir, script, &st->ref);
	rm_rf(refdir);
	free(refdir);
	int last = st->ref.n - 1;
	/* one run without a cut: how many operations, and is the shim complete */
	fresh_dir(st->run);
	copy_tree(st->base, st->run);
	struct run r;
	run_writer(stream_names[script], st->run, st->journal0, 0, &r);
	struct journal j;
	if (r.err[0] || r.crashed || !r.closed || r.acks != last) {
		fprintf(stderr, "stream '%s' under the shim without a cut: %d of %d acknowledged%s %s\n",
			stream_names[script], r.acks, last, r.crashed ? ", killed" : "", r.err);
		t_failures++;
		return NULL;
	}
	if (journal_load(st->journal0, &j) != 0 || j.unmodelled[0]) {
		fprintf(stderr, "stream '%s': journal unreadable or incomplete: %s\n", stream_names[script],
			j.unmodelled[0] ? j.unmodelled : "cannot parse");
		t_failures++;
		journal_free(&j);
		return NULL;
	}
	st->ops = j.ops;
	st->fsyncs = j.fsyncs;
	st->nmarks = j.nmarks;
	memcpy(st->marks, j.marks, sizeof(st->marks));
	printf("stream '%s': %d steps, %llu operations under the directory (%zu writes, %zu fsyncs, %zu names); "
	       "reference in %lld ms\n",
	       stream_names[script], last - 1, (unsigned long long)j.ops, j.writes, j.fsyncs, j.names,
	       now_ms() - t0);
	journal_free(&j);
	st->ready = 1;
	return st;
}

/* One point: a run cut before operation op, the reboot, the checks;
 * with twice, a second cut while the rebooted directory is opened. With
 * strict (a cut just after an acknowledgment, nothing unsynced kept) the
 * store must be exactly the acknowledged state. */
static int one_point(struct stream *st, uint64_t op, int strict, int twice, int *in_flight, int *second)
{
	uint64_t rng = point_seed(st->script, op);
	enum keep keep = keep_for(&rng);
	if (strict)
		keep = KEEP_NONE;
	cut_twice = twice;
	cut_at_mark = strict;
	char why[1600] = "";
	long long t = now_ms();
	fresh_dir(st->run);
	copy_tree(st->base, st->run);
	t = phase(0, t);
	struct run r;
	run_writer(stream_names[st->script], st->run, st->journal, op, &r);
	t = phase(1, t);
	if (r.err[0]) {
		report(st, op, keep, r.acks, "the writer failed", r.err);
		return -1;
	}
	struct journal j;
	if (journal_load(st->journal, &j) != 0 || j.unmodelled[0]) {
		report(st, op, keep, r.acks, "journal", j.unmodelled[0] ? j.unmodelled : "cannot parse");
		journal_free(&j);
		return -1;
	}
	int rc = reboot(&j, st->base, st->run, keep, rnd(&rng), why, sizeof(why));
	journal_free(&j);
	t = phase(2, t);
	if (rc) {
		report(st, op, keep, r.acks, "reboot", why);
		return -1;
	}
	int last = st->ref.n - 1, lo = r.acks, hi = r.acks < last && !strict ? r.acks + 1 : r.acks, k = -1;
	if (twice) {
		fresh_dir(st->again);
		copy_tree(st->run, st->again);
	}
	t = phase(0, t);
	rc = check_dir(st->run, &st->ref, lo, hi, lo, hi, &k, why, sizeof(why));
	t = phase(3, t);
	if (rc) {
		report(st, op, keep, r.acks, "after the reboot", why);
		return -1;
	}
	*in_flight += k > lo;
	if (twice) {
		/* the power goes again while the rebooted directory is opened:
		 * WAL recovery, the checkpoint when the handle closes */
		fresh_dir(st->run);
		copy_tree(st->again, st->run);
		uint64_t op2 = 1 + rnd(&rng) % 64;
		enum keep keep2 = keep_for(&rng);
		run_writer("reopen", st->run, st->journal2, op2, &r);
		if (r.err[0]) {
			report(st, op, keep, lo, "reopening after the reboot", r.err);
			return -1;
		}
		if (journal_load(st->journal2, &j) != 0 || j.unmodelled[0]) {
			report(st, op, keep, lo, "journal of the reopening", j.unmodelled[0] ? j.unmodelled : "cannot parse");
			journal_free(&j);
			return -1;
		}
		*second += r.crashed;
		rc = reboot(&j, st->again, st->run, keep2, rnd(&rng), why, sizeof(why));
		journal_free(&j);
		int k2 = -1;
		if (rc || check_dir(st->run, &st->ref, lo, hi, k, k == 0 ? 1 : k, &k2, why, sizeof(why))) {
			char what[160];
			snprintf(what, sizeof(what), "after a second cut before operation %llu of the reopening (%s survived)",
				 (unsigned long long)op2, keep_names[keep2]);
			report(st, op, keep, lo, what, why);
			return -1;
		}
	}
	t = now_ms();
	rc = check_zcor(st->run, twice, why, sizeof(why));
	phase(4, t);
	if (rc) {
		report(st, op, keep, lo, "zcor on the rebooted directory", why);
		return -1;
	}
	return 0;
}

/* ---- the cases ---------------------------------------------------------------------- */

static char *file_text(const char *dir, const char *name)
{
	char *p = path2(dir, name);
	struct bytes b = {0};
	int rc = read_all(p, &b);
	free(p);
	if (rc) {
		free(b.p);
		return NULL;
	}
	return (char *)b.p;
}

static long long rows_of(const char *dir, const char *db, const char *sql)
{
	char *p = path2(dir, db);
	sqlite3 *h = NULL;
	sqlite3_stmt *st = NULL;
	long long n = -1;
	if (sqlite3_open_v2(p, &h, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(h);
	free(p);
	return n;
}

#define CHECK_FILE(dir, name, want)                                                         \
	do {                                                                                \
		char *t_ = file_text(dir, name);                                            \
		const char *w_ = (want);                                                    \
		if (w_ ? !t_ || strcmp(t_, w_) != 0 : t_ != NULL) {                         \
			fprintf(stderr, "%s:%d: %s/%s is %s%s%s, expected %s%s%s\n", __FILE__, __LINE__, \
				dir, name, t_ ? "'" : "", t_ ? t_ : "absent", t_ ? "'" : "",  \
				w_ ? "'" : "", w_ ? w_ : "absent", w_ ? "'" : "");           \
			t_failures++;                                                       \
		}                                                                           \
		free(t_);                                                                   \
	} while (0)

/* The model itself (powerloss_writer model): each file stands for one rule,
 * and the reboot must lose exactly what was not synced — and keep all of
 * it when told to keep everything. Without this the other cases could
 * pass on a shim that missed a call. */
static void model_keeps_only_what_was_synced(void)
{
	const char *w = t_tmpdir();
	char *base = path2(w, "base"), *run = path2(w, "run"), *journal = path2(w, "journal");
	/* one directory per rule, there (and durable) from the start */
	fresh_dir(base);
	static const char *const dirs[] = {"A", "B", "C", "D", "E", "O", "S"};
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		char *d = path2(base, dirs[i]);
		mkdir(d, 0755);
		free(d);
	}
	char *p = path2(base, "O/old");
	write_all(p, "old-durable", 11);
	free(p);
	p = path2(base, "E/e");
	write_all(p, "E-old", 5);
	free(p);
	fresh_dir(run);
	copy_tree(base, run);
	struct run r;
	run_writer("model", run, journal, 0, &r);
	CHECK_STR(r.err, "");
	CHECK_INT(r.acks, 1);
	struct journal j;
	CHECK_INT(journal_load(journal, &j), 0);
	CHECK_STR(j.unmodelled, "");
	CHECK(j.fsyncs >= 6 && j.writes >= 8 && j.names >= 6);
	char why[600] = "";

	CHECK_INT(reboot(&j, base, run, KEEP_NONE, 1, why, sizeof(why)), 0);
	CHECK_STR(why, "");
	CHECK_FILE(run, "A/a", NULL);
	CHECK_FILE(run, "B/b", NULL);
	CHECK_FILE(run, "C/c", "C");
	CHECK_FILE(run, "D/d/x", NULL);
	CHECK_FILE(run, "E/e", "E-old");
	CHECK_FILE(run, "O/old", "old-durable");
	CHECK_INT(rows_of(run, "S/s.db", "SELECT count(*) FROM t"), 1);

	CHECK_INT(reboot(&j, base, run, KEEP_ALL, 1, why, sizeof(why)), 0);
	CHECK_FILE(run, "A/a", "A");
	CHECK_FILE(run, "B/b", "B");
	CHECK_FILE(run, "C/c", "CC2");
	CHECK_FILE(run, "D/d/x", "X");
	CHECK_FILE(run, "E/e", "E-new");
	CHECK_FILE(run, "O/old", "new");
	CHECK_INT(rows_of(run, "S/s.db", "SELECT count(*) FROM t"), 2);

	/* a random part: never more than everything, never less than the synced */
	for (uint64_t seed = 1; seed <= 20; seed++) {
		CHECK_INT(reboot(&j, base, run, KEEP_SOME, seed, why, sizeof(why)), 0);
		char *c = file_text(run, "C/c");
		CHECK(c && strncmp(c, "C", 1) == 0);
		free(c);
		long long rows = rows_of(run, "S/s.db", "SELECT count(*) FROM t");
		CHECK(rows == 1 || rows == 2);
	}
	journal_free(&j);
	free(base);
	free(run);
	free(journal);
}

/* Every acknowledged write is synced when it is acknowledged: a whole
 * stream, then a power cut that keeps nothing unsynced, and the directory
 * is exactly the last state. */
static void acknowledged_is_durable(int script)
{
	struct stream *st = stream_get(script);
	if (!st)
		return;
	/* cut just after each acknowledgment */
	int in_flight = 0, second = 0, failed = 0;
	for (int c = 1; c <= st->nmarks && failed < 3; c++)
		if (st->marks[c - 1] < st->ops)
			failed += one_point(st, (uint64_t)c, 1, 0, &in_flight, &second) != 0;
	/* and after the whole stream */
	struct journal j;
	char why[1600] = "";
	int last = st->ref.n - 1, k = -1;
	CHECK_INT(journal_load(st->journal0, &j), 0);
	for (int keep = KEEP_NONE; keep <= KEEP_ALL; keep++) {
		if (reboot(&j, st->base, st->run, keep, 7, why, sizeof(why)) ||
		    check_dir(st->run, &st->ref, last, last, last, last, &k, why, sizeof(why)))
			report(st, 0, keep, last, "the last state", why);
	}
	journal_free(&j);
}

static void issue12_acknowledged_writes_are_synced_main(void) { acknowledged_is_durable(PL_SCRIPT_MAIN); }

/* The first writes in an empty directory: media/, stickers/, backups/ and
 * mirror/ are made, and their names must be synced too. */
static void issue12_acknowledged_writes_are_synced_fresh(void) { acknowledged_is_durable(PL_SCRIPT_FRESH); }

/* Issue 12: a power cut at ZCOR_POWERLOSS_POINTS points (200 by default),
 * three quarters in the main stream, a quarter in the first writes of an
 * empty directory. */
static void issue12_power_cut_at_many_points(void)
{
	uint64_t points = env_u64("ZCOR_POWERLOSS_POINTS", 200);
	const char *only = getenv("ZCOR_POWERLOSS_ONLY");
	long long t0 = now_ms();
	for (int script = PL_SCRIPT_MAIN; script <= PL_SCRIPT_FRESH; script++) {
		struct stream *st = stream_get(script);
		if (!st)
			continue;
		uint64_t n = script == PL_SCRIPT_MAIN ? points - points / 4 : points / 4;
		int failed = 0, in_flight = 0, second = 0, twice_runs = 0;
		long long t1 = now_ms();
		uint64_t rng = point_seed(script, 0);
		for (uint64_t i = 0; i < n && failed < 3; i++) {
			uint64_t span = st->ops / n ? st->ops / n : 1;
			uint64_t op = 1 + (i * st->ops) / n + rnd(&rng) % span;
			if (op > st->ops)
				op = st->ops;
			if (only) {
				const char *colon = strchr(only, ':');
				if (!colon || strncmp(only, stream_names[script], (size_t)(colon - only)) != 0)
					break;
				op = strtoull(colon + 1, NULL, 10);
				i = n;
			}
			int twice = only ? getenv("ZCOR_POWERLOSS_TWICE") != NULL : i % 4 == 3;
			twice_runs += twice;
			failed += one_point(st, op, 0, twice, &in_flight, &second) != 0;
		}
		printf("stream '%s': %llu power cuts in %lld ms, %d of them after the in-flight step had "
		       "reached the disk; %d reopenings, %d cut again\n",
		       stream_names[script], (unsigned long long)n, now_ms() - t1, in_flight, twice_runs, second);
	}
	printf("power cuts: %lld ms in all (", now_ms() - t0);
	for (int i = 0; i < 5; i++)
		printf("%s%s %lld", i ? ", " : "", phase_names[i], phase_ms[i]);
	printf(")\n");
}

const struct t_case t_cases[] = {
	{"model_keeps_only_what_was_synced", model_keeps_only_what_was_synced},
	{"issue12_acknowledged_writes_are_synced_main", issue12_acknowledged_writes_are_synced_main},
	{"issue12_acknowledged_writes_are_synced_fresh", issue12_acknowledged_writes_are_synced_fresh},
	{"issue12_power_cut_at_many_points", issue12_power_cut_at_many_points},
	{0},
};
