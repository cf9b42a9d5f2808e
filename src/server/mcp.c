/*
 * mcp.c — the Model Context Protocol server core: one JSON-RPC 2.0 message
 * in, at most one message out, whatever carries them (stdio lines in
 * `zcor mcp`, POST bodies in `zcor serve`'s /mcp).
 *
 * Server layer: it speaks only include/zcor.h and jansson (and base/'s
 * UTF-8 and buffer helpers, the layer every other stands on). Tools are the
 * registry's (zcor_tools_json, zcor_tool_call), the system prefix is the
 * prompt "system-prefix", memory nodes are the resources zcor://node/<id>.
 * It holds no rule of the seeds and never prints: every answer, failures
 * included, goes back to the caller as JSON-RPC — and every message owed
 * an answer gets one (issue 12): input quoted in messages goes through
 * ZC_Q, text from below is made UTF-8, and an answer that still cannot be
 * encoded becomes a hand-written -32603 for the same id.
 *
 * Errors follow the MCP specification (2025-11-25, same in 2025-06-18 and
 * 2025-03-26): malformed JSON-RPC and unknown methods are JSON-RPC errors;
 * an unknown tool, prompt or malformed resource uri is -32602; a missing
 * resource is -32002; a tool that runs and fails (bad arguments included,
 * SEP-1303) is a result with isError true, so the model can read why.
 */
#include <ctype.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/json.h"
#include "base/utf8.h"
#include "server/mcp.h"

#define SERVER_VERSION "0.1.0"
#define NODE_URI "zcor://node/"
#define PREFIX_PROMPT "system-prefix"
#define RESOURCES_PAGE 100

const char *const zc_mcp_versions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", NULL};

/* JSON-RPC 2.0 error codes, and the one MCP adds for resources. */
enum {
	RPC_PARSE_ERROR = -32700,
	RPC_INVALID_REQUEST = -32600,
	RPC_METHOD_NOT_FOUND = -32601,
	RPC_INVALID_PARAMS = -32602,
	RPC_INTERNAL_ERROR = -32603,
	MCP_RESOURCE_NOT_FOUND = -32002,
};

/* One request being answered: the handler sets either a result or err. */
struct call {
	struct zc_mcp_session *s;
	zcor *z;
	json_t *params; /* always an object ({} when absent) */
	int err_code;
	char err_msg[1024];
	json_t *err_data; /* owned; NULL when none */
	char *raw;        /* owned: the result as JSON text, when the handler built it so */
};

/* Records a JSON-RPC error on the call and returns NULL (the "no result").
 * The message is formatted whole, then cut on a character boundary to fit
 * err_msg, invalid bytes as '?': it always goes into JSON. */
__attribute__((format(printf, 3, 4))) static json_t *fail(struct call *c, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *full = zc_malloc(n > 0 ? (size_t)n + 1 : 1);
	full[0] = '\0';
	va_start(ap, fmt);
	if (n > 0)
		vsnprintf(full, (size_t)n + 1, fmt, ap);
	va_end(ap);
	zc_utf8_quote(c->err_msg, sizeof(c->err_msg), full, sizeof(c->err_msg));
	zc_free(full);
	c->err_code = code;
	return NULL;
}

/* A JSON string of text from below (a prefix with PERSONA.md in it, a node
 * as JSON): invalid UTF-8 becomes U+FFFD rather than losing the answer. */
static json_t *text_string(const char *text)
{
	json_t *v = json_string(text ? text : "");
	if (!v) {
		char *ok = zc_utf8_lossy(text);
		v = json_string(ok);
		zc_free(ok);
	}
	return v;
}

static struct zcor_ctx call_ctx(const struct call *c)
{
	struct zcor_ctx ctx = {c->s->actor, c->s->conversation[0] ? c->s->conversation : NULL};
	return ctx;
}

