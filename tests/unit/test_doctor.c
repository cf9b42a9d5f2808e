/*
 * test_doctor.c — zcor doctor (SPEC §10) through the public API: each
 * finding code is made to appear by the damage it names (a hand edit of
 * memory.db, a bad file, a view written two ways), and --rebuild is shown
 * to repair what it claims to: the derived indexes.
 *
 * The exit statuses of `zcor doctor` are tested end to end in
 * tests/e2e/qqdir.test.mjs.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "harness.h"

/* zcor doctor as JSON (the caller decrefs). */
static json_t *doctor(zcor *z, int rebuild)
{
	char *out = NULL;
	int rc = zcor_doctor(z, rebuild, &out);
	CHECK_INT(rc, ZCOR_OK);
	json_t *r = json_loads(out ? out : "", 0, NULL);
	zcor_free(out);
	CHECK(r != NULL);
	return r;
}

/* The first finding with this code, or NULL. */
static json_t *finding(json_t *r, const char *code)
{
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(r, "findings"), i, f) {
		if (strcmp(json_string_value(json_object_get(f, "code")), code) == 0)
			return f;
	}
	return NULL;
}

static int count(json_t *r, const char *code)
{
	int n = 0;
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(r, "findings"), i, f) n +=
		strcmp(json_string_value(json_object_get(f, "code")), code) == 0;
	return n;
}

static const char *msg(json_t *f) { return json_string_value(json_object_get(f, "message")); }

static void ok_call(zcor *z, const char *conv, const char *tool, const char *args)
{
	int rc = -1;
	json_t *r = t_call_raw(z, conv, &rc, tool, args);
	if (rc != ZCOR_OK)
		fprintf(stderr, "%s %s: %s\n", tool, args, t_errmsg(r));
	CHECK_INT(rc, ZCOR_OK);
	json_decref(r);
}

static void write_file(zcor *z, const char *name, const char *text)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", zcor_dir(z), name);
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* A small store with something in every view. */
static zcor *store(void)
{
	zcor *z = t_open();
	ok_call(z, NULL, "zcor_memory_write", "{\"title\":\"全局记忆\",\"content\":\"大家都知道的事\"}");
	ok_call(z, NULL, "qq_memory",
		"{\"action\":\"upsert\",\"path\":\"COGNITION.md\",\"name\":\"蚌埠住了\",\"meaning\":"
		"\"忍不住笑了\",\"type\":\"谐音\"}");
	ok_call(z, NULL, "qq_memory",
		"{\"action\":\"upsert\",\"path\":\"PEOPLE.md\",\"name\":\"kaguya\",\"qq\":\"100000001\","
		"\"meaning\":\"群主\"}");
	ok_call(z, "group:1", "qq_memory",
		"{\"action\":\"upsert\",\"path\":\"conversations/group-1/MEMORY.md\",\"name\":"
		"\"周五固定开黑\",\"meaning\":\"晚上八点\",\"section\":\"惯例与偏好\"}");
	return z;
}

/* ---- nothing wrong ------------------------------------------------------------ */

static void DOCTOR_clean_store_needs_nobody(void)
{
	zcor *z = store();
	json_t *r = doctor(z, 0);
	CHECK_INT(json_array_size(json_object_get(r, "findings")), 0);
	CHECK(json_is_false(json_object_get(r, "needsAttention")));
	CHECK(json_object_get(r, "rebuilt") == NULL);
	json_decref(r);
	/* a line kept as written outside COGNITION.md is only information */
	ok_call(z, "group:1", "qq_memory",
		"{\"action\":\"append\",\"path\":\"conversations/group-1/MEMORY.md\",\"content\":"
		"\"群规第一条：不许刷屏\\n\"}");
	r = doctor(z, 0);
	CHECK(finding(r, "VIEW_UNPARSED") != NULL);
	CHECK(json_is_false(json_object_get(r, "needsAttention")));
	json_decref(r);
	zcor_close(z);
}

/* ---- the views ---------------------------------------------------------------- */

