/*
 * test_query_text.c — issue 19: zcor_memory_query writes its answer as
 * text straight from the rows (zc_node_text_from_row) instead of a tree
 * per hit dumped. The answer must be what it was, byte for byte: the
 * page of trees (zc_node_from_row, zc_page_result) as jansson dumps them,
 * on a store whose rows hold every kind of value (escapes, NULLs, bad
 * UTF-8 from an old import, merged and superseded rows, attrs, hits);
 * and a caller that takes a tree (zc_mem_run) receives the same tree.
 */
#define _GNU_SOURCE
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "memory/memory.h"
#include "harness.h"

struct zc_mem *zc_bench_mem(zcor *z);
/* zcor.c: the handle's lock, held while this file uses its connection
 * itself (the read-record flusher thread shares it) */
void zc_bench_lock(zcor *z, int on);

/* The answer as it was built before: a tree per row, the page, dumped by
 * jansson itself. */
static char *expected(zcor *z, const char *where, long long limit, long long offset)
{
	zc_bench_lock(z, 1);
	sqlite3 *db = zc_bench_mem(z)->store.db;
	char *sql = NULL, *count = NULL;
	CHECK(asprintf(&sql,
		       "SELECT " ZC_NODE_COLS " FROM nodes WHERE %s ORDER BY updated_at DESC, seq DESC "
		       "LIMIT %lld OFFSET %lld",
		       where, limit, offset) > 0);
	CHECK(asprintf(&count, "SELECT count(*) FROM nodes WHERE %s", where) > 0);
	sqlite3_stmt *st = NULL;
	CHECK_INT(sqlite3_prepare_v2(db, count, -1, &st, NULL), SQLITE_OK);
	CHECK_INT(sqlite3_step(st), SQLITE_ROW);
	long long total = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	CHECK_INT(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	json_t *items = json_array();
	while (sqlite3_step(st) == SQLITE_ROW)
		json_array_append_new(items, zc_node_from_row(st));
	sqlite3_finalize(st);
	json_t *page = zc_page_result(items, total, offset);
	json_decref(items);
	char *s = json_dumps(page, JSON_COMPACT | JSON_ENCODE_ANY);
	json_decref(page);
	free(sql);
	free(count);
	zc_bench_lock(z, 0);
	return s;
}

static void same_answer(zcor *z, const char *args, const char *where, long long limit,
			long long offset)
{
	char *text = NULL;
	CHECK_INT(zcor_tool_call(z, NULL, "zcor_memory_query", args, &text), ZCOR_OK);
	char *want = expected(z, where, limit, offset);
	CHECK_STR(text, want);
	/* a caller that takes a tree: the runner parses the text */
	json_t *a = NULL, *out = NULL;
	struct zc_err e = {0};
	static const struct zcor_ctx host = {ZCOR_ACTOR_CLI, NULL};
	CHECK_INT(zc_json_parse(args, strlen(args), "arguments", &a, &e), ZCOR_OK);
	zc_bench_lock(z, 1);
	int rc = zc_mem_run(zc_bench_mem(z), &host, &zc_op_memory_query, a, &out, &e);
	zc_bench_lock(z, 0);
	CHECK_INT(rc, ZCOR_OK);
	json_t *w = json_loads(want, 0, NULL);
	CHECK(out && w && json_equal(out, w));
	json_decref(w);
	json_decref(out);
	json_decref(a);
	zcor_free(text);
	json_malloc_t jm;
	json_free_t jf;
	json_get_alloc_funcs(&jm, &jf);
	jf(want);
}

/* A store whose rows hold every kind of value. */
static zcor *open_rows(void)
{
	zcor *z = t_open();
	json_decref(t_call_ok(z, NULL, "zcor_memory_write",
			      "{\"title\":\"猫咪 \\\"咪咪\\\"\",\"content\":\"第一行\\n第二行\\t\\\\ \\u0001 🐱\","
			      "\"keywords\":[\"猫\",\"宠物\"]}"));
	json_decref(t_call_ok(z, NULL, "zcor_memory_write",
			      "{\"title\":\"猫的疫苗\",\"content\":\"十二月打疫苗\"}"));
	json_decref(t_call_ok(z, NULL, "zcor_memory_write",
			      "{\"title\":\"hiking club\",\"content\":\"Sunday 7am, 猫 stays home\"}"));
	json_decref(t_call_ok(z, NULL, "zcor_memory_write",
			      "{\"title\":\"火锅\",\"content\":\"重庆老火锅\"}"));
	/* values the tools do not write this way: an old import's bytes, a
	 * merge, a supersede, attrs, a mark, hits */
	t_sql_exec(z, "UPDATE nodes SET content = CAST(X'e78cab20ff2041' AS TEXT), "
		      "attrs = '{\"a\": [1, 2.5, null], \"b\": \"x\"}', merged_from = '[\"m9\"]', "
		      "merged_reason = '同一件事', pinned = 1, hits = 7, last_hit_at = 1767225600123, "
		      "expires = '2027-01-01', section = 'pets' WHERE title = '猫的疫苗'");
	t_sql_exec(z, "UPDATE nodes SET superseded_by = (SELECT id FROM nodes WHERE title = '火锅'), "
		      "superseded_reason = '新的', keywords = '[ \"hiking\" ]' WHERE title = 'hiking club'");
	t_sql_exec(z, "UPDATE nodes SET important_seq = 3, keywords = 'not json' "
		      "WHERE title = '火锅'");
	return z;
}

static void issue19_query_text_is_the_trees_dump(void)
{
	zcor *z = open_rows();
	same_answer(z, "{\"keywords\":[\"猫\"]}", "superseded_by IS NULL AND (instr(title, '猫') OR instr(content, '猫'))", 20, 0);
	same_answer(z, "{\"keywords\":[\"猫\"],\"includeSuperseded\":true}", "instr(title, '猫') OR instr(content, '猫')", 20, 0);
	same_answer(z, "{\"includeSuperseded\":true,\"limit\":2,\"offset\":1}", "1", 2, 1);
	same_answer(z, "{}", "superseded_by IS NULL", 20, 0);
	same_answer(z, "{\"keywords\":[\"没有这个\"]}", "0", 20, 0);
	zcor_close(z);
}


/* How many times the statements of z's connection that begin with head,
 * hold every part (NULL: none) and test the full-text index or not
 * (with_prefilter) have run: sqlite's own counter of cached statements. */
static int stmt_runs(zcor *z, const char *head, const char *p1, const char *p2, int with_prefilter)
{
	zc_bench_lock(z, 1);
	sqlite3 *db = zc_bench_mem(z)->store.db;
	int runs = 0;
	for (sqlite3_stmt *st = sqlite3_next_stmt(db, NULL); st; st = sqlite3_next_stmt(db, st)) {
		const char *sql = sqlite3_sql(st);
		if (strncmp(sql, head, strlen(head)) == 0 && (!p1 || strstr(sql, p1)) && (!p2 || strstr(sql, p2)) &&
		    (strstr(sql, "nodes_fts MATCH") != NULL) == with_prefilter)
			runs += sqlite3_stmt_status(st, SQLITE_STMTSTATUS_RUN, 0);
	}
	zc_bench_lock(z, 0);
	return runs;
}

/* How many times the query's count statement has run (0 before its
 * first). */
static int count_runs(zcor *z, int with_prefilter)
{
	return stmt_runs(z, "SELECT count(*) FROM nodes WHERE (?1 OR superseded_by IS NULL)", NULL, NULL,
			 with_prefilter);
}

/* A page that ends short of its limit ends the matches: its total is
 * offset + hits, the count is not run (half a search's statements); a
 * full page, or one past the end, still counts (a query the full-text
 * index narrows counts its hits as it reads them, and never runs the
 * count). Every answer is the trees' page with its own count. */
static void issue19_query_counts_only_a_full_page(void)
{
	zcor *z = t_open();
	for (int i = 0; i < 5; i++) {
		char args[160];
		snprintf(args, sizeof(args), "{\"title\":\"王子涵的口味%d\",\"content\":\"喜欢火锅 hotpot %d\"}", i, i);
		json_decref(t_call_ok(z, NULL, "zcor_memory_write", args));
	}
	json_decref(t_call_ok(z, NULL, "zcor_memory_write", "{\"title\":\"别的\",\"content\":\"无关\"}"));
	static const char *const KW[2][2] = {
		{"\"keywords\":[\"hotpot\"]", "instr(content, 'hotpot')"},  /* no prefilter */
		{"\"keywords\":[\"王子涵\"]", "instr(title, '王子涵')"}, /* the FTS5 prefilter */
	};
	static const struct {
		long long limit, offset;
		int counts; /* the count statement runs */
	} PAGES[] = {
		{10, 0, 0}, {5, 0, 1}, {4, 0, 1}, {2, 4, 0}, {3, 3, 0}, {2, 5, 1}, {2, 9, 1}, {1, 4, 1}, {6, 0, 0},
	};
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < sizeof(PAGES) / sizeof(PAGES[0]); i++) {
			char args[200], where[120];
			snprintf(args, sizeof(args), "{%s,\"limit\":%lld,\"offset\":%lld}", KW[k][0], PAGES[i].limit,
				 PAGES[i].offset);
			snprintf(where, sizeof(where), "superseded_by IS NULL AND %s", KW[k][1]);
			int before = count_runs(z, k);
			char *text = NULL;
			CHECK_INT(zcor_tool_call(z, NULL, "zcor_memory_query", args, &text), ZCOR_OK);
			zcor_free(text);
			/* with the prefilter the hits are counted as they are read */
			CHECK_INT(count_runs(z, k) - before, k ? 0 : PAGES[i].counts);
			same_answer(z, args, where, PAGES[i].limit, PAGES[i].offset);
		}
	/* no match at all: total 0 without a count */
	int before = count_runs(z, 0);
	same_answer(z, "{\"keywords\":[\"nothing\"]}", "0", 20, 0);
	CHECK_INT(count_runs(z, 0) - before, 0);
	zcor_close(z);
}

