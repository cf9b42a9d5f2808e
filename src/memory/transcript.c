/*
 * transcript.c — the message log (Q-LOG): logging a batch (admission,
 * the bot's own messages, redeliveries, media) and reading it
 * (qq_transcript). The conversations' bookkeeping is conversations.c,
 * the seed-003 log files logfile.c (all three behind transcript.h).
 *
 * Memory layer (see transcript.h). Rules written once here: admission
 * (config.json "admission" and "botId") before anything is logged, the
 * bot's own messages never logged, a redelivered message id skipped, a
 * conversation sees only its own transcript (Q-SCOPE). The media of a
 * message are stored by media.c inside the same transaction. It must
 * never write history for a logged batch, and never leave half a batch:
 * checks run before the one transaction, an operation of the runner
 * without a history record; mirror/ follows from the runner's commit
 * hook, never from here.
 */
#include "memory/transcript.h"

#include "memory/media.h"
#include "memory/transcript_int.h"

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
#include "base/utf8.h"
#include "text/norm.h"
#include "text/schema.h"
#include "text/tokens.h"

/* ---- small helpers --------------------------------------------------- */

/* An id given as a string or an integer, as text (caller frees), or NULL
 * when v is neither or the text is empty or longer than max bytes. */
char *zc_log_id_text(const json_t *v, size_t max)
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

int zc_transcript_admission(struct zc_mem *m, const char *conversation, json_t **out,
			    struct zc_err *e)
{
	*out = NULL;
	zc_config_refresh(&m->conf);
	int rc = zc_log_check_key(conversation, "conversation", e);
	if (rc)
		return rc;
	const char *refused = admission_refuses(m, conversation);
	*out = json_pack("{s:s, s:b, s:s?}", "conversation", conversation, "admitted", !refused,
			 "reason", refused);
	return *out ? ZCOR_OK : zc_fail(e, ZCOR_EINTERNAL, "out of memory");
}

int zc_log_is_self(struct zc_mem *m, const char *sender, int self_flag)
{
	return self_flag || (m->conf.cfg.bot_id[0] && strcmp(m->conf.cfg.bot_id, sender) == 0);
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

json_t *zc_log_msg_from_row(sqlite3_stmt *st)
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
	if (sqlite3_column_type(st, 9) != SQLITE_NULL)
		zc_col_time(o, "recalledAt", st, 9);
	return o;
}

/* ---- the batch's schema ----------------------------------------------- */

#define ID_WHY "is required: the message id (string or integer, 1 to 128 bytes)"
#define SENDER_WHY "is required: the sender's id (string or integer, 1 to 64 bytes)"
#define MENTIONS_WHY "must be an array of at most 50 person ids"
#define BATCH_WHY "must be an array of 1 to 100 messages"

/* A logged batch (FORMATS.md), checked by text/schema.c; its messages are
 * checked one by one (message_schema), each with its media (media.c),
 * so the first mistake named is the first message's. */
static struct zc_schema_text batch_schema = ZC_SCHEMA_TEXT(
	"{\"type\": \"object\", \"additionalProperties\": false, \"required\": [\"messages\"],"
	" \"x-error\": {\"type\": \"the batch must be a JSON object {\\\"messages\\\": […]}\","
	"  \"additionalProperties\": \"field '{key}': unknown; a batch has only 'messages' and 'recall'\"},"
	" \"properties\": {\"messages\": {\"type\": \"array\", \"minItems\": 1, \"maxItems\": 100,"
	"  \"x-error\": \"" BATCH_WHY "\"},"
	"  \"recall\": {\"type\": \"boolean\", \"x-error\": \"must be true or false: false logs "
	"without computing the recall header (a world whose turn follows recalls there)\"}}}");

/* One message: the fields in the order they are checked; null is "not
 * given" for every optional one. */
static struct zc_schema_text message_schema = ZC_SCHEMA_TEXT(
	"{\"type\": \"object\", \"additionalProperties\": false, \"required\": [\"id\", \"senderId\"],"
	" \"x-error\": {\"type\": \"must be an object {id, time, senderId, senderName, text, …}\","
	"  \"additionalProperties\": \"field '{key}': unknown; a message has id, time, senderId, "
	"senderName, text, mentions, replyTo, media, self\"},"
	" \"properties\": {"
	"  \"self\": {\"type\": \"boolean\", \"x-error\": \"must be true or false\"},"
	"  \"id\": {\"type\": [\"string\", \"integer\"], \"format\": \"message-id\", \"x-error\": \"" ID_WHY "\"},"
	"  \"senderId\": {\"type\": [\"string\", \"integer\"], \"format\": \"person-id\","
	"   \"x-error\": \"" SENDER_WHY "\"},"
	"  \"time\": {\"type\": [\"string\", \"null\"], \"format\": \"date-time\","
	"   \"x-error\": {\"type\": \"must be an ISO-8601 time with a zone, such as "
	"\\\"2026-11-29T20:00:00+08:00\\\"\"}},"
	"  \"senderName\": {\"type\": [\"string\", \"null\"], \"maxLength\": 200,"
	"   \"x-error\": \"must be a string of at most 200 characters\"},"
	"  \"text\": {\"type\": [\"string\", \"null\"], \"maxLength\": 20000,"
	"   \"x-error\": \"must be a string of at most 20000 characters\"},"
	"  \"mentions\": {\"type\": [\"array\", \"null\"], \"maxItems\": 50,"
	"   \"items\": {\"type\": [\"string\", \"integer\"], \"format\": \"person-id\"},"
	"   \"x-error\": {\"type\": \"" MENTIONS_WHY "\", \"maxItems\": \"" MENTIONS_WHY "\","
	"    \"items\": \"each mention is a person id (string or integer)\"}},"
	"  \"replyTo\": {\"type\": [\"string\", \"integer\", \"null\"], \"format\": \"message-id\","
	"   \"x-error\": \"must be the id of the message replied to, or null\"},"
	"  \"media\": {\"type\": [\"array\", \"null\"], \"maxItems\": 10,"
	"   \"x-error\": \"must be an array of at most 10 media items\"}}}");

