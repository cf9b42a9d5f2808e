/*
 * state.c — the state JSON exchange formats (Z-BACKUP, X-MIGRATE):
 * backup writes format 3; restore and the first-use migration read
 * formats 1, 2, 3 and the legacy memories.json. docs/FORMATS.md describes
 * them. Everything is checked before anything changes, and the replace
 * is part of the operation's one transaction. Memory layer.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/fs.h"
#include "base/json.h"
#include "base/utf8.h"
#include "base/timeutil.h"
#include "memory/memory.h"
#include "text/norm.h"

#define STATE_MAX_BYTES (512u << 20)

/* ---- export --------------------------------------------------------- */

int zc_state_export(struct zc_op *op, json_t **state, struct zc_err *e)
{
	struct zc_store *s = &op->m->store;
	json_t *nodes = json_array(), *important = json_array(), *people = json_array();
	int rc = ZCOR_OK, step;
	sqlite3_stmt *st = zc_stmt(s, "SELECT " ZC_NODE_COLS " FROM nodes ORDER BY seq", e);
	if (!st)
		goto fail;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *n = zc_node_from_row(st);
		json_array_append_new(nodes, n);
	}
	sqlite3_reset(st);
	if (step != SQLITE_DONE)
		goto sqlfail;
	st = zc_stmt(s, "SELECT id FROM nodes WHERE important_seq IS NOT NULL ORDER BY important_seq", e);
	if (!st)
		goto fail;
	while ((step = sqlite3_step(st)) == SQLITE_ROW)
		json_array_append_new(important, json_string((const char *)sqlite3_column_text(st, 0)));
	sqlite3_reset(st);
	if (step != SQLITE_DONE)
		goto sqlfail;
	st = zc_stmt(s, "SELECT " ZC_PERSON_COLS " FROM people ORDER BY seq", e);
	if (!st)
		goto fail;
	while ((step = sqlite3_step(st)) == SQLITE_ROW)
		json_array_append_new(people, zc_person_from_row(st));
	sqlite3_reset(st);
	if (step != SQLITE_DONE)
		goto sqlfail;
	zc_syn_refresh(&op->m->syn, NULL);
	*state = json_pack("{s:s, s:i, s:o, s:o, s:o, s:o, s:{s:s, s:I}}", "format",
			   "zcor-memory-state", "version", 3, "exportedAt", json_null(), "nodes", nodes,
			   "important", important, "people", people, "synonyms", "file",
			   "synonyms.json", "groups", (json_int_t)zc_syn_count(&op->m->syn));
	zc_json_set_time(*state, "exportedAt", op->now);
	return ZCOR_OK;
sqlfail:
	rc = zc_store_fail(s, step, e, "reading the state");
	goto out;
fail:
	rc = e->code;
out:
	json_decref(nodes);
	json_decref(important);
	json_decref(people);
	return rc;
}

/* ---- convert (checks everything, names the bad field) ---------------- */

static int bad(struct zc_err *e, const char *path, const char *why)
{
	return zc_fail(e, ZCOR_EINVAL, "%s %s", path, why);
}

/* An id given as a string or an integer (v1/v2 files used numbers). */
static json_t *id_of(json_t *v)
{
	if (json_is_string(v) && json_string_length(v) > 0 &&
	    zc_utf8_len(json_string_value(v)) <= 64)
		return json_incref(v);
	if (json_is_integer(v)) {
		char b[32];
		snprintf(b, sizeof(b), "%lld", (long long)json_integer_value(v));
		return json_string(b);
	}
	return NULL;
}

static int opt_string(json_t *o, const char *key, const char *path, struct zc_err *e)
{
	json_t *v = json_object_get(o, key);
	if (v && !json_is_string(v) && !json_is_null(v)) {
		char p[160];
		snprintf(p, sizeof(p), "%s.%s", path, key);
		return bad(e, p, "must be a string or null");
	}
	return ZCOR_OK;
}

