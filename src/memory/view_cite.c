/*
 * view_cite.c — the citations of the memory views: view_lines, the line
 * each entry renders on (with its effective date), kept for recall and
 * search to cite "PEOPLE.md:4".
 *
 * Memory layer. Citations are derived data: the view_dirty triggers mark
 * a view whose rows changed, and each operation recomputes the marked
 * ones before it commits (zc_view_refresh_dirty); zcor reindex and
 * doctor --rebuild recompute all of them. This file writes only
 * view_lines and view_dirty, never a node, a person or a file.
 */
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/json.h"
#include "memory/view_internal.h"

int zc_view_index_lines(struct zc_mem *m, const struct zc_view *v, struct zc_err *e)
{
	if (v->kind == ZC_VIEW_INDEX)
		return ZCOR_OK;
	char *text = NULL;
	json_t *entries = NULL;
	int rc = zc_view_render(m, v, &text, &entries, NULL, e);
	zc_free(text);
	if (rc)
		return rc;
	sqlite3_stmt *st = zc_stmt(&m->store, "DELETE FROM view_lines WHERE path = ?1", e);
	if (!st) {
		rc = e->code;
		goto out;
	}
	sqlite3_bind_text(st, 1, v->path, -1, SQLITE_TRANSIENT);
	int s = sqlite3_step(st);
	sqlite3_reset(st);
	if (s != SQLITE_DONE) {
		rc = zc_store_fail(&m->store, s, e, "indexing a view");
		goto out;
	}
	size_t i;
	json_t *x;
	char eff[16] = ""; /* an entry without a date takes the one above it */
	json_array_foreach(entries, i, x) {
		if (zc_json_str(x, "date"))
			snprintf(eff, sizeof(eff), "%s", zc_json_str(x, "date"));
		st = zc_stmt(&m->store,
			     "INSERT OR REPLACE INTO view_lines(kind, ref, path, line, eff_date) "
			     "VALUES(?1, ?2, ?3, ?4, ?5)",
			     e);
		if (!st) {
			rc = e->code;
			goto out;
		}
		sqlite3_bind_text(st, 1, json_object_get(x, "personId") ? "person" : "node", -1,
				  SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, json_integer_value(json_object_get(x, "seq")));
		sqlite3_bind_text(st, 3, v->path, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 4, json_integer_value(json_object_get(x, "line")));
		sqlite3_bind_text(st, 5, eff, -1, SQLITE_TRANSIENT);
		s = sqlite3_step(st);
		sqlite3_reset(st);
		if (s != SQLITE_DONE) {
			rc = zc_store_fail(&m->store, s, e, "indexing a view");
			goto out;
		}
	}
out:
	json_decref(entries);
	return rc;
}

/* ---- stale citations --------------------------------------------------------- */

int zc_view_refresh_dirty(struct zc_mem *m, json_t *changed, struct zc_err *e)
{
	json_t *paths = json_array();
	sqlite3_stmt *st = zc_stmt(&m->store, "SELECT path FROM view_dirty", e);
	if (!st) {
		json_decref(paths);
		return e->code;
	}
	int s;
	while ((s = sqlite3_step(st)) == SQLITE_ROW)
		json_array_append_new(paths, json_string((const char *)sqlite3_column_text(st, 0)));
	sqlite3_reset(st);
	int rc = s == SQLITE_DONE ? ZCOR_OK : zc_store_fail(&m->store, s, e, "reading stale views");
	size_t i;
	json_t *p;
	json_array_foreach(rc ? NULL : paths, i, p) {
		struct zc_view v;
		const char *path = json_string_value(p);
		struct zc_err ignore = {0};
		/* a path the triggers built from a bad key is no view: skip it */
		if (zc_view_path(path, strlen(path), "path", &v, &ignore) == ZCOR_OK &&
		    (rc = zc_view_index_lines(m, &v, e)))
			break;
		if (changed)
			json_array_append(changed, p);
	}
	size_t n = json_array_size(paths);
	json_decref(paths);
	if (rc || n == 0)
		return rc;
	return zc_exec(&m->store, "DELETE FROM view_dirty", e);
}

static int reindex_one(struct zc_op *op, const struct zc_view *v, void *ud, struct zc_err *e)
{
	(*(long long *)ud)++;
	return zc_view_index_lines(op->m, v, e);
}

int zc_view_reindex_all(struct zc_mem *m, long long *views, struct zc_err *e)
{
	struct zcor_ctx host = {ZCOR_ACTOR_CLI, NULL};
	struct zc_op op = {.m = m, .ctx = &host, .now = zc_mem_now(m)};
	int rc;
	*views = 0;
	if ((rc = zc_exec(&m->store, "DELETE FROM view_lines", e)) ||
	    (rc = zc_exec(&m->store, "DELETE FROM view_dirty", e)))
		return rc;
	return zc_view_each(&op, reindex_one, views, e);
}
