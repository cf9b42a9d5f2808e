/*
 * memory.h — the rules of the seeds, over one store.
 *
 * Memory layer. One operation = one zc_opdef = one transaction: the body
 * runs inside BEGIN IMMEDIATE together with its history record, so a
 * change and its trace are both durable or both absent. Slow work that
 * must not hold the write lock (an LLM call) goes in the optional `pre`
 * step, which runs before the transaction. Adapters (tools, REST, CLI)
 * only map their input onto these operations; no rule lives in them.
 */
#ifndef ZC_MEMORY_H
#define ZC_MEMORY_H

#include <jansson.h>
#include <stdint.h>

#include "base/err.h"
#include "memory/config.h"
#include "store/store.h"
#include "text/synonyms.h"
#include "text/tokens.h"
#include "zcor.h"

/*
 * The memory layer's own state. Recall's (recall/recall.h, struct
 * zc_recall) and the provider (llm/llm.h, struct zc_llm) are not here:
 * each layer opens and closes its own, over this handle. An operation
 * that needs the provider (zcor_memory_search) is handed it as op->ud.
 */
struct zc_mem {
	struct zc_store store;
	struct zc_syn syn;
	struct zc_confile conf;
	char *dir;
	int64_t (*now_ms)(void *ud);
	void *clock_ud;
	int first_op_done; /* the ZC_HOOK_FIRST_OP hooks succeeded (op.c) */
	struct zc_hits *hits;   /* hit counts recall reported, not written yet (hits.c) */
	struct zc_reads *reads; /* read records not written yet (op.c) */
	struct zc_hooks *hooks; /* the runner's subscribers (op.c, zc_mem_hook) */
	struct zc_op *cur_op;   /* the operation running now (op.c), or NULL */
	long fts_batch;         /* new nodes per full-text batch; 0: ZC_FTS_BATCH (zc_mem_set_fts_batch) */
};

/* One running operation. */
struct zc_op {
	struct zc_mem *m;
	const struct zcor_ctx *ctx;
	const char *name;
	int64_t now;
	json_t *before;  /* array of snapshots taken before the change, or NULL */
	json_t *after;   /* array of snapshots after the change, or NULL */
	json_t *receipt; /* what the caller must be told (important-mark replacement) */
	int side_effect; /* something outside memory.db changed (a file) */
	/* The body only read (a read action of an operation that may also
	 * change, qq_memory's read / list / search): for the operator's page
	 * it is browsing, as a ZC_OP_READ operation, and leaves no record
	 * (op.c, unrecorded). */
	int only_read;
	json_t *state;   /* handed from pre to body */
	/* Files the body made beside memory.db, so that a file and its row
	 * change together: undo_unlink is removed when the transaction does
	 * not commit, commit_unlink once it has (sticker save and rename). */
	json_t *undo_unlink;
	json_t *commit_unlink;
	void *ud; /* what the caller of zc_mem_run_ud hands the body */
	/* A body may answer with the result's JSON text instead of a tree
	 * (zc_malloc'ed; its *out stays NULL, no receipt): zcor_memory_query's
	 * hits written straight from their rows (issue 19). The runner hands
	 * it on to zc_mem_run_text's caller, or parses it for a tree. */
	char *text;
	const struct zc_opdef *def;
	/* What the operation changed, for the commit hooks (zc_mem_hook):
	 * views (paths; filled by a precommit hook), messages logged to
	 * log_conv at log_from…log_to (ms), a conversation's digest
	 * progress, or everything (an import). An operation that joined its
	 * caller's transaction hands these on to the caller's. */
	json_t *views_changed;
	char *log_conv;
	int64_t log_from, log_to;
	json_t *log_more; /* other conversations' logs: [[conv, from, to]…] (joined batches), or NULL */
	int digest_changed;
	int all_changed;
	/* The counters zc_node_new_id gave in this operation (0: none): a
	 * node saved with one of their ids takes its counter as its seq
	 * (schema 22), so a delete's floor (meta.next_node) covers it. */
	long long id_lo, id_hi;
};

typedef int (*zc_op_fn)(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e);

