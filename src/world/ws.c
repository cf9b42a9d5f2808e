/*
 * ws.c — WebSocket (RFC 6455) over a socket zcor owns, for the OneBot v11
 * connection to NapCat (world/onebot.c). wslay does all of the framing:
 * masking, fragments and their reassembly, ping/pong, the close
 * handshake, the cap on one received message (1009). This file does what
 * wslay leaves to its user: the TCP connect with a deadline, the client's
 * HTTP/1.1 upgrade and the check of the 101 answer, the poll loop over
 * the socket and an eventfd that wakes it for queued sends, and the send
 * queue that other threads fill.
 *
 * Why wslay (Debian libwslay-dev) and not libwebsockets: wslay frames
 * over a socket the caller owns, so the reverse role rides on the socket
 * libmicrohttpd hands over after its 101 inside `zcor serve`, and the
 * forward role on a plain TCP socket; libwebsockets wants to own the
 * sockets and the event loop of both.
 *
 * World layer, below onebot.c; it knows nothing of OneBot or of zcor.h's
 * calls, and never prints: why a connection ended goes to the caller in
 * err.
 *
 * Threads: the wslay context is touched only by the thread in zc_ws_run.
 * zc_ws_send_text and zc_ws_close put what they want on the struct under
 * its lock and wake that thread, which hands one data message at a time
 * to wslay. One at a time is what makes zc_ws_written exact: a message
 * handed to an idle wslay is selected at once (nothing ahead of it), and
 * wslay never interleaves another frame into a data frame it has begun,
 * so the first completion wslay reports afterwards is that message.
 */
#include "world/ws.h"

#include <errno.h>
#include <netdb.h>
#include <stdarg.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <nettle/base64.h>
#include <nettle/sha1.h>
#include <wslay/wslay.h>

#include "base/alloc.h"
#include "base/timeutil.h"
#include "base/utf8.h"

#define HANDSHAKE_MAX (16u << 10) /* the server's answer to the upgrade */
#define CLOSE_WAIT_MS 1000        /* after our close frame, for the peer's */
#define URL_MAX 2048
#define WS_GUID "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

struct out {
	struct out *next;
	size_t len;
	char data[];
};

struct zc_ws {
	int fd;
	int wake; /* eventfd: a send or a close was queued */
	wslay_event_context_ptr ctx;
	void (*close_fd)(void *ud, int fd);
	void *close_ud;
	/* bytes read past the handshake, served to wslay before the socket's */
	char *pre;
	size_t pre_len, pre_off;

	pthread_mutex_t lock; /* everything down to `dead` */
	struct out *head, *tail;
	size_t queued;                  /* bytes in head..tail */
	unsigned long long seq, written; /* messages queued so far, wholly written so far */
	int close_wanted, close_code;
	char close_reason[124];
	int dead; /* zc_ws_run has ended the connection: sends are refused */

	/* the zc_ws_run thread only */
	int in_wslay;         /* one of our data messages is inside wslay */
	size_t expect;        /* wslay's queued count while it is (it and the control frames after it) */
	int close_queued;     /* our close frame is in wslay */
	double close_deadline;
	int peer_eof, io_errno, refused_data; /* how the connection ended */
	int sent_code;        /* a close code we queued ourselves (1003, 1007) */
	char sent_why[128];
	const struct zc_ws_cb *cb;
	char *tbuf;
	size_t tcap;
};

/* ---- wslay's callbacks ------------------------------------------------- */

static ssize_t cb_recv(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, int flags, void *ud)
{
	struct zc_ws *w = ud;
	if (w->pre_off < w->pre_len) {
		size_t n = w->pre_len - w->pre_off < len ? w->pre_len - w->pre_off : len;
		memcpy(buf, w->pre + w->pre_off, n);
		w->pre_off += n;
		return (ssize_t)n;
	}
	ssize_t r;
	do
		r = recv(w->fd, buf, len, 0);
	while (r < 0 && errno == EINTR);
	if (r > 0)
		return r;
	if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
		wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
		return -1;
	}
	if (r == 0)
		w->peer_eof = 1;
	else
		w->io_errno = errno;
	wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
	return -1;
}

