/*
 * lexical.c — recall's lexical stage: BM25 over recall_fts with the
 * statistics of what the conversation may see (lexical.h).
 *
 * Recall layer. Reads the store through recall_fts (one scope's postings
 * of a token are one doclist: tokenizer zcor_scoped), recall_stats and,
 * for feedback and dialogue context, a few rows by key; never a scan of
 * the nodes. Every number that ranks a record (df, N, mean length, which
 * postings of a common word are read, the common-word cut) comes from
 * global and the conversation's own scope only, so nothing another
 * conversation wrote can move this one's ranking (Q-SCOPE).
 */
#include "recall/lexical.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/json.h"
#include "recall/seqmap.h"
#include "text/norm.h"
#include "text/tokens.h"

const struct zc_lex_shape zc_lex_shape_default = {
	.k1 = 1.2,
	.b = 0.75,
	.k3 = 2.0,
	.older = 0.5,
	.synonym = 0.5,
	.unigram = 0.45,
	.function = 0.2,
	.continuation = 0.5,
	.skip_fraction = 0.5,
	.keep = 50,
	.postings = 128,
	.postings_unigram = 16,
	.postings_feedback = 64,
	.scan = 1024,
	.scan_unigram = 128,
	.feedback_docs = 3,
	.feedback_terms = 10,
	.feedback_min = 1,
	.context_ms = 60 * 1000.0,
};

/* ---- the cache --------------------------------------------------------- */

/* 4-way set-associative, least recently used way replaced: a direct-
 * mapped table of 4,096 lost 71% of its lookups to collisions in
 * zcor-bench recall (one conversation, 1,100 messages) */
#ifndef LEX_SETS
#define LEX_SETS 2048
#endif
#ifndef LEX_WAYS
#define LEX_WAYS 4
#endif
#define LEX_SLOTS (LEX_SETS * LEX_WAYS)
#define LEX_KEY_MAX 160

struct post {
	sqlite3_int64 seq;
	int tf;
};

/* One token in one scope (global, or a conversation's): its df there and
 * its postings there once they were read. A conversation's view of the
 * token is its global entry and its own scope's, merged (postings_of):
 * so what is read of global serves every conversation. */
struct lexent {
	char key[LEX_KEY_MAX]; /* scope \x1F token; "" = empty slot */
	long long gen;         /* the scope's generation (recall_gen) it was read at */
	unsigned long used;    /* the cache's clock at its last use (LRU within its set) */
	int df, has_df;        /* the scope's records holding it (recall_df) */
	int n;                 /* postings kept: the `limit` of most impact, or all when fewer */
	int limit;             /* how many were asked for (0: none read yet) */
	int covered;           /* of how many of the list's newest they are the best */
	struct post *rows;     /* in post_before order: highest tf first, then newest */
};

/* A token's postings as one message uses it: a copy, since a later lookup
 * may take the entry's cache slot, of its first `limit` postings (the
 * entry may hold more, read for another use: the answer must not depend
 * on what the cache happens to hold). df: global's and the scope's
 * together; sdf: the scope's alone. */
struct plist {
	int df, n;
	struct post *rows;
	int gdf, sdf;
};

static void plist_take(struct plist *dst, const struct lexent *src, int limit)
{
	dst->n = src ? (src->n < limit ? src->n : limit) : 0;
	dst->rows = dst->n ? zc_malloc((size_t)dst->n * sizeof(*dst->rows)) : NULL;
	if (dst->n)
		memcpy(dst->rows, src->rows, (size_t)dst->n * sizeof(*dst->rows));
}

#define LEN_SLOTS 8192

struct zc_lex_cache {
	long long gen; /* meta.recall_gen the lengths belong to */
	/* this run's generations (recall_gen): global's, the conversation's */
	long long gen_global, gen_scope;
	/* at most LEX_SLOTS × shape.postings postings */
	struct lexent slot[LEX_SLOTS];
	unsigned long clock;
	struct {
		sqlite3_int64 seq; /* 0: empty */
		long long dl;
	} len[LEN_SLOTS];      /* records' lengths, by seq */
	int has_shape;
	struct zc_lex_shape shape;
};

static struct zc_lex_cache *cache_of(struct zc_lex_cache **cp)
{
	if (!*cp)
		*cp = zc_calloc(1, sizeof(**cp));
	return *cp;
}

static void cache_clear(struct zc_lex_cache *c)
{
	for (size_t i = 0; i < LEX_SLOTS; i++) {
		zc_free(c->slot[i].rows);
		memset(&c->slot[i], 0, sizeof(c->slot[i]));
	}
	memset(c->len, 0, sizeof(c->len));
}

void zc_lex_release(struct zc_lex_cache **cp)
{
	if (!*cp)
		return;
	cache_clear(*cp);
	zc_free(*cp);
	*cp = NULL;
}

const struct zc_lex_shape *zc_lex_shape_of(const struct zc_lex_cache *c)
{
	return c && c->has_shape ? &c->shape : &zc_lex_shape_default;
}

void zc_lex_set_shape(struct zc_lex_cache **cp, const struct zc_lex_shape *shape)
{
	struct zc_lex_cache *c = cache_of(cp);
	c->has_shape = shape != NULL;
	if (shape)
		c->shape = *shape;
	cache_clear(c); /* what an entry holds depends on the shape's limits */
}

/* The cache for a run of conversation conv, in the run's transaction: an
 * entry of a scope is good while the scope's generation stays (schema
 * 14: any change of the scope's lexical rows gives it a new one, from
 * any connection), the lengths while no scope changed at all. */
static int cache_fresh(struct zc_mem *m, struct zc_lex_cache **cp, const char *conv,
		       struct zc_lex_cache **out, struct zc_err *e)
{
	long long gen = 0;
	int rc = zc_meta_get_int(&m->store, "recall_gen", &gen, e);
	if (rc)
		return rc;
	struct zc_lex_cache *c = cache_of(cp);
	sqlite3_stmt *st = zc_stmt(&m->store,
				   "SELECT coalesce(max(CASE scope WHEN 'global' THEN gen END), 0), "
				   "coalesce(max(CASE scope WHEN ?1 THEN gen END), 0) FROM recall_gen "
				   "WHERE scope IN ('global', ?1)",
				   e);
	if (!st)
		return e->code;
	sqlite3_bind_text(st, 1, conv, -1, SQLITE_STATIC);
	int step = sqlite3_step(st);
	if (step == SQLITE_ROW) {
		c->gen_global = sqlite3_column_int64(st, 0);
		c->gen_scope = sqlite3_column_int64(st, 1);
	}
	sqlite3_reset(st);
	if (step != SQLITE_ROW)
		return zc_store_fail(&m->store, step, e, "recall (generations)");
	if (c->gen != gen) {
		memset(c->len, 0, sizeof(c->len));
		c->gen = gen;
	}
	*out = c;
	return ZCOR_OK;
}

