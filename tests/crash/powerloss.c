/*
 * powerloss.c — libzcor_powerloss.so, an LD_PRELOAD layer that lets the
 * power-loss test (test_powerloss.c) cut the power under a process the way
 * SQLite's crash tests do (test6.c), for SQLite's files and zcor's plain
 * files alike.
 *
 * For paths under $ZCOR_POWERLOSS_DIR it records, in $ZCOR_POWERLOSS_JOURNAL
 * (journal.h), every call that changes what a disk would hold: creating,
 * writing, truncating, renaming, linking, removing, making directories, and
 * every fsync/fdatasync. The process itself runs on the real file system,
 * so it sees its own writes as it would through the page cache; what would
 * survive a power cut is decided afterwards by the driver from the journal
 * (the model: a file's data is durable once that file was fsynced, a
 * directory entry once its directory was fsynced — the strict POSIX
 * reading, not ext4's habit of committing a new file's name with its
 * data). The real fsync is not called: the model is the disk here, and
 * the test runs hundreds of processes.
 *
 * Before operation $ZCOR_POWERLOSS_CRASH_AT (counted from 1 over the
 * recorded operations) it records the cut and SIGKILLs the process, so
 * that operation never happens.
 *
 * SQLite's -shm file (the WAL index) is memory it maps and is rebuilt from
 * the WAL after a reboot: its writes are not recorded (they are mostly
 * stores into the mapping anyway), and the driver throws it away. Calls
 * the model does not cover under the directory (a writable shared mapping
 * of another file, stdio opened for writing, symlinks, O_TMPFILE, hole
 * punching, renames across its edge) are recorded as PL_UNMODELLED, and
 * the driver fails the run: a layer that silently missed a write would
 * let the test pass for the wrong reason.
 *
 * Test code only: built for the release tree, never linked into zcor, and
 * not usable under ASan (which must come first in the library list).
 */
#define _GNU_SOURCE
#undef _FORTIFY_SOURCE /* its inline open() would clash with ours */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "journal.h"

/* ---- the real calls --------------------------------------------------- */

#define REAL(name) static __typeof__(name) *real_##name
REAL(open);
REAL(open64);
REAL(openat);
REAL(openat64);
REAL(creat);
REAL(creat64);
REAL(write);
REAL(pwrite);
REAL(pwrite64);
REAL(writev);
REAL(pwritev);
REAL(ftruncate);
REAL(ftruncate64);
REAL(truncate);
REAL(truncate64);
REAL(fallocate);
REAL(posix_fallocate);
REAL(fsync);
REAL(fdatasync);
REAL(sync);
REAL(syncfs);
REAL(rename);
REAL(renameat);
REAL(renameat2);
REAL(unlink);
REAL(unlinkat);
REAL(rmdir);
REAL(mkdir);
REAL(mkdirat);
REAL(link);
REAL(linkat);
REAL(symlink);
REAL(symlinkat);
REAL(mmap);
REAL(mmap64);
REAL(fopen);
REAL(fopen64);
REAL(freopen);

static void *resolve(const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);
	if (!p) {
		fprintf(stderr, "libzcor_powerloss: libc has no %s\n", name);
		abort();
	}
	return p;
}

/* ---- state -------------------------------------------------------------- */

/* What the shim knows of an inode under the directory. */
struct ident {
	dev_t dev;
	ino_t ino;
	uint64_t fid;
	int vol; /* SQLite's -shm: not recorded, lost at the cut */
};

static struct {
	int on;
	char root[PATH_MAX];
	size_t rootlen;
	int jfd;
	uint64_t crash_at, ops, next_fid;
	uint64_t crash_after_mark, marks; /* "mN": cut once the Nth mark is in */
	struct ident *ids;
	size_t nids, cap;
	pthread_mutex_t mu;
} g = {.jfd = -1, .mu = PTHREAD_MUTEX_INITIALIZER};

static pthread_once_t once = PTHREAD_ONCE_INIT;

