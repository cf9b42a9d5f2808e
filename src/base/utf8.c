/*
 * utf8.c — byte-level UTF-8 (see utf8.h). Base layer: pure functions;
 * never cuts inside a character, never passes an invalid byte on as text.
 */
#include "base/utf8.h"

#include <stdint.h>
#include <string.h>

#include "base/alloc.h"
#include "base/buf.h"

size_t zc_utf8_seq(const char *str, size_t len)
{
	const unsigned char *p = (const unsigned char *)str;
	if (len == 0 || p[0] == 0)
		return 0;
	unsigned c = p[0], cp;
	size_t n;
	if (c < 0x80)
		return 1;
	if ((c & 0xE0) == 0xC0) {
		n = 1;
		cp = c & 0x1F;
	} else if ((c & 0xF0) == 0xE0) {
		n = 2;
		cp = c & 0x0F;
	} else if ((c & 0xF8) == 0xF0) {
		n = 3;
		cp = c & 0x07;
	} else
		return 0;
	if (len <= n)
		return 0;
	for (size_t i = 1; i <= n; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3F);
	}
	if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10FFFF ||
	    (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return n + 1;
}

int zc_utf8_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;
	while (i < len) {
		/* a run of ASCII (no NUL) 8 bytes at a time: a WebSocket text
		 * frame is checked whole, and byte by byte that was 8,500
		 * instructions of every QQ event (callgrind, issue 15) */
		while (len - i >= 8) {
			uint64_t w;
			memcpy(&w, s + i, 8);
			if ((w & 0x8080808080808080ULL) ||
			    ((w - 0x0101010101010101ULL) & ~w & 0x8080808080808080ULL))
				break;
			i += 8;
		}
		if (i >= len)
			break;
		unsigned c = p[i];
		/* the common characters inline (every string of a search hit is
		 * checked: issue 19): ASCII but NUL, and three bytes (CJK) that
		 * are not overlong and not a surrogate; the rest as zc_utf8_seq */
		if (c - 1u < 0x7Fu) {
			i++;
			continue;
		}
		if ((c & 0xF0) == 0xE0 && len - i > 2 && (p[i + 1] & 0xC0) == 0x80 && (p[i + 2] & 0xC0) == 0x80) {
			unsigned cp = (c & 0x0Fu) << 12 | (p[i + 1] & 0x3Fu) << 6 | (p[i + 2] & 0x3Fu);
			if (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))
				return 0;
			i += 3;
			continue;
		}
		size_t n = zc_utf8_seq(s + i, len - i);
		if (!n)
			return 0;
		i += n;
	}
	return 1;
}

size_t zc_utf8_len(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		if (((unsigned char)*s & 0xC0) != 0x80)
			n++;
	return n;
}

size_t zc_utf8_prefix(const char *s, size_t max_chars)
{
	size_t i = 0, n = 0;
	while (s[i]) {
		if (((unsigned char)s[i] & 0xC0) != 0x80) {
			if (n == max_chars)
				break;
			n++;
		}
		i++;
	}
	return i;
}

char *zc_utf8_lossy(const char *s)
{
	struct zc_buf b = ZC_BUF_INIT;
	const char *p = s ? s : "";
	size_t len = strlen(p);
	while (*p) {
		size_t n = zc_utf8_seq(p, len);
		if (n) {
			zc_buf_add(&b, p, n);
		} else {
			zc_buf_adds(&b, "\xef\xbf\xbd"); /* U+FFFD */
			n = 1;
		}
		p += n;
		len -= n;
	}
	return b.p ? zc_buf_detach(&b) : zc_strdup("");
}

void zc_utf8_scrub(char *s)
{
	size_t len = strlen(s);
	while (*s) {
		size_t n = zc_utf8_seq(s, len);
		if (!n) {
			*s = '?';
			n = 1;
		}
		s += n;
		len -= n;
	}
}

const char *zc_utf8_quote(char *buf, size_t n, const char *s, size_t max_chars)
{
	static const char more[] = "\xe2\x80\xa6"; /* … */
	size_t o = 0, chars = 0, len;
	if (!s)
		s = "";
	len = strlen(s);
	while (*s) {
		size_t k = zc_utf8_seq(s, len);
		const char *src = k ? s : "?";
		size_t w = k ? k : 1;
		if (chars == max_chars || o + w + sizeof(more) > n) {
			memcpy(buf + o, more, sizeof(more) - 1);
			o += sizeof(more) - 1;
			break;
		}
		memcpy(buf + o, src, w);
		o += w;
		chars++;
		s += w;
		len -= w;
	}
	buf[o] = '\0';
	return buf;
}
