/*
 * search.c — zcor_memory_search (seed 000) and zcor_synonyms_add.
 *
 * Search has two stages. Candidates: keywords NFKC + case folded and
 * expanded through synonym classes; current visible nodes whose *title*
 * contains expanded words, by distinct words hit, then updatedAt desc,
 * then id (creation) asc, at most 20. No candidate: an empty answer and
 * no LLM call. Then one one-off request to the provider with the raw
 * keywords and the candidates' titles and full texts; it answers with at
 * most 5 ids, all among the candidates, or the call is an error. The LLM
 * call runs in `pre`, outside the write transaction. Memory layer.
 */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/json.h"
#include "memory/memory.h"
#include "text/norm.h"
#include "text/tokens.h"

struct cand {
	json_int_t seq;
	long long updated;
	int hits;
	char *id;
};

static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	if (x->hits != y->hits)
		return y->hits - x->hits;
	if (x->updated != y->updated)
		return x->updated < y->updated ? 1 : -1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The expanded words of keywords as a JSON array (new reference). */
static json_t *expand(struct zc_mem *m, json_t *keywords)
{
	json_t *set = json_object(), *words = json_array();
	size_t i;
	json_t *k;
	json_array_foreach(keywords, i, k) {
		char *n = zc_norm(json_string_value(k));
		if (*n)
			zc_syn_expand(&m->syn, n, set);
		zc_free(n);
	}
	const char *w;
	json_t *v;
	json_object_foreach(set, w, v) json_array_append_new(words, json_string(w));
	json_decref(set);
	return words;
}

/* An FTS5 expression matching every title that contains one of the
 * words, when all of them are runs of 2+ CJK characters; else NULL. */
static char *title_prefilter(json_t *words)
{
	struct zc_buf q = ZC_BUF_INIT;
	size_t i;
	json_t *w;
	json_array_foreach(words, i, w) {
		const char *t = json_string_value(w);
		if (!zc_is_cjk_run(t, 2)) {
			zc_buf_release(&q);
			return NULL;
		}
		zc_buf_addf(&q, "%s\"%s\"", q.len ? " OR " : "{title} : (", t);
	}
	if (!q.len)
		return NULL;
	zc_buf_addc(&q, ')');
	return zc_buf_detach(&q);
}

/* Candidate stage, in a read transaction; fills state.candidates. */
static int candidates(struct zc_op *op, json_t *words, json_t **out, struct zc_err *e)
{
	struct zc_store *s = &op->m->store;
	*out = json_array();
	int rc = zc_store_begin(s, 0, e);
	if (rc)
		return rc;
	/* when every word is a run of CJK characters, the full-text index
	 * gives every title that can contain one (see query_prefilter in
	 * node.c); the exact test is the same either way */
	char *pre = title_prefilter(words);
	sqlite3_stmt *st =
		pre ? zc_stmt(s,
			      "SELECT seq, id, updated_at, (SELECT count(*) FROM json_each(?1) w "
			      "WHERE instr(title_norm, w.value) > 0) AS words_hit FROM nodes "
			      "WHERE seq IN (SELECT rowid FROM nodes_fts WHERE nodes_fts MATCH ?2) AND "
			      "+superseded_by IS NULL AND " ZC_SCOPE_VISIBLE_SQL " AND words_hit > 0",
			      e)
		    : zc_stmt(s,
			      "SELECT seq, id, updated_at, (SELECT count(*) FROM json_each(?1) w "
			      "WHERE instr(title_norm, w.value) > 0) AS words_hit FROM nodes "
			      "WHERE superseded_by IS NULL AND " ZC_SCOPE_VISIBLE_SQL " AND words_hit > 0",
			      e);
	if (!st) {
		zc_free(pre);
		zc_store_rollback(s);
		return e->code;
	}
	char *wtext = zc_json_dump(words);
	sqlite3_bind_text(st, 1, wtext, -1, zc_free);
	if (pre)
		sqlite3_bind_text(st, 2, pre, -1, zc_free);
	zc_bind_scope(op, st);
	size_t n = 0, cap = 64;
	struct cand *c = zc_malloc(cap * sizeof(*c));
	int step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		if (n == cap) {
			cap *= 2;
			c = zc_realloc(c, cap * sizeof(*c));
		}
		c[n].seq = sqlite3_column_int64(st, 0);
		c[n].id = zc_strdup((const char *)sqlite3_column_text(st, 1));
		c[n].updated = sqlite3_column_int64(st, 2);
		c[n].hits = sqlite3_column_int(st, 3);
		n++;
	}
	sqlite3_reset(st);
	if (step != SQLITE_DONE)
		rc = zc_store_fail(s, step, e, "searching titles");
	qsort(c, n, sizeof(*c), cand_cmp);
	for (size_t i = 0; i < n; i++) {
		if (!rc && i < ZC_SEARCH_CANDIDATES) {
			json_t *node = NULL;
			if ((rc = zc_node_load(op, c[i].id, &node, e)) == ZCOR_OK) {
				json_object_set_new(node, "titleHits", json_integer(c[i].hits));
				json_array_append_new(*out, node);
			}
		}
		zc_free(c[i].id);
	}
	zc_free(c);
	zc_store_rollback(s); /* read only */
	return rc;
}

