/*
 * digest.c — the digest agent's bookkeeping (digest.h; Q-DIGEST).
 *
 * Memory layer: reads the log for a run's input in one read
 * transaction, and writes a run's record together with "digest done" in
 * one operation of the runner, so a run that is recorded as ok is also
 * marked done and one that failed leaves its lines for the next run. It
 * never calls the model and never prints.
 */
#include "memory/digest.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/json.h"
#include "base/timeutil.h"
#include "base/utf8.h"
#include "memory/dialogue.h"
#include "memory/lease.h"
#include "memory/transcript_int.h"
#include "store/store.h"

/* One message as the run reads it: "[date time] name (id): text". */
static char *line_of(sqlite3_stmt *st)
{
	time_t t = (time_t)(sqlite3_column_int64(st, 0) / 1000);
	struct tm tm;
	char when[40] = "0000-00-00 00:00";
	if (localtime_r(&t, &tm))
		snprintf(when, sizeof(when), "%04d-%02d-%02d %02d:%02d", (tm.tm_year + 1900) % 10000,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min);
	const char *id = (const char *)sqlite3_column_text(st, 1);
	const char *name = (const char *)sqlite3_column_text(st, 2);
	const char *text = (const char *)sqlite3_column_text(st, 3);
	const char *media = (const char *)sqlite3_column_text(st, 4);
	struct zc_buf b = ZC_BUF_INIT;
	zc_buf_addf(&b, "[%s] %s (%s): ", when, name && *name ? name : "?", id ? id : "?");
	size_t n = zc_utf8_prefix(text ? text : "", ZC_DIGEST_LINE_MAX);
	zc_buf_add(&b, text ? text : "", n);
	if (text && text[n])
		zc_buf_adds(&b, "…");
	json_t *refs = media && strcmp(media, "[]") != 0 ? json_loads(media, 0, NULL) : NULL;
	if (json_array_size(refs)) { /* the paths as the model copies them into qq_save_sticker */
		zc_buf_adds(&b, " [图片: ");
		size_t i;
		json_t *r;
		json_array_foreach(refs, i, r) zc_buf_addf(&b, "%s%s", i ? ", " : "",
							   json_is_string(r) ? json_string_value(r) : "?");
		zc_buf_addc(&b, ']');
	}
	json_decref(refs);
	if (sqlite3_column_type(st, 5) != SQLITE_NULL)
		zc_buf_adds(&b, " (已撤回 / withdrawn)");
	/* one line per message: a newline inside a text would pass for a line of its own */
	for (char *p = b.p; p && *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	return zc_buf_detach(&b);
}

/* What ends a line cut to fit digestMaxChars. */
#define LINE_CUT "…[这一行太长，后面的省略了]"

int zc_digest_input(struct zc_mem *m, const char *conversation, long max_chars, json_t **out,
		    struct zc_err *e)
{
	struct zc_store *s = &m->store;
	json_t *conv = NULL, *newest_first = json_array();
	long long lines = 0, chars = 0;
	int cut = 0, step = SQLITE_DONE;
	*out = NULL;
	int rc = zc_store_begin(s, 0, e);
	if (rc || (rc = zc_conv_load(s, conversation, &conv, e)))
		goto out;
	lines = json_integer_value(json_object_get(conv, "linesSinceDigest"));
	sqlite3_stmt *st = zc_stmt(s,
				   "SELECT at, sender_id, sender_name, text, media, recalled_at FROM messages "
				   "WHERE conversation = ?1 AND imported = 0 ORDER BY seq DESC LIMIT ?2",
				   e);
	if (!st) {
		rc = e->code;
		goto out;
	}
	sqlite3_bind_text(st, 1, conversation, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, lines);
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		char *line = line_of(st);
		long long n = (long long)zc_utf8_len(line) + 1; /* its newline */
		if (chars + n > max_chars) {
			cut = 1;
			if (json_array_size(newest_first) == 0) {
				/* the newest line alone is over the limit: it goes cut to
				 * fit, so the run has something to read (not "nothing new"
				 * on every run until a shorter message comes) */
				long room = max_chars - 1 - (long)zc_utf8_len(LINE_CUT);
				size_t keep = zc_utf8_prefix(line, room > 0 ? (size_t)room : 0);
				struct zc_buf b = ZC_BUF_INIT;
				zc_buf_add(&b, line, keep);
				zc_buf_adds(&b, LINE_CUT);
				char *fit = zc_buf_detach(&b);
				chars += (long long)zc_utf8_len(fit) + 1;
				json_array_append_new(newest_first, zc_json_string_own(fit));
			}
			zc_free(line);
			break;
		}
		chars += n;
		json_array_append_new(newest_first, zc_json_string_own(line));
	}
	sqlite3_reset(st);
	if (step != SQLITE_DONE && step != SQLITE_ROW)
		rc = zc_store_fail(s, step, e, "reading the transcript for the digest");
out:
	zc_store_rollback(s);
	if (!rc) {
		struct zc_buf b = ZC_BUF_INIT;
		for (size_t i = json_array_size(newest_first); i-- > 0;)
			zc_buf_addf(&b, "%s\n", json_string_value(json_array_get(newest_first, i)));
		*out = json_pack("{s:O, s:I, s:I, s:I, s:b, s:o}", "conversation", conv, "lines",
				 (json_int_t)lines, "sentLines", (json_int_t)json_array_size(newest_first),
				 "chars", (json_int_t)chars, "cut", cut, "text",
				 zc_json_string_own(zc_buf_detach(&b)));
	}
	json_decref(conv);
	json_decref(newest_first);
	return rc;
}

