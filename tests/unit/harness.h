/*
 * harness.h — a tiny test harness for zcor's C unit tests: TEST() cases
 * registered in a table, CHECK macros that report file:line and go on,
 * a fresh memory directory per case, and helpers that call tools through
 * the public API and look into the JSON they return.
 */
#ifndef ZC_HARNESS_H
#define ZC_HARNESS_H

#include <pthread.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "zcor.h"

/* the schema version of this build (store.c's migrations), for the
 * migration tests: one place instead of a number in each suite */
int zc_store_schema_version(void);
#define T_SCHEMA zc_store_schema_version()

extern int t_failures;

#define CHECK(cond)                                                                        \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
			t_failures++;                                                      \
		}                                                                          \
	} while (0)

#define CHECK_STR(a, b)                                                                    \
	do {                                                                               \
		const char *a_ = (a), *b_ = (b);                                           \
		if (!a_ || !b_ || strcmp(a_, b_) != 0) {                                   \
			fprintf(stderr, "%s:%d: CHECK_STR failed: %s = '%s', expected '%s'\n", \
				__FILE__, __LINE__, #a, a_ ? a_ : "(null)", b_ ? b_ : "(null)"); \
			t_failures++;                                                      \
		}                                                                          \
	} while (0)

#define CHECK_INT(a, b)                                                                    \
	do {                                                                               \
		long long a_ = (long long)(a), b_ = (long long)(b);                        \
		if (a_ != b_) {                                                            \
			fprintf(stderr, "%s:%d: CHECK_INT failed: %s = %lld, expected %lld\n", \
				__FILE__, __LINE__, #a, a_, b_);                           \
			t_failures++;                                                      \
		}                                                                          \
	} while (0)

#define CHECK_HAS(hay, needle)                                                                 \
	do {                                                                                   \
		const char *h_ = (hay), *n_ = (needle);                                        \
		if (!h_ || !strstr(h_, n_)) {                                                  \
			fprintf(stderr, "%s:%d: CHECK_HAS failed: %s = '%s' lacks '%s'\n",      \
				__FILE__, __LINE__, #hay, h_ ? h_ : "(null)", n_);                 \
			t_failures++;                                                          \
		}                                                                              \
	} while (0)

struct t_case {
	const char *name;
	void (*fn)(void);
};

/* Each test file defines: const struct t_case t_cases[] = {{"name", fn}, …, {0}}; */
extern const struct t_case t_cases[];

/* A new empty directory, valid for the whole run (the caller does not free
 * it). All of a run's are in one $TMPDIR/zcor-test-XXXXXX, which main
 * removes when every case passed and keeps (and names) otherwise. */
const char *t_tmpdir(void);
/* tests/fixtures: $ZCOR_FIXTURES (ctest sets it), else beside harness.c. */
const char *t_fixtures_dir(void);
/* Copies fixture `name` (a path below tests/fixtures) to path `to`, byte
 * for byte; exits when it cannot. */
void t_fixture_copy(const char *name, const char *to);
/* Opens a fresh memory directory. */
zcor *t_open(void);
zcor *t_open_dir(const char *dir);

/* Calls a tool (host plane unless conv) and returns its parsed JSON. *rc
 * gets the code when rc is not NULL. The caller decrefs. */
json_t *t_call(zcor *z, const char *conv, const char *tool, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
json_t *t_call_rc(zcor *z, const char *conv, int *rc, const char *tool, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* Like t_call, and a result that is not ZCOR_OK counts as a failure. */
json_t *t_call_ok(zcor *z, const char *conv, const char *tool, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Like t_call with a ready JSON argument text. */
json_t *t_call_raw(zcor *z, const char *conv, int *rc, const char *tool, const char *args);

/* The answer of a call on z that returned rc, parsed: its result out
 * (zcor_free'd here) or, when it failed, its error as zcor_errjson(z)
 * gives it; {} when neither parses (a test failure then). */
json_t *t_answer(zcor *z, int rc, char *out);

/* Looks up a dotted path ("node.id", "items.0.title") in v. */
json_t *t_get(json_t *v, const char *path);
const char *t_str(json_t *v, const char *path);
long long t_int(json_t *v, const char *path);
/* The error code name ("not_found") of an error result, or NULL. */
const char *t_errcode(json_t *v);
const char *t_errmsg(json_t *v);

/* Runs SQL on the directory's memory.db (a second connection) and returns
 * the first column of the first row as an integer. */
long long t_sql_int(const char *dir, const char *sql);
/* The same as text (caller frees; "" when there is no row or it is NULL). */
char *t_sql_str(const char *dir, const char *sql);

/* Runs SQL on the directory's memory.db through a second, writable
 * connection (zcor's tokenizer registered, as the nodes' triggers need
 * it); a failure counts as a test failure. */
void t_sql_exec(zcor *z, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* fmt with ap as new text (free it); exits 2 when out of memory. */
char *t_vformat(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));


/* A model server on 127.0.0.1 that refuses every request (HTTP 400 with
 * an OpenAI-shaped error), one connection at a time, on a thread of its
 * own: t_refusing_model_start returns its port (0 on failure), and
 * t_refusing_model_stop shuts it down and joins the thread. */
struct t_refusing_model {
	int fd;
	pthread_t th;
};
int t_refusing_model_start(struct t_refusing_model *m);
void t_refusing_model_stop(struct t_refusing_model *m);

#endif
