/*
 * view_edit.c — changing a memory view (view.h): upsert and remove an
 * entry, replace a whole view by a parsed text, append to it.
 *
 * Memory layer. An edit changes rows — nodes, people, kept lines,
 * INDEX.md's document node — through the node and person functions of
 * this layer, inside the caller's operation (op.c): it never begins or
 * commits a transaction, and never writes a file. Writing back a view as
 * read changes nothing (tests/fuzz/fuzz_views.c); who may change which
 * view is qqmem.c's rule, what a field may hold view_check.c's.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/json.h"
#include "base/timeutil.h"
#include "memory/view_internal.h"
#include "text/norm.h"

/* ---- the fields of a row ------------------------------------------------- */

/* Copies field k of x into o as key ok: absent keeps (replace=0) or
 * clears (replace=1); "" clears. */
static void apply(json_t *o, const char *ok, const json_t *x, const char *k, int replace)
{
	json_t *v = json_object_get(x, k);
	if (!v) {
		if (replace)
			json_object_del(o, ok);
		return;
	}
	if (json_is_string(v) && !*json_string_value(v))
		json_object_del(o, ok);
	else
		json_object_set(o, ok, v);
}

static void node_apply(const struct zc_view *v, json_t *n, const json_t *x, int replace)
{
	json_t *attrs = json_object_get(n, "attrs");
	if (!json_is_object(attrs)) {
		attrs = json_object();
		json_object_set_new(n, "attrs", attrs);
	}
	json_object_set(n, "title", json_object_get(x, "name"));
	if (json_object_get(x, "meaning") || replace || !json_is_string(json_object_get(n, "content")))
		json_object_set_new(n, "content",
				    json_string(zc_json_str(x, "meaning") ? zc_json_str(x, "meaning") : ""));
	const char *listk = v->kind == ZC_VIEW_COGNITION || v->kind == ZC_VIEW_STICKERS ? "variants"
											  : "aliases";
	if (json_object_get(x, listk))
		json_object_set(n, "keywords", json_object_get(x, listk));
	else if (replace || !json_object_get(n, "keywords"))
		json_object_set_new(n, "keywords", json_array());
	apply(n, "date", x, "date", replace);
	apply(n, "expires", x, "expires", replace);
	apply(n, "confidence", x, "confidence", replace);
	if (json_object_get(x, "pinned") || replace)
		json_object_set_new(n, "pinned", json_boolean(json_is_true(json_object_get(x, "pinned"))));
	apply(attrs, "usage", x, "usage", replace);
	apply(attrs, "scene", x, "scene", replace);
	apply(attrs, "picture", x, "picture", replace);
	apply(attrs, "image", x, "image", replace);
	apply(attrs, "extra", x, "extra", replace);
	if (json_object_get(x, "stale") || replace)
		json_is_true(json_object_get(x, "stale")) ? json_object_set_new(attrs, "stale", json_true())
							   : json_object_del(attrs, "stale");
	if (json_object_get(x, "image") && !json_object_get(x, "stale"))
		json_object_del(attrs, "stale"); /* a collected file is not stale */
	if (v->kind == ZC_VIEW_COGNITION) {
		const char *t = zc_json_str(x, "type");
		if (t || replace || !json_is_string(json_object_get(n, "section")))
			json_object_set_new(n, "section", json_string(t && *t ? t : "其它"));
		json_object_set(attrs, "type", json_object_get(n, "section"));
	} else if (v->kind == ZC_VIEW_STICKERS) {
		int collected = json_is_string(json_object_get(attrs, "image")) &&
				!json_is_true(json_object_get(attrs, "stale"));
		json_object_set_new(n, "section", json_string(collected ? "已收藏" : "未收藏"));
		json_object_set_new(attrs, "collected", json_boolean(collected));
	} else {
		const char *s = zc_json_str(x, "section");
		if (s || replace || !json_is_string(json_object_get(n, "section")))
			json_object_set_new(n, "section", json_string(s && *s ? s : "事实"));
	}
}

