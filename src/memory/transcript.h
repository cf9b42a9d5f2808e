/*
 * transcript.h — the message log (Q-LOG), the conversations' digest
 * bookkeeping (what seed 003's digest.json held) and the seed-003 log
 * files (conversations/<slug>/log/YYYY-MM-DD.jsonl).
 *
 * Memory layer. Logging a batch is not a tool call: it writes no history
 * record (history would flood), but it is one transaction, durable before
 * it returns. Admission rules (config.json "admission", "botId") are
 * applied here, before anything is logged: memory is no back door around
 * them. Media go to the cache of media.h. Formats and limits:
 * docs/FORMATS.md.
 */
#ifndef ZC_TRANSCRIPT_H
#define ZC_TRANSCRIPT_H

#include <jansson.h>

#include "memory/memory.h"

#define ZC_BATCH_MAX 100              /* messages per logged batch */
#define ZC_MSG_TEXT_MAX 20000         /* characters of one message's text */
#define ZC_MSG_ID_MAX 128             /* bytes of a message id */
#define ZC_SENDER_MAX 64              /* bytes of a sender id (senderId) */
#define ZC_MSG_MENTIONS_MAX 50
#define ZC_MSG_MEDIA_MAX 10           /* media references per message */
#define ZC_TRANSCRIPT_SCAN_MAX 20000  /* messages a search without an index hint reads */
#define ZC_LOG_FILE_MAX (256L << 20)  /* one imported .jsonl file */
#define ZC_IMPORT_ERRORS_MAX 100      /* unparsable lines listed in a report */

/*
 * Logs one batch for `conversation` (checked by zcor_check_conversation).
 * batch: {"messages": [{id, time?, senderId, senderName?, text?, mentions?,
 * replyTo?, media?, self?}…]} (1..ZC_BATCH_MAX). Everything is checked
 * first; a bad field is ZCOR_EINVAL naming it ("messages[2].senderId") and
 * nothing is changed. Rejected messages (admission, the bot's own,
 * duplicates) are skipped with a reason code. On success *out is
 * {conversation, logged, skipped: [{messageId, reason}], admitted: [the
 * admitted messages, logged or duplicate, in the output shape]} (new
 * reference; the caller builds the recall query from "admitted"). ctx:
 * a caller bound to a conversation (ctx->conversation) cannot name a
 * server file as media nor refer to an image its conversation has not
 * seen (media.h); the host plane can.
 */
int zc_transcript_log(struct zc_mem *m, const struct zcor_ctx *ctx, const char *conversation,
		      const json_t *batch, json_t **out, struct zc_err *e);

/*
 * A message of `conversation` was withdrawn by its sender at at_ms (0:
 * now; a negative time is ZCOR_EINVAL): it stays in the log, flagged
 * (recalled_at); readers show "recalledAt". Idempotent: the first time
 * is kept. ZCOR_ENOTFOUND when that message was never logged there;
 * ZCOR_EFORBIDDEN for a ctx bound to another conversation; ZCOR_EINVAL
 * for a bad key or message id (naming it). No history record. *out:
 * {conversation, messageId, recalledAt}.
 */
int zc_transcript_recalled(struct zc_mem *m, const struct zcor_ctx *ctx, const char *conversation,
			   const char *message_id, long long at_ms, json_t **out, struct zc_err *e);

/*
 * Several conversations' batches ({"conversation", "messages"} each, as
 * zc_transcript_log takes one) in one transaction, so a world logging a
 * burst across many groups pays one commit: each batch in a savepoint, so
 * a batch refused for what it holds (ZCOR_EINVAL: a media reference the
 * conversation may not use) is rolled back alone and reported as its
 * result's "error"; the disk failing fails the call and logs nothing.
 * A malformed batch fails the call before anything runs, naming it.
 * *out: {"results": [{"conversation", "logged", "skipped"} | {"conversation",
 * "error": {code, message}}…]} in the batches' order.
 */
#define ZC_LOG_BATCHES_MAX 256
#define ZC_LOG_MANY_MESSAGES_MAX 4096
int zc_transcript_log_many(struct zc_mem *m, const struct zcor_ctx *ctx, const json_t *batches,
			   json_t **out, struct zc_err *e);
/* The same for C values (zcor_log_batches_c, zcor.h): each message made
 * into the object zc_transcript_log checks (the same rules and messages),
 * the results into the batches' out fields. nosync: the commit does not
 * wait for the disk (the caller's zc_store_flush does). */
