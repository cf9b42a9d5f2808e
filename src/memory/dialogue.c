/*
 * dialogue.c — the turn's rows in the store (dialogue.h): the dialogue,
 * the turn records, the turn cursor and its lease.
 *
 * Memory layer: SQL over the tables of schema 11 (the lease: memory/lease.c), as operations of the
 * runner without history records (a turn's trace is its turn record; the
 * tool calls inside it have their own records). It never calls a model
 * and never decides what a turn does: agent/turn.c does.
 */
#include "memory/dialogue.h"

#include <assert.h>
#include <string.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/json.h"
#include "base/utf8.h"
#include "memory/lease.h"

/* ---- the lease and the batch ----------------------------------------- */

/* The turn's cursor (its row made the first time) and its lease. */
static int lease_take(struct zc_op *op, const char *conv, const char *owner, long long lease_ms,
		      long long *cursor, struct zc_err *e)
{
	struct zc_store *s = &op->m->store;
	sqlite3_stmt *st = zc_stmt(s, "INSERT OR IGNORE INTO turn_state(conversation) VALUES (?1)", e);
	if (!st)
		return e->code;
	sqlite3_bind_text(st, 1, conv, -1, SQLITE_STATIC);
	int step = sqlite3_step(st);
	sqlite3_reset(st);
	if (step != SQLITE_DONE)
		return zc_store_fail(s, step, e, "starting a turn");
	st = zc_stmt(s, "SELECT cursor FROM turn_state WHERE conversation = ?1", e);
	if (!st)
		return e->code;
	sqlite3_bind_text(st, 1, conv, -1, SQLITE_STATIC);
	if ((step = sqlite3_step(st)) != SQLITE_ROW) {
		sqlite3_reset(st);
		return zc_store_fail(s, step, e, "starting a turn");
	}
	*cursor = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	int rc = zc_lease_take(s, "turn", conv, owner, op->now, lease_ms, NULL, e);
	if (rc == ZCOR_EBUSY)
		return zc_fail(e, ZCOR_EBUSY,
			       "a turn of conversation '%s' is running; its next batch waits for it (try "
			       "again, or raise turn.waitMs)",
			       ZC_Q(conv, 80));
	return rc;
}

static json_t *message_from_row(sqlite3_stmt *st)
{
	json_t *o = json_object();
	zc_json_set_str(o, "id", (const char *)sqlite3_column_text(st, 1));
	json_object_set_new(o, "seq", json_integer(sqlite3_column_int64(st, 0)));
	zc_col_time(o, "time", st, 2);
	zc_json_set_str(o, "senderId", (const char *)sqlite3_column_text(st, 3));
	zc_json_set_str(o, "senderName", (const char *)sqlite3_column_text(st, 4));
	zc_json_set_str(o, "text", (const char *)sqlite3_column_text(st, 5));
	json_object_set_new(o, "mentions", zc_col_json(st, 6, '['));
	if (sqlite3_column_type(st, 7) != SQLITE_NULL)
		zc_json_set_str(o, "replyTo", (const char *)sqlite3_column_text(st, 7));
	json_object_set_new(o, "media", zc_col_json(st, 8, '['));
	/* withdrawn by its sender before this turn took it: delivered, marked */
	if (sqlite3_column_type(st, 9) != SQLITE_NULL)
		zc_col_time(o, "recalledAt", st, 9);
	return o;
}

static int turn_begin(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	struct zc_store *s = &op->m->store;
	const char *conv = zc_json_str(args, "conversation"), *owner = zc_json_str(args, "owner");
	long long lease_ms = json_integer_value(json_object_get(args, "leaseMs"));
	long long cursor = 0, pending = 0, upto = 0;
	assert(conv && owner && lease_ms > 0);
	int rc = lease_take(op, conv, owner, lease_ms, &cursor, e);
	if (rc)
		return rc;
	sqlite3_stmt *st = zc_stmt(s,
				   "SELECT count(*), coalesce(max(seq), ?2) FROM messages "
				   "WHERE conversation = ?1 AND seq > ?2 AND imported = 0",
				   e);
	if (!st)
		return e->code;
	sqlite3_bind_text(st, 1, conv, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, cursor);
	int step = sqlite3_step(st);
	if (step == SQLITE_ROW) {
		pending = sqlite3_column_int64(st, 0);
		upto = sqlite3_column_int64(st, 1);
	}
	sqlite3_reset(st);
	if (step != SQLITE_ROW)
		return zc_store_fail(s, step, e, "reading the batch");
	/* the newest ZC_TURN_BATCH_MAX, through messages' rowid (seq) */
	st = zc_stmt(s,
		     "SELECT * FROM (SELECT seq, message_id, at, sender_id, sender_name, text, mentions, "
		     "reply_to, media, recalled_at FROM messages WHERE conversation = ?1 AND seq > ?2 "
		     "AND imported = 0 ORDER BY seq DESC LIMIT ?3) ORDER BY seq",
		     e);
	if (!st)
		return e->code;
	sqlite3_bind_text(st, 1, conv, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, cursor);
	sqlite3_bind_int(st, 3, ZC_TURN_BATCH_MAX);
	json_t *msgs = json_array();
	while ((step = sqlite3_step(st)) == SQLITE_ROW)
		json_array_append_new(msgs, message_from_row(st));
	sqlite3_reset(st);
	if (step != SQLITE_DONE) {
		json_decref(msgs);
		return zc_store_fail(s, step, e, "reading the batch");
	}
	*out = json_pack("{s:I, s:I, s:I, s:o}", "cursor", (json_int_t)cursor, "upto", (json_int_t)upto,
			 "pending", (json_int_t)pending, "messages", msgs);
	return ZCOR_OK;
}

