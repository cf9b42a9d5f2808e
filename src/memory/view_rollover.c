/*
 * view_rollover.c — Q-ROLL (seed 003): a conversation's MEMORY.md that
 * outgrows memoryFileMaxBytes × memoryArchiveRatio moves its least
 * active entries to archive/<month>.md; and the byte limits of the views.
 *
 * Memory layer. Rollover runs inside the caller's operation, in a
 * savepoint of its own: a failed move leaves both views as they were and
 * becomes a warning, never a failed operation. It only moves rows (tier,
 * archive month, position); it never deletes an entry and never writes
 * a file.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "base/json.h"
#include "base/timeutil.h"
#include "memory/view_internal.h"
#include "text/norm.h"

/* ---- limits ---------------------------------------------------------------- */

long zc_view_rollover_threshold(struct zc_mem *m)
{
	zc_config_refresh(&m->conf);
	const struct zc_config *cfg = &m->conf.cfg;
	return (long)((double)cfg->memory_file_max_bytes * cfg->memory_archive_ratio);
}

long zc_view_limit(struct zc_mem *m, const struct zc_view *v)
{
	zc_config_refresh(&m->conf);
	return v->kind == ZC_VIEW_MEMORY ? m->conf.cfg.memory_file_max_bytes : m->conf.cfg.view_max_bytes;
}

/* ---- rollover (Q-ROLL) ---------------------------------------------------- */

/*
 * Q-ROLL's "least active": seed 003 orders by 最近没被命中、事实日期最旧、
 * 文件位置最靠前 — not hit recently, then the oldest fact date, then the
 * earliest position. Recency is the local day of the last hit (never hit
 * is oldest); the lifetime hit count does not enter: nine hits a year ago
 * are less recent than one yesterday. Within one day the fact date and
 * the position decide.
 */
struct cand {
	json_t *x;          /* entry (borrowed) */
	char last_day[16];  /* local date of the last hit, "" never */
	char date[16];      /* effective fact date, "" none */
	double pos;
	size_t bytes;
};

static int by_activity(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	int d = strcmp(x->last_day, y->last_day);
	if (!d)
		d = strcmp(x->date, y->date);
	if (d)
		return d;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int node_last_hit(struct zc_mem *m, const json_t *x, const json_t *unfolded, char day[16],
			 struct zc_err *e)
{
	sqlite3_stmt *st = zc_stmt(&m->store, "SELECT last_hit_at FROM nodes WHERE id = ?1", e);
	if (!st)
		return e->code;
	sqlite3_bind_text(st, 1, zc_json_str(x, "id"), -1, SQLITE_TRANSIENT);
	long long last = -1;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		last = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	char key[32];
	snprintf(key, sizeof(key), "%lld", (long long)json_integer_value(json_object_get(x, "seq")));
	json_t *u = json_object_get(unfolded, key);
	if (u && json_integer_value(u) > last)
		last = json_integer_value(u);
	day[0] = '\0';
	if (last >= 0)
		zc_time_local_date(last, day);
	return ZCOR_OK;
}

static void local_month(int64_t ms, char out[8])
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	localtime_r(&t, &tm);
	if (strftime(out, 8, "%Y-%m", &tm) != 7)
		snprintf(out, 8, "0000-00");
}

/* The entries of MEMORY.md that may move (the non-pinned ones) with what
 * orders them: the effective fact date (an entry without one takes the
 * one above it), the day of the last hit, the position, the bytes of the
 * line. *out (the caller frees it, also on an error) holds *nc. */
static int rollover_candidates(struct zc_op *op, const struct zc_view *hot, const json_t *entries,
			       const json_t *unfolded, struct cand **out, size_t *nc, struct zc_err *e)
{
	struct cand *c = zc_calloc(json_array_size(entries) + 1, sizeof(*c));
	char inherited[16] = "";
	size_t i;
	json_t *x;
	*out = c;
	*nc = 0;
	json_array_foreach(entries, i, x) {
		const char *d = zc_json_str(x, "date");
		if (d && *d)
			snprintf(inherited, sizeof(inherited), "%s", d);
		if (json_is_true(json_object_get(x, "pinned")))
			continue;
		struct cand *k = &c[(*nc)++];
		k->x = x;
		snprintf(k->date, sizeof(k->date), "%s", inherited);
		k->pos = json_number_value(json_object_get(x, "pos"));
		char *line = zc_view_line(hot, x);
		k->bytes = strlen(line) + 1;
		zc_free(line);
		int rc = node_last_hit(op->m, x, unfolded, k->last_day, e);
		if (rc)
			return rc;
	}
	return ZCOR_OK;
}

/* The bytes of view v as rendered now. */
static int rendered_bytes(struct zc_mem *m, const struct zc_view *v, long *bytes, struct zc_err *e)
{
	char *text = NULL;
	int rc = zc_view_render(m, v, &text, NULL, NULL, e);
	*bytes = rc ? 0 : (long)strlen(text);
	zc_free(text);
	return rc;
}

/* Moves the candidates c (least active first) to arch until hot is at
 * most threshold bytes (bytes: its size now), then checks the invariants
 * on what is stored: hot shrank, arch is within its limit. On an error
 * the caller rolls back the savepoint. */