/* What an operation reads and how it is run (zc_opdef.flags). */
#define ZC_OP_READ 1    /* changes nothing but the history (see zc_mem_run) */
#define ZC_OP_HISTORY 2 /* reads the history: queued read records go in first */
#define ZC_OP_FTS 4     /* reads nodes_fts: new nodes' rows are written first */
/* A write that is not a call (a logged batch, derived data, the
 * migration): no history record, none for its failure either, and the
 * queued read records stay queued; it does not wait for the migration. */
#define ZC_OP_NO_HISTORY 8
/* Inside an open transaction (the caller's operation), the body runs in
 * it: it commits or rolls back with it, and what it changed goes to the
 * caller's commit hooks. Outside one it runs on its own. */
#define ZC_OP_JOIN 16
/* Commits without an fsync (synchronous=NORMAL for it alone): derived
 * statistics, whose loss in a crash loses no memory; a turn's lease
 * (zc_op_turn_begin, which moves no cursor). */
#define ZC_OP_NOSYNC 32

struct zc_opdef {
	const char *name;
	zc_op_fn pre;  /* optional, outside the write transaction */
	zc_op_fn body; /* inside it */
	int flags; /* ZC_OP_* flags; no ZC_OP_READ: a change */
};

/*
 * The runner's subscribers (op.c), as sqlite3_commit_hook: the runner is
 * the floor of memory/ and calls nothing above it; what must happen
 * around a commit registers here (handle.c wires them at open).
 *  ZC_HOOK_FIRST_OP  before the handle's first recorded operation (the
 *                    migration); a failure fails that operation, and the
 *                    hooks run again before the next one
 *  ZC_HOOK_PRECOMMIT inside a change's transaction, after its body (the
 *                    views' citations, which fill op->views_changed); a
 *                    failure rolls the operation back
 *  ZC_HOOK_COMMITTED once per durable commit of an operation of its own
 *                    (never for a rolled-back one, never for one that
 *                    joined a caller's transaction); best effort: the
 *                    result is ignored (mirror/)
 */
enum zc_hook_when { ZC_HOOK_FIRST_OP, ZC_HOOK_PRECOMMIT, ZC_HOOK_COMMITTED };
typedef int (*zc_hook_fn)(struct zc_op *op, void *ud, struct zc_err *e);
#define ZC_HOOKS_MAX 8 /* per phase */
/* Adds fn(op, ud, e) to the phase's list (called in the order added).
 * ZCOR_EINTERNAL when the list is full (our own bug). */
int zc_mem_hook(struct zc_mem *m, enum zc_hook_when when, zc_hook_fn fn, void *ud,
		struct zc_err *e);
/* The runner's part of zc_mem_open / zc_mem_close (op.c): the queue of
 * read records and the hook lists; release writes what is queued. */
void zc_runner_init(struct zc_mem *m);
void zc_runner_release(struct zc_mem *m);

/* Opens dir (created if needed) after zc_mem_check_db. */
int zc_mem_open(struct zc_mem *m, const char *dir, struct zc_err *e);
/*
 * Whether dir's memory.db may be opened without losing anything. Refused
 * (ZCOR_EIO, the message says what to do, nothing is touched): a 0-byte
 * memory.db in a directory that holds data (zcor itself never leaves one
 * there: SQLite writes the header as the store opens, before any other
 * file is made, so only a directory zcor never finished opening has one)
 * and a memory.db that is not a SQLite database or is shorter than its
 * header says. *code (optional) is the doctor's code: "MEMORY_DB_EMPTY"
 * or "MEMORY_DB_DAMAGED"; NULL when it may be opened. Absent is fine: a
 * new store.
 */
int zc_mem_check_db(const char *dir, const char **code, struct zc_err *e);
void zc_mem_close(struct zc_mem *m);
int64_t zc_mem_now(struct zc_mem *m);

/*
 * Runs def with args (borrowed) for ctx and records it in history. On
 * success *out is the result (new reference). On failure nothing changed,
 * except with ZCOR_EUNCERTAIN, whose message says the change may have
 * taken effect.
 */
int zc_mem_run(struct zc_mem *m, const struct zcor_ctx *ctx, const struct zc_opdef *def,
	       json_t *args, json_t **out, struct zc_err *e);
