/*
 * test_gate.c — the injection gate, written once (issue 13, item 5): "may
 * recall inject this record" in C (zc_may_inject, zc_scope_may_inject),
 * as SQL (ZC_MAY_INJECT_SQL, ZC_INJECT_SCOPE_SQL) and as the store's
 * recall_tag column, which a released migration spells out on its own:
 * all three must agree on every combination of the fields they read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memory/memory.h"
#include "store/store.h"
#include "harness.h"

static const char *const sups[] = {NULL, "m0"};
static const char *const tiers[] = {"hot", "archive"};
static const char *const confs[] = {NULL, "确认", "存疑"};
static const char *const kinds[] = {"memory", "cognition", "sticker", "document"};
#define N(a) (sizeof(a) / sizeof(a[0]))

static void bind_or_null(sqlite3_stmt *st, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, i);
}

/* The C test and the SQL fragment, over every combination. */
static void issue13_5_gate_c_and_sql_agree(void)
{
	sqlite3 *db = NULL;
	CHECK_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
	sqlite3_stmt *st = NULL;
	CHECK_INT(sqlite3_prepare_v2(db,
				     "SELECT " ZC_MAY_INJECT_SQL("", "") " FROM (SELECT ?1 AS superseded_by, "
				     "?2 AS tier, ?3 AS confidence, ?4 AS kind)",
				     -1, &st, NULL),
		  SQLITE_OK);
	int live = 0;
	for (size_t a = 0; a < N(sups); a++)
		for (size_t b = 0; b < N(tiers); b++)
			for (size_t c = 0; c < N(confs); c++)
				for (size_t d = 0; d < N(kinds); d++) {
					sqlite3_reset(st);
					bind_or_null(st, 1, sups[a]);
					bind_or_null(st, 2, tiers[b]);
					bind_or_null(st, 3, confs[c]);
					bind_or_null(st, 4, kinds[d]);
					CHECK_INT(sqlite3_step(st), SQLITE_ROW);
					int want = zc_may_inject(sups[a], tiers[b], confs[c], kinds[d]);
					live += want;
					CHECK_INT(sqlite3_column_int(st, 0), want);
				}
	/* current, hot, not 存疑 (NULL or 确认), not a document: 1 × 1 × 2 × 3 */
	CHECK_INT(live, 6);
	CHECK(zc_may_inject(NULL, NULL, NULL, NULL)); /* a new record's defaults */
	sqlite3_finalize(st);

	/* the scope half: global, or the conversation's own */
	static const char *const convs[] = {"group:1", "private:2"};
	static const char *const scopes[] = {"global", "group:1", "private:2", "group:3"};
	CHECK_INT(sqlite3_prepare_v2(db, "SELECT " ZC_INJECT_SCOPE_SQL("") " FROM (SELECT ?1 AS scope)", -1,
				     &st, NULL),
		  SQLITE_OK);
	for (size_t a = 0; a < N(convs); a++)
		for (size_t b = 0; b < N(scopes); b++) {
			sqlite3_reset(st);
			sqlite3_bind_text(st, 1, scopes[b], -1, SQLITE_STATIC);
			sqlite3_bind_text(st, 9, convs[a], -1, SQLITE_STATIC);
			CHECK_INT(sqlite3_step(st), SQLITE_ROW);
			CHECK_INT(sqlite3_column_int(st, 0), zc_scope_may_inject(convs[a], scopes[b]));
		}
	CHECK(zc_scope_may_inject("group:1", "global"));
	CHECK(!zc_scope_may_inject("private:2", "group:1"));
	CHECK(!zc_scope_may_inject("group:1", "private:2"));
	sqlite3_finalize(st);
	sqlite3_close(db);
}

/* The store's recall_tag ('zlive' / 'zdead', what recall's FTS query
 * filters on) says the same as zc_may_inject for real rows of nodes. */
