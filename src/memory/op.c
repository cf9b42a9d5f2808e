/*
 * op.c — the operation runner: running an operation as one transaction
 * with its history record, the queue of read records, the commit hooks,
 * and the scope rule (Q-SCOPE).
 *
 * Memory layer, its floor: this file is where "every call is recorded"
 * (the operator's reads in the page excepted: unrecorded)
 * and "a change and its history are one transaction" are enforced, and
 * every write of memory/ goes through it (operations never begin or
 * commit write transactions themselves; ZC_OP_NO_HISTORY / ZC_OP_JOIN
 * for writes that are not calls). It must never include or call a module
 * above it (views, mirror/, transcripts, state files): what happens
 * around a commit subscribes with zc_mem_hook, as sqlite3_commit_hook.
 */
#include <assert.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/fs.h"
#include "base/json.h"
#include "base/timeutil.h"
#include "base/utf8.h"
#include "memory/memory.h"

/* ---- full-text rows of new nodes (derived data) ------------------- */

/*
 * The full-text rows of new nodes (schema 10; recall_fts and its counts:
 * schema 12) and their dictionary terms (issue 19, schema 19): nodes_fts
 * holds every node up to meta.fts_upto, terms every node up to
 * meta.terms_upto (schema 22; the triggers keep those in step as they
 * change); the ones above them, up to the newest seq (max(seq), the end
 * of nodes; meta.nodes_top until schema 22), are written here, inside the
 * caller's transaction. Whoever reads nodes_fts or terms calls
 * zc_node_fts_catch_up first (zc_mem_fts_catch_up: zcor_recall, queries
 * and searches, the doctor), so a node is found the moment it is written;
 * in between, a writer writes them when ZC_FTS_BATCH new nodes wait for
 * their full-text rows and ZC_TERMS_BATCH for their terms
 * (zc_node_catch_up_due): one FTS5 segment for many nodes, and a batch's
 * titles, which land at random pages of terms, sharing pages.
 */
static int newest_seq(struct zc_store *s, long long *top, struct zc_err *e)
{
	sqlite3_stmt *mx = zc_stmt(s, "SELECT coalesce(max(seq), 0) FROM nodes", e);
	if (!mx)
		return e->code;
	int rc = sqlite3_step(mx);
	*top = rc == SQLITE_ROW ? sqlite3_column_int64(mx, 0) : 0;
	sqlite3_reset(mx);
	return rc == SQLITE_ROW ? ZCOR_OK : zc_store_fail(s, rc, e, "reading the newest memory");
}

/* nodes_fts and recall's lexical index, for the nodes above fts_upto */
static int fts_rows_catch_up(struct zc_store *s, long long top, struct zc_err *e)
{
	long long upto = 0;
	int rc;
	if ((rc = zc_meta_get_int(s, "fts_upto", &upto, e)))
		return rc;
	if (top <= upto)
		return ZCOR_OK;
	sqlite3_stmt *st = zc_stmt(s,
				   "INSERT INTO nodes_fts(rowid, title, keywords, content, recall_tag) "
				   "SELECT seq, title, keywords, content, recall_tag FROM nodes WHERE seq > ?1 "
				   "ORDER BY seq",
				   e);
	if (!st)
		return e->code;
	sqlite3_bind_int64(st, 1, upto);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return zc_store_fail(s, rc, e, "writing the full-text index");
	/* recall's lexical index (schema 12) waits for the same batch */
	if ((rc = zc_store_recall_catch_up(s, upto, e)))
		return rc;
	/* (recall's token lookups are kept per scope by recall_gen: schema 14) */
	/* and some merging: FTS5's automerge (8 a level since schema 23)
	 * does less of it for one batch than for its nodes one by one, and
	 * every segment left is one more page a fresh recall reads per token
	 * (test_recall counts them); this bounded merge folds a level once
	 * usermerge (4) segments wait there */
	if ((rc = zc_exec(s, "INSERT INTO nodes_fts(nodes_fts, rank) VALUES('merge', 16)", e)) ||
	    (rc = zc_exec(s, "INSERT INTO recall_fts(recall_fts, rank) VALUES('merge', 16)", e)))
		return rc;
	return zc_meta_set_int(s, "fts_upto", top, e);
}

