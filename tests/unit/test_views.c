/*
 * test_views.c — the memory views of seed 003 (SPEC §3.2 qq tools, §5 Q-ROLL,
 * §6 Q-STK): qq_memory (read, list, search, upsert, remove, write, append),
 * qq_save_sticker, qq_rename_sticker and what the views put into the recall
 * header, through the public API only (zcor_tool_call, zcor_recall,
 * zcor_config_set). Rows are looked at with a second, read-only connection
 * to memory.db; the only write through it is the hit count of Q-ROLL's
 * "least active" rule, which no tool sets directly.
 *
 * The examples are seed 003's: 蚌埠住了 (谐音, 变体 绷不住/绷), kaguya
 * (QQ 100000001, 别名 soyo/爽世), 周五固定开黑, the 无语 sticker and the
 * 敲盆.gif extension accident. Each case is named after the rule it pins
 * and fails if that rule breaks.
 */
#define _GNU_SOURCE
#include <sqlite3.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "store/store.h" /* zc_fts_register, for the second connection */

/* ---- helpers -------------------------------------------------------- */

#define CHECK_LACKS(hay, needle)                                                               \
	do {                                                                                   \
		const char *h_ = (hay), *n_ = (needle);                                        \
		if (!h_ || strstr(h_, n_)) {                                                   \
			fprintf(stderr, "%s:%d: CHECK_LACKS failed: %s = '%s' contains '%s'\n", \
				__FILE__, __LINE__, #hay, h_ ? h_ : "(null)", n_);                 \
			t_failures++;                                                          \
		}                                                                              \
	} while (0)

/* A call that must succeed: reports the error it got otherwise. */
#define CHECK_OK(res)                                                                          \
	do {                                                                                   \
		json_t *r_ = (res);                                                            \
		if (t_errcode(r_)) {                                                           \
			fprintf(stderr, "%s:%d: CHECK_OK failed: %s: %s: %s\n", __FILE__, __LINE__, \
				#res, t_errcode(r_), t_errmsg(r_) ? t_errmsg(r_) : "");            \
			t_failures++;                                                          \
		}                                                                              \
	} while (0)

/* A call that must fail with `code`. */
#define CHECK_ERR(res, code)                                                                   \
	do {                                                                                   \
		json_t *r_ = (res);                                                            \
		const char *c_ = t_errcode(r_);                                                \
		if (!c_ || strcmp(c_, (code)) != 0) {                                          \
			char *d_ = json_dumps(r_, JSON_COMPACT);                                  \
			fprintf(stderr, "%s:%d: CHECK_ERR failed: %s = %s, expected error %s\n", \
				__FILE__, __LINE__, #res, d_ ? d_ : "?", (code));                   \
			free(d_);                                                              \
			t_failures++;                                                          \
		}                                                                              \
	} while (0)

/* 2026-10-18T12:00:00Z, the date of seed 003's examples */
#define T0 1792324800000LL
#define DAY 86400000LL

static int64_t now_ms = T0;
static int64_t clock_of(void *ud) { return *(int64_t *)ud; }

static void write_config(zcor *z, const char *json)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/config.json", zcor_dir(z));
	FILE *f = fopen(path, "w");
	if (!f || fputs(json, f) < 0) {
		fprintf(stderr, "cannot write %s\n", path);
		t_failures++;
	}
	if (f)
		fclose(f);
}

/* A fresh memory directory on the fixed clock, with config.json if given. */
static zcor *open_views(const char *config)
{
	zcor *z = t_open();
	now_ms = T0;
	zcor_set_clock(z, clock_of, &now_ms);
	if (config)
		write_config(z, config);
	return z;
}

static void set_config(zcor *z, const char *json)
{
	int rc = zcor_config_set(z, json);
	if (rc != ZCOR_OK) {
		fprintf(stderr, "zcor_config_set(%s) failed: %s\n", json, zcor_errmsg(z));
		t_failures++;
	}
}

/* qq_memory with a ready argument object (stolen). */
static json_t *qmj(zcor *z, const char *conv, json_t *args)
{
	char *s = json_dumps(args, JSON_COMPACT);
	json_decref(args);
	json_t *v = t_call_raw(z, conv, NULL, "qq_memory", s);
	free(s);
	return v;
}

/* write / append of `content` to `path`. */
static json_t *qm_text(zcor *z, const char *conv, const char *action, const char *path,
		       const char *content, int force)
{
	json_t *a = json_pack("{s:s, s:s, s:s}", "action", action, "path", path, "content", content);
	if (force)
		json_object_set_new(a, "force", json_true());
	return qmj(z, conv, a);
}

/* The text of a view as read (caller frees; "" on error, which counts). */
static char *view_text(zcor *z, const char *conv, const char *path)
{
	json_t *r = t_call(z, conv, "qq_memory", "{\"action\":\"read\",\"path\":\"%s\"}", path);
	const char *t = t_str(r, "text");
	if (!t) {
		fprintf(stderr, "read %s failed: %s\n", path, t_errmsg(r) ? t_errmsg(r) : "?");
		t_failures++;
	}
	char *s = strdup(t ? t : "");
	json_decref(r);
	return s;
}

/* 1-based number of the line equal to `line` in text, or 0. */
static int line_no(const char *text, const char *line)
{
	int n = 1;
	size_t len = strlen(line);
	for (const char *p = text; *p; n++) {
		const char *nl = strchr(p, '\n');
		size_t k = nl ? (size_t)(nl - p) : strlen(p);
		if (k == len && strncmp(p, line, len) == 0)
			return n;
		if (!nl)
			break;
		p = nl + 1;
	}
	return 0;
}

static int count_lines_equal(const char *text, const char *line)
{
	int c = 0;
	size_t len = strlen(line);
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t k = nl ? (size_t)(nl - p) : strlen(p);
		c += k == len && strncmp(p, line, len) == 0;
		if (!nl)
			break;
		p = nl + 1;
	}
	return c;
}

static int count_sub(const char *hay, const char *needle)
{
	int c = 0;
	for (const char *p = hay; p && (p = strstr(p, needle)); p += strlen(needle))
		c++;
	return c;
}

/* First column of the first row as text (caller frees), "" if none. */
static char *sql_str(zcor *z, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *sql_str(zcor *z, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *sql = t_vformat(fmt, ap);
	va_end(ap);
	char *v = t_sql_str(zcor_dir(z), sql);
	free(sql);
	return v;
}

static long long sql_int(zcor *z, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static long long sql_int(zcor *z, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *sql = t_vformat(fmt, ap);
	va_end(ap);
	long long v = t_sql_int(zcor_dir(z), sql);
	free(sql);
	return v;
}

/* The recall header for one message (and speaker, if given); caller frees. */
static char *recall_header(zcor *z, const char *conv, const char *msg, const char *speaker)
{
	json_t *req = json_pack("{s:s, s:[s]}", "conversation", conv, "messages", msg);
	if (speaker)
		json_object_set_new(req, "speakers", json_pack("[{s:s}]", "id", speaker));
	char *rs = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	char *out = NULL;
	int rc = zcor_recall(z, rs, &out);
	free(rs);
	if (rc != ZCOR_OK) {
		fprintf(stderr, "zcor_recall(%s, %s) failed: %s\n", conv, msg, zcor_errmsg(z));
		t_failures++;
	}
	json_t *v = out ? json_loads(out, 0, NULL) : NULL;
	zcor_free(out);
	const char *h = t_str(v, "header");
	char *s = strdup(h ? h : "");
	json_decref(v);
	return s;
}

/* Everything a rejected call must leave as it was. */
struct state {
	long long nodes, people, versions, unparsed;
	char *views; /* every view's path, entries and bytes, as listed */
};

static struct state state_of(zcor *z)
{
	struct state s;
	s.nodes = t_sql_int(zcor_dir(z), "SELECT count(*) FROM nodes");
	s.people = t_sql_int(zcor_dir(z), "SELECT count(*) FROM people");
	s.versions = t_sql_int(zcor_dir(z), "SELECT count(*) FROM view_versions");
	s.unparsed = t_sql_int(zcor_dir(z), "SELECT count(*) FROM view_unparsed");
	json_t *l = t_call(z, NULL, "qq_memory", "{\"action\":\"list\"}");
	s.views = json_dumps(t_get(l, "views"), JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(l);
	return s;
}

static void check_same_state(struct state *a, struct state *b, int line)
{
	if (a->nodes != b->nodes || a->people != b->people || a->versions != b->versions ||
	    a->unparsed != b->unparsed || !a->views || !b->views || strcmp(a->views, b->views) != 0) {
		fprintf(stderr,
			"%s:%d: state changed: nodes %lld->%lld people %lld->%lld versions %lld->%lld "
			"unparsed %lld->%lld views %s -> %s\n",
			__FILE__, line, a->nodes, b->nodes, a->people, b->people, a->versions, b->versions,
			a->unparsed, b->unparsed, a->views ? a->views : "?", b->views ? b->views : "?");
		t_failures++;
	}
	free(b->views);
	b->views = NULL;
}

static const char *const BENG_LINE = "- 蚌埠住了｜忍不住笑了｜用法：有人发离谱东西时｜变体：绷不住/绷";
static const char *const KAGUYA_LINE =
	"- kaguya（QQ 100000001）（别名：soyo/爽世）｜群主，周六常组织打本｜首见 2026-10-18";
static const char *const KAIHEI_LINE = "- 周五固定开黑｜晚上八点，别迟到｜2026-10-18";

static void upsert_seed_examples(zcor *z, const char *conv)
{
	json_t *r;
	r = t_call(z, conv, "qq_memory",
	       "{\"action\":\"upsert\",\"path\":\"COGNITION.md\",\"name\":\"蚌埠住了\","
	       "\"meaning\":\"忍不住笑了\",\"usage\":\"有人发离谱东西时\",\"type\":\"谐音\","
	       "\"variants\":\"绷不住/绷\"}");
	CHECK_OK(r);
	CHECK(json_is_true(t_get(r, "created")));
	json_decref(r);
	r = t_call(z, conv, "qq_memory",
	       "{\"action\":\"upsert\",\"path\":\"PEOPLE.md\",\"name\":\"kaguya\",\"qq\":\"100000001\","
	       "\"aliases\":\"soyo/爽世\",\"meaning\":\"群主，周六常组织打本\"}");
	CHECK_OK(r);
	json_decref(r);
	r = t_call(z, conv, "qq_memory",
	       "{\"action\":\"upsert\",\"path\":\"conversations/group-100000001/MEMORY.md\","
	       "\"name\":\"周五固定开黑\",\"meaning\":\"晚上八点，别迟到\",\"section\":\"惯例与偏好\","
	       "\"date\":\"2026-10-18\"}");
	CHECK_OK(r);
	json_decref(r);
}

/* ---- 1. rendering ---------------------------------------------------------- */

static void Q_VIEW_seed_upserts_render_exactly(void)
{
	zcor *z = open_views(NULL);
	upsert_seed_examples(z, "group:100000001");

	char *cog = view_text(z, "group:100000001", "COGNITION.md");
	char *want = NULL;
	if (asprintf(&want, "## 谐音\n%s\n", BENG_LINE) < 0)
		exit(2);
	CHECK_HAS(cog, want);
	free(want);
	CHECK_INT(count_sub(cog, "蚌埠住了"), 1);

	char *ppl = view_text(z, "group:100000001", "PEOPLE.md");
	if (asprintf(&want, "## 人物\n%s\n", KAGUYA_LINE) < 0)
		exit(2);
	CHECK_HAS(ppl, want);
	free(want);

	char *mem = view_text(z, "group:100000001", "conversations/group-100000001/MEMORY.md");
	if (asprintf(&want, "## 惯例与偏好\n%s\n", KAIHEI_LINE) < 0)
		exit(2);
	CHECK_HAS(mem, want);
	free(want);
	/* the four standard sections of a MEMORY.md, in order */
	const char *a = strstr(mem, "## 人物\n"), *b = strstr(mem, "## 惯例与偏好\n"),
		   *c = strstr(mem, "## 在追\n"), *d = strstr(mem, "## 事实\n");
	CHECK(a && b && c && d && a < b && b < c && c < d);

	/* deterministic: the same store renders the same text, read after
	 * read and after reopening the directory */
	char *cog2 = view_text(z, "group:100000001", "COGNITION.md");
	char *mem2 = view_text(z, "group:100000001", "conversations/group-100000001/MEMORY.md");
	CHECK_STR(cog2, cog);
	CHECK_STR(mem2, mem);
	free(cog2);
	free(mem2);
	zcor *z2 = t_open_dir(zcor_dir(z));
	char *ppl2 = view_text(z2, NULL, "PEOPLE.md");
	CHECK_STR(ppl2, ppl);
	free(ppl2);
	zcor_close(z2);

	/* the citation in the recall header names the line the entry is on */
	char *id = sql_str(z, "SELECT id FROM nodes WHERE title = '蚌埠住了'");
	CHECK(*id);
	int ln = line_no(cog, BENG_LINE);
	CHECK(ln > 0);
	char *h = recall_header(z, "group:100000001", "哈哈哈蚌埠住了", NULL);
	char *cite = NULL;
	if (asprintf(&cite, "[%s · COGNITION.md#L%d] 蚌埠住了", id, ln) < 0)
		exit(2);
	CHECK_HAS(h, cite);
	free(cite);
	free(h);
	free(id);

	id = sql_str(z, "SELECT id FROM nodes WHERE title = '周五固定开黑'");
	ln = line_no(mem, KAIHEI_LINE);
	CHECK(ln > 0);
	h = recall_header(z, "group:100000001", "今晚周五固定开黑吗", NULL);
	if (asprintf(&cite, "[%s · conversations/group-100000001/MEMORY.md#L%d] 周五固定开黑", id, ln) < 0)
		exit(2);
	CHECK_HAS(h, cite);
	free(cite);
	free(h);
	free(id);

	ln = line_no(ppl, KAGUYA_LINE);
	CHECK(ln > 0);
	h = recall_header(z, "group:100000001", "今天打本吗", "100000001");
	if (asprintf(&cite, "[人物 100000001 · PEOPLE.md#L%d] kaguya", ln) < 0)
		exit(2);
	CHECK_HAS(h, cite);
	free(cite);
	free(h);

	free(cog);
	free(ppl);
	free(mem);
	zcor_close(z);
}

/* ---- 2. upsert and remove --------------------------------------------------- */

static void upsert_cog(zcor *z, const char *name, const char *meaning)
{
	json_t *r = t_call(z, NULL, "qq_memory",
		       "{\"action\":\"upsert\",\"path\":\"COGNITION.md\",\"name\":\"%s\",\"meaning\":\"%s\","
		       "\"type\":\"谐音\"}",
		       name, meaning);
	CHECK_OK(r);
	json_decref(r);
}

static void Q_VIEW_upsert_same_name_replaces_in_place(void)
{
	zcor *z = open_views(NULL);
	upsert_cog(z, "芜湖", "感叹");
	json_t *r = t_call(z, NULL, "qq_memory",
		       "{\"action\":\"upsert\",\"path\":\"COGNITION.md\",\"name\":\"蚌埠住了\","
		       "\"meaning\":\"忍不住笑了\",\"usage\":\"有人发离谱东西时\",\"type\":\"谐音\","
		       "\"variants\":\"绷不住/绷\"}");
	CHECK_OK(r);
	json_decref(r);
	upsert_cog(z, "栓Q", "谢谢（无奈）");
	char *before = view_text(z, NULL, "COGNITION.md");
	int ln = line_no(before, BENG_LINE);
	CHECK(ln > 0);
	char *id = sql_str(z, "SELECT id FROM nodes WHERE title = '蚌埠住了'");
	long long n0 = sql_int(z, "SELECT count(*) FROM nodes WHERE kind = 'cognition'");

	/* only the meaning: usage, type and variants keep their values */
	r = t_call(z, NULL, "qq_memory",
	       "{\"action\":\"upsert\",\"path\":\"COGNITION.md\",\"name\":\"蚌埠住了\","
	       "\"meaning\":\"笑得绷不住了\"}");
	CHECK_OK(r);
	CHECK(json_is_false(t_get(r, "created")));
	CHECK_INT(t_int(r, "entries"), 3);
	json_decref(r);
	char *after = view_text(z, NULL, "COGNITION.md");
	const char *want = "- 蚌埠住了｜笑得绷不住了｜用法：有人发离谱东西时｜变体：绷不住/绷";
	CHECK_INT(line_no(after, want), ln);
	CHECK_INT(count_sub(after, "蚌埠住了"), 1);
	CHECK_INT(sql_int(z, "SELECT count(*) FROM nodes WHERE kind = 'cognition'"), n0);
	char *id2 = sql_str(z, "SELECT id FROM nodes WHERE title = '蚌埠住了'");
	CHECK_STR(id2, id);
	/* the neighbours did not move either */
	CHECK_INT(line_no(after, "- 芜湖｜感叹"), line_no(before, "- 芜湖｜感叹"));
	CHECK_INT(line_no(after, "- 栓Q｜谢谢（无奈）"), line_no(before, "- 栓Q｜谢谢（无奈）"));
	/* the name is matched normalised (NFKC + case): still one entry */
	r = t_call(z, NULL, "qq_memory", "{\"action\":\"upsert\",\"path\":\"COGNITION.md\",\"name\":\"栓q\",\"meaning\":\"谢谢\"}");
	CHECK_OK(r);
	CHECK(json_is_false(t_get(r, "created")));
	json_decref(r);
	CHECK_INT(sql_int(z, "SELECT count(*) FROM nodes WHERE kind = 'cognition'"), n0);
	free(id2);
	free(id);
	free(before);
	free(after);
	zcor_close(z);
}

static void Q_VIEW_remove_by_name_and_by_line(void)
{
	zcor *z = open_views(NULL);
	upsert_cog(z, "芜湖", "感叹");
	upsert_cog(z, "蚌埠住了", "忍不住笑了");
	upsert_cog(z, "栓Q", "谢谢（无奈）");
	json_t *r = qm_text(z, NULL, "append", "COGNITION.md", "## 谐音\n- 只有一段\n", 0);
	CHECK_OK(r);
	json_decref(r);

	/* by name */
	r = t_call(z, NULL, "qq_memory", "{\"action\":\"remove\",\"path\":\"COGNITION.md\",\"name\":\"蚌埠住了\"}");
	CHECK_OK(r);
	json_decref(r);
	char *t = view_text(z, NULL, "COGNITION.md");
	CHECK_LACKS(t, "蚌埠住了");
	CHECK_HAS(t, "- 芜湖｜感叹\n");
	CHECK_INT(sql_int(z, "SELECT count(*) FROM nodes WHERE title = '蚌埠住了'"), 0);

	/* by line, as read */
	int ln = line_no(t, "- 栓Q｜谢谢（无奈）");
	CHECK(ln > 0);
	r = t_call(z, NULL, "qq_memory", "{\"action\":\"remove\",\"path\":\"COGNITION.md\",\"line\":%d}", ln);
	CHECK_OK(r);
	json_decref(r);
	free(t);
	t = view_text(z, NULL, "COGNITION.md");
	CHECK_LACKS(t, "栓Q");
	CHECK_HAS(t, "- 芜湖｜感叹\n");
	CHECK_HAS(t, "- 只有一段\n");

	/* an unparsed line, by line */
	ln = line_no(t, "- 只有一段");
	CHECK(ln > 0);
	r = t_call(z, NULL, "qq_memory", "{\"action\":\"remove\",\"path\":\"COGNITION.md\",\"line\":%d}", ln);
	CHECK_OK(r);
	json_decref(r);
	free(t);
	t = view_text(z, NULL, "COGNITION.md");
	CHECK_LACKS(t, "只有一段");
	CHECK_HAS(t, "- 芜湖｜感叹\n");
	CHECK_INT(sql_int(z, "SELECT count(*) FROM view_unparsed"), 0);

	/* nothing there: not_found, nothing removed */
	r = t_call(z, NULL, "qq_memory", "{\"action\":\"remove\",\"path\":\"COGNITION.md\",\"name\":\"没有这个\"}");
	CHECK_ERR(r, "not_found");
	json_decref(r);
	r = t_call(z, NULL, "qq_memory", "{\"action\":\"remove\",\"path\":\"COGNITION.md\",\"line\":1}");
	CHECK_ERR(r, "not_found");
	json_decref(r);
	char *t2 = view_text(z, NULL, "COGNITION.md");
	CHECK_STR(t2, t);
	free(t2);
	free(t);
	zcor_close(z);
}

/* ---- 3. PEOPLE and relationships ---------------------------------------------- */

static void Q_VIEW_people_upsert_keeps_affinity(void)
{
	zcor *z = open_views(NULL);
	json_t *r = t_call(z, NULL, "zcor_relationship_write",
			   "{\"personId\":\"100000001\",\"name\":\"kaguya\",\"relationship\":\"群主\","
			   "\"affinity\":42,\"reason\":\"常带大家打本\"}");
	CHECK_OK(r);
	json_decref(r);
	r = t_call(z, "group:100000001", "qq_memory",
	       "{\"action\":\"upsert\",\"path\":\"PEOPLE.md\",\"name\":\"kaguya\",\"qq\":\"100000001\","
	       "\"aliases\":\"soyo/爽世\",\"meaning\":\"群主，周六常组织打本\"}");
	CHECK_OK(r);
	CHECK(json_is_false(t_get(r, "created")));
	json_decref(r);
	CHECK_INT(t_sql_int(zcor_dir(z), "SELECT count(*) FROM people"), 1);
	r = t_call(z, NULL, "zcor_relationship_read", "{\"personId\":\"100000001\"}");
	CHECK_OK(r);
	char *d = json_dumps(r, JSON_COMPACT);
	CHECK_HAS(d, "42");
	CHECK_HAS(d, "群主，周六常组织打本");
	CHECK_HAS(d, "爽世");
	free(d);
	json_decref(r);
	char *t = view_text(z, NULL, "PEOPLE.md");
	CHECK_HAS(t, "- kaguya（QQ 100000001）（别名：soyo/爽世）｜群主，周六常组织打本｜好感 42｜首见 ");
	free(t);
	/* and a second upsert with other fields keeps it too */
	r = t_call(z, NULL, "qq_memory", "{\"action\":\"upsert\",\"path\":\"PEOPLE.md\",\"name\":\"kaguya\",\"qq\":\"100000001\"}");
	CHECK_OK(r);
	json_decref(r);
	CHECK_INT(t_sql_int(zcor_dir(z), "SELECT affinity FROM people WHERE person_id = '100000001'"), 42);
	t = view_text(z, NULL, "PEOPLE.md");
	CHECK_HAS(t, "（别名：soyo/爽世）｜群主，周六常组织打本｜好感 42");
	free(t);
	zcor_close(z);
}

/* ---- 4. write ----------------------------------------------------------------- */

/* Does note name line n ("L12"), not merely a longer number? */
static int note_names_line(const char *note, int n)
{
	char tag[32];
	snprintf(tag, sizeof(tag), "L%d", n);
	for (const char *p = note; p && (p = strstr(p, tag)); p += strlen(tag)) {
		char c = p[strlen(tag)];
		if (!(c >= '0' && c <= '9') && (p == note || p[-1] == ' '))
			return 1;
	}
	return 0;
}

static void Q_VIEW_write_normalises_and_keeps_unparsed(void)
{
	zcor *z = open_views(NULL);
	const char *doc = "# COGNITION.md\n"
			  "## 谐音\n"
			  "- 蚌埠住了｜忍不住笑了\n"
			  "- 只有一段\n"
			  "## 缩写\n"
			  "- yyds｜永远的神\n"
			  "- yyds｜永远的神\n"
			  "## 谐音\n"
			  "- 蚌埠住了｜忍不住笑了｜用法：有人发离谱东西时\n"
			  "- 只有一段\n"
			  "这里是一段随手写的自由文本\n";
	json_t *r = qm_text(z, NULL, "write", "COGNITION.md", doc, 0);
	CHECK_OK(r);
	json_decref(r);
	r = t_call(z, NULL, "qq_memory", "{\"action\":\"read\",\"path\":\"COGNITION.md\"}");
	const char *t = t_str(r, "text");
	CHECK_INT(count_sub(t, "## 谐音\n"), 1);
	CHECK_INT(count_sub(t, "## 缩写\n"), 1);
	CHECK_INT(count_sub(t, "yyds"), 1);
	/* a repeated name: the later line is the entry, the earlier one is
	 * kept as written (Q_VIEW_write_drops_only_identical_lines) */
	CHECK_INT(count_lines_equal(t, "- 蚌埠住了｜忍不住笑了｜用法：有人发离谱东西时"), 1);
	CHECK_INT(count_lines_equal(t, "- 蚌埠住了｜忍不住笑了"), 1);
	CHECK_INT(count_lines_equal(t, "- 只有一段"), 1);
	CHECK_INT(count_lines_equal(t, "这里是一段随手写的自由文本"), 1);
	CHECK_INT(sql_int(z, "SELECT count(*) FROM nodes WHERE kind = 'cognition'"), 2);
	/* the unparsed lines are reported with their line numbers */
	const char *note = t_str(r, "note");
	CHECK(note != NULL);
	CHECK(note_names_line(note, line_no(t, "- 只有一段")));
	CHECK(note_names_line(note, line_no(t, "这里是一段随手写的自由文本")));
	json_decref(r);

	/* they survive a later upsert (and a later append) */
	upsert_cog(z, "芜湖", "感叹");
	r = qm_text(z, NULL, "append", "COGNITION.md", "## 专名\n- 大狗｜某个主播\n", 0);
	CHECK_OK(r);
	json_decref(r);
	r = t_call(z, NULL, "qq_memory", "{\"action\":\"read\",\"path\":\"COGNITION.md\"}");
	t = t_str(r, "text");
	CHECK_INT(count_lines_equal(t, "- 只有一段"), 1);
	CHECK_INT(count_lines_equal(t, "这里是一段随手写的自由文本"), 1);
	CHECK_HAS(t, "- 芜湖｜感叹\n");
	CHECK(t_str(r, "note") && note_names_line(t_str(r, "note"), line_no(t, "- 只有一段")));
	json_decref(r);
	zcor_close(z);
}

/* Seed 003: a write removes only identical lines (and merges duplicate
 * headings). Two different lines with one name, and a "# …" line that is
 * not the view's title, are the model's text: kept verbatim and named in
 * the result and in read's note — the audit's repro. */
static void Q_VIEW_write_drops_only_identical_lines(void)
{
	zcor *z = open_views(NULL);
	const char *doc = "# COGNITION.md\n"
			  "## 谐音\n"
			  "- 蚌埠住了｜忍不住笑了\n"
			  "# 注意：以下是旧梗\n"
			  "- 蚌埠住了｜另一个意思，老群友才懂\n"
			  "- 蚌埠住了｜另一个意思，老群友才懂\n"
			  "# 注意：以下是旧梗\n"
			  "## 缩写\n"
			  "- yyds｜永远的神\n";
	json_t *r = qm_text(z, NULL, "write", "COGNITION.md", doc, 0);
	CHECK_OK(r);
	CHECK_INT(t_int(r, "parsedEntries"), 2);
	/* the second copy of each identical line */
	CHECK_INT(t_int(r, "mergedDuplicates"), 2);
	CHECK_INT(json_array_size(t_get(r, "keptAsWritten")), 2);
	CHECK_INT(t_int(r, "keptAsWritten.0.line"), 3);
	CHECK_STR(t_str(r, "keptAsWritten.0.text"), "- 蚌埠住了｜忍不住笑了");
	CHECK_HAS(t_str(r, "keptAsWritten.0.why"), "same name");
	CHECK_INT(t_int(r, "keptAsWritten.1.line"), 4);
	CHECK_STR(t_str(r, "keptAsWritten.1.text"), "# 注意：以下是旧梗");
	CHECK_HAS(t_str(r, "keptAsWritten.1.why"), "heading");
	CHECK_INT(t_int(r, "unparsedLines"), 2);
	json_decref(r);

	r = t_call(z, NULL, "qq_memory", "{\"action\":\"read\",\"path\":\"COGNITION.md\"}");
	const char *t = t_str(r, "text");
	/* every different line the model wrote is there, once, in its order */
	CHECK_INT(count_lines_equal(t, "- 蚌埠住了｜忍不住笑了"), 1);
	CHECK_INT(count_lines_equal(t, "# 注意：以下是旧梗"), 1);
	CHECK_INT(count_lines_equal(t, "- 蚌埠住了｜另一个意思，老群友才懂"), 1);
	CHECK_INT(count_lines_equal(t, "- yyds｜永远的神"), 1);
	CHECK(line_no(t, "- 蚌埠住了｜忍不住笑了") < line_no(t, "# 注意：以下是旧梗"));
	CHECK(line_no(t, "# 注意：以下是旧梗") < line_no(t, "- 蚌埠住了｜另一个意思，老群友才懂"));
	/* the title line is the view's own, not a second one */
	CHECK_INT(count_sub(t, "# COGNITION.md"), 1);
	CHECK(strncmp(t, "# COGNITION.md — ", strlen("# COGNITION.md — ")) == 0);
	const char *note = t_str(r, "note");
	CHECK(note && note_names_line(note, line_no(t, "- 蚌埠住了｜忍不住笑了")));
	CHECK(note && note_names_line(note, line_no(t, "# 注意：以下是旧梗")));
	json_decref(r);
	/* the entry is the later line */
	char *meaning = sql_str(z, "SELECT content FROM nodes WHERE kind = 'cognition' AND title = '蚌埠住了'");
	CHECK_STR(meaning, "另一个意思，老群友才懂");
	free(meaning);
	CHECK_INT(sql_int(z, "SELECT count(*) FROM nodes WHERE kind = 'cognition'"), 2);

	/* writing back what was read changes nothing */
	char *before = view_text(z, NULL, "COGNITION.md");
	r = qm_text(z, NULL, "write", "COGNITION.md", before, 0);
	CHECK_OK(r);
	CHECK_INT(t_int(r, "mergedDuplicates"), 0);
	json_decref(r);
	char *after = view_text(z, NULL, "COGNITION.md");
	CHECK_STR(after, before);
	free(after);
	free(before);

	/* a "# …" line after the first entry is text, whatever it says */
	r = qm_text(z, NULL, "write", "conversations/group-1/MEMORY.md",
		    "## 惯例与偏好\n- 周五固定开黑｜晚上八点，别迟到\n# 群里的老规矩\n", 0);
	CHECK_OK(r);
	CHECK(t_get(r, "titleReplaced") == NULL);
	CHECK_INT(json_array_size(t_get(r, "keptAsWritten")), 1);
	CHECK_STR(t_str(r, "keptAsWritten.0.text"), "# 群里的老规矩");
	json_decref(r);
	char *mem = view_text(z, NULL, "conversations/group-1/MEMORY.md");
	CHECK_INT(count_lines_equal(mem, "# 群里的老规矩"), 1);
	CHECK_HAS(mem, "- 周五固定开黑｜晚上八点，别迟到\n");
	free(mem);
	zcor_close(z);
}

/* The first non-empty line, when it is a "# …" heading, is the file's
 * title whatever its text (the old plugin wrote its own, e.g. 「# 公共认知」):
 * the rendered title replaces it and the result names the old one. A later
 * "# …" line is still kept as written. */
static void Q_VIEW_write_replaces_any_leading_title(void)
{
	zcor *z = open_views(NULL);
	const char *doc = "\n# 公共认知\n\n"
			  "## 谐音\n"
			  "- 蚌埠住了｜忍不住笑了\n"
			  "# 注意：以下是旧梗\n"
			  "## 缩写\n"
			  "- yyds｜永远的神\n";
	json_t *r = qm_text(z, NULL, "write", "COGNITION.md", doc, 0);
	CHECK_OK(r);
	CHECK_INT(t_int(r, "parsedEntries"), 2);
	CHECK_STR(t_str(r, "titleReplaced"), "# 公共认知");
	CHECK_INT(json_array_size(t_get(r, "keptAsWritten")), 1);
	CHECK_STR(t_str(r, "keptAsWritten.0.text"), "# 注意：以下是旧梗");
	CHECK_INT(t_int(r, "unparsedLines"), 1);
	json_decref(r);
	r = t_call(z, NULL, "qq_memory", "{\"action\":\"read\",\"path\":\"COGNITION.md\"}");
	const char *t = t_str(r, "text");
	CHECK(strncmp(t, "# COGNITION.md — ", strlen("# COGNITION.md — ")) == 0);
	CHECK_INT(count_sub(t, "公共认知"), 0);
	CHECK_INT(count_lines_equal(t, "# 注意：以下是旧梗"), 1);
	CHECK(t_str(r, "note") && !strstr(t_str(r, "note"), "公共认知"));
	CHECK_INT(sql_int(z, "SELECT count(*) FROM view_unparsed WHERE path = 'COGNITION.md'"), 1);
	/* writing back what was read: the rendered title is not reported */
	char *before = view_text(z, NULL, "COGNITION.md");
	json_decref(r);
	r = qm_text(z, NULL, "write", "COGNITION.md", before, 0);
	CHECK_OK(r);
	CHECK(t_get(r, "titleReplaced") == NULL);
	json_decref(r);
	char *after = view_text(z, NULL, "COGNITION.md");
	CHECK_STR(after, before);
	free(after);
	free(before);

	/* a group MEMORY.md with the old plugin's title */
	r = qm_text(z, NULL, "write", "conversations/group-1/MEMORY.md",
		    "# 群记忆\n## 惯例与偏好\n- 周五固定开黑｜晚上八点，别迟到\n", 0);
	CHECK_OK(r);
	CHECK_STR(t_str(r, "titleReplaced"), "# 群记忆");
	CHECK(t_get(r, "keptAsWritten") == NULL);
	json_decref(r);
	char *mem = view_text(z, NULL, "conversations/group-1/MEMORY.md");
	CHECK_INT(count_sub(mem, "群记忆"), 0);
	CHECK_HAS(mem, "- 周五固定开黑｜晚上八点，别迟到\n");
	free(mem);
	zcor_close(z);
}

static void Q_VIEW_write_90_percent_guard(void)
{
	zcor *z = open_views(NULL);
	char doc[4096] = "## 谐音\n";
	for (int i = 0; i < 10; i++)
		snprintf(doc + strlen(doc), sizeof(doc) - strlen(doc), "- 梗%02d｜意思%02d\n", i, i);
	json_t *r = qm_text(z, NULL, "write", "COGNITION.md", doc, 0);
	CHECK_OK(r);
	json_decref(r);
	char *before = view_text(z, NULL, "COGNITION.md");
	struct state s0 = state_of(z);

	/* 8 of 10: below 90%, refused, nothing written */
	const char *eight = "## 谐音\n- 梗00｜意思00\n- 梗01｜意思01\n- 梗02｜意思02\n- 梗03｜意思03\n"
			    "- 梗04｜意思04\n- 梗05｜意思05\n- 梗06｜意思06\n- 梗07｜意思07\n";
	r = qm_text(z, NULL, "write", "COGNITION.md", eight, 0);
	CHECK_ERR(r, "conflict");
	json_decref(r);
	char *t = view_text(z, NULL, "COGNITION.md");
	CHECK_STR(t, before);
	free(t);
	struct state s1 = state_of(z);
	check_same_state(&s0, &s1, __LINE__);

	/* 9 of 10 is exactly 90%: not below, allowed */
	char nine[4096];
	snprintf(nine, sizeof(nine), "%s- 梗08｜意思08\n", eight);
	r = qm_text(z, NULL, "write", "COGNITION.md", nine, 0);
	CHECK_OK(r);
	json_decref(r);
	CHECK_INT(sql_int(z, "SELECT count(*) FROM nodes WHERE kind = 'cognition'"), 9);

	/* force: true allows the drop */
	r = qm_text(z, NULL, "write", "COGNITION.md", "## 谐音\n- 梗00｜意思00\n", 1);
	CHECK_OK(r);
	json_decref(r);
	t = view_text(z, NULL, "COGNITION.md");
	CHECK_HAS(t, "- 梗00｜意思00\n");
	CHECK_LACKS(t, "梗01");
	free(t);
	CHECK_INT(sql_int(z, "SELECT count(*) FROM nodes WHERE kind = 'cognition'"), 1);
	free(s0.views);
	free(before);
	zcor_close(z);
}

static void Q_VIEW_write_keeps_last_20_versions(void)
{
	zcor *z = open_views(NULL);
	const char *path = "conversations/group-1/MEMORY.md";
	char *texts[23] = {0};
	for (int i = 0; i < 22; i++) {
		texts[i] = view_text(z, "group:1", path);
		char doc[256];
		snprintf(doc, sizeof(doc), "## 事实\n- 第%02d版｜内容%02d\n", i, i);
		json_t *r = qm_text(z, "group:1", "write", path, doc, 1);
		CHECK_OK(r);
		json_decref(r);
	}
	texts[22] = view_text(z, "group:1", path);
	CHECK_HAS(texts[22], "- 第21版｜内容21\n");
	CHECK_INT(sql_int(z, "SELECT count(*) FROM view_versions WHERE path = '%s'", path), 20);
	/* version 1 is the text before the last write, version 20 the oldest kept */
	for (int v = 1; v <= 20; v++) {
		json_t *r = t_call(z, "group:1", "qq_memory", "{\"action\":\"read\",\"path\":\"%s\",\"version\":%d}", path, v);
		CHECK_OK(r);
		const char *t = t_str(r, "text");
		if (!t || strcmp(t, texts[22 - v]) != 0) {
			fprintf(stderr, "%s:%d: version %d = '%s', expected '%s'\n", __FILE__, __LINE__, v,
				t ? t : "(null)", texts[22 - v]);
			t_failures++;
		}
		json_decref(r);
	}
	json_t *r = t_call(z, "group:1", "qq_memory", "{\"action\":\"read\",\"path\":\"%s\",\"version\":1}", path);
	CHECK_HAS(t_str(r, "text"), "- 第20版｜内容20\n");
	CHECK_LACKS(t_str(r, "text"), "第21版");
	json_decref(r);
	for (int i = 0; i < 23; i++)
		free(texts[i]);
	zcor_close(z);
}

/* ---- 5. append ----------------------------------------------------------------- */

static void Q_VIEW_append_adds_at_the_end(void)
{
	zcor *z = open_views(NULL);
	const char *path = "conversations/group-1/MEMORY.md";
	json_t *r = qm_text(z, "group:1", "write", path,
			    "## 事实\n- 甲｜第一条\n- 乙｜第二条\n## 在追\n- 丙｜在追的事\n", 0);
	CHECK_OK(r);
	json_decref(r);
	r = qm_text(z, "group:1", "append", path, "## 事实\n- 丁｜追加的一条\n- 戊｜又一条\n", 0);
	CHECK_OK(r);
	CHECK_INT(t_int(r, "entries"), 5);
	json_decref(r);
	char *t = view_text(z, "group:1", path);
	int a = line_no(t, "- 甲｜第一条"), b = line_no(t, "- 乙｜第二条"), d = line_no(t, "- 丁｜追加的一条"),
	    e = line_no(t, "- 戊｜又一条"), c = line_no(t, "- 丙｜在追的事");
	CHECK(a > 0 && b > a && d > b && e > d);
	CHECK(c > 0);
	/* nothing before the existing entries changed */
	CHECK_HAS(t, "## 事实\n- 甲｜第一条\n- 乙｜第二条\n- 丁｜追加的一条\n- 戊｜又一条\n");
	free(t);
	zcor_close(z);
}

/* ---- 6. path confinement -------------------------------------------------------- */

static void Q_VIEW_paths_are_confined(void)
{
	zcor *z = open_views(NULL);
	upsert_cog(z, "蚌埠住了", "忍不住笑了");
	char long_path[400];
	snprintf(long_path, sizeof(long_path), "conversations/group-");
	while (strlen(long_path) < 290)
		strcat(long_path, "1");
	strcat(long_path, "/MEMORY.md");
	CHECK(strlen(long_path) == 300);
	const char *bad[] = {"../x",
			     "/etc/passwd",
			     "conversations/../PEOPLE.md",
			     "foo.md",
			     "conversations/group-1/other.md",
			     "COGNITION.md\\u0000x",
			     long_path,
			     "conversations/badkey/MEMORY.md",
			     "./COGNITION.md",
			     "conversations/group-1/../../COGNITION.md",
			     "conversations/group-1/archive/2026-13.md"};
	struct state s0 = state_of(z);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		static const char *const actions[] = {"read", "upsert", "write", "append", "remove"};
		for (size_t k = 0; k < 5; k++) {
			json_t *r = t_call(z, NULL, "qq_memory",
				       "{\"action\":\"%s\",\"path\":\"%s\",\"name\":\"x\",\"meaning\":\"y\","
				       "\"content\":\"## 事实\\n- x｜y\\n\",\"force\":true}",
				       actions[k], bad[i]);
			const char *c = t_errcode(r);
			if (!c || strcmp(c, "invalid_argument") != 0) {
				char *d = json_dumps(r, JSON_COMPACT);
				fprintf(stderr, "%s:%d: %s %s: %s, expected invalid_argument\n", __FILE__,
					__LINE__, actions[k], bad[i], d);
				free(d);
				t_failures++;
			}
			json_decref(r);
		}
	}
	struct state s1 = state_of(z);
	check_same_state(&s0, &s1, __LINE__);
	free(s0.views);
	zcor_close(z);
}

/* ---- 7. byte limit ------------------------------------------------------------- */

static void Q_VIEW_view_byte_limit(void)
{
	zcor *z = open_views("{\"viewMaxBytes\":1024}");
	int refused = 0;
	for (int i = 0; i < 40 && !refused; i++) {
		char *before = view_text(z, NULL, "COGNITION.md");
		struct state s0 = state_of(z);
		json_t *r = t_call(z, NULL, "qq_memory",
			       "{\"action\":\"upsert\",\"path\":\"COGNITION.md\",\"name\":\"梗%02d\","
			       "\"meaning\":\"一段足够长的解释，让这个视图很快超过一千字节的上限\","
			       "\"type\":\"其它\"}",
			       i);
		if (t_errcode(r)) {
			refused = 1;
			CHECK_ERR(r, "invalid_argument");
			CHECK_HAS(t_errmsg(r), "COGNITION.md");
			CHECK(strlen(before) <= 1024);
			char *after = view_text(z, NULL, "COGNITION.md");
			CHECK_STR(after, before);
			free(after);
			struct state s1 = state_of(z);
			check_same_state(&s0, &s1, __LINE__);
		} else {
			CHECK(t_int(r, "bytes") <= 1024);
		}
		json_decref(r);
		free(s0.views);
		free(before);
	}
	CHECK(refused);
	/* a write over the limit is refused the same way */
	char big[2048] = "";
	for (int i = 0; i < 30; i++)
		snprintf(big + strlen(big), sizeof(big) - strlen(big), "- 写%02d｜很长很长的解释\n", i);
	char *before = view_text(z, NULL, "COGNITION.md");
	json_t *r = qm_text(z, NULL, "write", "COGNITION.md", big, 1);
	CHECK_ERR(r, "invalid_argument");
	json_decref(r);
	char *after = view_text(z, NULL, "COGNITION.md");
	CHECK_STR(after, before);
	free(after);
	free(before);
	zcor_close(z);
}

/* ---- 8. the write gate -------------------------------------------------------- */

static void Q_VIEW_write_gate(void)
{
	zcor *z = open_views(NULL);
	/* the host plane writes everything */
	upsert_seed_examples(z, NULL);
	json_t *r = t_call(z, NULL, "qq_memory",
		       "{\"action\":\"upsert\",\"path\":\"conversations/group-2/MEMORY.md\",\"name\":\"二群秘密\","
		       "\"meaning\":\"只有二群知道\"}");
	CHECK_OK(r);
	json_decref(r);
	r = qm_text(z, NULL, "write", "INDEX.md", "人物看 PEOPLE.md\n", 0);
	CHECK_OK(r);
	json_decref(r);
	r = t_call(z, NULL, "qq_memory",
	       "{\"action\":\"upsert\",\"path\":\"conversations/private-200/MEMORY.md\",\"name\":\"宿主写的\","
	       "\"meaning\":\"宿主平面不受限\"}");
	CHECK_OK(r);
	json_decref(r);

	/* a private conversation cannot write the global views */
	struct state s0 = state_of(z);
	const char *globals[] = {"PEOPLE.md", "COGNITION.md"};
	for (int g = 0; g < 2; g++) {
		json_t *calls[4];
		calls[0] = t_call(z, "private:200", "qq_memory",
			      "{\"action\":\"upsert\",\"path\":\"%s\",\"name\":\"私聊学的\",\"meaning\":\"不该公开\"}",
			      globals[g]);
		calls[1] = qm_text(z, "private:200", "write", globals[g], "## 其它\n- 私聊学的｜不该公开\n", 1);
		calls[2] = qm_text(z, "private:200", "append", globals[g], "## 其它\n- 私聊学的｜不该公开\n", 0);
		calls[3] = t_call(z, "private:200", "qq_memory", "{\"action\":\"remove\",\"path\":\"%s\",\"name\":\"%s\"}",
			      globals[g], g ? "蚌埠住了" : "kaguya");
		for (int k = 0; k < 4; k++) {
			CHECK_ERR(calls[k], "forbidden");
			CHECK_HAS(t_errmsg(calls[k]), "conversations/private-200/MEMORY.md");
			json_decref(calls[k]);
		}
	}
	struct state s1 = state_of(z);
	check_same_state(&s0, &s1, __LINE__);
	free(s0.views);

	/* … but it writes its own MEMORY.md */
	r = t_call(z, "private:200", "qq_memory",
	       "{\"action\":\"upsert\",\"path\":\"conversations/private-200/MEMORY.md\",\"name\":\"私聊学的\","
	       "\"meaning\":\"只记在这里\"}");
	CHECK_OK(r);
	json_decref(r);
	char *t = view_text(z, "private:200", "conversations/private-200/MEMORY.md");
	CHECK_HAS(t, "- 私聊学的｜只记在这里");
	free(t);

	/* a group reads and writes only its own MEMORY.md */
	s0 = state_of(z);
	r = t_call(z, "group:1", "qq_memory", "{\"action\":\"read\",\"path\":\"conversations/group-2/MEMORY.md\"}");
	CHECK(t_errcode(r) && (!strcmp(t_errcode(r), "not_found") || !strcmp(t_errcode(r), "forbidden")));
	char *rd = json_dumps(r, JSON_COMPACT);
	CHECK_LACKS(rd, "二群秘密");
	free(rd);
	json_decref(r);
	r = t_call(z, "group:1", "qq_memory",
	       "{\"action\":\"upsert\",\"path\":\"conversations/group-2/MEMORY.md\",\"name\":\"越界\","
	       "\"meaning\":\"写别的群\"}");
	CHECK(t_errcode(r) && (!strcmp(t_errcode(r), "not_found") || !strcmp(t_errcode(r), "forbidden")));
	json_decref(r);
	r = qm_text(z, "group:1", "write", "conversations/group-2/MEMORY.md", "## 事实\n- 越界｜写别的群\n", 1);
	CHECK(t_errcode(r) && (!strcmp(t_errcode(r), "not_found") || !strcmp(t_errcode(r), "forbidden")));
	json_decref(r);
	r = t_call(z, "group:1", "qq_memory", "{\"action\":\"remove\",\"path\":\"conversations/group-2/MEMORY.md\",\"name\":\"二群秘密\"}");
	CHECK(t_errcode(r) && (!strcmp(t_errcode(r), "not_found") || !strcmp(t_errcode(r), "forbidden")));
	json_decref(r);
	s1 = state_of(z);
	check_same_state(&s0, &s1, __LINE__);
	free(s0.views);

	/* … and does not see it in list or search */
	r = t_call(z, "group:1", "qq_memory", "{\"action\":\"list\"}");
	CHECK_OK(r);
	char *d = json_dumps(r, JSON_COMPACT);
	CHECK_LACKS(d, "group-2");
	CHECK_LACKS(d, "private-200");
	CHECK_HAS(d, "COGNITION.md");
	free(d);
	json_decref(r);
	r = t_call(z, "group:1", "qq_memory", "{\"action\":\"search\",\"query\":\"二群秘密\"}");
	CHECK_OK(r);
	CHECK_INT(json_array_size(t_get(r, "hits")), 0);
	json_decref(r);
	/* the host plane sees both */
	r = t_call(z, NULL, "qq_memory", "{\"action\":\"list\"}");
	d = json_dumps(r, JSON_COMPACT);
	CHECK_HAS(d, "conversations/group-2/MEMORY.md");
	CHECK_HAS(d, "conversations/private-200/MEMORY.md");
	free(d);
	json_decref(r);
	zcor_close(z);
}

/* ---- 9. hard rules -------------------------------------------------------------- */

static void Q_VIEW_hard_rules(void)
{
	zcor *z = open_views(NULL);
	upsert_cog(z, "蚌埠住了", "忍不住笑了");
	struct state s0 = state_of(z);
	json_t *r = t_call(z, NULL, "qq_memory",
		       "{\"action\":\"upsert\",\"path\":\"COGNITION.md\",\"name\":\"无语\","
		       "\"meaning\":\"见 .qq-media/abc.jpg\"}");
	CHECK_ERR(r, "invalid_argument");
	json_decref(r);
	r = t_call(z, NULL, "qq_memory",
	       "{\"action\":\"upsert\",\"path\":\"COGNITION.md\",\"name\":\"无语\","
	       "\"meaning\":\"那张图 stickers/x.gif\"}");
	CHECK_ERR(r, "invalid_argument");
	json_decref(r);
	r = t_call(z, NULL, "qq_memory",
	       "{\"action\":\"upsert\",\"path\":\"COGNITION.md\",\"name\":\"无语\",\"meaning\":\"无语\","
	       "\"usage\":\"发 media/abc.gif\"}");
	CHECK_ERR(r, "invalid_argument");
	json_decref(r);
	/* no media/ path in STICKERS.md: collect first */
	r = t_call(z, NULL, "qq_memory",
	       "{\"action\":\"upsert\",\"path\":\"STICKERS.md\",\"name\":\"无语\",\"meaning\":\"无语\","
	       "\"image\":\"media/abc.gif\"}");
	CHECK_ERR(r, "invalid_argument");
	CHECK_HAS(t_errmsg(r), "qq_save_sticker");
	json_decref(r);
	r = t_call(z, NULL, "qq_memory",
	       "{\"action\":\"upsert\",\"path\":\"STICKERS.md\",\"name\":\"无语\",\"meaning\":\"无语\","
	       "\"image\":\".qq-media/abc.gif\"}");
	CHECK_ERR(r, "invalid_argument");
	json_decref(r);
	/* a whole-view write with a path is rejected too */
	r = qm_text(z, NULL, "write", "COGNITION.md",
		    "## 谐音\n- 蚌埠住了｜忍不住笑了\n- 无语｜.qq-media/abc.jpg\n", 0);
	CHECK(t_errcode(r) != NULL);
	json_decref(r);
	/* the path as a field of its own (where STICKERS.md keeps the image) */
	static const char *const own_field[] = {"stickers/无语.gif", ".qq-media/abc.jpg", "media/abc.gif",
						".qq-stickers/无语.gif"};
	for (size_t i = 0; i < sizeof(own_field) / sizeof(own_field[0]); i++) {
		char doc[256];
		snprintf(doc, sizeof(doc), "## 谐音\n- 蚌埠住了｜忍不住笑了\n- 无语｜懒得吐槽｜%s\n", own_field[i]);
		r = qm_text(z, NULL, "write", "COGNITION.md", doc, 0);
		if (!t_errcode(r)) {
			fprintf(stderr, "%s:%d: a COGNITION.md write with the field '%s' was accepted\n",
				__FILE__, __LINE__, own_field[i]);
			t_failures++;
		}
		json_decref(r);
		r = qm_text(z, NULL, "append", "COGNITION.md", doc, 0);
		if (!t_errcode(r)) {
			fprintf(stderr, "%s:%d: a COGNITION.md append with the field '%s' was accepted\n",
				__FILE__, __LINE__, own_field[i]);
			t_failures++;
		}
		json_decref(r);
	}
	CHECK_INT(sql_int(z, "SELECT count(*) FROM nodes WHERE kind = 'cognition' AND "
			     "json_extract(attrs, '$.image') IS NOT NULL"),
		  0);
	r = qm_text(z, NULL, "append", "COGNITION.md", "## 其它\n那张图在 stickers/无语.gif\n", 0);
	CHECK(t_errcode(r) != NULL);
	json_decref(r);
	r = qm_text(z, NULL, "write", "STICKERS.md", "## 未收藏\n- 无语｜懒得吐槽｜media/abc.gif\n", 0);
	CHECK(t_errcode(r) != NULL);
	json_decref(r);
	struct state s1 = state_of(z);
	check_same_state(&s0, &s1, __LINE__);
	char *t = view_text(z, NULL, "COGNITION.md");
	CHECK_LACKS(t, "media");
	CHECK_LACKS(t, "stickers/");
	free(t);
	free(s0.views);
	zcor_close(z);
}

/* ---- 10. stickers ---------------------------------------------------------------- */

/* The hashes of the images put_media logged last (a cached image is one
 * the cache's table knows, from a logged message: media.c). */
static char HASH1[65], HASH2[65];

/* Logs an image (GIF or PNG magic bytes + tail) in a group:1 message, as
 * a host passes a file, and sets hash to its sha-256: the reference
 * media/<hash>.<ext> is then a cached image group:1 and the host see. */
static void put_media(zcor *z, char *hash, const char *ext, const char *tail)
{
	static int seq;
	char path[4096], batch[8192], *out = NULL;
	snprintf(path, sizeof(path), "%s/put-media-%d.%s", t_tmpdir(), ++seq, ext);
	FILE *f = fopen(path, "wb");
	static const unsigned char gif[] = {'G', 'I', 'F', '8', '9', 'a', 1, 0, 1, 0, 0x80, 0, 0};
	static const unsigned char png[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
	int is_png = strcmp(ext, "png") == 0;
	if (!f || fwrite(is_png ? png : gif, 1, is_png ? sizeof(png) : sizeof(gif), f) == 0 ||
	    fputs(tail, f) < 0) {
		fprintf(stderr, "cannot write %s\n", path);
		t_failures++;
	}
	if (f)
		fclose(f);
	snprintf(batch, sizeof(batch),
		 "{\"messages\":[{\"id\":\"put-media-%d\",\"senderId\":\"9\",\"media\":[{\"type\":\"image\","
		 "\"file\":\"%s\"}]}]}",
		 seq, path);
	CHECK_INT(zcor_log_messages(z, NULL, "group:1", batch, &out), ZCOR_OK);
	zcor_free(out);
	json_t *r = t_call_ok(z, NULL, "qq_transcript",
			      "{\"action\":\"read\",\"conversation\":\"group:1\",\"limit\":100}");
	hash[0] = '\0';
	size_t i;
	json_t *m;
	char id[32];
	snprintf(id, sizeof(id), "put-media-%d", seq);
	json_array_foreach(json_object_get(r, "items"), i, m) if (!strcmp(t_str(m, "id"), id))
		snprintf(hash, 65, "%s", t_str(m, "media.0") + strlen("media/"));
	CHECK(strlen(hash) == 64);
	json_decref(r);
}

static int sticker_exists(zcor *z, const char *file)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/stickers/%s", zcor_dir(z), file);
	return access(path, F_OK) == 0;
}

static char *sticker_bytes(zcor *z, const char *file)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/stickers/%s", zcor_dir(z), file);
	FILE *f = fopen(path, "rb");
	char buf[256] = "";
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	if (f)
		fclose(f);
	char *s = malloc(n + 1);
	memcpy(s, buf, n);
	s[n] = '\0';
	for (size_t i = 0; i < n; i++)
		if (!s[i])
			s[i] = '.';
	return s;
}

static void Q_STK_save_and_rename_sticker(void)
{
	zcor *z = open_views(NULL);
	put_media(z, HASH1, "gif", "wuyu");
	json_t *r = t_call(z, "group:1", "qq_save_sticker",
			   "{\"media\":\"media/%s.gif\",\"name\":\"无语\",\"meaning\":\"无语、懒得吐槽\"}", HASH1);
	CHECK_OK(r);
	CHECK_STR(t_str(r, "send"), "[[图片: stickers/无语.gif]]");
	CHECK_STR(t_str(r, "image"), "stickers/无语.gif");
	json_decref(r);
	CHECK(sticker_exists(z, "无语.gif"));
	char *bytes = sticker_bytes(z, "无语.gif");
	CHECK_HAS(bytes, "GIF89a");
	CHECK_HAS(bytes, "wuyu");
	free(bytes);
	char *t = view_text(z, "group:1", "STICKERS.md");
	CHECK_HAS(t, "## 已收藏\n- 无语｜无语、懒得吐槽｜stickers/无语.gif\n");
	free(t);

	/* the catalog line, path exactly as it must be sent … */
	char *h = recall_header(z, "group:1", "无语", NULL);
	CHECK_HAS(h, "无语（无语、懒得吐槽）→ stickers/无语.gif");
	free(h);
	/* … in every header, whatever the message */
	h = recall_header(z, "group:1", "随便聊聊今天吃什么", NULL);
	CHECK_HAS(h, "无语（无语、懒得吐槽）→ stickers/无语.gif");
	free(h);

	/* rename: the file and the entry move together */
	r = t_call(z, "group:1", "qq_rename_sticker", "{\"from\":\"无语\",\"to\":\"懒得理\"}");
	CHECK_OK(r);
	CHECK_STR(t_str(r, "image"), "stickers/懒得理.gif");
	json_decref(r);
	CHECK(!sticker_exists(z, "无语.gif"));
	CHECK(sticker_exists(z, "懒得理.gif"));
	t = view_text(z, "group:1", "STICKERS.md");
	CHECK_HAS(t, "## 已收藏\n- 懒得理｜无语、懒得吐槽｜stickers/懒得理.gif\n");
	CHECK_LACKS(t, "无语.gif");
	free(t);
	h = recall_header(z, "group:1", "随便聊聊今天吃什么", NULL);
	CHECK_HAS(h, "懒得理（无语、懒得吐槽）→ stickers/懒得理.gif");
	CHECK_LACKS(h, "stickers/无语.gif");
	free(h);

	/* rename onto an existing name: conflict, both files and entries unchanged */
	put_media(z, HASH2, "gif", "qiaopen");
	r = t_call(z, "group:1", "qq_save_sticker",
		   "{\"media\":\"media/%s.gif\",\"name\":\"敲盆\",\"meaning\":\"起哄\"}", HASH2);
	CHECK_OK(r);
	CHECK_STR(t_str(r, "send"), "[[图片: stickers/敲盆.gif]]");
	json_decref(r);
	char *before = view_text(z, "group:1", "STICKERS.md");
	struct state s0 = state_of(z);
	r = t_call(z, "group:1", "qq_rename_sticker", "{\"from\":\"懒得理\",\"to\":\"敲盆\"}");
	CHECK_ERR(r, "conflict");
	json_decref(r);
	r = t_call(z, "group:1", "qq_rename_sticker", "{\"from\":\"stickers/懒得理.gif\",\"to\":\"敲盆\"}");
	CHECK_ERR(r, "conflict");
	json_decref(r);
	struct state s1 = state_of(z);
	check_same_state(&s0, &s1, __LINE__);
	free(s0.views);
	char *after = view_text(z, "group:1", "STICKERS.md");
	CHECK_STR(after, before);
	free(after);
	free(before);
	CHECK(sticker_exists(z, "懒得理.gif"));
	CHECK(sticker_exists(z, "敲盆.gif"));
	bytes = sticker_bytes(z, "懒得理.gif");
	CHECK_HAS(bytes, "wuyu");
	free(bytes);
	bytes = sticker_bytes(z, "敲盆.gif");
	CHECK_HAS(bytes, "qiaopen");
	free(bytes);

	/* the STICKERS.md entry of a collected sticker takes its stickers/ path */
	r = t_call(z, NULL, "qq_memory",
	       "{\"action\":\"upsert\",\"path\":\"STICKERS.md\",\"name\":\"敲盆\",\"meaning\":\"起哄、催更\","
	       "\"image\":\"stickers/敲盆.gif\"}");
	CHECK_OK(r);
	json_decref(r);
	/* … but not a guessed extension */
	r = t_call(z, NULL, "qq_memory",
	       "{\"action\":\"upsert\",\"path\":\"STICKERS.md\",\"name\":\"敲盆\",\"meaning\":\"起哄\","
	       "\"image\":\"stickers/敲盆.jpg\"}");
	CHECK(t_errcode(r) != NULL);
	json_decref(r);
	t = view_text(z, NULL, "STICKERS.md");
	CHECK_HAS(t, "- 敲盆｜起哄、催更｜stickers/敲盆.gif\n");
	free(t);
	zcor_close(z);
}

/* Seed 003's accident: 敲盆.gif sent as 敲盆.jpg. */
static void Q_STK_reply_path_with_exact_extension(void)
{
	zcor *z = open_views(NULL);
	put_media(z, HASH2, "gif", "qiaopen");
	json_t *r = t_call(z, "group:1", "qq_save_sticker",
			   "{\"media\":\"media/%s.gif\",\"name\":\"敲盆\",\"meaning\":\"起哄\"}", HASH2);
	CHECK_OK(r);
	json_decref(r);
	CHECK(zcor_check_reply(z, "好耶 [[图片: stickers/敲盆.jpg]]") != ZCOR_OK);
	CHECK_HAS(zcor_errmsg(z), "stickers/敲盆.jpg");
	CHECK_INT(zcor_check_reply(z, "好耶 [[图片: stickers/敲盆.gif]]"), ZCOR_OK);
	CHECK(zcor_check_reply(z, "[[图片: stickers/敲盆]]") != ZCOR_OK);
	CHECK(zcor_check_reply(z, "[[图片: media/0123.gif]]") != ZCOR_OK);
	CHECK(zcor_check_reply(z, "[[图片: stickers/../memory.db]]") != ZCOR_OK);
	CHECK_INT(zcor_check_reply(z, "没有图片的回复"), ZCOR_OK);
	zcor_close(z);
}

/* A rename that fails after the new name is linked — here STICKERS.md
 * would go over its byte limit with the longer name — leaves the old file,
 * no new file, and the catalog as they were. */
static void Q_STK_rename_failing_after_link_leaves_both(void)
{
	zcor *z = open_views(NULL);
	put_media(z, HASH1, "gif", "wuyu");
	json_t *r = t_call(z, "group:1", "qq_save_sticker",
			   "{\"media\":\"media/%s.gif\",\"name\":\"无语\",\"meaning\":\"无语、懒得吐槽\"}", HASH1);
	CHECK_OK(r);
	json_decref(r);
	/* fill STICKERS.md to a little under 1 KiB */
	char *t = view_text(z, NULL, "STICKERS.md");
	for (int i = 0; strlen(t) < 880 && i < 40; i++) {
		r = t_call(z, NULL, "qq_memory",
		       "{\"action\":\"upsert\",\"path\":\"STICKERS.md\",\"name\":\"没收藏%02d\","
		       "\"meaning\":\"一张还没收藏的表情\"}",
		       i);
		CHECK_OK(r);
		json_decref(r);
		free(t);
		t = view_text(z, NULL, "STICKERS.md");
	}
	CHECK(strlen(t) >= 880 && strlen(t) < 1024);
	free(t);
	set_config(z, "{\"viewMaxBytes\":1024}");
	char *before = view_text(z, NULL, "STICKERS.md");
	struct state s0 = state_of(z);
	/* 40 characters more, twice (name and path): over 1024 bytes */
	const char *longer = "无语到了极点以至于什么都不想说只想静静地看着你们继续表演下去直到天荒地老海枯石烂";
	r = t_call(z, "group:1", "qq_rename_sticker", "{\"from\":\"无语\",\"to\":\"%s\"}", longer);
	CHECK_ERR(r, "invalid_argument");
	CHECK_HAS(t_errmsg(r), "STICKERS.md");
	CHECK_HAS(t_errmsg(r), "limit");
	json_decref(r);
	struct state s1 = state_of(z);
	check_same_state(&s0, &s1, __LINE__);
	free(s0.views);
	char *after = view_text(z, NULL, "STICKERS.md");
	CHECK_STR(after, before);
	free(after);
	free(before);
	CHECK(sticker_exists(z, "无语.gif"));
	char file[512];
	snprintf(file, sizeof(file), "%s.gif", longer);
	CHECK(!sticker_exists(z, file));
	char *bytes = sticker_bytes(z, "无语.gif");
	CHECK_HAS(bytes, "wuyu");
	free(bytes);
	CHECK_INT(zcor_check_reply(z, "[[图片: stickers/无语.gif]]"), ZCOR_OK);
	/* and a rename that fits still works afterwards */
	r = t_call(z, "group:1", "qq_rename_sticker", "{\"from\":\"无语\",\"to\":\"懒得理\"}");
	CHECK_OK(r);
	json_decref(r);
	CHECK(!sticker_exists(z, "无语.gif"));
	CHECK(sticker_exists(z, "懒得理.gif"));
	zcor_close(z);
}

/* An entry upserted without an image is listed under 未收藏 and not offered
 * for sending; given an image later (qq_save_sticker under its name, or an
 * upsert with the stickers/ path) the same entry moves to 已收藏, keeping
 * its meaning — and a 原图已过期 mark goes once a file is collected. */
static void Q_STK_uncollected_entry_moves_when_collected(void)
{
	zcor *z = open_views(NULL);
	json_t *r = t_call(z, "group:1", "qq_memory",
		       "{\"action\":\"upsert\",\"path\":\"STICKERS.md\",\"name\":\"流泪猫猫头\","
		       "\"meaning\":\"委屈\",\"scene\":\"被怼了之后\"}");
	CHECK_OK(r);
	json_decref(r);
	char *id = sql_str(z, "SELECT id FROM nodes WHERE kind = 'sticker' AND title = '流泪猫猫头'");
	char *t = view_text(z, NULL, "STICKERS.md");
	CHECK_HAS(t, "## 已收藏\n\n## 未收藏\n- 流泪猫猫头｜委屈｜场景：被怼了之后\n");
	free(t);
	char *h = recall_header(z, "group:1", "随便聊聊", NULL);
	CHECK_LACKS(h, "流泪猫猫头");
	free(h);

	put_media(z, HASH1, "gif", "cry");
	r = t_call(z, "group:1", "qq_save_sticker", "{\"media\":\"media/%s.gif\",\"name\":\"流泪猫猫头\"}", HASH1);
	CHECK_OK(r);
	CHECK(json_is_false(t_get(r, "created")));
	json_decref(r);
	t = view_text(z, NULL, "STICKERS.md");
	CHECK_HAS(t, "## 已收藏\n- 流泪猫猫头｜委屈｜场景：被怼了之后｜stickers/流泪猫猫头.gif\n\n## 未收藏\n");
	free(t);
	char *id2 = sql_str(z, "SELECT id FROM nodes WHERE kind = 'sticker' AND title = '流泪猫猫头'");
	CHECK_STR(id2, id);
	free(id2);
	free(id);
	CHECK_INT(sql_int(z, "SELECT count(*) FROM nodes WHERE kind = 'sticker'"), 1);
	h = recall_header(z, "group:1", "随便聊聊", NULL);
	CHECK_HAS(h, "流泪猫猫头（委屈）→ stickers/流泪猫猫头.gif");
	free(h);

	/* a stale entry (原图已过期) collected again by an upsert with its file */
	r = qm_text(z, NULL, "append", "STICKERS.md", "## 未收藏\n- 狗头｜保命｜原图已过期\n", 0);
	CHECK_OK(r);
	json_decref(r);
	t = view_text(z, NULL, "STICKERS.md");
	CHECK_HAS(t, "## 未收藏\n- 狗头｜保命｜原图已过期\n");
	free(t);
	put_media(z, HASH2, "png", "dog");
	r = t_call(z, NULL, "qq_save_sticker", "{\"media\":\"media/%s.png\",\"name\":\"狗头\"}", HASH2);
	CHECK_OK(r);
	json_decref(r);
	t = view_text(z, NULL, "STICKERS.md");
	CHECK_HAS(t, "- 狗头｜保命｜stickers/狗头.png\n");
	CHECK_LACKS(t, "原图已过期");
	CHECK_HAS(t, "## 未收藏\n");
	CHECK(strstr(t, "- 狗头｜") < strstr(t, "## 未收藏"));
	free(t);
	zcor_close(z);
}

/* Seed 003's own upsert, literally: image ".qq-stickers/无语.gif" (the seed's
 * folder) means the collected file stickers/无语.gif — refused, naming the
 * field, while that file does not exist; accepted once it does. */
static void Q_STK_seed_upsert_with_qq_stickers_path(void)
{
	zcor *z = open_views(NULL);
	const char *seed = "{\"action\":\"upsert\",\"path\":\"STICKERS.md\",\"name\":\"无语\","
			   "\"meaning\":\"无语、懒得吐槽\",\"image\":\".qq-stickers/无语.gif\"}";
	struct state s0 = state_of(z);
	json_t *r = t_call(z, "group:1", "qq_memory", "%s", seed);
	CHECK_ERR(r, "not_found");
	CHECK_HAS(t_errmsg(r), "'image'");
	CHECK_HAS(t_errmsg(r), "stickers/无语.gif");
	CHECK_HAS(t_errmsg(r), "qq_save_sticker");
	json_decref(r);
	struct state s1 = state_of(z);
	check_same_state(&s0, &s1, __LINE__);
	free(s0.views);
	/* the file is there (as an import copies .qq-stickers/ into stickers/) */
	char path[4096];
	snprintf(path, sizeof(path), "%s/stickers", zcor_dir(z));
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/stickers/无语.gif", zcor_dir(z));
	FILE *f = fopen(path, "wb");
	CHECK(f && fputs("GIF89a", f) >= 0);
	if (f)
		fclose(f);
	r = t_call(z, "group:1", "qq_memory", "%s", seed);
	CHECK_OK(r);
	CHECK(json_is_true(t_get(r, "created")));
	json_decref(r);
	char *t = view_text(z, NULL, "STICKERS.md");
	CHECK_HAS(t, "## 已收藏\n- 无语｜无语、懒得吐槽｜stickers/无语.gif\n");
	CHECK_LACKS(t, ".qq-stickers");
	free(t);
	char *h = recall_header(z, "group:1", "随便聊聊", NULL);
	CHECK_HAS(h, "无语（无语、懒得吐槽）→ stickers/无语.gif");
	free(h);
	CHECK_INT(zcor_check_reply(z, "[[图片: stickers/无语.gif]]"), ZCOR_OK);
	zcor_close(z);
}

/* ---- 11. 存疑 -------------------------------------------------------------------- */

static void Q_VIEW_doubtful_never_injected_but_searchable(void)
{
	zcor *z = open_views(NULL);
	upsert_cog(z, "蚌埠住了", "忍不住笑了");
	json_t *r = t_call(z, NULL, "qq_memory",
		       "{\"action\":\"upsert\",\"path\":\"COGNITION.md\",\"name\":\"芝士雪豹\","
		       "\"meaning\":\"大概是知识学爆的谐音\",\"type\":\"谐音\",\"confidence\":\"存疑\"}");
	CHECK_OK(r);
	json_decref(r);
	char *t = view_text(z, NULL, "COGNITION.md");
	CHECK_HAS(t, "- 芝士雪豹｜大概是知识学爆的谐音｜置信：存疑\n");
	free(t);
	char *h = recall_header(z, "group:1", "芝士雪豹 蚌埠住了", NULL);
	CHECK_HAS(h, "蚌埠住了");
	CHECK_LACKS(h, "芝士雪豹");
	CHECK_LACKS(h, "知识学爆");
	free(h);
	h = recall_header(z, "group:1", "芝士雪豹", NULL);
	CHECK_LACKS(h, "芝士雪豹");
	CHECK_LACKS(h, "知识学爆");
	free(h);
	r = t_call(z, "group:1", "qq_memory", "{\"action\":\"search\",\"query\":\"芝士雪豹\"}");
	CHECK_OK(r);
	CHECK_INT(json_array_size(t_get(r, "hits")), 1);
	CHECK_STR(t_str(r, "hits.0.path"), "COGNITION.md");
	CHECK_HAS(t_str(r, "hits.0.text"), "知识学爆");
	json_decref(r);
	zcor_close(z);
}

/* ---- 12. Q-ROLL -------------------------------------------------------------------- */

#define ROLL_CONFIG "{\"memoryFileMaxBytes\":2048,\"memoryArchiveRatio\":0.75}"
#define ROLL_THRESHOLD 1536 /* 2048 × 0.75 */
#define HOT "conversations/group-1/MEMORY.md"
#define ARCHIVE "conversations/group-1/archive/2026-10.md"

static json_t *upsert_mem(zcor *z, const char *name, int pinned)
{
	return t_call(z, "group:1", "qq_memory",
		  "{\"action\":\"upsert\",\"path\":\"" HOT "\",\"name\":\"%s\","
		  "\"meaning\":\"一条普通的群记忆，写得稍微长一点好让热层更快变满\","
		  "\"section\":\"事实\",\"date\":\"2026-10-01\"%s}",
		  name, pinned ? ",\"pinned\":true" : "");
}

static long long hot_count(zcor *z)
{
	return t_sql_int(zcor_dir(z), "SELECT count(*) FROM nodes WHERE scope = 'group:1' AND "
				      "kind = 'memory' AND tier = 'hot' AND section IS NOT NULL");
}

static long long archive_count(zcor *z)
{
	return t_sql_int(zcor_dir(z), "SELECT count(*) FROM nodes WHERE scope = 'group:1' AND "
				      "kind = 'memory' AND tier = 'archive'");
}

static void Q_ROLL_moves_least_active_keeps_pinned(void)
{
	zcor *z = open_views(ROLL_CONFIG);
	/* 条目00 is hit often; 置顶A/B are pinned; the rest are plain */
	json_t *r = upsert_mem(z, "条目00", 0);
	CHECK_OK(r);
	json_decref(r);
	t_sql_exec(z, "UPDATE nodes SET hits = 9, last_hit_at = %lld WHERE title = '条目00'", T0 - DAY);
	r = upsert_mem(z, "置顶A", 1);
	CHECK_OK(r);
	json_decref(r);
	long long total = 2, archived = 0;
	int rolled = 0;
	for (int i = 1; i <= 30; i++) {
		char name[32];
		snprintf(name, sizeof(name), "条目%02d", i);
		r = upsert_mem(z, name, 0);
		CHECK_OK(r);
		total++;
		if (t_int(r, "archived") > 0)
			rolled++;
		archived += t_int(r, "archived");
		CHECK_INT(json_array_size(t_get(r, "warnings")), 0);
		CHECK(t_int(r, "bytes") <= ROLL_THRESHOLD);
		json_decref(r);
		if (i == 5) {
			r = upsert_mem(z, "置顶B", 1);
			CHECK_OK(r);
			total++;
			archived += t_int(r, "archived");
			json_decref(r);
		}
	}
	CHECK(rolled > 0);
	char *hot = view_text(z, "group:1", HOT);
	CHECK(strlen(hot) <= ROLL_THRESHOLD);
	/* conserved */
	CHECK_INT(hot_count(z) + archive_count(z), total);
	CHECK_INT(archive_count(z), archived);
	CHECK(archive_count(z) > 0);
	/* pinned never moved, the active one stayed, the least active went first */
	CHECK_HAS(hot, "- 置顶A｜");
	CHECK_HAS(hot, "- 置顶B｜");
	CHECK_HAS(hot, "- 条目00｜");
	CHECK_HAS(hot, "- 条目30｜");
	CHECK_LACKS(hot, "- 条目01｜");
	CHECK_INT(sql_int(z, "SELECT count(*) FROM nodes WHERE pinned AND tier <> 'hot'"), 0);
	char *arch = view_text(z, "group:1", ARCHIVE);
	CHECK_HAS(arch, "- 条目01｜");
	CHECK_LACKS(arch, "置顶");
	CHECK_LACKS(arch, "条目00");
	/* earliest position first among the equally inactive */
	long long oldest_hot = sql_int(z, "SELECT min(CAST(substr(title, 3) AS INTEGER)) FROM nodes WHERE "
					  "scope = 'group:1' AND tier = 'hot' AND title LIKE '条目%%' AND "
					  "title <> '条目00'");
	long long newest_arch = sql_int(z, "SELECT max(CAST(substr(title, 3) AS INTEGER)) FROM nodes WHERE "
					   "scope = 'group:1' AND tier = 'archive'");
	CHECK(newest_arch < oldest_hot);

	/* listed, searchable, never injected; one aggregate line instead */
	r = t_call(z, "group:1", "qq_memory", "{\"action\":\"list\"}");
	char *d = json_dumps(r, JSON_COMPACT);
	CHECK_HAS(d, ARCHIVE);
	free(d);
	json_decref(r);
	r = t_call(z, "group:1", "qq_memory", "{\"action\":\"search\",\"query\":\"条目01\"}");
	CHECK_OK(r);
	CHECK_INT(json_array_size(t_get(r, "hits")), 1);
	CHECK_STR(t_str(r, "hits.0.path"), ARCHIVE);
	json_decref(r);
	r = t_call(z, "group:1", "qq_memory", "{\"action\":\"read\",\"path\":\"" ARCHIVE "\"}");
	CHECK_OK(r);
	json_decref(r);
	char *h = recall_header(z, "group:1", "条目01 和 条目00 还有 条目02", NULL);
	CHECK_HAS(h, "条目00");
	CHECK_LACKS(h, "条目01");
	CHECK_LACKS(h, "条目02");
	CHECK_HAS(h, "更早的记忆：conversations/group-1/archive/ 下 1 个文件");
	free(h);
	/* an archive is not written by hand */
	r = qm_text(z, "group:1", "write", ARCHIVE, "## 事实\n- 手写｜不行\n", 1);
	CHECK_ERR(r, "invalid_argument");
	json_decref(r);
	free(arch);
	free(hot);
	zcor_close(z);
}

static void Q_ROLL_all_pinned_warns_moves_nothing(void)
{
	zcor *z = open_views(ROLL_CONFIG);
	int warned = 0;
	for (int i = 0; i < 30 && !warned; i++) {
		char name[32];
		snprintf(name, sizeof(name), "置顶%02d", i);
		json_t *r = upsert_mem(z, name, 1);
		CHECK_OK(r);
		if (json_array_size(t_get(r, "warnings"))) {
			warned = 1;
			CHECK(t_int(r, "bytes") > ROLL_THRESHOLD);
			CHECK_HAS(t_str(r, "warnings.0"), "pinned");
			CHECK(!t_get(r, "archived"));
		}
		json_decref(r);
	}
	CHECK(warned);
	CHECK_INT(archive_count(z), 0);
	char *hot = view_text(z, "group:1", HOT);
	CHECK(strlen(hot) > ROLL_THRESHOLD);
	free(hot);
	zcor_close(z);
}

static void Q_ROLL_failed_move_leaves_everything(void)
{
	zcor *z = open_views(ROLL_CONFIG);
	/* fill the archive close to 1 KiB first */
	int i = 0;
	for (; i < 60 && archive_count(z) < 6; i++) {
		char name[32];
		snprintf(name, sizeof(name), "条目%02d", i);
		json_t *r = upsert_mem(z, name, 0);
		CHECK_OK(r);
		json_decref(r);
	}
	char *arch0 = view_text(z, "group:1", ARCHIVE);
	CHECK(strlen(arch0) > 300 && strlen(arch0) < 1024);
	free(arch0);
	set_config(z, "{\"viewMaxBytes\":1024}");
	int warned = 0;
	for (int k = 0; k < 20 && !warned; k++, i++) {
		char name[32];
		snprintf(name, sizeof(name), "条目%02d", i);
		long long a0 = archive_count(z), h0 = hot_count(z);
		char *arch_before = view_text(z, "group:1", ARCHIVE);
		long long av0 = sql_int(z, "SELECT count(*) FROM view_versions WHERE path = '" ARCHIVE "'");
		json_t *r = upsert_mem(z, name, 0);
		CHECK_OK(r); /* the upsert itself succeeds */
		if (json_array_size(t_get(r, "warnings"))) {
			warned = 1;
			CHECK_HAS(t_str(r, "warnings.0"), "archive");
			CHECK(!t_get(r, "archived"));
			CHECK_INT(archive_count(z), a0);
			CHECK_INT(hot_count(z), h0 + 1);
			char *arch_after = view_text(z, "group:1", ARCHIVE);
			CHECK_STR(arch_after, arch_before);
			free(arch_after);
			CHECK_INT(sql_int(z, "SELECT count(*) FROM view_versions WHERE path = '" ARCHIVE "'"), av0);
			char *hot = view_text(z, "group:1", HOT);
			char line[128];
			snprintf(line, sizeof(line), "- %s｜", name);
			CHECK_HAS(hot, line);
			free(hot);
		} else {
			CHECK(t_int(r, "archived") > 0 || t_int(r, "bytes") <= ROLL_THRESHOLD);
		}
		json_decref(r);
		free(arch_before);
	}
	CHECK(warned);
	zcor_close(z);
}

/* The bytes of the rendered line of `name` in a view text, newline included. */
static long line_bytes(const char *text, const char *name)
{
	char tag[128];
	snprintf(tag, sizeof(tag), "\n- %s｜", name);
	const char *p = strstr(text, tag);
	if (!p)
		return 0;
	const char *nl = strchr(p + 1, '\n');
	return nl ? (long)(nl - p) : 0;
}

/* Q-ROLL orders by fewest *recent* hits (seed 003: 最近没被命中 first, then
 * the oldest fact date, then the earliest position): an entry hit nine
 * times a year ago leaves before one hit once yesterday, and a hit recall
 * has just counted (not yet folded into the node) counts as today's. */
static void Q_ROLL_least_recently_hit_first_not_most_hit(void)
{
	zcor *z = open_views("{\"memoryFileMaxBytes\":65536,\"memoryArchiveRatio\":0.75}");
	static const char *const names[] = {"刚提到的话题", "昨天命中过", "一年前常用"};
	for (int i = 0; i < 3; i++) {
		json_t *r = upsert_mem(z, names[i], 0);
		CHECK_OK(r);
		json_decref(r);
	}
	for (int i = 1; i <= 8; i++) {
		char name[32];
		snprintf(name, sizeof(name), "常用%02d", i);
		json_t *r = upsert_mem(z, name, 0);
		CHECK_OK(r);
		json_decref(r);
	}
	/* lifetime hits and recency disagree */
	t_sql_exec(z, "UPDATE nodes SET hits = 9, last_hit_at = %lld WHERE title = '一年前常用'",
		   T0 - 365 * DAY);
	t_sql_exec(z, "UPDATE nodes SET hits = 1, last_hit_at = %lld WHERE title = '昨天命中过'", T0 - DAY);
	t_sql_exec(z, "UPDATE nodes SET hits = 5, last_hit_at = %lld WHERE title LIKE '常用%%'", T0 - 3600000);
	/* 刚提到的话题 was never hit, until this recall */
	char *h = recall_header(z, "group:1", "刚提到的话题", NULL);
	CHECK_HAS(h, "刚提到的话题");
	free(h);
	CHECK_INT(sql_int(z, "SELECT count(*) FROM nodes WHERE title = '刚提到的话题' AND hits = 0"), 1);

	/* a threshold that makes exactly two entries move */
	char *hot = view_text(z, "group:1", HOT);
	long len = (long)strlen(hot), first = line_bytes(hot, "一年前常用");
	CHECK(first > 0);
	long threshold = len - first - 1;
	free(hot);
	char cfg[128];
	snprintf(cfg, sizeof(cfg), "{\"memoryFileMaxBytes\":%ld,\"memoryArchiveRatio\":0.5}", 2 * threshold);
	set_config(z, cfg);
	json_t *r = upsert_mem(z, "常用08", 0); /* the same entry again: only rollover changes */
	CHECK_OK(r);
	CHECK_INT(t_int(r, "archived"), 2);
	json_decref(r);
	char *arch = view_text(z, "group:1", ARCHIVE);
	CHECK_HAS(arch, "- 一年前常用｜");
	CHECK_HAS(arch, "- 昨天命中过｜");
	CHECK_LACKS(arch, "刚提到的话题");
	CHECK_LACKS(arch, "常用0");
	free(arch);
	hot = view_text(z, "group:1", HOT);
	CHECK_HAS(hot, "- 刚提到的话题｜");
	CHECK_HAS(hot, "- 常用01｜");
	free(hot);
	zcor_close(z);
}

static void write_file(const char *dir, const char *rel, const char *text)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	for (char *p = path + strlen(dir) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0700);
		*p = '/';
	}
	FILE *f = fopen(path, "w");
	if (!f || fputs(text, f) < 0) {
		fprintf(stderr, "cannot write %s\n", path);
		t_failures++;
	}
	if (f)
		fclose(f);
}

