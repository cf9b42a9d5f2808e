/*
 * schema.h — checks input against its JSON Schema (the subset zcor's
 * schemas use: type, properties, required, additionalProperties, items,
 * enum, minLength/maxLength in characters, minimum/maximum,
 * minItems/maxItems, uniqueItems, format), for tools' arguments, the
 * recall request and the log batch alike. Errors name the argument or
 * field and say what it must be. Text layer (it counts characters with
 * text/norm.h), so that every layer above can check its input with it.
 *
 * A keyword of our own (JSON Schema ignores it) says how errors read:
 *   "x-error": "why"    any failure of this value or below it reads
 *                       "<word> '<path>': why" (just "why" at the root)
 *   "x-error": {kw: "why", …}
 *                       a failure of keyword kw of this value reads so;
 *                       "items" covers any failure inside an item, and a
 *                       property's own "required" (or its string) says
 *                       why it is missing; "additionalProperties" is the
 *                       whole message, "{key}" standing for the unknown
 *                       key's path
 * The standard "format" names a rule the schema cannot say (a
 * conversation key's grammar, a time); the caller's style holds the
 * table that checks it, on every value but null.
 */
#ifndef ZC_SCHEMA_H
#define ZC_SCHEMA_H

#include <jansson.h>
#include <pthread.h>

#include "base/err.h"

/* A named rule behind "format": checks v (never null) found at path. */
struct zc_schema_format {
	const char *name;
	int (*check)(const json_t *v, const char *path, struct zc_err *e);
};

/* How one caller's errors read. */
struct zc_schema_style {
	const char *word; /* "argument" (tools) or "field" */
	int key_chars;    /* an unknown key is quoted up to this many characters (<= 100) */
	/* 1: the unknown keys first, then the properties in the schema's order
	 * (a missing required one at its turn), so the first mistake named is
	 * the same whatever the input's key order; 0: the input's order, the
	 * missing required ones first (tools) */
	int schema_order;
	/* 1: strings may hold NUL characters (read up to the first one, as the
	 * recall request and the log batch always have); 0: refused */
	int nul_ok;
	const struct zc_schema_format *formats; /* {NULL}-terminated, or NULL */
};

/* Tools' arguments: "argument 'x': …", the input's order, NUL refused. */
int zc_schema_check(const json_t *schema, const json_t *value, struct zc_err *e);
/* value found at path ("" for a request itself, "messages[3]" for a part
 * checked on its own) against schema, its errors read as st says. */
int zc_schema_check_as(const json_t *schema, const json_t *value, const char *path,
		       const struct zc_schema_style *st, struct zc_err *e);
/* After a successful check: integral reals given for "integer" arguments
 * (50.0) become integers, so handlers read them with json_integer_value. */
void zc_schema_coerce(const json_t *schema, json_t *args);

/* A schema declared as text, parsed the first time it is used and kept
 * for the process (the tools' are parsed so too). A text that does not
 * parse is our own bug (assert). */
struct zc_schema_text {
	const char *text;
	pthread_mutex_t mu;
	json_t *parsed;
};
#define ZC_SCHEMA_TEXT(text) {(text), PTHREAD_MUTEX_INITIALIZER, NULL}
const json_t *zc_schema_of(struct zc_schema_text *t);

#endif
