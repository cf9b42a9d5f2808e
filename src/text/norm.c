/*
 * norm.c — NFKC + case folding through ICU (unorm2 NFKC_Casefold), and
 * UTF-8 counting. Text layer: pure functions, no store, no globals but
 * ICU's own immutable normaliser instance.
 */
#include "text/norm.h"

#include <assert.h>
#include <string.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>

#include "base/alloc.h"
#include "base/buf.h"

static UChar *to_utf16(const char *s, size_t len, int32_t *out_len)
{
	UErrorCode st = U_ZERO_ERROR;
	int32_t n = 0;
	u_strFromUTF8WithSub(NULL, 0, &n, s, (int32_t)len, 0xFFFD, NULL, &st);
	UChar *u = zc_malloc(((size_t)n + 1) * sizeof(UChar));
	st = U_ZERO_ERROR;
	u_strFromUTF8WithSub(u, n + 1, out_len, s, (int32_t)len, 0xFFFD, NULL, &st);
	if (U_FAILURE(st))
		*out_len = 0;
	return u;
}

static char *to_utf8(const UChar *u, int32_t len)
{
	UErrorCode st = U_ZERO_ERROR;
	int32_t n = 0;
	u_strToUTF8WithSub(NULL, 0, &n, u, len, 0xFFFD, NULL, &st);
	char *s = zc_malloc((size_t)n + 1);
	st = U_ZERO_ERROR;
	u_strToUTF8WithSub(s, n + 1, NULL, u, len, 0xFFFD, NULL, &st);
	if (U_FAILURE(st))
		n = 0;
	s[n] = '\0';
	return s;
}

char *zc_norm_n(const char *s, size_t len)
{
	assert(s || len == 0);
	/* ASCII without NUL: NFKC + case fold is exactly lowercasing (ICU's
	 * answer for every such character: test_text), with no UTF-16 round
	 * trip. zcor_memory_query's keyword test normalises the content of
	 * every record it tests (issue 19, schema 19) */
	size_t ascii = 0;
	while (ascii < len && (unsigned char)s[ascii] < 0x80 && s[ascii] != '\0')
		ascii++;
	if (ascii == len) {
		char *r = zc_malloc(len + 1);
		for (size_t i = 0; i < len; i++)
			r[i] = s[i] >= 'A' && s[i] <= 'Z' ? (char)(s[i] - 'A' + 'a') : s[i];
		r[len] = '\0';
		return r;
	}
	UErrorCode st = U_ZERO_ERROR;
	const UNormalizer2 *nfkc_cf = unorm2_getNFKCCasefoldInstance(&st);
	int32_t ulen = 0;
	UChar *u = to_utf16(s, len, &ulen);
	if (U_FAILURE(st) || ulen == 0) {
		zc_free(u);
		return ulen == 0 ? zc_strdup("") : zc_strndup(s, len);
	}
	st = U_ZERO_ERROR;
	int32_t cap = ulen * 3 + 16;
	UChar *out = zc_malloc((size_t)cap * sizeof(UChar));
	int32_t n = unorm2_normalize(nfkc_cf, u, ulen, out, cap, &st);
	if (st == U_BUFFER_OVERFLOW_ERROR) {
		zc_free(out);
		cap = n + 1;
		out = zc_malloc((size_t)cap * sizeof(UChar));
		st = U_ZERO_ERROR;
		n = unorm2_normalize(nfkc_cf, u, ulen, out, cap, &st);
	}
	char *r = U_FAILURE(st) ? zc_strndup(s, len) : to_utf8(out, n);
	zc_free(u);
	zc_free(out);
	return r;
}

char *zc_norm(const char *s) { return zc_norm_n(s, strlen(s)); }
