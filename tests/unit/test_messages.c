/*
 * test_messages.c — issue 12, defect 3: messages that quote input (a tool
 * name, an argument name, a path, a conversation key, a provider's words)
 * quote it through ZC_Q, so a long Chinese name is cut after a whole
 * character and marked "…", never split. A cut with %.Ns split the
 * character: zc_fail turned the stray bytes into '?', and a warning kept
 * in a fixed buffer (config.json, synonyms.json) was not UTF-8 at all and
 * vanished from the JSON that carries it.
 *
 * One case per message site in src/, through the public API where one
 * reaches it.
 */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/utf8.h"
#include "harness.h"
#include "llm/llm.h"

/* n copies of the character ch (caller frees). */
static char *chars(const char *ch, int n)
{
	size_t k = strlen(ch);
	char *out = malloc(k * (size_t)n + 1);
	for (int i = 0; i < n; i++)
		memcpy(out + k * (size_t)i, ch, k);
	out[k * (size_t)n] = '\0';
	return out;
}

/* msg quotes the 300-character name cut on a character boundary: valid
 * UTF-8, no '?' from a split character, "名名…" where the cut is. */
#define CHECK_QUOTED(msg)                                                                      \
	do {                                                                                   \
		const char *q_ = (msg);                                                        \
		CHECK(q_ && zc_utf8_valid(q_, strlen(q_)));                                    \
		CHECK(q_ && !strchr(q_, '?'));                                                 \
		CHECK_HAS(q_, "名名\xe2\x80\xa6");                                             \
	} while (0)

static char *name; /* 300 × 名: 900 bytes, longer than every cap */

/* The message of a tool call's error result. */
static char *tool_msg(zcor *z, const char *conv, const char *tool, const char *args)
{
	int rc = 0;
	json_t *r = t_call_raw(z, conv, &rc, tool, args);
	CHECK(rc != ZCOR_OK);
	char *m = t_errmsg(r) ? strdup(t_errmsg(r)) : NULL;
	json_decref(r);
	return m;
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	char *s = t_vformat(f, ap);
	va_end(ap);
	return s;
}

/* The tool's error message quotes the name (args_fmt's %s) as it should. */
#define CHECK_TOOL(z, conv, tool, args_fmt, ...)                                       \
	do {                                                                           \
		char *a_ = fmt(args_fmt, __VA_ARGS__);                                 \
		char *m_ = tool_msg(z, conv, tool, a_);                                \
		CHECK_QUOTED(m_);                                                      \
		free(m_);                                                              \
		free(a_);                                                              \
	} while (0)

static void issue12_tool_and_argument_names(void)
{
	zcor *z = t_open();
	char *out = NULL, *a = NULL;
	struct zcor_ctx ctx = {ZCOR_ACTOR_CLI, NULL};
	/* zcor.c: no tool named … */
	CHECK(zcor_tool_call(z, &ctx, name, "{}", &out) == ZCOR_ENOTFOUND);
	json_t *r = t_answer(z, zcor_errcode(z), out);
	CHECK_QUOTED(t_errmsg(r));
	json_decref(r);
	/* schema.c: unknown argument … */
	CHECK_TOOL(z, NULL, "zcor_memory_write", "{\"title\":\"t\",\"content\":\"c\",\"%s\":1}", name);
	/* timeutil.c: a time that is not ISO-8601 (64 characters at most: the
	 * schema's limit comes first), quoted whole where %.64s split it */
	char *short_name = chars("名", 60);
	a = fmt("{\"from\":\"%s\"}", short_name);
	char *m = tool_msg(z, NULL, "zcor_memory_query", a);
	CHECK_HAS(m, short_name);
	CHECK(m && zc_utf8_valid(m, strlen(m)) && !strchr(m, '?'));
	free(m);
	free(a);
	free(short_name);
	/* view_path.c (the hard rules): a COGNITION.md line with a file path */
	CHECK_TOOL(z, NULL, "qq_memory",
		   "{\"action\":\"write\",\"path\":\"COGNITION.md\",\"content\":\"# COGNITION.md\\n\\n%s /tmp/a.png\\n\"}",
		   name);
	/* search.c: synonym group edit with an unknown argument */
	a = fmt("{\"index\":0,\"terms\":null,\"%s\":1}", name);
	CHECK(zcor_synonyms_edit(z, &ctx, a, &out) == ZCOR_EINVAL);
	r = t_answer(z, zcor_errcode(z), out);
	CHECK_QUOTED(t_errmsg(r));
	json_decref(r);
	free(a);
	zcor_close(z);
}

