/*
 * transport.c — the LLM layer's one HTTP path (see transport.h).
 *
 * LLM layer. A call uses its thread's libcurl easy handle, kept across
 * calls so that the provider's connection is reused (handle_take). Everything is bounded: the whole call (retries and their waits
 * included) ends by timeoutMs, connecting by connectTimeoutMs, the body by
 * maxResponseBytes; a Retry-After that would end past the deadline ends
 * the call at once instead. A 2xx body goes to the caller's sink as it
 * arrives (so a stream can be read while the model writes); any other
 * body is kept for its error text. This file never prints, never logs the
 * API key and knows nothing of what a completion means.
 */
#include "llm/transport.h"

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
#include "base/timeutil.h"
#include "base/utf8.h"
#include "llm/llm.h"

#define BACKOFF_FIRST_MS 500  /* first wait without Retry-After, doubling… */
#define BACKOFF_MAX_MS 8000   /* …up to this */
#define RETRY_AFTER_MAX 128   /* bytes of a Retry-After value kept */

/* ---- small helpers ---------------------------------------------------- */

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc = CURLE_FAILED_INIT;

/* One curl handle per thread, kept between requests (curl_easy_reset
 * clears its options, not its connection cache): the provider's
 * connection — keep-alive, TLS session — is reused across a turn's
 * requests and across turns. curl wants a handle used by one thread at a
 * time: each thread has its own; a request made while the thread's handle
 * is busy (from inside a callback) gets a handle of its own. Freed when
 * its thread ends. */
static pthread_key_t handle_key;
static __thread CURL *thread_handle;
static __thread int thread_handle_busy;

static void handle_free(void *h) { curl_easy_cleanup(h); }

static void curl_init(void)
{
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
	if (curl_init_rc == CURLE_OK && pthread_key_create(&handle_key, handle_free) != 0)
		curl_init_rc = CURLE_FAILED_INIT;
}

static CURL *handle_take(void)
{
	if (thread_handle_busy)
		return curl_easy_init();
	if (!thread_handle) {
		if (!(thread_handle = curl_easy_init()))
			return NULL;
		pthread_setspecific(handle_key, thread_handle);
	}
	thread_handle_busy = 1;
	return thread_handle;
}

static void handle_give_back(CURL *h)
{
	if (!h)
		return;
	if (h == thread_handle) {
		curl_easy_reset(h); /* drops the pointers into this call's frame */
		thread_handle_busy = 0;
	}
	else
		curl_easy_cleanup(h);
}

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

void zc_llm_quote(char *out, const char *src, size_t n)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t i = 0, o = 0;
	while (i < n) {
		size_t k = s[i] ? zc_utf8_seq(src + i, n - i) : 1;
		if (o + (k ? k : 1) > ZC_LLM_QUOTE_MAX) {
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
	const struct zc_llm_sink *sink;
	CURL *h;
	const char *url;
	struct zc_buf body; /* a non-2xx body, for its error text */
	size_t got;         /* bytes of this attempt's body, against the cap */
	int too_big;
	int sink_rc;        /* the sink's error that stopped the transfer */
	int kind;           /* the failure's ZC_HTTP_* (zc_llm_get reads it) */
	struct zc_err *e;
	char retry_after[RETRY_AFTER_MAX];
	char curl_err[CURL_ERROR_SIZE];
};

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
	struct xfer *x = ud;
	size_t len = size * n;
	long status = 0;
	if (len > (size_t)x->cfg->max_response_bytes - x->got) {
		x->too_big = 1;
		return 0; /* curl stops with CURLE_WRITE_ERROR */
	}
	x->got += len;
	curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &status);
	if (status < 200 || status >= 300) {
		zc_buf_add(&x->body, p, len);
		return len;
	}
	int rc = x->sink->data(x->sink->ud, p, len, x->e);
	if (rc) {
		x->sink_rc = rc;
		return 0;
	}
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
	if (!cfg->enabled)
		return ""; /* a GET of zc_llm_get: its caller says what to check */
	if (status == 401 || status == 403)
		return cfg->api_key_env[0] ? "; check the API key in the environment variable named by "
					     "provider.apiKeyEnv"
					   : "; the server wants an API key: name its environment variable "
					     "in provider.apiKeyEnv";
	if (status == 404)
		return "; check provider.baseUrl (it usually ends in /v1) and provider.model";
	return "";
}

