/*
 * http.c — `zcor serve`: HTTP on libmicrohttpd, a thread per connection. The
 * REST API under /api/v1/, MCP Streamable HTTP at /mcp, the web page at /.
 *
 * This file is MHD's setup, the form checks, auth and dispatch; the
 * connections (deadlines, eviction, lingering close) are conn.c, the
 * handle pool pool.c, the page's files assets.c, the REST routes rest.c,
 * the chat stream chat.c (what they share: internal.h).
 *
 * Server layer: speaks only include/zcor.h (a request holds one zcor
 * handle from a pool, used by one thread at a time), mcp.h, and of base/
 * only the UTF-8 helpers that quote the request into messages, the clock,
 * the file helpers and the allocation wrapper.
 *
 * Every request passes, in order: the checks of its form (each header
 * the server reads at most once and valid UTF-8, the path and query
 * valid UTF-8 → 400), the Host allow-list and the Origin check (DNS rebinding → 403), the token (Authorization:
 * Bearer; the page's cookie only for GET of the page and its assets,
 * never for the API) — all as soon as the headers are in, before any
 * body is read — then the body cap (→ 413). A slow call (an LLM
 * request) occupies one worker; the others go on.
 *
 * Connections are bounded: 256 at once, 32 from one client address, and
 * a connection must deliver a request's line and headers within
 * --header-timeout seconds of connecting (or of its previous answer) and
 * its body within --body-timeout seconds more; a watchdog thread shuts
 * down the ones past their deadline (slow-loris senders hold no slot).
 */
#include "server/http.h"

#include <errno.h>
#include <jansson.h>
#include <microhttpd.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "base/alloc.h"
#include "base/fs.h"
#include "base/timeutil.h"
#include "base/utf8.h"
#include "server/internal.h"
#include "server/schedule.h"
#include "world/qq.h"

#define JSON_DEPTH_MAX 64
#define IDLE_TIMEOUT_S 60 /* MHD's: no byte moved either way for this long */

/* ---- answers and small helpers ------------------------------------------ */

int zc_http_status_of(const char *code)
{
	static const struct {
		const char *code;
		int status;
	} map[] = {
		{"invalid_argument", 400}, {"not_found", 404},     {"conflict", 409},
		{"forbidden", 403},        {"read_only", 503},     {"disk_full", 507},
		{"busy", 503},             {"no_provider", 503},   {"provider_error", 502},
		{"upstream_error", 502},
		{"io_error", 500},         {"maybe_applied", 500}, {"internal", 500},
	};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (code && strcmp(code, map[i].code) == 0)
			return map[i].status;
	return 500;
}

static enum MHD_Result queue_response(struct MHD_Connection *c, struct request *r, int status,
				      struct MHD_Response *resp, const char *type, const char *hname,
				      const char *hval);

enum MHD_Result zc_http_send_text(struct MHD_Connection *c, struct request *r, int status,
				  const char *type, const char *body, size_t len, const char *hname,
				  const char *hval)
{
	struct MHD_Response *resp =
		MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
	return queue_response(c, r, status, resp, type, hname, hval);
}

enum MHD_Result zc_http_send_fd(struct MHD_Connection *c, struct request *r, int status,
				const char *type, int fd, uint64_t size, const char *hname,
				const char *hval)
{
	struct MHD_Response *resp = MHD_create_response_from_fd(size, fd);
	if (!resp)
		close(fd);
	return queue_response(c, r, status, resp, type, hname, hval);
}

/* The headers every answer carries (and one more, hname), queued. */
static enum MHD_Result queue_response(struct MHD_Connection *c, struct request *r, int status,
				      struct MHD_Response *resp, const char *type, const char *hname,
				      const char *hval)
{
	if (!resp)
		return MHD_NO; /* out of memory: MHD closes the connection */
	MHD_add_response_header(resp, "Content-Type", type);
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	if (hname)
		MHD_add_response_header(resp, hname, hval);
	r->status = status;
	enum MHD_Result ret = MHD_queue_response(c, (unsigned)status, resp);
	MHD_destroy_response(resp);
	return ret;
}

enum MHD_Result zc_http_send_json(struct MHD_Connection *c, struct request *r, int status,
				  const char *json)
{
	if (!json)
		return zc_http_send_error(c, r, 500, "internal", "the answer could not be built (out of memory)");
	return zc_http_send_text(c, r, status, "application/json; charset=utf-8", json, strlen(json), NULL, NULL);
}

