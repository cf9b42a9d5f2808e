/*
 * test_llm.c — the LLM layer's pieces that need no server: Retry-After
 * values, reading chat completion bodies (plain, after keep-alive lines,
 * SSE-streamed, broken), the provider's error text, the "provider" keys of
 * config.json, and which provider zcor_memory_search uses. The HTTP side
 * (retries, timeouts, size limits) is tested through the CLI against a
 * fake server in tests/e2e/provider.test.mjs.
 */
#include "harness.h"

#include <stdlib.h>
#include <time.h>

#include "llm/llm.h"
#include "memory/config.h"

/* ---- Retry-After ------------------------------------------------------ */

static void retry_after_seconds(void)
{
	CHECK_INT(zc_llm_retry_after_ms("1", 0), 1000);
	CHECK_INT(zc_llm_retry_after_ms(" 120\r\n", 0), 120000);
	CHECK_INT(zc_llm_retry_after_ms("0", 0), 0);
	CHECK(zc_llm_retry_after_ms("99999999999999999999", 0) >= 100000000LL * 1000);
}

static void retry_after_http_date(void)
{
	const char *d = "Wed, 21 Oct 2026 07:28:00 GMT";
	time_t t = 1792567680; /* that instant */
	CHECK_INT(zc_llm_retry_after_ms(d, t - 5), 5000);
	CHECK_INT(zc_llm_retry_after_ms(d, t + 60), 0); /* in the past: now */
	CHECK_INT(zc_llm_retry_after_ms("Wednesday, 21-Oct-26 07:28:00 GMT", t - 2), 2000);
}

static void retry_after_garbage(void)
{
	CHECK_INT(zc_llm_retry_after_ms("", 0), -1);
	CHECK_INT(zc_llm_retry_after_ms("  ", 0), -1);
	CHECK_INT(zc_llm_retry_after_ms("-5", 0), -1);
	CHECK_INT(zc_llm_retry_after_ms("1.5", 0), -1);
	CHECK_INT(zc_llm_retry_after_ms("soon please", 0), -1);
}

/* ---- bodies ----------------------------------------------------------- */

static char *body_ok(const char *body, int *rc, char *msg, size_t cap)
{
	struct zc_err e = {0};
	char *out = NULL;
	*rc = zc_llm_parse_body(body, strlen(body), &out, &e);
	snprintf(msg, cap, "%s", e.msg);
	/* every message must survive being sent as JSON */
	json_t *j = json_string(e.msg);
	CHECK(j != NULL);
	json_decref(j);
	return out;
}

#define ANSWER "{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"{\\\"ids\\\":[]}\"}}]}"

static void body_plain_and_keepalive(void)
{
	char msg[1024];
	int rc;
	char *c = body_ok(ANSWER, &rc, msg, sizeof(msg));
	CHECK_INT(rc, ZCOR_OK);
	CHECK_STR(c, "{\"ids\":[]}");
	free(c);
	c = body_ok("\n\r\n: keep-alive\n\n: OPENROUTER PROCESSING\r\n\n" ANSWER "\n", &rc, msg, sizeof(msg));
	CHECK_INT(rc, ZCOR_OK);
	CHECK_STR(c, "{\"ids\":[]}");
	free(c);
	c = body_ok("{\"error\":null,\"choices\":[{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"a\"},"
		    "{\"type\":\"text\",\"text\":\"b\"}]}}]}",
		    &rc, msg, sizeof(msg));
	CHECK_INT(rc, ZCOR_OK);
	CHECK_STR(c, "ab");
	free(c);
}

