/*
 * skills.c — discovery and parsing of skills, and the `skill` tool (see
 * skills.h; docs/SKILLS.md). Tools layer: it reads files (through
 * base/fs.h, never following a link below a skills directory) and hands
 * text to the model; it never writes anything and never turns a name the
 * model gave into a path — names are looked up among what was discovered.
 */
#include "tools/skills.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/fs.h"
#include "base/json.h"
#include "base/utf8.h"
#include "tools/tools.h"

/* ---- the front matter ---------------------------------------------------- */

int zc_skill_name_ok(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n == 0 || n > ZC_SKILL_NAME_MAX || s[0] == '-' || s[n - 1] == '-')
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '-' ? s[i + 1] == '-' : !((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
			return 0;
	}
	return 1;
}

/* One line of the front matter: [p, end) without its newline and a '\r'. */
struct line {
	const char *p;
	size_t n;
};

static int next_line(const char **at, const char *end, struct line *l)
{
	if (*at >= end)
		return 0;
	const char *nl = memchr(*at, '\n', (size_t)(end - *at));
	const char *stop = nl ? nl : end;
	l->p = *at;
	l->n = (size_t)(stop - *at);
	if (l->n && l->p[l->n - 1] == '\r')
		l->n--;
	*at = nl ? nl + 1 : end;
	return 1;
}

static int is_fence(const struct line *l)
{
	size_t n = l->n;
	while (n && (l->p[n - 1] == ' ' || l->p[n - 1] == '\t'))
		n--;
	return n == 3 && memcmp(l->p, "---", 3) == 0;
}

static char *trimmed(const char *p, size_t n)
{
	while (n && (*p == ' ' || *p == '\t'))
		p++, n--;
	while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
		n--;
	return zc_strndup(p, n);
}

/* A scalar's first line after "key:": quoted ('…', "…"), a block
 * indicator (| or >, chomping ignored), or plain (a " #" starts a
 * comment). *block: 0 plain, '|' or '>'. NULL: a quote not closed. */
static char *scalar(const char *p, size_t n, int *block)
{
	*block = 0;
	while (n && (*p == ' ' || *p == '\t'))
		p++, n--;
	while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
		n--;
	if (n && (p[0] == '|' || p[0] == '>')) {
		*block = p[0];
		return zc_strdup("");
	}
	if (n && (p[0] == '"' || p[0] == '\'')) {
		char q = p[0];
		struct zc_buf b = ZC_BUF_INIT;
		zc_buf_adds(&b, "");
		size_t i = 1;
		for (; i < n && p[i] != q; i++) {
			if (q == '"' && p[i] == '\\' && i + 1 < n) {
				char c = p[++i];
				zc_buf_addc(&b, c == 'n' ? '\n' : c == 't' ? '\t' : c);
			} else {
				zc_buf_addc(&b, p[i]);
			}
			if (q == '\'' && p[i] == '\'' && i + 1 < n && p[i + 1] == '\'')
				i++; /* '' is one quote */
		}
		if (i >= n) {
			zc_buf_release(&b);
			return NULL;
		}
		return zc_buf_detach(&b);
	}
	for (size_t i = 0; i + 1 < n; i++)
		if ((p[i] == ' ' || p[i] == '\t') && p[i + 1] == '#') {
			n = i;
			break;
		}
	if (n && p[0] == '#')
		n = 0;
	return trimmed(p, n);
}

/* The front matter's two keys (other keys are allowed and ignored). */
struct front {
	char *name, *description;
};

/* Reads the front matter from *at (just after the opening "---") to its
 * closing "---"; *at is then the body. */
