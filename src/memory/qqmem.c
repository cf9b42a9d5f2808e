/*
 * qqmem.c — the qq tools over the memory views (SPEC §3.2, seed 003):
 * qq_memory (read, append, write, search, list, upsert, remove),
 * qq_save_sticker, qq_rename_sticker, and the check of [[图片: …]] in a
 * reply.
 *
 * Memory layer. The write gate lives here, once: a private conversation
 * never writes a global view (PEOPLE.md, COGNITION.md, STICKERS.md,
 * INDEX.md) and is told to use its own MEMORY.md; a conversation reads
 * and writes only its own MEMORY.md and archive; the host plane (web
 * page, CLI) is not gated. Every change keeps the previous rendering
 * (the last 20 per view), records before/after text in history, runs the
 * rollover of a MEMORY.md and enforces the view's byte limit — all in
 * the operation's one transaction.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/fs.h"
#include "base/json.h"
#include "base/utf8.h"
#include "memory/media.h"
#include "memory/sticker.h"
#include "memory/view.h"
#include "text/norm.h"

#define STICKER_MAX_BYTES (10L << 20)
#define SEARCH_MAX_HITS 50

/* ---- the gate ------------------------------------------------------------ */

static int own_conversation(const struct zcor_ctx *ctx, const struct zc_view *v)
{
	return !ctx->conversation || strcmp(ctx->conversation, v->conv) == 0;
}

static int gate_read(const struct zcor_ctx *ctx, const struct zc_view *v, struct zc_err *e)
{
	if ((v->kind == ZC_VIEW_MEMORY || v->kind == ZC_VIEW_ARCHIVE) && !own_conversation(ctx, v))
		return zc_fail(e, ZCOR_ENOTFOUND,
			       "no view '%s' in this conversation; list the views with "
			       "qq_memory {action: \"list\"}",
			       v->path);
	return ZCOR_OK;
}

static int gate_write(const struct zcor_ctx *ctx, const struct zc_view *v, struct zc_err *e)
{
	int rc = gate_read(ctx, v, e);
	if (rc)
		return rc;
	if (ctx->conversation && v->kind != ZC_VIEW_MEMORY && v->kind != ZC_VIEW_ARCHIVE &&
	    zc_scope_is_private(ctx)) {
		struct zc_view own;
		zc_view_memory(&own, ctx->conversation);
		return zc_fail(e, ZCOR_EFORBIDDEN,
			       "a private conversation cannot write %s: it is shared with every "
			       "conversation, and what is learned in a private chat stays there; "
			       "write it into this conversation's own %s instead",
			       v->path, own.path);
	}
	return ZCOR_OK;
}

/* ---- arguments ------------------------------------------------------------ */

static int path_arg(json_t *args, struct zc_view *v, struct zc_err *e)
{
	json_t *p = json_object_get(args, "path");
	if (!json_is_string(p))
		return zc_fail(e, ZCOR_EINVAL,
			       "argument 'path': required for this action, e.g. "
			       "conversations/group-100000001/MEMORY.md or COGNITION.md");
	return zc_view_path(json_string_value(p), json_string_length(p), "path", v, e);
}

static int content_arg(json_t *args, const char **text, struct zc_err *e)
{
	json_t *c = json_object_get(args, "content");
	if (!json_is_string(c))
		return zc_fail(e, ZCOR_EINVAL, "argument 'content': the Markdown text to write");
	if (strlen(json_string_value(c)) != json_string_length(c))
		return zc_fail(e, ZCOR_EINVAL, "argument 'content': must not contain a NUL character");
	*text = json_string_value(c);
	return ZCOR_OK;
}

/* ---- around a change ------------------------------------------------------ */

/*
 * What history keeps of a view around a change: for a whole-view write
 * (name NULL, line 0) the view's text; for a change of one entry only that
 * entry's line, {path, entry} (null when there is none), so that a busy
 * COGNITION.md does not copy itself into history at every upsert. The
 * whole text of the last 20 versions is in view_versions either way.
 */
