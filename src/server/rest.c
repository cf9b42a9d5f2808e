/*
 * rest.c — the REST API of `zcor serve` under /api/v1/ (docs/API.md): a
 * table of routes {methods, pattern, handler, ok status}, one matcher,
 * and the handlers, each a thin adapter over one libzcor call or tool.
 *
 * Server layer: speaks only include/zcor.h (the request's handle comes
 * from the pool). A handler holds no rule of its own beyond the
 * conversation binding of the caller (X-Zcor-Conversation); it never
 * answers a libzcor error with another status than its code's. Adding a
 * route is adding a row.
 */
#include "server/rest.h"

#include <assert.h>
#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "base/utf8.h"
#include "server/internal.h"
#include "world/console.h"
#include "world/qq.h"

/* One request on its way through a route: what the handlers share. */
struct rest_call {
	struct server *s;
	struct MHD_Connection *c;
	struct request *r;
	zcor *z;
	const char *conversation; /* X-Zcor-Conversation, or NULL */
	unsigned method;
	json_t *args; /* the body, or the query; owned here, released after the handler */
	const struct zc_rest_route *route;
	struct zc_route_params p;
};

/* ---- methods and the matcher ----------------------------------------- */

unsigned zc_http_method_bit(const char *method)
{
	static const struct {
		const char *name;
		unsigned bit;
	} m[] = {{"GET", ZC_HTTP_GET},	 {"POST", ZC_HTTP_POST},	 {"PUT", ZC_HTTP_PUT},
		 {"PATCH", ZC_HTTP_PUT}, {"DELETE", ZC_HTTP_DELETE}};
	for (size_t i = 0; method && i < sizeof(m) / sizeof(m[0]); i++)
		if (strcmp(method, m[i].name) == 0)
			return m[i].bit;
	return 0;
}

void zc_http_allow_text(unsigned allow, char *out, size_t n)
{
	static const char *names[] = {"GET", "POST", "PUT", "DELETE"};
	size_t len = 0;
	out[0] = '\0';
	for (unsigned i = 0; i < 4; i++) {
		if (!(allow & (1u << i)))
			continue;
		int k = snprintf(out + len, n - len, "%s%s", len ? ", " : "", names[i]);
		if (k < 0 || (size_t)k >= n - len)
			return;
		len += (size_t)k;
	}
}

static int hexval(char ch)
{
	return ch >= '0' && ch <= '9' ? ch - '0' : (tolower((unsigned char)ch) - 'a' + 10);
}

/* Decodes %XX of s[0..n) into out as MHD decodes a path (a '%' not
 * followed by two hex digits stays as it is): -1 when it does not fit or
 * holds a '/' or a NUL, which no segment may. */
static int decode_segment(const char *s, size_t n, char *out, size_t cap)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		if (ch == '%' && i + 2 < n && isxdigit((unsigned char)s[i + 1]) &&
		    isxdigit((unsigned char)s[i + 2])) {
			ch = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
			i += 2;
		}
		if (ch == '/' || ch == '\0' || o + 1 >= cap)
			return -1;
		out[o++] = ch;
	}
	out[o] = '\0';
	return 0;
}

int zc_route_match(const char *pattern, const char *path, struct zc_route_params *p)
{
	struct zc_route_params got = {0};
	size_t plen = strlen(path);
	if (plen && path[plen - 1] == '/')
		plen--; /* "nodes/" is "nodes", as it always was */
	const char *pp = pattern, *sp = path, *end = path + plen;
	for (;;) {
		size_t pn = strcspn(pp, "/");
		const char *slash = memchr(sp, '/', (size_t)(end - sp));
		size_t sn = slash ? (size_t)(slash - sp) : (size_t)(end - sp);
		char seg[ZC_ROUTE_PARAM_MAX];
		if (decode_segment(sp, sn, seg, sizeof(seg)) || !seg[0])
			return 0;
		if (pp[0] == ':') {
			assert(got.n < ZC_ROUTE_PARAMS); /* a pattern of the table with too many */
			memcpy(got.v[got.n++], seg, strlen(seg) + 1);
		} else if (strlen(seg) != pn || memcmp(seg, pp, pn) != 0) {
			return 0;
		}
		int last_p = pp[pn] == '\0', last_s = slash == NULL;
		if (last_p || last_s) {
			if (!(last_p && last_s))
				return 0;
			break;
		}
		pp += pn + 1;
		sp = slash + 1;
	}
	if (p)
		*p = got;
	return 1;
}

int zc_rest_find(unsigned method, const char *path, const struct zc_rest_route **route,
		 struct zc_route_params *p, unsigned *allow)
{
	*allow = 0;
	*route = NULL;
	for (size_t i = 0; i < zc_rest_nroutes; i++) {
		const struct zc_rest_route *x = &zc_rest_routes[i];
		if (!zc_route_match(x->pattern, path, p))
			continue;
		if (x->methods & method) {
			*route = x;
			return 0;
		}
		*allow |= x->methods;
	}
	return *allow ? 405 : 404;
}

