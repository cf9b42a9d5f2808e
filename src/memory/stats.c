/*
 * stats.c — the Memory page's Stats panel (issue 18): counts of the
 * memories by kind, scope and tier, how many were created per day or
 * week, the most and least recalled, the stale and the expired. Memory
 * layer, one read operation (ZC_OP_READ: the operator's page leaves no
 * history record).
 *
 * Each figure is one SQL aggregate over nodes, filtered by the caller's
 * visible scope (ZC_SCOPE_VISIBLE_SQL: a caller bound to a conversation
 * counts global memory and its own only, as it reads them); C loops only
 * over the rows a figure returns (a few dozen), never over the store.
 */
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/timeutil.h"
#include "base/utf8.h"
#include "memory/memory.h"

#define DAY_MS 86400000LL

/* The arguments: {staleDays?, bucket?, buckets?, limit?}. */
struct stats_args {
	long long stale_days, buckets, limit;
	int week;
};

/* Optional whole number `key` in [min, max] (default dflt when absent):
 * an integer, or its decimal text (a query string's value). */
static int int_arg(json_t *args, const char *key, long long dflt, long long min, long long max,
		   long long *out, struct zc_err *e)
{
	json_t *v = json_object_get(args, key);
	*out = dflt;
	if (!v)
		return ZCOR_OK;
	if (json_is_string(v) && !*json_string_value(v)) {
		/* present but empty ("staleDays="): a blank box must not
		 * quietly mean the default */
		int rc = zc_fail(e, ZCOR_EINVAL,
				 "argument '%s': is empty; give a whole number from %lld to %lld, or leave it out",
				 key, min, max);
		zc_json_err_detail(e, json_pack("{s:s, s:s, s:I, s:I}", "field", key, "reason", "empty", "min",
						(json_int_t)min, "max", (json_int_t)max));
		return rc;
	}
	char *end = NULL;
	if (json_is_integer(v)) {
		*out = json_integer_value(v);
	} else if (json_is_string(v)) {
		*out = strtoll(json_string_value(v), &end, 10);
		if (*end)
			return zc_fail(e, ZCOR_EINVAL, "argument '%s': must be a whole number from %lld to %lld",
				       key, min, max);
	} else {
		return zc_fail(e, ZCOR_EINVAL, "argument '%s': must be a whole number from %lld to %lld",
			       key, min, max);
	}
	if (*out < min || *out > max)
		return zc_fail(e, ZCOR_EINVAL, "argument '%s': must be from %lld to %lld", key, min, max);
	return ZCOR_OK;
}

static int read_args(json_t *args, struct stats_args *a, struct zc_err *e)
{
	static const char *const known[] = {"staleDays", "bucket", "buckets", "limit"};
	const char *key;
	json_t *v;
	json_object_foreach(args, key, v) {
		size_t i = 0;
		while (i < sizeof(known) / sizeof(known[0]) && strcmp(key, known[i]))
			i++;
		if (i == sizeof(known) / sizeof(known[0]))
			return zc_fail(e, ZCOR_EINVAL,
				       "argument '%s': unknown; stats take staleDays, bucket, buckets, limit",
				       ZC_Q(key, 40));
	}
	const char *bucket = zc_json_str(args, "bucket");
	if (json_object_get(args, "bucket") && !bucket)
		return zc_fail(e, ZCOR_EINVAL, "argument 'bucket': must be \"day\" or \"week\"");
	a->week = bucket && strcmp(bucket, "week") == 0;
	if (bucket && *bucket && !a->week && strcmp(bucket, "day"))
		return zc_fail(e, ZCOR_EINVAL, "argument 'bucket': '%s' is not \"day\" or \"week\"",
			       ZC_Q(bucket, 30));
	int rc;
	if ((rc = int_arg(args, "staleDays", 30, 1, 3650, &a->stale_days, e)) ||
	    (rc = int_arg(args, "buckets", a->week ? 26 : 30, 1, 366, &a->buckets, e)) ||
	    (rc = int_arg(args, "limit", 10, 1, 50, &a->limit, e)))
		return rc;
	return ZCOR_OK;
}

/* ---- the figures -------------------------------------------------------- */

/* Every figure's statement binds ?1 now (ms), ?9 the scope (zc_bind_scope)
 * and its own from ?2 on. */
#define VISIBLE " FROM nodes WHERE " ZC_SCOPE_VISIBLE_SQL
#define CURRENT VISIBLE " AND superseded_by IS NULL"

static sqlite3_stmt *prepare(struct zc_op *op, const char *sql, struct zc_err *e)
{
	sqlite3_stmt *st = zc_stmt(&op->m->store, sql, e);
	if (st) {
		sqlite3_bind_int64(st, 1, op->now);
		zc_bind_scope(op, st);
	}
	return st;
}

static int finish(struct zc_op *op, sqlite3_stmt *st, int step, struct zc_err *e)
{
	sqlite3_reset(st);
	return step == SQLITE_DONE ? ZCOR_OK : zc_store_fail(&op->m->store, step, e, "counting the memories");
}

