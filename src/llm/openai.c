/*
 * openai.c — chat completions on an OpenAI-compatible server (see llm.h).
 *
 * LLM layer. One request is one libcurl easy handle, reused across its
 * retries. Everything is bounded: the whole call (retries and their waits
 * included) ends by timeoutMs, connecting by connectTimeoutMs, the body by
 * maxResponseBytes; a Retry-After that would end past the deadline ends
 * the call at once instead. This file never prints, never logs the API key
 * and never touches the store.
 */
#include "llm/llm.h"

#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/json.h"
#include "base/timeutil.h"
#include "base/utf8.h"

#define BACKOFF_FIRST_MS 500  /* first wait without Retry-After, doubling… */
#define BACKOFF_MAX_MS 8000   /* …up to this */
#define QUOTE_MAX 300         /* bytes of the provider's own words in a message */
#define RETRY_AFTER_MAX 128   /* bytes of a Retry-After value kept */

/* ---- small helpers ---------------------------------------------------- */

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc = CURLE_FAILED_INIT;

static void curl_init(void) { curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT); }

static long long mono_ms(void) { return (long long)zc_time_mono_ms(); }

static void sleep_ms(long long ms)
{
	struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/* Appends to the message already in e (bounded like the message itself). */
static void err_append(struct zc_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void err_append(struct zc_err *e, const char *fmt, ...)
{
	size_t n = strlen(e->msg);
	if (n + 1 >= sizeof(e->msg))
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->msg + n, sizeof(e->msg) - n, fmt, ap);
	va_end(ap);
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if none. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	size_t len;
	unsigned char lo = 0x80, hi = 0xbf;
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return 0;
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

/*
 * Copies at most QUOTE_MAX bytes of the provider's text into out (which
 * has QUOTE_MAX + 8 bytes) as valid UTF-8 on one line: control characters
 * become spaces, invalid bytes '?', a cut is marked with "…". Messages go
 * out as JSON, which must be valid UTF-8.
 */
static void quote(char *out, const char *src, size_t n)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t i = 0, o = 0;
	while (i < n) {
		size_t k = utf8_seq(s + i, n - i);
		if (o + (k ? k : 1) > QUOTE_MAX) {
			memcpy(out + o, "\xe2\x80\xa6", 3);
			o += 3;
			break;
		}
		if (k == 0) {
			out[o++] = '?';
			i++;
		} else if (k == 1) {
			out[o++] = (s[i] < 0x20 || s[i] == 0x7f) ? ' ' : (char)s[i];
			i++;
		} else {
			memcpy(out + o, s + i, k);
			o += k;
			i += k;
		}
	}
	out[o] = '\0';
}

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
static int has_error(const json_t *doc)
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
static int add_content(const json_t *c, struct zc_buf *out)
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

static int provider_reported(const json_t *doc, struct zc_err *e)
{
	char q[QUOTE_MAX + 8];
	const char *m = error_text(doc);
	if (!m) {
		char *dump = zc_json_dump(json_object_get(doc, "error"));
		quote(q, dump, strlen(dump));
		zc_free(dump);
	} else {
		quote(q, m, strlen(m));
	}
	return zc_fail(e, ZCOR_EPROVIDER, "the provider reported an error: '%s'", q);
}

static int whole_answer(const json_t *doc, char **content, struct zc_err *e)
{
	if (!json_is_object(doc))
		return zc_fail(e, ZCOR_EPROVIDER, "the provider's answer is not a JSON object");
	if (has_error(doc))
		return provider_reported(doc, e);
	const json_t *choice = json_array_get(json_object_get(doc, "choices"), 0);
	struct zc_buf b = ZC_BUF_INIT;
	if (!add_content(json_object_get(json_object_get(choice, "message"), "content"), &b)) {
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
	char q[QUOTE_MAX + 8];
	if (strcmp(s->data.p, "[DONE]") == 0) {
		s->done = 1;
		goto out;
	}
	doc = json_loadb(s->data.p, s->data.len, 0, NULL);
	if (!json_is_object(doc)) {
		quote(q, s->data.p, s->data.len);
		rc = zc_fail(e, ZCOR_EPROVIDER, "a chunk of the provider's event stream is not a JSON object: '%s'",
			     q);
		goto out;
	}
	if (has_error(doc)) {
		rc = provider_reported(doc, e);
		goto out;
	}
	const json_t *choice = json_array_get(json_object_get(doc, "choices"), 0);
	/* deltas normally; a whole message from servers that send one chunk */
	if (add_content(json_object_get(json_object_get(choice, "delta"), "content"), &s->out) ||
	    add_content(json_object_get(json_object_get(choice, "message"), "content"), &s->out))
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
		char q[QUOTE_MAX + 8];
		quote(q, p, (size_t)(end - p) < 120 ? (size_t)(end - p) : 120);
		return zc_fail(e, ZCOR_EPROVIDER,
			       "the provider's answer is not valid JSON (%s, line %d column %d): '%s'",
			       ZC_Q(je.text, 100), je.line, je.column, q);
	}
	int rc = whole_answer(doc, content, e);
	json_decref(doc);
	return rc;
}

/* ---- Retry-After ------------------------------------------------------- */

long long zc_llm_retry_after_ms(const char *value, time_t now)
{
	const char *p = value, *end;
	while (*p == ' ' || *p == '\t')
		p++;
	end = p + strlen(p);
	while (end > p && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r' || end[-1] == '\n'))
		end--;
	if (end == p)
		return -1;
	int digits = 1;
	for (const char *c = p; c < end && digits; c++)
		digits = *c >= '0' && *c <= '9';
	if (digits) {
		long long secs = 0;
		for (const char *c = p; c < end && secs < 100000000; c++)
			secs = secs * 10 + (*c - '0'); /* anything this large is "too long" anyway */
		return secs * 1000;
	}
	char date[RETRY_AFTER_MAX];
	size_t n = (size_t)(end - p);
	/* every HTTP-date form starts with a day name; curl_getdate alone
	 * would also take "-5" or "tomorrow"-like fragments */
	if (n >= sizeof(date) || !((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z')))
		return -1;
	memcpy(date, p, n);
	date[n] = '\0';
	time_t t = curl_getdate(date, NULL);
	if (t == (time_t)-1)
		return -1;
	return t <= now ? 0 : (long long)(t - now) * 1000;
}

/* ---- one request ------------------------------------------------------- */

struct xfer {
	const struct zc_provider_config *cfg;
	const char *url;
	struct zc_buf body;
	int too_big;
	char retry_after[RETRY_AFTER_MAX];
	char curl_err[CURL_ERROR_SIZE];
};

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
	struct xfer *x = ud;
	size_t len = size * n;
	if (len > (size_t)x->cfg->max_response_bytes - x->body.len) {
		x->too_big = 1;
		return 0; /* curl stops with CURLE_WRITE_ERROR */
	}
	zc_buf_add(&x->body, p, len);
	return len;
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
	struct xfer *x = ud;
	size_t len = size * n;
	if (len >= 5 && memcmp(p, "HTTP/", 5) == 0) {
		x->retry_after[0] = '\0'; /* a new response (after 100 Continue…) */
	} else if (len > 12 && strncasecmp(p, "retry-after:", 12) == 0) {
		size_t v = len - 12;
		if (v >= sizeof(x->retry_after))
			v = sizeof(x->retry_after) - 1;
		memcpy(x->retry_after, p + 12, v);
		x->retry_after[v] = '\0';
	}
	return len;
}

static int retryable_curl(CURLcode cc)
{
	switch (cc) {
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_CONNECT:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
		return 1;
	default:
		return 0;
	}
}

/* A hint after "answered HTTP n" for statuses with a usual cause. */
static const char *status_hint(long status, const struct zc_provider_config *cfg)
{
	if (status == 401 || status == 403)
		return cfg->api_key_env[0] ? "; check the API key in the environment variable named by "
					     "provider.apiKeyEnv"
					   : "; the server wants an API key: name its environment variable "
					     "in provider.apiKeyEnv";
	if (status == 404)
		return "; check provider.baseUrl (it usually ends in /v1) and provider.model";
	return "";
}

/*
 * One attempt. Returns ZCOR_OK with *reply set, or ZCOR_EPROVIDER with the
 * reason in e and *retry_ms >= 0 when another attempt may succeed after
 * that wait (408, 429, 5xx, a failed connection).
 */
static int attempt(CURL *h, struct xfer *x, int n, long long deadline, char **reply,
		   long long *retry_ms, struct zc_err *e)
{
	const struct zc_provider_config *cfg = x->cfg;
	long long left = deadline - mono_ms();
	*retry_ms = -1;
	if (left <= 0)
		return zc_fail(e, ZCOR_EPROVIDER, "no answer from '%s' within timeoutMs (%ld ms)", x->url,
			       cfg->timeout_ms);
	zc_buf_reset(&x->body);
	x->too_big = 0;
	x->retry_after[0] = '\0';
	x->curl_err[0] = '\0';
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)left);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
			 (long)(cfg->connect_timeout_ms < left ? cfg->connect_timeout_ms : left));
	CURLcode cc = curl_easy_perform(h);
	long long backoff = BACKOFF_MAX_MS;
	if (n < 5)
		backoff = (long long)BACKOFF_FIRST_MS << n;
	if (backoff > BACKOFF_MAX_MS)
		backoff = BACKOFF_MAX_MS;

	if (x->too_big || cc == CURLE_FILESIZE_EXCEEDED)
		return zc_fail(e, ZCOR_EPROVIDER,
			       "the response from '%s' is larger than maxResponseBytes (%ld bytes)", x->url,
			       cfg->max_response_bytes);
	if (cc == CURLE_OPERATION_TIMEDOUT && mono_ms() >= deadline - 20)
		return zc_fail(e, ZCOR_EPROVIDER, "no answer from '%s' within timeoutMs (%ld ms)", x->url,
			       cfg->timeout_ms);
	if (cc != CURLE_OK) {
		if (retryable_curl(cc))
			*retry_ms = backoff;
		return zc_fail(e, ZCOR_EPROVIDER, "cannot reach '%s': %s", x->url,
			       ZC_Q(x->curl_err[0] ? x->curl_err : curl_easy_strerror(cc), 300));
	}
	long status = 0;
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	if (status >= 200 && status < 300)
		return zc_llm_parse_body(zc_buf_str(&x->body), x->body.len, reply, e);

	if (status == 408 || status == 429 || status >= 500) {
		long long ra = x->retry_after[0] ? zc_llm_retry_after_ms(x->retry_after, time(NULL)) : -1;
		*retry_ms = ra >= 0 ? ra : backoff;
	}
	char *m = zc_llm_error_message(zc_buf_str(&x->body), x->body.len);
	char q[QUOTE_MAX + 8];
	quote(q, m ? m : "", m ? strlen(m) : 0);
	zc_fail(e, ZCOR_EPROVIDER, "'%s' answered HTTP %ld%s%s%s%s", x->url, status, m ? ": '" : "", q,
		m ? "'" : "", status_hint(status, cfg));
	zc_free(m);
	return ZCOR_EPROVIDER;
}

/* ---- the call --------------------------------------------------------- */

/* Content-Type, no Expect: 100-continue, and the Bearer key if configured. */
static int make_headers(const struct zc_provider_config *cfg, struct curl_slist **out,
			struct zc_err *e)
{
	struct curl_slist *h = NULL;
	h = curl_slist_append(h, "Content-Type: application/json");
	h = curl_slist_append(h, "Accept: application/json");
	h = curl_slist_append(h, "Expect:");
	if (h && cfg->api_key_env[0]) {
		const char *key = getenv(cfg->api_key_env);
		int bad = 0;
		for (const char *c = key; c && *c && !bad; c++)
			bad = (unsigned char)*c < 0x20 || *c == 0x7f;
		if (!key || !*key || bad) {
			curl_slist_free_all(h);
			return zc_fail(e, ZCOR_EPROVIDER,
				       "the environment variable '%s' named by provider.apiKeyEnv %s; set it "
				       "to the API key before starting zcor, or remove provider.apiKeyEnv "
				       "for a server that needs no key",
				       cfg->api_key_env,
				       !key ? "is not set" : !*key ? "is empty" : "contains control characters");
		}
		struct zc_buf b = ZC_BUF_INIT;
		zc_buf_addf(&b, "Authorization: Bearer %s", key);
		struct curl_slist *with = curl_slist_append(h, b.p);
		memset(b.p, 0, b.len); /* the key lives on only inside curl's list */
		zc_buf_release(&b);
		if (!with)
			curl_slist_free_all(h);
		h = with;
	}
	if (!h)
		return zc_fail(e, ZCOR_EINTERNAL, "libcurl could not allocate the request headers");
	*out = h;
	return ZCOR_OK;
}

static void setup(CURL *h, struct xfer *x, struct curl_slist *headers, const char *payload)
{
	curl_easy_setopt(h, CURLOPT_URL, x->url);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(h, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_POST, 1L);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, payload);
	curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(payload));
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "zcor");
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, x);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, x->curl_err);
	curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)x->cfg->max_response_bytes);
}