/* ---- arguments -------------------------------------------------------- */

/* Arguments for a tool: the JSON body, or {} for an empty body. NULL
 * with why set for a bad body, with why empty out of memory. */
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
	} else if (!strcmp(key, "keywords") || !strcmp(key, "operations")) {
		json_t *kw = json_array();
		for (const char *p = value; *p;) {
			size_t n = strcspn(p, ",");
			if (n)
				json_array_append_new(kw, json_stringn(p, n));
			p += n + (p[n] == ',');
		}
		json_object_set_new(args, key, kw);
	} else if (!strcmp(key, "includeSuperseded") || !strcmp(key, "changesOnly")) {
		/* true / 1, false / 0 / empty; anything else stays a string, which
		 * the tool's schema refuses naming the field */
		int yes = !strcmp(value, "true") || !strcmp(value, "1");
		int no = !*value || !strcmp(value, "false") || !strcmp(value, "0");
		json_object_set_new(args, key, yes || no ? json_boolean(yes) : json_string(value));
	} else {
		json_object_set_new(args, key, json_string(value));
	}
	return MHD_YES;
}

static enum MHD_Result out_of_memory(struct rest_call *k)
{
	return zc_http_send_error(k->c, k->r, 500, "internal", "the request could not be built (out of memory)");
}

/* An error of libzcor without a JSON answer: the status of its code. */
static enum MHD_Result send_code(struct rest_call *k, int rc, const char *msg)
{
	const char *code = zcor_code_name(rc);
	return zc_http_send_error(k->c, k->r, zc_http_status_of(code), code, msg ? msg : "");
}

/* The caller bound to a conversation (X-Zcor-Conversation) touches only
 * its own: 1 (and the 403 sent) for another key. */
static int other_conversation(struct rest_call *k, const char *key, const char *msg,
			      enum MHD_Result *ret)
{
	if (!k->conversation || !key || strcmp(key, k->conversation) == 0)
		return 0;
	*ret = zc_http_send_error(k->c, k->r, 403, "forbidden", msg);
	return 1;
}

static const char bound_elsewhere[] = "this caller is bound to another conversation (X-Zcor-Conversation)";

/* ---- tools ------------------------------------------------------------ */

static enum MHD_Result call_tool(struct rest_call *k, const char *tool)
{
	struct zcor_ctx ctx = {ZCOR_ACTOR_UI, k->conversation};
	char *text = json_dumps(k->args, JSON_COMPACT), *out = NULL;
	if (!text)
		return out_of_memory(k);
	int rc = zcor_tool_call(k->z, &ctx, tool, text, &out);
	zc_free(text);
	return zc_http_send_result(k->c, k->r, k->z, rc, out, k->route->ok);
}

/* Sets the route's :param as the tool argument route->param. */
static int set_param(struct rest_call *k)
{
	return !k->route->param ||
	       json_object_set_new(k->args, k->route->param, json_string(k->p.v[0])) == 0;
}

/* The tool with the arguments as sent (and the :param). */
static enum MHD_Result rest_tool(struct rest_call *k)
{
	return set_param(k) ? call_tool(k, k->route->tool) : out_of_memory(k);
}

/* The tool with only the :param (a delete or a read by id: nothing else
 * of the query goes in). */
static enum MHD_Result rest_tool_param_only(struct rest_call *k)
{
	json_object_clear(k->args);
	return rest_tool(k);
}

/* POST tools/{name}: any tool, the body its arguments. */
static enum MHD_Result rest_tool_named(struct rest_call *k) { return call_tool(k, k->p.v[0]); }

/* POST nodes: a new node (an id in the body would make it an update). */
static enum MHD_Result rest_node_create(struct rest_call *k)
{
	json_object_del(k->args, "id");
	return call_tool(k, k->route->tool);
}

static enum MHD_Result rest_tools_list(struct rest_call *k)
{
	char *t = NULL;
	int rc = zcor_tools_json(k->z, ZCOR_TOOLS_ALL, &t);
	return zc_http_send_result(k->c, k->r, k->z, rc, t, 200);
}

static enum MHD_Result rest_node_get(struct rest_call *k)
{
	struct zcor_ctx ctx = {ZCOR_ACTOR_UI, k->conversation};
	char *out = NULL;
	int rc = zcor_node_get(k->z, &ctx, k->p.v[0], &out);
	return zc_http_send_result(k->c, k->r, k->z, rc, out, 200);
}

/* GET find?keywords=&from=&to=&includeSuperseded=&limit=&offset=: the
 * page's search (zcor_memory_find: title, keywords, content, linked
 * people's aliases, with synonyms; each result says what matched). */
static enum MHD_Result rest_find(struct rest_call *k)
{
	struct zcor_ctx ctx = {ZCOR_ACTOR_UI, k->conversation};
	char *text = json_dumps(k->args, JSON_COMPACT), *out = NULL;
	if (!text)
		return out_of_memory(k);
	int rc = zcor_memory_find(k->z, &ctx, text, &out);
	zc_free(text);
	return zc_http_send_result(k->c, k->r, k->z, rc, out, 200);
}

