/*
 * digest.c — the digest run (digest.h). Agent layer: reads the input
 * through memory/digest.h, runs an agent session (agent/session.h) with
 * the digest audience's tools as actor digest, and writes the record
 * (with "digest done" on success) in one operation. No transaction is
 * open while the model answers; the tool calls are each their own.
 */
#include "agent/digest.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "agent/session.h"
#include "base/alloc.h"
#include "base/buf.h"
#include "base/json.h"
#include "base/timeutil.h"
#include "base/utf8.h"
#include "memory/digest.h"
#include "memory/lease.h"
#include "tools/skills.h"
#include "tools/tools.h"

/* ---- one digest per conversation at a time (the store's lease) -------- */

/* What the lease outlasts the run's hard limit by: the record's write
 * after the deadline. A process that dies mid-run holds the next run off
 * for at most digestTimeoutMs and this. */
#define DIGEST_LEASE_SLACK_MS 5000

static int lease_begin(struct zc_mem *m, const char *conv, const char *owner, long timeout_ms,
		       struct zc_err *e)
{
	static const struct zcor_ctx digest = {ZCOR_ACTOR_DIGEST, NULL};
	json_t *args = json_pack("{s:s, s:s, s:I}", "conversation", conv, "owner", owner, "leaseMs",
				 (json_int_t)timeout_ms + DIGEST_LEASE_SLACK_MS);
	json_t *out = NULL;
	int rc = zc_mem_run(m, &digest, &zc_op_digest_begin, args, &out, e);
	json_decref(args);
	json_decref(out);
	return rc;
}

static void lease_end(struct zc_mem *m, const char *conv, const char *owner)
{
	static const struct zcor_ctx digest = {ZCOR_ACTOR_DIGEST, NULL};
	json_t *args = json_pack("{s:s, s:s}", "conversation", conv, "owner", owner);
	json_t *out = NULL;
	struct zc_err e = {0};
	/* failing, the lease runs out by itself */
	zc_mem_run(m, &digest, &zc_op_digest_release, args, &out, &e);
	zc_err_clear(&e);
	json_decref(args);
	json_decref(out);
}

/* ---- the prompt ---------------------------------------------------------- */

void zc_digest_prompt(struct zc_skills *skills, const char *conversation, const json_t *input,
		      char **system, char **user)
{
	struct zc_buf b = ZC_BUF_INIT;
	zc_buf_addf(&b,
		    "你是 zcor 的摘要 Agent，在一个独立的会话里工作：没有人格，不挂在任何聊天上，你的回答"
		    "不会发到任何地方，只有用工具写进记忆的才算数。\n"
		    "这一轮要摘要的会话是 `%s`。下面的用户消息是它上次摘要以来的聊天记录。\n"
		    "按 `message-digest` skill 做：先调用 skill(\"message-digest\") 读它，再照做；"
		    "需要时加载它提到的其他 skill。\n"
		    "可用的 skill：\n",
		    conversation);
	size_t before = b.len;
	if (skills)
		zc_skills_catalog(skills, 0, &b);
	if (b.len == before)
		zc_buf_adds(&b, "（没有）\n");
	zc_buf_addf(&b,
		    "\n[en] You are zcor's digest agent in an independent session: no persona, no chat, "
		    "your answer goes nowhere; only what you write to memory with the tools counts. You "
		    "are digesting conversation `%s`; the user message holds its transcript since the "
		    "last digest. Follow the `message-digest` skill (load it with the skill tool first). "
		    "When done, answer with one line saying what you wrote.\n",
		    conversation);
	*system = zc_buf_detach(&b);
	long long lines = json_integer_value(json_object_get(input, "lines"));
	long long sent = json_integer_value(json_object_get(input, "sentLines"));
	zc_buf_addf(&b, "会话 `%s` 上次摘要以来的聊天记录（%lld 条）", conversation, lines);
	if (json_is_true(json_object_get(input, "cut")))
		zc_buf_addf(&b,
			    "。注意：太长了，这里只有最近的 %lld 条，更早的 %lld 条被省略了；需要时用 "
			    "qq_transcript 的 read 或 search 翻原话。 / Note: only the newest %lld lines are "
			    "here; %lld older lines were left out (qq_transcript read or search has them)",
			    sent, lines - sent, sent, lines - sent);
	zc_buf_adds(&b, "：\n\n");
	zc_buf_adds(&b, zc_json_str(input, "text") ? zc_json_str(input, "text") : "");
	*user = zc_buf_detach(&b);
}

