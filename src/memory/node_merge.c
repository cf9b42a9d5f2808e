/*
 * node_merge.c — zcor_memory_merge and zcor_memory_supersede (seed 000,
 * SPEC §3.1): a new record that replaces others, the old ones kept and
 * marked, never deleted. Memory layer, write operations of the runner:
 * they never begin or commit on their own, and never change a record the
 * caller's conversation may not write.
 */
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/json.h"
#include "base/timeutil.h"
#include "memory/memory.h"
#include "memory/node_int.h"
#include "text/norm.h"
#include "text/tokens.h"

/* ---- merge and supersede -------------------------------------------- */

/* Loads every id as a current (not superseded) node ctx may change. */
static int load_sources(struct zc_op *op, json_t *ids, json_t **nodes, struct zc_err *e)
{
	*nodes = json_array();
	json_t *seen = json_object();
	size_t i;
	json_t *v;
	int rc = ZCOR_OK;
	json_array_foreach(ids, i, v) {
		const char *id = json_string_value(v);
		if (json_object_get(seen, id)) {
			rc = zc_fail(e, ZCOR_EINVAL, "argument 'ids': '%s' is listed twice", id);
			break;
		}
		json_object_set_new(seen, id, json_true());
		json_t *n = NULL;
		if ((rc = zc_node_load_writable(op, id, &n, e))) {
			zc_err_prefix(e, "argument 'ids'");
			break;
		}
		json_array_append_new(*nodes, n);
		if (json_is_string(json_object_get(n, "supersededBy"))) {
			rc = zc_fail(e, ZCOR_ECONFLICT,
				     "argument 'ids': memory '%s' is already superseded by '%s'", id,
				     zc_json_str(n, "supersededBy"));
			break;
		}
	}
	json_decref(seen);
	if (rc) {
		json_decref(*nodes);
		*nodes = NULL;
	}
	return rc;
}

/* Marks each source superseded by `by` and moves its important mark. */
static int supersede_all(struct zc_op *op, json_t *sources, const char *by, const char *reason,
			 struct zc_err *e)
{
	size_t i;
	json_t *n;
	int rc;
	json_array_foreach(sources, i, n) {
		const char *id = zc_json_str(n, "id");
		zc_op_before(op, json_deep_copy(n));
		json_object_set_new(n, "supersededBy", json_string(by));
		json_object_set_new(n, "supersededReason", json_string(reason));
		zc_json_set_time(n, "updatedAt", op->now);
		if ((rc = zc_node_save(op, n, e)) || (rc = zc_node_move_important(op, id, by, e)))
			return rc;
		json_object_set_new(n, "important", json_false());
		zc_op_after(op, json_deep_copy(n));
	}
	return ZCOR_OK;
}

/* Q-SCOPE: every source must be allowed to be superseded by a record of
 * `scope` (zc_scope_may_link); names only records ctx may change. */
static int check_supersede_scope(struct zc_op *op, json_t *sources, const char *by,
				 const char *scope, struct zc_err *e)
{
	size_t i;
	json_t *n;
	json_array_foreach(sources, i, n) {
		const char *s = zc_json_str(n, "scope");
		if (zc_scope_may_link(s, scope))
			continue;
		char b1[96], b2[96];
		return zc_fail(e, ZCOR_ECONFLICT,
			       "argument 'ids': memory '%s' is %s and '%s' is %s; a memory can only be "
			       "merged with or superseded by memories of its own scope (Q-SCOPE)",
			       zc_json_str(n, "id"), zc_scope_words(op->ctx, s, b1, sizeof(b1)), by,
			       zc_scope_words(op->ctx, scope, b2, sizeof(b2)));
	}
	return ZCOR_OK;
}

