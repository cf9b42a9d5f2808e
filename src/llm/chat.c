/*
 * chat.c — chat completions with tools (see chat.h).
 *
 * LLM layer, on transport.c's HTTP path. It checks the request a caller
 * builds (roles, tools, tool_choice) before anything is sent, and reads
 * the answer — one JSON object, or an SSE stream parsed incrementally as
 * it arrives, with tool-call deltas merged by index — checking it
 * strictly: an answer the turn could not act on is a provider error that
 * says what was wrong. It never prints, never sees the API key (the
 * transport adds it) and knows nothing of memories or the turn.
 */
#include "llm/chat.h"

#include <assert.h>
#include <math.h>
#include <string.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/json.h"
#include "base/utf8.h"
#include "llm/transport.h"

#define HEAD_MAX 120      /* bytes of the body kept to quote when it is not readable */
#define TOOL_NAME_MAX 64  /* OpenAI's limit on a function name */

/* ---- the request -------------------------------------------------------- */

static int is_content(const json_t *c) { return json_is_string(c) || json_is_array(c); }

static int check_tool_calls(const json_t *calls, size_t i, struct zc_err *e)
{
	size_t k;
	json_t *c;
	if (!json_is_array(calls) || json_array_size(calls) == 0)
		return zc_fail(e, ZCOR_EINVAL, "'messages[%zu].tool_calls' must be a non-empty array", i);
	json_array_foreach(calls, k, c) {
		const json_t *f = json_object_get(c, "function");
		const char *id = zc_json_str(c, "id"), *name = zc_json_str(f, "name");
		if (!id || !*id || !name || !*name || !json_is_string(json_object_get(f, "arguments")))
			return zc_fail(e, ZCOR_EINVAL,
				       "'messages[%zu].tool_calls[%zu]' must be {id, type: \"function\", "
				       "function: {name, arguments}} with strings for id, name and arguments",
				       i, k);
	}
	return ZCOR_OK;
}

/* msgs as the request holds them; the n_text spliced ones before
 * msgs[at] count in the indexes named. */
static int check_messages(const json_t *msgs, size_t at, size_t n_text, struct zc_err *e)
{
	size_t j;
	json_t *m;
	if (!json_is_array(msgs) || json_array_size(msgs) == 0)
		return zc_fail(e, ZCOR_EINVAL, "'messages' must be a non-empty array of chat messages");
	if (at > json_array_size(msgs))
		return zc_fail(e, ZCOR_EINVAL, "'messages_text_at' is %zu, past the %zu messages", at,
			       json_array_size(msgs));
	json_array_foreach(msgs, j, m) {
		size_t i = j < at ? j : j + n_text;
		const char *role = zc_json_str(m, "role");
		const json_t *content = json_object_get(m, "content");
		if (!role)
			return zc_fail(e, ZCOR_EINVAL, "'messages[%zu].role' must be one of system, developer, "
				       "user, assistant, tool", i);
		if (!strcmp(role, "system") || !strcmp(role, "developer") || !strcmp(role, "user")) {
			if (!is_content(content))
				return zc_fail(e, ZCOR_EINVAL,
					       "'messages[%zu].content' (a %s message) must be a string or an "
					       "array of parts", i, role);
		} else if (!strcmp(role, "assistant")) {
			const json_t *calls = json_object_get(m, "tool_calls");
			int has_calls = calls && !json_is_null(calls);
			if (content && !json_is_null(content) && !is_content(content))
				return zc_fail(e, ZCOR_EINVAL, "'messages[%zu].content' must be a string, an "
					       "array of parts or null", i);
			if (!has_calls && !is_content(content))
				return zc_fail(e, ZCOR_EINVAL, "'messages[%zu]' (assistant) needs content or "
					       "tool_calls", i);
			if (has_calls && check_tool_calls(calls, i, e))
				return ZCOR_EINVAL;
		} else if (!strcmp(role, "tool")) {
			const char *id = zc_json_str(m, "tool_call_id");
			if (!id || !*id)
				return zc_fail(e, ZCOR_EINVAL, "'messages[%zu].tool_call_id' must name the tool "
					       "call this tool message answers", i);
			if (!is_content(content))
				return zc_fail(e, ZCOR_EINVAL, "'messages[%zu].content' (a tool result) must be "
					       "a string or an array of parts", i);
		} else {
			return zc_fail(e, ZCOR_EINVAL, "'messages[%zu].role' is '%s'; use one of system, "
				       "developer, user, assistant, tool", i, ZC_Q(role, 40));
		}
	}
	return ZCOR_OK;
}

