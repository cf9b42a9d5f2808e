/*
 * console.c — the console world: `zcor chat` in a terminal or a script.
 * World layer, a client of zcor.h (like server/): it logs what the
 * operator types as a message, asks for a turn (zcor_turn_stream) and
 * shows what the turn tells it. Its commands only read (/recall, /prefix,
 * /turn). It prints, being the terminal's world; it never decides what
 * the bot does — that is src/agent/turn.c's.
 *
 * libedit (BSD licence, in Debian) does the line editing and history:
 * readline is GPL, which would bind zcor's licence; linenoise is not
 * packaged in Debian. The history file is read and written here, not by
 * libedit's H_LOAD/H_SAVE, which fopen() the path and so follow a link.
 */
#include "world/console.h"

#include <errno.h>
#include <histedit.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/err.h"
#include "base/fs.h"
#include "base/utf8.h"

#define DIM "\033[2m"
#define RED "\033[31m"
#define OFF "\033[0m"
/* the streamed text kept to compare with the final reply */
#define STREAM_KEEP (256u << 10)

struct session {
	struct zc_console *c;
	int tty;
	int failed;           /* a turn failed (the exit status without a terminal) */
	char *last_text;      /* the last message sent, for /recall */
	json_t *last;         /* the last turn's result, or NULL */
	struct zc_buf stream; /* the model's text since the last tool call */
	int stream_over;      /* more than STREAM_KEEP of it */
	int at_line_start;    /* the terminal's cursor is at a line start */
	struct timespec tool_t0;
};

/* ---- logging the operator's message ------------------------------- */

int zc_console_log(zcor *z, const struct zcor_ctx *ctx, const char *source, const char *conversation,
		   const char *text, char *msg, size_t cap)
{
	static unsigned seq;
	char id[96];
	struct timespec ts;
	char *out = NULL;
	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(id, sizeof(id), "%s-%lld-%09ld-%ld-%u", source, (long long)ts.tv_sec, ts.tv_nsec,
		 (long)getpid(), __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED));
	if (!zc_utf8_valid(text, strlen(text))) {
		snprintf(msg, cap, "the text is not UTF-8: type it in a UTF-8 terminal (LANG=C.UTF-8)");
		return ZCOR_EINVAL;
	}
	json_t *batch = json_pack("{s:[{s:s, s:s, s:s, s:s}], s:b}", "messages", "id", id, "senderId",
				  "operator", "senderName", "operator", "text", text, "recall", 0);
	char *body = batch ? json_dumps(batch, JSON_COMPACT) : NULL;
	json_decref(batch);
	if (!body) {
		snprintf(msg, cap, "out of memory");
		return ZCOR_EINTERNAL;
	}
	int rc = zcor_log_messages(z, ctx, conversation, body, &out);
	if (rc)
		snprintf(msg, cap, "%s", zcor_errmsg(z));
	zc_free(body);
	zcor_free(out);
	return rc;
}

/* ---- what the turn tells us as it runs ----------------------------- */

static void ev_text(void *ud, const char *text, size_t len)
{
	struct session *s = ud;
	if (!s->tty)
		return;
	fwrite(text, 1, len, s->c->out);
	fflush(s->c->out);
	if (len)
		s->at_line_start = text[len - 1] == '\n';
	if (s->stream.len + len > STREAM_KEEP)
		s->stream_over = 1;
	else
		zc_buf_add(&s->stream, text, len);
}

static void line_start(struct session *s)
{
	if (!s->at_line_start)
		fputc('\n', s->c->out);
	s->at_line_start = 1;
}

static void ev_tool_start(void *ud, const char *name, const char *arguments)
{
	struct session *s = ud;
	const char *args = ZC_Q(arguments ? arguments : "", 120);
	if (!s->tty) {
		fprintf(s->c->err, "· %s %s\n", name, args);
		return;
	}
	line_start(s);
	fprintf(s->c->out, DIM "· %s %s …" OFF "\n", name, args);
	fflush(s->c->out);
	zc_buf_reset(&s->stream);
	s->stream_over = 0;
	clock_gettime(CLOCK_MONOTONIC, &s->tool_t0);
}

