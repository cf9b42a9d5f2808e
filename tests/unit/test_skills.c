#define _GNU_SOURCE /* asprintf */
/*
 * test_skills.c — issue 16, "Skills (SPEC §7)": the five built-in skills
 * (front matter, the triage rule, the hard rules, and every example of a
 * tool call in them valid for that tool's schema — and the qq_memory ones
 * accepted by the tool itself); discovery from the built-in set,
 * ~/.dsh/skills, <project>/.agents/skills and <project>/.dsh/skills with
 * its precedence; hot add / change / removal without reopening; invalid
 * skills skipped and reported (doctor SKILL_INVALID); links refused; the
 * `skill` tool (text without the front matter, unknown names) and the
 * list in its description.
 *
 * Each case makes a project directory P with the memory directory P/data
 * (so the default project root is P) and points $HOME at P/home.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "text/schema.h"
#include "tools/skills.h"
#include "tools/tools.h"

/* ---- helpers ------------------------------------------------------------ */

static char *join(const char *a, const char *b)
{
	char *s = NULL;
	if (asprintf(&s, "%s/%s", a, b) < 0)
		abort();
	return s;
}

static void mkdirs(const char *path)
{
	char buf[4096];
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			mkdir(buf, 0755);
			*p = '/';
		}
	mkdir(buf, 0755);
}

static void put(const char *path, const char *data, size_t len)
{
	char *dir = strdup(path);
	*strrchr(dir, '/') = 0;
	mkdirs(dir);
	free(dir);
	FILE *f = fopen(path, "wb");
	CHECK(f != NULL);
	if (!f)
		return;
	fwrite(data, 1, len, f);
	fclose(f);
}

/* <root>/<name>/SKILL.md with a front matter of name (NULL: none) and
 * description, and the body. */
static void skill_at(const char *root, const char *folder, const char *name, const char *desc,
		     const char *body)
{
	char *dir = join(root, folder), *file = join(dir, "SKILL.md");
	char text[8192];
	int n = snprintf(text, sizeof(text), "---\n%s%s%s%s%s%s---\n%s", name ? "name: " : "",
		     name ? name : "", name ? "\n" : "", desc ? "description: " : "", desc ? desc : "",
		     desc ? "\n" : "", body);
	put(file, text, (size_t)n);
	free(dir);
	free(file);
}

struct proj {
	const char *root;
	char *data, *home, *dsh, *agents, *homeskills;
};

static struct proj proj_new(void)
{
	struct proj p = {.root = t_tmpdir()};
	p.data = join(p.root, "data");
	p.home = join(p.root, "home");
	p.dsh = join(p.root, ".dsh/skills");
	p.agents = join(p.root, ".agents/skills");
	p.homeskills = join(p.home, ".dsh/skills");
	mkdirs(p.data);
	mkdirs(p.home);
	setenv("HOME", p.home, 1);
	return p;
}

static void proj_free(struct proj *p)
{
	free(p->data), free(p->home), free(p->dsh), free(p->agents), free(p->homeskills);
}

static json_t *skill_call(zcor *z, const char *name, int *rc)
{
	return t_call_rc(z, "group:100000001", rc, "skill", "{\"name\":\"%s\"}", name);
}

/* The skill row of zcor_tools_json(z, flags). */
static json_t *skill_row(zcor *z, unsigned flags)
{
	char *s = NULL;
	CHECK_INT(zcor_tools_json(z, flags, &s), ZCOR_OK);
	json_t *list = json_loads(s ? s : "", 0, NULL), *row = NULL;
	zcor_free(s);
	size_t i;
	json_t *t;
	json_array_foreach(list, i, t) if (strcmp(t_str(t, "name"), "skill") == 0) row = json_incref(t);
	json_decref(list);
	CHECK(row != NULL);
	return row;
}

static json_t *doctor(zcor *z)
{
	char *s = NULL;
	CHECK_INT(zcor_doctor(z, 0, &s), ZCOR_OK);
	json_t *r = json_loads(s ? s : "", 0, NULL);
	zcor_free(s);
	return r;
}

/* The SKILL_INVALID finding whose path ends with tail, or NULL. */
static json_t *invalid_finding(json_t *report, const char *tail)
{
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(report, "findings"), i, f) {
		const char *code = t_str(f, "code"), *path = t_str(f, "path");
		if (code && strcmp(code, "SKILL_INVALID") == 0 && path && strlen(path) >= strlen(tail) &&
		    strcmp(path + strlen(path) - strlen(tail), tail) == 0)
			return f;
	}
	return NULL;
}

