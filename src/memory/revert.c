/*
 * revert.c — reverting one history record (issue 18, the page's 撤销此更改
 * / "Revert this change"): a new operation of its own, recorded like any
 * change (history_revert, arguments {"seq": n}), that puts back the
 * before-snapshots the record holds, in one transaction with its record.
 *
 * What can be reverted (docs/API.md, "Reverting a change"): the records of
 * the memory and relationship changes whose snapshots are whole nodes and
 * people (write, delete, important, merge, supersede, relationship write
 * and delete) and of a revert itself (which then redoes). A node or
 * person of the record's after-images only (a create) is deleted, one of
 * its before-images only (a delete) written again, one of both given its
 * before-image back. Refused, changing nothing (ZCOR_ECONFLICT, details
 * {"reason", "seq", …}): a failed call, a record without snapshots (a
 * read, a change that changed nothing), another kind of change, a later
 * recorded change of the same node or person (named) or a later restore
 * or import, a target that is no longer as the record left it, and
 * whatever the store's own rules refuse (a created memory that has
 * children now, a parent or link target that is gone, five important
 * marks already).
 *
 * Memory layer, an operation of the runner: it changes nodes and people
 * only through node.c's and people.c's functions and never begins or
 * commits a transaction itself.
 */
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/json.h"
#include "base/timeutil.h"
#include "base/utf8.h"
#include "memory/memory.h"

enum { K_NODE, K_PERSON };

/* The operations whose records hold whole nodes and people to put back. */
static const char *const revertible[] = {
	"zcor_memory_write",       "zcor_memory_delete",	   "zcor_memory_important",
	"zcor_memory_merge",       "zcor_memory_supersede",    "zcor_relationship_write",
	"zcor_relationship_delete", "history_revert",	   NULL};

/* Later records that replace the whole state: they conflict with any revert. */
#define REPLACES_ALL "('zcor_memory_restore', 'import qq-memory')"

#define CONFLICTS_LISTED 5 /* the detail holds 512 bytes (base/err.h) */

/* One node or person the record changed: its images (borrowed; NULL
 * when absent) and what it is now (owned). */
struct target {
	int kind;
	const char *id;
	json_t *before, *after, *now;
};

struct revert {
	long long seq;
	const char *operation;
	json_t *rec; /* {operation, arguments, status, before, after} */
	struct target *t;
	size_t n;
};

/* The identity of a snapshot: a node (id, title, content) or a person
 * (personId, name); NULL for anything else (a view entry, a file). */
static const char *ident(const json_t *s, int *kind)
{
	if (!json_is_object(s))
		return NULL;
	const char *p = zc_json_str(s, "personId");
	if (p && json_object_get(s, "name")) {
		*kind = K_PERSON;
		return p;
	}
	const char *id = zc_json_str(s, "id");
	if (id && json_object_get(s, "title") && json_object_get(s, "content")) {
		*kind = K_NODE;
		return id;
	}
	return NULL;
}

static int refuse(struct zc_err *e, json_t *detail)
{
	zc_json_err_detail(e, detail);
	return ZCOR_ECONFLICT;
}

/* The full snapshots of a row's before (column b) and after (b + 1)
 * columns, arguments at column args_col, time at_col. */
static void expand(sqlite3_stmt *st, int at_col, int args_col, int b, json_t **before,
		   json_t **after, json_t **args)
{
	char iso[ZC_TIME_LEN];
	zc_time_format(sqlite3_column_int64(st, at_col), iso);
	*args = zc_col_json(st, args_col, 's');
	*after = zc_hist_expand(zc_col_json(st, b + 1, 's'), *args, iso, NULL);
	*before = zc_hist_expand(zc_col_json(st, b, 's'), *args, iso, *after);
}

