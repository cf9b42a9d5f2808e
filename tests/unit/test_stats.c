/*
 * test_stats.c — issue 18's Stats panel (zcor_memory_stats, stats.c): the
 * figures on a store built through the tools with a set clock — counts by
 * kind, scope and tier, created per day and week, most and least
 * recalled, stale, expired — and a caller bound to a conversation
 * counting only what its scope may see; bad parameters refused naming
 * them; the page's call leaves no history record.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"

#define DAY 86400000LL
/* 2026-06-15T12:00:00Z */
#define T0 1781524800000LL

static int64_t clock_of(void *ud) { return *(int64_t *)ud; }

static json_t *stats(zcor *z, const char *conv, const char *query, int *rc)
{
	struct zcor_ctx ctx = {ZCOR_ACTOR_UI, conv};
	char *out = NULL;
	*rc = zcor_memory_stats(z, &ctx, query, &out);
	return t_answer(z, *rc, out);
}

/* The count of `name` = value in a by* list, or -1 when absent. */
static long long count_of(json_t *list, const char *name, const char *value)
{
	size_t i;
	json_t *x;
	json_array_foreach(list, i, x) if (strcmp(t_str(x, name), value) == 0) return t_int(x, "count");
	return -1;
}

/* The count of the growth bucket starting at day (YYYY-MM-DD), or -1. */
static long long bucket(json_t *s, const char *day)
{
	return count_of(t_get(s, "growth.items"), "start", day);
}

static char *write_at(zcor *z, int64_t *now, int64_t at, const char *conv, const char *title)
{
	*now = at;
	json_t *r = t_call_ok(z, conv, "zcor_memory_write", "{\"title\":\"%s\",\"content\":\"内容 %s\"}", title, title);
	char *id = strdup(t_str(r, "node.id"));
	json_decref(r);
	return id;
}

