/*
 * view_path.c — paths, names and confinement of the memory views (view.h).
 *
 * Memory layer, pure: no I/O, no SQLite. Which views exist and how their
 * paths read (a path is confined to the known roots: no "..", no
 * absolute path), which file names and paths an entry may hold (Q-STK),
 * and the hard rules of seed 003 on what a view's text may point at: no
 * file path in COGNITION.md, no media path in STICKERS.md. It never
 * opens a file: a path here is a name, checked as text.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/alloc.h"
#include "base/json.h"
#include "base/utf8.h"
#include "memory/sticker.h"
#include "memory/view_internal.h"

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

/* ---- file names ---------------------------------------------------------- */

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
int zc_view_is_image_path(const char *s)
{
	return !strchr(s, ' ') && (strncmp(s, "stickers/", 9) == 0 || strncmp(s, ".qq-stickers/", 13) == 0 ||
				   strncmp(s, "media/", 6) == 0 || strncmp(s, ".qq-media/", 10) == 0 ||
				   (strchr(s, '/') && has_image_ext(s, strlen(s))));
}

/* ---- the hard rules ------------------------------------------------------ */

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
