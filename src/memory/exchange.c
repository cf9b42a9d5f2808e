/*
 * exchange.c — the seed-003 directory layout as an exchange format:
 * `zcor import qq-memory DIR` and `zcor export qq-memory DIR` (X-STORE).
 *
 * Memory layer. The layout: INDEX.md, PEOPLE.md, COGNITION.md,
 * STICKERS.md, conversations/<slug>/MEMORY.md and archive/YYYY-MM.md,
 * .qq-stickers/ (collected images). An import is one operation, so one
 * transaction: a crash leaves the store as before or as after. Sticker
 * files are copied first (real images only, judged by their bytes; never
 * overwritten) and removed again if the transaction fails. Lines that do
 * not parse are kept verbatim in their view and listed in the report;
 * entries that break a hard rule (a file path in COGNITION.md, a media
 * path in STICKERS.md, a sticker name or path outside the rule of
 * sticker.h) are kept the same way, for `zcor migrate cognition`, the
 * doctor and a person.
 *
 * Nothing outside the source directory is read: it is walked by
 * descriptors, each directory opened relative to its parent and each file
 * read with O_NOFOLLOW and only when regular, so a symbolic link (to a
 * file or a directory), a FIFO or a device inside it is never followed or
 * opened for reading; what is left out is listed in `skipped` by its path
 * inside the directory.
 * Q-PEOPLE: each group MEMORY.md's 「## 人」 section adds the people not
 * yet known (only adds, never changes one; private chats never). Q-ROLL:
 * an imported MEMORY.md over the threshold rolls over in the same
 * transaction, as after a qq_memory change.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/fs.h"
#include "base/json.h"
#include "base/magic.h"
#include "base/timeutil.h"
#include "base/utf8.h"
#include "memory/sticker.h"
#include "memory/transcript.h"
#include "memory/view.h"
#include "text/norm.h"

#define IMPORT_FILE_MAX (16L << 20)

/* ---- reading a file of the layout ------------------------------------------ */

/* Replaces every occurrence of from in s by to (caller frees). */
static char *replace_all(const char *s, const char *from, const char *to)
{
	struct zc_buf b = ZC_BUF_INIT;
	size_t n = strlen(from);
	for (const char *p = s; *p;) {
		const char *hit = strstr(p, from);
		if (!hit) {
			zc_buf_adds(&b, p);
			break;
		}
		zc_buf_add(&b, p, (size_t)(hit - p));
		zc_buf_adds(&b, to);
		p = hit + n;
	}
	return b.p ? zc_buf_detach(&b) : zc_strdup("");
}

/* ---- the source directory, by descriptors ---------------------------------- */

/* Lists rel (a path inside the source) in the report's skipped. */
static void skip(json_t *report, const char *rel, const char *why)
{
	char *p = zc_utf8_lossy(rel), *w = zc_utf8_lossy(why);
	json_array_append_new(json_object_get(report, "skipped"), json_pack("{s:s, s:s}", "path", p, "why", w));
	zc_free(p);
	zc_free(w);
}

/* Is name (in dirfd; rel: its path inside the source) a directory
 * (want_dir) or a regular file, and not a symbolic link? Absent: 0;
 * anything else: 0, listed in skipped with the reason. Nothing is
 * opened here (lstat), so a FIFO cannot block. */
static int source_has(int dirfd, const char *name, const char *rel, int want_dir, json_t *report)
{
	struct stat st;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		if (errno != ENOENT) {
			char why[256];
			snprintf(why, sizeof(why), "cannot be looked at (%s); left out", strerror(errno));
			skip(report, rel, why);
		}
		return 0;
	}
	if (S_ISLNK(st.st_mode))
		skip(report, rel,
		     "a symbolic link: import reads what is inside the directory, never where a link "
		     "points; left out");
	else if (want_dir && !S_ISDIR(st.st_mode))
		skip(report, rel, "not a directory; left out");
	else if (!want_dir && !S_ISREG(st.st_mode))
		skip(report, rel,
		     S_ISDIR(st.st_mode) ? "a directory where a file belongs; left out"
					 : "not a regular file (a FIFO, socket or device): never opened; left out");
	else
		return 1;
	return 0;
}

