/*
 * reindex.c — rebuilding the derived data (zcor reindex, zcor doctor
 * --rebuild): nodes_fts, recall's lexical index (recall_fts, recall_stats,
 * recall_df), the term dictionary, messages_fts and the views'
 * citations, from nodes, people, the message log and the views.
 *
 * Memory layer, above the runner, the log and the views, whose rebuild
 * steps it calls. One operation of the runner without a history record
 * (derived data is not a call's change); it must never change a memory.
 */
#include <limits.h>

#include "base/alloc.h"
#include "memory/memory.h"
#include "memory/transcript.h"
#include "memory/view.h"

static int reindex_op(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	struct zc_mem *m = op->m;
	struct zc_store *s = &m->store;
	long long nodes = 0, people = 0, messages = 0, views = 0;
	int rc, step = SQLITE_DONE;
	if ((rc = zc_exec(s, "INSERT INTO nodes_fts(nodes_fts) VALUES('rebuild')", e)) ||
	    (rc = zc_exec(s, "UPDATE meta SET value = (SELECT coalesce(max(seq), 0) FROM nodes) "
			     "WHERE key IN ('fts_upto', 'terms_upto')", e)) ||
	    (rc = zc_exec(s, "INSERT INTO nodes_fts(nodes_fts) VALUES('optimize')", e)) ||
	    (rc = zc_store_rebuild_recall(s, e)) ||
	    (rc = zc_exec(s, "DELETE FROM terms", e)) ||
	    (rc = zc_exec(s, "DELETE FROM term_prefix", e)) ||
	    (rc = zc_transcript_reindex(s, &messages, e)))
		return rc;
	/* every node's terms in one statement (zc_node_index_terms's) */
	if ((rc = zc_store_node_terms(s, -1, LLONG_MAX, e)))
		return rc;
	sqlite3_stmt *cnt = zc_stmt(s, "SELECT count(*) FROM nodes", e);
	if (!cnt)
		return e->code;
	nodes = sqlite3_step(cnt) == SQLITE_ROW ? sqlite3_column_int64(cnt, 0) : 0;
	sqlite3_reset(cnt);
	/* the people's: one statement, prepared here: zc_stmt's cache may be
	 * in use by the index helpers called inside the loop */
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(s->db, "SELECT " ZC_PERSON_COLS ", seq FROM people", -1, &st, NULL))
		return zc_store_fail(s, sqlite3_errcode(s->db), e, "reindexing");
	while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *p = zc_person_from_row(st);
		rc = zc_person_index_terms(s, sqlite3_column_int64(st, 11), p, e);
		json_decref(p);
		people++;
	}
	sqlite3_finalize(st);
	if (!rc && step != SQLITE_DONE)
		rc = zc_store_fail(s, step, e, "reindexing");
	if (rc || (rc = zc_view_reindex_all(m, &views, e)))
		return rc;
	*out = json_pack("{s:I, s:I, s:I, s:I}", "nodes", (json_int_t)nodes, "people",
			 (json_int_t)people, "messages", (json_int_t)messages, "views", (json_int_t)views);
	return ZCOR_OK;
}

static const struct zc_opdef reindex_def = {"reindex", NULL, reindex_op, ZC_OP_NO_HISTORY};

int zc_mem_reindex(struct zc_mem *m, json_t **counts, struct zc_err *e)
{
	static const struct zcor_ctx host = {ZCOR_ACTOR_CLI, NULL};
	zc_mem_flush_hits(m);
	return zc_mem_run(m, &host, &reindex_def, NULL, counts, e);
}
