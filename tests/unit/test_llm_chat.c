/*
 * test_llm_chat.c — chat completions with tools (src/llm/chat.h, issue 14's
 * provider part) against a scripted HTTP/1.1 server in this process on
 * 127.0.0.1: a thread with a listening socket that reads each request
 * (headers, Content-Length body), records it, and answers a canned raw
 * response in pieces cut at given byte offsets (inside "data:", between
 * \r and \n, inside a UTF-8 character), with gaps between them, after a
 * delay (for the timeout), or cut off mid-stream. The request zcor sent,
 * every way of reading the answer and every error are checked, and no
 * error message ever carries the API key.
 */
#define _GNU_SOURCE /* strcasestr */
#include "harness.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/json.h"
#include "llm/chat.h"

#define KEY_ENV "ZCOR_TEST_CHAT_KEY"
#define KEY "sk-chat-secret-4242"

/* ---- the scripted server -------------------------------------------- */

struct step {
	const char *raw;      /* the whole response, status line to last byte sent */
	size_t cuts[16];      /* offsets where a piece ends (ascending, 0 ends the list) */
	int gap_ms;           /* pause between pieces */
	int hang_ms;          /* pause before answering */
};

/* The first keep_first answers have a Content-Length: the connection is
 * kept for the next request (connection_reused); the others close it. */
static int keep_first;

struct seen {
	char method[16], path[256];
	char headers[4096];
	char body[16384];
	long long at_ms;
};

