/*
 * op.c — opening a memory directory, running an operation as one
 * transaction with its history record, and the scope rule (Q-SCOPE).
 *
 * Memory layer. This file is where "every call is recorded" and "a change
 * and its history are one transaction" are enforced; operations never
 * begin or commit transactions themselves.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/fs.h"
#include "base/json.h"
#include "base/timeutil.h"
#include "base/utf8.h"
#include "memory/memory.h"
#include "memory/mirror.h"
#include "memory/view.h"
#include "memory/transcript.h"
#include "text/norm.h"

/* ---- scope ---------------------------------------------------------- */

int zc_scope_is_private(const struct zcor_ctx *ctx)
{
	return ctx->conversation && strncmp(ctx->conversation, "private:", 8) == 0;
}

int zc_scope_visible(const struct zcor_ctx *ctx, const char *scope)
{
	return !ctx->conversation || strcmp(scope, "global") == 0 ||
	       strcmp(scope, ctx->conversation) == 0;
}

int zc_scope_writable(const struct zcor_ctx *ctx, const char *scope)
{
	if (!ctx->conversation || strcmp(scope, ctx->conversation) == 0)
		return 1;
	return strcmp(scope, "global") == 0 && !zc_scope_is_private(ctx);
}

int zc_conv_valid(const char *key)
{
	static const char *const kinds[] = {"group:", "private:", "console:"};
	const char *rest = NULL;
	for (size_t i = 0; i < 3 && !rest; i++)
		if (strncmp(key, kinds[i], strlen(kinds[i])) == 0)
			rest = key + strlen(kinds[i]);
	int ok = rest && *rest && strlen(rest) <= 64;
	for (const char *p = rest; ok && *p; p++)
		ok = isalnum((unsigned char)*p) || *p == '_' || *p == '-' || *p == '.';
	return ok;
}

int zc_conv_check(const char *key, struct zc_err *e)
{
	if (zc_conv_valid(key))
		return ZCOR_OK;
	return zc_fail(e, ZCOR_EINVAL,
		       "conversation '%s' is not a conversation key; use group:<id>, "
		       "private:<qq> or console:<name> (letters, digits, _ - . up to 64)",
		       ZC_Q(key, 80));
}

void zc_conv_slug(const char *key, char *out, size_t cap)
{
	snprintf(out, cap, "%s", key);
	char *c = strchr(out, ':');
	if (c)
		*c = '-';
}

const char *zc_scope_of_new(const struct zcor_ctx *ctx)
{
	return ctx->conversation ? ctx->conversation : "global";
}

/*
 * Links between records and Q-SCOPE. Whoever may see a record must see
 * what it links to (else a conversation is shown the id of a record it may
 * not open), so a link points into the record's own scope or to a global
 * record, never into another conversation. Supersede and merge stay within
 * one scope (zc_scope_may_link): a conversation must not hide a global
 * memory behind one of its own, and a global record must not stand for a
 * conversation's. A parent may also be global (zc_scope_may_nest: seed
 * 000's tree, a group's 近况 under a shared person node), except for a
 * private conversation: its memories hanging under a shared one would keep
 * the other conversations from deleting that one, which tells them that
 * something private is there. The host plane is held to the same rules.
 */
int zc_scope_may_link(const char *scope, const char *target)
{
	return strcmp(scope, target) == 0;
}

int zc_scope_may_nest(const char *child, const char *parent)
{
	return strcmp(child, parent) == 0 ||
	       (strcmp(parent, "global") == 0 && strncmp(child, "private:", 8) != 0);
}

const char *zc_scope_words(const struct zcor_ctx *ctx, const char *scope, char *buf, size_t cap)
{
	if (strcmp(scope, "global") == 0)
		return "shared with every conversation";
	if (ctx->conversation && strcmp(scope, ctx->conversation) == 0)
		return "of this conversation";
	snprintf(buf, cap, "of conversation '%s'", scope);
	return buf;
}

/* ---- the directory -------------------------------------------------- */

/* A history record as the text of its columns, ready for the INSERT. */
struct hist_row {
	int64_t at;
	const char *actor, *status; /* static strings */
	char *operation, *conversation, *arguments, *error, *before, *after, *receipt;
};

