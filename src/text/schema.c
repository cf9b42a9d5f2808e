/*
 * schema.c — JSON Schema subset validation (schema.h). Text layer: JSON
 * and characters only; it never knows which tool or request it checks.
 */
#include "text/schema.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/alloc.h"
#include "text/norm.h"

static int type_ok(const char *t, const json_t *v)
{
	if (!strcmp(t, "string"))
		return json_is_string(v);
	if (!strcmp(t, "integer"))
		return json_is_integer(v) ||
		       (json_is_real(v) && floor(json_real_value(v)) == json_real_value(v) &&
			fabs(json_real_value(v)) < 9e15);
	if (!strcmp(t, "number"))
		return json_is_number(v);
	if (!strcmp(t, "boolean"))
		return json_is_boolean(v);
	if (!strcmp(t, "array"))
		return json_is_array(v);
	if (!strcmp(t, "object"))
		return json_is_object(v);
	if (!strcmp(t, "null"))
		return json_is_null(v);
	return 0;
}

static const char *article(const char *t)
{
	return t[0] == 'a' || t[0] == 'i' || t[0] == 'o' ? "an" : "a";
}

static int check(const json_t *s, const json_t *v, const char *path, struct zc_err *e);

static int check_type(const json_t *s, const json_t *v, const char *path, struct zc_err *e)
{
	json_t *t = json_object_get(s, "type");
	if (!t)
		return ZCOR_OK;
	if (json_is_string(t)) {
		if (type_ok(json_string_value(t), v))
			return ZCOR_OK;
		const char *name = json_string_value(t);
		if (!*path)
			return zc_fail(e, ZCOR_EINVAL, "arguments must be %s %s", article(name), name);
		return zc_fail(e, ZCOR_EINVAL, "argument '%s': must be %s %s", path, article(name), name);
	}
	struct zc_buf names = ZC_BUF_INIT;
	size_t i;
	json_t *x;
	json_array_foreach(t, i, x) {
		if (type_ok(json_string_value(x), v)) {
			zc_buf_release(&names);
			return ZCOR_OK;
		}
		zc_buf_addf(&names, "%s%s", i ? " or " : "", json_string_value(x));
	}
	int rc = zc_fail(e, ZCOR_EINVAL, "argument '%s': must be %s", path, zc_buf_str(&names));
	zc_buf_release(&names);
	return rc;
}

static int check_object(const json_t *s, const json_t *v, const char *path, struct zc_err *e)
{
	json_t *props = json_object_get(s, "properties");
	json_t *req = json_object_get(s, "required");
	size_t i;
	json_t *x;
	json_array_foreach(req, i, x) {
		const char *k = json_string_value(x);
		if (!json_object_get(v, k)) {
			if (*path)
				return zc_fail(e, ZCOR_EINVAL, "argument '%s.%s' is missing", path, k);
			return zc_fail(e, ZCOR_EINVAL, "argument '%s' is missing; it is required", k);
		}
	}
	const char *k;
	json_object_foreach((json_t *)v, k, x) {
		json_t *ps = json_object_get(props, k);
		char sub[256];
		snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "", k);
		if (!ps) {
			if (json_is_false(json_object_get(s, "additionalProperties"))) {
				struct zc_buf known = ZC_BUF_INIT;
				const char *pk;
				json_t *pv;
				json_object_foreach(props, pk, pv) zc_buf_addf(&known, "%s%s", known.len ? ", " : "", pk);
				int rc = zc_fail(e, ZCOR_EINVAL,
						 "unknown argument '%s%s%s'; this tool takes: %s", path,
						 *path ? "." : "", ZC_Q(k, 100),
						 known.len ? zc_buf_str(&known) : "no arguments");
				zc_buf_release(&known);
				return rc;
			}
			continue;
		}
		int rc = check(ps, x, sub, e);
		if (rc)
			return rc;
	}
	return ZCOR_OK;
}