/* An error answer. msg may quote the request (a path, a header, a
 * library's message about the body): it goes out valid UTF-8 and at most
 * ERROR_CHARS characters, so the JSON is always built — jansson refuses
 * invalid UTF-8, and a NULL from json_pack once crashed the server here
 * (issue 12, defect 2). */
#define ERROR_CHARS 1024
enum MHD_Result zc_http_send_error_h(struct MHD_Connection *c, struct request *r, int status,
				     const char *code, const char *msg, const char *hname,
				     const char *hval)
{
	static const char fallback[] = "{\"error\":{\"code\":\"internal\",\"message\":\"out of memory\"}}";
	char clean[4 * ERROR_CHARS + 8];
	zc_utf8_quote(clean, sizeof(clean), msg, ERROR_CHARS);
	json_t *j = json_pack("{s:{s:s, s:s}}", "error", "code", code ? code : "internal", "message",
			      clean);
	char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	const char *body = s ? s : fallback;
	if (status == 401) {
		hname = "WWW-Authenticate";
		hval = "Bearer";
	}
	enum MHD_Result ret = zc_http_send_text(c, r, status, "application/json; charset=utf-8", body,
						strlen(body), hname, hval);
	zc_free(s);
	return ret;
}

enum MHD_Result zc_http_send_error(struct MHD_Connection *c, struct request *r, int status,
				   const char *code, const char *msg)
{
	return zc_http_send_error_h(c, r, status, code, msg, NULL, NULL);
}

/* A zcor result: {"error":…} picks its status, anything else is 200. */
enum MHD_Result zc_http_send_result(struct MHD_Connection *c, struct request *r, zcor *z, int rc,
				    char *json, int ok_status)
{
	enum MHD_Result ret =
		rc ? zc_http_send_json(c, r, zc_http_status_of(zcor_code_name(rc)), zcor_errjson(z))
		   : zc_http_send_json(c, r, ok_status, json);
	zcor_free(json);
	return ret;
}

static int random_hex(char *out, size_t nbytes)
{
	unsigned char buf[64];
	if (nbytes > sizeof(buf) || getrandom(buf, nbytes, 0) != (ssize_t)nbytes)
		return -1;
	for (size_t i = 0; i < nbytes; i++)
		snprintf(out + 2 * i, 3, "%02x", buf[i]);
	return 0;
}

/* Constant-time comparison of the token. */
int zc_http_token_ok(const struct server *s, const char *given)
{
	size_t n = strlen(s->token);
	if (!given || strlen(given) != n)
		return 0;
	unsigned char d = 0;
	for (size_t i = 0; i < n; i++)
		d |= (unsigned char)(given[i] ^ s->token[i]);
	return d == 0;
}

const char *zc_http_bearer(struct MHD_Connection *c)
{
	const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	return h && strncasecmp(h, "Bearer ", 7) == 0 ? h + 7 : NULL;
}

const char *zc_http_cookie_token(struct MHD_Connection *c)
{
	return MHD_lookup_connection_value(c, MHD_COOKIE_KIND, "zcor_token");
}

/* ---- DNS rebinding: Host and Origin -------------------------------- */

static int host_allowed(const struct server *s, const char *host)
{
	if (!host)
		return 0;
	char want[128];
	const char *names[] = {"127.0.0.1", "localhost", "[::1]", s->listen_host};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(want, sizeof(want), "%s:%d", names[i], s->port);
		if (strcasecmp(host, want) == 0)
			return 1;
		if (s->port == 80 && strcasecmp(host, names[i]) == 0)
			return 1;
	}
	return 0;
}

static int origin_allowed(const struct server *s, const char *origin)
{
	if (!origin)
		return 1; /* not a browser, or a same-origin GET */
	const char *p = strncmp(origin, "http://", 7) == 0 ? origin + 7 : NULL;
	return p && host_allowed(s, p);
}

/* ---- MCP sessions ---------------------------------------------------- */

static struct session *session_find(struct server *s, const char *id)
{
	for (int i = 0; id && i < SESSIONS_MAX; i++)
		if (s->sessions[i].in_use && strcmp(s->sessions[i].id, id) == 0)
			return &s->sessions[i];
	return NULL;
}

