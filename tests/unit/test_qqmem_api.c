/*
 * test_qqmem_api.c — issue 15, the QQ world's memory: a message its
 * sender withdrew (zcor_message_recalled: kept and flagged, shown by
 * qq_transcript, the turn's batch, the log files and their import, never
 * recall's query), a conversation's display title
 * (zcor_conversation_title) and what the world did with a turn's reply
 * (zcor_turn_note); schema 13 and its migration from 12.
 *
 * The calls go through zcor.h; the turn's batch through the operations
 * of memory/dialogue.c, and the recall request through agent/turn.c's
 * piece, as test_turn.c does (a whole turn needs a model).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "agent/turn.h"
#include "base/alloc.h"
#include "base/json.h"
#include "base/utf8.h"
#include "harness.h"
#include "memory/dialogue.h"

#define T0 1764410400000LL /* 2025-11-29T10:00:00Z */

static json_t *log_batch(zcor *z, const char *conv, const char *batch)
{
	char *out = NULL;
	int rc = zcor_log_messages(z, NULL, conv, batch, &out);
	CHECK_INT(rc, ZCOR_OK);
	return t_answer(z, rc, out);
}

/* group:1 with three messages, and private:9 with one. */
static zcor *fixture(void)
{
	zcor *z = t_open();
	json_decref(log_batch(z, "group:1",
			      "{\"recall\":false,\"messages\":["
			      "{\"id\":\"101\",\"time\":\"2025-11-29T09:00:00Z\",\"senderId\":\"11\",\"text\":\"周六打本吗\"},"
			      "{\"id\":\"102\",\"time\":\"2025-11-29T09:01:00Z\",\"senderId\":\"12\",\"text\":\"我的密码是 hunter2\"},"
			      "{\"id\":\"103\",\"time\":\"2025-11-29T09:02:00Z\",\"senderId\":\"11\",\"text\":\"好\"}]}"));
	json_decref(log_batch(z, "private:9",
			      "{\"recall\":false,\"messages\":[{\"id\":\"p1\",\"time\":\"2025-11-29T08:00:00Z\","
			      "\"senderId\":\"9\",\"text\":\"私聊\"}]}"));
	return z;
}

static json_t *recalled(zcor *z, const struct zcor_ctx *ctx, const char *conv, const char *id,
			long long at, int *rc)
{
	char *out = NULL;
	*rc = zcor_message_recalled(z, ctx, conv, id, at, &out);
	return t_answer(z, *rc, out);
}

/* The message with this id among a qq_transcript answer's items. */
static json_t *item(json_t *page, const char *id)
{
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(page, "items"), i, v) {
		if (strcmp(t_str(v, "id"), id) == 0)
			return v;
	}
	return NULL;
}

/* The text of a file (caller frees), NULL if there is none. */
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

static int64_t clock_of(void *ud) { return *(int64_t *)ud; }

/* A recalled message stays in the log, flagged with the first recall's
 * time; read and search show "recalledAt" on it alone; no history. */
static void issue15_recalled_message_is_kept_and_flagged(void)
{
	zcor *z = fixture();
	int64_t now = T0 + 60000;
	zcor_set_clock(z, clock_of, &now);
	long long hist = t_sql_int(zcor_dir(z), "SELECT count(*) FROM history");
	int rc;
	json_t *r = recalled(z, NULL, "group:1", "102", 0, &rc);
	CHECK_INT(rc, ZCOR_OK);
	CHECK_STR(t_str(r, "conversation"), "group:1");
	CHECK_STR(t_str(r, "messageId"), "102");
	CHECK_STR(t_str(r, "recalledAt"), "2025-11-29T10:01:00.000Z");
	json_decref(r);
	CHECK_INT(t_sql_int(zcor_dir(z), "SELECT recalled_at FROM messages WHERE message_id = '102'"),
		  now);
	CHECK_INT(t_sql_int(zcor_dir(z), "SELECT count(*) FROM messages WHERE conversation = 'group:1'"), 3);
	zcor_flush(z);
	CHECK_INT(t_sql_int(zcor_dir(z), "SELECT count(*) FROM history"), hist);

	/* idempotent: a second notice keeps the first time */
	now += 3600000;
	r = recalled(z, NULL, "group:1", "102", T0 + 999, &rc);
	CHECK_INT(rc, ZCOR_OK);
	CHECK_STR(t_str(r, "recalledAt"), "2025-11-29T10:01:00.000Z");
	json_decref(r);

	json_t *page = t_call_ok(z, NULL, "qq_transcript", "{\"action\":\"read\",\"conversation\":\"group:1\"}");
	CHECK_STR(t_str(item(page, "102"), "recalledAt"), "2025-11-29T10:01:00.000Z");
	CHECK_STR(t_str(item(page, "102"), "text"), "我的密码是 hunter2");
	CHECK(json_object_get(item(page, "101"), "recalledAt") == NULL);
	CHECK(json_object_get(item(page, "103"), "recalledAt") == NULL);
	json_decref(page);
	page = t_call_ok(z, "group:1", "qq_transcript", "{\"action\":\"search\",\"keywords\":[\"密码\"]}");
	CHECK_INT(t_int(page, "total"), 1);
	CHECK_STR(t_str(item(page, "102"), "recalledAt"), "2025-11-29T10:01:00.000Z");
	json_decref(page);

	/* an explicit time is taken as given */
	r = recalled(z, NULL, "group:1", "103", T0 + 5000, &rc);
	CHECK_STR(t_str(r, "recalledAt"), "2025-11-29T10:00:05.000Z");
	json_decref(r);
	zcor_close(z);
}

