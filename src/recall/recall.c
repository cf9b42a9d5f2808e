/*
 * recall.c — auto-recall for a batch of messages (SPEC §4, recall.h).
 *
 *   terms      NFKC + case fold; ICU words of ≥ 2 characters (single
 *              characters for messages of ≤ 2, profile scored only); every
 *              synonym entry present verbatim and, profile scored only,
 *              every dictionary term (substrings looked up in the terms
 *              table); then synonym expansion.
 *   candidates only records the conversation may see (global + its own),
 *              current, hot and not 存疑 — filtered before anything is
 *              scored, so other conversations' records are never candidates:
 *              entity hits (terms table), the lexical stage's BM25 over
 *              recall_fts with the visible records' statistics, feedback
 *              and dialogue context (scored: lexical.c) or title/keyword
 *              phrase hits (zcor), the speakers and @-mentioned people.
 *              Each stage reads at most a bounded number of index entries,
 *              whatever the store's size.
 *   score      profile zcor (seed 000), or scored (seed 003's features,
 *              weighted by recall.weights: recall_score.c).
 *   pack       into recallChars, ids kept when text is cut; a record
 *              enters only with an entity hit or a word of the batch.
 *
 * Recall layer (above memory/, below tools/): reads the store inside one
 * read transaction, through indexes only; it never writes a record and
 * never records history (hit counts go to memory's zc_mem_count_hits).
 *
 * Files: recall.c (the request, the pipeline, open/close/warm),
 * recall_terms.c, recall_cand.c, recall_score.c, recall_pack.c; what they
 * share is recall_int.h.
 */
#include "recall/recall.h"

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
#include "text/schema.h"
#include "text/tokens.h"

/* ---- request -------------------------------------------------------- */

#define RECALL_EACH                                                                                \
	"each message is a string or {text, senderId?, senderName?} with a text of at most 20000 " \
	"characters"
#define RECALL_MESSAGES "must be an array of 1 to 100 messages"
#define RECALL_CONV "is required (group:<id>, private:<qq> or console:<name>)"

/* The recall request (SPEC §4), checked by text/schema.c: the fields in
 * the order they are checked, each one's reason as the request's readers
 * know it. A message's senderId and senderName are read when they are
 * strings and ignored otherwise; so is a speaker's name. */
static struct zc_schema_text request_schema = ZC_SCHEMA_TEXT(
	"{\"type\": \"object\", \"additionalProperties\": false,"
	" \"required\": [\"conversation\", \"messages\"],"
	" \"x-error\": {\"type\": \"the recall request must be a JSON object\","
	"  \"additionalProperties\": \"unknown field '{key}'; a recall request has conversation, "
	"messages, speakers, mentions, explain, countHits\"},"
	" \"properties\": {"
	"  \"conversation\": {\"type\": \"string\", \"format\": \"conversation\","
	"   \"x-error\": {\"required\": \"" RECALL_CONV "\", \"type\": \"" RECALL_CONV "\"}},"
	"  \"messages\": {\"type\": \"array\", \"minItems\": 1, \"maxItems\": 100,"
	"   \"items\": {\"type\": [\"string\", \"object\"], \"maxLength\": 20000, \"required\": [\"text\"],"
	"    \"properties\": {\"text\": {\"type\": \"string\", \"maxLength\": 20000}}},"
	"   \"x-error\": {\"required\": \"" RECALL_MESSAGES "\", \"type\": \"" RECALL_MESSAGES "\","
	"    \"minItems\": \"" RECALL_MESSAGES "\", \"maxItems\": \"" RECALL_MESSAGES "\","
	"    \"items\": \"" RECALL_EACH "\"}},"
	"  \"speakers\": {\"type\": \"array\","
	"   \"items\": {\"type\": \"object\", \"required\": [\"id\"], \"properties\": {\"id\": {\"type\": \"string\"}}},"
	"   \"x-error\": {\"type\": \"must be an array of {id, name?}\","
	"    \"items\": \"each speaker needs a string 'id'\"}},"
	"  \"mentions\": {\"type\": \"array\", \"items\": {\"type\": \"string\"},"
	"   \"x-error\": {\"type\": \"must be an array of person ids\","
	"    \"items\": \"must be an array of person ids (strings)\"}},"
	"  \"explain\": {\"type\": \"boolean\", \"x-error\": \"must be true or false\"},"
	"  \"countHits\": {\"type\": \"boolean\", \"x-error\": \"must be true or false\"}}}");

