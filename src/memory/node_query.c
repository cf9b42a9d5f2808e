/*
 * node_query.c — zcor_memory_query (seed 000, SPEC §3.1) and the argument
 * helpers the listing operations share: pages, times, keywords and the
 * full-text prefilter. Memory layer, a read operation of the runner: it
 * never writes a row, never begins a transaction of its own, and shows
 * only what the caller's conversation may see.
 */
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/json.h"
#include "base/timeutil.h"
#include "memory/memory.h"
#include "memory/node_int.h"
#include "text/norm.h"
#include "text/tokens.h"

/* ---- query ---------------------------------------------------------- */

/* Parses from/to (optional ISO-8601 with zone) into *ms (-1 if absent). */
int zc_time_arg(json_t *args, const char *key, int64_t *ms, struct zc_err *e)
{
	*ms = -1;
	const char *s = zc_json_str(args, key);
	return s ? zc_time_parse(s, key, ms, e) : ZCOR_OK;
}

char *zc_norm_keywords(json_t *kw)
{
	json_t *arr = json_array();
	size_t i;
	json_t *k;
	json_array_foreach(kw, i, k) json_array_append_new(arr, zc_json_string_own(zc_norm(json_string_value(k))));
	char *s = zc_json_dump(arr);
	json_decref(arr);
	return s;
}

json_t *zc_page_result(json_t *items, long long total, long long offset)
{
	long long next = offset + (long long)json_array_size(items);
	return json_pack("{s:O, s:I, s:o}", "items", items, "total", (json_int_t)total, "nextOffset",
			 next < total ? json_integer(next) : json_null());
}

int zc_page_args(json_t *args, long long *limit, long long *offset, struct zc_err *e)
{
	json_t *l = json_object_get(args, "limit"), *o = json_object_get(args, "offset");
	*limit = l ? json_integer_value(l) : ZC_QUERY_LIMIT_DEFAULT;
	*offset = o ? json_integer_value(o) : 0;
	if (*limit < 1 || *limit > ZC_QUERY_LIMIT_MAX)
		return zc_fail(e, ZCOR_EINVAL, "argument 'limit': must be between 1 and %d",
			       ZC_QUERY_LIMIT_MAX);
	if (*offset < 0)
		return zc_fail(e, ZCOR_EINVAL, "argument 'offset': must be 0 or more");
	return ZCOR_OK;
}

/* The query's statements: its filters, then the keyword test by how
 * many keywords there are. Every keyword must be in the title or the
 * content (normalised): with none there is no test; one is bound as ?4
 * itself; more are ?4 as a JSON array, walked by json_each for every
 * row. The one-keyword form is the json_each form's own truth table
 * (CASE takes a NULL condition as false, as NOT EXISTS does), without a
 * table-valued cursor per row (issue 19). */
#define QUERY_FROM                                                                  \
	" FROM nodes WHERE (?1 OR superseded_by IS NULL) AND " ZC_SCOPE_VISIBLE_SQL     \
	" AND (?2 IS NULL OR updated_at >= ?2) AND (?3 IS NULL OR updated_at <= ?3)"
#define KW_ONE                                                                      \
	" AND CASE WHEN instr(title_norm, ?4) = 0 AND instr(zc_norm(content), ?4) = 0" \
	" THEN 0 ELSE 1 END"
#define KW_ANY                                                                      \
	" AND NOT EXISTS (SELECT 1 FROM json_each(?4) k WHERE instr(title_norm, k.value) = 0" \
	" AND instr(zc_norm(content), k.value) = 0)"
#define PREFILTER " AND seq IN (SELECT rowid FROM nodes_fts WHERE nodes_fts MATCH ?7)"
#define PAGE " ORDER BY updated_at DESC, seq DESC LIMIT ?5 OFFSET ?6"
#define PAGE_AND_COUNT(where) {"SELECT " ZC_NODE_COLS where PAGE, "SELECT count(*)" where}

/* [keywords: none, one, more][with the prefilter][the page, the count] */
static const char *const QUERY_SQL[3][2][2] = {
	{PAGE_AND_COUNT(QUERY_FROM), {NULL, NULL}},
	{PAGE_AND_COUNT(QUERY_FROM KW_ONE), PAGE_AND_COUNT(QUERY_FROM KW_ONE PREFILTER)},
	{PAGE_AND_COUNT(QUERY_FROM KW_ANY), PAGE_AND_COUNT(QUERY_FROM KW_ANY PREFILTER)},
};

