/*
 * node.c — memory nodes: rows and their JSON, writing, reading the tree,
 * delete and importance (seed 000, SPEC §3.1); the query is
 * node_query.c, merge and supersede node_merge.c, what they share
 * node_int.h. Memory layer: every rule about a node lives in these files;
 * callers get JSON in and JSON out. Its operations run inside the
 * runner's transaction (op.c) and never begin or commit one of their own;
 * the hosts' reads at the end only read, in a read transaction. It never
 * writes mirror/ files (the commit hook does) and never calls up into
 * recall/ or above.
 */
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/json.h"
#include "base/timeutil.h"
#include "base/utf8.h"
#include "memory/memory.h"
#include "memory/node_int.h"
#include "text/norm.h"
#include "text/tokens.h"

/* ---- rows <-> JSON -------------------------------------------------- */


/* The JSON form of a ZC_NODE_COLS row, field by field in its order: one
 * table for the tree (zc_node_from_row) and the text
 * (zc_node_text_from_row), so the two cannot differ. */
enum { F_STR, F_ARRAY, F_JSON, F_OBJECT, F_NOT_NULL, F_BOOL, F_TIME, F_INT };
/* key, and the text before its value: ,"key": (the first without the comma) */
#define FIELD(k, kind) {k, ",\"" k "\":", sizeof(",\"" k "\":") - 1, kind}
static const struct {
	const char *key;
	const char *lead;
	unsigned char lead_len;
	unsigned char kind;
} NODE_FIELDS[] = {
	FIELD("id", F_STR), FIELD("title", F_STR), FIELD("content", F_STR), FIELD("keywords", F_ARRAY),
	FIELD("parentId", F_STR), FIELD("sourceMessage", F_STR), FIELD("important", F_NOT_NULL),
	FIELD("supersededBy", F_STR), FIELD("supersededReason", F_STR), FIELD("mergedFrom", F_JSON),
	FIELD("mergedReason", F_STR), FIELD("scope", F_STR), FIELD("kind", F_STR), FIELD("section", F_STR),
	FIELD("pinned", F_BOOL), FIELD("date", F_STR), FIELD("expires", F_STR), FIELD("confidence", F_STR),
	FIELD("tier", F_STR), FIELD("archiveMonth", F_STR), FIELD("attrs", F_OBJECT), FIELD("createdAt", F_TIME),
	FIELD("updatedAt", F_TIME), FIELD("hits", F_INT), FIELD("lastHitAt", F_TIME),
};
#undef FIELD
#define NODE_NFIELDS (sizeof(NODE_FIELDS) / sizeof(NODE_FIELDS[0]))
static const char JSON_FALLBACK[] = {[F_ARRAY] = '[', [F_JSON] = 'n', [F_OBJECT] = '{'};

json_t *zc_node_from_row(sqlite3_stmt *st)
{
	json_t *n = json_object();
	for (int i = 0; i < (int)NODE_NFIELDS; i++) {
		const char *key = NODE_FIELDS[i].key;
		switch (NODE_FIELDS[i].kind) {
		case F_STR:
			zc_json_set_str(n, key, (const char *)sqlite3_column_text(st, i));
			break;
		case F_NOT_NULL:
			json_object_set_new(n, key, json_boolean(sqlite3_column_type(st, i) != SQLITE_NULL));
			break;
		case F_BOOL:
			json_object_set_new(n, key, json_boolean(sqlite3_column_int(st, i)));
			break;
		case F_TIME:
			zc_col_time(n, key, st, i);
			break;
		case F_INT:
			json_object_set_new(n, key, json_integer(sqlite3_column_int64(st, i)));
			break;
		default:
			json_object_set_new(n, key, zc_col_json(st, i, JSON_FALLBACK[NODE_FIELDS[i].kind]));
		}
	}
	return n;
}

/* Appends n bytes where zc_buf_grow made room (FIELD_ROOM each field). */
static inline void put(struct zc_buf *b, const char *s, size_t n)
{
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}
#define PUT_LIT(b, s) put((b), (s), sizeof(s) - 1)
/* the longest lead (,"supersededReason": 20) and a quoted time (26) */
enum { FIELD_ROOM = 20 + 2 + ZC_TIME_LEN };

