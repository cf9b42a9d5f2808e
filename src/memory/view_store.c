/*
 * view_store.c — the rows behind the memory views (view.h).
 *
 * Memory layer. A view is rendered from rows, never stored: nodes of its
 * kind, scope and tier (people for PEOPLE.md, one document node for
 * INDEX.md) and the lines kept verbatim in view_unparsed, each at its
 * position. This file loads them, renders them through view_format.c,
 * finds and creates the rows an edit changes, keeps the earlier versions
 * of a view and lists the views there are. It runs inside the caller's
 * transaction and never begins or commits one; the rules about who may
 * write which view live in qqmem.c.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/json.h"
#include "memory/sticker.h"
#include "memory/view_internal.h"
#include "text/norm.h"

/* ---- entries <-> rows -------------------------------------------------- */

/* The node filter of a view: ?1 kind, ?2 scope, ?3 tier, ?4 month, ?5
 * section required. No view lists a plain memory of global; saying so
 * lets SQLite read the partial index nodes_view (schema 21). */
#define VIEW_FILTER                                                                     \
	" kind = ?1 AND superseded_by IS NULL AND scope = ?2 AND tier = ?3 AND "          \
	"(?4 IS NULL OR archive_month = ?4) AND (?5 = 0 OR section IS NOT NULL) AND "     \
	"(kind <> 'memory' OR scope <> 'global')"
#define POS_SQL "coalesce(json_extract(attrs, '$.pos'), seq)"

/* Where a view's rows live: their kind, scope and tier. */
static const char *view_node_kind(const struct zc_view *v)
{
	return v->kind == ZC_VIEW_COGNITION ? "cognition"
	       : v->kind == ZC_VIEW_STICKERS ? "sticker"
	       : v->kind == ZC_VIEW_INDEX    ? "document"
					     : "memory";
}

static const char *view_scope(const struct zc_view *v)
{
	return v->kind == ZC_VIEW_MEMORY || v->kind == ZC_VIEW_ARCHIVE ? v->conv : "global";
}

static const char *view_tier(const struct zc_view *v)
{
	return v->kind == ZC_VIEW_ARCHIVE ? "archive" : "hot";
}

static void bind_view(sqlite3_stmt *st, const struct zc_view *v)
{
	sqlite3_bind_text(st, 1, view_node_kind(v), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, view_scope(v), -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, view_tier(v), -1, SQLITE_STATIC);
	if (v->kind == ZC_VIEW_ARCHIVE)
		sqlite3_bind_text(st, 4, v->month, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 5, v->kind == ZC_VIEW_MEMORY);
}

static json_t *arr_or_null(json_t *a)
{
	return json_array_size(a) ? json_incref(a) : NULL;
}

static void set_opt(json_t *o, const char *k, json_t *v)
{
	if (v && !json_is_null(v) && !(json_is_string(v) && !*json_string_value(v)))
		json_object_set(o, k, v);
}

/* The entry (upsert fields) of a node of view v. */
json_t *zc_view_entry_of_node(const struct zc_view *v, const json_t *n, long long seq)
{
	json_t *x = json_object(), *attrs = json_object_get(n, "attrs");
	json_object_set(x, "name", json_object_get(n, "title"));
	json_object_set(x, "meaning", json_object_get(n, "content"));
	json_t *kw = arr_or_null(json_object_get(n, "keywords"));
	if (v->kind == ZC_VIEW_COGNITION) {
		set_opt(x, "type", json_object_get(n, "section"));
		set_opt(x, "usage", json_object_get(attrs, "usage"));
		if (kw)
			json_object_set(x, "variants", kw);
	} else if (v->kind == ZC_VIEW_STICKERS) {
		set_opt(x, "picture", json_object_get(attrs, "picture"));
		set_opt(x, "scene", json_object_get(attrs, "scene"));
		/* a stored path that is no sticker path (old data, a restored
		 * or migrated state) is never shown as one: the entry reads as
		 * not collected, and the doctor names it (STICKER_PATH_OUTSIDE) */
		if (zc_sticker_path_ok(zc_json_str(attrs, "image")))
			set_opt(x, "image", json_object_get(attrs, "image"));
		if (json_is_true(json_object_get(attrs, "stale")))
			json_object_set_new(x, "stale", json_true());
		if (kw)
			json_object_set(x, "variants", kw);
	} else {
		set_opt(x, "section", json_object_get(n, "section"));
		if (kw)
			json_object_set(x, "aliases", kw);
	}
	json_decref(kw);
	set_opt(x, "date", json_object_get(n, "date"));
	set_opt(x, "expires", json_object_get(n, "expires"));
	set_opt(x, "confidence", json_object_get(n, "confidence"));
	if (json_is_true(json_object_get(n, "pinned")))
		json_object_set_new(x, "pinned", json_true());
	json_t *extra = arr_or_null(json_object_get(attrs, "extra"));
	if (extra)
		json_object_set_new(x, "extra", extra);
	json_t *pos = json_object_get(attrs, "pos");
	json_object_set_new(x, "pos", json_is_number(pos) ? json_real(json_number_value(pos))
							  : json_real((double)seq));
	json_object_set(x, "id", json_object_get(n, "id"));
	json_object_set_new(x, "seq", json_integer(seq));
	return x;
}