/* Seed 003: the same heading twice. A write merges the literal repeat (so
 * it never reaches the store); what can remain is one heading written two
 * ways, which the doctor names. */
static void DOCTOR_COGNITION_DUPLICATE_SECTION(void)
{
	zcor *z = store();
	ok_call(z, NULL, "qq_memory",
		"{\"action\":\"write\",\"path\":\"COGNITION.md\",\"content\":\"## 谐音\\n- 蚌埠住了｜忍不住笑了\\n"
		"## 谐音\\n- 绷｜同上\\n\"}");
	json_t *r = doctor(z, 0);
	CHECK(finding(r, "COGNITION_DUPLICATE_SECTION") == NULL);
	json_decref(r);
	ok_call(z, NULL, "qq_memory",
		"{\"action\":\"write\",\"path\":\"COGNITION.md\",\"content\":\"## 谐音\\n- 蚌埠住了｜忍不住笑了\\n"
		"## 谐音\\n- 绷｜同上\\n## 谐 音\\n- 栓Q｜谢谢\\n\"}");
	r = doctor(z, 0);
	json_t *f = finding(r, "COGNITION_DUPLICATE_SECTION");
	CHECK(f != NULL);
	CHECK_HAS(msg(f), "'谐 音'");
	CHECK_INT(count(r, "COGNITION_DUPLICATE_SECTION"), 1);
	CHECK(json_is_true(json_object_get(r, "needsAttention")));
	json_decref(r);
	zcor_close(z);
}

/* Every view write keys entries by normalised name, so two entries with one
 * name come only from older data or a hand edit of memory.db. */
static void DOCTOR_COGNITION_DUPLICATE_ENTRY(void)
{
	zcor *z = store();
	t_sql_exec(z, "INSERT INTO nodes(id, title, content, keywords, scope, kind, section, tier, "
		      "attrs, created_at, updated_at, title_norm) SELECT 'mdup', title, "
		      "'另一个意思', keywords, scope, kind, section, tier, attrs, created_at, updated_at, "
		      "title_norm FROM nodes WHERE kind = 'cognition'");
	json_t *r = doctor(z, 0);
	json_t *f = finding(r, "COGNITION_DUPLICATE_ENTRY");
	CHECK(f != NULL);
	CHECK_HAS(msg(f), "蚌埠住了");
	CHECK(json_is_true(json_object_get(r, "needsAttention")));
	json_decref(r);
	zcor_close(z);
}

static void DOCTOR_COGNITION_UNPARSED_names_the_line(void)
{
	zcor *z = store();
	ok_call(z, NULL, "qq_memory",
		"{\"action\":\"append\",\"path\":\"COGNITION.md\",\"content\":\"- 这一行没写含义\\n\"}");
	json_t *r = doctor(z, 0);
	json_t *f = finding(r, "COGNITION_UNPARSED");
	CHECK(f != NULL);
	CHECK_HAS(msg(f), "- 这一行没写含义");
	CHECK(json_integer_value(json_object_get(f, "line")) > 0);
	json_decref(r);
	zcor_close(z);
}

/* Q-ROLL: a MEMORY.md over its threshold with nothing movable (all pinned). */
static void DOCTOR_MEMORY_OVER_THRESHOLD(void)
{
	zcor *z = store();
	CHECK_INT(zcor_config_set(z, "{\"memoryFileMaxBytes\":1024,\"memoryArchiveRatio\":0.1}"),
		  ZCOR_OK);
	for (int i = 0; i < 4; i++) {
		char args[512];
		snprintf(args, sizeof(args),
			 "{\"action\":\"upsert\",\"path\":\"conversations/group-1/MEMORY.md\",\"name\":"
			 "\"置顶的约定%d\",\"meaning\":\"这一条置顶了，不能滚进冷层\",\"pinned\":true}",
			 i);
		ok_call(z, "group:1", "qq_memory", args);
	}
	json_t *r = doctor(z, 0);
	json_t *f = finding(r, "MEMORY_OVER_THRESHOLD");
	CHECK(f != NULL);
	CHECK_STR(json_string_value(json_object_get(f, "path")), "conversations/group-1/MEMORY.md");
	json_decref(r);
	zcor_close(z);
}

