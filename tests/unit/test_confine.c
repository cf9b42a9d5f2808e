/*
 * test_confine.c — issue 12, "nothing outside the memory directory": the
 * paths and names that reach the sticker catalog, the views and imports,
 * through the public API (zcor_tool_call, zcor_import_qq,
 * zcor_migrate_cognition, zcor_doctor, zcor_recall).
 *
 * Every case lays out $T/D (the memory directory) beside $T/outside,
 * which holds the canaries victim.gif (a real GIF: it passes any image
 * check) and secret.txt, and checks at the end that they are as they
 * were — bytes, mtime, link count — and that nothing new appeared
 * outside D. The defect each case is named after (issue 12, item n)
 * fails it without its fix.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

#define CHECK_LACKS(hay, needle)                                                               \
	do {                                                                                   \
		const char *h_ = (hay), *n_ = (needle);                                        \
		if (!h_ || strstr(h_, n_)) {                                                   \
			fprintf(stderr, "%s:%d: CHECK_LACKS failed: %s = '%s' contains '%s'\n", \
				__FILE__, __LINE__, #hay, h_ ? h_ : "(null)", n_);                 \
			t_failures++;                                                          \
		}                                                                              \
	} while (0)

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

#define CHECK_OK(res)                                                                          \
	do {                                                                                   \
		json_t *r_ = (res);                                                            \
		if (t_errcode(r_)) {                                                           \
			fprintf(stderr, "%s:%d: CHECK_OK failed: %s: %s: %s\n", __FILE__, __LINE__, \
				#res, t_errcode(r_), t_errmsg(r_) ? t_errmsg(r_) : "");            \
			t_failures++;                                                          \
		}                                                                              \
	} while (0)

static const unsigned char GIF[] = {'G', 'I', 'F', '8', '9', 'a', 1, 0, 1, 0, 0x80, 0, 0,
				    0, 0, 0, 0xff, 0xff, 0xff, ',', 0, 0, 0, 0, 1, 0, 1, 0, 0,
				    2, 2, 'D', 1, 0, ';'};
static const char SECRET[] = "the canary: never read, served or copied by zcor\n";
/* The cached image's sha-256, set by open_world: an image is in the media
 * cache only when a logged message brought it (media.c). */
static char HASH1[65];

static char *cat(const char *a, const char *b)
{
	char *p = NULL;
	if (asprintf(&p, "%s/%s", a, b) < 0)
		abort();
	return p;
}

static void put(const char *path, const void *data, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(data, 1, n, f) != n) {
		fprintf(stderr, "cannot write %s\n", path);
		t_failures++;
	}
	if (f)
		fclose(f);
}

static void put_at(const char *dir, const char *rel, const char *text)
{
	char *p = cat(dir, rel);
	put(p, text, strlen(text));
	free(p);
}

static void mkdir_at(const char *dir, const char *rel)
{
	char *p = cat(dir, rel);
	if (mkdir(p, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "cannot mkdir %s\n", p);
		t_failures++;
	}
	free(p);
}

static void symlink_at(const char *target, const char *dir, const char *rel)
{
	char *p = cat(dir, rel);
	if (symlink(target, p) != 0) {
		fprintf(stderr, "cannot symlink %s\n", p);
		t_failures++;
	}
	free(p);
}

static void fifo_at(const char *dir, const char *rel)
{
	char *p = cat(dir, rel);
	if (mkfifo(p, 0644) != 0) {
		fprintf(stderr, "cannot mkfifo %s\n", p);
		t_failures++;
	}
	free(p);
}

/* ---- the canaries ----------------------------------------------------- */

struct world {
	char *top, *mem, *outside, *victim, *secret;
	struct stat victim_st, secret_st;
	zcor *z;
};