static struct session *session_new(struct server *s, const char *conversation)
{
	struct session *slot = NULL;
	for (int i = 0; i < SESSIONS_MAX; i++) {
		struct session *x = &s->sessions[i];
		if (!x->in_use) {
			slot = x;
			break;
		}
		if (!slot || x->used < slot->used)
			slot = x; /* all taken: reuse the least recently used */
	}
	memset(slot, 0, sizeof(*slot));
	if (random_hex(slot->id, 16))
		return NULL;
	slot->in_use = 1;
	slot->used = time(NULL);
	zc_mcp_session_init(&slot->mcp, conversation);
	return slot;
}

static enum MHD_Result handle_mcp(struct server *s, struct MHD_Connection *c, struct request *r,
				  const char *method, const char *conversation)
{
	const char *sid = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Mcp-Session-Id");
	if (strcmp(method, "DELETE") == 0) {
		pthread_mutex_lock(&s->lock);
		struct session *x = session_find(s, sid);
		if (x)
			x->in_use = 0;
		pthread_mutex_unlock(&s->lock);
		return x ? zc_http_send_text(c, r, 204, "text/plain", "", 0, NULL, NULL)
			 : zc_http_send_error(c, r, 404, "not_found", "no MCP session with that Mcp-Session-Id");
	}
	if (strcmp(method, "POST") != 0)
		return zc_http_send_text(c, r, 405, "text/plain", "", 0, "Allow", "POST, DELETE");
	zcor *z = zc_pool_take(s, r);
	if (!z)
		return zc_http_send_error(c, r, 500, "internal", "cannot open the memory directory");
	json_t *msg = json_loadb(r->body ? r->body : "", r->len, 0, NULL);
	const char *m = json_string_value(json_object_get(msg, "method"));
	int is_init = m && strcmp(m, "initialize") == 0;
	json_decref(msg);

	struct zc_mcp_session local;
	struct session *x = NULL;
	pthread_mutex_lock(&s->lock);
	if (is_init) {
		x = session_new(s, conversation);
	} else if (sid) {
		x = session_find(s, sid);
		if (!x) {
			pthread_mutex_unlock(&s->lock);
			return zc_http_send_error(c, r, 404, "not_found",
					  "no MCP session with that Mcp-Session-Id; initialize again");
		}
	}
	if (x) {
		x->used = time(NULL);
		local = x->mcp;
	} else {
		/* no session header: a stateless request (a one-off call) */
		zc_mcp_session_init(&local, conversation);
		local.initialized = 1;
	}
	pthread_mutex_unlock(&s->lock);

	char *resp = NULL;
	zc_mcp_handle(&local, z, r->body ? r->body : "", r->len, &resp);

	pthread_mutex_lock(&s->lock);
	if (x && x->in_use)
		x->mcp = local;
	char idbuf[40] = "";
	if (x)
		snprintf(idbuf, sizeof(idbuf), "%s", x->id);
	pthread_mutex_unlock(&s->lock);

	if (!resp) /* a notification: accepted, nothing to say */
		return zc_http_send_text(c, r, 202, "text/plain", "", 0, NULL, NULL);
	enum MHD_Result ret = zc_http_send_text(c, r, 200, "application/json", resp, strlen(resp),
					is_init && idbuf[0] ? "Mcp-Session-Id" : NULL, idbuf);
	zcor_free(resp);
	return ret;
}

/* ---- dispatch --------------------------------------------------------- */

/* Nesting depth past JSON_DEPTH_MAX (counted on the text, before any
 * parser sees it; jansson alone would accept 2048 levels). */
static int too_deep(const char *p, size_t len)
{
	int depth = 0, in_str = 0;
	for (size_t i = 0; i < len; i++) {
		char ch = p[i];
		if (in_str) {
			if (ch == '\\')
				i++;
			else if (ch == '"')
				in_str = 0;
		} else if (ch == '"') {
			in_str = 1;
		} else if (ch == '{' || ch == '[') {
			if (++depth > JSON_DEPTH_MAX)
				return 1;
		} else if (ch == '}' || ch == ']') {
			depth--;
		}
	}
	return 0;
}

static int is_page(const char *url) { return !strcmp(url, "/") || !strcmp(url, "/index.html"); }

/* GET of the page or one of its assets: they check the token their own
 * way (zc_assets_serve). */
static int is_web_get(const char *url, const char *method)
{
	return (is_page(url) || !strncmp(url, "/assets/", 8)) && !strcmp(method, "GET");
}