/* ---- the wake ------------------------------------------------------------ */

int64_t zc_digest_next_wake(int64_t now_ms, int hour)
{
	time_t t = (time_t)(now_ms >= 0 ? now_ms / 1000 : (now_ms - 999) / 1000);
	struct tm tm;
	if (!localtime_r(&t, &tm))
		return now_ms + 86400000;
	for (int d = 0; d < 3; d++) { /* today's, else tomorrow's (a DST gap: the day after) */
		struct tm w = tm;
		w.tm_mday += d;
		w.tm_hour = hour;
		w.tm_min = w.tm_sec = 0;
		w.tm_isdst = -1;
		time_t x = mktime(&w);
		if (x != (time_t)-1 && (int64_t)x * 1000 > now_ms)
			return (int64_t)x * 1000;
	}
	return now_ms + 86400000;
}

/* ---- the run --------------------------------------------------------------- */

/* Writes the record (giving the lease back in the same transaction:
 * *written set) and makes the run's answer. */
static int record(struct zc_session *s, const char *conv, const char *owner, const char *trigger,
		  const json_t *input, int64_t started, int *written, json_t **out,
		  struct zc_err *e)
{
	static const struct zcor_ctx digest = {ZCOR_ACTOR_DIGEST, NULL};
	const char *status = s->timed_out ? "timeout" : s->failed ? "error" : "ok";
	json_t *tokens = zc_session_tokens(s);
	json_t *rec = json_pack("{s:s, s:O, s:O, s:s?, s:I, s:I, s:O, s:s?}", "trigger", trigger,
				"toolCalls", s->calls, "tools", s->declared ? s->declared : json_null(),
				"limit", s->limit, "requests", (json_int_t)s->requests, "modelMs",
				(json_int_t)s->model_ms, "tokens", tokens, "answer", s->reply);
	json_t *errj = s->failed ? json_pack("{s:s, s:o}", "code", zcor_code_name(s->fail.code),
					     "message", zc_json_string_own(zc_utf8_lossy(s->fail.msg)))
				 : json_null();
	json_t *fin = json_pack("{s:s, s:s, s:I, s:I, s:s, s:O, s:O, s:O, s:O, s:o, s:O}",
				"conversation", conv, "owner", owner, "startedAt", (json_int_t)started, "endedAt",
				(json_int_t)zc_mem_now(s->m), "status", status, "lines",
				json_object_get(input, "lines"), "sentLines",
				json_object_get(input, "sentLines"), "chars", json_object_get(input, "chars"),
				"cut", json_object_get(input, "cut"), "error", errj, "record", rec);
	json_t *done = NULL;
	int rc = zc_mem_run(s->m, &digest, &zc_op_digest_finish, fin, &done, e);
	*written = rc == ZCOR_OK;
	if (rc) {
		zc_err_prefix(e, "the digest's record could not be written (the digest is not marked done)");
	} else if (s->failed) {
		json_int_t id = json_integer_value(json_object_get(done, "id"));
		rc = zc_fail(e, s->fail.code == ZCOR_OK ? ZCOR_EPROVIDER : s->fail.code,
			     "the digest of '%s' %s (recorded as digest %lld; its lines stay for the next "
			     "run): %s",
			     conv, s->timed_out ? "timed out" : "failed", (long long)id, s->fail.msg);
		zc_json_err_detail(e, json_pack("{s:I, s:s}", "digest", id, "status", status)); /* takes it over */
	} else {
		*out = json_pack("{s:O, s:s, s:s, s:O, s:O, s:O, s:O, s:O, s:O, s:I, s:s?, s:O}", "digest",
				 json_object_get(done, "id"), "conversation", conv, "status", status,
				 "lines", json_object_get(input, "lines"), "sentLines",
				 json_object_get(input, "sentLines"), "chars",
				 json_object_get(input, "chars"), "cut", json_object_get(input, "cut"),
				 "toolCalls", s->calls, "tokens", tokens, "modelMs",
				 (json_int_t)s->model_ms, "answer", s->reply, "after",
				 json_object_get(done, "conversation"));
	}
	json_decref(fin);
	json_decref(rec);
	json_decref(done);
	json_decref(tokens);
	return rc;
}