static int opt_time(json_t *o, const char *key, const char *path, int64_t now, struct zc_err *e)
{
	json_t *v = json_object_get(o, key);
	char p[160];
	snprintf(p, sizeof(p), "%s.%s", path, key);
	int64_t ms;
	if (!v || json_is_null(v)) {
		zc_json_set_time(o, key, now);
		return ZCOR_OK;
	}
	if (json_is_integer(v)) { /* epoch milliseconds, as some old files have */
		zc_json_set_time(o, key, json_integer_value(v));
		return ZCOR_OK;
	}
	if (!json_is_string(v) || zc_time_parse(json_string_value(v), p, &ms, e))
		return bad(e, p, "must be an ISO-8601 time with a zone");
	zc_json_set_time(o, key, ms);
	return ZCOR_OK;
}

static int string_array(json_t *o, const char *key, const char *path, struct zc_err *e)
{
	json_t *v = json_object_get(o, key);
	char p[160];
	snprintf(p, sizeof(p), "%s.%s", path, key);
	if (!v || json_is_null(v)) {
		json_object_set_new(o, key, json_array());
		return ZCOR_OK;
	}
	if (!json_is_array(v))
		return bad(e, p, "must be an array of strings");
	size_t i;
	json_t *x;
	json_array_foreach(v, i, x) if (!json_is_string(x)) return bad(e, p, "must be an array of strings");
	return ZCOR_OK;
}

/* One node of any version -> the format-3 node (new reference). */
static int convert_node(json_t *in, size_t i, int version, int64_t now, json_t **out,
			struct zc_err *e)
{
	char path[64];
	snprintf(path, sizeof(path), "%s[%zu]", version == 3 ? "nodes" : "memories", i);
	*out = NULL;
	if (!json_is_object(in))
		return bad(e, path, "must be an object");
	json_t *n = json_deep_copy(in);
	int rc = ZCOR_OK;
	json_t *id = id_of(json_object_get(n, "id"));
	if (!id && version == 0 && !json_object_get(n, "id")) {
		/* a legacy memories.json record without an id: it gets a
		 * generated one when it is stored (zc_state_replace) */
		id = json_null();
	}
	if (!id) {
		rc = bad(e, path, "needs an 'id' (a string of 1 to 64 characters)");
		goto out;
	}
	json_object_set_new(n, "id", id);
	json_t *content = json_object_get(n, "content");
	if (!content && json_is_string(json_object_get(n, "text"))) /* legacy spelling */
		json_object_set(n, "content", content = json_object_get(n, "text"));
	json_object_del(n, "text");
	if (!json_is_string(content)) {
		rc = bad(e, path, "needs a string 'content'");
		goto out;
	}
	json_t *title = json_object_get(n, "title");
	if (!title || json_is_null(title)) {
		/* legacy records without a title: the first line of the content */
		const char *c = json_string_value(content);
		size_t len = strcspn(c, "\n");
		size_t cut = zc_utf8_prefix(c, 30);
		json_object_set_new(n, "title", json_stringn(c, len < cut ? len : cut));
	} else if (!json_is_string(title)) {
		rc = bad(e, path, "'title' must be a string");
		goto out;
	}
	if (version == 0)
		version = 1;
	if (version < 3) {
		/* v1 and v2 records become root nodes of kind memory */
		json_object_set_new(n, "parentId", json_null());
		json_object_set_new(n, "scope", json_string("global"));
		json_object_set_new(n, "kind", json_string("memory"));
	}
	if (version < 2)
		json_object_set_new(n, "keywords", json_array());
	static const char *const strs[] = {"parentId", "sourceMessage", "supersededBy",
					   "supersededReason", "mergedReason", "section", "date",
					   "expires", "confidence", "archiveMonth"};
	for (size_t k = 0; k < sizeof(strs) / sizeof(strs[0]) && !rc; k++)
		rc = opt_string(n, strs[k], path, e);
	if (!rc)
		rc = string_array(n, "keywords", path, e);
	if (!rc)
		rc = opt_time(n, "createdAt", path, now, e);
	if (!rc)
		rc = opt_time(n, "updatedAt", path, now, e);
	if (rc)
		goto out;
	json_t *sm = json_object_get(n, "sourceMessage");
	if (json_is_string(sm) && zc_utf8_len(json_string_value(sm)) > ZC_SOURCE_MESSAGE_MAX) {
		rc = bad(e, path, "'sourceMessage' is longer than 20000 characters");
		goto out;
	}
	json_t *scope = json_object_get(n, "scope");
	if (scope && !json_is_string(scope)) {
		rc = bad(e, path, "'scope' must be a string");
		goto out;
	}
	json_t *attrs = json_object_get(n, "attrs");
	if (attrs && !json_is_object(attrs) && !json_is_null(attrs)) {
		rc = bad(e, path, "'attrs' must be an object");
		goto out;
	}
	json_t *mf = json_object_get(n, "mergedFrom");
	if (mf && !json_is_null(mf) && !json_is_array(mf)) {
		rc = bad(e, path, "'mergedFrom' must be an array of ids");
		goto out;
	}
out:
	if (rc)
		json_decref(n);
	else
		*out = n;
	return rc;
}

