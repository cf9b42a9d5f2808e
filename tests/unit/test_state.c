/*
 * test_state.c — the state files and everything recorded around them:
 * migration of old state files (X-MIGRATE), backup and restore (Z-BACKUP),
 * person relationships (Z-REL), the operation history (Z-HIST), synonyms
 * (Z-SYN) and the two-stage search with a scripted provider (Z-SEARCH).
 *
 * Every case speaks the public interface (zcor.h) against a fresh memory
 * directory; the old formats come from tests/fixtures/state/ (see
 * docs/FORMATS.md). SQL on memory.db is used only to count rows and to
 * inject a failing history write.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

/* ---- files ---------------------------------------------------------- */

static char *path2(const char *dir, const char *name)
{
	char *p = NULL;
	if (asprintf(&p, "%s/%s", dir, name) < 0)
		exit(2);
	return p;
}

static char *fixture(const char *name)
{
	char *p = NULL;
	if (asprintf(&p, "%s/state/%s", t_fixtures_dir(), name) < 0)
		exit(2);
	return p;
}

/* The whole file (NUL-terminated), or NULL when it cannot be read. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0, got;
	char *p = malloc(cap);
	while ((got = fread(p + n, 1, cap - n - 1, f)) > 0) {
		n += got;
		if (n + 1 == cap)
			p = realloc(p, cap *= 2);
	}
	fclose(f);
	p[n] = '\0';
	if (len)
		*len = n;
	return p;
}

static void spit(const char *path, const char *data)
{
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(data, 1, strlen(data), f) != strlen(data) || fclose(f) != 0) {
		perror(path);
		exit(2);
	}
}

static void copy_file(const char *from, const char *to)
{
	char *d = slurp(from, NULL);
	if (!d) {
		fprintf(stderr, "cannot read fixture %s\n", from);
		exit(2);
	}
	spit(to, d);
	free(d);
}

static void copy_fixture(const char *name, const char *dir, const char *as)
{
	char *from = fixture(name), *to = path2(dir, as);
	copy_file(from, to);
	free(from);
	free(to);
}

static int exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

static int exists_in(const char *dir, const char *name)
{
	char *p = path2(dir, name);
	int r = exists(p);
	free(p);
	return r;
}

static int same_bytes(const char *a, const char *b)
{
	size_t la = 0, lb = 0;
	char *x = slurp(a, &la), *y = slurp(b, &lb);
	int same = x && y && la == lb && memcmp(x, y, la) == 0;
	free(x);
	free(y);
	return same;
}

static int count_files(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(d);
	return n;
}

static json_t *load_json(const char *path)
{
	json_error_t je;
	json_t *v = json_load_file(path, 0, &je);
	if (!v)
		fprintf(stderr, "cannot parse %s: %s\n", path, je.text);
	return v;
}

static json_t *load_fixture(const char *name)
{
	char *p = fixture(name);
	json_t *v = load_json(p);
	free(p);
	if (!v)
		exit(2);
	return v;
}

static void write_json(const char *path, json_t *v)
{
	if (json_dump_file(v, path, JSON_INDENT(2)) != 0) {
		fprintf(stderr, "cannot write %s\n", path);
		exit(2);
	}
}

/* Sets a file's modification time to an exact, distinct value, so a
 * rewrite within the file system's timestamp granularity is still seen. */
static void set_mtime(const char *path, time_t sec, long nsec)
{
	struct timespec ts[2] = {{sec, nsec}, {sec, nsec}};
	if (utimensat(AT_FDCWD, path, ts, 0) != 0)
		perror("utimensat");
}

/* ---- clock and time ------------------------------------------------- */

#define T_BASE 1777881600000LL /* 2026-05-04T08:00:00.000Z */

static int64_t g_now = T_BASE;

static int64_t test_clock(void *ud) { return *(int64_t *)ud; }

static zcor *open_at(const char *dir)
{
	zcor *z = t_open_dir(dir);
	zcor_set_clock(z, test_clock, &g_now);
	return z;
}

/* ms as zcor writes it: 2026-05-04T08:00:00.000Z (rotating buffers). */
static const char *iso(int64_t ms)
{
	static char bufs[8][48];
	static unsigned k;
	char *o = bufs[k++ % 8];
	time_t s = (time_t)(ms / 1000);
	struct tm tm;
	gmtime_r(&s, &tm);
	snprintf(o, 48, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ms % 1000));
	return o;
}

/* The same instant written in UTC+08:00. */
static const char *iso8(int64_t ms)
{
	static char bufs[4][48];
	static unsigned k;
	char *o = bufs[k++ % 4];
	int64_t local = ms + 8 * 3600000LL;
	time_t s = (time_t)(local / 1000);
	struct tm tm;
	gmtime_r(&s, &tm);
	snprintf(o, 48, "%04d-%02d-%02dT%02d:%02d:%02d.%03d+08:00", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(local % 1000));
	return o;
}

/* ---- JSON checks ---------------------------------------------------- */

static int contains(const char *s, const char *sub) { return s && sub && strstr(s, sub) != NULL; }

#define CHECK_CONTAINS(s, sub)                                                              \
	do {                                                                                \
		const char *s_ = (s), *sub_ = (sub);                                        \
		if (!contains(s_, sub_)) {                                                  \
			fprintf(stderr, "%s:%d: CHECK_CONTAINS failed: %s = '%s' lacks '%s'\n", \
				__FILE__, __LINE__, #s, s_ ? s_ : "(null)", sub_);          \
			t_failures++;                                                       \
		}                                                                           \
	} while (0)

#define CHECK_JSON(a, b)                                                                     \
	do {                                                                                 \
		json_t *a_ = (a), *b_ = (b);                                                 \
		if (!a_ || !b_ || !json_equal(a_, b_)) {                                     \
			char *sa_ = a_ ? json_dumps(a_, JSON_COMPACT | JSON_ENCODE_ANY) : NULL; \
			char *sb_ = b_ ? json_dumps(b_, JSON_COMPACT | JSON_ENCODE_ANY) : NULL; \
			fprintf(stderr, "%s:%d: CHECK_JSON failed: %s =\n  %s\nexpected\n  %s\n", \
				__FILE__, __LINE__, #a, sa_ ? sa_ : "(null)",                \
				sb_ ? sb_ : "(null)");                                       \
			free(sa_);                                                           \
			free(sb_);                                                           \
			t_failures++;                                                        \
		}                                                                            \
	} while (0)

#define CHECK_JSONS(a, text)                                                                \
	do {                                                                                \
		json_t *w_ = parse(text);                                                   \
		CHECK_JSON(a, w_);                                                          \
		json_decref(w_);                                                            \
	} while (0)

/* The call succeeded (prints the error otherwise). */
#define CHECK_OK(r)                                                                          \
	do {                                                                                 \
		if (t_errcode(r)) {                                                          \
			fprintf(stderr, "%s:%d: unexpected error: %s: %s\n", __FILE__, __LINE__, \
				t_errcode(r), t_errmsg(r));                                  \
			t_failures++;                                                        \
		}                                                                            \
	} while (0)

static json_t *parse(const char *text)
{
	json_error_t je;
	json_t *v = json_loads(text, JSON_DECODE_ANY, &je);
	if (!v) {
		fprintf(stderr, "test bug: bad JSON %s: %s\n", text, je.text);
		exit(2);
	}
	return v;
}

static int str_in(json_t *arr, const char *s)
{
	size_t i;
	json_t *v;
	json_array_foreach(arr, i, v) if (json_is_string(v) && strcmp(json_string_value(v), s) == 0) return 1;
	return 0;
}

static json_t *call(zcor *z, const char *conv, int *rc, const char *tool, const char *args)
{
	return t_call_raw(z, conv, rc, tool, args);
}

static long long sql(const char *dir, const char *q) { return t_sql_int(dir, q); }

/* The node by id, or NULL (new reference). */
static json_t *read_node(zcor *z, const char *id)
{
	json_t *r = t_call(z, NULL, "zcor_memory_read", "{\"id\":\"%s\"}", id);
	json_t *n = json_incref(t_get(r, "node"));
	json_decref(r);
	return n;
}

static json_t *read_person(zcor *z, const char *id)
{
	json_t *r = t_call(z, NULL, "zcor_relationship_read", "{\"personId\":\"%s\"}", id);
	json_t *p = json_incref(t_get(r, "person"));
	json_decref(r);
	return p;
}

/* zcor_memory_backup, then the file it wrote (new reference). *name gets
 * the "backups/…" name when not NULL (caller frees). */
static json_t *export_state(zcor *z, const char *dir, char **name)
{
	json_t *r = call(z, NULL, NULL, "zcor_memory_backup", "{}");
	CHECK_OK(r);
	const char *file = t_str(r, "file");
	json_t *state = NULL;
	if (file) {
		char *p = path2(dir, file);
		state = load_json(p);
		free(p);
		if (name)
			*name = strdup(file);
	}
	json_decref(r);
	return state ? state : json_object();
}

/* What a restore must bring back: nodes, important order and people. */
static json_t *fingerprint(zcor *z)
{
	json_t *q = call(z, NULL, NULL, "zcor_memory_query", "{\"includeSuperseded\":true,\"limit\":100}");
	json_t *p = call(z, NULL, NULL, "zcor_relationship_query", "{\"limit\":100}");
	json_t *fp = json_pack("{s:O, s:O}", "nodes", t_get(q, "items"), "people", t_get(p, "items"));
	json_decref(q);
	json_decref(p);
	return fp;
}

/* ==== X-MIGRATE ======================================================= */

/* The first history record (oldest) after the migration. */
static void check_history_starts_with(zcor *z, const char *op, long long total)
{
	json_t *h = call(z, NULL, NULL, "zcor_memory_history", "{\"limit\":100}");
	CHECK_OK(h);
	CHECK_INT(t_int(h, "total"), total);
	size_t n = json_array_size(t_get(h, "items"));
	json_t *first = json_array_get(t_get(h, "items"), n ? n - 1 : 0);
	CHECK_STR(t_str(first, "operation"), op);
	CHECK_STR(t_str(first, "status"), "ok");
	json_decref(h);
}

static void x_migrate_v1(void)
{
	const char *dir = t_tmpdir();
	char *src = fixture("memory-state-v1.json"), *dst = path2(dir, "memory-state.json");
	copy_file(src, dst);
	g_now = T_BASE;
	zcor *z = open_at(dir);

	json_t *r = call(z, NULL, NULL, "zcor_memory_children", "{}");
	CHECK_OK(r);
	CHECK_INT(json_array_size(t_get(r, "items")), 3);
	CHECK_STR(t_str(r, "items.0.id"), "mem-001");
	CHECK_STR(t_str(r, "items.1.id"), "2"); /* a numeric v1 id, kept as its text */
	CHECK_STR(t_str(r, "items.2.id"), "mem-003");
	json_decref(r);
	check_history_starts_with(z, "zcor_memory_children", 1);

	static const struct {
		const char *id, *title, *content, *created, *updated;
		int important;
	} want[] = {
		{"mem-001", "用户的生日", "用户的生日是 6 月 18 日，希望生日当天零点就收到祝福。",
		 "2025-01-03T13:14:05.000Z", "2025-01-03T13:14:05.000Z", 1},
		{"2", "用户在学日语", "用户从去年开始自学日语，目标是明年考过 N2，每天早上通勤时背单词。",
		 "2025-01-10T00:02:00.000Z", "2025-02-01T14:30:00.000Z", 1},
		{"mem-003", "用户不喜欢早起", "用户说工作日七点起床很痛苦，周末一般睡到中午。",
		 "2025-02-14T15:45:10.000Z", "2025-02-14T15:45:10.000Z", 0},
	};
	for (size_t i = 0; i < 3; i++) {
		json_t *n = read_node(z, want[i].id);
		CHECK(n != NULL);
		CHECK_STR(t_str(n, "title"), want[i].title);
		CHECK_STR(t_str(n, "content"), want[i].content);
		CHECK_STR(t_str(n, "createdAt"), want[i].created);
		CHECK_STR(t_str(n, "updatedAt"), want[i].updated);
		CHECK(json_is_array(t_get(n, "keywords")) && json_array_size(t_get(n, "keywords")) == 0);
		CHECK(json_is_null(t_get(n, "parentId")));
		CHECK(json_is_null(t_get(n, "sourceMessage")));
		CHECK(json_is_null(t_get(n, "supersededBy")));
		CHECK_STR(t_str(n, "scope"), "global");
		CHECK_STR(t_str(n, "kind"), "memory");
		CHECK_INT(json_is_true(t_get(n, "important")), want[i].important);
		json_decref(n);
	}
	r = call(z, NULL, NULL, "zcor_relationship_query", "{}");
	CHECK_INT(t_int(r, "total"), 0); /* v1 had no relationships: an empty set */
	json_decref(r);

	/* the original stays; the v1 snapshot is a byte copy of it */
	CHECK(same_bytes(src, dst));
	char *snap = path2(dir, "memory-state.v1.json");
	CHECK(same_bytes(src, snap));
	CHECK(!exists_in(dir, "memory-state.v2.json"));

	json_t *st = export_state(z, dir, NULL);
	CHECK_JSONS(t_get(st, "important"), "[\"mem-001\", \"2\"]");
	json_decref(st);

	/* imported once: emptying the store and reopening does not import again */
	json_decref(call(z, NULL, NULL, "zcor_memory_delete", "{\"id\":\"mem-001\"}"));
	json_decref(call(z, NULL, NULL, "zcor_memory_delete", "{\"id\":\"2\"}"));
	json_decref(call(z, NULL, NULL, "zcor_memory_delete", "{\"id\":\"mem-003\"}"));
	CHECK_INT(sql(dir, "SELECT count(*) FROM nodes"), 0);
	zcor_close(z);
	z = open_at(dir);
	r = call(z, NULL, NULL, "zcor_memory_children", "{}");
	CHECK_OK(r);
	CHECK_INT(json_array_size(t_get(r, "items")), 0);
	json_decref(r);
	CHECK_INT(sql(dir, "SELECT count(*) FROM nodes"), 0);
	CHECK(same_bytes(src, dst));
	zcor_close(z);
	free(src);
	free(dst);
	free(snap);
}

static void x_migrate_v2(void)
{
	const char *dir = t_tmpdir();
	char *src = fixture("memory-state-v2.json"), *dst = path2(dir, "memory-state.json");
	copy_file(src, dst);
	zcor *z = open_at(dir);

	json_t *r = call(z, NULL, NULL, "zcor_relationship_query", "{}");
	CHECK_OK(r);
	CHECK_INT(t_int(r, "total"), 2);
	json_decref(r);
	check_history_starts_with(z, "zcor_relationship_query", 1);

	json_t *n = read_node(z, "a1b2c3");
	CHECK_STR(t_str(n, "title"), "用户的工作");
	CHECK_JSONS(t_get(n, "keywords"), "[\"工作\", \"前端\", \"杭州\"]");
	CHECK_STR(t_str(n, "sourceMessage"), "我在杭州做前端，最近赶版本天天加班到十点……");
	CHECK_STR(t_str(n, "createdAt"), "2025-03-01T10:00:00.000Z");
	CHECK_STR(t_str(n, "updatedAt"), "2025-03-05T12:00:00.000Z");
	CHECK(json_is_true(t_get(n, "important")));
	CHECK(json_is_null(t_get(n, "parentId")));
	json_decref(n);

	/* the v2 record's parent reference is dropped: every record is a root */
	n = read_node(z, "d4e5f6");
	CHECK(n != NULL);
	CHECK(json_is_null(t_get(n, "parentId")));
	CHECK(json_is_null(t_get(n, "sourceMessage")));
	CHECK_JSONS(t_get(n, "keywords"), "[\"阿杰\", \"同事\"]");
	json_decref(n);
	r = call(z, NULL, NULL, "zcor_memory_children", "{}");
	CHECK_INT(json_array_size(t_get(r, "items")), 3);
	json_decref(r);
	r = call(z, NULL, NULL, "zcor_memory_children", "{\"parentId\":\"a1b2c3\"}");
	CHECK_OK(r);
	CHECK_INT(json_array_size(t_get(r, "items")), 0);
	json_decref(r);
	n = read_node(z, "g7h8i9");
	CHECK_JSONS(t_get(n, "keywords"), "[]");
	json_decref(n);

	/* relationships are kept, but not linked to nodes */
	json_t *p = read_person(z, "20001");
	CHECK_STR(t_str(p, "name"), "阿杰");
	CHECK_JSONS(t_get(p, "aliases"), "[\"杰哥\", \"AJ\"]");
	CHECK_STR(t_str(p, "relationship"), "用户的同事，午饭搭子");
	CHECK_INT(t_int(p, "affinity"), 35);
	CHECK_STR(t_str(p, "reason"), "经常一起吃饭聊天，帮用户查过接口问题");
	CHECK_STR(t_str(p, "updatedAt"), "2025-03-02T04:25:00.000Z");
	CHECK(json_is_null(t_get(p, "memoryNodeId")));
	json_decref(p);
	p = read_person(z, "987654321"); /* a numeric person id, kept as its text */
	CHECK_STR(t_str(p, "name"), "小雨");
	CHECK_INT(t_int(p, "affinity"), -5);
	CHECK(json_is_null(t_get(p, "memoryNodeId")));
	json_decref(p);
	/* so the node the old link named can be deleted */
	r = call(z, NULL, NULL, "zcor_memory_delete", "{\"id\":\"d4e5f6\"}");
	CHECK_OK(r);
	json_decref(r);

	CHECK(same_bytes(src, dst));
	char *snap = path2(dir, "memory-state.v2.json");
	CHECK(same_bytes(src, snap));
	CHECK(!exists_in(dir, "memory-state.v1.json"));

	zcor_close(z);
	z = open_at(dir);
	r = call(z, NULL, NULL, "zcor_memory_children", "{}");
	CHECK_INT(json_array_size(t_get(r, "items")), 2); /* d4e5f6 does not come back */
	json_decref(r);
	CHECK_INT(sql(dir, "SELECT count(*) FROM people"), 2);
	zcor_close(z);
	free(src);
	free(dst);
	free(snap);
}

static void x_migrate_v3(void)
{
	const char *dir = t_tmpdir();
	char *src = fixture("memory-state-v3.json"), *dst = path2(dir, "memory-state.json");
	copy_file(src, dst);
	json_t *fx = load_fixture("memory-state-v3.json");
	zcor *z = open_at(dir);

	json_t *r = call(z, NULL, NULL, "zcor_memory_read", "{\"id\":\"m000002\"}");
	CHECK_OK(r);
	json_decref(r);
	check_history_starts_with(z, "zcor_memory_read", 1);

	/* every node and person exactly as in the file */
	size_t i;
	json_t *v;
	json_array_foreach(t_get(fx, "nodes"), i, v) {
		json_t *n = read_node(z, t_str(v, "id"));
		CHECK_JSON(n, v);
		json_decref(n);
	}
	json_array_foreach(t_get(fx, "people"), i, v) {
		json_t *p = read_person(z, t_str(v, "personId"));
		CHECK_JSON(p, v);
		json_decref(p);
	}
	/* the tree and the person link survive in format 3 */
	r = call(z, NULL, NULL, "zcor_memory_trace", "{\"id\":\"m000002\"}");
	CHECK_STR(t_str(r, "path.0.id"), "m000001");
	CHECK_STR(t_str(r, "path.1.id"), "m000002");
	json_decref(r);
	r = call(z, NULL, NULL, "zcor_memory_children", "{\"parentId\":\"m000001\"}");
	CHECK_INT(json_array_size(t_get(r, "items")), 1);
	CHECK_STR(t_str(r, "items.0.id"), "m000002");
	json_decref(r);
	json_t *p = read_person(z, "10001");
	CHECK_STR(t_str(p, "memoryNodeId"), "m000001");
	json_decref(p);
	r = call(z, NULL, NULL, "zcor_memory_query", "{}");
	CHECK_INT(t_int(r, "total"), 4); /* m000004 is superseded */
	json_decref(r);

	json_t *st = export_state(z, dir, NULL);
	CHECK_JSON(t_get(st, "important"), t_get(fx, "important"));
	json_decref(st);

	CHECK(same_bytes(src, dst));
	CHECK(!exists_in(dir, "memory-state.v1.json"));
	CHECK(!exists_in(dir, "memory-state.v2.json"));
	CHECK(!exists_in(dir, "memory-state.v3.json"));

	/* a generated id never collides with an imported one, and sorts after */
	r = call(z, NULL, NULL, "zcor_memory_write", "{\"title\":\"新记忆\",\"content\":\"迁移之后写的\"}");
	CHECK_OK(r);
	const char *nid = t_str(r, "node.id");
	CHECK(nid && strlen(nid) == 7 && nid[0] == 'm' && strcmp(nid, "m000005") > 0);
	json_decref(r);

	zcor_close(z);
	z = open_at(dir);
	json_decref(call(z, NULL, NULL, "zcor_memory_children", "{}"));
	CHECK_INT(sql(dir, "SELECT count(*) FROM nodes"), 6);
	CHECK_INT(sql(dir, "SELECT count(*) FROM people"), 2);
	zcor_close(z);
	json_decref(fx);
	free(src);
	free(dst);
}

static int is_generated_id(const char *id)
{
	if (!id || strlen(id) != 7 || id[0] != 'm')
		return 0;
	for (int i = 1; i < 7; i++)
		if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'z')))
			return 0;
	return 1;
}