_Static_assert(ZC_BATCH_MAX == 100 && ZC_MSG_TEXT_MAX == 20000 && ZC_MSG_ID_MAX == 128 &&
		       ZC_MSG_MENTIONS_MAX == 50 && ZC_MSG_MEDIA_MAX == 10,
	       "the batch's schema says these limits");

/* The rules the schema cannot say: an id's bytes (zc_log_id_text), a
 * time's format. An id's failure reads as the schema's reason for it. */
static int id_ok(const json_t *v, size_t max)
{
	char *id = zc_log_id_text(v, max);
	zc_free(id);
	return id != NULL;
}

static int check_message_id(const json_t *v, const char *path, struct zc_err *e)
{
	return id_ok(v, ZC_MSG_ID_MAX) ? ZCOR_OK : zc_fail(e, ZCOR_EINVAL, "%s: not a message id", path);
}

static int check_person_id(const json_t *v, const char *path, struct zc_err *e)
{
	return id_ok(v, 64) ? ZCOR_OK : zc_fail(e, ZCOR_EINVAL, "%s: not a person id", path);
}

static int check_time(const json_t *v, const char *path, struct zc_err *e)
{
	int64_t at;
	return zc_time_parse(json_string_value(v), path, &at, e);
}

static const struct zc_schema_format batch_formats[] = {
	{"message-id", check_message_id},
	{"person-id", check_person_id},
	{"date-time", check_time},
	{NULL, NULL},
};

/* Text read up to a NUL, as it always was. */
static const struct zc_schema_style batch_style = {"field", 40, 1, 1, batch_formats};

/* ---- a message's output shape ------------------------------------------ */

/* The refs "media/<hash>.<ext>" of mi's media. */
static json_t *media_refs(const struct msg_in *mi)
{
	json_t *refs = json_array();
	for (size_t j = 0; j < mi->nmedia; j++) {
		struct zc_buf r = ZC_BUF_INIT;
		zc_buf_addf(&r, "media/%s.%s", mi->media[j].hash, mi->media[j].ext);
		json_array_append_new(refs, zc_json_string_own(zc_buf_detach(&r)));
	}
	return refs;
}

/* The media items of message i (checked by media.c), into mi. */
static int parse_media(json_t *media, size_t i, int host, struct msg_in *mi, struct zc_err *e)
{
	if (!json_is_array(media))
		return ZCOR_OK;
	mi->media = zc_calloc(json_array_size(media) + 1, sizeof(*mi->media));
	size_t j;
	json_t *x;
	json_array_foreach(media, j, x) {
		char f[64];
		snprintf(f, sizeof(f), "messages[%zu].media[%zu]", i, j);
		mi->nmedia = j + 1;
		int rc = zc_media_parse(x, f, host, &mi->media[j], e);
		if (rc)
			return rc;
	}
	return ZCOR_OK;
}

/* Checks message i of a batch (v) and fills *mi: the schema, then its
 * media; then the output shape from what was checked. */
static int parse_message(struct zc_mem *m, json_t *v, size_t i, int host, struct msg_in *mi,
			 struct zc_err *e)
{
	char f[64];
	snprintf(f, sizeof(f), "messages[%zu]", i);
	int rc = zc_schema_check_as(zc_schema_of(&message_schema), v, f, &batch_style, e);
	if (rc)
		return rc;
	json_t *t = json_object_get(v, "time");
	mi->at = zc_mem_now(m);
	snprintf(f, sizeof(f), "messages[%zu].time", i);
	if (json_is_string(t) && (rc = zc_time_parse(json_string_value(t), f, &mi->at, e)))
		return rc; /* the schema checked it: not reached */
	json_t *mentions = json_array(), *x;
	size_t j;
	mi->msg = json_object();
	json_object_set_new(mi->msg, "mentions", mentions);
	json_array_foreach(json_object_get(v, "mentions"), j, x)
		json_array_append_new(mentions, zc_json_string_own(zc_log_id_text(x, 64)));
	if ((rc = parse_media(json_object_get(v, "media"), i, host, mi, e)))
		return rc;
	json_t *name = json_object_get(v, "senderName"), *text = json_object_get(v, "text");
	json_t *rt = json_object_get(v, "replyTo");
	char *sender = zc_log_id_text(json_object_get(v, "senderId"), ZC_SENDER_MAX);
	json_object_set_new(mi->msg, "id",
			    zc_json_string_own(zc_log_id_text(json_object_get(v, "id"), ZC_MSG_ID_MAX)));
	json_object_set_new(mi->msg, "senderId", json_string(sender));
	json_object_set_new(mi->msg, "senderName",
			    json_string(json_is_string(name) ? json_string_value(name) : ""));
	json_object_set_new(mi->msg, "text", json_string(json_is_string(text) ? json_string_value(text) : ""));
	json_object_set_new(mi->msg, "replyTo",
			    !rt || json_is_null(rt) ? json_null()
						: zc_json_string_own(zc_log_id_text(rt, ZC_MSG_ID_MAX)));
	json_object_set_new(mi->msg, "media", media_refs(mi));
	zc_json_set_time(mi->msg, "time", mi->at);
	if (zc_log_is_self(m, sender, json_is_true(json_object_get(v, "self"))))
		mi->skip = "self";
	zc_free(sender);
	return ZCOR_OK;
}

