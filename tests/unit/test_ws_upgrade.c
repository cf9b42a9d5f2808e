/*
 * test_ws_upgrade.c — the OneBot reverse endpoint of `zcor serve`
 * (server/upgrade.c, issue 15) through the real zc_serve on 127.0.0.1:
 * the upgrade's checks, NapCat's token instead of serve's, Host kept,
 * the socket handed to the real QQ world (worlds.qq in reverse mode, its
 * token in NAPCAT_TOKEN), which asks get_login_info over it, and the
 * connection surviving serve's header deadline.
 */
#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "base/timeutil.h"
#include "harness.h"
#include "server/http.h"
#include "world/onebot.h"
#include "world/qq.h"
#include "world/ws.h"

/* ---- zc_serve on a thread ---------------------------------------------- */

static int port;
static pthread_t serve_th;
static int serve_rc = -1;

static void *serve_main(void *arg)
{
	char listen[32];
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	struct zc_serve_opts o = {.listen = listen, .token = "serve-token-0123456789", .header_timeout_s = 1};
	serve_rc = zc_serve(arg, &o);
	return NULL;
}

static int tcp(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		return -1;
	}
	return fd;
}

static void serve_start(void)
{
	/* a free port: bind 0, read it, let it go */
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	bind(fd, (struct sockaddr *)&a, sizeof(a));
	socklen_t l = sizeof(a);
	getsockname(fd, (struct sockaddr *)&a, &l);
	port = ntohs(a.sin_port);
	close(fd);
	/* SIGTERM stops zc_serve (sigwait): blocked in every thread */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	char cfg[600];
	snprintf(cfg, sizeof(cfg),
		 "{\"worlds\": {\"qq\": {\"enabled\": true, \"mode\": \"reverse\", "
		 "\"path\": \"/onebot/v11/ws\", \"accessTokenEnv\": \"ZC_TEST_NAPCAT_TOKEN\"}}}");
	const char *dir = t_tmpdir();
	char path[512];
	snprintf(path, sizeof(path), "%s/config.json", dir);
	FILE *f = fopen(path, "w");
	fputs(cfg, f);
	fclose(f);
	setenv("ZC_TEST_NAPCAT_TOKEN", "nap-token", 1);
	pthread_create(&serve_th, NULL, serve_main, (void *)dir);
	for (int i = 0; i < 1000; i++) {
		int c = tcp();
		if (c >= 0) {
			close(c);
			return;
		}
		usleep(10000);
	}
	fprintf(stderr, "zc_serve did not listen\n");
}

static void serve_stop(void)
{
	kill(getpid(), SIGTERM);
	pthread_join(serve_th, NULL);
	CHECK_INT(serve_rc, 0);
}

/* One raw request; the status of the answer, its head+body in out. */
static int raw(const char *req, char *out, size_t cap)
{
	int fd = tcp();
	if (fd < 0)
		return -1;
	send(fd, req, strlen(req), MSG_NOSIGNAL);
	size_t got = 0;
	out[0] = '\0';
	while (got + 1 < cap) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, 10000) != 1)
			break;
		ssize_t r = recv(fd, out + got, cap - 1 - got, 0);
		if (r <= 0)
			break;
		got += (size_t)r;
		out[got] = '\0';
		if (strstr(out, "101 Switching"))
			break;
	}
	close(fd);
	int st = 0;
	sscanf(out, "HTTP/1.1 %d", &st);
	return st;
}

#define UPGRADE_HEADERS "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n" \
			"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"

