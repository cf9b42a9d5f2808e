/*
 * store.c — the SQLite side of memory.db (see store.h): pragmas, forward
 * schema migrations keyed on PRAGMA user_version, transactions, and the
 * statement cache. Store layer, under memory/: it never holds a rule of
 * the seeds, never edits a released migration (a store of that version
 * exists somewhere), and never evicts a statement in use.
 */
#include "store/store.h"

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/fs.h"
#include "base/json.h"
#include "base/timeutil.h"
#include "text/norm.h"
#include "text/tokens.h"

/* Each entry moves the schema from version i to i+1. Never edit a
 * released entry: add a new one. */
/* What recall_fts indexes (schema 12): the records recall may inject —
 * current, hot, not 存疑, not a document (memory.h's ZC_MAY_INJECT_SQL,
 * which the store layer cannot include; test_gate checks they agree) —
 * and the text of a record it indexes and recall_stats counts. P is the
 * row's prefix ("new.", "old.", "n."). */
#define RECALL_LIVE(P)                                                                          \
	P "superseded_by IS NULL AND " P "tier = 'hot' AND " P "kind <> 'document' AND coalesce(" P \
	  "confidence, '') <> '存疑'"
#define RECALL_TEXT(P) P "title || char(10) || " P "keywords || char(10) || " P "content"
#define RECALL_BODY(P) P "scope || char(31) || " RECALL_TEXT(P)
#define FTS_UPTO "CAST((SELECT value FROM meta WHERE key = 'fts_upto') AS INTEGER)"
#define MIGRATED "n.seq <= " FTS_UPTO
/* a record's rows in recall_fts, recall_stats and recall_df go (P = "old.")
 * or come (P = "new.") */
#define RECALL_GO(P)                                                                           \
	"  INSERT INTO recall_fts(recall_fts, rowid, body) SELECT 'delete', -" P "seq, " RECALL_BODY(P) \
	"\n    WHERE " RECALL_LIVE(P) ";\n"                                                        \
	"  UPDATE recall_stats SET docs = docs - 1, tokens = tokens - zc_lex_len(" RECALL_TEXT(P) ")\n" \
	"    WHERE scope = " P "scope AND " RECALL_LIVE(P) ";\n"                                     \
	"  UPDATE recall_df SET df = df - 1 WHERE scope = " P "scope AND token IN (SELECT value FROM\n" \
	"    json_each(zc_lex_set(" RECALL_TEXT(P) "))) AND " RECALL_LIVE(P) ";\n"                  \
	"  DELETE FROM recall_df WHERE scope = " P "scope AND df <= 0 AND token IN (SELECT value FROM\n" \
	"    json_each(zc_lex_set(" RECALL_TEXT(P) "))) AND " RECALL_LIVE(P) ";\n"
#define RECALL_COME(P)                                                                         \
	"  INSERT INTO recall_fts(rowid, body) SELECT -" P "seq, " RECALL_BODY(P) " WHERE " RECALL_LIVE(P) ";\n" \
	"  INSERT INTO recall_stats(scope, docs, tokens) SELECT " P "scope, 1, zc_lex_len(" RECALL_TEXT(P) ")\n" \
	"    WHERE " RECALL_LIVE(P) " ON CONFLICT(scope) DO UPDATE SET docs = docs + 1,\n"            \
	"    tokens = tokens + excluded.tokens;\n"                                                  \
	"  INSERT INTO recall_df(token, scope, df) SELECT j.value, " P "scope, 1 FROM\n"             \
	"    json_each(zc_lex_set(" RECALL_TEXT(P) ")) j WHERE " RECALL_LIVE(P) "\n"                 \
	"    ON CONFLICT(token, scope) DO UPDATE SET df = df + 1;\n"
/* the live records where B holds (of seq above ?1: a batch of new records,
 * zc_store_recall_catch_up, a rebuild; up to meta.fts_upto: the migration),
 * into all three */
#define RECALL_FILL_FTS(B)\
	"INSERT INTO recall_fts(rowid, body) SELECT -n.seq, " RECALL_BODY("n.") " FROM nodes n\n"  \
	"  WHERE " B " AND " RECALL_LIVE("n.")
#define RECALL_FILL_STATS(B) RECALL_FILL_STATS_FROM("nodes n", B)
#define RECALL_FILL_STATS_FROM(T, B)                                                            \
	"INSERT INTO recall_stats(scope, docs, tokens) SELECT n.scope, count(*), sum(zc_lex_len("   \
	RECALL_TEXT("n.") ")) FROM " T "\n  WHERE " B " AND " RECALL_LIVE("n.")                \
	" GROUP BY n.scope ORDER BY n.scope\n  ON CONFLICT(scope) DO UPDATE SET docs = docs + excluded.docs, " \
	"tokens = tokens + excluded.tokens"
#define RECALL_FILL_DF(B)                                                                       \
	"INSERT INTO recall_df(token, scope, df) SELECT j.value, n.scope, count(*) FROM nodes n,\n" \
	"  json_each(zc_lex_set(" RECALL_TEXT("n.") ")) j WHERE " B " AND " RECALL_LIVE("n.") \
	"\n  GROUP BY j.value, n.scope ORDER BY j.value, n.scope\n"                                 \
	"  ON CONFLICT(token, scope) DO UPDATE SET df = df + excluded.df"

/* scope P's recall rows changed: it gets the next generation (schema 14) */
#define RECALL_GEN(P)                                                                          \
	"  UPDATE meta SET value = value + 1 WHERE key = 'recall_gen';\n"                          \
	"  INSERT INTO recall_gen(scope, gen) SELECT " P "scope, CAST(value AS INTEGER) FROM meta\n" \
	"    WHERE key = 'recall_gen' ON CONFLICT(scope) DO UPDATE SET gen = excluded.gen;\n"

