/*
 * test_oom.c — out-of-memory tests, SQLite style (issue 13, item 7): for a
 * sample of calls through zcor.h (memory write, query, people upsert,
 * recall, log messages, config set), the 1st, 2nd, … Nth allocation of the
 * call is made to fail in turn (zc_alloc_fail_after), each run in a
 * forked child on a fresh copy of one memory directory, until N is past
 * the call's last allocation.
 *
 * zcor's policy (base/alloc.h, tmux's xmalloc): an allocation that fails
 * ends the process with "zcor: out of memory"; jansson's allocations go
 * through the same wrapper (zcor.c), SQLite keeps its own and reports
 * SQLITE_NOMEM. So every run must end in one of two ways only:
 *   - the policy's abort (SIGABRT, the message on stderr), never another
 *     signal, a sanitizer report or a half-done answer; or
 *   - the call's answer (past its last allocation), and then, under ASan,
 *     no leak at exit (LeakSanitizer fails the child's exit);
 * and the store (every table of memory.db, and config.json) is afterwards
 * either exactly as before the call or exactly as the complete call
 * leaves it: nothing half-written, whichever allocation failed.
 *
 * The sample: every N up to 48, then 48 more spread over the rest;
 * ZCOR_OOM_FULL=1 tries every N.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/alloc.h"
#include "harness.h"

static int64_t fixed_clock(void *ud)
{
	(void)ud;
	return 1767225600000; /* 2026-01-01T00:00:00Z */
}

static zcor *open_fixed(const char *dir)
{
	zcor *z = t_open_dir(dir);
	zcor_set_clock(z, fixed_clock, NULL);
	return z;
}

/* ---- the calls ------------------------------------------------------- */

static const struct zcor_ctx group1 = {ZCOR_ACTOR_MODEL, "group:1"};

static int call_write(zcor *z, char **out)
{
	return zcor_tool_call(z, &group1, "zcor_memory_write",
			      "{\"title\":\"周六打本\",\"content\":\"小明每周六晚上八点打副本\","
			      "\"keywords\":[\"打本\",\"副本\"]}",
			      out);
}

static int call_query(zcor *z, char **out)
{
	return zcor_tool_call(z, &group1, "zcor_memory_query", "{\"keywords\":[\"猫\",\"咪咪\"]}", out);
}

static int call_people(zcor *z, char **out)
{
	return zcor_tool_call(z, NULL, "zcor_relationship_write",
			      "{\"personId\":\"10002\",\"name\":\"小红\",\"relationship\":\"朋友\","
			      "\"affinity\":5,\"reason\":\"一起养猫\"}",
			      out);
}

static int call_recall(zcor *z, char **out)
{
	return zcor_recall(z, "{\"conversation\":\"group:1\",\"messages\":[\"咪咪今天怎么样\"]}", out);
}

static int call_log(zcor *z, char **out)
{
	return zcor_log_messages(z, NULL, "group:1",
				 "{\"messages\":[{\"id\":\"7\",\"senderId\":\"5\",\"senderName\":\"小明\","
				 "\"text\":\"周六打本吗\"},{\"id\":\"8\",\"senderId\":\"6\",\"text\":\"好\"}]}",
				 out);
}

static int call_config(zcor *z, char **out)
{
	(void)out; /* a setting answers with its code only */
	return zcor_config_set(z, "{\"memoryFileMaxBytes\":4096}");
}

struct sample {
	const char *name;
	int (*call)(zcor *z, char **out);
};

static const struct sample samples[] = {
	{"memory write", call_write}, {"memory query", call_query}, {"people upsert", call_people},
	{"recall", call_recall},      {"log messages", call_log},   {"config set", call_config},
};

/* ---- the store, before and after ------------------------------------- */

