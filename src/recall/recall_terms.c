/*
 * recall_terms.c — the terms of a batch (SPEC §4): NFKC + case fold; ICU
 * words of ≥ 2 characters (single characters for messages of ≤ 2, in the
 * scored profile: seed 000 has no such rule); every synonym entry present
 * verbatim and, in the scored profile, every dictionary term (titles,
 * keywords, aliases, slang: substrings looked up in the terms table —
 * seed 000 takes 至少两个字符的词 and 消息中出现的同义词库词条 only); then
 * synonym expansion.
 *
 * Recall layer, behind recall.h (recall_int.h is what the files of recall.c
 * share, not an interface). Reads the store inside the caller's read
 * transaction, through indexes only; never writes and never records history.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/json.h"
#include "base/timeutil.h"
#include "memory/sticker.h"
#include "recall/recall_int.h"
#include "text/norm.h"
#include "text/tokens.h"

/* ---- terms ---------------------------------------------------------- */

static void add_term(struct recall *r, json_t *set, const char *t)
{
	if (!*t || json_object_get(set, t))
		return;
	json_object_set_new(set, t, json_true());
	json_array_append_new(r->terms, json_string(t));
}

/* Every substring of 1..ZC_TERM_MAX_CHARS characters that is a synonym
 * entry or, when `records`, a dictionary term (terms table); min_chars 1
 * only for short text. */
/* The longest term starting with each 2-character prefix of the text that
 * starts any term (term_prefix), as prefix -> maxlen (new reference). */
static int term_prefixes(struct recall *r, const char *norm, size_t from, json_t **out)
{
	size_t len = strlen(norm);
	struct zc_buf list = ZC_BUF_INIT;
	json_t *seen = json_object();
	zc_buf_addc(&list, '[');
	for (size_t i = from; i < len;) {
		unsigned a, b = '\n';
		size_t n1 = zc_utf8_next(norm + i, len - i, &a), n2 = 0;
		if (i + n1 < len)
			n2 = zc_utf8_next(norm + i + n1, len - i - n1, &b);
		if (n2 && a != '\n' && !zc_is_punct(a) && b != '\n' && !zc_is_punct(b)) {
			char p[16];
			memcpy(p, norm + i, n1 + n2);
			p[n1 + n2] = '\0';
			if (!json_object_get(seen, p)) {
				json_object_set_new(seen, p, json_true());
				if (list.len > 1)
					zc_buf_addc(&list, ',');
				zc_json_buf_string(&list, p);
			}
		}
		i += n1;
	}
	zc_buf_addc(&list, ']');
	json_decref(seen);
	*out = json_object();
	sqlite3_stmt *st = zc_stmt(&r->m->store,
				   "SELECT j.value, t.maxlen FROM json_each(?1) j JOIN term_prefix t "
				   "ON t.prefix = j.value",
				   r->e);
	if (!st) {
		zc_buf_release(&list);
		return r->e->code;
	}
	sqlite3_bind_text(st, 1, list.p, (int)list.len, SQLITE_STATIC);
	int step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW)
		json_object_set_new(*out, (const char *)sqlite3_column_text(st, 0),
				    json_integer(sqlite3_column_int(st, 1)));
	sqlite3_reset(st);
	zc_buf_release(&list);
	return step == SQLITE_DONE ? ZCOR_OK : zc_store_fail(&r->m->store, step, r->e, "looking up terms");
}

