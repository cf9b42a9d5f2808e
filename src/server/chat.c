/*
 * chat.c — the answer of POST /api/v1/chat (docs/API.md, "Chat"): one
 * turn of a console conversation streamed to the client as server-sent
 * events (text/event-stream): `delta` (the model's text as it comes),
 * `tool` (a tool call's start and end), then `turn` (the result) or
 * `error` (the error JSON).
 *
 * Server layer: speaks only include/zcor.h. rest.c checks the request and
 * logs the operator's message; this file runs the turn and feeds the
 * stream. MHD gives each connection its own thread and asks a content
 * reader for the body; the reader cannot hand out bytes while a call into
 * libzcor is still running on that same thread, so the turn runs on a
 * thread of its own that belongs to this connection alone (started with
 * the answer, joined when the answer is freed). It owns the request's
 * handle for the whole turn — one thread at a time per handle, as every
 * call — and the connection's thread only copies queued events out. A
 * client that goes away stops nothing: the turn ends as it would have
 * (its record and dialogue are written), its events are dropped.
 */
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "server/internal.h"

/* Events waiting for the client beyond this are dropped (deltas only: the
 * final `turn` event carries the whole reply anyway), so a client that
 * does not read cannot make the server hold an unbounded stream. */
#define CHAT_QUEUE_MAX (4u << 20)
/* A comment line when nothing happened for this long: MHD closes a
 * connection after 60 s without a byte, and a model may think longer. */
#define CHAT_KEEPALIVE_MS 15000

struct chat_stream {
	struct server *s;
	zcor *z;
	char *conversation;
	pthread_t thread;
	int started;
	pthread_mutex_t lock; /* everything below */
	pthread_cond_t wake;
	struct zc_buf queue; /* bytes not yet given to MHD, from `sent` on */
	size_t sent;
	int done;          /* the turn returned; its last event is queued */
	int gone;          /* the answer is being freed: queue nothing more */
	int dropped;       /* deltas dropped at the cap */
	char *tool_args;   /* the arguments of the tool call running now */
};

/* ---- queuing events (the turn's thread) ----------------------------------- */

/* Queues "event: name\ndata: …\n\n"; data is one JSON text, cut into
 * data lines at its newlines (SSE joins them back). */
static void queue_event(struct chat_stream *cs, const char *name, const char *data, int droppable)
{
	pthread_mutex_lock(&cs->lock);
	if (cs->gone || (droppable && cs->queue.len - cs->sent > CHAT_QUEUE_MAX)) {
		cs->dropped += !cs->gone;
		pthread_mutex_unlock(&cs->lock);
		return;
	}
	zc_buf_addf(&cs->queue, "event: %s\n", name);
	for (const char *p = data;;) {
		size_t n = strcspn(p, "\n");
		zc_buf_adds(&cs->queue, "data: ");
		zc_buf_add(&cs->queue, p, n);
		zc_buf_addc(&cs->queue, '\n');
		if (!p[n])
			break;
		p += n + 1;
	}
	zc_buf_addc(&cs->queue, '\n');
	pthread_cond_signal(&cs->wake);
	pthread_mutex_unlock(&cs->lock);
}

/* Queues j (taken) as the data of event name; nothing when j is NULL
 * (a value jansson would not take: out of memory). */
static void queue_json(struct chat_stream *cs, const char *name, json_t *j, int droppable)
{
	char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	if (text)
		queue_event(cs, name, text, droppable);
	zc_free(text);
}

static void on_text(void *ud, const char *text, size_t len)
{
	queue_json(ud, "delta", json_pack("{s:s%}", "text", text, len), 1);
}

static void on_tool_start(void *ud, const char *name, const char *arguments)
{
	struct chat_stream *cs = ud;
	/* calls run one after another: the end event names these arguments */
	zc_free(cs->tool_args);
	cs->tool_args = zc_strdup(arguments ? arguments : "{}");
	queue_json(cs, "tool",
		   json_pack("{s:s, s:s, s:s}", "phase", "start", "name", name, "arguments",
			     cs->tool_args ? cs->tool_args : "{}"),
		   0);
}

static void on_tool_end(void *ud, const char *name, const char *status, const char *result)
{
	struct chat_stream *cs = ud;
	queue_json(cs, "tool",
		   json_pack("{s:s, s:s, s:s, s:s, s:s}", "phase", "end", "name", name, "arguments",
			     cs->tool_args ? cs->tool_args : "{}", "status", status, "result",
			     result ? result : ""),
		   0);
}

