/*
 * http.c — `zcor serve`: HTTP on libmicrohttpd, a thread per connection. The
 * REST API under /api/v1/, MCP Streamable HTTP at /mcp, the web page at /.
 *
 * Server layer: speaks only include/zcor.h (a request holds one zcor
 * handle from a pool, used by one thread at a time), mcp.h and the
 * embedded page (web.h). Every request passes, in order: the Host
 * allow-list and the Origin check (DNS rebinding → 403), the token
 * (Authorization: Bearer; the page's cookie only for GET of the page and
 * its assets, never for the API), the body cap (→ 413). A slow call
 * (an LLM request) occupies one worker; the others go on.
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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "server/mcp.h"
#include "server/web.h"

#define BODY_MAX (1u << 20)     /* 1 MiB per request body */
#define JSON_DEPTH_MAX 64
#define SESSIONS_MAX 256
#define MAX_CONNECTIONS 256 /* each has its own thread */
/* Open handles kept between requests (each one SQLite connection and its
 * page cache). A request takes the one used last — a client sending one
 * request after another keeps the same, warm handle — and gives it back
 * as soon as its answer is queued; past this many idle ones the extra
 * close. */
#define POOL_MAX 8

struct session {
	char id[40];
	time_t used;
	struct zc_mcp_session mcp;
	int in_use;
};

struct server {
	const char *dir;
	char token[80];
	char listen_host[64];
	int port;
	int loopback;
	pthread_mutex_t lock; /* the pool, the sessions, in_flight */
	zcor *pool[POOL_MAX];
	int npool;
	pthread_cond_t idle;
	int in_flight; /* requests begun and not yet completed */
	struct session sessions[SESSIONS_MAX];
};

struct request {
	char method[12];
	char path[128];
	char *body;
	size_t len, cap;
	int too_big;
	int status;
	struct timespec start;
	zcor *z; /* the handle this request took from the pool, or NULL */
};

/* ---- small helpers ---------------------------------------------------- */

/* Closes the idle handles; they write what they still hold (hit counts). */
static void close_pool(struct server *s)
{
	for (int i = 0; i < s->npool; i++)
		zcor_close(s->pool[i]);
	s->npool = 0;
}

/* The request's handle: the pool's most recently used one, or a new one. */
static zcor *handle(struct server *s, struct request *r)
{
	if (r->z)
		return r->z;
	pthread_mutex_lock(&s->lock);
	zcor *z = s->npool > 0 ? s->pool[--s->npool] : NULL;
	pthread_mutex_unlock(&s->lock);
	if (!z) {
		char *err = NULL;
		if (zcor_open(&z, s->dir, &err) != ZCOR_OK) {
			fprintf(stderr, "zcor serve: cannot open '%s': %s\n", s->dir, err ? err : "");
			zcor_free(err);
			return NULL;
		}
	}
	return r->z = z;
}

/* Gives a request's handle back (after dispatch, or in on_completed). */
static void release_handle(struct server *s, struct request *r)
{
	zcor *z = r->z;
	r->z = NULL;
	if (!z)
		return;
	pthread_mutex_lock(&s->lock);
	int kept = s->npool < POOL_MAX;
	if (kept)
		s->pool[s->npool++] = z;
	pthread_mutex_unlock(&s->lock);
	if (!kept)
		zcor_close(z);
}

static int status_of(const char *code)
{
	static const struct {
		const char *code;
		int status;
	} map[] = {
		{"invalid_argument", 400}, {"not_found", 404},     {"conflict", 409},
		{"forbidden", 403},        {"read_only", 503},     {"disk_full", 507},
		{"busy", 503},             {"no_provider", 503},   {"provider_error", 502},
		{"io_error", 500},         {"maybe_applied", 500}, {"internal", 500},
	};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (code && strcmp(code, map[i].code) == 0)
			return map[i].status;
	return 500;
}