static void lock(void) { pthread_mutex_lock(&g.mu); }
static void unlock(void) { pthread_mutex_unlock(&g.mu); }

/* ---- the journal ------------------------------------------------------ */

/* One record, unbuffered: the process may be killed at any moment and the
 * driver must see everything recorded before. */
static void emit(uint32_t kind, uint64_t fid, uint64_t dir, const char *name, uint64_t dir2,
		 const char *name2, uint64_t off, const void *data, uint64_t len)
{
	if (g.jfd < 0)
		return;
	struct pl_rec r = {.kind = kind, .op = g.ops, .fid = fid, .dir = dir, .dir2 = dir2, .off = off};
	r.namelen = name ? (uint32_t)strlen(name) : 0;
	if (name2) {
		data = name2;
		len = strlen(name2);
	}
	r.len = len;
	struct iovec iov[3] = {{&r, sizeof(r)}, {(void *)name, r.namelen}, {(void *)data, (size_t)len}};
	size_t total = sizeof(r) + r.namelen + (size_t)len, done = 0;
	int i = 0;
	while (done < total) {
		ssize_t n = real_writev(g.jfd, iov + i, 3 - i);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			abort(); /* a journal that lies is worse than none */
		done += (size_t)n;
		while (i < 3 && (size_t)n >= iov[i].iov_len) {
			n -= (ssize_t)iov[i].iov_len;
			iov[i].iov_len = 0;
			i++;
		}
		if (i < 3) {
			iov[i].iov_base = (char *)iov[i].iov_base + n;
			iov[i].iov_len -= (size_t)n;
		}
	}
}

static void unmodelled(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void unmodelled(const char *fmt, ...)
{
	char text[PATH_MAX + 256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	emit(PL_UNMODELLED, 0, 0, NULL, 0, NULL, 0, text, strlen(text));
}

/* An operation that changes the disk is about to happen: count it, and cut
 * the power first when it is the chosen one. */
static void point(void)
{
	g.ops++;
	if (g.crash_at && g.ops >= g.crash_at) {
		emit(PL_CRASH, 0, 0, NULL, 0, NULL, 0, NULL, 0);
		kill(getpid(), SIGKILL);
		_exit(137);
	}
}

/* ---- inodes and paths ----------------------------------------------------- */

static struct ident *find(dev_t dev, ino_t ino)
{
	/* newest first: a reused inode number has a newer entry */
	for (size_t i = g.nids; i-- > 0;)
		if (g.ids[i].ino == ino && g.ids[i].dev == dev)
			return &g.ids[i];
	return NULL;
}

static int is_vol(const char *name)
{
	size_t n = strlen(name);
	return n >= 4 && strcmp(name + n - 4, "-shm") == 0;
}

/* A new inode (or the first sight of one at the start): a new fid. */
static struct ident *add(const struct stat *st, const char *name)
{
	if (g.nids == g.cap) {
		size_t cap = g.cap ? g.cap * 2 : 256;
		struct ident *ids = realloc(g.ids, cap * sizeof(*ids));
		if (!ids)
			abort();
		g.ids = ids;
		g.cap = cap;
	}
	struct ident *id = &g.ids[g.nids++];
	id->dev = st->st_dev;
	id->ino = st->st_ino;
	id->fid = ++g.next_fid;
	id->vol = is_vol(name);
	return id;
}

static struct ident *of_fd(int fd)
{
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)))
		return NULL;
	return find(st.st_dev, st.st_ino);
}

/* The inode abs names, or NULL: absent (nothing will happen to it), or
 * there but never seen (recorded as unmodelled: its change would be
 * missed). */
static struct ident *of_path(const char *abs)
{
	struct stat st;
	if (lstat(abs, &st) != 0)
		return NULL;
	struct ident *id = find(st.st_dev, st.st_ino);
	if (!id)
		unmodelled("'%s' is there but was never seen", abs);
	return id;
}

