/*
 * people.c — person relationships (Z-REL; one table also serves
 * PEOPLE.md in seed 003). People are always global, so a private
 * conversation may read them but never change them (Q-SCOPE).
 * Memory layer.
 */
#include <string.h>
#include <strings.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/json.h"
#include "base/timeutil.h"
#include "memory/memory.h"
#include "text/norm.h"


json_t *zc_person_from_row(sqlite3_stmt *st)
{
	json_t *p = json_object();
	zc_json_set_str(p, "personId", (const char *)sqlite3_column_text(st, 0));
	zc_json_set_str(p, "name", (const char *)sqlite3_column_text(st, 1));
	json_object_set_new(p, "aliases", zc_col_json(st, 2, '['));
	zc_json_set_str(p, "relationship", (const char *)sqlite3_column_text(st, 3));
	json_object_set_new(p, "affinity", json_integer(sqlite3_column_int(st, 4)));
	zc_json_set_str(p, "reason", (const char *)sqlite3_column_text(st, 5));
	zc_json_set_str(p, "memoryNodeId", (const char *)sqlite3_column_text(st, 6));
	zc_col_time(p, "firstSeen", st, 7);
	zc_json_set_str(p, "confidence", (const char *)sqlite3_column_text(st, 8));
	zc_col_time(p, "createdAt", st, 9);
	zc_col_time(p, "updatedAt", st, 10);
	return p;
}

int zc_person_save(struct zc_op *op, const json_t *p, struct zc_err *e)
{
	sqlite3_stmt *st = zc_stmt(
		&op->m->store,
		"INSERT INTO people(person_id, name, aliases, relationship, affinity, reason, "
		"memory_node_id, first_seen, confidence, created_at, updated_at, search_norm) "
		"VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?10, ?11, ?12, ?13) "
		"ON CONFLICT(person_id) DO UPDATE SET name = excluded.name, aliases = excluded.aliases, "
		"relationship = excluded.relationship, affinity = excluded.affinity, "
		"reason = excluded.reason, memory_node_id = excluded.memory_node_id, "
		"first_seen = excluded.first_seen, confidence = excluded.confidence, "
		"updated_at = excluded.updated_at, search_norm = excluded.search_norm RETURNING seq",
		e);
	if (!st)
		return e->code;
	struct zc_buf all = ZC_BUF_INIT;
	const char *keys[] = {"personId", "name", "relationship", "reason"};
	for (size_t i = 0; i < 4; i++) {
		const char *s = zc_json_str(p, keys[i]);
		zc_buf_addf(&all, "%s\n", s ? s : "");
	}
	size_t i;
	json_t *a;
	json_array_foreach(json_object_get(p, "aliases"), i, a) zc_buf_addf(&all, "%s\n", json_string_value(a));
	sqlite3_bind_text(st, 1, zc_json_str(p, "personId"), -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, zc_json_str(p, "name"), -1, SQLITE_TRANSIENT);
	json_t *aliases = json_object_get(p, "aliases");
	sqlite3_bind_text(st, 3, aliases ? zc_json_dump(aliases) : zc_strdup("[]"), -1, zc_free);
	const char *rel = zc_json_str(p, "relationship"), *reason = zc_json_str(p, "reason");
	sqlite3_bind_text(st, 4, rel ? rel : "", -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 5, json_integer_value(json_object_get(p, "affinity")));
	sqlite3_bind_text(st, 6, reason ? reason : "", -1, SQLITE_TRANSIENT);
	const char *link = zc_json_str(p, "memoryNodeId");
	if (link)
		sqlite3_bind_text(st, 7, link, -1, SQLITE_TRANSIENT);
	int64_t first = zc_json_get_time(p, "firstSeen", -1);
	if (first >= 0)
		sqlite3_bind_int64(st, 8, first);
	const char *conf = zc_json_str(p, "confidence");
	if (conf)
		sqlite3_bind_text(st, 10, conf, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 11, zc_json_get_time(p, "createdAt", op->now));
	sqlite3_bind_int64(st, 12, zc_json_get_time(p, "updatedAt", op->now));
	sqlite3_bind_text(st, 13, zc_norm(zc_buf_str(&all)), -1, zc_free);
	zc_buf_release(&all);
	int rc = sqlite3_step(st);
	sqlite3_int64 seq = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	if (rc == SQLITE_ROW)
		rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return zc_store_fail(&op->m->store, rc, e, "saving a person");
	return zc_person_index_terms(&op->m->store, seq, p, e);
}

int zc_person_index_terms(struct zc_store *s, sqlite3_int64 seq, const json_t *p, struct zc_err *e)
{
	/* names, aliases and the id (a QQ number) are entity terms for recall */
	json_t *terms = json_array();
	size_t i;
	json_t *a;
	json_array_append_new(terms, zc_json_string_own(zc_norm(zc_json_str(p, "name"))));
	json_array_append_new(terms, zc_json_string_own(zc_norm(zc_json_str(p, "personId"))));
	json_array_foreach(json_object_get(p, "aliases"), i, a)
		json_array_append_new(terms, zc_json_string_own(zc_norm(json_string_value(a))));
	int rc = zc_terms_set(s, "person", seq, "global", terms, e);
	json_decref(terms);
	return rc;
}

