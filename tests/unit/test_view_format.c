/*
 * test_view_format.c — the text of the memory views as data (view_format.c:
 * zc_view_parse and zc_view_format, pure: no store, no files).
 *
 * Each case is two files side by side in tests/unit/data/views/: <case>.md,
 * the text as written to a view, and <case>.json, {view, canonical, doc}:
 * the view's path and the parse of the text (entries, unparsed lines with
 * their reasons, duplicates, titleReplaced). The test parses every .md and
 * compares with doc. Where the text is canonical — what rendering writes —
 * formatting doc's entries and kept lines gives the .md back, and each
 * entry is cited on the line the parse found it on; where it is not, a
 * <case>.out.md, if there, is what the format gives (the normalisation).
 * Positions compare as numbers (3 and 3.0 are the same line).
 *
 * Adding a case: write <case>.md and a .json with view and canonical; run
 * with ZCOR_VIEWS_WRITE=1 to fill doc from today's parse, then read it
 * line by line before committing it: the file is the expectation.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdlib.h>

#include "base/fs.h"
#include "harness.h"
#include "memory/view.h"

/* The directory of the cases: beside this file (CMake compiles it by its
 * absolute path), else below $ZCOR_FIXTURES/../unit. */
static char *cases_dir(void)
{
	static char dir[4096];
	const char *f = __FILE__, *slash = strrchr(f, '/');
	if (f[0] == '/' && slash)
		snprintf(dir, sizeof(dir), "%.*s/data/views", (int)(slash - f), f);
	else
		snprintf(dir, sizeof(dir), "%s/../unit/data/views",
			 getenv("ZCOR_FIXTURES") ? getenv("ZCOR_FIXTURES") : "tests/fixtures");
	return dir;
}

/* The case names (sorted), from the .json files. */
static json_t *case_names(void)
{
	json_t *names = json_array();
	struct dirent **list = NULL;
	int n = scandir(cases_dir(), &list, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		size_t len = strlen(list[i]->d_name);
		if (len > 5 && strcmp(list[i]->d_name + len - 5, ".json") == 0)
			json_array_append_new(names, json_stringn(list[i]->d_name, len - 5));
		free(list[i]);
	}
	free(list);
	return names;
}

/* The bytes of <case><ext> (caller frees), NULL if there is no such file. */
static char *case_file(const char *name, const char *ext)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/%s%s", cases_dir(), name, ext);
	char *data = NULL;
	size_t len = 0;
	struct zc_err e = {0};
	if (zc_read_file(path, 1 << 20, &data, &len, &e) != ZCOR_OK)
		return NULL;
	return data;
}

/* j with every real that is a whole number as an integer: the parse keeps
 * positions as reals, the .json writes them as 3. */
static json_t *whole(const json_t *j)
{
	if (json_is_real(j) && json_real_value(j) == (double)(json_int_t)json_real_value(j))
		return json_integer((json_int_t)json_real_value(j));
	if (json_is_object(j)) {
		json_t *o = json_object(), *v;
		const char *k;
		json_object_foreach((json_t *)j, k, v) json_object_set_new(o, k, whole(v));
		return o;
	}
	if (json_is_array(j)) {
		json_t *a = json_array(), *v;
		size_t i;
		json_array_foreach(j, i, v) json_array_append_new(a, whole(v));
		return a;
	}
	return json_incref((json_t *)j);
}

static void report_diff(const char *name, const char *what, const char *got, const char *want)
{
	fprintf(stderr, "%s: %s differs\n--- got\n%s\n--- expected\n%s\n---\n", name, what, got, want);
	t_failures++;
}

/* ZCOR_VIEWS_WRITE=1: fills the case's doc from today's parse. */
static void write_case(const char *name, json_t *spec, const json_t *doc)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/%s.json", cases_dir(), name);
	json_object_set_new(spec, "doc", whole(doc));
	CHECK(json_dump_file(spec, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER) == 0);
	fprintf(stderr, "wrote %s: read it before committing it\n", path);
}

/* The text of doc as the view renders it (INDEX.md: its text). */
static char *format_doc(const struct zc_view *v, const json_t *doc, json_t *refs)
{
	if (v->kind == ZC_VIEW_INDEX)
		return strdup(json_string_value(json_object_get(doc, "text")));
	return zc_view_format(v, json_object_get(doc, "entries"), json_object_get(doc, "unparsed"), refs,
			      NULL);
}

/* Canonical text: every entry is cited on the line it was parsed from. */
static void check_citations(const char *name, const json_t *doc, const json_t *refs)
{
	const json_t *entries = json_object_get(doc, "entries");
	CHECK_INT(json_array_size(refs), json_array_size(entries));
	size_t i;
	json_t *r;
	json_array_foreach(refs, i, r) {
		const json_t *x = json_array_get(entries, i);
		if (!json_equal(json_object_get(r, "name"), json_object_get(x, "name")) ||
		    json_integer_value(json_object_get(r, "line")) !=
			    (json_int_t)json_number_value(json_object_get(x, "pos"))) {
			fprintf(stderr, "%s: entry %zu '%s' is cited on line %lld, parsed on line %.0f\n",
				name, i, json_string_value(json_object_get(x, "name")),
				(long long)json_integer_value(json_object_get(r, "line")),
				json_number_value(json_object_get(x, "pos")));
			t_failures++;
		}
	}
}

