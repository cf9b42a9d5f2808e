/*
 * test_rest_routes.c — the REST route table of `zcor serve`
 * (src/server/rest.c) and its one matcher, without a server: every row is
 * reached by its pattern with each of its methods, a known path with
 * another method is told apart from an unknown path (405 with the methods
 * it takes, 404), params come out decoded once, and neither an extra
 * segment nor a %2F inside a param reaches another route (issue 13).
 */
#include <stdlib.h>

#include "harness.h"
#include "server/rest.h"

/* A concrete path for a pattern: each :param becomes "p<i>". */
static void path_of(const char *pattern, char *out, size_t n)
{
	size_t o = 0;
	int param = 0;
	for (const char *p = pattern; *p && o + 4 < n;) {
		if (*p == ':') {
			o += (size_t)snprintf(out + o, n - o, "p%d", param++);
			p += strcspn(p, "/");
		} else {
			out[o++] = *p++;
		}
	}
	out[o] = '\0';
}

static void every_route_is_reached_by_its_pattern(void)
{
	CHECK(zc_rest_nroutes > 30);
	for (size_t i = 0; i < zc_rest_nroutes; i++) {
		const struct zc_rest_route *row = &zc_rest_routes[i];
		char path[200];
		path_of(row->pattern, path, sizeof(path));
		CHECK(row->methods != 0);
		CHECK(row->fn != NULL);
		CHECK(row->ok == 200 || row->ok == 201);
		for (unsigned bit = 1; bit <= ZC_HTTP_DELETE; bit <<= 1) {
			if (!(row->methods & bit))
				continue;
			const struct zc_rest_route *got = NULL;
			struct zc_route_params p;
			unsigned allow = 0;
			int rc = zc_rest_find(bit, path, &got, &p, &allow);
			if (rc != 0 || got != row)
				fprintf(stderr, "route %s (method bit %u) not reached by '%s'\n", row->pattern,
					bit, path);
			CHECK_INT(rc, 0);
			CHECK(got == row);
			/* and with one trailing slash, as the old dispatch took it */
			char slash[210];
			snprintf(slash, sizeof(slash), "%s/", path);
			CHECK_INT(zc_rest_find(bit, slash, &got, &p, &allow), 0);
			CHECK(got == row);
		}
	}
}

static void a_wrong_method_is_405_with_allow(void)
{
	const struct zc_rest_route *got = NULL;
	struct zc_route_params p;
	unsigned allow = 0;
	CHECK_INT(zc_rest_find(ZC_HTTP_GET, "check-reply", &got, &p, &allow), 405);
	CHECK(got == NULL);
	CHECK_INT(allow, ZC_HTTP_POST);
	/* nodes/{id} takes GET, PUT and DELETE (three rows), not POST */
	CHECK_INT(zc_rest_find(ZC_HTTP_POST, "nodes/m1", &got, &p, &allow), 405);
	CHECK_INT(allow, ZC_HTTP_GET | ZC_HTTP_PUT | ZC_HTTP_DELETE);
	char text[64];
	zc_http_allow_text(allow, text, sizeof(text));
	CHECK_STR(text, "GET, PUT, DELETE");
	/* a method zcor does not know (HEAD, OPTIONS) is no bit: 405 too */
	CHECK_INT(zc_http_method_bit("HEAD"), 0);
	CHECK_INT(zc_rest_find(zc_http_method_bit("OPTIONS"), "tools", &got, &p, &allow), 405);
	CHECK_INT(zc_http_method_bit("PATCH"), ZC_HTTP_PUT);
	CHECK_INT(zc_http_method_bit("get"), 0); /* methods are case-sensitive */
	/* an unknown path is 404 */
	CHECK_INT(zc_rest_find(ZC_HTTP_GET, "nope", &got, &p, &allow), 404);
	CHECK_INT(allow, 0);
	CHECK_INT(zc_rest_find(ZC_HTTP_GET, "", &got, &p, &allow), 404);
}

