/*
 * history.c — zcor_memory_history: the operation log (Z-HIST). Records
 * are written by op.c, their snapshots stored compactly (histform.c);
 * this file gives them back in full to every reader and answers queries
 * over them. Inside a conversation only that conversation's own records
 * are visible, so the log is no back door into another chat (Q-SCOPE).
 * Memory layer, an operation over the runner: it never writes a record.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/json.h"
#include "base/timeutil.h"
#include "memory/memory.h"
#include "text/norm.h"

static json_t *record_from_row(sqlite3_stmt *st)
{
	json_t *r = json_object();
	int64_t at = sqlite3_column_int64(st, 1);
	char iso[ZC_TIME_LEN];
	zc_time_format(at, iso);
	json_object_set_new(r, "seq", json_integer(sqlite3_column_int64(st, 0)));
	zc_json_set_time(r, "at", at);
	zc_json_set_str(r, "operation", (const char *)sqlite3_column_text(st, 2));
	zc_json_set_str(r, "actor", (const char *)sqlite3_column_text(st, 3));
	zc_json_set_str(r, "conversation", (const char *)sqlite3_column_text(st, 4));
	json_t *args = zc_col_json(st, 5, 's');
	json_object_set_new(r, "arguments", args);
	zc_json_set_str(r, "status", (const char *)sqlite3_column_text(st, 6));
	zc_json_set_str(r, "error", (const char *)sqlite3_column_text(st, 7));
	json_t *before = zc_col_json(st, 8, 's');
	json_t *after = zc_hist_expand(zc_col_json(st, 9, 's'), args, iso, NULL);
	json_object_set_new(r, "before", zc_hist_expand(before, args, iso, after));
	json_object_set_new(r, "after", after);
	json_object_set_new(r, "receipt", zc_col_json(st, 10, 's'));
	return r;
}

/* ---- keywords over the whole record ---------------------------------
 *
 * zc_history_match(keywords, search_norm, operation, actor, conversation,
 * arguments, status, error, before, after, receipt): 1 when every
 * keyword (a JSON array of normalised strings) is in the record's text.
 * Records before schema 10 carry that text normalised (search_norm);
 * newer ones store nothing twice, and their text, as stored, is
 * normalised here, once per record.
 */
static void free_keywords(void *p) { json_decref(p); }

static void history_match(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
	json_t *kw = sqlite3_get_auxdata(cx, 0);
	if (!kw) {
		const char *t = (const char *)sqlite3_value_text(argv[0]);
		kw = t ? json_loads(t, 0, NULL) : NULL;
		if (!json_is_array(kw)) {
			json_decref(kw);
			sqlite3_result_error(cx, "zc_history_match: keywords must be a JSON array", -1);
			return;
		}
		sqlite3_set_auxdata(cx, 0, kw, free_keywords);
		kw = sqlite3_get_auxdata(cx, 0);
		if (!kw) {
			sqlite3_result_error_nomem(cx);
			return;
		}
	}
	if (json_array_size(kw) == 0) {
		sqlite3_result_int(cx, 1);
		return;
	}
	const char *stored = (const char *)sqlite3_value_text(argv[1]);
	char *own = NULL;
	if (!stored || !*stored) {
		struct zc_buf all = ZC_BUF_INIT;
		for (int i = 2; i < argc; i++) {
			const char *t = (const char *)sqlite3_value_text(argv[i]);
			if (t) {
				zc_buf_adds(&all, t);
				zc_buf_addc(&all, '\n');
			}
		}
		own = zc_norm(zc_buf_str(&all));
		zc_buf_release(&all);
		stored = own;
	}
	int ok = 1;
	size_t i;
	json_t *k;
	json_array_foreach(kw, i, k) {
		const char *w = json_string_value(k);
		if (!w || !strstr(stored, w)) {
			ok = 0;
			break;
		}
	}
	zc_free(own);
	sqlite3_result_int(cx, ok);
}

int zc_history_register(struct zc_store *s, struct zc_err *e)
{
	int rc = sqlite3_create_function(s->db, "zc_history_match", 11,
					 SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, NULL,
					 history_match, NULL, NULL);
	return rc ? zc_store_fail(s, rc, e, "registering the history search") : ZCOR_OK;
}

/* A record of a call that changed nothing, which "changes only" leaves
 * out: the read operations (ZC_OP_READ, and the tools that are plain
 * functions: skill, wiki_lookup) and qq_memory's read, list and search. */
#define READ_RECORD                                                                         \
	"(operation IN ('zcor_memory_read', 'zcor_memory_children', 'zcor_memory_trace',"   \
	" 'zcor_memory_query', 'zcor_memory_search', 'zcor_memory_history',"                 \
	" 'zcor_relationship_read', 'zcor_relationship_query', 'qq_transcript', 'skill',"    \
	" 'wiki_lookup') OR (operation = 'qq_memory' AND json_valid(arguments) AND"          \
	" json_extract(arguments, '$.action') IN ('read', 'list', 'search')))"