static void ev_tool_end(void *ud, const char *name, const char *status, const char *result)
{
	struct session *s = ud;
	(void)result;
	if (!s->tty) {
		fprintf(s->c->err, "· %s: %s\n", name, status);
		return;
	}
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	long ms = (long)(t1.tv_sec - s->tool_t0.tv_sec) * 1000 + (t1.tv_nsec - s->tool_t0.tv_nsec) / 1000000;
	fprintf(s->c->out, DIM "· %s: %s (%ld ms)" OFF "\n", name, status, ms);
	fflush(s->c->out);
}

/* ---- one message, one turn ------------------------------------------ */

static void show_failure(struct session *s)
{
	zcor *z = s->c->z;
	json_t *err = json_loads(zcor_errjson(z), 0, NULL);
	const char *apology = json_string_value(
		json_object_get(json_object_get(json_object_get(err, "error"), "details"), "apology"));
	if (s->tty)
		line_start(s);
	fprintf(s->c->err, "%s这一轮失败了 (the turn failed): %s%s\n", s->tty ? RED : "",
		zcor_errmsg(z), s->tty ? OFF : "");
	if (apology)
		fprintf(s->c->out, "%s\n", apology);
	json_decref(err);
}

static void say(struct session *s, const char *text)
{
	struct zc_console *c = s->c;
	char msg[512];
	char *out = NULL;
	if (strlen(text) > ZC_CONSOLE_LINE_MAX) {
		fprintf(c->err, "消息太长，没有发送 (the message is longer than %d bytes, not sent): "
				"split it into shorter lines\n",
			ZC_CONSOLE_LINE_MAX);
		s->failed = 1;
		return;
	}
	int rc = zc_console_log(c->z, NULL, "cli", c->conversation, text, msg, sizeof(msg));
	if (rc) {
		fprintf(c->err, "没有发送 (not sent): %s\n", msg);
		s->failed = 1;
		return;
	}
	zc_free(s->last_text);
	s->last_text = zc_strdup(text);
	zc_buf_reset(&s->stream);
	s->stream_over = 0;
	s->at_line_start = 1;
	struct zcor_turn_events ev = {.text = ev_text, .tool_start = ev_tool_start,
				      .tool_end = ev_tool_end, .ud = s};
	rc = zcor_turn_stream(c->z, c->conversation, NULL, &ev, &out);
	if (rc) {
		s->failed = 1;
		show_failure(s);
		zcor_free(out);
		return;
	}
	json_decref(s->last);
	s->last = json_loads(out, 0, NULL);
	zcor_free(out);
	const char *reply = json_string_value(json_object_get(s->last, "reply"));
	if (!reply)
		reply = "";
	if (!s->tty) {
		fprintf(c->out, "%s\n", reply);
		fflush(c->out);
		return;
	}
	/* the check may have sent the reply back to the model, or cut image
	 * markers: what streamed last is then not what is sent */
	if (s->stream_over || strcmp(zc_buf_str(&s->stream), reply) != 0) {
		line_start(s);
		if (s->stream.len)
			fprintf(c->out, DIM "· 发出的回复 (the reply sent):" OFF "\n");
		fputs(reply, c->out);
		s->at_line_start = !*reply || reply[strlen(reply) - 1] == '\n';
	}
	line_start(s);
	fflush(c->out);
}

/* ---- commands -------------------------------------------------------- */

static void cmd_help(struct session *s)
{
	fputs("输入一行文字回车，就是发给机器人的一条消息 (a line is one message to the bot).\n"
	      "  /recall   上一批消息召回了什么、为什么 (what was recalled for the last batch, and why)\n"
	      "  /prefix   系统前缀 (the system prefix)\n"
	      "  /turn     上一轮的记录 (the last turn record)\n"
	      "  /help     这段说明 (this help)\n"
	      "  /quit     退出，Ctrl-D 也可以 (quit; Ctrl-D too)\n"
	      "  //…       发送以 / 开头的消息 (sends a message starting with /)\n",
	      s->c->out);
}