/* Refusals change nothing: an unknown id, another conversation's ctx,
 * a bad key or id or time. */
static void issue15_recalled_refusals(void)
{
	zcor *z = fixture();
	int rc;
	json_t *r = recalled(z, NULL, "group:1", "999", 0, &rc);
	CHECK_INT(rc, ZCOR_ENOTFOUND);
	CHECK_HAS(t_errmsg(r), "'999'");
	json_decref(r);
	/* a message of another conversation is not this one's */
	r = recalled(z, NULL, "group:1", "p1", 0, &rc);
	CHECK_INT(rc, ZCOR_ENOTFOUND);
	json_decref(r);
	struct zcor_ctx other = {ZCOR_ACTOR_UI, "private:9"};
	r = recalled(z, &other, "group:1", "102", 0, &rc);
	CHECK_INT(rc, ZCOR_EFORBIDDEN);
	CHECK_HAS(t_errmsg(r), "private:9");
	json_decref(r);
	struct zcor_ctx own = {ZCOR_ACTOR_UI, "group:1"};
	r = recalled(z, &own, "group:1", "101", 0, &rc);
	CHECK_INT(rc, ZCOR_OK);
	json_decref(r);
	r = recalled(z, NULL, "group:1/../x", "102", 0, &rc);
	CHECK_INT(rc, ZCOR_EINVAL);
	CHECK_HAS(t_errmsg(r), "conversation");
	json_decref(r);
	r = recalled(z, NULL, "group:1", "", 0, &rc);
	CHECK_INT(rc, ZCOR_EINVAL);
	CHECK_HAS(t_errmsg(r), "messageId");
	json_decref(r);
	r = recalled(z, NULL, "group:1", NULL, 0, &rc);
	CHECK_INT(rc, ZCOR_EINVAL);
	json_decref(r);
	r = recalled(z, NULL, "group:1", "10\n2", 0, &rc);
	CHECK_INT(rc, ZCOR_EINVAL);
	CHECK_HAS(t_errmsg(r), "messageId");
	json_decref(r);
	r = recalled(z, NULL, "group:1", "102", -5, &rc);
	CHECK_INT(rc, ZCOR_EINVAL);
	CHECK_HAS(t_errmsg(r), "at");
	json_decref(r);
	CHECK_INT(t_sql_int(zcor_dir(z), "SELECT count(*) FROM messages WHERE recalled_at IS NOT NULL"), 1);
	zcor_close(z);
}

/* The turn's batch carries "recalledAt" (so the frame shows it); recall
 * is not asked about a withdrawn message's text; a message recalled after
 * its turn took it stays delivered (no second delivery). */