static int convert_person(json_t *in, size_t i, int version, int64_t now, json_t **out,
			  struct zc_err *e)
{
	char path[64];
	snprintf(path, sizeof(path), "%s[%zu]", version == 3 ? "people" : "relationships", i);
	*out = NULL;
	if (!json_is_object(in))
		return bad(e, path, "must be an object");
	json_t *p = json_deep_copy(in);
	int rc = ZCOR_OK;
	json_t *id = id_of(json_object_get(p, "personId"));
	if (!id) {
		rc = bad(e, path, "needs a 'personId' (a string of 1 to 64 characters)");
		goto out;
	}
	json_object_set_new(p, "personId", id);
	if (!json_is_string(json_object_get(p, "name"))) {
		rc = bad(e, path, "needs a string 'name'");
		goto out;
	}
	json_t *aff = json_object_get(p, "affinity");
	if (!aff)
		json_object_set_new(p, "affinity", json_integer(0));
	else if (!json_is_integer(aff) || json_integer_value(aff) < -100 || json_integer_value(aff) > 100) {
		rc = bad(e, path, "'affinity' must be an integer from -100 to 100");
		goto out;
	}
	static const char *const strs[] = {"relationship", "reason", "memoryNodeId", "confidence"};
	for (size_t k = 0; k < 4 && !rc; k++)
		rc = opt_string(p, strs[k], path, e);
	if (!rc)
		rc = string_array(p, "aliases", path, e);
	if (!rc)
		rc = opt_time(p, "updatedAt", path, now, e);
	if (!rc)
		rc = opt_time(p, "createdAt", path, now, e);
	if (!rc && json_object_get(p, "firstSeen"))
		rc = opt_time(p, "firstSeen", path, now, e);
out:
	if (rc)
		json_decref(p);
	else
		*out = p;
	return rc;
}

/* References must point inside the state, and parents must not cycle. */
static int check_links(json_t *nodes, json_t *people, json_t *important, struct zc_err *e)
{
	json_t *byid = json_object();
	size_t i;
	json_t *n;
	int rc = ZCOR_OK;
	json_array_foreach(nodes, i, n) {
		const char *id = zc_json_str(n, "id");
		if (!id)
			continue; /* legacy record without an id */
		if (json_object_get(byid, id)) {
			rc = zc_fail(e, ZCOR_EINVAL, "nodes[%zu]: id '%s' appears twice", i, id);
			goto out;
		}
		json_object_set(byid, id, n);
	}
	json_array_foreach(nodes, i, n) {
		static const char *const refs[] = {"parentId", "supersededBy"};
		for (int k = 0; k < 2; k++) {
			const char *r = zc_json_str(n, refs[k]);
			if (r && !json_object_get(byid, r)) {
				rc = zc_fail(e, ZCOR_EINVAL, "nodes[%zu].%s: no node with id '%s'", i,
					     refs[k], r);
				goto out;
			}
		}
		/* parent cycle: walk up at most the number of nodes */
		const char *cur = zc_json_str(n, "parentId");
		const char *self = zc_json_str(n, "id");
		for (size_t steps = 0; cur; steps++) {
			if (steps > json_array_size(nodes) || (self && strcmp(cur, self) == 0)) {
				rc = zc_fail(e, ZCOR_EINVAL, "nodes[%zu]: its parents form a cycle", i);
				goto out;
			}
			cur = zc_json_str(json_object_get(byid, cur), "parentId");
		}
	}
	json_array_foreach(people, i, n) {
		const char *r = zc_json_str(n, "memoryNodeId");
		if (r && !json_object_get(byid, r)) {
			rc = zc_fail(e, ZCOR_EINVAL, "people[%zu].memoryNodeId: no node with id '%s'", i, r);
			goto out;
		}
	}
	json_array_foreach(important, i, n) {
		json_t *id = id_of(n);
		int ok = id && json_object_get(byid, json_string_value(id));
		json_decref(id);
		if (!ok) {
			rc = zc_fail(e, ZCOR_EINVAL, "important[%zu]: no node with that id", i);
			goto out;
		}
	}
	if (json_array_size(important) > ZC_IMPORTANT_MAX)
		rc = zc_fail(e, ZCOR_EINVAL, "important: at most %d ids", ZC_IMPORTANT_MAX);
out:
	json_decref(byid);
	return rc;
}

