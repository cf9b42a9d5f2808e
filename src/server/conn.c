/*
 * conn.c — the connections of `zcor serve`: a deadline per phase (the
 * request's line and headers, its body), eviction of the slowest past
 * EVICT_AT, the lingering close after a refusal sent before the body,
 * and the watchdog thread that enforces the deadlines.
 *
 * Server layer, under http.c (which wires these into MHD): it knows
 * sockets and MHD connections, never a request's content or a route; it
 * never closes a descriptor MHD owns (it shuts sockets down, MHD closes
 * them) and never blocks any thread but the connection's own.
 */
#include <errno.h>
#include <microhttpd.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "base/alloc.h"
#include "base/timeutil.h"
#include "server/internal.h"

/* Past this many connections, each new one closes the oldest connection
 * still waiting for its headers from the client that holds the most: a
 * handful of addresses of slow senders (8 × 32 fill 256) cannot keep out
 * a client that sends its request at once, whose connection never waits
 * long enough to be the oldest. IPv6 addresses count by their /64. */
#define EVICT_AT (ZC_MAX_CONNECTIONS - 32)

/* ---- connections: deadlines ------------------------------------------------ */

/* MHD's own timeout is an idle one: a client sending a header line every
 * few seconds never trips it, and 256 such connections once kept every
 * client out without a token (issue 12, defect 5). So each connection has
 * a deadline for the phase it is in — the request's line and headers
 * within header_ms of connecting or of the previous answer (which also
 * ends an idle keep-alive connection), the body within body_ms of the
 * headers — and the watchdog shuts the socket down past it. MHD then sees
 * the connection end and cleans it up on its own thread; the descriptor
 * stays MHD's, valid until zc_conn_notify(CLOSED) has unlinked the entry
 * under conn_lock, so a shutdown never reaches a reused descriptor. */

void zc_http_log_time(char *ts, size_t n)
{
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(ts, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

struct conn *zc_conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci ? ci->socket_context : NULL;
}

void zc_conn_phase(struct server *s, struct MHD_Connection *c, enum conn_phase phase)
{
	struct conn *x = zc_conn_of(c);
	if (!x)
		return;
	pthread_mutex_lock(&s->conn_lock);
	/* an upgraded connection stays so: MHD reports its request completed
	 * after the upgrade, which must not start a header deadline */
	if (x->phase != CONN_UPGRADED) {
		x->phase = phase;
		x->since = zc_time_mono_ms();
	}
	pthread_mutex_unlock(&s->conn_lock);
}

void zc_http_client_addr(const struct sockaddr *sa, char *out, size_t n, char *client, size_t cn)
{
	snprintf(out, n, "?");
	snprintf(client, cn, "?");
	if (sa && sa->sa_family == AF_INET) {
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, out, (socklen_t)n);
		snprintf(client, cn, "%s", out);
	} else if (sa && sa->sa_family == AF_INET6) {
		struct in6_addr a = ((const struct sockaddr_in6 *)sa)->sin6_addr;
		inet_ntop(AF_INET6, &a, out, (socklen_t)n);
		memset(a.s6_addr + 8, 0, 8);
		inet_ntop(AF_INET6, &a, client, (socklen_t)cn);
	}
}

/* The oldest connection still waiting for its headers, of the client
 * holding the most connections (conn_lock held); NULL when none waits. */
static struct conn *eviction_victim(struct server *s)
{
	struct conn *victim = NULL;
	int most = 0;
	for (struct conn *x = s->conns; x; x = x->next) {
		if (x->cut || x->phase != CONN_HEADERS)
			continue;
		int n = 0;
		for (struct conn *y = s->conns; y; y = y->next)
			n += !y->cut && strcmp(y->client, x->client) == 0;
		if (n > most || (n == most && x->since < victim->since)) {
			most = n;
			victim = x;
		}
	}
	return victim;
}

/* Lingering close. A refusal sent before the body was read leaves the
 * client still sending it; closing a socket with unread data makes the
 * kernel answer with a reset, and a reset that overtakes the answer makes
 * the client report "EPIPE" or "connection reset" instead of the 413
 * (seen in CI). So the connection's own thread, as MHD closes it, shuts
 * the sending side (the client sees the answer, then end of stream) and
 * reads and drops what still comes — until the client closes, at most
 * LINGER_MS and LINGER_BYTES — as nginx and Apache do. */
