/*
 * qq_int.h — what the QQ world's files share (world layer, private to
 * qq.c and qq_turns.c): the world's struct, its conversations and the
 * lock that guards them. Nothing else includes it.
 */
#ifndef ZC_WORLD_QQ_INT_H
#define ZC_WORLD_QQ_INT_H

#include <jansson.h>
#include <pthread.h>
#include <stdint.h>

#include "world/onebot.h"
#include "world/qq.h"
#include "world/qq_event.h"
#include "world/qq_sched.h"
#include "zcor.h"

#define QQ_QUEUE_MAX 8192    /* events waiting for the logging thread; beyond: the connection waits */
#define QQ_QUEUE_WAIT_MS 10000 /* how long it waits for room before an event is dropped (counted) */
#define QQ_CHUNK 2048        /* events the logging thread takes at once */
#define QQ_RUN_MAX 100       /* one conversation's messages in one batch (zcor_log_messages' cap) */
#define QQ_CALL_BATCHES 256  /* batches of one zcor_log_batches call (its cap) */
#define QQ_CALL_MESSAGES 4096 /* messages of one zcor_log_batches call (its cap) */
#define QQ_CONVS_MAX 4096    /* conversations tracked (LRU; an idle one is forgotten first) */
#define QQ_BUCKETS 1024
#define QQ_TITLE_BYTES 404   /* a group name: 100 characters */
#define QQ_BATCH_MEDIA (24u << 20) /* media bytes of one logging call, before base64 */
#define QQ_RETRY_WAIT_MS 15000 /* a send that never left waits this long for the connection */
#define QQ_ID_MAX 65
#define QQ_MEDIA_WORKERS 4   /* threads downloading images (each with its own zcor handle) */

/* An event waiting for its conversation's image downloads (qq.c). */
struct qheld {
	struct qheld *next;
	struct zc_qq_event ev; /* owned */
};

struct qconv {
	char key[48];
	struct qconv *hnext;        /* the hash chain */
	struct qconv *prev, *next;  /* LRU, the most recent first */
	struct qconv *wnext;        /* the list of woken ones */
	struct qconv *rnext;        /* the run queue */
	struct zc_qq_sched st;
	struct zc_qq_sent *sent;    /* the bot's message ids here (allocated on the first) */
	char temp_group[24];        /* private via a group: the group */
	char title[QQ_TITLE_BYTES]; /* the group name last set */
	int in_woken, queued, running;
	int poke;                   /* a poke at the bot is pending */
	char poke_from[QQ_ID_MAX];
	char quote[24];             /* the message to quote in the queued turn */
	int proactive;              /* the queued turn is a proactive one */
	/* images: a message with one to download and every message or recall
	 * of this conversation after it wait here, in order, for a media
	 * worker, which downloads and logs them; the other conversations'
	 * events go on being logged meanwhile */
	struct qheld *held, *held_tail;
	int media_busy;             /* on the media queue or being worked on */
	struct qconv *mnext;        /* the media queue */
};

/* A chunk of events between the logging thread and the syncer (qq.c):
 * two of them, so that one is parsed and written while the other waits
 * for its fsync. */
enum { QQ_CHUNK_FREE, QQ_CHUNK_FILLING, QQ_CHUNK_LOGGED };
struct qchunk {
	json_t *raw[QQ_CHUNK]; /* the events as they came (owned) */
	struct zc_qq_event evs[QQ_CHUNK];
	size_t n;
	/* the runs logged, in the order they were: run r is the events
	 * ev[run_end[r - 1] .. run_end[r]) (indexes in evs), skip[k] why
	 * event ev[k] was not logged (NULL: it was) */
	size_t ev[QQ_CHUNK];
	const char *skip[QQ_CHUNK];
	size_t run_end[QQ_CHUNK];
	size_t nev, nruns;
	int deferred; /* some were committed without their fsync (ZCOR_LOG_NO_FSYNC) */
	int state;    /* QQ_CHUNK_*, under q->lock */
};

/* A delivery note waiting for the noter (qq_turns.c). */
struct qnote {
	struct qnote *next;
	long long turn;
	char *body;      /* the note's JSON (owned) */
	char quote[24];  /* the mention it answered (the probe's) */
};
#define QQ_NOTES_MAX 1024 /* notes waiting for the noter; beyond: the worker waits */

/* A media worker (qq.c). */
struct qmedia {
	struct zc_qq *q;
	zcor *z; /* its handle */
	pthread_t thread;
};

