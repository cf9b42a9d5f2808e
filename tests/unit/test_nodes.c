/*
 * test_nodes.c — the node rules of SPEC §3.1 (seed 000) and the bad-input
 * list, through the public API only: zcor_tool_call (via the harness) in,
 * JSON out, and a second read-only look into memory.db to prove that a
 * refused call changed nothing and that every call left one history row.
 *
 * Each case is named after the rule it pins and fails if that rule breaks.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>

#include "harness.h"

/* ---- helpers -------------------------------------------------------- */

/* 2026-01-01T00:00:00.000Z */
#define T0 1767225600000LL

static int64_t clock_of(void *ud) { return *(int64_t *)ud; }

static long long nodes_count(zcor *z) { return t_sql_int(zcor_dir(z), "SELECT count(*) FROM nodes"); }
/* Read records are written a few milliseconds later (zcor_flush): now,
 * before another connection counts them. */
static long long history_count(zcor *z)
{
	zcor_flush(z);
	return t_sql_int(zcor_dir(z), "SELECT count(*) FROM history");
}

/* Calls tool with a JSON value as arguments (steals args). */
static json_t *callj(zcor *z, const char *conv, int *rc, const char *tool, json_t *args)
{
	char *s = json_dumps(args, JSON_COMPACT);
	json_decref(args);
	json_t *r = t_call_raw(z, conv, rc, tool, s);
	free(s);
	return r;
}

/* Creates a node and copies its id into out (empty on failure). */
static void mk(zcor *z, const char *conv, const char *title, const char *content, const char *parent,
	       char out[32])
{
	json_t *a = json_pack("{s:s, s:s}", "title", title, "content", content);
	if (parent)
		json_object_set_new(a, "parentId", json_string(parent));
	int rc = -1;
	json_t *r = callj(z, conv, &rc, "zcor_memory_write", a);
	CHECK_INT(rc, ZCOR_OK);
	const char *id = t_str(r, "node.id");
	snprintf(out, 32, "%s", id ? id : "");
	json_decref(r);
}

static json_t *rd(zcor *z, const char *conv, const char *id, int *rc)
{
	return t_call_rc(z, conv, rc, "zcor_memory_read", "{\"id\":\"%s\"}", id);
}

/* The values of `key` of each object of the array at `path`, joined by ','. */
static const char *join(json_t *v, const char *path, const char *key)
{
	static char buf[8192];
	size_t i, n = 0;
	json_t *x;
	buf[0] = '\0';
	json_t *arr = t_get(v, path);
	if (!json_is_array(arr))
		return "(not an array)";
	json_array_foreach(arr, i, x) {
		const char *s = json_string_value(json_object_get(x, key));
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", i ? "," : "", s ? s : "(null)");
		if (n >= sizeof(buf))
			break;
	}
	return buf;
}

/* Does the array at `path` hold an object whose "id" is id? */
static int has_id(json_t *v, const char *path, const char *id)
{
	size_t i;
	json_t *x;
	json_array_foreach(t_get(v, path), i, x) {
		const char *s = json_string_value(json_object_get(x, "id"));
		if (s && strcmp(s, id) == 0)
			return 1;
	}
	return 0;
}

static char *repeat(const char *unit, size_t n, const char *tail)
{
	size_t u = strlen(unit), t = tail ? strlen(tail) : 0;
	char *s = malloc(u * n + t + 1);
	for (size_t i = 0; i < n; i++)
		memcpy(s + i * u, unit, u);
	if (t)
		memcpy(s + u * n, tail, t);
	s[u * n + t] = '\0';
	return s;
}

static json_t *mark(zcor *z, const char *id, int on, int *rc)
{
	return t_call_rc(z, NULL, rc, "zcor_memory_important", "{\"id\":\"%s\",\"important\":%s}", id,
			 on ? "true" : "false");
}

/* ---- zcor_memory_write ---------------------------------------------- */

static void Z_WRITE_create_without_id_is_root(void)
{
	zcor *z = t_open();
	char p[32], c[32];
	int rc;
	json_t *r = t_call_rc(z, NULL, &rc, "zcor_memory_write",
			      "{\"title\":\"北京大学\",\"content\":\"在海淀\",\"keywords\":[\"北大\"]}");
	CHECK_INT(rc, ZCOR_OK);
	CHECK(json_is_true(t_get(r, "created")));
	CHECK(t_str(r, "node.id") && *t_str(r, "node.id"));
	CHECK(json_is_null(t_get(r, "node.parentId")));
	CHECK_STR(t_str(r, "node.title"), "北京大学");
	CHECK_STR(t_str(r, "node.content"), "在海淀");
	CHECK_STR(t_str(r, "node.keywords.0"), "北大");
	snprintf(p, sizeof(p), "%s", t_str(r, "node.id") ? t_str(r, "node.id") : "");
	json_decref(r);
	CHECK_INT(nodes_count(z), 1);

	mk(z, NULL, "child", "x", p, c);
	r = t_call(z, NULL, "zcor_memory_children", "{}");
	CHECK_STR(join(r, "items", "id"), p); /* the root, not the child */
	json_decref(r);
	zcor_close(z);
}

static void Z_WRITE_update_existing_id(void)
{
	zcor *z = t_open();
	int64_t now = T0 + 1000;
	zcor_set_clock(z, clock_of, &now);
	char a[32];
	mk(z, NULL, "old title", "old content", NULL, a);
	now = T0 + 5000;
	int rc;
	json_t *r = t_call_rc(z, NULL, &rc, "zcor_memory_write",
			      "{\"id\":\"%s\",\"title\":\"new title\",\"content\":\"new content\"}", a);
	CHECK_INT(rc, ZCOR_OK);
	CHECK(json_is_false(t_get(r, "created")));
	CHECK_STR(t_str(r, "node.id"), a);
	CHECK_STR(t_str(r, "node.createdAt"), "2026-01-01T00:00:01.000Z");
	CHECK_STR(t_str(r, "node.updatedAt"), "2026-01-01T00:00:05.000Z");
	json_decref(r);
	CHECK_INT(nodes_count(z), 1);
	r = rd(z, NULL, a, &rc);
	CHECK_INT(rc, ZCOR_OK);
	CHECK_STR(t_str(r, "node.title"), "new title");
	CHECK_STR(t_str(r, "node.content"), "new content");
	json_decref(r);
	zcor_close(z);
}

static void Z_WRITE_update_unknown_id_is_not_found(void)
{
	zcor *z = t_open();
	int rc;
	json_t *r = t_call_rc(z, NULL, &rc, "zcor_memory_write",
			      "{\"id\":\"m-nope\",\"title\":\"t\",\"content\":\"c\"}");
	CHECK_INT(rc, ZCOR_ENOTFOUND);
	CHECK_STR(t_errcode(r), "not_found");
	CHECK_HAS(t_errmsg(r), "m-nope");
	json_decref(r);
	CHECK_INT(nodes_count(z), 0);
	zcor_close(z);
}

static void Z_WRITE_update_without_parent_keeps_parent(void)
{
	zcor *z = t_open();
	char p[32], c[32];
	mk(z, NULL, "parent", "p", NULL, p);
	mk(z, NULL, "child", "c", p, c);
	int rc;
	json_t *r = t_call_rc(z, NULL, &rc, "zcor_memory_write",
			      "{\"id\":\"%s\",\"title\":\"child 2\",\"content\":\"c2\"}", c);
	CHECK_INT(rc, ZCOR_OK);
	CHECK_STR(t_str(r, "node.parentId"), p);
	json_decref(r);
	r = rd(z, NULL, c, &rc);
	CHECK_STR(t_str(r, "node.parentId"), p);
	json_decref(r);
	r = t_call(z, NULL, "zcor_memory_children", "{\"parentId\":\"%s\"}", p);
	CHECK_STR(join(r, "items", "id"), c);
	json_decref(r);
	zcor_close(z);
}

static void Z_WRITE_parent_null_moves_to_root(void)
{
	zcor *z = t_open();
	char p[32], c[32];
	mk(z, NULL, "parent", "p", NULL, p);
	mk(z, NULL, "child", "c", p, c);
	int rc;
	json_t *r = t_call_rc(z, NULL, &rc, "zcor_memory_write",
			      "{\"id\":\"%s\",\"title\":\"child\",\"content\":\"c\",\"parentId\":null}", c);
	CHECK_INT(rc, ZCOR_OK);
	CHECK(json_is_null(t_get(r, "node.parentId")));
	json_decref(r);
	r = t_call(z, NULL, "zcor_memory_children", "{\"parentId\":\"%s\"}", p);
	CHECK_INT(json_array_size(t_get(r, "items")), 0);
	json_decref(r);
	r = t_call(z, NULL, "zcor_memory_children", "{}");
	CHECK(has_id(r, "items", c));
	json_decref(r);
	zcor_close(z);
}

static void Z_WRITE_keywords_kept_when_omitted_on_update(void)
{
	zcor *z = t_open();
	int rc;
	json_t *r = t_call_rc(z, NULL, &rc, "zcor_memory_write",
			      "{\"title\":\"t\",\"content\":\"c\",\"keywords\":[\"k1\",\"检索词\"]}");
	char a[32];
	snprintf(a, sizeof(a), "%s", t_str(r, "node.id") ? t_str(r, "node.id") : "");
	json_decref(r);
	r = t_call_rc(z, NULL, &rc, "zcor_memory_write", "{\"id\":\"%s\",\"title\":\"t2\",\"content\":\"c2\"}", a);
	CHECK_INT(rc, ZCOR_OK);
	CHECK_INT(json_array_size(t_get(r, "node.keywords")), 2);
	CHECK_STR(t_str(r, "node.keywords.0"), "k1");
	CHECK_STR(t_str(r, "node.keywords.1"), "检索词");
	json_decref(r);
	r = rd(z, NULL, a, &rc);
	CHECK_INT(json_array_size(t_get(r, "node.keywords")), 2);
	json_decref(r);
	/* given keywords replace them */
	r = t_call_rc(z, NULL, &rc, "zcor_memory_write",
		      "{\"id\":\"%s\",\"title\":\"t2\",\"content\":\"c2\",\"keywords\":[\"k3\"]}", a);
	CHECK_INT(json_array_size(t_get(r, "node.keywords")), 1);
	CHECK_STR(t_str(r, "node.keywords.0"), "k3");
	json_decref(r);
	zcor_close(z);
}

/* Writes a node whose sourceMessage is src; checks it is kept whole. */
static void source_ok(zcor *z, const char *src, size_t chars)
{
	int rc;
	json_t *r = callj(z, NULL, &rc, "zcor_memory_write",
			  json_pack("{s:s, s:s, s:s}", "title", "src", "content", "c", "sourceMessage", src));
	CHECK_INT(rc, ZCOR_OK);
	char id[32];
	snprintf(id, sizeof(id), "%s", t_str(r, "node.id") ? t_str(r, "node.id") : "");
	json_decref(r);
	r = rd(z, NULL, id, &rc);
	CHECK(t_str(r, "node.sourceMessage") && strcmp(t_str(r, "node.sourceMessage"), src) == 0);
	json_decref(r);
	char sql[128];
	snprintf(sql, sizeof(sql), "SELECT length(source_message) FROM nodes WHERE id = '%s'", id);
	CHECK_INT(t_sql_int(zcor_dir(z), sql), chars);
}

static void Z_WRITE_source_message_20000_characters_accepted(void)
{
	zcor *z = t_open();
	char *ascii = repeat("a", 20000, NULL);
	char *han = repeat("中", 20000, NULL);         /* 60,000 bytes */
	char *mixed = repeat("语", 19999, "😀");        /* 4-byte code point last */
	source_ok(z, ascii, 20000);
	source_ok(z, han, 20000);
	source_ok(z, mixed, 20000);
	CHECK_INT(nodes_count(z), 3);
	free(ascii);
	free(han);
	free(mixed);
	zcor_close(z);
}

