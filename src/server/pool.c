/*
 * pool.c — the warmed handle pool of `zcor serve`: the zcor handles kept
 * open between requests, most recently used first.
 *
 * Server layer: speaks only include/zcor.h. A handle is used by one
 * request (one thread) at a time; the pool never hands one handle to two
 * requests, and never keeps more than POOL_MAX idle ones.
 */
#include <stdio.h>

#include "server/internal.h"

zcor *zc_pool_take(struct server *s, struct request *r)
{
	if (r->z)
		return r->z;
	pthread_mutex_lock(&s->lock);
	zcor *z = s->npool > 0 ? s->pool[--s->npool] : NULL;
	pthread_mutex_unlock(&s->lock);
	if (!z) {
		if (zcor_open(&z, s->dir) != ZCOR_OK) {
			fprintf(stderr, "zcor serve: cannot open '%s': %s\n", s->dir, zcor_errmsg(z));
			zcor_close(z);
			return NULL;
		}
	}
	return r->z = z;
}

void zc_pool_give(struct server *s, struct request *r)
{
	zcor *z = r->z;
	r->z = NULL;
	zc_pool_put(s, z);
}

void zc_pool_put(struct server *s, zcor *z)
{
	if (!z)
		return;
	pthread_mutex_lock(&s->lock);
	int kept = s->npool < POOL_MAX;
	if (kept)
		s->pool[s->npool++] = z;
	pthread_mutex_unlock(&s->lock);
	if (!kept)
		zcor_close(z);
}

void zc_pool_close(struct server *s)
{
	for (int i = 0; i < s->npool; i++)
		zcor_close(s->pool[i]);
	s->npool = 0;
}
