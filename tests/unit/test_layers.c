/*
 * test_layers.c — issue 13, item 2 (layers own their state, config as a
 * table) and item 5 (one watched file): base/watch.h's states and last
 * good copy, the config table's generated checker and JSON, and the LLM
 * layer's choice of provider.
 */
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/fs.h"
#include "base/watch.h"
#include "harness.h"
#include "llm/llm.h"
#include "memory/config.h"

static int want_obj(void *ud, const json_t *doc, struct zc_err *e)
{
	(*(int *)ud)++;
	return json_is_object(doc) && !json_object_get(doc, "bad")
		       ? ZCOR_OK
		       : zc_fail(e, ZCOR_EINVAL, "'bad' is not allowed");
}

static void put(const char *path, const char *text)
{
	struct zc_err e = {0};
	/* a different size each time: the watch must notice within one mtime tick */
	CHECK_INT(zc_write_file_atomic(path, text, strlen(text), &e), ZCOR_OK);
}

static void watch_states(void)
{
	char *path = zc_path_join(t_tmpdir(), "w.json");
	struct zc_watch w;
	zc_watch_init(&w, path, "w.json", 4096, 1);
	struct zc_err e = {0};
	json_t *doc = NULL;
	int checks = 0;
	CHECK_INT(zc_watch_poll(&w, want_obj, &checks, &doc, &e), ZC_WATCH_MISSING);
	put(path, "{\"a\": 1}");
	CHECK_INT(zc_watch_poll(&w, want_obj, &checks, &doc, &e), ZC_WATCH_LOADED);
	CHECK_INT(json_integer_value(json_object_get(doc, "a")), 1);
	json_decref(doc);
	CHECK_INT(zc_watch_poll(&w, want_obj, &checks, &doc, &e), ZC_WATCH_SAME);
	CHECK_INT(checks, 1); /* unchanged: not read again */
	put(path, "{\"bad\": true}");
	CHECK_INT(zc_watch_poll(&w, want_obj, &checks, &doc, &e), ZC_WATCH_BAD);
	CHECK(doc == NULL);
	CHECK_HAS(e.msg, "'bad' is not allowed");
	put(path, "{\"a\": 1");
	CHECK_INT(zc_watch_poll(&w, want_obj, &checks, &doc, &e), ZC_WATCH_BAD);
	CHECK_HAS(e.msg, "w.json");
	/* the copy beside it is the last valid version */
	CHECK_INT(zc_watch_last_good(&w, want_obj, &checks, &doc, &e), ZCOR_OK);
	CHECK_INT(json_integer_value(json_object_get(doc, "a")), 1);
	json_decref(doc);
	CHECK_INT(zc_watch_write(&w, "{\"a\": 22}", 9, &e), ZCOR_OK);
	CHECK_INT(zc_watch_poll(&w, want_obj, &checks, &doc, &e), ZC_WATCH_SAME); /* own write */
	CHECK_INT(zc_watch_last_good(&w, want_obj, &checks, &doc, &e), ZCOR_OK);
	CHECK_INT(json_integer_value(json_object_get(doc, "a")), 22);
	json_decref(doc);
	CHECK_INT(unlink(path), 0);
	CHECK_INT(zc_watch_poll(&w, want_obj, &checks, &doc, &e), ZC_WATCH_REMOVED);
	CHECK_INT(zc_watch_poll(&w, want_obj, &checks, &doc, &e), ZC_WATCH_MISSING);
	zc_watch_release(&w);
	zc_watch_release(NULL);
	zc_free(path);
}

/* A rewrite that keeps the file's identity — same inode, same size, the
 * same mtime, as a rename reusing the freed inode within one tick of the
 * coarse file clock does — is still seen while the stat is racy (within a
 * second of the mtime): the bytes decide. Without it a handle would merge
 * a setting into a config.json it had not re-read. */
