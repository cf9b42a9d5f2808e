/*
 * test_transcript.c — the message log (Q-LOG): admission rules and the
 * bot's own messages, conversation counters and slugs, redelivered ids,
 * bad input that changes nothing, digest bookkeeping, the qq_transcript
 * tool (ranges, single-character keywords, privacy between
 * conversations, Q-SCOPE), the inbound media cache (Q-STK) and the
 * seed-003 log files (export, tolerant import).
 *
 * Every case speaks the public interface (zcor.h) against a fresh memory
 * directory; SQL on memory.db only counts rows.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

/* 1x1 images: the extension must come from these bytes, not a name */
static const char GIF_B64[] = "R0lGODlhAQABAIAAAP///wAAACwAAAAAAQABAAACAkQBADs=";
static const char PNG_B64[] =
	"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
static const char JPG_B64[] = "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAEBAQ==";
static const char WEBP_B64[] = "UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==";

static int64_t clock_of(void *ud) { return *(int64_t *)ud; }

static json_t *parse(char *out)
{
	json_t *v = json_loads(out ? out : "null", JSON_DECODE_ANY, NULL);
	zcor_free(out);
	return v ? v : json_object();
}

/* Logs a batch (host plane) and returns the parsed answer. */
static json_t *log_batch(zcor *z, const char *conv, int *rc, const char *batch)
{
	char *out = NULL;
	int r = zcor_log_messages(z, NULL, conv, batch, &out);
	if (rc)
		*rc = r;
	return t_answer(z, r, out);
}

static void set_config(zcor *z, const char *json)
{
	int rc = zcor_config_set(z, json);
	if (rc)
		fprintf(stderr, "config: %s\n", zcor_errmsg(z));
	CHECK_INT(rc, ZCOR_OK);
}

/* (zcor_flush: read records are written a few milliseconds later) */
static long long count(zcor *z, const char *sql)
{
	zcor_flush(z);
	return t_sql_int(zcor_dir(z), sql);
}

/* The reason the message with this id was skipped, or NULL. */
static const char *skip_reason(json_t *res, const char *id)
{
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(res, "skipped"), i, v) {
		if (strcmp(t_str(v, "messageId"), id) == 0)
			return t_str(v, "reason");
	}
	return NULL;
}

static void Q_LOG_admission_private_switch_and_allow_lists(void)
{
	zcor *z = t_open();
	set_config(z, "{\"admission\": {\"privateChats\": false, \"groups\": [\"100\"]}}");
	int rc;
	json_t *r = log_batch(z, "private:5", &rc, "{\"messages\":[{\"id\":\"a\",\"senderId\":\"5\",\"text\":\"hi\"}]}");
	CHECK_INT(rc, ZCOR_OK);
	CHECK_INT(t_int(r, "logged"), 0);
	CHECK_STR(skip_reason(r, "a"), "private_chats_off");
	json_decref(r);
	r = log_batch(z, "group:200", &rc, "{\"messages\":[{\"id\":\"b\",\"senderId\":\"5\",\"text\":\"hi\"}]}");
	CHECK_STR(skip_reason(r, "b"), "group_not_allowed");
	json_decref(r);
	r = log_batch(z, "group:100", &rc, "{\"messages\":[{\"id\":\"c\",\"senderId\":\"5\",\"text\":\"hi\"}]}");
	CHECK_INT(t_int(r, "logged"), 1);
	json_decref(r);
	/* nothing of the refused conversations exists, not even a row */
	CHECK_INT(count(z, "SELECT count(*) FROM conversations"), 1);
	CHECK_INT(count(z, "SELECT count(*) FROM messages WHERE conversation <> 'group:100'"), 0);

	set_config(z, "{\"admission\": {\"privateChats\": true, \"privates\": [\"7\"]}}");
	r = log_batch(z, "private:7", &rc, "{\"messages\":[{\"id\":\"d\",\"senderId\":\"7\",\"text\":\"hi\"}]}");
	CHECK_INT(t_int(r, "logged"), 1);
	json_decref(r);
	r = log_batch(z, "private:8", &rc, "{\"messages\":[{\"id\":\"e\",\"senderId\":\"8\",\"text\":\"hi\"}]}");
	CHECK_STR(skip_reason(r, "e"), "private_not_allowed");
	json_decref(r);
	/* console conversations are the operator's: always admitted */
	r = log_batch(z, "console:me", &rc, "{\"messages\":[{\"id\":\"f\",\"senderId\":\"me\",\"text\":\"hi\"}]}");
	CHECK_INT(t_int(r, "logged"), 1);
	json_decref(r);
	CHECK_INT(count(z, "SELECT count(*) FROM messages"), 3);
	/* the settings in effect round-trip through zcor_config_set (the page
	 * PUTs back what it GETs): null lists admit every one */
	char *cfg = NULL;
	zcor_config_json(z, &cfg);
	json_t *j = parse(cfg);
	CHECK(json_is_true(t_get(j, "admission.privateChats")));
	CHECK_STR(t_str(j, "admission.groups.0"), "100"); /* settings merge: still there */
	CHECK_STR(t_str(j, "admission.privates.0"), "7");
	CHECK_INT(t_int(j, "mediaCacheMax"), 200);
	char *text = json_dumps(j, JSON_COMPACT);
	set_config(z, text);
	free(text);
	json_decref(j);
	r = log_batch(z, "group:555", &rc, "{\"messages\":[{\"id\":\"g\",\"senderId\":\"8\",\"text\":\"hi\"}]}");
	CHECK_STR(skip_reason(r, "g"), "group_not_allowed");
	json_decref(r);
	set_config(z, "{\"admission\": {\"groups\": null}}"); /* null: every group again */
	r = log_batch(z, "group:555", &rc, "{\"messages\":[{\"id\":\"g\",\"senderId\":\"8\",\"text\":\"hi\"}]}");
	CHECK_INT(t_int(r, "logged"), 1);
	json_decref(r);
	zcor_close(z);
}

static void Q_LOG_bot_own_messages_are_never_logged(void)
{
	zcor *z = t_open();
	set_config(z, "{\"botId\": \"3000\"}");
	int rc;
	json_t *r = log_batch(z, "group:1", &rc,
			      "{\"messages\":[{\"id\":\"1\",\"senderId\":\"3000\",\"text\":\"我是机器人\"},"
			      "{\"id\":\"2\",\"senderId\":\"42\",\"text\":\"echo\",\"self\":true},"
			      "{\"id\":\"3\",\"senderId\":42,\"text\":\"人类说话\"}]}");
	CHECK_INT(rc, ZCOR_OK);
	CHECK_INT(t_int(r, "logged"), 1);
	CHECK_STR(skip_reason(r, "1"), "self");
	CHECK_STR(skip_reason(r, "2"), "self");
	CHECK(skip_reason(r, "3") == NULL);
	json_decref(r);
	CHECK_INT(count(z, "SELECT count(*) FROM messages"), 1);
	CHECK_INT(count(z, "SELECT count(*) FROM messages WHERE sender_id = '3000' OR message_id = '2'"), 0);
	zcor_close(z);
}

