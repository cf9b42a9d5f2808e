/*
 * test_fuzzfound.c — regressions for what the fuzz targets of tests/fuzz/
 * found (docs/FUZZING.md lists them), each through the public API as the
 * tool a model calls. Named after the target.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

/* qq_memory write / append of text on path (host plane); the code. */
static int put(zcor *z, const char *action, const char *path, const char *text)
{
	json_t *a = json_pack("{s:s, s:s, s:s, s:b}", "action", action, "path", path, "content", text, "force", 1);
	char *args = json_dumps(a, JSON_COMPACT);
	int rc = 0;
	json_decref(t_call_raw(z, NULL, &rc, "qq_memory", args));
	free(args);
	json_decref(a);
	return rc;
}

/* The text of the view (caller frees). */
static char *get(zcor *z, const char *path)
{
	char args[256];
	snprintf(args, sizeof(args), "{\"action\":\"read\",\"path\":\"%s\"}", path);
	json_t *r = t_call_raw(z, NULL, NULL, "qq_memory", args);
	char *t = strdup(t_str(r, "text") ? t_str(r, "text") : "");
	json_decref(r);
	return t;
}

/* How many times needle occurs in hay. */
static int count_of(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* Writing back the view as read changes nothing; returns what it reads. */
static char *fixed_point(zcor *z, const char *path, int line)
{
	char *read = get(z, path);
	if (put(z, "write", path, read) != ZCOR_OK) {
		fprintf(stderr, "%s:%d: writing back %s was refused\n", __FILE__, line, path);
		t_failures++;
	}
	char *again = get(z, path);
	if (strcmp(read, again) != 0) {
		fprintf(stderr, "%s:%d: %s changed when written back as read:\n--- read\n%s--- then\n%s", __FILE__,
			line, path, read, again);
		t_failures++;
	}
	free(again);
	return read;
}

/* fuzz_views: PEOPLE.md kept people in their row order but the other lines
 * at their written line numbers, so an earlier line of a person written
 * again below ("the later line is the entry") could render after the
 * person — and writing the view back as read made that old line the
 * person's entry: the relationship changed. */
static void fuzz_views_people_earlier_line_of_a_person_stays_before_it(void)
{
	zcor *z = t_open();
	/* people that exist already, in another order than the text's */
	CHECK_INT(put(z, "write", "PEOPLE.md",
		      "# PEOPLE.md\n\n## 人物\n- 小林（QQ 100000002）｜同学\n- kaguya（QQ 100000001）｜群主\n"),
		  ZCOR_OK);
	CHECK_INT(put(z, "write", "PEOPLE.md",
		      "# PEOPLE.md\n\n## 人物\n"
		      "- kaguya（QQ 100000001）（室\n"
		      "- 小林（QQ 100000002）｜旧的说法\n"
		      "随手记的一行\n"
		      "- kaguya（QQ 100000001）｜群主，周六常组织打本\n"
		      "- 小林（QQ 100000002）｜常驻群友，喜欢原神\n"
		      "\n## 备注\n第一行\n第二行\n"),
		  ZCOR_OK);
	free(fixed_point(z, "PEOPLE.md", __LINE__));
	free(fixed_point(z, "PEOPLE.md", __LINE__));
	json_t *p = t_call_ok(z, NULL, "zcor_relationship_read", "{\"personId\":\"100000002\"}");
	CHECK_STR(t_str(p, "person.relationship"), "常驻群友，喜欢原神");
	json_decref(p);
	p = t_call_ok(z, NULL, "zcor_relationship_read", "{\"personId\":\"100000001\"}");
	CHECK_STR(t_str(p, "person.relationship"), "群主，周六常组织打本");
	json_decref(p);
	/* every line written is still there, the free lines in their order */
	char *t = get(z, "PEOPLE.md");
	CHECK_HAS(t, "- 小林（QQ 100000002）｜旧的说法\n");
	CHECK_HAS(t, "随手记的一行\n");
	CHECK_HAS(t, "## 备注\n第一行\n第二行\n");
	free(t);
	zcor_close(z);
}

/* fuzz_views: an entry renders in the section its fields decide (a sticker
 * with an image under 已收藏, a slang word under its type), an earlier line
 * of the same name in the section it was written in: it could come after
 * the entry and take its place on the next write. */
static void fuzz_views_earlier_line_of_an_entry_in_another_section(void)
{
	zcor *z = t_open();
	CHECK_INT(put(z, "write", "STICKERS.md",
		      "# STICKERS.md\n\n## 未收藏\n- 猫猫｜旧的含义\n- 猫猫｜喵｜stickers/猫猫.gif\n"),
		  ZCOR_OK);
	char *t = fixed_point(z, "STICKERS.md", __LINE__);
	CHECK_HAS(t, "- 猫猫｜旧的含义\n- 猫猫｜喵｜stickers/猫猫.gif\n");
	free(t);
	CHECK_INT(put(z, "write", "COGNITION.md",
		      "# COGNITION.md\n\n## 其它\n- yyds｜旧的解释\n\n## 缩写\n- awsl｜啊我死了\n- yyds｜永远的神\n"),
		  ZCOR_OK);
	free(fixed_point(z, "COGNITION.md", __LINE__));
	/* the same text under two sections of MEMORY.md: one line, the later */
	const char *mem = "conversations/group-1/MEMORY.md";
	CHECK_INT(put(z, "write", mem, "# MEMORY.md\n\n## 事实\n- 开黑｜周五\n\n## 在追\n- 开黑｜周五\n"), ZCOR_OK);
	t = fixed_point(z, mem, __LINE__);
	CHECK_INT(t_sql_int(zcor_dir(z), "SELECT count(*) FROM nodes WHERE title = '开黑' AND section = '在追'"), 1);
	free(t);
	zcor_close(z);
}

/* fuzz_views: an append of an earlier line and a new version of an entry
 * that keeps its place: the earlier line went after it. */
static void fuzz_views_append_of_an_earlier_line_before_a_kept_entry(void)
{
	zcor *z = t_open();
	const char *mem = "conversations/group-1/MEMORY.md";
	CHECK_INT(put(z, "write", mem, "# MEMORY.md\n\n## 事实\n- 服务器在上海｜2026-09-01\n- 群规｜不许刷屏\n"), ZCOR_OK);
	CHECK_INT(put(z, "append", mem, "## 事实\n- 服务器在上海｜旧的\n- 服务器在上海｜搬到北京了\n"), ZCOR_OK);
	char *t = fixed_point(z, mem, __LINE__);
	CHECK(strstr(t, "- 服务器在上海｜旧的\n") && strstr(t, "- 服务器在上海｜搬到北京了\n") &&
	      strstr(t, "- 服务器在上海｜旧的\n") < strstr(t, "- 服务器在上海｜搬到北京了\n"));
	free(t);
	char *content = t_sql_str(zcor_dir(z), "SELECT content FROM nodes WHERE title = '服务器在上海'");
	CHECK_STR(content, "搬到北京了");
	free(content);
	zcor_close(z);
}

/* fuzz_views: two earlier lines of one name, the same text in two
 * sections: moved before the entry they were one line twice, and the next
 * write dropped one. */
static void fuzz_views_earlier_lines_moved_together_stay_one(void)
{
	zcor *z = t_open();
	const char *mem = "conversations/group-1/MEMORY.md";
	CHECK_INT(put(z, "write", mem,
		      "# MEMORY.md\n\n## 某个新栏目\n- a｜1\n\n## 在追\n- b\n\n## 事实\n- a｜1\n- a｜2\n- b｜3\n"),
		  ZCOR_OK);
	char *t = fixed_point(z, mem, __LINE__);
	CHECK_INT(t_sql_int(zcor_dir(z), "SELECT count(*) FROM view_unparsed WHERE line = '- a｜1'"), 1);
	CHECK_HAS(t, "- b\n");
	free(t);
	zcor_close(z);
}

/* fuzz_views: a person's line whose name or id holds the line's own
 * brackets ("（QQ （QQ 1）2）") rendered as a line that parsed as another
 * person: written back, it changed whom it was about. Kept as written. */
static void fuzz_views_person_line_with_its_own_tags_is_kept_as_written(void)
{
	zcor *z = t_open();
	const char *lines[] = {
		"- 乙（QQ （QQ 100000001）2）（别名：b/bb）｜同学",
		"- 丙（QQ 3）（QQ 4）｜同事",
		"- 丁（别名：d）（别名：dd）｜邻居",
	};
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		char text[512];
		snprintf(text, sizeof(text), "# PEOPLE.md\n\n## 人物\n- 甲（QQ 1）｜朋友\n%s\n", lines[i]);
		CHECK_INT(put(z, "write", "PEOPLE.md", text), ZCOR_OK);
		char *t = fixed_point(z, "PEOPLE.md", __LINE__);
		CHECK_HAS(t, lines[i]);
		free(t);
		CHECK_INT(t_sql_int(zcor_dir(z), "SELECT count(*) FROM people"), 1);
	}
	zcor_close(z);
}