/* params.<key> as a string; NULL when absent. A present non-string fails. */
static int param_string(struct call *c, const char *key, int required, const char **out)
{
	json_t *v = json_object_get(c->params, key);
	*out = NULL;
	if (!v || json_is_null(v)) {
		if (required)
			fail(c, RPC_INVALID_PARAMS, "params.%s is required (a string)", key);
		return !required;
	}
	if (!json_is_string(v)) {
		fail(c, RPC_INVALID_PARAMS, "params.%s must be a string", key);
		return 0;
	}
	*out = json_string_value(v);
	return 1;
}

/* The message of a libzcor error, {"error":{"code","message"}} as
 * zcor_errjson gives it. */
static const char *zcor_error_message(json_t *res, zcor *z)
{
	const char *m = json_string_value(json_object_get(json_object_get(res, "error"), "message"));
	return m ? m : zcor_errmsg(z);
}

/* ---- lifecycle -------------------------------------------------------- */

static const char INSTRUCTIONS_ZH[] =
	"zcor 是你的长期记忆。谈到过去的人和事之前，先用 zcor_memory_search（按标题、同义词扩展）"
	"或 zcor_memory_query（按关键词和时间）查找，用 zcor_memory_read / zcor_memory_trace 看全文和上下文。"
	"学到值得长期记住的事实、偏好、约定时用 zcor_memory_write 记下：先查重，已有就按 id 更新。"
	"过时的记忆用 zcor_memory_supersede 或 zcor_memory_merge 处理，不要删除；"
	"最重要的至多 5 条用 zcor_memory_important 标记。";
static const char INSTRUCTIONS_REL_ZH[] =
	"对人的关系和好感用 zcor_relationship_* 工具记录。";
static const char INSTRUCTIONS_EN[] =
	"\n\nzcor is your long-term memory. Before talking about past people and events, look them up "
	"with zcor_memory_search (titles, synonym expansion) or zcor_memory_query (keywords, time), and "
	"read a node in context with zcor_memory_read / zcor_memory_trace. Write lasting facts, "
	"preferences and agreements with zcor_memory_write; search first and update an existing id "
	"rather than adding a duplicate. Supersede or merge outdated memories instead of deleting "
	"them; mark at most five as important.";
static const char INSTRUCTIONS_REL_EN[] =
	" Record relationships and affinity towards people with the zcor_relationship_* tools.";
static const char INSTRUCTIONS_TAIL[] =
	"\n\nPrompt \"system-prefix\": persona + important memories. Resources: zcor://node/<id>.";

/* Relationship guidance only while relationship memory is on (SPEC §3.1). */
static int relationships_on(zcor *z)
{
	char *cfg = NULL;
	zcor_config_json(z, &cfg);
	json_t *j = json_loads(cfg ? cfg : "", 0, NULL);
	json_t *rel = json_object_get(j, "relationships");
	int on = !json_is_false(rel);
	json_decref(j);
	zcor_free(cfg);
	return on;
}

static json_t *instructions(zcor *z)
{
	int rel = relationships_on(z);
	size_t n = sizeof(INSTRUCTIONS_ZH) + sizeof(INSTRUCTIONS_REL_ZH) + sizeof(INSTRUCTIONS_EN) +
		   sizeof(INSTRUCTIONS_REL_EN) + sizeof(INSTRUCTIONS_TAIL);
	char *buf = zc_malloc(n);
	if (!buf)
		return json_string("");
	snprintf(buf, n, "%s%s%s%s%s", INSTRUCTIONS_ZH, rel ? INSTRUCTIONS_REL_ZH : "", INSTRUCTIONS_EN,
		 rel ? INSTRUCTIONS_REL_EN : "", INSTRUCTIONS_TAIL);
	json_t *s = json_string(buf);
	zc_free(buf);
	return s;
}

/* The client's version when we speak it, else our newest (the client then
 * decides whether it can go on, per the lifecycle's version negotiation). */
static const char *negotiate(const char *wanted)
{
	for (const char *const *v = zc_mcp_versions; *v; v++)
		if (strcmp(*v, wanted) == 0)
			return *v;
	return zc_mcp_versions[0];
}

