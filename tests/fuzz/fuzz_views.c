/*
 * fuzz_views.c — a libFuzzer target for the memory views' parser
 * (src/memory/view.c) and `qq_memory write` / `append` (qqmem.c): the
 * input's first byte picks the view (INDEX.md, PEOPLE.md, COGNITION.md,
 * STICKERS.md, a conversation's MEMORY.md or an archive month); the rest
 * is up to MAX_STEPS chunks separated by two 0xFF bytes, each a byte
 * (bit 0: append, else write) and the text, as a model would send it as
 * `content`. The view is emptied first, so an input replays on its own.
 *
 * Every input is parsed directly with zc_view_parse (any bytes, invalid
 * UTF-8 included), then — as valid UTF-8, the only text JSON can carry —
 * written through the real tool on one memory directory (host plane,
 * force: true), which is started afresh every RESET_EVERY inputs so the
 * store stays small.
 *
 * Oracle, besides ASan/UBSan/LeakSanitizer:
 * - the parse is {entries: [{name: string, pos: its line}…], unparsed: [{text}…],
 *   duplicates: n ≥ 0}, and every entry renders as one line;
 * - a tool call answers a result or {"error": {code, message}}; a refused
 *   one changes nothing (the view reads the same before and after);
 * - a view is a fixed point of read → write: writing back the text just
 *   read leaves it as it was (views render deterministically, SPEC §3.2).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/utf8.h"
#include "fuzz.h"
#include "memory/view.h"

const char *fz_target = "fuzz_views";

#define RESET_EVERY 500
#define MAX_STEPS 4

static const char *const paths[] = {
	"INDEX.md",
	"PEOPLE.md",
	"COGNITION.md",
	"STICKERS.md",
	"conversations/group-1/MEMORY.md",
	"conversations/group-1/archive/2026-01.md",
};
#define NPATHS (sizeof(paths) / sizeof(paths[0]))

static zcor *z;
static char *dir;
static unsigned long runs;

static void close_dir(void)
{
	zcor_close(z);
	z = NULL;
	fz_rmtree(dir);
	free(dir);
	dir = NULL;
}

static void open_dir(void)
{
	dir = fz_mkdtemp("views");
	z = fz_open(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	open_dir();
	atexit(close_dir);
	return 0;
}

/* ---- the parser on its own ------------------------------------------------ */

static void check_parse(const struct zc_view *v, const char *text)
{
	json_t *doc = zc_view_parse(v, text);
	json_t *entries = json_object_get(doc, "entries"), *unparsed = json_object_get(doc, "unparsed");
	json_t *dup = json_object_get(doc, "duplicates");
	if (!json_is_object(doc) || !json_is_array(entries) || !json_is_array(unparsed) || !json_is_integer(dup) ||
	    json_integer_value(dup) < 0)
		fz_bug("%s: the parse is not {entries, unparsed, duplicates}", v->path);
	/* lines of text, for the entries' positions */
	long long lines = 1;
	for (const char *p = text; *p; p++)
		lines += *p == '\n';
	int utf8 = zc_utf8_valid(text, strlen(text));
	size_t i;
	json_t *x;
	json_array_foreach(entries, i, x) {
		json_t *pos = json_object_get(x, "pos");
		/* text that is not UTF-8 cannot become JSON strings: only the
		 * shape is checked then (the tool never gets such text) */
		if (utf8 && !json_is_string(json_object_get(x, "name")))
			fz_bug("%s: entry %zu has no name", v->path, i);
		if (!json_is_number(pos) || json_number_value(pos) < 1 || json_number_value(pos) > (double)lines)
			fz_bug("%s: entry %zu has no line number in 1..%lld", v->path, i, lines);
		char *line = zc_view_line(v, x);
		if (!line || strchr(line, '\n'))
			fz_bug("%s: entry %zu does not render as one line", v->path, i);
		free(line);
	}
	json_array_foreach(unparsed, i, x) {
		if (utf8 && !json_is_string(json_object_get(x, "text")))
			fz_bug("%s: unparsed line %zu has no text", v->path, i);
	}
	json_decref(doc);
}

/* ---- through the tool ----------------------------------------------------- */

/* Calls qq_memory with args; returns the code, *out the parsed answer. */
static int call(json_t *args, json_t **out)
{
	struct zcor_ctx ctx = {ZCOR_ACTOR_CLI, NULL};
	char *text = json_dumps(args, JSON_COMPACT), *res = NULL;
	int rc = zcor_tool_call(z, &ctx, "qq_memory", text, &res);
	if (rc != ZCOR_OK && res)
		fz_bug("qq_memory failed and still answered a result: %.300s", res);
	if (rc != ZCOR_OK)
		res = zc_strdup(zcor_errjson(z));
	*out = json_loads(res ? res : "", 0, NULL);
	if (!json_is_object(*out))
		fz_bug("qq_memory answered something that is not a JSON object: %.300s", res ? res : "(null)");
	if (rc != ZCOR_OK) {
		json_t *err = json_object_get(*out, "error");
		if (!json_is_string(json_object_get(err, "code")) || !json_is_string(json_object_get(err, "message")) ||
		    !*json_string_value(json_object_get(err, "message")))
			fz_bug("qq_memory failed without {error: {code, message}}: %.300s", res);
	}
	free(text);
	zcor_free(res);
	return rc;
}

