/*
 * sticker.h — the one rule for what reaches the sticker catalog (Q-STK;
 * issue 12: nothing outside the memory directory).
 *
 * Memory layer. A sticker's name becomes a file name under stickers/, and
 * a catalog path (a STICKERS.md entry's image) is opened, linked and
 * unlinked. Every entry that brings a name or a path in — qq_memory
 * upsert, write and append of STICKERS.md, qq_save_sticker,
 * qq_rename_sticker, `zcor import qq-memory`, `zcor migrate cognition` —
 * and every reader of a stored one — the view renderer, rename, the reply
 * check, the recall header, the served sticker files, the doctor — asks
 * these functions; nothing else decides what a sticker path may be.
 */
#ifndef ZC_STICKER_H
#define ZC_STICKER_H

#include <stddef.h>

#include "base/err.h"

#define ZC_STICKER_NAME_CHARS 64  /* characters of a sticker name */
#define ZC_STICKER_NAME_BYTES 200 /* and bytes: "<name>.jpeg" stays under NAME_MAX */

/*
 * A sticker name: valid UTF-8 of 1 to 64 characters and at most 200
 * bytes, without / \ : * ? " < > | [ ] ｜ % or NUL, without control,
 * format (bidi marks, zero-width characters other than the joiners
 * emoji need) or space characters, without a character that NFKC folds
 * to or that looks like a slash, a backslash or a dot (／ ＼ ． ․ ‥ … ﹒
 * ∕ ⁄ ⧸ …), without "..", not starting with '.' or '-' and not ending
 * with '.'. On failure: ZCOR_EINVAL, the message naming field, the name,
 * what is wrong and an example.
 */
int zc_sticker_name_check(const char *field, const char *name, struct zc_err *e);
/* A file name under stickers/: "<sticker name><ext>", ext one of .gif
 * .png .jpg .jpeg .webp .bmp (any case). */
int zc_sticker_file_check(const char *field, const char *file, struct zc_err *e);
/* A catalog path: exactly "stickers/<file>" with a file as above — the
 * confinement check of every path that reaches the catalog. */
int zc_sticker_path_check(const char *field, const char *path, struct zc_err *e);
/* What is wrong, in a few words ("it has '..'"), or NULL when it passes:
 * for a report that lists what it left out and why. */
const char *zc_sticker_name_problem(const char *name);
const char *zc_sticker_file_problem(const char *file);
const char *zc_sticker_path_problem(const char *path);
/* The same as tests for readers of stored data: 1 when it passes. */
int zc_sticker_path_ok(const char *path);
int zc_sticker_file_ok(const char *file);

#endif