static void issue12_api_arguments(void)
{
	zcor *z = t_open();
	char *out = NULL;
	json_t *r;
	/* zcor.c: a conversation key */
	CHECK(zcor_check_conversation(NULL, name) == ZCOR_EINVAL);
	CHECK_QUOTED(zcor_errmsg(NULL));
	/* zcor.c: a cursor zcor never gave */
	CHECK(zcor_node_list(z, NULL, name, 10, &out) == ZCOR_EINVAL);
	r = t_answer(z, zcor_errcode(z), out);
	CHECK_QUOTED(t_errmsg(r));
	json_decref(r);
	/* zcor.c: check-reply's request */
	char *a = fmt("{\"text\":\"hi\",\"%s\":1}", name);
	CHECK(zcor_check_reply_json(z, a, &out) == ZCOR_EINVAL);
	r = t_answer(z, zcor_errcode(z), out);
	CHECK_QUOTED(t_errmsg(r));
	json_decref(r);
	free(a);
	/* recall.c: a recall request's field */
	a = fmt("{\"conversation\":\"group:1\",\"messages\":[\"hi\"],\"%s\":1}", name);
	CHECK(zcor_recall(z, a, &out) == ZCOR_EINVAL);
	r = t_answer(z, zcor_errcode(z), out);
	CHECK_QUOTED(t_errmsg(r));
	json_decref(r);
	free(a);
	/* media.c: a malformed media reference */
	a = fmt("media/%s", name);
	CHECK(zcor_media_path(z, a, &out) == ZCOR_EINVAL);
	CHECK_QUOTED(zcor_errmsg(z));
	zcor_free(out);
	free(a);
	zcor_close(z);
}

/* zcor_log_messages: the batch, a message and a media item with a field
 * they do not have, a media file that cannot be read, and a caller bound
 * to another conversation. */
static void issue12_transcript_batches(void)
{
	zcor *z = t_open();
	struct zcor_ctx bound = {ZCOR_ACTOR_MODEL, "group:1"};
	const char *batches[] = {
		"{\"%s\":[]}",
		"{\"messages\":[{\"id\":\"1\",\"senderId\":\"2\",\"text\":\"hi\",\"%s\":1}]}",
		"{\"messages\":[{\"id\":\"1\",\"senderId\":\"2\",\"media\":[{\"type\":\"image\",\"%s\":1}]}]}",
		"{\"messages\":[{\"id\":\"1\",\"senderId\":\"2\",\"media\":[{\"type\":\"image\",\"file\":\"/%s.png\"}]}]}",
	};
	for (size_t i = 0; i < sizeof(batches) / sizeof(batches[0]); i++) {
		char *b = fmt(batches[i], name), *out = NULL;
		CHECK(zcor_log_messages(z, NULL, "group:1", b, &out) == ZCOR_EINVAL);
		json_t *r = t_answer(z, zcor_errcode(z), out);
		CHECK_QUOTED(t_errmsg(r));
		json_decref(r);
		free(b);
	}
	char *out = NULL;
	CHECK(zcor_log_messages(z, &bound, name, "{\"messages\":[]}", &out) == ZCOR_EFORBIDDEN);
	json_t *r = t_answer(z, zcor_errcode(z), out);
	CHECK_QUOTED(t_errmsg(r));
	json_decref(r);
	zcor_close(z);
}

/* config.json and synonyms.json with an unknown key of 300 characters:
 * the warning kept in a fixed buffer is cut on a boundary, so it is UTF-8
 * and reaches the JSON (jansson refused the split one: no warning at all). */
static void issue12_file_warnings(void)
{
	zcor *z = t_open();
	char path[4096];
	const char *files[] = {"config.json", "synonyms.json"};
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", zcor_dir(z), files[i]);
		FILE *f = fopen(path, "w");
		CHECK(f != NULL);
		if (f) {
			fprintf(f, "{\"%s\":1}\n", name);
			fclose(f);
		}
	}
	char *cfg = NULL;
	zcor_config_json(z, &cfg);
	json_t *r = json_loads(cfg, 0, NULL);
	CHECK_QUOTED(t_str(r, "warning"));
	json_decref(r);
	zcor_free(cfg);
	char *syn = NULL;
	zcor_synonyms_list(z, &syn);
	r = json_loads(syn, 0, NULL);
	CHECK_QUOTED(t_str(r, "warning"));
	json_decref(r);
	zcor_free(syn);
	zcor_close(z);
}

/* openai.c: a provider's finish_reason, quoted when there is no content. */
static void issue12_provider_words(void)
{
	char *body = fmt("{\"choices\":[{\"message\":{},\"finish_reason\":\"%s\"}]}", name), *content = NULL;
	struct zc_err e = {0};
	CHECK(zc_llm_parse_body(body, strlen(body), &content, &e) == ZCOR_EPROVIDER);
	CHECK_QUOTED(e.msg);
	zcor_free(content);
	free(body);
}

const struct t_case t_cases[] = {
	{"issue12_tool_and_argument_names", issue12_tool_and_argument_names},
	{"issue12_api_arguments", issue12_api_arguments},
	{"issue12_transcript_batches", issue12_transcript_batches},
	{"issue12_file_warnings", issue12_file_warnings},
	{"issue12_provider_words", issue12_provider_words},
	{NULL, NULL},
};

/* The name every case quotes, made before main runs the cases. */
__attribute__((constructor)) static void make_name(void) { name = chars("名", 300); }
__attribute__((destructor)) static void free_name(void) { free(name); }
