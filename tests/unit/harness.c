/*
 * harness.c — see harness.h. Runs every case of t_cases[] (or those named
 * on the command line) and exits non-zero when a CHECK failed.
 */
#define _GNU_SOURCE
#include "harness.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ftw.h>
#include <netinet/in.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/store.h" /* zc_fts_register, for t_sql_exec's connection */

int t_failures;

/* Every t_tmpdir() of one run lives in one root directory, made on first
 * use: removed at the end of main when every case passed, kept (and named)
 * when one failed, so the developer can look. */
static char *tmp_root;
static pid_t tmp_owner;  /* forked children must not report the root */
static int tmp_done;     /* removed or reported at the end of main */
static char **tmp_dirs;  /* kept for the whole run: callers hold them */
static size_t tmp_ndirs, tmp_cap;

/* A helper that gives up (exit(2): a store that cannot be opened) leaves
 * the root behind: say where. */
static void tmp_report_exit(void)
{
	if (tmp_root && !tmp_done && getpid() == tmp_owner)
		fprintf(stderr, "temporary directories kept in %s\n", tmp_root);
}

const char *t_tmpdir(void)
{
	if (!tmp_root) {
		const char *base = getenv("TMPDIR");
		if (asprintf(&tmp_root, "%s/zcor-test-XXXXXX", base && *base ? base : "/tmp") < 0)
			exit(2);
		if (!mkdtemp(tmp_root)) {
			perror("mkdtemp");
			exit(2);
		}
		/* others may pass through, not list: test_faults' nobody must
		 * reach the directories it makes world-readable */
		chmod(tmp_root, 0711);
		tmp_owner = getpid();
		atexit(tmp_report_exit);
	}
	if (tmp_ndirs == tmp_cap) {
		tmp_cap = tmp_cap ? tmp_cap * 2 : 64;
		tmp_dirs = realloc(tmp_dirs, tmp_cap * sizeof(*tmp_dirs));
		if (!tmp_dirs)
			exit(2);
	}
	char *dir = NULL;
	if (asprintf(&dir, "%s/%zu", tmp_root, tmp_ndirs + 1) < 0)
		exit(2);
	if (mkdir(dir, 0700) != 0) {
		perror(dir);
		exit(2);
	}
	tmp_dirs[tmp_ndirs++] = dir;
	return dir;
}

/* Before removal, give the owner rwx on every directory: one that a case
 * left read-only stops the removal unless we run as root. nftw reports
 * FTW_D once it opened a directory, FTW_DNR when it could not: that one is
 * walked again once readable. */
static int tmp_unlock(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)f;
	if (flag != FTW_D && flag != FTW_DNR)
		return 0;
	if ((st->st_mode & S_IRWXU) == S_IRWXU || chmod(path, (st->st_mode & 07777) | S_IRWXU) != 0)
		return 0;
	return flag == FTW_DNR ? nftw(path, tmp_unlock, 16, FTW_PHYS) : 0;
}

static int tmp_remove(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	if (remove(path) != 0 && errno != ENOENT)
		fprintf(stderr, "cannot remove %s: %s\n", path, strerror(errno));
	return 0;
}

/* At the end of main, not atexit: the forked children of test_faults must
 * not touch what the parent still checks. */
static void tmp_finish(int failed)
{
	if (!tmp_root)
		return;
	tmp_done = 1;
	if (failed) {
		fprintf(stderr, "temporary directories kept in %s\n", tmp_root);
		return;
	}
	nftw(tmp_root, tmp_unlock, 16, FTW_PHYS);
	nftw(tmp_root, tmp_remove, 16, FTW_DEPTH | FTW_PHYS);
	for (size_t i = 0; i < tmp_ndirs; i++)
		free(tmp_dirs[i]);
	free(tmp_dirs);
	free(tmp_root);
	tmp_root = NULL;
}

zcor *t_open_dir(const char *dir)
{
	zcor *z = NULL;
	if (zcor_open(&z, dir) != ZCOR_OK) {
		fprintf(stderr, "cannot open %s: %s\n", dir, zcor_errmsg(z));
		exit(2);
	}
	return z;
}

zcor *t_open(void) { return t_open_dir(t_tmpdir()); }