static const char *const builtin_names[] = {"learn-meme", "learn-sticker", "message-digest",
					    "moegirl", "update-cognition", NULL};

/* ---- the built-ins ------------------------------------------------------ */

static void issue16_builtins_load_with_the_seed_rules(void)
{
	struct proj p = proj_new();
	struct zc_skills s;
	zc_skills_init(&s, p.data);
	zc_skills_refresh(&s, NULL);
	CHECK_INT(s.n, 5);
	for (size_t i = 0; builtin_names[i]; i++) {
		const struct zc_skill *k = zc_skills_find(&s, builtin_names[i]);
		CHECK(k != NULL);
		if (!k)
			continue;
		CHECK_STR(k->source, "builtin");
		CHECK(k->overrides == NULL);
		CHECK(k->description && *k->description);
		/* the text is the body: the front matter is gone */
		CHECK(strncmp(k->text, "---", 3) != 0);
		CHECK(strstr(k->text, "description:") == NULL);
		CHECK(k->text[0] == '#');
	}
	json_t *problems = zc_skills_problems(&s);
	CHECK_INT(json_array_size(problems), 0);
	json_decref(problems);
	/* the triage rule where seed 003 puts it (and in the shell), both ways */
	const char *triage[] = {"learn-meme", "learn-sticker", "message-digest", "update-cognition"};
	for (size_t i = 0; i < 4; i++) {
		const struct zc_skill *k = zc_skills_find(&s, triage[i]);
		if (!k)
			continue;
		CHECK_HAS(k->text, "有图");
		CHECK_HAS(k->text, "只有文字");
		CHECK_HAS(k->text, "图文都有");
		CHECK_HAS(k->text, "互相写上对方的名字");
		CHECK_HAS(k->text, "拿不准");
		CHECK_HAS(k->text, "learn-sticker");
		CHECK_HAS(k->text, "learn-meme");
		/* the hard rules */
		CHECK_HAS(k->text, "`COGNITION.md` 里不许出现文件路径");
		CHECK_HAS(k->text, "`STICKERS.md` 里不许出现 `media/` 路径");
		CHECK_HAS(k->text, "先收藏，再记录");
	}
	/* moegirl looks up before guessing, and writes nothing */
	const struct zc_skill *moe = zc_skills_find(&s, "moegirl");
	if (moe) {
		CHECK_HAS(moe->text, "wiki_lookup");
		CHECK_HAS(moe->text, "先查再说");
		CHECK(strstr(moe->text, "\"action\": \"upsert\"") == NULL);
	}
	/* the shell only triages: no example of a write */
	const struct zc_skill *shell = zc_skills_find(&s, "update-cognition");
	if (shell)
		CHECK(strstr(shell->text, "```json") == NULL);
	zc_skills_release(&s);
	proj_free(&p);
}

/*
 * Every ```json <tool> block of a built-in skill is the arguments of a
 * call of that tool: valid for its schema; and the qq_memory ones, run in
 * their order as the digest agent of group:100000001, are accepted by the
 * tool (an example the tool refuses is a defect). The qq_save_sticker
 * example names a media file of the cache, which a test cannot have by
 * that name: it is checked against the schema, and the sticker it would
 * make (stickers/无语.gif) is put in place for the qq_memory examples
 * that follow it.
 */