static void open_world(struct world *w)
{
	memset(w, 0, sizeof(*w));
	w->top = strdup(t_tmpdir());
	w->mem = cat(w->top, "D");
	w->outside = cat(w->top, "outside");
	w->victim = cat(w->outside, "victim.gif");
	w->secret = cat(w->outside, "secret.txt");
	mkdir(w->outside, 0755);
	put(w->victim, GIF, sizeof(GIF));
	put(w->secret, SECRET, strlen(SECRET));
	stat(w->victim, &w->victim_st);
	stat(w->secret, &w->secret_st);
	w->z = t_open_dir(w->mem);
	/* stickers/ and media/ exist, so stickers/../../x resolves */
	mkdir_at(w->mem, "stickers");
	mkdir_at(w->mem, "media");
	/* the image arrives as a host passes one: a message naming a file */
	char *img = cat(t_tmpdir(), "sent.gif"), *out = NULL, *batch = NULL;
	put(img, GIF, sizeof(GIF));
	if (asprintf(&batch,
		     "{\"messages\":[{\"id\":\"img-1\",\"senderId\":\"9\",\"media\":[{\"type\":\"image\","
		     "\"file\":\"%s\"}]}]}",
		     img) < 0)
		abort();
	CHECK_INT(zcor_log_messages(w->z, NULL, "group:1", batch, &out), ZCOR_OK);
	zcor_free(out);
	free(batch);
	free(img);
	json_t *r = t_call_ok(w->z, NULL, "qq_transcript", "{\"action\":\"read\",\"conversation\":\"group:1\"}");
	const char *ref = t_str(r, "items.0.media.0");
	snprintf(HASH1, sizeof(HASH1), "%s", ref && strlen(ref) > 6 ? ref + 6 : "");
	CHECK_INT(strlen(HASH1), 64);
	json_decref(r);
}

static void same_file(const char *path, const struct stat *was, const void *bytes, size_t n, int line)
{
	struct stat st;
	char buf[256];
	int ok = lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == was->st_nlink &&
		 st.st_ino == was->st_ino && (size_t)st.st_size == n &&
		 st.st_mtim.tv_sec == was->st_mtim.tv_sec && st.st_mtim.tv_nsec == was->st_mtim.tv_nsec;
	FILE *f = ok ? fopen(path, "rb") : NULL;
	ok = ok && f && fread(buf, 1, sizeof(buf), f) == n && memcmp(buf, bytes, n) == 0;
	if (f)
		fclose(f);
	if (!ok) {
		fprintf(stderr, "%s:%d: canary %s changed (nlink %ld)\n", __FILE__, line, path,
			(long)st.st_nlink);
		t_failures++;
	}
}

/* Names in dir other than those listed (NULL-terminated): what appeared. */
static void only_these(const char *dir, const char *const *names, int line)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		int known = 0;
		for (const char *const *n = names; *n; n++)
			known |= strcmp(*n, de->d_name) == 0;
		if (!known) {
			fprintf(stderr, "%s:%d: %s/%s appeared\n", __FILE__, line, dir, de->d_name);
			t_failures++;
		}
	}
	if (d)
		closedir(d);
}

#define CHECK_CANARIES(w, ...) check_canaries(w, __LINE__, (const char *const[]){"D", "outside", __VA_ARGS__, NULL})
static void check_canaries(struct world *w, int line, const char *const *top_names)
{
	same_file(w->victim, &w->victim_st, GIF, sizeof(GIF), line);
	same_file(w->secret, &w->secret_st, SECRET, strlen(SECRET), line);
	static const char *const outside[] = {"victim.gif", "secret.txt", NULL};
	only_these(w->outside, outside, line);
	only_these(w->top, top_names, line);
}

static void close_world(struct world *w)
{
	zcor_close(w->z);
	free(w->top);
	free(w->mem);
	free(w->outside);
	free(w->victim);
	free(w->secret);
}

static char *view(zcor *z, const char *path)
{
	json_t *r = t_call(z, NULL, "qq_memory", "{\"action\":\"read\",\"path\":\"%s\"}", path);
	char *t = strdup(t_str(r, "text") ? t_str(r, "text") : "");
	json_decref(r);
	return t;
}