/* fuzz_views: a first-seen day that is no instant from 1970 on was stored
 * as no day at all, so the view showed none and writing it back set today:
 * not written back as read. It counts as not given (today, once). */
static void fuzz_views_person_first_seen_that_is_no_day(void)
{
	zcor *z = t_open();
	CHECK_INT(put(z, "write", "PEOPLE.md",
		      "# PEOPLE.md\n\n## 人物\n- 甲（QQ 1）｜朋友｜首见 0236-10-12\n- 乙（QQ 2）｜同学｜首见 2026-13-45\n"
		      "- 丙（QQ 3）｜同事｜首见 2026-10-12\n"),
		  ZCOR_OK);
	char *t = fixed_point(z, "PEOPLE.md", __LINE__);
	CHECK_HAS(t, "- 丙（QQ 3）｜同事｜首见 2026-10-12\n");
	free(t);
	CHECK_INT(t_sql_int(zcor_dir(z), "SELECT count(*) FROM people WHERE first_seen IS NULL"), 0);
	zcor_close(z);
}

/* fuzz_import: an export into a directory that holds symbolic links (one
 * imported from elsewhere, say) wrote through them, outside it. A link on
 * the way is refused, naming it; a link where a file goes is replaced. */
static void fuzz_import_export_writes_only_inside_its_directory(void)
{
	zcor *z = t_open();
	json_decref(t_call_ok(z, "group:1", "qq_memory",
			      "{\"action\":\"upsert\",\"path\":\"conversations/group-1/MEMORY.md\",\"name\":\"开黑\","
			      "\"meaning\":\"周五\",\"section\":\"事实\"}"));
	json_decref(t_call_ok(z, NULL, "qq_memory",
			      "{\"action\":\"upsert\",\"path\":\"COGNITION.md\",\"name\":\"yyds\",\"meaning\":\"永远的神\"}"));
	const char *root = t_tmpdir();
	char out[4096], elsewhere[4096], p[4200], q[4200];
	snprintf(out, sizeof(out), "%s/out", root);
	snprintf(elsewhere, sizeof(elsewhere), "%s/elsewhere", root);
	CHECK(mkdir(out, 0755) == 0 && mkdir(elsewhere, 0755) == 0);
	snprintf(p, sizeof(p), "%s/secret.txt", elsewhere);
	FILE *f = fopen(p, "w");
	if (f) {
		fputs("不该被改写\n", f);
		fclose(f);
	}
	/* a link where a file goes: replaced by the file, the target untouched */
	snprintf(q, sizeof(q), "%s/COGNITION.md", out);
	CHECK(symlink(p, q) == 0);
	/* a link on the way to a file: refused */
	snprintf(q, sizeof(q), "%s/conversations", out);
	CHECK(symlink(elsewhere, q) == 0);
	char *report = NULL;
	CHECK_INT(zcor_export_qq(z, out, &report), ZCOR_EINVAL);
	CHECK_HAS(zcor_errmsg(z), "'conversations' is a symbolic link");
	zcor_free(report);
	snprintf(p, sizeof(p), "%s/secret.txt", elsewhere);
	f = fopen(p, "r");
	char buf[64] = "";
	if (f) {
		CHECK(fgets(buf, sizeof(buf), f) != NULL);
		fclose(f);
	}
	CHECK_STR(buf, "不该被改写\n");
	snprintf(p, sizeof(p), "%s/group-1", elsewhere);
	CHECK(access(p, F_OK) != 0);
	struct stat st;
	snprintf(q, sizeof(q), "%s/COGNITION.md", out);
	CHECK(lstat(q, &st) == 0 && S_ISREG(st.st_mode));
	/* the same for the log files alone (zcor transcript export) */
	char *logged = NULL;
	CHECK_INT(zcor_log_messages(z, NULL, "group:1", "{\"messages\":[{\"id\":\"1\",\"senderId\":\"2\",\"text\":\"hi\"}]}",
				    &logged),
		  ZCOR_OK);
	zcor_free(logged);
	CHECK_INT(zcor_transcript_export(z, "group:1", out, &report), ZCOR_EINVAL);
	zcor_free(report);
	snprintf(p, sizeof(p), "%s/group-1", elsewhere);
	CHECK(access(p, F_OK) != 0);
	/* without the link the export goes through */
	snprintf(q, sizeof(q), "%s/conversations", out);
	CHECK(unlink(q) == 0);
	CHECK_INT(zcor_export_qq(z, out, &report), ZCOR_OK);
	zcor_free(report);
	snprintf(q, sizeof(q), "%s/conversations/group-1/MEMORY.md", out);
	CHECK(lstat(q, &st) == 0 && S_ISREG(st.st_mode));
	snprintf(q, sizeof(q), "%s/conversations/group-1/log", out);
	CHECK(lstat(q, &st) == 0 && S_ISDIR(st.st_mode));
	zcor_close(z);
}