static void issue15_batch_marks_recalled_and_recall_skips_them(void)
{
	zcor *z = fixture();
	int rc;
	json_decref(recalled(z, NULL, "group:1", "102", T0, &rc));
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", zcor_dir(z));
	zcor_close(z);

	struct zc_mem m;
	struct zc_err e = {0};
	static const struct zcor_ctx agent = {ZCOR_ACTOR_MODEL, NULL};
	CHECK_INT(zc_mem_open(&m, dir, &e), ZCOR_OK);
	json_t *a = json_pack("{s:s, s:s, s:i}", "conversation", "group:1", "owner", "t", "leaseMs", 1000);
	json_t *b = NULL, *out = NULL;
	CHECK_INT(zc_mem_run(&m, &agent, &zc_op_turn_begin, a, &b, &e), ZCOR_OK);
	json_t *msgs = json_object_get(b, "messages");
	CHECK_INT(json_array_size(msgs), 3);
	CHECK_STR(t_str(json_array_get(msgs, 1), "id"), "102");
	CHECK_STR(t_str(json_array_get(msgs, 1), "recalledAt"), "2025-11-29T10:00:00.000Z");
	CHECK(json_object_get(json_array_get(msgs, 0), "recalledAt") == NULL);

	json_t *req = zc_turn_recall_request("group:1", msgs);
	char *text = zc_json_dump(req);
	CHECK_HAS(text, "周六打本吗");
	CHECK(text && !strstr(text, "hunter2"));
	CHECK_INT(json_array_size(json_object_get(req, "messages")), 2);
	zc_free(text);
	json_decref(req);
	/* a batch of withdrawn messages alone asks recall nothing */
	json_t *only = json_pack("[O]", json_array_get(msgs, 1));
	CHECK(zc_turn_recall_request("group:1", only) == NULL);
	json_decref(only);

	/* the turn ends; then 103 is withdrawn: it is not delivered again */
	json_t *fin = json_pack("{s:s, s:s, s:O, s:i, s:i, s:s, s:n, s:n, s:{}, s:[]}", "conversation",
				"group:1", "owner", "t", "upto", json_object_get(b, "upto"), "startedAt", 1,
				"endedAt", 2, "status", "ok", "reply", "error", "record", "dialogue");
	CHECK_INT(zc_mem_run(&m, &agent, &zc_op_turn_finish, fin, &out, &e), ZCOR_OK);
	json_decref(fin);
	json_decref(out);
	json_decref(b);
	zc_mem_close(&m);
	CHECK_INT(zcor_open(&z, dir), ZCOR_OK);
	json_decref(recalled(z, NULL, "group:1", "103", T0, &rc));
	CHECK_INT(rc, ZCOR_OK);
	zcor_close(z);
	CHECK_INT(zc_mem_open(&m, dir, &e), ZCOR_OK);
	CHECK_INT(zc_mem_run(&m, &agent, &zc_op_turn_begin, a, &b, &e), ZCOR_OK);
	CHECK_INT(json_array_size(json_object_get(b, "messages")), 0);
	CHECK_INT(t_int(b, "pending"), 0);
	json_decref(b);
	json_decref(a);
	zc_mem_close(&m);
}

/* Export writes "recalledAt" on the recalled message's line; import reads
 * it back (both as written and as epoch milliseconds); mirror/ rewrites the
 * day of a message recalled. */
