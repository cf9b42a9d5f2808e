/*
 * qq_turns.c — the QQ world's turn workers (qq.h, docs/QQ.md "Replies"):
 * worlds.qq.maxConcurrentTurns threads, each with its own zcor handle,
 * take due conversations off the run queue (one turn at a time per
 * conversation: qq.c never queues a running one), run zcor_turn, turn the
 * reply into OneBot messages (zc_qq_reply_segments), send them, remember
 * their message ids (a reply to one wakes the bot) and hand the delivery
 * note to the noter, which writes it on the turn's record and waits for
 * its fsync off the workers (zcor_turn_note_flags, zcor_sync).
 *
 * A send that never left (ZC_OB_NOT_SENT) is tried once more after the
 * connection is back; one that may have run (ZC_OB_LOST, ZC_OB_TIMEOUT)
 * is never sent again: the record says "unknown". World layer.
 */
#include "world/qq_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "base/alloc.h"

/* ---- a sticker's bytes for a reply ------------------------------------ */

static int read_sticker(void *ud, const char *file, char **data, size_t *len)
{
	zcor *z = ud;
	char *bytes = NULL;
	size_t n = 0;
	const char *mime = NULL;
	*data = NULL;
	*len = 0;
	if (zcor_sticker_read(z, file, &bytes, &n, &mime))
		return -1;
	*data = malloc(n ? n : 1); /* the caller free()s it (qq_event.h) */
	if (*data) {
		memcpy(*data, bytes, n);
		*len = n;
	}
	zcor_free(bytes);
	return *data ? 0 : -1;
}

/* ---- sending ------------------------------------------------------------ */

/* A decimal id as the number OneBot wants. */
static json_t *id_number(const char *id) { return json_integer((json_int_t)strtoll(id, NULL, 10)); }

static json_t *send_params(const char *conv, const char *temp_group, json_t *message)
{
	if (strncmp(conv, "group:", 6) == 0)
		return json_pack("{s:o, s:O}", "group_id", id_number(conv + 6), "message", message);
	json_t *p = json_pack("{s:o, s:O}", "user_id", id_number(conv + 8), "message", message);
	if (p && temp_group && *temp_group)
		json_object_set_new(p, "group_id", id_number(temp_group));
	return p;
}

static void remember_sent(struct zc_qq *q, const char *conv, const char *id)
{
	pthread_mutex_lock(&q->lock);
	struct qconv *c = zc_qq_conv(q, conv);
	if (c && !c->sent)
		c->sent = zc_calloc(1, sizeof(*c->sent));
	if (c)
		zc_qq_sent_add(c->sent, id);
	pthread_mutex_unlock(&q->lock);
}

static int stopping(struct zc_qq *q)
{
	pthread_mutex_lock(&q->lock);
	int s = q->stopping;
	pthread_mutex_unlock(&q->lock);
	return s;
}

/* ---- the delivery notes: written and synced off the workers ---------- */

void zc_qq_thread_name(const char *name) { prctl(PR_SET_NAME, name, 0, 0, 0); }

/* Hands body (owned) to the noter; waits while QQ_NOTES_MAX are queued
 * (a disk that does not answer holds the workers then, not memory). */
static void queue_note(struct zc_qq *q, long long turn, char *body, const char *quote)
{
	struct qnote *n = zc_calloc(1, sizeof(*n));
	n->turn = turn;
	n->body = body;
	snprintf(n->quote, sizeof(n->quote), "%s", quote ? quote : "");
	pthread_mutex_lock(&q->lock);
	while (q->nnotes >= QQ_NOTES_MAX)
		pthread_cond_wait(&q->note_wake, &q->lock);
	if (q->note_tail)
		q->note_tail->next = n;
	else
		q->note_head = n;
	q->note_tail = n;
	q->nnotes++;
	pthread_cond_broadcast(&q->note_wake);
	pthread_mutex_unlock(&q->lock);
}

/*
 * The noter: takes every note queued, writes each without its fsync, then
 * waits for one fsync (zcor_sync) that makes them — and the records
 * their turns committed before the reply went out (deferSync) — durable
 * (docs/FORMATS.md, "A QQ turn's record"). The workers meanwhile take
 * the next turns.
 */