static void *chat_run(void *arg)
{
	struct chat_stream *cs = arg;
	struct zcor_turn_events ev = {on_text, on_tool_start, on_tool_end, cs};
	char *out = NULL;
	int rc = zcor_turn_stream(cs->z, cs->conversation, NULL, &ev, &out);
	const char *data = rc ? zcor_errjson(cs->z) : out;
	if (data)
		queue_event(cs, rc ? "error" : "turn", data, 0);
	else /* the result could not be built (out of memory) */
		queue_event(cs, "error",
			    "{\"error\":{\"code\":\"internal\",\"message\":\"the turn's answer could not be "
			    "built (out of memory); its record may have been written\"}}",
			    0);
	zcor_free(out);
	pthread_mutex_lock(&cs->lock);
	cs->done = 1;
	pthread_cond_signal(&cs->wake);
	pthread_mutex_unlock(&cs->lock);
	return NULL;
}

/* ---- the answer (the connection's thread) ---------------------------------- */

static void deadline_in(struct timespec *ts, long ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	long long ns = (long long)ts->tv_nsec + (long long)ms * 1000000LL;
	ts->tv_sec += (time_t)(ns / 1000000000LL);
	ts->tv_nsec = (long)(ns % 1000000000LL);
}

/* MHD's content reader: blocks (this connection's thread only) until an
 * event is queued, the turn is over, or it is time for a keep-alive. */
static ssize_t chat_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	(void)pos;
	struct chat_stream *cs = cls;
	static const char keepalive[] = ": keep-alive\n\n";
	ssize_t n = 0;
	pthread_mutex_lock(&cs->lock);
	struct timespec until;
	deadline_in(&until, CHAT_KEEPALIVE_MS);
	while (cs->sent == cs->queue.len && !cs->done)
		if (pthread_cond_timedwait(&cs->wake, &cs->lock, &until) == ETIMEDOUT)
			break;
	size_t have = cs->queue.len - cs->sent;
	if (have) {
		size_t k = have < max ? have : max;
		memcpy(buf, cs->queue.p + cs->sent, k);
		cs->sent += k;
		if (cs->sent == cs->queue.len) {
			zc_buf_reset(&cs->queue);
			cs->sent = 0;
		}
		n = (ssize_t)k;
	} else if (cs->done) {
		n = MHD_CONTENT_READER_END_OF_STREAM;
	} else {
		size_t k = sizeof(keepalive) - 1 < max ? sizeof(keepalive) - 1 : max;
		memcpy(buf, keepalive, k);
		n = (ssize_t)k;
	}
	pthread_mutex_unlock(&cs->lock);
	return n;
}

static void chat_stream_free(struct chat_stream *cs)
{
	if (!cs)
		return;
	pthread_mutex_destroy(&cs->lock);
	pthread_cond_destroy(&cs->wake);
	zc_buf_release(&cs->queue);
	zc_free(cs->tool_args);
	zc_free(cs->conversation);
	zc_free(cs);
}

/* The answer is done with (sent, or the client gone): the turn is waited
 * for — it ends within its deadline — and the handle goes back. */
static void chat_free(void *cls)
{
	struct chat_stream *cs = cls;
	pthread_mutex_lock(&cs->lock);
	cs->gone = 1;
	pthread_mutex_unlock(&cs->lock);
	if (cs->started)
		pthread_join(cs->thread, NULL);
	zc_pool_put(cs->s, cs->z);
	chat_stream_free(cs);
}

enum MHD_Result zc_chat_stream(struct server *s, struct MHD_Connection *c, struct request *r,
			       const char *conversation)
{
	struct chat_stream *cs = zc_calloc(1, sizeof(*cs));
	if (!cs || !(cs->conversation = zc_strdup(conversation))) {
		zc_free(cs);
		return zc_http_send_error(c, r, 500, "internal", "the answer could not be built (out of memory)");
	}
	pthread_mutex_init(&cs->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&cs->wake, &ca);
	pthread_condattr_destroy(&ca);
	cs->s = s;
	cs->z = r->z; /* the turn's from now on: not given back after dispatch */
	r->z = NULL;
	struct MHD_Response *resp =
		MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, chat_read, cs, chat_free);
	if (!resp) {
		zc_pool_put(s, cs->z);
		chat_stream_free(cs);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", "text/event-stream; charset=utf-8");
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, "X-Accel-Buffering", "no");
	if (pthread_create(&cs->thread, NULL, chat_run, cs) == 0) {
		cs->started = 1;
	} else {
		queue_event(cs, "error",
			    "{\"error\":{\"code\":\"internal\",\"message\":\"the turn could not be started (no "
			    "thread); the message is logged and waits for the next turn\"}}",
			    0);
		cs->done = 1;
	}
	r->status = 200;
	enum MHD_Result ret = MHD_queue_response(c, 200, resp);
	MHD_destroy_response(resp); /* frees cs (chat_free) if it was not queued */
	return ret;
}