/* the dictionary terms of the nodes above terms_upto (schema 22) */
static int terms_catch_up(struct zc_store *s, long long top, struct zc_err *e)
{
	long long upto = 0;
	int rc;
	if ((rc = zc_meta_get_int(s, "terms_upto", &upto, e)))
		return rc;
	if (top <= upto)
		return ZCOR_OK;
	if ((rc = zc_store_node_terms(s, upto, top, e)))
		return rc;
	return zc_meta_set_int(s, "terms_upto", top, e);
}

int zc_node_fts_catch_up(struct zc_store *s, struct zc_err *e)
{
	long long top = 0;
	int rc;
	if ((rc = newest_seq(s, &top, e)) || (rc = fts_rows_catch_up(s, top, e)))
		return rc;
	return terms_catch_up(s, top, e);
}

int zc_node_catch_up_due(struct zc_store *s, long long seq, long bulk, struct zc_err *e)
{
	long long upto = 0, tupto = 0;
	int rc;
	if ((rc = zc_meta_get_int(s, "fts_upto", &upto, e)) ||
	    (rc = zc_meta_get_int(s, "terms_upto", &tupto, e)))
		return rc;
	long fts_batch = bulk > 0 ? bulk : ZC_FTS_BATCH;
	long terms_batch = bulk > ZC_TERMS_BATCH ? bulk : ZC_TERMS_BATCH;
	if (seq - upto >= fts_batch && (rc = fts_rows_catch_up(s, seq, e)))
		return rc;
	if (seq - tupto >= terms_batch && (rc = terms_catch_up(s, seq, e)))
		return rc;
	return ZCOR_OK;
}

void zc_mem_set_fts_batch(struct zc_mem *m, long n) { m->fts_batch = n > 0 ? n : 0; }

int zc_node_fts_pending(struct zc_store *s)
{
	sqlite3_stmt *st = zc_stmt(s,
				   "SELECT (SELECT coalesce(max(seq), 0) FROM nodes) > min(CAST(value AS INTEGER)) "
				   "FROM meta WHERE key IN ('fts_upto', 'terms_upto')",
				   NULL);
	int pending = st && sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0);
	if (st)
		sqlite3_reset(st);
	return pending;
}

/* ---- scope ---------------------------------------------------------- */

int zc_scope_is_private(const struct zcor_ctx *ctx)
{
	return ctx->conversation && strncmp(ctx->conversation, "private:", 8) == 0;
}

int zc_scope_visible(const struct zcor_ctx *ctx, const char *scope)
{
	return !ctx->conversation || strcmp(scope, "global") == 0 ||
	       strcmp(scope, ctx->conversation) == 0;
}

int zc_scope_writable(const struct zcor_ctx *ctx, const char *scope)
{
	if (!ctx->conversation || strcmp(scope, ctx->conversation) == 0)
		return 1;
	return strcmp(scope, "global") == 0 && !zc_scope_is_private(ctx);
}

int zc_conv_valid(const char *key)
{
	static const char *const kinds[] = {"group:", "private:", "console:"};
	const char *rest = NULL;
	for (size_t i = 0; i < 3 && !rest; i++)
		if (strncmp(key, kinds[i], strlen(kinds[i])) == 0)
			rest = key + strlen(kinds[i]);
	int ok = rest && *rest && strlen(rest) <= 64;
	for (const char *p = rest; ok && *p; p++)
		ok = isalnum((unsigned char)*p) || *p == '_' || *p == '-' || *p == '.';
	return ok;
}

int zc_conv_check(const char *key, struct zc_err *e)
{
	if (zc_conv_valid(key))
		return ZCOR_OK;
	return zc_fail(e, ZCOR_EINVAL,
		       "conversation '%s' is not a conversation key; use group:<id>, "
		       "private:<qq> or console:<name> (letters, digits, _ - . up to 64)",
		       ZC_Q(key, 80));
}

void zc_conv_slug(const char *key, char *out, size_t cap)
{
	snprintf(out, cap, "%s", key);
	char *c = strchr(out, ':');
	if (c)
		*c = '-';
}

