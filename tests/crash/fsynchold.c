/*
 * fsynchold.c — libzcor_fsynchold.so, an LD_PRELOAD layer for
 * e2e/qq_pipeline (issue 15): while the file named by $ZCOR_FSYNC_HOLD
 * exists, every fsync and fdatasync of the process waits, then runs. A
 * disk flush that lasts as long as the test wants, so that it can see
 * what the process does meanwhile (the QQ world's logging thread writes
 * the next chunk; nothing is counted or answered before it is durable).
 *
 * Test code only: built for the release tree, never linked into zcor, and
 * not usable under ASan (which must come first in the library list).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static void hold(void)
{
	const char *path = getenv("ZCOR_FSYNC_HOLD");
	if (!path || !*path)
		return;
	while (access(path, F_OK) == 0)
		nanosleep(&(struct timespec){.tv_nsec = 5 * 1000000L}, NULL);
}

int fsync(int fd)
{
	static int (*real)(int);
	if (!real)
		real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
	hold();
	return real(fd);
}

int fdatasync(int fd)
{
	static int (*real)(int);
	if (!real)
		real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
	hold();
	return real(fd);
}