/* What a handle defers (memory.h, zc_mem_flush). */
struct zc_reads {
	struct hist_row rows[ZC_READS_MAX];
	int n;
	double first_ms; /* zc_time_mono_ms of the oldest */
	void (*queued)(void *ud);
	void *ud;
};

static void clear_queued(struct zc_mem *m);

static int64_t system_clock(void *ud) { return zc_time_now_ms(); }

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
	long n = zc_store_read_header(db, h, sizeof(h));
	if (n < 0) {
		rc = zc_fail(e, ZCOR_EIO, "cannot read memory.db; check its permissions");
		goto out;
	}
	/* while a WAL has frames, page 1 may be torn in the file (a power cut
	 * during a checkpoint) and whole in the WAL, which SQLite reads
	 * first: only without one is a bad header a damaged file */
	int wal_pending = lstat(wal, &wst) == 0 && wst.st_size > 0;
	if (!wal_pending && (n < (long)sizeof(h) || memcmp(h, "SQLite format 3", 16) != 0)) {
		found = "MEMORY_DB_DAMAGED";
		rc = zc_fail(e, ZCOR_EIO,
			     "memory.db is not a SQLite database (%lld bytes that do not start with its "
			     "header); it was left as it is: move it aside and restore the newest backup "
			     "(`zcor restore backups/<newest>.json`)",
			     (long long)st.st_size);
		goto out;
	}
	unsigned psize = (unsigned)h[16] << 8 | h[17];
	psize = psize == 1 ? 65536 : psize;
	unsigned long long pages = be32(h + 28), want = pages * psize;
	/* the same for the size: the file may lag its header (a checkpoint
	 * stopped half-way is finished from the WAL) */
	if (!wal_pending && pages > 0 && be32(h + 24) == be32(h + 92) &&
	    (unsigned long long)st.st_size < want) {
		found = "MEMORY_DB_DAMAGED";
		rc = zc_fail(e, ZCOR_EIO,
			     "memory.db is cut off: %lld bytes of the %llu its header says; it was left as "
			     "it is: move it aside and restore the newest backup (`zcor restore "
			     "backups/<newest>.json`)",
			     (long long)st.st_size, want);
	}
out:
	if (code)
		*code = found;
	zc_free(db);
	zc_free(wal);
	return rc;
}

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
	m->reads = zc_calloc(1, sizeof(*m->reads));
	rc = zc_store_open(&m->store, db, e);
	if (!rc)
		rc = zc_history_register(&m->store, e);
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
	if (m->reads) {
		struct zc_err ignored = {0};
		zc_mem_fts_catch_up(m, &ignored); /* a failure loses them, as a crash would */
		clear_queued(m);
		zc_free(m->reads);
		m->reads = NULL;
	}
	zc_store_close(&m->store);
	zc_syn_release(&m->syn);
	zc_config_release(&m->conf);
	zc_free(m->dir);
	m->dir = NULL;
}

int64_t zc_mem_now(struct zc_mem *m) { return m->now_ms(m->clock_ud); }

/* ---- history -------------------------------------------------------- */

static const char *actor_name(enum zcor_actor a)
{
	switch (a) {
	case ZCOR_ACTOR_UI:
		return "ui";
	case ZCOR_ACTOR_CLI:
		return "cli";
	case ZCOR_ACTOR_DIGEST:
		return "digest";
	default:
		return "model";
	}
}

void zc_op_before(struct zc_op *op, json_t *snap)
{
	if (!op->before)
		op->before = json_array();
	json_array_append_new(op->before, snap);
}

void zc_op_after(struct zc_op *op, json_t *snap)
{
	if (!op->after)
		op->after = json_array();
	json_array_append_new(op->after, snap);
}

static void row_release(struct hist_row *r)
{
	zc_free(r->operation);
	zc_free(r->conversation);
	zc_free(r->arguments);
	zc_free(r->error);
	zc_free(r->before);
	zc_free(r->after);
	zc_free(r->receipt);
	memset(r, 0, sizeof(*r));
}

