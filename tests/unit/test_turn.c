/*
 * test_turn.c — issue 14: the pieces of the turn that read better in C
 * than through a fake model: the external_event_frame's shape (the
 * header only in the copy sent), the refusals, and the dialogue's bounds
 * (whole turns, characters, ambient messages) through the operations of
 * memory/dialogue.c.
 */
#include <stdio.h>
#include <string.h>

#include "agent/turn.h"
#include "base/alloc.h"
#include "base/buf.h"
#include "harness.h"
#include "base/json.h"
#include "llm/chat.h"
#include "memory/dialogue.h"

static void issue14_frame_holds_the_batch_as_data(void)
{
	json_t *msgs = json_pack("[{s:s, s:s}]", "id", "m1", "text", "你好");
	json_t *sent = json_array(), *kept = json_array();
	zc_turn_frame(sent, "frame_7", msgs, NULL, "【自动回忆】晨光");
	zc_turn_frame(kept, "frame_7", msgs, NULL, NULL);
	CHECK_INT(json_array_size(sent), 2);
	json_t *call = json_array_get(sent, 0), *res = json_array_get(sent, 1);
	CHECK_STR(json_string_value(json_object_get(call, "role")), "assistant");
	json_t *tc = json_array_get(json_object_get(call, "tool_calls"), 0);
	CHECK_STR(json_string_value(json_object_get(json_object_get(tc, "function"), "name")),
		  "external_event_frame");
	CHECK_STR(json_string_value(json_object_get(res, "role")), "tool");
	CHECK_STR(json_string_value(json_object_get(res, "tool_call_id")), "frame_7");
	json_t *data = json_loads(json_string_value(json_object_get(res, "content")), 0, NULL);
	CHECK_STR(json_string_value(json_object_get(data, "recall")), "【自动回忆】晨光");
	CHECK_STR(json_string_value(json_object_get(json_array_get(json_object_get(data, "messages"), 0), "text")),
		  "你好");
	json_decref(data);
	const char *k = json_string_value(json_object_get(json_array_get(kept, 1), "content"));
	CHECK(k && !strstr(k, "recall") && !strstr(k, "晨光"));
	json_decref(sent);
	json_decref(kept);
	json_decref(msgs);
}

static void issue14_refusals(void)
{
	json_t *declared = json_pack("[s, s]", "zcor_memory_write", "zcor_memory_read");
	char buf[512];
	CHECK(zc_turn_refusal("zcor_memory_write", 1, "{}", declared, buf, sizeof(buf)) == NULL);
	CHECK_HAS(zc_turn_refusal("external_event_frame", 1, "{}", declared, buf, sizeof(buf)),
		  "must never be called");
	/* even were it declared, the frame is never run */
	json_t *with_frame = json_pack("[s]", "external_event_frame");
	CHECK(zc_turn_refusal("external_event_frame", 1, "{}", with_frame, buf, sizeof(buf)) != NULL);
	CHECK_HAS(zc_turn_refusal("zcor_relationship_write", 1, "{}", declared, buf, sizeof(buf)),
		  "not a tool declared in this request");
	CHECK_HAS(zc_turn_refusal("zcor_memory_read", 0, "\"m1\"", declared, buf, sizeof(buf)),
		  "not a JSON object");
	json_decref(declared);
	json_decref(with_frame);
}

