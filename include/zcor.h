/*
 * zcor.h — the public interface of libzcor, long-term memory for chat bots.
 *
 * This is the only header outside src/ may include. The CLI, the server and
 * the black-box tests speak to zcor through it. Every operation takes and
 * returns JSON text, so the same call serves a model's tool call, a REST
 * route and a command line.
 *
 * Errors, one convention for every call (SQLite's): a call returns an
 * `int` code, ZCOR_OK or an enum zcor_code; what it gives back goes
 * through out parameters (`char **out` and the like), which are NULL (0)
 * when it fails. The failure itself stays on the handle until its next
 * call: zcor_errmsg(z) the message, zcor_errcode(z) the code and
 * zcor_errjson(z) the whole error as {"error":{"code","message",
 * "details"?}} text, which adapters (MCP, REST, the CLI's --json) forward
 * unchanged; a call that succeeds clears them. zcor_open gives a handle
 * even when it fails (unless memory ran out), to say why; every call on it
 * answers that failure again, and the caller zcor_closes it. A call with
 * no handle (zcor_check_conversation, zcor_doctor_unopened, zcor_tools_json
 * with z NULL) keeps its error for the calling thread alone: zcor_errmsg
 * (NULL), zcor_errcode(NULL), zcor_errjson(NULL). A result never carries
 * the call's own failure; an "error" inside a result is data about one
 * item or part of it, and the call that has one says so below
 * (zcor_synonyms_list, zcor_transcript_import_file's "errors"). Setters
 * (zcor_set_*), zcor_close, zcor_free and the accessors (zcor_dir,
 * zcor_code_name, zcor_tool_offered, the zcor_err* ones) cannot fail and
 * return their value. New calls keep this convention.
 *
 * Ownership: every `char *` this API hands out is the caller's, released
 * with zcor_free(). Every `const char *` stays owned by zcor and is valid
 * until the next call on the same handle.
 *
 * Threads: a handle is one SQLite connection; use a handle from one
 * thread at a time (it may move between threads, as zcor serve's pool does).
 * Any number of handles (in any number of processes) may open the same
 * memory directory at once.
 */
#ifndef ZCOR_H
#define ZCOR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct zcor zcor;

/* Result codes. Their names (zcor_code_name) are what JSON errors carry. */
enum zcor_code {
	ZCOR_OK = 0,
	ZCOR_EINVAL,      /* "invalid_argument": bad tool argument, body or file */
	ZCOR_ENOTFOUND,   /* "not_found": no such memory, person, tool, file */
	ZCOR_ECONFLICT,   /* "conflict": refused by a rule (delete with children…) */
	ZCOR_EFORBIDDEN,  /* "forbidden": not allowed from this conversation */
	ZCOR_EIO,         /* "io_error": the disk failed; see the message */
	ZCOR_EFULL,       /* "disk_full" */
	ZCOR_EREADONLY,   /* "read_only": the memory directory cannot be written */
	ZCOR_EBUSY,       /* "busy": another process held the store too long */
	ZCOR_ENOPROVIDER, /* "no_provider": an LLM is needed and none is set up */
	ZCOR_EPROVIDER,   /* "provider_error": the LLM failed or answered badly */
	ZCOR_EINTERNAL,   /* "internal": a bug in zcor; please report it */
	ZCOR_EUNCERTAIN,  /* "maybe_applied": the change may have taken effect */
	ZCOR_EUPSTREAM,   /* "upstream_error": a service zcor asked (the wiki) failed or answered badly */
};

/* The stable, snake_case name of a code ("not_found"). */
const char *zcor_code_name(int code);

/* Who is calling. Recorded in history; the conversation decides scope. */
enum zcor_actor {
	ZCOR_ACTOR_MODEL = 0,
	ZCOR_ACTOR_UI,
	ZCOR_ACTOR_CLI,
	ZCOR_ACTOR_DIGEST,
};

struct zcor_ctx {
	enum zcor_actor actor;
	/* NULL for the host plane (operator: CLI, web page); otherwise a key
	 * "group:<id>", "private:<qq>" or "console:<name>". */
	const char *conversation;
};

/*
 * Opens the memory directory `dir`, creating it and memory.db if needed.
 * Sets *out to a new handle, which the caller zcor_closes, also when the
 * open fails: then it returns the code, zcor_errmsg(*out) says why, and
 * every other call on it returns the same code (only when memory runs out
 * is *out NULL; zcor_errmsg(NULL) says so). A 0-byte memory.db in a
 * directory that holds data, and a memory.db that is not SQLite or is cut
 * off, are refused (ZCOR_EIO) and left as they are (docs/OPERATIONS.md);
 * zcor_doctor_unopened says why.
 */
int zcor_open(zcor **out, const char *dir);

/* Closes the handle, writing the read records it still holds (below).
 * Accepts NULL and a handle whose open failed. */
void zcor_close(zcor *z);