static int save_node_entry(struct zc_op *op, const struct zc_view *v, json_t *n, const json_t *x,
			   int replace, double pos, struct zc_err *e)
{
	node_apply(v, n, x, replace);
	if (pos > 0)
		json_object_set_new(json_object_get(n, "attrs"), "pos", json_real(pos));
	zc_json_set_time(n, "updatedAt", op->now);
	return zc_node_save(op, n, e);
}

static int save_person_entry(struct zc_op *op, json_t *p, const json_t *x, int replace,
			     struct zc_err *e)
{
	if (!p) {
		const char *qq = zc_json_str(x, "qq");
		struct zc_buf id = ZC_BUF_INIT;
		if (qq && *qq)
			zc_buf_adds(&id, qq);
		else
			zc_buf_addf(&id, "name:%s", zc_json_str(x, "name"));
		p = json_pack("{s:s, s:i, s:s}", "personId", id.p, "affinity", 0, "reason", "");
		zc_buf_release(&id);
		zc_json_set_time(p, "createdAt", op->now);
	} else {
		json_incref(p);
		const char *qq = zc_json_str(x, "qq"), *pid = zc_json_str(p, "personId");
		if (qq && *qq && pid && strncmp(pid, "name:", 5) == 0) {
			/* a person known only by name learns their QQ number */
			sqlite3_stmt *st = zc_stmt(&op->m->store,
						   "UPDATE people SET person_id = ?2 WHERE person_id = ?1", e);
			if (!st) {
				json_decref(p);
				return e->code;
			}
			sqlite3_bind_text(st, 1, pid, -1, SQLITE_TRANSIENT);
			sqlite3_bind_text(st, 2, qq, -1, SQLITE_TRANSIENT);
			int s = sqlite3_step(st);
			sqlite3_reset(st);
			if (s != SQLITE_DONE) {
				json_decref(p);
				return zc_store_fail(&op->m->store, s, e, "updating PEOPLE.md");
			}
			json_object_set_new(p, "personId", json_string(qq));
		}
	}
	json_object_set(p, "name", json_object_get(x, "name"));
	if (json_object_get(x, "meaning") || replace)
		json_object_set_new(p, "relationship",
				    json_string(zc_json_str(x, "meaning") ? zc_json_str(x, "meaning") : ""));
	if (json_object_get(x, "aliases"))
		json_object_set(p, "aliases", json_object_get(x, "aliases"));
	else if (replace || !json_object_get(p, "aliases"))
		json_object_set_new(p, "aliases", json_array());
	json_t *aff = json_object_get(x, "affinity");
	if (json_is_integer(aff)) {
		json_int_t a = json_integer_value(aff);
		json_object_set_new(p, "affinity", json_integer(a < -100 ? -100 : a > 100 ? 100 : a));
	}
	const char *d = zc_json_str(x, "date");
	struct zc_buf t = ZC_BUF_INIT;
	int64_t day = -1;
	if (d && zc_view_is_date(d))
		zc_buf_addf(&t, "%sT00:00:00Z", d);
	/* firstSeen is an instant from 1970 on: a day that is none (2026-13-45,
	 * 0236-10-12) would be stored as no day and read back as another
	 * (found by fuzz_views); it counts as not given */
	if (t.p && zc_time_parse(t.p, "date", &day, NULL) == ZCOR_OK && day >= 0) {
		json_object_set_new(p, "firstSeen", json_string(t.p));
	} else if (!json_object_get(p, "firstSeen") || json_is_null(json_object_get(p, "firstSeen"))) {
		zc_json_set_time(p, "firstSeen", op->now);
	}
	zc_buf_release(&t);
	apply(p, "confidence", x, "confidence", replace);
	zc_json_set_time(p, "updatedAt", op->now);
	int rc = zc_person_save(op, p, e);
	json_decref(p);
	return rc;
}

/* ---- one entry ----------------------------------------------------------- */

