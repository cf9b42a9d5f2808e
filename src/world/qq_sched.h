/*
 * qq_sched.h — when the QQ world runs a conversation's turn (docs/QQ.md,
 * "When the bot answers"): the quiet window and the maximum wait after a
 * waking message, replies per minute, proactive replies (probability,
 * cooldown, quiet hours in local time) and the bot's own sent message ids
 * a reply to which wakes it. Pure: the caller passes the clock, the local
 * minute of the day and its random number; no threads, no I/O. World
 * layer, below qq.c; unit-tested (tests/unit/test_qq_sched.c).
 */
#ifndef ZC_WORLD_QQ_SCHED_H
#define ZC_WORLD_QQ_SCHED_H

#include <stddef.h>
#include <stdint.h>

#define ZC_QQ_RATE_MAX 600 /* worlds.qq.repliesPerMinute's cap */
#define ZC_QQ_SENT_MAX 512 /* the bot's sent message ids kept per conversation */

struct zc_qq_sched_opts {
	long quiet_ms;           /* worlds.qq.quietMs */
	long max_wait_ms;        /* worlds.qq.maxWaitMs */
	int replies_per_minute;  /* worlds.qq.repliesPerMinute (1..ZC_QQ_RATE_MAX) */
	double probability;      /* worlds.qq.proactive.probability */
	long long cooldown_ms;   /* worlds.qq.proactive.cooldownS, in ms */
	int quiet_from, quiet_to; /* quiet hours in minutes of the local day; -1: none */
};

/* One conversation's timers and counters. Zeroed is a new one. */
struct zc_qq_sched {
	long long first_wake_ms; /* the first waking message since the last turn; 0: none */
	long long last_msg_ms;   /* the last message logged since the last turn */
	int woken;               /* a turn is wanted (a wake, or a proactive pick) */
	int proactive;           /* ... only by a proactive pick */
	char quote_id[24];       /* the message that woke it first ("" for a poke) */
	char last_wake_id[24];   /* the message that woke it last ("" for a poke) */
	long long starts[ZC_QQ_RATE_MAX]; /* ring of the last turns' start times */
	int nstarts, head;
	long long last_turn_ms;  /* the last turn's start; 0: never */
};

/* "HH:MM-HH:MM" → minutes of the day; "" or NULL → -1, -1. 0, or -1 when
 * malformed (config.c has refused those already). */
int zc_qq_quiet_parse(const char *s, int *from, int *to);
/* Is minute (0..1439) inside [from, to) (crossing midnight when from > to)? */
int zc_qq_quiet_in(int from, int to, int minute);

/*
 * A message (or a poke) was logged at now_ms. wakes: it wakes the bot (an
 * @, a reply to the bot, a name, a private chat, a poke at it); id: the
 * message's id to quote (NULL for none). Keeps the quiet window's clock
 * and the first wake.
 */
void zc_qq_sched_logged(struct zc_qq_sched *s, long long now_ms, int wakes, const char *id);

/*
 * Should a message that does not wake the bot make it reply anyway? Only
 * when probability > 0, rnd (uniform in [0, 1)) is below it, the message
 * is not a lone sticker or face, no turn started within the cooldown, and
 * the local minute is outside the quiet hours. On yes, the caller calls
 * zc_qq_sched_logged with wakes = 1 (then s->proactive is set).
 */
int zc_qq_sched_proactive(const struct zc_qq_sched *s, const struct zc_qq_sched_opts *o,
			  long long now_ms, int local_minute, int lone_sticker, double rnd);

/* When the wanted turn is due (ms): the quiet window after the last
 * message, at most max_wait after the first wake; 0 when none is wanted. */
long long zc_qq_sched_due(const struct zc_qq_sched *s, const struct zc_qq_sched_opts *o);

/*
 * The turn is due and may start now: 1 (its start is counted and the
 * wake cleared; quote receives the message to quote, qcap bytes), or 0
 * when repliesPerMinute turns started in the last minute (the wake is
 * cleared too: those messages are logged, not answered).
 */
int zc_qq_sched_start(struct zc_qq_sched *s, const struct zc_qq_sched_opts *o, long long now_ms,
		      char *quote, size_t qcap);

/*
 * A turn that started after the wake was cleared took the messages ids[n]
 * as its batch (zcor_turn's "batch"): a waking message logged before its
 * batch was read is in it, and answered by its reply. When the last
 * waking message since the start is among them (so every earlier one is
 * too), the wake is cleared — no second turn, quoting a message already
 * answered, for whatever non-waking messages come next: 1. Else (a poke,
 * a wake after the batch was read, a proactive pick) 0, unchanged.
 */
int zc_qq_sched_answered(struct zc_qq_sched *s, const char *const *ids, size_t n);

/* The bot's sent message ids of one conversation (a ring). */
struct zc_qq_sent {
	int64_t ids[ZC_QQ_SENT_MAX];
	int n, head;
};
void zc_qq_sent_add(struct zc_qq_sent *s, const char *id);
int zc_qq_sent_has(const struct zc_qq_sent *s, const char *id);

/* A uniform double in [0, 1) from a xorshift64* state (seeded once from
 * getrandom by the caller; never 0). */
double zc_qq_rand(uint64_t *state);

#endif
