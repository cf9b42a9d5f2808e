/*
 * recall.h — what goes into each prompt (SPEC §4): auto-recall for a
 * batch of messages, and the system prefix.
 *
 * Recall layer: terms -> candidates -> score (two profiles) -> pack.
 * Reads the store through indexes only (terms, recall_fts and its counts,
 * nodes_fts for profile zcor, people by id):
 * no code path visits every node per message. Never records history:
 * recall and the prefix are not operations (Z-HIST); hit counters are
 * derived statistics.
 */
#ifndef ZC_RECALL_H
#define ZC_RECALL_H

#include <jansson.h>

#include "memory/memory.h"
#include "text/tokens.h"

/*
 * Recall's own state, opened over a memory handle it borrows (the facade
 * opens it after zc_mem_open and closes it before zc_mem_close): ICU's
 * word break iterator and the lookups kept between messages. Hit counts
 * are memory's (memory.h, zc_mem_count_hits): the views read them too.
 */
struct zc_recall_cache;
struct zc_lex_cache;
struct zc_recall {
	struct zc_mem *m;               /* borrowed */
	struct zc_wordbreak words;      /* ICU word break iterator */
	struct zc_recall_cache *cache;  /* lookups between messages (recall.c) */
	struct zc_lex_cache *lex;       /* the lexical stage's postings and lengths (lexical.c) */
};

void zc_recall_open(struct zc_recall *rs, struct zc_mem *m);
/* Frees what recall keeps; accepts NULL and a zeroed struct. */
void zc_recall_close(struct zc_recall *rs);

/*
 * Recall for one batch. req (checked here, errors name the field):
 *   conversation  "group:…" | "private:…" | "console:…" (required)
 *   messages      [ "text" | {"text", "senderId"?, "senderName"?} ] (1..100)
 *   speakers      [ {"id", "name"?} ]   mentions [ "id" ]   explain bool
 * *out: {header, items, profile, budget, used, terms, explain?}.
 */
int zc_recall(struct zc_recall *rs, const json_t *req, json_t **out, struct zc_err *e);

/*
 * Reads what recall looks up on every message into m's page cache, up to
 * budget bytes, most used first, and keeps the cache that large (plus
 * ZC_WARM_HEADROOM for what later messages read): for a process that keeps
 * one handle for many messages. *out: {pages, cacheBytes, ms}.
 */
int zc_recall_warm(struct zc_recall *rs, size_t budget, json_t **out, struct zc_err *e);
#define ZC_WARM_HEADROOM (8u << 20)
#define ZC_WARM_PREFETCH_MAX (1ull << 30)

/* The system prefix for a conversation (NULL: the host plane). */
int zc_prefix(struct zc_mem *m, const char *conversation, char **out, struct zc_err *e);

/* Limits of a recall request. */
#define ZC_RECALL_MAX_MESSAGES 100
#define ZC_RECALL_MAX_TEXT 20000
#define ZC_RECALL_INDEX_CHARS 1500
#define ZC_RECALL_STICKERS 40          /* collected stickers listed each turn */
#define ZC_RECALL_RECENT_SLANG 15      /* the "recently learned slang" section */
#define ZC_RECALL_RECENT_SLANG_CHARS 1200
#define ZC_RECALL_ZCOR_MAX 10
#define ZC_RECALL_SECTION_QUOTA 6
#define ZC_RECALL_MAX_ITEMS 30

/* The best this many records of the lexical stage (lexical.h) go on to
 * scoring. */
#define ZC_LEXICAL_KEEP 30
/* Entity hits per term and scope, and (profile zcor) title/keyword hits
 * per term: a term this common keeps its most recent records. */
#define ZC_ENTITY_PER_TERM 16
#define ZC_PHRASE_PER_TERM 500

#endif
