/*
 * mcp.h — the Model Context Protocol over JSON-RPC 2.0, independent of the
 * transport: `zcor mcp` (stdio, one message per line) and `zcor serve`'s
 * /mcp (Streamable HTTP) both hand each incoming message to
 * zc_mcp_handle() and send back what it returns.
 *
 * Server layer: speaks only include/zcor.h. Tools come from the registry
 * (zcor_tools_json), tool calls go through zcor_tool_call, the system
 * prefix is the prompt "system-prefix", memory nodes are resources
 * zcor://node/<id>. The conversation a session acts in is set by the host
 * (zcor mcp --conversation, or the HTTP binding header) — never by a
 * model-supplied argument.
 */
#ifndef ZC_MCP_H
#define ZC_MCP_H

#include <stddef.h>

#include "zcor.h"

/*
 * Before initialize has been answered, a session answers only initialize
 * and ping; any other request gets -32600 "not initialized" (the client
 * SHOULD NOT send them, the specification says; we refuse rather than guess
 * a protocol version). A transport without sessions (a stateless HTTP POST)
 * sets initialized = 1 itself to serve a one-off request.
 */
struct zc_mcp_session {
	char protocol[32];      /* negotiated version, "" before initialize */
	int initialized;        /* notifications/initialized received (or set by a stateless host) */
	char conversation[96];  /* "" = the host plane */
	enum zcor_actor actor;  /* ZCOR_ACTOR_MODEL for MCP clients */
};

/* Protocol versions this server speaks, newest first, NULL-terminated. */
extern const char *const zc_mcp_versions[];

void zc_mcp_session_init(struct zc_mcp_session *s, const char *conversation);

/*
 * Handles one JSON-RPC message (a request or a notification; batches are
 * refused). *response is the JSON text to send back (caller frees with
 * zcor_free): one line, for every message but a notification or a
 * response to us, for which it is NULL — whatever the message holds and
 * whatever failed while answering it (then -32603 for its id).
 */
void zc_mcp_handle(struct zc_mcp_session *s, zcor *z, const char *msg, size_t len, char **response);

#endif
