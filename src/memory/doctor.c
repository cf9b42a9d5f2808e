/*
 * doctor.c — `zcor doctor`: what in a memory directory needs a person
 * (SPEC §10). Memory layer; reads only, except with rebuild, which
 * recomputes every derived table (FTS, terms, citations) from the rows.
 *
 * Each finding is {code, severity, message, fix, path?, line?}; severity
 * "error" or "warning" needs a person, "info" does not.
 */
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/fs.h"
#include "base/json.h"
#include "memory/sticker.h"
#include "memory/view.h"
#include "text/norm.h"

static void finding(json_t *out, const char *code, const char *severity, const char *path,
		    long long line, const char *fix, const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));

static void finding(json_t *out, const char *code, const char *severity, const char *path,
		    long long line, const char *fix, const char *fmt, ...)
{
	struct zc_buf b = ZC_BUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	zc_buf_vaddf(&b, fmt, ap);
	va_end(ap);
	json_t *f = json_pack("{s:s, s:s, s:s, s:s}", "code", code, "severity", severity, "message",
			      b.p ? b.p : "", "fix", fix);
	if (path)
		json_object_set_new(f, "path", json_string(path));
	if (line > 0)
		json_object_set_new(f, "line", json_integer(line));
	json_array_append_new(out, f);
	zc_buf_release(&b);
}

static int integrity(struct zc_mem *m, json_t *out, struct zc_err *e)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(m->store.db, "PRAGMA integrity_check", -1, &st, NULL) != SQLITE_OK)
		return zc_store_fail(&m->store, sqlite3_errcode(m->store.db), e, "checking the database");
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *r = (const char *)sqlite3_column_text(st, 0);
		if (r && strcmp(r, "ok") != 0)
			finding(out, "DB_INTEGRITY", "error", "memory.db", 0,
				"restore the newest backup (zcor restore) and report the problem",
				"memory.db: %s", r);
	}
	sqlite3_finalize(st);
	/* rank 1: also against the rows indexed (both are external-content
	 * indexes; without it only the index's own structure is checked) */
	static const struct {
		const char *sql, *what;
	} fts[] = {{"INSERT INTO nodes_fts(nodes_fts, rank) VALUES('integrity-check', 1)", "memories"},
		   {"INSERT INTO messages_fts(messages_fts, rank) VALUES('integrity-check', 1)",
		    "message log"}};
	for (size_t i = 0; i < sizeof(fts) / sizeof(fts[0]); i++)
		if (sqlite3_exec(m->store.db, fts[i].sql, NULL, NULL, NULL) != SQLITE_OK)
			finding(out, "INDEX_STALE", "warning", "memory.db", 0, "run zcor doctor --rebuild",
				"the full-text index of the %s disagrees with them: %s", fts[i].what,
				sqlite3_errmsg(m->store.db));
	return ZCOR_OK;
}

/* A query of (text, text, int) rows, each one finding. */
static int each_row(struct zc_mem *m, const char *sql, json_t *out, const char *code,
		    const char *severity, const char *fix, const char *what, struct zc_err *e)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(m->store.db, sql, -1, &st, NULL) != SQLITE_OK)
		return zc_store_fail(&m->store, sqlite3_errcode(m->store.db), e, "running the doctor");
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *path = (const char *)sqlite3_column_text(st, 0);
		const char *text = (const char *)sqlite3_column_text(st, 1);
		finding(out, code, severity, path, sqlite3_column_int64(st, 2), fix, "%s: %s", what,
			text ? text : "");
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? ZCOR_OK : zc_store_fail(&m->store, rc, e, "running the doctor");
}

/* Lines kept as written, with their line in the rendered view, so the fix
 * (qq_memory remove {line}) can be followed as it is: COGNITION.md's are
 * warnings (never injected), the others information. */
