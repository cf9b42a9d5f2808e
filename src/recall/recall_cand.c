/*
 * recall_cand.c — the candidates of a batch (SPEC §4): only records the
 * conversation may see (global + its own), current, hot and not 存疑 —
 * filtered before anything is scored: entity hits (terms table),
 * character-bigram IDF over nodes_fts (scored) or title/keyword phrase hits
 * (zcor), the speakers and @-mentioned people. Each stage reads at most a
 * bounded number of index entries, whatever the store's size; the token
 * lookups kept between messages (struct zc_recall_cache) are filled here.
 *
 * Recall layer, behind recall.h (recall_int.h is what the files of recall.c
 * share, not an interface). Reads the store inside the caller's read
 * transaction, through indexes only; never writes and never records history.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/json.h"
#include "base/timeutil.h"
#include "memory/sticker.h"
#include "recall/recall_int.h"
#include "text/norm.h"
#include "text/tokens.h"

static size_t *seqmap_slot(struct seqmap *m, sqlite3_int64 k)
{
	k++; /* keys are >= 0; 0 marks an empty slot */
	if ((m->n + 1) * 2 > m->cap) {
		struct seqmap old = *m;
		m->cap = old.cap ? old.cap * 2 : 128;
		m->key = zc_calloc(m->cap, sizeof(*m->key));
		m->val = zc_calloc(m->cap, sizeof(*m->val));
		m->n = 0;
		for (size_t i = 0; i < old.cap; i++)
			if (old.key[i])
				*seqmap_slot(m, old.key[i] - 1) = old.val[i];
		zc_free(old.key);
		zc_free(old.val);
	}
	size_t i = (size_t)((unsigned long long)k * 0x9E3779B97F4A7C15ULL >> 7) & (m->cap - 1);
	while (m->key[i] && m->key[i] != k)
		i = (i + 1) & (m->cap - 1);
	if (!m->key[i]) {
		m->key[i] = k;
		m->n++;
	}
	return &m->val[i];
}

void zc_recall_seqmap_clear(struct seqmap *m)
{
	zc_free(m->key);
	zc_free(m->val);
	memset(m, 0, sizeof(*m));
}

/* ---- candidates ------------------------------------------------------ */

struct item *zc_recall_item_of(struct recall *r, char kind, sqlite3_int64 seq)
{
	/* nodes and people share the map: a person's key is odd */
	sqlite3_int64 key = seq * 2 + (kind == 'p');
	size_t *at = seqmap_slot(&r->where, key);
	if (*at)
		return &r->it[*at - 1];
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 64;
		r->it = zc_realloc(r->it, r->cap * sizeof(*r->it));
	}
	struct item *x = &r->it[r->n];
	memset(x, 0, sizeof(*x));
	x->kind = kind;
	x->seq = seq;
	*at = ++r->n;
	return x;
}


void zc_recall_bind_conv(struct recall *r, sqlite3_stmt *st)
{
	sqlite3_bind_text(st, 9, r->ctx.conversation, -1, SQLITE_TRANSIENT);
}

/* Entity hits: nodes and people one of whose terms is an expanded term,
 * in this conversation's scope or global; for a very common term only the
 * most recent ZC_ENTITY_PER_TERM per scope. */
int zc_recall_entity_candidates(struct recall *r)
{
	size_t i;
	json_t *t;
	const char *scopes[2] = {"global", r->ctx.conversation};
	json_array_foreach(r->expanded, i, t) {
		for (int sc = 0; sc < 2; sc++) {
			sqlite3_stmt *st = zc_stmt(&r->m->store,
						   "SELECT kind, ref FROM terms WHERE term = ?1 AND scope = ?2 "
						   "ORDER BY kind DESC, ref DESC LIMIT ?3",
						   r->e);
			if (!st)
				return r->e->code;
			sqlite3_bind_text(st, 1, json_string_value(t), -1, SQLITE_TRANSIENT);
			sqlite3_bind_text(st, 2, scopes[sc], -1, SQLITE_STATIC);
			sqlite3_bind_int(st, 3, ZC_ENTITY_PER_TERM);
			int step;
			while ((step = sqlite3_step(st)) == SQLITE_ROW) {
				const char *kind = (const char *)sqlite3_column_text(st, 0);
				zc_recall_item_of(r, kind[0] == 'p' ? 'p' : 'n', sqlite3_column_int64(st, 1))->entity = 1;
			}
			sqlite3_reset(st);
			if (step != SQLITE_DONE)
				return zc_store_fail(&r->m->store, step, r->e, "recall (terms)");
		}
	}
	return ZCOR_OK;
}