/* zc_mem_run with a pointer for the body (op->ud), never recorded. */
int zc_mem_run_ud(struct zc_mem *m, const struct zcor_ctx *ctx, const struct zc_opdef *def,
		  json_t *args, void *ud, json_t **out, struct zc_err *e);
/* zc_mem_run_ud that can hand the result on as JSON text: when text is
 * not NULL, either *text (a body's own text, op->text; caller frees) or
 * *out is set on success. */
int zc_mem_run_text(struct zc_mem *m, const struct zcor_ctx *ctx, const struct zc_opdef *def,
		    json_t *args, void *ud, json_t **out, char **text, struct zc_err *e);
/* 1 when ctx's call of an operation with these ZC_OP_* flags leaves no
 * history record: the operator's reads in the page (actor ui; issue 18),
 * which are browsing, not calls. Its changes and everyone else's calls
 * are recorded. */
int zc_mem_unrecorded(const struct zcor_ctx *ctx, int flags);
/* Records a call that failed before any operation ran (bad arguments).
 * args may be NULL (then raw is recorded as text). */
void zc_mem_record_failure(struct zc_mem *m, const struct zcor_ctx *ctx, const char *name,
			   json_t *args, const char *raw, const struct zc_err *failure);

/*
 * Hit counts (derived statistics, not history; hits.c): recall hands over
 * the node seqs it injected; the handle appends them to hit_batch
 * ZC_HIT_BATCH at a time, as one row, and folds them into nodes.hits /
 * last_hit_at every ZC_HIT_LOG_FOLD hits and when it closes.
 * zc_mem_flush_hits writes and folds now (not inside a transaction).
 */
#define ZC_HIT_BATCH 512
#define ZC_HIT_LOG_FOLD 8192
void zc_mem_count_hits(struct zc_mem *m, const json_t *seqs);
void zc_mem_flush_hits(struct zc_mem *m);
/* The newest hit of every node whose hits are not folded into the nodes
 * yet, written or held by this handle ({"<seq>": ms}); writes nothing. */
int zc_mem_unfolded_hits(struct zc_mem *m, json_t **out, struct zc_err *e);
/* zc_mem_close's part: flushes and frees. */
void zc_mem_hits_release(struct zc_mem *m);

/* Registers a file the body created (removed if the op fails) or one to
 * remove once the op has committed. */
void zc_op_file_created(struct zc_op *op, const char *path);
void zc_op_file_obsolete(struct zc_op *op, const char *path);

/*
 * History records (op.c writes them, history.c reads them). Their
 * snapshots are stored compactly (histform.c; docs/FORMATS.md): zc_hist_pack
 * turns a record's before/after arrays (borrowed; either may be NULL) into
 * the stored text (NULL for NULL), given the call's arguments and the
 * record's time; every reader gets the full snapshots back.
 */
void zc_hist_pack(const json_t *before, const json_t *after, const json_t *args, int64_t at,
		  char **before_text, char **after_text);
/* The full snapshots of a stored before/after array (takes ownership of
 * stored; returns it as it is when it is not an array). at: the record's
 * time (ISO); base: the record's expanded after-images, for a before
 * array's deltas, or NULL when expanding the after-images themselves. */
json_t *zc_hist_expand(json_t *stored, const json_t *args, const char *at, const json_t *base);
/* Registers the SQL function the history query matches keywords with. */
int zc_history_register(struct zc_store *s, struct zc_err *e);

/*
 * Read records (Z-HIST: every call is recorded, reads included) are
 * committed in groups: a read queues its record on the handle, and the
 * queue is written in one transaction, without an fsync, when it holds
 * ZC_READS_MAX records, when its oldest is ZC_READS_WINDOW_MS old (the
 * next call, or zcor.c's flusher for an idle handle), before any change
 * (inside that change's transaction, so seq keeps the order of the
 * calls), before a history query, and at close. A crash loses at most the
 * queue: the last few milliseconds of read records, never a change
 * (docs/FORMATS.md, durability).
 */