static void bind_query(struct zc_op *op, sqlite3_stmt *st, int superseded, int64_t from, int64_t to,
		       const char *kw, const char *pre)
{
	sqlite3_bind_int(st, 1, superseded);
	if (from >= 0)
		sqlite3_bind_int64(st, 2, from);
	if (to >= 0)
		sqlite3_bind_int64(st, 3, to);
	if (kw)
		sqlite3_bind_text(st, 4, kw, -1, SQLITE_TRANSIENT);
	if (pre)
		sqlite3_bind_text(st, 7, pre, -1, SQLITE_TRANSIENT);
	zc_bind_scope(op, st);
}

/*
 * An FTS5 expression that every record matching the keywords also
 * matches, or NULL. A keyword that is one run of CJK characters (two or
 * more) is a substring of a text exactly when its bigrams follow each
 * other there, so its phrase query finds every candidate; other keywords
 * (Latin, mixed) are checked by the exact substring test only. Caller
 * frees.
 */
char *zc_fts_keywords_prefilter(json_t *keywords, const char *columns)
{
	struct zc_buf q = ZC_BUF_INIT;
	size_t i;
	json_t *k;
	json_array_foreach(keywords, i, k) {
		char *n = zc_norm(json_string_value(k));
		if (zc_is_cjk_run(n, 2))
			zc_buf_addf(&q, "%s%s : \"%s\"", q.len ? " AND " : "", columns, n);
		zc_free(n);
	}
	return q.len ? zc_buf_detach(&q) : NULL;
}

static int memory_query(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	int64_t from, to;
	long long limit, offset;
	int rc;
	if ((rc = zc_time_arg(args, "from", &from, e)) || (rc = zc_time_arg(args, "to", &to, e)) ||
	    (rc = zc_page_args(args, &limit, &offset, e)))
		return rc;
	int superseded = json_is_true(json_object_get(args, "includeSuperseded"));
	json_t *kwj = json_object_get(args, "keywords");
	size_t nkw = json_array_size(kwj);
	int form = nkw == 0 ? 0 : nkw == 1 ? 1 : 2;
	char *kw = form == 1 ? zc_norm(json_string_value(json_array_get(kwj, 0)))
		 : form == 2 ? zc_norm_keywords(kwj) : NULL;
	long long total = 0;
	/* with a CJK keyword the full-text index narrows the records to test;
	 * the test itself is the same either way */
	char *pre = form ? zc_fts_keywords_prefilter(kwj, "{title content}") : NULL;
	const char *const *sql = QUERY_SQL[form][pre != NULL];
	sqlite3_stmt *st = zc_stmt(&op->m->store, sql[0], e);
	if (!st) {
		rc = e->code;
		goto out;
	}
	bind_query(op, st, superseded, from, to, kw, pre);
	sqlite3_bind_int64(st, 5, limit);
	sqlite3_bind_int64(st, 6, offset);
	/* the answer as text, each hit straight from its row: a tree per hit
	 * built and dumped was 60% of a search's instructions (issue 19);
	 * the same bytes as zc_page_result's tree dumped (test_query_text.c) */
	struct zc_buf b = ZC_BUF_INIT;
	long long n = 0;
	zc_buf_adds(&b, "{\"items\":[");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (n++)
			zc_buf_addc(&b, ',');
		zc_node_text_from_row(&b, st);
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE) {
		zc_buf_release(&b);
		rc = zc_store_fail(&op->m->store, rc, e, "reading memories");
		goto out;
	}
	/* A page that ends short of the limit is the end of the matches, so
	 * the total is where it ends: the count, a second pass over every
	 * match testing the keywords again, runs only when the page is full
	 * or starts past the end (issue 19: half a search's statements). One
	 * read transaction holds both, so they see the same rows. */
	if (n == limit || (n == 0 && offset > 0)) {
		if (!(st = zc_stmt(&op->m->store, sql[1], e))) {
			zc_buf_release(&b);
			rc = e->code;
			goto out;
		}
		bind_query(op, st, superseded, from, to, kw, pre);
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW)
			total = sqlite3_column_int64(st, 0);
		sqlite3_reset(st);
		if (rc != SQLITE_ROW) {
			zc_buf_release(&b);
			rc = zc_store_fail(&op->m->store, rc, e, "counting memories");
			goto out;
		}
	} else {
		total = offset + n;
	}
	rc = ZCOR_OK;
	zc_buf_addf(&b, "],\"total\":%lld,\"nextOffset\":", total);
	if (offset + n < total)
		zc_buf_addf(&b, "%lld}", offset + n);
	else
		zc_buf_adds(&b, "null}");
	op->text = zc_buf_detach(&b);
	(void)out;
out:
	zc_free(kw);
	zc_free(pre);
	return rc;
}

const struct zc_opdef zc_op_memory_query = {"zcor_memory_query", NULL, memory_query,
					       ZC_OP_READ | ZC_OP_FTS};
