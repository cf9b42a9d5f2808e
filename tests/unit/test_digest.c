/*
 * test_digest.c — issue 16: the digest rules that read better in C: the
 * next daily wake in local time (a day boundary, a DST change) and the
 * due rule (today's date, digestMinLines). The run and the schedule are
 * tested through the CLI and serve (tests/e2e/digest*.test.mjs).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <sqlite3.h>

#include "agent/digest.h"
#include "harness.h"
#include "memory/digest.h"
#include "memory/transcript.h"

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

/* The digest's input reads the lines it sends, not the conversation's
 * whole log: its work at 3,000 logged messages is about that at 300
 * (schema 16's messages_conv_seq; without it the query read and sorted
 * every message of the conversation). */
struct zc_mem *zc_bench_mem(zcor *z);

static int count_op(void *ud)
{
	++*(long long *)ud;
	return 0;
}

static long long input_ops(long n)
{
	zcor *z = t_open();
	for (long i = 0; i < n; i += 100) {
		json_t *msgs = json_array();
		for (long k = i; k < i + 100 && k < n; k++) {
			char id[32], text[64];
			snprintf(id, sizeof(id), "m%ld", k);
			snprintf(text, sizeof(text), "第%ld句话", k);
			json_array_append_new(msgs, json_pack("{s:s, s:s, s:s}", "id", id, "senderId", "1",
							      "text", text));
		}
		json_t *b = json_pack("{s:o, s:b}", "messages", msgs, "recall", 0);
		char *body = json_dumps(b, JSON_COMPACT), *out = NULL;
		CHECK_INT(zcor_log_messages(z, NULL, "group:1", body, &out), ZCOR_OK);
		zcor_free(out);
		free(body);
		json_decref(b);
	}
	t_sql_exec(z, "UPDATE conversations SET lines_since_digest = 10 WHERE key = 'group:1'");
	struct zc_mem *m = zc_bench_mem(z);
	struct zc_err e = {0};
	json_t *in = NULL;
	long long ops = 0;
	sqlite3_progress_handler(m->store.db, 1, count_op, &ops);
	CHECK_INT(zc_digest_input(m, "group:1", 60000, &in, &e), ZCOR_OK);
	sqlite3_progress_handler(m->store.db, 0, NULL, NULL);
	json_decref(in);
	zcor_close(z);
	return ops;
}

static void issue16_digest_input_reads_only_its_lines(void)
{
	long long small = input_ops(300), big = input_ops(3000);
	if (!(big < 2 * small))
		fprintf(stderr, "  the digest's input: %lld VM steps at 300 messages, %lld at 3000\n", small, big);
	CHECK(small > 0 && big < 2 * small);
}

/* A newest line longer than digestMaxChars goes cut to fit, marked, so
 * a run has something to read (it was "nothing new" on every run). */
static void issue16_digest_input_cuts_an_overlong_newest_line(void)
{
	zcor *z = t_open();
	char text[4600];
	for (int i = 0; i < 1500; i++)
		memcpy(text + 3 * i, "长", 3);
	text[3 * 1500] = '\0';
	json_t *b = json_pack("{s:[{s:s, s:s, s:s}, {s:s, s:s, s:s}], s:b}", "messages", "id", "a",
			      "senderId", "1", "text", "早一点的", "id", "b", "senderId", "1", "text", text,
			      "recall", 0);
	char *body = json_dumps(b, JSON_COMPACT), *out = NULL;
	CHECK_INT(zcor_log_messages(z, NULL, "group:1", body, &out), ZCOR_OK);
	zcor_free(out);
	free(body);
	json_decref(b);
	struct zc_mem *m = zc_bench_mem(z);
	struct zc_err e = {0};
	json_t *in = NULL;
	CHECK_INT(zc_digest_input(m, "group:1", 1000, &in, &e), ZCOR_OK);
	CHECK_INT(json_integer_value(json_object_get(in, "sentLines")), 1);
	CHECK(json_is_true(json_object_get(in, "cut")));
	CHECK(json_integer_value(json_object_get(in, "chars")) <= 1000);
	CHECK_HAS(json_string_value(json_object_get(in, "text")), "长长长");
	CHECK_HAS(json_string_value(json_object_get(in, "text")), "这一行太长");
	json_decref(in);
	zcor_close(z);
}

