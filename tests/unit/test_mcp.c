/*
 * test_mcp.c — the MCP dispatcher (src/server/mcp.c) driven directly: a
 * JSON-RPC message in, the answer out, side by side. Covers what a real
 * client never sends (bad JSON, batches, wrong ids, requests before
 * initialize) and the error codes the MCP specification assigns; the
 * happy paths through the official SDK live in tests/e2e/mcp_stdio.test.mjs.
 */
#include <stdlib.h>

#include "base/alloc.h"
#include "harness.h"
#include "server/mcp.h"

/* Sends msg; returns the parsed answer, or NULL when there is none. */
static json_t *rpc(struct zc_mcp_session *s, zcor *z, const char *msg)
{
	char *out = NULL;
	zc_mcp_handle(s, z, msg, strlen(msg), &out);
	if (!out)
		return NULL;
	json_error_t je;
	json_t *v = json_loads(out, 0, &je);
	if (!v || strchr(out, '\n')) {
		fprintf(stderr, "answer to %s is not one line of JSON: %s\n", msg, out);
		t_failures++;
	}
	zcor_free(out);
	return v;
}

static long long err_code(json_t *v) { return t_int(v, "error.code"); }

#define CHECK_ERR(s, z, msg, code)                                                           \
	do {                                                                                 \
		json_t *r_ = rpc(s, z, msg);                                                 \
		CHECK_INT(err_code(r_), code);                                               \
		CHECK(json_is_string(t_get(r_, "error.message")) && *t_str(r_, "error.message")); \
		json_decref(r_);                                                             \
	} while (0)