int zc_digest_run(struct zc_mem *m, struct zc_skills *skills, const char *conversation,
		  const char *trigger, int if_due, const int *cancel, json_t **out, struct zc_err *e)
{
	struct zc_session s = {.m = m, .skills = skills, .conv = conversation,
			       .actor = ZCOR_ACTOR_DIGEST, .audience = ZC_AUD_DIGEST, .hard = 1,
			       .cancel = cancel};
	json_t *input = NULL;
	char *system = NULL, *user = NULL;
	char owner[ZC_LEASE_OWNER_MAX];
	int rc, taken = 0, recorded = 0;
	*out = NULL;
	zc_config_refresh(&m->conf);
	s.cfg = m->conf.cfg;
	if (!s.cfg.memory) {
		rc = zc_fail(e, ZCOR_ECONFLICT,
			     "the long-term memory is off (config.json \"memory\": false), so nothing is "
			     "digested; set \"memory\": true to turn it on");
		goto out;
	}
	if (cancel && __atomic_load_n(cancel, __ATOMIC_ACQUIRE)) {
		rc = zc_fail(e, ZCOR_ECONFLICT,
			     "zcor is stopping, so no digest starts now; the lines of '%s' stay for the "
			     "next run",
			     conversation);
		goto out;
	}
	if (!s.cfg.provider.enabled) {
		rc = zc_fail(e, ZCOR_ENOPROVIDER,
			     "no model provider is configured, so the digest agent cannot run: add "
			     "\"provider\" to %s/config.json (docs/PROVIDERS.md)",
			     m->dir);
		goto out;
	}
	zc_lease_owner_name(owner, sizeof(owner), zc_mem_now(m), trigger ? trigger : "manual");
	if ((rc = lease_begin(m, conversation, owner, s.cfg.digest_timeout_ms, e)))
		goto out;
	taken = 1;
	if (if_due) {
		/* due when listed; another process may have digested it since
		 * (the lease orders runs, it does not make them once a day) */
		char today[ZC_DATE_LEN];
		int due = 0;
		zc_time_local_date(zc_mem_now(m), today);
		if ((rc = zc_digest_still_due(m, conversation, today, s.cfg.digest_min_lines, &due, e)))
			goto out;
		if (!due) {
			*out = json_pack("{s:n, s:b, s:b, s:s}", "digest", "idle", 1, "notDue", 1,
					 "conversation", conversation);
			goto out;
		}
	}
	if ((rc = zc_digest_input(m, conversation, s.cfg.digest_max_chars, &input, e)))
		goto out;
	if (json_integer_value(json_object_get(input, "sentLines")) == 0) {
		*out = json_pack("{s:n, s:b, s:s, s:O}", "digest", "idle", 1, "conversation", conversation,
				 "lines", json_object_get(input, "lines"));
		goto out;
	}
	int64_t started = zc_mem_now(m);
	s.t0 = zc_time_mono_ms();
	s.deadline = s.t0 + (double)s.cfg.digest_timeout_ms;
	zc_session_start(&s);
	zc_session_tools(&s);
	zc_digest_prompt(skills, conversation, input, &system, &user);
	json_array_append_new(s.messages, json_pack("{s:s, s:s}", "role", "system", "content", system));
	json_array_append_new(s.messages, json_pack("{s:s, s:s}", "role", "user", "content", user));
	zc_session_loop(&s);
	rc = record(&s, conversation, owner, trigger ? trigger : "manual", input, started, &recorded,
		    out, e);
out:
	if (taken && !recorded)
		lease_end(m, conversation, owner);
	zc_session_release(&s);
	json_decref(input);
	zc_free(system);
	zc_free(user);
	return rc;
}