json_t *zc_view_entry_of_person(const json_t *p, long long seq)
{
	json_t *x = json_object();
	json_object_set(x, "name", json_object_get(p, "name"));
	json_object_set(x, "qq", json_object_get(p, "personId"));
	json_object_set(x, "meaning", json_object_get(p, "relationship"));
	json_t *al = arr_or_null(json_object_get(p, "aliases"));
	if (al)
		json_object_set_new(x, "aliases", al);
	json_int_t aff = json_integer_value(json_object_get(p, "affinity"));
	if (aff)
		json_object_set_new(x, "affinity", json_integer(aff));
	const char *first = zc_json_str(p, "firstSeen");
	if (first && strlen(first) >= 10)
		json_object_set_new(x, "date", json_stringn(first, 10));
	set_opt(x, "confidence", json_object_get(p, "confidence"));
	json_object_set_new(x, "pos", json_real((double)seq));
	json_object_set(x, "personId", json_object_get(p, "personId"));
	json_object_set_new(x, "seq", json_integer(seq));
	return x;
}

/* ---- loading a view ------------------------------------------------------ */

/* The entries of v in order (each with seq, pos, id / personId). */
int zc_view_load_entries(struct zc_mem *m, const struct zc_view *v, json_t **out, struct zc_err *e)
{
	*out = json_array();
	sqlite3_stmt *st;
	if (v->kind == ZC_VIEW_PEOPLE)
		st = zc_stmt(&m->store, "SELECT " ZC_PERSON_COLS ", seq FROM people ORDER BY seq", e);
	else
		st = zc_stmt(&m->store,
			     "SELECT " ZC_NODE_COLS ", seq FROM nodes WHERE" VIEW_FILTER
			     " ORDER BY " POS_SQL ", seq",
			     e);
	if (!st)
		return e->code;
	if (v->kind != ZC_VIEW_PEOPLE)
		bind_view(st, v);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (v->kind == ZC_VIEW_PEOPLE) {
			json_t *p = zc_person_from_row(st);
			json_array_append_new(*out, zc_view_entry_of_person(p, sqlite3_column_int64(st, 11)));
			json_decref(p);
		} else {
			json_t *n = zc_node_from_row(st);
			json_array_append_new(*out, zc_view_entry_of_node(v, n, sqlite3_column_int64(st, 25)));
			json_decref(n);
		}
	}
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? ZCOR_OK : zc_store_fail(&m->store, rc, e, "reading a view");
}

