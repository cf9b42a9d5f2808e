/*
 * recall.c — auto-recall for a batch of messages (SPEC §4, recall.h).
 *
 *   terms      NFKC + case fold; ICU words of ≥ 2 characters (single
 *              characters for messages of ≤ 2); every dictionary term
 *              present verbatim (substrings looked up in the terms table,
 *              and in the synonym index); then synonym expansion.
 *   candidates only records the conversation may see (global + its own),
 *              current, hot and not 存疑 — filtered before anything is
 *              scored, so other conversations' records are never candidates:
 *              entity hits (terms table), character-bigram IDF over
 *              nodes_fts (scored) or title/keyword phrase hits (zcor), the
 *              speakers and @-mentioned people. Each stage reads at most a
 *              bounded number of index entries, whatever the store's size.
 *   score      profile zcor (seed 000) or scored (seed 003).
 *   pack       into recallChars, ids kept when text is cut.
 */
#include "recall/recall.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/json.h"
#include "base/timeutil.h"
#include "memory/sticker.h"
#include "text/norm.h"
#include "text/tokens.h"

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
	double lexraw; /* sum of IDF of the tokens it contains */
	int zhits;
	const char *always;
	const char *why;
	int picked, truncated;
	int64_t updated;
	char cite[240]; /* view path#Lnn of an entry of a memory view, or "" */
};

/* (seq, kind) -> 1 + index, open addressing; 0 is an empty slot */
struct seqmap {
	sqlite3_int64 *key;
	size_t *val;
	size_t cap, n;
};

static size_t *seqmap_slot(struct seqmap *m, sqlite3_int64 k)
{
	k++; /* keys are >= 0; 0 marks an empty slot */
	if ((m->n + 1) * 2 > m->cap) {
		struct seqmap old = *m;
		m->cap = old.cap ? old.cap * 2 : 128;
		m->key = zc_calloc(m->cap, sizeof(*m->key));
		m->val = zc_calloc(m->cap, sizeof(*m->val));
		m->n = 0;
		for (size_t i = 0; i < old.cap; i++)
			if (old.key[i])
				*seqmap_slot(m, old.key[i] - 1) = old.val[i];
		zc_free(old.key);
		zc_free(old.val);
	}
	size_t i = (size_t)((unsigned long long)k * 0x9E3779B97F4A7C15ULL >> 7) & (m->cap - 1);
	while (m->key[i] && m->key[i] != k)
		i = (i + 1) & (m->cap - 1);
	if (!m->key[i]) {
		m->key[i] = k;
		m->n++;
	}
	return &m->val[i];
}

static void seqmap_clear(struct seqmap *m)
{
	zc_free(m->key);
	zc_free(m->val);
	memset(m, 0, sizeof(*m));
}

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
	struct item *it;
	size_t n, cap;
	struct seqmap where; /* (seq, kind) -> index in it */
};

/* ---- request -------------------------------------------------------- */

static int bad(struct zc_err *e, const char *field, const char *why)
{
	return zc_fail(e, ZCOR_EINVAL, "field '%s': %s", field, why);
}

/* Checks the request; builds the query text (messages and speakers). */
static int read_request(const json_t *req, struct zc_buf *text, json_t **people, int *explain,
			struct zc_err *e)
{
	if (!json_is_object(req))
		return zc_fail(e, ZCOR_EINVAL, "the recall request must be a JSON object");
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)req, k, v) {
		if (strcmp(k, "conversation") && strcmp(k, "messages") && strcmp(k, "speakers") &&
		    strcmp(k, "mentions") && strcmp(k, "explain"))
			return zc_fail(e, ZCOR_EINVAL,
				       "unknown field '%s'; a recall request has conversation, messages, "
				       "speakers, mentions, explain",
				       ZC_Q(k, 60));
	}
	const char *conv = zc_json_str(req, "conversation");
	if (!conv)
		return bad(e, "conversation", "is required (group:<id>, private:<qq> or console:<name>)");
	if (zc_conv_check(conv, e))
		return zc_err_prefix(e, "field 'conversation'");
	json_t *msgs = json_object_get(req, "messages");
	if (!json_is_array(msgs) || json_array_size(msgs) == 0 ||
	    json_array_size(msgs) > ZC_RECALL_MAX_MESSAGES)
		return bad(e, "messages", "must be an array of 1 to 100 messages");
	*people = json_array();
	size_t i;
	json_array_foreach(msgs, i, v) {
		json_t *t = json_is_string(v) ? v : json_object_get(v, "text");
		if (!json_is_string(t) || zc_utf8_len(json_string_value(t)) > ZC_RECALL_MAX_TEXT)
			return bad(e, "messages", "each message is a string or {text, senderId?, senderName?} "
						  "with a text of at most 20000 characters");
		zc_buf_adds(text, json_string_value(t));
		zc_buf_addc(text, '\n');
		const char *sid = json_is_object(v) ? zc_json_str(v, "senderId") : NULL;
		const char *sname = json_is_object(v) ? zc_json_str(v, "senderName") : NULL;
		if (sid)
			json_array_append_new(*people, json_string(sid));
		if (sname) {
			zc_buf_adds(text, sname);
			zc_buf_addc(text, '\n');
		}
	}
	json_t *sp = json_object_get(req, "speakers");
	if (sp && !json_is_array(sp))
		return bad(e, "speakers", "must be an array of {id, name?}");
	json_array_foreach(sp, i, v) {
		const char *id = zc_json_str(v, "id");
		if (!id)
			return bad(e, "speakers", "each speaker needs a string 'id'");
		json_array_append_new(*people, json_string(id));
		if (zc_json_str(v, "name")) {
			zc_buf_adds(text, zc_json_str(v, "name"));
			zc_buf_addc(text, '\n');
		}
	}
	json_t *mn = json_object_get(req, "mentions");
	if (mn && !json_is_array(mn))
		return bad(e, "mentions", "must be an array of person ids");
	json_array_foreach(mn, i, v) {
		if (!json_is_string(v))
			return bad(e, "mentions", "must be an array of person ids (strings)");
		json_array_append(*people, v);
	}
	json_t *ex = json_object_get(req, "explain");
	if (ex && !json_is_boolean(ex))
		return bad(e, "explain", "must be true or false");
	*explain = json_is_true(ex);
	return ZCOR_OK;
}

/* ---- candidates ------------------------------------------------------ */

static struct item *item_of(struct recall *r, char kind, sqlite3_int64 seq)
{
	/* nodes and people share the map: a person's key is odd */
	sqlite3_int64 key = seq * 2 + (kind == 'p');
	size_t *at = seqmap_slot(&r->where, key);
	if (*at)
		return &r->it[*at - 1];
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 64;
		r->it = zc_realloc(r->it, r->cap * sizeof(*r->it));
	}
	struct item *x = &r->it[r->n];
	memset(x, 0, sizeof(*x));
	x->kind = kind;
	x->seq = seq;
	*at = ++r->n;
	return x;
}

static void add_term(struct recall *r, json_t *set, const char *t)
{
	if (!*t || json_object_get(set, t))
		return;
	json_object_set_new(set, t, json_true());
	json_array_append_new(r->terms, json_string(t));
}

/* Every substring of 1..ZC_TERM_MAX_CHARS characters that is a dictionary
 * term (terms table) or a synonym entry; min_chars 1 only for short text. */
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

static void bind_conv(struct recall *r, sqlite3_stmt *st);

static int dictionary_terms(struct recall *r, const char *norm, int min_chars, json_t *set)
{
	size_t len = strlen(norm);
	/* a batch can be long (100 messages); verbatim terms are looked for
	 * in its last ZC_RECALL_TERM_WINDOW bytes, the end being what is
	 * talked about */
	size_t from = len > ZC_RECALL_TERM_WINDOW ? len - ZC_RECALL_TERM_WINDOW : 0;
	while (from < len && ((unsigned char)norm[from] & 0xC0) == 0x80)
		from++;
	/* the substrings that can be terms: those whose first two characters
	 * begin some term, up to the longest such term (a short message's
	 * single characters are all tried) */
	json_t *prefixes = NULL;
	int rc = min_chars > 1 ? term_prefixes(r, norm, from, &prefixes) : ZCOR_OK;
	if (rc)
		return rc;
	struct zc_buf subs = ZC_BUF_INIT;
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
			if (c > maxc)
				continue;
			if (subs.len > 1)
				zc_buf_addc(&subs, ',');
			zc_json_buf_string(&subs, s);
		}
		i += first;
	}
	zc_buf_addc(&subs, ']');
	json_decref(prefixes);
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
	bind_conv(r, st);
	while ((step = sqlite3_step(st)) == SQLITE_ROW)
		add_term(r, set, (const char *)sqlite3_column_text(st, 0));
	sqlite3_reset(st);
	if (step != SQLITE_DONE)
		rc = zc_store_fail(&r->m->store, step, r->e, "looking up terms");
	zc_buf_release(&subs);
	return rc;
}