static int good_tool_name(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > TOOL_NAME_MAX)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      *s == '_' || *s == '-'))
			return 0;
	return 1;
}

static int has_tool(const json_t *tools, const char *name)
{
	size_t i;
	json_t *t;
	json_array_foreach(tools, i, t) {
		const char *n = zc_json_str(json_object_get(t, "function"), "name");
		if (n && !strcmp(n, name))
			return 1;
	}
	return 0;
}

int zc_chat_tools_check(const json_t *tools, struct zc_err *e)
{
	size_t i;
	json_t *t;
	if (!tools)
		return ZCOR_OK;
	if (!json_is_array(tools))
		return zc_fail(e, ZCOR_EINVAL, "'tools' must be an array of {type: \"function\", function}");
	json_array_foreach(tools, i, t) {
		const json_t *f = json_object_get(t, "function");
		const char *type = zc_json_str(t, "type"), *name = zc_json_str(f, "name");
		const json_t *d = json_object_get(f, "description"), *p = json_object_get(f, "parameters");
		if (!type || strcmp(type, "function") || !json_is_object(f))
			return zc_fail(e, ZCOR_EINVAL, "'tools[%zu]' must be {type: \"function\", function: "
				       "{name, description, parameters}}", i);
		if (!name || !good_tool_name(name))
			return zc_fail(e, ZCOR_EINVAL, "'tools[%zu].function.name' is '%s'; use 1 to %d of "
				       "a-z, A-Z, 0-9, _ and -", i, ZC_Q(name, 80), TOOL_NAME_MAX);
		if ((d && !json_is_string(d)) || (p && !json_is_object(p)))
			return zc_fail(e, ZCOR_EINVAL, "'tools[%zu].function' ('%s'): description must be a "
				       "string and parameters a JSON Schema object", i, name);
		for (size_t k = 0; k < i; k++)
			if (!strcmp(zc_json_str(json_object_get(json_array_get(tools, k), "function"), "name"),
				    name))
				return zc_fail(e, ZCOR_EINVAL, "'tools[%zu]': the name '%s' is declared twice", i,
					       name);
	}
	return ZCOR_OK;
}

static int check_tool_choice(const json_t *tc, const json_t *tools, struct zc_err *e)
{
	int any = tools && json_array_size(tools) > 0;
	if (!tc)
		return ZCOR_OK;
	if (json_is_string(tc)) {
		const char *s = json_string_value(tc);
		if (!strcmp(s, "auto") || !strcmp(s, "none"))
			return ZCOR_OK;
		if (!strcmp(s, "required"))
			return any ? ZCOR_OK
				   : zc_fail(e, ZCOR_EINVAL, "'tool_choice' is 'required' but no tools are given");
		return zc_fail(e, ZCOR_EINVAL, "'tool_choice' is '%s'; use auto, none, required or "
			       "{type: \"function\", function: {name}}", ZC_Q(s, 40));
	}
	const char *type = zc_json_str(tc, "type");
	const char *name = zc_json_str(json_object_get(tc, "function"), "name");
	if (!json_is_object(tc) || !type || strcmp(type, "function") || !name)
		return zc_fail(e, ZCOR_EINVAL, "'tool_choice' must be auto, none, required or {type: "
			       "\"function\", function: {name}}");
	if (!any || !has_tool(tools, name))
		return zc_fail(e, ZCOR_EINVAL, "'tool_choice' names the function '%s', which is not in "
			       "'tools'", ZC_Q(name, 80));
	return ZCOR_OK;
}