static int front_matter(const char **at, const char *end, struct front *f, struct zc_err *e)
{
	struct line l;
	char **cur = NULL; /* the key whose continuation lines follow */
	int block = 0;
	while (next_line(at, end, &l)) {
		if (is_fence(&l))
			return ZCOR_OK;
		int indented = l.n && (l.p[0] == ' ' || l.p[0] == '\t');
		char *t = trimmed(l.p, l.n);
		if (indented || (cur && !*t && block)) {
			if (cur && *t) { /* a continuation: | keeps lines, > and plain fold them */
				struct zc_buf b = ZC_BUF_INIT;
				zc_buf_adds(&b, *cur);
				if (**cur)
					zc_buf_addc(&b, block == '|' ? '\n' : ' ');
				zc_buf_adds(&b, t);
				zc_free(*cur);
				*cur = zc_buf_detach(&b);
			}
			zc_free(t);
			continue; /* or a nested value of a key we do not read */
		}
		cur = NULL;
		if (!*t || t[0] == '#') {
			zc_free(t);
			continue;
		}
		zc_free(t);
		const char *colon = memchr(l.p, ':', l.n);
		if (!colon) {
			char *bad = zc_strndup(l.p, l.n);
			int rc = zc_fail(e, ZCOR_EINVAL, "front matter line '%s' is not 'key: value'",
					 ZC_Q(bad, 60));
			zc_free(bad);
			return rc;
		}
		size_t kn = (size_t)(colon - l.p);
		char **slot = NULL;
		if (kn == 4 && memcmp(l.p, "name", 4) == 0)
			slot = &f->name;
		else if (kn == 11 && memcmp(l.p, "description", 11) == 0)
			slot = &f->description;
		if (!slot)
			continue;
		if (*slot)
			return zc_fail(e, ZCOR_EINVAL, "front matter gives '%.*s' twice", (int)kn, l.p);
		*slot = scalar(colon + 1, l.n - kn - 1, &block);
		if (!*slot)
			return zc_fail(e, ZCOR_EINVAL, "front matter '%.*s': a quote is not closed", (int)kn,
				       l.p);
		cur = slot;
	}
	return zc_fail(e, ZCOR_EINVAL,
		       "front matter has no closing '---' line (it is: '---', name: …, description: …, "
		       "'---', then the text)");
}

int zc_skill_parse(const char *folder, const char *data, size_t len, char **name,
		   char **description, char **text, struct zc_err *e)
{
	*name = *description = *text = NULL;
	struct front f = {0};
	int rc = ZCOR_OK;
	if (len > ZC_SKILL_FILE_MAX) {
		rc = zc_fail(e, ZCOR_EINVAL, "SKILL.md is larger than %d bytes; shorten it",
			     ZC_SKILL_FILE_MAX);
		goto out;
	}
	if (!zc_utf8_valid(data, len) || memchr(data, '\0', len)) {
		rc = zc_fail(e, ZCOR_EINVAL, "SKILL.md is not UTF-8 text; save it as UTF-8");
		goto out;
	}
	const char *at = data, *end = data + len;
	if (len >= 3 && memcmp(at, "\xEF\xBB\xBF", 3) == 0) /* a byte order mark */
		at += 3;
	struct line l;
	if (!next_line(&at, end, &l) || !is_fence(&l)) {
		rc = zc_fail(e, ZCOR_EINVAL,
			     "SKILL.md does not begin with front matter: a line '---', then 'name: "
			     "<kebab-case>' and 'description: <when to use it>', then '---'");
		goto out;
	}
	if ((rc = front_matter(&at, end, &f, e)))
		goto out;
	if (!f.name || !*f.name) {
		rc = zc_fail(e, ZCOR_EINVAL, "front matter has no 'name'; add 'name: %s'",
			     ZC_Q(folder, 64));
		goto out;
	}
	if (!f.description || !*f.description) {
		rc = zc_fail(e, ZCOR_EINVAL,
			     "front matter has no 'description'; add one line saying when to use the "
			     "skill");
		goto out;
	}
	if (!zc_skill_name_ok(f.name)) {
		rc = zc_fail(e, ZCOR_EINVAL,
			     "name '%s' is not kebab-case (lowercase letters and digits in words joined by "
			     "single '-', at most %d characters)",
			     ZC_Q(f.name, 80), ZC_SKILL_NAME_MAX);
		goto out;
	}
	if (strcmp(f.name, folder) != 0) {
		rc = zc_fail(e, ZCOR_EINVAL,
			     "name '%s' differs from its folder '%s'; rename one so that they match",
			     ZC_Q(f.name, 80), ZC_Q(folder, 80));
		goto out;
	}
	if (zc_utf8_len(f.description) > ZC_SKILL_DESC_MAX) {
		rc = zc_fail(e, ZCOR_EINVAL, "description is longer than %d characters; shorten it",
			     ZC_SKILL_DESC_MAX);
		goto out;
	}
	while (at < end && (*at == '\n' || *at == '\r'))
		at++;
	*text = zc_strndup(at, (size_t)(end - at));
	*name = f.name, *description = f.description;
	f.name = f.description = NULL;
out:
	zc_free(f.name);
	zc_free(f.description);
	return rc;
}