static int sticker_files(struct world *w)
{
	char *p = cat(w->mem, "stickers");
	DIR *d = opendir(p);
	int n = 0;
	struct dirent *de;
	while (d && (de = readdir(d)))
		n += de->d_name[0] != '.';
	if (d)
		closedir(d);
	free(p);
	return n;
}

/* The catalog paths that leave stickers/ (as the model, or an imported
 * line, writes them). */
static const char *const outside_paths[] = {
	"stickers/../../outside/victim.gif",
	".qq-stickers/../../outside/victim.gif",
	"stickers/../memory.db.gif",
	"stickers/sub/../../../outside/victim.gif",
	"stickers/..／..／outside／victim.gif",
	"stickers/．．/．．/outside/victim.gif",
	"stickers/..\\..\\outside\\victim.gif",
	NULL,
};

/* ---- 1. every path that reaches the catalog is confined --------------------- */

/* qq_memory write / append of STICKERS.md with a line whose image leaves
 * stickers/ are refused (upsert always was), name the line, change
 * nothing; a rename afterwards finds no such sticker. */
static void issue12_1_write_and_append_refuse_a_path_outside_stickers(void)
{
	struct world w;
	open_world(&w);
	char *before = view(w.z, "STICKERS.md");
	for (const char *const *p = outside_paths; *p; p++) {
		for (int append = 0; append < 2; append++) {
			json_t *content = json_sprintf("# STICKERS.md\n## 已收藏\n- 好的｜ok\n- 偷｜x｜%s\n", *p);
			json_t *args = json_pack("{s:s, s:s, s:o}", "action", append ? "append" : "write",
						 "path", "STICKERS.md", "content", content);
			char *a = json_dumps(args, JSON_COMPACT);
			json_t *r = t_call_raw(w.z, NULL, NULL, "qq_memory", a);
			CHECK_ERR(r, "invalid_argument");
			CHECK_HAS(t_errmsg(r), "line 4");
			CHECK_HAS(t_errmsg(r), "nothing was written");
			json_decref(r);
			free(a);
			json_decref(args);
			char *now = view(w.z, "STICKERS.md");
			CHECK_STR(now, before);
			free(now);
		}
		json_t *r = t_call(w.z, NULL, "qq_memory",
				   "{\"action\":\"upsert\",\"path\":\"STICKERS.md\",\"name\":\"偷\",\"image\":\"%s\"}",
				   *p);
		CHECK_ERR(r, "invalid_argument");
		json_decref(r);
	}
	json_t *r = t_call(w.z, NULL, "qq_rename_sticker", "{\"from\":\"偷\",\"to\":\"got\"}");
	CHECK_ERR(r, "not_found");
	json_decref(r);
	CHECK_INT(sticker_files(&w), 0);
	free(before);
	CHECK_CANARIES(&w, NULL);
	close_world(&w);
}

/* An import whose STICKERS.md holds such a line keeps it as written (not an
 * entry) and says why; the catalog holds no path outside stickers/. */
static void issue12_1_import_keeps_a_path_outside_as_written(void)
{
	struct world w;
	open_world(&w);
	char *src = cat(w.top, "src");
	mkdir(src, 0755);
	put_at(src, "STICKERS.md",
	       "## 已收藏\n- 偷｜x｜stickers/../../outside/victim.gif\n- 偷二｜y｜.qq-stickers/../../outside/victim.gif\n");
	char *out = NULL;
	CHECK_INT(zcor_import_qq(w.z, src, NULL, NULL, &out), ZCOR_OK);
	json_t *rep = json_loads(out, 0, NULL);
	zcor_free(out);
	CHECK_INT(json_array_size(t_get(rep, "keptAsWritten")), 2);
	CHECK_HAS(t_str(rep, "keptAsWritten.0.why"), "stickers/");
	json_decref(rep);
	CHECK_INT(t_sql_int(w.mem, "SELECT count(*) FROM nodes WHERE kind = 'sticker'"), 0);
	json_t *r = t_call(w.z, NULL, "qq_rename_sticker", "{\"from\":\"偷\",\"to\":\"got\"}");
	CHECK_ERR(r, "not_found");
	json_decref(r);
	CHECK_INT(sticker_files(&w), 0);
	free(src);
	CHECK_CANARIES(&w, "src");
	close_world(&w);
}

