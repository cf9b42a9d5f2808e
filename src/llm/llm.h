/*
 * llm.h — the provider client: one chat completion on an OpenAI-compatible
 * endpoint (OpenAI, DeepSeek, Qwen, Ollama, llama.cpp server, vLLM…).
 *
 * LLM layer, above tools/ and memory/. It reads a provider's settings
 * (memory/config.h) and speaks HTTP through libcurl; it knows nothing of
 * memories or prompts. Calls block the calling thread for at most the
 * configured timeoutMs (retries and their waits included); they share no
 * state, so any number of threads may call at once.
 */
#ifndef ZC_LLM_H
#define ZC_LLM_H

#include <stddef.h>
#include <time.h>

#include "base/err.h"
#include "memory/config.h"
#include "tools/tools.h"
#include "zcor.h"

/*
 * The LLM layer's state on a handle (provider.c): which provider a call
 * uses. An explicit one (zcor_set_provider) wins, else config.json's
 * "provider" (read at the moment of each request: the file may change
 * while zcor runs), else the fallback (zcor_set_fallback_provider), else
 * none. Opened over the memory handle's config file, which it borrows.
 */
struct zc_llm {
	struct zc_confile *conf;             /* borrowed: config.json */
	struct zcor_provider explicit_p;     /* if has_explicit */
	int has_explicit;
	struct zcor_provider fallback;       /* if has_fallback */
	int has_fallback;
	struct zcor_provider from_config;    /* one request with config.json's settings */
};

void zc_llm_open(struct zc_llm *l, struct zc_confile *conf);
/* Accepts NULL; the providers' ud are the caller's, not freed here. */
void zc_llm_close(struct zc_llm *l);
/* p NULL or without complete: none. Copied. */
void zc_llm_set_provider(struct zc_llm *l, const struct zcor_provider *p);
void zc_llm_set_fallback(struct zc_llm *l, const struct zcor_provider *p);
/* The provider in effect for a call now (borrowed, valid until the next
 * call on l), or NULL when there is none. Refreshes the config. */
const struct zcor_provider *zc_llm_provider(struct zc_llm *l);

/* The HTTP GET handed to a plain-function tool (tools.h, struct zc_tool_env):
 * zc_llm_get's timeouts, retry and size cap (transport.h). Static, never
 * NULL. */
const struct zc_http_get *zc_llm_http_get(void);

/*
 * POSTs {model, messages: [system, user], temperature: 0, stream: false}
 * to {baseUrl}/chat/completions and sets *reply to choices[0].message
 * .content (or the joined deltas of a streamed answer). The caller frees
 * *reply with zc_free (plain free() works too). Retries 408, 429, 5xx and
 * failed connections within timeoutMs, honouring Retry-After. On failure
 * returns ZCOR_EPROVIDER (or ZCOR_ENOPROVIDER when cfg is not enabled)
 * with the reason in e, and *reply is NULL.
 */
int zc_llm_complete(const struct zc_provider_config *cfg, const char *system, const char *user,
		    char **reply, struct zc_err *e);

/* ---- pieces, exposed for unit tests -------------------------------- */

/*
 * The wait a Retry-After value asks for, in milliseconds from `now`:
 * delay-seconds ("120") or an HTTP-date ("Wed, 21 Oct 2026 07:28:00
 * GMT"); a date in the past is 0. Returns -1 when value is neither.
 */
long long zc_llm_retry_after_ms(const char *value, time_t now);

/*
 * Reads a chat completion body: one JSON object, possibly after blank
 * lines and SSE comment lines (":" keep-alives), or an SSE stream of
 * "data: {chunk}" events ending with "data: [DONE]" whose deltas' content
 * is joined. A body {"error": {"message"}} is an error quoting it. Sets
 * *content (caller frees with zc_free) or returns ZCOR_EPROVIDER.
 */
int zc_llm_parse_body(const char *body, size_t len, char **content, struct zc_err *e);

/* The provider's own error text in an error body ({"error": {"message"}},
 * {"error": "…"} or {"message": "…"}), or NULL. Caller frees with zc_free. */
char *zc_llm_error_message(const char *body, size_t len);

#endif
