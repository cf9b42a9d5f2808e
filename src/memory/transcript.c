/*
 * transcript.c — the message log (Q-LOG), conversations' digest
 * bookkeeping, the inbound media cache (Q-STK) and seed-003 log files.
 *
 * Memory layer (see transcript.h). Rules written once here: admission
 * (config.json "admission" and "botId") before anything is logged, the
 * bot's own messages never logged, a redelivered message id skipped, a
 * conversation sees only its own transcript (Q-SCOPE). The media of a
 * message are stored by media.c inside the same transaction. It must never write history for a logged batch, and never leave
 * half a batch: checks run before the one transaction.
 */
#include "memory/transcript.h"

#include "memory/media.h"
#include "memory/mirror.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/fs.h"
#include "base/json.h"
#include "base/timeutil.h"
#include "text/norm.h"
#include "text/tokens.h"

/* ---- small helpers --------------------------------------------------- */

/* An id given as a string or an integer, as text (caller frees), or NULL
 * when v is neither or the text is empty or longer than max bytes. */
static char *id_text(const json_t *v, size_t max)
{
	char buf[32];
	const char *s = NULL;
	if (json_is_string(v)) {
		s = json_string_value(v);
	} else if (json_is_integer(v)) {
		snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(v));
		s = buf;
	}
	if (!s || !*s || strlen(s) > max)
		return NULL;
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20)
			return NULL;
	return zc_strdup(s);
}

/* The conversation id after the kind ("group:1" -> "1"). */
static const char *conv_id(const char *key) { return strchr(key, ':') + 1; }

/* ---- admission ------------------------------------------------------- */

/* NULL when the conversation is admitted, else the skip reason. */
static const char *admission_refuses(struct zc_mem *m, const char *key)
{
	const struct zc_confile *c = &m->conf;
	if (strncmp(key, "group:", 6) == 0 && !zc_config_allowed(c, "groups", conv_id(key)))
		return "group_not_allowed";
	if (strncmp(key, "private:", 8) == 0) {
		if (!c->cfg.private_chats)
			return "private_chats_off";
		if (!zc_config_allowed(c, "privates", conv_id(key)))
			return "private_not_allowed";
	}
	return NULL;
}

static int is_self(struct zc_mem *m, const char *sender, int self_flag)
{
	return self_flag || (m->conf.cfg.bot_id[0] && strcmp(m->conf.cfg.bot_id, sender) == 0);
}

static int bad_field(struct zc_err *e, const char *field, const char *why)
{
	return zc_fail(e, ZCOR_EINVAL, "field '%s': %s", field, why);
}

/* ---- messages -------------------------------------------------------- */

struct msg_in {
	json_t *msg;              /* the output shape: id, time, senderId, … */
	int64_t at;
	const char *skip;         /* reason, or NULL to log it */
	struct zc_media_in *media;
	size_t nmedia;
};

static void msgs_release(struct msg_in *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		json_decref(v[i].msg);
		for (size_t j = 0; j < v[i].nmedia; j++)
			zc_media_in_release(&v[i].media[j]);
		zc_free(v[i].media);
	}
	zc_free(v);
}

#define MSG_COLS "message_id, at, sender_id, sender_name, text, mentions, reply_to, media, conversation"

static json_t *msg_from_row(sqlite3_stmt *st)
{
	json_t *o = json_object();
	zc_json_set_str(o, "conversation", (const char *)sqlite3_column_text(st, 8));
	zc_json_set_str(o, "id", (const char *)sqlite3_column_text(st, 0));
	zc_col_time(o, "time", st, 1);
	zc_json_set_str(o, "senderId", (const char *)sqlite3_column_text(st, 2));
	zc_json_set_str(o, "senderName", (const char *)sqlite3_column_text(st, 3));
	zc_json_set_str(o, "text", (const char *)sqlite3_column_text(st, 4));
	json_object_set_new(o, "mentions", zc_col_json(st, 5, '['));
	zc_json_set_str(o, "replyTo", (const char *)sqlite3_column_text(st, 6));
	json_object_set_new(o, "media", zc_col_json(st, 7, '['));
	return o;
}

