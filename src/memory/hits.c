/*
 * hits.c — recall's hit counts (derived statistics, not history). Memory
 * layer, an operation of the runner (no history record, synchronous
 * NORMAL: losing the last few counts in a crash loses nothing a person
 * wrote); it never changes what a memory says.
 *
 * Recall hands over the node seqs it injected. The handle keeps them and
 * every ZC_HIT_BATCH hits appends them to hit_batch as one row (one JSON
 * text: [[at, seq, seq, …], …], one inner array per recall); every
 * ZC_HIT_LOG_FOLD hits, and when the handle closes, the batches are folded
 * into nodes.hits / last_hit_at. A row per batch instead of a row per hit
 * (schema 7): writing 512 rows took 0.5–0.9 ms, and the message that paid
 * for it was one in seventy — the whole of recall's 99th percentile.
 *
 * These writes stay on the handle's own connection: in WAL mode a commit
 * by another connection empties the page cache of every other one, so a
 * writer thread with a connection of its own made every recall after it
 * read the store anew (four times the page reads per message, measured).
 *
 * Their transactions skip the fsync (synchronous=NORMAL for them alone,
 * ZC_OP_NOSYNC): a crash may lose the last counts, never a memory. They
 * are operations of the runner without a history record.
 */
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "memory/memory.h"

struct zc_hits {
	struct zc_buf batch; /* "[at,seq,…],[at,seq,…]" not written yet */
	long pending;        /* hits in it */
	long logged;         /* hits this handle wrote to hit_batch, not folded yet */
};

/* What stats_tx hands its operation (op->ud). */
struct stats_call {
	const char *sql, *arg, *then;
};

static int stats_op(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	const struct stats_call *c = op->ud;
	struct zc_store *s = &op->m->store;
	sqlite3_stmt *st = zc_stmt(s, c->sql, e);
	if (!st)
		return e->code;
	if (c->arg)
		sqlite3_bind_text(st, 1, c->arg, -1, SQLITE_STATIC);
	int step = sqlite3_step(st);
	sqlite3_reset(st);
	if (step != SQLITE_DONE)
		return zc_store_fail(s, step, e, "writing hit counts");
	return c->then ? zc_exec(s, c->then, e) : ZCOR_OK;
}

/* Derived statistics: no history record, no fsync. */
static const struct zc_opdef stats_def = {"hit counts", NULL, stats_op,
					  ZC_OP_NO_HISTORY | ZC_OP_NOSYNC};

/* One transaction of derived statistics. Returns 1 if it committed. */
static int stats_tx(struct zc_mem *m, const char *sql, const char *arg, const char *then)
{
	static const struct zcor_ctx host = {ZCOR_ACTOR_CLI, NULL};
	struct stats_call c = {sql, arg, then};
	struct zc_err e = {0};
	json_t *none = NULL;
	int ok = zc_mem_run_ud(m, &host, &stats_def, NULL, &c, &none, &e) == ZCOR_OK;
	json_decref(none);
	return ok;
}

/* The hits the handle holds as one JSON text ("[]" for none). */
static void held_json(const struct zc_hits *h, struct zc_buf *text)
{
	zc_buf_addc(text, '[');
	if (h)
		zc_buf_add(text, h->batch.p, h->batch.len);
	zc_buf_addc(text, ']');
}

/* Appends the hits the handle holds to hit_batch. */
static void write_batch(struct zc_mem *m)
{
	struct zc_hits *h = m->hits;
	if (!h || h->pending == 0)
		return;
	struct zc_buf text = ZC_BUF_INIT;
	held_json(h, &text);
	if (stats_tx(m, "INSERT INTO hit_batch(hits) VALUES (?1)", zc_buf_str(&text), NULL))
		h->logged += h->pending;
	zc_buf_release(&text);
	h->batch.len = 0;
	h->pending = 0;
}