static enum MHD_Result send_text(struct MHD_Connection *c, struct request *r, int status,
				 const char *type, const char *body, size_t len,
				 const char *hname, const char *hval)
{
	struct MHD_Response *resp =
		MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
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

static enum MHD_Result send_json(struct MHD_Connection *c, struct request *r, int status,
				 const char *json)
{
	return send_text(c, r, status, "application/json; charset=utf-8", json, strlen(json), NULL, NULL);
}

static enum MHD_Result send_error(struct MHD_Connection *c, struct request *r, int status,
				  const char *code, const char *msg)
{
	json_t *j = json_pack("{s:{s:s, s:s}}", "error", "code", code, "message", msg);
	char *s = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	enum MHD_Result ret = send_text(c, r, status, "application/json; charset=utf-8", s, strlen(s),
					status == 401 ? "WWW-Authenticate" : NULL,
					status == 401 ? "Bearer" : NULL);
	free(s);
	return ret;
}

/* A zcor result: {"error":…} picks its status, anything else is 200. */
static enum MHD_Result send_result(struct MHD_Connection *c, struct request *r, int rc,
				   char *json, int ok_status)
{
	int status = ok_status;
	if (rc) {
		json_t *j = json_loads(json, 0, NULL);
		status = status_of(json_string_value(json_object_get(json_object_get(j, "error"), "code")));
		json_decref(j);
	}
	enum MHD_Result ret = send_json(c, r, status, json);
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
static int token_ok(const struct server *s, const char *given)
{
	size_t n = strlen(s->token);
	if (!given || strlen(given) != n)
		return 0;
	unsigned char d = 0;
	for (size_t i = 0; i < n; i++)
		d |= (unsigned char)(given[i] ^ s->token[i]);
	return d == 0;
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
		return x ? send_text(c, r, 204, "text/plain", "", 0, NULL, NULL)
			 : send_error(c, r, 404, "not_found", "no MCP session with that Mcp-Session-Id");
	}
	if (strcmp(method, "POST") != 0)
		return send_text(c, r, 405, "text/plain", "", 0, "Allow", "POST, DELETE");
	zcor *z = handle(s, r);
	if (!z)
		return send_error(c, r, 500, "internal", "cannot open the memory directory");
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
			return send_error(c, r, 404, "not_found",
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
		return send_text(c, r, 202, "text/plain", "", 0, NULL, NULL);
	enum MHD_Result ret = send_text(c, r, 200, "application/json", resp, strlen(resp),
					is_init && idbuf[0] ? "Mcp-Session-Id" : NULL, idbuf);
	zcor_free(resp);
	return ret;
}

/* ---- REST ------------------------------------------------------------ */

/* Arguments for a tool: the JSON body, or {} for an empty body. */
static json_t *body_object(struct request *r, char *why, size_t whylen)
{
	if (!r->body || r->len == 0)
		return json_object();
	json_error_t je;
	json_t *j = json_loadb(r->body, r->len, JSON_REJECT_DUPLICATES, &je);
	if (!j) {
		snprintf(why, whylen, "the body is not valid JSON: line %d column %d: %s", je.line,
			 je.column, je.text);
		return NULL;
	}
	if (!json_is_object(j)) {
		snprintf(why, whylen, "the body must be a JSON object");
		json_decref(j);
		return NULL;
	}
	return j;
}

/* Query parameters copied into args (strings; limit/offset as integers;
 * keywords split on commas). */
static enum MHD_Result query_arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	json_t *args = cls;
	if (!value || !strcmp(key, "token"))
		return MHD_YES;
	if (!strcmp(key, "limit") || !strcmp(key, "offset")) {
		char *end;
		long long v = strtoll(value, &end, 10);
		json_object_set_new(args, key, (*end || !*value) ? json_string(value) : json_integer(v));
	} else if (!strcmp(key, "keywords")) {
		json_t *kw = json_array();
		for (const char *p = value; *p;) {
			size_t n = strcspn(p, ",");
			if (n)
				json_array_append_new(kw, json_stringn(p, n));
			p += n + (p[n] == ',');
		}
		json_object_set_new(args, key, kw);
	} else if (!strcmp(key, "includeSuperseded")) {
		json_object_set_new(args, key, json_boolean(!strcmp(value, "true") || !strcmp(value, "1")));
	} else {
		json_object_set_new(args, key, json_string(value));
	}
	return MHD_YES;
}

static enum MHD_Result call_tool(struct server *s, struct MHD_Connection *c, struct request *r,
				 const char *conversation, const char *tool, json_t *args, int ok_status)
{
	zcor *z = handle(s, r);
	if (!z) {
		json_decref(args);
		return send_error(c, r, 500, "internal", "cannot open the memory directory");
	}
	struct zcor_ctx ctx = {ZCOR_ACTOR_UI, conversation};
	char *text = json_dumps(args, JSON_COMPACT), *out = NULL;
	json_decref(args);
	int rc = zcor_tool_call(z, &ctx, tool, text, &out);
	free(text);
	return send_result(c, r, rc, out, ok_status);
}

/* GET /api/v1/views[?conversation=K] -> {items} (the global views and
 * K's own, or all for the host) and GET /api/v1/views/read?path=P. */
static enum MHD_Result views_route(struct server *s, struct MHD_Connection *c, struct request *r,
				   const char *conversation, int list, json_t *args)
{
	zcor *z = handle(s, r);
	const char *only = json_string_value(json_object_get(args, "conversation"));
	json_t *call = list ? json_pack("{s:s}", "action", "list")
			    : json_pack("{s:s, s:O?}", "action", "read", "path", json_object_get(args, "path"));
	char *only_copy = only ? strdup(only) : NULL;
	json_decref(args);
	struct zcor_ctx ctx = {ZCOR_ACTOR_UI, conversation};
	char *text = json_dumps(call, JSON_COMPACT), *out = NULL;
	json_decref(call);
	int rc = zcor_tool_call(z, &ctx, "qq_memory", text, &out);
	free(text);
	if (rc || !list) {
		free(only_copy);
		return send_result(c, r, rc, out, 200);
	}
	json_t *res = json_loads(out, 0, NULL), *items = json_array();
	zcor_free(out);
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(res, "views"), i, v) {
		const char *conv = json_string_value(json_object_get(v, "conversation"));
		if (!only_copy || !conv || !strcmp(conv, only_copy))
			json_array_append(items, v);
	}
	free(only_copy);
	json_decref(res);
	json_t *o = json_pack("{s:o}", "items", items);
	char *body = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	enum MHD_Result ret = send_json(c, r, 200, body);
	free(body);
	return ret;
}

