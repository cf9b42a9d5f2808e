/*
 * norm.h — the one text normalisation of zcor: Unicode NFKC with case
 * folding (ICU's NFKC_Casefold), used wherever the seeds say "NFKC +
 * case fold" (search, query, history keywords, synonyms, recall terms).
 */
#ifndef ZC_NORM_H
#define ZC_NORM_H

#include <stddef.h>

/* Normalised copy of UTF-8 text (caller frees with zc_free). Invalid
 * UTF-8 sequences become U+FFFD. Never NULL. */
char *zc_norm(const char *s);
char *zc_norm_n(const char *s, size_t len);
/* Number of Unicode code points in valid UTF-8 text. */
size_t zc_utf8_len(const char *s);
/* 1 if s is valid UTF-8 without NUL bytes before len. */
int zc_utf8_valid(const char *s, size_t len);
/* A copy of s with every invalid UTF-8 byte replaced by U+FFFD, for
 * putting text from outside (a path, a decoded URI) into JSON. Caller
 * frees; never NULL. */
char *zc_utf8_lossy(const char *s);
/* Byte length of the first max code points of s (for cutting text). */
size_t zc_utf8_prefix(const char *s, size_t max_chars);

#endif