static int check_req(const struct zc_chat_req *r, struct zc_err *e)
{
	if (!r)
		return zc_fail(e, ZCOR_EINVAL, "no chat request");
	size_t n_text = r->messages_text && *r->messages_text ? r->messages_count : 0;
	/* tools given with their text were checked when the text was made */
	if (check_messages(r->messages, r->messages_text_at, n_text, e) ||
	    (!r->tools_text && zc_chat_tools_check(r->tools, e)) ||
	    check_tool_choice(r->tool_choice, r->tools, e))
		return ZCOR_EINVAL;
	if (!isnan(r->temperature) && !(r->temperature >= 0 && r->temperature <= 2))
		return zc_fail(e, ZCOR_EINVAL, "'temperature' is %g; use 0 to 2 (or NAN to leave it out)",
			       r->temperature);
	return ZCOR_OK;
}

static int buf_out(const char *p, size_t n, void *ud)
{
	zc_buf_add(ud, p, n);
	return 0;
}

/* v's compact dump (zc_json_dump's form), straight into b */
static void dump_into(struct zc_buf *b, const json_t *v)
{
	int rc = json_dump_callback(v, buf_out, b, JSON_COMPACT | JSON_ENCODE_ANY);
	assert(rc == 0); /* buf_out never fails: out of memory aborts (alloc.h) */
	(void)rc;
}

/* The request body. The parts given as text (messages_text, tools_text)
 * are spliced in as they are; the rest is dumped once, into one buffer:
 * {model, tool_choice?, temperature?, stream, stream_options?, messages,
 * tools?}. The same request with those parts given as values instead
 * is the same text, byte for byte (test_llm_chat). */
static char *build_payload(const struct zc_provider_config *cfg, const struct zc_chat_req *r)
{
	json_t *p = json_object();
	json_object_set_new(p, "model", json_string(cfg->model));
	/* borrowed: the payload only lives until it is dumped */
	if (r->tool_choice)
		json_object_set(p, "tool_choice", (json_t *)r->tool_choice);
	if (!isnan(r->temperature))
		json_object_set_new(p, "temperature", json_real(r->temperature));
	json_object_set_new(p, "stream", json_boolean(r->stream));
	if (r->stream && r->stream_usage)
		json_object_set_new(p, "stream_options", json_pack("{s:b}", "include_usage", 1));
	struct zc_buf b = ZC_BUF_INIT;
	dump_into(&b, p);
	json_decref(p);
	/* the object's closing brace becomes ,"messages":[…],"tools":…} */
	assert(b.len >= 2 && b.p[b.len - 1] == '}');
	b.len--;
	zc_buf_add(&b, ",\"messages\":[", 13);
	size_t n = json_array_size(r->messages), sep = 0;
	int text = r->messages_text && *r->messages_text;
	for (size_t i = 0; i <= n; i++) {
		if (i == r->messages_text_at && text) {
			if (sep++)
				zc_buf_addc(&b, ',');
			zc_buf_adds(&b, r->messages_text);
		}
		if (i == n)
			break;
		if (sep++)
			zc_buf_addc(&b, ',');
		dump_into(&b, json_array_get(r->messages, i));
	}
	zc_buf_addc(&b, ']');
	if (r->tools && json_array_size(r->tools)) {
		zc_buf_add(&b, ",\"tools\":", 9);
		if (r->tools_text)
			zc_buf_adds(&b, r->tools_text);
		else
			dump_into(&b, r->tools);
	}
	zc_buf_addc(&b, '}');
	return zc_buf_detach(&b);
}

/* ---- reading the answer ----------------------------------------------- */

struct call {
	struct zc_buf id, name, args;
	int has_args;
};

enum mode { M_START, M_COMMENT, M_JSON, M_SSE };

struct parser {
	const struct zc_chat_req *req;
	enum mode mode;
	struct zc_buf line;   /* SSE: the current line so far */
	struct zc_buf data;   /* SSE: the current event's data; JSON: the body */
	int data_lines;       /* SSE: data lines in the current event */
	struct zc_buf text;
	struct call calls[ZC_CHAT_TOOL_CALLS_MAX];
	size_t ncalls;
	char *finish;
	long long usage[3];
	int events, done, delivered, cancelled;
	char head[HEAD_MAX + 1]; /* the body's first bytes, for messages */
	size_t head_len;
};

