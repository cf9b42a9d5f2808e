/*
 * view.h — seed 003's memory files as views of the store (SPEC §3.2).
 *
 * Memory layer. INDEX.md, PEOPLE.md, COGNITION.md, STICKERS.md and each
 * conversation's MEMORY.md and archive/YYYY-MM.md are not files: they are
 * rendered from nodes and people, deterministically, one line per entry,
 * and a text written to them is parsed back into entries. What does not
 * parse is kept verbatim (view_unparsed) and reported, never dropped.
 * The qq_memory operation (qqmem.c), rollover (Q-ROLL), import/export and
 * the doctor all go through these functions.
 */
#ifndef ZC_VIEW_H
#define ZC_VIEW_H

#include <jansson.h>

#include "base/buf.h"
#include "memory/memory.h"

enum zc_view_kind {
	ZC_VIEW_INDEX,     /* INDEX.md: one document node, free text */
	ZC_VIEW_PEOPLE,    /* PEOPLE.md: the people table */
	ZC_VIEW_COGNITION, /* COGNITION.md: kind 'cognition', sections by type */
	ZC_VIEW_STICKERS,  /* STICKERS.md: kind 'sticker', 已收藏 / 未收藏 */
	ZC_VIEW_MEMORY,    /* conversations/<slug>/MEMORY.md: hot entries */
	ZC_VIEW_ARCHIVE,   /* conversations/<slug>/archive/YYYY-MM.md: cold ones */
};

#define ZC_VIEW_PATH_MAX 200
#define ZC_VIEW_VERSIONS 20      /* earlier versions kept per view */
#define ZC_FIELD_MAX 2000        /* characters of one entry field */

struct zc_view {
	enum zc_view_kind kind;
	char path[ZC_VIEW_PATH_MAX]; /* canonical path */
	char conv[96];               /* conversation key (MEMORY, ARCHIVE) */
	char month[8];               /* YYYY-MM (ARCHIVE) */
};

/* Parses a view path, confined to the known roots: "..", absolute paths,
 * backslashes, NUL, unknown roots and over-long names are errors naming
 * `field`. */
int zc_view_path(const char *path, size_t len, const char *field, struct zc_view *v,
		 struct zc_err *e);
/* The view of a conversation's MEMORY.md / archive month. */
void zc_view_memory(struct zc_view *v, const char *conv);
void zc_view_archive(struct zc_view *v, const char *conv, const char *month);

/*
 * Renders a view. *text is the Markdown (caller frees); if entries is not
 * NULL, *entries is an array of {name, line, id | personId} for each
 * entry, and *unparsed an array of {line, text} (either may be NULL).
 */
int zc_view_render(struct zc_mem *m, const struct zc_view *v, char **text, json_t **entries,
		   json_t **unparsed, struct zc_err *e);

/*
 * Parses view text into {entries: [entry…], unparsed: [{section, text,
 * pos, why}…], duplicates: n}, normalised as seed 003 says: duplicate
 * headings merged, identical lines removed (duplicates counts both), the
 * view's own title line ("# COGNITION.md …", the first line) left to the
 * renderer. Every other line is an entry or kept verbatim in unparsed
 * with the reason — another "# …" line, a line that is no entry, and an
 * earlier line with the name of a later one (the later is the entry).
 * An entry is an object of the upsert fields (name, meaning, usage, type,
 * variants, image, scene, section, date, qq, aliases, pinned, confidence,
 * expires, stale, affinity) plus "pos", its line number in text.
 * text is UTF-8 (the callers check: an imported file that is not is left
 * out); a field or line with invalid bytes would not survive as JSON.
 */
json_t *zc_view_parse(const struct zc_view *v, const char *text);

/*
 * The text of view v with these entries and kept lines (pure: what
 * zc_view_render writes once it has loaded the rows; INDEX.md is free
 * text and is not formatted). Lines go by "pos" (ties as given), under
 * their section: an entry's by its kind, a kept line's "section", none
 * (under the title) when it has none. If refs / kept are not NULL, each
 * entry's {name, line, seq?, id?, personId?, date?} / each kept line's
 * {line, text, useq?} is appended. Caller frees the text.
 */
char *zc_view_format(const struct zc_view *v, const json_t *entries, const json_t *unparsed,
		     json_t *refs, json_t *kept);

/* The line of one entry as rendered (no newline; caller frees). */
char *zc_view_line(const struct zc_view *v, const json_t *entry);

/* Q-STK's file names: a name under stickers/ or media/ has no directory
 * part, is not hidden and ends in an image extension (gif, png, jpg,
 * jpeg, webp, bmp). zc_media_file: the <file> of "media/<file>" (or the
 * seed's ".qq-media/<file>"), else NULL. */