int zc_person_load(struct zc_op *op, const char *id, json_t **p, struct zc_err *e)
{
	*p = NULL;
	sqlite3_stmt *st = zc_stmt(&op->m->store,
				   "SELECT " ZC_PERSON_COLS " FROM people WHERE person_id = ?1", e);
	if (!st)
		return e->code;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*p = zc_person_from_row(st);
	sqlite3_reset(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return zc_store_fail(&op->m->store, rc, e, "reading a person");
	return ZCOR_OK;
}

static int not_found(const char *id, struct zc_err *e)
{
	return zc_fail(e, ZCOR_ENOTFOUND,
		       "no relationship for person '%s'; find people with zcor_relationship_query", id);
}

static int refuse_private(struct zc_op *op, struct zc_err *e)
{
	if (!zc_scope_is_private(op->ctx))
		return ZCOR_OK;
	return zc_fail(e, ZCOR_EFORBIDDEN,
		       "relationships are shared with every conversation and a private conversation "
		       "cannot change them; save what you learned here with zcor_memory_write (it "
		       "stays in this conversation)");
}

/* Q-SCOPE: a person is global, its memory node may be a conversation's
 * own (relationship_write); another conversation is not shown that link. */
static int visible_link(struct zc_op *op, json_t *p, struct zc_err *e)
{
	const char *link = zc_json_str(p, "memoryNodeId");
	if (!link || !op->ctx->conversation)
		return ZCOR_OK;
	sqlite3_stmt *st = zc_stmt(&op->m->store, "SELECT scope FROM nodes WHERE id = ?1", e);
	if (!st)
		return e->code;
	sqlite3_bind_text(st, 1, link, -1, SQLITE_TRANSIENT);
	int step = sqlite3_step(st);
	int seen = step == SQLITE_ROW &&
		   zc_scope_visible(op->ctx, (const char *)sqlite3_column_text(st, 0));
	sqlite3_reset(st);
	if (step != SQLITE_ROW && step != SQLITE_DONE)
		return zc_store_fail(&op->m->store, step, e, "reading a person");
	if (!seen)
		json_object_set_new(p, "memoryNodeId", json_null());
	return ZCOR_OK;
}

static int relationship_read(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	const char *id = zc_json_str(args, "personId");
	json_t *p = NULL;
	int rc = zc_person_load(op, id, &p, e);
	if (rc)
		return rc;
	if (!p)
		return not_found(id, e);
	if ((rc = visible_link(op, p, e))) {
		json_decref(p);
		return rc;
	}
	*out = json_pack("{s:o}", "person", p);
	return ZCOR_OK;
}

#define PEOPLE_WHERE                                                                       \
	" FROM people WHERE NOT EXISTS (SELECT 1 FROM json_each(?1) k WHERE "              \
	"instr(search_norm, k.value) = 0)"

static int relationship_query(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	long long limit, offset, total = 0;
	int rc = zc_page_args(args, &limit, &offset, e);
	if (rc)
		return rc;
	json_t *kwj = json_object_get(args, "keywords");
	char *kw = kwj ? zc_norm_keywords(kwj) : zc_strdup("[]");
	json_t *items = json_array();
	sqlite3_stmt *st = zc_stmt(&op->m->store, "SELECT count(*)" PEOPLE_WHERE, e);
	if (!st) {
		rc = e->code;
		goto out;
	}
	sqlite3_bind_text(st, 1, kw, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) == SQLITE_ROW)
		total = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	/* sort (the People panel, issue 18): the schema allows these only */
	const char *sort = zc_json_str(args, "sort");
	if (sort && strcmp(sort, "affinity") == 0)
		st = zc_stmt(&op->m->store,
			     "SELECT " ZC_PERSON_COLS PEOPLE_WHERE
			     " ORDER BY affinity DESC, updated_at DESC, seq DESC LIMIT ?2 OFFSET ?3",
			     e);
	else if (sort && strcmp(sort, "affinityLow") == 0)
		st = zc_stmt(&op->m->store,
			     "SELECT " ZC_PERSON_COLS PEOPLE_WHERE
			     " ORDER BY affinity ASC, updated_at DESC, seq DESC LIMIT ?2 OFFSET ?3",
			     e);
	else
		st = zc_stmt(&op->m->store,
			     "SELECT " ZC_PERSON_COLS PEOPLE_WHERE
			     " ORDER BY updated_at DESC, seq DESC LIMIT ?2 OFFSET ?3",
			     e);
	if (!st) {
		rc = e->code;
		goto out;
	}
	sqlite3_bind_text(st, 1, kw, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 2, limit);
	sqlite3_bind_int64(st, 3, offset);
	int step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW)
		json_array_append_new(items, zc_person_from_row(st));
	sqlite3_reset(st);
	if (step != SQLITE_DONE) {
		rc = zc_store_fail(&op->m->store, step, e, "reading people");
		goto out;
	}
	size_t i;
	json_t *it;
	json_array_foreach(items, i, it) {
		if ((rc = visible_link(op, it, e)))
			goto out;
	}
	*out = zc_page_result(items, total, offset);
