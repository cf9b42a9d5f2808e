/*
 * session.c — the agent session (session.h): the tool loop the turn and
 * the digest run share. Agent layer: it asks the provider (llm/chat.h)
 * and runs calls through the tool registry; it records nothing itself.
 */
#include "agent/session.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/json.h"
#include "base/timeutil.h"
#include "base/utf8.h"
#include "llm/chat.h"
#include "llm/llm.h"
#include "tools/skills.h"
#include "tools/tools.h"

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

static double left_ms(const struct zc_session *t) { return t->deadline - zc_time_mono_ms(); }

double zc_session_call_left_ms(const struct zc_session *t, const char **why)
{
	double now = zc_time_mono_ms();
	double own = t->call_t0 + (double)t->cfg.turn.tool_timeout_ms - now;
	double run = t->deadline - now;
	if (run < own)
		*why = t->hard ? "the digest run's digestTimeoutMs" : "the turn's deadline (turn.deadlineMs)";
	else
		*why = "the time per tool call (turn.toolTimeoutMs)";
	return run < own ? run : own;
}

/* A wait cut to what the call has left: at least 1 ms (a wait of 0 would
 * be none at all); *cut set when the limit is nearer than the tool's own. */
static long call_cap(struct zc_session *t, long own_ms, const char **why, int *cut)
{
	double left = zc_session_call_left_ms(t, why);
	long cap = left < 1 ? 1 : (long)left;
	*cut = cap < own_ms;
	return *cut ? cap : own_ms;
}

/* The running call's wait was cut: 2 when at the session's deadline. */
static void call_was_cut(struct zc_session *t)
{
	t->call_cut = t->deadline <= t->call_t0 + (double)t->cfg.turn.tool_timeout_ms ? 2 : 1;
}

/* zcor_memory_search's filter stage inside a session: config.json's
 * provider, its timeout cut to what the call has left. */
static int search_complete(void *ud, const char *system, const char *user, char **reply,
			   char **errmsg)
{
	struct zc_session *t = ud;
	struct zc_provider_config cfg = t->cfg.provider;
	const char *why;
	int limited;
	cfg.timeout_ms = call_cap(t, cfg.timeout_ms, &why, &limited);
	cfg.cancel = t->cancel;
	struct zc_err e = {0};
	int rc = zc_llm_complete(&cfg, system, user, reply, &e);
	if (rc && limited && zc_session_call_left_ms(t, &why) <= 0) {
		call_was_cut(t);
		zc_fail(&e, ZCOR_EPROVIDER, "the model's answer was cut after %ld ms at %s", cfg.timeout_ms,
			why);
	}
	if (rc)
		*errmsg = zc_strdup(e.msg);
	return rc;
}

/* The GET a plain function is given (wiki_lookup): the process's client
 * (llm/transport.c), its timeout cut to what the call has left; a wait
 * cut there is ZC_HTTP_CUT, naming the limit. */
static int capped_get(void *ud, const char *url, long timeout_ms, long max_bytes,
		      struct zc_buf *body, int *kind, struct zc_err *e)
{
	struct zc_session *t = ud;
	const struct zc_http_get *h = zc_llm_http_get();
	const char *why;
	int limited;
	long cap = call_cap(t, timeout_ms, &why, &limited);
	int rc = h->get(h->ud, url, cap, max_bytes, body, kind, e);
	if (rc && limited && *kind == ZC_HTTP_TIMEOUT) {
		call_was_cut(t);
		*kind = ZC_HTTP_CUT;
		zc_fail(e, ZCOR_EUPSTREAM, "no answer from '%s' within %ld ms: the wait was cut at %s",
			ZC_Q(url, 200), cap, why);
	}
	return rc;
}

/* The tools offered to the model in this conversation: the registry's
 * list for the model's audience under the turn's config. The request's
 * array and its JSON text depend only on which rows the list holds (a
 * row's name and schema are constant) and on the skills in effect (the
 * `skill` row's description lists them: zc_skills_key), so both are built
 * once per distinct (list, skills), checked once (zc_chat_tools_check)
 * and kept for the process (at most TOOLS_CACHE of them; the oldest gives
 * way to a new one): a turn takes references, and its requests splice
 * the text (zc_chat_req.tools_text), which is not checked again. */
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