static void x_migrate_legacy(void)
{
	const char *dir = t_tmpdir();
	char *src = fixture("memories-legacy.json"), *dst = path2(dir, "memories.json");
	copy_file(src, dst);
	g_now = T_BASE;
	zcor *z = open_at(dir);

	json_t *r = call(z, NULL, NULL, "zcor_memory_query", "{\"limit\":100}");
	CHECK_OK(r);
	CHECK_INT(t_int(r, "total"), 4);
	json_decref(r);
	check_history_starts_with(z, "zcor_memory_query", 1);

	json_t *n = read_node(z, "note-1");
	CHECK_STR(t_str(n, "title"), "用户的口头禅");
	CHECK_STR(t_str(n, "createdAt"), "2024-11-05T12:00:00.000Z");
	CHECK(json_is_null(t_get(n, "parentId")));
	CHECK_JSONS(t_get(n, "keywords"), "[]");
	json_decref(n);
	/* "text" is the old spelling of content; no title: its first line */
	n = read_node(z, "note-2");
	CHECK_STR(t_str(n, "content"), "用户周末喜欢去爬山，最常去香山。\n上次去是十月，拍了很多红叶。");
	CHECK_STR(t_str(n, "title"), "用户周末喜欢去爬山，最常去香山。");
	json_decref(n);
	n = read_node(z, "7");
	CHECK_STR(t_str(n, "title"), "用户的手机尾号是 0423，平时不怎么接陌生电话，换号之前会");
	CHECK(t_str(n, "createdAt") != NULL);
	json_decref(n);
	/* a record without an id gets a generated one */
	r = call(z, NULL, NULL, "zcor_memory_query", "{\"keywords\":[\"猫毛过敏\"]}");
	CHECK_INT(t_int(r, "total"), 1);
	CHECK(is_generated_id(t_str(r, "items.0.id")));
	CHECK_STR(t_str(r, "items.0.content"), "用户对猫毛过敏，但还是忍不住去撸朋友家的猫。");
	CHECK_STR(t_str(r, "items.0.createdAt"), "2024-11-07T00:00:00.000Z"); /* epoch ms */
	json_decref(r);
	CHECK(same_bytes(src, dst));
	zcor_close(z);
	z = open_at(dir);
	json_decref(call(z, NULL, NULL, "zcor_memory_children", "{}"));
	CHECK_INT(sql(dir, "SELECT count(*) FROM nodes"), 4);
	zcor_close(z);

	/* the object spelling {"memories": [...]} without a version, all with ids */
	const char *dir2 = t_tmpdir();
	char *legacy2 = path2(dir2, "memories.json");
	spit(legacy2, "{\"memories\":[{\"id\":\"x1\",\"text\":\"用户喜欢喝冰美式\"},"
		      "{\"id\":\"x2\",\"title\":\"用户的城市\",\"content\":\"用户住在成都\","
		      "\"createdAt\":\"2024-10-01T08:00:00+08:00\"}]}");
	z = open_at(dir2);
	r = call(z, NULL, NULL, "zcor_memory_children", "{}");
	CHECK_OK(r);
	CHECK_INT(json_array_size(t_get(r, "items")), 2);
	CHECK_STR(t_str(r, "items.0.id"), "x1");
	CHECK_STR(t_str(r, "items.0.title"), "用户喜欢喝冰美式");
	CHECK_STR(t_str(r, "items.0.content"), "用户喜欢喝冰美式");
	CHECK_STR(t_str(r, "items.1.createdAt"), "2024-10-01T00:00:00.000Z");
	json_decref(r);
	CHECK(exists(legacy2));
	zcor_close(z);
	free(legacy2);
	free(src);
	free(dst);
}

/* One malformed memory-state.json: the call fails naming `field`, nothing
 * is imported, no snapshot is written. */
static void migrate_bad(const char *text, const char *field)
{
	const char *dir = t_tmpdir();
	char *p = path2(dir, "memory-state.json");
	spit(p, text);
	zcor *z = open_at(dir);
	int rc = 0;
	json_t *r = call(z, NULL, &rc, "zcor_memory_children", "{}");
	CHECK_INT(rc, ZCOR_EINVAL);
	CHECK_STR(t_errcode(r), "invalid_argument");
	CHECK_CONTAINS(t_errmsg(r), "memory-state.json");
	CHECK_CONTAINS(t_errmsg(r), field);
	json_decref(r);
	CHECK_INT(sql(dir, "SELECT count(*) FROM nodes"), 0);
	CHECK_INT(sql(dir, "SELECT count(*) FROM people"), 0);
	CHECK(!exists_in(dir, "memory-state.v1.json"));
	CHECK(!exists_in(dir, "memory-state.v2.json"));
	zcor_close(z);
	free(p);
}

