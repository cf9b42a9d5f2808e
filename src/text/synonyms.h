/*
 * synonyms.h — synonyms.json: groups of words that mean the same thing.
 *
 * Expansion is both ways and transitive: groups that share a term form one
 * class, and a word expands to its whole class (after NFKC + case fold).
 * The file is the truth and hand-editable: every use stats it and reloads
 * it when it changed. A malformed file keeps the last good groups in use
 * and is reported (zc_syn_warning); it is never overwritten.
 */
#ifndef ZC_SYNONYMS_H
#define ZC_SYNONYMS_H

#include <jansson.h>
#include <sys/types.h>
#include <time.h>

#include "base/err.h"
#include "base/fs.h"
#include "base/watch.h"

#define ZC_SYN_MAX_BYTES (8u << 20)
#define ZC_SYN_MAX_TERM 64 /* characters */

struct zc_syn {
	char *path;
	struct zc_watch file; /* synonyms.json, watched (base/watch.h); last good kept in memory */
	json_t *groups; /* array of arrays of strings, as in the last good file */
	json_t *index;  /* normalised term -> class number */
	json_t *classes; /* class number -> array of normalised terms */
	char warning[600];
};

void zc_syn_init(struct zc_syn *s, const char *path);
void zc_syn_release(struct zc_syn *s);
/*
 * Creates the file from the built-in groups if it does not exist, and
 * reloads it if it changed. A malformed file sets zc_syn_warning() and
 * keeps the last good groups; only a failure to create the file is an
 * error.
 */
int zc_syn_refresh(struct zc_syn *s, struct zc_err *e);
/* "" when the file in use is fine; otherwise what is wrong with it. */
const char *zc_syn_warning(const struct zc_syn *s);
/* Adds the class of the normalised word `w` (w itself included) to the
 * object `set` as keys. */
void zc_syn_expand(const struct zc_syn *s, const char *w, json_t *set);
/*
 * Adds a group (array of ≥ 2 strings) and saves the file. *changed is 0
 * when every term was already in one class. *class_out (new reference) is
 * the resulting class. Refuses while the file is malformed.
 */
int zc_syn_add(struct zc_syn *s, const json_t *terms, int *changed, json_t **class_out,
	       struct zc_err *e);
/*
 * Replaces group `index` (0-based, file order) with terms, or removes it
 * when terms is NULL, and saves the file. *before (new reference) is the
 * group as it was. With expected (the group as the caller last read it,
 * terms in file order) a group that is no longer exactly that — edited,
 * moved or gone since, by another caller or by hand — is ZCOR_ECONFLICT
 * and nothing changes. Refuses while the file is malformed.
 */
int zc_syn_set_group(struct zc_syn *s, size_t index, const json_t *terms, const json_t *expected,
		     json_t **before, struct zc_err *e);
/* Validates a document against the synonyms.json format. */
int zc_syn_check(const json_t *doc, struct zc_err *e);
/* Number of groups in use. */
size_t zc_syn_count(const struct zc_syn *s);

#endif