/* A turn through the operations: lease, batch, finish with a dialogue. */
static void finish_turn(struct zc_mem *m, const char *conv, int chars, int ambient)
{
	static const struct zcor_ctx ctx = {ZCOR_ACTOR_MODEL, NULL};
	struct zc_err e = {0};
	json_t *a = json_pack("{s:s, s:s, s:i}", "conversation", conv, "owner", "t", "leaseMs", 1000);
	json_t *b = NULL, *out = NULL;
	CHECK_INT(zc_mem_run(m, &ctx, &zc_op_turn_begin, a, &b, &e), ZCOR_OK);
	json_decref(a);
	char text[512];
	memset(text, 'x', (size_t)chars);
	text[chars] = '\0';
	json_t *dlg = json_pack("[{s:s, s:s, s:i}, {s:s, s:s}]", "role", "tool", "content", "frame",
				"_messages", ambient, "role", "assistant", "content", text);
	json_t *fin = json_pack("{s:s, s:s, s:O, s:i, s:i, s:s, s:n, s:n, s:{}, s:o}", "conversation",
				conv, "owner", "t", "upto", json_object_get(b, "upto"), "startedAt", 1,
				"endedAt", 2, "status", "ok", "reply", "error", "record", "dialogue", dlg);
	CHECK_INT(zc_mem_run(m, &ctx, &zc_op_turn_finish, fin, &out, &e), ZCOR_OK);
	json_decref(fin);
	json_decref(b);
	json_decref(out);
}

/* zc_dialogue_read's text as the array it is spliced into: it must
 * parse, and hold as many messages as it says. */
static json_t *read_dialogue(struct zc_mem *m, const char *conv, long chars, long ambient)
{
	struct zc_err e = {0};
	char *text = NULL;
	size_t n = 99;
	CHECK_INT(zc_dialogue_read(m, conv, chars, ambient, &text, &n, &e), ZCOR_OK);
	struct zc_buf b = ZC_BUF_INIT;
	zc_buf_addf(&b, "[%s]", text ? text : "");
	json_error_t je;
	json_t *d = json_loads(b.p, 0, &je);
	CHECK(d != NULL);
	if (!d) {
		fprintf(stderr, "not JSON: %s (%s)\n", b.p, je.text);
		d = json_array();
	}
	CHECK_INT(json_array_size(d), n);
	zc_buf_release(&b);
	zc_free(text);
	return d;
}

static void issue14_dialogue_bounds_whole_turns(void)
{
	struct zc_mem m;
	struct zc_err e = {0};
	CHECK_INT(zc_mem_open(&m, t_tmpdir(), &e), ZCOR_OK);
	finish_turn(&m, "console:a", 100, 3); /* oldest */
	finish_turn(&m, "console:a", 100, 3);
	finish_turn(&m, "console:a", 100, 3); /* newest */
	finish_turn(&m, "console:b", 10, 1);
	json_t *d = NULL;
	/* everything fits */
	d = read_dialogue(&m, "console:a", 100000, 100);
	CHECK_INT(json_array_size(d), 6);
	json_decref(d);
	/* two turns' characters (a turn is ~170 characters of JSON): the newest two, whole */
	d = read_dialogue(&m, "console:a", 2 * 200, 100);
	CHECK_INT(json_array_size(d), 4);
	CHECK_STR(json_string_value(json_object_get(json_array_get(d, 0), "role")), "tool");
	CHECK(json_object_get(json_array_get(d, 0), "_messages") == NULL);
	json_decref(d);
	/* ambient messages: 3 per turn, 7 allowed -> two turns */
	d = read_dialogue(&m, "console:a", 100000, 7);
	CHECK_INT(json_array_size(d), 4);
	json_decref(d);
	/* a budget smaller than one turn: nothing, never half a turn */
	d = read_dialogue(&m, "console:a", 120, 100);
	CHECK_INT(json_array_size(d), 0);
	json_decref(d);
	d = read_dialogue(&m, "console:b", 100000, 100);
	CHECK_INT(json_array_size(d), 2);
	json_decref(d);
	zc_mem_close(&m);
}