static void issue16_builtin_examples_validate_and_run(void)
{
	struct proj p = proj_new();
	zcor *z = t_open_dir(p.data);
	char *sticker = join(p.data, "stickers/无语.gif");
	put(sticker, "GIF89a\x01\x00\x01\x00\x00\x00\x00;", 14);
	free(sticker);
	struct zc_skills s;
	zc_skills_init(&s, p.data);
	zc_skills_refresh(&s, NULL);
	int examples = 0, runs = 0;
	const struct zcor_ctx digest = {ZCOR_ACTOR_DIGEST, "group:100000001"};
	for (size_t i = 0; builtin_names[i]; i++) {
		const struct zc_skill *k = zc_skills_find(&s, builtin_names[i]);
		if (!k)
			continue;
		const char *at = k->text;
		while ((at = strstr(at, "```json "))) {
			at += 8;
			const char *nl = strchr(at, '\n');
			const char *end = nl ? strstr(nl, "\n```") : NULL;
			CHECK(nl && end);
			if (!nl || !end)
				break;
			char tool[64];
			snprintf(tool, sizeof(tool), "%.*s", (int)(nl - at), at);
			const struct zc_tool *t = zc_tool_find(tool);
			if (!t)
				fprintf(stderr, "%s: an example of an unknown tool '%s'\n", k->name, tool);
			CHECK(t != NULL);
			json_error_t je;
			json_t *args = json_loadb(nl + 1, (size_t)(end - nl - 1), 0, &je);
			if (!args)
				fprintf(stderr, "%s: an example is not JSON: %s\n", k->name, je.text);
			CHECK(json_is_object(args));
			struct zc_err e = {0};
			if (t && args) {
				int rc = zc_schema_check(zc_tool_schema(t), args, &e);
				if (rc)
					fprintf(stderr, "%s: an example of %s is refused: %s\n", k->name, tool, e.msg);
				CHECK_INT(rc, ZCOR_OK);
				examples++;
			}
			if (t && args && strcmp(tool, "qq_memory") == 0) {
				char *text = json_dumps(args, 0), *out = NULL;
				int rc = zcor_tool_call(z, &digest, "qq_memory", text, &out);
				if (rc)
					fprintf(stderr, "%s: qq_memory refuses an example: %s\n", k->name,
						zcor_errmsg(z));
				CHECK_INT(rc, ZCOR_OK);
				zcor_free(out);
				free(text);
				runs++;
			}
			json_decref(args);
			at = end + 4;
		}
	}
	/* seed 003's four upserts and the others */
	CHECK(examples >= 9);
	CHECK(runs >= 8);
	/* what they wrote is in the views */
	json_t *r = t_call_ok(z, NULL, "qq_memory", "{\"action\":\"read\",\"path\":\"COGNITION.md\"}");
	CHECK_HAS(t_str(r, "text"), "蚌埠住了");
	CHECK_HAS(t_str(r, "text"), "yyds");
	json_decref(r);
	r = t_call_ok(z, NULL, "qq_memory", "{\"action\":\"read\",\"path\":\"PEOPLE.md\"}");
	CHECK_HAS(t_str(r, "text"), "kaguya");
	json_decref(r);
	r = t_call_ok(z, NULL, "qq_memory", "{\"action\":\"read\",\"path\":\"STICKERS.md\"}");
	CHECK_HAS(t_str(r, "text"), "stickers/无语.gif");
	json_decref(r);
	r = t_call_ok(z, NULL, "qq_memory",
		      "{\"action\":\"read\",\"path\":\"conversations/group-100000001/MEMORY.md\"}");
	CHECK_HAS(t_str(r, "text"), "周五固定开黑");
	CHECK(!strstr(t_str(r, "text"), "月底线下聚会")); /* the remove example */
	json_decref(r);
	zc_skills_release(&s);
	zcor_close(z);
	proj_free(&p);
}

/* ---- discovery ------------------------------------------------------------ */

