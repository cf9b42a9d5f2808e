/*
 * cmd_serve.c — `zcor serve [--listen ADDR:PORT] [--token T]`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "server/http.h"

int cmd_serve(struct cli *c, int argc, char **argv)
{
	const char *listen = NULL, *token = getenv("ZCOR_TOKEN");
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--listen") && i + 1 < argc)
			listen = argv[++i];
		else if (!strcmp(argv[i], "--token") && i + 1 < argc)
			token = argv[++i];
		else
			return cli_usage(cli_find("serve"));
	}
	return zc_serve(c->dir, listen, token);
}
