/*
 * schedule.c — the digest schedule (schedule.h). Server layer, over
 * zcor.h: zcor_digest_due says what is due and when the next wake is
 * (the rules live in memory/digest.c and agent/digest.c), zcor_digest
 * runs one. Only the timing and the catch-up bookkeeping are here.
 *
 * Catch-up (digestCatchUp, seed 003's 错过就补课): at start every
 * conversation's message count is noted; the first time a conversation's
 * count grows after start (its first message since), it is digested if
 * it is due then (not digested today, digestMinLines new lines) — once
 * per conversation per start, not once per message.
 */
#include "server/schedule.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "base/alloc.h"
#include "base/err.h"
#include "base/timeutil.h"
#include "zcor.h"

#define SEEN_MAX 4096 /* conversations tracked for the catch-up */

struct zc_sched {
	zcor *z;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t wake;
	int stopping;
	int64_t offset_ms; /* the test clock: the system's + this */
	int fake;
	/* catch-up: each conversation's message count at start; checked: its
	 * first message after start was seen (its one catch-up is spent) */
	json_t *counts;  /* {key: messages} */
	json_t *checked; /* {key: true} */
	/* config.json's timeZone at start (in effect: set before the threads)
	 * and the last one told about, "" for none */
	char zone_start[80], zone_told[80];
	int zone_read;
};

/* config.json's timeZone now ("" for none or null) into out. */
static void zone_now(struct zc_sched *s, char *out, size_t cap)
{
	char *text = NULL;
	out[0] = '\0';
	if (zcor_config_json(s->z, &text) == ZCOR_OK) {
		json_t *c = json_loads(text, 0, NULL);
		const char *v = json_string_value(json_object_get(c, "timeZone"));
		snprintf(out, cap, "%s", v ? v : "");
		json_decref(c);
	}
	zcor_free(text);
}

/* A timeZone changed on a running serve cannot move the process's local
 * time safely (TZ is process state other threads read): say so, once per
 * new value, so the operator knows a restart applies it. */
static void zone_check(struct zc_sched *s)
{
	char now[80];
	zone_now(s, now, sizeof(now));
	if (!s->zone_read) {
		snprintf(s->zone_start, sizeof(s->zone_start), "%s", now);
		snprintf(s->zone_told, sizeof(s->zone_told), "%s", now);
		s->zone_read = 1;
		return;
	}
	if (strcmp(now, s->zone_told) == 0)
		return;
	snprintf(s->zone_told, sizeof(s->zone_told), "%s", now);
	if (strcmp(now, s->zone_start) == 0)
		fprintf(stderr, "zcor serve: digest: timeZone is back to the one in effect\n");
	else
		fprintf(stderr,
			"zcor serve: digest: timeZone changed in config.json to %s%s%s: restart zcor serve to "
			"apply it; until then the digest hour and dates follow %s%s%s\n",
			*now ? "'" : "", *now ? now : "null (the system's)", *now ? "'" : "",
			*s->zone_start ? "'" : "", *s->zone_start ? s->zone_start : "the system's zone",
			*s->zone_start ? "'" : "");
}

static int64_t test_clock(void *ud)
{
	struct zc_sched *s = ud;
	return zc_time_now_ms() + s->offset_ms;
}

/* "2026-12-02 04:00 (local)" of a time in ms. */
static void local_text(int64_t ms, char *buf, size_t cap)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	if (!localtime_r(&t, &tm)) {
		snprintf(buf, cap, "%lld ms", (long long)ms);
		return;
	}
	strftime(buf, cap, "%Y-%m-%d %H:%M %Z", &tm);
}

static json_t *due_now(struct zc_sched *s)
{
	char *out = NULL;
	json_t *d = NULL;
	if (zcor_digest_due(s->z, &out) == ZCOR_OK)
		d = json_loads(out, 0, NULL);
	else
		fprintf(stderr, "zcor serve: digest: cannot list the conversations: %s\n",
			zcor_errmsg(s->z));
	zcor_free(out);
	return d;
}