static int load_unparsed(struct zc_mem *m, const struct zc_view *v, json_t **out, struct zc_err *e)
{
	*out = json_array();
	sqlite3_stmt *st = zc_stmt(&m->store,
				   "SELECT seq, section, pos, line FROM view_unparsed WHERE path = ?1 "
				   "ORDER BY pos, seq",
				   e);
	if (!st)
		return e->code;
	sqlite3_bind_text(st, 1, v->path, -1, SQLITE_TRANSIENT);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *u = json_pack("{s:I, s:f, s:s}", "useq", (json_int_t)sqlite3_column_int64(st, 0),
				      "pos", sqlite3_column_double(st, 2), "text",
				      (const char *)sqlite3_column_text(st, 3));
		if (sqlite3_column_type(st, 1) != SQLITE_NULL)
			json_object_set_new(u, "section",
					    json_string((const char *)sqlite3_column_text(st, 1)));
		json_array_append_new(*out, u);
	}
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? ZCOR_OK : zc_store_fail(&m->store, rc, e, "reading a view");
}

int zc_view_index_text(struct zc_mem *m, char **text, long long *seq, struct zc_err *e)
{
	*text = NULL;
	if (seq)
		*seq = 0;
	sqlite3_stmt *st = zc_stmt(&m->store,
				   "SELECT content, seq FROM nodes WHERE kind = 'document' AND kind <> 'memory' AND title = "
				   "'INDEX.md' AND scope = 'global' AND superseded_by IS NULL ORDER BY seq "
				   "LIMIT 1",
				   e);
	if (!st)
		return e->code;
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*text = zc_strdup((const char *)sqlite3_column_text(st, 0));
		if (seq)
			*seq = sqlite3_column_int64(st, 1);
	}
	sqlite3_reset(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return zc_store_fail(&m->store, rc, e, "reading INDEX.md");
	if (!*text)
		*text = zc_strdup("");
	return ZCOR_OK;
}

/* ---- rendering ----------------------------------------------------------- */

int zc_view_render(struct zc_mem *m, const struct zc_view *v, char **text, json_t **entries_out,
		   json_t **unparsed_out, struct zc_err *e)
{
	json_t *entries = NULL, *unparsed = NULL;
	int rc;
	*text = NULL;
	if (entries_out)
		*entries_out = json_array();
	if (unparsed_out)
		*unparsed_out = json_array();
	if (v->kind == ZC_VIEW_INDEX)
		return zc_view_index_text(m, text, NULL, e);
	if (!(rc = zc_view_load_entries(m, v, &entries, e)) && !(rc = load_unparsed(m, v, &unparsed, e)))
		*text = zc_view_format(v, entries, unparsed, entries_out ? *entries_out : NULL,
				       unparsed_out ? *unparsed_out : NULL);
	json_decref(entries);
	json_decref(unparsed);
	return rc;
}

int zc_view_count(struct zc_mem *m, const struct zc_view *v, long long *count, struct zc_err *e)
{
	*count = 0;
	if (v->kind == ZC_VIEW_INDEX) {
		char *t = NULL;
		int rc = zc_view_index_text(m, &t, NULL, e);
		if (rc)
			return rc;
		for (char *p = t; p && *p;) {
			char *nl = strchr(p, '\n');
			size_t len = nl ? (size_t)(nl - p) : strlen(p);
			int blank = 1;
			for (size_t i = 0; i < len; i++)
				blank &= isspace((unsigned char)p[i]) != 0;
			*count += !blank;
			p = nl ? nl + 1 : p + len;
		}
		zc_free(t);
		return ZCOR_OK;
	}
	json_t *a = NULL, *u = NULL;
	int rc = zc_view_load_entries(m, v, &a, e);
	if (!rc)
		rc = load_unparsed(m, v, &u, e);
	if (!rc)
		*count = (long long)(json_array_size(a) + json_array_size(u));
	json_decref(a);
	json_decref(u);
	return rc;
}

/* ---- finding and creating rows ------------------------------------------- */