out:
	zc_free(kw);
	json_decref(items);
	return rc;
}

/*
 * One id form for a QQ person (issue 18): the bare QQ number, as the QQ
 * world logs a speaker and recall matches it ("12345"). A new person
 * named "qq:12345" would never be recalled for its speaker, so it is
 * refused with the id to use; one saved so before can still be read,
 * edited and deleted.
 */
static int check_new_id(const char *id, struct zc_err *e)
{
	if (strncasecmp(id, "qq:", 3) != 0)
		return ZCOR_OK;
	const char *num = id + 3;
	while (*num == ' ')
		num++;
	size_t n = strspn(num, "0123456789");
	if (n == 0 || num[n])
		return ZCOR_OK;
	int rc = zc_fail(e, ZCOR_EINVAL,
			 "argument 'personId': '%s' is a QQ number with a prefix; on QQ a person's id is the "
			 "bare QQ number, '%s', which recall matches the speaker by: save it under that",
			 ZC_Q(id, 40), ZC_Q(num, 30));
	zc_json_err_detail(e, json_pack("{s:s, s:s, s:s}", "field", "personId", "reason", "id_form",
					"suggestion", num));
	return rc;
}

static int relationship_write(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	const char *id = zc_json_str(args, "personId");
	json_t *p = NULL, *old = NULL;
	int rc = refuse_private(op, e);
	if (rc || (rc = zc_person_load(op, id, &old, e)))
		return rc;
	if (!old && (rc = check_new_id(id, e)))
		return rc;
	json_t *link = json_object_get(args, "memoryNodeId");
	if (json_is_string(link)) {
		json_t *n = NULL;
		if ((rc = zc_node_load(op, json_string_value(link), &n, e))) {
			zc_err_prefix(e, "argument 'memoryNodeId'");
			goto out;
		}
		/* zc_node_load found it, so the caller may see it: a global
		 * memory, or one of the caller's own conversation (seed 000's
		 * person node); other conversations do not see the link
		 * (visible_link) */
		json_decref(n);
	}
	p = old ? json_deep_copy(old) : json_pack("{s:s}", "personId", id);
	if (!old) {
		zc_json_set_time(p, "firstSeen", op->now);
		zc_json_set_time(p, "createdAt", op->now);
		json_object_set_new(p, "aliases", json_array());
	}
	static const char *const keys[] = {"name", "relationship", "affinity", "reason", "aliases",
					   "memoryNodeId"};
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		json_t *v = json_object_get(args, keys[i]);
		if (v)
			json_object_set(p, keys[i], v);
	}
	zc_json_set_time(p, "updatedAt", op->now);
	if ((rc = zc_person_save(op, p, e)))
		goto out;
	json_decref(p);
	if ((rc = zc_person_load(op, id, &p, e)))
		goto out;
	if (old)
		zc_op_before(op, json_incref(old));
	zc_op_after(op, json_incref(p));
	*out = json_pack("{s:b, s:O}", "created", old == NULL, "person", p);
out:
	json_decref(p);
	json_decref(old);
	return rc;
}

int zc_person_delete(struct zc_op *op, const char *id, struct zc_err *e)
{
	sqlite3_stmt *st = zc_stmt(&op->m->store, "DELETE FROM people WHERE person_id = ?1", e);
	if (!st)
		return e->code;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? ZCOR_OK : zc_store_fail(&op->m->store, rc, e, "deleting a person");
}

static int relationship_delete(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	const char *id = zc_json_str(args, "personId");
	json_t *p = NULL;
	int rc = refuse_private(op, e);
	if (rc || (rc = zc_person_load(op, id, &p, e)))
		return rc;
	if (!p)
		return not_found(id, e);
	if ((rc = zc_person_delete(op, id, e))) {
		json_decref(p);
		return rc;
	}
	zc_op_before(op, p);
	*out = json_pack("{s:s, s:b}", "personId", id, "deleted", 1);
	return ZCOR_OK;
}

const struct zc_opdef zc_op_relationship_read = {"zcor_relationship_read", NULL, relationship_read, 1};
const struct zc_opdef zc_op_relationship_query = {"zcor_relationship_query", NULL, relationship_query, 1};
const struct zc_opdef zc_op_relationship_write = {"zcor_relationship_write", NULL, relationship_write, 0};
const struct zc_opdef zc_op_relationship_delete = {"zcor_relationship_delete", NULL,
						   relationship_delete, 0};
