/*
 * test_text.c — the text layer on its own (issue 13, item 9): the one
 * normalisation (NFKC + case fold), index tokens (CJK bigrams, the last
 * character's unigram in documents, whole words), ICU words, and
 * synonyms.json (created from the built-in groups, reloaded when edited,
 * a malformed file keeping the last good groups, transitive classes).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unicode/unorm2.h>

#include "base/alloc.h"
#include "text/norm.h"
#include "text/synonyms.h"
#include "text/tokens.h"
#include "harness.h"

static void norm_is(const char *in, const char *want)
{
	char *n = zc_norm(in);
	CHECK_STR(n, want);
	zc_free(n);
}

/* NFKC: full-width and compatibility forms; case fold: ASCII, Latin
 * (ß folds to ss), Greek; CJK untouched; invalid UTF-8 becomes U+FFFD. */
static void norm_nfkc_casefold(void)
{
	norm_is("ＡＢＣ１２３", "abc123");
	norm_is("Straße", "strasse");
	norm_is("ΣΊΣΥΦΟΣ", "σίσυφοσ");
	norm_is("①ｶﾀｶﾅ", "1カタカナ");
	norm_is("小明，你好！", "小明,你好!");
	norm_is("猫咪", "猫咪");
	norm_is("", "");
	norm_is("a\xff" "b", "a\xef\xbf\xbd" "b");
	char *n = zc_norm_n("HelloWorld", 5);
	CHECK_STR(n, "hello");
	zc_free(n);
}

struct toks {
	char buf[512];
	int n;
	int stop_at;
};

static int collect(void *ud, const char *tok, size_t len, size_t start, size_t end)
{
	struct toks *t = ud;
	CHECK_INT(end - start, len);
	size_t used = strlen(t->buf);
	snprintf(t->buf + used, sizeof(t->buf) - used, "%s%.*s", t->n ? " " : "", (int)len, tok);
	return ++t->n == t->stop_at ? 7 : 0;
}

static const char *tokens_of(struct toks *t, const char *s, int mode)
{
	memset(t, 0, sizeof(*t));
	zc_tokens(s, strlen(s), mode, collect, t);
	return t->buf;
}

static void tokens_bigrams_and_words(void)
{
	struct toks t;
	/* documents: bigrams of a CJK run plus its last character alone */
	CHECK_STR(tokens_of(&t, "周六打本", ZC_TOKENS_DOCUMENT), "周六 六打 打本 本");
	/* queries: bigrams only, so a query of two characters is one token */
	CHECK_STR(tokens_of(&t, "周六打本", ZC_TOKENS_QUERY), "周六 六打 打本");
	/* a run of one character is its unigram in both */
	CHECK_STR(tokens_of(&t, "猫", ZC_TOKENS_QUERY), "猫");
	CHECK_STR(tokens_of(&t, "猫", ZC_TOKENS_DOCUMENT), "猫");
	/* letters and digits are whole words; punctuation and spaces cut */
	CHECK_STR(tokens_of(&t, "abc 12,猫咪x9", ZC_TOKENS_QUERY), "abc 12 猫咪 x9");
	CHECK_STR(tokens_of(&t, "...!!", ZC_TOKENS_DOCUMENT), "");
	/* a callback's nonzero result stops the walk and is returned */
	memset(&t, 0, sizeof(t));
	t.stop_at = 2;
	CHECK_INT(zc_tokens("周六打本", strlen("周六打本"), ZC_TOKENS_DOCUMENT, collect, &t), 7);
	CHECK_INT(t.n, 2);

	CHECK(zc_is_cjk_run("周六打本", 2));
	CHECK(!zc_is_cjk_run("周", 2));
	CHECK(!zc_is_cjk_run("周六x", 2));
	CHECK(zc_is_punct('!') && zc_is_punct(0x3002 /* 。 */) && !zc_is_punct('a') && !zc_is_punct(0x732B));
	unsigned cp = 0;
	CHECK_INT(zc_utf8_next("猫", 3, &cp), 3);
	CHECK_INT(cp, 0x732B);
	CHECK_INT(zc_utf8_next("\xe7\x8c", 2, &cp), 1); /* truncated: one byte at a time */
}

/* ICU's dictionary words of at least min_chars, deduplicated across calls
 * through `seen`. */