static const char *const migrations[] = {
	/* 0 -> 1: nodes, people, history, meta */
	"CREATE TABLE meta(\n"
	"  key   TEXT PRIMARY KEY,\n"
	"  value TEXT NOT NULL\n"
	") STRICT;\n"
	"CREATE TABLE nodes(\n"
	"  seq            INTEGER PRIMARY KEY,\n" /* creation order: 'id ascending' */
	"  id             TEXT NOT NULL UNIQUE,\n"
	"  title          TEXT NOT NULL,\n"
	"  content        TEXT NOT NULL,\n"
	"  keywords       TEXT NOT NULL DEFAULT '[]',\n" /* JSON array */
	"  parent_id      TEXT REFERENCES nodes(id),\n"
	"  source_message TEXT,\n"
	"  important_seq  INTEGER UNIQUE,\n" /* order of first marking; NULL = not */
	"  superseded_by  TEXT REFERENCES nodes(id),\n"
	"  superseded_reason TEXT,\n"
	"  merged_from    TEXT,\n" /* JSON array of ids */
	"  merged_reason  TEXT,\n"
	"  scope          TEXT NOT NULL DEFAULT 'global',\n"
	"  kind           TEXT NOT NULL DEFAULT 'memory',\n"
	"  section        TEXT,\n"
	"  pinned         INTEGER NOT NULL DEFAULT 0,\n"
	"  date           TEXT,\n"
	"  expires        TEXT,\n"
	"  confidence     TEXT,\n"
	"  tier           TEXT NOT NULL DEFAULT 'hot',\n"
	"  archive_month  TEXT,\n"
	"  attrs          TEXT NOT NULL DEFAULT '{}',\n" /* JSON object */
	"  created_at     INTEGER NOT NULL,\n"
	"  updated_at     INTEGER NOT NULL,\n"
	"  hits           INTEGER NOT NULL DEFAULT 0,\n"
	"  last_hit_at    INTEGER,\n"
	"  title_norm     TEXT NOT NULL,\n" /* NFKC + case fold, for matching */
	"  content_norm   TEXT NOT NULL,\n"
	/* recall's filter as index tokens (nodes_fts.recall_tag): the scope
	 * as 's' + hex, and 'zlive' for records recall may inject: the
	 * injection gate of memory.h (ZC_MAY_INJECT_SQL), spelled out here
	 * because a released migration is never edited; test_gate checks
	 * that the two agree */
	"  recall_tag     TEXT GENERATED ALWAYS AS ('s' || hex(scope) || ' ' ||\n"
	"    CASE WHEN superseded_by IS NULL AND tier = 'hot' AND kind <> 'document'\n"
	"      AND coalesce(confidence, '') <> '存疑' THEN 'zlive' ELSE 'zdead' END) VIRTUAL\n"
	") STRICT;\n"
	"CREATE INDEX nodes_parent ON nodes(parent_id);\n"
	"CREATE INDEX nodes_superseded_by ON nodes(superseded_by);\n"
	"CREATE INDEX nodes_updated ON nodes(updated_at, seq);\n"
	"CREATE INDEX nodes_scope ON nodes(scope);\n"
	"CREATE TABLE people(\n"
	"  seq            INTEGER PRIMARY KEY,\n"
	"  person_id      TEXT NOT NULL UNIQUE,\n"
	"  name           TEXT NOT NULL,\n"
	"  aliases        TEXT NOT NULL DEFAULT '[]',\n"
	"  relationship   TEXT NOT NULL DEFAULT '',\n"
	"  affinity       INTEGER NOT NULL DEFAULT 0 CHECK (affinity BETWEEN -100 AND 100),\n"
	"  reason         TEXT NOT NULL DEFAULT '',\n"
	"  memory_node_id TEXT REFERENCES nodes(id),\n"
	"  first_seen     INTEGER,\n"
	"  confidence     TEXT,\n"
	"  created_at     INTEGER NOT NULL,\n"
	"  updated_at     INTEGER NOT NULL,\n"
	"  search_norm    TEXT NOT NULL\n"
	") STRICT;\n"
	"CREATE INDEX people_node ON people(memory_node_id);\n"
	"CREATE TABLE history(\n"
	"  seq          INTEGER PRIMARY KEY,\n"
	"  at           INTEGER NOT NULL,\n"
	"  operation    TEXT NOT NULL,\n"
	"  actor        TEXT NOT NULL,\n"
	"  conversation TEXT,\n"
	"  arguments    TEXT NOT NULL,\n"
	"  status       TEXT NOT NULL CHECK (status IN ('ok', 'error')),\n"
	"  error        TEXT,\n"
	"  before       TEXT,\n"
	"  after        TEXT,\n"
	"  receipt      TEXT,\n"
	"  search_norm  TEXT NOT NULL\n"
	") STRICT;\n"
	"CREATE INDEX history_at ON history(at);\n",
	/* 1 -> 2: recall indexes. Derived data: zcor doctor --rebuild can
	 * drop and refill them from nodes and people. */
	"CREATE VIRTUAL TABLE nodes_fts USING fts5(title, keywords, content, recall_tag,\n"
	"  content='nodes', content_rowid='seq', tokenize='zcor');\n"
	"CREATE VIRTUAL TABLE nodes_vocab USING fts5vocab(nodes_fts, 'row');\n"
	"INSERT INTO nodes_fts(nodes_fts) VALUES('rebuild');\n"
	"CREATE TRIGGER nodes_fts_ai AFTER INSERT ON nodes BEGIN\n"
	"  INSERT INTO nodes_fts(rowid, title, keywords, content, recall_tag)\n"
	"  VALUES (new.seq, new.title, new.keywords, new.content, new.recall_tag);\n"
	"END;\n"
	"CREATE TRIGGER nodes_fts_ad AFTER DELETE ON nodes BEGIN\n"
	"  INSERT INTO nodes_fts(nodes_fts, rowid, title, keywords, content, recall_tag)\n"
	"  VALUES ('delete', old.seq, old.title, old.keywords, old.content, old.recall_tag);\n"
	"END;\n"
	"CREATE TRIGGER nodes_fts_au AFTER UPDATE OF title, keywords, content, scope,\n"
	"  superseded_by, tier, kind, confidence ON nodes BEGIN\n"
	"  INSERT INTO nodes_fts(nodes_fts, rowid, title, keywords, content, recall_tag)\n"
	"  VALUES ('delete', old.seq, old.title, old.keywords, old.content, old.recall_tag);\n"
	"  INSERT INTO nodes_fts(rowid, title, keywords, content, recall_tag)\n"
	"  VALUES (new.seq, new.title, new.keywords, new.content, new.recall_tag);\n"
	"END;\n"
	/* dictionary terms that may occur verbatim in a message: normalised
	 * titles, keywords (slang variants), person names and aliases */
	"CREATE TABLE terms(\n"
	"  term  TEXT NOT NULL,\n"
	"  scope TEXT NOT NULL,\n"
	"  kind  TEXT NOT NULL CHECK (kind IN ('node', 'person')),\n"
	"  ref   INTEGER NOT NULL,\n" /* nodes.seq or people.seq */
	"  PRIMARY KEY (term, scope, kind, ref)\n"
	") WITHOUT ROWID, STRICT;\n"
	"CREATE INDEX terms_ref ON terms(kind, ref);\n"
	"CREATE TRIGGER terms_node_ad AFTER DELETE ON nodes BEGIN\n"
	"  DELETE FROM terms WHERE kind = 'node' AND ref = old.seq;\n"
	"END;\n"
	"CREATE TRIGGER terms_person_ad AFTER DELETE ON people BEGIN\n"
	"  DELETE FROM terms WHERE kind = 'person' AND ref = old.seq;\n"
	"END;\n"
	"CREATE INDEX nodes_kind ON nodes(kind);\n"
	"CREATE INDEX nodes_pinned ON nodes(updated_at) WHERE pinned = 1;\n"
	/* recall appends one row per injected node; zc_mem_flush_hits folds
	 * them into nodes.hits / last_hit_at in batches (appends touch one
	 * page, while updating the counters in place touches one per node) */
	"CREATE TABLE hit_log(seq INTEGER NOT NULL, at INTEGER NOT NULL);\n"
	/* a generation number of what recall's index lookups depend on, so a
	 * connection can keep lookups between messages and know when any
	 * connection changed the nodes */
	"INSERT INTO meta(key, value) VALUES('nodes_gen', '0');\n"
	"CREATE TRIGGER nodes_gen_ai AFTER INSERT ON nodes BEGIN\n"
	"  UPDATE meta SET value = value + 1 WHERE key = 'nodes_gen';\n"
	"END;\n"
	"CREATE TRIGGER nodes_gen_ad AFTER DELETE ON nodes BEGIN\n"
	"  UPDATE meta SET value = value + 1 WHERE key = 'nodes_gen';\n"
	"END;\n"
	"CREATE TRIGGER nodes_gen_au AFTER UPDATE OF title, keywords, content, scope,\n"
	"  superseded_by, tier, kind, confidence ON nodes BEGIN\n"
	"  UPDATE meta SET value = value + 1 WHERE key = 'nodes_gen';\n"
	"END;\n",
	/* 2 -> 3: the first two characters of the terms, with the longest
	 * term behind them, so recall probes only the substrings of a message
	 * that can be terms (derived; only grows between rebuilds) */
	"CREATE TABLE term_prefix(\n"
	"  prefix TEXT PRIMARY KEY,\n"
	"  maxlen INTEGER NOT NULL\n"
	") WITHOUT ROWID, STRICT;\n"
	"INSERT INTO term_prefix(prefix, maxlen)\n"
	"  SELECT substr(term, 1, 2), max(length(term)) FROM terms GROUP BY substr(term, 1, 2);\n",
	/* 3 -> 4: seed 003's bookkeeping. Conversations (what digest.json
	 * held), the message log (Q-LOG), earlier versions of each memory
	 * view (qq_memory write keeps the last 20), lines of a view that did
	 * not parse (kept verbatim, reported), the inbound media cache. */
	"CREATE TABLE conversations(\n"
	"  key              TEXT PRIMARY KEY,\n"        /* group:<id> private:<qq> console:<name> */
	"  slug             TEXT NOT NULL UNIQUE,\n"    /* key without the colon */
	"  created_at       INTEGER NOT NULL,\n"
	"  last_message_at  INTEGER,\n"
	"  messages         INTEGER NOT NULL DEFAULT 0,\n"
	"  lines_since_digest INTEGER NOT NULL DEFAULT 0,\n"
	"  last_digest_at   INTEGER,\n"
	"  last_digest_date TEXT\n"                     /* local YYYY-MM-DD of the last digest */
	") STRICT;\n"
	"CREATE TABLE messages(\n"
	"  seq          INTEGER PRIMARY KEY,\n"
	"  conversation TEXT NOT NULL REFERENCES conversations(key),\n"
	"  message_id   TEXT,\n"
	"  at           INTEGER NOT NULL,\n"
	"  sender_id    TEXT NOT NULL,\n"
	"  sender_name  TEXT NOT NULL DEFAULT '',\n"
	"  text         TEXT NOT NULL,\n"
	"  mentions     TEXT NOT NULL DEFAULT '[]',\n"  /* JSON array of ids */
	"  reply_to     TEXT,\n"
	"  media        TEXT NOT NULL DEFAULT '[]',\n"  /* JSON array of media references */
	"  text_norm    TEXT NOT NULL,\n"
	"  UNIQUE (conversation, message_id)\n"
	") STRICT;\n"
	"CREATE INDEX messages_conv_at ON messages(conversation, at);\n"
	"CREATE INDEX messages_at ON messages(at);\n"
	"CREATE VIRTUAL TABLE messages_fts USING fts5(text, sender_name,\n"
	"  content='messages', content_rowid='seq', tokenize='zcor');\n"
	"CREATE TRIGGER messages_fts_ai AFTER INSERT ON messages BEGIN\n"
	"  INSERT INTO messages_fts(rowid, text, sender_name) VALUES (new.seq, new.text, new.sender_name);\n"
	"END;\n"
	"CREATE TRIGGER messages_fts_ad AFTER DELETE ON messages BEGIN\n"
	"  INSERT INTO messages_fts(messages_fts, rowid, text, sender_name)\n"
	"  VALUES ('delete', old.seq, old.text, old.sender_name);\n"
	"END;\n"
	"CREATE TABLE view_versions(\n"
	"  seq   INTEGER PRIMARY KEY,\n"
	"  path  TEXT NOT NULL,\n"
	"  at    INTEGER NOT NULL,\n"
	"  actor TEXT NOT NULL,\n"
	"  text  TEXT NOT NULL\n"
	") STRICT;\n"
	"CREATE INDEX view_versions_path ON view_versions(path, seq);\n"
	"CREATE TABLE view_unparsed(\n"
	"  seq     INTEGER PRIMARY KEY,\n"
	"  path    TEXT NOT NULL,\n"
	"  section TEXT,\n"                /* the heading it was under, if any */
	"  pos     REAL NOT NULL,\n"       /* where it sits among the entries */
	"  line    TEXT NOT NULL,\n"
	"  at      INTEGER NOT NULL\n"
	") STRICT;\n"
	"CREATE INDEX view_unparsed_path ON view_unparsed(path, pos);\n"
	"CREATE TABLE media(\n"
	"  hash      TEXT PRIMARY KEY,\n"  /* sha-256 of the bytes, hex */
	"  ext       TEXT NOT NULL,\n"
	"  bytes     INTEGER NOT NULL,\n"
	"  origin    TEXT,\n"              /* where it came from (URL or file) */
	"  first_seen INTEGER NOT NULL,\n"
	"  last_used INTEGER NOT NULL\n"
	") STRICT;\n"
	"CREATE INDEX media_lru ON media(last_used);\n",
	/* 4 -> 5: where each view entry sits in its rendered view, for the
	 * citations of recall (MEMORY.md#L23); derived, refreshed whenever
	 * a view changes through qq_memory */
	"CREATE TABLE view_lines(\n"
	"  kind TEXT NOT NULL CHECK (kind IN ('node', 'person')),\n"
	"  ref  INTEGER NOT NULL,\n"   /* nodes.seq or people.seq */
	"  path TEXT NOT NULL,\n"
	"  line INTEGER NOT NULL,\n"
	"  eff_date TEXT NOT NULL DEFAULT '',\n" /* its date, or the one above it */
	"  PRIMARY KEY (kind, ref)\n"
	") WITHOUT ROWID, STRICT;\n"
	"CREATE INDEX view_lines_path ON view_lines(path, eff_date, line);\n"
	"CREATE INDEX nodes_view ON nodes(scope, kind, tier, archive_month);\n"
	/* views whose citations (view_lines) a change made stale; the
	 * operation that made it refreshes them before it commits */
	"CREATE TABLE view_dirty(path TEXT PRIMARY KEY) WITHOUT ROWID, STRICT;\n"
	"CREATE TRIGGER view_dirty_ai AFTER INSERT ON nodes WHEN (CASE WHEN new.superseded_by IS NOT NULL THEN NULL WHEN new.kind = 'cognition' AND new.scope = 'global' THEN 'COGNITION.md' WHEN new.kind = 'sticker' AND new.scope = 'global' THEN 'STICKERS.md' WHEN new.kind = 'memory' AND new.scope <> 'global' AND new.tier = 'archive' AND new.archive_month IS NOT NULL THEN 'conversations/' || replace(new.scope, ':', '-') || '/archive/' || new.archive_month || '.md' WHEN new.kind = 'memory' AND new.scope <> 'global' AND new.tier = 'hot' AND new.section IS NOT NULL THEN 'conversations/' || replace(new.scope, ':', '-') || '/MEMORY.md' END) IS NOT NULL BEGIN\n"
	"  INSERT INTO view_dirty(path) SELECT p FROM (SELECT CASE WHEN new.superseded_by IS NOT NULL THEN NULL WHEN new.kind = 'cognition' AND new.scope = 'global' THEN 'COGNITION.md' WHEN new.kind = 'sticker' AND new.scope = 'global' THEN 'STICKERS.md' WHEN new.kind = 'memory' AND new.scope <> 'global' AND new.tier = 'archive' AND new.archive_month IS NOT NULL THEN 'conversations/' || replace(new.scope, ':', '-') || '/archive/' || new.archive_month || '.md' WHEN new.kind = 'memory' AND new.scope <> 'global' AND new.tier = 'hot' AND new.section IS NOT NULL THEN 'conversations/' || replace(new.scope, ':', '-') || '/MEMORY.md' END AS p) WHERE p IS NOT NULL AND p NOT IN (SELECT path FROM view_dirty);\n"
	"END;\n"
	"CREATE TRIGGER view_dirty_ad AFTER DELETE ON nodes WHEN (CASE WHEN old.superseded_by IS NOT NULL THEN NULL WHEN old.kind = 'cognition' AND old.scope = 'global' THEN 'COGNITION.md' WHEN old.kind = 'sticker' AND old.scope = 'global' THEN 'STICKERS.md' WHEN old.kind = 'memory' AND old.scope <> 'global' AND old.tier = 'archive' AND old.archive_month IS NOT NULL THEN 'conversations/' || replace(old.scope, ':', '-') || '/archive/' || old.archive_month || '.md' WHEN old.kind = 'memory' AND old.scope <> 'global' AND old.tier = 'hot' AND old.section IS NOT NULL THEN 'conversations/' || replace(old.scope, ':', '-') || '/MEMORY.md' END) IS NOT NULL BEGIN\n"
	"  INSERT INTO view_dirty(path) SELECT p FROM (SELECT CASE WHEN old.superseded_by IS NOT NULL THEN NULL WHEN old.kind = 'cognition' AND old.scope = 'global' THEN 'COGNITION.md' WHEN old.kind = 'sticker' AND old.scope = 'global' THEN 'STICKERS.md' WHEN old.kind = 'memory' AND old.scope <> 'global' AND old.tier = 'archive' AND old.archive_month IS NOT NULL THEN 'conversations/' || replace(old.scope, ':', '-') || '/archive/' || old.archive_month || '.md' WHEN old.kind = 'memory' AND old.scope <> 'global' AND old.tier = 'hot' AND old.section IS NOT NULL THEN 'conversations/' || replace(old.scope, ':', '-') || '/MEMORY.md' END AS p) WHERE p IS NOT NULL AND p NOT IN (SELECT path FROM view_dirty);\n"
	"END;\n"
	"CREATE TRIGGER view_dirty_au AFTER UPDATE OF title, content, keywords, section, scope, tier, kind,\n"
	"  superseded_by, archive_month, attrs, date, pinned, confidence, expires ON nodes\n"
	"  WHEN (CASE WHEN old.superseded_by IS NOT NULL THEN NULL WHEN old.kind = 'cognition' AND old.scope = 'global' THEN 'COGNITION.md' WHEN old.kind = 'sticker' AND old.scope = 'global' THEN 'STICKERS.md' WHEN old.kind = 'memory' AND old.scope <> 'global' AND old.tier = 'archive' AND old.archive_month IS NOT NULL THEN 'conversations/' || replace(old.scope, ':', '-') || '/archive/' || old.archive_month || '.md' WHEN old.kind = 'memory' AND old.scope <> 'global' AND old.tier = 'hot' AND old.section IS NOT NULL THEN 'conversations/' || replace(old.scope, ':', '-') || '/MEMORY.md' END) IS NOT NULL OR (CASE WHEN new.superseded_by IS NOT NULL THEN NULL WHEN new.kind = 'cognition' AND new.scope = 'global' THEN 'COGNITION.md' WHEN new.kind = 'sticker' AND new.scope = 'global' THEN 'STICKERS.md' WHEN new.kind = 'memory' AND new.scope <> 'global' AND new.tier = 'archive' AND new.archive_month IS NOT NULL THEN 'conversations/' || replace(new.scope, ':', '-') || '/archive/' || new.archive_month || '.md' WHEN new.kind = 'memory' AND new.scope <> 'global' AND new.tier = 'hot' AND new.section IS NOT NULL THEN 'conversations/' || replace(new.scope, ':', '-') || '/MEMORY.md' END) IS NOT NULL BEGIN\n"
	"  INSERT INTO view_dirty(path) SELECT p FROM (SELECT CASE WHEN old.superseded_by IS NOT NULL THEN NULL WHEN old.kind = 'cognition' AND old.scope = 'global' THEN 'COGNITION.md' WHEN old.kind = 'sticker' AND old.scope = 'global' THEN 'STICKERS.md' WHEN old.kind = 'memory' AND old.scope <> 'global' AND old.tier = 'archive' AND old.archive_month IS NOT NULL THEN 'conversations/' || replace(old.scope, ':', '-') || '/archive/' || old.archive_month || '.md' WHEN old.kind = 'memory' AND old.scope <> 'global' AND old.tier = 'hot' AND old.section IS NOT NULL THEN 'conversations/' || replace(old.scope, ':', '-') || '/MEMORY.md' END AS p UNION SELECT CASE WHEN new.superseded_by IS NOT NULL THEN NULL WHEN new.kind = 'cognition' AND new.scope = 'global' THEN 'COGNITION.md' WHEN new.kind = 'sticker' AND new.scope = 'global' THEN 'STICKERS.md' WHEN new.kind = 'memory' AND new.scope <> 'global' AND new.tier = 'archive' AND new.archive_month IS NOT NULL THEN 'conversations/' || replace(new.scope, ':', '-') || '/archive/' || new.archive_month || '.md' WHEN new.kind = 'memory' AND new.scope <> 'global' AND new.tier = 'hot' AND new.section IS NOT NULL THEN 'conversations/' || replace(new.scope, ':', '-') || '/MEMORY.md' END) WHERE p IS NOT NULL AND p NOT IN (SELECT path FROM view_dirty);\n"
	"END;\n"
	"CREATE TRIGGER view_dirty_ui AFTER INSERT ON view_unparsed BEGIN\n"
	"  INSERT INTO view_dirty(path) SELECT new.path WHERE new.path NOT IN (SELECT path FROM view_dirty);\n"
	"END;\n"
	"CREATE TRIGGER view_dirty_ud AFTER DELETE ON view_unparsed BEGIN\n"
	"  INSERT INTO view_dirty(path) SELECT old.path WHERE old.path NOT IN (SELECT path FROM view_dirty);\n"
	"END;\n"
	"CREATE TRIGGER view_dirty_pi AFTER INSERT ON people BEGIN\n"
	"  INSERT INTO view_dirty(path) SELECT p FROM (SELECT 'PEOPLE.md' AS p) WHERE p IS NOT NULL AND p NOT IN (SELECT path FROM view_dirty);\n"
	"END;\n"
	"CREATE TRIGGER view_dirty_pd AFTER DELETE ON people BEGIN\n"
	"  INSERT INTO view_dirty(path) SELECT p FROM (SELECT 'PEOPLE.md' AS p) WHERE p IS NOT NULL AND p NOT IN (SELECT path FROM view_dirty);\n"
	"END;\n"
	"CREATE TRIGGER view_dirty_pu AFTER UPDATE ON people BEGIN\n"
	"  INSERT INTO view_dirty(path) SELECT p FROM (SELECT 'PEOPLE.md' AS p) WHERE p IS NOT NULL AND p NOT IN (SELECT path FROM view_dirty);\n"
	"END;\n"
	"CREATE TRIGGER view_lines_node_ad AFTER DELETE ON nodes BEGIN\n"
	"  DELETE FROM view_lines WHERE kind = 'node' AND ref = old.seq;\n"
	"END;\n"
	"CREATE TRIGGER view_lines_person_ad AFTER DELETE ON people BEGIN\n"
	"  DELETE FROM view_lines WHERE kind = 'person' AND ref = old.seq;\n"
	"END;\n",
	/* 5 -> 6: what recall scores a candidate by, in one dense index: the
	 * candidates of a message are scattered over the table, and a row
	 * of the table is ten times the size of its entry here, so a fresh
	 * process reads far fewer pages (recall.c, load_items) */
	"CREATE INDEX nodes_recall ON nodes(seq, superseded_by, tier, confidence, kind, scope,\n"
	"  pinned, hits, updated_at, section, date, expires, id);\n",
	/* 6 -> 7: recall's hits are logged a batch to a row (hits.c): JSON
	 * [[at, seq, …], …], one inner array per recall. Appending 512 rows
	 * made one message in seventy wait 0.5–0.9 ms. */
	"CREATE TABLE hit_batch(id INTEGER PRIMARY KEY, hits TEXT NOT NULL);\n"
	"INSERT INTO hit_batch(hits)\n"
	"  SELECT h FROM (SELECT json_group_array(json_array(at, seq)) AS h, count(*) AS n\n"
	"  FROM hit_log) WHERE n > 0;\n"
	"DROP TABLE hit_log;\n",
	/* 7 -> 8: the no-hit fallback's newest records of one scope. Walking
	 * nodes_updated (or nodes_pinned) and testing the scope visited every
	 * record of the other conversations when this one and global had
	 * fewer than it looks for (recall.c, fallback_items). */
	"CREATE INDEX nodes_scope_recent ON nodes(scope, tier, updated_at);\n"
	"CREATE INDEX nodes_scope_pinned ON nodes(scope, tier, updated_at) WHERE pinned = 1;\n",
	/* 8 -> 9: which conversations' messages refer to each cached image,
	 * for media.c's scope rule (a conversation sees only the images of
	 * its own messages). Derived from messages.media, filled here and
	 * kept by the trigger; the log is append-only, so nothing removes
	 * a row (an evicted image's rows are harmless: media decides). */
	"CREATE TABLE media_refs(\n"
	"  hash         TEXT NOT NULL,\n"
	"  conversation TEXT NOT NULL,\n"
	"  PRIMARY KEY (hash, conversation)\n"
	") WITHOUT ROWID, STRICT;\n"
	"INSERT OR IGNORE INTO media_refs(hash, conversation)\n"
	"  SELECT substr(j.value, 7, 64), m.conversation FROM messages m, json_each(m.media) j\n"
	"  WHERE m.media <> '[]' AND json_valid(m.media) AND j.type = 'text' AND j.value LIKE 'media/%';\n"
	"CREATE TRIGGER media_refs_ai AFTER INSERT ON messages\n"
	"  WHEN new.media <> '[]' AND json_valid(new.media) BEGIN\n"
	"  INSERT OR IGNORE INTO media_refs(hash, conversation)\n"
	"  SELECT substr(value, 7, 64), new.conversation FROM json_each(new.media)\n"
	"  WHERE type = 'text' AND value LIKE 'media/%';\n"
	"END;\n",
	/* 9 -> 10 (issue 19: the write path): every index a write touches is
	 * a page or more in the WAL, so the ones no query needs go or shrink.
	 * nodes_scope: every lookup by scope has an index that begins with
	 * it (nodes_scope_recent, nodes_view). Supersede targets and parents
	 * are looked up by value only (= ?1: delete refusals, foreign keys,
	 * children of a node), never as NULL, so their indexes keep only the
	 * rows that have one: a new root memory touches neither. History
	 * snapshots are stored compactly from this version on (history.c);
	 * older records keep their form and read back the same. */
	"DROP INDEX IF EXISTS nodes_scope;\n"
	"DROP INDEX IF EXISTS nodes_superseded_by;\n"
	"CREATE INDEX nodes_superseded_by ON nodes(superseded_by) WHERE superseded_by IS NOT NULL;\n"
	"DROP INDEX IF EXISTS nodes_parent;\n"
	"CREATE INDEX nodes_parent ON nodes(parent_id) WHERE parent_id IS NOT NULL;\n"
	/* The full-text rows of new memories are written in batches
	 * (memory/node.c, zc_node_fts_catch_up): a node whose seq is above
	 * meta.fts_upto has none yet, and those who read nodes_fts catch up
	 * first. One small memory would otherwise write a new FTS5 segment,
	 * its structure record, an %_idx and a %_docsize row per commit:
	 * seven pages of the WAL. Changes and deletes of rows that are in
	 * the index go on as before. */
	"INSERT INTO nodes_fts(rowid, title, keywords, content, recall_tag)\n"
	"  SELECT seq, title, keywords, content, recall_tag FROM nodes WHERE seq > CAST(coalesce(\n"
	"  (SELECT value FROM meta WHERE key = 'fts_upto'), (SELECT max(seq) FROM nodes)) AS INTEGER);\n"
	"INSERT OR REPLACE INTO meta(key, value) SELECT 'fts_upto', coalesce(max(seq), 0) FROM nodes;\n"
	/* the newest seq ever inserted, beside fts_upto on the meta page that
	 * recall reads anyway: "anything to catch up?" costs no other page */
	"INSERT OR REPLACE INTO meta(key, value) SELECT 'nodes_top', coalesce(max(seq), 0) FROM nodes;\n"
	"DROP TRIGGER IF EXISTS nodes_top_ai;\n"
	"CREATE TRIGGER nodes_top_ai AFTER INSERT ON nodes BEGIN\n"
	"  UPDATE meta SET value = new.seq WHERE key = 'nodes_top' AND CAST(value AS INTEGER) < new.seq;\n"
	"END;\n"
	/* A record's terms are removed by their exact keys, computed from the
	 * row as it was (the title's normal form, the keywords; a person's
	 * name, id and aliases), when the fields they come from are written
	 * or the row goes: no second index of terms by record (terms_ref, a
	 * page of every write) is needed. zc_terms_set then adds the new
	 * ones. An UPDATE that does not name those fields leaves the terms. */
	"DROP INDEX IF EXISTS terms_ref;\n"
	"DROP TRIGGER IF EXISTS terms_node_ad;\n"
	"CREATE TRIGGER terms_node_ad AFTER DELETE ON nodes BEGIN\n"
	"  DELETE FROM terms WHERE kind = 'node' AND ref = old.seq AND scope = old.scope AND term IN\n"
	"    (SELECT old.title_norm UNION ALL SELECT zc_norm(value) FROM json_each(\n"
	"     CASE WHEN json_valid(old.keywords) THEN old.keywords ELSE '[]' END));\n"
	"END;\n"
	"DROP TRIGGER IF EXISTS terms_node_au;\n"
	"CREATE TRIGGER terms_node_au AFTER UPDATE OF title_norm, keywords, scope ON nodes BEGIN\n"
	"  DELETE FROM terms WHERE kind = 'node' AND ref = old.seq AND scope = old.scope AND term IN\n"
	"    (SELECT old.title_norm UNION ALL SELECT zc_norm(value) FROM json_each(\n"
	"     CASE WHEN json_valid(old.keywords) THEN old.keywords ELSE '[]' END));\n"
	"END;\n"
	"DROP TRIGGER IF EXISTS terms_person_ad;\n"
	"CREATE TRIGGER terms_person_ad AFTER DELETE ON people BEGIN\n"
	"  DELETE FROM terms WHERE kind = 'person' AND ref = old.seq AND scope = 'global' AND term IN\n"
	"    (SELECT zc_norm(old.name) UNION ALL SELECT zc_norm(old.person_id) UNION ALL\n"
	"     SELECT zc_norm(value) FROM json_each(\n"
	"     CASE WHEN json_valid(old.aliases) THEN old.aliases ELSE '[]' END));\n"
	"END;\n"
	"DROP TRIGGER IF EXISTS terms_person_au;\n"
	"CREATE TRIGGER terms_person_au AFTER UPDATE OF name, person_id, aliases ON people BEGIN\n"
	"  DELETE FROM terms WHERE kind = 'person' AND ref = old.seq AND scope = 'global' AND term IN\n"
	"    (SELECT zc_norm(old.name) UNION ALL SELECT zc_norm(old.person_id) UNION ALL\n"
	"     SELECT zc_norm(value) FROM json_each(\n"
	"     CASE WHEN json_valid(old.aliases) THEN old.aliases ELSE '[]' END));\n"
	"END;\n"
	"DROP TRIGGER nodes_fts_ai;\n"
	"CREATE TRIGGER nodes_fts_ai AFTER INSERT ON nodes\n"
	"  WHEN new.seq <= CAST((SELECT value FROM meta WHERE key = 'fts_upto') AS INTEGER) BEGIN\n"
	"  INSERT INTO nodes_fts(rowid, title, keywords, content, recall_tag)\n"
	"  VALUES (new.seq, new.title, new.keywords, new.content, new.recall_tag);\n"
	"END;\n"
	"DROP TRIGGER nodes_fts_ad;\n"
	"CREATE TRIGGER nodes_fts_ad AFTER DELETE ON nodes\n"
	"  WHEN old.seq <= CAST((SELECT value FROM meta WHERE key = 'fts_upto') AS INTEGER) BEGIN\n"
	"  INSERT INTO nodes_fts(nodes_fts, rowid, title, keywords, content, recall_tag)\n"
	"  VALUES ('delete', old.seq, old.title, old.keywords, old.content, old.recall_tag);\n"
	"END;\n"
	"DROP TRIGGER nodes_fts_au;\n"
	"CREATE TRIGGER nodes_fts_au AFTER UPDATE OF title, keywords, content, scope,\n"
	"  superseded_by, tier, kind, confidence ON nodes\n"
	"  WHEN old.seq <= CAST((SELECT value FROM meta WHERE key = 'fts_upto') AS INTEGER) BEGIN\n"
	"  INSERT INTO nodes_fts(nodes_fts, rowid, title, keywords, content, recall_tag)\n"
	"  VALUES ('delete', old.seq, old.title, old.keywords, old.content, old.recall_tag);\n"
	"  INSERT INTO nodes_fts(rowid, title, keywords, content, recall_tag)\n"
	"  VALUES (new.seq, new.title, new.keywords, new.content, new.recall_tag);\n"
	"END;\n",
	/* 10 -> 11 (issue 14: the turn). A conversation's dialogue: what the
	 * bot said and did (its replies, its tool calls and their results)
	 * and the external_event_frame of each batch as delivered, never the
	 * recall header; one OpenAI message per row, in order, grouped by
	 * turn. The turn records (one per run of the turn, whatever
	 * happened). Per conversation the turn cursor (the last message seq
	 * a turn has taken) and the lease that keeps one turn at a time
	 * across processes (docs/TURN.md). */
	"CREATE TABLE IF NOT EXISTS dialogue(\n"
	"  seq          INTEGER PRIMARY KEY,\n"
	"  conversation TEXT NOT NULL,\n"
	"  turn_id      INTEGER NOT NULL,\n"
	"  at           INTEGER NOT NULL,\n"
	"  role         TEXT NOT NULL,\n"       /* assistant | tool */
	"  message      TEXT NOT NULL,\n"       /* the OpenAI message as JSON */
	"  chars        INTEGER NOT NULL,\n"    /* its length in characters */
	"  messages     INTEGER NOT NULL DEFAULT 0\n" /* external messages a frame holds */
	") STRICT;\n"
	"CREATE INDEX IF NOT EXISTS dialogue_conv ON dialogue(conversation, seq);\n"
	"CREATE TABLE IF NOT EXISTS turns(\n"
	"  id           INTEGER PRIMARY KEY,\n"
	"  conversation TEXT NOT NULL,\n"
	"  started_at   INTEGER NOT NULL,\n"
	"  ended_at     INTEGER NOT NULL,\n"
	"  status       TEXT NOT NULL,\n"       /* ok | error */
	"  reply        TEXT,\n"
	"  error        TEXT,\n"                /* {code, message} as JSON, or NULL */
	"  record       TEXT NOT NULL\n"        /* the rest of the record as JSON */
	") STRICT;\n"
	"CREATE INDEX IF NOT EXISTS turns_conv ON turns(conversation, id);\n"
	"CREATE TABLE IF NOT EXISTS turn_state(\n"
	"  conversation TEXT PRIMARY KEY,\n"
	"  cursor       INTEGER NOT NULL DEFAULT 0,\n" /* messages.seq of the last message taken */
	"  lease_owner  TEXT,\n"
	"  lease_until  INTEGER\n"
	") WITHOUT ROWID, STRICT;\n",
	/* 11 -> 12 (issue 17: recall quality): recall's lexical index and
	 * its statistics (recall/lexical.c). recall_fts holds the records
	 * recall may inject, each token prefixed with the record's scope
	 * (tokenizer zcor_scoped), so a conversation reads the postings of
	 * global and of its own scope and nothing else; recall_stats counts
	 * those records and their tokens per scope, and recall_df how many of
	 * them hold each token. So no statistic of the ranking (document
	 * frequency, collection size, mean length) counts a record the
	 * conversation cannot see, and a common word's newest postings are
	 * newest among the visible ones. A record's rowid there is -seq: the
	 * newest come first in a doclist, so reading a common word's newest
	 * postings stops early. Like nodes_fts (schema 10), a new record's
	 * rows wait for its batch (zc_store_recall_catch_up, called by
	 * memory/op.c's zc_node_fts_catch_up): the triggers keep only the
	 * records up to meta.fts_upto in step. Derived: zcor reindex rebuilds
	 * all three. */
	/* (run again on a store that has them, it builds them anew) */
	"DROP TRIGGER IF EXISTS recall_fts_ai;\n"
	"DROP TRIGGER IF EXISTS recall_fts_ad;\n"
	"DROP TRIGGER IF EXISTS recall_fts_au;\n"
	"DROP TABLE IF EXISTS recall_fts;\n"
	"DROP TABLE IF EXISTS recall_stats;\n"
	"DROP TABLE IF EXISTS recall_df;\n"
	"CREATE VIRTUAL TABLE recall_fts USING fts5(body, content='', tokenize='zcor_scoped');\n"
	"CREATE TABLE recall_stats(\n"
	"  scope  TEXT PRIMARY KEY,\n"
	"  docs   INTEGER NOT NULL,\n"
	"  tokens INTEGER NOT NULL\n"
	") WITHOUT ROWID, STRICT;\n"
	"CREATE TABLE recall_df(\n"
	"  token TEXT NOT NULL,\n"
	"  scope TEXT NOT NULL,\n"
	"  df    INTEGER NOT NULL,\n"
	"  PRIMARY KEY (token, scope)\n"
	") WITHOUT ROWID, STRICT;\n"
	RECALL_FILL_FTS(MIGRATED) ";\n" RECALL_FILL_STATS(MIGRATED) ";\n" RECALL_FILL_DF(MIGRATED) ";\n"
	"INSERT INTO recall_fts(recall_fts) VALUES('optimize');\n"
	"CREATE TRIGGER recall_fts_ai AFTER INSERT ON nodes\n"
	"  WHEN new.seq <= " FTS_UPTO " BEGIN\n" RECALL_COME("new.") "END;\n"
	"CREATE TRIGGER recall_fts_ad AFTER DELETE ON nodes\n"
	"  WHEN old.seq <= " FTS_UPTO " BEGIN\n" RECALL_GO("old.") "END;\n"
	"CREATE TRIGGER recall_fts_au AFTER UPDATE OF title, keywords, content, scope, superseded_by,\n"
	"  tier, kind, confidence ON nodes WHEN old.seq <= " FTS_UPTO " BEGIN\n" RECALL_GO("old.")
	RECALL_COME("new.") "END;\n",
	/* 12 -> 13 (issue 15: the QQ world): a message its sender withdrew
	 * (QQ's group_recall) stays in the log with the time it was recalled
	 * (ms; NULL: never), and a conversation has a display title (a QQ
	 * group's name; NULL: none). Nothing derived reads either column. */
	"ALTER TABLE messages ADD COLUMN recalled_at INTEGER;\n"
	"ALTER TABLE conversations ADD COLUMN title TEXT;\n",
	/* 13 -> 14 (issue 14's performance goal): a generation per scope of
	 * recall's lexical index, so recall's token cache (recall/lexical.c)
	 * keeps what it read of a scope until that scope's index changes,
	 * instead of dropping everything at any write. Every change of a
	 * scope's rows in recall_fts and recall_df comes with a change of its
	 * recall_stats row (the same statements, under the same condition:
	 * RECALL_GO, RECALL_COME, RECALL_FILL_*; a rebuild deletes the rows),
	 * so these triggers give the scope a new generation from one counter,
	 * meta.recall_gen, which never goes back: a generation is never
	 * reused. Idempotent: schema 12's migration, run again on an old store,
	 * drops recall_stats and its triggers, and this one makes them anew. */
	"CREATE TABLE IF NOT EXISTS recall_gen(\n"
	"  scope TEXT PRIMARY KEY,\n"
	"  gen   INTEGER NOT NULL\n"
	") WITHOUT ROWID, STRICT;\n"
	"INSERT OR IGNORE INTO meta(key, value) VALUES('recall_gen', '0');\n"
	"CREATE TRIGGER IF NOT EXISTS recall_gen_ai AFTER INSERT ON recall_stats BEGIN\n" RECALL_GEN("new.")
	"END;\n"
	"CREATE TRIGGER IF NOT EXISTS recall_gen_au AFTER UPDATE ON recall_stats BEGIN\n" RECALL_GEN("new.")
	"END;\n"
	"CREATE TRIGGER IF NOT EXISTS recall_gen_ad AFTER DELETE ON recall_stats BEGIN\n" RECALL_GEN("old.")
	"END;\n",
	/* 14 -> 15 (issue 16: the digest agent): one record per digest run
	 * (agent/digest.c), whatever happened: the conversation digested,
	 * the lines and characters it was given (cut: older lines left out),
	 * the outcome (ok | error | timeout), the error, and the rest of the
	 * record as JSON (tool calls, tokens, requests, the answer, trigger).
	 * Its own table, not turns: a digest has no batch, cursor, lease or
	 * dialogue, and the turn records stay the bot's. */
	"CREATE TABLE IF NOT EXISTS digests(\n"
	"  id           INTEGER PRIMARY KEY,\n"
	"  conversation TEXT NOT NULL,\n"
	"  started_at   INTEGER NOT NULL,\n"
	"  ended_at     INTEGER NOT NULL,\n"
	"  status       TEXT NOT NULL,\n"       /* ok | error | timeout */
	"  lines        INTEGER NOT NULL,\n"    /* lines since the last digest at the start */
	"  sent_lines   INTEGER NOT NULL,\n"    /* of them, the lines the run was given */
	"  chars        INTEGER NOT NULL,\n"    /* the characters of those lines */
	"  cut          INTEGER NOT NULL,\n"    /* 1: older lines were left out */
	"  error        TEXT,\n"                /* {code, message} as JSON, or NULL */
	"  record       TEXT NOT NULL\n"        /* the rest as JSON */
	") STRICT;\n"
	"CREATE INDEX IF NOT EXISTS digests_conv ON digests(conversation, id);\n",
	/* 15 -> 16: a conversation's messages in log order. The turn's batch
	 * (seq > cursor, newest first), the digest's input (newest first) and
	 * the dialogue's reads go by seq within one conversation; with only
	 * (conversation, at) they read and sorted the conversation's whole
	 * log (a QQ group's grows without end). Derived: an index. */
	"CREATE INDEX IF NOT EXISTS messages_conv_seq ON messages(conversation, seq);\n",
	/* 16 -> 17 (issue 16: two processes digested one conversation at
	 * once): a conversation's leases, one per kind of run — "turn" (one
	 * turn at a time; it was turn_state's lease_owner/lease_until, moved
	 * here with any lease held now) and "digest" (one digest run at a
	 * time) — so both are one mechanism (memory/lease.c). until: ms; a
	 * lease past it is taken over (its holder died). turn_state keeps its
	 * two old columns, unused: this may run again on a store that has it
	 * (as every migration here), and a dropped column could not be read
	 * for the copy a second time. */
	"CREATE TABLE IF NOT EXISTS leases(\n"
	"  kind         TEXT NOT NULL,\n"
	"  conversation TEXT NOT NULL,\n"
	"  owner        TEXT NOT NULL,\n"
	"  until        INTEGER NOT NULL,\n"
	"  PRIMARY KEY (kind, conversation)\n"
	") WITHOUT ROWID, STRICT;\n"
	"INSERT OR IGNORE INTO leases(kind, conversation, owner, until)\n"
	"  SELECT 'turn', conversation, lease_owner, lease_until FROM turn_state\n"
	"  WHERE lease_owner IS NOT NULL AND lease_until IS NOT NULL;\n"
	"UPDATE turn_state SET lease_owner = NULL, lease_until = NULL\n"
	"  WHERE lease_owner IS NOT NULL;\n",
	/* 17 -> 18: a logged message's full-text row is written by the insert
	 * itself (zc_log_insert_message), not by a trigger. An AFTER INSERT
	 * trigger makes every INSERT INTO messages a statement with a
	 * statement journal, and FTS5 flushes its pending terms at each such
	 * statement's savepoint: 65 % of logging's instructions (callgrind,
	 * zcor-bench qq; docs/PERFORMANCE.md "The QQ world"). The rows
	 * already indexed stay as they are; the delete trigger stays. */
	"DROP TRIGGER IF EXISTS messages_fts_ai;\n",
	/* 18 -> 19 (issue 19: bytes and pages per memory): nodes rebuilt
	 * first (rebuild_nodes, below), then: nodes_kind keeps only the
	 * records that are not plain memories (documents, slang, stickers:
	 * what every query by kind looks for), so a new memory does not
	 * enter it; those queries say `kind <> 'memory'` as well, which is
	 * how SQLite knows the partial index covers them. */
	"DROP INDEX IF EXISTS nodes_kind;\n"
	"CREATE INDEX nodes_kind ON nodes(kind) WHERE kind <> 'memory';\n",
	/* 19 -> 20 (issue 16: a transcript import after new lines made the
	 * digest read the imported old lines, newest by seq, instead of the
	 * new ones, and mark the new ones digested): a message logged by
	 * `zcor transcript import` is marked; the digest's input and the
	 * turn's batch are the conversation's live messages only. The column
	 * is added by add_column (below), so the step may run again. */
	"",
	/* 20 -> 21 (issue 19: pages per write): history_at goes. No query
	 * reads it: zcor_memory_history's time filter is `(?2 IS NULL OR at
	 * >= ?2)`, which SQLite cannot answer from an index (EXPLAIN QUERY
	 * PLAN: SCAN history, for every statement the tests prepare), and
	 * nothing else asks history by time; it was a page of every write's
	 * WAL and 17 bytes per record. nodes_view keeps only the records a
	 * view can list: none is a plain memory of global (the views of
	 * global are INDEX.md, COGNITION.md and STICKERS.md; a conversation's
	 * MEMORY.md and archive hold its own memories), so the typical new
	 * memory does not enter it. Its queries say the same condition, which
	 * is how SQLite knows the partial index covers them. */
	"DROP INDEX IF EXISTS history_at;\n"
	"DROP INDEX IF EXISTS nodes_view;\n"
	"CREATE INDEX nodes_view ON nodes(scope, kind, tier, archive_month)\n"
	"  WHERE kind <> 'memory' OR scope <> 'global';\n",
	/* 21 -> 22 (issue 19: pages per write): no row of meta is written by
	 * a plain write any more, which was a page of every write's WAL (its
	 * three counters share one page). nodes_gen goes: nothing reads it
	 * since recall's cache follows recall_gen (schema 14). nodes_top
	 * goes: "anything to catch up?" is max(seq) > fts_upto, the newest
	 * end of nodes, which a write has just written anyway. next_node
	 * stays as a floor: a new generated id's counter is one more than
	 * both the newest seq and this floor, and the node takes that counter
	 * as its seq (memory/node.c, zc_node_new_id), so a record's counter
	 * is its seq; a delete raises the floor to the seq it removes, so no
	 * id (and no seq) is ever given twice. */
	"DROP TRIGGER IF EXISTS nodes_gen_ai;\n"
	"DROP TRIGGER IF EXISTS nodes_gen_ad;\n"
	"DROP TRIGGER IF EXISTS nodes_gen_au;\n"
	"DROP TRIGGER IF EXISTS nodes_top_ai;\n"
	"DELETE FROM meta WHERE key IN ('nodes_gen', 'nodes_top');\n"
	"INSERT OR IGNORE INTO meta(key, value) VALUES('next_node', '0');\n"
	/* the terms of new nodes wait for batches of their own (op.c): up to
	 * terms_upto every node has them, which is where fts_upto is now */
	"INSERT OR REPLACE INTO meta(key, value) SELECT 'terms_upto', value FROM meta\n"
	"  WHERE key = 'fts_upto';\n"
	"DROP INDEX IF EXISTS nodes_recall;\n"
	"DROP TRIGGER IF EXISTS nodes_floor_ad;\n"
	"CREATE TRIGGER nodes_floor_ad AFTER DELETE ON nodes\n"
	"  WHEN old.seq > CAST((SELECT value FROM meta WHERE key = 'next_node') AS INTEGER) BEGIN\n"
	"  UPDATE meta SET value = old.seq WHERE key = 'next_node';\n"
	"END;\n",
	/* 22 -> 23 (issue 19: pages per write): FTS5 merges a level of both
	 * full-text indexes when 8 segments wait there, not 4 (its settings
	 * live in each index's _config table; 'rebuild' and 'delete-all'
	 * keep them). Each record's postings are rewritten at fewer levels:
	 * at 100,000 memories written one at a time nodes_fts's frames per
	 * write fall 0.98 -> 0.24, and readers pay no more (the catch-up's
	 * 'merge' still folds any level of usermerge, 4, segments; the
	 * segments at 100,000: 13 -> 15 in nodes_fts, 12 -> 10 in
	 * recall_fts; docs/PERFORMANCE.md, seventh pass). */
	"INSERT INTO nodes_fts(nodes_fts, rank) VALUES('automerge', 8);\n"
	"INSERT INTO recall_fts(recall_fts, rank) VALUES('automerge', 8);\n",
};

