/*
 * test_backups.c — issue 18's Backups panel in libzcor: zcor_backups lists
 * only the files zcor writes in backups/ (its state copies, with the "-n"
 * of a second one in the same millisecond, and migrate cognition's view
 * copies), newest first, regular files only; zcor_backup_open opens such a
 * file and nothing else (no path, no "..", no other name, no link, no
 * directory); a caller bound to a group or private chat is refused.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

/* 2026-06-15T12:00:00Z */
#define T0 1781524800000LL

static int64_t clock_of(void *ud) { return *(int64_t *)ud; }

static json_t *list(zcor *z, const char *conv, int *rc)
{
	struct zcor_ctx ctx = {ZCOR_ACTOR_UI, conv};
	char *out = NULL;
	*rc = zcor_backups(z, &ctx, &out);
	return t_answer(z, *rc, out);
}

static void put(const char *dir, const char *name, const char *text)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/backups/%s", dir, name);
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static int open_rc(zcor *z, const char *conv, const char *name, char *buf, size_t cap)
{
	struct zcor_ctx ctx = {ZCOR_ACTOR_UI, conv};
	int fd = -1;
	long long size = 0;
	int rc = zcor_backup_open(z, &ctx, name, &fd, &size);
	if (buf)
		buf[0] = '\0';
	if (rc == ZCOR_OK) {
		ssize_t n = read(fd, buf, cap - 1);
		CHECK(n == size || (size_t)size >= cap - 1);
		if (buf && n >= 0)
			buf[n] = '\0';
		close(fd);
	} else {
		CHECK_INT(fd, -1);
	}
	return rc;
}

static void issue18_backups_only_zcors_files(void)
{
	zcor *z = t_open();
	const char *dir = zcor_dir(z);
	int64_t now = T0;
	zcor_set_clock(z, clock_of, &now);
	int rc;
	json_t *l = list(z, NULL, &rc);
	CHECK_INT(rc, ZCOR_OK); /* no backups/ yet */
	CHECK_INT(json_array_size(t_get(l, "items")), 0);
	json_decref(l);

	json_decref(t_call_ok(z, NULL, "zcor_memory_write", "{\"title\":\"备份\",\"content\":\"一\"}"));
	json_decref(t_call_ok(z, NULL, "zcor_memory_backup", "{}"));
	json_decref(t_call_ok(z, NULL, "zcor_memory_backup", "{}")); /* the same millisecond: "-1" */
	now = T0 + 1000;
	json_decref(t_call_ok(z, NULL, "zcor_memory_backup", "{}"));
	put(dir, "COGNITION.md.bak-20260101T000000000Z", "# 认知\n");
	/* not zcor's: other names, a temp file, a directory, links */
	put(dir, "notes.txt", "x");
	put(dir, "memory-state-2026.json", "x");
	put(dir, "memory-state-20260615T120000000Z.json.tmp", "x");
	put(dir, "memory-state-20260615T120000000Z-0.json", "x");
	put(dir, "COGNITION.md.bak-20260101T000000000Z.old", "x");
	char path[1024], target[1024];
	snprintf(path, sizeof(path), "%s/backups/memory-state-20200101T000000000Z.json", dir);
	snprintf(target, sizeof(target), "%s/memory.db", dir);
	CHECK_INT(symlink(target, path), 0);
	snprintf(path, sizeof(path), "%s/backups/memory-state-20200102T000000000Z.json", dir);
	CHECK_INT(mkdir(path, 0700), 0);

	l = list(z, NULL, &rc);
	CHECK_INT(rc, ZCOR_OK);
	CHECK_INT(json_array_size(t_get(l, "items")), 4);
	CHECK_STR(t_str(l, "items.0.name"), "memory-state-20260615T120001000Z.json");
	CHECK_STR(t_str(l, "items.0.time"), "2026-06-15T12:00:01.000Z");
	CHECK_STR(t_str(l, "items.0.kind"), "state");
	CHECK_STR(t_str(l, "items.1.name"), "memory-state-20260615T120000000Z-1.json");
	CHECK_STR(t_str(l, "items.2.name"), "memory-state-20260615T120000000Z.json");
	CHECK_STR(t_str(l, "items.3.name"), "COGNITION.md.bak-20260101T000000000Z");
	CHECK_STR(t_str(l, "items.3.kind"), "view");
	CHECK_INT(t_int(l, "items.3.size"), 9);
	CHECK(json_is_false(t_get(l, "truncated")));
	json_decref(l);

	char buf[4096];
	CHECK_INT(open_rc(z, NULL, "memory-state-20260615T120000000Z.json", buf, sizeof(buf)), ZCOR_OK);
	CHECK_HAS(buf, "\"zcor-memory-state\"");
	CHECK_HAS(buf, "备份");
	CHECK_INT(open_rc(z, NULL, "COGNITION.md.bak-20260101T000000000Z", buf, sizeof(buf)), ZCOR_OK);
	CHECK_STR(buf, "# 认知\n");
	static const char *const refused[] = {"../memory.db", "..", ".", "", "memory.db", "/etc/passwd",
					      "backups/memory-state-20260615T120000000Z.json", "notes.txt",
					      "memory-state-20260615T120000000Z.json.tmp",
					      "memory-state-20260615T120000000Z-0.json"};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		CHECK_INT(open_rc(z, NULL, refused[i], buf, sizeof(buf)), ZCOR_EINVAL);
		CHECK_HAS(zcor_errmsg(z), "not the name of a backup zcor wrote");
	}
	CHECK_INT(open_rc(z, NULL, "memory-state-20200101T000000000Z.json", buf, sizeof(buf)), ZCOR_EINVAL);
	CHECK_HAS(zcor_errmsg(z), "not a regular file");
	CHECK_INT(open_rc(z, NULL, "memory-state-20200102T000000000Z.json", buf, sizeof(buf)), ZCOR_EINVAL);
	CHECK_INT(open_rc(z, NULL, "memory-state-20990101T000000000Z.json", buf, sizeof(buf)), ZCOR_ENOTFOUND);

	/* the operator's: not a group's or a private chat's; a console is the operator */
	l = list(z, "group:1", &rc);
	CHECK_INT(rc, ZCOR_EFORBIDDEN);
	json_decref(l);
	CHECK_INT(open_rc(z, "private:5", "memory-state-20260615T120000000Z.json", buf, sizeof(buf)), ZCOR_EFORBIDDEN);
	l = list(z, "console:web", &rc);
	CHECK_INT(rc, ZCOR_OK);
	json_decref(l);

	/* backups/ itself a link: refused, nothing listed or read */
	char real[1024];
	snprintf(path, sizeof(path), "%s/backups", dir);
	snprintf(real, sizeof(real), "%s/backups.real", dir);
	CHECK_INT(rename(path, real), 0);
	CHECK_INT(symlink(real, path), 0);
	l = list(z, NULL, &rc);
	CHECK_INT(rc, ZCOR_EINVAL);
	CHECK_HAS(t_errmsg(l), "symbolic link");
	json_decref(l);
	CHECK_INT(open_rc(z, NULL, "memory-state-20260615T120000000Z.json", buf, sizeof(buf)), ZCOR_EINVAL);
	zcor_close(z);
}

const struct t_case t_cases[] = {
	{"issue18_backups_only_zcors_files", issue18_backups_only_zcors_files},
	{0},
};
