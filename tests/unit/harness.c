/*
 * harness.c — see harness.h. Runs every case of t_cases[] (or those named
 * on the command line) and exits non-zero when a CHECK failed.
 */
#define _GNU_SOURCE
#include "harness.h"

#include <sqlite3.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

#include "store/store.h" /* zc_fts_register, for t_sql_exec's connection */

int t_failures;

const char *t_tmpdir(void)
{
	static char dirs[256][512];
	static int ndirs;
	const char *base = getenv("TMPDIR");
	char *tmpl = dirs[ndirs++ % 256];
	snprintf(tmpl, 512, "%s/zcor-test-XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(tmpl)) {
		perror("mkdtemp");
		exit(2);
	}
	return tmpl;
}

zcor *t_open_dir(const char *dir)
{
	zcor *z = NULL;
	char *err = NULL;
	if (zcor_open(&z, dir, &err) != ZCOR_OK) {
		fprintf(stderr, "cannot open %s: %s\n", dir, err);
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
	json_error_t je;
	json_t *v = json_loads(out, 0, &je);
	if (!v) {
		fprintf(stderr, "tool %s returned invalid JSON: %s\n", tool, out);
		t_failures++;
		v = json_object();
	}
	zcor_free(out);
	return v;
}

static json_t *vcall(zcor *z, const char *conv, int *rc, const char *tool, const char *fmt, va_list ap)
{
	char *args = NULL;
	if (vasprintf(&args, fmt, ap) < 0)
		exit(2);
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

long long t_sql_int(const char *dir, const char *sql)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/memory.db", dir);
	sqlite3 *db = NULL;
	long long v = -1;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
		sqlite3_stmt *st = NULL;
		if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
			v = sqlite3_column_int64(st, 0);
		else
			fprintf(stderr, "sql failed: %s: %s\n", sql, sqlite3_errmsg(db));
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	return v;
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
		c->fn();
		ran++;
		if (t_failures != before) {
			failed_cases++;
			fprintf(stderr, "FAIL %s\n", c->name);
		} else {
			printf("ok   %s\n", c->name);
		}
	}
	printf("%d passed, %d failed\n", ran - failed_cases, failed_cases);
	return failed_cases ? 1 : 0;
}

/* Runs SQL on memory.db through a second, writable connection. */
void t_sql_exec(zcor *z, const char *fmt, ...)
{
	char *sql = NULL;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&sql, fmt, ap) < 0)
		exit(2);
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