void zc_session_tools(struct zc_session *t)
{
	struct zc_tool_list l;
	zc_tools_for(t->audience, &t->cfg, t->conv, &l);
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
	struct zcor_ctx ctx = {t->actor, t->conv};
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
	/* checked here once (the requests splicing the text are not checked
	 * again: zc_chat_req.tools_text); a list that fails goes uncached and
	 * without its text, so that every request refuses it by name */
	struct zc_err ce = {0};
	if (zc_chat_tools_check(t->tools, &ce))
		return;
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

static void add_msg(struct zc_session *t, json_t *msg, int keep)
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
static int ask(struct zc_session *t, int final, struct zc_chat_reply *r, struct zc_err *e)
{
	struct zc_provider_config cfg = t->cfg.provider;
	cfg.cancel = t->cancel;
	long window = final ? t->cfg.turn.deadline_ms / ZC_TURN_FINAL_SHARE : (long)left_ms(t);
	if (t->hard) { /* the deadline is the end: every call is cut there */
		long left = (long)left_ms(t);
		if (window > left)
			window = left;
		if (window < 1)
			window = 1;
	}
	else if (window < ZC_TURN_FINAL_MIN_MS)
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

static int times_seen(struct zc_session *t, const char *key)
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
static void run_call(struct zc_session *t, const struct zc_tool_call *c)
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
		struct zcor_ctx ctx = {t->actor, t->conv};
		struct zc_err te = {0};
		if (t->ev && t->ev->tool_start)
			t->ev->tool_start(t->ev->ud, c->name, c->arguments);
		t->call_t0 = started;
		t->call_cut = 0;
		int rc = zc_tool_call(t->m, &ctx, x, &t->search, &t->http, t->skills, c->arguments,
				      &result, &te);
		if (rc) {
			json_decref(result);
			result = error_result(rc, te.msg, te.detail);
			status = t->call_cut ? "timeout" : "error";
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
	if (!t->limit && (left_ms(t) <= 0 || t->call_cut == 2))
		t->limit = "deadline";
	/* issue 14 step 6: at the time per tool call too, the tools are
	 * withdrawn and the model asked once to answer (with the call's error
	 * in front of it). Not in a digest run: its work is the tool calls,
	 * and the next ones may not need the network that hung. */
	if (!t->limit && t->call_cut == 1 && !t->hard)
		t->limit = "toolTime";
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
static void ask_to_answer(struct zc_session *t)
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

/* 7: the answer's image paths. 1: it is the reply (t->reply); 0: a bad
 * path went back to the model once, ask again. After the second wrong
 * answer the wrong markers are removed and the record keeps them. */
static int take_reply(struct zc_session *t, const char *content, int *checked)
{
	if (!t->check_reply) { /* an answer sent nowhere (the digest run's) */
		t->reply = zc_strdup(content ? content : "");
		return 1;
	}
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

/* A hard deadline passed (within slack ms: a provider call cut at the
 * deadline may return a little before it): the session is abandoned (the
 * digest run). */
#define CUT_SLACK_MS 250
static int cut(struct zc_session *t, double slack)
{
	if (!t->hard || left_ms(t) > slack)
		return 0;
	t->timed_out = t->failed = 1;
	t->limit = "deadline";
	zc_fail(&t->fail, ZCOR_EPROVIDER,
		"timed out after %.0f ms (the hard limit); the session was abandoned, the tool calls "
		"it made stay",
		zc_time_mono_ms() - t->t0);
	return 1;
}

static int interrupted(const struct zc_session *t)
{
	return t->cancel && __atomic_load_n(t->cancel, __ATOMIC_ACQUIRE);
}

/* The session was interrupted (zcor_interrupt): it ends failed, now. */
static int stop_now(struct zc_session *t)
{
	if (!interrupted(t))
		return 0;
	t->failed = 1;
	t->timed_out = 0;
	zc_fail(&t->fail, ZCOR_EPROVIDER,
		"interrupted after %.0f ms: zcor is stopping (SIGTERM or SIGINT); the model's request "
		"was abandoned, the tool calls made before stay",
		zc_time_mono_ms() - t->t0);
	return 1;
}

/* 5-7: the tool loop, until a reply or the session's failure. At a limit
 * (steps, deadline, a repeated call) the tools are withdrawn and the model
 * is asked once to answer; a hard deadline ends the session instead. */
void zc_session_loop(struct zc_session *t)
{
	int steps = 0, reply_checked = 0, asked = 0;
	for (;;) {
		/* a request with less than the slack left (a tool call cut at the
		 * deadline ends a hair before it) could not be answered anyway */
		if (stop_now(t) || cut(t, CUT_SLACK_MS))
			return;
		if (!t->limit && left_ms(t) <= 0)
			t->limit = "deadline";
		int final = t->limit != NULL;
		if (final && !asked++)
			ask_to_answer(t);
		struct zc_chat_reply r;
		struct zc_err ce = {0};
		if (ask(t, final, &r, &ce)) {
			zc_chat_reply_release(&r);
			if (stop_now(t) || cut(t, CUT_SLACK_MS))
				return;
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
			for (size_t i = 0; i < r.n_tool_calls && !interrupted(t); i++)
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


void zc_session_start(struct zc_session *t)
{
	t->search = (struct zcor_provider){search_complete, t};
	t->http = (struct zc_http_get){capped_get, t};
	t->messages = json_array();
	t->dialogue = json_array();
	t->calls = json_array();
	t->seen = json_array();
}

json_t *zc_session_tokens(const struct zc_session *t)
{
	return t->tokens_reported
		       ? json_pack("{s:I, s:I, s:I}", "prompt", (json_int_t)t->tok_prompt, "completion",
				   (json_int_t)t->tok_completion, "total", (json_int_t)t->tok_total)
		       : json_null();
}

void zc_session_release(struct zc_session *t)
{
	json_decref(t->messages);
	zc_free(t->earlier);
	t->earlier = NULL;
	json_decref(t->dialogue);
	json_decref(t->tools);
	json_decref(t->tools_text);
	json_decref(t->declared);
	json_decref(t->calls);
	json_decref(t->seen);
	json_decref(t->reply_problems);
	zc_free(t->reply);
}