static void x_migrate_malformed(void)
{
	const char *dir = t_tmpdir();
	char *dst = path2(dir, "memory-state.json");
	json_t *doc = load_fixture("memory-state-v2.json");
	json_object_set_new(json_array_get(t_get(doc, "memories"), 1), "keywords", json_string("同事"));
	write_json(dst, doc);
	json_decref(doc);
	char *before = slurp(dst, NULL);
	zcor *z = open_at(dir);

	int rc = 0;
	json_t *r = call(z, NULL, &rc, "zcor_memory_write", "{\"title\":\"t\",\"content\":\"c\"}");
	CHECK_INT(rc, ZCOR_EINVAL);
	CHECK_CONTAINS(t_errmsg(r), "memories[1].keywords");
	CHECK_CONTAINS(t_errmsg(r), "memory-state.json");
	json_decref(r);
	CHECK_INT(sql(dir, "SELECT count(*) FROM nodes"), 0);
	CHECK_INT(sql(dir, "SELECT count(*) FROM people"), 0);
	CHECK(!exists_in(dir, "memory-state.v2.json"));
	char *after = slurp(dst, NULL);
	CHECK(after && strcmp(before, after) == 0);
	free(after);
	/* it keeps failing (and importing nothing) until the file is fixed */
	r = call(z, NULL, &rc, "zcor_memory_children", "{}");
	CHECK_INT(rc, ZCOR_EINVAL);
	json_decref(r);
	CHECK_INT(sql(dir, "SELECT count(*) FROM nodes"), 0);

	copy_fixture("memory-state-v2.json", dir, "memory-state.json");
	r = call(z, NULL, &rc, "zcor_memory_children", "{}");
	CHECK_INT(rc, ZCOR_OK);
	CHECK_INT(json_array_size(t_get(r, "items")), 3);
	json_decref(r);
	CHECK_INT(sql(dir, "SELECT count(*) FROM people"), 2);
	CHECK(exists_in(dir, "memory-state.v2.json"));
	zcor_close(z);
	free(before);
	free(dst);

	migrate_bad("{\"version\":1,\"memories\":[{\"id\":\"a\",\"title\":\"t\"", "invalid JSON");
	migrate_bad("{\"version\":4,\"nodes\":[]}", "'version'");
	migrate_bad("{\"version\":1,\"memories\":[{\"id\":\"a\",\"title\":\"t\"}]}", "memories[0]");
	migrate_bad("{\"version\":1,\"memories\":[{\"id\":\"a\",\"content\":\"c\",\"createdAt\":\"昨天\"}]}",
		    "memories[0].createdAt");
	migrate_bad("{\"version\":2,\"memories\":[{\"id\":\"a\",\"content\":\"c\"},{\"id\":\"a\",\"content\":\"d\"}]}",
		    "appears twice");
	migrate_bad("{\"version\":3,\"nodes\":[{\"id\":\"n1\",\"title\":\"t\",\"content\":\"c\",\"parentId\":\"ghost\"}]}",
		    "nodes[0].parentId");
	migrate_bad("{\"version\":3,\"nodes\":[{\"id\":\"n1\",\"title\":\"t\",\"content\":\"c\"}],"
		    "\"people\":[{\"personId\":\"1\",\"name\":\"甲\",\"memoryNodeId\":\"n9\"}]}",
		    "people[0].memoryNodeId");
	migrate_bad("{\"version\":1,\"memories\":[{\"id\":\"a\",\"content\":\"c\"}],\"important\":[\"b\"]}",
		    "important[0]");
	/* in a v2 file the relationships live under "relationships" */
	migrate_bad("{\"version\":2,\"memories\":[],\"relationships\":[{\"personId\":\"1\",\"name\":\"甲\","
		    "\"affinity\":150}]}",
		    "relationships[0]");
	migrate_bad("{\"version\":2,\"memories\":[],\"relationships\":[{\"personId\":\"1\",\"name\":\"甲\","
		    "\"affinity\":150}]}",
		    "affinity");

	/* sourceMessage over 20,000 characters */
	json_t *big = json_pack("{s:i, s:[{s:s, s:s}]}", "version", 2, "memories", "id", "a",
				"content", "c");
	char *sm = malloc(20001 * 3 + 1);
	for (int i = 0; i < 20001; i++)
		memcpy(sm + i * 3, "字", 3);
	sm[20001 * 3] = '\0';
	json_object_set_new(json_array_get(t_get(big, "memories"), 0), "sourceMessage", json_string(sm));
	char *text = json_dumps(big, 0);
	migrate_bad(text, "sourceMessage");
	free(text);
	/* exactly 20,000 is fine */
	sm[20000 * 3] = '\0';
	json_object_set_new(json_array_get(t_get(big, "memories"), 0), "sourceMessage", json_string(sm));
	const char *dir3 = t_tmpdir();
	char *p3 = path2(dir3, "memory-state.json");
	write_json(p3, big);
	z = open_at(dir3);
	r = call(z, NULL, &rc, "zcor_memory_read", "{\"id\":\"a\"}");
	CHECK_INT(rc, ZCOR_OK);
	CHECK_INT(strlen(t_str(r, "node.sourceMessage") ? t_str(r, "node.sourceMessage") : ""), 60000);
	json_decref(r);
	zcor_close(z);
	free(p3);
	free(sm);
	json_decref(big);
}

/* ==== Z-BACKUP ======================================================== */

static void z_backup_roundtrip(void)
{
	const char *dir = t_tmpdir();
	copy_fixture("memory-state-v3.json", dir, "memory-state.json");
	json_t *fx = load_fixture("memory-state-v3.json");
	g_now = T_BASE + 123;
	zcor *z = open_at(dir);

	json_t *r = call(z, NULL, NULL, "zcor_memory_backup", "{}");
	CHECK_OK(r);
	CHECK_STR(t_str(r, "file"), "backups/memory-state-20260504T080000123Z.json");
	CHECK_INT(t_int(r, "nodes"), 5);
	CHECK_INT(t_int(r, "people"), 2);
	char *name = strdup(t_str(r, "file") ? t_str(r, "file") : "");
	json_decref(r);
	char *bpath = path2(dir, name);
	json_t *b1 = load_json(bpath);
	CHECK(b1 != NULL);
	CHECK_STR(t_str(b1, "format"), "zcor-memory-state");
	CHECK_INT(t_int(b1, "version"), 3);
	CHECK_STR(t_str(b1, "exportedAt"), "2026-05-04T08:00:00.123Z");
	CHECK_JSON(t_get(b1, "nodes"), t_get(fx, "nodes"));
	CHECK_JSONS(t_get(b1, "important"), "[\"m000003\", \"m000001\"]");
	CHECK_JSON(t_get(b1, "people"), t_get(fx, "people"));
	CHECK_STR(t_str(b1, "synonyms.file"), "synonyms.json");
	char *synp = path2(dir, "synonyms.json");
	json_t *syn = load_json(synp);
	CHECK(syn != NULL);
	CHECK_INT(t_int(b1, "synonyms.groups"), (long long)json_array_size(t_get(syn, "groups")));
	json_decref(syn);
	json_t *fp1 = fingerprint(z);

	/* change everything a restore must undo */
	g_now += 60000;
	r = call(z, NULL, NULL, "zcor_memory_write", "{\"title\":\"新的猫粮\",\"content\":\"年糕换了新猫粮\"}");
	char *x = strdup(t_str(r, "node.id") ? t_str(r, "node.id") : "?");
	json_decref(r);
	json_decref(call(z, NULL, NULL, "zcor_memory_write",
			 "{\"id\":\"m000002\",\"title\":\"小林读研\",\"content\":\"改过的\",\"parentId\":null}"));
	json_decref(call(z, NULL, NULL, "zcor_memory_delete", "{\"id\":\"m000003\"}"));
	json_decref(call(z, NULL, NULL, "zcor_relationship_delete", "{\"personId\":\"10002\"}"));
	json_decref(call(z, NULL, NULL, "zcor_relationship_write",
			 "{\"personId\":\"10001\",\"name\":\"小林\",\"relationship\":\"室友\",\"affinity\":80,"
			 "\"reason\":\"又帮了忙\",\"memoryNodeId\":null}"));
	json_decref(call(z, NULL, NULL, "zcor_memory_important", "{\"id\":\"m000005\",\"important\":true}"));
	char args[256];
	snprintf(args, sizeof(args), "{\"ids\":[\"m000005\"],\"replacementId\":\"%s\",\"reason\":\"更新\"}", x);
	r = call(z, NULL, NULL, "zcor_memory_supersede", args);
	CHECK_OK(r);
	json_decref(r);
	json_decref(call(z, NULL, NULL, "zcor_memory_important", "{\"id\":\"m000001\",\"important\":false}"));
	json_t *fp2 = fingerprint(z);
	CHECK(!json_equal(fp1, fp2));

	char *backups = path2(dir, "backups");
	int nfiles = count_files(backups);
	g_now += 60000;
	int rc = 0;
	snprintf(args, sizeof(args), "{\"backupFile\":\"%s\"}", name);
	r = call(z, NULL, &rc, "zcor_memory_restore", args);
	CHECK_INT(rc, ZCOR_OK);
	CHECK_STR(t_str(r, "restoredFrom"), name);
	CHECK_INT(t_int(r, "formatVersion"), 3);
	CHECK_INT(t_int(r, "nodes"), 5);
	CHECK_INT(t_int(r, "people"), 2);
	/* the state before the restore was backed up first, to a new file */
	const char *prev = t_str(r, "backupOfPrevious");
	CHECK(prev && strncmp(prev, "backups/memory-state-", 21) == 0 && strcmp(prev, name) != 0);
	CHECK_INT(count_files(backups), nfiles + 1);
	if (prev) {
		char *pp = path2(dir, prev);
		json_t *pb = load_json(pp);
		CHECK_INT(json_array_size(t_get(pb, "nodes")), 5); /* + x − m000003 */
		json_t *ids = json_array();
		size_t k;
		json_t *v;
		json_array_foreach(t_get(pb, "nodes"), k, v) json_array_append(ids, t_get(v, "id"));
		CHECK(str_in(ids, x) && !str_in(ids, "m000003"));
		json_decref(ids);
		CHECK_INT(json_array_size(t_get(pb, "people")), 1);
		json_t *imp = json_pack("[s]", x);
		CHECK_JSON(t_get(pb, "important"), imp);
		json_decref(imp);
		json_decref(pb);
		free(pp);
	}
	json_decref(r);

	/* exactly the backed-up state: ids, parents, important order, people, supersededBy */
	json_t *fp3 = fingerprint(z);
	CHECK_JSON(fp3, fp1);
	json_t *b2 = export_state(z, dir, NULL);
	CHECK_JSON(t_get(b2, "nodes"), t_get(b1, "nodes"));
	CHECK_JSON(t_get(b2, "important"), t_get(b1, "important"));
	CHECK_JSON(t_get(b2, "people"), t_get(b1, "people"));
	json_decref(b2);
	json_t *n = read_node(z, "m000004");
	CHECK_STR(t_str(n, "supersededBy"), "m000005");
	json_decref(n);
	n = read_node(z, "m000002");
	CHECK_STR(t_str(n, "parentId"), "m000001");
	json_decref(n);
	rc = 0;
	snprintf(args, sizeof(args), "{\"id\":\"%s\"}", x);
	json_decref(call(z, NULL, &rc, "zcor_memory_read", args));
	CHECK_INT(rc, ZCOR_ENOTFOUND);

	/* the name alone (without "backups/") works too */
	g_now += 60000;
	snprintf(args, sizeof(args), "{\"backupFile\":\"%s\"}", name + strlen("backups/"));
	r = call(z, NULL, &rc, "zcor_memory_restore", args);
	CHECK_INT(rc, ZCOR_OK);
	json_decref(r);

	/* the restore is in history with the file it saved first */
	r = call(z, NULL, NULL, "zcor_memory_history", "{\"keywords\":[\"zcor_memory_restore\"]}");
	CHECK_INT(t_int(r, "total"), 2);
	CHECK(t_str(r, "items.0.before.0.backupFile") != NULL);
	json_decref(r);

	zcor_close(z);
	json_decref(fp1);
	json_decref(fp2);
	json_decref(fp3);
	json_decref(b1);
	json_decref(fx);
	free(x);
	free(name);
	free(bpath);
	free(synp);
	free(backups);
}

static void z_backup_versions(void)
{
	const char *dir = t_tmpdir();
	zcor *z = open_at(dir);
	json_decref(call(z, NULL, NULL, "zcor_memory_write", "{\"title\":\"现有\",\"content\":\"会被替换\"}"));
	char *backups = path2(dir, "backups");
	mkdir(backups, 0777);
	copy_fixture("memory-state-v1.json", backups, "old-v1.json");
	copy_fixture("memory-state-v2.json", backups, "old-v2.json");
	copy_fixture("memory-state-v3.json", backups, "old-v3.json");
	int rc = 0;

	g_now += 1000;
	json_t *r = call(z, NULL, &rc, "zcor_memory_restore", "{\"backupFile\":\"old-v1.json\"}");
	CHECK_INT(rc, ZCOR_OK);
	CHECK_INT(t_int(r, "formatVersion"), 1);
	CHECK_INT(t_int(r, "nodes"), 3);
	json_decref(r);
	json_t *n = read_node(z, "2");
	CHECK_STR(t_str(n, "title"), "用户在学日语");
	CHECK_JSONS(t_get(n, "keywords"), "[]");
	json_decref(n);
	CHECK_INT(sql(dir, "SELECT count(*) FROM people"), 0);

	g_now += 1000;
	r = call(z, NULL, &rc, "zcor_memory_restore", "{\"backupFile\":\"backups/old-v2.json\"}");
	CHECK_INT(rc, ZCOR_OK);
	CHECK_INT(t_int(r, "formatVersion"), 2);
	CHECK_INT(t_int(r, "people"), 2);
	json_decref(r);
	n = read_node(z, "d4e5f6");
	CHECK(json_is_null(t_get(n, "parentId")));
	json_decref(n);
	json_t *p = read_person(z, "20001");
	CHECK(p && json_is_null(t_get(p, "memoryNodeId")));
	json_decref(p);
	rc = 0;
	json_decref(call(z, NULL, &rc, "zcor_memory_read", "{\"id\":\"mem-001\"}"));
	CHECK_INT(rc, ZCOR_ENOTFOUND); /* replaced, not merged */

	g_now += 1000;
	r = call(z, NULL, &rc, "zcor_memory_restore", "{\"backupFile\":\"old-v3.json\"}");
	CHECK_INT(rc, ZCOR_OK);
	CHECK_INT(t_int(r, "formatVersion"), 3);
	json_decref(r);
	n = read_node(z, "m000002");
	CHECK_STR(t_str(n, "parentId"), "m000001");
	json_decref(n);
	p = read_person(z, "10001");
	CHECK_STR(t_str(p, "memoryNodeId"), "m000001");
	json_decref(p);
	/* no migration snapshots from a restore */
	CHECK(!exists_in(dir, "memory-state.v1.json"));
	zcor_close(z);
	free(backups);
}

