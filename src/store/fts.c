/*
 * fts.c — the "zcor" FTS5 tokenizer: NFKC + case fold, then the index
 * tokens of text/tokens.h (CJK bigrams, words), and the same normalisation
 * as the SQL function zc_norm(). Registered on every connection before the
 * schema is touched, because the triggers that keep nodes_fts and terms in
 * step with nodes and people run through them. Store layer: it never
 * reads or writes a table itself, and it tokenises exactly as recall's
 * queries do (the same text/ functions), or a search would miss.
 */
#include <sqlite3.h>
#include <string.h>

#include "base/alloc.h"
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

int zc_fts_register(sqlite3 *db, struct zc_err *e)
{
	if (sqlite3_create_function(db, "zc_norm", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS,
				    NULL, norm_sql, NULL, NULL) != SQLITE_OK)
		return zc_fail(e, ZCOR_EINTERNAL, "cannot register zc_norm");
	static fts5_tokenizer tok = {tok_create, tok_delete, tok_tokenize};
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
	return rc == SQLITE_OK ? ZCOR_OK : zc_fail(e, ZCOR_EINTERNAL, "cannot register the zcor tokenizer");
}