static void issue13_watch_racy_rewrite_same_identity(void)
{
	char *path = zc_path_join(t_tmpdir(), "racy.json");
	struct zc_watch w;
	zc_watch_init(&w, path, "racy.json", 4096, 0);
	struct zc_err e = {0};
	json_t *doc = NULL;
	int checks = 0;
	put(path, "{\"a\": 1}");
	CHECK_INT(zc_watch_poll(&w, want_obj, &checks, &doc, &e), ZC_WATCH_LOADED);
	json_decref(doc);
	struct stat st;
	CHECK_INT(stat(path, &st), 0);
	/* in place, same length, then the old mtime back */
	int fd = open(path, O_WRONLY);
	CHECK(fd >= 0);
	CHECK_INT((int)pwrite(fd, "{\"a\": 2}", 8, 0), 8);
	close(fd);
	struct timespec times[2] = {st.st_atim, st.st_mtim};
	CHECK_INT(utimensat(AT_FDCWD, path, times, 0), 0);
	struct stat st2;
	CHECK_INT(stat(path, &st2), 0);
	CHECK(st2.st_ino == st.st_ino && st2.st_size == st.st_size &&
	      st2.st_mtim.tv_nsec == st.st_mtim.tv_nsec);
	CHECK_INT(zc_watch_poll(&w, want_obj, &checks, &doc, &e), ZC_WATCH_LOADED);
	CHECK_INT(json_integer_value(json_object_get(doc, "a")), 2);
	json_decref(doc);
	/* the same bytes again: not loaded again, and not checked again */
	int before = checks;
	CHECK_INT(zc_watch_poll(&w, want_obj, &checks, &doc, &e), ZC_WATCH_SAME);
	CHECK_INT(checks, before);
	zc_watch_release(&w);
	zc_free(path);
}

/* Without keep_copy (synonyms.json) nothing is written beside the file. */
static void watch_no_copy(void)
{
	char *path = zc_path_join(t_tmpdir(), "s.json");
	struct zc_watch w;
	zc_watch_init(&w, path, "s.json", 4096, 0);
	struct zc_err e = {0};
	json_t *doc = NULL;
	int checks = 0;
	put(path, "{}");
	CHECK_INT(zc_watch_poll(&w, want_obj, &checks, &doc, &e), ZC_WATCH_LOADED);
	json_decref(doc);
	char *copy = zc_path_join(t_tmpdir(), "s.json" ZC_WATCH_LAST_GOOD_SUFFIX);
	CHECK(access(copy, F_OK) != 0);
	CHECK(zc_watch_last_good(&w, want_obj, &checks, &doc, &e) != ZCOR_OK);
	zc_free(copy);
	zc_watch_release(&w);
	zc_free(path);
}

static int check_text(const char *text, struct zc_config *c, struct zc_err *e)
{
	json_t *doc = json_loads(text, 0, NULL);
	int rc = zc_config_check(doc, c, e);
	json_decref(doc);
	return rc;
}

/* Every row names its layer and help; the defaults of the table are the
 * documented ones (docs/FORMATS.md), as zc_config_json shows them. */
static void config_table_rows(void)
{
	size_t n = 0;
	for (const struct zc_conf_row *r = zc_conf_rows; r->name; r++, n++) {
		CHECK(r->layer && *r->layer);
		CHECK(r->help && *r->help);
		for (const struct zc_conf_row *q = zc_conf_rows; q != r; q++)
			CHECK(strcmp(q->name, r->name) != 0);
		if (r->type == ZC_CONF_STRING)
			CHECK(r->check != NULL);
	}
	CHECK(n >= 20);
	struct zc_config c;
	struct zc_err e = {0};
	CHECK_INT(check_text("{}", &c, &e), ZCOR_OK);
	json_t *j = zc_config_json(&c);
	char *s = json_dumps(j, JSON_COMPACT);
	CHECK_STR(s, "{\"recallChars\":6000,\"recall\":{\"profile\":\"scored\",\"weights\":\"default\"},\"relationships\":true,"
		     "\"skills\":{\"projectRoot\":\"\"},\"provider\":null,\"wiki\":{\"baseUrl\":\"https://zh.moegirl.org.cn/api.php\",\"timeoutMs\":8000,\"maxBytes\":1048576},"
		     "\"botId\":null,\"admission\":{\"privateChats\":true},"
		     "\"mediaCacheMax\":200,\"dialogueChars\":12000,\"ambientMessages\":40,\"turn\":{\"maxSteps\":8,\"deadlineMs\":120000,\"toolTimeoutMs\":30000,\"waitMs\":60000},\"worlds\":{\"console\":{},"
		     "\"qq\":{\"enabled\":false,\"mode\":\"forward\",\"url\":\"ws://127.0.0.1:3001/\",\"path\":\"/onebot/v11/ws\","
		     "\"accessTokenEnv\":\"NAPCAT_TOKEN\",\"names\":[],\"quietMs\":1500,\"maxWaitMs\":6000,\"actionTimeoutMs\":10000,"
		     "\"reconnectMinMs\":1000,\"reconnectMaxMs\":60000,\"repliesPerMinute\":6,\"maxConcurrentTurns\":4,"
		     "\"replyMaxChars\":1500,\"imageMode\":\"base64\",\"mediaMaxBytes\":10485760,\"mediaTimeoutMs\":10000,\"pipelineLogging\":false,"
		     "\"proactive\":{\"probability\":0.0,\"cooldownS\":600,\"quietHours\":\"\"},\"apology\":\"\"}},"
		     "\"memoryFileMaxBytes\":32768,\"memoryArchiveRatio\":0.75,"
		     "\"viewMaxBytes\":262144,\"mirror\":false,"
		     "\"memory\":true,\"digestAtHour\":4,\"digestMinLines\":20,\"digestMaxChars\":60000,"
		     "\"digestTimeoutMs\":300000,\"timeZone\":null,\"digestCatchUp\":true}");
	free(s);
	json_decref(j);
}

