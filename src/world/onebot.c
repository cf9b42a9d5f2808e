/*
 * onebot.c — one OneBot v11 connection to NapCat over WebSocket (ws.c),
 * in either role: forward (a thread dials NapCat, runs the connection and
 * re-dials with capped exponential backoff and jitter) or reverse
 * (server/ hands over each upgraded socket; a newer connection replaces
 * the older one). After each connect it asks get_login_info for the bot's
 * own id; heartbeats (meta_event heartbeat, `interval` ms) keep the
 * connection: two intervals without one and it is dropped.
 *
 * Actions: zc_ob_call sends {action, params, echo} with a unique echo and
 * waits on the pending table for the {status, retcode, data, echo} that
 * carries it, in whatever order answers come; a dropped connection fails
 * its pending actions at once, ZC_OB_NOT_SENT when the frame never left
 * (zc_ws_written), ZC_OB_LOST when it did.
 *
 * A refused access token (HTTP 401/403 on the handshake, retcode 1403 on
 * an answer) sets the state "refused", is said once on stderr and is
 * retried only after reconnect_max_ms: never a fast loop.
 *
 * World layer, below world/qq.c; no zcor.h calls. It prints one line per
 * connect, disconnect and refusal on stderr: it is the world's log, like
 * serve's access log.
 *
 * Locking: ob->lock guards everything in struct zc_ob and the fields of
 * struct conn marked so; a connection's zc_ws is only touched under it
 * (sends, close) until its thread has marked it gone. The callbacks are
 * called without the lock.
 */
#include "world/onebot.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "base/alloc.h"
#include "base/timeutil.h"
#include "base/utf8.h"
#include "world/ws.h"

#define LIVED_RESET_MS 30000 /* a connection that lived this long resets the backoff */
#define RETCODE_REFUSED 1403
#define IDLE_MAX_MS 100      /* zc_ws_run returns after this much quiet to check the clock */

enum ob_state { ST_DOWN, ST_CONNECTING, ST_CONNECTED, ST_REFUSED };
static const char *const state_names[] = {"down", "connecting", "connected", "refused"};

struct pending {
	struct pending *next;
	char echo[48];
	unsigned gen;           /* the connection it was sent on */
	unsigned long long seq; /* its message number there (zc_ws_written) */
	int done;
	enum zc_ob_fail fail;
	long retcode;
	char message[256];
	json_t *data;
};

struct conn {
	struct conn *next;
	struct zc_ob *ob;
	struct zc_ws *ws; /* NULL once its thread let go of it (lock) */
	unsigned gen;
	pthread_t th;
	int has_thread, finished; /* (lock) */
	char login_echo[48];
	double login_at;
	int login_done;      /* (lock) */
	int refused;         /* NapCat answered retcode 1403 (lock) */
	char xself[32];      /* reverse: X-Self-ID */
	char why[256];       /* set when zcor dropped it (no heartbeat, refused) (lock) */
};

struct zc_ob {
	enum zc_ob_mode mode;
	char *url, *token, *token_env;
	int connect_timeout_ms, action_timeout_ms, reconnect_min_ms, reconnect_max_ms;
	struct zc_ob_cb cb;

	pthread_mutex_t lock;
	pthread_cond_t cond; /* CLOCK_MONOTONIC: an answer, a connection, stopping */
	int stopping;
	pthread_t fwd;
	int fwd_started;
	struct conn *cur;   /* the live connection, or NULL */
	struct conn *conns; /* reverse: every adopted one not yet joined */
	unsigned gen;
	struct pending *pend;
	unsigned long long echo_n;
	char echo_prefix[16];

	/* the status */
	enum ob_state state;
	int64_t connected_since, last_hb;
	double last_hb_mono;
	long hb_interval;
	char self_id[32];
	long connects, actions_failed, frames_dropped;
	char last_error[256];
	int refusal_said; /* the refusal line was printed and no connection came up since */
};

/* ---- small helpers ------------------------------------------------------ */

static void fmt(char *out, size_t n, const char *f, ...) __attribute__((format(printf, 3, 4)));
static void fmt(char *out, size_t n, const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	vsnprintf(out, n, f, ap);
	va_end(ap);
	zc_utf8_scrub(out);
}

/* The url for the log, without its query (NapCat's access_token may be
 * there). */
static void url_for_log(const struct zc_ob *ob, char *out, size_t n)
{
	const char *u = ob->url ? ob->url : "";
	fmt(out, n, "%.*s", (int)strcspn(u, "?"), u);
}

