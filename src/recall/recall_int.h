/*
 * recall_int.h — what the files behind recall.h share: the request and the
 * pipeline (recall.c), terms (recall_terms.c), candidates (recall_cand.c),
 * loading and scoring (recall_score.c) and packing (recall_pack.c). Not an
 * interface for anything else: the rest of zcor uses recall.h.
 */
#ifndef ZC_RECALL_INT_H
#define ZC_RECALL_INT_H

#include <jansson.h>
#include <sqlite3.h>
#include <stdint.h>

#include "base/buf.h"
#include "recall/lexical.h"
#include "recall/recall.h"
#include "recall/seqmap.h"

struct item {
	char kind; /* 'n' node, 'p' person */
	sqlite3_int64 seq;
	int loaded;   /* passed the scope and currency filter */
	json_t *obj;  /* a person's JSON */
	/* what scoring needs of a node, read without its content (phase 1) */
	char id[72], kindname[16], scope[80], date[16], expires[16];
	char *title, *title_norm, *keywords; /* owned; the last two: zcor only */
	char *content, *usage;               /* owned; of picked nodes (phase 2) */
	int pinned;
	long long hits, length;
	char section[64];
	double entity, lexical, recency, salience, prior, expired, score;
	double feedback, context; /* lexical.h */
	int matched;              /* query tokens it contains */
	int words;                /* of which not single characters */
	int zhits;
	const char *always;
	const char *why;
	int picked, truncated;
	int64_t updated;
	char cite[240]; /* view path#Lnn of an entry of a memory view, or "" */
};

struct recall {
	struct zc_recall *rs; /* recall's own state (cache, word break) */
	struct zc_mem *m;
	struct zcor_ctx ctx;
	struct zc_err *e;
	int64_t now;
	enum zc_profile profile;
	json_t *terms;    /* the message's own terms */
	json_t *expanded; /* terms after synonym expansion */
	json_t *seen;     /* dedupe of expanded */
	json_t *msg_texts, *extra_texts; /* the batch's messages, and the names in it */
	int short_msg;                   /* at most 2 characters (SPEC §4) */
	struct zc_lex_stats lex;
	struct item *it;
	size_t n, cap;
	struct zc_seqmap where; /* (seq, kind) -> index in it */
};

/* (the unary + keeps SQLite off the indexes on these columns: each query
 * here has a better one — seq, or updated_at from its newest end — and
 * walking nodes_scope or nodes_superseded_by would visit most nodes) */
#define CURRENT_SQL ZC_MAY_INJECT_SQL("+n.", "n.") " AND " ZC_INJECT_SCOPE_SQL("+n.")
/* the same, read from the nodes_recall index */
#define LIVE_INDEXED_SQL ZC_MAY_INJECT_SQL("n.", "n.")
#define CURRENT_INDEXED_SQL LIVE_INDEXED_SQL " AND " ZC_INJECT_SCOPE_SQL("n.")


struct pack {
	struct zc_buf b;
	size_t used; /* characters */
	size_t budget;
};

/* ---- recall_cand.c */
/* The item of (kind, seq), added (zeroed) if new. */
struct item *zc_recall_item_of(struct recall *r, char kind, sqlite3_int64 seq);
/* Binds the conversation as ?9 (the scope filters' parameter). */
void zc_recall_bind_conv(struct recall *r, sqlite3_stmt *st);
int zc_recall_entity_candidates(struct recall *r);
int zc_recall_lexical_candidates(struct recall *r);
int zc_recall_phrase_candidates(struct recall *r);
int zc_recall_speaker_candidates(struct recall *r, json_t *ids);

/* ---- recall_terms.c */
/* Whether a message has at most two characters (then single characters are terms). */
int zc_recall_short_message(const char *norm);
int zc_recall_gather_terms(struct recall *r, const char *norm);

/* ---- recall_score.c */
int zc_recall_load_items(struct recall *r);
int zc_recall_load_full(struct recall *r, size_t npicked);
void zc_recall_score_items(struct recall *r);
size_t zc_recall_select_items(struct recall *r);
int zc_recall_fallback_items(struct recall *r);
size_t zc_recall_fallback_select(struct recall *r);
void zc_recall_item_release(struct item *x);

/* ---- recall_pack.c */
json_t *zc_recall_item_json(const struct item *x);
int zc_recall_pack_items(struct recall *r, size_t npicked, struct pack *p, json_t *items);

#endif