static void run_one(struct zc_sched *s, const char *key, json_int_t lines, json_int_t min,
		    const char *trigger)
{
	char opts[64], *out = NULL;
	snprintf(opts, sizeof(opts), "{\"trigger\": \"%s\"}", trigger);
	fprintf(stderr, "zcor serve: digest %s: %lld/%lld lines (%s)\n", key, (long long)lines,
		(long long)min, trigger);
	int rc = zcor_digest(s->z, key, opts, &out);
	json_t *r = rc ? NULL : json_loads(out, 0, NULL);
	if (rc) {
		json_t *ej = json_loads(zcor_errjson(s->z), 0, NULL);
		json_t *det = json_object_get(json_object_get(ej, "error"), "details");
		const char *st = json_string_value(json_object_get(det, "status"));
		const char *why = json_string_value(json_object_get(det, "reason"));
		fprintf(stderr, "zcor serve: digest %s: %s: %s\n", key,
			st && !strcmp(st, "timeout")               ? "timed out"
			: why && !strcmp(why, "digest_running") ? "skipped"
								  : "failed",
			zcor_errmsg(s->z));
		json_decref(ej);
	} else if (json_is_true(json_object_get(r, "notDue"))) {
		fprintf(stderr, "zcor serve: digest %s: skipped: no longer due (digested today meanwhile)\n",
			key);
	} else if (json_is_true(json_object_get(r, "idle"))) {
		fprintf(stderr, "zcor serve: digest %s: nothing new\n", key);
	} else {
		fprintf(stderr, "zcor serve: digest %s: done (#%lld: %lld lines given%s, %zu tool calls)\n",
			key, (long long)json_integer_value(json_object_get(r, "digest")),
			(long long)json_integer_value(json_object_get(r, "sentLines")),
			json_is_true(json_object_get(r, "cut")) ? ", older ones left out" : "",
			json_array_size(json_object_get(r, "toolCalls")));
	}
	json_decref(r);
	zcor_free(out);
}

/* The daily round: every conversation due now. */
static void round_all(struct zc_sched *s, json_t *d)
{
	json_int_t min = json_integer_value(json_object_get(d, "minLines"));
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(d, "conversations"), i, c) {
		if (!json_is_true(json_object_get(c, "due")))
			continue;
		pthread_mutex_lock(&s->mu);
		int stop = s->stopping;
		pthread_mutex_unlock(&s->mu);
		if (stop) /* the rest wait for the next start's catch-up */
			break;
		const char *key = json_string_value(json_object_get(c, "conversation"));
		json_object_set_new(s->checked, key, json_true()); /* the wake served it */
		run_one(s, key, json_integer_value(json_object_get(c, "linesSinceDigest")), min,
			"schedule");
	}
}

/* Catch-up: conversations whose first message after start just came. */
static void catch_up(struct zc_sched *s, json_t *d)
{
	json_int_t min = json_integer_value(json_object_get(d, "minLines"));
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(d, "conversations"), i, c) {
		const char *key = json_string_value(json_object_get(c, "conversation"));
		if (json_object_get(s->checked, key))
			continue;
		json_int_t n = json_integer_value(json_object_get(c, "messages"));
		json_t *was = json_object_get(s->counts, key);
		if (json_object_size(s->checked) >= SEEN_MAX || (was && json_integer_value(was) >= n))
			continue;
		json_object_set_new(s->checked, key, json_true()); /* one per start */
		/* only when a wake went by without digesting it (zcor was down,
		 * or it was not due then): otherwise the next wake is its time */
		if (json_is_true(json_object_get(c, "due")) && json_is_true(json_object_get(c, "missedWake")))
			run_one(s, key, json_integer_value(json_object_get(c, "linesSinceDigest")), min,
				"catch-up");
	}
}

static void note_counts(struct zc_sched *s, json_t *d)
{
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(d, "conversations"), i, c) {
		if (json_object_size(s->counts) >= SEEN_MAX)
			break;
		json_object_set(s->counts, json_string_value(json_object_get(c, "conversation")),
				json_object_get(c, "messages"));
	}
}