/* Waits on ob->cond until deadline (zc_time_mono_ms); lock held. */
static void wait_until(struct zc_ob *ob, double deadline)
{
	double left = deadline - zc_time_mono_ms();
	if (left <= 0)
		return;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	long long ns = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec + (long long)(left * 1e6);
	ts.tv_sec = (time_t)(ns / 1000000000LL);
	ts.tv_nsec = (long)(ns % 1000000000LL);
	pthread_cond_timedwait(&ob->cond, &ob->lock, &ts);
}

static unsigned long rand_ul(void)
{
	unsigned long v = 0;
	if (getrandom(&v, sizeof(v), 0) != (ssize_t)sizeof(v))
		v = (unsigned long)zc_time_now_ms(); /* (getrandom does not fail on Linux ≥ 3.17) */
	return v;
}

/* The delay before dial number attempt+1 (0 = the first retry): capped
 * exponential backoff with full jitter above the floor — uniform in
 * [min, min(max, min·2^attempt)], so a crowd of clients spreads out and
 * none ever waits less than reconnect_min_ms. */
static int backoff_ms(const struct zc_ob *ob, int attempt)
{
	long long lo = ob->reconnect_min_ms, hi = lo;
	for (int i = 0; i < attempt && hi < ob->reconnect_max_ms; i++)
		hi *= 2;
	if (hi > ob->reconnect_max_ms)
		hi = ob->reconnect_max_ms;
	if (hi <= lo)
		return (int)hi;
	return (int)(lo + (long long)(rand_ul() % (unsigned long)(hi - lo + 1)));
}

static void say_refused(struct zc_ob *ob, const char *how)
{
	pthread_mutex_lock(&ob->lock);
	int said = ob->refusal_said;
	ob->refusal_said = 1;
	pthread_mutex_unlock(&ob->lock);
	if (said)
		return;
	char env[80];
	fmt(env, sizeof(env), "%s", ob->token_env && *ob->token_env ? ob->token_env : "the access token");
	if (ob->mode == ZC_OB_FORWARD)
		fprintf(stderr, "qq: NapCat refused the access token (%s): set %s to NapCat's token; not "
				"retrying for %d s\n", how, env, (ob->reconnect_max_ms + 999) / 1000);
	else
		fprintf(stderr, "qq: NapCat refused the access token (%s): set %s to NapCat's token; its "
				"connection was closed\n", how, env);
}

/* ---- answers and events (the connection's thread) --------------------- */

/* Fills what an answer says into p's fields (lock held). */
static void read_answer(json_t *j, enum zc_ob_fail *fail, long *retcode, char *msg, size_t msgcap,
			json_t **data)
{
	const char *status = json_string_value(json_object_get(j, "status"));
	json_t *rc = json_object_get(j, "retcode");
	*retcode = json_is_integer(rc) ? (long)json_integer_value(rc) : 0;
	*data = NULL;
	msg[0] = '\0';
	if (status && (!strcmp(status, "ok") || !strcmp(status, "async"))) {
		*fail = ZC_OB_OK;
		json_t *d = json_object_get(j, "data");
		*data = d ? json_incref(d) : json_null();
		return;
	}
	if (status && !strcmp(status, "failed")) {
		*fail = ZC_OB_FAILED;
		const char *m = json_string_value(json_object_get(j, "message"));
		const char *w = json_string_value(json_object_get(j, "wording"));
		fmt(msg, msgcap, "%s", m && *m ? m : w && *w ? w : "NapCat answered status \"failed\"");
		return;
	}
	*fail = ZC_OB_BAD_ANSWER;
	fmt(msg, msgcap, "the answer has no status \"ok\" or \"failed\" (not OneBot v11?)");
}

/* Drops the connection from zcor's side, saying why (lock held). */
static void drop_locked(struct conn *c, int code, const char *why)
{
	if (!c->why[0])
		fmt(c->why, sizeof(c->why), "%s", why);
	if (c->ws)
		zc_ws_close(c->ws, code, why);
}

