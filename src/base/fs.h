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
/* The same for path relative to the directory descriptor dirfd (openat;
 * AT_FDCWD for the working directory). Messages quote path as given, so a
 * caller that walks a tree by descriptors names files relative to it. */
int zc_open_regular_at(int dirfd, const char *path, int flags, struct zc_err *e);
/* Opens the directory path (relative to dirfd) for reading with
 * fdopendir or as the dirfd of the *_at functions, refusing a symlink as
 * the last component; never blocks. -1 with e set: ZCOR_ENOTFOUND when
 * absent, ZCOR_EINVAL when a symlink or not a directory. */
int zc_open_dir_at(int dirfd, const char *path, struct zc_err *e);
/* Reads at most max bytes of a regular file (zc_open_regular); a bigger
 * file is ZCOR_EINVAL. *data is NUL-terminated and the caller's
 * (zc_free). */
int zc_read_file(const char *path, size_t max, char **data, size_t *len, struct zc_err *e);
/* The same, refusing a symlink as the last component. */
int zc_read_file_nofollow(const char *path, size_t max, char **data, size_t *len, struct zc_err *e);
/* zc_read_file of path relative to dirfd; flags as zc_open_regular. */
int zc_read_file_at(int dirfd, const char *path, int flags, size_t max, char **data, size_t *len,
		    struct zc_err *e);
/* Writes path whole or not at all, durably before it returns: a temp file
 * beside it (created with O_EXCL | O_NOFOLLOW, so a planted link is never
 * written through), fsync, rename over path (a symbolic link at path is
 * replaced, never followed), fsync of the directory. The directory is the
 * caller's to check (zc_dir_inside). */
int zc_write_file_atomic(const char *path, const void *data, size_t len, struct zc_err *e);
/* root/rel written whole or not at all (zc_write_file_atomic), its
 * directories made first as real ones under root (zc_dir_inside with
 * ZC_DIR_CREATE, each new one durable): a planted link among them is
 * ZCOR_EINVAL, never written through. rel is relative, without "." or
 * ".." components; root is the caller's, as for zc_dir_inside. The one
 * "mkdir + atomic write" of zcor (mirror files, exports, log files). */
int zc_write_file_inside(const char *root, const char *rel, const void *data, size_t len,
			 struct zc_err *e);
/* Makes each missing directory of path, and each one's name durable (its
 * parent fsynced), so files synced into it survive a power cut. */
int zc_mkdir_p(const char *path, struct zc_err *e);
/* Makes path's own name durable after a create, link, rename or unlink:
 * fsyncs the directory that holds it. 0, or -1 with errno set. */
int zc_fsync_parent(const char *path);
int zc_file_exists(const char *path);

/* What lstat says path is: a symbolic link is reported, never followed. */
enum zc_file_kind { ZC_FILE_NONE, ZC_FILE_REGULAR, ZC_FILE_DIR, ZC_FILE_LINK, ZC_FILE_OTHER };
enum zc_file_kind zc_file_kind(const char *path);

/*
 * The directories of rel ("mirror/conversations/group-1/log": relative,
 * no "." or ".." component) under root, each a real directory: a missing
 * one is created when create is set (else ZCOR_ENOTFOUND), and a symbolic
 * link or anything else among them is ZCOR_EINVAL naming it relative to
 * root, so what is read or written under root never lands outside it.
 * root itself is the caller's choice and is not checked.
 */
enum { ZC_DIR_CREATE = 1 };
int zc_dir_inside(const char *root, const char *rel, int flags, struct zc_err *e);
/* The identity of a file as last seen, to notice hand edits cheaply. */
struct zc_file_id {
	int known;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	int racy; /* the file was seen within RACY_MS of its mtime (below) */
};

/*
 * Stats path: returns 1 if it differs from *id (and records the new
 * identity), 0 if unchanged, -1 with errno set if stat failed — and 2
 * when the identity is the same but was recorded "racily": within a
 * second of the file's mtime. File times come from a coarse clock, and a
 * rewrite by another handle or process in the same tick, through a
 * rename that reuses the freed inode, with the same size, leaves the same
 * identity, and a handle would merge a setting into a config.json it had
 * not re-read (found while chasing a power-loss flake; not its cause). So
 * a racy identity is
 * no proof of sameness: the caller compares the content (git's "racily
 * clean" entries are the same idea). Once a stat is a second past the
 * mtime, a later write has a later mtime and the identity alone decides.
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