/* ?10 operations (a JSON array), ?11 actor, ?12 conversation ('' the host
 * plane), ?13 status, ?14 a target id as a JSON string ("m42"), ?15
 * changes only. */
#define HISTORY_WHERE                                                                      \
	" FROM history WHERE (?9 IS NULL OR conversation = ?9)"                               \
	" AND (?2 IS NULL OR at >= ?2) AND (?3 IS NULL OR at <= ?3)"                         \
	" AND (?10 IS NULL OR operation IN (SELECT value FROM json_each(?10)))"              \
	" AND (?11 IS NULL OR actor = ?11)"                                                   \
	" AND (?12 IS NULL OR (?12 = '' AND conversation IS NULL) OR conversation = ?12)"     \
	" AND (?13 IS NULL OR status = ?13)"                                                  \
	" AND (?14 IS NULL OR instr(arguments, ?14) OR instr(coalesce(before, ''), ?14)"     \
	" OR instr(coalesce(after, ''), ?14))"                                                \
	" AND (?15 IS NULL OR NOT " READ_RECORD ")"                                          \
	" AND (?4 = '[]' OR zc_history_match(?4, search_norm, operation, actor, conversation," \
	" arguments, status, error, before, after, receipt))"

/* The filters beside keywords and time, as the tool's arguments name
 * them (registry.c checked their types). */
struct hist_filter {
	char *operations; /* JSON array text, or NULL */
	const char *actor, *conversation, *status;
	char *target; /* the id as a JSON string, or NULL */
	int changes_only;
};

static int filter_args(json_t *args, struct hist_filter *f, struct zc_err *e)
{
	json_t *ops = json_object_get(args, "operations");
	const char *conv = zc_json_str(args, "conversation");
	const char *id = zc_json_str(args, "targetId");
	memset(f, 0, sizeof(*f));
	if (ops && json_array_size(ops))
		f->operations = zc_json_dump(ops);
	f->actor = zc_json_str(args, "actor");
	f->status = zc_json_str(args, "status");
	if (conv && strcmp(conv, "host") == 0)
		f->conversation = "";
	else if (conv && zc_conv_check(conv, e))
		return zc_err_prefix(e, "argument 'conversation' (\"host\" for the operator's records)");
	else
		f->conversation = conv;
	if (id) {
		json_t *t = json_string(id);
		f->target = t ? zc_json_dump(t) : NULL;
		json_decref(t);
	}
	f->changes_only = json_is_true(json_object_get(args, "changesOnly"));
	return ZCOR_OK;
}

static void bind_common(struct zc_op *op, sqlite3_stmt *st, int64_t from, int64_t to, const char *kw,
			const struct hist_filter *f)
{
	if (from >= 0)
		sqlite3_bind_int64(st, 2, from);
	if (to >= 0)
		sqlite3_bind_int64(st, 3, to);
	sqlite3_bind_text(st, 4, kw, -1, SQLITE_TRANSIENT);
	zc_bind_scope(op, st);
	if (f->operations)
		sqlite3_bind_text(st, 10, f->operations, -1, SQLITE_TRANSIENT);
	if (f->actor)
		sqlite3_bind_text(st, 11, f->actor, -1, SQLITE_TRANSIENT);
	if (f->conversation)
		sqlite3_bind_text(st, 12, f->conversation, -1, SQLITE_TRANSIENT);
	if (f->status)
		sqlite3_bind_text(st, 13, f->status, -1, SQLITE_TRANSIENT);
	if (f->target)
		sqlite3_bind_text(st, 14, f->target, -1, SQLITE_TRANSIENT);
	if (f->changes_only)
		sqlite3_bind_int(st, 15, 1);
}

static int memory_history(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	int64_t from, to;
	long long limit, offset, total = 0;
	struct hist_filter f;
	int rc;
	if ((rc = zc_time_arg(args, "from", &from, e)) || (rc = zc_time_arg(args, "to", &to, e)) ||
	    (rc = zc_page_args(args, &limit, &offset, e)) || (rc = filter_args(args, &f, e)))
		return rc;
	json_t *kwj = json_object_get(args, "keywords");
	char *kw = kwj ? zc_norm_keywords(kwj) : zc_strdup("[]");
	json_t *items = json_array();
	sqlite3_stmt *st = zc_stmt(&op->m->store, "SELECT count(*)" HISTORY_WHERE, e);
	if (!st) {
		rc = e->code;
		goto out;
	}
	bind_common(op, st, from, to, kw, &f);
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
	bind_common(op, st, from, to, kw, &f);
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
	zc_free(f.operations);
	zc_free(f.target);
	json_decref(items);
	return rc;
}

const struct zc_opdef zc_op_memory_history = {"zcor_memory_history", NULL, memory_history,
						 ZC_OP_READ | ZC_OP_HISTORY};
