/*
 * dialogue.h — what the turn (agent/) keeps in the store (docs/TURN.md):
 * a conversation's dialogue (the bot's replies and tool exchanges and the
 * external_event_frame of each batch as delivered; never the recall
 * header), the turn records, and per conversation the turn cursor (the
 * last logged message a turn has taken) with the lease that keeps one
 * turn at a time, across processes too.
 *
 * Memory layer. The writes are operations of the runner (op.c) without a
 * history record (ZC_OP_NO_HISTORY): a turn's own trace is its turn
 * record, and each tool call the model made inside it has its history
 * record already (actor model). The reads are bounded.
 */
#ifndef ZC_DIALOGUE_H
#define ZC_DIALOGUE_H

#include <jansson.h>

#include "memory/lease.h"
#include "memory/memory.h"

#define ZC_TURN_BATCH_MAX 100 /* external messages in one batch (recall's limit) */
#define ZC_TURN_OWNER_MAX ZC_LEASE_OWNER_MAX /* a lease owner's name (memory/lease.h) */

/*
 * Run with zc_mem_run (args borrowed; ZC_OP_NO_HISTORY).
 *
 * zc_op_turn_begin  {conversation, owner, leaseMs}: takes the turn lease
 *   of the conversation (ZCOR_EBUSY while another owner's lease runs; an
 *   expired lease is taken over) and reads the batch: the messages logged
 *   in it after its cursor, the newest ZC_TURN_BATCH_MAX of them, oldest
 *   first. *out: {cursor, upto (the seq the cursor moves to when the turn
 *   ends), pending (how many were after the cursor), messages: [{id, seq,
 *   time, senderId, senderName, text, mentions, replyTo, media,
 *   recalledAt (only for a message its sender withdrew)}]}.
 * zc_op_turn_finish {conversation, owner, upto, startedAt, endedAt (ms),
 *   status "ok"|"error", reply (string|null), error ({code, message}|null),
 *   record (object: the rest of the turn record), dialogue (array of
 *   OpenAI messages, each {role, …}, plus "_messages": external messages
 *   a frame holds, removed before storing)}: in one transaction writes the
 *   turn record, appends the dialogue, moves the cursor to upto (never
 *   back) and releases the lease. *out: {id}.
 * zc_op_turn_finish_deferred: the same, committed without its fsync (the
 *   turn option deferSync: the caller's next durable commit, the
 *   delivery's zcor_turn_note, makes it durable; docs/TURN.md).
 * zc_op_turn_release {conversation, owner}: releases the lease only (a
 *   turn that could not finish).
 */
extern const struct zc_opdef zc_op_turn_begin, zc_op_turn_finish, zc_op_turn_finish_deferred,
	zc_op_turn_release;

/*
 * zcor_turn_note: merges the keys of note_json (a JSON object of at most
 * ZC_TURN_NOTE_MAX bytes, keys of 1 to ZC_TURN_NOTE_KEY_MAX bytes) into
 * turn turn_id's record, in one transaction, without a history record.
 * ZCOR_ENOTFOUND for no such turn; ZCOR_EINVAL (nothing changed) for a
 * note that is not such an object, or a key the record (or the columns
 * zc_turns_list shows: id, conversation, startedAt, endedAt, status,
 * reply, error) has already, except "delivery", which is replaced.
 * nosync: committed without waiting for its fsync (ZCOR_NOTE_NO_FSYNC).
 */
#define ZC_TURN_NOTE_MAX 16384
#define ZC_TURN_NOTE_KEY_MAX 64
int zc_turn_note(struct zc_mem *m, long long turn_id, const char *note_json, int nosync,
		 struct zc_err *e);

/*
 * The stored dialogue of conversation, oldest first: whole turns, the
 * newest first, for as long as they fit both max_chars characters (the
 * messages' JSON text) and max_ambient external messages in their
 * frames; a turn is never cut in half, so a tool call always comes with
 * its result. *out (a new string the caller frees with zc_free) is the
 * messages' JSON text as stored — compact objects {role, …} joined by
 * commas, "" for none — ready to splice into a request's "messages"
 * array without parsing it (zc_chat_req.messages_text); *count is how
 * many messages it holds. A row that is not a JSON object (the store
 * edited by hand) ends the reading like a turn that does not fit: the
 * text is always valid JSON. A read, no history.
 */
int zc_dialogue_read(struct zc_mem *m, const char *conversation, long max_chars, long max_ambient,
		     char **out, size_t *count, struct zc_err *e);

/*
 * Turn records, newest first: conversation NULL for every conversation.
 * *out: {items: [{id, conversation, startedAt, endedAt, status, reply,
 * error, …the record}], total, nextOffset}. limit 1..100, offset ≥ 0.
 */
/* A page of records newest first (turns, digests): count_sql and rows_sql
 * take ?1 the conversation (NULL: all), rows_sql ?2 limit and ?3 offset;
 * row makes one item. *out as zc_page_result; what names a failure. */
int zc_records_page(struct zc_mem *m, const char *count_sql, const char *rows_sql,
		    json_t *(*row)(sqlite3_stmt *st), const char *what, const char *conversation,
		    long long limit, long long offset, json_t **out, struct zc_err *e);
int zc_turns_list(struct zc_mem *m, const char *conversation, long long limit, long long offset,
		  json_t **out, struct zc_err *e);

#endif