/* Checks one message of a batch and fills *mi. field: "messages[i]". */
static int parse_message(struct zc_mem *m, json_t *v, size_t i, int host, struct msg_in *mi,
			 struct zc_err *e)
{
	static const char *const keys[] = {"id", "time", "senderId", "senderName", "text",
					   "mentions", "replyTo", "media", "self"};
	char f[64];
	char *id = NULL, *sender = NULL, *reply = NULL;
	int rc = ZCOR_OK;
	snprintf(f, sizeof(f), "messages[%zu]", i);
	if (!json_is_object(v))
		return bad_field(e, f, "must be an object {id, time, senderId, senderName, text, …}");
	const char *k;
	json_t *x;
	json_object_foreach(v, k, x) {
		size_t j = 0;
		while (j < sizeof(keys) / sizeof(keys[0]) && strcmp(k, keys[j]))
			j++;
		if (j == sizeof(keys) / sizeof(keys[0]))
			return zc_fail(e, ZCOR_EINVAL,
				       "field '%s.%s': unknown; a message has id, time, senderId, "
				       "senderName, text, mentions, replyTo, media, self",
				       f, ZC_Q(k, 40));
	}
	json_t *selfv = json_object_get(v, "self");
	if (selfv && !json_is_boolean(selfv)) {
		snprintf(f, sizeof(f), "messages[%zu].self", i);
		return bad_field(e, f, "must be true or false");
	}
	if (!(id = id_text(json_object_get(v, "id"), ZC_MSG_ID_MAX))) {
		snprintf(f, sizeof(f), "messages[%zu].id", i);
		rc = bad_field(e, f, "is required: the message id (string or integer, 1 to 128 bytes)");
		goto out;
	}
	if (!(sender = id_text(json_object_get(v, "senderId"), 64))) {
		snprintf(f, sizeof(f), "messages[%zu].senderId", i);
		rc = bad_field(e, f, "is required: the sender's id (string or integer, 1 to 64 bytes)");
		goto out;
	}
	mi->at = -1;
	json_t *t = json_object_get(v, "time");
	if (t && !json_is_null(t)) {
		snprintf(f, sizeof(f), "messages[%zu].time", i);
		if (!json_is_string(t)) {
			rc = bad_field(e, f, "must be an ISO-8601 time with a zone, such as "
					     "\"2026-11-29T20:00:00+08:00\"");
			goto out;
		}
		if ((rc = zc_time_parse(json_string_value(t), f, &mi->at, e)))
			goto out;
	} else {
		mi->at = zc_mem_now(m);
	}
	json_t *name = json_object_get(v, "senderName"), *text = json_object_get(v, "text");
	if (name && !json_is_null(name) &&
	    (!json_is_string(name) || zc_utf8_len(json_string_value(name)) > 200)) {
		snprintf(f, sizeof(f), "messages[%zu].senderName", i);
		rc = bad_field(e, f, "must be a string of at most 200 characters");
		goto out;
	}
	if (text && !json_is_null(text) &&
	    (!json_is_string(text) || zc_utf8_len(json_string_value(text)) > ZC_MSG_TEXT_MAX)) {
		snprintf(f, sizeof(f), "messages[%zu].text", i);
		rc = bad_field(e, f, "must be a string of at most 20000 characters");
		goto out;
	}
	json_t *mentions = json_array(), *mn = json_object_get(v, "mentions");
	mi->msg = json_object();
	json_object_set_new(mi->msg, "mentions", mentions);
	if (mn && !json_is_null(mn)) {
		snprintf(f, sizeof(f), "messages[%zu].mentions", i);
		if (!json_is_array(mn) || json_array_size(mn) > ZC_MSG_MENTIONS_MAX) {
			rc = bad_field(e, f, "must be an array of at most 50 person ids");
			goto out;
		}
		size_t j;
		json_array_foreach(mn, j, x) {
			char *p = id_text(x, 64);
			if (!p) {
				rc = bad_field(e, f, "each mention is a person id (string or integer)");
				goto out;
			}
			json_array_append_new(mentions, zc_json_string_own(p));
		}
	}
	json_t *rt = json_object_get(v, "replyTo");
	if (rt && !json_is_null(rt) && !(reply = id_text(rt, ZC_MSG_ID_MAX))) {
		snprintf(f, sizeof(f), "messages[%zu].replyTo", i);
		rc = bad_field(e, f, "must be the id of the message replied to, or null");
		goto out;
	}
	json_t *media = json_object_get(v, "media");
	if (media && !json_is_null(media)) {
		snprintf(f, sizeof(f), "messages[%zu].media", i);
		if (!json_is_array(media) || json_array_size(media) > ZC_MSG_MEDIA_MAX) {
			rc = bad_field(e, f, "must be an array of at most 10 media items");
			goto out;
		}
		mi->media = zc_calloc(json_array_size(media) + 1, sizeof(*mi->media));
		size_t j;
		json_array_foreach(media, j, x) {
			snprintf(f, sizeof(f), "messages[%zu].media[%zu]", i, j);
			mi->nmedia = j + 1;
			if ((rc = zc_media_parse(x, f, host, &mi->media[j], e)))
				goto out;
		}
	}
	json_t *refs = json_array();
	for (size_t j = 0; j < mi->nmedia; j++) {
		struct zc_buf r = ZC_BUF_INIT;
		zc_buf_addf(&r, "media/%s.%s", mi->media[j].hash, mi->media[j].ext);
		json_array_append_new(refs, zc_json_string_own(zc_buf_detach(&r)));
	}
	json_object_set_new(mi->msg, "id", json_string(id));
	json_object_set_new(mi->msg, "senderId", json_string(sender));
	json_object_set_new(mi->msg, "senderName",
			    json_string(json_is_string(name) ? json_string_value(name) : ""));
	json_object_set_new(mi->msg, "text", json_string(json_is_string(text) ? json_string_value(text) : ""));
	json_object_set_new(mi->msg, "replyTo", reply ? json_string(reply) : json_null());
	json_object_set_new(mi->msg, "media", refs);
	zc_json_set_time(mi->msg, "time", mi->at);
	if (is_self(m, sender, json_is_true(selfv)))
		mi->skip = "self";
out:
	zc_free(id);
	zc_free(sender);
	zc_free(reply);
	return rc;
}

/* Inserts one message unless its id is already logged (*inserted 0). */
static int insert_message(struct zc_store *s, const char *conv, const json_t *msg, int64_t at,
			  int *inserted, struct zc_err *e)
{
	sqlite3_stmt *st = zc_stmt(s,
				   "INSERT INTO messages(conversation, message_id, at, sender_id, sender_name, "
				   "text, mentions, reply_to, media, text_norm) "
				   "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) "
				   "ON CONFLICT(conversation, message_id) DO NOTHING",
				   e);
	if (!st)
		return e->code;
	const char *text = zc_json_str(msg, "text");
	sqlite3_bind_text(st, 1, conv, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, zc_json_str(msg, "id"), -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, at);
	sqlite3_bind_text(st, 4, zc_json_str(msg, "senderId"), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, zc_json_str(msg, "senderName"), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 6, text, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 7, zc_json_dump(json_object_get(msg, "mentions")), -1, zc_free);
	if (zc_json_str(msg, "replyTo"))
		sqlite3_bind_text(st, 8, zc_json_str(msg, "replyTo"), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 9, zc_json_dump(json_object_get(msg, "media")), -1, zc_free);
	sqlite3_bind_text(st, 10, zc_norm(text), -1, zc_free);
	int step = sqlite3_step(st);
	sqlite3_reset(st);
	if (step != SQLITE_DONE)
		return zc_store_fail(s, step, e, "logging a message");
	*inserted = sqlite3_changes(s->db) > 0;
	return ZCOR_OK;
}

/* Creates the conversation row if needed and adds n messages (lines =
 * whether they count as new lines for the digest) up to time last. */