static void issue13_5_gate_store_column_agrees(void)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/memory.db", t_tmpdir());
	struct zc_store s = {0};
	struct zc_err e = {0};
	CHECK_INT(zc_store_open(&s, path, &e), ZCOR_OK);
	CHECK_INT(zc_exec(&s,
			  "INSERT INTO nodes(id, title, content, created_at, updated_at, title_norm) "
			  "VALUES ('m0', 't', 'c', 0, 0, 't')",
			  &e),
		  ZCOR_OK);
	sqlite3_stmt *ins = NULL, *tag = NULL;
	CHECK_INT(sqlite3_prepare_v2(s.db,
				     "INSERT INTO nodes(id, title, content, created_at, updated_at, title_norm, "
				     "superseded_by, tier, confidence, kind) VALUES (?5, 't', 'c', 0, "
				     "0, 't', ?1, ?2, ?3, ?4)",
				     -1, &ins, NULL),
		  SQLITE_OK);
	CHECK_INT(sqlite3_prepare_v2(s.db, "SELECT recall_tag FROM nodes WHERE id = ?1", -1, &tag, NULL),
		  SQLITE_OK);
	int n = 0;
	for (size_t a = 0; a < N(sups); a++)
		for (size_t b = 0; b < N(tiers); b++)
			for (size_t c = 0; c < N(confs); c++)
				for (size_t d = 0; d < N(kinds); d++) {
					char id[16];
					snprintf(id, sizeof(id), "m%d", ++n);
					sqlite3_reset(ins);
					bind_or_null(ins, 1, sups[a]);
					bind_or_null(ins, 2, tiers[b]);
					bind_or_null(ins, 3, confs[c]);
					bind_or_null(ins, 4, kinds[d]);
					sqlite3_bind_text(ins, 5, id, -1, SQLITE_TRANSIENT);
					CHECK_INT(sqlite3_step(ins), SQLITE_DONE);
					sqlite3_reset(tag);
					sqlite3_bind_text(tag, 1, id, -1, SQLITE_TRANSIENT);
					CHECK_INT(sqlite3_step(tag), SQLITE_ROW);
					const char *t = (const char *)sqlite3_column_text(tag, 0);
					int live = t && strstr(t, " zlive") != NULL;
					CHECK_INT(live, zc_may_inject(sups[a], tiers[b], confs[c], kinds[d]));
				}
	sqlite3_finalize(ins);
	sqlite3_finalize(tag);

	/* issue 17: recall_fts and its counts (store.c's RECALL_LIVE, schema
	 * 12) hold exactly the records the gate lets through — added in a
	 * batch (zc_store_recall_catch_up), kept by the triggers afterwards */
	int live = 1, hot = 1; /* m0; and all once every row is hot */
	for (size_t a = 0; a < N(sups); a++)
		for (size_t b = 0; b < N(tiers); b++)
			for (size_t c = 0; c < N(confs); c++)
				for (size_t d = 0; d < N(kinds); d++) {
					live += zc_may_inject(sups[a], tiers[b], confs[c], kinds[d]);
					hot += zc_may_inject(sups[a], "hot", confs[c], kinds[d]);
				}
	CHECK_INT(zc_store_recall_catch_up(&s, 0, &e), ZCOR_OK);
	sqlite3_stmt *docs = NULL;
	CHECK_INT(sqlite3_prepare_v2(s.db, "SELECT coalesce(sum(docs), 0) FROM recall_stats", -1, &docs,
				     NULL),
		  SQLITE_OK);
	CHECK_INT(sqlite3_step(docs), SQLITE_ROW);
	CHECK_INT(sqlite3_column_int(docs, 0), live);
	sqlite3_reset(docs);
	/* (nodes_fts caught up too, as memory/op.c's zc_node_fts_catch_up does) */
	CHECK_INT(zc_exec(&s, "INSERT INTO nodes_fts(rowid, title, keywords, content, recall_tag) SELECT seq, "
			      "title, keywords, content, recall_tag FROM nodes",
			  &e),
		  ZCOR_OK);
	CHECK_INT(zc_exec(&s, "UPDATE meta SET value = (SELECT max(seq) FROM nodes) WHERE key = 'fts_upto'",
			  &e),
		  ZCOR_OK);
	/* every row archived, then deleted: the triggers take out only what
	 * was in, so the counts end at zero, not below */
	CHECK_INT(zc_exec(&s, "UPDATE nodes SET tier = 'archive'", &e), ZCOR_OK);
	CHECK_INT(sqlite3_step(docs), SQLITE_ROW);
	CHECK_INT(sqlite3_column_int(docs, 0), 0);
	sqlite3_reset(docs);
	CHECK_INT(zc_exec(&s, "UPDATE nodes SET tier = 'hot'", &e), ZCOR_OK);
	CHECK_INT(sqlite3_step(docs), SQLITE_ROW);
	CHECK_INT(sqlite3_column_int(docs, 0), hot);
	sqlite3_reset(docs);
	CHECK_INT(zc_exec(&s, "DELETE FROM nodes", &e), ZCOR_OK);
	CHECK_INT(sqlite3_step(docs), SQLITE_ROW);
	CHECK_INT(sqlite3_column_int(docs, 0), 0);
	sqlite3_finalize(docs);
	sqlite3_stmt *df = NULL;
	CHECK_INT(sqlite3_prepare_v2(s.db, "SELECT count(*) FROM recall_df", -1, &df, NULL), SQLITE_OK);
	CHECK_INT(sqlite3_step(df), SQLITE_ROW);
	CHECK_INT(sqlite3_column_int(df, 0), 0);
	sqlite3_finalize(df);
	zc_store_close(&s);
}

const struct t_case t_cases[] = {
	{"issue13_5_gate_c_and_sql_agree", issue13_5_gate_c_and_sql_agree},
	{"issue13_5_gate_store_column_agrees", issue13_5_gate_store_column_agrees},
	{0},
};
