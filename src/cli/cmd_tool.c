/*
 * cmd_tool.c — `zcor tool NAME [JSON|-]` and `zcor tools`.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"

int cmd_tool(struct cli *c, int argc, char **argv)
{
	const struct cli_cmd *self = cli_find("tool");
	if (argc < 2 || argc > 3)
		return cli_usage(self);
	char *args = NULL;
	if (argc == 3 && strcmp(argv[2], "-") == 0) {
		if (!(args = cli_read_stdin())) {
			fprintf(stderr, "zcor: standard input is larger than %u bytes\n", CLI_STDIN_MAX);
			return CLI_USAGE;
		}
	} else if (argc == 3) {
		args = zc_strdup(argv[2]);
	}
	zcor *z = cli_open(c);
	if (!z) {
		zc_free(args);
		return CLI_FAILED;
	}
	int rc = cli_call_tool(c, z, argv[1], args);
	zc_free(args);
	zcor_close(z);
	return rc;
}

int cmd_tools(struct cli *c, int argc, char **argv)
{
	int as_json = 0, en = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			as_json = 1;
		else if (strcmp(argv[i], "--en") == 0)
			en = 1;
		else
			return cli_usage(cli_find("tools"));
	}
	/* the list needs no memory directory; an existing one (its memory.db)
	 * is opened, so that the skill row lists that directory's project
	 * skills as MCP's tools/list does (a new one is never made here) */
	char *s = NULL, db[4096];
	struct stat st;
	zcor *z = NULL;
	if ((size_t)snprintf(db, sizeof(db), "%s/memory.db", c->dir) < sizeof(db) &&
	    stat(db, &st) == 0 && S_ISREG(st.st_mode) && zcor_open(&z, c->dir) != ZCOR_OK) {
		zcor_close(z);
		z = NULL;
	}
	if (zcor_tools_json(z, ZCOR_TOOLS_ALL | (en ? ZCOR_TOOLS_ENGLISH : 0), &s)) {
		fprintf(stderr, "zcor tools: %s\n", zcor_errmsg(z));
		zcor_close(z);
		return CLI_FAILED;
	}
	zcor_close(z);
	if (as_json) {
		puts(s);
		zcor_free(s);
		return CLI_OK;
	}
	json_t *list = json_loads(s, 0, NULL);
	zcor_free(s);
	size_t i;
	json_t *t;
	json_array_foreach(list, i, t) {
		printf("%s — %s\n    %s\n\n", json_string_value(json_object_get(t, "name")),
		       json_string_value(json_object_get(t, "title")),
		       json_string_value(json_object_get(t, "description")));
	}
	json_decref(list);
	return CLI_OK;
}