/* Old data — here a restored backup — may already hold a path outside
 * stickers/: rename refuses to link or unlink it, the view does not show
 * it as collected, recall does not offer it, the reply check refuses it,
 * and the doctor names it (STICKER_PATH_OUTSIDE) without looking it up. */
static void issue12_1_a_stored_path_outside_is_never_used(void)
{
	struct world w;
	open_world(&w);
	json_t *r = t_call(w.z, NULL, "qq_save_sticker", "{\"media\":\"media/%s.gif\",\"name\":\"无语\"}", HASH1);
	CHECK_OK(r);
	json_decref(r);
	r = t_call(w.z, NULL, "zcor_memory_backup", "{}");
	char *bak = cat(w.mem, t_str(r, "file"));
	json_decref(r);
	/* the backup, edited: the sticker's image points outside */
	json_t *state = json_load_file(bak, 0, NULL);
	size_t i;
	json_t *n;
	json_array_foreach(json_object_get(state, "nodes"), i, n) if (!strcmp(t_str(n, "kind"), "sticker"))
		json_object_set_new(json_object_get(n, "attrs"), "image",
				    json_string("stickers/../../outside/victim.gif"));
	char *edited = cat(w.mem, "backups/edited.json");
	CHECK_INT(json_dump_file(state, edited, 0), 0);
	json_decref(state);
	r = t_call(w.z, NULL, "zcor_memory_restore", "{\"backupFile\":\"edited.json\"}");
	CHECK_OK(r);
	json_decref(r);
	char *path = t_sql_str(w.mem, "SELECT json_extract(attrs, '$.image') FROM nodes WHERE kind = 'sticker'");
	CHECK_STR(path, "stickers/../../outside/victim.gif");
	free(path);

	r = t_call(w.z, NULL, "qq_rename_sticker", "{\"from\":\"无语\",\"to\":\"got\"}");
	CHECK_ERR(r, "invalid_argument");
	CHECK_HAS(t_errmsg(r), "not renamed");
	json_decref(r);
	char *got = cat(w.mem, "stickers/got.gif");
	CHECK(access(got, F_OK) != 0);
	free(got);
	char *t = view(w.z, "STICKERS.md");
	CHECK_LACKS(t, "outside");
	CHECK_HAS(t, "## 未收藏\n- 无语");
	free(t);
	char *rec = NULL;
	CHECK_INT(zcor_recall(w.z, "{\"conversation\":\"group:1\",\"messages\":[\"无语\"]}", &rec), ZCOR_OK);
	CHECK_LACKS(rec, "outside");
	zcor_free(rec);
	CHECK(zcor_check_reply(w.z, "[[图片: stickers/../../outside/victim.gif]]") != ZCOR_OK);
	char *doc = NULL;
	zcor_doctor(w.z, 0, &doc);
	CHECK_HAS(doc, "STICKER_PATH_OUTSIDE");
	CHECK_LACKS(doc, "STICKER_PATH_MISSING");
	zcor_free(doc);
	/* the way out the message names: upsert the entry without image */
	r = t_call(w.z, NULL, "qq_memory", "{\"action\":\"upsert\",\"path\":\"STICKERS.md\",\"name\":\"无语\",\"image\":\"\"}");
	CHECK_OK(r);
	json_decref(r);
	r = t_call(w.z, NULL, "qq_rename_sticker", "{\"from\":\"无语\",\"to\":\"got\"}");
	CHECK_OK(r);
	json_decref(r);
	free(bak);
	free(edited);
	CHECK_CANARIES(&w, NULL);
	close_world(&w);
}