static void z_backup_refuse(void)
{
	const char *dir = t_tmpdir();
	zcor *z = open_at(dir);
	json_decref(call(z, NULL, NULL, "zcor_memory_write", "{\"title\":\"甲\",\"content\":\"一\"}"));
	json_decref(call(z, NULL, NULL, "zcor_memory_write", "{\"title\":\"乙\",\"content\":\"二\"}"));
	char *good = NULL;
	json_decref(export_state(z, dir, &good));
	/* valid state files outside backups/, which a traversal would reach */
	copy_fixture("memory-state-v3.json", dir, "x.json");
	char *backups = path2(dir, "backups");
	char *link = path2(backups, "link.json");
	CHECK(symlink("../x.json", link) == 0);
	char *sub = path2(backups, "sub");
	mkdir(sub, 0777);
	copy_fixture("memory-state-v3.json", sub, "x.json");
	char *bad = path2(backups, "bad.json");
	json_t *doc = load_fixture("memory-state-v3.json");
	json_object_set_new(json_array_get(t_get(doc, "nodes"), 1), "title", json_integer(42));
	write_json(bad, doc);
	json_decref(doc);
	char *broken = path2(backups, "broken.json");
	spit(broken, "{\"version\":3,\"nodes\":[");

	json_t *fp = fingerprint(z);
	int nfiles = count_files(backups);
	static const struct {
		const char *arg;
		const char *code;
	} refuse[] = {
		{"../x.json", "invalid_argument"},
		{"/etc/passwd", "invalid_argument"},
		{"backups/../memory.db", "invalid_argument"},
		{"backups/../x.json", "invalid_argument"},
		{"sub/x.json", "invalid_argument"},
		{"..", "invalid_argument"},
		{"", "invalid_argument"},
		{"not-there.json", "not_found"},
		{"link.json", NULL}, /* a symlink out of backups/: refused, either code */
	};
	for (size_t i = 0; i < sizeof(refuse) / sizeof(refuse[0]); i++) {
		json_t *a = json_pack("{s:s}", "backupFile", refuse[i].arg);
		char *args = json_dumps(a, JSON_COMPACT);
		int rc = 0;
		json_t *r = call(z, NULL, &rc, "zcor_memory_restore", args);
		if (rc == ZCOR_OK)
			fprintf(stderr, "restore accepted backupFile '%s'\n", refuse[i].arg);
		CHECK(rc != ZCOR_OK);
		if (refuse[i].code)
			CHECK_STR(t_errcode(r), refuse[i].code);
		CHECK_CONTAINS(t_errmsg(r), "backupFile");
		json_decref(r);
		json_decref(a);
		free(args);
	}
	json_t *now = fingerprint(z);
	CHECK_JSON(now, fp);
	json_decref(now);
	CHECK_INT(count_files(backups), nfiles);

	/* a malformed backup: the error names the field; nothing changes */
	int rc = 0;
	json_t *r = call(z, NULL, &rc, "zcor_memory_restore", "{\"backupFile\":\"bad.json\"}");
	CHECK_INT(rc, ZCOR_EINVAL);
	CHECK_CONTAINS(t_errmsg(r), "nodes[1]");
	CHECK_CONTAINS(t_errmsg(r), "title");
	json_decref(r);
	r = call(z, NULL, &rc, "zcor_memory_restore", "{\"backupFile\":\"broken.json\"}");
	CHECK_INT(rc, ZCOR_EINVAL);
	CHECK_CONTAINS(t_errmsg(r), "invalid JSON");
	json_decref(r);
	now = fingerprint(z);
	CHECK_JSON(now, fp);
	json_decref(now);
	CHECK_INT(count_files(backups), nfiles);

	/* only the operator restores: not from a group or private chat */
	char args[256];
	snprintf(args, sizeof(args), "{\"backupFile\":\"%s\"}", good);
	r = call(z, "group:1", &rc, "zcor_memory_restore", args);
	CHECK_INT(rc, ZCOR_EFORBIDDEN);
	CHECK_STR(t_errcode(r), "forbidden");
	json_decref(r);
	r = call(z, "private:5", &rc, "zcor_memory_restore", args);
	CHECK_INT(rc, ZCOR_EFORBIDDEN);
	json_decref(r);
	now = fingerprint(z);
	CHECK_JSON(now, fp);
	json_decref(now);
	CHECK_INT(count_files(backups), nfiles);
	/* every refusal was recorded as an error */
	r = call(z, NULL, NULL, "zcor_memory_history", "{\"keywords\":[\"zcor_memory_restore\",\"error\"]}");
	CHECK_INT(t_int(r, "total"), (long long)(sizeof(refuse) / sizeof(refuse[0])) + 4);
	json_decref(r);
	zcor_close(z);
	json_decref(fp);
	free(good);
	free(backups);
	free(link);
	free(sub);
	free(bad);
	free(broken);
}

/* Ids are limited in characters (the tool schema), so a backup of a
 * 30-character Chinese person id must restore. */
static void z_backup_long_ids(void)
{
	const char *dir = t_tmpdir();
	zcor *z = open_at(dir);
	char pid[200];
	for (int i = 0; i < 30; i++)
		memcpy(pid + i * 3, "张", 3);
	pid[90] = '\0';
	char args[512];
	snprintf(args, sizeof(args),
		 "{\"personId\":\"%s\",\"name\":\"张\",\"relationship\":\"x\",\"affinity\":1,"
		 "\"reason\":\"x\"}",
		 pid);
	int rc = 0;
	json_t *r = call(z, NULL, &rc, "zcor_relationship_write", args);
	CHECK_INT(rc, ZCOR_OK);
	json_decref(r);
	char *name = NULL;
	json_decref(export_state(z, dir, &name));
	g_now += 1000;
	snprintf(args, sizeof(args), "{\"backupFile\":\"%s\"}", name ? name : "?");
	r = call(z, NULL, &rc, "zcor_memory_restore", args);
	CHECK_INT(rc, ZCOR_OK);
	CHECK_OK(r);
	json_decref(r);
	json_t *p = read_person(z, pid);
	CHECK(p != NULL);
	json_decref(p);
	zcor_close(z);
	free(name);
}

/* ==== Z-REL =========================================================== */

static void z_rel_write_read_delete(void)
{
	const char *dir = t_tmpdir();
	g_now = T_BASE;
	zcor *z = open_at(dir);
	json_t *r = call(z, NULL, NULL, "zcor_memory_write", "{\"title\":\"人物：阿杰\",\"content\":\"用户的同事\"}");
	char *node = strdup(t_str(r, "node.id"));
	json_decref(r);

	g_now = T_BASE + 1000;
	char args[512];
	snprintf(args, sizeof(args),
		 "{\"personId\":\"30001\",\"name\":\"阿杰\",\"relationship\":\"同事\",\"affinity\":20,"
		 "\"reason\":\"一起吃午饭\",\"aliases\":[\"杰哥\"],\"memoryNodeId\":\"%s\"}",
		 node);
	r = call(z, NULL, NULL, "zcor_relationship_write", args);
	CHECK_OK(r);
	CHECK(json_is_true(t_get(r, "created")));
	CHECK_STR(t_str(r, "person.personId"), "30001");
	CHECK_STR(t_str(r, "person.firstSeen"), iso(T_BASE + 1000));
	CHECK_STR(t_str(r, "person.updatedAt"), iso(T_BASE + 1000));
	CHECK_STR(t_str(r, "person.memoryNodeId"), node);
	json_decref(r);

	json_t *p = read_person(z, "30001");
	CHECK_STR(t_str(p, "name"), "阿杰");
	CHECK_STR(t_str(p, "relationship"), "同事");
	CHECK_INT(t_int(p, "affinity"), 20);
	CHECK_STR(t_str(p, "reason"), "一起吃午饭");
	CHECK_JSONS(t_get(p, "aliases"), "[\"杰哥\"]");
	json_decref(p);

	/* update: firstSeen stays, updatedAt moves, omitted aliases and link stay */
	g_now = T_BASE + 5000;
	r = call(z, NULL, NULL, "zcor_relationship_write",
		 "{\"personId\":\"30001\",\"name\":\"阿杰\",\"relationship\":\"好同事\",\"affinity\":40,"
		 "\"reason\":\"帮用户修好了电脑\"}");
	CHECK_OK(r);
	CHECK(json_is_false(t_get(r, "created")));
	json_decref(r);
	p = read_person(z, "30001");
	CHECK_STR(t_str(p, "firstSeen"), iso(T_BASE + 1000));
	CHECK_STR(t_str(p, "updatedAt"), iso(T_BASE + 5000));
	CHECK_INT(t_int(p, "affinity"), 40);
	CHECK_JSONS(t_get(p, "aliases"), "[\"杰哥\"]");
	CHECK_STR(t_str(p, "memoryNodeId"), node);
	json_decref(p);
	r = call(z, NULL, NULL, "zcor_memory_history", "{\"keywords\":[\"帮用户修好了电脑\"]}");
	CHECK_INT(t_int(r, "total"), 1);
	CHECK_INT(t_int(r, "items.0.before.0.affinity"), 20);
	CHECK_INT(t_int(r, "items.0.after.0.affinity"), 40);
	json_decref(r);

	/* the linked node cannot be deleted while the link exists */
	int rc = 0;
	snprintf(args, sizeof(args), "{\"id\":\"%s\"}", node);
	r = call(z, NULL, &rc, "zcor_memory_delete", args);
	CHECK_INT(rc, ZCOR_ECONFLICT);
	json_decref(r);

	/* memoryNodeId must name an existing node */
	r = call(z, NULL, &rc, "zcor_relationship_write",
		 "{\"personId\":\"30001\",\"name\":\"阿杰\",\"relationship\":\"x\",\"affinity\":0,"
		 "\"reason\":\"x\",\"memoryNodeId\":\"ghost\"}");
	CHECK_INT(rc, ZCOR_ENOTFOUND);
	CHECK_CONTAINS(t_errmsg(r), "memoryNodeId");
	json_decref(r);
	r = call(z, NULL, &rc, "zcor_relationship_write",
		 "{\"personId\":\"30002\",\"name\":\"新人\",\"relationship\":\"x\",\"affinity\":0,"
		 "\"reason\":\"x\",\"memoryNodeId\":\"ghost\"}");
	CHECK_INT(rc, ZCOR_ENOTFOUND);
	json_decref(r);
	p = read_person(z, "30001");
	CHECK_INT(t_int(p, "affinity"), 40);
	json_decref(p);
	json_decref(call(z, NULL, &rc, "zcor_relationship_read", "{\"personId\":\"30002\"}"));
	CHECK_INT(rc, ZCOR_ENOTFOUND);

	/* unlink with null, then the node can go */
	r = call(z, NULL, &rc, "zcor_relationship_write",
		 "{\"personId\":\"30001\",\"name\":\"阿杰\",\"relationship\":\"好同事\",\"affinity\":40,"
		 "\"reason\":\"帮用户修好了电脑\",\"memoryNodeId\":null}");
	CHECK_INT(rc, ZCOR_OK);
	CHECK(json_is_null(t_get(r, "person.memoryNodeId")));
	json_decref(r);
	r = call(z, NULL, &rc, "zcor_memory_delete", args);
	CHECK_INT(rc, ZCOR_OK);
	json_decref(r);

	/* delete; history keeps the pre-delete content */
	r = call(z, NULL, &rc, "zcor_relationship_delete", "{\"personId\":\"30001\"}");
	CHECK_INT(rc, ZCOR_OK);
	CHECK(json_is_true(t_get(r, "deleted")));
	json_decref(r);
	json_decref(call(z, NULL, &rc, "zcor_relationship_read", "{\"personId\":\"30001\"}"));
	CHECK_INT(rc, ZCOR_ENOTFOUND);
	json_decref(call(z, NULL, &rc, "zcor_relationship_delete", "{\"personId\":\"30001\"}"));
	CHECK_INT(rc, ZCOR_ENOTFOUND);
	r = call(z, NULL, NULL, "zcor_memory_history",
		 "{\"keywords\":[\"zcor_relationship_delete\",\"30001\"]}");
	CHECK_INT(t_int(r, "total"), 2); /* the delete and the failed second delete */
	CHECK_STR(t_str(r, "items.1.status"), "ok");
	CHECK_STR(t_str(r, "items.1.before.0.name"), "阿杰");
	CHECK_STR(t_str(r, "items.1.before.0.relationship"), "好同事");
	CHECK_INT(t_int(r, "items.1.before.0.affinity"), 40);
	CHECK_STR(t_str(r, "items.1.before.0.reason"), "帮用户修好了电脑");
	CHECK_JSONS(t_get(r, "items.1.before.0.aliases"), "[\"杰哥\"]");
	CHECK(json_is_null(t_get(r, "items.1.after")));
	CHECK_STR(t_str(r, "items.0.status"), "error");
	json_decref(r);
	zcor_close(z);
	free(node);
}

static void z_rel_affinity(void)
{
	const char *dir = t_tmpdir();
	zcor *z = open_at(dir);
	static const char *const bad[] = {"101", "-101", "1.5", "\"x\"", "null", "1e3"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char args[256];
		snprintf(args, sizeof(args),
			 "{\"personId\":\"40001\",\"name\":\"小周\",\"relationship\":\"网友\",\"affinity\":%s,"
			 "\"reason\":\"测试\"}",
			 bad[i]);
		int rc = 0;
		json_t *r = call(z, NULL, &rc, "zcor_relationship_write", args);
		if (rc == ZCOR_OK)
			fprintf(stderr, "affinity %s was accepted\n", bad[i]);
		CHECK_INT(rc, ZCOR_EINVAL);
		CHECK_CONTAINS(t_errmsg(r), "'affinity'");
		json_decref(r);
	}
	CHECK_INT(sql(dir, "SELECT count(*) FROM people"), 0);
	static const int good[] = {-100, 100, 0};
	for (size_t i = 0; i < 3; i++) {
		char args[256];
		snprintf(args, sizeof(args),
			 "{\"personId\":\"40001\",\"name\":\"小周\",\"relationship\":\"网友\",\"affinity\":%d,"
			 "\"reason\":\"测试\"}",
			 good[i]);
		int rc = 0;
		json_t *r = call(z, NULL, &rc, "zcor_relationship_write", args);
		CHECK_INT(rc, ZCOR_OK);
		CHECK_INT(t_int(r, "person.affinity"), good[i]);
		json_decref(r);
		json_t *p = read_person(z, "40001");
		CHECK_INT(t_int(p, "affinity"), good[i]);
		json_decref(p);
	}
	/* an integral real is an integer to the schema: it must not turn into 0 */
	int rc = 0;
	json_t *r = call(z, NULL, &rc, "zcor_relationship_write",
			 "{\"personId\":\"40001\",\"name\":\"小周\",\"relationship\":\"网友\",\"affinity\":50.0,"
			 "\"reason\":\"测试\"}");
	json_decref(r);
	json_t *p = read_person(z, "40001");
	if (rc == ZCOR_OK)
		CHECK_INT(t_int(p, "affinity"), 50);
	json_decref(p);
	/* the required arguments */
	r = call(z, NULL, &rc, "zcor_relationship_write",
		 "{\"personId\":\"40002\",\"name\":\"小吴\",\"relationship\":\"x\",\"affinity\":1}");
	CHECK_INT(rc, ZCOR_EINVAL);
	CHECK_CONTAINS(t_errmsg(r), "'reason'");
	json_decref(r);
	zcor_close(z);
}

