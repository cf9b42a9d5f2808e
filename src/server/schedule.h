/*
 * schedule.h — the digest agent's daily schedule inside `zcor serve`
 * (Q-DIGEST, docs/DIGEST.md "The schedule"): one thread with its own
 * handle that wakes at digestAtHour local time and digests the
 * conversations that are due, and runs one catch-up per conversation on
 * its first message after start. Server layer: a client of zcor.h only;
 * it logs to standard error (the lines seed 003 tells operators to grep).
 */
#ifndef ZC_SERVER_SCHEDULE_H
#define ZC_SERVER_SCHEDULE_H

#include <stddef.h>
#include <stdint.h>

#define ZC_SCHED_POLL_MS 1000 /* how often it looks at the clock and the conversations */

struct zc_sched;

/*
 * Starts the thread for the memory directory dir. test_now (NULL: the
 * system clock): an ISO-8601 instant the handle's clock starts at and
 * advances from in real time (ZCOR_TEST_NOW, tests only). 0, or -1 with
 * the reason in err.
 */
int zc_sched_start(const char *dir, const char *test_now, struct zc_sched **out, char *err,
		   size_t cap);
/*
 * Makes config.json's timeZone (if set) the process's local time zone (TZ,
 * tzset): the digest hour and the local dates follow it. Process state,
 * so only an adapter calls it, before it starts threads (zcor serve, the
 * CLI); a change of timeZone takes effect at the next start. Returns the
 * name applied, or NULL (the system's zone), static until the next call.
 */
struct zcor;
const char *zc_sched_time_zone(struct zcor *z);

/* Stops it: a digest that runs is cut now (zcor_interrupt: its provider
 * request abandoned, the run recorded as interrupted, its lines kept) and
 * the thread ends. NULL is fine. */
void zc_sched_stop(struct zc_sched *s);

#endif