static int lease_release(struct zc_store *s, const char *conv, const char *owner, struct zc_err *e)
{
	return zc_lease_give(s, "turn", conv, owner, e);
}

static int turn_release(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	int rc = lease_release(&op->m->store, zc_json_str(args, "conversation"),
			       zc_json_str(args, "owner"), e);
	if (!rc)
		*out = json_object();
	return rc;
}

/* ---- the end of a turn -------------------------------------------------- */

static int dialogue_append(struct zc_store *s, const char *conv, sqlite3_int64 turn, int64_t at,
			   json_t *msgs, struct zc_err *e)
{
	size_t i;
	json_t *m;
	json_array_foreach(msgs, i, m) {
		long long held = json_integer_value(json_object_get(m, "_messages"));
		json_t *copy = json_deep_copy(m);
		json_object_del(copy, "_messages");
		char *text = zc_json_dump(copy);
		json_decref(copy);
		if (!text)
			return zc_fail(e, ZCOR_EINTERNAL, "out of memory");
		sqlite3_stmt *st = zc_stmt(s,
					   "INSERT INTO dialogue(conversation, turn_id, at, role, message, "
					   "chars, messages) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
					   e);
		if (!st) {
			zc_free(text);
			return e->code;
		}
		const char *role = zc_json_str(m, "role");
		sqlite3_bind_text(st, 1, conv, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, turn);
		sqlite3_bind_int64(st, 3, at);
		sqlite3_bind_text(st, 4, role ? role : "assistant", -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 5, text, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 6, (sqlite3_int64)zc_utf8_len(text));
		sqlite3_bind_int64(st, 7, held);
		int step = sqlite3_step(st);
		sqlite3_reset(st);
		zc_free(text);
		if (step != SQLITE_DONE)
			return zc_store_fail(s, step, e, "keeping the dialogue");
	}
	return ZCOR_OK;
}

static int turn_finish(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	struct zc_store *s = &op->m->store;
	const char *conv = zc_json_str(args, "conversation");
	json_t *error = json_object_get(args, "error");
	char *record = zc_json_dump(json_object_get(args, "record"));
	char *err_text = json_is_object(error) ? zc_json_dump(error) : NULL;
	int rc = ZCOR_OK;
	sqlite3_stmt *st = zc_stmt(s,
				   "INSERT INTO turns(conversation, started_at, ended_at, status, reply, "
				   "error, record) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
				   e);
	if (!st || !record) {
		rc = st ? zc_fail(e, ZCOR_EINTERNAL, "out of memory") : e->code;
		goto out;
	}
	sqlite3_bind_text(st, 1, conv, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, zc_json_get_ms(args, "startedAt", op->now));
	sqlite3_bind_int64(st, 3, zc_json_get_ms(args, "endedAt", op->now));
	sqlite3_bind_text(st, 4, zc_json_str(args, "status"), -1, SQLITE_STATIC);
	if (zc_json_str(args, "reply"))
		sqlite3_bind_text(st, 5, zc_json_str(args, "reply"), -1, SQLITE_STATIC);
	if (err_text)
		sqlite3_bind_text(st, 6, err_text, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 7, record, -1, SQLITE_STATIC);
	int step = sqlite3_step(st);
	sqlite3_reset(st);
	if (step != SQLITE_DONE) {
		rc = zc_store_fail(s, step, e, "writing the turn record");
		goto out;
	}
	sqlite3_int64 id = sqlite3_last_insert_rowid(s->db);
	if ((rc = dialogue_append(s, conv, id, op->now, json_object_get(args, "dialogue"), e)))
		goto out;
	st = zc_stmt(s, "UPDATE turn_state SET cursor = max(cursor, ?2) WHERE conversation = ?1", e);
	if (!st) {
		rc = e->code;
		goto out;
	}
	sqlite3_bind_text(st, 1, conv, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, json_integer_value(json_object_get(args, "upto")));
	step = sqlite3_step(st);
	sqlite3_reset(st);
	if (step != SQLITE_DONE) {
		rc = zc_store_fail(s, step, e, "moving the turn cursor");
		goto out;
	}
	if ((rc = lease_release(s, conv, zc_json_str(args, "owner"), e)))
		goto out;
	*out = json_pack("{s:I}", "id", (json_int_t)id);
out:
	zc_free(record);
	zc_free(err_text);
	return rc;
}

