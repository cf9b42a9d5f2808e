/*
 * qq_event.c — NapCat's OneBot v11 events read into what the QQ world
 * needs (see qq_event.h), and the download of an event's image. The
 * replies' half is qq_reply.c.
 *
 * World layer, a client of zcor.h and base/: pure functions of the event
 * (no store, no network) except zc_qq_fetch_image. It never decides
 * whether the bot answers — it reports what the event says (an @ of the
 * bot, a name, a poke) and src/world/qq.c decides. Everything it reads
 * comes from the network: every id is checked (a number, or a string of
 * digits, at most 19 of them), every quoted value is cut on a character
 * boundary, the text has a cap, and a malformed event is -1 with the
 * field named, never a half-filled event.
 *
 * Shapes as NapCat sends them (src/onebot/api/msg.ts and types/message.ts
 * of NapNeko/NapCatQQ, the OneBot v11 spec): ids are numbers in events
 * and strings inside segments; `time` is in seconds; a temporary chat
 * (private, sub_type "group") names its group in group_id, in
 * sender.group_id (older versions) or in temp_source; 284840486 is
 * NapCat's stand-in when it could not learn the group.
 */
#include "world/qq_event.h"

#include <curl/curl.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/json.h"
#include "base/magic.h"
#include "base/timeutil.h"
#include "base/utf8.h"

#define ID_DIGITS 19             /* the longest id (an int64) */
#define TEXT_CAP (16u << 10)     /* bytes of a message's rendered text */
#define TEXT_CUT "…[消息太长，后面的省略了]"
#define SENDER_CHARS 64          /* a sender's name */
#define GROUP_NAME_CHARS 100
#define QUOTE_CHARS 64           /* a face's text, a file's name, a forward's id, a type */
#define MENTIONS_MAX 50          /* zcor_log_messages' limit */
#define IMAGES_MAX 10            /* a message's media, zcor_log_messages' limit */
#define TEMP_UNKNOWN "284840486" /* NapCat's stand-in group of a temporary chat */
#define TIME_MAX_S 253402300799LL /* 9999-12-31T23:59:59Z */
#define INTERVAL_MAX_MS 86400000L

static int bad(char *err, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* -1 with the message in err (cut to cap, then made valid UTF-8). */
static int bad(char *err, size_t cap, const char *fmt, ...)
{
	if (cap) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, cap, fmt, ap);
		va_end(ap);
		zc_utf8_scrub(err);
	}
	return -1;
}

/* ---- ids and times ------------------------------------------------------ */

/*
 * An id: a whole number (negative only when neg_ok: OneBot's message ids
 * are int32 and go-cqhttp's may be negative) or a string of 1 to 19
 * digits. 1 with the decimal text in out, 0 when absent (missing or
 * null), -1 when malformed.
 */
static int read_id(const json_t *v, int neg_ok, char out[24], const char *path, char *err,
		   size_t cap)
{
	out[0] = '\0';
	if (!v || json_is_null(v))
		return 0;
	if (json_is_integer(v)) {
		long long x = json_integer_value(v);
		if (x < 0 && !neg_ok)
			return bad(err, cap, "%s must be a positive number (a QQ id), not %lld", path, x);
		snprintf(out, 24, "%lld", x);
		return 1;
	}
	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		size_t n = json_string_length(v), i = neg_ok && s[0] == '-';
		int ok = n > i && n - i <= ID_DIGITS && strlen(s) == n;
		for (size_t k = i; ok && k < n; k++)
			ok = s[k] >= '0' && s[k] <= '9';
		/* 19 digits pass 2^63: such an id names no QQ account or group,
		 * and sent back as a number (send_group_msg) it would be another */
		if (ok && n - i == ID_DIGITS && strcmp(s + i, i ? "9223372036854775808" : "9223372036854775807") > 0)
			ok = 0;
		if (!ok)
			return bad(err, cap, "%s must be a number or a string of 1 to %d digits (at most "
				   "9223372036854775807), not '%s'", path, ID_DIGITS, ZC_Q(s, 30));
		memcpy(out, s, n + 1);
		return 1;
	}
	if (json_is_real(v))
		return bad(err, cap, "%s must be a whole number of at most %d digits", path, ID_DIGITS);
	return bad(err, cap, "%s must be a number or a string of digits", path);
}

