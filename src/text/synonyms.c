/*
 * synonyms.c — synonym groups from synonyms.json (see synonyms.h).
 * Text layer: knows files and words, nothing of memories or the store.
 */
#include "text/synonyms.h"

#include <errno.h>
#include <string.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/fs.h"
#include "base/json.h"
#include "text/norm.h"

extern const unsigned char zc_builtin_synonyms[];
extern const size_t zc_builtin_synonyms_len;

void zc_syn_init(struct zc_syn *s, const char *path)
{
	memset(s, 0, sizeof(*s));
	s->path = zc_strdup(path);
	zc_watch_init(&s->file, path, "synonyms.json", ZC_SYN_MAX_BYTES, 0);
	s->groups = json_array();
	s->index = json_object();
	s->classes = json_array();
}

void zc_syn_release(struct zc_syn *s)
{
	if (!s)
		return;
	zc_free(s->path);
	zc_watch_release(&s->file);
	json_decref(s->groups);
	json_decref(s->index);
	json_decref(s->classes);
	memset(s, 0, sizeof(*s));
}

const char *zc_syn_warning(const struct zc_syn *s) { return s->warning; }

size_t zc_syn_count(const struct zc_syn *s) { return json_array_size(s->groups); }

int zc_syn_check(const json_t *doc, struct zc_err *e)
{
	if (!json_is_object(doc))
		return zc_fail(e, ZCOR_EINVAL, "the top level must be an object with \"groups\"");
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)doc, k, v) {
		if (strcmp(k, "version") && strcmp(k, "groups"))
			return zc_fail(e, ZCOR_EINVAL, "unknown key '%s'; only \"version\" and \"groups\"", k);
	}
	json_t *ver = json_object_get(doc, "version");
	if (ver && !(json_is_integer(ver) && json_integer_value(ver) == 1))
		return zc_fail(e, ZCOR_EINVAL, "'version' must be 1");
	json_t *groups = json_object_get(doc, "groups");
	if (!json_is_array(groups))
		return zc_fail(e, ZCOR_EINVAL, "'groups' must be an array of arrays of words");
	size_t i, j;
	json_t *g, *t;
	json_array_foreach(groups, i, g) {
		if (!json_is_array(g) || json_array_size(g) < 2)
			return zc_fail(e, ZCOR_EINVAL, "groups[%zu] must be an array of at least 2 words", i);
		json_array_foreach(g, j, t) {
			if (!json_is_string(t))
				return zc_fail(e, ZCOR_EINVAL, "groups[%zu][%zu] must be a string", i, j);
			const char *w = json_string_value(t);
			size_t n = zc_utf8_len(w);
			if (n == 0 || n > ZC_SYN_MAX_TERM)
				return zc_fail(e, ZCOR_EINVAL,
					       "groups[%zu][%zu] must have 1 to %d characters", i, j,
					       ZC_SYN_MAX_TERM);
		}
	}
	return ZCOR_OK;
}

/* ---- classes: union-find over normalised terms ----------------------- */

static size_t find(size_t *parent, size_t x)
{
	while (parent[x] != x) {
		parent[x] = parent[parent[x]];
		x = parent[x];
	}
	return x;
}