/* ---- the memory views, stickers and media ----------------------------- */

/* GET views[?conversation=K] -> {items} (the global views and K's own,
 * or all for the host) and GET views/read?path=P: qq_memory, read-only
 * here; changes go through POST tools/qq_memory. */
static enum MHD_Result rest_views(struct rest_call *k)
{
	int list = strcmp(k->route->pattern, "views") == 0;
	const char *only = json_string_value(json_object_get(k->args, "conversation"));
	json_t *call = list ? json_pack("{s:s}", "action", "list")
			    : json_pack("{s:s, s:O?}", "action", "read", "path", json_object_get(k->args, "path"));
	struct zcor_ctx ctx = {ZCOR_ACTOR_UI, k->conversation};
	char *text = call ? json_dumps(call, JSON_COMPACT) : NULL, *out = NULL;
	json_decref(call);
	if (!text)
		return out_of_memory(k);
	int rc = zcor_tool_call(k->z, &ctx, "qq_memory", text, &out);
	zc_free(text);
	if (rc || !list)
		return zc_http_send_result(k->c, k->r, k->z, rc, out, 200);
	json_t *res = json_loads(out, 0, NULL), *items = json_array();
	zcor_free(out);
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(res, "views"), i, v) {
		const char *conv = json_string_value(json_object_get(v, "conversation"));
		if (!only || !conv || !strcmp(conv, only))
			json_array_append(items, v);
	}
	json_decref(res);
	json_t *o = items ? json_pack("{s:o}", "items", items) : NULL;
	char *body = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	enum MHD_Result ret = zc_http_send_json(k->c, k->r, 200, body);
	zc_free(body);
	return ret;
}

/* GET stickers/<file> and media/<file>: the image's bytes. */
static enum MHD_Result rest_image(struct rest_call *k)
{
	char *data = NULL;
	size_t len = 0;
	const char *mime = NULL;
	struct zcor_ctx ctx = {ZCOR_ACTOR_UI, k->conversation};
	int rc = k->route->pattern[0] == 's' ? zcor_sticker_read(k->z, k->p.v[0], &data, &len, &mime)
					     : zcor_media_read(k->z, &ctx, k->p.v[0], &data, &len, &mime);
	/* a file that cannot be read (io_error) is one zcor does not have:
	 * 404 as a missing one; every other code keeps its own status (a
	 * store error once came out as 400 "not_found": issue 13) */
	if (rc)
		return send_code(k, rc == ZCOR_EIO ? ZCOR_ENOTFOUND : rc, zcor_errmsg(k->z));
	enum MHD_Result ret = zc_http_send_text(k->c, k->r, 200, mime, data, len, "Cache-Control", "no-store");
	zcor_free(data);
	return ret;
}

/* POST check-reply: a reply's [[图片: …]] before it is sent (Q-STK). */
static enum MHD_Result rest_check_reply(struct rest_call *k)
{
	char *text = json_dumps(k->args, JSON_COMPACT), *out = NULL;
	if (!text)
		return out_of_memory(k);
	int rc = zcor_check_reply_json(k->z, text, &out);
	zc_free(text);
	return zc_http_send_result(k->c, k->r, k->z, rc, out, 200);
}

/* ---- synonyms ---------------------------------------------------------- */

static enum MHD_Result rest_synonyms_list(struct rest_call *k)
{
	char *out = NULL;
	int rc = zcor_synonyms_list(k->z, &out);
	return zc_http_send_result(k->c, k->r, k->z, rc, out, 200);
}

static enum MHD_Result rest_synonyms_expand(struct rest_call *k)
{
	const char *word = json_string_value(json_object_get(k->args, "word"));
	char *out = NULL;
	int rc = zcor_synonyms_expand(k->z, word, &out);
	return zc_http_send_result(k->c, k->r, k->z, rc, out, 200);
}

/* PUT / DELETE synonyms/{n}: group n replaced or deleted. */
static enum MHD_Result rest_synonyms_edit(struct rest_call *k)
{
	char *end = NULL, why[300] = "";
	long long idx = strtoll(k->p.v[0], &end, 10);
	if (*end || idx < 0)
		return zc_http_send_error(k->c, k->r, 404, "not_found", "no such synonym group");
	if (k->method == ZC_HTTP_DELETE) {
		/* the body may carry the group as read: {"expected": [...]} */
		json_decref(k->args);
		if (!(k->args = body_object(k->r, why, sizeof(why))))
			return why[0] ? zc_http_send_error(k->c, k->r, 400, "invalid_argument", why)
				      : out_of_memory(k);
		json_object_set_new(k->args, "terms", json_null());
	}
	json_object_set_new(k->args, "index", json_integer(idx));
	char *text = json_dumps(k->args, JSON_COMPACT), *out = NULL;
	if (!text)
		return out_of_memory(k);
	struct zcor_ctx ctx = {ZCOR_ACTOR_UI, k->conversation};
	int rc = zcor_synonyms_edit(k->z, &ctx, text, &out);
	zc_free(text);
	return zc_http_send_result(k->c, k->r, k->z, rc, out, 200);
}

