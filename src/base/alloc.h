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

/* Test hook: the (n+1)th allocation from now fails (and so, by the policy
 * above, the process aborts with "zcor: out of memory"); -1 turns it off.
 * tests/unit/test_oom.c fails each allocation of a tool call in turn. */
void zc_alloc_fail_after(long n);
/* Test hook: how many allocations the wrappers have made (jansson's
 * included, zcor.c routes them here), to count a call's. */
unsigned long zc_alloc_count(void);

#endif
