/*
 * test_store.c — the store layer on its own (issue 13, item 9): memory.db
 * opened and migrated in a temporary directory, the statement cache
 * (item 6: a statement in use is never finalized under its caller), and
 * transactions begin / commit / rollback, through store.h only.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "store/store.h"
#include "harness.h"

static char *db_path(const char *dir)
{
	size_t n = strlen(dir) + 16;
	char *p = malloc(n);
	if (!p)
		exit(2);
	snprintf(p, n, "%s/memory.db", dir);
	return p;
}

static long long one_int(struct zc_store *s, const char *sql)
{
	sqlite3_stmt *st = NULL;
	long long v = -1;
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* Is st, with its SQL, one of the connection's live statements?
 * (sqlite3_next_stmt walks only live ones, so a finalized st is never
 * dereferenced; the text check catches its address reused.) */
static int stmt_alive(sqlite3 *db, sqlite3_stmt *st, const char *sql)
{
	for (sqlite3_stmt *p = sqlite3_next_stmt(db, NULL); p; p = sqlite3_next_stmt(db, p))
		if (p == st && strcmp(sqlite3_sql(p), sql) == 0)
			return 1;
	return 0;
}

/* The connection's live statements of this test (FTS5 keeps its own). */
static int count_stmts(sqlite3 *db)
{
	int n = 0;
	for (sqlite3_stmt *p = sqlite3_next_stmt(db, NULL); p; p = sqlite3_next_stmt(db, p))
		n += (strncmp(sqlite3_sql(p), "SELECT ", 7) == 0 && isdigit((unsigned char)sqlite3_sql(p)[7])) ||
		     strncmp(sqlite3_sql(p), "WITH ", 5) == 0;
	return n;
}

/* A new directory's memory.db gets the whole schema (user_version = the
 * last migration, the tables there); opening it again migrates nothing
 * and keeps the rows; a newer schema than this zcor knows is refused. */
static void store_open_migrate_reopen(void)
{
	char *path = db_path(t_tmpdir());
	struct zc_store s = {0};
	struct zc_err e = {0};
	CHECK_INT(zc_store_open(&s, path, &e), ZCOR_OK);
	long long version = one_int(&s, "PRAGMA user_version");
	CHECK(version >= 10);
	CHECK_INT(one_int(&s, "SELECT count(*) FROM sqlite_schema WHERE name IN ('nodes','people','history','meta')"), 4);
	CHECK_STR((const char *)sqlite3_db_filename(s.db, "main") ? "ok" : NULL, "ok");
	CHECK_INT(one_int(&s, "PRAGMA foreign_keys"), 1);
	CHECK_INT(zc_meta_set_int(&s, "test.counter", 41, &e), ZCOR_OK);
	zc_store_close(&s);
	zc_store_close(&s); /* a closed store is fine to close again */

	CHECK_INT(zc_store_open(&s, path, &e), ZCOR_OK);
	CHECK_INT(one_int(&s, "PRAGMA user_version"), version);
	long long v = 0;
	CHECK_INT(zc_meta_get_int(&s, "test.counter", &v, &e), ZCOR_OK);
	CHECK_INT(v, 41);
	char sql[64];
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %lld", version + 1);
	CHECK_INT(sqlite3_exec(s.db, sql, NULL, NULL, NULL), SQLITE_OK);
	zc_store_close(&s);

	CHECK_INT(zc_store_open(&s, path, &e), ZCOR_EINVAL);
	CHECK_HAS(e.msg, "newer than this zcor knows");
	CHECK(s.db == NULL);
	zc_store_close(&s);
	free(path);
}

/* The cache hands out the same statement for the same SQL constant, reset
 * and with its bindings cleared. */
static void stmt_cache_reuses_and_resets(void)
{
	char *path = db_path(t_tmpdir());
	struct zc_store s = {0};
	struct zc_err e = {0};
	CHECK_INT(zc_store_open(&s, path, &e), ZCOR_OK);
	static const char sql[] = "SELECT ?1 + 1";
	sqlite3_stmt *a = zc_stmt(&s, sql, &e);
	CHECK(a != NULL);
	sqlite3_bind_int(a, 1, 41);
	CHECK_INT(sqlite3_step(a), SQLITE_ROW);
	CHECK_INT(sqlite3_column_int(a, 0), 42);
	sqlite3_stmt *b = zc_stmt(&s, sql, &e);
	CHECK(a == b);
	CHECK(!sqlite3_stmt_busy(b));
	CHECK_INT(sqlite3_step(b), SQLITE_ROW);
	CHECK_INT(sqlite3_column_type(b, 0), SQLITE_NULL); /* NULL + 1: the binding went */
	/* a statement that does not prepare is an error naming what failed */
	static const char bad[] = "SELEC nonsense";
	CHECK(zc_stmt(&s, bad, &e) == NULL);
	CHECK_INT(e.code, ZCOR_EINTERNAL);
	CHECK_HAS(e.msg, "preparing a statement");
	zc_store_close(&s);
	free(path);
}