json_t *t_call_raw(zcor *z, const char *conv, int *rc, const char *tool, const char *args)
{
	struct zcor_ctx ctx = {ZCOR_ACTOR_MODEL, conv};
	char *out = NULL;
	int r = zcor_tool_call(z, &ctx, tool, args, &out);
	if (rc)
		*rc = r;
	return t_answer(z, r, out);
}

json_t *t_answer(zcor *z, int rc, char *out)
{
	const char *text = rc ? zcor_errjson(z) : out;
	json_t *v = text ? json_loads(text, 0, NULL) : NULL;
	if (!v || (rc && out)) {
		fprintf(stderr, "a call answered %s: %s%s\n", rc ? "an error" : "ok",
			text ? text : "(nothing)", rc && out ? " (and a result)" : "");
		t_failures++;
		if (!v)
			v = json_object();
	}
	zcor_free(out);
	return v;
}

char *t_vformat(const char *fmt, va_list ap)
{
	char *s = NULL;
	if (vasprintf(&s, fmt, ap) < 0)
		exit(2);
	return s;
}

static json_t *vcall(zcor *z, const char *conv, int *rc, const char *tool, const char *fmt, va_list ap)
{
	char *args = t_vformat(fmt, ap);
	json_t *v = t_call_raw(z, conv, rc, tool, args);
	free(args);
	return v;
}

json_t *t_call(zcor *z, const char *conv, const char *tool, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	json_t *v = vcall(z, conv, NULL, tool, fmt, ap);
	va_end(ap);
	return v;
}

json_t *t_call_rc(zcor *z, const char *conv, int *rc, const char *tool, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	json_t *v = vcall(z, conv, rc, tool, fmt, ap);
	va_end(ap);
	return v;
}

json_t *t_call_ok(zcor *z, const char *conv, const char *tool, const char *fmt, ...)
{
	int rc = -1;
	va_list ap;
	va_start(ap, fmt);
	json_t *v = vcall(z, conv, &rc, tool, fmt, ap);
	va_end(ap);
	if (rc != ZCOR_OK) {
		fprintf(stderr, "%s failed: %s\n", tool, t_errmsg(v) ? t_errmsg(v) : "?");
		t_failures++;
	}
	return v;
}

json_t *t_get(json_t *v, const char *path)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *tok = buf, *next; v && tok && *tok; tok = next) {
		next = strchr(tok, '.');
		if (next)
			*next++ = '\0';
		if (json_is_array(v)) {
			char *end;
			long i = strtol(tok, &end, 10);
			v = *end ? NULL : json_array_get(v, (size_t)i);
		} else {
			v = json_object_get(v, tok);
		}
	}
	return v;
}

const char *t_str(json_t *v, const char *path) { return json_string_value(t_get(v, path)); }

long long t_int(json_t *v, const char *path) { return json_integer_value(t_get(v, path)); }

const char *t_errcode(json_t *v) { return t_str(v, "error.code"); }

const char *t_errmsg(json_t *v) { return t_str(v, "error.message"); }

/* Steps sql once on a read-only connection to dir's memory.db and hands
 * the first row to take (not called when there is none). */
static void sql_first_row(const char *dir, const char *sql, void (*take)(sqlite3_stmt *, void *),
			  void *ud)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/memory.db", dir);
	sqlite3 *db = NULL;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
		/* another process (a test's child closing its handle, which
		 * checkpoints) may hold a lock for a moment, as zcor's own
		 * connections allow for */
		sqlite3_busy_timeout(db, 5000);
		sqlite3_stmt *st = NULL;
		int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
		if (rc == SQLITE_OK)
			rc = sqlite3_step(st);
		if (rc == SQLITE_ROW)
			take(st, ud);
		else if (rc != SQLITE_DONE)
			fprintf(stderr, "sql failed: %s: %s\n", sql, sqlite3_errmsg(db));
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
}

static void take_int(sqlite3_stmt *st, void *ud) { *(long long *)ud = sqlite3_column_int64(st, 0); }

static void take_str(sqlite3_stmt *st, void *ud)
{
	const char *v = (const char *)sqlite3_column_text(st, 0);
	if (v)
		*(char **)ud = strdup(v);
}

long long t_sql_int(const char *dir, const char *sql)
{
	long long v = -1;
	sql_first_row(dir, sql, take_int, &v);
	return v;
}

char *t_sql_str(const char *dir, const char *sql)
{
	char *v = NULL;
	sql_first_row(dir, sql, take_str, &v);
	return v ? v : strdup("");
}