static void z_rel_query(void)
{
	const char *dir = t_tmpdir();
	g_now = T_BASE;
	zcor *z = open_at(dir);
	static const char *const people[] = {
		"{\"personId\":\"50001\",\"name\":\"张三\",\"aliases\":[\"小张\"],\"relationship\":\"同事\",\"affinity\":10,\"reason\":\"合作过项目\"}",
		"{\"personId\":\"50002\",\"name\":\"李四\",\"relationship\":\"邻居\",\"affinity\":5,\"reason\":\"借过梯子\"}",
		"{\"personId\":\"50003\",\"name\":\"王五\",\"aliases\":[\"Wang Wu\"],\"relationship\":\"网友\",\"affinity\":-20,\"reason\":\"说话很冲\"}",
		"{\"personId\":\"50004\",\"name\":\"赵六\",\"relationship\":\"大学同学\",\"affinity\":50,\"reason\":\"毕业旅行一起去了云南\"}",
		"{\"personId\":\"50005\",\"name\":\"孙七\",\"relationship\":\"大学同学\",\"affinity\":30,\"reason\":\"偶尔聊天\"}",
	};
	for (size_t i = 0; i < 5; i++) {
		g_now = T_BASE + (int64_t)i * 1000;
		json_t *r = call(z, NULL, NULL, "zcor_relationship_write", people[i]);
		CHECK_OK(r);
		json_decref(r);
	}
	json_t *r = call(z, NULL, NULL, "zcor_relationship_query", "{}");
	CHECK_INT(t_int(r, "total"), 5);
	CHECK_STR(t_str(r, "items.0.personId"), "50005"); /* newest first */
	CHECK_STR(t_str(r, "items.4.personId"), "50001");
	CHECK(json_is_null(t_get(r, "nextOffset")));
	json_decref(r);
	r = call(z, NULL, NULL, "zcor_relationship_query", "{\"limit\":2}");
	CHECK_INT(json_array_size(t_get(r, "items")), 2);
	CHECK_INT(t_int(r, "total"), 5);
	CHECK_INT(t_int(r, "nextOffset"), 2);
	json_decref(r);
	r = call(z, NULL, NULL, "zcor_relationship_query", "{\"limit\":2,\"offset\":2}");
	CHECK_STR(t_str(r, "items.0.personId"), "50003");
	CHECK_INT(t_int(r, "nextOffset"), 4);
	json_decref(r);
	r = call(z, NULL, NULL, "zcor_relationship_query", "{\"limit\":2,\"offset\":4}");
	CHECK_INT(json_array_size(t_get(r, "items")), 1);
	CHECK(json_is_null(t_get(r, "nextOffset")));
	json_decref(r);
	r = call(z, NULL, NULL, "zcor_relationship_query", "{\"offset\":9}");
	CHECK_INT(json_array_size(t_get(r, "items")), 0);
	CHECK_INT(t_int(r, "total"), 5);
	json_decref(r);
	int rc = 0;
	json_decref(call(z, NULL, &rc, "zcor_relationship_query", "{\"limit\":101}"));
	CHECK_INT(rc, ZCOR_EINVAL);
	json_decref(call(z, NULL, &rc, "zcor_relationship_query", "{\"offset\":-1}"));
	CHECK_INT(rc, ZCOR_EINVAL);

	static const struct {
		const char *kw;
		int total;
		const char *first;
	} q[] = {
		{"[\"wang\"]", 1, "50003"},             /* alias, case folded */
		{"[\"ＷＡＮＧ ＷＵ\"]", 1, "50003"},     /* NFKC */
		{"[\"大学同学\"]", 2, "50005"},          /* relationship */
		{"[\"云南\"]", 1, "50004"},              /* reason */
		{"[\"50002\"]", 1, "50002"},             /* person id */
		{"[\"小张\",\"张三\"]", 1, "50001"},     /* every keyword must match */
		{"[\"小张\",\"李四\"]", 0, NULL},
	};
	for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
		char args[128];
		snprintf(args, sizeof(args), "{\"keywords\":%s}", q[i].kw);
		r = call(z, NULL, NULL, "zcor_relationship_query", args);
		CHECK_OK(r);
		CHECK_INT(t_int(r, "total"), q[i].total);
		if (q[i].first)
			CHECK_STR(t_str(r, "items.0.personId"), q[i].first);
		json_decref(r);
	}
	zcor_close(z);
}

static void z_rel_private(void)
{
	const char *dir = t_tmpdir();
	zcor *z = open_at(dir);
	const char *w = "{\"personId\":\"60001\",\"name\":\"老陈\",\"relationship\":\"房东\",\"affinity\":0,"
			"\"reason\":\"按时退押金\"}";
	json_decref(call(z, NULL, NULL, "zcor_relationship_write", w));
	json_t *before = read_person(z, "60001");

	int rc = 0;
	json_t *r = call(z, "private:5", &rc, "zcor_relationship_read", "{\"personId\":\"60001\"}");
	CHECK_INT(rc, ZCOR_OK);
	CHECK_STR(t_str(r, "person.name"), "老陈");
	json_decref(r);
	r = call(z, "private:5", &rc, "zcor_relationship_query", "{\"keywords\":[\"房东\"]}");
	CHECK_INT(rc, ZCOR_OK);
	CHECK_INT(t_int(r, "total"), 1);
	json_decref(r);
	r = call(z, "private:5", &rc, "zcor_relationship_write",
		 "{\"personId\":\"60001\",\"name\":\"老陈\",\"relationship\":\"房东\",\"affinity\":-50,"
		 "\"reason\":\"私聊里说的\"}");
	CHECK_INT(rc, ZCOR_EFORBIDDEN);
	CHECK_STR(t_errcode(r), "forbidden");
	json_decref(r);
	r = call(z, "private:5", &rc, "zcor_relationship_write",
		 "{\"personId\":\"60002\",\"name\":\"新人\",\"relationship\":\"x\",\"affinity\":1,\"reason\":\"x\"}");
	CHECK_INT(rc, ZCOR_EFORBIDDEN);
	json_decref(r);
	r = call(z, "private:5", &rc, "zcor_relationship_delete", "{\"personId\":\"60001\"}");
	CHECK_INT(rc, ZCOR_EFORBIDDEN);
	CHECK_STR(t_errcode(r), "forbidden");
	json_decref(r);
	json_t *after = read_person(z, "60001");
	CHECK_JSON(after, before);
	CHECK_INT(sql(dir, "SELECT count(*) FROM people"), 1);
	/* a group conversation may maintain them */
	r = call(z, "group:1", &rc, "zcor_relationship_write",
		 "{\"personId\":\"60001\",\"name\":\"老陈\",\"relationship\":\"房东\",\"affinity\":10,"
		 "\"reason\":\"群里帮忙\"}");
	CHECK_INT(rc, ZCOR_OK);
	json_decref(r);
	json_decref(before);
	json_decref(after);
	zcor_close(z);
}

/* ==== Z-HIST ========================================================== */

static void z_hist_every_call(void)
{
	const char *dir = t_tmpdir();
	g_now = T_BASE;
	zcor *z = open_at(dir);
	json_t *r = call(z, NULL, NULL, "zcor_memory_write", "{\"title\":\"用户爱喝咖啡\",\"content\":\"每天两杯\"}");
	char *a = strdup(t_str(r, "node.id"));
	json_decref(r);
	char rd[64], tr[64];
	snprintf(rd, sizeof(rd), "{\"id\":\"%s\"}", a);
	snprintf(tr, sizeof(tr), "{\"id\":\"%s\"}", a);
	static const struct {
		const char *tool, *args, *status;
	} calls[] = {
		{"zcor_memory_read", NULL, "ok"}, /* args: rd */
		{"zcor_memory_read", "{\"id\":\"ghost-42\"}", "error"},
		{"zcor_memory_query", "{\"keywords\":[\"咖啡\"]}", "ok"},
		{"zcor_memory_write", "{\"title\":\"缺正文\"}", "error"},
		{"zcor_memory_write", "{\"title\":\"x\",\"content\":\"y\",\"colour\":1}", "error"},
		{"zcor_synonyms_add", "{\"terms\":[\"鸳鸯奶茶\",\"港式鸳鸯\"]}", "ok"},
		{"zcor_synonyms_add", "{\"terms\":[\"ABC\",\"abc\"]}", "error"},
		{"zcor_relationship_query", "{}", "ok"},
		{"zcor_relationship_read", "{\"personId\":\"nobody\"}", "error"},
		{"zcor_memory_children", "{}", "ok"},
		{"zcor_memory_trace", NULL, "ok"}, /* args: tr */
		{"zcor_memory_search", "{\"keywords\":[\"火锅\"]}", "ok"},
		{"zcor_memory_search", "{\"keywords\":[\"咖啡\"]}", "error"}, /* no provider */
		{"zcor_memory_backup", "{}", "ok"},
	};
	size_t ncalls = sizeof(calls) / sizeof(calls[0]);
	for (size_t i = 0; i < ncalls; i++) {
		g_now = T_BASE + 1000 * (int64_t)(i + 1);
		const char *args = calls[i].args ? calls[i].args : i == 0 ? rd : tr;
		int rc = 0;
		json_decref(call(z, NULL, &rc, calls[i].tool, args));
		CHECK_INT(rc == ZCOR_OK, strcmp(calls[i].status, "ok") == 0);
	}
	/* arguments that are not JSON at all are recorded as they came */
	int rc = 0;
	json_decref(call(z, NULL, &rc, "zcor_memory_write", "{oops"));
	CHECK_INT(rc, ZCOR_EINVAL);

	g_now = T_BASE + 100000;
	r = call(z, NULL, NULL, "zcor_memory_history", "{\"limit\":100}");
	CHECK_OK(r);
	CHECK_INT(t_int(r, "total"), (long long)ncalls + 2); /* + the first write and "{oops" */
	json_t *items = t_get(r, "items");
	json_t *oops = json_array_get(items, 0);
	CHECK_STR(t_str(oops, "operation"), "zcor_memory_write");
	CHECK_STR(t_str(oops, "status"), "error");
	CHECK_STR(t_str(oops, "arguments"), "{oops");
	CHECK_CONTAINS(t_str(oops, "error"), "invalid_argument");
	for (size_t i = 0; i < ncalls; i++) {
		json_t *h = json_array_get(items, ncalls - i); /* newest first */
		const char *args = calls[i].args ? calls[i].args : i == 0 ? rd : tr;
		CHECK_STR(t_str(h, "operation"), calls[i].tool);
		CHECK_STR(t_str(h, "status"), calls[i].status);
		CHECK_STR(t_str(h, "actor"), "model");
		CHECK_STR(t_str(h, "at"), iso(T_BASE + 1000 * (int64_t)(i + 1)));
		json_t *want = parse(args);
		CHECK_JSON(t_get(h, "arguments"), want);
		json_decref(want);
		if (strcmp(calls[i].status, "error") == 0)
			CHECK(t_str(h, "error") != NULL);
		else
			CHECK(json_is_null(t_get(h, "error")));
	}
	json_t *ghost = json_array_get(items, ncalls - 1);
	CHECK_CONTAINS(t_str(ghost, "error"), "not_found");
	CHECK_CONTAINS(t_str(ghost, "error"), "ghost-42");
	/* synonyms_add keeps the group it added */
	json_t *syn = json_array_get(items, ncalls - 5);
	CHECK_JSONS(t_get(syn, "after.0.synonymGroup"), "[\"鸳鸯奶茶\",\"港式鸳鸯\"]");
	json_decref(r);
	CHECK_INT(sql(dir, "SELECT count(*) FROM history"), (long long)ncalls + 3);
	zcor_close(z);
	free(a);
}