int zc_digest_due(const json_t *conv, const char *today, long min_lines)
{
	const char *last = zc_json_str(conv, "lastDigestDate");
	if (last && strcmp(last, today) == 0)
		return 0;
	return json_integer_value(json_object_get(conv, "linesSinceDigest")) >= min_lines;
}

int zc_digest_still_due(struct zc_mem *m, const char *conversation, const char *today,
			long min_lines, int *due, struct zc_err *e)
{
	json_t *conv = NULL;
	*due = 0;
	int rc = zc_store_begin(&m->store, 0, e);
	if (!rc && !(rc = zc_conv_load(&m->store, conversation, &conv, e)))
		*due = zc_digest_due(conv, today, min_lines);
	zc_store_rollback(&m->store);
	json_decref(conv);
	return rc;
}

/* ---- one digest at a time per conversation (memory/lease.c) ----------- */

static int digest_begin(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	const char *conv = zc_json_str(args, "conversation"), *owner = zc_json_str(args, "owner");
	long long ms = json_integer_value(json_object_get(args, "leaseMs"));
	struct zc_lease_holder held = {{0}, 0};
	int rc = zc_lease_take(&op->m->store, "digest", conv, owner, op->now, ms, &held, e);
	if (rc == ZCOR_EBUSY) {
		const char *what;
		long pid = zc_lease_owner_pid(held.owner, &what);
		char until[ZC_TIME_LEN], who[160];
		zc_time_format(held.until, until);
		if (pid)
			snprintf(who, sizeof(who), "process %ld%s%s%s", pid, *what ? " (a " : "", what,
				 *what ? " run)" : "");
		else
			snprintf(who, sizeof(who), "'%s'", ZC_Q(held.owner, 60));
		rc = zc_fail(e, ZCOR_ECONFLICT,
			     "a digest of conversation '%s' is running already, held by %s until %s; "
			     "nothing was run: try again when it ends (the lease of a process that "
			     "died runs out at that time)",
			     ZC_Q(conv, 80), who, until);
		zc_json_err_detail(e, json_pack("{s:s, s:s, s:s, s:I, s:s}", "reason", "digest_running",
						"conversation", conv, "holder", held.owner, "pid",
						(json_int_t)pid, "until", until));
		return rc;
	}
	if (!rc)
		*out = json_object();
	return rc;
}

static int digest_release(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	int rc = zc_lease_give(&op->m->store, "digest", zc_json_str(args, "conversation"),
			       zc_json_str(args, "owner"), e);
	if (!rc)
		*out = json_object();
	return rc;
}

const struct zc_opdef zc_op_digest_begin = {"digest_begin", NULL, digest_begin,
					    ZC_OP_NO_HISTORY};
const struct zc_opdef zc_op_digest_release = {"digest_release", NULL, digest_release,
					      ZC_OP_NO_HISTORY};