void zc_node_text_from_row(struct zc_buf *b, sqlite3_stmt *st)
{
	for (int i = 0; i < (int)NODE_NFIELDS; i++) {
		/* one check for the room of the lead and a value of its own:
		 * a search writes 25 of each per hit (issue 19) */
		zc_buf_grow(b, FIELD_ROOM);
		/* ASCII letters: nothing to escape; the row's '{' in place of
		 * the first field's comma */
		put(b, NODE_FIELDS[i].lead, NODE_FIELDS[i].lead_len);
		if (!i)
			b->p[b->len - NODE_FIELDS[i].lead_len] = '{';
		switch (NODE_FIELDS[i].kind) {
		case F_STR: {
			/* NULL for a NULL column (or what sqlite gives no text for) */
			const char *s = (const char *)sqlite3_column_text(st, i);
			if (!s) {
				PUT_LIT(b, "null");
				break;
			}
			size_t len = strlen(s); /* as the tree's: to a NUL inside */
			if (zc_utf8_valid(s, len))
				zc_json_buf_stringn(b, s, len);
			else { /* as zc_json_set_str: U+FFFD, not dropped */
				char *ok = zc_utf8_lossy(s);
				zc_json_buf_stringn(b, ok, strlen(ok));
				zc_free(ok);
			}
			break;
		}
		case F_NOT_NULL:
			if (sqlite3_column_type(st, i) == SQLITE_NULL)
				PUT_LIT(b, "false");
			else
				PUT_LIT(b, "true");
			break;
		case F_BOOL:
			if (sqlite3_column_int(st, i))
				PUT_LIT(b, "true");
			else
				PUT_LIT(b, "false");
			break;
		case F_TIME: {
			if (sqlite3_column_type(st, i) == SQLITE_NULL) {
				PUT_LIT(b, "null");
				break;
			}
			/* digits, '-', ':', 'T', '.', 'Z': nothing to escape */
			char *t = b->p + b->len;
			t[0] = '"';
			zc_time_format(sqlite3_column_int64(st, i), t + 1);
			size_t n = strlen(t);
			t[n] = '"';
			t[n + 1] = '\0';
			b->len += n + 1;
			break;
		}
		case F_INT:
			zc_buf_addll(b, (long long)sqlite3_column_int64(st, i));
			break;
		default: {
			/* the common texts as they are (what parsing and dumping
			 * them gives); any other through the tree */
			const char *s = (const char *)sqlite3_column_text(st, i);
			if (!s) { /* zc_col_json's fallback */
				if (NODE_FIELDS[i].kind == F_ARRAY)
					PUT_LIT(b, "[]");
				else if (NODE_FIELDS[i].kind == F_OBJECT)
					PUT_LIT(b, "{}");
				else
					PUT_LIT(b, "null");
				break;
			}
			if ((strcmp(s, "[]") == 0 || strcmp(s, "{}") == 0 || strcmp(s, "null") == 0)) {
				put(b, s, strlen(s));
				break;
			}
			json_t *v = zc_col_json(st, i, JSON_FALLBACK[NODE_FIELDS[i].kind]);
			zc_json_buf_dump(b, v);
			json_decref(v);
		}
		}
	}
	zc_buf_addc(b, '}');
}

