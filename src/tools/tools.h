/*
 * tools.h — the tool registry: one row per tool (name, family, audience,
 * descriptions in Chinese and English, JSON Schema, "offered when", and
 * the handler: a memory operation or a plain function). MCP tools/list,
 * the model's tools in a turn, REST and `zcor tools` all take their lists
 * from zc_tools_for, and every call goes through zc_tool_call, which asks
 * the same rule. Tools layer: validation and dispatch only; the rules are
 * in memory/.
 */
#ifndef ZC_TOOLS_H
#define ZC_TOOLS_H

#include <jansson.h>

#include "memory/memory.h"

/*
 * Who a tool is for (zc_tool.audience, a bit set). A caller is exactly
 * one of them (zc_tool_audience_of): the model in a conversation (also an
 * MCP client, whose actor is the model, with or without a conversation),
 * the digest agent (seed 003: qq_memory, qq_transcript, qq_save_sticker,
 * its skill and the wiki lookup),
 * or the host plane (the operator: CLI, REST, the page).
 */
#define ZC_AUD_MODEL  0x1u
#define ZC_AUD_DIGEST 0x2u
#define ZC_AUD_HOST   0x4u
#define ZC_AUD_EVERY  (ZC_AUD_MODEL | ZC_AUD_DIGEST | ZC_AUD_HOST)

/* "Offered when": applies to the model and the digest agent, never to the
 * host plane, which sees every row of its audience. */
enum zc_offer {
	ZC_OFFER_ALWAYS = 0,
	ZC_OFFER_RELATIONSHIPS, /* only while relationship memory is on */
};

/*
 * An HTTP GET for a plain function (the wiki lookup), given by a layer
 * above (llm/transport.c, wired by the api layer and the turn) the way
 * `provider` is: tools/ sits below llm/ and has no HTTP client of its own.
 * get fetches url within timeout_ms (retries included), reading at most
 * max_bytes, into body (reset first). ZCOR_OK with a 2xx body; else an
 * error (ZCOR_EUPSTREAM) with *kind one of ZC_HTTP_* and the reason in e,
 * naming url and no setting: the caller says what to check.
 */
/* ZC_HTTP_CUT: the wait was cut short by the caller's own limit (a turn's
 * time per tool call or deadline, a digest run's digestTimeoutMs), not the
 * tool's timeout; e names that limit. */
enum { ZC_HTTP_OK = 0, ZC_HTTP_UNREACHABLE, ZC_HTTP_TIMEOUT, ZC_HTTP_TOO_BIG, ZC_HTTP_STATUS,
       ZC_HTTP_CUT };
struct zc_buf;
struct zc_http_get {
	int (*get)(void *ud, const char *url, long timeout_ms, long max_bytes, struct zc_buf *body,
		   int *kind, struct zc_err *e);
	void *ud;
};

struct zc_skills; /* tools/skills.h */

/* What a plain-function handler is handed (all borrowed; provider and
 * http may be NULL: none; skills: the handle's discovered skills,
 * tools/skills.h). */
struct zc_tool_env {
	struct zc_mem *m;
	const struct zcor_ctx *ctx;
	const struct zcor_provider *provider;
	const struct zc_http_get *http;
	struct zc_skills *skills;
};

/*
 * A plain-function handler (a skill, a wiki lookup): not a transaction of
 * memory.db. args is checked against the schema already; on success *out
 * is the result (a new reference; NULL stands for {}). It is still a call:
 * zc_tool_run gives it a read record in history (the runner's read path,
 * the function run as the operation's `pre`, outside any transaction), or
 * a failure record when it fails.
 */
typedef int (*zc_tool_fn)(const struct zc_tool_env *env, json_t *args, json_t **out,
			  struct zc_err *e);
/* A row whose description has a live part (the `skill` row lists the
 * skills in effect): appended to the row's own text, in Chinese or
 * English. */
struct zc_buf;
typedef void (*zc_tool_describe_fn)(const struct zc_tool_env *env, int english,
				    struct zc_buf *out);