static char *prompt_user(json_t *keywords, json_t *cands)
{
	struct zc_buf b = ZC_BUF_INIT;
	char *kw = zc_json_dump(keywords);
	zc_buf_addf(&b, "检索关键词 / keywords: %s\n\n候选记忆 / candidates:\n", kw);
	zc_free(kw);
	size_t i;
	json_t *n;
	json_array_foreach(cands, i, n) {
		zc_buf_addf(&b, "\n[id: %s]\n标题 / title: %s\n正文 / content:\n%s\n",
			    zc_json_str(n, "id"), zc_json_str(n, "title"), zc_json_str(n, "content"));
	}
	zc_buf_adds(&b, "\n只回答 JSON：{\"ids\": [按相关性排序的 id，最多 5 个，可以为空]}\n");
	return zc_buf_detach(&b);
}

static const char search_system[] =
	"你是记忆检索的筛选器。根据检索关键词，从候选记忆中挑出真正相关的，按相关性从高到低排列，"
	"最多 5 条；都不相关就返回空数组。只能使用候选里出现的 id。只输出 JSON，例如 "
	"{\"ids\":[\"m000001\"]}，不要输出其它文字。\n"
	"You filter memory search results: pick the candidates relevant to the keywords, most "
	"relevant first, at most 5, none if nothing fits; only ids from the candidates; answer "
	"with JSON only.";

/*
 * Strict reading of the provider's answer: a JSON object {"ids": [...]}
 * (optionally inside one ```json fence), at most 5 distinct ids, every
 * one a candidate.
 */
static int parse_reply(const char *reply, json_t *cands, json_t **ids, struct zc_err *e)
{
	const char *start = reply, *end = reply + strlen(reply);
	while (start < end && (*start == ' ' || *start == '\n' || *start == '\r' || *start == '\t'))
		start++;
	while (end > start && (end[-1] == ' ' || end[-1] == '\n' || end[-1] == '\r' || end[-1] == '\t'))
		end--;
	if (end - start > 6 && strncmp(start, "```", 3) == 0 && strncmp(end - 3, "```", 3) == 0) {
		const char *nl = memchr(start, '\n', (size_t)(end - start));
		if (nl) {
			start = nl + 1;
			end -= 3;
		}
	}
	json_error_t je;
	json_t *doc = json_loadb(start, (size_t)(end - start), JSON_REJECT_DUPLICATES, &je);
	json_t *arr = json_object_get(doc, "ids");
	if (!json_is_array(arr) || json_object_size(doc) != 1) {
		json_decref(doc);
		return zc_fail(e, ZCOR_EPROVIDER,
			       "the LLM answered something other than {\"ids\": [...]}: '%s'; try "
			       "again, or use zcor_memory_query",
			       ZC_Q(reply, 200));
	}
	if (json_array_size(arr) > ZC_SEARCH_PICK) {
		json_decref(doc);
		return zc_fail(e, ZCOR_EPROVIDER, "the LLM returned %zu ids, more than %d",
			       json_array_size(arr), ZC_SEARCH_PICK);
	}
	size_t i, j;
	json_t *v, *c;
	json_array_foreach(arr, i, v) {
		int found = 0;
		if (!json_is_string(v)) {
			json_decref(doc);
			return zc_fail(e, ZCOR_EPROVIDER, "the LLM returned an id that is not a string");
		}
		for (j = 0; j < i; j++) {
			if (json_equal(json_array_get(arr, j), v)) {
				zc_fail(e, ZCOR_EPROVIDER, "the LLM returned id '%s' twice",
					json_string_value(v));
				json_decref(doc);
				return ZCOR_EPROVIDER;
			}
		}
		json_array_foreach(cands, j, c) {
			if (strcmp(zc_json_str(c, "id"), json_string_value(v)) == 0)
				found = 1;
		}
		if (!found) {
			zc_fail(e, ZCOR_EPROVIDER,
				"the LLM returned id '%s', which is not among the candidates",
				json_string_value(v));
			json_decref(doc);
			return ZCOR_EPROVIDER;
		}
	}
	*ids = json_incref(arr);
	json_decref(doc);
	return ZCOR_OK;
}

