/*
 * recall.c — auto-recall for a batch of messages (SPEC §4, recall.h).
 *
 *   terms      NFKC + case fold; ICU words of ≥ 2 characters (single
 *              characters for messages of ≤ 2); every dictionary term
 *              present verbatim (substrings looked up in the terms table,
 *              and in the synonym index); then synonym expansion.
 *   candidates only records the conversation may see (global + its own),
 *              current, hot and not 存疑 — filtered before anything is
 *              scored, so other conversations' records are never candidates:
 *              entity hits (terms table), character-bigram IDF over
 *              nodes_fts (scored) or title/keyword phrase hits (zcor), the
 *              speakers and @-mentioned people. Each stage reads at most a
 *              bounded number of index entries, whatever the store's size.
 *   score      profile zcor (seed 000) or scored (seed 003).
 *   pack       into recallChars, ids kept when text is cut.
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
	"messages, speakers, mentions, explain\"},"
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
	"  \"explain\": {\"type\": \"boolean\", \"x-error\": \"must be true or false\"}}}");

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
static int read_request(const json_t *req, struct zc_buf *text, json_t **people, int *explain,
			struct zc_err *e)
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
		const char *sid = json_is_object(v) ? zc_json_str(v, "senderId") : NULL;
		const char *sname = json_is_object(v) ? zc_json_str(v, "senderName") : NULL;
		if (sid)
			json_array_append_new(*people, json_string(sid));
		if (sname) {
			zc_buf_adds(text, sname);
			zc_buf_addc(text, '\n');
		}
	}
	json_array_foreach(json_object_get(req, "speakers"), i, v) {
		json_array_append_new(*people, json_string(zc_json_str(v, "id")));
		if (zc_json_str(v, "name")) {
			zc_buf_adds(text, zc_json_str(v, "name"));
			zc_buf_addc(text, '\n');
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
 * the lengths; the rows of what gets injected; the full-text index's
 * blocks. The big ones newest first: a budget that holds only part of
 * them keeps the records recall ranks up by recency.
 */
static const char *const warm_sql[] = {
	"SELECT value FROM meta ORDER BY key",
	"SELECT maxlen FROM term_prefix",
	"SELECT v FROM nodes_fts_config",
	"SELECT pgno FROM nodes_fts_idx",
	/* the header's extras: INDEX.md, the slang vocabulary, the stickers */
	"SELECT seq FROM nodes WHERE kind IN ('document', 'cognition', 'sticker')",
	"SELECT seq FROM nodes INDEXED BY nodes_view WHERE scope = 'global' AND kind = 'sticker'",
	"SELECT person_id FROM people ORDER BY person_id",
	"SELECT name FROM people NOT INDEXED",
	"SELECT line FROM view_lines ORDER BY kind, ref", /* citations */
	/* the no-hit fallback's global records (a conversation's own are
	 * read by its first fallback) */
	"SELECT seq FROM nodes INDEXED BY nodes_scope_pinned WHERE pinned = 1 AND scope = 'global' AND "
	"tier = 'hot' ORDER BY updated_at DESC LIMIT 256",
	"SELECT seq FROM nodes INDEXED BY nodes_scope_recent WHERE scope = 'global' AND tier = 'hot' "
	"ORDER BY updated_at DESC LIMIT 256",
	"SELECT seq FROM nodes INDEXED BY nodes_recall ORDER BY seq DESC",
	/* (ORDER BY the key: a WITHOUT ROWID table's own b-tree, not an index) */
	"SELECT ref FROM terms ORDER BY term, scope, kind, ref",
	"SELECT id FROM nodes_fts_docsize ORDER BY id DESC",
	"SELECT seq FROM nodes NOT INDEXED ORDER BY seq DESC",
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
	struct zc_recall_cache *c = rs->cache;
	if (c) {
		for (size_t i = 0; i < TOKCACHE_SLOTS; i++) {
			zc_free(c->slot[i].rows);
			zc_free(c->slot[i].sid);
		}
		json_decref(c->scopes);
		zc_free(c);
	}
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
				    json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:i}", "entity", x->entity,
					      "lexical", x->lexical, "recency", x->recency, "salience",
					      x->salience, "sectionPrior", x->prior, "expired", x->expired,
					      "zcorTermsHit", x->zhits));
		json_array_append_new(arr, j);
	}
	return arr;
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
	*out = NULL;
	if ((rc = read_request(req, &text, &people, &explain, e)))
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
		rc = zc_recall_lexical_candidates(&r, norm, zc_recall_short_message(norm));
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
	count_hits(&r, npicked);
	*out = json_pack("{s:s, s:O, s:s, s:I, s:I, s:O, s:O}", "header", zc_buf_str(&p.b), "items",
			 items, "profile", r.profile == ZC_PROFILE_ZCOR ? "zcor" : "scored", "budget",
			 (json_int_t)p.budget, "used", (json_int_t)p.used, "terms", r.terms,
			 "expandedTerms", r.expanded);
	if (explain)
		json_object_set_new(*out, "explain", explain_json(&r));
	if (m->conf.warning[0])
		json_object_set_new(*out, "warning", json_string(m->conf.warning));
out:
	for (size_t i = 0; i < r.n; i++)
		zc_recall_item_release(&r.it[i]);
	zc_free(r.it);
	json_decref(r.terms);
	json_decref(r.expanded);
	json_decref(r.seen);
	zc_recall_seqmap_clear(&r.where);
	json_decref(people);
	json_decref(items);
	zc_buf_release(&text);
	zc_buf_release(&p.b);
	return rc;
}
