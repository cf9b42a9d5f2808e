/*
 * recall_cand.c — the candidates of a batch (SPEC §4): only records the
 * conversation may see (global + its own), current, hot and not 存疑 —
 * filtered before anything is scored: entity hits (terms table), the
 * lexical stage's BM25 over recall_fts with the visible records'
 * statistics, feedback and dialogue context (scored: lexical.c) or
 * title/keyword phrase hits (zcor), the speakers and @-mentioned people.
 * Each stage reads at most a bounded number of index entries, whatever the
 * store's size.
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
#include "recall/lexical.h"
#include "recall/recall_int.h"
#include "text/norm.h"
#include "text/tokens.h"

/* ---- candidates ------------------------------------------------------ */

struct item *zc_recall_item_of(struct recall *r, char kind, sqlite3_int64 seq)
{
	/* nodes and people share the map: a person's key is odd */
	sqlite3_int64 key = seq * 2 + (kind == 'p');
	size_t *at = zc_seqmap_slot(&r->where, key);
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

/*
 * scored: the lexical stage (lexical.c): BM25 of every token of the batch
 * over the records this conversation may see, with its statistics taken
 * over those records alone. The best ZC_LEXICAL_KEEP go on to scoring.
 */
int zc_recall_lexical_candidates(struct recall *r)
{
	json_t *msgs = json_array(), *extra = json_array();
	size_t i;
	json_t *v;
	json_array_foreach(r->msg_texts, i, v)
		json_array_append_new(msgs, zc_json_string_own(zc_norm(json_string_value(v))));
	json_array_foreach(r->extra_texts, i, v)
		json_array_append_new(extra, zc_json_string_own(zc_norm(json_string_value(v))));
	struct zc_lex_query q = {r->ctx.conversation, msgs, extra, r->expanded};
	struct zc_lex_hit *hits = NULL;
	size_t n = 0;
	const struct zc_recall_weights *w = &r->m->conf.cfg.weights;
	int rc = zc_lex_run(r->m, &r->rs->lex, &q, zc_lex_shape_of(r->rs->lex), w->feedback, w->context, &hits, &n,
			    &r->lex, r->e);
	for (size_t k = 0; !rc && k < n && k < ZC_LEXICAL_KEEP; k++) {
		struct item *x = zc_recall_item_of(r, 'n', hits[k].seq);
		x->lexical = hits[k].bm25;
		x->feedback = hits[k].feedback;
		x->context = hits[k].context;
		x->matched = hits[k].matched;
		x->words = hits[k].words;
	}
	zc_free(hits);
	json_decref(msgs);
	json_decref(extra);
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

