/*
 * err.h — errors as codes plus one formatted message, kept on a struct the
 * caller owns (no globals). Library code never prints: it fills a zc_err
 * and returns the code; the edge (CLI, HTTP, MCP) shows the message.
 * Codes are the public enum zcor_code.
 */
#ifndef ZC_ERR_H
#define ZC_ERR_H

#include "zcor.h"

struct zc_err {
	int code;
	char msg[1024];
	/* What a program may act on beside the message for people: a compact
	 * JSON object ({"reason": "has_children", "ids": […]}), "" when none.
	 * Text rather than a json_t so a zc_err stays a plain value that needs
	 * no release and may be dropped anywhere (set by zc_json_err_detail). */
	char detail[512];
};

/* Sets e (if not NULL) and returns code; any detail of an earlier
 * failure is dropped. Messages: lowercase, no final full stop, the subject
 * quoted, what to do next where it helps. */
int zc_fail(struct zc_err *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Prefixes the existing message with "what: " (the detail stays). */
int zc_err_prefix(struct zc_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void zc_err_clear(struct zc_err *e);

#endif