static json_t *import_dir(zcor *z, const char *dir)
{
	char *out = NULL;
	int rc = zcor_import_qq(z, dir, NULL, NULL, &out);
	CHECK_INT(rc, ZCOR_OK);
	json_t *v = out ? json_loads(out, 0, NULL) : NULL;
	if (rc)
		fprintf(stderr, "import %s: %s\n", dir, out ? out : "?");
	zcor_free(out);
	return v;
}

/* An imported MEMORY.md over the threshold rolls over at the import, not
 * at the next change; importing the same directory again moves nothing
 * back (the rolled entries are already in the archive). */
static void Q_ROLL_runs_after_import(void)
{
	zcor *z = open_views(ROLL_CONFIG);
	const char *src = t_tmpdir();
	char doc[16384] = "# MEMORY.md\n\n## 人\n- kaguya（QQ 100000001）｜群主｜置顶\n\n## 事实\n";
	int n = 0;
	while (strlen(doc) < 3000) {
		snprintf(doc + strlen(doc), sizeof(doc) - strlen(doc),
			 "- 旧事%02d｜一条从旧目录导入的群记忆，写得稍微长一点好让热层超过阈值｜2026-09-%02d\n", n,
			 1 + n % 28);
		n++;
	}
	write_file(src, "conversations/group-1/MEMORY.md", doc);
	json_t *rep = import_dir(z, src);
	CHECK_INT(json_array_size(t_get(rep, "archived")), 1);
	CHECK_STR(t_str(rep, "archived.0.path"), HOT);
	long long moved = t_int(rep, "archived.0.entries");
	CHECK(moved > 0);
	json_decref(rep);
	char *hot = view_text(z, "group:1", HOT);
	CHECK(strlen(hot) <= ROLL_THRESHOLD);
	CHECK_HAS(hot, "- kaguya");
	free(hot);
	/* conserved, the oldest fact dates first */
	CHECK_INT(hot_count(z) + archive_count(z), n + 1);
	CHECK_INT(archive_count(z), moved);
	char *arch = view_text(z, "group:1", ARCHIVE);
	CHECK_HAS(arch, "- 旧事00｜");
	free(arch);

	/* the same directory again: the same store */
	char *hot1 = view_text(z, "group:1", HOT), *arch1 = view_text(z, "group:1", ARCHIVE);
	long long nodes = sql_int(z, "SELECT count(*) FROM nodes");
	rep = import_dir(z, src);
	CHECK_INT(json_array_size(t_get(rep, "archived")), 0);
	CHECK_INT(json_array_size(t_get(rep, "alreadyArchived")), moved);
	json_decref(rep);
	char *hot2 = view_text(z, "group:1", HOT), *arch2 = view_text(z, "group:1", ARCHIVE);
	CHECK_STR(hot2, hot1);
	CHECK_STR(arch2, arch1);
	CHECK_INT(sql_int(z, "SELECT count(*) FROM nodes"), nodes);
	free(hot1);
	free(hot2);
	free(arch1);
	free(arch2);
	zcor_close(z);
}