/* What needs only the headers — the Host allow-list, the Origin, the
 * token, the conversation binding — checked as soon as they are in,
 * before any body is read: a caller without the token never has a body
 * buffered, nor a connection held while it trickles one in. Returns
 * MHD_YES to go on (r->status still 0), or the result of the refusal. */
static enum MHD_Result admit(struct server *s, struct MHD_Connection *c, struct request *r,
			     const char *url, const char *method)
{
	const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");
	const char *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
	if (!host_allowed(s, host))
		return zc_http_send_error(c, r, 403, "forbidden",
				  "the Host header is not this server's address (DNS rebinding protection)");
	if (!origin_allowed(s, origin))
		return zc_http_send_error(c, r, 403, "forbidden", "requests from another origin are refused");
	if (is_web_get(url, method))
		return MHD_YES;
	/* NapCat's reverse WebSocket: its own token, not serve's (upgrade.c) */
	if (zc_upgrade_is_reverse(s, url))
		return zc_upgrade_handle(s, c, r, method);
	if (!zc_http_token_ok(s, zc_http_bearer(c)))
		return zc_http_send_error(c, r, 401, "unauthorized",
				  "missing or wrong token: send Authorization: Bearer <token> (zcor serve "
				  "printed it; it is in serve.token)");
	/* the host binds the call to a conversation (never the model) */
	const char *conv = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Zcor-Conversation");
	if (conv && zcor_check_conversation(NULL, conv))
		return zc_http_send_error(c, r, 400, "invalid_argument", zcor_errmsg(NULL));
	/* a body announced over the cap is refused now, not after it came */
	const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
	if (cl && *cl) {
		char *end;
		errno = 0;
		unsigned long long n = strtoull(cl, &end, 10);
		if (errno || *end || n > BODY_MAX)
			return zc_http_send_error(c, r, 413, "invalid_argument", "the request body is larger than 1 MiB");
	}
	return MHD_YES;
}

/* The whole request is in and admitted. */
static enum MHD_Result dispatch(struct server *s, struct MHD_Connection *c, struct request *r,
				const char *url, const char *method)
{
	if (r->too_big)
		return zc_http_send_error(c, r, 413, "invalid_argument", "the request body is larger than 1 MiB");
	if (is_web_get(url, method))
		return zc_assets_serve(s, c, r, url, is_page(url));
	const char *conv = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Zcor-Conversation");
	if (r->len && r->body && too_deep(r->body, r->len))
		return zc_http_send_error(c, r, 400, "invalid_argument",
				  "the JSON body is nested deeper than 64 levels");
	if (!strcmp(url, "/mcp"))
		return handle_mcp(s, c, r, method, conv);
	if (!strncmp(url, "/api/v1/", 8))
		return zc_rest_handle(s, c, r, url, method, conv);
	return zc_http_send_error(c, r, 404, "not_found", "no such path");
}

/* ---- the form of a request (before any rule) ---------------------------- */

/* Headers that may come once: a second Host, Origin, Authorization or
 * X-Zcor-Conversation would let the checks read one value and something
 * else another; a second Content-Length or Transfer-Encoding frames the
 * body two ways. Those whose value the server reads must be valid UTF-8
 * (a value quoted into a message goes out as JSON). */
static const struct {
	const char *name;
	int read; /* the server reads its value */
} single_headers[] = {
	{"Host", 1},           {"Origin", 1},         {"Authorization", 1},
	{"Cookie", 0},         {"X-Zcor-Conversation", 1}, {"Mcp-Session-Id", 1},
	{"Content-Type", 0},   {"Content-Length", 0}, {"Transfer-Encoding", 0},
};
#define NSINGLE (sizeof(single_headers) / sizeof(single_headers[0]))

struct form {
	int count[NSINGLE];
	char why[300];
};

/* A header name is a token (RFC 9110 5.1, 5.6.2). MHD keeps "Host :" as
 * a header named "Host " that a proxy in front might read as Host. */
static int token_name(const char *k, size_t n)
{
	if (!k || n == 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)k[i];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		      (ch && strchr("!#$%&'*+-.^_`|~", ch))))
			return 0;
	}
	return 1;
}