static void Z_WRITE_source_message_20001_characters_rejected(void)
{
	zcor *z = t_open();
	char a[32];
	mk(z, NULL, "t", "c", NULL, a);
	const char *units[] = {"a", "中", NULL};
	for (int i = 0; units[i]; i++) {
		char *src = repeat(units[i], 20001, NULL);
		int rc;
		long long h0 = history_count(z);
		json_t *r = callj(z, NULL, &rc, "zcor_memory_write",
				  json_pack("{s:s, s:s, s:s}", "title", "t", "content", "c", "sourceMessage", src));
		CHECK_INT(rc, ZCOR_EINVAL);
		CHECK_STR(t_errcode(r), "invalid_argument");
		CHECK_HAS(t_errmsg(r), "'sourceMessage'");
		json_decref(r);
		CHECK_INT(nodes_count(z), 1);
		/* an update is refused too and changes nothing */
		r = callj(z, NULL, &rc, "zcor_memory_write",
			  json_pack("{s:s, s:s, s:s, s:s}", "id", a, "title", "changed", "content", "c",
				    "sourceMessage", src));
		CHECK_INT(rc, ZCOR_EINVAL);
		CHECK_HAS(t_errmsg(r), "'sourceMessage'");
		json_decref(r);
		r = rd(z, NULL, a, &rc);
		CHECK_STR(t_str(r, "node.title"), "t");
		CHECK(json_is_null(t_get(r, "node.sourceMessage")) || !t_get(r, "node.sourceMessage"));
		json_decref(r);
		CHECK_INT(history_count(z) - h0, 3);
		free(src);
	}
	zcor_close(z);
}

static void Z_WRITE_source_message_null_clears_it(void)
{
	zcor *z = t_open();
	int rc;
	json_t *r = t_call_rc(z, NULL, &rc, "zcor_memory_write",
			      "{\"title\":\"t\",\"content\":\"c\",\"sourceMessage\":\"他说：明天见\"}");
	CHECK_STR(t_str(r, "node.sourceMessage"), "他说：明天见");
	char a[32];
	snprintf(a, sizeof(a), "%s", t_str(r, "node.id") ? t_str(r, "node.id") : "");
	json_decref(r);
	r = t_call_rc(z, NULL, &rc, "zcor_memory_write",
		      "{\"id\":\"%s\",\"title\":\"t\",\"content\":\"c\",\"sourceMessage\":null}", a);
	CHECK_INT(rc, ZCOR_OK);
	CHECK(t_str(r, "node.sourceMessage") == NULL);
	json_decref(r);
	r = rd(z, NULL, a, &rc);
	CHECK(t_str(r, "node.sourceMessage") == NULL);
	json_decref(r);
	char sql[128];
	snprintf(sql, sizeof(sql), "SELECT source_message IS NULL FROM nodes WHERE id = '%s'", a);
	CHECK_INT(t_sql_int(zcor_dir(z), sql), 1);
	zcor_close(z);
}

static void Z_WRITE_missing_parent_rejected_nothing_changed(void)
{
	zcor *z = t_open();
	int rc;
	json_t *r = t_call_rc(z, NULL, &rc, "zcor_memory_write",
			      "{\"title\":\"t\",\"content\":\"c\",\"parentId\":\"m-ghost\"}");
	CHECK(rc != ZCOR_OK);
	CHECK(t_errcode(r) != NULL);
	CHECK_HAS(t_errmsg(r), "m-ghost");
	json_decref(r);
	CHECK_INT(nodes_count(z), 0);

	char p[32], c[32];
	mk(z, NULL, "parent", "p", NULL, p);
	mk(z, NULL, "child", "c", p, c);
	r = t_call_rc(z, NULL, &rc, "zcor_memory_write",
		      "{\"id\":\"%s\",\"title\":\"changed\",\"content\":\"changed\",\"parentId\":\"m-ghost\"}", c);
	CHECK(rc != ZCOR_OK);
	json_decref(r);
	r = rd(z, NULL, c, &rc);
	CHECK_STR(t_str(r, "node.title"), "child");
	CHECK_STR(t_str(r, "node.content"), "c");
	CHECK_STR(t_str(r, "node.parentId"), p);
	json_decref(r);
	CHECK_INT(nodes_count(z), 2);
	zcor_close(z);
}

static void Z_WRITE_parent_cycle_rejected_nothing_changed(void)
{
	zcor *z = t_open();
	char a[32], b[32], c[32];
	mk(z, NULL, "a", "a", NULL, a);
	mk(z, NULL, "b", "b", a, b);
	mk(z, NULL, "c", "c", b, c);
	int rc;
	/* a -> b -> c, then a under c */
	json_t *r = t_call_rc(z, NULL, &rc, "zcor_memory_write",
			      "{\"id\":\"%s\",\"title\":\"a2\",\"content\":\"a2\",\"parentId\":\"%s\"}", a, c);
	CHECK(rc != ZCOR_OK);
	CHECK(t_errcode(r) != NULL);
	json_decref(r);
	/* a node as its own parent */
	r = t_call_rc(z, NULL, &rc, "zcor_memory_write",
		      "{\"id\":\"%s\",\"title\":\"a3\",\"content\":\"a3\",\"parentId\":\"%s\"}", a, a);
	CHECK(rc != ZCOR_OK);
	CHECK(t_errcode(r) != NULL);
	json_decref(r);
	r = t_call_rc(z, NULL, &rc, "zcor_memory_write",
		      "{\"id\":\"%s\",\"title\":\"b2\",\"content\":\"b2\",\"parentId\":\"%s\"}", b, c);
	CHECK(rc != ZCOR_OK);
	json_decref(r);

	r = rd(z, NULL, a, &rc);
	CHECK(json_is_null(t_get(r, "node.parentId")));
	CHECK_STR(t_str(r, "node.title"), "a");
	json_decref(r);
	r = rd(z, NULL, b, &rc);
	CHECK_STR(t_str(r, "node.parentId"), a);
	CHECK_STR(t_str(r, "node.title"), "b");
	json_decref(r);
	r = t_call(z, NULL, "zcor_memory_trace", "{\"id\":\"%s\"}", c);
	CHECK_STR(join(r, "path", "title"), "a,b,c");
	json_decref(r);
	/* a legal move still works: c to the root */
	r = t_call_rc(z, NULL, &rc, "zcor_memory_write",
		      "{\"id\":\"%s\",\"title\":\"c\",\"content\":\"c\",\"parentId\":\"%s\"}", c, a);
	CHECK_INT(rc, ZCOR_OK);
	json_decref(r);
	zcor_close(z);
}

/* ---- ids -------------------------------------------------------------- */

static void Z_ID_generated_ids_sort_in_creation_order(void)
{
	zcor *z = t_open();
	enum { N = 1400 }; /* past 36 and 36^2 generated ids */
	static char ids[N][32];
	for (int i = 0; i < N; i++) {
		char title[32];
		snprintf(title, sizeof(title), "n%d", i);
		mk(z, NULL, title, "x", NULL, ids[i]);
	}
	int sorted = 1;
	for (int i = 1; i < N; i++)
		if (strcmp(ids[i - 1], ids[i]) >= 0) {
			fprintf(stderr, "id %d '%s' does not sort after id %d '%s'\n", i, ids[i], i - 1,
				ids[i - 1]);
			sorted = 0;
			break;
		}
	CHECK(sorted);
	zcor_close(z);
}

/* ---- read and delete ---------------------------------------------------- */

static void Z_READ_by_id(void)
{
	zcor *z = t_open();
	char p[32], a[32];
	mk(z, NULL, "parent", "p", NULL, p);
	mk(z, NULL, "标题", "正文", p, a);
	int rc;
	json_t *r = rd(z, NULL, a, &rc);
	CHECK_INT(rc, ZCOR_OK);
	CHECK_STR(t_str(r, "node.id"), a);
	CHECK_STR(t_str(r, "node.title"), "标题");
	CHECK_STR(t_str(r, "node.content"), "正文");
	CHECK_STR(t_str(r, "node.parentId"), p);
	json_decref(r);
	r = rd(z, NULL, "m-none", &rc);
	CHECK_INT(rc, ZCOR_ENOTFOUND);
	CHECK_STR(t_errcode(r), "not_found");
	json_decref(r);
	zcor_close(z);
}

static void Z_DELETE_refused_while_node_has_children(void)
{
	zcor *z = t_open();
	char p[32], c[32];
	mk(z, NULL, "parent", "p", NULL, p);
	mk(z, NULL, "child", "c", p, c);
	int rc;
	json_t *r = t_call_rc(z, NULL, &rc, "zcor_memory_delete", "{\"id\":\"%s\"}", p);
	CHECK_INT(rc, ZCOR_ECONFLICT);
	CHECK_STR(t_errcode(r), "conflict");
	/* the detail names the rule and the child, for programs (the page) */
	CHECK_STR(t_str(r, "error.details.reason"), "has_children");
	CHECK_INT(t_int(r, "error.details.count"), 1);
	CHECK_STR(t_str(r, "error.details.ids.0"), c);
	json_decref(r);
	CHECK_INT(nodes_count(z), 2);
	r = rd(z, NULL, p, &rc);
	CHECK_INT(rc, ZCOR_OK);
	json_decref(r);
	/* once the child is gone the parent can go */
	r = t_call_rc(z, NULL, &rc, "zcor_memory_delete", "{\"id\":\"%s\"}", c);
	CHECK_INT(rc, ZCOR_OK);
	json_decref(r);
	r = t_call_rc(z, NULL, &rc, "zcor_memory_delete", "{\"id\":\"%s\"}", p);
	CHECK_INT(rc, ZCOR_OK);
	json_decref(r);
	CHECK_INT(nodes_count(z), 0);
	zcor_close(z);
}

static void Z_DELETE_refused_while_person_links_node(void)
{
	zcor *z = t_open();
	char a[32];
	mk(z, NULL, "小明", "同学", NULL, a);
	int rc;
	json_t *r = t_call_rc(z, NULL, &rc, "zcor_relationship_write",
			      "{\"personId\":\"10001\",\"name\":\"小明\",\"relationship\":\"同学\","
			      "\"affinity\":10,\"reason\":\"一起上课\",\"memoryNodeId\":\"%s\"}",
			      a);
	CHECK_INT(rc, ZCOR_OK);
	json_decref(r);
	r = t_call_rc(z, NULL, &rc, "zcor_memory_delete", "{\"id\":\"%s\"}", a);
	CHECK_INT(rc, ZCOR_ECONFLICT);
	CHECK_HAS(t_errmsg(r), "10001");
	CHECK_STR(t_str(r, "error.details.reason"), "linked_from_person");
	CHECK_STR(t_str(r, "error.details.personIds.0"), "10001");
	json_decref(r);
	CHECK_INT(nodes_count(z), 1);
	r = t_call_rc(z, NULL, &rc, "zcor_relationship_delete", "{\"personId\":\"10001\"}");
	CHECK_INT(rc, ZCOR_OK);
	json_decref(r);
	r = t_call_rc(z, NULL, &rc, "zcor_memory_delete", "{\"id\":\"%s\"}", a);
	CHECK_INT(rc, ZCOR_OK);
	json_decref(r);
	CHECK_INT(nodes_count(z), 0);
	zcor_close(z);
}

/* issue18_minor_supersede_self: the replacement among the superseded is
 * refused with {field ids, reason replacement_among, id} for the page's
 * words; nothing changes. */
static void issue18_minor_supersede_self_details(void)
{
	zcor *z = t_open();
	char a[32], b[32];
	mk(z, NULL, "old", "o", NULL, a);
	mk(z, NULL, "new", "n", NULL, b);
	int rc;
	json_t *r = t_call_rc(z, NULL, &rc, "zcor_memory_supersede",
			      "{\"ids\":[\"%s\",\"%s\"],\"replacementId\":\"%s\",\"reason\":\"过时\"}", a, b, b);
	CHECK_INT(rc, ZCOR_EINVAL);
	CHECK_STR(t_str(r, "error.details.field"), "ids");
	CHECK_STR(t_str(r, "error.details.reason"), "replacement_among");
	CHECK_STR(t_str(r, "error.details.id"), b);
	json_decref(r);
	r = rd(z, NULL, a, &rc);
	CHECK_INT(rc, ZCOR_OK);
	CHECK(json_is_null(json_object_get(json_object_get(r, "node"), "supersededBy")));
	json_decref(r);
	zcor_close(z);
}

