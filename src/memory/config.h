/*
 * config.h — config.json: the operator's settings, hand-editable and
 * edited by the web config page. Read on every use when it changed. An
 * invalid file or value is reported by key and the last good settings
 * stay in use; nothing is ever overwritten by a bad edit. Memory layer.
 */
#ifndef ZC_CONFIG_H
#define ZC_CONFIG_H

#include <jansson.h>

#include "base/err.h"
#include "base/fs.h"

enum zc_profile { ZC_PROFILE_SCORED = 0, ZC_PROFILE_ZCOR };

struct zc_config {
	long recall_chars;    /* recallChars: auto-recall budget in characters; 0 = off */
	enum zc_profile profile; /* recall.profile: "scored" (seed 003) or "zcor" (seed 000) */
	int relationships;    /* relationships: offer relationship tools and guidance */
};

#define ZC_RECALL_CHARS_DEFAULT 6000
#define ZC_RECALL_CHARS_MAX 200000
#define ZC_CONFIG_MAX_BYTES (1u << 20)

struct zc_confile {
	char *path;
	struct zc_file_id seen;
	struct zc_config cfg;  /* the last good settings */
	json_t *doc;           /* the last good document */
	char warning[600];     /* what is wrong with the file, "" if fine */
};

void zc_config_init(struct zc_confile *c, const char *path);
void zc_config_release(struct zc_confile *c);
/* Rereads the file if it changed; a missing file means the defaults. */
void zc_config_refresh(struct zc_confile *c);
/* Checks a document; fills *out (defaults for absent keys). */
int zc_config_check(const json_t *doc, struct zc_config *out, struct zc_err *e);
/* Merges patch (an object of keys to set) into the file after checking
 * the result; writes atomically. */
int zc_config_set(struct zc_confile *c, const json_t *patch, struct zc_err *e);
/* The settings in effect as JSON (new reference). */
json_t *zc_config_json(const struct zc_config *cfg);

#endif