static int memory_merge(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	json_t *sources = NULL, *node = NULL;
	const char *reason = zc_json_str(args, "reason"), *scope = NULL;
	char id[16];
	int rc;
	if ((rc = zc_node_check_title(zc_json_str(args, "title"), e)) ||
	    (rc = load_sources(op, json_object_get(args, "ids"), &sources, e)))
		goto out;
	/* the merged record has its sources' scope, so they must share one */
	scope = zc_json_str(json_array_get(sources, 0), "scope");
	if ((rc = check_supersede_scope(op, sources, zc_json_str(json_array_get(sources, 0), "id"),
					scope, e)) ||
	    (rc = zc_node_new_id(op, id, e)))
		goto out;
	/* the merged record stays where its sources were when they agree */
	json_t *parent = json_object_get(json_array_get(sources, 0), "parentId");
	size_t i;
	json_t *n;
	json_array_foreach(sources, i, n) {
		if (!json_equal(json_object_get(n, "parentId"), parent))
			parent = json_null();
	}
	json_t *kw = json_object_get(args, "keywords");
	node = json_pack("{s:s, s:O, s:O, s:o, s:O, s:s, s:s, s:O, s:s}", "id", id, "title",
			 json_object_get(args, "title"), "content", json_object_get(args, "content"),
			 "keywords", kw ? json_incref(kw) : json_array(), "parentId", parent, "scope",
			 scope, "kind", "memory", "mergedFrom", json_object_get(args, "ids"),
			 "mergedReason", reason);
	if ((rc = zc_node_save(op, node, e)) || (rc = supersede_all(op, sources, id, reason, e)))
		goto out;
	json_decref(node);
	if ((rc = zc_node_load(op, id, &node, e)))
		goto out;
	zc_op_after(op, json_deep_copy(node));
	*out = json_pack("{s:O, s:O}", "node", node, "superseded", json_object_get(args, "ids"));
out:
	json_decref(sources);
	json_decref(node);
	return rc;
}

static int memory_supersede(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	const char *by = zc_json_str(args, "replacementId");
	const char *reason = zc_json_str(args, "reason");
	json_t *sources = NULL, *repl = NULL;
	int rc;
	if ((rc = zc_node_load(op, by, &repl, e))) {
		zc_err_prefix(e, "argument 'replacementId'");
		goto out;
	}
	if (json_is_string(json_object_get(repl, "supersededBy"))) {
		rc = zc_fail(e, ZCOR_ECONFLICT,
			     "argument 'replacementId': '%s' is itself superseded by '%s'; use that one",
			     by, zc_json_str(repl, "supersededBy"));
		goto out;
	}
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(args, "ids"), i, v) {
		if (strcmp(json_string_value(v), by) == 0) {
			rc = zc_fail(e, ZCOR_EINVAL,
				     "argument 'ids': '%s' cannot supersede itself", by);
			/* the page words it (the replacement is among them) */
			zc_json_err_detail(e, json_pack("{s:s, s:s, s:s}", "field", "ids", "reason",
							"replacement_among", "id", by));
			goto out;
		}
	}
	if ((rc = load_sources(op, json_object_get(args, "ids"), &sources, e)) ||
	    (rc = check_supersede_scope(op, sources, by, zc_json_str(repl, "scope"), e)) ||
	    (rc = supersede_all(op, sources, by, reason, e)))
		goto out;
	/* the replacement took a source's important mark: the record holds
	 * that change too (after the sources, so before[i] and after[i] stay
	 * one record), or a revert could not give the mark back */
	json_t *now = NULL;
	if ((rc = zc_node_load(op, by, &now, e)))
		goto out;
	if (!json_equal(json_object_get(now, "important"), json_object_get(repl, "important"))) {
		zc_op_before(op, json_incref(repl));
		zc_op_after(op, json_incref(now));
	}
	json_decref(now);
	*out = json_pack("{s:O, s:s}", "superseded", json_object_get(args, "ids"), "replacementId", by);
out:
	json_decref(sources);
	json_decref(repl);
	return rc;
}

const struct zc_opdef zc_op_memory_merge = {"zcor_memory_merge", NULL, memory_merge, 0};
const struct zc_opdef zc_op_memory_supersede = {"zcor_memory_supersede", NULL, memory_supersede, 0};