/* ---- 4. one validity rule for sticker names ----------------------------------- */

static const char *const bad_names[] = {
	"../../pwned", "..", ".", ".hidden", "-rf", "a/b", "a\\b", "C:", "a:b", "x*", "a?", "a\"b", "<x>",
	"a|b", "[x]", "a｜b", "a..b", "trailing.", "a b", " lead", "tab\tx", "nl\nx", "\x7f",
	"a\xc2\x85x",                 /* U+0085 (C1 control) */
	"\xef\xbc\x8e\xef\xbc\x8e",   /* ．． U+FF0E */
	"a\xef\xbc\x8f" "b",          /* ／ U+FF0F */
	"a\xef\xbc\xbc" "b",          /* ＼ U+FF3C */
	"a\xe2\x80\xa4" "b",          /* ․ U+2024 */
	"a\xe2\x80\xa5" "b",          /* ‥ U+2025 */
	"a\xe2\x80\xa6",              /* … U+2026 */
	"a\xe2\x88\x95" "b",          /* ∕ U+2215 */
	"a\xe2\xa7\xb8" "b",          /* ⧸ U+29F8 */
	"a\xe2\x81\x84" "b",          /* ⁄ U+2044 */
	"a\xef\xb9\x92" "b",          /* ﹒ U+FE52 */
	"\xe2\x80\xaegif.exe",        /* RLO U+202E */
	"a\xe2\x80\x8f",              /* RLM U+200F */
	"a\xe2\x80\x8b" "b",          /* zero-width space */
	"a\xe3\x80\x80" "b",          /* ideographic space */
	"%2e%2e%2fx",
	"\xff\xfe",                   /* not UTF-8 */
	"无语无语无语无语无语无语无语无语无语无语无语无语无语无语无语无语无语无语无语无语无语无语无语无语无语无语无语无语无语无语无语无语无语", /* 66 characters */
	NULL,
};

static const char *const good_names[] = {"无语", "v1.2", "滑稽_猫", "😂", "👨‍👩‍👧", "啊？", "好耶：", "100分", NULL};

/* qq_save_sticker (name), qq_rename_sticker (to) and upsert of STICKERS.md
 * (name) refuse every bad name with an error naming the field, and write
 * no file; good names pass. */
static void issue12_4_one_name_rule_for_save_rename_and_upsert(void)
{
	struct world w;
	open_world(&w);
	json_t *r = t_call(w.z, NULL, "qq_save_sticker", "{\"media\":\"media/%s.gif\",\"name\":\"起点\"}", HASH1);
	CHECK_OK(r);
	json_decref(r);
	for (const char *const *n = bad_names; *n; n++) {
		json_t *name = json_stringn_nocheck(*n, strlen(*n));
		json_t *a = json_pack("{s:O, s:s}", "name", name, "media", "");
		char media[128];
		snprintf(media, sizeof(media), "media/%s.gif", HASH1);
		json_object_set_new(a, "media", json_string(media));
		char *s = json_dumps(a, JSON_COMPACT | JSON_ENSURE_ASCII);
		if (!s) { /* invalid UTF-8 cannot be sent as JSON: nothing to test here */
			json_decref(a);
			json_decref(name);
			continue;
		}
		r = t_call_raw(w.z, NULL, NULL, "qq_save_sticker", s);
		CHECK_ERR(r, "invalid_argument");
		CHECK_HAS(t_errmsg(r), "'name'");
		json_decref(r);
		free(s);
		json_decref(a);
		a = json_pack("{s:s, s:O}", "from", "起点", "to", name);
		s = json_dumps(a, JSON_COMPACT);
		r = t_call_raw(w.z, NULL, NULL, "qq_rename_sticker", s);
		CHECK_ERR(r, "invalid_argument");
		CHECK_HAS(t_errmsg(r), "'to'");
		json_decref(r);
		free(s);
		json_decref(a);
		a = json_pack("{s:s, s:s, s:O}", "action", "upsert", "path", "STICKERS.md", "name", name);
		s = json_dumps(a, JSON_COMPACT);
		r = t_call_raw(w.z, NULL, NULL, "qq_memory", s);
		if ((*n)[0] != ' ') { /* a field's outer spaces are trimmed */
			CHECK_ERR(r, "invalid_argument");
			/* a line break or '｜' is refused as a field before it is a name */
			CHECK_HAS(t_errmsg(r), strchr(*n, '\n') || strstr(*n, "｜") ? "one line" : "sticker name");
		}
		json_decref(r);
		free(s);
		json_decref(a);
		json_decref(name);
	}
	/* NUL inside a JSON string is refused before any rule sees a C string */
	r = t_call(w.z, NULL, "qq_save_sticker", "{\"media\":\"media/%s.gif\",\"name\":\"a\\u0000/../x\"}", HASH1);
	CHECK_ERR(r, "invalid_argument");
	CHECK_HAS(t_errmsg(r), "NUL");
	json_decref(r);
	CHECK_INT(sticker_files(&w), 1);
	const char *from = "起点";
	for (const char *const *n = good_names; *n; n++) {
		r = t_call(w.z, NULL, "qq_rename_sticker", "{\"from\":\"%s\",\"to\":\"%s\"}", from, *n);
		CHECK_OK(r);
		json_decref(r);
		from = *n;
	}
	CHECK_INT(sticker_files(&w), 1);
	CHECK_CANARIES(&w, NULL);
	close_world(&w);
}