/* ---- what the world did with a reply ------------------------------------ */

/* The keys zc_turns_list shows from the turn's columns: a note never
 * shadows them. */
static int column_key(const char *k)
{
	static const char *const cols[] = {"id", "conversation", "startedAt", "endedAt", "status",
					   "reply", "error", NULL};
	for (const char *const *c = cols; *c; c++)
		if (strcmp(k, *c) == 0)
			return 1;
	return 0;
}

static int turn_note(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	struct zc_store *s = &op->m->store;
	long long id = json_integer_value(json_object_get(args, "turn"));
	json_t *note = json_object_get(args, "note"), *record = NULL;
	char *text = NULL;
	int rc = ZCOR_OK;
	sqlite3_stmt *st = zc_stmt(s, "SELECT record FROM turns WHERE id = ?1", e);
	if (!st)
		return e->code;
	sqlite3_bind_int64(st, 1, id);
	int step = sqlite3_step(st);
	if (step == SQLITE_ROW)
		record = zc_col_json(st, 0, '{');
	sqlite3_reset(st);
	if (step != SQLITE_ROW && step != SQLITE_DONE)
		return zc_store_fail(s, step, e, "reading the turn record");
	if (!record)
		return zc_fail(e, ZCOR_ENOTFOUND, "no turn %lld; zcor_turns lists the turn records", id);
	const char *k;
	json_t *v;
	json_object_foreach(note, k, v) {
		if (strcmp(k, "delivery") != 0 && (column_key(k) || json_object_get(record, k))) {
			rc = zc_fail(e, ZCOR_EINVAL,
				     "note key '%s': turn %lld's record has it already; a note adds new "
				     "keys (only \"delivery\" may be replaced)",
				     ZC_Q(k, 40), id);
			goto out;
		}
	}
	json_object_update(record, note);
	if (!(text = zc_json_dump(record))) {
		rc = zc_fail(e, ZCOR_EINTERNAL, "out of memory");
		goto out;
	}
	st = zc_stmt(s, "UPDATE turns SET record = ?2 WHERE id = ?1", e);
	if (!st) {
		rc = e->code;
		goto out;
	}
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_text(st, 2, text, -1, SQLITE_STATIC);
	step = sqlite3_step(st);
	sqlite3_reset(st);
	if (step != SQLITE_DONE) {
		rc = zc_store_fail(s, step, e, "writing the turn record");
		goto out;
	}
	*out = json_object();
out:
	zc_free(text);
	json_decref(record);
	return rc;
}

/* turn_begin commits without an fsync (docs/TURN.md, "Durability"): it
 * changes only the lease (and creates the conversation's turn_state row
 * with cursor 0); the cursor moves in turn_finish alone. Its loss in a
 * power cut loses a lease whose process died with it — the lease would
 * only have held others off until it expired. The WAL is appended in
 * order, so the next synced commit (a tool's write, the record) makes it
 * durable too, and other handles see it at once either way. */
const struct zc_opdef zc_op_turn_begin = {"turn_begin", NULL, turn_begin,
					  ZC_OP_NO_HISTORY | ZC_OP_NOSYNC};
const struct zc_opdef zc_op_turn_finish = {"turn_finish", NULL, turn_finish, ZC_OP_NO_HISTORY};
/* deferSync (docs/TURN.md, "Durability"): the QQ world sends the reply
 * first and then notes the delivery with a synced commit, which — the WAL
 * being written in order — makes this one durable with it. */
const struct zc_opdef zc_op_turn_finish_deferred = {"turn_finish", NULL, turn_finish,
						    ZC_OP_NO_HISTORY | ZC_OP_NOSYNC};