static enum MHD_Result form_header(void *cls, enum MHD_ValueKind kind, const char *key,
				   size_t key_size, const char *value, size_t value_size)
{
	struct form *f = cls;
	if (!token_name(key, key_size)) {
		snprintf(f->why, sizeof(f->why),
			 "the header name '%s' is not a token (letters, digits and !#$%%&'*+-.^_`|~, "
			 "no white space before the colon)",
			 ZC_Q(key, 40));
		return MHD_NO;
	}
	for (size_t i = 0; i < NSINGLE; i++) {
		if (strcasecmp(key, single_headers[i].name) != 0)
			continue;
		if (++f->count[i] > 1) {
			snprintf(f->why, sizeof(f->why),
				 "the request has more than one %s header; send it once", single_headers[i].name);
			return MHD_NO;
		}
		/* (a NUL byte cannot be seen here: libmicrohttpd 0.9.75
		 * ends the value at it and drops the rest of the line) */
		if (single_headers[i].read && value && !zc_utf8_valid(value, value_size)) {
			snprintf(f->why, sizeof(f->why), "the %s header is not valid UTF-8 text",
				 single_headers[i].name);
			return MHD_NO;
		}
	}
	return MHD_YES;
}

static enum MHD_Result form_arg(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
				const char *value, size_t value_size)
{
	struct form *f = cls;
	if (!key || !zc_utf8_valid(key, key_size) || (value && !zc_utf8_valid(value, value_size))) {
		snprintf(f->why, sizeof(f->why),
			 "the query parameter '%s' is not valid UTF-8; percent-encode UTF-8 text",
			 ZC_Q(key, 40));
		return MHD_NO;
	}
	return MHD_YES;
}

/* NULL when the request is well-formed, else what is wrong with it. */
static const char *malformed(struct MHD_Connection *c, const struct request *r, const char *url,
			     struct form *f)
{
	memset(f, 0, sizeof(*f));
	MHD_get_connection_values_n(c, MHD_HEADER_KIND, form_header, f);
	if (f->why[0])
		return f->why;
	/* a body framed two ways is read one way here and another way by
	 * whatever stands in front (request smuggling): refused */
	if (MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length") &&
	    MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Transfer-Encoding"))
		return "the request has both Content-Length and Transfer-Encoding; send one";
	/* MHD decodes %00 into a NUL that ends the path early */
	if (r->nul)
		return "the request target holds %00 (a NUL byte), which no path or parameter may";
	if (!zc_utf8_valid(url, strlen(url)))
		return "the request path is not valid UTF-8; percent-encode UTF-8 text";
	MHD_get_connection_values_n(c, MHD_GET_ARGUMENT_KIND, form_arg, f);
	return f->why[0] ? f->why : NULL;
}

/* ---- requests --------------------------------------------------------------- */

/* A copy of src for the log's JSON: up to the query (it may carry the
 * token), control characters, quotes and backslashes as '_', and valid
 * UTF-8 ('?' for what is not). */
static void log_copy(char *dst, size_t n, const char *src)
{
	size_t i = 0;
	for (; src && src[i] && src[i] != '?' && i + 1 < n; i++) {
		unsigned char ch = (unsigned char)src[i];
		dst[i] = ch < 0x20 || ch == 0x7f || ch == '"' || ch == '\\' ? '_' : (char)ch;
	}
	dst[i] = '\0';
	zc_utf8_scrub(dst);
}

static struct request *request_new(struct server *s, const char *uri)
{
	struct request *r = zc_calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	clock_gettime(CLOCK_MONOTONIC, &r->start);
	log_copy(r->path, sizeof(r->path), uri);
	/* (MHD caps the request line by its connection memory, 64 KiB) */
	r->target = uri ? zc_strndup(uri, strcspn(uri, "?")) : NULL;
	if (uri && !r->target) {
		zc_free(r);
		return NULL;
	}
	for (const char *p = uri; p && (p = strchr(p, '%')); p++)
		if (p[1] == '0' && p[2] == '0')
			r->nul = 1;
	return r;
}

/* MHD calls this with the raw request target (before it decodes %XX) as
 * soon as the request line is in; what it returns is the request's
 * con_cls. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
	return request_new(cls, uri);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	struct server *s = cls;
	struct request *r = *con_cls;
	if (!r && !(r = *con_cls = request_new(s, url)))
		return MHD_NO;
	if (!r->started) {
		/* the line and the headers are in */
		r->started = 1;
		pthread_mutex_lock(&s->lock);
		s->in_flight++;
		pthread_mutex_unlock(&s->lock);
		log_copy(r->method, sizeof(r->method), method);
		zc_conn_phase(s, c, CONN_BODY);
		/* a refusal is answered now: the body (if any) is never read,
		 * and MHD closes the connection after the answer */
		struct form f;
		const char *why = malformed(c, r, url, &f);
		enum MHD_Result ret = why ? zc_http_send_error(c, r, 400, "invalid_argument", why)
					  : admit(s, c, r, url, method);
		if (r->status && zc_conn_announces_body(c)) {
			struct conn *x = zc_conn_of(c);
			if (x)
				x->linger = 1;
		}
		return ret;
	}
	if (*upload_size) {
		if (!r->too_big) {
			if (r->len + *upload_size > BODY_MAX) {
				r->too_big = 1;
				zc_free(r->body);
				r->body = NULL;
				r->len = 0;
			} else {
				if (r->len + *upload_size + 1 > r->cap) {
					size_t cap = (r->len + *upload_size + 1) * 2;
					char *p = zc_realloc(r->body, cap);
					if (!p)
						return MHD_NO;
					r->body = p;
					r->cap = cap;
				}
				memcpy(r->body + r->len, upload, *upload_size);
				r->len += *upload_size;
				r->body[r->len] = '\0';
			}
		}
		*upload_size = 0;
		return MHD_YES;
	}
	zc_conn_phase(s, c, CONN_HANDLING);
	enum MHD_Result ret = dispatch(s, c, r, url, method);
	/* every answer is queued by now (MHD copies or owns its body): the
	 * handle goes back at once, so the next request finds it warm */
	zc_pool_give(s, r);
	return ret;
}