static void Z_DELETE_refused_while_supersede_target(void)
{
	zcor *z = t_open();
	char a[32], b[32];
	mk(z, NULL, "old", "o", NULL, a);
	mk(z, NULL, "new", "n", NULL, b);
	int rc;
	json_t *r = t_call_rc(z, NULL, &rc, "zcor_memory_supersede",
			      "{\"ids\":[\"%s\"],\"replacementId\":\"%s\",\"reason\":\"过时\"}", a, b);
	CHECK_INT(rc, ZCOR_OK);
	json_decref(r);
	r = t_call_rc(z, NULL, &rc, "zcor_memory_delete", "{\"id\":\"%s\"}", b);
	CHECK_INT(rc, ZCOR_ECONFLICT);
	CHECK_STR(t_errcode(r), "conflict");
	CHECK_STR(t_str(r, "error.details.reason"), "supersede_target");
	CHECK_STR(t_str(r, "error.details.ids.0"), a);
	/* issue 18: the refusal names the replaced memory by title too */
	char key[64];
	snprintf(key, sizeof key, "error.details.titles.%s", a);
	CHECK_STR(t_str(r, key), "old");
	json_decref(r);
	CHECK_INT(nodes_count(z), 2);
	r = rd(z, NULL, b, &rc);
	CHECK_INT(rc, ZCOR_OK);
	json_decref(r);
	zcor_close(z);
}

static void Z_DELETE_refusal_detail_names_the_first_few(void)
{
	zcor *z = t_open();
	char p[32], c[32];
	mk(z, NULL, "parent", "p", NULL, p);
	for (int i = 0; i < 7; i++)
		mk(z, NULL, "child", "c", p, c);
	int rc;
	json_t *r = t_call_rc(z, NULL, &rc, "zcor_memory_delete", "{\"id\":\"%s\"}", p);
	CHECK_INT(rc, ZCOR_ECONFLICT);
	CHECK_INT(t_int(r, "error.details.count"), 7);
	CHECK_INT(json_array_size(t_get(r, "error.details.ids")), 5);
	/* the message for the model is as before */
	CHECK_HAS(t_errmsg(r), "has 7 child memories");
	json_decref(r);
	/* the next failure on the handle carries no stale detail */
	r = t_call_rc(z, NULL, &rc, "zcor_memory_delete", "{\"id\":\"m-none\"}");
	CHECK_INT(rc, ZCOR_ENOTFOUND);
	CHECK(t_get(r, "error.details") == NULL);
	json_decref(r);
	zcor_close(z);
}

static void Z_DELETE_removes_important_mark(void)
{
	zcor *z = t_open();
	char id[7][32];
	const char *titles[] = {"A", "B", "C", "D", "E", "F", "G"};
	for (int i = 0; i < 7; i++)
		mk(z, NULL, titles[i], "x", NULL, id[i]);
	int rc;
	json_t *r = mark(z, id[0], 1, &rc);
	json_decref(r);
	r = mark(z, id[1], 1, &rc);
	json_decref(r);
	r = t_call_rc(z, NULL, &rc, "zcor_memory_delete", "{\"id\":\"%s\"}", id[0]);
	CHECK_INT(rc, ZCOR_OK);
	CHECK(json_is_true(t_get(r, "wasImportant")));
	json_decref(r);
	CHECK_INT(t_sql_int(zcor_dir(z), "SELECT count(*) FROM nodes WHERE important_seq IS NOT NULL"), 1);
	/* B is the only mark left: four more fit without a replacement */
	for (int i = 2; i < 6; i++) {
		r = mark(z, id[i], 1, &rc);
		CHECK_INT(rc, ZCOR_OK);
		CHECK(t_get(r, "receipt") == NULL);
		if (i == 5)
			CHECK_STR(join(r, "importantOrder", "title"), "B,C,D,E,F");
		json_decref(r);
	}
	zcor_close(z);
}

static void Z_DELETE_then_read_is_not_found_and_history_keeps_content(void)
{
	zcor *z = t_open();
	char a[32];
	mk(z, NULL, "将被删除", "删除前的正文-xyz", NULL, a);
	int rc;
	json_t *r = t_call_rc(z, NULL, &rc, "zcor_memory_delete", "{\"id\":\"%s\"}", a);
	CHECK_INT(rc, ZCOR_OK);
	json_decref(r);
	r = rd(z, NULL, a, &rc);
	CHECK_INT(rc, ZCOR_ENOTFOUND);
	CHECK_STR(t_errcode(r), "not_found");
	json_decref(r);
	CHECK_INT(nodes_count(z), 0);
	CHECK_INT(t_sql_int(zcor_dir(z), "SELECT count(*) FROM history WHERE operation = "
					 "'zcor_memory_delete' AND status = 'ok' AND before LIKE "
					 "'%删除前的正文-xyz%'"),
		  1);
	zcor_close(z);
}

/* ---- children and trace ------------------------------------------------- */

static void Z_CHILDREN_roots_and_children_in_creation_order(void)
{
	zcor *z = t_open();
	int64_t now = T0;
	zcor_set_clock(z, clock_of, &now);
	char r1[32], r2[32], r3[32], c1[32], c2[32], c3[32];
	mk(z, NULL, "R1", "x", NULL, r1);
	now += 1000;
	mk(z, NULL, "R2", "x", NULL, r2);
	now += 1000;
	mk(z, NULL, "C1", "x", r2, c1);
	now += 1000;
	mk(z, NULL, "R3", "x", NULL, r3);
	now += 1000;
	mk(z, NULL, "C2", "x", r2, c2);
	now += 1000;
	mk(z, NULL, "C3", "x", r2, c3);
	now += 1000;
	/* updating the first ones later must not reorder them */
	int rc;
	json_t *r = t_call_rc(z, NULL, &rc, "zcor_memory_write", "{\"id\":\"%s\",\"title\":\"R1\",\"content\":\"y\"}", r1);
	json_decref(r);
	r = t_call_rc(z, NULL, &rc, "zcor_memory_write", "{\"id\":\"%s\",\"title\":\"C1\",\"content\":\"y\"}", c1);
	json_decref(r);

	r = t_call_rc(z, NULL, &rc, "zcor_memory_children", "{}");
	CHECK_INT(rc, ZCOR_OK);
	CHECK_STR(join(r, "items", "title"), "R1,R2,R3");
	json_decref(r);
	r = t_call_rc(z, NULL, &rc, "zcor_memory_children", "{\"parentId\":\"%s\"}", r2);
	CHECK_INT(rc, ZCOR_OK);
	CHECK_STR(join(r, "items", "title"), "C1,C2,C3");
	json_decref(r);
	r = t_call_rc(z, NULL, &rc, "zcor_memory_children", "{\"parentId\":\"%s\"}", r1);
	CHECK_INT(rc, ZCOR_OK);
	CHECK_INT(json_array_size(t_get(r, "items")), 0);
	json_decref(r);
	zcor_close(z);
}

static void Z_TRACE_path_from_root_and_direct_children(void)
{
	zcor *z = t_open();
	char a[32], b[32], c[32], d[32], e[32], f[32], s[32];
	mk(z, NULL, "A", "x", NULL, a);
	mk(z, NULL, "B", "x", a, b);
	mk(z, NULL, "S", "x", a, s); /* a sibling: on no path */
	mk(z, NULL, "C", "x", b, c);
	mk(z, NULL, "D", "x", c, d);
	mk(z, NULL, "E", "x", c, e);
	mk(z, NULL, "F", "x", d, f); /* a grandchild: not a direct child */
	int rc;
	json_t *r = t_call_rc(z, NULL, &rc, "zcor_memory_trace", "{\"id\":\"%s\"}", c);
	CHECK_INT(rc, ZCOR_OK);
	CHECK_STR(join(r, "path", "title"), "A,B,C");
	CHECK_STR(join(r, "children", "title"), "D,E");
	json_decref(r);
	r = t_call_rc(z, NULL, &rc, "zcor_memory_trace", "{\"id\":\"%s\"}", a);
	CHECK_STR(join(r, "path", "title"), "A");
	CHECK_STR(join(r, "children", "title"), "B,S");
	json_decref(r);
	r = t_call_rc(z, NULL, &rc, "zcor_memory_trace", "{\"id\":\"m-none\"}");
	CHECK_INT(rc, ZCOR_ENOTFOUND);
	json_decref(r);
	zcor_close(z);
}

/* ---- important ------------------------------------------------------------ */

static void Z_IMPORTANT_ordered_by_first_marking(void)
{
	zcor *z = t_open();
	char a[32], b[32], c[32];
	mk(z, NULL, "A", "x", NULL, a);
	mk(z, NULL, "B", "x", NULL, b);
	mk(z, NULL, "C", "x", NULL, c);
	int rc;
	json_t *r = mark(z, c, 1, &rc);
	json_decref(r);
	r = mark(z, a, 1, &rc);
	json_decref(r);
	r = mark(z, b, 1, &rc);
	CHECK_INT(rc, ZCOR_OK);
	CHECK(json_is_true(t_get(r, "important")));
	CHECK_STR(join(r, "importantOrder", "title"), "C,A,B");
	json_decref(r);
	r = rd(z, NULL, a, &rc);
	CHECK(json_is_true(t_get(r, "node.important")));
	json_decref(r);
	/* unmarking takes it out */
	r = mark(z, a, 0, &rc);
	CHECK_INT(rc, ZCOR_OK);
	CHECK_STR(join(r, "importantOrder", "title"), "C,B");
	json_decref(r);
	r = rd(z, NULL, a, &rc);
	CHECK(json_is_false(t_get(r, "node.important")));
	json_decref(r);
	zcor_close(z);
}

static void Z_IMPORTANT_remarking_keeps_order(void)
{
	zcor *z = t_open();
	char a[32], b[32], c[32];
	mk(z, NULL, "A", "x", NULL, a);
	mk(z, NULL, "B", "x", NULL, b);
	mk(z, NULL, "C", "x", NULL, c);
	int rc;
	json_t *r = mark(z, a, 1, &rc);
	json_decref(r);
	r = mark(z, b, 1, &rc);
	json_decref(r);
	r = mark(z, c, 1, &rc);
	json_decref(r);
	r = mark(z, a, 1, &rc);
	CHECK_INT(rc, ZCOR_OK);
	CHECK(json_is_false(t_get(r, "changed")));
	CHECK_STR(join(r, "importantOrder", "title"), "A,B,C");
	json_decref(r);
	zcor_close(z);
}

static void Z_IMPORTANT_sixth_unmarks_earliest_with_receipt(void)
{
	zcor *z = t_open();
	char id[6][32];
	const char *titles[] = {"第一条", "B", "C", "D", "E", "F"};
	for (int i = 0; i < 6; i++)
		mk(z, NULL, titles[i], "x", NULL, id[i]);
	int rc;
	json_t *r;
	for (int i = 0; i < 5; i++) {
		r = mark(z, id[i], 1, &rc);
		CHECK_INT(rc, ZCOR_OK);
		CHECK(t_get(r, "receipt") == NULL);
		json_decref(r);
	}
	r = mark(z, id[5], 1, &rc);
	CHECK_INT(rc, ZCOR_OK);
	CHECK_STR(t_str(r, "receipt.replacedId"), id[0]);
	CHECK_STR(t_str(r, "receipt.replacedTitle"), "第一条");
	CHECK(t_str(r, "receipt.reminder") && *t_str(r, "receipt.reminder"));
	CHECK_STR(join(r, "importantOrder", "title"), "B,C,D,E,F");
	json_decref(r);
	CHECK_INT(t_sql_int(zcor_dir(z), "SELECT count(*) FROM nodes WHERE important_seq IS NOT NULL"), 5);
	CHECK_INT(t_sql_int(zcor_dir(z), "SELECT count(*) FROM history WHERE receipt LIKE '%replacedId%'"), 1);
	/* the replaced memory itself stays */
	r = rd(z, NULL, id[0], &rc);
	CHECK_INT(rc, ZCOR_OK);
	CHECK_STR(t_str(r, "node.title"), "第一条");
	CHECK(json_is_false(t_get(r, "node.important")));
	json_decref(r);
	CHECK_INT(nodes_count(z), 6);
	zcor_close(z);
}