static int load_record(struct zc_op *op, struct revert *r, struct zc_err *e)
{
	sqlite3_stmt *st = zc_stmt(&op->m->store,
				   "SELECT at, operation, arguments, status, before, after FROM history "
				   "WHERE seq = ?1",
				   e);
	if (!st)
		return e->code;
	sqlite3_bind_int64(st, 1, r->seq);
	int step = sqlite3_step(st);
	if (step == SQLITE_ROW) {
		json_t *before, *after, *args;
		expand(st, 0, 2, 4, &before, &after, &args);
		r->rec = json_pack("{s:s, s:o, s:s, s:o, s:o}", "operation",
				   (const char *)sqlite3_column_text(st, 1), "arguments", args, "status",
				   (const char *)sqlite3_column_text(st, 3), "before", before, "after",
				   after);
	}
	sqlite3_reset(st);
	if (step != SQLITE_ROW && step != SQLITE_DONE)
		return zc_store_fail(&op->m->store, step, e, "reading history");
	if (!r->rec)
		return zc_fail(e, ZCOR_ENOTFOUND,
			       "no history record #%lld; find records with zcor_memory_history", r->seq);
	r->operation = zc_json_str(r->rec, "operation");
	return ZCOR_OK;
}

/* ---- what the record changed ------------------------------------------ */

static struct target *find_target(struct revert *r, int kind, const char *id)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->t[i].kind == kind && strcmp(r->t[i].id, id) == 0)
			return &r->t[i];
	return NULL;
}

/* Fills r->t from the images, or refuses a record that cannot be reverted. */
static int collect_targets(struct revert *r, struct zc_err *e)
{
	json_t *before = json_object_get(r->rec, "before"), *after = json_object_get(r->rec, "after");
	const char *status = zc_json_str(r->rec, "status");
	if (!status || strcmp(status, "ok") != 0) {
		zc_fail(e, ZCOR_ECONFLICT,
			"history record #%lld is a call that failed: it changed nothing to revert",
			r->seq);
		return refuse(e, json_pack("{s:s, s:I}", "reason", "failed_call", "seq", (json_int_t)r->seq));
	}
	size_t nb = json_array_size(before), na = json_array_size(after);
	if (!nb && !na) {
		zc_fail(e, ZCOR_ECONFLICT,
			"history record #%lld (%s) changed nothing (a read, or a change that was "
			"already so): there is nothing to revert",
			r->seq, ZC_Q(r->operation, 60));
		return refuse(e, json_pack("{s:s, s:I, s:s}", "reason", "nothing_changed", "seq",
					   (json_int_t)r->seq, "operation", r->operation));
	}
	int known = 0;
	for (size_t i = 0; revertible[i]; i++)
		known |= strcmp(revertible[i], r->operation) == 0;
	r->t = zc_calloc(nb + na, sizeof(*r->t));
	json_t *lists[2] = {before, after};
	for (int l = 0; known && l < 2; l++) {
		size_t i;
		json_t *s;
		json_array_foreach(lists[l], i, s) {
			int kind = 0;
			const char *id = ident(s, &kind);
			if (!id) {
				known = 0;
				break;
			}
			struct target *t = find_target(r, kind, id);
			if (!t) {
				t = &r->t[r->n++];
				t->kind = kind;
				t->id = id;
			}
			if (l == 0)
				t->before = s;
			else
				t->after = s;
		}
	}
	if (!known) {
		zc_fail(e, ZCOR_ECONFLICT,
			"history record #%lld (%s) cannot be reverted here: only changes of memories "
			"and relationships can (a backup or restore is undone by restoring a backup, "
			"synonyms and views are edited in their own panels)",
			r->seq, ZC_Q(r->operation, 60));
		return refuse(e, json_pack("{s:s, s:I, s:s}", "reason", "not_revertible", "seq",
					   (json_int_t)r->seq, "operation", r->operation));
	}
	/* a supersede recorded before the replacement's own images were
	 * (issue 18): a moved important mark could not be given back */
	if (strcmp(r->operation, "zcor_memory_supersede") == 0) {
		const char *by = zc_json_str(json_object_get(r->rec, "arguments"), "replacementId");
		int moved = 0;
		for (size_t i = 0; i < r->n; i++)
			moved |= r->t[i].before && json_is_true(json_object_get(r->t[i].before, "important"));
		if (moved && by && !find_target(r, K_NODE, by)) {
			zc_fail(e, ZCOR_ECONFLICT,
				"history record #%lld moved an important mark to '%s' but does not hold "
				"that memory's images (an older record): revert it by hand",
				r->seq, ZC_Q(by, 40));
			return refuse(e, json_pack("{s:s, s:I, s:s}", "reason", "incomplete_record", "seq",
						   (json_int_t)r->seq, "id", by));
		}
	}
	return ZCOR_OK;
}

