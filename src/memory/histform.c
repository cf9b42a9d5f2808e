/*
 * histform.c — the stored form of a history record's snapshots (schema
 * 10, docs/FORMATS.md): zc_hist_pack compacts a record's before/after
 * images as op.c writes them, zc_hist_expand gives history.c's readers
 * the full snapshots back.
 *
 * Memory layer, below the runner: pure JSON (base/ only). The runner calls
 * it for every record, so it must never call the runner, the store or
 * any other module of memory/.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/json.h"
#include "base/timeutil.h"
#include "memory/memory.h"
/* ---- compact snapshots (schema 10) -----------------------------------
 *
 * A node or person snapshot (zc_node_from_row, zc_person_from_row: a fixed
 * set of keys in a fixed order) is stored as an object {"~": template,
 * ...} holding only what cannot be told otherwise:
 *   - a field equal to its default (null, false, [], {}, "global",
 *     "memory", "hot", 0) is left out;
 *   - "~a": bit i set when field i equals the same key of the call's
 *     arguments (a create's title, content, keywords);
 *   - "~t": bit i set when field i is the record's own time (createdAt
 *     and updatedAt of what the call wrote);
 *   - "~d": j in a before-image: a field left out has the value of the
 *     record's after-image j (the same record: an update's delta), used
 *     when it is smaller than the before-image on its own.
 * Anything else is stored as it was; an object of another shape that has
 * a "~" key of its own is wrapped as {"~": 0, "v": it}. Records written
 * before schema 10 hold full snapshots, which read back as they are. Every
 * reader gets the full snapshots: the stored form never leaves this file
 * (zc_hist_pack in, zc_hist_expand out).
 */

enum { TPL_WRAPPED = 0, TPL_NODE = 1, TPL_PERSON = 2, TPL_COUNT = 3, TPL_MAX_FIELDS = 32 };

static const char *const node_keys[] = {
	"id", "title", "content", "keywords", "parentId", "sourceMessage", "important",
	"supersededBy", "supersededReason", "mergedFrom", "mergedReason", "scope", "kind", "section",
	"pinned", "date", "expires", "confidence", "tier", "archiveMonth", "attrs", "createdAt",
	"updatedAt", "hits", "lastHitAt", NULL};
static const char *const node_dflt[] = {
	NULL, NULL, NULL, "[]", "null", "null", "false", "null", "null", "null", "null",
	"\"global\"", "\"memory\"", "null", "false", "null", "null", "null", "\"hot\"", "null", "{}",
	NULL, NULL, "0", "null"};
static const char *const person_keys[] = {
	"personId", "name", "aliases", "relationship", "affinity", "reason", "memoryNodeId",
	"firstSeen", "confidence", "createdAt", "updatedAt", NULL};
static const char *const person_dflt[] = {
	NULL, NULL, "[]", "\"\"", "0", "\"\"", "null", "null", "null", NULL, NULL};

static const struct tpl {
	const char *const *keys; /* in the snapshot's order; field 0 identifies the record */
	const char *const *dflt; /* JSON text of each field's default; NULL: none */
} tpls[TPL_COUNT] = {
	[TPL_NODE] = {node_keys, node_dflt},
	[TPL_PERSON] = {person_keys, person_dflt},
};

static json_t *dflt_json[TPL_COUNT][TPL_MAX_FIELDS];
static size_t tpl_len[TPL_COUNT];
static pthread_once_t tpl_once = PTHREAD_ONCE_INIT;

static void parse_defaults(void)
{
	for (int t = 1; t < TPL_COUNT; t++) {
		size_t n = 0;
		for (; tpls[t].keys[n]; n++) {
			if (n >= TPL_MAX_FIELDS)
				abort(); /* our own table */
			const char *d = tpls[t].dflt[n];
			dflt_json[t][n] = d ? json_loads(d, JSON_DECODE_ANY, NULL) : NULL;
		}
		tpl_len[t] = n;
	}
}

/* The template whose keys s has, exactly and in order, or -1. */
static int template_of(const json_t *s)
{
	if (!json_is_object(s))
		return -1;
	pthread_once(&tpl_once, parse_defaults);
	for (int t = 1; t < TPL_COUNT; t++) {
		if (json_object_size(s) != tpl_len[t])
			continue;
		size_t i = 0;
		void *it = json_object_iter((json_t *)s);
		for (; it && strcmp(json_object_iter_key(it), tpls[t].keys[i]) == 0; i++)
			it = json_object_iter_next((json_t *)s, it);
		if (i == tpl_len[t])
			return t;
	}
	return -1;
}