static int check(const json_t *s, const json_t *v, const char *path, struct zc_err *e)
{
	int rc = check_type(s, v, path, e);
	if (rc)
		return rc;
	json_t *en = json_object_get(s, "enum");
	if (en) {
		size_t i;
		json_t *x;
		int found = 0;
		json_array_foreach(en, i, x) found |= json_equal(x, v);
		if (!found) {
			char *list = json_dumps(en, JSON_COMPACT);
			rc = zc_fail(e, ZCOR_EINVAL, "argument '%s': must be one of %s", path, list);
			zc_free(list); /* json_dumps allocates through zc_malloc (zcor.c) */
			return rc;
		}
	}
	if (json_is_string(v)) {
		long long n = (long long)zc_utf8_len(json_string_value(v));
		json_t *mn = json_object_get(s, "minLength"), *mx = json_object_get(s, "maxLength");
		if (json_string_length(v) != strlen(json_string_value(v)))
			return zc_fail(e, ZCOR_EINVAL, "argument '%s': must not contain NUL characters", path);
		if (mn && n < json_integer_value(mn))
			return zc_fail(e, ZCOR_EINVAL, "argument '%s': must have at least %lld characters",
				       path, (long long)json_integer_value(mn));
		if (mx && n > json_integer_value(mx))
			return zc_fail(e, ZCOR_EINVAL,
				       "argument '%s': has %lld characters, more than the limit of %lld",
				       path, n, (long long)json_integer_value(mx));
	}
	if (json_is_number(v)) {
		double d = json_number_value(v);
		json_t *mn = json_object_get(s, "minimum"), *mx = json_object_get(s, "maximum");
		if ((mn && d < json_number_value(mn)) || (mx && d > json_number_value(mx))) {
			if (mn && mx)
				return zc_fail(e, ZCOR_EINVAL, "argument '%s': must be between %g and %g",
					       path, json_number_value(mn), json_number_value(mx));
			return zc_fail(e, ZCOR_EINVAL, "argument '%s': must be %s %g", path,
				       mn ? "at least" : "at most", json_number_value(mn ? mn : mx));
		}
	}
	if (json_is_array(v)) {
		json_t *mn = json_object_get(s, "minItems"), *mx = json_object_get(s, "maxItems");
		json_int_t n = (json_int_t)json_array_size(v);
		if (mn && n < json_integer_value(mn))
			return zc_fail(e, ZCOR_EINVAL, "argument '%s': needs at least %lld items", path,
				       (long long)json_integer_value(mn));
		if (mx && n > json_integer_value(mx))
			return zc_fail(e, ZCOR_EINVAL, "argument '%s': takes at most %lld items", path,
				       (long long)json_integer_value(mx));
		json_t *items = json_object_get(s, "items");
		size_t i, j;
		json_t *x;
		json_array_foreach(v, i, x) {
			char sub[256];
			snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
			if (items && (rc = check(items, x, sub, e)))
				return rc;
			if (json_is_true(json_object_get(s, "uniqueItems")))
				for (j = 0; j < i; j++)
					if (json_equal(json_array_get(v, j), x))
						return zc_fail(e, ZCOR_EINVAL,
							       "argument '%s': item %zu repeats item %zu",
							       path, i, j);
		}
	}
	if (json_is_object(v))
		return check_object(s, v, path, e);
	return ZCOR_OK;
}

int zc_schema_check(const json_t *schema, const json_t *value, struct zc_err *e)
{
	if (!json_is_object(value))
		return zc_fail(e, ZCOR_EINVAL, "arguments must be a JSON object");
	return check(schema, value, "", e);
}

void zc_schema_coerce(const json_t *schema, json_t *args)
{
	json_t *props = json_object_get(schema, "properties");
	const char *k;
	json_t *v;
	json_object_foreach(args, k, v) {
		json_t *t = json_object_get(json_object_get(props, k), "type");
		if (json_is_real(v) && json_is_string(t) && strcmp(json_string_value(t), "integer") == 0)
			json_object_set_new(args, k, json_integer((json_int_t)json_real_value(v)));
	}
}