/* Issue 13, item 6: more than ZC_STMT_CACHE distinct statements prepared
 * while one is held mid-step. The old FIFO eviction finalized the oldest
 * entry, the held one, under its caller (a use after free); now a
 * statement in use is never evicted, the cache stays bounded, and the held
 * statement steps on to its next row. */
static void stmt_cache_never_evicts_a_statement_in_use(void)
{
	char *path = db_path(t_tmpdir());
	struct zc_store s = {0};
	struct zc_err e = {0};
	CHECK_INT(zc_store_open(&s, path, &e), ZCOR_OK);
	static const char held_sql[] =
		"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3) SELECT i FROM n";
	sqlite3_stmt *held = zc_stmt(&s, held_sql, &e);
	CHECK(held != NULL);
	CHECK_INT(sqlite3_step(held), SQLITE_ROW);
	CHECK_INT(sqlite3_column_int(held, 0), 1);

	/* distinct SQL texts: the cache is keyed on the text's address */
	enum { N = 3 * ZC_STMT_CACHE };
	static char texts[N][32];
	int lost_at = -1;
	for (int i = 0; i < N; i++) {
		snprintf(texts[i], sizeof(texts[i]), "SELECT %d", i);
		sqlite3_stmt *st = zc_stmt(&s, texts[i], &e);
		CHECK(st != NULL);
		if (st && i % 2 == 0) {
			CHECK_INT(sqlite3_step(st), SQLITE_ROW);
			CHECK_INT(sqlite3_column_int(st, 0), i);
			CHECK_INT(sqlite3_step(st), SQLITE_DONE);
		}
		if (lost_at < 0 && !stmt_alive(s.db, held, held_sql))
			lost_at = i;
	}
	CHECK_INT(lost_at, -1);
	CHECK(s.ncache <= ZC_STMT_CACHE);
	CHECK(count_stmts(s.db) <= ZC_STMT_CACHE);
	if (stmt_alive(s.db, held, held_sql)) {
		CHECK_INT(sqlite3_step(held), SQLITE_ROW);
		CHECK_INT(sqlite3_column_int(held, 0), 2);
		sqlite3_reset(held);
	}
	/* once reset it is a candidate like any other: the least recently
	 * used statement goes first */
	for (int i = 0; i < N; i++)
		CHECK(zc_stmt(&s, texts[i], &e) != NULL);
	CHECK(!stmt_alive(s.db, held, held_sql));
	CHECK(count_stmts(s.db) <= ZC_STMT_CACHE);
	zc_store_close(&s);
	CHECK_INT(s.ncache, 0);
	free(path);
}

/* begin / commit makes a change durable for a second connection;
 * rollback drops it; rollback with no transaction open is harmless; a
 * read transaction sees one snapshot. */
