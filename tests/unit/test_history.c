/*
 * test_history.c — Z-HIST as stored since schema 10 (issue 19): snapshots
 * kept compactly but given back in full to every reader, and the records
 * of reads committed in groups. Through the public API; a second
 * connection looks at what memory.db holds.
 *
 * Each case is named after the rule it pins and fails if that rule breaks.
 */
#define _GNU_SOURCE
#include "harness.h"

#include <errno.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- helpers --------------------------------------------------------- */

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* The compact text of v, for comparing snapshots key by key, in order,
 * nulls included (caller frees). */
static char *text(const json_t *v) { return v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : strdup("(none)"); }

#define CHECK_SAME_JSON(a, b)                                                                 \
	do {                                                                                  \
		char *ta_ = text(a), *tb_ = text(b);                                          \
		if (strcmp(ta_, tb_) != 0) {                                                  \
			fprintf(stderr, "%s:%d: CHECK_SAME_JSON failed:\n  %s = %s\n  %s = %s\n", \
				__FILE__, __LINE__, #a, ta_, #b, tb_);                        \
			t_failures++;                                                         \
		}                                                                             \
		free(ta_);                                                                    \
		free(tb_);                                                                    \
	} while (0)

static json_t *read_node(zcor *z, const char *id)
{
	json_t *r = t_call_ok(z, NULL, "zcor_memory_read", "{\"id\":\"%s\"}", id);
	json_t *n = json_incref(t_get(r, "node"));
	json_decref(r);
	return n;
}

/* The newest history record of operation op (new reference), or NULL. */
static json_t *newest(zcor *z, const char *op)
{
	json_t *h = t_call_ok(z, NULL, "zcor_memory_history", "{\"limit\":100}");
	json_t *found = NULL, *it;
	size_t i;
	json_array_foreach(t_get(h, "items"), i, it) {
		if (strcmp(t_str(it, "operation"), op) == 0) {
			found = json_incref(it);
			break;
		}
	}
	json_decref(h);
	CHECK(found != NULL);
	return found;
}

static long long sql_int(zcor *z, const char *fmt, const char *arg)
{
	char q[512];
	snprintf(q, sizeof(q), fmt, arg);
	zcor_flush(z); /* read records are written a few milliseconds later */
	return t_sql_int(zcor_dir(z), q);
}

static char *id_of(json_t *r, char out[32])
{
	snprintf(out, 32, "%s", t_str(r, "node.id") ? t_str(r, "node.id") : "");
	json_decref(r);
	return out;
}

/* ---- compact snapshots ------------------------------------------------ */

/* A create's record stores its after-image in a few dozen bytes (the
 * title, content and keywords are the arguments', the times the record's,
 * the rest defaults) and reads back as the full node, nulls included. */
static void Z_HIST_create_record_compact_renders_full_snapshot(void)
{
	zcor *z = t_open();
	char id[32];
	id_of(t_call_ok(z, NULL, "zcor_memory_write",
			"{\"title\":\"周五开黑\",\"content\":\"群主说，周五晚上九点固定开黑，缺人会在群里喊。\","
			"\"keywords\":[\"开黑\",\"周五\"]}"),
	      id);
	json_t *node = read_node(z, id);
	json_t *rec = newest(z, "zcor_memory_write");
	CHECK(json_is_null(t_get(rec, "before")));
	CHECK_INT(json_array_size(t_get(rec, "after")), 1);
	CHECK_SAME_JSON(t_get(rec, "after.0"), node);
	char *full = text(node);
	long long stored = sql_int(z, "SELECT length(after) FROM history WHERE operation = '%s'",
				   "zcor_memory_write");
	CHECK(stored > 0 && stored <= 96);
	CHECK(stored * 6 < (long long)strlen(full));
	/* nothing of the record is stored twice */
	CHECK_INT(sql_int(z, "SELECT sum(length(search_norm)) FROM history WHERE operation = '%s'",
			  "zcor_memory_write"),
		  0);
	free(full);
	json_decref(rec);
	json_decref(node);
	zcor_close(z);
}

/* An update's before-image is stored as what differs from its
 * after-image, and both read back as the node was and is. */
static void Z_HIST_update_delta_renders_before_and_after(void)
{
	zcor *z = t_open();
	char id[32];
	id_of(t_call_ok(z, NULL, "zcor_memory_write",
			"{\"title\":\"周五开黑\",\"content\":\"周五晚上九点固定开黑。\",\"keywords\":[\"开黑\"],"
			"\"sourceMessage\":\"群主：周五九点开黑\"}"),
	      id);
	json_t *n0 = read_node(z, id);
	json_decref(t_call_ok(z, NULL, "zcor_memory_write",
			      "{\"id\":\"%s\",\"title\":\"周五开黑\",\"content\":\"改成周六晚上八点了。\"}", id));
	json_t *n1 = read_node(z, id);
	json_t *rec = newest(z, "zcor_memory_write");
	CHECK_STR(t_str(rec, "arguments.id"), id);
	CHECK_SAME_JSON(t_get(rec, "before.0"), n0);
	CHECK_SAME_JSON(t_get(rec, "after.0"), n1);
	char q[256];
	snprintf(q, sizeof(q), "SELECT before FROM history WHERE operation = 'zcor_memory_write' "
			       "ORDER BY seq DESC LIMIT 1");
	zcor_flush(z);
	char *before = t_sql_str(zcor_dir(z), q);
	char *full = text(n0);
	CHECK_HAS(before, "\"~d\"");
	CHECK(strlen(before) * 3 < strlen(full));
	free(before);
	free(full);
	json_decref(rec);
	json_decref(n0);
	json_decref(n1);
	zcor_close(z);
}

/* Merge, the important mark's receipt and people: every snapshot of
 * every record reads back as the records were read at the time. */
static void Z_HIST_merge_receipt_and_people_render_as_read(void)
{
	zcor *z = t_open();
	char a[32], b[32];
	id_of(t_call_ok(z, NULL, "zcor_memory_write", "{\"title\":\"小明喜欢火锅\",\"content\":\"重庆老火锅\"}"), a);
	id_of(t_call_ok(z, NULL, "zcor_memory_write", "{\"title\":\"小明爱吃辣\",\"content\":\"越辣越好\"}"), b);
	json_decref(t_call_ok(z, NULL, "zcor_memory_important", "{\"id\":\"%s\",\"important\":true}", a));
	json_t *a0 = read_node(z, a), *b0 = read_node(z, b);
	json_t *m = t_call_ok(z, NULL, "zcor_memory_merge",
			      "{\"ids\":[\"%s\",\"%s\"],\"title\":\"小明的口味\",\"content\":\"爱吃辣，最爱重庆老火锅\","
			      "\"keywords\":[\"小明\"],\"reason\":\"同一件事\"}",
			      a, b);
	char mid[32];
	snprintf(mid, sizeof(mid), "%s", t_str(m, "node.id"));
	json_decref(m);
	json_t *a1 = read_node(z, a), *b1 = read_node(z, b), *m1 = read_node(z, mid);
	json_t *rec = newest(z, "zcor_memory_merge");
	CHECK_SAME_JSON(t_get(rec, "before.0"), a0);
	CHECK_SAME_JSON(t_get(rec, "before.1"), b0);
	CHECK_SAME_JSON(t_get(rec, "after.0"), a1);
	CHECK_SAME_JSON(t_get(rec, "after.1"), b1);
	CHECK_SAME_JSON(t_get(rec, "after.2"), m1);
	json_decref(rec);

	/* the merged record holds a's mark, the first; four more, then a
	 * 6th unmarks it: before/after of both, and the receipt */
	char ids[5][32];
	for (int i = 0; i < 5; i++) {
		char args[128];
		snprintf(args, sizeof(args), "{\"title\":\"事项%d\",\"content\":\"内容%d\"}", i, i);
		int rc = 0;
		id_of(t_call_raw(z, NULL, &rc, "zcor_memory_write", args), ids[i]);
		if (i < 4)
			json_decref(t_call_ok(z, NULL, "zcor_memory_important",
					      "{\"id\":\"%s\",\"important\":true}", ids[i]));
	}
	json_t *first = read_node(z, mid);
	json_t *sixth = read_node(z, ids[4]);
	CHECK(json_is_true(json_object_get(first, "important")));
	json_decref(t_call_ok(z, NULL, "zcor_memory_important", "{\"id\":\"%s\",\"important\":true}", ids[4]));
	rec = newest(z, "zcor_memory_important");
	CHECK_STR(t_str(rec, "receipt.replacedId"), mid);
	CHECK_SAME_JSON(t_get(rec, "before.0"), first);
	json_t *first1 = read_node(z, mid), *sixth1 = read_node(z, ids[4]);
	CHECK_SAME_JSON(t_get(rec, "after.0"), first1);
	CHECK_SAME_JSON(t_get(rec, "before.1"), sixth);
	CHECK_SAME_JSON(t_get(rec, "after.1"), sixth1);
	json_decref(rec);

	/* people: a create, then an update */
	json_decref(t_call_ok(z, NULL, "zcor_relationship_write",
			      "{\"personId\":\"10001\",\"name\":\"小明\",\"relationship\":\"群友\",\"affinity\":10,"
			      "\"reason\":\"常聊天\",\"aliases\":[\"明明\"]}"));
	json_t *p0 = t_call_ok(z, NULL, "zcor_relationship_read", "{\"personId\":\"10001\"}");
	json_decref(t_call_ok(z, NULL, "zcor_relationship_write",
			      "{\"personId\":\"10001\",\"name\":\"小明\",\"relationship\":\"好朋友\",\"affinity\":40,"
			      "\"reason\":\"一起开黑\",\"memoryNodeId\":\"%s\"}",
			      mid));
	json_t *p1 = t_call_ok(z, NULL, "zcor_relationship_read", "{\"personId\":\"10001\"}");
	rec = newest(z, "zcor_relationship_write");
	json_t *pp0 = t_get(p0, "person") ? t_get(p0, "person") : p0;
	json_t *pp1 = t_get(p1, "person") ? t_get(p1, "person") : p1;
	CHECK_SAME_JSON(t_get(rec, "before.0"), pp0);
	CHECK_SAME_JSON(t_get(rec, "after.0"), pp1);
	json_decref(rec);
	json_decref(p0);
	json_decref(p1);
	json_decref(first);
	json_decref(first1);
	json_decref(sixth);
	json_decref(sixth1);
	json_decref(a0);
	json_decref(b0);
	json_decref(a1);
	json_decref(b1);
	json_decref(m1);
	zcor_close(z);
}

/* A record written before schema 10 (full snapshots, its text normalised
 * in search_norm) reads back exactly as stored and is found by it. */
static void Z_HIST_records_before_schema_9_read_back_as_stored(void)
{
	zcor *z = t_open();
	static const char snap[] =
		"[{\"id\":\"m0000zz\",\"title\":\"旧记录\",\"content\":\"旧的全文\",\"keywords\":[],"
		"\"parentId\":null,\"sourceMessage\":null,\"important\":false,\"supersededBy\":null,"
		"\"supersededReason\":null,\"mergedFrom\":null,\"mergedReason\":null,\"scope\":\"global\","
		"\"kind\":\"memory\",\"section\":null,\"pinned\":false,\"date\":null,\"expires\":null,"
		"\"confidence\":null,\"tier\":\"hot\",\"archiveMonth\":null,\"attrs\":{},"
		"\"createdAt\":\"2025-01-01T00:00:00.000Z\",\"updatedAt\":\"2025-01-01T00:00:00.000Z\","
		"\"hits\":0,\"lastHitAt\":null}]";
	t_sql_exec(z, "INSERT INTO history(at, operation, actor, arguments, status, after, search_norm) "
		      "VALUES(1735689600000, 'zcor_memory_write', 'model', '{\"title\":\"旧记录\"}', 'ok', '%s', "
		      "'zcor_memory_write model zzlegacy 旧记录')",
		      snap);
	json_t *h = t_call_ok(z, NULL, "zcor_memory_history", "{\"keywords\":[\"zzlegacy\"]}");
	CHECK_INT(t_int(h, "total"), 1);
	json_t *want = json_loads(snap, 0, NULL);
	CHECK_SAME_JSON(t_get(h, "items.0.after"), want);
	json_decref(want);
	json_decref(h);
	zcor_close(z);
}

/* Keywords still match the whole record: a value kept only as the
 * arguments' (a create's title), only in a delta (the title before a
 * rename), only in the compact after-image (a created node's id), and
 * after NFKC + case folding (full-width ＡＢＣ). */
static void Z_HIST_keywords_match_compact_records(void)
{
	zcor *z = t_open();
	char id[32];
	id_of(t_call_ok(z, NULL, "zcor_memory_write", "{\"title\":\"旧名字甲\",\"content\":\"内容ＡＢＣ，全角\"}"),
	      id);
	json_decref(t_call_ok(z, NULL, "zcor_memory_write",
			      "{\"id\":\"%s\",\"title\":\"新名字乙\",\"content\":\"内容ＡＢＣ，全角\"}", id));
	struct {
		const char *kw;
		int writes; /* zcor_memory_write records it must find */
	} cases[] = {{"旧名字甲", 2}, {"新名字乙", 1}, {"abc", 2}, {"没有这个词", 0}};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *h = t_call_ok(z, NULL, "zcor_memory_history", "{\"keywords\":[\"%s\"],\"limit\":100}",
				      cases[i].kw);
		int n = 0;
		size_t j;
		json_t *it;
		json_array_foreach(t_get(h, "items"), j, it) n += strcmp(t_str(it, "operation"), "zcor_memory_write") == 0;
		if (n != cases[i].writes)
			fprintf(stderr, "  keyword '%s'\n", cases[i].kw);
		CHECK_INT(n, cases[i].writes);
		json_decref(h);
	}
	/* the id of a created node: the create's own record (its after) */
	json_t *h = t_call_ok(z, NULL, "zcor_memory_history", "{\"keywords\":[\"%s\",\"旧名字甲\"],\"limit\":100}", id);
	int creates = 0;
	size_t j;
	json_t *it;
	json_array_foreach(t_get(h, "items"), j, it) creates += json_is_null(t_get(it, "before")) &&
								 strcmp(t_str(it, "operation"), "zcor_memory_write") == 0;
	CHECK_INT(creates, 1);
	json_decref(h);
	zcor_close(z);
}