/* Splits "/api/v1/a/b/c" into up to 4 segments after "/api/v1/". */
static int segments(const char *url, char seg[4][160])
{
	int n = 0;
	const char *p = url + strlen("/api/v1/");
	while (*p && n < 4) {
		const char *slash = strchr(p, '/');
		size_t len = slash ? (size_t)(slash - p) : strlen(p);
		if (len >= 160)
			return -1;
		memcpy(seg[n], p, len);
		seg[n][len] = '\0';
		n++;
		if (!slash)
			break;
		p = slash + 1;
	}
	return n;
}

/* ---- conversations and transcripts (Q-LOG) ---------------------------- */

/* Decodes %XX in a path segment in place (keys arrive as group%3A1). */
static void pct_decode(char *p)
{
	char *o = p;
	for (; *p; p++) {
		unsigned hi, lo;
		if (p[0] == '%' && sscanf(p + 1, "%1x%1x", &hi, &lo) == 2) {
			*o++ = (char)(hi * 16 + lo);
			p += 2;
		} else {
			*o++ = *p;
		}
	}
	*o = '\0';
}

/* /api/v1/conversations[/{key}[/messages | /digest-done]] */
static enum MHD_Result handle_conversations(struct server *s, struct MHD_Connection *c,
					    struct request *r, zcor *z, char seg[4][160], int n,
					    const char *method, json_t *args, const char *conversation)
{
	int get = !strcmp(method, "GET"), post = !strcmp(method, "POST");
	struct zcor_ctx ctx = {ZCOR_ACTOR_UI, conversation};
	char *out = NULL;
	int rc;
	if (n == 1 && get) {
		json_decref(args);
		rc = zcor_conversations(z, &ctx, &out);
		return send_result(c, r, rc, out, 200);
	}
	if (n < 2 || n > 3) {
		json_decref(args);
		return send_error(c, r, 404, "not_found", "no such API route or method; see docs/API.md");
	}
	char *key = seg[1];
	pct_decode(key);
	if (conversation && strcmp(key, conversation) != 0) {
		json_decref(args);
		return send_error(c, r, 403, "forbidden",
				  "this caller is bound to another conversation (X-Zcor-Conversation) and "
				  "may only touch its own");
	}
	if (n == 2 && get) {
		json_decref(args);
		rc = zcor_conversation_get(z, &ctx, key, &out);
		return send_result(c, r, rc, out, 200);
	}
	if (n == 3 && !strcmp(seg[2], "messages") && post) {
		char *text = json_dumps(args, JSON_COMPACT);
		json_decref(args);
		rc = zcor_log_messages(z, &ctx, key, text, &out);
		free(text);
		return send_result(c, r, rc, out, 200);
	}
	if (n == 3 && !strcmp(seg[2], "messages") && get) {
		/* a transcript page: read (oldest first), or search with keywords;
		 * empty parameters (a form's "from=&to=") mean absent */
		const char *k;
		json_t *v, *tmp;
		json_object_foreach_safe(args, tmp, k, v) {
			if ((json_is_string(v) && !*json_string_value(v)) ||
			    (json_is_array(v) && json_array_size(v) == 0))
				json_object_del(args, k);
		}
		json_object_set_new(args, "action",
				    json_string(json_object_get(args, "keywords") ? "search" : "read"));
		json_object_set_new(args, "conversation", json_string(key));
		return call_tool(s, c, r, conversation, "qq_transcript", args, 200);
	}
	if (n == 3 && !strcmp(seg[2], "digest-done") && post) {
		json_decref(args);
		rc = zcor_digest_done(z, key, &out);
		return send_result(c, r, rc, out, 200);
	}
	json_decref(args);
	return send_error(c, r, 404, "not_found", "no such API route or method; see docs/API.md");
}