/* The generated messages are the ones the hand-written checks gave. */
static void config_table_messages(void)
{
	static const struct {
		const char *doc, *msg;
	} cases[] = {
		{"{\"x\": 1}", "unknown key 'x'; known: recallChars, recall.profile, recall.weights, relationships, "
			       "skills, provider, wiki, botId, admission, mediaCacheMax, dialogueChars, ambientMessages, turn, worlds, memoryFileMaxBytes, "
			       "memoryArchiveRatio, viewMaxBytes, mirror, memory, digestAtHour, digestMinLines, "
			       "digestMaxChars, digestTimeoutMs, timeZone, digestCatchUp"},
		{"{\"recallChars\": -1}", "'recallChars' must be an integer from 0 (auto-recall off) to 200000"},
		{"{\"recall\": 1}", "'recall' must be an object such as {\"profile\": \"scored\"}"},
		{"{\"recall\": {\"x\": 1}}", "unknown key 'recall.x'; known: recall.profile, recall.weights"},
		{"{\"recall\": {\"profile\": \"z\"}}",
		 "'recall.profile' must be \"scored\" (seed 003, the default) or \"zcor\" (seed 000)"},
		{"{\"relationships\": 1}", "'relationships' must be true or false"},
		{"{\"mirror\": 1}",
		 "'mirror' must be true or false (keep mirror/ current with the views as files)"},
		{"{\"viewMaxBytes\": 1}", "'viewMaxBytes' must be an integer from 1024 to 16777216 (bytes)"},
		{"{\"memoryArchiveRatio\": 2}",
		 "'memoryArchiveRatio' must be a number from 0.1 to 1 (the share of memoryFileMaxBytes "
		 "above which old entries move to the archive)"},
		{"{\"mediaCacheMax\": 0}",
		 "'mediaCacheMax' must be an integer from 1 to 100000 (inbound media files kept; default 200)"},
		{"{\"provider\": {\"model\": \"m\"}}", "'provider.baseUrl' is required when 'provider' is set"},
		{"{\"provider\": {\"baseUrl\": \"http://a\"}}",
		 "'provider.model' is required when 'provider' is set"},
		{"{\"provider\": {\"y\": 1}}",
		 "unknown key 'provider.y'; known: provider.baseUrl, provider.model, provider.apiKeyEnv, "
		 "provider.connectTimeoutMs, provider.timeoutMs, provider.maxRetries, "
		 "provider.maxResponseBytes, provider.temperature"},
		{"{\"provider\": {\"baseUrl\": \"http://a\", \"model\": \"m\", \"temperature\": 3}}",
		 "'provider.temperature' must be a number from 0 to 2 (0 to 2; 0 is the most deterministic)"},
		{"{\"provider\": {\"timeoutMs\": 1}}",
		 "'provider.timeoutMs' must be an integer from 1000 to 600000 (milliseconds, retries included)"},
		{"{\"provider\": {\"maxRetries\": 11}}", "'provider.maxRetries' must be an integer from 0 to 10"},
		{"{\"admission\": {\"z\": 1}}",
		 "unknown key 'admission.z'; known: admission.privateChats, admission.groups, "
		 "admission.privates"},
		{"{\"admission\": {\"privateChats\": 1}}", "'admission.privateChats' must be true or false"},
		{"{\"admission\": {\"groups\": [1]}}",
		 "'admission.groups[0]' must be an id string (letters, digits, _ - ., at most 64), such as "
		 "\"100000001\""},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct zc_config c;
		struct zc_err e = {0};
		CHECK_INT(check_text(cases[i].doc, &c, &e), ZCOR_EINVAL);
		CHECK_STR(e.msg, cases[i].msg);
	}
	struct zc_config c;
	struct zc_err e = {0};
	CHECK_INT(check_text("{\"recall\": {\"profile\": \"zcor\"}, \"provider\": {\"baseUrl\": "
			     "\"http://h/v1\", \"model\": \"m\", \"maxRetries\": 7}, \"botId\": \"b1\", "
			     "\"memoryArchiveRatio\": 1, \"admission\": {\"groups\": null}}",
			     &c, &e),
		  ZCOR_OK);
	CHECK_INT(c.profile, ZC_PROFILE_ZCOR);
	CHECK_INT(c.provider.enabled, 1);
	CHECK_INT(c.provider.max_retries, 7);
	CHECK_STR(c.bot_id, "b1");
	CHECK(c.memory_archive_ratio == 1.0);
}