/* A seed-003 directory as the old plugin left it: every view under its
 * own title (「# 公共认知」, 「# 群记忆」). The titles give way to the
 * rendered ones; nothing is unparsed and the doctor finds nothing that
 * needs a person. */
static void Q_VIEW_import_replaces_old_titles(void)
{
	zcor *z = open_views(NULL);
	const char *src = t_tmpdir();
	write_file(src, "COGNITION.md", "# 公共认知\n\n## 谐音\n- 蚌埠住了｜忍不住笑了\n\n## 缩写\n- yyds｜永远的神\n");
	write_file(src, "conversations/group-100000001/MEMORY.md",
		   "# 群记忆\n\n## 人\n- kaguya（QQ 100000001）｜群主｜置顶\n\n## 惯例与偏好\n"
		   "- 周五固定开黑｜晚上八点，别迟到｜2026-10-18\n");
	json_t *rep = import_dir(z, src);
	CHECK_INT(json_array_size(t_get(rep, "unparsed")), 0);
	int cog = 0, mem = 0;
	size_t i;
	json_t *v;
	json_array_foreach(t_get(rep, "views"), i, v) {
		const char *p = json_string_value(json_object_get(v, "path"));
		const char *old = json_string_value(json_object_get(v, "titleReplaced"));
		if (strcmp(p, "COGNITION.md") == 0)
			cog = old && strcmp(old, "# 公共认知") == 0;
		if (strcmp(p, "conversations/group-100000001/MEMORY.md") == 0)
			mem = old && strcmp(old, "# 群记忆") == 0;
	}
	CHECK(cog);
	CHECK(mem);
	json_decref(rep);
	CHECK_INT(sql_int(z, "SELECT count(*) FROM view_unparsed"), 0);
	char *t = view_text(z, NULL, "COGNITION.md");
	CHECK_INT(count_sub(t, "公共认知"), 0);
	CHECK_HAS(t, "- yyds｜永远的神\n");
	free(t);
	t = view_text(z, NULL, "conversations/group-100000001/MEMORY.md");
	CHECK_INT(count_sub(t, "群记忆"), 0);
	CHECK_HAS(t, "- 周五固定开黑｜");
	free(t);
	char *out = NULL;
	CHECK_INT(zcor_doctor(z, 0, &out), ZCOR_OK);
	json_t *d = out ? json_loads(out, 0, NULL) : NULL;
	CHECK(d != NULL);
	if (!json_is_false(json_object_get(d, "needsAttention")))
		fprintf(stderr, "doctor: %s\n", out ? out : "?");
	CHECK(json_is_false(json_object_get(d, "needsAttention")));
	json_decref(d);
	zcor_free(out);
	zcor_close(z);
}