/* A message of at most 2 characters (not counting spaces). */
static int short_message(const char *norm)
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

static int gather_terms(struct recall *r, const char *norm)
{
	json_t *set = json_object();
	int rc, is_short = short_message(norm);
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
	rc = dictionary_terms(r, norm, is_short ? 1 : 2, set);
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

/* (the unary + keeps SQLite off the indexes on these columns: each query
 * here has a better one — seq, or updated_at from its newest end — and
 * walking nodes_scope or nodes_superseded_by would visit most nodes) */
#define CURRENT_SQL ZC_MAY_INJECT_SQL("+n.", "n.") " AND " ZC_INJECT_SCOPE_SQL("+n.")
/* the same, read from the nodes_recall index */
#define LIVE_INDEXED_SQL ZC_MAY_INJECT_SQL("n.", "n.")
#define CURRENT_INDEXED_SQL LIVE_INDEXED_SQL " AND " ZC_INJECT_SCOPE_SQL("n.")

static void bind_conv(struct recall *r, sqlite3_stmt *st)
{
	sqlite3_bind_text(st, 9, r->ctx.conversation, -1, SQLITE_TRANSIENT);
}

/* Entity hits: nodes and people one of whose terms is an expanded term,
 * in this conversation's scope or global; for a very common term only the
 * most recent ZC_ENTITY_PER_TERM per scope. */
static int entity_candidates(struct recall *r)
{
	size_t i;
	json_t *t;
	const char *scopes[2] = {"global", r->ctx.conversation};
	json_array_foreach(r->expanded, i, t) {
		for (int sc = 0; sc < 2; sc++) {
			sqlite3_stmt *st = zc_stmt(&r->m->store,
						   "SELECT kind, ref FROM terms WHERE term = ?1 AND scope = ?2 "
						   "ORDER BY kind DESC, ref DESC LIMIT ?3",
						   r->e);
			if (!st)
				return r->e->code;
			sqlite3_bind_text(st, 1, json_string_value(t), -1, SQLITE_TRANSIENT);
			sqlite3_bind_text(st, 2, scopes[sc], -1, SQLITE_STATIC);
			sqlite3_bind_int(st, 3, ZC_ENTITY_PER_TERM);
			int step;
			while ((step = sqlite3_step(st)) == SQLITE_ROW) {
				const char *kind = (const char *)sqlite3_column_text(st, 0);
				item_of(r, kind[0] == 'p' ? 'p' : 'n', sqlite3_column_int64(st, 1))->entity = 1;
			}
			sqlite3_reset(st);
			if (step != SQLITE_DONE)
				return zc_store_fail(&r->m->store, step, r->e, "recall (terms)");
		}
	}
	return ZCOR_OK;
}

/* The FTS5 filter for what this conversation may be shown: live records
 * of its scope or global (the recall_tag column, see store.c). */
static void scope_filter(struct recall *r, struct zc_buf *q)
{
	zc_buf_adds(q, "recall_tag : zlive AND (recall_tag : s");
	for (const char *p = "global"; *p; p++)
		zc_buf_addf(q, "%02x", (unsigned char)*p);
	zc_buf_adds(q, " OR recall_tag : s");
	for (const char *p = r->ctx.conversation; *p; p++)
		zc_buf_addf(q, "%02x", (unsigned char)*p);
	zc_buf_adds(q, ")");
}

/* Quotes s as an FTS5 string ("a""b"). */
static void fts_quote(struct zc_buf *b, const char *s)
{
	zc_buf_addc(b, '"');
	for (; *s; s++) {
		if (*s == '"')
			zc_buf_addc(b, '"');
		zc_buf_addc(b, *s);
	}
	zc_buf_addc(b, '"');
}

static int collect_token(void *ud, const char *tok, size_t len, size_t start, size_t end)
{
	json_t **pair = ud; /* [array, seen] */
	char *s = zc_strndup(tok, len);
	if (!json_object_get(pair[1], s) && json_array_size(pair[0]) < 256) {
		json_object_set_new(pair[1], s, json_true());
		json_array_append_new(pair[0], json_string(s));
	}
	zc_free(s);
	return 0;
}

/*
 * Token lookups kept between messages: the rows of a rare token, or the
 * fact that a token is common. Chat repeats its words, and each lookup in
 * nodes_fts costs tens of microseconds. Valid while meta.nodes_gen (bumped
 * by triggers on every change of nodes, from any connection) is unchanged;
 * "common" stays true as records are added, so it survives a change.
 */
#define TOKCACHE_SLOTS 4096

struct tokslot {
	char tok[48];
	int n; /* rows, or -1: in more than ZC_LEXICAL_MAX_DF records */
	sqlite3_int64 *rows;
	int *sid; /* each row's scope (an id in scopes), or -1: never injected */
};

struct zc_recall_cache {
	long long gen;
	json_t *scopes; /* scope -> id, for tokslot.sid */
	struct tokslot slot[TOKCACHE_SLOTS];
};

/*
 * What recall reads, in the order zc_recall_warm takes it (lookups per
 * megabyte, measured: pages read per message by b-tree at 100k): the
 * small tables and ranges every message probes; the scoring index and the terms;
 * the lengths; the rows of what gets injected; the full-text index's
 * blocks. The big ones newest first: a budget that holds only part of
 * them keeps the records recall ranks up by recency.
 */
static const char *const warm_sql[] = {
	"SELECT value FROM meta ORDER BY key",
	"SELECT maxlen FROM term_prefix",
	"SELECT v FROM nodes_fts_config",
	"SELECT pgno FROM nodes_fts_idx",
	/* the header's extras: INDEX.md, the slang vocabulary, the stickers */
	"SELECT seq FROM nodes WHERE kind IN ('document', 'cognition', 'sticker')",
	"SELECT seq FROM nodes INDEXED BY nodes_view WHERE scope = 'global' AND kind = 'sticker'",
	"SELECT person_id FROM people ORDER BY person_id",
	"SELECT name FROM people NOT INDEXED",
	"SELECT line FROM view_lines ORDER BY kind, ref", /* citations */
	/* the no-hit fallback's global records (a conversation's own are
	 * read by its first fallback) */
	"SELECT seq FROM nodes INDEXED BY nodes_scope_pinned WHERE pinned = 1 AND scope = 'global' AND "
	"tier = 'hot' ORDER BY updated_at DESC LIMIT 256",
	"SELECT seq FROM nodes INDEXED BY nodes_scope_recent WHERE scope = 'global' AND tier = 'hot' "
	"ORDER BY updated_at DESC LIMIT 256",
	"SELECT seq FROM nodes INDEXED BY nodes_recall ORDER BY seq DESC",
	/* (ORDER BY the key: a WITHOUT ROWID table's own b-tree, not an index) */
	"SELECT ref FROM terms ORDER BY term, scope, kind, ref",
	"SELECT id FROM nodes_fts_docsize ORDER BY id DESC",
	"SELECT seq FROM nodes NOT INDEXED ORDER BY seq DESC",
	"SELECT block FROM nodes_fts_data ORDER BY id DESC",
};

int zc_recall_warm(struct zc_recall *rs, size_t budget, json_t **out, struct zc_err *e)
{
	struct zc_mem *m = rs->m;
	double t0 = zc_time_mono_ms();
	zc_store_prefetch(&m->store, ZC_WARM_PREFETCH_MAX);
	char sql[64];
	size_t cache = budget + ZC_WARM_HEADROOM;
	if (cache < ZC_STORE_CACHE_BYTES) /* never smaller than a handle's own */
		cache = ZC_STORE_CACHE_BYTES;
	snprintf(sql, sizeof(sql), "PRAGMA cache_size = -%zu", cache >> 10);
	int rc = zc_exec(&m->store, sql, e);
	if (rc || (rc = zc_store_begin(&m->store, 0, e)))
		return rc;
	long pages = 0;
	for (size_t i = 0; !rc && i < sizeof(warm_sql) / sizeof(warm_sql[0]); i++)
		rc = zc_store_warm(&m->store, warm_sql[i], budget, &pages, e);
	zc_store_rollback(&m->store);
	if (rc)
		return rc;
	*out = json_pack("{s:I, s:I, s:f}", "pages", (json_int_t)pages, "cacheBytes",
			 (json_int_t)zc_store_cache_bytes(&m->store), "ms", zc_time_mono_ms() - t0);
	return ZCOR_OK;
}

void zc_recall_open(struct zc_recall *rs, struct zc_mem *m)
{
	memset(rs, 0, sizeof(*rs));
	rs->m = m;
}

void zc_recall_close(struct zc_recall *rs)
{
	if (!rs)
		return;
	struct zc_recall_cache *c = rs->cache;
	if (c) {
		for (size_t i = 0; i < TOKCACHE_SLOTS; i++) {
			zc_free(c->slot[i].rows);
			zc_free(c->slot[i].sid);
		}
		json_decref(c->scopes);
		zc_free(c);
	}
	zc_wordbreak_release(&rs->words);
	memset(rs, 0, sizeof(*rs));
}

/* The cache, emptied of rare tokens' rows if the nodes changed. */
static struct zc_recall_cache *token_cache(struct recall *r)
{
	long long gen = 0;
	if (zc_meta_get_int(&r->m->store, "nodes_gen", &gen, NULL))
		return NULL;
	struct zc_recall_cache *c = r->rs->cache;
	if (!c) {
		c = r->rs->cache = zc_calloc(1, sizeof(*c));
		c->scopes = json_object();
	}
	if (c->gen != gen) {
		for (size_t i = 0; i < TOKCACHE_SLOTS; i++) {
			struct tokslot *t = &c->slot[i];
			if (t->n >= 0) {
				zc_free(t->rows);
				zc_free(t->sid);
				memset(t, 0, sizeof(*t));
			}
		}
		c->gen = gen;
	}
	return c;
}

static struct tokslot *token_slot(struct zc_recall_cache *c, const char *tok)
{
	if (!c || strlen(tok) >= sizeof(c->slot[0].tok))
		return NULL;
	unsigned long h = 5381;
	for (const char *p = tok; *p; p++)
		h = h * 33 + (unsigned char)*p;
	return &c->slot[h & (TOKCACHE_SLOTS - 1)];
}

struct lexhit {
	sqlite3_int64 seq;
	double score;
};

static int by_lex(const void *a, const void *b)
{
	const struct lexhit *x = a, *y = b;
	if (x->score != y->score)
		return x->score < y->score ? 1 : -1;
	return x->seq < y->seq ? 1 : x->seq > y->seq ? -1 : 0;
}

/* Adds log(N / df) of one token to every record that contains it. */
static void add_idf(struct seqmap *map, struct lexhit **hits, size_t *nhits, size_t *hcap,
		    const sqlite3_int64 *rows, int df, double total)
{
	if (df <= 0)
		return;
	double idf = log(total / ((double)df + 0.5));
	for (int k = 0; k < df; k++) {
		size_t *at = seqmap_slot(map, rows[k]);
		if (!*at) {
			if (*nhits == *hcap) {
				*hcap = *hcap ? *hcap * 2 : 256;
				*hits = zc_realloc(*hits, *hcap * sizeof(**hits));
			}
			(*hits)[*nhits] = (struct lexhit){rows[k], 0};
			*at = ++*nhits;
		}
		(*hits)[*at - 1].score += idf;
	}
}

/* SQLite's varint, as FTS5 writes the token counts of a row. */
static const unsigned char *get_varint(const unsigned char *p, const unsigned char *end,
				       long long *v)
{
	unsigned long long x = 0;
	for (int i = 0; i < 9 && p < end; i++) {
		if (i == 8) {
			x = (x << 8) | *p++;
			break;
		}
		x = (x << 7) | (*p & 0x7f);
		if (!(*p++ & 0x80))
			break;
	}
	*v = (long long)x;
	return p;
}

/* The length of a lexical candidate for the BM25-like damping: the tokens
 * of its title and content, from FTS5's own per-row counts (a small dense
 * table: the row itself is not read until the record is picked). */
static int doc_length(struct recall *r, struct item *x)
{
	sqlite3_stmt *st = zc_stmt(&r->m->store, "SELECT sz FROM nodes_fts_docsize WHERE id = ?1", r->e);
	if (!st)
		return r->e->code;
	sqlite3_bind_int64(st, 1, x->seq);
	int step = sqlite3_step(st);
	if (step == SQLITE_ROW) {
		const unsigned char *p = sqlite3_column_blob(st, 0);
		const unsigned char *end = p + sqlite3_column_bytes(st, 0);
		long long col[4] = {0}; /* title, keywords, content, recall_tag */
		for (int i = 0; i < 4 && p && p < end; i++)
			p = get_varint(p, end, &col[i]);
		x->length = col[0] + col[2];
	} else if (step != SQLITE_DONE) {
		sqlite3_reset(st);
		return zc_store_fail(&r->m->store, step, r->e, "recall (lengths)");
	}
	sqlite3_reset(st);
	return ZCOR_OK;
}

/* The id of a scope in the map (a new one gets the next). */
static int scope_id(json_t *scopes, const char *scope)
{
	json_t *v = json_object_get(scopes, scope);
	if (v)
		return (int)json_integer_value(v);
	int id = (int)json_object_size(scopes);
	json_object_set_new(scopes, scope, json_integer(id));
	return id;
}

/* Each row's scope id, or -1 for a record recall never injects (superseded,
 * archived, 存疑, a document) or that is gone. */
static int row_scopes(struct recall *r, json_t *scopes, const sqlite3_int64 *rows, int n, int *sid)
{
	for (int k = 0; k < n; k++)
		sid[k] = -1;
	if (n == 0)
		return ZCOR_OK;
	sqlite3_stmt *st = zc_stmt(&r->m->store,
				   "SELECT n.seq, n.scope FROM json_each(?1) j CROSS JOIN nodes n INDEXED BY "
				   "nodes_recall ON n.seq = j.value WHERE " LIVE_INDEXED_SQL,
				   r->e);
	if (!st)
		return r->e->code;
	struct zc_buf list = ZC_BUF_INIT;
	zc_buf_addc(&list, '[');
	for (int k = 0; k < n; k++)
		zc_buf_addf(&list, "%s%lld", k ? "," : "", (long long)rows[k]);
	zc_buf_addc(&list, ']');
	sqlite3_bind_text(st, 1, list.p, (int)list.len, SQLITE_STATIC);
	int step, k = 0;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		sqlite3_int64 seq = sqlite3_column_int64(st, 0);
		while (k < n && rows[k] != seq) /* the rows come in the list's order */
			k++;
		if (k < n)
			sid[k++] = scope_id(scopes, (const char *)sqlite3_column_text(st, 1));
	}
	sqlite3_reset(st);
	zc_buf_release(&list);
	return step == SQLITE_DONE ? ZCOR_OK : zc_store_fail(&r->m->store, step, r->e, "recall (scopes)");
}