static void z_hist_snapshots(void)
{
	const char *dir = t_tmpdir();
	zcor *z = open_at(dir);
	json_t *r = call(z, NULL, NULL, "zcor_memory_write",
			 "{\"title\":\"用户的咖啡\",\"content\":\"美式\",\"sourceMessage\":\"我只喝美式\"}");
	char *a = strdup(t_str(r, "node.id"));
	json_decref(r);
	char args[512];
	snprintf(args, sizeof(args), "{\"id\":\"%s\",\"title\":\"用户的咖啡\",\"content\":\"燕麦拿铁\"}", a);
	json_decref(call(z, NULL, NULL, "zcor_memory_write", args));
	snprintf(args, sizeof(args), "{\"id\":\"%s\"}", a);
	json_decref(call(z, NULL, NULL, "zcor_memory_delete", args));

	r = call(z, NULL, NULL, "zcor_memory_history", "{\"keywords\":[\"用户的咖啡\"]}");
	CHECK_INT(t_int(r, "total"), 3);
	/* delete: the whole pre-delete node */
	CHECK_STR(t_str(r, "items.0.operation"), "zcor_memory_delete");
	CHECK_STR(t_str(r, "items.0.before.0.id"), a);
	CHECK_STR(t_str(r, "items.0.before.0.content"), "燕麦拿铁");
	CHECK_STR(t_str(r, "items.0.before.0.sourceMessage"), "我只喝美式");
	CHECK(json_is_null(t_get(r, "items.0.after")));
	/* update: before and after in full */
	CHECK_STR(t_str(r, "items.1.before.0.content"), "美式");
	CHECK_STR(t_str(r, "items.1.after.0.content"), "燕麦拿铁");
	CHECK_STR(t_str(r, "items.1.after.0.title"), "用户的咖啡");
	/* create: after only */
	CHECK(json_is_null(t_get(r, "items.2.before")));
	CHECK_STR(t_str(r, "items.2.after.0.content"), "美式");
	json_decref(r);

	/* the important-mark replacement receipt */
	char *ids[6];
	for (int i = 0; i < 6; i++) {
		snprintf(args, sizeof(args), "{\"title\":\"重要 %d\",\"content\":\"第 %d 条\"}", i, i);
		r = call(z, NULL, NULL, "zcor_memory_write", args);
		ids[i] = strdup(t_str(r, "node.id"));
		json_decref(r);
	}
	for (int i = 0; i < 6; i++) {
		snprintf(args, sizeof(args), "{\"id\":\"%s\",\"important\":true}", ids[i]);
		r = call(z, NULL, NULL, "zcor_memory_important", args);
		CHECK_OK(r);
		if (i == 5) {
			CHECK_STR(t_str(r, "receipt.replacedId"), ids[0]);
			CHECK_STR(t_str(r, "receipt.replacedTitle"), "重要 0");
			CHECK(t_str(r, "receipt.reminder") && *t_str(r, "receipt.reminder"));
		} else {
			CHECK(t_get(r, "receipt") == NULL);
		}
		json_decref(r);
	}
	r = call(z, NULL, NULL, "zcor_memory_history", "{\"keywords\":[\"zcor_memory_important\"],\"limit\":1}");
	CHECK_STR(t_str(r, "items.0.receipt.replacedId"), ids[0]);
	CHECK_STR(t_str(r, "items.0.receipt.replacedTitle"), "重要 0");
	CHECK(t_str(r, "items.0.receipt.reminder") != NULL);
	/* the replaced node's mark change is in the snapshots too */
	CHECK_STR(t_str(r, "items.0.before.0.id"), ids[0]);
	CHECK(json_is_false(t_get(r, "items.0.after.0.important")));
	json_decref(r);
	json_t *n = read_node(z, ids[0]); /* the node itself stays */
	CHECK(n && json_is_false(t_get(n, "important")));
	json_decref(n);
	for (int i = 0; i < 6; i++)
		free(ids[i]);
	zcor_close(z);
	free(a);
}

static void z_hist_self_and_keywords(void)
{
	const char *dir = t_tmpdir();
	g_now = T_BASE;
	zcor *z = open_at(dir);
	json_decref(call(z, NULL, NULL, "zcor_memory_write",
			 "{\"title\":\"周末去ＳＴＡＲＢＵＣＫＳ\",\"content\":\"点了燕麦奶拿铁\"}"));
	json_decref(call(z, NULL, NULL, "zcor_memory_read", "{\"id\":\"ghost-42\"}"));

	/* the history query is recorded after it answers */
	g_now = T_BASE + 1000;
	json_t *r = call(z, NULL, NULL, "zcor_memory_history", "{}");
	CHECK_INT(t_int(r, "total"), 2);
	CHECK_STR(t_str(r, "items.0.operation"), "zcor_memory_read");
	json_decref(r);
	r = call(z, NULL, NULL, "zcor_memory_history", "{\"limit\":5}");
	CHECK_INT(t_int(r, "total"), 3);
	CHECK_STR(t_str(r, "items.0.operation"), "zcor_memory_history");
	CHECK_JSONS(t_get(r, "items.0.arguments"), "{}");
	CHECK_STR(t_str(r, "items.0.status"), "ok");
	json_decref(r);

	/* keywords over the whole record; "to" leaves out the queries' own
	 * records, whose arguments hold the keywords too */
	static const struct {
		const char *kw;
		int total;
		const char *op;
	} q[] = {
		{"[\"starbucks\"]", 1, "zcor_memory_write"},       /* an argument, NFKC + folded */
		{"[\"ＳｔａｒＢｕｃｋｓ\"]", 1, "zcor_memory_write"},
		{"[\"燕麦奶\"]", 1, "zcor_memory_write"},          /* the after snapshot */
		{"[\"ghost-42\"]", 1, "zcor_memory_read"},         /* an argument value */
		{"[\"FIND IDS WITH\"]", 1, "zcor_memory_read"},    /* the error message */
		{"[\"NOT_FOUND\"]", 1, "zcor_memory_read"},        /* the error code */
		{"[\"starbucks\",\"ghost-42\"]", 0, NULL},         /* all keywords must match */
	};
	g_now = T_BASE + 2000;
	for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
		char args[200];
		snprintf(args, sizeof(args), "{\"keywords\":%s,\"to\":\"%s\"}", q[i].kw, iso(T_BASE));
		r = call(z, NULL, NULL, "zcor_memory_history", args);
		CHECK_OK(r);
		if (t_int(r, "total") != q[i].total)
			fprintf(stderr, "history keywords %s\n", q[i].kw);
		CHECK_INT(t_int(r, "total"), q[i].total);
		if (q[i].op)
			CHECK_STR(t_str(r, "items.0.operation"), q[i].op);
		json_decref(r);
	}
	/* without "to", the earlier query with the same keyword is found */
	r = call(z, NULL, NULL, "zcor_memory_history", "{\"keywords\":[\"FIND IDS WITH\"]}");
	CHECK_INT(t_int(r, "total"), 2);
	CHECK_STR(t_str(r, "items.0.operation"), "zcor_memory_history");
	json_decref(r);
	zcor_close(z);
}

static void z_hist_time_and_scope(void)
{
	const char *dir = t_tmpdir();
	zcor *z = open_at(dir);
	int64_t t1 = T_BASE + 1000, t2 = T_BASE + 61000, t3 = T_BASE + 3600000;
	g_now = t1;
	json_decref(call(z, NULL, NULL, "zcor_memory_write", "{\"title\":\"甲\",\"content\":\"一\"}"));
	g_now = t2;
	json_decref(call(z, "group:1", NULL, "zcor_memory_write", "{\"title\":\"乙\",\"content\":\"二\"}"));
	json_decref(call(z, "group:1", NULL, "zcor_memory_query", "{}"));
	g_now = t3;
	json_decref(call(z, "group:2", NULL, "zcor_memory_write", "{\"title\":\"丙\",\"content\":\"三\"}"));
	g_now = T_BASE + 86400000;

	char args[256];
	snprintf(args, sizeof(args), "{\"from\":\"%s\",\"to\":\"%s\"}", iso(t2), iso(t2));
	json_t *r = call(z, NULL, NULL, "zcor_memory_history", args);
	CHECK_OK(r);
	CHECK_INT(t_int(r, "total"), 2); /* inclusive on both ends */
	CHECK_STR(t_str(r, "items.0.operation"), "zcor_memory_query");
	CHECK_STR(t_str(r, "items.1.arguments.title"), "乙");
	json_decref(r);
	snprintf(args, sizeof(args), "{\"from\":\"%s\",\"to\":\"%s\"}", iso8(t1), iso(t2));
	r = call(z, NULL, NULL, "zcor_memory_history", args);
	CHECK_INT(t_int(r, "total"), 3);
	json_decref(r);
	snprintf(args, sizeof(args), "{\"from\":\"%s\",\"to\":\"%s\"}", iso(t1 + 1), iso8(t2 - 1));
	r = call(z, NULL, NULL, "zcor_memory_history", args);
	CHECK_INT(t_int(r, "total"), 0);
	json_decref(r);
	snprintf(args, sizeof(args), "{\"from\":\"%s\"}", iso8(t3));
	r = call(z, NULL, NULL, "zcor_memory_history", args);
	CHECK_INT(t_int(r, "total"), 4); /* 丙 and the three history queries above */
	json_decref(r);
	snprintf(args, sizeof(args), "{\"to\":\"%s\"}", iso(t1));
	r = call(z, NULL, NULL, "zcor_memory_history", args);
	CHECK_INT(t_int(r, "total"), 1);
	CHECK_STR(t_str(r, "items.0.arguments.title"), "甲");
	json_decref(r);
	int rc = 0;
	r = call(z, NULL, &rc, "zcor_memory_history", "{\"to\":\"2026-05-04T08:00:00\"}");
	CHECK_INT(rc, ZCOR_EINVAL);
	CHECK_CONTAINS(t_errmsg(r), "'to'");
	json_decref(r);

	/* inside a conversation, only that conversation's records */
	r = call(z, "group:1", NULL, "zcor_memory_history", "{\"limit\":100}");
	CHECK_OK(r);
	CHECK_INT(t_int(r, "total"), 2);
	size_t i;
	json_t *v;
	json_array_foreach(t_get(r, "items"), i, v) CHECK_STR(t_str(v, "conversation"), "group:1");
	json_decref(r);
	r = call(z, "group:2", NULL, "zcor_memory_history", "{\"limit\":100}");
	CHECK_INT(t_int(r, "total"), 1);
	CHECK_STR(t_str(r, "items.0.arguments.title"), "丙");
	json_decref(r);
	r = call(z, "private:7", NULL, "zcor_memory_history", "{\"keywords\":[\"乙\"]}");
	CHECK_INT(t_int(r, "total"), 0);
	json_decref(r);
	/* the host plane sees all of it */
	r = call(z, NULL, NULL, "zcor_memory_history", "{\"keywords\":[\"zcor_memory_write\"]}");
	CHECK_INT(t_int(r, "total"), 3);
	json_decref(r);
	zcor_close(z);
}

static void exec_sql(const char *dir, const char *q)
{
	char *p = path2(dir, "memory.db");
	sqlite3 *db = NULL;
	char *msg = NULL;
	if (sqlite3_open(p, &db) != SQLITE_OK || sqlite3_exec(db, q, NULL, NULL, &msg) != SQLITE_OK) {
		fprintf(stderr, "sql failed: %s: %s\n", q, msg ? msg : sqlite3_errmsg(db));
		t_failures++;
	}
	sqlite3_free(msg);
	sqlite3_close(db);
	free(p);
}

static void z_hist_write_fails(void)
{
	const char *dir = t_tmpdir();
	zcor *z = open_at(dir);
	json_decref(call(z, NULL, NULL, "zcor_memory_write", "{\"title\":\"已有\",\"content\":\"在故障之前写的\"}"));
	json_decref(call(z, NULL, NULL, "zcor_synonyms_add", "{\"terms\":[\"波霸奶茶\",\"珍珠奶茶\"]}"));
	long long hist = sql(dir, "SELECT count(*) FROM history");
	exec_sql(dir, "CREATE TRIGGER fail_hist BEFORE INSERT ON history BEGIN "
		      "SELECT RAISE(ABORT, 'injected'); END;");

	int rc = 0;
	json_t *r = call(z, NULL, &rc, "zcor_memory_write", "{\"title\":\"不该存在\",\"content\":\"历史写不进去\"}");
	CHECK(rc != ZCOR_OK);
	CHECK(rc != ZCOR_EUNCERTAIN);
	CHECK_CONTAINS(t_errmsg(r), "nothing was changed");
	json_decref(r);
	CHECK_INT(sql(dir, "SELECT count(*) FROM nodes"), 1);
	CHECK_INT(sql(dir, "SELECT count(*) FROM nodes WHERE title = '不该存在'"), 0);

	r = call(z, NULL, &rc, "zcor_relationship_write",
		 "{\"personId\":\"1\",\"name\":\"甲\",\"relationship\":\"x\",\"affinity\":0,\"reason\":\"x\"}");
	CHECK(rc != ZCOR_OK);
	CHECK_CONTAINS(t_errmsg(r), "nothing was changed");
	json_decref(r);
	CHECK_INT(sql(dir, "SELECT count(*) FROM people"), 0);

	/* synonyms.json is written before the history row: maybe applied */
	char *synp = path2(dir, "synonyms.json");
	r = call(z, NULL, &rc, "zcor_synonyms_add", "{\"terms\":[\"鸳鸯奶茶\",\"港式鸳鸯\"]}");
	CHECK_INT(rc, ZCOR_EUNCERTAIN);
	CHECK_STR(t_errcode(r), "maybe_applied");
	CHECK_CONTAINS(t_errmsg(r), "may have taken effect");
	json_decref(r);
	char *syn = slurp(synp, NULL);
	CHECK_CONTAINS(syn, "港式鸳鸯"); /* it did */
	free(syn);
	/* so is a backup: the file exists although its record does not */
	r = call(z, NULL, &rc, "zcor_memory_backup", "{}");
	CHECK_INT(rc, ZCOR_EUNCERTAIN);
	CHECK_CONTAINS(t_errmsg(r), "may have taken effect");
	json_decref(r);
	CHECK_INT(sql(dir, "SELECT count(*) FROM history"), hist);

	exec_sql(dir, "DROP TRIGGER fail_hist;");
	r = call(z, NULL, &rc, "zcor_memory_write", "{\"title\":\"恢复之后\",\"content\":\"正常\"}");
	CHECK_INT(rc, ZCOR_OK);
	json_decref(r);
	CHECK_INT(sql(dir, "SELECT count(*) FROM history"), hist + 1);
	zcor_close(z);
	free(synp);
}

/* ==== Z-SYN =========================================================== */

static json_t *search(zcor *z, int *rc, const char *keywords_json)
{
	char args[512];
	snprintf(args, sizeof(args), "{\"keywords\":%s}", keywords_json);
	return call(z, NULL, rc, "zcor_memory_search", args);
}