static void body_sse_stream(void)
{
	char msg[1024];
	int rc;
	const char *s = ": hello\r\n\r\n"
			"data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\r\n\r\n"
			"data: {\"choices\":[{\"delta\":{\"content\":\"{\\\"ids\\\":\"}}]}\r\n\r\n"
			": keep-alive\r\n\r\n"
			"event: message\n"
			"data:{\"choices\":[{\"delta\":{\"content\":\"[\\\"m1\\\"]}\"},\"finish_reason\":null}]}\n\n"
			"data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
			"data: [DONE]\n\n"
			"data: {\"choices\":[{\"delta\":{\"content\":\"after done\"}}]}\n\n";
	char *c = body_ok(s, &rc, msg, sizeof(msg));
	CHECK_INT(rc, ZCOR_OK);
	CHECK_STR(c, "{\"ids\":[\"m1\"]}");
	free(c);
	/* no [DONE], no final blank line: what arrived still counts */
	c = body_ok("data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}", &rc, msg, sizeof(msg));
	CHECK_INT(rc, ZCOR_OK);
	CHECK_STR(c, "x");
	free(c);
	c = body_ok("data: [DONE]\n\n", &rc, msg, sizeof(msg));
	CHECK_INT(rc, ZCOR_EPROVIDER);
	CHECK(c == NULL && strstr(msg, "no content"));
	c = body_ok("data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\ndata: {oops\n\n", &rc, msg, sizeof(msg));
	CHECK_INT(rc, ZCOR_EPROVIDER);
	CHECK(c == NULL && strstr(msg, "not a JSON object"));
	c = body_ok("data: {\"error\":{\"message\":\"overloaded\"}}\n\n", &rc, msg, sizeof(msg));
	CHECK_INT(rc, ZCOR_EPROVIDER);
	CHECK(strstr(msg, "overloaded") != NULL);
}

static void body_broken(void)
{
	char msg[1024];
	int rc;
	char *c = body_ok("{\"choices\": [", &rc, msg, sizeof(msg));
	CHECK_INT(rc, ZCOR_EPROVIDER);
	CHECK(c == NULL && strstr(msg, "not valid JSON"));
	c = body_ok("", &rc, msg, sizeof(msg));
	CHECK_INT(rc, ZCOR_EPROVIDER);
	CHECK(strstr(msg, "empty body") != NULL);
	c = body_ok("\n: only a comment\n", &rc, msg, sizeof(msg));
	CHECK_INT(rc, ZCOR_EPROVIDER);
	c = body_ok("{\"choices\":[{\"message\":{\"content\":null},\"finish_reason\":\"length\"}]}", &rc, msg,
		    sizeof(msg));
	CHECK_INT(rc, ZCOR_EPROVIDER);
	CHECK(strstr(msg, "choices[0].message.content") && strstr(msg, "length"));
	c = body_ok("{\"choices\":[]}", &rc, msg, sizeof(msg));
	CHECK_INT(rc, ZCOR_EPROVIDER);
	CHECK(strstr(msg, "choices[0]") != NULL);
	c = body_ok("[1,2]", &rc, msg, sizeof(msg));
	CHECK_INT(rc, ZCOR_EPROVIDER);
	c = body_ok("{\"error\":{\"message\":\"model not loaded\"}}", &rc, msg, sizeof(msg));
	CHECK_INT(rc, ZCOR_EPROVIDER);
	CHECK(strstr(msg, "'model not loaded'") != NULL);
	/* invalid UTF-8 and control characters in what is quoted back */
	c = body_ok("\xff\xfe\x01 not json \xe4\xb8", &rc, msg, sizeof(msg));
	CHECK_INT(rc, ZCOR_EPROVIDER);
	(void)c;
}

static void error_message_forms(void)
{
	const char *a = "{\"error\":{\"message\":\"Incorrect API key\",\"type\":\"invalid_request_error\"}}";
	char *m = zc_llm_error_message(a, strlen(a));
	CHECK_STR(m, "Incorrect API key");
	free(m);
	m = zc_llm_error_message("{\"error\":\"rate limited\"}", 24);
	CHECK_STR(m, "rate limited");
	free(m);
	m = zc_llm_error_message("{\"detail\":\"Not Found\"}", 22);
	CHECK_STR(m, "Not Found");
	free(m);
	CHECK(zc_llm_error_message("<html>bad gateway</html>", 24) == NULL);
	CHECK(zc_llm_error_message("", 0) == NULL);
}

/* ---- config.json "provider" ------------------------------------------ */

