/*
 * json.c — jansson helpers (see json.h). Base layer: parsing with clear
 * messages, nesting depth, dumping; it never knows what a document means.
 */
#include "base/json.h"

#include <assert.h>
#include <stdint.h>
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

/*
 * JSON string escapes, jansson's (dump.c) unless low: '"' and '\\'
 * backslashed, \b \f \n \r \t, other bytes below 0x20 as \u00XX; with
 * low every byte below 0x20 as \u00xx (zc_json_buf_string's own form).
 * EXTRA[low][c] is the bytes c adds: 0 for every byte left as it is.
 */
#define CTL5 5, 5, 5, 5, 5, 5, 5, 5
static const unsigned char EXTRA[2][256] = {
	{CTL5, 1, 1, 1, 5, 1, 1, 5, 5, CTL5, 5, 5, 5, 5, 5, 5, 5, 5, [0x22] = 1, [0x5c] = 1},
	{CTL5, CTL5, CTL5, CTL5, [0x22] = 1, [0x5c] = 1},
};
#undef CTL5

/* Eight bytes at a time (issue 19: a 64-hit answer escaped into MCP's
 * text was 0.75 M instructions a byte at a time): 0x80 in exactly the
 * bytes of y that are zero, and in exactly those of x that are escaped in
 * both forms (below 0x20, '"', '\\'), with no carry between bytes. */
#define ONES 0x0101010101010101ULL
#define LOW7 0x7F7F7F7F7F7F7F7FULL
static inline uint64_t zero_bytes(uint64_t y) { return ~(((y & LOW7) + LOW7) | y | LOW7); }
static inline uint64_t quote_bytes(uint64_t x)
{
	return zero_bytes(x ^ (ONES * '"')) | zero_bytes(x ^ (ONES * '\\'));
}
static inline uint64_t control_bytes(uint64_t x) { return zero_bytes(x & (ONES * 0xE0)); }

static inline char *put_escaped(char *o, unsigned char c, const unsigned char *extra, const char *hex)
{
	if (!extra[c]) {
		*o++ = (char)c;
		return o;
	}
	*o++ = '\\';
	if (extra[c] == 5) {
		o[0] = 'u';
		o[1] = o[2] = '0';
		o[3] = hex[c >> 4];
		o[4] = hex[c & 15];
		return o + 5;
	}
	*o++ = c == '\b' ? 'b' : c == '\f' ? 'f' : c == '\n' ? 'n' : c == '\r' ? 'r' : c == '\t' ? 't' : (char)c;
	return o;
}

/* Appends the len bytes at s as a JSON string literal in one pass, eight
 * plain bytes copied at once. Room is made for twice what is left plus a
 * margin (a quote or backslash doubles; a control byte, rare, becomes
 * six), checked before each chunk of eight. */
static void buf_string(struct zc_buf *b, const char *s, size_t len, int low)
{
	enum { MARGIN = 8 * 6 + 8 }; /* a chunk all controls, and a store of 8 past it */
	static const char hex_low[] = "0123456789abcdef", hex_up[] = "0123456789ABCDEF";
	const unsigned char *u = (const unsigned char *)s, *extra = EXTRA[low != 0];
	const char *hex = low ? hex_low : hex_up;
	zc_buf_grow(b, 2 * len + MARGIN);
	char *o = b->p + b->len, *end = b->p + b->cap;
	*o++ = '"';
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		if ((size_t)(end - o) < MARGIN) {
			b->len = (size_t)(o - b->p);
			zc_buf_grow(b, 2 * (len - i) + MARGIN);
			o = b->p + b->len;
			end = b->p + b->cap;
		}
		uint64_t x;
		memcpy(&x, u + i, 8);
		uint64_t m = quote_bytes(x) | control_bytes(x);
		if (!m) {
			memcpy(o, u + i, 8);
			o += 8;
			continue;
		}
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		/* the marks in byte order: the plain bytes before each, then
		 * its escape */
		size_t at = 0;
		do {
			size_t k = (size_t)__builtin_ctzll(m) >> 3;
			uint64_t rest = x >> (8 * at); /* at < 8: the chunk from at on */
			memcpy(o, &rest, 8);
			o += k - at;
			o = put_escaped(o, u[i + k], extra, hex);
			at = k + 1;
			m &= m - 1;
		} while (m);
		if (at < 8) {
			uint64_t rest = x >> (8 * at);
			memcpy(o, &rest, 8);
			o += 8 - at;
		}
#else
		for (size_t j = i; j < i + 8; j++)
			o = put_escaped(o, u[j], extra, hex);
#endif
	}
	/* fewer than 8 left: at most 7 * 6 + 2 bytes, inside the margin */
	if ((size_t)(end - o) < MARGIN) {
		b->len = (size_t)(o - b->p);
		zc_buf_grow(b, MARGIN);
		o = b->p + b->len;
	}
	for (; i < len; i++)
		o = put_escaped(o, u[i], extra, hex);
	*o++ = '"';
	*o = '\0';
	b->len = (size_t)(o - b->p);
	assert(b->len < b->cap);
}

