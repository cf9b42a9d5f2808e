/*
 * lease.h — a conversation's lease for one kind of run (schema 17's
 * `leases`): the turn ("turn": one turn at a time per conversation) and
 * the digest run ("digest": one digest at a time per conversation), across
 * the threads and processes that share memory.db. A lease has an owner
 * (a name unique to the run) and an end: a process that dies holding one
 * holds it off only until then, and the next taker takes it over.
 *
 * Memory layer: SQL only, inside the caller's write transaction (an
 * operation body of the runner); the caller says what a held lease means
 * to its own caller.
 */
#ifndef ZC_LEASE_H
#define ZC_LEASE_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "store/store.h"

#define ZC_LEASE_OWNER_MAX 96 /* an owner's name, with the NUL */

/* Who holds a lease a taker did not get, and until when (ms). */
struct zc_lease_holder {
	char owner[ZC_LEASE_OWNER_MAX];
	int64_t until;
};

/*
 * Takes kind's lease of conversation for owner until now + ms (an owner
 * taking its own lease again moves the end). ZCOR_EBUSY, with *held filled
 * (may be NULL) and a message naming the conversation, while another
 * owner's lease has not ended at now; an ended one is taken over.
 */
int zc_lease_take(struct zc_store *s, const char *kind, const char *conversation,
		  const char *owner, int64_t now, int64_t ms, struct zc_lease_holder *held,
		  struct zc_err *e);

/* Gives back owner's lease (nothing when another owner holds it now). */
int zc_lease_give(struct zc_store *s, const char *kind, const char *conversation,
		  const char *owner, struct zc_err *e);

/* A run's owner name: "pid:<pid>:<n>:<ms>[:<what>]" — unique in the
 * process (n counts), naming the process and what runs (what may be NULL,
 * at most 24 bytes kept). */
void zc_lease_owner_name(char *buf, size_t cap, int64_t now, const char *what);

/* The pid and the what of an owner name made by zc_lease_owner_name; 0
 * and "" for another form. */
long zc_lease_owner_pid(const char *owner, const char **what);

#endif