static void Q_LOG_counters_slug_and_no_history(void)
{
	zcor *z = t_open();
	int64_t now = 1764417600000; /* 2025-11-29T12:00:00Z */
	zcor_set_clock(z, clock_of, &now);
	int rc;
	json_t *r = log_batch(z, "group:100000001", &rc,
			      "{\"messages\":[{\"id\":\"1\",\"time\":\"2025-11-29T20:00:00+08:00\",\"senderId\":\"1\",\"text\":\"a\"},"
			      "{\"id\":\"2\",\"time\":\"2025-11-29T20:05:00+08:00\",\"senderId\":\"2\",\"text\":\"b\"}]}");
	CHECK_INT(t_int(r, "logged"), 2);
	json_decref(r);
	r = log_batch(z, "group:100000001", &rc,
		      "{\"messages\":[{\"id\":\"3\",\"time\":\"2025-11-29T20:01:00+08:00\",\"senderId\":\"1\",\"text\":\"c\"}]}");
	json_decref(r);
	char *out = NULL;
	CHECK_INT(zcor_conversation_get(z, NULL, "group:100000001", &out), ZCOR_OK);
	json_t *c = parse(out);
	CHECK_STR(t_str(c, "conversation.slug"), "group-100000001");
	CHECK_INT(t_int(c, "conversation.messages"), 3);
	CHECK_INT(t_int(c, "conversation.linesSinceDigest"), 3);
	CHECK_STR(t_str(c, "conversation.lastMessageAt"), "2025-11-29T12:05:00.000Z");
	CHECK(json_is_null(t_get(c, "conversation.lastDigestAt")));
	json_decref(c);
	/* logging is not a tool call: no history record */
	CHECK_INT(count(z, "SELECT count(*) FROM history"), 0);
	CHECK_INT(zcor_conversations(z, NULL, &out), ZCOR_OK);
	c = parse(out);
	CHECK_INT(json_array_size(t_get(c, "items")), 1);
	CHECK_STR(t_str(c, "items.0.key"), "group:100000001");
	json_decref(c);
	zcor_close(z);
}

static void Q_LOG_duplicate_ids_are_skipped(void)
{
	zcor *z = t_open();
	const char *batch = "{\"messages\":[{\"id\":\"m1\",\"senderId\":\"1\",\"text\":\"one\"},"
			    "{\"id\":\"m1\",\"senderId\":\"1\",\"text\":\"one again\"}]}";
	int rc;
	json_t *r = log_batch(z, "group:1", &rc, batch);
	CHECK_INT(rc, ZCOR_OK);
	CHECK_INT(t_int(r, "logged"), 1);
	CHECK_STR(skip_reason(r, "m1"), "duplicate");
	json_decref(r);
	r = log_batch(z, "group:1", &rc, batch); /* redelivery */
	CHECK_INT(rc, ZCOR_OK);
	CHECK_INT(t_int(r, "logged"), 0);
	CHECK_INT(json_array_size(t_get(r, "skipped")), 2);
	json_decref(r);
	CHECK_INT(count(z, "SELECT count(*) FROM messages"), 1);
	CHECK_INT(count(z, "SELECT messages FROM conversations WHERE key = 'group:1'"), 1);
	/* the same id in another conversation is another message */
	r = log_batch(z, "group:2", &rc, batch);
	CHECK_INT(t_int(r, "logged"), 1);
	json_decref(r);
	zcor_close(z);
}

static void check_rejected(zcor *z, const char *conv, const char *batch, const char *field)
{
	int rc;
	json_t *r = log_batch(z, conv, &rc, batch);
	CHECK_INT(rc, ZCOR_EINVAL);
	CHECK_STR(t_errcode(r), "invalid_argument");
	if (!t_errmsg(r) || !strstr(t_errmsg(r), field)) {
		fprintf(stderr, "error does not name '%s': %s\n", field, t_errmsg(r) ? t_errmsg(r) : "(none)");
		t_failures++;
	}
	json_decref(r);
}

static void Q_LOG_bad_input_names_the_field_and_changes_nothing(void)
{
	zcor *z = t_open();
	const char *good = "{\"id\":\"1\",\"senderId\":\"1\",\"text\":\"ok\"}";
	char batch[512];
	snprintf(batch, sizeof(batch), "{\"messages\":[%s,{\"id\":\"2\",\"text\":\"no sender\"}]}", good);
	check_rejected(z, "group:1", batch, "messages[1].senderId");
	snprintf(batch, sizeof(batch), "{\"messages\":[%s,{\"id\":\"2\",\"senderId\":\"1\",\"time\":\"yesterday\"}]}", good);
	check_rejected(z, "group:1", batch, "messages[1].time");
	snprintf(batch, sizeof(batch), "{\"messages\":[%s,{\"senderId\":\"1\"}]}", good);
	check_rejected(z, "group:1", batch, "messages[1].id");
	snprintf(batch, sizeof(batch), "{\"messages\":[%s,{\"id\":\"2\",\"senderId\":\"1\",\"mentions\":\"all\"}]}", good);
	check_rejected(z, "group:1", batch, "messages[1].mentions");
	snprintf(batch, sizeof(batch), "{\"messages\":[%s,{\"id\":\"2\",\"senderId\":\"1\",\"colour\":1}]}", good);
	check_rejected(z, "group:1", batch, "messages[1].colour");
	snprintf(batch, sizeof(batch), "{\"messages\":[%s],\"extra\":1}", good);
	check_rejected(z, "group:1", batch, "extra");
	check_rejected(z, "group:1", "{\"messages\":[]}", "messages");
	snprintf(batch, sizeof(batch), "{\"messages\":[%s]}", good);
	check_rejected(z, "room:1", batch, "conversation");
	CHECK_INT(count(z, "SELECT count(*) FROM messages"), 0);
	CHECK_INT(count(z, "SELECT count(*) FROM conversations"), 0);
	/* a bad admission setting is refused by key, the file unchanged */
	CHECK_INT(zcor_config_set(z, "{\"admission\": {\"groups\": \"100\"}}"), ZCOR_EINVAL);
	CHECK(strstr(zcor_errmsg(z), "admission.groups"));
	CHECK_INT(zcor_config_set(z, "{\"botId\": 3000}"), ZCOR_EINVAL);
	CHECK(strstr(zcor_errmsg(z), "botId"));
	CHECK_INT(zcor_config_set(z, "{\"mediaCacheMax\": 0}"), ZCOR_EINVAL);
	CHECK(strstr(zcor_errmsg(z), "mediaCacheMax"));
	zcor_close(z);
}