/* path (relative to dirfd) made absolute and normalised lexically into
 * out; -1 when that is not possible. */
static int absolute(int dirfd, const char *path, char *out)
{
	char tmp[2 * PATH_MAX];
	if (!path)
		return -1;
	if (path[0] == '/') {
		snprintf(tmp, sizeof(tmp), "%s", path);
	} else {
		char base[PATH_MAX];
		if (dirfd == AT_FDCWD) {
			if (!getcwd(base, sizeof(base)))
				return -1;
		} else {
			char l[64];
			snprintf(l, sizeof(l), "/proc/self/fd/%d", dirfd);
			ssize_t n = readlink(l, base, sizeof(base) - 1);
			if (n < 0)
				return -1;
			base[n] = '\0';
		}
		snprintf(tmp, sizeof(tmp), "%s/%s", base, path);
	}
	size_t len = 0;
	out[0] = '\0';
	for (char *s = tmp, *next; *s; s = next) {
		while (*s == '/')
			s++;
		if (!*s)
			break;
		next = strchr(s, '/');
		size_t n = next ? (size_t)(next - s) : strlen(s);
		if (!next)
			next = s + n;
		if (n == 1 && s[0] == '.')
			continue;
		if (n == 2 && s[0] == '.' && s[1] == '.') {
			while (len > 0 && out[len - 1] != '/')
				len--;
			if (len > 0)
				len--;
			out[len] = '\0';
			continue;
		}
		if (len + 1 + n >= PATH_MAX)
			return -1;
		out[len++] = '/';
		memcpy(out + len, s, n);
		len += n;
		out[len] = '\0';
	}
	if (len == 0) {
		out[0] = '/';
		out[1] = '\0';
	}
	return 0;
}

static int inside(const char *abs)
{
	return g.on && strncmp(abs, g.root, g.rootlen) == 0 &&
	       (abs[g.rootlen] == '\0' || abs[g.rootlen] == '/');
}

/* Below the directory: a name in it or deeper, not the directory itself
 * (zc_mkdir_p tries to make it again; its own name is durable). */
static int below(const char *abs) { return inside(abs) && abs[g.rootlen] == '/'; }

/* The fid of abs's directory, with *name pointing at its last component;
 * 0 when the directory is absent or unknown (of_path). */
static uint64_t parent_of(const char *abs, const char **name)
{
	const char *slash = strrchr(abs, '/');
	*name = slash + 1;
	char dir[PATH_MAX];
	size_t n = (size_t)(slash - abs);
	memcpy(dir, abs, n ? n : 1);
	dir[n ? n : 1] = '\0';
	struct ident *id = of_path(dir); /* absent: the call will fail */
	return id ? id->fid : 0;
}

/* ---- start ------------------------------------------------------------------ */

static void walk(const char *abs, uint64_t parent, const char *name)
{
	struct stat st;
	if (lstat(abs, &st) != 0)
		return;
	if (S_ISREG(st.st_mode)) {
		emit(PL_INIT_FILE, add(&st, name)->fid, parent, name, 0, NULL, 0, NULL, 0);
		return;
	}
	if (!S_ISDIR(st.st_mode)) {
		unmodelled("'%s' is neither a file nor a directory", abs);
		return;
	}
	uint64_t fid = add(&st, name)->fid;
	emit(PL_INIT_DIR, fid, parent, name, 0, NULL, 0, NULL, 0);
	DIR *d = opendir(abs);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		char child[PATH_MAX];
		if (snprintf(child, sizeof(child), "%s/%s", abs, de->d_name) < (int)sizeof(child))
			walk(child, fid, de->d_name);
	}
	if (d)
		closedir(d);
}