_Static_assert(ZC_RECALL_MAX_MESSAGES == 100 && ZC_RECALL_MAX_TEXT == 20000,
	       "the request's schema says 100 messages of 20000 characters");

/* A conversation key's grammar (the schema cannot say it). */
static int check_conversation(const json_t *v, const char *path, struct zc_err *e)
{
	if (zc_conv_check(json_string_value(v), e))
		return zc_err_prefix(e, "field '%s'", path);
	return ZCOR_OK;
}

static const struct zc_schema_format request_formats[] = {
	{"conversation", check_conversation},
	{NULL, NULL},
};

/* Strings read up to a NUL, as they always were. */
static const struct zc_schema_style request_style = {"field", 60, 1, 1, request_formats};

/* Checks the request; builds the query text (messages and speakers). */
static int read_request(const json_t *req, struct zc_buf *text, json_t **people, json_t *msg_texts,
			json_t *extra_texts, int *explain, struct zc_err *e)
{
	int rc = zc_schema_check_as(zc_schema_of(&request_schema), req, "", &request_style, e);
	if (rc)
		return rc;
	*people = json_array();
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(req, "messages"), i, v) {
		json_t *t = json_is_string(v) ? v : json_object_get(v, "text");
		zc_buf_adds(text, json_string_value(t));
		zc_buf_addc(text, '\n');
		json_array_append(msg_texts, t);
		const char *sid = json_is_object(v) ? zc_json_str(v, "senderId") : NULL;
		const char *sname = json_is_object(v) ? zc_json_str(v, "senderName") : NULL;
		if (sid)
			json_array_append_new(*people, json_string(sid));
		if (sname) {
			zc_buf_adds(text, sname);
			zc_buf_addc(text, '\n');
			json_array_append_new(extra_texts, json_string(sname));
		}
	}
	json_array_foreach(json_object_get(req, "speakers"), i, v) {
		json_array_append_new(*people, json_string(zc_json_str(v, "id")));
		if (zc_json_str(v, "name")) {
			zc_buf_adds(text, zc_json_str(v, "name"));
			zc_buf_addc(text, '\n');
			json_array_append_new(extra_texts, json_string(zc_json_str(v, "name")));
		}
	}
	json_array_foreach(json_object_get(req, "mentions"), i, v)
		json_array_append(*people, v);
	*explain = json_is_true(json_object_get(req, "explain"));
	return ZCOR_OK;
}


/*
 * What recall reads, in the order zc_recall_warm takes it (lookups per
 * megabyte, measured: pages read per message by b-tree at 100k): the
 * small tables and ranges every message probes; the scoring index and the terms;
 * the lengths; the rows of what gets injected; the lexical index's
 * blocks; last the title index only profile zcor reads. The big ones
 * newest first: a budget that holds only part of them keeps the records
 * recall ranks up by recency.
 */
static const char *const warm_sql[] = {
	"SELECT value FROM meta ORDER BY key",
	"SELECT maxlen FROM term_prefix",
	"SELECT v FROM recall_fts_config",
	"SELECT pgno FROM recall_fts_idx",
	"SELECT docs FROM recall_stats",
	/* the header's extras: INDEX.md, the slang vocabulary, the stickers */
	"SELECT seq FROM nodes WHERE kind IN ('document', 'cognition', 'sticker') AND kind <> 'memory'",
	"SELECT seq FROM nodes INDEXED BY nodes_view WHERE scope = 'global' AND kind = 'sticker' AND "
	"kind <> 'memory'",
	"SELECT person_id FROM people ORDER BY person_id",
	"SELECT name FROM people NOT INDEXED",
	"SELECT line FROM view_lines ORDER BY kind, ref", /* citations */
	/* the no-hit fallback's global records (a conversation's own are
	 * read by its first fallback) */
	"SELECT seq FROM nodes INDEXED BY nodes_scope_pinned WHERE pinned = 1 AND scope = 'global' AND "
	"tier = 'hot' ORDER BY updated_at DESC LIMIT 256",
	"SELECT seq FROM nodes INDEXED BY nodes_scope_recent WHERE scope = 'global' AND tier = 'hot' "
	"ORDER BY updated_at DESC LIMIT 256",
	/* (ORDER BY the key: a WITHOUT ROWID table's own b-tree, not an index) */
	"SELECT ref FROM terms ORDER BY term, scope, kind, ref",
	"SELECT df FROM recall_df ORDER BY token, scope",
	"SELECT id FROM recall_fts_docsize ORDER BY id", /* (-seq: newest first) */
	"SELECT seq FROM nodes NOT INDEXED ORDER BY seq DESC",
	"SELECT block FROM recall_fts_data ORDER BY id DESC",
	/* profile zcor's title and keyword phrases */
	"SELECT v FROM nodes_fts_config",
	"SELECT pgno FROM nodes_fts_idx",
	"SELECT block FROM nodes_fts_data ORDER BY id DESC",
};

