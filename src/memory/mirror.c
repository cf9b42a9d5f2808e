/*
 * mirror.c — keeps mirror/ current (mirror.h): the views, the message
 * logs and digest.json in the seed-003 layout.
 *
 * Memory layer, above the log (transcript.h) and the views: it reads
 * them, and nothing below calls it. The runner's commit hook
 * (zc_mirror_committed, wired by handle.c) calls it after a commit,
 * never inside a transaction of the change: it opens its own read transaction, so what it writes is one
 * consistent state. It never fails the change and never prints; a write
 * that fails only removes mirror/.complete, so the next change rewrites
 * everything. It writes only into a real mirror/ directory and real
 * directories under it: a planted link among them is never followed
 * (the mirror is then simply not complete; zcor doctor names the link).
 */
#include "memory/mirror.h"

#include <dirent.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/fs.h"
#include "memory/transcript.h"
#include "memory/view.h"

#define STAMP ".complete"

/* <dir>/mirror/<rel> (caller frees). */
static char *mirror_path(struct zc_mem *m, const char *rel)
{
	struct zc_buf b = ZC_BUF_INIT;
	zc_buf_addf(&b, "%s/mirror%s%s", m->dir, rel ? "/" : "", rel ? rel : "");
	return zc_buf_detach(&b);
}

/* mirror/ is a real directory of the memory directory (created if
 * create): nothing is written or removed through a planted link. */
static int mirror_dir_ok(struct zc_mem *m, int create, struct zc_err *e)
{
	return zc_dir_inside(m->dir, "mirror", create ? ZC_DIR_CREATE : 0, e);
}

static void set_complete(struct zc_mem *m, int complete)
{
	struct zc_err e = {0};
	if (mirror_dir_ok(m, 0, &e))
		return;
	char *p = mirror_path(m, STAMP);
	if (complete)
		zc_write_file_atomic(p, "", 0, &e);
	else if (unlink(p) == 0)
		zc_fsync_parent(p); /* a power cut must not bring the stamp back */
	zc_free(p);
}

static int is_complete(struct zc_mem *m)
{
	if (mirror_dir_ok(m, 0, NULL))
		return 0;
	char *p = mirror_path(m, STAMP);
	int yes = zc_file_kind(p) == ZC_FILE_REGULAR;
	zc_free(p);
	return yes;
}

/* Is mirroring on? When it is off, the change just committed is not in
 * mirror/, which is then no longer complete. */
static int mirror_on(struct zc_mem *m)
{
	zc_config_refresh(&m->conf);
	if (m->conf.cfg.mirror)
		return 1;
	set_complete(m, 0);
	return 0;
}

static int write_view(struct zc_mem *m, const struct zc_view *v, struct zc_err *e)
{
	char *text = NULL;
	int rc = zc_view_render(m, v, &text, NULL, NULL, e);
	if (!rc) {
		struct zc_buf rel = ZC_BUF_INIT;
		zc_buf_addf(&rel, "mirror/%s", v->path);
		rc = zc_write_file_inside(m->dir, rel.p, text, strlen(text), e);
		zc_buf_release(&rel);
	}
	zc_free(text);
	return rc;
}

/* ---- everything ---------------------------------------------------------- */

struct full {
	json_t *written; /* view paths written */
	int failed;
};

static int full_view(struct zc_op *op, const struct zc_view *v, void *ud, struct zc_err *e)
{
	struct full *f = ud;
	if (write_view(op->m, v, e))
		f->failed = 1;
	json_object_set_new(f->written, v->path, json_true());
	zc_err_clear(e);
	return ZCOR_OK;
}

/* Removes mirror/conversations/<slug>/MEMORY.md and archive/YYYY-MM.md
 * files of views that no longer exist (changed while mirroring was off). */
static void remove_stale_views(struct zc_mem *m, const json_t *written)
{
	char *root = mirror_path(m, "conversations");
	DIR *d = zc_dir_inside(m->dir, "mirror/conversations", 0, NULL) ? NULL : opendir(root);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char *conv = zc_path_join(root, de->d_name);
		int real = zc_file_kind(conv) == ZC_FILE_DIR; /* never unlink through a link */
		zc_free(conv);
		if (!real)
			continue;
		struct zc_buf rel = ZC_BUF_INIT;
		zc_buf_addf(&rel, "conversations/%s/MEMORY.md", de->d_name);
		char *f = mirror_path(m, rel.p);
		if (!json_object_get(written, rel.p) && zc_file_exists(f))
			unlink(f);
		zc_free(f);
		zc_buf_reset(&rel);
		zc_buf_addf(&rel, "conversations/%s/archive", de->d_name);
		char *adir = mirror_path(m, rel.p);
		DIR *ad = zc_file_kind(adir) == ZC_FILE_DIR ? opendir(adir) : NULL;
		struct dirent *ae;
		while (ad && (ae = readdir(ad))) {
			size_t n = strlen(ae->d_name);
			if (n != 10 || strcmp(ae->d_name + 7, ".md") != 0)
				continue;
			zc_buf_reset(&rel);
			zc_buf_addf(&rel, "conversations/%s/archive/%s", de->d_name, ae->d_name);
			if (!json_object_get(written, rel.p)) {
				char *af = mirror_path(m, rel.p);
				unlink(af);
				zc_free(af);
			}
		}
		if (ad)
			closedir(ad);
		zc_free(adir);
		zc_buf_release(&rel);
	}
	if (d)
		closedir(d);
	zc_free(root);
}

