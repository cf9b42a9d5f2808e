/*
 * qq_reply.c — a turn's reply as the OneBot messages the QQ world sends
 * (zc_qq_reply_segments in qq_event.h): text, stickers as image segments,
 * mentions as at segments, the quoted message first, long replies split.
 *
 * World layer, pure except for reading a sticker's bytes through the
 * caller's callback (the world reads them through libzcor; this file
 * never opens stickers/ itself, and with local_files only checks that the
 * file is a regular file before naming it by path). The marker is the one
 * the reply check (memory/qqmem.c's zc_sticker_reply_report) and the
 * turn (agent/turn.c) read: "[[图片:" path "]]", blanks around the path
 * ignored; a mention is "[[@" digits "]]" (docs/QQ.md), anything else in
 * double brackets is text. Lengths are in characters, never bytes, and a
 * cut never falls inside a character or an image.
 */
#include "world/qq_event.h"

#include <nettle/base64.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/fs.h"
#include "base/json.h"
#include "base/utf8.h"

#define IMG_OPEN "[[图片:"
#define AT_OPEN "[[@"
#define STICKERS "stickers/"
#define STICKER_MAX (10u << 20) /* the media cache's cap on an image */
#define AT_DIGITS 19

enum piece_kind { P_TEXT, P_IMAGE, P_AT, P_BAD /* a marker of no sticker: its path */ };

struct piece {
	enum piece_kind kind;
	char *s; /* the text, the image's file (under stickers/), the at's qq */
};

struct pieces {
	struct piece *v;
	size_t n, cap;
};

static void push(struct pieces *ps, enum piece_kind k, const char *s, size_t n)
{
	if (k == P_TEXT && !n)
		return;
	if (k == P_TEXT && ps->n && ps->v[ps->n - 1].kind == P_TEXT) {
		struct zc_buf b = ZC_BUF_INIT;
		zc_buf_adds(&b, ps->v[ps->n - 1].s);
		zc_buf_add(&b, s, n);
		zc_free(ps->v[ps->n - 1].s);
		ps->v[ps->n - 1].s = zc_buf_detach(&b);
		return;
	}
	if (ps->n == ps->cap) {
		ps->cap = ps->cap ? 2 * ps->cap : 16;
		ps->v = zc_realloc(ps->v, ps->cap * sizeof(*ps->v));
	}
	ps->v[ps->n].kind = k;
	ps->v[ps->n++].s = zc_strndup(s, n);
}

static void pieces_release(struct pieces *ps)
{
	for (size_t i = 0; i < ps->n; i++)
		zc_free(ps->v[i].s);
	zc_free(ps->v);
}

static void problem(json_t *problems, const char *fmt, const char *path, const char *why)
{
	struct zc_buf b = ZC_BUF_INIT;
	zc_buf_addf(&b, fmt, ZC_Q(path, 80), why);
	json_array_append_new(problems, zc_json_string_own(zc_buf_detach(&b)));
}

/* "[[@123456]]" at p: the length of the digits, 0 when it is not one. */
static size_t at_marker(const char *p)
{
	const char *d = p + strlen(AT_OPEN);
	size_t n = strspn(d, "0123456789");
	return n && n <= AT_DIGITS && strncmp(d + n, "]]", 2) == 0 ? n : 0;
}

/* A sticker's file name as a path component: no separator, no "..", no
 * hidden file, no control characters (the reply check has judged the
 * name already; this only keeps a path from leaving stickers/). */
static int plain_file(const char *f)
{
	if (!*f || *f == '.' || strstr(f, ".."))
		return 0;
	for (const char *p = f; *p; p++)
		if (*p == '/' || *p == '\\' || (unsigned char)*p < 0x20)
			return 0;
	return 1;
}

/* Splits the reply into text, image and at pieces (text merged), in order. */
static void tokenize(const char *reply, struct pieces *ps)
{
	const char *p = reply, *text = reply;
	while (*p) {
		if (strncmp(p, IMG_OPEN, strlen(IMG_OPEN)) == 0 && strstr(p, "]]")) {
			const char *s = p + strlen(IMG_OPEN), *end = strstr(s, "]]");
			while (s < end && (*s == ' ' || *s == '\t'))
				s++;
			const char *t = end;
			while (t > s && (t[-1] == ' ' || t[-1] == '\t'))
				t--;
			push(ps, P_TEXT, text, (size_t)(p - text));
			char *path = zc_strndup(s, (size_t)(t - s));
			const char *file = path + strlen(STICKERS);
			if (strncmp(path, STICKERS, strlen(STICKERS)) == 0 && plain_file(file))
				push(ps, P_IMAGE, file, strlen(file));
			else
				push(ps, P_BAD, path, strlen(path));
			zc_free(path);
			p = text = end + 2;
		} else if (strncmp(p, AT_OPEN, strlen(AT_OPEN)) == 0 && at_marker(p)) {
			size_t n = at_marker(p);
			push(ps, P_TEXT, text, (size_t)(p - text));
			push(ps, P_AT, p + strlen(AT_OPEN), n);
			p = text = p + strlen(AT_OPEN) + n + 2;
		} else {
			p++;
		}
	}
	push(ps, P_TEXT, text, (size_t)(p - text));
}

