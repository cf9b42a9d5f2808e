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
 * Oracle, besides ASan/UBSan: an answer, when there is one, is one line of
 * JSON, an object with "jsonrpc":"2.0" and exactly one of result / error.
 *
 * Build and run: `make fuzz` (clang; not part of make test).
 */
#define _GNU_SOURCE
#include <ftw.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/mcp.h"

static zcor *z;
static char dir[256];

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	remove(path);
	return 0;
}

static void cleanup(void)
{
	zcor_close(z);
	z = NULL;
	if (dir[0])
		nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void must_call(const char *tool, const char *args)
{
	struct zcor_ctx ctx = {ZCOR_ACTOR_CLI, NULL};
	char *out = NULL;
	if (zcor_tool_call(z, &ctx, tool, args, &out) != ZCOR_OK) {
		fprintf(stderr, "fuzz_mcp: setup %s failed: %s\n", tool, out ? out : "");
		abort();
	}
	zcor_free(out);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	/* tmpfs when there is one: every tool call is a transaction */
	const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : (getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	snprintf(dir, sizeof(dir), "%s/zcor-fuzz-XXXXXX", base);
	if (!mkdtemp(dir)) {
		perror("fuzz_mcp: mkdtemp");
		abort();
	}
	char *err = NULL;
	if (zcor_open(&z, dir, &err) != ZCOR_OK) {
		fprintf(stderr, "fuzz_mcp: cannot open %s: %s\n", dir, err ? err : "");
		abort();
	}
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

static void check_answer(const char *out)
{
	json_error_t je;
	json_t *v = json_loads(out, 0, &je);
	if (!v || !json_is_object(v) || strchr(out, '\n') ||
	    !json_is_string(json_object_get(v, "jsonrpc")) ||
	    strcmp(json_string_value(json_object_get(v, "jsonrpc")), "2.0") != 0 ||
	    !json_object_get(v, "id") ||
	    !json_object_get(v, "result") == !json_object_get(v, "error")) {
		fprintf(stderr, "fuzz_mcp: malformed answer: %s\n", out);
		abort();
	}
	json_t *e = json_object_get(v, "error");
	if (e && (!json_is_integer(json_object_get(e, "code")) || !json_is_string(json_object_get(e, "message")))) {
		fprintf(stderr, "fuzz_mcp: malformed error: %s\n", out);
		abort();
	}
	json_decref(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
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
	zcor_free(out);
	return 0;
}