/* v as jansson's json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) writes it,
 * byte for byte (tests/unit/test_base.c compares them), without its
 * callback per piece and its UTF-8 walk of every string: a search's 64
 * hits cost 3.1 M instructions to dump (issue 19). Reals are jansson's own
 * text; our trees hold no cycles (jansson would refuse one). */
static void dump_to(struct zc_buf *b, const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		const char *k;
		size_t klen;
		json_t *x;
		int first = 1;
		zc_buf_addc(b, '{');
		json_object_keylen_foreach((json_t *)v, k, klen, x) {
			if (!first)
				zc_buf_addc(b, ',');
			first = 0;
			buf_string(b, k, klen, 0);
			zc_buf_addc(b, ':');
			dump_to(b, x);
		}
		zc_buf_addc(b, '}');
		break;
	}
	case JSON_ARRAY:
		zc_buf_addc(b, '[');
		for (size_t i = 0; i < json_array_size(v); i++) {
			if (i)
				zc_buf_addc(b, ',');
			dump_to(b, json_array_get(v, i));
		}
		zc_buf_addc(b, ']');
		break;
	case JSON_STRING:
		buf_string(b, json_string_value(v), json_string_length(v), 0);
		break;
	case JSON_INTEGER:
		zc_buf_addll(b, (long long)json_integer_value(v));
		break;
	case JSON_TRUE:
		zc_buf_adds(b, "true");
		break;
	case JSON_FALSE:
		zc_buf_adds(b, "false");
		break;
	case JSON_NULL:
		zc_buf_adds(b, "null");
		break;
	default: { /* JSON_REAL */
		char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
		if (!s) {
			fputs("zcor: out of memory\n", stderr); /* the one policy: alloc.h */
			abort();
		}
		zc_buf_adds(b, s);
		zc_free(s);
	}
	}
}

char *zc_json_dump(const json_t *v)
{
	struct zc_buf b = ZC_BUF_INIT;
	dump_to(&b, v);
	return zc_buf_detach(&b);
}

void zc_json_buf_dump(struct zc_buf *b, const json_t *v) { dump_to(b, v); }

void zc_json_buf_stringn(struct zc_buf *b, const char *s, size_t len) { buf_string(b, s, len, 0); }

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

void zc_json_buf_string(struct zc_buf *b, const char *s) { buf_string(b, s, strlen(s), 1); }

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

void zc_json_array_sort(json_t *arr, int (*cmp)(const void *, const void *))
{
	size_t n = json_array_size(arr);
	json_t **v = zc_calloc(n + 1, sizeof(*v));
	for (size_t i = 0; i < n; i++)
		v[i] = json_incref(json_array_get(arr, i));
	qsort(v, n, sizeof(*v), cmp);
	json_array_clear(arr);
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, v[i]);
	zc_free(v);
}
