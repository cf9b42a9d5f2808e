/*
 * tokens.h — how zcor cuts normalised text into index tokens and words.
 *
 * Index tokens (FTS5, lexical scoring): CJK runs as overlapping character
 * bigrams (a run of one character is one unigram), plus — in documents
 * only — the last character of each run as a unigram, so a one-character
 * prefix query ("猫*") finds every text containing that character;
 * letters and digits as whole words.
 *
 * Words (recall terms): ICU's dictionary-based word break for Chinese
 * ("zh"), keeping words of at least 2 characters.
 *
 * Text layer: pure functions over already normalised UTF-8 (zc_norm).
 */
#ifndef ZC_TOKENS_H
#define ZC_TOKENS_H

#include <jansson.h>
#include <stddef.h>

/* Called for each token; return nonzero to stop. */
typedef int (*zc_token_fn)(void *ud, const char *tok, size_t len, size_t start, size_t end);

#define ZC_TOKENS_DOCUMENT 0
#define ZC_TOKENS_QUERY 1

/* Tokenizes normalised text; returns the first nonzero callback result. */
int zc_tokens(const char *s, size_t len, int mode, zc_token_fn fn, void *ud);

/*
 * Recall's lexical tokens (the recall_fts index and the query side of its
 * BM25). Both sides go through this one function, so a document and a
 * query always cut alike:
 *   - CJK runs: every character and every bigram;
 *   - words of letters or digits, English ones lightly stemmed (plural -s,
 *     -ing, -ed, a final -e: "camping", "camped", "camps" -> "camp");
 *   - nothing longer than ZC_LEX_TOKEN_MAX bytes (a URL or a hash says
 *     nothing a person asks about, and the token cache has fixed slots).
 * Each token comes with flags: ZC_LEX_UNIGRAM for a single CJK character,
 * ZC_LEX_FUNCTION for an English function word ("what", "did", "the"):
 * what a question is made of, and what says nothing of its subject.
 * (Chinese interrogatives and particles — 什么, 吗, 呢 — were tried as
 * function tokens too and did not help: docs/PERFORMANCE.md.)
 */
#define ZC_LEX_TOKEN_MAX 47
#define ZC_LEX_UNIGRAM 1
#define ZC_LEX_FUNCTION 2
typedef int (*zc_lex_fn)(void *ud, const char *tok, size_t len, size_t start, size_t end, int flags);
int zc_lex_tokens(const char *s, size_t len, int mode, zc_lex_fn fn, void *ud);

/* ICU's Chinese word break iterator, opened once and reused (opening one
 * loads its dictionary). One per thread: the struct is not shared. */
struct zc_wordbreak {
	void *bi; /* UBreakIterator, opened on first use */
};

/* Appends to `words` (array) the distinct ICU words of ≥ min_chars
 * characters of normalised text s; `seen` (object) dedupes across calls. */
void zc_words(struct zc_wordbreak *wb, const char *s, int min_chars, json_t *words, json_t *seen);
/* Accepts a zeroed or already released struct. */
void zc_wordbreak_release(struct zc_wordbreak *wb);

/* 1 if s is one run of at least min_chars CJK characters (nothing else):
 * then it is a substring of a text exactly when its bigrams follow each
 * other in the text's index tokens. */
int zc_is_cjk_run(const char *s, size_t min_chars);
/* 1 for punctuation and symbols (ASCII other than letters, digits and the
 * space; CJK and full-width punctuation; general punctuation). */
int zc_is_punct(unsigned cp);
/* 1 if the code point is a CJK ideograph, kana or hangul. */
int zc_is_cjk(unsigned cp);
/* Decodes one UTF-8 code point at s (len bytes left); returns its length. */
size_t zc_utf8_next(const char *s, size_t len, unsigned *cp);

#endif
