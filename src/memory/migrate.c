/*
 * migrate.c — `zcor migrate cognition` (SPEC §6, seed 003 从旧认知库迁移):
 * old COGNITION.md entries keyed by an inbound-media path
 * (.qq-media/<hash>.jpg) move into STICKERS.md.
 *
 * Memory layer. For each such entry (a line kept as written in
 * COGNITION.md, or a cognition record holding a media path):
 *   - its media file is still cached and the same picture is already a
 *     collected sticker (difference hash within ZC_IMAGE_SAME bits: QQ
 *     re-encodes what it forwards) → the entry joins that sticker;
 *   - its file is cached and new → collected as stickers/<name>.<ext>;
 *   - its file is gone → 未收藏, marked 原图已过期 (someone must find the
 *     picture again: these are the "unrecognised" ones);
 *   - its name is no sticker name, or its media path names no file of the
 *     media cache (sticker.h: an imported line may say anything) →
 *     refused, the line stays where it is for a person to fix.
 * The COGNITION.md line goes away in the same transaction. Dry run by
 * default; apply first saves COGNITION.md and STICKERS.md as
 * backups/<view>.bak-<time> and a state backup.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/alloc.h"
#include "base/fs.h"
#include "base/json.h"
#include "base/timeutil.h"
#include "memory/sticker.h"
#include "memory/view.h"
#include "text/norm.h"

#define BAR "\xef\xbd\x9c"

/* ---- finding the entries --------------------------------------------------- */

/* {media, name, meaning} of one old line, or NULL if it has no media key. */
static json_t *parse_old(const char *line)
{
	if (line[0] == '-' || line[0] == '*')
		line += 1;
	json_t *segs = json_array();
	for (const char *p = line;;) {
		const char *b = strstr(p, BAR);
		size_t n = b ? (size_t)(b - p) : strlen(p);
		char *t = zc_strndup_trim(p, n);
		if (*t)
			json_array_append_new(segs, zc_json_string_own(t));
		else
			zc_free(t);
		if (!b)
			break;
		p = b + 3;
	}
	json_t *x = json_object(), *rest = json_array();
	size_t i;
	json_t *s;
	json_array_foreach(segs, i, s) {
		const char *t = json_string_value(s);
		if (!json_object_get(x, "media") && zc_media_file(t))
			json_object_set(x, "media", s);
		else
			json_array_append(rest, s);
	}
	json_decref(segs);
	if (!json_object_get(x, "media")) {
		json_decref(x);
		json_decref(rest);
		return NULL;
	}
	const char *first = json_string_value(json_array_get(rest, 0));
	const char *second = json_string_value(json_array_get(rest, 1));
	if (first && zc_utf8_len(first) <= 24 && second) {
		json_object_set_new(x, "name", json_string(first));
		json_object_set_new(x, "meaning", json_string(second));
	} else {
		/* only a meaning: name the sticker by its first words */
		const char *m = first ? first : "表情";
		char *name = zc_strndup(m, zc_utf8_prefix(m, 12));
		for (char *c = name; *c; c++)
			if (strchr("/\\.:*?\"<>|[]% \t", *c))
				*c = '_';
		json_object_set_new(x, "name", zc_json_string_own(name));
		json_object_set_new(x, "meaning", json_string(first ? first : ""));
	}
	json_decref(rest);
	return x;
}

