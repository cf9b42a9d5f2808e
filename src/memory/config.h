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
#include "base/watch.h"

enum zc_profile { ZC_PROFILE_SCORED = 0, ZC_PROFILE_ZCOR };

#define ZC_PROVIDER_URL_MAX 1024
#define ZC_PROVIDER_MODEL_MAX 256
#define ZC_PROVIDER_ENV_MAX 128

/*
 * "provider": an OpenAI-compatible chat completions endpoint (the LLM
 * layer's zc_llm_complete reads it). Fixed-size strings so the settings
 * copy by value like the rest of struct zc_config. The API key itself is
 * never here: only the name of the environment variable that holds it.
 */
struct zc_provider_config {
	int enabled;                            /* "provider" present (not null) */
	char base_url[ZC_PROVIDER_URL_MAX];     /* baseUrl, no trailing '/' */
	char model[ZC_PROVIDER_MODEL_MAX];      /* model */
	char api_key_env[ZC_PROVIDER_ENV_MAX];  /* apiKeyEnv, "" = no Authorization */
	long connect_timeout_ms;                /* connectTimeoutMs */
	long timeout_ms;                        /* timeoutMs: per request, retries included */
	int max_retries;                        /* maxRetries */
	long max_response_bytes;                /* maxResponseBytes */
	double temperature;                     /* temperature: the turn's sampling */
	/* Not a setting (never read from config.json): a caller sets it on
	 * its copy for one call; while *cancel is nonzero the request is
	 * abandoned at once and not retried (zcor_interrupt). NULL: none. */
	const int *cancel;
};

#define ZC_PROVIDER_CONNECT_TIMEOUT_DEFAULT 10000
#define ZC_PROVIDER_TIMEOUT_DEFAULT 60000
#define ZC_PROVIDER_RETRIES_DEFAULT 3
#define ZC_PROVIDER_RESPONSE_DEFAULT (4L << 20)
#define ZC_PROVIDER_TEMPERATURE_DEFAULT 0.7

#define ZC_BOT_ID_MAX 65
#define ZC_TIME_ZONE_MAX 65 /* an IANA time zone name, with the NUL */
#define ZC_SKILLS_ROOT_MAX 1024 /* skills.projectRoot, bytes with the NUL (tools/skills.h) */
#define ZC_MEDIA_CACHE_DEFAULT 200
#define ZC_MEDIA_CACHE_MAX 100000
#define ZC_ADMISSION_LIST_MAX 10000
#define ZC_APOLOGY_MAX 801 /* bytes, with the NUL (at most 200 characters) */
#define ZC_APOLOGY_CHARS 200
#define ZC_DIALOGUE_CHARS_DEFAULT 12000
#define ZC_DIGEST_AT_HOUR_DEFAULT 4
#define ZC_DIGEST_MIN_LINES_DEFAULT 20
#define ZC_DIGEST_MAX_CHARS_DEFAULT 60000
#define ZC_DIGEST_TIMEOUT_DEFAULT 300000
#define ZC_AMBIENT_MESSAGES_DEFAULT 40
#define ZC_TURN_MAX_STEPS_DEFAULT 8
#define ZC_TURN_DEADLINE_DEFAULT 120000
#define ZC_TURN_TOOL_TIMEOUT_DEFAULT 30000
#define ZC_TURN_WAIT_DEFAULT 60000

/* worlds.qq (docs/QQ.md): the QQ world's settings, read by src/world/qq.c
 * through zcor_config_json. */