/* ---- stamps ---------------------------------------------------------------- */

static void stamp_of(const struct stat *st, struct zc_skill_stamp *s)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	s->known = 1;
	s->dev = st->st_dev;
	s->ino = st->st_ino;
	s->size = st->st_size;
	s->mtime = st->st_mtim;
	/* file times come from a coarse clock: a change within the same tick
	 * keeps the stamp, so a stamp taken that close proves nothing */
	s->racy = now.tv_sec - st->st_mtim.tv_sec <= 1;
}

static int stamp_same(const struct zc_skill_stamp *a, const struct zc_skill_stamp *b)
{
	return a->known && b->known && !a->racy && a->dev == b->dev && a->ino == b->ino &&
	       a->size == b->size && a->mtime.tv_sec == b->mtime.tv_sec &&
	       a->mtime.tv_nsec == b->mtime.tv_nsec;
}

/* ---- one source ------------------------------------------------------------ */

static void entry_clear(struct zc_skill_entry *x)
{
	zc_free(x->folder);
	zc_free(x->name);
	zc_free(x->description);
	zc_free(x->text);
	zc_free(x->problem);
	zc_free(x->path);
	memset(x, 0, sizeof(*x));
}

static void source_clear(struct zc_skill_source *src)
{
	for (size_t i = 0; i < src->n; i++)
		entry_clear(&src->v[i]);
	zc_free(src->v);
	src->v = NULL;
	src->n = 0;
	src->listed = 0;
	memset(&src->id, 0, sizeof(src->id));
	zc_free(src->problem);
	src->problem = NULL;
}

static void entry_set(struct zc_skill_entry *x, const char *data, size_t len)
{
	struct zc_err e = {0};
	zc_free(x->name), zc_free(x->description), zc_free(x->text), zc_free(x->problem);
	x->name = x->description = x->text = x->problem = NULL;
	x->valid = !zc_skill_parse(x->folder, data, len, &x->name, &x->description, &x->text, &e);
	if (!x->valid)
		x->problem = zc_strdup(e.msg);
}

static void entry_problem(struct zc_skill_entry *x, const char *msg)
{
	zc_free(x->name), zc_free(x->description), zc_free(x->text), zc_free(x->problem);
	x->name = x->description = x->text = NULL;
	x->valid = 0;
	x->problem = zc_strdup(msg);
}

/* Brings one folder's entry up to date: stats its SKILL.md (no link
 * followed) and reads it only when its stamp changed. */