/* fuzz_views: "首见 X" took X as the date whatever it was, and a date
 * renders bare: X read back as some other text. Only a date is one. */
static void fuzz_views_first_seen_that_is_no_date_stays_as_written(void)
{
	zcor *z = t_open();
	CHECK_INT(put(z, "write", "STICKERS.md",
		      "# STICKERS.md\n\n## 未收藏\n- 猫｜喵｜首见 20NN26-01-01｜置信：存疑\n- 狗｜汪｜首见 2026-01-02\n"),
		  ZCOR_OK);
	char *t = fixed_point(z, "STICKERS.md", __LINE__);
	CHECK_HAS(t, "首见 20NN26-01-01");
	CHECK_HAS(t, "- 狗｜汪｜2026-01-02\n");
	free(t);
	const char *mem = "conversations/group-1/MEMORY.md";
	CHECK_INT(put(z, "write", mem, "# MEMORY.md\n\n## 事实\n- 开黑｜周五｜首见：上周\n"), ZCOR_OK);
	t = fixed_point(z, mem, __LINE__);
	CHECK_HAS(t, "首见：上周");
	free(t);
	zcor_close(z);
}

/* fuzz_views: the same sticker line under 已收藏 and again under 未收藏:
 * the later is the entry, and renders under 已收藏 (it has an image) —
 * beside the earlier, identical line, which the next write dropped. */