static void login_answer(struct conn *c, json_t *j)
{
	struct zc_ob *ob = c->ob;
	enum zc_ob_fail fail;
	long retcode;
	char msg[256];
	json_t *data = NULL;
	read_answer(j, &fail, &retcode, msg, sizeof(msg), &data);
	char id[32] = "";
	json_t *uid = json_object_get(data, "user_id");
	if (json_is_integer(uid))
		fmt(id, sizeof(id), "%lld", (long long)json_integer_value(uid));
	else if (json_is_string(uid) && strlen(json_string_value(uid)) < sizeof(id))
		fmt(id, sizeof(id), "%s", json_string_value(uid));
	json_decref(data);
	if (!id[0])
		fmt(id, sizeof(id), "%s", c->xself);

	pthread_mutex_lock(&ob->lock);
	int first = !c->login_done, is_cur = ob->cur == c;
	c->login_done = 1;
	if (retcode == RETCODE_REFUSED) {
		c->refused = 1;
		drop_locked(c, 1008, "NapCat refused the access token (retcode 1403)");
	} else if (is_cur) {
		fmt(ob->self_id, sizeof(ob->self_id), "%s", id);
		ob->refusal_said = 0;
	}
	pthread_mutex_unlock(&ob->lock);
	if (retcode == RETCODE_REFUSED) {
		say_refused(ob, "retcode 1403");
		return;
	}
	if (!first || !is_cur)
		return;
	char u[256];
	url_for_log(ob, u, sizeof(u));
	if (ob->mode == ZC_OB_FORWARD)
		fprintf(stderr, "qq: connected to %s as %s\n", u, id[0] ? id : "(unknown: get_login_info failed)");
	else
		fprintf(stderr, "qq: NapCat connected (reverse) as %s\n", id[0] ? id : "(unknown: get_login_info failed)");
	if (ob->cb.on_up)
		ob->cb.on_up(ob->cb.ud, id);
}

static void answer(struct conn *c, json_t *j, const char *echo)
{
	struct zc_ob *ob = c->ob;
	if (!strcmp(echo, c->login_echo)) {
		login_answer(c, j);
		return;
	}
	int refused = 0;
	pthread_mutex_lock(&ob->lock);
	struct pending *p = ob->pend;
	while (p && (p->done || p->gen != c->gen || strcmp(p->echo, echo)))
		p = p->next;
	if (!p) {
		ob->frames_dropped++; /* an echo we do not wait for (late, or not ours) */
	} else {
		read_answer(j, &p->fail, &p->retcode, p->message, sizeof(p->message), &p->data);
		p->done = 1;
		pthread_cond_broadcast(&ob->cond);
		if (p->retcode == RETCODE_REFUSED) {
			refused = 1;
			c->refused = 1;
			drop_locked(c, 1008, "NapCat refused the access token (retcode 1403)");
		}
	}
	pthread_mutex_unlock(&ob->lock);
	if (refused)
		say_refused(ob, "retcode 1403");
}

/* The heartbeat and the login's deadline, checked on every message and
 * whenever zc_ws_run comes back idle. */
static void check_health(struct conn *c)
{
	struct zc_ob *ob = c->ob;
	double now = zc_time_mono_ms();
	int login_late = 0;
	char id[32] = "";
	pthread_mutex_lock(&ob->lock);
	if (ob->cur == c && ob->hb_interval > 0 && now - ob->last_hb_mono > 2.0 * (double)ob->hb_interval) {
		char why[128];
		fmt(why, sizeof(why), "no heartbeat from NapCat for %.0f ms (interval %ld ms)",
		    now - ob->last_hb_mono, ob->hb_interval);
		drop_locked(c, 1000, why);
	}
	if (!c->login_done && now - c->login_at > ob->action_timeout_ms) {
		c->login_done = 1;
		login_late = ob->cur == c;
		fmt(id, sizeof(id), "%s", c->xself);
		if (login_late)
			fmt(ob->self_id, sizeof(ob->self_id), "%s", id);
	}
	pthread_mutex_unlock(&ob->lock);
	if (login_late) {
		char u[256];
		url_for_log(ob, u, sizeof(u));
		fprintf(stderr, "qq: connected to %s; get_login_info had no answer within %d ms%s%s\n",
			ob->mode == ZC_OB_FORWARD ? u : "zcor (reverse)", ob->action_timeout_ms,
			id[0] ? ", X-Self-ID says " : "", id);
		if (ob->cb.on_up)
			ob->cb.on_up(ob->cb.ud, id);
	}
}