static int conv_add(struct zc_mem *m, const char *key, long long n, int lines, int64_t last,
		    struct zc_err *e)
{
	char slug[96];
	zc_conv_slug(key, slug, sizeof(slug));
	sqlite3_stmt *st = zc_stmt(&m->store,
				   "INSERT INTO conversations(key, slug, created_at) VALUES(?1, ?2, ?3) "
				   "ON CONFLICT(key) DO NOTHING",
				   e);
	if (!st)
		return e->code;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, slug, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, zc_mem_now(m));
	int step = sqlite3_step(st);
	sqlite3_reset(st);
	if (step != SQLITE_DONE)
		return zc_store_fail(&m->store, step, e, "creating the conversation");
	if (n == 0)
		return ZCOR_OK;
	st = zc_stmt(&m->store,
		     "UPDATE conversations SET messages = messages + ?2, "
		     "lines_since_digest = lines_since_digest + ?3, "
		     "last_message_at = max(coalesce(last_message_at, ?4), ?4) WHERE key = ?1",
		     e);
	if (!st)
		return e->code;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, n);
	sqlite3_bind_int64(st, 3, lines ? n : 0);
	sqlite3_bind_int64(st, 4, last);
	step = sqlite3_step(st);
	sqlite3_reset(st);
	return step == SQLITE_DONE ? ZCOR_OK : zc_store_fail(&m->store, step, e, "counting messages");
}

static int check_key(const char *key, const char *field, struct zc_err *e)
{
	if (!key)
		return zc_fail(e, ZCOR_EINVAL, "%s is required (group:<id>, private:<qq> or console:<name>)", field);
	if (zc_conv_check(key, e) == ZCOR_OK)
		return ZCOR_OK;
	return zc_err_prefix(e, "%s", field);
}

static int parse_batch(struct zc_mem *m, const json_t *batch, int host, struct msg_in **v, size_t *n,
		       struct zc_err *e)
{
	*v = NULL;
	*n = 0;
	if (!json_is_object(batch))
		return zc_fail(e, ZCOR_EINVAL, "the batch must be a JSON object {\"messages\": […]}");
	const char *k;
	json_t *x;
	json_object_foreach((json_t *)batch, k, x) {
		if (strcmp(k, "messages"))
			return zc_fail(e, ZCOR_EINVAL, "field '%s': unknown; a batch has only 'messages'", ZC_Q(k, 40));
	}
	json_t *msgs = json_object_get(batch, "messages");
	if (!json_is_array(msgs) || json_array_size(msgs) < 1 || json_array_size(msgs) > ZC_BATCH_MAX)
		return bad_field(e, "messages", "must be an array of 1 to 100 messages");
	*v = zc_calloc(json_array_size(msgs), sizeof(**v));
	size_t i;
	json_array_foreach(msgs, i, x) {
		*n = i + 1;
		int rc = parse_message(m, x, i, host, &(*v)[i], e);
		if (rc)
			return rc;
	}
	return ZCOR_OK;
}

/* Inside the transaction: logs the admitted messages and their media. A
 * bound caller (bound: its conversation) refers only to images it sees. */
static int log_body(struct zc_mem *m, const char *key, const char *bound, struct msg_in *v, size_t n,
		    long long *logged, json_t *written, json_t *evicted, struct zc_err *e)
{
	int64_t now = zc_mem_now(m), last = 0;
	int rc = ZCOR_OK;
	for (size_t i = 0; i < n && !rc; i++) {
		if (v[i].skip)
			continue;
		for (size_t j = 0; j < v[i].nmedia && !rc; j++) {
			char f[64];
			snprintf(f, sizeof(f), "messages[%zu].media[%zu]", i, j);
			rc = zc_media_check_ref(m, bound, &v[i].media[j], f, e);
		}
		if (rc)
			break;
		if (*logged == 0 && (rc = conv_add(m, key, 0, 0, 0, e)))
			break;
		int inserted = 0;
		if ((rc = insert_message(&m->store, key, v[i].msg, v[i].at, &inserted, e)))
			break;
		if (!inserted) {
			v[i].skip = "duplicate";
			continue;
		}
		++*logged;
		last = v[i].at > last ? v[i].at : last;
		for (size_t j = 0; j < v[i].nmedia && !rc; j++)
			rc = zc_media_store(m, &v[i].media[j], now, written, e);
	}
	if (!rc && *logged)
		rc = conv_add(m, key, *logged, 1, last, e);
	if (!rc && *logged)
		rc = zc_media_evict(m, evicted, e);
	return rc;
}

int zc_transcript_log(struct zc_mem *m, const struct zcor_ctx *ctx, const char *conversation,
		      const json_t *batch, json_t **out, struct zc_err *e)
{
	struct msg_in *v = NULL;
	size_t n = 0;
	long long logged = 0;
	json_t *evicted = json_array(), *written = json_array();
	int rc;
	*out = NULL;
	zc_config_refresh(&m->conf);
	if ((rc = check_key(conversation, "conversation", e)) ||
	    (rc = parse_batch(m, batch, !ctx->conversation, &v, &n, e)))
		goto out;
	const char *refused = admission_refuses(m, conversation);
	for (size_t i = 0; refused && i < n; i++)
		v[i].skip = refused;
	if ((rc = zc_store_begin(&m->store, 1, e)))
		goto out;
	if ((rc = log_body(m, conversation, ctx->conversation, v, n, &logged, written, evicted, e))) {
		zc_store_rollback(&m->store);
		zc_media_unlink(m, written);
		zc_err_prefix(e, "nothing was logged");
		goto out;
	}
	if ((rc = zc_store_commit(&m->store, e))) {
		zc_media_unlink(m, written);
		goto out;
	}
	zc_media_unlink(m, evicted);
	if (logged) {
		int64_t lo = INT64_MAX, hi = INT64_MIN;
		for (size_t i = 0; i < n; i++)
			if (!v[i].skip) {
				lo = v[i].at < lo ? v[i].at : lo;
				hi = v[i].at > hi ? v[i].at : hi;
			}
		zc_mirror_log(m, conversation, lo, hi);
	}
	json_t *skipped = json_array(), *admitted = json_array();
	for (size_t i = 0; i < n; i++) {
		if (v[i].skip)
			json_array_append_new(skipped, json_pack("{s:O, s:s}", "messageId",
								 json_object_get(v[i].msg, "id"),
								 "reason", v[i].skip));
		if (!v[i].skip || strcmp(v[i].skip, "duplicate") == 0)
			json_array_append(admitted, v[i].msg);
	}
	*out = json_pack("{s:s, s:I, s:o, s:o}", "conversation", conversation, "logged",
			 (json_int_t)logged, "skipped", skipped, "admitted", admitted);
out:
	msgs_release(v, n);
	json_decref(evicted);
	json_decref(written);
	return rc;
}