/*
 * The records of reads (and of failed calls, which changed nothing) are
 * written in groups a few milliseconds apart, not one transaction each
 * (docs/FORMATS.md, durability): another handle or process sees them
 * that much later, and a history query on this handle sees them at once.
 * zcor_flush writes them now, for a caller that reads memory.db by other
 * means right after. A handle is used by one thread at a time (calls on
 * it take its lock), and it runs a thread of its own that writes them
 * when the handle stays idle.
 */
int zcor_flush(zcor *z);

/*
 * The last call's error on handle z, or with z NULL the calling thread's
 * last handle-less call's. The message ("" after a call that succeeded);
 * the code (ZCOR_OK after one); the error as JSON text, {"error":
 * {"code": zcor_code_name(code), "message", "details"?}}, NULL after a
 * call that succeeded. The strings are owned by zcor and valid until the
 * next call on the same handle (or, for NULL, on the same thread).
 */
const char *zcor_errmsg(zcor *z);
int zcor_errcode(zcor *z);
const char *zcor_errjson(zcor *z);

/* The memory directory this handle was opened on. */
const char *zcor_dir(zcor *z);

/* Releases memory this API handed out. Accepts NULL. */
void zcor_free(void *p);

/* Checks a conversation key: ZCOR_OK or ZCOR_EINVAL, the message saying
 * what a key looks like. z may be NULL (the error is then the thread's). */
int zcor_check_conversation(zcor *z, const char *key);

/* ---- tools ---------------------------------------------------------- */

/*
 * Calls the tool `name` with `args_json` (a JSON object as text; NULL or ""
 * means {}). On success returns ZCOR_OK and sets *out_json to the result
 * (the caller frees it). On failure returns the error code, *out_json is
 * NULL and zcor_errjson(z) is {"error":{"code":"…","message":"…"}}, plus
 * "details" (an object) where the failing rule names what a program may
 * act on, e.g. a refused zcor_memory_delete: {"reason": "has_children",
 * "count": 2, "ids": […]} (docs/API.md lists them). A caller outside the
 * tool's audience (ctx's actor: model, digest, or the host plane) gets
 * ZCOR_EFORBIDDEN and nothing runs. Every call, failed ones included, is
 * recorded in history.
 */
int zcor_tool_call(zcor *z, const struct zcor_ctx *ctx, const char *name,
		   const char *args_json, char **out_json);

/* Flags for zcor_tools_json. */
#define ZCOR_TOOLS_ALL      0x1  /* the host plane's list: every tool, whatever the config */
#define ZCOR_TOOLS_ENGLISH  0x2  /* English descriptions instead of Chinese */

/*
 * The tool list as a JSON array of {name, title, description,
 * descriptionEn, inputSchema} in a deterministic order, from the
 * registry's one list per audience (docs/API.md, "Who sees which
 * tools"): the tools offered to models under the handle's config.json
 * (relationship tools only while relationship memory is on; with a NULL
 * handle every model tool), or the host plane's, every tool, with
 * ZCOR_TOOLS_ALL. *out_json: the caller frees.
 */
int zcor_tools_json(zcor *z, unsigned flags, char **out_json);

/*
 * 1 when the tool `name` is offered to models under the handle's
 * config.json (the same rule as zcor_tools_json without ZCOR_TOOLS_ALL),
 * 0 when it is not or no tool has that name. A NULL handle: every tool.
 * A table lookup (and a stat of config.json), nothing serialised: for
 * checking each call, as MCP tools/call does. A predicate: it cannot fail
 * and leaves the last error as it was.
 */
int zcor_tool_offered(zcor *z, const char *name);

/*
 * Reads one memory node as {"node": …} without recording it in history:
 * for hosts showing memory (MCP resources, the web page's detail view),
 * not for model tool calls. Scope rules apply: a node the conversation may
 * not see is ZCOR_ENOTFOUND.
 */
int zcor_node_get(zcor *z, const struct zcor_ctx *ctx, const char *id, char **out_json);

/*
 * Lists nodes for hosts (MCP resources/list), newest first, without
 * recording history: {"items": [{id, title, updatedAt}], "nextCursor"}.
 * cursor is NULL or a value returned before.
 */
int zcor_node_list(zcor *z, const struct zcor_ctx *ctx, const char *cursor, int limit,
		   char **out_json);

/*
 * The operator's search (the Memory page's search box; not the model's
 * zcor_memory_query, which keeps seed 000's rule): args_json {keywords?,
 * from?, to?, includeSuperseded?, limit?, offset?, sort?: "updated" (the
 * default) | "hits" | "created", scope?: "global" | a conversation key —
 * only that scope's records, within what ctx sees}. Every keyword, or a
 * word of its synonym class, must be in the title, the keywords, the
 * content, or the name or aliases of a person linked to the memory. *out_json
 * {"items": [node + "matched": [{keyword, field ("title", "keywords",
 * "content", "alias"), word}]], "total", "nextOffset"}. The page's (actor
 * ui) call leaves no history record. Caller frees.
 */
