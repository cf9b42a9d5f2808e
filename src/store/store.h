/*
 * store.h — memory.db: the SQLite connection, its schema and migrations,
 * transactions and a cache of prepared statements.
 *
 * Store layer: SQL and durability only, no rules of the seeds. One struct
 * zc_store is one connection, used by one thread at a time. WAL mode, a
 * commit is durable when it returns (see zc_store_commit: group commit),
 * foreign keys on, busy_timeout so a second process (CLI beside a server)
 * waits its turn.
 */
#ifndef ZC_STORE_H
#define ZC_STORE_H

#include <jansson.h>
#include <sqlite3.h>

#include "base/err.h"

#define ZC_STMT_CACHE 128

struct zc_store {
	sqlite3 *db;
	int in_tx;
	struct {
		const char *sql; /* identity: the caller's string constant */
		sqlite3_stmt *st;
		unsigned long used; /* s->clock when last handed out */
	} cache[ZC_STMT_CACHE];
	int ncache;
	unsigned long clock; /* counts zc_stmt calls */
	int busy_ms;         /* how long a lock is waited for (zc_store_busy_wait) */
	double busy_since;   /* when the current wait began (monotonic ms) */
	int nosync;          /* zc_store_sync(s, 0) is in effect */
	int grouped;         /* the open write transaction commits through the group */
	struct zc_sync_group *group; /* the process's connections to this file (store.c) */
};

/* Each connection's page cache (PRAGMA cache_size at open). */
#define ZC_STORE_CACHE_BYTES (16u << 20)

/* Opens (creating if needed) and migrates the database at path. */
int zc_store_open(struct zc_store *s, const char *path, struct zc_err *e);
/* The schema version this build migrates memory.db to (PRAGMA user_version). */
int zc_store_schema_version(void);
/* Accepts a zeroed or closed store. */
void zc_store_close(struct zc_store *s);

/* BEGIN IMMEDIATE (write=1) or BEGIN (read). */
int zc_store_begin(struct zc_store *s, int write, struct zc_err *e);
/*
 * COMMIT; durable when it returns (unless zc_store_sync(s, 0) is in
 * effect). Group commit: a write transaction commits with
 * synchronous=NORMAL — its WAL frames written, the write lock released
 * at once — and then waits for an fdatasync of the WAL that began after
 * its commit returned, issuing it itself when none is under way. One
 * fsync so covers every connection of this process to the file that
 * committed meanwhile (the QQ world's logging chunk and the turns'
 * records), and no connection holds the write lock through a disk flush.
 * An fsync covers every frame before it in the WAL, and SQLite syncs the
 * WAL before a checkpoint copies frames into memory.db: a commit is as
 * durable as with synchronous=FULL when this returns. A failed fsync is
 * ZCOR_EIO (the change is committed, its durability unknown).
 */
int zc_store_commit(struct zc_store *s, struct zc_err *e);
/* Makes every commit this process made to the file before the call
 * durable: waits for an fdatasync of the WAL that begins after it (the
 * group's, shared with the commits meanwhile), for a commit made without
 * one (zc_store_sync(s, 0)). ZCOR_EIO when it fails. */
int zc_store_flush(struct zc_store *s, struct zc_err *e);
/* The group commit's counts for this process (the benchmarks'): durable
 * commits, and the WAL fsyncs they took. */
void zc_store_sync_counts(long long *commits, long long *fsyncs);
/* Safe to call when no transaction is open. */
void zc_store_rollback(struct zc_store *s);
/* How long a connection waits for another one's write lock. */
#define ZC_BUSY_WAIT_MS 10000
/* wait 0: fail at once with ZCOR_EBUSY instead (work that can be done
 * later); 1: wait ZC_BUSY_WAIT_MS again. */
void zc_store_busy_wait(struct zc_store *s, int wait);
/* PRAGMA synchronous = FULL (1, every commit fsynced: the default) or
 * NORMAL (0: WAL keeps a commit safe from a crash of the process, a power
 * cut may lose it). Only outside a transaction, as SQLite requires. */
int zc_store_sync(struct zc_store *s, int full);

/*
 * The prepared statement for sql, reset and with bindings cleared. `sql`
 * must be a string constant: the cache is keyed on its address. Returns
 * NULL and fills e on failure.
 *
 * A full cache evicts (finalizes) the least recently handed out statement
 * that is not in use: one stepped and not yet reset or run to its end
 * (sqlite3_stmt_busy) is never finalized under its caller, however many
 * other statements are prepared meanwhile. A cache whose every statement
 * is in use is a bug of ours (statements nested ZC_STMT_CACHE deep).
 */
sqlite3_stmt *zc_stmt(struct zc_store *s, const char *sql, struct zc_err *e);
/* Runs a statement without results (or one-shot SQL text with exec=1). */
int zc_exec(struct zc_store *s, const char *sql, struct zc_err *e);

/*
 * Steps the one-shot query sql to its end, or until the connection's page
 * cache holds `budget` bytes: what it reads stays in the cache (the cache
 * must be at least that large). Adds the pages it read to *pages.
 */
int zc_store_warm(struct zc_store *s, const char *sql, size_t budget, long *pages, struct zc_err *e);
/* The bytes the connection's page cache holds now. */
size_t zc_store_cache_bytes(struct zc_store *s);

/*
 * Reads the database file (and its WAL), up to max bytes each, so that
 * the operating system holds it in its page cache: the system's memory,
 * not the process's, and the system may drop it again. Best effort:
 * failures are ignored.
 */