int main(int argc, char **argv)
{
	int ran = 0, failed_cases = 0;
	for (const struct t_case *c = t_cases; c->name; c++) {
		int wanted = argc < 2;
		for (int i = 1; i < argc; i++)
			wanted |= strcmp(argv[i], c->name) == 0;
		if (!wanted)
			continue;
		int before = t_failures;
		size_t dirs_before = tmp_ndirs;
		c->fn();
		ran++;
		if (t_failures != before) {
			failed_cases++;
			fprintf(stderr, "FAIL %s\n", c->name);
			for (size_t i = dirs_before; i < tmp_ndirs; i++)
				fprintf(stderr, "     kept %s\n", tmp_dirs[i]);
		} else {
			printf("ok   %s\n", c->name);
		}
	}
	printf("%d passed, %d failed\n", ran - failed_cases, failed_cases);
	tmp_finish(failed_cases);
	return failed_cases ? 1 : 0;
}

/* Runs SQL on memory.db through a second, writable connection. */
void t_sql_exec(zcor *z, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *sql = t_vformat(fmt, ap);
	va_end(ap);
	char path[4096];
	snprintf(path, sizeof(path), "%s/memory.db", zcor_dir(z));
	sqlite3 *db = NULL;
	char *err = NULL;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		fprintf(stderr, "cannot open %s\n", path);
		t_failures++;
	} else {
		sqlite3_busy_timeout(db, 10000);
		/* nodes' triggers name nodes_fts, whose tokenizer is zcor's own:
		 * SQLite needs it registered to prepare any UPDATE of nodes */
		struct zc_err e = {0};
		if (zc_fts_register(db, &e) != ZCOR_OK) {
			fprintf(stderr, "cannot register the zcor tokenizer: %s\n", e.msg);
			t_failures++;
		}
		if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
			fprintf(stderr, "sql failed: %s: %s\n", sql, err ? err : "?");
			t_failures++;
		}
		sqlite3_free(err);
	}
	sqlite3_close(db);
	free(sql);
}

const char *t_fixtures_dir(void)
{
	static char buf[4096];
	const char *env = getenv("ZCOR_FIXTURES");
	if (env && *env) {
		snprintf(buf, sizeof(buf), "%s", env);
	} else {
		char here[4000];
		snprintf(here, sizeof(here), "%s", __FILE__);
		char *slash = strrchr(here, '/');
		if (slash)
			*slash = '\0';
		snprintf(buf, sizeof(buf), "%s/../fixtures", slash ? here : ".");
	}
	return buf;
}

void t_fixture_copy(const char *name, const char *to)
{
	char from[4200];
	snprintf(from, sizeof(from), "%s/%s", t_fixtures_dir(), name);
	FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
	char buf[8192];
	size_t n;
	int ok = in && out;
	while (ok && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		ok = fwrite(buf, 1, n, out) == n;
	ok = ok && !ferror(in);
	if (in)
		fclose(in);
	if (out && fclose(out) != 0)
		ok = 0;
	if (!ok) {
		fprintf(stderr, "cannot copy fixture %s to %s\n", from, to);
		exit(2);
	}
}

static void *refusing_model(void *ud)
{
	int fd = *(int *)ud;
	for (int c; (c = accept(fd, NULL, NULL)) >= 0; close(c)) {
		char buf[65536];
		(void)!read(c, buf, sizeof(buf)); /* the request (one read is enough here) */
		static const char reply[] = "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\n"
					    "Content-Length: 37\r\nConnection: close\r\n\r\n"
					    "{\"error\":{\"message\":\"refused here\"}}";
		(void)!write(c, reply, sizeof(reply) - 1);
	}
	return NULL;
}

int t_refusing_model_start(struct t_refusing_model *m)
{
	m->fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	if (m->fd < 0 || bind(m->fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(m->fd, 4) != 0 ||
	    getsockname(m->fd, (struct sockaddr *)&a, &al) != 0 ||
	    pthread_create(&m->th, NULL, refusing_model, &m->fd) != 0) {
		if (m->fd >= 0)
			close(m->fd);
		m->fd = -1;
		return 0;
	}
	return ntohs(a.sin_port);
}

void t_refusing_model_stop(struct t_refusing_model *m)
{
	if (m->fd < 0)
		return;
	shutdown(m->fd, SHUT_RDWR);
	close(m->fd);
	pthread_join(m->th, NULL);
	m->fd = -1;
}
