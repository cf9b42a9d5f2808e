/*
 * handle.c — the memory handle: opening a memory directory (after the
 * check that its memory.db may be opened), closing it, and wiring the
 * runner's hooks (the migration before the first call, the views'
 * citations before a change commits, mirror/ after it).
 *
 * Memory layer, its top: the one place that knows every subscriber of
 * the runner (op.c), as a program's main wires its callbacks. No rule
 * lives here, and nothing in memory/ calls it.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/fs.h"
#include "base/timeutil.h"
#include "base/utf8.h"
#include "memory/memory.h"
#include "memory/mirror.h"
#include "memory/view.h"
#include "text/norm.h"

static int64_t system_clock(void *ud) { return zc_time_now_ms(); }

/* ---- the directory -------------------------------------------------- */

/*
 * What marks a directory as used, for a 0-byte memory.db: what only a
 * store that once held something leaves behind. A non-empty memory.db-wal
 * (SQLite would delete it beside an empty memory.db: its changes lost),
 * anything in backups/, stickers/, media/, mirror/ or blobs/, a state file
 * to migrate or a migration snapshot. Not config.json, synonyms.json,
 * PERSONA.md or serve.token: a person may write those into a new
 * directory, and zcor makes them on its first open. Puts what it found
 * into what ("" when nothing).
 */
static void used_by(const char *dir, char *what, size_t cap)
{
	static const char *const dirs[] = {"backups", "stickers", "media", "mirror", "blobs"};
	static const char *const files[] = {"memory-state.json", "memories.json",
					    "memory-state.v1.json", "memory-state.v2.json"};
	struct stat st;
	what[0] = '\0';
	char *wal = zc_path_join(dir, "memory.db-wal");
	if (lstat(wal, &st) == 0 && (!S_ISREG(st.st_mode) || st.st_size > 0))
		snprintf(what, cap, "memory.db-wal holds %lld bytes of changes", (long long)st.st_size);
	zc_free(wal);
	for (size_t i = 0; !what[0] && i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		char *p = zc_path_join(dir, dirs[i]);
		enum zc_file_kind k = zc_file_kind(p);
		DIR *d = k == ZC_FILE_DIR ? opendir(p) : NULL;
		struct dirent *de;
		while (d && !what[0] && (de = readdir(d)))
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				snprintf(what, cap, "%s/%s", dirs[i], ZC_Q(de->d_name, 80));
		if (d)
			closedir(d);
		if (!what[0] && k != ZC_FILE_NONE && k != ZC_FILE_DIR)
			snprintf(what, cap, "%s", dirs[i]);
		zc_free(p);
	}
	for (size_t i = 0; !what[0] && i < sizeof(files) / sizeof(files[0]); i++) {
		char *p = zc_path_join(dir, files[i]);
		if (zc_file_kind(p) != ZC_FILE_NONE)
			snprintf(what, cap, "%s", files[i]);
		zc_free(p);
	}
}

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