/* The FTS5 filter for what this conversation may be shown: live records
 * of its scope or global (the recall_tag column, see store.c). */
static void scope_filter(struct recall *r, struct zc_buf *q)
{
	zc_buf_adds(q, "recall_tag : zlive AND (recall_tag : s");
	for (const char *p = "global"; *p; p++)
		zc_buf_addf(q, "%02x", (unsigned char)*p);
	zc_buf_adds(q, " OR recall_tag : s");
	for (const char *p = r->ctx.conversation; *p; p++)
		zc_buf_addf(q, "%02x", (unsigned char)*p);
	zc_buf_adds(q, ")");
}

/* Quotes s as an FTS5 string ("a""b"). */
static void fts_quote(struct zc_buf *b, const char *s)
{
	zc_buf_addc(b, '"');
	for (; *s; s++) {
		if (*s == '"')
			zc_buf_addc(b, '"');
		zc_buf_addc(b, *s);
	}
	zc_buf_addc(b, '"');
}

static int collect_token(void *ud, const char *tok, size_t len, size_t start, size_t end)
{
	json_t **pair = ud; /* [array, seen] */
	char *s = zc_strndup(tok, len);
	if (!json_object_get(pair[1], s) && json_array_size(pair[0]) < 256) {
		json_object_set_new(pair[1], s, json_true());
		json_array_append_new(pair[0], json_string(s));
	}
	zc_free(s);
	return 0;
}

/* The cache, emptied of rare tokens' rows if the nodes changed. */
static struct zc_recall_cache *token_cache(struct recall *r)
{
	long long gen = 0;
	if (zc_meta_get_int(&r->m->store, "nodes_gen", &gen, NULL))
		return NULL;
	struct zc_recall_cache *c = r->rs->cache;
	if (!c) {
		c = r->rs->cache = zc_calloc(1, sizeof(*c));
		c->scopes = json_object();
	}
	if (c->gen != gen) {
		for (size_t i = 0; i < TOKCACHE_SLOTS; i++) {
			struct tokslot *t = &c->slot[i];
			if (t->n >= 0) {
				zc_free(t->rows);
				zc_free(t->sid);
				memset(t, 0, sizeof(*t));
			}
		}
		c->gen = gen;
	}
	return c;
}

static struct tokslot *token_slot(struct zc_recall_cache *c, const char *tok)
{
	if (!c || strlen(tok) >= sizeof(c->slot[0].tok))
		return NULL;
	unsigned long h = 5381;
	for (const char *p = tok; *p; p++)
		h = h * 33 + (unsigned char)*p;
	return &c->slot[h & (TOKCACHE_SLOTS - 1)];
}

struct lexhit {
	sqlite3_int64 seq;
	double score;
};

static int by_lex(const void *a, const void *b)
{
	const struct lexhit *x = a, *y = b;
	if (x->score != y->score)
		return x->score < y->score ? 1 : -1;
	return x->seq < y->seq ? 1 : x->seq > y->seq ? -1 : 0;
}

/* Adds log(N / df) of one token to every record that contains it. */
static void add_idf(struct seqmap *map, struct lexhit **hits, size_t *nhits, size_t *hcap,
		    const sqlite3_int64 *rows, int df, double total)
{
	if (df <= 0)
		return;
	double idf = log(total / ((double)df + 0.5));
	for (int k = 0; k < df; k++) {
		size_t *at = seqmap_slot(map, rows[k]);
		if (!*at) {
			if (*nhits == *hcap) {
				*hcap = *hcap ? *hcap * 2 : 256;
				*hits = zc_realloc(*hits, *hcap * sizeof(**hits));
			}
			(*hits)[*nhits] = (struct lexhit){rows[k], 0};
			*at = ++*nhits;
		}
		(*hits)[*at - 1].score += idf;
	}
}

/* SQLite's varint, as FTS5 writes the token counts of a row. */
static const unsigned char *get_varint(const unsigned char *p, const unsigned char *end,
				       long long *v)
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

