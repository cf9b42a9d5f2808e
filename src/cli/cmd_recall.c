/*
 * cmd_recall.c — `zcor recall` (what auto-recall would put before a batch
 * of messages) and `zcor prefix` (the system prefix).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

int cmd_recall(struct cli *c, int argc, char **argv)
{
	const struct cli_cmd *self = cli_find("recall");
	json_t *msgs = json_array(), *speakers = json_array(), *mentions = json_array();
	int as_json = 0, explain = 0, rc = CLI_USAGE;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int has = i + 1 < argc, common = cli_common_option(c, argc, argv, &i);
		if (common < 0) {
			rc = CLI_USAGE;
			goto out;
		}
		if (common) {
			continue;
		} else if (!strcmp(a, "--json")) {
			as_json = 1;
		} else if (!strcmp(a, "--explain")) {
			explain = 1;
		} else if (!strcmp(a, "--message") && has) {
			json_array_append_new(msgs, json_string(argv[++i]));
		} else if (!strcmp(a, "--mention") && has) {
			json_array_append_new(mentions, json_string(argv[++i]));
		} else if (!strcmp(a, "--speaker") && has) {
			const char *v = argv[++i], *colon = strchr(v, ':');
			json_t *sp = colon ? json_pack("{s:s%, s:s}", "id", v, (size_t)(colon - v), "name", colon + 1)
					   : json_pack("{s:s}", "id", v);
			json_array_append_new(speakers, sp);
		} else {
			goto out;
		}
	}
	if (!c->conversation || json_array_size(msgs) == 0) {
		fprintf(stderr, "zcor recall: needs --conversation KEY and at least one --message TEXT\n");
		goto out;
	}
	json_t *req = json_pack("{s:s, s:O, s:O, s:O, s:b}", "conversation", c->conversation, "messages",
				msgs, "speakers", speakers, "mentions", mentions, "explain", explain);
	char *text = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	zcor *z = cli_open(c);
	if (!z) {
		zc_free(text);
		rc = CLI_FAILED;
		goto out;
	}
	char *result = NULL;
	int r = zcor_recall(z, text, &result);
	zc_free(text);
	json_t *res = r ? NULL : json_loads(result, 0, NULL);
	if (r) {
		puts(cli_answer(z, r, result));
		rc = CLI_FAILED;
	} else if (as_json || explain) {
		char *pretty = json_dumps(res, JSON_INDENT(2));
		puts(pretty);
		zc_free(pretty);
		rc = CLI_OK;
	} else {
		const char *h = json_string_value(json_object_get(res, "header"));
		fputs(h && *h ? h : "", stdout);
		if (json_object_get(res, "warning"))
			fprintf(stderr, "zcor: %s\n", json_string_value(json_object_get(res, "warning")));
		rc = CLI_OK;
	}
	json_decref(res);
	zcor_free(result);
	zcor_close(z);
out:
	if (rc == CLI_USAGE)
		cli_usage(self);
	json_decref(msgs);
	json_decref(speakers);
	json_decref(mentions);
	return rc;
}

int cmd_prefix(struct cli *c, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		int common = cli_common_option(c, argc, argv, &i);
		if (common < 0)
			return CLI_USAGE;
		if (!common)
			return cli_usage(cli_find("prefix"));
	}
	zcor *z = cli_open(c);
	if (!z)
		return CLI_FAILED;
	char *text = NULL;
	int rc = zcor_prefix(z, c->conversation, &text);
	if (rc)
		fprintf(stderr, "zcor: %s\n", zcor_errmsg(z));
	else
		fputs(text, stdout);
	zcor_free(text);
	zcor_close(z);
	return rc ? CLI_FAILED : CLI_OK;
}

int cmd_reindex(struct cli *c, int argc, char **argv)
{
	if (argc != 1)
		return cli_usage(cli_find("reindex"));
	zcor *z = cli_open(c);
	if (!z)
		return CLI_FAILED;
	char *out = NULL;
	int rc = zcor_reindex(z, &out);
	puts(cli_answer(z, rc, out));
	zcor_free(out);
	zcor_close(z);
	return rc ? CLI_FAILED : CLI_OK;
}