/* ---- read records in groups ------------------------------------------- */

/* Read records wait in the handle's queue but keep the order of the
 * calls: a change commits the queue before its own record, a history
 * query on the handle sees every call before it, failed calls included. */
static void Z_HIST_read_records_keep_call_order(void)
{
	zcor *z = t_open();
	char a[32];
	id_of(t_call_ok(z, NULL, "zcor_memory_write", "{\"title\":\"甲\",\"content\":\"一\"}"), a);
	for (int i = 0; i < 3; i++)
		json_decref(t_call_ok(z, NULL, "zcor_memory_read", "{\"id\":\"%s\"}", a));
	int rc = 0;
	json_decref(t_call_rc(z, NULL, &rc, "zcor_memory_read", "{\"id\":\"m-no-such\"}"));
	CHECK_INT(rc, ZCOR_ENOTFOUND);
	json_t *h = t_call_ok(z, NULL, "zcor_memory_history", "{\"limit\":100}");
	CHECK_INT(t_int(h, "total"), 5);
	CHECK_STR(t_str(h, "items.0.status"), "error");
	CHECK_STR(t_str(h, "items.4.operation"), "zcor_memory_write");
	json_decref(h);
	json_decref(t_call_ok(z, NULL, "zcor_memory_read", "{\"id\":\"%s\"}", a));
	json_decref(t_call_ok(z, NULL, "zcor_memory_write", "{\"title\":\"乙\",\"content\":\"二\"}"));
	/* no flush: the change wrote the queue before itself */
	char *order = t_sql_str(zcor_dir(z), "SELECT group_concat(o, ',') FROM (SELECT CASE operation "
					      "WHEN 'zcor_memory_write' THEN 'W' WHEN 'zcor_memory_read' THEN 'R' "
					      "ELSE 'H' END || status AS o FROM history ORDER BY seq)");
	CHECK_STR(order, "Wok,Rok,Rok,Rok,Rerror,Hok,Rok,Wok");
	free(order);
	zcor_close(z);
}