static void on_text(void *ud, const char *text, size_t len)
{
	struct conn *c = ud;
	struct zc_ob *ob = c->ob;
	json_t *j = json_loadb(text, len, 0, NULL);
	json_t *pt = json_object_get(j, "post_type");
	json_t *echo = json_object_get(j, "echo");
	if (json_is_string(pt)) {
		const char *mt = json_string_value(json_object_get(j, "meta_event_type"));
		pthread_mutex_lock(&ob->lock);
		int is_cur = ob->cur == c;
		if (is_cur && mt && !strcmp(json_string_value(pt), "meta_event") && !strcmp(mt, "heartbeat")) {
			json_t *iv = json_object_get(j, "interval");
			if (json_is_integer(iv) && json_integer_value(iv) > 0 && json_integer_value(iv) <= 86400000)
				ob->hb_interval = (long)json_integer_value(iv);
			ob->last_hb = zc_time_now_ms();
			ob->last_hb_mono = zc_time_mono_ms();
		}
		if (!is_cur)
			ob->frames_dropped++; /* the closing tail of a replaced connection */
		pthread_mutex_unlock(&ob->lock);
		if (is_cur && ob->cb.on_event)
			ob->cb.on_event(ob->cb.ud, j);
	} else if (json_is_object(j) && json_is_string(echo)) {
		answer(c, j, json_string_value(echo));
	} else {
		/* not JSON, not an object, or neither an event nor an answer
		 * of ours (an echo we never send as a number): counted, dropped */
		pthread_mutex_lock(&ob->lock);
		ob->frames_dropped++;
		pthread_mutex_unlock(&ob->lock);
	}
	json_decref(j);
	check_health(c);
}

/* ---- a connection's life ------------------------------------------------ */

static struct conn *conn_new(struct zc_ob *ob, struct zc_ws *ws, const char *xself)
{
	struct conn *c = zc_calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->ob = ob;
	c->ws = ws;
	if (xself)
		fmt(c->xself, sizeof(c->xself), "%s", xself);
	return c;
}

/* Makes c the live connection (lock held). */
static void become_current(struct zc_ob *ob, struct conn *c)
{
	c->gen = ++ob->gen;
	ob->cur = c;
	ob->state = ST_CONNECTED;
	ob->connects++;
	ob->connected_since = zc_time_now_ms();
	ob->last_hb = 0;
	ob->last_hb_mono = zc_time_mono_ms();
	ob->hb_interval = 0;
	ob->self_id[0] = '\0';
	fmt(c->login_echo, sizeof(c->login_echo), "%s-login-%u", ob->echo_prefix, c->gen);
	pthread_cond_broadcast(&ob->cond);
}

/* Runs c until it closes; then fails its pending actions, and when it was
 * the live one, says it went down. why gets how it ended. Returns 1 when
 * c was the live connection until the end. */
static int conn_run(struct conn *c, char *why, size_t cap)
{
	struct zc_ob *ob = c->ob;
	char text[160];
	int n = snprintf(text, sizeof(text), "{\"action\":\"get_login_info\",\"params\":{},\"echo\":\"%s\"}",
			 c->login_echo);
	c->login_at = zc_time_mono_ms();
	zc_ws_send_text(c->ws, text, (size_t)n, NULL);
	struct zc_ws_cb cb = {on_text, c};
	char err[256] = "";
	for (;;) {
		pthread_mutex_lock(&ob->lock);
		long hb = ob->cur == c ? ob->hb_interval : 0;
		pthread_mutex_unlock(&ob->lock);
		int idle = hb > 0 && hb / 4 < IDLE_MAX_MS ? (int)(hb / 4) : IDLE_MAX_MS;
		if (idle < 10)
			idle = 10;
		if (zc_ws_run(c->ws, &cb, idle, err, sizeof(err)) == 0)
			break;
		check_health(c);
	}
	struct zc_ws *ws = c->ws;
	pthread_mutex_lock(&ob->lock);
	fmt(why, cap, "%s", c->why[0] ? c->why : err);
	unsigned long long written = zc_ws_written(ws);
	for (struct pending *p = ob->pend; p; p = p->next) {
		if (p->done || p->gen != c->gen)
			continue;
		p->done = 1;
		p->fail = written >= p->seq ? ZC_OB_LOST : ZC_OB_NOT_SENT;
		fmt(p->message, sizeof(p->message), "the connection to NapCat dropped %s: %s",
		    p->fail == ZC_OB_LOST ? "before the answer" : "before the action was sent", why);
	}
	int was_cur = ob->cur == c;
	if (was_cur) {
		ob->cur = NULL;
		ob->state = c->refused ? ST_REFUSED : ST_DOWN;
		ob->connected_since = 0;
		fmt(ob->last_error, sizeof(ob->last_error), "%s", why);
	}
	c->ws = NULL;
	pthread_cond_broadcast(&ob->cond);
	pthread_mutex_unlock(&ob->lock);
	zc_ws_free(ws);
	if (was_cur && ob->cb.on_down)
		ob->cb.on_down(ob->cb.ud, why);
	return was_cur;
}