static int old_entries(struct zc_mem *m, json_t *out, struct zc_err *e)
{
	sqlite3_stmt *st = zc_stmt(&m->store,
				   "SELECT seq, line FROM view_unparsed WHERE path = 'COGNITION.md' ORDER BY pos, seq",
				   e);
	if (!st)
		return e->code;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *x = parse_old((const char *)sqlite3_column_text(st, 1));
		if (!x)
			continue;
		json_object_set_new(x, "unparsedSeq", json_integer(sqlite3_column_int64(st, 0)));
		json_object_set_new(x, "line", json_string((const char *)sqlite3_column_text(st, 1)));
		json_array_append_new(out, x);
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return zc_store_fail(&m->store, rc, e, "reading COGNITION.md");
	st = zc_stmt(&m->store,
		     "SELECT id, title, content FROM nodes WHERE kind = 'cognition' AND kind <> 'memory' AND superseded_by IS NULL "
		     "AND (title LIKE '%media/%' OR content LIKE '%media/%') ORDER BY seq",
		     e);
	if (!st)
		return e->code;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct zc_buf b = ZC_BUF_INIT;
		zc_buf_addf(&b, "- %s" BAR "%s", (const char *)sqlite3_column_text(st, 1),
			    (const char *)sqlite3_column_text(st, 2));
		json_t *x = parse_old(b.p);
		if (x) {
			json_object_set_new(x, "nodeId", json_string((const char *)sqlite3_column_text(st, 0)));
			json_object_set_new(x, "line", json_string(b.p));
			json_array_append_new(out, x);
		}
		zc_buf_release(&b);
	}
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? ZCOR_OK : zc_store_fail(&m->store, rc, e, "reading COGNITION.md");
}

/* ---- planning ---------------------------------------------------------------- */

/* {file -> hash as hex} of every collected sticker file. */
static json_t *sticker_hashes(struct zc_mem *m)
{
	json_t *out = json_object();
	char *dir = zc_path_join(m->dir, "stickers");
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (!zc_sticker_file_ok(de->d_name))
			continue;
		char *p = zc_path_join(dir, de->d_name);
		uint64_t h;
		struct zc_err ignore = {0};
		if (zc_image_dhash(p, &h, &ignore) == ZCOR_OK)
			json_object_set_new(out, de->d_name, json_integer((json_int_t)h));
		zc_free(p);
	}
	if (d)
		closedir(d);
	zc_free(dir);
	return out;
}

/* The extension a collected copy gets (".jpg" for a name without one). */
static const char *ext_of(const char *f)
{
	const char *x = zc_file_ext(f);
	return x ? x : ".jpg";
}

static int plan(struct zc_mem *m, json_t **actions, long long *unrecognised, long long *refused,
		struct zc_err *e)
{
	json_t *olds = json_array(), *hashes = sticker_hashes(m), *taken = json_object();
	int rc = old_entries(m, olds, e);
	*actions = json_array();
	*unrecognised = *refused = 0;
	size_t i;
	json_t *x;
	json_array_foreach(rc ? NULL : olds, i, x) {
		const char *media = zc_json_str(x, "media");
		const char *file = zc_media_file(media);
		struct zc_buf src = ZC_BUF_INIT;
		zc_buf_addf(&src, "%s/media/%s", m->dir, file);
		json_t *a = json_deep_copy(x);
		uint64_t h;
		struct zc_err ie = {0};
		if (!zc_image_name_ok(file) ||
		    zc_sticker_name_check("name", zc_json_str(x, "name"), &ie)) {
			/* nothing is looked up or written for it */
			json_object_set_new(a, "action", json_string("refused"));
			json_object_set_new(a, "why", json_string(ie.msg[0] ? ie.msg
									    : "its media path is not a file of "
									      "the media cache (media/<file>.<ext>)"));
			(*refused)++;
		} else if (!zc_file_exists(src.p) || zc_image_dhash(src.p, &h, &ie) != ZCOR_OK) {
			json_object_set_new(a, "action", json_string("expired"));
			json_object_set_new(a, "why", json_string(zc_file_exists(src.p)
									  ? "the cached file is not a readable image"
									  : "the cached file is gone (the media cache forgets old files)"));
			(*unrecognised)++;
		} else {
			const char *same = NULL;
			const char *k;
			json_t *hv;
			json_object_foreach(hashes, k, hv) {
				if (zc_image_distance((uint64_t)json_integer_value(hv), h) <= ZC_IMAGE_SAME) {
					same = k;
					break;
				}
			}
			if (same) {
				struct zc_buf img = ZC_BUF_INIT;
				zc_buf_addf(&img, "stickers/%s", same);
				json_object_set_new(a, "action", json_string("same-as-collected"));
				json_object_set_new(a, "image", zc_json_string_own(zc_buf_detach(&img)));
			} else {
				/* a free name: name.ext, name-2.ext, … */
				struct zc_buf img = ZC_BUF_INIT;
				const char *base = zc_json_str(x, "name");
				int n;
				for (n = 1;; n++) {
					zc_buf_reset(&img);
					if (n == 1)
						zc_buf_addf(&img, "stickers/%s%s", base, ext_of(file));
					else
						zc_buf_addf(&img, "stickers/%s-%d%s", base, n, ext_of(file));
					char *full = zc_path_join(m->dir, img.p);
					int used = zc_file_exists(full) || json_object_get(taken, img.p);
					zc_free(full);
					if (!used)
						break;
				}
				json_object_set_new(taken, img.p, json_true());
				if (n > 1) { /* keep the entry's name in step with its file */
					const char *f = img.p + 9;
					json_object_set_new(a, "name", json_stringn(f, strlen(f) - strlen(ext_of(f))));
				}
				json_object_set_new(a, "action", json_string("collect"));
				json_object_set_new(a, "from", json_string(src.p));
				json_object_set_new(a, "image", zc_json_string_own(zc_buf_detach(&img)));
				json_object_set_new(hashes, zc_json_str(a, "image") + 9, json_integer((json_int_t)h));
			}
		}
		zc_buf_release(&src);
		json_array_append_new(*actions, a);
	}
	json_decref(olds);
	json_decref(hashes);
	json_decref(taken);
	return rc;
}

