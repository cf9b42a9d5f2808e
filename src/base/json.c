/*
 * json.c — jansson helpers (see json.h). Base layer: parsing with clear
 * messages, nesting depth, dumping; it never knows what a document means.
 */
#include "base/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/timeutil.h"
#include "base/utf8.h"

int zc_json_parse(const char *text, size_t len, const char *what, json_t **out, struct zc_err *e)
{
	json_error_t je;
	*out = json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je);
	if (!*out)
		return zc_fail(e, ZCOR_EINVAL, "invalid JSON in %s at line %d column %d: %s", what,
			       je.line, je.column, je.text);
	return ZCOR_OK;
}

char *zc_json_dump(const json_t *v)
{
	char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	if (!s) {
		fputs("zcor: out of memory\n", stderr); /* the one policy: alloc.h */
		abort();
	}
	return s;
}

const char *zc_json_str(const json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

void zc_json_set_str(json_t *obj, const char *key, const char *s)
{
	json_t *v = s ? json_string(s) : json_null();
	if (!v) {
		/* not UTF-8 (a row from an old import): shown with U+FFFD, not dropped */
		char *ok = zc_utf8_lossy(s);
		v = json_string(ok);
		zc_free(ok);
	}
	json_object_set_new(obj, key, v);
}

void zc_json_set_time(json_t *obj, const char *key, long long ms)
{
	if (ms < 0) {
		json_object_set_new(obj, key, json_null());
		return;
	}
	char t[ZC_TIME_LEN];
	zc_time_format(ms, t);
	json_object_set_new(obj, key, json_string(t));
}

/* Removes the last element of d's longest array; 0 when none is left. */
static int drop_one(json_t *d)
{
	json_t *longest = NULL, *v;
	const char *k;
	json_object_foreach(d, k, v) {
		if (json_is_array(v) && json_array_size(v) &&
		    (!longest || json_array_size(v) > json_array_size(longest)))
			longest = v;
	}
	return longest && json_array_remove(longest, json_array_size(longest) - 1) == 0;
}

void zc_json_err_detail(struct zc_err *e, json_t *d)
{
	if (e) {
		e->detail[0] = '\0';
		for (;;) {
			char *s = zc_json_dump(d);
			size_t n = strlen(s);
			if (n < sizeof(e->detail))
				memcpy(e->detail, s, n + 1);
			zc_free(s);
			if (n < sizeof(e->detail) || !drop_one(d))
				break;
		}
	}
	json_decref(d);
}

int zc_json_depth(const json_t *v)
{
	int max = 0;
	if (json_is_object(v)) {
		const char *k;
		json_t *x;
		json_object_foreach((json_t *)v, k, x) {
			int d = zc_json_depth(x);
			if (d > max)
				max = d;
		}
		return max + 1;
	}
	if (json_is_array(v)) {
		size_t i;
		json_t *x;
		json_array_foreach(v, i, x) {
			int d = zc_json_depth(x);
			if (d > max)
				max = d;
		}
		return max + 1;
	}
	return 0;
}

json_t *zc_json_string_own(char *s)
{
	json_t *v = json_string(s);
	zc_free(s);
	return v ? v : json_string("");
}

void zc_json_buf_string(struct zc_buf *b, const char *s)
{
	/* measured first, then written in place: byte by byte through
	 * zc_buf_addc, a 30 KB tool answer over MCP cost 2.5 M instructions
	 * (issue 19) */
	static const char hex[] = "0123456789abcdef";
	size_t n = 2;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		n += *p == '"' || *p == '\\' ? 2 : *p < 0x20 ? 6 : 1;
	zc_buf_grow(b, n);
	char *o = b->p + b->len;
	*o++ = '"';
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\') {
			*o++ = '\\';
			*o++ = (char)*p;
		} else if (*p < 0x20) {
			memcpy(o, "\\u00", 4);
			o[4] = hex[*p >> 4];
			o[5] = hex[*p & 15];
			o += 6;
		} else {
			*o++ = (char)*p;
		}
	}
	*o++ = '"';
	*o = '\0';
	b->len += n;
}

long long zc_json_get_ms(const json_t *obj, const char *key, long long dflt)
{
	const json_t *v = json_object_get(obj, key);
	return json_is_integer(v) ? (long long)json_integer_value(v) : zc_json_get_time(obj, key, dflt);
}

long long zc_json_get_time(const json_t *obj, const char *key, long long dflt)
{
	const char *s = zc_json_str(obj, key);
	int64_t ms;
	return s && zc_time_parse(s, key, &ms, NULL) == ZCOR_OK ? ms : dflt;
}
