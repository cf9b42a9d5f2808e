/*
 * conversations.c — the conversations of the message log: their list,
 * one conversation, and the digest bookkeeping seed 003's digest.json
 * held (transcript.h).
 *
 * Memory layer, beside the log (transcript.c) and under the same header.
 * A conversation is seen only by itself and the host plane (Q-SCOPE).
 * Marking a digest done and setting a title are operations of the runner
 * without a history record; it never writes mirror/ itself (the runner's
 * commit hook does).
 */
#include <stdio.h>
#include <string.h>

#include "base/json.h"
#include "base/timeutil.h"
#include "base/utf8.h"
#include "memory/transcript_int.h"

/* ---- conversations --------------------------------------------------- */

#define CONV_COLS \
	"key, slug, created_at, last_message_at, messages, lines_since_digest, last_digest_at, " \
	"last_digest_date, title"

static json_t *conv_from_row(sqlite3_stmt *st)
{
	json_t *o = json_object();
	zc_json_set_str(o, "key", (const char *)sqlite3_column_text(st, 0));
	zc_json_set_str(o, "slug", (const char *)sqlite3_column_text(st, 1));
	zc_col_time(o, "createdAt", st, 2);
	zc_col_time(o, "lastMessageAt", st, 3);
	json_object_set_new(o, "messages", json_integer(sqlite3_column_int64(st, 4)));
	json_object_set_new(o, "linesSinceDigest", json_integer(sqlite3_column_int64(st, 5)));
	zc_col_time(o, "lastDigestAt", st, 6);
	zc_json_set_str(o, "lastDigestDate", (const char *)sqlite3_column_text(st, 7));
	zc_json_set_str(o, "title", (const char *)sqlite3_column_text(st, 8));
	return o;
}

/* The conversations visible to ctx (?1: its key, NULL for the host). */
int zc_conv_rows(struct zc_store *s, const char *only, long long limit, long long offset,
		     json_t *items, long long *total, struct zc_err *e)
{
	sqlite3_stmt *st = zc_stmt(s, "SELECT count(*) FROM conversations WHERE ?1 IS NULL OR key = ?1", e);
	if (!st)
		return e->code;
	if (only)
		sqlite3_bind_text(st, 1, only, -1, SQLITE_STATIC);
	*total = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_reset(st);
	st = zc_stmt(s,
		     "SELECT " CONV_COLS " FROM conversations WHERE ?1 IS NULL OR key = ?1 "
		     "ORDER BY coalesce(last_message_at, created_at) DESC, key LIMIT ?2 OFFSET ?3",
		     e);
	if (!st)
		return e->code;
	if (only)
		sqlite3_bind_text(st, 1, only, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, limit);
	sqlite3_bind_int64(st, 3, offset);
	int step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW)
		json_array_append_new(items, conv_from_row(st));
	sqlite3_reset(st);
	return step == SQLITE_DONE ? ZCOR_OK : zc_store_fail(s, step, e, "listing conversations");
}

int zc_conversations_list(struct zc_mem *m, const struct zcor_ctx *ctx, json_t **out, struct zc_err *e)
{
	json_t *items = json_array();
	long long total = 0;
	int rc = zc_store_begin(&m->store, 0, e);
	if (!rc)
		rc = zc_conv_rows(&m->store, ctx->conversation, -1, 0, items, &total, e);
	zc_store_rollback(&m->store);
	if (rc) {
		json_decref(items);
		return rc;
	}
	*out = json_pack("{s:o}", "items", items);
	return ZCOR_OK;
}

int zc_conv_load(struct zc_store *s, const char *key, json_t **conv, struct zc_err *e)
{
	*conv = NULL;
	sqlite3_stmt *st = zc_stmt(s, "SELECT " CONV_COLS " FROM conversations WHERE key = ?1", e);
	if (!st)
		return e->code;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	int step = sqlite3_step(st);
	if (step == SQLITE_ROW)
		*conv = conv_from_row(st);
	sqlite3_reset(st);
	if (step != SQLITE_ROW && step != SQLITE_DONE)
		return zc_store_fail(s, step, e, "reading a conversation");
	if (!*conv)
		return zc_fail(e, ZCOR_ENOTFOUND,
			       "no transcript for conversation '%s'; the conversation list shows the ones "
			       "that have one",
			       key);
	return ZCOR_OK;
}

int zc_conversation_get(struct zc_mem *m, const struct zcor_ctx *ctx, const char *key, json_t **out,
			struct zc_err *e)
{
	json_t *conv = NULL;
	int rc = zc_log_check_key(key, "conversation", e);
	if (rc)
		return rc;
	if (ctx->conversation && strcmp(ctx->conversation, key) != 0)
		return zc_fail(e, ZCOR_EFORBIDDEN,
			       "conversation '%s' is not this caller's ('%s'): a conversation sees only "
			       "its own transcript",
			       key, ctx->conversation);
	if ((rc = zc_store_begin(&m->store, 0, e)))
		return rc;
	rc = zc_conv_load(&m->store, key, &conv, e);
	zc_store_rollback(&m->store);
	if (!rc)
		*out = json_pack("{s:o}", "conversation", conv);
	return rc;
}