/* ---- the database -------------------------------------------------------------- */

/* An index whose rows disagree with its table: PRAGMA integrity_check. */
static void DOCTOR_DB_INTEGRITY(void)
{
	zcor *z = store();
	t_sql_exec(z, "PRAGMA writable_schema = ON; UPDATE sqlite_schema SET sql = 'CREATE INDEX "
		      "nodes_kind ON nodes(title)' WHERE name = 'nodes_kind'; PRAGMA writable_schema = OFF");
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", zcor_dir(z));
	zcor_close(z);
	z = t_open_dir(dir);
	json_t *r = doctor(z, 0);
	json_t *f = finding(r, "DB_INTEGRITY");
	CHECK(f != NULL);
	CHECK_HAS(msg(f), "nodes_kind");
	CHECK_STR(json_string_value(json_object_get(f, "severity")), "error");
	CHECK(json_is_true(json_object_get(r, "needsAttention")));
	json_decref(r);
	zcor_close(z);
}

/* Links to nothing: a parent, a supersede target, a person's memory. */
static void DOCTOR_DANGLING_LINK(void)
{
	zcor *z = store();
	t_sql_exec(z, "PRAGMA foreign_keys = OFF; UPDATE nodes SET parent_id = 'm-gone-1' WHERE title = "
		      "'全局记忆'; UPDATE nodes SET superseded_by = 'm-gone-2' WHERE kind = 'cognition'; "
		      "UPDATE people SET memory_node_id = 'm-gone-3'");
	json_t *r = doctor(z, 0);
	CHECK_INT(count(r, "DANGLING_LINK"), 3);
	const char *want[] = {"m-gone-1", "m-gone-2", "m-gone-3"};
	for (int i = 0; i < 3; i++) {
		int seen = 0;
		size_t k;
		json_t *f;
		json_array_foreach(json_object_get(r, "findings"), k, f) seen |=
			strstr(msg(f), want[i]) != NULL;
		CHECK(seen);
	}
	CHECK(json_is_true(json_object_get(r, "needsAttention")));
	json_decref(r);
	zcor_close(z);
}

/* Q-SCOPE: a link between scopes (left by older data) is named for the
 * operator, who alone sees both ends. */
static void DOCTOR_SCOPE_LINK(void)
{
	zcor *z = store();
	ok_call(z, "private:9", "zcor_memory_write", "{\"title\":\"私聊的事\",\"content\":\"x\"}");
	t_sql_exec(z, "UPDATE nodes SET parent_id = (SELECT id FROM nodes WHERE title = '全局记忆') "
		      "WHERE title = '私聊的事'");
	json_t *r = doctor(z, 0);
	json_t *f = finding(r, "SCOPE_LINK");
	CHECK(f != NULL);
	CHECK_HAS(msg(f), "(private:9)");
	CHECK_HAS(msg(f), "(global)");
	CHECK(json_is_true(json_object_get(r, "needsAttention")));
	json_decref(r);
	zcor_close(z);
}

/* ---- the files ------------------------------------------------------------------ */

static void DOCTOR_SYNONYMS_INVALID_and_CONFIG_INVALID(void)
{
	zcor *z = store();
	write_file(z, "synonyms.json", "{\"groups\": [[\"甲\", \"乙\"]");
	write_file(z, "config.json", "{\"recallChars\": \"lots\"}");
	json_t *r = doctor(z, 0);
	json_t *f = finding(r, "SYNONYMS_INVALID");
	CHECK(f != NULL);
	CHECK_STR(json_string_value(json_object_get(f, "path")), "synonyms.json");
	f = finding(r, "CONFIG_INVALID");
	CHECK(f != NULL);
	CHECK_HAS(msg(f), "recallChars");
	json_decref(r);
	/* fixed files: nothing left */
	write_file(z, "synonyms.json", "{\"groups\": [[\"甲\", \"乙\"]]}");
	write_file(z, "config.json", "{}");
	r = doctor(z, 0);
	CHECK(finding(r, "SYNONYMS_INVALID") == NULL);
	CHECK(finding(r, "CONFIG_INVALID") == NULL);
	json_decref(r);
	zcor_close(z);
}

