/*
 * qq.c — the QQ world (qq.h; docs/QQ.md): its settings, the OneBot
 * connection's callbacks, the logging thread and the status.
 *
 * World layer, a client of zcor.h. The connection's thread (onebot.c)
 * only queues events (a bounded queue; when it is full the connection
 * waits). One logging thread parses them in order (qq_event.c), logs a
 * chunk's messages grouped by conversation in one zcor_log_batches call
 * ("recall": false: the turn recalls for itself), decides from the answer
 * (a skipped message neither wakes nor counts) and the wake rules which
 * conversations want a turn, and keeps their timers (qq_sched.c); when
 * one is due it goes on the run queue of the turn workers (qq_turns.c).
 * A message with an image to download, and what follows it in its
 * conversation, goes to the media workers instead (QQ_MEDIA_WORKERS, a
 * handle each), which download and log them in order: a slow image host
 * holds up that conversation only.
 * What it says goes to stderr as "qq: …" lines: `zcor serve`'s log.
 */
#include "world/qq_int.h"

#include <errno.h>
#include <nettle/base64.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/timeutil.h"
#include "base/utf8.h"

/* ---- small things ---------------------------------------------------- */

void zc_qq_complain(struct zc_qq *q, const char *fmt, ...)
{
	char line[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	double now = zc_time_mono_ms();
	pthread_mutex_lock(&q->lock);
	int say = now - q->last_complaint_ms >= 1000;
	long long held = q->complaints_held;
	if (say) {
		q->last_complaint_ms = now;
		q->complaints_held = 0;
	} else {
		q->complaints_held++;
	}
	pthread_mutex_unlock(&q->lock);
	if (!say)
		return;
	if (held)
		fprintf(stderr, "qq: %s (and %lld more like it in the last second)\n", line, held);
	else
		fprintf(stderr, "qq: %s\n", line);
}

void zc_qq_self(struct zc_qq *q, char *out, size_t cap)
{
	pthread_mutex_lock(&q->lock);
	snprintf(out, cap, "%s", q->bot_id[0] ? q->bot_id : q->self_id);
	pthread_mutex_unlock(&q->lock);
}

void zc_qq_set_probe(struct zc_qq *q, zc_qq_probe_fn fn, void *ud)
{
	q->probe = fn;
	q->probe_ud = ud;
}

void zc_qq_probe(struct zc_qq *q, enum zc_qq_stage stage, const char *id)
{
	if (q->probe && id && *id)
		q->probe(q->probe_ud, stage, id, zc_time_mono_ms());
}

static unsigned hash_key(const char *s)
{
	unsigned h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h % QQ_BUCKETS;
}

static void lru_unlink(struct zc_qq *q, struct qconv *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		q->lru_head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		q->lru_tail = c->prev;
	c->prev = c->next = NULL;
}

static void lru_front(struct zc_qq *q, struct qconv *c)
{
	c->next = q->lru_head;
	c->prev = NULL;
	if (q->lru_head)
		q->lru_head->prev = c;
	q->lru_head = c;
	if (!q->lru_tail)
		q->lru_tail = c;
}

/* Forgets the least recently used conversation that has nothing going on. */
static int evict_one(struct zc_qq *q)
{
	for (struct qconv *c = q->lru_tail; c; c = c->prev) {
		if (c->running || c->queued || c->in_woken || c->media_busy)
			continue;
		struct qconv **pp = &q->buckets[hash_key(c->key)];
		while (*pp != c)
			pp = &(*pp)->hnext;
		*pp = c->hnext;
		lru_unlink(q, c);
		zc_free(c->sent);
		zc_free(c);
		q->nconv--;
		return 0;
	}
	return -1;
}

struct qconv *zc_qq_conv(struct zc_qq *q, const char *key)
{
	unsigned h = hash_key(key);
	for (struct qconv *c = q->buckets[h]; c; c = c->hnext) {
		if (strcmp(c->key, key) == 0) {
			lru_unlink(q, c);
			lru_front(q, c);
			return c;
		}
	}
	if (q->nconv >= QQ_CONVS_MAX && evict_one(q))
		return NULL;
	struct qconv *c = zc_calloc(1, sizeof(*c));
	snprintf(c->key, sizeof(c->key), "%s", key);
	c->hnext = q->buckets[h];
	q->buckets[h] = c;
	lru_front(q, c);
	q->nconv++;
	return c;
}

/* The conversation wants a turn: on the list the timers are read from. */
static void mark_woken(struct zc_qq *q, struct qconv *c)
{
	if (c->in_woken)
		return;
	c->in_woken = 1;
	c->wnext = q->woken;
	q->woken = c;
}

static int local_minute(void)
{
	time_t t = time(NULL);
	struct tm tm;
	localtime_r(&t, &tm);
	return tm.tm_hour * 60 + tm.tm_min;
}

/* ---- the connection's callbacks (its thread: only queue) -------------- */

/* A full queue holds the connection's thread (it stops reading, and TCP
 * makes NapCat hold what it has not sent yet) until the logging thread
 * takes a chunk; only past QQ_QUEUE_WAIT_MS is an event dropped. */
static void on_event(void *ud, json_t *event)
{
	struct zc_qq *q = ud;
	pthread_mutex_lock(&q->lock);
	if (q->evn >= QQ_QUEUE_MAX) { /* (stopping too: the logging thread drains the queue first) */
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += QQ_QUEUE_WAIT_MS / 1000;
		while (q->evn >= QQ_QUEUE_MAX && pthread_cond_timedwait(&q->room, &q->lock, &ts) == 0)
			;
	}
	if (q->evn >= QQ_QUEUE_MAX) {
		q->events_dropped++;
	} else {
		q->evq[(q->evhead + q->evn) % QQ_QUEUE_MAX] = json_incref(event);
		q->evn++;
		pthread_cond_signal(&q->log_wake);
	}
	pthread_mutex_unlock(&q->lock);
}

/* (onebot.c says connects, losses and refusals on stderr itself) */
static void on_up(void *ud, const char *self_id)
{
	struct zc_qq *q = ud;
	pthread_mutex_lock(&q->lock);
	if (self_id && *self_id)
		snprintf(q->self_id, sizeof(q->self_id), "%s", self_id);
	if (q->bot_id[0] && self_id && *self_id && strcmp(self_id, q->bot_id) != 0)
		fprintf(stderr, "qq: NapCat is logged in as %s but botId is %s: the bot's own messages are "
				"told by botId; fix botId in config.json\n",
			self_id, q->bot_id);
	pthread_mutex_unlock(&q->lock);
}

static void on_down(void *ud, const char *why)
{
	(void)ud, (void)why;
}

static long long dispatch(struct zc_qq *q, long long now);

/* ---- logging: one conversation's run of messages ---------------------- */

/* The image bytes as a media item, or NULL. */
static json_t *media_item(const unsigned char *data, size_t len)
{
	size_t n = BASE64_ENCODE_RAW_LENGTH(len);
	char *b64 = zc_malloc(n + 1);
	base64_encode_raw(b64, len, data);
	b64[n] = '\0';
	json_t *item = json_pack("{s:s, s:s}", "type", "image", "data", b64);
	zc_free(b64);
	return item;
}

/* Downloads ev's images (at most 10, the log's cap) into message's
 * "media"; adds their bytes to *bytes. On a media worker (media_job),
 * every download of one conversation's held events shares one
 * mediaTimeoutMs (deadline, mono ms); on the logging thread (only when no
 * media worker could start) every one of a chunk does. */
static void attach_images(struct zc_qq *q, struct zc_qq_event *ev, size_t *bytes, double deadline)
{
	size_t i;
	json_t *img, *media = NULL;
	json_array_foreach(ev->images, i, img) {
		const char *url = json_string_value(json_object_get(img, "url"));
		if (!url || !*url || json_array_size(media) >= 10)
			continue;
		unsigned char *data = NULL;
		size_t len = 0;
		char err[300];
		double left = deadline - zc_time_mono_ms();
		if (left < 1) {
			zc_qq_complain(q, "an image of message %s in %s was not kept: the images of this "
				       "batch of events took mediaTimeoutMs (%d ms) already", ev->message_id,
				       ev->conversation, q->media_timeout_ms);
			continue;
		}
		if (zc_qq_fetch_image(url, q->media_max_bytes, (int)left, &data, &len, err, sizeof(err))) {
			zc_qq_complain(q, "an image of message %s in %s was not kept: %s", ev->message_id,
				       ev->conversation, err);
			continue;
		}
		json_t *item = media_item(data, len);
		free(data);
		if (!item)
			continue;
		if (!media)
			media = json_array();
		json_array_append_new(media, item);
		*bytes += len;
	}
	if (media)
		json_object_set_new(ev->message, "media", media);
}

/* The ids zcor_log_messages skipped, from its answer. */
static int skipped(const json_t *answer, const char *id)
{
	size_t i;
	json_t *s;
	json_array_foreach(json_object_get(answer, "skipped"), i, s) {
		const char *m = json_string_value(json_object_get(s, "messageId"));
		if (m && strcmp(m, id) == 0)
			return 1;
	}
	return 0;
}

/* Logs msgs (of one conversation); *answer the parsed answer, or NULL. */
static int log_batch(struct zc_qq *q, zcor *z, const char *conv, json_t *msgs, json_t **answer)
{
	json_t *batch = json_pack("{s:O, s:b}", "messages", msgs, "recall", 0);
	char *body = batch ? json_dumps(batch, JSON_COMPACT) : NULL;
	char *out = NULL;
	json_decref(batch);
	*answer = NULL;
	if (!body)
		return ZCOR_EINTERNAL;
	int rc = zcor_log_messages(z, NULL, conv, body, &out);
	zc_free(body);
	if (!rc)
		*answer = json_loads(out, 0, NULL);
	zcor_free(out);
	return rc;
}

/* Does this logged message wake the bot? (Private: always. Group: an @
 * of the bot, a name, a reply to one of its messages; @全体成员 alone
 * does not.) Under the lock. */
static int wakes(const struct qconv *c, const struct zc_qq_event *ev)
{
	if (strncmp(ev->conversation, "private:", 8) == 0)
		return 1;
	if (ev->at_bot || ev->name_hit)
		return 1;
	const char *reply_to = json_string_value(json_object_get(ev->message, "replyTo"));
	return reply_to && zc_qq_sent_has(c->sent, reply_to);
}

/* After a logged run: the wake rules, the timers, the counters. skip[i]:
 * why evs[i] was not logged (NULL: it was). */
static void after_logged(struct zc_qq *q, struct zc_qq_event *evs, size_t n, const char *const *skip)
{
	long long now = (long long)zc_time_mono_ms();
	int minute = local_minute();
	pthread_mutex_lock(&q->lock);
	struct qconv *c = zc_qq_conv(q, evs[0].conversation);
	for (size_t i = 0; c && i < n; i++) {
		struct zc_qq_event *ev = &evs[i];
		if (skip[i])
			continue; /* refused by admission, or logged before: neither wakes nor counts */
		q->events_logged++;
		if (ev->temp_group[0])
			snprintf(c->temp_group, sizeof(c->temp_group), "%s", ev->temp_group);
		int w = wakes(c, ev);
		int pro = 0;
		if (!w && strncmp(ev->conversation, "group:", 6) == 0)
			pro = zc_qq_sched_proactive(&c->st, &q->so, now, minute, ev->lone_sticker,
						    zc_qq_rand(&q->rng));
		zc_qq_sched_logged(&c->st, now, w || pro, ev->message_id);
		if (w)
			zc_qq_probe(q, ZC_QQ_STAGE_LOGGED, ev->message_id);
		if (pro)
			c->st.proactive = 1;
		if (w || pro)
			mark_woken(q, c);
	}
	pthread_cond_signal(&q->log_wake); /* from a media worker: the timers may be due */
	pthread_mutex_unlock(&q->lock);
}

/* A group's name, when a message of it was logged and the name changed. */
static void keep_title(struct zc_qq *q, zcor *z, const struct zc_qq_event *ev)
{
	if (!ev->group_name || !*ev->group_name)
		return;
	char title[QQ_TITLE_BYTES];
	zc_utf8_quote(title, sizeof(title), ev->group_name, 100);
	pthread_mutex_lock(&q->lock);
	struct qconv *c = zc_qq_conv(q, ev->conversation);
	int changed = c && strcmp(c->title, title) != 0;
	if (changed)
		snprintf(c->title, sizeof(c->title), "%s", title);
	pthread_mutex_unlock(&q->lock);
	if (changed && zcor_conversation_title(z, ev->conversation, title))
		zc_qq_complain(q, "the name of %s was not kept: %s", ev->conversation, zcor_errmsg(z));
}

/* After a logged run: the name of its group, from the first message logged. */
static void after_run(struct zc_qq *q, zcor *z, struct zc_qq_event *evs, size_t n,
		      const char *const *skip)
{
	after_logged(q, evs, n, skip);
	for (size_t i = 0; i < n; i++) {
		if (!skip[i]) {
			keep_title(q, z, &evs[i]);
			break;
		}
	}
}

/* A logged run's effects (its wakes, counts, the group's name): now (a
 * media worker's, ch NULL), or noted in the chunk for the syncer, which
 * runs them once the chunk is durable (idx: the events' indexes in it). */
static void logged_run(struct zc_qq *q, zcor *z, struct qchunk *ch, const size_t *idx,
		       struct zc_qq_event *evs, size_t n, const char *const *skip)
{
	if (!ch) {
		after_run(q, z, evs, n, skip);
		return;
	}
	for (size_t k = 0; k < n; k++) {
		ch->ev[ch->nev] = idx[k];
		ch->skip[ch->nev++] = skip[k];
	}
	ch->run_end[ch->nruns++] = ch->nev;
}

/* One run of consecutive messages of one conversation, as JSON and
 * durable before it returns (a run with images, a run refused in a call
 * of many, a media worker's). ch, idx: as logged_run's. */
static void log_run(struct zc_qq *q, zcor *z, struct qchunk *ch, const size_t *idx,
		    struct zc_qq_event *evs, size_t n)
{
	const char *conv = evs[0].conversation;
	json_t *msgs = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append(msgs, evs[i].message);
	json_t *answer = NULL;
	int rc = log_batch(q, z, conv, msgs, &answer);
	if (rc == ZCOR_EINVAL && n > 1) {
		/* one bad message refuses the batch: log the others one by one */
		for (size_t i = 0; i < n; i++)
			log_run(q, z, ch, idx ? idx + i : NULL, evs + i, 1);
		json_decref(msgs);
		return;
	}
	if (rc) {
		zc_qq_complain(q, "%zu message(s) of %s not logged: %s", n, conv, zcor_errmsg(z));
	} else {
		const char *skip[QQ_RUN_MAX];
		for (size_t i = 0; i < n; i++)
			skip[i] = skipped(answer, evs[i].message_id) ? "skipped" : NULL;
		logged_run(q, z, ch, idx, evs, n, skip);
	}
	json_decref(answer);
	json_decref(msgs);
}

static void on_recall(struct zc_qq *q, zcor *z, const struct zc_qq_event *ev)
{
	char *out = NULL;
	int rc = zcor_message_recalled(z, NULL, ev->conversation, ev->message_id, ev->time_ms, &out);
	zcor_free(out);
	if (rc && rc != ZCOR_ENOTFOUND) /* never logged here: nothing to flag */
		zc_qq_complain(q, "the recall of message %s in %s was not kept: %s", ev->message_id,
			       ev->conversation, zcor_errmsg(z));
}

/* Would admission log a message of conv? (Pokes are not logged.) */
static int admitted(zcor *z, const char *conv)
{
	char *text = NULL;
	if (zcor_admission(z, conv, &text))
		return 0;
	json_t *a = json_loads(text, 0, NULL);
	zcor_free(text);
	int ok = json_is_true(json_object_get(a, "admitted"));
	json_decref(a);
	return ok;
}

/* A poke at the bot wakes a conversation admission lets in; the turn is
 * told of it as an event (nothing is logged). */
static void on_poke(struct zc_qq *q, zcor *z, const struct zc_qq_event *ev)
{
	if (!ev->conversation[0] || !admitted(z, ev->conversation))
		return;
	long long now = (long long)zc_time_mono_ms();
	pthread_mutex_lock(&q->lock);
	struct qconv *c = zc_qq_conv(q, ev->conversation);
	if (c) {
		c->poke = 1;
		snprintf(c->poke_from, sizeof(c->poke_from), "%s", ev->user_id[0] ? ev->user_id : "?");
		zc_qq_sched_logged(&c->st, now, 1, NULL);
		mark_woken(q, c);
	}
	pthread_mutex_unlock(&q->lock);
}

static void on_self(struct zc_qq *q, const struct zc_qq_event *ev)
{
	if (!ev->conversation[0] || !ev->message_id[0])
		return;
	pthread_mutex_lock(&q->lock);
	struct qconv *c = zc_qq_conv(q, ev->conversation);
	if (c && !c->sent)
		c->sent = zc_calloc(1, sizeof(*c->sent));
	if (c)
		zc_qq_sent_add(c->sent, ev->message_id);
	pthread_mutex_unlock(&q->lock);
}

/* A run: consecutive entries of log_chunk's order[], one conversation's. */
struct run {
	size_t first, n;
	size_t media; /* image bytes */
};

/* ev's message as zcor_log_batches_c takes it: its fields point into
 * ev->message; its mentions go to *men (room for them). */
static void c_message(const struct zc_qq_event *ev, struct zcor_log_msg *cm, const char **men)
{
	const json_t *m = ev->message, *x;
	size_t i;
	*cm = (struct zcor_log_msg){.id = json_string_value(json_object_get(m, "id")),
				    .time_ms = ev->time_ms,
				    .sender_id = json_string_value(json_object_get(m, "senderId")),
				    .sender_name = json_string_value(json_object_get(m, "senderName")),
				    .text = json_string_value(json_object_get(m, "text")),
				    .reply_to = json_string_value(json_object_get(m, "replyTo")),
				    .mentions = men};
	json_array_foreach(json_object_get(m, "mentions"), i, x)
		men[cm->n_mentions++] = json_string_value(x);
}

/* Logs runs (at most ZCOR's 256 batches and 4096 messages, none with
 * media) in one zcor_log_batches_c call — C values, no JSON text either
 * way; then what each logged run wakes. */
static void flush_runs(struct zc_qq *q, struct qchunk *ch, const size_t *order, const struct run *runs,
		       size_t nr)
{
	struct zc_qq_event *evs = ch->evs;
	struct zc_qq_event *tmp = q->run_evs; /* a run's events side by side (shallow copies) */
	struct zcor_log_batch *bs = q->call_batches;
	struct zcor_log_msg *ms = q->call_msgs;
	size_t nm = 0, nmen = 0;
	for (size_t r = 0; r < nr; r++) {
		bs[r] = (struct zcor_log_batch){.conversation = evs[order[runs[r].first]].conversation,
						.messages = ms + nm,
						.n = runs[r].n};
		for (size_t k = 0; k < runs[r].n; k++) {
			const struct zc_qq_event *ev = &evs[order[runs[r].first + k]];
			size_t want = json_array_size(json_object_get(ev->message, "mentions"));
			if (nmen + want > q->n_call_mentions) {
				q->n_call_mentions = 2 * (nmen + want);
				q->call_mentions = zc_realloc(q->call_mentions,
							      q->n_call_mentions * sizeof(*q->call_mentions));
			}
			/* (pointers into call_mentions are set after it stops moving) */
			ms[nm].n_mentions = nmen;
			nmen += want;
			nm++;
		}
	}
	nm = 0;
	for (size_t r = 0; r < nr; r++)
		for (size_t k = 0; k < runs[r].n; k++, nm++)
			c_message(&evs[order[runs[r].first + k]], &ms[nm], q->call_mentions + ms[nm].n_mentions);
	/* without its fsync: the syncer waits for the disk while this thread
	 * goes on with the next chunk (q->syncer) */
	if (zcor_log_batches_c(q->zlog, NULL, bs, nr, q->syncer_started ? ZCOR_LOG_NO_FSYNC : 0)) {
		size_t msgs = 0;
		for (size_t r = 0; r < nr; r++)
			msgs += runs[r].n;
		if (zcor_errcode(q->zlog) != ZCOR_EINVAL) {
			zc_qq_complain(q, "%zu message(s) of %zu conversation(s) not logged: %s", msgs, nr,
				       zcor_errmsg(q->zlog));
			return;
		}
		/* a malformed message refuses the call: each run on its own,
		 * and message by message if need be */
		for (size_t r = 0; r < nr; r++) {
			for (size_t k = 0; k < runs[r].n; k++)
				tmp[k] = evs[order[runs[r].first + k]];
			log_run(q, q->zlog, ch, order + runs[r].first, tmp, runs[r].n);
		}
		return;
	}
	ch->deferred = q->syncer_started;
	for (size_t r = 0; r < nr; r++) {
		for (size_t k = 0; k < runs[r].n; k++)
			tmp[k] = evs[order[runs[r].first + k]];
		if (bs[r].code) {
			/* refused for what it holds: on its own, message by message
			 * if need be */
			log_run(q, q->zlog, ch, order + runs[r].first, tmp, runs[r].n);
			continue;
		}
		const char *skip[QQ_RUN_MAX];
		for (size_t k = 0; k < runs[r].n; k++)
			skip[k] = bs[r].messages[k].skipped;
		logged_run(q, q->zlog, ch, order + runs[r].first, tmp, runs[r].n, skip);
	}
}

/*
 * The chunk's messages grouped by conversation (each conversation's in
 * their order), logged with one zcor_log_batches call for many runs: one
 * commit for a burst across many groups. A run is at most QQ_RUN_MAX
 * messages and QQ_BATCH_MEDIA image bytes; the rest of its conversation
 * makes the next run, logged after it.
 */
static void log_chunk(struct zc_qq *q, struct qchunk *ch)
{
	struct zc_qq_event *evs = ch->evs;
	size_t n = ch->n;
	static size_t order[QQ_CHUNK];
	static struct run runs[QQ_CHUNK];
	static char done[QQ_CHUNK];
	size_t nruns = 0, norder = 0;
	double deadline = zc_time_mono_ms() + q->media_timeout_ms; /* every download of the chunk */
	memset(done, 0, n);
	for (size_t i = 0; i < n; i++) {
		if (done[i] || evs[i].kind != ZC_QQ_MESSAGE)
			continue;
		struct run *r = &runs[nruns++];
		r->first = norder;
		r->media = 0;
		for (size_t j = i; j < n && norder - r->first < QQ_RUN_MAX && r->media < QQ_BATCH_MEDIA;
		     j++) {
			if (done[j] || evs[j].kind != ZC_QQ_MESSAGE ||
			    strcmp(evs[j].conversation, evs[i].conversation) != 0)
				continue;
			attach_images(q, &evs[j], &r->media, deadline);
			done[j] = 1;
			order[norder++] = j;
		}
		r->n = norder - r->first;
	}
	/* (images are downloaded here only when no media worker started: a
	 * run with some is logged on its own, as JSON, in its place) */
	for (size_t a = 0; a < nruns;) {
		if (runs[a].media) {
			struct zc_qq_event *tmp = q->run_evs;
			for (size_t k = 0; k < runs[a].n; k++)
				tmp[k] = evs[order[runs[a].first + k]];
			log_run(q, q->zlog, ch, order + runs[a].first, tmp, runs[a].n);
			a++;
			continue;
		}
		size_t b = a, msgs = 0;
		while (b < nruns && !runs[b].media && b - a < QQ_CALL_BATCHES &&
		       msgs + runs[b].n <= QQ_CALL_MESSAGES) {
			msgs += runs[b].n;
			b++;
		}
		flush_runs(q, ch, order, runs + a, b - a);
		a = b;
	}
}

/* ---- images: off the logging thread ------------------------------------ */

static int has_images(const struct zc_qq_event *ev)
{
	size_t i;
	json_t *img;
	json_array_foreach(ev->images, i, img) {
		const char *url = json_string_value(json_object_get(img, "url"));
		if (url && *url)
			return 1;
	}
	return 0;
}

/*
 * Moves the chunk's messages with images to download, and every later
 * message or recall of their conversations, onto those conversations'
 * held lists (in order) and their conversations onto the media queue: a
 * slow image host then holds up its own conversation only, while the
 * logging thread goes on with the others'. A moved event is IGNORE in
 * evs.
 */
static void hand_over(struct zc_qq *q, struct zc_qq_event *evs, size_t n)
{
	if (!q->nmedia)
		return; /* no media worker: log_chunk downloads them itself */
	pthread_mutex_lock(&q->lock);
	for (size_t i = 0; i < n; i++) {
		struct zc_qq_event *ev = &evs[i];
		if ((ev->kind != ZC_QQ_MESSAGE && ev->kind != ZC_QQ_RECALL) || !ev->conversation[0])
			continue;
		int images = ev->kind == ZC_QQ_MESSAGE && has_images(ev);
		if (!images && !q->n_media_busy)
			continue;
		struct qconv *c = zc_qq_conv(q, ev->conversation);
		if (!c || (!images && !c->media_busy))
			continue;
		struct qheld *h = zc_calloc(1, sizeof(*h));
		h->ev = *ev;
		memset(ev, 0, sizeof(*ev));
		ev->kind = ZC_QQ_IGNORE;
		if (c->held_tail)
			c->held_tail->next = h;
		else
			c->held = h;
		c->held_tail = h;
		if (!c->media_busy) {
			c->media_busy = 1;
			q->n_media_busy++;
			c->mnext = NULL;
			if (q->mq_tail)
				q->mq_tail->mnext = c;
			else
				q->mq_head = c;
			q->mq_tail = c;
			pthread_cond_signal(&q->media_wake);
		}
	}
	pthread_mutex_unlock(&q->lock);
}

/* One conversation's held events, in order: messages in runs (their
 * images downloaded first, all of them within one mediaTimeoutMs),
 * recalls after the messages they name. Frees the list. */
static void media_job(struct zc_qq *q, zcor *z, struct qheld *list)
{
	double deadline = zc_time_mono_ms() + q->media_timeout_ms;
	struct zc_qq_event *run = zc_calloc(QQ_RUN_MAX, sizeof(*run));
	while (list) {
		struct qheld *h = list;
		if (h->ev.kind == ZC_QQ_RECALL) {
			on_recall(q, z, &h->ev);
		} else {
			size_t n = 0, bytes = 0;
			for (; h && h->ev.kind == ZC_QQ_MESSAGE && n < QQ_RUN_MAX && bytes < QQ_BATCH_MEDIA;
			     h = h->next) {
				attach_images(q, &h->ev, &bytes, deadline);
				run[n++] = h->ev; /* shallow: the list keeps them */
			}
			log_run(q, z, NULL, NULL, run, n);
		}
		struct qheld *end = h == list ? h->next : h;
		while (list != end) {
			struct qheld *next = list->next;
			zc_qq_event_release(&list->ev);
			zc_free(list);
			list = next;
		}
	}
	zc_free(run);
}

static void *media_main(void *arg)
{
	struct qmedia *w = arg;
	struct zc_qq *q = w->q;
	zcor *z = w->z;
	pthread_mutex_lock(&q->lock);
	for (;;) {
		struct qconv *c = q->mq_head;
		if (!c) {
			if (q->media_closing)
				break;
			pthread_cond_wait(&q->media_wake, &q->lock);
			continue;
		}
		q->mq_head = c->mnext;
		if (!q->mq_head)
			q->mq_tail = NULL;
		for (struct qheld *list; (list = c->held);) {
			c->held = c->held_tail = NULL;
			pthread_mutex_unlock(&q->lock);
			media_job(q, z, list);
			pthread_mutex_lock(&q->lock);
		}
		c->media_busy = 0; /* its next messages are the logging thread's again */
		q->n_media_busy--;
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

/* A chunk of events, in order (the logging thread): parsed, the bot's
 * own noted, the images handed over, the messages logged; then the
 * chunk goes to the syncer. */
static void process(struct zc_qq *q, struct qchunk *ch)
{
	struct zc_qq_event *evs = ch->evs;
	size_t n = ch->n;
	char self[QQ_ID_MAX];
	zc_qq_self(q, self, sizeof(self));
	for (size_t i = 0; i < n; i++) {
		char err[300];
		if (zc_qq_event_parse(ch->raw[i], self, q->name_ptrs, q->n_names, &evs[i], err, sizeof(err))) {
			zc_qq_complain(q, "an event was dropped: %s", err);
			zc_qq_event_release(&evs[i]);
			memset(&evs[i], 0, sizeof(evs[i]));
			evs[i].kind = ZC_QQ_IGNORE;
		} else if (q->probe && evs[i].kind == ZC_QQ_MESSAGE) {
			zc_qq_probe(q, ZC_QQ_STAGE_TAKEN, evs[i].message_id);
		}
	}
	/* the bot's own messages first: a reply to one in this chunk wakes it */
	for (size_t i = 0; i < n; i++)
		if (evs[i].kind == ZC_QQ_SELF)
			on_self(q, &evs[i]); /* never logged */
	hand_over(q, evs, n);
	ch->nruns = ch->nev = 0;
	ch->deferred = 0;
	log_chunk(q, ch);
}

/* ---- the syncer: a logged chunk made durable, then acted on ---------- */

/* A logged chunk (the syncer, or the logging thread when no syncer runs):
 * the disk first (its messages were committed without their fsync),
 * then what they wake and count (a message is acknowledged — counted,
 * able to wake the bot — once it is durable), the due turns queued at
 * once, then its recalls and pokes (after the messages they name); its
 * events released. */
static void finish_chunk(struct zc_qq *q, struct qchunk *ch)
{
	zcor *z = q->zsync ? q->zsync : q->zlog;
	int durable = 1;
	if (ch->deferred && zcor_sync(z)) {
		zc_qq_complain(q, "%zu message(s) were logged but may not be on the disk: %s; they wake "
			       "nothing", ch->nev, zcor_errmsg(z));
		durable = 0;
	}
	for (size_t r = 0, at = 0; durable && r < ch->nruns; r++) {
		size_t n = ch->run_end[r] - at;
		for (size_t k = 0; k < n; k++)
			q->sync_evs[k] = ch->evs[ch->ev[at + k]]; /* shallow */
		after_run(q, z, q->sync_evs, n, ch->skip + at);
		at = ch->run_end[r];
	}
	if (ch->nruns) {
		pthread_mutex_lock(&q->lock);
		if (!q->stopping)
			dispatch(q, (long long)zc_time_mono_ms());
		pthread_mutex_unlock(&q->lock);
	}
	for (size_t i = 0; i < ch->n; i++) {
		if (ch->evs[i].kind == ZC_QQ_RECALL)
			on_recall(q, z, &ch->evs[i]);
		else if (ch->evs[i].kind == ZC_QQ_POKE && ch->evs[i].poke_at_bot)
			on_poke(q, z, &ch->evs[i]);
	}
	for (size_t i = 0; i < ch->n; i++) {
		zc_qq_event_release(&ch->evs[i]);
		json_decref(ch->raw[i]);
	}
	ch->n = 0;
}

/* The chunks the logging thread logged, in order: while one waits here
 * for its fsync the logging thread parses and writes the next. */
static void *syncer_main(void *arg)
{
	struct zc_qq *q = arg;
	zc_qq_thread_name("zc-qq-sync");
	pthread_mutex_lock(&q->lock);
	for (;;) {
		struct qchunk *ch = &q->chunks[q->sync_next];
		if (ch->state != QQ_CHUNK_LOGGED) {
			if (q->logger_done)
				break;
			pthread_cond_wait(&q->sync_wake, &q->lock);
			continue;
		}
		pthread_mutex_unlock(&q->lock);
		finish_chunk(q, ch);
		pthread_mutex_lock(&q->lock);
		ch->state = QQ_CHUNK_FREE;
		q->sync_next ^= 1;
		pthread_cond_signal(&q->log_wake); /* its buffer is free again */
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

/* ---- the timers -------------------------------------------------------- */

/* Queues the due turns; the next deadline (ms, mono), or 0. Under the lock. */
static long long dispatch(struct zc_qq *q, long long now)
{
	long long next = 0;
	struct qconv **pp = &q->woken;
	while (*pp) {
		struct qconv *c = *pp;
		if (c->running || c->queued) { /* its next batch comes after it */
			pp = &c->wnext;
			continue;
		}
		long long due = zc_qq_sched_due(&c->st, &q->so);
		if (!due) { /* its wake was answered by the turn that ended (zc_qq_sched_answered) */
			*pp = c->wnext;
			c->in_woken = 0;
			continue;
		}
		if (due > now) {
			if (!next || due < next)
				next = due;
			pp = &c->wnext;
			continue;
		}
		*pp = c->wnext;
		c->in_woken = 0;
		int pro = c->st.proactive;
		if (!zc_qq_sched_start(&c->st, &q->so, now, c->quote, sizeof(c->quote))) {
			q->rate_limited++;
			c->poke = 0;
			continue;
		}
		c->proactive = pro;
		c->queued = 1;
		c->rnext = NULL;
		if (q->runq_tail)
			q->runq_tail->rnext = c;
		else
			q->runq_head = c;
		q->runq_tail = c;
		q->nqueued++;
		zc_qq_probe(q, ZC_QQ_STAGE_QUEUED, c->quote);
		pthread_cond_signal(&q->work_wake);
	}
	return next;
}

static void *logger_main(void *arg)
{
	struct zc_qq *q = arg;
	zc_qq_thread_name("zc-qq-log");
	pthread_mutex_lock(&q->lock);
	for (;;) {
		long long now = (long long)zc_time_mono_ms();
		long long next = q->stopping ? 0 : dispatch(q, now);
		struct qchunk *ch = &q->chunks[q->fill_next];
		if (q->evn == 0 || ch->state != QQ_CHUNK_FREE) { /* (a full pipeline: the syncer frees one) */
			if (q->evn == 0 && q->stopping && q->ob_closed)
				break;
			if (next) {
				struct timespec ts;
				long long wait = next - now;
				clock_gettime(CLOCK_MONOTONIC, &ts);
				ts.tv_sec += (time_t)(wait / 1000);
				ts.tv_nsec += (long)(wait % 1000) * 1000000L;
				if (ts.tv_nsec >= 1000000000L) {
					ts.tv_sec++;
					ts.tv_nsec -= 1000000000L;
				}
				pthread_cond_timedwait(&q->log_wake, &q->lock, &ts);
			} else {
				pthread_cond_wait(&q->log_wake, &q->lock);
			}
			continue;
		}
		size_t n = 0;
		while (q->evn && n < QQ_CHUNK) {
			ch->raw[n++] = q->evq[q->evhead];
			q->evhead = (q->evhead + 1) % QQ_QUEUE_MAX;
			q->evn--;
		}
		ch->n = n;
		ch->state = QQ_CHUNK_FILLING;
		pthread_cond_broadcast(&q->room);
		pthread_mutex_unlock(&q->lock);
		process(q, ch);
		if (!q->syncer_started)
			finish_chunk(q, ch);
		pthread_mutex_lock(&q->lock);
		if (q->syncer_started) {
			ch->state = QQ_CHUNK_LOGGED;
			q->fill_next ^= 1;
			pthread_cond_signal(&q->sync_wake);
		} else {
			ch->state = QQ_CHUNK_FREE;
		}
	}
	q->logger_done = 1;
	pthread_cond_signal(&q->sync_wake);
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

/* ---- opening: the settings --------------------------------------------- */

static const char *str_of(const json_t *o, const char *k, const char *dflt)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : dflt;
}

static long int_of(const json_t *o, const char *k, long dflt)
{
	json_t *v = json_object_get(o, k);
	return json_is_integer(v) ? (long)json_integer_value(v) : dflt;
}

/* Reads worlds.qq from the settings in effect. 0, 1 when not enabled, or
 * -1 with why. */
static int read_settings(struct zc_qq *q, zcor *z, char *err, size_t cap)
{
	char *text = NULL;
	if (zcor_config_json(z, &text)) {
		snprintf(err, cap, "cannot read config.json: %s", zcor_errmsg(z));
		return -1;
	}
	json_t *cfg = json_loads(text, 0, NULL);
	zcor_free(text);
	int rc = -1;
	const char *warning = json_string_value(json_object_get(cfg, "warning"));
	/* a bad QQ setting stops `zcor serve` rather than running on an
	 * older copy of it (other keys keep their last good values) */
	if (warning && (strstr(warning, "'worlds.qq") || strstr(warning, "'botId'"))) {
		snprintf(err, cap, "%s", warning);
		goto out;
	}
	json_t *o = json_object_get(json_object_get(cfg, "worlds"), "qq");
	if (!json_is_true(json_object_get(o, "enabled"))) {
		rc = 1;
		goto out;
	}
	q->reverse = strcmp(str_of(o, "mode", "forward"), "reverse") == 0;
	snprintf(q->url, sizeof(q->url), "%s", str_of(o, "url", ""));
	snprintf(q->path, sizeof(q->path), "%s", str_of(o, "path", "/onebot/v11/ws"));
	snprintf(q->bot_id, sizeof(q->bot_id), "%s", str_of(cfg, "botId", ""));
	const char *env = str_of(o, "accessTokenEnv", "NAPCAT_TOKEN");
	snprintf(q->token_env, sizeof(q->token_env), "%s", env);
	const char *token = getenv(env);
	if (token && *token)
		q->token = zc_strdup(token);
	else if (q->reverse) {
		snprintf(err, cap,
			 "worlds.qq.mode is \"reverse\", which needs NapCat's access token: set the "
			 "environment variable %s (worlds.qq.accessTokenEnv) to the token configured in "
			 "NapCat's network.websocketClients",
			 env);
		goto out;
	}
	size_t i;
	json_t *name;
	json_array_foreach(json_object_get(o, "names"), i, name) {
		if (i >= ZC_QQ_NAMES_MAX)
			break;
		snprintf(q->names[i], sizeof(q->names[i]), "%s", json_string_value(name));
		q->name_ptrs[i] = q->names[i];
		q->n_names = (int)i + 1;
	}
	q->so.quiet_ms = int_of(o, "quietMs", 1500);
	q->so.max_wait_ms = int_of(o, "maxWaitMs", 6000);
	q->so.replies_per_minute = (int)int_of(o, "repliesPerMinute", 6);
	json_t *pro = json_object_get(o, "proactive");
	q->so.probability = json_number_value(json_object_get(pro, "probability"));
	q->so.cooldown_ms = 1000LL * int_of(pro, "cooldownS", 600);
	zc_qq_quiet_parse(str_of(pro, "quietHours", ""), &q->so.quiet_from, &q->so.quiet_to);
	q->action_timeout_ms = (int)int_of(o, "actionTimeoutMs", 10000);
	q->reconnect_min_ms = (int)int_of(o, "reconnectMinMs", 1000);
	q->reconnect_max_ms = (int)int_of(o, "reconnectMaxMs", 60000);
	if (q->reconnect_min_ms > q->reconnect_max_ms)
		q->reconnect_min_ms = q->reconnect_max_ms;
	q->max_turns = (int)int_of(o, "maxConcurrentTurns", 4);
	q->reply_max_chars = (int)int_of(o, "replyMaxChars", 1500);
	q->image_file = strcmp(str_of(o, "imageMode", "base64"), "file") == 0;
	q->media_max_bytes = int_of(o, "mediaMaxBytes", 10L << 20);
	q->media_timeout_ms = (int)int_of(o, "mediaTimeoutMs", 10000);
	q->pipeline = json_is_true(json_object_get(o, "pipelineLogging"));
	rc = 0;
out:
	json_decref(cfg);
	return rc;
}

int zc_qq_open(const char *dir, struct zc_qq **out, char *err, size_t cap)
{
	*out = NULL;
	zcor *z = NULL;
	if (zcor_open(&z, dir) != ZCOR_OK) {
		snprintf(err, cap, "the QQ world cannot open '%s': %s", dir, zcor_errmsg(z));
		zcor_close(z);
		return -1;
	}
	struct zc_qq *q = zc_calloc(1, sizeof(*q));
	int rc = read_settings(q, z, err, cap);
	if (rc) {
		zc_free(q->token);
		zc_free(q);
		zcor_close(z);
		return rc > 0 ? 0 : -1;
	}
	q->dir = zc_strdup(dir);
	q->zlog = z;
	q->run_evs = zc_calloc(QQ_RUN_MAX, sizeof(*q->run_evs));
	q->sync_evs = zc_calloc(QQ_RUN_MAX, sizeof(*q->sync_evs));
	q->chunks = zc_calloc(2, sizeof(*q->chunks));
	q->call_batches = zc_calloc(QQ_CALL_BATCHES, sizeof(*q->call_batches));
	q->call_msgs = zc_calloc(QQ_CALL_MESSAGES, sizeof(*q->call_msgs));
	char *abs = realpath(zcor_dir(z), NULL);
	snprintf(q->stickers_dir, sizeof(q->stickers_dir), "%s/stickers", abs ? abs : zcor_dir(z));
	free(abs);
	if (getrandom(&q->rng, sizeof(q->rng), 0) != (ssize_t)sizeof(q->rng))
		q->rng = (uint64_t)zc_time_now_ms() ^ (uint64_t)(uintptr_t)q;
	pthread_mutex_init(&q->lock, NULL);
	pthread_condattr_t mono;
	pthread_condattr_init(&mono);
	pthread_condattr_setclock(&mono, CLOCK_MONOTONIC);
	pthread_cond_init(&q->log_wake, &mono);
	pthread_cond_init(&q->work_wake, &mono);
	pthread_cond_init(&q->room, &mono);
	pthread_cond_init(&q->media_wake, &mono);
	pthread_cond_init(&q->sync_wake, &mono);
	pthread_cond_init(&q->note_wake, &mono);
	pthread_condattr_destroy(&mono);
	struct zc_ob_opts oo = {.mode = q->reverse ? ZC_OB_REVERSE : ZC_OB_FORWARD,
				.url = q->url,
				.token = q->token,
				.token_env = q->token_env,
				.connect_timeout_ms = q->action_timeout_ms,
				.action_timeout_ms = q->action_timeout_ms,
				.reconnect_min_ms = q->reconnect_min_ms,
				.reconnect_max_ms = q->reconnect_max_ms};
	struct zc_ob_cb cb = {.on_event = on_event, .on_up = on_up, .on_down = on_down, .ud = q};
	q->ob = zc_ob_new(&oo, &cb);
	if (!q->ob) {
		snprintf(err, cap, "out of memory");
		zc_qq_stop(q);
		return -1;
	}
	*out = q;
	return 0;
}

int zc_qq_start(struct zc_qq *q, char *err, size_t cap)
{
	char *out = NULL;
	/* a valid key only for the check: nothing is logged or run */
	if (zcor_turn(q->zlog, "private:0", "{\"check\":true}", &out) == ZCOR_ENOPROVIDER)
		fprintf(stderr, "qq: no provider in config.json: messages are logged but the bot does not "
				"answer (docs/PROVIDERS.md)\n");
	zcor_free(out);
	/* the noter (its own handle): the workers hand it their delivery notes
	 * and take the next turn while it writes them and waits for the disk;
	 * without it each worker notes its own deliveries */
	if (zcor_open(&q->znote, q->dir) != ZCOR_OK) {
		fprintf(stderr, "qq: the delivery noter cannot open '%s': %s\n", q->dir, zcor_errmsg(q->znote));
		zcor_close(q->znote);
		q->znote = NULL;
	} else if (pthread_create(&q->noter, NULL, zc_qq_noter, q) == 0) {
		q->noter_started = 1;
	}
	q->workers = zc_calloc((size_t)q->max_turns, sizeof(*q->workers));
	for (int i = 0; i < q->max_turns; i++) {
		if (pthread_create(&q->workers[i], NULL, zc_qq_worker, q) != 0) {
			snprintf(err, cap, "cannot start a turn worker: %s", strerror(errno));
			return -1;
		}
		q->nworkers++;
	}
	/* the media workers (a handle each; without any, the logging thread
	 * downloads images itself) */
	for (int i = 0; i < QQ_MEDIA_WORKERS; i++) {
		struct qmedia *w = &q->media[q->nmedia];
		w->q = q;
		if (zcor_open(&w->z, q->dir) != ZCOR_OK) {
			fprintf(stderr, "qq: an image download worker cannot open '%s': %s\n", q->dir,
				zcor_errmsg(w->z));
			zcor_close(w->z);
			w->z = NULL;
			break;
		}
		if (pthread_create(&w->thread, NULL, media_main, w) != 0) {
			zcor_close(w->z);
			w->z = NULL;
			break;
		}
		q->nmedia++;
	}
	/* worlds.qq.pipelineLogging: the syncer (its own handle: it flushes,
	 * and notes the groups' names, while the logging thread writes);
	 * without it the logging thread waits for each chunk's fsync itself
	 * (the default: on this 2-core machine the pipeline's extra thread
	 * made a mention's p99 worse, docs/PERFORMANCE.md) */
	if (!q->pipeline) {
		/* (no syncer) */
	} else if (zcor_open(&q->zsync, q->dir) != ZCOR_OK) {
		fprintf(stderr, "qq: the logging syncer cannot open '%s': %s\n", q->dir, zcor_errmsg(q->zsync));
		zcor_close(q->zsync);
		q->zsync = NULL;
	} else if (pthread_create(&q->syncer, NULL, syncer_main, q) == 0) {
		q->syncer_started = 1;
	}
	if (pthread_create(&q->logger, NULL, logger_main, q) != 0) {
		snprintf(err, cap, "cannot start the QQ world's logging thread: %s", strerror(errno));
		return -1;
	}
	q->logger_started = 1;
	if (zc_ob_start(q->ob)) {
		snprintf(err, cap, "cannot start the OneBot connection");
		return -1;
	}
	if (q->reverse)
		fprintf(stderr, "qq: waiting for NapCat on %s (reverse)\n", q->path);
	return 0;
}

/* ---- reverse mode -------------------------------------------------------- */

const char *zc_qq_reverse_path(const struct zc_qq *q)
{
	return q && q->reverse ? q->path : NULL;
}

/* Constant time in the length of the given token. */
static int token_eq(const char *want, const char *given)
{
	if (!want || !given)
		return 0;
	size_t a = strlen(want), b = strlen(given);
	unsigned char d = a != b;
	for (size_t i = 0; i < b; i++)
		d |= (unsigned char)(given[i] ^ want[i % (a ? a : 1)]);
	return d == 0;
}

int zc_qq_check_reverse(struct zc_qq *q, const char *authorization, const char *query_token,
			const char *self_id, const char *role, char *err, size_t cap)
{
	const char *given = NULL;
	if (authorization && strncasecmp(authorization, "Bearer ", 7) == 0)
		given = authorization + 7;
	else if (authorization && strncasecmp(authorization, "Token ", 6) == 0)
		given = authorization + 6; /* OneBot v11's own spelling */
	else if (query_token)
		given = query_token;
	if (!token_eq(q->token, given)) {
		snprintf(err, cap, "%s: set %s in zcor serve's environment to the token of NapCat's "
				   "network.websocketClients entry",
			 given ? "wrong access token" : "no access token (Authorization: Bearer …)", q->token_env);
		return 401;
	}
	if (!self_id || !*self_id || strlen(self_id) >= QQ_ID_MAX ||
	    strspn(self_id, "0123456789") != strlen(self_id)) {
		snprintf(err, cap, "X-Self-ID must be the bot's QQ number (digits)");
		return 400;
	}
	if (q->bot_id[0] && strcmp(self_id, q->bot_id) != 0) {
		snprintf(err, cap, "X-Self-ID %s is not botId %s in config.json", self_id, q->bot_id);
		return 400;
	}
	if (!role || strcasecmp(role, "Universal") != 0) {
		snprintf(err, cap, "x-client-role must be \"Universal\" (NapCat's websocketClients)");
		return 400;
	}
	return 0;
}

int zc_qq_adopt(struct zc_qq *q, int fd, const char *extra, size_t extra_len, const char *self_id,
		void (*close_fd)(void *ud, int fd), void *close_ud)
{
	return zc_ob_adopt(q->ob, fd, extra, extra_len, self_id, close_fd, close_ud);
}

/* ---- status and stop ------------------------------------------------------- */

json_t *zc_qq_status(struct zc_qq *q)
{
	json_t *conn = zc_ob_status(q->ob);
	json_t *groups = json_array();
	pthread_mutex_lock(&q->lock);
	for (struct qconv *c = q->lru_head; c; c = c->next)
		if (c->title[0])
			json_array_append_new(groups, json_pack("{s:s, s:s}", "conversation", c->key, "name",
								c->title));
	json_t *st = json_pack("{s:b, s:s, s:o, s:s, s:o, s:i, s:i, s:I, s:I, s:I, s:I, s:I}", "enabled",
			       1, "mode", q->reverse ? "reverse" : "forward", "connection",
			       conn ? conn : json_null(), "selfId", q->bot_id[0] ? q->bot_id : q->self_id,
			       "groups", groups, "turnsRunning", q->nrunning, "queued", q->nqueued,
			       "sendsFailed", (json_int_t)q->sends_failed, "rateLimited",
			       (json_int_t)q->rate_limited, "eventsLogged", (json_int_t)q->events_logged,
			       "eventsDropped", (json_int_t)q->events_dropped, "turnsFailed",
			       (json_int_t)q->turns_failed);
	pthread_mutex_unlock(&q->lock);
	return st;
}

void zc_qq_stop(struct zc_qq *q)
{
	if (!q)
		return;
	pthread_mutex_lock(&q->lock);
	q->stopping = 1;
	pthread_cond_broadcast(&q->work_wake);
	pthread_cond_broadcast(&q->log_wake);
	pthread_mutex_unlock(&q->lock);
	/* running turns finish and send (their sends need the connection) */
	for (int i = 0; i < q->nworkers; i++)
		pthread_join(q->workers[i], NULL);
	if (q->noter_started) { /* it writes and syncs what the workers queued, then ends */
		pthread_mutex_lock(&q->lock);
		q->notes_closing = 1;
		pthread_cond_broadcast(&q->note_wake);
		pthread_mutex_unlock(&q->lock);
		pthread_join(q->noter, NULL);
	}
	zcor_close(q->znote);
	if (q->ob)
		zc_ob_free(q->ob); /* no event comes after this */
	if (q->logger_started) {
		pthread_mutex_lock(&q->lock);
		q->ob_closed = 1;
		pthread_cond_broadcast(&q->log_wake);
		pthread_mutex_unlock(&q->lock);
		pthread_join(q->logger, NULL); /* it logs what was queued, then ends */
	}
	if (q->syncer_started) {
		if (!q->logger_started) { /* (it never started: nothing to wait for) */
			pthread_mutex_lock(&q->lock);
			q->logger_done = 1;
			pthread_cond_signal(&q->sync_wake);
			pthread_mutex_unlock(&q->lock);
		}
		pthread_join(q->syncer, NULL); /* it finishes what was logged, then ends */
	}
	zcor_close(q->zsync);
	/* then the media workers log what the logging thread handed them */
	pthread_mutex_lock(&q->lock);
	q->media_closing = 1;
	pthread_cond_broadcast(&q->media_wake);
	pthread_mutex_unlock(&q->lock);
	for (int i = 0; i < q->nmedia; i++) {
		pthread_join(q->media[i].thread, NULL);
		zcor_close(q->media[i].z);
	}
	for (size_t i = 0; i < q->evn; i++)
		json_decref(q->evq[(q->evhead + i) % QQ_QUEUE_MAX]);
	for (size_t b = 0; b < QQ_BUCKETS; b++) {
		for (struct qconv *c = q->buckets[b], *nx; c; c = nx) {
			nx = c->hnext;
			for (struct qheld *h = c->held, *hn; h; h = hn) { /* (none once the workers ran) */
				hn = h->next;
				zc_qq_event_release(&h->ev);
				zc_free(h);
			}
			zc_free(c->sent);
			zc_free(c);
		}
	}
	pthread_cond_destroy(&q->log_wake);
	pthread_cond_destroy(&q->work_wake);
	pthread_cond_destroy(&q->room);
	pthread_cond_destroy(&q->media_wake);
	pthread_cond_destroy(&q->sync_wake);
	pthread_cond_destroy(&q->note_wake);
	pthread_mutex_destroy(&q->lock);
	zcor_close(q->zlog);
	zc_free(q->run_evs);
	zc_free(q->sync_evs);
	zc_free(q->chunks);
	zc_free(q->call_batches);
	zc_free(q->call_msgs);
	zc_free(q->call_mentions);
	zc_free(q->workers);
	zc_free(q->token);
	zc_free(q->dir);
	zc_free(q);
}
