/*
 * view_format.c — the text of a memory view: format and parse (view.h).
 *
 * Memory layer, pure: no I/O, no SQLite — JSON entries in, Markdown out,
 * and back. A view's sections and line format are generated here, so the
 * same entries always give the same text. One entry is one line,
 * `- name｜meaning｜tagged fields…`; parsing text back normalises it as
 * seed 003 says and keeps what is no entry verbatim, with the reason,
 * never dropped. Loading rows is view_store.c's; this file never reads
 * the store or a file (tests/unit/test_view_format.c checks it against
 * the .md / .json pairs in tests/unit/data/views/).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/json.h"
#include "memory/view_internal.h"
#include "text/norm.h"

static const char *const memory_sections[] = {"人物", "惯例与偏好", "在追", "事实", NULL};
static const char *const cognition_sections[] = {"缩写", "谐音", "专名", "其它", NULL};
static const char *const sticker_sections[] = {"已收藏", "未收藏", NULL};
static const char *const people_sections[] = {"人物", NULL};

const char *const *zc_view_sections(enum zc_view_kind k)
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

/* ---- one entry's line ---------------------------------------------------- */

/* Appends s on one line: newlines become spaces, the separator '|'. */
static void field(struct zc_buf *b, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '\n' || *s == '\r')
			zc_buf_addc(b, ' ');
		else if (strncmp(s, ZC_VIEW_BAR, 3) == 0) {
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
	zc_buf_adds(b, ZC_VIEW_BAR);
	zc_buf_adds(b, tag);
	field(b, s);
}

int zc_view_all_digits(const char *s)
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
		if (zc_view_all_digits(qq))
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
	zc_buf_adds(&b, ZC_VIEW_BAR);
	field(&b, zc_json_str(x, "meaning"));
	switch (v->kind) {
	case ZC_VIEW_COGNITION:
		tagged(&b, "用法：", zc_json_str(x, "usage"));
		if (json_array_size(json_object_get(x, "variants"))) {
			zc_buf_adds(&b, ZC_VIEW_BAR "变体：");
			slash_list(&b, json_object_get(x, "variants"));
		}
		break;
	case ZC_VIEW_STICKERS:
		tagged(&b, "画面：", zc_json_str(x, "picture"));
		tagged(&b, "场景：", zc_json_str(x, "scene"));
		if (json_array_size(json_object_get(x, "variants"))) {
			zc_buf_adds(&b, ZC_VIEW_BAR "别名：");
			slash_list(&b, json_object_get(x, "variants"));
		}
		tagged(&b, "", zc_json_str(x, "image"));
		if (json_is_true(json_object_get(x, "stale")))
			zc_buf_adds(&b, ZC_VIEW_BAR "原图已过期");
		break;
	case ZC_VIEW_PEOPLE:
		if (json_integer_value(json_object_get(x, "affinity")))
			zc_buf_addf(&b, ZC_VIEW_BAR "好感 %lld",
				    (long long)json_integer_value(json_object_get(x, "affinity")));
		tagged(&b, "首见 ", zc_json_str(x, "date"));
		break;
	default:
		if (json_array_size(json_object_get(x, "aliases"))) {
			zc_buf_adds(&b, ZC_VIEW_BAR "别名：");
			slash_list(&b, json_object_get(x, "aliases"));
		}
		break;
	}
	if (v->kind != ZC_VIEW_PEOPLE)
		tagged(&b, "", zc_json_str(x, "date"));
	tagged(&b, "过期 ", zc_json_str(x, "expires"));
	if (json_is_true(json_object_get(x, "pinned")))
		zc_buf_adds(&b, ZC_VIEW_BAR "置顶");
	tagged(&b, "置信：", zc_json_str(x, "confidence"));
	size_t i;
	json_t *s;
	json_array_foreach(json_object_get(x, "extra"), i, s) tagged(&b, "", json_string_value(s));
	return zc_buf_detach(&b);
}

/* The section an entry is listed under. */
const char *zc_view_entry_section(const struct zc_view *v, const json_t *x)
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

/* What the lines of a view are while it is laid out. */
struct layout {
	struct rline *lines; /* entries and kept lines, sorted by position */
	size_t n;
	struct zc_buf out;
	long lineno;         /* of the next line written */
	json_t *refs, *kept; /* the callers' {name, line…} / {line, text…}, or NULL */
};

/* Every entry and kept line with its text, in the order of their
 * positions (ties: entries first, then as given). */