int zcor_memory_find(zcor *z, const struct zcor_ctx *ctx, const char *args_json, char **out_json);

/* ---- synonyms, for hosts (the web page) ----------------------------- */

/* The groups in file order: {"groups": [[…]…], "warning"?, "error"?}. A
 * read. "error" is data, not the call's failure: synonyms.json could not
 * be read again, the groups are the last good ones and it says why. */
int zcor_synonyms_list(zcor *z, char **out_json);
/* The local expansion of one word: {"word", "normalized", "expansion"}. */
int zcor_synonyms_expand(zcor *z, const char *word, char **out_json);
/* {"index": n, "terms": [...]} replaces group n, {"index": n, "terms":
 * null} deletes it. With "expected": the group's terms as last read, a
 * group that changed since is ZCOR_ECONFLICT (details: {"reason":
 * "group_changed", "current": the group now or null}) and nothing changes.
 * Recorded in history. */
int zcor_synonyms_edit(zcor *z, const struct zcor_ctx *ctx, const char *args_json, char **out_json);

/* ---- reverting a change (issue 18: History's revert) --------------- */

/*
 * Reverts history record `seq` as a new recorded change (operation
 * "history_revert", arguments {"seq": seq}, its own before/after images),
 * in one transaction: the record's before-images back, what it created
 * deleted. *out_json {"reverted": seq, "operation", "restored": [ids],
 * "removed": [ids]}. Refused, nothing changed, with ZCOR_ECONFLICT and
 * details {"reason", "seq", ...} (docs/API.md "Reverting a change"):
 * failed_call, nothing_changed, not_revertible, later_change ("count",
 * "conflicts": [{seq, at, operation, actor, targets}]), already_reverted
 * ("revertedBy"), changed_since ("ids"), link_missing, incomplete_record,
 * and the store's own (has_children, important_full, ...). The host plane
 * only (a bound ctx is ZCOR_EFORBIDDEN); no such record is ZCOR_ENOTFOUND.
 */
int zcor_history_revert(zcor *z, const struct zcor_ctx *ctx, long long seq, char **out_json);

/* ---- recall and the system prefix --------------------------------- */

/*
 * Auto-recall for one batch of incoming messages (SPEC §4). request_json:
 *   {"conversation": "group:1", "messages": ["text" | {"text", "senderId"?,
 *    "senderName"?}…], "speakers": [{"id", "name"?}…], "mentions": ["id"…],
 *    "explain": false, "countHits": true}
 * On success *out_json is {"header": the text to put before the batch,
 * "items": [...], "profile", "budget", "used", "terms", "expandedTerms",
 * "explain"?: per candidate features and why it was included or cut}.
 * "countHits": false counts no hit (a look back at a batch, or a preview:
 * what was packed was not injected).
 * Not recorded in history.
 */
int zcor_recall(zcor *z, const char *request_json, char **out_json);

/*
 * What the bot would get for one message (the page's recall preview):
 * request_json {"conversation", "text", "senderId"?, "senderName"?,
 * "mentions"?: [id…]} is made into the request a turn makes for a batch of
 * that one message (zc_turn_recall_request), recalled with "explain" and
 * "countHits": false (nothing was injected). *out_json is
 * zcor_recall's answer plus "prefix", the conversation's system prefix
 * (zcor_prefix). Not recorded in history. Caller frees.
 */
int zcor_recall_preview(zcor *z, const char *request_json, char **out_json);

/*
 * Reads what recall looks up on every message into this handle's memory,
 * up to budget_mb megabytes (1..ZCOR_WARM_MAX_MB; ZCOR_WARM_DEFAULT_MB is
 * what `zcor mcp` and `zcor serve` use), most used first: the term dictionary, the scoring index,
 * the records' lengths, then the newest records themselves; and keeps
 * this handle's page cache that large (plus 8 MB). For a process that
 * keeps one handle and answers many messages: its recalls then read from
 * its own memory, not from a disk the operating system may have dropped
 * the file's pages to. Costs the reading once (about 0.1-0.3 s for 32 MB)
 * and the memory. A commit by another connection to the same store
 * empties the cache again (SQLite in WAL mode); the handle's own writes do
 * not. On success *out_json is {"pages", "cacheBytes", "ms"}.
 */
#define ZCOR_WARM_DEFAULT_MB 32
#define ZCOR_WARM_MAX_MB 1024
int zcor_warm(zcor *z, int budget_mb, char **out_json);

/* The system prefix for a conversation (NULL: the host plane), as text. */
int zcor_prefix(zcor *z, const char *conversation, char **out);