static void row_make(struct hist_row *r, const struct zcor_ctx *ctx, const char *name, int64_t at,
		     const json_t *args, const char *raw, const struct zc_err *failure,
		     const json_t *before, const json_t *after, const json_t *receipt)
{
	memset(r, 0, sizeof(*r));
	r->at = at;
	r->operation = zc_strdup(name);
	r->actor = actor_name(ctx->actor);
	r->conversation = ctx->conversation ? zc_strdup(ctx->conversation) : NULL;
	if (args) {
		r->arguments = zc_json_dump(args);
	} else {
		json_t *t = json_string(raw ? raw : "");
		r->arguments = zc_json_dump(t);
		json_decref(t);
	}
	r->status = failure ? "error" : "ok";
	if (failure) {
		struct zc_buf msg = ZC_BUF_INIT;
		zc_buf_addf(&msg, "%s: %s", zcor_code_name(failure->code), failure->msg);
		r->error = zc_buf_detach(&msg);
	}
	zc_hist_pack(before, after, args, at, &r->before, &r->after);
	r->receipt = receipt ? zc_json_dump(receipt) : NULL;
}

static void bind_text_or_null(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, i);
}

/* The keyword search normalises a record's stored text when it is asked
 * (history.c, zc_history_match): search_norm stays empty, so that no
 * record is stored twice. */
static int row_insert(struct zc_mem *m, const struct hist_row *r, struct zc_err *e)
{
	sqlite3_stmt *st = zc_stmt(&m->store,
				   "INSERT INTO history(at, operation, actor, conversation, arguments, "
				   "status, error, before, after, receipt, search_norm) "
				   "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, '')",
				   e);
	if (!st)
		return e->code;
	sqlite3_bind_int64(st, 1, r->at);
	bind_text_or_null(st, 2, r->operation);
	bind_text_or_null(st, 3, r->actor);
	bind_text_or_null(st, 4, r->conversation);
	bind_text_or_null(st, 5, r->arguments);
	bind_text_or_null(st, 6, r->status);
	bind_text_or_null(st, 7, r->error);
	bind_text_or_null(st, 8, r->before);
	bind_text_or_null(st, 9, r->after);
	bind_text_or_null(st, 10, r->receipt);
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? ZCOR_OK : zc_store_fail(&m->store, rc, e, "recording history");
}

/* Inside the caller's transaction: the queued read records, oldest
 * first. They leave the queue once that transaction commits. */
static int insert_queued(struct zc_mem *m, struct zc_err *e)
{
	struct zc_reads *q = m->reads;
	for (int i = 0; i < q->n; i++) {
		int rc = row_insert(m, &q->rows[i], e);
		if (rc)
			return rc;
	}
	return ZCOR_OK;
}

static void clear_queued(struct zc_mem *m)
{
	struct zc_reads *q = m->reads;
	for (int i = 0; i < q->n; i++)
		row_release(&q->rows[i]);
	q->n = 0;
}

/* After a failed write of the queue: only another process holding the
 * lock is worth waiting for. A record that cannot be written (a full
 * disk, an I/O error) is dropped, as a failed call's record always was;
 * a change never is (its own transaction fails instead). */
static void after_queue_failure(struct zc_mem *m, int rc)
{
	if (rc != ZCOR_EBUSY)
		clear_queued(m);
}

/* One transaction without an fsync (read records need none, zc_mem_run;
 * full-text rows are derived data): the queued read records and, with
 * fts, the full-text rows of new nodes. */
static int flush_deferred(struct zc_mem *m, int fts, struct zc_err *e)
{
	struct zc_reads *q = m->reads;
	if (!q || !m->store.db || m->store.in_tx ||
	    (q->n == 0 && !(fts && zc_node_fts_pending(&m->store))))
		return ZCOR_OK;
	/* set outside the transaction, as SQLite requires */
	zc_store_sync(&m->store, 0);
	int rc = zc_store_begin(&m->store, 1, e);
	if (!rc && fts && (rc = zc_node_fts_catch_up(&m->store, e)))
		zc_store_rollback(&m->store);
	else if (!rc && (rc = insert_queued(m, e)))
		zc_store_rollback(&m->store);
	else if (!rc)
		rc = zc_store_commit(&m->store, e);
	zc_store_sync(&m->store, 1);
	if (rc)
		after_queue_failure(m, rc);
	else
		clear_queued(m);
	return rc;
}