int zc_state_convert(const json_t *doc, int64_t now, json_t **v3, int *version, struct zc_err *e)
{
	json_t *list, *rels = NULL, *imp = NULL;
	*v3 = NULL;
	if (json_is_array(doc)) { /* legacy memories.json: a bare array */
		*version = 0;
		list = (json_t *)doc;
	} else if (!json_is_object(doc)) {
		return zc_fail(e, ZCOR_EINVAL, "a state file must be a JSON object (or a legacy array)");
	} else {
		json_t *ver = json_object_get(doc, "version");
		if (!ver && json_is_array(json_object_get(doc, "memories")) &&
		    !json_object_get(doc, "relationships"))
			*version = 0; /* legacy {"memories": [...]} */
		else if (json_is_integer(ver) && json_integer_value(ver) >= 1 && json_integer_value(ver) <= 3)
			*version = (int)json_integer_value(ver);
		else
			return zc_fail(e, ZCOR_EINVAL,
				       "'version' must be 1, 2 or 3 (this is not a zcor state file, or "
				       "one from a newer zcor)");
		list = json_object_get(doc, *version == 3 ? "nodes" : "memories");
		rels = json_object_get(doc, *version == 3 ? "people" : "relationships");
		imp = json_object_get(doc, "important");
		if (!json_is_array(list))
			return zc_fail(e, ZCOR_EINVAL, "'%s' must be an array",
				       *version == 3 ? "nodes" : "memories");
		if (rels && !json_is_array(rels) && !json_is_null(rels))
			return zc_fail(e, ZCOR_EINVAL, "'%s' must be an array",
				       *version == 3 ? "people" : "relationships");
		if (*version == 1)
			rels = NULL; /* v1 had no relationships: an empty set */
		if (imp && !json_is_array(imp) && !json_is_null(imp))
			return zc_fail(e, ZCOR_EINVAL, "'important' must be an array of ids");
	}
	json_t *nodes = json_array(), *people = json_array(), *important = json_array();
	int rc = ZCOR_OK;
	size_t i;
	json_t *x, *c;
	json_array_foreach(list, i, x) {
		if ((rc = convert_node(x, i, *version, now, &c, e)))
			goto out;
		json_array_append_new(nodes, c);
	}
	json_array_foreach(rels, i, x) {
		if ((rc = convert_person(x, i, *version, now, &c, e)))
			goto out;
		if (*version < 3)
			json_object_set_new(c, "memoryNodeId", json_null()); /* old links are not kept */
		json_array_append_new(people, c);
	}
	json_array_foreach(imp, i, x) {
		json_t *id = id_of(x);
		json_array_append_new(important, id ? id : json_null());
	}
	if ((rc = check_links(nodes, people, important, e)))
		goto out;
	*v3 = json_pack("{s:s, s:i, s:O, s:O, s:O}", "format", "zcor-memory-state", "version", 3,
			"nodes", nodes, "important", important, "people", people);
out:
	json_decref(nodes);
	json_decref(people);
	json_decref(important);
	return rc;
}

/* ---- replace -------------------------------------------------------- */

