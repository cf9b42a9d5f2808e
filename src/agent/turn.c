/*
 * turn.c — the turn (turn.h; docs/TURN.md walks through it step by step).
 *
 * Agent layer: it reads the batch and keeps the dialogue through the
 * memory layer's operations (memory/dialogue.h), asks recall for the
 * header and the prefix, offers the model the registry's tools for the
 * conversation, talks to the provider (llm/chat.h) and runs the model's
 * calls through the registry. No transaction is open while the model
 * answers: the batch is taken (with the conversation's lease) in one
 * short transaction and the record written in another. It never logs
 * messages (the world's job) and never prints.
 */
#include "agent/turn.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/json.h"
#include "base/timeutil.h"
#include "base/utf8.h"
#include "llm/chat.h"
#include "llm/llm.h"
#include "memory/dialogue.h"
#include "tools/skills.h"
#include "tools/tools.h"

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

static int declared_has(const json_t *declared, const char *name)
{
	size_t i;
	json_t *v;
	json_array_foreach(declared, i, v) {
		if (strcmp(json_string_value(v), name) == 0)
			return 1;
	}
	return 0;
}

const char *zc_turn_refusal(const char *name, int args_object, const char *arguments,
			    const json_t *declared, char *buf, size_t cap)
{
	if (strcmp(name, ZC_FRAME_NAME) == 0) {
		snprintf(buf, cap,
			 "refused: external_event_frame is the frame the system uses to deliver "
			 "external messages; it is not a tool and must never be called; nothing was run");
		return buf;
	}
	if (!declared_has(declared, name)) {
		snprintf(buf, cap,
			 "refused: '%s' is not a tool declared in this request; call only the tools "
			 "listed in `tools`; nothing was run",
			 ZC_Q(name, 80));
		return buf;
	}
	if (!args_object) {
		snprintf(buf, cap,
			 "the arguments of '%s' are not a JSON object (got '%s'); send them as an "
			 "object matching the tool's parameters; nothing was run",
			 ZC_Q(name, 80), ZC_Q(arguments ? arguments : "", 120));
		return buf;
	}
	return NULL;
}

/* ---- the state of one turn ---------------------------------------------- */

struct turn {
	struct zc_mem *m;
	struct zc_skills *skills;      /* the handle's (tools/skills.h) */
	const char *conv;
	const struct zcor_turn_events *ev;
	struct zc_config cfg;          /* the settings at the turn's start */
	double t0, deadline;           /* monotonic ms */
	json_t *messages;              /* what the next request sends, but for… */
	char *earlier;                 /* …the stored dialogue, as JSON text (spliced after
					* the system message: zc_chat_req.messages_text) */
	size_t n_earlier;              /* how many messages earlier holds */
	json_t *dialogue;              /* what the turn adds to the stored dialogue */
	json_t *tools, *declared;      /* this request's tools and their names (shared: read only) */
	json_t *tools_text;            /* tools as JSON text, a JSON string (shared) */
	json_t *calls;                 /* the record's toolCalls */
	json_t *seen;                  /* name + arguments of every call, for the guard */
	const char *limit;             /* NULL, "steps", "deadline", "repeat" */
	int requests;
	long long model_ms, tok_prompt, tok_completion, tok_total;
	int tokens_reported;
	struct zcor_provider search;   /* the provider a tool (search) gets */
	/* the turn's own state, from the batch to the record */
	struct zc_recall *rs;
	const char *event;             /* an internal event's text, or NULL */
	char owner[ZC_TURN_OWNER_MAX]; /* the lease's owner */
	json_t *batch;                 /* {messages, upto, pending} as taken */
	json_t *ids, *recalled, *people; /* the batch's ids; what recall injected */
	char *header, *recall_failure, *prefix, *reply;
	json_t *reply_problems;
	int64_t started;
	struct zc_err fail;            /* the turn's own failure, recorded */
	int failed;
};

static double left_ms(const struct turn *t) { return t->deadline - zc_time_mono_ms(); }

/* zcor_memory_search's filter stage inside a turn: config.json's
 * provider, its timeout cut to turn.toolTimeoutMs and the time left. */