json_t *zc_view_find_node(struct zc_op *op, const struct zc_view *v, const char *name,
			 struct zc_err *e)
{
	sqlite3_stmt *st = zc_stmt(&op->m->store,
				   "SELECT " ZC_NODE_COLS ", seq FROM nodes WHERE" VIEW_FILTER
				   " AND title_norm = ?6 ORDER BY seq LIMIT 1",
				   e);
	if (!st)
		return NULL;
	bind_view(st, v);
	sqlite3_bind_text(st, 6, zc_norm(name), -1, zc_free);
	json_t *n = NULL;
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		n = zc_node_from_row(st);
	sqlite3_reset(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		zc_store_fail(&op->m->store, rc, e, "reading a view");
	return n;
}

json_t *zc_view_find_person(struct zc_op *op, const json_t *x, struct zc_err *e)
{
	const char *qq = zc_json_str(x, "qq");
	sqlite3_stmt *st = zc_stmt(&op->m->store,
				   "SELECT " ZC_PERSON_COLS " FROM people WHERE "
				   "(?1 IS NOT NULL AND person_id = ?1) OR person_id = 'name:' || ?2 OR "
				   "(?1 IS NULL AND name = ?2) ORDER BY person_id = ?1 DESC, seq LIMIT 1",
				   e);
	if (!st)
		return NULL;
	if (qq && *qq)
		sqlite3_bind_text(st, 1, qq, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, zc_json_str(x, "name"), -1, SQLITE_TRANSIENT);
	json_t *p = NULL;
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		p = zc_person_from_row(st);
	sqlite3_reset(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		zc_store_fail(&op->m->store, rc, e, "reading PEOPLE.md");
	return p;
}

double zc_view_max_pos(struct zc_op *op, const struct zc_view *v, struct zc_err *e)
{
	double mx = 0;
	sqlite3_stmt *st = zc_stmt(&op->m->store,
				   "SELECT max(" POS_SQL ") FROM nodes WHERE" VIEW_FILTER, e);
	if (st && v->kind != ZC_VIEW_PEOPLE) {
		bind_view(st, v);
		if (sqlite3_step(st) == SQLITE_ROW)
			mx = sqlite3_column_double(st, 0);
		sqlite3_reset(st);
	}
	st = zc_stmt(&op->m->store, "SELECT max(pos) FROM view_unparsed WHERE path = ?1", e);
	if (st) {
		sqlite3_bind_text(st, 1, v->path, -1, SQLITE_TRANSIENT);
		if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_double(st, 0) > mx)
			mx = sqlite3_column_double(st, 0);
		sqlite3_reset(st);
	}
	if (v->kind == ZC_VIEW_PEOPLE) {
		st = zc_stmt(&op->m->store, "SELECT max(seq) FROM people", e);
		if (st) {
			if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_double(st, 0) > mx)
				mx = sqlite3_column_double(st, 0);
			sqlite3_reset(st);
		}
	}
	return mx;
}

json_t *zc_view_new_node(struct zc_op *op, const struct zc_view *v, struct zc_err *e)
{
	char id[16];
	if (zc_node_new_id(op, id, e))
		return NULL;
	json_t *n = json_pack("{s:s, s:n, s:s, s:s, s:s, s:{}}", "id", id, "parentId", "scope",
			      view_scope(v), "kind", view_node_kind(v), "tier", view_tier(v), "attrs");
	if (v->kind == ZC_VIEW_ARCHIVE)
		json_object_set_new(n, "archiveMonth", json_string(v->month));
	zc_json_set_time(n, "createdAt", op->now);
	return n;
}

/* ---- versions ------------------------------------------------------------ */

int zc_view_save_version(struct zc_op *op, const struct zc_view *v, struct zc_err *e)
{
	char *text = NULL;
	int rc = zc_view_render(op->m, v, &text, NULL, NULL, e);
	if (rc)
		return rc;
	sqlite3_stmt *st = zc_stmt(&op->m->store,
				   "INSERT INTO view_versions(path, at, actor, text) VALUES(?1, ?2, ?3, ?4)",
				   e);
	if (!st) {
		zc_free(text);
		return e->code;
	}
	static const char *const actors[] = {"model", "ui", "cli", "digest"};
	int a = (int)op->ctx->actor;
	sqlite3_bind_text(st, 1, v->path, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 2, op->now);
	sqlite3_bind_text(st, 3, a >= 0 && a < 4 ? actors[a] : "model", -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, text, -1, zc_free);
	int s = sqlite3_step(st);
	sqlite3_reset(st);
	if (s != SQLITE_DONE)
		return zc_store_fail(&op->m->store, s, e, "keeping a view version");
	st = zc_stmt(&op->m->store,
		     "DELETE FROM view_versions WHERE path = ?1 AND seq NOT IN (SELECT seq FROM "
		     "view_versions WHERE path = ?1 ORDER BY seq DESC LIMIT ?2)",
		     e);
	if (!st)
		return e->code;
	sqlite3_bind_text(st, 1, v->path, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 2, ZC_VIEW_VERSIONS);
	s = sqlite3_step(st);
	sqlite3_reset(st);
	return s == SQLITE_DONE ? ZCOR_OK : zc_store_fail(&op->m->store, s, e, "keeping a view version");
}