/* ---- forward: dial, run, re-dial ---------------------------------------- */

static void *forward_main(void *arg)
{
	struct zc_ob *ob = arg;
	int attempt = 0;
	char u[256];
	url_for_log(ob, u, sizeof(u));
	pthread_mutex_lock(&ob->lock);
	while (!ob->stopping) {
		ob->state = ob->state == ST_REFUSED ? ST_REFUSED : ST_CONNECTING;
		pthread_mutex_unlock(&ob->lock);
		struct zc_ws *ws = NULL;
		int http = 0, delay;
		char err[256] = "";
		int rc = zc_ws_connect(ob->url, ob->token, ob->connect_timeout_ms, &ws, &http, err, sizeof(err));
		struct conn *c = rc == 0 ? conn_new(ob, ws, NULL) : NULL;
		if (rc == 0 && !c) {
			zc_ws_free(ws);
			rc = -1;
			fmt(err, sizeof(err), "out of memory");
		}
		pthread_mutex_lock(&ob->lock);
		if (ob->stopping) {
			if (c) {
				zc_ws_free(c->ws); /* (never shared: not current yet) */
				zc_free(c);
			}
			break;
		}
		if (rc) {
			int refused = http == 401 || http == 403;
			ob->state = refused ? ST_REFUSED : ST_DOWN;
			fmt(ob->last_error, sizeof(ob->last_error), "%s", err);
			delay = refused ? ob->reconnect_max_ms : backoff_ms(ob, attempt++);
			pthread_mutex_unlock(&ob->lock);
			if (refused) {
				char how[32];
				fmt(how, sizeof(how), "HTTP %d", http);
				say_refused(ob, how);
			} else {
				fprintf(stderr, "qq: cannot connect to %s: %s, retrying in %.1f s\n", u, err,
					delay / 1000.0);
			}
		} else {
			become_current(ob, c);
			pthread_mutex_unlock(&ob->lock);
			double began = zc_time_mono_ms();
			char why[256];
			conn_run(c, why, sizeof(why));
			if (zc_time_mono_ms() - began >= LIVED_RESET_MS)
				attempt = 0;
			delay = c->refused ? ob->reconnect_max_ms : backoff_ms(ob, attempt++);
			if (!c->refused && !ob->stopping)
				fprintf(stderr, "qq: connection lost: %s, reconnecting in %.1f s\n", why, delay / 1000.0);
			zc_free(c);
		}
		pthread_mutex_lock(&ob->lock);
		double until = zc_time_mono_ms() + delay;
		while (!ob->stopping && zc_time_mono_ms() < until)
			wait_until(ob, until);
	}
	pthread_mutex_unlock(&ob->lock);
	return NULL;
}

/* ---- reverse: adopted connections --------------------------------------- */

static void *reverse_main(void *arg)
{
	struct conn *c = arg;
	struct zc_ob *ob = c->ob;
	char why[256];
	int was_cur = conn_run(c, why, sizeof(why));
	if (was_cur && !c->refused && !ob->stopping)
		fprintf(stderr, "qq: connection lost: %s; waiting for NapCat to connect again\n", why);
	pthread_mutex_lock(&ob->lock);
	c->finished = 1;
	pthread_mutex_unlock(&ob->lock);
	return NULL;
}

/* Joins the reverse connections whose thread has ended. */
static void reap(struct zc_ob *ob, int all)
{
	struct conn *done = NULL;
	pthread_mutex_lock(&ob->lock);
	for (struct conn **pp = &ob->conns; *pp;) {
		struct conn *c = *pp;
		if (all || c->finished) {
			*pp = c->next;
			c->next = done;
			done = c;
		} else {
			pp = &c->next;
		}
	}
	pthread_mutex_unlock(&ob->lock);
	while (done) {
		struct conn *n = done->next;
		if (done->has_thread)
			pthread_join(done->th, NULL);
		zc_free(done);
		done = n;
	}
}

