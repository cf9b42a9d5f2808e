/*
 * wiki.h — wiki_lookup, the moegirl skill's MediaWiki lookup (SPEC §3.2):
 * opensearch for the title, then prop=extracts for the page's opening
 * text, from the MediaWiki API at config.json's wiki.baseUrl (default the
 * Moegirl wiki). Tools layer: it speaks HTTP only through env->http (the
 * callback the api layer wires over llm/transport.c).
 */
#ifndef ZC_WIKI_H
#define ZC_WIKI_H

#include <jansson.h>

#include "tools/tools.h"

/* Characters of the extract kept; a longer one is cut on a character
 * boundary, ends with "…" and the result says "truncated": true. */
#define ZC_WIKI_EXTRACT_CHARS 1200
/* What an answer may hold: a title (MediaWiki's own limit is 255 bytes,
 * so a longer one is not a MediaWiki's) and a page URL. The query is at
 * most 100 characters (the tool's schema). */
#define ZC_WIKI_TITLE_CHARS 255
#define ZC_WIKI_URL_BYTES 2000
/* The per-process cache: entries kept, and for how long. */
#define ZC_WIKI_CACHE_ENTRIES 256
#define ZC_WIKI_CACHE_MS (10 * 60 * 1000)

/*
 * The tool's handler (zc_tool_fn): args is {"query": 1..100 characters}.
 * *out is {title, extract, truncated, url, redirectedFrom?, candidates}.
 * No page: ZCOR_ENOTFOUND, details {"reason": "no_page", "candidates"}.
 * The wiki unreachable, too slow, too large, not the API's JSON, or an
 * answer with a title over ZC_WIKI_TITLE_CHARS characters or a URL over
 * ZC_WIKI_URL_BYTES bytes: ZCOR_EUPSTREAM naming the wiki and what to
 * check. Answers (pages and
 * "no page") are cached by base URL + normalised query.
 */
int zc_wiki_lookup(const struct zc_tool_env *env, json_t *args, json_t **out, struct zc_err *e);

#endif