static void Z_IMPORTANT_update_shows_latest_content(void)
{
	zcor *z = t_open();
	char a[32], b[32];
	mk(z, NULL, "旧标题", "旧正文", NULL, a);
	mk(z, NULL, "B", "x", NULL, b);
	int rc;
	json_t *r = mark(z, a, 1, &rc);
	json_decref(r);
	r = t_call_rc(z, NULL, &rc, "zcor_memory_write",
		      "{\"id\":\"%s\",\"title\":\"新标题\",\"content\":\"新正文\"}", a);
	CHECK_INT(rc, ZCOR_OK);
	CHECK(json_is_true(t_get(r, "node.important")));
	json_decref(r);
	r = rd(z, NULL, a, &rc);
	CHECK(json_is_true(t_get(r, "node.important")));
	CHECK_STR(t_str(r, "node.content"), "新正文");
	json_decref(r);
	r = mark(z, b, 1, &rc);
	CHECK_STR(join(r, "importantOrder", "title"), "新标题,B");
	json_decref(r);
	zcor_close(z);
}

/* ---- query ---------------------------------------------------------------- */

static json_t *query(zcor *z, const char *conv, int *rc, const char *args)
{
	return t_call_raw(z, conv, rc, "zcor_memory_query", args);
}

static void Z_QUERY_every_keyword_must_match_title_or_content(void)
{
	zcor *z = t_open();
	char x[32];
	mk(z, NULL, "apple pie", "with banana", NULL, x); /* one in title, one in content */
	mk(z, NULL, "apple", "only apple", NULL, x);
	mk(z, NULL, "banana", "only banana", NULL, x);
	mk(z, NULL, "cherry", "nothing", NULL, x);
	int rc;
	json_t *r = query(z, NULL, &rc, "{\"keywords\":[\"apple\",\"banana\"]}");
	CHECK_INT(rc, ZCOR_OK);
	CHECK_INT(t_int(r, "total"), 1);
	CHECK_STR(join(r, "items", "title"), "apple pie");
	json_decref(r);
	r = query(z, NULL, &rc, "{\"keywords\":[\"banana\"]}");
	CHECK_INT(t_int(r, "total"), 2);
	json_decref(r);
	r = query(z, NULL, &rc, "{\"keywords\":[\"only\"]}"); /* content only */
	CHECK_INT(t_int(r, "total"), 2);
	json_decref(r);
	r = query(z, NULL, &rc, "{}");
	CHECK_INT(t_int(r, "total"), 4);
	json_decref(r);
	zcor_close(z);
}

static void Z_QUERY_keywords_nfkc_and_case_folded(void)
{
	zcor *z = t_open();
	char x[32];
	mk(z, NULL, "abc 笔记", "x", NULL, x);
	mk(z, NULL, "地址", "Hauptstraße 5", NULL, x);
	mk(z, NULL, "ＸＹＺ全角", "x", NULL, x);
	mk(z, NULL, "STRASSE", "y", NULL, x);
	int rc;
	json_t *r = query(z, NULL, &rc, "{\"keywords\":[\"ＡＢＣ\"]}");
	CHECK_STR(join(r, "items", "title"), "abc 笔记");
	json_decref(r);
	r = query(z, NULL, &rc, "{\"keywords\":[\"ABC\"]}");
	CHECK_STR(join(r, "items", "title"), "abc 笔记");
	json_decref(r);
	r = query(z, NULL, &rc, "{\"keywords\":[\"xyz\"]}");
	CHECK_STR(join(r, "items", "title"), "ＸＹＺ全角");
	json_decref(r);
	/* full case folding: ß folds to ss, both ways */
	r = query(z, NULL, &rc, "{\"keywords\":[\"STRASSE\"]}");
	CHECK_STR(join(r, "items", "title"), "STRASSE,地址");
	json_decref(r);
	r = query(z, NULL, &rc, "{\"keywords\":[\"straße\"]}");
	CHECK_STR(join(r, "items", "title"), "STRASSE,地址");
	json_decref(r);
	zcor_close(z);
}

static void Z_QUERY_no_synonym_expansion(void)
{
	zcor *z = t_open();
	int rc;
	json_t *r = t_call_rc(z, NULL, &rc, "zcor_synonyms_add", "{\"terms\":[\"猫咪\",\"喵星人\"]}");
	CHECK_INT(rc, ZCOR_OK);
	json_decref(r);
	char x[32];
	mk(z, NULL, "家里的猫咪", "x", NULL, x);
	mk(z, NULL, "爸爸的生日", "x", NULL, x); /* 爸爸/父亲: a built-in group */
	r = query(z, NULL, &rc, "{\"keywords\":[\"喵星人\"]}");
	CHECK_INT(rc, ZCOR_OK);
	CHECK_INT(t_int(r, "total"), 0);
	json_decref(r);
	r = query(z, NULL, &rc, "{\"keywords\":[\"父亲\"]}");
	CHECK_INT(t_int(r, "total"), 0);
	json_decref(r);
	r = query(z, NULL, &rc, "{\"keywords\":[\"猫咪\"]}");
	CHECK_INT(t_int(r, "total"), 1);
	json_decref(r);
	zcor_close(z);
}

static void Z_QUERY_from_to_inclusive_on_updatedAt(void)
{
	zcor *z = t_open();
	int64_t now = T0 + 1000;
	zcor_set_clock(z, clock_of, &now);
	char n1[32], n2[32], n3[32], old[32];
	mk(z, NULL, "N1", "x", NULL, n1);         /* 00:00:01 */
	now = T0 + 2000;
	mk(z, NULL, "N2", "x", NULL, n2);         /* 00:00:02 */
	now = T0 + 3000;
	mk(z, NULL, "N3", "x", NULL, n3);         /* 00:00:03 */
	now = T0 - 60000;
	mk(z, NULL, "OLD", "x", NULL, old);       /* created long before... */
	now = T0 + 4000;
	int rc;
	json_t *r = t_call_rc(z, NULL, &rc, "zcor_memory_write", /* ...updated at 00:00:04 */
			      "{\"id\":\"%s\",\"title\":\"OLD\",\"content\":\"y\"}", old);
	json_decref(r);

	/* both endpoints exactly, given in another zone */
	r = query(z, NULL, &rc,
		  "{\"from\":\"2026-01-01T08:00:02+08:00\",\"to\":\"2026-01-01T00:00:03Z\"}");
	CHECK_INT(rc, ZCOR_OK);
	CHECK_STR(join(r, "items", "title"), "N3,N2");
	CHECK_INT(t_int(r, "total"), 2);
	json_decref(r);
	r = query(z, NULL, &rc, "{\"from\":\"2026-01-01T00:00:01Z\",\"to\":\"2026-01-01T00:00:01Z\"}");
	CHECK_STR(join(r, "items", "title"), "N1");
	json_decref(r);
	/* one millisecond past an endpoint leaves it out */
	r = query(z, NULL, &rc,
		  "{\"from\":\"2026-01-01T00:00:02.001Z\",\"to\":\"2026-01-01T00:00:03.999Z\"}");
	CHECK_STR(join(r, "items", "title"), "N3");
	json_decref(r);
	r = query(z, NULL, &rc, "{\"to\":\"2026-01-01T00:00:01.999Z\"}");
	CHECK_STR(join(r, "items", "title"), "N1"); /* OLD was created earlier but updated later */
	json_decref(r);
	r = query(z, NULL, &rc, "{\"from\":\"2026-01-01T00:00:04Z\"}");
	CHECK_STR(join(r, "items", "title"), "OLD");
	json_decref(r);
	zcor_close(z);
}

static void Z_QUERY_time_without_zone_is_invalid_argument(void)
{
	zcor *z = t_open();
	char x[32];
	mk(z, NULL, "N", "x", NULL, x);
	int rc;
	json_t *r = query(z, NULL, &rc, "{\"from\":\"2026-01-01T00:00:00\"}");
	CHECK_INT(rc, ZCOR_EINVAL);
	CHECK_STR(t_errcode(r), "invalid_argument");
	CHECK_HAS(t_errmsg(r), "'from'");
	json_decref(r);
	r = query(z, NULL, &rc, "{\"from\":\"2026-01-01\"}");
	CHECK_INT(rc, ZCOR_EINVAL);
	CHECK_HAS(t_errmsg(r), "'from'");
	json_decref(r);
	r = query(z, NULL, &rc, "{\"to\":\"2026-01-01 10:00\"}");
	CHECK_INT(rc, ZCOR_EINVAL);
	CHECK_HAS(t_errmsg(r), "'to'");
	json_decref(r);
	zcor_close(z);
}

static void Z_QUERY_newest_first_same_instant_later_record_first(void)
{
	zcor *z = t_open();
	int64_t now = T0 + 5000;
	zcor_set_clock(z, clock_of, &now);
	char x[32];
	mk(z, NULL, "A", "x", NULL, x); /* 5s */
	mk(z, NULL, "B", "x", NULL, x); /* 5s, later record */
	now = T0 + 1000;
	mk(z, NULL, "C", "x", NULL, x); /* older although created last */
	now = T0 + 9000;
	mk(z, NULL, "D", "x", NULL, x);
	mk(z, NULL, "E", "x", NULL, x);
	int rc;
	json_t *r = query(z, NULL, &rc, "{}");
	CHECK_INT(rc, ZCOR_OK);
	CHECK_STR(join(r, "items", "title"), "E,D,B,A,C");
	json_decref(r);
	zcor_close(z);
}

static void Z_QUERY_paging_items_total_next_offset(void)
{
	zcor *z = t_open();
	int64_t now = T0;
	zcor_set_clock(z, clock_of, &now);
	enum { N = 105 };
	char x[32];
	for (int i = 0; i < N; i++) {
		char title[16];
		snprintf(title, sizeof(title), "q%03d", i);
		now = T0 + i * 1000;
		mk(z, NULL, title, "x", NULL, x);
	}
	int rc;
	json_t *r = query(z, NULL, &rc, "{}"); /* default limit 20, offset 0 */
	CHECK_INT(rc, ZCOR_OK);
	CHECK_INT(json_array_size(t_get(r, "items")), 20);
	CHECK_INT(t_int(r, "total"), N);
	CHECK_INT(t_int(r, "nextOffset"), 20);
	CHECK_STR(t_str(r, "items.0.title"), "q104");
	CHECK_STR(t_str(r, "items.19.title"), "q085");
	json_decref(r);
	r = query(z, NULL, &rc, "{\"offset\":20,\"limit\":10}");
	CHECK_INT(json_array_size(t_get(r, "items")), 10);
	CHECK_STR(t_str(r, "items.0.title"), "q084");
	CHECK_INT(t_int(r, "nextOffset"), 30);
	json_decref(r);
	r = query(z, NULL, &rc, "{\"limit\":100}");
	CHECK_INT(rc, ZCOR_OK);
	CHECK_INT(json_array_size(t_get(r, "items")), 100);
	CHECK_INT(t_int(r, "nextOffset"), 100);
	json_decref(r);
	r = query(z, NULL, &rc, "{\"limit\":100,\"offset\":100}");
	CHECK_INT(json_array_size(t_get(r, "items")), 5);
	CHECK_STR(t_str(r, "items.4.title"), "q000");
	CHECK_INT(t_int(r, "total"), N);
	CHECK(json_is_null(t_get(r, "nextOffset")));
	json_decref(r);
	r = query(z, NULL, &rc, "{\"offset\":200}");
	CHECK_INT(rc, ZCOR_OK);
	CHECK_INT(json_array_size(t_get(r, "items")), 0);
	CHECK_INT(t_int(r, "total"), N);
	json_decref(r);
	zcor_close(z);
}

static void Z_QUERY_limit_outside_1_to_100_rejected(void)
{
	zcor *z = t_open();
	char x[32];
	mk(z, NULL, "N", "x", NULL, x);
	const char *bad[] = {"{\"limit\":0}", "{\"limit\":101}", "{\"limit\":-1}"};
	for (int i = 0; i < 3; i++) {
		int rc;
		json_t *r = query(z, NULL, &rc, bad[i]);
		CHECK_INT(rc, ZCOR_EINVAL);
		CHECK_STR(t_errcode(r), "invalid_argument");
		CHECK_HAS(t_errmsg(r), "'limit'");
		json_decref(r);
	}
	int rc;
	json_t *r = query(z, NULL, &rc, "{\"offset\":-1}");
	CHECK_INT(rc, ZCOR_EINVAL);
	CHECK_HAS(t_errmsg(r), "'offset'");
	json_decref(r);
	r = query(z, NULL, &rc, "{\"limit\":1}");
	CHECK_INT(rc, ZCOR_OK);
	CHECK_INT(json_array_size(t_get(r, "items")), 1);
	json_decref(r);
	zcor_close(z);
}

