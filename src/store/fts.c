/*
 * fts.c — zcor's FTS5 extensions, registered on every connection before
 * the schema is touched (the triggers that keep the indexes in step with
 * nodes run through them). Store layer.
 *
 *   zcor          tokenizer: NFKC + case fold, then the index tokens of
 *                 text/tokens.h (CJK bigrams, words) — nodes_fts, messages_fts.
 *   zcor_scoped   tokenizer of recall_fts: a document is "<scope>\x1F<text>",
 *                 and each of its lexical tokens (zc_lex_tokens) is indexed
 *                 as "<scope>\x1F<token>", so one scope's postings of a
 *                 token are one doclist; a query string is one such token,
 *                 taken verbatim.
 *   zc_tf(t)      auxiliary: the instances of the query's phrases in the
 *                 current row (recall asks for one token, in one scope or
 *                 another: its term frequency).
 *   zc_postings(t, n [, scan]) auxiliary: the first n rows (rowid order)
 *                 of the query's first phrase with its instances in each,
 *                 as one blob of struct zc_posting, read in one call
 *                 (xQueryPhrase) instead of a row of the statement each:
 *                 recall's postings of a token (rowid -seq). With scan
 *                 not 0: the first scan rows of the doclist (every row if
 *                 scan < 0) are walked and the n with the most instances
 *                 kept (among equal counts the first in rowid order),
 *                 handed back most instances first. Called for the
 *                 statement's first row (LIMIT 1).
 *   zc_dl(t)      auxiliary: the row's length in tokens (all columns).
 *   zc_lex_len(x) scalar: how many tokens zcor_scoped indexes for the text
 *                 x (without the scope): the length recall_stats adds up.
 *   zc_lex_set(x) scalar: the distinct tokens of x as a JSON array: what
 *                 recall_df counts one more (or one less) record for.
 *   zc_norm(x)    scalar: the normalisation of text/norm.h, for the
 *                 triggers that remove a record's terms by their keys.
 *
 * It never reads or writes a table itself, and it tokenises exactly as
 * recall's queries do (the same text/ functions), or a search would miss.
 */
#include <sqlite3.h>
#include <string.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/json.h"
#include "store/store.h"
#include "text/norm.h"
#include "text/tokens.h"

struct tok_ctx {
	void *ctx;
	int (*x)(void *, int, const char *, int, int, int);
	int text_len;
};

static int emit(void *ud, const char *tok, size_t len, size_t start, size_t end)
{
	struct tok_ctx *t = ud;
	/* offsets point into the normalised copy; clamp them into the
	 * original so FTS5 never reads outside it (zcor uses no highlights) */
	int s = (int)start < t->text_len ? (int)start : t->text_len;
	int e = (int)end < t->text_len ? (int)end : t->text_len;
	return t->x(t->ctx, 0, tok, (int)len, s, e);
}

static int tok_create(void *ud, const char **argv, int argc, Fts5Tokenizer **out)
{
	*out = (Fts5Tokenizer *)ud;
	return SQLITE_OK;
}

static void tok_delete(Fts5Tokenizer *t) {}

static int tok_tokenize(Fts5Tokenizer *t, void *ctx, int flags, const char *text, int n,
			int (*x)(void *, int, const char *, int, int, int))
{
	if (n <= 0)
		return SQLITE_OK;
	char *norm = zc_norm_n(text, (size_t)n);
	struct tok_ctx c = {ctx, x, n};
	int mode = (flags & FTS5_TOKENIZE_QUERY) ? ZC_TOKENS_QUERY : ZC_TOKENS_DOCUMENT;
	int rc = zc_tokens(norm, strlen(norm), mode, emit, &c);
	zc_free(norm);
	return rc;
}

/* zc_norm(text): the same normalisation in SQL, for the triggers that
 * remove a record's terms by their exact keys (schema 10). */
static void norm_sql(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
	const char *t = (const char *)sqlite3_value_text(argv[0]);
	if (!t) {
		sqlite3_result_null(cx);
		return;
	}
	sqlite3_result_text(cx, zc_norm_n(t, (size_t)sqlite3_value_bytes(argv[0])), -1, zc_free);
}

/* ---- zcor_scoped ------------------------------------------------------ */

#define SCOPE_SEP '\x1f'
#define SCOPE_MAX 128

struct scoped_ctx {
	void *ctx;
	int (*x)(void *, int, const char *, int, int, int);
	char buf[SCOPE_MAX + 1 + ZC_LEX_TOKEN_MAX + 1];
	size_t plen; /* scope + separator */
	int text_len;
};

static int scoped_emit(void *ud, const char *tok, size_t len, size_t start, size_t end, int flags)
{
	struct scoped_ctx *t = ud;
	memcpy(t->buf + t->plen, tok, len); /* len <= ZC_LEX_TOKEN_MAX */
	int s = (int)start < t->text_len ? (int)start : t->text_len;
	int e = (int)end < t->text_len ? (int)end : t->text_len;
	return t->x(t->ctx, 0, t->buf, (int)(t->plen + len), s, e);
}

