/*
 * test_qq_sched.c — the QQ world's decisions of when to answer
 * (src/world/qq_sched.c, issue 15): the quiet window and the maximum
 * wait, replies per minute, proactive replies (probability, cooldown,
 * quiet hours, never for a lone sticker) and the bot's sent ids.
 */
#include <string.h>

#include "harness.h"
#include "world/qq_sched.h"

static const struct zc_qq_sched_opts opts = {
	.quiet_ms = 1500, .max_wait_ms = 6000, .replies_per_minute = 2, .probability = 0.5,
	.cooldown_ms = 600000, .quiet_from = -1, .quiet_to = -1};

/* a burst: each message moves the quiet window; the first wake caps it */
static void quiet_window_and_max_wait(void)
{
	struct zc_qq_sched s = {0};
	zc_qq_sched_logged(&s, 1000, 0, "1");
	CHECK_INT(zc_qq_sched_due(&s, &opts), 0); /* nothing woke it */
	zc_qq_sched_logged(&s, 2000, 1, "2");
	CHECK_INT(zc_qq_sched_due(&s, &opts), 3500);
	zc_qq_sched_logged(&s, 3000, 0, "3");
	CHECK_INT(zc_qq_sched_due(&s, &opts), 4500); /* a later message moves it */
	zc_qq_sched_logged(&s, 4000, 1, "4");
	CHECK_INT(zc_qq_sched_due(&s, &opts), 5500);
	for (long long t = 5000; t <= 7500; t += 500)
		zc_qq_sched_logged(&s, t, 0, "x");
	CHECK_INT(zc_qq_sched_due(&s, &opts), 8000); /* max wait: first wake 2000 + 6000 */
	char quote[24];
	CHECK_INT(zc_qq_sched_start(&s, &opts, 8000, quote, sizeof(quote)), 1);
	CHECK_STR(quote, "2"); /* the message that woke it first */
	CHECK_INT(zc_qq_sched_due(&s, &opts), 0);
	/* quiet 0: due right after the message */
	struct zc_qq_sched_opts now = opts;
	now.quiet_ms = 0;
	zc_qq_sched_logged(&s, 9000, 1, "9");
	CHECK_INT(zc_qq_sched_due(&s, &now), 9000);
}

static void replies_per_minute(void)
{
	struct zc_qq_sched s = {0};
	char quote[24];
	zc_qq_sched_logged(&s, 1000, 1, "1");
	CHECK_INT(zc_qq_sched_start(&s, &opts, 1000, quote, sizeof(quote)), 1);
	zc_qq_sched_logged(&s, 2000, 1, "2");
	CHECK_INT(zc_qq_sched_start(&s, &opts, 2000, quote, sizeof(quote)), 1);
	zc_qq_sched_logged(&s, 3000, 1, "3");
	CHECK_INT(zc_qq_sched_start(&s, &opts, 3000, quote, sizeof(quote)), 0); /* the third in a minute */
	CHECK_INT(zc_qq_sched_due(&s, &opts), 0); /* refused: not retried */
	CHECK_INT(s.last_turn_ms, 2000);
	zc_qq_sched_logged(&s, 61000, 1, "4");
	CHECK_INT(zc_qq_sched_start(&s, &opts, 61000, quote, sizeof(quote)), 1); /* the first fell out */
	zc_qq_sched_logged(&s, 61500, 1, "5");
	CHECK_INT(zc_qq_sched_start(&s, &opts, 61500, quote, sizeof(quote)), 0);
	zc_qq_sched_logged(&s, 62000, 1, "6");
	CHECK_INT(zc_qq_sched_start(&s, &opts, 62000, quote, sizeof(quote)), 1);
}