/* ---- mirror/ ---------------------------------------------------------------------------- */

/* The text of mirror/<rel> (caller frees), NULL if there is none. */
static char *mirror_file(zcor *z, const char *rel)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/mirror/%s", zcor_dir(z), rel);
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	struct stat sb;
	char *s = NULL;
	if (fstat(fileno(f), &sb) == 0 && (s = malloc((size_t)sb.st_size + 1))) {
		size_t n = fread(s, 1, (size_t)sb.st_size, f);
		s[n] = '\0';
	}
	fclose(f);
	return s;
}

/* mirror/<path> is exactly the view as read now. */
static void check_mirrored(zcor *z, const char *path, int line)
{
	char *want = view_text(z, NULL, path), *got = mirror_file(z, path);
	if (!got || strcmp(got, want) != 0) {
		fprintf(stderr, "%s:%d: mirror/%s is %s, not the view:\n%s\n", __FILE__, line, path,
			got ? "different" : "missing", want);
		t_failures++;
	}
	free(want);
	free(got);
}

static void log_msg(zcor *z, const char *conv, const char *id, const char *text)
{
	char batch[512], *out = NULL;
	snprintf(batch, sizeof(batch),
		 "{\"messages\":[{\"id\":\"%s\",\"time\":\"2026-10-18T12:00:00Z\",\"senderId\":\"100000001\","
		 "\"senderName\":\"kaguya\",\"text\":\"%s\"}]}",
		 id, text);
	int rc = zcor_log_messages(z, NULL, conv, batch, &out);
	CHECK_INT(rc, ZCOR_OK);
	if (rc)
		fprintf(stderr, "log %s: %s\n", id, zcor_errmsg(z));
	zcor_free(out);
}