static void init(void)
{
#define R(name) real_##name = resolve(#name)
	R(open); R(open64); R(openat); R(openat64); R(creat); R(creat64);
	R(write); R(pwrite); R(pwrite64); R(writev); R(pwritev);
	R(ftruncate); R(ftruncate64); R(truncate); R(truncate64); R(fallocate); R(posix_fallocate);
	R(fsync); R(fdatasync); R(sync); R(syncfs);
	R(rename); R(renameat); R(renameat2); R(unlink); R(unlinkat); R(rmdir);
	R(mkdir); R(mkdirat); R(link); R(linkat); R(symlink); R(symlinkat);
	R(mmap); R(mmap64); R(fopen); R(fopen64); R(freopen);
#undef R
	const char *dir = getenv(PL_ENV_DIR), *journal = getenv(PL_ENV_JOURNAL);
	const char *at = getenv(PL_ENV_CRASH_AT);
	if (!dir || !*dir || !journal || !*journal || !realpath(dir, g.root))
		return;
	g.rootlen = strlen(g.root);
	if (at && at[0] == 'm')
		g.crash_after_mark = strtoull(at + 1, NULL, 10);
	else
		g.crash_at = at ? strtoull(at, NULL, 10) : 0;
	g.jfd = real_open(journal, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
	if (g.jfd < 0)
		abort();
	/* a process this one starts is not part of the experiment */
	unsetenv("LD_PRELOAD");
	unsetenv(PL_ENV_DIR);
	unsetenv(PL_ENV_JOURNAL);
	unsetenv(PL_ENV_CRASH_AT);
	walk(g.root, 0, "");
	g.on = 1;
}

__attribute__((constructor)) static void start(void) { pthread_once(&once, init); }

static void ensure(void) { pthread_once(&once, init); }

/* The writer acknowledged a step (journal.h, PL_MARK). */
void zcor_powerloss_mark(void);
void zcor_powerloss_mark(void)
{
	ensure();
	lock();
	if (g.on) {
		emit(PL_MARK, 0, 0, NULL, 0, NULL, 0, NULL, 0);
		/* counted in this run, not at the reference's operation number:
		 * the handle's background writer (read records) may do its
		 * writes at other moments, and a cut placed by number could then
		 * fall after the next step's commit */
		if (g.crash_after_mark && ++g.marks == g.crash_after_mark)
			g.crash_at = g.ops + 1;
	}
	unlock();
}

/* ---- opening ------------------------------------------------------------------ */

enum { O_PLAIN, O_64, O_AT, O_AT64 };

static int call_open(int which, int dirfd, const char *path, int flags, mode_t mode)
{
	switch (which) {
	case O_PLAIN:
		return real_open(path, flags, mode);
	case O_64:
		return real_open64(path, flags, mode);
	case O_AT:
		return real_openat(dirfd, path, flags, mode);
	default:
		return real_openat64(dirfd, path, flags, mode);
	}
}

static int open_hook(int which, int dirfd, const char *path, int flags, mode_t mode)
{
	ensure();
	char abs[PATH_MAX];
	if (!g.on || absolute(dirfd, path, abs) != 0 || !inside(abs))
		return call_open(which, dirfd, path, flags, mode);
	lock();
	struct stat before;
	int existed = lstat(abs, &before) == 0;
	int writable = (flags & O_ACCMODE) != O_RDONLY;
	int creating = (flags & O_CREAT) && !existed;
	int truncating = (flags & O_TRUNC) && existed && writable && S_ISREG(before.st_mode);
	const char *name = NULL;
	uint64_t dir = 0;
	if ((flags & O_TMPFILE) == O_TMPFILE)
		unmodelled("open('%s', O_TMPFILE)", abs);
	if (creating)
		dir = parent_of(abs, &name);
	if (creating || truncating)
		point();
	int fd = call_open(which, dirfd, path, flags, mode);
	int saved = errno;
	struct stat st;
	if (fd >= 0 && fstat(fd, &st) == 0) {
		struct ident *id = creating ? NULL : find(st.st_dev, st.st_ino);
		if (creating) {
			id = add(&st, name);
			emit(PL_CREATE_FILE, id->fid, dir, name, 0, NULL, 0, NULL, 0);
		} else if (!id && writable) {
			unmodelled("'%s' was opened for writing but never seen", abs);
		} else if (id && truncating && !id->vol) {
			emit(PL_TRUNC, id->fid, 0, NULL, 0, NULL, 0, NULL, 0);
		}
	}
	unlock();
	errno = saved;
	return fd;
}

static mode_t mode_arg(int flags, va_list ap)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? (mode_t)va_arg(ap, int) : 0;
}