/* Opens the directory name of dirfd for reading, or *d = NULL when it is
 * absent or was skipped (listed). */
static int source_dir(int dirfd, const char *name, const char *rel, json_t *report, DIR **d,
		      struct zc_err *e)
{
	*d = NULL;
	if (!source_has(dirfd, name, rel, 1, report))
		return ZCOR_OK;
	struct zc_err de = {0};
	int fd = zc_open_dir_at(dirfd, name, &de);
	if (fd < 0)
		return zc_fail(e, de.code, "%s: %s", ZC_Q(rel, 200), de.msg);
	if (!(*d = fdopendir(fd))) {
		int err = errno;
		close(fd);
		return zc_fail(e, zc_errno_code(err), "cannot read the directory %s: %s", ZC_Q(rel, 200),
			       strerror(err));
	}
	return ZCOR_OK;
}

/* Reads the regular file name of dirfd (at most max bytes), or *data =
 * NULL when it is absent or was skipped (listed). The read refuses a
 * link and anything not regular again (O_NOFOLLOW, fstat), in case the
 * directory changed since it was looked at. */
static int source_read(int dirfd, const char *name, const char *rel, size_t max, json_t *report,
		       char **data, size_t *len, struct zc_err *e)
{
	*data = NULL;
	*len = 0;
	if (!source_has(dirfd, name, rel, 0, report))
		return ZCOR_OK;
	struct zc_err fe = {0};
	int rc = zc_read_file_at(dirfd, name, ZC_FS_NOFOLLOW, max, data, len, &fe);
	if (rc)
		return zc_fail(e, rc, "%s: %s", ZC_Q(rel, 200), fe.msg);
	return ZCOR_OK;
}

/* The names in d but "." and "..", sorted (caller frees each and the
 * array; *n of them). */