/* The schema whose migration adds messages.imported (add_column). */
#define SCHEMA_MESSAGES_IMPORTED 20

/* ALTER TABLE table ADD COLUMN column decl, unless it is there already
 * (a migration run again on a store that has it). Our own names only. */
static int add_column(struct zc_store *s, const char *table, const char *column, const char *decl,
		      struct zc_err *e)
{
	char sql[256];
	sqlite3_stmt *st = NULL;
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM pragma_table_info('%s') WHERE name = '%s'",
		 table, column);
	int r = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
	int have = r == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;
	sqlite3_finalize(st);
	if (have < 0)
		return zc_store_fail(s, r ? r : SQLITE_ERROR, e, "upgrading memory.db");
	if (have)
		return ZCOR_OK;
	snprintf(sql, sizeof(sql), "ALTER TABLE %s ADD COLUMN %s %s", table, column, decl);
	r = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
	return r ? zc_store_fail(s, r, e, "upgrading memory.db") : ZCOR_OK;
}

/* The schema whose migration rebuilds nodes (rebuild_nodes). */
#define SCHEMA_NODES_REBUILT 19

/*
 * Schema 19 rebuilds nodes (SQLite's twelve steps: a new table, the rows
 * copied, the old one dropped, the new one renamed, its indexes and
 * triggers made again from their own text), for two things no ALTER can
 * do in place:
 *   - content_norm goes: a normalised copy of every content (a third of a
 *     node row) that only zcor_memory_query's keyword test read, which
 *     now normalises the content of the few records it tests
 *     (memory/node_query.c); the full-text index narrows them first;
 *   - important_seq loses its UNIQUE constraint for a partial unique
 *     index (nodes_important): the constraint's index held a NULL entry
 *     for every memory that is not important, a page of every write.
 * Run with foreign keys off (migrate), as the procedure requires: the
 * rows are copied unchanged, so no reference can break. Run again on a
 * rebuilt store, it rebuilds it the same way.
 */
