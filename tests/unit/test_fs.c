/*
 * test_fs.c — base/fs.h on its own: what a reader refuses to open (issue
 * 12, item 10). A FIFO is refused at once instead of blocking the reader
 * (and, in an import, the write lock it holds); with ZC_FS_NOFOLLOW a
 * symbolic link is refused as a file and always as a directory; the
 * *_at functions name the file as given, relative to their directory.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/fs.h"
#include "harness.h"

static char *at(const char *dir, const char *name)
{
	char *p = NULL;
	if (asprintf(&p, "%s/%s", dir, name) < 0)
		abort();
	return p;
}

static void on_alarm(int sig)
{
	(void)sig;
	static const char msg[] = "test_fs: a read blocked on a FIFO\n";
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(3);
	_exit(3);
}

static void issue12_10_readers_refuse_a_fifo_at_once(void)
{
	const char *d = t_tmpdir();
	char *fifo = at(d, "INDEX.md");
	CHECK_INT(mkfifo(fifo, 0644), 0);
	signal(SIGALRM, on_alarm);
	alarm(10);
	char *data = NULL;
	size_t len = 0;
	struct zc_err e = {0};
	CHECK_INT(zc_read_file(fifo, 1024, &data, &len, &e), ZCOR_EINVAL);
	CHECK_HAS(e.msg, "not a regular file");
	CHECK(data == NULL);
	CHECK_INT(zc_read_file_nofollow(fifo, 1024, &data, &len, &e), ZCOR_EINVAL);
	int dfd = open(d, O_RDONLY | O_DIRECTORY);
	CHECK_INT(zc_read_file_at(dfd, "INDEX.md", ZC_FS_NOFOLLOW, 1024, &data, &len, &e), ZCOR_EINVAL);
	/* relative to its directory: the message names no path above it */
	CHECK_STR(e.msg, "'INDEX.md' is not a regular file");
	CHECK_INT(zc_open_dir_at(dfd, "INDEX.md", &e), -1);
	CHECK_INT(e.code, ZCOR_EINVAL);
	alarm(0);
	close(dfd);
	free(fifo);
}

static void issue12_8_nofollow_refuses_links_to_files_and_directories(void)
{
	const char *d = t_tmpdir();
	char *secret = at(d, "secret.txt"), *link = at(d, "p.gif"), *dlink = at(d, "conversations");
	FILE *f = fopen(secret, "w");
	if (f) {
		fputs("secret\n", f);
		fclose(f);
	}
	CHECK_INT(symlink(secret, link), 0);
	CHECK_INT(symlink(d, dlink), 0);
	char *data = NULL;
	size_t len = 0;
	struct zc_err e = {0};
	/* zc_read_file follows (the operator named the file), nofollow not */
	CHECK_INT(zc_read_file(link, 1024, &data, &len, &e), ZCOR_OK);
	CHECK_STR(data, "secret\n");
	zc_free(data);
	data = NULL;
	CHECK_INT(zc_read_file_nofollow(link, 1024, &data, &len, &e), ZCOR_EINVAL);
	CHECK_HAS(e.msg, "symbolic link");
	CHECK(data == NULL);
	int dfd = open(d, O_RDONLY | O_DIRECTORY);
	CHECK_INT(zc_read_file_at(dfd, "p.gif", ZC_FS_NOFOLLOW, 1024, &data, &len, &e), ZCOR_EINVAL);
	CHECK_STR(e.msg, "'p.gif' is a symbolic link, not a file");
	CHECK_INT(zc_read_file_at(dfd, "secret.txt", ZC_FS_NOFOLLOW, 1024, &data, &len, &e), ZCOR_OK);
	CHECK_STR(data, "secret\n");
	zc_free(data);
	CHECK_INT(zc_open_dir_at(dfd, "conversations", &e), -1);
	CHECK_STR(e.msg, "'conversations' is a symbolic link, not a directory");
	CHECK_INT(zc_open_dir_at(dfd, "secret.txt", &e), -1);
	CHECK_STR(e.msg, "'secret.txt' is not a directory");
	CHECK_INT(zc_open_dir_at(dfd, "absent", &e), -1);
	CHECK_INT(e.code, ZCOR_ENOTFOUND);
	int sub = zc_open_dir_at(dfd, ".", &e);
	CHECK(sub >= 0);
	if (sub >= 0)
		close(sub);
	close(dfd);
	free(secret);
	free(link);
	free(dlink);
}

/* Issue 13, item 5: the one "mkdir + atomic write", zc_write_file_inside:
 * the directories of rel are made under root, the file is there whole, a
 * second write replaces it and leaves no temp file; a symbolic link among
 * the directories is refused and nothing is written through it. */
static void issue13_5_write_file_inside(void)
{
	const char *root = t_tmpdir();
	struct zc_err e = {0};
	CHECK_INT(zc_write_file_inside(root, "a/b/c.txt", "one", 3, &e), ZCOR_OK);
	char *f = at(root, "a/b/c.txt"), *data = NULL;
	size_t len = 0;
	CHECK_INT(zc_read_file(f, 100, &data, &len, &e), ZCOR_OK);
	CHECK_STR(data, "one");
	zc_free(data);
	CHECK_INT(zc_write_file_inside(root, "a/b/c.txt", "second", 6, &e), ZCOR_OK);
	CHECK_INT(zc_read_file(f, 100, &data, &len, &e), ZCOR_OK);
	CHECK_STR(data, "second");
	zc_free(data);
	char *ab = at(root, "a/b");
	int others = 0;
	DIR *d = opendir(ab);
	for (struct dirent *de; d && (de = readdir(d));)
		others += de->d_name[0] != '.' && strcmp(de->d_name, "c.txt") != 0;
	if (d)
		closedir(d);
	CHECK_INT(others, 0);
	/* no directory in rel: the file straight under root */
	CHECK_INT(zc_write_file_inside(root, "top.txt", "t", 1, &e), ZCOR_OK);
	char *top = at(root, "top.txt");
	CHECK_INT(zc_file_kind(top), ZC_FILE_REGULAR);

	/* a planted link to a directory outside root */
	const char *outside = t_tmpdir();
	char *link = at(root, "planted");
	CHECK_INT(symlink(outside, link), 0);
	CHECK_INT(zc_write_file_inside(root, "planted/x.txt", "no", 2, &e), ZCOR_EINVAL);
	CHECK_HAS(e.msg, "'planted' is a symbolic link");
	char *through = at(outside, "x.txt");
	CHECK_INT(zc_file_kind(through), ZC_FILE_NONE);
	free(through);
	free(link);
	free(top);
	free(ab);
	free(f);
}

const struct t_case t_cases[] = {
	{"issue13_5_write_file_inside", issue13_5_write_file_inside},
	{"issue12_10_readers_refuse_a_fifo_at_once", issue12_10_readers_refuse_a_fifo_at_once},
	{"issue12_8_nofollow_refuses_links_to_files_and_directories",
	 issue12_8_nofollow_refuses_links_to_files_and_directories},
	{0},
};