static int digest_finish(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	struct zc_store *s = &op->m->store;
	const char *conv = zc_json_str(args, "conversation"), *status = zc_json_str(args, "status");
	json_t *error = json_object_get(args, "error"), *row = NULL;
	char *record = zc_json_dump(json_object_get(args, "record"));
	char *err_text = json_is_object(error) ? zc_json_dump(error) : NULL;
	int rc = ZCOR_OK, step;
	if (zc_json_str(args, "owner") &&
	    (rc = zc_lease_give(s, "digest", conv, zc_json_str(args, "owner"), e)))
		goto out;
	sqlite3_stmt *st = zc_stmt(s,
				   "INSERT INTO digests(conversation, started_at, ended_at, status, lines, "
				   "sent_lines, chars, cut, error, record) "
				   "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
				   e);
	if (!st || !record) {
		rc = st ? zc_fail(e, ZCOR_EINTERNAL, "out of memory") : e->code;
		goto out;
	}
	sqlite3_bind_text(st, 1, conv, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, zc_json_get_ms(args, "startedAt", op->now));
	sqlite3_bind_int64(st, 3, zc_json_get_ms(args, "endedAt", op->now));
	sqlite3_bind_text(st, 4, status, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 5, json_integer_value(json_object_get(args, "lines")));
	sqlite3_bind_int64(st, 6, json_integer_value(json_object_get(args, "sentLines")));
	sqlite3_bind_int64(st, 7, json_integer_value(json_object_get(args, "chars")));
	sqlite3_bind_int(st, 8, json_is_true(json_object_get(args, "cut")));
	if (err_text)
		sqlite3_bind_text(st, 9, err_text, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 10, record, -1, SQLITE_STATIC);
	step = sqlite3_step(st);
	sqlite3_reset(st);
	if (step != SQLITE_DONE) {
		rc = zc_store_fail(s, step, e, "writing the digest record");
		goto out;
	}
	sqlite3_int64 id = sqlite3_last_insert_rowid(s->db);
	if (strcmp(status, "ok") == 0) {
		/* the local date the run started (was due), not the one it ended
		 * on: a run that crosses midnight is that day's digest */
		char date[ZC_DATE_LEN];
		zc_time_local_date(zc_json_get_ms(args, "startedAt", op->now), date);
		st = zc_stmt(s,
			     "UPDATE conversations SET last_digest_at = ?2, last_digest_date = ?3, "
			     "lines_since_digest = max(0, lines_since_digest - ?4) WHERE key = ?1",
			     e);
		if (!st) {
			rc = e->code;
			goto out;
		}
		sqlite3_bind_text(st, 1, conv, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, op->now);
		sqlite3_bind_text(st, 3, date, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 4, json_integer_value(json_object_get(args, "lines")));
		step = sqlite3_step(st);
		sqlite3_reset(st);
		if (step != SQLITE_DONE) {
			rc = zc_store_fail(s, step, e, "marking the digest done");
			goto out;
		}
		op->digest_changed = 1; /* mirror/: digest.json */
	}
	if ((rc = zc_conv_load(s, conv, &row, e)))
		goto out;
	*out = json_pack("{s:I, s:o}", "id", (json_int_t)id, "conversation", row);
out:
	zc_free(record);
	zc_free(err_text);
	return rc;
}

const struct zc_opdef zc_op_digest_finish = {"digest_finish", NULL, digest_finish,
					     ZC_OP_NO_HISTORY};

static json_t *digest_from_row(sqlite3_stmt *st)
{
	json_t *o = json_object();
	json_object_set_new(o, "id", json_integer(sqlite3_column_int64(st, 0)));
	zc_json_set_str(o, "conversation", (const char *)sqlite3_column_text(st, 1));
	zc_col_time(o, "startedAt", st, 2);
	zc_col_time(o, "endedAt", st, 3);
	zc_json_set_str(o, "status", (const char *)sqlite3_column_text(st, 4));
	json_object_set_new(o, "lines", json_integer(sqlite3_column_int64(st, 5)));
	json_object_set_new(o, "sentLines", json_integer(sqlite3_column_int64(st, 6)));
	json_object_set_new(o, "chars", json_integer(sqlite3_column_int64(st, 7)));
	json_object_set_new(o, "cut", json_boolean(sqlite3_column_int(st, 8)));
	json_object_set_new(o, "error", zc_col_json(st, 9, 'n'));
	json_t *rest = zc_col_json(st, 10, '{');
	json_object_update_missing(o, rest);
	json_decref(rest);
	return o;
}

int zc_digests_list(struct zc_mem *m, const char *conversation, long long limit, long long offset,
		    json_t **out, struct zc_err *e)
{
	return zc_records_page(
		m, "SELECT count(*) FROM digests WHERE ?1 IS NULL OR conversation = ?1",
		"SELECT id, conversation, started_at, ended_at, status, lines, sent_lines, chars, "
		"cut, error, record FROM digests WHERE ?1 IS NULL OR conversation = ?1 "
		"ORDER BY id DESC LIMIT ?2 OFFSET ?3",
		digest_from_row, "listing digest records", conversation, limit, offset, out, e);
}