int open(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = mode_arg(flags, ap);
	va_end(ap);
	return open_hook(O_PLAIN, AT_FDCWD, path, flags, mode);
}

int open64(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = mode_arg(flags, ap);
	va_end(ap);
	return open_hook(O_64, AT_FDCWD, path, flags, mode);
}

int openat(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = mode_arg(flags, ap);
	va_end(ap);
	return open_hook(O_AT, dirfd, path, flags, mode);
}

int openat64(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = mode_arg(flags, ap);
	va_end(ap);
	return open_hook(O_AT64, dirfd, path, flags, mode);
}

int creat(const char *path, mode_t mode)
{
	return open_hook(O_PLAIN, AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode);
}

int creat64(const char *path, mode_t mode)
{
	return open_hook(O_64, AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode);
}

static int writes_mode(const char *mode)
{
	return mode && (strchr(mode, 'w') || strchr(mode, 'a') || strchr(mode, '+'));
}

static void stdio_check(const char *path, const char *mode)
{
	char abs[PATH_MAX];
	if (g.on && writes_mode(mode) && absolute(AT_FDCWD, path, abs) == 0 && inside(abs)) {
		lock();
		unmodelled("fopen('%s', \"%s\"): stdio writes are not recorded", abs, mode);
		unlock();
	}
}

FILE *fopen(const char *path, const char *mode)
{
	ensure();
	stdio_check(path, mode);
	return real_fopen(path, mode);
}

FILE *fopen64(const char *path, const char *mode)
{
	ensure();
	stdio_check(path, mode);
	return real_fopen64(path, mode);
}

FILE *freopen(const char *path, const char *mode, FILE *f)
{
	ensure();
	if (path)
		stdio_check(path, mode);
	return real_freopen(path, mode, f);
}

/* ---- writing ------------------------------------------------------------------ */

/* Runs a data call on fd: counted and recorded when fd is a file under
 * the directory. `len` of the data written is the call's result. */
ssize_t write(int fd, const void *buf, size_t n)
{
	ensure();
	struct ident *id;
	lock();
	if (!g.on || !(id = of_fd(fd))) {
		unlock();
		return real_write(fd, buf, n);
	}
	point();
	ssize_t w = real_write(fd, buf, n);
	int saved = errno;
	if (w > 0 && !id->vol) {
		off_t end = lseek(fd, 0, SEEK_CUR);
		emit(PL_WRITE, id->fid, 0, NULL, 0, NULL, (uint64_t)(end - w), buf, (uint64_t)w);
	}
	unlock();
	errno = saved;
	return w;
}

static ssize_t pwrite_hook(int fd, const void *buf, size_t n, off_t off, int is64)
{
	ensure();
	struct ident *id;
	lock();
	if (!g.on || !(id = of_fd(fd))) {
		unlock();
		return is64 ? real_pwrite64(fd, buf, n, off) : real_pwrite(fd, buf, n, off);
	}
	point();
	ssize_t w = is64 ? real_pwrite64(fd, buf, n, off) : real_pwrite(fd, buf, n, off);
	int saved = errno;
	if (w > 0 && !id->vol)
		emit(PL_WRITE, id->fid, 0, NULL, 0, NULL, (uint64_t)off, buf, (uint64_t)w);
	unlock();
	errno = saved;
	return w;
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off) { return pwrite_hook(fd, buf, n, off, 0); }

ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
	return pwrite_hook(fd, buf, n, (off_t)off, 1);
}