static int unparsed(struct zc_mem *m, json_t *out, struct zc_err *e)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(m->store.db,
			       "SELECT DISTINCT path FROM view_unparsed ORDER BY path <> 'COGNITION.md', path",
			       -1, &st, NULL) != SQLITE_OK)
		return zc_store_fail(&m->store, sqlite3_errcode(m->store.db), e, "running the doctor");
	int rc = ZCOR_OK, step = SQLITE_DONE;
	while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
		const char *path = (const char *)sqlite3_column_text(st, 0);
		struct zc_view v;
		struct zc_err ignore = {0};
		if (zc_view_path(path, strlen(path), "path", &v, &ignore))
			continue; /* not a view path: nothing renders it */
		char *text = NULL;
		json_t *lines = NULL;
		if ((rc = zc_view_render(m, &v, &text, NULL, &lines, e)))
			break;
		int cog = v.kind == ZC_VIEW_COGNITION;
		size_t i;
		json_t *u;
		json_array_foreach(lines, i, u) {
			const char *line = zc_json_str(u, "text");
			long long at = json_integer_value(json_object_get(u, "line"));
			finding(out, cog ? "COGNITION_UNPARSED" : "VIEW_UNPARSED", cog ? "warning" : "info",
				v.path, at,
				cog ? "rewrite the entry with qq_memory upsert (name, meaning, type, …), then "
				      "remove the old line with qq_memory remove {line}"
				    : "rewrite it with qq_memory upsert if it should be an entry",
				"%s: %s",
				cog ? "a line of COGNITION.md that is not an entry (never injected)"
				    : "a line kept as written",
				line);
			/* one that breaks a hard rule (an import keeps it): the
			 * same test as every write */
			if ((cog || v.kind == ZC_VIEW_STICKERS) && zc_view_text_breaks_rule(&v, line))
				finding(out, "STICKER_MEDIA_PATH", "error", v.path, at,
					"run zcor migrate cognition (dry run first) to move it into STICKERS.md",
					"an image kept by its media path: %s", line);
		}
		zc_free(text);
		json_decref(lines);
	}
	sqlite3_finalize(st);
	if (!rc && step != SQLITE_DONE && step != SQLITE_ROW)
		rc = zc_store_fail(&m->store, step, e, "running the doctor");
	return rc;
}

static int views(struct zc_mem *m, json_t *out, struct zc_err *e)
{
	int rc;
	if ((rc = unparsed(m, out, e)))
		return rc;
	/* in the store a heading cannot repeat (views are rendered); what can
	 * is two headings that differ only in case, width or spaces */
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(m->store.db,
			       "SELECT DISTINCT section FROM nodes WHERE kind = 'cognition' AND kind <> 'memory' AND scope = "
			       "'global' AND superseded_by IS NULL AND section IS NOT NULL",
			       -1, &st, NULL) != SQLITE_OK)
		return zc_store_fail(&m->store, sqlite3_errcode(m->store.db), e, "running the doctor");
	json_t *seen = json_object();
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *sec = (const char *)sqlite3_column_text(st, 0);
		char *n = zc_norm(sec), *k = n;
		struct zc_buf b = ZC_BUF_INIT;
		for (; *k; k++)
			if (*k != ' ')
				zc_buf_addc(&b, *k);
		const char *other = zc_json_str(seen, zc_buf_str(&b));
		if (other)
			finding(out, "COGNITION_DUPLICATE_SECTION", "warning", "COGNITION.md", 0,
				"upsert the entries of one of them with the type of the other",
				"sections '%s' and '%s' are the same heading written two ways", other, sec);
		else
			json_object_set_new(seen, zc_buf_str(&b), json_string(sec));
		zc_buf_release(&b);
		zc_free(n);
	}
	sqlite3_finalize(st);
	json_decref(seen);
	if ((rc = each_row(m,
			   "SELECT 'COGNITION.md', title, 0 FROM nodes WHERE kind = 'cognition' AND kind <> 'memory' AND scope = "
			   "'global' AND superseded_by IS NULL GROUP BY title_norm HAVING count(*) > 1",
			   out, "COGNITION_DUPLICATE_ENTRY", "warning",
			   "keep one: qq_memory remove the other by line",
			   "two entries with the same name", e)))
		return rc;
	/* stickers: a collected file that is gone; a media-cache path */
	if (sqlite3_prepare_v2(m->store.db,
			       "SELECT title, json_extract(attrs, '$.image'), coalesce(l.line, 0) FROM "
			       "nodes n LEFT JOIN view_lines l ON l.kind = 'node' AND l.ref = n.seq WHERE "
			       "n.kind = 'sticker' AND n.kind <> 'memory' AND n.superseded_by IS NULL AND "
			       "json_extract(attrs, '$.image') IS NOT NULL",
			       -1, &st, NULL) != SQLITE_OK)
		return zc_store_fail(&m->store, sqlite3_errcode(m->store.db), e, "running the doctor");
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		const char *img = (const char *)sqlite3_column_text(st, 1);
		long long line = sqlite3_column_int64(st, 2);
		if (strstr(img, "media/") || strstr(img, ".qq-media")) {
			finding(out, "STICKER_MEDIA_PATH", "error", "STICKERS.md", line,
				"collect it with qq_save_sticker, or run zcor migrate cognition",
				"sticker '%s' points into the media cache (%s), which forgets files", name, img);
			continue;
		}
		if (!zc_sticker_path_ok(img)) { /* never looked up: it may point anywhere */
			finding(out, "STICKER_PATH_OUTSIDE", "error", "STICKERS.md", line,
				"qq_memory upsert the entry with its stickers/<name>.<ext> path, or with "
				"image \"\" (未收藏)",
				"sticker '%s' has an image path that is not a stickers/ file: %s", name,
				ZC_Q(img, 80));
			continue;
		}
		char *full = zc_path_join(m->dir, img);
		/* a link or special file there is UNSAFE_PATH's (planted()) */
		if (zc_file_kind(full) == ZC_FILE_NONE)
			finding(out, "STICKER_PATH_MISSING", "error", "STICKERS.md", line,
				"put the file back, or qq_memory upsert the entry without image (未收藏)",
				"sticker '%s': the file %s is missing", name, img);
		zc_free(full);
	}
	sqlite3_finalize(st);
	return ZCOR_OK;
}