static int load_any(struct zc_op *op, const char *id, json_t **node, struct zc_err *e)
{
	*node = NULL;
	sqlite3_stmt *st = zc_stmt(&op->m->store, "SELECT " ZC_NODE_COLS " FROM nodes WHERE id = ?1", e);
	if (!st)
		return e->code;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*node = zc_node_from_row(st);
	sqlite3_reset(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return zc_store_fail(&op->m->store, rc, e, "reading a memory");
	return ZCOR_OK;
}

int zc_node_load(struct zc_op *op, const char *id, json_t **node, struct zc_err *e)
{
	int rc = load_any(op, id, node, e);
	if (rc)
		return rc;
	if (!*node || !zc_scope_visible(op->ctx, zc_json_str(*node, "scope"))) {
		json_decref(*node);
		*node = NULL;
		return zc_fail(e, ZCOR_ENOTFOUND,
			       "no memory with id '%s'; find ids with zcor_memory_query or "
			       "zcor_memory_children",
			       id);
	}
	return ZCOR_OK;
}

/* Loads a node op->ctx may change. */
int zc_node_load_writable(struct zc_op *op, const char *id, json_t **node, struct zc_err *e)
{
	int rc = zc_node_load(op, id, node, e);
	if (rc)
		return rc;
	if (!zc_scope_writable(op->ctx, zc_json_str(*node, "scope"))) {
		json_decref(*node);
		*node = NULL;
		return zc_fail(e, ZCOR_EFORBIDDEN,
			       "memory '%s' is shared with every conversation and a private conversation "
			       "cannot change it; save what you learned here as a new memory with "
			       "zcor_memory_write (it stays in this conversation)",
			       id);
	}
	return ZCOR_OK;
}

static void bind_str_or_null(sqlite3_stmt *st, int i, const json_t *v)
{
	if (json_is_string(v))
		sqlite3_bind_text(st, i, json_string_value(v), -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static void bind_json_col(sqlite3_stmt *st, int i, const json_t *v, const char *dflt)
{
	if (!v || json_is_null(v)) {
		if (dflt)
			sqlite3_bind_text(st, i, dflt, -1, SQLITE_STATIC);
		else
			sqlite3_bind_null(st, i);
		return;
	}
	sqlite3_bind_text(st, i, zc_json_dump(v), -1, zc_free);
}

static long long id_counter(const char *id); /* below, with zc_node_new_id */

int zc_node_save(struct zc_op *op, const json_t *n, struct zc_err *e)
{
	sqlite3_stmt *st = zc_stmt(
		&op->m->store,
		"INSERT INTO nodes(seq, id, title, content, keywords, parent_id, source_message, "
		"superseded_by, superseded_reason, merged_from, merged_reason, scope, kind, section, "
		"pinned, date, expires, confidence, tier, archive_month, attrs, created_at, updated_at, "
		"title_norm) VALUES(?25, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?10, ?11, ?12, ?13, "
		"?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24) "
		"ON CONFLICT(id) DO UPDATE SET title = excluded.title, content = excluded.content, "
		"keywords = excluded.keywords, parent_id = excluded.parent_id, "
		"source_message = excluded.source_message, superseded_by = excluded.superseded_by, "
		"superseded_reason = excluded.superseded_reason, merged_from = excluded.merged_from, "
		"merged_reason = excluded.merged_reason, scope = excluded.scope, kind = excluded.kind, "
		"section = excluded.section, pinned = excluded.pinned, date = excluded.date, "
		"expires = excluded.expires, confidence = excluded.confidence, tier = excluded.tier, "
		"archive_month = excluded.archive_month, attrs = excluded.attrs, "
		"updated_at = excluded.updated_at, title_norm = excluded.title_norm RETURNING seq",
		e);
	if (!st)
		return e->code;
	const char *title = zc_json_str(n, "title"), *content = zc_json_str(n, "content");
	sqlite3_bind_text(st, 1, zc_json_str(n, "id"), -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, title, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, content, -1, SQLITE_TRANSIENT);
	bind_json_col(st, 4, json_object_get(n, "keywords"), "[]");
	bind_str_or_null(st, 5, json_object_get(n, "parentId"));
	bind_str_or_null(st, 6, json_object_get(n, "sourceMessage"));
	bind_str_or_null(st, 7, json_object_get(n, "supersededBy"));
	bind_str_or_null(st, 8, json_object_get(n, "supersededReason"));
	bind_json_col(st, 10, json_object_get(n, "mergedFrom"), NULL);
	bind_str_or_null(st, 11, json_object_get(n, "mergedReason"));
	const char *scope = zc_json_str(n, "scope"), *kind = zc_json_str(n, "kind");
	const char *tier = zc_json_str(n, "tier");
	sqlite3_bind_text(st, 12, scope ? scope : "global", -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 13, kind ? kind : "memory", -1, SQLITE_TRANSIENT);
	bind_str_or_null(st, 14, json_object_get(n, "section"));
	sqlite3_bind_int(st, 15, json_is_true(json_object_get(n, "pinned")));
	bind_str_or_null(st, 16, json_object_get(n, "date"));
	bind_str_or_null(st, 17, json_object_get(n, "expires"));
	bind_str_or_null(st, 18, json_object_get(n, "confidence"));
	sqlite3_bind_text(st, 19, tier ? tier : "hot", -1, SQLITE_TRANSIENT);
	bind_str_or_null(st, 20, json_object_get(n, "archiveMonth"));
	bind_json_col(st, 21, json_object_get(n, "attrs"), "{}");
	sqlite3_bind_int64(st, 22, zc_json_get_time(n, "createdAt", op->now));
	sqlite3_bind_int64(st, 23, zc_json_get_time(n, "updatedAt", op->now));
	sqlite3_bind_text(st, 24, zc_norm(title), -1, zc_free);
	/* an id this operation generated: its counter is its seq (a record
	 * that has one keeps it: the upsert does not set seq) */
	long long counter = id_counter(zc_json_str(n, "id"));
	if (op->id_lo && counter >= op->id_lo && counter <= op->id_hi)
		sqlite3_bind_int64(st, 25, counter);
	else
		sqlite3_bind_null(st, 25);
	int rc = sqlite3_step(st);
	sqlite3_int64 seq = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	if (rc == SQLITE_ROW)
		rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return zc_store_fail(&op->m->store, rc, e, "saving a memory");
	/* a new node's terms and full-text rows wait for their batches
	 * (zc_node_catch_up_due): three terms at random places of the
	 * dictionary were three or four pages of every write's WAL */
	long long upto = 0;
	if ((rc = zc_meta_get_int(&op->m->store, "terms_upto", &upto, e)))
		return rc;
	if (seq <= upto && (rc = zc_node_index_terms(&op->m->store, seq, e)))
		return rc;
	return zc_node_catch_up_due(&op->m->store, seq, op->m->fts_batch, e);
}

int zc_may_inject(const char *superseded_by, const char *tier, const char *confidence,
		  const char *kind)
{
	return !superseded_by && (!tier || strcmp(tier, "hot") == 0) &&
	       !(confidence && strcmp(confidence, "存疑") == 0) &&
	       !(kind && strcmp(kind, "document") == 0);
}

int zc_scope_may_inject(const char *conv, const char *scope)
{
	return scope && (strcmp(scope, "global") == 0 || (conv && strcmp(scope, conv) == 0));
}

int zc_node_index_terms(struct zc_store *s, sqlite3_int64 seq, struct zc_err *e)
{
	/* the dictionary terms recall finds verbatim in messages, only for
	 * records recall may inject (the gate, memory.h): the store's one
	 * statement, which a batch of new nodes uses too */
	return zc_store_node_terms(s, seq - 1, seq, e);
}

/* Ids: 'm' + 6 base-36 digits from a counter, so generated ids sort in
 * creation order as strings too; an id taken by an import is skipped.
 * The counter is one more than the newest seq, than meta.next_node (the
 * highest seq a delete removed: trigger nodes_floor_ad, schema 22; before
 * it, the counter itself) and than what this operation gave already; the
 * node takes it as its seq (zc_node_save), so no plain write writes a
 * row of meta (a page of its WAL) and no id is given twice. */
static const char id_digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";

/* The counter of a generated id, or -1. */
static long long id_counter(const char *id)
{
	if (!id || id[0] != 'm' || strlen(id) != 7)
		return -1;
	long long v = 0;
	for (int i = 1; i < 7; i++) {
		const char *d = id[i] ? strchr(id_digits, id[i]) : NULL;
		if (!d)
			return -1;
		v = v * 36 + (d - id_digits);
	}
	return v;
}

int zc_node_new_id(struct zc_op *op, char out[16], struct zc_err *e)
{
	long long next, top = 0;
	int rc = zc_meta_get_int(&op->m->store, "next_node", &next, e);
	if (rc)
		return rc;
	sqlite3_stmt *st = zc_stmt(&op->m->store, "SELECT coalesce(max(seq), 0) FROM nodes", e);
	if (!st)
		return e->code;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW)
		top = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	if (rc != SQLITE_ROW)
		return zc_store_fail(&op->m->store, rc, e, "reading the newest memory");
	if (top > next)
		next = top;
	if (op->id_hi > next)
		next = op->id_hi;
	for (;;) {
		next++;
		unsigned long long v = (unsigned long long)next;
		char d[7];
		for (int i = 5; i >= 0; i--) {
			d[i] = id_digits[v % 36];
			v /= 36;
		}
		d[6] = '\0';
		snprintf(out, 16, "m%s", d);
		json_t *n = NULL;
		if ((rc = load_any(op, out, &n, e)))
			return rc;
		if (!n)
			break;
		json_decref(n);
	}
	if (!op->id_lo)
		op->id_lo = next;
	op->id_hi = next;
	return ZCOR_OK;
}

static int step_done(struct zc_op *op, sqlite3_stmt *st, struct zc_err *e, const char *what)
{
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? ZCOR_OK : zc_store_fail(&op->m->store, rc, e, what);
}

static long long important_seq_of(struct zc_op *op, const char *id, struct zc_err *e)
{
	sqlite3_stmt *st = zc_stmt(&op->m->store,
				   "SELECT important_seq FROM nodes WHERE id = ?1 AND important_seq "
				   "IS NOT NULL",
				   e);
	if (!st)
		return -2;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
	long long v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
	sqlite3_reset(st);
	return v;
}

static int set_important_seq(struct zc_op *op, const char *id, long long seq, struct zc_err *e)
{
	sqlite3_stmt *st = zc_stmt(&op->m->store, "UPDATE nodes SET important_seq = ?2 WHERE id = ?1", e);
	if (!st)
		return e->code;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
	if (seq >= 0)
		sqlite3_bind_int64(st, 2, seq);
	else
		sqlite3_bind_null(st, 2);
	return step_done(op, st, e, "changing an important mark");
}

int zc_node_move_important(struct zc_op *op, const char *from, const char *to, struct zc_err *e)
{
	long long seq_from = important_seq_of(op, from, e);
	if (seq_from == -2)
		return e->code;
	if (seq_from < 0)
		return ZCOR_OK;
	long long seq_to = important_seq_of(op, to, e);
	if (seq_to == -2)
		return e->code;
	/* `to` keeps the earlier place in the marking order */
	long long keep = seq_to >= 0 && seq_to < seq_from ? seq_to : seq_from;
	int rc = set_important_seq(op, from, -1, e);
	if (!rc)
		rc = set_important_seq(op, to, keep, e);
	return rc;
}

int zc_node_set_mark(struct zc_op *op, const char *id, int want, struct zc_err *e)
{
	long long cur = important_seq_of(op, id, e);
	if (cur == -2)
		return e->code;
	if (!want)
		return cur >= 0 ? set_important_seq(op, id, -1, e) : ZCOR_OK;
	if (cur >= 0)
		return ZCOR_OK;
	sqlite3_stmt *st = zc_stmt(&op->m->store,
				   "SELECT count(*) FROM nodes WHERE important_seq IS NOT NULL", e);
	if (!st)
		return e->code;
	long long n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_reset(st);
	if (n >= ZC_IMPORTANT_MAX) {
		zc_fail(e, ZCOR_ECONFLICT,
			"memory '%s' cannot be marked important again: %d memories are marked "
			"already (at most %d); unmark one first",
			id, (int)n, ZC_IMPORTANT_MAX);
		zc_json_err_detail(e, json_pack("{s:s, s:s, s:i}", "reason", "important_full", "id", id,
						"max", ZC_IMPORTANT_MAX));
		return ZCOR_ECONFLICT;
	}
	long long seq;
	int rc;
	if ((rc = zc_meta_get_int(&op->m->store, "important_seq", &seq, e)) ||
	    (rc = zc_meta_set_int(&op->m->store, "important_seq", seq + 1, e)))
		return rc;
	return set_important_seq(op, id, seq + 1, e);
}

/* ---- zcor_memory_write ---------------------------------------------- */

int zc_node_check_title(const char *title, struct zc_err *e)
{
	const unsigned char *p = (const unsigned char *)(title ? title : "");
	while (*p) {
		if (*p == ' ' || (*p >= '\t' && *p <= '\r'))
			p++;
		else if (p[0] == 0xE3 && p[1] == 0x80 && p[2] == 0x80) /* U+3000 */
			p += 3;
		else if (p[0] == 0xC2 && p[1] == 0xA0) /* U+00A0 */
			p += 2;
		else
			return ZCOR_OK;
	}
	int rc = zc_fail(e, ZCOR_EINVAL,
			 "argument 'title': is blank (spaces only); give the memory a title to find it by");
	zc_json_err_detail(e, json_pack("{s:s, s:s}", "field", "title", "reason", "blank"));
	return rc;
}

/* The parentId refusals carry {field, reason} for the page's words. */
static int parent_detail(struct zc_err *e, int rc, const char *reason)
{
	zc_json_err_detail(e, json_pack("{s:s, s:s}", "field", "parentId", "reason", reason));
	return rc;
}

/* id: the memory being moved (NULL for a new one); scope: its scope. */
int zc_node_check_parent(struct zc_op *op, const char *id, const char *scope, const char *parent,
			struct zc_err *e)
{
	json_t *p = NULL;
	int rc = zc_node_load(op, parent, &p, e);
	if (rc) {
		if (rc == ZCOR_ENOTFOUND)
			return parent_detail(
				e,
				zc_fail(e, ZCOR_ENOTFOUND,
					"argument 'parentId': no memory with id '%s'; omit parentId (or "
					"pass null) for a root memory",
					parent),
				"not_found");
		return rc;
	}
	const char *pscope = zc_json_str(p, "scope");
	if (!zc_scope_may_nest(scope, pscope)) {
		char b1[96], b2[96];
		rc = zc_fail(e, ZCOR_ECONFLICT,
			     "argument 'parentId': memory '%s' is %s, and a memory %s can only be "
			     "placed under a memory of the same scope%s (Q-SCOPE); omit parentId for a "
			     "root memory",
			     parent, zc_scope_words(op->ctx, pscope, b1, sizeof(b1)),
			     zc_scope_words(op->ctx, scope, b2, sizeof(b2)),
			     strncmp(scope, "private:", 8) == 0 ? " (a private conversation keeps "
								  "its memories apart)"
								: " or a shared one");
		json_decref(p);
		return parent_detail(e, rc, "scope");
	}
	json_decref(p);
	if (!id)
		return ZCOR_OK;
	/* walk up from the new parent: meeting id means a cycle */
	char *cur = zc_strdup(parent);
	int depth = 0;
	while (cur) {
		if (strcmp(cur, id) == 0) {
			zc_free(cur);
			return parent_detail(e,
					     zc_fail(e, ZCOR_ECONFLICT,
						     "argument 'parentId': '%s' is '%s' itself or one of "
						     "its descendants, which would make a cycle",
						     parent, id),
					     "cycle");
		}
		if (++depth > 100000)
			break;
		sqlite3_stmt *st = zc_stmt(&op->m->store, "SELECT parent_id FROM nodes WHERE id = ?1", e);
		if (!st) {
			zc_free(cur);
			return e->code;
		}
		sqlite3_bind_text(st, 1, cur, -1, SQLITE_TRANSIENT);
		char *next = NULL;
		if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
			next = zc_strdup((const char *)sqlite3_column_text(st, 0));
		sqlite3_reset(st);
		zc_free(cur);
		cur = next;
	}
	return ZCOR_OK;
}

static int memory_write(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	const char *id = zc_json_str(args, "id");
	json_t *parent = json_object_get(args, "parentId");
	json_t *node = NULL;
	int rc, created = id == NULL;
	if ((rc = zc_node_check_title(zc_json_str(args, "title"), e)))
		goto out;
	if (id) {
		if ((rc = zc_node_load_writable(op, id, &node, e)))
			goto out;
		zc_op_before(op, json_deep_copy(node));
	} else {
		char newid[16];
		if ((rc = zc_node_new_id(op, newid, e)))
			goto out;
		node = json_object();
		json_object_set_new(node, "id", json_string(newid));
		json_object_set_new(node, "parentId", json_null());
		json_object_set_new(node, "scope", json_string(zc_scope_of_new(op->ctx)));
		json_object_set_new(node, "kind", json_string("memory"));
		zc_json_set_time(node, "createdAt", op->now);
	}
	if (json_is_string(parent)) {
		if ((rc = zc_node_check_parent(op, created ? NULL : id, zc_json_str(node, "scope"),
				       json_string_value(parent), e)))
			goto out;
		json_object_set(node, "parentId", parent);
	} else if (json_is_null(parent)) {
		json_object_set_new(node, "parentId", json_null());
	}
	json_object_set(node, "title", json_object_get(args, "title"));
	json_object_set(node, "content", json_object_get(args, "content"));
	json_t *kw = json_object_get(args, "keywords");
	if (kw)
		json_object_set(node, "keywords", kw);
	else if (created)
		json_object_set_new(node, "keywords", json_array());
	json_t *src = json_object_get(args, "sourceMessage");
	if (src)
		json_object_set(node, "sourceMessage", src);
	zc_json_set_time(node, "updatedAt", op->now);
	if ((rc = zc_node_save(op, node, e)))
		goto out;
	char *nid = zc_strdup(zc_json_str(node, "id"));
	json_decref(node);
	rc = zc_node_load(op, nid, &node, e);
	zc_free(nid);
out:
	if (rc) {
		json_decref(node);
		return rc;
	}
	zc_op_after(op, json_deep_copy(node));
	*out = json_pack("{s:b, s:o}", "created", created, "node", node);
	return ZCOR_OK;
}

/* ---- read, children, trace ------------------------------------------ */

static int memory_read(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	json_t *node = NULL;
	int rc = zc_node_load(op, zc_json_str(args, "id"), &node, e);
	if (rc)
		return rc;
	*out = json_pack("{s:o}", "node", node);
	return ZCOR_OK;
}

/* Runs st (already bound) and collects visible nodes into an array. */
int zc_node_collect(struct zc_op *op, sqlite3_stmt *st, json_t *arr, struct zc_err *e)
{
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		json_array_append_new(arr, zc_node_from_row(st));
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? ZCOR_OK : zc_store_fail(&op->m->store, rc, e, "reading memories");
}

void zc_bind_scope(struct zc_op *op, sqlite3_stmt *st)
{
	if (op->ctx->conversation)
		sqlite3_bind_text(st, 9, op->ctx->conversation, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, 9);
}

/* Whether the row has a child op->ctx may see, in the listing's own
 * statement (nodes_parent, one probe a row; no query per item): the page
 * shows no expander on a leaf (issue 18). The unqualified scope in
 * ZC_SCOPE_VISIBLE_SQL is the child's (the innermost table). */
#define HAS_VISIBLE_CHILD                                                                  \
	", EXISTS (SELECT 1 FROM nodes c WHERE c.parent_id = nodes.id AND "                \
	ZC_SCOPE_VISIBLE_SQL ")"
#define HAS_CHILD_COL 25 /* after the ZC_NODE_COLS */

/* Roots are the rows without a parent: nodes_parent holds only the rows
 * that have one (schema 10), so the two cases are two statements. Each
 * item tells hasChildren. */
static int children_of(struct zc_op *op, const char *parent, json_t *arr, struct zc_err *e)
{
	sqlite3_stmt *st =
		parent ? zc_stmt(&op->m->store,
				 "SELECT " ZC_NODE_COLS HAS_VISIBLE_CHILD
				 " FROM nodes WHERE parent_id = ?1 AND " ZC_SCOPE_VISIBLE_SQL
				 " ORDER BY seq",
				 e)
		       : zc_stmt(&op->m->store,
				 "SELECT " ZC_NODE_COLS HAS_VISIBLE_CHILD
				 " FROM nodes WHERE parent_id IS NULL AND " ZC_SCOPE_VISIBLE_SQL
				 " ORDER BY seq",
				 e);
	if (!st)
		return e->code;
	if (parent)
		sqlite3_bind_text(st, 1, parent, -1, SQLITE_TRANSIENT);
	zc_bind_scope(op, st);
	assert(sqlite3_column_count(st) == HAS_CHILD_COL + 1);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *n = zc_node_from_row(st);
		json_object_set_new(n, "hasChildren",
				    json_boolean(sqlite3_column_int(st, HAS_CHILD_COL)));
		json_array_append_new(arr, n);
	}
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? ZCOR_OK : zc_store_fail(&op->m->store, rc, e, "reading memories");
}

static int memory_children(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	const char *parent = zc_json_str(args, "parentId");
	int rc;
	if (parent) {
		json_t *p = NULL;
		if ((rc = zc_node_load(op, parent, &p, e)))
			return rc;
		json_decref(p);
	}
	json_t *items = json_array();
	if ((rc = children_of(op, parent, items, e))) {
		json_decref(items);
		return rc;
	}
	*out = json_pack("{s:s?, s:o}", "parentId", parent, "items", items);
	return ZCOR_OK;
}

static int memory_trace(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	const char *id = zc_json_str(args, "id");
	json_t *node = NULL, *path = json_array(), *children = json_array();
	int rc = zc_node_load(op, id, &node, e);
	if (rc)
		goto fail;
	json_array_append(path, node);
	const char *parent = zc_json_str(node, "parentId");
	char *cur = parent ? zc_strdup(parent) : NULL;
	while (cur && json_array_size(path) < 10000) {
		json_t *p = NULL;
		rc = load_any(op, cur, &p, e);
		zc_free(cur);
		cur = NULL;
		if (rc)
			goto fail;
		if (!p)
			break;
		/* an ancestor this conversation may not see ends the path */
		if (!zc_scope_visible(op->ctx, zc_json_str(p, "scope"))) {
			json_decref(p);
			break;
		}
		json_array_insert_new(path, 0, p);
		parent = zc_json_str(p, "parentId");
		cur = parent ? zc_strdup(parent) : NULL;
	}
	zc_free(cur);
	if ((rc = children_of(op, id, children, e)))
		goto fail;
	json_decref(node);
	*out = json_pack("{s:o, s:o}", "path", path, "children", children);
	return ZCOR_OK;
fail:
	json_decref(node);
	json_decref(path);
	json_decref(children);
	return rc;
}

/* ---- delete --------------------------------------------------------- */

/* How many rows still refer to memory id through sql (which selects
 * the referring id, count(*) OVER () and the referrer's title or name,
 * ordered, LIMIT a few to show), those first ones in *first (a new array)
 * and their titles by id in *titles (a new object). */
static int refs_of(struct zc_op *op, const char *sql, const char *id, long long *count,
		   json_t **first, json_t **titles, struct zc_err *e)
{
	*count = 0;
	*first = json_array();
	*titles = json_object();
	sqlite3_stmt *st = zc_stmt(&op->m->store, sql, e);
	if (!st)
		return e->code;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
	int step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		*count = sqlite3_column_int64(st, 1);
		const char *ref = (const char *)sqlite3_column_text(st, 0);
		json_array_append_new(*first, json_string(ref));
		json_object_set_new(*titles, ref,
				    json_string((const char *)sqlite3_column_text(st, 2)));
	}
	sqlite3_reset(st);
	return step == SQLITE_DONE ? ZCOR_OK : zc_store_fail(&op->m->store, step, e, "checking a delete");
}