#define ZC_READS_MAX 64
#define ZC_READS_WINDOW_MS 4
/* Writes the queued read records now, in one transaction without an
 * fsync; a no-op when there are none or a transaction is open. On
 * failure they stay queued (another process holding the lock) or are
 * dropped (memory.db cannot take them). */
int zc_mem_flush(struct zc_mem *m, struct zc_err *e);
/* The same without waiting for another connection's write lock
 * (ZCOR_EBUSY at once): for a flush that can as well come later, so that
 * reads are never held up by it. */
int zc_mem_flush_try(struct zc_mem *m, struct zc_err *e);
/* Milliseconds until the queue is due (0: now), or -1 when it is empty. */
long zc_mem_flush_due(struct zc_mem *m);
/* fn(ud) is called when a record is queued into an empty queue. */
void zc_mem_on_deferred(struct zc_mem *m, void (*fn)(void *ud), void *ud);

/* New nodes' full-text rows and terms, in batches of ZC_FTS_BATCH (op.c): inside
 * a write transaction, write the missing ones now; whether any are
 * missing (outside a transaction, a cheap lookup). 128, not 32: a batch's
 * titles land at random pages of terms, and four times the batch writes
 * far fewer than four times the pages (docs/PERFORMANCE.md, third pass);
 * the first reader after it writes up to 127 records' rows at once. */
#define ZC_FTS_BATCH 128
/* Their dictionary terms wait for batches of their own, eight times as
 * large (schema 22): a batch's titles land at random pages of terms, one
 * page each until the batch nears the table's page count, while writing
 * them is cheap next to the full-text rows' tokenising (1.60 -> 0.84
 * pages of terms per write at 100,000 memories; docs/PERFORMANCE.md, the
 * fifth pass); the first reader after them writes up to 1,023 records'
 * terms at once. */
#define ZC_TERMS_BATCH 1024
int zc_node_fts_catch_up(struct zc_store *s, struct zc_err *e);
/* What a writer of the node seq (a new one: the newest) owes: the
 * full-text rows once ZC_FTS_BATCH nodes wait for them, the terms once
 * ZC_TERMS_BATCH do (a bulk import's batch for both when it sets a larger
 * one: zc_mem_set_fts_batch). */
int zc_node_catch_up_due(struct zc_store *s, long long seq, long bulk, struct zc_err *e);
int zc_node_fts_pending(struct zc_store *s);
/* A bulk import (zcor-bench's stores) writes its new nodes' full-text
 * rows in batches of n instead (0: back to ZC_FTS_BATCH): the same rows,
 * by the same catch-up, fewer and larger batches. A reader still catches
 * up first, so nothing is ever missing from what it reads. */
void zc_mem_set_fts_batch(struct zc_mem *m, long n);
/* Writes the missing full-text rows, with the queued read records, in a
 * transaction of their own (no fsync: derived data) when there are any:
 * before reading nodes_fts, and at close. Not on a timer, so that where
 * the batches fall does not depend on timing. A failure (a read-only
 * directory) leaves them for the next writer. */
int zc_mem_fts_catch_up(struct zc_mem *m, struct zc_err *e);

/* Snapshot helpers for bodies. */
void zc_op_before(struct zc_op *op, json_t *snap); /* steals snap */
void zc_op_after(struct zc_op *op, json_t *snap);  /* steals snap */

/* ---- scope (Q-SCOPE), written once ---------------------------------- */

/* Can ctx see a record of this scope? (host: all; else global + own) */
int zc_scope_visible(const struct zcor_ctx *ctx, const char *scope);
/* Can ctx change a record of this scope? A private conversation never
 * changes global records: what it learned stays in its own scope. */
int zc_scope_writable(const struct zcor_ctx *ctx, const char *scope);
/* The scope of a record ctx creates. */
const char *zc_scope_of_new(const struct zcor_ctx *ctx);
/* May a memory of `scope` be superseded by, or merged with, a record of
 * `target`? Only within one scope, for every caller, host plane included
 * (docs/VIEWS.md, Q-SCOPE). */
int zc_scope_may_link(const char *scope, const char *target);
/* Whether a memory of scope child may have a parent of scope parent: the
 * same scope, or a global parent for a non-private child (op.c). */
