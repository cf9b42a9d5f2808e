/*
 * schema.c — JSON Schema subset validation (schema.h). Text layer: JSON
 * and characters only; it never knows which tool or request it checks.
 */
#include "text/schema.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/alloc.h"
#include "base/json.h"
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

/* One check's caller: how its errors read, where they go. */
struct ctx {
	const struct zc_schema_style *st;
	struct zc_err *e;
};

static const struct zc_schema_style tool_style = {"argument", 100, 0, 0, NULL};

/* The schema's own reason for a failure of keyword kw, or NULL. */
static const char *xerror(const json_t *s, const char *kw)
{
	json_t *x = json_object_get(s, "x-error");
	return json_is_object(x) ? json_string_value(json_object_get(x, kw)) : NULL;
}

/* A tool argument's refusal names it in the error's details too (issue
 * 18: a page words it in its own language): {"field": "messages[0].text",
 * "reason": "missing" | "unknown" | "type" | the keyword that failed}. */
static int at_field(const struct ctx *c, int rc, const char *path, const char *reason)
{
	if (c->st == &tool_style && *path && c->e) {
		char q[4 * 100 + 8]; /* a hostile name is cut on a character, as in the message */
		zc_utf8_quote(q, sizeof(q), path, 100);
		json_t *d = json_pack("{s:s, s:s}", "field", q, "reason", reason);
		if (d) /* out of memory: the message alone */
			zc_json_err_detail(c->e, d);
	}
	return rc;
}

/* "<word> '<path>': why", or why alone for the value itself. */
static int why_at(const struct ctx *c, const char *path, const char *why)
{
	if (!*path)
		return zc_fail(c->e, ZCOR_EINVAL, "%s", why);
	return zc_fail(c->e, ZCOR_EINVAL, "%s '%s': %s", c->st->word, path, why);
}

/* A failure of keyword kw at path: the schema's reason when it gives one,
 * else the message fmt makes. */
