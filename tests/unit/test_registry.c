/*
 * test_registry.c — the tool registry as data (issue 14): every row has a
 * family, a valid audience and exactly one handler; zc_tools_for is the
 * one list per audience (the model's under the config, the digest
 * agent's, the host plane's); a call outside the caller's audience is
 * refused and runs nothing; a plain-function (`fn`) row runs outside any
 * transaction and still leaves a history record. The dispatch of an `fn`
 * row is tested with a row built here and handed to zc_tool_run (the
 * `skill` row itself is test_skills.c's; the wiki lookup, an `fn` row, is
 * tested against a fake wiki in e2e/wiki.test.mjs).
 */
#include <string.h>

#include "harness.h"
#include "memory/memory.h"
#include "tools/tools.h"

static const char *const every_tool[] = {
	"zcor_memory_write", "zcor_memory_read", "zcor_memory_delete", "zcor_memory_children",
	"zcor_memory_trace", "zcor_memory_important", "zcor_memory_query", "zcor_memory_merge",
	"zcor_memory_supersede", "zcor_memory_history", "zcor_memory_backup", "zcor_memory_restore",
	"zcor_memory_search", "zcor_relationship_read", "zcor_relationship_query",
	"zcor_relationship_write", "zcor_relationship_delete", "zcor_synonyms_add", "qq_memory",
	"qq_save_sticker", "qq_rename_sticker", "skill", "qq_transcript", "wiki_lookup", NULL,
};

/* The names of l, comma-separated, for one comparison. */
static void names_of(const struct zc_tool_list *l, char *buf, size_t cap)
{
	size_t at = 0;
	buf[0] = 0;
	for (size_t i = 0; i < l->n && at < cap; i++)
		at += (size_t)snprintf(buf + at, cap - at, "%s%s", i ? "," : "", l->v[i]->name);
}

/* every_tool without the names that start with skip (NULL: none). */
static void expected(const char *skip, char *buf, size_t cap)
{
	size_t at = 0;
	buf[0] = 0;
	for (size_t i = 0; every_tool[i] && at < cap; i++)
		if (!skip || strncmp(every_tool[i], skip, strlen(skip)) != 0)
			at += (size_t)snprintf(buf + at, cap - at, "%s%s", at ? "," : "", every_tool[i]);
}

static void issue14_every_row_has_a_family_an_audience_and_one_handler(void)
{
	size_t n = 0;
	for (const struct zc_tool *t = zc_tools; t->name; t++, n++) {
		CHECK(t->family && (strcmp(t->family, "zcor") == 0 || strcmp(t->family, "qq") == 0 ||
				    strcmp(t->family, "wiki") == 0));
		/* the family is the name's prefix, but for seed 003's plain
		 * functions, which the seed names without one (skill) */
		if (!t->fn || strcmp(t->name, "skill") != 0)
			CHECK(t->family && strncmp(t->name, t->family, strlen(t->family)) == 0 &&
			      t->name[strlen(t->family)] == '_');
		CHECK(t->audience != 0);
		CHECK_INT(t->audience & ~ZC_AUD_EVERY, 0);
		CHECK((t->op != NULL) != (t->fn != NULL));
		if (t->op) /* the operation records the tool's own name in history */
			CHECK_STR(t->op->name, t->name);
		CHECK(t->title && t->desc_zh && t->desc_en);
		CHECK(json_is_object(zc_tool_schema(t)));
		CHECK(zc_tool_find(t->name) == t);
		CHECK(every_tool[n] && strcmp(every_tool[n], t->name) == 0);
	}
	CHECK(every_tool[n] == NULL);
	CHECK(n <= ZC_TOOLS_MAX);
}

