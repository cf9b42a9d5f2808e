/*
 * recall_score.c — loading and scoring the candidates (SPEC §4): phase 1
 * reads what scoring needs without the content, the profiles zcor (seed 000)
 * and scored (seed 003) rank, the section quotas select; the no-hit
 * fallback; phase 2 reads the content of what was picked.
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

/* ---- loading and scoring -------------------------------------------- */

static const char *section_of(const struct item *x)
{
	if (x->section[0])
		return x->section;
	if (strcmp(x->kindname, "cognition") == 0)
		return "认知";
	if (strcmp(x->kindname, "sticker") == 0)
		return "表情包";
	return "记忆";
}

static double section_prior(const char *sec)
{
	static const struct {
		const char *name;
		double prior;
	} priors[] = {{"人物", 1.0}, {"惯例与偏好", 0.8}, {"在追", 0.8}, {"认知", 0.7},
		      {"事实", 0.6}, {"记忆", 0.6},         {"表情包", 0.4}};
	for (size_t i = 0; i < sizeof(priors) / sizeof(priors[0]); i++)
		if (strcmp(priors[i].name, sec) == 0)
			return priors[i].prior;
	return 0.5;
}

/* A date "YYYY-MM-DD" (a fact's date or an expiry) as ms at UTC midnight. */
static int64_t day_ms(const char *d)
{
	if (!d || strlen(d) < 10)
		return -1;
	char buf[40];
	snprintf(buf, sizeof(buf), "%.10sT00:00:00Z", d);
	int64_t ms;
	return zc_time_parse(buf, "date", &ms, NULL) == ZCOR_OK ? ms : -1;
}

/* How many of the terms the normalised title or a keyword of x contains. */
static int terms_in_title_or_keywords(const struct item *x, const json_t *terms)
{
	struct zc_buf hay = ZC_BUF_INIT;
	zc_buf_adds(&hay, x->title_norm ? x->title_norm : "");
	json_t *kws = json_loads(x->keywords ? x->keywords : "[]", 0, NULL);
	size_t i;
	json_t *k;
	json_array_foreach(kws, i, k) {
		char *kn = zc_norm(json_string_value(k));
		zc_buf_addc(&hay, '\n'); /* a term never spans two keywords */
		zc_buf_adds(&hay, kn);
		zc_free(kn);
	}
	json_decref(kws);
	int hits = 0;
	json_array_foreach(terms, i, k) hits += strstr(zc_buf_str(&hay), json_string_value(k)) != NULL;
	zc_buf_release(&hay);
	return hits;
}

/* What scoring needs of a node, without its content (phase 1). */
/* What scoring reads of a node: every column is in the nodes_recall index,
 * so the scored profile loads its candidates from that index alone. */
#define SCORE_COLS                                                                             \
	"n.seq, n.id, n.kind, n.section, n.date, n.expires, n.pinned, n.hits, n.updated_at, n.scope"
/* ... and the title, keywords and length the zcor profile and the
 * fallback read from the row itself */
#define LIGHT_COLS SCORE_COLS ", n.title, n.title_norm, n.keywords, length(n.title) + length(n.content)"

/* (for every column of every candidate: a bounded copy, no snprintf) */
static void copy_col(char *dst, size_t cap, sqlite3_stmt *st, int i)
{
	const char *v = (const char *)sqlite3_column_text(st, i);
	size_t n = v ? (size_t)sqlite3_column_bytes(st, i) : 0;
	if (n >= cap) { /* cut on a character boundary */
		n = cap - 1;
		while (n > 0 && ((unsigned char)v[n] & 0xC0) == 0x80)
			n--;
	}
	memcpy(dst, v ? v : "", n);
	dst[n] = '\0';
}

static char *dup_col(sqlite3_stmt *st, int i)
{
	const char *v = (const char *)sqlite3_column_text(st, i);
	return zc_strdup(v ? v : "");
}

/* A row of SCORE_COLS; returns 0 if the item was loaded already. */
static int score_from_row(struct item *x, sqlite3_stmt *st)
{
	if (x->loaded)
		return 0;
	x->loaded = 1;
	copy_col(x->id, sizeof(x->id), st, 1);
	copy_col(x->kindname, sizeof(x->kindname), st, 2);
	copy_col(x->section, sizeof(x->section), st, 3);
	copy_col(x->date, sizeof(x->date), st, 4);
	copy_col(x->expires, sizeof(x->expires), st, 5);
	x->pinned = sqlite3_column_int(st, 6);
	x->hits = sqlite3_column_int64(st, 7);
	x->updated = sqlite3_column_int64(st, 8);
	copy_col(x->scope, sizeof(x->scope), st, 9);
	return 1;
}