static void entry_refresh(int dirfd, struct zc_skill_entry *x)
{
	struct stat st;
	struct zc_err e = {0};
	if (fstatat(dirfd, x->folder, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
		memset(&x->file, 0, sizeof(x->file));
		entry_problem(x, "the skill folder is a symbolic link; skills are read only from real "
				 "folders below a skills directory");
		return;
	}
	int fd = zc_open_dir_at(dirfd, x->folder, &e);
	if (fd < 0) {
		memset(&x->file, 0, sizeof(x->file));
		entry_problem(x, e.msg);
		return;
	}
	struct zc_skill_stamp now = {0};
	if (fstatat(fd, "SKILL.md", &st, AT_SYMLINK_NOFOLLOW) != 0) {
		memset(&x->file, 0, sizeof(x->file));
		entry_problem(x, errno == ENOENT ? "the folder has no SKILL.md" : strerror(errno));
		close(fd);
		return;
	}
	stamp_of(&st, &now);
	if (stamp_same(&x->file, &now) && (x->valid || x->problem)) {
		x->file.racy = now.racy;
		close(fd);
		return;
	}
	x->file = now;
	char *data = NULL;
	size_t len = 0;
	/* one byte over the cap reads as "too large", not as a cut file */
	int rc = zc_read_file_at(fd, "SKILL.md", ZC_FS_NOFOLLOW, ZC_SKILL_FILE_MAX, &data, &len, &e);
	close(fd);
	if (rc) {
		if (S_ISREG(st.st_mode) && st.st_size > ZC_SKILL_FILE_MAX)
			zc_fail(&e, ZCOR_EINVAL, "SKILL.md is larger than %d bytes; shorten it",
				ZC_SKILL_FILE_MAX);
		else if (S_ISLNK(st.st_mode))
			zc_fail(&e, ZCOR_EINVAL,
				"SKILL.md is a symbolic link; a skill is read only from a regular file in "
				"its folder");
		entry_problem(x, e.msg);
	} else {
		entry_set(x, data, len);
	}
	zc_free(data);
}

static int by_folder(const void *a, const void *b)
{
	return strcmp(((const struct zc_skill_entry *)a)->folder,
		      ((const struct zc_skill_entry *)b)->folder);
}

/* Lists the directory again: entries for folders that stay are kept (and
 * refreshed by their stamps), new ones added, gone ones dropped. */
static void source_list(struct zc_skill_source *src, int dirfd)
{
	int dup_fd = dup(dirfd);
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	if (!d) {
		if (dup_fd >= 0)
			close(dup_fd);
		zc_free(src->problem);
		src->problem = zc_strdup(strerror(errno));
		return;
	}
	struct zc_skill_entry *v = NULL;
	size_t n = 0, cap = 0, more = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue; /* ".", "..", hidden folders */
		struct stat st;
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		if (!S_ISDIR(st.st_mode) && !S_ISLNK(st.st_mode))
			continue; /* a README beside the skills */
		if (n == ZC_SKILLS_DIR_MAX) {
			more++;
			continue;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 8;
			v = zc_realloc(v, cap * sizeof(*v));
		}
		struct zc_skill_entry *x = &v[n++];
		memset(x, 0, sizeof(*x));
		/* an entry of the last listing keeps its stamp and its text */
		for (size_t i = 0; i < src->n; i++)
			if (src->v[i].folder && strcmp(src->v[i].folder, de->d_name) == 0) {
				*x = src->v[i];
				memset(&src->v[i], 0, sizeof(src->v[i]));
				break;
			}
		if (!x->folder) {
			x->folder = zc_strdup(de->d_name);
			x->path = zc_path_join(src->dir, de->d_name);
			char *file = zc_path_join(x->path, "SKILL.md");
			zc_free(x->path);
			x->path = file;
		}
	}
	closedir(d);
	for (size_t i = 0; i < src->n; i++)
		entry_clear(&src->v[i]);
	zc_free(src->v);
	if (n)
		qsort(v, n, sizeof(*v), by_folder);
	src->v = v;
	src->n = n;
	zc_free(src->problem);
	src->problem = NULL;
	if (more) {
		struct zc_buf b = ZC_BUF_INIT;
		zc_buf_addf(&b, "more than %d skill folders; %zu of them were skipped (the first %d by "
				"the directory's order were read)",
			    ZC_SKILLS_DIR_MAX, more, ZC_SKILLS_DIR_MAX);
		src->problem = zc_buf_detach(&b);
	}
}

/* Brings a directory source up to date. The directory itself may be a
 * link (the operator's choice, like a dotfiles checkout); nothing below
 * it is followed. */
