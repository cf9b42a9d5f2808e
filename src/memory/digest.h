/*
 * digest.h — the digest agent's bookkeeping in the store (Q-DIGEST,
 * docs/DIGEST.md): what a run is given (the transcript since the last
 * digest, cut to a character budget, newest kept), whether a
 * conversation is due, and the run records (schema 14's `digests`).
 * Memory layer: the rules of "due" and of "done" live here once; the run
 * itself (agent/digest.c) and the schedule only ask.
 */
#ifndef ZC_MEMORY_DIGEST_H
#define ZC_MEMORY_DIGEST_H

#include <jansson.h>

#include "memory/memory.h"

#define ZC_DIGEST_LINE_MAX 2000 /* characters of one message's line in the input */

/*
 * The input of a digest run of conversation (a read, no history): the
 * newest linesSinceDigest messages of its log, each as one line
 * "[YYYY-MM-DD HH:MM] name (senderId): text", oldest first, as many of
 * the newest as fit max_chars characters (newlines included). *out:
 * {conversation: {…the conversation's row}, lines (linesSinceDigest),
 * sentLines, chars, cut (bool: older lines were left out), text}.
 * ZCOR_ENOTFOUND when the conversation has no log.
 */
int zc_digest_input(struct zc_mem *m, const char *conversation, long max_chars, json_t **out,
		    struct zc_err *e);

/* Whether a conversation's row (zc_conversations_list's item) is due on
 * local date today (YYYY-MM-DD): not digested on that date and at least
 * min_lines new lines. */
int zc_digest_due(const json_t *conv, const char *today, long min_lines);
/* The same rule read from the store now (*due 1 or 0): a run that was
 * due when a round or `--now` listed it asks again once it holds the
 * lease, since another process may have digested it in between. */
int zc_digest_still_due(struct zc_mem *m, const char *conversation, const char *today,
			long min_lines, int *due, struct zc_err *e);

/*
 * Run with zc_mem_run (ZC_OP_NO_HISTORY: the run's tool calls have their
 * own history):
 * zc_op_digest_begin {conversation, owner, leaseMs}: takes the
 *   conversation's digest lease (memory/lease.h) for leaseMs. While
 *   another owner's lease runs — a run in this process or another —
 *   ZCOR_ECONFLICT naming the conversation, the process holding it and
 *   the lease's end, details {reason "digest_running", conversation,
 *   holder, pid, until}; a lease past its end (its process died) is
 *   taken over. *out: {}.
 * zc_op_digest_release {conversation, owner}: gives the lease back (a
 *   run that ends without a record).
 * zc_op_digest_finish {conversation, owner?, startedAt, endedAt, status
 *   "ok"|"error"|"timeout", lines, sentLines, chars, cut, error ({code,
 *   message}|null), record (object)}: writes the run's record and gives
 *   owner's lease back; with status "ok" also marks the digest done in
 *   the same transaction: last digest time now, date the local date of
 *   startedAt (a run crossing midnight is the digest of the day it
 *   started), and the lines since the digest less the `lines` it started
 *   with (lines logged during the run stay for the next one). *out: {id,
 *   conversation: {…the row after}}.
 */
extern const struct zc_opdef zc_op_digest_begin, zc_op_digest_release, zc_op_digest_finish;

/*
 * Digest records, newest first; conversation NULL for all. *out: {items:
 * [{id, conversation, startedAt, endedAt, status, lines, sentLines,
 * chars, cut, error, …the record}], total, nextOffset}. limit 1..100.
 */
int zc_digests_list(struct zc_mem *m, const char *conversation, long long limit, long long offset,
		    json_t **out, struct zc_err *e);

#endif
