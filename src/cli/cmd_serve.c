/*
 * cmd_serve.c — `zcor serve [--listen ADDR:PORT] [--token T] [--warm MB]`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "server/http.h"

int cmd_serve(struct cli *c, int argc, char **argv)
{
	const char *listen = NULL, *token = getenv("ZCOR_TOKEN");
	int warm_mb = ZCOR_WARM_DEFAULT_MB;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--listen") && i + 1 < argc)
			listen = argv[++i];
		else if (!strcmp(argv[i], "--token") && i + 1 < argc)
			token = argv[++i];
		else if (!strcmp(argv[i], "--warm") && i + 1 < argc) {
			if (cli_warm_mb("serve", argv[++i], &warm_mb))
				return CLI_USAGE;
		} else
			return cli_usage(cli_find("serve"));
	}
	return zc_serve(c->dir, listen, token, warm_mb);
}
