/*
 * main.c — `zcor`: global options, then one subcommand from the table.
 * CLI layer: parses and prints; never holds a rule of the seeds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "server/schedule.h"

const struct cli_cmd cli_cmds[] = {
	{"tool", "zcor [--dir D] [--conversation KEY] tool NAME [JSON|-]",
	 "Calls one tool with a JSON object of arguments (from the command line, or from\n"
	 "standard input with -; none means {}) and prints the result as JSON.\n"
	 "A tool error prints {\"error\":{\"code\":…,\"message\":…}} and exits 1; bad usage exits 2.\n"
	 "With --conversation KEY the call acts inside that conversation (group:<id>,\n"
	 "private:<qq>, console:<name>): its writes get that scope. Without it the call is\n"
	 "the operator's (host plane). `zcor tools` lists the tools.",
	 cmd_tool},
	{"tools", "zcor tools [--json] [--en]",
	 "Lists the tools with their descriptions, or with --json as a JSON array of\n"
	 "{name, title, description, descriptionEn, inputSchema}. --en prints English.",
	 cmd_tools},
	{"backup", "zcor [--dir D] backup",
	 "Writes the whole memory state to backups/memory-state-<time>.json (format 3)\n"
	 "and prints {\"file\":…, \"nodes\":…, \"people\":…}.",
	 cmd_backup},
	{"restore", "zcor [--dir D] restore FILE",
	 "Restores the memory state from FILE in backups/ (format 1, 2 or 3). The current\n"
	 "state is backed up first; the result names that backup.",
	 cmd_restore},
	{"recall",
	 "zcor recall [--dir D] --conversation KEY [--speaker ID[:NAME]]… [--mention ID]… "
	 "--message TEXT… [--json] [--explain]",
	 "Prints the memory context header auto-recall would put before this batch of\n"
	 "messages in that conversation (nothing when nothing is relevant or recallChars\n"
	 "is 0). --json prints {header, items, profile, budget, used, terms}; --explain adds,\n"
	 "per candidate, its feature scores and why it was included or cut. Recall is not\n"
	 "recorded in history; hit counts are updated.",
	 cmd_recall},
	{"prefix", "zcor prefix [--dir D] [--conversation KEY]",
	 "Prints the system prefix: PERSONA.md, the system rules, memory guidance,\n"
	 "relationship guidance (when relationship memory is on) and the important\n"
	 "memories the conversation may see.",
	 cmd_prefix},
	{"reindex", "zcor [--dir D] reindex",
	 "Rebuilds the derived indexes (the full-text indexes of memories and of the\n"
	 "message log, the term dictionary, the line of each view entry) from the\n"
	 "memories, people and messages, and writes pending hit counts. Memory itself is\n"
	 "not changed. Prints {\"nodes\": N, \"people\": M, \"messages\": K, \"views\": V}.",
	 cmd_reindex},
	{"serve", "zcor [--dir D] serve [--listen ADDR:PORT] [--token T] [--warm MB] [--header-timeout S] [--body-timeout S]",
	 "Serves the memory directory over HTTP: the REST API under /api/v1/, MCP\n"
	 "(Streamable HTTP) at /mcp and the page at /. Listens on 127.0.0.1:7700 unless\n"
	 "--listen says otherwise; prints the URL with its token. The token is made on\n"
	 "first start into D/serve.token; --token or $ZCOR_TOKEN sets one, and a\n"
	 "non-loopback address requires it. Every API and MCP request needs\n"
	 "Authorization: Bearer <token>. SIGINT/SIGTERM finish requests in flight and\n"
	 "exit 0. Requests share a pool of open handles, the one used last first; the\n"
	 "first reads what recall looks up ahead before listening (--warm MB, default 32;\n"
	 "0 skips it). A connection gets --header-timeout S seconds (default 20) to send\n"
	 "a request's line and headers, counted from connecting or from its previous\n"
	 "answer, and --body-timeout S more (default 60) for the body; at most 32\n"
	 "connections from one address, 256 in all. See docs/API.md.",
	 cmd_serve},
	{"mcp", "zcor [--dir D] [--conversation KEY] mcp [--warm MB]",
	 "Serves the Model Context Protocol over standard input and output: one JSON-RPC\n"
	 "message per line in, one answer per line out; diagnostics on standard error;\n"
	 "exits 0 at end of input. Offers the tools (as the config allows), the prompt\n"
	 "\"system-prefix\" and every memory node as the resource zcor://node/<id>. Calls are\n"
	 "the model's; with --conversation KEY they act inside that conversation.\n"
	 "Before the first message it reads what recall looks up into its own memory\n"
	 "(--warm MB, default 32; 0 skips it): see zcor_warm in include/zcor.h.\n"
	 "Example client config: {\"command\": \"zcor\", \"args\": [\"--dir\", \"D\", \"mcp\"]}.",
	 cmd_mcp},
	{"import", "zcor [--dir D] import qq-memory DIR",
	 "Imports a seed-003 memory directory (PEOPLE.md, COGNITION.md, STICKERS.md,\n"
	 "INDEX.md, conversations/<slug>/MEMORY.md and archive/, .qq-stickers/) in one\n"
	 "transaction: each view replaces the store's, each group's 「## 人」 entries add\n"
	 "the people not known yet. Progress goes to standard error; the report (JSON)\n"
	 "lists lines kept as written (not parsed, or breaking a rule) and what was\n"
	 "skipped. Running it again gives the same store.",
	 cmd_import},
	{"export", "zcor [--dir D] export qq-memory DIR",
	 "Writes the memory views in the seed-003 layout under DIR (and the collected\n"
	 "stickers as .qq-stickers/), from one consistent snapshot; prints a JSON report.",
	 cmd_export},
	{"doctor", "zcor [--dir D] doctor [--json] [--rebuild]",
	 "Checks the memory directory: database integrity, dangling links, lines of\n"
	 "COGNITION.md that are not entries (COGNITION_UNPARSED), duplicate headings,\n"
	 "sticker files missing (STICKER_PATH_MISSING) or kept by a media path\n"
	 "(STICKER_MEDIA_PATH), invalid config.json or synonyms.json, MEMORY.md over its\n"
	 "rollover threshold, links between scopes (SCOPE_LINK). --rebuild first\n"
	 "recomputes the derived data. Exit 0: nothing needs a person; 2: something\n"
	 "does; 3: the check itself failed, or bad usage.",
	 cmd_doctor},
	{"migrate", "zcor [--dir D] migrate cognition [--json] [--apply]",
	 "Moves old COGNITION.md entries keyed by an inbound media path (.qq-media/…)\n"
	 "into STICKERS.md: a picture already collected (recognised by its perceptual\n"
	 "fingerprint, even re-encoded) joins that sticker; one still in the media cache\n"
	 "is collected into stickers/; one whose file is gone goes to 未收藏 marked\n"
	 "原图已过期. A dry run unless --apply, which first writes backups. Exit 0:\n"
	 "nothing to do by hand; 2: entries could not be recognised; 3: it failed, or\n"
	 "bad usage.",
	 cmd_migrate},
	{"transcript",
	 "zcor [--dir D] transcript list | read --conversation KEY [--from T] [--to T] | "
	 "search --conversation KEY KEYWORD… | log --conversation KEY < BATCH.json | "
	 "export [--conversation KEY] --out DIR | import --conversation KEY FILE.jsonl… | "
	 "digest-done --conversation KEY",
	 "The message log (Q-LOG). list: the conversations with a log and their counters.\n"
	 "read: one conversation oldest first, --from/--to ISO-8601 with a zone (inclusive).\n"
	 "search: messages containing every KEYWORD, newest first. read/search/list take\n"
	 "--limit N (default 20, max 100) and --offset N, and go through the tool\n"
	 "qq_transcript (recorded in history). log: logs the JSON batch {\"messages\": […]}\n"
	 "on standard input (admission rules apply; docs/FORMATS.md) and prints {logged,\n"
	 "skipped, header, items}. export: writes DIR/conversations/<slug>/log/YYYY-MM-DD.jsonl\n"
	 "(all conversations without --conversation). import: reads such files into KEY,\n"
	 "idempotent by message id; bad lines are listed by number. digest-done: marks the\n"
	 "conversation's digest done now. With the global --conversation the call acts\n"
	 "inside that conversation and sees only its own transcript. Exit 1 on error, 2 on\n"
	 "bad usage.",
	 cmd_transcript},
	{"check-reply", "zcor [--dir D] check-reply TEXT|-",
	 "Checks a reply before it is sent: every [[图片: …]] in TEXT (or standard input\n"
	 "with -) must be a collected sticker, stickers/<name>.<ext> with its exact\n"
	 "extension. Prints {\"ok\", \"images\": [the good paths], \"problems\": [{image,\n"
	 "message, suggestion?}]}; suggestion is the sticker of that name with its real\n"
	 "extension. Exit 0: the reply may be sent; 1: it may not (or the check failed);\n"
	 "2: bad usage. Not recorded in history. The same as POST /api/v1/check-reply.",
	 cmd_check_reply},
	{"chat", "zcor [--dir D] chat [--once TEXT [--json]] [--conversation console:NAME]",
	 "Talks to the bot (the console world) in the conversation (default console:local).\n"
	 "In a terminal: a chat with line editing and history (kept in the memory\n"
	 "directory's chat_history); each tool call shows as a dim line while it runs, the\n"
	 "reply as it streams; /recall (what the last batch recalled, and why), /prefix,\n"
	 "/turn (the last turn record), /help, /quit or Ctrl-D. From a script (standard\n"
	 "input not a terminal) each line is one message and one turn: the reply on\n"
	 "standard output, tool calls on standard error; exit 1 if a turn failed.\n"
	 "--once TEXT logs TEXT as the operator's message, runs one turn (recall, the\n"
	 "system prefix, the dialogue, the model and its tool calls) and prints the reply;\n"
	 "--json prints the turn's result instead (reply, turn id, recalled ids, tool\n"
	 "calls); exit 1 when the turn failed (recorded; `zcor turns` shows it).\n"
	 "Needs \"provider\" in config.json (docs/PROVIDERS.md): without one it says how to\n"
	 "set it up and exits 2. See docs/TURN.md.",
	 cmd_chat},
	{"turns", "zcor [--dir D] turns [--conversation KEY] [--limit N] [--json]",
	 "Lists the turn records, newest first (all conversations, or KEY's): the batch,\n"
	 "what was recalled, every tool call with its status and time, the reply, model\n"
	 "time, tokens and the error if any. --json prints {items, total, nextOffset}.",
	 cmd_turns},
	{"digest", "zcor [--dir D] digest [--now] [--conversation KEY] [--json]",
	 "The digest agent by hand (docs/DIGEST.md). Without --now: the digest runs,\n"
	 "newest first (all conversations, or KEY's): lines given, cut or not, tool calls,\n"
	 "outcome. --now runs the conversations that are due (not digested today, at\n"
	 "least digestMinLines new lines), each one a run as at the daily hour; with\n"
	 "--conversation KEY it runs KEY's digest whatever its line count. Each run logs\n"
	 "`digest KEY: N/M lines`; exit 1 if one failed (recorded; its lines stay). Needs\n"
	 "\"provider\" in config.json.",
	 cmd_digest},
	{"help", "zcor help [COMMAND]", "Shows the commands, or the help of one command.", cmd_help},
	{NULL, NULL, NULL, NULL},
};

const struct cli_cmd *cli_find(const char *name)
{
	for (const struct cli_cmd *c = cli_cmds; c->name; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

int cli_usage(const struct cli_cmd *cmd)
{
	fprintf(stderr, "usage: %s\n", cmd->usage);
	return CLI_USAGE;
}

int cli_wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
			return 1;
	return 0;
}

void cli_print_help(const struct cli_cmd *cmd) { printf("usage: %s\n\n%s\n", cmd->usage, cmd->help); }

static void print_main_help(void)
{
	printf("zcor — long-term memory for chat bots\n\n"
	       "usage: zcor [--dir D] [--conversation KEY] <command> [arguments]\n\n"
	       "global options:\n"
	       "  --dir D             memory directory (default: $ZCOR_DIR, then ./zcor-data)\n"
	       "  --conversation KEY  act inside a conversation: group:<id>, private:<qq>, console:<name>\n"
	       "  -h, --help          this help; `zcor help COMMAND` for one command\n\n"
	       "commands:\n");
	for (const struct cli_cmd *c = cli_cmds; c->name; c++)
		printf("  %-11s %s\n", c->name, c->usage);
}

int cmd_help(struct cli *c, int argc, char **argv)
{
	if (argc < 2) {
		print_main_help();
		return CLI_OK;
	}
	const struct cli_cmd *cmd = cli_find(argv[1]);
	if (!cmd) {
		fprintf(stderr, "zcor: no command '%s'; `zcor help` lists them\n", argv[1]);
		return CLI_USAGE;
	}
	cli_print_help(cmd);
	return CLI_OK;
}

zcor *cli_open(struct cli *c)
{
	zcor *z = NULL;
	if (zcor_open(&z, c->dir) != ZCOR_OK) {
		fprintf(stderr, "zcor: cannot open memory directory '%s': %s\n", c->dir, zcor_errmsg(z));
		zcor_close(z);
		return NULL;
	}
	zc_sched_time_zone(z); /* config.json's timeZone: local dates and the digest hour */
	return z;
}