static json_t *m_initialize(struct call *c)
{
	const char *wanted = NULL;
	if (c->s->protocol[0])
		return fail(c, RPC_INVALID_REQUEST, "the session is already initialized (protocol %s)",
			    c->s->protocol);
	if (!param_string(c, "protocolVersion", 1, &wanted))
		return NULL;
	const char *version = negotiate(wanted);
	snprintf(c->s->protocol, sizeof(c->s->protocol), "%s", version);
	return json_pack("{s:s, s:{s:{s:b}, s:{s:b}, s:{s:b, s:b}}, s:{s:s, s:s, s:s}, s:o}",
			 "protocolVersion", version, "capabilities", "tools", "listChanged", 0, "prompts",
			 "listChanged", 0, "resources", "subscribe", 0, "listChanged", 0, "serverInfo",
			 "name", "zcor", "title", "zcor — long-term memory", "version", SERVER_VERSION,
			 "instructions", instructions(c->z));
}

static json_t *m_ping(struct call *c) { return json_object(); }

/* ---- tools ------------------------------------------------------------ */

/* The registry's tools as offered under config.json, or NULL on failure. */
static json_t *offered_tools(struct call *c)
{
	char *text = NULL;
	zcor_tools_json(c->z, 0, &text);
	json_t *list = json_loads(text ? text : "", 0, NULL);
	zcor_free(text);
	if (!json_is_array(list)) {
		json_decref(list);
		return fail(c, RPC_INTERNAL_ERROR, "the tool registry did not answer a list");
	}
	return list;
}

/* A registry entry as an MCP Tool: descriptionEn is ours, not MCP's; the
 * schema names its dialect, as 2025-11-25 asks (2020-12 is the default). */
static json_t *mcp_tool(json_t *t)
{
	json_t *schema = json_object();
	json_object_set_new(schema, "$schema", json_string("https://json-schema.org/draft/2020-12/schema"));
	json_object_update(schema, json_object_get(t, "inputSchema"));
	return json_pack("{s:O, s:O, s:O, s:o}", "name", json_object_get(t, "name"), "title",
			 json_object_get(t, "title"), "description", json_object_get(t, "description"),
			 "inputSchema", schema);
}

static json_t *m_tools_list(struct call *c)
{
	const char *cursor;
	/* one page holds every tool: a cursor is accepted and changes nothing */
	if (!param_string(c, "cursor", 0, &cursor))
		return NULL;
	json_t *list = offered_tools(c);
	if (!list)
		return NULL;
	json_t *tools = json_array();
	size_t i;
	json_t *t;
	json_array_foreach(list, i, t) json_array_append_new(tools, mcp_tool(t));
	json_decref(list);
	return json_pack("{s:o}", "tools", tools);
}

static json_t *text_content(const char *text)
{
	return json_pack("[{s:s, s:o}]", "type", "text", "text", text_string(text));
}

static json_t *m_tools_call(struct call *c)
{
	const char *name = NULL;
	json_t *res = NULL, *out = NULL;
	char *args = NULL, *text = NULL;
	if (!param_string(c, "name", 1, &name))
		goto out;
	json_t *a = json_object_get(c->params, "arguments");
	if (a && !json_is_null(a) && !json_is_object(a)) {
		fail(c, RPC_INVALID_PARAMS, "params.arguments of tool '%s' must be an object", ZC_Q(name, 100));
		goto out;
	}
	if (!zcor_tool_offered(c->z, name)) {
		fail(c, RPC_INVALID_PARAMS, "unknown tool '%s': not offered in this memory directory; "
		     "tools/list lists them", ZC_Q(name, 100));
		goto out;
	}
	args = a && !json_is_null(a) ? json_dumps(a, JSON_COMPACT) : NULL;
	struct zcor_ctx ctx = call_ctx(c);
	int rc = zcor_tool_call(c->z, &ctx, name, args, &text);
	if (rc == ZCOR_OK && text && text[0] == '{') {
		/* the answer is written once around the tool's JSON text (an
		 * object from jansson, so valid UTF-8): parsing it back and
		 * dumping it twice was most of a large answer's instructions
		 * (issue 19: 60% of a search over MCP) */
		struct zc_buf b = ZC_BUF_INIT;
		zc_buf_adds(&b, "{\"content\":[{\"type\":\"text\",\"text\":");
		zc_json_buf_string(&b, text);
		zc_buf_adds(&b, "}],\"structuredContent\":");
		zc_buf_adds(&b, text);
		zc_buf_adds(&b, ",\"isError\":false}");
		c->raw = zc_buf_detach(&b);
		goto out;
	}
	res = json_loads(rc == ZCOR_OK ? text : zcor_errjson(c->z), 0, NULL);
	if (!json_is_object(res)) {
		fail(c, RPC_INTERNAL_ERROR, "tool '%s' answered something that is not a JSON object", ZC_Q(name, 100));
		goto out;
	}
	out = json_pack("{s:o, s:O, s:b}", "content",
			text_content(rc == ZCOR_OK ? text : zcor_error_message(res, c->z)),
			"structuredContent", res, "isError", rc != ZCOR_OK);
out:
	json_decref(res);
	zcor_free(args);
	zcor_free(text);
	return out;
}