/*
 * scored: character-bigram IDF lexical score (seed 003). Each token of the
 * message (bigrams; a lone character in a short message as a prefix
 * query) is looked up in nodes_fts; a record scores the sum of the IDF
 * log(N / df) of the tokens it contains. Tokens in more than
 * ZC_LEXICAL_MAX_DF records say almost nothing (low IDF) and are left
 * out, which also keeps the cost of a message independent of the size of
 * the store. The best ZC_LEXICAL_KEEP go on to the scope filter in
 * load_items.
 */
static int lexical_candidates(struct recall *r, const char *norm, int short_message)
{
	/* the tokens of words and terms first, then the rest of the text's,
	 * newest first: the end of a batch is what is being talked about */
	json_t *toks = json_array(), *seen = json_object(), *text = json_array();
	json_t *pair[2] = {toks, seen};
	size_t i, probed = 0;
	json_t *t;
	json_array_foreach(r->expanded, i, t) {
		const char *w = json_string_value(t);
		zc_tokens(w, strlen(w), ZC_TOKENS_QUERY, collect_token, pair);
	}
	json_t *tpair[2] = {text, json_object()};
	zc_tokens(norm, strlen(norm), ZC_TOKENS_QUERY, collect_token, tpair);
	json_decref(tpair[1]);
	for (i = json_array_size(text); i-- > 0;)
		collect_token(pair, json_string_value(json_array_get(text, i)),
			      json_string_length(json_array_get(text, i)), 0, 0);
	json_decref(text);
	json_decref(seen);
	struct zc_store *s = &r->m->store;
	struct zc_recall_cache *cache = token_cache(r);
	int rc = ZCOR_OK, step;
	double total = 1;
	struct seqmap map = {0}; /* rowid -> 1 + index in hits */
	struct lexhit *hits = NULL;
	size_t nhits = 0, hcap = 0;
	sqlite3_stmt *st = zc_stmt(s, "SELECT max(seq) FROM nodes", r->e);
	if (!st) {
		rc = r->e->code;
		goto out;
	}
	if (sqlite3_step(st) == SQLITE_ROW)
		total = (double)sqlite3_column_int64(st, 0) + 1;
	sqlite3_reset(st);
	/* only what this conversation may be shown counts (Q-SCOPE): a
	 * record of another conversation neither takes a candidate's place
	 * nor lowers a token's weight. (Not yet: a token in more than
	 * ZC_LEXICAL_MAX_DF records of any scope is skipped as common for
	 * every conversation; entity hits, which are scoped, still find
	 * records named by it.) */
	json_t *scopes = cache ? json_incref(cache->scopes) : json_object();
	int sglobal = scope_id(scopes, "global");
	int sconv = r->ctx.conversation ? scope_id(scopes, r->ctx.conversation) : -2;
	json_array_foreach(toks, i, t) {
		const char *tok = json_string_value(t);
		struct tokslot *slot = token_slot(cache, tok);
		int cached = slot && strcmp(slot->tok, tok) == 0;
		if (cached && slot->n < 0)
			continue; /* known to be in too many records */
		if (probed++ >= ZC_LEXICAL_TOKENS)
			break;
		sqlite3_int64 rows[ZC_LEXICAL_MAX_DF + 1], vis[ZC_LEXICAL_MAX_DF + 1];
		int sid[ZC_LEXICAL_MAX_DF + 1];
		const sqlite3_int64 *rp = rows; /* the token's rows and their scopes */
		const int *sp = sid;
		int df = 0;
		if (cached) {
			df = slot->n;
			rp = slot->rows;
			sp = slot->sid;
		} else {
			/* no column filter: recall_tag holds only 's…'/'z…' tags, and a
			 * filter makes FTS5 decode every position list */
			struct zc_buf q = ZC_BUF_INIT;
			fts_quote(&q, tok);
			if (short_message && zc_utf8_len(tok) == 1)
				zc_buf_adds(&q, " *"); /* a lone character anywhere in the text */
			st = zc_stmt(s,
				     "SELECT rowid FROM nodes_fts WHERE nodes_fts MATCH ?1 ORDER BY rowid DESC "
				     "LIMIT ?2",
				     r->e);
			if (!st) {
				zc_buf_release(&q);
				rc = r->e->code;
				break;
			}
			sqlite3_bind_text(st, 1, q.p, -1, SQLITE_TRANSIENT);
			sqlite3_bind_int(st, 2, ZC_LEXICAL_MAX_DF + 1);
			while ((step = sqlite3_step(st)) == SQLITE_ROW)
				rows[df++] = sqlite3_column_int64(st, 0);
			sqlite3_reset(st);
			zc_buf_release(&q);
			if (step != SQLITE_DONE) {
				rc = zc_store_fail(s, step, r->e, "recall (lexical)");
				break;
			}
			if (df <= ZC_LEXICAL_MAX_DF && (rc = row_scopes(r, scopes, rows, df, sid)))
				break;
			if (slot) {
				zc_free(slot->rows);
				zc_free(slot->sid);
				snprintf(slot->tok, sizeof(slot->tok), "%s", tok);
				slot->n = df > ZC_LEXICAL_MAX_DF ? -1 : df;
				slot->rows = NULL;
				slot->sid = NULL;
				if (df > 0 && df <= ZC_LEXICAL_MAX_DF) {
					slot->rows = zc_malloc((size_t)df * sizeof(*slot->rows));
					memcpy(slot->rows, rows, (size_t)df * sizeof(*rows));
					slot->sid = zc_malloc((size_t)df * sizeof(*slot->sid));
					memcpy(slot->sid, sid, (size_t)df * sizeof(*sid));
				}
			}
			if (df > ZC_LEXICAL_MAX_DF)
				continue;
		}
		int vdf = 0;
		for (int k = 0; k < df; k++)
			if (sp[k] >= 0 && (sp[k] == sglobal || sp[k] == sconv))
				vis[vdf++] = rp[k];
		add_idf(&map, &hits, &nhits, &hcap, vis, vdf, total);
	}
	json_decref(scopes);
	if (rc)
		goto out;
	if (nhits) {
		qsort(hits, nhits, sizeof(*hits), by_lex);
		for (size_t k = 0; k < nhits && k < ZC_LEXICAL_KEEP; k++) {
			struct item *x = item_of(r, 'n', hits[k].seq);
			x->lexraw = hits[k].score;
			if ((rc = doc_length(r, x)))
				goto out;
		}
	}
out:
	seqmap_clear(&map);
	zc_free(hits);
	json_decref(toks);
	return rc;
}

