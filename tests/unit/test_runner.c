/*
 * test_runner.c — the operation runner (memory/op.c) as the floor of
 * memory/ (issue 13, item 1): the commit hooks fire once per committed
 * operation and never for a rolled-back one; a ZC_OP_JOIN operation
 * inside another commits with it and rolls back with it (and its own
 * failure undoes only its part); ZC_OP_NO_HISTORY writes no history
 * record; the writes that used to begin and commit on their own (the
 * message log, a log file's import) now reach the hooks through it.
 */
#include <stdint.h>
#include <string.h>

#include "harness.h"
#include "memory/memory.h"
#include "memory/transcript.h"

static const struct zcor_ctx host = {ZCOR_ACTOR_CLI, NULL};

/* What the hooks saw. */
struct seen {
	int committed, precommit;
	int fail_precommit;
	char log_conv[64];
	int all_changed;
};

static int on_committed(struct zc_op *op, void *ud, struct zc_err *e)
{
	struct seen *s = ud;
	s->committed++;
	snprintf(s->log_conv, sizeof(s->log_conv), "%s", op->log_conv ? op->log_conv : "");
	s->all_changed = op->all_changed;
	return ZCOR_OK;
}

static int on_precommit(struct zc_op *op, void *ud, struct zc_err *e)
{
	struct seen *s = ud;
	s->precommit++;
	if (s->fail_precommit)
		return zc_fail(e, ZCOR_EINTERNAL, "the precommit hook refuses");
	return ZCOR_OK;
}

static int read_body(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	return ZCOR_OK;
}

static const struct zc_opdef read_def = {"test read", NULL, read_body, ZC_OP_READ};

/* A fresh store with the hooks of s; the migration check (the first
 * call's ZC_HOOK_FIRST_OP, a commit of its own) is behind it. */
static void open_mem(struct zc_mem *m, struct seen *s)
{
	struct zc_err e = {0};
	json_t *out = NULL;
	memset(s, 0, sizeof(*s));
	CHECK_INT(zc_mem_open(m, t_tmpdir(), &e), ZCOR_OK);
	CHECK_INT(zc_mem_run(m, &host, &read_def, NULL, &out, &e), ZCOR_OK);
	json_decref(out);
	CHECK_INT(zc_mem_hook(m, ZC_HOOK_PRECOMMIT, on_precommit, s, &e), ZCOR_OK);
	CHECK_INT(zc_mem_hook(m, ZC_HOOK_COMMITTED, on_committed, s, &e), ZCOR_OK);
}

static long long meta(struct zc_mem *m, const char *key)
{
	struct zc_err e = {0};
	long long v = -1;
	if (zc_meta_get_int(&m->store, key, &v, &e) != ZCOR_OK)
		return -2;
	return v;
}