/* ---- applying ------------------------------------------------------------------ */

static int apply_body(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	json_t *actions = op->ud;
	struct zc_view cog = {.kind = ZC_VIEW_COGNITION}, stk = {.kind = ZC_VIEW_STICKERS};
	snprintf(cog.path, sizeof(cog.path), "COGNITION.md");
	snprintf(stk.path, sizeof(stk.path), "STICKERS.md");
	int rc;
	if ((rc = zc_view_save_version(op, &cog, e)) || (rc = zc_view_save_version(op, &stk, e)))
		return rc;
	rc = zc_dir_inside(op->m->dir, "stickers", ZC_DIR_CREATE, e);
	size_t i, skipped = 0;
	json_t *a;
	json_array_foreach(rc ? NULL : actions, i, a) {
		const char *what = zc_json_str(a, "action");
		if (strcmp(what, "refused") == 0) {
			skipped++;
			continue;
		}
		if (zc_json_str(a, "image") && (rc = zc_sticker_path_check("image", zc_json_str(a, "image"), e)))
			break;
		json_t *entry = json_pack("{s:O, s:O}", "name", json_object_get(a, "name"), "meaning",
					  json_object_get(a, "meaning"));
		if (strcmp(what, "expired") == 0) {
			json_object_set_new(entry, "stale", json_true());
		} else {
			json_object_set(entry, "image", json_object_get(a, "image"));
			if (strcmp(what, "collect") == 0) {
				char *data = NULL, *dest = zc_path_join(op->m->dir, zc_json_str(a, "image"));
				size_t len = 0;
				if (!(rc = zc_read_file_nofollow(zc_json_str(a, "from"), 16L << 20, &data, &len, e)) &&
				    !(rc = zc_write_file_atomic(dest, data, len, e))) {
					zc_op_file_created(op, dest);
					op->side_effect = 1;
				}
				zc_free(data);
				zc_free(dest);
			}
		}
		int created;
		if (!rc && strcmp(what, "same-as-collected") == 0) {
			/* join the collected sticker's entry if it has one */
			sqlite3_stmt *st = zc_stmt(&op->m->store,
						   "SELECT title FROM nodes WHERE kind = 'sticker' AND kind <> 'memory' AND "
						   "superseded_by IS NULL AND json_extract(attrs, '$.image') = ?1 LIMIT 1",
						   e);
			if (!st)
				rc = e->code;
			else {
				sqlite3_bind_text(st, 1, zc_json_str(a, "image"), -1, SQLITE_TRANSIENT);
				if (sqlite3_step(st) == SQLITE_ROW)
					json_object_set_new(entry, "name",
							    json_string((const char *)sqlite3_column_text(st, 0)));
				sqlite3_reset(st);
			}
		}
		if (!rc && !(rc = zc_view_entry_confined(&stk, entry, e)))
			rc = zc_view_upsert(op, &stk, entry, &created, e);
		json_decref(entry);
		if (rc)
			break;
		if (json_object_get(a, "unparsedSeq")) {
			sqlite3_stmt *st = zc_stmt(&op->m->store, "DELETE FROM view_unparsed WHERE seq = ?1", e);
			if (!st) {
				rc = e->code;
				break;
			}
			sqlite3_bind_int64(st, 1, json_integer_value(json_object_get(a, "unparsedSeq")));
			int s = sqlite3_step(st);
			sqlite3_reset(st);
			if (s != SQLITE_DONE) {
				rc = zc_store_fail(&op->m->store, s, e, "removing the old COGNITION.md line");
				break;
			}
		} else {
			json_t *n = NULL;
			if ((rc = zc_node_load(op, zc_json_str(a, "nodeId"), &n, e)) == ZCOR_OK)
				rc = zc_node_delete(op, n, e);
			json_decref(n);
			if (rc)
				break;
		}
	}
	if (!rc)
		*out = json_pack("{s:I}", "applied", (json_int_t)(json_array_size(actions) - skipped));
	return rc;
}

