/*
 * qq.h — the QQ world (docs/QQ.md): OneBot v11 to NapCat. A source and a
 * sink of message batches: NapCat's events become transcript messages
 * (zcor_log_messages, admission first), the wake rules decide which
 * conversations get a turn (zcor_turn, after a quiet window gathers a
 * burst), and the reply goes back as OneBot segments. `zcor serve` runs
 * it when config.json has worlds.qq.enabled.
 *
 * World layer, a client of zcor.h: it opens its own handles on the
 * memory directory (one for logging, one per turn worker).
 *
 * Threads: the connection's (onebot.c), one that logs events in order and
 * keeps the quiet-window timers, and up to worlds.qq.maxConcurrentTurns
 * turn workers; one turn at a time per conversation (zcor_turn's lease).
 */
#ifndef ZC_WORLD_QQ_H
#define ZC_WORLD_QQ_H

#include <jansson.h>
#include <stddef.h>

struct zc_qq;

/*
 * Reads worlds.qq from dir's config.json. 0 with *out NULL when the QQ
 * world is not enabled; 0 with *out ready to start; -1 with why in err
 * (cap bytes): an invalid setting, reverse mode without its token in the
 * environment, a memory directory that does not open.
 */
int zc_qq_open(const char *dir, struct zc_qq **out, char *err, size_t cap);

/* Starts the threads (forward: dials NapCat). 0 or -1 with why. */
int zc_qq_start(struct zc_qq *q, char *err, size_t cap);

/* Reverse mode: the path `zcor serve` answers the WebSocket upgrade on
 * (worlds.qq.path); NULL in forward mode. */
const char *zc_qq_reverse_path(const struct zc_qq *q);

/*
 * Reverse mode, before the upgrade: checks NapCat's request —
 * Authorization ("Bearer <token>", or the access_token query parameter
 * NapCat can send instead), X-Self-ID (digits; the bot's id, which must
 * match botId when that is set) and x-client-role ("Universal"). 0: go on
 * and answer 101; else the HTTP status to answer (401 no or wrong token,
 * 400 a bad header) with why in err.
 */
int zc_qq_check_reverse(struct zc_qq *q, const char *authorization, const char *query_token,
			const char *self_id, const char *role, char *err, size_t cap);

/* Reverse mode, after the 101: the upgraded socket (see zc_ob_adopt). */
int zc_qq_adopt(struct zc_qq *q, int fd, const char *extra, size_t extra_len, const char *self_id,
		void (*close_fd)(void *ud, int fd), void *close_ud);

/* For the page: {"enabled": true, "connection": zc_ob_status's object,
 * "groups": [{"conversation", "name"}], "turnsRunning", "queued",
 * "sendsFailed", "rateLimited", "eventsLogged", "eventsDropped"}. */
json_t *zc_qq_status(struct zc_qq *q);

/*
 * A probe for the benchmark (bench/qq_bench.inc): fn, when set, is called
 * with a stage, the id of the message it is about (the waking message a
 * turn quotes) and the time (CLOCK_MONOTONIC, ms), on the thread that
 * passes the stage. Set before zc_qq_start; NULL (the default): nothing.
 */
enum zc_qq_stage {
	ZC_QQ_STAGE_TAKEN,   /* the logging thread took a message's event and parsed it */
	ZC_QQ_STAGE_LOGGED,  /* a waking message's logging commit returned (logging thread) */
	ZC_QQ_STAGE_QUEUED,  /* its turn went on the run queue (logging thread) */
	ZC_QQ_STAGE_START,   /* a turn worker took it (worker) */
	ZC_QQ_STAGE_TURNED,  /* zcor_turn returned: the record is written (worker) */
	ZC_QQ_STAGE_SENT,    /* the send's answer came back (worker) */
	ZC_QQ_STAGE_NOTED,   /* the delivery note is written (worker) */
};
typedef void (*zc_qq_probe_fn)(void *ud, enum zc_qq_stage stage, const char *message_id,
			       double mono_ms);
void zc_qq_set_probe(struct zc_qq *q, zc_qq_probe_fn fn, void *ud);

/* Stops: no new turns, waits for running ones (up to their deadline),
 * closes the connection, joins, frees. NULL is fine. */
void zc_qq_stop(struct zc_qq *q);

#endif