static int search_complete(void *ud, const char *system, const char *user, char **reply,
			   char **errmsg)
{
	struct turn *t = ud;
	struct zc_provider_config cfg = t->cfg.provider;
	long cap = t->cfg.turn.tool_timeout_ms;
	double left = left_ms(t);
	if (left < (double)cap)
		cap = left > ZC_TURN_FINAL_MIN_MS ? (long)left : ZC_TURN_FINAL_MIN_MS;
	if (cfg.timeout_ms > cap)
		cfg.timeout_ms = cap;
	struct zc_err e = {0};
	int rc = zc_llm_complete(&cfg, system, user, reply, &e);
	if (rc)
		*errmsg = zc_strdup(e.msg);
	return rc;
}

/* The tools offered to the model in this conversation: the registry's
 * list for the model's audience under the turn's config. The request's
 * array and its JSON text depend only on which rows the list holds (a
 * row's name and schema are constant) and on the skills in effect (the
 * `skill` row's description lists them: zc_skills_key), so both are built
 * once per distinct (list, skills) and kept for the process (at most
 * TOOLS_CACHE of them; the oldest gives way to a new one): a turn takes
 * references, and its requests splice the text (zc_chat_req.tools_text). */
#define TOOLS_CACHE 32
static struct {
	uint64_t rows;  /* bit i: zc_tools[i] */
	uint64_t skills; /* zc_skills_key of the skills listed */
	json_t *tools;  /* the array */
	json_t *text;   /* its compact dump, as a JSON string */
	json_t *names;  /* the rows' names */
} tools_cache[TOOLS_CACHE];
static size_t tools_cached, tools_next;
static pthread_mutex_t tools_mu = PTHREAD_MUTEX_INITIALIZER;

static void tools_build(struct turn *t)
{
	struct zc_tool_list l;
	zc_tools_for(ZC_AUD_MODEL, &t->cfg, t->conv, &l);
	uint64_t rows = 0, skills = 0;
	for (size_t i = 0; i < l.n; i++)
		rows |= (uint64_t)1 << (l.v[i] - zc_tools);
	if (t->skills) {
		zc_skills_refresh(t->skills, &t->cfg);
		skills = zc_skills_key(t->skills);
	}
	pthread_mutex_lock(&tools_mu);
	for (size_t i = 0; i < tools_cached; i++)
		if (tools_cache[i].rows == rows && tools_cache[i].skills == skills) {
			t->tools = json_incref(tools_cache[i].tools);
			t->tools_text = json_incref(tools_cache[i].text);
			t->declared = json_incref(tools_cache[i].names);
			break;
		}
	pthread_mutex_unlock(&tools_mu);
	if (t->tools)
		return;
	t->tools = json_array();
	t->declared = json_array();
	struct zcor_ctx ctx = {ZCOR_ACTOR_MODEL, t->conv};
	const struct zc_tool_env env = {t->m, &ctx, NULL, NULL, t->skills};
	for (size_t i = 0; i < l.n; i++) {
		const struct zc_tool *x = l.v[i];
		char *desc = zc_tool_description(x, &env, 0);
		json_array_append_new(
			t->tools, json_pack("{s:s, s:{s:s, s:s, s:O}}", "type", "function", "function",
					    "name", x->name, "description", desc, "parameters",
					    zc_tool_schema(x)));
		zc_free(desc);
		json_array_append_new(t->declared, json_string(x->name));
	}
	char *text = zc_json_dump(t->tools);
	t->tools_text = json_string(text);
	zc_free(text);
	pthread_mutex_lock(&tools_mu);
	int known = 0;
	for (size_t i = 0; i < tools_cached; i++)
		known |= tools_cache[i].rows == rows && tools_cache[i].skills == skills;
	if (!known) {
		size_t at = tools_cached < TOOLS_CACHE ? tools_cached++ : tools_next++ % TOOLS_CACHE;
		if (tools_cache[at].tools) { /* the oldest gives way; turns keep their references */
			json_decref(tools_cache[at].tools);
			json_decref(tools_cache[at].text);
			json_decref(tools_cache[at].names);
		}
		tools_cache[at].rows = rows;
		tools_cache[at].skills = skills;
		tools_cache[at].tools = json_incref(t->tools);
		tools_cache[at].text = json_incref(t->tools_text);
		tools_cache[at].names = json_incref(t->declared);
	}
	pthread_mutex_unlock(&tools_mu);
}

static void add_msg(struct turn *t, json_t *msg, int keep)
{
	if (keep)
		json_array_append(t->dialogue, msg);
	json_array_append_new(t->messages, msg);
}