/* ---- files zcor never follows (issue 12) --------------------------------------- */

#define UNSAFE_MAX 50 /* findings of this kind listed; the rest counted */

static void unsafe(json_t *out, const char *rel, enum zc_file_kind k, long *count)
{
	if (++*count > UNSAFE_MAX)
		return;
	finding(out, "UNSAFE_PATH", "error", rel, 0,
		"replace it with the real file or directory, or remove it (zcor never follows a "
		"link inside the memory directory)",
		"%s is %s: zcor neither reads nor writes through it", rel,
		k == ZC_FILE_LINK  ? "a symbolic link"
		: k == ZC_FILE_DIR ? "a directory where a file belongs"
				   : "not a regular file (a FIFO, socket or device)");
}

/* Walks rel (a directory of ours) depth levels down: every entry must be
 * a real directory or a regular file. */
static void walk(const char *dir, const char *rel, int depth, json_t *out, long *count)
{
	char *p = zc_path_join(dir, rel);
	enum zc_file_kind k = zc_file_kind(p);
	DIR *d = k == ZC_FILE_DIR && depth > 0 ? opendir(p) : NULL;
	if (k == ZC_FILE_LINK || k == ZC_FILE_OTHER)
		unsafe(out, rel, k, count);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char *sub = zc_path_join(rel, de->d_name);
		char *full = zc_path_join(dir, sub);
		enum zc_file_kind sk = zc_file_kind(full);
		if (sk == ZC_FILE_DIR)
			walk(dir, sub, depth - 1, out, count);
		else if (sk == ZC_FILE_LINK || sk == ZC_FILE_OTHER)
			unsafe(out, sub, sk, count);
		zc_free(sub);
		zc_free(full);
	}
	if (d)
		closedir(d);
	zc_free(p);
}

/* Links and special files where zcor keeps its own files: what a serve
 * or a tool refuses to follow, for a person to clear up. */
static void planted(const char *dir, json_t *out)
{
	static const struct {
		const char *rel;
		int depth; /* 0: a file */
	} ours[] = {{"stickers", 1},     {"media", 1},	   {"backups", 1},	 {"blobs", 1},
		    {"mirror", 4},	 {"PERSONA.md", 0}, {"config.json", 0}, {"synonyms.json", 0},
		    {"memory.db-wal", 0}, {"memory.db-shm", 0}, {"serve.token", 0}};
	long count = 0;
	for (size_t i = 0; i < sizeof(ours) / sizeof(ours[0]); i++) {
		char *p = zc_path_join(dir, ours[i].rel);
		enum zc_file_kind k = zc_file_kind(p);
		zc_free(p);
		if (ours[i].depth > 0)
			walk(dir, ours[i].rel, ours[i].depth, out, &count);
		else if (k != ZC_FILE_NONE && k != ZC_FILE_REGULAR)
			unsafe(out, ours[i].rel, k, &count);
	}
	if (count > UNSAFE_MAX)
		finding(out, "UNSAFE_PATH", "error", NULL, 0, "see the findings above",
			"and %ld more links or special files", count - UNSAFE_MAX);
}