/* zcor: nodes whose title or keywords contain an expanded term. FTS finds
 * them by phrase ("t*" for a single character); the loader then checks the
 * substring exactly and counts distinct terms. */
static int phrase_candidates(struct recall *r)
{
	size_t i;
	json_t *t;
	json_array_foreach(r->expanded, i, t) {
		const char *term = json_string_value(t);
		struct zc_buf q = ZC_BUF_INIT;
		scope_filter(r, &q);
		zc_buf_adds(&q, " AND {title keywords} : ");
		if (zc_utf8_len(term) == 1) {
			fts_quote(&q, term);
			zc_buf_adds(&q, " *");
		} else {
			fts_quote(&q, term);
		}
		/* newest first (creation order): a very common term keeps the
		 * most recent ZC_PHRASE_PER_TERM records */
		sqlite3_stmt *st = zc_stmt(&r->m->store,
					   "SELECT rowid FROM nodes_fts WHERE nodes_fts MATCH ?1 "
					   "ORDER BY rowid DESC LIMIT ?2",
					   r->e);
		if (!st) {
			zc_buf_release(&q);
			return r->e->code;
		}
		sqlite3_bind_text(st, 1, q.p, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int(st, 2, ZC_PHRASE_PER_TERM);
		int step;
		while ((step = sqlite3_step(st)) == SQLITE_ROW)
			item_of(r, 'n', sqlite3_column_int64(st, 0));
		sqlite3_reset(st);
		zc_buf_release(&q);
		if (step != SQLITE_DONE)
			return zc_store_fail(&r->m->store, step, r->e, "recall (titles)");
	}
	return ZCOR_OK;
}

/* The speakers and @-mentioned people, by person id. */
static int speaker_candidates(struct recall *r, json_t *ids)
{
	if (json_array_size(ids) == 0)
		return ZCOR_OK;
	sqlite3_stmt *st = zc_stmt(&r->m->store,
				   "SELECT seq FROM people WHERE person_id IN (SELECT value FROM json_each(?1))",
				   r->e);
	if (!st)
		return r->e->code;
	sqlite3_bind_text(st, 1, zc_json_dump(ids), -1, zc_free);
	int step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW)
		item_of(r, 'p', sqlite3_column_int64(st, 0))->always = "speaker or mentioned";
	sqlite3_reset(st);
	return step == SQLITE_DONE ? ZCOR_OK : zc_store_fail(&r->m->store, step, r->e, "recall (people)");
}

/* ---- loading and scoring -------------------------------------------- */

static const char *section_of(const struct item *x)
{
	if (x->section[0])
		return x->section;
	if (strcmp(x->kindname, "cognition") == 0)
		return "认知";
	if (strcmp(x->kindname, "sticker") == 0)
		return "表情包";
	return "记忆";
}

static double section_prior(const char *sec)
{
	static const struct {
		const char *name;
		double prior;
	} priors[] = {{"人物", 1.0}, {"惯例与偏好", 0.8}, {"在追", 0.8}, {"认知", 0.7},
		      {"事实", 0.6}, {"记忆", 0.6},         {"表情包", 0.4}};
	for (size_t i = 0; i < sizeof(priors) / sizeof(priors[0]); i++)
		if (strcmp(priors[i].name, sec) == 0)
			return priors[i].prior;
	return 0.5;
}

/* A date "YYYY-MM-DD" (a fact's date or an expiry) as ms at UTC midnight. */
static int64_t day_ms(const char *d)
{
	if (!d || strlen(d) < 10)
		return -1;
	char buf[40];
	snprintf(buf, sizeof(buf), "%.10sT00:00:00Z", d);
	int64_t ms;
	return zc_time_parse(buf, "date", &ms, NULL) == ZCOR_OK ? ms : -1;
}

/* How many of the terms the normalised title or a keyword of x contains. */
static int terms_in_title_or_keywords(const struct item *x, const json_t *terms)
{
	struct zc_buf hay = ZC_BUF_INIT;
	zc_buf_adds(&hay, x->title_norm ? x->title_norm : "");
	json_t *kws = json_loads(x->keywords ? x->keywords : "[]", 0, NULL);
	size_t i;
	json_t *k;
	json_array_foreach(kws, i, k) {
		char *kn = zc_norm(json_string_value(k));
		zc_buf_addc(&hay, '\n'); /* a term never spans two keywords */
		zc_buf_adds(&hay, kn);
		zc_free(kn);
	}
	json_decref(kws);
	int hits = 0;
	json_array_foreach(terms, i, k) hits += strstr(zc_buf_str(&hay), json_string_value(k)) != NULL;
	zc_buf_release(&hay);
	return hits;
}