/* ---- listing ------------------------------------------------------------- */

static int list_one(struct zc_op *op, const struct zc_view *v, void *ud, struct zc_err *e)
{
	json_t *out = ud;
	char *text = NULL;
	long long n = 0;
	int rc = zc_view_render(op->m, v, &text, NULL, NULL, e);
	if (!rc)
		rc = zc_view_count(op->m, v, &n, e);
	if (!rc) {
		static const char *const kinds[] = {"index", "people", "cognition", "stickers", "memory", "archive"};
		json_t *o = json_pack("{s:s, s:s, s:I, s:I}", "path", v->path, "kind", kinds[v->kind],
				      "entries", (json_int_t)n, "bytes", (json_int_t)strlen(text));
		if (v->conv[0])
			json_object_set_new(o, "conversation", json_string(v->conv));
		json_array_append_new(out, o);
	}
	zc_free(text);
	return rc;
}

int zc_view_each(struct zc_op *op, zc_view_fn fn, void *ud, struct zc_err *e)
{
	static const enum zc_view_kind globals[] = {ZC_VIEW_INDEX, ZC_VIEW_PEOPLE, ZC_VIEW_COGNITION,
						    ZC_VIEW_STICKERS};
	static const char *const names[] = {"INDEX.md", "PEOPLE.md", "COGNITION.md", "STICKERS.md"};
	int rc;
	for (size_t i = 0; i < 4; i++) {
		struct zc_view v = {.kind = globals[i]};
		snprintf(v.path, sizeof(v.path), "%s", names[i]);
		if ((rc = fn(op, &v, ud, e)))
			return rc;
	}
	/* conversations with memory, and their archive months */
	sqlite3_stmt *st = zc_stmt(&op->m->store,
				   "SELECT DISTINCT scope, tier, coalesce(archive_month, '') FROM nodes "
				   "WHERE kind = 'memory' AND scope <> 'global' AND superseded_by IS NULL "
				   "AND (tier = 'archive' OR section IS NOT NULL) AND " ZC_SCOPE_VISIBLE_SQL
				   " UNION SELECT key, 'hot', '' FROM conversations WHERE ?9 IS NULL OR key = ?9 "
				   "ORDER BY 1, 2 DESC, 3",
				   e);
	if (!st)
		return e->code;
	zc_bind_scope(op, st);
	json_t *views = json_array();
	int s;
	while ((s = sqlite3_step(st)) == SQLITE_ROW)
		json_array_append_new(views, json_pack("{s:s, s:s, s:s}", "conv",
						       (const char *)sqlite3_column_text(st, 0), "tier",
						       (const char *)sqlite3_column_text(st, 1), "month",
						       (const char *)sqlite3_column_text(st, 2)));
	sqlite3_reset(st);
	if (s != SQLITE_DONE) {
		json_decref(views);
		return zc_store_fail(&op->m->store, s, e, "listing views");
	}
	size_t i;
	json_t *x;
	rc = ZCOR_OK;
	json_array_foreach(views, i, x) {
		struct zc_view v;
		if (strcmp(zc_json_str(x, "tier"), "hot") == 0)
			zc_view_memory(&v, zc_json_str(x, "conv"));
		else
			zc_view_archive(&v, zc_json_str(x, "conv"), zc_json_str(x, "month"));
		if ((rc = fn(op, &v, ud, e)))
			break;
	}
	json_decref(views);
	return rc;
}

int zc_view_list(struct zc_op *op, json_t **out, struct zc_err *e)
{
	*out = json_array();
	return zc_view_each(op, list_one, *out, e);
}