/*
 * Rebuilds the derived indexes (full-text indexes, term dictionary) from
 * the nodes, people and message log, and folds pending hit counts. For
 * recovery after a hand edit of memory.db or a damaged index; memory
 * itself is untouched. On success *out_json is {"nodes": N, "people": M,
 * "messages": K}.
 */
int zcor_reindex(zcor *z, char **out_json);

/* ---- transcripts (Q-LOG), conversations, media ------------------------ */

/*
 * Logs a batch of incoming messages for `conversation` and runs auto-recall
 * for it. batch_json: {"messages": [{"id", "time"?, "senderId",
 * "senderName"?, "text"?, "mentions"?, "replyTo"?, "media"?, "self"?}…]}
 * (docs/FORMATS.md). Admission rules and the bot's own id (config.json)
 * apply first; rejected and already-logged messages are skipped with a
 * reason. One transaction, durable before this returns; not recorded in
 * history. On success *out_json is {"conversation", "logged", "skipped":
 * [{"messageId", "reason"}], "header", "items"}: the recall header of
 * the batch's admitted messages (their text, speakers and mentions), as
 * zcor_recall gives it ("" when nothing was admitted; "recallError" when
 * recall failed after logging). A ctx bound to another conversation is
 * ZCOR_EFORBIDDEN. ctx NULL: the host plane. "recallError" is data: the
 * messages were logged, the call succeeded. A batch with "recall": false
 * is logged the same but its answer's "header" is "" and "items" []:
 * what a world sends when it runs zcor_turn next (the turn recalls for
 * the batch itself).
 */
int zcor_log_messages(zcor *z, const struct zcor_ctx *ctx, const char *conversation,
		      const char *batch_json, char **out_json);

/*
 * Logs several conversations' batches in one transaction (one commit for
 * a world's burst across many groups): batches_json {"batches":
 * [{"conversation", "messages": [as zcor_log_messages takes them]}…]}, at
 * most 256 batches and 4096 messages in all. Admission and the bot's own
 * id apply as in zcor_log_messages; no recall runs (the world's turn
 * recalls). Each batch commits or is refused alone: one refused for what
 * it holds (a media reference its conversation may not use) is its
 * result's "error"; a malformed batch fails the call before anything is
 * logged. *out_json: {"results": [{"conversation", "logged", "skipped":
 * [{"messageId", "reason"}]} | {"conversation", "error": {"code",
 * "message"}}…]}, in order. Durable before this returns; no history.
 */
int zcor_log_batches(zcor *z, const struct zcor_ctx *ctx, const char *batches_json, char **out_json);

/*
 * zcor_log_batches for a world in the same process, without the JSON text
 * in between (issue 15: a world logging 5,000 events/s spent a third of
 * its logging CPU writing the batches out and reading them back): the
 * same messages as C values, checked by the same rules with the same
 * messages ("batches[3].messages[0].senderName: …"), the same one
 * transaction, the same answer as fields. The one exception to this
 * header's "JSON text in, JSON text out".
 *
 * A message's strings are NUL-terminated UTF-8 (bytes that are not are
 * ZCOR_EINVAL naming the field); NULL is "not given" (for id and
 * sender_id: missing). time_ms 0 is "not given" (now), else ms since
 * 1970. No media: a message with images goes through zcor_log_messages
 * or zcor_log_batches. Same limits: at most 256 batches and 4096
 * messages in all, 1 to 100 messages a batch.
 *
 * Out: a call that fails (a malformed batch, the disk) logs nothing and
 * fills no result; one that succeeds sets each batch's code (ZCOR_OK, or
 * its own refusal, with the message in error) and logged, and each of
 * its messages' skipped: NULL when it was logged, else the reason
 * ("duplicate", "self", "group_not_allowed", …; a static string).
 */
struct zcor_log_msg {
	const char *id;
	long long time_ms;
	const char *sender_id;
	const char *sender_name;
	const char *text;
	const char *const *mentions; /* n_mentions person ids ("all" for @all) */
	size_t n_mentions;
	const char *reply_to;
	int self;             /* the bot's own message (never logged) */
	const char *skipped;  /* out */
};
struct zcor_log_batch {
	const char *conversation;
	struct zcor_log_msg *messages;
	size_t n;
	int code;             /* out */
	long long logged;     /* out */
	char error[1024];     /* out: code's message */
};
/* flags: ZCOR_LOG_NO_FSYNC commits without waiting for the disk — safe
 * from a crash of the process, not yet from a power cut — for a caller
 * that goes on with its next batch meanwhile and makes this one durable
 * with zcor_sync before it acts on it (the QQ world's logging thread). */
#define ZCOR_LOG_NO_FSYNC 1u
int zcor_log_batches_c(zcor *z, const struct zcor_ctx *ctx, struct zcor_log_batch *batches, size_t n,
		       unsigned flags);

/* Makes every change this process committed to z's memory directory
 * before the call durable (a fsync of its write-ahead log, shared with
 * the commits of other handles meanwhile): the end of ZCOR_LOG_NO_FSYNC.
 * ZCOR_EIO when the disk fails. */
