/*
 * buf.c — growable NUL-terminated byte buffer. Base layer. Bounded only
 * by memory: it never decides a limit (callers that read from the world
 * cap the size themselves) and never leaves the buffer without its NUL.
 */
#include "base/buf.h"

#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"

/* The invariant of every buffer: empty and unallocated, or its text and
 * NUL inside what is allocated. */
#define BUF_OK(b) ((b) && ((b)->p ? (b)->len < (b)->cap : (b)->len == 0 && (b)->cap == 0))

void zc_buf_grow(struct zc_buf *b, size_t extra)
{
	assert(BUF_OK(b));
	/* a size near SIZE_MAX is a caller's bug: input is capped before */
	assert(extra < SIZE_MAX / 4 - b->len);
	size_t need = b->len + extra + 1;
	if (need <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap *= 2;
	b->p = zc_realloc(b->p, cap);
	b->cap = cap;
}

void zc_buf_add(struct zc_buf *b, const void *data, size_t n)
{
	assert(data || n == 0);
	zc_buf_grow(b, n);
	if (n)
		memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void zc_buf_adds(struct zc_buf *b, const char *s) { zc_buf_add(b, s, strlen(s)); }

void zc_buf_addc(struct zc_buf *b, char c) { zc_buf_add(b, &c, 1); }

void zc_buf_addll(struct zc_buf *b, long long v)
{
	char t[24], *o = t + sizeof(t);
	unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
	do {
		*--o = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		*--o = '-';
	zc_buf_add(b, o, (size_t)(t + sizeof(t) - o));
}

void zc_buf_vaddf(struct zc_buf *b, const char *fmt, va_list ap)
{
	assert(BUF_OK(b) && fmt);
	va_list cp;
	va_copy(cp, ap);
	int n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n <= 0)
		return;
	zc_buf_grow(b, (size_t)n);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
}

void zc_buf_addf(struct zc_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	zc_buf_vaddf(b, fmt, ap);
	va_end(ap);
}

void zc_buf_reset(struct zc_buf *b)
{
	assert(BUF_OK(b));
	b->len = 0;
	if (b->p)
		b->p[0] = '\0';
}

const char *zc_buf_str(const struct zc_buf *b) { return b->p ? b->p : ""; }

char *zc_buf_detach(struct zc_buf *b)
{
	assert(BUF_OK(b));
	char *p = b->p ? b->p : zc_strdup("");
	b->p = NULL;
	b->len = b->cap = 0;
	return p;
}

void zc_buf_release(struct zc_buf *b)
{
	zc_free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}