static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char **dir_names(DIR *d, size_t *n)
{
	char **names = NULL;
	size_t cap = 0;
	struct dirent *de;
	*n = 0;
	while (d && (de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (*n == cap)
			names = zc_realloc(names, (cap = cap ? cap * 2 : 16) * sizeof(*names));
		names[(*n)++] = zc_strdup(de->d_name);
	}
	if (*n) /* names is NULL for an empty directory, and qsort wants an array */
		qsort(names, *n, sizeof(*names), by_name);
	return names;
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		zc_free(names[i]);
	zc_free(names);
}

/* Moves entries that break a hard rule of the view into its unparsed
 * lines (kept verbatim, reported). */
static void quarantine(const struct zc_view *v, json_t *doc, json_t *report)
{
	json_t *entries = json_object_get(doc, "entries"), *keep = json_array();
	size_t i;
	json_t *x;
	json_array_foreach(entries, i, x) {
		char *line = zc_view_line(v, x);
		struct zc_err ce = {0};
		int hard = zc_view_entry_breaks_rule(v, x);
		if (hard || zc_view_entry_confined(v, x, &ce)) {
			json_t *u = json_pack("{s:s, s:O}", "text", line, "pos", json_object_get(x, "pos"));
			const char *sec = zc_json_str(x, v->kind == ZC_VIEW_COGNITION ? "type" : "section");
			if (sec)
				json_object_set_new(u, "section", json_string(sec));
			json_array_append_new(json_object_get(doc, "unparsed"), u);
			json_array_append_new(json_object_get(report, "keptAsWritten"),
					      json_pack("{s:s, s:s, s:s}", "path", v->path, "text", line,
							"why",
							!hard ? ce.msg
							: v->kind == ZC_VIEW_COGNITION
								? "a file path in COGNITION.md (see zcor migrate cognition)"
								: "a media path in STICKERS.md (collect the image first)"));
		} else {
			json_array_append(keep, x);
		}
		zc_free(line);
	}
	json_object_set_new(doc, "entries", keep);
}

/* Entries of an imported MEMORY.md that rollover has already moved to the
 * archive (the same line: this directory was imported before) stay there,
 * so that importing a directory again does not bring them back. */
static int skip_archived(struct zc_mem *m, const struct zc_view *v, json_t *doc, json_t *report,
			 struct zc_err *e)
{
	json_t *entries = json_object_get(doc, "entries"), *keep = json_array();
	size_t i;
	json_t *x;
	int rc = ZCOR_OK;
	json_array_foreach(entries, i, x) {
		int same = 0;
		if ((rc = zc_view_archived_same(m, v, x, &same, e)))
			break;
		if (!same) {
			json_array_append(keep, x);
			continue;
		}
		char *line = zc_view_line(v, x);
		json_array_append_new(json_object_get(report, "alreadyArchived"),
				      json_pack("{s:s, s:s}", "path", v->path, "text", line));
		zc_free(line);
	}
	if (!rc)
		json_object_set(doc, "entries", keep);
	json_decref(keep);
	return rc;
}

/* Q-ROLL holds for an imported MEMORY.md too: over the threshold, its
 * least active entries move to the archive now, not at the next change.
 * Run after the conversation's archive files are in (an import of this
 * month's file replaces that view). */
static int roll_over(struct zc_op *op, const struct zc_view *mv, json_t *report, struct zc_err *e)
{
	long long moved = 0;
	json_t *warnings = json_array();
	int rc = zc_view_rollover(op, mv->conv, &moved, warnings, e);
	if (!rc && moved)
		json_array_append_new(json_object_get(report, "archived"),
				      json_pack("{s:s, s:I}", "path", mv->path, "entries", (json_int_t)moved));
	json_array_extend(json_object_get(report, "warnings"), warnings);
	json_decref(warnings);
	return rc;
}

/* Imports the view file name of dirfd (its path inside the source is
 * the view's path) if it is there and a regular file. */
static int import_view(struct zc_op *op, const struct zc_view *v, int dirfd, const char *name,
		       json_t *report, void (*progress)(void *, const char *), void *ud, int *imported,
		       struct zc_err *e)
{
	char *data = NULL;
	size_t len = 0;
	if (imported)
		*imported = 0;
	int rc = source_read(dirfd, name, v->path, IMPORT_FILE_MAX, report, &data, &len, e);
	if (rc || !data)
		return rc;
	if (!zc_utf8_valid(data, len) || strlen(data) != len) {
		zc_free(data);
		json_array_append_new(json_object_get(report, "skipped"),
				      json_pack("{s:s, s:s}", "path", v->path, "why",
						"not UTF-8 text (or has a NUL byte); left out"));
		return ZCOR_OK;
	}
	if (progress)
		progress(ud, v->path);
	/* the seed kept collected stickers in .qq-stickers/; zcor in stickers/ */
	char *text = v->kind == ZC_VIEW_STICKERS ? replace_all(data, ".qq-stickers/", "stickers/")
						 : zc_strdup(data);
	zc_free(data);
	json_t *doc = zc_view_parse(v, text);
	zc_free(text);
	quarantine(v, doc, report);
	if (v->kind == ZC_VIEW_MEMORY && (rc = skip_archived(op->m, v, doc, report, e)))
		goto out;
	/* the view as it was stays readable (qq_memory read {version: 1}) */
	if ((rc = zc_view_save_version(op, v, e)) || (rc = zc_view_replace(op, v, doc, e)))
		goto out;
	char *rendered = NULL;
	json_t *unparsed = NULL;
	if ((rc = zc_view_render(op->m, v, &rendered, NULL, &unparsed, e)))
		goto out;
	size_t i;
	json_t *u;
	json_array_foreach(unparsed, i, u)
		json_array_append_new(json_object_get(report, "unparsed"),
				      json_pack("{s:s, s:O, s:O}", "path", v->path, "line",
						json_object_get(u, "line"), "text", json_object_get(u, "text")));
	zc_free(rendered);
	json_decref(unparsed);
	json_t *item = json_pack("{s:s, s:I}", "path", v->path, "entries",
				 (json_int_t)json_array_size(json_object_get(doc, "entries")));
	/* the file's own title gave way to the rendered one */
	if (json_object_get(doc, "titleReplaced"))
		json_object_set(item, "titleReplaced", json_object_get(doc, "titleReplaced"));
	json_array_append_new(json_object_get(report, "views"), item);
	if (imported)
		*imported = 1;
out:
	json_decref(doc);
	return rc;
}

/* Q-PEOPLE: the 「## 人」 (人物) entries of a group's MEMORY.md become
 * people unless already known (by QQ number or name). */
static int extract_people(struct zc_op *op, const struct zc_view *mv, json_t *report,
			  struct zc_err *e)
{
	if (strncmp(mv->conv, "group:", 6) != 0)
		return ZCOR_OK;
	char *text = NULL;
	int rc = zc_view_render(op->m, mv, &text, NULL, NULL, e);
	if (rc)
		return rc;
	struct zc_view pv = {.kind = ZC_VIEW_PEOPLE};
	snprintf(pv.path, sizeof(pv.path), "PEOPLE.md");
	json_t *doc = zc_view_parse(mv, text);
	zc_free(text);
	size_t i;
	json_t *x;
	long long added = 0;
	json_array_foreach(json_object_get(doc, "entries"), i, x) {
		if (strcmp(zc_json_str(x, "section") ? zc_json_str(x, "section") : "", "人物") != 0)
			continue;
		json_t *p = json_pack("{s:O, s:O}", "name", json_object_get(x, "name"), "meaning",
				      json_object_get(x, "meaning"));
		/* "QQ 123" written anywhere in the entry names the person */
		char *line = zc_view_line(mv, x);
		const char *q = strstr(line, "QQ");
		if (q) {
			q += 2;
			while (*q == ' ' || *q == ':' || strncmp(q, "：", 3) == 0)
				q += *q == ' ' || *q == ':' ? 1 : 3;
			size_t n = 0;
			while (q[n] >= '0' && q[n] <= '9')
				n++;
			if (n >= 5 && n <= 12)
				json_object_set_new(p, "qq", json_stringn(q, n));
		}
		zc_free(line);
		sqlite3_stmt *st = zc_stmt(&op->m->store,
					   "SELECT count(*) FROM people WHERE person_id = ?1 OR name = ?2 "
					   "OR person_id = 'name:' || ?2",
					   e);
		if (!st) {
			json_decref(p);
			rc = e->code;
			break;
		}
		sqlite3_bind_text(st, 1, zc_json_str(p, "qq") ? zc_json_str(p, "qq") : "", -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 2, zc_json_str(p, "name"), -1, SQLITE_TRANSIENT);
		long long known = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
		sqlite3_reset(st);
		int created = 0;
		if (!known && (rc = zc_view_upsert(op, &pv, p, &created, e))) {
			json_decref(p);
			break;
		}
		added += created;
		json_decref(p);
	}
	json_decref(doc);
	if (!rc && added)
		json_object_set_new(report, "peopleExtracted",
				    json_integer(json_integer_value(json_object_get(report, "peopleExtracted")) + added));
	return rc;
}

/* ---- stickers ------------------------------------------------------------- */

/* .qq-stickers/<name>.<ext>: each regular file with a sticker file name
 * (sticker.h) whose bytes are a PNG, JPEG, GIF or WebP image is copied to
 * stickers/ unless a different file of that name is there; everything
 * else is listed in skipped. */
static int copy_stickers(struct zc_op *op, int root, json_t *report, struct zc_err *e)
{
	DIR *d = NULL;
	int rc = source_dir(root, ".qq-stickers", ".qq-stickers", report, &d, e);
	if (rc || !d)
		return rc;
	size_t n = 0;
	char **names = dir_names(d, &n);
	char *dest_dir = zc_path_join(op->m->dir, "stickers");
	if (n)
		rc = zc_mkdir_p(dest_dir, e);
	for (size_t i = 0; !rc && i < n; i++) {
		const char *name = names[i];
		struct zc_buf rel = ZC_BUF_INIT;
		zc_buf_addf(&rel, ".qq-stickers/%s", name);
		char *data = NULL, *to = NULL;
		size_t len = 0;
		const char *bad = zc_sticker_file_problem(name);
		if (bad) {
			struct zc_buf why = ZC_BUF_INIT;
			zc_buf_addf(&why, "not a sticker file name <name>.<ext> (%s); left out", bad);
			skip(report, rel.p, why.p);
			zc_buf_release(&why);
			goto next;
		}
		if ((rc = source_read(dirfd(d), name, rel.p, IMPORT_FILE_MAX, report, &data, &len, e)) || !data)
			goto next;
		if (!zc_image_kind(data, len)) {
			skip(report, rel.p,
			     "not a PNG, JPEG, GIF or WebP image (judged by its bytes): only images go into "
			     "stickers/; left out");
			goto next;
		}
		to = zc_path_join(dest_dir, name);
		if (zc_file_exists(to)) {
			char *cur = NULL;
			size_t clen = 0;
			int same = zc_read_file_nofollow(to, IMPORT_FILE_MAX, &cur, &clen, NULL) == ZCOR_OK &&
				   clen == len && memcmp(cur, data, len) == 0;
			zc_free(cur);
			if (!same)
				skip(report, rel.p, "a different stickers/ file with this name exists; kept the existing one");
		} else if ((rc = zc_write_file_atomic(to, data, len, e)) == ZCOR_OK) {
			zc_op_file_created(op, to);
			op->side_effect = 1;
			json_object_set_new(report, "stickersCopied",
					    json_integer(json_integer_value(json_object_get(report, "stickersCopied")) + 1));
		}
	next:
		zc_free(data);
		zc_free(to);
		zc_buf_release(&rel);
	}
	free_names(names, n);
	closedir(d);
	zc_free(dest_dir);
	return rc;
}

/* conversations/<slug>/log/YYYY-MM-DD.jsonl, in name (date) order; each
 * file's unparsable lines are reported, never dropped silently. */
static int import_logs(struct zc_op *op, int cdir, const char *slug, const char *conv,
		       json_t *report, void (*progress)(void *, const char *), void *ud,
		       struct zc_err *e)
{
	struct zc_buf rel = ZC_BUF_INIT;
	zc_buf_addf(&rel, "conversations/%s/log", slug);
	DIR *d = NULL;
	int rc = source_dir(cdir, "log", rel.p, report, &d, e);
	size_t n = 0;
	char **names = rc ? NULL : dir_names(d, &n);
	for (size_t i = 0; !rc && i < n; i++) {
		size_t len = strlen(names[i]);
		struct zc_buf raw = ZC_BUF_INIT;
		zc_buf_addf(&raw, "%s/%s", rel.p, names[i]);
		/* a file name need not be UTF-8; what is reported is */
		char *file = zc_utf8_lossy(raw.p), *data = NULL;
		json_t *r = NULL;
		size_t dlen = 0;
		zc_buf_release(&raw);
		if (len < 7 || strcmp(names[i] + len - 6, ".jsonl") != 0 || names[i][0] == '.') {
			skip(report, file, "not a log file (YYYY-MM-DD.jsonl); left out");
			goto next;
		}
		if ((rc = source_read(dirfd(d), names[i], file, ZC_LOG_FILE_MAX, report, &data, &dlen, e)) ||
		    !data)
			goto next;
		/* the logs are most of a long import: one line per day file */
		if (progress)
			progress(ud, file);
		rc = zc_transcript_import_data(op->m, conv, file, data, dlen, &r, e);
		zc_free(data);
		if (rc)
			goto next;
		json_object_set_new(r, "file", json_string(file));
		json_array_append_new(json_object_get(report, "logs"), r);
		json_object_set_new(report, "messages",
				    json_integer(json_integer_value(json_object_get(report, "messages")) +
						 json_integer_value(json_object_get(r, "logged"))));
	next:
		zc_free(file);
	}
	free_names(names, n);
	if (d)
		closedir(d);
	zc_buf_release(&rel);
	return rc;
}

/* digest.json: the digest progress per conversation, as
 * {"<key or slug>": {"at"|"lastDigestAt": ISO-8601 or ms, "date"|
 * "lastDigestDate": "YYYY-MM-DD"}} or the same under "conversations". */
static int import_digest(struct zc_op *op, int root, json_t *report, struct zc_err *e)
{
	char *data = NULL;
	size_t len = 0;
	int rc = source_read(root, "digest.json", "digest.json", IMPORT_FILE_MAX, report, &data, &len, e);
	if (rc || !data)
		return rc;
	json_t *doc = NULL;
	struct zc_err pe = {0};
	if (zc_json_parse(data, len, "digest.json", &doc, &pe)) {
		skip(report, "digest.json", pe.msg[0] ? pe.msg : "cannot be read");
		goto out;
	}
	json_t *convs = json_object_get(doc, "conversations");
	if (!json_is_object(convs))
		convs = doc;
	const char *k;
	json_t *v;
	json_object_foreach(convs, k, v) {
		char key[96];
		snprintf(key, sizeof(key), "%s", k);
		if (!strchr(key, ':') && strchr(key, '-'))
			*strchr(key, '-') = ':';
		if (!json_is_object(v) || !zc_conv_valid(key)) {
			skip(report, "digest.json", "an entry that is not {conversation: {at, date}}; left out");
			continue;
		}
		json_t *at = json_object_get(v, "at");
		if (!at)
			at = json_object_get(v, "lastDigestAt");
		int64_t ms = -1;
		if (json_is_integer(at))
			ms = json_integer_value(at) < 100000000000LL ? json_integer_value(at) * 1000
								      : json_integer_value(at);
		else if (json_is_string(at) && zc_time_parse(json_string_value(at), "at", &ms, &pe))
			ms = -1;
		const char *date = json_string_value(json_object_get(v, "date"));
		if (!date)
			date = json_string_value(json_object_get(v, "lastDigestDate"));
		if (date && (strlen(date) != 10 || date[4] != '-' || date[7] != '-'))
			date = NULL;
		if ((rc = zc_conversation_set_digest(op->m, key, ms, date, e)))
			break;
		json_object_set_new(report, "digests",
				    json_integer(json_integer_value(json_object_get(report, "digests")) + 1));
	}
out:
	json_decref(doc);
	zc_free(data);
	return rc;
}

/* ---- the import operation ------------------------------------------------- */

struct import_args {
	const char *dir;
	int root; /* the source directory, opened */
	void (*progress)(void *, const char *);
	void *ud;
};

/* conversations/<slug>/: MEMORY.md, archive/YYYY-MM.md, log/. */
static int import_conversation(struct zc_op *op, struct import_args *ia, int convs, const char *slug,
			       json_t *report, struct zc_err *e)
{
	struct zc_buf path = ZC_BUF_INIT;
	zc_buf_addf(&path, "conversations/%s/MEMORY.md", slug);
	struct zc_view mv;
	struct zc_err ignore = {0};
	DIR *cd = NULL, *ad = NULL;
	int rc = ZCOR_OK;
	if (zc_view_path(path.p, path.len, "path", &mv, &ignore)) {
		zc_buf_reset(&path);
		zc_buf_addf(&path, "conversations/%s", slug);
		skip(report, path.p, "not a conversation folder (group-<id>, private-<qq>, console-<name>)");
		goto out;
	}
	zc_buf_reset(&path);
	zc_buf_addf(&path, "conversations/%s", slug);
	if ((rc = source_dir(convs, slug, path.p, report, &cd, e)) || !cd)
		goto out;
	int cfd = dirfd(cd);
	int has_memory = 0;
	if ((rc = import_view(op, &mv, cfd, "MEMORY.md", report, ia->progress, ia->ud, &has_memory, e)))
		goto out;
	if (has_memory && (rc = extract_people(op, &mv, report, e)))
		goto out;
	zc_buf_addf(&path, "/archive");
	if ((rc = source_dir(cfd, "archive", path.p, report, &ad, e)))
		goto out;
	size_t n = 0;
	char **names = dir_names(ad, &n);
	for (size_t i = 0; !rc && i < n; i++) {
		struct zc_buf ap = ZC_BUF_INIT;
		zc_buf_addf(&ap, "conversations/%s/archive/%s", slug, names[i]);
		struct zc_view av;
		if (strlen(names[i]) != 10 || zc_view_path(ap.p, ap.len, "path", &av, &ignore))
			skip(report, ap.p, "not an archive month (YYYY-MM.md); left out");
		else
			rc = import_view(op, &av, dirfd(ad), names[i], report, ia->progress, ia->ud, NULL, e);
		zc_buf_release(&ap);
	}
	free_names(names, n);
	if (!rc)
		rc = import_logs(op, cfd, slug, mv.conv, report, ia->progress, ia->ud, e);
	if (!rc && has_memory)
		rc = roll_over(op, &mv, report, e);
out:
	if (ad)
		closedir(ad);
	if (cd)
		closedir(cd);
	zc_buf_release(&path);
	return rc;
}

static int import_body(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	struct import_args *ia = op->ud;
	json_t *report = json_pack("{s:o, s:[], s:[], s:[], s:[], s:[], s:[], s:[], s:[], s:i, s:i, s:i, "
				   "s:i}",
				   "from", zc_json_string_own(zc_utf8_lossy(ia->dir)), "views", "unparsed",
				   "keptAsWritten", "skipped", "logs", "archived", "alreadyArchived",
				   "warnings", "peopleExtracted", 0, "stickersCopied", 0, "messages", 0,
				   "digests", 0);
	DIR *d = NULL;
	int rc;
	if ((rc = copy_stickers(op, ia->root, report, e)))
		goto out;
	static const struct {
		const char *name;
		enum zc_view_kind kind;
	} roots[] = {{"PEOPLE.md", ZC_VIEW_PEOPLE},
		     {"COGNITION.md", ZC_VIEW_COGNITION},
		     {"STICKERS.md", ZC_VIEW_STICKERS},
		     {"INDEX.md", ZC_VIEW_INDEX}};
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		struct zc_view v = {.kind = roots[i].kind};
		snprintf(v.path, sizeof(v.path), "%s", roots[i].name);
		if ((rc = import_view(op, &v, ia->root, roots[i].name, report, ia->progress, ia->ud, NULL, e)))
			goto out;
	}
	if ((rc = source_dir(ia->root, "conversations", "conversations", report, &d, e)))
		goto out;
	size_t n = 0;
	char **names = dir_names(d, &n);
	for (size_t i = 0; !rc && i < n; i++)
		rc = import_conversation(op, ia, dirfd(d), names[i], report, e);
	free_names(names, n);
	if (!rc)
		rc = import_digest(op, ia->root, report, e);
	if (rc)
		goto out;
	op->all_changed = 1; /* mirror/: the logs and digest.json too, not only the views */
	*out = report;
	report = NULL;
out:
	if (d)
		closedir(d);
	json_decref(report);
	return rc;
}

