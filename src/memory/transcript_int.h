/*
 * transcript_int.h — what the three files behind transcript.h share: the
 * message log (transcript.c), the conversations (conversations.c) and the
 * log files (logfile.c). Not an interface for anything else in memory/:
 * the others use transcript.h.
 */
#ifndef ZC_TRANSCRIPT_INT_H
#define ZC_TRANSCRIPT_INT_H

#include <jansson.h>
#include <stdint.h>

#include "memory/transcript.h"

/* The columns zc_log_msg_from_row reads, in its order. */
#define ZC_LOG_MSG_COLS \
	"message_id, at, sender_id, sender_name, text, mentions, reply_to, media, conversation, " \
	"recalled_at"

/* A message row (ZC_LOG_MSG_COLS) in the output shape (new reference):
 * with "recalledAt" (ISO) only when its sender withdrew it. */
json_t *zc_log_msg_from_row(sqlite3_stmt *st);
/* An id given as a string or an integer, as text (caller frees), or NULL
 * when v is neither or the text is empty or longer than max bytes. */
char *zc_log_id_text(const json_t *v, size_t max);
/* Whether a message is the bot's own (its self flag, or config "botId"). */
int zc_log_is_self(struct zc_mem *m, const char *sender, int self_flag);
/* Inserts one message unless its id is already logged (*inserted 0);
 * msg's "recalledAt" (ISO, optional: an imported log line) is kept.
 * imported: a line of `zcor transcript import` (old history: never in a
 * turn's batch nor a digest's input). */
int zc_log_insert_message(struct zc_store *s, const char *conv, const json_t *msg, int64_t at,
			  int imported, int *inserted, struct zc_err *e);
/*
 * The full-text rows of a logging transaction's messages, written once at
 * its end (schema 18: no trigger): zc_log_top before the first insert,
 * zc_log_index(s, top) after the last — every message above top is this
 * transaction's (it holds the write lock). Once messages_fts is written in
 * a transaction, each later statement that opens a statement journal (an
 * upsert into messages does) makes FTS5 flush its pending terms at the
 * statement's savepoint; indexing at the end keeps that to one flush.
 */
int zc_log_top(struct zc_store *s, int64_t *top, struct zc_err *e);
int zc_log_index(struct zc_store *s, int64_t top, struct zc_err *e);
/* Creates the conversation row if needed and adds n messages (lines =
 * whether they count as new lines for the digest) up to time last. */
int zc_log_conv_add(struct zc_mem *m, const char *key, long long n, int lines, int64_t last,
		    struct zc_err *e);
/* ZCOR_EINVAL naming field unless key is a conversation key. */
int zc_log_check_key(const char *key, const char *field, struct zc_err *e);

/* The conversations visible to only (its key, NULL for the host), newest
 * activity first, appended to items; *total counts them all. */
int zc_conv_rows(struct zc_store *s, const char *only, long long limit, long long offset,
		 json_t *items, long long *total, struct zc_err *e);
/* One conversation (new reference); ZCOR_ENOTFOUND when it has no log. */
int zc_conv_load(struct zc_store *s, const char *key, json_t **conv, struct zc_err *e);

#endif