static void words_from_icu(void)
{
	struct zc_wordbreak wb = {0};
	json_t *words = json_array(), *seen = json_object();
	zc_words(&wb, "我们周六一起打游戏", 2, words, seen);
	size_t first = json_array_size(words);
	CHECK(first >= 2);
	size_t i;
	json_t *w;
	int has_game = 0;
	json_array_foreach(words, i, w) {
		CHECK(zc_utf8_len(json_string_value(w)) >= 2);
		has_game |= strcmp(json_string_value(w), "游戏") == 0;
	}
	CHECK(has_game);
	zc_words(&wb, "游戏", 2, words, seen);
	CHECK_INT(json_array_size(words), first); /* already seen */
	zc_words(&wb, "", 2, words, seen);
	CHECK_INT(json_array_size(words), first);
	json_decref(words);
	json_decref(seen);
	zc_wordbreak_release(&wb);
	zc_wordbreak_release(&wb); /* released twice is fine */
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static int expands_to(const struct zc_syn *s, const char *w, const char *other)
{
	json_t *set = json_object();
	char *n = zc_norm(w);
	zc_syn_expand(s, n, set);
	zc_free(n);
	int has = json_object_get(set, other) != NULL;
	json_decref(set);
	return has;
}

static void synonyms_file(void)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/synonyms.json", t_tmpdir());
	struct zc_syn s;
	struct zc_err e = {0};
	zc_syn_init(&s, path);
	/* absent: created from the built-in groups */
	CHECK_INT(zc_syn_refresh(&s, &e), ZCOR_OK);
	CHECK(zc_file_exists(path));
	CHECK(zc_syn_count(&s) > 0);
	CHECK_STR(zc_syn_warning(&s), "");

	/* edited by hand: reloaded; groups sharing a term form one class,
	 * normalised (full-width Ａ is a) */
	write_text(path, "{\"version\":1,\"groups\":[[\"猫\",\"喵星人\"],[\"喵星人\",\"Ａcat\"],[\"狗\",\"汪星人\"]]}");
	CHECK_INT(zc_syn_refresh(&s, &e), ZCOR_OK);
	CHECK_INT(zc_syn_count(&s), 3);
	CHECK(expands_to(&s, "猫", "acat"));
	CHECK(expands_to(&s, "ACAT", "猫"));
	CHECK(expands_to(&s, "猫", "猫"));
	CHECK(!expands_to(&s, "猫", "狗"));
	CHECK(expands_to(&s, "没有的词", "没有的词")); /* a word outside every group is itself */

	/* malformed: the last good groups stay in use, the warning says why,
	 * and the file is never overwritten */
	const char *bad = "{\"version\":1,\"groups\":[[\"只有一个\"]]}";
	write_text(path, bad);
	CHECK_INT(zc_syn_refresh(&s, &e), ZCOR_OK);
	CHECK(strlen(zc_syn_warning(&s)) > 0);
	CHECK_INT(zc_syn_count(&s), 3);
	CHECK(expands_to(&s, "猫", "acat"));
	json_t *terms = json_pack("[ss]", "兔", "兔兔");
	int changed = 0;
	json_t *cls = NULL;
	CHECK(zc_syn_add(&s, terms, &changed, &cls, &e) != ZCOR_OK); /* refused while malformed */
	char *data = NULL;
	size_t len = 0;
	CHECK_INT(zc_read_file(path, 1 << 16, &data, &len, &e), ZCOR_OK);
	CHECK_STR(data, bad);
	zc_free(data);
	write_text(path, "{ not json");
	CHECK_INT(zc_syn_refresh(&s, &e), ZCOR_OK);
	CHECK(strlen(zc_syn_warning(&s)) > 0);

	/* fixed again: the warning goes; a group added is saved */
	write_text(path, "{\"version\":1,\"groups\":[[\"猫\",\"喵星人\"]]}");
	CHECK_INT(zc_syn_refresh(&s, &e), ZCOR_OK);
	CHECK_STR(zc_syn_warning(&s), "");
	CHECK_INT(zc_syn_add(&s, terms, &changed, &cls, &e), ZCOR_OK);
	CHECK_INT(changed, 1);
	CHECK_INT(json_array_size(cls), 2);
	json_decref(cls);
	cls = NULL;
	CHECK_INT(zc_syn_add(&s, terms, &changed, &cls, &e), ZCOR_OK);
	CHECK_INT(changed, 0); /* already one class */
	json_decref(cls);
	json_decref(terms);
	CHECK_INT(zc_syn_count(&s), 2);
	zc_syn_release(&s);

	/* a second reader of the saved file sees both groups */
	zc_syn_init(&s, path);
	CHECK_INT(zc_syn_refresh(&s, &e), ZCOR_OK);
	CHECK_INT(zc_syn_count(&s), 2);
	CHECK(expands_to(&s, "兔兔", "兔"));
	zc_syn_release(&s);

	/* the format check names what is wrong */
	json_t *doc = json_loads("{\"version\":1,\"groups\":[[\"a\",7]]}", 0, NULL);
	CHECK_INT(zc_syn_check(doc, &e), ZCOR_EINVAL);
	CHECK(strlen(e.msg) > 0);
	json_decref(doc);
}

/* issue 19: ASCII skips ICU (zc_norm_n's fast path); for every ASCII
 * character ICU's NFKC_Casefold says the same, and text with anything
 * else still goes through ICU. */
static void issue19_ascii_norm_is_icus(void)
{
	UErrorCode st = U_ZERO_ERROR;
	const UNormalizer2 *cf = unorm2_getNFKCCasefoldInstance(&st);
	CHECK(U_SUCCESS(st));
	for (int c = 1; c < 128; c++) {
		UChar in[2] = {(UChar)c, 0}, out[8];
		st = U_ZERO_ERROR;
		int32_t n = unorm2_normalize(cf, in, 1, out, 8, &st);
		char want[8] = {0}, got_in[2] = {(char)c, 0};
		for (int32_t i = 0; i < n && i < 7; i++)
			want[i] = (char)out[i];
		char *got = zc_norm(got_in);
		if (!U_SUCCESS(st) || n != 1 || strcmp(got, want) != 0) {
			fprintf(stderr, "character %d: zc_norm '%s', ICU '%s'\n", c, got, want);
			t_failures++;
		}
		zc_free(got);
	}
	char *m = zc_norm("Go HIKING at ÀLPE ｈｉｋｉｎｇ");
	CHECK_STR(m, "go hiking at àlpe hiking");
	zc_free(m);
	m = zc_norm_n("AB\0CD", 5); /* a NUL: ICU's way, as before */
	CHECK(m != NULL);
	zc_free(m);
}

const struct t_case t_cases[] = {
	{"norm_nfkc_casefold", norm_nfkc_casefold},
	{"tokens_bigrams_and_words", tokens_bigrams_and_words},
	{"words_from_icu", words_from_icu},
	{"synonyms_file", synonyms_file},
	{"issue19_ascii_norm_is_icus", issue19_ascii_norm_is_icus},
	{0},
};