static int dictionary_terms(struct recall *r, const char *norm, int min_chars, int records, json_t *set)
{
	size_t len = strlen(norm);
	/* the whole batch, start included (issue 17 review: only its last
	 * 8,000 bytes once were, and slang in the first message of a long
	 * batch was not included): the work is bounded by the batch's own
	 * caps (ZC_RECALL_MAX_MESSAGES of ZC_RECALL_MAX_TEXT), linear in its
	 * length like the tokenisation of the lexical stage, and each
	 * substring is looked up once */
	size_t from = 0;
	/* the substrings that can be terms: those whose first two characters
	 * begin some term, up to the longest such term (a short message's
	 * single characters are all tried) */
	json_t *prefixes = NULL;
	int rc = records && min_chars > 1 ? term_prefixes(r, norm, from, &prefixes) : ZCOR_OK;
	if (rc)
		return rc;
	struct zc_buf subs = ZC_BUF_INIT;
	json_t *asked = json_object(); /* the substrings in subs */
	zc_buf_addc(&subs, '[');
	for (size_t i = from; i < len;) {
		unsigned cp;
		size_t first = zc_utf8_next(norm + i, len - i, &cp);
		size_t j = i;
		int maxc = ZC_TERM_MAX_CHARS; /* longest term that can start here */
		for (int c = 1; c <= ZC_TERM_MAX_CHARS && j < len; c++) {
			j += zc_utf8_next(norm + j, len - j, &cp);
			/* terms hold letters, digits and inner spaces, never
			 * punctuation: a substring across one is no term */
			if (cp == '\n' || zc_is_punct(cp))
				break;
			char s[ZC_TERM_MAX_CHARS * 4 + 1];
			memcpy(s, norm + i, j - i);
			s[j - i] = '\0';
			if (c == 2 && prefixes) {
				json_t *m = json_object_get(prefixes, s);
				maxc = m ? (int)json_integer_value(m) : 0;
			}
			if (c < min_chars)
				continue;
			/* synonym entries are in memory: every substring is cheap */
			if (json_object_get(r->m->syn.index, s))
				add_term(r, set, s);
			if (!records || c > maxc || json_object_get(asked, s))
				continue;
			json_object_set_new(asked, s, json_true());
			if (subs.len > 1)
				zc_buf_addc(&subs, ',');
			zc_json_buf_string(&subs, s);
		}
		i += first;
	}
	zc_buf_addc(&subs, ']');
	json_decref(prefixes);
	json_decref(asked);
	if (!records) {
		zc_buf_release(&subs);
		return ZCOR_OK;
	}
	int step;
	/* a term of this conversation's or a global record: another
	 * conversation's keywords must not show up in this one's terms */
	sqlite3_stmt *st = zc_stmt(&r->m->store,
				   "SELECT j.value FROM json_each(?1) j WHERE EXISTS (SELECT 1 FROM terms t "
				   "WHERE t.term = j.value AND t.scope IN ('global', ?9))",
				   r->e);
	if (!st) {
		zc_buf_release(&subs);
		return r->e->code;
	}
	sqlite3_bind_text(st, 1, subs.p, (int)subs.len, SQLITE_STATIC);
	zc_recall_bind_conv(r, st);
	while ((step = sqlite3_step(st)) == SQLITE_ROW)
		add_term(r, set, (const char *)sqlite3_column_text(st, 0));
	sqlite3_reset(st);
	if (step != SQLITE_DONE)
		rc = zc_store_fail(&r->m->store, step, r->e, "looking up terms");
	zc_buf_release(&subs);
	return rc;
}

/* A message of at most 2 characters (not counting spaces). */
int zc_recall_short_message(const char *norm)
{
	size_t chars = 0;
	for (const char *p = norm; *p && chars <= 2;) {
		unsigned cp;
		p += zc_utf8_next(p, strlen(p), &cp);
		if (cp > ' ')
			chars++;
	}
	return chars <= 2;
}

int zc_recall_gather_terms(struct recall *r, const char *norm)
{
	json_t *set = json_object();
	/* single characters for a message of at most 2 are seed 003's rule
	 * (短查询（≤2 字）退化成 unigram); seed 000 takes words of at least
	 * two characters and the synonym entries in the message, whatever
	 * its length (至少两个字符的词), so the zcor profile keeps to that */
	int rc, is_short = r->profile == ZC_PROFILE_SCORED && zc_recall_short_message(norm);
	if (is_short) {
		/* very short messages: single characters */
		for (const char *p = norm; *p;) {
			unsigned cp;
			size_t n = zc_utf8_next(p, strlen(p), &cp);
			if (cp > ' ') {
				char *s = zc_strndup(p, n);
				add_term(r, set, s);
				zc_free(s);
			}
			p += n;
		}
	}
	json_t *words = json_array(), *wseen = json_object();
	zc_words(&r->rs->words, norm, 2, words, wseen);
	size_t i;
	json_t *w;
	json_array_foreach(words, i, w) add_term(r, set, json_string_value(w));
	json_decref(words);
	json_decref(wseen);
	/* the records' names present verbatim (terms table) are seed 003's
	 * entity and slang rule; seed 000 (profile zcor) matches its words and
	 * synonym entries against titles and keywords, nothing more (issue 17
	 * audit) */
	rc = dictionary_terms(r, norm, is_short ? 1 : 2, r->profile == ZC_PROFILE_SCORED, set);
	json_decref(set);
	if (rc)
		return rc;
	json_array_foreach(r->terms, i, w) {
		json_t *cls = json_object();
		zc_syn_expand(&r->m->syn, json_string_value(w), cls);
		const char *k;
		json_t *v;
		json_object_foreach(cls, k, v) {
			if (!json_object_get(r->seen, k)) {
				json_object_set_new(r->seen, k, json_true());
				json_array_append_new(r->expanded, json_string(k));
			}
		}
		json_decref(cls);
	}
	return ZCOR_OK;
}