static void Q_DIGEST_digest_done_bookkeeping(void)
{
	setenv("TZ", "Asia/Shanghai", 1);
	tzset();
	zcor *z = t_open();
	int64_t now = 1764429000000; /* 2025-11-29T15:10:00Z = 2025-11-29 23:10 in Shanghai */
	zcor_set_clock(z, clock_of, &now);
	int rc;
	json_t *r = log_batch(z, "group:1", &rc,
			      "{\"messages\":[{\"id\":\"1\",\"senderId\":\"1\",\"text\":\"a\"},{\"id\":\"2\",\"senderId\":\"1\",\"text\":\"b\"}]}");
	json_decref(r);
	now += 3600 * 1000; /* 00:10 the next local day */
	char *out = NULL;
	CHECK_INT(zcor_digest_done(z, "group:1", &out), ZCOR_OK);
	json_t *c = parse(out);
	CHECK_INT(t_int(c, "conversation.linesSinceDigest"), 0);
	CHECK_INT(t_int(c, "conversation.messages"), 2);
	CHECK_STR(t_str(c, "conversation.lastDigestAt"), "2025-11-29T16:10:00.000Z");
	CHECK_STR(t_str(c, "conversation.lastDigestDate"), "2025-11-30");
	json_decref(c);
	r = log_batch(z, "group:1", &rc, "{\"messages\":[{\"id\":\"3\",\"senderId\":\"1\",\"text\":\"c\"}]}");
	json_decref(r);
	CHECK_INT(count(z, "SELECT lines_since_digest FROM conversations"), 1);
	CHECK_INT(count(z, "SELECT messages FROM conversations"), 3);
	CHECK_INT(zcor_digest_done(z, "group:404", &out), ZCOR_ENOTFOUND);
	zcor_free(out);
	zcor_close(z);
	setenv("TZ", "UTC", 1);
	tzset();
}

/* Five messages in group:1 on two days, two in group:2. */
static zcor *transcript_fixture(void)
{
	zcor *z = t_open();
	int rc;
	json_t *r = log_batch(z, "group:1", &rc,
			      "{\"messages\":["
			      "{\"id\":\"1\",\"time\":\"2025-11-28T10:00:00Z\",\"senderId\":\"11\",\"senderName\":\"甲\",\"text\":\"周六打本吗\"},"
			      "{\"id\":\"2\",\"time\":\"2025-11-28T11:00:00Z\",\"senderId\":\"12\",\"text\":\"好\"},"
			      "{\"id\":\"3\",\"time\":\"2025-11-29T09:00:00Z\",\"senderId\":\"11\",\"text\":\"打本改到周日\",\"replyTo\":\"1\"},"
			      "{\"id\":\"4\",\"time\":\"2025-11-29T10:00:00Z\",\"senderId\":\"13\",\"text\":\"好的 OK\",\"mentions\":[\"11\"]},"
			      "{\"id\":\"5\",\"time\":\"2025-11-29T12:00:00Z\",\"senderId\":\"12\",\"text\":\"不好\"}]}");
	CHECK_INT(t_int(r, "logged"), 5);
	json_decref(r);
	r = log_batch(z, "private:9", &rc,
		      "{\"messages\":[{\"id\":\"p1\",\"time\":\"2025-11-29T08:00:00Z\",\"senderId\":\"9\",\"text\":\"私聊里也说好\"},"
		      "{\"id\":\"p2\",\"time\":\"2025-11-29T08:01:00Z\",\"senderId\":\"9\",\"text\":\"打本的秘密\"}]}");
	CHECK_INT(t_int(r, "logged"), 2);
	json_decref(r);
	return z;
}

static void Q_LOG_qq_transcript_read_search_ranges_and_pages(void)
{
	zcor *z = transcript_fixture();
	json_t *r = t_call(z, NULL, "qq_transcript", "{\"action\":\"list\"}");
	CHECK_INT(t_int(r, "total"), 2);
	json_decref(r);
	/* read: oldest first, inclusive range */
	r = t_call(z, NULL, "qq_transcript",
		   "{\"action\":\"read\",\"conversation\":\"group:1\",\"from\":\"2025-11-28T11:00:00Z\","
		   "\"to\":\"2025-11-29T18:00:00+08:00\"}");
	CHECK_INT(t_int(r, "total"), 3);
	CHECK_STR(t_str(r, "items.0.id"), "2");
	CHECK_STR(t_str(r, "items.1.id"), "3");
	CHECK_STR(t_str(r, "items.1.replyTo"), "1");
	CHECK_STR(t_str(r, "items.2.id"), "4");
	CHECK_STR(t_str(r, "items.2.mentions.0"), "11");
	json_decref(r);
	/* pages */
	r = t_call(z, NULL, "qq_transcript", "{\"action\":\"read\",\"conversation\":\"group:1\",\"limit\":2,\"offset\":2}");
	CHECK_INT(t_int(r, "total"), 5);
	CHECK_INT(t_int(r, "nextOffset"), 4);
	CHECK_STR(t_str(r, "items.0.id"), "3");
	json_decref(r);
	/* a single character (no index hint): every message containing it, newest first */
	r = t_call(z, NULL, "qq_transcript", "{\"action\":\"search\",\"conversation\":\"group:1\",\"keywords\":[\"好\"]}");
	CHECK_INT(t_int(r, "total"), 3);
	CHECK_STR(t_str(r, "items.0.id"), "5");
	CHECK_STR(t_str(r, "items.2.id"), "2");
	json_decref(r);
	/* with a range, and every keyword must match (case folded) */
	r = t_call(z, NULL, "qq_transcript",
		   "{\"action\":\"search\",\"conversation\":\"group:1\",\"keywords\":[\"好\",\"ok\"],"
		   "\"from\":\"2025-11-29T00:00:00Z\"}");
	CHECK_INT(t_int(r, "total"), 1);
	CHECK_STR(t_str(r, "items.0.id"), "4");
	json_decref(r);
	/* a CJK word goes through messages_fts */
	r = t_call(z, NULL, "qq_transcript", "{\"action\":\"search\",\"conversation\":\"group:1\",\"keywords\":[\"打本\"]}");
	CHECK_INT(t_int(r, "total"), 2);
	CHECK_STR(t_str(r, "items.0.id"), "3");
	json_decref(r);
	/* the host plane may search every conversation */
	r = t_call(z, NULL, "qq_transcript", "{\"action\":\"search\",\"keywords\":[\"打本\"]}");
	CHECK_INT(t_int(r, "total"), 3);
	json_decref(r);
	/* reads are recorded in history like the other tools */
	CHECK(count(z, "SELECT count(*) FROM history WHERE operation = 'qq_transcript'") >= 7);
	int rc;
	r = t_call_rc(z, NULL, &rc, "qq_transcript", "{\"action\":\"read\",\"conversation\":\"group:404\"}");
	CHECK_INT(rc, ZCOR_ENOTFOUND);
	json_decref(r);
	r = t_call_rc(z, NULL, &rc, "qq_transcript", "{\"action\":\"read\"}");
	CHECK_INT(rc, ZCOR_EINVAL);
	CHECK(strstr(t_errmsg(r), "conversation") != NULL);
	json_decref(r);
	r = t_call_rc(z, NULL, &rc, "qq_transcript", "{\"action\":\"search\",\"conversation\":\"group:1\"}");
	CHECK_INT(rc, ZCOR_EINVAL);
	json_decref(r);
	r = t_call_rc(z, NULL, &rc, "qq_transcript", "{\"action\":\"read\",\"conversation\":\"group:1\",\"from\":\"2025-11-28\"}");
	CHECK_INT(rc, ZCOR_EINVAL);
	json_decref(r);
	zcor_close(z);
}