/* ---- conversations --------------------------------------------------- */

#define CONV_COLS \
	"key, slug, created_at, last_message_at, messages, lines_since_digest, last_digest_at, last_digest_date"

static json_t *conv_from_row(sqlite3_stmt *st)
{
	json_t *o = json_object();
	zc_json_set_str(o, "key", (const char *)sqlite3_column_text(st, 0));
	zc_json_set_str(o, "slug", (const char *)sqlite3_column_text(st, 1));
	zc_col_time(o, "createdAt", st, 2);
	zc_col_time(o, "lastMessageAt", st, 3);
	json_object_set_new(o, "messages", json_integer(sqlite3_column_int64(st, 4)));
	json_object_set_new(o, "linesSinceDigest", json_integer(sqlite3_column_int64(st, 5)));
	zc_col_time(o, "lastDigestAt", st, 6);
	zc_json_set_str(o, "lastDigestDate", (const char *)sqlite3_column_text(st, 7));
	return o;
}

/* The conversations visible to ctx (?1: its key, NULL for the host). */
static int conv_rows(struct zc_store *s, const char *only, long long limit, long long offset,
		     json_t *items, long long *total, struct zc_err *e)
{
	sqlite3_stmt *st = zc_stmt(s, "SELECT count(*) FROM conversations WHERE ?1 IS NULL OR key = ?1", e);
	if (!st)
		return e->code;
	if (only)
		sqlite3_bind_text(st, 1, only, -1, SQLITE_STATIC);
	*total = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_reset(st);
	st = zc_stmt(s,
		     "SELECT " CONV_COLS " FROM conversations WHERE ?1 IS NULL OR key = ?1 "
		     "ORDER BY coalesce(last_message_at, created_at) DESC, key LIMIT ?2 OFFSET ?3",
		     e);
	if (!st)
		return e->code;
	if (only)
		sqlite3_bind_text(st, 1, only, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, limit);
	sqlite3_bind_int64(st, 3, offset);
	int step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW)
		json_array_append_new(items, conv_from_row(st));
	sqlite3_reset(st);
	return step == SQLITE_DONE ? ZCOR_OK : zc_store_fail(s, step, e, "listing conversations");
}

int zc_conversations_list(struct zc_mem *m, const struct zcor_ctx *ctx, json_t **out, struct zc_err *e)
{
	json_t *items = json_array();
	long long total = 0;
	int rc = zc_store_begin(&m->store, 0, e);
	if (!rc)
		rc = conv_rows(&m->store, ctx->conversation, -1, 0, items, &total, e);
	zc_store_rollback(&m->store);
	if (rc) {
		json_decref(items);
		return rc;
	}
	*out = json_pack("{s:o}", "items", items);
	return ZCOR_OK;
}

static int conv_load(struct zc_store *s, const char *key, json_t **conv, struct zc_err *e)
{
	*conv = NULL;
	sqlite3_stmt *st = zc_stmt(s, "SELECT " CONV_COLS " FROM conversations WHERE key = ?1", e);
	if (!st)
		return e->code;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	int step = sqlite3_step(st);
	if (step == SQLITE_ROW)
		*conv = conv_from_row(st);
	sqlite3_reset(st);
	if (step != SQLITE_ROW && step != SQLITE_DONE)
		return zc_store_fail(s, step, e, "reading a conversation");
	if (!*conv)
		return zc_fail(e, ZCOR_ENOTFOUND,
			       "no transcript for conversation '%s'; the conversation list shows the ones "
			       "that have one",
			       key);
	return ZCOR_OK;
}

int zc_conversation_get(struct zc_mem *m, const struct zcor_ctx *ctx, const char *key, json_t **out,
			struct zc_err *e)
{
	json_t *conv = NULL;
	int rc = check_key(key, "conversation", e);
	if (rc)
		return rc;
	if (ctx->conversation && strcmp(ctx->conversation, key) != 0)
		return zc_fail(e, ZCOR_EFORBIDDEN,
			       "conversation '%s' is not this caller's ('%s'): a conversation sees only "
			       "its own transcript",
			       key, ctx->conversation);
	if ((rc = zc_store_begin(&m->store, 0, e)))
		return rc;
	rc = conv_load(&m->store, key, &conv, e);
	zc_store_rollback(&m->store);
	if (!rc)
		*out = json_pack("{s:o}", "conversation", conv);
	return rc;
}

int zc_transcript_digest_done(struct zc_mem *m, const char *key, json_t **out, struct zc_err *e)
{
	json_t *conv = NULL;
	char date[ZC_DATE_LEN];
	int64_t now = zc_mem_now(m);
	int rc = check_key(key, "conversation", e);
	if (rc || (rc = zc_store_begin(&m->store, 1, e)))
		return rc;
	if ((rc = conv_load(&m->store, key, &conv, e)))
		goto out;
	json_decref(conv);
	conv = NULL;
	sqlite3_stmt *st = zc_stmt(&m->store,
				   "UPDATE conversations SET last_digest_at = ?2, last_digest_date = ?3, "
				   "lines_since_digest = 0 WHERE key = ?1",
				   e);
	if (!st) {
		rc = e->code;
		goto out;
	}
	zc_time_local_date(now, date);
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, now);
	sqlite3_bind_text(st, 3, date, -1, SQLITE_STATIC);
	int step = sqlite3_step(st);
	sqlite3_reset(st);
	if (step != SQLITE_DONE) {
		rc = zc_store_fail(&m->store, step, e, "marking the digest done");
		goto out;
	}
	if ((rc = conv_load(&m->store, key, &conv, e)))
		goto out;
	rc = zc_store_commit(&m->store, e);