static int streamed(void *ud, const struct zc_chat_delta *d)
{
	const struct zcor_turn_events *ev = ud;
	if (d->tool_index < 0 && d->text_len && ev->text)
		ev->text(ev->ud, d->text, d->text_len);
	return 0;
}

/* One request; tools withdrawn once a limit was reached. */
static int ask(struct turn *t, int final, struct zc_chat_reply *r, struct zc_err *e)
{
	struct zc_provider_config cfg = t->cfg.provider;
	long window = final ? t->cfg.turn.deadline_ms / ZC_TURN_FINAL_SHARE : (long)left_ms(t);
	if (window < ZC_TURN_FINAL_MIN_MS)
		window = ZC_TURN_FINAL_MIN_MS;
	if (cfg.timeout_ms > window)
		cfg.timeout_ms = window;
	struct zc_chat_req req = {.messages = t->messages, .messages_text = t->earlier,
				  .messages_count = t->n_earlier, .messages_text_at = 1,
				  .tools = final ? NULL : t->tools,
				  .tools_text = final ? NULL : json_string_value(t->tools_text),
				  .temperature = t->cfg.provider.temperature};
	if (t->ev && t->ev->text) {
		req.stream = req.stream_usage = 1;
		req.on_delta = streamed;
		req.ud = (void *)t->ev;
	}
	int rc = zc_llm_chat(&cfg, &req, r, e);
	t->requests++;
	t->model_ms += r->model_ms;
	if (r->prompt_tokens >= 0 || r->completion_tokens >= 0 || r->total_tokens >= 0) {
		t->tokens_reported = 1;
		t->tok_prompt += r->prompt_tokens > 0 ? r->prompt_tokens : 0;
		t->tok_completion += r->completion_tokens > 0 ? r->completion_tokens : 0;
		t->tok_total += r->total_tokens > 0 ? r->total_tokens : 0;
	}
	return rc;
}

