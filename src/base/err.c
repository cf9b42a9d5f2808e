/*
 * err.c — filling and naming errors (see err.h). Base layer: it never
 * prints, never logs and never lets a message out that is not valid
 * UTF-8 or longer than its buffer (a cut falls on a character boundary).
 */
#include "base/err.h"

#include "base/utf8.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const names[] = {
	[ZCOR_OK] = "ok",
	[ZCOR_EINVAL] = "invalid_argument",
	[ZCOR_ENOTFOUND] = "not_found",
	[ZCOR_ECONFLICT] = "conflict",
	[ZCOR_EFORBIDDEN] = "forbidden",
	[ZCOR_EIO] = "io_error",
	[ZCOR_EFULL] = "disk_full",
	[ZCOR_EREADONLY] = "read_only",
	[ZCOR_EBUSY] = "busy",
	[ZCOR_ENOPROVIDER] = "no_provider",
	[ZCOR_EPROVIDER] = "provider_error",
	[ZCOR_EINTERNAL] = "internal",
	[ZCOR_EUNCERTAIN] = "maybe_applied",
	[ZCOR_EUPSTREAM] = "upstream_error",
};

const char *zcor_code_name(int code)
{
	if (code < 0 || (size_t)code >= sizeof(names) / sizeof(names[0]) || !names[code])
		return "internal";
	return names[code];
}

/* A message is always valid UTF-8, so every edge can put it into JSON:
 * a cut that split a character loses that character, and any other
 * invalid byte (quoted input) becomes '?'. */
static void finish(char *msg, size_t size)
{
	size_t len = strlen(msg);
	if (len == size - 1) {
		size_t i = len;
		while (i > 0 && ((unsigned char)msg[i - 1] & 0xC0) == 0x80 && len - i < 3)
			i--;
		if (i > 0 && ((unsigned char)msg[i - 1] & 0x80) && !zc_utf8_seq(msg + i - 1, len - i + 1))
			msg[i - 1] = '\0';
	}
	zc_utf8_scrub(msg);
}

int zc_fail(struct zc_err *e, int code, const char *fmt, ...)
{
	assert(fmt && code != ZCOR_OK); /* a failure has a code and a message */
	if (!e)
		return code;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	finish(e->msg, sizeof(e->msg));
	e->code = code;
	e->detail[0] = '\0';
	return code;
}

int zc_err_prefix(struct zc_err *e, const char *fmt, ...)
{
	if (!e)
		return 0;
	char head[256], old[sizeof(e->msg)];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(head, sizeof(head), fmt, ap);
	va_end(ap);
	memcpy(old, e->msg, sizeof(old));
	finish(head, sizeof(head));
	/* a longer message is cut (the return value says by how much; gcc's
	 * -Wformat-truncation wants it looked at), and finish() ends it on a
	 * character boundary */
	int n = snprintf(e->msg, sizeof(e->msg), "%s: %s", head, old);
	(void)n;
	finish(e->msg, sizeof(e->msg));
	return e->code;
}

void zc_err_clear(struct zc_err *e)
{
	if (e) {
		e->code = 0;
		e->msg[0] = '\0';
		e->detail[0] = '\0';
	}
}