/* ---- config ------------------------------------------------------------ */

static enum MHD_Result rest_config_get(struct rest_call *k)
{
	char *cfg = NULL;
	int rc = zcor_config_json(k->z, &cfg);
	return zc_http_send_result(k->c, k->r, k->z, rc, cfg, 200);
}

static enum MHD_Result rest_config_set(struct rest_call *k)
{
	/* the operator's settings (admission, provider, recall): a host
	 * acting for one conversation does not change them, as it does
	 * not restore */
	if (k->conversation)
		return zc_http_send_error(k->c, k->r, 403, "forbidden",
					  "a caller bound to a conversation cannot change config.json; only the "
					  "operator may do it (send no X-Zcor-Conversation)");
	char *text = json_dumps(k->args, JSON_COMPACT);
	if (!text)
		return out_of_memory(k);
	int rc = zcor_config_set(k->z, text);
	zc_free(text);
	if (rc) /* a bad value 400 (its details name the field), a config.json left invalid by hand 409 */
		return zc_http_send_result(k->c, k->r, k->z, rc, NULL, 200);
	return rest_config_get(k);
}

/* GET config/fields: the keys' rules, for the page's own checks. */
static enum MHD_Result rest_config_fields(struct rest_call *k)
{
	char *out = NULL;
	int rc = zcor_config_fields(k->z, &out);
	return zc_http_send_result(k->c, k->r, k->z, rc, out, 200);
}

/* ---- History: revert a change (issue 18) ------------------------------ */

/* POST history/{seq}/revert: the change of record seq undone as a new
 * recorded change (zcor_history_revert); a refusal is 409 with its
 * details. */
static enum MHD_Result rest_history_revert(struct rest_call *k)
{
	char *end = NULL;
	long long seq = strtoll(k->p.v[0], &end, 10);
	if (!*k->p.v[0] || *end || seq <= 0)
		return zc_http_send_error(k->c, k->r, 404, "not_found",
					  "no such history record; records are numbered from 1 (seq)");
	struct zcor_ctx ctx = {ZCOR_ACTOR_UI, k->conversation};
	char *out = NULL;
	int rc = zcor_history_revert(k->z, &ctx, seq, &out);
	return zc_http_send_result(k->c, k->r, k->z, rc, out, 200);
}

/* ---- the worlds (docs/QQ.md) ------------------------------------------- */

static enum MHD_Result rest_worlds(struct rest_call *k)
{
	/* every conversation's connection and group names: the operator's */
	if (k->conversation)
		return zc_http_send_error(k->c, k->r, 403, "forbidden",
					  "a caller bound to a conversation cannot read the worlds' status; only "
					  "the operator may (send no X-Zcor-Conversation)");
	pthread_mutex_lock(&k->s->lock);
	json_t *qq = k->s->qq ? zc_qq_status(k->s->qq) : json_pack("{s:b}", "enabled", 0);
	pthread_mutex_unlock(&k->s->lock);
	json_t *o = qq ? json_pack("{s:o}", "qq", qq) : NULL;
	char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	enum MHD_Result ret = zc_http_send_json(k->c, k->r, 200, text);
	zc_free(text);
	return ret;
}

/* ---- conversations and transcripts (Q-LOG) ---------------------------- */

/* (MHD-style decoding happened once, in the matcher: group%3A1 is group:1
 * here; a second decoding would make group%253A1 an alias of it) */
static const char other_key[] =
	"this caller is bound to another conversation (X-Zcor-Conversation) and may only touch its own";

static enum MHD_Result rest_conversations(struct rest_call *k)
{
	struct zcor_ctx ctx = {ZCOR_ACTOR_UI, k->conversation};
	char *out = NULL;
	int rc = zcor_conversations(k->z, &ctx, &out);
	return zc_http_send_result(k->c, k->r, k->z, rc, out, 200);
}

static enum MHD_Result rest_conversation_get(struct rest_call *k)
{
	enum MHD_Result ret;
	if (other_conversation(k, k->p.v[0], other_key, &ret))
		return ret;
	struct zcor_ctx ctx = {ZCOR_ACTOR_UI, k->conversation};
	char *out = NULL;
	int rc = zcor_conversation_get(k->z, &ctx, k->p.v[0], &out);
	return zc_http_send_result(k->c, k->r, k->z, rc, out, 200);
}

static enum MHD_Result rest_log_messages(struct rest_call *k)
{
	enum MHD_Result ret;
	if (other_conversation(k, k->p.v[0], other_key, &ret))
		return ret;
	struct zcor_ctx ctx = {ZCOR_ACTOR_UI, k->conversation};
	char *text = json_dumps(k->args, JSON_COMPACT), *out = NULL;
	if (!text)
		return out_of_memory(k);
	int rc = zcor_log_messages(k->z, &ctx, k->p.v[0], text, &out);
	zc_free(text);
	return zc_http_send_result(k->c, k->r, k->z, rc, out, 200);
}

