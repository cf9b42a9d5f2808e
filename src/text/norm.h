/*
 * norm.h — the one text normalisation of zcor: Unicode NFKC with case
 * folding (ICU's NFKC_Casefold), used wherever the seeds say "NFKC +
 * case fold" (search, query, history keywords, synonyms, recall terms).
 */
#ifndef ZC_NORM_H
#define ZC_NORM_H

#include <stddef.h>

#include "base/utf8.h" /* zc_utf8_valid, _len, _prefix, _lossy */

/* Normalised copy of UTF-8 text (caller frees with zc_free). Invalid
 * UTF-8 sequences become U+FFFD. Never NULL. */
char *zc_norm(const char *s);
char *zc_norm_n(const char *s, size_t len);

#endif