int zcor_sync(zcor *z);

/* The conversations with a log, for hosts, without history: {"items":
 * [{"key", "slug", "createdAt", "lastMessageAt", "messages",
 * "linesSinceDigest", "lastDigestAt", "lastDigestDate"}…]}, most recent
 * activity first. A bound ctx sees only its own. */
int zcor_conversations(zcor *z, const struct zcor_ctx *ctx, char **out_json);
/* One conversation as {"conversation": {…}}; ZCOR_ENOTFOUND without a log,
 * ZCOR_EFORBIDDEN for another conversation than a bound ctx's. */
int zcor_conversation_get(zcor *z, const struct zcor_ctx *ctx, const char *key, char **out_json);

/*
 * A message of `conversation` was withdrawn by its sender (QQ's
 * group_recall / friend_recall notice) at at_ms (0: now): it stays in the
 * log, flagged; transcript reads and searches show it as recalled
 * ("recalledAt"; qq_transcript marks it 已撤回) and the next turn's batch
 * delivers it marked. Idempotent (the first time is kept). ZCOR_ENOTFOUND
 * when that message was never logged there. A ctx bound to another
 * conversation is ZCOR_EFORBIDDEN. Not recorded in history.
 * *out_json: {"conversation", "messageId", "recalledAt"}.
 */
int zcor_message_recalled(zcor *z, const struct zcor_ctx *ctx, const char *conversation,
			  const char *message_id, long long at_ms, char **out_json);

/*
 * Whether config.json's admission rules (admission.privateChats, .groups,
 * .privates) let messages of `conversation` in — the rule
 * zcor_log_messages applies before logging, for a world's event that is
 * not logged (a QQ poke). *out_json: {"conversation", "admitted": bool,
 * "reason": the skip reason ("group_not_allowed", "private_chats_off",
 * "private_not_allowed") | null}. ZCOR_EINVAL for a malformed key.
 */
int zcor_admission(zcor *z, const char *conversation, char **out_json);

/*
 * Sets a conversation's display title (a QQ group's name, at most 100
 * characters; NULL or "" clears it), shown as "title" by
 * zcor_conversations and zcor_conversation_get. Creates the
 * conversation's row if it has none yet. Host plane; not in history.
 */
int zcor_conversation_title(zcor *z, const char *conversation, const char *title);

/*
 * The digest of `conversation` is done (for the digest agent): sets its
 * last digest time to now and date to today's local date, and lines since
 * the last digest to 0. *out_json is {"conversation": {…}}.
 */
int zcor_digest_done(zcor *z, const char *conversation, char **out_json);

/*
 * Seed-003 log files. Export writes root_dir/conversations/<slug>/log/
 * YYYY-MM-DD.jsonl for `conversation` (NULL: all), atomically per file:
 * {"conversations", "files", "messages"}. Import reads one such file into
 * `conversation`, tolerant of alias keys, idempotent by message id;
 * unparsable lines are listed by line number: {"file", "conversation",
 * "lines", "logged", "duplicates", "self", "errorCount", "errors"}
 * ("errors": per line, data of a call that succeeded).
 * Reading and searching transcripts is the tool qq_transcript.
 */
int zcor_transcript_export(zcor *z, const char *conversation, const char *root_dir,
			   char **out_json);
int zcor_transcript_import_file(zcor *z, const char *conversation, const char *path,
				char **out_json);

/*
 * The absolute path of a cached inbound media file named by a message's
 * reference "media/<sha256>.<ext>" (counts as a use for the LRU cache).
 * On success *out_path is the caller's (zcor_free). ZCOR_EINVAL for a
 * malformed reference, ZCOR_ENOTFOUND when not (or no longer) cached.
 */
int zcor_media_path(zcor *z, const char *ref, char **out_path);

/* ---- the turn: the bot (docs/TURN.md) --------------------------------- */

/*
 * What a streaming turn tells its caller as it happens, from the calling
 * thread (any member may be NULL): text, the model's text as it streams
 * (len bytes, valid UTF-8, not NUL-terminated; a reply the check sends
 * back to the model streams too, so show the final "reply" once the call
 * returns); tool_start and tool_end around each tool call the turn runs
 * (status "ok" or "error"; result: the tool message's JSON text). A call
 * refused without running is in the result's "toolCalls" only.
 */
struct zcor_turn_events {
	void (*text)(void *ud, const char *text, size_t len);
	void (*tool_start)(void *ud, const char *name, const char *arguments);
	void (*tool_end)(void *ud, const char *name, const char *status, const char *result);
	void *ud;
};