static int check_doc(const char *text, struct zc_config *cfg, char *msg, size_t cap)
{
	json_t *doc = json_loads(text, 0, NULL);
	CHECK(doc != NULL);
	struct zc_err e = {0};
	int rc = zc_config_check(doc, cfg, &e);
	snprintf(msg, cap, "%s", e.msg);
	json_decref(doc);
	return rc;
}

static void config_provider_valid(void)
{
	struct zc_config c;
	char msg[1024];
	CHECK_INT(check_doc("{}", &c, msg, sizeof(msg)), ZCOR_OK);
	CHECK(!c.provider.enabled);
	CHECK_INT(check_doc("{\"provider\": null}", &c, msg, sizeof(msg)), ZCOR_OK);
	CHECK(!c.provider.enabled);
	CHECK_INT(check_doc("{\"provider\": {\"baseUrl\": \"https://api.example.com/v1/\", \"model\": \"m\"}}",
			    &c, msg, sizeof(msg)),
		  ZCOR_OK);
	CHECK(c.provider.enabled);
	CHECK_STR(c.provider.base_url, "https://api.example.com/v1");
	CHECK_STR(c.provider.model, "m");
	CHECK_STR(c.provider.api_key_env, "");
	CHECK_INT(c.provider.connect_timeout_ms, 10000);
	CHECK_INT(c.provider.timeout_ms, 60000);
	CHECK_INT(c.provider.max_retries, 3);
	CHECK_INT(c.provider.max_response_bytes, 4 << 20);
	CHECK_INT(check_doc("{\"provider\": {\"baseUrl\": \"http://127.0.0.1:8080/v1\", \"model\": \"qwen2.5:7b\", "
			    "\"apiKeyEnv\": \"OPENAI_API_KEY\", \"connectTimeoutMs\": 100, \"timeoutMs\": 600000, "
			    "\"maxRetries\": 0, \"maxResponseBytes\": 1024}}",
			    &c, msg, sizeof(msg)),
		  ZCOR_OK);
	CHECK_STR(c.provider.api_key_env, "OPENAI_API_KEY");
	CHECK_INT(c.provider.connect_timeout_ms, 100);
	CHECK_INT(c.provider.timeout_ms, 600000);
	CHECK_INT(c.provider.max_retries, 0);
	CHECK_INT(c.provider.max_response_bytes, 1024);
	json_t *j = zc_config_json(&c);
	CHECK_STR(json_string_value(json_object_get(json_object_get(j, "provider"), "apiKeyEnv")),
		  "OPENAI_API_KEY");
	CHECK_INT(json_integer_value(json_object_get(json_object_get(j, "provider"), "maxRetries")), 0);
	json_decref(j);
}