static ssize_t cb_send(wslay_event_context_ptr ctx, const uint8_t *data, size_t len, int flags,
		       void *ud)
{
	struct zc_ws *w = ud;
	ssize_t r;
	do
		r = send(w->fd, data, len, MSG_NOSIGNAL | (flags & WSLAY_MSG_MORE ? MSG_MORE : 0));
	while (r < 0 && errno == EINTR);
	if (r >= 0)
		return r;
	if (errno == EAGAIN || errno == EWOULDBLOCK) {
		wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
	} else {
		w->io_errno = errno;
		wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
	}
	return -1;
}

static int cb_genmask(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, void *ud)
{
	if (getrandom(buf, len, 0) != (ssize_t)len) {
		wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
		return -1;
	}
	return 0;
}

/* Fails the connection from our side with code (1003, 1007): the close
 * frame goes out, and nothing more is handed to on_text. */
static void fail_with(struct zc_ws *w, int code, const char *why)
{
	if (w->sent_code)
		return;
	w->sent_code = code;
	snprintf(w->sent_why, sizeof(w->sent_why), "%s", why);
	wslay_event_queue_close(w->ctx, (uint16_t)code, (const uint8_t *)why, strlen(why));
	w->close_queued = 1;
	w->close_deadline = zc_time_mono_ms() + CLOSE_WAIT_MS;
}

static void cb_msg(wslay_event_context_ptr ctx, const struct wslay_event_on_msg_recv_arg *arg,
		   void *ud)
{
	struct zc_ws *w = ud;
	if (wslay_is_ctrl_frame(arg->opcode) || w->close_queued)
		return; /* pings are answered by wslay; nothing after our close counts */
	if (arg->opcode != WSLAY_TEXT_FRAME) {
		w->refused_data = 1;
		fail_with(w, WSLAY_CODE_UNSUPPORTED_DATA, "binary messages are not accepted");
		return;
	}
	/* (wslay checks UTF-8 as frames arrive and closes with 1007 itself;
	 * this is the check that what on_text gets is UTF-8, whatever wslay
	 * version is linked) */
	if (!zc_utf8_valid((const char *)arg->msg, arg->msg_length)) {
		fail_with(w, WSLAY_CODE_INVALID_FRAME_PAYLOAD_DATA, "a text message is not valid UTF-8");
		return;
	}
	if (arg->msg_length + 1 > w->tcap) {
		size_t cap = arg->msg_length + 1 > 4096 ? arg->msg_length + 1 : 4096;
		char *p = zc_realloc(w->tbuf, cap);
		if (!p) {
			fail_with(w, WSLAY_CODE_INTERNAL_SERVER_ERROR, "out of memory");
			return;
		}
		w->tbuf = p;
		w->tcap = cap;
	}
	memcpy(w->tbuf, arg->msg, arg->msg_length);
	w->tbuf[arg->msg_length] = '\0';
	if (w->cb && w->cb->on_text)
		w->cb->on_text(w->cb->ud, w->tbuf, arg->msg_length);
}

/* ---- a connection ------------------------------------------------------ */

static void set_err(char *err, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set_err(char *err, size_t cap, const char *fmt, ...)
{
	if (!err || !cap)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, cap, fmt, ap);
	va_end(ap);
	zc_utf8_scrub(err);
}

/* A connection over fd (non-blocking from here on), server or client. */
static struct zc_ws *ws_new(int fd, int server, const char *pre, size_t pre_len, char *err, size_t cap)
{
	struct zc_ws *w = zc_calloc(1, sizeof(*w));
	if (!w) {
		set_err(err, cap, "out of memory");
		return NULL;
	}
	w->fd = fd;
	w->wake = -1;
	pthread_mutex_init(&w->lock, NULL);
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		set_err(err, cap, "cannot make the socket non-blocking: %s", strerror(errno));
		goto fail;
	}
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)); /* (not a socket pair: ignored) */
	w->wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (w->wake < 0) {
		set_err(err, cap, "cannot make an eventfd: %s", strerror(errno));
		goto fail;
	}
	if (pre_len) {
		w->pre = zc_malloc(pre_len);
		if (!w->pre) {
			set_err(err, cap, "out of memory");
			goto fail;
		}
		memcpy(w->pre, pre, pre_len);
		w->pre_len = pre_len;
	}
	struct wslay_event_callbacks cbs = {
		.recv_callback = cb_recv,
		.send_callback = cb_send,
		.genmask_callback = cb_genmask,
		.on_msg_recv_callback = cb_msg,
	};
	int rc = server ? wslay_event_context_server_init(&w->ctx, &cbs, w)
			: wslay_event_context_client_init(&w->ctx, &cbs, w);
	if (rc) {
		w->ctx = NULL;
		set_err(err, cap, "out of memory");
		goto fail;
	}
	wslay_event_config_set_max_recv_msg_length(w->ctx, ZC_WS_MESSAGE_MAX);
	return w;
