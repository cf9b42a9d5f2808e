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

const struct t_case t_cases[] = {
	{"issue14_frame_holds_the_batch_as_data", issue14_frame_holds_the_batch_as_data},
	{"issue14_refusals", issue14_refusals},
	{"issue14_dialogue_bounds_whole_turns", issue14_dialogue_bounds_whole_turns},
	{0},
};
