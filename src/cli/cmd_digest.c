/*
 * cmd_digest.c — `zcor digest`: the digest runs by hand (Q-DIGEST,
 * docs/DIGEST.md). Without --now it lists the run records; with --now it
 * runs the conversations that are due (not digested today, at least
 * digestMinLines new lines), or, with --conversation K, K's digest
 * whatever its count: naming one is the operator asking for it. Argument
 * parsing and printing only; the run is zcor_digest.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/alloc.h"
#include "cli/cli.h"
#include "zcor.h"

static void print_run(const char *key, int rc, const char *out, zcor *z)
{
	json_t *r = rc ? NULL : json_loads(out, 0, NULL);
	if (rc) {
		printf("digest %s: failed: %s\n", key, zcor_errmsg(z));
	} else if (json_is_true(json_object_get(r, "notDue"))) {
		printf("digest %s: no longer due (digested today meanwhile)\n", key);
	} else if (json_is_true(json_object_get(r, "idle"))) {
		printf("digest %s: nothing new to digest\n", key);
	} else {
		printf("digest %s: done (#%lld), %lld/%lld lines%s, %zu tool call(s)\n", key,
		       (long long)json_integer_value(json_object_get(r, "digest")),
		       (long long)json_integer_value(json_object_get(r, "sentLines")),
		       (long long)json_integer_value(json_object_get(r, "lines")),
		       json_is_true(json_object_get(r, "cut")) ? " (older lines left out)" : "",
		       json_array_size(json_object_get(r, "toolCalls")));
	}
	json_decref(r);
}

/* Ctrl-C or SIGTERM while a run goes: the run is cut and recorded
 * (zcor_interrupt: one atomic store, safe in a handler), its lease given
 * back, instead of the process dying with the lease held until it runs
 * out. */
static zcor *running;
static void on_stop(int sig)
{
	(void)sig;
	zcor_interrupt(running);
}

static int run_now(struct cli *c, zcor *z, int as_json)
{
	struct sigaction sa, old_int, old_term;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	running = z;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	json_t *keys = json_array(), *results = json_array();
	int failed = 0;
	if (c->conversation) {
		json_array_append_new(keys, json_string(c->conversation));
	} else {
		char *due = NULL;
		int rc = zcor_digest_due(z, &due);
		if (rc) {
			puts(cli_answer(z, rc, due));
			zcor_free(due);
			json_decref(keys);
			json_decref(results);
			sigaction(SIGINT, &old_int, NULL);
			sigaction(SIGTERM, &old_term, NULL);
			running = NULL;
			return CLI_FAILED;
		}
		json_t *d = json_loads(due, 0, NULL);
		json_array_extend(keys, json_object_get(d, "due"));
		json_decref(d);
		zcor_free(due);
	}
	size_t i;
	json_t *k;
	json_array_foreach(keys, i, k) {
		char *out = NULL;
		const char *key = json_string_value(k);
		/* over the due list: each asked again under its lease, so a
		 * second --now (or serve's round) does not digest it twice */
		int rc = zcor_digest(z, key,
				     c->conversation ? "{\"trigger\": \"manual\"}"
						     : "{\"trigger\": \"manual\", \"ifDue\": true}",
				     &out);
		failed |= rc != ZCOR_OK;
		if (as_json)
			json_array_append_new(results, json_loads(cli_answer(z, rc, out), 0, NULL));
		else
			print_run(key, rc, out, z);
		zcor_free(out);
	}
	if (as_json) {
		json_t *all = json_pack("{s:O}", "runs", results);
		char *s = json_dumps(all, JSON_COMPACT);
		json_decref(all);
		puts(s);
		free(s);
	} else if (json_array_size(keys) == 0) {
		printf("no conversation is due (not digested today with enough new lines)\n");
	}
	json_decref(keys);
	json_decref(results);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	running = NULL;
	return failed ? CLI_FAILED : CLI_OK;
}

static int list_runs(struct cli *c, zcor *z, int as_json)
{
	json_t *q = json_pack("{s:I}", "limit", (json_int_t)50);
	if (c->conversation)
		json_object_set_new(q, "conversation", json_string(c->conversation));
	char *query = json_dumps(q, JSON_COMPACT), *out = NULL;
	json_decref(q);
	int rc = zcor_digests(z, NULL, query, &out);
	free(query);
	if (rc || as_json) {
		puts(cli_answer(z, rc, out));
	} else {
		json_t *r = json_loads(out, 0, NULL), *t;
		size_t i;
		json_array_foreach(json_object_get(r, "items"), i, t) {
			json_t *err = json_object_get(t, "error");
			printf("#%lld %s %s %s (%s): %lld/%lld lines%s, %zu tool call(s)\n",
			       (long long)json_integer_value(json_object_get(t, "id")),
			       json_string_value(json_object_get(t, "startedAt")),
			       json_string_value(json_object_get(t, "conversation")),
			       json_string_value(json_object_get(t, "status")),
			       json_string_value(json_object_get(t, "trigger")),
			       (long long)json_integer_value(json_object_get(t, "sentLines")),
			       (long long)json_integer_value(json_object_get(t, "lines")),
			       json_is_true(json_object_get(t, "cut")) ? " (cut)" : "",
			       json_array_size(json_object_get(t, "toolCalls")));
			if (json_is_object(err))
				printf("   error: %s\n", json_string_value(json_object_get(err, "message")));
		}
		if (json_array_size(json_object_get(r, "items")) == 0)
			printf("no digest has run yet\n");
		json_decref(r);
	}
	zcor_free(out);
	return rc ? CLI_FAILED : CLI_OK;
}

int cmd_digest(struct cli *c, int argc, char **argv)
{
	int as_json = 0, now = 0;
	for (int i = 1; i < argc; i++) {
		int k = cli_common_option(c, argc, argv, &i);
		if (k < 0)
			return CLI_USAGE;
		if (k)
			continue;
		if (strcmp(argv[i], "--json") == 0)
			as_json = 1;
		else if (strcmp(argv[i], "--now") == 0)
			now = 1;
		else
			return cli_usage(cli_find("digest"));
	}
	zcor *z = cli_open(c);
	if (!z)
		return CLI_FAILED;
	int rc = now ? run_now(c, z, as_json) : list_runs(c, z, as_json);
	zcor_close(z);
	return rc;
}