static void issue18_stats_counts_on_a_built_store(void)
{
	setenv("TZ", "UTC", 1); /* the local day of the growth buckets */
	tzset();
	zcor *z = t_open();
	int64_t now = T0;
	zcor_set_clock(z, clock_of, &now);
	char *a = write_at(z, &now, T0, NULL, "今天的");                   /* 06-15 */
	char *b = write_at(z, &now, T0 - 2 * DAY, NULL, "前天的");         /* 06-13 */
	char *c = write_at(z, &now, T0 - 2 * DAY, "group:1", "群一的");    /* 06-13 */
	char *d = write_at(z, &now, T0 - 10 * DAY, "group:2", "群二的");   /* 06-05 */
	char *e = write_at(z, &now, T0 - 40 * DAY, NULL, "很久以前的");    /* 05-06 */
	char *f = write_at(z, &now, T0 - 9 * DAY, NULL, "被取代的");       /* 06-06 */
	char *g = write_at(z, &now, T0 - 3 * DAY, NULL, "一个表情");       /* 06-12 */
	now = T0;
	json_decref(t_call_ok(z, NULL, "zcor_memory_supersede", "{\"ids\":[\"%s\"],\"replacementId\":\"%s\",\"reason\":\"新的\"}", f, a));
	json_decref(t_call_ok(z, NULL, "zcor_memory_important", "{\"id\":\"%s\",\"important\":true}", b));
	/* what the tools do not set here: hits, a tier, a kind, an expiry */
	t_sql_exec(z, "UPDATE nodes SET hits = 5, last_hit_at = %lld WHERE id = '%s'", T0 - DAY, b);
	t_sql_exec(z, "UPDATE nodes SET hits = 2, last_hit_at = %lld WHERE id = '%s'", T0 - 3 * DAY, c);
	t_sql_exec(z, "UPDATE nodes SET hits = 9, last_hit_at = %lld WHERE id = '%s'", T0 - DAY, d);
	t_sql_exec(z, "UPDATE nodes SET tier = 'archive' WHERE id = '%s'", d);
	t_sql_exec(z, "UPDATE nodes SET kind = 'sticker' WHERE id = '%s'", g);
	t_sql_exec(z, "UPDATE nodes SET expires = '2026-06-01' WHERE id = '%s'", e);
	t_sql_exec(z, "UPDATE nodes SET expires = '2026-06-15' WHERE id = '%s'", g); /* today: not yet */
	long long hist = t_sql_int(zcor_dir(z), "SELECT count(*) FROM history");

	/* the operator: everything */
	int rc;
	json_t *s = stats(z, NULL, NULL, &rc);
	CHECK_INT(rc, ZCOR_OK);
	CHECK_INT(t_int(s, "total"), 7);
	CHECK_INT(t_int(s, "current"), 6);
	CHECK_INT(t_int(s, "superseded"), 1);
	CHECK_INT(t_int(s, "important"), 1);
	CHECK_INT(t_int(s, "neverRecalled"), 3); /* a, e, g */
	CHECK_INT(count_of(t_get(s, "byKind"), "kind", "memory"), 5);
	CHECK_INT(count_of(t_get(s, "byKind"), "kind", "sticker"), 1);
	CHECK_STR(t_str(s, "byKind.0.kind"), "memory"); /* the largest first */
	CHECK_INT(count_of(t_get(s, "byScope"), "scope", "global"), 4);
	CHECK_INT(count_of(t_get(s, "byScope"), "scope", "group:1"), 1);
	CHECK_INT(count_of(t_get(s, "byScope"), "scope", "group:2"), 1);
	CHECK_INT(count_of(t_get(s, "byTier"), "tier", "hot"), 5);
	CHECK_INT(count_of(t_get(s, "byTier"), "tier", "archive"), 1);
	/* created per day: 30 buckets, 05-17 … 06-15, zeros included; the
	 * superseded one counts (it was created), the one of 05-06 is before */
	CHECK_STR(t_str(s, "growth.bucket"), "day");
	CHECK_INT(json_array_size(t_get(s, "growth.items")), 30);
	CHECK_STR(t_str(s, "growth.items.0.start"), "2026-05-17");
	CHECK_STR(t_str(s, "growth.items.29.start"), "2026-06-15");
	CHECK_INT(bucket(s, "2026-06-15"), 1);
	CHECK_INT(bucket(s, "2026-06-13"), 2);
	CHECK_INT(bucket(s, "2026-06-12"), 1);
	CHECK_INT(bucket(s, "2026-06-06"), 1);
	CHECK_INT(bucket(s, "2026-06-05"), 1);
	CHECK_INT(bucket(s, "2026-06-14"), 0);
	CHECK_INT(bucket(s, "2026-05-06"), -1);
	/* most recalled: by hits; least: what recall may inject (not the
	 * archived d), fewest hits first */
	CHECK_STR(t_str(s, "mostRecalled.0.id"), d);
	CHECK_STR(t_str(s, "mostRecalled.1.id"), b);
	CHECK_STR(t_str(s, "mostRecalled.2.id"), c);
	CHECK_INT(json_array_size(t_get(s, "mostRecalled")), 3);
	CHECK_INT(t_int(s, "mostRecalled.1.hits"), 5);
	CHECK_STR(t_str(s, "mostRecalled.1.lastHitAt"), "2026-06-14T12:00:00.000Z");
	CHECK_STR(t_str(s, "mostRecalled.1.title"), "前天的");
	CHECK_STR(t_str(s, "leastRecalled.0.id"), a); /* 0 hits, the first made */
	CHECK_STR(t_str(s, "leastRecalled.1.id"), e);
	CHECK_STR(t_str(s, "leastRecalled.3.id"), c);
	CHECK_INT(json_array_size(t_get(s, "leastRecalled")), 5);
	CHECK_STR(t_str(s, "leastRecalled.4.id"), b);
	/* stale (30 days): neither recalled nor changed since 05-16: e only */
	CHECK_INT(t_int(s, "stale.days"), 30);
	CHECK_INT(t_int(s, "stale.count"), 1);
	CHECK_STR(t_str(s, "stale.items.0.id"), e);
	/* expired: e (06-01); g expires today, not yet */
	CHECK_INT(t_int(s, "expired.count"), 1);
	CHECK_STR(t_str(s, "expired.items.0.id"), e);
	CHECK_STR(t_str(s, "expired.items.0.expires"), "2026-06-01");
	CHECK_STR(t_str(s, "now"), "2026-06-15T12:00:00.000Z");
	json_decref(s);

	/* staleDays 2 and a limit of 1: the count is the whole, one listed
	 * (b and c were changed two days ago to the millisecond: not before) */
	s = stats(z, NULL, "{\"staleDays\":\"2\",\"limit\":1}", &rc);
	CHECK_INT(rc, ZCOR_OK);
	CHECK_INT(t_int(s, "stale.count"), 2); /* e, g */
	CHECK_INT(json_array_size(t_get(s, "stale.items")), 1);
	CHECK_STR(t_str(s, "stale.items.0.id"), e);
	CHECK_INT(json_array_size(t_get(s, "mostRecalled")), 1);
	json_decref(s);

	/* per Monday week: 2026-06-15 is a Monday */
	s = stats(z, NULL, "{\"bucket\":\"week\",\"buckets\":8}", &rc);
	CHECK_INT(rc, ZCOR_OK);
	CHECK_STR(t_str(s, "growth.bucket"), "week");
	CHECK_INT(json_array_size(t_get(s, "growth.items")), 8);
	CHECK_STR(t_str(s, "growth.items.7.start"), "2026-06-15");
	CHECK_INT(bucket(s, "2026-06-15"), 1);
	CHECK_INT(bucket(s, "2026-06-08"), 2 + 1); /* b, c (06-13), g (06-12) */
	CHECK_INT(bucket(s, "2026-06-01"), 2);     /* d (06-05), f (06-06) */
	CHECK_INT(bucket(s, "2026-05-04"), 1);     /* e (05-06) */
	json_decref(s);

	/* a caller bound to group:1: global memory and its own only */
	s = stats(z, "group:1", NULL, &rc);
	CHECK_INT(rc, ZCOR_OK);
	CHECK_INT(t_int(s, "total"), 6);
	CHECK_INT(t_int(s, "current"), 5);
	CHECK_INT(count_of(t_get(s, "byScope"), "scope", "group:1"), 1);
	CHECK_INT(count_of(t_get(s, "byScope"), "scope", "group:2"), -1);
	CHECK_INT(count_of(t_get(s, "byTier"), "tier", "archive"), -1);
	CHECK_INT(bucket(s, "2026-06-05"), 0);
	CHECK_STR(t_str(s, "mostRecalled.0.id"), b);
	CHECK_INT(json_array_size(t_get(s, "mostRecalled")), 2);
	json_decref(s);
	s = stats(z, "private:3", NULL, &rc);
	CHECK_INT(rc, ZCOR_OK);
	CHECK_INT(count_of(t_get(s, "byScope"), "scope", "group:1"), -1);
	CHECK_INT(t_int(s, "current"), 4);
	json_decref(s);

	/* refused, naming the parameter; nothing recorded for the page */
	static const struct {
		const char *query, *field;
	} bad[] = {{"{\"staleDays\":0}", "staleDays"},	  {"{\"staleDays\":\"x\"}", "staleDays"},
		   {"{\"bucket\":\"month\"}", "bucket"}, {"{\"buckets\":367}", "buckets"},
		   {"{\"limit\":51}", "limit"},		  {"{\"since\":1}", "since"},
		   {"{\"staleDays\":\"\"}", "staleDays"}};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		s = stats(z, NULL, bad[i].query, &rc);
		CHECK_INT(rc, ZCOR_EINVAL);
		CHECK_STR(t_str(s, "error.details.field"), bad[i].field);
		json_decref(s);
	}
	s = stats(z, NULL, "[]", &rc);
	CHECK_INT(rc, ZCOR_EINVAL);
	json_decref(s);
	CHECK_INT(t_sql_int(zcor_dir(z), "SELECT count(*) FROM history"), hist);

	free(a);
	free(b);
	free(c);
	free(d);
	free(e);
	free(f);
	free(g);
	zcor_close(z);
}