fail:
	w->fd = -1; /* the caller's to close */
	zc_ws_free(w);
	return NULL;
}

int zc_ws_adopt(int fd, const char *extra, size_t extra_len, void (*close_fd)(void *ud, int fd),
		void *close_ud, struct zc_ws **out, char *err, size_t cap)
{
	*out = NULL;
	struct zc_ws *w = ws_new(fd, 1, extra, extra_len, err, cap);
	if (!w) {
		if (close_fd)
			close_fd(close_ud, fd);
		else
			close(fd);
		return -1;
	}
	w->close_fd = close_fd;
	w->close_ud = close_ud;
	*out = w;
	return 0;
}

int zc_ws_send_text(struct zc_ws *w, const char *text, size_t len, unsigned long long *seq)
{
	int rc = -1;
	struct out *o = NULL;
	pthread_mutex_lock(&w->lock);
	if (w->dead || w->close_wanted || len > ZC_WS_QUEUE_MAX || w->queued + len > ZC_WS_QUEUE_MAX)
		goto out;
	o = zc_malloc(sizeof(*o) + len);
	if (!o)
		goto out;
	o->next = NULL;
	o->len = len;
	memcpy(o->data, text, len);
	if (w->tail)
		w->tail->next = o;
	else
		w->head = o;
	w->tail = o;
	w->queued += len;
	w->seq++;
	if (seq)
		*seq = w->seq;
	rc = 0;
out:
	pthread_mutex_unlock(&w->lock);
	if (rc == 0) {
		uint64_t one = 1;
		ssize_t n = write(w->wake, &one, sizeof(one));
		(void)n; /* a full counter still wakes the loop */
	}
	return rc;
}

unsigned long long zc_ws_written(struct zc_ws *w)
{
	pthread_mutex_lock(&w->lock);
	unsigned long long n = w->written;
	pthread_mutex_unlock(&w->lock);
	return n;
}

void zc_ws_close(struct zc_ws *w, int code, const char *reason)
{
	pthread_mutex_lock(&w->lock);
	if (!w->close_wanted) {
		w->close_wanted = 1;
		w->close_code = code >= 1000 && code <= 4999 ? code : 1000;
		/* a close frame's reason is at most 123 bytes, cut on a character */
		const char *r = reason ? reason : "";
		size_t n = strlen(r);
		if (n > sizeof(w->close_reason) - 1)
			n = sizeof(w->close_reason) - 1;
		while (n && n < strlen(r) && ((unsigned char)r[n] & 0xC0) == 0x80)
			n--;
		memcpy(w->close_reason, r, n);
		w->close_reason[n] = '\0';
		zc_utf8_scrub(w->close_reason);
	}
	pthread_mutex_unlock(&w->lock);
	uint64_t one = 1;
	ssize_t n = write(w->wake, &one, sizeof(one));
	(void)n;
}

void zc_ws_close_codes(struct zc_ws *w, int *sent, int *received)
{
	int s = 0, r = 0;
	if (w && w->ctx) {
		if (wslay_event_get_close_sent(w->ctx))
			s = wslay_event_get_status_code_sent(w->ctx);
		if (wslay_event_get_close_received(w->ctx))
			r = wslay_event_get_status_code_received(w->ctx);
	}
	if (sent)
		*sent = s ? s : (w ? w->sent_code : 0);
	if (received)
		*received = r;
}

void zc_ws_free(struct zc_ws *w)
{
	if (!w)
		return;
	if (w->ctx)
		wslay_event_context_free(w->ctx);
	if (w->fd >= 0) {
		if (w->close_fd)
			w->close_fd(w->close_ud, w->fd);
		else
			close(w->fd);
	}
	if (w->wake >= 0)
		close(w->wake);
	for (struct out *o = w->head, *n; o; o = n) {
		n = o->next;
		zc_free(o);
	}
	pthread_mutex_destroy(&w->lock);
	zc_free(w->pre);
	zc_free(w->tbuf);
	zc_free(w);
}