static void config_provider_invalid(void)
{
	static const struct {
		const char *doc, *needle;
	} bad[] = {
		{"{\"provider\": {\"baseUrl\": \"http://x/v1\", \"model\": \"m\", \"apiKey\": \"sk-1\"}}",
		 "apiKeyEnv"},
		{"{\"provider\": {\"baseUrl\": \"http://x/v1\", \"model\": \"m\", \"temperature\": 2.5}}",
		 "'provider.temperature'"},
		{"{\"provider\": {\"baseUrl\": \"http://x/v1\"}}", "'provider.model' is required"},
		{"{\"provider\": {\"model\": \"m\"}}", "'provider.baseUrl' is required"},
		{"{\"provider\": {\"baseUrl\": \"ftp://x/v1\", \"model\": \"m\"}}", "'provider.baseUrl'"},
		{"{\"provider\": {\"baseUrl\": \"http:///v1\", \"model\": \"m\"}}", "'provider.baseUrl'"},
		{"{\"provider\": {\"baseUrl\": \"http://x/v1?a=1\", \"model\": \"m\"}}", "'provider.baseUrl'"},
		{"{\"provider\": {\"baseUrl\": \"http://x y/v1\", \"model\": \"m\"}}", "'provider.baseUrl'"},
		{"{\"provider\": {\"baseUrl\": \"http://x/v1\", \"model\": \"\"}}", "'provider.model'"},
		{"{\"provider\": {\"baseUrl\": \"http://x/v1\", \"model\": \"m\", \"apiKeyEnv\": \"1KEY\"}}",
		 "'provider.apiKeyEnv'"},
		{"{\"provider\": {\"baseUrl\": \"http://x/v1\", \"model\": \"m\", \"apiKeyEnv\": \"A=B\"}}",
		 "'provider.apiKeyEnv'"},
		{"{\"provider\": {\"baseUrl\": \"http://x/v1\", \"model\": \"m\", \"connectTimeoutMs\": 99}}",
		 "'provider.connectTimeoutMs'"},
		{"{\"provider\": {\"baseUrl\": \"http://x/v1\", \"model\": \"m\", \"timeoutMs\": 600001}}",
		 "'provider.timeoutMs'"},
		{"{\"provider\": {\"baseUrl\": \"http://x/v1\", \"model\": \"m\", \"maxRetries\": 11}}",
		 "'provider.maxRetries'"},
		{"{\"provider\": {\"baseUrl\": \"http://x/v1\", \"model\": \"m\", \"maxRetries\": 1.5}}",
		 "'provider.maxRetries'"},
		{"{\"provider\": {\"baseUrl\": \"http://x/v1\", \"model\": \"m\", \"maxResponseBytes\": 1023}}",
		 "'provider.maxResponseBytes'"},
		{"{\"provider\": \"http://x/v1\"}", "'provider' must be an object"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct zc_config c;
		char msg[1024];
		int rc = check_doc(bad[i].doc, &c, msg, sizeof(msg));
		CHECK_INT(rc, ZCOR_EINVAL);
		if (!strstr(msg, bad[i].needle)) {
			fprintf(stderr, "case %zu: message '%s' lacks '%s'\n", i, msg, bad[i].needle);
			t_failures++;
		}
	}
}

/* ---- config.json "worlds.qq" (issue 15) ------------------------------ */

static void config_qq_valid(void)
{
	struct zc_config c;
	char msg[1024];
	CHECK_INT(check_doc("{}", &c, msg, sizeof(msg)), ZCOR_OK);
	CHECK(!c.qq.enabled);
	CHECK_INT(c.qq.mode, ZC_QQ_MODE_FORWARD);
	CHECK_STR(c.qq.url, "ws://127.0.0.1:3001/");
	CHECK_STR(c.qq.path, "/onebot/v11/ws");
	CHECK_STR(c.qq.token_env, "NAPCAT_TOKEN");
	CHECK_INT(c.qq.quiet_ms, 1500);
	CHECK_INT(c.qq.max_wait_ms, 6000);
	CHECK_INT(c.qq.replies_per_minute, 6);
	CHECK_INT(c.qq.max_concurrent_turns, 4);
	CHECK_INT(c.qq.media_max_bytes, 10485760);
	CHECK(c.qq.probability == 0);
	CHECK_INT(c.qq.cooldown_s, 600);
	CHECK_STR(c.qq.quiet_hours, "");
	CHECK_INT(check_doc("{\"botId\": \"3000000001\", \"worlds\": {\"qq\": {\"enabled\": true, \"mode\": "
			    "\"reverse\", \"url\": \"ws://napcat:3001/\", \"path\": \"/ob\", \"accessTokenEnv\": "
			    "\"QQ_TOKEN\", \"names\": [\"小钟\", \"zhong\"], \"quietMs\": 0, \"maxWaitMs\": 100, "
			    "\"repliesPerMinute\": 1, \"maxConcurrentTurns\": 1, \"imageMode\": \"file\", "
			    "\"proactive\": {\"probability\": 0.25, \"cooldownS\": 0, \"quietHours\": "
			    "\"23:30-07:00\"}, \"apology\": \"抱歉\"}}}",
			    &c, msg, sizeof(msg)),
		  ZCOR_OK);
	CHECK(c.qq.enabled);
	CHECK_INT(c.qq.mode, ZC_QQ_MODE_REVERSE);
	CHECK_STR(c.qq.url, "ws://napcat:3001/");
	CHECK_STR(c.qq.path, "/ob");
	CHECK_STR(c.qq.token_env, "QQ_TOKEN");
	CHECK_INT(c.qq.n_names, 2);
	CHECK_STR(c.qq.names[0], "小钟");
	CHECK_INT(c.qq.image_mode, ZC_QQ_IMAGE_FILE);
	CHECK(c.qq.probability == 0.25);
	CHECK_STR(c.qq.quiet_hours, "23:30-07:00");
	CHECK_STR(c.qq.apology, "抱歉");
	json_t *j = zc_config_json(&c);
	json_t *qq = json_object_get(json_object_get(j, "worlds"), "qq");
	CHECK(json_is_true(json_object_get(qq, "enabled")));
	CHECK_STR(json_string_value(json_object_get(qq, "mode")), "reverse");
	CHECK_STR(json_string_value(json_array_get(json_object_get(qq, "names"), 1)), "zhong");
	CHECK_STR(json_string_value(json_object_get(json_object_get(qq, "proactive"), "quietHours")),
		  "23:30-07:00");
	CHECK_STR(json_string_value(json_object_get(qq, "apology")), "抱歉");
	/* the JSON of the settings is itself a valid config */
	struct zc_config back;
	struct zc_err e = {0};
	CHECK_INT(zc_config_check(j, &back, &e), ZCOR_OK);
	CHECK_STR(back.qq.names[1], "zhong");
	json_decref(j);
	/* the apology row of the console still names its own key */
	CHECK_INT(check_doc("{\"worlds\": {\"console\": {\"apology\": 1}}}", &c, msg, sizeof(msg)),
		  ZCOR_EINVAL);
	CHECK_HAS(msg, "'worlds.console.apology'");
}

static void config_qq_invalid(void)
{
#define QQ(body) "{\"worlds\": {\"qq\": {" body "}}}"
	static const struct {
		const char *doc, *needle;
	} bad[] = {
		{QQ("\"mode\": \"both\""), "'worlds.qq.mode' must be \"forward\""},
		{QQ("\"enabled\": 1"), "'worlds.qq.enabled' must be true or false"},
		{QQ("\"url\": \"wss://napcat:3001/\""), "'worlds.qq.url'"},
		{QQ("\"url\": \"http://napcat:3001/\""), "'worlds.qq.url'"},
		{QQ("\"url\": \"ws://\""), "'worlds.qq.url'"},
		{QQ("\"url\": \"ws:///x\""), "'worlds.qq.url'"},
		{QQ("\"url\": \"ws://a b/\""), "'worlds.qq.url'"},
		{QQ("\"path\": \"onebot\""), "'worlds.qq.path'"},
		{QQ("\"path\": \"/a/../b\""), "'worlds.qq.path'"},
		{QQ("\"path\": \"/a b\""), "'worlds.qq.path'"},
		{QQ("\"path\": \"/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\""),
		 "'worlds.qq.path'"},
		{QQ("\"accessTokenEnv\": \"NAPCAT-TOKEN\""), "'worlds.qq.accessTokenEnv'"},
		{QQ("\"accessTokenEnv\": \"\""), "'worlds.qq.accessTokenEnv'"},
		{QQ("\"names\": \"小钟\""), "'worlds.qq.names' must be an array"},
		{QQ("\"names\": [\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\",\"i\",\"j\",\"k\",\"l\",\"m\","
		    "\"n\",\"o\",\"p\",\"q\"]"),
		 "'worlds.qq.names' must be an array"},
		{QQ("\"names\": [\"小钟\", \"\"]"), "'worlds.qq.names[1]'"},
		{QQ("\"names\": [\"一二三四五六七八九十一二三四五六七八九十一二三四五六七八九十一二三\"]"),
		 "'worlds.qq.names[0]'"},
		{QQ("\"names\": [7]"), "'worlds.qq.names[0]'"},
		{QQ("\"names\": [\"a\\nb\"]"), "'worlds.qq.names[0]'"},
		{QQ("\"quietMs\": 60001"), "'worlds.qq.quietMs' must be an integer from 0"},
		{QQ("\"quietMs\": -1"), "'worlds.qq.quietMs'"},
		{QQ("\"maxWaitMs\": 600001"), "'worlds.qq.maxWaitMs'"},
		{QQ("\"actionTimeoutMs\": 99"), "'worlds.qq.actionTimeoutMs'"},
		{QQ("\"reconnectMinMs\": 99"), "'worlds.qq.reconnectMinMs'"},
		{QQ("\"reconnectMaxMs\": 999"), "'worlds.qq.reconnectMaxMs'"},
		{QQ("\"repliesPerMinute\": 0"), "'worlds.qq.repliesPerMinute'"},
		{QQ("\"maxConcurrentTurns\": 65"), "'worlds.qq.maxConcurrentTurns'"},
		{QQ("\"replyMaxChars\": 10"), "'worlds.qq.replyMaxChars'"},
		{QQ("\"imageMode\": \"url\""), "'worlds.qq.imageMode' must be \"base64\""},
		{QQ("\"mediaMaxBytes\": 1023"), "'worlds.qq.mediaMaxBytes'"},
		{QQ("\"mediaTimeoutMs\": 100"), "'worlds.qq.mediaTimeoutMs'"},
		{QQ("\"pipelineLogging\": 1"), "'worlds.qq.pipelineLogging'"},
		{QQ("\"proactive\": 0.5"), "'worlds.qq.proactive' must be an object"},
		{QQ("\"proactive\": {\"probability\": 1.5}"), "'worlds.qq.proactive.probability'"},
		{QQ("\"proactive\": {\"probability\": -0.1}"), "'worlds.qq.proactive.probability'"},
		{QQ("\"proactive\": {\"cooldownS\": 86401}"), "'worlds.qq.proactive.cooldownS'"},
		{QQ("\"proactive\": {\"quietHours\": \"0:00-8:00\"}"), "'worlds.qq.proactive.quietHours'"},
		{QQ("\"proactive\": {\"quietHours\": \"24:00-08:00\"}"), "'worlds.qq.proactive.quietHours'"},
		{QQ("\"proactive\": {\"quietHours\": \"00:60-08:00\"}"), "'worlds.qq.proactive.quietHours'"},
		{QQ("\"proactive\": {\"quietHours\": \"00:00~08:00\"}"), "'worlds.qq.proactive.quietHours'"},
		{QQ("\"proactive\": {\"chance\": 1}"), "unknown key 'worlds.qq.proactive.chance'"},
		{QQ("\"apology\": 5"), "'worlds.qq.apology'"},
		{QQ("\"token\": \"secret\""), "unknown key 'worlds.qq.token'"},
		{"{\"worlds\": {\"qq\": true}}", "'worlds.qq' must be an object"},
	};
#undef QQ
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct zc_config c;
		char msg[1024];
		int rc = check_doc(bad[i].doc, &c, msg, sizeof(msg));
		CHECK_INT(rc, ZCOR_EINVAL);
		if (!strstr(msg, bad[i].needle)) {
			fprintf(stderr, "case %zu: message '%s' lacks '%s'\n", i, msg, bad[i].needle);
			t_failures++;
		}
	}
}