/* A row of LIGHT_COLS. */
static void light_from_row(struct item *x, sqlite3_stmt *st, int with_keywords)
{
	if (!score_from_row(x, st))
		return;
	x->title = dup_col(st, 10);
	if (with_keywords) {
		x->title_norm = dup_col(st, 11);
		x->keywords = dup_col(st, 12);
	}
	x->length = sqlite3_column_int64(st, 13);
}

void zc_recall_item_release(struct item *x)
{
	json_decref(x->obj);
	zc_free(x->title);
	zc_free(x->title_norm);
	zc_free(x->keywords);
	zc_free(x->content);
	zc_free(x->usage);
}

/* Loads every candidate, dropping those that fail the scope and currency
 * filter (a person is always global and current): scoring sees only what
 * this conversation may be shown. */
int zc_recall_load_items(struct recall *r)
{
	json_t *nseqs = json_array(), *pseqs = json_array();
	for (size_t i = 0; i < r->n; i++)
		json_array_append_new(r->it[i].kind == 'n' ? nseqs : pseqs, json_integer(r->it[i].seq));
	int rc = ZCOR_OK, step;
	/* scored reads the index alone (its title comes with the content of
	 * what is picked); zcor matches titles and keywords, so it reads rows */
	int by_title = r->profile == ZC_PROFILE_ZCOR;
	sqlite3_stmt *st = zc_stmt(&r->m->store,
				   by_title ? "SELECT " LIGHT_COLS " FROM json_each(?1) j CROSS JOIN nodes n "
					  "ON n.seq = j.value WHERE " CURRENT_SQL
					: "SELECT " SCORE_COLS " FROM json_each(?1) j CROSS JOIN nodes n "
					  "ON n.seq = j.value WHERE " CURRENT_SQL,
				   r->e);
	if (!st) {
		rc = r->e->code;
		goto out;
	}
	sqlite3_bind_text(st, 1, zc_json_dump(nseqs), -1, zc_free);
	zc_recall_bind_conv(r, st);
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		struct item *x = zc_recall_item_of(r, 'n', sqlite3_column_int64(st, 0));
		if (by_title)
			light_from_row(x, st, 1);
		else
			score_from_row(x, st);
	}
	sqlite3_reset(st);
	if (step != SQLITE_DONE) {
		rc = zc_store_fail(&r->m->store, step, r->e, "recall (loading)");
		goto out;
	}
	st = zc_stmt(&r->m->store,
		     "SELECT " ZC_PERSON_COLS ", seq FROM people WHERE seq IN (SELECT value FROM "
		     "json_each(?1))",
		     r->e);
	if (!st) {
		rc = r->e->code;
		goto out;
	}
	sqlite3_bind_text(st, 1, zc_json_dump(pseqs), -1, zc_free);
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		struct item *x = zc_recall_item_of(r, 'p', sqlite3_column_int64(st, 11));
		x->obj = zc_person_from_row(st);
		x->loaded = 1;
	}
	sqlite3_reset(st);
	if (step != SQLITE_DONE)
		rc = zc_store_fail(&r->m->store, step, r->e, "recall (loading people)");
out:
	json_decref(nseqs);
	json_decref(pseqs);
	/* keep only what loaded */
	size_t w = 0;
	for (size_t i = 0; i < r->n; i++) {
		if (r->it[i].loaded)
			r->it[w++] = r->it[i];
		else
			zc_recall_item_release(&r->it[i]);
	}
	r->n = w;
	zc_seqmap_clear(&r->where);
	return rc;
}

/* Phase 2: the latest full content of the nodes that will be shown. */
int zc_recall_load_full(struct recall *r, size_t npicked)
{
	sqlite3_stmt *st = zc_stmt(&r->m->store,
				   "SELECT title, content, attrs ->> '$.usage' FROM nodes WHERE seq = ?1", r->e);
	if (!st)
		return r->e->code;
	for (size_t i = 0; i < npicked; i++) {
		struct item *x = &r->it[i];
		if (x->kind != 'n')
			continue;
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, x->seq);
		int step = sqlite3_step(st);
		if (step == SQLITE_ROW) {
			zc_free(x->title);
			x->title = dup_col(st, 0);
			x->content = dup_col(st, 1);
			if (sqlite3_column_type(st, 2) != SQLITE_NULL)
				x->usage = dup_col(st, 2);
		} else if (step != SQLITE_DONE) {
			sqlite3_reset(st);
			return zc_store_fail(&r->m->store, step, r->e, "recall (loading)");
		}
	}
	sqlite3_reset(st);
	return ZCOR_OK;
}