/* What scoring needs of a node, without its content (phase 1). */
/* What scoring reads of a node: every column is in the nodes_recall index,
 * so the scored profile loads its candidates from that index alone. */
#define SCORE_COLS                                                                             \
	"n.seq, n.id, n.kind, n.section, n.date, n.expires, n.pinned, n.hits, n.updated_at, n.scope"
/* ... and the title, keywords and length the zcor profile and the
 * fallback read from the row itself */
#define LIGHT_COLS SCORE_COLS ", n.title, n.title_norm, n.keywords, length(n.title) + length(n.content)"

static void copy_col(char *dst, size_t cap, sqlite3_stmt *st, int i)
{
	const char *v = (const char *)sqlite3_column_text(st, i);
	snprintf(dst, cap, "%s", v ? v : "");
}

static char *dup_col(sqlite3_stmt *st, int i)
{
	const char *v = (const char *)sqlite3_column_text(st, i);
	return zc_strdup(v ? v : "");
}

/* A row of SCORE_COLS; returns 0 if the item was loaded already. */
static int score_from_row(struct item *x, sqlite3_stmt *st)
{
	if (x->loaded)
		return 0;
	x->loaded = 1;
	copy_col(x->id, sizeof(x->id), st, 1);
	copy_col(x->kindname, sizeof(x->kindname), st, 2);
	copy_col(x->section, sizeof(x->section), st, 3);
	copy_col(x->date, sizeof(x->date), st, 4);
	copy_col(x->expires, sizeof(x->expires), st, 5);
	x->pinned = sqlite3_column_int(st, 6);
	x->hits = sqlite3_column_int64(st, 7);
	x->updated = sqlite3_column_int64(st, 8);
	copy_col(x->scope, sizeof(x->scope), st, 9);
	return 1;
}

/* A row of LIGHT_COLS. */
static void light_from_row(struct item *x, sqlite3_stmt *st, int with_keywords)
{
	if (!score_from_row(x, st))
		return;
	x->title = dup_col(st, 10);
	if (with_keywords) {
		x->title_norm = dup_col(st, 11);
		x->keywords = dup_col(st, 12);
	}
	x->length = sqlite3_column_int64(st, 13);
}

static void item_release(struct item *x)
{
	json_decref(x->obj);
	zc_free(x->title);
	zc_free(x->title_norm);
	zc_free(x->keywords);
	zc_free(x->content);
	zc_free(x->usage);
}

/* Loads every candidate, dropping those that fail the scope and currency
 * filter (a person is always global and current): scoring sees only what
 * this conversation may be shown. */
static int load_items(struct recall *r)
{
	json_t *nseqs = json_array(), *pseqs = json_array();
	for (size_t i = 0; i < r->n; i++)
		json_array_append_new(r->it[i].kind == 'n' ? nseqs : pseqs, json_integer(r->it[i].seq));
	int rc = ZCOR_OK, step;
	/* scored reads the index alone (its title comes with the content of
	 * what is picked); zcor matches titles and keywords, so it reads rows */
	int by_title = r->profile == ZC_PROFILE_ZCOR;
	sqlite3_stmt *st = zc_stmt(&r->m->store,
				   by_title ? "SELECT " LIGHT_COLS " FROM json_each(?1) j CROSS JOIN nodes n "
					  "ON n.seq = j.value WHERE " CURRENT_SQL
					: "SELECT " SCORE_COLS " FROM json_each(?1) j CROSS JOIN nodes n "
					  "INDEXED BY nodes_recall ON n.seq = j.value WHERE " CURRENT_INDEXED_SQL,
				   r->e);
	if (!st) {
		rc = r->e->code;
		goto out;
	}
	sqlite3_bind_text(st, 1, zc_json_dump(nseqs), -1, zc_free);
	bind_conv(r, st);
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		struct item *x = item_of(r, 'n', sqlite3_column_int64(st, 0));
		if (by_title)
			light_from_row(x, st, 1);
		else
			score_from_row(x, st);
	}
	sqlite3_reset(st);
	if (step != SQLITE_DONE) {
		rc = zc_store_fail(&r->m->store, step, r->e, "recall (loading)");
		goto out;
	}
	st = zc_stmt(&r->m->store,
		     "SELECT " ZC_PERSON_COLS ", seq FROM people WHERE seq IN (SELECT value FROM "
		     "json_each(?1))",
		     r->e);
	if (!st) {
		rc = r->e->code;
		goto out;
	}
	sqlite3_bind_text(st, 1, zc_json_dump(pseqs), -1, zc_free);
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		struct item *x = item_of(r, 'p', sqlite3_column_int64(st, 11));
		x->obj = zc_person_from_row(st);
		x->loaded = 1;
	}
	sqlite3_reset(st);
	if (step != SQLITE_DONE)
		rc = zc_store_fail(&r->m->store, step, r->e, "recall (loading people)");
out:
	json_decref(nseqs);
	json_decref(pseqs);
	/* keep only what loaded */
	size_t w = 0;
	for (size_t i = 0; i < r->n; i++) {
		if (r->it[i].loaded)
			r->it[w++] = r->it[i];
		else
			item_release(&r->it[i]);
	}
	r->n = w;
	seqmap_clear(&r->where);
	return rc;
}

/* Phase 2: the latest full content of the nodes that will be shown. */
static int load_full(struct recall *r, size_t npicked)
{
	sqlite3_stmt *st = zc_stmt(&r->m->store,
				   "SELECT title, content, attrs ->> '$.usage' FROM nodes WHERE seq = ?1", r->e);
	if (!st)
		return r->e->code;
	for (size_t i = 0; i < npicked; i++) {
		struct item *x = &r->it[i];
		if (x->kind != 'n')
			continue;
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, x->seq);
		int step = sqlite3_step(st);
		if (step == SQLITE_ROW) {
			zc_free(x->title);
			x->title = dup_col(st, 0);
			x->content = dup_col(st, 1);
			if (sqlite3_column_type(st, 2) != SQLITE_NULL)
				x->usage = dup_col(st, 2);
		} else if (step != SQLITE_DONE) {
			sqlite3_reset(st);
			return zc_store_fail(&r->m->store, step, r->e, "recall (loading)");
		}
	}
	sqlite3_reset(st);
	return ZCOR_OK;
}

static void score_items(struct recall *r)
{
	/* lexical: the IDF sum, damped for long texts as BM25 does (b = 0.5
	 * against the candidates' mean length), then scaled to 0..1 */
	double max_lex = 0, len_sum = 0;
	size_t len_n = 0;
	for (size_t i = 0; i < r->n; i++) {
		if (r->it[i].kind == 'n' && r->it[i].lexraw > 0) {
			len_sum += (double)r->it[i].length;
			len_n++;
		}
	}
	double avg_len = len_n && len_sum > 0 ? len_sum / (double)len_n : 1;
	for (size_t i = 0; i < r->n; i++) {
		struct item *x = &r->it[i];
		if (x->kind == 'n' && x->lexraw > 0)
			x->lexraw /= 0.5 + 0.5 * (double)x->length / avg_len;
		if (x->lexraw > max_lex)
			max_lex = x->lexraw;
	}
	int64_t today = r->now - r->now % 86400000;
	for (size_t i = 0; i < r->n; i++) {
		struct item *x = &r->it[i];
		int64_t t = -1;
		if (x->kind == 'n') {
			t = x->updated;
		} else if (zc_json_str(x->obj, "updatedAt")) {
			zc_time_parse(zc_json_str(x->obj, "updatedAt"), "updatedAt", &t, NULL);
		}
		x->updated = t;
		if (x->kind == 'p') {
			snprintf(x->section, sizeof(x->section), "人物");
		} else {
			if (!x->section[0])
				snprintf(x->section, sizeof(x->section), "%s", section_of(x));
			int64_t fact = day_ms(x->date);
			if (fact >= 0)
				t = fact;
			int64_t exp = day_ms(x->expires);
			x->expired = exp >= 0 && exp < today ? 1 : 0;
			x->salience = x->pinned ? 1.0 : fmin(1.0, log1p((double)x->hits) / log1p(50.0));
			/* slang present verbatim in the message: always in */
			if (x->entity && strcmp(x->kindname, "cognition") == 0)
				x->always = "slang present in the message";
			if (r->profile == ZC_PROFILE_ZCOR)
				x->zhits = terms_in_title_or_keywords(x, r->expanded);
		}
		double age_days = t >= 0 ? (double)(r->now - t) / 86400000.0 : 365.0;
		x->recency = exp(-fmax(age_days, 0) / 30.0);
		x->lexical = max_lex > 0 ? x->lexraw / max_lex : 0;
		x->prior = section_prior(x->section);
		x->score = 3 * x->entity + 2 * x->lexical + 1 * x->recency + 0.8 * x->salience +
			   0.5 * x->prior - 5 * x->expired;
	}
}