/* Schema 16 from 15: the index comes with the migration. */
static void issue16_migration_15_to_16(void)
{
	zcor *z = t_open();
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", zcor_dir(z));
	t_sql_exec(z, "DROP INDEX messages_conv_seq");
	t_sql_exec(z, "PRAGMA user_version = 15");
	zcor_close(z);
	z = t_open_dir(dir);
	CHECK_INT(t_sql_int(dir, "PRAGMA user_version"), T_SCHEMA);
	CHECK_INT(t_sql_int(dir, "SELECT count(*) FROM sqlite_schema WHERE name = 'messages_conv_seq'"), 1);
	zcor_close(z);
}

static int64_t fixed_now(void *ud) { return *(const int64_t *)ud; }

/* issue16_done_date_is_the_start_date: a run that starts at 23:59:30
 * local and is recorded at 00:00:30 marks the digest done on the day it
 * started (it was that day's digest), so the next day's wake is not
 * skipped as "digested today". */
static void issue16_done_date_is_the_start_date(void)
{
	static const struct zcor_ctx ctx = {ZCOR_ACTOR_DIGEST, NULL};
	setenv("TZ", "Asia/Shanghai", 1);
	tzset();
	struct zc_mem m;
	struct zc_err e = {0};
	CHECK_INT(zc_mem_open(&m, t_tmpdir(), &e), ZCOR_OK);
	static const struct zcor_ctx host = {ZCOR_ACTOR_CLI, NULL};
	json_t *batch = json_pack("{s:[{s:s, s:s, s:s}]}", "messages", "id", "a", "senderId", "1",
				  "text", "x");
	json_t *logged = NULL;
	CHECK_INT(zc_transcript_log(&m, &host, "group:1", batch, &logged, &e), ZCOR_OK);
	json_decref(batch);
	json_decref(logged);
	int64_t started = utc(2026, 11, 30, 15, 59, 30); /* 23:59:30 in Shanghai */
	int64_t now = utc(2026, 11, 30, 16, 0, 30);      /* 00:00:30 on 12-01 */
	m.now_ms = fixed_now;
	m.clock_ud = &now;
	json_t *fin = json_pack("{s:s, s:s, s:I, s:I, s:s, s:i, s:i, s:i, s:b, s:n, s:{}}",
				"conversation", "group:1", "owner", "o", "startedAt", (json_int_t)started,
				"endedAt", (json_int_t)now, "status", "ok", "lines", 1, "sentLines", 1,
				"chars", 10, "cut", 0, "error", "record");
	json_t *out = NULL;
	CHECK_INT(zc_mem_run(&m, &ctx, &zc_op_digest_finish, fin, &out, &e), ZCOR_OK);
	CHECK_STR(json_string_value(json_object_get(json_object_get(out, "conversation"),
						    "lastDigestDate")),
		  "2026-11-30");
	json_decref(fin);
	json_decref(out);
	zc_mem_close(&m);
	setenv("TZ", "UTC", 1);
	tzset();
}

/* issue16_digest_lease: schema 17 from 16: the turn's lease moves from
 * turn_state into leases (a turn running across the upgrade stays held),
 * and the migration runs again harmlessly. */
static void issue16_migration_16_to_17(void)
{
	zcor *z = t_open();
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", zcor_dir(z));
	t_sql_exec(z, "DROP TABLE leases");
	t_sql_exec(z, "INSERT INTO turn_state(conversation, cursor, lease_owner, lease_until) "
		      "VALUES ('console:a', 3, 'pid:1:1:1', 9999999999999)");
	t_sql_exec(z, "PRAGMA user_version = 16");
	zcor_close(z);
	z = t_open_dir(dir);
	CHECK_INT(t_sql_int(dir, "PRAGMA user_version"), T_SCHEMA);
	CHECK_INT(t_sql_int(dir, "SELECT count(*) FROM leases WHERE kind = 'turn' AND "
				 "conversation = 'console:a' AND owner = 'pid:1:1:1'"), 1);
	CHECK_INT(t_sql_int(dir, "SELECT count(*) FROM turn_state WHERE lease_owner IS NOT NULL"), 0);
	CHECK_INT(t_sql_int(dir, "SELECT cursor FROM turn_state WHERE conversation = 'console:a'"), 3);
	t_sql_exec(z, "PRAGMA user_version = 16");
	zcor_close(z);
	z = t_open_dir(dir);
	CHECK_INT(t_sql_int(dir, "PRAGMA user_version"), T_SCHEMA);
	CHECK_INT(t_sql_int(dir, "SELECT count(*) FROM leases"), 1);
	zcor_close(z);
}

