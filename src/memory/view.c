/*
 * view.c — the memory files of seed 003 as views of the store (view.h).
 *
 * Memory layer. A view is rendered from rows, never stored: its sections
 * and line format are generated here, so the same store always renders
 * the same text, and text written to a view is parsed back into rows.
 * One entry is one line, `- name｜meaning｜tagged fields…`; a line that
 * does not parse is kept verbatim in view_unparsed at its position. The
 * rules about who may write which view live in qqmem.c.
 */
#include "memory/view.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "base/fs.h"
#include "base/json.h"
#include "base/timeutil.h"
#include "memory/sticker.h"
#include "text/norm.h"

#define BAR "\xef\xbd\x9c" /* ｜ U+FF5C, the field separator */

static const char *const memory_sections[] = {"人物", "惯例与偏好", "在追", "事实", NULL};
static const char *const cognition_sections[] = {"缩写", "谐音", "专名", "其它", NULL};
static const char *const sticker_sections[] = {"已收藏", "未收藏", NULL};
static const char *const people_sections[] = {"人物", NULL};

static const char *const *std_sections(enum zc_view_kind k)
{
	switch (k) {
	case ZC_VIEW_COGNITION:
		return cognition_sections;
	case ZC_VIEW_STICKERS:
		return sticker_sections;
	case ZC_VIEW_PEOPLE:
		return people_sections;
	case ZC_VIEW_MEMORY:
	case ZC_VIEW_ARCHIVE:
		return memory_sections;
	default:
		return NULL;
	}
}

static int in_list(const char *const *list, const char *s)
{
	for (; list && *list; list++)
		if (s && strcmp(*list, s) == 0)
			return 1;
	return 0;
}

/* ---- paths ------------------------------------------------------------ */

void zc_view_memory(struct zc_view *v, const char *conv)
{
	char slug[96];
	memset(v, 0, sizeof(*v));
	v->kind = ZC_VIEW_MEMORY;
	snprintf(v->conv, sizeof(v->conv), "%s", conv);
	zc_conv_slug(conv, slug, sizeof(slug));
	snprintf(v->path, sizeof(v->path), "conversations/%s/MEMORY.md", slug);
}

void zc_view_archive(struct zc_view *v, const char *conv, const char *month)
{
	char slug[96];
	memset(v, 0, sizeof(*v));
	v->kind = ZC_VIEW_ARCHIVE;
	snprintf(v->conv, sizeof(v->conv), "%s", conv);
	snprintf(v->month, sizeof(v->month), "%.7s", month);
	zc_conv_slug(conv, slug, sizeof(slug));
	snprintf(v->path, sizeof(v->path), "conversations/%s/archive/%s.md", slug, v->month);
}

static int month_ok(const char *s, size_t n)
{
	if (n != 7 || s[4] != '-')
		return 0;
	for (int i = 0; i < 7; i++)
		if (i != 4 && !isdigit((unsigned char)s[i]))
			return 0;
	int mon = (s[5] - '0') * 10 + (s[6] - '0');
	return mon >= 1 && mon <= 12;
}

#define VIEW_NAMES                                                                          \
	"INDEX.md, PEOPLE.md, COGNITION.md, STICKERS.md, conversations/<slug>/MEMORY.md or " \
	"conversations/<slug>/archive/YYYY-MM.md (slug: the conversation key with '-' for ':', " \
	"e.g. group-100000001)"

int zc_view_path(const char *path, size_t len, const char *field, struct zc_view *v,
		 struct zc_err *e)
{
	memset(v, 0, sizeof(*v));
	if (!path || !len)
		return zc_fail(e, ZCOR_EINVAL, "argument '%s': give a view path: " VIEW_NAMES, field);
	if (memchr(path, '\0', len) || strlen(path) != len)
		return zc_fail(e, ZCOR_EINVAL, "argument '%s': must not contain a NUL character", field);
	if (len >= ZC_VIEW_PATH_MAX)
		return zc_fail(e, ZCOR_EINVAL, "argument '%s': longer than %d bytes; the views are " VIEW_NAMES,
			       field, ZC_VIEW_PATH_MAX - 1);
	if (path[0] == '/' || path[0] == '~' || strchr(path, '\\') || strchr(path, ':'))
		return zc_fail(e, ZCOR_EINVAL,
			       "argument '%s': '%s' is not inside the memory; paths are relative, "
			       "such as " VIEW_NAMES,
			       field, path);
	for (const char *seg = path;;) {
		const char *end = strchr(seg, '/');
		size_t n = end ? (size_t)(end - seg) : strlen(seg);
		if (n == 0 || (n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.'))
			return zc_fail(e, ZCOR_EINVAL,
				       "argument '%s': '%s' has an empty, '.' or '..' part; paths stay "
				       "inside the memory: " VIEW_NAMES,
				       field, path);
		if (!end)
			break;
		seg = end + 1;
	}
	static const struct {
		const char *name;
		enum zc_view_kind kind;
	} roots[] = {{"INDEX.md", ZC_VIEW_INDEX},
		     {"PEOPLE.md", ZC_VIEW_PEOPLE},
		     {"COGNITION.md", ZC_VIEW_COGNITION},
		     {"STICKERS.md", ZC_VIEW_STICKERS}};
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++)
		if (strcmp(path, roots[i].name) == 0) {
			v->kind = roots[i].kind;
			snprintf(v->path, sizeof(v->path), "%s", path);
			return ZCOR_OK;
		}
	const char *pre = "conversations/";
	if (strncmp(path, pre, strlen(pre)) == 0) {
		const char *slug = path + strlen(pre), *slash = strchr(slug, '/');
		char key[96];
		size_t n = slash ? (size_t)(slash - slug) : 0;
		if (slash && n < sizeof(key)) {
			memcpy(key, slug, n);
			key[n] = '\0';
			char *d = strchr(key, '-');
			if (d)
				*d = ':';
			if (d && zc_conv_valid(key)) {
				const char *rest = slash + 1;
				if (strcmp(rest, "MEMORY.md") == 0) {
					zc_view_memory(v, key);
					return ZCOR_OK;
				}
				if (strncmp(rest, "archive/", 8) == 0 && strlen(rest) == 8 + 7 + 3 &&
				    month_ok(rest + 8, 7) && strcmp(rest + 15, ".md") == 0) {
					char month[8];
					snprintf(month, sizeof(month), "%.7s", rest + 8);
					zc_view_archive(v, key, month);
					return ZCOR_OK;
				}
			}
		}
	}
	return zc_fail(e, ZCOR_EINVAL, "argument '%s': unknown view '%s'; the views are " VIEW_NAMES,
		       field, path);
}

/* ---- entries <-> rows -------------------------------------------------- */

/* The node filter of a view: ?1 kind, ?2 scope, ?3 tier, ?4 month, ?5
 * section required. */
#define VIEW_FILTER                                                                     \
	" kind = ?1 AND superseded_by IS NULL AND scope = ?2 AND tier = ?3 AND "          \
	"(?4 IS NULL OR archive_month = ?4) AND (?5 = 0 OR section IS NOT NULL)"
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
static json_t *entry_of_node(const struct zc_view *v, const json_t *n, sqlite3_int64 seq)
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

static json_t *entry_of_person(const json_t *p, sqlite3_int64 seq)
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

/* Appends s on one line: newlines become spaces, the separator '|'. */
static void field(struct zc_buf *b, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '\n' || *s == '\r')
			zc_buf_addc(b, ' ');
		else if (strncmp(s, BAR, 3) == 0) {
			zc_buf_addc(b, '|');
			s += 2;
		} else
			zc_buf_addc(b, *s);
	}
}