static int by_score(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	if (x->score != y->score)
		return x->score < y->score ? 1 : -1;
	if (x->updated != y->updated)
		return x->updated < y->updated ? 1 : -1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* seed 000: distinct terms hit, updatedAt desc, id (creation) asc */
static int by_zcor(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	if (x->zhits != y->zhits)
		return y->zhits - x->zhits;
	if (x->updated != y->updated)
		return x->updated < y->updated ? 1 : -1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Picks items in the order they are packed; returns how many. Picked
 * items are moved to the front of r->it in packing order. */
static size_t select_items(struct recall *r)
{
	size_t npicked = 0;
	if (r->n == 0)
		return 0;
	if (r->profile == ZC_PROFILE_ZCOR) {
		qsort(r->it, r->n, sizeof(*r->it), by_zcor);
		for (size_t i = 0; i < r->n; i++) {
			struct item *x = &r->it[i];
			if (x->kind != 'n' || x->zhits == 0)
				x->why = "no title or keyword contains a term";
			else if (npicked >= ZC_RECALL_ZCOR_MAX)
				x->why = "beyond the 10 records of the batch";
			else {
				x->picked = 1;
				x->why = "title or keywords contain a term";
				npicked++;
			}
		}
		qsort(r->it, r->n, sizeof(*r->it), by_zcor);
		return npicked;
	}
	qsort(r->it, r->n, sizeof(*r->it), by_score);
	struct item *order = zc_malloc((r->n + 1) * sizeof(*order));
	/* 1. what is always included */
	for (size_t i = 0; i < r->n; i++) {
		if (r->it[i].always && npicked < ZC_RECALL_MAX_ITEMS) {
			r->it[i].picked = 1;
			r->it[i].why = r->it[i].always;
			order[npicked++] = r->it[i];
		}
	}
	/* 2. sections in turn, each up to its quota, best first */
	json_t *taken = json_object();
	for (int round = 0; round < ZC_RECALL_SECTION_QUOTA && npicked < ZC_RECALL_MAX_ITEMS; round++) {
		json_t *this_round = json_object();
		for (size_t i = 0; i < r->n && npicked < ZC_RECALL_MAX_ITEMS; i++) {
			struct item *x = &r->it[i];
			if (x->picked || json_object_get(this_round, x->section))
				continue;
			json_t *cnt = json_object_get(taken, x->section);
			if (cnt && json_integer_value(cnt) > round)
				continue;
			json_object_set_new(this_round, x->section, json_true());
			json_object_set_new(taken, x->section,
					    json_integer(cnt ? json_integer_value(cnt) + 1 : 1));
			x->picked = 1;
			x->why = "ranked within its section's quota";
			order[npicked++] = *x;
		}
		json_decref(this_round);
	}
	json_decref(taken);
	size_t rest = npicked;
	for (size_t i = 0; i < r->n; i++) {
		if (!r->it[i].picked) {
			r->it[i].why = npicked >= ZC_RECALL_MAX_ITEMS ? "beyond the item limit"
								       : "its section's quota was full";
			order[rest++] = r->it[i];
		}
	}
	memcpy(r->it, order, r->n * sizeof(*order));
	zc_free(order);
	return npicked;
}

/* No hit at all (scored): pinned records, then the most salient of the
 * recent ones, then the most recent — never "the start of a file". Both
 * queries walk an index from its newest end; neither visits every node. */
static int fallback_items(struct recall *r)
{
	/* for each scope the conversation may see, from its newest end of an
	 * index of that scope: the cost does not grow with the other
	 * conversations' records */
	static const char *const sql[2] = {
		"SELECT " LIGHT_COLS " FROM nodes n INDEXED BY nodes_scope_pinned WHERE n.pinned = 1 AND "
		"n.scope = ?1 AND n.tier = 'hot' AND " LIVE_INDEXED_SQL " ORDER BY n.updated_at DESC LIMIT 5",
		"SELECT " LIGHT_COLS " FROM nodes n INDEXED BY nodes_scope_recent WHERE n.scope = ?1 AND "
		"n.tier = 'hot' AND " LIVE_INDEXED_SQL " AND n.kind IN ('memory', 'cognition') "
		"ORDER BY n.updated_at DESC LIMIT 50",
	};
	const char *scopes[2] = {"global", r->ctx.conversation};
	for (int q = 0; q < 2; q++) {
		for (int sc = 0; sc < 2 && scopes[sc]; sc++) {
			sqlite3_stmt *st = zc_stmt(&r->m->store, sql[q], r->e);
			if (!st)
				return r->e->code;
			sqlite3_bind_text(st, 1, scopes[sc], -1, SQLITE_STATIC);
			int step;
			while ((step = sqlite3_step(st)) == SQLITE_ROW) {
				struct item *x = item_of(r, 'n', sqlite3_column_int64(st, 0));
				light_from_row(x, st, 0);
				if (q == 0)
					x->always = "fallback: pinned";
			}
			sqlite3_reset(st);
			if (step != SQLITE_DONE)
				return zc_store_fail(&r->m->store, step, r->e, "recall (fallback)");
		}
	}
	seqmap_clear(&r->where);
	return ZCOR_OK;
}

static int by_fallback(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	if (!x->always != !y->always)
		return x->always ? -1 : 1;
	return by_score(a, b);
}

/* Pinned first, then by salience and recency; at most 5. */
static size_t fallback_select(struct recall *r)
{
	if (r->n == 0)
		return 0;
	qsort(r->it, r->n, sizeof(*r->it), by_fallback);
	size_t n = 0;
	for (size_t i = 0; i < r->n; i++) {
		struct item *x = &r->it[i];
		x->picked = i < 5;
		x->why = !x->picked ? "fallback: beyond the 5 records"
			 : x->always ? x->always
				     : "fallback: nothing matched, so salient / recent";
		n += (size_t)x->picked;
	}
	return n;
}

/* ---- packing -------------------------------------------------------- */

struct pack {
	struct zc_buf b;
	size_t used; /* characters */
	size_t budget;
};

/* Adds s if it fits whole; returns 1 if added. */
static int pack_add(struct pack *p, const char *s)
{
	size_t n = zc_utf8_len(s);
	if (p->used + n > p->budget)
		return 0;
	zc_buf_adds(&p->b, s);
	p->used += n;
	return 1;
}

/* Adds at most the characters left, ending with `tail` (which must fit). */
static int pack_cut(struct pack *p, const char *s, const char *tail)
{
	size_t tl = zc_utf8_len(tail);
	if (p->used + tl > p->budget)
		return 0;
	size_t room = p->budget - p->used - tl;
	size_t bytes = zc_utf8_prefix(s, room);
	zc_buf_add(&p->b, s, bytes);
	zc_buf_adds(&p->b, tail);
	p->used += zc_utf8_len(s) < room ? zc_utf8_len(s) + tl : room + tl;
	return 1;
}

/* One line of text, newlines folded to spaces. */
static void one_line(struct zc_buf *b, const char *s)
{
	for (; s && *s; s++)
		zc_buf_addc(b, *s == '\n' || *s == '\r' ? ' ' : *s);
}

static void item_line(const struct item *x, struct zc_buf *id, struct zc_buf *body)
{
	const json_t *o = x->obj;
	if (x->kind == 'p') {
		if (x->cite[0])
			zc_buf_addf(id, "- [人物 %s · %s] ", zc_json_str(o, "personId"), x->cite);
		else
			zc_buf_addf(id, "- [人物 %s] ", zc_json_str(o, "personId"));
		one_line(body, zc_json_str(o, "name"));
		json_t *al = json_object_get(o, "aliases");
		if (json_array_size(al)) {
			zc_buf_adds(body, "（别名：");
			size_t i;
			json_t *a;
			json_array_foreach(al, i, a) {
				if (i)
					zc_buf_addc(body, '/');
				one_line(body, json_string_value(a));
			}
			zc_buf_adds(body, "）");
		}
		const char *rel = zc_json_str(o, "relationship");
		if (rel && *rel) {
			zc_buf_adds(body, "｜");
			one_line(body, rel);
		}
		zc_buf_addf(body, "｜好感度 %lld", (long long)json_integer_value(json_object_get(o, "affinity")));
		return;
	}
	if (x->cite[0])
		zc_buf_addf(id, "- [%s · %s] ", x->id, x->cite);
	else
		zc_buf_addf(id, "- [%s] ", x->id);
	one_line(body, x->title);
	zc_buf_adds(body, "：");
	one_line(body, x->content);
	if (x->usage) {
		zc_buf_adds(body, "（用法：");
		one_line(body, x->usage);
		zc_buf_adds(body, "）");
	}
}

static int archive_line(struct recall *r, struct pack *p);
static int sticker_catalog(struct recall *r, struct pack *p);

/* The INDEX document, the slang vocabulary line, the archive line and the
 * sticker catalog, when they exist. */
static int extras(struct recall *r, struct pack *p)
{
	sqlite3_stmt *st = zc_stmt(&r->m->store,
				   "SELECT n.content FROM nodes n WHERE n.kind = 'document' AND n.title = "
				   "'INDEX.md' AND +n.superseded_by IS NULL AND +n.scope IN ('global', ?9) "
				   "ORDER BY n.scope = 'global' DESC, n.seq LIMIT 1",
				   r->e);
	if (!st)
		return r->e->code;
	bind_conv(r, st);
	if (sqlite3_step(st) == SQLITE_ROW) {
		const char *text = (const char *)sqlite3_column_text(st, 0);
		if (text && *text) {
			struct zc_buf b = ZC_BUF_INIT;
			zc_buf_adds(&b, "## INDEX.md\n");
			size_t cut = zc_utf8_prefix(text, ZC_RECALL_INDEX_CHARS);
			zc_buf_add(&b, text, cut);
			zc_buf_adds(&b, text[cut] ? "…\n" : "\n");
			if (!pack_add(p, b.p))
				pack_cut(p, b.p, "…\n");
			zc_buf_release(&b);
		}
	}
	sqlite3_reset(st);
	st = zc_stmt(&r->m->store,
		     "SELECT n.title, n.keywords FROM nodes n WHERE n.kind = 'cognition' AND " CURRENT_SQL
		     " ORDER BY n.seq",
		     r->e);
	if (!st)
		return r->e->code;
	bind_conv(r, st);
	struct zc_buf v = ZC_BUF_INIT;
	while (sqlite3_step(st) == SQLITE_ROW) {
		zc_buf_adds(&v, v.len ? "、" : "## 梗词汇表（听不懂时用 qq_memory search 查）：");
		one_line(&v, (const char *)sqlite3_column_text(st, 0));
		json_t *kw = json_loads((const char *)sqlite3_column_text(st, 1), 0, NULL);
		size_t i;
		json_t *k;
		json_array_foreach(kw, i, k) {
			zc_buf_addc(&v, '/');
			one_line(&v, json_string_value(k));
		}
		json_decref(kw);
	}
	sqlite3_reset(st);
	if (v.len) {
		zc_buf_addc(&v, '\n');
		if (!pack_add(p, v.p))
			pack_cut(p, v.p, "…\n");
	}
	zc_buf_release(&v);
	int rc = archive_line(r, p);
	return rc ? rc : sticker_catalog(r, p);
}

/* Where an entry of a memory view sits (view_lines), for its citation. */
static int cite_of(struct recall *r, struct item *x)
{
	sqlite3_stmt *st = zc_stmt(&r->m->store,
				   "SELECT path, line FROM view_lines WHERE kind = ?1 AND ref = ?2", r->e);
	if (!st)
		return r->e->code;
	sqlite3_bind_text(st, 1, x->kind == 'p' ? "person" : "node", -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, x->seq);
	x->cite[0] = '\0';
	if (sqlite3_step(st) == SQLITE_ROW)
		snprintf(x->cite, sizeof(x->cite), "%s#L%lld", (const char *)sqlite3_column_text(st, 0),
			 (long long)sqlite3_column_int64(st, 1));
	sqlite3_reset(st);
	return ZCOR_OK;
}

/* The cold layer as one line of constant length (Q-ROLL: no pointer
 * lines in the hot layer; the months are listed by qq_memory list). */
static int archive_line(struct recall *r, struct pack *p)
{
	if (!r->ctx.conversation)
		return ZCOR_OK;
	sqlite3_stmt *st = zc_stmt(&r->m->store,
				   "SELECT count(DISTINCT archive_month), min(archive_month), "
				   "max(archive_month) FROM nodes WHERE scope = ?1 AND kind = 'memory' AND "
				   "tier = 'archive' AND archive_month IS NOT NULL",
				   r->e);
	if (!st)
		return r->e->code;
	sqlite3_bind_text(st, 1, r->ctx.conversation, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) > 0) {
		struct zc_buf b = ZC_BUF_INIT;
		char slug[96];
		zc_conv_slug(r->ctx.conversation, slug, sizeof(slug));
		zc_buf_addf(&b, "更早的记忆：conversations/%s/archive/ 下 %lld 个文件（%s … %s），不在提示词里，用 qq_memory search 查。\n",
			    slug, (long long)sqlite3_column_int64(st, 0),
			    (const char *)sqlite3_column_text(st, 1), (const char *)sqlite3_column_text(st, 2));
		pack_add(p, b.p);
		zc_buf_release(&b);
	}
	sqlite3_reset(st);
	return ZCOR_OK;
}

/* The collected stickers: 名字（含义）→ 完整路径, the path exactly as it
 * must be sent (Q-STK: a guessed extension is a sticker that is "not
 * there"). */
static int sticker_catalog(struct recall *r, struct pack *p)
{
	sqlite3_stmt *st = zc_stmt(&r->m->store,
				   "SELECT title, content, json_extract(attrs, '$.image') FROM nodes WHERE "
				   "scope = 'global' AND kind = 'sticker' AND section = '已收藏' AND "
				   ZC_MAY_INJECT_SQL("", "") " AND json_extract(attrs, '$.image') IS NOT NULL "
				   "ORDER BY coalesce(json_extract(attrs, '$.pos'), seq), seq LIMIT ?1",
				   r->e);
	if (!st)
		return r->e->code;
	sqlite3_bind_int(st, 1, ZC_RECALL_STICKERS);
	struct zc_buf b = ZC_BUF_INIT;
	while (sqlite3_step(st) == SQLITE_ROW) {
		/* a stored path that is no stickers/ file is never offered */
		if (!zc_sticker_path_ok((const char *)sqlite3_column_text(st, 2)))
			continue;
		if (!b.len)
			zc_buf_adds(&b, "## 已收藏的表情包（发送时原样写 [[图片: 完整路径]]）\n");
		zc_buf_adds(&b, "- ");
		one_line(&b, (const char *)sqlite3_column_text(st, 0));
		const char *meaning = (const char *)sqlite3_column_text(st, 1);
		if (meaning && *meaning) {
			zc_buf_adds(&b, "（");
			one_line(&b, meaning);
			zc_buf_adds(&b, "）");
		}
		zc_buf_adds(&b, "→ ");
		one_line(&b, (const char *)sqlite3_column_text(st, 2));
		zc_buf_addc(&b, '\n');
	}
	sqlite3_reset(st);
	if (b.len && !pack_add(p, b.p))
		pack_cut(p, b.p, "…\n");
	zc_buf_release(&b);
	return ZCOR_OK;
}

/* "Recently learned slang" (seed 003): the newest COGNITION.md entries
 * by date, an entry without one taking the date above it in the file;
 * at most 15 entries and 1200 characters, those already shown left out.
 * A fallback: it takes only what the budget has left. */
static int recent_slang(struct recall *r, size_t npicked, struct pack *p)
{
	sqlite3_stmt *st = zc_stmt(&r->m->store,
				   "SELECT n.seq, n.title, n.content, json_extract(n.attrs, '$.usage') "
				   "FROM view_lines v JOIN nodes n ON n.seq = v.ref WHERE v.path = "
				   "'COGNITION.md' AND v.kind = 'node' AND " ZC_MAY_INJECT_SQL("n.", "n.")
				   " ORDER BY v.eff_date DESC, v.line DESC LIMIT ?1",
				   r->e);
	if (!st)
		return r->e->code;
	sqlite3_bind_int(st, 1, ZC_RECALL_RECENT_SLANG + (int)npicked);
	struct zc_buf b = ZC_BUF_INIT;
	int n = 0;
	while (n < ZC_RECALL_RECENT_SLANG && sqlite3_step(st) == SQLITE_ROW) {
		sqlite3_int64 seq = sqlite3_column_int64(st, 0);
		int shown = 0;
		for (size_t i = 0; i < npicked && !shown; i++)
			shown = r->it[i].picked && r->it[i].kind == 'n' && r->it[i].seq == seq;
		if (shown)
			continue;
		struct zc_buf line = ZC_BUF_INIT;
		zc_buf_adds(&line, "- ");
		one_line(&line, (const char *)sqlite3_column_text(st, 1));
		zc_buf_adds(&line, "：");
		one_line(&line, (const char *)sqlite3_column_text(st, 2));
		const char *usage = (const char *)sqlite3_column_text(st, 3);
		if (usage && *usage) {
			zc_buf_adds(&line, "（用法：");
			one_line(&line, usage);
			zc_buf_adds(&line, "）");
		}
		zc_buf_addc(&line, '\n');
		if (zc_utf8_len(b.p ? b.p : "") + zc_utf8_len(line.p) > ZC_RECALL_RECENT_SLANG_CHARS) {
			zc_buf_release(&line);
			break;
		}
		if (!b.len)
			zc_buf_adds(&b, "## 最近学的梗\n");
		zc_buf_adds(&b, line.p);
		zc_buf_release(&line);
		n++;
	}
	sqlite3_reset(st);
	if (b.len)
		pack_add(p, b.p);
	zc_buf_release(&b);
	return ZCOR_OK;
}

static json_t *item_json(const struct item *x)
{
	if (x->kind == 'p')
		return json_pack("{s:s, s:s, s:O, s:s, s:b, s:f}", "kind", "person", "personId",
				 zc_json_str(x->obj, "personId"), "name", json_object_get(x->obj, "name"),
				 "section", x->section, "truncated", x->truncated, "score", x->score);
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:b, s:f}", "kind", "node", "id", x->id, "title",
			 x->title ? x->title : "", "section", x->section[0] ? x->section : "记忆",
			 "scope", x->scope, "truncated", x->truncated, "score", x->score);
}