static int is_global(const char *scope) { return strcmp(scope, "global") == 0; }

/* The slot of (scope, tok): its own if the cache holds it (emptied if an
 * older generation of the scope), else the least recently used of its
 * set, emptied for it — unless `keep_postings` and every way of the set
 * holds postings (a df is cheaper to look up again than postings): then
 * NULL, as for a token too long to be one of the index's. */
static struct lexent *slot_for(struct zc_lex_cache *c, const char *scope, const char *tok,
			       int keep_postings)
{
	/* (called for every token of every message: no snprintf) */
	char key[LEX_KEY_MAX];
	size_t cn = strlen(scope), tn = strlen(tok);
	if (cn + 1 + tn >= sizeof(key))
		return NULL;
	memcpy(key, scope, cn);
	key[cn] = '\x1f';
	memcpy(key + cn + 1, tok, tn + 1);
	unsigned long h = 5381;
	for (const char *p = key; *p; p++)
		h = h * 33 + (unsigned char)*p;
	h = (unsigned long)(((unsigned long long)h * 0x9E3779B97F4A7C15ULL) >> 32); /* all bits count */
	struct lexent *set = &c->slot[(h & (LEX_SETS - 1)) * LEX_WAYS], *x = NULL;
	for (int w = 0; w < LEX_WAYS && !x; w++)
		if (strcmp(set[w].key, key) == 0)
			x = &set[w];
	long long gen = is_global(scope) ? c->gen_global : c->gen_scope;
	if (!x) {
		for (int w = 0; w < LEX_WAYS; w++) {
			struct lexent *y = &set[w];
			if (keep_postings && y->limit)
				continue;
			if (!x || !y->key[0] || (x->key[0] && y->used < x->used))
				x = y;
		}
		if (!x)
			return NULL;
		zc_free(x->rows);
		memset(x, 0, sizeof(*x));
		memcpy(x->key, key, cn + 1 + tn + 1);
		x->gen = gen;
	} else if (x->gen != gen) {
		zc_free(x->rows);
		memset(x, 0, sizeof(*x));
		memcpy(x->key, key, cn + 1 + tn + 1);
		x->gen = gen;
	}
	x->used = ++c->clock;
	return x;
}

/* ---- postings ------------------------------------------------------------ */

/* Appends the FTS5 string for one scope's token: "scope\x1Ftoken", quoted. */
static void scoped_phrase(struct zc_buf *q, const char *scope, const char *tok)
{
	zc_buf_addc(q, '"');
	for (const char *p = scope; *p; p++) {
		if (*p == '"')
			zc_buf_addc(q, '"');
		zc_buf_addc(q, *p);
	}
	zc_buf_addc(q, '\x1f');
	for (const char *p = tok; *p; p++) {
		if (*p == '"')
			zc_buf_addc(q, '"');
		zc_buf_addc(q, *p);
	}
	zc_buf_addc(q, '"');
}

/* Postings lists of at least this many rows are read in one call
 * (zc_postings); shorter ones a statement row each: the call's second
 * seek (xQueryPhrase opens a cursor of its own) costs more than it saves
 * on a few rows (callgrind, zcor-bench turn and recall). */
#define LEX_ONE_CALL_ROWS 24

/* The order of a token's postings as recall reads them: by impact, the
 * term frequency first, the newest among equal ones (issue 17 review: the
 * newest `limit` once decided which records could be candidates at all,
 * and an old record saying the word three times lost to newer ones
 * saying it once). */
static int post_before(const struct post *a, const struct post *b)
{
	return a->tf != b->tf ? a->tf > b->tf : a->seq > b->seq;
}

static int by_impact(const void *a, const void *b)
{
	return post_before(a, b) ? -1 : post_before(b, a) ? 1 : 0;
}

/* A token that is one CJK character (zc_is_cjk, the tokenizer's own
 * test for a character it indexes alone): its window is
 * shape.scan_unigram. Decided by the token, not by the use, so one
 * cached read answers every use. */
static int one_cjk_char(const char *tok)
{
	size_t n = strlen(tok);
	unsigned cp = 0;
	return n > 0 && zc_utf8_next(tok, n, &cp) == n && zc_is_cjk(cp);
}

/* zc_fts_raw_postings for (scope, tok), into rows as entry_of keeps
 * them (seq = -rowid); *done 0 when the caller must ask FTS5. */
static int raw_read(struct zc_mem *m, const struct zc_lex_shape *sh, const char *scope, const char *tok,
		    int limit, long long scan, struct post *rows, int *n, int *done, struct zc_err *e)
{
	char term[LEX_KEY_MAX];
	size_t cn = strlen(scope), tn = strlen(tok);
	*n = 0;
	*done = 0;
	if (sh->fts5_cursor || cn + 1 + tn > sizeof(term))
		return ZCOR_OK;
	memcpy(term, scope, cn);
	term[cn] = '\x1f';
	memcpy(term + cn + 1, tok, tn);
	int k = 0;
	struct zc_posting *got = zc_malloc((size_t)limit * sizeof(*got));
	int rc = zc_fts_raw_postings(&m->store, term, cn + 1 + tn, limit, scan, got, &k, done, e);
	for (int i = 0; !rc && *done && i < k; i++) {
		rows[i].seq = -got[i].rowid;
		rows[i].tf = got[i].tf;
	}
	*n = !rc && *done ? k : 0;
	zc_free(got);
	return rc;
}

/*
 * The token's `limit` postings of most impact in one scope with their
 * term frequencies, in post_before order: every posting when there are at
 * most `limit` (df, from recall_df), else the `limit` of highest tf among
 * the list's newest shape.scan (zc_postings by_tf: one walk of them, in
 * one call; the whole list when scan is 0), the newest among equal tf. A
 * list of fewer rows than LEX_ONE_CALL_ROWS is read a statement row each.
 */