out:
	if (rc) {
		zc_store_rollback(&m->store);
		json_decref(conv);
		return rc;
	}
	zc_mirror_digest(m);
	*out = json_pack("{s:o}", "conversation", conv);
	return ZCOR_OK;
}

/* ---- qq_transcript ----------------------------------------------------- */

/* The conversation an action works on: a bound caller only its own. */
static int transcript_conv(struct zc_op *op, json_t *args, int required, const char **key,
			   struct zc_err *e)
{
	const char *given = zc_json_str(args, "conversation");
	const char *own = op->ctx->conversation;
	int rc;
	*key = NULL;
	if (given && (rc = check_key(given, "argument 'conversation'", e)))
		return rc;
	if (own) {
		if (given && strcmp(given, own) != 0)
			return zc_fail(e, ZCOR_EFORBIDDEN,
				       "conversation '%s' is not visible from here: a conversation reads only "
				       "its own transcript; leave 'conversation' out (or give '%s')",
				       given, own);
		*key = own;
		return ZCOR_OK;
	}
	if (!given && required)
		return zc_fail(e, ZCOR_EINVAL,
			       "argument 'conversation' is required here (the host plane sees every "
			       "conversation); action 'list' shows them");
	*key = given;
	return ZCOR_OK;
}

static int action_list(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	long long limit, offset, total = 0;
	int rc = zc_page_args(args, &limit, &offset, e);
	if (rc)
		return rc;
	json_t *items = json_array();
	rc = conv_rows(&op->m->store, op->ctx->conversation, limit, offset, items, &total, e);
	if (!rc)
		*out = zc_page_result(items, total, offset);
	json_decref(items);
	return rc;
}

static int collect_messages(struct zc_store *s, sqlite3_stmt *st, json_t *items, struct zc_err *e)
{
	int step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW)
		json_array_append_new(items, msg_from_row(st));
	sqlite3_reset(st);
	return step == SQLITE_DONE ? ZCOR_OK : zc_store_fail(s, step, e, "reading the transcript");
}

#define READ_WHERE \
	" FROM messages WHERE conversation = ?1 AND (?2 IS NULL OR at >= ?2) AND (?3 IS NULL OR at <= ?3)"

static void bind_range(sqlite3_stmt *st, const char *key, int64_t from, int64_t to)
{
	if (key)
		sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
	if (from >= 0)
		sqlite3_bind_int64(st, 2, from);
	if (to >= 0)
		sqlite3_bind_int64(st, 3, to);
}

/* read: one conversation in time order (oldest first), like a log. */
static int action_read(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	struct zc_store *s = &op->m->store;
	const char *key = NULL;
	int64_t from, to;
	long long limit, offset, total = 0;
	int rc;
	if ((rc = transcript_conv(op, args, 1, &key, e)) || (rc = zc_time_arg(args, "from", &from, e)) ||
	    (rc = zc_time_arg(args, "to", &to, e)) || (rc = zc_page_args(args, &limit, &offset, e)))
		return rc;
	if (!op->ctx->conversation) {
		json_t *conv = NULL;
		if ((rc = conv_load(s, key, &conv, e)))
			return rc;
		json_decref(conv);
	}
	sqlite3_stmt *st = zc_stmt(s, "SELECT count(*)" READ_WHERE, e);
	if (!st)
		return e->code;
	bind_range(st, key, from, to);
	total = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_reset(st);
	st = zc_stmt(s, "SELECT " MSG_COLS READ_WHERE " ORDER BY at, seq LIMIT ?4 OFFSET ?5", e);
	if (!st)
		return e->code;
	bind_range(st, key, from, to);
	sqlite3_bind_int64(st, 4, limit);
	sqlite3_bind_int64(st, 5, offset);
	json_t *items = json_array();
	if (!(rc = collect_messages(s, st, items, e))) {
		*out = zc_page_result(items, total, offset);
		json_object_set_new(*out, "conversation", json_string(key));
	}
	json_decref(items);
	return rc;
}

#define SEARCH_WHERE                                                                     \
	" FROM messages WHERE (?1 IS NULL OR conversation = ?1)"                          \
	" AND (?2 IS NULL OR at >= ?2) AND (?3 IS NULL OR at <= ?3)"                      \
	" AND NOT EXISTS (SELECT 1 FROM json_each(?6) k WHERE instr(text_norm, k.value) = 0)"
#define SEARCH_INDEXED " AND seq IN (SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?7)"
#define SEARCH_SCAN                                                                       \
	" AND seq IN (SELECT seq FROM messages WHERE (?1 IS NULL OR conversation = ?1)"    \
	" AND (?2 IS NULL OR at >= ?2) AND (?3 IS NULL OR at <= ?3)"                      \
	" ORDER BY at DESC, seq DESC LIMIT ?7)"

