/*
 * exchange.c — the seed-003 directory layout as an exchange format:
 * `zcor import qq-memory DIR` and `zcor export qq-memory DIR` (X-STORE).
 *
 * Memory layer. The layout: INDEX.md, PEOPLE.md, COGNITION.md,
 * STICKERS.md, conversations/<slug>/MEMORY.md and archive/YYYY-MM.md,
 * .qq-stickers/ (collected images). An import is one operation, so one
 * transaction: a crash leaves the store as before or as after. Sticker
 * files are copied first (content-checked, never overwritten) and removed
 * again if the transaction fails. Lines that do not parse are kept
 * verbatim in their view and listed in the report; entries that break a
 * hard rule (a file path in COGNITION.md, a media path in STICKERS.md)
 * are kept the same way, for `zcor migrate cognition` and the doctor.
 * Q-PEOPLE: each group MEMORY.md's 「## 人」 section adds the people not
 * yet known (only adds, never changes one; private chats never). Q-ROLL:
 * an imported MEMORY.md over the threshold rolls over in the same
 * transaction, as after a qq_memory change.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/alloc.h"
#include "base/fs.h"
#include "base/json.h"
#include "base/timeutil.h"
#include "memory/mirror.h"
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

/* Moves entries that break a hard rule of the view into its unparsed
 * lines (kept verbatim, reported). */