/*
 * Runs one turn of `conversation` (SPEC §9): the batch is every message
 * logged there (zcor_log_messages, the world's part) after the last turn;
 * recall for it, the system prefix, the stored dialogue, the batch as an
 * external_event_frame, the model's tool loop within the turn.* limits,
 * the checked reply, the dialogue and a turn record. One turn at a time
 * per conversation (across processes too): a second waits up to
 * turn.waitMs, then ZCOR_EBUSY. Blocks for the model's time; the store is
 * not locked meanwhile. Needs config.json's "provider".
 * opts_json: NULL or {"event"?: an internal event's text (no recall),
 * "check"?: true: only whether a turn could run, {"ready": true},
 * "deferSync"?: true: the record (with the dialogue and the cursor)
 * commits without waiting for its fsync — for a caller that acts on the
 * reply at once and then makes it durable with its next synced commit,
 * zcor_turn_note (the QQ world; docs/TURN.md "Durability")}.
 * *out_json: {turn (the record's id; null with "idle": true when nothing
 * was logged since the last turn), conversation, reply (the text to send),
 * batch: [message ids], recalled: [memory ids], recalledPeople, toolCalls:
 * [{id, name, arguments, status, ms, error?}], limit (null | "steps" |
 * "deadline" | "repeat"), modelMs, tokens ({prompt, completion, total} or
 * null)}. ZCOR_ENOPROVIDER: none configured (nothing changed; the message
 * says how). ZCOR_EPROVIDER (or another code of the failing part): the
 * turn failed and is recorded; the batch is not retried; details:
 * {"turn": id, "apology"?: the world's configured apology to send}.
 */
int zcor_turn(zcor *z, const char *conversation, const char *opts_json, char **out_json);
/* The same, telling ev (may be NULL) as it goes; streams from the model. */
int zcor_turn_stream(zcor *z, const char *conversation, const char *opts_json,
		     const struct zcor_turn_events *ev, char **out_json);

/*
 * Adds what the world did with turn turn_id's reply to its record:
 * note_json is an object (at most 16 KiB) such as {"delivery": {"status":
 * "sent" | "failed" | "unknown" | "rate-limited", "messageIds": [...],
 * "retcode"?, "message"?, "retried"?: bool}}; its keys are merged into
 * the record (zcor_turns shows them). ZCOR_ENOTFOUND for no such turn;
 * ZCOR_EINVAL for a note that is not an object or too big, or a key the
 * record already has other than "delivery".
 */
int zcor_turn_note(zcor *z, long long turn_id, const char *note_json);
/* The same; flags ZCOR_NOTE_NO_FSYNC: commits without waiting for the
 * disk, for a caller that makes it durable with zcor_sync right after
 * (the QQ world's noter thread writes the notes that queued and then
 * waits for one fsync). */
#define ZCOR_NOTE_NO_FSYNC 1u
int zcor_turn_note_flags(zcor *z, long long turn_id, const char *note_json, unsigned flags);

/*
 * Turn records, newest first, without history. query_json: NULL or
 * {"conversation"?, "limit"? (1..100, default 20), "offset"?}. A ctx bound
 * to a conversation sees only its own (another is ZCOR_EFORBIDDEN).
 * *out_json: {items: [{id, conversation, startedAt, endedAt, status ("ok" |
 * "error"), reply, error ({code, message} | null), batch, pending,
 * recalled, recalledPeople, toolCalls, limit, requests, modelMs, tokens,
 * event?, recallError?, replyProblems?, apology?}], total, nextOffset}.
 */
int zcor_turns(zcor *z, const struct zcor_ctx *ctx, const char *query_json, char **out_json);

/* ---- the digest agent (SPEC §5 Q-DIGEST; docs/DIGEST.md) ------------- */

/*
 * Runs one digest of conversation now, whatever its line count (at least
 * one new line: else {"digest": null, "idle": true}): an independent agent
 * session with the digest audience's tools, in the conversation's scope,
 * that follows the message-digest skill; success marks the digest done.
 * opts_json: NULL or {"trigger": "manual"|"schedule"|"catch-up" (kept in
 * the record), "ifDue": bool (default: true for "schedule" and
 * "catch-up", false for "manual")}. With ifDue the conversation is
 * checked again once its lease is held, and a run is made only if it is
 * still due (not digested today, digestMinLines new lines): else
 * {"digest": null, "idle": true, "notDue": true}, nothing recorded. *out_json on ZCOR_OK: {digest (record id), conversation,
 * status, lines, sentLines, chars, cut, toolCalls, tokens, modelMs,
 * answer, after (the conversation's row)}. A failed or timed-out run is
 * recorded and its error returned with details {digest, status}; the
 * lines stay for the next run. ZCOR_ENOPROVIDER: no provider;
 * ZCOR_ECONFLICT: "memory": false, or a digest of the conversation runs
 * already (in this process or another: the store's lease), details
 * {reason "digest_running", conversation, holder, pid, until}; nothing
 * is recorded for these.
 */