#define LINGER_MS 2000
#define LINGER_BYTES (4 * BODY_MAX)
static void linger_close(int fd)
{
	shutdown(fd, SHUT_WR);
	char sink[16384];
	size_t total = 0;
	double end = zc_time_mono_ms() + LINGER_MS;
	while (total < LINGER_BYTES) {
		double left = end - zc_time_mono_ms();
		if (left <= 0)
			break;
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int n = poll(&p, 1, (int)left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		ssize_t got = recv(fd, sink, sizeof(sink), MSG_DONTWAIT);
		if (got < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
			continue;
		if (got <= 0)
			break;
		total += (size_t)got;
	}
}

/* The request says a body follows (which a refusal leaves unread). */
int zc_conn_announces_body(struct MHD_Connection *c)
{
	const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
	if (cl && *cl && strcmp(cl, "0"))
		return 1;
	return MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Transfer-Encoding") != NULL;
}

void zc_conn_notify(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	struct server *s = cls;
	struct conn *x = *socket_context;
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *fd = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		const union MHD_ConnectionInfo *ad = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		x = zc_calloc(1, sizeof(*x));
		if (!x || !fd) { /* untracked: MHD's idle timeout still applies */
			zc_free(x);
			return;
		}
		x->fd = fd->connect_fd;
		x->phase = CONN_HEADERS;
		x->since = zc_time_mono_ms();
		zc_http_client_addr(ad ? ad->client_addr : NULL, x->addr, sizeof(x->addr), x->client, sizeof(x->client));
		pthread_mutex_lock(&s->conn_lock);
		x->next = s->conns;
		if (s->conns)
			s->conns->prev = x;
		s->conns = x;
		int live = 0;
		for (struct conn *y = s->conns; y; y = y->next)
			live += !y->cut;
		struct conn *v = live > EVICT_AT ? eviction_victim(s) : NULL;
		if (v) {
			shutdown(v->fd, SHUT_RDWR);
			v->cut = 1;
			char ts[32];
			zc_http_log_time(ts, sizeof(ts));
			fprintf(stderr, "{\"t\":\"%s\",\"client\":\"%s\",\"event\":\"evicted\",\"connections\":%d}\n",
				ts, v->addr, live);
		}
		pthread_mutex_unlock(&s->conn_lock);
		*socket_context = x;
		return;
	}
	if (!x)
		return;
	if (x->linger && !x->cut)
		linger_close(x->fd);
	pthread_mutex_lock(&s->conn_lock);
	if (x->prev)
		x->prev->next = x->next;
	else
		s->conns = x->next;
	if (x->next)
		x->next->prev = x->prev;
	pthread_mutex_unlock(&s->conn_lock);
	zc_free(x);
	*socket_context = NULL;
}

/* The watchdog: wakes at the earliest deadline (at least once a second,
 * and a new connection's deadline is never nearer than that) and shuts
 * down the connections past theirs. */
void *zc_conn_watchdog(void *arg)
{
	struct server *s = arg;
	pthread_mutex_lock(&s->conn_lock);
	while (!s->stopping) {
		double now = zc_time_mono_ms(), next = now + 1000;
		for (struct conn *x = s->conns; x; x = x->next) {
			if (x->cut || x->phase == CONN_HANDLING || x->phase == CONN_UPGRADED)
				continue;
			double limit = x->phase == CONN_HEADERS ? s->header_ms : s->body_ms;
			if (now - x->since < limit) {
				if (x->since + limit < next)
					next = x->since + limit;
				continue;
			}
			shutdown(x->fd, SHUT_RDWR);
			x->cut = 1;
			char ts[32];
			zc_http_log_time(ts, sizeof(ts));
			fprintf(stderr,
				"{\"t\":\"%s\",\"client\":\"%s\",\"event\":\"deadline\",\"phase\":\"%s\","
				"\"seconds\":%.0f}\n",
				ts, x->addr, x->phase == CONN_HEADERS ? "headers" : "body", limit / 1000);
		}
		/* conn_wake runs on CLOCK_MONOTONIC, as zc_time_mono_ms */
		struct timespec until;
		clock_gettime(CLOCK_MONOTONIC, &until);
		long long ns = (long long)until.tv_sec * 1000000000LL + until.tv_nsec +
			       (long long)((next - now + 1) * 1e6);
		until.tv_sec = (time_t)(ns / 1000000000LL);
		until.tv_nsec = (long)(ns % 1000000000LL);
		pthread_cond_timedwait(&s->conn_wake, &s->conn_lock, &until);
	}
	pthread_mutex_unlock(&s->conn_lock);
	return NULL;
}