static enum MHD_Result handle_api(struct server *s, struct MHD_Connection *c, struct request *r,
				  const char *url, const char *method, const char *conversation)
{
	char seg[4][160] = {{0}}, why[300] = "";
	int n = segments(url, seg);
	int get = !strcmp(method, "GET"), post = !strcmp(method, "POST"),
	    put = !strcmp(method, "PUT") || !strcmp(method, "PATCH"), del = !strcmp(method, "DELETE");
	json_t *args = NULL;
	if (n <= 0)
		return send_error(c, r, 404, "not_found", "no such API route; see docs/API.md");
	if (post || put) {
		if (!(args = body_object(r, why, sizeof(why))))
			return send_error(c, r, 400, "invalid_argument", why);
	} else {
		args = json_object();
		MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, query_arg, args);
	}
	zcor *z = handle(s, r);
	if (!z) {
		json_decref(args);
		return send_error(c, r, 500, "internal", "cannot open the memory directory");
	}
	const char *a = seg[0];
	/* tools */
	if (!strcmp(a, "tools") && n == 1 && get) {
		json_decref(args);
		char *t = zcor_tools_json(z, ZCOR_TOOLS_ALL);
		enum MHD_Result ret = send_json(c, r, 200, t);
		zcor_free(t);
		return ret;
	}
	if (!strcmp(a, "tools") && n == 2 && post)
		return call_tool(s, c, r, conversation, seg[1], args, 200);
	/* nodes */
	if (!strcmp(a, "nodes")) {
		if (n == 1 && get)
			return call_tool(s, c, r, conversation, "zcor_memory_query", args, 200);
		if (n == 1 && post) {
			json_object_del(args, "id");
			return call_tool(s, c, r, conversation, "zcor_memory_write", args, 201);
		}
		if (n == 2 && get) {
			json_decref(args);
			struct zcor_ctx ctx = {ZCOR_ACTOR_UI, conversation};
			char *out = NULL;
			int rc = zcor_node_get(z, &ctx, seg[1], &out);
			return send_result(c, r, rc, out, 200);
		}
		if (n == 2 && put) {
			json_object_set_new(args, "id", json_string(seg[1]));
			return call_tool(s, c, r, conversation, "zcor_memory_write", args, 200);
		}
		if (n == 2 && del) {
			json_object_clear(args);
			json_object_set_new(args, "id", json_string(seg[1]));
			return call_tool(s, c, r, conversation, "zcor_memory_delete", args, 200);
		}
		if (n == 3 && (post || put) && !strcmp(seg[2], "important")) {
			json_object_set_new(args, "id", json_string(seg[1]));
			return call_tool(s, c, r, conversation, "zcor_memory_important", args, 200);
		}
		if (n == 3 && get && !strcmp(seg[2], "trace")) {
			json_object_clear(args);
			json_object_set_new(args, "id", json_string(seg[1]));
			return call_tool(s, c, r, conversation, "zcor_memory_trace", args, 200);
		}
		if (n == 3 && get && !strcmp(seg[2], "children")) {
			json_object_clear(args);
			json_object_set_new(args, "parentId", json_string(seg[1]));
			return call_tool(s, c, r, conversation, "zcor_memory_children", args, 200);
		}
	}
	/* the memory views (qq_memory), read-only here; changes go through
	 * POST /api/v1/tools/qq_memory */
	if (!strcmp(a, "views") && get && (n == 1 || (n == 2 && !strcmp(seg[1], "read"))))
		return views_route(s, c, r, conversation, n == 1, args);
	if ((!strcmp(a, "stickers") || !strcmp(a, "media")) && n == 2 && get) {
		json_decref(args);
		char *data = NULL;
		size_t len = 0;
		const char *mime = NULL;
		struct zcor_ctx ctx = {ZCOR_ACTOR_UI, conversation};
		int rc = a[0] == 's' ? zcor_sticker_read(z, seg[1], &data, &len, &mime)
				     : zcor_media_read(z, &ctx, seg[1], &data, &len, &mime);
		if (rc)
			return send_error(c, r, rc == ZCOR_ENOTFOUND || rc == ZCOR_EIO ? 404 : 400,
					  rc == ZCOR_EINVAL ? "invalid_argument" : "not_found", zcor_errmsg(z));
		enum MHD_Result ret = send_text(c, r, 200, mime, data, len, "Cache-Control", "no-store");
		zcor_free(data);
		return ret;
	}
	/* a reply's [[图片: …]] before it is sent (Q-STK) */
	if (!strcmp(a, "check-reply") && n == 1 && post) {
		char *text = json_dumps(args, JSON_COMPACT), *out = NULL;
		json_decref(args);
		int rc = zcor_check_reply_json(z, text, &out);
		free(text);
		return send_result(c, r, rc, out, 200);
	}
	if (!strcmp(a, "roots") && n == 1 && get) {
		json_object_clear(args);
		return call_tool(s, c, r, conversation, "zcor_memory_children", args, 200);
	}
	if (!strcmp(a, "merge") && n == 1 && post)
		return call_tool(s, c, r, conversation, "zcor_memory_merge", args, 201);
	if (!strcmp(a, "supersede") && n == 1 && post)
		return call_tool(s, c, r, conversation, "zcor_memory_supersede", args, 200);
	if (!strcmp(a, "search") && n == 1 && post)
		return call_tool(s, c, r, conversation, "zcor_memory_search", args, 200);
	if (!strcmp(a, "history") && n == 1 && get)
		return call_tool(s, c, r, conversation, "zcor_memory_history", args, 200);
	/* people */
	if (!strcmp(a, "people")) {
		if (n == 1 && get)
			return call_tool(s, c, r, conversation, "zcor_relationship_query", args, 200);
		if (n == 2 && get) {
			json_object_clear(args);
			json_object_set_new(args, "personId", json_string(seg[1]));
			return call_tool(s, c, r, conversation, "zcor_relationship_read", args, 200);
		}
		if (n == 2 && put) {
			json_object_set_new(args, "personId", json_string(seg[1]));
			return call_tool(s, c, r, conversation, "zcor_relationship_write", args, 200);
		}
		if (n == 2 && del) {
			json_object_clear(args);
			json_object_set_new(args, "personId", json_string(seg[1]));
			return call_tool(s, c, r, conversation, "zcor_relationship_delete", args, 200);
		}
	}
	/* synonyms */
	if (!strcmp(a, "synonyms") && n == 1 && post)
		return call_tool(s, c, r, conversation, "zcor_synonyms_add", args, 200);
	if (!strcmp(a, "synonyms") && n == 1 && get) {
		json_decref(args);
		char *out = zcor_synonyms_list(z);
		enum MHD_Result ret = send_json(c, r, 200, out);
		zcor_free(out);
		return ret;
	}
	if (!strcmp(a, "synonyms") && n == 2 && !strcmp(seg[1], "expand") && get) {
		const char *word = json_string_value(json_object_get(args, "word"));
		char *out = NULL;
		int rc = zcor_synonyms_expand(z, word, &out);
		json_decref(args);
		return send_result(c, r, rc, out, 200);
	}
	if (!strcmp(a, "synonyms") && n == 2 && (put || del)) {
		char *end = NULL;
		long long idx = strtoll(seg[1], &end, 10);
		if (*end || idx < 0) {
			json_decref(args);
			return send_error(c, r, 404, "not_found", "no such synonym group");
		}
		if (del) {
			/* the body may carry the group as read: {"expected": [...]} */
			json_decref(args);
			if (!(args = body_object(r, why, sizeof(why))))
				return send_error(c, r, 400, "invalid_argument", why);
			json_object_set_new(args, "terms", json_null());
		}
		json_object_set_new(args, "index", json_integer(idx));
		char *text = json_dumps(args, JSON_COMPACT), *out = NULL;
		json_decref(args);
		struct zcor_ctx ctx = {ZCOR_ACTOR_UI, conversation};
		int rc = zcor_synonyms_edit(z, &ctx, text, &out);
		free(text);
		return send_result(c, r, rc, out, 200);
	}
	/* backup and restore */
	if (!strcmp(a, "backup") && n == 1 && post)
		return call_tool(s, c, r, conversation, "zcor_memory_backup", args, 201);
	if (!strcmp(a, "restore") && n == 1 && post)
		return call_tool(s, c, r, conversation, "zcor_memory_restore", args, 200);
	/* config */
	if (!strcmp(a, "config") && n == 1 && (get || put || post)) {
		if (get) {
			json_decref(args);
			char *cfg = zcor_config_json(z);
			enum MHD_Result ret = send_json(c, r, 200, cfg);
			zcor_free(cfg);
			return ret;
		}
		char *text = json_dumps(args, JSON_COMPACT), *err = NULL;
		json_decref(args);
		int rc = zcor_config_set(z, text, &err);
		free(text);
		if (rc) {
			enum MHD_Result ret = send_error(c, r, 400, "invalid_argument", err ? err : "");
			zcor_free(err);
			return ret;
		}
		char *cfg = zcor_config_json(z);
		enum MHD_Result ret = send_json(c, r, 200, cfg);
		zcor_free(cfg);
		return ret;
	}
	if (!strcmp(a, "conversations"))
		return handle_conversations(s, c, r, z, seg, n, method, args, conversation);
	/* recall and prefix */
	if (!strcmp(a, "recall") && n == 1 && post) {
		const char *asked = json_string_value(json_object_get(args, "conversation"));
		if (conversation && asked && strcmp(asked, conversation) != 0) {
			json_decref(args);
			return send_error(c, r, 403, "forbidden",
					  "this caller is bound to another conversation (X-Zcor-Conversation)");
		}
		if (conversation)
			json_object_set_new(args, "conversation", json_string(conversation));
		char *text = json_dumps(args, JSON_COMPACT), *out = NULL;
		json_decref(args);
		int rc = zcor_recall(z, text, &out);
		free(text);
		return send_result(c, r, rc, out, 200);
	}
	if (!strcmp(a, "prefix") && n == 1 && get) {
		const char *conv = json_string_value(json_object_get(args, "conversation"));
		if (conversation && conv && strcmp(conv, conversation) != 0) {
			json_decref(args);
			return send_error(c, r, 403, "forbidden",
					  "this caller is bound to another conversation (X-Zcor-Conversation)");
		}
		char *text = NULL;
		int rc = zcor_prefix(z, conv ? conv : conversation, &text);
		json_decref(args);
		if (rc)
			return send_error(c, r, 400, "invalid_argument", zcor_errmsg(z));
		json_t *j = json_pack("{s:s}", "prefix", text);
		zcor_free(text);
		char *s2 = json_dumps(j, JSON_COMPACT);
		json_decref(j);
		enum MHD_Result ret = send_json(c, r, 200, s2);
		free(s2);
		return ret;
	}
	json_decref(args);
	return send_error(c, r, 404, "not_found", "no such API route or method; see docs/API.md");
}

