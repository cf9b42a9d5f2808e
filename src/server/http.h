/*
 * http.h — `zcor serve`: the HTTP server (REST, MCP over HTTP, the page).
 */
#ifndef ZC_HTTP_H
#define ZC_HTTP_H

/*
 * Serves the memory directory dir on listen ("ADDRESS:PORT", default
 * 127.0.0.1:7700) until SIGINT or SIGTERM. token NULL: the one in
 * dir/serve.token, generated on first start. A non-loopback address needs
 * an explicit token. warm_mb > 0: the first handle reads that much ahead
 * (zcor_warm) before the server listens. Returns the process exit status
 * (0 after a signal).
 */
int zc_serve(const char *dir, const char *listen, const char *token, int warm_mb);

#endif