static void parser_init(struct parser *ps, const struct zc_chat_req *req)
{
	memset(ps, 0, sizeof(*ps));
	ps->req = req;
	ps->usage[0] = ps->usage[1] = ps->usage[2] = -1;
}

static void parser_release(struct parser *ps)
{
	zc_buf_release(&ps->line);
	zc_buf_release(&ps->data);
	zc_buf_release(&ps->text);
	for (size_t i = 0; i < ps->ncalls; i++) {
		zc_buf_release(&ps->calls[i].id);
		zc_buf_release(&ps->calls[i].name);
		zc_buf_release(&ps->calls[i].args);
	}
	zc_free(ps->finish);
	parser_init(ps, ps->req);
}

static int tell(struct parser *ps, const struct zc_chat_delta *d, struct zc_err *e)
{
	if (!ps->req->on_delta)
		return ZCOR_OK;
	ps->delivered = 1;
	if (ps->req->on_delta(ps->req->ud, d)) {
		ps->cancelled = 1;
		return zc_fail(e, ZCOR_EPROVIDER, "the chat completion was cancelled while streaming");
	}
	return ZCOR_OK;
}

static void take_usage(struct parser *ps, const json_t *u)
{
	static const char *const keys[3] = {"prompt_tokens", "completion_tokens", "total_tokens"};
	for (int i = 0; i < 3; i++) {
		const json_t *v = json_object_get(u, keys[i]);
		if (json_is_integer(v) && json_integer_value(v) >= 0)
			ps->usage[i] = json_integer_value(v);
	}
}

static void take_finish(struct parser *ps, const json_t *choice)
{
	const char *f = zc_json_str(choice, "finish_reason");
	if (f && *f) {
		zc_free(ps->finish);
		ps->finish = zc_strdup(f);
	}
}

static const char *json_kind(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER:
	case JSON_REAL: return "a number";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	default: return "null";
	}
}

/* Which call a streamed tool-call delta continues: its index, or (servers
 * that send none) a new call for a new id, else the last one. */
static long delta_index(const struct parser *ps, const json_t *tc)
{
	const json_t *ix = json_object_get(tc, "index");
	if (ix)
		return json_is_integer(ix) ? (long)json_integer_value(ix) : -1;
	const char *id = zc_json_str(tc, "id");
	if (ps->ncalls == 0)
		return 0;
	if (id && *id && strcmp(zc_buf_str(&ps->calls[ps->ncalls - 1].id), id))
		return (long)ps->ncalls;
	return (long)ps->ncalls - 1;
}

/* One streamed tool-call delta, merged into its call and told. */
static int tool_delta(struct parser *ps, const json_t *tc, struct zc_err *e)
{
	if (!json_is_object(tc))
		return zc_fail(e, ZCOR_EPROVIDER, "a streamed tool call is %s, not an object", json_kind(tc));
	long ix = delta_index(ps, tc);
	if (ix < 0 || ix >= ZC_CHAT_TOOL_CALLS_MAX)
		return zc_fail(e, ZCOR_EPROVIDER, "a streamed tool call has index %ld; zcor takes 0 to %d",
			       ix, ZC_CHAT_TOOL_CALLS_MAX - 1);
	while (ps->ncalls <= (size_t)ix)
		ps->ncalls++; /* the new calls are zeroed buffers */
	struct call *c = &ps->calls[ix];
	const json_t *f = json_object_get(tc, "function");
	const char *id = zc_json_str(tc, "id"), *name = zc_json_str(f, "name");
	const json_t *args = json_object_get(f, "arguments");
	if (id && *id && c->id.len == 0)
		zc_buf_adds(&c->id, id);
	if (name && *name && c->name.len == 0)
		zc_buf_adds(&c->name, name);
	if (args && !json_is_null(args) && !json_is_string(args))
		return zc_fail(e, ZCOR_EPROVIDER,
			       "the arguments of tool call %ld ('%s') are %s, not a string of JSON", ix,
			       ZC_Q(zc_buf_str(&c->name), 80), json_kind(args));
	struct zc_chat_delta d = {NULL, 0, (int)ix, c->id.len ? c->id.p : NULL,
				  c->name.len ? c->name.p : NULL, "", 0};
	if (json_is_string(args)) {
		c->has_args = 1;
		d.args = json_string_value(args);
		d.args_len = json_string_length(args);
		zc_buf_add(&c->args, d.args, d.args_len);
	}
	return tell(ps, &d, e);
}