static void issue15_log_files_keep_recalled(void)
{
	setenv("TZ", "UTC", 1);
	tzset();
	zcor *z = fixture();
	int rc;
	CHECK_INT(zcor_config_set(z, "{\"mirror\": true}"), ZCOR_OK);
	/* the first change writes the whole mirror; the recall then its day */
	json_decref(t_call_ok(z, NULL, "qq_memory",
			      "{\"action\":\"upsert\",\"path\":\"STICKERS.md\",\"name\":\"猫\",\"meaning\":\"好\"}"));
	char mpath[4200];
	snprintf(mpath, sizeof(mpath), "%s/mirror/conversations/group-1/log/2025-11-29.jsonl", zcor_dir(z));
	char *mtext = slurp(mpath);
	CHECK_HAS(mtext, "hunter2");
	CHECK(mtext && !strstr(mtext, "recalledAt"));
	free(mtext);
	json_decref(recalled(z, NULL, "group:1", "102", T0, &rc));
	mtext = slurp(mpath);
	CHECK_HAS(mtext, "\"recalledAt\":\"2025-11-29T10:00:00.000Z\"");
	free(mtext);

	const char *root = t_tmpdir();
	char *out = NULL;
	CHECK_INT(zcor_transcript_export(z, "group:1", root, &out), ZCOR_OK);
	zcor_free(out);
	char path[700];
	snprintf(path, sizeof(path), "%s/conversations/group-1/log/2025-11-29.jsonl", root);
	zcor *z2 = t_open();
	CHECK_INT(zcor_transcript_import_file(z2, "group:1", path, &out), ZCOR_OK);
	json_t *rep = t_answer(z2, ZCOR_OK, out);
	CHECK_INT(t_int(rep, "logged"), 3);
	CHECK_INT(t_int(rep, "errorCount"), 0);
	json_decref(rep);
	const char *read = "{\"action\":\"read\",\"conversation\":\"group:1\"}";
	json_t *p1 = t_call_ok(z, NULL, "qq_transcript", read), *p2 = t_call_ok(z2, NULL, "qq_transcript", read);
	CHECK(json_equal(t_get(p1, "items"), t_get(p2, "items")));
	CHECK_STR(t_str(item(p2, "102"), "recalledAt"), "2025-11-29T10:00:00.000Z");
	json_decref(p1);
	json_decref(p2);

	/* another writer's spelling; a bad value is that line's error */
	snprintf(path, sizeof(path), "%s/alias.jsonl", t_tmpdir());
	FILE *f = fopen(path, "wb");
	fprintf(f, "{\"id\":\"a1\",\"time\":1764410400,\"user_id\":5,\"text\":\"x\",\"recalled_at\":%lld}\n"
		   "{\"id\":\"a2\",\"time\":1764410400,\"user_id\":5,\"text\":\"y\",\"recalledAt\":\"昨天\"}\n",
		T0 + 1000);
	fclose(f);
	CHECK_INT(zcor_transcript_import_file(z2, "group:2", path, &out), ZCOR_OK);
	rep = t_answer(z2, ZCOR_OK, out);
	CHECK_INT(t_int(rep, "logged"), 1);
	CHECK_INT(t_int(rep, "errorCount"), 1);
	CHECK_INT(t_int(rep, "errors.0.line"), 2);
	CHECK_HAS(t_str(rep, "errors.0.error"), "recalledAt");
	json_decref(rep);
	CHECK_INT(t_sql_int(zcor_dir(z2), "SELECT recalled_at FROM messages WHERE message_id = 'a1'"),
		  T0 + 1000);
	zcor_close(z);
	zcor_close(z2);
}

static json_t *conv_get(zcor *z, const struct zcor_ctx *ctx, const char *key, int *rc)
{
	char *out = NULL;
	*rc = zcor_conversation_get(z, ctx, key, &out);
	return t_answer(z, *rc, out);
}

/* Titles: shown by both reads (null when none), set, replaced, cleared;
 * a conversation without a log gets a row; bad titles change nothing. */