/* ---- the loop ---------------------------------------------------------- */

/* Hands queued work to wslay (run thread): our close once asked for, and
 * the next data message when wslay is idle (see the head comment). */
static void feed(struct zc_ws *w)
{
	pthread_mutex_lock(&w->lock);
	if (w->close_wanted && !w->close_queued) {
		wslay_event_queue_close(w->ctx, (uint16_t)w->close_code, (const uint8_t *)w->close_reason,
					strlen(w->close_reason));
		w->close_queued = 1;
		w->close_deadline = zc_time_mono_ms() + CLOSE_WAIT_MS;
	}
	if (!w->in_wslay && !w->close_queued && w->head && wslay_event_get_write_enabled(w->ctx) &&
	    wslay_event_get_queued_msg_count(w->ctx) == 0) {
		struct out *o = w->head;
		struct wslay_event_msg m = {WSLAY_TEXT_FRAME, (const uint8_t *)o->data, o->len};
		if (wslay_event_queue_msg(w->ctx, &m) == 0) { /* (wslay copies it) */
			w->head = o->next;
			if (!w->head)
				w->tail = NULL;
			w->queued -= o->len;
			zc_free(o);
			w->in_wslay = 1;
			w->expect = 1;
		}
	}
	pthread_mutex_unlock(&w->lock);
}

/* After wslay_event_send: our data message is whole on the socket when
 * wslay's count fell below what it was with it inside. */
static void note_sent(struct zc_ws *w)
{
	if (w->in_wslay && wslay_event_get_queued_msg_count(w->ctx) < w->expect) {
		w->in_wslay = 0;
		pthread_mutex_lock(&w->lock);
		w->written++;
		pthread_mutex_unlock(&w->lock);
	}
}

/* What a close code wslay sent on its own says about the peer. */
static const char *wslay_close_why(int code)
{
	switch (code) {
	case WSLAY_CODE_PROTOCOL_ERROR:
		return "the peer broke the WebSocket protocol";
	case WSLAY_CODE_INVALID_FRAME_PAYLOAD_DATA:
		return "a text message is not valid UTF-8";
	case WSLAY_CODE_MESSAGE_TOO_BIG:
		return "a message was over the 16 MiB cap";
	default:
		return "closed by wslay";
	}
}

static void describe_end(struct zc_ws *w, char *err, size_t cap)
{
	int sent = 0, recvd = 0;
	zc_ws_close_codes(w, &sent, &recvd);
	if (w->sent_code)
		set_err(err, cap, "closed with %d: %s", w->sent_code, w->sent_why);
	else if (w->close_queued)
		set_err(err, cap, "closed with %d%s%s", w->close_code, w->close_reason[0] ? ": " : "",
			w->close_reason);
	else if (recvd && (!sent || sent == recvd))
		set_err(err, cap, "the peer closed the connection (%d)", recvd);
	else if (sent && sent != WSLAY_CODE_NO_STATUS_RCVD)
		set_err(err, cap, "closed with %d: %s", sent, wslay_close_why(sent));
	else if (w->io_errno)
		set_err(err, cap, "connection error: %s", strerror(w->io_errno));
	else if (w->peer_eof)
		set_err(err, cap, "the peer closed the TCP connection without a close frame");
	else
		set_err(err, cap, "the connection ended");
}

/* A close frame sent while the peer still sends (wslay's own close on a
 * message over the cap or a protocol error, which ends the loop at once):
 * closing the socket with the peer's bytes unread resets the connection,
 * and the reset can discard the close frame before the peer has read it
 * (test_ws ws_message_over_cap_1009 saw no code under load). So the
 * sending side is shut first and what the peer still sends is read and
 * dropped, until it closes too or CLOSE_WAIT_MS pass (RFC 6455 7.1.1). */
static void linger_after_close(struct zc_ws *w)
{
	if (w->close_queued || !wslay_event_get_close_sent(w->ctx) ||
	    wslay_event_get_close_received(w->ctx) || w->peer_eof || w->io_errno)
		return; /* (our own close waited for the reply in the loop already) */
	shutdown(w->fd, SHUT_WR);
	double end = zc_time_mono_ms() + CLOSE_WAIT_MS;
	for (;;) {
		int left = (int)(end - zc_time_mono_ms()) + 1;
		struct pollfd p = {.fd = w->fd, .events = POLLIN};
		if (left <= 0 || poll(&p, 1, left) <= 0)
			return;
		char junk[16384];
		ssize_t r = recv(w->fd, junk, sizeof(junk), MSG_DONTWAIT);
		if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK))
			return;
	}
}

