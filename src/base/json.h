/*
 * json.h — small helpers over jansson used across layers.
 */
#ifndef ZC_JSON_H
#define ZC_JSON_H

#include <jansson.h>

#include "base/err.h"

/* Parses text as JSON; errors give line and column. what names the input
 * ("arguments", "synonyms.json"). */
int zc_json_parse(const char *text, size_t len, const char *what, json_t **out, struct zc_err *e);
/* Compact UTF-8 text; caller frees with zc_free. */
char *zc_json_dump(const json_t *v);
/* Member string or NULL if absent / not a string. */
const char *zc_json_str(const json_t *obj, const char *key);
/* Sets key to a string, or null when s is NULL; bytes that are not UTF-8
 * (a row written before validation) become U+FFFD instead of losing key. */
void zc_json_set_str(json_t *obj, const char *key, const char *s);
/* The instant in key (ISO-8601 with a zone), or dflt when absent or not one. */
long long zc_json_get_time(const json_t *obj, const char *key, long long dflt);
/* The instant in key as our own operations hand it: an integer of ms, or
 * ISO-8601 text as zc_json_get_time; dflt otherwise. */
long long zc_json_get_ms(const json_t *obj, const char *key, long long dflt);
/* Sets key to the ISO-8601 text of ms, or null when ms < 0. */
void zc_json_set_time(json_t *obj, const char *key, long long ms);
/* A JSON string that takes over s (a zc_malloc'ed UTF-8 string). */
json_t *zc_json_string_own(char *s);
/* Appends s to b as a JSON string literal (quotes and escapes). */
struct zc_buf;
void zc_json_buf_string(struct zc_buf *b, const char *s);
/* Appends what zc_json_dump(v) returns (jansson's compact text) to b. */
void zc_json_buf_dump(struct zc_buf *b, const json_t *v);
/* Appends the len bytes at s (valid UTF-8) as the JSON string literal
 * zc_json_dump writes for them (jansson's escapes: \n, \u001F). */
void zc_json_buf_stringn(struct zc_buf *b, const char *s, size_t len);
/* Sets e's detail (err.h) to the object d, taking it over. An array in d
 * loses its last elements until the text fits; the detail is the hint a
 * program acts on, the message keeps the whole story. */
void zc_json_err_detail(struct zc_err *e, json_t *d);
/* Depth of nesting (0 for a scalar). */
int zc_json_depth(const json_t *v);
/* Sorts the array's items in place by cmp, which is given two json_t **
 * (qsort's way). */
void zc_json_array_sort(json_t *arr, int (*cmp)(const void *, const void *));

#endif