const struct zc_opdef zc_op_turn_release = {"turn_release", NULL, turn_release, ZC_OP_NO_HISTORY};

/* A world's bookkeeping on a record that is not a call: no history
 * record (the turn record is the trace). */
static const struct zc_opdef turn_note_def = {"turn_note", NULL, turn_note, ZC_OP_NO_HISTORY};
/* ZCOR_NOTE_NO_FSYNC: the caller's zcor_sync right after makes it durable */
static const struct zc_opdef turn_note_nosync_def = {"turn_note", NULL, turn_note,
						     ZC_OP_NO_HISTORY | ZC_OP_NOSYNC};

int zc_turn_note(struct zc_mem *m, long long turn_id, const char *note_json, int nosync,
		 struct zc_err *e)
{
	static const struct zcor_ctx host = {ZCOR_ACTOR_CLI, NULL};
	size_t len = note_json ? strlen(note_json) : 0;
	json_t *note = NULL, *args = NULL, *out = NULL;
	int rc;
	if (len > ZC_TURN_NOTE_MAX)
		return zc_fail(e, ZCOR_EINVAL,
			       "the note has %zu bytes, more than %d; record what the world did "
			       "(delivery status, message ids), not the reply itself",
			       len, ZC_TURN_NOTE_MAX);
	if ((rc = zc_json_parse(note_json ? note_json : "", len, "the note", &note, e)))
		return rc;
	if (!json_is_object(note)) {
		rc = zc_fail(e, ZCOR_EINVAL,
			     "the note must be a JSON object such as {\"delivery\": {\"status\": \"sent\"}}");
		goto out;
	}
	const char *k;
	json_t *v;
	json_object_foreach(note, k, v) {
		if (!*k || strlen(k) > ZC_TURN_NOTE_KEY_MAX) {
			rc = zc_fail(e, ZCOR_EINVAL, "note key '%s': a key has 1 to %d bytes", ZC_Q(k, 40),
				     ZC_TURN_NOTE_KEY_MAX);
			goto out;
		}
	}
	args = json_pack("{s:I, s:O}", "turn", (json_int_t)turn_id, "note", note);
	rc = zc_mem_run(m, &host, nosync ? &turn_note_nosync_def : &turn_note_def, args, &out, e);
out:
	json_decref(out);
	json_decref(args);
	json_decref(note);
	return rc;
}

/* ---- reads ------------------------------------------------------------ */

/* The rows of zc_dialogue_read, newest first, as they are read: their
 * texts one after the other in text, row i ending at end[i]. */
struct rows {
	struct zc_buf text;
	size_t *end, n, cap;
};

static void rows_add(struct rows *r, const char *s, size_t len)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 64;
		r->end = zc_realloc(r->end, r->cap * sizeof(*r->end));
	}
	zc_buf_add(&r->text, s, len);
	r->end[r->n++] = r->text.len;
}

/* The first `kept` rows, oldest first, joined by commas. */
static char *rows_join(const struct rows *r, size_t kept)
{
	struct zc_buf b = ZC_BUF_INIT;
	if (kept)
		zc_buf_grow(&b, r->end[kept - 1] + kept);
	for (size_t i = kept; i-- > 0;) {
		size_t from = i ? r->end[i - 1] : 0;
		if (i + 1 < kept)
			zc_buf_addc(&b, ',');
		zc_buf_add(&b, r->text.p + from, r->end[i] - from);
	}
	return zc_buf_detach(&b);
}