int zc_mem_flush(struct zc_mem *m, struct zc_err *e) { return flush_deferred(m, 0, e); }

int zc_mem_flush_try(struct zc_mem *m, struct zc_err *e)
{
	zc_store_busy_wait(&m->store, 0);
	int rc = flush_deferred(m, 0, e);
	zc_store_busy_wait(&m->store, 1);
	return rc;
}

int zc_mem_fts_catch_up(struct zc_mem *m, struct zc_err *e) { return flush_deferred(m, 1, e); }

long zc_mem_flush_due(struct zc_mem *m)
{
	struct zc_reads *q = m->reads;
	if (!q || q->n == 0)
		return -1;
	double left = q->first_ms + ZC_READS_WINDOW_MS - zc_time_mono_ms();
	return left > 0 ? (long)left + 1 : 0;
}

void zc_mem_on_deferred(struct zc_mem *m, void (*fn)(void *ud), void *ud)
{
	m->reads->queued = fn;
	m->reads->ud = ud;
}

/* Queues r (taken over). Fails only when the queue is full and cannot be
 * written: then the call must not claim it was recorded. */
static int queue_row(struct zc_mem *m, struct hist_row *r, struct zc_err *e)
{
	struct zc_reads *q = m->reads;
	int rc;
	if (q->n >= ZC_READS_MAX && (rc = zc_mem_flush(m, e))) {
		row_release(r);
		return rc;
	}
	if (q->n >= ZC_READS_MAX) { /* inside a transaction: not ours to commit */
		row_release(r);
		return zc_fail(e, ZCOR_EINTERNAL, "recording history: the read records are not written");
	}
	q->rows[q->n++] = *r;
	memset(r, 0, sizeof(*r));
	if (q->n == 1) {
		q->first_ms = zc_time_mono_ms();
		if (q->queued)
			q->queued(q->ud);
	}
	if (q->n == ZC_READS_MAX) {
		struct zc_err ignored = {0};
		zc_mem_flush(m, &ignored); /* if it fails they wait for the next try */
	}
	return ZCOR_OK;
}

void zc_mem_record_failure(struct zc_mem *m, const struct zcor_ctx *ctx, const char *name,
			   json_t *args, const char *raw, const struct zc_err *failure)
{
	/* a failed call changed nothing: its record is a read's (zc_mem_run) */
	struct hist_row r;
	struct zc_err e2 = {0};
	row_make(&r, ctx, name, zc_mem_now(m), args, raw, failure, NULL, NULL, NULL);
	queue_row(m, &r, &e2);
}

/* ---- running an operation ------------------------------------------- */

void zc_op_file_created(struct zc_op *op, const char *path)
{
	if (!op->undo_unlink)
		op->undo_unlink = json_array();
	json_array_append_new(op->undo_unlink, json_string(path));
}

void zc_op_file_obsolete(struct zc_op *op, const char *path)
{
	if (!op->commit_unlink)
		op->commit_unlink = json_array();
	json_array_append_new(op->commit_unlink, json_string(path));
}

static void unlink_all(json_t *paths)
{
	size_t i;
	json_t *p;
	json_array_foreach(paths, i, p) unlink(json_string_value(p));
}

static void op_release(struct zc_op *op)
{
	json_decref(op->undo_unlink);
	json_decref(op->commit_unlink);
	json_decref(op->views_changed);
	json_decref(op->before);
	json_decref(op->after);
	json_decref(op->receipt);
	json_decref(op->state);
}

static int run(struct zc_mem *m, const struct zcor_ctx *ctx, const struct zc_opdef *def,
	       json_t *args, void *ud, json_t **out, struct zc_err *e);

/*
 * A read (def->reads) changes nothing but the history, so its record
 * need not be durable when the call returns: WAL keeps a commit without
 * an fsync safe from a crash of zcor, a power cut can lose only the last
 * such records — never a change to memory, whose commits keep
 * synchronous=FULL. So a read runs in a read transaction (it does not
 * queue on SQLite's one writer) and its record joins the queue of read
 * records, written in groups (memory.h, ZC_READS_*): a crash or kill -9
 * loses at most the queue, the last few milliseconds of read records.
 * Every read would otherwise wait for the disk (docs/PERFORMANCE.md).
 */