int zc_state_replace(struct zc_op *op, json_t *v3, struct zc_err *e)
{
	struct zc_store *s = &op->m->store;
	int rc;
	/* Parents and supersede targets point at rows inserted later in the
	 * file: defer foreign keys to commit for this transaction. */
	if ((rc = zc_exec(s, "PRAGMA defer_foreign_keys = ON", e)) ||
	    (rc = zc_exec(s, "DELETE FROM people", e)) || (rc = zc_exec(s, "DELETE FROM nodes", e)))
		return rc;
	size_t i;
	json_t *x;
	json_array_foreach(json_object_get(v3, "nodes"), i, x) {
		if (!zc_json_str(x, "id")) {
			char id[16];
			if ((rc = zc_node_new_id(op, id, e)))
				return rc;
			json_object_set_new(x, "id", json_string(id));
		}
		if ((rc = zc_node_save(op, x, e)))
			return rc;
	}
	json_array_foreach(json_object_get(v3, "people"), i, x) {
		if ((rc = zc_person_save(op, x, e)))
			return rc;
	}
	long long seq = 0;
	if ((rc = zc_meta_get_int(s, "important_seq", &seq, e)))
		return rc;
	json_array_foreach(json_object_get(v3, "important"), i, x) {
		sqlite3_stmt *st = zc_stmt(s, "UPDATE nodes SET important_seq = ?2 WHERE id = ?1", e);
		if (!st)
			return e->code;
		sqlite3_bind_text(st, 1, json_string_value(x), -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 2, ++seq);
		int step = sqlite3_step(st);
		sqlite3_reset(st);
		if (step != SQLITE_DONE)
			return zc_store_fail(s, step, e, "restoring important marks");
	}
	return zc_meta_set_int(s, "important_seq", seq, e);
}

/* ---- backup and restore --------------------------------------------- */

static int write_backup(struct zc_op *op, char **name, json_t **counts, struct zc_err *e)
{
	json_t *state = NULL;
	int rc = zc_state_export(op, &state, e);
	if (rc)
		return rc;
	char *dir = zc_path_join(op->m->dir, "backups");
	/* a planted backups/ link would put the copy (every memory) elsewhere */
	if ((rc = zc_dir_inside(op->m->dir, "backups", ZC_DIR_CREATE, e)))
		goto out;
	char stamp[ZC_TIME_LEN];
	zc_time_stamp(op->now, stamp);
	struct zc_buf b = ZC_BUF_INIT;
	for (int n = 0;; n++) {
		zc_buf_reset(&b);
		zc_buf_addf(&b, "%s/memory-state-%s%s", dir, stamp, "");
		if (n)
			zc_buf_addf(&b, "-%d", n);
		zc_buf_adds(&b, ".json");
		if (zc_file_kind(b.p) == ZC_FILE_NONE)
			break;
	}
	char *text = json_dumps(state, JSON_INDENT(1));
	rc = zc_write_file_atomic(b.p, text, strlen(text), e);
	zc_free(text);
	if (!rc) {
		op->side_effect = 1;
		*name = zc_strdup(b.p + strlen(dir) - strlen("backups"));
		*counts = json_pack("{s:I, s:I}", "nodes",
				    (json_int_t)json_array_size(json_object_get(state, "nodes")), "people",
				    (json_int_t)json_array_size(json_object_get(state, "people")));
	}
	zc_buf_release(&b);
out:
	zc_free(dir);
	json_decref(state);
	return rc;
}

static int memory_backup(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	char *name = NULL;
	json_t *counts = NULL;
	int rc = write_backup(op, &name, &counts, e);
	if (rc)
		return rc;
	json_object_set_new(counts, "file", json_string(name));
	zc_op_after(op, json_pack("{s:s}", "backupFile", name));
	zc_free(name);
	*out = counts;
	return ZCOR_OK;
}

/* backupFile names a file in backups/: "x.json" or "backups/x.json". */
static int backup_path(struct zc_op *op, const char *arg, char **path, struct zc_err *e)
{
	const char *name = strncmp(arg, "backups/", 8) == 0 ? arg + 8 : arg;
	if (!*name || strchr(name, '/') || strchr(name, '\\') || strcmp(name, ".") == 0 ||
	    strcmp(name, "..") == 0 || name[0] == '.')
		return zc_fail(e, ZCOR_EINVAL,
			       "argument 'backupFile': '%s' is not a file in backups/; give a name "
			       "such as 'memory-state-20261129T120000000Z.json'",
			       ZC_Q(arg, 100));
	struct zc_err de = {0};
	if (zc_dir_inside(op->m->dir, "backups", 0, &de) == ZCOR_EINVAL)
		return zc_fail(e, ZCOR_EINVAL, "argument 'backupFile': %s", de.msg);
	char *dir = zc_path_join(op->m->dir, "backups");
	*path = zc_path_join(dir, name);
	zc_free(dir);
	struct stat st;
	if (lstat(*path, &st) == 0 && !S_ISREG(st.st_mode)) {
		zc_free(*path);
		*path = NULL;
		return zc_fail(e, ZCOR_EINVAL,
			       "argument 'backupFile': backups/%s is not a regular file (a link or special "
			       "file, which zcor does not follow); give a backup zcor_memory_backup made",
			       ZC_Q(name, 100));
	}
	if (lstat(*path, &st) != 0) {
		zc_free(*path);
		*path = NULL;
		return zc_fail(e, ZCOR_ENOTFOUND,
			       "argument 'backupFile': no backup named '%s' in backups/; "
			       "zcor_memory_backup makes one",
			       ZC_Q(name, 100));
	}
	return ZCOR_OK;
}