int zc_dialogue_read(struct zc_mem *m, const char *conversation, long max_chars, long max_ambient,
		     char **out, size_t *count, struct zc_err *e)
{
	struct zc_store *s = &m->store;
	struct rows r = {ZC_BUF_INIT, NULL, 0, 0};
	/* kept: rows of the whole turns that fit; the turn being read is
	 * rows kept..r.n */
	size_t kept = 0;
	long long chars = 0, ambient = 0, t_chars = 0, t_ambient = 0;
	sqlite3_int64 cur = -1;
	*out = NULL;
	*count = 0;
	int rc = zc_store_begin(s, 0, e);
	if (rc)
		goto out;
	/* json_valid: SQLite's own check, far cheaper than building the
	 * values; a row is spliced into the request only when it passes */
	sqlite3_stmt *st = zc_stmt(s,
				   "SELECT turn_id, message, chars, messages, "
				   "json_valid(message) AND substr(message, 1, 1) = '{' FROM dialogue "
				   "WHERE conversation = ?1 ORDER BY seq DESC",
				   e);
	if (!st) {
		rc = e->code;
		goto out;
	}
	sqlite3_bind_text(st, 1, conversation, -1, SQLITE_STATIC);
	int step = SQLITE_DONE, full = 0;
	while (!full && (step = sqlite3_step(st)) == SQLITE_ROW) {
		sqlite3_int64 id = sqlite3_column_int64(st, 0);
		if (id != cur && cur != -1) {
			/* a whole turn read: it goes in if it fits, else the reading ends */
			if (chars + t_chars > max_chars || ambient + t_ambient > max_ambient) {
				full = 1;
				break;
			}
			chars += t_chars, ambient += t_ambient;
			kept = r.n;
			t_chars = t_ambient = 0;
		}
		cur = id;
		if (!sqlite3_column_int(st, 4)) { /* not an object: its turn is not sent, nor older ones */
			full = 1;
			break;
		}
		rows_add(&r, (const char *)sqlite3_column_text(st, 1), (size_t)sqlite3_column_bytes(st, 1));
		t_chars += sqlite3_column_int64(st, 2);
		t_ambient += sqlite3_column_int64(st, 3);
		if (t_chars > max_chars || t_ambient > max_ambient) /* this turn alone is too big */
			full = 1;
	}
	sqlite3_reset(st);
	if (!full && step != SQLITE_DONE)
		rc = zc_store_fail(s, step, e, "reading the dialogue");
	else if (!full && cur != -1 && chars + t_chars <= max_chars && ambient + t_ambient <= max_ambient)
		kept = r.n;
out:
	zc_store_rollback(s);
	if (!rc) {
		*out = rows_join(&r, kept);
		*count = kept;
	}
	zc_buf_release(&r.text);
	zc_free(r.end);
	return rc;
}

static json_t *turn_from_row(sqlite3_stmt *st)
{
	json_t *o = json_object();
	json_object_set_new(o, "id", json_integer(sqlite3_column_int64(st, 0)));
	zc_json_set_str(o, "conversation", (const char *)sqlite3_column_text(st, 1));
	zc_col_time(o, "startedAt", st, 2);
	zc_col_time(o, "endedAt", st, 3);
	zc_json_set_str(o, "status", (const char *)sqlite3_column_text(st, 4));
	json_object_set_new(o, "reply", sqlite3_column_type(st, 5) == SQLITE_NULL
						 ? json_null()
						 : json_string((const char *)sqlite3_column_text(st, 5)));
	json_object_set_new(o, "error", zc_col_json(st, 6, 'n'));
	json_t *rest = zc_col_json(st, 7, '{');
	json_object_update_missing(o, rest);
	json_decref(rest);
	return o;
}

int zc_records_page(struct zc_mem *m, const char *count_sql, const char *rows_sql,
		    json_t *(*row)(sqlite3_stmt *st), const char *what, const char *conversation,
		    long long limit, long long offset, json_t **out, struct zc_err *e)
{
	struct zc_store *s = &m->store;
	json_t *items = json_array();
	long long total = 0;
	int rc = zc_store_begin(s, 0, e), step = SQLITE_DONE;
	sqlite3_stmt *st = NULL;
	if (rc)
		goto out;
	st = zc_stmt(s, count_sql, e);
	if (!st) {
		rc = e->code;
		goto out;
	}
	if (conversation)
		sqlite3_bind_text(st, 1, conversation, -1, SQLITE_STATIC);
	total = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_reset(st);
	st = zc_stmt(s, rows_sql, e);
	if (!st) {
		rc = e->code;
		goto out;
	}
	if (conversation)
		sqlite3_bind_text(st, 1, conversation, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, limit);
	sqlite3_bind_int64(st, 3, offset);
	while ((step = sqlite3_step(st)) == SQLITE_ROW)
		json_array_append_new(items, row(st));
	sqlite3_reset(st);
	if (step != SQLITE_DONE)
		rc = zc_store_fail(s, step, e, what);
out:
	zc_store_rollback(s);
	if (!rc)
		*out = zc_page_result(items, total, offset);
	json_decref(items);
	return rc;
}

int zc_turns_list(struct zc_mem *m, const char *conversation, long long limit, long long offset,
		  json_t **out, struct zc_err *e)
{
	return zc_records_page(
		m, "SELECT count(*) FROM turns WHERE ?1 IS NULL OR conversation = ?1",
		"SELECT id, conversation, started_at, ended_at, status, reply, error, record "
		"FROM turns WHERE ?1 IS NULL OR conversation = ?1 ORDER BY id DESC LIMIT ?2 OFFSET ?3",
		turn_from_row, "listing turn records", conversation, limit, offset, out, e);
}