static const char INIT[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
			   "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
			   "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";

static void start(struct zc_mcp_session *s, zcor *z, const char *conv)
{
	zc_mcp_session_init(s, conv);
	json_decref(rpc(s, z, INIT));
	CHECK(rpc(s, z, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}") == NULL);
	CHECK(s->initialized);
}

static void malformed_messages_get_jsonrpc_errors(void)
{
	zcor *z = t_open();
	struct zc_mcp_session s;
	start(&s, z, NULL);
	CHECK_ERR(&s, z, "{\"jsonrpc\":\"2.0\",\"id\":1,", -32700);
	CHECK_ERR(&s, z, "not json", -32700);
	CHECK_ERR(&s, z, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", -32600);
	CHECK_ERR(&s, z, "42", -32600);
	CHECK_ERR(&s, z, "{\"id\":1,\"method\":\"ping\"}", -32600);
	CHECK_ERR(&s, z, "{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", -32600);
	CHECK_ERR(&s, z, "{\"jsonrpc\":\"2.0\",\"id\":1}", -32600);
	CHECK_ERR(&s, z, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}", -32600);
	CHECK_ERR(&s, z, "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", -32600);
	CHECK_ERR(&s, z, "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", -32600);
	CHECK_ERR(&s, z, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"no/such\"}", -32601);
	CHECK_ERR(&s, z, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":[1]}", -32602);
	/* a parse error cannot know the id: null */
	json_t *r = rpc(&s, z, "{oops");
	CHECK(json_is_null(t_get(r, "id")));
	json_decref(r);
	zcor_close(z);
}

static void ids_are_echoed_exactly(void)
{
	zcor *z = t_open();
	struct zc_mcp_session s;
	start(&s, z, NULL);
	json_t *r = rpc(&s, z, "{\"jsonrpc\":\"2.0\",\"id\":\"abc-1\",\"method\":\"ping\"}");
	CHECK_STR(t_str(r, "id"), "abc-1");
	CHECK(json_is_object(t_get(r, "result")) && json_object_size(t_get(r, "result")) == 0);
	json_decref(r);
	r = rpc(&s, z, "{\"jsonrpc\":\"2.0\",\"id\":9007199254740993,\"method\":\"ping\"}");
	CHECK_INT(t_int(r, "id"), 9007199254740993LL);
	json_decref(r);
	r = rpc(&s, z, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"no/such\"}");
	CHECK(json_is_integer(t_get(r, "id")) && t_int(r, "id") == 0);
	json_decref(r);
	zcor_close(z);
}

static void initialize_negotiates_the_version(void)
{
	zcor *z = t_open();
	struct zc_mcp_session s;
	zc_mcp_session_init(&s, NULL);
	/* before initialize: only ping */
	CHECK_ERR(&s, z, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}", -32600);
	json_t *r = rpc(&s, z, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
	CHECK(json_is_object(t_get(r, "result")));
	json_decref(r);
	CHECK_ERR(&s, z, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}", -32602);
	r = rpc(&s, z, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
		       "{\"protocolVersion\":\"2025-03-26\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
	CHECK_STR(t_str(r, "result.protocolVersion"), "2025-03-26");
	CHECK_STR(t_str(r, "result.serverInfo.name"), "zcor");
	CHECK_STR(t_str(r, "result.serverInfo.version"), "0.1.0");
	CHECK(json_is_object(t_get(r, "result.capabilities.tools")));
	CHECK(json_is_object(t_get(r, "result.capabilities.prompts")));
	CHECK(json_is_object(t_get(r, "result.capabilities.resources")));
	CHECK(strstr(t_str(r, "result.instructions"), "长期记忆") != NULL);
	json_decref(r);
	CHECK_STR(s.protocol, "2025-03-26");
	/* answered initialize is enough to serve requests */
	r = rpc(&s, z, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
	CHECK(json_array_size(t_get(r, "result.tools")) > 0);
	json_decref(r);
	CHECK_ERR(&s, z, INIT, -32600); /* twice */

	zc_mcp_session_init(&s, NULL);
	r = rpc(&s, z, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"1999-01-01\"}}");
	CHECK_STR(t_str(r, "result.protocolVersion"), zc_mcp_versions[0]);
	json_decref(r);
	/* a stateless host marks the session itself */
	zc_mcp_session_init(&s, NULL);
	s.initialized = 1;
	r = rpc(&s, z, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"prompts/list\"}");
	CHECK_STR(t_str(r, "result.prompts.0.name"), "system-prefix");
	json_decref(r);
	zcor_close(z);
}

static void notifications_get_no_answer(void)
{
	zcor *z = t_open();
	struct zc_mcp_session s;
	start(&s, z, NULL);
	CHECK(rpc(&s, z, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":5}}") == NULL);
	CHECK(rpc(&s, z, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/whatever\"}") == NULL);
	/* a response to a request we never sent */
	CHECK(rpc(&s, z, "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}") == NULL);
	zcor_close(z);
}

static void tools_list_and_call(void)
{
	zcor *z = t_open();
	struct zc_mcp_session s;
	start(&s, z, NULL);
	json_t *r = rpc(&s, z, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"cursor\":\"x\"}}");
	json_t *t0 = t_get(r, "result.tools.0");
	CHECK_STR(t_str(t0, "name"), "zcor_memory_write");
	CHECK_STR(t_str(t0, "inputSchema.$schema"), "https://json-schema.org/draft/2020-12/schema");
	CHECK_STR(t_str(t0, "inputSchema.type"), "object");
	CHECK(json_object_get(t0, "descriptionEn") == NULL);
	json_decref(r);

	r = rpc(&s, z, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
		       "\"zcor_memory_write\",\"arguments\":{\"title\":\"北大\",\"content\":\"在海淀\"}}}");
	CHECK(json_is_false(t_get(r, "result.isError")));
	CHECK_STR(t_str(r, "result.content.0.type"), "text");
	CHECK_STR(t_str(r, "result.structuredContent.node.title"), "北大");
	json_t *parsed = json_loads(t_str(r, "result.content.0.text"), 0, NULL);
	CHECK(json_equal(parsed, t_get(r, "result.structuredContent")));
	json_decref(parsed);
	json_decref(r);

	r = rpc(&s, z, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":"
		       "\"zcor_memory_read\",\"arguments\":{\"id\":\"nope\"}}}");
	CHECK(json_is_true(t_get(r, "result.isError")));
	CHECK_STR(t_str(r, "result.structuredContent.error.code"), "not_found");
	CHECK_STR(t_str(r, "result.content.0.text"), t_str(r, "result.structuredContent.error.message"));
	json_decref(r);
	/* bad arguments are the tool's error, so the model can read them */
	r = rpc(&s, z, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":"
		       "\"zcor_memory_write\",\"arguments\":{\"title\":5}}}");
	CHECK(json_is_true(t_get(r, "result.isError")));
	CHECK_STR(t_str(r, "result.structuredContent.error.code"), "invalid_argument");
	json_decref(r);

	CHECK_ERR(&s, z, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"nope\"}}", -32602);
	CHECK_ERR(&s, z, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{}}", -32602);
	CHECK_ERR(&s, z, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":"
			 "{\"name\":\"zcor_memory_read\",\"arguments\":[1]}}", -32602);
	zcor_close(z);
}

static void relationship_tools_follow_the_config(void)
{
	zcor *z = t_open();
	struct zc_mcp_session s;
	CHECK_INT(zcor_config_set(z, "{\"relationships\":false}"), ZCOR_OK);
	zc_mcp_session_init(&s, NULL);
	json_t *r = rpc(&s, z, INIT);
	CHECK(strstr(t_str(r, "result.instructions"), "zcor_relationship") == NULL);
	json_decref(r);
	r = rpc(&s, z, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
	size_t i;
	json_t *t;
	json_array_foreach(t_get(r, "result.tools"), i, t)
		CHECK(strncmp(t_str(t, "name"), "zcor_relationship_", 18) != 0);
	json_decref(r);
	CHECK_ERR(&s, z, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
			 "{\"name\":\"zcor_relationship_read\",\"arguments\":{\"personId\":\"1\"}}}", -32602);
	zcor_close(z);
}

static void resources_and_prompts(void)
{
	zcor *z = t_open();
	struct zc_mcp_session s;
	json_t *w = t_call(z, "group:1", "zcor_memory_write", "{\"title\":\"群里的事\",\"content\":\"c\"}");
	char id[64];
	snprintf(id, sizeof(id), "%s", t_str(w, "node.id"));
	json_decref(w);
	start(&s, z, "group:1");

	json_t *r = rpc(&s, z, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/list\"}");
	char uri[128];
	snprintf(uri, sizeof(uri), "zcor://node/%s", id);
	CHECK_STR(t_str(r, "result.resources.0.uri"), uri);
	CHECK_STR(t_str(r, "result.resources.0.name"), id);
	CHECK_STR(t_str(r, "result.resources.0.title"), "群里的事");
	CHECK_STR(t_str(r, "result.resources.0.mimeType"), "application/json");
	CHECK(t_get(r, "result.nextCursor") == NULL);
	json_decref(r);
	CHECK_ERR(&s, z, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/list\",\"params\":{\"cursor\":\"bogus\"}}", -32602);

	char msg[256];
	snprintf(msg, sizeof(msg), "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/read\",\"params\":{\"uri\":\"%s\"}}", uri);
	r = rpc(&s, z, msg);
	CHECK_STR(t_str(r, "result.contents.0.uri"), uri);
	json_t *node = json_loads(t_str(r, "result.contents.0.text"), 0, NULL);
	CHECK_STR(t_str(node, "node.title"), "群里的事");
	json_decref(node);
	json_decref(r);
	/* another conversation does not see it: not found */
	struct zc_mcp_session other;
	start(&other, z, "group:2");
	CHECK_ERR(&other, z, msg, -32002);
	CHECK_ERR(&s, z, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/read\",\"params\":{\"uri\":\"zcor://node/nope\"}}", -32002);
	CHECK_ERR(&s, z, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/read\",\"params\":{\"uri\":\"file:///etc/passwd\"}}", -32602);
	CHECK_ERR(&s, z, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/read\",\"params\":{\"uri\":\"zcor://node/\"}}", -32602);
	CHECK_ERR(&s, z, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/read\",\"params\":{\"uri\":\"zcor://node/a%zz\"}}", -32602);
	/* an id that decodes to bytes that are not UTF-8 (found by the fuzzer:
	 * the error message quoting it could not become JSON) */
	CHECK_ERR(&s, z, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/read\",\"params\":{\"uri\":\"zcor://node/m%30%d30%301\"}}", -32002);
	CHECK_ERR(&s, z, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/read\",\"params\":{}}", -32602);

	r = rpc(&s, z, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"resources/templates/list\"}");
	CHECK_STR(t_str(r, "result.resourceTemplates.0.uriTemplate"), "zcor://node/{id}");
	json_decref(r);

	r = rpc(&s, z, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"prompts/get\",\"params\":{\"name\":\"system-prefix\"}}");
	CHECK_STR(t_str(r, "result.messages.0.role"), "user");
	CHECK(strstr(t_str(r, "result.messages.0.content.text"), "external_event_frame") != NULL);
	json_decref(r);
	CHECK_ERR(&s, z, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"prompts/get\",\"params\":{\"name\":\"nope\"}}", -32602);
	zcor_close(z);
}

/* ---- issue 12: every request with an id gets exactly one answer ------ */

/* n copies of s (caller frees). */
static char *repeat(const char *s, int n)
{
	size_t k = strlen(s);
	char *out = malloc(k * (size_t)n + 1);
	for (int i = 0; i < n; i++)
		memcpy(out + k * (size_t)i, s, k);
	out[k * (size_t)n] = '\0';
	return out;
}

/* The one answer to msg: one line of JSON-RPC 2.0 for that id (checked
 * against want_id, a JSON text), exactly one of result / error. */
static json_t *answer(struct zc_mcp_session *s, zcor *z, const char *msg, const char *want_id)
{
	char *out = NULL;
	zc_mcp_handle(s, z, msg, strlen(msg), &out);
	if (!out) {
		fprintf(stderr, "no answer to %s\n", msg);
		t_failures++;
		return NULL;
	}
	json_t *v = json_loads(out, 0, NULL), *want = json_loads(want_id, JSON_DECODE_ANY, NULL);
	CHECK(v && !strchr(out, '\n'));
	CHECK_STR(t_str(v, "jsonrpc"), "2.0");
	CHECK(!json_object_get(v, "result") != !json_object_get(v, "error"));
	if (!json_equal(json_object_get(v, "id"), want)) {
		fprintf(stderr, "answer to %s has the wrong id (want %s): %s\n", msg, want_id, out);
		t_failures++;
	}
	json_decref(want);
	zcor_free(out);
	return v;
}

/* The four repros: a 50-character Chinese name is 150 bytes, and a cut at
 * 100 (or 200) bytes split a character, so jansson refused the message and
 * nothing was sent. Now the name is quoted whole (or cut after a whole
 * character, with "…"). */
static void issue12_quoted_names_are_cut_on_character_boundaries(void)
{
	zcor *z = t_open();
	struct zc_mcp_session s;
	start(&s, z, NULL);
	char *name = repeat("中", 50), *long_name = repeat("记", 250), msg[2048];
	struct {
		const char *fmt, *quoted;
		int code;
		int cut; /* 250 characters are cut (not whole in the message) */
	} cases[] = {
		{"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"%s\"}", name, -32601, 1},
		{"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\"}}", name, -32602, 1},
		{"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\",\"arguments\":1}}",
		 name, -32602, 1},
		{"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"prompts/get\",\"params\":{\"name\":\"%s\"}}", name, -32602, 1},
		{"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/read\",\"params\":{\"uri\":\"zcor://memory/%s\"}}",
		 name, -32602, 1},
		{"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/read\",\"params\":{\"uri\":\"zcor://node/x/%s\"}}",
		 name, -32602, 1},
		{"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/read\",\"params\":{\"uri\":\"zcor://node/%s\"}}",
		 name, -32002, 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		/* the name alone, then 250 characters that must be cut */
		for (int longer = 0; longer < 2; longer++) {
			snprintf(msg, sizeof(msg), cases[i].fmt, longer ? long_name : cases[i].quoted);
			json_t *r = answer(&s, z, msg, "2");
			CHECK_INT(err_code(r), cases[i].code);
			const char *m = t_str(r, "error.message");
			if (!longer)
				CHECK_HAS(m, name);
			else if (cases[i].cut)
				CHECK_HAS(m, "记记\xe2\x80\xa6"); /* whole characters, then … */
			else
				CHECK_HAS(m, long_name);
			json_decref(r);
		}
	}
	free(name);
	free(long_name);
	zcor_close(z);
}

/* ids of every JSON type: strings and integers are echoed; the other
 * types are invalid requests, answered with id null (JSON-RPC 2.0 §5: the
 * id could not be used); "id": null is a request with a null id, not a
 * notification (a notification has no id member), and is answered too. */
static void issue12_ids_of_every_json_type(void)
{
	zcor *z = t_open();
	struct zc_mcp_session s;
	start(&s, z, NULL);
	static const struct {
		const char *id, *echo;
		int code; /* 0: a result */
	} ids[] = {
		{"0", "0", 0},
		{"-7", "-7", 0},
		{"9223372036854775807", "9223372036854775807", 0},
		{"\"请求-中文\"", "\"请求-中文\"", 0},
		{"\"\\u4e2d\\u6587\\ud83d\\ude00\"", "\"中文😀\"", 0},
		{"\"\"", "\"\"", 0},
		{"null", "null", -32600},
		{"1.5", "null", -32600},
		{"true", "null", -32600},
		{"{\"a\":1}", "null", -32600},
		{"[1]", "null", -32600},
		{"\"\\ud800\"", "null", -32700}, /* a lone surrogate: not JSON jansson accepts */
		{"99999999999999999999", "null", -32700}, /* beyond int64 */
	};
	char msg[512];
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		for (int unknown = 0; unknown < 2; unknown++) {
			snprintf(msg, sizeof(msg), "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"%s\"}", ids[i].id,
				 unknown ? "不存在的方法" : "ping");
			json_t *r = answer(&s, z, msg, ids[i].echo);
			CHECK_INT(err_code(r), ids[i].code ? ids[i].code : unknown ? -32601 : 0);
			json_decref(r);
		}
	}
	/* no id member: a notification, whatever its method — no answer */
	CHECK(rpc(&s, z, "{\"jsonrpc\":\"2.0\",\"method\":\"不存在的方法\"}") == NULL);
	CHECK(rpc(&s, z, "{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"name\":\"中\"}}") == NULL);
	zcor_close(z);
}

/* A title and content with bytes that are not UTF-8 (a row written before
 * imports checked their input): every answer that carries them still
 * comes, with U+FFFD in their place. So does a PERSONA.md that is not
 * UTF-8 in the system prefix. */
static void issue12_invalid_utf8_in_results_is_answered(void)
{
	zcor *z = t_open();
	json_decref(t_call_ok(z, NULL, "zcor_memory_write", "{\"title\":\"北大\",\"content\":\"在海淀\"}"));
	json_decref(t_call_ok(z, NULL, "zcor_memory_important", "{\"id\":\"m000001\",\"important\":true}"));
	t_sql_exec(z, "UPDATE nodes SET title = CAST(x'e58c97ff' AS TEXT), content = CAST(x'e59ca8e6b5' AS TEXT)");
	char path[4096];
	snprintf(path, sizeof(path), "%s/PERSONA.md", zcor_dir(z));
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs("我是\xff\xfe小助手\n", f);
		fclose(f);
	}
	struct zc_mcp_session s;
	start(&s, z, NULL);
	json_t *r = answer(&s, z, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
				  "{\"name\":\"zcor_memory_read\",\"arguments\":{\"id\":\"m000001\"}}}", "1");
	CHECK_STR(t_str(r, "result.structuredContent.node.title"), "北\xef\xbf\xbd");
	CHECK_HAS(t_str(r, "result.structuredContent.node.content"), "在\xef\xbf\xbd");
	json_decref(r);
	r = answer(&s, z, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
			  "{\"name\":\"zcor_memory_important\",\"arguments\":{\"id\":\"m000001\",\"important\":true}}}", "2");
	CHECK_STR(t_str(r, "result.structuredContent.importantOrder.0.title"), "北\xef\xbf\xbd");
	json_decref(r);
	r = answer(&s, z, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":"
			  "{\"name\":\"zcor_memory_query\",\"arguments\":{}}}", "3");
	CHECK_STR(t_str(r, "result.structuredContent.items.0.title"), "北\xef\xbf\xbd");
	json_decref(r);
	r = answer(&s, z, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"resources/list\"}", "4");
	CHECK_STR(t_str(r, "result.resources.0.title"), "北\xef\xbf\xbd");
	json_decref(r);
	r = answer(&s, z, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"resources/read\",\"params\":"
			  "{\"uri\":\"zcor://node/m000001\"}}", "5");
	CHECK_HAS(t_str(r, "result.contents.0.text"), "北\xef\xbf\xbd");
	json_decref(r);
	r = answer(&s, z, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"prompts/get\",\"params\":"
			  "{\"name\":\"system-prefix\"}}", "6");
	CHECK_HAS(t_str(r, "result.messages.0.content.text"), "我是\xef\xbf\xbd\xef\xbf\xbd小助手");
	json_decref(r);
	zcor_close(z);
}

/* jansson's allocator failing after n allocations: json_pack and
 * json_dumps return NULL at every point in turn, and still every request
 * with an id gets one well-formed answer for its id (a parse that failed
 * for want of memory cannot know the id: null). Only methods that do not
 * reach libzcor, whose own policy for jansson's NULL is its own. */
static long jansson_budget = -1;

static void *failing_malloc(size_t n)
{
	if (jansson_budget == 0)
		return NULL;
	if (jansson_budget > 0)
		jansson_budget--;
	return malloc(n);
}

static void issue12_answer_when_json_cannot_be_built(void)
{
	zcor *z = t_open();
	struct zc_mcp_session s;
	start(&s, z, NULL);
	static const char *const msgs[] = {
		"{\"jsonrpc\":\"2.0\",\"id\":\"请求\",\"method\":\"ping\"}",
		"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"不存在的方法\"}",
		"{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"prompts/list\"}",
		"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"resources/templates/list\"}",
		"{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"ping\",\"params\":[1]}",
		"{\"jsonrpc\":\"1.0\",\"id\":11,\"method\":\"ping\"}",
		"{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}",
		"{\"jsonrpc\":\"2.0\",\"id\":12,",
	};
	for (size_t i = 0; i < sizeof(msgs) / sizeof(msgs[0]); i++) {
		json_t *head = json_loads(msgs[i], 0, NULL);
		json_t *id = json_object_get(head, "id");
		int echo = json_is_string(id) || json_is_integer(id);
		/* how many allocations the parse takes: with fewer, the id is not known */
		json_set_alloc_funcs(failing_malloc, free);
		jansson_budget = 1L << 30;
		json_decref(json_loadb(msgs[i], strlen(msgs[i]), JSON_DECODE_ANY, NULL));
		long parse_allocs = (1L << 30) - jansson_budget;
		jansson_budget = -1;
		json_set_alloc_funcs(malloc, free);
		int answered_in_full = 0;
		for (long n = 0; n < 200 && !answered_in_full; n++) {
			char *out = NULL;
			json_set_alloc_funcs(failing_malloc, free);
			jansson_budget = n;
			zc_mcp_handle(&s, z, msgs[i], strlen(msgs[i]), &out);
			answered_in_full = jansson_budget > 0; /* it needed fewer than n */
			jansson_budget = -1;
			json_set_alloc_funcs(malloc, free);
			if (!out) {
				fprintf(stderr, "no answer to %s when jansson fails after %ld allocations\n", msgs[i], n);
				t_failures++;
				continue;
			}
			json_t *v = json_loads(out, 0, NULL);
			CHECK(v != NULL);
			CHECK_STR(t_str(v, "jsonrpc"), "2.0");
			CHECK(!json_object_get(v, "result") != !json_object_get(v, "error"));
			json_t *got = json_object_get(v, "id");
			if (n >= parse_allocs && !(echo ? json_equal(got, id) : json_is_null(got))) {
				fprintf(stderr, "wrong id for %s (jansson fails after %ld): %s\n", msgs[i], n, out);
				t_failures++;
			}
			json_decref(v);
			zcor_free(out);
		}
		CHECK(answered_in_full);
		json_decref(head);
	}
	zcor_close(z);
}

/* issue 19: a tools/call answer is written once around the tool's JSON
 * text. Parsing a 40-hit query's answer back into a tree (for
 * structuredContent) and dumping it twice cost about 30 allocations per
 * hit and most of the call's instructions; now the MCP layer adds a
 * handful to what the tool itself allocates, and the answer says the
 * same: structuredContent is the tool's result, content[0].text its text,
 * the id echoed as it came (a string here). */
static void issue19_tools_call_answer_built_once(void)
{
	zcor *z = t_open();
	for (int i = 0; i < 40; i++)
		json_decref(t_call_ok(z, NULL, "zcor_memory_write",
				      "{\"title\":\"火锅%d\",\"content\":\"第%d次去吃火锅，\\\"辣\\\"\\n\\t到哭\"}", i, i));
	static const char args[] = "{\"keywords\":[\"火锅\"],\"limit\":100}";
	char *text = NULL;
	CHECK_INT(zcor_tool_call(z, NULL, "zcor_memory_query", args, &text), ZCOR_OK); /* warm */
	zcor_free(text);
	text = NULL;
	unsigned long a0 = zc_alloc_count();
	CHECK_INT(zcor_tool_call(z, NULL, "zcor_memory_query", args, &text), ZCOR_OK);
	unsigned long tool = zc_alloc_count() - a0;
	struct zc_mcp_session s;
	start(&s, z, NULL);
	static const char msg[] = "{\"jsonrpc\":\"2.0\",\"id\":\"q-1\",\"method\":\"tools/call\",\"params\":"
				  "{\"name\":\"zcor_memory_query\",\"arguments\":{\"keywords\":[\"火锅\"],\"limit\":100}}}";
	char *out = NULL;
	a0 = zc_alloc_count();
	zc_mcp_handle(&s, z, msg, strlen(msg), &out);
	unsigned long mcp = zc_alloc_count() - a0;
	if (mcp > tool + 100) {
		fprintf(stderr, "tools/call allocated %lu times, the tool itself %lu\n", mcp, tool);
		t_failures++;
	}
	json_t *r = out ? json_loads(out, 0, NULL) : NULL;
	json_t *want = text ? json_loads(text, 0, NULL) : NULL;
	CHECK(r && want);
	CHECK_STR(t_str(r, "jsonrpc"), "2.0");
	CHECK_STR(t_str(r, "id"), "q-1");
	CHECK_INT(t_int(r, "result.structuredContent.total"), 40);
	CHECK(json_equal(t_get(r, "result.structuredContent"), want));
	CHECK_STR(t_str(r, "result.content.0.type"), "text");
	json_t *again = json_loads(t_str(r, "result.content.0.text") ? t_str(r, "result.content.0.text") : "", 0, NULL);
	CHECK(json_equal(again, want));
	CHECK(json_is_false(t_get(r, "result.isError")));
	CHECK_HAS(t_str(r, "result.structuredContent.items.0.content"), "\"辣\"\n\t到哭");
	json_decref(again);
	json_decref(want);
	json_decref(r);
	zcor_free(out);
	zcor_free(text);
	zcor_close(z);
}

const struct t_case t_cases[] = {
	{"malformed_messages_get_jsonrpc_errors", malformed_messages_get_jsonrpc_errors},
	{"ids_are_echoed_exactly", ids_are_echoed_exactly},
	{"initialize_negotiates_the_version", initialize_negotiates_the_version},
	{"notifications_get_no_answer", notifications_get_no_answer},
	{"tools_list_and_call", tools_list_and_call},
	{"relationship_tools_follow_the_config", relationship_tools_follow_the_config},
	{"resources_and_prompts", resources_and_prompts},
	{"issue12_quoted_names_are_cut_on_character_boundaries", issue12_quoted_names_are_cut_on_character_boundaries},
	{"issue12_ids_of_every_json_type", issue12_ids_of_every_json_type},
	{"issue12_invalid_utf8_in_results_is_answered", issue12_invalid_utf8_in_results_is_answered},
	{"issue12_answer_when_json_cannot_be_built", issue12_answer_when_json_cannot_be_built},
	{"issue19_tools_call_answer_built_once", issue19_tools_call_answer_built_once},
	{NULL, NULL},
};