/* Empty parameters (a form's "from=&to=") mean absent. */
static void drop_empty(json_t *args)
{
	const char *key;
	json_t *v, *tmp;
	json_object_foreach_safe(args, tmp, key, v) {
		if ((json_is_string(v) && !*json_string_value(v)) ||
		    (json_is_array(v) && json_array_size(v) == 0))
			json_object_del(args, key);
	}
}

/* A transcript page: read (oldest first), or search with keywords; empty
 * parameters mean absent. */
static enum MHD_Result rest_transcript(struct rest_call *k)
{
	enum MHD_Result ret;
	if (other_conversation(k, k->p.v[0], other_key, &ret))
		return ret;
	drop_empty(k->args);
	json_object_set_new(k->args, "action",
			    json_string(json_object_get(k->args, "keywords") ? "search" : "read"));
	json_object_set_new(k->args, "conversation", json_string(k->p.v[0]));
	return call_tool(k, "qq_transcript");
}

/* GET messages?sender=&keywords=&from=&to=&limit=&offset= (the Memory
 * page's person, issue 18): qq_transcript search across every
 * conversation the caller sees (a bound caller: its own), newest first. */
static enum MHD_Result rest_messages(struct rest_call *k)
{
	drop_empty(k->args);
	json_object_set_new(k->args, "action", json_string("search"));
	return call_tool(k, "qq_transcript");
}

static enum MHD_Result rest_digest_done(struct rest_call *k)
{
	enum MHD_Result ret;
	if (other_conversation(k, k->p.v[0], other_key, &ret))
		return ret;
	char *out = NULL;
	int rc = zcor_digest_done(k->z, k->p.v[0], &out);
	return zc_http_send_result(k->c, k->r, k->z, rc, out, 200);
}

/* POST conversations/:key/digest {}: runs the conversation's digest now,
 * whatever its line count (zcor_digest; docs/DIGEST.md). It answers when
 * the run ends (at most digestTimeoutMs): a connection has its own thread. */
static enum MHD_Result rest_digest_run(struct rest_call *k)
{
	enum MHD_Result ret;
	if (other_conversation(k, k->p.v[0], other_key, &ret))
		return ret;
	const char *key;
	json_t *v;
	json_object_foreach(k->args, key, v) {
		char why[200];
		snprintf(why, sizeof(why), "field '%s': unknown; the body of a digest run is {}",
			 ZC_Q(key, 60));
		return zc_http_send_error(k->c, k->r, 400, "invalid_argument", why);
	}
	char *out = NULL;
	int slot = -1;
	pthread_mutex_lock(&k->s->lock); /* known to shutdown, which cuts the run */
	if (k->s->digests_stopped)
		zcor_interrupt(k->z);
	for (int i = 0; i < DIGESTING_MAX && slot < 0 && !k->s->digests_stopped; i++)
		if (!k->s->digesting[i])
			k->s->digesting[slot = i] = k->z;
	int full = slot < 0 && !k->s->digests_stopped;
	pthread_mutex_unlock(&k->s->lock);
	if (full) /* a run shutdown could not cut: not started */
		return zc_http_send_error(k->c, k->r, 503, "busy",
					  "too many digest runs at once (64); try again when one ends");
	int rc = zcor_digest(k->z, k->p.v[0], "{\"trigger\": \"manual\"}", &out);
	if (slot >= 0) {
		pthread_mutex_lock(&k->s->lock);
		k->s->digesting[slot] = NULL;
		pthread_mutex_unlock(&k->s->lock);
	}
	return zc_http_send_result(k->c, k->r, k->z, rc, out, 200);
}

/* GET digests[?conversation=K&limit=N&offset=M]: the digest records, as
 * GET turns (a bound caller sees its own conversation's only). */
static enum MHD_Result rest_digests(struct rest_call *k)
{
	const char *conv = json_string_value(json_object_get(k->args, "conversation"));
	if (conv && !*conv)
		json_object_del(k->args, "conversation");
	struct zcor_ctx ctx = {ZCOR_ACTOR_UI, k->conversation};
	char *text = json_dumps(k->args, JSON_COMPACT), *out = NULL;
	if (!text)
		return out_of_memory(k);
	int rc = zcor_digests(k->z, &ctx, text, &out);
	zc_free(text);
	return zc_http_send_result(k->c, k->r, k->z, rc, out, 200);
}

/* ---- recall and prefix ----------------------------------------------- */

/* A recall call on the caller's own conversation: one bound elsewhere is
 * refused, a bound caller's conversation is the one asked. */
static enum MHD_Result recall_call(struct rest_call *k,
				   int (*call)(zcor *, const char *, char **))
{
	enum MHD_Result ret;
	const char *asked = json_string_value(json_object_get(k->args, "conversation"));
	if (other_conversation(k, asked, bound_elsewhere, &ret))
		return ret;
	if (k->conversation)
		json_object_set_new(k->args, "conversation", json_string(k->conversation));
	char *text = json_dumps(k->args, JSON_COMPACT), *out = NULL;
	if (!text)
		return out_of_memory(k);
	int rc = call(k->z, text, &out);
	zc_free(text);
	return zc_http_send_result(k->c, k->r, k->z, rc, out, 200);
}