static void issue16_discovery_order_and_override(void)
{
	struct proj p = proj_new();
	/* alpha in all three directories, beta in two, gamma in one; a
	 * built-in replaced from ~/.dsh/skills, another from the project */
	skill_at(p.homeskills, "alpha", "alpha", "home alpha", "home alpha body\n");
	skill_at(p.agents, "alpha", "alpha", "agents alpha", "agents alpha body\n");
	skill_at(p.dsh, "alpha", "alpha", "dsh alpha", "dsh alpha body\n");
	skill_at(p.homeskills, "beta", "beta", "home beta", "home beta body\n");
	skill_at(p.agents, "beta", "beta", "agents beta", "agents beta body\n");
	skill_at(p.homeskills, "gamma", "gamma", "home gamma", "home gamma body\n");
	skill_at(p.homeskills, "learn-meme", "learn-meme", "my own learn-meme", "mine\n");
	skill_at(p.agents, "moegirl", "moegirl", "project moegirl", "project moegirl body\n");
	zcor *z = t_open_dir(p.data);
	int rc;
	json_t *r = skill_call(z, "alpha", &rc);
	CHECK_INT(rc, ZCOR_OK);
	CHECK_STR(t_str(r, "text"), "dsh alpha body\n");
	CHECK_STR(t_str(r, "source"), ".dsh/skills");
	CHECK_STR(t_str(r, "overrides"), ".agents/skills");
	json_decref(r);
	r = skill_call(z, "beta", &rc);
	CHECK_STR(t_str(r, "text"), "agents beta body\n");
	CHECK_STR(t_str(r, "overrides"), "~/.dsh/skills");
	json_decref(r);
	r = skill_call(z, "gamma", &rc);
	CHECK_STR(t_str(r, "text"), "home gamma body\n");
	CHECK_STR(t_str(r, "source"), "~/.dsh/skills");
	json_decref(r);
	r = skill_call(z, "learn-meme", &rc);
	CHECK_STR(t_str(r, "text"), "mine\n");
	CHECK_STR(t_str(r, "overrides"), "builtin");
	json_decref(r);
	r = skill_call(z, "moegirl", &rc);
	CHECK_STR(t_str(r, "text"), "project moegirl body\n");
	json_decref(r);
	/* a built-in nobody replaced */
	r = skill_call(z, "learn-sticker", &rc);
	CHECK_STR(t_str(r, "source"), "builtin");
	json_decref(r);
	/* skills.projectRoot moves the project's two directories elsewhere:
	 * the project's alpha and moegirl are gone, home's stay */
	const char *other = t_tmpdir();
	char *cfg = NULL;
	CHECK(asprintf(&cfg, "{\"skills\": {\"projectRoot\": \"%s\"}}", other) > 0);
	CHECK_INT(zcor_config_set(z, cfg), ZCOR_OK);
	free(cfg);
	r = skill_call(z, "alpha", &rc);
	CHECK_STR(t_str(r, "text"), "home alpha body\n");
	json_decref(r);
	r = skill_call(z, "moegirl", &rc);
	CHECK_STR(t_str(r, "source"), "builtin");
	json_decref(r);
	char *odsh = join(other, ".dsh/skills");
	skill_at(odsh, "alpha", "alpha", "other alpha", "other alpha body\n");
	free(odsh);
	r = skill_call(z, "alpha", &rc);
	CHECK_STR(t_str(r, "text"), "other alpha body\n");
	json_decref(r);
	zcor_close(z);
	proj_free(&p);
}

static void issue16_project_root_is_validated(void)
{
	struct proj p = proj_new();
	zcor *z = t_open_dir(p.data);
	const char *bad[] = {"{\"skills\": {\"projectRoot\": \"relative/dir\"}}",
			     "{\"skills\": {\"projectRoot\": 7}}", "{\"skills\": {\"root\": \"/x\"}}",
			     "{\"skills\": \"/x\"}"};
	for (size_t i = 0; i < 4; i++) {
		CHECK_INT(zcor_config_set(z, bad[i]), ZCOR_EINVAL);
		CHECK_HAS(zcor_errmsg(z), "skills");
	}
	CHECK_INT(zcor_config_set(z, "{\"skills\": {\"projectRoot\": \"relative/dir\"}}"), ZCOR_EINVAL);
	CHECK_HAS(zcor_errmsg(z), "'skills.projectRoot' must be an absolute directory path");
	/* nothing was written */
	char *path = join(p.data, "config.json");
	CHECK(access(path, F_OK) != 0);
	free(path);
	CHECK_INT(zcor_config_set(z, "{\"skills\": {\"projectRoot\": \"\"}}"), ZCOR_OK);
	zcor_close(z);
	proj_free(&p);
}

/* Added, changed (the same size, within the same second), removed: each
 * seen by the next call on the same handle. */
static void issue16_hot_add_change_remove_without_restart(void)
{
	struct proj p = proj_new();
	zcor *z = t_open_dir(p.data);
	int rc;
	json_t *r = skill_call(z, "hot-one", &rc);
	CHECK_INT(rc, ZCOR_ENOTFOUND);
	json_decref(r);
	json_t *row = skill_row(z, 0);
	CHECK(!strstr(t_str(row, "description"), "hot-one"));
	json_decref(row);
	skill_at(p.dsh, "hot-one", "hot-one", "热加载的 skill", "version A\n");
	r = skill_call(z, "hot-one", &rc);
	CHECK_INT(rc, ZCOR_OK);
	CHECK_STR(t_str(r, "text"), "version A\n");
	json_decref(r);
	row = skill_row(z, 0);
	CHECK_HAS(t_str(row, "description"), "- hot-one：热加载的 skill");
	json_decref(row);
	/* the same size, at once, and the same mtime (a coarse clock's tick):
	 * the stamp is the same, the text is not */
	char *md = join(p.dsh, "hot-one/SKILL.md");
	struct stat before;
	CHECK_INT(stat(md, &before), 0);
	skill_at(p.dsh, "hot-one", "hot-one", "热加载的 skill", "version B\n");
	struct timespec times[2] = {before.st_atim, before.st_mtim};
	CHECK_INT(utimensat(AT_FDCWD, md, times, 0), 0);
	free(md);
	r = skill_call(z, "hot-one", &rc);
	CHECK_STR(t_str(r, "text"), "version B\n");
	json_decref(r);
	/* a new description shows in the list */
	skill_at(p.dsh, "hot-one", "hot-one", "改过的说明", "version B\n");
	row = skill_row(z, 0);
	CHECK_HAS(t_str(row, "description"), "- hot-one：改过的说明");
	json_decref(row);
	/* removed */
	char *dir = join(p.dsh, "hot-one"), *file = join(dir, "SKILL.md");
	CHECK_INT(unlink(file), 0);
	CHECK_INT(rmdir(dir), 0);
	r = skill_call(z, "hot-one", &rc);
	CHECK_INT(rc, ZCOR_ENOTFOUND);
	json_decref(r);
	row = skill_row(z, 0);
	CHECK(!strstr(t_str(row, "description"), "hot-one"));
	json_decref(row);
	free(dir), free(file);
	zcor_close(z);
	proj_free(&p);
}