/* ---- which provider search uses ----------------------------------------- */

static void write_config(const char *dir, const char *text)
{
	char path[600];
	snprintf(path, sizeof(path), "%s/config.json", dir);
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
}

struct scripted {
	char answer[200];
	int calls;
};

static int scripted(void *ud, const char *system, const char *user, char **reply, char **errmsg)
{
	struct scripted *s = ud;
	s->calls++;
	*reply = strdup(s->answer);
	return 0;
}

static void search_provider_precedence(void)
{
	const char *dir = t_tmpdir();
	/* a config provider nobody listens on (port 9 is discard; refused) */
	write_config(dir, "{\"provider\": {\"baseUrl\": \"http://127.0.0.1:9/v1\", \"model\": \"m\", "
			  "\"maxRetries\": 0, \"timeoutMs\": 2000, \"connectTimeoutMs\": 500}}\n");
	zcor *z = t_open_dir(dir);
	json_t *w = t_call(z, NULL, "zcor_memory_write", "{\"title\":\"咖啡店\",\"content\":\"东门\"}");
	struct scripted s = {"", 0};
	snprintf(s.answer, sizeof(s.answer), "{\"ids\":[\"%s\"]}", t_str(w, "node.id"));

	struct zcor_provider p = {scripted, &s};
	zcor_set_provider(z, &p); /* explicit wins over config.json */
	json_t *r = t_call(z, NULL, "zcor_memory_search", "{\"keywords\":[\"咖啡\"]}");
	CHECK_INT(s.calls, 1);
	CHECK_STR(t_str(r, "items.0.id"), t_str(w, "node.id"));
	json_decref(r);

	zcor_set_provider(z, NULL); /* back to config.json's: nothing listens */
	r = t_call(z, NULL, "zcor_memory_search", "{\"keywords\":[\"咖啡\"]}");
	CHECK_STR(t_errcode(r), "provider_error");
	CHECK(t_errmsg(r) && strstr(t_errmsg(r), "127.0.0.1:9"));
	json_decref(r);

	/* an invalid edit keeps the last good provider and warns */
	write_config(dir, "{\"provider\": {\"baseUrl\": \"http://127.0.0.1:9/v1\", \"model\": \"m\", "
			  "\"apiKey\": \"sk-secret\"}}\n");
	char *cj = NULL;
	zcor_config_json(z, &cj);
	CHECK(strstr(cj, "apiKeyEnv") && strstr(cj, "\"warning\""));
	CHECK(strstr(cj, "sk-secret") == NULL);
	CHECK(strstr(cj, "127.0.0.1:9") != NULL);
	zcor_free(cj);

	write_config(dir, "{}\n");
	r = t_call(z, NULL, "zcor_memory_search", "{\"keywords\":[\"咖啡\"]}");
	CHECK_STR(t_errcode(r), "no_provider");
	json_decref(r);
	json_decref(w);
	zcor_close(z);
}