static void proactive_rules(void)
{
	struct zc_qq_sched s = {0};
	CHECK_INT(zc_qq_sched_proactive(&s, &opts, 1000, 600, 0, 0.4), 1);
	CHECK_INT(zc_qq_sched_proactive(&s, &opts, 1000, 600, 0, 0.6), 0); /* the dice */
	CHECK_INT(zc_qq_sched_proactive(&s, &opts, 1000, 600, 1, 0.0), 0); /* a lone sticker: never */
	struct zc_qq_sched_opts off = opts;
	off.probability = 0;
	CHECK_INT(zc_qq_sched_proactive(&s, &off, 1000, 600, 0, 0.0), 0);
	/* cooldown after a turn */
	char quote[24];
	zc_qq_sched_logged(&s, 1000, 1, "1");
	CHECK_INT(zc_qq_sched_start(&s, &opts, 1000, quote, sizeof(quote)), 1);
	CHECK_INT(zc_qq_sched_proactive(&s, &opts, 1000 + 599999, 600, 0, 0.0), 0);
	CHECK_INT(zc_qq_sched_proactive(&s, &opts, 1000 + 600000, 600, 0, 0.0), 1);
	/* quiet hours in local minutes, across midnight */
	struct zc_qq_sched_opts night = opts;
	CHECK_INT(zc_qq_quiet_parse("23:30-07:00", &night.quiet_from, &night.quiet_to), 0);
	CHECK_INT(night.quiet_from, 23 * 60 + 30);
	CHECK_INT(night.quiet_to, 7 * 60);
	struct zc_qq_sched fresh = {0};
	CHECK_INT(zc_qq_sched_proactive(&fresh, &night, 1000, 23 * 60 + 30, 0, 0.0), 0);
	CHECK_INT(zc_qq_sched_proactive(&fresh, &night, 1000, 3 * 60, 0, 0.0), 0);
	CHECK_INT(zc_qq_sched_proactive(&fresh, &night, 1000, 7 * 60, 0, 0.0), 1);
	CHECK_INT(zc_qq_sched_proactive(&fresh, &night, 1000, 23 * 60 + 29, 0, 0.0), 1);
	CHECK_INT(zc_qq_quiet_parse("00:00-08:00", &night.quiet_from, &night.quiet_to), 0);
	CHECK_INT(zc_qq_quiet_in(night.quiet_from, night.quiet_to, 0), 1);
	CHECK_INT(zc_qq_quiet_in(night.quiet_from, night.quiet_to, 8 * 60), 0);
	CHECK_INT(zc_qq_quiet_parse("", &night.quiet_from, &night.quiet_to), 0);
	CHECK_INT(night.quiet_from, -1);
	CHECK_INT(zc_qq_quiet_in(night.quiet_from, night.quiet_to, 0), 0);
	CHECK_INT(zc_qq_quiet_parse("24:00-01:00", &night.quiet_from, &night.quiet_to), -1);
	CHECK_INT(zc_qq_quiet_parse("1:00-02:00", &night.quiet_from, &night.quiet_to), -1);
	/* a real wake while a proactive one is pending is a real one */
	struct zc_qq_sched p = {0};
	zc_qq_sched_logged(&p, 1000, 1, "7");
	p.proactive = 1;
	zc_qq_sched_logged(&p, 1100, 1, "8");
	CHECK_INT(p.proactive, 0);
	CHECK_STR(p.quote_id, "7");
	/* no proactive pick while a wake is pending */
	CHECK_INT(zc_qq_sched_proactive(&p, &opts, 1200, 600, 0, 0.0), 0);
}