/* ---- prompts ---------------------------------------------------------- */

static const char PREFIX_DESCRIPTION[] =
	"系统前缀：人设（PERSONA.md）、系统规则、记忆使用指引和本会话可见的重要记忆。"
	" / The system prefix: persona, system rules, memory guidance and the important memories "
	"this conversation may see.";

static json_t *m_prompts_list(struct call *c)
{
	const char *cursor;
	if (!param_string(c, "cursor", 0, &cursor))
		return NULL;
	return json_pack("{s:[{s:s, s:s, s:s}]}", "prompts", "name", PREFIX_PROMPT, "title",
			 "系统前缀 / System prefix", "description", PREFIX_DESCRIPTION);
}

static json_t *m_prompts_get(struct call *c)
{
	const char *name;
	if (!param_string(c, "name", 1, &name))
		return NULL;
	json_t *a = json_object_get(c->params, "arguments");
	if (a && !json_is_null(a) && !json_is_object(a))
		return fail(c, RPC_INVALID_PARAMS, "params.arguments must be an object");
	if (strcmp(name, PREFIX_PROMPT) != 0)
		return fail(c, RPC_INVALID_PARAMS, "unknown prompt '%s'; prompts/list lists them", ZC_Q(name, 100));
	char *text = NULL;
	if (zcor_prefix(c->z, c->s->conversation[0] ? c->s->conversation : NULL, &text) != ZCOR_OK)
		return fail(c, RPC_INTERNAL_ERROR, "cannot build the system prefix: %s", ZC_Q(zcor_errmsg(c->z), 400));
	json_t *r = json_pack("{s:s, s:[{s:s, s:{s:s, s:o}}]}", "description", PREFIX_DESCRIPTION, "messages",
			      "role", "user", "content", "type", "text", "text", text_string(text));
	zcor_free(text);
	return r;
}

/* ---- resources -------------------------------------------------------- */

/* zcor://node/<id>, the id percent-encoded outside RFC 3986's unreserved set. */
static json_t *node_uri(const char *id)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(id), k = sizeof(NODE_URI) - 1;
	char *buf = zc_malloc(k + 3 * n + 1);
	if (!buf)
		return NULL;
	memcpy(buf, NODE_URI, k);
	for (const unsigned char *p = (const unsigned char *)id; *p; p++) {
		if (isalnum(*p) || strchr("-._~", *p)) {
			buf[k++] = (char)*p;
		} else {
			buf[k++] = '%';
			buf[k++] = hex[*p >> 4];
			buf[k++] = hex[*p & 15];
		}
	}
	buf[k] = '\0';
	json_t *s = json_string(buf); /* NULL if the id was not UTF-8: never from zcor */
	zc_free(buf);
	return s;
}

static int hexval(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	ch = tolower(ch);
	return ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
}

