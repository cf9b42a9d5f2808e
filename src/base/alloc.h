/*
 * alloc.h — the one allocation policy of zcor.
 *
 * Out of memory is not an error zcor reports call by call: every allocation
 * goes through these wrappers, which print "zcor: out of memory" and abort.
 * (SQLite and jansson keep their own policies and report NULL; we map those
 * to ZCOR_EINTERNAL where they surface.) Tests can make the wrappers fail
 * after N allocations with zc_alloc_fail_after() to check the abort path.
 */
#ifndef ZC_ALLOC_H
#define ZC_ALLOC_H

#include <stddef.h>

void *zc_malloc(size_t n);
void *zc_calloc(size_t n, size_t size);
void *zc_realloc(void *p, size_t n);
char *zc_strdup(const char *s);
char *zc_strndup(const char *s, size_t n);
/* A copy of s[0..n) without the white space around it. */
char *zc_strndup_trim(const char *s, size_t n);
void zc_free(void *p);

/* Test hook: the (n+1)th allocation from now fails; -1 turns it off. */
void zc_alloc_fail_after(long n);

#endif