/* A turn whose dialogue is dlg (taken), through the operations. */
static void finish_with(struct zc_mem *m, const char *conv, json_t *dlg)
{
	static const struct zcor_ctx ctx = {ZCOR_ACTOR_MODEL, NULL};
	struct zc_err e = {0};
	json_t *a = json_pack("{s:s, s:s, s:i}", "conversation", conv, "owner", "t", "leaseMs", 1000);
	json_t *b = NULL, *out = NULL;
	CHECK_INT(zc_mem_run(m, &ctx, &zc_op_turn_begin, a, &b, &e), ZCOR_OK);
	json_decref(a);
	json_t *fin = json_pack("{s:s, s:s, s:O, s:i, s:i, s:s, s:n, s:n, s:{}, s:o}", "conversation",
				conv, "owner", "t", "upto", json_object_get(b, "upto"), "startedAt", 1,
				"endedAt", 2, "status", "ok", "reply", "error", "record", "dialogue", dlg);
	CHECK_INT(zc_mem_run(m, &ctx, &zc_op_turn_finish, fin, &out, &e), ZCOR_OK);
	json_decref(fin);
	json_decref(b);
	json_decref(out);
}

/* A turn as the turn keeps it: the frame (call + result), a tool call of
 * the model with its result, the reply; text that JSON must escape. */
static void finish_real_turn(struct zc_mem *m, const char *conv, int i)
{
	char id[32], fid[32], args[160], frame[200], reply[96];
	snprintf(fid, sizeof(fid), "frame_%d", i);
	snprintf(id, sizeof(id), "call_%d", i);
	snprintf(args, sizeof(args), "{\"title\":\"咖啡 \\\"晨光\\\" %d\",\"body\":\"东门/北门\\n\\t😀\"}", i);
	snprintf(frame, sizeof(frame),
		 "{\"messages\":[{\"id\":\"m%d\",\"senderId\":\"u1\",\"text\":\"记住：晨光 \\u0001 %d\"}]}", i, i);
	snprintf(reply, sizeof(reply), "记住了「晨光」%d — \"ok\" \\ </end>", i);
	json_t *d = json_array(), *batch = json_pack("[{s:s, s:s}]", "id", "m", "text", frame);
	zc_turn_frame(d, fid, batch, NULL, NULL);
	json_decref(batch);
	json_object_set_new(json_array_get(d, 1), "_messages", json_integer(1));
	json_array_append_new(d, json_pack("{s:s, s:n, s:[{s:s, s:s, s:{s:s, s:s}}]}", "role", "assistant",
					   "content", "tool_calls", "id", id, "type", "function",
					   "function", "name", "zcor_memory_write", "arguments", args));
	json_array_append_new(d, json_pack("{s:s, s:s, s:s}", "role", "tool", "tool_call_id", id,
					   "content", "{\"id\":\"m42\",\"score\":0.5,\"ok\":true}"));
	json_array_append_new(d, json_pack("{s:s, s:s}", "role", "assistant", "content", reply));
	finish_with(m, conv, d);
}

/* The request as it was built before the splice: each stored row parsed
 * (zc_col_json) into the array after the system message, then the frame;
 * rows: the SQL that picks the rows the bounds let in, oldest first. */
static char *body_from_values(struct zc_mem *m, const struct zc_provider_config *cfg,
			      const json_t *head, const json_t *tail, const char *rows_sql,
			      const json_t *tools)
{
	json_t *msgs = json_array();
	json_array_extend(msgs, (json_t *)head);
	sqlite3_stmt *st = NULL;
	CHECK_INT(sqlite3_prepare_v2(m->store.db, rows_sql, -1, &st, NULL), SQLITE_OK);
	while (st && sqlite3_step(st) == SQLITE_ROW)
		json_array_append_new(msgs, zc_col_json(st, 0, '{'));
	sqlite3_finalize(st);
	json_array_extend(msgs, (json_t *)tail);
	struct zc_chat_req r = {.messages = msgs, .tools = tools, .temperature = 0.3};
	char *body = NULL;
	struct zc_err e = {0};
	CHECK_INT(zc_llm_chat_body(cfg, &r, &body, &e), ZCOR_OK);
	json_decref(msgs);
	return body;
}

