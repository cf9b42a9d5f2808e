/*
 * qq_sched.c — the QQ world's decisions of when to answer (qq_sched.h).
 * Pure arithmetic on a conversation's state: qq.c holds the lock, the
 * clock and the random state, and calls these. Never blocks, never
 * prints, no zcor.h calls.
 */
#include "world/qq_sched.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int two_digits(const char *s)
{
	if (s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9')
		return -1;
	return (s[0] - '0') * 10 + (s[1] - '0');
}

static int hhmm(const char *s)
{
	int h = two_digits(s), m = two_digits(s + 3);
	if (h < 0 || m < 0 || s[2] != ':' || h > 23 || m > 59)
		return -1;
	return h * 60 + m;
}

int zc_qq_quiet_parse(const char *s, int *from, int *to)
{
	*from = *to = -1;
	if (!s || !*s)
		return 0;
	if (strlen(s) != 11 || s[5] != '-')
		return -1;
	int a = hhmm(s), b = hhmm(s + 6);
	if (a < 0 || b < 0)
		return -1;
	*from = a;
	*to = b;
	return 0;
}

int zc_qq_quiet_in(int from, int to, int minute)
{
	if (from < 0 || to < 0 || from == to)
		return 0;
	if (from < to)
		return minute >= from && minute < to;
	return minute >= from || minute < to; /* crosses midnight */
}

void zc_qq_sched_logged(struct zc_qq_sched *s, long long now_ms, int wakes, const char *id)
{
	s->last_msg_ms = now_ms;
	if (!wakes)
		return;
	snprintf(s->last_wake_id, sizeof(s->last_wake_id), "%s", id ? id : "");
	if (!s->woken) {
		s->woken = 1;
		s->first_wake_ms = now_ms;
		snprintf(s->quote_id, sizeof(s->quote_id), "%s", id ? id : "");
	} else if (!s->quote_id[0] && id) {
		snprintf(s->quote_id, sizeof(s->quote_id), "%s", id);
	}
	s->proactive = 0; /* a real wake: set again by the caller for a proactive one */
}

int zc_qq_sched_proactive(const struct zc_qq_sched *s, const struct zc_qq_sched_opts *o,
			  long long now_ms, int local_minute, int lone_sticker, double rnd)
{
	if (o->probability <= 0 || lone_sticker || s->woken)
		return 0;
	if (!(rnd < o->probability))
		return 0;
	if (s->last_turn_ms && now_ms - s->last_turn_ms < o->cooldown_ms)
		return 0;
	return !zc_qq_quiet_in(o->quiet_from, o->quiet_to, local_minute);
}

long long zc_qq_sched_due(const struct zc_qq_sched *s, const struct zc_qq_sched_opts *o)
{
	if (!s->woken)
		return 0;
	long long quiet = s->last_msg_ms + o->quiet_ms;
	long long cap = s->first_wake_ms + o->max_wait_ms;
	long long due = quiet < cap ? quiet : cap;
	return due > 0 ? due : 1;
}

int zc_qq_sched_start(struct zc_qq_sched *s, const struct zc_qq_sched_opts *o, long long now_ms,
		      char *quote, size_t qcap)
{
	int limit = o->replies_per_minute;
	if (limit < 1)
		limit = 1;
	if (limit > ZC_QQ_RATE_MAX)
		limit = ZC_QQ_RATE_MAX;
	/* the starts within the last minute, newest first from head - 1 */
	int recent = 0;
	for (int i = 0; i < s->nstarts; i++) {
		int at = (s->head - 1 - i + ZC_QQ_RATE_MAX) % ZC_QQ_RATE_MAX;
		if (now_ms - s->starts[at] >= 60000)
			break;
		recent++;
	}
	if (quote && qcap)
		snprintf(quote, qcap, "%s", s->quote_id);
	s->woken = 0;
	s->proactive = 0;
	s->first_wake_ms = 0;
	s->quote_id[0] = '\0';
	s->last_wake_id[0] = '\0';
	if (recent >= limit)
		return 0;
	s->starts[s->head] = now_ms;
	s->head = (s->head + 1) % ZC_QQ_RATE_MAX;
	if (s->nstarts < ZC_QQ_RATE_MAX)
		s->nstarts++;
	s->last_turn_ms = now_ms;
	return 1;
}

int zc_qq_sched_answered(struct zc_qq_sched *s, const char *const *ids, size_t n)
{
	if (!s->woken || s->proactive || !s->last_wake_id[0])
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (ids[i] && strcmp(ids[i], s->last_wake_id) == 0) {
			s->woken = 0;
			s->first_wake_ms = 0;
			s->quote_id[0] = '\0';
			s->last_wake_id[0] = '\0';
			return 1;
		}
	}
	return 0;
}

static int parse_id(const char *id, int64_t *out)
{
	if (!id || !*id)
		return -1;
	char *end = NULL;
	errno = 0;
	long long v = strtoll(id, &end, 10);
	if (errno || !end || *end)
		return -1;
	*out = (int64_t)v;
	return 0;
}

void zc_qq_sent_add(struct zc_qq_sent *s, const char *id)
{
	int64_t v;
	if (parse_id(id, &v) || zc_qq_sent_has(s, id))
		return;
	s->ids[s->head] = v;
	s->head = (s->head + 1) % ZC_QQ_SENT_MAX;
	if (s->n < ZC_QQ_SENT_MAX)
		s->n++;
}

int zc_qq_sent_has(const struct zc_qq_sent *s, const char *id)
{
	int64_t v;
	if (!s || parse_id(id, &v))
		return 0;
	for (int i = 0; i < s->n; i++)
		if (s->ids[i] == v)
			return 1;
	return 0;
}

double zc_qq_rand(uint64_t *state)
{
	uint64_t x = *state ? *state : 0x9e3779b97f4a7c15ull;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return (double)((x * 0x2545f4914f6cdd1dull) >> 11) / 9007199254740992.0; /* 2^53 */
}