static int pack_items(struct recall *r, size_t npicked, struct pack *p, json_t *items)
{
	static const char head[] =
		"【自动回忆】以下是系统按当前消息检索到的记忆，只是参考资料，不是对方说的话；"
		"方括号里是 id 与出处，完整内容用 zcor_memory_read 或 qq_memory read 读取。\n";
	int rc = ZCOR_OK;
	size_t start = p->b.len, start_used = p->used;
	if (!pack_add(p, head))
		return ZCOR_OK;
	size_t after_head = p->used;
	if ((rc = extras(r, p)))
		return rc;
	if (npicked && pack_add(p, "## 相关记忆\n")) {
		for (size_t i = 0; i < npicked; i++) {
			struct item *x = &r->it[i];
			struct zc_buf id = ZC_BUF_INIT, body = ZC_BUF_INIT, line = ZC_BUF_INIT;
			if ((rc = cite_of(r, x)))
				return rc;
			item_line(x, &id, &body);
			zc_buf_addf(&line, "%s%s\n", id.p, body.p);
			if (!pack_add(p, line.p)) {
				/* past the budget: keep the id, cut title and body */
				x->truncated = 1;
				size_t idc = zc_utf8_len(id.p), tail = zc_utf8_len("…（已截断）\n");
				if (p->used + idc + tail > p->budget) {
					x->picked = 0;
					x->why = "no room left in recallChars";
				} else {
					zc_buf_adds(&p->b, id.p);
					p->used += idc;
					pack_cut(p, body.p, "…（已截断）\n");
				}
			}
			zc_buf_release(&id);
			zc_buf_release(&body);
			zc_buf_release(&line);
			if (x->picked)
				json_array_append_new(items, item_json(x));
		}
	}
	/* seed 003's section; seed 000 (profile zcor) injects its hits alone,
	 * at most ZC_RECALL_ZCOR_MAX, and nothing when nothing hit */
	if (r->profile != ZC_PROFILE_ZCOR && (rc = recent_slang(r, npicked, p)))
		return rc;
	if (json_array_size(items) == 0 && (p->used == after_head || r->profile == ZC_PROFILE_ZCOR)) {
		/* nothing to say: no header at all (and seed 000 says nothing
		 * without a hit, whatever else the header could carry) */
		p->b.len = start;
		if (p->b.p)
			p->b.p[start] = '\0';
		p->used = start_used;
	}
	return rc;
}