/* Reads do not queue on SQLite's one writer: while another connection
 * holds the write lock (a CLI import, say), reads are answered at once
 * (each waited up to 10 s for it and then failed with busy), and their
 * records are written once the lock is free. */
static void Z_HIST_reads_do_not_wait_for_the_write_lock(void)
{
	zcor *z = t_open();
	char a[32];
	id_of(t_call_ok(z, NULL, "zcor_memory_write", "{\"title\":\"甲\",\"content\":\"一\"}"), a);
	char path[4096];
	snprintf(path, sizeof(path), "%s/memory.db", zcor_dir(z));
	sqlite3 *other = NULL;
	CHECK(sqlite3_open_v2(path, &other, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK);
	CHECK(sqlite3_exec(other, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK);
	long long t0 = now_ms();
	for (int i = 0; i < 5; i++) {
		int rc = -1;
		json_decref(t_call_rc(z, NULL, &rc, "zcor_memory_read", "{\"id\":\"%s\"}", a));
		CHECK_INT(rc, ZCOR_OK);
		sleep_ms(10); /* past the window: the flusher tries, and finds the lock taken */
	}
	long long took = now_ms() - t0;
	if (took >= 3000)
		fprintf(stderr, "  five reads took %lld ms beside another writer\n", took);
	CHECK(took < 3000);
	CHECK(sqlite3_exec(other, "COMMIT", NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(other);
	long long n = 0;
	for (long long t1 = now_ms(); now_ms() - t1 < 10000; sleep_ms(20))
		if ((n = t_sql_int(zcor_dir(z), "SELECT count(*) FROM history WHERE operation = "
						"'zcor_memory_read'")) == 5)
			break;
	CHECK_INT(n, 5);
	zcor_close(z);
}

/*
 * kill -9 (docs/FORMATS.md, durability): a change is never lost; read
 * records are lost only if they are younger than the group window. A
 * child writes, reads three times, and either dies at once or waits a
 * moment first; no call follows the reads, so only the handle's own
 * flusher can have written them.
 */
static void Z_HIST_kill9_loses_only_the_last_read_records(void)
{
	for (int wait = 0; wait < 2; wait++) {
		const char *dir = t_tmpdir();
		fflush(NULL);
		pid_t pid = fork();
		if (pid == 0) {
			zcor *z = t_open_dir(dir);
			char *out = NULL;
			if (zcor_tool_call(z, NULL, "zcor_memory_write", "{\"title\":\"甲\",\"content\":\"一\"}",
					   &out) != ZCOR_OK)
				_exit(3);
			json_t *w = json_loads(out, 0, NULL);
			char args[96];
			snprintf(args, sizeof(args), "{\"id\":\"%s\"}", t_str(w, "node.id"));
			for (int i = 0; i < 3; i++) {
				zcor_free(out);
				out = NULL;
				if (zcor_tool_call(z, NULL, "zcor_memory_read", args, &out) != ZCOR_OK)
					_exit(4);
			}
			if (wait)
				sleep_ms(300);
			raise(SIGKILL);
			_exit(5);
		}
		int status = 0;
		waitpid(pid, &status, 0);
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
		CHECK_INT(t_sql_int(dir, "SELECT count(*) FROM nodes"), 1);
		CHECK_INT(t_sql_int(dir, "SELECT count(*) FROM history WHERE operation = 'zcor_memory_write'"), 1);
		long long reads = t_sql_int(dir, "SELECT count(*) FROM history WHERE operation = 'zcor_memory_read'");
		if (wait)
			CHECK_INT(reads, 3);
		else
			CHECK(reads >= 0 && reads <= 3);
	}
}

const struct t_case t_cases[] = {
	{"Z_HIST_create_record_compact_renders_full_snapshot", Z_HIST_create_record_compact_renders_full_snapshot},
	{"Z_HIST_update_delta_renders_before_and_after", Z_HIST_update_delta_renders_before_and_after},
	{"Z_HIST_merge_receipt_and_people_render_as_read", Z_HIST_merge_receipt_and_people_render_as_read},
	{"Z_HIST_records_before_schema_9_read_back_as_stored", Z_HIST_records_before_schema_9_read_back_as_stored},
	{"Z_HIST_keywords_match_compact_records", Z_HIST_keywords_match_compact_records},
	{"Z_HIST_read_records_keep_call_order", Z_HIST_read_records_keep_call_order},
	{"Z_HIST_reads_do_not_wait_for_the_write_lock", Z_HIST_reads_do_not_wait_for_the_write_lock},
	{"Z_HIST_kill9_loses_only_the_last_read_records", Z_HIST_kill9_loses_only_the_last_read_records},
	{NULL, NULL},
};