int zc_ws_run(struct zc_ws *w, const struct zc_ws_cb *cb, int idle_ms, char *err, size_t cap)
{
	w->cb = cb;
	double last = zc_time_mono_ms();
	int rx_now = w->pre_off < w->pre_len; /* bytes past the handshake wait already */
	if (err && cap)
		err[0] = '\0';
	for (;;) {
		feed(w);
		if (wslay_event_want_write(w->ctx)) {
			if (wslay_event_send(w->ctx) != 0)
				break;
			note_sent(w);
			if (!w->in_wslay && w->head && !w->close_queued)
				continue; /* the next message, while the socket takes it */
		}
		if (!wslay_event_want_read(w->ctx) && !wslay_event_want_write(w->ctx))
			break; /* the close handshake is done, or both ways are shut */
		double now = zc_time_mono_ms();
		if (w->close_queued && now >= w->close_deadline)
			break;
		if (!w->close_queued && wslay_event_get_close_sent(w->ctx))
			break;
		int timeout = -1;
		if (idle_ms > 0) {
			double left = last + idle_ms - now;
			if (left <= 0) {
				w->cb = NULL;
				return 1;
			}
			timeout = (int)left + 1;
		}
		if (w->close_queued) {
			int left = (int)(w->close_deadline - now) + 1;
			if (timeout < 0 || left < timeout)
				timeout = left;
		}
		struct pollfd p[2] = {
			{.fd = w->fd,
			 .events = (short)((wslay_event_want_read(w->ctx) ? POLLIN : 0) |
					   (wslay_event_want_write(w->ctx) ? POLLOUT : 0))},
			{.fd = w->wake, .events = POLLIN},
		};
		int n = rx_now ? 0 : poll(p, 2, timeout);
		if (n < 0 && errno != EINTR) {
			w->io_errno = errno;
			break;
		}
		if (p[1].revents & POLLIN) {
			uint64_t v;
			ssize_t got = read(w->wake, &v, sizeof(v));
			(void)got;
		}
		if (rx_now || (p[0].revents & (POLLIN | POLLHUP | POLLERR))) {
			rx_now = 0;
			size_t before = wslay_event_get_queued_msg_count(w->ctx);
			if (wslay_event_want_read(w->ctx)) {
				if (wslay_event_recv(w->ctx) != 0)
					break;
				last = zc_time_mono_ms();
			} else if (p[0].revents & (POLLHUP | POLLERR)) {
				break;
			}
			/* control frames wslay queued (pong, the close reply) go
			 * after a data message it has begun */
			size_t after = wslay_event_get_queued_msg_count(w->ctx);
			if (w->in_wslay && after > before)
				w->expect += after - before;
		}
	}
	describe_end(w, err, cap);
	pthread_mutex_lock(&w->lock);
	w->dead = 1;
	pthread_mutex_unlock(&w->lock);
	linger_after_close(w);
	shutdown(w->fd, SHUT_RDWR);
	w->cb = NULL;
	return 0;
}

/* ---- the handshakes ---------------------------------------------------- */

int zc_ws_accept_key(const char *key, char out[29])
{
	out[0] = '\0';
	if (!key || strlen(key) != 24 || key[22] != '=' || key[23] != '=')
		return -1;
	for (int i = 0; i < 22; i++) {
		unsigned char ch = (unsigned char)key[i];
		if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
		      ch == '+' || ch == '/'))
			return -1;
	}
	struct base64_decode_ctx dc;
	uint8_t raw[BASE64_DECODE_LENGTH(24)];
	size_t rawlen = sizeof(raw);
	base64_decode_init(&dc);
	if (!base64_decode_update(&dc, &rawlen, raw, 24, key) || !base64_decode_final(&dc) || rawlen != 16)
		return -1;
	struct sha1_ctx sc;
	uint8_t digest[SHA1_DIGEST_SIZE];
	sha1_init(&sc);
	sha1_update(&sc, 24, (const uint8_t *)key);
	sha1_update(&sc, sizeof(WS_GUID) - 1, (const uint8_t *)WS_GUID);
	sha1_digest(&sc, sizeof(digest), digest);
	base64_encode_raw(out, sizeof(digest), digest); /* 28 characters */
	out[28] = '\0';
	return 0;
}