static void issue14_one_list_per_audience(void)
{
	struct zc_config on = {0}, off = {0};
	on.relationships = 1;
	on.memory = off.memory = 1;
	struct zc_tool_list l;
	char got[4096], want[4096];
	/* the model, relationship memory on: every tool, in table order */
	zc_tools_for(ZC_AUD_MODEL, &on, "group:1", &l);
	names_of(&l, got, sizeof(got));
	expected(NULL, want, sizeof(want));
	CHECK_STR(got, want);
	/* off: the relationship tools are not offered */
	zc_tools_for(ZC_AUD_MODEL, &off, "group:1", &l);
	names_of(&l, got, sizeof(got));
	expected("zcor_relationship_", want, sizeof(want));
	CHECK_STR(got, want);
	/* no config to ask: every row of the audience */
	zc_tools_for(ZC_AUD_MODEL, NULL, NULL, &l);
	names_of(&l, got, sizeof(got));
	expected(NULL, want, sizeof(want));
	CHECK_STR(got, want);
	/* the host plane sees every tool whatever the config */
	zc_tools_for(ZC_AUD_HOST, &off, NULL, &l);
	names_of(&l, got, sizeof(got));
	expected(NULL, want, sizeof(want));
	CHECK_STR(got, want);
	/* the digest agent: seed 003's qq_memory, qq_transcript and skill, the
	 * moegirl skill's wiki_lookup (issue 16), and qq_save_sticker (seed
	 * 003: the digest agent writes STICKERS.md, collecting first) */
	CHECK_INT((long long)zc_tools_for(ZC_AUD_DIGEST, &on, "group:1", &l), 5);
	names_of(&l, got, sizeof(got));
	CHECK_STR(got, "qq_memory,qq_save_sticker,skill,qq_transcript,wiki_lookup");
	/* issue 16: "memory": false (seed 003's 关掉) takes the seed-003
	 * memory tools, the skills and the wiki from the model and the digest
	 * agent (the host plane keeps them) */
	struct zc_config nomem = on;
	nomem.memory = 0;
	CHECK_INT((long long)zc_tools_for(ZC_AUD_DIGEST, &nomem, "group:1", &l), 0);
	zc_tools_for(ZC_AUD_MODEL, &nomem, "group:1", &l);
	names_of(&l, got, sizeof(got));
	CHECK(strstr(got, "zcor_memory_write") && !strstr(got, "qq_") && !strstr(got, "skill") &&
	      !strstr(got, "wiki_lookup"));
	CHECK(zc_tool_visible(zc_tool_find("qq_memory"), ZC_AUD_HOST, &nomem, NULL));
	/* the single-row rule agrees with the list */
	CHECK(!zc_tool_visible(zc_tool_find("zcor_memory_write"), ZC_AUD_DIGEST, &on, "group:1"));
	CHECK(zc_tool_visible(zc_tool_find("zcor_relationship_read"), ZC_AUD_HOST, &off, NULL));
	CHECK(!zc_tool_visible(zc_tool_find("zcor_relationship_read"), ZC_AUD_MODEL, &off, NULL));
	/* who a caller is */
	struct zcor_ctx model = {ZCOR_ACTOR_MODEL, "group:1"}, digest = {ZCOR_ACTOR_DIGEST, "group:1"},
			ui = {ZCOR_ACTOR_UI, NULL}, cli = {ZCOR_ACTOR_CLI, NULL};
	CHECK_INT(zc_tool_audience_of(&model), ZC_AUD_MODEL);
	CHECK_INT(zc_tool_audience_of(&digest), ZC_AUD_DIGEST);
	CHECK_INT(zc_tool_audience_of(&ui), ZC_AUD_HOST);
	CHECK_INT(zc_tool_audience_of(&cli), ZC_AUD_HOST);
}

/* The public list is the registry's: the model's without ZCOR_TOOLS_ALL,
 * the host plane's with it. */
static void issue14_public_list_is_zc_tools_for(void)
{
	char *s = NULL;
	CHECK_INT(zcor_tools_json(NULL, ZCOR_TOOLS_ALL, &s), ZCOR_OK);
	json_t *list = json_loads(s, 0, NULL);
	zcor_free(s);
	CHECK(json_is_array(list));
	size_t i;
	json_t *t;
	json_array_foreach(list, i, t) CHECK(every_tool[i] && strcmp(every_tool[i], t_str(t, "name")) == 0);
	CHECK_INT((long long)json_array_size(list), (long long)(sizeof(every_tool) / sizeof(every_tool[0]) - 1));
	json_decref(list);
}

static long long nodes_of(zcor *z) { return t_sql_int(zcor_dir(z), "SELECT count(*) FROM nodes"); }

/* A caller outside a tool's audience: forbidden, nothing runs, the
 * refusal is recorded and names the caller's tools. */
static void issue14_call_outside_the_audience_is_refused(void)
{
	const char *dir = t_tmpdir();
	zcor *z = t_open_dir(dir);
	struct zcor_ctx digest = {ZCOR_ACTOR_DIGEST, "group:1"};
	char *out = NULL;
	int rc = zcor_tool_call(z, &digest, "zcor_memory_write", "{\"title\":\"t\",\"content\":\"c\"}", &out);
	CHECK_INT(rc, ZCOR_EFORBIDDEN);
	CHECK(out == NULL);
	CHECK_HAS(zcor_errjson(z), "'zcor_memory_write' is not offered to the digest agent");
	CHECK_HAS(zcor_errjson(z), "qq_memory, qq_save_sticker, skill, qq_transcript");
	CHECK_INT(nodes_of(z), 0);
	/* the digest agent's own tools run */
	rc = zcor_tool_call(z, &digest, "qq_transcript", "{\"action\":\"list\"}", &out);
	CHECK_INT(rc, ZCOR_OK);
	zcor_free(out);
	out = NULL;
	/* the same call from the host plane and from the model runs */
	struct zcor_ctx cli = {ZCOR_ACTOR_CLI, NULL}, model = {ZCOR_ACTOR_MODEL, "group:1"};
	CHECK_INT(zcor_tool_call(z, &cli, "zcor_memory_write", "{\"title\":\"t\",\"content\":\"c\"}", &out),
		  ZCOR_OK);
	zcor_free(out);
	out = NULL;
	CHECK_INT(zcor_tool_call(z, &model, "zcor_memory_write", "{\"title\":\"u\",\"content\":\"c\"}", &out),
		  ZCOR_OK);
	zcor_free(out);
	CHECK_INT(nodes_of(z), 2);
	zcor_close(z);
	/* the refusal is in history, as a failed call of the digest */
	CHECK_INT(t_sql_int(dir, "SELECT count(*) FROM history WHERE operation = "
					"'zcor_memory_write' AND actor = 'digest' AND status = 'error'"),
		  1);
}