/* The first w bytes of iov, gathered (caller frees). */
static char *gather(const struct iovec *iov, int cnt, size_t w)
{
	char *p = malloc(w ? w : 1), *q = p;
	if (!p)
		abort();
	for (int i = 0; i < cnt && w > 0; i++) {
		size_t n = iov[i].iov_len < w ? iov[i].iov_len : w;
		memcpy(q, iov[i].iov_base, n);
		q += n;
		w -= n;
	}
	return p;
}

static ssize_t writev_hook(int fd, const struct iovec *iov, int cnt, off_t off, int positioned)
{
	ensure();
	struct ident *id;
	lock();
	if (!g.on || !(id = of_fd(fd))) {
		unlock();
		return positioned ? real_pwritev(fd, iov, cnt, off) : real_writev(fd, iov, cnt);
	}
	point();
	ssize_t w = positioned ? real_pwritev(fd, iov, cnt, off) : real_writev(fd, iov, cnt);
	int saved = errno;
	if (w > 0 && !id->vol) {
		if (!positioned)
			off = lseek(fd, 0, SEEK_CUR) - w;
		char *data = gather(iov, cnt, (size_t)w);
		emit(PL_WRITE, id->fid, 0, NULL, 0, NULL, (uint64_t)off, data, (uint64_t)w);
		free(data);
	}
	unlock();
	errno = saved;
	return w;
}

ssize_t writev(int fd, const struct iovec *iov, int cnt) { return writev_hook(fd, iov, cnt, 0, 0); }

ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
	return writev_hook(fd, iov, cnt, off, 1);
}

static int trunc_hook(int fd, const char *path, off_t len, int is64)
{
	ensure();
	struct ident *id = NULL;
	char abs[PATH_MAX];
	lock();
	if (g.on)
		id = path ? (absolute(AT_FDCWD, path, abs) == 0 && inside(abs) ? of_path(abs) : NULL)
			  : of_fd(fd);
	if (id)
		point();
	int rc = path ? (is64 ? real_truncate64(path, len) : real_truncate(path, len))
		      : (is64 ? real_ftruncate64(fd, len) : real_ftruncate(fd, len));
	int saved = errno;
	if (rc == 0 && id && !id->vol)
		emit(PL_TRUNC, id->fid, 0, NULL, 0, NULL, (uint64_t)len, NULL, 0);
	unlock();
	errno = saved;
	return rc;
}

int ftruncate(int fd, off_t len) { return trunc_hook(fd, NULL, len, 0); }
int ftruncate64(int fd, off64_t len) { return trunc_hook(fd, NULL, (off_t)len, 1); }
int truncate(const char *path, off_t len) { return trunc_hook(-1, path, len, 0); }
int truncate64(const char *path, off64_t len) { return trunc_hook(-1, path, (off_t)len, 1); }

/* fallocate that only reserves space changes nothing the model keeps;
 * growing the file is a truncation to the larger size (zeros). */
static int alloc_hook(int fd, int mode, off_t off, off_t len, int posix)
{
	ensure();
	struct ident *id;
	lock();
	if (!g.on || !(id = of_fd(fd))) {
		unlock();
		return posix ? real_posix_fallocate(fd, off, len) : real_fallocate(fd, mode, off, len);
	}
	if (mode & ~FALLOC_FL_KEEP_SIZE)
		unmodelled("fallocate mode %d on a file of the directory", mode);
	struct stat st;
	off_t size = fstat(fd, &st) == 0 ? st.st_size : 0;
	point();
	int rc = posix ? real_posix_fallocate(fd, off, len) : real_fallocate(fd, mode, off, len);
	int saved = errno;
	if (rc == 0 && !(mode & FALLOC_FL_KEEP_SIZE) && off + len > size && !id->vol)
		emit(PL_TRUNC, id->fid, 0, NULL, 0, NULL, (uint64_t)(off + len), NULL, 0);
	unlock();
	errno = saved;
	return rc;
}

