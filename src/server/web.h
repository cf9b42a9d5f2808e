/*
 * web.h — the Memory page's files (web/), embedded at build time by
 * cmake/embed_web.cmake: one row per file, paths relative to web/
 * ("index.html", "js/main.js"), ended by a row whose path is NULL.
 */
#ifndef ZC_SERVER_WEB_H
#define ZC_SERVER_WEB_H

#include <stddef.h>

struct zc_web_asset {
	const char *path;
	const char *type; /* the Content-Type to send */
	const unsigned char *data;
	size_t len;
};

extern const struct zc_web_asset zc_web_assets[];

#endif