/* The content and tool calls of a chunk's delta (or of a whole message
 * some servers send as their only chunk). */
static int chunk_message(struct parser *ps, const json_t *m, struct zc_err *e)
{
	struct zc_buf t = ZC_BUF_INIT;
	int rc = ZCOR_OK;
	if (zc_llm_add_content(json_object_get(m, "content"), &t) && t.len) {
		zc_buf_add(&ps->text, t.p, t.len);
		struct zc_chat_delta d = {t.p, t.len, -1, NULL, NULL, NULL, 0};
		rc = tell(ps, &d, e);
	}
	zc_buf_release(&t);
	const json_t *calls = json_object_get(m, "tool_calls");
	if (rc || !calls || json_is_null(calls))
		return rc;
	if (!json_is_array(calls))
		return zc_fail(e, ZCOR_EPROVIDER, "a streamed delta's tool_calls is %s, not an array",
			       json_kind(calls));
	size_t i;
	json_t *tc;
	json_array_foreach(calls, i, tc) {
		if ((rc = tool_delta(ps, tc, e)))
			return rc;
	}
	return ZCOR_OK;
}

/* One SSE event: "[DONE]", or a chunk. */
static int sse_event(struct parser *ps, struct zc_err *e)
{
	int rc = ZCOR_OK;
	json_t *doc = NULL;
	if (!ps->data_lines || ps->done)
		goto out;
	if (!strcmp(zc_buf_str(&ps->data), "[DONE]")) {
		ps->done = 1;
		goto out;
	}
	doc = json_loadb(zc_buf_str(&ps->data), ps->data.len, 0, NULL);
	if (!json_is_object(doc)) {
		rc = zc_fail(e, ZCOR_EPROVIDER,
			     "event %d of the provider's stream is not a JSON object: '%s'", ps->events + 1,
			     ZC_Q(zc_buf_str(&ps->data), 100));
		goto out;
	}
	ps->events++;
	if (zc_llm_has_error(doc)) {
		rc = zc_llm_provider_reported(doc, e);
		goto out;
	}
	const json_t *u = json_object_get(doc, "usage");
	if (json_is_object(u))
		take_usage(ps, u);
	const json_t *choice = json_array_get(json_object_get(doc, "choices"), 0);
	if (!choice)
		goto out; /* the usage chunk has "choices": [] */
	const json_t *delta = json_object_get(choice, "delta");
	if (!delta)
		delta = json_object_get(choice, "message");
	if (json_is_object(delta) && (rc = chunk_message(ps, delta, e)))
		goto out;
	take_finish(ps, choice);
out:
	json_decref(doc);
	zc_buf_reset(&ps->data);
	ps->data_lines = 0;
	return rc;
}

static int sse_line(struct parser *ps, struct zc_err *e)
{
	const char *l = zc_buf_str(&ps->line);
	size_t n = ps->line.len;
	int rc = ZCOR_OK;
	if (n && l[n - 1] == '\r')
		n--;
	if (n == 0) {
		rc = sse_event(ps, e);
	} else if (n >= 5 && !memcmp(l, "data:", 5)) {
		const char *v = l + 5;
		size_t vn = n - 5;
		if (vn && *v == ' ') {
			v++;
			vn--;
		}
		if (ps->data_lines++)
			zc_buf_addc(&ps->data, '\n');
		zc_buf_add(&ps->data, v, vn);
	} /* comments (':'), event:, id:, retry: carry nothing for us */
	zc_buf_reset(&ps->line);
	return rc;
}

