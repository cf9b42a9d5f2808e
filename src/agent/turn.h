/*
 * turn.h — the turn (SPEC §9, issue 14; docs/TURN.md): one batch of a
 * conversation's logged messages (or an internal event) → recall header
 * → system prefix + dialogue + external_event_frame → the model's tool
 * loop within limits → the checked reply → the dialogue and a turn
 * record. Every world runs its conversations through this one function.
 *
 * Agent layer, above llm/ and tools/, below api/. It logs nothing itself
 * (the world logs with zcor_log_messages first), holds no store lock or
 * transaction while the model answers, and runs a model's tool calls only
 * through the tool registry, as actor model in the conversation's scope.
 */
#ifndef ZC_AGENT_TURN_H
#define ZC_AGENT_TURN_H

#include <jansson.h>

#include "agent/session.h"
#include "base/err.h"
#include "memory/memory.h"
#include "recall/recall.h"
#include "zcor.h"

/* A second turn of the same conversation looks for the lease this often. */
#define ZC_TURN_POLL_MS 25
/* The lease outlives the longest turn by this much: a process that died
 * mid-turn holds its conversation no longer than that. */
#define ZC_TURN_LEASE_SLACK_MS 60000
#define ZC_TURN_EVENT_MAX 4000 /* characters of an internal event */

/*
 * Runs one turn of `conversation` (a valid key). skills (borrowed): the
 * handle's skills (tools/skills.h), listed in the `skill` tool's
 * description and read by it. opts (borrowed, may be
 * NULL): {"event"?: text of an internal event (no recall), "check"?: true
 * only says whether a turn could run (ZCOR_ENOPROVIDER or ZCOR_OK with
 * {"ready": true}); nothing else is accepted (ZCOR_EINVAL naming the key)}.
 * ev (may be NULL) is told the streamed text and each tool call's start
 * and end, from the calling thread.
 *
 * *out on ZCOR_OK: {turn (the record's id, null when there was nothing to
 * do: "idle": true), conversation, reply (the text to send, null when
 * none), batch: [message ids], recalled: [ids], toolCalls: [{id, name,
 * arguments, status, ms, error?}], limit (null | "steps" | "deadline" |
 * "repeat"), modelMs, tokens}. ZCOR_ENOPROVIDER (nothing changed): no
 * provider in config.json, the message says how to set one. ZCOR_EBUSY:
 * another turn of the conversation ran longer than turn.waitMs (nothing
 * changed). ZCOR_EPROVIDER: the model failed; the turn is recorded, the
 * cursor moved past the batch, and the error's details are {"turn": id,
 * "apology"?: the configured text for the world to send}.
 */
struct zc_skills;
int zc_turn(struct zc_mem *m, struct zc_recall *rs, struct zc_skills *skills,
	    const char *conversation, const json_t *opts, const struct zcor_turn_events *ev,
	    json_t **out, struct zc_err *e);

/* ---- pieces, exposed for unit tests -------------------------------- */

/*
 * The frame of a batch: the synthetic assistant call and its tool result
 * holding {"recall"?: header, "event"?: text, "messages": [...]} as JSON
 * text. header NULL or "": none (the stored copy is made with NULL).
 * Appends both messages to arr.
 */
void zc_turn_frame(json_t *arr, const char *call_id, const json_t *messages, const char *event,
		   const char *header);

/*
 * The recall request of a batch (turn_begin's messages): the text,
 * speakers and mentions of its messages, except those their sender
 * withdrew ("recalledAt"), which are delivered but never the query. NULL
 * when no message is left (no recall). The caller decrefs.
 */
json_t *zc_turn_recall_request(const char *conv, const json_t *batch);

#endif