/* issue 18, the per-person page: "sender" keeps one sender's messages in
 * a read and a search; a search with a sender and no keyword lists them
 * across every conversation the caller sees (a bound caller: its own),
 * newest first; a bad sender is refused naming it. */
static void issue18_transcript_sender_filter_across_conversations(void)
{
	zcor *z = transcript_fixture();
	int rc;
	json_t *r = log_batch(z, "private:11", &rc,
			      "{\"messages\":[{\"id\":\"q1\",\"time\":\"2025-11-30T08:00:00Z\",\"senderId\":\"11\","
			      "\"text\":\"私下问一句\"}]}");
	CHECK_INT(rc, ZCOR_OK);
	json_decref(r);
	/* read: oldest first, only 11's */
	r = t_call_ok(z, NULL, "qq_transcript", "{\"action\":\"read\",\"conversation\":\"group:1\",\"sender\":\"11\"}");
	CHECK_INT(t_int(r, "total"), 2);
	CHECK_STR(t_str(r, "items.0.id"), "1");
	CHECK_STR(t_str(r, "items.1.id"), "3");
	json_decref(r);
	/* search by sender alone: every conversation, newest first */
	r = t_call_ok(z, NULL, "qq_transcript", "{\"action\":\"search\",\"sender\":\"11\"}");
	CHECK_INT(t_int(r, "total"), 3);
	CHECK_STR(t_str(r, "items.0.id"), "q1");
	CHECK_STR(t_str(r, "items.0.conversation"), "private:11");
	CHECK_STR(t_str(r, "items.1.id"), "3");
	CHECK_STR(t_str(r, "items.2.id"), "1");
	json_decref(r);
	/* with a page */
	r = t_call_ok(z, NULL, "qq_transcript", "{\"action\":\"search\",\"sender\":\"11\",\"limit\":1,\"offset\":1}");
	CHECK_INT(t_int(r, "total"), 3);
	CHECK_INT(t_int(r, "nextOffset"), 2);
	CHECK_STR(t_str(r, "items.0.id"), "3");
	json_decref(r);
	/* sender and keywords: both (the index, then a single character) */
	r = t_call_ok(z, NULL, "qq_transcript", "{\"action\":\"search\",\"sender\":\"11\",\"keywords\":[\"打本\"]}");
	CHECK_INT(t_int(r, "total"), 2);
	json_decref(r);
	r = t_call_ok(z, NULL, "qq_transcript", "{\"action\":\"search\",\"sender\":\"12\",\"keywords\":[\"好\"]}");
	CHECK_INT(t_int(r, "total"), 2);
	CHECK_STR(t_str(r, "items.0.id"), "5");
	json_decref(r);
	/* a bound caller: its own conversation only */
	r = t_call_ok(z, "group:1", "qq_transcript", "{\"action\":\"search\",\"sender\":\"11\"}");
	CHECK_INT(t_int(r, "total"), 2);
	json_decref(r);
	r = t_call_ok(z, "private:9", "qq_transcript", "{\"action\":\"search\",\"sender\":\"11\"}");
	CHECK_INT(t_int(r, "total"), 0);
	json_decref(r);
	/* no such sender: nothing; a bad one: refused naming it */
	r = t_call_ok(z, NULL, "qq_transcript", "{\"action\":\"search\",\"sender\":\"404\"}");
	CHECK_INT(t_int(r, "total"), 0);
	json_decref(r);
	static const char *const bad[] = {"{\"action\":\"search\",\"sender\":\"\"}", "{\"action\":\"search\",\"sender\":12}"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = t_call_raw(z, NULL, &rc, "qq_transcript", bad[i]);
		CHECK_INT(rc, ZCOR_EINVAL);
		CHECK(strstr(t_errmsg(r), "sender") != NULL);
		json_decref(r);
	}
	zcor_close(z);
}

static void Q_SCOPE_a_conversation_sees_only_its_own_transcript(void)
{
	zcor *z = transcript_fixture();
	json_t *r = t_call(z, "private:9", "qq_transcript", "{\"action\":\"list\"}");
	CHECK_INT(t_int(r, "total"), 1);
	CHECK_STR(t_str(r, "items.0.key"), "private:9");
	json_decref(r);
	int rc;
	r = t_call_rc(z, "private:9", &rc, "qq_transcript", "{\"action\":\"read\",\"conversation\":\"group:1\"}");
	CHECK_INT(rc, ZCOR_EFORBIDDEN);
	CHECK(strstr(t_errmsg(r), "leave 'conversation' out") != NULL);
	json_decref(r);
	r = t_call_rc(z, "private:9", &rc, "qq_transcript",
		      "{\"action\":\"search\",\"conversation\":\"group:1\",\"keywords\":[\"好\"]}");
	CHECK_INT(rc, ZCOR_EFORBIDDEN);
	json_decref(r);
	/* without a conversation: its own only, never the group's lines */
	r = t_call(z, "private:9", "qq_transcript", "{\"action\":\"search\",\"keywords\":[\"好\"]}");
	CHECK_INT(t_int(r, "total"), 1);
	CHECK_STR(t_str(r, "items.0.id"), "p1");
	json_decref(r);
	r = t_call(z, "group:1", "qq_transcript", "{\"action\":\"search\",\"keywords\":[\"打本\"]}");
	CHECK_INT(t_int(r, "total"), 2);
	json_decref(r);
	r = t_call(z, "private:9", "qq_transcript", "{\"action\":\"read\"}");
	CHECK_INT(t_int(r, "total"), 2);
	json_decref(r);
	/* the host calls: a bound caller gets only its own conversation */
	struct zcor_ctx ctx = {ZCOR_ACTOR_UI, "private:9"};
	char *out = NULL;
	CHECK_INT(zcor_conversations(z, &ctx, &out), ZCOR_OK);
	r = parse(out);
	CHECK_INT(json_array_size(t_get(r, "items")), 1);
	json_decref(r);
	CHECK_INT(zcor_conversation_get(z, &ctx, "group:1", &out), ZCOR_EFORBIDDEN);
	zcor_free(out);
	CHECK_INT(zcor_log_messages(z, &ctx, "group:1", "{\"messages\":[{\"id\":\"x\",\"senderId\":\"1\"}]}", &out),
		  ZCOR_EFORBIDDEN);
	zcor_free(out);
	CHECK_INT(count(z, "SELECT count(*) FROM messages WHERE message_id = 'x'"), 0);
	zcor_close(z);
}