static void cmd_prefix(struct session *s)
{
	char *text = NULL;
	if (zcor_prefix(s->c->z, s->c->conversation, &text))
		fprintf(s->c->err, "读不到系统前缀 (cannot read the prefix): %s\n", zcor_errmsg(s->c->z));
	else
		fprintf(s->c->out, "%s%s", text, *text && text[strlen(text) - 1] != '\n' ? "\n" : "");
	zcor_free(text);
}

/* The newest turn record of the conversation, or NULL (said on err). */
static json_t *last_record(struct session *s)
{
	json_t *q = json_pack("{s:s, s:i}", "conversation", s->c->conversation, "limit", 1);
	char *query = q ? json_dumps(q, JSON_COMPACT) : NULL;
	char *out = NULL;
	json_t *rec = NULL;
	json_decref(q);
	if (query && zcor_turns(s->c->z, NULL, query, &out) == ZCOR_OK) {
		json_t *r = json_loads(out, 0, NULL);
		rec = json_incref(json_array_get(json_object_get(r, "items"), 0));
		json_decref(r);
		if (!rec)
			fprintf(s->c->err, "这个对话还没有轮次记录 (no turn recorded in '%s' yet)\n",
				s->c->conversation);
	} else {
		fprintf(s->c->err, "读不到轮次记录 (cannot read the turn records): %s\n",
			query ? zcor_errmsg(s->c->z) : "out of memory");
	}
	zc_free(query);
	zcor_free(out);
	return rec;
}

static void cmd_turn(struct session *s)
{
	json_t *rec = last_record(s);
	char *text = rec ? json_dumps(rec, JSON_INDENT(2)) : NULL;
	if (text)
		fprintf(s->c->out, "%s\n", text);
	zc_free(text);
	json_decref(rec);
}

static int in_list(const json_t *list, const char *id)
{
	size_t i;
	json_t *v;
	json_array_foreach(list, i, v) if (id && json_string_value(v) && !strcmp(json_string_value(v), id))
		return 1;
	return 0;
}

static void show_candidate(struct session *s, const json_t *x, const char *mark)
{
	const char *id = json_string_value(json_object_get(x, "id"));
	if (!id)
		id = json_string_value(json_object_get(x, "personId"));
	const char *title = json_string_value(json_object_get(x, "title"));
	if (!title)
		title = json_string_value(json_object_get(x, "name"));
	fprintf(s->c->out, "  %s %s %s [%s] %.2f — %s\n", mark, id ? id : "?",
		ZC_Q(title ? title : "", 60), json_string_value(json_object_get(x, "section"))
						     ? json_string_value(json_object_get(x, "section"))
						     : json_string_value(json_object_get(x, "kind")),
		json_number_value(json_object_get(x, "score")),
		json_string_value(json_object_get(x, "why")) ? json_string_value(json_object_get(x, "why"))
							      : "");
}

/*
 * What the last turn recalled (its record's ids) with the reasons: recall
 * is asked again, with explain, for the message sent. The header itself is
 * the turn's alone and never stored (docs/TURN.md), so the reasons are
 * recomputed: an id the turn sent that recall would no longer pick (the
 * model changed memory since) is said so.
 */