json_t *zc_doctor_unopened(const char *dir)
{
	const char *code = NULL;
	struct zc_err e = {0};
	zc_mem_check_db(dir, &code, &e);
	if (!code)
		return NULL; /* not memory.db's state: the check itself failed */
	json_t *out = json_array();
	if (strcmp(code, "UNSAFE_PATH") == 0)
		; /* planted() below names it */
	else if (strcmp(code, "MEMORY_DB_EMPTY") == 0)
		finding(out, code, "error", "memory.db", 0,
			"restore the newest backup: move memory.db (and memory.db-wal) aside together, then "
			"zcor restore backups/<newest>.json; remove memory.db only if the directory is new",
			"%s", e.msg);
	else
		finding(out, code, "error", "memory.db", 0,
			"move memory.db aside (keep it) and restore the newest backup (zcor restore)", "%s",
			e.msg);
	planted(dir, out);
	return json_pack("{s:o, s:b}", "findings", out, "needsAttention", 1);
}

static int links(struct zc_mem *m, json_t *out, struct zc_err *e)
{
	int rc = each_row(m,
			  "SELECT 'memory.db', 'memory ' || id || ' has a missing parent ' || parent_id, 0 "
			  "FROM nodes n WHERE parent_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM nodes p "
			  "WHERE p.id = n.parent_id) UNION ALL "
			  "SELECT 'memory.db', 'memory ' || id || ' is superseded by a missing ' || "
			  "superseded_by, 0 FROM nodes n WHERE superseded_by IS NOT NULL AND NOT EXISTS "
			  "(SELECT 1 FROM nodes p WHERE p.id = n.superseded_by) UNION ALL "
			  "SELECT 'memory.db', 'person ' || person_id || ' links a missing memory ' || "
			  "memory_node_id, 0 FROM people WHERE memory_node_id IS NOT NULL AND NOT EXISTS "
			  "(SELECT 1 FROM nodes p WHERE p.id = memory_node_id)",
			  out, "DANGLING_LINK", "error",
			  "fix the link with zcor_memory_write / zcor_relationship_write, or restore a backup",
			  "a link to nothing", e);
	if (rc)
		return rc;
	/* Q-SCOPE: links keep to zc_scope_may_nest / zc_scope_may_link; older data,
	 * a restored backup, may hold one that crosses */
	return each_row(m,
			"SELECT 'memory.db', 'memory ' || n.id || ' (' || n.scope || ') has the parent ' || "
			"p.id || ' (' || p.scope || ')', 0 FROM nodes n JOIN nodes p ON p.id = n.parent_id "
			"WHERE p.scope <> n.scope AND NOT (p.scope = 'global' AND n.scope NOT LIKE "
			"'private:%') UNION ALL "
			"SELECT 'memory.db', 'memory ' || n.id || ' (' || n.scope || ') is superseded by ' || "
			"p.id || ' (' || p.scope || ')', 0 FROM nodes n JOIN nodes p ON p.id = "
			"n.superseded_by WHERE p.scope <> n.scope",
			out, "SCOPE_LINK", "warning",
			"move the memory with zcor_memory_write parentId (or null), or relink the person, "
			"so that both ends are in one scope",
			"a link between scopes, which a conversation may see but not follow", e);
}

static int settings(struct zc_mem *m, json_t *out)
{
	zc_config_refresh(&m->conf);
	if (m->conf.warning[0])
		finding(out, "CONFIG_INVALID", "error", "config.json", 0,
			"fix the named key; the last good settings stay in use meanwhile", "%s",
			m->conf.warning);
	zc_syn_refresh(&m->syn, NULL);
	if (zc_syn_warning(&m->syn) && *zc_syn_warning(&m->syn))
		finding(out, "SYNONYMS_INVALID", "error", "synonyms.json", 0,
			"fix the file; the last good groups stay in use meanwhile", "%s",
			zc_syn_warning(&m->syn));
	return ZCOR_OK;
}

