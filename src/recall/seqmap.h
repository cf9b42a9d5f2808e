/*
 * seqmap.h — a map from a record's seq (any integer >= 0) to a size_t,
 * open addressing, for the candidates of one recall. Private to
 * src/recall/ (recall.c, lexical.c); the functions are static so each
 * file has its own copy of this one definition.
 */
#ifndef ZC_SEQMAP_H
#define ZC_SEQMAP_H

#include <sqlite3.h>
#include <stddef.h>
#include <string.h>

#include "base/alloc.h"

struct zc_seqmap {
	sqlite3_int64 *key; /* seq + 1; 0 is an empty slot */
	size_t *val;
	size_t cap, n;
};

static inline size_t zc_seqmap_at(const struct zc_seqmap *m, sqlite3_int64 k)
{
	size_t i = (size_t)((unsigned long long)k * 0x9E3779B97F4A7C15ULL >> 7) & (m->cap - 1);
	while (m->key[i] && m->key[i] != k)
		i = (i + 1) & (m->cap - 1);
	return i;
}

/* The value of seq, a new 0 one if it had none (the map grows). */
static inline size_t *zc_seqmap_slot(struct zc_seqmap *m, sqlite3_int64 seq)
{
	if ((m->n + 1) * 2 > m->cap) {
		struct zc_seqmap old = *m;
		m->cap = old.cap ? old.cap * 2 : 256;
		m->key = zc_calloc(m->cap, sizeof(*m->key));
		m->val = zc_calloc(m->cap, sizeof(*m->val));
		m->n = 0;
		for (size_t i = 0; i < old.cap; i++)
			if (old.key[i])
				*zc_seqmap_slot(m, old.key[i] - 1) = old.val[i];
		zc_free(old.key);
		zc_free(old.val);
	}
	size_t i = zc_seqmap_at(m, seq + 1);
	if (!m->key[i]) {
		m->key[i] = seq + 1;
		m->n++;
	}
	return &m->val[i];
}

/* The value of seq, or NULL when it has none. */
static inline size_t *zc_seqmap_find(const struct zc_seqmap *m, sqlite3_int64 seq)
{
	if (!m->cap)
		return NULL;
	size_t i = zc_seqmap_at(m, seq + 1);
	return m->key[i] ? &m->val[i] : NULL;
}

/* Accepts a zeroed map; leaves it zeroed. */
static inline void zc_seqmap_clear(struct zc_seqmap *m)
{
	zc_free(m->key);
	zc_free(m->val);
	memset(m, 0, sizeof(*m));
}

#endif