static enum MHD_Result rest_recall(struct rest_call *k)
{
	return recall_call(k, zcor_recall);
}

/* POST recall/preview {conversation, text, senderId?, senderName?,
 * mentions?}: what the bot would get for that message (zcor_recall_preview);
 * a bound caller previews its own conversation only. */
static enum MHD_Result rest_recall_preview(struct rest_call *k)
{
	return recall_call(k, zcor_recall_preview);
}

static enum MHD_Result rest_prefix(struct rest_call *k)
{
	enum MHD_Result ret;
	const char *conv = json_string_value(json_object_get(k->args, "conversation"));
	if (other_conversation(k, conv, bound_elsewhere, &ret))
		return ret;
	char *text = NULL;
	int rc = zcor_prefix(k->z, conv ? conv : k->conversation, &text);
	/* every code its own status (a store error once came out as 400
	 * "invalid_argument": issue 13) */
	if (rc)
		return send_code(k, rc, zcor_errmsg(k->z));
	json_t *j = json_pack("{s:s}", "prefix", text);
	zcor_free(text);
	char *body = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	ret = zc_http_send_json(k->c, k->r, 200, body);
	zc_free(body);
	return ret;
}

/* ---- turn records ------------------------------------------------------ */

/* GET turns[?conversation=K&limit=N&offset=M]: a bound caller sees its
 * own conversation's only (libzcor decides; an empty parameter is none). */
static enum MHD_Result rest_turns(struct rest_call *k)
{
	const char *conv = json_string_value(json_object_get(k->args, "conversation"));
	if (conv && !*conv)
		json_object_del(k->args, "conversation");
	struct zcor_ctx ctx = {ZCOR_ACTOR_UI, k->conversation};
	char *text = json_dumps(k->args, JSON_COMPACT), *out = NULL;
	if (!text)
		return out_of_memory(k);
	int rc = zcor_turns(k->z, &ctx, text, &out);
	zc_free(text);
	return zc_http_send_result(k->c, k->r, k->z, rc, out, 200);
}

/* ---- the chat (the console world in the page) ------------------------------ */

/* The page chats in console:* conversations only. A group's or a private
 * chat's turn belongs to its world: it would take the batch of messages
 * real people sent and are waiting for the bot to answer there, move the
 * conversation's cursor past them and "answer" them into this page, where
 * nobody of that chat sees it — while the dialogue the bot keeps there
 * would hold a reply never sent and an operator's line nobody wrote. */
static const char chat_body[] = "the body is {\"conversation\"?: \"console:NAME\" (default "
				"\"console:web\"), \"text\": \"the operator's message\"}";

static enum MHD_Result chat_bad(struct rest_call *k, const char *field, const char *why)
{
	char msg[1600];
	snprintf(msg, sizeof(msg), "field '%s': %s; %s", field, why, chat_body);
	return zc_http_send_error(k->c, k->r, 400, "invalid_argument", msg);
}

/* POST chat {conversation?, text}: logs text as the operator's message
 * and answers with the turn as server-sent events (chat.c). Checked
 * first, in this order, each refusal changing nothing: the body, the
 * conversation (console:* only, a bound caller's own), the provider. */
static enum MHD_Result rest_chat(struct rest_call *k)
{
	const char *key;
	json_t *v;
	json_object_foreach(k->args, key, v) {
		if (strcmp(key, "conversation") && strcmp(key, "text"))
			return chat_bad(k, ZC_Q(key, 60), "unknown field");
	}
	json_t *jc = json_object_get(k->args, "conversation"), *jt = json_object_get(k->args, "text");
	if (jc && !json_is_null(jc) && !json_is_string(jc))
		return chat_bad(k, "conversation", "must be a string such as \"console:web\"");
	if (!json_is_string(jt) || !json_string_length(jt))
		return chat_bad(k, "text", "is required: a non-empty string");
	const char *conv = json_string_value(jc);
	if (!conv)
		conv = k->conversation ? k->conversation : "console:web";
	enum MHD_Result ret;
	if (other_conversation(k, conv, bound_elsewhere, &ret))
		return ret;
	if (zcor_check_conversation(k->z, conv))
		return chat_bad(k, "conversation", zcor_errmsg(k->z));
	if (strncmp(conv, "console:", 8) != 0) {
		char why[300];
		snprintf(why, sizeof(why),
			 "'%s' is not a console conversation: the page chats as the operator in "
			 "console:NAME only; a group's or private chat's turn is its world's",
			 ZC_Q(conv, 100));
		return chat_bad(k, "conversation", why);
	}
	/* no provider: nothing is logged, the message says how to set one up */
	char *out = NULL;
	int rc = zcor_turn(k->z, conv, "{\"check\":true}", &out);
	zcor_free(out);
	out = NULL;
	if (rc)
		return send_code(k, rc, zcor_errmsg(k->z));
	/* logged as the console world logs a typed line (world/console.c) */
	struct zcor_ctx ctx = {ZCOR_ACTOR_UI, k->conversation};
	char msg[1024];
	rc = zc_console_log(k->z, &ctx, "web", conv, json_string_value(jt), msg, sizeof(msg));
	if (rc) {
		/* the only field of the batch the caller chose is the text */
		static const char mine[] = "field 'messages[0].text': ";
		if (rc == ZCOR_EINVAL && !strncmp(msg, mine, sizeof(mine) - 1))
			return chat_bad(k, "text", msg + sizeof(mine) - 1);
		return send_code(k, rc, msg);
	}
	return zc_chat_stream(k->s, k->c, k->r, conv);
}