int zc_view_upsert(struct zc_op *op, const struct zc_view *v, const json_t *x, int *created,
		   struct zc_err *e)
{
	int rc;
	zc_err_clear(e);
	if (v->kind == ZC_VIEW_PEOPLE) {
		json_t *p = zc_view_find_person(op, x, e);
		if (e->code)
			return e->code;
		*created = !p;
		rc = save_person_entry(op, p, x, 0, e);
		json_decref(p);
		return rc;
	}
	json_t *n = zc_view_find_node(op, v, zc_json_str(x, "name"), e);
	if (e->code)
		return e->code;
	*created = !n;
	double pos = 0;
	if (!n) {
		pos = zc_view_max_pos(op, v, e) + 1;
		if (!(n = zc_view_new_node(op, v, e)))
			return e->code;
	} else if (!zc_scope_writable(op->ctx, zc_json_str(n, "scope"))) {
		json_decref(n);
		return zc_fail(e, ZCOR_EFORBIDDEN, "this conversation cannot change '%s'",
			       zc_json_str(x, "name"));
	}
	if (json_is_number(json_object_get(x, "pos")))
		pos = json_number_value(json_object_get(x, "pos"));
	rc = save_node_entry(op, v, n, x, 0, pos, e);
	json_decref(n);
	return rc;
}

static int delete_person(struct zc_op *op, const char *pid, struct zc_err *e)
{
	sqlite3_stmt *st = zc_stmt(&op->m->store, "DELETE FROM people WHERE person_id = ?1", e);
	if (!st)
		return e->code;
	sqlite3_bind_text(st, 1, pid, -1, SQLITE_TRANSIENT);
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? ZCOR_OK : zc_store_fail(&op->m->store, rc, e, "removing a person");
}

static int delete_node_id(struct zc_op *op, const char *id, struct zc_err *e)
{
	json_t *n = NULL;
	int rc = zc_node_load(op, id, &n, e);
	if (!rc)
		rc = zc_node_delete(op, n, e);
	json_decref(n);
	return rc;
}

int zc_view_remove(struct zc_op *op, const struct zc_view *v, const char *name, long long line,
		   struct zc_err *e)
{
	char *text = NULL;
	json_t *entries = NULL, *unparsed = NULL;
	int rc = zc_view_render(op->m, v, &text, &entries, &unparsed, e);
	if (rc)
		return rc;
	size_t i;
	json_t *x;
	rc = ZCOR_ENOTFOUND;
	char *want = name ? zc_norm(name) : NULL;
	json_array_foreach(entries, i, x) {
		int hit = line > 0 ? json_integer_value(json_object_get(x, "line")) == line : 0;
		if (!hit && want) {
			char *nn = zc_norm(zc_json_str(x, "name"));
			hit = strcmp(nn, want) == 0;
			zc_free(nn);
		}
		if (!hit)
			continue;
		rc = json_object_get(x, "personId")
			     ? delete_person(op, zc_json_str(x, "personId"), e)
			     : delete_node_id(op, zc_json_str(x, "id"), e);
		goto out;
	}
	if (line > 0) {
		json_array_foreach(unparsed, i, x) {
			if (json_integer_value(json_object_get(x, "line")) != line)
				continue;
			sqlite3_stmt *st = zc_stmt(&op->m->store,
						   "DELETE FROM view_unparsed WHERE seq = ?1 AND path = ?2", e);
			if (!st) {
				rc = e->code;
				goto out;
			}
			sqlite3_bind_int64(st, 1, json_integer_value(json_object_get(x, "useq")));
			sqlite3_bind_text(st, 2, v->path, -1, SQLITE_TRANSIENT);
			int s = sqlite3_step(st);
			sqlite3_reset(st);
			rc = s == SQLITE_DONE ? ZCOR_OK : zc_store_fail(&op->m->store, s, e, "removing a line");
			goto out;
		}
	}
	if (line > 0)
		zc_fail(e, ZCOR_ENOTFOUND, "%s has no entry on line %lld; read it to see the lines",
			v->path, line);
	else
		zc_fail(e, ZCOR_ENOTFOUND, "%s has no entry named '%s'; read or search it to find the name",
			v->path, name ? name : "");
out:
	zc_free(want);
	zc_free(text);
	json_decref(entries);
	json_decref(unparsed);
	return rc;
}