static void config_set_provider(void)
{
	zcor *z = t_open();
	CHECK_INT(zcor_config_set(z, "{\"provider\": {\"baseUrl\": \"http://h/v1\", \"apiKey\": \"k\"}}"),
		  ZCOR_EINVAL);
	CHECK(strstr(zcor_errmsg(z), "apiKeyEnv"));
	CHECK_INT(zcor_config_set(z, "{\"provider\": {\"baseUrl\": \"http://h/v1\", \"model\": \"a\"}}"),
		  ZCOR_OK);
	CHECK_INT(zcor_config_set(z, "{\"provider\": {\"model\": \"b\"}}"), ZCOR_OK);
	char *cj = NULL;
	zcor_config_json(z, &cj);
	CHECK(strstr(cj, "\"model\":\"b\"") && strstr(cj, "http://h/v1"));
	zcor_free(cj);
	CHECK_INT(zcor_config_set(z, "{\"provider\": null}"), ZCOR_OK);
	zcor_config_json(z, &cj);
	CHECK(strstr(cj, "\"provider\":null") != NULL);
	zcor_free(cj);
	zcor_close(z);
}

const struct t_case t_cases[] = {
	{"retry_after_seconds", retry_after_seconds},
	{"retry_after_http_date", retry_after_http_date},
	{"retry_after_garbage", retry_after_garbage},
	{"body_plain_and_keepalive", body_plain_and_keepalive},
	{"body_sse_stream", body_sse_stream},
	{"body_broken", body_broken},
	{"error_message_forms", error_message_forms},
	{"config_provider_valid", config_provider_valid},
	{"config_provider_invalid", config_provider_invalid},
	{"config_qq_valid", config_qq_valid},
	{"config_qq_invalid", config_qq_invalid},
	{"search_provider_precedence", search_provider_precedence},
	{"config_set_provider", config_set_provider},
	{0},
};