int zc_mem_check_db(const char *dir, const char **code, struct zc_err *e)
{
	char *db = zc_path_join(dir, "memory.db"), *wal = zc_path_join(dir, "memory.db-wal");
	char what[256] = "";
	unsigned char h[100];
	struct stat st, wst;
	int rc = ZCOR_OK;
	const char *found = NULL;
	if (code)
		*code = NULL;
	/* SQLite opens memory.db-wal and -shm by name, following a link and
	 * blocking on a FIFO: a planted one is refused before it can */
	static const char *const beside[] = {"memory.db-wal", "memory.db-shm"};
	for (size_t i = 0; i < sizeof(beside) / sizeof(beside[0]); i++) {
		char *p = zc_path_join(dir, beside[i]);
		enum zc_file_kind k = zc_file_kind(p);
		zc_free(p);
		if (k != ZC_FILE_NONE && k != ZC_FILE_REGULAR) {
			found = "UNSAFE_PATH";
			rc = zc_fail(e, ZCOR_EIO,
				     "%s is %s, not a file SQLite wrote: memory.db was not opened and nothing "
				     "was changed; remove it (it is not zcor's), then open the directory again",
				     beside[i], k == ZC_FILE_LINK ? "a symbolic link" : "a special file");
			goto out;
		}
	}
	if (lstat(db, &st) != 0)
		goto out; /* a new store */
	if (!S_ISREG(st.st_mode)) {
		found = "MEMORY_DB_DAMAGED";
		rc = zc_fail(e, ZCOR_EIO,
			     "memory.db is %s, not a file: zcor opens only a regular memory.db inside "
			     "the directory; put the real file back (or restore a backup from backups/)",
			     S_ISLNK(st.st_mode) ? "a symbolic link" : "something else");
		goto out;
	}
	if (st.st_size == 0) {
		used_by(dir, what, sizeof(what));
		if (what[0]) {
			found = "MEMORY_DB_EMPTY";
			rc = zc_fail(e, ZCOR_EIO,
				     "memory.db is empty (0 bytes) but the directory holds data (%s), so it "
				     "was not opened as a new, empty store and nothing was changed; restore "
				     "the newest backup: move memory.db (and memory.db-wal, if any) aside "
				     "together, then run `zcor restore backups/<newest>.json`; if the "
				     "directory is really new, remove memory.db",
				     what);
		}
		goto out;
	}
	/* the file header (sqlite.org/fileformat.html): the magic string, the
	 * page size and, when valid, the size in pages */
	/* through SQLite: an open()/close() of our own here would drop the
	 * locks of this process's other connections (serve opens handles
	 * while others run) */
	/* Another process may be checkpointing meanwhile (a CLI call closing
	 * folds its WAL in): page 1 with the new size is written before the
	 * pages after it, and the WAL is gone once the checkpoint ends. So
	 * the header, the file's size and the WAL are read in that order, and
	 * a header that looks damaged is read again for up to half a second
	 * before the file is called damaged: a checkpoint ends, a damaged
	 * file stays damaged. */
	for (int attempt = 0;; attempt++) {
		long n = zc_store_read_header(db, h, sizeof(h));
		if (n < 0) {
			rc = zc_fail(e, ZCOR_EIO, "cannot read memory.db; check its permissions");
			goto out;
		}
		if (lstat(db, &st) != 0)
			goto out; /* removed meanwhile: a new store, as above */
		/* while a WAL has frames, page 1 may be torn in the file (a power
		 * cut during a checkpoint) and whole in the WAL, which SQLite
		 * reads first: only without one is a bad header a damaged file */
		int wal_pending = lstat(wal, &wst) == 0 && wst.st_size > 0;
		int not_sqlite = !wal_pending && (n < (long)sizeof(h) || memcmp(h, "SQLite format 3", 16) != 0);
		unsigned psize = (unsigned)h[16] << 8 | h[17];
		psize = psize == 1 ? 65536 : psize;
		unsigned long long pages = be32(h + 28), want = pages * psize;
		/* the same for the size: the file may lag its header (a
		 * checkpoint stopped half-way is finished from the WAL) */
		int cut = !not_sqlite && !wal_pending && pages > 0 && be32(h + 24) == be32(h + 92) &&
			  (unsigned long long)st.st_size < want;
		if (!not_sqlite && !cut)
			break;
		if (attempt < 25) {
			struct timespec pause = {0, 20 * 1000 * 1000};
			nanosleep(&pause, NULL);
			continue;
		}
		found = "MEMORY_DB_DAMAGED";
		if (not_sqlite)
			rc = zc_fail(e, ZCOR_EIO,
				     "memory.db is not a SQLite database (%lld bytes that do not start with "
				     "its header); it was left as it is: move it aside and restore the newest "
				     "backup (`zcor restore backups/<newest>.json`)",
				     (long long)st.st_size);
		else
			rc = zc_fail(e, ZCOR_EIO,
				     "memory.db is cut off: %lld bytes of the %llu its header says; it was "
				     "left as it is: move it aside and restore the newest backup (`zcor "
				     "restore backups/<newest>.json`)",
				     (long long)st.st_size, want);
		break;
	}
out:
	if (code)
		*code = found;
	zc_free(db);
	zc_free(wal);
	return rc;
}

/* ---- the hooks ------------------------------------------------------ */

/* X-MIGRATE: the state files of an older zcor, before the first call. */
static int migrate_hook(struct zc_op *op, void *ud, struct zc_err *e)
{
	return zc_migrate_if_needed(op->m, e);
}

/* The citations of the views the change touched; their paths go to
 * mirror/ after the commit. */
static int views_hook(struct zc_op *op, void *ud, struct zc_err *e)
{
	if (!op->views_changed)
		op->views_changed = json_array();
	return zc_view_refresh_dirty(op->m, op->views_changed, e);
}

static int mirror_hook(struct zc_op *op, void *ud, struct zc_err *e)
{
	zc_mirror_committed(op);
	return ZCOR_OK;
}

/* ---- open and close --------------------------------------------------- */

int zc_mem_open(struct zc_mem *m, const char *dir, struct zc_err *e)
{
	memset(m, 0, sizeof(*m));
	int rc = zc_mkdir_p(dir, e);
	if (rc || (rc = zc_mem_check_db(dir, NULL, e)))
		return rc;
	m->dir = zc_strdup(dir);
	m->now_ms = system_clock;
	char *db = zc_path_join(dir, "memory.db");
	char *syn = zc_path_join(dir, "synonyms.json");
	char *conf = zc_path_join(dir, "config.json");
	zc_syn_init(&m->syn, syn);
	zc_config_init(&m->conf, conf);
	zc_free(conf);
	zc_runner_init(m);
	rc = zc_store_open(&m->store, db, e);
	if (!rc)
		rc = zc_history_register(&m->store, e);
	if (!rc && !(rc = zc_mem_hook(m, ZC_HOOK_FIRST_OP, migrate_hook, NULL, e)) &&
	    !(rc = zc_mem_hook(m, ZC_HOOK_PRECOMMIT, views_hook, NULL, e)))
		rc = zc_mem_hook(m, ZC_HOOK_COMMITTED, mirror_hook, NULL, e);
	zc_free(db);
	zc_free(syn);
	if (rc)
		zc_mem_close(m);
	return rc;
}

void zc_mem_close(struct zc_mem *m)
{
	if (!m)
		return;
	zc_mem_hits_release(m);
	zc_runner_release(m);
	zc_store_close(&m->store);
	zc_syn_release(&m->syn);
	zc_config_release(&m->conf);
	zc_free(m->dir);
	m->dir = NULL;
}
