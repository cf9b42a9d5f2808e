/*
 * err.c — filling and naming errors (see err.h).
 */
#include "base/err.h"

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
};

const char *zcor_code_name(int code)
{
	if (code < 0 || (size_t)code >= sizeof(names) / sizeof(names[0]) || !names[code])
		return "internal";
	return names[code];
}

int zc_fail(struct zc_err *e, int code, const char *fmt, ...)
{
	if (!e)
		return code;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
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
	snprintf(e->msg, sizeof(e->msg), "%.255s: %.760s", head, old);
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