/* ---- the Backups and Stats panels (issue 18) ----------------------------- */

/* GET backups: the backups zcor wrote (zcor_backups; the operator's). */
static enum MHD_Result rest_backups(struct rest_call *k)
{
	struct zcor_ctx ctx = {ZCOR_ACTOR_UI, k->conversation};
	char *out = NULL;
	int rc = zcor_backups(k->z, &ctx, &out);
	return zc_http_send_result(k->c, k->r, k->z, rc, out, 200);
}

/* GET backups/:name: the file's bytes, streamed from the descriptor
 * zcor_backup_open checked (a name of zcor's own, a regular file under a
 * real backups/, no link followed), as a download. */
static enum MHD_Result rest_backup_download(struct rest_call *k)
{
	struct zcor_ctx ctx = {ZCOR_ACTOR_UI, k->conversation};
	int fd = -1;
	long long size = 0;
	int rc = zcor_backup_open(k->z, &ctx, k->p.v[0], &fd, &size);
	if (rc)
		return zc_http_send_result(k->c, k->r, k->z, rc, NULL, 200);
	/* the name is one of zcor's (letters, digits, '-', '.', 'T', 'Z'):
	 * nothing in it to quote */
	char disp[ZC_ROUTE_PARAM_MAX + 40];
	snprintf(disp, sizeof(disp), "attachment; filename=\"%s\"", k->p.v[0]);
	const char *type = strstr(k->p.v[0], ".json") ? "application/json; charset=utf-8"
						      : "text/markdown; charset=utf-8";
	return zc_http_send_fd(k->c, k->r, 200, type, fd, (uint64_t)size, "Content-Disposition", disp);
}

/* GET stats?staleDays=&bucket=&buckets=&limit=: the Stats panel's
 * figures over what the caller's scope may see (zcor_memory_stats). */
static enum MHD_Result rest_stats(struct rest_call *k)
{
	struct zcor_ctx ctx = {ZCOR_ACTOR_UI, k->conversation};
	char *text = json_dumps(k->args, JSON_COMPACT), *out = NULL;
	if (!text)
		return out_of_memory(k);
	int rc = zcor_memory_stats(k->z, &ctx, text, &out);
	zc_free(text);
	return zc_http_send_result(k->c, k->r, k->z, rc, out, 200);
}

/* ---- the routes --------------------------------------------------------- */

#define GET ZC_HTTP_GET
#define POST ZC_HTTP_POST
#define PUT ZC_HTTP_PUT
#define DELETE ZC_HTTP_DELETE

/* The first row whose pattern and method fit wins: a literal segment
 * ("synonyms/expand") comes before a :param in its place. */