static void add_file(FILE *m, const char *path)
{
	FILE *f = fopen(path, "r");
	char buf[4096];
	size_t n;
	fprintf(m, "== %s\n", strrchr(path, '/') + 1);
	while (f && (n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, m);
	if (f)
		fclose(f);
}

/* Every table's rows as text, then config.json: what a call may change.
 * NULL when memory.db cannot be read. Derived data is left out: the FTS
 * indexes (and nodes_vocab over them; recall_stats and recall_df, the
 * counts beside recall_fts, and recall_gen, their generations; the term
 * dictionary, terms and term_prefix, whose rows of new memories wait for
 * the same batch since issue 19), meta's
 * fts_upto and terms_upto (how far they are caught up), recall_gen
 * (recall's cache generation) and recall's hit
 * counts (hits, last_hit_at, hit_batch: written after the call, by the
 * flusher or at close) may lag a
 * committed change when the process ends right after its commit, and the
 * next reader or writer catches them up (store.c, DESIGN.md: derived
 * data can be rebuilt from the rest). */
static char *dump(const char *dir)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/memory.db", dir);
	sqlite3 *db = NULL;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		sqlite3_close(db);
		return NULL;
	}
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	sqlite3_stmt *tabs = NULL;
	int ok = sqlite3_prepare_v2(db,
				    "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE "
				    "'sqlite_%' AND name NOT LIKE '%_fts_%' AND name NOT IN ('nodes_vocab', "
				    "'hit_batch', 'recall_stats', 'recall_df', 'recall_gen', 'terms', 'term_prefix') "
				    "ORDER BY name",
				    -1, &tabs, NULL) == SQLITE_OK;
	while (ok && sqlite3_step(tabs) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(tabs, 0);
		char *sql = strcmp(t, "meta") == 0
				    ? sqlite3_mprintf("SELECT * FROM meta WHERE key NOT IN ('fts_upto', "
						      "'terms_upto', 'recall_gen') ORDER BY key")
				    : sqlite3_mprintf("SELECT * FROM \"%w\"", t);
		sqlite3_stmt *rows = NULL;
		if (sqlite3_prepare_v2(db, sql, -1, &rows, NULL) != SQLITE_OK) {
			/* a virtual table of ours needs zcor's tokenizer: its
			 * shadow tables hold its rows and are dumped instead */
			sqlite3_free(sql);
			continue;
		}
		sqlite3_free(sql);
		fprintf(m, "== %s\n", t);
		while (sqlite3_step(rows) == SQLITE_ROW) {
			for (int i = 0; i < sqlite3_column_count(rows); i++) {
				const char *col = sqlite3_column_name(rows, i);
				fputc(i ? '|' : '\n', m);
				if (strcmp(col, "hits") == 0 || strcmp(col, "last_hit_at") == 0)
					continue;
				if (sqlite3_column_type(rows, i) == SQLITE_BLOB) {
					/* as hex: a blob may hold NUL bytes */
					const unsigned char *b = sqlite3_column_blob(rows, i);
					int n = sqlite3_column_bytes(rows, i);
					for (int k = 0; k < n; k++)
						fprintf(m, "%02x", b[k]);
					continue;
				}
				const unsigned char *v = sqlite3_column_text(rows, i);
				int n = sqlite3_column_bytes(rows, i);
				if (v)
					fwrite(v, 1, strnlen((const char *)v, (size_t)n), m);
				else
					fputs("NULL", m);
			}
		}
		fputc('\n', m);
		sqlite3_finalize(rows);
	}
	sqlite3_finalize(tabs);
	sqlite3_close(db);
	snprintf(path, sizeof(path), "%s/config.json", dir);
	add_file(m, path);
	fclose(m);
	return text;
}

/* ---- one run --------------------------------------------------------- */

static const char *copy_of(const char *template)
{
	const char *dir = t_tmpdir();
	char cmd[2200];
	snprintf(cmd, sizeof(cmd), "cp -a '%s/.' '%s/'", template, dir);
	if (system(cmd) != 0) {
		fprintf(stderr, "cannot copy %s\n", template);
		exit(2);
	}
	return dir;
}

/* In a child: the call with its (n+1)th allocation failing (n < 0: none).
 * Exits 0 when the call answered as it should, 3 when it answered with an
 * error, 4 when the answer is not JSON. */
static void child(const char *dir, const struct sample *s, long n)
{
	char path[1100];
	snprintf(path, sizeof(path), "%s/child.stderr", dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd >= 0) {
		dup2(fd, 2);
		close(fd);
	}
	zcor *z = open_fixed(dir);
	char *out = NULL;
	zc_alloc_fail_after(n);
	int rc = s->call(z, &out);
	zc_alloc_fail_after(-1);
	int bad = rc != ZCOR_OK ? 3 : 0;
	if (rc != ZCOR_OK)
		fprintf(stderr, "%s: %s: %s\n", s->name, zcor_code_name(rc), zcor_errjson(z));
	else if (out && s->call != call_config && out[0] != '{')
		bad = 4;
	zcor_free(out);
	zcor_close(z);
	exit(bad);
}

static char *read_small(const char *path)
{
	char *data = calloc(1, 2049);
	FILE *f = fopen(path, "r");
	if (data && f)
		data[fread(data, 1, 2048, f)] = '\0';
	if (f)
		fclose(f);
	return data;
}