/* ---- a whole text ---------------------------------------------------------- */

static int add_unparsed(struct zc_op *op, const struct zc_view *v, const json_t *u, double pos,
			struct zc_err *e)
{
	sqlite3_stmt *st = zc_stmt(&op->m->store,
				   "INSERT INTO view_unparsed(path, section, pos, line, at) VALUES(?1, ?2, "
				   "?3, ?4, ?5)",
				   e);
	if (!st)
		return e->code;
	sqlite3_bind_text(st, 1, v->path, -1, SQLITE_TRANSIENT);
	if (zc_json_str(u, "section"))
		sqlite3_bind_text(st, 2, zc_json_str(u, "section"), -1, SQLITE_TRANSIENT);
	sqlite3_bind_double(st, 3, pos);
	sqlite3_bind_text(st, 4, zc_json_str(u, "text"), -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 5, op->now);
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? ZCOR_OK : zc_store_fail(&op->m->store, rc, e, "keeping a line");
}

static int set_index(struct zc_op *op, const char *text, int append, struct zc_err *e)
{
	char *old = NULL;
	long long seq = 0;
	int rc = zc_view_index_text(op->m, &old, &seq, e);
	if (rc)
		return rc;
	json_t *n = NULL;
	if (seq) {
		sqlite3_stmt *st = zc_stmt(&op->m->store, "SELECT id FROM nodes WHERE seq = ?1", e);
		char id[64] = "";
		if (st) {
			sqlite3_bind_int64(st, 1, seq);
			if (sqlite3_step(st) == SQLITE_ROW)
				snprintf(id, sizeof(id), "%s", (const char *)sqlite3_column_text(st, 0));
			sqlite3_reset(st);
		}
		json_t *cur = NULL;
		if ((rc = zc_node_load(op, id, &cur, e))) {
			zc_free(old);
			return rc;
		}
		n = cur;
	} else {
		struct zc_view iv = {.kind = ZC_VIEW_INDEX};
		if (!(n = zc_view_new_node(op, &iv, e))) {
			zc_free(old);
			return e->code;
		}
		json_object_set_new(n, "kind", json_string("document"));
		json_object_set_new(n, "title", json_string("INDEX.md"));
	}
	struct zc_buf b = ZC_BUF_INIT;
	if (append && *old) {
		zc_buf_adds(&b, old);
		if (old[strlen(old) - 1] != '\n')
			zc_buf_addc(&b, '\n');
	}
	zc_buf_adds(&b, text);
	json_object_set_new(n, "content", zc_json_string_own(zc_buf_detach(&b)));
	zc_json_set_time(n, "updatedAt", op->now);
	rc = zc_node_save(op, n, e);
	json_decref(n);
	zc_free(old);
	return rc;
}

/*
 * Stores the unparsed lines of a written doc where the view renders them
 * back as written, so that writing back a view as read changes nothing
 * (found by tests/fuzz/fuzz_views.c). The render orders lines by pos in
 * their section, and entries sit where the store keeps them: a node at
 * the line it was written on, a person at its row order (seq; the people
 * table keeps no line). So on PEOPLE.md a line of 人物 goes just before
 * the person that followed it, other lines after all people, in the order
 * written. And a line kept because an entry of the same name follows it
 * ("the later line is the entry") must still come before that entry: if
 * it would not (another section, or the entry kept an earlier place), it
 * goes just before the entry, in its section. It is dropped if it reads
 * exactly as the entry's line (as rendered) or another line in the
 * section it goes to: an identical line, which the next write would
 * drop. base: where an append starts (0 for a whole write). Call once the
 * entries are saved.
 */