/* One keyword is tested without json_each (bound as itself): the same
 * answer as the json_each test gives it, which it still gets as two
 * copies of itself, for a keyword in the title only, the content only,
 * both, neither, Latin folded, and a row whose content is
 * not UTF-8. */
static void issue19_query_one_keyword_is_the_json_each_test(void)
{
	zcor *z = open_rows();
	static const char *const KW[] = {"猫", "疫苗", "十二月", "Sunday", "SUNDAY", "猫咪 \\\"咪", "行\\n第",
					 "没有", "A", "\\u00ff", "hiking club", "老火锅"};
	for (size_t i = 0; i < sizeof(KW) / sizeof(KW[0]); i++)
		for (int sup = 0; sup < 2; sup++) {
			char one[200], two[240], *a = NULL, *b = NULL;
			const char *s = sup ? ",\"includeSuperseded\":true" : "";
			snprintf(one, sizeof(one), "{\"keywords\":[\"%s\"]%s}", KW[i], s);
			snprintf(two, sizeof(two), "{\"keywords\":[\"%s\",\"%s\"]%s}", KW[i], KW[i], s);
			CHECK_INT(zcor_tool_call(z, NULL, "zcor_memory_query", one, &a), ZCOR_OK);
			CHECK_INT(zcor_tool_call(z, NULL, "zcor_memory_query", two, &b), ZCOR_OK);
			CHECK_STR(a, b);
			zcor_free(a);
			zcor_free(b);
		}
	/* and the forms differ in what they find, not only in how */
	char *a = NULL;
	CHECK_INT(zcor_tool_call(z, NULL, "zcor_memory_query", "{\"keywords\":[\"老火锅\"]}", &a), ZCOR_OK);
	CHECK(strstr(a, "\"total\":1,"));
	zcor_free(a);
	CHECK_INT(zcor_tool_call(z, NULL, "zcor_memory_query", "{\"keywords\":[\"sunday\"],\"includeSuperseded\":true}", &a), ZCOR_OK);
	CHECK(strstr(a, "\"total\":1,"));
	zcor_free(a);
	zcor_close(z);
}