static void params_are_extracted_and_decoded_once(void)
{
	const struct zc_rest_route *got = NULL;
	struct zc_route_params p;
	unsigned allow = 0;
	CHECK_INT(zc_rest_find(ZC_HTTP_GET, "conversations/group%3A100000001/messages", &got, &p, &allow), 0);
	CHECK_STR(got->pattern, "conversations/:key/messages");
	CHECK_INT(p.n, 1);
	CHECK_STR(p.v[0], "group:100000001");
	/* %253A is "%3A" after one decoding, never ':' */
	CHECK_INT(zc_rest_find(ZC_HTTP_GET, "conversations/group%253A1", &got, &p, &allow), 0);
	CHECK_STR(p.v[0], "group%3A1");
	/* UTF-8 and a '%' that starts no escape stay as they are */
	CHECK_INT(zc_rest_find(ZC_HTTP_GET, "people/%E5%B0%8F%zz", &got, &p, &allow), 0);
	CHECK_STR(got->pattern, "people/:id");
	CHECK_STR(p.v[0], "小%zz");
	CHECK_INT(zc_rest_find(ZC_HTTP_POST, "tools/zcor_memory_write", &got, &p, &allow), 0);
	CHECK_STR(p.v[0], "zcor_memory_write");
	/* a literal before a param in its place: synonyms/expand is not group "expand" */
	CHECK_INT(zc_rest_find(ZC_HTTP_GET, "synonyms/expand", &got, &p, &allow), 0);
	CHECK_STR(got->pattern, "synonyms/expand");
	CHECK_INT(zc_rest_find(ZC_HTTP_PUT, "synonyms/expand", &got, &p, &allow), 0);
	CHECK_STR(got->pattern, "synonyms/:n");
	CHECK_STR(p.v[0], "expand");
	/* a param of 159 bytes fits, one of 160 matches nothing */
	char path[300], id[200];
	memset(id, 'a', 159);
	id[159] = '\0';
	snprintf(path, sizeof(path), "nodes/%s", id);
	CHECK_INT(zc_rest_find(ZC_HTTP_GET, path, &got, &p, &allow), 0);
	CHECK_STR(p.v[0], id);
	snprintf(path, sizeof(path), "nodes/%sa", id);
	CHECK_INT(zc_rest_find(ZC_HTTP_GET, path, &got, &p, &allow), 404);
}

static void issue13_no_route_is_reached_through_another(void)
{
	const struct zc_rest_route *got = NULL;
	struct zc_route_params p;
	unsigned allow = 0;
	/* an extra segment */
	CHECK_INT(zc_rest_find(ZC_HTTP_GET, "nodes/m1/trace/x", &got, &p, &allow), 404);
	CHECK_INT(zc_rest_find(ZC_HTTP_POST, "tools/x/y", &got, &p, &allow), 404);
	CHECK_INT(zc_rest_find(ZC_HTTP_GET, "roots/x", &got, &p, &allow), 404);
	CHECK_INT(zc_rest_find(ZC_HTTP_POST, "conversations/group:1/messages/x", &got, &p, &allow), 404);
	/* %2F inside a param is no separator: it reaches no route at all */
	CHECK_INT(zc_rest_find(ZC_HTTP_GET, "nodes/m1%2Ftrace", &got, &p, &allow), 404);
	CHECK_INT(zc_rest_find(ZC_HTTP_GET, "nodes/m1%2ftrace", &got, &p, &allow), 404);
	CHECK_INT(zc_rest_find(ZC_HTTP_GET, "media/..%2Fmemory.db", &got, &p, &allow), 404);
	CHECK_INT(zc_rest_find(ZC_HTTP_POST, "tools/a%2Fb", &got, &p, &allow), 404);
	/* nor does %00, nor an empty param */
	CHECK_INT(zc_rest_find(ZC_HTTP_GET, "nodes/m1%00", &got, &p, &allow), 404);
	CHECK_INT(zc_rest_find(ZC_HTTP_GET, "nodes//trace", &got, &p, &allow), 404);
	CHECK_INT(zc_rest_find(ZC_HTTP_GET, "nodes/%2F", &got, &p, &allow), 404);
	/* a literal is matched whole, decoded as the rest */
	CHECK_INT(zc_rest_find(ZC_HTTP_GET, "nodesx", &got, &p, &allow), 404);
	CHECK_INT(zc_rest_find(ZC_HTTP_GET, "node", &got, &p, &allow), 404);
	CHECK_INT(zc_rest_find(ZC_HTTP_GET, "nodes/m1/trac%65", &got, &p, &allow), 0);
	CHECK_STR(got->pattern, "nodes/:id/trace");
	/* the matcher alone */
	CHECK(zc_route_match("a/:x/b", "a/1/b", NULL));
	CHECK(!zc_route_match("a/:x/b", "a/1", NULL));
	CHECK(!zc_route_match("a/:x", "a/1/b", NULL));
	CHECK(!zc_route_match("a", "a//", NULL));
}

const struct t_case t_cases[] = {
	{"every_route_is_reached_by_its_pattern", every_route_is_reached_by_its_pattern},
	{"a_wrong_method_is_405_with_allow", a_wrong_method_is_405_with_allow},
	{"params_are_extracted_and_decoded_once", params_are_extracted_and_decoded_once},
	{"issue13_no_route_is_reached_through_another", issue13_no_route_is_reached_through_another},
	{NULL, NULL},
};