int zc_backups_operator_only(const struct zcor_ctx *ctx, const char *what, struct zc_err *e)
{
	const char *conv = ctx ? ctx->conversation : NULL;
	if (conv && strncmp(conv, "console:", 8) != 0)
		return zc_fail(e, ZCOR_EFORBIDDEN,
			       "%s, so only the operator (CLI, web page or console) may do it", what);
	return ZCOR_OK;
}

static int memory_restore(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	int rc = zc_backups_operator_only(op->ctx, "restoring replaces the memory of every conversation", e);
	if (rc)
		return rc;
	char *path = NULL, *data = NULL, *saved = NULL;
	size_t len = 0;
	json_t *doc = NULL, *v3 = NULL, *counts = NULL;
	int version = 0;
	rc = backup_path(op, zc_json_str(args, "backupFile"), &path, e);
	if (rc)
		return rc;
	/* the file backup_path looked at, not one a link put there since */
	if ((rc = zc_read_file_nofollow(path, STATE_MAX_BYTES, &data, &len, e)) ||
	    (rc = zc_json_parse(data, len, "the backup", &doc, e)) ||
	    (rc = zc_state_convert(doc, op->now, &v3, &version, e))) {
		zc_err_prefix(e, "argument 'backupFile'");
		goto out;
	}
	/* the current state first, so a restore can itself be undone */
	if ((rc = write_backup(op, &saved, &counts, e)) || (rc = zc_state_replace(op, v3, e)))
		goto out;
	json_decref(counts);
	counts = NULL;
	zc_op_before(op, json_pack("{s:s}", "backupFile", saved));
	zc_op_after(op, json_pack("{s:s, s:I, s:I}", "restoredFrom", zc_json_str(args, "backupFile"),
				  "nodes", (json_int_t)json_array_size(json_object_get(v3, "nodes")),
				  "people", (json_int_t)json_array_size(json_object_get(v3, "people"))));
	*out = json_pack("{s:s, s:i, s:s, s:I, s:I}", "restoredFrom", zc_json_str(args, "backupFile"),
			 "formatVersion", version, "backupOfPrevious", saved, "nodes",
			 (json_int_t)json_array_size(json_object_get(v3, "nodes")), "people",
			 (json_int_t)json_array_size(json_object_get(v3, "people")));
out:
	zc_free(path);
	zc_free(data);
	zc_free(saved);
	json_decref(doc);
	json_decref(v3);
	json_decref(counts);
	return rc;
}

const struct zc_opdef zc_op_memory_backup = {"zcor_memory_backup", NULL, memory_backup, 0};
const struct zc_opdef zc_op_memory_restore = {"zcor_memory_restore", NULL, memory_restore, 0};

/* ---- the backups as the page lists and downloads them --------------- */

/* The stamp zc_time_stamp writes (20261129T192500123Z) at s: its instant
 * in *ms and the length of the stamp, or 0 when s does not start with one. */
static size_t stamp_at(const char *s, int64_t *ms)
{
	static const char shape[] = "DDDDDDDDTDDDDDDDDDZ";
	for (size_t i = 0; shape[i]; i++)
		if (shape[i] == 'D' ? !(s[i] >= '0' && s[i] <= '9') : s[i] != shape[i])
			return 0;
	char iso[ZC_TIME_LEN];
	snprintf(iso, sizeof(iso), "%.4s-%.2s-%.2sT%.2s:%.2s:%.2s.%.3sZ", s, s + 4, s + 6, s + 9,
		 s + 11, s + 13, s + 15);
	return zc_time_parse(iso, "stamp", ms, NULL) == ZCOR_OK ? sizeof(shape) - 1 : 0;
}