/* How many times SQLite's statements of the query's page ran (ORDER BY,
 * LIMIT), with the prefilter or without. */
static int page_runs(zcor *z, int with_prefilter)
{
	return stmt_runs(z, "SELECT id, title, content,", " FROM nodes WHERE (?1 OR", "LIMIT ?5 OFFSET ?6",
			 with_prefilter);
}

/* A query the full-text index narrows is read unordered and its page
 * ordered here (a heap of the first offset + limit, issue 19): the same
 * answer as SQLite's ORDER BY updated_at DESC, seq DESC with its LIMIT,
 * OFFSET and count, over 60 hits whose times tie in runs (seq breaks the
 * tie), arrive out of order, and are superseded or updated later; pages
 * at the start, inside, across and past the end, one hit, none; and a
 * page further down than the heap keeps, which SQLite orders. */
static void issue19_query_orders_an_indexed_page_itself(void)
{
	zcor *z = t_open();
	for (int i = 0; i < 70; i++) {
		char args[200];
		snprintf(args, sizeof(args), "{\"title\":\"%s的火锅店%d\",\"content\":\"第%d家\"}",
			 i < 60 ? "老王" : "小李", i, i);
		json_decref(t_call_ok(z, NULL, "zcor_memory_write", args));
	}
	/* times out of seq order, in ties of up to seven; some superseded */
	t_sql_exec(z, "UPDATE nodes SET updated_at = 1767225600000 + (seq * 7919 %% 23) / 7 * 60000");
	t_sql_exec(z, "UPDATE nodes SET superseded_by = (SELECT id FROM nodes ORDER BY seq DESC LIMIT 1), "
		      "superseded_reason = '换了' WHERE seq %% 9 = 4");
	static const struct {
		long long limit, offset;
	} PAGES[] = {{20, 0}, {5, 0}, {5, 3}, {7, 49}, {100, 0}, {1, 0}, {1, 52}, {10, 55}, {3, 60}, {20, 70},
		     {100, 900}, {10, 995}, {10, 2000}};
	const char *WHERE[2] = {"superseded_by IS NULL AND instr(title, '老王')", "instr(title, '老王')"};
	for (int sup = 0; sup < 2; sup++)
		for (size_t i = 0; i < sizeof(PAGES) / sizeof(PAGES[0]); i++) {
			char args[200];
			snprintf(args, sizeof(args), "{\"keywords\":[\"老王\",\"火锅\"],\"limit\":%lld,\"offset\":%lld%s}",
				 PAGES[i].limit, PAGES[i].offset, sup ? ",\"includeSuperseded\":true" : "");
			int before = page_runs(z, 1);
			char *text = NULL;
			CHECK_INT(zcor_tool_call(z, NULL, "zcor_memory_query", args, &text), ZCOR_OK);
			zcor_free(text);
			/* SQLite orders only a page past the heap's reach */
			CHECK_INT(page_runs(z, 1) - before, PAGES[i].offset + PAGES[i].limit > 1000);
			same_answer(z, args, WHERE[sup], PAGES[i].limit, PAGES[i].offset);
			snprintf(args, sizeof(args), "{\"keywords\":[\"老王\"],\"limit\":%lld,\"offset\":%lld%s}",
				 PAGES[i].limit, PAGES[i].offset, sup ? ",\"includeSuperseded\":true" : "");
			same_answer(z, args, WHERE[sup], PAGES[i].limit, PAGES[i].offset);
		}
	same_answer(z, "{\"keywords\":[\"小李的火锅店65\"]}", "title = '小李的火锅店65'", 20, 0);
	same_answer(z, "{\"keywords\":[\"没有的店\"]}", "0", 20, 0);
	zcor_close(z);
}

