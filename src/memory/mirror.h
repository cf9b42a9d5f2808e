/*
 * mirror.h — mirror/: the store written out in the seed-003 layout, kept
 * current, for people who like to cat files (config "mirror").
 *
 * Memory layer. Derived and read-only: nothing is read back from it, and
 * writing it is never an error of the change that caused it (best
 * effort, after the commit). Complete, it holds every view (INDEX.md,
 * PEOPLE.md, COGNITION.md, STICKERS.md, each conversation's MEMORY.md and
 * archive/YYYY-MM.md), each conversation's log/YYYY-MM-DD.jsonl and
 * digest.json, as `zcor export qq-memory` writes them (STICKERS.md keeps
 * its stickers/ paths; sticker files stay in stickers/).
 *
 * mirror/.complete says so: written after a full rewrite; removed when a
 * change commits while mirroring is off, or when a mirror write fails. A
 * change that finds it missing (mirroring just switched on, or a first
 * run) rewrites everything; otherwise only what the change touched.
 */
#ifndef ZC_MIRROR_H
#define ZC_MIRROR_H

#include <jansson.h>
#include <stdint.h>

#include "memory/memory.h"

/* After an operation committed (the runner's ZC_HOOK_COMMITTED, wired
 * by handle.c): what op says it changed — everything, or its views, the
 * log files of its logged messages and digest.json. */
void zc_mirror_committed(const struct zc_op *op);
/* After an operation committed: the views it changed (paths). */
void zc_mirror_views(struct zc_mem *m, const json_t *paths);
/* After messages at from…to (ms) were logged to conv: the log files of
 * those local days, and digest.json. */
void zc_mirror_log(struct zc_mem *m, const char *conv, int64_t from, int64_t to);
/* After a conversation's digest progress changed: digest.json. */
void zc_mirror_digest(struct zc_mem *m);
/* After an import: everything. */
void zc_mirror_all(struct zc_mem *m);

#endif