static void store_transactions(void)
{
	const char *dir = t_tmpdir();
	char *path = db_path(dir);
	struct zc_store s = {0}, other = {0};
	struct zc_err e = {0};
	CHECK_INT(zc_store_open(&s, path, &e), ZCOR_OK);
	CHECK_INT(zc_store_open(&other, path, &e), ZCOR_OK);
	long long v = 0;

	CHECK_INT(zc_store_begin(&s, 1, &e), ZCOR_OK);
	CHECK_INT(s.in_tx, 1);
	CHECK_INT(zc_meta_set_int(&s, "t.a", 1, &e), ZCOR_OK);
	CHECK_INT(zc_meta_get_int(&other, "t.a", &v, &e), ZCOR_OK);
	CHECK_INT(v, 0); /* not yet committed: absent reads as 0 */
	CHECK_INT(zc_store_commit(&s, &e), ZCOR_OK);
	CHECK_INT(s.in_tx, 0);
	CHECK_INT(zc_meta_get_int(&other, "t.a", &v, &e), ZCOR_OK);
	CHECK_INT(v, 1);

	CHECK_INT(zc_store_begin(&s, 1, &e), ZCOR_OK);
	CHECK_INT(zc_meta_set_int(&s, "t.a", 2, &e), ZCOR_OK);
	zc_store_rollback(&s);
	CHECK_INT(s.in_tx, 0);
	CHECK(sqlite3_get_autocommit(s.db));
	CHECK_INT(zc_meta_get_int(&s, "t.a", &v, &e), ZCOR_OK);
	CHECK_INT(v, 1);
	zc_store_rollback(&s);
	CHECK_INT(s.in_tx, 0);

	/* a write lock held elsewhere: without waiting, begin is busy */
	CHECK_INT(zc_store_begin(&other, 1, &e), ZCOR_OK);
	zc_store_busy_wait(&s, 0);
	CHECK_INT(zc_store_begin(&s, 1, &e), ZCOR_EBUSY);
	CHECK_INT(s.in_tx, 0);
	zc_store_rollback(&other);
	CHECK_INT(zc_store_begin(&s, 1, &e), ZCOR_OK);
	CHECK_INT(zc_store_commit(&s, &e), ZCOR_OK);
	zc_store_busy_wait(&s, 1);

	/* a read transaction keeps its snapshot while the other commits */
	CHECK_INT(zc_store_begin(&s, 0, &e), ZCOR_OK);
	CHECK_INT(zc_meta_get_int(&s, "t.a", &v, &e), ZCOR_OK);
	CHECK_INT(zc_meta_set_int(&other, "t.a", 7, &e), ZCOR_OK);
	CHECK_INT(zc_meta_get_int(&s, "t.a", &v, &e), ZCOR_OK);
	CHECK_INT(v, 1);
	CHECK_INT(zc_store_commit(&s, &e), ZCOR_OK);
	CHECK_INT(zc_meta_get_int(&s, "t.a", &v, &e), ZCOR_OK);
	CHECK_INT(v, 7);

	zc_store_close(&other);
	zc_store_close(&s);
	free(path);
}

static int count_op(void *ud)
{
	(*(long long *)ud)++;
	return 0;
}

/* The VM instructions of recall's catch-up of one new record on a store
 * of n records (all caught up before). */
static long long catch_up_ops(long n)
{
	char *path = db_path(t_tmpdir());
	struct zc_store s = {0};
	struct zc_err e = {0};
	CHECK_INT(zc_store_open(&s, path, &e), ZCOR_OK);
	char sql[1024];
	snprintf(sql, sizeof(sql),
		 "WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < %ld) "
		 "INSERT INTO nodes(id, title, content, title_norm, scope, created_at, "
		 "updated_at) SELECT 'm' || i, '潜水艇' || i, '拼模型 ' || i, '潜水艇', "
		 "CASE i %% 3 WHEN 0 THEN 'global' ELSE 'group:' || (i %% 7) END, i, i FROM k",
		 n);
	CHECK_INT(zc_store_begin(&s, 1, &e), ZCOR_OK);
	CHECK_INT(sqlite3_exec(s.db, sql, NULL, NULL, NULL), SQLITE_OK);
	CHECK_INT(zc_store_recall_catch_up(&s, -1, &e), ZCOR_OK); /* the n, caught up */
	snprintf(sql, sizeof(sql),
		 "INSERT INTO nodes(id, title, content, title_norm, created_at, "
		 "updated_at) VALUES ('new', '潜水艇展览', '周末去看', '潜水艇展览', 1, 1)");
	CHECK_INT(sqlite3_exec(s.db, sql, NULL, NULL, NULL), SQLITE_OK);
	long long ops = 0;
	sqlite3_progress_handler(s.db, 1, count_op, &ops);
	CHECK_INT(zc_store_recall_catch_up(&s, n, &e), ZCOR_OK); /* the new one */
	sqlite3_progress_handler(s.db, 0, NULL, NULL);
	CHECK_INT(one_int(&s, "SELECT count(*) FROM recall_df WHERE token = '展览'"), 1);
	zc_store_rollback(&s);
	zc_store_close(&s);
	free(path);
	return ops;
}

/* Issue 14's bench: recall's catch-up of a batch of new records reads
 * those records, never every node — its work does not grow with the
 * store (it read all of them for recall_stats: 32 M instructions a
 * batch at 100k memories). */
static void issue14_recall_catch_up_reads_only_the_batch(void)
{
	long long small = catch_up_ops(300), big = catch_up_ops(6000);
	if (!(big < 2 * small))
		fprintf(stderr, "  catch-up of one record: %lld VM steps at 300, %lld at 6000\n", small, big);
	CHECK(small > 0 && big < 2 * small);
}

