/*
 * journal.h — what the power-loss shim (powerloss.c) records and the
 * driver (test_powerloss.c) replays: every operation that changes a file
 * or a directory under the watched directory, in the order it happened,
 * with the data written, and every fsync. Files and directories are named
 * by a file id (fid) the shim gives each inode when it first sees it, so
 * a rename moves a fid between names and an inode number the kernel
 * reuses gets a new fid.
 *
 * A record is struct pl_rec followed by `namelen` bytes of name, then
 * `len` bytes: the data of a write, the second name of a rename, the text
 * of an unmodelled call. Native byte order: one machine writes and reads.
 */
#ifndef PL_JOURNAL_H
#define PL_JOURNAL_H

#include <stdint.h>

/* Environment of a process run under the shim. */
#define PL_ENV_DIR "ZCOR_POWERLOSS_DIR"         /* the watched directory (absolute) */
#define PL_ENV_JOURNAL "ZCOR_POWERLOSS_JOURNAL" /* where the records go (outside it) */
#define PL_ENV_CRASH_AT "ZCOR_POWERLOSS_CRASH_AT" /* cut power before operation N; 0: never;
						    * "mN": before the first operation after
						    * the Nth acknowledgment (PL_MARK) */

enum pl_kind {
	PL_INIT_DIR = 1, /* a directory there when the process started: fid, dir (parent; 0 for the root), name */
	PL_INIT_FILE,    /* a file there at the start: fid, dir, name */
	PL_CREATE_FILE,  /* open(O_CREAT) made a new file: fid, dir, name */
	PL_CREATE_DIR,   /* mkdir: fid, dir, name */
	PL_LINK,         /* link: another name (dir, name) for fid */
	PL_UNLINK,       /* unlink or rmdir of (dir, name) */
	PL_RENAME,       /* (dir, name) -> (dir2, second name), the entry of fid */
	PL_WRITE,        /* len bytes at off into fid */
	PL_TRUNC,        /* fid's size set to off (ftruncate, O_TRUNC, fallocate growing it) */
	PL_FSYNC,        /* fsync or fdatasync of fid (a file: its data; a directory: its entries) */
	PL_SYNCALL,      /* sync or syncfs: everything so far */
	PL_CRASH,        /* the power cut, before operation `op` */
	PL_UNMODELLED,   /* a call the model does not cover (the text says which): the run is void */
	PL_MARK,         /* the writer acknowledged a step: op is the number of operations so far */
};

/* The shim's one function for the writer: records PL_MARK. The writer
 * finds it with dlsym(RTLD_DEFAULT, PL_MARK_SYMBOL), absent without the
 * shim. */
#define PL_MARK_SYMBOL "zcor_powerloss_mark"

struct pl_rec {
	uint32_t kind;
	uint32_t namelen;
	uint64_t op;  /* the number of the operation (counted from 1), 0 for PL_INIT_* */
	uint64_t fid;
	uint64_t dir;
	uint64_t dir2;
	uint64_t off;
	uint64_t len;
};

#endif