static void sent_ids_ring(void)
{
	static struct zc_qq_sent s;
	memset(&s, 0, sizeof(s));
	zc_qq_sent_add(&s, "-2147483000");
	zc_qq_sent_add(&s, "12345");
	zc_qq_sent_add(&s, "not a number");
	CHECK(zc_qq_sent_has(&s, "12345"));
	CHECK(zc_qq_sent_has(&s, "-2147483000"));
	CHECK(!zc_qq_sent_has(&s, "1234"));
	CHECK(!zc_qq_sent_has(&s, "not a number"));
	CHECK(!zc_qq_sent_has(NULL, "12345"));
	char id[24];
	for (int i = 0; i < ZC_QQ_SENT_MAX; i++) {
		snprintf(id, sizeof(id), "%d", 100000 + i);
		zc_qq_sent_add(&s, id);
	}
	CHECK_INT(s.n, ZC_QQ_SENT_MAX);
	CHECK(!zc_qq_sent_has(&s, "12345")); /* the oldest went */
	CHECK(zc_qq_sent_has(&s, "100000"));
	snprintf(id, sizeof(id), "%d", 100000 + ZC_QQ_SENT_MAX - 1);
	CHECK(zc_qq_sent_has(&s, id));
}

static void rand_uniform(void)
{
	uint64_t st = 42;
	int below = 0;
	for (int i = 0; i < 10000; i++) {
		double r = zc_qq_rand(&st);
		CHECK(r >= 0 && r < 1);
		below += r < 0.25;
	}
	CHECK(below > 2200 && below < 2800);
	uint64_t zero = 0;
	double r = zc_qq_rand(&zero);
	CHECK(zero != 0 && r >= 0 && r < 1);
}

/* s22: a wake whose message the turn's batch took is answered — no
 * second turn quoting it; one left by a message after the batch, a poke
 * or a proactive pick stays */
static void issue15_wake_answered_by_the_batch(void)
{
	char quote[24];
	struct zc_qq_sched s = {0};
	zc_qq_sched_logged(&s, 1000, 1, "1");
	CHECK_INT(zc_qq_sched_start(&s, &opts, 1000, quote, sizeof(quote)), 1);
	/* logged after the start, before the worker read the batch */
	zc_qq_sched_logged(&s, 1010, 1, "2");
	zc_qq_sched_logged(&s, 1020, 0, "3");
	zc_qq_sched_logged(&s, 1030, 1, "4");
	CHECK_STR(s.quote_id, "2");
	const char *took_some[] = {"1", "2", "3"};
	CHECK_INT(zc_qq_sched_answered(&s, took_some, 3), 0); /* "4" came after the batch */
	CHECK_INT(zc_qq_sched_due(&s, &opts) > 0, 1);
	const char *took_all[] = {"1", "2", "3", "4"};
	CHECK_INT(zc_qq_sched_answered(&s, took_all, 4), 1);
	CHECK_INT(zc_qq_sched_due(&s, &opts), 0);
	CHECK_STR(s.quote_id, "");
	CHECK_INT(zc_qq_sched_answered(&s, took_all, 4), 0); /* nothing pending */
	/* a poke (no id) is not answered by a batch */
	zc_qq_sched_logged(&s, 2000, 1, NULL);
	CHECK_INT(zc_qq_sched_answered(&s, took_all, 4), 0);
	CHECK_INT(zc_qq_sched_due(&s, &opts) > 0, 1);
	/* nor a proactive pick */
	struct zc_qq_sched p = {0};
	zc_qq_sched_logged(&p, 1000, 1, "5");
	p.proactive = 1;
	const char *five[] = {"5"};
	CHECK_INT(zc_qq_sched_answered(&p, five, 1), 0);
	/* a start clears the last wake with the rest */
	struct zc_qq_sched r = {0};
	zc_qq_sched_logged(&r, 1000, 1, "6");
	CHECK_INT(zc_qq_sched_start(&r, &opts, 1000, quote, sizeof(quote)), 1);
	CHECK_STR(r.last_wake_id, "");
}

const struct t_case t_cases[] = {
	{"issue15_wake_answered_by_the_batch", issue15_wake_answered_by_the_batch},
	{"quiet_window_and_max_wait", quiet_window_and_max_wait},
	{"replies_per_minute", replies_per_minute},
	{"proactive_rules", proactive_rules},
	{"sent_ids_ring", sent_ids_ring},
	{"rand_uniform", rand_uniform},
	{0},
};