/* ---- later changes ------------------------------------------------------ */

/* Whether a record's images hold target t. */
static int touches(json_t *images, const struct target *t)
{
	size_t i;
	json_t *s;
	json_array_foreach(images, i, s) {
		int kind = 0;
		const char *id = ident(s, &kind);
		if (id && kind == t->kind && strcmp(id, t->id) == 0)
			return 1;
	}
	return 0;
}

/* Adds the record at st's row (seq, at, operation, actor, arguments) to
 * conflicts once; reverts: the seq of a revert of this record, or 0. */
static void add_conflict(json_t *conflicts, sqlite3_stmt *st, const char *id, long long seq,
			 long long *reverted_by)
{
	long long at_seq = sqlite3_column_int64(st, 0);
	char key[32];
	snprintf(key, sizeof(key), "%lld", at_seq);
	json_t *c = json_object_get(conflicts, key);
	if (!c) {
		c = json_object();
		json_object_set_new(c, "seq", json_integer(at_seq));
		zc_json_set_time(c, "at", sqlite3_column_int64(st, 1));
		zc_json_set_str(c, "operation", (const char *)sqlite3_column_text(st, 2));
		zc_json_set_str(c, "actor", (const char *)sqlite3_column_text(st, 3));
		json_object_set_new(c, "targets", json_array());
		/* a revert names the record it reverted ("reverts"): the chain
		 * of reverts of reverts is followed from it (refuse_later) */
		const char *op = (const char *)sqlite3_column_text(st, 2);
		if (op && strcmp(op, "history_revert") == 0) {
			json_t *args = zc_col_json(st, 4, 's');
			json_t *of = json_object_get(args, "seq");
			if (json_is_integer(of))
				json_object_set_new(c, "reverts", json_integer(json_integer_value(of)));
			json_decref(args);
		}
		json_object_set_new(conflicts, key, c);
	}
	if (id)
		json_array_append_new(json_object_get(c, "targets"), json_string(id));
	if (!*reverted_by && json_integer_value(json_object_get(c, "reverts")) == seq)
		*reverted_by = at_seq;
}

/* The newest revert in the chain that starts with record `first` (a
 * revert of the record; then a revert of that revert, …) among the later
 * changes; *depth: how many reverts the chain holds (odd: the change is
 * undone; even: it is in effect again). */
static long long newest_revert(json_t *conflicts, long long first, int *depth)
{
	long long last = first;
	*depth = 1;
	for (;;) {
		const char *k;
		json_t *c, *next = NULL;
		json_object_foreach(conflicts, k, c) {
			if (json_integer_value(json_object_get(c, "reverts")) == last) {
				next = c;
				break;
			}
		}
		if (!next)
			return last;
		last = json_integer_value(json_object_get(next, "seq"));
		(*depth)++;
	}
}

/* The later recorded changes of the record's targets (and later restores
 * and imports) into conflicts: {seq-text: {seq, at, operation, actor,
 * targets}}. */