static const char *col(sqlite3_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(st, i);
}

/* total, current, superseded, important, neverRecalled */
static int totals(struct zc_op *op, json_t *out, struct zc_err *e)
{
	sqlite3_stmt *st = prepare(op,
				   "SELECT count(*), coalesce(sum(superseded_by IS NULL), 0),"
				   " coalesce(sum(superseded_by IS NULL AND important_seq IS NOT NULL), 0),"
				   " coalesce(sum(superseded_by IS NULL AND hits = 0), 0)" VISIBLE,
				   e);
	if (!st)
		return e->code;
	int step = sqlite3_step(st);
	if (step == SQLITE_ROW) {
		long long all = sqlite3_column_int64(st, 0), cur = sqlite3_column_int64(st, 1);
		json_object_set_new(out, "total", json_integer(all));
		json_object_set_new(out, "current", json_integer(cur));
		json_object_set_new(out, "superseded", json_integer(all - cur));
		json_object_set_new(out, "important", json_integer(sqlite3_column_int64(st, 2)));
		json_object_set_new(out, "neverRecalled", json_integer(sqlite3_column_int64(st, 3)));
		step = SQLITE_DONE;
	}
	return finish(op, st, step, e);
}

/* The current memories counted by one column: [{<name>, count}], the
 * largest first. */
static int by_column(struct zc_op *op, const char *sql, const char *name, json_t **out,
		     struct zc_err *e)
{
	sqlite3_stmt *st = prepare(op, sql, e);
	if (!st)
		return e->code;
	*out = json_array();
	int step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *x = json_object();
		zc_json_set_str(x, name, col(st, 0));
		json_object_set_new(x, "count", json_integer(sqlite3_column_int64(st, 1)));
		json_array_append_new(*out, x);
	}
	return finish(op, st, step, e);
}

#define BY(c) "SELECT " c ", count(*)" CURRENT " GROUP BY 1 ORDER BY 2 DESC, 1"

/* A created-per-bucket figure: every bucket of the last ?3 local days
 * (or Monday-weeks, ?2 = 1), oldest first, with its count (0 included),
 * from createdAt. The local day is the process's time zone, as the
 * digest's day and the log files' (zc_time_local_date). */
#define LOCAL "date(?1 / 1000, 'unixepoch', 'localtime')"
#define WEEK_OF(d) "date(" d ", 'weekday 0', '-6 days')"
#define GROWTH_SQL                                                                               \
	"WITH RECURSIVE b(start, n) AS ("                                                        \
	"  SELECT CASE WHEN ?2 THEN " WEEK_OF(LOCAL) " ELSE " LOCAL " END, 1"                   \
	"  UNION ALL SELECT date(start, CASE WHEN ?2 THEN '-7 days' ELSE '-1 days' END), n + 1"  \
	"  FROM b WHERE n < ?3),"                                                                 \
	" c(start, k) AS (SELECT CASE WHEN ?2 THEN "                                             \
	WEEK_OF("date(created_at / 1000, 'unixepoch', 'localtime')")                             \
	" ELSE date(created_at / 1000, 'unixepoch', 'localtime') END, count(*)" VISIBLE          \
	"  AND created_at >= ?4 GROUP BY 1)"                                                     \
	" SELECT b.start, coalesce(c.k, 0) FROM b LEFT JOIN c USING (start) ORDER BY b.start"

static int growth(struct zc_op *op, const struct stats_args *a, json_t **out, struct zc_err *e)
{
	sqlite3_stmt *st = prepare(op, GROWTH_SQL, e);
	if (!st)
		return e->code;
	sqlite3_bind_int(st, 2, a->week);
	sqlite3_bind_int64(st, 3, a->buckets);
	/* a bound below the first bucket (a day of slack for the zone) */
	sqlite3_bind_int64(st, 4, op->now - (a->buckets * (a->week ? 7 : 1) + 8) * DAY_MS);
	json_t *items = json_array();
	int step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW)
		json_array_append_new(items, json_pack("{s:s, s:I}", "start", col(st, 0), "count",
						       (json_int_t)sqlite3_column_int64(st, 1)));
	*out = json_pack("{s:s, s:o}", "bucket", a->week ? "week" : "day", "items", items);
	return finish(op, st, step, e);
}

/* A list of memories: id, title, kind, scope, hits, lastHitAt,
 * updatedAt, expires, from columns 0..7; column 8 (when wanted) the
 * count of all the rows the figure matched (count(*) OVER ()). */
#define ITEM_COLS "id, title, kind, scope, hits, last_hit_at, updated_at, expires"