static void reverse_refusals(void)
{
	char req[1024], out[4096];
	const char *host = "Host: 127.0.0.1:%d\r\n";
	char h[64];
	snprintf(h, sizeof(h), host, port);
	/* NapCat's token, not serve's: the upgrade goes through (101), with
	 * X-Self-ID and x-client-role passed on */
	snprintf(req, sizeof(req), "GET /onebot/v11/ws HTTP/1.1\r\n%s" UPGRADE_HEADERS
		 "Authorization: Bearer nap-token\r\nX-Self-ID: 3000000001\r\nx-client-role: Universal\r\n\r\n", h);
	CHECK_INT(raw(req, out, sizeof(out)), 101);
	CHECK_HAS(out, "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
	/* the token in the query, as NapCat may send it */
	snprintf(req, sizeof(req), "GET /onebot/v11/ws?access_token=nap-token HTTP/1.1\r\n%s" UPGRADE_HEADERS
		 "X-Self-ID: 3000000001\r\nx-client-role: Universal\r\n\r\n", h);
	CHECK_INT(raw(req, out, sizeof(out)), 101);
	/* a wrong token: the world's status and message, as JSON */
	snprintf(req, sizeof(req), "GET /onebot/v11/ws HTTP/1.1\r\n%s" UPGRADE_HEADERS
		 "Authorization: Bearer serve-token-0123456789\r\n\r\n", h);
	CHECK_INT(raw(req, out, sizeof(out)), 401);
	CHECK_HAS(out, "\"code\":\"unauthorized\"");
	CHECK_HAS(out, "ZC_TEST_NAPCAT_TOKEN");
	/* not an upgrade */
	snprintf(req, sizeof(req), "GET /onebot/v11/ws HTTP/1.1\r\n%sAuthorization: Bearer nap-token\r\n\r\n", h);
	CHECK_INT(raw(req, out, sizeof(out)), 426);
	CHECK_HAS(out, "Upgrade: websocket");
	snprintf(req, sizeof(req), "POST /onebot/v11/ws HTTP/1.1\r\n%s" UPGRADE_HEADERS "Content-Length: 0\r\n\r\n", h);
	CHECK_INT(raw(req, out, sizeof(out)), 405);
	snprintf(req, sizeof(req), "GET /onebot/v11/ws HTTP/1.1\r\n%sUpgrade: websocket\r\nConnection: Upgrade\r\n"
		 "Sec-WebSocket-Version: 8\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n", h);
	CHECK_INT(raw(req, out, sizeof(out)), 426);
	CHECK_HAS(out, "Sec-WebSocket-Version: 13");
	snprintf(req, sizeof(req), "GET /onebot/v11/ws HTTP/1.1\r\n%sUpgrade: websocket\r\nConnection: Upgrade\r\n"
		 "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: short\r\n\r\n", h);
	CHECK_INT(raw(req, out, sizeof(out)), 400);
	CHECK_HAS(out, "Sec-WebSocket-Key");
	/* the Host check stays (DNS rebinding) */
	snprintf(req, sizeof(req), "GET /onebot/v11/ws HTTP/1.1\r\nHost: evil.example:%d\r\n" UPGRADE_HEADERS
		 "Authorization: Bearer nap-token\r\n\r\n", port);
	CHECK_INT(raw(req, out, sizeof(out)), 403);
	/* another path still wants serve's token */
	snprintf(req, sizeof(req), "GET /api/v1/stats HTTP/1.1\r\n%sAuthorization: Bearer nap-token\r\n\r\n", h);
	CHECK_INT(raw(req, out, sizeof(out)), 401);
}

/* NapCat's side: answers get_login_info and echo. */
struct nap {
	struct zc_ws *w;
	char err[256];
	int logins; /* get_login_info asked (the world's connection, after adopting) */
};
static void nap_text(void *ud, const char *t, size_t n)
{
	struct nap *p = ud;
	json_t *j = json_loadb(t, n, 0, NULL);
	const char *action = json_string_value(json_object_get(j, "action"));
	const char *echo = json_string_value(json_object_get(j, "echo"));
	json_t *a = NULL;
	if (action && !strcmp(action, "get_login_info"))
		__atomic_add_fetch(&p->logins, 1, __ATOMIC_RELAXED), a = json_pack("{s:s, s:i, s:{s:I}, s:s}", "status", "ok", "retcode", 0, "data", "user_id",
			      (json_int_t)3000000001LL, "echo", echo);
	else if (action && !strcmp(action, "echo"))
		a = json_pack("{s:s, s:i, s:O, s:s}", "status", "ok", "retcode", 0, "data",
			      json_object_get(j, "params"), "echo", echo);
	if (a) {
		char *s = json_dumps(a, JSON_COMPACT);
		zc_ws_send_text(p->w, s, strlen(s), NULL);
		free(s);
		json_decref(a);
	}
	json_decref(j);
}
static void *nap_main(void *arg)
{
	struct nap *p = arg;
	struct zc_ws_cb cb = {nap_text, p};
	zc_ws_run(p->w, &cb, 0, p->err, sizeof(p->err));
	return NULL;
}

/* The QQ world's status as GET /api/v1/worlds gives it (serve's token). */
static void worlds_status(char *out, size_t cap)
{
	char req[256];
	snprintf(req, sizeof(req),
		 "GET /api/v1/worlds HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
		 "Authorization: Bearer serve-token-0123456789\r\nConnection: close\r\n\r\n",
		 port);
	int fd = tcp();
	out[0] = '\0';
	if (fd < 0)
		return;
	send(fd, req, strlen(req), MSG_NOSIGNAL);
	size_t got = 0;
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (got + 1 >= cap || poll(&p, 1, 10000) != 1)
			break;
		ssize_t r = recv(fd, out + got, cap - 1 - got, 0);
		if (r <= 0)
			break;
		got += (size_t)r;
		out[got] = '\0';
	}
	close(fd);
}

/* A real WebSocket through serve into the QQ world: it asks
 * get_login_info over it, and the connection is still up after serve's
 * 1 s header deadline has passed twice. */
static void reverse_round_trip_outlives_deadline(void)
{
	char url[64], err[256], out[8192];
	snprintf(url, sizeof(url), "ws://127.0.0.1:%d/onebot/v11/ws", port);
	struct nap p = {0};
	int http = 0;
	CHECK_INT(zc_ws_connect_h(url, "nap-token", "X-Self-ID: 3000000001\r\nx-client-role: Universal\r\n",
				  10000, &p.w, &http, err, sizeof(err)),
		  0);
	if (!p.w) {
		fprintf(stderr, "connect: %s\n", err);
		return;
	}
	pthread_t th;
	pthread_create(&th, NULL, nap_main, &p);
	for (int i = 0; i < 1000 && !__atomic_load_n(&p.logins, __ATOMIC_RELAXED); i++)
		usleep(10000);
	CHECK(p.logins >= 1);
	usleep(2500 * 1000); /* past --header-timeout 1 (the watchdog wakes each second) */
	worlds_status(out, sizeof(out));
	CHECK_HAS(out, "\"state\":\"connected\"");
	CHECK_HAS(out, "\"selfId\":\"3000000001\"");
	serve_stop(); /* the world closes NapCat's connection before MHD stops */
	pthread_join(th, NULL);
	CHECK_HAS(p.err, "100");
	zc_ws_free(p.w);
}

static void reverse_endpoint(void)
{
	serve_start();
	reverse_refusals();
	reverse_round_trip_outlives_deadline();
}

const struct t_case t_cases[] = {
	{"reverse_endpoint", reverse_endpoint},
	{0},
};