static int later_changes(struct zc_op *op, struct revert *r, json_t *conflicts,
			 long long *reverted_by, struct zc_err *e)
{
	sqlite3_stmt *st = zc_stmt(&op->m->store,
				   "SELECT seq, at, operation, actor, arguments FROM history WHERE seq > ?1 "
				   "AND status = 'ok' AND operation IN " REPLACES_ALL " ORDER BY seq",
				   e);
	if (!st)
		return e->code;
	sqlite3_bind_int64(st, 1, r->seq);
	int step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW)
		add_conflict(conflicts, st, NULL, r->seq, reverted_by);
	sqlite3_reset(st);
	if (step != SQLITE_DONE)
		return zc_store_fail(&op->m->store, step, e, "reading history");
	/* the same candidates as the history's targetId filter (the id as a
	 * JSON string anywhere in the stored text), then the images read in
	 * full decide */
	st = zc_stmt(&op->m->store,
		     "SELECT seq, at, operation, actor, arguments, before, after FROM history "
		     "WHERE seq > ?1 AND status = 'ok' AND (before IS NOT NULL OR after IS NOT NULL) "
		     "AND (instr(arguments, ?2) OR instr(coalesce(before, ''), ?2) OR "
		     "instr(coalesce(after, ''), ?2)) ORDER BY seq",
		     e);
	if (!st)
		return e->code;
	for (size_t i = 0; i < r->n; i++) {
		json_t *idj = json_string(r->t[i].id);
		char *needle = zc_json_dump(idj);
		json_decref(idj);
		sqlite3_bind_int64(st, 1, r->seq);
		sqlite3_bind_text(st, 2, needle, -1, zc_free);
		while ((step = sqlite3_step(st)) == SQLITE_ROW) {
			json_t *before, *after, *args;
			expand(st, 1, 4, 5, &before, &after, &args);
			if (touches(before, &r->t[i]) || touches(after, &r->t[i]))
				add_conflict(conflicts, st, r->t[i].id, r->seq, reverted_by);
			json_decref(before);
			json_decref(after);
			json_decref(args);
		}
		sqlite3_reset(st);
		sqlite3_clear_bindings(st);
		if (step != SQLITE_DONE)
			return zc_store_fail(&op->m->store, step, e, "reading history");
	}
	return ZCOR_OK;
}

static int refuse_later(struct revert *r, json_t *conflicts, long long reverted_by,
			struct zc_err *e)
{
	if (reverted_by) {
		/* the newest revert of the chain is the one to act on: #12
		 * reverted by #14, #14 by #15: the change is in effect again,
		 * and reverting #15 undoes it */
		int depth;
		long long newest = newest_revert(conflicts, reverted_by, &depth);
		if (depth % 2 == 0) {
			zc_fail(e, ZCOR_ECONFLICT,
				"history record #%lld was reverted by record #%lld, and that revert was "
				"undone (the newest revert: #%lld): the change is in effect again; revert "
				"record #%lld to undo it",
				r->seq, reverted_by, newest, newest);
			return refuse(e, json_pack("{s:s, s:I, s:I, s:I}", "reason", "redone", "seq",
						   (json_int_t)r->seq, "revertedBy", (json_int_t)reverted_by,
						   "newest", (json_int_t)newest));
		}
		zc_fail(e, ZCOR_ECONFLICT,
			"history record #%lld was reverted already, by record #%lld; revert that one to "
			"redo the change",
			r->seq, newest);
		return refuse(e, json_pack("{s:s, s:I, s:I, s:I}", "reason", "already_reverted", "seq",
					   (json_int_t)r->seq, "revertedBy", (json_int_t)newest, "firstRevert",
					   (json_int_t)reverted_by));
	}
	json_t *list = json_array();
	const char *k;
	json_t *c;
	json_object_foreach(conflicts, k, c) {
		if (json_array_size(list) < CONFLICTS_LISTED)
			json_array_append(list, c);
	}
	json_t *first = json_array_get(list, 0);
	zc_fail(e, ZCOR_ECONFLICT,
		"history record #%lld cannot be reverted: %zu later change(s) touched the same "
		"memories or people (the first: #%lld, %s); revert those first, newest first",
		r->seq, json_object_size(conflicts), (long long)json_integer_value(json_object_get(first, "seq")),
		ZC_Q(zc_json_str(first, "operation"), 60));
	return refuse(e, json_pack("{s:s, s:I, s:I, s:o}", "reason", "later_change", "seq",
				   (json_int_t)r->seq, "count", (json_int_t)json_object_size(conflicts),
				   "conflicts", list));
}

/* ---- as the record left them -------------------------------------------- */

