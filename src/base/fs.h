/*
 * fs.h — files the way zcor needs them: bounded reads, and writes that are
 * either wholly there or not at all (temp file + fsync + rename + fsync of
 * the directory).
 */
#ifndef ZC_FS_H
#define ZC_FS_H

#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#include "base/err.h"

/* Reads at most max bytes; a bigger file is ZCOR_EINVAL. *data is
 * NUL-terminated and the caller's (zc_free). */
int zc_read_file(const char *path, size_t max, char **data, size_t *len, struct zc_err *e);
int zc_write_file_atomic(const char *path, const void *data, size_t len, struct zc_err *e);
int zc_mkdir_p(const char *path, struct zc_err *e);
int zc_file_exists(const char *path);
/* The identity of a file as last seen, to notice hand edits cheaply. */
struct zc_file_id {
	int known;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
};

/*
 * Stats path: returns 1 if it differs from *id (and records the new
 * identity), 0 if unchanged, -1 with errno set if stat failed.
 */
int zc_file_changed(const char *path, struct zc_file_id *id);

/* Maps an errno from a write to the public code (ENOSPC -> disk_full…). */
int zc_errno_code(int err);
/* path joined: "dir/name" (caller frees). */
char *zc_path_join(const char *dir, const char *name);
/* The extension of a file name with its dot (".gif"), or NULL when it has
 * none (a leading dot alone is a hidden file, not an extension). */
const char *zc_file_ext(const char *name);

#endif