static void source_refresh(struct zc_skill_source *src)
{
	if (!src->dir) {
		source_clear(src);
		return;
	}
	int dirfd = open(src->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	if (dirfd < 0 || fstat(dirfd, &st) != 0) {
		int err = errno;
		if (dirfd >= 0)
			close(dirfd);
		source_clear(src);
		/* absent is the usual case: no skills there */
		if (err != ENOENT && err != ENOTDIR)
			src->problem = zc_strdup(strerror(err));
		return;
	}
	struct zc_skill_stamp now;
	stamp_of(&st, &now);
	now.size = 0; /* a directory's size says nothing more than its mtime */
	if (!src->listed || !stamp_same(&src->id, &now)) {
		source_list(src, dirfd);
		src->listed = 1;
	}
	src->id = now;
	for (size_t i = 0; i < src->n; i++)
		entry_refresh(dirfd, &src->v[i]);
	close(dirfd);
}

/* The built-ins, parsed once: they change only with the program. */
static void builtins_load(struct zc_skill_source *src)
{
	size_t n = 0;
	while (zc_builtin_skills[n].folder)
		n++;
	src->v = zc_calloc(n ? n : 1, sizeof(*src->v));
	src->n = n;
	for (size_t i = 0; i < n; i++) {
		struct zc_skill_entry *x = &src->v[i];
		x->folder = zc_strdup(zc_builtin_skills[i].folder);
		struct zc_buf b = ZC_BUF_INIT;
		zc_buf_addf(&b, "builtin:%s/SKILL.md", x->folder);
		x->path = zc_buf_detach(&b);
		entry_set(x, (const char *)zc_builtin_skills[i].bytes, zc_builtin_skills[i].len);
	}
	qsort(src->v, n, sizeof(*src->v), by_folder);
	src->listed = 1;
}

/* ---- the set in effect ------------------------------------------------------- */

void zc_skills_init(struct zc_skills *s, const char *mem_dir)
{
	memset(s, 0, sizeof(*s));
	char real[PATH_MAX];
	if (mem_dir && realpath(mem_dir, real))
		s->mem_dir = zc_strdup(real);
	else if (mem_dir && mem_dir[0] == '/')
		s->mem_dir = zc_strdup(mem_dir);
	else if (mem_dir) {
		char cwd[PATH_MAX];
		s->mem_dir = getcwd(cwd, sizeof(cwd)) ? zc_path_join(cwd, mem_dir) : NULL;
	}
	s->src[0].label = "builtin";
	s->src[1].label = "~/.dsh/skills";
	s->src[2].label = ".agents/skills";
	s->src[3].label = ".dsh/skills";
}

void zc_skills_release(struct zc_skills *s)
{
	if (!s)
		return;
	for (int i = 0; i < ZC_SKILL_SOURCES; i++) {
		source_clear(&s->src[i]);
		zc_free(s->src[i].dir);
	}
	zc_free(s->v);
	zc_free(s->mem_dir);
	zc_free(s->project_root);
	zc_free(s->home);
	memset(s, 0, sizeof(*s));
}

/* Points a source at dir (NULL: none), forgetting what it held when the
 * directory is another one. */
static void source_at(struct zc_skill_source *src, const char *dir)
{
	if ((!dir && !src->dir) || (dir && src->dir && strcmp(dir, src->dir) == 0))
		return;
	source_clear(src);
	zc_free(src->dir);
	src->dir = dir ? zc_strdup(dir) : NULL;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct zc_skill *)a)->name, ((const struct zc_skill *)b)->name);
}

static uint64_t fnv(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return (h ^ 0xff) * 1099511628211ull; /* a separator, so "ab"+"c" ≠ "a"+"bc" */
}