static int cancelled(const struct zc_provider_config *cfg)
{
	return cfg->cancel && __atomic_load_n(cfg->cancel, __ATOMIC_ACQUIRE);
}

/*
 * One attempt. Returns ZCOR_OK (the sink finished the body), or an error
 * with the reason in e and *retry_ms >= 0 when another attempt may succeed
 * after that wait (408, 429, 5xx, a failed connection, nothing handed on).
 */
static int attempt(struct xfer *x, int n, long long deadline, long long *retry_ms,
		   long long *answer_ms, struct zc_err *e)
{
	const struct zc_provider_config *cfg = x->cfg;
	CURL *h = x->h;
	long long started = mono_ms(), left = deadline - started;
	*retry_ms = -1;
	x->kind = ZC_HTTP_TIMEOUT;
	if (cancelled(cfg))
		return zc_fail(e, ZCOR_EPROVIDER,
			       "the request to '%s' was abandoned: the run was interrupted (zcor is "
			       "stopping)",
			       x->url);
	if (left <= 0)
		return zc_fail(e, ZCOR_EPROVIDER, "no answer from '%s' within timeoutMs (%ld ms)", x->url,
			       cfg->timeout_ms);
	zc_buf_reset(&x->body);
	x->got = 0;
	x->too_big = 0;
	x->sink_rc = ZCOR_OK;
	x->retry_after[0] = '\0';
	x->curl_err[0] = '\0';
	x->sink->reset(x->sink->ud);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)left);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
			 (long)(cfg->connect_timeout_ms < left ? cfg->connect_timeout_ms : left));
	CURLcode cc = curl_easy_perform(h);
	*answer_ms = mono_ms() - started;
	long long backoff = BACKOFF_MAX_MS;
	if (n < 5)
		backoff = (long long)BACKOFF_FIRST_MS << n;
	if (backoff > BACKOFF_MAX_MS)
		backoff = BACKOFF_MAX_MS;

	if (x->sink_rc)
		return x->sink_rc; /* the sink's own error is in e */
	if (cc == CURLE_ABORTED_BY_CALLBACK)
		return zc_fail(e, ZCOR_EPROVIDER,
			       "the request to '%s' was abandoned: the run was interrupted (zcor is "
			       "stopping)",
			       x->url);
	x->kind = ZC_HTTP_TOO_BIG;
	if (x->too_big || cc == CURLE_FILESIZE_EXCEEDED)
		return zc_fail(e, ZCOR_EPROVIDER,
			       "the response from '%s' is larger than maxResponseBytes (%ld bytes)", x->url,
			       cfg->max_response_bytes);
	int fresh = !x->sink->committed(x->sink->ud);
	x->kind = ZC_HTTP_TIMEOUT;
	if (cc == CURLE_OPERATION_TIMEDOUT && mono_ms() >= deadline - 20)
		return zc_fail(e, ZCOR_EPROVIDER, "no answer from '%s' within timeoutMs (%ld ms)%s", x->url,
			       cfg->timeout_ms, fresh ? "" : " (the answer was cut off while streaming)");
	x->kind = ZC_HTTP_UNREACHABLE;
	if (cc != CURLE_OK) {
		if (retryable_curl(cc) && fresh)
			*retry_ms = backoff;
		return zc_fail(e, ZCOR_EPROVIDER, "cannot reach '%s': %s%s", x->url,
			       ZC_Q(x->curl_err[0] ? x->curl_err : curl_easy_strerror(cc), 300),
			       fresh ? "" : " (the answer was cut off while streaming)");
	}
	long status = 0;
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	if (status >= 200 && status < 300)
		return x->sink->finish(x->sink->ud, e);
	x->kind = ZC_HTTP_STATUS;

	if (status == 408 || status == 429 || status >= 500) {
		long long ra = x->retry_after[0] ? zc_llm_retry_after_ms(x->retry_after, time(NULL)) : -1;
		*retry_ms = ra >= 0 ? ra : backoff;
	}
	char *m = zc_llm_error_message(zc_buf_str(&x->body), x->body.len);
	char q[ZC_LLM_QUOTE_MAX + 8];
	zc_llm_quote(q, m ? m : "", m ? strlen(m) : 0);
	zc_fail(e, ZCOR_EPROVIDER, "'%s' answered HTTP %ld%s%s%s%s", x->url, status, m ? ": '" : "", q,
		m ? "'" : "", status_hint(status, cfg));
	zc_free(m);
	return ZCOR_EPROVIDER;
}