const struct zc_rest_route zc_rest_routes[] = {
	{GET, "tools", rest_tools_list, 200, NULL, NULL},
	{POST, "tools/:name", rest_tool_named, 200, NULL, NULL},
	{GET, "nodes", rest_tool, 200, "zcor_memory_query", NULL},
	{GET, "find", rest_find, 200, NULL, NULL},
	{POST, "nodes", rest_node_create, 201, "zcor_memory_write", NULL},
	{GET, "nodes/:id", rest_node_get, 200, NULL, NULL},
	{PUT, "nodes/:id", rest_tool, 200, "zcor_memory_write", "id"},
	{DELETE, "nodes/:id", rest_tool_param_only, 200, "zcor_memory_delete", "id"},
	{POST | PUT, "nodes/:id/important", rest_tool, 200, "zcor_memory_important", "id"},
	{GET, "nodes/:id/trace", rest_tool_param_only, 200, "zcor_memory_trace", "id"},
	{GET, "nodes/:id/children", rest_tool_param_only, 200, "zcor_memory_children", "parentId"},
	{GET, "roots", rest_tool_param_only, 200, "zcor_memory_children", NULL},
	{POST, "merge", rest_tool, 201, "zcor_memory_merge", NULL},
	{POST, "supersede", rest_tool, 200, "zcor_memory_supersede", NULL},
	{POST, "search", rest_tool, 200, "zcor_memory_search", NULL},
	{GET, "history", rest_tool, 200, "zcor_memory_history", NULL},
	{GET, "views", rest_views, 200, NULL, NULL},
	{GET, "views/read", rest_views, 200, NULL, NULL},
	{GET, "stickers/:file", rest_image, 200, NULL, NULL},
	{GET, "media/:file", rest_image, 200, NULL, NULL},
	{POST, "check-reply", rest_check_reply, 200, NULL, NULL},
	{GET, "people", rest_tool, 200, "zcor_relationship_query", NULL},
	{GET, "people/:id", rest_tool_param_only, 200, "zcor_relationship_read", "personId"},
	{PUT, "people/:id", rest_tool, 200, "zcor_relationship_write", "personId"},
	{DELETE, "people/:id", rest_tool_param_only, 200, "zcor_relationship_delete", "personId"},
	{GET, "synonyms", rest_synonyms_list, 200, NULL, NULL},
	{POST, "synonyms", rest_tool, 200, "zcor_synonyms_add", NULL},
	{GET, "synonyms/expand", rest_synonyms_expand, 200, NULL, NULL},
	{PUT | DELETE, "synonyms/:n", rest_synonyms_edit, 200, NULL, NULL},
	{POST, "backup", rest_tool, 201, "zcor_memory_backup", NULL},
	{POST, "restore", rest_tool, 200, "zcor_memory_restore", NULL},
	{GET, "config", rest_config_get, 200, NULL, NULL},
	{GET, "config/fields", rest_config_fields, 200, NULL, NULL},
	{PUT | POST, "config", rest_config_set, 200, NULL, NULL},
	{GET, "conversations", rest_conversations, 200, NULL, NULL},
	{GET, "conversations/:key", rest_conversation_get, 200, NULL, NULL},
	{POST, "conversations/:key/messages", rest_log_messages, 200, NULL, NULL},
	{GET, "conversations/:key/messages", rest_transcript, 200, NULL, NULL},
	{POST, "conversations/:key/digest-done", rest_digest_done, 200, NULL, NULL},
	{POST, "conversations/:key/digest", rest_digest_run, 200, NULL, NULL},
	{GET, "digests", rest_digests, 200, NULL, NULL},
	{POST, "recall", rest_recall, 200, NULL, NULL},
	{POST, "recall/preview", rest_recall_preview, 200, NULL, NULL},
	{GET, "prefix", rest_prefix, 200, NULL, NULL},
	{GET, "turns", rest_turns, 200, NULL, NULL},
	{POST, "chat", rest_chat, 200, NULL, NULL},
	{GET, "worlds", rest_worlds, 200, NULL, NULL},
	/* History: revert a change (issue 18) */
	{POST, "history/:seq/revert", rest_history_revert, 200, NULL, NULL},
	/* the Backups and Stats panels (issue 18) */
	{GET, "backups", rest_backups, 200, NULL, NULL},
	{GET, "backups/:name", rest_backup_download, 200, NULL, NULL},
	{GET, "stats", rest_stats, 200, NULL, NULL},
	/* the Memory page's person (issue 18): their messages, every conversation */
	{GET, "messages", rest_messages, 200, NULL, NULL},
};
const size_t zc_rest_nroutes = sizeof(zc_rest_routes) / sizeof(zc_rest_routes[0]);

#undef GET
#undef POST
#undef PUT
#undef DELETE

/* ---- dispatch ------------------------------------------------------------ */

enum MHD_Result zc_rest_handle(struct server *s, struct MHD_Connection *c, struct request *r,
			       const char *url, const char *method, const char *conversation)
{
	struct rest_call k = {.s = s, .c = c, .r = r, .conversation = conversation,
			      .method = zc_http_method_bit(method)};
	const char *raw = r->target ? r->target : url;
	const char *path = strncmp(raw, "/api/v1/", 8) == 0 ? raw + 8 : "";
	if (!*path)
		return zc_http_send_error(c, r, 404, "not_found", "no such API route; see docs/API.md");
	unsigned allow = 0;
	int found = zc_rest_find(k.method, path, &k.route, &k.p, &allow);
	char why[300] = "";
	if (k.method & (ZC_HTTP_POST | ZC_HTTP_PUT)) {
		if (!(k.args = body_object(r, why, sizeof(why))))
			return why[0] ? zc_http_send_error(c, r, 400, "invalid_argument", why) : out_of_memory(&k);
	} else {
		if (!(k.args = json_object()))
			return out_of_memory(&k);
		MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, query_arg, k.args);
	}
	enum MHD_Result ret;
	if (found) {
		/* a known path with another method is 404 as an unknown one (as
		 * it always was; clients test for it), naming what it takes */
		char allow_text[64] = "";
		zc_http_allow_text(allow, allow_text, sizeof(allow_text));
		ret = zc_http_send_error_h(c, r, 404, "not_found", "no such API route or method; see docs/API.md",
					   found == 405 ? "Allow" : NULL, allow_text);
	} else if (!(k.z = zc_pool_take(s, r))) {
		ret = zc_http_send_error(c, r, 500, "internal", "cannot open the memory directory");
	} else {
		ret = k.route->fn(&k);
	}
	json_decref(k.args);
	return ret;
}