static int add_kept_lines(struct zc_op *op, const struct zc_view *v, const json_t *doc, double base,
			  struct zc_err *e)
{
	json_t *cur = NULL, *stored = json_object(), *lines = json_object();
	int rc = zc_view_load_entries(op->m, v, &cur, e);
	double after_all = base;
	size_t i, j;
	json_t *x, *u;
	json_array_foreach(cur, i, x) {
		char *k = zc_view_entry_key(v, x);
		json_object_set(stored, k, x);
		zc_free(k);
		if (v->kind == ZC_VIEW_PEOPLE) { /* found by name or by QQ number */
			char *n = zc_norm(zc_json_str(x, "name"));
			struct zc_buf b = ZC_BUF_INIT;
			zc_buf_addf(&b, "name:%s", n);
			if (!json_object_get(stored, b.p))
				json_object_set(stored, b.p, x);
			zc_buf_release(&b);
			zc_free(n);
		}
		if (json_number_value(json_object_get(x, "pos")) + 1 > after_all)
			after_all = json_number_value(json_object_get(x, "pos")) + 1;
	}
	json_t *entries = json_object_get(doc, "entries");
	json_array_foreach(json_object_get(doc, "unparsed"), i, u) {
		if (rc)
			break;
		double at = json_number_value(json_object_get(u, "pos")), pos = base + at;
		const char *sec = zc_json_str(u, "section");
		char *line = zc_strndup_trim(zc_json_str(u, "text"), strlen(zc_json_str(u, "text")));
		json_t *same = (line[0] == '-' || line[0] == '*') && line[1] == ' ' ? zc_view_parse_entry(v, sec, line + 2)
										   : NULL;
		char *key = same ? zc_view_entry_key(v, same) : NULL;
		const json_t *next = NULL, *entry = NULL; /* the stored entries after it: next, its own */
		json_array_foreach(entries, j, x) { /* in the order written */
			if (json_number_value(json_object_get(x, "pos")) <= at)
				continue;
			char *k = zc_view_entry_key(v, x);
			if (!next)
				next = json_object_get(stored, k);
			if (key && strcmp(k, key) == 0)
				entry = json_object_get(stored, k);
			zc_free(k);
			if (entry)
				break;
		}
		if (v->kind == ZC_VIEW_PEOPLE)
			pos = next && sec && strcmp(sec, "人物") == 0
				      ? nextafter(json_number_value(json_object_get(next, "pos")), -INFINITY)
				      : after_all + at;
		json_t *place = json_deep_copy(u);
		int identical = 0;
		if (entry) {
			double epos = json_number_value(json_object_get(entry, "pos"));
			const char *esec = zc_view_entry_section(v, entry);
			if (!sec || strcmp(sec, esec) != 0 || pos >= epos) {
				pos = nextafter(epos, -INFINITY);
				json_object_set_new(place, "section", json_string(esec));
			}
			/* the same line as the entry renders (.qq-stickers/ as stickers/…) */
			char *as_entry = zc_view_line(v, entry);
			identical = strcmp(as_entry, line) == 0; /* and it is in the entry's section now */
			zc_free(as_entry);
		}
		struct zc_buf k = ZC_BUF_INIT; /* as zc_view_parse finds identical lines */
		zc_buf_addf(&k, "%s\n%s", zc_json_str(place, "section") ? zc_json_str(place, "section") : "", line);
		identical |= json_object_get(lines, k.p) != NULL;
		json_object_set_new(lines, k.p, json_true());
		zc_buf_release(&k);
		if (!identical)
			rc = add_unparsed(op, v, place, pos, e);
		json_decref(place);
		zc_free(key);
		json_decref(same);
		zc_free(line);
	}
	json_decref(lines);
	json_decref(stored);
	json_decref(cur);
	return rc;
}