int zc_ob_adopt(struct zc_ob *ob, int fd, const char *extra, size_t extra_len, const char *self_id,
		void (*close_fd)(void *ud, int fd), void *close_ud)
{
	char err[256];
	struct zc_ws *ws = NULL;
	if (zc_ws_adopt(fd, extra, extra_len, close_fd, close_ud, &ws, err, sizeof(err)))
		return -1;
	struct conn *c = conn_new(ob, ws, self_id);
	if (!c) {
		zc_ws_free(ws);
		return -1;
	}
	reap(ob, 0);
	pthread_mutex_lock(&ob->lock);
	if (ob->stopping || ob->mode != ZC_OB_REVERSE) {
		pthread_mutex_unlock(&ob->lock);
		zc_ws_free(ws);
		zc_free(c);
		return -1;
	}
	struct conn *old = ob->cur;
	if (old)
		drop_locked(old, 1000, "replaced by a newer connection from NapCat");
	become_current(ob, c);
	if (pthread_create(&c->th, NULL, reverse_main, c) != 0) {
		ob->cur = NULL;
		ob->state = ST_DOWN;
		pthread_mutex_unlock(&ob->lock);
		zc_ws_free(ws);
		zc_free(c);
		return -1;
	}
	c->has_thread = 1;
	c->next = ob->conns;
	ob->conns = c;
	pthread_mutex_unlock(&ob->lock);
	return 0;
}

/* ---- the handle --------------------------------------------------------- */

struct zc_ob *zc_ob_new(const struct zc_ob_opts *opts, const struct zc_ob_cb *cb)
{
	struct zc_ob *ob = zc_calloc(1, sizeof(*ob));
	if (!ob)
		return NULL;
	ob->mode = opts->mode;
	ob->url = opts->url ? zc_strdup(opts->url) : NULL;
	ob->token = opts->token ? zc_strdup(opts->token) : NULL;
	ob->token_env = opts->token_env ? zc_strdup(opts->token_env) : NULL;
	if ((opts->url && !ob->url) || (opts->token && !ob->token) || (opts->token_env && !ob->token_env)) {
		zc_free(ob->url);
		zc_free(ob->token);
		zc_free(ob->token_env);
		zc_free(ob);
		return NULL;
	}
	ob->connect_timeout_ms = opts->connect_timeout_ms > 0 ? opts->connect_timeout_ms : 10000;
	ob->action_timeout_ms = opts->action_timeout_ms > 0 ? opts->action_timeout_ms : 10000;
	ob->reconnect_min_ms = opts->reconnect_min_ms > 0 ? opts->reconnect_min_ms : 1000;
	ob->reconnect_max_ms = opts->reconnect_max_ms >= ob->reconnect_min_ms ? opts->reconnect_max_ms
									       : ob->reconnect_min_ms;
	if (cb)
		ob->cb = *cb;
	pthread_mutex_init(&ob->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&ob->cond, &ca);
	pthread_condattr_destroy(&ca);
	/* echoes unique across connections and runs: a late answer to an
	 * earlier process's action never matches one of ours */
	fmt(ob->echo_prefix, sizeof(ob->echo_prefix), "zc%08lx", rand_ul() & 0xffffffffUL);
	ob->state = ST_DOWN;
	return ob;
}

int zc_ob_start(struct zc_ob *ob)
{
	if (ob->mode != ZC_OB_FORWARD)
		return 0;
	if (ob->fwd_started)
		return 0;
	if (pthread_create(&ob->fwd, NULL, forward_main, ob) != 0)
		return -1;
	ob->fwd_started = 1;
	return 0;
}

