/*
 * openai.c — one-shot chat completions (zc_llm_complete, see llm.h): the
 * request of a system and a user message, and reading its answer's text.
 *
 * LLM layer. The HTTP side (retries, timeouts, caps, the API key) is
 * transport.c's; this file only builds the request and reads the body,
 * which it takes whole. It never prints and never touches the store.
 */
#include "llm/llm.h"

#include <string.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/json.h"
#include "base/utf8.h"
#include "llm/transport.h"


/* ---- reading a body --------------------------------------------------- */

/* Skips blank lines and SSE comment lines (": keep-alive"). */
static const char *skip_preamble(const char *p, const char *end)
{
	for (;;) {
		while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
			p++;
		if (p == end || *p != ':')
			return p;
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		p = nl ? nl + 1 : end;
	}
}

/* An "error" member that is present and not null ({"error": null} is how
 * some servers say "no error"). */
int zc_llm_has_error(const json_t *doc)
{
	const json_t *err = json_object_get(doc, "error");
	return err && !json_is_null(err);
}

/* The text of {"error": "…"} or {"error": {"message": "…"}}, or NULL. */
static const char *error_text(const json_t *doc)
{
	const json_t *err = json_object_get(doc, "error");
	if (json_is_string(err))
		return json_string_value(err);
	return zc_json_str(err, "message");
}

char *zc_llm_error_message(const char *body, size_t len)
{
	if (!body)
		return NULL;
	const char *end = body + len, *p = skip_preamble(body, end);
	json_t *doc = json_loadb(p, (size_t)(end - p), 0, NULL);
	const char *m = error_text(doc);
	if (!m)
		m = zc_json_str(doc, "message");
	if (!m)
		m = zc_json_str(doc, "detail");
	char *out = m ? zc_strdup(m) : NULL;
	json_decref(doc);
	return out;
}

/* Appends a message's content: a string, or an array of {type:"text", text} parts. */
int zc_llm_add_content(const json_t *c, struct zc_buf *out)
{
	if (json_is_string(c)) {
		zc_buf_add(out, json_string_value(c), json_string_length(c));
		return 1;
	}
	if (!json_is_array(c))
		return 0;
	int found = 0;
	size_t i;
	json_t *part;
	json_array_foreach(c, i, part) {
		const char *t = zc_json_str(part, "text");
		if (t) {
			zc_buf_adds(out, t);
			found = 1;
		}
	}
	return found;
}

int zc_llm_provider_reported(const json_t *doc, struct zc_err *e)
{
	char q[ZC_LLM_QUOTE_MAX + 8];
	const char *m = error_text(doc);
	if (!m) {
		char *dump = zc_json_dump(json_object_get(doc, "error"));
		zc_llm_quote(q, dump, strlen(dump));
		zc_free(dump);
	} else {
		zc_llm_quote(q, m, strlen(m));
	}
	return zc_fail(e, ZCOR_EPROVIDER, "the provider reported an error: '%s'", q);
}

static int whole_answer(const json_t *doc, char **content, struct zc_err *e)
{
	if (!json_is_object(doc))
		return zc_fail(e, ZCOR_EPROVIDER, "the provider's answer is not a JSON object");
	if (zc_llm_has_error(doc))
		return zc_llm_provider_reported(doc, e);
	const json_t *choice = json_array_get(json_object_get(doc, "choices"), 0);
	struct zc_buf b = ZC_BUF_INIT;
	if (!zc_llm_add_content(json_object_get(json_object_get(choice, "message"), "content"), &b)) {
		const char *why = zc_json_str(choice, "finish_reason");
		zc_buf_release(&b);
		if (!choice)
			return zc_fail(e, ZCOR_EPROVIDER, "the provider's answer has no choices[0]");
		return zc_fail(e, ZCOR_EPROVIDER,
			       "the provider's answer has no choices[0].message.content%s%s%s",
			       why ? " (finish_reason '" : "", why ? ZC_Q(why, 40) : "", why ? "')" : "");
	}
	*content = zc_buf_detach(&b);
	return ZCOR_OK;
}

struct sse {
	struct zc_buf data; /* the current event's data lines */
	struct zc_buf out;  /* the joined content */
	int chunks, has_content, done;
};

/* One event: "[DONE]", or a chunk whose choices[0].delta.content is added. */
static int sse_event(struct sse *s, struct zc_err *e)
{
	if (s->data.len == 0)
		return ZCOR_OK;
	int rc = ZCOR_OK;
	json_t *doc = NULL;
	char q[ZC_LLM_QUOTE_MAX + 8];
	if (strcmp(s->data.p, "[DONE]") == 0) {
		s->done = 1;
		goto out;
	}
	doc = json_loadb(s->data.p, s->data.len, 0, NULL);
	if (!json_is_object(doc)) {
		zc_llm_quote(q, s->data.p, s->data.len);
		rc = zc_fail(e, ZCOR_EPROVIDER, "a chunk of the provider's event stream is not a JSON object: '%s'",
			     q);
		goto out;
	}
	if (zc_llm_has_error(doc)) {
		rc = zc_llm_provider_reported(doc, e);
		goto out;
	}
	const json_t *choice = json_array_get(json_object_get(doc, "choices"), 0);
	/* deltas normally; a whole message from servers that send one chunk */
	if (zc_llm_add_content(json_object_get(json_object_get(choice, "delta"), "content"), &s->out) ||
	    zc_llm_add_content(json_object_get(json_object_get(choice, "message"), "content"), &s->out))
		s->has_content = 1;
	s->chunks++;
out:
	json_decref(doc);
	zc_buf_reset(&s->data);
	return rc;
}