/* The set in effect: each source's valid skills over the earlier ones'. */
static void merge(struct zc_skills *s)
{
	size_t cap = 0;
	for (int i = 0; i < ZC_SKILL_SOURCES; i++)
		cap += s->src[i].n;
	zc_free(s->v);
	s->v = zc_calloc(cap ? cap : 1, sizeof(*s->v));
	s->n = 0;
	for (int i = 0; i < ZC_SKILL_SOURCES; i++) {
		const struct zc_skill_source *src = &s->src[i];
		for (size_t j = 0; j < src->n; j++) {
			const struct zc_skill_entry *x = &src->v[j];
			if (!x->valid)
				continue;
			struct zc_skill k = {x->name, x->description, x->text, x->path, src->label, NULL};
			size_t at = 0;
			while (at < s->n && strcmp(s->v[at].name, x->name) != 0)
				at++;
			if (at < s->n)
				k.overrides = s->v[at].source;
			else
				s->n++;
			s->v[at] = k;
		}
	}
	if (s->n)
		qsort(s->v, s->n, sizeof(*s->v), by_name);
	uint64_t h = 14695981039346656037ull;
	for (size_t i = 0; i < s->n; i++)
		h = fnv(fnv(h, s->v[i].name), s->v[i].description);
	s->key = h;
}

void zc_skills_refresh(struct zc_skills *s, const struct zc_config *cfg)
{
	if (!s->src[0].listed)
		builtins_load(&s->src[0]);
	/* the project root: the setting, else the memory directory's parent */
	char *root = NULL;
	if (cfg && cfg->skills_root[0]) {
		root = zc_strdup(cfg->skills_root);
	} else if (s->mem_dir) {
		root = zc_strdup(s->mem_dir);
		char *slash = strrchr(root, '/');
		if (slash == root)
			slash[1] = '\0';
		else if (slash)
			*slash = '\0';
	}
	if (root) {
		char *dsh = zc_path_join(root, ".dsh/skills"), *agents = zc_path_join(root, ".agents/skills");
		source_at(&s->src[3], dsh);
		source_at(&s->src[2], agents);
		zc_free(dsh);
		zc_free(agents);
	} else {
		source_at(&s->src[3], NULL);
		source_at(&s->src[2], NULL);
	}
	zc_free(s->project_root);
	s->project_root = root;
	const char *home = getenv("HOME");
	if (home && home[0] == '/') {
		char *dir = zc_path_join(home, ".dsh/skills");
		source_at(&s->src[1], dir);
		zc_free(dir);
	} else {
		source_at(&s->src[1], NULL);
	}
	zc_free(s->home);
	s->home = home ? zc_strdup(home) : NULL;
	for (int i = 1; i < ZC_SKILL_SOURCES; i++)
		source_refresh(&s->src[i]);
	merge(s);
	s->built = 1;
}

const struct zc_skill *zc_skills_find(const struct zc_skills *s, const char *name)
{
	for (size_t i = 0; name && i < s->n; i++)
		if (strcmp(s->v[i].name, name) == 0)
			return &s->v[i];
	return NULL;
}

uint64_t zc_skills_key(const struct zc_skills *s) { return s->key; }

void zc_skills_names(const struct zc_skills *s, struct zc_buf *out)
{
	for (size_t i = 0; i < s->n; i++)
		zc_buf_addf(out, "%s%s", i ? ", " : "", s->v[i].name);
	if (!s->n)
		zc_buf_adds(out, "none");
}

void zc_skills_catalog(const struct zc_skills *s, int english, struct zc_buf *out)
{
	for (size_t i = 0; i < s->n; i++)
		zc_buf_addf(out, "- %s%s%s\n", s->v[i].name, english ? ": " : "：",
			    s->v[i].description);
}

json_t *zc_skills_json(const struct zc_skills *s)
{
	json_t *a = json_array();
	for (size_t i = 0; i < s->n; i++) {
		json_t *o = json_pack("{s:s, s:s, s:s, s:s}", "name", s->v[i].name, "description",
				      s->v[i].description, "source", s->v[i].source, "path", s->v[i].path);
		if (s->v[i].overrides)
			json_object_set_new(o, "overrides", json_string(s->v[i].overrides));
		json_array_append_new(a, o);
	}
	return a;
}