/* The request as the turn builds it now: the stored text spliced. */
static char *body_spliced(struct zc_mem *m, const struct zc_provider_config *cfg, const json_t *head,
			  const json_t *tail, long chars, const json_t *tools, const char *tools_text)
{
	struct zc_err e = {0};
	char *text = NULL, *body = NULL;
	size_t n = 0;
	CHECK_INT(zc_dialogue_read(m, "group:1", chars, 100, &text, &n, &e), ZCOR_OK);
	json_t *msgs = json_array();
	json_array_extend(msgs, (json_t *)head);
	json_array_extend(msgs, (json_t *)tail);
	struct zc_chat_req r = {.messages = msgs, .messages_text = text, .messages_count = n,
				.messages_text_at = json_array_size(head), .tools = tools,
				.tools_text = tools_text, .temperature = 0.3};
	CHECK_INT(zc_llm_chat_body(cfg, &r, &body, &e), ZCOR_OK);
	json_decref(msgs);
	zc_free(text);
	return body;
}

/* Issue 14's performance goal: the stored dialogue goes into the request
 * as its stored text instead of being parsed and dumped again — and the
 * model receives the same bytes as before, for the same store state, under
 * every bound (everything, two whole turns, none). */
static void issue14_dialogue_spliced_same_request(void)
{
	struct zc_mem m;
	struct zc_err e = {0};
	CHECK_INT(zc_mem_open(&m, t_tmpdir(), &e), ZCOR_OK);
	for (int i = 1; i <= 3; i++)
		finish_real_turn(&m, "group:1", i);
	finish_real_turn(&m, "group:2", 9); /* another conversation's: never in */
	struct zc_provider_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.enabled = 1;
	snprintf(cfg.model, sizeof(cfg.model), "m");
	json_t *head = json_pack("[{s:s, s:s}]", "role", "system", "content", "你是「小Z」\n规则…");
	json_t *tail = json_array(), *batch = json_pack("[{s:s, s:s}]", "id", "m77", "text", "早");
	zc_turn_frame(tail, "frame_77", batch, NULL, "【自动回忆】晨光");
	json_decref(batch);
	json_t *tools = json_loads("[{\"type\":\"function\",\"function\":{\"name\":\"zcor_memory_write\","
				   "\"description\":\"写\",\"parameters\":{\"type\":\"object\"}}}]",
				   0, NULL);
	char *tools_text = zc_json_dump(tools);
	/* one turn's rows are ~700 characters: all three, the newest two, none */
	long budgets[] = {100000, 1500, 100};
	const char *sql[] = {
		"SELECT message FROM dialogue WHERE conversation = 'group:1' ORDER BY seq",
		"SELECT message FROM dialogue WHERE conversation = 'group:1' AND turn_id IN (SELECT "
		"DISTINCT turn_id FROM dialogue WHERE conversation = 'group:1' ORDER BY turn_id DESC "
		"LIMIT 2) ORDER BY seq",
		"SELECT message FROM dialogue WHERE 0",
	};
	long long rows[] = {15, 10, 0};
	for (int k = 0; k < 3; k++) {
		char *before = body_from_values(&m, &cfg, head, tail, sql[k], tools);
		char *after = body_spliced(&m, &cfg, head, tail, budgets[k], tools, tools_text);
		CHECK(before && after);
		if (before && after && strcmp(before, after) != 0) {
			fprintf(stderr, "budget %ld:\nbefore %s\nafter  %s\n", budgets[k], before, after);
			CHECK(0);
		}
		json_t *b = json_loads(after ? after : "", 0, NULL);
		CHECK(b != NULL);
		CHECK_INT(json_array_size(json_object_get(b, "messages")), 1 + rows[k] + 2);
		json_decref(b);
		zc_free(before);
		zc_free(after);
	}
	CHECK_INT(t_sql_int(m.dir, "SELECT count(*) FROM dialogue WHERE conversation = 'group:1'"), 15);
	zc_free(tools_text);
	json_decref(tools);
	json_decref(head);
	json_decref(tail);
	zc_mem_close(&m);
}