int zc_mem_run(struct zc_mem *m, const struct zcor_ctx *ctx, const struct zc_opdef *def,
	       json_t *args, json_t **out, struct zc_err *e)
{
	return zc_mem_run_ud(m, ctx, def, args, NULL, out, e);
}

int zc_mem_run_ud(struct zc_mem *m, const struct zcor_ctx *ctx, const struct zc_opdef *def,
		  json_t *args, void *ud, json_t **out, struct zc_err *e)
{
	struct zc_err ignored = {0};
	if (zc_mem_flush_due(m) == 0)
		zc_mem_flush_try(m, &ignored); /* on failure they wait for the next try */
	if (def->reads & ZC_OP_FTS) /* a failure leaves the new rows unfound, not the call */
		zc_mem_fts_catch_up(m, &ignored);
	/* a history query writes the queue with its own record: no fsync */
	int nosync = (def->reads & ZC_OP_HISTORY) != 0;
	if (nosync)
		zc_store_sync(&m->store, 0);
	int rc = run(m, ctx, def, args, ud, out, e);
	if (nosync)
		zc_store_sync(&m->store, 1);
	return rc;
}

static int run(struct zc_mem *m, const struct zcor_ctx *ctx, const struct zc_opdef *def,
	       json_t *args, void *ud, json_t **out, struct zc_err *e)
{
	struct zc_op op = {.m = m, .ctx = ctx, .name = def->name, .now = zc_mem_now(m), .ud = ud};
	json_t *result = NULL;
	struct hist_row row = {0};
	int queued = def->reads && !(def->reads & ZC_OP_HISTORY); /* its record joins the queue */
	int queue_in = 0;              /* the queue is in this transaction already */
	int rc;
	*out = NULL;

	if (!m->migration_checked) {
		if ((rc = zc_migrate_if_needed(m, e)))
			goto failed;
		m->migration_checked = 1;
	}
	if (def->pre && zc_mem_flush_due(m) >= 0) {
		/* pre may wait seconds (an LLM): the queue must not wait with it */
		struct zc_err ignored = {0};
		zc_mem_flush_try(m, &ignored);
	}
	if (def->pre && (rc = def->pre(&op, args, &result, e)))
		goto failed;
	if (result) /* pre answered alone (nothing for the body to do) */
		goto record;
	if ((rc = zc_store_begin(&m->store, !queued, e)))
		goto failed;
	/* a history query sees every call before it */
	if ((def->reads & ZC_OP_HISTORY) && (rc = insert_queued(m, e))) {
		zc_store_rollback(&m->store);
		after_queue_failure(m, rc);
		goto failed;
	}
	queue_in = (def->reads & ZC_OP_HISTORY) != 0;
	op.now = zc_mem_now(m);
	if ((rc = def->body(&op, args, &result, e)) ||
	    (!def->reads && (rc = zc_view_refresh_dirty(m, op.views_changed = json_array(), e)))) {
		zc_store_rollback(&m->store);
		unlink_all(op.undo_unlink);
		goto failed;
	}
	if (queued) {
		zc_store_rollback(&m->store); /* a read transaction: nothing to keep */
		goto record;
	}
	goto insert;
record:
	if (queued) {
		row_make(&row, ctx, def->name, op.now, args, NULL, NULL, op.before, op.after, op.receipt);
		if ((rc = queue_row(m, &row, e)))
			goto uncertain_or_failed;
		goto done;
	}
	if ((rc = zc_store_begin(&m->store, 1, e)))
		goto uncertain_or_failed;
insert:
	/* The queued read records first, so that seq keeps the order of the
	 * calls; the history record goes in after the result exists, so a
	 * history query never sees its own call. */
	row_make(&row, ctx, def->name, op.now, args, NULL, NULL, op.before, op.after, op.receipt);
	if (queue_in || !(rc = insert_queued(m, e)))
		rc = row_insert(m, &row, e);
	row_release(&row);
	if (rc) {
		zc_store_rollback(&m->store);
		after_queue_failure(m, rc);
		goto uncertain_or_failed;
	}
	if ((rc = zc_store_commit(&m->store, e))) {
		after_queue_failure(m, rc);
		goto uncertain_or_failed;
	}
	clear_queued(m);
done:
	unlink_all(op.commit_unlink);
	zc_mirror_views(m, op.views_changed);
	if (op.receipt && json_is_object(result))
		json_object_set(result, "receipt", op.receipt);
	*out = result;
	op_release(&op);
	return ZCOR_OK;

uncertain_or_failed:
	json_decref(result);
	result = NULL;
	unlink_all(op.undo_unlink);
	if (op.side_effect) {
		/* A file outside memory.db (a backup, synonyms.json) was already
		 * written: the caller must not assume nothing happened. */
		zc_err_prefix(e, "the operation may have taken effect, but its history could not be "
				 "recorded");
		rc = e->code = ZCOR_EUNCERTAIN;
		op_release(&op);
		return rc;
	}
	zc_err_prefix(e, "nothing was changed");
failed:
	json_decref(result);
	op_release(&op);
	if (rc != ZCOR_EBUSY && rc != ZCOR_EFULL && rc != ZCOR_EREADONLY && rc != ZCOR_EIO)
		zc_mem_record_failure(m, ctx, def->name, args, NULL, e);
	return rc;
}

