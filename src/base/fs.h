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

/* Opens path for reading only if it is a regular file: opened
 * non-blocking (a FIFO never hangs the caller), checked with fstat, then
 * made blocking again. ZC_FS_NOFOLLOW refuses a symlink as the last
 * component (O_NOFOLLOW). Returns the descriptor, or -1 with e set:
 * ZCOR_ENOTFOUND when absent, ZCOR_EINVAL when not a regular file or a
 * symlink refused. */
enum { ZC_FS_NOFOLLOW = 1 };
int zc_open_regular(const char *path, int flags, struct zc_err *e);
/* Reads at most max bytes of a regular file (zc_open_regular); a bigger
 * file is ZCOR_EINVAL. *data is NUL-terminated and the caller's
 * (zc_free). */
int zc_read_file(const char *path, size_t max, char **data, size_t *len, struct zc_err *e);
/* The same, refusing a symlink as the last component. */
int zc_read_file_nofollow(const char *path, size_t max, char **data, size_t *len, struct zc_err *e);
int zc_write_file_atomic(const char *path, const void *data, size_t len, struct zc_err *e);
int zc_mkdir_p(const char *path, struct zc_err *e);
/* zc_mkdir_p for a directory path inside root (path starts with root/),
 * for writing into a directory someone else may have filled (an export
 * target): a symbolic link, or a file, on the way below root is
 * ZCOR_EFORBIDDEN naming it, so that what is written under root stays
 * under root. root itself is taken as given (and made if missing). */
int zc_mkdir_below(const char *root, const char *path, struct zc_err *e);
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