/* mirror/ holds the whole store in the seed-003 layout — every view, each
 * conversation's log per local day and digest.json — once mirroring is
 * on, including what was written before; it follows each change, and a
 * change made while mirroring was off is caught up (stale views removed)
 * when it is switched on again. */
static void X_MIRROR_holds_every_view_log_and_digest(void)
{
	zcor *z = open_views(NULL);
	const char *conv = "group:100000001", *mem = "conversations/group-100000001/MEMORY.md";
	upsert_seed_examples(z, NULL);
	json_t *r = qm_text(z, NULL, "write", "INDEX.md", "- 群里的约定看 MEMORY.md\n", 0);
	CHECK_OK(r);
	json_decref(r);
	log_msg(z, conv, "m1", "蚌埠住了");
	log_msg(z, conv, "m2", "周五开黑吗");
	char *none = mirror_file(z, "COGNITION.md");
	CHECK(none == NULL); /* off by default */
	free(none);

	/* switched on: the next change writes everything, not only its view */
	set_config(z, "{\"mirror\":true}");
	r = t_call(z, NULL, "qq_memory", "{\"action\":\"upsert\",\"path\":\"STICKERS.md\",\"name\":\"流泪猫猫头\",\"meaning\":\"委屈\"}");
	CHECK_OK(r);
	json_decref(r);
	static const char *const views[] = {"INDEX.md", "PEOPLE.md", "COGNITION.md", "STICKERS.md",
					    "conversations/group-100000001/MEMORY.md"};
	for (size_t i = 0; i < sizeof(views) / sizeof(views[0]); i++)
		check_mirrored(z, views[i], __LINE__);
	char logfile[128], day[16];
	time_t t = (time_t)(1792324800LL); /* the messages' time, as a local date */
	struct tm tm;
	localtime_r(&t, &tm);
	strftime(day, sizeof(day), "%Y-%m-%d", &tm);
	snprintf(logfile, sizeof(logfile), "conversations/group-100000001/log/%s.jsonl", day);
	char *log = mirror_file(z, logfile);
	CHECK_HAS(log, "\"id\":\"m1\"");
	CHECK_HAS(log, "\"id\":\"m2\"");
	CHECK_HAS(log, "蚌埠住了");
	free(log);
	char *dj = mirror_file(z, "digest.json");
	json_t *d = dj ? json_loads(dj, 0, NULL) : NULL;
	CHECK_INT(t_int(d, "conversations.group:100000001.linesSinceDigest"), 2);
	json_decref(d);
	free(dj);
	char *stamp = mirror_file(z, ".complete");
	CHECK(stamp != NULL);
	free(stamp);

	/* it follows: a logged message, a digest, a change of a view */
	log_msg(z, conv, "m3", "绷不住了");
	log = mirror_file(z, logfile);
	CHECK_HAS(log, "\"id\":\"m3\"");
	CHECK_HAS(log, "\"id\":\"m1\"");
	free(log);
	dj = mirror_file(z, "digest.json");
	d = dj ? json_loads(dj, 0, NULL) : NULL;
	CHECK_INT(t_int(d, "conversations.group:100000001.linesSinceDigest"), 3);
	json_decref(d);
	free(dj);
	char *out = NULL;
	CHECK_INT(zcor_digest_done(z, conv, &out), ZCOR_OK);
	zcor_free(out);
	dj = mirror_file(z, "digest.json");
	d = dj ? json_loads(dj, 0, NULL) : NULL;
	CHECK_INT(t_int(d, "conversations.group:100000001.linesSinceDigest"), 0);
	CHECK_STR(t_str(d, "conversations.group:100000001.lastDigestDate"), day);
	json_decref(d);
	free(dj);
	upsert_cog(z, "芜湖", "感叹");
	check_mirrored(z, "COGNITION.md", __LINE__);

	/* an import brings an archive month (and is mirrored whole) */
	const char *src = t_tmpdir();
	write_file(src, "conversations/group-100000001/archive/2026-09.md",
		   "# archive/2026-09.md\n\n## 事实\n- 九月的旧事｜已经过去了\n");
	json_t *rep = import_dir(z, src);
	json_decref(rep);
	const char *arch = "conversations/group-100000001/archive/2026-09.md";
	check_mirrored(z, arch, __LINE__);

	/* off: changes are not mirrored, and mirror/ is no longer complete */
	set_config(z, "{\"mirror\":false}");
	upsert_cog(z, "芝士", "知识");
	r = t_call(z, NULL, "qq_memory", "{\"action\":\"remove\",\"path\":\"%s\",\"name\":\"九月的旧事\"}", arch);
	CHECK_OK(r);
	json_decref(r);
	char *cog = mirror_file(z, "COGNITION.md");
	CHECK_LACKS(cog, "芝士");
	free(cog);
	stamp = mirror_file(z, ".complete");
	CHECK(stamp == NULL);
	free(stamp);
	/* on again: the next change catches up with everything */
	set_config(z, "{\"mirror\":true}");
	r = t_call(z, conv, "qq_memory",
	       "{\"action\":\"upsert\",\"path\":\"%s\",\"name\":\"周六打本\",\"meaning\":\"下午三点\","
	       "\"section\":\"在追\"}",
	       mem);
	CHECK_OK(r);
	json_decref(r);
	for (size_t i = 0; i < sizeof(views) / sizeof(views[0]); i++)
		check_mirrored(z, views[i], __LINE__);
	cog = mirror_file(z, "COGNITION.md");
	CHECK_HAS(cog, "- 芝士｜知识");
	free(cog);
	char *gone = mirror_file(z, arch);
	CHECK(gone == NULL); /* that archive month has no entries left */
	free(gone);
	stamp = mirror_file(z, ".complete");
	CHECK(stamp != NULL);
	free(stamp);
	zcor_close(z);
}