int zc_recall_warm(struct zc_recall *rs, size_t budget, json_t **out, struct zc_err *e)
{
	struct zc_mem *m = rs->m;
	double t0 = zc_time_mono_ms();
	zc_store_prefetch(&m->store, ZC_WARM_PREFETCH_MAX);
	char sql[64];
	size_t cache = budget + ZC_WARM_HEADROOM;
	if (cache < ZC_STORE_CACHE_BYTES) /* never smaller than a handle's own */
		cache = ZC_STORE_CACHE_BYTES;
	snprintf(sql, sizeof(sql), "PRAGMA cache_size = -%zu", cache >> 10);
	int rc = zc_exec(&m->store, sql, e);
	if (rc || (rc = zc_store_begin(&m->store, 0, e)))
		return rc;
	long pages = 0;
	for (size_t i = 0; !rc && i < sizeof(warm_sql) / sizeof(warm_sql[0]); i++)
		rc = zc_store_warm(&m->store, warm_sql[i], budget, &pages, e);
	zc_store_rollback(&m->store);
	if (rc)
		return rc;
	*out = json_pack("{s:I, s:I, s:f}", "pages", (json_int_t)pages, "cacheBytes",
			 (json_int_t)zc_store_cache_bytes(&m->store), "ms", zc_time_mono_ms() - t0);
	return ZCOR_OK;
}

void zc_recall_open(struct zc_recall *rs, struct zc_mem *m)
{
	memset(rs, 0, sizeof(*rs));
	rs->m = m;
}

void zc_recall_close(struct zc_recall *rs)
{
	if (!rs)
		return;
	zc_lex_release(&rs->lex);
	zc_wordbreak_release(&rs->words);
	memset(rs, 0, sizeof(*rs));
}

/* Hit counts and last hit time of what was injected (memory layer). */
static void count_hits(struct recall *r, size_t npicked)
{
	json_t *seqs = json_array();
	for (size_t i = 0; i < npicked; i++)
		if (r->it[i].kind == 'n' && r->it[i].picked)
			json_array_append_new(seqs, json_integer(r->it[i].seq));
	zc_mem_count_hits(r->m, seqs);
	json_decref(seqs);
}

static json_t *explain_json(struct recall *r)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < r->n; i++) {
		struct item *x = &r->it[i];
		json_t *j = zc_recall_item_json(x);
		json_object_set_new(j, "included", json_boolean(x->picked));
		json_object_set_new(j, "why", json_string(x->why ? x->why : ""));
		json_object_set_new(j, "features",
				    json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:i, s:i, s:i}", "entity",
					      x->entity, "lexical", x->lexical, "feedback", x->feedback, "context",
					      x->context, "recency", x->recency, "salience", x->salience,
					      "sectionPrior", x->prior, "expired", x->expired, "tokensMatched",
					      x->matched, "wordsMatched", x->words, "zcorTermsHit", x->zhits));
		json_array_append_new(arr, j);
	}
	return arr;
}

/* How the order came about, for --explain: the formula with the weights
 * in effect, the lexical shape and the statistics it used. */