/* ---- the fn handler kind ---------------------------------------------- */

struct seen_fn {
	int calls;
	int in_tx;
	const struct zcor_provider *provider;
	const char *conversation;
	long long n;
};
static struct seen_fn seen;

static int echo_fn(const struct zc_tool_env *env, json_t *args, json_t **out, struct zc_err *e)
{
	seen.calls++;
	seen.in_tx = env->m->store.in_tx;
	seen.provider = env->provider;
	seen.conversation = env->ctx->conversation;
	seen.n = json_integer_value(json_object_get(args, "n"));
	if (seen.n < 0)
		return zc_fail(e, ZCOR_ENOTFOUND, "no page %lld; ask for a page from 0", seen.n);
	if (seen.n == 0)
		return ZCOR_OK; /* no answer: {} */
	*out = json_pack("{s:I}", "twice", (json_int_t)(2 * seen.n));
	return ZCOR_OK;
}

static const struct zc_tool echo_row = {
	"zcor_test_echo", "zcor", "回声 / Echo", "回声", "Echo", "{\"type\":\"object\"}",
	ZC_AUD_MODEL, ZC_OFFER_ALWAYS, NULL, echo_fn, NULL,
};

static void issue14_fn_handler_runs_outside_a_transaction_with_a_read_record(void)
{
	struct zc_mem m;
	struct zc_err e = {0};
	const char *dir = t_tmpdir();
	const struct zcor_ctx ctx = {ZCOR_ACTOR_MODEL, "group:1"};
	const struct zcor_provider *provider = (const struct zcor_provider *)&seen; /* only compared */
	memset(&seen, 0, sizeof(seen));
	CHECK_INT(zc_mem_open(&m, dir, &e), ZCOR_OK);
	json_t *args = json_pack("{s:i}", "n", 21), *out = NULL;
	CHECK_INT(zc_tool_run(&m, &ctx, &echo_row, provider, NULL, NULL, args, &out, &e), ZCOR_OK);
	json_decref(args);
	CHECK_INT(seen.calls, 1);
	CHECK_INT(seen.in_tx, 0);
	CHECK(seen.provider == provider);
	CHECK_STR(seen.conversation, "group:1");
	CHECK_INT(t_int(out, "twice"), 42);
	json_decref(out);
	/* no answer is an empty object */
	args = json_pack("{s:i}", "n", 0);
	out = NULL;
	CHECK_INT(zc_tool_run(&m, &ctx, &echo_row, NULL, NULL, NULL, args, &out, &e), ZCOR_OK);
	CHECK(json_is_object(out) && json_object_size(out) == 0);
	json_decref(out);
	json_decref(args);
	/* a failure is the function's, and recorded */
	args = json_pack("{s:i}", "n", -1);
	out = NULL;
	CHECK_INT(zc_tool_run(&m, &ctx, &echo_row, NULL, NULL, NULL, args, &out, &e), ZCOR_ENOTFOUND);
	CHECK(out == NULL);
	CHECK_HAS(e.msg, "no page -1");
	json_decref(args);
	zc_mem_close(&m); /* writes the queued read records */
	CHECK_INT(t_sql_int(dir, "SELECT count(*) FROM history WHERE operation = 'zcor_test_echo' "
				 "AND status = 'ok' AND actor = 'model' AND conversation = 'group:1'"),
		  2);
	CHECK_INT(t_sql_int(dir, "SELECT count(*) FROM history WHERE operation = 'zcor_test_echo' "
				 "AND status = 'error' AND error LIKE '%no page -1%'"),
		  1);
}

const struct t_case t_cases[] = {
	{"issue14_every_row_has_a_family_an_audience_and_one_handler",
	 issue14_every_row_has_a_family_an_audience_and_one_handler},
	{"issue14_one_list_per_audience", issue14_one_list_per_audience},
	{"issue14_public_list_is_zc_tools_for", issue14_public_list_is_zc_tools_for},
	{"issue14_call_outside_the_audience_is_refused", issue14_call_outside_the_audience_is_refused},
	{"issue14_fn_handler_runs_outside_a_transaction_with_a_read_record",
	 issue14_fn_handler_runs_outside_a_transaction_with_a_read_record},
	{0},
};