static int rollover_move(struct zc_op *op, const struct zc_view *hot, const struct zc_view *arch,
			 const struct cand *c, size_t nc, long bytes, long threshold, long long *moved,
			 struct zc_err *e)
{
	long before = bytes, after = 0, abytes = 0;
	int rc;
	if ((rc = zc_view_save_version(op, arch, e)))
		return rc;
	zc_err_clear(e);
	double apos = zc_view_max_pos(op, arch, e);
	if (e->code)
		return e->code;
	for (size_t i = 0; i < nc && bytes > threshold; i++) {
		json_t *n = NULL;
		if ((rc = zc_node_load(op, zc_json_str(c[i].x, "id"), &n, e)))
			return rc;
		json_object_set_new(n, "tier", json_string("archive"));
		json_object_set_new(n, "archiveMonth", json_string(arch->month));
		json_object_set_new(json_object_get(n, "attrs"), "pos", json_real(++apos));
		rc = zc_node_save(op, n, e);
		json_decref(n);
		if (rc)
			return rc;
		bytes -= (long)c[i].bytes;
		(*moved)++;
	}
	/* the invariants, checked on what is now stored */
	if ((rc = rendered_bytes(op->m, hot, &after, e)) || (rc = rendered_bytes(op->m, arch, &abytes, e)))
		return rc;
	if (after >= before)
		return zc_fail(e, ZCOR_EINTERNAL, "rollover did not shrink %s", hot->path);
	if (abytes > zc_view_limit(op->m, arch))
		return zc_fail(e, ZCOR_EINVAL, "%s would be %ld bytes, over its limit of %ld", arch->path,
			       abytes, zc_view_limit(op->m, arch));
	return ZCOR_OK;
}

int zc_view_rollover(struct zc_op *op, const char *conv, long long *moved, json_t *warnings,
		     struct zc_err *e)
{
	struct zc_view hot, arch;
	char month[8];
	json_t *entries = NULL, *unfolded = NULL;
	struct cand *c = NULL;
	size_t nc = 0;
	long bytes = 0;
	int rc;
	*moved = 0;
	zc_view_memory(&hot, conv);
	zc_config_refresh(&op->m->conf);
	long threshold = zc_view_rollover_threshold(op->m);
	if ((rc = rendered_bytes(op->m, &hot, &bytes, e)))
		return rc;
	if (bytes <= threshold)
		return ZCOR_OK;
	if ((rc = zc_view_load_entries(op->m, &hot, &entries, e)) ||
	    (rc = zc_mem_unfolded_hits(op->m, &unfolded, e)) ||
	    (rc = rollover_candidates(op, &hot, entries, unfolded, &c, &nc, e)))
		goto out;
	if (!nc) {
		json_array_append_new(
			warnings,
			json_sprintf("%s is %ld bytes, over the rollover threshold of %ld, but every "
				     "entry is pinned: nothing can move to the archive; remove or "
				     "shorten entries by hand",
				     hot.path, bytes, threshold));
		goto out;
	}
	qsort(c, nc, sizeof(*c), by_activity);
	local_month(op->now, month);
	zc_view_archive(&arch, conv, month);
	if ((rc = zc_exec(&op->m->store, "SAVEPOINT zc_rollover", e)))
		goto out;
	if (!(rc = rollover_move(op, &hot, &arch, c, nc, bytes, threshold, moved, e))) {
		rc = zc_exec(&op->m->store, "RELEASE zc_rollover", e);
		goto out;
	}
	zc_exec(&op->m->store, "ROLLBACK TO zc_rollover", NULL);
	zc_exec(&op->m->store, "RELEASE zc_rollover", NULL);
	json_array_append_new(warnings,
			      json_sprintf("moving entries of %s to the archive failed (%s); both "
					   "were left as they were",
					   hot.path, e->msg));
	*moved = 0;
	zc_err_clear(e);
	rc = ZCOR_OK;
out:
	zc_free(c);
	json_decref(entries);
	json_decref(unfolded);
	return rc;
}

/* Is entry x of MEMORY.md view mv already in the conversation's archive,
 * the same line under the same section? Rollover moved it there. */
int zc_view_archived_same(struct zc_mem *m, const struct zc_view *mv, const json_t *x, int *same,
			  struct zc_err *e)
{
	*same = 0;
	sqlite3_stmt *st = zc_stmt(&m->store,
				   "SELECT " ZC_NODE_COLS ", seq FROM nodes WHERE kind = 'memory' AND "
				   "superseded_by IS NULL AND scope = ?1 AND tier = 'archive' AND "
				   "title_norm = ?2 AND scope <> 'global'", /* (nodes_view: schema 21) */
				   e);
	if (!st)
		return e->code;
	struct zc_view av;
	zc_view_archive(&av, mv->conv, "0000-00");
	char *want = zc_view_line(mv, x);
	sqlite3_bind_text(st, 1, mv->conv, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, zc_norm(zc_json_str(x, "name")), -1, zc_free);
	int rc = SQLITE_DONE;
	while (!*same && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *n = zc_node_from_row(st);
		json_t *a = zc_view_entry_of_node(&av, n, sqlite3_column_int64(st, 25));
		char *line = zc_view_line(&av, a);
		*same = strcmp(line, want) == 0 && strcmp(zc_view_entry_section(&av, a), zc_view_entry_section(mv, x)) == 0;
		zc_free(line);
		json_decref(a);
		json_decref(n);
	}
	sqlite3_reset(st);
	zc_free(want);
	if (!*same && rc != SQLITE_DONE)
		return zc_store_fail(&m->store, rc, e, "reading an archive");
	return ZCOR_OK;
}
