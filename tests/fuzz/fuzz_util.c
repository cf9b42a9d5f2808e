/*
 * fuzz_util.c — see fuzz.h.
 */
#define _GNU_SOURCE
#include "fuzz.h"

#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern const char *fz_target; /* each target's name, for messages */

void fz_bug(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: ", fz_target);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

char *fz_mkdtemp(const char *what)
{
	const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
	char *dir = NULL;
	if (asprintf(&dir, "%s/zcor-fuzz-%s-XXXXXX", base && *base ? base : "/tmp", what) < 0)
		abort();
	if (!mkdtemp(dir))
		fz_bug("mkdtemp %s failed", dir);
	return dir;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	remove(path);
	return 0;
}

void fz_rmtree(const char *path)
{
	if (path && *path)
		nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

zcor *fz_open(const char *dir)
{
	zcor *z = NULL;
	if (zcor_open(&z, dir) != ZCOR_OK)
		fz_bug("cannot open %s: %s", dir, zcor_errmsg(z));
	return z;
}

void fz_must_call(zcor *z, const char *tool, const char *args)
{
	struct zcor_ctx ctx = {ZCOR_ACTOR_CLI, NULL};
	char *out = NULL;
	if (zcor_tool_call(z, &ctx, tool, args, &out) != ZCOR_OK)
		fz_bug("setup %s failed: %s", tool, out ? out : "");
	zcor_free(out);
}