/* What keeps a memory from being deleted: the rows that still refer to
 * it. Their messages are for the model (what to do next); the detail
 * (docs/API.md, "Errors") names the rule and the referrers for programs,
 * such as the web page showing why in its own language. */
enum delete_rule { HAS_CHILDREN, LINKED_FROM_PERSON, SUPERSEDE_TARGET };
static const struct {
	const char *sql, *reason, *key;
} delete_rules[] = {
	[HAS_CHILDREN] = {"SELECT id, count(*) OVER (), title FROM nodes WHERE parent_id = ?1 "
			  "ORDER BY id LIMIT 5",
			  "has_children", "ids"},
	[LINKED_FROM_PERSON] = {"SELECT person_id, count(*) OVER (), name FROM people "
				"WHERE memory_node_id = ?1 ORDER BY person_id LIMIT 5",
				"linked_from_person", "personIds"},
	[SUPERSEDE_TARGET] = {"SELECT id, count(*) OVER (), title FROM nodes WHERE superseded_by = ?1 "
			      "ORDER BY id LIMIT 5",
			      "supersede_target", "ids"},
};

/* Fails e with rule's message and detail; takes refs and titles. */
static int refuse_delete(struct zc_err *e, enum delete_rule rule, const char *id, long long n,
			 json_t *refs, json_t *titles)
{
	const char *first = json_string_value(json_array_get(refs, 0));
	switch (rule) {
	case HAS_CHILDREN:
		zc_fail(e, ZCOR_ECONFLICT,
			"memory '%s' has %lld child memories (e.g. '%s'); delete them or move them "
			"elsewhere with zcor_memory_write parentId first",
			id, n, first);
		break;
	case LINKED_FROM_PERSON:
		zc_fail(e, ZCOR_ECONFLICT,
			"memory '%s' is linked from the relationship of person '%s'; change that "
			"link with zcor_relationship_write or delete the relationship first",
			id, first);
		break;
	case SUPERSEDE_TARGET:
		zc_fail(e, ZCOR_ECONFLICT,
			"memory '%s' replaces %lld superseded memories (e.g. '%s'); a supersede "
			"target cannot be deleted",
			id, n, first);
		break;
	}
	zc_json_err_detail(e, json_pack("{s:s, s:I, s:o, s:o}", "reason", delete_rules[rule].reason,
					"count", (json_int_t)n, delete_rules[rule].key, refs,
					"titles", titles));
	return ZCOR_ECONFLICT;
}