/* Runs sample s with failure n on a copy of template; checks how it
 * ended and what it left. Returns 1 when the failure was hit. */
static int one_run(const char *template, const struct sample *s, long n, const char *before,
		   const char *after)
{
	const char *dir = copy_of(template);
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(2);
	}
	if (pid == 0)
		child(dir, s, n);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	char path[1100];
	snprintf(path, sizeof(path), "%s/child.stderr", dir);
	char *err = read_small(path);
	int hit = WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT && err &&
		  strstr(err, "zcor: out of memory") != NULL;
	int answered = WIFEXITED(status) && WEXITSTATUS(status) == 0;
	if (!hit && !answered) {
		fprintf(stderr, "%s, allocation %ld failing: %s %d; stderr:\n%s\n", s->name, n + 1,
			WIFSIGNALED(status) ? "signal" : "exit",
			WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status), err ? err : "");
		t_failures++;
	}
	unlink(path);
	char *now = dump(dir);
	if (!now || (strcmp(now, before) != 0 && strcmp(now, after) != 0)) {
		fprintf(stderr, "%s, allocation %ld failing: the store is neither as before nor as after "
				"the call\n",
			s->name, n + 1);
		t_failures++;
	}
	free(now);
	free(err);
	return hit;
}

/* ---- the test -------------------------------------------------------- */

static const char *make_template(void)
{
	const char *dir = t_tmpdir();
	zcor *z = open_fixed(dir);
	json_t *r = t_call_ok(z, "group:1", "zcor_memory_write",
			      "{\"title\":\"咪咪\",\"content\":\"小明家的猫叫咪咪，三岁\",\"keywords\":[\"猫\"]}");
	json_decref(r);
	r = t_call_ok(z, NULL, "zcor_memory_write",
		      "{\"title\":\"群规\",\"content\":\"周末不刷屏\",\"keywords\":[\"群规\"]}");
	json_decref(r);
	char *out = NULL;
	CHECK_INT(zcor_log_messages(z, NULL, "group:1",
				    "{\"messages\":[{\"id\":\"1\",\"senderId\":\"5\",\"text\":\"咪咪睡了\"}]}", &out),
		  ZCOR_OK);
	zcor_free(out);
	zcor_close(z);
	return dir;
}

static void issue13_7_oom_each_allocation_in_turn(void)
{
	const char *template = make_template();
	char *before = dump(template);
	CHECK(before != NULL);
	const char *full = getenv("ZCOR_OOM_FULL");
	int every = full && strcmp(full, "1") == 0;
	for (size_t i = 0; before && i < sizeof(samples) / sizeof(samples[0]); i++) {
		const struct sample *s = &samples[i];
		/* the complete call, counted: its allocations and what it leaves */
		const char *dir = copy_of(template);
		zcor *z = open_fixed(dir);
		char *out = NULL;
		unsigned long from = zc_alloc_count();
		int rc = s->call(z, &out);
		unsigned long total = zc_alloc_count() - from;
		if (rc != ZCOR_OK)
			fprintf(stderr, "%s: %s\n", s->name, zcor_errjson(z));
		CHECK_INT(rc, ZCOR_OK);
		zcor_free(out);
		zcor_close(z);
		char *after = dump(dir);
		/* the writes change the store (the reads may too: hit counts) */
		if (s->call != call_query && s->call != call_recall && (!after || !strcmp(after, before))) {
			fprintf(stderr, "%s: the complete call changed nothing\n", s->name);
			t_failures++;
		}
		if (!after)
			continue;
		long runs = 0, hits = 0, spread = 48;
		for (long n = 0; n < (long)total; n++) {
			if (!every && n >= spread && (n - spread) % ((long)(total - (unsigned long)spread) / spread + 1))
				continue;
			hits += one_run(template, s, n, before, after);
			runs++;
		}
		/* past the last allocation (counted in the parent, so a few
		 * more for a flusher thread's timing): the call answers */
		CHECK(!one_run(template, s, (long)total + 64, before, after));
		CHECK(hits > 0);
		fflush(stderr);
		fprintf(stderr, "     %s: %lu allocations, %ld runs, %ld out of memory\n", s->name, total, runs, hits);
		free(after);
	}
	free(before);
}

const struct t_case t_cases[] = {
	{"issue13_7_oom_each_allocation_in_turn", issue13_7_oom_each_allocation_in_turn},
	{0},
};