const char *zc_scope_of_new(const struct zcor_ctx *ctx)
{
	return ctx->conversation ? ctx->conversation : "global";
}

/*
 * Links between records and Q-SCOPE. Whoever may see a record must see
 * what it links to (else a conversation is shown the id of a record it may
 * not open), so a link points into the record's own scope or to a global
 * record, never into another conversation. Supersede and merge stay within
 * one scope (zc_scope_may_link): a conversation must not hide a global
 * memory behind one of its own, and a global record must not stand for a
 * conversation's. A parent may also be global (zc_scope_may_nest: seed
 * 000's tree, a group's 近况 under a shared person node), except for a
 * private conversation: its memories hanging under a shared one would keep
 * the other conversations from deleting that one, which tells them that
 * something private is there. The host plane is held to the same rules.
 */
int zc_scope_may_link(const char *scope, const char *target)
{
	return strcmp(scope, target) == 0;
}

int zc_scope_may_nest(const char *child, const char *parent)
{
	return strcmp(child, parent) == 0 ||
	       (strcmp(parent, "global") == 0 && strncmp(child, "private:", 8) != 0);
}

const char *zc_scope_words(const struct zcor_ctx *ctx, const char *scope, char *buf, size_t cap)
{
	if (strcmp(scope, "global") == 0)
		return "shared with every conversation";
	if (ctx->conversation && strcmp(scope, ctx->conversation) == 0)
		return "of this conversation";
	snprintf(buf, cap, "of conversation '%s'", scope);
	return buf;
}

/* ---- the directory -------------------------------------------------- */

/* A history record as the text of its columns, ready for the INSERT. */
struct hist_row {
	int64_t at;
	const char *actor, *status; /* static strings */
	char *operation, *conversation, *arguments, *error, *before, *after, *receipt;
};

/* What a handle defers (memory.h, zc_mem_flush). */
struct zc_reads {
	struct hist_row rows[ZC_READS_MAX];
	int n;
	double first_ms; /* zc_time_mono_ms of the oldest */
	void (*queued)(void *ud);
	void *ud;
};

static void clear_queued(struct zc_mem *m);

int64_t zc_mem_now(struct zc_mem *m) { return m->now_ms(m->clock_ud); }

/* ---- hooks ---------------------------------------------------------- */

struct zc_hooks {
	struct {
		zc_hook_fn fn;
		void *ud;
	} at[3][ZC_HOOKS_MAX];
	int n[3];
};

int zc_mem_hook(struct zc_mem *m, enum zc_hook_when when, zc_hook_fn fn, void *ud,
		struct zc_err *e)
{
	struct zc_hooks *h = m->hooks;
	if (!h || h->n[when] >= ZC_HOOKS_MAX)
		return zc_fail(e, ZCOR_EINTERNAL, "too many hooks of one phase (%d)", ZC_HOOKS_MAX);
	h->at[when][h->n[when]].fn = fn;
	h->at[when][h->n[when]].ud = ud;
	h->n[when]++;
	return ZCOR_OK;
}

/* Calls the phase's hooks in order; the first failure stops the others
 * (ZC_HOOK_COMMITTED: every one runs, their failures are theirs). */
static int fire(struct zc_mem *m, enum zc_hook_when when, struct zc_op *op, struct zc_err *e)
{
	struct zc_hooks *h = m->hooks;
	for (int i = 0; h && i < h->n[when]; i++) {
		struct zc_err ignored = {0};
		int rc = h->at[when][i].fn(op, h->at[when][i].ud,
					   when == ZC_HOOK_COMMITTED ? &ignored : e);
		if (rc && when != ZC_HOOK_COMMITTED)
			return rc;
	}
	return ZCOR_OK;
}

void zc_runner_init(struct zc_mem *m)
{
	m->reads = zc_calloc(1, sizeof(*m->reads));
	m->hooks = zc_calloc(1, sizeof(*m->hooks));
}

void zc_runner_release(struct zc_mem *m)
{
	if (m->reads) {
		struct zc_err ignored = {0};
		zc_mem_fts_catch_up(m, &ignored); /* a failure loses them, as a crash would */
		clear_queued(m);
		zc_free(m->reads);
		m->reads = NULL;
	}
	zc_free(m->hooks);
	m->hooks = NULL;
}