/* ---- segments ----------------------------------------------------------- */

static json_t *seg(const char *type, const char *key, json_t *val)
{
	return json_pack("{s:s, s:{s:o}}", "type", type, "data", key, val);
}

/* "file://" and the path, every byte outside [A-Za-z0-9-._~/] escaped, so
 * a name with a space, '#' or '%' reads back as itself. */
static char *file_uri(const char *dir, const char *file)
{
	static const char hex[] = "0123456789ABCDEF";
	char *full = zc_path_join(dir, file);
	struct zc_buf b = ZC_BUF_INIT;
	zc_buf_adds(&b, "file://");
	for (const unsigned char *p = (const unsigned char *)full; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    strchr("-._~/", *p)) {
			zc_buf_addc(&b, (char)*p);
		} else {
			zc_buf_addc(&b, '%');
			zc_buf_addc(&b, hex[*p >> 4]);
			zc_buf_addc(&b, hex[*p & 15]);
		}
	}
	zc_free(full);
	return zc_buf_detach(&b);
}

/* The image segment of a sticker, or NULL (and a problem) when its bytes
 * cannot be had. */
static json_t *image_seg(const struct zc_qq_reply_opts *o, const char *file, json_t *problems)
{
	char path[300];
	snprintf(path, sizeof(path), STICKERS "%s", file);
	if (o->local_files) {
		char *full = o->stickers_dir ? zc_path_join(o->stickers_dir, file) : NULL;
		int ok = full && zc_file_kind(full) == ZC_FILE_REGULAR;
		zc_free(full);
		if (!ok) {
			problem(problems, "[[图片: %s]]: %s; it was left out", path,
				"no such regular file in the stickers directory");
			return NULL;
		}
		return seg("image", "file", zc_json_string_own(file_uri(o->stickers_dir, file)));
	}
	char *data = NULL;
	size_t len = 0;
	if (!o->sticker || o->sticker(o->sticker_ud, file, &data, &len) != 0 || !data) {
		free(data);
		problem(problems, "[[图片: %s]]: %s; it was left out", path, "its file cannot be read");
		return NULL;
	}
	if (len > STICKER_MAX || len == 0) {
		free(data);
		problem(problems, "[[图片: %s]]: %s; it was left out", path,
			len ? "it is larger than 10 MiB" : "its file is empty");
		return NULL;
	}
	struct zc_buf b = ZC_BUF_INIT;
	zc_buf_adds(&b, "base64://");
	size_t at = b.len, n = BASE64_ENCODE_RAW_LENGTH(len);
	zc_buf_grow(&b, n + 1);
	base64_encode_raw(b.p + at, len, (const uint8_t *)data);
	b.len = at + n;
	b.p[b.len] = '\0';
	free(data);
	return seg("image", "file", zc_json_string_own(zc_buf_detach(&b)));
}

/* ---- splitting ---------------------------------------------------------- */

struct out {
	json_t *msgs;   /* the messages so far */
	json_t *cur;    /* the one being filled */
	size_t chars;   /* its text's characters */
	int content;    /* it has something besides blanks and the quote */
	int quoted;     /* it starts with the reply segment (only the first does) */
	size_t max;
};

/* Ends the message being filled; one with nothing to send keeps only its
 * quote, for the next text. */
static void flush(struct out *w)
{
	if (w->content) {
		json_array_append(w->msgs, w->cur);
		json_decref(w->cur);
		w->cur = json_array();
		w->quoted = 0;
	} else {
		while (json_array_size(w->cur) > (size_t)w->quoted)
			json_array_remove(w->cur, json_array_size(w->cur) - 1);
	}
	w->chars = 0;
	w->content = 0;
}

static void add_text(struct out *w, const char *s, size_t n)
{
	if (!n)
		return;
	char *t = zc_strndup(s, n);
	w->chars += zc_utf8_len(t);
	w->content |= t[strspn(t, " \t\r\n")] != '\0';
	json_array_append_new(w->cur, seg("text", "text", zc_json_string_own(t)));
}

/* The length of the sentence end at p, or 0: 。！？… anywhere, . ! ? when a
 * blank or the end follows (so 3.14 and a URL stay whole). */