static int entry_of(struct zc_mem *m, struct zc_lex_cache *c, const char *scope, const char *tok,
		    int limit, int df, struct lexent **out, struct zc_err *e)
{
	struct lexent *x = *out = slot_for(c, scope, tok, 0);
	if (limit > ZC_POSTINGS_MAX)
		limit = ZC_POSTINGS_MAX;
	const struct zc_lex_shape *sh = zc_lex_shape_of(c);
	int scan = one_cjk_char(tok) ? sh->scan_unigram : sh->scan;
	/* the newest rows the best are chosen from: one window for every use
	 * of a token (word, character, feedback), so what the cache holds
	 * from one use answers for another as a cold read would; an entry of
	 * other rows (a shape with a window below a use's count) is read
	 * again — the answer must not depend on what the cache holds */
	long long window = scan > 0 ? (scan > limit ? scan : limit) : df;
	int covered = (int)(window < df ? window : df);
	if (!x || (x->limit && x->covered == covered && (x->n < x->limit || x->limit >= limit)))
		return ZCOR_OK; /* no such token, or read already */
	struct zc_buf q = ZC_BUF_INIT;
	scoped_phrase(&q, scope, tok);
	int by_tf = df > limit;
	int one_call = by_tf || df >= LEX_ONE_CALL_ROWS;
	struct post *rows = zc_malloc((size_t)limit * sizeof(*rows));
	int n = 0, step, rc = ZCOR_OK, done = 0;
	long long scan_arg = !by_tf ? 0 : scan > 0 ? window : -1;
	/* a list read in one call comes from the index's own tables
	 * (store/fts_raw.c), FTS5 when that cannot answer; a short one
	 * costs less as FTS5's rows (the tables' seek in each segment is
	 * most of a read of a few rows: callgrind, zcor-bench turn at 1k) */
	if (one_call && (rc = raw_read(m, sh, scope, tok, limit, scan_arg, rows, &n, &done, e)))
		goto out;
	if (done)
		goto read;
	sqlite3_stmt *st = zc_stmt(&m->store,
				   one_call ? "SELECT zc_postings(recall_fts, ?2, ?3) FROM recall_fts WHERE recall_fts "
					      "MATCH ?1 LIMIT 1"
					    : "SELECT -rowid, zc_tf(recall_fts) FROM recall_fts WHERE recall_fts "
					      "MATCH ?1 ORDER BY rowid LIMIT ?2",
				   e);
	if (!st) {
		rc = e->code;
		goto out;
	}
	sqlite3_bind_text(st, 1, q.p, (int)q.len, SQLITE_STATIC);
	sqlite3_bind_int(st, 2, limit);
	if (one_call)
		sqlite3_bind_int64(st, 3, scan_arg);
	while ((step = sqlite3_step(st)) == SQLITE_ROW && n < limit) {
		if (!one_call) {
			rows[n].seq = sqlite3_column_int64(st, 0);
			rows[n].tf = sqlite3_column_int(st, 1);
			n++;
			continue;
		}
		const char *p = sqlite3_column_blob(st, 0);
		int k = sqlite3_column_bytes(st, 0) / (int)sizeof(struct zc_posting);
		for (int i = 0; i < k && n < limit; i++) {
			struct zc_posting one;
			memcpy(&one, p + (size_t)i * sizeof(one), sizeof(one));
			rows[n].seq = -one.rowid;
			rows[n++].tf = one.tf;
		}
		break;
	}
	sqlite3_reset(st);
	if (step != SQLITE_DONE && step != SQLITE_ROW) {
		rc = zc_store_fail(&m->store, step, e, "recall (lexical postings)");
		goto out;
	}
read:
	if (!by_tf) /* by_tf hands them over in this order already */
		qsort(rows, (size_t)n, sizeof(*rows), by_impact);
	zc_free(x->rows);
	x->n = n;
	x->limit = limit;
	x->covered = covered;
	x->rows = n ? zc_realloc(rows, (size_t)n * sizeof(*rows)) : NULL;
	if (!n)
		zc_free(rows);
	rows = NULL;
out:
	zc_free(rows);
	zc_buf_release(&q);
	return rc;
}

/*
 * The conversation's `limit` visible postings of most impact of a token
 * (into dst->n, dst->rows; dst->gdf and dst->sdf set by df_lookup):
 * global's and its scope's, merged in post_before order. A record is in
 * one scope, so the two lists are disjoint and the first `limit` of each
 * hold the first `limit` of both. A scope where the token is in no record (df 0, from
 * recall_df, kept with recall_fts by the same statements) is not asked.
 */
static int postings_of(struct zc_mem *m, struct zc_lex_cache *c, const char *conv, const char *tok,
		       int limit, struct plist *dst, struct zc_err *e)
{
	struct lexent *x = NULL;
	struct plist g = {0, 0, NULL, 0, 0};
	int rc = ZCOR_OK;
	dst->n = 0;
	dst->rows = NULL;
	if (dst->gdf > 0) {
		if ((rc = entry_of(m, c, "global", tok, limit, dst->gdf, &x, e)))
			return rc;
		plist_take(&g, x, limit); /* a copy: the scope's entry may take its slot */
	}
	if (dst->sdf <= 0 || is_global(conv)) {
		dst->n = g.n;
		dst->rows = g.rows;
		return ZCOR_OK;
	}
	if ((rc = entry_of(m, c, conv, tok, limit, dst->sdf, &x, e))) {
		zc_free(g.rows);
		return rc;
	}
	int sn = x ? (x->n < limit ? x->n : limit) : 0, gi = 0, si = 0;
	if (g.n + sn)
		dst->rows = zc_malloc((size_t)(g.n + sn) * sizeof(*dst->rows));
	while (dst->n < limit && (gi < g.n || si < sn)) {
		int from_g = si >= sn || (gi < g.n && post_before(&g.rows[gi], &x->rows[si]));
		dst->rows[dst->n++] = from_g ? g.rows[gi++] : x->rows[si++];
	}
	zc_free(g.rows);
	return ZCOR_OK;
}

/* The df of tok in one scope (recall_df; 0 when it is in none of its
 * records), from the cache or the store, and kept. */
static int part_df(struct zc_mem *m, struct zc_lex_cache *c, const char *scope, const char *tok,
		   int *df, struct zc_err *e)
{
	struct lexent *x = slot_for(c, scope, tok, 1);
	if (x && x->has_df) {
		*df = x->df;
		return ZCOR_OK;
	}
	sqlite3_stmt *st =
		zc_stmt(&m->store, "SELECT df FROM recall_df WHERE token = ?1 AND scope = ?2", e);
	if (!st)
		return e->code;
	sqlite3_bind_text(st, 1, tok, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, scope, -1, SQLITE_STATIC);
	int step = sqlite3_step(st);
	*df = step == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
	sqlite3_reset(st);
	if (step != SQLITE_ROW && step != SQLITE_DONE)
		return zc_store_fail(&m->store, step, e, "recall (document frequencies)");
	if (x) {
		x->df = *df;
		x->has_df = 1;
	}
	return ZCOR_OK;
}