int zc_scope_may_nest(const char *child, const char *parent);
/* How a message names a scope to ctx: "shared with every conversation",
 * "of this conversation" or "of conversation '<key>'" (only the host
 * plane sees other conversations' records): a static string or buf. */
const char *zc_scope_words(const struct zcor_ctx *ctx, const char *scope, char *buf, size_t cap);
/* Is key a conversation key: group:<id>, private:<qq>, console:<name>
 * (letters, digits, _ - . up to 64)? */
int zc_conv_valid(const char *key);
/* The same as an error: ZCOR_OK, or ZCOR_EINVAL saying what a key is. */
int zc_conv_check(const char *key, struct zc_err *e);
/* The slug of a conversation key, the key with '-' for ':' ("group:1" ->
 * "group-1"): its folder in the seed-003 layout. */
void zc_conv_slug(const char *key, char *out, size_t cap);
int zc_scope_is_private(const struct zcor_ctx *ctx);
/* The visible-scope filter for SQL over nodes; bind ?9 to the
 * conversation (NULL for the host plane). */
#define ZC_SCOPE_VISIBLE_SQL "(?9 IS NULL OR scope = 'global' OR scope = ?9)"

/* ---- the injection gate: may recall inject this record? (written once) -- */

/*
 * A record recall may put before a conversation's messages is current
 * (not superseded), hot (not archived: a NULL tier is a new record's
 * default, hot), not 存疑 and not a document; and, for conversation conv,
 * of scope global or conv's own (Q-SCOPE: a private conversation never
 * sees another's). zc_may_inject tests the record in C (node.c: which
 * records get dictionary terms); ZC_MAY_INJECT_SQL is the same test over
 * nodes, with P before superseded_by, tier and kind ("+n." keeps SQLite off
 * their indexes, "n." reads them from one, "" for a bare table) and Q
 * before confidence. ZC_INJECT_SCOPE_SQL(P) is the scope half, ?9 bound
 * to the conversation. store.c's recall_tag column (a released migration,
 * never edited) is the same test as FTS tokens; test_gate checks that all
 * three agree.
 */
int zc_may_inject(const char *superseded_by, const char *tier, const char *confidence,
		  const char *kind);
int zc_scope_may_inject(const char *conv, const char *scope);
#define ZC_MAY_INJECT_SQL(P, Q)                                                            \
	P "superseded_by IS NULL AND " P "tier = 'hot' AND coalesce(" Q "confidence, '') <> '存疑' " \
	  "AND " P "kind <> 'document'"
#define ZC_INJECT_SCOPE_SQL(P) "(" P "scope = 'global' OR " P "scope = ?9)"

/* ---- nodes ----------------------------------------------------------- */

#define ZC_NODE_COLS                                                                       \
	"id, title, content, keywords, parent_id, source_message, important_seq, "        \
	"superseded_by, superseded_reason, merged_from, merged_reason, scope, kind, "     \
	"section, pinned, date, expires, confidence, tier, archive_month, attrs, "        \
	"created_at, updated_at, hits, last_hit_at"

/* The JSON form of a row selected with ZC_NODE_COLS first. */
json_t *zc_node_from_row(sqlite3_stmt *st);
/* Appends the text zc_json_dump(zc_node_from_row(st)) would return, byte
 * for byte, without the tree (a search's 64 hits, issue 19). */
struct zc_buf;
void zc_node_text_from_row(struct zc_buf *b, sqlite3_stmt *st);
/* Loads a node visible to op->ctx; ZCOR_ENOTFOUND otherwise. */
int zc_node_load(struct zc_op *op, const char *id, json_t **node, struct zc_err *e);
/* Inserts or updates every stored column of node (not important/hits). */
int zc_node_save(struct zc_op *op, const json_t *node, struct zc_err *e);
/* Host reads without history: one node, or a page of {id, title,
 * updatedAt} newest first (before: a seq from a previous page's "next",
 * 0 for the first page). */
int zc_node_read(struct zc_mem *m, const struct zcor_ctx *ctx, const char *id, json_t **node,
		 struct zc_err *e);
int zc_node_page(struct zc_mem *m, const struct zcor_ctx *ctx, long long before, int limit,
		 json_t **out, struct zc_err *e);
