/*
 * qq_event.h — NapCat's OneBot v11 events as zcor sees them, and the
 * model's replies as OneBot message segments (docs/QQ.md, "Events" and
 * "Replies"). Pure functions of their input (no network, no store) except
 * zc_qq_fetch_image, which downloads. World layer.
 *
 * NapCat posts ids as numbers in events and as strings inside segments,
 * and `time` in seconds; every id here is a decimal string.
 */
#ifndef ZC_WORLD_QQ_EVENT_H
#define ZC_WORLD_QQ_EVENT_H

#include <jansson.h>
#include <stddef.h>

enum zc_qq_kind {
	ZC_QQ_IGNORE,  /* an event zcor does not use (request, other notices, unknown types) */
	ZC_QQ_META,    /* meta_event: lifecycle, heartbeat; never reaches the transcript */
	ZC_QQ_SELF,    /* the bot's own message (message_sent, or user_id = the bot): never logged */
	ZC_QQ_MESSAGE, /* a message from someone else, to log */
	ZC_QQ_RECALL,  /* notice group_recall / friend_recall: that message is flagged recalled */
	ZC_QQ_POKE     /* notice notify poke at the bot: may wake it */
};

#define ZC_QQ_NAMES_MAX 16
#define ZC_QQ_NAME_CHARS 32

struct zc_qq_event {
	enum zc_qq_kind kind;
	char conversation[48]; /* "group:<group_id>" or "private:<user_id>" ("" for META/IGNORE) */
	char message_id[24];   /* MESSAGE, SELF, RECALL: the message's id */
	char temp_group[24];   /* private sub_type "group" (temporary chat): the group it came through */
	char user_id[24];      /* RECALL: whose message it was (when said); POKE: who poked */
	char operator_id[24];  /* RECALL: who withdrew it (group_recall's operator_id; friend_recall: the friend) */
	char target_id[24];    /* POKE: who was poked (the bot) */
	char *group_name;      /* group_name when the event has one (owned), else NULL */
	/* MESSAGE: one message of zcor_log_messages' batch, {"id", "time"
	 * (ISO 8601 UTC), "senderId", "senderName" (card, else nickname),
	 * "text" (segments rendered in order: [表情:/菜汪], [图片], [文件:
	 * name], [合并转发:id], [类型]), "mentions" (ids; "all" for @全体成员),
	 * "replyTo"} without "media" (the caller adds what it downloaded). */
	json_t *message;
	/* MESSAGE: the images to download, in order: [{"url", "file",
	 * "fileSize", "sticker": bool, "summary"}] (never NULL for MESSAGE) */
	json_t *images;
	int at_bot;      /* an at segment with the bot's id */
	int at_all;      /* an at segment with qq "all" */
	int name_hit;    /* the text contains one of names (case-insensitive) */
	int lone_sticker; /* only faces and/or sticker images, no text */
	int poke_at_bot; /* POKE: target_id is the bot */
	long long time_ms;
	/* META: "lifecycle" / "heartbeat", lifecycle's sub_type ("connect",
	 * "enable", "disable"; "" when none), and the interval (ms, 0 when absent) */
	char meta[16];
	char meta_sub[16];
	long heartbeat_ms;
};

/*
 * Reads one event. self_id: the bot's id ("" when not yet known: nothing
 * is at_bot or SELF by user_id then); names: what wakes the bot besides
 * an @ (n of them). 0 with *out filled (release with zc_qq_event_release,
 * also after a failure); -1 with why in err (cap bytes, always terminated,
 * naming the field: "message[2].data.qq must be a number or \"all\"")
 * when the event is malformed — the caller logs it and drops the event.
 * `message` may be the segment array (message_format "array") or a
 * CQ-code string ("string"): its codes are read as the segments they
 * stand for ([CQ:at,qq=1] is an at, [CQ:image,…] an image). POKE only for
 * a poke at the bot by someone else (a poke at another is IGNORE). The
 * text is cut at 16 KiB on a character boundary (with a mark), the
 * sender's name at 64 characters; at most 50 mentions and 10 images.
 */
int zc_qq_event_parse(json_t *event, const char *self_id, const char *const *names, int n_names,
		      struct zc_qq_event *out, char *err, size_t cap);
void zc_qq_event_release(struct zc_qq_event *ev);

/*
 * Downloads an image of an event: http(s) only, no redirect to another
 * scheme, at most max_bytes (the announced and the received size), within
 * timeout_ms; the bytes must be a PNG, JPEG, GIF or WebP. 0 with *data
 * (malloc'ed) and *len; -1 with why in err.
 */
int zc_qq_fetch_image(const char *url, long max_bytes, int timeout_ms, unsigned char **data,
		      size_t *len, char *err, size_t cap);

/* ---- replies ----------------------------------------------------------- */

/* Reads a sticker's bytes for a reply: file is the name under stickers/
 * (as in [[图片: stickers/<file>]]). 0 with *data (free()'d by the
 * caller) and *len, or -1. */
typedef int (*zc_qq_sticker_fn)(void *ud, const char *file, char **data, size_t *len);

/* The messages one reply becomes at most: past them the rest is left out
 * (and named in *problems) — a runaway reply never floods a group. */
#define ZC_QQ_REPLY_MESSAGES_MAX 10

struct zc_qq_reply_opts {
	const char *quote_id; /* group: the message that woke the bot (a reply segment first); NULL: none */
	int max_chars;        /* one message's text at most; longer replies are split at line or sentence ends */
	int local_files;      /* 1: image segments as file:// of the sticker's absolute path (NapCat on this host) */
	const char *stickers_dir; /* the absolute stickers/ directory, for local_files */
	zc_qq_sticker_fn sticker;
	void *sticker_ud;
};

/*
 * The turn's reply as OneBot messages to send in order: *out is an array
 * of message arrays, each [{"type": "text"|"image"|"at"|"reply", "data":
 * {…}}…]. `[[图片: stickers/名字.gif]]` → an image segment ("file":
 * "base64://…", or "file://…" with local_files); `[[@123456]]` → an at
 * segment (qq as a string); the reply segment only in the first message;
 * at most ZC_QQ_REPLY_MESSAGES_MAX messages (the rest left out, a problem).
 * An image whose bytes cannot be read is dropped and named in *problems
 * (an array of strings; the turn's check has already refused bad paths).
 * 0, or -1 with why in err.
 */
int zc_qq_reply_segments(const char *reply, const struct zc_qq_reply_opts *o, json_t **out,
			 json_t **problems, char *err, size_t cap);

#endif