/*
 * The visible df of each token (tok[i], n of them): how many records of
 * global and of the conversation's scope hold it (recall_df), in df[i],
 * and the two parts in gdf[i] and sdf[i]. A part the cache does not hold
 * is one lookup by recall_df's key.
 */
static int df_lookup(struct zc_mem *m, struct zc_lex_cache *c, const char *conv,
		     const char *const *tok, size_t n, int *df, int *gdf, int *sdf, struct zc_err *e)
{
	int scoped = !is_global(conv), rc = ZCOR_OK;
	for (size_t i = 0; i < n && !rc; i++) {
		gdf[i] = sdf[i] = 0;
		if (!(rc = part_df(m, c, "global", tok[i], &gdf[i], e)) && scoped)
			rc = part_df(m, c, conv, tok[i], &sdf[i], e);
		df[i] = gdf[i] + sdf[i];
	}
	return rc;
}

/* ---- the query --------------------------------------------------------- */

#define QT_PRED 4

struct qtok {
	char tok[ZC_LEX_TOKEN_MAX + 1];
	double qtf;       /* occurrences, those in earlier messages counted `older` each */
	int syn_only;     /* only a synonym of a term brought it in */
	int unigram;      /* a single CJK character */
	int function;     /* a function word (ZC_LEX_FUNCTION) */
	long last;        /* position of its last occurrence in the batch */
	int pred[QT_PRED]; /* tokens that came right before it in one CJK run */
	int npred;
	double qw, idf;
	int used;
	struct plist pl;
};

struct lexq {
	struct qtok *t;
	size_t n, cap;
	json_t *index; /* token -> index */
	long pos;
	/* the occurrence being read */
	double weight;
	double unigram_w, function_w;
	int syn;
	int prev;      /* index of the previous token of this text, or -1 */
	size_t prev_end;
};

static int qtok_index(struct lexq *q, const char *tok, size_t len)
{
	char key[ZC_LEX_TOKEN_MAX + 1];
	memcpy(key, tok, len); /* len <= ZC_LEX_TOKEN_MAX */
	key[len] = '\0';
	json_t *v = json_object_get(q->index, key);
	if (v)
		return (int)json_integer_value(v);
	if (q->n == q->cap) {
		q->cap = q->cap ? q->cap * 2 : 64;
		q->t = zc_realloc(q->t, q->cap * sizeof(*q->t));
	}
	struct qtok *t = &q->t[q->n];
	memset(t, 0, sizeof(*t));
	memcpy(t->tok, tok, len);
	t->tok[len] = '\0';
	t->syn_only = 1;
	json_object_set_new(q->index, key, json_integer((json_int_t)q->n));
	return (int)q->n++;
}

static int query_token(void *ud, const char *tok, size_t len, size_t start, size_t end, int flags)
{
	struct lexq *q = ud;
	int uni = flags & ZC_LEX_UNIGRAM;
	if ((uni && q->unigram_w <= 0) || ((flags & ZC_LEX_FUNCTION) && q->function_w <= 0))
		return 0;
	if (q->syn && uni)
		return 0; /* a synonym is a word: its characters are no evidence */
	int i = qtok_index(q, tok, len);
	struct qtok *t = &q->t[i];
	t->function = (flags & ZC_LEX_FUNCTION) != 0;
	if (q->syn)
		return 0;
	if (uni) { /* a character: weighed apart, and no link in the chain of bigrams */
		t->qtf += q->weight;
		t->syn_only = 0;
		t->unigram = 1;
		t->last = q->pos++;
		return 0;
	}
	t->qtf += q->weight;
	t->syn_only = 0;
	t->last = q->pos++;
	/* the bigram before it overlaps it: both come from one run, and a
	 * record holding both most likely holds the longer word they spell */
	if (q->prev >= 0 && start < q->prev_end && q->prev != i) {
		int seen = 0;
		for (int k = 0; k < t->npred; k++)
			seen |= t->pred[k] == q->prev;
		if (!seen && t->npred < QT_PRED)
			t->pred[t->npred++] = q->prev;
	}
	q->prev = i;
	q->prev_end = end;
	return 0;
}

static void read_text(struct lexq *q, const char *s, double weight, int syn)
{
	q->weight = weight;
	q->syn = syn;
	q->prev = -1;
	q->prev_end = 0;
	zc_lex_tokens(s, strlen(s), ZC_TOKENS_QUERY, query_token, q);
}

static int by_weight(const void *a, const void *b)
{
	const struct qtok *x = a, *y = b;
	if (x->qw != y->qw)
		return x->qw < y->qw ? 1 : -1;
	return x->last < y->last ? 1 : x->last > y->last ? -1 : 0;
}

/* The batch's tokens with their weights; at most ZC_LEX_QUERY_TOKENS. */
static void build_query(struct lexq *q, const struct zc_lex_query *in, const struct zc_lex_shape *sh,
			int *dropped)
{
	size_t i, nmsg = json_array_size(in->messages);
	json_t *v;
	q->unigram_w = sh->unigram;
	q->function_w = sh->function;
	json_array_foreach(in->messages, i, v)
		read_text(q, json_string_value(v), i + 1 == nmsg ? 1.0 : sh->older, 0);
	json_array_foreach(in->extra, i, v) read_text(q, json_string_value(v), 1.0, 0);
	json_array_foreach(in->synonyms, i, v) read_text(q, json_string_value(v), 0, 1);
	for (i = 0; i < q->n; i++) {
		struct qtok *t = &q->t[i];
		t->qw = t->syn_only ? sh->synonym : t->qtf * (sh->k3 + 1) / (sh->k3 + t->qtf);
		if (t->unigram)
			t->qw *= sh->unigram;
		if (t->function)
			t->qw *= sh->function;
	}
	*dropped = 0;
	if (q->n > ZC_LEX_QUERY_LOOKUP) {
		/* the heaviest first, then the newest; predecessor links are
		 * by index, so they are dropped with the order */
		qsort(q->t, q->n, sizeof(*q->t), by_weight);
		*dropped = (int)(q->n - ZC_LEX_QUERY_LOOKUP);
		q->n = ZC_LEX_QUERY_LOOKUP;
		for (i = 0; i < q->n; i++)
			q->t[i].npred = 0;
	}
}

/* After the df lookup: at most ZC_LEX_QUERY_TOKENS tokens go on to the
 * postings. Tokens no visible record holds go first (they score nothing,
 * and once took slots from the words at the start of a long batch); then,
 * of the rest, the lightest by qw · idf (the commonest, the repeated
 * least). The order and the predecessor links of those kept stay. */