const char *cli_answer(zcor *z, int rc, const char *out) { return rc ? zcor_errjson(z) : out; }

char *cli_read_stdin(void)
{
	size_t len = 0, cap = 65536;
	char *p = zc_malloc(cap);
	size_t n;
	while (p && (n = fread(p + len, 1, cap - len - 1, stdin)) > 0) {
		len += n;
		if (len + 1 == cap) {
			if (cap >= CLI_STDIN_MAX) {
				zc_free(p);
				return NULL;
			}
			char *q = zc_realloc(p, cap *= 2);
			if (!q)
				zc_free(p);
			p = q;
		}
	}
	if (p)
		p[len] = '\0';
	return p;
}

int cli_call_tool(struct cli *c, zcor *z, const char *name, const char *args)
{
	struct zcor_ctx ctx = {ZCOR_ACTOR_CLI, c->conversation};
	char *out = NULL;
	int rc = zcor_tool_call(z, &ctx, name, args, &out);
	puts(cli_answer(z, rc, out));
	zcor_free(out);
	if (rc == ZCOR_ENOTFOUND && strstr(zcor_errmsg(z), "no tool named"))
		return CLI_USAGE;
	return rc == ZCOR_OK ? CLI_OK : CLI_FAILED;
}

int cli_warm_mb(const char *cmd, const char *value, int *mb)
{
	char *end = NULL;
	long v = strtol(value, &end, 10);
	if (!*value || *end || v < 0 || v > ZCOR_WARM_MAX_MB) {
		fprintf(stderr, "zcor %s: --warm: give megabytes, 0..%d (0: do not warm)\n", cmd, ZCOR_WARM_MAX_MB);
		return CLI_USAGE;
	}
	*mb = (int)v;
	return CLI_OK;
}