/* Recomputes the dictionary terms of node / person `seq` (derived data). */
int zc_node_index_terms(struct zc_store *s, sqlite3_int64 seq, struct zc_err *e);
int zc_person_index_terms(struct zc_store *s, sqlite3_int64 seq, const json_t *p, struct zc_err *e);
/* Rebuilds every derived index (nodes_fts, terms, messages_fts) from
 * nodes, people and the message log and folds the hit log, in one
 * transaction. *counts: {nodes, people, messages}. */
int zc_mem_reindex(struct zc_mem *m, json_t **counts, struct zc_err *e);

/* Deletes a node op->ctx may change, unless it has children, a person
 * link or is a supersede target (ZCOR_ECONFLICT saying which); keeps its
 * snapshot as the op's before. node is borrowed. */
int zc_node_delete(struct zc_op *op, const json_t *node, struct zc_err *e);
/* Checks that a memory's title holds something to read: a title of spaces
 * only (ASCII white space, U+3000, U+00A0) is ZCOR_EINVAL naming
 * argument 'title' (details {field: "title", reason: "blank"}), as the
 * tree and the results would show it as nothing (issue 18). */
int zc_node_check_title(const char *title, struct zc_err *e);
/* Checks that `parent` may hold memory id (NULL: a new one) of `scope`:
 * it exists, the scopes may nest, and no cycle (ZCOR_ENOTFOUND /
 * ZCOR_ECONFLICT naming argument 'parentId', details {field: "parentId",
 * reason: "not_found" | "scope" | "cycle"}, for the page's words). */
int zc_node_check_parent(struct zc_op *op, const char *id, const char *scope, const char *parent,
			 struct zc_err *e);
/* Sets or clears id's important mark; a new mark goes last in the order
 * and, with ZC_IMPORTANT_MAX marked already, is ZCOR_ECONFLICT (details
 * reason "important_full") instead of replacing the earliest. */
int zc_node_set_mark(struct zc_op *op, const char *id, int want, struct zc_err *e);
/* A new id in creation order: 'm' + six base-36 digits of a counter above
 * every seq the store has had (its node takes the counter as its seq). */
int zc_node_new_id(struct zc_op *op, char out[16], struct zc_err *e);
/* Moves the important mark of `from` to `to` (keeping its order). */
int zc_node_move_important(struct zc_op *op, const char *from, const char *to, struct zc_err *e);

/* ---- arguments shared by the listing operations ----------------------- */

/* limit (default 20, 1..100) and offset (default 0, >= 0). */
int zc_page_args(json_t *args, long long *limit, long long *offset, struct zc_err *e);
/* {items, total, nextOffset} of a page that started at offset (items borrowed). */
json_t *zc_page_result(json_t *items, long long total, long long offset);
/* Optional ISO-8601 argument `key` with a zone -> *ms (-1 when absent). */
int zc_time_arg(json_t *args, const char *key, int64_t *ms, struct zc_err *e);
/* An FTS5 expression that every text containing all the keywords also
 * matches (each keyword that is one run of 2+ CJK characters as a phrase
 * over `columns`, e.g. "{title content}", or every column when columns
 * is NULL), or NULL when none is: the
 * exact substring test must still follow. Caller frees. */
char *zc_fts_keywords_prefilter(json_t *keywords, const char *columns);
/* A JSON array text of the NFKC + case-folded keywords (caller frees). */
char *zc_norm_keywords(json_t *keywords);
/* Binds ?9 of ZC_SCOPE_VISIBLE_SQL for op's conversation. */
void zc_bind_scope(struct zc_op *op, sqlite3_stmt *st);

/* ---- people ---------------------------------------------------------- */

json_t *zc_person_from_row(sqlite3_stmt *st);
#define ZC_PERSON_COLS                                                                    \
	"person_id, name, aliases, relationship, affinity, reason, memory_node_id, "      \
	"first_seen, confidence, created_at, updated_at"
int zc_person_save(struct zc_op *op, const json_t *p, struct zc_err *e);
/* A person's record (*p NULL when there is none; the caller's). */
int zc_person_load(struct zc_op *op, const char *id, json_t **p, struct zc_err *e);
/* Deletes person id's row (no check: the caller's rules come first). */
int zc_person_delete(struct zc_op *op, const char *id, struct zc_err *e);

