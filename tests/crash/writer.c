/*
 * writer.c — powerloss_writer, the process the power-loss test runs under
 * the shim (LD_PRELOAD=libzcor_powerloss.so).
 *
 *   powerloss_writer base|main|fresh|reopen DIR   a stream of script.c
 *   powerloss_writer model DIR                    plain files and SQLite, for the model's own test
 *
 * A stream opens DIR with zcor_open and runs its steps in order; after the
 * open and after each step that returned ZCOR_OK it writes an 'A' record
 * (struct pl_ack) to descriptor 3 — only then does the step count as
 * acknowledged. A step that fails is an 'E' record and exit status 3.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "journal.h"
#include "script.h"

static int acks;
static void (*mark)(void); /* the shim's, when it is loaded */

static void send(int kind, int rc, const char *msg)
{
	struct pl_ack a = {.kind = kind, .rc = rc};
	if (kind == 'A')
		a.n = ++acks;
	else
		a.n = acks;
	snprintf(a.msg, sizeof(a.msg), "%s", msg ? msg : "");
	ssize_t n;
	do
		n = write(PL_ACK_FD, &a, sizeof(a));
	while (n < 0 && errno == EINTR);
	if (kind == 'A' && mark)
		mark();
}

static void fail(int rc, const char *msg)
{
	send('E', rc, msg);
	exit(3);
}

/* ---- the model's own test ------------------------------------------------ */

enum { SYNC_NONE, SYNC_FILE, SYNC_FILE_AND_DIR };

/* out = a/b; dies rather than cut a path */
static void join(char *out, size_t cap, const char *a, const char *b)
{
	if ((size_t)snprintf(out, cap, "%s/%s", a, b) >= cap)
		fail(1, "path too long");
}

static void sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY);
	if (fd < 0 || fsync(fd) != 0)
		fail(1, "cannot sync a directory");
	close(fd);
}

static void put(const char *dir, const char *name, const char *data, int flags, int sync)
{
	char path[4096];
	join(path, sizeof(path), dir, name);
	int fd = open(path, O_WRONLY | O_CREAT | flags, 0644);
	if (fd < 0 || write(fd, data, strlen(data)) != (ssize_t)strlen(data))
		fail(1, path);
	if (sync != SYNC_NONE && fsync(fd) != 0)
		fail(1, path);
	close(fd);
	if (sync == SYNC_FILE_AND_DIR) {
		char *slash = strrchr(path, '/');
		*slash = '\0';
		sync_dir(path);
	}
}

static void sql(sqlite3 *db, const char *s)
{
	char *err = NULL;
	if (sqlite3_exec(db, s, NULL, NULL, &err) != SQLITE_OK)
		fail(1, err ? err : s);
}

/* What test_powerloss.c's model_keeps_only_what_was_synced expects: each
 * file is one rule of the model. The power goes when the process ends. */
static void model(const char *dir)
{
	char a[4096], b[4096], c[4096];
	join(a, sizeof(a), dir, "A");
	put(a, "a", "A", 0, SYNC_NONE);         /* never synced: lost */
	join(a, sizeof(a), dir, "B");
	put(a, "b", "B", 0, SYNC_FILE);         /* data synced, name not: lost */
	join(a, sizeof(a), dir, "C");
	put(a, "c", "C", 0, SYNC_FILE_AND_DIR); /* durable ... */
	put(a, "c", "C2", O_APPEND, SYNC_NONE); /* ... but not what came after */
	join(a, sizeof(a), dir, "D");
	join(b, sizeof(b), a, "d");
	if (mkdir(b, 0755) != 0)
		fail(1, b);
	put(b, "x", "X", 0, SYNC_FILE_AND_DIR); /* D never synced: d and all in it lost */
	join(a, sizeof(a), dir, "E");
	put(a, "e.tmp", "E-new", 0, SYNC_FILE);
	join(b, sizeof(b), a, "e.tmp");
	join(c, sizeof(c), a, "e");
	if (rename(b, c) != 0)                  /* the rename not synced: the old e */
		fail(1, c);
	join(a, sizeof(a), dir, "O");
	put(a, "old", "new", O_TRUNC, SYNC_NONE); /* truncated and rewritten, unsynced: old */
	join(a, sizeof(a), dir, "S");
	join(b, sizeof(b), a, "s.db");
	sqlite3 *db = NULL;
	if (sqlite3_open(b, &db) != SQLITE_OK)
		fail(1, b);
	sql(db, "PRAGMA journal_mode = WAL");
	sql(db, "PRAGMA synchronous = FULL");
	sql(db, "CREATE TABLE t(x); INSERT INTO t VALUES(1)"); /* committed with an fsync */
	sql(db, "PRAGMA synchronous = OFF");
	sql(db, "INSERT INTO t VALUES(2)");                    /* committed without one */
	send('A', 0, "model");
	_exit(0); /* no close: the checkpoint would blur what was synced */
}

/* ---- a stream ------------------------------------------------------------------- */

int main(int argc, char **argv)
{
	static const char *const names[] = {"base", "main", "fresh", "reopen"};
	if (argc != 3) {
		fprintf(stderr, "usage: powerloss_writer base|main|fresh|reopen|model DIR\n");
		return 2;
	}
	if (strcmp(argv[1], "model") == 0) {
		model(argv[2]);
		return 0;
	}
	int script = -1;
	for (int i = 0; i < 4; i++)
		if (strcmp(argv[1], names[i]) == 0)
			script = i;
	if (script < 0) {
		fprintf(stderr, "powerloss_writer: no stream '%s'\n", argv[1]);
		return 2;
	}
	*(void **)&mark = dlsym(RTLD_DEFAULT, PL_MARK_SYMBOL);
	zcor *z = NULL;
	int rc = zcor_open(&z, argv[2]);
	if (rc)
		fail(rc, zcor_errmsg(z));
	send('A', 0, "open");
	struct pl_run run;
	pl_run_init(&run, z, script);
	char msg[900];
	for (int i = 0; i < pl_script_steps(script); i++) {
		if ((rc = pl_run_step(&run, z, i, msg, sizeof(msg))))
			fail(rc, msg);
		send('A', 0, "step");
	}
	zcor_close(z);
	send('C', 0, "closed");
	return 0;
}