/* The file's view: the allow-lists from the document, the warning. */
static void confile_json_lists(void)
{
	char *path = zc_path_join(t_tmpdir(), "config.json");
	put(path, "{\"admission\": {\"groups\": [\"1\"]}}");
	struct zc_confile cf;
	zc_config_init(&cf, path);
	zc_config_refresh(&cf);
	json_t *j = zc_confile_json(&cf);
	char *s = json_dumps(json_object_get(j, "admission"), JSON_COMPACT);
	CHECK_STR(s, "{\"privateChats\":true,\"groups\":[\"1\"],\"privates\":null}");
	CHECK(json_object_get(j, "warning") == NULL);
	free(s);
	json_decref(j);
	put(path, "{\"recallChars\": \"x\"}");
	zc_config_refresh(&cf);
	j = zc_confile_json(&cf);
	CHECK_HAS(json_string_value(json_object_get(j, "warning")), "the last good settings stay in use");
	CHECK_INT(json_array_size(json_object_get(json_object_get(j, "admission"), "groups")), 1);
	json_decref(j);
	zc_config_release(&cf);
	zc_free(path);
}

static int fake(void *ud, const char *system, const char *user, char **reply, char **errmsg)
{
	(void)ud, (void)system, (void)user, (void)reply, (void)errmsg;
	return 0;
}

/* The LLM layer's choice: explicit, else config.json's, else fallback. */
static void llm_provider_order(void)
{
	char *path = zc_path_join(t_tmpdir(), "llm-config.json");
	struct zc_confile cf;
	zc_config_init(&cf, path);
	struct zc_llm l;
	zc_llm_open(&l, &cf);
	CHECK(zc_llm_provider(&l) == NULL);
	int a = 1, b = 2;
	struct zcor_provider fb = {fake, &a}, ex = {fake, &b};
	zc_llm_set_fallback(&l, &fb);
	CHECK(zc_llm_provider(&l)->ud == &a);
	put(path, "{\"provider\": {\"baseUrl\": \"http://127.0.0.1:9/v1\", \"model\": \"m\"}}");
	CHECK(zc_llm_provider(&l) == &l.from_config);
	zc_llm_set_provider(&l, &ex);
	CHECK(zc_llm_provider(&l)->ud == &b);
	zc_llm_set_provider(&l, NULL);
	CHECK(zc_llm_provider(&l) == &l.from_config);
	zc_llm_close(&l);
	zc_llm_close(NULL);
	zc_config_release(&cf);
	zc_free(path);
}

const struct t_case t_cases[] = {
	{"watch_states", watch_states},
	{"watch_no_copy", watch_no_copy},
	{"issue13_watch_racy_rewrite_same_identity", issue13_watch_racy_rewrite_same_identity},
	{"config_table_rows", config_table_rows},
	{"config_table_messages", config_table_messages},
	{"confile_json_lists", confile_json_lists},
	{"llm_provider_order", llm_provider_order},
	{0},
};
