/*
 * cmd_serve.c — `zcor serve [--listen ADDR:PORT] [--token T] [--warm MB]
 * [--header-timeout S] [--body-timeout S]`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "server/http.h"

/* Seconds for --header-timeout / --body-timeout: 1..ZC_SERVE_TIMEOUT_MAX. */
static int seconds(const char *opt, const char *value, int *out)
{
	char *end = NULL;
	long v = strtol(value, &end, 10);
	if (!*value || *end || v < 1 || v > ZC_SERVE_TIMEOUT_MAX) {
		fprintf(stderr, "zcor serve: %s: give whole seconds, 1..%d\n", opt, ZC_SERVE_TIMEOUT_MAX);
		return CLI_USAGE;
	}
	*out = (int)v;
	return CLI_OK;
}

int cmd_serve(struct cli *c, int argc, char **argv)
{
	struct zc_serve_opts o = {.token = getenv("ZCOR_TOKEN"), .warm_mb = ZCOR_WARM_DEFAULT_MB,
				  .test_now = getenv("ZCOR_TEST_NOW")};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--listen") && i + 1 < argc) {
			o.listen = argv[++i];
		} else if (!strcmp(a, "--token") && i + 1 < argc) {
			o.token = argv[++i];
		} else if (!strcmp(a, "--warm") && i + 1 < argc) {
			if (cli_warm_mb("serve", argv[++i], &o.warm_mb))
				return CLI_USAGE;
		} else if (!strcmp(a, "--header-timeout") && i + 1 < argc) {
			if (seconds(a, argv[++i], &o.header_timeout_s))
				return CLI_USAGE;
		} else if (!strcmp(a, "--body-timeout") && i + 1 < argc) {
			if (seconds(a, argv[++i], &o.body_timeout_s))
				return CLI_USAGE;
		} else {
			return cli_usage(cli_find("serve"));
		}
	}
	return zc_serve(c->dir, &o);
}