static void bind_search(sqlite3_stmt *st, const char *key, int64_t from, int64_t to, const char *kw,
			const char *pre)
{
	bind_range(st, key, from, to);
	sqlite3_bind_text(st, 6, kw, -1, SQLITE_TRANSIENT);
	if (pre)
		sqlite3_bind_text(st, 7, pre, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_int64(st, 7, ZC_TRANSCRIPT_SCAN_MAX);
}

/* search: every keyword (NFKC + case fold) must be a substring of the
 * text; newest first. CJK keywords narrow through messages_fts; others
 * (single characters, Latin) are tested on the newest
 * ZC_TRANSCRIPT_SCAN_MAX messages of the range, and the result says so
 * when that bound cut the range. */
static int action_search(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	struct zc_store *s = &op->m->store;
	const char *key = NULL;
	int64_t from, to;
	long long limit, offset, total = 0, in_range = 0;
	char *kw = NULL, *pre = NULL;
	json_t *items = json_array();
	json_t *kwj = json_object_get(args, "keywords");
	int rc;
	*out = NULL;
	if ((rc = transcript_conv(op, args, 0, &key, e)) || (rc = zc_time_arg(args, "from", &from, e)) ||
	    (rc = zc_time_arg(args, "to", &to, e)) || (rc = zc_page_args(args, &limit, &offset, e)))
		goto out;
	if (json_array_size(kwj) == 0) {
		rc = zc_fail(e, ZCOR_EINVAL, "argument 'keywords': search needs at least one keyword; "
					     "use action 'read' to page through a conversation");
		goto out;
	}
	kw = zc_norm_keywords(kwj);
	pre = zc_fts_keywords_prefilter(kwj, "text");
	sqlite3_stmt *st = pre ? zc_stmt(s, "SELECT count(*)" SEARCH_WHERE SEARCH_INDEXED, e)
			       : zc_stmt(s, "SELECT count(*)" SEARCH_WHERE SEARCH_SCAN, e);
	if (!st) {
		rc = e->code;
		goto out;
	}
	bind_search(st, key, from, to, kw, pre);
	total = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_reset(st);
	st = pre ? zc_stmt(s, "SELECT " MSG_COLS SEARCH_WHERE SEARCH_INDEXED
			      " ORDER BY at DESC, seq DESC LIMIT ?4 OFFSET ?5", e)
		 : zc_stmt(s, "SELECT " MSG_COLS SEARCH_WHERE SEARCH_SCAN
			      " ORDER BY at DESC, seq DESC LIMIT ?4 OFFSET ?5", e);
	if (!st) {
		rc = e->code;
		goto out;
	}
	bind_search(st, key, from, to, kw, pre);
	sqlite3_bind_int64(st, 4, limit);
	sqlite3_bind_int64(st, 5, offset);
	if ((rc = collect_messages(s, st, items, e)))
		goto out;
	*out = zc_page_result(items, total, offset);
	if (!pre) {
		st = zc_stmt(s, "SELECT count(*) FROM messages WHERE (?1 IS NULL OR conversation = ?1)"
				" AND (?2 IS NULL OR at >= ?2) AND (?3 IS NULL OR at <= ?3)", e);
		if (!st) {
			rc = e->code;
			goto out;
		}
		bind_range(st, key, from, to);
		in_range = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
		sqlite3_reset(st);
		if (in_range > ZC_TRANSCRIPT_SCAN_MAX) {
			struct zc_buf note = ZC_BUF_INIT;
			zc_buf_addf(&note,
				    "only the newest %d of %lld messages in the range were searched (keywords "
				    "without two or more CJK characters are not indexed); narrow from/to",
				    ZC_TRANSCRIPT_SCAN_MAX, in_range);
			json_object_set_new(*out, "note", zc_json_string_own(zc_buf_detach(&note)));
		}
	}
out:
	if (rc && *out) {
		json_decref(*out);
		*out = NULL;
	}
	zc_free(kw);
	zc_free(pre);
	json_decref(items);
	return rc;
}

static int qq_transcript(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	const char *action = zc_json_str(args, "action");
	if (action && strcmp(action, "list") == 0)
		return action_list(op, args, out, e);
	if (action && strcmp(action, "read") == 0)
		return action_read(op, args, out, e);
	if (action && strcmp(action, "search") == 0)
		return action_search(op, args, out, e);
	return zc_fail(e, ZCOR_EINVAL, "argument 'action': must be list, read or search");
}

const struct zc_opdef zc_op_qq_transcript = {"qq_transcript", NULL, qq_transcript, 1};

/* ---- log files: export ------------------------------------------------- */

static int flush_file(const char *root, const char *slug, const char *date, struct zc_buf *b,
		      long long *files, struct zc_err *e)
{
	struct zc_buf dir = ZC_BUF_INIT, path = ZC_BUF_INIT;
	int rc;
	/* real directories under root: a planted link is not written through */
	zc_buf_addf(&dir, "conversations/%s/log", slug);
	zc_buf_addf(&path, "%s/%s/%s.jsonl", root, dir.p, date);
	if (!(rc = zc_mkdir_p(root, e)) && !(rc = zc_dir_inside(root, dir.p, ZC_DIR_CREATE, e)) &&
	    !(rc = zc_write_file_atomic(path.p, b->p, b->len, e)))
		++*files;
	zc_buf_release(&dir);
	zc_buf_release(&path);
	zc_buf_reset(b);
	return rc;
}

/* One log line: the message without its conversation (the file says it). */
static void add_line(struct zc_buf *b, json_t *msg)
{
	json_object_del(msg, "conversation");
	char *s = zc_json_dump(msg);
	zc_buf_adds(b, s);
	zc_buf_addc(b, '\n');
	zc_free(s);
}

int zc_transcript_export(struct zc_mem *m, const char *conversation, const char *root_dir,
			 json_t **report, struct zc_err *e)
{
	return zc_transcript_export_range(m, conversation, INT64_MIN, INT64_MAX, root_dir, report, e);
}

int zc_transcript_export_range(struct zc_mem *m, const char *conversation, int64_t from, int64_t to,
			       const char *root_dir, json_t **report, struct zc_err *e)
{
	struct zc_store *s = &m->store;
	struct zc_buf b = ZC_BUF_INIT;
	char slug[96] = "", date[ZC_DATE_LEN] = "", cur[160] = "";
	long long files = 0, messages = 0, convs = 0;
	json_t *conv = NULL;
	int rc = ZCOR_OK, step = SQLITE_DONE;
	if (conversation && (rc = check_key(conversation, "conversation", e)))
		return rc;
	if ((rc = zc_store_begin(s, 0, e)))
		return rc;
	if (conversation && (rc = conv_load(s, conversation, &conv, e)))
		goto out;
	sqlite3_stmt *st = zc_stmt(s, "SELECT " MSG_COLS " FROM messages WHERE (?1 IS NULL OR conversation = ?1) "
				      "AND at >= ?2 AND at < ?3 ORDER BY conversation, at, seq", e);
	if (!st) {
		rc = e->code;
		goto out;
	}
	if (conversation)
		sqlite3_bind_text(st, 1, conversation, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, from);
	sqlite3_bind_int64(st, 3, to);
	while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
		const char *key = (const char *)sqlite3_column_text(st, 8);
		char d[ZC_DATE_LEN];
		zc_time_local_date(sqlite3_column_int64(st, 1), d);
		if (strcmp(key, cur) != 0 || strcmp(d, date) != 0) {
			if (b.len && (rc = flush_file(root_dir, slug, date, &b, &files, e)))
				break;
			if (strcmp(key, cur) != 0)
				convs++;
			snprintf(cur, sizeof(cur), "%s", key);
			zc_conv_slug(key, slug, sizeof(slug));
			memcpy(date, d, sizeof(date));
		}
		json_t *msg = msg_from_row(st);
		add_line(&b, msg);
		json_decref(msg);
		messages++;
	}
	sqlite3_reset(st);
	if (!rc && step != SQLITE_DONE)
		rc = zc_store_fail(s, step, e, "exporting the transcript");
	if (!rc && b.len)
		rc = flush_file(root_dir, slug, date, &b, &files, e);
out:
	zc_store_rollback(s); /* a read */
	json_decref(conv);
	zc_buf_release(&b);
	if (!rc)
		*report = json_pack("{s:I, s:I, s:I}", "conversations", (json_int_t)convs, "files",
				    (json_int_t)files, "messages", (json_int_t)messages);
	return rc;
}