static void layout_collect(struct layout *L, const struct zc_view *v, const json_t *entries,
			   const json_t *unparsed)
{
	size_t i;
	json_t *x;
	L->lines = zc_calloc(json_array_size(entries) + json_array_size(unparsed) + 1, sizeof(*L->lines));
	json_array_foreach(entries, i, x) {
		L->lines[L->n] = (struct rline){json_number_value(json_object_get(x, "pos")), L->n,
						zc_view_entry_section(v, x), zc_view_line(v, x), x, 0};
		L->n++;
	}
	json_array_foreach(unparsed, i, x) {
		L->lines[L->n] = (struct rline){json_number_value(json_object_get(x, "pos")), L->n,
						zc_json_str(x, "section"),
						zc_strdup(zc_json_str(x, "text")), x, 1};
		L->n++;
	}
	qsort(L->lines, L->n, sizeof(*L->lines), by_pos);
}

/* The sections: the standard ones always, in their order; others in the
 * order they first appear. */
static json_t *layout_sections(const struct zc_view *v, const struct layout *L)
{
	json_t *secs = json_array();
	for (const char *const *s = zc_view_sections(v->kind); s && *s; s++)
		json_array_append_new(secs, json_string(*s));
	for (size_t i = 0; i < L->n; i++) {
		const char *s = L->lines[i].section;
		if (!s)
			continue;
		int seen = 0;
		size_t j;
		json_t *y;
		json_array_foreach(secs, j, y) seen |= strcmp(json_string_value(y), s) == 0;
		if (!seen)
			json_array_append_new(secs, json_string(s));
	}
	return secs;
}

/* Writes line l and says where it went: {name, line, seq, id | personId,
 * date} of an entry, {line, text, useq} of a kept line (seq and useq when
 * the line came from the store). */
static void layout_emit(struct layout *L, const struct rline *l)
{
	const json_t *src = l->src;
	zc_buf_addf(&L->out, "%s\n", l->text);
	if (l->unparsed && L->kept) {
		json_t *ref = json_pack("{s:I, s:s}", "line", (json_int_t)L->lineno, "text", l->text);
		if (ref && json_object_get(src, "useq"))
			json_object_set(ref, "useq", json_object_get(src, "useq"));
		json_array_append_new(L->kept, ref);
	}
	if (!l->unparsed && L->refs) {
		json_t *ref = json_pack("{s:O, s:I}", "name", json_object_get(src, "name"), "line",
					(json_int_t)L->lineno);
		static const char *const keys[] = {"seq", "id", "personId", "date"};
		for (size_t k = 0; ref && k < sizeof(keys) / sizeof(keys[0]); k++)
			if (json_object_get(src, keys[k]))
				json_object_set(ref, keys[k], json_object_get(src, keys[k]));
		json_array_append_new(L->refs, ref);
	}
	L->lineno++;
}

char *zc_view_format(const struct zc_view *v, const json_t *entries, const json_t *unparsed,
		     json_t *refs, json_t *kept)
{
	struct layout L = {.out = ZC_BUF_INIT, .lineno = 1, .refs = refs, .kept = kept};
	struct zc_buf tb = ZC_BUF_INIT;
	size_t i;
	layout_collect(&L, v, entries, unparsed);
	json_t *secs = layout_sections(v, &L);
	zc_buf_addf(&L.out, "%s\n\n", view_title(v, &tb));
	L.lineno += 2;
	int any_loose = 0; /* lines outside every section: under the title */
	for (i = 0; i < L.n; i++)
		if (!L.lines[i].section) {
			layout_emit(&L, &L.lines[i]);
			any_loose = 1;
		}
	if (any_loose) {
		zc_buf_addc(&L.out, '\n');
		L.lineno++;
	}
	size_t si;
	json_t *sj;
	json_array_foreach(secs, si, sj) {
		const char *sec = json_string_value(sj);
		if (si) {
			zc_buf_addc(&L.out, '\n');
			L.lineno++;
		}
		zc_buf_addf(&L.out, "## %s\n", sec);
		L.lineno++;
		for (i = 0; i < L.n; i++)
			if (L.lines[i].section && strcmp(L.lines[i].section, sec) == 0)
				layout_emit(&L, &L.lines[i]);
	}
	for (i = 0; i < L.n; i++)
		zc_free(L.lines[i].text);
	zc_free(L.lines);
	zc_buf_release(&tb);
	json_decref(secs);
	return zc_buf_detach(&L.out);
}

/* ---- parsing --------------------------------------------------------------- */

int zc_view_is_date(const char *s)
{
	if (strlen(s) != 10 || s[4] != '-' || s[7] != '-')
		return 0;
	for (int i = 0; i < 10; i++)
		if (i != 4 && i != 7 && !isdigit((unsigned char)s[i]))
			return 0;
	return 1;
}

json_t *zc_view_split_list(const char *s)
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
json_t *zc_view_parse_entry(const struct zc_view *v, const char *section, const char *line)
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