static void slash_list(struct zc_buf *b, const json_t *a)
{
	size_t i;
	json_t *s;
	json_array_foreach(a, i, s) {
		if (i)
			zc_buf_addc(b, '/');
		field(b, json_string_value(s));
	}
}

static void tagged(struct zc_buf *b, const char *tag, const char *s)
{
	if (!s || !*s)
		return;
	zc_buf_adds(b, BAR);
	zc_buf_adds(b, tag);
	field(b, s);
}

static int all_digits(const char *s)
{
	if (!s || !*s)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

char *zc_view_line(const struct zc_view *v, const json_t *x)
{
	struct zc_buf b = ZC_BUF_INIT;
	zc_buf_adds(&b, "- ");
	field(&b, zc_json_str(x, "name"));
	if (v->kind == ZC_VIEW_PEOPLE) {
		const char *qq = zc_json_str(x, "qq");
		if (all_digits(qq))
			zc_buf_addf(&b, "（QQ %s）", qq);
		else if (qq && strncmp(qq, "name:", 5) != 0) {
			zc_buf_adds(&b, "（ID ");
			field(&b, qq);
			zc_buf_adds(&b, "）");
		}
		if (json_array_size(json_object_get(x, "aliases"))) {
			zc_buf_adds(&b, "（别名：");
			slash_list(&b, json_object_get(x, "aliases"));
			zc_buf_adds(&b, "）");
		}
	}
	zc_buf_adds(&b, BAR);
	field(&b, zc_json_str(x, "meaning"));
	switch (v->kind) {
	case ZC_VIEW_COGNITION:
		tagged(&b, "用法：", zc_json_str(x, "usage"));
		if (json_array_size(json_object_get(x, "variants"))) {
			zc_buf_adds(&b, BAR "变体：");
			slash_list(&b, json_object_get(x, "variants"));
		}
		break;
	case ZC_VIEW_STICKERS:
		tagged(&b, "画面：", zc_json_str(x, "picture"));
		tagged(&b, "场景：", zc_json_str(x, "scene"));
		if (json_array_size(json_object_get(x, "variants"))) {
			zc_buf_adds(&b, BAR "别名：");
			slash_list(&b, json_object_get(x, "variants"));
		}
		tagged(&b, "", zc_json_str(x, "image"));
		if (json_is_true(json_object_get(x, "stale")))
			zc_buf_adds(&b, BAR "原图已过期");
		break;
	case ZC_VIEW_PEOPLE:
		if (json_integer_value(json_object_get(x, "affinity")))
			zc_buf_addf(&b, BAR "好感 %lld",
				    (long long)json_integer_value(json_object_get(x, "affinity")));
		tagged(&b, "首见 ", zc_json_str(x, "date"));
		break;
	default:
		if (json_array_size(json_object_get(x, "aliases"))) {
			zc_buf_adds(&b, BAR "别名：");
			slash_list(&b, json_object_get(x, "aliases"));
		}
		break;
	}
	if (v->kind != ZC_VIEW_PEOPLE)
		tagged(&b, "", zc_json_str(x, "date"));
	tagged(&b, "过期 ", zc_json_str(x, "expires"));
	if (json_is_true(json_object_get(x, "pinned")))
		zc_buf_adds(&b, BAR "置顶");
	tagged(&b, "置信：", zc_json_str(x, "confidence"));
	size_t i;
	json_t *s;
	json_array_foreach(json_object_get(x, "extra"), i, s) tagged(&b, "", json_string_value(s));
	return zc_buf_detach(&b);
}

/* The section an entry is listed under. */
static const char *entry_section(const struct zc_view *v, const json_t *x)
{
	switch (v->kind) {
	case ZC_VIEW_PEOPLE:
		return "人物";
	case ZC_VIEW_STICKERS:
		return zc_json_str(x, "image") && !json_is_true(json_object_get(x, "stale")) ? "已收藏"
											   : "未收藏";
	case ZC_VIEW_COGNITION: {
		const char *t = zc_json_str(x, "type");
		return t && *t ? t : "其它";
	}
	default: {
		const char *s = zc_json_str(x, "section");
		return s && *s ? s : "事实";
	}
	}
}

/* ---- loading a view ------------------------------------------------------ */

/* The entries of v in order (each with seq, pos, id / personId). */
static int load_entries(struct zc_mem *m, const struct zc_view *v, json_t **out, struct zc_err *e)
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
			json_array_append_new(*out, entry_of_person(p, sqlite3_column_int64(st, 11)));
			json_decref(p);
		} else {
			json_t *n = zc_node_from_row(st);
			json_array_append_new(*out, entry_of_node(v, n, sqlite3_column_int64(st, 25)));
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

static int index_text(struct zc_mem *m, char **text, sqlite3_int64 *seq, struct zc_err *e)
{
	*text = NULL;
	if (seq)
		*seq = 0;
	sqlite3_stmt *st = zc_stmt(&m->store,
				   "SELECT content, seq FROM nodes WHERE kind = 'document' AND title = "
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

struct rline {
	double pos;
	size_t order;
	const char *section; /* borrowed from the JSON */
	char *text;
	const json_t *src;   /* entry or unparsed record */
	int unparsed;
};

static int by_pos(const void *a, const void *b)
{
	const struct rline *x = a, *y = b;
	if (x->pos != y->pos)
		return x->pos < y->pos ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static const char *view_title(const struct zc_view *v, struct zc_buf *b)
{
	switch (v->kind) {
	case ZC_VIEW_PEOPLE:
		return "# PEOPLE.md — 人物（全局，QQ 号为主键）";
	case ZC_VIEW_COGNITION:
		return "# COGNITION.md — 语言梗 / 黑话（全局，只有语言）";
	case ZC_VIEW_STICKERS:
		return "# STICKERS.md — 表情包目录（全局）";
	case ZC_VIEW_MEMORY:
		zc_buf_addf(b, "# MEMORY.md — %s", v->conv);
		return zc_buf_str(b);
	case ZC_VIEW_ARCHIVE:
		zc_buf_addf(b, "# archive/%s.md — %s（冷层，不进提示词）", v->month, v->conv);
		return zc_buf_str(b);
	default:
		return "";
	}
}

int zc_view_render(struct zc_mem *m, const struct zc_view *v, char **text, json_t **entries_out,
		   json_t **unparsed_out, struct zc_err *e)
{
	json_t *entries = NULL, *unparsed = NULL, *secs = NULL;
	struct rline *lines = NULL;
	size_t n = 0;
	struct zc_buf out = ZC_BUF_INIT, tb = ZC_BUF_INIT;
	int rc;
	*text = NULL;
	if (entries_out)
		*entries_out = json_array();
	if (unparsed_out)
		*unparsed_out = json_array();
	if (v->kind == ZC_VIEW_INDEX)
		return index_text(m, text, NULL, e);
	if ((rc = load_entries(m, v, &entries, e)) || (rc = load_unparsed(m, v, &unparsed, e)))
		goto out;
	size_t ne = json_array_size(entries), nu = json_array_size(unparsed);
	lines = zc_calloc(ne + nu + 1, sizeof(*lines));
	size_t i;
	json_t *x;
	json_array_foreach(entries, i, x) {
		lines[n] = (struct rline){json_number_value(json_object_get(x, "pos")), n,
					  entry_section(v, x), zc_view_line(v, x), x, 0};
		n++;
	}
	json_array_foreach(unparsed, i, x) {
		lines[n] = (struct rline){json_number_value(json_object_get(x, "pos")), n,
					  zc_json_str(x, "section"), zc_strdup(zc_json_str(x, "text")), x, 1};
		n++;
	}
#define UNPARSED_REF(l) \
	json_pack("{s:I, s:s, s:O}", "line", (json_int_t)lineno, "text", (l).text, "useq", \
		  json_object_get((l).src, "useq"))
	qsort(lines, n, sizeof(*lines), by_pos);
	/* sections: the standard ones always, in their order; others in the
	 * order they first appear */
	secs = json_array();
	for (const char *const *s = std_sections(v->kind); s && *s; s++)
		json_array_append_new(secs, json_string(*s));
	for (i = 0; i < n; i++) {
		const char *s = lines[i].section;
		if (!s)
			continue;
		int seen = 0;
		size_t j;
		json_t *y;
		json_array_foreach(secs, j, y) seen |= strcmp(json_string_value(y), s) == 0;
		if (!seen)
			json_array_append_new(secs, json_string(s));
	}
	long lineno = 1;
	zc_buf_addf(&out, "%s\n\n", view_title(v, &tb));
	lineno += 2;
	int any_loose = 0;
	for (i = 0; i < n; i++)
		if (!lines[i].section) {
			zc_buf_addf(&out, "%s\n", lines[i].text);
			if (unparsed_out)
				json_array_append_new(*unparsed_out, UNPARSED_REF(lines[i]));
			lineno++;
			any_loose = 1;
		}
	if (any_loose) {
		zc_buf_addc(&out, '\n');
		lineno++;
	}
	size_t si;
	json_t *sj;
	json_array_foreach(secs, si, sj) {
		const char *sec = json_string_value(sj);
		if (si) {
			zc_buf_addc(&out, '\n');
			lineno++;
		}
		zc_buf_addf(&out, "## %s\n", sec);
		lineno++;
		for (i = 0; i < n; i++) {
			if (!lines[i].section || strcmp(lines[i].section, sec) != 0)
				continue;
			zc_buf_addf(&out, "%s\n", lines[i].text);
			if (lines[i].unparsed && unparsed_out)
				json_array_append_new(*unparsed_out, UNPARSED_REF(lines[i]));
			if (!lines[i].unparsed && entries_out) {
				const json_t *src = lines[i].src;
				json_t *ref = json_pack("{s:O, s:I, s:O}", "name",
							json_object_get(src, "name"), "line",
							(json_int_t)lineno, "seq", json_object_get(src, "seq"));
				if (json_object_get(src, "id"))
					json_object_set(ref, "id", json_object_get(src, "id"));
				if (json_object_get(src, "personId"))
					json_object_set(ref, "personId", json_object_get(src, "personId"));
				if (json_object_get(src, "date"))
					json_object_set(ref, "date", json_object_get(src, "date"));
				json_array_append_new(*entries_out, ref);
			}
			lineno++;
		}
	}
	*text = zc_buf_detach(&out);
out:
	for (i = 0; i < n; i++)
		zc_free(lines[i].text);
	zc_free(lines);
	zc_buf_release(&out);
	zc_buf_release(&tb);
	json_decref(entries);
	json_decref(unparsed);
	json_decref(secs);
	return rc;
}

int zc_view_count(struct zc_mem *m, const struct zc_view *v, long long *count, struct zc_err *e)
{
	*count = 0;
	if (v->kind == ZC_VIEW_INDEX) {
		char *t = NULL;
		int rc = index_text(m, &t, NULL, e);
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
	int rc = load_entries(m, v, &a, e);
	if (!rc)
		rc = load_unparsed(m, v, &u, e);
	if (!rc)
		*count = (long long)(json_array_size(a) + json_array_size(u));
	json_decref(a);
	json_decref(u);
	return rc;
}

/* ---- parsing --------------------------------------------------------------- */

static int is_date(const char *s)
{
	if (strlen(s) != 10 || s[4] != '-' || s[7] != '-')
		return 0;
	for (int i = 0; i < 10; i++)
		if (i != 4 && i != 7 && !isdigit((unsigned char)s[i]))
			return 0;
	return 1;
}

static json_t *split_list(const char *s)
{
	json_t *a = json_array();
	while (s && *s) {
		const char *end = s;
		while (*end && *end != '/' && *end != ',' && strncmp(end, "、", 3) != 0 &&
		       strncmp(end, "，", 3) != 0)
			end++;
		char *t = zc_strndup_trim(s, (size_t)(end - s));
		if (*t)
			json_array_append_new(a, zc_json_string_own(t));
		else
			zc_free(t);
		if (!*end)
			break;
		s = end + (*end == '/' || *end == ',' ? 1 : 3);
	}
	return a;
}

static int has_image_ext(const char *s, size_t n)
{
	static const char *const exts[] = {".gif", ".png", ".jpg", ".jpeg", ".webp", ".bmp"};
	for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
		size_t k = strlen(exts[i]);
		if (n >= k && strncasecmp(s + n - k, exts[i], k) == 0)
			return 1;
	}
	return 0;
}

int zc_image_name_ok(const char *file)
{
	return file && *file && !strchr(file, '/') && !strchr(file, '\\') && file[0] != '.' &&
	       has_image_ext(file, strlen(file));
}

const char *zc_media_file(const char *path)
{
	if (path && strncmp(path, "media/", 6) == 0)
		return path + 6;
	if (path && strncmp(path, ".qq-media/", 10) == 0)
		return path + 10;
	return NULL;
}

/* A file path in s: a media or sticker directory, or a token with a '/'
 * that ends in an image extension. */
int zc_has_file_path(const char *s)
{
	if (!s)
		return 0;
	if (strstr(s, ".qq-media") || strstr(s, ".qq-stickers") || strstr(s, "media/") ||
	    strstr(s, "stickers/"))
		return 1;
	for (const char *p = s; *p;) {
		while (*p && isspace((unsigned char)*p))
			p++;
		const char *t = p;
		while (*p && !isspace((unsigned char)*p))
			p++;
		if (memchr(t, '/', (size_t)(p - t)) && has_image_ext(t, (size_t)(p - t)))
			return 1;
	}
	return 0;
}

/* Does segment s look like an image path of a sticker or the media cache? */
static int is_image_path(const char *s)
{
	return !strchr(s, ' ') && (strncmp(s, "stickers/", 9) == 0 || strncmp(s, ".qq-stickers/", 13) == 0 ||
				   strncmp(s, "media/", 6) == 0 || strncmp(s, ".qq-media/", 10) == 0 ||
				   (strchr(s, '/') && has_image_ext(s, strlen(s))));
}

static int starts(const char *s, const char *p, const char **rest)
{
	size_t n = strlen(p);
	if (strncmp(s, p, n) != 0)
		return 0;
	*rest = s + n;
	return 1;
}

/* Pulls "（TAG…）" out of head into *val (caller frees); returns 1 if found. */
static int take_paren(char *head, const char *tag, char **val)
{
	char *a = strstr(head, tag);
	if (!a)
		return 0;
	char *b = strstr(a, "）");
	if (!b)
		return 0;
	const char *v0 = a + strlen(tag);
	*val = zc_strndup_trim(v0, (size_t)(b - v0));
	memmove(a, b + 3, strlen(b + 3) + 1);
	return 1;
}

/* A person's line renders as name（QQ n）or（ID id）（别名：…）: a name that
 * still holds one of those tags, or an id with a bracket, would render as
 * a line that parses as another person (found by fuzz_views), so such a
 * line is no entry — it is kept as written. */
static int person_line_ok(const char *name, const char *qq)
{
	static const char *const tags[] = {"（QQ ", "（QQ：", "（ID ", "（别名："};
	for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++)
		if (strstr(name, tags[i]))
			return 0;
	return !qq || (!strstr(qq, "（") && !strstr(qq, "）"));
}

static json_t *parse_fields(const struct zc_view *v, const char *section, const char *s);

/* Parses the part of an entry line after "- "; NULL if it is not one. */
static json_t *parse_entry(const struct zc_view *v, const char *section, const char *line)
{
	/* a carriage return inside the line renders as a space (field()):
	 * read it as one, or the entry would not read back as itself (found
	 * by fuzz_views) */
	char *s = zc_strdup(line);
	for (char *c = s; (c = strchr(c, '\r'));)
		*c = ' ';
	json_t *x = parse_fields(v, section, s);
	zc_free(s);
	return x;
}

static json_t *parse_fields(const struct zc_view *v, const char *section, const char *s)
{
	json_t *segs = json_array();
	const char *p = s;
	for (;;) {
		const char *b = strstr(p, BAR);
		size_t n = b ? (size_t)(b - p) : strlen(p);
		json_array_append_new(segs, zc_json_string_own(zc_strndup_trim(p, n)));
		if (!b)
			break;
		p = b + 3;
	}
	if (json_array_size(segs) < 2) {
		/* "name：meaning" written by hand */
		const char *c = strstr(s, "：");
		json_array_clear(segs);
		if (!c) {
			json_decref(segs);
			return NULL;
		}
		json_array_append_new(segs, zc_json_string_own(zc_strndup_trim(s, (size_t)(c - s))));
		json_array_append_new(segs, zc_json_string_own(zc_strndup_trim(c + 3, strlen(c + 3))));
	}
	char *head = zc_strdup(json_string_value(json_array_get(segs, 0)));
	json_t *x = json_object();
	if (v->kind == ZC_VIEW_PEOPLE) {
		char *val = NULL;
		if (take_paren(head, "（QQ ", &val) || take_paren(head, "（QQ：", &val) ||
		    take_paren(head, "（ID ", &val))
			json_object_set_new(x, "qq", zc_json_string_own(val));
		val = NULL;
		if (take_paren(head, "（别名：", &val)) {
			json_object_set_new(x, "aliases", split_list(val));
			zc_free(val);
		}
	}
	char *name = zc_strndup_trim(head, strlen(head));
	zc_free(head);
	if (v->kind == ZC_VIEW_PEOPLE && !person_line_ok(name, zc_json_str(x, "qq"))) {
		zc_free(name);
		json_decref(x);
		json_decref(segs);
		return NULL;
	}
	if (!*name) {
		zc_free(name);
		json_decref(x);
		json_decref(segs);
		return NULL;
	}
	json_object_set_new(x, "name", zc_json_string_own(name));
	json_object_set(x, "meaning", json_array_get(segs, 1));
	json_t *extra = json_array();
	for (size_t i = 2; i < json_array_size(segs); i++) {
		const char *t = json_string_value(json_array_get(segs, i)), *r;
		if (!*t)
			continue;
		if (starts(t, "用法：", &r))
			json_object_set_new(x, "usage", json_string(r));
		else if (starts(t, "变体：", &r))
			json_object_set_new(x, "variants", split_list(r));
		else if (starts(t, "别名：", &r))
			json_object_set_new(x, v->kind == ZC_VIEW_STICKERS ? "variants" : "aliases",
					    split_list(r));
		else if (starts(t, "场景：", &r))
			json_object_set_new(x, "scene", json_string(r));
		else if (starts(t, "画面：", &r))
			json_object_set_new(x, "picture", json_string(r));
		else if (starts(t, "置信：", &r))
			json_object_set_new(x, "confidence", json_string(r));
		else if (starts(t, "过期 ", &r) || starts(t, "过期：", &r))
			json_object_set_new(x, "expires", json_string(r));
		/* a date renders bare (PEOPLE: after 首见): anything else would not
		 * read back as one (found by fuzz_views), so it stays as written */
		else if ((starts(t, "首见 ", &r) || starts(t, "首见：", &r)) && is_date(r))
			json_object_set_new(x, "date", json_string(r));
		else if (starts(t, "好感 ", &r) || starts(t, "好感：", &r))
			json_object_set_new(x, "affinity", json_integer(strtol(r, NULL, 10)));
		else if (strcmp(t, "置顶") == 0)
			json_object_set_new(x, "pinned", json_true());
		else if (strcmp(t, "原图已过期") == 0)
			json_object_set_new(x, "stale", json_true());
		else if (is_date(t) && !json_object_get(x, "date"))
			json_object_set_new(x, "date", json_string(t));
		else if (v->kind == ZC_VIEW_STICKERS && is_image_path(t) && !json_object_get(x, "image"))
			/* the seed kept collected stickers in .qq-stickers/ */
			json_object_set_new(x, "image", strncmp(t, ".qq-stickers/", 13) == 0
								 ? json_sprintf("stickers/%s", t + 13)
								 : json_string(t));
		else
			json_array_append_new(extra, json_string(t));
	}
	if (json_array_size(extra))
		json_object_set(x, "extra", extra);
	json_decref(extra);
	if (section && v->kind == ZC_VIEW_COGNITION)
		json_object_set_new(x, "type", json_string(section));
	else if (section && (v->kind == ZC_VIEW_MEMORY || v->kind == ZC_VIEW_ARCHIVE))
		json_object_set_new(x, "section", json_string(section));
	json_decref(segs);
	return x;
}

/* The identity of an entry within its view: the QQ number of a person,
 * else the normalised name. Caller frees. */
static char *entry_key(const struct zc_view *v, const json_t *x)
{
	const char *qq = zc_json_str(x, "qq");
	struct zc_buf b = ZC_BUF_INIT;
	if (v->kind == ZC_VIEW_PEOPLE && qq && *qq && strncmp(qq, "name:", 5) != 0)
		zc_buf_addf(&b, "qq:%s", qq);
	else {
		char *n = zc_norm(zc_json_str(x, "name"));
		zc_buf_addf(&b, "name:%s", n);
		zc_free(n);
	}
	return zc_buf_detach(&b);
}

/* A line kept verbatim: {text, pos, section?, why}; only the line end is
 * trimmed. */
static json_t *kept_line(const char *raw, size_t n, double pos, const char *section, const char *why)
{
	while (n && (raw[n - 1] == ' ' || raw[n - 1] == '\t' || raw[n - 1] == '\r'))
		n--;
	json_t *u = json_pack("{s:s%, s:f, s:s}", "text", raw, n, "pos", pos, "why", why);
	if (section)
		json_object_set_new(u, "section", json_string(section));
	return u;
}

static int by_unparsed_pos(const void *a, const void *b)
{
	double x = json_number_value(json_object_get(*(json_t *const *)a, "pos")),
	       y = json_number_value(json_object_get(*(json_t *const *)b, "pos"));
	return x < y ? -1 : x > y;
}

/* The kept lines in the order they were written (a line demoted by a later
 * one of the same name was added to the list late). */
static void sort_by_pos(json_t *arr)
{
	size_t n = json_array_size(arr);
	json_t **v = zc_calloc(n + 1, sizeof(*v));
	for (size_t i = 0; i < n; i++)
		v[i] = json_incref(json_array_get(arr, i));
	qsort(v, n, sizeof(*v), by_unparsed_pos);
	json_array_clear(arr);
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, v[i]);
	zc_free(v);
}

/*
 * The normalisation of a written text (seed 003): duplicate headings are
 * merged, identical lines (within a section) removed, and the file's title
 * replaced by the rendered one. The title is the first non-empty line when
 * it is a "# …" heading, whatever its text: rendering generates the view's
 * own (the old plugin wrote its own titles, e.g. "# 公共认知"); a title
 * other than the rendered one is reported as doc.titleReplaced. Nothing
 * else is dropped: a line that is not an entry, a later "# …" heading, and
 * an earlier line whose name appears again below (the last one is the
 * entry, at its own place) are kept verbatim as unparsed lines, each with
 * the reason.
 */
json_t *zc_view_parse(const struct zc_view *v, const char *text)
{
	json_t *doc = json_pack("{s:[], s:[], s:i}", "entries", "unparsed", "duplicates", 0);
	if (v->kind == ZC_VIEW_INDEX) {
		json_object_set_new(doc, "text", json_string(text ? text : ""));
		return doc;
	}
	json_t *entries = json_object_get(doc, "entries"), *unparsed = json_object_get(doc, "unparsed");
	/* seen: entry key -> {entry, raw, section}; seen_lines: section + line */
	json_t *seen = json_object(), *seen_lines = json_object(), *headings = json_object();
	char *section = NULL, *title = NULL;
	long dups = 0;
	double pos = 0;
	int first = 1;
	for (const char *p = text ? text : ""; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		char *line = zc_strndup_trim(p, n);
		const char *raw = p;
		p = nl ? nl + 1 : p + n;
		pos += 1;
		if (!*line) {
			zc_free(line);
			continue;
		}
		int h1 = line[0] == '#' && line[1] == ' ';
		if (h1 && (first || (title && strcmp(line, title) == 0))) {
			if (title) {
				dups++; /* the title again */
			} else {
				struct zc_buf tb = ZC_BUF_INIT;
				title = zc_strdup(line);
				if (strcmp(title, view_title(v, &tb)) != 0)
					json_object_set_new(doc, "titleReplaced", json_string(title));
				zc_buf_release(&tb);
			}
			first = 0;
			zc_free(line);
			continue;
		}
		first = 0;
		if (strncmp(line, "## ", 3) == 0) {
			zc_free(section);
			section = zc_strndup_trim(line + 3, strlen(line + 3));
			if ((v->kind == ZC_VIEW_MEMORY || v->kind == ZC_VIEW_ARCHIVE) &&
			    strcmp(section, "人") == 0) {
				zc_free(section);
				section = zc_strdup("人物");
			}
			if (json_object_get(headings, section))
				dups++;
			json_object_set_new(headings, section, json_true());
			zc_free(line);
			continue;
		}
		struct zc_buf k = ZC_BUF_INIT;
		zc_buf_addf(&k, "%s\n%s", section ? section : "", line);
		int identical = json_object_get(seen_lines, k.p) != NULL;
		json_object_set_new(seen_lines, k.p, json_true());
		zc_buf_release(&k);
		if (identical) {
			dups++;
			zc_free(line);
			continue;
		}
		json_t *x = NULL;
		if (!h1 && (line[0] == '-' || line[0] == '*') && line[1] == ' ')
			x = parse_entry(v, section, line + 2);
		if (!x) {
			json_array_append_new(
				unparsed,
				kept_line(raw, n, pos, section,
					  h1 ? "a level-1 heading after the file's title: kept as written"
					     : "not an entry (- name｜meaning…): kept as written"));
			zc_free(line);
			continue;
		}
		char *key = entry_key(v, x);
		json_t *old = json_object_get(seen, key);
		if (old) { /* same name again: the later line is the entry */
			json_t *oe = json_object_get(old, "entry");
			for (size_t i = 0; i < json_array_size(entries); i++)
				if (json_array_get(entries, i) == oe) {
					json_array_remove(entries, i);
					break;
				}
			const char *ot = zc_json_str(old, "raw");
			json_array_append_new(
				unparsed, kept_line(ot, strlen(ot), json_number_value(json_object_get(old, "pos")),
						    zc_json_str(old, "section"),
						    "an entry of the same name follows: the later line is "
						    "the entry, this one is kept as written"));
		}
		json_object_set_new(x, "pos", json_real(pos));
		json_array_append(entries, x);
		json_t *rec = json_pack("{s:O, s:s%, s:f}", "entry", x, "raw", raw, n, "pos", pos);
		if (section)
			json_object_set_new(rec, "section", json_string(section));
		json_object_set_new(seen, key, rec);
		zc_free(key);
		json_decref(x);
		zc_free(line);
	}
	zc_free(section);
	zc_free(title);
	sort_by_pos(unparsed);
	json_object_set_new(doc, "duplicates", json_integer(dups));
	json_decref(seen);
	json_decref(seen_lines);
	json_decref(headings);
	return doc;
}

/* ---- checking an entry --------------------------------------------------- */

static int one_line_field(const json_t *fields, const char *k, int required, json_t *x,
			  struct zc_err *e)
{
	json_t *v = json_object_get(fields, k);
	if (!v || json_is_null(v)) {
		if (required)
			return zc_fail(e, ZCOR_EINVAL, "argument '%s': required for this view", k);
		return ZCOR_OK;
	}
	if (!json_is_string(v))
		return zc_fail(e, ZCOR_EINVAL, "argument '%s': must be a string", k);
	const char *s = json_string_value(v);
	if (strchr(s, '\n') || strchr(s, '\r') || strstr(s, BAR))
		return zc_fail(e, ZCOR_EINVAL,
			       "argument '%s': must be one line without '｜' (the field separator of "
			       "the view)",
			       k);
	if (zc_utf8_len(s) > ZC_FIELD_MAX)
		return zc_fail(e, ZCOR_EINVAL, "argument '%s': longer than %d characters", k, ZC_FIELD_MAX);
	char *t = zc_strndup_trim(s, strlen(s));
	if (required && !*t) {
		zc_free(t);
		return zc_fail(e, ZCOR_EINVAL, "argument '%s': must not be empty", k);
	}
	json_object_set_new(x, k, zc_json_string_own(t));
	return ZCOR_OK;
}

static int list_field(const json_t *fields, const char *k, json_t *x, struct zc_err *e)
{
	json_t *v = json_object_get(fields, k);
	if (!v || json_is_null(v))
		return ZCOR_OK;
	json_t *a;
	if (json_is_string(v))
		a = split_list(json_string_value(v));
	else if (json_is_array(v))
		a = json_deep_copy(v);
	else
		return zc_fail(e, ZCOR_EINVAL, "argument '%s': a list such as \"a/b\" or [\"a\", \"b\"]", k);
	size_t i;
	json_t *s;
	json_array_foreach(a, i, s) {
		const char *t = json_string_value(s);
		if (!t || !*t || strchr(t, '/') || strstr(t, BAR) || strchr(t, '\n') || zc_utf8_len(t) > 200) {
			json_decref(a);
			return zc_fail(e, ZCOR_EINVAL,
				       "argument '%s': each item is a non-empty line of at most 200 "
				       "characters without '/' or '｜'",
				       k);
		}
	}
	if (json_array_size(a) > 50) {
		json_decref(a);
		return zc_fail(e, ZCOR_EINVAL, "argument '%s': at most 50 items", k);
	}
	json_object_set_new(x, k, a);
	return ZCOR_OK;
}

static int date_field(json_t *x, const char *k, struct zc_err *e)
{
	const char *d = zc_json_str(x, k);
	if (d && *d && !is_date(d))
		return zc_fail(e, ZCOR_EINVAL, "argument '%s': a date as YYYY-MM-DD, e.g. 2026-10-18", k);
	return ZCOR_OK;
}

/* stickers/<name>.<ext> (the old .qq-stickers/ prefix is accepted). */
static int sticker_image(struct zc_mem *m, json_t *x, struct zc_err *e)
{
	const char *img = zc_json_str(x, "image");
	if (!img || !*img) /* "" takes the image away (未收藏) */
		return ZCOR_OK;
	if (zc_media_file(img))
		return zc_fail(e, ZCOR_EINVAL,
			       "argument 'image': '%s' is in the inbound media cache, which forgets "
			       "old files; collect it first with qq_save_sticker, then use the "
			       "stickers/ path it returns",
			       img);
	char *path = NULL;
	if (strncmp(img, ".qq-stickers/", 13) == 0) {
		struct zc_buf b = ZC_BUF_INIT;
		zc_buf_addf(&b, "stickers/%s", img + 13);
		path = zc_buf_detach(&b);
	} else {
		path = zc_strdup(img);
	}
	int rc = zc_sticker_path_check("image", path, e);
	if (rc) {
		zc_free(path);
		return rc;
	}
	char *full = zc_path_join(m->dir, path);
	int exists = zc_file_exists(full);
	zc_free(full);
	if (!exists) {
		rc = zc_fail(e, ZCOR_ENOTFOUND,
				 "argument 'image': there is no file '%s'; save the image with "
				 "qq_save_sticker first (the path keeps its extension)",
				 path);
		zc_free(path);
		return rc;
	}
	json_object_set_new(x, "image", zc_json_string_own(path));
	return ZCOR_OK;
}

int zc_view_entry_check(struct zc_mem *m, const struct zc_view *v, const json_t *f, json_t **out,
			struct zc_err *e)
{
	json_t *x = json_object();
	int rc = ZCOR_OK;
	*out = NULL;
	if (v->kind == ZC_VIEW_INDEX) {
		rc = zc_fail(e, ZCOR_EINVAL,
			     "argument 'path': INDEX.md is free text without entries; use write or "
			     "append");
		goto out;
	}
	if ((rc = one_line_field(f, "name", 1, x, e)) || (rc = one_line_field(f, "meaning", 0, x, e)) ||
	    (rc = one_line_field(f, "date", 0, x, e)) || (rc = date_field(x, "date", e)) ||
	    (rc = one_line_field(f, "confidence", 0, x, e)))
		goto out;
	const char *conf = zc_json_str(x, "confidence");
	if (conf && strcmp(conf, "确认") != 0 && strcmp(conf, "存疑") != 0) {
		rc = zc_fail(e, ZCOR_EINVAL, "argument 'confidence': 确认 or 存疑");
		goto out;
	}
	json_t *pinned = json_object_get(f, "pinned");
	if (pinned && !json_is_boolean(pinned)) {
		rc = zc_fail(e, ZCOR_EINVAL, "argument 'pinned': true or false");
		goto out;
	}
	if (json_is_true(pinned))
		json_object_set_new(x, "pinned", json_true());
	else if (json_is_false(pinned))
		json_object_set_new(x, "pinned", json_false());
	switch (v->kind) {
	case ZC_VIEW_PEOPLE:
		if ((rc = one_line_field(f, "qq", 0, x, e)) || (rc = list_field(f, "aliases", x, e)))
			goto out;
		if (zc_json_str(x, "qq") && !all_digits(zc_json_str(x, "qq"))) {
			rc = zc_fail(e, ZCOR_EINVAL, "argument 'qq': the QQ number, digits only");
			goto out;
		}
		break;
	case ZC_VIEW_COGNITION:
		if ((rc = one_line_field(f, "usage", 0, x, e)) || (rc = one_line_field(f, "type", 0, x, e)) ||
		    (rc = list_field(f, "variants", x, e)))
			goto out;
		if (zc_json_str(x, "type") && !in_list(cognition_sections, zc_json_str(x, "type"))) {
			rc = zc_fail(e, ZCOR_EINVAL, "argument 'type': one of 缩写, 谐音, 专名, 其它");
			goto out;
		}
		break;
	case ZC_VIEW_STICKERS:
		if ((rc = zc_sticker_name_check("name", zc_json_str(x, "name"), e)) ||
		    (rc = one_line_field(f, "scene", 0, x, e)) || (rc = one_line_field(f, "image", 0, x, e)) ||
		    (rc = one_line_field(f, "picture", 0, x, e)) || (rc = list_field(f, "variants", x, e)) ||
		    (rc = sticker_image(m, x, e)))
			goto out;
		break;
	default:
		if ((rc = one_line_field(f, "section", 0, x, e)) || (rc = list_field(f, "aliases", x, e)) ||
		    (rc = one_line_field(f, "expires", 0, x, e)) || (rc = date_field(x, "expires", e)))
			goto out;
		if (zc_json_str(x, "section") && zc_utf8_len(zc_json_str(x, "section")) > 20) {
			rc = zc_fail(e, ZCOR_EINVAL,
				     "argument 'section': a short heading such as 人物, 惯例与偏好, 在追 or 事实");
			goto out;
		}
		break;
	}
	if (v->kind == ZC_VIEW_COGNITION) {
		const char *keys[] = {"name", "meaning", "usage"};
		for (size_t i = 0; i < 3; i++)
			if (zc_has_file_path(zc_json_str(x, keys[i]))) {
				rc = zc_fail(e, ZCOR_EINVAL,
					     "argument '%s': COGNITION.md holds words only, never a file "
					     "path; an image goes to STICKERS.md (qq_save_sticker, then "
					     "upsert STICKERS.md)",
					     keys[i]);
				goto out;
			}
		size_t i;
		json_t *s;
		json_array_foreach(json_object_get(x, "variants"), i, s) if (zc_has_file_path(json_string_value(s)))
		{
			rc = zc_fail(e, ZCOR_EINVAL,
				     "argument 'variants': COGNITION.md holds words only, never a file path");
			goto out;
		}
	}
	*out = x;
	x = NULL;
out:
	json_decref(x);
	return rc;
}

int zc_view_text_breaks_rule(const struct zc_view *v, const char *text)
{
	if (v->kind == ZC_VIEW_COGNITION)
		return zc_has_file_path(text);
	if (v->kind == ZC_VIEW_STICKERS)
		return text && (strstr(text, ".qq-media") || strstr(text, "media/"));
	return 0;
}

int zc_view_entry_breaks_rule(const struct zc_view *v, const json_t *entry)
{
	char *line = zc_view_line(v, entry);
	int bad = zc_view_text_breaks_rule(v, line) ||
		  (v->kind == ZC_VIEW_COGNITION && json_object_get(entry, "image"));
	zc_free(line);
	return bad;
}

int zc_view_entry_confined(const struct zc_view *v, const json_t *entry, struct zc_err *e)
{
	if (v->kind != ZC_VIEW_STICKERS)
		return ZCOR_OK;
	int rc = zc_sticker_name_check("name", zc_json_str(entry, "name"), e);
	if (!rc && zc_json_str(entry, "image"))
		rc = zc_sticker_path_check("image", zc_json_str(entry, "image"), e);
	return rc;
}

int zc_view_doc_check(const struct zc_view *v, const json_t *doc, struct zc_err *e)
{
	const char *why = v->kind == ZC_VIEW_COGNITION
				  ? "COGNITION.md holds words only; images go to STICKERS.md"
				  : "it points into the media cache; collect the image with qq_save_sticker "
				    "first and use its stickers/ path";
	size_t i;
	json_t *x;
	json_array_foreach(json_object_get(doc, "entries"), i, x) {
		if (zc_view_entry_breaks_rule(v, x))
			return zc_fail(e, ZCOR_EINVAL, "argument 'content': the entry '%s' has a file path: %s",
				       zc_json_str(x, "name"), why);
		if (zc_view_entry_confined(v, x, e))
			return zc_err_prefix(e, "argument 'content', line %.0f: nothing was written",
					     json_number_value(json_object_get(x, "pos")));
	}
	json_array_foreach(json_object_get(doc, "unparsed"), i, x) {
		if (zc_view_text_breaks_rule(v, zc_json_str(x, "text")))
			return zc_fail(e, ZCOR_EINVAL, "argument 'content': the line '%s' has a file path: %s",
				       ZC_Q(zc_json_str(x, "text"), 80), why);
	}
	return ZCOR_OK;
}

/* ---- changing a view ------------------------------------------------------- */

static json_t *find_node(struct zc_op *op, const struct zc_view *v, const char *name,
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

static json_t *find_person(struct zc_op *op, const json_t *x, struct zc_err *e)
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

static double max_pos(struct zc_op *op, const struct zc_view *v, struct zc_err *e)
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

static json_t *new_node(struct zc_op *op, const struct zc_view *v, struct zc_err *e)
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
	if (d && is_date(d))
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

int zc_view_upsert(struct zc_op *op, const struct zc_view *v, const json_t *x, int *created,
		   struct zc_err *e)
{
	int rc;
	zc_err_clear(e);
	if (v->kind == ZC_VIEW_PEOPLE) {
		json_t *p = find_person(op, x, e);
		if (e->code)
			return e->code;
		*created = !p;
		rc = save_person_entry(op, p, x, 0, e);
		json_decref(p);
		return rc;
	}
	json_t *n = find_node(op, v, zc_json_str(x, "name"), e);
	if (e->code)
		return e->code;
	*created = !n;
	double pos = 0;
	if (!n) {
		pos = max_pos(op, v, e) + 1;
		if (!(n = new_node(op, v, e)))
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
	sqlite3_int64 seq = 0;
	int rc = index_text(op->m, &old, &seq, e);
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
		if (!(n = new_node(op, &iv, e))) {
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
	int rc = load_entries(op->m, v, &cur, e);
	double after_all = base;
	size_t i, j;
	json_t *x, *u;
	json_array_foreach(cur, i, x) {
		char *k = entry_key(v, x);
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
		json_t *same = (line[0] == '-' || line[0] == '*') && line[1] == ' ' ? parse_entry(v, sec, line + 2)
										   : NULL;
		char *key = same ? entry_key(v, same) : NULL;
		const json_t *next = NULL, *entry = NULL; /* the stored entries after it: next, its own */
		json_array_foreach(entries, j, x) { /* in the order written */
			if (json_number_value(json_object_get(x, "pos")) <= at)
				continue;
			char *k = entry_key(v, x);
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
			const char *esec = entry_section(v, entry);
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
	if ((rc = load_entries(op->m, v, &cur, e)))
		goto out;
	size_t i;
	json_t *x;
	json_t *by_key = json_object();
	json_array_foreach(cur, i, x) {
		char *k = entry_key(v, x);
		json_object_set(by_key, k, x);
		zc_free(k);
	}
	json_array_foreach(json_object_get(doc, "entries"), i, x) {
		char *k = entry_key(v, x);
		json_t *old = json_object_get(by_key, k);
		json_object_set_new(keep, k, json_true());
		zc_free(k);
		if (v->kind == ZC_VIEW_PEOPLE) {
			json_t *p = find_person(op, x, e);
			if (e->code) {
				json_decref(p);
				rc = e->code;
				break;
			}
			if (p) { /* found by name: its own key stays too */
				json_t *pe = entry_of_person(p, 0);
				char *pk = entry_key(v, pe);
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
			else if (!(n = new_node(op, v, e)))
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
		char *k = entry_key(v, x);
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
	double base = max_pos(op, v, e);
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
			json_t *old = find_node(op, v, zc_json_str(y, "name"), e);
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

/* ---- versions, citations, limits --------------------------------------------- */

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

long zc_view_rollover_threshold(struct zc_mem *m)
{
	zc_config_refresh(&m->conf);
	const struct zc_config *cfg = &m->conf.cfg;
	return (long)((double)cfg->memory_file_max_bytes * cfg->memory_archive_ratio);
}

long zc_view_limit(struct zc_mem *m, const struct zc_view *v)
{
	zc_config_refresh(&m->conf);
	return v->kind == ZC_VIEW_MEMORY ? m->conf.cfg.memory_file_max_bytes : m->conf.cfg.view_max_bytes;
}

/* ---- rollover (Q-ROLL) ---------------------------------------------------- */

/*
 * Q-ROLL's "least active": seed 003 orders by 最近没被命中、事实日期最旧、
 * 文件位置最靠前 — not hit recently, then the oldest fact date, then the
 * earliest position. Recency is the local day of the last hit (never hit
 * is oldest); the lifetime hit count does not enter: nine hits a year ago
 * are less recent than one yesterday. Within one day the fact date and
 * the position decide.
 */
struct cand {
	json_t *x;          /* entry (borrowed) */
	char last_day[16];  /* local date of the last hit, "" never */
	char date[16];      /* effective fact date, "" none */
	double pos;
	size_t bytes;
};

static int by_activity(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	int d = strcmp(x->last_day, y->last_day);
	if (!d)
		d = strcmp(x->date, y->date);
	if (d)
		return d;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int node_last_hit(struct zc_mem *m, const json_t *x, const json_t *unfolded, char day[16],
			 struct zc_err *e)
{
	sqlite3_stmt *st = zc_stmt(&m->store, "SELECT last_hit_at FROM nodes WHERE id = ?1", e);
	if (!st)
		return e->code;
	sqlite3_bind_text(st, 1, zc_json_str(x, "id"), -1, SQLITE_TRANSIENT);
	long long last = -1;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		last = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	char key[32];
	snprintf(key, sizeof(key), "%lld", (long long)json_integer_value(json_object_get(x, "seq")));
	json_t *u = json_object_get(unfolded, key);
	if (u && json_integer_value(u) > last)
		last = json_integer_value(u);
	day[0] = '\0';
	if (last >= 0)
		zc_time_local_date(last, day);
	return ZCOR_OK;
}

static void local_month(int64_t ms, char out[8])
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	localtime_r(&t, &tm);
	if (strftime(out, 8, "%Y-%m", &tm) != 7)
		snprintf(out, 8, "0000-00");
}

int zc_view_rollover(struct zc_op *op, const char *conv, long long *moved, json_t *warnings,
		     struct zc_err *e)
{
	struct zc_view hot, arch;
	char *text = NULL, month[8];
	json_t *entries = NULL, *unfolded = NULL;
	struct cand *c = NULL;
	size_t nc = 0;
	int rc;
	*moved = 0;
	zc_view_memory(&hot, conv);
	zc_config_refresh(&op->m->conf);
	long threshold = zc_view_rollover_threshold(op->m);
	if ((rc = zc_view_render(op->m, &hot, &text, NULL, NULL, e)))
		return rc;
	long bytes = (long)strlen(text), before = bytes;
	zc_free(text);
	text = NULL;
	if (bytes <= threshold)
		return ZCOR_OK;
	if ((rc = load_entries(op->m, &hot, &entries, e)) || (rc = zc_mem_unfolded_hits(op->m, &unfolded, e)))
		goto out;
	c = zc_calloc(json_array_size(entries) + 1, sizeof(*c));
	char inherited[16] = "";
	size_t i;
	json_t *x;
	json_array_foreach(entries, i, x) {
		const char *d = zc_json_str(x, "date");
		if (d && *d)
			snprintf(inherited, sizeof(inherited), "%s", d);
		if (json_is_true(json_object_get(x, "pinned")))
			continue;
		struct cand *k = &c[nc++];
		k->x = x;
		snprintf(k->date, sizeof(k->date), "%s", inherited);
		k->pos = json_number_value(json_object_get(x, "pos"));
		char *line = zc_view_line(&hot, x);
		k->bytes = strlen(line) + 1;
		zc_free(line);
		if ((rc = node_last_hit(op->m, x, unfolded, k->last_day, e)))
			goto out;
	}
	if (!nc) {
		json_array_append_new(
			warnings,
			json_sprintf("%s is %ld bytes, over the rollover threshold of %ld, but every "
				     "entry is pinned: nothing can move to the archive; remove or "
				     "shorten entries by hand",
				     hot.path, bytes, threshold));
		goto out;
	}
	qsort(c, nc, sizeof(*c), by_activity);
	local_month(op->now, month);
	zc_view_archive(&arch, conv, month);
	if ((rc = zc_exec(&op->m->store, "SAVEPOINT zc_rollover", e)))
		goto out;
	if ((rc = zc_view_save_version(op, &arch, e)))
		goto failed;
	zc_err_clear(e);
	double apos = max_pos(op, &arch, e);
	if (e->code) {
		rc = e->code;
		goto failed;
	}
	for (i = 0; i < nc && bytes > threshold; i++) {
		json_t *n = NULL;
		if ((rc = zc_node_load(op, zc_json_str(c[i].x, "id"), &n, e)))
			goto failed;
		json_object_set_new(n, "tier", json_string("archive"));
		json_object_set_new(n, "archiveMonth", json_string(month));
		json_object_set_new(json_object_get(n, "attrs"), "pos", json_real(++apos));
		rc = zc_node_save(op, n, e);
		json_decref(n);
		if (rc)
			goto failed;
		bytes -= (long)c[i].bytes;
		(*moved)++;
	}
	/* the invariants, checked on what is now stored */
	if ((rc = zc_view_render(op->m, &hot, &text, NULL, NULL, e)))
		goto failed;
	long after = (long)strlen(text);
	zc_free(text);
	text = NULL;
	if ((rc = zc_view_render(op->m, &arch, &text, NULL, NULL, e)))
		goto failed;
	long abytes = (long)strlen(text);
	zc_free(text);
	text = NULL;
	if (after >= before) {
		rc = zc_fail(e, ZCOR_EINTERNAL, "rollover did not shrink %s", hot.path);
		goto failed;
	}
	if (abytes > zc_view_limit(op->m, &arch)) {
		rc = zc_fail(e, ZCOR_EINVAL, "%s would be %ld bytes, over its limit of %ld", arch.path,
			     abytes, zc_view_limit(op->m, &arch));
		goto failed;
	}
	rc = zc_exec(&op->m->store, "RELEASE zc_rollover", e);
	goto out;
failed:
	zc_exec(&op->m->store, "ROLLBACK TO zc_rollover", NULL);
	zc_exec(&op->m->store, "RELEASE zc_rollover", NULL);
	json_array_append_new(warnings,
			      json_sprintf("moving entries of %s to the archive failed (%s); both "
					   "were left as they were",
					   hot.path, e->msg));
	*moved = 0;
	zc_err_clear(e);
	rc = ZCOR_OK;
out:
	zc_free(text);
	zc_free(c);
	json_decref(entries);
	json_decref(unfolded);
	return rc;
}

/* Is entry x of MEMORY.md view mv already in the conversation's archive,
 * the same line under the same section? Rollover moved it there. */
int zc_view_archived_same(struct zc_mem *m, const struct zc_view *mv, const json_t *x, int *same,
			  struct zc_err *e)
{
	*same = 0;
	sqlite3_stmt *st = zc_stmt(&m->store,
				   "SELECT " ZC_NODE_COLS ", seq FROM nodes WHERE kind = 'memory' AND "
				   "superseded_by IS NULL AND scope = ?1 AND tier = 'archive' AND "
				   "title_norm = ?2",
				   e);
	if (!st)
		return e->code;
	struct zc_view av;
	zc_view_archive(&av, mv->conv, "0000-00");
	char *want = zc_view_line(mv, x);
	sqlite3_bind_text(st, 1, mv->conv, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, zc_norm(zc_json_str(x, "name")), -1, zc_free);
	int rc = SQLITE_DONE;
	while (!*same && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *n = zc_node_from_row(st);
		json_t *a = entry_of_node(&av, n, sqlite3_column_int64(st, 25));
		char *line = zc_view_line(&av, a);
		*same = strcmp(line, want) == 0 && strcmp(entry_section(&av, a), entry_section(mv, x)) == 0;
		zc_free(line);
		json_decref(a);
		json_decref(n);
	}
	sqlite3_reset(st);
	zc_free(want);
	if (!*same && rc != SQLITE_DONE)
		return zc_store_fail(&m->store, rc, e, "reading an archive");
	return ZCOR_OK;
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
