/*
 * alloc.c — allocation wrappers: abort on out-of-memory (see alloc.h).
 * Base layer, the bottom of everything: the only place zcor calls
 * malloc/realloc/free directly, and jansson's allocations come here too.
 * It never returns NULL to a caller and never allocates on a caller's
 * behalf without a count (the OOM test's hook, zc_alloc_fail_after).
 */
#include "base/alloc.h"

#include <ctype.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The test hooks' counters: atomic, as the flusher thread (zcor.c)
 * allocates beside the caller's thread. */
static long fail_after = -1;
static unsigned long count;

void zc_alloc_fail_after(long n) { __atomic_store_n(&fail_after, n, __ATOMIC_SEQ_CST); }

unsigned long zc_alloc_count(void) { return __atomic_load_n(&count, __ATOMIC_SEQ_CST); }

static void *check(void *p, size_t n)
{
	if (p == NULL && n != 0) {
		fputs("zcor: out of memory\n", stderr);
		abort();
	}
	return p;
}

static int injected(void)
{
	__atomic_add_fetch(&count, 1, __ATOMIC_RELAXED);
	long n = __atomic_load_n(&fail_after, __ATOMIC_SEQ_CST);
	while (n > 0 && !__atomic_compare_exchange_n(&fail_after, &n, n - 1, 0, __ATOMIC_SEQ_CST,
						     __ATOMIC_SEQ_CST))
		;
	return n == 0;
}

void *zc_malloc(size_t n)
{
	if (injected())
		return check(NULL, n ? n : 1);
	return check(malloc(n ? n : 1), n ? n : 1);
}

void *zc_calloc(size_t n, size_t size)
{
	if (injected())
		return check(NULL, 1);
	return check(calloc(n ? n : 1, size ? size : 1), 1);
}

void *zc_realloc(void *p, size_t n)
{
	if (injected())
		return check(NULL, n ? n : 1);
	return check(realloc(p, n ? n : 1), n ? n : 1);
}

char *zc_strdup(const char *s) { return zc_strndup(s, strlen(s)); }

char *zc_strndup(const char *s, size_t n)
{
	char *p = zc_malloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *zc_strndup_trim(const char *s, size_t n)
{
	while (n && isspace((unsigned char)*s)) {
		s++;
		n--;
	}
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	return zc_strndup(s, n);
}

void zc_free(void *p) { free(p); }