static int feed(struct parser *ps, const char *p, size_t n, struct zc_err *e)
{
	const char *end = p + n;
	if (ps->head_len < HEAD_MAX) {
		size_t k = (size_t)(end - p) < HEAD_MAX - ps->head_len ? (size_t)(end - p) : HEAD_MAX - ps->head_len;
		memcpy(ps->head + ps->head_len, p, k);
		ps->head_len += k;
		ps->head[ps->head_len] = '\0';
	}
	while (p < end) {
		if (ps->mode == M_START) {
			if (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') {
				p++;
				continue;
			}
			/* a JSON body, or SSE (its lines start with a field name),
			 * after keep-alive comments either way */
			ps->mode = *p == ':' ? M_COMMENT
				   : ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')) ? M_SSE
											: M_JSON;
		}
		if (ps->mode == M_COMMENT) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			p = nl ? nl + 1 : end;
			if (nl)
				ps->mode = M_START;
		} else if (ps->mode == M_JSON) {
			zc_buf_add(&ps->data, p, (size_t)(end - p));
			p = end;
		} else {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			zc_buf_add(&ps->line, p, (size_t)((nl ? nl : end) - p));
			p = nl ? nl + 1 : end;
			if (nl) {
				int rc = sse_line(ps, e);
				if (rc)
					return rc;
			}
		}
	}
	return ZCOR_OK;
}

/* The calls must be whole: an id, a function name, arguments. */
static int check_calls(const struct parser *ps, struct zc_err *e)
{
	for (size_t i = 0; i < ps->ncalls; i++) {
		const struct call *c = &ps->calls[i];
		const char *name = c->name.len ? c->name.p : NULL;
		if (!c->id.len || !name)
			return zc_fail(e, ZCOR_EPROVIDER, "tool call %zu of the answer has no %s%s%s%s", i,
				       !c->id.len ? "id" : "function name", name ? " ('" : "",
				       name ? ZC_Q(name, 80) : "", name ? "')" : "");
		if (!c->has_args)
			return zc_fail(e, ZCOR_EPROVIDER,
				       "tool call %zu ('%s') of the answer has no function.arguments string", i,
				       ZC_Q(name, 80));
	}
	return ZCOR_OK;
}

/* Moves what the parser gathered into out. */
static int to_reply(struct parser *ps, struct zc_chat_reply *out, struct zc_err *e)
{
	if (check_calls(ps, e))
		return ZCOR_EPROVIDER;
	if (ps->text.len == 0 && ps->ncalls == 0)
		return zc_fail(e, ZCOR_EPROVIDER, "the model's answer has neither text nor tool calls%s%s%s",
			       ps->finish ? " (finish_reason '" : "", ps->finish ? ZC_Q(ps->finish, 40) : "",
			       ps->finish ? "')" : "");
	out->content = ps->text.len ? zc_buf_detach(&ps->text) : NULL;
	if (ps->ncalls) {
		out->tool_calls = zc_calloc(ps->ncalls, sizeof(*out->tool_calls));
		for (size_t i = 0; i < ps->ncalls; i++) {
			struct zc_tool_call *t = &out->tool_calls[i];
			t->id = zc_buf_detach(&ps->calls[i].id);
			t->name = zc_buf_detach(&ps->calls[i].name);
			t->arguments = zc_buf_detach(&ps->calls[i].args);
			json_t *a = json_loads(t->arguments, JSON_DECODE_ANY, NULL);
			t->args_object = json_is_object(a);
			json_decref(a);
		}
		out->n_tool_calls = ps->ncalls;
	}
	out->finish_reason = ps->finish;
	ps->finish = NULL;
	out->prompt_tokens = ps->usage[0];
	out->completion_tokens = ps->usage[1];
	out->total_tokens = ps->usage[2];
	return ZCOR_OK;
}