/* The text of the view at path (caller frees). */
static char *read_view(const char *path)
{
	json_t *args = json_pack("{s:s, s:s}", "action", "read", "path", path), *out = NULL;
	if (call(args, &out) != ZCOR_OK)
		fz_bug("reading %s failed: %s", path, json_string_value(json_object_get(json_object_get(out, "error"), "message")));
	const char *t = json_string_value(json_object_get(out, "text"));
	if (!t)
		fz_bug("reading %s gave no text", path);
	char *copy = strdup(t);
	json_decref(out);
	json_decref(args);
	return copy;
}

static int write_view(const char *path, const char *action, const char *text, size_t len)
{
	json_t *args = json_pack("{s:s, s:s, s:s%, s:b}", "action", action, "path", path, "content", text, len,
				 "force", 1),
	       *out = NULL;
	if (!args)
		fz_bug("cannot pack the arguments");
	int rc = call(args, &out);
	json_decref(out);
	json_decref(args);
	return rc;
}

/* Writes back what path reads; returns what it reads then (caller frees). */
static char *write_back(const char *path, const char *text)
{
	if (write_view(path, "write", text, strlen(text)) != ZCOR_OK)
		fz_bug("writing back %s as read was refused:\n%s", path, text);
	return read_view(path);
}

static void check_tool(const char *path, int append, const char *text, size_t len)
{
	char *before = read_view(path);
	int rc = write_view(path, append ? "append" : "write", text, len);
	char *after = read_view(path);
	if (rc != ZCOR_OK && strcmp(before, after) != 0)
		fz_bug("a refused %s changed %s:\n--- before\n%s\n--- after\n%s", append ? "append" : "write", path,
		       before, after);
	if (rc == ZCOR_OK) {
		/* A view just written reads back as a fixed point: writing it
		 * again changes nothing. After an append it may hold what a
		 * write normalises (identical lines): from the next write on. */
		char *again = write_back(path, after);
		if (append) {
			free(after);
			after = again;
			again = write_back(path, after);
		}
		if (strcmp(after, again) != 0)
			fz_bug("%s is not a fixed point of read → write:\n--- read\n%s\n--- after writing it back\n%s",
			       path, after, again);
		free(again);
	}
	free(before);
	free(after);
}

/* bytes as text JSON can carry: invalid UTF-8 becomes U+FFFD, NUL stays */
static char *json_text(const uint8_t *p, size_t len, size_t *n)
{
	char *out = malloc(3 * len + 1);
	size_t o = 0;
	for (size_t i = 0; i < len;) {
		size_t k = p[i] ? zc_utf8_seq((const char *)p + i, len - i) : 1;
		if (k) {
			memcpy(out + o, p + i, k);
			o += k;
			i += k;
		} else {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		}
	}
	out[o] = '\0';
	*n = o;
	return out;
}

/* The chunks of an input are separated by two 0xFF bytes (never UTF-8). */
static const uint8_t *chunk_end(const uint8_t *p, const uint8_t *end)
{
	for (; p + 1 < end; p++)
		if (p[0] == 0xFF && p[1] == 0xFF)
			return p;
	return end;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (++runs % RESET_EVERY == 0) {
		close_dir();
		open_dir();
	}
	const char *path = paths[data[0] % NPATHS];
	struct zc_view v;
	struct zc_err e = {0};
	if (zc_view_path(path, strlen(path), "path", &v, &e) != ZCOR_OK)
		fz_bug("%s is not a view: %s", path, e.msg);
	/* from an empty view, so that an input replays alone (archives are
	 * filled by rollover only: nothing to empty) */
	if (v.kind != ZC_VIEW_ARCHIVE && write_view(path, "write", "", 0) != ZCOR_OK)
		fz_bug("cannot empty %s", path);
	const uint8_t *p = data + 1, *end = data + size;
	for (int step = 0; step < MAX_STEPS && p < end; step++) {
		const uint8_t *q = chunk_end(p, end);
		int append = p < q && (*p & 1);
		const uint8_t *t = p < q ? p + 1 : q;
		size_t len = (size_t)(q - t);
		char *text = malloc(len + 1);
		memcpy(text, t, len);
		text[len] = '\0';
		check_parse(&v, text);
		/* JSON carries only UTF-8 (and NUL as \u0000, which the tool refuses) */
		size_t n = 0;
		char *content = json_text(t, len, &n);
		check_tool(path, append, content, n);
		free(content);
		free(text);
		p = q + 2;
	}
	return 0;
}
