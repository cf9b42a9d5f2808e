/*
 * test_base.c — the base layer on its own: UTF-8 cutting and quoting,
 * and error messages that stay valid UTF-8 whatever they quote.
 */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/err.h"
#include "base/utf8.h"
#include "harness.h"

/* ZC_Q cuts on a character boundary and marks the cut. */
static void quote_cuts_on_characters(void)
{
	const char *zh = "记忆记忆记忆";
	CHECK_STR(ZC_Q(zh, 2), "记忆…");
	CHECK_STR(ZC_Q(zh, 6), zh);
	CHECK_STR(ZC_Q("abc", 3), "abc");
	CHECK_STR(ZC_Q(NULL, 3), "");
	CHECK_STR(ZC_Q("a\xff" "b", 5), "a?b");
	/* a lone lead byte at the end, and a truncated sequence */
	CHECK_STR(ZC_Q("x\xe8\xae", 5), "x??");
	CHECK(zc_utf8_valid(ZC_Q("\xed\xa0\x80 surrogate", 30), strlen(ZC_Q("\xed\xa0\x80 surrogate", 30))));
}

/* A message cut by %.Ns mid-character, or holding invalid bytes, is
 * still valid UTF-8 once zc_fail has it (issue 12, defect 3). */
static void messages_are_always_valid_utf8(void)
{
	struct zc_err e = {0};
	char name[200];
	for (int i = 0; i < 50; i++)
		memcpy(name + 3 * i, "名", 3);
	name[150] = '\0';
	zc_fail(&e, ZCOR_EINVAL, "unknown tool '%.100s'", name);
	CHECK(zc_utf8_valid(e.msg, strlen(e.msg)));
	zc_fail(&e, ZCOR_EINVAL, "bad header 'group:\xff\xfe'");
	CHECK(zc_utf8_valid(e.msg, strlen(e.msg)));
	CHECK_HAS(e.msg, "group:??");
	/* a message that fills the buffer and ends inside a character */
	char big[2100];
	for (int i = 0; i < 700; i++)
		memcpy(big + 3 * i, "忆", 3);
	big[2100 - 1] = '\0';
	zc_fail(&e, ZCOR_EINVAL, "x%s", big);
	CHECK(zc_utf8_valid(e.msg, strlen(e.msg)));
	CHECK_INT(strlen(e.msg) % 3, 1);
	zc_err_prefix(&e, "prefix '%s'", "\xc3");
	CHECK(zc_utf8_valid(e.msg, strlen(e.msg)));
}

static void lossy_and_scrub(void)
{
	char *l = zc_utf8_lossy("a\xffz");
	CHECK_STR(l, "a\xef\xbf\xbdz");
	zc_free(l);
	char s[] = "ok\xc0\xafok";
	zc_utf8_scrub(s);
	CHECK_STR(s, "ok??ok");
	CHECK_INT(zc_utf8_len("记a"), 2);
	CHECK_INT(zc_utf8_prefix("记忆a", 1), 3);
}

const struct t_case t_cases[] = {
	{"quote_cuts_on_characters", quote_cuts_on_characters},
	{"messages_are_always_valid_utf8", messages_are_always_valid_utf8},
	{"lossy_and_scrub", lossy_and_scrub},
	{0},
};
