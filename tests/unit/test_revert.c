/*
 * test_revert.c — issue 18, History's 撤销此更改 / "Revert this change"
 * (zcor_history_revert, src/memory/revert.c): each kind of change it
 * reverts, as a new recorded change, and each refusal, which changes
 * nothing. Through the public API; a second connection reads memory.db.
 */
#include "harness.h"

#include <stdlib.h>

struct t_store {
	const char *dir;
	zcor *z;
};

static struct t_store fresh(void)
{
	struct t_store s;
	s.dir = t_tmpdir();
	s.z = t_open_dir(s.dir);
	return s;
}

static long long sql_int(struct t_store *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static long long sql_int(struct t_store *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *q = t_vformat(fmt, ap);
	va_end(ap);
	zcor_flush(s->z);
	long long v = t_sql_int(s->dir, q);
	free(q);
	return v;
}

/* The newest record of operation op. */
static long long last_seq(struct t_store *s, const char *op)
{
	return sql_int(s, "SELECT max(seq) FROM history WHERE operation = '%s' AND status = 'ok'", op);
}

/* Reverts record seq as the page does (actor ui, host plane). */
static json_t *revert(struct t_store *s, long long seq, int *rc)
{
	struct zcor_ctx ctx = {ZCOR_ACTOR_UI, NULL};
	char *out = NULL;
	int r = zcor_history_revert(s->z, &ctx, seq, &out);
	if (rc)
		*rc = r;
	return t_answer(s->z, r, out);
}

static json_t *revert_ok(struct t_store *s, long long seq)
{
	int rc = 0;
	json_t *v = revert(s, seq, &rc);
	CHECK_INT(rc, ZCOR_OK);
	return v;
}

/* The refusal's details.reason (and the code: conflict unless said). */
static void check_refused(struct t_store *s, long long seq, const char *reason)
{
	int rc = 0;
	long long before = sql_int(s, "SELECT count(*) FROM history WHERE status = 'ok'");
	json_t *v = revert(s, seq, &rc);
	CHECK_INT(rc, ZCOR_ECONFLICT);
	CHECK_STR(t_str(v, "error.details.reason"), reason);
	/* nothing changed: no new change recorded, the refusal is recorded */
	CHECK_INT(sql_int(s, "SELECT count(*) FROM history WHERE status = 'ok'"), before);
	CHECK_INT(sql_int(s, "SELECT count(*) FROM history WHERE operation = 'history_revert' AND "
			     "status = 'error' AND json_extract(arguments, '$.seq') = %lld",
			  seq),
		  1 + 0 * before);
	json_decref(v);
}

static char *make(struct t_store *s, const char *title, const char *extra)
{
	json_t *r = t_call_ok(s->z, NULL, "zcor_memory_write",
			      "{\"title\":\"%s\",\"content\":\"c of %s\"%s}", title, title, extra ? extra : "");
	char *id = strdup(t_str(r, "node.id") ? t_str(r, "node.id") : "");
	json_decref(r);
	return id;
}

static char *node_str(struct t_store *s, const char *id, const char *col)
{
	char q[256];
	snprintf(q, sizeof(q), "SELECT %s FROM nodes WHERE id = '%s'", col, id);
	zcor_flush(s->z);
	return t_sql_str(s->dir, q);
}

static void check_col(struct t_store *s, const char *id, const char *col, const char *want)
{
	char *v = node_str(s, id, col);
	CHECK_STR(v, want);
	free(v);
}

/* n memories titled n0, n1, … (the caller frees each id) */
static void make_n(struct t_store *s, char **ids, int n)
{
	char title[16];
	for (int i = 0; i < n; i++) {
		snprintf(title, sizeof(title), "n%d", i);
		ids[i] = make(s, title, NULL);
	}
}

static long long exists(struct t_store *s, const char *id)
{
	return sql_int(s, "SELECT count(*) FROM nodes WHERE id = '%s'", id);
}

static long long marked(struct t_store *s, const char *id)
{
	return sql_int(s, "SELECT count(*) FROM nodes WHERE id = '%s' AND important_seq IS NOT NULL", id);
}

static void mark(struct t_store *s, const char *id, int on)
{
	json_decref(t_call_ok(s->z, NULL, "zcor_memory_important", "{\"id\":\"%s\",\"important\":%s}", id,
			      on ? "true" : "false"));
}

/* ---- each kind ------------------------------------------------------- */

static void issue18_revert_update_restores_the_before_image_as_a_new_record(void)
{
	struct t_store s = fresh();
	char *p = make(&s, "parent", NULL);
	char *a = make(&s, "a", NULL);
	char extra[64];
	snprintf(extra, sizeof(extra), ",\"id\":\"%s\",\"parentId\":\"%s\"", a, p);
	json_decref(t_call_ok(s.z, NULL, "zcor_memory_write",
			      "{\"title\":\"a2\",\"content\":\"new\",\"keywords\":[\"k\"]%s}", extra));
	long long seq = last_seq(&s, "zcor_memory_write");
	json_t *v = revert_ok(&s, seq);
	CHECK_INT(t_int(v, "reverted"), seq);
	CHECK_STR(t_str(v, "restored.0"), a);
	check_col(&s, a, "title", "a");
	check_col(&s, a, "content", "c of a");
	check_col(&s, a, "keywords", "[]");
	check_col(&s, a, "coalesce(parent_id, 'root')", "root");
	/* its own record: actor ui, naming the record, with the images */
	long long rs = last_seq(&s, "history_revert");
	CHECK(rs > seq);
	char q[256];
	snprintf(q, sizeof(q), "SELECT actor || ' ' || json_extract(arguments, '$.seq') || ' ' || status "
			       "FROM history WHERE seq = %lld", rs);
	char *row = t_sql_str(s.dir, q);
	char want[64];
	snprintf(want, sizeof(want), "ui %lld ok", seq);
	CHECK_STR(row, want);
	free(row);
	json_t *h = t_call_ok(s.z, NULL, "zcor_memory_history", "{\"operations\":[\"history_revert\"]}");
	CHECK_STR(t_str(h, "items.0.before.0.title"), "a2");
	CHECK_STR(t_str(h, "items.0.after.0.title"), "a");
	json_decref(h);
	json_decref(v);
	free(p);
	free(a);
	zcor_close(s.z);
}

static void issue18_revert_create_deletes_the_memory(void)
{
	struct t_store s = fresh();
	char *a = make(&s, "a", NULL);
	json_t *v = revert_ok(&s, last_seq(&s, "zcor_memory_write"));
	CHECK_STR(t_str(v, "removed.0"), a);
	CHECK_INT(exists(&s, a), 0);
	json_decref(v);
	free(a);
	zcor_close(s.z);
}

static void issue18_revert_create_refused_when_the_memory_has_children(void)
{
	struct t_store s = fresh();
	char *a = make(&s, "a", NULL);
	long long seq = last_seq(&s, "zcor_memory_write");
	char extra[64];
	snprintf(extra, sizeof(extra), ",\"parentId\":\"%s\"", a);
	char *b = make(&s, "b", extra);
	/* the child's create names the parent but did not change it: not a
	 * later change of a; the store's own rule refuses */
	check_refused(&s, seq, "has_children");
	CHECK_INT(exists(&s, a), 1);
	free(a);
	free(b);
	zcor_close(s.z);
}

static void issue18_revert_delete_writes_it_back_with_its_mark(void)
{
	struct t_store s = fresh();
	char *a = make(&s, "a", ",\"keywords\":[\"x\",\"y\"]");
	mark(&s, a, 1);
	json_decref(t_call_ok(s.z, NULL, "zcor_memory_delete", "{\"id\":\"%s\"}", a));
	CHECK_INT(exists(&s, a), 0);
	json_t *v = revert_ok(&s, last_seq(&s, "zcor_memory_delete"));
	CHECK_STR(t_str(v, "restored.0"), a);
	check_col(&s, a, "title", "a");
	check_col(&s, a, "keywords", "[\"x\",\"y\"]");
	CHECK_INT(marked(&s, a), 1);
	/* found again by the query (its full-text rows) */
	json_t *q = t_call_ok(s.z, NULL, "zcor_memory_query", "{\"keywords\":[\"c of a\"]}");
	CHECK_INT(t_int(q, "total"), 1);
	json_decref(q);
	json_decref(v);
	free(a);
	zcor_close(s.z);
}

static void issue18_revert_delete_refused_when_its_parent_is_gone(void)
{
	struct t_store s = fresh();
	char *p = make(&s, "p", NULL);
	char extra[64];
	snprintf(extra, sizeof(extra), ",\"parentId\":\"%s\"", p);
	char *a = make(&s, "a", extra);
	json_decref(t_call_ok(s.z, NULL, "zcor_memory_delete", "{\"id\":\"%s\"}", a));
	long long seq = last_seq(&s, "zcor_memory_delete");
	json_decref(t_call_ok(s.z, NULL, "zcor_memory_delete", "{\"id\":\"%s\"}", p));
	check_refused(&s, seq, "link_missing");
	CHECK_INT(exists(&s, a), 0);
	free(p);
	free(a);
	zcor_close(s.z);
}

static void issue18_revert_important_mark_and_unmark(void)
{
	struct t_store s = fresh();
	char *a = make(&s, "a", NULL);
	mark(&s, a, 1);
	json_decref(revert_ok(&s, last_seq(&s, "zcor_memory_important")));
	CHECK_INT(marked(&s, a), 0);
	mark(&s, a, 1);
	mark(&s, a, 0);
	json_decref(revert_ok(&s, last_seq(&s, "zcor_memory_important")));
	CHECK_INT(marked(&s, a), 1);
	free(a);
	zcor_close(s.z);
}

static void issue18_revert_important_gives_the_replaced_mark_back(void)
{
	struct t_store s = fresh();
	char *ids[6];
	make_n(&s, ids, 6);
	for (int i = 0; i < 6; i++)
		mark(&s, ids[i], 1); /* the sixth replaced the first's mark */
	CHECK_INT(marked(&s, ids[0]), 0);
	json_decref(revert_ok(&s, last_seq(&s, "zcor_memory_important")));
	CHECK_INT(marked(&s, ids[0]), 1);
	CHECK_INT(marked(&s, ids[5]), 0);
	CHECK_INT(sql_int(&s, "SELECT count(*) FROM nodes WHERE important_seq IS NOT NULL"), 5);
	for (int i = 0; i < 6; i++)
		free(ids[i]);
	zcor_close(s.z);
}

static void issue18_revert_refused_when_five_are_marked_again(void)
{
	struct t_store s = fresh();
	char *ids[6];
	make_n(&s, ids, 6);
	mark(&s, ids[0], 1);
	json_decref(t_call_ok(s.z, NULL, "zcor_memory_delete", "{\"id\":\"%s\"}", ids[0]));
	long long seq = last_seq(&s, "zcor_memory_delete");
	for (int i = 1; i < 6; i++)
		mark(&s, ids[i], 1);
	check_refused(&s, seq, "important_full");
	CHECK_INT(exists(&s, ids[0]), 0); /* the write before the mark rolled back too */
	for (int i = 0; i < 6; i++)
		free(ids[i]);
	zcor_close(s.z);
}

static void issue18_revert_merge_restores_the_sources_and_removes_the_merged(void)
{
	struct t_store s = fresh();
	char *a = make(&s, "a", NULL), *b = make(&s, "b", NULL);
	mark(&s, b, 1);
	json_t *m = t_call_ok(s.z, NULL, "zcor_memory_merge",
			      "{\"ids\":[\"%s\",\"%s\"],\"title\":\"ab\",\"content\":\"both\",\"reason\":\"same\"}",
			      a, b);
	char *mid = strdup(t_str(m, "node.id"));
	json_decref(m);
	CHECK_INT(marked(&s, mid), 1);
	json_t *v = revert_ok(&s, last_seq(&s, "zcor_memory_merge"));
	CHECK_STR(t_str(v, "removed.0"), mid);
	CHECK_INT(exists(&s, mid), 0);
	check_col(&s, a, "coalesce(superseded_by, 'current')", "current");
	check_col(&s, b, "coalesce(superseded_by, 'current')", "current");
	CHECK_INT(marked(&s, b), 1);
	json_decref(v);
	free(a);
	free(b);
	free(mid);
	zcor_close(s.z);
}

static void issue18_revert_supersede_gives_the_mark_back_to_the_source(void)
{
	struct t_store s = fresh();
	char *a = make(&s, "a", NULL), *b = make(&s, "b", NULL);
	mark(&s, a, 1);
	json_decref(t_call_ok(s.z, NULL, "zcor_memory_supersede",
			      "{\"ids\":[\"%s\"],\"replacementId\":\"%s\",\"reason\":\"newer\"}", a, b));
	CHECK_INT(marked(&s, b), 1);
	json_decref(revert_ok(&s, last_seq(&s, "zcor_memory_supersede")));
	check_col(&s, a, "coalesce(superseded_by, 'current')", "current");
	CHECK_INT(marked(&s, a), 1);
	CHECK_INT(marked(&s, b), 0);
	free(a);
	free(b);
	zcor_close(s.z);
}

static void issue18_revert_relationship_write_and_delete(void)
{
	struct t_store s = fresh();
	json_decref(t_call_ok(s.z, NULL, "zcor_relationship_write",
			      "{\"personId\":\"10001\",\"name\":\"甲\",\"relationship\":\"同学\",\"affinity\":10,\"reason\":\"r\"}"));
	long long created = last_seq(&s, "zcor_relationship_write");
	json_decref(t_call_ok(s.z, NULL, "zcor_relationship_write",
			      "{\"personId\":\"10001\",\"name\":\"乙\",\"relationship\":\"朋友\",\"affinity\":30,\"reason\":\"r\"}"));
	json_decref(revert_ok(&s, last_seq(&s, "zcor_relationship_write")));
	CHECK_INT(sql_int(&s, "SELECT affinity FROM people WHERE person_id = '10001' AND name = '甲'"), 10);
	/* the create is touched by the update and its revert since */
	check_refused(&s, created, "later_change");
	json_decref(t_call_ok(s.z, NULL, "zcor_relationship_delete", "{\"personId\":\"10001\"}"));
	CHECK_INT(sql_int(&s, "SELECT count(*) FROM people"), 0);
	json_decref(revert_ok(&s, last_seq(&s, "zcor_relationship_delete")));
	CHECK_INT(sql_int(&s, "SELECT count(*) FROM people WHERE name = '甲'"), 1);
	/* a create alone: reverting it deletes the person */
	json_decref(t_call_ok(s.z, NULL, "zcor_relationship_write", "{\"personId\":\"10002\",\"name\":\"丙\",\"relationship\":\"同学\",\"affinity\":0,\"reason\":\"r\"}"));
	json_decref(revert_ok(&s, last_seq(&s, "zcor_relationship_write")));
	CHECK_INT(sql_int(&s, "SELECT count(*) FROM people WHERE person_id = '10002'"), 0);
	zcor_close(s.z);
}

static void issue18_revert_of_a_revert_redoes_and_twice_is_refused(void)
{
	struct t_store s = fresh();
	char *a = make(&s, "a", NULL), *b = make(&s, "b", NULL);
	json_decref(t_call_ok(s.z, NULL, "zcor_memory_merge",
			      "{\"ids\":[\"%s\",\"%s\"],\"title\":\"ab\",\"content\":\"both\",\"reason\":\"r\"}", a, b));
	long long merge = last_seq(&s, "zcor_memory_merge");
	json_decref(revert_ok(&s, merge));
	check_refused(&s, merge, "already_reverted");
	/* the revert's own record reverted: the merge is back */
	json_decref(revert_ok(&s, last_seq(&s, "history_revert")));
	CHECK_INT(sql_int(&s, "SELECT count(*) FROM nodes WHERE superseded_by IS NOT NULL"), 2);
	CHECK_INT(sql_int(&s, "SELECT count(*) FROM nodes WHERE merged_from IS NOT NULL"), 1);
	/* issue18_minor_revert_after_redo: the merge again: refused, pointing
	 * at the newest revert (the redo), not the first */
	long long undo = sql_int(&s, "SELECT min(seq) FROM history WHERE operation = 'history_revert' AND status = 'ok'");
	long long redo = last_seq(&s, "history_revert");
	int rc = 0;
	json_t *v = revert(&s, merge, &rc);
	CHECK_INT(rc, ZCOR_ECONFLICT);
	CHECK_STR(t_str(v, "error.details.reason"), "redone");
	CHECK_INT(t_int(v, "error.details.revertedBy"), undo);
	CHECK_INT(t_int(v, "error.details.newest"), redo);
	json_decref(v);
	/* the redo reverted too: undone again, the one to revert is that one */
	json_decref(revert_ok(&s, redo));
	long long again = last_seq(&s, "history_revert");
	CHECK_INT(sql_int(&s, "SELECT count(*) FROM nodes WHERE superseded_by IS NOT NULL"), 0);
	v = revert(&s, merge, &rc);
	CHECK_INT(rc, ZCOR_ECONFLICT);
	CHECK_STR(t_str(v, "error.details.reason"), "already_reverted");
	CHECK_INT(t_int(v, "error.details.revertedBy"), again);
	CHECK_INT(t_int(v, "error.details.firstRevert"), undo);
	json_decref(v);
	free(a);
	free(b);
	zcor_close(s.z);
}

/* ---- refusals --------------------------------------------------------- */

static void issue18_revert_refused_after_a_later_change_of_the_same_memory(void)
{
	struct t_store s = fresh();
	char *a = make(&s, "a", NULL);
	char extra[64];
	snprintf(extra, sizeof(extra), ",\"id\":\"%s\"", a);
	json_decref(t_call_ok(s.z, NULL, "zcor_memory_write", "{\"title\":\"a2\",\"content\":\"x\"%s}", extra));
	long long first = last_seq(&s, "zcor_memory_write");
	json_decref(t_call_ok(s.z, NULL, "zcor_memory_write", "{\"title\":\"a3\",\"content\":\"y\"%s}", extra));
	long long second = last_seq(&s, "zcor_memory_write");
	int rc = 0;
	json_t *v = revert(&s, first, &rc);
	CHECK_INT(rc, ZCOR_ECONFLICT);
	CHECK_STR(t_str(v, "error.details.reason"), "later_change");
	CHECK_INT(t_int(v, "error.details.conflicts.0.seq"), second);
	CHECK_STR(t_str(v, "error.details.conflicts.0.targets.0"), a);
	json_decref(v);
	check_col(&s, a, "title", "a3");
	/* an unrelated later change does not stand in the way */
	free(make(&s, "other", NULL));
	json_decref(revert_ok(&s, second));
	check_col(&s, a, "title", "a2");
	free(a);
	zcor_close(s.z);
}

static void issue18_revert_refused_for_failed_reads_and_other_kinds(void)
{
	struct t_store s = fresh();
	char *a = make(&s, "a", NULL);
	int rc = 0;
	json_decref(t_call_rc(s.z, NULL, &rc, "zcor_memory_delete", "{\"id\":\"nope\"}"));
	check_refused(&s, sql_int(&s, "SELECT max(seq) FROM history WHERE status = 'error'"), "failed_call");
	json_decref(t_call_ok(s.z, NULL, "zcor_memory_read", "{\"id\":\"%s\"}", a));
	check_refused(&s, last_seq(&s, "zcor_memory_read"), "nothing_changed");
	/* an important call that changed nothing (already unmarked) */
	mark(&s, a, 0);
	check_refused(&s, last_seq(&s, "zcor_memory_important"), "nothing_changed");
	json_decref(t_call_ok(s.z, NULL, "zcor_memory_backup", "{}"));
	check_refused(&s, last_seq(&s, "zcor_memory_backup"), "not_revertible");
	json_decref(t_call_ok(s.z, NULL, "zcor_synonyms_add", "{\"terms\":[\"猫\",\"喵星人\"]}"));
	check_refused(&s, last_seq(&s, "zcor_synonyms_add"), "not_revertible");
	/* no such record; a bad number */
	json_t *v = revert(&s, 999999, &rc);
	CHECK_INT(rc, ZCOR_ENOTFOUND);
	json_decref(v);
	v = revert(&s, 0, &rc);
	CHECK_INT(rc, ZCOR_EINVAL);
	CHECK_STR(t_str(v, "error.details.field"), "seq");
	json_decref(v);
	free(a);
	zcor_close(s.z);
}

static void issue18_revert_refused_after_a_restore(void)
{
	struct t_store s = fresh();
	char *a = make(&s, "a", NULL);
	json_t *b = t_call_ok(s.z, NULL, "zcor_memory_backup", "{}");
	char *file = strdup(t_str(b, "file") ? t_str(b, "file") : "");
	json_decref(b);
	long long created = last_seq(&s, "zcor_memory_write");
	json_decref(t_call_ok(s.z, NULL, "zcor_memory_restore", "{\"backupFile\":\"%s\"}", file));
	check_refused(&s, created, "later_change");
	check_refused(&s, last_seq(&s, "zcor_memory_restore"), "not_revertible");
	free(file);
	free(a);
	zcor_close(s.z);
}

static void issue18_revert_refused_when_changed_without_a_record(void)
{
	struct t_store s = fresh();
	char *a = make(&s, "a", NULL);
	long long seq = last_seq(&s, "zcor_memory_write");
	t_sql_exec(s.z, "UPDATE nodes SET title = 'by hand' WHERE id = '%s'", a);
	check_refused(&s, seq, "changed_since");
	CHECK_INT(exists(&s, a), 1);
	free(a);
	zcor_close(s.z);
}

static void issue18_revert_is_the_operators_only(void)
{
	struct t_store s = fresh();
	char *a = make(&s, "a", NULL);
	struct zcor_ctx ctx = {ZCOR_ACTOR_UI, "group:1"};
	char *out = NULL;
	int rc = zcor_history_revert(s.z, &ctx, last_seq(&s, "zcor_memory_write"), &out);
	CHECK_INT(rc, ZCOR_EFORBIDDEN);
	CHECK(out == NULL);
	CHECK_INT(exists(&s, a), 1);
	free(a);
	zcor_close(s.z);
}

const struct t_case t_cases[] = {
	{"issue18_revert_update_restores_the_before_image_as_a_new_record",
	 issue18_revert_update_restores_the_before_image_as_a_new_record},
	{"issue18_revert_create_deletes_the_memory", issue18_revert_create_deletes_the_memory},
	{"issue18_revert_create_refused_when_the_memory_has_children",
	 issue18_revert_create_refused_when_the_memory_has_children},
	{"issue18_revert_delete_writes_it_back_with_its_mark", issue18_revert_delete_writes_it_back_with_its_mark},
	{"issue18_revert_delete_refused_when_its_parent_is_gone",
	 issue18_revert_delete_refused_when_its_parent_is_gone},
	{"issue18_revert_important_mark_and_unmark", issue18_revert_important_mark_and_unmark},
	{"issue18_revert_important_gives_the_replaced_mark_back",
	 issue18_revert_important_gives_the_replaced_mark_back},
	{"issue18_revert_refused_when_five_are_marked_again", issue18_revert_refused_when_five_are_marked_again},
	{"issue18_revert_merge_restores_the_sources_and_removes_the_merged",
	 issue18_revert_merge_restores_the_sources_and_removes_the_merged},
	{"issue18_revert_supersede_gives_the_mark_back_to_the_source",
	 issue18_revert_supersede_gives_the_mark_back_to_the_source},
	{"issue18_revert_relationship_write_and_delete", issue18_revert_relationship_write_and_delete},
	{"issue18_revert_of_a_revert_redoes_and_twice_is_refused",
	 issue18_revert_of_a_revert_redoes_and_twice_is_refused},
	{"issue18_revert_refused_after_a_later_change_of_the_same_memory",
	 issue18_revert_refused_after_a_later_change_of_the_same_memory},
	{"issue18_revert_refused_for_failed_reads_and_other_kinds",
	 issue18_revert_refused_for_failed_reads_and_other_kinds},
	{"issue18_revert_refused_after_a_restore", issue18_revert_refused_after_a_restore},
	{"issue18_revert_refused_when_changed_without_a_record",
	 issue18_revert_refused_when_changed_without_a_record},
	{"issue18_revert_is_the_operators_only", issue18_revert_is_the_operators_only},
	{0},
};