/* The length of a lexical candidate for the BM25-like damping: the tokens
 * of its title and content, from FTS5's own per-row counts (a small dense
 * table: the row itself is not read until the record is picked). */
static int doc_length(struct recall *r, struct item *x)
{
	sqlite3_stmt *st = zc_stmt(&r->m->store, "SELECT sz FROM nodes_fts_docsize WHERE id = ?1", r->e);
	if (!st)
		return r->e->code;
	sqlite3_bind_int64(st, 1, x->seq);
	int step = sqlite3_step(st);
	if (step == SQLITE_ROW) {
		const unsigned char *p = sqlite3_column_blob(st, 0);
		const unsigned char *end = p + sqlite3_column_bytes(st, 0);
		long long col[4] = {0}; /* title, keywords, content, recall_tag */
		for (int i = 0; i < 4 && p && p < end; i++)
			p = get_varint(p, end, &col[i]);
		x->length = col[0] + col[2];
	} else if (step != SQLITE_DONE) {
		sqlite3_reset(st);
		return zc_store_fail(&r->m->store, step, r->e, "recall (lengths)");
	}
	sqlite3_reset(st);
	return ZCOR_OK;
}

/* The id of a scope in the map (a new one gets the next). */
static int scope_id(json_t *scopes, const char *scope)
{
	json_t *v = json_object_get(scopes, scope);
	if (v)
		return (int)json_integer_value(v);
	int id = (int)json_object_size(scopes);
	json_object_set_new(scopes, scope, json_integer(id));
	return id;
}

/* Each row's scope id, or -1 for a record recall never injects (superseded,
 * archived, 存疑, a document) or that is gone. */
static int row_scopes(struct recall *r, json_t *scopes, const sqlite3_int64 *rows, int n, int *sid)
{
	for (int k = 0; k < n; k++)
		sid[k] = -1;
	if (n == 0)
		return ZCOR_OK;
	sqlite3_stmt *st = zc_stmt(&r->m->store,
				   "SELECT n.seq, n.scope FROM json_each(?1) j CROSS JOIN nodes n INDEXED BY "
				   "nodes_recall ON n.seq = j.value WHERE " LIVE_INDEXED_SQL,
				   r->e);
	if (!st)
		return r->e->code;
	struct zc_buf list = ZC_BUF_INIT;
	zc_buf_addc(&list, '[');
	for (int k = 0; k < n; k++)
		zc_buf_addf(&list, "%s%lld", k ? "," : "", (long long)rows[k]);
	zc_buf_addc(&list, ']');
	sqlite3_bind_text(st, 1, list.p, (int)list.len, SQLITE_STATIC);
	int step, k = 0;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		sqlite3_int64 seq = sqlite3_column_int64(st, 0);
		while (k < n && rows[k] != seq) /* the rows come in the list's order */
			k++;
		if (k < n)
			sid[k++] = scope_id(scopes, (const char *)sqlite3_column_text(st, 1));
	}
	sqlite3_reset(st);
	zc_buf_release(&list);
	return step == SQLITE_DONE ? ZCOR_OK : zc_store_fail(&r->m->store, step, r->e, "recall (scopes)");
}

/*
 * scored: character-bigram IDF lexical score (seed 003). Each token of the
 * message (bigrams; a lone character in a short message as a prefix
 * query) is looked up in nodes_fts; a record scores the sum of the IDF
 * log(N / df) of the tokens it contains. Tokens in more than
 * ZC_LEXICAL_MAX_DF records say almost nothing (low IDF) and are left
 * out, which also keeps the cost of a message independent of the size of
 * the store. The best ZC_LEXICAL_KEEP go on to the scope filter in
 * zc_recall_load_items.
 */
/* The message's lexical tokens: those of words and terms first, then the
 * rest of the text's, newest first — the end of a batch is what is being
 * talked about. */
static json_t *lexical_tokens(struct recall *r, const char *norm)
{
	json_t *toks = json_array(), *seen = json_object(), *text = json_array();
	json_t *pair[2] = {toks, seen};
	size_t i;
	json_t *t;
	json_array_foreach(r->expanded, i, t) {
		const char *w = json_string_value(t);
		zc_tokens(w, strlen(w), ZC_TOKENS_QUERY, collect_token, pair);
	}
	json_t *tpair[2] = {text, json_object()};
	zc_tokens(norm, strlen(norm), ZC_TOKENS_QUERY, collect_token, tpair);
	json_decref(tpair[1]);
	for (i = json_array_size(text); i-- > 0;)
		collect_token(pair, json_string_value(json_array_get(text, i)),
			      json_string_length(json_array_get(text, i)), 0, 0);
	json_decref(text);
	json_decref(seen);
	return toks;
}