/* The guard's key of a call: its name and its arguments in one form. */
static char *call_key(const char *name, const char *arguments)
{
	json_t *a = json_loads(arguments ? arguments : "", 0, NULL);
	char *canon = a ? json_dumps(a, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(a);
	struct zc_buf b = ZC_BUF_INIT;
	zc_buf_addf(&b, "%s\x1f%s", name, canon ? canon : (arguments ? arguments : ""));
	zc_free(canon);
	return zc_buf_detach(&b);
}

static int times_seen(struct turn *t, const char *key)
{
	int n = 0;
	size_t i;
	json_t *v;
	json_array_foreach(t->seen, i, v) n += strcmp(json_string_value(v), key) == 0;
	json_array_append_new(t->seen, json_string(key));
	return n;
}

static json_t *error_result(int code, const char *msg, const char *detail)
{
	json_t *err = json_pack("{s:s, s:o}", "code", zcor_code_name(code), "message",
				zc_json_string_own(zc_utf8_lossy(msg)));
	json_t *d = detail && *detail ? json_loads(detail, 0, NULL) : NULL;
	if (json_is_object(d))
		json_object_set(err, "details", d);
	json_decref(d);
	return json_pack("{s:o}", "error", err);
}

/* Runs (or refuses) one call of the model and adds its tool message. */
static void run_call(struct turn *t, const struct zc_tool_call *c)
{
	char why[512];
	const char *status = "ok", *refusal = NULL;
	json_t *result = NULL;
	double started = zc_time_mono_ms();
	char *key = call_key(c->name, c->arguments);
	if (t->limit) {
		snprintf(why, sizeof(why),
			 "not run: the turn's limit was reached (%s); answer now with what you have",
			 t->limit);
		refusal = why, status = "not_run";
	} else if ((refusal = zc_turn_refusal(c->name, c->args_object, c->arguments, t->declared, why,
					      sizeof(why)))) {
		status = c->args_object || !declared_has(t->declared, c->name) ? "refused" : "error";
		if (strcmp(c->name, ZC_FRAME_NAME) == 0)
			status = "refused";
	} else if (times_seen(t, key) >= ZC_TURN_REPEAT_MAX - 1) {
		snprintf(why, sizeof(why),
			 "not run: the same call (name and arguments) was made %d times in this turn "
			 "already; answer with what you have",
			 ZC_TURN_REPEAT_MAX - 1);
		refusal = why, status = "refused";
		t->limit = "repeat";
	}
	if (refusal) {
		result = error_result(strcmp(status, "error") == 0 ? ZCOR_EINVAL : ZCOR_EFORBIDDEN, refusal,
				      NULL);
	} else {
		const struct zc_tool *x = zc_tool_find(c->name);
		struct zcor_ctx ctx = {ZCOR_ACTOR_MODEL, t->conv};
		struct zc_err te = {0};
		if (t->ev && t->ev->tool_start)
			t->ev->tool_start(t->ev->ud, c->name, c->arguments);
		int rc = zc_tool_call(t->m, &ctx, x, &t->search, zc_llm_http_get(), t->skills,
				      c->arguments, &result, &te);
		if (rc) {
			json_decref(result);
			result = error_result(rc, te.msg, te.detail);
			status = "error";
		}
	}
	long long ms = (long long)(zc_time_mono_ms() - started);
	char *text = zc_json_dump(result);
	if (!refusal && t->ev && t->ev->tool_end)
		t->ev->tool_end(t->ev->ud, c->name, status, text);
	json_t *rec = json_pack("{s:s, s:s, s:s, s:s, s:I}", "id", c->id, "name", c->name, "arguments",
				c->arguments ? c->arguments : "", "status", status, "ms", (json_int_t)ms);
	json_t *err = json_object_get(result, "error");
	if (err)
		json_object_set(rec, "error", json_object_get(err, "message"));
	json_array_append_new(t->calls, rec);
	add_msg(t, json_pack("{s:s, s:s, s:o}", "role", "tool", "tool_call_id", c->id, "content",
			     zc_json_string_own(text)),
		1);
	json_decref(result);
	zc_free(key);
	if (!t->limit && left_ms(t) <= 0)
		t->limit = "deadline";
}

static json_t *assistant_calls(const struct zc_chat_reply *r)
{
	json_t *calls = json_array();
	for (size_t i = 0; i < r->n_tool_calls; i++)
		json_array_append_new(
			calls, json_pack("{s:s, s:s, s:{s:s, s:s}}", "id", r->tool_calls[i].id, "type",
					 "function", "function", "name", r->tool_calls[i].name, "arguments",
					 r->tool_calls[i].arguments ? r->tool_calls[i].arguments : ""));
	return json_pack("{s:s, s:o, s:o}", "role", "assistant", "content",
			 r->content ? json_string(r->content) : json_null(), "tool_calls", calls);
}

/* The note that asks for the answer (sent, not kept in the dialogue). */
static void ask_to_answer(struct turn *t)
{
	char note[400];
	snprintf(note, sizeof(note),
		 "【系统】本轮的工具调用已到上限（%s），工具已收回。请不要再调用工具，直接用已有信息回答。"
		 " / [system] the turn's tool limit was reached (%s); the tools are withdrawn: answer "
		 "now without calling tools.",
		 t->limit, t->limit);
	add_msg(t, json_pack("{s:s, s:s}", "role", "user", "content", note), 0);
}

/* Removes the [[图片: p]] markers of the paths the check refused. */
static char *strip_images(const char *text, const json_t *problems)
{
	struct zc_buf b = ZC_BUF_INIT;
	const char *p = text;
	while (*p) {
		const char *open = strstr(p, "[[图片:");
		const char *close = open ? strstr(open, "]]") : NULL;
		if (!open || !close) {
			zc_buf_adds(&b, p);
			break;
		}
		zc_buf_add(&b, p, (size_t)(open - p));
		const char *in = open + strlen("[[图片:");
		while (*in == ' ')
			in++;
		size_t n = (size_t)(close - in);
		while (n && in[n - 1] == ' ')
			n--;
		int bad = 0;
		size_t i;
		json_t *x;
		json_array_foreach(problems, i, x) {
			const char *img = json_string_value(json_object_get(x, "image"));
			bad |= !img || (strlen(img) == n && strncmp(img, in, n) == 0);
		}
		if (!bad)
			zc_buf_add(&b, open, (size_t)(close + 2 - open));
		p = close + 2;
	}
	return zc_buf_detach(&b);
}

/* ---- the turn ---------------------------------------------------------- */

static int check_opts(const json_t *opts, const char **event, int *check, struct zc_err *e)
{
	*event = NULL;
	*check = 0;
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
		} else {
			return zc_fail(e, ZCOR_EINVAL, "option '%s': unknown; the options are event and check",
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
	long long lease = t->cfg.turn.deadline_ms + t->cfg.turn.deadline_ms / ZC_TURN_FINAL_SHARE +
			  t->cfg.provider.timeout_ms + ZC_TURN_LEASE_SLACK_MS;
	json_t *args = json_pack("{s:s, s:s, s:I}", "conversation", t->conv, "owner", owner, "leaseMs",
				 (json_int_t)lease);
	double until = zc_time_mono_ms() + (double)t->cfg.turn.wait_ms;
	int rc;
	for (;;) {
		rc = zc_mem_run(t->m, &agent, &zc_op_turn_begin, args, batch, e);
		if (rc != ZCOR_EBUSY || zc_time_mono_ms() >= until)
			break;
		sleep_ms(ZC_TURN_POLL_MS);
	}
	json_decref(args);
	return rc;
}

static void owner_name(char *buf, size_t cap, struct zc_mem *m)
{
	static unsigned long counter;
	unsigned long n = __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);
	snprintf(buf, cap, "pid:%ld:%lu:%lld", (long)getpid(), n, (long long)zc_mem_now(m));
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
	json_t *a = json_pack("{s:s, s:s}", "conversation", t->conv, "owner", t->owner), *r = NULL;
	int rc = zc_mem_run(t->m, &agent, &zc_op_turn_release, a, &r, e);
	json_decref(a);
	json_decref(r);
	return rc;
}

/* 1-4: the header (never stored), the prefix, the dialogue and the frame,
 * as sent (with the header) and as kept (without). A failure here is the
 * turn's own (t->failed): it is recorded. */
static void prepare(struct turn *t)
{
	json_t *taken = json_object_get(t->batch, "messages");
	json_t *delivered = frame_messages(taken, t->ids);
	if (json_array_size(taken))
		recall_batch(t->rs, t->conv, taken, &t->header, t->recalled, t->people,
			     &t->recall_failure);
	t->search = (struct zcor_provider){search_complete, t};
	t->messages = json_array();
	t->dialogue = json_array();
	t->calls = json_array();
	t->seen = json_array();
	tools_build(t);
	if (zc_prefix(t->m, t->conv, &t->prefix, &t->fail) ||
	    zc_dialogue_read(t->m, t->conv, t->cfg.dialogue_chars, t->cfg.ambient_messages,
			     &t->earlier, &t->n_earlier, &t->fail)) {
		t->failed = 1;
		json_decref(delivered);
		return;
	}
	json_array_append_new(t->messages,
			      json_pack("{s:s, s:s}", "role", "system", "content", t->prefix));
	char frame_id[48];
	snprintf(frame_id, sizeof(frame_id), "frame_%lld",
		 (long long)json_integer_value(json_object_get(t->batch, "upto")));
	zc_turn_frame(t->messages, frame_id, delivered, t->event, t->header);
	zc_turn_frame(t->dialogue, frame_id, delivered, t->event, NULL);
	json_object_set_new(json_array_get(t->dialogue, json_array_size(t->dialogue) - 1), "_messages",
			    json_integer((json_int_t)json_array_size(delivered)));
	json_decref(delivered);
}

/* 7: the answer's image paths. 1: it is the reply (t->reply); 0: a bad
 * path went back to the model once, ask again. After the second wrong
 * answer the wrong markers are removed and the record keeps them. */
static int take_reply(struct turn *t, const char *content, int *checked)
{
	json_t *report = zc_sticker_reply_report(t->m, content ? content : "");
	int ok = json_is_true(json_object_get(report, "ok"));
	if (!ok && !*checked) {
		*checked = 1;
		char *problems = zc_json_dump(json_object_get(report, "problems"));
		struct zc_buf note = ZC_BUF_INIT;
		zc_buf_addf(&note,
			    "【系统】这条回复没有发出：图片路径不对，只能用已收藏的 stickers/ 路径（含扩展名）。"
			    "改正后重新给出完整回复。 / [system] this reply was not sent: an image "
			    "path is wrong. Problems: %s",
			    problems ? problems : "[]");
		zc_free(problems);
		add_msg(t, json_pack("{s:s, s:s}", "role", "assistant", "content", content), 0);
		add_msg(t, json_pack("{s:s, s:s}", "role", "user", "content", zc_buf_str(&note)), 0);
		zc_buf_release(&note);
		json_decref(report);
		return 0;
	}
	if (!ok) {
		t->reply_problems = json_incref(json_object_get(report, "problems"));
		t->reply = strip_images(content, t->reply_problems);
	} else {
		t->reply = zc_strdup(content);
	}
	json_decref(report);
	json_array_append_new(t->dialogue,
			      json_pack("{s:s, s:s}", "role", "assistant", "content", t->reply));
	return 1;
}

/* 5-7: the tool loop, until a reply or the turn's failure. At a limit
 * (steps, deadline, a repeated call) the tools are withdrawn and the model
 * is asked once to answer. */
static void tool_loop(struct turn *t)
{
	int steps = 0, reply_checked = 0, asked = 0;
	for (;;) {
		if (!t->limit && left_ms(t) <= 0)
			t->limit = "deadline";
		int final = t->limit != NULL;
		if (final && !asked++)
			ask_to_answer(t);
		struct zc_chat_reply r;
		struct zc_err ce = {0};
		if (ask(t, final, &r, &ce)) {
			zc_chat_reply_release(&r);
			if (!final && left_ms(t) <= 0) { /* cut by the turn's deadline */
				t->limit = "deadline";
				continue;
			}
			t->fail = ce;
			t->failed = 1;
			return;
		}
		if (r.n_tool_calls && final && (!r.content || !*r.content)) {
			/* tools withdrawn, and still calls: its text is the answer if any */
			zc_fail(&t->fail, ZCOR_EPROVIDER,
				"the model called tools again after they were withdrawn (%s) and gave no "
				"answer",
				t->limit);
			t->failed = 1;
			zc_chat_reply_release(&r);
			return;
		}
		if (r.n_tool_calls && !final) {
			steps++;
			add_msg(t, assistant_calls(&r), 1);
			for (size_t i = 0; i < r.n_tool_calls; i++)
				run_call(t, &r.tool_calls[i]);
			zc_chat_reply_release(&r);
			if (!t->limit && steps >= t->cfg.turn.max_steps)
				t->limit = "steps";
			continue;
		}
		int done = take_reply(t, r.content, &reply_checked);
		zc_chat_reply_release(&r);
		if (done)
			return;
	}
}

/* 8: the record, whatever happened, in one transaction with the dialogue,
 * the cursor past the batch and the lease released. */
static int record(struct turn *t, json_t **out, struct zc_err *e)
{
	static const struct zcor_ctx agent = {ZCOR_ACTOR_MODEL, NULL};
	const char *apology = NULL;
	if (t->failed && strncmp(t->conv, "console:", 8) == 0 && t->cfg.console_apology[0])
		apology = t->cfg.console_apology;
	else if (t->failed && (strncmp(t->conv, "group:", 6) == 0 || strncmp(t->conv, "private:", 8) == 0) &&
		 t->cfg.qq.apology[0])
		apology = t->cfg.qq.apology; /* the QQ world sends it (docs/QQ.md) */
	if (t->failed && apology) {
		t->reply = zc_strdup(apology);
		json_array_append_new(t->dialogue,
				      json_pack("{s:s, s:s}", "role", "assistant", "content", t->reply));
	}
	json_t *tokens = t->tokens_reported
				 ? json_pack("{s:I, s:I, s:I}", "prompt", (json_int_t)t->tok_prompt,
					     "completion", (json_int_t)t->tok_completion, "total",
					     (json_int_t)t->tok_total)
				 : json_null();
	json_t *rec = json_pack("{s:O, s:O, s:O, s:O, s:O, s:s?, s:I, s:I, s:O}", "batch", t->ids,
				"pending", json_object_get(t->batch, "pending"), "recalled", t->recalled,
				"recalledPeople", t->people, "toolCalls", t->calls, "limit", t->limit,
				"requests", (json_int_t)t->requests, "modelMs", (json_int_t)t->model_ms,
				"tokens", tokens);
	if (t->event)
		json_object_set_new(rec, "event", json_string(t->event));
	if (t->recall_failure)
		json_object_set_new(rec, "recallError", json_string(t->recall_failure));
	if (t->reply_problems)
		json_object_set(rec, "replyProblems", t->reply_problems);
	if (apology)
		json_object_set_new(rec, "apology", json_string(apology));
	json_t *errj = t->failed ? json_pack("{s:s, s:o}", "code", zcor_code_name(t->fail.code),
					     "message", zc_json_string_own(zc_utf8_lossy(t->fail.msg)))
				 : json_null();
	json_t *fin = json_pack("{s:s, s:s, s:O, s:I, s:I, s:s, s:o, s:o, s:O, s:O}", "conversation",
				t->conv, "owner", t->owner, "upto", json_object_get(t->batch, "upto"),
				"startedAt", (json_int_t)t->started, "endedAt", (json_int_t)zc_mem_now(t->m),
				"status", t->failed ? "error" : "ok", "reply",
				t->reply ? json_string(t->reply) : json_null(), "error", errj, "record",
				rec, "dialogue", t->dialogue);
	json_t *done = NULL;
	int rc = zc_mem_run(t->m, &agent, &zc_op_turn_finish, fin, &done, e);
	json_decref(fin);
	if (rc) {
		struct zc_err ignored = {0};
		give_back(t, &ignored);
		zc_err_prefix(e, "the turn's record could not be written");
	} else if (t->failed) {
		json_int_t id = json_integer_value(json_object_get(done, "id"));
		rc = zc_fail(e, t->fail.code == ZCOR_OK ? ZCOR_EPROVIDER : t->fail.code,
			     "the turn failed (recorded as turn %lld; its batch will not be retried): %s",
			     (long long)id, t->fail.msg);
		json_t *d = json_pack("{s:I, s:s?}", "turn", id, "apology", apology);
		zc_json_err_detail(e, d);
		json_decref(d);
	} else {
		*out = json_pack("{s:O, s:s, s:s?, s:O, s:O, s:O, s:O, s:O, s:I, s:O}", "turn",
				 json_object_get(done, "id"), "conversation", t->conv, "reply", t->reply,
				 "batch", t->ids, "recalled", t->recalled, "recalledPeople", t->people,
				 "toolCalls", t->calls, "limit", json_object_get(rec, "limit"), "modelMs",
				 (json_int_t)t->model_ms, "tokens", tokens);
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
	json_decref(t->messages);
	json_decref(t->dialogue);
	json_decref(t->tools);
	json_decref(t->tools_text);
	json_decref(t->declared);
	json_decref(t->calls);
	json_decref(t->seen);
	json_decref(t->reply_problems);
	zc_free(t->header);
	zc_free(t->recall_failure);
	zc_free(t->prefix);
	zc_free(t->earlier);
	zc_free(t->reply);
}

int zc_turn(struct zc_mem *m, struct zc_recall *rs, struct zc_skills *skills,
	    const char *conversation, const json_t *opts, const struct zcor_turn_events *ev,
	    json_t **out, struct zc_err *e)
{
	struct turn t = {.m = m, .rs = rs, .skills = skills, .conv = conversation, .ev = ev};
	t.ids = json_array();
	t.recalled = json_array();
	t.people = json_array();
	int check = 0, rc;
	*out = NULL;
	if ((rc = check_opts(opts, &t.event, &check, e)))
		goto out;
	zc_config_refresh(&m->conf);
	t.cfg = m->conf.cfg;
	if (!t.cfg.provider.enabled) {
		rc = no_provider(m, e);
		goto out;
	}
	if (check) {
		*out = json_pack("{s:b}", "ready", 1);
		goto out;
	}
	owner_name(t.owner, sizeof(t.owner), m);
	if ((rc = take_batch(&t, t.owner, &t.batch, e)))
		goto out;
	t.started = zc_mem_now(m);
	t.t0 = zc_time_mono_ms();
	t.deadline = t.t0 + (double)t.cfg.turn.deadline_ms;
	if (json_array_size(json_object_get(t.batch, "messages")) == 0 && !t.event) {
		/* nothing arrived: no turn, the lease goes back */
		if (!(rc = give_back(&t, e)))
			*out = json_pack("{s:n, s:s, s:b, s:n}", "turn", "conversation", conversation,
					 "idle", 1, "reply");
		goto out;
	}
	prepare(&t);
	if (!t.failed)
		tool_loop(&t);
	rc = record(&t, out, e);
out:
	turn_release(&t);
	return rc;
}