static int over_threshold(struct zc_mem *m, json_t *out, struct zc_err *e)
{
	struct zcor_ctx host = {ZCOR_ACTOR_CLI, NULL};
	struct zc_op op = {.m = m, .ctx = &host, .now = zc_mem_now(m)};
	json_t *list = NULL;
	int rc = zc_view_list(&op, &list, e);
	if (rc)
		return rc;
	long threshold = zc_view_rollover_threshold(m);
	size_t i;
	json_t *v;
	json_array_foreach(list, i, v) {
		const char *kind = zc_json_str(v, "kind");
		long long bytes = json_integer_value(json_object_get(v, "bytes"));
		if (strcmp(kind, "memory") == 0 && bytes > threshold)
			finding(out, "MEMORY_OVER_THRESHOLD", "warning", zc_json_str(v, "path"), 0,
				"unpin or remove entries; rollover moves only unpinned ones",
				"%lld bytes, over the rollover threshold of %ld", bytes, threshold);
	}
	json_decref(list);
	return ZCOR_OK;
}

/* A store with nothing in it (no memory, person or message) beside
 * backups/ that holds state copies: most likely memory.db was deleted and
 * zcor made a new one (a new directory has no backups). History is not
 * asked: the first read after the loss is recorded in the new store. */
static int new_beside_backups(struct zc_mem *m, json_t *out, struct zc_err *e)
{
	sqlite3_stmt *st = zc_stmt(&m->store,
				   "SELECT (SELECT count(*) FROM nodes) + (SELECT count(*) FROM people) + "
				   "(SELECT count(*) FROM messages)",
				   e);
	if (!st)
		return e->code;
	int rows = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : 1;
	sqlite3_reset(st);
	if (rows)
		return ZCOR_OK;
	char *dir = zc_path_join(m->dir, "backups");
	DIR *d = zc_file_kind(dir) == ZC_FILE_DIR ? opendir(dir) : NULL;
	struct dirent *de;
	int copies = 0;
	while (d && (de = readdir(d)))
		copies += strncmp(de->d_name, "memory-state-", 13) == 0;
	if (d)
		closedir(d);
	zc_free(dir);
	if (copies)
		finding(out, "MEMORY_DB_NEW_BESIDE_BACKUPS", "error", "memory.db", 0,
			"if memory.db was lost, restore the newest backup (zcor restore backups/<newest>.json); "
			"if the store is meant to be new, move backups/ away",
			"the store is empty (no memory, person or message) while backups/ holds "
			"%d state cop%s", copies, copies == 1 ? "y" : "ies");
	return ZCOR_OK;
}

int zc_doctor(struct zc_mem *m, int rebuild, json_t **report, struct zc_err *e)
{
	json_t *out = json_array(), *rebuilt = NULL;
	int rc = ZCOR_OK;
	*report = NULL;
	if (rebuild && (rc = zc_mem_reindex(m, &rebuilt, e)))
		goto done;
	struct zc_err ignored = {0};
	zc_mem_fts_catch_up(m, &ignored); /* nodes_fts complete before it is checked */
	if ((rc = zc_store_begin(&m->store, 0, e)))
		goto done;
	if (!(rc = integrity(m, out, e)) && !(rc = views(m, out, e)) && !(rc = links(m, out, e)) &&
	    !(rc = settings(m, out)) && !(rc = new_beside_backups(m, out, e)))
		rc = over_threshold(m, out, e);
	zc_store_rollback(&m->store);
	if (!rc)
		planted(m->dir, out);
	if (rc)
		goto done;
	int need = 0;
	size_t i;
	json_t *f;
	json_array_foreach(out, i, f) need |= strcmp(zc_json_str(f, "severity"), "info") != 0;
	*report = json_pack("{s:O, s:b}", "findings", out, "needsAttention", need);
	if (rebuilt)
		json_object_set(*report, "rebuilt", rebuilt);
done:
	json_decref(out);
	json_decref(rebuilt);
	return rc;
}