/* A stored row that is not a JSON object (the store edited by hand) is
 * never spliced: the reading ends at its turn, newer whole turns are
 * sent, and what the model receives stays valid JSON. */
static void issue14_dialogue_bad_row_ends_reading(void)
{
	struct zc_mem m;
	struct zc_err e = {0};
	CHECK_INT(zc_mem_open(&m, t_tmpdir(), &e), ZCOR_OK);
	for (int i = 1; i <= 3; i++)
		finish_real_turn(&m, "group:1", i);
	/* the middle turn's reply: cut short; the oldest turn's frame: an array */
	CHECK_INT(sqlite3_exec(m.store.db,
			       "UPDATE dialogue SET message = substr(message, 1, 20) WHERE seq = 10;"
			       "UPDATE dialogue SET message = '[1]' WHERE seq = 1",
			       NULL, NULL, NULL),
		  SQLITE_OK);
	json_t *d = read_dialogue(&m, "group:1", 100000, 100);
	CHECK_INT(json_array_size(d), 5); /* the newest turn alone */
	CHECK_STR(zc_json_str(json_object_get(json_array_get(json_object_get(json_array_get(d, 0),
									   "tool_calls"), 0),
					      "function"), "name"),
		  "external_event_frame");
	json_decref(d);
	CHECK_INT(sqlite3_exec(m.store.db, "UPDATE dialogue SET message = '{}' WHERE seq = 10", NULL,
			       NULL, NULL),
		  SQLITE_OK);
	d = read_dialogue(&m, "group:1", 100000, 100);
	CHECK_INT(json_array_size(d), 10); /* up to the oldest turn, whose frame is an array */
	json_decref(d);
	zc_mem_close(&m);
}

/* issue 15 (found by the QQ world's apology test under ASan): a failed
 * turn's refusal carries {turn, apology} in its details, and the detail
 * object is released once — zc_json_err_detail takes it over; turn.c
 * released it a second time. */
static void issue15_failed_turn_details_released_once(void)
{
	struct t_refusing_model rm;
	int port = t_refusing_model_start(&rm);
	CHECK(port > 0);
	zcor *z = t_open();
	char cfg[300];
	snprintf(cfg, sizeof(cfg),
		 "{\"provider\": {\"baseUrl\": \"http://127.0.0.1:%d/v1\", \"model\": \"m\", "
		 "\"maxRetries\": 0}, \"worlds\": {\"console\": {\"apology\": \"抱歉\"}}}",
		 port);
	CHECK_INT(zcor_config_set(z, cfg), ZCOR_OK);
	char *out = NULL;
	CHECK_INT(zcor_log_messages(z, NULL, "console:t",
				    "{\"messages\": [{\"id\": \"1\", \"senderId\": \"7\", \"text\": \"你好\"}]}",
				    &out),
		  ZCOR_OK);
	zcor_free(out);
	out = NULL;
	CHECK_INT(zcor_turn(z, "console:t", NULL, &out), ZCOR_EPROVIDER);
	CHECK_HAS(zcor_errmsg(z), "the turn failed (recorded as turn");
	CHECK_HAS(zcor_errjson(z), "\"apology\":\"抱歉\"");
	CHECK_HAS(zcor_errjson(z), "\"turn\":");
	zcor_free(out);
	zcor_close(z);
	t_refusing_model_stop(&rm);
}

const struct t_case t_cases[] = {
	{"issue15_failed_turn_details_released_once", issue15_failed_turn_details_released_once},
	{"issue14_frame_holds_the_batch_as_data", issue14_frame_holds_the_batch_as_data},
	{"issue14_refusals", issue14_refusals},
	{"issue14_dialogue_bounds_whole_turns", issue14_dialogue_bounds_whole_turns},
	{"issue14_dialogue_spliced_same_request", issue14_dialogue_spliced_same_request},
	{"issue14_dialogue_bad_row_ends_reading", issue14_dialogue_bad_row_ends_reading},
	{0},
};