static void *sched_main(void *ud)
{
	struct zc_sched *s = ud;
	json_t *d = due_now(s);
	int64_t next = 0;
	int memory = -1;
	json_int_t hour = -1; /* digestAtHour the next wake was computed from */
	char when[80];
	if (d)
		note_counts(s, d);
	for (;;) {
		if (d) {
			int on = json_is_true(json_object_get(d, "memory"));
			if (on != memory) { /* at start, and when config.json turns it on or off */
				memory = on;
				next = json_integer_value(json_object_get(d, "nextWake"));
				local_text(next, when, sizeof(when));
				if (on)
					fprintf(stderr,
						"zcor serve: memory enabled at %s: the digest wakes daily at "
						"%02lld:00 local time (digestMinLines %lld, catch-up %s)\n",
						when, (long long)json_integer_value(json_object_get(d, "atHour")),
						(long long)json_integer_value(json_object_get(d, "minLines")),
						json_is_true(json_object_get(d, "catchUp")) ? "on" : "off");
				else
					fprintf(stderr, "zcor serve: memory disabled (config.json \"memory\": "
							"false): no digest timer\n");
			}
			int64_t now = json_integer_value(json_object_get(d, "now"));
			zone_check(s);
			json_int_t h = json_integer_value(json_object_get(d, "atHour"));
			if (on && hour >= 0 && h != hour && now < next) {
				/* config.json's digestAtHour changed: the next wake is
				 * the new hour's, not the old one's */
				next = json_integer_value(json_object_get(d, "nextWake"));
				local_text(next, when, sizeof(when));
				fprintf(stderr,
					"zcor serve: digest: digestAtHour is now %02lld:00 (config.json): next "
					"wake at %s\n",
					(long long)h, when);
			}
			hour = h;
			if (on && now >= next) {
				round_all(s, d);
				json_decref(d);
				d = due_now(s);
				next = d ? json_integer_value(json_object_get(d, "nextWake")) : now + 86400000;
				local_text(next, when, sizeof(when));
				fprintf(stderr, "zcor serve: digest: next wake at %s\n", when);
			} else if (on && json_is_true(json_object_get(d, "catchUp"))) {
				catch_up(s, d);
			}
		}
		json_decref(d);
		d = NULL;
		pthread_mutex_lock(&s->mu);
		if (!s->stopping) {
			struct timespec until;
			clock_gettime(CLOCK_MONOTONIC, &until);
			until.tv_nsec += (long)(ZC_SCHED_POLL_MS % 1000) * 1000000L;
			until.tv_sec += ZC_SCHED_POLL_MS / 1000 + until.tv_nsec / 1000000000L;
			until.tv_nsec %= 1000000000L;
			pthread_cond_timedwait(&s->wake, &s->mu, &until);
		}
		int stop = s->stopping;
		pthread_mutex_unlock(&s->mu);
		if (stop)
			break;
		d = due_now(s);
	}
	return NULL;
}

const char *zc_sched_time_zone(zcor *z)
{
	static char name[80];
	char *out = NULL;
	const char *tz = NULL;
	if (zcor_config_json(z, &out) == ZCOR_OK) {
		json_t *c = json_loads(out, 0, NULL);
		const char *v = json_string_value(json_object_get(c, "timeZone"));
		if (v && *v && strlen(v) < sizeof(name)) {
			snprintf(name, sizeof(name), "%s", v);
			setenv("TZ", name, 1);
			tzset();
			tz = name;
		}
		json_decref(c);
	}
	zcor_free(out);
	return tz;
}

int zc_sched_start(const char *dir, const char *test_now, struct zc_sched **out, char *err,
		   size_t cap)
{
	*out = NULL;
	struct zc_sched *s = zc_calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, cap, "out of memory");
		return -1;
	}
	if (test_now && *test_now) {
		struct zc_err e = {0};
		int64_t at = 0;
		if (zc_time_parse(test_now, "ZCOR_TEST_NOW", &at, &e)) {
			snprintf(err, cap, "%s", e.msg);
			zc_free(s);
			return -1;
		}
		s->offset_ms = at - zc_time_now_ms();
		s->fake = 1;
	}
	if (zcor_open(&s->z, dir) != ZCOR_OK) {
		snprintf(err, cap, "the digest schedule cannot open '%s': %s", dir, zcor_errmsg(s->z));
		zcor_close(s->z);
		zc_free(s);
		return -1;
	}
	if (s->fake)
		zcor_set_clock(s->z, test_clock, s);
	s->counts = json_object();
	s->checked = json_object();
	pthread_mutex_init(&s->mu, NULL);
	pthread_condattr_t mono;
	pthread_condattr_init(&mono);
	pthread_condattr_setclock(&mono, CLOCK_MONOTONIC);
	pthread_cond_init(&s->wake, &mono);
	pthread_condattr_destroy(&mono);
	if (pthread_create(&s->thread, NULL, sched_main, s) != 0) {
		snprintf(err, cap, "cannot start the digest thread: %s", strerror(errno));
		zcor_close(s->z);
		json_decref(s->counts);
		json_decref(s->checked);
		zc_free(s);
		return -1;
	}
	*out = s;
	return 0;
}

void zc_sched_stop(struct zc_sched *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->mu);
	s->stopping = 1;
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->mu);
	zcor_interrupt(s->z); /* a run going on is cut, recorded, and the thread ends */
	pthread_join(s->thread, NULL);
	zcor_close(s->z);
	json_decref(s->counts);
	json_decref(s->checked);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->wake);
	zc_free(s);
}