/* The prefilter runs over every column of nodes_fts (no column filter on
 * each posting, issue 19): a record that has the keyword only in its
 * keywords is a candidate, and the substring test on the title and the
 * content still leaves it out. */
static void issue19_query_prefilter_over_every_column_still_tests_title_and_content(void)
{
	zcor *z = t_open();
	json_decref(t_call_ok(z, NULL, "zcor_memory_write",
			      "{\"title\":\"周末聚餐\",\"content\":\"去吃火锅\",\"keywords\":[\"张三丰\",\"张三丰的店\"]}"));
	json_decref(t_call_ok(z, NULL, "zcor_memory_write",
			      "{\"title\":\"武当\",\"content\":\"张三丰说太极\"}"));
	json_decref(t_call_ok(z, NULL, "zcor_memory_write",
			      "{\"title\":\"张三丰的店\",\"content\":\"开在山下\"}"));
	same_answer(z, "{\"keywords\":[\"张三丰\"]}", "title <> '周末聚餐'", 20, 0);
	same_answer(z, "{\"keywords\":[\"张三丰的店\"]}", "title = '张三丰的店'", 20, 0);
	same_answer(z, "{\"keywords\":[\"张三丰\",\"太极\"]}", "title = '武当'", 20, 0);
	char *text = NULL;
	CHECK_INT(zcor_tool_call(z, NULL, "zcor_memory_query", "{\"keywords\":[\"张三丰\"]}", &text), ZCOR_OK);
	CHECK(strstr(text, "\"total\":2,") && !strstr(text, "周末聚餐"));
	zcor_free(text);
	zcor_close(z);
}

const struct t_case t_cases[] = {
	{"issue19_query_text_is_the_trees_dump", issue19_query_text_is_the_trees_dump},
	{"issue19_query_counts_only_a_full_page", issue19_query_counts_only_a_full_page},
	{"issue19_query_one_keyword_is_the_json_each_test", issue19_query_one_keyword_is_the_json_each_test},
	{"issue19_query_orders_an_indexed_page_itself", issue19_query_orders_an_indexed_page_itself},
	{"issue19_query_prefilter_over_every_column_still_tests_title_and_content",
	 issue19_query_prefilter_over_every_column_still_tests_title_and_content},
	{0},
};
