/*
 * turn.c — the turn (turn.h; docs/TURN.md walks through it step by step).
 *
 * Agent layer: it reads the batch and keeps the dialogue through the
 * memory layer's operations (memory/dialogue.h), asks recall for the
 * header and the prefix, and hands the model's tool loop to the agent
 * session (agent/session.h), which the digest run shares. No transaction
 * is open while the model answers: the batch is taken (with the
 * conversation's lease) in one short transaction and the record written
 * in another. It never logs messages (the world's job) and never prints.
 */
#include "agent/turn.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "agent/session.h"
#include "base/alloc.h"
#include "base/buf.h"
#include "base/json.h"
#include "base/timeutil.h"
#include "base/utf8.h"
#include "memory/dialogue.h"
#include "memory/lease.h"
#include "tools/tools.h"

/* The state of one turn: the session (the loop's part) and the batch's. */
struct turn {
	struct zc_session s;
	struct zc_recall *rs;
	const char *event;             /* an internal event's text, or NULL */
	char owner[ZC_TURN_OWNER_MAX]; /* the lease's owner */
	json_t *batch;                 /* {messages, upto, pending} as taken */
	int defer_sync;                /* option deferSync: the record commits without its fsync */
	json_t *ids, *recalled, *people; /* the batch's ids; what recall injected */
	char *header, *recall_failure, *prefix;
	int64_t started;
};

/* ---- the frame and the refusals (pure, unit-tested) ------------------- */

void zc_turn_frame(json_t *arr, const char *call_id, const json_t *messages, const char *event,
		   const char *header)
{
	json_t *data = json_object();
	if (header && *header)
		json_object_set_new(data, "recall", json_string(header));
	if (event)
		json_object_set_new(data, "event", json_string(event));
	json_object_set_new(data, "messages", json_deep_copy(messages));
	char *text = zc_json_dump(data);
	json_decref(data);
	json_array_append_new(
		arr, json_pack("{s:s, s:n, s:[{s:s, s:s, s:{s:s, s:s}}]}", "role", "assistant", "content",
			       "tool_calls", "id", call_id, "type", "function", "function", "name",
			       ZC_FRAME_NAME, "arguments", "{}"));
	json_array_append_new(arr, json_pack("{s:s, s:s, s:o}", "role", "tool", "tool_call_id", call_id,
					     "content", zc_json_string_own(text)));
}

/* ---- the turn ---------------------------------------------------------- */

static int check_opts(const json_t *opts, const char **event, int *check, int *defer_sync,
		      struct zc_err *e)
{
	*event = NULL;
	*check = 0;
	*defer_sync = 0;
	if (!opts || json_is_null(opts))
		return ZCOR_OK;
	if (!json_is_object(opts))
		return zc_fail(e, ZCOR_EINVAL,
			       "the turn's options must be a JSON object such as {\"event\": \"…\"}");
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)opts, k, v) {
		if (strcmp(k, "event") == 0) {
			if (!json_is_string(v) || !*json_string_value(v) ||
			    zc_utf8_len(json_string_value(v)) > ZC_TURN_EVENT_MAX)
				return zc_fail(e, ZCOR_EINVAL,
					       "option 'event': must be the text of an internal event (1 to %d "
					       "characters), such as \"提醒：该喝水了\"",
					       ZC_TURN_EVENT_MAX);
			*event = json_string_value(v);
		} else if (strcmp(k, "check") == 0) {
			if (!json_is_boolean(v))
				return zc_fail(e, ZCOR_EINVAL, "option 'check': must be true or false");
			*check = json_is_true(v);
		} else if (strcmp(k, "deferSync") == 0) {
			if (!json_is_boolean(v))
				return zc_fail(e, ZCOR_EINVAL, "option 'deferSync': must be true or false");
			*defer_sync = json_is_true(v);
		} else {
			return zc_fail(e, ZCOR_EINVAL,
				       "option '%s': unknown; the options are event, check and deferSync",
				       ZC_Q(k, 60));
		}
	}
	return ZCOR_OK;
}

