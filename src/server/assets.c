/*
 * assets.c — the Memory page of `zcor serve`: the embedded files of web/
 * (web.h), served with their Content-Security-Policy, and the token put
 * into the page (and its cookie) for the page's scripts.
 *
 * Server layer: speaks only include/zcor.h and web.h, and never serves
 * anything but an embedded file — there is no file system access here —
 * nor the page to a caller without the token (?token=, the cookie or the
 * Authorization header).
 */
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "server/internal.h"
#include "server/web.h"

/* What the page may do: its own scripts, styles and API, images from
 * blob: URLs (stickers fetched with the token header); no inline script,
 * no framing, no form posts, no plug-ins. */
#define PAGE_CSP                                                                             \
	"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; "   \
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
#define TOKEN_MARK "__ZCOR_TOKEN__"

static const struct zc_web_asset *web_asset(const char *path)
{
	for (const struct zc_web_asset *a = zc_web_assets; a->path; a++)
		if (strcmp(a->path, path) == 0)
			return a;
	return NULL;
}

static enum MHD_Result send_web(struct MHD_Connection *c, struct request *r, const char *type,
				char *body, size_t len, const char *cookie)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer_with_free_callback(len, body, zc_free);
	if (!resp) {
		zc_free(body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", type);
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, "Content-Security-Policy", PAGE_CSP);
	MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(resp, "X-Frame-Options", "DENY");
	if (cookie)
		MHD_add_response_header(resp, "Set-Cookie", cookie);
	r->status = 200;
	enum MHD_Result ret = MHD_queue_response(c, 200, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* index.html with the token HTML-escaped into <meta name="zcor-token">:
 * the page's scripts read it to send Authorization: Bearer. Only a
 * caller that already holds the token gets this page, and a page of
 * another origin cannot read it (same-origin policy; no CORS headers are
 * ever sent, and the Host check stops DNS rebinding). */
static char *page_with_token(const struct zc_web_asset *a, const char *token, size_t *len)
{
	const char *text = (const char *)a->data;
	const char *mark = strstr(text, TOKEN_MARK);
	size_t cap = a->len + 6 * strlen(token) + 1, n = 0;
	char *out = zc_malloc(cap);
	if (!out)
		return NULL;
	size_t head = mark ? (size_t)(mark - text) : a->len;
	memcpy(out, text, head);
	n = head;
	if (mark) {
		for (const char *p = token; *p; p++) {
			const char *esc = *p == '&' ? "&amp;" : *p == '"' ? "&quot;" : *p == '\'' ? "&#39;"
				: *p == '<' ? "&lt;" : *p == '>' ? "&gt;" : NULL;
			size_t k = esc ? strlen(esc) : 1;
			memcpy(out + n, esc ? esc : p, k);
			n += k;
		}
		size_t tail = a->len - head - strlen(TOKEN_MARK);
		memcpy(out + n, mark + strlen(TOKEN_MARK), tail);
		n += tail;
	}
	out[n] = '\0';
	*len = n;
	return out;
}

/* GET / (or /index.html) and /assets/<file under web/>. The page takes
 * the token from ?token= (and sets the cookie for reloads), the cookie or
 * the header; assets take the cookie or the header. */
enum MHD_Result zc_assets_serve(struct server *s, struct MHD_Connection *c, struct request *r,
				const char *url, int is_page)
{
	const char *q = is_page ? MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token") : NULL;
	int by_query = zc_http_token_ok(s, q);
	if (!by_query && !zc_http_token_ok(s, zc_http_cookie_token(c)) && !zc_http_token_ok(s, zc_http_bearer(c)))
		return zc_http_send_error(c, r, 401, "unauthorized",
				  "open the URL zcor serve printed (it carries ?token=…)");
	const struct zc_web_asset *a = web_asset(is_page ? "index.html" : url + strlen("/assets/"));
	if (!a)
		return zc_http_send_error(c, r, 404, "not_found", "no such file of the Memory page");
	size_t len = a->len;
	char *body = is_page ? page_with_token(a, s->token, &len) : zc_malloc(len + 1);
	if (!body)
		return zc_http_send_error(c, r, 500, "internal", "out of memory");
	if (!is_page)
		memcpy(body, a->data, len);
	char cookie[160];
	if (by_query)
		snprintf(cookie, sizeof(cookie), "zcor_token=%s; Path=/; HttpOnly; SameSite=Strict", s->token);
	return send_web(c, r, a->type, body, len, by_query ? cookie : NULL);
}