/* The hits a handle holds (not yet folded into nodes.hits) count. */
static void issue18_stats_folds_the_handles_hits(void)
{
	zcor *z = t_open();
	json_t *r = t_call_ok(z, NULL, "zcor_memory_write", "{\"title\":\"猫咪\",\"content\":\"猫咪喜欢晒太阳\",\"keywords\":[\"猫咪\"]}");
	char *id = strdup(t_str(r, "node.id"));
	json_decref(r);
	char *out = NULL;
	CHECK_INT(zcor_recall(z, "{\"conversation\":\"console:t\",\"messages\":[{\"text\":\"猫咪在干嘛\"}]}", &out), ZCOR_OK);
	zcor_free(out);
	int rc;
	json_t *s = stats(z, NULL, NULL, &rc);
	CHECK_INT(rc, ZCOR_OK);
	CHECK_STR(t_str(s, "mostRecalled.0.id"), id);
	CHECK_INT(t_int(s, "mostRecalled.0.hits"), 1);
	CHECK_INT(t_int(s, "neverRecalled"), 0);
	json_decref(s);
	free(id);
	zcor_close(z);
}

const struct t_case t_cases[] = {
	{"issue18_stats_counts_on_a_built_store", issue18_stats_counts_on_a_built_store},
	{"issue18_stats_folds_the_handles_hits", issue18_stats_folds_the_handles_hits},
	{0},
};
