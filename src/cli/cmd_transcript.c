/*
 * cmd_transcript.c — `zcor transcript list | read | search | log |
 * export | import | digest-done`: the message log from the command line.
 * CLI layer: reads and searches go through the tool qq_transcript (so
 * they are recorded like any other read), logging and the log files
 * through the transcript calls of zcor.h. Prints JSON.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"


struct opts {
	const char *conversation, *from, *to, *out;
	long long limit, offset;
	json_t *words; /* positional arguments */
};

/* Parses the options after the action; returns CLI_OK or CLI_USAGE. */
static int parse_opts(int argc, char **argv, struct opts *o)
{
	o->limit = o->offset = -1;
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--conversation") && val)
			o->conversation = argv[++i];
		else if (!strcmp(a, "--from") && val)
			o->from = argv[++i];
		else if (!strcmp(a, "--to") && val)
			o->to = argv[++i];
		else if (!strcmp(a, "--out") && val)
			o->out = argv[++i];
		else if ((!strcmp(a, "--limit") || !strcmp(a, "--offset")) && val) {
			char *end = NULL;
			long long v = strtoll(val, &end, 10);
			if (*end || end == val) {
				fprintf(stderr, "zcor transcript: %s needs a number, not '%s'\n", a, val);
				return CLI_USAGE;
			}
			*(a[2] == 'l' ? &o->limit : &o->offset) = v;
			i++;
		} else if (a[0] == '-' && a[1] == '-') {
			fprintf(stderr, "zcor transcript: unknown option '%s' (or it needs a value)\n", a);
			return CLI_USAGE;
		} else {
			json_array_append_new(o->words, json_string(a));
		}
	}
	return CLI_OK;
}

/* Prints a JSON result and maps the code onto an exit status. */
static int print_result(zcor *z, int rc, char *out)
{
	const char *text = cli_answer(z, rc, out);
	puts(text ? text : "{}");
	zcor_free(out);
	return rc == ZCOR_OK ? CLI_OK : CLI_FAILED;
}

static int run_tool(struct cli *c, zcor *z, const char *action, struct opts *o, const char *conv)
{
	json_t *args = json_pack("{s:s}", "action", action);
	if (conv)
		json_object_set_new(args, "conversation", json_string(conv));
	if (o->from)
		json_object_set_new(args, "from", json_string(o->from));
	if (o->to)
		json_object_set_new(args, "to", json_string(o->to));
	if (o->limit >= 0)
		json_object_set_new(args, "limit", json_integer(o->limit));
	if (o->offset >= 0)
		json_object_set_new(args, "offset", json_integer(o->offset));
	if (!strcmp(action, "search"))
		json_object_set(args, "keywords", o->words);
	char *text = json_dumps(args, JSON_COMPACT);
	json_decref(args);
	int rc = cli_call_tool(c, z, "qq_transcript", text);
	zc_free(text);
	return rc;
}

int cmd_transcript(struct cli *c, int argc, char **argv)
{
	const struct cli_cmd *me = cli_find("transcript");
	struct opts o = {0};
	int rc = CLI_USAGE;
	zcor *z = NULL;
	o.words = json_array();
	if (argc < 2)
		goto usage;
	if (parse_opts(argc, argv, &o))
		goto out;
	const char *action = argv[1];
	const char *conv = o.conversation ? o.conversation : c->conversation;
	if (o.conversation && zcor_check_conversation(NULL, o.conversation)) {
		fprintf(stderr, "zcor transcript: %s\n", zcor_errmsg(NULL));
		goto out;
	}
	int needs_conv = !strcmp(action, "read") || !strcmp(action, "search") ||
			 !strcmp(action, "log") || !strcmp(action, "import") ||
			 !strcmp(action, "digest-done");
	size_t nwords = json_array_size(o.words);
	if (strcmp(action, "list") && !needs_conv && strcmp(action, "export"))
		goto usage;
	if ((needs_conv && !conv) || (!strcmp(action, "search") && nwords == 0) ||
	    (!strcmp(action, "import") && nwords == 0) ||
	    (strcmp(action, "search") && strcmp(action, "import") && nwords > 0) ||
	    (!strcmp(action, "export") && !o.out))
		goto usage;
	if (!(z = cli_open(c))) {
		rc = CLI_FAILED;
		goto out;
	}
	char *res = NULL;
	if (!strcmp(action, "list") || !strcmp(action, "read") || !strcmp(action, "search")) {
		rc = run_tool(c, z, action, &o, conv);
	} else if (!strcmp(action, "log")) {
		char *batch = cli_read_stdin();
		if (!batch) {
			fprintf(stderr, "zcor transcript log: cannot read the batch from standard input "
					"(at most 64 MiB)\n");
			rc = CLI_FAILED;
			goto out;
		}
		struct zcor_ctx ctx = {ZCOR_ACTOR_CLI, c->conversation};
		int r = zcor_log_messages(z, &ctx, conv, batch, &res);
		rc = print_result(z, r, res);
		zc_free(batch);
	} else if (!strcmp(action, "export")) {
		int r = zcor_transcript_export(z, conv, o.out, &res);
		rc = print_result(z, r, res);
	} else if (!strcmp(action, "digest-done")) {
		int r = zcor_digest_done(z, conv, &res);
		rc = print_result(z, r, res);
	} else { /* import FILE… */
		rc = CLI_OK;
		for (size_t i = 0; i < nwords; i++) {
			const char *file = json_string_value(json_array_get(o.words, i));
			int r = zcor_transcript_import_file(z, conv, file, &res);
			if (print_result(z, r, res))
				rc = CLI_FAILED;
			res = NULL;
		}
	}
	goto out;
usage:
	rc = cli_usage(me);
out:
	json_decref(o.words);
	zcor_close(z);
	return rc;
}