struct keep_key {
	size_t at;
	double w;
	long last;
};

static int by_keep(const void *a, const void *b)
{
	const struct keep_key *x = a, *y = b;
	if (x->w != y->w)
		return x->w < y->w ? 1 : -1;
	return x->last < y->last ? 1 : x->last > y->last ? -1 : 0;
}

static void cap_query(struct lexq *q, long long N, int *dropped)
{
	size_t n = 0, i;
	if (q->n <= ZC_LEX_QUERY_TOKENS)
		return;
	for (i = 0; i < q->n; i++)
		n += q->t[i].pl.df > 0;
	struct keep_key *k = zc_calloc(q->n, sizeof(*k));
	int *to = zc_calloc(q->n, sizeof(*to));
	for (i = 0; i < q->n; i++) {
		double df = q->t[i].pl.df;
		k[i].at = i;
		k[i].last = q->t[i].last;
		k[i].w = df > 0 ? q->t[i].qw * log(1 + ((double)N - df + 0.5) / (df + 0.5)) : -1;
	}
	qsort(k, q->n, sizeof(*k), by_keep);
	size_t keep = n < ZC_LEX_QUERY_TOKENS ? n : ZC_LEX_QUERY_TOKENS;
	for (i = 0; i < q->n; i++)
		to[i] = -1;
	for (i = 0; i < keep; i++)
		to[k[i].at] = 0;
	size_t j = 0;
	for (i = 0; i < q->n; i++) {
		if (to[i] < 0)
			continue;
		to[i] = (int)j;
		if (j != i)
			q->t[j] = q->t[i];
		j++;
	}
	for (i = 0; i < j; i++) {
		struct qtok *t = &q->t[i];
		int np = 0;
		for (int p = 0; p < t->npred; p++)
			if (to[t->pred[p]] >= 0)
				t->pred[np++] = to[t->pred[p]];
		t->npred = np;
	}
	*dropped += (int)(q->n - j);
	q->n = j;
	zc_free(k);
	zc_free(to);
}

/* ---- scoring ------------------------------------------------------------- */

struct cand {
	sqlite3_int64 seq;
	double approx;  /* first pass: at the mean length */
	double score;   /* BM25 (query mass 1) */
	double fb;      /* feedback tokens' BM25 */
	double ctx;
	double total;   /* score + feedback + context, weighted: the order handed back */
	long long dl;
	int matched;
	int words;      /* matched tokens that are not single characters */
	int *tf;        /* per query token, kept candidates only */
};

struct run {
	struct zc_mem *m;
	struct zc_lex_cache *cache;
	const struct zc_lex_shape *sh;
	struct zc_err *e;
	struct lexq q;
	long long N;
	double avgdl;
	struct cand *c;
	size_t nc, cc;
	struct zc_seqmap where;
};

static struct cand *cand_of(struct run *r, sqlite3_int64 seq)
{
	size_t *at = zc_seqmap_slot(&r->where, seq);
	if (!*at) {
		if (r->nc == r->cc) {
			r->cc = r->cc ? r->cc * 2 : 256;
			r->c = zc_realloc(r->c, r->cc * sizeof(*r->c));
		}
		memset(&r->c[r->nc], 0, sizeof(r->c[r->nc]));
		r->c[r->nc].seq = seq;
		*at = ++r->nc;
	}
	return &r->c[*at - 1];
}

static double tf_part(const struct zc_lex_shape *sh, double tf, double len_ratio)
{
	return tf * (sh->k1 + 1) / (tf + sh->k1 * (1 - sh->b + sh->b * len_ratio));
}

static int by_approx(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	if (x->approx != y->approx)
		return x->approx < y->approx ? 1 : -1;
	return x->seq < y->seq ? 1 : x->seq > y->seq ? -1 : 0;
}

/* Moves the best k of c[0..n) by by_approx to c[0..k), in order: most
 * candidates are not kept, so a heap of the best k so far (its root the
 * worst of them), then a sort of those k. */
static void heap_down(struct cand *h, size_t k, size_t i)
{
	for (;;) {
		size_t w = i, l = 2 * i + 1, r = l + 1;
		if (l < k && by_approx(&h[l], &h[w]) > 0)
			w = l;
		if (r < k && by_approx(&h[r], &h[w]) > 0)
			w = r;
		if (w == i)
			return;
		struct cand t = h[i];
		h[i] = h[w];
		h[w] = t;
		i = w;
	}
}

static void select_best(struct cand *c, size_t n, size_t k)
{
	if (k < n && k > 0) {
		for (size_t i = k / 2; i-- > 0;)
			heap_down(c, k, i);
		for (size_t i = k; i < n; i++) {
			if (by_approx(&c[i], &c[0]) < 0) { /* better than the worst kept */
				struct cand t = c[0];
				c[0] = c[i];
				c[i] = t;
				heap_down(c, k, 0);
			}
		}
	}
	qsort(c, k, sizeof(*c), by_approx);
}

/* SQLite's varint, as FTS5 writes a row's token counts. */
static const unsigned char *get_varint(const unsigned char *p, const unsigned char *end, long long *v)
{
	unsigned long long x = 0;
	for (int i = 0; i < 9 && p < end; i++) {
		if (i == 8) {
			x = (x << 8) | *p++;
			break;
		}
		x = (x << 7) | (*p & 0x7f);
		if (!(*p++ & 0x80))
			break;
	}
	*v = (long long)x;
	return p;
}

/* The length in tokens of a kept candidate (recall_fts's own count),
 * kept per handle like the postings. */
static int cand_length(struct run *r, struct cand *x)
{
	size_t at = (size_t)((unsigned long long)x->seq * 0x9E3779B97F4A7C15ULL >> 40) & (LEN_SLOTS - 1);
	if (r->cache->len[at].seq == x->seq) {
		x->dl = r->cache->len[at].dl;
		return ZCOR_OK;
	}
	sqlite3_stmt *st = zc_stmt(&r->m->store, "SELECT sz FROM recall_fts_docsize WHERE id = ?1", r->e);
	if (!st)
		return r->e->code;
	sqlite3_bind_int64(st, 1, -x->seq); /* recall_fts's rowid is -seq (store.c) */
	int step = sqlite3_step(st);
	x->dl = (long long)(r->avgdl + 0.5);
	if (step == SQLITE_ROW) {
		const unsigned char *p = sqlite3_column_blob(st, 0);
		const unsigned char *end = p + sqlite3_column_bytes(st, 0);
		if (p && p < end)
			get_varint(p, end, &x->dl);
		r->cache->len[at].seq = x->seq;
		r->cache->len[at].dl = x->dl;
	}
	sqlite3_reset(st);
	return step == SQLITE_ROW || step == SQLITE_DONE
		       ? ZCOR_OK
		       : zc_store_fail(&r->m->store, step, r->e, "recall (lengths)");
}