int zcor_digest(zcor *z, const char *conversation, const char *opts_json, char **out_json);
/* Which conversations are due now (not digested on today's local date,
 * at least digestMinLines new lines), by the handle's clock: {today, now
 * (ms), nextWake (ms: the next digestAtHour:00 local strictly after now),
 * atHour, minLines, memory, catchUp, due: [key…], conversations:
 * [{conversation, linesSinceDigest, lastDigestDate, messages, due,
 * missedWake (not digested on or after the local date of the latest
 * wake: what catch-up needs)}]}.
 * Caller frees. */
int zcor_digest_due(zcor *z, char **out_json);
/* The digest records, newest first: query_json {conversation?, limit?,
 * offset?} as zcor_turns; *out_json {items: [{id, conversation,
 * startedAt, endedAt, status "ok"|"error"|"timeout", lines, sentLines,
 * chars, cut, error, trigger, toolCalls, tools, tokens, requests,
 * modelMs, answer, limit}], total, nextOffset}. */
int zcor_digests(zcor *z, const struct zcor_ctx *ctx, const char *query_json, char **out_json);

/* ---- settings ------------------------------------------------------- */

/* The settings in effect (config.json with defaults), as JSON, plus
 * "warning" when the file is invalid. Caller frees *out_json. */
int zcor_config_json(zcor *z, char **out_json);
/* Merges settings_json into config.json after checking the result. On
 * failure nothing is written, zcor_errmsg names the key and the error's
 * details say which and its rule: {"field": "recallChars", "type":
 * "integer", "min", "max", "reason": "invalid" | "unknown" | "type"}. */
int zcor_config_set(zcor *z, const char *settings_json);
/* The keys' rules, for checking a value before sending it (the page):
 * {"fields": [{field, type ("integer", "number", "boolean", "enum",
 * "string"), min?, max?, values?, default?, nullable?}]}. Caller frees. */
int zcor_config_fields(zcor *z, char **out_json);

/* ---- LLM provider --------------------------------------------------- */

/*
 * What zcor_memory_search's second stage calls. complete() returns 0 and
 * sets *reply (malloc'ed, zcor frees it with free()), or returns nonzero
 * and sets *errmsg (malloc'ed, freed with free(); may stay NULL). A
 * callback the host writes, not a call of this API: zcor turns its failure
 * into the calling tool's ZCOR_EPROVIDER error.
 */
struct zcor_provider {
	int (*complete)(void *ud, const char *system, const char *user,
			char **reply, char **errmsg);
	void *ud;
};

/* Sets (or with NULL clears) the provider. zcor keeps a copy of *p. */
void zcor_set_provider(zcor *z, const struct zcor_provider *p);

/*
 * Sets (or with NULL clears) the provider used only while neither
 * zcor_set_provider's nor config.json's is there: zcor mcp's sampling,
 * the client running the model. Decided at each call, so a provider added
 * to config.json takes over without a restart. zcor keeps a copy of *p.
 */
void zcor_set_fallback_provider(zcor *z, const struct zcor_provider *p);

/*
 * Asks the digest run going on z (zcor_digest, in another thread) to stop
 * now: its provider request is abandoned, no further tool call runs, and
 * the run is recorded as failed ("interrupted"), its lines kept — the
 * record and "not done" in one transaction, so nothing is half-written.
 * For a process that is stopping: it is for good, every later digest on
 * z is refused (ZCOR_ECONFLICT). The one call that may be made on a
 * handle while another thread uses it; NULL is fine.
 */
void zcor_interrupt(zcor *z);

/* ---- time ----------------------------------------------------------- */

/* Replaces the clock (milliseconds since the epoch, UTC). NULL restores
 * the system clock. Tests use it for recency, history and digest days. */
void zcor_set_clock(zcor *z, int64_t (*now_ms)(void *ud), void *ud);

#ifdef __cplusplus
}
#endif

/*
 * Checks a reply before it is sent: every [[图片: …]] must name an
 * existing collected sticker, stickers/<name>.<ext> exactly (Q-STK).
 * ZCOR_OK, or a code with zcor_errmsg saying which path is wrong.
 */
int zcor_check_reply(zcor *z, const char *text);

/*
 * The same check as JSON, for hosts that answer over REST or the command
 * line: request_json is {"text": "the reply"}; *out_json is {"ok": bool,
 * "images": [path…] (the good ones), "problems": [{"image", "message",
 * "suggestion"?}]} — suggestion names the collected sticker of that name
 * with its real extension (stickers/敲盆.gif for stickers/敲盆.jpg). A
 * reply with a wrong path is an answer (ZCOR_OK, "ok": false; "problems"
 * are per image); a bad request is ZCOR_EINVAL naming the field. Not
 * recorded in history. Caller frees.
 */
int zcor_check_reply_json(zcor *z, const char *request_json, char **out_json);

