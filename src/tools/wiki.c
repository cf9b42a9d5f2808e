/*
 * wiki.c — wiki_lookup (see wiki.h): two calls of the MediaWiki API at
 * wiki.baseUrl,
 *   action=opensearch&search=<q>&limit=5&namespace=0&format=json
 *     → [query, [titles], [descriptions], [urls]]
 *   action=query&prop=extracts&exintro=1&explaintext=1&redirects=1
 *     &titles=<t>&format=json
 *     → {query: {redirects?: [{from, to}], pages: {id: {title, extract}
 *        | {title, missing}}}}
 * (Extension:TextExtracts); never the full-text search API or page HTML.
 *
 * Tools layer, a plain function of the registry. It never opens a socket:
 * every request goes through env->http, the GET the api layer gives it
 * (llm/transport.c: its timeouts, retry and size cap). The cache is per
 * process, not per handle, on purpose: `zcor serve` runs calls on a pool
 * of handles, and the model asking twice must cost one lookup whichever
 * handle answers; it holds only the wiki's answers (copies), under a mutex.
 */
#include "tools/wiki.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/json.h"
#include "base/timeutil.h"
#include "base/utf8.h"
#include "memory/memory.h"
#include "text/norm.h"

#define WIKI_LIMIT 5 /* opensearch's limit: the candidates offered */

/* ---- the cache ---------------------------------------------------------- */

struct cache_ent {
	char *key;   /* base URL "\n" normalised query; NULL: a free slot */
	json_t *val; /* the result, or (found 0) the candidates of "no page" */
	int found;
	double at;   /* monotonic ms when stored */
};

static struct cache_ent cache[ZC_WIKI_CACHE_ENTRIES];
static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;

/* A copy of a fresh entry for key into *val (*found set), or 0. */
static int cache_get(const char *key, json_t **val, int *found)
{
	int hit = 0;
	double now = zc_time_mono_ms();
	pthread_mutex_lock(&cache_mu);
	for (size_t i = 0; i < ZC_WIKI_CACHE_ENTRIES && !hit; i++) {
		struct cache_ent *c = &cache[i];
		if (c->key && strcmp(c->key, key) == 0 && now - c->at < ZC_WIKI_CACHE_MS) {
			*val = json_deep_copy(c->val);
			*found = c->found;
			hit = *val != NULL;
		}
	}
	pthread_mutex_unlock(&cache_mu);
	return hit;
}

/* Keeps a copy of val under key: the same key's slot, else a free or
 * expired one, else the oldest. */
static void cache_put(const char *key, const json_t *val, int found)
{
	json_t *copy = json_deep_copy(val);
	if (!copy)
		return;
	double now = zc_time_mono_ms();
	pthread_mutex_lock(&cache_mu);
	struct cache_ent *slot = NULL;
	for (size_t i = 0; i < ZC_WIKI_CACHE_ENTRIES; i++) {
		struct cache_ent *c = &cache[i];
		if (c->key && strcmp(c->key, key) == 0) {
			slot = c;
			break;
		}
		if (!c->key || now - c->at >= ZC_WIKI_CACHE_MS) {
			if (!slot || slot->key)
				slot = c;
		} else if (!slot || (slot->key && c->at < slot->at)) {
			slot = c;
		}
	}
	zc_free(slot->key);
	json_decref(slot->val);
	slot->key = zc_strdup(key);
	slot->val = copy;
	slot->found = found;
	slot->at = now;
	pthread_mutex_unlock(&cache_mu);
}

/* ---- URLs ----------------------------------------------------------------- */

/* Appends s percent-encoded for a query string value (RFC 3986 unreserved
 * bytes stay). */
static void add_param(struct zc_buf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		unsigned char c = *p;
		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '.' || c == '_' || c == '~') {
			zc_buf_addc(b, (char)c);
		} else {
			char pct[3] = {'%', hex[c >> 4], hex[c & 15]};
			zc_buf_add(b, pct, 3);
		}
	}
}

/* A title as MediaWiki writes it in a page URL (wfUrlencode: spaces as
 * '_', these punctuation marks left as they are). */
static void add_title_path(struct zc_buf *b, const char *t)
{
	static const char hex[] = "0123456789ABCDEF";
	for (const unsigned char *p = (const unsigned char *)t; *p; p++) {
		unsigned char c = *p;
		if (c == ' ')
			zc_buf_addc(b, '_');
		else if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
			 strchr("-._~;:@$!*(),/", c))
			zc_buf_addc(b, (char)c);
		else {
			char pct[3] = {'%', hex[c >> 4], hex[c & 15]};
			zc_buf_add(b, pct, 3);
		}
	}
}

/* The page URL of `to` from opensearch's URL of `from` (a redirect): the
 * URL's end is from's path form, replaced by to's. NULL when it is not. */
