/*
 * watch.c — a watched file with its last good version (watch.h). Base
 * layer: stat, read, parse and the copy beside the file; it never decides
 * what a document means (the owner's check does) and never prints.
 */
#include "base/watch.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/json.h"

void zc_watch_init(struct zc_watch *w, const char *path, const char *label, size_t max_bytes,
		   int keep_copy)
{
	memset(w, 0, sizeof(*w));
	w->path = zc_strdup(path);
	w->label = label;
	w->max_bytes = max_bytes;
	w->keep_copy = keep_copy;
}

void zc_watch_release(struct zc_watch *w)
{
	if (!w)
		return;
	zc_free(w->path);
	memset(w, 0, sizeof(*w));
}

static char *copy_path(const struct zc_watch *w)
{
	size_t n = strlen(w->path) + sizeof(ZC_WATCH_LAST_GOOD_SUFFIX);
	char *p = zc_malloc(n);
	snprintf(p, n, "%s%s", w->path, ZC_WATCH_LAST_GOOD_SUFFIX);
	return p;
}

/* Keeps a copy of a valid version beside the file (when it differs). */
static void save_copy(const struct zc_watch *w, const char *data, size_t len)
{
	if (!w->keep_copy)
		return;
	char *path = copy_path(w), *old = NULL;
	size_t oldlen = 0;
	struct zc_err e = {0};
	if (zc_read_file_nofollow(path, w->max_bytes, &old, &oldlen, &e) || oldlen != len ||
	    memcmp(old, data, len) != 0)
		zc_write_file_atomic(path, data, len, &e); /* best effort: a copy */
	zc_free(old);
	zc_free(path);
}

/* FNV-1a of the bytes: tells a racy rewrite from the same content. */
static uint64_t content_hash(const char *data, size_t len)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)data[i]) * 1099511628211ull;
	return h;
}

/* Reads, parses and checks path; *doc and the bytes on success. */
static int load(const struct zc_watch *w, const char *path, zc_watch_check_fn check, void *ud,
		json_t **doc, char **data, size_t *len, struct zc_err *e)
{
	*doc = NULL;
	int rc = zc_read_file_nofollow(path, w->max_bytes, data, len, e);
	if (!rc)
		rc = zc_json_parse(*data, *len, w->label, doc, e);
	if (!rc)
		rc = check(ud, *doc, e);
	if (rc) {
		json_decref(*doc);
		*doc = NULL;
	}
	return rc;
}

enum zc_watch_state zc_watch_poll(struct zc_watch *w, zc_watch_check_fn check, void *ud,
				  json_t **doc, struct zc_err *e)
{
	*doc = NULL;
	int changed = zc_file_changed(w->path, &w->seen);
	if (changed < 0) {
		if (errno != ENOENT) {
			zc_fail(e, zc_errno_code(errno), "cannot read '%s': %s", w->path, strerror(errno));
			return ZC_WATCH_ERROR;
		}
		if (!w->seen.known)
			return ZC_WATCH_MISSING;
		memset(&w->seen, 0, sizeof(w->seen));
		return ZC_WATCH_REMOVED;
	}
	if (!changed)
		return ZC_WATCH_SAME;
	char *data = NULL;
	size_t len = 0;
	if (changed == 2) { /* same identity, seen racily: the bytes decide */
		struct zc_err ignored = {0};
		int same = !zc_read_file_nofollow(w->path, w->max_bytes, &data, &len, &ignored) &&
			   content_hash(data, len) == w->hash;
		zc_free(data);
		data = NULL;
		if (same)
			return ZC_WATCH_SAME;
	}
	int rc = load(w, w->path, check, ud, doc, &data, &len, e);
	w->hash = data ? content_hash(data, len) : 0;
	if (!rc)
		save_copy(w, data, len);
	zc_free(data);
	return rc ? ZC_WATCH_BAD : ZC_WATCH_LOADED;
}

int zc_watch_last_good(struct zc_watch *w, zc_watch_check_fn check, void *ud, json_t **doc,
		       struct zc_err *e)
{
	char *path = copy_path(w), *data = NULL;
	size_t len = 0;
	int rc = load(w, path, check, ud, doc, &data, &len, e);
	zc_free(data);
	zc_free(path);
	return rc;
}

int zc_watch_write(struct zc_watch *w, const char *data, size_t len, struct zc_err *e)
{
	int rc = zc_write_file_atomic(w->path, data, len, e);
	if (rc)
		return rc;
	save_copy(w, data, len);
	zc_file_changed(w->path, &w->seen);
	w->hash = content_hash(data, len);
	return ZCOR_OK;
}