/* The node id of a zcor://node/<id> uri (caller frees), or NULL. */
static char *uri_node_id(const char *uri)
{
	size_t k = sizeof(NODE_URI) - 1;
	if (strncmp(uri, NODE_URI, k) != 0 || !uri[k])
		return NULL;
	const char *p = uri + k;
	char *id = zc_malloc(strlen(p) + 1), *q = id;
	if (!id)
		return NULL;
	for (; *p; p++) {
		int hi, lo;
		if (*p == '/' || *p == '?' || *p == '#')
			goto bad;
		if (*p != '%') {
			*q++ = *p;
			continue;
		}
		if ((hi = hexval((unsigned char)p[1])) < 0 || (lo = hexval((unsigned char)p[2])) < 0 ||
		    (hi == 0 && lo == 0))
			goto bad;
		*q++ = (char)(hi << 4 | lo);
		p += 2;
	}
	*q = '\0';
	return id;
bad:
	zc_free(id);
	return NULL;
}

static json_t *m_resources_list(struct call *c)
{
	const char *cursor;
	char *text = NULL;
	json_t *page = NULL, *out = NULL;
	if (!param_string(c, "cursor", 0, &cursor))
		return NULL;
	struct zcor_ctx ctx = call_ctx(c);
	int rc = zcor_node_list(c->z, &ctx, cursor, RESOURCES_PAGE, &text);
	page = json_loads(rc == ZCOR_OK ? text : zcor_errjson(c->z), 0, NULL);
	if (rc != ZCOR_OK) {
		fail(c, rc == ZCOR_EINVAL ? RPC_INVALID_PARAMS : RPC_INTERNAL_ERROR, "%s",
		     ZC_Q(zcor_error_message(page, c->z), 400));
		goto out;
	}
	json_t *resources = json_array();
	size_t i;
	json_t *it;
	json_array_foreach(json_object_get(page, "items"), i, it) {
		json_t *id = json_object_get(it, "id"), *uri = node_uri(json_string_value(id) ? json_string_value(id) : "");
		json_t *r = json_pack("{s:o?, s:O, s:O?, s:s}", "uri", uri, "name", id, "title",
				      json_object_get(it, "title"), "mimeType", "application/json");
		json_t *updated = json_object_get(it, "updatedAt");
		if (r && json_is_string(updated))
			json_object_set_new(r, "annotations", json_pack("{s:O}", "lastModified", updated));
		if (r)
			json_array_append_new(resources, r);
	}
	out = json_pack("{s:o}", "resources", resources);
	json_t *next = json_object_get(page, "nextCursor");
	if (json_is_string(next))
		json_object_set(out, "nextCursor", next);
out:
	json_decref(page);
	zcor_free(text);
	return out;
}

static json_t *m_resources_templates_list(struct call *c)
{
	const char *cursor;
	if (!param_string(c, "cursor", 0, &cursor))
		return NULL;
	return json_pack("{s:[{s:s, s:s, s:s, s:s, s:s}]}", "resourceTemplates", "uriTemplate",
			 NODE_URI "{id}", "name", "memory node", "title", "记忆节点 / Memory node",
			 "description", "一条记忆节点的完整 JSON / one memory node as JSON", "mimeType",
			 "application/json");
}

static json_t *m_resources_read(struct call *c)
{
	const char *uri;
	char *id = NULL, *text = NULL;
	json_t *out = NULL;
	if (!param_string(c, "uri", 1, &uri))
		return NULL;
	if (!(id = uri_node_id(uri)))
		return fail(c, RPC_INVALID_PARAMS, "uri '%s' is not a memory node; use " NODE_URI "<id>", ZC_Q(uri, 200));
	struct zcor_ctx ctx = call_ctx(c);
	int rc = zcor_node_get(c->z, &ctx, id, &text);
	if (rc == ZCOR_OK) {
		out = json_pack("{s:[{s:s, s:s, s:o}]}", "contents", "uri", uri, "mimeType", "application/json",
				"text", text_string(text));
	} else {
		json_t *res = json_loads(zcor_errjson(c->z), 0, NULL);
		int code = rc == ZCOR_ENOTFOUND ? MCP_RESOURCE_NOT_FOUND
			   : rc == ZCOR_EINVAL	 ? RPC_INVALID_PARAMS
						 : RPC_INTERNAL_ERROR;
		if (code == MCP_RESOURCE_NOT_FOUND) {
			fail(c, code, "resource not found: %s", ZC_Q(zcor_error_message(res, c->z), 400));
			c->err_data = json_pack("{s:s}", "uri", uri);
		} else {
			fail(c, code, "%s", ZC_Q(zcor_error_message(res, c->z), 400));
		}
		json_decref(res);
	}
	zc_free(id);
	zcor_free(text);
	return out;
}