/* The recency of a record of this age: 1 today, 1/e after 30 days. */
#define RECENCY_DAYS 30.0

void zc_recall_score_items(struct recall *r)
{
	const struct zc_recall_weights *w = &r->m->conf.cfg.weights;
	int64_t today = r->now - r->now % 86400000;
	for (size_t i = 0; i < r->n; i++) {
		struct item *x = &r->it[i];
		int64_t t = -1;
		if (x->kind == 'n') {
			t = x->updated;
		} else if (zc_json_str(x->obj, "updatedAt")) {
			zc_time_parse(zc_json_str(x->obj, "updatedAt"), "updatedAt", &t, NULL);
		}
		x->updated = t;
		if (x->kind == 'p') {
			snprintf(x->section, sizeof(x->section), "人物");
		} else {
			if (!x->section[0])
				snprintf(x->section, sizeof(x->section), "%s", section_of(x));
			int64_t fact = day_ms(x->date);
			if (fact >= 0)
				t = fact;
			int64_t exp = day_ms(x->expires);
			x->expired = exp >= 0 && exp < today ? 1 : 0;
			x->salience = x->pinned ? 1.0 : fmin(1.0, log1p((double)x->hits) / log1p(50.0));
			/* slang present verbatim in the message: always in */
			if (x->entity && strcmp(x->kindname, "cognition") == 0)
				x->always = "slang present in the message";
			if (r->profile == ZC_PROFILE_ZCOR)
				x->zhits = terms_in_title_or_keywords(x, r->expanded);
		}
		double age_days = t >= 0 ? (double)(r->now - t) / 86400000.0 : 365.0;
		x->recency = exp(-fmax(age_days, 0) / RECENCY_DAYS);
		x->prior = section_prior(x->section);
		x->score = w->entity * x->entity + w->lexical * x->lexical + w->feedback * x->feedback +
			   w->context * x->context + w->recency * x->recency + w->salience * x->salience +
			   w->prior * x->prior + w->expired * x->expired;
	}
}

/* What earns a record a place in the prompt: one of its names or terms in
 * the batch, or a word of the batch (a bigram, a word, a synonym's word;
 * in a message of at most 2 characters, a character: SPEC §4). Records
 * that share only single characters with a longer batch, or that
 * feedback or dialogue context brought in, still rank (--explain) but
 * stay out. */
static int has_hit(const struct recall *r, const struct item *x)
{
	return x->kind == 'p' || x->entity > 0 || x->words > 0 || (r->short_msg && x->matched > 0);
}

