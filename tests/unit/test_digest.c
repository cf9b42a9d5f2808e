/*
 * test_digest.c — issue 16: the digest rules that read better in C: the
 * next daily wake in local time (a day boundary, a DST change) and the
 * due rule (today's date, digestMinLines). The run and the schedule are
 * tested through the CLI and serve (tests/e2e/digest*.test.mjs).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/digest.h"
#include "harness.h"
#include "memory/digest.h"

static int64_t utc(int y, int mo, int d, int h, int mi, int s)
{
	struct tm tm = {.tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_hour = h,
			.tm_min = mi, .tm_sec = s};
	return (int64_t)timegm(&tm) * 1000;
}

static void issue16_next_wake_is_the_local_hour_strictly_after_now(void)
{
	setenv("TZ", "UTC", 1);
	tzset();
	CHECK_INT(zc_digest_next_wake(utc(2026, 12, 1, 3, 59, 59), 4), utc(2026, 12, 1, 4, 0, 0));
	CHECK_INT(zc_digest_next_wake(utc(2026, 12, 1, 4, 0, 0), 4), utc(2026, 12, 2, 4, 0, 0));
	CHECK_INT(zc_digest_next_wake(utc(2026, 12, 31, 23, 0, 0), 0), utc(2027, 1, 1, 0, 0, 0));
	setenv("TZ", "Asia/Shanghai", 1);
	tzset();
	CHECK_INT(zc_digest_next_wake(utc(2026, 11, 30, 19, 0, 0), 4), utc(2026, 11, 30, 20, 0, 0));
	/* New York leaves DST on 2026-11-01: 04:00 EST is 09:00 UTC, the day
	 * before 04:00 EDT was 08:00 UTC */
	setenv("TZ", "America/New_York", 1);
	tzset();
	CHECK_INT(zc_digest_next_wake(utc(2026, 10, 31, 9, 0, 0), 4), utc(2026, 11, 1, 9, 0, 0));
	CHECK_INT(zc_digest_next_wake(utc(2026, 10, 31, 7, 0, 0), 4), utc(2026, 10, 31, 8, 0, 0));
	setenv("TZ", "UTC", 1);
	tzset();
}

static void issue16_due_needs_min_lines_and_no_digest_today(void)
{
	json_t *c = json_pack("{s:I, s:s}", "linesSinceDigest", (json_int_t)20, "lastDigestDate",
			      "2026-11-30");
	CHECK(zc_digest_due(c, "2026-12-01", 20));
	CHECK(!zc_digest_due(c, "2026-12-01", 21));
	CHECK(!zc_digest_due(c, "2026-11-30", 20));
	json_object_del(c, "lastDigestDate");
	CHECK(zc_digest_due(c, "2026-11-30", 1));
	json_decref(c);
}

/* Schema 15 from 14: a store without the digest records gets their
 * table, and a run's record goes into it. */
static void issue16_migration_14_to_15(void)
{
	zcor *z = t_open();
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", zcor_dir(z));
	CHECK_INT(t_sql_int(dir, "PRAGMA user_version"), 15);
	t_sql_exec(z, "DROP TABLE digests");
	t_sql_exec(z, "PRAGMA user_version = 14");
	zcor_close(z);
	CHECK_INT(t_sql_int(dir, "SELECT count(*) FROM sqlite_schema WHERE name LIKE 'digests%'"), 0);
	z = t_open_dir(dir);
	CHECK_INT(t_sql_int(dir, "PRAGMA user_version"), 15);
	CHECK_INT(t_sql_int(dir, "SELECT count(*) FROM sqlite_schema WHERE name IN ('digests', 'digests_conv')"), 2);
	char *out = NULL;
	CHECK_INT(zcor_digests(z, NULL, NULL, &out), ZCOR_OK);
	CHECK_HAS(out, "\"items\":[]");
	zcor_free(out);
	zcor_close(z);
}

const struct t_case t_cases[] = {
	{"issue16_migration_14_to_15", issue16_migration_14_to_15},
	{"issue16_next_wake_is_the_local_hour_strictly_after_now",
	 issue16_next_wake_is_the_local_hour_strictly_after_now},
	{"issue16_due_needs_min_lines_and_no_digest_today", issue16_due_needs_min_lines_and_no_digest_today},
	{0},
};
