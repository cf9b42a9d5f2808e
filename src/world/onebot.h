/*
 * onebot.h — one OneBot v11 connection to NapCat (docs/QQ.md), in either
 * role: forward (zcor connects to NapCat's WebSocket server and keeps
 * reconnecting, capped exponential backoff with jitter) or reverse
 * (NapCat connects to `zcor serve`; server/ hands the upgraded socket
 * here). Health: the lifecycle/connect meta event, heartbeats (two
 * intervals without one → the connection is dropped and, forward,
 * re-dialled), get_login_info for the bot's own id after each connect.
 * Actions: {action, params, echo} matched to {status, retcode, data,
 * echo} by echo, answers in any order, each with a timeout; a lost
 * connection fails its pending actions at once.
 *
 * World layer, below world/qq.c; no zcor.h calls. Events go to the
 * caller's callback from the connection's thread, which must return
 * quickly (queue them).
 */
#ifndef ZC_WORLD_ONEBOT_H
#define ZC_WORLD_ONEBOT_H

#include <jansson.h>
#include <stdint.h>

enum zc_ob_mode { ZC_OB_FORWARD, ZC_OB_REVERSE };

struct zc_ob_opts {
	enum zc_ob_mode mode;
	const char *url;        /* forward: ws://host:port/path */
	const char *token;      /* the access token (from the environment), or NULL */
	const char *token_env;  /* the environment variable's name, for the refusal's message, or NULL */
	int connect_timeout_ms; /* forward: TCP connect + handshake */
	int action_timeout_ms;  /* default for zc_ob_call */
	int reconnect_min_ms;   /* forward: first backoff */
	int reconnect_max_ms;   /* forward: the cap */
};

struct zc_ob_cb {
	/* one event (post_type message, message_sent, notice, request,
	 * meta_event), borrowed for the call */
	void (*on_event)(void *ud, json_t *event);
	/* the connection came up (self_id learned, or "" if get_login_info
	 * failed — reverse: X-Self-ID then) or went down (why) */
	void (*on_up)(void *ud, const char *self_id);
	void (*on_down)(void *ud, const char *why);
	void *ud;
};

struct zc_ob;

/* What a failed action says. */
enum zc_ob_fail {
	ZC_OB_OK = 0,
	ZC_OB_NOT_SENT,  /* no connection, or it dropped before the frame was written: safe to retry */
	ZC_OB_LOST,      /* written, then the connection dropped before the answer: it may have run */
	ZC_OB_TIMEOUT,   /* written, no answer within the timeout: it may have run */
	ZC_OB_FAILED,    /* NapCat answered status "failed" (retcode, message) */
	ZC_OB_BAD_ANSWER /* an answer that is not OneBot v11's shape */
};

struct zc_ob_result {
	enum zc_ob_fail fail;
	long retcode;      /* NapCat's, when it answered */
	char message[256]; /* NapCat's message / wording, or why */
};

/* A new connection manager; nothing runs until zc_ob_start. NULL on
 * allocation failure. The strings of opts are copied. */
struct zc_ob *zc_ob_new(const struct zc_ob_opts *opts, const struct zc_ob_cb *cb);

/* Forward: starts the thread that dials, runs and re-dials. Reverse:
 * nothing to start (zc_ob_adopt brings connections). 0 or -1. */
int zc_ob_start(struct zc_ob *ob);

/*
 * Reverse: an upgraded socket from server/ (after its checks of
 * Authorization, X-Self-ID, x-client-role), with the bytes read past the
 * request. A newer connection replaces an older one (which is closed and
 * fails its pending actions). Runs the connection on its own thread.
 * 0, or -1 (then close_fd has been called).
 */
int zc_ob_adopt(struct zc_ob *ob, int fd, const char *extra, size_t extra_len, const char *self_id,
		void (*close_fd)(void *ud, int fd), void *close_ud);

/*
 * Runs one action and waits for its answer, from any thread but the
 * connection's: timeout_ms 0 → opts.action_timeout_ms. wait_up_ms > 0:
 * when not connected, waits that long for a connection before failing
 * with ZC_OB_NOT_SENT. 0 on status "ok" (or "async") with *data the
 * answer's data (the caller's reference; json null when absent), else -1
 * with *res saying why. params is borrowed (NULL: {}); data and res may
 * be NULL.
 */
int zc_ob_call(struct zc_ob *ob, const char *action, json_t *params, int timeout_ms, int wait_up_ms,
	       json_t **data, struct zc_ob_result *res);

/* The connection's state for the page: {"mode", "state": "connected" |
 * "connecting" | "down" | "refused", "connectedSince" (ms or null),
 * "lastHeartbeat" (ms or null), "heartbeatIntervalMs", "selfId",
 * "reconnects", "actionsFailed", "lastError", "framesDropped" (frames
 * that were not JSON objects, answers to no pending action, events from
 * a replaced connection)}. A new reference. */
json_t *zc_ob_status(struct zc_ob *ob);

/* Stops: closes the connection, fails pending actions, joins its
 * threads, frees. No zc_ob_call may be running (the caller stops its
 * senders first); NULL is fine. */
void zc_ob_free(struct zc_ob *ob);

#endif