/* ---- merge ---------------------------------------------------------------- */

static void Z_MERGE_new_record_sources_superseded_and_kept(void)
{
	zcor *z = t_open();
	char a[32], b[32];
	mk(z, NULL, "喜欢猫", "x", NULL, a);
	mk(z, NULL, "养了一只猫", "y", NULL, b);
	int rc;
	json_t *r = t_call_rc(z, NULL, &rc, "zcor_memory_merge",
			      "{\"ids\":[\"%s\",\"%s\"],\"title\":\"猫\",\"content\":\"喜欢猫，养了一只\","
			      "\"keywords\":[\"猫\"],\"reason\":\"重复\"}",
			      a, b);
	CHECK_INT(rc, ZCOR_OK);
	const char *m = t_str(r, "node.id");
	char mid[32];
	snprintf(mid, sizeof(mid), "%s", m ? m : "");
	CHECK(*mid && strcmp(mid, a) != 0 && strcmp(mid, b) != 0);
	CHECK_STR(t_str(r, "node.title"), "猫");
	CHECK_STR(t_str(r, "node.content"), "喜欢猫，养了一只");
	CHECK_STR(t_str(r, "node.keywords.0"), "猫");
	CHECK_STR(t_str(r, "node.mergedFrom.0"), a);
	CHECK_STR(t_str(r, "node.mergedFrom.1"), b);
	json_decref(r);
	CHECK_INT(nodes_count(z), 3);
	const char *src[] = {a, b};
	for (int i = 0; i < 2; i++) {
		r = rd(z, NULL, src[i], &rc);
		CHECK_INT(rc, ZCOR_OK); /* still readable by id */
		CHECK_STR(t_str(r, "node.supersededBy"), mid);
		CHECK_STR(t_str(r, "node.supersededReason"), "重复");
		json_decref(r);
	}
	r = query(z, NULL, &rc, "{\"keywords\":[\"猫\"]}");
	CHECK_STR(join(r, "items", "id"), mid);
	json_decref(r);
	r = rd(z, NULL, mid, &rc);
	CHECK_INT(rc, ZCOR_OK);
	CHECK(t_get(r, "node.supersededBy") == NULL || json_is_null(t_get(r, "node.supersededBy")));
	json_decref(r);
	zcor_close(z);
}

static void Z_MERGE_important_marks_move_to_new_record(void)
{
	zcor *z = t_open();
	char a[32], b[32], o[32];
	mk(z, NULL, "A", "x", NULL, a);
	mk(z, NULL, "B", "y", NULL, b);
	mk(z, NULL, "O", "z", NULL, o);
	int rc;
	json_t *r = mark(z, a, 1, &rc);
	json_decref(r);
	r = mark(z, o, 1, &rc);
	json_decref(r);
	r = t_call_rc(z, NULL, &rc, "zcor_memory_merge",
		      "{\"ids\":[\"%s\",\"%s\"],\"title\":\"AB\",\"content\":\"xy\",\"reason\":\"合并\"}", a, b);
	CHECK_INT(rc, ZCOR_OK);
	char mid[32];
	snprintf(mid, sizeof(mid), "%s", t_str(r, "node.id") ? t_str(r, "node.id") : "");
	CHECK(json_is_true(t_get(r, "node.important")));
	json_decref(r);
	r = rd(z, NULL, a, &rc);
	CHECK(json_is_false(t_get(r, "node.important")));
	json_decref(r);
	r = rd(z, NULL, mid, &rc);
	CHECK(json_is_true(t_get(r, "node.important")));
	json_decref(r);
	CHECK_INT(t_sql_int(zcor_dir(z), "SELECT count(*) FROM nodes WHERE important_seq IS NOT NULL"), 2);
	r = mark(z, o, 1, &rc); /* re-mark: shows the list */
	CHECK(strstr(join(r, "importantOrder", "title"), "AB") != NULL);
	CHECK(strstr(join(r, "importantOrder", "title"), "A,") == NULL);
	json_decref(r);
	zcor_close(z);
}

static void Z_MERGE_unknown_id_changes_nothing(void)
{
	zcor *z = t_open();
	char a[32], b[32];
	mk(z, NULL, "A", "x", NULL, a);
	mk(z, NULL, "B", "y", NULL, b);
	int rc;
	json_t *r = mark(z, a, 1, &rc);
	json_decref(r);
	long long n0 = nodes_count(z);
	r = t_call_rc(z, NULL, &rc, "zcor_memory_merge",
		      "{\"ids\":[\"%s\",\"%s\",\"m-ghost\"],\"title\":\"M\",\"content\":\"m\",\"reason\":\"r\"}",
		      a, b);
	CHECK(rc != ZCOR_OK);
	CHECK(t_errcode(r) != NULL);
	CHECK_HAS(t_errmsg(r), "m-ghost");
	json_decref(r);
	CHECK_INT(nodes_count(z), n0);
	CHECK_INT(t_sql_int(zcor_dir(z), "SELECT count(*) FROM nodes WHERE superseded_by IS NOT NULL"), 0);
	r = rd(z, NULL, a, &rc);
	CHECK(json_is_true(t_get(r, "node.important")));
	json_decref(r);
	zcor_close(z);
}

/* ---- supersede ------------------------------------------------------------- */

static void Z_SUPERSEDE_sources_point_to_replacement(void)
{
	zcor *z = t_open();
	char a[32], b[32], c[32];
	mk(z, NULL, "住在上海", "x", NULL, a);
	mk(z, NULL, "住在苏州", "x", NULL, b);
	mk(z, NULL, "住在杭州", "x", NULL, c);
	int rc;
	json_t *r = t_call_rc(z, NULL, &rc, "zcor_memory_supersede",
			      "{\"ids\":[\"%s\",\"%s\"],\"replacementId\":\"%s\",\"reason\":\"搬家了\"}", a, b, c);
	CHECK_INT(rc, ZCOR_OK);
	json_decref(r);
	const char *src[] = {a, b};
	for (int i = 0; i < 2; i++) {
		r = rd(z, NULL, src[i], &rc);
		CHECK_INT(rc, ZCOR_OK);
		CHECK_STR(t_str(r, "node.supersededBy"), c);
		CHECK_STR(t_str(r, "node.supersededReason"), "搬家了");
		json_decref(r);
	}
	CHECK_INT(nodes_count(z), 3);
	zcor_close(z);
}

static void Z_SUPERSEDE_excluded_from_query_unless_includeSuperseded(void)
{
	zcor *z = t_open();
	char a[32], b[32], x[32];
	mk(z, NULL, "住在上海", "x", NULL, a);
	mk(z, NULL, "住在杭州", "x", NULL, b);
	mk(z, NULL, "别的", "x", NULL, x);
	int rc;
	json_t *r = t_call_rc(z, NULL, &rc, "zcor_memory_supersede",
			      "{\"ids\":[\"%s\"],\"replacementId\":\"%s\",\"reason\":\"搬家了\"}", a, b);
	CHECK_INT(rc, ZCOR_OK);
	json_decref(r);
	r = query(z, NULL, &rc, "{\"keywords\":[\"住在\"]}");
	CHECK_INT(t_int(r, "total"), 1);
	CHECK_STR(join(r, "items", "id"), b);
	json_decref(r);
	r = query(z, NULL, &rc, "{\"keywords\":[\"住在\"],\"includeSuperseded\":false}");
	CHECK_INT(t_int(r, "total"), 1);
	json_decref(r);
	r = query(z, NULL, &rc, "{\"keywords\":[\"住在\"],\"includeSuperseded\":true}");
	CHECK_INT(t_int(r, "total"), 2);
	CHECK(has_id(r, "items", a));
	json_decref(r);
	r = query(z, NULL, &rc, "{}");
	CHECK_INT(t_int(r, "total"), 2);
	json_decref(r);
	zcor_close(z);
}

static void Z_SUPERSEDE_replacement_cannot_be_one_of_ids(void)
{
	zcor *z = t_open();
	char a[32], b[32];
	mk(z, NULL, "A", "x", NULL, a);
	mk(z, NULL, "B", "x", NULL, b);
	int rc;
	json_t *r = t_call_rc(z, NULL, &rc, "zcor_memory_supersede",
			      "{\"ids\":[\"%s\",\"%s\"],\"replacementId\":\"%s\",\"reason\":\"r\"}", a, b, b);
	CHECK(rc != ZCOR_OK);
	CHECK(t_errcode(r) != NULL);
	json_decref(r);
	CHECK_INT(t_sql_int(zcor_dir(z), "SELECT count(*) FROM nodes WHERE superseded_by IS NOT NULL"), 0);
	zcor_close(z);
}

static void Z_SUPERSEDE_unknown_replacement_rejected(void)
{
	zcor *z = t_open();
	char a[32];
	mk(z, NULL, "A", "x", NULL, a);
	int rc;
	json_t *r = t_call_rc(z, NULL, &rc, "zcor_memory_supersede",
			      "{\"ids\":[\"%s\"],\"replacementId\":\"m-ghost\",\"reason\":\"r\"}", a);
	CHECK(rc != ZCOR_OK);
	CHECK_HAS(t_errmsg(r), "m-ghost");
	json_decref(r);
	CHECK_INT(t_sql_int(zcor_dir(z), "SELECT count(*) FROM nodes WHERE superseded_by IS NOT NULL"), 0);
	r = query(z, NULL, &rc, "{}");
	CHECK_INT(t_int(r, "total"), 1);
	json_decref(r);
	zcor_close(z);
}

/* ---- schema validation ------------------------------------------------------ */

static void X_SCHEMA_wrong_type_names_field(void)
{
	zcor *z = t_open();
	char a[32];
	mk(z, NULL, "A", "x", NULL, a);
	int rc;
	json_t *r = t_call_rc(z, NULL, &rc, "zcor_memory_write", "{\"title\":5,\"content\":\"c\"}");
	CHECK_INT(rc, ZCOR_EINVAL);
	CHECK_STR(t_errcode(r), "invalid_argument");
	CHECK_HAS(t_errmsg(r), "'title'");
	json_decref(r);
	r = t_call_rc(z, NULL, &rc, "zcor_memory_write",
		      "{\"id\":\"%s\",\"title\":\"changed\",\"content\":\"c\",\"keywords\":\"k\"}", a);
	CHECK_INT(rc, ZCOR_EINVAL);
	CHECK_HAS(t_errmsg(r), "'keywords'");
	json_decref(r);
	r = t_call_rc(z, NULL, &rc, "zcor_memory_important", "{\"id\":\"%s\",\"important\":\"yes\"}", a);
	CHECK_INT(rc, ZCOR_EINVAL);
	CHECK_HAS(t_errmsg(r), "'important'");
	json_decref(r);
	CHECK_INT(nodes_count(z), 1);
	r = rd(z, NULL, a, &rc);
	CHECK_STR(t_str(r, "node.title"), "A");
	CHECK(json_is_false(t_get(r, "node.important")));
	json_decref(r);
	zcor_close(z);
}

static void X_SCHEMA_unknown_field_names_field(void)
{
	zcor *z = t_open();
	int rc;
	json_t *r = t_call_rc(z, NULL, &rc, "zcor_memory_write",
			      "{\"title\":\"t\",\"content\":\"c\",\"parent\":\"m000001\"}");
	CHECK_INT(rc, ZCOR_EINVAL);
	CHECK_STR(t_errcode(r), "invalid_argument");
	CHECK_HAS(t_errmsg(r), "'parent'");
	json_decref(r);
	CHECK_INT(nodes_count(z), 0);
	zcor_close(z);
}

static void X_SCHEMA_missing_field_names_field(void)
{
	zcor *z = t_open();
	char a[32];
	mk(z, NULL, "A", "x", NULL, a);
	int rc;
	json_t *r = t_call_rc(z, NULL, &rc, "zcor_memory_write", "{\"title\":\"t\"}");
	CHECK_INT(rc, ZCOR_EINVAL);
	CHECK_STR(t_errcode(r), "invalid_argument");
	CHECK_HAS(t_errmsg(r), "'content'");
	json_decref(r);
	r = t_call_rc(z, NULL, &rc, "zcor_memory_supersede", "{\"ids\":[\"%s\"],\"reason\":\"r\"}", a);
	CHECK_INT(rc, ZCOR_EINVAL);
	CHECK_HAS(t_errmsg(r), "'replacementId'");
	json_decref(r);
	CHECK_INT(nodes_count(z), 1);
	CHECK_INT(t_sql_int(zcor_dir(z), "SELECT count(*) FROM nodes WHERE superseded_by IS NOT NULL"), 0);
	zcor_close(z);
}

