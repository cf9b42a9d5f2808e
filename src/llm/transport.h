/*
 * transport.h — the one HTTP path of the LLM layer (private to src/llm/):
 * POST a JSON payload to {baseUrl}/chat/completions with the API key from
 * the environment, retrying 408, 429, 5xx and failed connections within
 * timeoutMs (honouring Retry-After), never other 4xx, with the response
 * cap of maxResponseBytes. zc_llm_complete (openai.c) and zc_llm_chat
 * (chat.c) both call it; what a 2xx body means is theirs to say, through
 * a sink that sees the body as it arrives.
 */
#ifndef ZC_LLM_TRANSPORT_H
#define ZC_LLM_TRANSPORT_H

#include <stddef.h>

#include <jansson.h>

#include "base/buf.h"
#include "base/err.h"
#include "memory/config.h"
#include "tools/tools.h"

/*
 * What reads a 2xx body. Every callback gets ud.
 * - reset: a new attempt begins; forget what an earlier one fed.
 * - data: the next bytes of a 2xx body, as they arrive (split anywhere).
 *   Returns ZCOR_OK to go on, or an error code with e set to stop the
 *   transfer; the call then fails with that error and is not retried.
 * - finish: the 2xx body is complete (the server ended it); returns the
 *   attempt's result (ZCOR_OK, or an error with e set; not retried).
 * - committed: 1 once the sink handed something on to its caller (a
 *   streamed delta); a failure after that is not retried, since a second
 *   attempt would deliver those pieces twice. May be NULL (never).
 */
struct zc_llm_sink {
	void (*reset)(void *ud);
	int (*data)(void *ud, const char *p, size_t n, struct zc_err *e);
	int (*finish)(void *ud, struct zc_err *e);
	int (*committed)(void *ud);
	void *ud;
};

/* Bytes of the provider's own words kept in a message. */
#define ZC_LLM_QUOTE_MAX 300

/*
 * Copies at most ZC_LLM_QUOTE_MAX bytes of src[0..n) into out (which has
 * ZC_LLM_QUOTE_MAX + 8 bytes) as valid UTF-8 on one line: control
 * characters become spaces, invalid bytes '?', a cut is marked with "…".
 * For a provider's body, which is not NUL-terminated and may hold
 * anything; text of our own goes through ZC_Q.
 */
void zc_llm_quote(char *out, const char *src, size_t n);

/* How the successful attempt went, for the caller's records. */
struct zc_llm_xfer_info {
	int attempts;          /* attempts made (1 = no retry) */
	long long answer_ms;   /* the last attempt: request sent to body end */
};

/*
 * POSTs payload (JSON text) and feeds the 2xx answer to sink. stream
 * only picks the Accept header (text/event-stream). Returns ZCOR_OK,
 * ZCOR_ENOPROVIDER when cfg is NULL or not enabled, ZCOR_EPROVIDER
 * (unreachable, HTTP error, timeout, too large, or the sink's error), or
 * ZCOR_EINTERNAL; e says why and never contains the API key. info may be
 * NULL.
 */
int zc_llm_post(const struct zc_provider_config *cfg, const char *payload, int stream,
		const struct zc_llm_sink *sink, struct zc_llm_xfer_info *info, struct zc_err *e);

/*
 * GETs url with the same machinery (one thread-kept curl handle, http and
 * https only): the whole call ends by timeout_ms (one retry of a failed
 * connection, 408, 429 or 5xx inside it), the body is at most max_bytes.
 * ZCOR_OK with the 2xx body in body (reset first), or ZCOR_EUPSTREAM with
 * *kind (ZC_HTTP_*, tools.h) and the reason in e (naming url, never a
 * setting: the caller says what to check); body is then empty.
 */
int zc_llm_get(const char *url, long timeout_ms, long max_bytes, struct zc_buf *body, int *kind,
	       struct zc_err *e);

/* ---- reading answers (openai.c), shared with chat.c ------------------ */

/* 1 if doc has an "error" member that is not null ({"error": null} is how
 * some servers say "no error"). */
int zc_llm_has_error(const json_t *doc);
/* ZCOR_EPROVIDER with "the provider reported an error: '…'" quoting doc's
 * error text (or its JSON). */
int zc_llm_provider_reported(const json_t *doc, struct zc_err *e);
/* Appends a message's content — a string, or an array of {type:"text",
 * text} parts — to out; 0 when c is neither (absent, null). */
int zc_llm_add_content(const json_t *c, struct zc_buf *out);

#endif
