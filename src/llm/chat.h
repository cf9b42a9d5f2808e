/*
 * chat.h — chat completions with tools on an OpenAI-compatible endpoint:
 * messages of every role, tools, tool_choice, tool calls, streamed deltas
 * of text and of tool-call arguments. The one provider interface of the
 * turn, zcor_memory_search's filter stage and MCP sampling.
 *
 * LLM layer, beside llm.h (zc_llm_complete) and on the same transport:
 * the timeouts, retries (408, 429, 5xx, failed connections, within
 * timeoutMs, honouring Retry-After), the response cap and the API key from
 * provider.apiKeyEnv are the same. The model's answer is checked strictly
 * here; what a tool call means is the caller's business.
 */
#ifndef ZC_LLM_CHAT_H
#define ZC_LLM_CHAT_H

#include <jansson.h>
#include <stddef.h>

#include "base/err.h"
#include "memory/config.h"

#define ZC_CHAT_TOOL_CALLS_MAX 64 /* tool calls in one answer */

/*
 * One streamed piece, as it arrives. A text delta has text (text_len
 * bytes, valid UTF-8, not NUL-terminated) and tool_index -1; a tool-call
 * delta has tool_index (the call's position in the answer), tool_id and
 * tool_name as known so far (NULL until the delta that carries them,
 * usually the first) and args (args_len bytes, possibly 0) to append to
 * that call's arguments. Pointers live until the callback returns.
 */
struct zc_chat_delta {
	const char *text;
	size_t text_len;
	int tool_index;
	const char *tool_id;
	const char *tool_name;
	const char *args;
	size_t args_len;
};

/* Returns 0 to go on, nonzero to cancel the call (zc_llm_chat then
 * fails with ZCOR_EPROVIDER and out->cancelled set). */
typedef int (*zc_chat_delta_fn)(void *ud, const struct zc_chat_delta *d);

struct zc_chat_req {
	/* OpenAI messages, in order: {role: "system"|"developer"|"user",
	 * content}, {role: "assistant", content and/or tool_calls: [{id,
	 * type: "function", function: {name, arguments}}]}, {role: "tool",
	 * tool_call_id, content}. content is a string or an array of parts.
	 * Borrowed; sent as it is. */
	const json_t *messages;
	/* NULL, or messages_count more messages as JSON text: compact chat
	 * message objects joined by commas, such as zc_dialogue_read gives
	 * (stored by the turn after they were sent once), spliced into the
	 * request before messages[messages_text_at] (0..size of messages)
	 * instead of being parsed and dumped again. Sent as it is: the caller
	 * vouches that it is valid JSON of well-formed messages; the checks
	 * below apply to `messages` only (their indexes in a message are the
	 * request's, the spliced ones counted). "" or a count of 0: none.
	 * Borrowed. */
	const char *messages_text;
	size_t messages_count, messages_text_at;
	/* NULL, or [{type: "function", function: {name, description?,
	 * parameters?}}]. Borrowed. */
	const json_t *tools;
	/* NULL, or tools already as compact JSON text (zc_json_dump of the
	 * same array): spliced into the request instead of dumping tools
	 * again. With it the caller vouches that tools passed
	 * zc_chat_tools_check when the text was made, and tools is not
	 * checked again (only tool_choice against it). Borrowed. */
	const char *tools_text;
	/* NULL (not sent), "auto", "none", "required", or {type: "function",
	 * function: {name}} naming one of tools. Borrowed. */
	const json_t *tool_choice;
	/* 0..2; NAN leaves it out (the server's default; some models accept
	 * nothing but their own). */
	double temperature;
	int stream;            /* ask for SSE and read it as it arrives */
	int stream_usage;      /* with stream: stream_options.include_usage */
	/* called as a streamed answer arrives (NULL: not told); an answer
	 * that came as one JSON object calls it never */
	zc_chat_delta_fn on_delta;
	void *ud;
};

struct zc_tool_call {
	char *id;
	char *name;
	char *arguments;   /* the raw text the model produced */
	int args_object;   /* 1 when arguments parse as a JSON object; a
			    * string that does not is the turn's to answer
			    * with a tool error, not a provider error */
};

struct zc_chat_reply {
	char *content;                  /* the text, NULL when none */
	struct zc_tool_call *tool_calls; /* n_tool_calls of them, in order */
	size_t n_tool_calls;
	char *finish_reason;            /* "stop", "tool_calls", "length"…; NULL when not given */
	long long prompt_tokens, completion_tokens, total_tokens; /* -1 when not reported */
	long long model_ms;             /* the answering attempt: request to last byte */
	int attempts;                   /* 1 when no retry was needed */
	int cancelled;                  /* on_delta asked to stop */
};

/*
 * Runs one chat completion: POSTs {model, messages, tools?, tool_choice?,
 * temperature?, stream, stream_options?} to {baseUrl}/chat/completions and
 * fills *out (zeroed first; release it with zc_chat_reply_release, also
 * after a failure). A body is read as one JSON object or as an SSE stream,
 * whichever the server sent. Returns ZCOR_OK; ZCOR_EINVAL for a request
 * that is not one of the above (the field named; nothing is sent);
 * ZCOR_ENOPROVIDER when cfg is not enabled; ZCOR_EPROVIDER when the call
 * failed or the answer is not valid: not JSON, no choices[0], a tool call
 * without id or function name or with arguments that are not a string,
 * neither text nor tool calls, a stream that ended with neither data:
 * [DONE] nor a finish_reason, more than ZC_CHAT_TOOL_CALLS_MAX calls.
 * Messages never contain the API key.
 */
int zc_llm_chat(const struct zc_provider_config *cfg, const struct zc_chat_req *req,
		struct zc_chat_reply *out, struct zc_err *e);

/* Frees what out holds and zeroes it; NULL is fine. */
void zc_chat_reply_release(struct zc_chat_reply *out);

/* ---- pieces, exposed for unit tests -------------------------------- */

/*
 * The body zc_llm_chat would POST for req (checked the same way:
 * ZCOR_EINVAL and *body NULL for a request it refuses); *body is new
 * text the caller frees with zc_free.
 */
/* The checks a request's tools array passes (NULL: none given) before
 * anything is sent; a caller keeping the array and its text for many
 * requests (zc_chat_req.tools_text) runs them once. ZCOR_EINVAL naming
 * the entry and what to do. */
int zc_chat_tools_check(const json_t *tools, struct zc_err *e);

int zc_llm_chat_body(const struct zc_provider_config *cfg, const struct zc_chat_req *req,
		     char **body, struct zc_err *e);

/*
 * Reads a 2xx body given as n pieces (split anywhere, as reads would
 * split it) exactly as zc_llm_chat reads the wire, calling req->on_delta;
 * only req->on_delta and req->ud are used. Same results as zc_llm_chat.
 */
int zc_llm_chat_parse(const char *const *pieces, const size_t *lens, size_t n,
		      const struct zc_chat_req *req, struct zc_chat_reply *out, struct zc_err *e);

#endif