int zc_view_replace(struct zc_op *op, const struct zc_view *v, const json_t *doc, struct zc_err *e)
{
	if (v->kind == ZC_VIEW_INDEX)
		return set_index(op, zc_json_str(doc, "text"), 0, e);
	int rc;
	json_t *cur = NULL, *keep = json_object();
	if ((rc = zc_view_load_entries(op->m, v, &cur, e)))
		goto out;
	size_t i;
	json_t *x;
	json_t *by_key = json_object();
	json_array_foreach(cur, i, x) {
		char *k = zc_view_entry_key(v, x);
		json_object_set(by_key, k, x);
		zc_free(k);
	}
	json_array_foreach(json_object_get(doc, "entries"), i, x) {
		char *k = zc_view_entry_key(v, x);
		json_t *old = json_object_get(by_key, k);
		json_object_set_new(keep, k, json_true());
		zc_free(k);
		if (v->kind == ZC_VIEW_PEOPLE) {
			json_t *p = zc_view_find_person(op, x, e);
			if (e->code) {
				json_decref(p);
				rc = e->code;
				break;
			}
			if (p) { /* found by name: its own key stays too */
				json_t *pe = zc_view_entry_of_person(p, 0);
				char *pk = zc_view_entry_key(v, pe);
				json_object_set_new(keep, pk, json_true());
				zc_free(pk);
				json_decref(pe);
			}
			rc = save_person_entry(op, p, x, 1, e);
			json_decref(p);
		} else {
			json_t *n = NULL;
			if (old)
				rc = zc_node_load(op, zc_json_str(old, "id"), &n, e);
			else if (!(n = zc_view_new_node(op, v, e)))
				rc = e->code;
			if (!rc)
				rc = save_node_entry(op, v, n, x, 1, json_number_value(json_object_get(x, "pos")),
						     e);
			json_decref(n);
		}
		if (rc)
			break;
	}
	json_decref(by_key);
	if (rc)
		goto out;
	json_array_foreach(cur, i, x) {
		char *k = zc_view_entry_key(v, x);
		int kept = json_object_get(keep, k) != NULL;
		zc_free(k);
		if (kept)
			continue;
		rc = json_object_get(x, "personId") ? delete_person(op, zc_json_str(x, "personId"), e)
						    : delete_node_id(op, zc_json_str(x, "id"), e);
		if (rc)
			goto out;
	}
	sqlite3_stmt *st = zc_stmt(&op->m->store, "DELETE FROM view_unparsed WHERE path = ?1", e);
	if (!st) {
		rc = e->code;
		goto out;
	}
	sqlite3_bind_text(st, 1, v->path, -1, SQLITE_TRANSIENT);
	int s = sqlite3_step(st);
	sqlite3_reset(st);
	if (s != SQLITE_DONE) {
		rc = zc_store_fail(&op->m->store, s, e, "rewriting a view");
		goto out;
	}
	rc = add_kept_lines(op, v, doc, 0, e);
out:
	json_decref(cur);
	json_decref(keep);
	return rc;
}

int zc_view_append(struct zc_op *op, const struct zc_view *v, const json_t *doc, struct zc_err *e)
{
	if (v->kind == ZC_VIEW_INDEX)
		return set_index(op, zc_json_str(doc, "text"), 1, e);
	int rc;
	zc_err_clear(e);
	double base = zc_view_max_pos(op, v, e);
	if (e->code)
		return e->code;
	size_t i;
	json_t *x;
	json_array_foreach(json_object_get(doc, "entries"), i, x) {
		json_t *y = json_deep_copy(x);
		json_object_set_new(y, "pos", json_real(base + json_number_value(json_object_get(x, "pos"))));
		int created;
		if (v->kind == ZC_VIEW_PEOPLE)
			json_object_del(y, "pos");
		else {
			/* an existing name keeps its place */
			json_t *old = zc_view_find_node(op, v, zc_json_str(y, "name"), e);
			if (old)
				json_object_del(y, "pos");
			json_decref(old);
		}
		rc = zc_view_upsert(op, v, y, &created, e);
		json_decref(y);
		if (rc)
			return rc;
	}
	return add_kept_lines(op, v, doc, base, e);
}