static int fail(const struct ctx *c, const json_t *s, const char *kw, const char *path,
		const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int fail(const struct ctx *c, const json_t *s, const char *kw, const char *path,
		const char *fmt, ...)
{
	const char *why = xerror(s, kw);
	if (why)
		return at_field(c, why_at(c, path, why), path, kw);
	char msg[sizeof(c->e->msg)];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return at_field(c, zc_fail(c->e, ZCOR_EINVAL, "%s", msg), path, kw);
}

/* path.k (k alone at the root) into sub, cut at its size: the path of
 * every value checked (snprintf here was a third of a logged message's
 * check, callgrind, issue 15). */
static void sub_key(char *sub, size_t cap, const char *path, const char *k)
{
	size_t a = strlen(path), b = strlen(k), dot = a > 0;
	if (a + dot + b >= cap) {
		snprintf(sub, cap, "%s%s%s", path, dot ? "." : "", k);
		return;
	}
	memcpy(sub, path, a);
	sub[a] = '.';
	memcpy(sub + a + dot, k, b + 1);
}

/* path[i] into sub. */
static void sub_index(char *sub, size_t cap, const char *path, size_t i)
{
	char d[24];
	int n = 0;
	for (size_t x = i; n == 0 || x; x /= 10)
		d[n++] = (char)('0' + x % 10);
	size_t a = strlen(path);
	if (a + (size_t)n + 3 > cap) {
		snprintf(sub, cap, "%s[%zu]", path, i);
		return;
	}
	memcpy(sub, path, a);
	sub[a++] = '[';
	while (n)
		sub[a++] = d[--n];
	sub[a++] = ']';
	sub[a] = '\0';
}

static int check(const struct ctx *c, const json_t *s, const json_t *v, const char *path);

static int check_type(const struct ctx *c, const json_t *s, const json_t *v, const char *path)
{
	const char *w = c->st->word;
	json_t *t = json_object_get(s, "type");
	if (!t)
		return ZCOR_OK;
	if (json_is_string(t)) {
		if (type_ok(json_string_value(t), v))
			return ZCOR_OK;
		const char *name = json_string_value(t);
		if (!*path)
			return fail(c, s, "type", path, "%ss must be %s %s", w, article(name), name);
		return fail(c, s, "type", path, "%s '%s': must be %s %s", w, path, article(name), name);
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
	int rc = fail(c, s, "type", path, "%s '%s': must be %s", w, path, zc_buf_str(&names));
	zc_buf_release(&names);
	return rc;
}

/* Property k of the object at path is missing: its own schema (ps) may
 * say why it is required. */
static int missing(const struct ctx *c, const json_t *ps, const char *path, const char *k)
{
	json_t *x = json_object_get(ps, "x-error");
	const char *why = json_is_string(x) ? json_string_value(x) : xerror(ps, "required");
	char sub[256];
	sub_key(sub, sizeof(sub), path, k);
	if (why)
		return at_field(c, why_at(c, sub, why), sub, "missing");
	if (*path)
		return at_field(c, zc_fail(c->e, ZCOR_EINVAL, "%s '%s.%s' is missing", c->st->word, path, k),
				sub, "missing");
	return at_field(c, zc_fail(c->e, ZCOR_EINVAL, "%s '%s' is missing; it is required", c->st->word, k),
			sub, "missing");
}

/* Key k of the object at path is not one of its properties. */
static int unknown(const struct ctx *c, const json_t *s, const char *path, const char *k)
{
	char q[4 * 100 + 8];
	zc_utf8_quote(q, sizeof(q), k, (size_t)c->st->key_chars);
	const char *tmpl = xerror(s, "additionalProperties");
	const char *at = tmpl ? strstr(tmpl, "{key}") : NULL;
	struct zc_buf m = ZC_BUF_INIT;
	if (at) {
		zc_buf_addf(&m, "%.*s%s%s%s%s", (int)(at - tmpl), tmpl, path, *path ? "." : "", q,
			    at + strlen("{key}"));
	} else {
		const char *pk;
		json_t *pv;
		struct zc_buf known = ZC_BUF_INIT;
		json_object_foreach(json_object_get(s, "properties"), pk, pv)
			zc_buf_addf(&known, "%s%s", known.len ? ", " : "", pk);
		zc_buf_addf(&m, "unknown %s '%s%s%s'; this tool takes: %s", c->st->word, path,
			    *path ? "." : "", q, known.len ? zc_buf_str(&known) : "no arguments");
		zc_buf_release(&known);
	}
	int rc = zc_fail(c->e, ZCOR_EINVAL, "%s", zc_buf_str(&m));
	zc_buf_release(&m);
	char sub[256];
	sub_key(sub, sizeof(sub), path, k);
	return at_field(c, rc, sub, "unknown");
}

static int is_required(const json_t *s, const char *k)
{
	size_t i;
	json_t *x;
	json_array_foreach(json_object_get(s, "required"), i, x)
		if (json_is_string(x) && strcmp(json_string_value(x), k) == 0)
			return 1;
	return 0;
}

/* The unknown keys, then each property in the schema's order. */
static int check_object_in_schema_order(const struct ctx *c, const json_t *s, const json_t *v,
					const char *path)
{
	json_t *props = json_object_get(s, "properties");
	const char *k;
	json_t *x, *ps;
	int rc;
	if (json_is_false(json_object_get(s, "additionalProperties")))
		json_object_foreach((json_t *)v, k, x)
			if (!json_object_get(props, k))
				return unknown(c, s, path, k);
	json_object_foreach(props, k, ps) {
		char sub[256];
		sub_key(sub, sizeof(sub), path, k);
		if (!(x = json_object_get(v, k))) {
			if (is_required(s, k))
				return missing(c, ps, path, k);
		} else if ((rc = check(c, ps, x, sub))) {
			return rc;
		}
	}
	size_t i;
	json_array_foreach(json_object_get(s, "required"), i, x) {
		k = json_string_value(x);
		if (!json_object_get(props, k) && !json_object_get(v, k))
			return missing(c, NULL, path, k);
	}
	return ZCOR_OK;
}

static int check_object(const struct ctx *c, const json_t *s, const json_t *v, const char *path)
{
	if (c->st->schema_order)
		return check_object_in_schema_order(c, s, v, path);
	json_t *props = json_object_get(s, "properties");
	json_t *req = json_object_get(s, "required");
	size_t i;
	json_t *x;
	json_array_foreach(req, i, x) {
		const char *k = json_string_value(x);
		if (!json_object_get(v, k))
			return missing(c, json_object_get(props, k), path, k);
	}
	const char *k;
	json_object_foreach((json_t *)v, k, x) {
		json_t *ps = json_object_get(props, k);
		char sub[256];
		sub_key(sub, sizeof(sub), path, k);
		if (!ps) {
			if (json_is_false(json_object_get(s, "additionalProperties")))
				return unknown(c, s, path, k);
			continue;
		}
		int rc = check(c, ps, x, sub);
		if (rc)
			return rc;
	}
	return ZCOR_OK;
}

static int check_string(const struct ctx *c, const json_t *s, const json_t *v, const char *path)
{
	const char *w = c->st->word;
	long long n = (long long)zc_utf8_len(json_string_value(v));
	json_t *mn = json_object_get(s, "minLength"), *mx = json_object_get(s, "maxLength");
	if (!c->st->nul_ok && json_string_length(v) != strlen(json_string_value(v)))
		return at_field(c, zc_fail(c->e, ZCOR_EINVAL, "%s '%s': must not contain NUL characters", w, path),
				path, "nul");
	if (mn && n < json_integer_value(mn))
		return fail(c, s, "minLength", path, "%s '%s': must have at least %lld characters", w,
			    path, (long long)json_integer_value(mn));
	if (mx && n > json_integer_value(mx))
		return fail(c, s, "maxLength", path,
			    "%s '%s': has %lld characters, more than the limit of %lld", w, path, n,
			    (long long)json_integer_value(mx));
	return ZCOR_OK;
}

static int check_number(const struct ctx *c, const json_t *s, const json_t *v, const char *path)
{
	double d = json_number_value(v);
	json_t *mn = json_object_get(s, "minimum"), *mx = json_object_get(s, "maximum");
	if ((mn && d < json_number_value(mn)) || (mx && d > json_number_value(mx))) {
		const char *kw = mn && d < json_number_value(mn) ? "minimum" : "maximum";
		if (mn && mx)
			return fail(c, s, kw, path, "%s '%s': must be between %g and %g", c->st->word,
				    path, json_number_value(mn), json_number_value(mx));
		return fail(c, s, kw, path, "%s '%s': must be %s %g", c->st->word, path,
			    mn ? "at least" : "at most", json_number_value(mn ? mn : mx));
	}
	return ZCOR_OK;
}

static int check_array(const struct ctx *c, const json_t *s, const json_t *v, const char *path)
{
	const char *w = c->st->word;
	json_t *mn = json_object_get(s, "minItems"), *mx = json_object_get(s, "maxItems");
	json_int_t n = (json_int_t)json_array_size(v);
	int rc;
	if (mn && n < json_integer_value(mn))
		return fail(c, s, "minItems", path, "%s '%s': needs at least %lld items", w, path,
			    (long long)json_integer_value(mn));
	if (mx && n > json_integer_value(mx))
		return fail(c, s, "maxItems", path, "%s '%s': takes at most %lld items", w, path,
			    (long long)json_integer_value(mx));
	json_t *items = json_object_get(s, "items");
	size_t i, j;
	json_t *x;
	json_array_foreach(v, i, x) {
		char sub[256];
		sub_index(sub, sizeof(sub), path, i);
		if (items && (rc = check(c, items, x, sub)))
			return xerror(s, "items") ? why_at(c, path, xerror(s, "items")) : rc;
		if (json_is_true(json_object_get(s, "uniqueItems")))
			for (j = 0; j < i; j++)
				if (json_equal(json_array_get(v, j), x))
					return fail(c, s, "uniqueItems", path,
						    "%s '%s': item %zu repeats item %zu", w, path, i, j);
	}
	return ZCOR_OK;
}

/* The style's rule for "format" (a value that is not null). */
static int check_format(const struct ctx *c, const json_t *s, const json_t *v, const char *path)
{
	const char *name = json_string_value(json_object_get(s, "format"));
	if (!name || json_is_null(v))
		return ZCOR_OK;
	const struct zc_schema_format *f = c->st->formats;
	while (f && f->name && strcmp(f->name, name))
		f++;
	assert(f && f->name && "a schema names a format its caller checks");
	int rc = f->check(v, path, c->e);
	if (rc && xerror(s, "format"))
		return why_at(c, path, xerror(s, "format"));
	return rc;
}

static int check_here(const struct ctx *c, const json_t *s, const json_t *v, const char *path)
{
	int rc = check_type(c, s, v, path);
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
			rc = fail(c, s, "enum", path, "%s '%s': must be one of %s", c->st->word, path, list);
			zc_free(list); /* json_dumps allocates through zc_malloc (zcor.c) */
			return rc;
		}
	}
	if (json_is_string(v) && (rc = check_string(c, s, v, path)))
		return rc;
	if (json_is_number(v) && (rc = check_number(c, s, v, path)))
		return rc;
	if ((rc = check_format(c, s, v, path)))
		return rc;
	if (json_is_array(v))
		return check_array(c, s, v, path);
	if (json_is_object(v))
		return check_object(c, s, v, path);
	return ZCOR_OK;
}