static int search_pre(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	struct zc_mem *m = op->m;
	json_t *keywords = json_object_get(args, "keywords");
	int rc = zc_syn_refresh(&m->syn, e);
	if (rc)
		return rc;
	json_t *words = expand(m, keywords), *cands = NULL, *ids = NULL;
	if ((rc = candidates(op, words, &cands, e)))
		goto out;
	if (json_array_size(cands) == 0) {
		*out = json_pack("{s:[], s:i, s:O}", "items", "candidates", 0, "expandedKeywords", words);
		if (zc_syn_warning(&m->syn)[0])
			json_object_set_new(*out, "warning", json_string(zc_syn_warning(&m->syn)));
		goto out;
	}
	/* the provider is the caller's (tools/ hands it as the op's ud) */
	const struct zcor_provider *provider = op->ud;
	if (!provider || !provider->complete) {
		rc = zc_fail(e, ZCOR_ENOPROVIDER,
			     "no LLM provider configured, so zcor_memory_search cannot filter its %zu "
			     "candidates; use zcor_memory_query for a local keyword match",
			     json_array_size(cands));
		goto out;
	}
	char *user = prompt_user(keywords, cands), *reply = NULL, *perr = NULL;
	int prc = provider->complete(provider->ud, search_system, user, &reply, &perr);
	zc_free(user);
	if (prc != 0 || !reply) {
		rc = zc_fail(e, ZCOR_EPROVIDER, "the LLM request failed: %s",
			     perr ? perr : "no answer");
	} else {
		rc = parse_reply(reply, cands, &ids, e);
	}
	free(reply);
	free(perr);
	if (!rc)
		op->state = json_pack("{s:o, s:O, s:I}", "ids", ids, "words", words, "candidates",
				      (json_int_t)json_array_size(cands));
out:
	json_decref(words);
	json_decref(cands);
	return rc;
}

static int search_body(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	json_t *items = json_array();
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(op->state, "ids"), i, v) {
		json_t *n = NULL;
		/* latest content; a node deleted meanwhile is simply left out */
		if (zc_node_load(op, json_string_value(v), &n, e) == ZCOR_OK)
			json_array_append_new(items, n);
	}
	zc_err_clear(e);
	*out = json_pack("{s:o, s:O, s:O}", "items", items, "candidates",
			 json_object_get(op->state, "candidates"), "expandedKeywords",
			 json_object_get(op->state, "words"));
	if (zc_syn_warning(&op->m->syn)[0])
		json_object_set_new(*out, "warning", json_string(zc_syn_warning(&op->m->syn)));
	return ZCOR_OK;
}

const struct zc_opdef zc_op_memory_search = {"zcor_memory_search", search_pre, search_body,
						ZC_OP_READ | ZC_OP_FTS};

/* ---- zcor_synonyms_add ---------------------------------------------- */