/* ---- 13. history ------------------------------------------------------------------- */

static void Q_VIEW_upsert_recorded_in_history(void)
{
	zcor *z = open_views(NULL);
	upsert_cog(z, "芜湖", "感叹");
	json_t *r = t_call(z, "group:1", "qq_memory",
		       "{\"action\":\"upsert\",\"path\":\"COGNITION.md\",\"name\":\"蚌埠住了\","
		       "\"meaning\":\"忍不住笑了\",\"usage\":\"有人发离谱东西时\",\"type\":\"谐音\","
		       "\"variants\":\"绷不住/绷\"}");
	CHECK_OK(r);
	json_decref(r);
	r = t_call(z, NULL, "zcor_memory_history", "{\"keywords\":[\"蚌埠住了\"]}");
	CHECK_OK(r);
	json_t *items = t_get(r, "items");
	CHECK(json_array_size(items) >= 1);
	json_t *rec = json_array_get(items, 0);
	CHECK_STR(t_str(rec, "operation"), "qq_memory");
	CHECK_STR(t_str(rec, "conversation"), "group:1");
	/* an upsert keeps the entry before (none: it is new) and after */
	CHECK_STR(t_str(rec, "before.0.path"), "COGNITION.md");
	CHECK(json_is_null(t_get(rec, "before.0.entry")));
	CHECK_STR(t_str(rec, "after.0.path"), "COGNITION.md");
	CHECK_STR(t_str(rec, "after.0.entry"), BENG_LINE);
	CHECK(t_get(rec, "after.0.text") == NULL); /* not the whole view */
	json_decref(r);
	/* a second upsert of the same name: the old line before, the new after */
	r = t_call(z, "group:1", "qq_memory", "{\"action\":\"upsert\",\"path\":\"COGNITION.md\",\"name\":\"蚌埠住了\",\"meaning\":\"笑死\"}");
	CHECK_OK(r);
	json_decref(r);
	r = t_call(z, NULL, "zcor_memory_history", "{\"keywords\":[\"笑死\"]}");
	rec = json_array_get(t_get(r, "items"), 0);
	CHECK_STR(t_str(rec, "before.0.entry"), BENG_LINE);
	CHECK_HAS(t_str(rec, "after.0.entry"), "- 蚌埠住了｜笑死｜");
	json_decref(r);
	/* a whole-view write keeps the whole text before and after */
	r = t_call(z, NULL, "qq_memory", "{\"action\":\"write\",\"path\":\"COGNITION.md\",\"force\":true,\"content\":\"## 其它\\n- 芜湖｜感叹\\n- 新词｜新的\\n\"}");
	CHECK_OK(r);
	json_decref(r);
	r = t_call(z, NULL, "zcor_memory_history", "{\"keywords\":[\"新词\"]}");
	rec = json_array_get(t_get(r, "items"), 0);
	CHECK_HAS(t_str(rec, "before.0.text"), "- 芜湖｜感叹");
	CHECK_HAS(t_str(rec, "before.0.text"), "- 蚌埠住了｜笑死");
	CHECK_HAS(t_str(rec, "after.0.text"), "- 新词｜新的");
	CHECK_LACKS(t_str(rec, "after.0.text"), "蚌埠住了");
	json_decref(r);
	/* the conversation sees its own record */
	r = t_call(z, "group:1", "zcor_memory_history", "{\"keywords\":[\"蚌埠住了\"]}");
	CHECK_OK(r);
	CHECK(json_array_size(t_get(r, "items")) >= 1);
	json_decref(r);
	zcor_close(z);
}