/* ---- --rebuild ----------------------------------------------------------------- */

static long long query_total(zcor *z, const char *args)
{
	int rc;
	json_t *r = t_call_raw(z, NULL, &rc, "zcor_memory_query", args);
	long long n = rc == ZCOR_OK ? t_int(r, "total") : -1;
	json_decref(r);
	return n;
}

/* Why recall took the slang entry for this message ("" if it did not). */
static const char *recall_why(zcor *z, const char *text)
{
	static char why[256];
	char req[512], *out = NULL;
	snprintf(req, sizeof(req),
		 "{\"conversation\":\"group:1\",\"messages\":[\"%s\"],\"explain\":true}", text);
	why[0] = '\0';
	if (zcor_recall(z, req, &out) == ZCOR_OK) {
		json_t *r = json_loads(out, 0, NULL);
		size_t i;
		json_t *x;
		json_array_foreach(json_object_get(r, "explain"), i, x) {
			if (strcmp(json_string_value(json_object_get(x, "title")), "蚌埠住了") == 0 &&
			    json_is_true(json_object_get(x, "included")))
				snprintf(why, sizeof(why), "%s", json_string_value(json_object_get(x, "why")));
		}
		json_decref(r);
	}
	zcor_free(out);
	return why;
}

/* The derived data broken by hand (the full-text index emptied, the term
 * dictionary deleted): the doctor names the index, --rebuild repairs both,
 * and search and recall find the memories again. */
static void DOCTOR_rebuild_repairs_the_derived_indexes(void)
{
	zcor *z = store();
	CHECK_INT(query_total(z, "{\"keywords\":[\"知道的事\"]}"), 1);
	CHECK_HAS(recall_why(z, "今天有人说蚌埠住了"), "present in the message");
	t_sql_exec(z, "INSERT INTO nodes_fts(nodes_fts) VALUES('delete-all'); DELETE FROM terms");
	CHECK_INT(query_total(z, "{\"keywords\":[\"知道的事\"]}"), 0);
	CHECK(!strstr(recall_why(z, "今天有人说蚌埠住了"), "present in the message"));
	json_t *r = doctor(z, 0);
	CHECK(finding(r, "INDEX_STALE") != NULL);
	CHECK(json_is_true(json_object_get(r, "needsAttention")));
	json_decref(r);
	r = doctor(z, 1);
	CHECK(json_object_get(r, "rebuilt") != NULL);
	CHECK(finding(r, "INDEX_STALE") == NULL);
	CHECK(json_is_false(json_object_get(r, "needsAttention")));
	json_decref(r);
	CHECK_INT(query_total(z, "{\"keywords\":[\"知道的事\"]}"), 1);
	CHECK_HAS(recall_why(z, "今天有人说蚌埠住了"), "present in the message");
	zcor_close(z);
}

/* The message log's index too: transcript search comes back. */
static void DOCTOR_rebuild_repairs_the_message_index(void)
{
	zcor *z = store();
	char *out = NULL;
	CHECK_INT(zcor_log_messages(z, NULL, "group:1",
				    "{\"messages\":[{\"id\":\"1\",\"senderId\":\"5\",\"text\":\"周六打本吗\"}]}",
				    &out),
		  ZCOR_OK);
	zcor_free(out);
	const char *search = "{\"action\":\"search\",\"conversation\":\"group:1\",\"keywords\":[\"打本\"]}";
	int rc;
	json_t *r = t_call_raw(z, NULL, &rc, "qq_transcript", search);
	CHECK_INT(t_int(r, "total"), 1);
	json_decref(r);
	t_sql_exec(z, "INSERT INTO messages_fts(messages_fts) VALUES('delete-all')");
	r = t_call_raw(z, NULL, &rc, "qq_transcript", search);
	CHECK_INT(t_int(r, "total"), 0);
	json_decref(r);
	r = doctor(z, 0);
	json_t *f = finding(r, "INDEX_STALE");
	CHECK(f != NULL);
	CHECK_HAS(msg(f), "message log");
	json_decref(r);
	r = doctor(z, 1);
	CHECK(finding(r, "INDEX_STALE") == NULL);
	json_decref(r);
	r = t_call_raw(z, NULL, &rc, "qq_transcript", search);
	CHECK_INT(t_int(r, "total"), 1);
	json_decref(r);
	zcor_close(z);
}

