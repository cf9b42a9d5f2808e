/*
 * lexical.h — recall's lexical stage (profile scored): BM25 over the
 * recall_fts index with statistics of what the conversation may see.
 * Private to src/recall/ (recall_cand.c calls it).
 *
 * The query is every lexical token of the batch (zc_lex_tokens: CJK
 * bigrams and characters, words), each weighted by how often the batch
 * repeats it, less in earlier messages than in the newest, less for a
 * character or a token only a synonym brought in. A
 * record scores
 *
 *   BM25(d) = Σ_t qw(t) · idf(t) · g(t, d) · tf (k1 + 1) / (tf + k1 (1 − b + b · dl / avgdl))
 *   idf(t)  = ln(1 + (N − df + 0.5) / (df + 0.5))
 *
 * with N, df and avgdl counted over the records the conversation may see
 * (global and its own scope: recall_stats, recall_fts), and g(t, d) the
 * discount of a bigram that only continues the previous bigram of the
 * same run (the two restate one longer word the record contains). The
 * feature is BM25(d) / Σ_t qw(t) · idf(t): 1 for a record of average
 * length holding every query token once, whatever the query's length.
 *
 * Cost: every token's df is one lookup in recall_df (kept by triggers);
 * tokens in more than a fraction of the visible records are left out
 * before anything else is read (their idf is next to nothing); the
 * others' postings are read by impact: of each scope's list, the
 * `postings` of highest tf (fewer for a character or a feedback token,
 * weaker evidence both), the newest among equal tf, found among its newest
 * `scan` (1,024; 128 for a single CJK character, whose lists are the
 * longest and whose evidence is the weakest) — every posting of a list no longer than that, so
 * recency only breaks ties there (issue 17 review: the newest 128 once
 * decided which records could be candidates; the window bounds the walk,
 * measured in docs/PERFORMANCE.md); at most ZC_LEX_QUERY_TOKENS distinct
 * tokens a batch, the heaviest first. A list of more than `postings`
 * rows, or of 24 or more, is read in one walk from recall_fts's own
 * tables (zc_fts_raw_postings, store/fts_raw.c: the segments' doclists
 * walked in the window, the best kept, ~8 times fewer instructions a row
 * than an FTS5 cursor), or where that cannot answer exactly in one call
 * to FTS5 (zc_postings, store/fts.c, the same choice); a shorter one is
 * FTS5's rows, a statement row each (for a few rows the tables' seek in
 * every segment costs more than the query). Postings and df are kept per recall handle (struct
 * zc_recall) in a 4-way set-associative cache of 8,192 (scope, token)
 * entries, each valid while its scope's generation (recall_gen) stays.
 */
#ifndef ZC_LEXICAL_H
#define ZC_LEXICAL_H

#include <jansson.h>
#include <sqlite3.h>

#include "memory/memory.h"

/* The shape of the lexical score: chosen by measurement on the dev sets
 * (docs/PERFORMANCE.md); zc_lex_shape_default holds the values in use.
 * A benchmark may set others on a handle (zc_lex_set_shape) to measure
 * what each part is worth; nothing else changes them. */
struct zc_lex_shape {
	double k1, b;           /* BM25 saturation and length normalisation */
	double k3;              /* saturation of a token's weight in the query */
	double older;           /* an occurrence in an earlier message of the batch counts this
				 * much (one in the newest message counts 1) */
	double synonym;         /* weight of a token only a synonym of a term brought in */
	double unigram;         /* weight of a single CJK character (0: not looked up) */
	double function;        /* weight of a function word (ZC_LEX_FUNCTION; 0: not looked up) */
	double continuation;    /* g: a bigram continuing the previous one of its run */
	double skip_fraction;   /* tokens in more than this share of the visible records are left out */
	int keep;               /* records scored in full (length, features) after the first pass */
	int postings;           /* newest visible postings read of a word or bigram, */
	int postings_unigram;   /*   of a single CJK character, */
	int postings_feedback;  /*   of a feedback token: of each scope's list, the ones of highest
				 * tf (the newest among equal tf) ... */
	int scan;               /*   among its newest `scan` (at least that many; 0: the whole
				 * list), one window for every use of a token, */
	int scan_unigram;       /*   `scan_unigram` for a token that is one CJK character (its
				 * class, not its use, decides, so a cached read answers every use) */
	int feedback_docs;      /* pseudo-relevance feedback: from the best this many records */
	int feedback_terms;     /*   at most this many new tokens, */
	int feedback_min;       /*   each in at least this many of them */
	double context_ms;      /* dialogue context: neighbours written within this many ms */
	/* how, not what: 1 reads postings through an FTS5 cursor (zc_postings)
	 * instead of from the index's tables (store/fts_raw.c): the same
	 * answer, ~10 times the instructions a row — for the test that
	 * compares the two, and the bench */
	int fts5_cursor;
};

extern const struct zc_lex_shape zc_lex_shape_default;

#define ZC_LEX_QUERY_TOKENS 256  /* distinct tokens of a batch whose postings are read */
#define ZC_LEX_QUERY_LOOKUP 2048 /* distinct tokens of a batch whose df is looked up */
/* The common-word cut (skip_fraction) leaves a token in if it is in at
 * most this many visible records: a store of a few dozen keeps all its
 * words. Small stores only, so no big conversation reaches it. */
#define ZC_LEX_SKIP_FLOOR 32

/* The batch as the lexical stage reads it. */
struct zc_lex_query {
	const char *conversation;
	const json_t *messages; /* array of normalised texts, oldest first */
	const json_t *extra;    /* array of normalised texts of weight 1 (names) */
	const json_t *synonyms; /* array of expanded terms (normalised) */
};

/* One record the lexical stage found. */
struct zc_lex_hit {
	sqlite3_int64 seq;
	double bm25;     /* BM25(d) / query mass (the lexical feature) */
	double feedback; /* the same for the feedback tokens */
	double context;  /* carried over from a strong neighbour */
	int matched;     /* query tokens it contains */
	int words;       /* of which not single characters */
};

/* What the stage did, for --explain. */
struct zc_lex_stats {
	long long docs;      /* N: visible records */
	double avgdl;        /* their mean length in tokens */
	int tokens;          /* distinct query tokens */
	int used;            /* of which scored (in at least one visible record, not too common) */
	int skipped_common;  /* in more than skip_fraction of the visible records */
	int dropped;         /* beyond ZC_LEX_QUERY_TOKENS */
	double mass;         /* Σ qw · idf of the used tokens */
	json_t *feedback;    /* the feedback tokens used (array), or NULL */
};

/* Runs the stage: *hits (caller frees) gets every record found, best
 * first by bm25 + feedback + context, *n their count. */
/* The cache lives in *cache (struct zc_recall's lex: made on first use). */
struct zc_lex_cache;
int zc_lex_run(struct zc_mem *m, struct zc_lex_cache **cache, const struct zc_lex_query *q,
	       const struct zc_lex_shape *shape,
	       double w_feedback, double w_context, struct zc_lex_hit **hits, size_t *n,
	       struct zc_lex_stats *stats, struct zc_err *e);

/* The shape in use with this cache (the default unless a benchmark set
 * one; NULL: the default). */
const struct zc_lex_shape *zc_lex_shape_of(const struct zc_lex_cache *c);
/* Sets the shape kept in *cache (NULL: back to the default). For benchmarks. */
void zc_lex_set_shape(struct zc_lex_cache **cache, const struct zc_lex_shape *shape);

/* Frees *cache (zc_recall_close) and sets it NULL. */
void zc_lex_release(struct zc_lex_cache **cache);

#endif