/* 1 if the token t is not to be scored: in no visible record, or in more
 * than skip_fraction of them (and more than ZC_LEX_SKIP_FLOOR, so that a
 * small store keeps all its words); sets t->idf otherwise. */
static int weigh(struct run *r, struct qtok *t, int *common)
{
	int df = t->pl.df;
	*common = 0;
	if (df <= 0)
		return 1;
	if ((double)df > r->sh->skip_fraction * (double)r->N && df > ZC_LEX_SKIP_FLOOR) {
		*common = 1;
		return 1;
	}
	double N = (double)r->N;
	t->idf = log(1 + (N - df + 0.5) / (df + 0.5));
	if (t->idf <= 0)
		return 1;
	return 0;
}

/* The exact BM25 of the kept candidates: their lengths, the discount of
 * a bigram continuing the previous one, the query mass. */
static int exact_scores(struct run *r, size_t keep, double mass)
{
	const struct zc_lex_shape *sh = r->sh;
	for (size_t k = 0; k < keep; k++) {
		struct cand *x = &r->c[k];
		int rc = cand_length(r, x);
		if (rc)
			return rc;
		double ratio = r->avgdl > 0 ? (double)x->dl / r->avgdl : 1;
		x->score = 0;
		x->matched = 0;
		x->words = 0;
		for (size_t i = 0; i < r->q.n; i++) {
			const struct qtok *t = &r->q.t[i];
			if (!t->used || !x->tf[i])
				continue;
			double g = 1;
			for (int p = 0; p < t->npred; p++)
				if (r->q.t[t->pred[p]].used && x->tf[t->pred[p]])
					g = sh->continuation;
			x->score += t->qw * t->idf * g * tf_part(sh, x->tf[i], ratio);
			x->matched++;
			x->words += !t->unigram;
		}
		x->score = mass > 0 ? x->score / mass : 0;
	}
	return ZCOR_OK;
}

static int by_score(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	if (x->score != y->score)
		return x->score < y->score ? 1 : -1;
	return x->seq < y->seq ? 1 : x->seq > y->seq ? -1 : 0;
}

/* The distinct query-mode tokens of one record's text (feedback). */
static int record_tokens(struct run *r, sqlite3_int64 seq, json_t *set)
{
	sqlite3_stmt *st = zc_stmt(&r->m->store,
				   "SELECT title || char(10) || keywords || char(10) || content FROM nodes "
				   "WHERE seq = ?1",
				   r->e);
	if (!st)
		return r->e->code;
	sqlite3_bind_int64(st, 1, seq);
	int step = sqlite3_step(st);
	if (step == SQLITE_ROW) {
		char *norm = zc_norm((const char *)sqlite3_column_text(st, 0));
		struct lexq tmp = {.index = json_object()};
		read_text(&tmp, norm, 1, 0);
		for (size_t i = 0; i < tmp.n; i++)
			json_object_set_new(set, tmp.t[i].tok, json_true());
		zc_free(tmp.t);
		json_decref(tmp.index);
		zc_free(norm);
	}
	sqlite3_reset(st);
	return step == SQLITE_ROW || step == SQLITE_DONE
		       ? ZCOR_OK
		       : zc_store_fail(&r->m->store, step, r->e, "recall (feedback)");
}

struct fbterm {
	char tok[ZC_LEX_TOKEN_MAX + 1];
	int docs;
	double share; /* Σ of the scores of the records holding it / Σ of all of theirs */
	double idf, weight;
	int ok; /* looked up, and neither absent nor too common */
	struct plist pl;
};

static int by_fb(const void *a, const void *b)
{
	const struct fbterm *x = a, *y = b;
	if (x->weight != y->weight)
		return x->weight < y->weight ? 1 : -1;
	return strcmp(x->tok, y->tok);
}

/*
 * Pseudo-relevance feedback: the tokens the query lacks that at least
 * feedback_min of its best feedback_docs records hold, at most
 * feedback_terms of them by share × idf, where a token's share is the
 * part of those records' scores that records holding it carry; each
 * weighs its share. Their BM25, over their own mass (so 0..~1 like the
 * lexical feature), is the feedback feature of every candidate, and a
 * record only they find joins the candidates.
 */