int zc_image_name_ok(const char *file);
const char *zc_media_file(const char *path);
/* Does s hold a file path (a media or sticker directory, or a/b.gif)? */
int zc_has_file_path(const char *s);

/* Number of entries + kept unparsed lines of a view. */
int zc_view_count(struct zc_mem *m, const struct zc_view *v, long long *n, struct zc_err *e);

/*
 * Checks the fields of an upsert for view v and returns the entry
 * (normalised: variants/aliases as arrays, one-line fields). Errors name
 * the field and say what to do. Enforces the hard rules: no file path in
 * COGNITION.md, no media/ path in STICKERS.md.
 */
int zc_view_entry_check(struct zc_mem *m, const struct zc_view *v, const json_t *fields,
			json_t **entry, struct zc_err *e);

/* The hard rules: no file path in COGNITION.md, no media path in
 * STICKERS.md — for a line of text, for an entry, and for a parsed
 * document of a write / append (an error naming the entry or line). */
int zc_view_text_breaks_rule(const struct zc_view *v, const char *text);
int zc_view_entry_breaks_rule(const struct zc_view *v, const json_t *entry);
int zc_view_doc_check(const struct zc_view *v, const json_t *doc, struct zc_err *e);
/* Confinement (sticker.h): a STICKERS.md entry's name is a sticker name
 * and its image, if any, a stickers/ path. Every other view: ZCOR_OK.
 * zc_view_doc_check applies it to each entry of a write / append. */
int zc_view_entry_confined(const struct zc_view *v, const json_t *entry, struct zc_err *e);

/* Upserts one entry (by name; same name -> replaced in place, fields not
 * given keep their value). *created says which. */
int zc_view_upsert(struct zc_op *op, const struct zc_view *v, const json_t *entry, int *created,
		   struct zc_err *e);
/* Removes the entry `name`, or the line `line` (1-based, as rendered). */
int zc_view_remove(struct zc_op *op, const struct zc_view *v, const char *name, long long line,
		   struct zc_err *e);
/* Replaces the whole view by the parsed document (see zc_view_parse). */
int zc_view_replace(struct zc_op *op, const struct zc_view *v, const json_t *doc,
		    struct zc_err *e);
/* Appends parsed entries (upsert by name) and unparsed lines at the end. */
int zc_view_append(struct zc_op *op, const struct zc_view *v, const json_t *doc,
		   struct zc_err *e);

/* Saves the current rendering as a version (keeps the last 20). */
int zc_view_save_version(struct zc_op *op, const struct zc_view *v, struct zc_err *e);
/* Recomputes view_lines (the citation of each entry) for a view. */
int zc_view_index_lines(struct zc_mem *m, const struct zc_view *v, struct zc_err *e);

/* Recomputes the citations of every view a change marked stale (the
 * view_dirty triggers); run by each operation before it commits. The
 * paths are appended to changed (may be NULL). */
int zc_view_refresh_dirty(struct zc_mem *m, json_t *changed, struct zc_err *e);

/* Inside the caller's transaction: recomputes the citations of every
 * view (zcor reindex, zcor doctor --rebuild); *views = how many. */
int zc_view_reindex_all(struct zc_mem *m, long long *views, struct zc_err *e);

/* MEMORY.md size above which rollover starts (memoryFileMaxBytes ×
 * memoryArchiveRatio). */
long zc_view_rollover_threshold(struct zc_mem *m);

/* Byte limit of a view under the current config. */
long zc_view_limit(struct zc_mem *m, const struct zc_view *v);

/*
 * Q-ROLL: if the conversation's MEMORY.md is over memoryFileMaxBytes ×
 * memoryArchiveRatio, moves the least active non-pinned entries to
 * archive/<this month>.md until it is not. Runs in a savepoint: a failed
 * move leaves everything as it was and adds a warning; nothing movable
 * adds a warning. *moved = entries moved.
 */
int zc_view_rollover(struct zc_op *op, const char *conv, long long *moved, json_t *warnings,
		     struct zc_err *e);

/* Is entry x (parsed from a MEMORY.md text) already in the archive of
 * mv's conversation, the same line under the same section? (An import of
 * a directory whose MEMORY.md still holds what rollover moved.) */
int zc_view_archived_same(struct zc_mem *m, const struct zc_view *mv, const json_t *x, int *same,
			  struct zc_err *e);

/* Calls fn for every view visible to op->ctx: the global ones, then each
 * conversation's MEMORY.md and archive months; stops at an error. */
typedef int (*zc_view_fn)(struct zc_op *op, const struct zc_view *v, void *ud, struct zc_err *e);
int zc_view_each(struct zc_op *op, zc_view_fn fn, void *ud, struct zc_err *e);
/* Every view visible to op->ctx: [{path, kind, conversation?, entries, bytes}]. */
int zc_view_list(struct zc_op *op, json_t **out, struct zc_err *e);

#endif
