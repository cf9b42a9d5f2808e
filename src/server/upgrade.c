/*
 * upgrade.c — the OneBot v11 reverse endpoint of `zcor serve` (issue 15):
 * NapCat's `network.websocketClients` connects to worlds.qq.path on
 * serve's own address, and the request becomes a WebSocket. The checks
 * of the upgrade request are here (GET, Upgrade: websocket, Connection:
 * upgrade, Sec-WebSocket-Version 13, a valid Sec-WebSocket-Key); NapCat's
 * own token, X-Self-ID and x-client-role are the QQ world's to judge
 * (zc_qq_check_reverse). Then the 101 goes out through libmicrohttpd's
 * upgrade and the socket goes to zc_qq_adopt, which frames it with wslay
 * (world/ws.c) on a thread of its own; closing it is
 * MHD_upgrade_action(CLOSE), after which MHD closes the descriptor.
 *
 * Server layer, called from http.c's admit() after the Host and Origin
 * checks and instead of serve's token (NapCat does not have it). The
 * connection's deadlines (conn.c) stop applying once it is upgraded.
 */
#include <string.h>
#include <microhttpd.h>

#include "server/internal.h"
#include "world/qq.h"
#include "world/ws.h"

/* world/qq.c is the QQ world's (engineer S, issue 15) and may not be
 * linked into every program that links the server library yet: weak
 * references let them link, and s->qq is NULL wherever it is not (nothing
 * else makes a struct zc_qq), so these are never called then. */
#pragma weak zc_qq_reverse_path
#pragma weak zc_qq_check_reverse
#pragma weak zc_qq_adopt

int zc_upgrade_is_reverse(const struct server *s, const char *url)
{
	if (!s->qq || !zc_qq_reverse_path)
		return 0;
	const char *path = zc_qq_reverse_path(s->qq);
	return path && url && strcmp(url, path) == 0;
}

static void close_upgraded(void *ud, int fd)
{
	MHD_upgrade_action(ud, MHD_UPGRADE_ACTION_CLOSE);
}

/* After the 101 went out, on the connection's thread: the socket is the
 * QQ world's from here (zc_qq_adopt runs it on its own thread). */
static void on_upgraded(void *cls, struct MHD_Connection *c, void *con_cls, const char *extra,
			size_t extra_len, MHD_socket sock, struct MHD_UpgradeResponseHandle *urh)
{
	struct server *s = cls;
	zc_conn_phase(s, c, CONN_UPGRADED);
	const char *self = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Self-ID");
	/* on failure zc_qq_adopt has called close_upgraded already */
	zc_qq_adopt(s->qq, sock, extra, extra_len, self, close_upgraded, urh);
}

static int header_has(struct MHD_Connection *c, const char *name, const char *token)
{
	const char *v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
	return v && zc_ws_has_token(v, strlen(v), token);
}

enum MHD_Result zc_upgrade_handle(struct server *s, struct MHD_Connection *c, struct request *r,
				  const char *method)
{
	if (strcmp(method, "GET") != 0)
		return zc_http_send_error_h(c, r, 405, "invalid_argument",
					    "the OneBot endpoint takes a WebSocket upgrade: GET only", "Allow", "GET");
	if (!header_has(c, "Upgrade", "websocket") || !header_has(c, "Connection", "upgrade"))
		return zc_http_send_error_h(c, r, 426, "invalid_argument",
					    "the OneBot endpoint is a WebSocket: send Upgrade: websocket and "
					    "Connection: Upgrade (NapCat's network.websocketClients does)",
					    "Upgrade", "websocket");
	const char *ver = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Sec-WebSocket-Version");
	if (!ver || strcmp(ver, "13") != 0)
		return zc_http_send_error_h(c, r, 426, "invalid_argument",
					    "Sec-WebSocket-Version must be 13", "Sec-WebSocket-Version", "13");
	char accept[29];
	if (zc_ws_accept_key(MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Sec-WebSocket-Key"), accept))
		return zc_http_send_error(c, r, 400, "invalid_argument",
					  "Sec-WebSocket-Key must be 24 characters of base64 (16 random bytes)");
	char why[512] = "";
	int status = zc_qq_check_reverse(
		s->qq, MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization"),
		MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "access_token"),
		MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Self-ID"),
		MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Client-Role"), why, sizeof(why));
	if (status)
		return zc_http_send_error(c, r, status >= 400 && status <= 599 ? status : 400,
					  status == 401 ? "unauthorized" : status == 403 ? "forbidden" : "invalid_argument",
					  why[0] ? why : "NapCat's connection was refused");
	struct MHD_Response *resp = MHD_create_response_for_upgrade(on_upgraded, s);
	if (!resp)
		return MHD_NO;
	/* (MHD adds Connection: Upgrade itself) */
	MHD_add_response_header(resp, "Upgrade", "websocket");
	MHD_add_response_header(resp, "Sec-WebSocket-Accept", accept);
	r->status = 101;
	enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_SWITCHING_PROTOCOLS, resp);
	MHD_destroy_response(resp);
	return ret;
}