static int synonyms_add(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	int changed = 0;
	json_t *cls = NULL;
	/* synonyms.json is shared: a word learned in a private chat would
	 * steer recall in every group (Q-SCOPE) */
	if (zc_scope_is_private(op->ctx))
		return zc_fail(e, ZCOR_EFORBIDDEN,
			       "synonyms are shared with every conversation and a private conversation "
			       "cannot add them; save what you learned here with zcor_memory_write or "
			       "in this conversation's own MEMORY.md (qq_memory)");
	int rc = zc_syn_add(&op->m->syn, json_object_get(args, "terms"), &changed, &cls, e);
	if (rc)
		return rc;
	op->side_effect = changed;
	if (changed)
		zc_op_after(op, json_pack("{s:O}", "synonymGroup", json_object_get(args, "terms")));
	*out = json_pack("{s:b, s:o}", "added", changed, "expansion", cls);
	return ZCOR_OK;
}

const struct zc_opdef zc_op_synonyms_add = {"zcor_synonyms_add", NULL, synonyms_add, 0};

/* ---- synonym groups for hosts: edit and delete (recorded) ------------- */

/* {"index": n, "terms": [...]} replaces group n; "terms": null deletes it;
 * "expected": the group as the caller read it (zc_syn_set_group). */
static int synonyms_edit(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	json_t *index = json_object_get(args, "index"), *terms = json_object_get(args, "terms");
	json_t *expected = json_object_get(args, "expected");
	const char *k;
	json_t *v;
	json_object_foreach(args, k, v) {
		if (strcmp(k, "index") && strcmp(k, "terms") && strcmp(k, "expected"))
			return zc_fail(e, ZCOR_EINVAL,
				       "unknown argument '%s'; this takes: index, terms, expected", ZC_Q(k, 60));
	}
	if (!json_is_integer(index) || json_integer_value(index) < 0)
		return zc_fail(e, ZCOR_EINVAL, "argument 'index': must be a group number (0 or more)");
	if (!terms || (!json_is_null(terms) && !json_is_array(terms)))
		return zc_fail(e, ZCOR_EINVAL,
			       "argument 'terms': must be an array of at least 2 words, or null to delete "
			       "the group");
	if (expected && !json_is_null(expected)) {
		size_t i;
		json_array_foreach(expected, i, v) if (!json_is_string(v)) break;
		if (!json_is_array(expected) || i < json_array_size(expected))
			return zc_fail(e, ZCOR_EINVAL,
				       "argument 'expected': must be the group's terms as listed (an array "
				       "of strings), or absent");
	} else {
		expected = NULL;
	}
	json_t *before = NULL;
	int rc = zc_syn_set_group(&op->m->syn, (size_t)json_integer_value(index),
				  json_is_null(terms) ? NULL : terms, expected, &before, e);
	if (rc)
		return rc;
	op->side_effect = 1;
	zc_op_before(op, json_pack("{s:O, s:o}", "index", index, "synonymGroup", before));
	if (!json_is_null(terms))
		zc_op_after(op, json_pack("{s:O, s:O}", "index", index, "synonymGroup", terms));
	*out = json_pack("{s:O, s:b}", "index", index, "deleted", json_is_null(terms));
	return ZCOR_OK;
}

const struct zc_opdef zc_op_synonyms_edit = {"synonyms_edit", NULL, synonyms_edit, 0};

int zc_synonyms_expand(struct zc_mem *m, const char *word, json_t **out, struct zc_err *e)
{
	int rc = zc_syn_refresh(&m->syn, e);
	if (rc)
		return rc;
	char *n = zc_norm(word);
	json_t *set = json_object(), *arr = json_array();
	if (*n)
		zc_syn_expand(&m->syn, n, set);
	const char *k;
	json_t *v;
	json_object_foreach(set, k, v) json_array_append_new(arr, json_string(k));
	json_decref(set);
	*out = json_pack("{s:s, s:s, s:o}", "word", word, "normalized", n, "expansion", arr);
	zc_free(n);
	if (zc_syn_warning(&m->syn)[0])
		json_object_set_new(*out, "warning", json_string(zc_syn_warning(&m->syn)));
	return ZCOR_OK;
}
