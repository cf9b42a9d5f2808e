/*
 * view_check.c — the fields of an upsert into a memory view, checked and
 * normalised (zc_view_entry_check, view.h).
 *
 * Memory layer. Each field is one line without the separator ｜, within
 * its length; lists become arrays; a date reads YYYY-MM-DD; a sticker's
 * image is a stickers/ file that exists (the one look at the disk here).
 * Errors name the field and say what to do; a refused entry changes
 * nothing, since this file never writes: the edit is view_edit.c's.
 */
#include <string.h>

#include "base/alloc.h"
#include "base/fs.h"
#include "base/json.h"
#include "base/utf8.h"
#include "memory/sticker.h"
#include "memory/view_internal.h"

static int in_list(const char *const *list, const char *s)
{
	for (; list && *list; list++)
		if (s && strcmp(*list, s) == 0)
			return 1;
	return 0;
}

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
	if (strchr(s, '\n') || strchr(s, '\r') || strstr(s, ZC_VIEW_BAR))
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
		a = zc_view_split_list(json_string_value(v));
	else if (json_is_array(v))
		a = json_deep_copy(v);
	else
		return zc_fail(e, ZCOR_EINVAL, "argument '%s': a list such as \"a/b\" or [\"a\", \"b\"]", k);
	size_t i;
	json_t *s;
	json_array_foreach(a, i, s) {
		const char *t = json_string_value(s);
		if (!t || !*t || strchr(t, '/') || strstr(t, ZC_VIEW_BAR) || strchr(t, '\n') || zc_utf8_len(t) > 200) {
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
	if (d && *d && !zc_view_is_date(d))
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

/* The fields every view has: name, meaning, date, confidence, pinned. */
static int common_fields(const json_t *f, json_t *x, struct zc_err *e)
{
	int rc;
	if ((rc = one_line_field(f, "name", 1, x, e)) || (rc = one_line_field(f, "meaning", 0, x, e)) ||
	    (rc = one_line_field(f, "date", 0, x, e)) || (rc = date_field(x, "date", e)) ||
	    (rc = one_line_field(f, "confidence", 0, x, e)))
		return rc;
	const char *conf = zc_json_str(x, "confidence");
	if (conf && strcmp(conf, "确认") != 0 && strcmp(conf, "存疑") != 0)
		return zc_fail(e, ZCOR_EINVAL, "argument 'confidence': 确认 or 存疑");
	json_t *pinned = json_object_get(f, "pinned");
	if (pinned && !json_is_boolean(pinned))
		return zc_fail(e, ZCOR_EINVAL, "argument 'pinned': true or false");
	if (json_is_true(pinned))
		json_object_set_new(x, "pinned", json_true());
	else if (json_is_false(pinned))
		json_object_set_new(x, "pinned", json_false());
	return ZCOR_OK;
}

/* The fields of v's kind. */
static int kind_fields(struct zc_mem *m, const struct zc_view *v, const json_t *f, json_t *x,
		       struct zc_err *e)
{
	int rc = ZCOR_OK;
	switch (v->kind) {
	case ZC_VIEW_PEOPLE:
		if ((rc = one_line_field(f, "qq", 0, x, e)) || (rc = list_field(f, "aliases", x, e)))
			return rc;
		if (zc_json_str(x, "qq") && !zc_view_all_digits(zc_json_str(x, "qq")))
			return zc_fail(e, ZCOR_EINVAL, "argument 'qq': the QQ number, digits only");
		return ZCOR_OK;
	case ZC_VIEW_COGNITION:
		if ((rc = one_line_field(f, "usage", 0, x, e)) || (rc = one_line_field(f, "type", 0, x, e)) ||
		    (rc = list_field(f, "variants", x, e)))
			return rc;
		if (zc_json_str(x, "type") &&
		    !in_list(zc_view_sections(ZC_VIEW_COGNITION), zc_json_str(x, "type")))
			return zc_fail(e, ZCOR_EINVAL, "argument 'type': one of 缩写, 谐音, 专名, 其它");
		return ZCOR_OK;
	case ZC_VIEW_STICKERS:
		if ((rc = zc_sticker_name_check("name", zc_json_str(x, "name"), e)) ||
		    (rc = one_line_field(f, "scene", 0, x, e)) || (rc = one_line_field(f, "image", 0, x, e)) ||
		    (rc = one_line_field(f, "picture", 0, x, e)) || (rc = list_field(f, "variants", x, e)) ||
		    (rc = sticker_image(m, x, e)))
			return rc;
		return ZCOR_OK;
	default:
		if ((rc = one_line_field(f, "section", 0, x, e)) || (rc = list_field(f, "aliases", x, e)) ||
		    (rc = one_line_field(f, "expires", 0, x, e)) || (rc = date_field(x, "expires", e)))
			return rc;
		if (zc_json_str(x, "section") && zc_utf8_len(zc_json_str(x, "section")) > 20)
			return zc_fail(e, ZCOR_EINVAL,
				       "argument 'section': a short heading such as 人物, 惯例与偏好, 在追 or 事实");
		return ZCOR_OK;
	}
}

/* COGNITION.md holds words only: no field of entry x is a file path. */
static int cognition_words_only(const json_t *x, struct zc_err *e)
{
	const char *keys[] = {"name", "meaning", "usage"};
	for (size_t i = 0; i < 3; i++)
		if (zc_has_file_path(zc_json_str(x, keys[i])))
			return zc_fail(e, ZCOR_EINVAL,
				       "argument '%s': COGNITION.md holds words only, never a file "
				       "path; an image goes to STICKERS.md (qq_save_sticker, then "
				       "upsert STICKERS.md)",
				       keys[i]);
	size_t i;
	json_t *s;
	json_array_foreach(json_object_get(x, "variants"), i, s) if (zc_has_file_path(json_string_value(s)))
		return zc_fail(e, ZCOR_EINVAL,
			       "argument 'variants': COGNITION.md holds words only, never a file path");
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
	if ((rc = common_fields(f, x, e)) || (rc = kind_fields(m, v, f, x, e)) ||
	    (v->kind == ZC_VIEW_COGNITION && (rc = cognition_words_only(x, e))))
		goto out;
	*out = x;
	x = NULL;
out:
	json_decref(x);
	return rc;
}