/* Q-SCOPE: memories linked to id (children, superseded records) that
 * op->ctx may not see. The store's links stay within a scope
 * (zc_scope_may_link), but older data (a restored backup) may hold such a
 * link: the refusal must then not name the hidden record. -1 on error. */
static long long hidden_links(struct zc_op *op, const char *id, struct zc_err *e)
{
	if (!op->ctx->conversation)
		return 0;
	sqlite3_stmt *st = zc_stmt(&op->m->store,
				   "SELECT count(*) FROM nodes WHERE (parent_id = ?1 OR superseded_by = ?1) "
				   "AND NOT " ZC_SCOPE_VISIBLE_SQL,
				   e);
	if (!st)
		return -1;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
	zc_bind_scope(op, st);
	long long n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
	sqlite3_reset(st);
	if (n < 0)
		zc_store_fail(&op->m->store, sqlite3_errcode(op->m->store.db), e, "deleting a memory");
	return n;
}

int zc_node_delete(struct zc_op *op, const json_t *node, struct zc_err *e)
{
	const char *id = zc_json_str(node, "id");
	long long n = 0;
	json_t *refs = NULL, *titles = NULL;
	int rc = ZCOR_OK;
	zc_err_clear(e);
	/* first: nothing this conversation cannot see may be named below */
	if ((n = hidden_links(op, id, e)) != 0) {
		if (n > 0)
			zc_fail(e, ZCOR_ECONFLICT,
				"memory '%s' cannot be deleted here: memories this conversation cannot "
				"see are attached to it; the operator (without a conversation) can see "
				"and move them",
				id);
		return e->code;
	}
	for (size_t i = 0; i < sizeof(delete_rules) / sizeof(delete_rules[0]); i++) {
		json_decref(refs);
		json_decref(titles);
		if ((rc = refs_of(op, delete_rules[i].sql, id, &n, &refs, &titles, e)))
			goto out;
		if (n) {
			rc = refuse_delete(e, (enum delete_rule)i, id, n, refs, titles);
			refs = titles = NULL;
			goto out;
		}
	}
	sqlite3_stmt *st = zc_stmt(&op->m->store, "DELETE FROM nodes WHERE id = ?1", e);
	if (!st) {
		rc = e->code;
		goto out;
	}
	sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
	if ((rc = step_done(op, st, e, "deleting a memory")))
		goto out;
	zc_op_before(op, json_deep_copy(node));
out:
	json_decref(refs);
	json_decref(titles);
	return rc;
}

