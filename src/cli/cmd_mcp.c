/*
 * cmd_mcp.c — `zcor mcp`: the MCP server over stdio. One JSON-RPC message
 * per line on standard input (newline-delimited, as the MCP stdio transport
 * says), one response per line on standard output, flushed at once.
 * Standard output carries only MCP; diagnostics go to standard error.
 *
 * CLI layer: reads lines and writes answers; what a message means is
 * server/mcp.c's business. One session per process: the actor is the
 * model, the conversation is --conversation (none: the host plane).
 */
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "server/mcp.h"

#define LINE_MAX_BYTES (4u << 20) /* a longer message is refused and skipped */
#define CHUNK 65536 /* first line buffer; it doubles as needed */

enum line_status { LINE_OK, LINE_EOF, LINE_TOO_LONG, LINE_NOMEM };

struct line {
	char *p;
	size_t len, cap;
};

static enum line_status line_add(struct line *l, char ch)
{
	if (l->len + 2 > l->cap) {
		size_t cap = l->cap ? 2 * l->cap : CHUNK;
		char *q = realloc(l->p, cap);
		if (!q)
			return LINE_NOMEM;
		l->p = q;
		l->cap = cap;
	}
	l->p[l->len++] = ch;
	return LINE_OK;
}

/* Reads one line without its newline (and a \r before it), NUL-terminated.
 * A line over the cap is read to its end and dropped: LINE_TOO_LONG. */
static enum line_status read_line(FILE *in, struct line *l)
{
	enum line_status st = LINE_OK;
	int ch, any = 0;
	l->len = 0;
	while ((ch = getc_unlocked(in)) != EOF && ch != '\n') {
		any = 1;
		if (st == LINE_OK)
			st = l->len < LINE_MAX_BYTES ? line_add(l, (char)ch) : LINE_TOO_LONG;
	}
	if (!any && ch == EOF)
		return LINE_EOF;
	if (st != LINE_OK)
		return st;
	if (l->len > 0 && l->p[l->len - 1] == '\r')
		l->len--;
	if ((st = line_add(l, '\0')) == LINE_OK)
		l->len--;
	return st;
}

static int blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return 0;
	return 1;
}

static int send_line(const char *text)
{
	if (fputs(text, stdout) == EOF || fputc('\n', stdout) == EOF || fflush(stdout) == EOF) {
		fprintf(stderr, "zcor mcp: cannot write to standard output; stopping\n");
		return -1;
	}
	return 0;
}

int cmd_mcp(struct cli *c, int argc, char **argv)
{
	if (argc != 1)
		return cli_usage(cli_find("mcp"));
	/* a client that hangs up must not kill us mid-transaction: get EPIPE */
	signal(SIGPIPE, SIG_IGN);
	zcor *z = cli_open(c);
	if (!z)
		return CLI_FAILED;
	struct zc_mcp_session s;
	zc_mcp_session_init(&s, c->conversation);
	struct line l = {0};
	int rc = CLI_OK;
	for (;;) {
		enum line_status st = read_line(stdin, &l);
		char *resp = NULL;
		if (st == LINE_EOF)
			break;
		if (st == LINE_NOMEM) {
			fprintf(stderr, "zcor mcp: out of memory reading a message\n");
			rc = CLI_FAILED;
			break;
		}
		if (st == LINE_TOO_LONG) {
			char msg[100];
			snprintf(msg, sizeof(msg), "message longer than %u bytes; it was skipped", LINE_MAX_BYTES);
			fprintf(stderr, "zcor mcp: %s\n", msg);
			json_t *e = json_pack("{s:s, s:n, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", "error", "code",
					      -32600, "message", msg);
			resp = json_dumps(e, JSON_COMPACT);
			json_decref(e);
		} else if (!blank(l.p, l.len)) {
			zc_mcp_handle(&s, z, l.p, l.len, &resp);
		}
		int bad = resp && send_line(resp) != 0;
		zcor_free(resp);
		if (bad) {
			rc = CLI_FAILED;
			break;
		}
	}
	if (rc == CLI_OK && ferror(stdin)) {
		fprintf(stderr, "zcor mcp: cannot read standard input\n");
		rc = CLI_FAILED;
	}
	free(l.p);
	zcor_close(z);
	return rc;
}