static char *redirect_url(const char *url, const char *from, const char *to)
{
	struct zc_buf f = ZC_BUF_INIT, out = ZC_BUF_INIT;
	char *res = NULL;
	add_title_path(&f, from);
	size_t n = strlen(url);
	if (f.len && n > f.len && strcmp(url + n - f.len, zc_buf_str(&f)) == 0) {
		zc_buf_add(&out, url, n - f.len);
		add_title_path(&out, to);
		res = zc_buf_detach(&out);
	}
	zc_buf_release(&f);
	zc_buf_release(&out);
	return res;
}

/* ---- one request ---------------------------------------------------------- */

/* GETs url and parses the body as JSON into *doc; the wiki's failures
 * become one message naming the wiki and what to check. */
static int ask(const struct zc_tool_env *env, const char *url, json_t **doc, struct zc_err *e)
{
	const struct zc_wiki_config *w = &env->m->conf.cfg.wiki;
	struct zc_buf body = ZC_BUF_INIT;
	int kind = ZC_HTTP_OK, rc;
	*doc = NULL;
	if (!env->http)
		return zc_fail(e, ZCOR_EINTERNAL, "wiki_lookup was called without an HTTP client");
	rc = env->http->get(env->http->ud, url, w->timeout_ms, w->max_bytes, &body, &kind, e);
	if (rc) {
		char why[sizeof(e->msg)];
		snprintf(why, sizeof(why), "%s", e->msg);
		if (kind == ZC_HTTP_CUT)
			zc_fail(e, ZCOR_EUPSTREAM,
				"the wiki at '%s' did not answer in the time this call had (%s); nothing "
				"was looked up: go on without it, or try once more later",
				w->base_url, why);
		else if (kind == ZC_HTTP_TIMEOUT)
			zc_fail(e, ZCOR_EUPSTREAM,
				"the wiki at '%s' did not answer within wiki.timeoutMs (%ld ms); check the "
				"network and wiki.baseUrl in config.json, or raise wiki.timeoutMs",
				w->base_url, w->timeout_ms);
		else if (kind == ZC_HTTP_TOO_BIG)
			zc_fail(e, ZCOR_EUPSTREAM,
				"the wiki at '%s' answered more than wiki.maxBytes (%ld bytes); check that "
				"wiki.baseUrl in config.json is a MediaWiki api.php, or raise wiki.maxBytes",
				w->base_url, w->max_bytes);
		else if (kind == ZC_HTTP_UNREACHABLE || kind == ZC_HTTP_STATUS)
			zc_fail(e, ZCOR_EUPSTREAM,
				"the wiki at '%s' could not be asked (%s); check wiki.baseUrl in config.json "
				"and the network",
				w->base_url, why);
		/* else: the client's own error (EINTERNAL), as it is */
		goto out;
	}
	json_error_t je;
	*doc = json_loadb(body.p ? body.p : "", body.len, 0, &je);
	if (!*doc || !(json_is_array(*doc) || json_is_object(*doc))) {
		zc_fail(e, ZCOR_EUPSTREAM,
			"the wiki at '%s' did not answer with the MediaWiki API's JSON (it began '%s'); "
			"check that wiki.baseUrl in config.json is the wiki's api.php",
			w->base_url, ZC_Q(body.len ? zc_buf_str(&body) : "", 60));
		rc = ZCOR_EUPSTREAM;
		goto out;
	}
	json_t *err = json_is_object(*doc) ? json_object_get(*doc, "error") : NULL;
	if (json_is_object(err)) {
		const char *info = zc_json_str(err, "info"), *code = zc_json_str(err, "code");
		zc_fail(e, ZCOR_EUPSTREAM,
			"the wiki at '%s' refused the request: %s '%s'; check that wiki.baseUrl in "
			"config.json is a MediaWiki with the TextExtracts extension",
			w->base_url, ZC_Q(code ? code : "error", 40), ZC_Q(info ? info : "", 200));
		rc = ZCOR_EUPSTREAM;
	}
out:
	if (rc) {
		json_decref(*doc);
		*doc = NULL;
	}
	zc_buf_release(&body);
	return rc;
}

static int not_api(const struct zc_tool_env *env, const char *what, struct zc_err *e)
{
	return zc_fail(e, ZCOR_EUPSTREAM,
		       "the wiki at '%s' answered %s without the MediaWiki API's shape; check that "
		       "wiki.baseUrl in config.json is the wiki's api.php",
		       env->m->conf.cfg.wiki.base_url, what);
}