/* The same, for an id the event must have. */
static int need_id(const json_t *obj, const char *key, int neg_ok, char out[24], char *err,
		   size_t cap)
{
	int rc = read_id(json_object_get(obj, key), neg_ok, out, key, err, cap);
	if (rc == 0)
		return bad(err, cap, "%s is missing: the event must say it", key);
	return rc < 0 ? -1 : 0;
}

/* `time` (seconds) as ms; absent is 0 (the caller's now). */
static int read_time(const json_t *ev, long long *ms, char *err, size_t cap)
{
	const json_t *v = json_object_get(ev, "time");
	*ms = 0;
	if (!v || json_is_null(v))
		return 0;
	double s = json_is_number(v) ? json_number_value(v) : -1;
	if (!json_is_number(v) || !isfinite(s) || s < 0 || s > (double)TIME_MAX_S)
		return bad(err, cap, "time must be a number of seconds since 1970");
	*ms = json_is_integer(v) ? json_integer_value(v) * 1000 : (long long)(s * 1000.0);
	return 0;
}

/* An optional string field; -1 when it is there and not a string. */
static int opt_str(const json_t *obj, const char *key, const char **out, const char *path,
		   char *err, size_t cap)
{
	const json_t *v = json_object_get(obj, key);
	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return bad(err, cap, "%s must be a string", path);
	*out = json_string_value(v);
	return 0;
}

/* ---- text helpers ------------------------------------------------------- */

/* A copy of a name cut to max_chars, control characters as spaces, or
 * NULL when it is empty. */