/* migrate cognition --apply never builds a path from a bad name (the
 * defect: '../../pwned' created D/../pwned.gif) nor reads a media path
 * that leaves media/: those entries are refused, stay in COGNITION.md,
 * and make the command need a person. */
static void issue12_4_migrate_refuses_a_bad_name_and_media_path(void)
{
	struct world w;
	open_world(&w);
	char *src = cat(w.top, "src");
	mkdir(src, 0755);
	char *cog = NULL;
	if (asprintf(&cog, "## 其它\n- .qq-media/%s.gif｜../../pwned｜越狱\n- .qq-media/../../outside/victim.gif｜偷｜偷图\n"
			   "- .qq-media/%s.gif｜好图｜一张好图\n",
		     HASH1, HASH1) < 0)
		abort();
	put_at(src, "COGNITION.md", cog);
	free(cog);
	char *out = NULL;
	CHECK_INT(zcor_import_qq(w.z, src, NULL, NULL, &out), ZCOR_OK);
	zcor_free(out);
	CHECK_INT(zcor_migrate_cognition(w.z, 1, &out), ZCOR_OK);
	json_t *rep = json_loads(out, 0, NULL);
	zcor_free(out);
	CHECK_INT(t_int(rep, "refused"), 2);
	CHECK_STR(t_str(rep, "actions.0.action"), "refused");
	CHECK_HAS(t_str(rep, "actions.0.why"), "sticker name");
	CHECK_STR(t_str(rep, "actions.1.action"), "refused");
	CHECK_STR(t_str(rep, "actions.2.action"), "collect");
	json_decref(rep);
	char *pwned = cat(w.top, "pwned.gif");
	CHECK(access(pwned, F_OK) != 0);
	free(pwned);
	char *t = view(w.z, "COGNITION.md");
	CHECK_HAS(t, "../../pwned");
	CHECK_HAS(t, "outside/victim.gif");
	free(t);
	t = view(w.z, "STICKERS.md");
	CHECK_HAS(t, "- 好图｜一张好图｜stickers/好图.gif");
	CHECK_LACKS(t, "pwned");
	CHECK_LACKS(t, "偷");
	free(t);
	CHECK_INT(sticker_files(&w), 1);
	free(src);
	CHECK_CANARIES(&w, "src");
	close_world(&w);
}

/* ---- 8. import reads only regular files inside its directory ----------------- */

/* Symlinks (to a file, to a directory) inside the source are not
 * followed, files that are no images are not copied into stickers/, and
 * each is listed in skipped with its reason. */