static json_t *compact_one(const json_t *s, const json_t *args, const char *at)
{
	int t = template_of(s);
	if (t < 0)
		return json_is_object(s) && json_object_get(s, "~")
			       ? json_pack("{s:i, s:O}", "~", TPL_WRAPPED, "v", s)
			       : json_deep_copy(s);
	json_t *c = json_pack("{s:i}", "~", t);
	json_int_t from_args = 0, from_time = 0;
	for (size_t i = 0; i < tpl_len[t]; i++) {
		const char *k = tpls[t].keys[i];
		json_t *v = json_object_get(s, k);
		if (dflt_json[t][i] && json_equal(v, dflt_json[t][i]))
			continue;
		if (json_is_object(args) && json_equal(json_object_get(args, k), v))
			from_args |= (json_int_t)1 << i;
		else if (json_is_string(v) && strcmp(json_string_value(v), at) == 0)
			from_time |= (json_int_t)1 << i;
		else
			json_object_set(c, k, v);
	}
	if (from_args)
		json_object_set_new(c, "~a", json_integer(from_args));
	if (from_time)
		json_object_set_new(c, "~t", json_integer(from_time));
	return c;
}

/* b as a delta against a (both of template t): only what differs. */
static json_t *delta_one(int t, const json_t *b, const json_t *a, size_t j)
{
	json_t *d = json_pack("{s:i, s:I}", "~", t, "~d", (json_int_t)j);
	for (size_t i = 0; i < tpl_len[t]; i++) {
		const char *k = tpls[t].keys[i];
		json_t *v = json_object_get(b, k);
		if (!json_equal(v, json_object_get(a, k)))
			json_object_set(d, k, v);
	}
	return d;
}

/* The after-image of the same record as b (template t), or -1. */
static long same_record(int t, const json_t *b, const json_t *after)
{
	const char *k = tpls[t].keys[0];
	size_t j;
	json_t *a;
	json_array_foreach(after, j, a) {
		if (template_of(a) == t && json_equal(json_object_get(a, k), json_object_get(b, k)))
			return (long)j;
	}
	return -1;
}

static char *dump_or_null(json_t *v)
{
	char *s = v ? zc_json_dump(v) : NULL;
	json_decref(v);
	return s;
}

void zc_hist_pack(const json_t *before, const json_t *after, const json_t *args, int64_t at,
		  char **before_text, char **after_text)
{
	char iso[ZC_TIME_LEN];
	zc_time_format(at, iso);
	json_t *pa = after ? json_array() : NULL, *pb = before ? json_array() : NULL;
	size_t i;
	json_t *s;
	json_array_foreach(after, i, s) json_array_append_new(pa, compact_one(s, args, iso));
	json_array_foreach(before, i, s) {
		json_t *c = compact_one(s, args, iso);
		int t = template_of(s);
		long j = t > 0 ? same_record(t, s, after) : -1;
		if (j >= 0) {
			json_t *d = delta_one(t, s, json_array_get(after, (size_t)j), (size_t)j);
			char *cs = zc_json_dump(c), *ds = zc_json_dump(d);
			int smaller = strlen(ds) < strlen(cs);
			zc_free(cs);
			zc_free(ds);
			if (smaller) {
				json_decref(c);
				c = d;
			} else {
				json_decref(d);
			}
		}
		json_array_append_new(pb, c);
	}
	*before_text = dump_or_null(pb);
	*after_text = dump_or_null(pa);
}

/* The full snapshot of stored element c; base: the record's full
 * after-images (for a delta), or NULL while they are being expanded. */
static json_t *expand_one(const json_t *c, const json_t *args, const char *at, const json_t *base)
{
	json_t *tv = json_is_object(c) ? json_object_get(c, "~") : NULL;
	if (!json_is_integer(tv))
		return json_deep_copy(c);
	json_int_t t = json_integer_value(tv);
	if (t <= TPL_WRAPPED || t >= TPL_COUNT)
		return json_deep_copy(json_object_get(c, "v"));
	pthread_once(&tpl_once, parse_defaults);
	json_int_t from_args = json_integer_value(json_object_get(c, "~a"));
	json_int_t from_time = json_integer_value(json_object_get(c, "~t"));
	json_t *dj = json_object_get(c, "~d");
	const json_t *delta = dj && base ? json_array_get(base, (size_t)json_integer_value(dj)) : NULL;
	json_t *full = json_object();
	for (size_t i = 0; i < tpl_len[t]; i++) {
		const char *k = tpls[t].keys[i];
		json_t *v = json_object_get(c, k);
		if (v)
			json_object_set(full, k, v);
		else if (from_args >> i & 1)
			json_object_set(full, k, json_object_get(args, k));
		else if (from_time >> i & 1)
			json_object_set_new(full, k, json_string(at));
		else if (delta)
			json_object_set(full, k, json_object_get(delta, k));
		else
			json_object_set_new(full, k, dflt_json[t][i] ? json_deep_copy(dflt_json[t][i])
								  : json_null());
	}
	return full;
}

json_t *zc_hist_expand(json_t *stored, const json_t *args, const char *at, const json_t *base)
{
	if (!json_is_array(stored))
		return stored;
	json_t *out = json_array();
	size_t i;
	json_t *c;
	json_array_foreach(stored, i, c) json_array_append_new(out, expand_one(c, args, at, base));
	json_decref(stored);
	return out;
}