/* ---- history -------------------------------------------------------- */

static const char *actor_name(enum zcor_actor a)
{
	switch (a) {
	case ZCOR_ACTOR_UI:
		return "ui";
	case ZCOR_ACTOR_CLI:
		return "cli";
	case ZCOR_ACTOR_DIGEST:
		return "digest";
	default:
		return "model";
	}
}

void zc_op_before(struct zc_op *op, json_t *snap)
{
	if (!op->before)
		op->before = json_array();
	json_array_append_new(op->before, snap);
}

void zc_op_after(struct zc_op *op, json_t *snap)
{
	if (!op->after)
		op->after = json_array();
	json_array_append_new(op->after, snap);
}

static void row_release(struct hist_row *r)
{
	zc_free(r->operation);
	zc_free(r->conversation);
	zc_free(r->arguments);
	zc_free(r->error);
	zc_free(r->before);
	zc_free(r->after);
	zc_free(r->receipt);
	memset(r, 0, sizeof(*r));
}

static void row_make(struct hist_row *r, const struct zcor_ctx *ctx, const char *name, int64_t at,
		     const json_t *args, const char *raw, const struct zc_err *failure,
		     const json_t *before, const json_t *after, const json_t *receipt)
{
	memset(r, 0, sizeof(*r));
	r->at = at;
	r->operation = zc_strdup(name);
	r->actor = actor_name(ctx->actor);
	r->conversation = ctx->conversation ? zc_strdup(ctx->conversation) : NULL;
	if (args) {
		r->arguments = zc_json_dump(args);
	} else {
		json_t *t = json_string(raw ? raw : "");
		r->arguments = zc_json_dump(t);
		json_decref(t);
	}
	r->status = failure ? "error" : "ok";
	if (failure) {
		struct zc_buf msg = ZC_BUF_INIT;
		zc_buf_addf(&msg, "%s: %s", zcor_code_name(failure->code), failure->msg);
		r->error = zc_buf_detach(&msg);
	}
	zc_hist_pack(before, after, args, at, &r->before, &r->after);
	r->receipt = receipt ? zc_json_dump(receipt) : NULL;
}

static void bind_text_or_null(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, i);
}

/* The keyword search normalises a record's stored text when it is asked
 * (history.c, zc_history_match): search_norm stays empty, so that no
 * record is stored twice. */
static int row_insert(struct zc_mem *m, const struct hist_row *r, struct zc_err *e)
{
	sqlite3_stmt *st = zc_stmt(&m->store,
				   "INSERT INTO history(at, operation, actor, conversation, arguments, "
				   "status, error, before, after, receipt, search_norm) "
				   "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, '')",
				   e);
	if (!st)
		return e->code;
	sqlite3_bind_int64(st, 1, r->at);
	bind_text_or_null(st, 2, r->operation);
	bind_text_or_null(st, 3, r->actor);
	bind_text_or_null(st, 4, r->conversation);
	bind_text_or_null(st, 5, r->arguments);
	bind_text_or_null(st, 6, r->status);
	bind_text_or_null(st, 7, r->error);
	bind_text_or_null(st, 8, r->before);
	bind_text_or_null(st, 9, r->after);
	bind_text_or_null(st, 10, r->receipt);
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? ZCOR_OK : zc_store_fail(&m->store, rc, e, "recording history");
}

/* Inside the caller's transaction: the queued read records, oldest
 * first. They leave the queue once that transaction commits. */
static int insert_queued(struct zc_mem *m, struct zc_err *e)
{
	struct zc_reads *q = m->reads;
	for (int i = 0; i < q->n; i++) {
		int rc = row_insert(m, &q->rows[i], e);
		if (rc)
			return rc;
	}
	return ZCOR_OK;
}

static void clear_queued(struct zc_mem *m)
{
	struct zc_reads *q = m->reads;
	for (int i = 0; i < q->n; i++)
		row_release(&q->rows[i]);
	q->n = 0;
}

/* After a failed write of the queue: only another process holding the
 * lock is worth waiting for. A record that cannot be written (a full
 * disk, an I/O error) is dropped, as a failed call's record always was;
 * a change never is (its own transaction fails instead). */