static json_t *snapshot(struct zc_op *op, const struct zc_view *v, const char *name,
			long long line, struct zc_err *e)
{
	char *text = NULL;
	json_t *entries = NULL, *unparsed = NULL, *s = NULL;
	if (zc_view_render(op->m, v, &text, &entries, &unparsed, e))
		return NULL;
	if (!name && line == 0) {
		s = json_pack("{s:s, s:s}", "path", v->path, "text", text);
		goto out;
	}
	long long at = line > 0 ? line : 0;
	if (name) {
		char *want = zc_norm(name);
		size_t i;
		json_t *x;
		json_array_foreach(entries, i, x) {
			char *nn = zc_norm(zc_json_str(x, "name"));
			int hit = strcmp(nn, want) == 0;
			zc_free(nn);
			if (hit) {
				at = json_integer_value(json_object_get(x, "line"));
				break;
			}
		}
		zc_free(want);
	}
	line = at;
	/* the text of rendered line `line` */
	const char *p = text;
	for (long long k = 1; k < line && p && *p; k++) {
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	if (line > 0 && p && *p) {
		const char *nl = strchr(p, '\n');
		s = json_pack("{s:s, s:s%}", "path", v->path, "entry", p, nl ? (size_t)(nl - p) : strlen(p));
	} else {
		s = json_pack("{s:s, s:n}", "path", v->path, "entry");
	}
out:
	zc_free(text);
	json_decref(entries);
	json_decref(unparsed);
	return s;
}

static int before_change(struct zc_op *op, const struct zc_view *v, const char *name,
			 long long line, struct zc_err *e)
{
	json_t *s = snapshot(op, v, name, line, e);
	if (!s)
		return e->code;
	zc_op_before(op, s);
	return zc_view_save_version(op, v, e);
}

/* Rollover, byte limit, citations, after-snapshot (of the entry `name`,
 * or of the whole view when whole) and the result. */
static int after_change(struct zc_op *op, const struct zc_view *v, json_t *result, const char *name,
			int whole, struct zc_err *e)
{
	json_t *warnings = json_array();
	int rc = ZCOR_OK;
	if (v->kind == ZC_VIEW_MEMORY) {
		long long moved = 0;
		if ((rc = zc_view_rollover(op, v->conv, &moved, warnings, e)))
			goto out;
		if (moved)
			json_object_set_new(result, "archived", json_integer(moved));
	}
	char *text = NULL;
	json_t *unparsed = NULL;
	if ((rc = zc_view_render(op->m, v, &text, NULL, &unparsed, e)))
		goto out;
	long bytes = (long)strlen(text), limit = zc_view_limit(op->m, v);
	if (bytes > limit) {
		rc = zc_fail(e, ZCOR_EINVAL,
			     "%s would be %ld bytes, over its limit of %ld; shorten or remove entries "
			     "(the operator can raise %s in config.json)",
			     v->path, bytes, limit,
			     v->kind == ZC_VIEW_MEMORY ? "memoryFileMaxBytes" : "viewMaxBytes");
		zc_free(text);
		json_decref(unparsed);
		goto out;
	}
	zc_free(text);
	json_t *snap = snapshot(op, v, whole ? NULL : name, whole || name ? 0 : -1, e);
	if (!snap) {
		rc = e->code;
		json_decref(unparsed);
		goto out;
	}
	if (json_object_get(result, "archived"))
		json_object_set(snap, "archived", json_object_get(result, "archived"));
	zc_op_after(op, snap);
	long long count = 0;
	if ((rc = zc_view_count(op->m, v, &count, e))) {
		json_decref(unparsed);
		goto out;
	}
	json_object_set_new(result, "path", json_string(v->path));
	json_object_set_new(result, "entries", json_integer(count));
	json_object_set_new(result, "bytes", json_integer(bytes));
	if (json_array_size(unparsed))
		json_object_set_new(result, "unparsedLines", json_integer((json_int_t)json_array_size(unparsed)));
	json_decref(unparsed);
	if (json_array_size(warnings))
		json_object_set(result, "warnings", warnings);
out:
	json_decref(warnings);
	return rc;
}

/* ---- actions ---------------------------------------------------------------- */

static json_t *unparsed_note(const json_t *unparsed)
{
	if (!json_array_size(unparsed))
		return NULL;
	struct zc_buf b = ZC_BUF_INIT;
	zc_buf_addf(&b, "%zu 行没有解析成条目，原样保留、不进提示词（/ %zu line(s) did not parse: kept as "
			"written, never injected）：",
		    json_array_size(unparsed), json_array_size(unparsed));
	size_t i;
	json_t *u;
	json_array_foreach(unparsed, i, u) {
		if (i == 10) {
			zc_buf_adds(&b, " …");
			break;
		}
		zc_buf_addf(&b, "%sL%lld", i ? ", " : " ", (long long)json_integer_value(json_object_get(u, "line")));
	}
	zc_buf_adds(&b, "。用 upsert 重写这些条目，再用 remove {line} 删掉旧行 / rewrite them with upsert, then remove the old line with remove {line}.");
	return zc_json_string_own(zc_buf_detach(&b));
}

static int act_read(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	struct zc_view v;
	int rc;
	if ((rc = path_arg(args, &v, e)) || (rc = gate_read(op->ctx, &v, e)))
		return rc;
	json_t *ver = json_object_get(args, "version");
	if (ver) {
		if (!json_is_integer(ver) || json_integer_value(ver) < 1 ||
		    json_integer_value(ver) > ZC_VIEW_VERSIONS)
			return zc_fail(e, ZCOR_EINVAL,
				       "argument 'version': 1 (the previous version) to %d", ZC_VIEW_VERSIONS);
		sqlite3_stmt *st = zc_stmt(&op->m->store,
					   "SELECT text, at, actor FROM view_versions WHERE path = ?1 "
					   "ORDER BY seq DESC LIMIT 1 OFFSET ?2",
					   e);
		if (!st)
			return e->code;
		sqlite3_bind_text(st, 1, v.path, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 2, json_integer_value(ver) - 1);
		int s = sqlite3_step(st);
		if (s == SQLITE_ROW) {
			*out = json_pack("{s:s, s:I, s:s, s:s}", "path", v.path, "version",
					 (json_int_t)json_integer_value(ver), "actor",
					 (const char *)sqlite3_column_text(st, 2), "text",
					 (const char *)sqlite3_column_text(st, 0));
			zc_json_set_time(*out, "savedAt", sqlite3_column_int64(st, 1));
		}
		sqlite3_reset(st);
		if (s == SQLITE_ROW)
			return ZCOR_OK;
		if (s != SQLITE_DONE)
			return zc_store_fail(&op->m->store, s, e, "reading a view version");
		return zc_fail(e, ZCOR_ENOTFOUND, "%s has fewer than %lld earlier versions", v.path,
			       (long long)json_integer_value(ver));
	}
	char *text = NULL;
	json_t *entries = NULL, *unparsed = NULL;
	if ((rc = zc_view_render(op->m, &v, &text, &entries, &unparsed, e)))
		return rc;
	*out = json_pack("{s:s, s:s, s:I}", "path", v.path, "text", text, "entries",
			 (json_int_t)json_array_size(entries));
	json_t *note = unparsed_note(unparsed);
	if (note)
		json_object_set_new(*out, "note", note);
	zc_free(text);
	json_decref(entries);
	json_decref(unparsed);
	return ZCOR_OK;
}

static int act_list(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	json_t *views = NULL;
	int rc = zc_view_list(op, &views, e);
	if (rc)
		return rc;
	*out = json_pack("{s:o}", "views", views);
	return ZCOR_OK;
}

/* Keywords from "query" (split on spaces) or "keywords", normalised. */
static int search_terms(json_t *args, json_t **terms, struct zc_err *e)
{
	*terms = json_array();
	json_t *q = json_object_get(args, "query"), *k = json_object_get(args, "keywords");
	if (json_is_string(q)) {
		const char *s = json_string_value(q);
		while (*s) {
			while (*s == ' ' || *s == '\t')
				s++;
			const char *t = s;
			while (*s && *s != ' ' && *s != '\t')
				s++;
			if (s > t)
				json_array_append_new(*terms, zc_json_string_own(zc_norm_n(t, (size_t)(s - t))));
		}
	}
	size_t i;
	json_t *w;
	json_array_foreach(k, i, w) if (json_is_string(w) && *json_string_value(w))
		json_array_append_new(*terms, zc_json_string_own(zc_norm(json_string_value(w))));
	if (!json_array_size(*terms)) {
		json_decref(*terms);
		*terms = NULL;
		return zc_fail(e, ZCOR_EINVAL,
			       "argument 'query': the words to look for, e.g. {\"query\": \"蚌埠\"}");
	}
	return ZCOR_OK;
}

static int grep_view(struct zc_op *op, const struct zc_view *v, const json_t *terms, json_t *hits,
		     struct zc_err *e)
{
	char *text = NULL;
	int rc = zc_view_render(op->m, v, &text, NULL, NULL, e);
	if (rc)
		return rc;
	long lineno = 0;
	for (const char *p = text; *p && json_array_size(hits) < SEARCH_MAX_HITS;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		lineno++;
		if (n && p[0] != '#') {
			char *norm = zc_norm_n(p, n);
			int all = 1;
			size_t i;
			json_t *t;
			json_array_foreach(terms, i, t) all &= strstr(norm, json_string_value(t)) != NULL;
			zc_free(norm);
			if (all)
				json_array_append_new(hits, json_pack("{s:s, s:I, s:s%}", "path", v->path,
								      "line", (json_int_t)lineno, "text", p, n));
		}
		p = nl ? nl + 1 : p + n;
	}
	zc_free(text);
	return ZCOR_OK;
}

struct grep {
	const json_t *terms;
	json_t *hits;
};

static int grep_each(struct zc_op *op, const struct zc_view *v, void *ud, struct zc_err *e)
{
	struct grep *g = ud;
	return grep_view(op, v, g->terms, g->hits, e);
}

static int act_search(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	json_t *terms = NULL, *hits = json_array();
	int rc;
	if ((rc = search_terms(args, &terms, e)))
		goto out;
	struct grep g = {terms, hits};
	if ((rc = zc_view_each(op, grep_each, &g, e)))
		goto out;
	*out = json_pack("{s:O, s:b}", "hits", hits, "truncated", json_array_size(hits) >= SEARCH_MAX_HITS);
out:
	json_decref(terms);
	json_decref(hits);
	return rc;
}

static int act_upsert(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	struct zc_view v;
	json_t *entry = NULL;
	int rc, created = 0;
	if ((rc = path_arg(args, &v, e)) || (rc = gate_write(op->ctx, &v, e)))
		goto out;
	if (v.kind == ZC_VIEW_ARCHIVE) {
		rc = zc_fail(e, ZCOR_EINVAL,
			     "argument 'path': archive files are filled by rollover and read-only; "
			     "upsert the entry into MEMORY.md instead (remove works on the archive)");
		goto out;
	}
	if ((rc = zc_view_entry_check(op->m, &v, args, &entry, e)) ||
	    (rc = before_change(op, &v, zc_json_str(entry, "name"), 0, e)) ||
	    (rc = zc_view_upsert(op, &v, entry, &created, e)))
		goto out;
	*out = json_pack("{s:s, s:O, s:b}", "action", "upsert", "name", json_object_get(entry, "name"),
			 "created", created);
	rc = after_change(op, &v, *out, zc_json_str(entry, "name"), 0, e);
out:
	json_decref(entry);
	return rc;
}

static int act_remove(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	struct zc_view v;
	int rc;
	if ((rc = path_arg(args, &v, e)) || (rc = gate_write(op->ctx, &v, e)))
		return rc;
	const char *name = zc_json_str(args, "name");
	json_t *line = json_object_get(args, "line");
	if (!name && !json_is_integer(line))
		return zc_fail(e, ZCOR_EINVAL,
			       "argument 'name': the entry to remove (or 'line': its line number as read)");
	if (v.kind == ZC_VIEW_INDEX)
		return zc_fail(e, ZCOR_EINVAL, "argument 'path': INDEX.md has no entries; use write");
	long long at = json_is_integer(line) ? json_integer_value(line) : 0;
	if ((rc = before_change(op, &v, at > 0 ? NULL : name, at, e)) ||
	    (rc = zc_view_remove(op, &v, name, at, e)))
		return rc;
	*out = json_pack("{s:s, s:b}", "action", "remove", "removed", 1);
	return after_change(op, &v, *out, NULL, 0, e);
}

/* The lines of a written text that were kept verbatim rather than read as
 * entries, each with its line in that text and the reason, so that the
 * model sees at once what it may have meant differently. */
#define KEPT_LISTED 20
static void kept_as_written(const json_t *doc, json_t *out)
{
	json_t *list = json_array();
	size_t i;
	json_t *u;
	json_array_foreach(json_object_get(doc, "unparsed"), i, u) {
		if (i == KEPT_LISTED)
			break;
		json_array_append_new(list, json_pack("{s:I, s:O, s:O}", "line",
						      (json_int_t)json_number_value(json_object_get(u, "pos")),
						      "text", json_object_get(u, "text"), "why",
						      json_object_get(u, "why")));
	}
	if (json_array_size(list))
		json_object_set(out, "keptAsWritten", list);
	size_t n = json_array_size(json_object_get(doc, "unparsed"));
	if (n > KEPT_LISTED)
		json_object_set_new(out, "keptAsWrittenNotListed", json_integer((json_int_t)(n - KEPT_LISTED)));
	json_decref(list);
}

static int act_write(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e, int append)
{
	struct zc_view v;
	const char *text = NULL;
	json_t *doc = NULL;
	int rc;
	if ((rc = path_arg(args, &v, e)) || (rc = gate_write(op->ctx, &v, e)) ||
	    (rc = content_arg(args, &text, e)))
		return rc;
	if (v.kind == ZC_VIEW_ARCHIVE)
		return zc_fail(e, ZCOR_EINVAL,
			       "argument 'path': archive files are filled by rollover; change the "
			       "entry in MEMORY.md, or remove it from the archive by name");
	if ((long)strlen(text) > zc_view_limit(op->m, &v))
		return zc_fail(e, ZCOR_EINVAL, "argument 'content': %zu bytes, over the limit of %ld for %s",
			       strlen(text), zc_view_limit(op->m, &v), v.path);
	doc = zc_view_parse(&v, text);
	long long before = 0, after = 0;
	if ((rc = zc_view_doc_check(&v, doc, e)) || (rc = zc_view_count(op->m, &v, &before, e)))
		goto out;
	if (v.kind == ZC_VIEW_INDEX) {
		for (const char *p = text; *p;) {
			const char *nl = strchr(p, '\n');
			size_t n = nl ? (size_t)(nl - p) : strlen(p);
			int blank = 1;
			for (size_t i = 0; i < n; i++)
				blank &= p[i] == ' ' || p[i] == '\t' || p[i] == '\r';
			after += !blank;
			p = nl ? nl + 1 : p + n;
		}
	} else {
		after = (long long)(json_array_size(json_object_get(doc, "entries")) +
				    json_array_size(json_object_get(doc, "unparsed")));
	}
	/* the 90% guard: a whole-view write that drops more than a tenth of
	 * the entries is almost always a model that lost track of the file */
	if (!append && after * 10 < before * 9 && !json_is_true(json_object_get(args, "force"))) {
		rc = zc_fail(e, ZCOR_ECONFLICT,
			     "writing %s would keep %lld of its %lld entries (below 90%%); nothing was "
			     "written. Change single entries with upsert / remove, or pass force: true "
			     "if dropping them is intended",
			     v.path, after, before);
		goto out;
	}
	if ((rc = before_change(op, &v, NULL, 0, e)))
		goto out;
	rc = append ? zc_view_append(op, &v, doc, e) : zc_view_replace(op, &v, doc, e);
	if (rc)
		goto out;
	*out = json_pack("{s:s, s:I, s:I}", "action", append ? "append" : "write", "parsedEntries",
			 (json_int_t)json_array_size(json_object_get(doc, "entries")), "mergedDuplicates",
			 (json_int_t)json_integer_value(json_object_get(doc, "duplicates")));
	kept_as_written(doc, *out);
	if (json_object_get(doc, "titleReplaced"))
		json_object_set(*out, "titleReplaced", json_object_get(doc, "titleReplaced"));
	rc = after_change(op, &v, *out, NULL, 1, e);
out:
	json_decref(doc);
	return rc;
}

static int qq_memory(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	const char *action = zc_json_str(args, "action");
	if (!action)
		return zc_fail(e, ZCOR_EINVAL,
			       "argument 'action': one of read, append, write, search, list, upsert, remove");
	op->only_read = !strcmp(action, "read") || !strcmp(action, "list") || !strcmp(action, "search");
	if (strcmp(action, "read") == 0)
		return act_read(op, args, out, e);
	if (strcmp(action, "list") == 0)
		return act_list(op, args, out, e);
	if (strcmp(action, "search") == 0)
		return act_search(op, args, out, e);
	if (strcmp(action, "upsert") == 0)
		return act_upsert(op, args, out, e);
	if (strcmp(action, "remove") == 0)
		return act_remove(op, args, out, e);
	if (strcmp(action, "write") == 0)
		return act_write(op, args, out, e, 0);
	if (strcmp(action, "append") == 0)
		return act_write(op, args, out, e, 1);
	return zc_fail(e, ZCOR_EINVAL,
		       "argument 'action': '%s' is not one of read, append, write, search, list, "
		       "upsert, remove",
		       action);
}

const struct zc_opdef zc_op_qq_memory = {"qq_memory", NULL, qq_memory, 0};

/* ---- stickers (Q-STK) -------------------------------------------------------- */

/* The cached image media names, as the caller may see it (media.c's one
 * rule: a conversation only the images of its own messages). */
static int media_arg(struct zc_op *op, const char *media, char **full, const char **file,
		     struct zc_err *e)
{
	int rc = zc_media_lookup(op->m, op->ctx, media, full, e);
	if (rc) {
		zc_err_prefix(e, "argument 'media'");
		return rc;
	}
	*file = media + strlen("media/");
	return ZCOR_OK;
}

static int same_file(const char *a, const char *b)
{
	char *x = NULL, *y = NULL;
	size_t nx = 0, ny = 0;
	int same = zc_read_file_nofollow(a, STICKER_MAX_BYTES, &x, &nx, NULL) == ZCOR_OK &&
		   zc_read_file_nofollow(b, STICKER_MAX_BYTES, &y, &ny, NULL) == ZCOR_OK && nx == ny &&
		   memcmp(x, y, nx) == 0;
	zc_free(x);
	zc_free(y);
	return same;
}

static int save_sticker(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	struct zc_view v = {.kind = ZC_VIEW_STICKERS};
	snprintf(v.path, sizeof(v.path), "STICKERS.md");
	const char *name = zc_json_str(args, "name"), *file = NULL;
	char *src = NULL, *dest = NULL, *data = NULL;
	json_t *fields = NULL, *entry = NULL;
	size_t len = 0;
	int rc, created = 0;
	if ((rc = gate_write(op->ctx, &v, e)) || (rc = zc_sticker_name_check("name", name, e)) ||
	    (rc = media_arg(op, zc_json_str(args, "media"), &src, &file, e)))
		goto out;
	struct zc_buf rel = ZC_BUF_INIT;
	zc_buf_addf(&rel, "stickers/%s%s", name, zc_file_ext(file));
	rc = zc_dir_inside(op->m->dir, "stickers", ZC_DIR_CREATE, e);
	dest = zc_path_join(op->m->dir, rel.p);
	fields = json_pack("{s:s, s:s}", "name", name, "image", rel.p);
	zc_buf_release(&rel);
	if (rc)
		goto out;
	if (zc_json_str(args, "meaning"))
		json_object_set(fields, "meaning", json_object_get(args, "meaning"));
	if (zc_json_str(args, "scene"))
		json_object_set(fields, "scene", json_object_get(args, "scene"));
	enum zc_file_kind dk = zc_file_kind(dest);
	if (dk != ZC_FILE_NONE && dk != ZC_FILE_REGULAR) {
		rc = zc_fail(e, ZCOR_ECONFLICT,
			     "'%s' is not a regular file (a link or special file was put there, which "
			     "zcor does not follow); choose another name, or have the operator remove it",
			     ZC_Q(zc_json_str(fields, "image"), 100));
		goto out;
	}
	if (dk == ZC_FILE_REGULAR) {
		if (!same_file(src, dest)) {
			rc = zc_fail(e, ZCOR_ECONFLICT,
				     "a different sticker is already saved as '%s'; choose another name, "
				     "or rename that one first with qq_rename_sticker",
				     zc_json_str(fields, "image"));
			goto out;
		}
	} else {
		if ((rc = zc_read_file_nofollow(src, STICKER_MAX_BYTES, &data, &len, e)) ||
		    (rc = zc_write_file_atomic(dest, data, len, e)))
			goto out;
		zc_op_file_created(op, dest);
		op->side_effect = 1;
	}
	if ((rc = zc_view_entry_check(op->m, &v, fields, &entry, e)) ||
	    (rc = before_change(op, &v, zc_json_str(entry, "name"), 0, e)) ||
	    (rc = zc_view_upsert(op, &v, entry, &created, e)))
		goto out;
	*out = json_pack("{s:s, s:O, s:O, s:b, s:s}", "action", "save_sticker", "name",
			 json_object_get(entry, "name"), "image", json_object_get(entry, "image"),
			 "created", created, "send", "[[图片: ");
	struct zc_buf send = ZC_BUF_INIT;
	zc_buf_addf(&send, "[[图片: %s]]", zc_json_str(entry, "image"));
	json_object_set_new(*out, "send", zc_json_string_own(zc_buf_detach(&send)));
	rc = after_change(op, &v, *out, zc_json_str(entry, "name"), 0, e);
out:
	zc_free(src);
	zc_free(dest);
	zc_free(data);
	json_decref(fields);
	json_decref(entry);
	return rc;
}

const struct zc_opdef zc_op_qq_save_sticker = {"qq_save_sticker", NULL, save_sticker, 0};

/* The catalog entry named from_name (its id in *id, borrowed from
 * entries): ENOTFOUND without one, ECONFLICT when another is named to. */
static int find_renamed(const json_t *entries, const char *from_name, const char *to, const char **id,
			struct zc_err *e)
{
	char *want = zc_norm(from_name), *want_to = zc_norm(to);
	size_t i;
	json_t *x;
	int clash = 0;
	*id = NULL;
	json_array_foreach(entries, i, x) {
		char *nn = zc_norm(zc_json_str(x, "name"));
		if (strcmp(nn, want) == 0)
			*id = zc_json_str(x, "id");
		else if (strcmp(nn, want_to) == 0)
			clash = 1;
		zc_free(nn);
	}
	zc_free(want);
	zc_free(want_to);
	if (!*id)
		return zc_fail(e, ZCOR_ENOTFOUND,
			       "STICKERS.md has no sticker named '%s'; read it to see the names",
			       ZC_Q(from_name, 60));
	if (clash)
		return zc_fail(e, ZCOR_ECONFLICT,
			       "STICKERS.md already has a sticker named '%s'; pick another name", ZC_Q(to, 60));
	return ZCOR_OK;
}

/* Links the sticker's image img under stickers/<to><ext>: the new name
 * appears now and the old one goes only after the commit (the runner's
 * obsolete files), so a failure anywhere leaves the old file and entry.
 * *rel is the new path on success. */
static int link_renamed(struct zc_op *op, const char *img, const char *to, struct zc_buf *rel,
			struct zc_err *e)
{
	char *old_full = NULL, *new_full = NULL;
	int rc;
	zc_buf_addf(rel, "stickers/%s%s", to, zc_file_ext(img + 9));
	if ((rc = zc_sticker_path_check("to", rel->p, e)))
		return rc;
	old_full = zc_path_join(op->m->dir, img);
	new_full = zc_path_join(op->m->dir, rel->p);
	enum zc_file_kind ok = zc_file_kind(old_full);
	if ((rc = zc_dir_inside(op->m->dir, "stickers", 0, e)))
		goto out;
	if (ok != ZC_FILE_NONE && ok != ZC_FILE_REGULAR) {
		/* link() would copy the planted link under the new name */
		rc = zc_fail(e, ZCOR_ECONFLICT,
			     "'%s' is not a regular file (a link or special file was put there, which "
			     "zcor does not follow); have the operator replace it with the image",
			     ZC_Q(img, 100));
		goto out;
	}
	if (zc_file_kind(new_full) != ZC_FILE_NONE) {
		rc = zc_fail(e, ZCOR_ECONFLICT, "a file '%s' already exists; pick another name", rel->p);
		goto out;
	}
	if (link(old_full, new_full) != 0) {
		rc = zc_fail(e, errno == ENOENT ? ZCOR_ENOTFOUND : zc_errno_code(errno),
			     "cannot rename '%s' to '%s': %s", img, rel->p, strerror(errno));
		goto out;
	}
	zc_op_file_created(op, new_full);
	/* the store will name it: the name must survive a power cut */
	if (zc_fsync_parent(new_full) != 0) {
		rc = zc_fail(e, zc_errno_code(errno), "cannot rename '%s' to '%s': %s", img, rel->p,
			     strerror(errno));
		goto out;
	}
	zc_op_file_obsolete(op, old_full);
	op->side_effect = 1;
out:
	zc_free(old_full);
	zc_free(new_full);
	return rc;
}

static int rename_sticker(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	struct zc_view v = {.kind = ZC_VIEW_STICKERS};
	snprintf(v.path, sizeof(v.path), "STICKERS.md");
	const char *from = zc_json_str(args, "from"), *to = zc_json_str(args, "to");
	char *from_name = NULL;
	json_t *entries = NULL, *node = NULL;
	char *text = NULL;
	int rc;
	if ((rc = gate_write(op->ctx, &v, e)) || (rc = zc_sticker_name_check("to", to, e)))
		goto out;
	if (!from || !*from) {
		rc = zc_fail(e, ZCOR_EINVAL, "argument 'from': the sticker's name or its stickers/ path");
		goto out;
	}
	/* "stickers/无语.gif" or "无语" */
	if (strncmp(from, "stickers/", 9) == 0) {
		const char *f = from + 9, *dot = zc_file_ext(f);
		from_name = dot ? zc_strndup(f, (size_t)(dot - f)) : zc_strdup(f);
	} else {
		from_name = zc_strdup(from);
	}
	if ((rc = zc_view_render(op->m, &v, &text, &entries, NULL, e)))
		goto out;
	const char *id;
	if ((rc = find_renamed(entries, from_name, to, &id, e)) || (rc = zc_node_load(op, id, &node, e)))
		goto out;
	json_t *attrs = json_object_get(node, "attrs");
	const char *img = zc_json_str(attrs, "image");
	/* the file is linked and unlinked by the stored path: it must be a
	 * sticker path (old data may hold anything), and so must the new one */
	if (img && (rc = zc_sticker_path_check("image", img, e))) {
		zc_err_prefix(e, "sticker '%s' was not renamed: its catalog entry does not point into "
				 "stickers/ (give it the right path with qq_memory upsert STICKERS.md, or "
				 "upsert it with image \"\")",
			      ZC_Q(from_name, 40));
		goto out;
	}
	if ((rc = before_change(op, &v, from_name, 0, e)))
		goto out;
	json_object_set_new(node, "title", json_string(to));
	if (img) {
		struct zc_buf rel = ZC_BUF_INIT;
		if ((rc = link_renamed(op, img, to, &rel, e))) {
			zc_buf_release(&rel);
			goto out;
		}
		json_object_set_new(attrs, "image", zc_json_string_own(zc_buf_detach(&rel)));
	}
	zc_json_set_time(node, "updatedAt", op->now);
	if ((rc = zc_node_save(op, node, e)))
		goto out;
	*out = json_pack("{s:s, s:s, s:s}", "action", "rename_sticker", "from", from_name, "to", to);
	if (zc_json_str(attrs, "image"))
		json_object_set(*out, "image", json_object_get(attrs, "image"));
	rc = after_change(op, &v, *out, to, 0, e);
out:
	zc_free(from_name);
	zc_free(text);
	json_decref(entries);
	json_decref(node);
	return rc;
}

const struct zc_opdef zc_op_qq_rename_sticker = {"qq_rename_sticker", NULL, rename_sticker, 0};

/* ---- [[图片: …]] in a reply ----------------------------------------------------- */

/* A regular file in a real stickers/ (a planted link is no sticker). */
static int sticker_file_exists(struct zc_mem *m, const char *rel)
{
	char *full = zc_path_join(m->dir, rel);
	int ok = zc_dir_inside(m->dir, "stickers", 0, NULL) == ZCOR_OK &&
		 zc_file_kind(full) == ZC_FILE_REGULAR;
	zc_free(full);
	return ok;
}

/* The collected sticker a wrong path most likely meant: the same name with
 * another extension (敲盆.jpg for 敲盆.gif), or NULL. Caller frees. */
static char *sticker_suggestion(struct zc_mem *m, const char *path)
{
	static const char *const exts[] = {".gif", ".png", ".jpg", ".jpeg", ".webp", ".bmp"};
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	const char *dot = strrchr(base, '.');
	size_t n = dot && dot != base ? (size_t)(dot - base) : strlen(base);
	for (size_t i = 0; n && i < sizeof(exts) / sizeof(exts[0]); i++) {
		struct zc_buf b = ZC_BUF_INIT;
		zc_buf_addf(&b, "stickers/%.*s%s", (int)n, base, exts[i]);
		if (strcmp(b.p, path) != 0 && zc_sticker_path_ok(b.p) && sticker_file_exists(m, b.p))
			return zc_buf_detach(&b);
		zc_buf_release(&b);
	}
	return NULL;
}

json_t *zc_sticker_reply_report(struct zc_mem *m, const char *text)
{
	static const char open[] = "[[图片:";
	json_t *images = json_array(), *problems = json_array();
	for (const char *p = text ? strstr(text, open) : NULL; p; p = strstr(p, open)) {
		const char *s = p + strlen(open), *end = strstr(s, "]]");
		if (!end) {
			json_array_append_new(problems,
					      json_pack("{s:n, s:s}", "image", "message",
							"a '[[图片:' in the reply has no closing ']]'"));
			break;
		}
		while (s < end && (*s == ' ' || *s == '\t'))
			s++;
		const char *t = end;
		while (t > s && (t[-1] == ' ' || t[-1] == '\t'))
			t--;
		char *path = zc_strndup(s, (size_t)(t - s));
		if (zc_sticker_path_ok(path) && sticker_file_exists(m, path)) {
			json_array_append_new(images, json_string(path));
		} else {
			struct zc_buf msg = ZC_BUF_INIT;
			zc_buf_addf(&msg,
				    "[[图片: %s]] is not a collected sticker: only stickers/ files can be "
				    "sent, with their exact name and extension as listed in the sticker "
				    "catalog (STICKERS.md)",
				    path);
			char *sug = sticker_suggestion(m, path);
			json_t *pr = json_pack("{s:s, s:s}", "image", path, "message", msg.p);
			if (sug)
				json_object_set_new(pr, "suggestion", zc_json_string_own(sug));
			json_array_append_new(problems, pr);
			zc_buf_release(&msg);
		}
		zc_free(path);
		p = end + 2;
	}
	return json_pack("{s:b, s:o, s:o}", "ok", json_array_size(problems) == 0, "images", images,
			 "problems", problems);
}

int zc_sticker_check_reply(struct zc_mem *m, const char *text, struct zc_err *e)
{
	json_t *r = zc_sticker_reply_report(m, text);
	json_t *first = json_array_get(json_object_get(r, "problems"), 0);
	int rc = ZCOR_OK;
	if (first)
		rc = zc_fail(e, json_is_null(json_object_get(first, "image")) ? ZCOR_EINVAL : ZCOR_ENOTFOUND,
			     "%s", zc_json_str(first, "message"));
	json_decref(r);
	return rc;
}

/* ---- a sticker's or a cached image's bytes (the web page shows them) ---------- */

int zc_image_read(struct zc_mem *m, const char *folder, const char *file, char **data, size_t *len,
		  const char **mime, struct zc_err *e)
{
	*data = NULL;
	*len = 0;
	int sticker = strcmp(folder, "media") != 0;
	if (sticker && zc_sticker_file_check("file", file, e))
		return e->code;
	if (!sticker && !zc_image_name_ok(file))
		return zc_fail(e, ZCOR_EINVAL,
			       "'%s' is not an image file name such as <hash>.gif (gif, png, jpg, webp, bmp)",
			       ZC_Q(file, 60));
	static const struct {
		const char *ext, *mime;
	} types[] = {{".gif", "image/gif"}, {".png", "image/png"}, {".jpg", "image/jpeg"},
		     {".jpeg", "image/jpeg"}, {".webp", "image/webp"}, {".bmp", "image/bmp"}};
	*mime = "application/octet-stream";
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strcasecmp(zc_file_ext(file), types[i].ext) == 0)
			*mime = types[i].mime;
	struct zc_buf b = ZC_BUF_INIT;
	folder = sticker ? "stickers" : "media";
	int rc = zc_dir_inside(m->dir, folder, 0, e);
	zc_buf_addf(&b, "%s/%s/%s", m->dir, folder, file);
	if (!rc)
		rc = zc_read_file_nofollow(b.p, STICKER_MAX_BYTES, data, len, e);
	zc_buf_release(&b);
	return rc;
}
