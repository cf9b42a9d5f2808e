/*
 * tokens.c — bigram index tokens and ICU words (see tokens.h). Text
 * layer: pure functions of normalised text; it never touches the store,
 * and the index (store/fts.c) and the queries (recall/) both use it, so
 * a change here is a reindex (zcor doctor --rebuild).
 */
#include "text/tokens.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <unicode/ubrk.h>
#include <unicode/uchar.h>
#include <unicode/ustring.h>

#include "base/alloc.h"

size_t zc_utf8_next(const char *str, size_t len, unsigned *cp)
{
	const unsigned char *s = (const unsigned char *)str;
	unsigned c = s[0];
	size_t n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
	if (n > len)
		n = 1;
	if (n == 1) {
		*cp = c;
		return 1;
	}
	unsigned v = c & (0x3F >> (n - 1));
	for (size_t i = 1; i < n; i++)
		v = (v << 6) | (s[i] & 0x3F);
	*cp = v;
	return n;
}

int zc_is_cjk(unsigned cp)
{
	return (cp >= 0x3040 && cp <= 0x30FF) ||   /* kana */
	       (cp >= 0x3400 && cp <= 0x4DBF) ||   /* CJK ext A */
	       (cp >= 0x4E00 && cp <= 0x9FFF) ||   /* CJK unified */
	       (cp >= 0xAC00 && cp <= 0xD7AF) ||   /* hangul */
	       (cp >= 0xF900 && cp <= 0xFAFF) ||   /* compatibility */
	       (cp >= 0x20000 && cp <= 0x3134F);   /* ext B.. */
}

int zc_is_cjk_run(const char *s, size_t min_chars)
{
	size_t len = strlen(s), chars = 0;
	for (size_t j = 0; j < len;) {
		unsigned cp;
		j += zc_utf8_next(s + j, len - j, &cp);
		if (!zc_is_cjk(cp))
			return 0;
		chars++;
	}
	return chars >= min_chars;
}

int zc_is_punct(unsigned cp)
{
	if (cp < 0x80)
		return cp != ' ' && !((cp | 0x20) >= 'a' && (cp | 0x20) <= 'z') && !(cp >= '0' && cp <= '9');
	return (cp >= 0x3000 && cp <= 0x303F) || (cp >= 0xFF00 && cp <= 0xFF0F) ||
	       (cp >= 0xFF1A && cp <= 0xFF20) || (cp >= 0x2000 && cp <= 0x206F);
}

enum cls { SEP, CJK, WORD };

static enum cls classify(unsigned cp)
{
	if (zc_is_cjk(cp))
		return CJK;
	if (cp < 0x80)
		return ((cp | 0x20) >= 'a' && (cp | 0x20) <= 'z') || (cp >= '0' && cp <= '9') ? WORD : SEP;
	return u_isalnum((UChar32)cp) ? WORD : SEP;
}

/* unigrams: every character of a CJK run is also a token (else only the
 * last one, in documents, and the only one of a one-character run) */
static int tokens(const char *s, size_t len, int mode, int unigrams, zc_token_fn fn, void *ud)
{
	assert((s || len == 0) && fn);
	assert(mode == ZC_TOKENS_DOCUMENT || mode == ZC_TOKENS_QUERY);
	size_t i = 0;
	int rc;
	while (i < len) {
		unsigned cp;
		size_t n = zc_utf8_next(s + i, len - i, &cp);
		enum cls c = classify(cp);
		if (c == SEP) {
			i += n;
			continue;
		}
		if (c == WORD) {
			size_t start = i;
			while (i < len) {
				n = zc_utf8_next(s + i, len - i, &cp);
				if (classify(cp) != WORD)
					break;
				i += n;
			}
			if ((rc = fn(ud, s + start, i - start, start, i)))
				return rc;
			continue;
		}
		/* a CJK run: bigrams, and the unigram of its last character */
		size_t prev = i, prev_len = n, count = 1;
		i += n;
		while (i < len) {
			n = zc_utf8_next(s + i, len - i, &cp);
			if (classify(cp) != CJK)
				break;
			if (unigrams && (rc = fn(ud, s + prev, prev_len, prev, prev + prev_len)))
				return rc;
			if ((rc = fn(ud, s + prev, prev_len + n, prev, i + n)))
				return rc;
			prev = i;
			prev_len = n;
			i += n;
			count++;
		}
		if (count == 1 || unigrams || mode == ZC_TOKENS_DOCUMENT)
			if ((rc = fn(ud, s + prev, prev_len, prev, prev + prev_len)))
				return rc;
	}
	return 0;
}

int zc_tokens(const char *s, size_t len, int mode, zc_token_fn fn, void *ud)
{
	return tokens(s, len, mode, 0, fn, ud);
}

/* A light English stemmer for words of ASCII letters: plural -s / -es /
 * -ies, then -ing / -ed (a doubled last consonant undone), then a final
 * -e, so "camping", "camped" and "camps" all become "camp", "loves" and
 * "loved" "lov". Never shortens a word below 3 letters. */