json_t *zc_skills_problems(const struct zc_skills *s)
{
	json_t *out = json_array();
	for (int i = 0; i < ZC_SKILL_SOURCES; i++) {
		const struct zc_skill_source *src = &s->src[i];
		if (src->problem)
			json_array_append_new(
				out, json_pack("{s:s, s:s, s:s, s:s, s:s}", "code", "SKILL_INVALID",
					       "severity", "warning", "message", src->problem, "fix",
					       "fix or tidy the skills directory; the skills read from it "
					       "stay in use",
					       "path", src->dir ? src->dir : src->label));
		for (size_t j = 0; j < src->n; j++) {
			const struct zc_skill_entry *x = &src->v[j];
			if (x->valid || !x->problem)
				continue;
			json_array_append_new(
				out, json_pack("{s:s, s:s, s:s, s:s, s:s}", "code", "SKILL_INVALID",
					       "severity", "warning", "message", x->problem, "fix",
					       "fix the SKILL.md (front matter: ---, name: <its folder>, "
					       "description: <when to use it>, ---); until then the "
					       "skill is skipped",
					       "path", x->path));
		}
	}
	return out;
}

/* ---- the tool ---------------------------------------------------------------- */

int zc_skill_tool(const struct zc_tool_env *env, json_t *args, json_t **out, struct zc_err *e)
{
	*out = NULL;
	const char *name = json_string_value(json_object_get(args, "name"));
	if (!env->skills) /* a caller without a handle's skills: our own bug */
		return zc_fail(e, ZCOR_EINTERNAL, "the skills are not available to this caller");
	zc_skills_refresh(env->skills, &env->m->conf.cfg);
	const struct zc_skill *k = zc_skill_name_ok(name) ? zc_skills_find(env->skills, name) : NULL;
	if (!k) {
		struct zc_buf names = ZC_BUF_INIT;
		zc_skills_names(env->skills, &names);
		int rc = zc_fail(e, ZCOR_ENOTFOUND,
				 "no skill named '%s'; the skills available are: %s (call skill with one "
				 "of these names)",
				 ZC_Q(name ? name : "", 80), zc_buf_str(&names));
		zc_buf_release(&names);
		json_t *avail = json_array();
		for (size_t i = 0; i < env->skills->n; i++)
			json_array_append_new(avail, json_string(env->skills->v[i].name));
		zc_json_err_detail(e, json_pack("{s:s, s:o}", "reason", "unknown_skill", "available",
						avail));
		return rc;
	}
	/* the model (a group chat's, too) is told where the skill lives
	 * relative to its source — "~/.dsh/skills/x/SKILL.md" — never the
	 * host's absolute path (the home directory, the project's place) */
	char where[600];
	if (strcmp(k->source, "builtin") == 0) {
		snprintf(where, sizeof(where), "%s", k->path);
	} else {
		const char *tail = k->path + strlen(k->path);
		for (int slashes = 0; tail > k->path; tail--)
			if (tail[-1] == '/' && ++slashes == 2)
				break;
		snprintf(where, sizeof(where), "%s/%s", k->source, tail);
	}
	*out = json_pack("{s:s, s:s, s:s, s:s, s:s}", "name", k->name, "description", k->description,
			 "source", k->source, "path", where, "text", k->text);
	if (k->overrides)
		json_object_set_new(*out, "overrides", json_string(k->overrides));
	return ZCOR_OK;
}

void zc_skill_describe(const struct zc_tool_env *env, int english, struct zc_buf *out)
{
	zc_skills_refresh(env->skills, env->m ? &env->m->conf.cfg : NULL);
	if (!env->skills->n) {
		zc_buf_adds(out, english ? "\n\nNo skill is available now." : "\n\n当前没有可用的 skill。");
		return;
	}
	zc_buf_adds(out, english ? "\n\nAvailable skills (name: description):\n"
				 : "\n\n可用的 skill（名字：什么时候用）：\n");
	zc_skills_catalog(env->skills, english, out);
	if (out->len && out->p[out->len - 1] == '\n')
		out->p[--out->len] = '\0';
}