/* ---- dispatch --------------------------------------------------------- */

static const struct method {
	const char *name;
	json_t *(*fn)(struct call *c);
	int before_init; /* may be answered before initialize */
} methods[] = {
	{"initialize", m_initialize, 1},
	{"ping", m_ping, 1},
	{"tools/list", m_tools_list, 0},
	{"tools/call", m_tools_call, 0},
	{"prompts/list", m_prompts_list, 0},
	{"prompts/get", m_prompts_get, 0},
	{"resources/list", m_resources_list, 0},
	{"resources/templates/list", m_resources_templates_list, 0},
	{"resources/read", m_resources_read, 0},
	{NULL, NULL, 0},
};

static const struct method *find_method(const char *name)
{
	for (const struct method *m = methods; m->name; m++)
		if (strcmp(m->name, name) == 0)
			return m;
	return NULL;
}

/* Takes ownership of data. NULL only when jansson cannot allocate:
 * zc_mcp_handle then answers with answer_unencodable(). */
static json_t *error_response(json_t *id, int code, const char *message, json_t *data)
{
	json_t *err = json_pack("{s:i, s:o}", "code", code, "message", text_string(message));
	if (err && data)
		json_object_set(err, "data", data);
	json_decref(data);
	return json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id ? id : json_null(), "error", err);
}

/* The id of a request as JSON text. It came out of json_loadb, so it is
 * valid UTF-8 text or an integer. */
static void buf_add_id(struct zc_buf *b, const json_t *id)
{
	if (json_is_string(id))
		zc_json_buf_string(b, json_string_value(id));
	else if (json_is_integer(id))
		zc_buf_addf(b, "%" JSON_INTEGER_FORMAT, json_integer_value(id));
	else
		zc_buf_adds(b, "null");
}

/*
 * The answer when the real one could not be built or encoded (jansson out
 * of memory, or a result it refused): a JSON-RPC error for the same id,
 * written without jansson, which may be what failed. The id came out of
 * json_loadb, so it is valid UTF-8 text or an integer.
 */
static char *answer_unencodable(const json_t *id)
{
	struct zc_buf b = ZC_BUF_INIT;
	zc_buf_adds(&b, "{\"jsonrpc\":\"2.0\",\"id\":");
	buf_add_id(&b, id);
	zc_buf_adds(&b, ",\"error\":{\"code\":-32603,\"message\":\"internal error: the answer could not be "
			"encoded as JSON; the request may have taken effect\"}}");
	return zc_buf_detach(&b);
}

/* Notifications get no answer. initialized completes the handshake;
 * cancelled needs nothing: a request runs to its end before the next
 * message is read (stdio), or within its own POST (HTTP), so there is
 * never an in-flight request here to stop. Others are ignored, as the
 * specification allows for notifications a side does not know. */
static void notification(struct zc_mcp_session *s, const char *method)
{
	if (strcmp(method, "notifications/initialized") == 0 && s->protocol[0])
		s->initialized = 1;
}

/* The response to a request: a JSON tree, or NULL and *raw its text when
 * the method built its result as text. */