/* a and b equal but for what recall counts (hits, last hit) */
static int same_state(const json_t *a, const json_t *b)
{
	json_t *x = json_deep_copy(a), *y = json_deep_copy(b);
	static const char *const counted[] = {"hits", "lastHitAt"};
	for (size_t i = 0; i < 2; i++) {
		json_object_del(x, counted[i]);
		json_object_del(y, counted[i]);
	}
	int same = json_equal(x, y);
	json_decref(x);
	json_decref(y);
	return same;
}

static int load_now(struct zc_op *op, struct target *t, struct zc_err *e)
{
	if (t->kind == K_PERSON)
		return zc_person_load(op, t->id, &t->now, e);
	int rc = zc_node_load(op, t->id, &t->now, e);
	if (rc == ZCOR_ENOTFOUND) {
		zc_err_clear(e);
		rc = ZCOR_OK;
	}
	return rc;
}

/* Every target as the record left it: present as its after-image, or
 * absent when it has none. */
static int check_unchanged(struct zc_op *op, struct revert *r, struct zc_err *e)
{
	json_t *changed = json_array();
	int rc = ZCOR_OK;
	for (size_t i = 0; i < r->n && !rc; i++) {
		struct target *t = &r->t[i];
		if ((rc = load_now(op, t, e)))
			break;
		int ok = t->after ? t->now && same_state(t->now, t->after) : !t->now;
		if (!ok)
			json_array_append_new(changed, json_string(t->id));
	}
	if (!rc && json_array_size(changed)) {
		zc_fail(e, ZCOR_ECONFLICT,
			"history record #%lld cannot be reverted: '%s' is no longer as that change left "
			"it (changed without a history record, e.g. by an older zcor)",
			r->seq, ZC_Q(json_string_value(json_array_get(changed, 0)), 40));
		rc = refuse(e, json_pack("{s:s, s:I, s:O}", "reason", "changed_since", "seq",
					 (json_int_t)r->seq, "ids", changed));
	}
	json_decref(changed);
	return rc;
}

/* ---- putting the before-images back ------------------------------------- */

static int link_missing(struct zc_op *op, struct revert *r, const char *id, const char *field,
			const char *target, struct zc_err *e)
{
	json_t *n = NULL;
	int rc = zc_node_load(op, target, &n, e);
	json_decref(n);
	if (rc != ZCOR_ENOTFOUND)
		return rc;
	zc_err_clear(e);
	zc_fail(e, ZCOR_ECONFLICT,
		"history record #%lld cannot be reverted: '%s' would get back %s '%s', which no "
		"longer exists",
		r->seq, ZC_Q(id, 40), field, ZC_Q(target, 40));
	return refuse(e, json_pack("{s:s, s:I, s:s, s:s, s:s}", "reason", "link_missing", "seq",
				   (json_int_t)r->seq, "id", id, "field", field, "target", target));
}

/* Writes t's before-image back (a node's mark comes later, mark_all). */
static int put_back(struct zc_op *op, struct revert *r, struct target *t, struct zc_err *e)
{
	json_t *img = json_deep_copy(t->before);
	int rc = ZCOR_OK;
	zc_json_set_time(img, "updatedAt", op->now); /* a revert is a change of now */
	if (t->kind == K_PERSON) {
		const char *link = zc_json_str(img, "memoryNodeId");
		if (!(link && (rc = link_missing(op, r, t->id, "memoryNodeId", link, e))))
			rc = zc_person_save(op, img, e);
		json_decref(img);
		return rc;
	}
	const char *parent = zc_json_str(img, "parentId"), *by = zc_json_str(img, "supersededBy");
	const char *was_parent = t->now ? zc_json_str(t->now, "parentId") : NULL;
	if (parent && !(was_parent && strcmp(parent, was_parent) == 0) &&
	    (rc = link_missing(op, r, t->id, "parentId", parent, e)) == ZCOR_OK)
		rc = zc_node_check_parent(op, t->now ? t->id : NULL, zc_json_str(img, "scope"), parent, e);
	if (!rc && by)
		rc = link_missing(op, r, t->id, "supersededBy", by, e);
	if (!rc && t->now && !json_is_true(json_object_get(img, "important")))
		rc = zc_node_set_mark(op, t->id, 0, e);
	if (!rc)
		rc = zc_node_save(op, img, e);
	json_decref(img);
	return rc;
}