static void cmd_recall(struct session *s)
{
	struct zc_console *c = s->c;
	if (!s->last || !s->last_text) {
		fprintf(c->err, "这次还没有发过消息 (no message sent in this session yet)\n");
		return;
	}
	const json_t *ids = json_object_get(s->last, "recalled");
	const json_t *people = json_object_get(s->last, "recalledPeople");
	/* the reasons are recomputed, but the batch's hits were counted by
	 * its turn already: this look is not another hit */
	json_t *req = json_pack("{s:s, s:[{s:s, s:s, s:s}], s:b, s:b}", "conversation",
				c->conversation, "messages", "text", s->last_text, "senderId",
				"operator", "senderName", "operator", "explain", 1, "countHits", 0);
	char *body = req ? json_dumps(req, JSON_COMPACT) : NULL;
	char *out = NULL;
	json_t *r = NULL;
	json_decref(req);
	if (!body || zcor_recall(c->z, body, &out)) {
		fprintf(c->err, "召回失败 (recall failed): %s\n", body ? zcor_errmsg(c->z) : "out of memory");
		goto done;
	}
	r = json_loads(out, 0, NULL);
	const json_t *ex = json_object_get(r, "explain");
	fprintf(c->out, "上一批召回了 %zu 条记忆、%zu 个人 (recalled for the last batch: %zu memories, %zu people)\n",
		json_array_size(ids), json_array_size(people), json_array_size(ids), json_array_size(people));
	size_t i, j, cut = 0;
	json_t *v, *x;
	json_array_foreach(ids, i, v) {
		int found = 0;
		json_array_foreach(ex, j, x) {
			const char *xid = json_string_value(json_object_get(x, "id"));
			if (xid && json_string_value(v) && !strcmp(xid, json_string_value(v))) {
				show_candidate(s, x, "✓");
				found = 1;
				break;
			}
		}
		if (!found)
			fprintf(c->out, "  ✓ %s — 现在不会再召回它，记忆在那之后改过 (recall would not pick it now: memory changed since)\n",
				json_string_value(v));
	}
	json_array_foreach(ex, j, x) {
		const char *pid = json_string_value(json_object_get(x, "personId"));
		if (pid && in_list(people, pid))
			show_candidate(s, x, "✓");
	}
	json_array_foreach(ex, j, x) {
		const char *xid = json_string_value(json_object_get(x, "id"));
		const char *pid = json_string_value(json_object_get(x, "personId"));
		if (in_list(ids, xid) || in_list(people, pid))
			continue;
		if (!cut++)
			fprintf(c->out, "没有放进去的候选 (candidates left out):\n");
		if (cut <= 10)
			show_candidate(s, x, json_is_true(json_object_get(x, "included")) ? "+" : "·");
	}
	if (cut > 10)
		fprintf(c->out, "  … 还有 %zu 个 (%zu more; `zcor recall --explain` shows all)\n", cut - 10, cut - 10);
done:
	json_decref(r);
	zcor_free(out);
	zc_free(body);
}

/* 1 when the console should stop. */
static int command(struct session *s, const char *line)
{
	if (!strcmp(line, "/quit") || !strcmp(line, "/exit"))
		return 1;
	if (!strcmp(line, "/help"))
		cmd_help(s);
	else if (!strcmp(line, "/recall"))
		cmd_recall(s);
	else if (!strcmp(line, "/prefix"))
		cmd_prefix(s);
	else if (!strcmp(line, "/turn"))
		cmd_turn(s);
	else
		fprintf(s->c->err, "没有这个命令 (no command '%s'): /help 列出命令 (/help lists them)\n",
			ZC_Q(line, 40));
	return 0;
}

/* 1 when the console should stop. line has no newline. */
static int handle_line(struct session *s, const char *line)
{
	if (!*line)
		return 0;
	if (line[0] == '/' && line[1] != '/')
		return command(s, line);
	say(s, line[0] == '/' ? line + 1 : line);
	return 0;
}

/* ---- history (confined: never through a link) ----------------------- */

static void history_load(struct session *s, History *h)
{
	HistEvent hev;
	char *data = NULL;
	size_t len = 0;
	struct zc_err e = {0};
	if (!s->c->history_path)
		return;
	int rc = zc_read_file_nofollow(s->c->history_path, ZC_CONSOLE_HISTORY_BYTES, &data, &len, &e);
	if (rc) {
		if (rc != ZCOR_ENOTFOUND)
			fprintf(s->c->err, DIM "· 历史没有读入 (history not read): %s" OFF "\n", e.msg);
		zc_err_clear(&e);
		return;
	}
	for (char *p = data, *nl; p < data + len; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(data + len - p));
		if (!nl)
			nl = data + len;
		*nl = '\0';
		if (*p && zc_utf8_valid(p, strlen(p)))
			history(h, &hev, H_ENTER, p);
	}
	zc_free(data);
}