struct srv {
	int fd, port;
	pthread_t th;
	const struct step *steps;
	size_t nsteps;
	struct seen reqs[8];
	int nreqs;
	int nconns; /* connections accepted */
	volatile int stop;
};

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void nap(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/* Reads one request (headers, then Content-Length bytes of body). */
static int read_request(int c, struct seen *s)
{
	static char buf[1 << 20];
	size_t got = 0, head = 0, want = 0;
	while (got < sizeof(buf) - 1) {
		struct pollfd p = {c, POLLIN, 0};
		if (poll(&p, 1, 5000) <= 0)
			return -1;
		ssize_t r = recv(c, buf + got, sizeof(buf) - 1 - got, 0);
		if (r <= 0)
			return -1;
		got += (size_t)r;
		buf[got] = '\0';
		if (!head) {
			char *end = strstr(buf, "\r\n\r\n");
			if (!end)
				continue;
			head = (size_t)(end - buf) + 4;
			char *cl = strcasestr(buf, "\r\ncontent-length:");
			want = cl && cl < end ? (size_t)strtoul(cl + 17, NULL, 10) : 0;
		}
		if (got >= head + want)
			break;
	}
	sscanf(buf, "%15s %255s", s->method, s->path);
	snprintf(s->headers, sizeof(s->headers), "%.*s", (int)head, buf);
	snprintf(s->body, sizeof(s->body), "%.*s", (int)want, buf + head);
	s->at_ms = now_ms();
	return 0;
}

static void answer(int c, const struct step *st)
{
	size_t len = strlen(st->raw), from = 0;
	if (st->hang_ms)
		nap(st->hang_ms);
	for (int i = 0; from < len; i++) {
		size_t to = i < 16 && st->cuts[i] && st->cuts[i] < len ? st->cuts[i] : len;
		if (from > 0 && st->gap_ms)
			nap(st->gap_ms);
		if (send(c, st->raw + from, to - from, MSG_NOSIGNAL) < 0)
			return;
		from = to;
	}
}

static void *serve(void *ud)
{
	struct srv *s = ud;
	while (!s->stop && (size_t)s->nreqs < s->nsteps) {
		struct pollfd p = {s->fd, POLLIN, 0};
		if (poll(&p, 1, 50) <= 0)
			continue;
		int c = accept(s->fd, NULL, NULL);
		if (c < 0)
			continue;
		int one = 1, keep = 1;
		s->nconns++;
		setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		while (keep && (size_t)s->nreqs < s->nsteps && read_request(c, &s->reqs[s->nreqs]) == 0) {
			keep = s->nreqs < keep_first;
			answer(c, &s->steps[s->nreqs++]);
		}
		shutdown(c, SHUT_WR);
		nap(20); /* let the client read to the end before the close */
		close(c);
	}
	return NULL;
}

static void srv_start(struct srv *s, const struct step *steps, size_t n)
{
	memset(s, 0, sizeof(*s));
	s->steps = steps;
	s->nsteps = n;
	s->fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {0};
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t al = sizeof(a);
	CHECK(bind(s->fd, (struct sockaddr *)&a, sizeof(a)) == 0);
	CHECK(listen(s->fd, 8) == 0);
	getsockname(s->fd, (struct sockaddr *)&a, &al);
	s->port = ntohs(a.sin_port);
	pthread_create(&s->th, NULL, serve, s);
}

static void srv_stop(struct srv *s)
{
	s->stop = 1;
	pthread_join(s->th, NULL);
	close(s->fd);
}

static struct zc_provider_config provider(const struct srv *s)
{
	struct zc_provider_config c;
	memset(&c, 0, sizeof(c));
	c.enabled = 1;
	snprintf(c.base_url, sizeof(c.base_url), "http://127.0.0.1:%d/v1", s->port);
	snprintf(c.model, sizeof(c.model), "test-model");
	snprintf(c.api_key_env, sizeof(c.api_key_env), KEY_ENV);
	c.connect_timeout_ms = 1000;
	c.timeout_ms = 5000;
	c.max_retries = 3;
	c.max_response_bytes = 1 << 20;
	return c;
}

/* ---- requests and answers --------------------------------------------- */

#define OK_JSON "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
#define OK_SSE "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"

static json_t *msgs(void)
{
	return json_loads("[{\"role\":\"system\",\"content\":\"你是助手\"},"
			  "{\"role\":\"user\",\"content\":\"东门那家咖啡店叫什么？\"},"
			  "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"call_1\","
			  "\"type\":\"function\",\"function\":{\"name\":\"zcor_memory_query\","
			  "\"arguments\":\"{\\\"keywords\\\":[\\\"咖啡\\\"]}\"}}]},"
			  "{\"role\":\"tool\",\"tool_call_id\":\"call_1\",\"content\":\"{\\\"items\\\":[]}\"},"
			  "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"再想想\"}]}]",
			  0, NULL);
}

static json_t *tools(void)
{
	return json_loads("[{\"type\":\"function\",\"function\":{\"name\":\"zcor_memory_query\","
			  "\"description\":\"查记忆\",\"parameters\":{\"type\":\"object\",\"properties\":"
			  "{\"keywords\":{\"type\":\"array\"}}}}},"
			  "{\"type\":\"function\",\"function\":{\"name\":\"qq_memory\",\"parameters\":"
			  "{\"type\":\"object\"}}}]",
			  0, NULL);
}

/* Every message must be valid JSON text and never carry the key. */
static void check_msg(const struct zc_err *e)
{
	json_t *j = json_string(e->msg);
	CHECK(j != NULL);
	json_decref(j);
	CHECK(strstr(e->msg, KEY) == NULL);
}

struct text {
	char p[8192];
	size_t len;
};

struct told {
	struct text text, args[4];
	char name[4][64], id[4][64];
	int text_deltas, tool_deltas, cancel_after, first_name_at[4];
};

static void add(struct text *b, const char *p, size_t n)
{
	if (b->len + n < sizeof(b->p)) {
		memcpy(b->p + b->len, p, n);
		b->len += n;
		b->p[b->len] = '\0';
	}
}

static int on_delta(void *ud, const struct zc_chat_delta *d)
{
	struct told *t = ud;
	if (d->tool_index < 0) {
		CHECK(d->text_len > 0);
		add(&t->text, d->text, d->text_len);
		t->text_deltas++;
	} else {
		CHECK(d->tool_index < 4);
		if (d->tool_index >= 4)
			return 1;
		int i = d->tool_index;
		if (d->tool_name && !t->name[i][0]) {
			snprintf(t->name[i], sizeof(t->name[i]), "%s", d->tool_name);
			t->first_name_at[i] = t->tool_deltas;
		}
		if (d->tool_id && !t->id[i][0])
			snprintf(t->id[i], sizeof(t->id[i]), "%s", d->tool_id);
		add(&t->args[i], d->args, d->args_len);
		t->tool_deltas++;
	}
	return t->cancel_after && t->text_deltas + t->tool_deltas >= t->cancel_after;
}

static struct zc_chat_req base_req(json_t *m, json_t *t)
{
	struct zc_chat_req r;
	memset(&r, 0, sizeof(r));
	r.messages = m;
	r.tools = t;
	r.temperature = NAN;
	return r;
}

/* The request zcor sends: method, path, headers, body. */
static void request_sent(void)
{
	static const struct step steps[] = {
		{OK_JSON "\r\n{\"id\":\"c1\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
			 "\"content\":\"叫「晨光」\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":"
			 "31,\"completion_tokens\":5,\"total_tokens\":36}}",
		 {0}, 0, 0},
		{OK_SSE "data: {\"choices\":[{\"delta\":{\"content\":\"好\"},\"finish_reason\":\"stop\"}]}\n\n"
			"data: [DONE]\n\n",
		 {0}, 0, 0},
	};
	struct srv s;
	srv_start(&s, steps, 2);
	setenv(KEY_ENV, KEY, 1);
	struct zc_provider_config cfg = provider(&s);
	json_t *m = msgs(), *t = tools();
	json_t *choice = json_string("auto");
	struct zc_chat_req r = base_req(m, t);
	r.tool_choice = choice;
	r.temperature = 0.25;
	struct zc_chat_reply out;
	struct zc_err e = {0};
	CHECK_INT(zc_llm_chat(&cfg, &r, &out, &e), ZCOR_OK);
	check_msg(&e);
	CHECK_STR(out.content, "叫「晨光」");
	CHECK_STR(out.finish_reason, "stop");
	CHECK_INT(out.n_tool_calls, 0);
	CHECK_INT(out.prompt_tokens, 31);
	CHECK_INT(out.completion_tokens, 5);
	CHECK_INT(out.total_tokens, 36);
	CHECK_INT(out.attempts, 1);
	CHECK(out.model_ms >= 0 && out.model_ms < 5000);
	zc_chat_reply_release(&out);

	/* named function, no temperature, streamed with usage */
	json_t *named = json_loads("{\"type\":\"function\",\"function\":{\"name\":\"qq_memory\"}}", 0, NULL);
	r.tool_choice = named;
	r.temperature = NAN;
	r.stream = 1;
	r.stream_usage = 1;
	/* issue 14: tools_text is sent as it is, not a new dump of tools (a
	 * marker only the text has shows which was sent) */
	char *tt = json_dumps(t, JSON_COMPACT);
	CHECK(tt && tt[0] == '[');
	struct zc_buf marked = ZC_BUF_INIT;
	zc_buf_addf(&marked, "[{\"type\":\"function\",\"function\":{\"name\":\"spliced\"}},%s", tt + 1);
	r.tools_text = marked.p;
	CHECK_INT(zc_llm_chat(&cfg, &r, &out, &e), ZCOR_OK);
	r.tools_text = NULL;
	CHECK_STR(out.content, "好");
	CHECK_INT(out.prompt_tokens, -1);
	zc_chat_reply_release(&out);
	srv_stop(&s);

	CHECK_INT(s.nreqs, 2);
	CHECK_STR(s.reqs[0].method, "POST");
	CHECK_STR(s.reqs[0].path, "/v1/chat/completions");
	CHECK_HAS(s.reqs[0].headers, "\r\nAuthorization: Bearer " KEY "\r\n");
	CHECK_HAS(s.reqs[0].headers, "\r\nContent-Type: application/json\r\n");
	CHECK_HAS(s.reqs[0].headers, "\r\nAccept: application/json\r\n");
	CHECK_HAS(s.reqs[1].headers, "\r\nAccept: text/event-stream\r\n");
	json_t *b = json_loads(s.reqs[0].body, 0, NULL);
	CHECK(b != NULL);
	CHECK_STR(json_string_value(json_object_get(b, "model")), "test-model");
	const char *roles[] = {"system", "user", "assistant", "tool", "user"};
	json_t *bm = json_object_get(b, "messages");
	CHECK_INT(json_array_size(bm), 5);
	for (size_t i = 0; i < 5 && i < json_array_size(bm); i++)
		CHECK_STR(zc_json_str(json_array_get(bm, i), "role"), roles[i]);
	CHECK(json_equal(bm, m));
	CHECK(json_equal(json_object_get(b, "tools"), t));
	CHECK_STR(json_string_value(json_object_get(b, "tool_choice")), "auto");
	CHECK(json_is_false(json_object_get(b, "stream")));
	CHECK(fabs(json_number_value(json_object_get(b, "temperature")) - 0.25) < 1e-9);
	CHECK(json_object_get(b, "stream_options") == NULL);
	json_decref(b);
	b = json_loads(s.reqs[1].body, 0, NULL);
	CHECK(b != NULL);
	json_t *sent_tools = json_object_get(b, "tools");
	CHECK_INT(json_array_size(sent_tools), json_array_size(t) + 1);
	CHECK_STR(zc_json_str(json_object_get(json_array_get(sent_tools, 0), "function"), "name"), "spliced");
	json_t *rest = json_deep_copy(sent_tools);
	json_array_remove(rest, 0);
	CHECK(json_equal(rest, t));
	json_decref(rest);
	zc_buf_release(&marked);
	free(tt);
	CHECK(json_equal(json_object_get(b, "tool_choice"), named));
	CHECK(json_object_get(b, "temperature") == NULL);
	CHECK(json_is_true(json_object_get(b, "stream")));
	CHECK(json_is_true(json_object_get(json_object_get(b, "stream_options"), "include_usage")));
	json_decref(b);
	json_decref(named);
	json_decref(choice);
	json_decref(m);
	json_decref(t);
}

/* ---- streams ------------------------------------------------------------ */

/* Text, then two parallel tool calls whose arguments interleave. */
#define STREAM                                                                                          \
	": keep-alive\r\n\r\n"                                                                          \
	"data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\r\n\r\n"  \
	"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"我查一下「晨光」\"}}]}\r\n\r\n"           \
	": still thinking\r\n\r\n"                                                                      \
	"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_a\","       \
	"\"type\":\"function\",\"function\":{\"name\":\"zcor_memory_query\",\"arguments\":\"\"}}]}}]}\r\n\r\n" \
	"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"call_b\","       \
	"\"type\":\"function\",\"function\":{\"name\":\"qq_memory\",\"arguments\":\"{\\\"action\\\":\"}}]}}]}\r\n\r\n" \
	"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":"          \
	"{\"arguments\":\"{\\\"keywords\\\":[\\\"咖\"}}]}}]}\r\n\r\n"                                      \
	"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":"          \
	"{\"arguments\":\"啡\\\"]}\"}}]}}]}\r\n\r\n"                                                       \
	"event: message\r\n"                                                                            \
	"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"function\":"          \
	"{\"arguments\":\"\\\"read\\\"}\"}}]}}]}\r\n\r\n"                                                  \
	"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\r\n\r\n"       \
	"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":20,"              \
	"\"total_tokens\":30}}\r\n\r\n"                                                                 \
	"data: [DONE]\r\n\r\n"

static void check_stream_reply(const struct zc_chat_reply *out, const struct told *t)
{
	CHECK_STR(out->content, "我查一下「晨光」");
	CHECK_STR(out->finish_reason, "tool_calls");
	CHECK_INT(out->n_tool_calls, 2);
	if (out->n_tool_calls == 2) {
		CHECK_STR(out->tool_calls[0].id, "call_a");
		CHECK_STR(out->tool_calls[0].name, "zcor_memory_query");
		CHECK_STR(out->tool_calls[0].arguments, "{\"keywords\":[\"咖啡\"]}");
		CHECK(out->tool_calls[0].args_object);
		CHECK_STR(out->tool_calls[1].id, "call_b");
		CHECK_STR(out->tool_calls[1].name, "qq_memory");
		CHECK_STR(out->tool_calls[1].arguments, "{\"action\":\"read\"}");
		CHECK(out->tool_calls[1].args_object);
	}
	CHECK_INT(out->prompt_tokens, 10);
	CHECK_INT(out->completion_tokens, 20);
	CHECK_INT(out->total_tokens, 30);
	if (!t)
		return;
	CHECK_STR(t->text.p, "我查一下「晨光」");
	CHECK_INT(t->text_deltas, 1);
	CHECK_STR(t->name[0], "zcor_memory_query");
	CHECK_STR(t->name[1], "qq_memory");
	CHECK_STR(t->id[0], "call_a");
	CHECK_STR(t->id[1], "call_b");
	CHECK_INT(t->first_name_at[0], 0); /* the name came with the first delta */
	CHECK_INT(t->first_name_at[1], 1);
	CHECK_STR(t->args[0].p, "{\"keywords\":[\"咖啡\"]}");
	CHECK_STR(t->args[1].p, "{\"action\":\"read\"}");
	CHECK_INT(t->tool_deltas, 5);
}

static size_t after(const char *hay, const char *needle, size_t plus)
{
	const char *p = strstr(hay, needle);
	CHECK(p != NULL);
	return p ? (size_t)(p - hay) + plus : 0;
}

/* On the wire, in pieces cut inside a UTF-8 character, inside "data:",
 * between \r and \n and inside "[DONE]", each read separately. */
static void stream_split_on_wire(void)
{
	static const char raw[] = OK_SSE STREAM;
	struct step st = {raw, {0}, 40, 0};
	size_t cuts[] = {
		after(raw, "\r\n\r\n", 0) + 1,      /* inside the header end */
		after(raw, "data:", 2),             /* inside the first "data:" */
		after(raw, "晨", 1),                /* inside a 3-byte character */
		after(raw, "光", 2),
		after(raw, "still", 0),             /* inside a comment */
		after(raw, "咖", 1),
		after(raw, "啡", 2),
		after(raw, "tool_calls\"}]}\r", 0), /* between \r and \n */
		after(raw, "[DO", 0),               /* inside [DONE] */
	};
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		st.cuts[i] = cuts[i];
		CHECK(i == 0 || cuts[i] > cuts[i - 1]);
	}
	struct srv s;
	srv_start(&s, &st, 1);
	setenv(KEY_ENV, KEY, 1);
	struct zc_provider_config cfg = provider(&s);
	json_t *m = msgs(), *t = tools();
	struct zc_chat_req r = base_req(m, t);
	struct told told;
	memset(&told, 0, sizeof(told));
	r.stream = 1;
	r.on_delta = on_delta;
	r.ud = &told;
	struct zc_chat_reply out;
	struct zc_err e = {0};
	CHECK_INT(zc_llm_chat(&cfg, &r, &out, &e), ZCOR_OK);
	if (e.msg[0])
		fprintf(stderr, "  %s\n", e.msg);
	check_stream_reply(&out, &told);
	zc_chat_reply_release(&out);
	srv_stop(&s);
	CHECK_INT(s.nreqs, 1);
	json_decref(m);
	json_decref(t);
}

static int parse_pieces(const char *body, const size_t *cuts, size_t ncuts, struct told *t,
			struct zc_chat_reply *out, struct zc_err *e)
{
	const char *pieces[64];
	size_t lens[64], n = 0, from = 0, len = strlen(body);
	for (size_t i = 0; i <= ncuts && n < 64; i++) {
		size_t to = i < ncuts ? cuts[i] : len;
		pieces[n] = body + from;
		lens[n++] = to - from;
		from = to;
	}
	struct zc_chat_req r = base_req(NULL, NULL);
	r.on_delta = t ? on_delta : NULL;
	r.ud = t;
	return zc_llm_chat_parse(pieces, lens, n, &r, out, e);
}

/* Every place one read may end gives the same answer, and so does a
 * byte at a time. */
static void stream_every_split(void)
{
	const char *body = STREAM;
	size_t len = strlen(body);
	for (size_t cut = 0; cut <= len; cut++) {
		struct told t;
		memset(&t, 0, sizeof(t));
		struct zc_chat_reply out;
		struct zc_err e = {0};
		int before = t_failures;
		CHECK_INT(parse_pieces(body, &cut, 1, &t, &out, &e), ZCOR_OK);
		check_stream_reply(&out, &t);
		zc_chat_reply_release(&out);
		if (t_failures != before) {
			fprintf(stderr, "  (cut at byte %zu: %s)\n", cut, e.msg);
			return;
		}
	}
	const char *pieces[4096];
	size_t lens[4096];
	CHECK(len < 4096);
	for (size_t i = 0; i < len && i < 4096; i++) {
		pieces[i] = body + i;
		lens[i] = 1;
	}
	struct told t;
	memset(&t, 0, sizeof(t));
	struct zc_chat_req r = base_req(NULL, NULL);
	r.on_delta = on_delta;
	r.ud = &t;
	struct zc_chat_reply out;
	struct zc_err e = {0};
	CHECK_INT(zc_llm_chat_parse(pieces, lens, len, &r, &out, &e), ZCOR_OK);
	check_stream_reply(&out, &t);
	zc_chat_reply_release(&out);
}

static int parse_whole(const char *body, struct zc_chat_reply *out, struct zc_err *e)
{
	return parse_pieces(body, NULL, 0, NULL, out, e);
}

/* Answers that are fine: tool calls without text, a string of arguments
 * that is not an object (flagged), a stream without [DONE] that has its
 * finish_reason, one with [DONE] and no finish_reason, a whole message
 * as the only chunk, after keep-alive lines. */
static void answers_accepted(void)
{
	struct zc_chat_reply out;
	struct zc_err e = {0};
	CHECK_INT(parse_whole(": keep-alive\n\n{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":null,"
			      "\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"a\","
			      "\"arguments\":\"{\\\"x\\\":1}\"}},{\"id\":\"c2\",\"type\":\"function\",\"function\":"
			      "{\"name\":\"b\",\"arguments\":\"[1, 2\"}},{\"id\":\"c3\",\"function\":{\"name\":\"c\","
			      "\"arguments\":\"\\\"s\\\"\"}}]},\"finish_reason\":\"tool_calls\"}]}",
			      &out, &e),
		  ZCOR_OK);
	CHECK(out.content == NULL);
	CHECK_INT(out.n_tool_calls, 3);
	if (out.n_tool_calls == 3) {
		CHECK(out.tool_calls[0].args_object);
		CHECK(!out.tool_calls[1].args_object);
		CHECK_STR(out.tool_calls[1].arguments, "[1, 2");
		CHECK(!out.tool_calls[2].args_object);
	}
	CHECK_INT(out.total_tokens, -1);
	zc_chat_reply_release(&out);

	CHECK_INT(parse_whole("data: {\"choices\":[{\"delta\":{\"content\":\"a\"},\"finish_reason\":\"stop\"}]}\n\n",
			      &out, &e),
		  ZCOR_OK);
	CHECK_STR(out.content, "a");
	zc_chat_reply_release(&out);
	CHECK_INT(parse_whole("data: {\"choices\":[{\"delta\":{\"content\":\"b\"}}]}\n\ndata: [DONE]", &out, &e),
		  ZCOR_OK);
	CHECK_STR(out.content, "b");
	CHECK(out.finish_reason == NULL);
	zc_chat_reply_release(&out);
	CHECK_INT(parse_whole("data: {\"choices\":[{\"message\":{\"content\":\"whole\"},\"finish_reason\":\"stop\"}]}",
			      &out, &e),
		  ZCOR_OK);
	CHECK_STR(out.content, "whole");
	zc_chat_reply_release(&out);
	/* servers that repeat the id (and name) in every delta */
	CHECK_INT(parse_whole("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"k1\","
			      "\"function\":{\"name\":\"a\",\"arguments\":\"{\\\"x\\\"\"}}]}}]}\n\n"
			      "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"k1\","
			      "\"function\":{\"name\":\"a\",\"arguments\":\":2}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n",
			      &out, &e),
		  ZCOR_OK);
	CHECK_INT(out.n_tool_calls, 1);
	if (out.n_tool_calls == 1) {
		CHECK_STR(out.tool_calls[0].id, "k1");
		CHECK_STR(out.tool_calls[0].name, "a");
		CHECK_STR(out.tool_calls[0].arguments, "{\"x\":2}");
	}
	zc_chat_reply_release(&out);
	/* after [DONE] nothing counts */
	CHECK_INT(parse_whole("data: {\"choices\":[{\"delta\":{\"content\":\"c\"}}]}\n\ndata: [DONE]\n\n"
			      "data: {\"choices\":[{\"delta\":{\"content\":\"late\"}}]}\n\n",
			      &out, &e),
		  ZCOR_OK);
	CHECK_STR(out.content, "c");
	zc_chat_reply_release(&out);
}

/* Each broken answer is ZCOR_EPROVIDER saying what was wrong. */
static void answers_refused(void)
{
	static const struct {
		const char *body, *needle;
	} bad[] = {
		{"", "empty body"},
		{": only a comment\n", "empty body"},
		{"{\"choices\": [", "not valid JSON"},
		{"<html>502</html>", "'<html>502</html>'"},
		{"[1]", "is an array, not a JSON object"},
		{"{\"id\":\"x\"}", "no choices[0]"},
		{"{\"choices\":[]}", "no choices[0]"},
		{"{\"choices\":[{\"finish_reason\":\"stop\"}]}", "no choices[0].message"},
		{"{\"error\":{\"message\":\"context too long\"}}", "'context too long'"},
		{"{\"choices\":[{\"message\":{\"content\":null},\"finish_reason\":\"length\"}]}",
		 "neither text nor tool calls (finish_reason 'length')"},
		{"{\"choices\":[{\"message\":{\"content\":\"\"}}]}", "neither text nor tool calls"},
		{"{\"choices\":[{\"message\":{\"content\":42}}]}", "content is a number"},
		{"{\"choices\":[{\"message\":{\"tool_calls\":[{\"type\":\"function\",\"function\":{\"name\":\"a\","
		 "\"arguments\":\"{}\"}}]}}]}",
		 "tool call 0 of the answer has no id ('a')"},
		{"{\"choices\":[{\"message\":{\"tool_calls\":[{\"id\":\"c1\",\"function\":{\"arguments\":\"{}\"}}]}}]}",
		 "tool call 0 of the answer has no function name"},
		{"{\"choices\":[{\"message\":{\"tool_calls\":[{\"id\":\"c1\",\"function\":{\"name\":\"a\","
		 "\"arguments\":{\"x\":1}}}]}}]}",
		 "arguments of tool call 0 ('a') are an object, not a string"},
		{"{\"choices\":[{\"message\":{\"tool_calls\":[{\"id\":\"c1\",\"function\":{\"name\":\"a\"}}]}}]}",
		 "no function.arguments string"},
		{"{\"choices\":[{\"message\":{\"tool_calls\":{}}}]}", "tool_calls is an object, not an array"},
		/* streams */
		{"data: {\"choices\":[{\"delta\":{\"content\":\"half\"}}]}\n\n",
		 "ended with neither data: [DONE] nor a finish_reason after 1 event"},
		{"data: [DONE]\n\n", "neither text nor tool calls"},
		{"data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\ndata: {oops\n\n",
		 "event 2 of the provider's stream is not a JSON object: '{oops'"},
		{"data: {\"error\":{\"message\":\"overloaded\"}}\n\n", "'overloaded'"},
		{"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"name\":\"a\","
		 "\"arguments\":\"{}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n",
		 "tool call 0 of the answer has no id ('a')"},
		{"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":"
		 "{\"arguments\":\"{}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n",
		 "has no function name"},
		{"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":"
		 "{\"name\":\"a\",\"arguments\":{\"x\":1}}}]}}]}\n\n",
		 "arguments of tool call 0 ('a') are an object, not a string"},
		{"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":64,\"id\":\"c\",\"function\":"
		 "{\"name\":\"a\",\"arguments\":\"{}\"}}]}}]}\n\n",
		 "index 64"},
		{"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"c\",\"function\":"
		 "{\"name\":\"a\",\"arguments\":\"{}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n",
		 "tool call 0 of the answer has no id"},
		{"Internal Server Error\n", "neither data: [DONE] nor a finish_reason after 0 events"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct zc_chat_reply out;
		struct zc_err e = {0};
		int rc = parse_whole(bad[i].body, &out, &e);
		CHECK_INT(rc, ZCOR_EPROVIDER);
		check_msg(&e);
		CHECK(out.content == NULL && out.n_tool_calls == 0);
		if (!strstr(e.msg, bad[i].needle)) {
			fprintf(stderr, "case %zu: message '%s' lacks '%s'\n", i, e.msg, bad[i].needle);
			t_failures++;
		}
		zc_chat_reply_release(&out);
	}
}

/* ---- the transport ------------------------------------------------------ */

#define TEXT_OK OK_JSON "\r\n{\"choices\":[{\"message\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}"

static int run_chat(struct srv *s, const struct step *steps, size_t n, struct zc_provider_config *cfgp,
		    struct zc_chat_req *r, struct zc_chat_reply *out, struct zc_err *e, long long *ms)
{
	srv_start(s, steps, n);
	struct zc_provider_config cfg = provider(s);
	if (cfgp) {
		cfgp->enabled = 1;
		memcpy(cfgp->base_url, cfg.base_url, sizeof(cfg.base_url));
		cfg = *cfgp;
	}
	long long t0 = now_ms();
	int rc = zc_llm_chat(&cfg, r, out, e);
	*ms = now_ms() - t0;
	check_msg(e);
	srv_stop(s);
	return rc;
}

/* 429 with Retry-After: 1, then 200: one retry, a second later. */
static void retry_429_then_200(void)
{
	static const struct step steps[] = {
		{"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 1\r\nContent-Type: application/json\r\n"
		 "Connection: close\r\n\r\n{\"error\":{\"message\":\"slow down\"}}",
		 {0}, 0, 0},
		{TEXT_OK, {0}, 0, 0},
	};
	struct srv s;
	json_t *m = msgs();
	struct zc_chat_req r = base_req(m, NULL);
	struct zc_chat_reply out;
	struct zc_err e = {0};
	long long ms;
	setenv(KEY_ENV, KEY, 1);
	CHECK_INT(run_chat(&s, steps, 2, NULL, &r, &out, &e, &ms), ZCOR_OK);
	CHECK_STR(out.content, "ok");
	CHECK_INT(out.attempts, 2);
	CHECK_INT(s.nreqs, 2);
	if (s.nreqs == 2)
		CHECK(s.reqs[1].at_ms - s.reqs[0].at_ms >= 900);
	zc_chat_reply_release(&out);

	/* 429 every time: the error says so after maxRetries */
	static const struct step always[] = {
		{"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 0\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
		 {0}, 0, 0},
		{"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 0\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
		 {0}, 0, 0},
	};
	struct zc_provider_config cfg = provider(&s);
	cfg.max_retries = 1;
	CHECK_INT(run_chat(&s, always, 2, &cfg, &r, &out, &e, &ms), ZCOR_EPROVIDER);
	CHECK_HAS(e.msg, "answered HTTP 429");
	CHECK_HAS(e.msg, "gave up after 2 attempts, maxRetries 1");
	CHECK_INT(s.nreqs, 2);
	json_decref(m);
}

/* Other 4xx are not retried; the provider's words are quoted. */
static void no_retry_on_4xx(void)
{
	static const struct step steps[] = {
		{"HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n"
		 "{\"error\":{\"message\":\"tools[0].function.parameters is invalid\"}}",
		 {0}, 0, 0},
		{TEXT_OK, {0}, 0, 0},
	};
	struct srv s;
	json_t *m = msgs();
	struct zc_chat_req r = base_req(m, NULL);
	struct zc_chat_reply out;
	struct zc_err e = {0};
	long long ms;
	setenv(KEY_ENV, KEY, 1);
	CHECK_INT(run_chat(&s, steps, 2, NULL, &r, &out, &e, &ms), ZCOR_EPROVIDER);
	CHECK_HAS(e.msg, "answered HTTP 400: 'tools[0].function.parameters is invalid'");
	CHECK_INT(s.nreqs, 1);
	CHECK_INT(out.attempts, 1);
	json_decref(m);
}

/* A server that says nothing: the call ends by timeoutMs. */
static void timeout_ms(void)
{
	static const struct step steps[] = {{TEXT_OK, {0}, 0, 2500}};
	struct srv s;
	json_t *m = msgs();
	struct zc_chat_req r = base_req(m, NULL);
	struct zc_chat_reply out;
	struct zc_err e = {0};
	long long ms;
	struct zc_provider_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.connect_timeout_ms = 500;
	cfg.timeout_ms = 700;
	cfg.max_retries = 3;
	cfg.max_response_bytes = 1 << 20;
	CHECK_INT(run_chat(&s, steps, 1, &cfg, &r, &out, &e, &ms), ZCOR_EPROVIDER);
	CHECK_HAS(e.msg, "within timeoutMs (700 ms)");
	CHECK(ms >= 650 && ms < 2000);
	json_decref(m);
}

#define CHUNKED "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
#define HALF_EVENT "data: {\"choices\":[{\"delta\":{\"content\":\"半\"}}]}\n\n"

/* A connection closed mid-stream: after a delta was handed on it is an
 * error (a retry would tell it twice); before that it is retried. */
static void cut_mid_stream(void)
{
	char raw[512];
	snprintf(raw, sizeof(raw), CHUNKED "%zx\r\n%s\r\n", strlen(HALF_EVENT), HALF_EVENT);
	const struct step steps[] = {{raw, {0}, 0, 0}, {TEXT_OK, {0}, 0, 0}};
	struct srv s;
	json_t *m = msgs();
	struct zc_chat_req r = base_req(m, NULL);
	struct told t;
	memset(&t, 0, sizeof(t));
	r.stream = 1;
	r.on_delta = on_delta;
	r.ud = &t;
	struct zc_chat_reply out;
	struct zc_err e = {0};
	long long ms;
	CHECK_INT(run_chat(&s, steps, 2, NULL, &r, &out, &e, &ms), ZCOR_EPROVIDER);
	CHECK_HAS(e.msg, "cut off while streaming");
	CHECK_STR(t.text.p, "半");
	CHECK_INT(s.nreqs, 1);
	CHECK(out.content == NULL);

	r.on_delta = NULL; /* nothing told yet: another attempt is safe */
	CHECK_INT(run_chat(&s, steps, 2, NULL, &r, &out, &e, &ms), ZCOR_OK);
	CHECK_STR(out.content, "ok");
	CHECK_INT(s.nreqs, 2);
	zc_chat_reply_release(&out);

	/* closed without a length and without [DONE]: a cut, said so */
	static const struct step closed[] = {{OK_SSE HALF_EVENT, {0}, 0, 0}};
	CHECK_INT(run_chat(&s, closed, 1, NULL, &r, &out, &e, &ms), ZCOR_EPROVIDER);
	CHECK_HAS(e.msg, "ended with neither data: [DONE] nor a finish_reason after 1 event");
	json_decref(m);
}

/* on_delta returning nonzero stops the call at once. */
static void cancel_from_delta(void)
{
	static char raw[4096];
	snprintf(raw, sizeof(raw), OK_SSE HALF_EVENT "%s", STREAM);
	struct step st[] = {{raw, {0}, 0, 0}, {TEXT_OK, {0}, 0, 0}};
	struct srv s;
	json_t *m = msgs();
	struct zc_chat_req r = base_req(m, NULL);
	struct told t;
	memset(&t, 0, sizeof(t));
	t.cancel_after = 1;
	r.stream = 1;
	r.on_delta = on_delta;
	r.ud = &t;
	struct zc_chat_reply out;
	struct zc_err e = {0};
	long long ms;
	CHECK_INT(run_chat(&s, st, 2, NULL, &r, &out, &e, &ms), ZCOR_EPROVIDER);
	CHECK(out.cancelled);
	CHECK_HAS(e.msg, "cancelled");
	CHECK_INT(t.text_deltas + t.tool_deltas, 1);
	CHECK_INT(s.nreqs, 1);
	json_decref(m);
}

/* maxResponseBytes holds for streams too. */
static void response_cap(void)
{
	static char raw[8192];
	size_t n = (size_t)snprintf(raw, sizeof(raw), OK_SSE);
	while (n + 64 < sizeof(raw))
		n += (size_t)snprintf(raw + n, sizeof(raw) - n,
				      "data: {\"choices\":[{\"delta\":{\"content\":\"xxxx\"}}]}\n\n");
	const struct step steps[] = {{raw, {0}, 0, 0}};
	struct srv s;
	json_t *m = msgs();
	struct zc_chat_req r = base_req(m, NULL);
	r.stream = 1;
	struct zc_chat_reply out;
	struct zc_err e = {0};
	long long ms;
	struct zc_provider_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.connect_timeout_ms = 1000;
	cfg.timeout_ms = 5000;
	cfg.max_retries = 3;
	cfg.max_response_bytes = 2048;
	CHECK_INT(run_chat(&s, steps, 1, &cfg, &r, &out, &e, &ms), ZCOR_EPROVIDER);
	CHECK_HAS(e.msg, "larger than maxResponseBytes (2048 bytes)");
	CHECK_INT(s.nreqs, 1);
	json_decref(m);
}

/* ---- the request checked before anything is sent ------------------------ */

static void request_refused(void)
{
	static const struct {
		const char *messages, *tools, *tool_choice;
		double temperature;
		const char *needle;
	} bad[] = {
		{"[]", NULL, NULL, NAN, "'messages' must be a non-empty array"},
		{"{}", NULL, NULL, NAN, "'messages' must be a non-empty array"},
		{"[{\"content\":\"x\"}]", NULL, NULL, NAN, "'messages[0].role'"},
		{"[{\"role\":\"robot\",\"content\":\"x\"}]", NULL, NULL, NAN, "'messages[0].role' is 'robot'"},
		{"[{\"role\":\"user\"}]", NULL, NULL, NAN, "'messages[0].content' (a user message)"},
		{"[{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"assistant\",\"content\":null}]", NULL, NULL, NAN,
		 "'messages[1]' (assistant) needs content or tool_calls"},
		{"[{\"role\":\"assistant\",\"tool_calls\":[{\"id\":\"c\",\"function\":{\"name\":\"a\"}}]}]", NULL, NULL,
		 NAN, "'messages[0].tool_calls[0]'"},
		{"[{\"role\":\"tool\",\"content\":\"r\"}]", NULL, NULL, NAN, "'messages[0].tool_call_id'"},
		{"[{\"role\":\"tool\",\"tool_call_id\":\"c\"}]", NULL, NULL, NAN, "'messages[0].content' (a tool result)"},
		{"[{\"role\":\"user\",\"content\":\"a\"}]", "{}", NULL, NAN, "'tools' must be an array"},
		{"[{\"role\":\"user\",\"content\":\"a\"}]", "[{\"type\":\"code\"}]", NULL, NAN, "'tools[0]' must be"},
		{"[{\"role\":\"user\",\"content\":\"a\"}]", "[{\"type\":\"function\",\"function\":{\"name\":\"a b\"}}]",
		 NULL, NAN, "'tools[0].function.name' is 'a b'"},
		{"[{\"role\":\"user\",\"content\":\"a\"}]",
		 "[{\"type\":\"function\",\"function\":{\"name\":\"a\",\"parameters\":[]}}]", NULL, NAN,
		 "parameters a JSON Schema object"},
		{"[{\"role\":\"user\",\"content\":\"a\"}]",
		 "[{\"type\":\"function\",\"function\":{\"name\":\"a\"}},{\"type\":\"function\",\"function\":{\"name\":\"a\"}}]",
		 NULL, NAN, "declared twice"},
		{"[{\"role\":\"user\",\"content\":\"a\"}]", NULL, "\"sometimes\"", NAN, "'tool_choice' is 'sometimes'"},
		{"[{\"role\":\"user\",\"content\":\"a\"}]", NULL, "\"required\"", NAN, "no tools are given"},
		{"[{\"role\":\"user\",\"content\":\"a\"}]", "[{\"type\":\"function\",\"function\":{\"name\":\"a\"}}]",
		 "{\"type\":\"function\",\"function\":{\"name\":\"b\"}}", NAN, "'tool_choice' names the function 'b'"},
		{"[{\"role\":\"user\",\"content\":\"a\"}]", NULL, "{\"type\":\"function\"}", NAN, "'tool_choice' must be"},
		{"[{\"role\":\"user\",\"content\":\"a\"}]", NULL, NULL, 2.5, "'temperature' is 2.5"},
		{"[{\"role\":\"user\",\"content\":\"a\"}]", NULL, NULL, -0.1, "'temperature'"},
	};
	static const struct step steps[] = {{TEXT_OK, {0}, 0, 0}};
	struct srv s;
	srv_start(&s, steps, 1);
	setenv(KEY_ENV, KEY, 1);
	struct zc_provider_config cfg = provider(&s);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *m = json_loads(bad[i].messages, 0, NULL);
		json_t *t = bad[i].tools ? json_loads(bad[i].tools, 0, NULL) : NULL;
		json_t *c = bad[i].tool_choice ? json_loads(bad[i].tool_choice, JSON_DECODE_ANY, NULL) : NULL;
		CHECK(m != NULL && (!bad[i].tools || t) && (!bad[i].tool_choice || c));
		struct zc_chat_req r = base_req(m, t);
		r.tool_choice = c;
		r.temperature = bad[i].temperature;
		struct zc_chat_reply out;
		struct zc_err e = {0};
		CHECK_INT(zc_llm_chat(&cfg, &r, &out, &e), ZCOR_EINVAL);
		if (!strstr(e.msg, bad[i].needle)) {
			fprintf(stderr, "case %zu: message '%s' lacks '%s'\n", i, e.msg, bad[i].needle);
			t_failures++;
		}
		json_decref(m);
		json_decref(t);
		json_decref(c);
	}
	/* the API key variable unset: nothing is sent either */
	unsetenv(KEY_ENV);
	json_t *m = msgs();
	struct zc_chat_req r = base_req(m, NULL);
	struct zc_chat_reply out;
	struct zc_err e = {0};
	CHECK_INT(zc_llm_chat(&cfg, &r, &out, &e), ZCOR_EPROVIDER);
	CHECK_HAS(e.msg, "'" KEY_ENV "' named by provider.apiKeyEnv is not set");
	cfg.enabled = 0;
	CHECK_INT(zc_llm_chat(&cfg, &r, &out, &e), ZCOR_ENOPROVIDER);
	json_decref(m);
	srv_stop(&s);
	CHECK_INT(s.nreqs, 0);
	setenv(KEY_ENV, KEY, 1);
}

/* Issue 14: the provider's connection is kept and reused — three
 * requests of this thread over one keep-alive connection, the second a
 * stream; a server that closes (Connection: close) gets a new one. */
#define KEEP_BODY "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}"
#define KEEP_SSE "data: {\"choices\":[{\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
static void connection_reused(void)
{
	char len[32], len_sse[32];
	snprintf(len, sizeof(len), "%zu", strlen(KEEP_BODY));
	snprintf(len_sse, sizeof(len_sse), "%zu", strlen(KEEP_SSE));
	char *keep_json = NULL, *keep_sse = NULL;
	CHECK(asprintf(&keep_json, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
				   "%s\r\n\r\n" KEEP_BODY, len) > 0);
	CHECK(asprintf(&keep_sse, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: "
				  "%s\r\n\r\n" KEEP_SSE, len_sse) > 0);
	const struct step steps[] = {
		{keep_json, {0}, 0, 0},
		{keep_sse, {0}, 0, 0},
		{keep_json, {0}, 0, 0}, /* the server closes after this one */
		{OK_JSON "\r\n" KEEP_BODY, {0}, 0, 0},
	};
	struct srv s;
	keep_first = 2;
	srv_start(&s, steps, 4);
	setenv(KEY_ENV, KEY, 1);
	struct zc_provider_config cfg = provider(&s);
	json_t *m = msgs();
	struct zc_chat_req r = base_req(m, NULL);
	struct zc_chat_reply out;
	struct zc_err e = {0};
	for (int i = 0; i < 4; i++) {
		r.stream = i == 1;
		CHECK_INT(zc_llm_chat(&cfg, &r, &out, &e), ZCOR_OK);
		check_msg(&e);
		CHECK_STR(out.content, "ok");
		zc_chat_reply_release(&out);
		if (i == 2)
			nap(50); /* the server's close reaches the client first */
	}
	srv_stop(&s);
	keep_first = 0;
	CHECK_INT(s.nreqs, 4);
	CHECK_INT(s.nconns, 2);
	json_decref(m);
	free(keep_json);
	free(keep_sse);
}

/* Issue 14: messages given as text (the stored dialogue) are spliced at
 * messages_text_at — first, in the middle, last — and the body is the
 * same, byte for byte, as with every message given as a value; checks
 * name the request's indexes, the spliced messages counted. */
static void issue14_messages_text_spliced(void)
{
	struct zc_provider_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.enabled = 1;
	snprintf(cfg.model, sizeof(cfg.model), "test-model");
	json_t *all = msgs(), *t = tools();
	json_t *choice = json_string("auto");
	struct zc_chat_req r = base_req(all, t);
	r.tool_choice = choice;
	r.temperature = 0.25;
	r.stream = r.stream_usage = 1;
	char *whole = NULL, *spliced = NULL;
	struct zc_err e = {0};
	CHECK_INT(zc_llm_chat_body(&cfg, &r, &whole, &e), ZCOR_OK);
	size_t n = json_array_size(all);
	for (size_t at = 0; at < n; at++) {
		for (size_t k = 1; at + k <= n; k++) { /* messages at..at+k-1 as text */
			json_t *rest = json_array();
			struct zc_buf text = ZC_BUF_INIT;
			for (size_t i = 0; i < n; i++) {
				json_t *v = json_array_get(all, i);
				if (i < at || i >= at + k) {
					json_array_append(rest, v);
					continue;
				}
				char *one = zc_json_dump(v);
				if (text.len)
					zc_buf_addc(&text, ',');
				zc_buf_adds(&text, one);
				free(one);
			}
			if (json_array_size(rest) == 0) { /* messages may not be empty */
				json_decref(rest);
				zc_buf_release(&text);
				continue;
			}
			struct zc_chat_req s = r;
			s.messages = rest;
			s.messages_text = text.p;
			s.messages_count = k;
			s.messages_text_at = at;
			CHECK_INT(zc_llm_chat_body(&cfg, &s, &spliced, &e), ZCOR_OK);
			if (!spliced || strcmp(spliced, whole) != 0) {
				fprintf(stderr, "at %zu, %zu as text:\n%s\n%s\n", at, k,
					spliced ? spliced : "(null)", whole);
				CHECK(0);
			}
			zc_free(spliced);
			json_decref(rest);
			zc_buf_release(&text);
		}
	}
	/* the tools as text: the same body too */
	char *tt = zc_json_dump(t);
	r.tools_text = tt;
	CHECK_INT(zc_llm_chat_body(&cfg, &r, &spliced, &e), ZCOR_OK);
	CHECK_STR(spliced, whole);
	zc_free(spliced);
	free(tt);
	r.tools_text = NULL;
	/* a bad message after two spliced ones is named where the request has it */
	json_t *bad = json_pack("[{s:s, s:s}, {s:s, s:s}]", "role", "system", "content", "s", "role",
				"robot", "content", "x");
	struct zc_chat_req b = base_req(bad, NULL);
	b.messages_text = "{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"user\",\"content\":\"b\"}";
	b.messages_count = 2;
	b.messages_text_at = 1;
	CHECK_INT(zc_llm_chat_body(&cfg, &b, &spliced, &e), ZCOR_EINVAL);
	CHECK(spliced == NULL);
	CHECK_HAS(e.msg, "'messages[3].role' is 'robot'");
	b.messages_text_at = 3; /* past the two messages given as values */
	CHECK_INT(zc_llm_chat_body(&cfg, &b, &spliced, &e), ZCOR_EINVAL);
	CHECK_HAS(e.msg, "messages_text_at");
	json_decref(bad);
	zc_free(whole);
	json_decref(choice);
	json_decref(all);
	json_decref(t);
}

/* Issue 14 (the turn's base cost): a tools array given with its text
 * (zc_chat_req.tools_text: the session's cached list, checked once when
 * it was built, zc_session_tools) is not checked again for every request;
 * given alone it is, and zc_chat_tools_check names the entry. The array
 * below has a name declared twice: only its text's absence makes the
 * request refuse it, and tool_choice is still checked against it. */
static void issue14_tools_text_checked_once(void)
{
	struct zc_provider_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.enabled = 1;
	snprintf(cfg.model, sizeof(cfg.model), "test-model");
	json_t *m = json_loads("[{\"role\":\"user\",\"content\":\"a\"}]", 0, NULL);
	json_t *t = json_loads("[{\"type\":\"function\",\"function\":{\"name\":\"a\"}},"
			       "{\"type\":\"function\",\"function\":{\"name\":\"a\"}}]",
			       0, NULL);
	CHECK(m && t);
	struct zc_err e = {0};
	CHECK_INT(zc_chat_tools_check(t, &e), ZCOR_EINVAL);
	CHECK_HAS(e.msg, "'tools[1]': the name 'a' is declared twice");
	CHECK_INT(zc_chat_tools_check(NULL, &e), ZCOR_OK);
	struct zc_chat_req r = base_req(m, t);
	char *body = NULL;
	CHECK_INT(zc_llm_chat_body(&cfg, &r, &body, &e), ZCOR_EINVAL);
	CHECK(body == NULL);
	CHECK_HAS(e.msg, "declared twice");
	char *tt = zc_json_dump(t);
	r.tools_text = tt;
	CHECK_INT(zc_llm_chat_body(&cfg, &r, &body, &e), ZCOR_OK);
	CHECK(body && strstr(body, tt));
	zc_free(body);
	body = NULL;
	json_t *choice = json_loads("{\"type\":\"function\",\"function\":{\"name\":\"b\"}}", 0, NULL);
	r.tool_choice = choice;
	CHECK_INT(zc_llm_chat_body(&cfg, &r, &body, &e), ZCOR_EINVAL);
	CHECK_HAS(e.msg, "'tool_choice' names the function 'b'");
	json_decref(choice);
	zc_free(tt);
	json_decref(t);
	json_decref(m);
}

const struct t_case t_cases[] = {
	{"issue14_tools_text_checked_once", issue14_tools_text_checked_once},
	{"issue14_messages_text_spliced", issue14_messages_text_spliced},
	{"connection_reused", connection_reused},
	{"request_sent", request_sent},
	{"stream_split_on_wire", stream_split_on_wire},
	{"stream_every_split", stream_every_split},
	{"answers_accepted", answers_accepted},
	{"answers_refused", answers_refused},
	{"retry_429_then_200", retry_429_then_200},
	{"no_retry_on_4xx", no_retry_on_4xx},
	{"timeout_ms", timeout_ms},
	{"cut_mid_stream", cut_mid_stream},
	{"cancel_from_delta", cancel_from_delta},
	{"response_cap", response_cap},
	{"request_refused", request_refused},
	{0},
};