static void issue12_8_import_follows_no_link_and_copies_only_images(void)
{
	struct world w;
	open_world(&w);
	char *src = cat(w.top, "src");
	mkdir(src, 0755);
	mkdir_at(src, ".qq-stickers");
	mkdir_at(src, "conversations");
	mkdir_at(src, "conversations/group-2");
	char *p = cat(src, ".qq-stickers/ok.gif");
	put(p, GIF, sizeof(GIF));
	free(p);
	symlink_at(w.secret, src, ".qq-stickers/p.gif");
	symlink_at(w.victim, src, ".qq-stickers/v.gif");
	put_at(src, ".qq-stickers/text.gif", "not an image at all\n");
	put_at(src, ".qq-stickers/..hidden.gif", "GIF89a");
	symlink_at(w.secret, src, "COGNITION.md");
	symlink_at(w.outside, src, "conversations/group-1"); /* a directory */
	symlink_at(w.secret, src, "conversations/group-2/MEMORY.md");
	mkdir_at(src, "conversations/group-2/log");
	symlink_at(w.secret, src, "conversations/group-2/log/2026-01-01.jsonl");
	symlink_at(w.outside, src, "conversations/group-2/archive");
	put_at(src, "STICKERS.md", "## 已收藏\n- ok｜好｜.qq-stickers/ok.gif\n- p｜偷｜.qq-stickers/p.gif\n");
	char *out = NULL;
	CHECK_INT(zcor_import_qq(w.z, src, NULL, NULL, &out), ZCOR_OK);
	CHECK_HAS(out, "\"stickersCopied\":1");
	json_t *rep = json_loads(out, 0, NULL);
	static const char *const skipped[] = {
		".qq-stickers/p.gif", ".qq-stickers/v.gif", ".qq-stickers/text.gif", ".qq-stickers/..hidden.gif",
		"COGNITION.md", "conversations/group-1", "conversations/group-2/MEMORY.md",
		"conversations/group-2/log/2026-01-01.jsonl", "conversations/group-2/archive", NULL};
	for (const char *const *s = skipped; *s; s++) {
		size_t i;
		json_t *x;
		int found = 0;
		json_array_foreach(t_get(rep, "skipped"), i, x) found |= strcmp(t_str(x, "path"), *s) == 0;
		if (!found) {
			fprintf(stderr, "%s:%d: %s not in skipped: %s\n", __FILE__, __LINE__, *s, out);
			t_failures++;
		}
	}
	zcor_free(out);
	CHECK_HAS(t_str(rep, "skipped.0.why"), "left out");
	json_decref(rep);
	char *ok = cat(w.mem, "stickers/ok.gif");
	CHECK(access(ok, F_OK) == 0);
	free(ok);
	CHECK_INT(sticker_files(&w), 1);
	/* nothing of the canary is in the store or served */
	CHECK_INT(t_sql_int(w.mem, "SELECT count(*) FROM nodes WHERE content LIKE '%canary%' OR title LIKE '%canary%'"), 0);
	CHECK_INT(t_sql_int(w.mem, "SELECT count(*) FROM view_unparsed WHERE line LIKE '%canary%'"), 0);
	/* none but the one open_world logged */
	CHECK_INT(t_sql_int(w.mem, "SELECT count(*) FROM messages WHERE message_id <> 'img-1'"), 0);
	char *data = NULL;
	size_t len = 0;
	const char *mime = NULL;
	CHECK(zcor_sticker_read(w.z, "p.gif", &data, &len, &mime) != ZCOR_OK);
	zcor_free(data);
	/* a symlinked .qq-stickers/ is not followed either */
	char *src2 = cat(w.top, "src2");
	mkdir(src2, 0755);
	symlink_at(w.outside, src2, ".qq-stickers");
	CHECK_INT(zcor_import_qq(w.z, src2, NULL, NULL, &out), ZCOR_OK);
	CHECK_HAS(out, ".qq-stickers");
	CHECK_HAS(out, "symbolic link");
	zcor_free(out);
	char *v = cat(w.mem, "stickers/victim.gif");
	CHECK(access(v, F_OK) != 0);
	free(v);
	free(src);
	free(src2);
	CHECK_CANARIES(&w, "src", "src2");
	close_world(&w);
}