static int listing(struct zc_op *op, sqlite3_stmt *st, long long *count, json_t **out,
		   struct zc_err *e)
{
	*out = json_array();
	if (count)
		*count = 0;
	int step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *x = json_object();
		zc_json_set_str(x, "id", col(st, 0));
		zc_json_set_str(x, "title", col(st, 1));
		zc_json_set_str(x, "kind", col(st, 2));
		zc_json_set_str(x, "scope", col(st, 3));
		json_object_set_new(x, "hits", json_integer(sqlite3_column_int64(st, 4)));
		zc_json_set_time(x, "lastHitAt",
				 sqlite3_column_type(st, 5) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 5));
		zc_json_set_time(x, "updatedAt", sqlite3_column_int64(st, 6));
		if (sqlite3_column_type(st, 7) != SQLITE_NULL)
			zc_json_set_str(x, "expires", col(st, 7));
		if (count)
			*count = sqlite3_column_int64(st, 8);
		json_array_append_new(*out, x);
	}
	return finish(op, st, step, e);
}

/* The records recall may inject (memory.h's gate), as the least recalled
 * and the stale are among them: a document or an archived record is never
 * recalled, so its 0 hits say nothing. */
#define INJECTABLE " AND " ZC_MAY_INJECT_SQL("", "")

static const char most_sql[] = "SELECT " ITEM_COLS CURRENT
			       " AND hits > 0 ORDER BY hits DESC, last_hit_at DESC, seq DESC LIMIT ?2";
static const char least_sql[] = "SELECT " ITEM_COLS CURRENT INJECTABLE
				" ORDER BY hits, coalesce(last_hit_at, 0), seq LIMIT ?2";
/* not recalled (or never) and not changed for ?3 ms: the oldest change first */
static const char stale_sql[] = "SELECT " ITEM_COLS ", count(*) OVER ()" CURRENT INJECTABLE
				" AND coalesce(last_hit_at, 0) < ?1 - ?3 AND updated_at < ?1 - ?3"
				" ORDER BY updated_at, seq LIMIT ?2";
/* recall's rule (recall_score.c): a record whose `expires` day (UTC) is
 * before today's */
static const char expired_sql[] =
	"SELECT " ITEM_COLS ", count(*) OVER ()" CURRENT
	" AND expires GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]*'"
	" AND substr(expires, 1, 10) < strftime('%Y-%m-%d', ?1 / 1000, 'unixepoch')"
	" ORDER BY expires, seq LIMIT ?2";

static int list_figure(struct zc_op *op, const char *sql, const struct stats_args *a, int counted,
		       json_t **out, struct zc_err *e)
{
	sqlite3_stmt *st = prepare(op, sql, e);
	if (!st)
		return e->code;
	sqlite3_bind_int64(st, 2, a->limit);
	if (sqlite3_bind_parameter_count(st) >= 3)
		sqlite3_bind_int64(st, 3, a->stale_days * DAY_MS);
	json_t *items = NULL;
	long long count = 0;
	int rc = listing(op, st, counted ? &count : NULL, &items, e);
	if (rc) {
		json_decref(items);
		return rc;
	}
	*out = counted ? json_pack("{s:I, s:o}", "count", (json_int_t)count, "items", items) : items;
	return ZCOR_OK;
}

static int memory_stats(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	struct stats_args a;
	json_t *o = json_object(), *kinds = NULL, *scopes = NULL, *tiers = NULL, *grow = NULL;
	json_t *most = NULL, *least = NULL, *stale = NULL, *expired = NULL;
	int rc;
	if ((rc = read_args(args, &a, e)) || (rc = totals(op, o, e)) ||
	    (rc = by_column(op, BY("kind"), "kind", &kinds, e)) ||
	    (rc = by_column(op, BY("scope"), "scope", &scopes, e)) ||
	    (rc = by_column(op, BY("tier"), "tier", &tiers, e)) || (rc = growth(op, &a, &grow, e)) ||
	    (rc = list_figure(op, most_sql, &a, 0, &most, e)) ||
	    (rc = list_figure(op, least_sql, &a, 0, &least, e)) ||
	    (rc = list_figure(op, stale_sql, &a, 1, &stale, e)) ||
	    (rc = list_figure(op, expired_sql, &a, 1, &expired, e)))
		goto out;
	json_object_set_new(stale, "days", json_integer(a.stale_days));
	zc_json_set_time(o, "now", op->now);
	json_object_set(o, "byKind", kinds);
	json_object_set(o, "byScope", scopes);
	json_object_set(o, "byTier", tiers);
	json_object_set(o, "growth", grow);
	json_object_set(o, "mostRecalled", most);
	json_object_set(o, "leastRecalled", least);
	json_object_set(o, "stale", stale);
	json_object_set(o, "expired", expired);
	*out = json_incref(o);
out:
	json_decref(o);
	json_decref(kinds);
	json_decref(scopes);
	json_decref(tiers);
	json_decref(grow);
	json_decref(most);
	json_decref(least);
	json_decref(stale);
	json_decref(expired);
	return rc;
}

const struct zc_opdef zc_op_memory_stats = {"memory stats", NULL, memory_stats, ZC_OP_READ};