static void X_SCHEMA_invalid_json_is_invalid_argument(void)
{
	zcor *z = t_open();
	int rc;
	json_t *r = t_call_raw(z, NULL, &rc, "zcor_memory_write", "{\"title\":\"t\",\"content\":");
	CHECK_INT(rc, ZCOR_EINVAL);
	CHECK_STR(t_errcode(r), "invalid_argument");
	json_decref(r);
	r = t_call_raw(z, NULL, &rc, "zcor_memory_write", "[\"title\"]");
	CHECK_INT(rc, ZCOR_EINVAL);
	CHECK_STR(t_errcode(r), "invalid_argument");
	json_decref(r);
	CHECK_INT(nodes_count(z), 0);
	zcor_close(z);
}

/* ---- scope (Q-SCOPE) ---------------------------------------------------------- */

static void Q_SCOPE_write_in_group_gets_group_scope(void)
{
	zcor *z = t_open();
	int rc;
	json_t *r = t_call_rc(z, "group:1", &rc, "zcor_memory_write", "{\"title\":\"群规\",\"content\":\"x\"}");
	CHECK_INT(rc, ZCOR_OK);
	CHECK_STR(t_str(r, "node.scope"), "group:1");
	json_decref(r);
	r = t_call_rc(z, NULL, &rc, "zcor_memory_write", "{\"title\":\"全局\",\"content\":\"x\"}");
	CHECK_STR(t_str(r, "node.scope"), "global");
	json_decref(r);
	CHECK_INT(t_sql_int(zcor_dir(z), "SELECT count(*) FROM nodes WHERE scope = 'group:1'"), 1);
	zcor_close(z);
}

/* issue 18, the per-conversation page: zcor_memory_find's "scope" keeps
 * the records of one scope ("global", or a conversation's own), within
 * what the caller sees; a scope that is neither is refused naming it. */
static void issue18_find_scope_lists_a_conversations_own_memories(void)
{
	zcor *z = t_open();
	json_decref(t_call_ok(z, "group:1", "zcor_memory_write", "{\"title\":\"群一的规矩\",\"content\":\"a\"}"));
	json_decref(t_call_ok(z, "group:1", "zcor_memory_write", "{\"title\":\"群一的梗\",\"content\":\"b\"}"));
	json_decref(t_call_ok(z, "group:2", "zcor_memory_write", "{\"title\":\"群二的规矩\",\"content\":\"c\"}"));
	json_decref(t_call_ok(z, NULL, "zcor_memory_write", "{\"title\":\"全局的规矩\",\"content\":\"d\"}"));
	struct zcor_ctx host = {ZCOR_ACTOR_UI, NULL}, g1 = {ZCOR_ACTOR_UI, "group:1"};
	char *out = NULL;
	int rc = zcor_memory_find(z, &host, "{\"scope\":\"group:1\"}", &out);
	json_t *r = t_answer(z, rc, out);
	CHECK_INT(rc, ZCOR_OK);
	CHECK_INT(t_int(r, "total"), 2);
	CHECK_STR(t_str(r, "items.0.scope"), "group:1");
	CHECK_STR(t_str(r, "items.1.scope"), "group:1");
	json_decref(r);
	rc = zcor_memory_find(z, &host, "{\"scope\":\"global\",\"keywords\":[\"规矩\"]}", &out);
	r = t_answer(z, rc, out);
	CHECK_INT(t_int(r, "total"), 1);
	CHECK_STR(t_str(r, "items.0.title"), "全局的规矩");
	json_decref(r);
	/* with keywords: the scope and the words both */
	rc = zcor_memory_find(z, &host, "{\"scope\":\"group:1\",\"keywords\":[\"规矩\"]}", &out);
	r = t_answer(z, rc, out);
	CHECK_INT(t_int(r, "total"), 1);
	CHECK_STR(t_str(r, "items.0.title"), "群一的规矩");
	json_decref(r);
	/* a caller bound to group:1 sees nothing of group:2's */
	rc = zcor_memory_find(z, &g1, "{\"scope\":\"group:2\"}", &out);
	r = t_answer(z, rc, out);
	CHECK_INT(rc, ZCOR_OK);
	CHECK_INT(t_int(r, "total"), 0);
	json_decref(r);
	/* without scope: everything the caller sees, as before */
	rc = zcor_memory_find(z, &host, "{}", &out);
	r = t_answer(z, rc, out);
	CHECK_INT(t_int(r, "total"), 4);
	json_decref(r);
	static const char *const bad[] = {"{\"scope\":\"group\"}", "{\"scope\":7}", "{\"scope\":\"\"}"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		rc = zcor_memory_find(z, &host, bad[i], &out);
		r = t_answer(z, rc, out);
		CHECK_INT(rc, ZCOR_EINVAL);
		CHECK(strstr(t_errmsg(r), "argument 'scope'") != NULL);
		json_decref(r);
	}
	zcor_close(z);
}

/* issue 18: the listing tells hasChildren (the page draws no expander on
 * a leaf), counting only the children the caller may see. */
static int has_children_of(zcor *z, const char *conv, const char *parent, const char *id)
{
	int rc;
	json_t *r = parent ? t_call_rc(z, conv, &rc, "zcor_memory_children", "{\"parentId\":\"%s\"}",
				       parent)
			   : t_call_rc(z, conv, &rc, "zcor_memory_children", "{}");
	CHECK_INT(rc, ZCOR_OK);
	int v = -1;
	size_t i;
	json_t *n;
	json_array_foreach(json_object_get(r, "items"), i, n) {
		if (strcmp(json_string_value(json_object_get(n, "id")), id) == 0)
			v = json_is_true(json_object_get(n, "hasChildren"));
	}
	json_decref(r);
	return v;
}

static void issue18_children_listing_tells_has_children_in_scope(void)
{
	zcor *z = t_open();
	char gl[32], leaf[32], kid[32], grand[32];
	mk(z, NULL, "公共的根", "x", NULL, gl);
	mk(z, NULL, "孤单的根", "x", NULL, leaf);
	mk(z, "group:1", "群一的孩子", "x", gl, kid);
	mk(z, "group:1", "群一的孙子", "x", kid, grand);
	CHECK_INT(has_children_of(z, NULL, NULL, gl), 1);
	CHECK_INT(has_children_of(z, NULL, NULL, leaf), 0);
	CHECK_INT(has_children_of(z, "group:1", NULL, gl), 1);
	CHECK_INT(has_children_of(z, "group:1", gl, kid), 1);
	CHECK_INT(has_children_of(z, NULL, kid, grand), 0);
	/* another conversation sees no child under the global root */
	CHECK_INT(has_children_of(z, "group:2", NULL, gl), 0);
	zcor_close(z);
}

static void Q_SCOPE_group_record_invisible_to_other_conversations(void)
{
	zcor *z = t_open();
	char g[32], gl[32];
	mk(z, "group:1", "群一秘密", "x", NULL, g);
	mk(z, NULL, "公共知识", "x", NULL, gl);
	const char *others[] = {"group:2", "private:9"};
	for (int i = 0; i < 2; i++) {
		const char *conv = others[i];
		int rc;
		json_t *r = rd(z, conv, g, &rc);
		CHECK_INT(rc, ZCOR_ENOTFOUND);
		CHECK_STR(t_errcode(r), "not_found");
		json_decref(r);
		r = query(z, conv, &rc, "{}");
		CHECK_INT(rc, ZCOR_OK);
		CHECK(!has_id(r, "items", g));
		CHECK(has_id(r, "items", gl)); /* global is visible everywhere */
		CHECK_INT(t_int(r, "total"), 1);
		json_decref(r);
		r = query(z, conv, &rc, "{\"keywords\":[\"秘密\"]}");
		CHECK_INT(t_int(r, "total"), 0);
		json_decref(r);
		r = t_call_rc(z, conv, &rc, "zcor_memory_children", "{}");
		CHECK(!has_id(r, "items", g));
		CHECK(has_id(r, "items", gl));
		json_decref(r);
		r = t_call_rc(z, conv, &rc, "zcor_memory_children", "{\"parentId\":\"%s\"}", g);
		CHECK_INT(rc, ZCOR_ENOTFOUND);
		json_decref(r);
		r = t_call_rc(z, conv, &rc, "zcor_memory_trace", "{\"id\":\"%s\"}", g);
		CHECK_INT(rc, ZCOR_ENOTFOUND);
		json_decref(r);
		r = t_call_rc(z, conv, &rc, "zcor_memory_write",
			      "{\"id\":\"%s\",\"title\":\"改\",\"content\":\"改\"}", g);
		CHECK(rc != ZCOR_OK);
		json_decref(r);
	}
	/* its own conversation and the host plane see it */
	int rc;
	json_t *r = rd(z, "group:1", g, &rc);
	CHECK_INT(rc, ZCOR_OK);
	json_decref(r);
	r = rd(z, NULL, g, &rc);
	CHECK_INT(rc, ZCOR_OK);
	CHECK_STR(t_str(r, "node.title"), "群一秘密");
	json_decref(r);
	r = query(z, NULL, &rc, "{}");
	CHECK_INT(t_int(r, "total"), 2);
	json_decref(r);
	r = t_call_rc(z, NULL, &rc, "zcor_memory_children", "{}");
	CHECK(has_id(r, "items", g));
	json_decref(r);
	zcor_close(z);
}

static void Q_SCOPE_private_cannot_update_global_but_creates_own(void)
{
	zcor *z = t_open();
	char gl[32];
	mk(z, NULL, "全局记忆", "原文", NULL, gl);
	int rc;
	json_t *r = t_call_rc(z, "private:9", &rc, "zcor_memory_write",
			      "{\"id\":\"%s\",\"title\":\"改掉\",\"content\":\"改掉\"}", gl);
	CHECK_INT(rc, ZCOR_EFORBIDDEN);
	CHECK_STR(t_errcode(r), "forbidden");
	json_decref(r);
	r = rd(z, NULL, gl, &rc);
	CHECK_STR(t_str(r, "node.title"), "全局记忆");
	CHECK_STR(t_str(r, "node.content"), "原文");
	json_decref(r);
	r = t_call_rc(z, "private:9", &rc, "zcor_memory_write", "{\"title\":\"私聊所得\",\"content\":\"x\"}");
	CHECK_INT(rc, ZCOR_OK);
	CHECK_STR(t_str(r, "node.scope"), "private:9");
	char own[32];
	snprintf(own, sizeof(own), "%s", t_str(r, "node.id") ? t_str(r, "node.id") : "");
	json_decref(r);
	/* and can change its own */
	r = t_call_rc(z, "private:9", &rc, "zcor_memory_write",
		      "{\"id\":\"%s\",\"title\":\"私聊所得2\",\"content\":\"y\"}", own);
	CHECK_INT(rc, ZCOR_OK);
	json_decref(r);
	r = rd(z, "group:1", own, &rc);
	CHECK_INT(rc, ZCOR_ENOTFOUND);
	json_decref(r);
	CHECK_INT(nodes_count(z), 2);
	zcor_close(z);
}

/* Q-SCOPE for parents: a memory's parent is in its own scope or global;
 * never another conversation's, and a private conversation keeps to its
 * own (its memories under a shared one would keep the others from
 * deleting that one). A global child under a group's memory would show
 * everyone a parent they cannot open. The host plane is held to it too. */