/* ---- 10. a FIFO in the source never hangs the import ---------------------------- */

static void on_alarm(int sig)
{
	(void)sig;
	static const char msg[] = "issue12_10: the import hung on a FIFO\n";
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(3);
	_exit(3);
}

/* INDEX.md, a MEMORY.md, a sticker and a log file that are FIFOs: the
 * import neither blocks (holding the write lock) nor fails; each is
 * skipped, named by its path inside the source directory only. */
static void issue12_10_import_skips_fifos_without_hanging(void)
{
	struct world w;
	open_world(&w);
	char *src = cat(w.top, "src");
	mkdir(src, 0755);
	fifo_at(src, "INDEX.md");
	mkdir_at(src, ".qq-stickers");
	fifo_at(src, ".qq-stickers/f.gif");
	mkdir_at(src, "conversations");
	mkdir_at(src, "conversations/group-1");
	fifo_at(src, "conversations/group-1/MEMORY.md");
	mkdir_at(src, "conversations/group-1/log");
	fifo_at(src, "conversations/group-1/log/2026-01-01.jsonl");
	put_at(src, "PEOPLE.md", "## 人物\n- 小明（QQ 123456）｜同学\n");
	signal(SIGALRM, on_alarm);
	alarm(20);
	char *out = NULL;
	CHECK_INT(zcor_import_qq(w.z, src, NULL, NULL, &out), ZCOR_OK);
	alarm(0);
	json_t *rep = json_loads(out, 0, NULL);
	CHECK_INT(json_array_size(t_get(rep, "skipped")), 4);
	size_t i;
	json_t *x;
	json_array_foreach(t_get(rep, "skipped"), i, x) {
		CHECK_HAS(t_str(x, "why"), "FIFO");
		CHECK_LACKS(t_str(x, "why"), w.top);
		CHECK_LACKS(t_str(x, "path"), w.top);
	}
	CHECK_HAS(out, "\"path\":\"INDEX.md\"");
	json_decref(rep);
	zcor_free(out);
	/* the write lock was let go: another handle writes at once */
	zcor *z2 = t_open_dir(w.mem);
	json_t *r = t_call(z2, NULL, "qq_memory", "{\"action\":\"read\",\"path\":\"PEOPLE.md\"}");
	CHECK_HAS(t_str(r, "text"), "小明");
	json_decref(r);
	r = t_call(z2, NULL, "zcor_memory_write", "{\"title\":\"之后\",\"content\":\"写得进去\"}");
	CHECK_OK(r);
	json_decref(r);
	zcor_close(z2);
	free(src);
	CHECK_CANARIES(&w, "src");
	close_world(&w);
}

const struct t_case t_cases[] = {
	{"issue12_1_write_and_append_refuse_a_path_outside_stickers",
	 issue12_1_write_and_append_refuse_a_path_outside_stickers},
	{"issue12_1_import_keeps_a_path_outside_as_written", issue12_1_import_keeps_a_path_outside_as_written},
	{"issue12_1_a_stored_path_outside_is_never_used", issue12_1_a_stored_path_outside_is_never_used},
	{"issue12_4_one_name_rule_for_save_rename_and_upsert", issue12_4_one_name_rule_for_save_rename_and_upsert},
	{"issue12_4_migrate_refuses_a_bad_name_and_media_path", issue12_4_migrate_refuses_a_bad_name_and_media_path},
	{"issue12_8_import_follows_no_link_and_copies_only_images",
	 issue12_8_import_follows_no_link_and_copies_only_images},
	{"issue12_10_import_skips_fifos_without_hanging", issue12_10_import_skips_fifos_without_hanging},
	{0},
};