const char *zc_backup_kind(const char *name, int64_t *ms)
{
	static const char *const views[] = {"COGNITION.md.bak-", "STICKERS.md.bak-"};
	int64_t at = 0;
	size_t n;
	if (strncmp(name, "memory-state-", 13) == 0 && (n = stamp_at(name + 13, &at))) {
		/* write_backup's name: the stamp, "-<n>" when taken, ".json" */
		const char *p = name + 13 + n;
		if (*p == '-' && p[1] >= '1' && p[1] <= '9') {
			p++;
			for (int d = 0; *p >= '0' && *p <= '9' && d < 6; d++)
				p++;
		}
		if (strcmp(p, ".json") == 0)
			goto ok;
		return NULL;
	}
	for (size_t i = 0; i < sizeof(views) / sizeof(views[0]); i++) {
		size_t vl = strlen(views[i]);
		if (strncmp(name, views[i], vl) == 0 && (n = stamp_at(name + vl, &at)) && !name[vl + n]) {
			if (ms)
				*ms = at;
			return "view";
		}
	}
	return NULL;
ok:
	if (ms)
		*ms = at;
	return "state";
}

/* backups/ as a directory descriptor: -1 with *absent set when there is
 * none yet, -1 with e set when it is not a real directory (a link). */
static int backups_dir(struct zc_mem *m, int *absent, struct zc_err *e)
{
	struct zc_err de = {0};
	char *path = zc_path_join(m->dir, "backups");
	int fd = zc_open_dir_at(AT_FDCWD, path, &de);
	zc_free(path);
	*absent = fd < 0 && de.code == ZCOR_ENOTFOUND;
	if (fd < 0 && !*absent)
	{
		if (de.code == ZCOR_EINVAL)
			zc_fail(e, de.code, "backups/ is a symbolic link or not a directory; zcor does not follow it");
		else
			zc_fail(e, de.code, "backups/ cannot be opened: %s", de.msg);
	}
	return fd;
}

static int newest_first(const void *a, const void *b)
{
	json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	const char *tx = zc_json_str(x, "time"), *ty = zc_json_str(y, "time");
	const char *nx = zc_json_str(x, "name"), *ny = zc_json_str(y, "name");
	int c = strcmp(ty, tx);
	/* the same millisecond: the one with the larger "-n", written later
	 * (a longer name, then the larger one) */
	if (!c && strlen(nx) != strlen(ny))
		return strlen(ny) > strlen(nx) ? 1 : -1;
	return c ? c : strcmp(ny, nx);
}

int zc_backups_list(struct zc_mem *m, json_t **out, struct zc_err *e)
{
	*out = NULL;
	int absent = 0;
	int fd = backups_dir(m, &absent, e);
	if (fd < 0 && !absent)
		return e->code;
	json_t *items = json_array();
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (fd >= 0 && !d) {
		close(fd);
		json_decref(items);
		return zc_fail(e, ZCOR_EIO, "cannot read backups/: %s", strerror(errno));
	}
	struct dirent *de;
	size_t n = 0;
	while (d && (de = readdir(d)) && n < ZC_BACKUPS_MAX) {
		int64_t at = 0;
		const char *kind = zc_backup_kind(de->d_name, &at);
		struct stat st;
		/* only a regular file: a link planted under one of zcor's names is
		 * not listed (nor read: zc_backup_open) */
		if (!kind || fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		json_t *x = json_pack("{s:s, s:I, s:s}", "name", de->d_name, "size",
				      (json_int_t)st.st_size, "kind", kind);
		zc_json_set_time(x, "time", at);
		json_array_append_new(items, x);
		n++;
	}
	if (d)
		closedir(d);
	/* newest first (the stamps are UTC ISO texts of one width) */
	zc_json_array_sort(items, newest_first);
	*out = json_pack("{s:o, s:b}", "items", items, "truncated", n >= ZC_BACKUPS_MAX);
	return ZCOR_OK;
}

int zc_backup_open(struct zc_mem *m, const char *name, int *fd, long long *size, struct zc_err *e)
{
	*fd = -1;
	*size = 0;
	if (!name || !zc_backup_kind(name, NULL))
		return zc_fail(e, ZCOR_EINVAL,
			       "'%s' is not the name of a backup zcor wrote: give a name from the list "
			       "(GET backups), such as 'memory-state-20261129T120000000Z.json'",
			       ZC_Q(name ? name : "", 100));
	int absent = 0;
	int dfd = backups_dir(m, &absent, e);
	if (dfd < 0)
		return absent ? zc_fail(e, ZCOR_ENOTFOUND, "no backup named '%s': backups/ is empty",
					ZC_Q(name, 100))
			      : e->code;
	struct zc_err oe = {0};
	*fd = zc_open_regular_at(dfd, name, ZC_FS_NOFOLLOW, &oe);
	close(dfd);
	if (*fd < 0) {
		if (oe.code == ZCOR_ENOTFOUND)
			return zc_fail(e, ZCOR_ENOTFOUND, "no backup named '%s' in backups/",
				       ZC_Q(name, 100));
		return zc_fail(e, oe.code,
			       "backups/%s is not a regular file (a link or special file, which zcor "
			       "does not follow)",
			       ZC_Q(name, 100));
	}
	struct stat st;
	if (fstat(*fd, &st) != 0) {
		int err = errno;
		close(*fd);
		*fd = -1;
		return zc_fail(e, ZCOR_EIO, "cannot read backups/%s: %s", ZC_Q(name, 100), strerror(err));
	}
	*size = (long long)st.st_size;
	return ZCOR_OK;
}

/* ---- X-MIGRATE ------------------------------------------------------ */

static int store_is_empty(struct zc_mem *m, int *empty, struct zc_err *e)
{
	sqlite3_stmt *st = zc_stmt(&m->store,
				   "SELECT (SELECT count(*) FROM nodes) + (SELECT count(*) FROM people)",
				   e);
	if (!st)
		return e->code;
	*empty = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) == 0;
	sqlite3_reset(st);
	return ZCOR_OK;
}

