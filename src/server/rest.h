/*
 * rest.h — the REST routes of `zcor serve` as a table (server layer,
 * private to src/server/ and its unit test): {methods, pattern, handler,
 * ok status}, and the one matcher that finds a request's row.
 */
#ifndef ZC_SERVER_REST_H
#define ZC_SERVER_REST_H

#include <microhttpd.h>
#include <stddef.h>

/* Methods as bits; PATCH is PUT (a partial update is what PUT does here). */
enum {
	ZC_HTTP_GET = 1,
	ZC_HTTP_POST = 2,
	ZC_HTTP_PUT = 4,
	ZC_HTTP_DELETE = 8,
};

/* The bit of a request method ("PATCH" is ZC_HTTP_PUT); 0 for any other. */
unsigned zc_http_method_bit(const char *method);
/* "GET, PUT" for the bits of allow (an Allow header's value). */
void zc_http_allow_text(unsigned allow, char *out, size_t n);

/* A route's :params, decoded once (%3A is ':'), in pattern order. */
#define ZC_ROUTE_PARAMS 2
#define ZC_ROUTE_PARAM_MAX 160 /* bytes, with the NUL; a longer one matches nothing */
struct zc_route_params {
	int n;
	char v[ZC_ROUTE_PARAMS][ZC_ROUTE_PARAM_MAX];
};

/*
 * Whether path (after "/api/v1/", without the query, still percent-encoded)
 * fits pattern ("nodes/:id/trace": literal segments and :params, one
 * segment each). A path has exactly the pattern's segments (one trailing
 * '/' is allowed); a param is not empty and decodes to no '/' or NUL, so
 * "nodes/a%2Ftrace" is no alias of "nodes/a/trace". Fills p on a match.
 */
int zc_route_match(const char *pattern, const char *path, struct zc_route_params *p);

struct rest_call;
typedef enum MHD_Result (*zc_rest_fn)(struct rest_call *k);

struct zc_rest_route {
	unsigned methods;    /* ZC_HTTP_* bits */
	const char *pattern; /* under /api/v1/ */
	zc_rest_fn fn;
	int ok;              /* the status of a success (201 for what creates) */
	const char *tool;    /* the tool a tool route calls, or NULL */
	const char *param;   /* the tool argument the route's :param becomes, or NULL */
};

extern const struct zc_rest_route zc_rest_routes[];
extern const size_t zc_rest_nroutes;

/*
 * The row for method and path (as zc_route_match): 0 with *route and p set;
 * 405 when the path is a route's but not for this method (*allow: the
 * methods it takes); 404 when no route has this path.
 */
int zc_rest_find(unsigned method, const char *path, const struct zc_rest_route **route,
		 struct zc_route_params *p, unsigned *allow);

#endif
