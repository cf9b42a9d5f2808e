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

#include "base/utf8.h"
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
		char *q = zc_realloc(l->p, cap);
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

/* ---- sampling: the client runs the model for zcor_memory_search ------- */

/*
 * When the client offered sampling at initialize and config.json names no
 * LLM provider, zcor_memory_search's LLM stage asks the client
 * (sampling/createMessage, SPEC §9). The request goes out on stdout and
 * zcor reads stdin until the matching response comes; messages that
 * arrive meanwhile are kept and handled afterwards, in order.
 */
struct stdio_peer {
	FILE *in;
	struct line *l;
	char **queue; /* lines read while waiting, handled next */
	size_t nqueue, capqueue;
	int seq;
	int client_sampling;
};

static void enqueue(struct stdio_peer *p, const char *line)
{
	if (p->nqueue == p->capqueue) {
		size_t cap = p->capqueue ? p->capqueue * 2 : 8;
		char **q = zc_realloc(p->queue, cap * sizeof(*q));
		if (!q)
			return;
		p->queue = q;
		p->capqueue = cap;
	}
	p->queue[p->nqueue++] = zc_strdup(line);
}

static int sampling_complete(void *ud, const char *system, const char *user, char **reply,
			     char **errmsg)
{
	struct stdio_peer *p = ud;
	char id[48];
	snprintf(id, sizeof(id), "zcor-sampling-%d", ++p->seq);
	json_t *req = json_pack("{s:s, s:s, s:s, s:{s:[{s:s, s:{s:s, s:s}}], s:s, s:i, s:s}}",
				"jsonrpc", "2.0", "id", id, "method", "sampling/createMessage", "params",
				"messages", "role", "user", "content", "type", "text", "text", user,
				"systemPrompt", system, "maxTokens", 512, "includeContext", "none");
	char *text = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	int bad = send_line(text);
	zc_free(text);
	if (bad) {
		*errmsg = zc_strdup("cannot write the sampling request to the client");
		return -1;
	}
	for (;;) {
		enum line_status st = read_line(p->in, p->l);
		if (st == LINE_EOF) {
			*errmsg = zc_strdup("the client closed the connection before answering sampling");
			return -1;
		}
		if (st != LINE_OK)
			continue;
		json_t *msg = json_loads(p->l->p, 0, NULL);
		const char *mid = json_string_value(json_object_get(msg, "id"));
		if (!mid || strcmp(mid, id) != 0 || json_object_get(msg, "method")) {
			json_decref(msg);
			enqueue(p, p->l->p); /* someone else's message: later */
			continue;
		}
		json_t *err = json_object_get(msg, "error");
		json_t *content = json_object_get(json_object_get(msg, "result"), "content");
		const char *t = json_string_value(json_object_get(content, "text"));
		int rc = 0;
		if (err) {
			const char *m = json_string_value(json_object_get(err, "message"));
			char buf[4 * 200 + 48];
			snprintf(buf, sizeof(buf), "the client refused sampling: %s", ZC_Q(m ? m : "no reason", 200));
			*errmsg = zc_strdup(buf);
			rc = -1;
		} else if (!t) {
			*errmsg = zc_strdup("the client's sampling answer has no text content");
			rc = -1;
		} else {
			*reply = zc_strdup(t);
		}
		json_decref(msg);
		return rc;
	}
}

/* Notes the client's sampling capability from its initialize request. */
static void note_capabilities(struct stdio_peer *p, const char *line, size_t len)
{
	json_t *msg = json_loadb(line, len, 0, NULL);
	const char *method = json_string_value(json_object_get(msg, "method"));
	if (method && strcmp(method, "initialize") == 0) {
		json_t *caps = json_object_get(json_object_get(msg, "params"), "capabilities");
		p->client_sampling = json_is_object(json_object_get(caps, "sampling"));
	}
	json_decref(msg);
}

static int handle_line(struct stdio_peer *p, zcor *z, struct zc_mcp_session *s, const char *line,
		       size_t len)
{
	char *resp = NULL;
	/* capabilities come with initialize, once per session: no message
	 * after it can change them, so later ones are not parsed twice */
	int before = !s->protocol[0];
	if (before)
		note_capabilities(p, line, len);
	zc_mcp_handle(s, z, line, len, &resp);
	if (before && s->protocol[0]) {
		/* sampling stands in only while no provider is configured */
		struct zcor_provider sp = {sampling_complete, p};
		zcor_set_fallback_provider(z, p->client_sampling ? &sp : NULL);
	}
	int bad = resp && send_line(resp) != 0;
	zcor_free(resp);
	return bad;
}

int cmd_mcp(struct cli *c, int argc, char **argv)
{
	int warm_mb = ZCOR_WARM_DEFAULT_MB;
	if (argc == 3 && strcmp(argv[1], "--warm") == 0) {
		if (cli_warm_mb("mcp", argv[2], &warm_mb))
			return CLI_USAGE;
	} else if (argc != 1) {
		return cli_usage(cli_find("mcp"));
	}
	/* a client that hangs up must not kill us mid-transaction: get EPIPE */
	signal(SIGPIPE, SIG_IGN);
	zcor *z = cli_open(c);
	if (!z)
		return CLI_FAILED;
	/* one handle answers every message of the session: its recalls should
	 * not wait for a disk the system may have dropped the store's pages to */
	char *warmed = NULL;
	if (warm_mb > 0 && zcor_warm(z, warm_mb, &warmed) != ZCOR_OK)
		fprintf(stderr, "zcor mcp: could not read the store ahead (recall still works): %s\n",
			zcor_errmsg(z));
	zcor_free(warmed);
	struct zc_mcp_session s;
	zc_mcp_session_init(&s, c->conversation);
	struct line l = {0};
	struct stdio_peer peer = {.in = stdin, .l = &l};
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
			char *line = zc_strdup(l.p);
			int bad = !line || handle_line(&peer, z, &s, line, strlen(line));
			zc_free(line);
			/* then what arrived while we waited on the client */
			for (size_t i = 0; i < peer.nqueue && !bad; i++) {
				/* handling may queue more: the loop re-reads nqueue */
				char *q = peer.queue[i];
				peer.queue[i] = NULL;
				if (q && !blank(q, strlen(q)))
					bad = handle_line(&peer, z, &s, q, strlen(q));
				zc_free(q);
			}
			peer.nqueue = 0;
			if (bad) {
				rc = CLI_FAILED;
				break;
			}
			continue;
		}
		int bad = resp && send_line(resp) != 0;
		zcor_free(resp);
		if (bad) {
			rc = CLI_FAILED;
			break;
		}
	}
	zc_free(peer.queue);
	if (rc == CLI_OK && ferror(stdin)) {
		fprintf(stderr, "zcor mcp: cannot read standard input\n");
		rc = CLI_FAILED;
	}
	zc_free(l.p);
	zcor_close(z);
	return rc;
}