int fallocate(int fd, int mode, off_t off, off_t len) { return alloc_hook(fd, mode, off, len, 0); }
int posix_fallocate(int fd, off_t off, off_t len) { return alloc_hook(fd, 0, off, len, 1); }

/* ---- making it durable ------------------------------------------------------- */

static int sync_hook(int fd, int data_only)
{
	ensure();
	struct ident *id;
	lock();
	if (!g.on || !(id = of_fd(fd))) {
		unlock();
		return data_only ? real_fdatasync(fd) : real_fsync(fd);
	}
	point();
	emit(PL_FSYNC, id->fid, 0, NULL, 0, NULL, 0, NULL, 0);
	unlock();
	return 0;
}

int fsync(int fd) { return sync_hook(fd, 0); }
int fdatasync(int fd) { return sync_hook(fd, 1); }

void sync(void)
{
	ensure();
	lock();
	if (g.on) {
		point();
		emit(PL_SYNCALL, 0, 0, NULL, 0, NULL, 0, NULL, 0);
	}
	unlock();
	if (!g.on)
		real_sync();
}

int syncfs(int fd)
{
	ensure();
	lock();
	if (g.on) {
		point();
		emit(PL_SYNCALL, 0, 0, NULL, 0, NULL, 0, NULL, 0);
	}
	unlock();
	return g.on ? 0 : real_syncfs(fd);
}

/* ---- names ------------------------------------------------------------------ */

static int rename_hook(int which, int olddirfd, const char *oldp, int newdirfd, const char *newp,
		       unsigned flags)
{
	ensure();
	char a[PATH_MAX], b[PATH_MAX];
	int in_a = g.on && absolute(olddirfd, oldp, a) == 0 && inside(a);
	int in_b = g.on && absolute(newdirfd, newp, b) == 0 && inside(b);
	struct ident *id = NULL;
	const char *na = NULL, *nb = NULL;
	uint64_t da = 0, db = 0;
	lock();
	if (in_a != in_b)
		unmodelled("rename('%s', '%s') across the directory's edge", in_a ? a : oldp,
			   in_b ? b : newp);
	else if (in_a && (flags & RENAME_EXCHANGE))
		unmodelled("renameat2('%s', '%s', RENAME_EXCHANGE)", a, b);
	if (in_a && in_b && (id = of_path(a))) {
		da = parent_of(a, &na);
		db = parent_of(b, &nb);
		point();
	}
	int rc = which == 0   ? real_rename(oldp, newp)
		 : which == 1 ? real_renameat(olddirfd, oldp, newdirfd, newp)
			      : real_renameat2(olddirfd, oldp, newdirfd, newp, flags);
	int saved = errno;
	if (rc == 0 && id)
		emit(PL_RENAME, id->fid, da, na, db, nb, 0, NULL, 0);
	unlock();
	errno = saved;
	return rc;
}

int rename(const char *a, const char *b) { return rename_hook(0, AT_FDCWD, a, AT_FDCWD, b, 0); }

int renameat(int da, const char *a, int db, const char *b) { return rename_hook(1, da, a, db, b, 0); }

int renameat2(int da, const char *a, int db, const char *b, unsigned flags)
{
	return rename_hook(2, da, a, db, b, flags);
}

static int unlink_hook(int which, int dirfd, const char *path, int flags)
{
	ensure();
	char abs[PATH_MAX];
	const char *name = NULL;
	uint64_t dir = 0;
	lock();
	int in = g.on && absolute(dirfd, path, abs) == 0 && below(abs) && of_path(abs) != NULL;
	if (in && (dir = parent_of(abs, &name)))
		point();
	int rc = which == 0 ? real_unlink(path) : which == 1 ? real_rmdir(path) : real_unlinkat(dirfd, path, flags);
	int saved = errno;
	if (rc == 0 && dir)
		emit(PL_UNLINK, 0, dir, name, 0, NULL, 0, NULL, 0);
	unlock();
	errno = saved;
	return rc;
}

