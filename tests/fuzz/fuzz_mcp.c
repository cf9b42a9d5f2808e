/*
 * fuzz_mcp.c — a libFuzzer target for the MCP JSON-RPC dispatcher
 * (src/server/mcp.h): arbitrary bytes go to zc_mcp_handle() on one zcor
 * handle, opened once on a temporary memory directory holding a few nodes,
 * a person and a child node. A message that parses reaches the method
 * handlers, and through tools/call every tool's argument validation
 * (src/tools/schema.c) and the tools themselves.
 *
 * The session the message lands in depends on the input's length (so the
 * seeds need no prefix byte): not yet initialized, a stateless HTTP call,
 * after a full handshake, or bound to the conversation group:1.
 *
 * Oracle, besides ASan/UBSan: every message but a notification or a
 * response gets an answer (issue 12), and an answer is one line of JSON,
 * an object with "jsonrpc":"2.0" and exactly one of result / error.
 *
 * Build and run: `make fuzz` (clang; not part of make test); the seeds in
 * corpus-mcp/ run once in unit/fuzz_mcp_corpus (fuzz.h).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "server/mcp.h"

const char *fz_target = "fuzz_mcp";
static zcor *z;
static char *dir;

static void cleanup(void)
{
	zcor_close(z);
	z = NULL;
	fz_rmtree(dir);
	free(dir);
}

static void must_call(const char *tool, const char *args) { fz_must_call(z, tool, args); }

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	dir = fz_mkdtemp("mcp");
	z = fz_open(dir);
	atexit(cleanup);
	/* ids m000001… in creation order */
	must_call("zcor_memory_write", "{\"title\":\"北大\",\"content\":\"在海淀\",\"keywords\":[\"学校\"]}");
	must_call("zcor_memory_write", "{\"title\":\"未名湖\",\"content\":\"湖\",\"parentId\":\"m000001\"}");
	must_call("zcor_memory_write", "{\"title\":\"咖啡店\",\"content\":\"东门咖啡店周一休息\",\"keywords\":[\"咖啡\"]}");
	must_call("zcor_memory_important", "{\"id\":\"m000003\",\"important\":true}");
	must_call("zcor_relationship_write", "{\"personId\":\"10001\",\"name\":\"小明\",\"relationship\":\"朋友\","
					     "\"affinity\":10,\"reason\":\"一起吃饭\"}");
	must_call("zcor_memory_backup", NULL);
	return 0;
}

/* Whether msg is owed no answer: a notification (an object with jsonrpc
 * "2.0", a string method and no id member) or a response to us (no
 * method, a result or an error, a usable id or none). Everything else —
 * garbage included — gets exactly one answer (issue 12). */
static int silent(const uint8_t *data, size_t size)
{
	json_t *v = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
	json_t *id = json_object_get(v, "id"), *method = json_object_get(v, "method");
	const char *version = json_string_value(json_object_get(v, "jsonrpc"));
	int quiet = json_is_object(v) && (!id || json_is_string(id) || json_is_integer(id)) && version &&
		    strcmp(version, "2.0") == 0 &&
		    ((!method && (json_object_get(v, "result") || json_object_get(v, "error"))) ||
		     (!id && json_is_string(method)));
	json_decref(v);
	return quiet;
}

static void check_answer(const char *out)
{
	json_error_t je;
	json_t *v = json_loads(out, 0, &je);
	if (!v || !json_is_object(v) || strchr(out, '\n') ||
	    !json_is_string(json_object_get(v, "jsonrpc")) ||
	    strcmp(json_string_value(json_object_get(v, "jsonrpc")), "2.0") != 0 ||
	    !json_object_get(v, "id") ||
	    !json_object_get(v, "result") == !json_object_get(v, "error")) {
		fz_bug("malformed answer: %s", out);
	}
	json_t *e = json_object_get(v, "error");
	if (e && (!json_is_integer(json_object_get(e, "code")) || !json_is_string(json_object_get(e, "message")))) {
		fz_bug("malformed error: %s", out);
	}
	json_decref(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct zc_mcp_session s;
	switch (size % 4) {
	case 0: /* nothing yet: only initialize and ping are answered */
		zc_mcp_session_init(&s, NULL);
		break;
	case 1: /* a stateless HTTP POST */
		zc_mcp_session_init(&s, NULL);
		s.initialized = 1;
		break;
	case 2: /* after initialize + notifications/initialized */
		zc_mcp_session_init(&s, NULL);
		snprintf(s.protocol, sizeof(s.protocol), "%s", "2025-06-18");
		s.initialized = 1;
		break;
	default: /* a host bound to a conversation */
		zc_mcp_session_init(&s, "group:1");
		snprintf(s.protocol, sizeof(s.protocol), "%s", "2025-11-25");
		s.initialized = 1;
		break;
	}
	char *out = NULL;
	zc_mcp_handle(&s, z, (const char *)data, size, &out);
	if (out)
		check_answer(out);
	else if (!silent(data, size))
		fz_bug("no answer to a message that is owed one (%zu bytes)", size);
	zcor_free(out);
	return 0;
}