static int memory_delete(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	const char *id = zc_json_str(args, "id");
	json_t *node = NULL;
	int rc = zc_node_load_writable(op, id, &node, e);
	if (rc)
		return rc;
	if ((rc = zc_node_delete(op, node, e)) == ZCOR_OK)
		*out = json_pack("{s:s, s:b, s:b}", "id", id, "deleted", 1, "wasImportant",
				 json_is_true(json_object_get(node, "important")));
	json_decref(node);
	return rc;
}

/* ---- important ------------------------------------------------------ */

static int important_list(struct zc_op *op, json_t **arr, struct zc_err *e)
{
	*arr = json_array();
	sqlite3_stmt *st = zc_stmt(&op->m->store,
				   "SELECT " ZC_NODE_COLS " FROM nodes WHERE important_seq IS NOT NULL "
				   "ORDER BY important_seq",
				   e);
	if (!st)
		return e->code;
	return zc_node_collect(op, st, *arr, e);
}

static int memory_important(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	const char *id = zc_json_str(args, "id");
	int want = json_is_true(json_object_get(args, "important"));
	json_t *node = NULL, *marked = NULL;
	int rc = zc_node_load_writable(op, id, &node, e);
	if (rc)
		return rc;
	int was = json_is_true(json_object_get(node, "important"));
	if (want && !was) {
		if (json_is_string(json_object_get(node, "supersededBy"))) {
			rc = zc_fail(e, ZCOR_ECONFLICT,
				     "memory '%s' is superseded by '%s'; mark that one instead", id,
				     zc_json_str(node, "supersededBy"));
			goto out;
		}
		if ((rc = important_list(op, &marked, e)))
			goto out;
		if (json_array_size(marked) >= ZC_IMPORTANT_MAX) {
			json_t *old = json_array_get(marked, 0);
			const char *old_id = zc_json_str(old, "id");
			if ((rc = set_important_seq(op, old_id, -1, e)))
				goto out;
			op->receipt = json_pack(
				"{s:s, s:s, s:s}", "replacedId", old_id, "replacedTitle",
				zc_json_str(old, "title"), "reminder",
				"重要记忆最多 5 条：最早标记的这一条已取消重要标记，记忆本身保留。如仍需要，"
				"请取消另一条后重新标记。 / At most 5 important memories: the earliest "
				"mark was removed; the memory itself is kept.");
			zc_op_before(op, json_deep_copy(old));
			json_object_set_new(old, "important", json_false());
			zc_op_after(op, json_deep_copy(old));
		}
		long long seq;
		if ((rc = zc_meta_get_int(&op->m->store, "important_seq", &seq, e)) ||
		    (rc = zc_meta_set_int(&op->m->store, "important_seq", seq + 1, e)) ||
		    (rc = set_important_seq(op, id, seq + 1, e)))
			goto out;
	} else if (!want && was) {
		if ((rc = set_important_seq(op, id, -1, e)))
			goto out;
	}
	if (want != was) {
		zc_op_before(op, json_deep_copy(node));
		json_object_set_new(node, "important", json_boolean(want));
		zc_op_after(op, json_deep_copy(node));
	}
	json_decref(marked);
	if ((rc = important_list(op, &marked, e)))
		goto out;
	json_t *order = json_array();
	size_t i;
	json_t *v;
	json_array_foreach(marked, i, v) {
		if (zc_scope_visible(op->ctx, zc_json_str(v, "scope")))
			json_array_append_new(order, json_pack("{s:O, s:O}", "id", json_object_get(v, "id"),
							       "title", json_object_get(v, "title")));
	}
	*out = json_pack("{s:s, s:b, s:b, s:o}", "id", id, "important", want, "changed", want != was,
			 "importantOrder", order);
out:
	json_decref(node);
	json_decref(marked);
	return rc;
}