/* The rows of nodes_fts holding tok (newest first, at most
 * ZC_LEXICAL_MAX_DF + 1: *df past the limit means "too common") and their
 * scopes, kept in the token's cache slot when there is one. */
static int lookup_token(struct recall *r, json_t *scopes, struct tokslot *slot, const char *tok,
			int short_message, sqlite3_int64 *rows, int *sid, int *df)
{
	struct zc_store *s = &r->m->store;
	int rc = ZCOR_OK, step;
	*df = 0;
	/* no column filter: recall_tag holds only 's…'/'z…' tags, and a
	 * filter makes FTS5 decode every position list */
	struct zc_buf q = ZC_BUF_INIT;
	fts_quote(&q, tok);
	if (short_message && zc_utf8_len(tok) == 1)
		zc_buf_adds(&q, " *"); /* a lone character anywhere in the text */
	sqlite3_stmt *st = zc_stmt(s,
				   "SELECT rowid FROM nodes_fts WHERE nodes_fts MATCH ?1 ORDER BY rowid DESC "
				   "LIMIT ?2",
				   r->e);
	if (!st) {
		zc_buf_release(&q);
		return r->e->code;
	}
	sqlite3_bind_text(st, 1, q.p, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 2, ZC_LEXICAL_MAX_DF + 1);
	while ((step = sqlite3_step(st)) == SQLITE_ROW)
		rows[(*df)++] = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	zc_buf_release(&q);
	if (step != SQLITE_DONE)
		return zc_store_fail(s, step, r->e, "recall (lexical)");
	if (*df <= ZC_LEXICAL_MAX_DF && (rc = row_scopes(r, scopes, rows, *df, sid)))
		return rc;
	if (slot) {
		zc_free(slot->rows);
		zc_free(slot->sid);
		snprintf(slot->tok, sizeof(slot->tok), "%s", tok);
		slot->n = *df > ZC_LEXICAL_MAX_DF ? -1 : *df;
		slot->rows = NULL;
		slot->sid = NULL;
		if (*df > 0 && *df <= ZC_LEXICAL_MAX_DF) {
			slot->rows = zc_malloc((size_t)*df * sizeof(*slot->rows));
			memcpy(slot->rows, rows, (size_t)*df * sizeof(*rows));
			slot->sid = zc_malloc((size_t)*df * sizeof(*slot->sid));
			memcpy(slot->sid, sid, (size_t)*df * sizeof(*sid));
		}
	}
	return ZCOR_OK;
}