void zc_store_prefetch(struct zc_store *s, unsigned long long max);
/* Reads the first n bytes of the database file at path into h (zeros past
 * its end) through SQLite's own file layer, never a descriptor of our
 * own: closing one would drop the process's POSIX locks on the file while
 * other connections of this process hold them (see zc_store_prefetch).
 * Returns the bytes the file has there (≤ n), or -1 when it cannot be
 * opened. */
long zc_store_read_header(const char *path, unsigned char *h, size_t n);

/* Maps an SQLite result to a zcor code with a message naming `what`. */
int zc_store_fail(struct zc_store *s, int rc, struct zc_err *e, const char *what);

/*
 * The JSON text in column i parsed, or when it is NULL or not JSON a fresh
 * fallback: '[' an empty array, '{' an empty object, 'n' null, 's' the
 * raw text as a JSON string (null when NULL).
 */
json_t *zc_col_json(sqlite3_stmt *st, int i, char fallback);

/* Refills recall's lexical index and its per-scope statistics (recall_fts,
 * recall_stats, recall_df: schema 12) from nodes, and merges the index. */
int zc_store_rebuild_recall(struct zc_store *s, struct zc_err *e);
/* Adds the records of seq above `above` that recall may inject to
 * recall_fts, recall_stats and recall_df (a batch of new records, whose
 * triggers wait for it: schema 12; memory/op.c, zc_node_fts_catch_up). */
int zc_store_recall_catch_up(struct zc_store *s, long long above, struct zc_err *e);

/* Adds the dictionary terms of the nodes of seq in (above, upto] that
 * recall may inject: each one's normalised title and keywords, in its
 * scope, the ones of 1..ZC_TERM_MAX_CHARS characters, with their
 * term_prefix rows. One node (seq - 1, seq) when its row is written, a
 * batch of new nodes, whose terms wait for it (issue 19; memory/op.c,
 * zc_node_fts_catch_up), or every node (reindex). Their old terms went
 * when their rows were written (the schema's triggers, schema 10). */
int zc_store_node_terms(struct zc_store *s, long long above, long long upto, struct zc_err *e);

/* Registers zcor's FTS5 tokenizers and SQL functions (zc_norm, zc_lex_len,
 * zc_lex_set) on db (fts.c): the schema's triggers need them. */
int zc_fts_register(sqlite3 *db, struct zc_err *e);
/* One row of zc_postings(t, n)'s blob (fts.c): a row of the query's first
 * phrase and its instances there; n is at most ZC_POSTINGS_MAX. */
struct zc_posting {
	sqlite3_int64 rowid;
	int tf;
};
#define ZC_POSTINGS_MAX 4096

/* The choice of zc_postings(t, n, scan) (fts.c), over a token's rows fed
 * in rowid order: with scan 0 the first cap rows; else, of the first
 * scan rows (all of them if scan < 0), the cap with the most instances,
 * the first in rowid order among equal counts. rows (cap of them) is the
 * caller's; _add returns 1 once no further row can change the answer;
 * _finish orders a by_tf choice best first. */
struct zc_postings_sel {
	struct zc_posting *rows;
	int n, cap;
	int by_tf;      /* rows: a heap of the best cap so far, its root the worst */
	long long left; /* by_tf: rows still to walk (< 0: all) */
};
void zc_postings_sel_init(struct zc_postings_sel *r, struct zc_posting *rows, int cap, long long scan);
int zc_postings_sel_add(struct zc_postings_sel *r, sqlite3_int64 rowid, int tf);
void zc_postings_sel_finish(struct zc_postings_sel *r);

/*
 * zc_postings(t, n, scan) for one recall_fts token (term: "<scope>\x1F<token>",
 * len bytes), read from recall_fts's segments in the store's tables
 * (recall_fts_data, recall_fts_idx: FTS5's file format, fts_raw.c)
 * instead of through an FTS5 cursor, ~8 times fewer instructions a row
 * (issue 14). The same rows in the same order, into out (n of them, n at
 * most ZC_POSTINGS_MAX): *got their count. *done is 0 when it could not
 * answer — outside a transaction, inside a write transaction (FTS5 may
 * hold rows not yet in its tables), a structure or page it does not
 * know — and the caller then asks FTS5; an error of SQLite is an error.
 */
int zc_fts_raw_postings(struct zc_store *s, const char *term, size_t len, int n, long long scan,
			struct zc_posting *out, int *got, int *done, struct zc_err *e);

/* Longest dictionary term, in characters: longer titles are not looked
 * up verbatim in messages (FTS still finds them). */
#define ZC_TERM_MAX_CHARS 12

/* Adds the dictionary terms of one person ("person", its seq, its scope;
 * a node's are zc_store_node_terms'): the normalised strings in `terms`
 * (too long ones skipped). Its old terms went when its row was written: the schema's
 * triggers remove them by their exact keys (schema 10), so call this right
 * after writing the row (or after emptying terms, as reindex does). */
int zc_terms_set(struct zc_store *s, const char *kind, sqlite3_int64 ref, const char *scope,
		 const json_t *terms, struct zc_err *e);

/* Sets key of o to the ISO-8601 text of the milliseconds in column i, or
 * null when the column is NULL. */
void zc_col_time(json_t *o, const char *key, sqlite3_stmt *st, int i);

/* Small key/value table for counters and flags. */
int zc_meta_get_int(struct zc_store *s, const char *key, long long *v, struct zc_err *e);
int zc_meta_set_int(struct zc_store *s, const char *key, long long v, struct zc_err *e);


#endif