int unlink(const char *path) { return unlink_hook(0, AT_FDCWD, path, 0); }
int rmdir(const char *path) { return unlink_hook(1, AT_FDCWD, path, 0); }
int unlinkat(int dirfd, const char *path, int flags) { return unlink_hook(2, dirfd, path, flags); }

static int mkdir_hook(int at, int dirfd, const char *path, mode_t mode)
{
	ensure();
	char abs[PATH_MAX];
	const char *name = NULL;
	uint64_t dir = 0;
	lock();
	if (g.on && absolute(dirfd, path, abs) == 0 && below(abs) && (dir = parent_of(abs, &name)))
		point();
	int rc = at ? real_mkdirat(dirfd, path, mode) : real_mkdir(path, mode);
	int saved = errno;
	struct stat st;
	if (rc == 0 && dir && lstat(abs, &st) == 0)
		emit(PL_CREATE_DIR, add(&st, name)->fid, dir, name, 0, NULL, 0, NULL, 0);
	unlock();
	errno = saved;
	return rc;
}

int mkdir(const char *path, mode_t mode) { return mkdir_hook(0, AT_FDCWD, path, mode); }
int mkdirat(int dirfd, const char *path, mode_t mode) { return mkdir_hook(1, dirfd, path, mode); }

static int link_hook(int at, int olddirfd, const char *oldp, int newdirfd, const char *newp, int flags)
{
	ensure();
	char a[PATH_MAX], b[PATH_MAX];
	int in_a = g.on && absolute(olddirfd, oldp, a) == 0 && inside(a);
	int in_b = g.on && absolute(newdirfd, newp, b) == 0 && inside(b);
	struct ident *id = NULL;
	const char *name = NULL;
	uint64_t dir = 0;
	lock();
	if (in_a != in_b)
		unmodelled("link('%s', '%s') across the directory's edge", in_a ? a : oldp, in_b ? b : newp);
	if (in_a && in_b && (id = of_path(a)) && (dir = parent_of(b, &name)))
		point();
	int rc = at ? real_linkat(olddirfd, oldp, newdirfd, newp, flags) : real_link(oldp, newp);
	int saved = errno;
	if (rc == 0 && dir)
		emit(PL_LINK, id->fid, dir, name, 0, NULL, 0, NULL, 0);
	unlock();
	errno = saved;
	return rc;
}

int link(const char *a, const char *b) { return link_hook(0, AT_FDCWD, a, AT_FDCWD, b, 0); }

int linkat(int da, const char *a, int db, const char *b, int flags)
{
	return link_hook(1, da, a, db, b, flags);
}

static void symlink_check(int dirfd, const char *path)
{
	char abs[PATH_MAX];
	if (g.on && absolute(dirfd, path, abs) == 0 && inside(abs)) {
		lock();
		unmodelled("symlink '%s'", abs);
		unlock();
	}
}

int symlink(const char *target, const char *path)
{
	ensure();
	symlink_check(AT_FDCWD, path);
	return real_symlink(target, path);
}

int symlinkat(const char *target, int dirfd, const char *path)
{
	ensure();
	symlink_check(dirfd, path);
	return real_symlinkat(target, dirfd, path);
}

/* ---- mappings ------------------------------------------------------------------- */

static void map_check(int prot, int flags, int fd)
{
	if (!g.on || fd < 0 || !(flags & MAP_SHARED) || !(prot & PROT_WRITE))
		return;
	lock();
	struct ident *id = of_fd(fd);
	if (id && !id->vol)
		unmodelled("a writable shared mapping of file %llu", (unsigned long long)id->fid);
	unlock();
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	ensure();
	map_check(prot, flags, fd);
	return real_mmap(addr, len, prot, flags, fd, off);
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
	ensure();
	map_check(prot, flags, fd);
	return real_mmap64(addr, len, prot, flags, fd, off);
}