/* ---- more rules around the views ------------------------------------------------ */

/* remove {line} removes the line it names, even when the same text is kept
 * in another section too. */
static void Q_VIEW_remove_line_removes_that_unparsed_line(void)
{
	zcor *z = open_views(NULL);
	/* written 谐音 first, rendered 缩写 first (the standard order) */
	json_t *r = qm_text(z, NULL, "write", "COGNITION.md",
			    "## 谐音\n- 只有一段\n- 甲｜乙\n## 缩写\n- 只有一段\n", 0);
	CHECK_OK(r);
	json_decref(r);
	char *t = view_text(z, NULL, "COGNITION.md");
	CHECK_INT(count_lines_equal(t, "- 只有一段"), 2);
	const char *abbr = strstr(t, "## 缩写\n"), *homo = strstr(t, "## 谐音\n");
	CHECK(abbr && homo && abbr < homo);
	/* the first "- 只有一段" as read is the one under 缩写 */
	int target = line_no(t, "- 只有一段");
	CHECK(target > 0 && target == line_no(t, "## 缩写") + 1);
	r = t_call(z, NULL, "qq_memory", "{\"action\":\"remove\",\"path\":\"COGNITION.md\",\"line\":%d}", target);
	CHECK_OK(r);
	json_decref(r);
	char *u = view_text(z, NULL, "COGNITION.md");
	CHECK_INT(count_lines_equal(u, "- 只有一段"), 1);
	CHECK_HAS(u, "## 缩写\n\n## 谐音\n- 只有一段\n- 甲｜乙\n");
	free(u);
	free(t);
	zcor_close(z);
}

/* Reading a view and writing the text back changes nothing. */
static void Q_VIEW_read_write_roundtrip_is_identity(void)
{
	zcor *z = open_views(NULL);
	upsert_seed_examples(z, NULL);
	json_t *r;
	r = t_call(z, NULL, "qq_memory",
	       "{\"action\":\"upsert\",\"path\":\"COGNITION.md\",\"name\":\"yyds\",\"meaning\":\"永远的神\","
	       "\"type\":\"缩写\",\"date\":\"2026-10-01\",\"confidence\":\"确认\"}");
	CHECK_OK(r);
	json_decref(r);
	r = t_call(z, NULL, "qq_memory",
	       "{\"action\":\"upsert\",\"path\":\"PEOPLE.md\",\"name\":\"anon\",\"aliases\":[\"千早爱音\"],"
	       "\"meaning\":\"吉他手\"}");
	CHECK_OK(r);
	json_decref(r);
	r = t_call(z, NULL, "zcor_relationship_write",
		   "{\"personId\":\"100000001\",\"name\":\"kaguya\",\"relationship\":\"群主，周六常组织打本\","
		   "\"affinity\":-5,\"reason\":\"r\",\"aliases\":[\"soyo\",\"爽世\"]}");
	CHECK_OK(r);
	json_decref(r);
	r = t_call(z, "group:100000001", "qq_memory",
	       "{\"action\":\"upsert\",\"path\":\"conversations/group-100000001/MEMORY.md\",\"name\":\"kaguya\","
	       "\"meaning\":\"群主\",\"section\":\"人物\",\"pinned\":true,\"aliases\":\"soyo\"}");
	CHECK_OK(r);
	json_decref(r);
	r = t_call(z, "group:100000001", "qq_memory",
	       "{\"action\":\"upsert\",\"path\":\"conversations/group-100000001/MEMORY.md\",\"name\":\"周六打本\","
	       "\"meaning\":\"下午三点\",\"section\":\"在追\",\"date\":\"2026-10-17\",\"expires\":\"2026-10-25\","
	       "\"confidence\":\"存疑\"}");
	CHECK_OK(r);
	json_decref(r);
	r = qm_text(z, NULL, "append", "COGNITION.md", "随手写的一行\n", 0);
	CHECK_OK(r);
	json_decref(r);
	const char *paths[] = {"COGNITION.md", "PEOPLE.md", "conversations/group-100000001/MEMORY.md"};
	for (int i = 0; i < 3; i++) {
		char *t = view_text(z, NULL, paths[i]);
		long long nodes = t_sql_int(zcor_dir(z), "SELECT count(*) FROM nodes");
		long long people = t_sql_int(zcor_dir(z), "SELECT count(*) FROM people");
		char *ids = sql_str(z, "SELECT group_concat(id) FROM (SELECT id FROM nodes ORDER BY id)");
		r = qm_text(z, NULL, "write", paths[i], t, 0);
		CHECK_OK(r);
		json_decref(r);
		char *u = view_text(z, NULL, paths[i]);
		if (strcmp(t, u) != 0) {
			fprintf(stderr, "%s:%d: %s changed by writing it back:\n%s---\n%s", __FILE__, __LINE__,
				paths[i], t, u);
			t_failures++;
		}
		CHECK_INT(t_sql_int(zcor_dir(z), "SELECT count(*) FROM nodes"), nodes);
		CHECK_INT(t_sql_int(zcor_dir(z), "SELECT count(*) FROM people"), people);
		char *ids2 = sql_str(z, "SELECT group_concat(id) FROM (SELECT id FROM nodes ORDER BY id)");
		CHECK_STR(ids2, ids);
		free(ids2);
		free(ids);
		free(t);
		free(u);
	}
	CHECK_INT(t_sql_int(zcor_dir(z), "SELECT affinity FROM people WHERE person_id = '100000001'"), -5);
	zcor_close(z);
}

/* The citation of an entry stays its line after the view changes by other
 * tools (zcor_memory_delete, zcor_relationship_write / _delete). */
static void Q_VIEW_citations_follow_changes_by_other_tools(void)
{
	zcor *z = open_views(NULL);
	upsert_cog(z, "芜湖", "感叹");
	upsert_cog(z, "栓Q", "谢谢（无奈）");
	upsert_cog(z, "蚌埠住了", "忍不住笑了");
	char *id = sql_str(z, "SELECT id FROM nodes WHERE title = '芜湖'");
	json_t *r = t_call(z, NULL, "zcor_memory_delete", "{\"id\":\"%s\"}", id);
	CHECK_OK(r);
	json_decref(r);
	free(id);
	char *t = view_text(z, NULL, "COGNITION.md");
	CHECK_LACKS(t, "芜湖");
	id = sql_str(z, "SELECT id FROM nodes WHERE title = '蚌埠住了'");
	char *h = recall_header(z, "group:1", "蚌埠住了", NULL);
	char *cite = NULL;
	if (asprintf(&cite, "[%s · COGNITION.md#L%d]", id, line_no(t, "- 蚌埠住了｜忍不住笑了")) < 0)
		exit(2);
	CHECK_HAS(h, cite);
	free(cite);
	free(h);
	free(id);
	free(t);

	r = t_call(z, NULL, "qq_memory", "{\"action\":\"upsert\",\"path\":\"PEOPLE.md\",\"name\":\"tomori\",\"qq\":\"1001\",\"meaning\":\"主唱\"}");
	CHECK_OK(r);
	json_decref(r);
	r = t_call(z, NULL, "qq_memory", "{\"action\":\"upsert\",\"path\":\"PEOPLE.md\",\"name\":\"kaguya\",\"qq\":\"100000001\",\"meaning\":\"群主\"}");
	CHECK_OK(r);
	json_decref(r);
	r = t_call(z, NULL, "zcor_relationship_delete", "{\"personId\":\"1001\"}");
	CHECK_OK(r);
	json_decref(r);
	r = t_call(z, NULL, "zcor_relationship_write",
		   "{\"personId\":\"2002\",\"name\":\"rana\",\"relationship\":\"吉他\",\"affinity\":0,\"reason\":\"r\"}");
	CHECK_OK(r);
	json_decref(r);
	t = view_text(z, NULL, "PEOPLE.md");
	h = recall_header(z, "group:1", "在吗", "100000001");
	if (asprintf(&cite, "[人物 100000001 · PEOPLE.md#L%d]", line_no(t, "- kaguya（QQ 100000001）｜群主｜首见 2026-10-18")) < 0)
		exit(2);
	CHECK_HAS(h, cite);
	free(cite);
	free(h);
	h = recall_header(z, "group:1", "在吗", "2002");
	if (asprintf(&cite, "[人物 2002 · PEOPLE.md#L%d]", line_no(t, "- rana（QQ 2002）｜吉他｜首见 2026-10-18")) < 0)
		exit(2);
	CHECK_HAS(h, cite);
	free(cite);
	free(h);
	free(t);
	zcor_close(z);
}

/* The gate holds for every global view, for qq_save_sticker and for the
 * digest of a private conversation. */
static void Q_VIEW_write_gate_all_globals_and_digest(void)
{
	zcor *z = open_views(NULL);
	struct state s0 = state_of(z);
	json_t *r = t_call(z, "private:200", "qq_memory",
		       "{\"action\":\"upsert\",\"path\":\"STICKERS.md\",\"name\":\"无语\",\"meaning\":\"无语\"}");
	CHECK_ERR(r, "forbidden");
	CHECK_HAS(t_errmsg(r), "conversations/private-200/MEMORY.md");
	json_decref(r);
	r = qm_text(z, "private:200", "write", "INDEX.md", "私聊写的索引\n", 1);
	CHECK_ERR(r, "forbidden");
	json_decref(r);
	put_media(z, HASH1, "gif", "x");
	r = t_call(z, "private:200", "qq_save_sticker", "{\"media\":\"media/%s.gif\",\"name\":\"无语\"}", HASH1);
	CHECK_ERR(r, "forbidden");
	json_decref(r);
	CHECK(!sticker_exists(z, "无语.gif"));
	/* the digest actor of a private conversation: the same gate */
	struct zcor_ctx ctx = {ZCOR_ACTOR_DIGEST, "private:200"};
	char *out = NULL;
	int rc = zcor_tool_call(z, &ctx, "qq_memory",
				"{\"action\":\"upsert\",\"path\":\"COGNITION.md\",\"name\":\"私聊梗\",\"meaning\":\"x\"}",
				&out);
	CHECK_INT(rc, ZCOR_EFORBIDDEN);
	CHECK_HAS(zcor_errjson(z), "conversations/private-200/MEMORY.md");
	zcor_free(out);
	out = NULL;
	rc = zcor_tool_call(z, &ctx, "qq_memory",
			    "{\"action\":\"upsert\",\"path\":\"conversations/private-200/MEMORY.md\",\"name\":\"私聊梗\",\"meaning\":\"x\"}",
			    &out);
	CHECK_INT(rc, ZCOR_OK);
	zcor_free(out);
	/* a private conversation reads the global views */
	r = t_call(z, "private:200", "qq_memory", "{\"action\":\"read\",\"path\":\"COGNITION.md\"}");
	CHECK_OK(r);
	json_decref(r);
	/* a group writes the global views */
	r = t_call(z, "group:1", "qq_memory", "{\"action\":\"upsert\",\"path\":\"COGNITION.md\",\"name\":\"群梗\",\"meaning\":\"x\"}");
	CHECK_OK(r);
	json_decref(r);
	free(s0.views);
	zcor_close(z);
}