/* A title or URL of the answer within its cap, or the error naming it. */
static int over_cap(const struct zc_tool_env *env, const char *what, const char *s,
		    struct zc_err *e)
{
	int url = strcmp(what, "a page URL") == 0;
	size_t n = url ? strlen(s) : zc_utf8_len(s);
	if (n <= (url ? (size_t)ZC_WIKI_URL_BYTES : (size_t)ZC_WIKI_TITLE_CHARS))
		return ZCOR_OK;
	return zc_fail(e, ZCOR_EUPSTREAM,
		       "the wiki at '%s' answered %s of %zu %s (at most %d are taken) beginning '%s'; "
		       "a MediaWiki does not: check that wiki.baseUrl in config.json is the wiki's "
		       "api.php",
		       env->m->conf.cfg.wiki.base_url, what, n, url ? "bytes" : "characters",
		       url ? ZC_WIKI_URL_BYTES : ZC_WIKI_TITLE_CHARS, ZC_Q(s, 60));
}

/* ---- the two calls ---------------------------------------------------------- */

/* opensearch: *titles and *urls (new refs, arrays of strings; urls may be
 * shorter or empty). */
static int opensearch(const struct zc_tool_env *env, const char *q, json_t **titles, json_t **urls,
		      struct zc_err *e)
{
	struct zc_buf url = ZC_BUF_INIT;
	json_t *doc = NULL;
	*titles = *urls = NULL;
	zc_buf_addf(&url, "%s?action=opensearch&search=", env->m->conf.cfg.wiki.base_url);
	add_param(&url, q);
	zc_buf_addf(&url, "&limit=%d&namespace=0&format=json", WIKI_LIMIT);
	int rc = ask(env, zc_buf_str(&url), &doc, e);
	if (rc)
		goto out;
	json_t *t = json_array_get(doc, 1), *u = json_array_get(doc, 3);
	if (!json_is_array(doc) || !json_is_array(t)) {
		rc = not_api(env, "the title search (opensearch)", e);
		goto out;
	}
	*titles = json_array();
	*urls = json_array();
	size_t i;
	json_t *x;
	json_array_foreach(t, i, x) {
		if (!json_is_string(x) || !json_string_length(x))
			continue;
		json_t *ux = json_is_array(u) ? json_array_get(u, i) : NULL;
		if ((rc = over_cap(env, "a title", json_string_value(x), e)) ||
		    (json_is_string(ux) && (rc = over_cap(env, "a page URL", json_string_value(ux), e)))) {
			json_decref(*titles);
			json_decref(*urls);
			*titles = *urls = NULL;
			goto out;
		}
		json_array_append(*titles, x);
		json_array_append_new(*urls, json_is_string(ux) ? json_incref(ux) : json_null());
		if (json_array_size(*titles) >= WIKI_LIMIT)
			break;
	}
out:
	json_decref(doc);
	zc_buf_release(&url);
	return rc;
}

/* Index of the candidate equal to q after normalisation, else 0. */
static size_t pick(const json_t *titles, const char *q)
{
	char *nq = zc_norm(q);
	size_t i, best = 0;
	json_t *x;
	json_array_foreach(titles, i, x) {
		char *nt = zc_norm(json_string_value(x));
		int same = strcmp(nt, nq) == 0;
		zc_free(nt);
		if (same) {
			best = i;
			break;
		}
	}
	zc_free(nq);
	return best;
}

/* The page object of a query answer: pages is {id: page} (format 1) or
 * [page] (formatversion 2); the first one. */
static json_t *first_page(json_t *pages)
{
	if (json_is_array(pages))
		return json_array_get(pages, 0);
	if (json_is_object(pages)) {
		void *it = json_object_iter(pages);
		return it ? json_object_iter_value(it) : NULL;
	}
	return NULL;
}

/* The redirect the query followed (query.redirects[0].from; borrowed),
 * or NULL: one title was asked, so there is at most one. */
static void redirect_of(json_t *query, const char **from)
{
	*from = NULL;
	size_t i;
	json_t *r;
	json_array_foreach(json_object_get(query, "redirects"), i, r) {
		const char *f = zc_json_str(r, "from"), *t = zc_json_str(r, "to");
		if (f && t) {
			*from = f;
			break;
		}
	}
}

/* Cuts the extract to ZC_WIKI_EXTRACT_CHARS characters. */
static json_t *cut_extract(const char *s, int *truncated)
{
	size_t n = zc_utf8_prefix(s, ZC_WIKI_EXTRACT_CHARS);
	*truncated = s[n] != '\0';
	if (!*truncated)
		return json_string(s);
	struct zc_buf b = ZC_BUF_INIT;
	zc_buf_add(&b, s, n);
	zc_buf_adds(&b, "\xe2\x80\xa6");
	return zc_json_string_own(zc_buf_detach(&b));
}

/* prop=extracts for titles[i]: the result into *out, or not found (*out
 * NULL, ZCOR_OK). */