/* Files in dir/media. */
static int media_files(zcor *z)
{
	char path[600];
	snprintf(path, sizeof(path), "%s/media", zcor_dir(z));
	DIR *d = opendir(path);
	int n = 0;
	struct dirent *de;
	while (d && (de = readdir(d)))
		n += de->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

static json_t *log_image(zcor *z, int64_t *now, const char *id, const char *b64, int *rc)
{
	char batch[1024];
	snprintf(batch, sizeof(batch),
		 "{\"messages\":[{\"id\":\"%s\",\"senderId\":\"1\",\"media\":[{\"type\":\"image\",\"data\":\"%s\",\"name\":\"x.png\"}]}]}",
		 id, b64);
	*now += 1000;
	return log_batch(z, "group:1", rc, batch);
}

static void Q_STK_media_cache_dedup_lru_and_magic_bytes(void)
{
	zcor *z = t_open();
	int64_t now = 1764417600000;
	zcor_set_clock(z, clock_of, &now);
	set_config(z, "{\"mediaCacheMax\": 2}");
	int rc;
	json_t *r = log_image(z, &now, "1", GIF_B64, &rc);
	CHECK_INT(rc, ZCOR_OK);
	json_decref(r);
	r = t_call(z, NULL, "qq_transcript", "{\"action\":\"read\",\"conversation\":\"group:1\"}");
	const char *ref = t_str(r, "items.0.media.0");
	CHECK(ref && strncmp(ref, "media/", 6) == 0 && strlen(ref) == 6 + 64 + 4);
	CHECK(ref && strcmp(ref + strlen(ref) - 4, ".gif") == 0); /* named x.png: the bytes decide */
	char *gif_ref = strdup(ref ? ref : "");
	json_decref(r);
	json_decref(log_image(z, &now, "2", GIF_B64, &rc)); /* the same bytes: stored once */
	CHECK_INT(media_files(z), 1);
	CHECK_INT(count(z, "SELECT count(*) FROM media"), 1);
	char *path = NULL;
	CHECK_INT(zcor_media_path(z, gif_ref, &path), ZCOR_OK);
	CHECK(path && access(path, R_OK) == 0);
	zcor_free(path);
	json_decref(log_image(z, &now, "3", PNG_B64, &rc));
	CHECK_INT(rc, ZCOR_OK);
	json_decref(log_image(z, &now, "4", JPG_B64, &rc)); /* cap 2: the gif (oldest use) goes */
	CHECK_INT(rc, ZCOR_OK);
	CHECK_INT(media_files(z), 2);
	CHECK_INT(count(z, "SELECT count(*) FROM media"), 2);
	CHECK_INT(count(z, "SELECT count(*) FROM media WHERE ext = 'gif'"), 0);
	CHECK_INT(zcor_media_path(z, gif_ref, &path), ZCOR_ENOTFOUND);
	r = t_call(z, NULL, "qq_transcript", "{\"action\":\"read\",\"conversation\":\"group:1\",\"offset\":2}");
	const char *png_ref = t_str(r, "items.0.media.0");
	CHECK(png_ref && strstr(png_ref, ".png"));
	now += 1000;
	CHECK_INT(zcor_media_path(z, png_ref, &path), ZCOR_OK); /* a use: the jpg is now the oldest */
	zcor_free(path);
	json_decref(r);
	json_decref(log_image(z, &now, "5", WEBP_B64, &rc));
	CHECK_INT(count(z, "SELECT count(*) FROM media WHERE ext = 'png'"), 1);
	CHECK_INT(count(z, "SELECT count(*) FROM media WHERE ext = 'webp'"), 1);
	CHECK_INT(count(z, "SELECT count(*) FROM media WHERE ext = 'jpg'"), 0);
	CHECK_INT(media_files(z), 2);
	/* refused: bad base64, bytes that are no image, a malformed reference */
	long long before = count(z, "SELECT count(*) FROM messages");
	r = log_image(z, &now, "6", "not*base64!", &rc);
	CHECK_INT(rc, ZCOR_EINVAL);
	CHECK(strstr(t_errmsg(r), "messages[0].media[0]") != NULL);
	json_decref(r);
	r = log_image(z, &now, "7", "aGVsbG8gd29ybGQ=", &rc); /* "hello world" */
	CHECK_INT(rc, ZCOR_EINVAL);
	CHECK(strstr(t_errmsg(r), "not a PNG, JPEG, GIF or WebP") != NULL);
	json_decref(r);
	CHECK_INT(count(z, "SELECT count(*) FROM messages"), before);
	CHECK_INT(zcor_media_path(z, "media/../../etc/passwd", &path), ZCOR_EINVAL);
	/* a file on disk (absolute path) is read and cached the same way */
	char file[600];
	snprintf(file, sizeof(file), "%s/in.bin", t_tmpdir());
	FILE *f = fopen(file, "wb");
	fwrite("GIF87a\x01\x00\x01\x00\x00\x00\x00;", 1, 14, f);
	fclose(f);
	char batch[1024];
	snprintf(batch, sizeof(batch),
		 "{\"messages\":[{\"id\":\"8\",\"senderId\":\"1\",\"media\":[{\"type\":\"image\",\"file\":\"%s\"}]}]}", file);
	r = log_batch(z, "group:1", &rc, batch);
	CHECK_INT(rc, ZCOR_OK);
	CHECK_INT(count(z, "SELECT count(*) FROM media WHERE ext = 'gif'"), 1);
	json_decref(r);
	free(gif_ref);
	zcor_close(z);
}

static void exec_sql(zcor *z, const char *sql)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/memory.db", zcor_dir(z));
	sqlite3 *db = NULL;
	char *err = NULL;
	if (sqlite3_open(path, &db) != SQLITE_OK || sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "exec_sql: %s: %s\n", sql, err ? err : sqlite3_errmsg(db));
		t_failures++;
	}
	sqlite3_free(err);
	sqlite3_close(db);
}

/* A batch that fails after its image was written leaves no message, no
 * media row and no file behind. */