static void history_save(struct session *s, History *h)
{
	HistEvent hev;
	struct zc_buf b = ZC_BUF_INIT;
	struct zc_err e = {0};
	if (!s->c->history_path)
		return;
	/* H_LAST is the oldest entry, H_PREV walks towards the newest */
	for (int ok = history(h, &hev, H_LAST); ok >= 0; ok = history(h, &hev, H_PREV)) {
		zc_buf_adds(&b, hev.str);
		zc_buf_addc(&b, '\n');
	}
	if (zc_write_file_atomic(s->c->history_path, zc_buf_str(&b), b.len, &e)) {
		fprintf(s->c->err, DIM "· 历史没有保存 (history not saved): %s" OFF "\n", e.msg);
		zc_err_clear(&e);
	}
	zc_buf_release(&b);
}

/* ---- the two loops ---------------------------------------------------- */

static char *prompt(EditLine *el)
{
	(void)el;
	return "> ";
}

static void run_tty(struct session *s)
{
	struct zc_console *c = s->c;
	HistEvent hev;
	History *h = history_init();
	EditLine *el = el_init("zcor", stdin, c->out, c->err);
	if (!h || !el) {
		fprintf(c->err, "zcor chat: cannot start line editing (libedit): %s\n", strerror(errno));
		s->failed = 1;
		goto done;
	}
	history(h, &hev, H_SETSIZE, ZC_CONSOLE_HISTORY_MAX);
	history(h, &hev, H_SETUNIQUE, 1);
	el_set(el, EL_EDITOR, "emacs");
	el_set(el, EL_PROMPT, prompt);
	el_set(el, EL_HIST, history, h);
	el_set(el, EL_SIGNAL, 1);
	el_source(el, NULL); /* the user's ~/.editrc, as every libedit program */
	history_load(s, h);
	fprintf(c->out,
		"zcor chat · %s — 输入消息回车发送，/help 看命令，/quit 或 Ctrl-D 退出\n"
		"(type a message and press Enter; /help for the commands; /quit or Ctrl-D quits)\n",
		c->conversation);
	for (;;) {
		int n = 0;
		const char *got = el_gets(el, &n);
		if (!got || n <= 0) {
			fputc('\n', c->out);
			break;
		}
		char *line = zc_strndup(got, (size_t)n);
		size_t len = strlen(line);
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (*line && len <= ZC_CONSOLE_LINE_MAX) {
			history(h, &hev, H_ENTER, line);
			history_save(s, h);
		}
		int stop = handle_line(s, line);
		zc_free(line);
		if (stop)
			break;
	}
done:
	if (el)
		el_end(el);
	if (h)
		history_end(h);
}

static void run_lines(struct session *s)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	while ((n = getline(&line, &cap, stdin)) >= 0) {
		size_t len = (size_t)n;
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (memchr(line, '\0', len)) {
			fprintf(s->c->err, "没有发送 (not sent): the line holds a NUL byte\n");
			s->failed = 1;
			continue;
		}
		if (len > ZC_CONSOLE_LINE_MAX) {
			fprintf(s->c->err, "消息太长，没有发送 (the message is longer than %d bytes, not sent): "
					   "split it into shorter lines\n",
				ZC_CONSOLE_LINE_MAX);
			s->failed = 1;
			continue;
		}
		if (handle_line(s, line))
			break;
	}
	free(line);
}

int zc_console_run(struct zc_console *c)
{
	struct session s = {.c = c, .tty = isatty(STDIN_FILENO) && isatty(fileno(c->out)),
			    .at_line_start = 1};
	char *out = NULL;
	/* nothing is logged when no turn can run */
	int rc = zcor_turn(c->z, c->conversation, "{\"check\":true}", &out);
	zcor_free(out);
	if (rc) {
		fprintf(c->err, "zcor chat: %s\n", zcor_errmsg(c->z));
		return rc == ZCOR_ENOPROVIDER ? 2 : 1;
	}
	if (s.tty)
		run_tty(&s);
	else
		run_lines(&s);
	fflush(c->out);
	json_decref(s.last);
	zc_free(s.last_text);
	zc_buf_release(&s.stream);
	return s.failed && !s.tty ? 1 : 0;
}