static int no_provider(struct zc_mem *m, struct zc_err *e)
{
	return zc_fail(e, ZCOR_ENOPROVIDER,
		       "no model provider is configured, so the bot cannot answer: add to %s/config.json "
		       "\"provider\": {\"baseUrl\": \"https://api.openai.com/v1\", \"model\": "
		       "\"gpt-4o-mini\", \"apiKeyEnv\": \"OPENAI_API_KEY\"} and set that environment "
		       "variable to your API key (DeepSeek, Qwen, Ollama, llama.cpp: see "
		       "docs/PROVIDERS.md)",
		       m->dir);
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* Takes the lease and the batch, waiting up to turn.waitMs for a turn of
 * the same conversation that runs (in this process or another). */
static int take_batch(struct turn *t, const char *owner, json_t **batch, struct zc_err *e)
{
	static const struct zcor_ctx agent = {ZCOR_ACTOR_MODEL, NULL};
	long long lease = t->s.cfg.turn.deadline_ms + t->s.cfg.turn.deadline_ms / ZC_TURN_FINAL_SHARE +
			  t->s.cfg.provider.timeout_ms + ZC_TURN_LEASE_SLACK_MS;
	json_t *args = json_pack("{s:s, s:s, s:I}", "conversation", t->s.conv, "owner", owner, "leaseMs",
				 (json_int_t)lease);
	double until = zc_time_mono_ms() + (double)t->s.cfg.turn.wait_ms;
	int rc;
	for (;;) {
		rc = zc_mem_run(t->s.m, &agent, &zc_op_turn_begin, args, batch, e);
		if (rc != ZCOR_EBUSY || zc_time_mono_ms() >= until)
			break;
		sleep_ms(ZC_TURN_POLL_MS);
	}
	json_decref(args);
	return rc;
}

/* The batch as the frame delivers it: what the world logged, no seq. */
static json_t *frame_messages(const json_t *batch, json_t *ids)
{
	json_t *out = json_array();
	size_t i;
	json_t *v;
	json_array_foreach(batch, i, v) {
		json_t *o = json_deep_copy(v);
		json_object_del(o, "seq");
		if (json_array_size(json_object_get(o, "mentions")) == 0)
			json_object_del(o, "mentions");
		if (json_array_size(json_object_get(o, "media")) == 0)
			json_object_del(o, "media");
		json_array_append(ids, json_object_get(v, "id"));
		json_array_append_new(out, o);
	}
	return out;
}

json_t *zc_turn_recall_request(const char *conv, const json_t *batch)
{
	json_t *msgs = json_array(), *mentions = json_array();
	size_t i, j;
	json_t *v, *x;
	json_array_foreach(batch, i, v) {
		if (json_object_get(v, "recalledAt")) /* withdrawn: not what the talk is about */
			continue;
		json_array_append_new(msgs, json_pack("{s:O, s:O, s:O}", "text", json_object_get(v, "text"),
						      "senderId", json_object_get(v, "senderId"),
						      "senderName", json_object_get(v, "senderName")));
		json_array_foreach(json_object_get(v, "mentions"), j, x) json_array_append(mentions, x);
	}
	if (json_array_size(msgs) == 0) {
		json_decref(msgs);
		json_decref(mentions);
		return NULL;
	}
	return json_pack("{s:s, s:o, s:o}", "conversation", conv, "messages", msgs, "mentions",
			 mentions);
}

/* Recall for the batch (SPEC §4, Q-QUERY): its text, speakers and
 * mentions. The header is the turn's alone: never stored. */
static void recall_batch(struct zc_recall *rs, const char *conv, const json_t *batch, char **header,
			 json_t *recalled, json_t *people, char **failure)
{
	json_t *req = zc_turn_recall_request(conv, batch), *out = NULL, *v;
	size_t i;
	if (!req) /* every message of the batch was withdrawn */
		return;
	struct zc_err e = {0};
	zc_mem_fts_catch_up(rs->m, &e); /* failing, recall goes on without the newest rows */
	zc_err_clear(&e);
	if (zc_recall(rs, req, &out, &e) == ZCOR_OK) {
		*header = zc_strdup(zc_json_str(out, "header") ? zc_json_str(out, "header") : "");
		json_array_foreach(json_object_get(out, "items"), i, v) {
			if (zc_json_str(v, "id"))
				json_array_append(recalled, json_object_get(v, "id"));
			else if (zc_json_str(v, "personId"))
				json_array_append(people, json_object_get(v, "personId"));
		}
	} else {
		*failure = zc_strdup(e.msg);
	}
	json_decref(req);
	json_decref(out);
}

/* Gives the lease back without a record: nothing arrived, or the record
 * could not be written (the next turn takes the batch again). */
static int give_back(struct turn *t, struct zc_err *e)
{
	static const struct zcor_ctx agent = {ZCOR_ACTOR_MODEL, NULL};
	json_t *a = json_pack("{s:s, s:s}", "conversation", t->s.conv, "owner", t->owner), *r = NULL;
	int rc = zc_mem_run(t->s.m, &agent, &zc_op_turn_release, a, &r, e);
	json_decref(a);
	json_decref(r);
	return rc;
}

/* 1-4: the header (never stored), the prefix, the dialogue and the frame,
 * as sent (with the header) and as kept (without). A failure here is the
 * turn's own (t->s.failed): it is recorded. */
static void prepare(struct turn *t)
{
	json_t *taken = json_object_get(t->batch, "messages");
	json_t *delivered = frame_messages(taken, t->ids);
	if (json_array_size(taken))
		recall_batch(t->rs, t->s.conv, taken, &t->header, t->recalled, t->people,
			     &t->recall_failure);
	zc_session_start(&t->s);
	zc_session_tools(&t->s);
	if (zc_prefix(t->s.m, t->s.conv, &t->prefix, &t->s.fail) ||
	    zc_dialogue_read(t->s.m, t->s.conv, t->s.cfg.dialogue_chars, t->s.cfg.ambient_messages,
			     &t->s.earlier, &t->s.n_earlier, &t->s.fail)) {
		t->s.failed = 1;
		json_decref(delivered);
		return;
	}
	json_array_append_new(t->s.messages,
			      json_pack("{s:s, s:s}", "role", "system", "content", t->prefix));
	char frame_id[48];
	snprintf(frame_id, sizeof(frame_id), "frame_%lld",
		 (long long)json_integer_value(json_object_get(t->batch, "upto")));
	/* the frame (the recall header and the batch: most of a request's
	 * text) follows the stored dialogue, so it joins that text, dumped
	 * once for the turn's requests instead of once per request; the
	 * body is the same, byte for byte (zc_chat_req.messages_text) */
	json_t *frame = json_array();
	zc_turn_frame(frame, frame_id, delivered, t->event, t->header);
	struct zc_buf text = ZC_BUF_INIT;
	if (t->s.earlier)
		zc_buf_adds(&text, t->s.earlier);
	size_t i;
	json_t *msg;
	json_array_foreach(frame, i, msg) {
		char *one = zc_json_dump(msg);
		if (text.len)
			zc_buf_addc(&text, ',');
		zc_buf_adds(&text, one);
		zc_free(one);
	}
	t->s.n_earlier += json_array_size(frame);
	json_decref(frame);
	zc_free(t->s.earlier);
	t->s.earlier = zc_buf_detach(&text);
	zc_turn_frame(t->s.dialogue, frame_id, delivered, t->event, NULL);
	json_object_set_new(json_array_get(t->s.dialogue, json_array_size(t->s.dialogue) - 1), "_messages",
			    json_integer((json_int_t)json_array_size(delivered)));
	json_decref(delivered);
}

/* 8: the record, whatever happened, in one transaction with the dialogue,
 * the cursor past the batch and the lease released. */
static int record(struct turn *t, json_t **out, struct zc_err *e)
{
	static const struct zcor_ctx agent = {ZCOR_ACTOR_MODEL, NULL};
	const char *apology = NULL;
	if (t->s.failed && strncmp(t->s.conv, "console:", 8) == 0 && t->s.cfg.console_apology[0])
		apology = t->s.cfg.console_apology;
	else if (t->s.failed && (strncmp(t->s.conv, "group:", 6) == 0 || strncmp(t->s.conv, "private:", 8) == 0) &&
		 t->s.cfg.qq.apology[0])
		apology = t->s.cfg.qq.apology; /* the QQ world sends it (docs/QQ.md) */
	if (t->s.failed && apology) {
		t->s.reply = zc_strdup(apology);
		json_array_append_new(t->s.dialogue,
				      json_pack("{s:s, s:s}", "role", "assistant", "content", t->s.reply));
	}
	json_t *tokens = t->s.tokens_reported
				 ? json_pack("{s:I, s:I, s:I}", "prompt", (json_int_t)t->s.tok_prompt,
					     "completion", (json_int_t)t->s.tok_completion, "total",
					     (json_int_t)t->s.tok_total)
				 : json_null();
	json_t *rec = json_pack("{s:O, s:O, s:O, s:O, s:O, s:s?, s:I, s:I, s:O}", "batch", t->ids,
				"pending", json_object_get(t->batch, "pending"), "recalled", t->recalled,
				"recalledPeople", t->people, "toolCalls", t->s.calls, "limit", t->s.limit,
				"requests", (json_int_t)t->s.requests, "modelMs", (json_int_t)t->s.model_ms,
				"tokens", tokens);
	if (t->event)
		json_object_set_new(rec, "event", json_string(t->event));
	if (t->recall_failure)
		json_object_set_new(rec, "recallError", json_string(t->recall_failure));
	if (t->s.reply_problems)
		json_object_set(rec, "replyProblems", t->s.reply_problems);
	if (apology)
		json_object_set_new(rec, "apology", json_string(apology));
	json_t *errj = t->s.failed ? json_pack("{s:s, s:o}", "code", zcor_code_name(t->s.fail.code),
					     "message", zc_json_string_own(zc_utf8_lossy(t->s.fail.msg)))
				 : json_null();
	json_t *fin = json_pack("{s:s, s:s, s:O, s:I, s:I, s:s, s:o, s:o, s:O, s:O}", "conversation",
				t->s.conv, "owner", t->owner, "upto", json_object_get(t->batch, "upto"),
				"startedAt", (json_int_t)t->started, "endedAt", (json_int_t)zc_mem_now(t->s.m),
				"status", t->s.failed ? "error" : "ok", "reply",
				t->s.reply ? json_string(t->s.reply) : json_null(), "error", errj, "record",
				rec, "dialogue", t->s.dialogue);
	json_t *done = NULL;
	int rc = zc_mem_run(t->s.m, &agent, t->defer_sync ? &zc_op_turn_finish_deferred : &zc_op_turn_finish,
			    fin, &done, e);
	json_decref(fin);
	if (rc) {
		struct zc_err ignored = {0};
		give_back(t, &ignored);
		zc_err_prefix(e, "the turn's record could not be written");
	} else if (t->s.failed) {
		json_int_t id = json_integer_value(json_object_get(done, "id"));
		rc = zc_fail(e, t->s.fail.code == ZCOR_OK ? ZCOR_EPROVIDER : t->s.fail.code,
			     "the turn failed (recorded as turn %lld; its batch will not be retried): %s",
			     (long long)id, t->s.fail.msg);
		zc_json_err_detail(e, json_pack("{s:I, s:s?}", "turn", id, "apology", apology)); /* takes it over */
	} else {
		*out = json_pack("{s:O, s:s, s:s?, s:O, s:O, s:O, s:O, s:O, s:I, s:O}", "turn",
				 json_object_get(done, "id"), "conversation", t->s.conv, "reply", t->s.reply,
				 "batch", t->ids, "recalled", t->recalled, "recalledPeople", t->people,
				 "toolCalls", t->s.calls, "limit", json_object_get(rec, "limit"), "modelMs",
				 (json_int_t)t->s.model_ms, "tokens", tokens);
	}
	json_decref(rec);
	json_decref(done);
	json_decref(tokens);
	return rc;
}

static void turn_release(struct turn *t)
{
	json_decref(t->batch);
	json_decref(t->ids);
	json_decref(t->recalled);
	json_decref(t->people);
	zc_session_release(&t->s);
	zc_free(t->header);
	zc_free(t->recall_failure);
	zc_free(t->prefix);
}

int zc_turn(struct zc_mem *m, struct zc_recall *rs, struct zc_skills *skills,
	    const char *conversation, const json_t *opts, const struct zcor_turn_events *ev,
	    json_t **out, struct zc_err *e)
{
	struct turn t = {.s = {.m = m, .skills = skills, .conv = conversation, .ev = ev,
			       .actor = ZCOR_ACTOR_MODEL, .audience = ZC_AUD_MODEL, .check_reply = 1},
			 .rs = rs};
	t.ids = json_array();
	t.recalled = json_array();
	t.people = json_array();
	int check = 0, rc;
	*out = NULL;
	if ((rc = check_opts(opts, &t.event, &check, &t.defer_sync, e)))
		goto out;
	zc_config_refresh(&m->conf);
	t.s.cfg = m->conf.cfg;
	if (!t.s.cfg.provider.enabled) {
		rc = no_provider(m, e);
		goto out;
	}
	if (check) {
		*out = json_pack("{s:b}", "ready", 1);
		goto out;
	}
	zc_lease_owner_name(t.owner, sizeof(t.owner), zc_mem_now(m), "turn");
	if ((rc = take_batch(&t, t.owner, &t.batch, e)))
		goto out;
	t.started = zc_mem_now(m);
	t.s.t0 = zc_time_mono_ms();
	t.s.deadline = t.s.t0 + (double)t.s.cfg.turn.deadline_ms;
	if (json_array_size(json_object_get(t.batch, "messages")) == 0 && !t.event) {
		/* nothing arrived: no turn, the lease goes back */
		if (!(rc = give_back(&t, e)))
			*out = json_pack("{s:n, s:s, s:b, s:n}", "turn", "conversation", conversation,
					 "idle", 1, "reply");
		goto out;
	}
	prepare(&t);
	if (!t.s.failed)
		zc_session_loop(&t.s);
	rc = record(&t, out, e);
out:
	turn_release(&t);
	return rc;
}