/* ---- log files: import ------------------------------------------------- */

static json_t *first_of(json_t *o, const char *const *keys)
{
	for (; *keys; keys++) {
		json_t *v = json_object_get(o, *keys);
		if (v && !json_is_null(v))
			return v;
	}
	return NULL;
}

/* A time as ISO-8601 text or epoch seconds / milliseconds. */
static int lenient_time(json_t *v, int64_t *at, struct zc_err *e)
{
	if (json_is_string(v))
		return zc_time_parse(json_string_value(v), "time", at, e);
	if (json_is_integer(v) || json_is_real(v)) {
		double x = json_number_value(v);
		*at = (int64_t)(x < 1e11 ? x * 1000.0 : x); /* seconds before year 5138 */
		return ZCOR_OK;
	}
	return zc_fail(e, ZCOR_EINVAL, "'time' must be ISO-8601 text or epoch seconds/milliseconds");
}

/* One parsed log line in the output shape, or an error for the report. */
static int import_line(struct zc_mem *m, const char *line, size_t len, json_t **msg, int64_t *at,
		       int *self, struct zc_err *e)
{
	static const char *const k_id[] = {"id", "messageId", "message_id", "msgId", "msg_id", NULL};
	static const char *const k_time[] = {"time", "ts", "timestamp", "at", NULL};
	static const char *const k_sender[] = {"senderId", "sender_id", "userId", "user_id", "qq", "uid", NULL};
	static const char *const k_name[] = {"senderName", "sender_name", "nickname", "name", "card", NULL};
	static const char *const k_text[] = {"text", "message", "content", "raw_message", NULL};
	static const char *const k_mentions[] = {"mentions", "at_list", NULL};
	static const char *const k_reply[] = {"replyTo", "reply_to", "reply", NULL};
	json_t *o = NULL;
	char *id = NULL, *sender = NULL, *reply = NULL;
	int rc;
	*msg = NULL;
	if ((rc = zc_json_parse(line, len, "the line", &o, e)))
		return rc;
	if (!json_is_object(o)) {
		rc = zc_fail(e, ZCOR_EINVAL, "the line is not a JSON object");
		goto out;
	}
	json_t *tv = first_of(o, k_time), *textv = first_of(o, k_text), *namev = first_of(o, k_name);
	if (!tv) {
		rc = zc_fail(e, ZCOR_EINVAL, "no time (time, ts or timestamp)");
		goto out;
	}
	if ((rc = lenient_time(tv, at, e)))
		goto out;
	if (!(sender = id_text(first_of(o, k_sender), 64))) {
		rc = zc_fail(e, ZCOR_EINVAL, "no sender id (senderId, userId, user_id or qq)");
		goto out;
	}
	if (textv && (!json_is_string(textv) || zc_utf8_len(json_string_value(textv)) > ZC_MSG_TEXT_MAX)) {
		rc = zc_fail(e, ZCOR_EINVAL, "the text is not a string of at most 20000 characters");
		goto out;
	}
	json_t *idv = first_of(o, k_id);
	if (idv) {
		if (!(id = id_text(idv, ZC_MSG_ID_MAX))) {
			rc = zc_fail(e, ZCOR_EINVAL, "the id is not a string or integer of 1 to 128 bytes");
			goto out;
		}
	} else {
		char h[65]; /* the same line always gets the same id: re-import skips it */
		zc_sha256_hex(line, len, h);
		h[16] = '\0';
		struct zc_buf b = ZC_BUF_INIT;
		zc_buf_addf(&b, "imp-%s", h);
		id = zc_buf_detach(&b);
	}
	reply = id_text(first_of(o, k_reply), ZC_MSG_ID_MAX);
	json_t *mentions = json_array(), *mn = first_of(o, k_mentions), *media = json_array();
	size_t i;
	json_t *x;
	json_array_foreach(mn, i, x) {
		char *p = id_text(x, 64);
		if (p && json_array_size(mentions) < ZC_MSG_MENTIONS_MAX)
			json_array_append_new(mentions, zc_json_string_own(p));
		else
			zc_free(p);
	}
	json_t *mv = json_object_get(o, "media");
	if (json_is_string(mv))
		json_array_append(media, mv);
	json_array_foreach(mv, i, x) {
		if (json_is_string(x) && strlen(json_string_value(x)) <= 1024 &&
		    json_array_size(media) < ZC_MSG_MEDIA_MAX)
			json_array_append(media, x);
	}
	*self = json_is_true(json_object_get(o, "self")) || is_self(m, sender, 0);
	*msg = json_object();
	json_object_set_new(*msg, "id", json_string(id));
	zc_json_set_time(*msg, "time", *at);
	json_object_set_new(*msg, "senderId", json_string(sender));
	json_object_set_new(*msg, "senderName",
			    json_string(json_is_string(namev) ? json_string_value(namev) : ""));
	json_object_set_new(*msg, "text", json_string(textv ? json_string_value(textv) : ""));
	json_object_set_new(*msg, "mentions", mentions);
	json_object_set_new(*msg, "replyTo", reply ? json_string(reply) : json_null());
	json_object_set_new(*msg, "media", media);
out:
	json_decref(o);
	zc_free(id);
	zc_free(sender);
	zc_free(reply);
	return rc;
}