struct zc_qq {
	char *dir;
	/* settings (worlds.qq, read once at open) */
	int reverse;
	char url[512];
	char path[200];
	char *token;
	char token_env[128]; /* worlds.qq.accessTokenEnv, for the refusal's message */
	char bot_id[QQ_ID_MAX];
	char names[ZC_QQ_NAMES_MAX][4 * ZC_QQ_NAME_CHARS + 1];
	const char *name_ptrs[ZC_QQ_NAMES_MAX];
	int n_names;
	struct zc_qq_sched_opts so;
	int action_timeout_ms, reconnect_min_ms, reconnect_max_ms;
	int max_turns, reply_max_chars, image_file;
	int pipeline; /* worlds.qq.pipelineLogging */
	long media_max_bytes;
	int media_timeout_ms;
	char stickers_dir[4096];

	struct zc_ob *ob;
	zcor *zlog; /* the logging thread's handle */
	/* the logging thread's: one zcor_log_batches_c call's batches and
	 * messages, their mentions, a run's events side by side */
	struct zcor_log_batch *call_batches; /* QQ_CALL_BATCHES */
	struct zcor_log_msg *call_msgs;      /* QQ_CALL_MESSAGES */
	const char **call_mentions;
	size_t n_call_mentions;
	struct zc_qq_event *run_evs;         /* QQ_RUN_MAX */
	struct zc_qq_event *sync_evs;        /* QQ_RUN_MAX, the syncer's */
	struct qchunk *chunks;               /* 2: the pipeline */
	int fill_next, sync_next;            /* the chunk the logging thread fills next, the syncer's next (under the lock) */
	zcor *zsync;                         /* the syncer's handle, or NULL */

	pthread_mutex_t lock; /* everything below */
	pthread_cond_t log_wake;  /* the logging thread: events, a turn ended, stop */
	pthread_cond_t work_wake; /* the workers: a turn queued, stop */
	pthread_cond_t room;      /* the connection's thread: the event queue has room again */
	pthread_cond_t media_wake; /* the media workers: a conversation has images to fetch, or closing */
	pthread_cond_t sync_wake;  /* the syncer: a chunk was logged, or the logging thread ended */
	pthread_cond_t note_wake;  /* the noter: a note queued, or closing; a worker: room for a note */
	/* the noter (qq_turns.c): delivery notes written and synced off the
	 * turn workers, which take the next turn at once */
	struct qnote *note_head, *note_tail;
	int nnotes, notes_closing, noter_started;
	zcor *znote; /* its handle */
	pthread_t noter;
	char self_id[QQ_ID_MAX];  /* learned from get_login_info when botId is not set */
	json_t *evq[QQ_QUEUE_MAX];
	size_t evhead, evn;
	struct qconv *buckets[QQ_BUCKETS];
	struct qconv *lru_head, *lru_tail;
	int nconv;
	struct qconv *woken;
	struct qconv *runq_head, *runq_tail;
	int nqueued, nrunning;
	struct qconv *mq_head, *mq_tail; /* conversations with images to download */
	int n_media_busy;
	int media_closing; /* the logging thread has ended: the media workers drain and end */
	int stopping;
	int ob_closed; /* the connection is gone: the logging thread may end */
	uint64_t rng;
	long long events_logged, events_dropped, sends_failed, rate_limited, turns_run, turns_failed;
	int said_no_provider;
	double last_complaint_ms;
	long long complaints_held;

	zc_qq_probe_fn probe; /* zc_qq_set_probe (the benchmark's), or NULL */
	void *probe_ud;

	pthread_t logger, syncer;
	int syncer_started, logger_done;
	pthread_t *workers;
	int nworkers, logger_started;
	struct qmedia media[QQ_MEDIA_WORKERS];
	int nmedia; /* started; 0: images are downloaded on the logging thread */
};

/* The conversation of key, made (and made the most recent) when absent;
 * NULL when every tracked one is busy. Under q->lock. */
struct qconv *zc_qq_conv(struct zc_qq *q, const char *key);
/* The bot's own id ("" when not known yet), copied under the lock. */
void zc_qq_self(struct zc_qq *q, char *out, size_t cap);
/* A line on stderr about one event or turn ("qq: …"), at most one a second
 * (the rest are counted and said with the next). */
void zc_qq_complain(struct zc_qq *q, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The probe at stage for message id (when one is set). */
void zc_qq_probe(struct zc_qq *q, enum zc_qq_stage stage, const char *id);

/* qq_turns.c: the turn workers. */
void *zc_qq_worker(void *arg);
/* qq_turns.c: the noter (q->znote open): writes the queued delivery notes
 * without their fsync, then waits for one (zcor_sync); ends when
 * q->notes_closing is set and nothing is queued. */
void *zc_qq_noter(void *arg);
/* The calling thread's name (at most 15 bytes; what tests/crash/fsynchold.c
 * tells threads apart by). */
void zc_qq_thread_name(const char *name);

#endif