/* One case; *kinds gets the bit of its view kind. */
static void run_case(const char *name, unsigned *kinds)
{
	json_error_t jerr;
	char *spec_text = case_file(name, ".json"), *md = case_file(name, ".md");
	json_t *spec = spec_text ? json_loads(spec_text, 0, &jerr) : NULL;
	json_t *doc = NULL, *got = NULL, *want = NULL, *refs = json_array();
	char *formatted = NULL, *out_md = NULL;
	struct zc_view v;
	struct zc_err e = {0};
	const char *path = json_string_value(json_object_get(spec, "view"));
	if (!spec || !md || !path || zc_view_path(path, strlen(path), "view", &v, &e) != ZCOR_OK) {
		fprintf(stderr, "%s: needs %s.md and %s.json {view, canonical, doc} (%s)\n", name, name,
			name, spec ? e.msg : jerr.text);
		t_failures++;
		goto out;
	}
	*kinds |= 1u << v.kind;
	doc = zc_view_parse(&v, md);
	if (getenv("ZCOR_VIEWS_WRITE")) {
		write_case(name, spec, doc);
		goto out;
	}
	got = whole(doc);
	want = whole(json_object_get(spec, "doc"));
	if (!json_equal(got, want)) {
		char *g = json_dumps(got, JSON_INDENT(2) | JSON_PRESERVE_ORDER),
		     *w = json_dumps(want, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		report_diff(name, "the parse", g, w);
		free(g);
		free(w);
	}
	formatted = format_doc(&v, doc, refs);
	if (json_is_true(json_object_get(spec, "canonical"))) {
		if (strcmp(formatted, md) != 0)
			report_diff(name, "the format of the parse (canonical text)", formatted, md);
		if (v.kind != ZC_VIEW_INDEX)
			check_citations(name, doc, refs);
	} else if ((out_md = case_file(name, ".out.md")) && strcmp(formatted, out_md) != 0) {
		report_diff(name, "the format of the parse (.out.md)", formatted, out_md);
	}
out:
	free(spec_text);
	free(md);
	free(formatted);
	free(out_md);
	json_decref(spec);
	json_decref(doc);
	json_decref(got);
	json_decref(want);
	json_decref(refs);
}

/* Every .md parses to its .json, and formats back where it is canonical;
 * the cases cover every kind of view. */
static void view_format_cases(void)
{
	json_t *names = case_names();
	unsigned kinds = 0;
	size_t i;
	json_t *n;
	CHECK(json_array_size(names) >= 15);
	json_array_foreach(names, i, n) run_case(json_string_value(n), &kinds);
	for (int k = ZC_VIEW_INDEX; k <= ZC_VIEW_ARCHIVE; k++)
		if (!(kinds & (1u << k))) {
			fprintf(stderr, "no case of view kind %d in %s\n", k, cases_dir());
			t_failures++;
		}
	json_decref(names);
}

/* The format of what a parse gives parses to the same entries: the layout
 * keeps every field, section and kept line (for each case, canonical or
 * not; positions and the reasons of kept lines aside). */
static json_t *without_pos(const json_t *doc)
{
	json_t *d = json_deep_copy(doc), *x;
	size_t i;
	json_array_foreach(json_object_get(d, "entries"), i, x) json_object_del(x, "pos");
	json_array_foreach(json_object_get(d, "unparsed"), i, x) {
		json_object_del(x, "pos");
		json_object_del(x, "why");
	}
	json_object_del(d, "duplicates");
	json_object_del(d, "titleReplaced");
	return d;
}

static void view_format_is_a_fixed_point(void)
{
	json_t *names = case_names(), *n;
	size_t i;
	json_array_foreach(names, i, n) {
		const char *name = json_string_value(n);
		char *spec_text = case_file(name, ".json"), *md = case_file(name, ".md");
		json_t *spec = spec_text ? json_loads(spec_text, 0, NULL) : NULL;
		const char *path = json_string_value(json_object_get(spec, "view"));
		struct zc_view v;
		struct zc_err e = {0};
		if (md && path && zc_view_path(path, strlen(path), "view", &v, &e) == ZCOR_OK) {
			json_t *doc = zc_view_parse(&v, md);
			char *text = format_doc(&v, doc, NULL);
			json_t *again = zc_view_parse(&v, text);
			json_t *a = without_pos(doc), *b = without_pos(again);
			if (!json_equal(a, b)) {
				char *g = json_dumps(b, JSON_INDENT(2) | JSON_PRESERVE_ORDER),
				     *w = json_dumps(a, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
				report_diff(name, "the parse of the formatted text", g, w);
				free(g);
				free(w);
			}
			json_decref(a);
			json_decref(b);
			json_decref(again);
			json_decref(doc);
			free(text);
		}
		json_decref(spec);
		free(spec_text);
		free(md);
	}
	json_decref(names);
}

const struct t_case t_cases[] = {
	{"view_format_cases", view_format_cases},
	{"view_format_is_a_fixed_point", view_format_is_a_fixed_point},
	{0},
};