static void after_queue_failure(struct zc_mem *m, int rc)
{
	if (rc != ZCOR_EBUSY)
		clear_queued(m);
}

/* One transaction without an fsync (read records need none, zc_mem_run;
 * full-text rows are derived data): the queued read records and, with
 * fts, the full-text rows of new nodes. */
static int flush_deferred(struct zc_mem *m, int fts, struct zc_err *e)
{
	struct zc_reads *q = m->reads;
	if (!q || !m->store.db || m->store.in_tx ||
	    (q->n == 0 && !(fts && zc_node_fts_pending(&m->store))))
		return ZCOR_OK;
	/* set outside the transaction, as SQLite requires */
	zc_store_sync(&m->store, 0);
	int rc = zc_store_begin(&m->store, 1, e);
	if (!rc && fts && (rc = zc_node_fts_catch_up(&m->store, e)))
		zc_store_rollback(&m->store);
	else if (!rc && (rc = insert_queued(m, e)))
		zc_store_rollback(&m->store);
	else if (!rc)
		rc = zc_store_commit(&m->store, e);
	zc_store_sync(&m->store, 1);
	if (rc)
		after_queue_failure(m, rc);
	else
		clear_queued(m);
	return rc;
}

int zc_mem_flush(struct zc_mem *m, struct zc_err *e) { return flush_deferred(m, 0, e); }

int zc_mem_flush_try(struct zc_mem *m, struct zc_err *e)
{
	zc_store_busy_wait(&m->store, 0);
	int rc = flush_deferred(m, 0, e);
	zc_store_busy_wait(&m->store, 1);
	return rc;
}

int zc_mem_fts_catch_up(struct zc_mem *m, struct zc_err *e) { return flush_deferred(m, 1, e); }

long zc_mem_flush_due(struct zc_mem *m)
{
	struct zc_reads *q = m->reads;
	if (!q || q->n == 0)
		return -1;
	double left = q->first_ms + ZC_READS_WINDOW_MS - zc_time_mono_ms();
	return left > 0 ? (long)left + 1 : 0;
}

void zc_mem_on_deferred(struct zc_mem *m, void (*fn)(void *ud), void *ud)
{
	m->reads->queued = fn;
	m->reads->ud = ud;
}

/* Queues r (taken over). Fails only when the queue is full and cannot be
 * written: then the call must not claim it was recorded. */
static int queue_row(struct zc_mem *m, struct hist_row *r, struct zc_err *e)
{
	struct zc_reads *q = m->reads;
	int rc;
	if (q->n >= ZC_READS_MAX && (rc = zc_mem_flush(m, e))) {
		row_release(r);
		return rc;
	}
	if (q->n >= ZC_READS_MAX) { /* inside a transaction: not ours to commit */
		row_release(r);
		return zc_fail(e, ZCOR_EINTERNAL, "recording history: the read records are not written");
	}
	q->rows[q->n++] = *r;
	memset(r, 0, sizeof(*r));
	if (q->n == 1) {
		q->first_ms = zc_time_mono_ms();
		if (q->queued)
			q->queued(q->ud);
	}
	if (q->n == ZC_READS_MAX) {
		struct zc_err ignored = {0};
		zc_mem_flush(m, &ignored); /* if it fails they wait for the next try */
	}
	return ZCOR_OK;
}

void zc_mem_record_failure(struct zc_mem *m, const struct zcor_ctx *ctx, const char *name,
			   json_t *args, const char *raw, const struct zc_err *failure)
{
	/* a failed call changed nothing: its record is a read's (zc_mem_run) */
	struct hist_row r;
	struct zc_err e2 = {0};
	row_make(&r, ctx, name, zc_mem_now(m), args, raw, failure, NULL, NULL, NULL);
	queue_row(m, &r, &e2);
}

/* ---- running an operation ------------------------------------------- */

void zc_op_file_created(struct zc_op *op, const char *path)
{
	if (!op->undo_unlink)
		op->undo_unlink = json_array();
	json_array_append_new(op->undo_unlink, json_string(path));
}

void zc_op_file_obsolete(struct zc_op *op, const char *path)
{
	if (!op->commit_unlink)
		op->commit_unlink = json_array();
	json_array_append_new(op->commit_unlink, json_string(path));
}