static const char NODES_V18[] =
	"CREATE TABLE nodes_v18(\n"
	"  seq            INTEGER PRIMARY KEY,\n"
	"  id             TEXT NOT NULL UNIQUE,\n"
	"  title          TEXT NOT NULL,\n"
	"  content        TEXT NOT NULL,\n"
	"  keywords       TEXT NOT NULL DEFAULT '[]',\n"
	"  parent_id      TEXT REFERENCES nodes(id),\n"
	"  source_message TEXT,\n"
	"  important_seq  INTEGER,\n" /* unique where set: nodes_important */
	"  superseded_by  TEXT REFERENCES nodes(id),\n"
	"  superseded_reason TEXT,\n"
	"  merged_from    TEXT,\n"
	"  merged_reason  TEXT,\n"
	"  scope          TEXT NOT NULL DEFAULT 'global',\n"
	"  kind           TEXT NOT NULL DEFAULT 'memory',\n"
	"  section        TEXT,\n"
	"  pinned         INTEGER NOT NULL DEFAULT 0,\n"
	"  date           TEXT,\n"
	"  expires        TEXT,\n"
	"  confidence     TEXT,\n"
	"  tier           TEXT NOT NULL DEFAULT 'hot',\n"
	"  archive_month  TEXT,\n"
	"  attrs          TEXT NOT NULL DEFAULT '{}',\n"
	"  created_at     INTEGER NOT NULL,\n"
	"  updated_at     INTEGER NOT NULL,\n"
	"  hits           INTEGER NOT NULL DEFAULT 0,\n"
	"  last_hit_at    INTEGER,\n"
	"  title_norm     TEXT NOT NULL,\n" /* NFKC + case fold: terms, title search */
	"  recall_tag     TEXT GENERATED ALWAYS AS ('s' || hex(scope) || ' ' ||\n"
	"    CASE WHEN superseded_by IS NULL AND tier = 'hot' AND kind <> 'document'\n"
	"      AND coalesce(confidence, '') <> '存疑' THEN 'zlive' ELSE 'zdead' END) VIRTUAL\n"
	") STRICT;\n"
	"INSERT INTO nodes_v18(seq, id, title, content, keywords, parent_id, source_message,\n"
	"  important_seq, superseded_by, superseded_reason, merged_from, merged_reason, scope, kind,\n"
	"  section, pinned, date, expires, confidence, tier, archive_month, attrs, created_at,\n"
	"  updated_at, hits, last_hit_at, title_norm)\n"
	"  SELECT seq, id, title, content, keywords, parent_id, source_message, important_seq,\n"
	"  superseded_by, superseded_reason, merged_from, merged_reason, scope, kind, section, pinned,\n"
	"  date, expires, confidence, tier, archive_month, attrs, created_at, updated_at, hits,\n"
	"  last_hit_at, title_norm FROM nodes ORDER BY seq;\n"
	"DROP TABLE nodes;\n"
	"ALTER TABLE nodes_v18 RENAME TO nodes;\n";