/* One structured access-log line per request, on stderr; the connection
 * then waits for its next request (its header deadline starts again). */
static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct server *s = cls;
	struct request *r = *con_cls;
	zc_conn_phase(s, c, CONN_HEADERS);
	if (!r)
		return;
	zc_pool_give(s, r); /* (given back after dispatch; here if it was not) */
	if (r->started) {
		pthread_mutex_lock(&s->lock);
		if (--s->in_flight == 0)
			pthread_cond_broadcast(&s->idle);
		pthread_mutex_unlock(&s->lock);
	}
	struct timespec end;
	clock_gettime(CLOCK_MONOTONIC, &end);
	double ms = (double)(end.tv_sec - r->start.tv_sec) * 1e3 +
		    (double)(end.tv_nsec - r->start.tv_nsec) / 1e6;
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	char addr[INET6_ADDRSTRLEN], who[INET6_ADDRSTRLEN];
	zc_http_client_addr(ci ? ci->client_addr : NULL, addr, sizeof(addr), who, sizeof(who));
	char ts[32];
	zc_http_log_time(ts, sizeof(ts));
	fprintf(stderr,
		"{\"t\":\"%s\",\"client\":\"%s\",\"method\":\"%s\",\"path\":\"%s\",\"status\":%d,"
		"\"bytesIn\":%zu,\"ms\":%.1f,\"completed\":%s}\n",
		ts, addr, r->method, r->path, r->status, r->len, ms,
		toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? "true" : "false");
	zc_free(r->body);
	zc_free(r->target);
	zc_free(r);
	*con_cls = NULL;
}

/* ---- the token and the listen address --------------------------------- */

static int load_token(struct server *s, const char *given)
{
	if (given && *given) {
		if (strlen(given) < 16 || strlen(given) >= sizeof(s->token)) {
			fprintf(stderr, "zcor serve: --token must have 16 to 79 characters\n");
			return -1;
		}
		snprintf(s->token, sizeof(s->token), "%s", given);
		return 0;
	}
	char path[4096];
	snprintf(path, sizeof(path), "%s/serve.token", s->dir);
	/* a regular file only: a FIFO or a link planted as serve.token must
	 * neither hang the start nor be followed */
	char *data = NULL;
	size_t len = 0;
	struct zc_err fe = {0};
	int frc = zc_read_file_nofollow(path, 4096, &data, &len, &fe);
	if (frc == ZCOR_OK) {
		snprintf(s->token, sizeof(s->token), "%s", data);
		s->token[strcspn(s->token, "\r\n")] = '\0';
		zc_free(data);
		if (strlen(s->token) >= 16)
			return 0;
	} else if (frc != ZCOR_ENOTFOUND) {
		fprintf(stderr, "zcor serve: %s; remove it (a new token is then made) or pass --token\n", fe.msg);
		return -1;
	}
	if (random_hex(s->token, 24))
		return -1;
	char line[sizeof(s->token) + 1];
	int n = snprintf(line, sizeof(line), "%s\n", s->token);
	mode_t old = umask(077);
	frc = zc_write_file_atomic(path, line, (size_t)n, &fe);
	umask(old);
	if (frc) {
		fprintf(stderr, "zcor serve: %s\n", fe.msg);
		return -1;
	}
	return 0;
}