static int digest_done_op(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	const char *key = op->ud;
	json_t *conv = NULL;
	char date[ZC_DATE_LEN];
	int rc;
	if ((rc = zc_conv_load(&op->m->store, key, &conv, e)))
		return rc;
	json_decref(conv);
	conv = NULL;
	sqlite3_stmt *st = zc_stmt(&op->m->store,
				   "UPDATE conversations SET last_digest_at = ?2, last_digest_date = ?3, "
				   "lines_since_digest = 0 WHERE key = ?1",
				   e);
	if (!st)
		return e->code;
	zc_time_local_date(op->now, date);
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, op->now);
	sqlite3_bind_text(st, 3, date, -1, SQLITE_STATIC);
	int step = sqlite3_step(st);
	sqlite3_reset(st);
	if (step != SQLITE_DONE)
		return zc_store_fail(&op->m->store, step, e, "marking the digest done");
	if ((rc = zc_conv_load(&op->m->store, key, &conv, e)))
		return rc;
	op->digest_changed = 1; /* mirror/: digest.json */
	*out = json_pack("{s:o}", "conversation", conv);
	return ZCOR_OK;
}

/* Digest bookkeeping, not a call of its own (the digest run records its
 * calls): no history record. */
static const struct zc_opdef digest_done_def = {"digest done", NULL, digest_done_op,
						ZC_OP_NO_HISTORY};

int zc_transcript_digest_done(struct zc_mem *m, const char *key, json_t **out, struct zc_err *e)
{
	static const struct zcor_ctx host = {ZCOR_ACTOR_CLI, NULL};
	int rc = zc_log_check_key(key, "conversation", e);
	if (rc)
		return rc;
	return zc_mem_run_ud(m, &host, &digest_done_def, NULL, (void *)key, out, e);
}

int zc_conversation_set_digest(struct zc_mem *m, const char *key, int64_t at, const char *date,
			       struct zc_err *e)
{
	int rc = zc_log_check_key(key, "conversation", e);
	if (rc || (rc = zc_log_conv_add(m, key, 0, 0, 0, e)))
		return rc;
	sqlite3_stmt *st = zc_stmt(&m->store,
				   "UPDATE conversations SET last_digest_at = ?2, last_digest_date = ?3 "
				   "WHERE key = ?1",
				   e);
	if (!st)
		return e->code;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
	if (at >= 0)
		sqlite3_bind_int64(st, 2, at);
	if (date)
		sqlite3_bind_text(st, 3, date, -1, SQLITE_TRANSIENT);
	int step = sqlite3_step(st);
	sqlite3_reset(st);
	return step == SQLITE_DONE ? ZCOR_OK : zc_store_fail(&m->store, step, e, "setting digest progress");
}


/* ---- titles ------------------------------------------------------------ */

/* Whether s holds a control character: C0, DEL or C1 (U+0080..U+009F,
 * UTF-8 C2 80..C2 9F); s is valid UTF-8. */
static int has_control(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f || (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f))
			return 1;
	return 0;
}

static int check_title(const char *title, struct zc_err *e)
{
	size_t n = strlen(title);
	if (!zc_utf8_valid(title, n))
		return zc_fail(e, ZCOR_EINVAL, "title '%s' is not valid UTF-8; send the name as UTF-8 text",
			       ZC_Q(title, 40));
	if (has_control(title))
		return zc_fail(e, ZCOR_EINVAL,
			       "title '%s' holds a control character (a line break, a tab…); give one "
			       "line of text",
			       ZC_Q(title, 40));
	if (zc_utf8_len(title) > ZC_CONV_TITLE_MAX)
		return zc_fail(e, ZCOR_EINVAL, "title '%s…' has %zu characters; at most %d are kept",
			       ZC_Q(title, 40), zc_utf8_len(title), ZC_CONV_TITLE_MAX);
	return ZCOR_OK;
}

static int title_op(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	const char *const *kt = op->ud; /* {key, title or NULL} */
	int rc = zc_log_conv_add(op->m, kt[0], 0, 0, 0, e);
	if (rc)
		return rc;
	sqlite3_stmt *st = zc_stmt(&op->m->store, "UPDATE conversations SET title = ?2 WHERE key = ?1", e);
	if (!st)
		return e->code;
	sqlite3_bind_text(st, 1, kt[0], -1, SQLITE_STATIC);
	if (kt[1])
		sqlite3_bind_text(st, 2, kt[1], -1, SQLITE_STATIC);
	int step = sqlite3_step(st);
	sqlite3_reset(st);
	if (step != SQLITE_DONE)
		return zc_store_fail(&op->m->store, step, e, "setting the conversation's title");
	*out = json_object();
	return ZCOR_OK;
}

/* A world's bookkeeping (a group's name), not a call: no history record. */
static const struct zc_opdef title_def = {"conversation title", NULL, title_op, ZC_OP_NO_HISTORY};

int zc_conversation_set_title(struct zc_mem *m, const char *key, const char *title,
			      struct zc_err *e)
{
	static const struct zcor_ctx host = {ZCOR_ACTOR_CLI, NULL};
	int rc = zc_log_check_key(key, "conversation", e);
	if (rc)
		return rc;
	if (title && !*title)
		title = NULL;
	if (title && (rc = check_title(title, e)))
		return rc;
	const char *kt[2] = {key, title};
	json_t *none = NULL;
	rc = zc_mem_run_ud(m, &host, &title_def, NULL, (void *)kt, &none, e);
	json_decref(none);
	return rc;
}