/* The segments of an entry line, split at ｜ — or "name：meaning" as
 * written by hand; NULL if neither. */
static json_t *line_segments(const char *s)
{
	json_t *segs = json_array();
	const char *p = s;
	for (;;) {
		const char *b = strstr(p, ZC_VIEW_BAR);
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
	return segs;
}

/* The name in the first segment (caller frees), NULL if the line is no
 * entry; a person's （QQ …）/（ID …） and （别名：…） go into x. */
static char *entry_name(const struct zc_view *v, const char *seg, json_t *x)
{
	char *head = zc_strdup(seg);
	if (v->kind == ZC_VIEW_PEOPLE) {
		char *val = NULL;
		if (take_paren(head, "（QQ ", &val) || take_paren(head, "（QQ：", &val) ||
		    take_paren(head, "（ID ", &val))
			json_object_set_new(x, "qq", zc_json_string_own(val));
		val = NULL;
		if (take_paren(head, "（别名：", &val)) {
			json_object_set_new(x, "aliases", zc_view_split_list(val));
			zc_free(val);
		}
	}
	char *name = zc_strndup_trim(head, strlen(head));
	zc_free(head);
	if ((v->kind == ZC_VIEW_PEOPLE && !person_line_ok(name, zc_json_str(x, "qq"))) || !*name) {
		zc_free(name);
		return NULL;
	}
	return name;
}

/* Reads a segment after name and meaning into x by its tag; one that no
 * tag names goes to extra, as written. */
static void tagged_segment(const struct zc_view *v, json_t *x, json_t *extra, const char *t)
{
	const char *r;
	if (starts(t, "用法：", &r))
		json_object_set_new(x, "usage", json_string(r));
	else if (starts(t, "变体：", &r))
		json_object_set_new(x, "variants", zc_view_split_list(r));
	else if (starts(t, "别名：", &r))
		json_object_set_new(x, v->kind == ZC_VIEW_STICKERS ? "variants" : "aliases",
				    zc_view_split_list(r));
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
	else if ((starts(t, "首见 ", &r) || starts(t, "首见：", &r)) && zc_view_is_date(r))
		json_object_set_new(x, "date", json_string(r));
	else if (starts(t, "好感 ", &r) || starts(t, "好感：", &r))
		json_object_set_new(x, "affinity", json_integer(strtol(r, NULL, 10)));
	else if (strcmp(t, "置顶") == 0)
		json_object_set_new(x, "pinned", json_true());
	else if (strcmp(t, "原图已过期") == 0)
		json_object_set_new(x, "stale", json_true());
	else if (zc_view_is_date(t) && !json_object_get(x, "date"))
		json_object_set_new(x, "date", json_string(t));
	else if (v->kind == ZC_VIEW_STICKERS && zc_view_is_image_path(t) && !json_object_get(x, "image"))
		/* the seed kept collected stickers in .qq-stickers/ */
		json_object_set_new(x, "image", strncmp(t, ".qq-stickers/", 13) == 0
							 ? json_sprintf("stickers/%s", t + 13)
							 : json_string(t));
	else
		json_array_append_new(extra, json_string(t));
}

static json_t *parse_fields(const struct zc_view *v, const char *section, const char *s)
{
	json_t *segs = line_segments(s);
	if (!segs)
		return NULL;
	json_t *x = json_object();
	char *name = entry_name(v, json_string_value(json_array_get(segs, 0)), x);
	if (!name) {
		json_decref(x);
		json_decref(segs);
		return NULL;
	}
	json_object_set_new(x, "name", zc_json_string_own(name));
	json_object_set(x, "meaning", json_array_get(segs, 1));
	json_t *extra = json_array();
	for (size_t i = 2; i < json_array_size(segs); i++) {
		const char *t = json_string_value(json_array_get(segs, i));
		if (*t)
			tagged_segment(v, x, extra, t);
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
char *zc_view_entry_key(const struct zc_view *v, const json_t *x)
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

/* What zc_view_parse knows while it reads a text, line by line. */
struct parse {
	const struct zc_view *v;
	json_t *doc, *entries, *unparsed;
	json_t *seen;       /* entry key -> {entry, raw, pos, section} */
	json_t *seen_lines; /* section "\n" line -> true */
	json_t *headings;   /* section -> true */
	char *section, *title;
	long dups;
	double pos;         /* the line number of the current line */
	int first;          /* no non-empty line read yet */
};

/* The file's title (the first non-empty line, when a "# …"), or that
 * title again (a duplicate); 1 if line was one. */
static int parse_title(struct parse *P, const char *line, int h1)
{
	if (!h1 || !(P->first || (P->title && strcmp(line, P->title) == 0)))
		return 0;
	if (P->title) {
		P->dups++; /* the title again */
	} else {
		struct zc_buf tb = ZC_BUF_INIT;
		P->title = zc_strdup(line);
		if (strcmp(P->title, view_title(P->v, &tb)) != 0)
			json_object_set_new(P->doc, "titleReplaced", json_string(P->title));
		zc_buf_release(&tb);
	}
	return 1;
}

/* A "## …" heading: the section of the lines below (the seed's 「## 人」
 * is 人物); a heading seen before counts as a duplicate. 1 if it was one. */
static int parse_heading(struct parse *P, const char *line)
{
	if (strncmp(line, "## ", 3) != 0)
		return 0;
	zc_free(P->section);
	P->section = zc_strndup_trim(line + 3, strlen(line + 3));
	if ((P->v->kind == ZC_VIEW_MEMORY || P->v->kind == ZC_VIEW_ARCHIVE) &&
	    strcmp(P->section, "人") == 0) {
		zc_free(P->section);
		P->section = zc_strdup("人物");
	}
	if (json_object_get(P->headings, P->section))
		P->dups++;
	json_object_set_new(P->headings, P->section, json_true());
	return 1;
}

/* Is line the same as an earlier one of its section (then it counts as a
 * duplicate)? */
static int parse_identical(struct parse *P, const char *line)
{
	struct zc_buf k = ZC_BUF_INIT;
	zc_buf_addf(&k, "%s\n%s", P->section ? P->section : "", line);
	int identical = json_object_get(P->seen_lines, k.p) != NULL;
	json_object_set_new(P->seen_lines, k.p, json_true());
	zc_buf_release(&k);
	P->dups += identical;
	return identical;
}

/* An entry line, or a line kept as written (raw, n bytes) with the reason.
 * An entry whose name was seen before demotes the earlier line. */
static void parse_line(struct parse *P, const char *line, const char *raw, size_t n, int h1)
{
	json_t *x = NULL;
	if (!h1 && (line[0] == '-' || line[0] == '*') && line[1] == ' ')
		x = zc_view_parse_entry(P->v, P->section, line + 2);
	if (!x) {
		json_array_append_new(
			P->unparsed,
			kept_line(raw, n, P->pos, P->section,
				  h1 ? "a level-1 heading after the file's title: kept as written"
				     : "not an entry (- name｜meaning…): kept as written"));
		return;
	}
	char *key = zc_view_entry_key(P->v, x);
	json_t *old = json_object_get(P->seen, key);
	if (old) { /* same name again: the later line is the entry */
		json_t *oe = json_object_get(old, "entry");
		for (size_t i = 0; i < json_array_size(P->entries); i++)
			if (json_array_get(P->entries, i) == oe) {
				json_array_remove(P->entries, i);
				break;
			}
		const char *ot = zc_json_str(old, "raw");
		json_array_append_new(
			P->unparsed, kept_line(ot, strlen(ot), json_number_value(json_object_get(old, "pos")),
					       zc_json_str(old, "section"),
					       "an entry of the same name follows: the later line is "
					       "the entry, this one is kept as written"));
	}
	json_object_set_new(x, "pos", json_real(P->pos));
	json_array_append(P->entries, x);
	json_t *rec = json_pack("{s:O, s:s%, s:f}", "entry", x, "raw", raw, n, "pos", P->pos);
	if (P->section)
		json_object_set_new(rec, "section", json_string(P->section));
	json_object_set_new(P->seen, key, rec);
	zc_free(key);
	json_decref(x);
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
	struct parse P = {.v = v,
			  .doc = doc,
			  .entries = json_object_get(doc, "entries"),
			  .unparsed = json_object_get(doc, "unparsed"),
			  .seen = json_object(),
			  .seen_lines = json_object(),
			  .headings = json_object(),
			  .first = 1};
	for (const char *p = text ? text : ""; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		char *line = zc_strndup_trim(p, n);
		const char *raw = p;
		p = nl ? nl + 1 : p + n;
		P.pos += 1;
		if (!*line) {
			zc_free(line);
			continue;
		}
		int h1 = line[0] == '#' && line[1] == ' ';
		int done = parse_title(&P, line, h1);
		P.first = 0;
		if (!done && !parse_heading(&P, line) && !parse_identical(&P, line))
			parse_line(&P, line, raw, n, h1);
		zc_free(line);
	}
	zc_free(P.section);
	zc_free(P.title);
	/* the kept lines in the order they were written (a line demoted by a
	 * later one of the same name was added to the list late) */
	zc_json_array_sort(P.unparsed, by_unparsed_pos);
	json_object_set_new(doc, "duplicates", json_integer(P.dups));
	json_decref(P.seen);
	json_decref(P.seen_lines);
	json_decref(P.headings);
	return doc;
}