/* The key the turn caches its tools JSON by: the same for the same set,
 * another when a skill comes, goes or says something else. */
static void issue16_key_follows_the_set(void)
{
	struct proj p = proj_new();
	struct zc_skills s;
	zc_skills_init(&s, p.data);
	zc_skills_refresh(&s, NULL);
	uint64_t k0 = zc_skills_key(&s);
	zc_skills_refresh(&s, NULL);
	CHECK(zc_skills_key(&s) == k0);
	skill_at(p.agents, "new-one", "new-one", "a new one", "body\n");
	zc_skills_refresh(&s, NULL);
	uint64_t k1 = zc_skills_key(&s);
	CHECK(k1 != k0);
	/* the body alone changing: the list the model reads is the same */
	skill_at(p.agents, "new-one", "new-one", "a new one", "another body\n");
	zc_skills_refresh(&s, NULL);
	CHECK(zc_skills_key(&s) == k1);
	skill_at(p.agents, "new-one", "new-one", "another description", "another body\n");
	zc_skills_refresh(&s, NULL);
	CHECK(zc_skills_key(&s) != k1);
	zc_skills_release(&s);
	proj_free(&p);
}

/* ---- invalid skills ------------------------------------------------------- */

static void issue16_invalid_front_matter_skipped_and_reported(void)
{
	struct proj p = proj_new();
	skill_at(p.dsh, "good-one", "good-one", "fine", "ok\n");
	skill_at(p.dsh, "no-name", NULL, "a description", "x\n");
	skill_at(p.dsh, "no-desc", "no-desc", NULL, "x\n");
	skill_at(p.dsh, "Bad_Name", "Bad_Name", "d", "x\n");
	skill_at(p.dsh, "other-folder", "not-the-folder", "d", "x\n");
	skill_at(p.dsh, "double--dash", "double--dash", "d", "x\n");
	/* a built-in's name, invalid: the built-in stays in effect */
	skill_at(p.dsh, "learn-meme", "learn-meme", NULL, "broken override\n");
	char *f = join(p.dsh, "latin1/SKILL.md");
	put(f, "---\nname: latin1\ndescription: caf\xe9\n---\nx\n", 38);
	free(f);
	f = join(p.dsh, "no-front/SKILL.md");
	put(f, "# just text\n", 12);
	free(f);
	f = join(p.dsh, "unclosed/SKILL.md");
	put(f, "---\nname: unclosed\ndescription: d\n", 34);
	free(f);
	char *big = malloc(ZC_SKILL_FILE_MAX + 100);
	int n = snprintf(big, 100, "---\nname: too-big\ndescription: d\n---\n");
	memset(big + n, 'x', ZC_SKILL_FILE_MAX + 100 - (size_t)n);
	f = join(p.dsh, "too-big/SKILL.md");
	put(f, big, ZC_SKILL_FILE_MAX + 100);
	free(f);
	free(big);
	char *empty = join(p.dsh, "empty-folder");
	mkdirs(empty);
	free(empty);
	/* a plain file beside the skills is no skill and no problem */
	f = join(p.dsh, "README.md");
	put(f, "notes\n", 6);
	free(f);

	zcor *z = t_open_dir(p.data);
	int rc;
	json_t *r = skill_call(z, "good-one", &rc);
	CHECK_INT(rc, ZCOR_OK);
	json_decref(r);
	const char *skipped[] = {"no-desc", "not-the-folder", "latin1", "unclosed", "too-big",
				 "double--dash"};
	for (size_t i = 0; i < 6; i++) {
		r = skill_call(z, skipped[i], &rc);
		CHECK_INT(rc, ZCOR_ENOTFOUND);
		json_decref(r);
	}
	r = skill_call(z, "learn-meme", &rc);
	CHECK_STR(t_str(r, "source"), "builtin");
	json_decref(r);

	json_t *d = doctor(z);
	CHECK(json_is_true(json_object_get(d, "needsAttention")));
	static const struct {
		const char *tail, *why;
	} want[] = {
		{"no-name/SKILL.md", "no 'name'"},
		{"no-desc/SKILL.md", "no 'description'"},
		{"Bad_Name/SKILL.md", "not kebab-case"},
		{"double--dash/SKILL.md", "not kebab-case"},
		{"other-folder/SKILL.md", "differs from its folder 'other-folder'"},
		{"learn-meme/SKILL.md", "no 'description'"},
		{"latin1/SKILL.md", "not UTF-8"},
		{"no-front/SKILL.md", "does not begin with front matter"},
		{"unclosed/SKILL.md", "no closing '---'"},
		{"too-big/SKILL.md", "larger than 65536 bytes"},
		{"empty-folder/SKILL.md", "no SKILL.md"},
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		json_t *x = invalid_finding(d, want[i].tail);
		if (!x)
			fprintf(stderr, "no SKILL_INVALID for %s\n", want[i].tail);
		CHECK(x != NULL);
		if (!x)
			continue;
		CHECK_HAS(t_str(x, "message"), want[i].why);
		CHECK_STR(t_str(x, "severity"), "warning");
		CHECK_HAS(t_str(x, "path"), p.dsh); /* the file, in full */
		CHECK(t_str(x, "fix") != NULL);
	}
	CHECK(invalid_finding(d, "good-one/SKILL.md") == NULL);
	CHECK(invalid_finding(d, "README.md") == NULL);
	json_decref(d);
	/* fixed: no finding, and the skill is in effect */
	skill_at(p.dsh, "no-desc", "no-desc", "now described", "x\n");
	r = skill_call(z, "no-desc", &rc);
	CHECK_INT(rc, ZCOR_OK);
	json_decref(r);
	d = doctor(z);
	CHECK(invalid_finding(d, "no-desc/SKILL.md") == NULL);
	json_decref(d);
	zcor_close(z);
	proj_free(&p);
}

