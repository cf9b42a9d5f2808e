/*
 * test_bulk.c — a bulk import (zc_mem_set_fts_batch: zcor-bench's stores
 * of 100k and 1M memories, issue 17) writes exactly the store that the
 * same memories written one transaction each write: the nodes, recall's
 * counts (recall_df, recall_stats), the term dictionary, and every
 * posting with its positions of both full-text indexes (fts5vocab
 * 'instance'), compared as one dump.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "base/json.h"
#include "harness.h"
#include "memory/memory.h"

static const struct zcor_ctx host = {ZCOR_ACTOR_CLI, NULL};

#define T0 1767225600000LL
#define NODES 150

/* Memory i: words shared with others, one of its own, in three scopes;
 * every sixth a document or 存疑 (not in recall_fts: the filter must
 * agree in both paths). */
static json_t *memory_of(long i)
{
	static const char *const w[] = {"火锅", "奶茶", "原神", "开黑", "成都", "考研", "螺蛳粉", "摸鱼"};
	static const char *const scope[] = {"global", "group:1", "private:2"};
	char id[32], title[128], content[256];
	snprintf(id, sizeof(id), "m%03ld", i);
	snprintf(title, sizeof(title), "小明%s第%ld次", w[i % 8], i);
	snprintf(content, sizeof(content), "%s和%s, weekend plans %ld running games", w[(i * 3) % 8],
		 w[(i * 5 + 1) % 8], i % 7);
	json_t *n = json_pack("{s:s, s:s, s:s, s:[s], s:s, s:s}", "id", id, "title", title, "content",
			      content, "keywords", w[i % 8], "scope", scope[i % 3], "kind",
			      i % 6 == 5 ? "document" : "memory");
	if (i % 6 == 4)
		json_object_set_new(n, "confidence", json_string("存疑"));
	zc_json_set_time(n, "updatedAt", T0 + i * 60000);
	zc_json_set_time(n, "createdAt", T0 + i * 60000);
	return n;
}

static void save(struct zc_op *op, long i)
{
	struct zc_err e = {0};
	json_t *n = memory_of(i);
	int rc = zc_node_save(op, n, &e);
	if (rc)
		fprintf(stderr, "  zc_node_save(%ld): %s\n", i, e.msg);
	CHECK_INT(rc, ZCOR_OK);
	json_decref(n);
}

/* Every row of the store's derived data and nodes, as text. */
static void dump(struct zc_mem *m, struct zc_buf *out)
{
	static const char *const sql[] = {
		"SELECT seq, id, title, keywords, content, scope, kind, tier, confidence, title_norm, "
		"updated_at FROM nodes ORDER BY seq",
		"SELECT token, scope, df FROM recall_df ORDER BY token, scope",
		"SELECT scope, docs, tokens FROM recall_stats ORDER BY scope",
		"SELECT * FROM terms ORDER BY 1, 2, 3",
		"SELECT key, value FROM meta WHERE key = 'fts_upto' UNION ALL SELECT 'top', max(seq) FROM nodes",
		"SELECT term, doc, col, offset FROM temp.rv ORDER BY 1, 2, 3, 4",
		"SELECT term, doc, col, offset FROM temp.nv ORDER BY 1, 2, 3, 4",
	};
	CHECK_INT(sqlite3_exec(m->store.db,
			       "CREATE VIRTUAL TABLE temp.rv USING fts5vocab(main, recall_fts, instance);"
			       "CREATE VIRTUAL TABLE temp.nv USING fts5vocab(main, nodes_fts, instance);",
			       NULL, NULL, NULL),
		  SQLITE_OK);
	for (size_t q = 0; q < sizeof(sql) / sizeof(sql[0]); q++) {
		sqlite3_stmt *st = NULL;
		CHECK_INT(sqlite3_prepare_v2(m->store.db, sql[q], -1, &st, NULL), SQLITE_OK);
		zc_buf_addf(out, "-- %zu\n", q);
		while (st && sqlite3_step(st) == SQLITE_ROW) {
			for (int c = 0; c < sqlite3_column_count(st); c++) {
				const char *v = (const char *)sqlite3_column_text(st, c);
				zc_buf_addf(out, "%s%s", c ? "|" : "", v ? v : "NULL");
			}
			zc_buf_addc(out, '\n');
		}
		sqlite3_finalize(st);
	}
}

/* The NODES memories one transaction each (a catch-up every ZC_FTS_BATCH
 * new nodes, the rest by a reader's zc_mem_fts_catch_up), or, bulk, in
 * one transaction with one full-text batch. */
static void build(int bulk, struct zc_buf *out)
{
	struct zc_mem m;
	struct zc_err e = {0};
	CHECK_INT(zc_mem_open(&m, t_tmpdir(), &e), ZCOR_OK);
	struct zc_op op = {.m = &m, .ctx = &host, .name = "test", .now = T0};
	if (bulk) {
		zc_mem_set_fts_batch(&m, 5000);
		CHECK_INT(zc_store_begin(&m.store, 1, &e), ZCOR_OK);
		for (long i = 0; i < NODES; i++)
			save(&op, i);
		CHECK_INT(zc_node_fts_catch_up(&m.store, &e), ZCOR_OK);
		CHECK_INT(zc_store_commit(&m.store, &e), ZCOR_OK);
	} else {
		for (long i = 0; i < NODES; i++) {
			CHECK_INT(zc_store_begin(&m.store, 1, &e), ZCOR_OK);
			save(&op, i);
			CHECK_INT(zc_store_commit(&m.store, &e), ZCOR_OK);
		}
		CHECK_INT(zc_mem_fts_catch_up(&m, &e), ZCOR_OK);
	}
	dump(&m, out);
	zc_mem_close(&m);
}

static void issue17_bulk_build_writes_the_same_store(void)
{
	struct zc_buf one = ZC_BUF_INIT, bulk = ZC_BUF_INIT;
	build(0, &one);
	build(1, &bulk);
	CHECK(one.len > 20000); /* the dump holds the postings, not only headers */
	int same = one.len == bulk.len && memcmp(one.p, bulk.p, one.len) == 0;
	if (!same) {
		size_t i = 0;
		while (i < one.len && i < bulk.len && one.p[i] == bulk.p[i])
			i++;
		size_t from = i > 80 ? i - 80 : 0;
		fprintf(stderr, "  first difference at byte %zu:\n  one by one: %.160s\n  bulk:       %.160s\n", i,
			one.p + from, bulk.p + from);
	}
	CHECK(same);
	zc_buf_release(&one);
	zc_buf_release(&bulk);
}

const struct t_case t_cases[] = {
	{"issue17_bulk_build_writes_the_same_store", issue17_bulk_build_writes_the_same_store},
	{0},
};