static int extract(const struct zc_tool_env *env, json_t *titles, json_t *urls, size_t i,
		   json_t **out, struct zc_err *e)
{
	const char *title = json_string_value(json_array_get(titles, i));
	struct zc_buf url = ZC_BUF_INIT;
	json_t *doc = NULL;
	*out = NULL;
	zc_buf_addf(&url,
		    "%s?action=query&prop=extracts&exintro=1&explaintext=1&redirects=1&titles=",
		    env->m->conf.cfg.wiki.base_url);
	add_param(&url, title);
	zc_buf_adds(&url, "&format=json");
	int rc = ask(env, zc_buf_str(&url), &doc, e);
	if (rc)
		goto out;
	json_t *query = json_object_get(doc, "query");
	json_t *page = first_page(json_object_get(query, "pages"));
	if (!json_is_object(page)) {
		rc = not_api(env, "the extract query (prop=extracts)", e);
		goto out;
	}
	if (json_object_get(page, "missing") || json_object_get(page, "invalid"))
		goto out; /* no such page after all */
	const char *final = zc_json_str(page, "title"), *text = zc_json_str(page, "extract");
	const char *from = NULL;
	if (!final)
		final = title;
	redirect_of(query, &from);
	if ((rc = over_cap(env, "a title", final, e)) || (from && (rc = over_cap(env, "a title", from, e))))
		goto out;
	int truncated = 0;
	json_t *ex = cut_extract(text ? text : "", &truncated); /* before truncated is read */
	*out = json_pack("{s:s, s:o, s:b}", "title", final, "extract", ex, "truncated", truncated);
	const char *u = json_string_value(json_array_get(urls, i));
	char *ru = u && from && strcmp(final, title) ? redirect_url(u, title, final) : NULL;
	if (ru && (rc = over_cap(env, "a page URL", ru, e))) {
		zc_free(ru);
		json_decref(*out);
		*out = NULL;
		goto out;
	}
	json_object_set_new(*out, "url", ru ? zc_json_string_own(ru) : u ? json_string(u) : json_null());
	if (from)
		json_object_set_new(*out, "redirectedFrom", json_string(from));
	json_object_set(*out, "candidates", titles);
out:
	json_decref(doc);
	zc_buf_release(&url);
	return rc;
}

/* ---- the tool ---------------------------------------------------------------- */

static int no_page(const struct zc_tool_env *env, const char *q, json_t *candidates,
		   struct zc_err *e)
{
	if (json_array_size(candidates))
		zc_fail(e, ZCOR_ENOTFOUND,
			"the wiki at '%s' has no page for '%s'; close titles are in details.candidates: "
			"look one of them up, or write nothing",
			env->m->conf.cfg.wiki.base_url, ZC_Q(q, 100));
	else
		zc_fail(e, ZCOR_ENOTFOUND,
			"the wiki at '%s' has no page for '%s'; try another spelling, or write nothing",
			env->m->conf.cfg.wiki.base_url, ZC_Q(q, 100));
	zc_json_err_detail(e, json_pack("{s:s, s:O}", "reason", "no_page", "candidates", candidates));
	return ZCOR_ENOTFOUND;
}

/* The query without the spaces around it; "" when only spaces. */
static char *trimmed(const char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
		n--;
	return zc_strndup(s, n);
}

int zc_wiki_lookup(const struct zc_tool_env *env, json_t *args, json_t **out, struct zc_err *e)
{
	const char *raw = zc_json_str(args, "query"); /* the schema requires it */
	char *q = trimmed(raw ? raw : ""), *nq = NULL;
	json_t *titles = NULL, *urls = NULL, *val = NULL;
	struct zc_buf key = ZC_BUF_INIT;
	int rc = ZCOR_OK, found = 0;
	*out = NULL;
	if (!*q) {
		rc = zc_fail(e, ZCOR_EINVAL,
			     "argument 'query' is only spaces; give the word or name to look up");
		goto out;
	}
	nq = zc_norm(q);
	zc_buf_addf(&key, "%s\n%s", env->m->conf.cfg.wiki.base_url, nq);
	if (cache_get(zc_buf_str(&key), &val, &found)) {
		if (found)
			*out = val, val = NULL;
		else
			rc = no_page(env, q, val, e);
		goto out;
	}
	if ((rc = opensearch(env, q, &titles, &urls, e)))
		goto out;
	if (json_array_size(titles) &&
	    (rc = extract(env, titles, urls, pick(titles, q), out, e)))
		goto out;
	if (*out) {
		cache_put(zc_buf_str(&key), *out, 1);
	} else {
		cache_put(zc_buf_str(&key), titles, 0);
		rc = no_page(env, q, titles, e);
	}
out:
	json_decref(val);
	json_decref(titles);
	json_decref(urls);
	zc_buf_release(&key);
	zc_free(nq);
	zc_free(q);
	return rc;
}