/* Hit counts and last hit time of what was injected (memory layer). */
static void count_hits(struct recall *r, size_t npicked)
{
	json_t *seqs = json_array();
	for (size_t i = 0; i < npicked; i++)
		if (r->it[i].kind == 'n' && r->it[i].picked)
			json_array_append_new(seqs, json_integer(r->it[i].seq));
	zc_mem_count_hits(r->m, seqs);
	json_decref(seqs);
}

static json_t *explain_json(struct recall *r)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < r->n; i++) {
		struct item *x = &r->it[i];
		json_t *j = item_json(x);
		json_object_set_new(j, "included", json_boolean(x->picked));
		json_object_set_new(j, "why", json_string(x->why ? x->why : ""));
		json_object_set_new(j, "features",
				    json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:i}", "entity", x->entity,
					      "lexical", x->lexical, "recency", x->recency, "salience",
					      x->salience, "sectionPrior", x->prior, "expired", x->expired,
					      "zcorTermsHit", x->zhits));
		json_array_append_new(arr, j);
	}
	return arr;
}

int zc_recall(struct zc_recall *rs, const json_t *req, json_t **out, struct zc_err *e)
{
	struct zc_mem *m = rs->m;
	struct zc_buf text = ZC_BUF_INIT;
	struct pack p = {ZC_BUF_INIT, 0, 0};
	json_t *people = NULL, *items = json_array();
	int explain = 0, rc;
	struct recall r = {.rs = rs, .m = m, .e = e, .now = zc_mem_now(m)};
	r.terms = json_array();
	r.expanded = json_array();
	r.seen = json_object();
	*out = NULL;
	if ((rc = read_request(req, &text, &people, &explain, e)))
		goto out;
	r.ctx.actor = ZCOR_ACTOR_MODEL;
	r.ctx.conversation = zc_json_str(req, "conversation");
	zc_config_refresh(&m->conf);
	zc_syn_refresh(&m->syn, NULL);
	r.profile = m->conf.cfg.profile;
	p.budget = (size_t)m->conf.cfg.recall_chars;
	if (p.budget == 0) {
		*out = json_pack("{s:s, s:[], s:s, s:i, s:i, s:b}", "header", "", "items", "profile",
				 r.profile == ZC_PROFILE_ZCOR ? "zcor" : "scored", "budget", 0, "used", 0,
				 "disabled", 1);
		goto out;
	}
	char *norm = zc_norm(zc_buf_str(&text));
	if ((rc = zc_store_begin(&m->store, 0, e))) {
		zc_free(norm);
		goto out;
	}
	rc = gather_terms(&r, norm);
	if (!rc)
		rc = entity_candidates(&r);
	if (!rc && r.profile == ZC_PROFILE_SCORED) {
		rc = lexical_candidates(&r, norm, short_message(norm));
		if (!rc)
			rc = speaker_candidates(&r, people);
	}
	if (!rc && r.profile == ZC_PROFILE_ZCOR)
		rc = phrase_candidates(&r);
	zc_free(norm);
	if (!rc)
		rc = load_items(&r);
	if (!rc)
		score_items(&r);
	size_t npicked = rc ? 0 : select_items(&r);
	if (!rc && r.n == 0 && r.profile == ZC_PROFILE_SCORED) {
		rc = fallback_items(&r);
		if (!rc) {
			score_items(&r);
			npicked = fallback_select(&r);
		}
	}
	if (!rc) /* --explain shows the titles of what was left out too */
		rc = load_full(&r, explain ? r.n : npicked);
	if (!rc)
		rc = pack_items(&r, npicked, &p, items);
	zc_store_rollback(&m->store); /* read only */
	if (rc)
		goto out;
	count_hits(&r, npicked);
	*out = json_pack("{s:s, s:O, s:s, s:I, s:I, s:O, s:O}", "header", zc_buf_str(&p.b), "items",
			 items, "profile", r.profile == ZC_PROFILE_ZCOR ? "zcor" : "scored", "budget",
			 (json_int_t)p.budget, "used", (json_int_t)p.used, "terms", r.terms,
			 "expandedTerms", r.expanded);
	if (explain)
		json_object_set_new(*out, "explain", explain_json(&r));
	if (m->conf.warning[0])
		json_object_set_new(*out, "warning", json_string(m->conf.warning));
out:
	for (size_t i = 0; i < r.n; i++)
		item_release(&r.it[i]);
	zc_free(r.it);
	json_decref(r.terms);
	json_decref(r.expanded);
	json_decref(r.seen);
	seqmap_clear(&r.where);
	json_decref(people);
	json_decref(items);
	zc_buf_release(&text);
	zc_buf_release(&p.b);
	return rc;
}