static void quarantine(const struct zc_view *v, json_t *doc, json_t *report)
{
	json_t *entries = json_object_get(doc, "entries"), *keep = json_array();
	size_t i;
	json_t *x;
	json_array_foreach(entries, i, x) {
		char *line = zc_view_line(v, x);
		if (zc_view_entry_breaks_rule(v, x)) {
			json_t *u = json_pack("{s:s, s:O}", "text", line, "pos", json_object_get(x, "pos"));
			const char *sec = zc_json_str(x, v->kind == ZC_VIEW_COGNITION ? "type" : "section");
			if (sec)
				json_object_set_new(u, "section", json_string(sec));
			json_array_append_new(json_object_get(doc, "unparsed"), u);
			json_array_append_new(json_object_get(report, "keptAsWritten"),
					      json_pack("{s:s, s:s, s:s}", "path", v->path, "text", line,
							"why",
							v->kind == ZC_VIEW_COGNITION
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

static int import_view(struct zc_op *op, const struct zc_view *v, const char *file, json_t *report,
		       void (*progress)(void *, const char *), void *ud, struct zc_err *e)
{
	char *data = NULL;
	size_t len = 0;
	int rc = zc_read_file(file, IMPORT_FILE_MAX, &data, &len, e);
	if (rc)
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

static int copy_stickers(struct zc_op *op, const char *src_dir, json_t *report, struct zc_err *e)
{
	DIR *d = opendir(src_dir);
	if (!d)
		return ZCOR_OK;
	char *dest_dir = zc_path_join(op->m->dir, "stickers");
	int rc = zc_mkdir_p(dest_dir, e);
	struct dirent *de;
	while (!rc && (de = readdir(d))) {
		const char *name = de->d_name;
		if (name[0] == '.' || strchr(name, '\\'))
			continue;
		char *from = zc_path_join(src_dir, name), *to = zc_path_join(dest_dir, name);
		struct stat sb;
		char *data = NULL;
		size_t len = 0;
		if (stat(from, &sb) == 0 && S_ISREG(sb.st_mode)) {
			if (zc_file_exists(to)) {
				char *cur = NULL;
				size_t clen = 0;
				int same = zc_read_file(to, IMPORT_FILE_MAX, &cur, &clen, NULL) == ZCOR_OK &&
					   zc_read_file(from, IMPORT_FILE_MAX, &data, &len, NULL) == ZCOR_OK &&
					   clen == len && memcmp(cur, data, len) == 0;
				zc_free(cur);
				if (!same)
					json_array_append_new(json_object_get(report, "skipped"),
							      json_pack("{s:s, s:s}", "path", name, "why",
									"a different stickers/ file with this name exists; kept the existing one"));
			} else if ((rc = zc_read_file(from, IMPORT_FILE_MAX, &data, &len, e)) == ZCOR_OK &&
				   (rc = zc_write_file_atomic(to, data, len, e)) == ZCOR_OK) {
				zc_op_file_created(op, to);
				op->side_effect = 1;
				json_object_set_new(report, "stickersCopied",
						    json_integer(json_integer_value(json_object_get(report, "stickersCopied")) + 1));
			}
		}
		zc_free(data);
		zc_free(from);
		zc_free(to);
	}
	closedir(d);
	zc_free(dest_dir);
	return rc;
}

/* conversations/<slug>/log/YYYY-MM-DD.jsonl, in name (date) order; each
 * file's unparsable lines are reported, never dropped silently. */
static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int import_logs(struct zc_op *op, const char *dir, const char *slug, const char *conv,
		       json_t *report, void (*progress)(void *, const char *), void *ud,
		       struct zc_err *e)
{
	struct zc_buf p = ZC_BUF_INIT;
	zc_buf_addf(&p, "%s/conversations/%s/log", dir, slug);
	DIR *d = opendir(p.p);
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	while (d && (de = readdir(d))) {
		size_t len = strlen(de->d_name);
		if (len < 7 || strcmp(de->d_name + len - 6, ".jsonl") != 0 || de->d_name[0] == '.')
			continue;
		if (n == cap)
			names = zc_realloc(names, (cap = cap ? cap * 2 : 16) * sizeof(*names));
		names[n++] = zc_strdup(de->d_name);
	}
	if (d)
		closedir(d);
	if (n) /* names is NULL without log files, and qsort wants an array */
		qsort(names, n, sizeof(*names), by_name);
	int rc = ZCOR_OK;
	for (size_t i = 0; i < n; i++) {
		if (rc)
			goto next;
		char *f = zc_path_join(p.p, names[i]);
		json_t *r = NULL, *rel = json_sprintf("conversations/%s/log/%s", slug, names[i]);
		/* the logs are most of a long import: one line per day file */
		if (progress)
			progress(ud, json_string_value(rel));
		rc = zc_transcript_import_file(op->m, conv, f, &r, e);
		zc_free(f);
		if (rc) {
			json_decref(rel);
			goto next;
		}
		json_t *logs = json_object_get(report, "logs");
		json_object_set_new(r, "file", rel);
		json_array_append_new(logs, r);
		json_object_set_new(report, "messages",
				    json_integer(json_integer_value(json_object_get(report, "messages")) +
						 json_integer_value(json_object_get(r, "logged"))));
	next:
		zc_free(names[i]);
	}
	zc_free(names);
	zc_buf_release(&p);
	return rc;
}

/* digest.json: the digest progress per conversation, as
 * {"<key or slug>": {"at"|"lastDigestAt": ISO-8601 or ms, "date"|
 * "lastDigestDate": "YYYY-MM-DD"}} or the same under "conversations". */
static int import_digest(struct zc_op *op, const char *dir, json_t *report, struct zc_err *e)
{
	char *f = zc_path_join(dir, "digest.json"), *data = NULL;
	size_t len = 0;
	int rc = ZCOR_OK;
	if (!zc_file_exists(f))
		goto out;
	json_t *doc = NULL;
	struct zc_err pe = {0};
	if (zc_read_file(f, IMPORT_FILE_MAX, &data, &len, e) ||
	    zc_json_parse(data, len, "digest.json", &doc, &pe)) {
		json_array_append_new(json_object_get(report, "skipped"),
				      json_pack("{s:s, s:s}", "path", "digest.json", "why",
						pe.msg[0] ? pe.msg : "cannot be read"));
		zc_err_clear(e);
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
			json_array_append_new(json_object_get(report, "skipped"),
					      json_pack("{s:s, s:s}", "path", "digest.json", "why",
							"an entry that is not {conversation: {at, date}}; left out"));
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
	json_decref(doc);
out:
	zc_free(f);
	zc_free(data);
	return rc;
}

/* ---- the import operation ------------------------------------------------- */

struct import_args {
	const char *dir;
	void (*progress)(void *, const char *);
	void *ud;
};

static int import_body(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	struct import_args *ia = op->ud;
	const char *dir = ia->dir;
	json_t *report = json_pack("{s:s, s:[], s:[], s:[], s:[], s:[], s:[], s:[], s:[], s:i, s:i, s:i, "
				   "s:i}",
				   "from", dir, "views", "unparsed", "keptAsWritten", "skipped", "logs",
				   "archived", "alreadyArchived", "warnings", "peopleExtracted", 0,
				   "stickersCopied", 0, "messages", 0, "digests", 0);
	int rc;
	char *p = zc_path_join(dir, ".qq-stickers");
	rc = copy_stickers(op, p, report, e);
	zc_free(p);
	if (rc)
		goto out;
	static const struct {
		const char *name;
		enum zc_view_kind kind;
	} roots[] = {{"PEOPLE.md", ZC_VIEW_PEOPLE},
		     {"COGNITION.md", ZC_VIEW_COGNITION},
		     {"STICKERS.md", ZC_VIEW_STICKERS},
		     {"INDEX.md", ZC_VIEW_INDEX}};
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		char *f = zc_path_join(dir, roots[i].name);
		if (zc_file_exists(f)) {
			struct zc_view v = {.kind = roots[i].kind};
			snprintf(v.path, sizeof(v.path), "%s", roots[i].name);
			rc = import_view(op, &v, f, report, ia->progress, ia->ud, e);
		}
		zc_free(f);
		if (rc)
			goto out;
	}
	char *convs = zc_path_join(dir, "conversations");
	DIR *d = opendir(convs);
	struct dirent *de;
	while (d && !rc && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		struct zc_buf path = ZC_BUF_INIT;
		zc_buf_addf(&path, "conversations/%s/MEMORY.md", de->d_name);
		struct zc_view mv;
		struct zc_err ignore = {0};
		if (zc_view_path(path.p, path.len, "path", &mv, &ignore)) {
			json_array_append_new(json_object_get(report, "skipped"),
					      json_pack("{s:s, s:s}", "path", de->d_name, "why",
							"not a conversation folder (group-<id>, private-<qq>, console-<name>)"));
			zc_buf_release(&path);
			continue;
		}
		char *f = zc_path_join(dir, path.p);
		int has_memory = zc_file_exists(f);
		if (has_memory && !(rc = import_view(op, &mv, f, report, ia->progress, ia->ud, e)))
			rc = extract_people(op, &mv, report, e);
		zc_free(f);
		zc_buf_reset(&path);
		zc_buf_addf(&path, "%s/conversations/%s/archive", dir, de->d_name);
		DIR *ad = opendir(path.p);
		struct dirent *ae;
		while (ad && !rc && (ae = readdir(ad))) {
			size_t n = strlen(ae->d_name);
			if (n != 10 || strcmp(ae->d_name + 7, ".md") != 0)
				continue;
			char month[8];
			snprintf(month, sizeof(month), "%.7s", ae->d_name);
			struct zc_buf ap = ZC_BUF_INIT;
			zc_buf_addf(&ap, "conversations/%s/archive/%s", de->d_name, ae->d_name);
			struct zc_view av;
			if (zc_view_path(ap.p, ap.len, "path", &av, &ignore) == ZCOR_OK) {
				char *af = zc_path_join(dir, ap.p);
				rc = import_view(op, &av, af, report, ia->progress, ia->ud, e);
				zc_free(af);
			}
			zc_buf_release(&ap);
		}
		if (ad)
			closedir(ad);
		if (!rc)
			rc = import_logs(op, dir, de->d_name, mv.conv, report, ia->progress, ia->ud, e);
		if (!rc && has_memory)
			rc = roll_over(op, &mv, report, e);
		zc_buf_release(&path);
	}
	if (d)
		closedir(d);
	zc_free(convs);
	if (!rc)
		rc = import_digest(op, dir, report, e);
	if (rc)
		goto out;
	*out = report;
	report = NULL;
out:
	json_decref(report);
	return rc;
}

static const struct zc_opdef import_op = {"import qq-memory", NULL, import_body, 0};

int zc_import_qq(struct zc_mem *m, const struct zcor_ctx *ctx, const char *dir,
		 void (*progress)(void *, const char *), void *ud, json_t **report, struct zc_err *e)
{
	struct stat sb;
	if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
		return zc_fail(e, ZCOR_ENOTFOUND, "'%s' is not a directory; give the seed-003 memory "
						  "directory (the one holding PEOPLE.md, conversations/, …)",
			       dir);
	struct import_args ia = {dir, progress, ud};
	json_t *args = json_pack("{s:s}", "dir", dir);
	int rc = zc_mem_run_ud(m, ctx, &import_op, args, &ia, report, e);
	json_decref(args);
	if (!rc)
		zc_mirror_all(m); /* the logs and digest.json too, not only the views */
	return rc;
}

/* ---- export ------------------------------------------------------------------ */

static int write_text(const char *root, const char *rel, const char *text, struct zc_err *e)
{
	char *f = zc_path_join(root, rel);
	char *slash = strrchr(f, '/');
	int rc = ZCOR_OK;
	if (slash) {
		*slash = '\0';
		rc = zc_mkdir_below(root, f, e);
		*slash = '/';
	}
	if (!rc)
		rc = zc_write_file_atomic(f, text, strlen(text), e);
	zc_free(f);
	return rc;
}

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
	rc = write_text(x->dir, v->path, text, e);
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
	rc = write_text(dir, "digest.json", text, e);
	free(text);
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
	/* collected stickers */
	char *src = zc_path_join(m->dir, "stickers"), *dst = zc_path_join(dir, ".qq-stickers");
	DIR *d = opendir(src);
	struct dirent *de;
	long long copied = 0;
	if (d && (rc = zc_mkdir_below(dir, dst, e)) == ZCOR_OK) {
		while ((de = readdir(d)) && !rc) {
			if (de->d_name[0] == '.')
				continue;
			char *from = zc_path_join(src, de->d_name), *to = zc_path_join(dst, de->d_name);
			char *data = NULL;
			size_t len = 0;
			if ((rc = zc_read_file(from, IMPORT_FILE_MAX, &data, &len, e)) == ZCOR_OK &&
			    (rc = zc_write_file_atomic(to, data, len, e)) == ZCOR_OK)
				copied++;
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
	json_decref(logs);
out:
	json_decref(files);
	return rc;
}
