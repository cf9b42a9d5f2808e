/*
 * cli.h — the zcor command line: a table of subcommands, one file each.
 * CLI layer: argument parsing and printing only; everything else goes
 * through include/zcor.h.
 */
#ifndef ZC_CLI_H
#define ZC_CLI_H

#include "base/alloc.h"
#include "zcor.h"

/* Exit statuses shared by every command. */
#define CLI_OK 0
#define CLI_FAILED 1 /* the operation failed (tool error, I/O) */
#define CLI_USAGE 2  /* bad usage */

struct cli {
	const char *dir;          /* --dir, $ZCOR_DIR, ./zcor-data */
	const char *conversation; /* --conversation, or NULL for the host plane */
	const char *prog;
};

struct cli_cmd {
	const char *name;
	const char *usage;
	const char *help; /* a paragraph: what it does, its options */
	int (*run)(struct cli *c, int argc, char **argv);
};

extern const struct cli_cmd cli_cmds[];

/* Opens the memory directory; prints the error and returns NULL on failure. */
zcor *cli_open(struct cli *c);
/* What a call on z that returned rc prints as JSON: its result out, or
 * its error as zcor_errjson gives it. */
const char *cli_answer(zcor *z, int rc, const char *out);
/* Prints "usage: …" for cmd to stderr and returns CLI_USAGE. */
int cli_usage(const struct cli_cmd *cmd);
const struct cli_cmd *cli_find(const char *name);
/* True if argv has -h or --help. */
int cli_wants_help(int argc, char **argv);
/* `--dir D` or `--conversation KEY` at argv[*i], taken after the command
 * name too (recall, prefix): 1 if it was one (*i moves past its value),
 * 0 if not, -1 if the conversation key is not valid (said on stderr). */
int cli_common_option(struct cli *c, int argc, char **argv, int *i);
/* The value of --warm MB (0..ZCOR_WARM_MAX_MB) for command cmd into *mb;
 * CLI_OK, or CLI_USAGE after saying what is wrong on stderr. */
int cli_warm_mb(const char *cmd, const char *value, int *mb);
void cli_print_help(const struct cli_cmd *cmd);
/* All of standard input as a string, or NULL past CLI_STDIN_MAX bytes or
 * out of memory (caller frees with zc_free()). */
#define CLI_STDIN_MAX (64u << 20)
char *cli_read_stdin(void);
/* Calls a tool as the CLI actor and prints its JSON; returns the exit status. */
int cli_call_tool(struct cli *c, zcor *z, const char *name, const char *args);

int cmd_tool(struct cli *c, int argc, char **argv);
int cmd_tools(struct cli *c, int argc, char **argv);
int cmd_backup(struct cli *c, int argc, char **argv);
int cmd_restore(struct cli *c, int argc, char **argv);
int cmd_help(struct cli *c, int argc, char **argv);
int cmd_recall(struct cli *c, int argc, char **argv);
int cmd_prefix(struct cli *c, int argc, char **argv);
int cmd_reindex(struct cli *c, int argc, char **argv);
int cmd_serve(struct cli *c, int argc, char **argv);
int cmd_mcp(struct cli *c, int argc, char **argv);
int cmd_import(struct cli *c, int argc, char **argv);
int cmd_export(struct cli *c, int argc, char **argv);
int cmd_doctor(struct cli *c, int argc, char **argv);
int cmd_migrate(struct cli *c, int argc, char **argv);
int cmd_transcript(struct cli *c, int argc, char **argv);
int cmd_check_reply(struct cli *c, int argc, char **argv);
int cmd_chat(struct cli *c, int argc, char **argv);
int cmd_turns(struct cli *c, int argc, char **argv);
int cmd_digest(struct cli *c, int argc, char **argv);

#endif