static void Q_STK_failed_batch_leaves_no_media_file(void)
{
	zcor *z = t_open();
	int64_t now = 1764417600000;
	zcor_set_clock(z, clock_of, &now);
	int rc;
	json_decref(log_batch(z, "group:1", &rc, "{\"messages\":[{\"id\":\"0\",\"senderId\":\"1\",\"text\":\"hi\"}]}"));
	exec_sql(z, "CREATE TRIGGER fail_count BEFORE UPDATE OF messages ON conversations BEGIN "
		    "SELECT RAISE(ABORT, 'injected'); END;");
	json_t *r = log_image(z, &now, "1", GIF_B64, &rc);
	CHECK(rc != ZCOR_OK);
	CHECK(t_errmsg(r) && strstr(t_errmsg(r), "nothing was logged"));
	json_decref(r);
	CHECK_INT(count(z, "SELECT count(*) FROM messages"), 1);
	CHECK_INT(count(z, "SELECT count(*) FROM media"), 0);
	CHECK_INT(media_files(z), 0);
	exec_sql(z, "DROP TRIGGER fail_count;");
	r = log_image(z, &now, "1", GIF_B64, &rc);
	CHECK_INT(rc, ZCOR_OK);
	CHECK_INT(t_int(r, "logged"), 1);
	json_decref(r);
	CHECK_INT(media_files(z), 1);
	zcor_close(z);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = calloc(1, 1 << 16);
	size_t n = fread(buf, 1, (1 << 16) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static json_t *read_all(zcor *z, const char *conv)
{
	char args[200];
	snprintf(args, sizeof(args), "{\"action\":\"read\",\"conversation\":\"%s\",\"limit\":100}", conv);
	json_t *r = t_call(z, NULL, "qq_transcript", args);
	json_t *items = json_incref(t_get(r, "items"));
	json_decref(r);
	return items;
}

static void Q_LOG_export_import_round_trip(void)
{
	setenv("TZ", "UTC", 1);
	tzset();
	zcor *z = transcript_fixture();
	const char *root = t_tmpdir();
	char *out = NULL;
	CHECK_INT(zcor_transcript_export(z, NULL, root, &out), ZCOR_OK);
	json_t *rep = parse(out);
	CHECK_INT(t_int(rep, "messages"), 7);
	CHECK_INT(t_int(rep, "files"), 3);
	CHECK_INT(t_int(rep, "conversations"), 2);
	json_decref(rep);
	char p1[700], p2[700], p3[700];
	snprintf(p1, sizeof(p1), "%s/conversations/group-1/log/2025-11-28.jsonl", root);
	snprintf(p2, sizeof(p2), "%s/conversations/group-1/log/2025-11-29.jsonl", root);
	snprintf(p3, sizeof(p3), "%s/conversations/private-9/log/2025-11-29.jsonl", root);
	char *text = slurp(p1);
	CHECK(text && strstr(text, "\"id\":\"1\"") && strstr(text, "\"id\":\"2\"") && !strstr(text, "\"id\":\"3\""));
	free(text);

	zcor *z2 = t_open();
	const char *files[] = {p1, p2};
	for (int i = 0; i < 2; i++) {
		CHECK_INT(zcor_transcript_import_file(z2, "group:1", files[i], &out), ZCOR_OK);
		rep = parse(out);
		CHECK_INT(t_int(rep, "errorCount"), 0);
		json_decref(rep);
	}
	CHECK_INT(zcor_transcript_import_file(z2, "private:9", p3, &out), ZCOR_OK);
	zcor_free(out);
	const char *convs[] = {"group:1", "private:9"};
	for (int i = 0; i < 2; i++) {
		json_t *a = read_all(z, convs[i]), *b = read_all(z2, convs[i]);
		CHECK(json_equal(a, b));
		CHECK(json_array_size(a) > 0);
		json_decref(a);
		json_decref(b);
	}
	/* importing again changes nothing */
	CHECK_INT(zcor_transcript_import_file(z2, "group:1", p2, &out), ZCOR_OK);
	rep = parse(out);
	CHECK_INT(t_int(rep, "logged"), 0);
	CHECK_INT(t_int(rep, "duplicates"), 3);
	json_decref(rep);
	CHECK_INT(count(z2, "SELECT count(*) FROM messages"), 7);
	CHECK_INT(count(z2, "SELECT messages FROM conversations WHERE key = 'group:1'"), 5);
	zcor_close(z);
	zcor_close(z2);
}

static void Q_LOG_import_accepts_aliases_and_reports_bad_lines(void)
{
	zcor *z = t_open();
	set_config(z, "{\"botId\": \"3000\"}");
	char path[600];
	snprintf(path, sizeof(path), "%s/2025-11-29.jsonl", t_tmpdir());
	FILE *f = fopen(path, "w");
	fputs("{\"message_id\":77,\"ts\":1764417600,\"user_id\":123,\"nickname\":\"老王\",\"message\":\"周六见\"}\n"
	      "{this is not json\n"
	      "{\"id\":\"x\",\"time\":\"2025-11-29T12:00:00Z\",\"text\":\"no sender\"}\n"
	      "\n"
	      "{\"timestamp\":1764417660000,\"userId\":\"124\",\"name\":\"小李\",\"content\":\"好\"}\n"
	      "{\"id\":\"b\",\"time\":\"2025-11-29T12:02:00Z\",\"senderId\":\"3000\",\"text\":\"机器人自己\"}\n",
	      f);
	fclose(f);
	char *out = NULL;
	CHECK_INT(zcor_transcript_import_file(z, "group:5", path, &out), ZCOR_OK);
	json_t *rep = parse(out);
	CHECK_INT(t_int(rep, "logged"), 2);
	CHECK_INT(t_int(rep, "self"), 1);
	CHECK_INT(t_int(rep, "errorCount"), 2);
	CHECK_INT(t_int(rep, "errors.0.line"), 2);
	CHECK_INT(t_int(rep, "errors.1.line"), 3);
	CHECK(strstr(t_str(rep, "errors.1.error"), "sender") != NULL);
	json_decref(rep);
	json_t *items = read_all(z, "group:5");
	CHECK_INT(json_array_size(items), 2);
	CHECK_STR(t_str(items, "0.id"), "77");
	CHECK_STR(t_str(items, "0.senderId"), "123");
	CHECK_STR(t_str(items, "0.senderName"), "老王");
	CHECK_STR(t_str(items, "0.text"), "周六见");
	CHECK_STR(t_str(items, "0.time"), "2025-11-29T12:00:00.000Z");
	CHECK_STR(t_str(items, "1.time"), "2025-11-29T12:01:00.000Z");
	const char *gen = t_str(items, "1.id");
	CHECK(gen && strncmp(gen, "imp-", 4) == 0);
	json_decref(items);
	/* again: the derived ids are stable, nothing doubles */
	CHECK_INT(zcor_transcript_import_file(z, "group:5", path, &out), ZCOR_OK);
	rep = parse(out);
	CHECK_INT(t_int(rep, "logged"), 0);
	CHECK_INT(t_int(rep, "duplicates"), 2);
	json_decref(rep);
	/* imported history is not new lines for the digest */
	CHECK_INT(count(z, "SELECT lines_since_digest FROM conversations WHERE key = 'group:5'"), 0);
	int rc = zcor_transcript_import_file(z, "group:5", "/nonexistent/x.jsonl", &out);
	CHECK(rc != ZCOR_OK);
	rep = t_answer(z, rc, out);
	CHECK(t_errmsg(rep) && strstr(t_errmsg(rep), "/nonexistent/x.jsonl"));
	json_decref(rep);
	zcor_close(z);
}

static void X_REINDEX_rebuilds_the_message_index(void)
{
	zcor *z = transcript_fixture();
	char *out = NULL;
	CHECK_INT(zcor_reindex(z, &out), ZCOR_OK);
	json_t *r = parse(out);
	CHECK_INT(t_int(r, "messages"), 7);
	json_decref(r);
	r = t_call(z, NULL, "qq_transcript", "{\"action\":\"search\",\"keywords\":[\"打本\"]}");
	CHECK_INT(t_int(r, "total"), 3);
	json_decref(r);
	zcor_close(z);
}

/* Every logged message once in the full-text index: the doctor's
 * integrity check (external content, rank 1) finds no row missing or
 * indexed twice, and search finds them. */
static void check_message_index(zcor *z, const char *keyword, long long want)
{
	char *out = NULL;
	CHECK_INT(zcor_doctor(z, 0, &out), ZCOR_OK);
	CHECK(out && !strstr(out, "INDEX_STALE"));
	if (out && strstr(out, "INDEX_STALE"))
		fprintf(stderr, "doctor: %s\n", out);
	zcor_free(out);
	char q[200];
	snprintf(q, sizeof(q), "{\"action\":\"search\",\"keywords\":[\"%s\"]}", keyword);
	json_t *r = t_call(z, NULL, "qq_transcript", q);
	CHECK_INT(t_int(r, "total"), want);
	json_decref(r);
}

/* s22 (issue 15, logging's cost): the index rows are written once at the
 * end of the logging transaction (schema 18 drops the insert trigger;
 * FTS5 flushed at every later statement's savepoint): a batch, a
 * duplicate and a multi-conversation call are each indexed exactly once; a store of schema 16 loses the
 * trigger when it opens, so a message is never indexed twice. */
static void s22_issue15_message_index_written_once_per_transaction(void)
{
	zcor *z = t_open();
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", zcor_dir(z));
	CHECK_INT(t_sql_int(dir, "SELECT count(*) FROM sqlite_schema WHERE name = 'messages_fts_ai'"), 0);
	int rc = 0;
	json_t *r = log_batch(z, "group:7", &rc,
			      "{\"messages\":[{\"id\":\"a1\",\"time\":\"2026-12-01T10:00:00Z\",\"senderId\":\"1\","
			      "\"senderName\":\"甲\",\"text\":\"今晚一起打本吗\"},{\"id\":\"a2\",\"time\":"
			      "\"2026-12-01T10:00:01Z\",\"senderId\":\"2\",\"senderName\":\"乙\",\"text\":\"打本可以\"}]}");
	CHECK_INT(rc, ZCOR_OK);
	json_decref(r);
	r = log_batch(z, "group:7", &rc, /* a2 again: a duplicate, skipped */
		      "{\"messages\":[{\"id\":\"a2\",\"time\":\"2026-12-01T10:00:01Z\",\"senderId\":\"2\","
		      "\"senderName\":\"乙\",\"text\":\"打本可以\"}]}");
	CHECK_INT(rc, ZCOR_OK);
	json_decref(r);
	check_message_index(z, "打本", 2);
	char *out = NULL;
	CHECK_INT(zcor_log_batches(z, NULL,
				   "{\"batches\":[{\"conversation\":\"group:8\",\"messages\":[{\"id\":\"b1\","
				   "\"time\":\"2026-12-01T10:01:00Z\",\"senderId\":\"3\",\"text\":\"打本去\"}]},"
				   "{\"conversation\":\"group:7\",\"messages\":[{\"id\":\"a3\","
				   "\"time\":\"2026-12-01T10:01:01Z\",\"senderId\":\"1\",\"text\":\"那就打本\"}]}]}",
				   &out),
		  ZCOR_OK);
	zcor_free(out);
	check_message_index(z, "打本", 4); /* a1 a2 b1 a3 */
	/* an old store: schema 16 with the trigger */
	t_sql_exec(z, "CREATE TRIGGER messages_fts_ai AFTER INSERT ON messages BEGIN INSERT INTO "
		      "messages_fts(rowid, text, sender_name) VALUES (new.seq, new.text, new.sender_name); END");
	t_sql_exec(z, "PRAGMA user_version = 16");
	zcor_close(z);
	z = t_open_dir(dir);
	CHECK_INT(t_sql_int(dir, "PRAGMA user_version"), T_SCHEMA);
	CHECK_INT(t_sql_int(dir, "SELECT count(*) FROM sqlite_schema WHERE name = 'messages_fts_ai'"), 0);
	r = log_batch(z, "group:7", &rc,
		      "{\"messages\":[{\"id\":\"a4\",\"time\":\"2026-12-01T10:02:00Z\",\"senderId\":\"2\","
		      "\"text\":\"打本打完了\"}]}");
	CHECK_INT(rc, ZCOR_OK);
	json_decref(r);
	check_message_index(z, "打本", 5);
	zcor_close(z);
}

/* The JSON path's refusal of batches_json, as its message (caller frees). */
static char *json_refusal(zcor *z, const char *batches_json)
{
	char *out = NULL;
	int rc = zcor_log_batches(z, NULL, batches_json, &out);
	zcor_free(out);
	CHECK_INT(rc, ZCOR_EINVAL);
	return strdup(zcor_errmsg(z));
}

/* issue 15 (the QQ world's logging CPU): zcor_log_batches_c takes the
 * batches as C values and applies every rule of the JSON batch — the
 * same messages for the same mistakes, nothing logged when one is
 * refused, admission, the bot's own, duplicates, the call's limits. */
static void issue15_log_batches_c_applies_the_batch_rules(void)
{
	zcor *z = t_open();
	set_config(z, "{\"botId\": \"999\", \"admission\": {\"groups\": [\"100\"]}}");
	const char *men[] = {"5", "all"};
	struct zcor_log_msg a[] = {
		{.id = "m1", .time_ms = 1764583200123LL, .sender_id = "7", .sender_name = "小明",
		 .text = "打本去", .mentions = men, .n_mentions = 2, .reply_to = "m0"},
		{.id = "m2", .sender_id = "8", .text = "x", .self = 1},
		{.id = "m3", .sender_id = "999", .text = "bot"},
	};
	struct zcor_log_msg b[] = {{.id = "m4", .sender_id = "7", .text = "elsewhere"}};
	struct zcor_log_batch bs[] = {{.conversation = "group:100", .messages = a, .n = 3},
				      {.conversation = "group:200", .messages = b, .n = 1}};
	CHECK_INT(zcor_log_batches_c(z, NULL, bs, 2, 0), ZCOR_OK);
	CHECK_INT(bs[0].code, ZCOR_OK);
	CHECK_INT(bs[0].logged, 1);
	CHECK(a[0].skipped == NULL);
	CHECK_STR(a[1].skipped, "self");
	CHECK_STR(a[2].skipped, "self");
	CHECK_INT(bs[1].logged, 0);
	CHECK_STR(b[0].skipped, "group_not_allowed");
	json_t *r = t_call(z, NULL, "qq_transcript", "{\"action\":\"read\",\"conversation\":\"group:100\"}");
	CHECK_INT(json_array_size(json_object_get(r, "items")), 1);
	CHECK_STR(t_str(r, "items.0.id"), "m1");
	CHECK_STR(t_str(r, "items.0.time"), "2025-12-01T10:00:00.123Z");
	CHECK_STR(t_str(r, "items.0.senderName"), "小明");
	CHECK_STR(t_str(r, "items.0.text"), "打本去");
	CHECK_STR(t_str(r, "items.0.mentions.1"), "all");
	CHECK_STR(t_str(r, "items.0.replyTo"), "m0");
	json_decref(r);
	/* logged before: a duplicate */
	CHECK_INT(zcor_log_batches_c(z, NULL, bs, 1, 0), ZCOR_OK);
	CHECK_STR(a[0].skipped, "duplicate");
	CHECK_INT(bs[0].logged, 0);

	/* a mistake refuses the call, names the field as the JSON path does,
	 * and logs nothing (not even the other batch's good message) */
	long long before = t_sql_int(zcor_dir(z), "SELECT count(*) FROM messages");
	struct zcor_log_msg good[] = {{.id = "g1", .sender_id = "7", .text = "fine"}};
	char long_name[700];
	for (int i = 0; i < 201; i++)
		memcpy(long_name + 3 * i, "名", 3);
	long_name[3 * 201] = '\0';
	struct {
		struct zcor_log_msg m;
		const char *json; /* the same message in the JSON batch, or NULL */
		const char *says;
	} bad[] = {
		{{.id = "b1", .sender_id = "7", .text = "\xff\xfe"}, NULL,
		 "batches[1]: field 'messages[0].text': is not valid UTF-8"},
		{{.id = "b1", .sender_id = "7", .sender_name = long_name}, "{\"id\":\"b1\",\"senderId\":\"7\",\"senderName\":\"%s\"}", NULL},
		{{.sender_id = "7", .text = "no id"}, "{\"senderId\":\"7\",\"text\":\"no id\"}", NULL},
		{{.id = "b1", .text = "no sender"}, "{\"id\":\"b1\",\"text\":\"no sender\"}", NULL},
		{{.id = "b\x01", .sender_id = "7"}, "{\"id\":\"b\\u0001\",\"senderId\":\"7\"}", NULL},
		{{.id = "b1", .sender_id = "7", .reply_to = ""}, "{\"id\":\"b1\",\"senderId\":\"7\",\"replyTo\":\"\"}", NULL},
		{{.id = "b1", .sender_id = "7", .time_ms = -5}, NULL,
		 "batches[1]: field 'messages[0].time': must be a time in ms since 1970 (0: now)"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct zcor_log_batch two[] = {{.conversation = "group:100", .messages = good, .n = 1},
					       {.conversation = "group:100", .messages = &bad[i].m, .n = 1}};
		CHECK_INT(zcor_log_batches_c(z, NULL, two, 2, 0), ZCOR_EINVAL);
		char *said = strdup(zcor_errmsg(z));
		if (bad[i].says) {
			CHECK_STR(said, bad[i].says);
		} else {
			char msg[1200], doc[1600];
			snprintf(msg, sizeof(msg), bad[i].json, long_name);
			snprintf(doc, sizeof(doc),
				 "{\"batches\":[{\"conversation\":\"group:100\",\"messages\":[{\"id\":\"g1\","
				 "\"senderId\":\"7\",\"text\":\"fine\"}]},{\"conversation\":\"group:100\","
				 "\"messages\":[%s]}]}",
				 msg);
			char *want = json_refusal(z, doc);
			CHECK_STR(said, want);
			CHECK_HAS(said, "batches[1]");
			free(want);
		}
		free(said);
		CHECK_INT(t_sql_int(zcor_dir(z), "SELECT count(*) FROM messages"), before);
	}
	/* the limits: 101 messages in a batch, a conversation key */
	struct zcor_log_msg many[101];
	for (int i = 0; i < 101; i++)
		many[i] = (struct zcor_log_msg){.id = "x", .sender_id = "7"};
	struct zcor_log_batch big = {.conversation = "group:100", .messages = many, .n = 101};
	CHECK_INT(zcor_log_batches_c(z, NULL, &big, 1, 0), ZCOR_EINVAL);
	CHECK_HAS(zcor_errmsg(z), "must be an array of 1 to 100 messages");
	struct zcor_log_batch nokey = {.conversation = "nowhere", .messages = good, .n = 1};
	CHECK_INT(zcor_log_batches_c(z, NULL, &nokey, 1, 0), ZCOR_EINVAL);
	CHECK_HAS(zcor_errmsg(z), "batches[0].conversation");
	CHECK_INT(zcor_log_batches_c(z, NULL, &nokey, 0, 0), ZCOR_EINVAL);
	/* a caller bound to one conversation logs only there */
	struct zcor_ctx bound = {ZCOR_ACTOR_MODEL, "group:300"};
	struct zcor_log_batch other = {.conversation = "group:100", .messages = good, .n = 1};
	CHECK_INT(zcor_log_batches_c(z, &bound, &other, 1, 0), ZCOR_EFORBIDDEN);
	CHECK_INT(t_sql_int(zcor_dir(z), "SELECT count(*) FROM messages"), before);
	zcor_close(z);
}

const struct t_case t_cases[] = {
	{"issue15_log_batches_c_applies_the_batch_rules", issue15_log_batches_c_applies_the_batch_rules},
	{"issue18_transcript_sender_filter_across_conversations", issue18_transcript_sender_filter_across_conversations},
	{"s22_issue15_message_index_written_once_per_transaction", s22_issue15_message_index_written_once_per_transaction},
	{"Q_LOG_admission_private_switch_and_allow_lists", Q_LOG_admission_private_switch_and_allow_lists},
	{"Q_LOG_bot_own_messages_are_never_logged", Q_LOG_bot_own_messages_are_never_logged},
	{"Q_LOG_counters_slug_and_no_history", Q_LOG_counters_slug_and_no_history},
	{"Q_LOG_duplicate_ids_are_skipped", Q_LOG_duplicate_ids_are_skipped},
	{"Q_LOG_bad_input_names_the_field_and_changes_nothing", Q_LOG_bad_input_names_the_field_and_changes_nothing},
	{"Q_DIGEST_digest_done_bookkeeping", Q_DIGEST_digest_done_bookkeeping},
	{"Q_LOG_qq_transcript_read_search_ranges_and_pages", Q_LOG_qq_transcript_read_search_ranges_and_pages},
	{"Q_SCOPE_a_conversation_sees_only_its_own_transcript", Q_SCOPE_a_conversation_sees_only_its_own_transcript},
	{"Q_STK_media_cache_dedup_lru_and_magic_bytes", Q_STK_media_cache_dedup_lru_and_magic_bytes},
	{"Q_STK_failed_batch_leaves_no_media_file", Q_STK_failed_batch_leaves_no_media_file},
	{"Q_LOG_export_import_round_trip", Q_LOG_export_import_round_trip},
	{"Q_LOG_import_accepts_aliases_and_reports_bad_lines", Q_LOG_import_accepts_aliases_and_reports_bad_lines},
	{"X_REINDEX_rebuilds_the_message_index", X_REINDEX_rebuilds_the_message_index},
	{NULL, NULL},
};