static int rebuild_nodes(struct zc_store *s, struct zc_err *e)
{
	enum { MAX_OBJECTS = 64 };
	char *again[MAX_OBJECTS];
	int n = 0, rc = ZCOR_OK, r;
	sqlite3_stmt *st = NULL;
	/* the indexes and triggers of nodes, made again after the rename
	 * from their own text (the constraint's own indexes have none) */
	r = sqlite3_prepare_v2(s->db,
			       "SELECT sql FROM sqlite_schema WHERE tbl_name = 'nodes' AND type IN "
			       "('index', 'trigger') AND sql IS NOT NULL ORDER BY type, rowid",
			       -1, &st, NULL);
	while (r == SQLITE_OK && n < MAX_OBJECTS && sqlite3_step(st) == SQLITE_ROW)
		again[n++] = zc_strdup((const char *)sqlite3_column_text(st, 0));
	if (r == SQLITE_OK)
		r = n < MAX_OBJECTS ? sqlite3_reset(st) : SQLITE_FULL; /* (the step's error, if any) */
	sqlite3_finalize(st);
	if (r != SQLITE_OK)
		rc = r == SQLITE_FULL ? zc_fail(e, ZCOR_EINTERNAL, "upgrading memory.db: nodes has more "
								   "than %d indexes and triggers", MAX_OBJECTS)
				      : zc_store_fail(s, r, e, "upgrading memory.db");
	if (!rc && (r = sqlite3_exec(s->db, NODES_V18, NULL, NULL, NULL)) != SQLITE_OK)
		rc = zc_store_fail(s, r, e, "upgrading memory.db (rebuilding nodes)");
	for (int i = 0; i < n; i++) {
		if (!rc && (r = sqlite3_exec(s->db, again[i], NULL, NULL, NULL)) != SQLITE_OK)
			rc = zc_store_fail(s, r, e, "upgrading memory.db (the indexes of nodes)");
		zc_free(again[i]);
	}
	if (!rc && (r = sqlite3_exec(s->db,
				     "CREATE UNIQUE INDEX IF NOT EXISTS nodes_important ON nodes(important_seq)\n"
				     "  WHERE important_seq IS NOT NULL",
				     NULL, NULL, NULL)) != SQLITE_OK)
		rc = zc_store_fail(s, r, e, "upgrading memory.db");
	return rc;
}

/*
 * Reads a file SQLite has open through SQLite's own handle (xRead, a
 * pread on its descriptor), never through a descriptor of our own: POSIX
 * advisory locks belong to the process, and closing any descriptor of a
 * file drops every lock the process holds on it — SQLite's included
 * (sqlite.org/howtocorrupt.html, 2.2). An open()/close() of memory.db
 * here did exactly that at serve's warm-up: the next CLI process to close
 * its connection then took the EXCLUSIVE lock that serve's connections no
 * longer held, believed it was the last connection, checkpointed and
 * deleted the -wal and -shm that serve went on using; serve's writes went
 * to a deleted WAL and new connections met "disk I/O error" and
 * "database disk image is malformed" (issue 12, defect 13).
 */
