/*
 * test_mcp.c — the MCP dispatcher (src/server/mcp.c) driven directly: a
 * JSON-RPC message in, the answer out, side by side. Covers what a real
 * client never sends (bad JSON, batches, wrong ids, requests before
 * initialize) and the error codes the MCP specification assigns; the
 * happy paths through the official SDK live in tests/e2e/mcp_stdio.test.mjs.
 */
#include <stdlib.h>

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
	char *err = NULL;
	CHECK_INT(zcor_config_set(z, "{\"relationships\":false}", &err), ZCOR_OK);
	zcor_free(err);
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

const struct t_case t_cases[] = {
	{"malformed_messages_get_jsonrpc_errors", malformed_messages_get_jsonrpc_errors},
	{"ids_are_echoed_exactly", ids_are_echoed_exactly},
	{"initialize_negotiates_the_version", initialize_negotiates_the_version},
	{"notifications_get_no_answer", notifications_get_no_answer},
	{"tools_list_and_call", tools_list_and_call},
	{"relationship_tools_follow_the_config", relationship_tools_follow_the_config},
	{"resources_and_prompts", resources_and_prompts},
	{NULL, NULL},
};