int zc_recall_lexical_candidates(struct recall *r, const char *norm, int short_message)
{
	json_t *toks = lexical_tokens(r, norm);
	size_t i, probed = 0;
	json_t *t;
	struct zc_store *s = &r->m->store;
	struct zc_recall_cache *cache = token_cache(r);
	int rc = ZCOR_OK;
	double total = 1;
	struct seqmap map = {0}; /* rowid -> 1 + index in hits */
	struct lexhit *hits = NULL;
	size_t nhits = 0, hcap = 0;
	sqlite3_stmt *st = zc_stmt(s, "SELECT max(seq) FROM nodes", r->e);
	if (!st) {
		rc = r->e->code;
		goto out;
	}
	if (sqlite3_step(st) == SQLITE_ROW)
		total = (double)sqlite3_column_int64(st, 0) + 1;
	sqlite3_reset(st);
	/* only what this conversation may be shown counts (Q-SCOPE): a
	 * record of another conversation neither takes a candidate's place
	 * nor lowers a token's weight. (Not yet: a token in more than
	 * ZC_LEXICAL_MAX_DF records of any scope is skipped as common for
	 * every conversation; entity hits, which are scoped, still find
	 * records named by it.) */
	json_t *scopes = cache ? json_incref(cache->scopes) : json_object();
	int sglobal = scope_id(scopes, "global");
	int sconv = r->ctx.conversation ? scope_id(scopes, r->ctx.conversation) : -2;
	json_array_foreach(toks, i, t) {
		const char *tok = json_string_value(t);
		struct tokslot *slot = token_slot(cache, tok);
		int cached = slot && strcmp(slot->tok, tok) == 0;
		if (cached && slot->n < 0)
			continue; /* known to be in too many records */
		if (probed++ >= ZC_LEXICAL_TOKENS)
			break;
		sqlite3_int64 rows[ZC_LEXICAL_MAX_DF + 1], vis[ZC_LEXICAL_MAX_DF + 1];
		int sid[ZC_LEXICAL_MAX_DF + 1];
		const sqlite3_int64 *rp = rows; /* the token's rows and their scopes */
		const int *sp = sid;
		int df = 0;
		if (cached) {
			df = slot->n;
			rp = slot->rows;
			sp = slot->sid;
		} else {
			if ((rc = lookup_token(r, scopes, slot, tok, short_message, rows, sid, &df)))
				break;
			if (df > ZC_LEXICAL_MAX_DF)
				continue;
		}
		int vdf = 0;
		for (int k = 0; k < df; k++)
			if (sp[k] >= 0 && (sp[k] == sglobal || sp[k] == sconv))
				vis[vdf++] = rp[k];
		add_idf(&map, &hits, &nhits, &hcap, vis, vdf, total);
	}
	json_decref(scopes);
	if (rc)
		goto out;
	if (nhits) {
		qsort(hits, nhits, sizeof(*hits), by_lex);
		for (size_t k = 0; k < nhits && k < ZC_LEXICAL_KEEP; k++) {
			struct item *x = zc_recall_item_of(r, 'n', hits[k].seq);
			x->lexraw = hits[k].score;
			if ((rc = doc_length(r, x)))
				goto out;
		}
	}
out:
	zc_recall_seqmap_clear(&map);
	zc_free(hits);
	json_decref(toks);
	return rc;
}

/* zcor: nodes whose title or keywords contain an expanded term. FTS finds
 * them by phrase ("t*" for a single character); the loader then checks the
 * substring exactly and counts distinct terms. */
int zc_recall_phrase_candidates(struct recall *r)
{
	size_t i;
	json_t *t;
	json_array_foreach(r->expanded, i, t) {
		const char *term = json_string_value(t);
		struct zc_buf q = ZC_BUF_INIT;
		scope_filter(r, &q);
		zc_buf_adds(&q, " AND {title keywords} : ");
		if (zc_utf8_len(term) == 1) {
			fts_quote(&q, term);
			zc_buf_adds(&q, " *");
		} else {
			fts_quote(&q, term);
		}
		/* newest first (creation order): a very common term keeps the
		 * most recent ZC_PHRASE_PER_TERM records */
		sqlite3_stmt *st = zc_stmt(&r->m->store,
					   "SELECT rowid FROM nodes_fts WHERE nodes_fts MATCH ?1 "
					   "ORDER BY rowid DESC LIMIT ?2",
					   r->e);
		if (!st) {
			zc_buf_release(&q);
			return r->e->code;
		}
		sqlite3_bind_text(st, 1, q.p, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int(st, 2, ZC_PHRASE_PER_TERM);
		int step;
		while ((step = sqlite3_step(st)) == SQLITE_ROW)
			zc_recall_item_of(r, 'n', sqlite3_column_int64(st, 0));
		sqlite3_reset(st);
		zc_buf_release(&q);
		if (step != SQLITE_DONE)
			return zc_store_fail(&r->m->store, step, r->e, "recall (titles)");
	}
	return ZCOR_OK;
}

/* The speakers and @-mentioned people, by person id. */
int zc_recall_speaker_candidates(struct recall *r, json_t *ids)
{
	if (json_array_size(ids) == 0)
		return ZCOR_OK;
	sqlite3_stmt *st = zc_stmt(&r->m->store,
				   "SELECT seq FROM people WHERE person_id IN (SELECT value FROM json_each(?1))",
				   r->e);
	if (!st)
		return r->e->code;
	sqlite3_bind_text(st, 1, zc_json_dump(ids), -1, zc_free);
	int step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW)
		zc_recall_item_of(r, 'p', sqlite3_column_int64(st, 0))->always = "speaker or mentioned";
	sqlite3_reset(st);
	return step == SQLITE_DONE ? ZCOR_OK : zc_store_fail(&r->m->store, step, r->e, "recall (people)");
}