/* A value against its schema; the schema's "x-error" string, when it has
 * one, is the reason for any failure of the value or below it. */
static int check(const struct ctx *c, const json_t *s, const json_t *v, const char *path)
{
	int rc = check_here(c, s, v, path);
	json_t *x = json_object_get(s, "x-error");
	if (rc && json_is_string(x))
		return why_at(c, path, json_string_value(x));
	return rc;
}

int zc_schema_check(const json_t *schema, const json_t *value, struct zc_err *e)
{
	if (!json_is_object(value))
		return zc_fail(e, ZCOR_EINVAL, "arguments must be a JSON object");
	struct ctx c = {&tool_style, e};
	return check(&c, schema, value, "");
}

int zc_schema_check_as(const json_t *schema, const json_t *value, const char *path,
		       const struct zc_schema_style *st, struct zc_err *e)
{
	assert(st->key_chars > 0 && st->key_chars <= 100);
	struct ctx c = {st, e};
	return check(&c, schema, value, path);
}

const json_t *zc_schema_of(struct zc_schema_text *t)
{
	pthread_mutex_lock(&t->mu);
	if (!t->parsed) {
		json_error_t je;
		t->parsed = json_loads(t->text, JSON_REJECT_DUPLICATES, &je);
		/* our own text: one that does not parse is a bug, not the world's mistake */
		assert(t->parsed && "a schema declared in zcor parses");
	}
	pthread_mutex_unlock(&t->mu);
	return t->parsed;
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