static int by_score(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	if (x->score != y->score)
		return x->score < y->score ? 1 : -1;
	if (x->updated != y->updated)
		return x->updated < y->updated ? 1 : -1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* seed 000: distinct terms hit, updatedAt desc, id asc (同分按更新时间降序、
 * id 升序: the id itself, which for an imported record need not follow
 * creation; seq last, for people, who have none here) */
static int by_zcor(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	if (x->zhits != y->zhits)
		return y->zhits - x->zhits;
	if (x->updated != y->updated)
		return x->updated < y->updated ? 1 : -1;
	int c = strcmp(x->id, y->id);
	if (c)
		return c;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Picks items in the order they are packed; returns how many. Picked
 * items are moved to the front of r->it in packing order. */
size_t zc_recall_select_items(struct recall *r)
{
	size_t npicked = 0;
	if (r->n == 0)
		return 0;
	if (r->profile == ZC_PROFILE_ZCOR) {
		qsort(r->it, r->n, sizeof(*r->it), by_zcor);
		for (size_t i = 0; i < r->n; i++) {
			struct item *x = &r->it[i];
			if (x->kind != 'n' || x->zhits == 0)
				x->why = "no title or keyword contains a term";
			else if (npicked >= ZC_RECALL_ZCOR_MAX)
				x->why = "beyond the 10 records of the batch";
			else {
				x->picked = 1;
				x->why = "title or keywords contain a term";
				npicked++;
			}
		}
		qsort(r->it, r->n, sizeof(*r->it), by_zcor);
		return npicked;
	}
	qsort(r->it, r->n, sizeof(*r->it), by_score);
	struct item *order = zc_malloc((r->n + 1) * sizeof(*order));
	/* 1. what is always included */
	for (size_t i = 0; i < r->n; i++) {
		if (r->it[i].always && npicked < ZC_RECALL_MAX_ITEMS) {
			r->it[i].picked = 1;
			r->it[i].why = r->it[i].always;
			order[npicked++] = r->it[i];
		}
	}
	/* 2. sections in turn, each up to its quota, best first */
	json_t *taken = json_object();
	for (int round = 0; round < ZC_RECALL_SECTION_QUOTA && npicked < ZC_RECALL_MAX_ITEMS; round++) {
		json_t *this_round = json_object();
		for (size_t i = 0; i < r->n && npicked < ZC_RECALL_MAX_ITEMS; i++) {
			struct item *x = &r->it[i];
			if (x->picked || json_object_get(this_round, x->section) || !has_hit(r, x))
				continue;
			json_t *cnt = json_object_get(taken, x->section);
			if (cnt && json_integer_value(cnt) > round)
				continue;
			json_object_set_new(this_round, x->section, json_true());
			json_object_set_new(taken, x->section,
					    json_integer(cnt ? json_integer_value(cnt) + 1 : 1));
			x->picked = 1;
			x->why = "ranked within its section's quota";
			order[npicked++] = *x;
		}
		json_decref(this_round);
	}
	json_decref(taken);
	size_t rest = npicked;
	for (size_t i = 0; i < r->n; i++) {
		if (!r->it[i].picked) {
			r->it[i].why = !has_hit(r, &r->it[i])
					       ? "ranked by shared characters, feedback or context alone: not injected"
				       : npicked >= ZC_RECALL_MAX_ITEMS ? "beyond the item limit"
									: "its section's quota was full";
			order[rest++] = r->it[i];
		}
	}
	memcpy(r->it, order, r->n * sizeof(*order));
	zc_free(order);
	return npicked;
}

/* No hit at all (scored): pinned records, then the most salient of the
 * recent ones, then the most recent — never "the start of a file". Both
 * queries walk an index from its newest end; neither visits every node. */
int zc_recall_fallback_items(struct recall *r)
{
	/* for each scope the conversation may see, from its newest end of an
	 * index of that scope: the cost does not grow with the other
	 * conversations' records */
	static const char *const sql[2] = {
		"SELECT " LIGHT_COLS " FROM nodes n INDEXED BY nodes_scope_pinned WHERE n.pinned = 1 AND "
		"n.scope = ?1 AND n.tier = 'hot' AND " LIVE_INDEXED_SQL " ORDER BY n.updated_at DESC LIMIT 5",
		"SELECT " LIGHT_COLS " FROM nodes n INDEXED BY nodes_scope_recent WHERE n.scope = ?1 AND "
		"n.tier = 'hot' AND " LIVE_INDEXED_SQL " AND n.kind IN ('memory', 'cognition') "
		"ORDER BY n.updated_at DESC LIMIT 50",
	};
	const char *scopes[2] = {"global", r->ctx.conversation};
	for (int q = 0; q < 2; q++) {
		for (int sc = 0; sc < 2 && scopes[sc]; sc++) {
			sqlite3_stmt *st = zc_stmt(&r->m->store, sql[q], r->e);
			if (!st)
				return r->e->code;
			sqlite3_bind_text(st, 1, scopes[sc], -1, SQLITE_STATIC);
			int step;
			while ((step = sqlite3_step(st)) == SQLITE_ROW) {
				struct item *x = zc_recall_item_of(r, 'n', sqlite3_column_int64(st, 0));
				light_from_row(x, st, 0);
				if (q == 0)
					x->always = "fallback: pinned";
			}
			sqlite3_reset(st);
			if (step != SQLITE_DONE)
				return zc_store_fail(&r->m->store, step, r->e, "recall (fallback)");
		}
	}
	zc_seqmap_clear(&r->where);
	return ZCOR_OK;
}

static int by_fallback(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	if (!x->always != !y->always)
		return x->always ? -1 : 1;
	return by_score(a, b);
}

/* Pinned first, then by salience and recency; at most 5. */
size_t zc_recall_fallback_select(struct recall *r)
{
	if (r->n == 0)
		return 0;
	qsort(r->it, r->n, sizeof(*r->it), by_fallback);
	size_t n = 0;
	for (size_t i = 0; i < r->n; i++) {
		struct item *x = &r->it[i];
		x->picked = i < 5;
		x->why = !x->picked ? "fallback: beyond the 5 records"
			 : x->always ? x->always
				     : "fallback: nothing matched, so salient / recent";
		n += (size_t)x->picked;
	}
	return n;
}

