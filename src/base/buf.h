/*
 * buf.h — a growable byte buffer (after git's strbuf). Always NUL-terminated.
 * A zeroed struct is a valid empty buffer; zc_buf_release() frees it.
 */
#ifndef ZC_BUF_H
#define ZC_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct zc_buf {
	char *p;
	size_t len;
	size_t cap;
};

#define ZC_BUF_INIT {NULL, 0, 0}

void zc_buf_grow(struct zc_buf *b, size_t extra);
void zc_buf_add(struct zc_buf *b, const void *data, size_t n);
void zc_buf_adds(struct zc_buf *b, const char *s);
void zc_buf_addc(struct zc_buf *b, char c);
/* v in decimal, as "%lld" writes it (without printf's cost). */
void zc_buf_addll(struct zc_buf *b, long long v);
void zc_buf_addf(struct zc_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void zc_buf_vaddf(struct zc_buf *b, const char *fmt, va_list ap);
void zc_buf_reset(struct zc_buf *b);
/* The string ("" for an empty buffer); valid until the next change. */
const char *zc_buf_str(const struct zc_buf *b);
/* Hands the string to the caller (who frees it with zc_free); empties b. */
char *zc_buf_detach(struct zc_buf *b);
void zc_buf_release(struct zc_buf *b);

#endif