static int parse_listen(struct server *s, const char *listen, struct sockaddr_in *sa)
{
	const char *colon = strrchr(listen, ':');
	if (!colon || colon == listen || (size_t)(colon - listen) >= sizeof(s->listen_host)) {
		fprintf(stderr, "zcor serve: --listen must be ADDRESS:PORT, e.g. 127.0.0.1:7700\n");
		return -1;
	}
	memcpy(s->listen_host, listen, (size_t)(colon - listen));
	s->listen_host[colon - listen] = '\0';
	char *end;
	long port = strtol(colon + 1, &end, 10);
	if (*end || port < 1 || port > 65535) {
		fprintf(stderr, "zcor serve: the port in --listen must be 1 to 65535\n");
		return -1;
	}
	s->port = (int)port;
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	const char *h = strcmp(s->listen_host, "localhost") == 0 ? "127.0.0.1" : s->listen_host;
	if (inet_pton(AF_INET, h, &sa->sin_addr) != 1) {
		fprintf(stderr, "zcor serve: '%s' is not an IPv4 address\n", s->listen_host);
		return -1;
	}
	s->loopback = (ntohl(sa->sin_addr.s_addr) >> 24) == 127;
	return 0;
}

static void stop_watchdog(struct server *s, pthread_t dog)
{
	pthread_mutex_lock(&s->conn_lock);
	s->stopping = 1;
	pthread_cond_signal(&s->conn_wake);
	pthread_mutex_unlock(&s->conn_lock);
	pthread_join(dog, NULL);
}

