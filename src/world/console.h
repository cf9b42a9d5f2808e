/*
 * console.h — the console world (docs/TURN.md, "The console"): the
 * operator talks to the bot in `console:<name>`, in a terminal with line
 * editing (libedit) or, from a script, one line per turn. A client of
 * zcor.h, above the api layer like server/.
 */
#ifndef ZC_WORLD_CONSOLE_H
#define ZC_WORLD_CONSOLE_H

#include <stdio.h>

#include "zcor.h"

/* Longest line the console sends as one message, in bytes; a longer line
 * is refused whole (nothing logged). */
#define ZC_CONSOLE_LINE_MAX 16384
/* History entries kept, and the history file's largest size read. */
#define ZC_CONSOLE_HISTORY_MAX 500
#define ZC_CONSOLE_HISTORY_BYTES (1u << 20)

/*
 * Logs text as one message of sender "operator" in conversation: the
 * console world's part before it asks for a turn (zcor_log_messages,
 * without its recall header: the turn computes its own). ctx is the
 * caller (NULL: the operator at the CLI); source names where the line
 * was typed ("cli", "web") in the message id, which is unique across
 * threads and processes. ZCOR_OK, or the code with the reason in msg
 * (cap bytes, always terminated): text that is not UTF-8 is ZCOR_EINVAL.
 * The terminal, `zcor chat --once` and the page's chat all log here.
 */
int zc_console_log(zcor *z, const struct zcor_ctx *ctx, const char *source, const char *conversation,
		   const char *text, char *msg, size_t cap);

struct zc_console {
	zcor *z;
	const char *conversation;
	/* the history file (read without following a link, written whole by
	 * rename); NULL: no history */
	const char *history_path;
	FILE *out; /* the reply, and in a terminal everything else */
	FILE *err; /* errors; tool lines when not in a terminal */
};

/*
 * Runs the console until /quit or the end of input. When standard input
 * is a terminal: libedit line editing and history, a prompt, each tool
 * call as a dim line while it runs, the reply as it streams. Otherwise:
 * each line is one message and one turn, the reply on c->out, tool lines
 * on c->err, no escapes. Lines starting with "/" are commands (/help);
 * "//…" sends a message starting with "/". Returns the exit status: 0; 1
 * when, without a terminal, a turn failed; 2 with no provider configured
 * (said on c->err, nothing logged).
 */
int zc_console_run(struct zc_console *c);

#endif