static void Q_SCOPE_parent_in_own_scope_or_global(void)
{
	zcor *z = t_open();
	char gl[32], g1[32], g2[32], p9[32], x[32];
	mk(z, NULL, "全局", "x", NULL, gl);
	mk(z, "group:1", "群一", "x", NULL, g1);
	mk(z, "group:2", "群二", "x", NULL, g2);
	mk(z, "private:9", "私聊", "x", NULL, p9);
	long long n0 = nodes_count(z), h0 = history_count(z);
	struct {
		const char *conv, *args_fmt, *a, *b, *words;
	} refused[] = {
		/* a new private memory under a global one, or an existing one moved there */
		{"private:9", "{\"title\":\"t\",\"content\":\"c\",\"parentId\":\"%s\"}", gl, NULL, "keeps its memories apart"},
		{"private:9", "{\"id\":\"%s\",\"title\":\"t\",\"content\":\"c\",\"parentId\":\"%s\"}", p9, gl, "keeps its memories apart"},
		/* a global memory moved under a group's */
		{"group:1", "{\"id\":\"%s\",\"title\":\"t\",\"content\":\"c\",\"parentId\":\"%s\"}", gl, g1, "same scope"},
		/* the operator is held to it too */
		{NULL, "{\"id\":\"%s\",\"title\":\"t\",\"content\":\"c\",\"parentId\":\"%s\"}", p9, gl, "same scope"},
		{NULL, "{\"id\":\"%s\",\"title\":\"t\",\"content\":\"c\",\"parentId\":\"%s\"}", gl, g1, "same scope"},
		{NULL, "{\"id\":\"%s\",\"title\":\"t\",\"content\":\"c\",\"parentId\":\"%s\"}", g2, g1, "same scope"},
	};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		char args[256];
		snprintf(args, sizeof(args), refused[i].args_fmt, refused[i].a, refused[i].b);
		int rc;
		json_t *r = t_call_raw(z, refused[i].conv, &rc, "zcor_memory_write", args);
		CHECK_INT(rc, ZCOR_ECONFLICT);
		CHECK_HAS(t_errmsg(r), "argument 'parentId'");
		CHECK_HAS(t_errmsg(r), refused[i].words);
		json_decref(r);
	}
	CHECK_INT(nodes_count(z), n0);
	CHECK_INT(t_sql_int(zcor_dir(z), "SELECT count(*) FROM nodes WHERE parent_id IS NOT NULL"), 0);
	CHECK_INT(history_count(z) - h0, 6); /* each refusal recorded, nothing else */
	/* within one scope the tree is as before */
	mk(z, "private:9", "私聊子", "x", p9, x);
	CHECK(x[0]);
	mk(z, "group:1", "群一子", "x", g1, x);
	CHECK(x[0]);
	/* a group's memory under a shared one (seed 000's tree in a group) */
	char gx[32];
	mk(z, "group:1", "群一眼中的全局", "x", gl, gx);
	CHECK(gx[0]);
	mk(z, NULL, "全局子", "x", gl, x);
	int rc;
	json_t *r = t_call_rc(z, "group:1", &rc, "zcor_memory_write",
			      "{\"id\":\"%s\",\"title\":\"t\",\"content\":\"c\",\"parentId\":null}", x);
	CHECK_INT(rc, ZCOR_OK); /* a group may still move a global memory within global */
	json_decref(r);
	r = t_call_rc(z, "group:1", &rc, "zcor_memory_write",
		      "{\"id\":\"%s\",\"title\":\"t\",\"content\":\"c\",\"parentId\":\"%s\"}", x, gl);
	CHECK_INT(rc, ZCOR_OK);
	json_decref(r);
	/* group:2 does not see group:1's child: it is not listed, and the
	 * refused delete does not name it */
	r = t_call(z, "group:2", "zcor_memory_children", "{\"parentId\":\"%s\"}", gl);
	char *dump = json_dumps(r, JSON_COMPACT);
	CHECK(dump && !strstr(dump, gx));
	free(dump);
	json_decref(r);
	r = t_call_rc(z, "group:2", &rc, "zcor_memory_delete", "{\"id\":\"%s\"}", gl);
	CHECK_INT(rc, ZCOR_ECONFLICT);
	CHECK(t_errmsg(r) && !strstr(t_errmsg(r), gx));
	json_decref(r);
	zcor_close(z);
}

/* A refusal never names a record the caller may not see, even where older
 * data (a restored backup) holds a link across scopes. */
static void Q_SCOPE_delete_refusal_names_no_hidden_record(void)
{
	zcor *z = t_open();
	char gl[32], gl2[32], p9[32], p9b[32];
	mk(z, NULL, "全局父", "x", NULL, gl);
	mk(z, NULL, "全局替代", "x", NULL, gl2);
	mk(z, "private:9", "私聊子", "x", NULL, p9);
	mk(z, "private:9", "私聊旧", "x", NULL, p9b);
	t_sql_exec(z, "UPDATE nodes SET parent_id = '%s' WHERE id = '%s'", gl, p9);
	t_sql_exec(z, "UPDATE nodes SET superseded_by = '%s' WHERE id = '%s'", gl2, p9b);
	const char *targets[] = {gl, gl2}, *hidden[] = {p9, p9b};
	for (int i = 0; i < 2; i++) {
		int rc;
		json_t *r = t_call_rc(z, "group:1", &rc, "zcor_memory_delete", "{\"id\":\"%s\"}", targets[i]);
		CHECK_INT(rc, ZCOR_ECONFLICT);
		CHECK(t_errmsg(r) && !strstr(t_errmsg(r), hidden[i]));
		CHECK_HAS(t_errmsg(r), "cannot see");
		json_decref(r);
		/* nor does the history record of the refusal */
		char sql[256];
		snprintf(sql, sizeof(sql),
			 "SELECT count(*) FROM history WHERE conversation = 'group:1' AND "
			 "instr(coalesce(error, '') || coalesce(before, ''), '%s') > 0",
			 hidden[i]);
		CHECK_INT(t_sql_int(zcor_dir(z), sql), 0);
		/* the operator sees which record holds it */
		r = t_call_rc(z, NULL, &rc, "zcor_memory_delete", "{\"id\":\"%s\"}", targets[i]);
		CHECK_INT(rc, ZCOR_ECONFLICT);
		CHECK_HAS(t_errmsg(r), hidden[i]);
		json_decref(r);
	}
	CHECK_INT(nodes_count(z), 4);
	zcor_close(z);
}

/* Supersede and merge link records too: a conversation cannot hide a
 * global memory behind one of its own, nor tie its own to a global one. */
static void Q_SCOPE_supersede_and_merge_within_one_scope(void)
{
	zcor *z = t_open();
	char gl[32], g1[32], g1b[32];
	mk(z, NULL, "全局", "x", NULL, gl);
	mk(z, "group:1", "群一", "x", NULL, g1);
	mk(z, "group:1", "群一乙", "x", NULL, g1b);
	long long n0 = nodes_count(z);
	int rc;
	json_t *r = t_call_rc(z, "group:1", &rc, "zcor_memory_supersede",
			      "{\"ids\":[\"%s\"],\"replacementId\":\"%s\",\"reason\":\"r\"}", gl, g1);
	CHECK_INT(rc, ZCOR_ECONFLICT);
	CHECK_HAS(t_errmsg(r), "own scope");
	json_decref(r);
	r = t_call_rc(z, "group:1", &rc, "zcor_memory_supersede",
		      "{\"ids\":[\"%s\"],\"replacementId\":\"%s\",\"reason\":\"r\"}", g1, gl);
	CHECK_INT(rc, ZCOR_ECONFLICT);
	json_decref(r);
	r = t_call_rc(z, "group:1", &rc, "zcor_memory_merge",
		      "{\"ids\":[\"%s\",\"%s\"],\"title\":\"合\",\"content\":\"合\",\"reason\":\"r\"}", gl, g1);
	CHECK_INT(rc, ZCOR_ECONFLICT);
	CHECK_STR(t_errcode(r), "conflict");
	json_decref(r);
	r = t_call_rc(z, NULL, &rc, "zcor_memory_merge",
		      "{\"ids\":[\"%s\",\"%s\"],\"title\":\"合\",\"content\":\"合\",\"reason\":\"r\"}", g1, gl);
	CHECK_INT(rc, ZCOR_ECONFLICT);
	json_decref(r);
	CHECK_INT(nodes_count(z), n0);
	CHECK_INT(t_sql_int(zcor_dir(z), "SELECT count(*) FROM nodes WHERE superseded_by IS NOT NULL"), 0);
	/* within one scope */
	r = t_call_rc(z, "group:1", &rc, "zcor_memory_merge",
		      "{\"ids\":[\"%s\",\"%s\"],\"title\":\"合\",\"content\":\"合\",\"reason\":\"r\"}", g1, g1b);
	CHECK_INT(rc, ZCOR_OK);
	CHECK_STR(t_str(r, "node.scope"), "group:1");
	json_decref(r);
	zcor_close(z);
}

/* Seed 000's person node in a conversation: a person (global) may link a
 * memory the caller can see — a global one or the caller's own — and a
 * 近况 child hangs under it; another conversation is not shown a link to
 * a memory it cannot see. */
static void Q_SCOPE_person_node_flow_in_conversations(void)
{
	zcor *z = t_open();
	const char *fmt = "{\"personId\":\"%s\",\"name\":\"kaguya\",\"relationship\":\"群主\","
			  "\"affinity\":1,\"reason\":\"r\",\"memoryNodeId\":\"%s\"}";
	const char *convs[] = {"console:me", "group:1"};
	char node[2][32];
	for (int i = 0; i < 2; i++) {
		char pid[16], child[32];
		snprintf(pid, sizeof(pid), "10000000%d", i);
		mk(z, convs[i], "kaguya", "群主", NULL, node[i]);
		int rc;
		json_t *r = t_call_rc(z, convs[i], &rc, "zcor_relationship_write", fmt, pid, node[i]);
		CHECK_INT(rc, ZCOR_OK);
		CHECK_STR(t_str(r, "person.memoryNodeId"), node[i]);
		json_decref(r);
		mk(z, convs[i], "kaguya 的近况", "最近在考研", node[i], child);
		CHECK(child[0]);
		/* the same conversation reads its link */
		r = t_call(z, convs[i], "zcor_relationship_read", "{\"personId\":\"%s\"}", pid);
		CHECK_STR(t_str(r, "person.memoryNodeId"), node[i]);
		json_decref(r);
	}
	/* group:2 sees the people, not the links */
	json_t *r = t_call(z, "group:2", "zcor_relationship_read", "{\"personId\":\"100000001\"}");
	CHECK_STR(t_str(r, "person.name"), "kaguya");
	CHECK(json_is_null(t_get(r, "person.memoryNodeId")));
	json_decref(r);
	r = t_call(z, "group:2", "zcor_relationship_query", "{}");
	char *dump = json_dumps(r, JSON_COMPACT);
	CHECK(dump && !strstr(dump, node[0]) && !strstr(dump, node[1]));
	free(dump);
	json_decref(r);
	/* a memory of another conversation cannot be linked: it is not found */
	int rc;
	r = t_call_rc(z, "group:2", &rc, "zcor_relationship_write", fmt, "100000009", node[1]);
	CHECK_INT(rc, ZCOR_ENOTFOUND);
	CHECK_HAS(t_errmsg(r), "argument 'memoryNodeId'");
	json_decref(r);
	/* the operator sees every link */
	r = t_call(z, NULL, "zcor_relationship_read", "{\"personId\":\"100000001\"}");
	CHECK_STR(t_str(r, "person.memoryNodeId"), node[1]);
	json_decref(r);
	zcor_close(z);
}

/* ---- history ------------------------------------------------------------------ */

/* Runs one call and checks it added exactly one history row with status. */
#define ONE_ROW(status, call)                                                                     \
	do {                                                                                      \
		long long h0_ = history_count(z);                                                 \
		json_t *r_ = (call);                                                              \
		json_decref(r_);                                                                  \
		CHECK_INT(history_count(z) - h0_, 1);                                             \
		CHECK_INT(t_sql_int(zcor_dir(z), "SELECT status = '" status "' FROM history "     \
						 "ORDER BY seq DESC LIMIT 1"),                    \
			  1);                                                                     \
	} while (0)