/* A whole answer: choices[0].message with content and/or tool_calls. */
static int whole_answer(struct parser *ps, const json_t *doc, struct zc_err *e)
{
	if (!json_is_object(doc))
		return zc_fail(e, ZCOR_EPROVIDER, "the provider's answer is %s, not a JSON object",
			       json_kind(doc));
	if (zc_llm_has_error(doc))
		return zc_llm_provider_reported(doc, e);
	const json_t *choice = json_array_get(json_object_get(doc, "choices"), 0);
	if (!json_is_object(choice))
		return zc_fail(e, ZCOR_EPROVIDER, "the provider's answer has no choices[0]: '%s'",
			       ZC_Q(ps->head, 100));
	const json_t *m = json_object_get(choice, "message"), *u = json_object_get(doc, "usage");
	if (!json_is_object(m))
		return zc_fail(e, ZCOR_EPROVIDER, "the provider's answer has no choices[0].message");
	if (json_is_object(u))
		take_usage(ps, u);
	take_finish(ps, choice);
	const json_t *c = json_object_get(m, "content");
	if (c && !json_is_null(c) && !zc_llm_add_content(c, &ps->text))
		return zc_fail(e, ZCOR_EPROVIDER, "choices[0].message.content is %s, not text",
			       json_kind(c));
	const json_t *calls = json_object_get(m, "tool_calls");
	if (!calls || json_is_null(calls))
		return ZCOR_OK;
	if (!json_is_array(calls))
		return zc_fail(e, ZCOR_EPROVIDER, "choices[0].message.tool_calls is %s, not an array",
			       json_kind(calls));
	if (json_array_size(calls) > ZC_CHAT_TOOL_CALLS_MAX)
		return zc_fail(e, ZCOR_EPROVIDER, "the answer has %zu tool calls; zcor takes at most %d",
			       json_array_size(calls), ZC_CHAT_TOOL_CALLS_MAX);
	size_t i;
	json_t *tc;
	json_array_foreach(calls, i, tc) {
		const json_t *f = json_object_get(tc, "function"), *args = json_object_get(f, "arguments");
		const char *id = zc_json_str(tc, "id"), *name = zc_json_str(f, "name");
		struct call *k = &ps->calls[ps->ncalls++];
		if (!json_is_object(tc))
			return zc_fail(e, ZCOR_EPROVIDER, "tool call %zu of the answer is %s, not an object", i,
				       json_kind(tc));
		if (id)
			zc_buf_adds(&k->id, id);
		if (name)
			zc_buf_adds(&k->name, name);
		if (args && !json_is_string(args))
			return zc_fail(e, ZCOR_EPROVIDER,
				       "the arguments of tool call %zu ('%s') are %s, not a string of JSON", i,
				       ZC_Q(name, 80), json_kind(args));
		if (args) {
			k->has_args = 1;
			zc_buf_add(&k->args, json_string_value(args), json_string_length(args));
		}
	}
	return ZCOR_OK;
}

static int parser_finish(struct parser *ps, struct zc_chat_reply *out, struct zc_err *e)
{
	int rc = ZCOR_OK;
	if (ps->mode == M_START || ps->mode == M_COMMENT)
		return zc_fail(e, ZCOR_EPROVIDER, "the provider answered with an empty body");
	if (ps->mode == M_JSON) {
		json_error_t je;
		json_t *doc = json_loadb(zc_buf_str(&ps->data), ps->data.len, 0, &je);
		if (!doc) {
			char q[ZC_LLM_QUOTE_MAX + 8];
			zc_llm_quote(q, ps->head, ps->head_len);
			return zc_fail(e, ZCOR_EPROVIDER,
				       "the provider's answer is not valid JSON (%s, line %d column %d): '%s'",
				       ZC_Q(je.text, 100), je.line, je.column, q);
		}
		rc = whole_answer(ps, doc, e);
		json_decref(doc);
	} else {
		if (ps->line.len && (rc = sse_line(ps, e))) /* a last line without its newline */
			return rc;
		if ((rc = sse_event(ps, e))) /* a last event without its blank line */
			return rc;
		if (!ps->done && !ps->finish) {
			char q[ZC_LLM_QUOTE_MAX + 8];
			zc_llm_quote(q, ps->head, ps->head_len);
			return zc_fail(e, ZCOR_EPROVIDER,
				       "the provider's event stream ended with neither data: [DONE] nor a "
				       "finish_reason after %d event%s (cut off); it began '%s'",
				       ps->events, ps->events == 1 ? "" : "s", q);
		}
	}
	return rc ? rc : to_reply(ps, out, e);
}