int zc_transcript_import_file(struct zc_mem *m, const char *conversation, const char *path,
			      json_t **report, struct zc_err *e)
{
	char *data = NULL;
	size_t len = 0;
	int rc;
	if ((rc = check_key(conversation, "conversation", e)) ||
	    (rc = zc_read_file(path, ZC_LOG_FILE_MAX, &data, &len, e)))
		return rc;
	rc = zc_transcript_import_data(m, conversation, path, data, len, report, e);
	zc_free(data);
	return rc;
}

int zc_transcript_import_data(struct zc_mem *m, const char *conversation, const char *path,
			      const char *data, size_t len, json_t **report, struct zc_err *e)
{
	long long lines = 0, logged = 0, dups = 0, self = 0, nerr = 0;
	int64_t last = 0;
	json_t *errors = json_array();
	int rc, own = 0;
	zc_config_refresh(&m->conf);
	if ((rc = check_key(conversation, "conversation", e)))
		goto out;
	/* inside a caller's transaction (zcor import qq-memory) it joins it */
	own = !m->store.in_tx;
	if (own && (rc = zc_store_begin(&m->store, 1, e)))
		goto out;
	if ((rc = conv_add(m, conversation, 0, 0, 0, e)))
		goto out;
	for (size_t at = 0; at < len;) {
		size_t n = strcspn(data + at, "\n");
		const char *line = data + at;
		at += n + 1;
		lines++;
		size_t trim = n;
		while (trim && (line[trim - 1] == '\r' || line[trim - 1] == ' ' || line[trim - 1] == '\t'))
			trim--;
		if (trim == 0)
			continue;
		json_t *msg = NULL;
		int64_t t = 0;
		int is_self_line = 0;
		struct zc_err le = {0};
		if (import_line(m, line, trim, &msg, &t, &is_self_line, &le)) {
			if (nerr++ < ZC_IMPORT_ERRORS_MAX)
				json_array_append_new(errors, json_pack("{s:I, s:s}", "line", (json_int_t)lines,
									"error", le.msg));
			continue;
		}
		int inserted = 0;
		if (is_self_line) {
			self++;
		} else if ((rc = insert_message(&m->store, conversation, msg, t, &inserted, e))) {
			json_decref(msg);
			goto out;
		} else if (inserted) {
			logged++;
			last = t > last ? t : last;
		} else {
			dups++;
		}
		json_decref(msg);
	}
	/* imported history is old news: it does not count as new lines for
	 * the digest (lines_since_digest stays) */
	if (logged && (rc = conv_add(m, conversation, logged, 0, last, e)))
		goto out;
	if (!logged && !dups) {
		/* nothing of this conversation: no empty conversation row */
		sqlite3_stmt *st = zc_stmt(&m->store,
					   "DELETE FROM conversations WHERE key = ?1 AND messages = 0 AND NOT "
					   "EXISTS (SELECT 1 FROM messages WHERE conversation = ?1)",
					   e);
		if (!st) {
			rc = e->code;
			goto out;
		}
		sqlite3_bind_text(st, 1, conversation, -1, SQLITE_STATIC);
		int step = sqlite3_step(st);
		sqlite3_reset(st);
		if (step != SQLITE_DONE) {
			rc = zc_store_fail(&m->store, step, e, "importing");
			goto out;
		}
	}
	if (own && (rc = zc_store_commit(&m->store, e)))
		goto out;
	if (own && logged)
		zc_mirror_all(m);
	*report = json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:O}", "file", path, "conversation",
			    conversation, "lines", (json_int_t)lines, "logged", (json_int_t)logged,
			    "duplicates", (json_int_t)dups, "self", (json_int_t)self, "errorCount",
			    (json_int_t)nerr, "errors", errors);
out:
	if (rc && own)
		zc_store_rollback(&m->store); /* safe when no transaction is open */
	json_decref(errors);
	return rc;
}

int zc_conversation_set_digest(struct zc_mem *m, const char *key, int64_t at, const char *date,
			       struct zc_err *e)
{
	int rc = check_key(key, "conversation", e);
	if (rc || (rc = conv_add(m, key, 0, 0, 0, e)))
		return rc;
	sqlite3_stmt *st = zc_stmt(&m->store,
				   "UPDATE conversations SET last_digest_at = ?2, last_digest_date = ?3 "
				   "WHERE key = ?1",
				   e);
	if (!st)
		return e->code;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
	if (at >= 0)
		sqlite3_bind_int64(st, 2, at);
	if (date)
		sqlite3_bind_text(st, 3, date, -1, SQLITE_TRANSIENT);
	int step = sqlite3_step(st);
	sqlite3_reset(st);
	return step == SQLITE_DONE ? ZCOR_OK : zc_store_fail(&m->store, step, e, "setting digest progress");
}

/* ---- derived data ------------------------------------------------------ */

int zc_transcript_reindex(struct zc_store *s, long long *count, struct zc_err *e)
{
	int rc = zc_exec(s, "INSERT INTO messages_fts(messages_fts) VALUES('rebuild')", e);
	if (rc)
		return rc;
	sqlite3_stmt *st = zc_stmt(s, "SELECT count(*) FROM messages", e);
	if (!st)
		return e->code;
	*count = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_reset(st);
	return ZCOR_OK;
}