static char *clean_name(const char *s, size_t max_chars)
{
	if (!s || !*s)
		return NULL;
	char *c = zc_strndup(s, zc_utf8_prefix(s, max_chars));
	for (char *p = c; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = ' ';
	return c;
}

static int ascii_lower(int c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

/* 1 when hay contains needle, ASCII letters in either case; other bytes
 * exactly (a UTF-8 needle starts with a lead byte, so it never matches
 * inside a character of hay). */
static int contains_fold(const char *hay, const char *needle)
{
	size_t n = strlen(needle);
	if (!n)
		return 0;
	for (const char *h = hay; *h; h++) {
		size_t i = 0;
		while (i < n && h[i] && ascii_lower((unsigned char)h[i]) == ascii_lower((unsigned char)needle[i]))
			i++;
		if (i == n)
			return 1;
	}
	return 0;
}

/* ---- segments ----------------------------------------------------------- */

struct render {
	struct zc_buf text;   /* everything, rendered in order */
	struct zc_buf plain;  /* the text segments only: where names are looked for */
	json_t *mentions;     /* ids, "all" */
	json_t *images;
	char reply[24];       /* the first reply segment's id */
	int at_bot, at_all;
	int after_at_bot;     /* a message opening with an @ of the bot: its first text loses its leading blanks */
	int stickers, others; /* segments that are faces or sticker images, and the rest */
	const char *self_id;
};

/* Adds to the rendered text, keeping it within a little over its cap (the
 * end cuts what is over on a character boundary). */
static void put(struct render *r, const char *s, size_t n)
{
	size_t room = TEXT_CAP + 8 > r->text.len ? TEXT_CAP + 8 - r->text.len : 0;
	zc_buf_add(&r->text, s, n < room ? n : room);
}

static void puts_(struct render *r, const char *s) { put(r, s, strlen(s)); }

static void put_cut(struct render *r, const char *s, size_t max_chars)
{
	put(r, s, zc_utf8_prefix(s, max_chars));
}

static void add_mention(struct render *r, const char *id)
{
	size_t i;
	json_t *x;
	json_array_foreach(r->mentions, i, x)
		if (strcmp(json_string_value(x), id) == 0)
			return;
	if (json_array_size(r->mentions) < MENTIONS_MAX)
		json_array_append_new(r->mentions, json_string(id));
}

/* A number or a digit string as a number; -1 when it is neither. */
static long long num_field(const json_t *v)
{
	if (json_is_integer(v))
		return json_integer_value(v);
	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		size_t n = strlen(s);
		if (!n || n > 18 || strspn(s, "0123456789") != n)
			return -1;
		return strtoll(s, NULL, 10);
	}
	return -1;
}

/* "2.1 MB" */
static void put_size(struct render *r, long long n)
{
	char b[32];
	if (n < 1024)
		snprintf(b, sizeof(b), "%lld B", n);
	else if (n < 1024 * 1024)
		snprintf(b, sizeof(b), "%.1f KB", (double)n / 1024.0);
	else
		snprintf(b, sizeof(b), "%.1f MB", (double)n / (1024.0 * 1024.0));
	puts_(r, b);
}

static int seg_at(struct render *r, const json_t *d, const char *path, char *err, size_t cap)
{
	char qq[24], p[64];
	const json_t *v = json_object_get(d, "qq");
	snprintf(p, sizeof(p), "%s.qq", path);
	if (json_is_string(v) && strcmp(json_string_value(v), "all") == 0) {
		r->at_all = 1;
		add_mention(r, "all");
		puts_(r, "@全体成员");
		return 0;
	}
	if (read_id(v, 0, qq, p, err, cap) <= 0)
		return bad(err, cap, "%s must be a number or \"all\"", p);
	const char *name = json_string_value(json_object_get(d, "name"));
	add_mention(r, qq);
	if (r->self_id && *r->self_id && strcmp(qq, r->self_id) == 0) {
		/* the bot addressed: "mentions" says so; the text keeps what was
		 * said to it (no "@3000000001" for the model or for recall) */
		r->at_bot = 1;
		r->after_at_bot = 1;
		r->others++;
		return 0;
	}
	puts_(r, "@");
	if (name && *name)
		put_cut(r, name, SENDER_CHARS);
	else
		puts_(r, qq);
	r->others++;
	return 0;
}

static void seg_face(struct render *r, const json_t *d)
{
	const char *ft = json_string_value(json_object_get(json_object_get(d, "raw"), "faceText"));
	long long id = num_field(json_object_get(d, "id"));
	r->stickers++;
	if (ft && *ft) {
		puts_(r, "[表情:");
		put_cut(r, ft, QUOTE_CHARS);
		puts_(r, "]");
	} else if (id >= 0) {
		char b[40];
		snprintf(b, sizeof(b), "[表情:id=%lld]", id);
		puts_(r, b);
	} else {
		puts_(r, "[表情]");
	}
}

/* A market face (商城表情): its summary ("[菜汪]") names it. */
static void seg_mface(struct render *r, const json_t *d)
{
	const char *s = json_string_value(json_object_get(d, "summary"));
	r->stickers++;
	if (!s || !*s) {
		puts_(r, "[表情]");
		return;
	}
	size_t n = strlen(s);
	if (n >= 2 && s[0] == '[' && s[n - 1] == ']') {
		s++;
		n -= 2;
	}
	char *inner = zc_strndup(s, n);
	puts_(r, "[表情:");
	put_cut(r, inner, QUOTE_CHARS);
	puts_(r, "]");
	zc_free(inner);
}

static void seg_image(struct render *r, const json_t *d)
{
	const char *summary = json_string_value(json_object_get(d, "summary"));
	long long sub = num_field(json_object_get(d, "sub_type"));
	long long size = num_field(json_object_get(d, "file_size"));
	int sticker = sub == 1 || (summary && strcmp(summary, "[动画表情]") == 0);
	if (summary && *summary) {
		size_t n = strlen(summary);
		int bracketed = summary[0] == '[' && summary[n - 1] == ']';
		puts_(r, bracketed ? "" : "[");
		put_cut(r, summary, QUOTE_CHARS);
		puts_(r, bracketed ? "" : "]");
	} else {
		puts_(r, sticker ? "[动画表情]" : "[图片]");
	}
	if (sticker)
		r->stickers++;
	else
		r->others++;
	if (json_array_size(r->images) >= IMAGES_MAX)
		return;
	json_t *im = json_object();
	const char *url = json_string_value(json_object_get(d, "url"));
	const char *file = json_string_value(json_object_get(d, "file"));
	json_object_set_new(im, "url", url ? json_string(url) : json_null());
	json_object_set_new(im, "file", file ? json_string(file) : json_null());
	json_object_set_new(im, "fileSize", size >= 0 ? json_integer(size) : json_null());
	json_object_set_new(im, "sticker", json_boolean(sticker));
	json_object_set_new(im, "summary", summary && *summary ? json_string(summary) : json_null());
	json_array_append_new(r->images, im);
}

static void seg_file(struct render *r, const json_t *d)
{
	const char *name = json_string_value(json_object_get(d, "name"));
	if (!name || !*name)
		name = json_string_value(json_object_get(d, "file"));
	long long size = num_field(json_object_get(d, "file_size"));
	if (size < 0)
		size = num_field(json_object_get(d, "size"));
	r->others++;
	puts_(r, "[文件");
	if (name && *name) {
		puts_(r, ":");
		put_cut(r, name, QUOTE_CHARS);
	}
	if (size >= 0) {
		puts_(r, name && *name ? " " : ":");
		put_size(r, size);
	}
	puts_(r, "]");
}

static void seg_forward(struct render *r, const json_t *d)
{
	const json_t *v = json_object_get(d, "id");
	char b[32];
	const char *id = json_string_value(v);
	if (json_is_integer(v)) {
		snprintf(b, sizeof(b), "%lld", (long long)json_integer_value(v));
		id = b;
	}
	r->others++;
	puts_(r, "[合并转发");
	if (id && *id) {
		puts_(r, ":");
		put_cut(r, id, QUOTE_CHARS);
	}
	puts_(r, "]");
}

/* Segments other than the ones read above: a Chinese name for the common
 * ones, else the type itself, "[dice]". */
static void seg_other(struct render *r, const char *type)
{
	static const char *const names[][2] = {
		{"record", "语音"}, {"video", "视频"}, {"json", "卡片"}, {"xml", "卡片"},
		{"music", "音乐"},  {"location", "位置"}, {"contact", "名片"}, {"markdown", "markdown"},
	};
	const char *label = NULL;
	for (size_t i = 0; !label && i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(type, names[i][0]) == 0)
			label = names[i][1];
	r->others++;
	puts_(r, "[");
	put_cut(r, label ? label : type, QUOTE_CHARS);
	puts_(r, "]");
}

static int segment(struct render *r, const json_t *seg, size_t i, char *err, size_t cap)
{
	char path[48];
	snprintf(path, sizeof(path), "message[%zu]", i);
	if (!json_is_object(seg))
		return bad(err, cap, "%s must be an object {\"type\", \"data\"}", path);
	const char *type = json_string_value(json_object_get(seg, "type"));
	const json_t *d = json_object_get(seg, "data");
	if (!type || !*type)
		return bad(err, cap, "%s.type must be a string such as \"text\"", path);
	if (d && !json_is_object(d) && !json_is_null(d))
		return bad(err, cap, "%s.data must be an object", path);
	snprintf(path, sizeof(path), "message[%zu].data", i);
	if (strcmp(type, "text") == 0) {
		const json_t *t = json_object_get(d, "text");
		if (!json_is_string(t))
			return bad(err, cap, "%s.text must be a string", path);
		const char *s = json_string_value(t);
		if (r->after_at_bot && !r->text.len)
			s += strspn(s, " \t");
		r->after_at_bot = 0;
		put(r, s, strlen(s));
		zc_buf_adds(&r->plain, s);
		if (s[strspn(s, " \t\r\n")])
			r->others++;
		return 0;
	}
	if (strcmp(type, "at") == 0)
		return seg_at(r, d, path, err, cap);
	if (strcmp(type, "reply") == 0) {
		char id[24], p[64];
		snprintf(p, sizeof(p), "%s.id", path);
		if (read_id(json_object_get(d, "id"), 1, id, p, err, cap) <= 0)
			return bad(err, cap, "%s must be the id of the message replied to (digits)", p);
		if (!r->reply[0])
			memcpy(r->reply, id, sizeof(id));
		return 0;
	}
	if (strcmp(type, "face") == 0)
		seg_face(r, d);
	else if (strcmp(type, "mface") == 0)
		seg_mface(r, d);
	else if (strcmp(type, "image") == 0)
		seg_image(r, d);
	else if (strcmp(type, "file") == 0)
		seg_file(r, d);
	else if (strcmp(type, "forward") == 0)
		seg_forward(r, d);
	else
		seg_other(r, type);
	return 0;
}

/* ---- a CQ-code string (message_format "string") --------------------------- */

/* CQ codes escape & [ ] (and , inside values) as HTML-like entities. */
static char *cq_unescape(const char *s, size_t n)
{
	static const char *const ent[][2] = {{"&amp;", "&"}, {"&#91;", "["}, {"&#93;", "]"}, {"&#44;", ","}};
	struct zc_buf b = ZC_BUF_INIT;
	for (size_t i = 0; i < n;) {
		size_t k = 0;
		while (k < 4 && !(n - i >= strlen(ent[k][0]) && strncmp(s + i, ent[k][0], strlen(ent[k][0])) == 0))
			k++;
		if (k < 4) {
			zc_buf_adds(&b, ent[k][1]);
			i += strlen(ent[k][0]);
		} else {
			zc_buf_addc(&b, s[i++]);
		}
	}
	return zc_buf_detach(&b);
}

static void cq_text(json_t *segs, const char *s, size_t n)
{
	if (n)
		json_array_append_new(segs, json_pack("{s:s, s:{s:o}}", "type", "text", "data", "text",
						      zc_json_string_own(cq_unescape(s, n))));
}

/* One [CQ:type,k=v,…] (the text between "[CQ:" and "]") as a segment. */
static json_t *cq_segment(const char *s, size_t n)
{
	const char *comma = memchr(s, ',', n);
	size_t tn = comma ? (size_t)(comma - s) : n;
	json_t *data = json_object();
	for (const char *p = comma; p && p < s + n;) {
		const char *k = p + 1, *next = memchr(k, ',', (size_t)(s + n - k));
		const char *end = next ? next : s + n, *eq = memchr(k, '=', (size_t)(end - k));
		if (eq) {
			char *key = zc_strndup(k, (size_t)(eq - k));
			json_object_set_new(data, key, zc_json_string_own(cq_unescape(eq + 1, (size_t)(end - eq - 1))));
			zc_free(key);
		}
		p = next;
	}
	char *type = zc_strndup(s, tn);
	json_t *seg = json_pack("{s:s, s:o}", "type", type, "data", data);
	zc_free(type);
	return seg;
}

/* A CQ-code string as the segments it stands for: text between codes, and
 * each code with its fields (so [CQ:at,qq=123] is an at, [CQ:image,…] an
 * image); an unclosed "[CQ:" stays text. */
static json_t *cq_parse(const char *s)
{
	json_t *segs = json_array();
	const char *p = s;
	for (;;) {
		const char *open = strstr(p, "[CQ:"), *close = open ? strchr(open, ']') : NULL;
		if (!close) {
			cq_text(segs, p, strlen(p));
			break;
		}
		cq_text(segs, p, (size_t)(open - p));
		json_t *seg = cq_segment(open + 4, (size_t)(close - open - 4));
		if (seg)
			json_array_append_new(segs, seg);
		p = close + 1;
	}
	return segs;
}

/* ---- the event kinds -------------------------------------------------- */

/* The message's text cut to its cap on a character boundary, with a mark. */
static char *final_text(struct render *r)
{
	if (r->text.len <= TEXT_CAP)
		return zc_buf_detach(&r->text);
	size_t n = TEXT_CAP - sizeof(TEXT_CUT);
	while (n && ((unsigned char)r->text.p[n] & 0xC0) == 0x80)
		n--;
	r->text.len = n;
	r->text.p[n] = '\0';
	zc_buf_adds(&r->text, TEXT_CUT);
	return zc_buf_detach(&r->text);
}

static int render_all(struct render *r, const json_t *segs, char *err, size_t cap)
{
	size_t i;
	const json_t *seg;
	json_array_foreach(segs, i, seg)
		if (segment(r, seg, i, err, cap))
			return -1;
	return 0;
}

/* The sender's name: a group card when it has one, else the nickname. */
static int sender_name(const json_t *ev, char **out, char *err, size_t cap)
{
	const json_t *s = json_object_get(ev, "sender");
	const char *card, *nick;
	*out = NULL;
	if (!s || json_is_null(s))
		return 0;
	if (!json_is_object(s))
		return bad(err, cap, "sender must be an object {user_id, nickname, card, …}");
	if (opt_str(s, "card", &card, "sender.card", err, cap) ||
	    opt_str(s, "nickname", &nick, "sender.nickname", err, cap))
		return -1;
	*out = clean_name(card && *card ? card : nick, SENDER_CHARS);
	return 0;
}

/* A temporary chat's group: group_id, sender.group_id or temp_source,
 * whichever is a real group (not 0, not NapCat's stand-in). */
static void temp_group(const json_t *ev, char out[24])
{
	const json_t *c[] = {json_object_get(ev, "group_id"),
			     json_object_get(json_object_get(ev, "sender"), "group_id"),
			     json_object_get(ev, "temp_source")};
	char id[24], ignore[8];
	out[0] = '\0';
	for (size_t i = 0; i < 3 && !out[0]; i++)
		if (read_id(c[i], 0, id, "", ignore, sizeof(ignore)) == 1 && strcmp(id, "0") != 0 &&
		    strcmp(id, TEMP_UNKNOWN) != 0)
			memcpy(out, id, sizeof(id));
}

static int build_message(const json_t *ev, const char *user, const char *const *names, int n_names,
			 struct zc_qq_event *out, struct render *r, char *err, size_t cap)
{
	const json_t *m = json_object_get(ev, "message");
	json_t *segs = NULL;
	char *name = NULL;
	int rc = -1;
	if (json_is_array(m)) {
		segs = json_incref((json_t *)m);
	} else if (json_is_string(m)) {
		segs = cq_parse(json_string_value(m));
	} else {
		bad(err, cap, "message must be an array of segments (message_format \"array\") or a "
			      "CQ-code string");
		goto out;
	}
	if (sender_name(ev, &name, err, cap) || render_all(r, segs, err, cap))
		goto out;
	char when[ZC_TIME_LEN];
	zc_time_format(out->time_ms, when);
	out->message = json_pack("{s:s, s:o, s:s, s:o, s:o, s:O, s:o}", "id", out->message_id, "time",
				 out->time_ms ? json_string(when) : json_null(), "senderId", user,
				 "senderName", name ? zc_json_string_own(name) : json_null(), "text",
				 zc_json_string_own(final_text(r)), "mentions", r->mentions, "replyTo",
				 r->reply[0] ? json_string(r->reply) : json_null());
	name = NULL;
	out->images = json_incref(r->images);
	out->at_bot = r->at_bot;
	out->at_all = r->at_all;
	out->lone_sticker = r->stickers > 0 && r->others == 0;
	for (int i = 0; i < n_names && i < ZC_QQ_NAMES_MAX && !out->name_hit; i++)
		out->name_hit = names[i] && contains_fold(zc_buf_str(&r->plain), names[i]);
	rc = 0;
out:
	zc_free(name);
	json_decref(segs);
	return rc;
}

static int parse_message(const json_t *ev, const char *post, const char *self_id,
			 const char *const *names, int n_names, struct zc_qq_event *out, char *err,
			 size_t cap)
{
	const char *type = json_string_value(json_object_get(ev, "message_type"));
	int sent = strcmp(post, "message_sent") == 0;
	char user[24], peer[24], group[24];
	if (!type)
		return bad(err, cap, "message_type must be \"group\" or \"private\"");
	int is_group = strcmp(type, "group") == 0;
	if (!is_group && strcmp(type, "private") != 0) {
		out->kind = ZC_QQ_IGNORE; /* guild and other kinds zcor does not speak */
		return 0;
	}
	if (need_id(ev, "message_id", 1, out->message_id, err, cap))
		return -1;
	int has_user = read_id(json_object_get(ev, "user_id"), 0, user, "user_id", err, cap);
	if (has_user < 0 || (!has_user && !sent))
		return has_user < 0 ? -1 : bad(err, cap, "user_id is missing: a message must say who sent it");
	int self = sent || (self_id && *self_id && strcmp(user, self_id) == 0);
	if (is_group) {
		if (need_id(ev, "group_id", 0, group, err, cap))
			return -1;
		snprintf(out->conversation, sizeof(out->conversation), "group:%s", group);
		const char *gn;
		if (opt_str(ev, "group_name", &gn, "group_name", err, cap))
			return -1;
		out->group_name = clean_name(gn, GROUP_NAME_CHARS);
	} else {
		/* the bot's own private message is to target_id */
		if (read_id(json_object_get(ev, "target_id"), 0, peer, "target_id", err, cap) < 0)
			return -1;
		const char *who = self && peer[0] ? peer : user;
		if (*who)
			snprintf(out->conversation, sizeof(out->conversation), "private:%s", who);
		const char *sub = json_string_value(json_object_get(ev, "sub_type"));
		if (sub && strcmp(sub, "group") == 0)
			temp_group(ev, out->temp_group);
	}
	if (self) {
		out->kind = ZC_QQ_SELF;
		return 0;
	}
	out->kind = ZC_QQ_MESSAGE;
	struct render r = {.text = ZC_BUF_INIT, .plain = ZC_BUF_INIT, .mentions = json_array(),
			   .images = json_array(), .self_id = self_id};
	int rc = build_message(ev, user, names, n_names, out, &r, err, cap);
	zc_buf_release(&r.text);
	zc_buf_release(&r.plain);
	json_decref(r.mentions);
	json_decref(r.images);
	return rc;
}

static int parse_notice(const json_t *ev, const char *self_id, struct zc_qq_event *out, char *err,
			size_t cap)
{
	const char *nt = json_string_value(json_object_get(ev, "notice_type"));
	char id[24];
	if (!nt)
		return bad(err, cap, "notice_type must be a string such as \"group_recall\"");
	if (strcmp(nt, "group_recall") == 0) {
		if (need_id(ev, "group_id", 0, id, err, cap) ||
		    need_id(ev, "message_id", 1, out->message_id, err, cap) ||
		    read_id(json_object_get(ev, "operator_id"), 0, out->operator_id, "operator_id", err,
			    cap) < 0 ||
		    read_id(json_object_get(ev, "user_id"), 0, out->user_id, "user_id", err, cap) < 0)
			return -1;
		snprintf(out->conversation, sizeof(out->conversation), "group:%s", id);
		out->kind = ZC_QQ_RECALL;
		return 0;
	}
	if (strcmp(nt, "friend_recall") == 0) {
		if (need_id(ev, "user_id", 0, out->user_id, err, cap) ||
		    need_id(ev, "message_id", 1, out->message_id, err, cap))
			return -1;
		snprintf(out->conversation, sizeof(out->conversation), "private:%s", out->user_id);
		memcpy(out->operator_id, out->user_id, sizeof(out->user_id));
		out->kind = ZC_QQ_RECALL;
		return 0;
	}
	const char *sub = json_string_value(json_object_get(ev, "sub_type"));
	if (strcmp(nt, "notify") != 0 || !sub || strcmp(sub, "poke") != 0) {
		out->kind = ZC_QQ_IGNORE;
		return 0;
	}
	int has_group;
	if (need_id(ev, "user_id", 0, out->user_id, err, cap) ||
	    need_id(ev, "target_id", 0, out->target_id, err, cap) ||
	    (has_group = read_id(json_object_get(ev, "group_id"), 0, id, "group_id", err, cap)) < 0)
		return -1;
	if (has_group)
		snprintf(out->conversation, sizeof(out->conversation), "group:%s", id);
	else
		snprintf(out->conversation, sizeof(out->conversation), "private:%s", out->user_id);
	/* a poke at someone else, or the bot's own, is nothing to answer */
	int at_bot = self_id && *self_id && strcmp(out->target_id, self_id) == 0 &&
		     strcmp(out->user_id, self_id) != 0;
	out->kind = at_bot ? ZC_QQ_POKE : ZC_QQ_IGNORE;
	out->poke_at_bot = at_bot;
	return 0;
}

static int parse_meta(const json_t *ev, struct zc_qq_event *out, char *err, size_t cap)
{
	const char *mt = json_string_value(json_object_get(ev, "meta_event_type"));
	const json_t *iv = json_object_get(ev, "interval");
	if (!mt)
		return bad(err, cap, "meta_event_type must be \"lifecycle\" or \"heartbeat\"");
	if (strcmp(mt, "lifecycle") != 0 && strcmp(mt, "heartbeat") != 0) {
		out->kind = ZC_QQ_IGNORE;
		return 0;
	}
	if (iv && !json_is_null(iv) &&
	    (!json_is_integer(iv) || json_integer_value(iv) < 0 || json_integer_value(iv) > INTERVAL_MAX_MS))
		return bad(err, cap, "interval must be a number of milliseconds (0 to %ld)", INTERVAL_MAX_MS);
	const char *sub = json_string_value(json_object_get(ev, "sub_type"));
	out->kind = ZC_QQ_META;
	snprintf(out->meta, sizeof(out->meta), "%s", mt);
	snprintf(out->meta_sub, sizeof(out->meta_sub), "%.*s", (int)zc_utf8_prefix(sub ? sub : "", 15),
		 sub ? sub : "");
	out->heartbeat_ms = json_is_integer(iv) ? (long)json_integer_value(iv) : 0;
	return 0;
}

int zc_qq_event_parse(json_t *event, const char *self_id, const char *const *names, int n_names,
		      struct zc_qq_event *out, char *err, size_t cap)
{
	memset(out, 0, sizeof(*out));
	if (cap)
		err[0] = '\0';
	if (!json_is_object(event))
		return bad(err, cap, "the event must be a JSON object");
	const char *post = json_string_value(json_object_get(event, "post_type"));
	int rc;
	if (!post)
		return bad(err, cap, "post_type must be a string such as \"message\"");
	if (read_time(event, &out->time_ms, err, cap))
		return -1;
	if (strcmp(post, "message") == 0 || strcmp(post, "message_sent") == 0)
		rc = parse_message(event, post, self_id, names, n_names, out, err, cap);
	else if (strcmp(post, "notice") == 0)
		rc = parse_notice(event, self_id, out, err, cap);
	else if (strcmp(post, "meta_event") == 0)
		rc = parse_meta(event, out, err, cap);
	else
		rc = 0; /* request and unknown post types: ZC_QQ_IGNORE */
	if (rc) {
		zc_qq_event_release(out);
		out->kind = ZC_QQ_IGNORE;
	}
	return rc;
}

void zc_qq_event_release(struct zc_qq_event *ev)
{
	if (!ev)
		return;
	zc_free(ev->group_name);
	json_decref(ev->message);
	json_decref(ev->images);
	memset(ev, 0, sizeof(*ev));
}

/* ---- downloading an image --------------------------------------------- */

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_rc = CURLE_FAILED_INIT;

static void curl_init(void) { curl_rc = curl_global_init(CURL_GLOBAL_DEFAULT); }

struct sink {
	struct zc_buf b;
	size_t max;
	int over;
};

static size_t on_data(char *p, size_t size, size_t n, void *ud)
{
	struct sink *s = ud;
	size_t len = size * n;
	if (s->b.len + len > s->max) {
		s->over = 1;
		return 0; /* CURLE_WRITE_ERROR */
	}
	zc_buf_add(&s->b, p, len);
	return len;
}

static int http_url(const char *url)
{
	return strncasecmp(url, "http://", 7) == 0 || strncasecmp(url, "https://", 8) == 0;
}

int zc_qq_fetch_image(const char *url, long max_bytes, int timeout_ms, unsigned char **data,
		      size_t *len, char *err, size_t cap)
{
	struct sink s = {ZC_BUF_INIT, max_bytes > 0 ? (size_t)max_bytes : 0, 0};
	CURL *h = NULL;
	long status = 0;
	int rc = -1;
	*data = NULL;
	*len = 0;
	if (cap)
		err[0] = '\0';
	if (!url || !http_url(url)) {
		bad(err, cap, "image url '%s' is not http(s); only http and https are downloaded",
		    ZC_Q(url, 60));
		goto out;
	}
	pthread_once(&curl_once, curl_init);
	if (curl_rc != CURLE_OK || !(h = curl_easy_init())) {
		bad(err, cap, "libcurl could not start");
		goto out;
	}
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(h, CURLOPT_MAXREDIRS, 3L);
	curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)s.max);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)timeout_ms);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "zcor");
	CURLcode c = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	if (c == CURLE_FILESIZE_EXCEEDED || s.over)
		bad(err, cap, "image at '%s' is larger than %ld bytes (mediaMaxBytes)", ZC_Q(url, 60),
		    max_bytes);
	else if (c == CURLE_OPERATION_TIMEDOUT)
		bad(err, cap, "image at '%s' did not arrive within %d ms (mediaTimeoutMs)", ZC_Q(url, 60),
		    timeout_ms);
	else if (c == CURLE_UNSUPPORTED_PROTOCOL)
		bad(err, cap, "image at '%s' redirects to a scheme other than http(s); refused",
		    ZC_Q(url, 60));
	else if (c != CURLE_OK)
		bad(err, cap, "image at '%s' could not be downloaded: %s", ZC_Q(url, 60),
		    curl_easy_strerror(c));
	else if (status != 200)
		bad(err, cap, "image at '%s' answered HTTP %ld", ZC_Q(url, 60), status);
	else if (!zc_image_kind(s.b.p, s.b.len))
		bad(err, cap, "download from '%s' is not a PNG, JPEG, GIF or WebP image (judged by its bytes)",
		    ZC_Q(url, 60));
	else
		rc = 0;
	if (rc == 0) {
		*len = s.b.len;
		*data = (unsigned char *)zc_buf_detach(&s.b);
	}
out:
	if (h)
		curl_easy_cleanup(h);
	zc_buf_release(&s.b);
	return rc;
}