static void build(struct zc_syn *s, json_t *groups)
{
	json_t *ids = json_object(); /* norm term -> term number */
	json_t *terms = json_array();
	size_t cap = 64, i, j;
	size_t *parent = zc_malloc(cap * sizeof(size_t));
	json_t *g, *t;
	json_array_foreach(groups, i, g) {
		size_t first = (size_t)-1;
		json_array_foreach(g, j, t) {
			char *n = zc_norm(json_string_value(t));
			json_t *id = json_object_get(ids, n);
			size_t x;
			if (id) {
				x = (size_t)json_integer_value(id);
			} else {
				x = json_array_size(terms);
				json_object_set_new(ids, n, json_integer((json_int_t)x));
				json_array_append_new(terms, json_string(n));
				if (x >= cap) {
					cap *= 2;
					parent = zc_realloc(parent, cap * sizeof(size_t));
				}
				parent[x] = x;
			}
			zc_free(n);
			if (first == (size_t)-1)
				first = x;
			else
				parent[find(parent, x)] = find(parent, first);
		}
	}
	json_t *index = json_object(), *classes = json_array(), *root_class = json_object();
	size_t nterms = json_array_size(terms);
	for (size_t x = 0; x < nterms; x++) {
		char key[32];
		snprintf(key, sizeof(key), "%zu", find(parent, x));
		json_t *c = json_object_get(root_class, key);
		if (!c) {
			c = json_integer((json_int_t)json_array_size(classes));
			json_object_set_new(root_class, key, c);
			json_array_append_new(classes, json_array());
		}
		json_int_t cn = json_integer_value(c);
		json_t *term = json_array_get(terms, x);
		json_array_append(json_array_get(classes, (size_t)cn), term);
		json_object_set_new(index, json_string_value(term), json_integer(cn));
	}
	zc_free(parent);
	json_decref(ids);
	json_decref(terms);
	json_decref(root_class);
	json_decref(s->groups);
	json_decref(s->index);
	json_decref(s->classes);
	s->groups = json_incref(groups);
	s->index = index;
	s->classes = classes;
}

/* ---- the file ------------------------------------------------------- */

static char *render(const json_t *groups)
{
	struct zc_buf b = ZC_BUF_INIT;
	zc_buf_adds(&b, "{\n  \"version\": 1,\n  \"groups\": [\n");
	size_t i;
	json_t *g;
	json_array_foreach(groups, i, g) {
		char *line = json_dumps(g, JSON_COMPACT);
		zc_buf_addf(&b, "    %s%s\n", line, i + 1 < json_array_size(groups) ? "," : "");
		zc_free(line);
	}
	zc_buf_adds(&b, "  ]\n}\n");
	return zc_buf_detach(&b);
}

static int create_default(struct zc_syn *s, struct zc_err *e)
{
	return zc_write_file_atomic(s->path, zc_builtin_synonyms, zc_builtin_synonyms_len, e);
}

static int check_doc(void *ud, const json_t *doc, struct zc_err *e)
{
	(void)ud;
	return zc_syn_check(doc, e);
}

int zc_syn_refresh(struct zc_syn *s, struct zc_err *e)
{
	json_t *doc = NULL;
	struct zc_err pe = {0};
	enum zc_watch_state st = zc_watch_poll(&s->file, check_doc, NULL, &doc, &pe);
	if (st == ZC_WATCH_ERROR)
		return zc_fail(e, pe.code, "%s", pe.msg);
	if (st == ZC_WATCH_MISSING || st == ZC_WATCH_REMOVED) {
		int rc = create_default(s, e);
		if (rc)
			return rc;
		st = zc_watch_poll(&s->file, check_doc, NULL, &doc, &pe);
		if (st == ZC_WATCH_ERROR || st == ZC_WATCH_MISSING || st == ZC_WATCH_REMOVED)
			return zc_fail(e, ZCOR_EIO, "cannot read '%s': %s", s->path, strerror(errno));
	}
	if (st == ZC_WATCH_BAD) {
		char q[481]; /* with the rest of the sentence, fits s->warning */
		snprintf(s->warning, sizeof(s->warning),
			 "synonyms.json is malformed (%s); the last good groups stay in use until it is fixed",
			 zc_utf8_quote(q, sizeof(q), pe.msg, sizeof(q)));
	} else if (st == ZC_WATCH_LOADED) {
		s->warning[0] = '\0';
		build(s, json_object_get(doc, "groups"));
	}
	json_decref(doc);
	return ZCOR_OK;
}

void zc_syn_expand(const struct zc_syn *s, const char *w, json_t *set)
{
	json_object_set_new(set, w, json_true());
	json_t *c = json_object_get(s->index, w);
	if (!c)
		return;
	size_t i;
	json_t *t;
	json_array_foreach(json_array_get(s->classes, (size_t)json_integer_value(c)), i, t)
		json_object_set_new(set, json_string_value(t), json_true());
}

static int save_groups(struct zc_syn *s, json_t *groups, struct zc_err *e);

