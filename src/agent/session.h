/*
 * session.h — an agent session: the model's tool loop within limits,
 * shared by the turn (agent/turn.c: a conversation's bot) and the digest
 * run (agent/digest.c: the daily digest agent). The caller fills the
 * messages to send and the limits; the session offers the registry's
 * tools for its audience, talks to the provider, runs each call through
 * the registry as its actor in its conversation's scope (refusing what
 * was not declared, repeated calls, calls past a limit), and keeps the
 * records of the calls, the tokens and the answer.
 *
 * Agent layer. It never prints, never opens a transaction of its own (a
 * tool call is its own transaction) and writes no record: the turn and
 * the digest run each record their session their own way.
 */
#ifndef ZC_AGENT_SESSION_H
#define ZC_AGENT_SESSION_H

#include <jansson.h>

#include "base/err.h"
#include "memory/memory.h"
#include "tools/tools.h"
#include "zcor.h"

struct zc_skills;

/* The frame's name: a tool call the system synthesises, never the model. */
#define ZC_FRAME_NAME "external_event_frame"
/* The guard: a call (name + arguments) made this many times in one turn
 * is not run again, and the tools are withdrawn. */
#define ZC_TURN_REPEAT_MAX 3
/* The time of the one answer asked for after a limit: this share of
 * turn.deadlineMs, at least ZC_TURN_FINAL_MIN_MS, at most the provider's
 * own timeoutMs. */
#define ZC_TURN_FINAL_SHARE 4
#define ZC_TURN_FINAL_MIN_MS 1000
/*
 * What a running tool call may still wait on the network: the rest of
 * turn.toolTimeoutMs since it started, and never past the session's
 * deadline (a turn's, or a digest run's hard digestTimeoutMs). *why
 * (static text) names the limit that is the nearer one.
 */
struct zc_session;
double zc_session_call_left_ms(const struct zc_session *s, const char **why);

/*
 * Why a tool call of the model is not run, or NULL when it may run:
 * the frame, a name not in declared (an array of names), arguments that
 * are not a JSON object. buf receives the message sent back as the tool
 * error.
 */
const char *zc_turn_refusal(const char *name, int args_object, const char *arguments,
			    const json_t *declared, char *buf, size_t cap);


struct zc_session {
	/* set by the caller before zc_session_start */
	struct zc_mem *m;
	struct zc_skills *skills;      /* the handle's (tools/skills.h) */
	const char *conv;              /* the conversation whose scope the calls act in */
	const struct zcor_turn_events *ev; /* may be NULL */
	enum zcor_actor actor;         /* ZCOR_ACTOR_MODEL (a turn) or _DIGEST */
	unsigned audience;             /* the registry's ZC_AUD_* bit of the tools offered */
	int check_reply;               /* the answer is a reply to send: check its images */
	int hard;                      /* the deadline abandons the session (the digest run)
	                                * instead of asking for an answer without tools */
	struct zc_config cfg;          /* the settings at the start */
	const int *cancel;             /* nonzero *cancel: stop now (zcor_interrupt); may be NULL */
	double t0, deadline;           /* monotonic ms */
	/* the session's state */
	json_t *messages;              /* what the next request sends, but for… */
	char *earlier;                 /* …a stored dialogue and the turn's frame, as JSON
					* text (spliced after the system message:
					* zc_chat_req.messages_text), or NULL */
	size_t n_earlier;              /* how many messages earlier holds */
	json_t *dialogue;              /* what the session adds to a stored dialogue */
	json_t *tools, *declared;      /* this request's tools and their names (shared: read only) */
	json_t *tools_text;            /* tools as JSON text, a JSON string (shared) */
	json_t *calls;                 /* the record's toolCalls: [{id, name, arguments, status, ms, error?}] */
	json_t *seen;                  /* name + arguments of every call, for the guard */
	const char *limit;             /* NULL, "steps", "deadline", "repeat", "toolTime" */
	int requests;
	long long model_ms, tok_prompt, tok_completion, tok_total;
	int tokens_reported;
	struct zcor_provider search;   /* the provider a tool (search) gets */
	struct zc_http_get http;       /* the GET a plain function (wiki_lookup) gets: its own
					* timeout cut to what the call has left (call_left_ms) */
	double call_t0;                /* monotonic ms the running tool call started */
	int call_cut;                  /* the running call's network wait was cut: 1 at the time
					* per tool call, 2 at the session's deadline; 0 not */
	char *reply;                   /* the answer (a turn: the checked reply) */
	json_t *reply_problems;
	struct zc_err fail;            /* the session's own failure */
	int failed;
	int timed_out;                 /* hard: the deadline cut it */
};

/* Makes the arrays and the search provider of s (fields set as above). */
void zc_session_start(struct zc_session *s);
/* The tools offered: the registry's list for s->audience under s->cfg. */
void zc_session_tools(struct zc_session *s);
/* The tool loop, from s->messages, until an answer (s->reply) or the
 * session's failure (s->failed, s->fail; s->timed_out when hard and the
 * deadline cut it). */
void zc_session_loop(struct zc_session *s);
/* The tokens as a record shows them ({prompt, completion, total} or null;
 * new reference). */
json_t *zc_session_tokens(const struct zc_session *s);
/* Releases what s holds (not s itself). */
void zc_session_release(struct zc_session *s);

#endif