struct url {
	char host[256]; /* without brackets */
	char port[8];
	char hosthdr[280];
	char target[URL_MAX];
};

static int parse_url(const char *url, struct url *u, char *err, size_t cap)
{
	memset(u, 0, sizeof(*u));
	if (!url || !*url) {
		set_err(err, cap, "no WebSocket url given (ws://host:port/path)");
		return -1;
	}
	if (strncasecmp(url, "wss://", 6) == 0) {
		set_err(err, cap, "'%s': wss:// (TLS) is not supported; use reverse mode (NapCat connects to "
			"zcor serve) or a TLS-terminating proxy in front of NapCat with ws:// here", ZC_Q(url, 200));
		return -1;
	}
	if (strncasecmp(url, "ws://", 5) != 0) {
		set_err(err, cap, "'%s' is not a ws:// url (ws://host:port/path)", ZC_Q(url, 200));
		return -1;
	}
	const char *p = url + 5, *h = p, *he;
	if (*p == '[') {
		h = p + 1;
		he = strchr(h, ']');
		if (!he) {
			set_err(err, cap, "'%s': the IPv6 address has no closing ']'", ZC_Q(url, 200));
			return -1;
		}
		p = he + 1;
	} else {
		he = h + strcspn(h, ":/?#");
		p = he;
	}
	size_t hl = (size_t)(he - h);
	if (hl == 0 || hl >= sizeof(u->host)) {
		set_err(err, cap, "'%s' has no host (or one over 255 characters)", ZC_Q(url, 200));
		return -1;
	}
	for (size_t i = 0; i < hl; i++) {
		unsigned char ch = (unsigned char)h[i];
		if (ch <= ' ' || ch == 0x7f || ch == '@' || ch == '%' || ch >= 0x80) {
			set_err(err, cap, "'%s': the host may not hold '@', '%%', spaces or control characters",
				ZC_Q(url, 200));
			return -1;
		}
	}
	memcpy(u->host, h, hl);
	snprintf(u->port, sizeof(u->port), "80");
	if (*p == ':') {
		p++;
		size_t pl = strspn(p, "0123456789");
		long port = pl && pl <= 5 ? strtol(p, NULL, 10) : 0;
		if (port < 1 || port > 65535 || (p[pl] && !strchr("/?#", p[pl]))) {
			set_err(err, cap, "'%s': the port must be 1 to 65535", ZC_Q(url, 200));
			return -1;
		}
		snprintf(u->port, sizeof(u->port), "%ld", port);
		p += pl;
	}
	const char *frag = strchr(p, '#');
	size_t tl = frag ? (size_t)(frag - p) : strlen(p);
	for (size_t i = 0; i < tl; i++)
		if ((unsigned char)p[i] <= ' ' || p[i] == 0x7f) {
			set_err(err, cap, "'%s': the path may not hold spaces or control characters", ZC_Q(url, 200));
			return -1;
		}
	int n = snprintf(u->target, sizeof(u->target), "%s%.*s", *p == '/' ? "" : "/", (int)tl, p);
	if (n < 0 || (size_t)n >= sizeof(u->target)) {
		set_err(err, cap, "the url is longer than %d bytes", URL_MAX - 1);
		return -1;
	}
	int v6 = strchr(u->host, ':') != NULL;
	snprintf(u->hosthdr, sizeof(u->hosthdr), "%s%s%s%s%s", v6 ? "[" : "", u->host, v6 ? "]" : "",
		 strcmp(u->port, "80") ? ":" : "", strcmp(u->port, "80") ? u->port : "");
	return 0;
}

/* The milliseconds left before deadline, at least 0. */
static int left_ms(double deadline)
{
	double l = deadline - zc_time_mono_ms();
	return l <= 0 ? 0 : (int)l + 1;
}