static int expanded_has(json_t *r, const char *w) { return str_in(t_get(r, "expandedKeywords"), w); }

static void z_syn_builtin_and_add(void)
{
	const char *dir = t_tmpdir();
	zcor *z = open_at(dir);
	char *synp = path2(dir, "synonyms.json");
	int rc = 0;
	json_t *r = search(z, &rc, "[\"PKU\"]");
	CHECK_INT(rc, ZCOR_OK);
	CHECK_JSONS(t_get(r, "items"), "[]");
	CHECK(expanded_has(r, "北大") && expanded_has(r, "北京大学") && expanded_has(r, "pku"));
	json_decref(r);
	/* created from the built-in groups */
	json_t *syn = load_json(synp);
	CHECK(syn != NULL);
	int found = 0;
	size_t i;
	json_t *g;
	json_array_foreach(t_get(syn, "groups"), i, g) found |= str_in(g, "北大") && str_in(g, "北京大学");
	CHECK(found);
	json_decref(syn);

	r = call(z, NULL, &rc, "zcor_synonyms_add", "{\"terms\":[\"鸳鸯奶茶\",\"港式鸳鸯\"]}");
	CHECK_INT(rc, ZCOR_OK);
	CHECK(json_is_true(t_get(r, "added")));
	CHECK(str_in(t_get(r, "expansion"), "港式鸳鸯"));
	json_decref(r);
	r = call(z, NULL, &rc, "zcor_synonyms_add", "{\"terms\":[\"港式鸳鸯\",\"YuenYeung\"]}");
	CHECK_INT(rc, ZCOR_OK);
	CHECK(json_is_true(t_get(r, "added")));
	CHECK(str_in(t_get(r, "expansion"), "鸳鸯奶茶")); /* transitive */
	json_decref(r);
	r = call(z, NULL, &rc, "zcor_synonyms_add", "{\"terms\":[\"鸳鸯奶茶\",\"yuenyeung\"]}");
	CHECK_INT(rc, ZCOR_OK);
	CHECK(json_is_false(t_get(r, "added"))); /* already one class */
	json_decref(r);
	r = call(z, NULL, &rc, "zcor_synonyms_add", "{\"terms\":[\"ABC\",\"ａｂｃ\"]}");
	CHECK_INT(rc, ZCOR_EINVAL);
	CHECK_CONTAINS(t_errmsg(r), "terms");
	json_decref(r);
	r = call(z, NULL, &rc, "zcor_synonyms_add", "{\"terms\":[\"孤单\"]}");
	CHECK_INT(rc, ZCOR_EINVAL);
	json_decref(r);

	/* both ways and transitively, after NFKC + case fold */
	r = search(z, &rc, "[\"鸳鸯奶茶\"]");
	CHECK_INT(rc, ZCOR_OK);
	CHECK(expanded_has(r, "港式鸳鸯") && expanded_has(r, "yuenyeung"));
	json_decref(r);
	r = search(z, &rc, "[\"ＹＵＥＮＹＥＵＮＧ\"]");
	CHECK_INT(rc, ZCOR_OK);
	CHECK(expanded_has(r, "鸳鸯奶茶") && expanded_has(r, "港式鸳鸯"));
	CHECK_JSONS(t_get(r, "items"), "[]");
	json_decref(r);

	/* a title hit needs the LLM stage: without a provider, no_provider */
	json_decref(call(z, NULL, NULL, "zcor_memory_write", "{\"title\":\"楼下茶餐厅的鸳鸯奶茶\",\"content\":\"偏甜\"}"));
	r = search(z, &rc, "[\"yuenyeung\"]");
	CHECK_INT(rc, ZCOR_ENOPROVIDER);
	CHECK_STR(t_errcode(r), "no_provider");
	json_decref(r);
	/* content alone is no hit */
	r = search(z, &rc, "[\"偏甜\"]");
	CHECK_INT(rc, ZCOR_OK);
	CHECK_JSONS(t_get(r, "items"), "[]");
	json_decref(r);

	/* the file holds the new groups, and a new handle sees them */
	char *text = slurp(synp, NULL);
	CHECK_CONTAINS(text, "YuenYeung");
	free(text);
	zcor_close(z);
	z = open_at(dir);
	r = call(z, NULL, &rc, "zcor_synonyms_add", "{\"terms\":[\"港式鸳鸯\",\"yuenyeung\"]}");
	CHECK_INT(rc, ZCOR_OK);
	CHECK(json_is_false(t_get(r, "added")));
	CHECK(str_in(t_get(r, "expansion"), "鸳鸯奶茶"));
	json_decref(r);
	zcor_close(z);
	free(synp);
}

static void z_syn_hand_edit_and_malformed(void)
{
	const char *dir = t_tmpdir();
	zcor *z = open_at(dir);
	char *synp = path2(dir, "synonyms.json");
	int rc = 0;
	json_decref(search(z, &rc, "[\"北大\"]"));
	CHECK(exists(synp));

	/* a hand edit is picked up without reopening */
	spit(synp, "{\"version\":1,\"groups\":[[\"北大\",\"北京大学\"],[\"波霸奶茶\",\"珍珠奶茶\"]]}\n");
	set_mtime(synp, 1000000000, 111);
	json_t *r = search(z, &rc, "[\"波霸奶茶\"]");
	CHECK_INT(rc, ZCOR_OK);
	CHECK(expanded_has(r, "珍珠奶茶"));
	CHECK(t_get(r, "warning") == NULL);
	json_decref(r);
	r = search(z, &rc, "[\"PKU\"]"); /* the built-in group is gone from the file */
	CHECK(!expanded_has(r, "北大"));
	json_decref(r);
	/* same size, same inode, only the mtime differs */
	spit(synp, "{\"version\":1,\"groups\":[[\"北大\",\"北京大学\"],[\"波霸奶茶\",\"黑糖奶茶\"]]}\n");
	set_mtime(synp, 1000000000, 222);
	r = search(z, &rc, "[\"波霸奶茶\"]");
	CHECK(expanded_has(r, "黑糖奶茶"));
	CHECK(!expanded_has(r, "珍珠奶茶"));
	json_decref(r);

	/* malformed: the last good groups stay in use, with a warning */
	const char *broken = "{\"version\":1,\"groups\":[[\"只有一个词\"]]}\n";
	spit(synp, broken);
	set_mtime(synp, 1000000000, 333);
	r = search(z, &rc, "[\"波霸奶茶\"]");
	CHECK_INT(rc, ZCOR_OK);
	CHECK(expanded_has(r, "黑糖奶茶"));
	CHECK_CONTAINS(t_str(r, "warning"), "synonyms.json");
	json_decref(r);
	r = call(z, NULL, &rc, "zcor_synonyms_add", "{\"terms\":[\"奶盖\",\"芝士奶盖\"]}");
	CHECK(rc != ZCOR_OK);
	CHECK_CONTAINS(t_errmsg(r), "synonyms.json");
	json_decref(r);
	char *now = slurp(synp, NULL);
	CHECK(now && strcmp(now, broken) == 0); /* not overwritten */
	free(now);
	spit(synp, "not json at all");
	set_mtime(synp, 1000000000, 444);
	r = search(z, &rc, "[\"黑糖奶茶\"]");
	CHECK(expanded_has(r, "波霸奶茶"));
	CHECK(t_str(r, "warning") != NULL);
	json_decref(r);

	/* fixed by hand: the warning goes, adding works again */
	spit(synp, "{\"version\":1,\"groups\":[[\"北大\",\"北京大学\"]]}\n");
	set_mtime(synp, 1000000000, 555);
	r = search(z, &rc, "[\"波霸奶茶\"]");
	CHECK(t_get(r, "warning") == NULL);
	CHECK(!expanded_has(r, "黑糖奶茶"));
	json_decref(r);
	r = call(z, NULL, &rc, "zcor_synonyms_add", "{\"terms\":[\"奶盖\",\"芝士奶盖\"]}");
	CHECK_INT(rc, ZCOR_OK);
	json_decref(r);
	zcor_close(z);
	free(synp);
}

/* ==== Z-SEARCH ======================================================== */

struct script {
	const char *reply; /* the next answer */
	int fail;          /* answer with an error instead */
	int calls;
	char *system, *user; /* the last prompt */
	const char *dir;     /* for a write made during the call */
	char *write_args;
};

static int scripted(void *ud, const char *system, const char *user, char **reply, char **errmsg)
{
	struct script *s = ud;
	free(s->system);
	free(s->user);
	s->system = strdup(system);
	s->user = strdup(user);
	s->calls++;
	if (s->write_args) {
		/* someone edits a candidate while the LLM thinks */
		zcor *z2 = t_open_dir(s->dir);
		json_t *r = t_call_raw(z2, NULL, NULL, "zcor_memory_write", s->write_args);
		CHECK_OK(r);
		json_decref(r);
		zcor_close(z2);
		free(s->write_args);
		s->write_args = NULL;
	}
	if (s->fail) {
		*errmsg = strdup("upstream timed out after 30s");
		return 1;
	}
	*reply = strdup(s->reply ? s->reply : "{\"ids\":[]}");
	return 0;
}

/* The candidate ids in the order the prompt lists them. */
static json_t *prompt_ids(const char *user)
{
	json_t *ids = json_array();
	const char *p = user;
	while (p && (p = strstr(p, "[id: "))) {
		p += 5;
		const char *q = strchr(p, ']');
		if (!q)
			break;
		json_array_append_new(ids, json_stringn(p, (size_t)(q - p)));
		p = q;
	}
	return ids;
}

static char *write_at(zcor *z, int64_t at, const char *title, const char *content)
{
	g_now = at;
	json_t *a = json_pack("{s:s, s:s}", "title", title, "content", content);
	char *args = json_dumps(a, JSON_COMPACT);
	json_t *r = call(z, NULL, NULL, "zcor_memory_write", args);
	CHECK_OK(r);
	char *id = strdup(t_str(r, "node.id") ? t_str(r, "node.id") : "?");
	json_decref(r);
	free(args);
	json_decref(a);
	return id;
}

struct corpus {
	char *three, *two, *old, *content_only, *one[23];
	char *long_content;
};

/* 25 nodes whose titles hit 咖啡 / coffee / 拿铁, and some that must not
 * be candidates. */
static void make_corpus(zcor *z, struct corpus *c)
{
	size_t n = 5000, len = 0, cap = n * 3 + 64;
	c->long_content = malloc(cap);
	len += (size_t)snprintf(c->long_content, cap, "开头：");
	for (size_t i = 0; i < n; i++) {
		memcpy(c->long_content + len, i % 2 ? "豆" : "香", 3);
		len += 3;
	}
	snprintf(c->long_content + len, cap - len, "：结尾");
	c->three = write_at(z, T_BASE, "咖啡 Coffee 拿铁三合一", c->long_content);
	c->two = write_at(z, T_BASE + 1000, "咖啡店的拿铁", "公司楼下那家");
	c->old = write_at(z, T_BASE + 2000, "咖啡旧记录", "已经被替代");
	for (int i = 0; i < 23; i++) {
		char title[64], content[64];
		snprintf(title, sizeof(title), i == 20 ? "COFFEE 豆子 %02d" : "咖啡记录 %02d", i);
		snprintf(content, sizeof(content), "第 %d 杯", i);
		c->one[i] = write_at(z, T_BASE + 10000 + 1000 * (i < 22 ? i : 21), title, content);
	}
	c->content_only = write_at(z, T_BASE + 100000, "早餐", "喝了一杯咖啡和拿铁");
	g_now = T_BASE + 200000;
	char args[256];
	snprintf(args, sizeof(args), "{\"ids\":[\"%s\"],\"replacementId\":\"%s\",\"reason\":\"重复\"}", c->old,
		 c->two);
	json_t *r = call(z, NULL, NULL, "zcor_memory_supersede", args);
	CHECK_OK(r);
	json_decref(r);
}

static void free_corpus(struct corpus *c)
{
	free(c->three);
	free(c->two);
	free(c->old);
	free(c->content_only);
	for (int i = 0; i < 23; i++)
		free(c->one[i]);
	free(c->long_content);
}

#define KW "[\"咖啡\",\"拿铁\",\"ＣＯＦＦＥＥ\"]"

static void z_search_candidates(void)
{
	const char *dir = t_tmpdir();
	zcor *z = open_at(dir);
	struct corpus c;
	make_corpus(z, &c);
	struct script s = {.dir = dir};
	struct zcor_provider prov = {scripted, &s};
	zcor_set_provider(z, &prov);

	char reply[256];
	snprintf(reply, sizeof(reply), "{\"ids\":[\"%s\",\"%s\"]}", c.one[21], c.three);
	s.reply = reply;
	int rc = 0;
	json_t *r = search(z, &rc, KW);
	CHECK_INT(rc, ZCOR_OK);
	CHECK_INT(s.calls, 1);
	CHECK_INT(t_int(r, "candidates"), 20);

	/* ranked: distinct words hit, then updatedAt desc, then id asc; 20 */
	json_t *want = json_array();
	json_array_append_new(want, json_string(c.three));
	json_array_append_new(want, json_string(c.two));
	json_array_append_new(want, json_string(c.one[21]));
	json_array_append_new(want, json_string(c.one[22])); /* same updatedAt: id asc */
	for (int i = 20; i >= 5; i--)
		json_array_append_new(want, json_string(c.one[i]));
	json_t *got = prompt_ids(s.user);
	CHECK_JSON(got, want);
	json_decref(got);
	json_decref(want);
	CHECK(s.user && !strstr(s.user, "咖啡旧记录"));       /* superseded */
	CHECK(s.user && !strstr(s.user, "喝了一杯咖啡和拿铁")); /* content only */
	/* the prompt: raw keywords, candidates' titles and full contents */
	CHECK_CONTAINS(s.user, "ＣＯＦＦＥＥ");
	CHECK_CONTAINS(s.user, "咖啡 Coffee 拿铁三合一");
	CHECK_CONTAINS(s.user, "COFFEE 豆子 20");
	CHECK_CONTAINS(s.user, c.long_content);
	CHECK_CONTAINS(s.user, "公司楼下那家");

	/* items in the order the LLM gave */
	CHECK_INT(json_array_size(t_get(r, "items")), 2);
	CHECK_STR(t_str(r, "items.0.id"), c.one[21]);
	CHECK_STR(t_str(r, "items.1.id"), c.three);
	CHECK_STR(t_str(r, "items.1.content"), c.long_content);
	CHECK(expanded_has(r, "coffee") && expanded_has(r, "咖啡") && expanded_has(r, "拿铁"));
	json_decref(r);

	/* no candidate: an empty result and no LLM call */
	int before = s.calls;
	r = search(z, &rc, "[\"火锅\",\"早餐吃什么\"]");
	CHECK_INT(rc, ZCOR_OK);
	CHECK_JSONS(t_get(r, "items"), "[]");
	CHECK_INT(s.calls, before);
	json_decref(r);
	/* a superseded title alone is no candidate either */
	r = search(z, &rc, "[\"旧记录\"]");
	CHECK_INT(rc, ZCOR_OK);
	CHECK_INT(s.calls, before);
	json_decref(r);

	zcor_set_provider(z, NULL);
	zcor_close(z);
	free_corpus(&c);
	free(s.system);
	free(s.user);
}