/* Inserts one message unless its id is already logged (*inserted 0). */
int zc_log_insert_message(struct zc_store *s, const char *conv, const json_t *msg, int64_t at,
			  int imported, int *inserted, struct zc_err *e)
{
	sqlite3_stmt *st = zc_stmt(s,
				   "INSERT INTO messages(conversation, message_id, at, sender_id, sender_name, "
				   "text, mentions, reply_to, media, text_norm, recalled_at, imported) "
				   "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) "
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
	int64_t recalled = 0;
	struct zc_err ignored = {0};
	if (zc_json_str(msg, "recalledAt") &&
	    zc_time_parse(zc_json_str(msg, "recalledAt"), "recalledAt", &recalled, &ignored) == ZCOR_OK)
		sqlite3_bind_int64(st, 11, recalled);
	sqlite3_bind_int(st, 12, imported != 0);
	int step = sqlite3_step(st);
	sqlite3_reset(st);
	if (step != SQLITE_DONE)
		return zc_store_fail(s, step, e, "logging a message");
	*inserted = sqlite3_changes(s->db) > 0;
	return ZCOR_OK;
}

int zc_log_top(struct zc_store *s, int64_t *top, struct zc_err *e)
{
	sqlite3_stmt *st = zc_stmt(s, "SELECT coalesce(max(seq), 0) FROM messages", e);
	if (!st)
		return e->code;
	int step = sqlite3_step(st);
	*top = step == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_reset(st);
	return step == SQLITE_ROW ? ZCOR_OK : zc_store_fail(s, step, e, "reading the log's newest message");
}

int zc_log_index(struct zc_store *s, int64_t top, struct zc_err *e)
{
	sqlite3_stmt *st = zc_stmt(s,
				   "INSERT INTO messages_fts(rowid, text, sender_name) "
				   "SELECT seq, text, sender_name FROM messages WHERE seq > ?1",
				   e);
	if (!st)
		return e->code;
	sqlite3_bind_int64(st, 1, top);
	int step = sqlite3_step(st);
	sqlite3_reset(st);
	return step == SQLITE_DONE ? ZCOR_OK : zc_store_fail(s, step, e, "indexing the logged messages");
}

/* Creates the conversation row if needed and adds n messages (lines =
 * whether they count as new lines for the digest) up to time last. */
int zc_log_conv_add(struct zc_mem *m, const char *key, long long n, int lines, int64_t last,
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

int zc_log_check_key(const char *key, const char *field, struct zc_err *e)
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
	int rc = zc_schema_check_as(zc_schema_of(&batch_schema), batch, "", &batch_style, e);
	if (rc)
		return rc;
	json_t *msgs = json_object_get(batch, "messages"), *x;
	*v = zc_calloc(json_array_size(msgs), sizeof(**v));
	size_t i;
	json_array_foreach(msgs, i, x) {
		*n = i + 1;
		if ((rc = parse_message(m, x, i, host, &(*v)[i], e)))
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
		if (*logged == 0 && (rc = zc_log_conv_add(m, key, 0, 0, 0, e)))
			break;
		int inserted = 0;
		if ((rc = zc_log_insert_message(&m->store, key, v[i].msg, v[i].at, 0, &inserted, e)))
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
		rc = zc_log_conv_add(m, key, *logged, 1, last, e);
	if (!rc && *logged)
		rc = zc_media_evict(m, evicted, e);
	return rc;
}

/* What zc_transcript_log hands its operation (op->ud). */
struct log_call {
	const char *key, *bound;
	struct msg_in *v;
	size_t n;
	long long logged;
	json_t *written, *evicted;
};

static int log_batch_op(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	struct log_call *c = op->ud;
	(void)args, (void)out;
	int rc = log_body(op->m, c->key, c->bound, c->v, c->n, &c->logged, c->written, c->evicted, e);
	if (rc) {
		zc_err_prefix(e, "nothing was logged");
		return rc;
	}
	if (c->logged) { /* mirror/: the log files of these days */
		op->log_from = INT64_MAX;
		op->log_to = INT64_MIN;
		for (size_t i = 0; i < c->n; i++)
			if (!c->v[i].skip) {
				op->log_from = c->v[i].at < op->log_from ? c->v[i].at : op->log_from;
				op->log_to = c->v[i].at > op->log_to ? c->v[i].at : op->log_to;
			}
		op->log_conv = zc_strdup(c->key);
	}
	return ZCOR_OK;
}

/* One batch in a transaction of its own: its messages, then their
 * full-text rows (zc_log_index). */
static int log_op(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	int64_t top = 0;
	int rc = zc_log_top(&op->m->store, &top, e);
	if (!rc)
		rc = log_batch_op(op, args, out, e);
	return rc ? rc : zc_log_index(&op->m->store, top, e);
}

/* Logging is not a call: no history record (transcript.h). */
static const struct zc_opdef log_def = {"log", NULL, log_op, ZC_OP_NO_HISTORY};

int zc_transcript_log(struct zc_mem *m, const struct zcor_ctx *ctx, const char *conversation,
		      const json_t *batch, json_t **out, struct zc_err *e)
{
	struct log_call c = {conversation, ctx->conversation, NULL, 0, 0, json_array(), json_array()};
	json_t *none = NULL;
	int rc;
	*out = NULL;
	zc_config_refresh(&m->conf);
	if ((rc = zc_log_check_key(conversation, "conversation", e)) ||
	    (rc = parse_batch(m, batch, !ctx->conversation, &c.v, &c.n, e)))
		goto out;
	const char *refused = admission_refuses(m, conversation);
	for (size_t i = 0; refused && i < c.n; i++)
		c.v[i].skip = refused;
	if ((rc = zc_mem_run_ud(m, ctx, &log_def, NULL, &c, &none, e))) {
		zc_media_unlink(m, c.written);
		goto out;
	}
	json_decref(none);
	zc_media_unlink(m, c.evicted);
	json_t *skipped = json_array(), *admitted = json_array();
	for (size_t i = 0; i < c.n; i++) {
		if (c.v[i].skip)
			json_array_append_new(skipped, json_pack("{s:O, s:s}", "messageId",
								 json_object_get(c.v[i].msg, "id"),
								 "reason", c.v[i].skip));
		if (!c.v[i].skip || strcmp(c.v[i].skip, "duplicate") == 0)
			json_array_append(admitted, c.v[i].msg);
	}
	*out = json_pack("{s:s, s:I, s:o, s:o}", "conversation", conversation, "logged",
			 (json_int_t)c.logged, "skipped", skipped, "admitted", admitted);
out:
	msgs_release(c.v, c.n);
	json_decref(c.evicted);
	json_decref(c.written);
	return rc;
}

/* ---- several conversations' batches at once ----------------------------- */

/* One batch of a zc_transcript_log_many call. */
struct log_one {
	struct log_call c;
	int rc; /* its own refusal (ZCOR_EINVAL), or 0 */
	struct zc_err e;
};

struct log_many {
	struct log_one *b;
	size_t n;
};

/* Each batch in a savepoint of the caller's transaction. */
static const struct zc_opdef log_join_def = {"log", NULL, log_batch_op,
					     ZC_OP_NO_HISTORY | ZC_OP_JOIN};

/* A refusal of one batch (what it holds) rolls back its savepoint alone;
 * anything else (the disk, a lock) fails the whole transaction. */
static int log_many_op(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	struct log_many *lm = op->ud;
	(void)args, (void)out;
	int64_t top = 0;
	int rc0 = zc_log_top(&op->m->store, &top, e);
	if (rc0)
		return rc0;
	for (size_t i = 0; i < lm->n; i++) {
		struct log_one *b = &lm->b[i];
		if (b->rc)
			continue;
		json_t *none = NULL;
		int rc = zc_mem_run_ud(op->m, op->ctx, &log_join_def, NULL, &b->c, &none, &b->e);
		json_decref(none);
		if (rc == ZCOR_EINVAL) {
			b->rc = rc;
			b->c.logged = 0;
			zc_media_unlink(op->m, b->c.written);
			json_array_clear(b->c.written);
			json_array_clear(b->c.evicted);
		} else if (rc) {
			*e = b->e;
			return rc;
		}
	}
	/* every batch's full-text rows at once (a refused one's rolled back) */
	return zc_log_index(&op->m->store, top, e);
}

static const struct zc_opdef log_many_def = {"log", NULL, log_many_op, ZC_OP_NO_HISTORY};
static const struct zc_opdef log_many_nosync_def = {"log", NULL, log_many_op,
						    ZC_OP_NO_HISTORY | ZC_OP_NOSYNC};

/* Checks batch i (key; one: {"messages", "recall"?}, as zc_transcript_log
 * takes it) into lm->b[i]; *total counts the messages of the call. */
static int many_prepare(struct zc_mem *m, const struct zcor_ctx *ctx, struct log_many *lm, size_t i,
			const char *key, const json_t *one, size_t *total, struct zc_err *e)
{
	struct log_one *b = &lm->b[i];
	b->c = (struct log_call){key, ctx->conversation, NULL, 0, 0, json_array(), json_array()};
	char field[48];
	snprintf(field, sizeof(field), "batches[%zu].conversation", i);
	int rc = zc_log_check_key(key, field, e);
	if (rc)
		return rc;
	if (ctx->conversation && strcmp(ctx->conversation, key) != 0)
		return zc_fail(e, ZCOR_EFORBIDDEN,
			       "this caller is bound to conversation '%s' and cannot log into '%s'",
			       ctx->conversation, ZC_Q(key, 80));
	*total += json_array_size(json_object_get(one, "messages"));
	if (*total > ZC_LOG_MANY_MESSAGES_MAX)
		return zc_fail(e, ZCOR_EINVAL, "batches hold more than %d messages in all: send fewer at once",
			       ZC_LOG_MANY_MESSAGES_MAX);
	if ((rc = parse_batch(m, one, !ctx->conversation, &b->c.v, &b->c.n, e)))
		return zc_err_prefix(e, "batches[%zu]", i);
	const char *refused = admission_refuses(m, key);
	for (size_t j = 0; refused && j < b->c.n; j++)
		b->c.v[j].skip = refused;
	return ZCOR_OK;
}

/* The prepared batches in one transaction; on failure the media written
 * are removed again. */
static int many_run(struct zc_mem *m, const struct zcor_ctx *ctx, struct log_many *lm, int nosync,
		    struct zc_err *e)
{
	json_t *none = NULL;
	int rc = zc_mem_run_ud(m, ctx, nosync ? &log_many_nosync_def : &log_many_def, NULL, lm, &none, e);
	if (rc)
		for (size_t i = 0; i < lm->n; i++)
			zc_media_unlink(m, lm->b[i].c.written);
	json_decref(none);
	for (size_t i = 0; !rc && i < lm->n; i++)
		zc_media_unlink(m, lm->b[i].c.evicted);
	return rc;
}

static void many_release(struct log_many *lm)
{
	for (size_t i = 0; i < lm->n; i++) {
		msgs_release(lm->b[i].c.v, lm->b[i].c.n);
		json_decref(lm->b[i].c.evicted);
		json_decref(lm->b[i].c.written);
	}
	zc_free(lm->b);
}

static int check_many(size_t n, struct zc_err *e)
{
	if (n == 0 || n > ZC_LOG_BATCHES_MAX)
		return zc_fail(e, ZCOR_EINVAL,
			       "batches must be an array of 1 to %d objects {\"conversation\", "
			       "\"messages\": [...]}",
			       ZC_LOG_BATCHES_MAX);
	return ZCOR_OK;
}

int zc_transcript_log_many(struct zc_mem *m, const struct zcor_ctx *ctx, const json_t *batches,
			   json_t **out, struct zc_err *e)
{
	*out = NULL;
	zc_config_refresh(&m->conf);
	if (!json_is_array(batches))
		return check_many(0, e);
	size_t n = json_array_size(batches), total = 0;
	int rc = check_many(n, e);
	if (rc)
		return rc;
	struct log_many lm = {zc_calloc(n, sizeof(struct log_one)), n};
	for (size_t i = 0; i < n && !rc; i++) {
		json_t *x = json_array_get(batches, i);
		if (!json_is_object(x)) {
			rc = zc_fail(e, ZCOR_EINVAL, "batches[%zu] must be an object {\"conversation\", "
						     "\"messages\": [...]}", i);
			break;
		}
		/* the batch as zc_transcript_log takes it: its messages (and
		 * "recall", which the caller reads); a shallow copy */
		json_t *one = json_object(), *v;
		const char *k;
		json_object_foreach(x, k, v)
			if (strcmp(k, "conversation") != 0)
				json_object_set(one, k, v);
		rc = many_prepare(m, ctx, &lm, i, json_string_value(json_object_get(x, "conversation")),
				  one, &total, e);
		json_decref(one);
	}
	if (!rc)
		rc = many_run(m, ctx, &lm, 0, e);
	if (!rc) {
		json_t *results = json_array();
		for (size_t i = 0; i < n; i++) {
			struct log_one *b = &lm.b[i];
			if (b->rc) {
				json_array_append_new(results,
						      json_pack("{s:s, s:{s:s, s:s}}", "conversation", b->c.key,
								"error", "code", zcor_code_name(b->rc),
								"message", b->e.msg));
				continue;
			}
			json_t *skipped = json_array();
			for (size_t j = 0; j < b->c.n; j++)
				if (b->c.v[j].skip)
					json_array_append_new(skipped,
							      json_pack("{s:O, s:s}", "messageId",
									json_object_get(b->c.v[j].msg, "id"),
									"reason", b->c.v[j].skip));
			json_array_append_new(results, json_pack("{s:s, s:I, s:o}", "conversation", b->c.key,
								 "logged", (json_int_t)b->c.logged,
								 "skipped", skipped));
		}
		*out = json_pack("{s:o}", "results", results);
	}
	many_release(&lm);
	return rc;
}

/* A string field of a C message as JSON: NULL is not given; bytes that
 * are not UTF-8 are refused, named as the JSON batch would name them. */
static int c_str(json_t *msg, const char *key, const char *s, size_t bi, size_t i,
		 struct zc_err *e)
{
	if (!s)
		return ZCOR_OK;
	json_t *v = json_string(s);
	if (!v)
		return zc_fail(e, ZCOR_EINVAL, "batches[%zu]: field 'messages[%zu].%s': is not valid UTF-8",
			       bi, i, key);
	json_object_set_new(msg, key, v);
	return ZCOR_OK;
}

/* Message i of batch bi as the object zc_transcript_log checks. */
static int c_message(const struct zcor_log_msg *cm, size_t bi, size_t i, json_t **out,
		     struct zc_err *e)
{
	json_t *msg = json_object();
	int rc = ZCOR_OK;
	*out = NULL;
	if (cm->time_ms < 0)
		rc = zc_fail(e, ZCOR_EINVAL, "batches[%zu]: field 'messages[%zu].time': must be a time "
					     "in ms since 1970 (0: now)", bi, i);
	if (!rc && cm->time_ms > 0) {
		char t[ZC_TIME_LEN];
		zc_time_format(cm->time_ms, t);
		json_object_set_new(msg, "time", json_string(t));
	}
	if (!rc && !(rc = c_str(msg, "id", cm->id, bi, i, e)) &&
	    !(rc = c_str(msg, "senderId", cm->sender_id, bi, i, e)) &&
	    !(rc = c_str(msg, "senderName", cm->sender_name, bi, i, e)) &&
	    !(rc = c_str(msg, "text", cm->text, bi, i, e)) &&
	    !(rc = c_str(msg, "replyTo", cm->reply_to, bi, i, e)) && cm->n_mentions) {
		json_t *mentions = json_array();
		json_object_set_new(msg, "mentions", mentions);
		for (size_t j = 0; j < cm->n_mentions && !rc; j++) {
			json_t *x = cm->mentions[j] ? json_string(cm->mentions[j]) : NULL;
			if (!x)
				rc = zc_fail(e, ZCOR_EINVAL, "batches[%zu]: field 'messages[%zu].mentions[%zu]': "
							     "must be a person id (UTF-8 text)", bi, i, j);
			json_array_append_new(mentions, x);
		}
	}
	if (!rc && cm->self)
		json_object_set_new(msg, "self", json_true());
	if (rc)
		json_decref(msg);
	else
		*out = msg;
	return rc;
}

int zc_transcript_log_many_c(struct zc_mem *m, const struct zcor_ctx *ctx,
			     struct zcor_log_batch *batches, size_t n, int nosync, struct zc_err *e)
{
	zc_config_refresh(&m->conf);
	size_t total = 0;
	int rc = check_many(n, e);
	if (rc)
		return rc;
	struct log_many lm = {zc_calloc(n, sizeof(struct log_one)), n};
	for (size_t i = 0; i < n && !rc; i++) {
		struct zcor_log_batch *cb = &batches[i];
		json_t *msgs = json_array(), *x;
		/* one past a batch's limit is enough for the schema to refuse it */
		size_t upto = cb->n > ZC_BATCH_MAX ? ZC_BATCH_MAX + 1 : cb->n;
		for (size_t j = 0; j < upto && !rc; j++)
			if (!(rc = c_message(&cb->messages[j], i, j, &x, e)))
				json_array_append_new(msgs, x);
		json_t *one = json_pack("{s:o}", "messages", msgs);
		if (!rc)
			rc = many_prepare(m, ctx, &lm, i, cb->conversation, one, &total, e);
		json_decref(one);
	}
	if (!rc)
		rc = many_run(m, ctx, &lm, nosync, e);
	for (size_t i = 0; !rc && i < n; i++) {
		struct log_one *b = &lm.b[i];
		struct zcor_log_batch *cb = &batches[i];
		cb->code = b->rc;
		cb->logged = b->rc ? 0 : b->c.logged;
		snprintf(cb->error, sizeof(cb->error), "%s", b->rc ? b->e.msg : "");
		for (size_t j = 0; j < cb->n; j++)
			cb->messages[j].skipped = b->rc ? NULL : b->c.v[j].skip;
	}
	many_release(&lm);
	return rc;
}

/* ---- a message withdrawn by its sender --------------------------------- */

/* What zc_transcript_recalled hands its operation (op->ud). */
struct recalled_call {
	const char *key, *id;
	int64_t at; /* 0: now */
	int64_t kept; /* out: the recall time kept */
};

/* The first recall is kept: a second notice (NapCat redelivers after a
 * reconnect) changes nothing. The message stays in the log and in every
 * index; only readers mark it. */
static int recalled_op(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	struct recalled_call *c = op->ud;
	struct zc_store *s = &op->m->store;
	sqlite3_stmt *st = zc_stmt(s,
				   "SELECT at, recalled_at FROM messages WHERE conversation = ?1 AND "
				   "message_id = ?2",
				   e);
	if (!st)
		return e->code;
	sqlite3_bind_text(st, 1, c->key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, c->id, -1, SQLITE_STATIC);
	int step = sqlite3_step(st);
	int64_t msg_at = step == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	int before = step == SQLITE_ROW && sqlite3_column_type(st, 1) != SQLITE_NULL;
	c->kept = before ? sqlite3_column_int64(st, 1) : (c->at ? c->at : op->now);
	sqlite3_reset(st);
	if (step != SQLITE_ROW && step != SQLITE_DONE)
		return zc_store_fail(s, step, e, "reading the message");
	if (step == SQLITE_DONE)
		return zc_fail(e, ZCOR_ENOTFOUND,
			       "no message '%s' in the transcript of conversation '%s': only a logged "
			       "message can be marked recalled",
			       ZC_Q(c->id, 80), c->key);
	if (!before) {
		st = zc_stmt(s,
			     "UPDATE messages SET recalled_at = ?3 WHERE conversation = ?1 AND "
			     "message_id = ?2",
			     e);
		if (!st)
			return e->code;
		sqlite3_bind_text(st, 1, c->key, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, c->id, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, c->kept);
		step = sqlite3_step(st);
		sqlite3_reset(st);
		if (step != SQLITE_DONE)
			return zc_store_fail(s, step, e, "marking the message recalled");
		/* mirror/: that day's log file carries the mark */
		op->log_conv = zc_strdup(c->key);
		op->log_from = op->log_to = msg_at;
	}
	*out = json_pack("{s:s, s:s}", "conversation", c->key, "messageId", c->id);
	zc_json_set_time(*out, "recalledAt", c->kept);
	return ZCOR_OK;
}

/* Not a call of the model's: no history record (zcor.h). */
static const struct zc_opdef recalled_def = {"message recalled", NULL, recalled_op,
					     ZC_OP_NO_HISTORY};

int zc_transcript_recalled(struct zc_mem *m, const struct zcor_ctx *ctx, const char *conversation,
			   const char *message_id, long long at_ms, json_t **out, struct zc_err *e)
{
	int rc = zc_log_check_key(conversation, "conversation", e);
	*out = NULL;
	if (rc)
		return rc;
	if (ctx->conversation && strcmp(ctx->conversation, conversation) != 0)
		return zc_fail(e, ZCOR_EFORBIDDEN,
			       "this caller is bound to conversation '%s' and cannot mark a message of "
			       "'%s' recalled",
			       ctx->conversation, conversation);
	json_t *idv = json_string(message_id ? message_id : "");
	char *id = idv ? zc_log_id_text(idv, ZC_MSG_ID_MAX) : NULL;
	json_decref(idv);
	if (!id)
		return zc_fail(e, ZCOR_EINVAL,
			       "messageId '%s': not a message id; give the logged message's id (1 to %d "
			       "bytes of UTF-8, no control characters)",
			       ZC_Q(message_id ? message_id : "", 80), ZC_MSG_ID_MAX);
	if (at_ms < 0) {
		zc_free(id);
		return zc_fail(e, ZCOR_EINVAL,
			       "at: %lld is not a time; give milliseconds since the epoch, or 0 for now",
			       at_ms);
	}
	struct recalled_call c = {conversation, id, at_ms, 0};
	rc = zc_mem_run_ud(m, ctx, &recalled_def, NULL, &c, out, e);
	zc_free(id);
	return rc;
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
	if (given && (rc = zc_log_check_key(given, "argument 'conversation'", e)))
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
	rc = zc_conv_rows(&op->m->store, op->ctx->conversation, limit, offset, items, &total, e);
	if (!rc)
		*out = zc_page_result(items, total, offset);
	json_decref(items);
	return rc;
}

static int collect_messages(struct zc_store *s, sqlite3_stmt *st, json_t *items, struct zc_err *e)
{
	int step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW)
		json_array_append_new(items, zc_log_msg_from_row(st));
	sqlite3_reset(st);
	return step == SQLITE_DONE ? ZCOR_OK : zc_store_fail(s, step, e, "reading the transcript");
}

/* ?8: the sender's id ("sender", issue 18: a person's messages), or NULL */
#define SENDER_IS " AND (?8 IS NULL OR sender_id = ?8)"
#define READ_WHERE                                                                                    \
	" FROM messages WHERE conversation = ?1 AND (?2 IS NULL OR at >= ?2) AND (?3 IS NULL OR at <= ?3)" \
	SENDER_IS

/* The range of a read or a search: the conversation (NULL: every one the
 * caller sees), from / to (-1: open) and the sender (NULL: anyone). */
struct range {
	const char *key, *sender;
	int64_t from, to;
};

static void bind_range(sqlite3_stmt *st, const struct range *r)
{
	if (r->key)
		sqlite3_bind_text(st, 1, r->key, -1, SQLITE_TRANSIENT);
	if (r->from >= 0)
		sqlite3_bind_int64(st, 2, r->from);
	if (r->to >= 0)
		sqlite3_bind_int64(st, 3, r->to);
	if (r->sender)
		sqlite3_bind_text(st, 8, r->sender, -1, SQLITE_TRANSIENT);
}

/* The arguments a read and a search share: the conversation, from, to,
 * sender and the page. */
static int range_args(struct zc_op *op, json_t *args, int conv_required, struct range *r,
		      long long *limit, long long *offset, struct zc_err *e)
{
	int rc;
	json_t *sv = json_object_get(args, "sender");
	r->sender = NULL;
	if (sv) {
		const char *s = json_string_value(sv);
		if (!s || !*s || strlen(s) > ZC_SENDER_MAX)
			return zc_fail(e, ZCOR_EINVAL,
				       "argument 'sender': must be a sender's id as the log has it (a QQ "
				       "number such as 12345), 1 to %d bytes",
				       ZC_SENDER_MAX);
		r->sender = s;
	}
	if ((rc = transcript_conv(op, args, conv_required, &r->key, e)) ||
	    (rc = zc_time_arg(args, "from", &r->from, e)) || (rc = zc_time_arg(args, "to", &r->to, e)))
		return rc;
	return zc_page_args(args, limit, offset, e);
}

/* read: one conversation in time order (oldest first), like a log. */
static int action_read(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	struct zc_store *s = &op->m->store;
	struct range r;
	long long limit, offset, total = 0;
	int rc;
	if ((rc = range_args(op, args, 1, &r, &limit, &offset, e)))
		return rc;
	const char *key = r.key;
	if (!op->ctx->conversation) {
		json_t *conv = NULL;
		if ((rc = zc_conv_load(s, key, &conv, e)))
			return rc;
		json_decref(conv);
	}
	sqlite3_stmt *st = zc_stmt(s, "SELECT count(*)" READ_WHERE, e);
	if (!st)
		return e->code;
	bind_range(st, &r);
	total = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_reset(st);
	st = zc_stmt(s, "SELECT " ZC_LOG_MSG_COLS READ_WHERE " ORDER BY at, seq LIMIT ?4 OFFSET ?5", e);
	if (!st)
		return e->code;
	bind_range(st, &r);
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

#define IN_RANGE                                                                          \
	" FROM messages WHERE (?1 IS NULL OR conversation = ?1)"                          \
	" AND (?2 IS NULL OR at >= ?2) AND (?3 IS NULL OR at <= ?3)" SENDER_IS
#define SEARCH_WHERE IN_RANGE \
	" AND NOT EXISTS (SELECT 1 FROM json_each(?6) k WHERE instr(text_norm, k.value) = 0)"
#define SEARCH_INDEXED " AND seq IN (SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?7)"
#define SEARCH_SCAN " AND seq IN (SELECT seq" IN_RANGE " ORDER BY at DESC, seq DESC LIMIT ?7)"

/* How a search narrows: through messages_fts (CJK keywords), the newest
 * ZC_TRANSCRIPT_SCAN_MAX messages of the range (other keywords), or not
 * at all (a sender and no keyword: that sender's messages). */
enum narrow { BY_INDEX, BY_SCAN, BY_SENDER };

static void bind_search(sqlite3_stmt *st, const struct range *r, const char *kw, const char *pre)
{
	bind_range(st, r);
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
 * when that bound cut the range. A sender alone (no keyword) is that
 * sender's messages, every conversation the caller sees when none is
 * given (issue 18: a person's recent messages). */
static int action_search(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	static const char *const count_sql[] = {
		"SELECT count(*)" SEARCH_WHERE SEARCH_INDEXED,
		"SELECT count(*)" SEARCH_WHERE SEARCH_SCAN,
		"SELECT count(*)" SEARCH_WHERE,
	};
	static const char *const rows_sql[] = {
		"SELECT " ZC_LOG_MSG_COLS SEARCH_WHERE SEARCH_INDEXED " ORDER BY at DESC, seq DESC LIMIT ?4 OFFSET ?5",
		"SELECT " ZC_LOG_MSG_COLS SEARCH_WHERE SEARCH_SCAN " ORDER BY at DESC, seq DESC LIMIT ?4 OFFSET ?5",
		"SELECT " ZC_LOG_MSG_COLS SEARCH_WHERE " ORDER BY at DESC, seq DESC LIMIT ?4 OFFSET ?5",
	};
	struct zc_store *s = &op->m->store;
	struct range r;
	long long limit, offset, total = 0, in_range = 0;
	char *kw = NULL, *pre = NULL;
	json_t *items = json_array();
	json_t *kwj = json_object_get(args, "keywords");
	int rc;
	*out = NULL;
	if ((rc = range_args(op, args, 0, &r, &limit, &offset, e)))
		goto out;
	if (json_array_size(kwj) == 0 && !r.sender) {
		rc = zc_fail(e, ZCOR_EINVAL, "argument 'keywords': search needs at least one keyword "
					     "(or a sender); use action 'read' to page through a conversation");
		goto out;
	}
	kw = zc_norm_keywords(kwj);
	pre = zc_fts_keywords_prefilter(kwj, "text");
	enum narrow how = pre ? BY_INDEX : json_array_size(kwj) ? BY_SCAN : BY_SENDER;
	sqlite3_stmt *st = zc_stmt(s, count_sql[how], e);
	if (!st) {
		rc = e->code;
		goto out;
	}
	bind_search(st, &r, kw, pre);
	total = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_reset(st);
	if (!(st = zc_stmt(s, rows_sql[how], e))) {
		rc = e->code;
		goto out;
	}
	bind_search(st, &r, kw, pre);
	sqlite3_bind_int64(st, 4, limit);
	sqlite3_bind_int64(st, 5, offset);
	if ((rc = collect_messages(s, st, items, e)))
		goto out;
	*out = zc_page_result(items, total, offset);
	if (how == BY_SCAN) {
		if (!(st = zc_stmt(s, "SELECT count(*)" IN_RANGE, e))) {
			rc = e->code;
			goto out;
		}
		bind_range(st, &r);
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

