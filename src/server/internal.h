/*
 * internal.h — what the files of `zcor serve` share (server layer, private
 * to src/server/): the server and request structs, the answer helpers
 * (http.c), the handle pool (pool.c), the page (assets.c) and REST
 * (rest.c). Nothing outside src/server/ includes it; the public face of
 * the server stays server/http.h.
 */
#ifndef ZC_SERVER_INTERNAL_H
#define ZC_SERVER_INTERNAL_H

#include <microhttpd.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "server/mcp.h"

#define BODY_MAX (1u << 20)     /* 1 MiB per request body */
#define SESSIONS_MAX 256
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

/* What the watchdog knows of a connection (MHD's socket context). */
enum conn_phase {
	CONN_HEADERS,  /* waiting for a request's line and headers */
	CONN_BODY,     /* headers in, the body arriving */
	CONN_HANDLING, /* the request is whole: dispatched, answering */
	CONN_UPGRADED, /* a WebSocket now (upgrade.c): no deadline, for good */
};

struct conn {
	struct conn *prev, *next;
	int fd;
	enum conn_phase phase;
	double since; /* zc_time_mono_ms when the phase began */
	int cut;      /* shut down by the watchdog */
	int linger;   /* answered before its body was read: drain it on close */
	char addr[INET6_ADDRSTRLEN];
	char client[INET6_ADDRSTRLEN]; /* who, for the limits: addr, or its /64 */
};

#define DIGESTING_MAX 64 /* REST digest runs at once that shutdown can cut */

struct server {
	const char *dir;
	char token[80];
	char listen_host[64];
	int port;
	int loopback;
	pthread_mutex_t lock; /* the pool, the sessions, in_flight, qq (the pointer) */
	zcor *pool[POOL_MAX];
	int npool;
	pthread_cond_t idle;
	int in_flight; /* requests begun and not yet completed */
	/* the handles of the digest runs REST started (POST …/digest), so that
	 * shutdown can cut them (zcor_interrupt); under lock */
	zcor *digesting[DIGESTING_MAX];
	int digests_stopped; /* shutdown began: a new run is cut at once */
	struct session sessions[SESSIONS_MAX];
	/* the connections and their deadlines (conn_lock guards the list
	 * and every entry's phase; the watchdog waits on conn_wake) */
	pthread_mutex_t conn_lock;
	pthread_cond_t conn_wake;
	struct conn *conns;
	double header_ms, body_ms;
	int stopping;
	/* the QQ world when worlds.qq.enabled (world/qq.h), else NULL: the
	 * reverse endpoint adopts NapCat's socket into it; GET worlds reads it */
	struct zc_qq *qq;
};

struct request {
	char method[12];
	char path[128]; /* for the log: the raw target without its query */
	char *target;   /* the raw target without its query, not decoded (REST routes) */
	int started;    /* the first call (headers in) happened */
	int nul;        /* the raw target has %00 */
	char *body;
	size_t len, cap;
	int too_big;
	int status;
	struct timespec start;
	zcor *z; /* the handle this request took from the pool, or NULL */
};

/* ---- answers (http.c) ---- */

/* The HTTP status of a libzcor error code name ("not_found" → 404). */
int zc_http_status_of(const char *code);
/* Queues body (copied) with the headers every answer carries, plus one
 * more (hname: hval) when hname is not NULL. */
enum MHD_Result zc_http_send_text(struct MHD_Connection *c, struct request *r, int status,
				  const char *type, const char *body, size_t len, const char *hname,
				  const char *hval);
/* The same headers for size bytes streamed from fd (a file the caller
 * opened; MHD closes it when the answer is sent or dropped). */
enum MHD_Result zc_http_send_fd(struct MHD_Connection *c, struct request *r, int status,
				const char *type, int fd, uint64_t size, const char *hname,
				const char *hval);
/* {"error":{"code","message"}}; msg may quote the request (made valid
 * UTF-8, cut to a length). */
enum MHD_Result zc_http_send_error(struct MHD_Connection *c, struct request *r, int status,
				   const char *code, const char *msg);
/* The same with one more header (an Allow beside a 404 or 405). */
enum MHD_Result zc_http_send_error_h(struct MHD_Connection *c, struct request *r, int status,
				     const char *code, const char *msg, const char *hname,
				     const char *hval);
/* json (not taken; NULL → 500 "out of memory") as application/json. */
enum MHD_Result zc_http_send_json(struct MHD_Connection *c, struct request *r, int status,
				  const char *json);