/* ---- derived data ---------------------------------------------------- */

int zc_mem_reindex(struct zc_mem *m, json_t **counts, struct zc_err *e)
{
	struct zc_store *s = &m->store;
	long long nodes = 0, people = 0, messages = 0;
	int rc, step = SQLITE_DONE;
	zc_mem_flush_hits(m);
	if ((rc = zc_store_begin(s, 1, e)))
		return rc;
	if ((rc = zc_exec(s, "INSERT INTO nodes_fts(nodes_fts) VALUES('rebuild')", e)) ||
	    (rc = zc_exec(s, "UPDATE meta SET value = (SELECT value FROM meta WHERE key = "
			     "'nodes_top') WHERE key = 'fts_upto'", e)) ||
	    (rc = zc_exec(s, "INSERT INTO nodes_fts(nodes_fts) VALUES('optimize')", e)) ||
	    (rc = zc_exec(s, "DELETE FROM terms", e)) ||
	    (rc = zc_exec(s, "DELETE FROM term_prefix", e)) ||
	    (rc = zc_transcript_reindex(s, &messages, e)))
		goto out;
	/* one statement each, prepared here: zc_stmt's cache may be in use
	 * by the index helpers called inside the loops */
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(s->db, "SELECT " ZC_NODE_COLS ", seq FROM nodes", -1, &st, NULL)) {
		rc = zc_store_fail(s, sqlite3_errcode(s->db), e, "reindexing");
		goto out;
	}
	while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *n = zc_node_from_row(st);
		rc = zc_node_index_terms(s, sqlite3_column_int64(st, 25), n, e);
		json_decref(n);
		nodes++;
	}
	sqlite3_finalize(st);
	if (!rc && step != SQLITE_DONE)
		rc = zc_store_fail(s, step, e, "reindexing");
	if (rc)
		goto out;
	if (sqlite3_prepare_v2(s->db, "SELECT " ZC_PERSON_COLS ", seq FROM people", -1, &st, NULL)) {
		rc = zc_store_fail(s, sqlite3_errcode(s->db), e, "reindexing");
		goto out;
	}
	while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *p = zc_person_from_row(st);
		rc = zc_person_index_terms(s, sqlite3_column_int64(st, 11), p, e);
		json_decref(p);
		people++;
	}
	sqlite3_finalize(st);
	if (!rc && step != SQLITE_DONE)
		rc = zc_store_fail(s, step, e, "reindexing");
out:
	if (rc) {
		zc_store_rollback(s);
		return rc;
	}
	long long views = 0;
	if ((rc = zc_view_reindex_all(m, &views, e))) {
		zc_store_rollback(s);
		return rc;
	}
	if ((rc = zc_store_commit(s, e)))
		return rc;
	*counts = json_pack("{s:I, s:I, s:I, s:I}", "nodes", (json_int_t)nodes, "people",
			    (json_int_t)people, "messages", (json_int_t)messages, "views", (json_int_t)views);
	return ZCOR_OK;
}