/* Issue 17: zc_postings(recall_fts, n) hands over the first n rows of the
 * query's phrase in rowid order with their instance counts — exactly the
 * rows and term frequencies the statement read row by row (recall reads
 * the long postings lists in this one call), and refuses a count out of
 * range. */
static void issue17_zc_postings_same_rows_as_the_statement(void)
{
	char *path = db_path(t_tmpdir());
	struct zc_store s = {0};
	struct zc_err e = {0};
	CHECK_INT(zc_store_open(&s, path, &e), ZCOR_OK);
	CHECK_INT(sqlite3_exec(s.db,
			       "WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 300) "
			       "INSERT INTO nodes(id, title, content, title_norm, scope, created_at, "
			       "updated_at) SELECT 'm' || i, '潜水艇' || i, CASE i % 3 WHEN 0 THEN '潜水 潜水 潜水' "
			       "ELSE '拼模型' END, '潜水艇', CASE i % 4 WHEN 0 THEN 'group:1' ELSE "
			       "'global' END, i, i FROM k",
			       NULL, NULL, NULL),
		  SQLITE_OK);
	CHECK_INT(zc_store_recall_catch_up(&s, -1, &e), ZCOR_OK);
	static const char *const phrase[] = {"\"global\x1f潜水\"", "\"group:1\x1f潜水\"", "\"global\x1f模型\""};
	for (size_t q = 0; q < 3; q++)
		for (int limit = 1; limit <= 400; limit = limit * 3 + 1) {
			sqlite3_stmt *a = NULL, *b = NULL;
			CHECK_INT(sqlite3_prepare_v2(s.db,
						     "SELECT -rowid, zc_tf(recall_fts) FROM recall_fts WHERE recall_fts "
						     "MATCH ?1 ORDER BY rowid LIMIT ?2",
						     -1, &a, NULL),
				  SQLITE_OK);
			CHECK_INT(sqlite3_prepare_v2(s.db,
						     "SELECT zc_postings(recall_fts, ?2) FROM recall_fts WHERE recall_fts "
						     "MATCH ?1 LIMIT 1",
						     -1, &b, NULL),
				  SQLITE_OK);
			sqlite3_bind_text(a, 1, phrase[q], -1, SQLITE_STATIC);
			sqlite3_bind_int(a, 2, limit);
			sqlite3_bind_text(b, 1, phrase[q], -1, SQLITE_STATIC);
			sqlite3_bind_int(b, 2, limit);
			CHECK_INT(sqlite3_step(b), SQLITE_ROW);
			const char *blob = sqlite3_column_blob(b, 0);
			int n = sqlite3_column_bytes(b, 0) / (int)sizeof(struct zc_posting), i = 0, tf3 = 0;
			while (sqlite3_step(a) == SQLITE_ROW) {
				struct zc_posting p = {0, 0};
				if (i < n)
					memcpy(&p, blob + (size_t)i * sizeof(p), sizeof(p));
				CHECK(i < n && -p.rowid == sqlite3_column_int64(a, 0) && p.tf == sqlite3_column_int(a, 1));
				tf3 += p.tf > 1;
				i++;
			}
			CHECK_INT(i, n);
			CHECK(n > 0 && (q == 2 || limit < 4 || tf3 > 0)); /* tf is the count, not a flag */
			sqlite3_finalize(a);
			sqlite3_finalize(b);
		}
	sqlite3_stmt *bad = NULL;
	CHECK_INT(sqlite3_prepare_v2(s.db,
				     "SELECT zc_postings(recall_fts, 5000) FROM recall_fts WHERE recall_fts MATCH "
				     "'\"global\x1f潜水\"' LIMIT 1",
				     -1, &bad, NULL),
		  SQLITE_OK);
	CHECK_INT(sqlite3_step(bad), SQLITE_ERROR);
	CHECK_HAS(sqlite3_errmsg(s.db), "must be 1 to 4096");
	sqlite3_finalize(bad);
	zc_store_close(&s);
	free(path);
}

/* Issue 17 review: zc_postings(recall_fts, n, scan) walks the first scan
 * rows of the doclist (every row if scan < 0) and hands back the n with
 * the most instances, ties in rowid order (recall: the newest), most
 * first — the same rows as sorting what the statement reads. Records of
 * tf 1, 2 and 3 interleaved, so the window and the order both count. */
struct tfrow {
	sqlite3_int64 rowid;
	int tf;
};

static int by_tf_rowid(const void *a, const void *b)
{
	const struct tfrow *x = a, *y = b;
	if (x->tf != y->tf)
		return x->tf > y->tf ? -1 : 1;
	return x->rowid < y->rowid ? -1 : x->rowid > y->rowid;
}