static int tcp_connect(const struct url *u, double deadline, char *err, size_t cap)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
	int rc = getaddrinfo(u->host, u->port, &hints, &res);
	if (rc) {
		set_err(err, cap, "cannot resolve '%s': %s", ZC_Q(u->host, 100), gai_strerror(rc));
		return -1;
	}
	int fd = -1, last_errno = 0, timed_out = 0;
	for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
		if (fd < 0) {
			last_errno = errno;
			continue;
		}
		if (connect(fd, a->ai_addr, a->ai_addrlen) == 0)
			break;
		if (errno == EINPROGRESS) {
			struct pollfd p = {.fd = fd, .events = POLLOUT};
			int n;
			do
				n = poll(&p, 1, left_ms(deadline));
			while (n < 0 && errno == EINTR);
			int soerr = 0;
			socklen_t sl = sizeof(soerr);
			if (n == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 && soerr == 0)
				break;
			if (n == 0)
				timed_out = 1;
			last_errno = n == 1 ? soerr : errno;
		} else {
			last_errno = errno;
		}
		close(fd);
		fd = -1;
		if (timed_out)
			break;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		if (timed_out)
			set_err(err, cap, "cannot connect to %s:%s: no answer within the connect timeout",
				ZC_Q(u->host, 100), u->port);
		else
			set_err(err, cap, "cannot connect to %s:%s: %s", ZC_Q(u->host, 100), u->port,
				strerror(last_errno ? last_errno : ECONNREFUSED));
	}
	return fd;
}

static int send_all(int fd, const char *p, size_t len, double deadline)
{
	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return -1;
		struct pollfd pf = {.fd = fd, .events = POLLOUT};
		if (poll(&pf, 1, left_ms(deadline)) == 0) {
			errno = ETIMEDOUT;
			return -1;
		}
	}
	return 0;
}

/* The value of header name in the answer's header block (hdr..end), or
 * NULL; *vlen its length without surrounding white space. */
static const char *header_value(const char *hdr, const char *end, const char *name, size_t *vlen)
{
	size_t nl = strlen(name);
	for (const char *line = hdr; line < end;) {
		const char *eol = memchr(line, '\n', (size_t)(end - line));
		if (!eol)
			eol = end;
		if ((size_t)(eol - line) > nl && strncasecmp(line, name, nl) == 0 && line[nl] == ':') {
			const char *v = line + nl + 1, *ve = eol;
			while (v < ve && (*v == ' ' || *v == '\t'))
				v++;
			while (ve > v && (ve[-1] == '\r' || ve[-1] == ' ' || ve[-1] == '\t'))
				ve--;
			*vlen = (size_t)(ve - v);
			return v;
		}
		line = eol + 1;
	}
	return NULL;
}

