/*
 * logfile.c — the seed-003 log files, conversations/<slug>/log/
 * YYYY-MM-DD.jsonl: writing the log out (export, mirror/) and reading
 * such files in (import), tolerantly (transcript.h).
 *
 * Memory layer, over the log (transcript.c). An import is an operation of
 * the runner without a history record that joins the caller's
 * transaction when there is one (zcor import qq-memory); a line that does
 * not parse is reported, never silently dropped. Export only reads. It
 * never writes mirror/ itself (the runner's commit hook does).
 */
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
#include "memory/media.h" /* zc_sha256_hex: the id of a line without one */
#include "memory/transcript_int.h"
#include "text/norm.h"

/* ---- log files: export ------------------------------------------------- */

static int flush_file(const char *root, const char *slug, const char *date, struct zc_buf *b,
		      long long *files, struct zc_err *e)
{
	struct zc_buf rel = ZC_BUF_INIT;
	int rc;
	/* real directories under root: a planted link is not written through */
	zc_buf_addf(&rel, "conversations/%s/log/%s.jsonl", slug, date);
	if (!(rc = zc_mkdir_p(root, e)) && !(rc = zc_write_file_inside(root, rel.p, b->p, b->len, e)))
		++*files;
	zc_buf_release(&rel);
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
	if (conversation && (rc = zc_log_check_key(conversation, "conversation", e)))
		return rc;
	if ((rc = zc_store_begin(s, 0, e)))
		return rc;
	if (conversation && (rc = zc_conv_load(s, conversation, &conv, e)))
		goto out;
	sqlite3_stmt *st = zc_stmt(s, "SELECT " ZC_LOG_MSG_COLS " FROM messages WHERE (?1 IS NULL OR conversation = ?1) "
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
		json_t *msg = zc_log_msg_from_row(st);
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
static int lenient_time(json_t *v, const char *field, int64_t *at, struct zc_err *e)
{
	if (json_is_string(v))
		return zc_time_parse(json_string_value(v), field, at, e);
	if (json_is_integer(v) || json_is_real(v)) {
		double x = json_number_value(v);
		*at = (int64_t)(x < 1e11 ? x * 1000.0 : x); /* seconds before year 5138 */
		return ZCOR_OK;
	}
	return zc_fail(e, ZCOR_EINVAL, "'%s' must be ISO-8601 text or epoch seconds/milliseconds", field);
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
	static const char *const k_recalled[] = {"recalledAt", "recalled_at", NULL};
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
	if ((rc = lenient_time(tv, "time", at, e)))
		goto out;
	if (!(sender = zc_log_id_text(first_of(o, k_sender), 64))) {
		rc = zc_fail(e, ZCOR_EINVAL, "no sender id (senderId, userId, user_id or qq)");
		goto out;
	}
	if (textv && (!json_is_string(textv) || zc_utf8_len(json_string_value(textv)) > ZC_MSG_TEXT_MAX)) {
		rc = zc_fail(e, ZCOR_EINVAL, "the text is not a string of at most 20000 characters");
		goto out;
	}
	json_t *idv = first_of(o, k_id);
	if (idv) {
		if (!(id = zc_log_id_text(idv, ZC_MSG_ID_MAX))) {
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
	/* a message its sender withdrew (export writes recalledAt) */
	json_t *rv = first_of(o, k_recalled);
	int64_t recalled = -1;
	if (rv && (rc = lenient_time(rv, "recalledAt", &recalled, e)))
		goto out;
	if (rv && recalled < 0) {
		rc = zc_fail(e, ZCOR_EINVAL, "'recalledAt' is before 1970");
		goto out;
	}
	reply = zc_log_id_text(first_of(o, k_reply), ZC_MSG_ID_MAX);
	json_t *mentions = json_array(), *mn = first_of(o, k_mentions), *media = json_array();
	size_t i;
	json_t *x;
	json_array_foreach(mn, i, x) {
		char *p = zc_log_id_text(x, 64);
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
	*self = json_is_true(json_object_get(o, "self")) || zc_log_is_self(m, sender, 0);
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
	if (recalled >= 0)
		zc_json_set_time(*msg, "recalledAt", recalled);
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
	if ((rc = zc_log_check_key(conversation, "conversation", e)) ||
	    (rc = zc_read_file(path, ZC_LOG_FILE_MAX, &data, &len, e)))
		return rc;
	rc = zc_transcript_import_data(m, conversation, path, data, len, report, e);
	zc_free(data);
	return rc;
}

/* What zc_transcript_import_data hands its operation (op->ud). */
struct import_call {
	const char *conversation, *path, *data;
	size_t len;
};

static int import_op(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	const struct import_call *c = op->ud;
	struct zc_mem *m = op->m;
	const char *conversation = c->conversation, *data = c->data;
	long long lines = 0, logged = 0, dups = 0, self = 0, nerr = 0;
	int64_t last = 0, top = 0;
	json_t *errors = json_array();
	int rc;
	if ((rc = zc_log_top(&m->store, &top, e)) || (rc = zc_log_conv_add(m, conversation, 0, 0, 0, e)))
		goto out;
	for (size_t at = 0; at < c->len;) {
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
		} else if ((rc = zc_log_insert_message(&m->store, conversation, msg, t, 1, &inserted, e))) {
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
	if (logged && ((rc = zc_log_index(&m->store, top, e)) ||
		       (rc = zc_log_conv_add(m, conversation, logged, 0, last, e))))
		goto out;
	if (!logged && !dups) {
		/* nothing of this conversation: no empty conversation row */
		sqlite3_stmt *st = zc_stmt(&m->store,
					   "DELETE FROM conversations WHERE key = ?1 AND messages = 0 AND "
					   "title IS NULL AND NOT EXISTS (SELECT 1 FROM messages WHERE "
					   "conversation = ?1)",
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
	if (logged)
		op->all_changed = 1; /* mirror/: everything */
	*out = json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:O}", "file", c->path, "conversation",
			 conversation, "lines", (json_int_t)lines, "logged", (json_int_t)logged,
			 "duplicates", (json_int_t)dups, "self", (json_int_t)self, "errorCount",
			 (json_int_t)nerr, "errors", errors);
out:
	json_decref(errors);
	return rc;
}

/* Not a call: no history record; inside a caller's transaction (zcor
 * import qq-memory) it joins it. */
static const struct zc_opdef import_def = {"import log", NULL, import_op,
					   ZC_OP_NO_HISTORY | ZC_OP_JOIN};

int zc_transcript_import_data(struct zc_mem *m, const char *conversation, const char *path,
			      const char *data, size_t len, json_t **report, struct zc_err *e)
{
	static const struct zcor_ctx host = {ZCOR_ACTOR_CLI, NULL};
	struct import_call c = {conversation, path, data, len};
	zc_config_refresh(&m->conf);
	int rc = zc_log_check_key(conversation, "conversation", e);
	if (rc)
		return rc;
	return zc_mem_run_ud(m, &host, &import_def, NULL, &c, report, e);
}

