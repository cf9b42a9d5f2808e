/*
 * http.h — `zcor serve`: the HTTP server (REST, MCP over HTTP, the page).
 */
#ifndef ZC_HTTP_H
#define ZC_HTTP_H

/* A connection sends a request's line and headers within this many
 * seconds of connecting or of its previous answer, and its body within
 * the second many seconds of its headers; past that it is closed. */
#define ZC_SERVE_HEADER_TIMEOUT_DEFAULT 20
#define ZC_SERVE_BODY_TIMEOUT_DEFAULT 60
#define ZC_SERVE_TIMEOUT_MAX 3600

struct zc_serve_opts {
	const char *listen;   /* "ADDRESS:PORT"; NULL: 127.0.0.1:7700 */
	const char *token;    /* NULL: the one in dir/serve.token, made on first start */
	int warm_mb;          /* > 0: the first handle reads that much ahead (zcor_warm) */
	int header_timeout_s; /* 0: ZC_SERVE_HEADER_TIMEOUT_DEFAULT */
	int body_timeout_s;   /* 0: ZC_SERVE_BODY_TIMEOUT_DEFAULT */
	const char *test_now; /* ZCOR_TEST_NOW (tests only): the digest schedule's clock starts
	                       * at this ISO-8601 instant; NULL: the system clock */
};

/*
 * Serves the memory directory dir until SIGINT or SIGTERM. A non-loopback
 * listen address needs an explicit token. The first handle is read ahead
 * before the server listens. Returns the process exit status (0 after a
 * signal).
 */
int zc_serve(const char *dir, const struct zc_serve_opts *o);

#endif