static int migrate_op(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	struct zc_mem *m = op->m;
	long long done = 0;
	char *state = zc_path_join(m->dir, "memory-state.json");
	char *legacy = zc_path_join(m->dir, "memories.json");
	char *data = NULL, *snap = NULL;
	json_t *doc = NULL, *v3 = NULL;
	const char *src = zc_file_kind(state) != ZC_FILE_NONE	? state
			  : zc_file_kind(legacy) != ZC_FILE_NONE ? legacy
								 : NULL;
	int version = 0, empty = 0, rc;
	size_t len = 0;
	if ((rc = zc_meta_get_int(&m->store, "migrated", &done, e)) || done ||
	    (rc = store_is_empty(m, &empty, e)))
		goto out;
	if (src && empty) {
		const char *base = src == state ? "memory-state.json" : "memories.json";
		if ((rc = zc_read_file_nofollow(src, STATE_MAX_BYTES, &data, &len, e)) ||
		    (rc = zc_json_parse(data, len, base, &doc, e)) ||
		    (rc = zc_state_convert(doc, op->now, &v3, &version, e))) {
			zc_err_prefix(e, "cannot migrate %s (fix or move the file, then try again)", base);
			goto out;
		}
		if (version == 1 || version == 2) {
			/* the old version stays beside the original as a snapshot */
			char name[32];
			snprintf(name, sizeof(name), "memory-state.v%d.json", version);
			snap = zc_path_join(m->dir, name);
			if (zc_file_kind(snap) == ZC_FILE_NONE && (rc = zc_write_file_atomic(snap, data, len, e)))
				goto out;
		}
		if ((rc = zc_state_replace(op, v3, e)))
			goto out;
	}
	rc = zc_meta_set_int(&m->store, "migrated", 1, e);
out:
	zc_free(state);
	zc_free(legacy);
	zc_free(data);
	zc_free(snap);
	json_decref(doc);
	json_decref(v3);
	return rc;
}

/* The migration is not a call: no history record. */
static const struct zc_opdef migrate_def = {"migrate", NULL, migrate_op, ZC_OP_NO_HISTORY};

int zc_migrate_if_needed(struct zc_mem *m, struct zc_err *e)
{
	static const struct zcor_ctx host = {ZCOR_ACTOR_CLI, NULL};
	long long done = 0;
	json_t *none = NULL;
	int rc = zc_meta_get_int(&m->store, "migrated", &done, e);
	if (rc || done)
		return rc;
	rc = zc_mem_run(m, &host, &migrate_def, NULL, &none, e);
	json_decref(none);
	return rc;
}