/* ---- state files (backup, restore, migration) ------------------------ */

/* The whole state as format 3 (new reference). */
int zc_state_export(struct zc_op *op, json_t **state, struct zc_err *e);
/* Checks a state document of format 1, 2 or 3 (or a legacy memories.json
 * array) and converts it to format 3 (new reference); names the bad field. */
int zc_state_convert(const json_t *doc, int64_t now, json_t **v3, int *version, struct zc_err *e);
/* Replaces nodes, important marks and people with a format-3 state
 * (records without an id get a generated one, written into v3). */
int zc_state_replace(struct zc_op *op, json_t *v3, struct zc_err *e);
/* The kind of a file zcor writes in backups/, told by its name alone:
 * "state" (zcor_memory_backup's memory-state-<stamp>[-n].json, which
 * restore reads) or "view" (migrate cognition's <VIEW>.md.bak-<stamp>),
 * with the stamp's instant in *ms (may be NULL); NULL for any other name
 * (no '/', no "..": none of them has one). */
const char *zc_backup_kind(const char *name, int64_t *ms);
/* The files of backups/ zcor wrote (zc_backup_kind), regular files only
 * (a link under such a name is left out): {items: [{name, size, time,
 * kind}], truncated}, newest first, at most ZC_BACKUPS_MAX. No backups/
 * yet is an empty list; a backups/ that is a link is ZCOR_EINVAL. Reads
 * nothing outside backups/ and no file's content. */
/* The backups hold every conversation's memory: a caller bound to a
 * group or private conversation may not restore, list or read them
 * (ZCOR_EFORBIDDEN, the message beginning with what); the operator (no
 * conversation, or a console:* one) may. */
int zc_backups_operator_only(const struct zcor_ctx *ctx, const char *what, struct zc_err *e);
#define ZC_BACKUPS_MAX 1000
int zc_backups_list(struct zc_mem *m, json_t **out, struct zc_err *e);
/* Opens backups/<name> for reading: name one zc_backup_kind knows
 * (ZCOR_EINVAL otherwise: a path, "..", another file), a regular file
 * opened without following a link (a link is ZCOR_EINVAL), under a
 * backups/ that is a real directory; ZCOR_ENOTFOUND when there is none.
 * *fd is the caller's to close, *size its length. */
int zc_backup_open(struct zc_mem *m, const char *name, int *fd, long long *size, struct zc_err *e);
/* X-MIGRATE: imports memory-state.json / memories.json into an empty store. */
int zc_migrate_if_needed(struct zc_mem *m, struct zc_err *e);

/* ---- operations (one per tool; tools/ adds the schema) ---------------- */

/* The operator's search (node_find.c; not a tool): {keywords?, from?,
 * to?, includeSuperseded?, limit?, offset?} → a page of nodes, each with
 * "matched": [{keyword, field: title | keywords | content | alias, word}]. */
extern const struct zc_opdef zc_op_memory_find;
/* The Stats panel's figures (stats.c; not a tool): {staleDays? (30),
 * bucket? "day" | "week", buckets? (30 days, 26 weeks), limit? (10)} →
 * {total, current, superseded, important, neverRecalled, byKind, byScope,
 * byTier, growth: {bucket, items: [{start, count}]}, mostRecalled,
 * leastRecalled, stale: {days, count, items}, expired: {count, items},
 * now}, each figure over the memories the caller's scope may see. */
extern const struct zc_opdef zc_op_memory_stats;

extern const struct zc_opdef zc_op_memory_write, zc_op_memory_read, zc_op_memory_delete,
	zc_op_memory_children, zc_op_memory_trace, zc_op_memory_important, zc_op_memory_query,
	zc_op_memory_merge, zc_op_memory_supersede, zc_op_memory_history, zc_op_memory_backup,
	zc_op_memory_restore, zc_op_memory_search, zc_op_relationship_read,
	zc_op_relationship_query, zc_op_relationship_write, zc_op_relationship_delete,
	zc_op_synonyms_add, zc_op_synonyms_edit, zc_op_qq_memory, zc_op_qq_save_sticker,
	zc_op_qq_rename_sticker;

