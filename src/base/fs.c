/*
 * fs.c — bounded reads and atomic writes (see fs.h). Base layer: knows
 * nothing of memories. It never follows a link where a caller asked it
 * not to, never opens anything but a regular file for reading, and never
 * leaves a half-written file under a name (temporary, fsync, rename,
 * fsync of the directory).
 */
#include "base/fs.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/utf8.h"

int zc_errno_code(int err)
{
	switch (err) {
	case ENOSPC:
	case EDQUOT:
	case EFBIG:
		return ZCOR_EFULL;
	case EROFS:
	case EACCES:
	case EPERM:
		return ZCOR_EREADONLY;
	case ENOENT:
		return ZCOR_ENOTFOUND;
	default:
		return ZCOR_EIO;
	}
}

char *zc_path_join(const char *dir, const char *name)
{
	struct zc_buf b = ZC_BUF_INIT;
	zc_buf_adds(&b, dir);
	if (b.len && b.p[b.len - 1] != '/')
		zc_buf_addc(&b, '/');
	zc_buf_adds(&b, name);
	return zc_buf_detach(&b);
}

int zc_file_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

enum zc_file_kind zc_file_kind(const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return ZC_FILE_NONE;
	if (S_ISREG(st.st_mode))
		return ZC_FILE_REGULAR;
	if (S_ISDIR(st.st_mode))
		return ZC_FILE_DIR;
	return S_ISLNK(st.st_mode) ? ZC_FILE_LINK : ZC_FILE_OTHER;
}

/* mkdir path unless it is there, and make a new one's name durable: a new
 * directory's name is durable only once its parent is synced; until then a
 * power cut takes it, and every file synced into it, away. 0, or -1 with
 * errno set. */
static int make_dir(const char *path)
{
	if (mkdir(path, 0755) != 0)
		return errno == EEXIST ? 0 : -1;
	return zc_fsync_parent(path);
}

int zc_dir_inside(const char *root, const char *rel, int flags, struct zc_err *e)
{
	struct zc_buf b = ZC_BUF_INIT;
	int rc = ZCOR_OK;
	zc_buf_adds(&b, root);
	size_t root_len = b.len;
	for (const char *p = rel; !rc && p && *p;) {
		const char *end = strchr(p, '/');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		/* our own paths only: a caller's bug, not the world's input */
		assert(n > 0 && !(n == 1 && p[0] == '.') && !(n == 2 && p[0] == '.' && p[1] == '.'));
		zc_buf_addc(&b, '/');
		zc_buf_add(&b, p, n);
		enum zc_file_kind k = zc_file_kind(b.p);
		if (k == ZC_FILE_NONE && (flags & ZC_DIR_CREATE)) {
			if (make_dir(b.p) != 0)
				rc = zc_fail(e, zc_errno_code(errno), "cannot create directory '%s': %s",
					     ZC_Q(b.p + root_len + 1, 200), strerror(errno));
			else
				k = zc_file_kind(b.p);
		}
		if (rc)
			break;
		if (k == ZC_FILE_NONE)
			rc = zc_fail(e, ZCOR_ENOTFOUND, "there is no directory '%s'", ZC_Q(b.p + root_len + 1, 200));
		else if (k == ZC_FILE_LINK)
			rc = zc_fail(e, ZCOR_EINVAL,
				     "'%s' is a symbolic link: zcor never follows a link here; replace it "
				     "with a real directory",
				     ZC_Q(b.p + root_len + 1, 200));
		else if (k != ZC_FILE_DIR)
			rc = zc_fail(e, ZCOR_EINVAL, "'%s' is not a directory; move it away",
				     ZC_Q(b.p + root_len + 1, 200));
		p = end ? end + 1 : NULL;
	}
	zc_buf_release(&b);
	return rc;
}