void *zc_qq_noter(void *arg)
{
	struct zc_qq *q = arg;
	zcor *z = q->znote;
	zc_qq_thread_name("zc-qq-note");
	pthread_mutex_lock(&q->lock);
	for (;;) {
		if (!q->note_head) {
			if (q->notes_closing)
				break;
			pthread_cond_wait(&q->note_wake, &q->lock);
			continue;
		}
		struct qnote *list = q->note_head;
		q->note_head = q->note_tail = NULL;
		q->nnotes = 0;
		pthread_cond_broadcast(&q->note_wake); /* room for the workers' notes */
		pthread_mutex_unlock(&q->lock);
		for (struct qnote *n = list; n; n = n->next)
			if (zcor_turn_note_flags(z, n->turn, n->body, ZCOR_NOTE_NO_FSYNC))
				zc_qq_complain(q, "the delivery of turn %lld was not recorded: %s", n->turn,
					       zcor_errmsg(z));
		if (zcor_sync(z))
			zc_qq_complain(q, "the delivery notes (and their turns' records) may not be on the disk: %s",
				       zcor_errmsg(z));
		for (struct qnote *n = list, *nx; n; n = nx) {
			nx = n->next;
			zc_qq_probe(q, ZC_QQ_STAGE_NOTED, n->quote);
			zc_free(n->body);
			zc_free(n);
		}
		pthread_mutex_lock(&q->lock);
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

/*
 * Sends text (a reply or an apology) in conv and notes how it went on
 * turn_id's record (0: none): by the noter when it runs, else here.
 */
static void deliver(struct zc_qq *q, zcor *z, const char *conv, const char *temp_group,
		    const char *quote, long long turn_id, const char *text)
{
	int group = strncmp(conv, "group:", 6) == 0;
	struct zc_qq_reply_opts ro = {.quote_id = group && quote && *quote ? quote : NULL,
				      .max_chars = q->reply_max_chars,
				      .local_files = q->image_file,
				      .stickers_dir = q->stickers_dir,
				      .sticker = read_sticker,
				      .sticker_ud = z};
	json_t *msgs = NULL, *problems = NULL;
	char err[sizeof(((struct zc_ob_result *)0)->message)];
	json_t *ids = json_array();
	const char *status = "sent";
	struct zc_ob_result res = {0};
	int retried = 0, failed = 0;
	if (zc_qq_reply_segments(text, &ro, &msgs, &problems, err, sizeof(err))) {
		status = "failed";
		snprintf(res.message, sizeof(res.message), "%s", err);
		failed = 1;
	}
	size_t i;
	json_t *m;
	json_array_foreach(msgs, i, m) {
		if (failed)
			break;
		const char *action = group ? "send_group_msg" : "send_private_msg";
		json_t *params = send_params(conv, temp_group, m);
		json_t *data = NULL;
		int rc = zc_ob_call(q->ob, action, params, 0, 0, &data, &res);
		if (i == 0)
			zc_qq_probe(q, ZC_QQ_STAGE_SENT, quote);
		if (rc && res.fail == ZC_OB_NOT_SENT && !stopping(q)) {
			retried = 1; /* it never left: once more when the connection is back */
			rc = zc_ob_call(q->ob, action, params, 0, QQ_RETRY_WAIT_MS, &data, &res);
		}
		json_decref(params);
		if (rc) {
			failed = 1;
			status = res.fail == ZC_OB_LOST || res.fail == ZC_OB_TIMEOUT ? "unknown" : "failed";
			break;
		}
		json_t *mid = json_object_get(data, "message_id");
		char id[32] = "";
		if (json_is_integer(mid))
			snprintf(id, sizeof(id), "%lld", (long long)json_integer_value(mid));
		else if (json_is_string(mid))
			snprintf(id, sizeof(id), "%s", json_string_value(mid));
		if (id[0]) {
			remember_sent(q, conv, id);
			json_array_append_new(ids, json_string(id));
		}
		json_decref(data);
	}
	if (failed) {
		pthread_mutex_lock(&q->lock);
		q->sends_failed++;
		pthread_mutex_unlock(&q->lock);
		zc_qq_complain(q, "the reply in %s was %s: %s", conv,
			       strcmp(status, "unknown") ? "not sent" : "maybe not sent (never sent twice)",
			       res.message);
	}
	json_t *d = json_pack("{s:s, s:O}", "status", status, "messageIds", ids);
	if (failed && res.fail == ZC_OB_FAILED)
		json_object_set_new(d, "retcode", json_integer(res.retcode));
	if (failed)
		json_object_set_new(d, "message", json_string(res.message));
	if (retried)
		json_object_set_new(d, "retried", json_true());
	if (json_array_size(problems))
		json_object_set(d, "problems", problems);
	json_t *note = json_pack("{s:o}", "delivery", d);
	char *body = note ? json_dumps(note, JSON_COMPACT) : NULL;
	if (turn_id > 0 && body && q->noter_started) {
		queue_note(q, turn_id, body, quote); /* the noter writes and syncs it */
		body = NULL;
	} else {
		if (turn_id > 0 && body && zcor_turn_note(z, turn_id, body))
			zc_qq_complain(q, "the delivery of turn %lld was not recorded: %s", turn_id,
				       zcor_errmsg(z));
		zc_qq_probe(q, ZC_QQ_STAGE_NOTED, quote);
	}
	zc_free(body);
	json_decref(note);
	json_decref(ids);
	json_decref(msgs);
	json_decref(problems);
}

/* ---- one turn ------------------------------------------------------------ */

#define QQ_BATCH_IDS 100 /* zcor_turn's batch at most (ZC_TURN_BATCH_MAX) */

struct job {
	char conv[48];
	char temp_group[24];
	char quote[24];
	int poke;
	char poke_from[QQ_ID_MAX];
};

/* Runs the turn and sends its reply; *batch: the ids its batch took
 * (an array, or NULL). */
static void run_turn(struct zc_qq *q, zcor *z, const struct job *j, json_t **batch)
{
	*batch = NULL;
	/* deferSync: the reply goes out as soon as the record is written; the
	 * delivery note after the send is the synced commit that makes the
	 * record durable too (docs/TURN.md, "Durability") */
	json_t *o = json_pack("{s:b}", "deferSync", 1);
	if (o && j->poke) { /* the batch may be empty: the poke is the turn's event */
		char event[200];
		snprintf(event, sizeof(event), "%s 戳了戳你（QQ 的戳一戳） / %s poked you (a QQ poke)",
			 j->poke_from, j->poke_from);
		json_object_set_new(o, "event", json_string(event));
	}
	char *opts = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	char *out = NULL;
	zc_qq_probe(q, ZC_QQ_STAGE_START, j->quote);
	int rc = zcor_turn(z, j->conv, opts, &out);
	zc_qq_probe(q, ZC_QQ_STAGE_TURNED, j->quote);
	zc_free(opts);
	if (rc == ZCOR_OK) {
		json_t *r = json_loads(out, 0, NULL);
		zcor_free(out);
		const char *reply = json_string_value(json_object_get(r, "reply"));
		long long turn = (long long)json_integer_value(json_object_get(r, "turn"));
		/* idle (nothing new) or a turn without a reply: nothing to send */
		*batch = json_incref(json_object_get(r, "batch"));
		if (!json_is_true(json_object_get(r, "idle")) && reply && *reply)
			deliver(q, z, j->conv, j->temp_group, j->quote, turn, reply);
		json_decref(r);
		return;
	}
	zcor_free(out);
	pthread_mutex_lock(&q->lock);
	q->turns_failed++;
	int first = rc == ZCOR_ENOPROVIDER && !q->said_no_provider;
	if (rc == ZCOR_ENOPROVIDER)
		q->said_no_provider = 1;
	pthread_mutex_unlock(&q->lock);
	if (rc == ZCOR_ENOPROVIDER) {
		if (first)
			fprintf(stderr, "qq: no turn in %s: %s\n", j->conv, zcor_errmsg(z));
		return;
	}
	zc_qq_complain(q, "the turn of %s failed: %s", j->conv, zcor_errmsg(z));
	json_t *e = json_loads(zcor_errjson(z) ? zcor_errjson(z) : "{}", 0, NULL);
	json_t *details = json_object_get(json_object_get(e, "error"), "details");
	const char *apology = json_string_value(json_object_get(details, "apology"));
	long long turn = (long long)json_integer_value(json_object_get(details, "turn"));
	if (apology && *apology)
		deliver(q, z, j->conv, j->temp_group, j->quote, turn, apology);
	json_decref(e);
}

void *zc_qq_worker(void *arg)
{
	struct zc_qq *q = arg;
	zcor *z = NULL;
	zc_qq_thread_name("zc-qq-turn");
	if (zcor_open(&z, q->dir) != ZCOR_OK) {
		fprintf(stderr, "qq: a turn worker cannot open '%s': %s\n", q->dir, zcor_errmsg(z));
		zcor_close(z);
		return NULL;
	}
	pthread_mutex_lock(&q->lock);
	while (!q->stopping) {
		struct qconv *c = q->runq_head;
		if (!c) {
			pthread_cond_wait(&q->work_wake, &q->lock);
			continue;
		}
		q->runq_head = c->rnext;
		if (!q->runq_head)
			q->runq_tail = NULL;
		q->nqueued--;
		c->queued = 0;
		c->running = 1;
		q->nrunning++;
		struct job j;
		snprintf(j.conv, sizeof(j.conv), "%s", c->key);
		snprintf(j.temp_group, sizeof(j.temp_group), "%s", c->temp_group);
		snprintf(j.quote, sizeof(j.quote), "%s", c->quote);
		snprintf(j.poke_from, sizeof(j.poke_from), "%s", c->poke_from);
		j.poke = c->poke;
		c->poke = 0;
		q->turns_run++;
		pthread_mutex_unlock(&q->lock);
		json_t *batch = NULL;
		run_turn(q, z, &j, &batch);
		const char *ids[QQ_BATCH_IDS];
		size_t nids = 0;
		for (; nids < json_array_size(batch) && nids < QQ_BATCH_IDS; nids++)
			ids[nids] = json_string_value(json_array_get(batch, nids));
		pthread_mutex_lock(&q->lock);
		/* a wake by a message this batch took is answered (no poke since) */
		if (!c->poke)
			zc_qq_sched_answered(&c->st, ids, nids);
		json_decref(batch); /* (ids borrowed from it until here) */
		c->running = 0; /* qq.c forgets no running conversation: c is still there */
		q->nrunning--;
		pthread_cond_signal(&q->log_wake); /* its next batch may be due */
	}
	pthread_mutex_unlock(&q->lock);
	zcor_close(z);
	return NULL;
}