static void full(struct zc_mem *m)
{
	struct zcor_ctx host = {ZCOR_ACTOR_CLI, NULL};
	struct zc_op op = {.m = m, .ctx = &host, .now = zc_mem_now(m)};
	struct full f = {json_object(), 0};
	struct zc_err e = {0};
	char *dir = mirror_path(m, NULL);
	json_t *logs = NULL;
	set_complete(m, 0); /* until it is */
	int ok = mirror_dir_ok(m, 1, &e) == ZCOR_OK && zc_store_begin(&m->store, 0, &e) == ZCOR_OK;
	if (ok) {
		ok = zc_view_each(&op, full_view, &f, &e) == ZCOR_OK && !f.failed;
		zc_store_rollback(&m->store);
	}
	if (ok)
		remove_stale_views(m, f.written);
	ok = ok && zc_transcript_export(m, NULL, dir, &logs, &e) == ZCOR_OK &&
	     zc_export_digest(m, dir, &e) == ZCOR_OK;
	if (ok)
		set_complete(m, 1);
	json_decref(logs);
	json_decref(f.written);
	zc_free(dir);
}

/* ---- after a change ---------------------------------------------------------- */

/* Whether a change writes only its own part: mirroring is on and mirror/
 * complete. When it is on but not complete, everything is rewritten here
 * instead, which covers the change too. */
static int incremental(struct zc_mem *m)
{
	if (!mirror_on(m))
		return 0;
	if (!is_complete(m)) {
		full(m);
		return 0;
	}
	return 1;
}

void zc_mirror_views(struct zc_mem *m, const json_t *paths)
{
	if (!json_array_size(paths) || !incremental(m))
		return;
	struct zc_err e = {0};
	if (zc_store_begin(&m->store, 0, &e)) {
		set_complete(m, 0);
		return;
	}
	int ok = 1;
	size_t i;
	json_t *p;
	json_array_foreach(paths, i, p) {
		struct zc_view v;
		const char *path = json_string_value(p);
		if (zc_view_path(path, strlen(path), "path", &v, &e) == ZCOR_OK && write_view(m, &v, &e))
			ok = 0;
		zc_err_clear(&e);
	}
	zc_store_rollback(&m->store);
	if (!ok)
		set_complete(m, 0);
}

/* Local midnight of the day of ms, days later. */
static int64_t local_midnight(int64_t ms, int days)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	localtime_r(&t, &tm);
	tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
	tm.tm_mday += days;
	tm.tm_isdst = -1;
	return (int64_t)mktime(&tm) * 1000;
}

void zc_mirror_log(struct zc_mem *m, const char *conv, int64_t from, int64_t to)
{
	if (from > to || !incremental(m))
		return;
	struct zc_err e = {0};
	char *dir = mirror_path(m, NULL);
	json_t *rep = NULL;
	/* whole days: each file is rewritten from all of that day's messages */
	if (zc_transcript_export_range(m, conv, local_midnight(from, 0), local_midnight(to, 1), dir, &rep,
				       &e) ||
	    zc_export_digest(m, dir, &e))
		set_complete(m, 0);
	json_decref(rep);
	zc_free(dir);
}

void zc_mirror_digest(struct zc_mem *m)
{
	if (!incremental(m))
		return;
	struct zc_err e = {0};
	char *dir = mirror_path(m, NULL);
	if (zc_export_digest(m, dir, &e))
		set_complete(m, 0);
	zc_free(dir);
}

void zc_mirror_all(struct zc_mem *m)
{
	if (mirror_on(m))
		full(m);
}

void zc_mirror_committed(const struct zc_op *op)
{
	struct zc_mem *m = op->m;
	if (op->all_changed) {
		zc_mirror_all(m);
		return;
	}
	zc_mirror_views(m, op->views_changed);
	if (op->log_conv)
		zc_mirror_log(m, op->log_conv, op->log_from, op->log_to);
	size_t i;
	json_t *l;
	json_array_foreach(op->log_more, i, l) zc_mirror_log(
		m, json_string_value(json_array_get(l, 0)), json_integer_value(json_array_get(l, 1)),
		json_integer_value(json_array_get(l, 2)));
	if (op->digest_changed)
		zc_mirror_digest(m);
}