int zc_open_regular_at(int dirfd, const char *path, int flags, struct zc_err *e)
{
	int oflags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;
	if (flags & ZC_FS_NOFOLLOW)
		oflags |= O_NOFOLLOW;
	int fd = openat(dirfd, path, oflags);
	if (fd < 0) {
		if (errno == ELOOP && (flags & ZC_FS_NOFOLLOW))
			zc_fail(e, ZCOR_EINVAL, "'%s' is a symbolic link, not a file", path);
		else
			zc_fail(e, zc_errno_code(errno), "cannot open '%s': %s", path, strerror(errno));
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		zc_fail(e, ZCOR_EINVAL, "'%s' is not a regular file", path);
		return -1;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

int zc_open_regular(const char *path, int flags, struct zc_err *e)
{
	return zc_open_regular_at(AT_FDCWD, path, flags, e);
}

int zc_open_dir_at(int dirfd, const char *path, struct zc_err *e)
{
	/* O_NONBLOCK: a FIFO in a directory's place never hangs the open */
	int fd = openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0)
		return fd;
	int err = errno;
	struct stat st;
	/* Linux says ENOTDIR for a link under O_DIRECTORY | O_NOFOLLOW */
	if (err == ELOOP || (err == ENOTDIR && fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			     S_ISLNK(st.st_mode)))
		zc_fail(e, ZCOR_EINVAL, "'%s' is a symbolic link, not a directory", path);
	else if (err == ENOTDIR)
		zc_fail(e, ZCOR_EINVAL, "'%s' is not a directory", path);
	else
		zc_fail(e, zc_errno_code(err), "cannot open '%s': %s", path, strerror(err));
	return -1;
}

static int read_file(int dirfd, const char *path, int flags, size_t max, char **data, size_t *len,
		     struct zc_err *e)
{
	*data = NULL;
	if (len)
		*len = 0;
	struct zc_err oe = {0};
	int fd = zc_open_regular_at(dirfd, path, flags, &oe);
	if (fd < 0) {
		if (e)
			*e = oe;
		return oe.code;
	}
	struct zc_buf b = ZC_BUF_INIT;
	char chunk[65536];
	int rc = ZCOR_OK;
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = zc_fail(e, ZCOR_EIO, "cannot read '%s': %s", path, strerror(errno));
			break;
		}
		if (n == 0)
			break;
		if (b.len + (size_t)n > max) {
			rc = zc_fail(e, ZCOR_EINVAL, "'%s' is larger than the limit of %zu bytes", path, max);
			break;
		}
		zc_buf_add(&b, chunk, (size_t)n);
	}
	close(fd);
	if (rc) {
		zc_buf_release(&b);
		return rc;
	}
	if (len)
		*len = b.len;
	*data = zc_buf_detach(&b);
	return ZCOR_OK;
}

int zc_read_file(const char *path, size_t max, char **data, size_t *len, struct zc_err *e)
{
	return read_file(AT_FDCWD, path, 0, max, data, len, e);
}

int zc_read_file_nofollow(const char *path, size_t max, char **data, size_t *len, struct zc_err *e)
{
	return read_file(AT_FDCWD, path, ZC_FS_NOFOLLOW, max, data, len, e);
}

int zc_read_file_at(int dirfd, const char *path, int flags, size_t max, char **data, size_t *len,
		    struct zc_err *e)
{
	return read_file(dirfd, path, flags, max, data, len, e);
}

int zc_fsync_parent(const char *path)
{
	char *dir = zc_strdup(path);
	char *slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = '\0';
	else if (slash)
		*slash = '\0';
	else {
		zc_free(dir);
		dir = zc_strdup(".");
	}
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	zc_free(dir);
	if (fd < 0)
		return -1;
	int r = fsync(fd);
	int saved = errno;
	close(fd);
	errno = saved;
	return r;
}

