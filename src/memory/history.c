/*
 * history.c — zcor_memory_history: the operation log (Z-HIST). Records are
 * written by op.c; this file only answers queries over them. Inside a
 * conversation only that conversation's own records are visible, so the
 * log is no back door into another chat (Q-SCOPE). Memory layer.
 */
#include "base/alloc.h"
#include "base/json.h"
#include "memory/memory.h"

static json_t *record_from_row(sqlite3_stmt *st)
{
	json_t *r = json_object();
	json_object_set_new(r, "seq", json_integer(sqlite3_column_int64(st, 0)));
	zc_json_set_time(r, "at", sqlite3_column_int64(st, 1));
	zc_json_set_str(r, "operation", (const char *)sqlite3_column_text(st, 2));
	zc_json_set_str(r, "actor", (const char *)sqlite3_column_text(st, 3));
	zc_json_set_str(r, "conversation", (const char *)sqlite3_column_text(st, 4));
	json_object_set_new(r, "arguments", zc_col_json(st, 5, 's'));
	zc_json_set_str(r, "status", (const char *)sqlite3_column_text(st, 6));
	zc_json_set_str(r, "error", (const char *)sqlite3_column_text(st, 7));
	json_object_set_new(r, "before", zc_col_json(st, 8, 's'));
	json_object_set_new(r, "after", zc_col_json(st, 9, 's'));
	json_object_set_new(r, "receipt", zc_col_json(st, 10, 's'));
	return r;
}

#define HISTORY_WHERE                                                                      \
	" FROM history WHERE (?9 IS NULL OR conversation = ?9)"                               \
	" AND (?2 IS NULL OR at >= ?2) AND (?3 IS NULL OR at <= ?3)"                         \
	" AND NOT EXISTS (SELECT 1 FROM json_each(?4) k WHERE instr(search_norm, k.value) = 0)"

static void bind_common(struct zc_op *op, sqlite3_stmt *st, int64_t from, int64_t to, const char *kw)
{
	if (from >= 0)
		sqlite3_bind_int64(st, 2, from);
	if (to >= 0)
		sqlite3_bind_int64(st, 3, to);
	sqlite3_bind_text(st, 4, kw, -1, SQLITE_TRANSIENT);
	zc_bind_scope(op, st);
}

static int memory_history(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	int64_t from, to;
	long long limit, offset, total = 0;
	int rc;
	if ((rc = zc_time_arg(args, "from", &from, e)) || (rc = zc_time_arg(args, "to", &to, e)) ||
	    (rc = zc_page_args(args, &limit, &offset, e)))
		return rc;
	json_t *kwj = json_object_get(args, "keywords");
	char *kw = kwj ? zc_norm_keywords(kwj) : zc_strdup("[]");
	json_t *items = json_array();
	sqlite3_stmt *st = zc_stmt(&op->m->store, "SELECT count(*)" HISTORY_WHERE, e);
	if (!st) {
		rc = e->code;
		goto out;
	}
	bind_common(op, st, from, to, kw);
	if (sqlite3_step(st) == SQLITE_ROW)
		total = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	st = zc_stmt(&op->m->store,
		     "SELECT seq, at, operation, actor, conversation, arguments, status, error, "
		     "before, after, receipt" HISTORY_WHERE " ORDER BY seq DESC LIMIT ?5 OFFSET ?6",
		     e);
	if (!st) {
		rc = e->code;
		goto out;
	}
	bind_common(op, st, from, to, kw);
	sqlite3_bind_int64(st, 5, limit);
	sqlite3_bind_int64(st, 6, offset);
	int step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW)
		json_array_append_new(items, record_from_row(st));
	sqlite3_reset(st);
	if (step != SQLITE_DONE) {
		rc = zc_store_fail(&op->m->store, step, e, "reading history");
		goto out;
	}
	*out = zc_page_result(items, total, offset);
out:
	zc_free(kw);
	json_decref(items);
	return rc;
}

const struct zc_opdef zc_op_memory_history = {"zcor_memory_history", NULL, memory_history, 1};