/*
 * recall_stats and recall_df of a batch of new records, each text
 * tokenised once for both (RECALL_FILL_STATS and RECALL_FILL_DF, the
 * migration's form, tokenise it twice, build a JSON array of its distinct
 * tokens, parse it back and sort every (token, scope) pair in SQL: 45 % of
 * a batch's instructions, callgrind). The same counts: zc_lex_len's
 * length and zc_lex_set's distinct tokens, from the same zc_lex_tokens
 * over the same normalised text (tests/unit/test_write.c compares them
 * with the SQL functions').
 */
struct lex_pair {
	unsigned long long hash;
	const char *tokp, *scopep; /* set for the sort, when the arena no longer moves */
	size_t tok;           /* offset of the token in lex_batch.arena */
	unsigned tok_len;     /* <= ZC_LEX_TOKEN_MAX */
	unsigned scope;       /* index in lex_batch.scopes */
	long long last_doc;   /* the last record counted, so a record counts once */
	long long df;         /* records of the batch that hold it */
};

struct lex_scope {
	char *name;
	long long docs, tokens;
};

struct lex_batch {
	struct lex_pair *pairs; /* open addressing; hash 0 marks a free slot */
	size_t cap, n;
	struct zc_buf arena;    /* the tokens, one after another */
	struct lex_scope *scopes;
	size_t nscopes, scopes_cap;
	unsigned cur_scope;     /* of the record being tokenised */
	long long doc, doc_tokens;
};

/* Pairs held before they are written out (a rebuild of a large store
 * goes in several rounds; the counts add up the same). */
#define LEX_PAIRS_MAX (1u << 18)
/* The table's first size: a catch-up of one turn's record holds ~50
 * pairs, and 4,096 slots (229 KB, zeroed at the start and again at the
 * write) were a fifth of that catch-up's instructions (issue 14) */
#define LEX_PAIRS_FIRST 128

static unsigned long long lex_hash(const char *t, size_t n, unsigned scope)
{
	unsigned long long h = 1469598103934665603ULL ^ scope;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)t[i]) * 1099511628211ULL;
	return h ? h : 1;
}

static void lex_grow(struct lex_batch *b)
{
	struct lex_pair *old = b->pairs;
	size_t ocap = b->cap;
	b->cap = ocap ? ocap * 2 : LEX_PAIRS_FIRST;
	b->pairs = zc_calloc(b->cap, sizeof(*b->pairs));
	for (size_t i = 0; i < ocap; i++) {
		if (!old[i].hash)
			continue;
		size_t j = (size_t)old[i].hash & (b->cap - 1);
		while (b->pairs[j].hash)
			j = (j + 1) & (b->cap - 1);
		b->pairs[j] = old[i];
	}
	zc_free(old);
}

static int lex_count(void *ud, const char *tok, size_t len, size_t start, size_t end, int flags)
{
	struct lex_batch *b = ud;
	b->doc_tokens++;
	if ((b->n + 1) * 2 > b->cap)
		lex_grow(b);
	unsigned long long h = lex_hash(tok, len, b->cur_scope);
	size_t i = (size_t)h & (b->cap - 1);
	for (;; i = (i + 1) & (b->cap - 1)) {
		struct lex_pair *p = &b->pairs[i];
		if (!p->hash) {
			*p = (struct lex_pair){h, NULL, NULL, b->arena.len, (unsigned)len, b->cur_scope, b->doc, 1};
			zc_buf_add(&b->arena, tok, len);
			b->n++;
			return 0;
		}
		if (p->hash == h && p->scope == b->cur_scope && p->tok_len == len &&
		    memcmp(b->arena.p + p->tok, tok, len) == 0) {
			if (p->last_doc != b->doc) {
				p->last_doc = b->doc;
				p->df++;
			}
			return 0;
		}
	}
}

static unsigned lex_scope_of(struct lex_batch *b, const char *scope)
{
	if (b->nscopes && strcmp(b->scopes[b->cur_scope].name, scope) == 0)
		return b->cur_scope;
	for (size_t i = 0; i < b->nscopes; i++)
		if (strcmp(b->scopes[i].name, scope) == 0)
			return (unsigned)i;
	if (b->nscopes == b->scopes_cap) {
		b->scopes_cap = b->scopes_cap ? b->scopes_cap * 2 : 8;
		b->scopes = zc_realloc(b->scopes, b->scopes_cap * sizeof(*b->scopes));
	}
	b->scopes[b->nscopes] = (struct lex_scope){zc_strdup(scope), 0, 0};
	return (unsigned)b->nscopes++;
}

/* (token, scope), as the b-tree of recall_df orders them: BINARY */
static int lex_cmp(const void *x, const void *y)
{
	const struct lex_pair *a = x, *b = y;
	size_t n = a->tok_len < b->tok_len ? a->tok_len : b->tok_len;
	int c = memcmp(a->tokp, b->tokp, n);
	if (c || a->tok_len != b->tok_len)
		return c ? c : a->tok_len < b->tok_len ? -1 : 1;
	return strcmp(a->scopep, b->scopep);
}

/* recall_df += the batch's pairs, in the table's order; empties them */
static int lex_write_df(struct zc_store *s, struct lex_batch *b, struct zc_err *e)
{
	if (!b->n)
		return ZCOR_OK; /* (nothing live in the batch: no table yet) */
	size_t n = 0;
	for (size_t i = 0; i < b->cap; i++)
		if (b->pairs[i].hash) {
			struct lex_pair p = b->pairs[i];
			p.tokp = b->arena.p + p.tok;
			p.scopep = b->scopes[p.scope].name;
			b->pairs[n++] = p;
		}
	qsort(b->pairs, n, sizeof(*b->pairs), lex_cmp);
	int rc = ZCOR_OK;
	sqlite3_stmt *st = zc_stmt(s,
				   "INSERT INTO recall_df(token, scope, df) VALUES (?1, ?2, ?3)\n"
				   "  ON CONFLICT(token, scope) DO UPDATE SET df = df + excluded.df",
				   e);
	if (!st)
		rc = e->code;
	for (size_t i = 0; !rc && i < n; i++) {
		const struct lex_pair *p = &b->pairs[i];
		sqlite3_bind_text(st, 1, p->tokp, (int)p->tok_len, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, p->scopep, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, p->df);
		int r = sqlite3_step(st);
		sqlite3_reset(st);
		if (r != SQLITE_DONE)
			rc = zc_store_fail(s, r, e, "writing recall's lexical index");
	}
	memset(b->pairs, 0, b->cap * sizeof(*b->pairs));
	b->n = 0;
	zc_buf_reset(&b->arena);
	return rc;
}

/* recall_stats += the batch's records and tokens per scope, in scope order */
static int lex_write_stats(struct zc_store *s, struct lex_batch *b, struct zc_err *e)
{
	sqlite3_stmt *st = zc_stmt(s,
				   "INSERT INTO recall_stats(scope, docs, tokens) VALUES (?1, ?2, ?3)\n"
				   "  ON CONFLICT(scope) DO UPDATE SET docs = docs + excluded.docs,\n"
				   "  tokens = tokens + excluded.tokens",
				   e);
	if (!st)
		return e->code;
	char *done = zc_calloc(b->nscopes ? b->nscopes : 1, 1);
	int rc = ZCOR_OK;
	for (size_t k = 0; !rc && k < b->nscopes; k++) {
		size_t m = b->nscopes; /* the least scope not written yet: few scopes */
		for (size_t i = 0; i < b->nscopes; i++)
			if (!done[i] && (m == b->nscopes || strcmp(b->scopes[i].name, b->scopes[m].name) < 0))
				m = i;
		done[m] = 1;
		sqlite3_bind_text(st, 1, b->scopes[m].name, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, b->scopes[m].docs);
		sqlite3_bind_int64(st, 3, b->scopes[m].tokens);
		int r = sqlite3_step(st);
		sqlite3_reset(st);
		if (r != SQLITE_DONE)
			rc = zc_store_fail(s, r, e, "writing recall's lexical index");
	}
	zc_free(done);
	return rc;
}

static int lex_fill_counts(struct zc_store *s, long long above, struct zc_err *e)
{
	struct lex_batch b = {0};
	int rc = ZCOR_OK, r;
	sqlite3_stmt *st = zc_stmt(s,
				   "SELECT n.scope, " RECALL_TEXT("n.") " FROM nodes n WHERE n.seq > ?1 AND "
				   RECALL_LIVE("n.") " ORDER BY n.seq",
				   e);
	if (!st)
		return e->code;
	sqlite3_bind_int64(st, 1, above);
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		const char *scope = (const char *)sqlite3_column_text(st, 0);
		const char *text = (const char *)sqlite3_column_text(st, 1);
		if (!scope || !text)
			continue; /* (NOT NULL columns) */
		b.cur_scope = lex_scope_of(&b, scope);
		b.doc++;
		b.doc_tokens = 0;
		char *norm = zc_norm_n(text, (size_t)sqlite3_column_bytes(st, 1));
		zc_lex_tokens(norm, strlen(norm), ZC_TOKENS_DOCUMENT, lex_count, &b);
		zc_free(norm);
		b.scopes[b.cur_scope].docs++;
		b.scopes[b.cur_scope].tokens += b.doc_tokens;
		if (b.n >= LEX_PAIRS_MAX && (rc = lex_write_df(s, &b, e)))
			break;
	}
	sqlite3_reset(st);
	if (!rc && r != SQLITE_DONE)
		rc = zc_store_fail(s, r, e, "writing recall's lexical index");
	if (!rc)
		rc = lex_write_df(s, &b, e);
	if (!rc)
		rc = lex_write_stats(s, &b, e);
	for (size_t i = 0; i < b.nscopes; i++)
		zc_free(b.scopes[i].name);
	zc_free(b.scopes);
	zc_free(b.pairs);
	zc_buf_release(&b.arena);
	return rc;
}

int zc_store_recall_catch_up(struct zc_store *s, long long above, struct zc_err *e)
{
	sqlite3_stmt *st = zc_stmt(s, RECALL_FILL_FTS("n.seq > ?1"), e);
	if (!st)
		return e->code;
	sqlite3_bind_int64(st, 1, above);
	int r = sqlite3_step(st);
	sqlite3_reset(st);
	if (r != SQLITE_DONE)
		return zc_store_fail(s, r, e, "writing recall's lexical index");
	return lex_fill_counts(s, above, e);
}

/* the dictionary terms of the nodes where B holds (memory/node.c's rule,
 * zc_node_index_terms: the normalised title and keywords of a record
 * recall may inject), of 1..ZC_TERM_MAX_CHARS characters */
#define ZC_STR_(x) #x
#define ZC_STR(x) ZC_STR_(x)
#define NODE_TERMS(B)                                                                           \
	"SELECT t.term, t.scope, t.seq FROM (SELECT n.title_norm AS term, n.scope, n.seq FROM nodes n\n" \
	"  WHERE " B " AND " RECALL_LIVE("n.") " UNION ALL SELECT zc_norm(j.value), n.scope, n.seq\n"  \
	"  FROM nodes n, json_each(CASE WHEN json_valid(n.keywords) THEN n.keywords ELSE '[]' END) j\n" \
	"  WHERE " B " AND " RECALL_LIVE("n.") " AND j.type = 'text') t\n"                            \
	"  WHERE length(t.term) BETWEEN 1 AND " ZC_STR(ZC_TERM_MAX_CHARS)

int zc_store_node_terms(struct zc_store *s, long long above, long long upto, struct zc_err *e)
{
	static const char *const fill[] = {
		"INSERT OR IGNORE INTO terms(term, scope, kind, ref) SELECT term, scope, 'node', seq FROM (\n"
		NODE_TERMS("n.seq > ?1 AND n.seq <= ?2") ")",
		"INSERT INTO term_prefix(prefix, maxlen) SELECT substr(term, 1, 2), max(length(term)) FROM (\n"
		NODE_TERMS("n.seq > ?1 AND n.seq <= ?2") ") WHERE true GROUP BY 1\n"
		"  ON CONFLICT(prefix) DO UPDATE SET maxlen = max(maxlen, excluded.maxlen)"};
	for (size_t i = 0; i < sizeof(fill) / sizeof(fill[0]); i++) {
		sqlite3_stmt *st = zc_stmt(s, fill[i], e);
		if (!st)
			return e->code;
		sqlite3_bind_int64(st, 1, above);
		sqlite3_bind_int64(st, 2, upto);
		int r = sqlite3_step(st);
		sqlite3_reset(st);
		if (r != SQLITE_DONE)
			return zc_store_fail(s, r, e, "updating the term index");
	}
	return ZCOR_OK;
}