/* A SKILL.md planted as a link (to a valid skill elsewhere), and a skill
 * folder that is a link: neither is followed, both are reported. */
static void issue16_symlinks_in_skill_dirs_refused(void)
{
	struct proj p = proj_new();
	const char *elsewhere = t_tmpdir();
	skill_at(elsewhere, "linked", "linked", "a real skill elsewhere", "secret body\n");
	skill_at(elsewhere, "folder-link", "folder-link", "another", "secret folder body\n");
	char *dir = join(p.dsh, "linked"), *link = join(dir, "SKILL.md");
	char *target = join(elsewhere, "linked/SKILL.md");
	mkdirs(dir);
	CHECK_INT(symlink(target, link), 0);
	char *flink = join(p.dsh, "folder-link"), *ftarget = join(elsewhere, "folder-link");
	CHECK_INT(symlink(ftarget, flink), 0);
	zcor *z = t_open_dir(p.data);
	int rc;
	json_t *r = skill_call(z, "linked", &rc);
	CHECK_INT(rc, ZCOR_ENOTFOUND);
	char *dump = json_dumps(r, 0);
	CHECK(!strstr(dump, "secret body"));
	free(dump);
	json_decref(r);
	r = skill_call(z, "folder-link", &rc);
	CHECK_INT(rc, ZCOR_ENOTFOUND);
	json_decref(r);
	json_t *d = doctor(z);
	json_t *x = invalid_finding(d, "linked/SKILL.md");
	CHECK(x != NULL);
	if (x)
		CHECK_HAS(t_str(x, "message"), "symbolic link");
	x = invalid_finding(d, "folder-link/SKILL.md");
	CHECK(x != NULL);
	if (x)
		CHECK_HAS(t_str(x, "message"), "symbolic link");
	json_decref(d);
	zcor_close(z);
	free(dir), free(link), free(target), free(flink), free(ftarget);
	proj_free(&p);
}

/* ---- the tool ---------------------------------------------------------------- */

