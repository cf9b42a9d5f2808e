/*
 * cmd_check.c — `zcor check-reply TEXT|-`: the [[图片: …]] check of a
 * reply before it is sent (Q-STK), for a host that runs the bot itself.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

int cmd_check_reply(struct cli *c, int argc, char **argv)
{
	if (argc != 2)
		return cli_usage(cli_find("check-reply"));
	char *text = strcmp(argv[1], "-") == 0 ? cli_read_stdin() : zc_strdup(argv[1]);
	if (!text) {
		fprintf(stderr, "zcor check-reply: cannot read the reply (at most %u bytes)\n",
			CLI_STDIN_MAX);
		return CLI_FAILED;
	}
	json_t *t = json_string(text);
	zc_free(text);
	if (!t) {
		fprintf(stderr, "zcor check-reply: the reply is not UTF-8 text\n");
		return CLI_FAILED;
	}
	json_t *req = json_pack("{s:o}", "text", t);
	char *body = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	zcor *z = cli_open(c);
	if (!z) {
		zc_free(body);
		return CLI_FAILED;
	}
	char *out = NULL;
	int rc = zcor_check_reply_json(z, body, &out);
	zc_free(body);
	const char *answer = cli_answer(z, rc, out);
	puts(answer ? answer : "{}");
	json_t *r = json_loads(answer ? answer : "", 0, NULL);
	zcor_free(out);
	zcor_close(z);
	int ok = rc == ZCOR_OK && json_is_true(json_object_get(r, "ok"));
	json_decref(r);
	return ok ? CLI_OK : CLI_FAILED;
}