int cli_common_option(struct cli *c, int argc, char **argv, int *i)
{
	const char *a = argv[*i];
	if (strcmp(a, "--dir") == 0 && *i + 1 < argc) {
		c->dir = argv[++*i];
		return 1;
	}
	if (strncmp(a, "--dir=", 6) == 0) {
		c->dir = a + 6;
		return 1;
	}
	const char *key;
	if (strncmp(a, "--conversation=", 15) == 0)
		key = a + 15;
	else if (strcmp(a, "--conversation") == 0 && *i + 1 < argc)
		key = argv[++*i];
	else
		return 0;
	if (zcor_check_conversation(NULL, key)) {
		fprintf(stderr, "zcor: --conversation: %s\n", zcor_errmsg(NULL));
		return -1;
	}
	c->conversation = key;
	return 1;
}

int main(int argc, char **argv)
{
	struct cli c = {.prog = argv[0]};
	c.dir = getenv("ZCOR_DIR");
	if (!c.dir || !*c.dir)
		c.dir = "zcor-data";
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			print_main_help();
			return CLI_OK;
		} else if (strcmp(a, "--dir") == 0 && i + 1 < argc) {
			c.dir = argv[++i];
		} else if (strncmp(a, "--dir=", 6) == 0) {
			c.dir = a + 6;
		} else if (strcmp(a, "--conversation") == 0 && i + 1 < argc) {
			c.conversation = argv[++i];
		} else if (strncmp(a, "--conversation=", 15) == 0) {
			c.conversation = a + 15;
		} else {
			fprintf(stderr, "zcor: unknown option '%s'; `zcor --help` lists them\n", a);
			return CLI_USAGE;
		}
	}
	if (i >= argc) {
		print_main_help();
		return CLI_USAGE;
	}
	if (c.conversation) {
		if (zcor_check_conversation(NULL, c.conversation)) {
			fprintf(stderr, "zcor: %s\n", zcor_errmsg(NULL));
			return CLI_USAGE;
		}
	}
	const struct cli_cmd *cmd = cli_find(argv[i]);
	if (!cmd) {
		fprintf(stderr, "zcor: no command '%s'; `zcor help` lists them\n", argv[i]);
		return CLI_USAGE;
	}
	if (cmd->run != cmd_help && cli_wants_help(argc - i, argv + i)) {
		cli_print_help(cmd);
		return CLI_OK;
	}
	return cmd->run(&c, argc - i, argv + i);
}
