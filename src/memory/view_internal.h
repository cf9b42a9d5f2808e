/*
 * view_internal.h — what only the view files share (view_*.c).
 *
 * Memory layer, private to the views. view.h is the interface every
 * other file uses; this header holds the steps the view files call in
 * each other and nothing else includes it (but test_view_format.c, the
 * unit test of the pure part). The files and their concerns:
 *
 *   view_path.c      paths, names, confinement: which views exist, which
 *                    file names and paths an entry may hold
 *   view_format.c    the text of a view: an entry's line, the layout of
 *                    the file, parsing text back (pure: no I/O, no SQLite)
 *   view_store.c     the rows behind a view: loading, rendering from the
 *                    store, finding and creating rows, versions, listing
 *   view_check.c     the fields of an upsert, checked and normalised
 *   view_edit.c      changing a view: upsert, remove, replace, append
 *   view_rollover.c  Q-ROLL and the byte limits
 *   view_cite.c      the citations (view_lines) of every view
 */
#ifndef ZC_VIEW_INTERNAL_H
#define ZC_VIEW_INTERNAL_H

#include <jansson.h>

#include "base/buf.h"
#include "memory/view.h"

#define ZC_VIEW_BAR "\xef\xbd\x9c" /* ｜ U+FF5C, the field separator */

/* ---- view_path.c ---- */

/* Does segment s look like an image path of a sticker or the media cache? */
int zc_view_is_image_path(const char *s);

/* ---- view_format.c ---- */

/* The standard sections of a view kind, in their order (NULL-terminated;
 * NULL for INDEX.md). */
const char *const *zc_view_sections(enum zc_view_kind k);
/* The section an entry is listed under. */
const char *zc_view_entry_section(const struct zc_view *v, const json_t *x);
/* YYYY-MM-DD by its shape (not whether the day exists). */
int zc_view_is_date(const char *s);
/* A non-empty string of ASCII digits. */
int zc_view_all_digits(const char *s);
/* "a/b、c，d,e" → ["a", "b", "c", "d", "e"] (trimmed, empty items dropped). */
json_t *zc_view_split_list(const char *s);
/* Parses the part of an entry line after "- " under section (may be
 * NULL); NULL if it is not an entry. The caller decrefs. */
json_t *zc_view_parse_entry(const struct zc_view *v, const char *section, const char *line);
/* The identity of an entry within its view: the QQ number of a person,
 * else the normalised name. Caller frees. */
char *zc_view_entry_key(const struct zc_view *v, const json_t *x);

/* ---- view_store.c ---- */

/* The entry (upsert fields, plus pos, id, seq) of a node / person row. */
json_t *zc_view_entry_of_node(const struct zc_view *v, const json_t *n, long long seq);
json_t *zc_view_entry_of_person(const json_t *p, long long seq);
/* The entries of v in order (each with seq, pos, id / personId); *out is
 * set (an array, the caller decrefs) even on an error. */
int zc_view_load_entries(struct zc_mem *m, const struct zc_view *v, json_t **out, struct zc_err *e);
/* INDEX.md's text (caller frees; "" when there is none) and the seq of its
 * node (0 when there is none; seq may be NULL). */
int zc_view_index_text(struct zc_mem *m, char **text, long long *seq, struct zc_err *e);
/* The live node of v named name (normalised), or NULL (then e->code says
 * whether that is an error: the caller clears e first). */
json_t *zc_view_find_node(struct zc_op *op, const struct zc_view *v, const char *name,
			  struct zc_err *e);
/* The person of entry x: by QQ number, else by name; NULL as above. */
json_t *zc_view_find_person(struct zc_op *op, const json_t *x, struct zc_err *e);
/* The largest position used in v (entries and kept lines); 0 if empty. */
double zc_view_max_pos(struct zc_op *op, const struct zc_view *v, struct zc_err *e);
/* A new node of v (id, scope, kind, tier, createdAt), not yet saved. */
json_t *zc_view_new_node(struct zc_op *op, const struct zc_view *v, struct zc_err *e);

#endif
