/*
 * cmd_tool.c — `zcor tool NAME [JSON|-]` and `zcor tools`.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

#define STDIN_MAX (64u << 20)

/* All of standard input, or NULL past STDIN_MAX (caller frees). */
static char *read_stdin(void)
{
	size_t len = 0, cap = 65536;
	char *p = malloc(cap);
	size_t n;
	while (p && (n = fread(p + len, 1, cap - len - 1, stdin)) > 0) {
		len += n;
		if (len + 1 == cap) {
			if (cap >= STDIN_MAX) {
				free(p);
				return NULL;
			}
			char *q = realloc(p, cap *= 2);
			if (!q)
				free(p);
			p = q;
		}
	}
	if (p)
		p[len] = '\0';
	return p;
}

int cmd_tool(struct cli *c, int argc, char **argv)
{
	const struct cli_cmd *self = cli_find("tool");
	if (argc < 2 || argc > 3)
		return cli_usage(self);
	char *args = NULL;
	if (argc == 3 && strcmp(argv[2], "-") == 0) {
		if (!(args = read_stdin())) {
			fprintf(stderr, "zcor: standard input is larger than %u bytes\n", STDIN_MAX);
			return CLI_USAGE;
		}
	} else if (argc == 3) {
		args = strdup(argv[2]);
	}
	zcor *z = cli_open(c);
	if (!z) {
		free(args);
		return CLI_FAILED;
	}
	int rc = cli_call_tool(c, z, argv[1], args);
	free(args);
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
	/* the list needs no memory directory */
	char *s = zcor_tools_json(NULL, ZCOR_TOOLS_ALL | (en ? ZCOR_TOOLS_ENGLISH : 0));
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