const struct zc_opdef zc_op_memory_write = {"zcor_memory_write", NULL, memory_write, 0};
const struct zc_opdef zc_op_memory_read = {"zcor_memory_read", NULL, memory_read, 1};
const struct zc_opdef zc_op_memory_delete = {"zcor_memory_delete", NULL, memory_delete, 0};
const struct zc_opdef zc_op_memory_children = {"zcor_memory_children", NULL, memory_children, 1};
const struct zc_opdef zc_op_memory_trace = {"zcor_memory_trace", NULL, memory_trace, 1};
const struct zc_opdef zc_op_memory_important = {"zcor_memory_important", NULL, memory_important, 0};

/* ---- reads for hosts (not operations: no history) -------------------- */

int zc_node_read(struct zc_mem *m, const struct zcor_ctx *ctx, const char *id, json_t **node,
		 struct zc_err *e)
{
	struct zc_op op = {.m = m, .ctx = ctx, .name = "read", .now = zc_mem_now(m)};
	int rc = zc_store_begin(&m->store, 0, e);
	if (rc)
		return rc;
	rc = zc_node_load(&op, id, node, e);
	zc_store_rollback(&m->store);
	return rc;
}

int zc_node_page(struct zc_mem *m, const struct zcor_ctx *ctx, long long before, int limit,
		 json_t **out, struct zc_err *e)
{
	struct zc_op op = {.m = m, .ctx = ctx, .name = "list", .now = zc_mem_now(m)};
	sqlite3_stmt *st = zc_stmt(&m->store,
				   "SELECT id, title, updated_at, seq FROM nodes WHERE seq < ?1 AND "
				   ZC_SCOPE_VISIBLE_SQL " ORDER BY seq DESC LIMIT ?2",
				   e);
	if (!st)
		return e->code;
	sqlite3_bind_int64(st, 1, before > 0 ? before : INT64_MAX);
	sqlite3_bind_int(st, 2, limit + 1);
	zc_bind_scope(&op, st);
	json_t *items = json_array();
	long long last = 0;
	int step, n = 0, more = 0;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		if (n == limit) {
			more = 1;
			break;
		}
		json_t *it = json_object();
		zc_json_set_str(it, "id", (const char *)sqlite3_column_text(st, 0));
		zc_json_set_str(it, "title", (const char *)sqlite3_column_text(st, 1));
		zc_json_set_time(it, "updatedAt", sqlite3_column_int64(st, 2));
		json_array_append_new(items, it);
		last = sqlite3_column_int64(st, 3);
		n++;
	}
	sqlite3_reset(st);
	if (step != SQLITE_DONE && step != SQLITE_ROW) {
		json_decref(items);
		return zc_store_fail(&m->store, step, e, "listing memories");
	}
	*out = json_pack("{s:o, s:o}", "items", items, "next", more ? json_integer(last) : json_null());
	return ZCOR_OK;
}
