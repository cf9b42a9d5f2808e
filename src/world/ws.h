/*
 * ws.h — WebSocket (RFC 6455) over a socket zcor owns, for the QQ world's
 * OneBot v11 connection (docs/QQ.md). wslay does the framing (masking,
 * fragments, control frames, close handshake); this module does the two
 * handshakes (the client's GET with Upgrade, the server's 101 through
 * libmicrohttpd's upgrade in server/), the socket and a send queue.
 * World layer; no zcor.h calls.
 *
 * Threads: one thread runs zc_ws_run (it reads, answers pings, calls
 * on_text); any thread may call zc_ws_send_text and zc_ws_close, which
 * queue and wake the running loop. Text only: a binary message is a
 * protocol error (close 1003); a message over ZC_WS_MESSAGE_MAX is closed
 * with 1009; invalid UTF-8 in a text message with 1007.
 */
#ifndef ZC_WORLD_WS_H
#define ZC_WORLD_WS_H

#include <stddef.h>

#define ZC_WS_MESSAGE_MAX (16u << 20) /* one received message (NapCat's forward of a big image list) */
#define ZC_WS_QUEUE_MAX (64u << 20)   /* bytes queued to send before zc_ws_send_text refuses */

struct zc_ws;

struct zc_ws_cb {
	/* one whole text message (valid UTF-8, len bytes, NUL-terminated) */
	void (*on_text)(void *ud, const char *text, size_t len);
	void *ud;
};

/*
 * Client role: connects to url ("ws://host[:port]/path[?query]"; wss:// is
 * refused with a message naming reverse mode or a TLS-terminating proxy),
 * within timeout_ms for the TCP connect and the handshake, sending
 * `Authorization: Bearer <token>` when token is not NULL. 0 and *out; else
 * -1 with why in err (cap bytes, always terminated) and, when the server
 * answered the handshake with an HTTP status instead of 101, that status
 * in *http_status (401/403: the token was refused), else 0 there.
 */
int zc_ws_connect(const char *url, const char *token, int timeout_ms, struct zc_ws **out,
		  int *http_status, char *err, size_t cap);

/*
 * Server role, after the server answered 101 (server/ checks the request
 * and computes Sec-WebSocket-Accept with zc_ws_accept_key): takes fd,
 * with `extra` the bytes already read past the request (may be 0 long).
 * close_fd is called instead of close(2) when the connection ends (for
 * libmicrohttpd's MHD_upgrade_action); NULL: close(2).
 */
int zc_ws_adopt(int fd, const char *extra, size_t extra_len, void (*close_fd)(void *ud, int fd),
		void *close_ud, struct zc_ws **out, char *err, size_t cap);

/* Sec-WebSocket-Accept for a client's Sec-WebSocket-Key (base64 of
 * SHA-1(key + GUID), nettle): 28 characters and a NUL in out. -1 when the
 * key is not 24 characters of base64 encoding 16 bytes. */
int zc_ws_accept_key(const char *key, char out[29]);

/* A header value (len bytes) holds token in its comma-separated list,
 * case-insensitively ("keep-alive, Upgrade" holds "upgrade"). */
int zc_ws_has_token(const char *v, size_t len, const char *token);

/*
 * Runs the connection until it closes (either side, an error, or
 * zc_ws_close), calling cb->on_text for each text message from this
 * thread. idle_ms > 0: also returns when nothing arrived for that long
 * (1: the caller checks heartbeats and calls zc_ws_run again). Returns 0
 * when closed, 1 on idle timeout; the reason of a close in err.
 */
int zc_ws_run(struct zc_ws *w, const struct zc_ws_cb *cb, int idle_ms, char *err, size_t cap);

/* Queues one text message; 0, or -1 when the connection is closed or the
 * queue is full. Thread-safe. *written_seq, when not NULL, is the
 * message's number; zc_ws_written tells whether it reached the socket. */
int zc_ws_send_text(struct zc_ws *w, const char *text, size_t len, unsigned long long *seq);
/* The number of messages wholly written to the socket so far. */
unsigned long long zc_ws_written(struct zc_ws *w);

/* Starts the close handshake (code 1000, or the given one); the running
 * zc_ws_run returns soon after. Thread-safe, idempotent. */
void zc_ws_close(struct zc_ws *w, int code, const char *reason);

/* The close codes of a connection whose zc_ws_run has returned: the one
 * sent (by zc_ws_close, or 1003/1007/1009 for what the peer sent) and the
 * one received from the peer; 0 for none. Either pointer may be NULL. */
void zc_ws_close_codes(struct zc_ws *w, int *sent, int *received);

/* Frees a connection whose zc_ws_run has returned (closes the socket). */
void zc_ws_free(struct zc_ws *w);

#endif