int zc_ob_call(struct zc_ob *ob, const char *action, json_t *params, int timeout_ms, int wait_up_ms,
	       json_t **data, struct zc_ob_result *res)
{
	struct zc_ob_result local;
	if (!res)
		res = &local;
	memset(res, 0, sizeof(*res));
	if (data)
		*data = NULL;
	struct pending p;
	memset(&p, 0, sizeof(p));
	char *text = NULL;
	int rc = -1;
	if (timeout_ms <= 0)
		timeout_ms = ob->action_timeout_ms;
	pthread_mutex_lock(&ob->lock);
	double up_until = zc_time_mono_ms() + (wait_up_ms > 0 ? wait_up_ms : 0);
	while (!ob->cur && !ob->stopping && zc_time_mono_ms() < up_until)
		wait_until(ob, up_until);
	if (!ob->cur || ob->stopping) {
		res->fail = ZC_OB_NOT_SENT;
		fmt(res->message, sizeof(res->message), "not connected to NapCat%s%s",
		    ob->last_error[0] ? ": " : "", ob->last_error);
		goto out;
	}
	struct conn *c = ob->cur;
	fmt(p.echo, sizeof(p.echo), "%s-%llu", ob->echo_prefix, ++ob->echo_n);
	json_t *frame = json_pack("{s:s, s:o, s:s}", "action", action ? action : "", "params",
				  params ? json_incref(params) : json_object(), "echo", p.echo);
	text = frame ? json_dumps(frame, JSON_COMPACT) : NULL;
	json_decref(frame);
	if (!text) {
		res->fail = ZC_OB_NOT_SENT;
		fmt(res->message, sizeof(res->message), "the action '%s' could not be built (out of memory, "
			"or params not JSON text)", ZC_Q(action ? action : "", 60));
		goto out;
	}
	if (zc_ws_send_text(c->ws, text, strlen(text), &p.seq)) {
		res->fail = ZC_OB_NOT_SENT;
		fmt(res->message, sizeof(res->message), "the connection to NapCat is closing or its send "
			"queue is full");
		goto out;
	}
	p.gen = c->gen;
	p.next = ob->pend;
	ob->pend = &p;
	double until = zc_time_mono_ms() + timeout_ms;
	while (!p.done && zc_time_mono_ms() < until)
		wait_until(ob, until);
	for (struct pending **pp = &ob->pend; *pp; pp = &(*pp)->next)
		if (*pp == &p) {
			*pp = p.next;
			break;
		}
	if (!p.done) {
		res->fail = ZC_OB_TIMEOUT;
		fmt(res->message, sizeof(res->message), "NapCat did not answer '%s' within %d ms",
		    ZC_Q(action ? action : "", 60), timeout_ms);
		goto out;
	}
	res->fail = p.fail;
	res->retcode = p.retcode;
	fmt(res->message, sizeof(res->message), "%s", p.message);
	if (p.fail == ZC_OB_OK) {
		rc = 0;
		if (data) {
			*data = p.data;
			p.data = NULL;
		}
	}
out:
	if (rc)
		ob->actions_failed++;
	pthread_mutex_unlock(&ob->lock);
	json_decref(p.data);
	zc_free(text);
	return rc;
}

json_t *zc_ob_status(struct zc_ob *ob)
{
	pthread_mutex_lock(&ob->lock);
	json_t *j = json_pack("{s:s, s:s, s:o, s:o, s:o, s:o, s:I, s:I, s:o, s:I}", "mode",
			      ob->mode == ZC_OB_FORWARD ? "forward" : "reverse", "state", state_names[ob->state],
			      "connectedSince", ob->cur ? json_integer(ob->connected_since) : json_null(),
			      "lastHeartbeat", ob->cur && ob->last_hb ? json_integer(ob->last_hb) : json_null(),
			      "heartbeatIntervalMs", ob->cur && ob->hb_interval ? json_integer(ob->hb_interval) : json_null(),
			      "selfId", ob->self_id[0] ? json_string(ob->self_id) : json_null(),
			      "reconnects", (json_int_t)(ob->connects > 1 ? ob->connects - 1 : 0),
			      "actionsFailed", (json_int_t)ob->actions_failed,
			      "lastError", ob->last_error[0] ? json_string(ob->last_error) : json_null(),
			      "framesDropped", (json_int_t)ob->frames_dropped);
	pthread_mutex_unlock(&ob->lock);
	return j;
}

void zc_ob_free(struct zc_ob *ob)
{
	if (!ob)
		return;
	pthread_mutex_lock(&ob->lock);
	ob->stopping = 1;
	if (ob->cur)
		drop_locked(ob->cur, 1001, "zcor is stopping");
	for (struct conn *c = ob->conns; c; c = c->next)
		drop_locked(c, 1001, "zcor is stopping");
	pthread_cond_broadcast(&ob->cond);
	pthread_mutex_unlock(&ob->lock);
	if (ob->fwd_started)
		pthread_join(ob->fwd, NULL);
	reap(ob, 1);
	pthread_mutex_destroy(&ob->lock);
	pthread_cond_destroy(&ob->cond);
	zc_free(ob->url);
	zc_free(ob->token);
	zc_free(ob->token_env);
	zc_free(ob);
}