/* One row per hit (seq, at) of the recalls listed by rows r. */
#define HITS_OF(rows) "SELECT s.value AS seq, r.value ->> 0 AS at FROM " rows ", json_each(r.value) s WHERE s.key > 0"
#define HITS_SQL HITS_OF("hit_batch b, json_each(b.hits) r")

void zc_mem_flush_hits(struct zc_mem *m)
{
	if (!m->store.db)
		return;
	write_batch(m);
	if (!m->hits || m->hits->logged == 0) {
		/* nothing of this handle's: batches another process left (one
		 * that was killed, or a migrated hit_log) are folded too */
		struct zc_err e = {0};
		sqlite3_stmt *st = zc_stmt(&m->store, "SELECT EXISTS (SELECT 1 FROM hit_batch)", &e);
		int left = st && sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0);
		if (st)
			sqlite3_reset(st);
		if (!left)
			return;
	}
	/* and some merging of the full-text index's segments: fewer segments
	 * make every recall lookup cheaper (bounded work: 256 pages) */
	stats_tx(m, "INSERT INTO nodes_fts(nodes_fts, rank) VALUES('merge', 256)", NULL, NULL);
	if (stats_tx(m,
		     "UPDATE nodes SET hits = hits + h.n, last_hit_at = max(coalesce(last_hit_at, 0), h.at) "
		     "FROM (SELECT seq, count(*) AS n, max(at) AS at FROM (" HITS_SQL ") GROUP BY seq) h "
		     "WHERE nodes.seq = h.seq",
		     NULL, "DELETE FROM hit_batch") &&
	    m->hits)
		m->hits->logged = 0;
}

void zc_mem_count_hits(struct zc_mem *m, const json_t *seqs)
{
	if (json_array_size(seqs) == 0)
		return;
	if (!m->hits)
		m->hits = zc_calloc(1, sizeof(*m->hits));
	struct zc_hits *h = m->hits;
	zc_buf_addf(&h->batch, "%s[%lld", h->batch.len ? "," : "", (long long)zc_mem_now(m));
	size_t i;
	json_t *v;
	json_array_foreach(seqs, i, v) zc_buf_addf(&h->batch, ",%lld", (long long)json_integer_value(v));
	zc_buf_addc(&h->batch, ']');
	h->pending += (long)json_array_size(seqs);
	if (h->pending >= ZC_HIT_BATCH)
		write_batch(m);
	if (h->logged >= ZC_HIT_LOG_FOLD)
		zc_mem_flush_hits(m);
}

int zc_mem_unfolded_hits(struct zc_mem *m, json_t **out, struct zc_err *e)
{
	*out = json_object();
	/* hit_batch, and what the handle holds (a caller may be inside a
	 * transaction: this writes nothing) */
	sqlite3_stmt *st = zc_stmt(&m->store,
				   "SELECT seq, max(at) FROM (" HITS_SQL " UNION ALL " HITS_OF("json_each(?1) r")
				   ") GROUP BY seq",
				   e);
	if (!st)
		return e->code;
	struct zc_buf held = ZC_BUF_INIT;
	held_json(m->hits, &held);
	sqlite3_bind_text(st, 1, zc_buf_str(&held), (int)held.len, SQLITE_STATIC);
	char key[32];
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		snprintf(key, sizeof(key), "%lld", (long long)sqlite3_column_int64(st, 0));
		json_object_set_new(*out, key, json_integer(sqlite3_column_int64(st, 1)));
	}
	sqlite3_reset(st);
	zc_buf_release(&held);
	return rc == SQLITE_DONE ? ZCOR_OK : zc_store_fail(&m->store, rc, e, "reading the hit log");
}

void zc_mem_hits_release(struct zc_mem *m)
{
	if (!m->hits)
		return;
	zc_mem_flush_hits(m);
	zc_buf_release(&m->hits->batch);
	zc_free(m->hits);
	m->hits = NULL;
}