int zc_serve(const char *dir, const struct zc_serve_opts *o)
{
	static struct server srv;
	struct server *s = &srv;
	memset(s, 0, sizeof(*s));
	s->dir = dir;
	const char *listen = o->listen, *token = o->token;
	int warm_mb = o->warm_mb;
	s->header_ms = 1000.0 * (o->header_timeout_s > 0 ? o->header_timeout_s : ZC_SERVE_HEADER_TIMEOUT_DEFAULT);
	s->body_ms = 1000.0 * (o->body_timeout_s > 0 ? o->body_timeout_s : ZC_SERVE_BODY_TIMEOUT_DEFAULT);
	struct sockaddr_in sa;
	if (parse_listen(s, listen ? listen : "127.0.0.1:7700", &sa))
		return 2;
	if (!s->loopback && !(token && *token)) {
		fprintf(stderr, "zcor serve: %s is not a loopback address; listening there needs an "
				"explicit --token (at least 16 characters), which every client must send\n",
			s->listen_host);
		return 2;
	}
	/* the directory exists and opens before we listen; that handle is the
	 * pool's first, read ahead (zcor_warm) for the requests to come */
	zcor *first = NULL;
	if (zcor_open(&first, dir) != ZCOR_OK) {
		fprintf(stderr, "zcor serve: cannot open memory directory '%s': %s\n", dir,
			zcor_errmsg(first));
		zcor_close(first);
		return 1;
	}
	if (load_token(s, token)) {
		zcor_close(first);
		return 1;
	}
	/* config.json's timeZone, before any thread starts (schedule.h) */
	const char *tz = zc_sched_time_zone(first);
	if (tz)
		fprintf(stderr, "zcor serve: local time is %s (config.json timeZone)\n", tz);
	/* the QQ world (worlds.qq.enabled): a bad setting stops here */
	char qerr[700];
	if (zc_qq_open(dir, &s->qq, qerr, sizeof(qerr))) {
		fprintf(stderr, "zcor serve: %s\n", qerr);
		zcor_close(first);
		return 2;
	}
	char *warmed = NULL;
	if (warm_mb > 0 && zcor_warm(first, warm_mb, &warmed) != ZCOR_OK)
		fprintf(stderr, "zcor serve: could not read the store ahead (recall still works): %s\n",
			zcor_errmsg(first));
	zcor_free(warmed);
	s->pool[s->npool++] = first;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->idle, NULL);
	pthread_mutex_init(&s->conn_lock, NULL);
	pthread_condattr_t mono;
	pthread_condattr_init(&mono);
	pthread_condattr_setclock(&mono, CLOCK_MONOTONIC);
	pthread_cond_init(&s->conn_wake, &mono);
	pthread_condattr_destroy(&mono);

	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL); /* worker threads inherit the mask */
	signal(SIGPIPE, SIG_IGN);

	pthread_t dog;
	if (pthread_create(&dog, NULL, zc_conn_watchdog, s) != 0) {
		fprintf(stderr, "zcor serve: cannot start a thread: %s\n", strerror(errno));
		zc_qq_stop(s->qq);
		zc_pool_close(s);
		return 1;
	}
	if (s->qq && zc_qq_start(s->qq, qerr, sizeof(qerr))) {
		fprintf(stderr, "zcor serve: the QQ world did not start: %s\n", qerr);
		zc_qq_stop(s->qq);
		stop_watchdog(s, dog);
		zc_pool_close(s);
		return 1;
	}
	/* the digest agent's daily schedule (docs/DIGEST.md): its own thread
	 * and handle; it logs the next wake */
	struct zc_sched *sched = NULL;
	if (zc_sched_start(dir, o->test_now, &sched, qerr, sizeof(qerr))) {
		fprintf(stderr, "zcor serve: %s\n", qerr);
		zc_qq_stop(s->qq);
		stop_watchdog(s, dog);
		zc_pool_close(s);
		return 1;
	}
	/* a thread per connection: a request that waits seconds for an LLM
	 * holds only its own connection's thread, never another client's
	 * (a polling thread pool would stall every connection it serves) */
	struct MHD_Daemon *d = MHD_start_daemon(
		MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL |
			MHD_USE_ITC | MHD_ALLOW_UPGRADE,
		(uint16_t)s->port, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR,
		(struct sockaddr *)&sa, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)IDLE_TIMEOUT_S,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)ZC_MAX_CONNECTIONS,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)ZC_PER_CLIENT_CONNECTIONS,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 * 1024), MHD_OPTION_NOTIFY_COMPLETED,
		on_completed, s, MHD_OPTION_NOTIFY_CONNECTION, zc_conn_notify, s,
		MHD_OPTION_URI_LOG_CALLBACK, on_uri, s, MHD_OPTION_END);
	if (!d) {
		fprintf(stderr, "zcor serve: cannot listen on %s:%d: %s\n", s->listen_host, s->port,
			strerror(errno));
		zc_sched_stop(sched);
		zc_qq_stop(s->qq);
		stop_watchdog(s, dog);
		zc_pool_close(s);
		return 1;
	}
	printf("zcor: serving %s at http://%s:%d/?token=%s\n", dir,
	       s->loopback ? "127.0.0.1" : s->listen_host, s->port, s->token);
	fflush(stdout);
	fprintf(stderr, "zcor serve: REST /api/v1/, MCP /mcp; Ctrl-C stops\n");

	int sig = 0;
	sigwait(&set, &sig);
	fprintf(stderr, "zcor serve: %s: finishing requests in flight\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
	/* the QQ world first: no new turns, the running ones finish and send,
	 * its connection (in reverse mode an upgraded socket of MHD's) closes */
	pthread_mutex_lock(&s->lock);
	struct zc_qq *qq = s->qq;
	s->qq = NULL; /* (GET worlds reads it under the lock) */
	pthread_mutex_unlock(&s->lock);
	zc_qq_stop(qq);
	zc_sched_stop(sched); /* a digest that runs is cut and recorded */
	pthread_mutex_lock(&s->lock); /* and so are the runs REST started */
	s->digests_stopped = 1;
	for (int i = 0; i < DIGESTING_MAX; i++)
		zcor_interrupt(s->digesting[i]);
	pthread_mutex_unlock(&s->lock);
	/* stop accepting; let every request in flight finish and its answer
	 * go out (its transaction commits or rolls back on the way), at most
	 * a minute; then close the idle keep-alive connections */
	MHD_quiesce_daemon(d);
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 60;
	pthread_mutex_lock(&s->lock);
	while (s->in_flight > 0)
		if (pthread_cond_timedwait(&s->idle, &s->lock, &until) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&s->lock);
	MHD_stop_daemon(d);
	stop_watchdog(s, dog);
	zc_pool_close(s);
	return 0;
}