static json_t *request(struct zc_mcp_session *s, zcor *z, json_t *id, const char *method, json_t *params,
		       char **raw)
{
	const struct method *m = find_method(method);
	if (!m) {
		char msg[4 * 100 + 64];
		snprintf(msg, sizeof(msg), "method '%s' not found", ZC_Q(method, 100));
		return error_response(id, RPC_METHOD_NOT_FOUND, msg, NULL);
	}
	if (!m->before_init && !s->protocol[0] && !s->initialized)
		return error_response(id, RPC_INVALID_REQUEST,
				      "the session is not initialized; send initialize first", NULL);
	if (params && !json_is_object(params))
		return error_response(id, RPC_INVALID_PARAMS, "params must be an object", NULL);
	struct call c = {.s = s, .z = z, .params = params ? json_incref(params) : json_object()};
	json_t *result = m->fn(&c);
	json_decref(c.params);
	if (!result && c.raw) {
		struct zc_buf b = ZC_BUF_INIT;
		zc_buf_adds(&b, "{\"jsonrpc\":\"2.0\",\"id\":");
		buf_add_id(&b, id);
		zc_buf_adds(&b, ",\"result\":");
		zc_buf_adds(&b, c.raw);
		zc_buf_addc(&b, '}');
		zc_free(c.raw);
		json_decref(c.err_data);
		*raw = zc_buf_detach(&b);
		return NULL;
	}
	if (!result) {
		if (!c.err_code)
			fail(&c, RPC_INTERNAL_ERROR, "%s failed without saying why", method);
		return error_response(id, c.err_code, c.err_msg, c.err_data);
	}
	json_decref(c.err_data);
	return json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result", result);
}

void zc_mcp_session_init(struct zc_mcp_session *s, const char *conversation)
{
	memset(s, 0, sizeof(*s));
	if (conversation)
		snprintf(s->conversation, sizeof(s->conversation), "%s", conversation);
	s->actor = ZCOR_ACTOR_MODEL;
}

void zc_mcp_handle(struct zc_mcp_session *s, zcor *z, const char *msg, size_t len, char **response)
{
	json_error_t je;
	json_t *out = NULL, *id = NULL;
	int silent = 0; /* a notification, or a response to us: nothing goes back */
	char buf[4 * 160 + 80];
	*response = NULL;
	json_t *req = json_loadb(msg, len, JSON_DECODE_ANY, &je);
	if (!req) {
		snprintf(buf, sizeof(buf), "parse error: %s (line %d, column %d)", ZC_Q(je.text, 160), je.line,
			 je.column);
		out = error_response(NULL, RPC_PARSE_ERROR, buf, NULL);
		goto send;
	}
	if (json_is_array(req)) {
		out = error_response(NULL, RPC_INVALID_REQUEST,
				     "batches are not supported; send one JSON-RPC message at a time", NULL);
		goto send;
	}
	if (!json_is_object(req)) {
		out = error_response(NULL, RPC_INVALID_REQUEST, "a JSON-RPC message must be an object", NULL);
		goto send;
	}
	json_t *method = json_object_get(req, "method");
	id = json_object_get(req, "id");
	if (id && !json_is_string(id) && !json_is_integer(id)) {
		id = NULL; /* not an id we can echo: JSON-RPC answers such a request with null */
		out = error_response(NULL, RPC_INVALID_REQUEST, "id must be a string or an integer", NULL);
		goto send;
	}
	if (!json_is_string(json_object_get(req, "jsonrpc")) ||
	    strcmp(json_string_value(json_object_get(req, "jsonrpc")), "2.0") != 0) {
		out = error_response(id, RPC_INVALID_REQUEST, "jsonrpc must be \"2.0\"", NULL);
		goto send;
	}
	if (!method && (json_object_get(req, "result") || json_object_get(req, "error"))) {
		silent = 1; /* a response: this server sends no requests, so none is awaited */
		goto send;
	}
	if (!json_is_string(method)) {
		out = error_response(id, RPC_INVALID_REQUEST, "method must be a string", NULL);
		goto send;
	}
	if (!id) {
		silent = 1;
		notification(s, json_string_value(method));
	} else {
		out = request(s, z, id, json_string_value(method), json_object_get(req, "params"), response);
	}
send:
	/* Whatever went wrong above, a message that is owed an answer gets one. */
	if (out && !*response)
		*response = json_dumps(out, JSON_COMPACT);
	if (!*response && !silent)
		*response = answer_unencodable(id);
	json_decref(out);
	json_decref(req);
}