static void issue17_zc_postings_by_tf_keeps_the_highest(void)
{
	char *path = db_path(t_tmpdir());
	struct zc_store s = {0};
	struct zc_err e = {0};
	CHECK_INT(zc_store_open(&s, path, &e), ZCOR_OK);
	CHECK_INT(sqlite3_exec(s.db,
			       "WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 400) "
			       "INSERT INTO nodes(id, title, content, title_norm, scope, created_at, "
			       "updated_at) SELECT 'm' || i, 'zqt' || i, CASE i % 7 WHEN 0 THEN 'zqw zqw zqw' "
			       "WHEN 3 THEN 'zqw zqw x' ELSE 'zqw y z' END, 'zqt', 'global', i, i FROM k",
			       NULL, NULL, NULL),
		  SQLITE_OK);
	CHECK_INT(zc_store_recall_catch_up(&s, -1, &e), ZCOR_OK);
	const char *phrase = "\"global\x1fzqw\"";
	sqlite3_stmt *a = NULL;
	CHECK_INT(sqlite3_prepare_v2(s.db,
				     "SELECT rowid, zc_tf(recall_fts) FROM recall_fts WHERE recall_fts MATCH ?1 "
				     "ORDER BY rowid",
				     -1, &a, NULL),
		  SQLITE_OK);
	sqlite3_bind_text(a, 1, phrase, -1, SQLITE_STATIC);
	struct tfrow all[400];
	int nall = 0;
	while (nall < 400 && sqlite3_step(a) == SQLITE_ROW) {
		all[nall].rowid = sqlite3_column_int64(a, 0);
		all[nall++].tf = sqlite3_column_int(a, 1);
	}
	sqlite3_finalize(a);
	CHECK_INT(nall, 400);
	static const int scans[] = {-1, 1, 20, 150, 400, 1000};
	static const int counts[] = {1, 5, 57, 128, 400};
	for (size_t si = 0; si < sizeof(scans) / sizeof(scans[0]); si++)
		for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++) {
			int scan = scans[si], n = counts[ci];
			int w = scan < 0 || scan > nall ? nall : scan;
			struct tfrow want[400];
			memcpy(want, all, (size_t)w * sizeof(*want));
			qsort(want, (size_t)w, sizeof(*want), by_tf_rowid);
			int nwant = w < n ? w : n;
			sqlite3_stmt *b = NULL;
			CHECK_INT(sqlite3_prepare_v2(s.db,
						     "SELECT zc_postings(recall_fts, ?2, ?3) FROM recall_fts WHERE "
						     "recall_fts MATCH ?1 LIMIT 1",
						     -1, &b, NULL),
				  SQLITE_OK);
			sqlite3_bind_text(b, 1, phrase, -1, SQLITE_STATIC);
			sqlite3_bind_int(b, 2, n);
			sqlite3_bind_int(b, 3, scan);
			CHECK_INT(sqlite3_step(b), SQLITE_ROW);
			const char *blob = sqlite3_column_blob(b, 0);
			int got = sqlite3_column_bytes(b, 0) / (int)sizeof(struct zc_posting);
			CHECK_INT(got, nwant);
			for (int i = 0; i < got && i < nwant; i++) {
				struct zc_posting p;
				memcpy(&p, blob + (size_t)i * sizeof(p), sizeof(p));
				if (p.rowid != want[i].rowid || p.tf != want[i].tf) {
					fprintf(stderr, "  scan %d n %d row %d: (%lld, %d), want (%lld, %d)\n", scan, n, i,
						(long long)p.rowid, p.tf, (long long)want[i].rowid, want[i].tf);
					t_failures++;
					break;
				}
			}
			sqlite3_finalize(b);
		}
	zc_store_close(&s);
	free(path);
}

const struct t_case t_cases[] = {
	{"store_open_migrate_reopen", store_open_migrate_reopen},
	{"stmt_cache_reuses_and_resets", stmt_cache_reuses_and_resets},
	{"stmt_cache_never_evicts_a_statement_in_use", stmt_cache_never_evicts_a_statement_in_use},
	{"store_transactions", store_transactions},
	{"issue14_recall_catch_up_reads_only_the_batch", issue14_recall_catch_up_reads_only_the_batch},
	{"issue17_zc_postings_same_rows_as_the_statement", issue17_zc_postings_same_rows_as_the_statement},
	{"issue17_zc_postings_by_tf_keeps_the_highest", issue17_zc_postings_by_tf_keeps_the_highest},
	{0},
};