/* Schema 15 from 14: a store without the digest records gets their
 * table, and a run's record goes into it. */
static void issue16_migration_14_to_15(void)
{
	zcor *z = t_open();
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", zcor_dir(z));
	CHECK_INT(t_sql_int(dir, "PRAGMA user_version"), T_SCHEMA);
	t_sql_exec(z, "DROP TABLE digests");
	t_sql_exec(z, "PRAGMA user_version = 14");
	zcor_close(z);
	CHECK_INT(t_sql_int(dir, "SELECT count(*) FROM sqlite_schema WHERE name LIKE 'digests%'"), 0);
	z = t_open_dir(dir);
	CHECK_INT(t_sql_int(dir, "PRAGMA user_version"), T_SCHEMA);
	CHECK_INT(t_sql_int(dir, "SELECT count(*) FROM sqlite_schema WHERE name IN ('digests', 'digests_conv')"), 2);
	char *out = NULL;
	CHECK_INT(zcor_digests(z, NULL, NULL, &out), ZCOR_OK);
	CHECK_HAS(out, "\"items\":[]");
	zcor_free(out);
	zcor_close(z);
}

/* A failed digest's refusal carries {digest, status} in its details, and
 * the detail object is released once: zc_json_err_detail takes it over,
 * and digest.c released it a second time (the same defect as issue 15's
 * failed turn; a use-after-free that ASan reports here). */
static void issue16_failed_digest_details_released_once(void)
{
	struct t_refusing_model rm;
	int port = t_refusing_model_start(&rm);
	CHECK(port > 0);
	zcor *z = t_open();
	char cfg[200];
	snprintf(cfg, sizeof(cfg),
		 "{\"provider\": {\"baseUrl\": \"http://127.0.0.1:%d/v1\", \"model\": \"m\", "
		 "\"maxRetries\": 0}}",
		 port);
	CHECK_INT(zcor_config_set(z, cfg), ZCOR_OK);
	char *out = NULL;
	CHECK_INT(zcor_log_messages(z, NULL, "group:5",
				    "{\"messages\": [{\"id\": \"1\", \"senderId\": \"7\", \"text\": \"明天开会\"}]}",
				    &out),
		  ZCOR_OK);
	zcor_free(out);
	out = NULL;
	CHECK_INT(zcor_digest(z, "group:5", NULL, &out), ZCOR_EPROVIDER);
	CHECK_HAS(zcor_errmsg(z), "(recorded as digest");
	CHECK_HAS(zcor_errjson(z), "\"status\":\"error\"");
	CHECK_HAS(zcor_errjson(z), "\"digest\":");
	zcor_free(out);
	zcor_close(z);
	t_refusing_model_stop(&rm);
}

const struct t_case t_cases[] = {
	{"issue16_failed_digest_details_released_once", issue16_failed_digest_details_released_once},
	{"issue16_migration_14_to_15", issue16_migration_14_to_15},
	{"issue16_migration_15_to_16", issue16_migration_15_to_16},
	{"issue16_migration_16_to_17", issue16_migration_16_to_17},
	{"issue16_done_date_is_the_start_date", issue16_done_date_is_the_start_date},
	{"issue16_digest_input_cuts_an_overlong_newest_line", issue16_digest_input_cuts_an_overlong_newest_line},
	{"issue16_digest_input_reads_only_its_lines", issue16_digest_input_reads_only_its_lines},
	{"issue16_next_wake_is_the_local_hour_strictly_after_now",
	 issue16_next_wake_is_the_local_hour_strictly_after_now},
	{"issue16_due_needs_min_lines_and_no_digest_today", issue16_due_needs_min_lines_and_no_digest_today},
	{0},
};