static void issue15_conversation_title(void)
{
	zcor *z = fixture();
	int rc;
	json_t *c = conv_get(z, NULL, "group:1", &rc);
	CHECK(json_is_null(t_get(c, "conversation.title")));
	json_decref(c);
	CHECK_INT(zcor_conversation_title(z, "group:1", "周末副本群"), ZCOR_OK);
	CHECK_INT(zcor_conversation_title(z, "group:1", "周末副本群"), ZCOR_OK); /* idempotent */
	c = conv_get(z, NULL, "group:1", &rc);
	CHECK_STR(t_str(c, "conversation.title"), "周末副本群");
	CHECK_INT(t_int(c, "conversation.messages"), 3);
	json_decref(c);
	char *out = NULL;
	CHECK_INT(zcor_conversations(z, NULL, &out), ZCOR_OK);
	json_t *l = t_answer(z, ZCOR_OK, out);
	size_t i;
	json_t *v;
	int seen = 0;
	json_array_foreach(json_object_get(l, "items"), i, v) {
		if (strcmp(t_str(v, "key"), "group:1") == 0)
			seen += t_str(v, "title") && strcmp(t_str(v, "title"), "周末副本群") == 0;
		else
			seen += json_is_null(json_object_get(v, "title")) ? 10 : 0;
	}
	CHECK_INT(seen, 11);
	json_decref(l);

	/* at most 100 characters (not bytes) */
	char title[512] = "";
	for (size_t k = 0; k < 101; k++)
		memcpy(title + 3 * k, "群", 3);
	title[300] = '\0';
	CHECK_INT(zcor_conversation_title(z, "group:1", title), ZCOR_OK);
	title[300] = title[0];
	CHECK_INT(zcor_conversation_title(z, "group:1", title), ZCOR_EINVAL);
	CHECK_HAS(zcor_errmsg(z), "title");
	CHECK_HAS(zcor_errmsg(z), "101 characters");
	static const char *const bad[] = {"a\nb", "tab\there", "\xc2\x85next", "\xff\xfe", "del\x7f"};
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		CHECK_INT(zcor_conversation_title(z, "group:1", bad[k]), ZCOR_EINVAL);
		CHECK_HAS(zcor_errmsg(z), "title");
	}
	CHECK_INT(zcor_conversation_title(z, "group:1/x", "名字"), ZCOR_EINVAL);
	CHECK_HAS(zcor_errmsg(z), "conversation");
	c = conv_get(z, NULL, "group:1", &rc);
	CHECK_INT(zc_utf8_len(t_str(c, "conversation.title")), 100);
	json_decref(c);

	/* "" and NULL clear it */
	CHECK_INT(zcor_conversation_title(z, "group:1", ""), ZCOR_OK);
	c = conv_get(z, NULL, "group:1", &rc);
	CHECK(json_is_null(t_get(c, "conversation.title")));
	json_decref(c);
	CHECK_INT(zcor_conversation_title(z, "group:1", "又一个名字"), ZCOR_OK);
	CHECK_INT(zcor_conversation_title(z, "group:1", NULL), ZCOR_OK);
	c = conv_get(z, NULL, "group:1", &rc);
	CHECK(json_is_null(t_get(c, "conversation.title")));
	json_decref(c);

	/* a group the bot has not heard yet gets its row; an empty import
	 * keeps it */
	c = conv_get(z, NULL, "group:77", &rc);
	CHECK_INT(rc, ZCOR_ENOTFOUND);
	json_decref(c);
	CHECK_INT(zcor_conversation_title(z, "group:77", "新群"), ZCOR_OK);
	c = conv_get(z, NULL, "group:77", &rc);
	CHECK_INT(rc, ZCOR_OK);
	CHECK_STR(t_str(c, "conversation.title"), "新群");
	CHECK_INT(t_int(c, "conversation.messages"), 0);
	json_decref(c);
	char path[600];
	snprintf(path, sizeof(path), "%s/empty.jsonl", t_tmpdir());
	FILE *f = fopen(path, "wb");
	fclose(f);
	CHECK_INT(zcor_transcript_import_file(z, "group:77", path, &out), ZCOR_OK);
	zcor_free(out);
	c = conv_get(z, NULL, "group:77", &rc);
	CHECK_STR(t_str(c, "conversation.title"), "新群");
	json_decref(c);
	/* a bound ctx sees its own title and no other conversation */
	struct zcor_ctx bound = {ZCOR_ACTOR_UI, "group:77"};
	c = conv_get(z, &bound, "group:1", &rc);
	CHECK_INT(rc, ZCOR_EFORBIDDEN);
	json_decref(c);
	zcor_close(z);
}

/* A turn record written through the turn's own operation. */
static long long make_turn(const char *dir)
{
	struct zc_mem m;
	struct zc_err e = {0};
	static const struct zcor_ctx agent = {ZCOR_ACTOR_MODEL, NULL};
	CHECK_INT(zc_mem_open(&m, dir, &e), ZCOR_OK);
	json_t *a = json_pack("{s:s, s:s, s:i}", "conversation", "group:1", "owner", "t", "leaseMs", 1000);
	json_t *b = NULL, *out = NULL;
	CHECK_INT(zc_mem_run(&m, &agent, &zc_op_turn_begin, a, &b, &e), ZCOR_OK);
	json_t *fin = json_pack("{s:s, s:s, s:O, s:i, s:i, s:s, s:s, s:n, s:{s:[s], s:[]}, s:[]}",
				"conversation", "group:1", "owner", "t", "upto", json_object_get(b, "upto"),
				"startedAt", 1, "endedAt", 2, "status", "ok", "reply", "好的", "error",
				"record", "batch", "101", "toolCalls", "dialogue");
	CHECK_INT(zc_mem_run(&m, &agent, &zc_op_turn_finish, fin, &out, &e), ZCOR_OK);
	long long id = t_int(out, "id");
	json_decref(fin);
	json_decref(out);
	json_decref(b);
	json_decref(a);
	zc_mem_close(&m);
	return id;
}

static json_t *newest_turn(zcor *z)
{
	char *out = NULL;
	int rc = zcor_turns(z, NULL, "{\"limit\":1}", &out);
	CHECK_INT(rc, ZCOR_OK);
	json_t *r = t_answer(z, rc, out);
	json_t *t = json_incref(t_get(r, "items.0"));
	json_decref(r);
	return t;
}