static int feedback(struct run *r, struct zc_lex_cache *c, const char *conv, size_t *keep,
		    json_t *used_terms)
{
	const struct zc_lex_shape *sh = r->sh;
	size_t top = 0;
	json_t *count = json_object(), *share = json_object();
	int rc = ZCOR_OK;
	double sum = 0;
	for (size_t k = 0; k < *keep && k < (size_t)sh->feedback_docs; k++)
		sum += r->c[k].score > 0 ? r->c[k].score : 0;
	for (size_t k = 0; k < *keep && top < (size_t)sh->feedback_docs; k++) {
		if (r->c[k].score <= 0)
			break;
		json_t *set = json_object();
		if ((rc = record_tokens(r, r->c[k].seq, set))) {
			json_decref(set);
			goto out;
		}
		const char *tok;
		json_t *v;
		json_object_foreach(set, tok, v) {
			json_t *n = json_object_get(count, tok), *w = json_object_get(share, tok);
			json_object_set_new(count, tok, json_integer(n ? json_integer_value(n) + 1 : 1));
			json_object_set_new(share, tok, json_real((w ? json_real_value(w) : 0) + r->c[k].score / sum));
		}
		json_decref(set);
		top++;
	}
	if (top < (size_t)sh->feedback_min)
		goto out;
	size_t nt = 0, cap = json_object_size(count);
	struct fbterm *ft = zc_calloc(cap ? cap : 1, sizeof(*ft));
	const char *tok;
	json_t *v;
	json_object_foreach(count, tok, v) {
		if (json_integer_value(v) < sh->feedback_min || json_object_get(r->q.index, tok) ||
		    strlen(tok) > ZC_LEX_TOKEN_MAX)
			continue;
		snprintf(ft[nt].tok, sizeof(ft[nt].tok), "%s", tok);
		ft[nt].docs = (int)json_integer_value(v);
		ft[nt].share = json_real_value(json_object_get(share, tok));
		nt++;
	}
	/* their df in one lookup; then the postings of the chosen ones only */
	const char **toks = zc_calloc(nt ? nt : 1, sizeof(*toks));
	int *df = zc_calloc(3 * (nt ? nt : 1), sizeof(*df));
	for (size_t i = 0; i < nt; i++)
		toks[i] = ft[i].tok;
	rc = df_lookup(r->m, c, conv, toks, nt, df, df + nt, df + 2 * nt, r->e);
	for (size_t i = 0; i < nt && !rc; i++) {
		ft[i].pl.gdf = df[nt + i];
		ft[i].pl.sdf = df[2 * nt + i];
		struct qtok t = {.pl = {df[i], 0, NULL, 0, 0}};
		int common;
		if (weigh(r, &t, &common))
			continue;
		ft[i].ok = 1;
		ft[i].idf = t.idf;
		ft[i].weight = ft[i].share * t.idf;
	}
	zc_free(toks);
	zc_free(df);
	if (!rc) {
		qsort(ft, nt, sizeof(*ft), by_fb);
		for (size_t i = 0; i < nt && i < (size_t)sh->feedback_terms && ft[i].ok && !rc; i++) {
			rc = postings_of(r->m, c, conv, ft[i].tok, sh->postings_feedback, &ft[i].pl, r->e);
		}
	}
	if (rc)
		goto free_terms;
	size_t nuse = 0;
	while (nuse < nt && nuse < (size_t)sh->feedback_terms && ft[nuse].ok)
		nuse++;
	/* the kept candidates are r->c[0..keep); a record only feedback finds
	 * is added behind them, with its length read like theirs */
	size_t first_new = *keep;
	double fmass = 0; /* the feedback query's own mass: the feature is 0..~1 like lexical */
	for (size_t i = 0; i < nuse; i++)
		fmass += ft[i].share * ft[i].idf;
	for (size_t i = 0; i < nuse; i++) {
		double qw = ft[i].share;
		json_array_append_new(used_terms, json_string(ft[i].tok));
		for (int k = 0; k < ft[i].pl.n; k++) {
			const struct post *p = &ft[i].pl.rows[k];
			size_t *at = zc_seqmap_find(&r->where, p->seq);
			if (!at && r->nc - first_new >= (size_t)sh->keep / 4)
				continue; /* enough new records */
			struct cand *x = at ? &r->c[*at - 1] : NULL;
			if (!x) {
				x = cand_of(r, p->seq);
				x->dl = -1;
			}
			if (x->dl < 0 && (rc = cand_length(r, x)))
				break;
			double ratio = r->avgdl > 0 ? (double)x->dl / r->avgdl : 1;
			x->fb += qw * ft[i].idf * tf_part(sh, p->tf, ratio) / fmass;
		}
		if (rc)
			break;
	}
	*keep = r->nc;
free_terms:
	for (size_t i = 0; i < nt; i++)
		zc_free(ft[i].pl.rows);
	zc_free(ft);
out:
	json_decref(count);
	json_decref(share);
	return rc;
}

/* Dialogue context: the records written right before and right after a
 * strong hit in its scope, within context_ms, get the hit's score. */
#define CONTEXT_HITS 5
static int context(struct run *r, size_t *keep, double wf)
{
	const struct zc_lex_shape *sh = r->sh;
	double best = 0;
	for (size_t k = 0; k < *keep; k++)
		if (r->c[k].score + wf * r->c[k].fb > best)
			best = r->c[k].score + wf * r->c[k].fb;
	if (best <= 0)
		return ZCOR_OK;
	/* the neighbour before, then after: first at the same instant (a
	 * batch written at once), else the nearest within the window; each a
	 * seek in (scope, tier, updated_at, seq). The nearest recall may
	 * show (issue 17 review): a superseded, 存疑 or document record in
	 * between is passed over, not given the credit nobody then sees */
#define NB "SELECT n.seq FROM nodes n INDEXED BY nodes_scope_recent WHERE n.scope = ?1 AND " \
	   ZC_MAY_INJECT_SQL("n.", "n.") " AND "
	static const char *const sql[2][2] = {
		{NB "n.updated_at = ?2 AND n.seq < ?3 ORDER BY n.seq DESC LIMIT 1",
		 NB "n.updated_at >= ?2 - ?4 AND n.updated_at < ?2 ORDER BY n.updated_at DESC, n.seq DESC LIMIT 1"},
		{NB "n.updated_at = ?2 AND n.seq > ?3 ORDER BY n.seq LIMIT 1",
		 NB "n.updated_at > ?2 AND n.updated_at <= ?2 + ?4 ORDER BY n.updated_at, n.seq LIMIT 1"},
	};
#undef NB
	/* the strong hits: of the best CONTEXT_HITS, those at least half as good as the best */
	sqlite3_int64 strong[CONTEXT_HITS];
	double sscore[CONTEXT_HITS];
	size_t ns = 0;
	for (size_t k = 0; k < *keep && k < CONTEXT_HITS; k++) {
		double s = r->c[k].score + wf * r->c[k].fb;
		if (s >= 0.5 * best) {
			strong[ns] = r->c[k].seq;
			sscore[ns++] = s;
		}
	}
	for (size_t i = 0; i < ns; i++) {
		sqlite3_stmt *st = zc_stmt(&r->m->store, "SELECT scope, updated_at FROM nodes WHERE seq = ?1", r->e);
		if (!st)
			return r->e->code;
		sqlite3_bind_int64(st, 1, strong[i]);
		if (sqlite3_step(st) != SQLITE_ROW) {
			sqlite3_reset(st);
			continue;
		}
		char scope[128];
		snprintf(scope, sizeof(scope), "%s", (const char *)sqlite3_column_text(st, 0));
		sqlite3_int64 at = sqlite3_column_int64(st, 1);
		sqlite3_reset(st);
		for (int dir = 0; dir < 2; dir++) {
			int step = SQLITE_DONE;
			for (int q = 0; q < 2 && step == SQLITE_DONE; q++) {
				st = zc_stmt(&r->m->store, sql[dir][q], r->e);
				if (!st)
					return r->e->code;
				sqlite3_bind_text(st, 1, scope, -1, SQLITE_TRANSIENT);
				sqlite3_bind_int64(st, 2, at);
				if (q == 0)
					sqlite3_bind_int64(st, 3, strong[i]);
				else
					sqlite3_bind_int64(st, 4, (sqlite3_int64)sh->context_ms);
				step = sqlite3_step(st);
				if (step == SQLITE_ROW) {
					sqlite3_int64 nb = sqlite3_column_int64(st, 0);
					size_t *pos = zc_seqmap_find(&r->where, nb);
					struct cand *x = pos ? &r->c[*pos - 1] : cand_of(r, nb);
					if (!pos)
						x->dl = -1;
					if (sscore[i] > x->ctx)
						x->ctx = sscore[i];
				}
				sqlite3_reset(st);
			}
			if (step != SQLITE_ROW && step != SQLITE_DONE)
				return zc_store_fail(&r->m->store, step, r->e, "recall (context)");
		}
	}
	*keep = r->nc;
	return ZCOR_OK;
}

