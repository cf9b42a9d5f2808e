/*
 * schema.h — checks tool arguments against their JSON Schema (the subset
 * zcor's schemas use: type, properties, required, additionalProperties,
 * items, enum, minLength/maxLength in characters, minimum/maximum,
 * minItems/maxItems, uniqueItems). Errors name the argument and say what
 * it must be. Text layer (it counts characters with text/norm.h), so that
 * every layer above can check its input with it: tools' arguments today,
 * and memory's and recall's requests.
 */
#ifndef ZC_SCHEMA_H
#define ZC_SCHEMA_H

#include <jansson.h>

#include "base/err.h"

int zc_schema_check(const json_t *schema, const json_t *value, struct zc_err *e);
/* After a successful check: integral reals given for "integer" arguments
 * (50.0) become integers, so handlers read them with json_integer_value. */
void zc_schema_coerce(const json_t *schema, json_t *args);

#endif