/* Reverting one history record (revert.c; the page's 撤销此更改, not a
 * tool): {"seq": n} -> {"reverted": n, "restored": [ids], "removed":
 * [ids]}; refusals are ZCOR_ECONFLICT with details {reason, ...}. */
extern const struct zc_opdef zc_op_history_revert;

/* Imports a seed-003 directory (exchange.c): one operation, one
 * transaction; progress(ud, path) per file. *report lists the views,
 * unparsed lines, entries kept as written, skipped files, people
 * extracted and stickers copied. */
int zc_import_qq(struct zc_mem *m, const struct zcor_ctx *ctx, const char *dir,
		 void (*progress)(void *, const char *), void *ud, json_t **report, struct zc_err *e);
/* Writes the views in the seed-003 layout under dir (one read snapshot). */
int zc_export_qq(struct zc_mem *m, const char *dir, json_t **report, struct zc_err *e);
/* Writes dir/digest.json: {"conversations": {key: {lastDigestAt,
 * lastDigestDate, linesSinceDigest}}} (export and mirror/). */
int zc_export_digest(struct zc_mem *m, const char *dir, struct zc_err *e);

/* A 64-bit difference hash of an image file (imagehash.c), and the
 * number of bits two hashes differ in (≤ ZC_IMAGE_SAME: same picture). */
int zc_image_dhash(const char *path, uint64_t *hash, struct zc_err *e);
int zc_image_distance(uint64_t a, uint64_t b);
#define ZC_IMAGE_SAME 10

/* zcor migrate cognition (migrate.c): media-keyed COGNITION.md entries
 * into STICKERS.md. Dry run unless apply (which backs up first). *report:
 * {actions: [...], unrecognised: n, backup?}. */
int zc_migrate_cognition(struct zc_mem *m, int apply, json_t **report, struct zc_err *e);

/* zcor doctor (doctor.c): {findings: [{code, severity, message, fix,
 * path?, line?}], needsAttention}; rebuild first recomputes every derived
 * table. */
int zc_doctor(struct zc_mem *m, int rebuild, json_t **report, struct zc_err *e);
/* The doctor of a directory zc_mem_open refused because of its memory.db
 * (zc_mem_check_db: MEMORY_DB_EMPTY, MEMORY_DB_DAMAGED), with the
 * UNSAFE_PATH findings: the same report shape, needsAttention true. NULL
 * when memory.db's state is not why (the check itself failed). */
json_t *zc_doctor_unopened(const char *dir);

/* Checks every [[图片: …]] of a reply: only an existing stickers/ file,
 * with its exact name and extension (qqmem.c). */
int zc_sticker_check_reply(struct zc_mem *m, const char *text, struct zc_err *e);
/* The same for every one of them: {ok, images: [path…], problems: [{image
 * (null for an unclosed '[[图片:'), message, suggestion?}]}; suggestion is
 * the collected sticker of that name with its real extension. */
json_t *zc_sticker_reply_report(struct zc_mem *m, const char *text);
/* The bytes of <folder>/<file>, folder "stickers" or "media", and its
 * MIME type (caller frees *data). A file name only: no '/', no leading '.'.
 * Only a regular file in a real folder (no link followed). The media
 * route reads through media.h's zc_media_read instead (the cache's table
 * and its scope). */
int zc_image_read(struct zc_mem *m, const char *folder, const char *file, char **data, size_t *len,
		  const char **mime, struct zc_err *e);

/* The expansion of one word through the synonym classes (a read). */
int zc_synonyms_expand(struct zc_mem *m, const char *word, json_t **out, struct zc_err *e);

/* Limits of the data model (documented in docs/FORMATS.md). */
#define ZC_SOURCE_MESSAGE_MAX 20000
#define ZC_IMPORTANT_MAX 5
#define ZC_QUERY_LIMIT_DEFAULT 20
#define ZC_QUERY_LIMIT_MAX 100
#define ZC_SEARCH_CANDIDATES 20
#define ZC_SEARCH_PICK 5

#endif