static int by_total(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return x->seq < y->seq ? 1 : x->seq > y->seq ? -1 : 0;
}

int zc_lex_run(struct zc_mem *m, struct zc_lex_cache **cache, const struct zc_lex_query *in,
	       const struct zc_lex_shape *sh, double w_feedback, double w_context,
	       struct zc_lex_hit **hits, size_t *nhits, struct zc_lex_stats *stats, struct zc_err *e)
{
	struct run r = {.m = m, .sh = sh, .e = e};
	struct zc_lex_cache *c = NULL;
	int rc, step;
	r.q.index = json_object();
	memset(stats, 0, sizeof(*stats));
	*hits = NULL;
	*nhits = 0;
	build_query(&r.q, in, sh, &stats->dropped);
	stats->tokens = (int)r.q.n + stats->dropped;
	sqlite3_stmt *st = zc_stmt(&m->store,
				   "SELECT coalesce(sum(docs), 0), coalesce(sum(tokens), 0) FROM recall_stats "
				   "WHERE scope IN ('global', ?1)",
				   e);
	if (!st) {
		rc = e->code;
		goto out;
	}
	sqlite3_bind_text(st, 1, in->conversation, -1, SQLITE_TRANSIENT);
	step = sqlite3_step(st);
	if (step == SQLITE_ROW) {
		r.N = sqlite3_column_int64(st, 0);
		r.avgdl = r.N > 0 ? (double)sqlite3_column_int64(st, 1) / (double)r.N : 0;
	}
	sqlite3_reset(st);
	if (step != SQLITE_ROW) {
		rc = zc_store_fail(&m->store, step, e, "recall (statistics)");
		goto out;
	}
	stats->docs = r.N;
	stats->avgdl = r.avgdl;
	if (r.N <= 0 || r.q.n == 0) {
		rc = ZCOR_OK;
		goto out;
	}
	if ((rc = cache_fresh(m, cache, in->conversation, &c, e)))
		goto out;
	r.cache = c;
	/* every token's df in one lookup; the postings only of those scored */
	const char **toks = zc_calloc(r.q.n, sizeof(*toks));
	int *df = zc_calloc(3 * r.q.n, sizeof(*df));
	for (size_t i = 0; i < r.q.n; i++)
		toks[i] = r.q.t[i].tok;
	rc = df_lookup(m, c, in->conversation, toks, r.q.n, df, df + r.q.n, df + 2 * r.q.n, e);
	for (size_t i = 0; i < r.q.n; i++) {
		r.q.t[i].pl.df = df[i];
		r.q.t[i].pl.gdf = df[r.q.n + i];
		r.q.t[i].pl.sdf = df[2 * r.q.n + i];
	}
	zc_free(toks);
	zc_free(df);
	if (rc)
		goto out;
	cap_query(&r.q, r.N, &stats->dropped);
	/* first pass: every posting of every token, at the mean length */
	double mass = 0;
	for (size_t i = 0; i < r.q.n; i++) {
		struct qtok *t = &r.q.t[i];
		int common;
		if (weigh(&r, t, &common)) {
			stats->skipped_common += common;
			continue;
		}
		if ((rc = postings_of(m, c, in->conversation, t->tok,
				      t->unigram ? sh->postings_unigram : sh->postings, &t->pl, e)))
			goto out;
		t->used = 1;
		stats->used++;
		mass += t->qw * t->idf;
		for (int k = 0; k < t->pl.n; k++)
			cand_of(&r, t->pl.rows[k].seq)->approx += t->qw * t->idf * tf_part(sh, t->pl.rows[k].tf, 1);
	}
	stats->mass = mass;
	if (r.nc == 0)
		goto out;
	/* the best `keep` go on, with their term frequencies per token */
	size_t keep = r.nc < (size_t)sh->keep ? r.nc : (size_t)sh->keep;
	select_best(r.c, r.nc, keep);
	r.nc = keep;
	zc_seqmap_clear(&r.where);
	for (size_t k = 0; k < keep; k++) {
		*zc_seqmap_slot(&r.where, r.c[k].seq) = k + 1;
		r.c[k].tf = zc_calloc(r.q.n, sizeof(int));
	}
	for (size_t i = 0; i < r.q.n; i++) {
		const struct qtok *t = &r.q.t[i];
		if (!t->used)
			continue;
		for (int k = 0; k < t->pl.n; k++) {
			size_t *at = zc_seqmap_find(&r.where, t->pl.rows[k].seq);
			if (at)
				r.c[*at - 1].tf[i] = t->pl.rows[k].tf;
		}
	}
	if ((rc = exact_scores(&r, keep, mass)))
		goto out;
	qsort(r.c, keep, sizeof(*r.c), by_score);
	zc_seqmap_clear(&r.where);
	for (size_t k = 0; k < keep; k++)
		*zc_seqmap_slot(&r.where, r.c[k].seq) = k + 1;
	if (w_feedback != 0 && sh->feedback_docs > 0 && sh->feedback_terms > 0) {
		stats->feedback = json_array();
		if ((rc = feedback(&r, c, in->conversation, &keep, stats->feedback)))
			goto out;
	}
	if (w_context != 0 && sh->context_ms > 0 && (rc = context(&r, &keep, w_feedback)))
		goto out;
	for (size_t k = 0; k < r.nc; k++)
		r.c[k].total = r.c[k].score + w_feedback * r.c[k].fb + w_context * r.c[k].ctx;
	qsort(r.c, r.nc, sizeof(*r.c), by_total);
	*hits = zc_calloc(r.nc ? r.nc : 1, sizeof(**hits));
	for (size_t k = 0; k < r.nc; k++)
		(*hits)[k] = (struct zc_lex_hit){r.c[k].seq, r.c[k].score, r.c[k].fb, r.c[k].ctx, r.c[k].matched,
						  r.c[k].words};
	*nhits = r.nc;
out:
	for (size_t k = 0; k < r.nc; k++)
		zc_free(r.c[k].tf);
	zc_free(r.c);
	zc_seqmap_clear(&r.where);
	for (size_t i = 0; i < r.q.n; i++)
		zc_free(r.q.t[i].pl.rows);
	zc_free(r.q.t);
	json_decref(r.q.index);
	return rc;
}