static const char *bearer(struct MHD_Connection *c)
{
	const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	return h && strncasecmp(h, "Bearer ", 7) == 0 ? h + 7 : NULL;
}

static const char *cookie_token(struct MHD_Connection *c)
{
	return MHD_lookup_connection_value(c, MHD_COOKIE_KIND, "zcor_token");
}

/* ---- the Memory page (web/, embedded) --------------------------------- */

/* What the page may do: its own scripts, styles and API, images from
 * blob: URLs (stickers fetched with the token header); no inline script,
 * no framing, no form posts, no plug-ins. */
#define PAGE_CSP                                                                             \
	"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; "   \
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
#define TOKEN_MARK "__ZCOR_TOKEN__"

static const struct zc_web_asset *web_asset(const char *path)
{
	for (const struct zc_web_asset *a = zc_web_assets; a->path; a++)
		if (strcmp(a->path, path) == 0)
			return a;
	return NULL;
}

static enum MHD_Result send_web(struct MHD_Connection *c, struct request *r, const char *type,
				char *body, size_t len, const char *cookie)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", type);
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, "Content-Security-Policy", PAGE_CSP);
	MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(resp, "X-Frame-Options", "DENY");
	if (cookie)
		MHD_add_response_header(resp, "Set-Cookie", cookie);
	r->status = 200;
	enum MHD_Result ret = MHD_queue_response(c, 200, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* index.html with the token HTML-escaped into <meta name="zcor-token">:
 * the page's scripts read it to send Authorization: Bearer. Only a
 * caller that already holds the token gets this page, and a page of
 * another origin cannot read it (same-origin policy; no CORS headers are
 * ever sent, and the Host check stops DNS rebinding). */
static char *page_with_token(const struct zc_web_asset *a, const char *token, size_t *len)
{
	const char *text = (const char *)a->data;
	const char *mark = strstr(text, TOKEN_MARK);
	size_t cap = a->len + 6 * strlen(token) + 1, n = 0;
	char *out = malloc(cap);
	if (!out)
		return NULL;
	size_t head = mark ? (size_t)(mark - text) : a->len;
	memcpy(out, text, head);
	n = head;
	if (mark) {
		for (const char *p = token; *p; p++) {
			const char *esc = *p == '&' ? "&amp;" : *p == '"' ? "&quot;" : *p == '\'' ? "&#39;"
				: *p == '<' ? "&lt;" : *p == '>' ? "&gt;" : NULL;
			size_t k = esc ? strlen(esc) : 1;
			memcpy(out + n, esc ? esc : p, k);
			n += k;
		}
		size_t tail = a->len - head - strlen(TOKEN_MARK);
		memcpy(out + n, mark + strlen(TOKEN_MARK), tail);
		n += tail;
	}
	out[n] = '\0';
	*len = n;
	return out;
}

/* GET / (or /index.html) and /assets/<file under web/>. The page takes
 * the token from ?token= (and sets the cookie for reloads), the cookie or
 * the header; assets take the cookie or the header. */
static enum MHD_Result handle_web(struct server *s, struct MHD_Connection *c, struct request *r,
				  const char *url, int is_page)
{
	const char *q = is_page ? MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token") : NULL;
	int by_query = token_ok(s, q);
	if (!by_query && !token_ok(s, cookie_token(c)) && !token_ok(s, bearer(c)))
		return send_error(c, r, 401, "unauthorized",
				  "open the URL zcor serve printed (it carries ?token=…)");
	const struct zc_web_asset *a = web_asset(is_page ? "index.html" : url + strlen("/assets/"));
	if (!a)
		return send_error(c, r, 404, "not_found", "no such file of the Memory page");
	size_t len = a->len;
	char *body = is_page ? page_with_token(a, s->token, &len) : malloc(len + 1);
	if (!body)
		return send_error(c, r, 500, "internal", "out of memory");
	if (!is_page)
		memcpy(body, a->data, len);
	char cookie[160];
	if (by_query)
		snprintf(cookie, sizeof(cookie), "zcor_token=%s; Path=/; HttpOnly; SameSite=Strict", s->token);
	return send_web(c, r, a->type, body, len, by_query ? cookie : NULL);
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

static enum MHD_Result dispatch(struct server *s, struct MHD_Connection *c, struct request *r,
				const char *url, const char *method)
{
	const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");
	const char *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
	if (!host_allowed(s, host))
		return send_error(c, r, 403, "forbidden",
				  "the Host header is not this server's address (DNS rebinding protection)");
	if (!origin_allowed(s, origin))
		return send_error(c, r, 403, "forbidden", "requests from another origin are refused");
	if (r->too_big)
		return send_error(c, r, 413, "invalid_argument", "the request body is larger than 1 MiB");

	int is_page = !strcmp(url, "/") || !strcmp(url, "/index.html");
	if ((is_page || !strncmp(url, "/assets/", 8)) && !strcmp(method, "GET"))
		return handle_web(s, c, r, url, is_page);
	if (!token_ok(s, bearer(c)))
		return send_error(c, r, 401, "unauthorized",
				  "missing or wrong token: send Authorization: Bearer <token> (zcor serve "
				  "printed it; it is in serve.token)");
	/* the host binds the call to a conversation (never the model) */
	const char *conv = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Zcor-Conversation");
	if (conv) {
		char *err = NULL;
		if (zcor_check_conversation(conv, &err)) {
			enum MHD_Result ret = send_error(c, r, 400, "invalid_argument", err);
			zcor_free(err);
			return ret;
		}
	}
	if (r->len && r->body && too_deep(r->body, r->len))
		return send_error(c, r, 400, "invalid_argument",
				  "the JSON body is nested deeper than 64 levels");
	if (!strcmp(url, "/mcp"))
		return handle_mcp(s, c, r, method, conv);
	if (!strncmp(url, "/api/v1/", 8))
		return handle_api(s, c, r, url, method, conv);
	return send_error(c, r, 404, "not_found", "no such path");
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	struct server *s = cls;
	struct request *r = *con_cls;
	if (!r) {
		r = calloc(1, sizeof(*r));
		if (!r)
			return MHD_NO;
		clock_gettime(CLOCK_MONOTONIC, &r->start);
		pthread_mutex_lock(&s->lock);
		s->in_flight++;
		pthread_mutex_unlock(&s->lock);
		snprintf(r->method, sizeof(r->method), "%s", method);
		/* the path for the log, without the query (it may carry the token) */
		for (size_t i = 0; url[i] && url[i] != '?' && i + 1 < sizeof(r->path); i++) {
			unsigned char ch = (unsigned char)url[i];
			r->path[i] = ch < 0x20 || ch == '"' || ch == '\\' ? '_' : (char)ch;
			r->path[i + 1] = '\0';
		}
		*con_cls = r;
		return MHD_YES;
	}
	if (*upload_size) {
		if (!r->too_big) {
			if (r->len + *upload_size > BODY_MAX) {
				r->too_big = 1;
				free(r->body);
				r->body = NULL;
				r->len = 0;
			} else {
				if (r->len + *upload_size + 1 > r->cap) {
					size_t cap = (r->len + *upload_size + 1) * 2;
					char *p = realloc(r->body, cap);
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
	enum MHD_Result ret = dispatch(s, c, r, url, method);
	/* every answer is queued by now (MHD copies or owns its body): the
	 * handle goes back at once, so the next request finds it warm */
	release_handle(s, r);
	return ret;
}

/* One structured access-log line per request, on stderr. */
static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct server *s = cls;
	struct request *r = *con_cls;
	if (!r)
		return;
	release_handle(s, r); /* (given back after dispatch; here if it was not) */
	pthread_mutex_lock(&s->lock);
	if (--s->in_flight == 0)
		pthread_cond_broadcast(&s->idle);
	pthread_mutex_unlock(&s->lock);
	struct timespec end;
	clock_gettime(CLOCK_MONOTONIC, &end);
	double ms = (double)(end.tv_sec - r->start.tv_sec) * 1e3 +
		    (double)(end.tv_nsec - r->start.tv_nsec) / 1e6;
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	char addr[64] = "?";
	if (ci && ci->client_addr && ci->client_addr->sa_family == AF_INET)
		inet_ntop(AF_INET, &((struct sockaddr_in *)ci->client_addr)->sin_addr, addr, sizeof(addr));
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	char ts[32];
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	fprintf(stderr,
		"{\"t\":\"%s\",\"client\":\"%s\",\"method\":\"%s\",\"path\":\"%s\",\"status\":%d,"
		"\"bytesIn\":%zu,\"ms\":%.1f,\"completed\":%s}\n",
		ts, addr, r->method, r->path, r->status, r->len, ms,
		toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? "true" : "false");
	free(r->body);
	free(r);
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
	FILE *f = fopen(path, "r");
	if (f) {
		if (fgets(s->token, sizeof(s->token), f))
			s->token[strcspn(s->token, "\r\n")] = '\0';
		fclose(f);
		if (strlen(s->token) >= 16)
			return 0;
	}
	if (random_hex(s->token, 24))
		return -1;
	mode_t old = umask(077);
	f = fopen(path, "w");
	umask(old);
	if (!f || fprintf(f, "%s\n", s->token) < 0 || fclose(f) != 0) {
		fprintf(stderr, "zcor serve: cannot write %s: %s\n", path, strerror(errno));
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

int zc_serve(const char *dir, const char *listen, const char *token, int warm_mb)
{
	static struct server srv;
	struct server *s = &srv;
	memset(s, 0, sizeof(*s));
	s->dir = dir;
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
	char *err = NULL;
	if (zcor_open(&first, dir, &err) != ZCOR_OK) {
		fprintf(stderr, "zcor serve: cannot open memory directory '%s': %s\n", dir, err ? err : "");
		zcor_free(err);
		return 1;
	}
	if (load_token(s, token)) {
		zcor_close(first);
		return 1;
	}
	char *warmed = NULL;
	if (warm_mb > 0 && zcor_warm(first, warm_mb, &warmed) != ZCOR_OK)
		fprintf(stderr, "zcor serve: could not read the store ahead (recall still works): %s\n",
			zcor_errmsg(first));
	zcor_free(warmed);
	s->pool[s->npool++] = first;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->idle, NULL);

	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL); /* worker threads inherit the mask */
	signal(SIGPIPE, SIG_IGN);

	/* a thread per connection: a request that waits seconds for an LLM
	 * holds only its own connection's thread, never another client's
	 * (a polling thread pool would stall every connection it serves) */
	struct MHD_Daemon *d = MHD_start_daemon(
		MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL |
			MHD_USE_ITC,
		(uint16_t)s->port, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR,
		(struct sockaddr *)&sa, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)60,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)MAX_CONNECTIONS,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 * 1024), MHD_OPTION_NOTIFY_COMPLETED,
		on_completed, s, MHD_OPTION_END);
	if (!d) {
		fprintf(stderr, "zcor serve: cannot listen on %s:%d: %s\n", s->listen_host, s->port,
			strerror(errno));
		close_pool(s);
		return 1;
	}
	printf("zcor: serving %s at http://%s:%d/?token=%s\n", dir,
	       s->loopback ? "127.0.0.1" : s->listen_host, s->port, s->token);
	fflush(stdout);
	fprintf(stderr, "zcor serve: REST /api/v1/, MCP /mcp; Ctrl-C stops\n");

	int sig = 0;
	sigwait(&set, &sig);
	fprintf(stderr, "zcor serve: %s: finishing requests in flight\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
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
	close_pool(s);
	return 0;
}
