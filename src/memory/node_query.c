/*
 * node_query.c — zcor_memory_query (seed 000, SPEC §3.1) and the argument
 * helpers the listing operations share: pages, times, keywords and the
 * full-text prefilter. Memory layer, a read operation of the runner: it
 * never writes a row, never begins a transaction of its own, and shows
 * only what the caller's conversation may see.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
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
/* the hits in no order, with their order's keys after the node's columns */
#define KEY_COL 25
#define UNORDERED ", updated_at, seq"
#define PAGE_AND_COUNT(where) {"SELECT " ZC_NODE_COLS where PAGE, "SELECT count(*)" where, NULL}
#define PAGE_COUNT_ALL(where)                                                        \
	{"SELECT " ZC_NODE_COLS where PAGE, "SELECT count(*)" where,                 \
	 "SELECT " ZC_NODE_COLS UNORDERED where}

/* [keywords: none, one, more][with the prefilter][the page, the count,
 * every hit unordered (with the prefilter only)] */
static const char *const QUERY_SQL[3][2][3] = {
	{PAGE_AND_COUNT(QUERY_FROM), {NULL, NULL, NULL}},
	{PAGE_AND_COUNT(QUERY_FROM KW_ONE), PAGE_COUNT_ALL(QUERY_FROM KW_ONE PREFILTER)},
	{PAGE_AND_COUNT(QUERY_FROM KW_ANY), PAGE_COUNT_ALL(QUERY_FROM KW_ANY PREFILTER)},
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
			zc_buf_addf(&q, "%s%s%s\"%s\"", q.len ? " AND " : "", columns ? columns : "",
				    columns ? " : " : "", n);
		zc_free(n);
	}
	return q.len ? zc_buf_detach(&q) : NULL;
}

/* The answer's end: the page's total and where the next one starts. */
static void page_end(struct zc_buf *b, long long total, long long offset, long long n)
{
	zc_buf_adds(b, "],\"total\":");
	zc_buf_addll(b, total);
	zc_buf_adds(b, ",\"nextOffset\":");
	if (offset + n < total)
		zc_buf_addll(b, offset + n);
	else
		zc_buf_adds(b, "null");
	zc_buf_addc(b, '}');
}

/* ---- an indexed query's page, ordered here --------------------------- */

/*
 * With the full-text prefilter the hits are what the index found, and
 * SQLite sorted every one with its 25 columns into a temporary b-tree for
 * the page, then counted them again testing the keywords a second time:
 * a third of a search's statements (issue 19). Here they are read once,
 * unordered, counted as they come, and the first offset + limit in the
 * page's order (updated_at, then seq, newest first: seq is unique, so the
 * order is total and the same as SQLite's) are kept in a heap, each
 * written as text only when it enters. Up to ORDER_HERE_MAX kept; a page
 * further down is SQLite's.
 */
#define ORDER_HERE_MAX 1000

struct kept {
	int64_t updated, seq;
	struct zc_buf text;
};

/* a after b in the page */
static int after(const struct kept *a, const struct kept *b)
{
	return a->updated != b->updated ? a->updated < b->updated : a->seq < b->seq;
}

static void swap_kept(struct kept *h, size_t i, size_t j)
{
	struct kept t = h[i];
	h[i] = h[j];
	h[j] = t;
}

/* h[0] is the last of the kept in page order: the first to leave */
static void sift_down(struct kept *h, size_t n, size_t i)
{
	for (;;) {
		size_t w = i, l = 2 * i + 1, r = l + 1;
		if (l < n && after(&h[l], &h[w]))
			w = l;
		if (r < n && after(&h[r], &h[w]))
			w = r;
		if (w == i)
			return;
		swap_kept(h, i, w);
		i = w;
	}
}

static void sift_up(struct kept *h, size_t i)
{
	while (i > 0 && after(&h[i], &h[(i - 1) / 2])) {
		swap_kept(h, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static int page_order(const void *a, const void *b)
{
	return after(a, b) ? 1 : after(b, a) ? -1 : 0;
}

/* Steps st (QUERY_SQL's unordered statement) to its end and writes the
 * answer into b. */
static int page_ordered_here(struct zc_op *op, sqlite3_stmt *st, long long limit, long long offset,
			     struct zc_buf *b, struct zc_err *e)
{
	assert(sqlite3_column_count(st) == KEY_COL + 2);
	size_t keep = (size_t)(offset + limit), n = 0;
	struct kept *h = zc_calloc(keep, sizeof(*h));
	long long total = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		total++;
		struct kept k = {sqlite3_column_int64(st, KEY_COL), sqlite3_column_int64(st, KEY_COL + 1),
				 ZC_BUF_INIT};
		if (n < keep) {
			h[n] = k;
			zc_buf_grow(&h[n].text, 1024); /* a hit's text, most of the time */
			zc_node_text_from_row(&h[n].text, st);
			sift_up(h, n++);
		} else if (after(&h[0], &k)) { /* it enters, the last leaves */
			h[0].updated = k.updated;
			h[0].seq = k.seq;
			zc_buf_reset(&h[0].text);
			zc_node_text_from_row(&h[0].text, st);
			sift_down(h, n, 0);
		}
	}
	sqlite3_reset(st);
	if (rc == SQLITE_DONE) {
		rc = ZCOR_OK;
		qsort(h, n, sizeof(*h), page_order);
		size_t bytes = 0;
		for (size_t i = (size_t)offset; i < n; i++)
			bytes += h[i].text.len + 1;
		zc_buf_grow(b, bytes + 96); /* the answer at once, its end included */
		zc_buf_adds(b, "{\"items\":[");
		for (size_t i = (size_t)offset; i < n; i++) {
			if (i > (size_t)offset)
				zc_buf_addc(b, ',');
			zc_buf_add(b, h[i].text.p, h[i].text.len);
		}
		page_end(b, total, offset, n > (size_t)offset ? (long long)(n - (size_t)offset) : 0);
	} else {
		rc = zc_store_fail(&op->m->store, rc, e, "reading memories");
	}
	for (size_t i = 0; i < n; i++)
		zc_buf_release(&h[i].text);
	zc_free(h);
	return rc;
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
	 * the test itself is the same either way. Over every column of
	 * nodes_fts: a few more candidates (a keyword only in keywords), no
	 * column filter to apply to every posting (a fifth of the index's
	 * part of a search, issue 19) */
	char *pre = form ? zc_fts_keywords_prefilter(kwj, NULL) : NULL;
	const char *const *sql = QUERY_SQL[form][pre != NULL];
	if (pre && offset + limit <= ORDER_HERE_MAX) {
		sqlite3_stmt *all = zc_stmt(&op->m->store, sql[2], e);
		if (!all) {
			rc = e->code;
			goto out;
		}
		bind_query(op, all, superseded, from, to, kw, pre);
		struct zc_buf b = ZC_BUF_INIT;
		if ((rc = page_ordered_here(op, all, limit, offset, &b, e)) == ZCOR_OK)
			op->text = zc_buf_detach(&b);
		zc_buf_release(&b);
		goto out;
	}
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
	page_end(&b, total, offset, n);
	op->text = zc_buf_detach(&b);
	(void)out;
out:
	zc_free(kw);
	zc_free(pre);
	return rc;
}

const struct zc_opdef zc_op_memory_query = {"zcor_memory_query", NULL, memory_query,
					       ZC_OP_READ | ZC_OP_FTS};