/* Archive files are filled by rollover: read-only and searchable (the
 * tool's own description), so no upsert into them. */
static void Q_VIEW_archive_is_read_only(void)
{
	zcor *z = open_views(NULL);
	struct state s0 = state_of(z);
	json_t *r = t_call(z, "group:1", "qq_memory",
		       "{\"action\":\"upsert\",\"path\":\"conversations/group-1/archive/2026-10.md\","
		       "\"name\":\"手塞进冷层\",\"meaning\":\"x\"}");
	CHECK(t_errcode(r) != NULL);
	json_decref(r);
	r = qm_text(z, "group:1", "append", "conversations/group-1/archive/2026-10.md", "## 事实\n- 手塞｜x\n", 0);
	CHECK_ERR(r, "invalid_argument");
	json_decref(r);
	struct state s1 = state_of(z);
	check_same_state(&s0, &s1, __LINE__);
	free(s0.views);
	zcor_close(z);
}

/* PEOPLE.md: a person first known by name, then with the QQ number, stays
 * one entry (same name → replaced in place). */
static void Q_VIEW_people_name_then_qq_is_one_entry(void)
{
	zcor *z = open_views(NULL);
	json_t *r = t_call(z, NULL, "qq_memory", "{\"action\":\"upsert\",\"path\":\"PEOPLE.md\",\"name\":\"kaguya\",\"meaning\":\"群主\"}");
	CHECK_OK(r);
	json_decref(r);
	r = t_call(z, NULL, "qq_memory", "{\"action\":\"upsert\",\"path\":\"PEOPLE.md\",\"name\":\"kaguya\",\"qq\":\"100000001\"}");
	CHECK_OK(r);
	CHECK(json_is_false(t_get(r, "created")));
	json_decref(r);
	CHECK_INT(t_sql_int(zcor_dir(z), "SELECT count(*) FROM people"), 1);
	char *t = view_text(z, NULL, "PEOPLE.md");
	CHECK_INT(count_sub(t, "kaguya"), 1);
	CHECK_HAS(t, "- kaguya（QQ 100000001）｜群主｜");
	free(t);
	zcor_close(z);
}

/* qq_save_sticker: idempotent for the same image, conflict for another one
 * under the same name, confined to media/. */
static void Q_STK_save_sticker_rules(void)
{
	zcor *z = open_views(NULL);
	put_media(z, HASH1, "gif", "wuyu");
	put_media(z, HASH2, "gif", "other");
	json_t *r = t_call(z, NULL, "qq_save_sticker", "{\"media\":\"media/%s.gif\",\"name\":\"无语\"}", HASH1);
	CHECK_OK(r);
	CHECK(json_is_true(t_get(r, "created")));
	json_decref(r);
	r = t_call(z, NULL, "qq_save_sticker",
		   "{\"media\":\"media/%s.gif\",\"name\":\"无语\",\"meaning\":\"无语、懒得吐槽\"}", HASH1);
	CHECK_OK(r);
	CHECK(json_is_false(t_get(r, "created")));
	json_decref(r);
	struct state s0 = state_of(z);
	r = t_call(z, NULL, "qq_save_sticker", "{\"media\":\"media/%s.gif\",\"name\":\"无语\"}", HASH2);
	CHECK_ERR(r, "conflict");
	json_decref(r);
	char *b = sticker_bytes(z, "无语.gif");
	CHECK_HAS(b, "wuyu");
	free(b);
	static const char *const bad[] = {"media/../memory.db", "media/.hidden.gif", "stickers/无语.gif",
					  "/etc/passwd", "media/sub/x.gif", "media/noext"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = t_call(z, NULL, "qq_save_sticker", "{\"media\":\"%s\",\"name\":\"坏的%zu\"}", bad[i], i);
		CHECK_ERR(r, "invalid_argument");
		json_decref(r);
	}
	r = t_call(z, NULL, "qq_save_sticker", "{\"media\":\"media/%064d.gif\",\"name\":\"没有\"}", 7);
	CHECK_ERR(r, "not_found");
	json_decref(r);
	static const char *const bad_names[] = {"a/b", "..", ".隐藏", "带｜竖线", "[[x]]"};
	for (size_t i = 0; i < sizeof(bad_names) / sizeof(bad_names[0]); i++) {
		r = t_call(z, NULL, "qq_save_sticker", "{\"media\":\"media/%s.gif\",\"name\":\"%s\"}", HASH2,
			   bad_names[i]);
		CHECK_ERR(r, "invalid_argument");
		json_decref(r);
	}
	r = t_call(z, NULL, "qq_rename_sticker", "{\"from\":\"没有这张\",\"to\":\"随便\"}");
	CHECK_ERR(r, "not_found");
	json_decref(r);
	r = t_call(z, NULL, "qq_rename_sticker", "{\"from\":\"无语\",\"to\":\"../逃逸\"}");
	CHECK_ERR(r, "invalid_argument");
	json_decref(r);
	struct state s1 = state_of(z);
	check_same_state(&s0, &s1, __LINE__);
	free(s0.views);
	char path[4096];
	snprintf(path, sizeof(path), "%s/stickers", zcor_dir(z));
	long long files = 0;
	FILE *p = NULL;
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "ls -A '%s' | wc -l", path);
	if ((p = popen(cmd, "r"))) {
		if (fscanf(p, "%lld", &files) != 1)
			files = -1;
		pclose(p);
	}
	CHECK_INT(files, 1);
	zcor_close(z);
}

/* search: normalised substrings of entry lines, with the line as read. */
static void Q_VIEW_search_finds_lines_as_read(void)
{
	zcor *z = open_views(NULL);
	upsert_seed_examples(z, NULL);
	upsert_cog(z, "YYDS", "永远的神");
	char *t = view_text(z, NULL, "COGNITION.md");
	json_t *r = t_call(z, "group:100000001", "qq_memory", "{\"action\":\"search\",\"query\":\"蚌埠\"}");
	CHECK_OK(r);
	CHECK_INT(json_array_size(t_get(r, "hits")), 1);
	CHECK_STR(t_str(r, "hits.0.path"), "COGNITION.md");
	CHECK_STR(t_str(r, "hits.0.text"), BENG_LINE);
	CHECK_INT(t_int(r, "hits.0.line"), line_no(t, BENG_LINE));
	json_decref(r);
	/* case and width folded; every word must occur */
	r = t_call(z, NULL, "qq_memory", "{\"action\":\"search\",\"query\":\"ｙｙｄｓ 永远\"}");
	CHECK_OK(r);
	CHECK_INT(json_array_size(t_get(r, "hits")), 1);
	CHECK_HAS(t_str(r, "hits.0.text"), "YYDS");
	json_decref(r);
	r = t_call(z, NULL, "qq_memory", "{\"action\":\"search\",\"query\":\"yyds 蚌埠\"}");
	CHECK_OK(r);
	CHECK_INT(json_array_size(t_get(r, "hits")), 0);
	json_decref(r);
	/* variants and aliases are searchable */
	r = t_call(z, NULL, "qq_memory", "{\"action\":\"search\",\"query\":\"爽世\"}");
	CHECK_OK(r);
	CHECK_INT(json_array_size(t_get(r, "hits")), 1);
	CHECK_STR(t_str(r, "hits.0.path"), "PEOPLE.md");
	json_decref(r);
	r = t_call(z, "group:100000001", "qq_memory", "{\"action\":\"search\",\"query\":\"开黑\"}");
	CHECK_OK(r);
	CHECK_INT(json_array_size(t_get(r, "hits")), 1);
	CHECK_STR(t_str(r, "hits.0.path"), "conversations/group-100000001/MEMORY.md");
	json_decref(r);
	/* another conversation does not find it */
	r = t_call(z, "group:2", "qq_memory", "{\"action\":\"search\",\"query\":\"开黑\"}");
	CHECK_OK(r);
	CHECK_INT(json_array_size(t_get(r, "hits")), 0);
	json_decref(r);
	free(t);
	zcor_close(z);
}

/* INDEX.md is free text: written, appended, read back as written, and in
 * the recall header. */
static void Q_VIEW_index_is_free_text(void)
{
	zcor *z = open_views(NULL);
	json_t *r = qm_text(z, NULL, "write", "INDEX.md", "人物 → PEOPLE.md\n梗 → COGNITION.md\n", 0);
	CHECK_OK(r);
	json_decref(r);
	r = qm_text(z, NULL, "append", "INDEX.md", "表情包 → STICKERS.md\n", 0);
	CHECK_OK(r);
	json_decref(r);
	char *t = view_text(z, NULL, "INDEX.md");
	CHECK_STR(t, "人物 → PEOPLE.md\n梗 → COGNITION.md\n表情包 → STICKERS.md\n");
	free(t);
	r = t_call(z, NULL, "qq_memory", "{\"action\":\"upsert\",\"path\":\"INDEX.md\",\"name\":\"x\",\"meaning\":\"y\"}");
	CHECK_ERR(r, "invalid_argument");
	json_decref(r);
	/* the 90% guard counts its non-blank lines */
	r = qm_text(z, NULL, "write", "INDEX.md", "只剩一行\n", 0);
	CHECK_ERR(r, "conflict");
	json_decref(r);
	char *h = recall_header(z, "group:1", "表情包在哪", NULL);
	CHECK_HAS(h, "梗 → COGNITION.md");
	free(h);
	zcor_close(z);
}

/* seed 003: the prompt names the way out for what recall did not show */
static void Q_VIEW_prefix_names_the_search_exits(void)
{
	zcor *z = t_open();
	char *prefix = NULL;
	CHECK_INT(zcor_prefix(z, "group:1", &prefix), ZCOR_OK);
	CHECK(prefix && strstr(prefix, "qq_memory search") != NULL);
	CHECK(prefix && strstr(prefix, "qq_transcript search") != NULL);
	CHECK(prefix && strstr(prefix, "qq_memory upsert") != NULL);
	zcor_free(prefix);
	zcor_close(z);
}

/* removing a line kept as written moves the entries below it: their
 * citations follow (lines without rows are tracked as well) */
static void Q_VIEW_citations_follow_removed_unparsed_lines(void)
{
	zcor *z = open_views(NULL);
	json_t *r = t_call(z, NULL, "qq_memory", "{\"action\":\"write\",\"path\":\"COGNITION.md\",\"content\":"
			     "\"## 谐音\\n- 只有一段\\n随手记的一行\\n- 蚌埠住了｜忍不住笑了\\n\"}");
	CHECK_OK(r);
	json_decref(r);
	/* the stale marks are consumed by the operation that made them */
	CHECK_INT(t_sql_int(zcor_dir(z), "SELECT count(*) FROM view_dirty"), 0);
	char *t = view_text(z, NULL, "COGNITION.md");
	int gone = line_no(t, "随手记的一行");
	free(t);
	r = t_call(z, NULL, "qq_memory", "{\"action\":\"remove\",\"path\":\"COGNITION.md\",\"line\":%d}", gone);
	CHECK_OK(r);
	json_decref(r);
	t = view_text(z, NULL, "COGNITION.md");
	CHECK_LACKS(t, "随手记的一行");
	char *id = sql_str(z, "SELECT id FROM nodes WHERE title = '蚌埠住了'");
	char *h = recall_header(z, "group:1", "蚌埠住了", NULL);
	char *cite = NULL;
	if (asprintf(&cite, "[%s · COGNITION.md#L%d]", id, line_no(t, "- 蚌埠住了｜忍不住笑了")) < 0)
		exit(2);
	CHECK_HAS(h, cite);
	free(cite);
	free(h);
	free(id);
	free(t);
	zcor_close(z);
}

const struct t_case t_cases[] = {
	{"Q_VIEW_citations_follow_removed_unparsed_lines", Q_VIEW_citations_follow_removed_unparsed_lines},
	{"Q_VIEW_prefix_names_the_search_exits", Q_VIEW_prefix_names_the_search_exits},
	{"Q_VIEW_seed_upserts_render_exactly", Q_VIEW_seed_upserts_render_exactly},
	{"Q_VIEW_upsert_same_name_replaces_in_place", Q_VIEW_upsert_same_name_replaces_in_place},
	{"Q_VIEW_remove_by_name_and_by_line", Q_VIEW_remove_by_name_and_by_line},
	{"Q_VIEW_people_upsert_keeps_affinity", Q_VIEW_people_upsert_keeps_affinity},
	{"Q_VIEW_write_normalises_and_keeps_unparsed", Q_VIEW_write_normalises_and_keeps_unparsed},
	{"Q_VIEW_write_drops_only_identical_lines", Q_VIEW_write_drops_only_identical_lines},
	{"Q_VIEW_write_replaces_any_leading_title", Q_VIEW_write_replaces_any_leading_title},
	{"Q_VIEW_import_replaces_old_titles", Q_VIEW_import_replaces_old_titles},
	{"Q_VIEW_write_90_percent_guard", Q_VIEW_write_90_percent_guard},
	{"Q_VIEW_write_keeps_last_20_versions", Q_VIEW_write_keeps_last_20_versions},
	{"Q_VIEW_append_adds_at_the_end", Q_VIEW_append_adds_at_the_end},
	{"Q_VIEW_paths_are_confined", Q_VIEW_paths_are_confined},
	{"Q_VIEW_view_byte_limit", Q_VIEW_view_byte_limit},
	{"Q_VIEW_write_gate", Q_VIEW_write_gate},
	{"Q_VIEW_hard_rules", Q_VIEW_hard_rules},
	{"Q_STK_save_and_rename_sticker", Q_STK_save_and_rename_sticker},
	{"Q_STK_reply_path_with_exact_extension", Q_STK_reply_path_with_exact_extension},
	{"Q_STK_rename_failing_after_link_leaves_both", Q_STK_rename_failing_after_link_leaves_both},
	{"Q_STK_uncollected_entry_moves_when_collected", Q_STK_uncollected_entry_moves_when_collected},
	{"Q_STK_seed_upsert_with_qq_stickers_path", Q_STK_seed_upsert_with_qq_stickers_path},
	{"Q_VIEW_doubtful_never_injected_but_searchable", Q_VIEW_doubtful_never_injected_but_searchable},
	{"Q_ROLL_moves_least_active_keeps_pinned", Q_ROLL_moves_least_active_keeps_pinned},
	{"Q_ROLL_all_pinned_warns_moves_nothing", Q_ROLL_all_pinned_warns_moves_nothing},
	{"Q_ROLL_failed_move_leaves_everything", Q_ROLL_failed_move_leaves_everything},
	{"Q_ROLL_least_recently_hit_first_not_most_hit", Q_ROLL_least_recently_hit_first_not_most_hit},
	{"Q_ROLL_runs_after_import", Q_ROLL_runs_after_import},
	{"Q_VIEW_upsert_recorded_in_history", Q_VIEW_upsert_recorded_in_history},
	{"Q_VIEW_remove_line_removes_that_unparsed_line", Q_VIEW_remove_line_removes_that_unparsed_line},
	{"Q_VIEW_read_write_roundtrip_is_identity", Q_VIEW_read_write_roundtrip_is_identity},
	{"Q_VIEW_citations_follow_changes_by_other_tools", Q_VIEW_citations_follow_changes_by_other_tools},
	{"Q_VIEW_write_gate_all_globals_and_digest", Q_VIEW_write_gate_all_globals_and_digest},
	{"Q_VIEW_archive_is_read_only", Q_VIEW_archive_is_read_only},
	{"Q_VIEW_people_name_then_qq_is_one_entry", Q_VIEW_people_name_then_qq_is_one_entry},
	{"Q_STK_save_sticker_rules", Q_STK_save_sticker_rules},
	{"Q_VIEW_search_finds_lines_as_read", Q_VIEW_search_finds_lines_as_read},
	{"Q_VIEW_index_is_free_text", Q_VIEW_index_is_free_text},
	{"X_MIRROR_holds_every_view_log_and_digest", X_MIRROR_holds_every_view_log_and_digest},
	{0},
};