int zc_ws_has_token(const char *v, size_t vlen, const char *token)
{
	size_t tl = strlen(token);
	for (size_t i = 0; i < vlen;) {
		while (i < vlen && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
			i++;
		size_t j = i;
		while (j < vlen && v[j] != ',')
			j++;
		size_t k = j;
		while (k > i && (v[k - 1] == ' ' || v[k - 1] == '\t'))
			k--;
		if (k - i == tl && strncasecmp(v + i, token, tl) == 0)
			return 1;
		i = j;
	}
	return 0;
}

int zc_ws_connect(const char *url, const char *token, int timeout_ms, struct zc_ws **out,
		  int *http_status, char *err, size_t cap)
{
	return zc_ws_connect_h(url, token, NULL, timeout_ms, out, http_status, err, cap);
}

/* Header lines, each "Name: value\r\n", no empty line, at most 1 KiB. */
static int headers_ok(const char *h)
{
	size_t n = strlen(h);
	if (n > 1024 || (n && (n < 2 || strcmp(h + n - 2, "\r\n") != 0)) || strstr(h, "\r\n\r\n") ||
	    (n >= 2 && h[0] == '\r'))
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((h[i] == '\n' && (i == 0 || h[i - 1] != '\r')) || (h[i] == '\r' && h[i + 1] != '\n'))
			return 0;
	return 1;
}

int zc_ws_connect_h(const char *url, const char *token, const char *headers, int timeout_ms,
		    struct zc_ws **out, int *http_status, char *err, size_t cap)
{
	int rc = -1, fd = -1;
	char *req = NULL, *ans = NULL;
	struct url u;
	*out = NULL;
	if (http_status)
		*http_status = 0;
	if (err && cap)
		err[0] = '\0';
	if (parse_url(url, &u, err, cap))
		goto out;
	if (token && strpbrk(token, "\r\n")) {
		set_err(err, cap, "the access token holds a line break; set it to NapCat's token alone");
		goto out;
	}
	if (headers && !headers_ok(headers)) {
		set_err(err, cap, "the extra headers must be lines \"Name: value\\r\\n\" (at most 1 KiB)");
		goto out;
	}
	double deadline = zc_time_mono_ms() + (timeout_ms > 0 ? timeout_ms : 10000);
	fd = tcp_connect(&u, deadline, err, cap);
	if (fd < 0)
		goto out;

	uint8_t nonce[16];
	char key[BASE64_ENCODE_RAW_LENGTH(16) + 1], want[29];
	if (getrandom(nonce, sizeof(nonce), 0) != (ssize_t)sizeof(nonce)) {
		set_err(err, cap, "getrandom failed: %s", strerror(errno));
		goto out;
	}
	base64_encode_raw(key, sizeof(nonce), nonce);
	key[24] = '\0';
	zc_ws_accept_key(key, want);
	size_t reqcap = strlen(u.target) + strlen(u.hosthdr) + (token ? strlen(token) : 0) +
			(headers ? strlen(headers) : 0) + 256;
	req = zc_malloc(reqcap);
	ans = zc_malloc(HANDSHAKE_MAX + 1);
	if (!req || !ans) {
		set_err(err, cap, "out of memory");
		goto out;
	}
	int n = snprintf(req, reqcap,
			 "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
			 "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n%s%s%s%s\r\n",
			 u.target, u.hosthdr, key, token ? "Authorization: Bearer " : "", token ? token : "",
			 token ? "\r\n" : "", headers ? headers : "");
	if (send_all(fd, req, (size_t)n, deadline)) {
		set_err(err, cap, "cannot send the WebSocket upgrade to %s: %s", ZC_Q(u.hosthdr, 100),
			strerror(errno));
		goto out;
	}
	/* the answer's header block, at most HANDSHAKE_MAX bytes */
	size_t got = 0;
	char *end = NULL;
	while (!end) {
		if (got == HANDSHAKE_MAX) {
			set_err(err, cap, "the server's answer to the upgrade is over %u KiB of headers",
				HANDSHAKE_MAX >> 10);
			goto out;
		}
		ssize_t r = recv(fd, ans + got, HANDSHAKE_MAX - got, 0);
		if (r > 0) {
			got += (size_t)r;
			ans[got] = '\0';
			end = strstr(ans, "\r\n\r\n");
			continue;
		}
		if (r == 0) {
			set_err(err, cap, "the server closed the connection during the WebSocket upgrade");
			goto out;
		}
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
			set_err(err, cap, "the WebSocket upgrade failed: %s", strerror(errno));
			goto out;
		}
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		if (poll(&pf, 1, left_ms(deadline)) == 0) {
			set_err(err, cap, "the server did not answer the WebSocket upgrade within %d ms", timeout_ms);
			goto out;
		}
	}
	end += 4;
	int major = 0, minor = 0, status = 0;
	if (sscanf(ans, "HTTP/%d.%d %d", &major, &minor, &status) != 3 || status < 100 || status > 599) {
		set_err(err, cap, "the server's answer is not HTTP: '%s'", ZC_Q(ans, 60));
		goto out;
	}
	if (status != 101) {
		if (http_status)
			*http_status = status;
		set_err(err, cap, "the server answered HTTP %d instead of switching to WebSocket%s", status,
			status == 401 || status == 403 ? " (the access token was refused)" : "");
		goto out;
	}
	const char *hdr = strchr(ans, '\n') + 1, *v;
	size_t vl = 0;
	if (!(v = header_value(hdr, end, "Upgrade", &vl)) || !zc_ws_has_token(v, vl, "websocket") ||
	    !(v = header_value(hdr, end, "Connection", &vl)) || !zc_ws_has_token(v, vl, "upgrade")) {
		set_err(err, cap, "the server's 101 answer lacks Upgrade: websocket and Connection: Upgrade");
		goto out;
	}
	if (!(v = header_value(hdr, end, "Sec-WebSocket-Accept", &vl)) || vl != 28 || memcmp(v, want, 28)) {
		set_err(err, cap, "the server's Sec-WebSocket-Accept does not match the key sent (not a "
			"WebSocket server, or a proxy in between that rewrote it)");
		goto out;
	}
	*out = ws_new(fd, 0, end, got - (size_t)(end - ans), err, cap);
	if (!*out)
		goto out;
	fd = -1;
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	zc_free(req);
	zc_free(ans);
	return rc;
}
