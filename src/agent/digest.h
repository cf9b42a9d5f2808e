/*
 * digest.h — the digest run (SPEC §5 Q-DIGEST, issue 16; docs/DIGEST.md):
 * one conversation's transcript since its last digest → an independent
 * agent session (no persona, no dialogue, attached to no chat, its answer
 * sent nowhere) that follows the `message-digest` skill and writes memory
 * through the digest audience's tools, as actor digest in the digested
 * conversation's scope and write gate → the run's record; success marks
 * the digest done.
 *
 * Agent layer, beside the turn (it shares agent/session.h's tool loop).
 * It never prints; the schedule (the server) logs.
 */
#ifndef ZC_AGENT_DIGEST_H
#define ZC_AGENT_DIGEST_H

#include <jansson.h>
#include <stdint.h>

#include "base/err.h"
#include "memory/memory.h"

struct zc_skills;

/*
 * Runs one digest of conversation (a valid key) whatever its line count
 * (the caller decides due-ness: memory/digest.h's zc_digest_due); a
 * conversation with no new line is not run (*out {digest: null, idle:
 * true, conversation, lines: 0}). trigger (NULL: "manual") is kept in the
 * record: "manual", "schedule" or "catch-up".
 *
 * *out on ZCOR_OK: {digest (the record's id), conversation, status "ok",
 * lines, sentLines, chars, cut, toolCalls: [{id, name, arguments, status,
 * ms, error?}], tokens, modelMs, answer}. ZCOR_ENOPROVIDER: no provider;
 * ZCOR_ECONFLICT: config.json's memory is false, or a digest of the
 * conversation runs (this process or another: memory/digest.h's lease,
 * details reason "digest_running"); ZCOR_ENOTFOUND: no log (nothing
 * recorded for these). A run that failed or timed out is recorded (its
 * lines stay for the next run) and returns its error (ZCOR_EPROVIDER for
 * a timeout) with details {"digest": id, "status": "error"|"timeout"}.
 * cancel (may be NULL): while *cancel is nonzero (another thread's
 * zcor_interrupt) the run stops at once — its provider request
 * abandoned, no further tool call — and is recorded as an error
 * ("interrupted"), its lines kept; a run it stops before the start is
 * refused (ZCOR_ECONFLICT, nothing recorded).
 * if_due: run only if the conversation is still due once the lease is
 * held (not digested today, digestMinLines new lines); otherwise *out
 * {"digest": null, "idle": true, "notDue": true}, nothing recorded. The
 * schedule's and catch-up's runs and `--now` over the due list use it,
 * so two processes one after the other never digest it twice a day.
 */
int zc_digest_run(struct zc_mem *m, struct zc_skills *skills, const char *conversation,
		  const char *trigger, int if_due, const int *cancel, json_t **out,
		  struct zc_err *e);

/* The next daily wake strictly after now_ms: the first instant whose
 * local time (the process's time zone) is hour:00:00 (ms). */
int64_t zc_digest_next_wake(int64_t now_ms, int hour);

/* The system prompt and the user content of a run (exposed for tests);
 * the caller frees both. input: zc_digest_input's *out. */
void zc_digest_prompt(struct zc_skills *skills, const char *conversation, const json_t *input,
		      char **system, char **user);

#endif
