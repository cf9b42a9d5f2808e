/*
 * lease.c — leases of a conversation for a kind of run (lease.h): the
 * one mechanism behind "one turn at a time" and "one digest at a time",
 * across processes. Memory layer: statements inside the caller's write
 * transaction, no history, no printing.
 */
#include "memory/lease.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/utf8.h"

int zc_lease_take(struct zc_store *s, const char *kind, const char *conv, const char *owner,
		  int64_t now, int64_t ms, struct zc_lease_holder *held, struct zc_err *e)
{
	sqlite3_stmt *st =
		zc_stmt(s, "SELECT owner, until FROM leases WHERE kind = ?1 AND conversation = ?2", e);
	if (!st)
		return e->code;
	sqlite3_bind_text(st, 1, kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, conv, -1, SQLITE_STATIC);
	int step = sqlite3_step(st), busy = 0;
	if (step == SQLITE_ROW) {
		const char *o = (const char *)sqlite3_column_text(st, 0);
		int64_t until = sqlite3_column_int64(st, 1);
		busy = o && strcmp(o, owner) != 0 && until > now;
		if (busy && held) {
			snprintf(held->owner, sizeof(held->owner), "%s", o);
			held->until = until;
		}
	}
	sqlite3_reset(st);
	if (step != SQLITE_ROW && step != SQLITE_DONE)
		return zc_store_fail(s, step, e, "reading a lease");
	if (busy)
		return zc_fail(e, ZCOR_EBUSY, "a %s of conversation '%s' is running", kind,
			       ZC_Q(conv, 80));
	st = zc_stmt(s,
		     "INSERT OR REPLACE INTO leases(kind, conversation, owner, until) "
		     "VALUES (?1, ?2, ?3, ?4)",
		     e);
	if (!st)
		return e->code;
	sqlite3_bind_text(st, 1, kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, conv, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, owner, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, now + ms);
	step = sqlite3_step(st);
	sqlite3_reset(st);
	return step == SQLITE_DONE ? ZCOR_OK : zc_store_fail(s, step, e, "taking a lease");
}

int zc_lease_give(struct zc_store *s, const char *kind, const char *conv, const char *owner,
		  struct zc_err *e)
{
	sqlite3_stmt *st = zc_stmt(
		s, "DELETE FROM leases WHERE kind = ?1 AND conversation = ?2 AND owner = ?3", e);
	if (!st)
		return e->code;
	sqlite3_bind_text(st, 1, kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, conv, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, owner, -1, SQLITE_STATIC);
	int step = sqlite3_step(st);
	sqlite3_reset(st);
	return step == SQLITE_DONE ? ZCOR_OK : zc_store_fail(s, step, e, "giving back a lease");
}

void zc_lease_owner_name(char *buf, size_t cap, int64_t now, const char *what)
{
	static unsigned long counter;
	unsigned long n = __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);
	snprintf(buf, cap, "pid:%ld:%lu:%lld%s%.24s", (long)getpid(), n, (long long)now,
		 what && *what ? ":" : "", what ? what : "");
}

long zc_lease_owner_pid(const char *owner, const char **what)
{
	*what = "";
	if (!owner || strncmp(owner, "pid:", 4) != 0)
		return 0;
	char *end;
	long pid = strtol(owner + 4, &end, 10);
	if (end == owner + 4 || *end != ':')
		return 0;
	/* pid:<pid>:<n>:<ms>[:<what>] */
	const char *p = strchr(end + 1, ':');
	p = p ? strchr(p + 1, ':') : NULL;
	if (p)
		*what = p + 1;
	return pid;
}