/* ---- the call --------------------------------------------------------- */

/* Content-Type, Accept, no Expect: 100-continue, and the Bearer key if configured. */
static int make_headers(const struct zc_provider_config *cfg, int stream, struct curl_slist **out,
			struct zc_err *e)
{
	struct curl_slist *h = NULL;
	h = curl_slist_append(h, "Content-Type: application/json");
	h = curl_slist_append(h, stream ? "Accept: text/event-stream" : "Accept: application/json");
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

/* curl's progress callback (at least once a second, and as data moves):
 * nonzero abandons the transfer (CURLE_ABORTED_BY_CALLBACK). */
static int on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	(void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
	return cancelled(((struct xfer *)ud)->cfg);
}

static void setup(struct xfer *x, struct curl_slist *headers, const char *payload)
{
	CURL *h = x->h;
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, x->cfg->cancel ? 0L : 1L);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, x->cfg->cancel ? on_progress : NULL);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, x);
	curl_easy_setopt(h, CURLOPT_URL, x->url);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(h, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	if (payload) {
		curl_easy_setopt(h, CURLOPT_POST, 1L);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, payload);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(payload));
	} else {
		curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
	}
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "zcor");
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, x);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, x->curl_err);
	curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)x->cfg->max_response_bytes);
}

int zc_llm_post(const struct zc_provider_config *cfg, const char *payload, int stream,
		const struct zc_llm_sink *sink, struct zc_llm_xfer_info *info, struct zc_err *e)
{
	if (info)
		memset(info, 0, sizeof(*info));
	if (!cfg || !cfg->enabled)
		return zc_fail(e, ZCOR_ENOPROVIDER,
			       "no LLM provider configured; add \"provider\" to config.json");
	pthread_once(&curl_once, curl_init);
	if (curl_init_rc != CURLE_OK)
		return zc_fail(e, ZCOR_EPROVIDER, "libcurl did not initialise: %s",
			       curl_easy_strerror(curl_init_rc));

	int rc = ZCOR_OK, n = 0;
	long long deadline = mono_ms() + cfg->timeout_ms, wait = -1, answer_ms = 0;
	struct curl_slist *headers = NULL;
	struct zc_buf url = ZC_BUF_INIT;
	struct xfer x;
	memset(&x, 0, sizeof(x));
	x.cfg = cfg;
	x.sink = sink;
	x.e = e;

	if ((rc = make_headers(cfg, stream, &headers, e)))
		goto out;
	if (!(x.h = handle_take())) {
		rc = zc_fail(e, ZCOR_EINTERNAL, "libcurl could not create a request");
		goto out;
	}
	zc_buf_addf(&url, "%s/chat/completions", cfg->base_url);
	x.url = url.p;
	setup(&x, headers, payload);

	for (n = 0;; n++) {
		rc = attempt(&x, n, deadline, &wait, &answer_ms, e);
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
	if (info) {
		info->attempts = n + 1;
		info->answer_ms = answer_ms;
	}
out:
	handle_give_back(x.h);
	curl_slist_free_all(headers);
	zc_buf_release(&x.body);
	zc_buf_release(&url);
	return rc;
}

/* ---- a plain GET (zc_llm_get) ----------------------------------------- */

#define GET_CONNECT_MAX_MS 10000 /* connecting gets at most this of the time */
#define GET_RETRIES 1           /* one more attempt after a failed connection, 408, 429, 5xx */

/* The sink of a GET: the whole 2xx body into a buffer. */
static void get_reset(void *ud) { zc_buf_reset(ud); }
static int get_data(void *ud, const char *p, size_t n, struct zc_err *e)
{
	(void)e;
	zc_buf_add(ud, p, n);
	return ZCOR_OK;
}
static int get_finish(void *ud, struct zc_err *e) { (void)ud, (void)e; return ZCOR_OK; }
static int get_committed(void *ud) { (void)ud; return 0; }

int zc_llm_get(const char *url, long timeout_ms, long max_bytes, struct zc_buf *body, int *kind,
	       struct zc_err *e)
{
	*kind = ZC_HTTP_OK;
	zc_buf_reset(body);
	pthread_once(&curl_once, curl_init);
	if (curl_init_rc != CURLE_OK) {
		*kind = ZC_HTTP_UNREACHABLE;
		return zc_fail(e, ZCOR_EUPSTREAM, "libcurl did not initialise: %s",
			       curl_easy_strerror(curl_init_rc));
	}
	/* the attempt's limits, in the provider's shape; enabled 0 marks a
	 * GET for status_hint, api_key_env "" sends no key */
	struct zc_provider_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.timeout_ms = timeout_ms;
	cfg.connect_timeout_ms = timeout_ms < GET_CONNECT_MAX_MS ? timeout_ms : GET_CONNECT_MAX_MS;
	cfg.max_response_bytes = max_bytes;
	const struct zc_llm_sink sink = {get_reset, get_data, get_finish, get_committed, body};
	struct curl_slist *headers = curl_slist_append(NULL, "Accept: application/json");
	int rc = ZCOR_OK, n;
	long long deadline = mono_ms() + timeout_ms, wait = -1, answer_ms = 0;
	struct xfer x;
	memset(&x, 0, sizeof(x));
	x.cfg = &cfg;
	x.sink = &sink;
	x.e = e;
	x.url = url;
	if (!headers || !(x.h = handle_take())) {
		*kind = ZC_HTTP_UNREACHABLE;
		rc = zc_fail(e, ZCOR_EINTERNAL, "libcurl could not create a request");
		goto out;
	}
	setup(&x, headers, NULL);
	for (n = 0;; n++) {
		rc = attempt(&x, n, deadline, &wait, &answer_ms, e);
		if (rc == ZCOR_OK || wait < 0 || n >= GET_RETRIES || wait >= deadline - mono_ms())
			break;
		sleep_ms(wait);
	}
	if (rc) {
		*kind = x.kind;
		/* the attempt's words name the provider's settings: say it plainly */
		if (x.kind == ZC_HTTP_TIMEOUT)
			zc_fail(e, ZCOR_EUPSTREAM, "no answer from '%s' within %ld ms", url, timeout_ms);
		else if (x.kind == ZC_HTTP_TOO_BIG)
			zc_fail(e, ZCOR_EUPSTREAM, "the answer from '%s' is larger than %ld bytes", url,
				max_bytes);
		else
			e->code = ZCOR_EUPSTREAM; /* "cannot reach …", "… answered HTTP n" */
		rc = ZCOR_EUPSTREAM;
		zc_buf_reset(body);
	}
out:
	handle_give_back(x.h);
	curl_slist_free_all(headers);
	zc_buf_release(&x.body);
	return rc;
}

/* The tools' HTTP GET (tools.h) over zc_llm_get. */
static int http_get(void *ud, const char *url, long timeout_ms, long max_bytes, struct zc_buf *body,
		    int *kind, struct zc_err *e)
{
	(void)ud;
	return zc_llm_get(url, timeout_ms, max_bytes, body, kind, e);
}

static const struct zc_http_get the_http_get = {http_get, NULL};

const struct zc_http_get *zc_llm_http_get(void) { return &the_http_get; }