/* memory.db deleted in a directory with backups: zcor opens a new, empty
 * store (there is nothing of it to refuse), and the doctor says so
 * (audit of issue 12, a variant of defect 7). */
static void DOCTOR_MEMORY_DB_NEW_BESIDE_BACKUPS(void)
{
	zcor *z = t_open();
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", zcor_dir(z));
	ok_call(z, NULL, "zcor_memory_write", "{\"title\":\"留着\",\"content\":\"我\"}");
	json_t *r = doctor(z, 0);
	CHECK(finding(r, "MEMORY_DB_NEW_BESIDE_BACKUPS") == NULL); /* no backup yet */
	json_decref(r);
	ok_call(z, NULL, "zcor_memory_backup", "{}");
	r = doctor(z, 0);
	CHECK(finding(r, "MEMORY_DB_NEW_BESIDE_BACKUPS") == NULL); /* the store has data */
	json_decref(r);
	zcor_close(z);
	static const char *const files[] = {"memory.db", "memory.db-wal", "memory.db-shm"};
	for (int i = 0; i < 3; i++) {
		char p[4200];
		snprintf(p, sizeof(p), "%s/%s", dir, files[i]);
		unlink(p);
	}
	z = t_open_dir(dir);
	r = doctor(z, 0);
	json_t *f = finding(r, "MEMORY_DB_NEW_BESIDE_BACKUPS");
	CHECK(f != NULL);
	CHECK_HAS(f ? msg(f) : NULL, "1 state copy");
	CHECK(json_is_true(json_object_get(r, "needsAttention")));
	json_decref(r);
	zcor_close(z);
}

const struct t_case t_cases[] = {
	{"DOCTOR_MEMORY_DB_NEW_BESIDE_BACKUPS", DOCTOR_MEMORY_DB_NEW_BESIDE_BACKUPS},
	{"DOCTOR_clean_store_needs_nobody", DOCTOR_clean_store_needs_nobody},
	{"DOCTOR_COGNITION_DUPLICATE_SECTION", DOCTOR_COGNITION_DUPLICATE_SECTION},
	{"DOCTOR_COGNITION_DUPLICATE_ENTRY", DOCTOR_COGNITION_DUPLICATE_ENTRY},
	{"DOCTOR_COGNITION_UNPARSED_names_the_line", DOCTOR_COGNITION_UNPARSED_names_the_line},
	{"DOCTOR_MEMORY_OVER_THRESHOLD", DOCTOR_MEMORY_OVER_THRESHOLD},
	{"DOCTOR_DB_INTEGRITY", DOCTOR_DB_INTEGRITY},
	{"DOCTOR_DANGLING_LINK", DOCTOR_DANGLING_LINK},
	{"DOCTOR_SCOPE_LINK", DOCTOR_SCOPE_LINK},
	{"DOCTOR_SYNONYMS_INVALID_and_CONFIG_INVALID", DOCTOR_SYNONYMS_INVALID_and_CONFIG_INVALID},
	{"DOCTOR_rebuild_repairs_the_derived_indexes", DOCTOR_rebuild_repairs_the_derived_indexes},
	{"DOCTOR_rebuild_repairs_the_message_index", DOCTOR_rebuild_repairs_the_message_index},
	{0},
};