static void z_search_replies(void)
{
	const char *dir = t_tmpdir();
	zcor *z = open_at(dir);
	struct corpus c;
	make_corpus(z, &c);
	struct script s = {.dir = dir};
	struct zcor_provider prov = {scripted, &s};
	zcor_set_provider(z, &prov);
	char reply[512];
	int rc = 0;

	/* the latest content, even when it changed during the LLM call */
	snprintf(reply, sizeof(reply), "{\"ids\":[\"%s\",\"%s\"]}", c.two, c.one[10]);
	s.reply = reply;
	json_t *a = json_pack("{s:s, s:s, s:s}", "id", c.two, "title", "咖啡店的拿铁", "content", "搬到了地铁站旁边");
	s.write_args = json_dumps(a, JSON_COMPACT);
	json_decref(a);
	json_t *r = search(z, &rc, KW);
	CHECK_INT(rc, ZCOR_OK);
	CHECK_STR(t_str(r, "items.0.id"), c.two);
	CHECK_STR(t_str(r, "items.0.content"), "搬到了地铁站旁边");
	CHECK_STR(t_str(r, "items.1.id"), c.one[10]);
	json_decref(r);

	/* it may choose nothing; a fenced answer is read too */
	s.reply = "{\"ids\":[]}";
	r = search(z, &rc, KW);
	CHECK_INT(rc, ZCOR_OK);
	CHECK_JSONS(t_get(r, "items"), "[]");
	json_decref(r);
	snprintf(reply, sizeof(reply), "```json\n{\"ids\":[\"%s\"]}\n```", c.three);
	s.reply = reply;
	r = search(z, &rc, KW);
	CHECK_INT(rc, ZCOR_OK);
	CHECK_STR(t_str(r, "items.0.id"), c.three);
	json_decref(r);

	struct {
		char reply[512];
		const char *says;
	} bad[6];
	snprintf(bad[0].reply, 512, "{\"ids\":[\"%s\"]}", c.one[0]); /* ranked 21st+ */
	bad[0].says = c.one[0];
	snprintf(bad[1].reply, 512, "{\"ids\":[\"%s\"]}", c.content_only);
	bad[1].says = "not among the candidates";
	snprintf(bad[2].reply, 512, "{\"ids\":[\"%s\"]}", c.old); /* superseded */
	bad[2].says = "not among the candidates";
	snprintf(bad[3].reply, 512, "我觉得第一条最相关");
	bad[3].says = "我觉得第一条最相关";
	snprintf(bad[4].reply, 512, "{\"ids\":[\"%s\",\"%s\",\"%s\",\"%s\",\"%s\",\"%s\"]}", c.three, c.two,
		 c.one[21], c.one[22], c.one[20], c.one[19]);
	bad[4].says = "5";
	snprintf(bad[5].reply, 512, "{\"ids\":[\"%s\",\"%s\"]}", c.three, c.three);
	bad[5].says = "twice";
	for (int i = 0; i < 6; i++) {
		s.reply = bad[i].reply;
		int calls = s.calls;
		r = search(z, &rc, KW);
		if (rc != ZCOR_EPROVIDER)
			fprintf(stderr, "reply accepted: %s\n", bad[i].reply);
		CHECK_INT(rc, ZCOR_EPROVIDER);
		CHECK_STR(t_errcode(r), "provider_error");
		CHECK_CONTAINS(t_errmsg(r), bad[i].says);
		CHECK_INT(s.calls, calls + 1);
		json_decref(r);
	}

	/* the provider fails */
	s.fail = 1;
	r = search(z, &rc, KW);
	CHECK_INT(rc, ZCOR_EPROVIDER);
	CHECK_STR(t_errcode(r), "provider_error");
	CHECK_CONTAINS(t_errmsg(r), "upstream timed out after 30s");
	json_decref(r);
	s.fail = 0;

	/* no provider */
	zcor_set_provider(z, NULL);
	int calls = s.calls;
	r = search(z, &rc, KW);
	CHECK_INT(rc, ZCOR_ENOPROVIDER);
	CHECK_STR(t_errcode(r), "no_provider");
	CHECK_INT(s.calls, calls);
	json_decref(r);

	/* a malformed synonyms.json is reported in the answer */
	zcor_set_provider(z, &prov);
	char *synp = path2(dir, "synonyms.json");
	spit(synp, "{\"groups\":42}");
	set_mtime(synp, 1000000000, 1);
	s.reply = "{\"ids\":[]}";
	r = search(z, &rc, KW);
	CHECK_INT(rc, ZCOR_OK);
	CHECK_CONTAINS(t_str(r, "warning"), "synonyms.json");
	CHECK(expanded_has(r, "coffee")); /* the last good groups */
	json_decref(r);
	free(synp);

	/* every search, failed or not, is in history */
	r = call(z, NULL, NULL, "zcor_memory_history", "{\"keywords\":[\"zcor_memory_search\"]}");
	CHECK_INT(t_int(r, "total"), 12);
	json_decref(r);

	zcor_set_provider(z, NULL);
	zcor_close(z);
	free_corpus(&c);
	free(s.system);
	free(s.user);
	free(s.write_args);
}

/* Host-side synonym management: list, preview, edit, delete (recorded). */
static json_t *parse_out(char *out)
{
	json_t *j = json_loads(out, 0, NULL);
	zcor_free(out);
	return j ? j : json_object();
}

static int has_word(json_t *arr, const char *w)
{
	size_t i;
	json_t *v;
	json_array_foreach(arr, i, v) if (!strcmp(json_string_value(v), w)) return 1;
	return 0;
}

static void Z_SYN_host_edit_delete_preview(void)
{
	zcor *z = t_open();
	json_decref(t_call(z, NULL, "zcor_synonyms_add", "{\"terms\":[\"zqa\",\"zqb\"]}"));
	char *syn = NULL;
	CHECK_INT(zcor_synonyms_list(z, &syn), ZCOR_OK);
	json_t *list = parse_out(syn);
	size_t n = json_array_size(t_get(list, "groups"));
	CHECK(n > 100); /* the built-in groups and ours */
	json_decref(list);
	char *out = NULL;
	CHECK_INT(zcor_synonyms_expand(z, "ZQA", &out), ZCOR_OK);
	json_t *ex = parse_out(out);
	CHECK_STR(t_str(ex, "normalized"), "zqa");
	CHECK(has_word(t_get(ex, "expansion"), "zqb"));
	json_decref(ex);
	/* edit the last group (ours) */
	char args[128];
	snprintf(args, sizeof(args), "{\"index\":%zu,\"terms\":[\"zqa\",\"zqc\"]}", n - 1);
	struct zcor_ctx ui = {ZCOR_ACTOR_UI, NULL};
	CHECK_INT(zcor_synonyms_edit(z, &ui, args, &out), ZCOR_OK);
	zcor_free(out);
	CHECK_INT(zcor_synonyms_expand(z, "zqa", &out), ZCOR_OK);
	ex = parse_out(out);
	CHECK(has_word(t_get(ex, "expansion"), "zqc"));
	CHECK(!has_word(t_get(ex, "expansion"), "zqb"));
	json_decref(ex);
	/* bad input changes nothing */
	snprintf(args, sizeof(args), "{\"index\":%zu,\"terms\":[\"only-one\"]}", n - 1);
	CHECK_INT(zcor_synonyms_edit(z, &ui, args, &out), ZCOR_EINVAL);
	zcor_free(out);
	CHECK_INT(zcor_synonyms_edit(z, &ui, "{\"index\":999999,\"terms\":null}", &out), ZCOR_ENOTFOUND);
	zcor_free(out);
	/* with the group as read: a group changed since (another tab, a hand
	 * edit) is a conflict and nothing changes */
	snprintf(args, sizeof(args), "{\"index\":%zu,\"terms\":[\"zqa\",\"zqd\"],\"expected\":[\"zqa\",\"zqb\"]}",
		 n - 1);
	CHECK_INT(zcor_synonyms_edit(z, &ui, args, &out), ZCOR_ECONFLICT);
	json_t *err = t_answer(z, ZCOR_ECONFLICT, out);
	CHECK_STR(t_errcode(err), "conflict");
	CHECK_STR(t_str(err, "error.details.reason"), "group_changed");
	CHECK_STR(t_str(err, "error.details.current.1"), "zqc");
	json_decref(err);
	snprintf(args, sizeof(args), "{\"index\":%zu,\"terms\":null,\"expected\":[\"zqa\",\"zqb\"]}", n - 1);
	CHECK_INT(zcor_synonyms_edit(z, &ui, args, &out), ZCOR_ECONFLICT);
	zcor_free(out);
	snprintf(args, sizeof(args), "{\"index\":%zu,\"terms\":null,\"expected\":[\"zqa\",\"zqc\"]}", n);
	CHECK_INT(zcor_synonyms_edit(z, &ui, args, &out), ZCOR_ECONFLICT); /* gone: no group n */
	err = t_answer(z, ZCOR_ECONFLICT, out);
	CHECK(json_is_null(t_get(err, "error.details.current")));
	json_decref(err);
	snprintf(args, sizeof(args), "{\"index\":%zu,\"terms\":null,\"expected\":\"zqa\"}", n - 1);
	CHECK_INT(zcor_synonyms_edit(z, &ui, args, &out), ZCOR_EINVAL);
	zcor_free(out);
	CHECK_INT(zcor_synonyms_expand(z, "zqa", &out), ZCOR_OK);
	ex = parse_out(out);
	CHECK(has_word(t_get(ex, "expansion"), "zqc"));
	CHECK(!has_word(t_get(ex, "expansion"), "zqd"));
	json_decref(ex);
	/* delete, with the group as it is */
	snprintf(args, sizeof(args), "{\"index\":%zu,\"terms\":null,\"expected\":[\"zqa\",\"zqc\"]}", n - 1);
	CHECK_INT(zcor_synonyms_edit(z, &ui, args, &out), ZCOR_OK);
	zcor_free(out);
	CHECK_INT(zcor_synonyms_expand(z, "zqa", &out), ZCOR_OK);
	ex = parse_out(out);
	CHECK_INT(json_array_size(t_get(ex, "expansion")), 1);
	json_decref(ex);
	CHECK_INT(zcor_synonyms_list(z, &syn), ZCOR_OK);
	list = parse_out(syn);
	CHECK_INT(json_array_size(t_get(list, "groups")), n - 1);
	json_decref(list);
	/* recorded, with the group as it was */
	json_t *h = t_call(z, NULL, "zcor_memory_history", "{\"keywords\":[\"synonyms_edit\"]}");
	CHECK_INT(t_int(h, "total"), 8); /* two ok, six errors */
	CHECK_STR(t_str(h, "items.0.actor"), "ui");
	CHECK_STR(t_str(h, "items.0.before.0.synonymGroup.0"), "zqa");
	json_decref(h);
	zcor_close(z);
}

const struct t_case t_cases[] = {
	{"Z_SYN_host_edit_delete_preview", Z_SYN_host_edit_delete_preview},
	{"X_MIGRATE_v1", x_migrate_v1},
	{"X_MIGRATE_v2", x_migrate_v2},
	{"X_MIGRATE_v3", x_migrate_v3},
	{"X_MIGRATE_legacy", x_migrate_legacy},
	{"X_MIGRATE_malformed", x_migrate_malformed},
	{"Z_BACKUP_roundtrip", z_backup_roundtrip},
	{"Z_BACKUP_versions", z_backup_versions},
	{"Z_BACKUP_refuse", z_backup_refuse},
	{"Z_BACKUP_long_ids", z_backup_long_ids},
	{"Z_REL_write_read_delete", z_rel_write_read_delete},
	{"Z_REL_affinity", z_rel_affinity},
	{"Z_REL_query", z_rel_query},
	{"Z_REL_private", z_rel_private},
	{"Z_HIST_every_call", z_hist_every_call},
	{"Z_HIST_snapshots", z_hist_snapshots},
	{"Z_HIST_self_and_keywords", z_hist_self_and_keywords},
	{"Z_HIST_time_and_scope", z_hist_time_and_scope},
	{"Z_HIST_write_fails", z_hist_write_fails},
	{"Z_SYN_builtin_and_add", z_syn_builtin_and_add},
	{"Z_SYN_hand_edit_and_malformed", z_syn_hand_edit_and_malformed},
	{"Z_SEARCH_candidates", z_search_candidates},
	{"Z_SEARCH_replies", z_search_replies},
	{0},
};