int zc_syn_add(struct zc_syn *s, const json_t *terms, int *changed, json_t **class_out,
	       struct zc_err *e)
{
	*changed = 0;
	*class_out = NULL;
	int rc = zc_syn_refresh(s, e);
	if (rc)
		return rc;
	if (s->warning[0])
		return zc_fail(e, ZCOR_ECONFLICT, "%s; fix synonyms.json by hand before adding words",
			       s->warning);
	/* dedupe by normalised form, keep the caller's spelling */
	json_t *seen = json_object(), *group = json_array();
	size_t i;
	json_t *t;
	long cls = -2;
	int same = 1;
	json_array_foreach(terms, i, t) {
		char *n = zc_norm(json_string_value(t));
		if (!json_object_get(seen, n)) {
			json_object_set_new(seen, n, json_true());
			json_array_append(group, t);
			json_t *c = json_object_get(s->index, n);
			long cn = c ? (long)json_integer_value(c) : -1;
			if (cn < 0 || (cls != -2 && cn != cls))
				same = 0;
			cls = cn;
		}
		zc_free(n);
	}
	json_decref(seen);
	if (json_array_size(group) < 2) {
		json_decref(group);
		return zc_fail(e, ZCOR_EINVAL,
			       "argument 'terms': needs at least 2 different words after normalisation");
	}
	if (!same) {
		json_t *groups = json_copy(s->groups);
		json_array_append_new(groups, group);
		group = NULL;
		rc = save_groups(s, groups, e);
		if (!rc)
			*changed = 1;
		json_decref(groups);
		if (rc)
			return rc;
	}
	json_decref(group);
	char *n = zc_norm(json_string_value(json_array_get(terms, 0)));
	json_t *set = json_object();
	zc_syn_expand(s, n, set);
	zc_free(n);
	json_t *cls_arr = json_array();
	const char *k;
	json_t *v;
	json_object_foreach(set, k, v) json_array_append_new(cls_arr, json_string(k));
	json_decref(set);
	*class_out = cls_arr;
	return ZCOR_OK;
}

/* Writes groups as the file's new content and uses them. */
static int save_groups(struct zc_syn *s, json_t *groups, struct zc_err *e)
{
	char *text = render(groups);
	int rc = zc_watch_write(&s->file, text, strlen(text), e); /* our own write is no hand edit */
	zc_free(text);
	if (!rc)
		build(s, groups);
	return rc;
}

int zc_syn_set_group(struct zc_syn *s, size_t index, const json_t *terms, const json_t *expected,
		     json_t **before, struct zc_err *e)
{
	*before = NULL;
	int rc = zc_syn_refresh(s, e);
	if (rc)
		return rc;
	if (s->warning[0])
		return zc_fail(e, ZCOR_ECONFLICT, "%s; fix synonyms.json by hand before changing groups",
			       s->warning);
	json_t *now = json_array_get(s->groups, index);
	if (expected && !json_equal(now, (json_t *)expected)) {
		zc_fail(e, ZCOR_ECONFLICT,
			"synonym group %zu is no longer the one expected (changed, moved or removed "
			"since it was read); nothing was changed: list the groups again and retry",
			index);
		zc_json_err_detail(e, json_pack("{s:s, s:O}", "reason", "group_changed", "current",
						now ? now : json_null()));
		return ZCOR_ECONFLICT;
	}
	if (!now)
		return zc_fail(e, ZCOR_ENOTFOUND, "no synonym group %zu; there are %zu groups", index,
			       json_array_size(s->groups));
	json_t *groups = json_copy(s->groups);
	*before = json_incref(json_array_get(groups, index));
	if (terms) {
		json_t *doc = json_pack("{s:[O]}", "groups", terms);
		rc = zc_syn_check(doc, e);
		json_decref(doc);
		if (rc) {
			zc_err_prefix(e, "argument 'terms'");
		} else {
			json_array_set(groups, index, (json_t *)terms);
		}
	} else {
		json_array_remove(groups, index);
	}
	if (!rc)
		rc = save_groups(s, groups, e);
	json_decref(groups);
	if (rc) {
		json_decref(*before);
		*before = NULL;
	}
	return rc;
}