struct zc_tool {
	const char *name;
	const char *family; /* "zcor" (seed 000), "qq" (seed 003), "wiki" (seed 003's moegirl skill); the name's prefix */
	const char *title;
	const char *desc_zh;
	const char *desc_en;
	const char *schema; /* JSON Schema (2020-12 subset), as text */
	unsigned audience;  /* ZC_AUD_* bits, at least one */
	enum zc_offer offer;
	/* The handler kind: exactly one of the two is set. */
	const struct zc_opdef *op; /* a memory operation: the runner, a transaction, history */
	zc_tool_fn fn;             /* a plain function (zc_tool_fn) */
	zc_tool_describe_fn describe; /* NULL: the description is the row's text alone */
};

/* The table, in its deterministic order, ending with a zeroed row. Only
 * the registry walks it; callers ask zc_tools_for. */
extern const struct zc_tool zc_tools[];

#define ZC_TOOLS_MAX 64 /* rows the table may hold (registry.c checks) */

/* A caller's list: rows of the table in its order (borrowed). */
struct zc_tool_list {
	size_t n;
	const struct zc_tool *v[ZC_TOOLS_MAX];
};

const struct zc_tool *zc_tool_find(const char *name);
/* The audience a call's context belongs to (one ZC_AUD_* bit). */
unsigned zc_tool_audience_of(const struct zcor_ctx *ctx);
/*
 * Whether a caller of audience (one ZC_AUD_* bit) sees t: t's audience
 * holds it and, for the model and the digest agent, t is offered under
 * cfg ("offered when"; a NULL cfg: no config to ask, every row of the
 * audience). conversation (NULL: none) is handed to the "offered when"
 * rule; no rule reads it yet. A lookup in the row, cheap enough for every
 * call.
 */
int zc_tool_visible(const struct zc_tool *t, unsigned audience, const struct zc_config *cfg,
		    const char *conversation);
/*
 * The one answer to "which tools does this caller see": every row
 * zc_tool_visible admits, in table order, into *out. Returns out->n.
 */
size_t zc_tools_for(unsigned audience, const struct zc_config *cfg, const char *conversation,
		    struct zc_tool_list *out);
/* Parsed schema of a tool of the table (borrowed; parsed once, kept for
 * the process). */
const json_t *zc_tool_schema(const struct zc_tool *t);
/* The description the caller shows (the model, MCP tools/list, `zcor
 * tools`): the row's desc_zh or desc_en, plus its live part when it has
 * one (env: what the part reads, env->skills). The caller frees it. */
char *zc_tool_description(const struct zc_tool *t, const struct zc_tool_env *env, int english);

/*
 * Validates args_text against the tool's schema, checks that the caller
 * (ctx's audience, under the config) sees the tool, and runs it
 * (zc_tool_run). A caller outside the audience gets ZCOR_EFORBIDDEN and
 * nothing runs. On failure the call is still recorded in history. *out is
 * the result (new ref). provider (borrowed, may be NULL: none) is what an
 * operation that asks a model (zcor_memory_search) calls; the operation
 * gets it as op->ud, a function as env->provider. http (borrowed, may be
 * NULL: none) is a function's env->http; skills (borrowed, the handle's)
 * is env->skills.
 */
int zc_tool_call(struct zc_mem *m, const struct zcor_ctx *ctx, const struct zc_tool *t,
		 const struct zcor_provider *provider, const struct zc_http_get *http,
		 struct zc_skills *skills,
		 const char *args_text, json_t **out, struct zc_err *e);
/* zc_tool_call that may answer in text: with text not NULL, on success
 * either *text (the operation's own JSON text; caller frees) or *out. */
int zc_tool_call_text(struct zc_mem *m, const struct zcor_ctx *ctx, const struct zc_tool *t,
		      const struct zcor_provider *provider, const struct zc_http_get *http,
		      struct zc_skills *skills, const char *args_text, json_t **out, char **text,
		      struct zc_err *e);
/*
 * The dispatch by handler kind, for arguments already checked: an `op`
 * row through the runner (a transaction, its history record), an `fn`
 * row as a read through the runner (no transaction; a read record, or a
 * failure record). t need not be a row of the table. skills (borrowed)
 * is what a function row gets as env->skills.
 */
int zc_tool_run(struct zc_mem *m, const struct zcor_ctx *ctx, const struct zc_tool *t,
		const struct zcor_provider *provider, const struct zc_http_get *http,
		struct zc_skills *skills, json_t *args,
		json_t **out, struct zc_err *e);

#endif