/* An SSE stream of "data:" events (lines), ending with "data: [DONE]". */
static int stream_answer(const char *p, const char *end, char **content, struct zc_err *e)
{
	struct sse s = {ZC_BUF_INIT, ZC_BUF_INIT, 0, 0, 0};
	int rc = ZCOR_OK;
	while (p < end && !s.done && !rc) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *next = nl ? nl + 1 : end;
		size_t n = (size_t)((nl ? nl : end) - p);
		if (n && p[n - 1] == '\r')
			n--;
		if (n == 0) {
			rc = sse_event(&s, e);
		} else if (n >= 5 && memcmp(p, "data:", 5) == 0) {
			const char *v = p + 5;
			size_t vn = n - 5;
			if (vn && *v == ' ') {
				v++;
				vn--;
			}
			if (s.data.len)
				zc_buf_addc(&s.data, '\n');
			zc_buf_add(&s.data, v, vn);
		} /* comments (':'), event:, id:, retry: carry nothing for us */
		p = next;
	}
	if (!rc && !s.done)
		rc = sse_event(&s, e); /* the last event may lack its blank line */
	if (!rc && !s.has_content)
		rc = zc_fail(e, ZCOR_EPROVIDER,
			     "the provider's event stream carried no content (%d chunks%s)", s.chunks,
			     s.done ? "" : ", no [DONE]");
	if (!rc)
		*content = zc_buf_detach(&s.out);
	zc_buf_release(&s.data);
	zc_buf_release(&s.out);
	return rc;
}

int zc_llm_parse_body(const char *body, size_t len, char **content, struct zc_err *e)
{
	*content = NULL;
	const char *end = body + len, *p = skip_preamble(body, end);
	if (p == end)
		return zc_fail(e, ZCOR_EPROVIDER, "the provider answered with an empty body");
	if (end - p >= 5 && memcmp(p, "data:", 5) == 0)
		return stream_answer(p, end, content, e);
	json_error_t je;
	json_t *doc = json_loadb(p, (size_t)(end - p), 0, &je);
	if (!doc) {
		char q[ZC_LLM_QUOTE_MAX + 8];
		zc_llm_quote(q, p, (size_t)(end - p) < 120 ? (size_t)(end - p) : 120);
		return zc_fail(e, ZCOR_EPROVIDER,
			       "the provider's answer is not valid JSON (%s, line %d column %d): '%s'",
			       ZC_Q(je.text, 100), je.line, je.column, q);
	}
	int rc = whole_answer(doc, content, e);
	json_decref(doc);
	return rc;
}

/* ---- the call --------------------------------------------------------- */

/* The body, taken whole and read once the server ended it. */
struct whole {
	struct zc_buf body;
	char **reply;
};

static void whole_reset(void *ud) { zc_buf_reset(&((struct whole *)ud)->body); }

static int whole_data(void *ud, const char *p, size_t n, struct zc_err *e)
{
	(void)e;
	zc_buf_add(&((struct whole *)ud)->body, p, n);
	return ZCOR_OK;
}

static int whole_finish(void *ud, struct zc_err *e)
{
	struct whole *w = ud;
	return zc_llm_parse_body(zc_buf_str(&w->body), w->body.len, w->reply, e);
}

static int whole_committed(void *ud)
{
	(void)ud;
	return 0;
}

int zc_llm_complete(const struct zc_provider_config *cfg, const char *system, const char *user,
		    char **reply, struct zc_err *e)
{
	*reply = NULL;
	if (!cfg || !cfg->enabled)
		return zc_fail(e, ZCOR_ENOPROVIDER,
			       "no LLM provider configured; add \"provider\" to config.json");
	struct whole w = {ZC_BUF_INIT, reply};
	struct zc_llm_sink sink = {whole_reset, whole_data, whole_finish, whole_committed, &w};
	json_t *req = json_pack("{s:s, s:[{s:s, s:s}, {s:s, s:s}], s:i, s:b}", "model", cfg->model,
				"messages", "role", "system", "content", system, "role", "user",
				"content", user, "temperature", 0, "stream", 0);
	if (!req)
		return zc_fail(e, ZCOR_EINTERNAL, "the prompt is not valid UTF-8");
	char *payload = zc_json_dump(req);
	json_decref(req);
	int rc = zc_llm_post(cfg, payload, 0, &sink, NULL, e);
	zc_free(payload);
	zc_buf_release(&w.body);
	return rc;
}