enum zc_qq_mode { ZC_QQ_MODE_FORWARD = 0, ZC_QQ_MODE_REVERSE };
enum zc_qq_image_mode { ZC_QQ_IMAGE_BASE64 = 0, ZC_QQ_IMAGE_FILE };
#define ZC_QQ_URL_MAX 512
#define ZC_QQ_PATH_MAX 200 /* bytes, the NUL included: a path is shorter */
#define ZC_QQ_CONF_NAMES 16
#define ZC_QQ_CONF_NAME_CHARS 32
#define ZC_QQ_CONF_NAME_BYTES (4 * ZC_QQ_CONF_NAME_CHARS + 1)
struct zc_qq_config {
	int enabled;                          /* enabled */
	int mode;                             /* mode: enum zc_qq_mode */
	char url[ZC_QQ_URL_MAX];              /* url: ws://host[:port]/path (forward) */
	char path[ZC_QQ_PATH_MAX];            /* path: the reverse endpoint */
	char token_env[ZC_PROVIDER_ENV_MAX];  /* accessTokenEnv */
	char names[ZC_QQ_CONF_NAMES][ZC_QQ_CONF_NAME_BYTES]; /* names */
	int n_names;
	long quiet_ms, max_wait_ms, action_timeout_ms, reconnect_min_ms, reconnect_max_ms;
	long replies_per_minute, max_concurrent_turns, reply_max_chars;
	int image_mode;                       /* imageMode: enum zc_qq_image_mode */
	long media_max_bytes, media_timeout_ms;
	int pipeline_logging;                 /* pipelineLogging */
	double probability;                   /* proactive.probability */
	long cooldown_s;                      /* proactive.cooldownS */
	char quiet_hours[12];                 /* proactive.quietHours "HH:MM-HH:MM", "" none */
	char apology[ZC_APOLOGY_MAX];         /* apology */
};

/* wiki (docs/OPERATIONS.md): the MediaWiki API wiki_lookup asks
 * (src/tools/wiki.c). base_url is the api.php endpoint itself: a base
 * given as a path gets "/api.php" appended when it is read. */
#define ZC_WIKI_URL_MAX 512
#define ZC_WIKI_URL_DEFAULT "https://zh.moegirl.org.cn/api.php"
#define ZC_WIKI_TIMEOUT_DEFAULT 8000
#define ZC_WIKI_MAX_BYTES_DEFAULT (1L << 20)
struct zc_wiki_config {
	char base_url[ZC_WIKI_URL_MAX]; /* baseUrl, resolved to …/api.php */
	long timeout_ms;                /* timeoutMs: each of the two requests, retry included */
	long max_bytes;                 /* maxBytes: the largest answer read */
};

/*
 * recall.weights: what each feature of the scored profile counts for
 * (recall_score.c, zc_recall_score_items; docs/FORMATS.md). A preset by
 * name — "default" (chosen by measurement, docs/PERFORMANCE.md) or
 * "seed003" (seed 003's 3 / 2 / 1 / 0.8 / 0.5 / −5, without the two
 * features it does not have) — or an object of some of the keys, the rest
 * taken from "default". The keys are rows "recall.weights.<key>" of the
 * table (config.c), hidden: only the object form names them.
 */
struct zc_recall_weights {
	double entity;   /* a name, alias, QQ number or slang spelling of it in the batch */
	double lexical;  /* BM25 of the batch's tokens (recall/lexical.h) */
	double recency;  /* exp(−age / 30 days), 0..1 */
	double salience; /* hits and pinned, 0..1 */
	double prior;    /* section prior (sectionPrior), 0..1 */
	double expired;  /* 1 when past its expiry date */
	double feedback; /* BM25 of the pseudo-relevance feedback tokens */
	double context;  /* carried over from a strong hit written right before or after */
};
#define ZC_RECALL_WEIGHT_MAX 100.0
extern const struct zc_recall_weights zc_recall_weights_default, zc_recall_weights_seed003;