static long long history_rows(struct zc_mem *m, const char *op)
{
	struct zc_err e = {0};
	zc_mem_flush(m, &e);
	sqlite3_stmt *st = NULL;
	long long n = -1;
	if (sqlite3_prepare_v2(m->store.db, "SELECT count(*) FROM history WHERE operation = ?1", -1,
			       &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, op, -1, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW)
			n = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	return n;
}

/* ---- the operations of the tests -------------------------------------- */

/* Sets meta key (op->ud) to 1; fails afterwards when args is true. */
static int set_body(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	int rc = zc_meta_set_int(&op->m->store, op->ud, 1, e);
	if (!rc && json_is_true(args))
		rc = zc_fail(e, ZCOR_EINVAL, "the body fails after its write");
	return rc;
}

static const struct zc_opdef set_def = {"test set", NULL, set_body, 0};
static const struct zc_opdef set_quiet_def = {"test quiet", NULL, set_body, ZC_OP_NO_HISTORY};
static const struct zc_opdef inner_def = {"test inner", NULL, set_body,
					  ZC_OP_NO_HISTORY | ZC_OP_JOIN};

/* What the outer operation does (op->ud). */
struct outer {
	int inner_fails;    /* the inner op's body fails after its write */
	int outer_fails;    /* the outer body fails after the inner op */
	int inner_rc;
};

static int outer_body(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	struct outer *o = op->ud;
	json_t *r = NULL;
	int rc = zc_meta_set_int(&op->m->store, "outer", 1, e);
	if (rc)
		return rc;
	struct zc_err ie = {0};
	o->inner_rc = zc_mem_run_ud(op->m, op->ctx, &inner_def, o->inner_fails ? json_true() : NULL,
				    "inner", &r, &ie);
	json_decref(r);
	if (o->outer_fails)
		return zc_fail(e, ZCOR_EINVAL, "the outer body fails after the inner op");
	return ZCOR_OK;
}

static const struct zc_opdef outer_def = {"test outer", NULL, outer_body, 0};

/* ---- the cases ---------------------------------------------------------- */

static void commit_hook_fires_once_per_committed_op(void)
{
	struct zc_mem m;
	struct seen s;
	struct zc_err e = {0};
	json_t *out = NULL;
	open_mem(&m, &s);
	CHECK_INT(zc_mem_run_ud(&m, &host, &set_def, NULL, "a", &out, &e), ZCOR_OK);
	json_decref(out);
	CHECK_INT(s.committed, 1);
	CHECK_INT(s.precommit, 1);
	CHECK_INT(meta(&m, "a"), 1);
	CHECK_INT(history_rows(&m, "test set"), 1);

	/* a body that fails: rolled back, no commit hook */
	CHECK_INT(zc_mem_run_ud(&m, &host, &set_def, json_true(), "b", &out, &e), ZCOR_EINVAL);
	CHECK_INT(s.committed, 1);
	CHECK_INT(meta(&m, "b"), 0);

	/* a precommit hook that fails: rolled back, no commit hook */
	s.fail_precommit = 1;
	e = (struct zc_err){0};
	CHECK_INT(zc_mem_run_ud(&m, &host, &set_def, NULL, "c", &out, &e), ZCOR_EINTERNAL);
	CHECK_HAS(e.msg, "precommit hook refuses");
	CHECK_INT(s.committed, 1);
	CHECK_INT(meta(&m, "c"), 0);
	s.fail_precommit = 0;

	/* a read commits nothing: no hook, its record is queued */
	CHECK_INT(zc_mem_run_ud(&m, &host, &read_def, NULL, NULL, &out, &e), ZCOR_OK);
	json_decref(out);
	CHECK_INT(s.committed, 1);
	CHECK_INT(s.precommit, 2);
	CHECK_INT(history_rows(&m, "test read"), 2);
	zc_mem_close(&m);
}

static void no_history_op_writes_no_record(void)
{
	struct zc_mem m;
	struct seen s;
	struct zc_err e = {0};
	json_t *out = NULL;
	open_mem(&m, &s);
	CHECK_INT(zc_mem_run_ud(&m, &host, &set_quiet_def, NULL, "q", &out, &e), ZCOR_OK);
	CHECK_INT(meta(&m, "q"), 1);
	CHECK_INT(s.committed, 1);
	CHECK_INT(history_rows(&m, "test quiet"), 0);
	/* and none for its failure either */
	CHECK_INT(zc_mem_run_ud(&m, &host, &set_quiet_def, json_true(), "r", &out, &e), ZCOR_EINVAL);
	CHECK_INT(meta(&m, "r"), 0);
	CHECK_INT(history_rows(&m, "test quiet"), 0);
	CHECK_INT(s.committed, 1);
	zc_mem_close(&m);
}

static void join_op_commits_and_rolls_back_with_its_caller(void)
{
	struct zc_mem m;
	struct seen s;
	struct zc_err e = {0};
	json_t *out = NULL;
	open_mem(&m, &s);

	/* both commit, in one transaction: one commit hook, one record */
	struct outer o = {0};
	CHECK_INT(zc_mem_run_ud(&m, &host, &outer_def, NULL, &o, &out, &e), ZCOR_OK);
	json_decref(out);
	CHECK_INT(o.inner_rc, ZCOR_OK);
	CHECK_INT(meta(&m, "outer"), 1);
	CHECK_INT(meta(&m, "inner"), 1);
	CHECK_INT(s.committed, 1);
	CHECK_INT(s.precommit, 1);
	CHECK_INT(history_rows(&m, "test outer"), 1);
	CHECK_INT(history_rows(&m, "test inner"), 0);
	zc_mem_close(&m);

	/* the caller fails after the joined op: both are rolled back */
	open_mem(&m, &s);
	o = (struct outer){.outer_fails = 1};
	CHECK_INT(zc_mem_run_ud(&m, &host, &outer_def, NULL, &o, &out, &e), ZCOR_EINVAL);
	CHECK_INT(o.inner_rc, ZCOR_OK);
	CHECK_INT(meta(&m, "outer"), 0);
	CHECK_INT(meta(&m, "inner"), 0);
	CHECK_INT(s.committed, 0);

	/* the joined op fails and its caller goes on: only its part is undone */
	o = (struct outer){.inner_fails = 1};
	CHECK_INT(zc_mem_run_ud(&m, &host, &outer_def, NULL, &o, &out, &e), ZCOR_OK);
	json_decref(out);
	CHECK_INT(o.inner_rc, ZCOR_EINVAL);
	CHECK_INT(meta(&m, "outer"), 1);
	CHECK_INT(meta(&m, "inner"), 0);
	CHECK_INT(s.committed, 1);
	zc_mem_close(&m);
}

/* The message log and a log file's import are runner operations: the
 * hooks see them (mirror/ follows them from there), and an import inside
 * a caller's operation is that operation's. */
static void transcript_writes_go_through_the_runner(void)
{
	struct zc_mem m;
	struct seen s;
	struct zc_err e = {0};
	json_t *out = NULL;
	open_mem(&m, &s);
	json_t *batch = json_pack("{s:[{s:s, s:s, s:s, s:s}]}", "messages", "id", "m1", "time",
				  "2024-04-01T08:00:00+08:00", "senderId", "42", "text", "你好");
	CHECK_INT(zc_transcript_log(&m, &host, "group:1", batch, &out, &e), ZCOR_OK);
	CHECK_INT(t_int(out, "logged"), 1);
	json_decref(out);
	CHECK_INT(s.committed, 1);
	CHECK_INT(s.precommit, 1);
	CHECK_STR(s.log_conv, "group:1");
	/* a redelivery logs nothing, and still commits once */
	CHECK_INT(zc_transcript_log(&m, &host, "group:1", batch, &out, &e), ZCOR_OK);
	CHECK_INT(t_int(out, "logged"), 0);
	json_decref(out);
	CHECK_INT(s.committed, 2);
	CHECK_STR(s.log_conv, "");
	json_decref(batch);

	const char line[] = "{\"id\":\"f1\",\"time\":\"2024-04-02T09:00:00+08:00\",\"senderId\":\"7\","
			    "\"text\":\"早\"}\n";
	CHECK_INT(zc_transcript_import_data(&m, "group:2", "2024-04-02.jsonl", line, strlen(line), &out,
					    &e),
		  ZCOR_OK);
	CHECK_INT(t_int(out, "logged"), 1);
	json_decref(out);
	CHECK_INT(s.committed, 3);
	CHECK(s.all_changed);
	zc_mem_close(&m);
}

const struct t_case t_cases[] = {
	{"commit_hook_fires_once_per_committed_op", commit_hook_fires_once_per_committed_op},
	{"no_history_op_writes_no_record", no_history_op_writes_no_record},
	{"join_op_commits_and_rolls_back_with_its_caller", join_op_commits_and_rolls_back_with_its_caller},
	{"transcript_writes_go_through_the_runner", transcript_writes_go_through_the_runner},
	{0},
};