/* The answer of a zcor call on z that returned rc: its result json with
 * ok_status, or on failure zcor_errjson(z) with its code's status. Takes
 * json (zcor_free). */
enum MHD_Result zc_http_send_result(struct MHD_Connection *c, struct request *r, zcor *z, int rc,
				    char *json, int ok_status);

/* ---- the token (http.c) ---- */

/* Constant-time comparison with the server's token; NULL is no match. */
int zc_http_token_ok(const struct server *s, const char *given);
/* The token of "Authorization: Bearer …", or NULL. */
const char *zc_http_bearer(struct MHD_Connection *c);
/* The page's cookie zcor_token, or NULL. */
const char *zc_http_cookie_token(struct MHD_Connection *c);

/* ---- the handle pool (pool.c) ---- */

/* The request's handle: the pool's most recently used one, or a new one;
 * NULL when the directory does not open (said on stderr). */
zcor *zc_pool_take(struct server *s, struct request *r);
/* Gives a request's handle back (after dispatch, or on completion). */
void zc_pool_give(struct server *s, struct request *r);
/* Gives a handle back that a request handed on (z may be NULL). */
void zc_pool_put(struct server *s, zcor *z);
/* Closes the idle handles; they write what they still hold (hit counts). */
void zc_pool_close(struct server *s);

/* ---- the Memory page (assets.c) ---- */

/* GET / (or /index.html, is_page) and /assets/<file under web/>. */
enum MHD_Result zc_assets_serve(struct server *s, struct MHD_Connection *c, struct request *r,
				const char *url, int is_page);

/* ---- REST (rest.c) ---- */

/* A request under /api/v1/ (url decoded, as MHD gives it; the routes
 * match r->target), admitted, its body whole. */
enum MHD_Result zc_rest_handle(struct server *s, struct MHD_Connection *c, struct request *r,
			       const char *url, const char *method, const char *conversation);

/* ---- connections (conn.c) ---- */

/* The limits of connections MHD is started with (http.c). */
#define ZC_MAX_CONNECTIONS 256      /* each has its own thread */
/* From one client address: a browser opens 6 per host, an MCP client one
 * or two; a client holding more only keeps others out. */
#define ZC_PER_CLIENT_CONNECTIONS 32

/* "2026-12-01T12:00:00Z", for the structured log lines. */
void zc_http_log_time(char *ts, size_t n);
/* The connection's deadline entry (MHD's socket context), or NULL. */
struct conn *zc_conn_of(struct MHD_Connection *c);
/* The connection enters phase: its deadline starts now. */
void zc_conn_phase(struct server *s, struct MHD_Connection *c, enum conn_phase phase);
/* The address for the log (out) and the one limits count by (client: an
 * IPv6 address by its /64). */
void zc_http_client_addr(const struct sockaddr *sa, char *out, size_t n, char *client, size_t cn);
/* The request says a body follows (which a refusal leaves unread). */
int zc_conn_announces_body(struct MHD_Connection *c);
/* MHD_OPTION_NOTIFY_CONNECTION: tracks the connection from STARTED (and
 * evicts past EVICT_AT) to CLOSED (lingering close when marked). */
void zc_conn_notify(void *cls, struct MHD_Connection *c, void **socket_context,
		    enum MHD_ConnectionNotificationCode code);
/* The watchdog thread: shuts down connections past their deadline. */
void *zc_conn_watchdog(void *arg);

/* ---- the OneBot reverse endpoint (upgrade.c) ---- */

struct zc_qq;
/* url is the QQ world's reverse path (s->qq set, reverse mode). */
int zc_upgrade_is_reverse(struct server *s, const char *url);
/* Checks the WebSocket upgrade and NapCat's headers (zc_qq_check_reverse)
 * and answers 101, handing the socket to zc_qq_adopt; or an error. Called
 * from admit() once Host and Origin passed, instead of the token check. */
enum MHD_Result zc_upgrade_handle(struct server *s, struct MHD_Connection *c, struct request *r,
				  const char *method);

/* ---- the chat stream (chat.c) ---- */

/* Answers with the turn of `conversation` as server-sent events, run on a
 * thread of the request's own; takes the request's handle (r->z), which
 * goes back to the pool when the answer is freed. The operator's message
 * is logged already. */
enum MHD_Result zc_chat_stream(struct server *s, struct MHD_Connection *c, struct request *r,
			       const char *conversation);

#endif