static const struct zc_opdef import_op = {"import qq-memory", NULL, import_body, 0};

int zc_import_qq(struct zc_mem *m, const struct zcor_ctx *ctx, const char *dir,
		 void (*progress)(void *, const char *), void *ud, json_t **report, struct zc_err *e)
{
	/* the directory itself may be a link (the operator named it); what
	 * is inside it is read by descriptors from here */
	int root = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
	if (root < 0)
		return zc_fail(e, ZCOR_ENOTFOUND, "'%s' is not a directory; give the seed-003 memory "
						  "directory (the one holding PEOPLE.md, conversations/, …)",
			       ZC_Q(dir, 200));
	struct import_args ia = {dir, root, progress, ud};
	json_t *args = json_pack("{s:o}", "dir", zc_json_string_own(zc_utf8_lossy(dir)));
	int rc = zc_mem_run_ud(m, ctx, &import_op, args, &ia, report, e);
	json_decref(args);
	close(root);
	return rc;
}

/* ---- export ------------------------------------------------------------------ */

struct export {
	const char *dir;
	json_t *files;
};

static int export_view(struct zc_op *op, const struct zc_view *v, void *ud, struct zc_err *e)
{
	struct export *x = ud;
	char *text = NULL;
	int rc = zc_view_render(op->m, v, &text, NULL, NULL, e);
	if (rc)
		return rc;
	if (v->kind == ZC_VIEW_STICKERS) {
		char *t2 = replace_all(text, "stickers/", ".qq-stickers/");
		zc_free(text);
		text = t2;
	}
	rc = zc_write_file_inside(x->dir, v->path, text, strlen(text), e);
	zc_free(text);
	if (!rc)
		json_array_append_new(x->files, json_string(v->path));
	return rc;
}