int zc_write_file_atomic(const char *path, const void *data, size_t len, struct zc_err *e)
{
	struct zc_buf tmp = ZC_BUF_INIT;
	/* unique per write: threads of one process (serve's handles) may
	 * write the same file at the same moment */
	static unsigned long seq;
	zc_buf_addf(&tmp, "%s.tmp-%ld-%lu", path, (long)getpid(), __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED));
	int rc = ZCOR_OK;
	int fd = open(tmp.p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		rc = zc_fail(e, zc_errno_code(errno), "cannot write '%s': %s", path, strerror(errno));
		goto out;
	}
	const char *p = data;
	size_t left = len;
	while (left > 0) {
		ssize_t n = write(fd, p, left);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = zc_fail(e, zc_errno_code(errno), "cannot write '%s': %s", path, strerror(errno));
			break;
		}
		p += n;
		left -= (size_t)n;
	}
	if (!rc && fsync(fd) != 0)
		rc = zc_fail(e, zc_errno_code(errno), "cannot write '%s': %s", path, strerror(errno));
	if (close(fd) != 0 && !rc)
		rc = zc_fail(e, zc_errno_code(errno), "cannot write '%s': %s", path, strerror(errno));
	if (!rc && rename(tmp.p, path) != 0)
		rc = zc_fail(e, zc_errno_code(errno), "cannot write '%s': %s", path, strerror(errno));
	if (rc)
		unlink(tmp.p);
	else if (zc_fsync_parent(path) != 0) /* the new name is not durable yet */
		rc = zc_fail(e, zc_errno_code(errno), "cannot write '%s': syncing its directory: %s", path,
			     strerror(errno));
out:
	zc_buf_release(&tmp);
	return rc;
}

int zc_mkdir_p(const char *path, struct zc_err *e)
{
	char *p = zc_strdup(path);
	int rc = ZCOR_OK;
	for (char *s = p + 1;; s++) {
		if (*s == '/' || *s == '\0') {
			char c = *s;
			*s = '\0';
			if (make_dir(p) != 0) {
				rc = zc_fail(e, zc_errno_code(errno), "cannot create directory '%s': %s", p,
					     strerror(errno));
				break;
			}
			*s = c;
			if (c == '\0')
				break;
		}
	}
	zc_free(p);
	return rc;
}

int zc_file_changed(const char *path, struct zc_file_id *id)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return -1;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	/* now - mtime < 1 s (or a clock that went back): a write within the
	 * same tick would not show */
	int racy = now.tv_sec - st.st_mtim.tv_sec < 1 ||
		   (now.tv_sec - st.st_mtim.tv_sec == 1 && now.tv_nsec < st.st_mtim.tv_nsec);
	if (id->known && st.st_dev == id->dev && st.st_ino == id->ino && st.st_size == id->size &&
	    st.st_mtim.tv_sec == id->mtime.tv_sec && st.st_mtim.tv_nsec == id->mtime.tv_nsec) {
		int was = id->racy;
		id->racy = racy;
		return was ? 2 : 0;
	}
	id->racy = racy;
	id->known = 1;
	id->dev = st.st_dev;
	id->ino = st.st_ino;
	id->size = st.st_size;
	id->mtime = st.st_mtim;
	return 1;
}

const char *zc_file_ext(const char *name)
{
	const char *dot = name ? strrchr(name, '.') : NULL;
	return dot && dot != name && dot[1] && !strchr(dot, '/') ? dot : NULL;
}

int zc_write_file_inside(const char *root, const char *rel, const void *data, size_t len,
			 struct zc_err *e)
{
	assert(root && rel && rel[0] != '/');
	char *path = zc_path_join(root, rel);
	const char *slash = strrchr(rel, '/');
	int rc = ZCOR_OK;
	if (slash) {
		char *dir = zc_strndup(rel, (size_t)(slash - rel));
		rc = zc_dir_inside(root, dir, ZC_DIR_CREATE, e);
		zc_free(dir);
	}
	if (!rc)
		rc = zc_write_file_atomic(path, data, len, e);
	zc_free(path);
	return rc;
}