struct zc_config {
	long recall_chars;    /* recallChars: auto-recall budget in characters; 0 = off */
	enum zc_profile profile; /* recall.profile: "scored" (seed 003) or "zcor" (seed 000) */
	struct zc_recall_weights weights; /* recall.weights */
	char weights_name[16];   /* "default", "seed003" or "custom" (an object) */
	int relationships;    /* relationships: offer relationship tools and guidance */
	char skills_root[ZC_SKILLS_ROOT_MAX]; /* skills.projectRoot: absolute, "" = the memory dir's parent */
	struct zc_provider_config provider; /* provider: the LLM endpoint, if any */
	long memory_file_max_bytes; /* memoryFileMaxBytes: hard cap of a MEMORY.md view */
	double memory_archive_ratio;/* memoryArchiveRatio: rollover above max × ratio (Q-ROLL) */
	long view_max_bytes;        /* viewMaxBytes: cap of every other view */
	int mirror;                 /* mirror: keep mirror/ (the views as files) current */
	char bot_id[ZC_BOT_ID_MAX]; /* botId: the bot's own sender id ("" = not set) */
	int private_chats;    /* admission.privateChats: log private chats at all */
	long media_cache_max; /* mediaCacheMax: inbound media files kept (LRU) */
	long dialogue_chars;  /* dialogueChars: the dialogue a turn sends, in characters */
	long ambient_messages;/* ambientMessages: external messages of earlier batches sent */
	struct {
		long max_steps;       /* turn.maxSteps: model requests with tools per turn */
		long deadline_ms;     /* turn.deadlineMs: the tool loop's time */
		long tool_timeout_ms; /* turn.toolTimeoutMs: one tool call's provider stage */
		long wait_ms;         /* turn.waitMs: a second turn of a conversation waits */
	} turn;
	long digest_at_hour;     /* digestAtHour: the daily digest's local hour (Q-DIGEST) */
	long digest_min_lines;   /* digestMinLines: new lines a conversation needs for a digest */
	long digest_max_chars;   /* digestMaxChars: the transcript a digest run gets, in characters */
	long digest_timeout_ms;  /* digestTimeoutMs: the hard limit of one digest run */
	int digest_catch_up;     /* digestCatchUp: a missed digest runs on the first message after start */
	char time_zone[ZC_TIME_ZONE_MAX]; /* timeZone: an IANA name ("" = the system's) */
	int memory;              /* memory: false removes the memory tools, skills and the digest timer */
	char console_apology[ZC_APOLOGY_MAX]; /* worlds.console.apology: "" = none */
	struct zc_qq_config qq;               /* worlds.qq */
	struct zc_wiki_config wiki;           /* wiki: wiki_lookup's MediaWiki */
	/* admission.groups / admission.privates (allow-lists of ids) vary in
	 * length, so they stay in the document: zc_config_allowed reads them. */
};

#define ZC_MEMORY_FILE_MAX_DEFAULT 32768
#define ZC_MEMORY_ARCHIVE_RATIO_DEFAULT 0.75
#define ZC_VIEW_MAX_DEFAULT 262144
#define ZC_VIEW_MAX_LIMIT (16L << 20)

#define ZC_RECALL_CHARS_DEFAULT 6000
#define ZC_RECALL_CHARS_MAX 200000
#define ZC_CONFIG_MAX_BYTES (1u << 20)

/*
 * The keys, as a table (config.c, Redis config.c style): one row per key,
 * with its type, default, range or values, the layer that reads it and
 * its help; the loader, the checker, the messages and zc_config_json are
 * generated from it, so adding a key is adding a row (and its field in
 * struct zc_config). A section row ("provider") holds the rows named
 * "<section>.<key>" that follow it.
 */
enum zc_conf_type {
	ZC_CONF_SECTION, /* an object of the rows that follow, named "<this>.<key>" */
	ZC_CONF_INT,     /* lo..hi, in a long (or an int: size) */
	ZC_CONF_REAL,    /* dlo..dhi, in a double */
	ZC_CONF_BOOL,    /* true/false, in an int */
	ZC_CONF_ENUM,    /* one of values[], its index in an enum (int) */
	ZC_CONF_STRING   /* check() decides and stores; "" is unset */
};

