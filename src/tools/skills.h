/*
 * skills.h — the skills (SPEC §7, docs/SKILLS.md): SKILL.md files with a
 * front matter (`name`, kebab-case and equal to its folder; `description`)
 * and a body of instructions, discovered from the built-in set (skills/,
 * embedded at build) and three directories, and read by the `skill` tool.
 *
 * Precedence, lowest first: built-in, ~/.dsh/skills,
 * <project>/.agents/skills, <project>/.dsh/skills — a skill of a later
 * source replaces one of the same name from an earlier source. The
 * project root is config.json's skills.projectRoot, or the memory
 * directory's parent.
 *
 * Discovery is rescanned on every zc_skills_refresh without a restart and
 * cheaply: a directory is listed again only when its identity or mtime
 * changed, a SKILL.md is read again only when its own identity changed.
 * An invalid skill (front matter, size, encoding, a link) is skipped and
 * kept as a problem (zc_skills_problems, the doctor's SKILL_INVALID);
 * nothing about a skill is ever fatal. Files are opened with base/fs.h:
 * regular files only, no link followed below a skills directory, size
 * capped.
 *
 * Tools layer. One struct zc_skills per handle (api/ owns it), used by one
 * thread at a time like the handle.
 */
#ifndef ZC_TOOLS_SKILLS_H
#define ZC_TOOLS_SKILLS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "base/buf.h"
#include "base/err.h"
#include "memory/config.h"

#define ZC_SKILL_NAME_MAX 64       /* characters (ASCII: bytes) of a name */
#define ZC_SKILL_DESC_MAX 1024     /* characters of a description */
#define ZC_SKILL_FILE_MAX 65536    /* bytes of a SKILL.md */
#define ZC_SKILLS_DIR_MAX 64       /* skill folders read from one directory */

/* A built-in skill as embedded at build (cmake/embed_skills.cmake). */
struct zc_builtin_skill {
	const char *folder;
	const unsigned char *bytes;
	size_t len;
};
/* Ended by a row with a NULL folder. */
extern const struct zc_builtin_skill zc_builtin_skills[];

/* The identity of a file or directory as last seen. */
struct zc_skill_stamp {
	int known;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	int racy; /* seen within a second of its mtime: no proof of sameness */
};

/* One skill folder of a source, as last read: a skill or a problem. */
struct zc_skill_entry {
	char *folder;
	struct zc_skill_stamp file;   /* its SKILL.md */
	int valid;
	char *name, *description, *text; /* valid: front matter and body */
	char *problem;                   /* invalid: why */
	char *path;                      /* the file, as reported */
};

struct zc_skill_source {
	const char *label; /* "builtin", "~/.dsh/skills", ".agents/skills", ".dsh/skills" */
	char *dir;         /* absolute, NULL when there is none (no HOME, say) */
	struct zc_skill_stamp id; /* of dir, when it was last listed */
	int listed;
	struct zc_skill_entry *v;
	size_t n;
	char *problem; /* about the directory itself (too many folders, unreadable) */
};

/* A skill in effect: borrowed from its source's entry until the next refresh. */
struct zc_skill {
	const char *name, *description, *text, *path;
	const char *source;    /* the label of its source */
	const char *overrides; /* the label of the source it replaced, or NULL */
};

#define ZC_SKILL_SOURCES 4 /* built-in, home, .agents, .dsh: lowest precedence first */

struct zc_skills {
	char *mem_dir;      /* absolute; the default project root is its parent */
	char *project_root; /* as last computed */
	char *home;         /* $HOME as last read */
	struct zc_skill_source src[ZC_SKILL_SOURCES];
	struct zc_skill *v; /* in effect, by name */
	size_t n;
	uint64_t key;       /* a hash of the names and descriptions in effect */
	int built;
};

/* mem_dir: the memory directory (made absolute here). Reads nothing yet. */
void zc_skills_init(struct zc_skills *s, const char *mem_dir);
/* Accepts NULL and a zeroed struct. */
void zc_skills_release(struct zc_skills *s);
/*
 * Brings the skills up to date with the disk under cfg (skills.projectRoot;
 * NULL: the default root) and $HOME. Never fails: what cannot be read is a
 * problem of its skill or directory.
 */
void zc_skills_refresh(struct zc_skills *s, const struct zc_config *cfg);
/* The skill in effect named name, or NULL (borrowed; valid until the
 * next refresh). */
const struct zc_skill *zc_skills_find(const struct zc_skills *s, const char *name);
/* Changes whenever a name or description in effect changes (the model's
 * tools JSON is cached by it); the same set gives the same key. */
uint64_t zc_skills_key(const struct zc_skills *s);
/* The names in effect, ", "-separated, into out ("none" when empty). */
void zc_skills_names(const struct zc_skills *s, struct zc_buf *out);
/* "- name：description" a line per skill in effect (english: "- name:
 * description"), into out; nothing when there is none. */
void zc_skills_catalog(const struct zc_skills *s, int english, struct zc_buf *out);
/* The skills in effect as JSON [{name, description, source, path,
 * overrides?}] (new reference). */
json_t *zc_skills_json(const struct zc_skills *s);
/* The skipped skills and unreadable directories as doctor findings
 * [{code: "SKILL_INVALID", severity: "warning", path, message, fix}]
 * (new reference). */
json_t *zc_skills_problems(const struct zc_skills *s);

/*
 * Parses a SKILL.md of `folder`: checks the size, UTF-8, the front matter
 * (name: kebab-case, at most ZC_SKILL_NAME_MAX, equal to folder;
 * description: 1 to ZC_SKILL_DESC_MAX characters) and splits it. ZCOR_OK
 * with *name, *description, *text (the body without the front matter; the
 * caller frees all three), or ZCOR_EINVAL with e saying why.
 */
int zc_skill_parse(const char *folder, const char *data, size_t len, char **name,
		   char **description, char **text, struct zc_err *e);
/* Whether s is kebab-case: [a-z0-9]+(-[a-z0-9]+)*, 1 to ZC_SKILL_NAME_MAX. */
int zc_skill_name_ok(const char *s);

/* ---- the `skill` tool (a row of registry.c) ----------------------------- */

struct zc_tool_env;
/*
 * skill {name}: the skill in effect named name, after a refresh:
 * {name, description, source, path, overrides?, text} (text: the body
 * without the front matter). The name is only ever looked up among the
 * discovered skills, never made into a path. Unknown: ZCOR_ENOTFOUND
 * listing the names in effect (details {"available": [...]}).
 */
int zc_skill_tool(const struct zc_tool_env *env, json_t *args, json_t **out, struct zc_err *e);
/* The row's description's live part: the skills in effect after a refresh. */
void zc_skill_describe(const struct zc_tool_env *env, int english, struct zc_buf *out);

#endif