static void unlink_all(json_t *paths)
{
	size_t i;
	json_t *p;
	json_array_foreach(paths, i, p) unlink(json_string_value(p));
}

static void op_release(struct zc_op *op)
{
	json_decref(op->undo_unlink);
	json_decref(op->commit_unlink);
	json_decref(op->views_changed);
	json_decref(op->before);
	json_decref(op->after);
	json_decref(op->receipt);
	json_decref(op->state);
	zc_free(op->log_conv);
	json_decref(op->log_more);
	zc_free(op->text);
}

/*
 * The result of a body that answered in text (op->text, then *result is
 * NULL): handed on as text when the caller takes text, else parsed into
 * the tree the caller takes. Our own compact JSON: it parses.
 */
static void take_text(struct zc_op *op, json_t **result, char **text)
{
	if (!op->text)
		return;
	assert(!*result && !op->receipt);
	if (text) {
		*text = op->text;
	} else {
		*result = json_loads(op->text, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
		assert(*result);
		zc_free(op->text);
	}
	op->text = NULL;
}

/* Appends the items of *from to *to (either may be NULL). */
static void extend(json_t **to, json_t *from)
{
	if (!json_array_size(from))
		return;
	if (!*to)
		*to = json_array();
	json_array_extend(*to, from);
}

/* A joined operation's changes become its caller's: its files are
 * removed or kept with the caller's transaction, and the caller's
 * commit hooks are told what it changed. */
static void hand_on(struct zc_op *outer, struct zc_op *op)
{
	extend(&outer->undo_unlink, op->undo_unlink);
	extend(&outer->commit_unlink, op->commit_unlink);
	extend(&outer->views_changed, op->views_changed);
	outer->side_effect |= op->side_effect;
	outer->digest_changed |= op->digest_changed;
	outer->all_changed |= op->all_changed;
	extend(&outer->log_more, op->log_more);
	if (!op->log_conv)
		return;
	if (!outer->log_conv) {
		outer->log_conv = op->log_conv;
		op->log_conv = NULL;
		outer->log_from = op->log_from;
		outer->log_to = op->log_to;
	} else if (strcmp(outer->log_conv, op->log_conv) == 0) {
		outer->log_from = op->log_from < outer->log_from ? op->log_from : outer->log_from;
		outer->log_to = op->log_to > outer->log_to ? op->log_to : outer->log_to;
	} else { /* another conversation's log (zc_transcript_log_many) */
		if (!outer->log_more)
			outer->log_more = json_array();
		json_array_append_new(outer->log_more,
				      json_pack("[s, I, I]", op->log_conv, (json_int_t)op->log_from,
						(json_int_t)op->log_to));
	}
}

/*
 * ZC_OP_JOIN inside an open transaction: the body runs in a savepoint of
 * it, so that its failure undoes its own part and nothing else; once the
 * body succeeded, it commits or rolls back with the caller's transaction.
 */
static int run_joined(struct zc_mem *m, struct zc_op *op, json_t *args, json_t **out,
		      struct zc_err *e)
{
	struct zc_op *outer = m->cur_op;
	json_t *result = NULL;
	int rc = zc_exec(&m->store, "SAVEPOINT zc_join", e);
	if (rc) {
		op_release(op);
		return rc;
	}
	m->cur_op = op;
	rc = op->def->body(op, args, &result, e);
	m->cur_op = outer;
	if (rc) {
		struct zc_err ignored = {0};
		zc_exec(&m->store, "ROLLBACK TO zc_join", &ignored);
		zc_exec(&m->store, "RELEASE zc_join", &ignored);
		json_decref(result);
		unlink_all(op->undo_unlink);
		op_release(op);
		return rc;
	}
	if ((rc = zc_exec(&m->store, "RELEASE zc_join", e))) {
		json_decref(result);
		unlink_all(op->undo_unlink);
		op_release(op);
		return rc;
	}
	if (outer)
		hand_on(outer, op);
	take_text(op, &result, NULL);
	*out = result;
	op_release(op);
	return ZCOR_OK;
}

static int run(struct zc_mem *m, const struct zcor_ctx *ctx, const struct zc_opdef *def,
	       json_t *args, void *ud, json_t **out, char **text, struct zc_err *e);

/*
 * A read (ZC_OP_READ) changes nothing but the history, so its record
 * need not be durable when the call returns: WAL keeps a commit without
 * an fsync safe from a crash of zcor, a power cut can lose only the last
 * such records — never a change to memory, whose commits keep
 * synchronous=FULL. So a read runs in a read transaction (it does not
 * queue on SQLite's one writer) and its record joins the queue of read
 * records, written in groups (memory.h, ZC_READS_*): a crash or kill -9
 * loses at most the queue, the last few milliseconds of read records.
 * Every read would otherwise wait for the disk (docs/PERFORMANCE.md).
 */
int zc_mem_run(struct zc_mem *m, const struct zcor_ctx *ctx, const struct zc_opdef *def,
	       json_t *args, json_t **out, struct zc_err *e)
{
	return zc_mem_run_ud(m, ctx, def, args, NULL, out, e);
}

int zc_mem_run_ud(struct zc_mem *m, const struct zcor_ctx *ctx, const struct zc_opdef *def,
		  json_t *args, void *ud, json_t **out, struct zc_err *e)
{
	return zc_mem_run_text(m, ctx, def, args, ud, out, NULL, e);
}

int zc_mem_run_text(struct zc_mem *m, const struct zcor_ctx *ctx, const struct zc_opdef *def,
		    json_t *args, void *ud, json_t **out, char **text, struct zc_err *e)
{
	if (text)
		*text = NULL;
	struct zc_err ignored = {0};
	struct zc_op *outer = m->cur_op;
	if (!(def->flags & ZC_OP_NO_HISTORY) && zc_mem_flush_due(m) == 0)
		zc_mem_flush_try(m, &ignored); /* on failure they wait for the next try */
	if (def->flags & ZC_OP_FTS) /* a failure leaves the new rows unfound, not the call */
		zc_mem_fts_catch_up(m, &ignored);
	/* a history query writes the queue with its own record: no fsync;
	 * set outside a transaction, as SQLite requires */
	int nosync = (def->flags & (ZC_OP_HISTORY | ZC_OP_NOSYNC)) != 0 && !m->store.in_tx;
	if (nosync)
		zc_store_sync(&m->store, 0);
	int rc = run(m, ctx, def, args, ud, out, text, e);
	if (nosync)
		zc_store_sync(&m->store, 1);
	m->cur_op = outer;
	return rc;
}

/*
 * The operator browsing in the page (actor ui) is not a tool call (issue
 * 18): its reads — a ZC_OP_READ operation, or one whose body only read —
 * leave no history record, failed ones neither. Its changes are recorded,
 * refused ones too, and so is every call of the model, the digest and the
 * CLI, reads included (seed 000: Z-HIST).
 */
int zc_mem_unrecorded(const struct zcor_ctx *ctx, int flags)
{
	return ctx->actor == ZCOR_ACTOR_UI && (flags & ZC_OP_READ);
}

static int unrecorded(const struct zc_op *op)
{
	return zc_mem_unrecorded(op->ctx, op->def->flags | (op->only_read ? ZC_OP_READ : 0));
}

static int run(struct zc_mem *m, const struct zcor_ctx *ctx, const struct zc_opdef *def,
	       json_t *args, void *ud, json_t **out, char **text, struct zc_err *e)
{
	struct zc_op op = {.m = m, .ctx = ctx, .name = def->name, .now = zc_mem_now(m), .ud = ud,
			   .def = def};
	json_t *result = NULL;
	struct hist_row row = {0};
	int call = !(def->flags & ZC_OP_NO_HISTORY);   /* a call (the migration runs first) */
	int recorded = call && !unrecorded(&op);       /* it has a history record */
	int queued = (def->flags & ZC_OP_READ) && !(def->flags & ZC_OP_HISTORY); /* record joins the queue */
	int queue_in = 0;              /* the queue is in this transaction already */
	int rc;
	*out = NULL;

	if ((def->flags & ZC_OP_JOIN) && m->store.in_tx)
		return run_joined(m, &op, args, out, e);
	m->cur_op = &op;
	if (call && !m->first_op_done) {
		if ((rc = fire(m, ZC_HOOK_FIRST_OP, &op, e)))
			goto failed;
		m->first_op_done = 1;
	}
	if (def->pre && call && zc_mem_flush_due(m) >= 0) {
		/* pre may wait seconds (an LLM): the queue must not wait with it */
		struct zc_err ignored = {0};
		zc_mem_flush_try(m, &ignored);
	}
	if (def->pre && (rc = def->pre(&op, args, &result, e)))
		goto failed;
	if (result) /* pre answered alone (nothing for the body to do) */
		goto record;
	if ((rc = zc_store_begin(&m->store, !queued, e)))
		goto failed;
	/* a history query sees every call before it */
	if ((def->flags & ZC_OP_HISTORY) && (rc = insert_queued(m, e))) {
		zc_store_rollback(&m->store);
		after_queue_failure(m, rc);
		goto failed;
	}
	queue_in = (def->flags & ZC_OP_HISTORY) != 0;
	op.now = zc_mem_now(m);
	if ((rc = def->body(&op, args, &result, e)) ||
	    (!(def->flags & ZC_OP_READ) && (rc = fire(m, ZC_HOOK_PRECOMMIT, &op, e)))) {
		zc_store_rollback(&m->store);
		unlink_all(op.undo_unlink);
		goto failed;
	}
	if (queued) {
		zc_store_rollback(&m->store); /* a read transaction: nothing to keep */
		goto record;
	}
	recorded = recorded && !unrecorded(&op); /* the body may have only read */
	if (!recorded)
		goto commit;
	goto insert;
record:
	if (queued && recorded) {
		row_make(&row, ctx, def->name, op.now, args, NULL, NULL, op.before, op.after, op.receipt);
		if ((rc = queue_row(m, &row, e)))
			goto uncertain_or_failed;
		goto done;
	}
	if (!recorded)
		goto done; /* nothing to write */
	if ((rc = zc_store_begin(&m->store, 1, e)))
		goto uncertain_or_failed;
insert:
	/* The queued read records first, so that seq keeps the order of the
	 * calls; the history record goes in after the result exists, so a
	 * history query never sees its own call. */
	row_make(&row, ctx, def->name, op.now, args, NULL, NULL, op.before, op.after, op.receipt);
	if (queue_in || !(rc = insert_queued(m, e)))
		rc = row_insert(m, &row, e);
	row_release(&row);
	if (rc) {
		zc_store_rollback(&m->store);
		after_queue_failure(m, rc);
		goto uncertain_or_failed;
	}
commit:
	if ((rc = zc_store_commit(&m->store, e))) {
		if (recorded || queue_in)
			after_queue_failure(m, rc);
		goto uncertain_or_failed;
	}
	if (recorded || queue_in)
		clear_queued(m);
	unlink_all(op.commit_unlink);
	m->cur_op = NULL; /* a hook may run operations of its own */
	fire(m, ZC_HOOK_COMMITTED, &op, e);
	goto answer;
done:
	unlink_all(op.commit_unlink);
answer:
	if (op.receipt && json_is_object(result))
		json_object_set(result, "receipt", op.receipt);
	take_text(&op, &result, text);
	*out = result;
	op_release(&op);
	return ZCOR_OK;

uncertain_or_failed:
	json_decref(result);
	result = NULL;
	unlink_all(op.undo_unlink);
	if (!recorded) /* the caller words what was not done */
		goto failed;
	if (op.side_effect) {
		/* A file outside memory.db (a backup, synonyms.json) was already
		 * written: the caller must not assume nothing happened. */
		zc_err_prefix(e, "the operation may have taken effect, but its history could not be "
				 "recorded");
		rc = e->code = ZCOR_EUNCERTAIN;
		op_release(&op);
		return rc;
	}
	zc_err_prefix(e, "nothing was changed");
failed:
	json_decref(result);
	recorded = recorded && !unrecorded(&op);
	op_release(&op);
	if (recorded && rc != ZCOR_EBUSY && rc != ZCOR_EFULL && rc != ZCOR_EREADONLY &&
	    rc != ZCOR_EIO)
		zc_mem_record_failure(m, ctx, def->name, args, NULL, e);
	return rc;
}
