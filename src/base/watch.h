/*
 * watch.h — a watched file: a hand-editable JSON file (config.json,
 * synonyms.json) that is stat'ed on every use and reread when it changed,
 * checked by its owner, with the last good version kept in use when an
 * edit is invalid (and, on request, a copy of it on disk beside the file:
 * <path>.last-good, read when a process starts on an invalid file).
 *
 * Base layer: files and JSON only; what a valid document is, and what the
 * settings in use are, belong to the owner's check function.
 */
#ifndef ZC_WATCH_H
#define ZC_WATCH_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "base/fs.h"

#define ZC_WATCH_LAST_GOOD_SUFFIX ".last-good"

/* Checks a parsed document; on success takes what it needs (doc is
 * borrowed). Errors name the field and say what it must be. */
typedef int (*zc_watch_check_fn)(void *ud, const json_t *doc, struct zc_err *e);

struct zc_watch {
	char *path;
	const char *label;   /* the file in messages: "config.json" (static) */
	size_t max_bytes;
	int keep_copy;       /* keep <path>.last-good on disk */
	struct zc_file_id seen;
	uint64_t hash; /* of the bytes last loaded or written (a racy stat compares them) */
};

/* What zc_watch_poll found. */
enum zc_watch_state {
	ZC_WATCH_SAME = 0, /* unchanged since the last poll */
	ZC_WATCH_LOADED,   /* changed, valid: *doc is the new document */
	ZC_WATCH_BAD,      /* changed, invalid (unreadable, not JSON, refused): e says why */
	ZC_WATCH_MISSING,  /* absent, and it was absent (or never seen) before */
	ZC_WATCH_REMOVED,  /* absent, and it was there at the last poll */
	ZC_WATCH_ERROR     /* stat failed otherwise: e says why (errno's code) */
};

void zc_watch_init(struct zc_watch *w, const char *path, const char *label, size_t max_bytes,
		   int keep_copy);
/* Accepts NULL and a zeroed struct. */
void zc_watch_release(struct zc_watch *w);
/*
 * Stats the file and, when it changed, reads it (no link followed, at
 * most max_bytes), parses it and hands it to check(ud, doc). LOADED: *doc
 * is the document (new reference) and, with keep_copy, the copy on disk
 * is brought up to date. Other states leave *doc NULL.
 */
enum zc_watch_state zc_watch_poll(struct zc_watch *w, zc_watch_check_fn check, void *ud,
				  json_t **doc, struct zc_err *e);
/* The copy of the last valid version, checked the same way: ZCOR_OK with
 * *doc (new reference), or the reason there is none usable. */
int zc_watch_last_good(struct zc_watch *w, zc_watch_check_fn check, void *ud, json_t **doc,
		       struct zc_err *e);
/* Writes data as the file's new content (zc_write_file_atomic: the
 * directory is the caller's to check), remembers it as seen (an own
 * write is no hand edit) and, with keep_copy, as the last good version. */
int zc_watch_write(struct zc_watch *w, const char *data, size_t len, struct zc_err *e);

#endif