/* zc_conf_row.flags */
#define ZC_CONF_NULLABLE 1   /* a section that may be null: off (its "enabled" 0) */
#define ZC_CONF_REQUIRED 2   /* required when its section is set */
#define ZC_CONF_HIDDEN 4     /* never listed among the known keys nor in the JSON */
#define ZC_CONF_IN_DOC 8     /* not in struct zc_config: read from the document */
#define ZC_CONF_EMPTY_NULL 16 /* a string shown as null when "" */
#define ZC_CONF_EMPTY_OMIT 32 /* a string left out of the JSON when "" */
#define ZC_CONF_LIST_KEYS 64 /* a section listed by its keys in the top level's "known" */
#define ZC_CONF_SAY_DEFAULT 128 /* the range message names the default */

struct zc_conf_row;
typedef int (*zc_conf_check_fn)(const struct zc_conf_row *row, const json_t *v,
				struct zc_config *out, struct zc_err *e);

struct zc_conf_row {
	const char *name;  /* "recallChars", "provider.timeoutMs" */
	enum zc_conf_type type;
	const char *layer; /* which layer reads it: "recall", "llm", "memory", "tools", "world" */
	size_t off;        /* the field in struct zc_config (a section: its "enabled", or -1) */
	size_t size;       /* of that field */
	long long lo, hi;  /* ZC_CONF_INT */
	double dlo, dhi;   /* ZC_CONF_REAL */
	double def;        /* the default (INT, REAL, BOOL, ENUM index) */
	const char *const *values; /* ZC_CONF_ENUM: "name", "note", …, NULL */
	zc_conf_check_fn check;    /* ZC_CONF_STRING, and IN_DOC rows */
	const char *lo_note; /* INT: after the lower bound, " (auto-recall off)" */
	const char *unit;    /* INT/REAL/BOOL: what the value means, in the message */
	const char *example; /* SECTION: the message when it is not an object */
	unsigned flags;      /* ZC_CONF_* */
	const char *help;
	json_t *(*json)(const struct zc_config *cfg); /* the value as JSON, if not by type */
};

/* The table, ending with a row whose name is NULL. */
extern const struct zc_conf_row zc_conf_rows[];

struct zc_confile {
	char *path;
	struct zc_watch file;  /* config.json, watched, with config.json.last-good */
	struct zc_config cfg;  /* the last good settings */
	json_t *doc;           /* the last good document */
	int good;              /* cfg came from a valid file (this one or its last good copy) */
	char warning[600];     /* what is wrong with the file, "" if fine */
};

/* Beside config.json: a copy of the last valid one, written whenever a
 * valid config.json is read or set, read when a process starts on an
 * invalid config.json (so a restart after a typo keeps the settings). */
#define ZC_CONFIG_LAST_GOOD_SUFFIX ZC_WATCH_LAST_GOOD_SUFFIX

void zc_config_init(struct zc_confile *c, const char *path);
void zc_config_release(struct zc_confile *c);
/* Rereads the file if it changed; a missing file means the defaults. */
void zc_config_refresh(struct zc_confile *c);
/* Checks a document; fills *out (defaults for absent keys). */
int zc_config_check(const json_t *doc, struct zc_config *out, struct zc_err *e);
/* Merges patch (an object of keys to set) into the file after checking
 * the result; writes atomically. */
int zc_config_set(struct zc_confile *c, const json_t *patch, struct zc_err *e);
/* Is the id (a group id or a QQ number) on the allow-list `list`
 * ("groups" or "privates") of the last good document? An absent list
 * allows every id. */
int zc_config_allowed(const struct zc_confile *c, const char *list, const char *id);
/* The rules of the keys a program may check a value against before
 * sending it: {"fields": [{field, type, min?, max?, values?, default?,
 * nullable?}]} in the table's order (new reference); the same object is
 * a refused value's error details, with "reason". */
json_t *zc_config_fields(void);
/* The settings in effect as JSON (new reference), without the rows kept
 * in the document (the allow-lists). */
json_t *zc_config_json(const struct zc_config *cfg);
/* The file's settings in effect: zc_config_json with the allow-lists of
 * the last good document (null when absent) and "warning" when the file
 * is invalid (new reference). */
json_t *zc_confile_json(const struct zc_confile *c);

#endif