static json_t *formula_json(struct recall *r)
{
	if (r->profile == ZC_PROFILE_ZCOR)
		return json_pack("{s:s, s:s}", "profile", "zcor", "order",
				 "records whose title or keywords contain an expanded term, by distinct terms "
				 "hit desc, updatedAt desc, id asc; at most 10 for the batch (seed 000)");
	const struct zc_recall_weights *w = &r->m->conf.cfg.weights;
	const struct zc_lex_shape *sh = zc_lex_shape_of(r->rs->lex);
	struct zc_buf f = ZC_BUF_INIT;
	zc_buf_addf(&f,
		    "score = %g·entity + %g·lexical + %g·feedback + %g·context + %g·recency + %g·salience + "
		    "%g·sectionPrior + %g·expired",
		    w->entity, w->lexical, w->feedback, w->context, w->recency, w->salience, w->prior,
		    w->expired);
	struct zc_buf l = ZC_BUF_INIT;
	zc_buf_addf(&l,
		    "lexical = Σ_t qw(t)·idf(t)·g(t)·tf·(k1+1)/(tf + k1·(1 − b + b·dl/avgdl)) / Σ_t qw(t)·idf(t); "
		    "idf(t) = ln(1 + (N − df + 0.5)/(df + 0.5)); k1 = %g, b = %g; qw = c·(k3+1)/(k3+c), k3 = %g, "
		    "c = occurrences, one in an earlier message counting %g; × %g for a single CJK character; "
		    "a token only a synonym brought: qw = %g; g = %g for a bigram continuing the previous one of "
		    "its run, else 1; × %g for an English function word; tokens in more than %g of the visible "
		    "records left out; at most %d distinct tokens of a batch scored, of those some visible record holds the heaviest by qw·idf; a token's postings are read by impact: "
		    "of its visible postings in each scope, the %d of highest tf of a word or bigram, %d of a single "
		    "CJK character, %d of a feedback token, the newest among equal tf, ",
		    sh->k1, sh->b, sh->k3, sh->older, sh->unigram, sh->synonym, sh->continuation,
		    sh->function, sh->skip_fraction, ZC_LEX_QUERY_TOKENS, sh->postings,
		    sh->postings_unigram, sh->postings_feedback);
	if (sh->scan > 0)
		zc_buf_addf(&l,
			    "found among its newest %d (%d of a single CJK character; a record outside those "
			    "counts as not holding the token; df is exact)",
			    sh->scan, sh->scan_unigram > 0 ? sh->scan_unigram : sh->scan);
	else
		zc_buf_addf(&l, "found over the whole list");
	json_t *weights = json_pack("{s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "preset",
				    r->m->conf.cfg.weights_name, "entity", w->entity, "lexical", w->lexical,
				    "feedback", w->feedback, "context", w->context, "recency", w->recency,
				    "salience", w->salience, "sectionPrior", w->prior, "expired", w->expired);
	struct zc_buf fb = ZC_BUF_INIT, cx = ZC_BUF_INIT;
	zc_buf_addf(&fb,
		    "BM25 (the same shape and query mass) of at most %d tokens the query lacks and at least %d "
		    "of its best %d records hold, each weighted by the share of them holding it",
		    sh->feedback_terms, sh->feedback_min, sh->feedback_docs);
	zc_buf_addf(&cx,
		    "the lexical + feedback score of a strong hit (at least half the best), given to the record "
		    "written right before and right after it in its scope within %g minutes",
		    sh->context_ms / 60000.0);
	json_t *o = json_pack("{s:s, s:s, s:o, s:s, s:s, s:s, s:s, s:{s:I, s:f, s:i, s:i, s:i, s:i, s:f}}",
			      "profile", "scored", "score", zc_buf_str(&f), "weights", weights, "lexical",
			      zc_buf_str(&l), "feedback", zc_buf_str(&fb), "context", zc_buf_str(&cx),
			      "recency", "exp(-age in days / 30), the age from the fact's date, else updatedAt",
			      "statistics", "visibleRecords", (json_int_t)r->lex.docs, "meanLength", r->lex.avgdl,
			      "queryTokens", r->lex.tokens, "tokensUsed", r->lex.used, "tokensTooCommon",
			      r->lex.skipped_common, "tokensDropped", r->lex.dropped, "queryMass", r->lex.mass);
	if (r->lex.feedback)
		json_object_set(json_object_get(o, "statistics"), "feedbackTokens", r->lex.feedback);
	zc_buf_release(&fb);
	zc_buf_release(&cx);
	zc_buf_release(&f);
	zc_buf_release(&l);
	return o;
}