static int scoped_tokenize(Fts5Tokenizer *t, void *ctx, int flags, const char *text, int n,
			   int (*x)(void *, int, const char *, int, int, int))
{
	if (n <= 0)
		return SQLITE_OK;
	if (flags & FTS5_TOKENIZE_QUERY) /* recall.c asks for one token at a time */
		return x(ctx, 0, text, n, 0, n);
	const char *sep = memchr(text, SCOPE_SEP, (size_t)n < SCOPE_MAX + 1 ? (size_t)n : SCOPE_MAX + 1);
	if (!sep)
		return SQLITE_OK; /* not a recall document: nothing to index */
	struct scoped_ctx c = {.ctx = ctx, .x = x, .text_len = n};
	c.plen = (size_t)(sep - text) + 1;
	memcpy(c.buf, text, c.plen);
	char *norm = zc_norm_n(sep + 1, (size_t)(text + n - sep - 1));
	int rc = zc_lex_tokens(norm, strlen(norm), ZC_TOKENS_DOCUMENT, scoped_emit, &c);
	zc_free(norm);
	return rc;
}

/* ---- auxiliary and scalar functions ------------------------------------ */

static void aux_tf(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_context *ctx, int n,
		   sqlite3_value **v)
{
	int inst = 0;
	if (api->xInstCount(fts, &inst) != SQLITE_OK)
		inst = 0;
	sqlite3_result_int(ctx, inst);
}

/* a before b in by_tf order: more instances, then the smaller rowid */
static int posting_better(const struct zc_posting *a, const struct zc_posting *b)
{
	return a->tf != b->tf ? a->tf > b->tf : a->rowid < b->rowid;
}

static void posting_down(struct zc_posting *h, int n, int i)
{
	for (;;) {
		int w = i, l = 2 * i + 1, r = l + 1;
		if (l < n && posting_better(&h[w], &h[l]))
			w = l;
		if (r < n && posting_better(&h[w], &h[r]))
			w = r;
		if (w == i)
			return;
		struct zc_posting t = h[i];
		h[i] = h[w];
		h[w] = t;
		i = w;
	}
}

void zc_postings_sel_init(struct zc_postings_sel *r, struct zc_posting *rows, int cap, long long scan)
{
	memset(rows, 0, (size_t)cap * sizeof(*rows)); /* no uninitialised padding in a blob */
	*r = (struct zc_postings_sel){rows, 0, cap, scan != 0, scan};
}

int zc_postings_sel_add(struct zc_postings_sel *r, sqlite3_int64 rowid, int tf)
{
	struct zc_posting one;
	memset(&one, 0, sizeof(one)); /* no uninitialised padding in the blob */
	one.rowid = rowid;
	one.tf = tf;
	if (!r->by_tf) {
		r->rows[r->n++] = one;
		return r->n >= r->cap;
	}
	if (r->left > 0)
		r->left--;
	if (r->n < r->cap) { /* sift up */
		int i = r->n++;
		while (i > 0 && posting_better(&r->rows[(i - 1) / 2], &one)) {
			r->rows[i] = r->rows[(i - 1) / 2];
			i = (i - 1) / 2;
		}
		r->rows[i] = one;
	} else if (posting_better(&one, &r->rows[0])) {
		r->rows[0] = one;
		posting_down(r->rows, r->n, 0);
	}
	return r->left == 0;
}

void zc_postings_sel_finish(struct zc_postings_sel *r)
{
	if (r->by_tf) /* the heap's worst goes behind the rest, one at a time: best first */
		for (int k = r->n - 1; k > 0; k--) {
			struct zc_posting t = r->rows[0];
			r->rows[0] = r->rows[k];
			r->rows[k] = t;
			posting_down(r->rows, k, 0);
		}
}

static int postings_row(const Fts5ExtensionApi *api, Fts5Context *fts, void *ud)
{
	/* the phrase's instances in this row: its positions, walked
	 * (xPhraseFirst reads them where they are; xInstCount first builds
	 * the array of every phrase's, twice the instructions) */
	int inst = 0;
	Fts5PhraseIter it;
	int col = 0, off = 0;
	if (api->xPhraseFirst(fts, 0, &it, &col, &off) == SQLITE_OK)
		for (; col >= 0; api->xPhraseNext(fts, &it, &col, &off))
			inst++;
	return zc_postings_sel_add(ud, api->xRowid(fts), inst) ? SQLITE_DONE : SQLITE_OK;
}