int zc_store_rebuild_recall(struct zc_store *s, struct zc_err *e)
{
	static const char *const clear[] = {
		"INSERT INTO recall_fts(recall_fts) VALUES('delete-all')",
		"DELETE FROM recall_stats",
		"DELETE FROM recall_df",
	};
	int rc = ZCOR_OK;
	for (size_t i = 0; !rc && i < sizeof(clear) / sizeof(clear[0]); i++) {
		int r = sqlite3_exec(s->db, clear[i], NULL, NULL, NULL);
		if (r != SQLITE_OK)
			rc = zc_store_fail(s, r, e, "rebuilding recall's lexical index");
	}
	if (!rc)
		rc = zc_store_recall_catch_up(s, -1, e);
	if (!rc) {
		int r = sqlite3_exec(s->db, "INSERT INTO recall_fts(recall_fts) VALUES('optimize')", NULL,
				     NULL, NULL);
		if (r != SQLITE_OK)
			rc = zc_store_fail(s, r, e, "merging recall's lexical index");
	}
	return rc;
}

static void prefetch_file(sqlite3_file *f, unsigned long long max)
{
	sqlite3_int64 size = 0;
	if (!f || !f->pMethods || f->pMethods->xFileSize(f, &size) != SQLITE_OK || size <= 0)
		return;
	if ((unsigned long long)size < max)
		max = (unsigned long long)size;
	/* one read after another, not posix_fadvise(WILLNEED): that returns
	 * at once and its reads then compete with recall's own for the disk
	 * (measured: p99 2.1 ms at 1M instead of 1.0) */
	int cap = 1 << 20;
	char *buf = zc_malloc((size_t)cap);
	for (unsigned long long done = 0; done < max; done += (unsigned long long)cap)
		if (f->pMethods->xRead(f, buf, cap, (sqlite3_int64)done) != SQLITE_OK)
			break; /* the end (a short read) or a failure: best effort */
	zc_free(buf);
}

void zc_store_prefetch(struct zc_store *s, unsigned long long max)
{
	sqlite3_file *db = NULL, *wal = NULL;
	if (sqlite3_file_control(s->db, "main", SQLITE_FCNTL_FILE_POINTER, &db) == SQLITE_OK)
		prefetch_file(db, max);
	/* in WAL mode the journal pointer is the -wal file, open while the
	 * connection has read it */
	if (sqlite3_file_control(s->db, "main", SQLITE_FCNTL_JOURNAL_POINTER, &wal) == SQLITE_OK)
		prefetch_file(wal, max);
}

size_t zc_store_cache_bytes(struct zc_store *s)
{
	int used = 0, hi = 0;
	sqlite3_db_status(s->db, SQLITE_DBSTATUS_CACHE_USED, &used, &hi, 0);
	return (size_t)used;
}

int zc_store_warm(struct zc_store *s, const char *sql, size_t budget, long *pages, struct zc_err *e)
{
	if (zc_store_cache_bytes(s) >= budget)
		return ZCOR_OK;
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
	if (rc)
		return zc_store_fail(s, rc, e, "reading the store into memory");
	int miss0 = 0, miss1 = 0, hi = 0;
	sqlite3_db_status(s->db, SQLITE_DBSTATUS_CACHE_MISS, &miss0, &hi, 0);
	long rows = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if (++rows % 64 == 0 && zc_store_cache_bytes(s) >= budget) {
			rc = SQLITE_DONE;
			break;
		}
	sqlite3_db_status(s->db, SQLITE_DBSTATUS_CACHE_MISS, &miss1, &hi, 0);
	*pages += miss1 - miss0;
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? ZCOR_OK : zc_store_fail(s, rc, e, "reading the store into memory");
}

int zc_store_fail(struct zc_store *s, int rc, struct zc_err *e, const char *what)
{
	const char *msg = s && s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc);
	/* SQLite says "disk I/O error" for a full disk; the OS error is exact */
	int sys = s && s->db ? sqlite3_system_errno(s->db) : 0;
	if ((rc & 0xff) == SQLITE_IOERR && (sys == ENOSPC || sys == EFBIG || sys == EDQUOT))
		rc = SQLITE_FULL;
	if ((rc & 0xff) == SQLITE_IOERR && (sys == EROFS || sys == EACCES || sys == EPERM))
		rc = SQLITE_READONLY;
	switch (rc & 0xff) {
	case SQLITE_FULL:
		return zc_fail(e, ZCOR_EFULL, "%s: the disk is full (%s); free space and try again", what,
			       msg);
	case SQLITE_READONLY:
	case SQLITE_PERM:
	case SQLITE_AUTH:
		return zc_fail(e, ZCOR_EREADONLY,
			       "%s: the memory directory cannot be written (%s); check its permissions",
			       what, msg);
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return zc_fail(e, ZCOR_EBUSY, "%s: another process kept memory.db busy (%s); try again",
			       what, msg);
	case SQLITE_IOERR:
	case SQLITE_CANTOPEN:
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		if (rc == SQLITE_IOERR_WRITE || rc == SQLITE_IOERR_FSYNC)
			return zc_fail(e, ZCOR_EIO, "%s: cannot write memory.db (%s)", what, msg);
		return zc_fail(e, ZCOR_EIO, "%s: memory.db failed (%s)", what, msg);
	case SQLITE_NOMEM:
		return zc_fail(e, ZCOR_EINTERNAL, "%s: out of memory", what);
	default:
		return zc_fail(e, ZCOR_EINTERNAL, "%s: %s", what, msg);
	}
}

static int migrate(struct zc_store *s, struct zc_err *e)
{
	int nmig = (int)(sizeof(migrations) / sizeof(migrations[0]));
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL);
	if (rc)
		return zc_store_fail(s, rc, e, "reading the schema version");
	int version = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
	sqlite3_finalize(st);
	if (version > nmig)
		return zc_fail(e, ZCOR_EINVAL,
			       "memory.db has schema version %d, newer than this zcor knows (%d); "
			       "upgrade zcor",
			       version, nmig);
	if (version == nmig)
		return ZCOR_OK;
	/* off for the rebuild of a table others refer to (SQLite's twelve
	 * steps); it cannot change inside a transaction */
	sqlite3_exec(s->db, "PRAGMA foreign_keys = OFF", NULL, NULL, NULL);
	rc = zc_store_begin(s, 1, e);
	if (rc) {
		sqlite3_exec(s->db, "PRAGMA foreign_keys = ON", NULL, NULL, NULL);
		return rc;
	}
	/* re-read under the write lock: another process may have migrated */
	rc = sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL);
	version = rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
	sqlite3_finalize(st);
	for (int v = version; !rc && v < nmig; v++) {
		if (v + 1 == SCHEMA_NODES_REBUILT && (rc = rebuild_nodes(s, e)))
			break;
		if (v + 1 == SCHEMA_MESSAGES_IMPORTED &&
		    (rc = add_column(s, "messages", "imported", "INTEGER NOT NULL DEFAULT 0", e)))
			break;
		rc = sqlite3_exec(s->db, migrations[v], NULL, NULL, NULL);
		if (rc)
			rc = zc_store_fail(s, rc, e, "upgrading memory.db");
	}
	char sql[64];
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", nmig);
	if (!rc && (rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL)))
		rc = zc_store_fail(s, rc, e, "upgrading memory.db");
	if (rc)
		zc_store_rollback(s);
	else
		rc = zc_store_commit(s, e);
	sqlite3_exec(s->db, "PRAGMA foreign_keys = ON", NULL, NULL, NULL);
	return rc;
}

int zc_store_schema_version(void)
{
	return (int)(sizeof(migrations) / sizeof(migrations[0]));
}

long zc_store_read_header(const char *path, unsigned char *h, size_t n)
{
	sqlite3 *db = NULL;
	sqlite3_file *f = NULL;
	sqlite3_int64 size = 0;
	long got = -1;
	memset(h, 0, n);
	/* SQLITE_OPEN_NOFOLLOW refuses a link anywhere in the name, but the
	 * memory directory itself may be one (the operator chose it): the
	 * directory part is resolved, the file itself is still not followed */
	char *real = NULL;
	const char *slash = strrchr(path, '/');
	if (slash && slash != path && (size_t)(slash - path) < PATH_MAX) {
		char dir[PATH_MAX];
		memcpy(dir, path, (size_t)(slash - path));
		dir[slash - path] = '\0';
		char *r = realpath(dir, NULL);
		if (r)
			real = zc_path_join(r, slash + 1);
		free(r);
	}
	const char *open_as = real ? real : path;
	/* read-only and without creating: opening reads nothing yet, so a
	 * file that is not a database is fine here */
	if (sqlite3_open_v2(open_as, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX,
			    NULL) == SQLITE_OK &&
	    sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &f) == SQLITE_OK && f &&
	    f->pMethods && f->pMethods->xFileSize(f, &size) == SQLITE_OK) {
		int want = size < (sqlite3_int64)n ? (int)size : (int)n;
		int rc = want > 0 ? f->pMethods->xRead(f, h, want, 0) : SQLITE_OK;
		if (rc == SQLITE_OK)
			got = want;
	}
	sqlite3_close(db);
	zc_free(real);
	return got;
}

/*
 * Waiting for another connection's lock. SQLite's own handler
 * (sqlite3_busy_timeout) sleeps 1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50
 * and then 100 ms between tries, so a turn that finds the QQ world's
 * logging commit (a few ms) holding the write lock waits tens of ms for
 * it. Short sleeps keep the wait near the holder's own time: 0.2 ms for
 * the first 20 tries, then 1 ms, then 5 ms after a second, until busy_ms.
 */
static int busy_wait(void *ud, int n)
{
	struct zc_store *s = ud;
	double now = zc_time_mono_ms();
	if (n == 0)
		s->busy_since = now;
	double waited = now - s->busy_since;
	if (waited >= s->busy_ms)
		return 0;
	long ns = n < 20 ? 200000L : waited < 1000 ? 1000000L : 5000000L;
	nanosleep(&(struct timespec){.tv_nsec = ns}, NULL);
	return 1;
}

/* ---- group commit (zc_store_commit) ------------------------------------ */

/* The process's connections to one database file: the durable commits'
 * tickets, handed out after a commit returned, and the highest ticket a
 * finished fsync covers. */
struct zc_sync_group {
	struct zc_sync_group *next;
	char path[PATH_MAX];
	int refs;
	unsigned long long committed, synced;
	int syncing;
	pthread_cond_t cv;
};

static pthread_mutex_t groups_mu = PTHREAD_MUTEX_INITIALIZER;
static struct zc_sync_group *groups;
static long long n_grouped_commits, n_wal_fsyncs;

static struct zc_sync_group *group_join(const char *path)
{
	char abs[PATH_MAX];
	if (!realpath(path, abs))
		snprintf(abs, sizeof(abs), "%s", path);
	pthread_mutex_lock(&groups_mu);
	struct zc_sync_group *g = groups;
	while (g && strcmp(g->path, abs) != 0)
		g = g->next;
	if (!g) {
		g = zc_calloc(1, sizeof(*g));
		snprintf(g->path, sizeof(g->path), "%s", abs);
		pthread_cond_init(&g->cv, NULL);
		g->next = groups;
		groups = g;
	}
	g->refs++;
	pthread_mutex_unlock(&groups_mu);
	return g;
}

static void group_leave(struct zc_sync_group *g)
{
	if (!g)
		return;
	pthread_mutex_lock(&groups_mu);
	if (--g->refs == 0) {
		struct zc_sync_group **pp = &groups;
		while (*pp != g)
			pp = &(*pp)->next;
		*pp = g->next;
		pthread_cond_destroy(&g->cv);
		zc_free(g);
	}
	pthread_mutex_unlock(&groups_mu);
}

void zc_store_sync_counts(long long *commits, long long *fsyncs)
{
	pthread_mutex_lock(&groups_mu);
	*commits = n_grouped_commits;
	*fsyncs = n_wal_fsyncs;
	pthread_mutex_unlock(&groups_mu);
}

/* fdatasync of the WAL through SQLite's own handle of it (never a
 * descriptor of ours: see zc_store_recall_catch_up's comment); the
 * database file when there is no WAL. SQLITE_OK or SQLite's code. */
static int wal_sync(struct zc_store *s)
{
	sqlite3_file *f = NULL;
	if (sqlite3_file_control(s->db, "main", SQLITE_FCNTL_JOURNAL_POINTER, &f) != SQLITE_OK ||
	    !f || !f->pMethods)
		f = NULL;
	if (!f && (sqlite3_file_control(s->db, "main", SQLITE_FCNTL_FILE_POINTER, &f) != SQLITE_OK ||
		   !f || !f->pMethods))
		return SQLITE_IOERR_FSYNC;
	return f->pMethods->xSync(f, SQLITE_SYNC_NORMAL);
}