/* ---- the call --------------------------------------------------------- */

struct chat_sink {
	struct parser ps;
	struct zc_chat_reply *out;
};

static void sink_reset(void *ud) { parser_release(&((struct chat_sink *)ud)->ps); }

static int sink_data(void *ud, const char *p, size_t n, struct zc_err *e)
{
	struct parser *ps = &((struct chat_sink *)ud)->ps;
	return feed(ps, p, n, e);
}

static int sink_finish(void *ud, struct zc_err *e)
{
	struct chat_sink *s = ud;
	return parser_finish(&s->ps, s->out, e);
}

static int sink_committed(void *ud) { return ((struct chat_sink *)ud)->ps.delivered; }

void zc_chat_reply_release(struct zc_chat_reply *out)
{
	if (!out)
		return;
	zc_free(out->content);
	for (size_t i = 0; i < out->n_tool_calls; i++) {
		zc_free(out->tool_calls[i].id);
		zc_free(out->tool_calls[i].name);
		zc_free(out->tool_calls[i].arguments);
	}
	zc_free(out->tool_calls);
	zc_free(out->finish_reason);
	memset(out, 0, sizeof(*out));
	out->prompt_tokens = out->completion_tokens = out->total_tokens = -1;
}

static void reply_init(struct zc_chat_reply *out)
{
	memset(out, 0, sizeof(*out));
	out->prompt_tokens = out->completion_tokens = out->total_tokens = -1;
}

/* After a failure out keeps only attempts and cancelled. */
static void reply_failed(struct zc_chat_reply *out, int attempts, int cancelled)
{
	zc_chat_reply_release(out);
	out->attempts = attempts;
	out->cancelled = cancelled;
}

int zc_llm_chat(const struct zc_provider_config *cfg, const struct zc_chat_req *req,
		struct zc_chat_reply *out, struct zc_err *e)
{
	reply_init(out);
	if (!cfg || !cfg->enabled)
		return zc_fail(e, ZCOR_ENOPROVIDER,
			       "no LLM provider configured; add \"provider\" to config.json");
	if (check_req(req, e))
		return ZCOR_EINVAL;
	char *payload = build_payload(cfg, req);
	if (!payload)
		return zc_fail(e, ZCOR_EINTERNAL, "the chat request could not be written as JSON");
	struct chat_sink s;
	struct zc_llm_xfer_info info;
	parser_init(&s.ps, req);
	s.out = out;
	struct zc_llm_sink sink = {sink_reset, sink_data, sink_finish, sink_committed, &s};
	int rc = zc_llm_post(cfg, payload, req->stream, &sink, &info, e);
	if (rc == ZCOR_OK) {
		out->model_ms = info.answer_ms;
		out->attempts = info.attempts;
	} else {
		reply_failed(out, info.attempts, s.ps.cancelled);
	}
	parser_release(&s.ps);
	zc_free(payload);
	return rc;
}

int zc_llm_chat_body(const struct zc_provider_config *cfg, const struct zc_chat_req *req,
		     char **body, struct zc_err *e)
{
	*body = NULL;
	if (check_req(req, e))
		return ZCOR_EINVAL;
	*body = build_payload(cfg, req);
	return ZCOR_OK;
}

int zc_llm_chat_parse(const char *const *pieces, const size_t *lens, size_t n,
		      const struct zc_chat_req *req, struct zc_chat_reply *out, struct zc_err *e)
{
	struct parser ps;
	int rc = ZCOR_OK;
	reply_init(out);
	parser_init(&ps, req);
	for (size_t i = 0; i < n && !rc; i++)
		rc = feed(&ps, pieces[i], lens[i], e);
	if (!rc)
		rc = parser_finish(&ps, out, e);
	if (rc)
		reply_failed(out, 0, ps.cancelled);
	parser_release(&ps);
	return rc;
}