static void issue16_tool_returns_the_text_without_front_matter(void)
{
	struct proj p = proj_new();
	char *f = join(p.dsh, "quoted/SKILL.md");
	const char *text = "\xEF\xBB\xBF---\r\nname: \"quoted\"\r\n# a comment\r\nlicense: MIT\r\n"
			   "metadata:\r\n  owner: someone\r\ndescription: >\r\n  两行的\r\n  说明\r\n"
			   "---\r\n\r\n第一行\n\n---\n不是 front matter 的分隔线\n";
	put(f, text, strlen(text));
	free(f);
	zcor *z = t_open_dir(p.data);
	int rc;
	json_t *r = skill_call(z, "quoted", &rc);
	CHECK_INT(rc, ZCOR_OK);
	CHECK_STR(t_str(r, "name"), "quoted");
	CHECK_STR(t_str(r, "description"), "两行的 说明");
	CHECK_STR(t_str(r, "text"), "第一行\n\n---\n不是 front matter 的分隔线\n");
	/* issue16_skill_path_not_the_hosts: relative to its source, never the
	 * host's absolute path (the project's place, the home directory) */
	CHECK_STR(t_str(r, "path"), ".dsh/skills/quoted/SKILL.md");
	json_decref(r);
	/* a built-in through the tool, as the model gets it */
	r = t_call_rc(z, "group:1", &rc, "skill", "{\"name\":\"update-cognition\"}");
	CHECK_INT(rc, ZCOR_OK);
	CHECK(strncmp(t_str(r, "text"), "# 更新认知", strlen("# 更新认知")) == 0);
	CHECK_STR(t_str(r, "path"), "builtin:update-cognition/SKILL.md");
	json_decref(r);
	/* recorded in history like every call */
	zcor_close(z);
	CHECK(t_sql_int(p.data, "SELECT count(*) FROM history WHERE operation = 'skill' AND "
				"status = 'ok'") >= 2);
	proj_free(&p);
}

static void issue16_unknown_name_lists_the_available(void)
{
	struct proj p = proj_new();
	skill_at(p.agents, "my-skill", "my-skill", "mine", "x\n");
	zcor *z = t_open_dir(p.data);
	const char *names[] = {"nope", "../../etc/passwd", "Learn-Meme", "learn-meme/SKILL.md"};
	for (size_t i = 0; i < 4; i++) {
		int rc;
		json_t *r = t_call_rc(z, NULL, &rc, "skill", "{\"name\":\"%s\"}", names[i]);
		CHECK_INT(rc, ZCOR_ENOTFOUND);
		CHECK_HAS(t_errmsg(r), "no skill named");
		CHECK_HAS(t_errmsg(r),
			  "learn-meme, learn-sticker, message-digest, moegirl, my-skill, update-cognition");
		json_decref(r);
	}
	CHECK_HAS(zcor_errjson(z), "\"available\":[\"learn-meme\"");
	/* the schema: a name is required, at most 64 characters */
	int rc;
	json_t *r = t_call_rc(z, NULL, &rc, "skill", "{}");
	CHECK_INT(rc, ZCOR_EINVAL);
	json_decref(r);
	zcor_close(z);
	proj_free(&p);
}

static void issue16_description_lists_the_skills(void)
{
	struct proj p = proj_new();
	skill_at(p.dsh, "greet-user", "greet-user", "有人打招呼时", "x\n");
	zcor *z = t_open_dir(p.data);
	/* the model's list (MCP tools/list), the host's (zcor tools, REST) */
	unsigned flags[] = {0, ZCOR_TOOLS_ALL};
	for (size_t i = 0; i < 2; i++) {
		json_t *row = skill_row(z, flags[i]);
		const char *zh = t_str(row, "description"), *en = t_str(row, "descriptionEn");
		CHECK_HAS(zh, "可用的 skill");
		CHECK_HAS(zh, "- greet-user：有人打招呼时");
		for (size_t j = 0; builtin_names[j]; j++) {
			char line[80];
			snprintf(line, sizeof(line), "- %s：", builtin_names[j]);
			CHECK_HAS(zh, line);
		}
		CHECK_HAS(en, "Available skills (name: description):");
		CHECK_HAS(en, "- greet-user: 有人打招呼时");
		json_decref(row);
	}
	json_t *row = skill_row(z, ZCOR_TOOLS_ENGLISH);
	CHECK_HAS(t_str(row, "description"), "Available skills");
	json_decref(row);
	/* the digest agent and the model are offered it */
	const struct zc_tool *t = zc_tool_find("skill");
	CHECK(t && (t->audience & ZC_AUD_MODEL) && (t->audience & ZC_AUD_DIGEST) &&
	      (t->audience & ZC_AUD_HOST));
	CHECK(t && t->fn != NULL && t->op == NULL);
	zcor_close(z);
	/* without a handle: the built-ins (and ~/.dsh/skills) */
	row = skill_row(NULL, ZCOR_TOOLS_ALL);
	CHECK_HAS(t_str(row, "description"), "- message-digest：");
	CHECK(!strstr(t_str(row, "description"), "greet-user"));
	json_decref(row);
	proj_free(&p);
}