int zc_transcript_log_many_c(struct zc_mem *m, const struct zcor_ctx *ctx,
			     struct zcor_log_batch *batches, size_t n, int nosync, struct zc_err *e);

/* Whether admission (admission.privateChats, .groups, .privates) lets
 * messages of conversation in: {"conversation", "admitted", "reason"
 * (the skip reason zc_transcript_log would give) | null}. The one rule
 * zc_transcript_log applies, for an event that is not logged (a poke). */
int zc_transcript_admission(struct zc_mem *m, const char *conversation, json_t **out,
			    struct zc_err *e);

/* Sets (title non-empty) or clears (NULL or "") the display title of
 * conversation `key`, creating its row if needed: at most
 * ZC_CONV_TITLE_MAX characters of valid UTF-8 without control
 * characters, else ZCOR_EINVAL naming "title". No history record. */
#define ZC_CONV_TITLE_MAX 100
int zc_conversation_set_title(struct zc_mem *m, const char *key, const char *title,
			      struct zc_err *e);

/* Host reads, no history: {"items": [conversation…]} visible to ctx (a
 * bound ctx sees only its own), newest activity first; one conversation
 * as {"conversation": {…}} (ZCOR_ENOTFOUND when absent or not ctx's). */
int zc_conversations_list(struct zc_mem *m, const struct zcor_ctx *ctx, json_t **out,
			  struct zc_err *e);
int zc_conversation_get(struct zc_mem *m, const struct zcor_ctx *ctx, const char *key,
			json_t **out, struct zc_err *e);

/* The digest of `key` is done now: last_digest_at = now, last_digest_date
 * = today's local date, lines_since_digest = 0. *out is the conversation.
 * ZCOR_ENOTFOUND for a conversation with no log. */
int zc_transcript_digest_done(struct zc_mem *m, const char *key, json_t **out, struct zc_err *e);

/*
 * Writes the log of `conversation` (NULL: every conversation) under
 * root_dir in the seed-003 layout, conversations/<slug>/log/YYYY-MM-DD.jsonl
 * (local date of each message), one JSON object per line; each file is
 * written atomically (temp + rename) and replaces an older one. *report:
 * {conversations, files, messages}.
 */
int zc_transcript_export(struct zc_mem *m, const char *conversation, const char *root_dir,
			 json_t **report, struct zc_err *e);
/* The same for the messages at from <= at < to (ms); for whole files give
 * local day boundaries (mirror/ rewrites the days a batch touched). */
int zc_transcript_export_range(struct zc_mem *m, const char *conversation, int64_t from, int64_t to,
			       const char *root_dir, json_t **report, struct zc_err *e);

/*
 * Imports one seed-003 log file into `conversation`'s log, tolerantly:
 * alias keys are accepted (docs/FORMATS.md), a line that does not parse
 * is reported with its number and never silently dropped, a message id
 * already logged is skipped (importing twice changes nothing), the bot's
 * own lines are skipped. Lines without an id get one derived from their
 * bytes. One transaction (or the caller's, when one is open). *report: {file, conversation, lines, logged,
 * duplicates, self, errorCount, errors: [{line, error}]}.
 */
int zc_transcript_import_file(struct zc_mem *m, const char *conversation, const char *path,
			      json_t **report, struct zc_err *e);
/* The same for the bytes of a log file the caller has read (data is
 * NUL-terminated at len; `zcor import qq-memory` reads its files without
 * following links); name is the file as the report calls it. */
int zc_transcript_import_data(struct zc_mem *m, const char *conversation, const char *name,
			      const char *data, size_t len, json_t **report, struct zc_err *e);

/* Inside the caller's transaction: the digest progress of `key` as
 * digest.json held it (at: ms or -1, date: local YYYY-MM-DD or NULL);
 * creates the conversation row if needed. */
int zc_conversation_set_digest(struct zc_mem *m, const char *key, int64_t at, const char *date,
			       struct zc_err *e);

/* Rebuilds messages_fts from messages (inside the caller's transaction);
 * *count is the number of messages. */
int zc_transcript_reindex(struct zc_store *s, long long *count, struct zc_err *e);

/* qq_transcript {action: list | read | search, …} (tools/ adds the schema). */
extern const struct zc_opdef zc_op_qq_transcript;

#endif