int zc_export_digest(struct zc_mem *m, const char *dir, struct zc_err *e)
{
	struct zcor_ctx host = {ZCOR_ACTOR_CLI, NULL};
	json_t *convs = NULL;
	int rc = zc_conversations_list(m, &host, &convs, e);
	if (rc)
		return rc;
	json_t *dj = json_object();
	size_t k;
	json_t *cv;
	json_array_foreach(json_object_get(convs, "items"), k, cv)
		json_object_set_new(dj, zc_json_str(cv, "key"),
				    json_pack("{s:O, s:O, s:O}", "lastDigestAt",
					      json_object_get(cv, "lastDigestAt"), "lastDigestDate",
					      json_object_get(cv, "lastDigestDate"), "linesSinceDigest",
					      json_object_get(cv, "linesSinceDigest")));
	json_t *doc = json_pack("{s:o}", "conversations", dj);
	char *text = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS);
	rc = zc_write_file_inside(dir, "digest.json", text, strlen(text), e);
	zc_free(text);
	json_decref(doc);
	json_decref(convs);
	return rc;
}

int zc_export_qq(struct zc_mem *m, const char *dir, json_t **report, struct zc_err *e)
{
	struct zcor_ctx host = {ZCOR_ACTOR_CLI, NULL};
	struct zc_op op = {.m = m, .ctx = &host, .now = zc_mem_now(m)};
	json_t *files = json_array();
	int rc = zc_mkdir_p(dir, e);
	if (rc)
		goto out;
	/* one read transaction: every file from the same state */
	if ((rc = zc_store_begin(&m->store, 0, e)))
		goto out;
	struct export x = {dir, files};
	rc = zc_view_each(&op, export_view, &x, e);
	zc_store_rollback(&m->store);
	if (rc)
		goto out;
	/* collected stickers: regular files of a real stickers/ only (a
	 * planted link or FIFO is skipped and reported, never followed) */
	char *src = zc_path_join(m->dir, "stickers"), *dst = zc_path_join(dir, ".qq-stickers");
	struct zc_err se = {0};
	int src_rc = zc_dir_inside(m->dir, "stickers", 0, &se);
	if (src_rc == ZCOR_EINVAL) {
		rc = zc_fail(e, ZCOR_EINVAL, "cannot export the stickers: %s", se.msg);
		zc_free(src);
		zc_free(dst);
		goto out;
	}
	DIR *d = src_rc ? NULL : opendir(src);
	struct dirent *de;
	long long copied = 0;
	json_t *skipped = json_array();
	if (d && (rc = zc_dir_inside(dir, ".qq-stickers", ZC_DIR_CREATE, e)) == ZCOR_OK) {
		while ((de = readdir(d)) && !rc) {
			if (de->d_name[0] == '.')
				continue;
			char *from = zc_path_join(src, de->d_name), *to = zc_path_join(dst, de->d_name);
			char *data = NULL;
			size_t len = 0;
			if (zc_file_kind(from) != ZC_FILE_REGULAR) {
				char *lossy = zc_utf8_lossy(de->d_name);
				struct zc_buf rel = ZC_BUF_INIT;
				zc_buf_addf(&rel, "stickers/%s", lossy);
				json_array_append_new(skipped, zc_json_string_own(zc_buf_detach(&rel)));
				zc_free(lossy);
			} else if ((rc = zc_read_file_nofollow(from, IMPORT_FILE_MAX, &data, &len, e)) == ZCOR_OK &&
				   (rc = zc_write_file_atomic(to, data, len, e)) == ZCOR_OK) {
				copied++;
			}
			zc_free(data);
			zc_free(from);
			zc_free(to);
		}
	}
	if (d)
		closedir(d);
	zc_free(src);
	zc_free(dst);
	json_t *logs = NULL;
	if (!rc)
		rc = zc_transcript_export(m, NULL, dir, &logs, e);
	if (!rc)
		rc = zc_export_digest(m, dir, e);
	if (!rc)
		*report = json_pack("{s:s, s:O, s:I, s:O}", "to", dir, "files", files, "stickers",
				    (json_int_t)copied, "logs", logs);
	if (!rc && json_array_size(skipped))
		json_object_set(*report, "skippedStickers", skipped);
	json_decref(skipped);
	json_decref(logs);
out:
	json_decref(files);
	return rc;
}
