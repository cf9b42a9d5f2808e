/*
 * cmd_chat.c — `zcor chat` (the console world, src/world/console.c: a
 * terminal chat, or one turn per line of a script), `zcor chat --once
 * TEXT` (one turn: the text is logged as the operator's console message,
 * the reply is printed) and `zcor turns` (the turn records).
 * CLI layer: parses and prints; the turn is libzcor's (zcor_turn).
 */
#include <jansson.h>
#include <langinfo.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fs.h"
#include "cli/cli.h"
#include "world/console.h"

#define CHAT_DEFAULT_CONVERSATION "console:local"
#define CHAT_HISTORY_FILE "chat_history"

/* Tool lines on standard error while the turn runs (standard output is
 * the reply alone, for scripts). */
static void tool_start(void *ud, const char *name, const char *arguments)
{
	(void)ud;
	fprintf(stderr, "· %s %.200s\n", name, arguments ? arguments : "");
}

static void tool_end(void *ud, const char *name, const char *status, const char *result)
{
	(void)ud, (void)result;
	fprintf(stderr, "· %s: %s\n", name, status);
}

static int chat_once(struct cli *c, const char *conv, const char *text, int as_json)
{
	zcor *z = cli_open(c);
	if (!z)
		return CLI_FAILED;
	char *out = NULL;
	int status = CLI_FAILED;
	/* nothing is logged when no turn can run */
	int rc = zcor_turn(z, conv, "{\"check\":true}", &out);
	zcor_free(out);
	out = NULL;
	if (rc) {
		fprintf(stderr, "zcor chat: %s\n", zcor_errmsg(z));
		status = rc == ZCOR_ENOPROVIDER ? CLI_USAGE : CLI_FAILED;
		goto done;
	}
	char msg[512];
	rc = zc_console_log(z, NULL, "cli", conv, text, msg, sizeof(msg));
	if (rc) {
		fprintf(stderr, "zcor chat: %s\n", msg);
		goto done;
	}
	struct zcor_turn_events ev = {.tool_start = tool_start, .tool_end = tool_end};
	rc = zcor_turn_stream(z, conv, NULL, &ev, &out);
	if (rc) {
		fprintf(stderr, "zcor chat: %s\n", zcor_errmsg(z));
		if (as_json)
			puts(zcor_errjson(z));
		json_t *err = json_loads(zcor_errjson(z), 0, NULL);
		const char *apology = json_string_value(
			json_object_get(json_object_get(json_object_get(err, "error"), "details"), "apology"));
		if (apology && !as_json)
			puts(apology);
		json_decref(err);
		goto done;
	}
	if (as_json) {
		puts(out);
	} else {
		json_t *r = json_loads(out, 0, NULL);
		const char *reply = json_string_value(json_object_get(r, "reply"));
		if (reply)
			puts(reply);
		json_decref(r);
	}
	status = CLI_OK;
done:
	zcor_free(out);
	zcor_close(z);
	return status;
}

/* libedit reads and shows multibyte characters only under a UTF-8
 * LC_CTYPE; a terminal left at "C" still gets Chinese right. */
static void chat_locale(void)
{
	const char *set = setlocale(LC_CTYPE, "");
	if (!set || strcmp(nl_langinfo(CODESET), "UTF-8") != 0)
		setlocale(LC_CTYPE, "C.UTF-8");
}

static int chat_console(struct cli *c, const char *conv)
{
	chat_locale();
	zcor *z = cli_open(c);
	if (!z)
		return CLI_FAILED;
	/* the history lives with the conversation it holds lines of
	 * (docs/TURN.md, "The console") */
	char *hist = zc_path_join(c->dir, CHAT_HISTORY_FILE);
	struct zc_console con = {.z = z, .conversation = conv, .history_path = hist,
				 .out = stdout, .err = stderr};
	int status = zc_console_run(&con);
	zc_free(hist);
	zcor_close(z);
	return status;
}

int cmd_chat(struct cli *c, int argc, char **argv)
{
	const char *once = NULL;
	int as_json = 0;
	for (int i = 1; i < argc; i++) {
		int k = cli_common_option(c, argc, argv, &i);
		if (k < 0)
			return CLI_USAGE;
		if (k)
			continue;
		if (strcmp(argv[i], "--once") == 0 && i + 1 < argc)
			once = argv[++i];
		else if (strcmp(argv[i], "--json") == 0)
			as_json = 1;
		else
			return cli_usage(cli_find("chat"));
	}
	const char *conv = c->conversation ? c->conversation : CHAT_DEFAULT_CONVERSATION;
	if (!once) {
		if (as_json) {
			fprintf(stderr, "zcor chat: --json goes with --once TEXT\n");
			return CLI_USAGE;
		}
		return chat_console(c, conv);
	}
	if (!*once) {
		fprintf(stderr, "zcor chat: --once needs the text of a message\n");
		return CLI_USAGE;
	}
	return chat_once(c, conv, once, as_json);
}

int cmd_turns(struct cli *c, int argc, char **argv)
{
	int as_json = 0;
	long limit = 20;
	for (int i = 1; i < argc; i++) {
		int k = cli_common_option(c, argc, argv, &i);
		if (k < 0)
			return CLI_USAGE;
		if (k)
			continue;
		if (strcmp(argv[i], "--json") == 0) {
			as_json = 1;
		} else if (strcmp(argv[i], "--limit") == 0 && i + 1 < argc) {
			char *end = NULL;
			limit = strtol(argv[++i], &end, 10);
			if (*end || limit < 1 || limit > 100) {
				fprintf(stderr, "zcor turns: --limit: give 1..100\n");
				return CLI_USAGE;
			}
		} else {
			return cli_usage(cli_find("turns"));
		}
	}
	json_t *q = json_pack("{s:I}", "limit", (json_int_t)limit);
	if (c->conversation)
		json_object_set_new(q, "conversation", json_string(c->conversation));
	char *query = json_dumps(q, JSON_COMPACT);
	json_decref(q);
	zcor *z = cli_open(c);
	if (!z) {
		zc_free(query);
		return CLI_FAILED;
	}
	char *out = NULL;
	int rc = zcor_turns(z, NULL, query, &out);
	zc_free(query);
	if (rc || as_json) {
		puts(cli_answer(z, rc, out));
	} else {
		json_t *r = json_loads(out, 0, NULL);
		size_t i;
		json_t *t;
		json_array_foreach(json_object_get(r, "items"), i, t) {
			const char *reply = json_string_value(json_object_get(t, "reply"));
			json_t *err = json_object_get(t, "error");
			printf("#%lld %s %s %s: %zu message(s), %zu tool call(s)%s%s\n",
			       (long long)json_integer_value(json_object_get(t, "id")),
			       json_string_value(json_object_get(t, "startedAt")),
			       json_string_value(json_object_get(t, "conversation")),
			       json_string_value(json_object_get(t, "status")),
			       json_array_size(json_object_get(t, "batch")),
			       json_array_size(json_object_get(t, "toolCalls")),
			       json_is_string(json_object_get(t, "limit")) ? ", limit " : "",
			       json_is_string(json_object_get(t, "limit"))
				       ? json_string_value(json_object_get(t, "limit"))
				       : "");
			if (reply)
				printf("   reply: %.300s\n", reply);
			if (json_is_object(err))
				printf("   error: %s\n", json_string_value(json_object_get(err, "message")));
		}
		json_decref(r);
	}
	zcor_free(out);
	zcor_close(z);
	return rc ? CLI_FAILED : CLI_OK;
}