static int remove_target(struct zc_op *op, struct target *t, struct zc_err *e)
{
	if (t->kind == K_NODE)
		return zc_node_delete(op, t->now, e); /* its refusals; keeps the before-image */
	int rc = zc_person_delete(op, t->id, e);
	if (!rc)
		zc_op_before(op, json_incref(t->now));
	return rc;
}

static int revert_body(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	struct revert r = {0};
	json_t *conflicts = json_object(), *restored = json_array(), *removed = json_array();
	long long reverted_by = 0;
	int rc;
	json_t *seq = json_object_get(args, "seq");
	if (op->ctx->conversation) {
		rc = zc_fail(e, ZCOR_EFORBIDDEN,
			     "reverting a history record is the operator's (no conversation): a record "
			     "may touch what other conversations share");
		goto out;
	}
	if (!json_is_integer(seq) || json_integer_value(seq) <= 0) {
		rc = zc_fail(e, ZCOR_EINVAL,
			     "argument 'seq': the number of the history record to revert (a positive "
			     "integer, as zcor_memory_history lists it)");
		zc_json_err_detail(e, json_pack("{s:s, s:s}", "field", "seq", "reason", "type"));
		goto out;
	}
	r.seq = (long long)json_integer_value(seq);
	if ((rc = load_record(op, &r, e)) || (rc = collect_targets(&r, e)) ||
	    (rc = later_changes(op, &r, conflicts, &reverted_by, e)))
		goto out;
	if (json_object_size(conflicts)) {
		rc = refuse_later(&r, conflicts, reverted_by, e);
		goto out;
	}
	if ((rc = check_unchanged(op, &r, e)))
		goto out;
	/* the images in the order the store's rules need them: what the
	 * record deleted first (a redone merge's record, before its sources
	 * point at it), then what it changed (a merge's sources, before the
	 * merged record stops being a supersede target), then what it created */
	for (size_t i = 0; i < r.n && !rc; i++)
		if (r.t[i].before && !r.t[i].after)
			rc = put_back(op, &r, &r.t[i], e);
	for (size_t i = 0; i < r.n && !rc; i++)
		if (r.t[i].before && r.t[i].after) {
			zc_op_before(op, json_incref(r.t[i].now));
			rc = put_back(op, &r, &r.t[i], e);
		}
	for (size_t i = 0; i < r.n && !rc; i++)
		if (!r.t[i].before) {
			rc = remove_target(op, &r.t[i], e);
			json_array_append_new(removed, json_string(r.t[i].id));
		}
	/* the marks last, when the ones given back have room again */
	for (size_t i = 0; i < r.n && !rc; i++)
		if (r.t[i].kind == K_NODE && r.t[i].before &&
		    json_is_true(json_object_get(r.t[i].before, "important")))
			rc = zc_node_set_mark(op, r.t[i].id, 1, e);
	/* after-images in the before-images' order: a changed record at the
	 * same place in both lists (the History panel pairs them) */
	for (int pass = 0; pass < 2 && !rc; pass++)
		for (size_t i = 0; i < r.n && !rc; i++) {
			struct target *t = &r.t[i];
			if (!t->before || (pass == 0) != (t->after != NULL))
				continue;
			json_t *img = NULL;
			rc = t->kind == K_PERSON ? zc_person_load(op, t->id, &img, e)
						 : zc_node_load(op, t->id, &img, e);
			if (!rc) {
				zc_op_after(op, img);
				json_array_append_new(restored, json_string(t->id));
			}
		}
	if (rc)
		goto out;
	*out = json_pack("{s:I, s:s, s:O, s:O}", "reverted", (json_int_t)r.seq, "operation",
			 r.operation, "restored", restored, "removed", removed);
out:
	for (size_t i = 0; i < r.n; i++)
		json_decref(r.t[i].now);
	zc_free(r.t);
	json_decref(r.rec);
	json_decref(conflicts);
	json_decref(restored);
	json_decref(removed);
	return rc;
}

const struct zc_opdef zc_op_history_revert = {"history_revert", NULL, revert_body, 0};