/* ---- the parser, alone ---------------------------------------------------- */

static void issue16_names_are_kebab_case(void)
{
	const char *ok[] = {"a", "learn-meme", "x1-y2-z3", "abc123"};
	const char *bad[] = {"", "-a", "a-", "a--b", "A", "a_b", "a b", "a.b", "中文",
			     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"};
	for (size_t i = 0; i < 4; i++)
		CHECK(zc_skill_name_ok(ok[i]));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(!zc_skill_name_ok(bad[i]));
	char *n, *d, *t;
	struct zc_err e = {0};
	const char *dup = "---\nname: a\nname: a\ndescription: d\n---\n";
	CHECK_INT(zc_skill_parse("a", dup, strlen(dup), &n, &d, &t, &e), ZCOR_EINVAL);
	CHECK_HAS(e.msg, "'name' twice");
	const char *q = "---\nname: 'it''s'\ndescription: \"say \\\"hi\\\"\" # note\n---\n";
	CHECK_INT(zc_skill_parse("it's", q, strlen(q), &n, &d, &t, &e), ZCOR_EINVAL); /* not kebab */
	const char *q2 = "---\nname: 'q'\ndescription: \"say \\\"hi\\\"\"\n---\nbody";
	CHECK_INT(zc_skill_parse("q", q2, strlen(q2), &n, &d, &t, &e), ZCOR_OK);
	CHECK_STR(d, "say \"hi\"");
	CHECK_STR(t, "body");
	free(n), free(d), free(t);
	const char *plain = "---\nname: p # the name\ndescription: a plain one # with a comment\n---\n";
	CHECK_INT(zc_skill_parse("p", plain, strlen(plain), &n, &d, &t, &e), ZCOR_OK);
	CHECK_STR(n, "p");
	CHECK_STR(d, "a plain one");
	free(n), free(d), free(t);
	const char *lit = "---\nname: l\ndescription: |\n  line one\n  line two\n---\n";
	CHECK_INT(zc_skill_parse("l", lit, strlen(lit), &n, &d, &t, &e), ZCOR_OK);
	CHECK_STR(d, "line one\nline two");
	free(n), free(d), free(t);
	char longd[4200] = "---\nname: l\ndescription: ";
	size_t at = strlen(longd);
	for (int i = 0; i < ZC_SKILL_DESC_MAX + 1; i++)
		longd[at++] = 'd';
	memcpy(longd + at, "\n---\n", 6);
	CHECK_INT(zc_skill_parse("l", longd, strlen(longd), &n, &d, &t, &e), ZCOR_EINVAL);
	CHECK_HAS(e.msg, "longer than 1024 characters");
}

const struct t_case t_cases[] = {
	{"issue16_builtins_load_with_the_seed_rules", issue16_builtins_load_with_the_seed_rules},
	{"issue16_builtin_examples_validate_and_run", issue16_builtin_examples_validate_and_run},
	{"issue16_discovery_order_and_override", issue16_discovery_order_and_override},
	{"issue16_project_root_is_validated", issue16_project_root_is_validated},
	{"issue16_hot_add_change_remove_without_restart", issue16_hot_add_change_remove_without_restart},
	{"issue16_key_follows_the_set", issue16_key_follows_the_set},
	{"issue16_invalid_front_matter_skipped_and_reported",
	 issue16_invalid_front_matter_skipped_and_reported},
	{"issue16_symlinks_in_skill_dirs_refused", issue16_symlinks_in_skill_dirs_refused},
	{"issue16_tool_returns_the_text_without_front_matter",
	 issue16_tool_returns_the_text_without_front_matter},
	{"issue16_unknown_name_lists_the_available", issue16_unknown_name_lists_the_available},
	{"issue16_description_lists_the_skills", issue16_description_lists_the_skills},
	{"issue16_names_are_kebab_case", issue16_names_are_kebab_case},
	{0},
};