static void Z_HIST_every_call_adds_one_history_row(void)
{
	zcor *z = t_open();
	CHECK_INT(history_count(z), 0);
	char a[32], b[32], c[32];
	ONE_ROW("ok", t_call(z, NULL, "zcor_memory_write", "{\"title\":\"A\",\"content\":\"x\"}"));
	ONE_ROW("ok", t_call(z, NULL, "zcor_memory_write", "{\"title\":\"B\",\"content\":\"x\"}"));
	json_t *r = t_call(z, NULL, "zcor_memory_children", "{}");
	snprintf(a, sizeof(a), "%s", t_str(r, "items.0.id") ? t_str(r, "items.0.id") : "");
	snprintf(b, sizeof(b), "%s", t_str(r, "items.1.id") ? t_str(r, "items.1.id") : "");
	json_decref(r);
	mk(z, NULL, "C", "x", a, c);

	ONE_ROW("ok", t_call(z, NULL, "zcor_memory_write", "{\"id\":\"%s\",\"title\":\"A2\",\"content\":\"y\"}", a));
	ONE_ROW("error", t_call(z, NULL, "zcor_memory_write", "{\"id\":\"m-none\",\"title\":\"t\",\"content\":\"c\"}"));
	ONE_ROW("error", t_call(z, NULL, "zcor_memory_write", "{\"title\":\"t\",\"content\":\"c\",\"parentId\":\"m-none\"}"));
	ONE_ROW("error", t_call(z, NULL, "zcor_memory_write", "{\"id\":\"%s\",\"title\":\"t\",\"content\":\"c\",\"parentId\":\"%s\"}", a, c));
	ONE_ROW("ok", t_call(z, NULL, "zcor_memory_read", "{\"id\":\"%s\"}", a));
	ONE_ROW("error", t_call(z, NULL, "zcor_memory_read", "{\"id\":\"m-none\"}"));
	ONE_ROW("ok", t_call(z, NULL, "zcor_memory_children", "{\"parentId\":\"%s\"}", a));
	ONE_ROW("ok", t_call(z, NULL, "zcor_memory_trace", "{\"id\":\"%s\"}", c));
	ONE_ROW("ok", t_call(z, NULL, "zcor_memory_query", "{\"keywords\":[\"a\"]}"));
	ONE_ROW("error", t_call(z, NULL, "zcor_memory_query", "{\"from\":\"2026-01-01T00:00:00\"}"));
	ONE_ROW("error", t_call(z, NULL, "zcor_memory_query", "{\"limit\":0}"));
	ONE_ROW("ok", t_call(z, NULL, "zcor_memory_important", "{\"id\":\"%s\",\"important\":true}", b));
	ONE_ROW("error", t_call(z, NULL, "zcor_memory_delete", "{\"id\":\"%s\"}", a)); /* has a child */
	ONE_ROW("error", t_call(z, NULL, "zcor_memory_merge", "{\"ids\":[\"%s\",\"m-none\"],\"title\":\"t\",\"content\":\"c\",\"reason\":\"r\"}", b));
	ONE_ROW("error", t_call(z, NULL, "zcor_memory_supersede", "{\"ids\":[\"%s\"],\"replacementId\":\"m-none\",\"reason\":\"r\"}", b));
	ONE_ROW("ok", t_call(z, NULL, "zcor_memory_supersede", "{\"ids\":[\"%s\"],\"replacementId\":\"%s\",\"reason\":\"r\"}", c, b));
	ONE_ROW("error", t_call(z, NULL, "zcor_memory_write", "{\"title\":5,\"content\":\"c\"}"));
	ONE_ROW("error", t_call(z, NULL, "zcor_memory_write", "{\"title\":\"t\",\"content\":\"c\",\"bogus\":1}"));
	ONE_ROW("error", t_call(z, NULL, "zcor_memory_write", "{\"title\":\"t\"}"));
	ONE_ROW("error", t_call_raw(z, NULL, NULL, "zcor_memory_write", "{not json"));
	ONE_ROW("error", t_call(z, "group:2", "zcor_memory_read", "{\"id\":\"m-none\"}"));
	ONE_ROW("error", t_call(z, "private:9", "zcor_memory_write", "{\"id\":\"%s\",\"title\":\"t\",\"content\":\"c\"}", a));
	ONE_ROW("ok", t_call(z, NULL, "zcor_memory_important", "{\"id\":\"%s\",\"important\":false}", b));
	ONE_ROW("ok", t_call(z, NULL, "zcor_memory_delete", "{\"id\":\"%s\"}", c));
	zcor_close(z);
}

/* A CJK keyword narrows through the full-text index; the rule is still
 * "a substring of title or content", not of keywords, and runs across
 * word boundaries count. */
static void Z_QUERY_cjk_keywords_use_the_index_with_the_same_rule(void)
{
	zcor *z = t_open();
	json_decref(t_call(z, NULL, "zcor_memory_write",
			   "{\"title\":\"周末安排\",\"content\":\"我们周五开黑吧\"}"));
	json_decref(t_call(z, NULL, "zcor_memory_write",
			   "{\"title\":\"x\",\"content\":\"y\",\"keywords\":[\"五开\"]}"));
	json_t *r = t_call(z, NULL, "zcor_memory_query", "{\"keywords\":[\"五开\"]}");
	CHECK_INT(t_int(r, "total"), 1);
	CHECK_STR(t_str(r, "items.0.title"), "周末安排");
	json_decref(r);
	r = t_call(z, NULL, "zcor_memory_query", "{\"keywords\":[\"周五开黑吧\", \"末安\"]}");
	CHECK_INT(t_int(r, "total"), 1);
	json_decref(r);
	r = t_call(z, NULL, "zcor_memory_query", "{\"keywords\":[\"开黑\", \"zz\"]}");
	CHECK_INT(t_int(r, "total"), 0);
	json_decref(r);
	r = t_call(z, NULL, "zcor_memory_query", "{\"keywords\":[\"开\"]}"); /* one character: no index */
	CHECK_INT(t_int(r, "total"), 1);
	json_decref(r);
	zcor_close(z);
}

const struct t_case t_cases[] = {
	{"issue18_find_scope_lists_a_conversations_own_memories", issue18_find_scope_lists_a_conversations_own_memories},
	{"Z_QUERY_cjk_keywords_use_the_index_with_the_same_rule",
	 Z_QUERY_cjk_keywords_use_the_index_with_the_same_rule},
	{"Z_WRITE_create_without_id_is_root", Z_WRITE_create_without_id_is_root},
	{"Z_WRITE_update_existing_id", Z_WRITE_update_existing_id},
	{"Z_WRITE_update_unknown_id_is_not_found", Z_WRITE_update_unknown_id_is_not_found},
	{"Z_WRITE_update_without_parent_keeps_parent", Z_WRITE_update_without_parent_keeps_parent},
	{"Z_WRITE_parent_null_moves_to_root", Z_WRITE_parent_null_moves_to_root},
	{"Z_WRITE_keywords_kept_when_omitted_on_update", Z_WRITE_keywords_kept_when_omitted_on_update},
	{"Z_WRITE_source_message_20000_characters_accepted", Z_WRITE_source_message_20000_characters_accepted},
	{"Z_WRITE_source_message_20001_characters_rejected", Z_WRITE_source_message_20001_characters_rejected},
	{"Z_WRITE_source_message_null_clears_it", Z_WRITE_source_message_null_clears_it},
	{"Z_WRITE_missing_parent_rejected_nothing_changed", Z_WRITE_missing_parent_rejected_nothing_changed},
	{"Z_WRITE_parent_cycle_rejected_nothing_changed", Z_WRITE_parent_cycle_rejected_nothing_changed},
	{"Z_ID_generated_ids_sort_in_creation_order", Z_ID_generated_ids_sort_in_creation_order},
	{"Z_READ_by_id", Z_READ_by_id},
	{"Z_DELETE_refused_while_node_has_children", Z_DELETE_refused_while_node_has_children},
	{"Z_DELETE_refused_while_person_links_node", Z_DELETE_refused_while_person_links_node},
	{"Z_DELETE_refused_while_supersede_target", Z_DELETE_refused_while_supersede_target},
	{"issue18_minor_supersede_self_details", issue18_minor_supersede_self_details},
	{"Z_DELETE_refusal_detail_names_the_first_few", Z_DELETE_refusal_detail_names_the_first_few},
	{"Z_DELETE_removes_important_mark", Z_DELETE_removes_important_mark},
	{"Z_DELETE_then_read_is_not_found_and_history_keeps_content",
	 Z_DELETE_then_read_is_not_found_and_history_keeps_content},
	{"Z_CHILDREN_roots_and_children_in_creation_order", Z_CHILDREN_roots_and_children_in_creation_order},
	{"Z_TRACE_path_from_root_and_direct_children", Z_TRACE_path_from_root_and_direct_children},
	{"Z_IMPORTANT_ordered_by_first_marking", Z_IMPORTANT_ordered_by_first_marking},
	{"Z_IMPORTANT_remarking_keeps_order", Z_IMPORTANT_remarking_keeps_order},
	{"Z_IMPORTANT_sixth_unmarks_earliest_with_receipt", Z_IMPORTANT_sixth_unmarks_earliest_with_receipt},
	{"Z_IMPORTANT_update_shows_latest_content", Z_IMPORTANT_update_shows_latest_content},
	{"Z_QUERY_every_keyword_must_match_title_or_content", Z_QUERY_every_keyword_must_match_title_or_content},
	{"Z_QUERY_keywords_nfkc_and_case_folded", Z_QUERY_keywords_nfkc_and_case_folded},
	{"Z_QUERY_no_synonym_expansion", Z_QUERY_no_synonym_expansion},
	{"Z_QUERY_from_to_inclusive_on_updatedAt", Z_QUERY_from_to_inclusive_on_updatedAt},
	{"Z_QUERY_time_without_zone_is_invalid_argument", Z_QUERY_time_without_zone_is_invalid_argument},
	{"Z_QUERY_newest_first_same_instant_later_record_first",
	 Z_QUERY_newest_first_same_instant_later_record_first},
	{"Z_QUERY_paging_items_total_next_offset", Z_QUERY_paging_items_total_next_offset},
	{"Z_QUERY_limit_outside_1_to_100_rejected", Z_QUERY_limit_outside_1_to_100_rejected},
	{"Z_MERGE_new_record_sources_superseded_and_kept", Z_MERGE_new_record_sources_superseded_and_kept},
	{"Z_MERGE_important_marks_move_to_new_record", Z_MERGE_important_marks_move_to_new_record},
	{"Z_MERGE_unknown_id_changes_nothing", Z_MERGE_unknown_id_changes_nothing},
	{"Z_SUPERSEDE_sources_point_to_replacement", Z_SUPERSEDE_sources_point_to_replacement},
	{"Z_SUPERSEDE_excluded_from_query_unless_includeSuperseded",
	 Z_SUPERSEDE_excluded_from_query_unless_includeSuperseded},
	{"Z_SUPERSEDE_replacement_cannot_be_one_of_ids", Z_SUPERSEDE_replacement_cannot_be_one_of_ids},
	{"Z_SUPERSEDE_unknown_replacement_rejected", Z_SUPERSEDE_unknown_replacement_rejected},
	{"X_SCHEMA_wrong_type_names_field", X_SCHEMA_wrong_type_names_field},
	{"X_SCHEMA_unknown_field_names_field", X_SCHEMA_unknown_field_names_field},
	{"X_SCHEMA_missing_field_names_field", X_SCHEMA_missing_field_names_field},
	{"X_SCHEMA_invalid_json_is_invalid_argument", X_SCHEMA_invalid_json_is_invalid_argument},
	{"Q_SCOPE_write_in_group_gets_group_scope", Q_SCOPE_write_in_group_gets_group_scope},
	{"Q_SCOPE_group_record_invisible_to_other_conversations",
	 Q_SCOPE_group_record_invisible_to_other_conversations},
	{"issue18_children_listing_tells_has_children_in_scope",
	 issue18_children_listing_tells_has_children_in_scope},
	{"Q_SCOPE_private_cannot_update_global_but_creates_own",
	 Q_SCOPE_private_cannot_update_global_but_creates_own},
	{"Q_SCOPE_parent_in_own_scope_or_global", Q_SCOPE_parent_in_own_scope_or_global},
	{"Q_SCOPE_delete_refusal_names_no_hidden_record", Q_SCOPE_delete_refusal_names_no_hidden_record},
	{"Q_SCOPE_supersede_and_merge_within_one_scope", Q_SCOPE_supersede_and_merge_within_one_scope},
	{"Q_SCOPE_person_node_flow_in_conversations", Q_SCOPE_person_node_flow_in_conversations},
	{"Z_HIST_every_call_adds_one_history_row", Z_HIST_every_call_adds_one_history_row},
	{0},
};
