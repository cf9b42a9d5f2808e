/*
 * cmd_backup.c — `zcor backup` and `zcor restore FILE`: the backup tools
 * called by the operator.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"

int cmd_backup(struct cli *c, int argc, char **argv)
{
	if (argc != 1)
		return cli_usage(cli_find("backup"));
	zcor *z = cli_open(c);
	if (!z)
		return CLI_FAILED;
	int rc = cli_call_tool(c, z, "zcor_memory_backup", "{}");
	zcor_close(z);
	return rc;
}

int cmd_restore(struct cli *c, int argc, char **argv)
{
	if (argc != 2)
		return cli_usage(cli_find("restore"));
	zcor *z = cli_open(c);
	if (!z)
		return CLI_FAILED;
	json_t *a = json_pack("{s:s}", "backupFile", argv[1]);
	char *args = json_dumps(a, JSON_COMPACT);
	json_decref(a);
	int rc = cli_call_tool(c, z, "zcor_memory_restore", args);
	zc_free(args);
	zcor_close(z);
	return rc;
}