/* zcor_turn_note: keys merged into the record (zcor_turns shows them);
 * "delivery" replaced; other existing keys, non-objects, oversize notes
 * refused without a change; an unknown turn is not found. */
static void issue15_turn_note(void)
{
	zcor *z = fixture();
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", zcor_dir(z));
	zcor_close(z);
	long long id = make_turn(dir);
	CHECK(id > 0);
	CHECK_INT(zcor_open(&z, dir), ZCOR_OK);
	CHECK_INT(zcor_turn_note(z, id, "{\"delivery\":{\"status\":\"failed\",\"retcode\":1200,"
					"\"message\":\"timeout\"},\"worldNote\":1}"),
		  ZCOR_OK);
	json_t *t = newest_turn(z);
	CHECK_STR(t_str(t, "delivery.status"), "failed");
	CHECK_INT(t_int(t, "delivery.retcode"), 1200);
	CHECK_INT(t_int(t, "worldNote"), 1);
	CHECK_STR(t_str(t, "reply"), "好的");
	CHECK_STR(t_str(t, "batch.0"), "101");
	json_decref(t);
	/* a retry that went out replaces the delivery */
	CHECK_INT(zcor_turn_note(z, id, "{\"delivery\":{\"status\":\"sent\",\"messageIds\":[\"5\"],"
					"\"retried\":true}}"),
		  ZCOR_OK);
	t = newest_turn(z);
	CHECK_STR(t_str(t, "delivery.status"), "sent");
	CHECK(t_get(t, "delivery.retcode") == NULL);
	CHECK(json_is_true(t_get(t, "delivery.retried")));
	json_decref(t);
	char *before = t_sql_str(dir, "SELECT record FROM turns");

	/* refusals: nothing changes */
	static const struct {
		const char *note, *says;
	} bad[] = {
		{"{\"batch\":[]}", "'batch'"},           /* the record's own */
		{"{\"worldNote\":2}", "'worldNote'"},    /* an earlier note's */
		{"{\"status\":\"x\"}", "'status'"},      /* a column zcor_turns shows */
		{"{\"reply\":\"x\",\"other\":1}", "'reply'"},
		{"[1]", "JSON object"},
		{"\"sent\"", "the note"},
		{"{\"a\":", "note"},
		{"", "note"},
		{"{\"\":1}", "1 to 64 bytes"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_INT(zcor_turn_note(z, id, bad[i].note), ZCOR_EINVAL);
		CHECK_HAS(zcor_errmsg(z), bad[i].says);
	}
	CHECK_INT(zcor_turn_note(z, id, NULL), ZCOR_EINVAL);
	char *after = t_sql_str(dir, "SELECT record FROM turns");
	CHECK_STR(after, before);
	free(before);
	free(after);
	/* at most 16 KiB of JSON text: {"big":"xx…x"} of 16384 bytes, then 16385 */
	static char big[16390];
	for (size_t len = 16384; len <= 16385; len++) {
		memset(big, 'x', len);
		memcpy(big, len == 16384 ? "{\"big\":\"" : "{\"bi2\":\"", 8);
		memcpy(big + len - 2, "\"}", 3);
		CHECK_INT(strlen(big), len);
		CHECK_INT(zcor_turn_note(z, id, big), len == 16384 ? ZCOR_OK : ZCOR_EINVAL);
	}
	CHECK_HAS(zcor_errmsg(z), "16384");
	t = newest_turn(z);
	CHECK_INT(strlen(t_str(t, "big")), 16384 - 10);
	CHECK(t_get(t, "bi2") == NULL);
	json_decref(t);

	CHECK_INT(zcor_turn_note(z, id + 1, "{\"delivery\":{}}"), ZCOR_ENOTFOUND);
	CHECK_INT(zcor_turn_note(z, 0, "{\"delivery\":{}}"), ZCOR_ENOTFOUND);
	CHECK_INT(zcor_turn_note(z, -3, "{\"delivery\":{}}"), ZCOR_ENOTFOUND);
	zcor_close(z);
}

/* Schema 13 from 12: a store of schema 12 (no recalled_at, no title)
 * opens with its messages and conversations kept, and the new calls
 * work on it. */
static void issue15_migration_12_to_13(void)
{
	zcor *z = fixture();
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", zcor_dir(z));
	CHECK_INT(t_sql_int(dir, "PRAGMA user_version"), 18);
	t_sql_exec(z, "ALTER TABLE messages DROP COLUMN recalled_at");
	t_sql_exec(z, "ALTER TABLE conversations DROP COLUMN title");
	t_sql_exec(z, "PRAGMA user_version = 12");
	zcor_close(z);
	CHECK_INT(t_sql_int(dir, "SELECT count(*) FROM pragma_table_info('messages') WHERE name = 'recalled_at'"), 0);
	CHECK_INT(zcor_open(&z, dir), ZCOR_OK);
	CHECK_INT(t_sql_int(dir, "PRAGMA user_version"), 18);
	CHECK_INT(t_sql_int(dir, "SELECT count(*) FROM messages"), 4);
	CHECK_INT(t_sql_int(dir, "SELECT count(*) FROM messages WHERE recalled_at IS NOT NULL"), 0);
	int rc;
	json_t *c = conv_get(z, NULL, "group:1", &rc);
	CHECK_INT(rc, ZCOR_OK);
	CHECK_INT(t_int(c, "conversation.messages"), 3);
	CHECK(json_is_null(t_get(c, "conversation.title")));
	json_decref(c);
	json_t *r = recalled(z, NULL, "group:1", "101", T0, &rc);
	CHECK_INT(rc, ZCOR_OK);
	json_decref(r);
	CHECK_INT(zcor_conversation_title(z, "group:1", "老群"), ZCOR_OK);
	json_t *page = t_call_ok(z, NULL, "qq_transcript", "{\"action\":\"search\",\"keywords\":[\"打本\"]}");
	CHECK_INT(t_int(page, "total"), 1);
	CHECK_STR(t_str(item(page, "101"), "recalledAt"), "2025-11-29T10:00:00.000Z");
	json_decref(page);
	zcor_close(z);
}

/* ---- zcor_log_batches: many conversations, one transaction ------------- */

static json_t *log_batches(zcor *z, const struct zcor_ctx *ctx, const char *body, int *rc)
{
	char *out = NULL;
	*rc = zcor_log_batches(z, ctx, body, &out);
	return t_answer(z, *rc, out);
}

static long long messages_in(zcor *z, const char *conv)
{
	char sql[160];
	zcor_flush(z);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM messages WHERE conversation = '%s'", conv);
	return t_sql_int(zcor_dir(z), sql);
}

/* Each batch logged into its own conversation, admission per batch, a
 * duplicate skipped; answers in the batches' order. */
static void issue15_log_batches_many_conversations(void)
{
	zcor *z = fixture();
	CHECK_INT(zcor_config_set(z, "{\"admission\": {\"groups\": [\"1\", \"2\"]}}"), ZCOR_OK);
	int rc;
	json_t *a = log_batches(
		z, NULL,
		"{\"batches\":["
		"{\"conversation\":\"group:2\",\"messages\":[{\"id\":\"201\",\"senderId\":\"21\",\"text\":\"二群\"},"
		"{\"id\":\"202\",\"senderId\":\"22\",\"text\":\"二群又一句\"}]},"
		"{\"conversation\":\"group:3\",\"messages\":[{\"id\":\"301\",\"senderId\":\"31\",\"text\":\"没放行\"}]},"
		"{\"conversation\":\"group:1\",\"messages\":[{\"id\":\"103\",\"senderId\":\"11\",\"text\":\"好\"},"
		"{\"id\":\"104\",\"senderId\":\"11\",\"text\":\"新的\"}]}]}",
		&rc);
	CHECK_INT(rc, ZCOR_OK);
	CHECK_STR(t_str(a, "results.0.conversation"), "group:2");
	CHECK_INT(t_int(a, "results.0.logged"), 2);
	CHECK_INT(t_int(a, "results.1.logged"), 0);
	CHECK_STR(t_str(a, "results.1.skipped.0.reason"), "group_not_allowed");
	CHECK_INT(t_int(a, "results.2.logged"), 1);
	CHECK_STR(t_str(a, "results.2.skipped.0.messageId"), "103");
	CHECK_STR(t_str(a, "results.2.skipped.0.reason"), "duplicate");
	CHECK_INT(messages_in(z, "group:2"), 2);
	CHECK_INT(messages_in(z, "group:3"), 0);
	CHECK_INT(messages_in(z, "group:1"), 4);
	json_decref(a);
	zcor_close(z);
}

/* A malformed batch refuses the whole call, naming it; nothing is logged.
 * A caller bound to a conversation logs only into its own. */
static void issue15_log_batches_refusals(void)
{
	zcor *z = fixture();
	static const struct {
		const char *body, *names;
	} bad[] = {
		{"{\"batches\":[]}", "batches"},
		{"{\"batches\":[{\"conversation\":\"group:2\",\"messages\":[{\"id\":\"x\",\"senderId\":\"1\"}]},"
		 "{\"conversation\":\"nope\",\"messages\":[{\"id\":\"y\",\"senderId\":\"1\"}]}]}",
		 "batches[1].conversation"},
		{"{\"batches\":[{\"conversation\":\"group:2\",\"messages\":[{\"id\":\"x\",\"senderId\":\"1\"}]},"
		 "{\"conversation\":\"group:4\",\"messages\":\"no\"}]}",
		 "batches[1]"},
		{"{\"batches\":[{\"conversation\":\"group:2\",\"messages\":[{\"id\":\"x\",\"senderId\":\"1\"}]},7]}",
		 "batches[1]"},
		{"{\"batch\":[]}", "batches"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc;
		json_t *a = log_batches(z, NULL, bad[i].body, &rc);
		CHECK_INT(rc, ZCOR_EINVAL);
		CHECK_HAS(t_errmsg(a), bad[i].names);
		json_decref(a);
	}
	CHECK_INT(messages_in(z, "group:2"), 0);
	struct zcor_ctx bound = {ZCOR_ACTOR_MODEL, "group:1"};
	int rc;
	json_t *a = log_batches(z, &bound,
				"{\"batches\":[{\"conversation\":\"group:1\",\"messages\":[{\"id\":\"105\","
				"\"senderId\":\"1\",\"text\":\"自己的\"}]},{\"conversation\":\"group:2\","
				"\"messages\":[{\"id\":\"z\",\"senderId\":\"1\",\"text\":\"别人的\"}]}]}",
				&rc);
	CHECK_INT(rc, ZCOR_EFORBIDDEN);
	json_decref(a);
	CHECK_INT(messages_in(z, "group:1"), 3);
	CHECK_INT(messages_in(z, "group:2"), 0);
	zcor_close(z);
}

/* A batch refused for what it holds (an image reference its conversation
 * never saw) is rolled back alone; the other batches of the call commit. */
static void issue15_log_batches_one_refused_alone(void)
{
	zcor *z = fixture();
	int rc;
	struct zcor_ctx bound = {ZCOR_ACTOR_MODEL, "group:1"};
	json_t *a = log_batches(
		z, &bound,
		"{\"batches\":[{\"conversation\":\"group:1\",\"messages\":[{\"id\":\"110\",\"senderId\":\"1\","
		"\"text\":\"先一句\"}]},{\"conversation\":\"group:1\",\"messages\":[{\"id\":\"111\","
		"\"senderId\":\"1\",\"text\":\"看图\",\"media\":[\"media/"
		"0000000000000000000000000000000000000000000000000000000000000000.png\"]}]},"
		"{\"conversation\":\"group:1\",\"messages\":[{\"id\":\"112\",\"senderId\":\"1\",\"text\":\"后一句\"}]}]}",
		&rc);
	CHECK_INT(rc, ZCOR_OK);
	CHECK_INT(t_int(a, "results.0.logged"), 1);
	CHECK_STR(t_str(a, "results.1.error.code"), "invalid_argument");
	CHECK_INT(t_int(a, "results.2.logged"), 1);
	CHECK_INT(messages_in(z, "group:1"), 5);
	json_decref(a);
	zcor_close(z);
}

const struct t_case t_cases[] = {
	{"issue15_recalled_message_is_kept_and_flagged", issue15_recalled_message_is_kept_and_flagged},
	{"issue15_recalled_refusals", issue15_recalled_refusals},
	{"issue15_batch_marks_recalled_and_recall_skips_them", issue15_batch_marks_recalled_and_recall_skips_them},
	{"issue15_log_files_keep_recalled", issue15_log_files_keep_recalled},
	{"issue15_conversation_title", issue15_conversation_title},
	{"issue15_turn_note", issue15_turn_note},
	{"issue15_migration_12_to_13", issue15_migration_12_to_13},
	{"issue15_log_batches_many_conversations", issue15_log_batches_many_conversations},
	{"issue15_log_batches_refusals", issue15_log_batches_refusals},
	{"issue15_log_batches_one_refused_alone", issue15_log_batches_one_refused_alone},
	{0},
};