/* After a commit with synchronous=NORMAL returned: waits until an fsync
 * that began after it has finished, running it when none is under way.
 * A failed one: the waiters behind it try again themselves. */
static int group_sync(struct zc_store *s)
{
	struct zc_sync_group *g = s->group;
	int rc = SQLITE_OK;
	pthread_mutex_lock(&groups_mu);
	unsigned long long mine = ++g->committed;
	n_grouped_commits++;
	while (g->synced < mine) {
		if (g->syncing) {
			pthread_cond_wait(&g->cv, &groups_mu);
			continue;
		}
		g->syncing = 1;
		unsigned long long upto = g->committed; /* every one handed out has returned */
		n_wal_fsyncs++;
		pthread_mutex_unlock(&groups_mu);
		rc = wal_sync(s);
		pthread_mutex_lock(&groups_mu);
		g->syncing = 0;
		if (rc == SQLITE_OK && upto > g->synced)
			g->synced = upto;
		pthread_cond_broadcast(&g->cv);
		if (rc != SQLITE_OK)
			break;
	}
	pthread_mutex_unlock(&groups_mu);
	return rc;
}

int zc_store_open(struct zc_store *s, const char *path, struct zc_err *e)
{
	memset(s, 0, sizeof(*s));
	int rc = sqlite3_open_v2(path, &s->db,
				 SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc) {
		rc = zc_store_fail(s, rc, e, "opening memory.db");
		zc_store_close(s);
		return rc;
	}
	sqlite3_extended_result_codes(s->db, 1);
	s->busy_ms = ZC_BUSY_WAIT_MS;
	sqlite3_busy_handler(s->db, busy_wait, s);
	static const char *const pragmas[] = {
		"PRAGMA journal_mode = WAL",
		"PRAGMA synchronous = FULL",
		"PRAGMA cache_size = -16384", /* ZC_STORE_CACHE_BYTES */
		"PRAGMA foreign_keys = ON",
	};
	if ((rc = zc_fts_register(s->db, e))) {
		zc_store_close(s);
		return rc;
	}
	for (size_t i = 0; i < sizeof(pragmas) / sizeof(pragmas[0]); i++) {
		/* Switching a new file to WAL needs its exclusive lock, and SQLite
		 * answers SQLITE_BUSY there without calling the busy handler when
		 * another process holds a shared one (opening the same new
		 * directory at the same moment): retry for as long as the handler
		 * would have waited. */
		for (int waited = 0;; waited += 10) {
			rc = sqlite3_exec(s->db, pragmas[i], NULL, NULL, NULL);
			if ((rc & 0xff) != SQLITE_BUSY || waited >= ZC_BUSY_WAIT_MS)
				break;
			nanosleep(&(struct timespec){.tv_nsec = 10 * 1000000L}, NULL);
		}
		if (rc) {
			rc = zc_store_fail(s, rc, e, "opening memory.db");
			zc_store_close(s);
			return rc;
		}
	}
	s->group = group_join(path);
	if ((rc = migrate(s, e))) {
		zc_store_close(s);
		return rc;
	}
	return ZCOR_OK;
}

void zc_store_close(struct zc_store *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->ncache; i++)
		sqlite3_finalize(s->cache[i].st);
	s->ncache = 0;
	if (s->db)
		sqlite3_close_v2(s->db);
	s->db = NULL;
	group_leave(s->group);
	s->group = NULL;
}

/* Transaction control through the statement cache: sqlite3_exec would
 * parse the text again on every call (a tenth of a small read's
 * instructions, callgrind). */
static const char SQL_BEGIN[] = "BEGIN", SQL_BEGIN_IMMEDIATE[] = "BEGIN IMMEDIATE",
		  SQL_COMMIT[] = "COMMIT", SQL_ROLLBACK[] = "ROLLBACK",
		  SQL_SYNC_FULL[] = "PRAGMA synchronous = FULL",
		  SQL_SYNC_NORMAL[] = "PRAGMA synchronous = NORMAL";

static int step_once(struct zc_store *s, const char *sql)
{
	sqlite3_stmt *st = zc_stmt(s, sql, NULL);
	if (!st)
		return sqlite3_errcode(s->db) ? sqlite3_errcode(s->db) : SQLITE_ERROR;
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? SQLITE_OK : rc;
}

/* A durable write transaction commits with synchronous=NORMAL and then
 * through the group (zc_store_commit); the connection is FULL again
 * after it, so a statement outside a transaction is durable on its own. */
static void ungroup(struct zc_store *s)
{
	if (s->grouped)
		step_once(s, SQL_SYNC_FULL);
	s->grouped = 0;
}

int zc_store_begin(struct zc_store *s, int write, struct zc_err *e)
{
	assert(s && s->db);
	if (write && !s->nosync && s->group && sqlite3_get_autocommit(s->db) &&
	    step_once(s, SQL_SYNC_NORMAL) == SQLITE_OK)
		s->grouped = 1;
	int rc = step_once(s, write ? SQL_BEGIN_IMMEDIATE : SQL_BEGIN);
	if (rc) {
		ungroup(s);
		return zc_store_fail(s, rc, e, "starting a transaction");
	}
	s->in_tx = 1;
	return ZCOR_OK;
}

int zc_store_commit(struct zc_store *s, struct zc_err *e)
{
	assert(s && s->db);
	int rc = step_once(s, SQL_COMMIT);
	if (rc) {
		rc = zc_store_fail(s, rc, e, "committing");
		zc_store_rollback(s);
		return rc;
	}
	s->in_tx = 0;
	if (s->grouped && (rc = group_sync(s)) != SQLITE_OK) {
		ungroup(s);
		return zc_fail(e, ZCOR_EIO, "committing: memory.db's write-ahead log could not be "
					    "flushed to the disk (%s); the change may not survive a power cut",
			       sqlite3_errstr(rc));
	}
	ungroup(s);
	return ZCOR_OK;
}

int zc_store_flush(struct zc_store *s, struct zc_err *e)
{
	assert(s && s->db && s->group);
	int rc = group_sync(s);
	if (rc != SQLITE_OK)
		return zc_fail(e, ZCOR_EIO, "flushing memory.db's write-ahead log to the disk failed (%s); "
					    "the last changes may not survive a power cut",
			       sqlite3_errstr(rc));
	return ZCOR_OK;
}

void zc_store_rollback(struct zc_store *s)
{
	if (s->db && !sqlite3_get_autocommit(s->db))
		step_once(s, SQL_ROLLBACK);
	s->in_tx = 0;
	ungroup(s);
}

void zc_store_busy_wait(struct zc_store *s, int wait)
{
	s->busy_ms = wait ? ZC_BUSY_WAIT_MS : 0;
}

int zc_store_sync(struct zc_store *s, int full)
{
	s->nosync = !full;
	return step_once(s, full ? SQL_SYNC_FULL : SQL_SYNC_NORMAL) ? ZCOR_EINTERNAL : ZCOR_OK;
}

/* The cache slot to reuse for a new statement: the least recently handed
 * out one whose statement is not in use; -1 when every one is. */
static int stmt_victim(const struct zc_store *s)
{
	int victim = -1;
	for (int i = 0; i < s->ncache; i++) {
		if (sqlite3_stmt_busy(s->cache[i].st))
			continue;
		if (victim < 0 || s->cache[i].used < s->cache[victim].used)
			victim = i;
	}
	return victim;
}

sqlite3_stmt *zc_stmt(struct zc_store *s, const char *sql, struct zc_err *e)
{
	assert(s && s->db && sql);
	assert(s->ncache >= 0 && s->ncache <= ZC_STMT_CACHE);
	s->clock++;
	for (int i = 0; i < s->ncache; i++) {
		if (s->cache[i].sql == sql) {
			sqlite3_stmt *st = s->cache[i].st;
			sqlite3_reset(st);
			sqlite3_clear_bindings(st);
			s->cache[i].used = s->clock;
			return st;
		}
	}
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL);
	if (rc) {
		zc_store_fail(s, rc, e, "preparing a statement");
		return NULL;
	}
	int slot = s->ncache;
	if (slot == ZC_STMT_CACHE) {
		/* over the cap: finalize the least recently used statement that
		 * nobody is stepping */
		slot = stmt_victim(s);
		assert(slot >= 0 && "every cached statement is in use");
		if (slot < 0) {
			sqlite3_finalize(st);
			zc_fail(e, ZCOR_EINTERNAL, "all %d cached statements are in use", ZC_STMT_CACHE);
			return NULL;
		}
		sqlite3_finalize(s->cache[slot].st);
	} else {
		s->ncache++;
	}
	s->cache[slot].sql = sql;
	s->cache[slot].st = st;
	s->cache[slot].used = s->clock;
	return st;
}

int zc_exec(struct zc_store *s, const char *sql, struct zc_err *e)
{
	int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
	return rc ? zc_store_fail(s, rc, e, "running SQL") : ZCOR_OK;
}

int zc_meta_get_int(struct zc_store *s, const char *key, long long *v, struct zc_err *e)
{
	sqlite3_stmt *st = zc_stmt(s, "SELECT value FROM meta WHERE key = ?1", e);
	if (!st)
		return e ? e->code : ZCOR_EINTERNAL;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*v = sqlite3_column_int64(st, 0);
		sqlite3_reset(st);
		return ZCOR_OK;
	}
	sqlite3_reset(st);
	if (rc == SQLITE_DONE) {
		*v = 0;
		return ZCOR_OK;
	}
	return zc_store_fail(s, rc, e, "reading meta");
}

int zc_meta_set_int(struct zc_store *s, const char *key, long long v, struct zc_err *e)
{
	sqlite3_stmt *st = zc_stmt(s, "INSERT INTO meta(key, value) VALUES(?1, ?2) "
				      "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
				   e);
	if (!st)
		return e ? e->code : ZCOR_EINTERNAL;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	char buf[32];
	snprintf(buf, sizeof(buf), "%lld", v);
	sqlite3_bind_text(st, 2, buf, -1, SQLITE_TRANSIENT);
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? ZCOR_OK : zc_store_fail(s, rc, e, "writing meta");
}

json_t *zc_col_json(sqlite3_stmt *st, int i, char fallback)
{
	const char *s = (const char *)sqlite3_column_text(st, i);
	json_t *v = s ? json_loads(s, JSON_DECODE_ANY, NULL) : NULL;
	if (v)
		return v;
	switch (fallback) {
	case '[':
		return json_array();
	case '{':
		return json_object();
	case 's':
		return s ? json_string(s) : json_null();
	default:
		return json_null();
	}
}

int zc_terms_set(struct zc_store *s, const char *kind, sqlite3_int64 ref, const char *scope,
		 const json_t *terms, struct zc_err *e)
{
	assert(s && s->db && scope && (strcmp(kind, "node") == 0 || strcmp(kind, "person") == 0));
	/* the record's old terms are gone already: the schema's triggers
	 * removed them when their fields were written (schema 10) */
	int rc;
	size_t i;
	json_t *t;
	json_array_foreach(terms, i, t) {
		const char *term = json_string_value(t);
		size_t chars = zc_utf8_len(term);
		if (chars == 0 || chars > ZC_TERM_MAX_CHARS)
			continue;
		sqlite3_stmt *pre = zc_stmt(s,
					    "INSERT INTO term_prefix(prefix, maxlen) VALUES(substr(?1, 1, 2), "
					    "length(?1)) ON CONFLICT(prefix) DO UPDATE SET maxlen = "
					    "max(maxlen, excluded.maxlen)",
					    e);
		if (!pre)
			return e->code;
		sqlite3_bind_text(pre, 1, term, -1, SQLITE_TRANSIENT);
		rc = sqlite3_step(pre);
		sqlite3_reset(pre);
		if (rc != SQLITE_DONE)
			return zc_store_fail(s, rc, e, "updating the term index");
		sqlite3_stmt *ins = zc_stmt(
			s, "INSERT OR IGNORE INTO terms(term, scope, kind, ref) VALUES(?1, ?4, ?2, ?3)", e);
		if (!ins)
			return e->code;
		sqlite3_bind_text(ins, 1, term, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(ins, 2, kind, -1, SQLITE_STATIC);
		sqlite3_bind_int64(ins, 3, ref);
		sqlite3_bind_text(ins, 4, scope, -1, SQLITE_TRANSIENT);
		rc = sqlite3_step(ins);
		sqlite3_reset(ins);
		if (rc != SQLITE_DONE)
			return zc_store_fail(s, rc, e, "updating the term index");
	}
	return ZCOR_OK;
}

void zc_col_time(json_t *o, const char *key, sqlite3_stmt *st, int i)
{
	zc_json_set_time(o, key, sqlite3_column_type(st, i) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, i));
}