static int sentence_end(const char *p)
{
	static const char *const ends[] = {"。", "！", "？", "…"};
	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++)
		if (strncmp(p, ends[i], strlen(ends[i])) == 0)
			return (int)strlen(ends[i]);
	if (*p && strchr(".!?", *p) && (p[1] == ' ' || p[1] == '\t' || p[1] == '\0'))
		return 1;
	return 0;
}

/* Where to cut s (n bytes) so that at most budget characters come first:
 * after the last line end within them, else after the last sentence end,
 * else 0 (the caller decides). */
static size_t soft_cut(const char *s, size_t n, size_t budget)
{
	size_t line = 0, sent = 0, chars = 0;
	for (size_t i = 0; i < n && chars < budget; chars++) {
		size_t k = zc_utf8_seq(s + i, n - i);
		int e = sentence_end(s + i);
		if (s[i] == '\n')
			line = i + 1;
		else if (e)
			sent = i + (size_t)e;
		i += k ? k : 1;
	}
	return line ? line : sent;
}

/* Adds text, starting new messages when it would pass max characters. */
static void add_long_text(struct out *w, const char *s)
{
	size_t n = strlen(s);
	while (n) {
		size_t room = w->max > w->chars ? w->max - w->chars : 0;
		size_t total = zc_utf8_len(s);
		if (total <= room) {
			add_text(w, s, n);
			return;
		}
		size_t cut = room ? soft_cut(s, n, room) : 0;
		if (!cut && w->content) {
			flush(w); /* a fresh message may have a line end within reach */
			continue;
		}
		if (!cut)
			cut = zc_utf8_prefix(s, room ? room : w->max);
		size_t keep = cut;
		while (keep && (s[keep - 1] == '\n' || s[keep - 1] == ' '))
			keep--; /* no blank line at a message's end */
		add_text(w, s, keep);
		flush(w);
		s += cut;
		n -= cut;
		while (n && (*s == '\n' || *s == '\r')) {
			s++;
			n--;
		}
	}
}

int zc_qq_reply_segments(const char *reply, const struct zc_qq_reply_opts *o, json_t **out,
			 json_t **problems, char *err, size_t cap)
{
	struct pieces ps = {NULL, 0, 0};
	json_t *probs = json_array();
	struct out w = {json_array(), json_array(), 0, 0, 0, 0};
	int rc = -1;
	*out = NULL;
	if (problems)
		*problems = NULL;
	if (cap)
		err[0] = '\0';
	if (!reply || !zc_utf8_valid(reply, strlen(reply))) {
		snprintf(err, cap, "the reply must be valid UTF-8 text");
		goto done;
	}
	w.max = o->max_chars > 0 ? (size_t)o->max_chars : (size_t)-1;
	tokenize(reply, &ps);
	if (o->quote_id && *o->quote_id) {
		json_array_append_new(w.cur, seg("reply", "id", json_string(o->quote_id)));
		w.quoted = 1;
	}
	for (size_t i = 0; i < ps.n; i++) {
		const struct piece *p = &ps.v[i];
		if (p->kind == P_TEXT) {
			add_long_text(&w, p->s);
		} else if (p->kind == P_AT) {
			json_array_append_new(w.cur, seg("at", "qq", json_string(p->s)));
			w.content = 1;
		} else if (p->kind == P_BAD) {
			problem(probs, "[[图片: %s]]: %s; it was left out", p->s,
				"only a collected sticker stickers/<name>.<ext> can be sent");
		} else {
			json_t *im = image_seg(o, p->s, probs);
			if (im) {
				json_array_append_new(w.cur, im);
				w.content = 1;
			}
		}
	}
	flush(&w);
	if (json_array_size(w.msgs) > ZC_QQ_REPLY_MESSAGES_MAX) {
		char why[160];
		snprintf(why, sizeof(why), "the reply was %zu messages long; the %d sent end with \"…\" "
			 "and the rest was left out", json_array_size(w.msgs), ZC_QQ_REPLY_MESSAGES_MAX);
		json_array_append_new(probs, json_string(why));
		while (json_array_size(w.msgs) > ZC_QQ_REPLY_MESSAGES_MAX)
			json_array_remove(w.msgs, json_array_size(w.msgs) - 1);
		json_array_append_new(json_array_get(w.msgs, ZC_QQ_REPLY_MESSAGES_MAX - 1),
				      seg("text", "text", json_string("…")));
	}
	*out = json_incref(w.msgs);
	if (problems)
		*problems = json_incref(probs);
	rc = 0;
done:
	pieces_release(&ps);
	json_decref(w.cur);
	json_decref(w.msgs);
	json_decref(probs);
	return rc;
}
