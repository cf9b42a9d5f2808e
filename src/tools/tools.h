/*
 * tools.h — the tool registry: one row per model-facing tool (name,
 * descriptions in Chinese and English, JSON Schema, the memory operation
 * that does the work, when it is offered). MCP tools/list, the LLM
 * request's tools, REST and `zcor tool` are all generated from it.
 * Tools layer: validation and dispatch only; the rules are in memory/.
 */
#ifndef ZC_TOOLS_H
#define ZC_TOOLS_H

#include <jansson.h>

#include "memory/memory.h"

enum zc_offer {
	ZC_OFFER_ALWAYS = 0,
	ZC_OFFER_RELATIONSHIPS, /* only while relationship memory is on */
};

struct zc_tool {
	const char *name;
	const char *title;
	const char *desc_zh;
	const char *desc_en;
	const char *schema; /* JSON Schema (2020-12 subset), as text */
	const struct zc_opdef *op;
	enum zc_offer offer;
};

/* The table, in its deterministic order, ending with a zeroed row. */
extern const struct zc_tool zc_tools[];

const struct zc_tool *zc_tool_find(const char *name);
/*
 * Whether models are offered t under cfg (the row's "offered when"): a
 * lookup in the table, cheap enough for every call. MCP tools/call, the
 * tool list and zc_tool_call all ask this, so the rule is written once.
 */
int zc_tool_offered(const struct zc_tool *t, const struct zc_config *cfg);
/* Parsed schema of a tool (borrowed; parsed once, kept for the process). */
const json_t *zc_tool_schema(const struct zc_tool *t);

/*
 * Validates args_text against the tool's schema and runs it. On failure
 * the call is still recorded in history. *out is the result (new ref).
 * provider (borrowed, may be NULL: none) is what an operation that asks
 * a model (zcor_memory_search) calls; the operation gets it as op->ud.
 */
int zc_tool_call(struct zc_mem *m, const struct zcor_ctx *ctx, const struct zc_tool *t,
		 const struct zcor_provider *provider, const char *args_text, json_t **out,
		 struct zc_err *e);

#endif