int zc_llm_complete(const struct zc_provider_config *cfg, const char *system, const char *user,
		    char **reply, struct zc_err *e)
{
	*reply = NULL;
	if (!cfg || !cfg->enabled)
		return zc_fail(e, ZCOR_ENOPROVIDER,
			       "no LLM provider configured; add \"provider\" to config.json");
	pthread_once(&curl_once, curl_init);
	if (curl_init_rc != CURLE_OK)
		return zc_fail(e, ZCOR_EPROVIDER, "libcurl did not initialise: %s",
			       curl_easy_strerror(curl_init_rc));

	int rc = ZCOR_OK, n;
	long long deadline = mono_ms() + cfg->timeout_ms, wait = -1;
	struct curl_slist *headers = NULL;
	char *payload = NULL;
	CURL *h = NULL;
	struct zc_buf url = ZC_BUF_INIT;
	struct xfer x;
	memset(&x, 0, sizeof(x));
	x.cfg = cfg;

	json_t *req = json_pack("{s:s, s:[{s:s, s:s}, {s:s, s:s}], s:i, s:b}", "model", cfg->model,
				"messages", "role", "system", "content", system, "role", "user",
				"content", user, "temperature", 0, "stream", 0);
	if (!req) {
		rc = zc_fail(e, ZCOR_EINTERNAL, "the prompt is not valid UTF-8");
		goto out;
	}
	payload = zc_json_dump(req);
	json_decref(req);
	if ((rc = make_headers(cfg, &headers, e)))
		goto out;
	if (!(h = curl_easy_init())) {
		rc = zc_fail(e, ZCOR_EINTERNAL, "libcurl could not create a request");
		goto out;
	}
	zc_buf_addf(&url, "%s/chat/completions", cfg->base_url);
	x.url = url.p;
	setup(h, &x, headers, payload);

	for (n = 0;; n++) {
		rc = attempt(h, &x, n, deadline, reply, &wait, e);
		if (rc == ZCOR_OK || wait < 0)
			break;
		if (n >= cfg->max_retries) {
			err_append(e, " (gave up after %d attempt%s, maxRetries %d)", n + 1, n ? "s" : "",
				   cfg->max_retries);
			break;
		}
		if (wait >= deadline - mono_ms()) {
			err_append(e, " (gave up after %d attempt%s: waiting %lld ms more would pass timeoutMs %ld)",
				   n + 1, n ? "s" : "", wait, cfg->timeout_ms);
			break;
		}
		sleep_ms(wait);
	}
out:
	curl_easy_cleanup(h);
	curl_slist_free_all(headers);
	zc_free(payload);
	zc_buf_release(&x.body);
	zc_buf_release(&url);
	return rc;
}