static const struct zc_opdef migrate_op = {"migrate cognition", NULL, apply_body, 0};

/* backups/<view>.bak-<time>: the two views as text, the seed's backup. */
static int backup_views(struct zc_mem *m, json_t *report, struct zc_err *e)
{
	static const char *const names[] = {"COGNITION.md", "STICKERS.md"};
	char stamp[ZC_TIME_LEN];
	zc_time_stamp(zc_mem_now(m), stamp);
	char *dir = zc_path_join(m->dir, "backups");
	int rc = zc_mkdir_p(dir, e);
	json_t *files = json_array();
	for (size_t i = 0; !rc && i < 2; i++) {
		struct zc_view v = {.kind = i ? ZC_VIEW_STICKERS : ZC_VIEW_COGNITION};
		snprintf(v.path, sizeof(v.path), "%s", names[i]);
		char *text = NULL;
		if ((rc = zc_store_begin(&m->store, 0, e)))
			break;
		rc = zc_view_render(m, &v, &text, NULL, NULL, e);
		zc_store_rollback(&m->store);
		if (rc)
			break;
		struct zc_buf f = ZC_BUF_INIT;
		zc_buf_addf(&f, "%s/%s.bak-%s", dir, names[i], stamp);
		rc = zc_write_file_atomic(f.p, text, strlen(text), e);
		json_array_append_new(files, json_string(f.p));
		zc_buf_release(&f);
		zc_free(text);
	}
	zc_free(dir);
	json_object_set_new(report, "backups", files);
	return rc;
}

int zc_migrate_cognition(struct zc_mem *m, int apply, json_t **report, struct zc_err *e)
{
	json_t *actions = NULL;
	long long unrecognised = 0, refused = 0;
	*report = NULL;
	int rc = zc_store_begin(&m->store, 0, e);
	if (rc)
		return rc;
	rc = plan(m, &actions, &unrecognised, &refused, e);
	zc_store_rollback(&m->store);
	if (rc) {
		json_decref(actions);
		return rc;
	}
	json_t *r = json_pack("{s:b, s:O, s:I, s:I}", "applied", 0, "actions", actions, "unrecognised",
			      (json_int_t)unrecognised, "refused", (json_int_t)refused);
	if (apply && (long long)json_array_size(actions) > refused) {
		struct zcor_ctx host = {ZCOR_ACTOR_CLI, NULL};
		json_t *state = NULL, *out = NULL, *noargs = json_object();
		if (!(rc = backup_views(m, r, e)) &&
		    !(rc = zc_mem_run(m, &host, &zc_op_memory_backup, noargs, &state, e))) {
			json_object_set(r, "stateBackup", json_object_get(state, "file"));
			json_t *args = json_pack("{s:I}", "entries", (json_int_t)json_array_size(actions));
			rc = zc_mem_run_ud(m, &host, &migrate_op, args, actions, &out, e);
			json_decref(args);
			if (!rc)
				json_object_set_new(r, "applied", json_true());
		}
		json_decref(noargs);
		json_decref(state);
		json_decref(out);
	}
	json_decref(actions);
	if (rc) {
		json_decref(r);
		return rc;
	}
	*report = r;
	return ZCOR_OK;
}
