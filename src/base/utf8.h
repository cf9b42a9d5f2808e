/*
 * utf8.h — byte-level UTF-8: validity, cutting on character boundaries,
 * and quoting outside text into messages. Base layer: no ICU, no
 * allocation except zc_utf8_lossy. Normalisation lives in text/norm.h.
 *
 * Every message that quotes input (a name, a path, a method) quotes it
 * through ZC_Q, so a message never splits a character and never carries
 * invalid UTF-8 into JSON (jansson refuses such strings).
 */
#ifndef ZC_UTF8_H
#define ZC_UTF8_H

#include <stddef.h>

/* 1 if s is valid UTF-8 without NUL bytes before len. */
int zc_utf8_valid(const char *s, size_t len);
/* Length of the valid sequence starting at s (at most len bytes), or 0
 * when the bytes there are not one. */
size_t zc_utf8_seq(const char *s, size_t len);
/* Number of Unicode code points in valid UTF-8 text. */
size_t zc_utf8_len(const char *s);
/* Byte length of the first max code points of s (for cutting text). */
size_t zc_utf8_prefix(const char *s, size_t max_chars);
/* A copy of s with every invalid UTF-8 byte replaced by U+FFFD, for
 * putting text from outside (a path, a decoded URI) into JSON. Caller
 * frees; never NULL. */
char *zc_utf8_lossy(const char *s);
/* Replaces, in place, every byte of s that does not start or continue a
 * valid sequence with '?'; s stays the same length and is then valid. */
void zc_utf8_scrub(char *s);
/* Writes into buf (size n, at least 8) at most max_chars characters of s
 * (NULL reads as ""), invalid bytes as '?', and "…" when s was longer.
 * Returns buf. */
const char *zc_utf8_quote(char *buf, size_t n, const char *s, size_t max_chars);

/* The quoted form of s cut to n characters, in a buffer that lives until
 * the end of the enclosing block: zc_fail(e, c, "no tool '%s'", ZC_Q(s, 100)). */
#define ZC_Q(s, n) zc_utf8_quote((char[4 * (n) + 8]){0}, 4 * (n) + 8, (s), (n))

#endif
