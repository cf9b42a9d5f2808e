/*
 * node_find.c — the operator's search in the Memory page (issue 18,
 * defect 4): every keyword, or a word of its synonym class, must be in a
 * memory's title, keywords, content, or the name or aliases of a person
 * linked to it; each result says which field matched which keyword and
 * through which word. Not a tool: the model's zcor_memory_query keeps
 * seed 000's rule (title and content, no synonyms), node_query.c.
 *
 * Memory layer, a read operation (ZC_OP_READ): the operator's page leaves
 * no history record for it (op.c). It reads the visible records of the
 * time range once and tests them here, newest first: the fields to test
 * are normalised text the SQL cannot expand synonyms over.
 */
#include <string.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/json.h"
#include "base/utf8.h"
#include "memory/memory.h"
#include "memory/node_int.h"
#include "text/norm.h"

#define FIND_KEYWORDS_MAX 20

/* The fields in the order a match is reported (the first that holds it). */
enum { F_TITLE, F_KEYWORDS, F_CONTENT, F_ALIAS, F_N };
static const char *const field_names[F_N] = {"title", "keywords", "content", "alias"};

/* One keyword: as typed, and the normalised words of its class. */
struct kw {
	const char *typed;
	json_t *words; /* object: word -> true */
};

/* {keyword, field, word} for the first field holding a word of k, or NULL. */
static json_t *match_one(const struct kw *k, char *const text[F_N])
{
	for (int f = 0; f < F_N; f++) {
		const char *w;
		json_t *v;
		json_object_foreach(k->words, w, v) {
			(void)v;
			if (*w && text[f] && strstr(text[f], w))
				return json_pack("{s:s, s:s, s:s}", "keyword", k->typed, "field", field_names[f],
						 "word", w);
		}
	}
	return NULL;
}

static int read_keywords(struct zc_op *op, json_t *args, struct kw *kws, size_t *n, struct zc_err *e)
{
	json_t *a = json_object_get(args, "keywords");
	*n = 0;
	if (!a)
		return ZCOR_OK;
	if (!json_is_array(a))
		return zc_fail(e, ZCOR_EINVAL, "argument 'keywords': must be an array of strings");
	if (json_array_size(a) > FIND_KEYWORDS_MAX)
		return zc_fail(e, ZCOR_EINVAL, "argument 'keywords': at most %d", FIND_KEYWORDS_MAX);
	zc_syn_refresh(&op->m->syn, NULL);
	size_t i;
	json_t *v;
	json_array_foreach(a, i, v) {
		if (!json_is_string(v))
			return zc_fail(e, ZCOR_EINVAL, "argument 'keywords[%zu]': must be a string", i);
		char *w = zc_norm(json_string_value(v));
		if (!w || !*w) {
			zc_free(w);
			continue;
		}
		kws[*n].typed = json_string_value(v);
		kws[*n].words = json_object();
		zc_syn_expand(&op->m->syn, w, kws[*n].words);
		json_object_set_new(kws[*n].words, w, json_true());
		zc_free(w);
		(*n)++;
	}
	return ZCOR_OK;
}

#define FIND_SQL                                                                             \
	"SELECT " ZC_NODE_COLS ", title_norm,"                                                  \
	" (SELECT group_concat(p.name || char(10) || p.aliases, char(10)) FROM people p"        \
	"  WHERE p.memory_node_id = nodes.id)"                                                   \
	" FROM nodes WHERE (?1 OR superseded_by IS NULL) AND " ZC_SCOPE_VISIBLE_SQL             \
	" AND (?2 IS NULL OR updated_at >= ?2) AND (?3 IS NULL OR updated_at <= ?3)"            \
	" AND (?5 IS NULL OR scope = ?5)"

/* The orders the page offers ("sort"): the last change (the default), the
 * hit count, the creation. */
static const struct {
	const char *name, *sql;
} orders[] = {
	{"updated", FIND_SQL " ORDER BY updated_at DESC, seq DESC"},
	{"hits", FIND_SQL " ORDER BY hits DESC, updated_at DESC, seq DESC"},
	{"created", FIND_SQL " ORDER BY seq DESC"},
};