int zc_recall(struct zc_recall *rs, const json_t *req, json_t **out, struct zc_err *e)
{
	struct zc_mem *m = rs->m;
	struct zc_buf text = ZC_BUF_INIT;
	struct pack p = {ZC_BUF_INIT, 0, 0};
	json_t *people = NULL, *items = json_array();
	int explain = 0, rc;
	struct recall r = {.rs = rs, .m = m, .e = e, .now = zc_mem_now(m)};
	r.terms = json_array();
	r.expanded = json_array();
	r.seen = json_object();
	r.msg_texts = json_array();
	r.extra_texts = json_array();
	*out = NULL;
	if ((rc = read_request(req, &text, &people, r.msg_texts, r.extra_texts, &explain, e)))
		goto out;
	r.ctx.actor = ZCOR_ACTOR_MODEL;
	r.ctx.conversation = zc_json_str(req, "conversation");
	zc_config_refresh(&m->conf);
	zc_syn_refresh(&m->syn, NULL);
	r.profile = m->conf.cfg.profile;
	p.budget = (size_t)m->conf.cfg.recall_chars;
	if (p.budget == 0) {
		*out = json_pack("{s:s, s:[], s:s, s:i, s:i, s:b}", "header", "", "items", "profile",
				 r.profile == ZC_PROFILE_ZCOR ? "zcor" : "scored", "budget", 0, "used", 0,
				 "disabled", 1);
		goto out;
	}
	char *norm = zc_norm(zc_buf_str(&text));
	if ((rc = zc_store_begin(&m->store, 0, e))) {
		zc_free(norm);
		goto out;
	}
	rc = zc_recall_gather_terms(&r, norm);
	if (!rc)
		rc = zc_recall_entity_candidates(&r);
	if (!rc && r.profile == ZC_PROFILE_SCORED) {
		r.short_msg = zc_recall_short_message(norm);
		rc = zc_recall_lexical_candidates(&r);
		if (!rc)
			rc = zc_recall_speaker_candidates(&r, people);
	}
	if (!rc && r.profile == ZC_PROFILE_ZCOR)
		rc = zc_recall_phrase_candidates(&r);
	zc_free(norm);
	if (!rc)
		rc = zc_recall_load_items(&r);
	if (!rc)
		zc_recall_score_items(&r);
	size_t npicked = rc ? 0 : zc_recall_select_items(&r);
	if (!rc && r.n == 0 && r.profile == ZC_PROFILE_SCORED) {
		rc = zc_recall_fallback_items(&r);
		if (!rc) {
			zc_recall_score_items(&r);
			npicked = zc_recall_fallback_select(&r);
		}
	}
	if (!rc) /* --explain shows the titles of what was left out too */
		rc = zc_recall_load_full(&r, explain ? r.n : npicked);
	if (!rc)
		rc = zc_recall_pack_items(&r, npicked, &p, items);
	zc_store_rollback(&m->store); /* read only */
	if (rc)
		goto out;
	/* a look back at what a batch recalled (console /recall) is not a hit */
	if (!json_is_false(json_object_get(req, "countHits")))
		count_hits(&r, npicked);
	*out = json_pack("{s:s, s:O, s:s, s:I, s:I, s:O, s:O}", "header", zc_buf_str(&p.b), "items",
			 items, "profile", r.profile == ZC_PROFILE_ZCOR ? "zcor" : "scored", "budget",
			 (json_int_t)p.budget, "used", (json_int_t)p.used, "terms", r.terms,
			 "expandedTerms", r.expanded);
	if (explain) {
		json_object_set_new(*out, "explain", explain_json(&r));
		json_object_set_new(*out, "formula", formula_json(&r));
	}
	if (m->conf.warning[0])
		json_object_set_new(*out, "warning", json_string(m->conf.warning));
out:
	for (size_t i = 0; i < r.n; i++)
		zc_recall_item_release(&r.it[i]);
	zc_free(r.it);
	json_decref(r.terms);
	json_decref(r.expanded);
	json_decref(r.seen);
	json_decref(r.msg_texts);
	json_decref(r.extra_texts);
	json_decref(r.lex.feedback);
	zc_seqmap_clear(&r.where);
	json_decref(people);
	json_decref(items);
	zc_buf_release(&text);
	zc_buf_release(&p.b);
	return rc;
}