static size_t stem(char *w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (w[i] < 'a' || w[i] > 'z')
			return n;
	if (n < 4)
		return n;
#define ENDS(suf) (n >= sizeof(suf) - 1 && memcmp(w + n - (sizeof(suf) - 1), suf, sizeof(suf) - 1) == 0)
	if (ENDS("ies") && n >= 5) {
		n -= 2;
		w[n - 1] = 'y';
	} else if (ENDS("sses")) {
		n -= 2;
	} else if (ENDS("s") && !ENDS("ss") && !ENDS("us") && !ENDS("is")) {
		n -= 1;
	}
	size_t cut = ENDS("ing") ? 3 : ENDS("ed") ? 2 : 0;
	if (cut && n - cut >= 3) {
		int vowel = 0;
		for (size_t i = 0; i < n - cut; i++)
			vowel |= strchr("aeiouy", w[i]) != NULL;
		if (vowel) {
			n -= cut;
			char c = w[n - 1];
			if (c == w[n - 2] && !strchr("aeiouylsz", c))
				n--;
		}
	}
	if (n >= 4 && w[n - 1] == 'e')
		n--;
#undef ENDS
	return n;
}

/* English function words (before stemming), sorted for bsearch. */
static const char *const stop_words[] = {
	"a",     "about", "am",    "an",    "and",   "any",   "are",   "as",    "at",    "be",
	"been",  "being", "but",   "by",    "can",   "could", "did",   "do",    "does",  "doing",
	"for",   "from",  "had",   "has",   "have",  "having","he",    "her",   "hers",  "him",
	"his",   "how",   "i",     "if",    "in",    "into",  "is",    "it",    "its",   "me",
	"my",    "of",    "on",    "or",    "our",   "she",   "should","so",    "some",  "than",
	"that",  "the",   "their", "them",  "then",  "there", "these", "they",  "this",  "those",
	"to",    "us",    "was",   "we",    "were",  "what",  "when",  "where", "which", "while",
	"who",   "whom",  "whose", "why",   "will",  "with",  "would", "you",   "your",
};

static int cmp_word(const void *key, const void *elem)
{
	return strcmp(key, *(const char *const *)elem);
}

static int stop_word(const char *w, size_t n)
{
	char buf[16];
	if (n >= sizeof(buf))
		return 0;
	memcpy(buf, w, n);
	buf[n] = '\0';
	return bsearch(buf, stop_words, sizeof(stop_words) / sizeof(stop_words[0]), sizeof(stop_words[0]),
		       cmp_word) != NULL;
}

struct lex_ctx {
	zc_lex_fn fn;
	void *ud;
};

static int lex_emit(void *ud, const char *tok, size_t len, size_t start, size_t end)
{
	struct lex_ctx *c = ud;
	if (len > ZC_LEX_TOKEN_MAX)
		return 0;
	unsigned cp;
	size_t first = zc_utf8_next(tok, len, &cp);
	if (zc_is_cjk(cp))
		return c->fn(c->ud, tok, len, start, end, first == len ? ZC_LEX_UNIGRAM : 0);
	int flags = stop_word(tok, len) ? ZC_LEX_FUNCTION : 0;
	char w[ZC_LEX_TOKEN_MAX + 1];
	memcpy(w, tok, len);
	return c->fn(c->ud, w, stem(w, len), start, end, flags);
}

int zc_lex_tokens(const char *s, size_t len, int mode, zc_lex_fn fn, void *ud)
{
	struct lex_ctx c = {fn, ud};
	return tokens(s, len, mode, 1, lex_emit, &c);
}

void zc_wordbreak_release(struct zc_wordbreak *wb)
{
	if (wb && wb->bi)
		ubrk_close(wb->bi);
	if (wb)
		wb->bi = NULL;
}

void zc_words(struct zc_wordbreak *wb, const char *s, int min_chars, json_t *words, json_t *seen)
{
	assert(wb && s && json_is_array(words) && json_is_object(seen));
	UErrorCode st = U_ZERO_ERROR;
	int32_t ulen = 0;
	u_strFromUTF8(NULL, 0, &ulen, s, -1, &st);
	if (ulen == 0)
		return;
	UChar *u = zc_malloc(((size_t)ulen + 1) * sizeof(UChar));
	st = U_ZERO_ERROR;
	u_strFromUTF8(u, ulen + 1, NULL, s, -1, &st);
	st = U_ZERO_ERROR;
	if (!wb->bi)
		wb->bi = ubrk_open(UBRK_WORD, "zh", NULL, 0, &st);
	UBreakIterator *bi = wb->bi;
	if (U_FAILURE(st) || !bi) {
		wb->bi = NULL;
		zc_free(u);
		return;
	}
	ubrk_setText(bi, u, ulen, &st);
	if (U_FAILURE(st)) {
		zc_free(u);
		return;
	}
	int32_t start = ubrk_first(bi);
	for (int32_t end = ubrk_next(bi); end != UBRK_DONE; start = end, end = ubrk_next(bi)) {
		if (ubrk_getRuleStatus(bi) < UBRK_WORD_NUMBER)
			continue; /* spaces and punctuation */
		int32_t chars = u_countChar32(u + start, end - start);
		if (chars < min_chars)
			continue;
		char buf[256];
		int32_t blen = 0;
		st = U_ZERO_ERROR;
		u_strToUTF8(buf, (int32_t)sizeof(buf) - 1, &blen, u + start, end - start, &st);
		if (U_FAILURE(st))
			continue;
		buf[blen] = '\0';
		if (!json_object_get(seen, buf)) {
			json_object_set_new(seen, buf, json_true());
			json_array_append_new(words, json_string(buf));
		}
	}
	ubrk_setText(bi, NULL, 0, &st); /* u is freed next */
	zc_free(u);
}