/* "scope": only the records of that scope ("global", or a conversation
 * key: its own records; a conversation's page lists them, issue 18), on
 * top of what the caller may see; NULL when absent. */
static int scope_arg(json_t *args, const char **scope, struct zc_err *e)
{
	json_t *v = json_object_get(args, "scope");
	*scope = NULL;
	if (!v)
		return ZCOR_OK;
	const char *s = json_string_value(v);
	if (!s)
		return zc_fail(e, ZCOR_EINVAL,
			       "argument 'scope': must be a string, \"global\" or a conversation key");
	if (strcmp(s, "global") != 0 && !zc_conv_valid(s))
		return zc_fail(e, ZCOR_EINVAL,
			       "argument 'scope': '%s' is neither \"global\" nor a conversation key "
			       "(group:<id>, private:<qq>, console:<name>)",
			       ZC_Q(s, 40));
	*scope = s;
	return ZCOR_OK;
}

static int memory_find(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	int64_t from, to;
	long long limit, offset, total = 0;
	const char *scope = NULL;
	struct kw kws[FIND_KEYWORDS_MAX];
	size_t nk = 0;
	json_t *items = json_array();
	int rc;
	if ((rc = zc_time_arg(args, "from", &from, e)) || (rc = zc_time_arg(args, "to", &to, e)) ||
	    (rc = zc_page_args(args, &limit, &offset, e)) || (rc = scope_arg(args, &scope, e)) ||
	    (rc = read_keywords(op, args, kws, &nk, e)))
		goto out;
	const char *sort = zc_json_str(args, "sort");
	size_t o = 0;
	while (sort && o < sizeof(orders) / sizeof(orders[0]) && strcmp(sort, orders[o].name))
		o++;
	if (o == sizeof(orders) / sizeof(orders[0])) {
		rc = zc_fail(e, ZCOR_EINVAL, "argument 'sort': '%s' is not one of updated, hits, created",
			     ZC_Q(sort, 30));
		goto out;
	}
	sqlite3_stmt *st = zc_stmt(&op->m->store, orders[o].sql, e);
	if (!st) {
		rc = e->code;
		goto out;
	}
	sqlite3_bind_int(st, 1, json_is_true(json_object_get(args, "includeSuperseded")));
	if (from >= 0)
		sqlite3_bind_int64(st, 2, from);
	if (to >= 0)
		sqlite3_bind_int64(st, 3, to);
	if (scope)
		sqlite3_bind_text(st, 5, scope, -1, SQLITE_TRANSIENT);
	zc_bind_scope(op, st);
	int step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		/* the content is normalised here (schema 19 keeps no copy) */
		const char *people = (const char *)sqlite3_column_text(st, 26);
		char *text[F_N] = {(char *)sqlite3_column_text(st, 25),
				   zc_norm((const char *)sqlite3_column_text(st, 3)),
				   zc_norm((const char *)sqlite3_column_text(st, 2)),
				   people ? zc_norm(people) : NULL};
		json_t *matched = json_array();
		int all = 1;
		for (size_t i = 0; i < nk && all; i++) {
			json_t *m = match_one(&kws[i], text);
			all = m != NULL;
			if (m)
				json_array_append_new(matched, m);
		}
		zc_free(text[F_KEYWORDS]);
		zc_free(text[F_CONTENT]);
		zc_free(text[F_ALIAS]);
		if (all && total++ >= offset && (long long)json_array_size(items) < limit) {
			json_t *node = zc_node_from_row(st);
			json_object_set_new(node, "matched", matched);
			json_array_append_new(items, node);
		} else {
			json_decref(matched);
		}
	}
	sqlite3_reset(st);
	if (step != SQLITE_DONE) {
		rc = zc_store_fail(&op->m->store, step, e, "searching memories");
		goto out;
	}
	*out = zc_page_result(items, total, offset);
out:
	for (size_t i = 0; i < nk; i++)
		json_decref(kws[i].words);
	json_decref(items);
	return rc;
}

const struct zc_opdef zc_op_memory_find = {"memory find", NULL, memory_find, ZC_OP_READ | ZC_OP_FTS};