static void fuzz_views_earlier_line_that_renders_as_its_entry(void)
{
	zcor *z = t_open();
	CHECK_INT(put(z, "write", "STICKERS.md",
		      "# STICKERS.md\n\n## 已收藏\n- 敲盆｜催饭、起哄｜stickers/敲盆.gif\n\n## 未收藏\n"
		      "- 敲盆｜催饭、起哄｜stickers/敲盆.gif\n"),
		  ZCOR_OK);
	char *t = fixed_point(z, "STICKERS.md", __LINE__);
	CHECK_INT(count_of(t, "- 敲盆｜催饭、起哄｜stickers/敲盆.gif\n"), 1);
	free(t);
	zcor_close(z);
}

/* fuzz_views: a carriage return inside an entry's line renders as a
 * space, but was read as part of the name: written back, the entry was
 * another one (a person known by name moved to the end, a word was new). */
static void fuzz_views_carriage_return_inside_a_line(void)
{
	zcor *z = t_open();
	CHECK_INT(put(z, "write", "PEOPLE.md", "# PEOPLE.md\n\n## 人物\n- 蚌\r埠｜笑\n- 乙｜同学\n"), ZCOR_OK);
	char *t = fixed_point(z, "PEOPLE.md", __LINE__);
	CHECK(strstr(t, "- 蚌 埠｜笑") && strstr(t, "- 乙｜同学") && strstr(t, "- 蚌 埠｜笑") < strstr(t, "- 乙｜同学"));
	free(t);
	CHECK_INT(put(z, "write", "COGNITION.md", "# COGNITION.md\n\n## 缩写\n- yy\rds｜永远的神\n"), ZCOR_OK);
	long long before = t_sql_int(zcor_dir(z), "SELECT max(seq) FROM nodes");
	free(fixed_point(z, "COGNITION.md", __LINE__));
	CHECK_INT(t_sql_int(zcor_dir(z), "SELECT max(seq) FROM nodes"), before);
	zcor_close(z);
}

const struct t_case t_cases[] = {
	{"fuzz_views_people_earlier_line_of_a_person_stays_before_it",
	 fuzz_views_people_earlier_line_of_a_person_stays_before_it},
	{"fuzz_views_earlier_line_of_an_entry_in_another_section", fuzz_views_earlier_line_of_an_entry_in_another_section},
	{"fuzz_views_append_of_an_earlier_line_before_a_kept_entry",
	 fuzz_views_append_of_an_earlier_line_before_a_kept_entry},
	{"fuzz_views_earlier_lines_moved_together_stay_one", fuzz_views_earlier_lines_moved_together_stay_one},
	{"fuzz_views_person_line_with_its_own_tags_is_kept_as_written",
	 fuzz_views_person_line_with_its_own_tags_is_kept_as_written},
	{"fuzz_views_person_first_seen_that_is_no_day", fuzz_views_person_first_seen_that_is_no_day},
	{"fuzz_import_export_writes_only_inside_its_directory", fuzz_import_export_writes_only_inside_its_directory},
	{"fuzz_views_first_seen_that_is_no_date_stays_as_written", fuzz_views_first_seen_that_is_no_date_stays_as_written},
	{"fuzz_views_earlier_line_that_renders_as_its_entry", fuzz_views_earlier_line_that_renders_as_its_entry},
	{"fuzz_views_carriage_return_inside_a_line", fuzz_views_carriage_return_inside_a_line},
	{NULL, NULL},
};