/*
 * The bytes of the collected sticker stickers/<file> (a file name, no
 * directory) and its MIME type (static). The caller frees *data with
 * zcor_free(). Only a regular file in a real stickers/ directory is read:
 * a symbolic link or FIFO planted there is refused (ZCOR_EINVAL).
 */
int zcor_sticker_read(zcor *z, const char *file, char **data, size_t *len, const char **mime);
/* The same for an inbound image of the media cache, media/<sha256>.<ext>
 * (file: "<sha256>.<ext>"), only as the cache's table knows it and only
 * for ctx: a conversation sees the images of its own messages, the host
 * plane (ctx NULL or without conversation) all; any other is
 * ZCOR_ENOTFOUND, with the same message as one never cached. */
int zcor_media_read(zcor *z, const struct zcor_ctx *ctx, const char *file, char **data, size_t *len,
		    const char **mime);

/*
 * Seed-003 directory layout (X-STORE): import is one transaction (the
 * views, the 「## 人」 people extraction, .qq-stickers/ files); progress,
 * if not NULL, is called with the path of each view file and each log
 * file (conversations/<slug>/log/YYYY-MM-DD.jsonl) as it is read, from
 * the calling thread. *report_json (caller
 * frees) lists what was imported, lines kept as written, and what was
 * skipped. Export writes the views and .qq-stickers/ under dir.
 */
int zcor_import_qq(zcor *z, const char *dir, void (*progress)(void *ud, const char *path),
		   void *ud, char **report_json);
int zcor_export_qq(zcor *z, const char *dir, char **report_json);

/*
 * zcor doctor (SPEC §10): *report_json = {"findings": [{code, severity,
 * message, fix, path?, line?}], "needsAttention": bool}. With rebuild, the
 * derived data (full-text index, terms, citations) is recomputed first.
 */
int zcor_doctor(zcor *z, int rebuild, char **report_json);
/* The doctor's report, in zcor_doctor's shape, for a directory zcor_open
 * refused because of its memory.db: why (MEMORY_DB_EMPTY,
 * MEMORY_DB_DAMAGED) and what else it can check without the store
 * (UNSAFE_PATH). ZCOR_ENOTFOUND when memory.db's state is not the reason
 * (the directory cannot be opened at all: zcor_open's error says why).
 * z: NULL (the thread's error) or a handle that opened. Caller frees. */
int zcor_doctor_unopened(zcor *z, const char *dir, char **report_json);

/*
 * zcor migrate cognition (SPEC §6): old COGNITION.md entries keyed by a
 * media path move to STICKERS.md. A dry run unless apply; apply backs up
 * first. *report_json: {applied, actions: [{action, name, media, image?,
 * line, why?}], unrecognised, refused, backups?, stateBackup?}; action
 * "refused" (a name that is no sticker name, a media path that names no
 * file of the cache) leaves its line where it is.
 */
int zcor_migrate_cognition(zcor *z, int apply, char **report_json);
/* Reports are results: their findings, actions and skipped lines are
 * data of a call that succeeded; the call's own failure is its code and
 * zcor_errjson, *report_json NULL. */

/* ---- the Memory page's Backups and Stats panels (issue 18) ------------- */

/*
 * The backups zcor wrote in backups/ (zcor_memory_backup's state copies,
 * kind "state", which zcor_memory_restore takes; migrate cognition's
 * copies of the views, kind "view"), newest first: {"items": [{name,
 * size, time, kind}], "truncated"}. Only regular files with zcor's own
 * names are listed; nothing outside backups/ is read. A ctx bound to a
 * group or private conversation is ZCOR_EFORBIDDEN (a backup holds every
 * conversation's memory). Not recorded in history.
 */
int zcor_backups(zcor *z, const struct zcor_ctx *ctx, char **out_json);
/* Opens the backup `name` (a name as zcor_backups lists it) for reading:
 * *fd is the caller's to close, *size its length. A name that is not one
 * of zcor's (a path, "..", another file) is ZCOR_EINVAL, a link in its
 * place ZCOR_EINVAL (never followed), no such file ZCOR_ENOTFOUND; ctx as
 * zcor_backups. Not recorded in history. */
int zcor_backup_open(zcor *z, const struct zcor_ctx *ctx, const char *name, int *fd,
		     long long *size);
/* The Stats panel's figures, over the memories ctx may see (a bound
 * conversation: global memory and its own): query_json {staleDays?,
 * bucket? "day" | "week", buckets?, limit?} (NULL or "" for {}) →
 * {total, current, superseded, important, neverRecalled, byKind: [{kind,
 * count}], byScope, byTier, growth: {bucket, items: [{start, count}]},
 * mostRecalled, leastRecalled, stale: {days, count, items}, expired:
 * {count, items}, now} (docs/API.md "GET stats"). The hit counts this
 * handle holds are folded in first. A read: the page's is not recorded. */
int zcor_memory_stats(zcor *z, const struct zcor_ctx *ctx, const char *query_json, char **out_json);

#endif /* ZCOR_H */