static void aux_postings(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_context *ctx, int n,
			 sqlite3_value **v)
{
	_Static_assert(ZC_POSTINGS_MAX == 4096, "the message below says 4096");
	int cap = n >= 1 ? sqlite3_value_int(v[0]) : 0;
	if (cap <= 0 || cap > ZC_POSTINGS_MAX) {
		sqlite3_result_error(ctx, "zc_postings: the count (its second argument) must be 1 to 4096", -1);
		return;
	}
	long long scan = n >= 2 ? sqlite3_value_int64(v[1]) : 0;
	struct zc_posting *rows = sqlite3_malloc64((sqlite3_uint64)cap * sizeof(*rows));
	if (!rows) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	struct zc_postings_sel r;
	zc_postings_sel_init(&r, rows, cap, scan);
	int rc = api->xQueryPhrase(fts, 0, &r, postings_row);
	if (rc != SQLITE_OK) {
		sqlite3_free(r.rows);
		sqlite3_result_error_code(ctx, rc);
		return;
	}
	zc_postings_sel_finish(&r);
	sqlite3_result_blob64(ctx, r.rows, (sqlite3_uint64)r.n * sizeof(*r.rows), sqlite3_free);
}

static void aux_dl(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_context *ctx, int n,
		   sqlite3_value **v)
{
	int len = 0;
	if (api->xColumnSize(fts, -1, &len) != SQLITE_OK)
		len = 0;
	sqlite3_result_int(ctx, len);
}

static int count_token(void *ud, const char *tok, size_t len, size_t start, size_t end, int flags)
{
	(*(long long *)ud)++;
	return 0;
}

static void fn_lex_len(sqlite3_context *ctx, int n, sqlite3_value **v)
{
	const char *text = (const char *)sqlite3_value_text(v[0]);
	long long count = 0;
	if (text) {
		char *norm = zc_norm_n(text, (size_t)sqlite3_value_bytes(v[0]));
		zc_lex_tokens(norm, strlen(norm), ZC_TOKENS_DOCUMENT, count_token, &count);
		zc_free(norm);
	}
	sqlite3_result_int64(ctx, count);
}

struct token_set {
	json_t *seen;
	struct zc_buf out;
};

static int set_token(void *ud, const char *tok, size_t len, size_t start, size_t end, int flags)
{
	struct token_set *t = ud;
	char buf[ZC_LEX_TOKEN_MAX + 1];
	memcpy(buf, tok, len); /* len <= ZC_LEX_TOKEN_MAX */
	buf[len] = '\0';
	if (json_object_get(t->seen, buf))
		return 0;
	json_object_set_new(t->seen, buf, json_true());
	if (t->out.len > 1)
		zc_buf_addc(&t->out, ',');
	zc_json_buf_string(&t->out, buf);
	return 0;
}

static void fn_lex_set(sqlite3_context *ctx, int n, sqlite3_value **v)
{
	const char *text = (const char *)sqlite3_value_text(v[0]);
	struct token_set t = {json_object(), ZC_BUF_INIT};
	zc_buf_addc(&t.out, '[');
	if (text) {
		char *norm = zc_norm_n(text, (size_t)sqlite3_value_bytes(v[0]));
		zc_lex_tokens(norm, strlen(norm), ZC_TOKENS_DOCUMENT, set_token, &t);
		zc_free(norm);
	}
	zc_buf_addc(&t.out, ']');
	json_decref(t.seen);
	sqlite3_result_text(ctx, t.out.p, (int)t.out.len, SQLITE_TRANSIENT);
	zc_buf_release(&t.out);
}

int zc_fts_register(sqlite3 *db, struct zc_err *e)
{
	if (sqlite3_create_function(db, "zc_norm", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS,
				    NULL, norm_sql, NULL, NULL) != SQLITE_OK)
		return zc_fail(e, ZCOR_EINTERNAL, "cannot register zc_norm");
	static fts5_tokenizer tok = {tok_create, tok_delete, tok_tokenize};
	static fts5_tokenizer scoped = {tok_create, tok_delete, scoped_tokenize};
	static int marker;
	fts5_api *api = NULL;
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_pointer(st, 1, (void *)&api, "fts5_api_ptr", NULL);
		sqlite3_step(st);
	}
	sqlite3_finalize(st);
	if (!api)
		return zc_fail(e, ZCOR_EINTERNAL, "this SQLite has no FTS5; install libsqlite3 with FTS5");
	rc = api->xCreateTokenizer(api, "zcor", &marker, &tok, NULL);
	if (rc == SQLITE_OK)
		rc = api->xCreateTokenizer(api, "zcor_scoped", &marker, &scoped, NULL);
	if (rc == SQLITE_OK)
		rc = api->xCreateFunction(api, "zc_tf", NULL, aux_tf, NULL);
	if (rc == SQLITE_OK)
		rc = api->xCreateFunction(api, "zc_postings", NULL, aux_postings, NULL);
	if (rc == SQLITE_OK)
		rc = api->xCreateFunction(api, "zc_dl", NULL, aux_dl, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_function(db, "zc_lex_len", 1,
					     SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, NULL,
					     fn_lex_len, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_function(db, "zc_lex_set", 1,
					     SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, NULL,
					     fn_lex_set, NULL, NULL);
	return rc == SQLITE_OK ? ZCOR_OK
			       : zc_fail(e, ZCOR_EINTERNAL, "cannot register zcor's full-text functions");
}
