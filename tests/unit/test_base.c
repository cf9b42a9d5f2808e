/*
 * test_base.c — the base layer on its own: UTF-8 cutting and quoting,
 * and error messages that stay valid UTF-8 whatever they quote; buffers,
 * the JSON helpers and time (issue 13, item 9).
 */
#include <fcntl.h>
#include <stdio.h>
#include <time.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <time.h>
#include <string.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/err.h"
#include "base/json.h"
#include "base/timeutil.h"
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

/* A buffer grows past any size, stays NUL-terminated, and a zeroed one is
 * an empty string; detach hands the text over and leaves it empty. */
static void buf_grows_and_detaches(void)
{
	struct zc_buf b = ZC_BUF_INIT;
	CHECK_STR(zc_buf_str(&b), "");
	for (int i = 0; i < 1000; i++)
		zc_buf_addf(&b, "%03d,", i);
	CHECK_INT(b.len, 4000);
	CHECK(b.cap > b.len);
	CHECK_INT(b.p[b.len], '\0');
	CHECK(strncmp(b.p + 3996, "999,", 4) == 0);
	zc_buf_reset(&b);
	CHECK_INT(b.len, 0);
	CHECK_STR(zc_buf_str(&b), "");
	zc_buf_adds(&b, "记忆");
	zc_buf_addc(&b, '!');
	zc_buf_add(&b, "xyz", 2);
	CHECK_STR(b.p, "记忆!xy");
	char *t = zc_buf_detach(&b);
	CHECK_STR(t, "记忆!xy");
	CHECK(b.p == NULL && b.len == 0 && b.cap == 0);
	zc_free(t);
	t = zc_buf_detach(&b); /* an empty buffer detaches as "" */
	CHECK_STR(t, "");
	zc_free(t);
	zc_buf_release(&b);
	zc_buf_release(&b);
}

/* Parse errors name the input, line and column; the helpers read and
 * write strings, times and depths as their header says. */
static void json_helpers(void)
{
	struct zc_err e = {0};
	json_t *v = NULL;
	const char *bad = "{\"a\": 1,\n  oops}";
	CHECK_INT(zc_json_parse(bad, strlen(bad), "arguments", &v, &e), ZCOR_EINVAL);
	CHECK(v == NULL);
	CHECK_HAS(e.msg, "arguments");
	CHECK_HAS(e.msg, "line 2");
	const char *good = "{\"s\":\"猫\",\"n\":2,\"t\":\"2026-01-02T03:04:05Z\"}";
	CHECK_INT(zc_json_parse(good, strlen(good), "x", &v, &e), ZCOR_OK);
	if (!v)
		return;
	CHECK_STR(zc_json_str(v, "s"), "猫");
	CHECK(zc_json_str(v, "n") == NULL);
	CHECK(zc_json_str(v, "absent") == NULL);
	CHECK_INT(zc_json_get_time(v, "t", -1), 1767323045000LL);
	CHECK_INT(zc_json_get_time(v, "s", -1), -1);
	zc_json_set_str(v, "bad", "a\xff");
	CHECK_STR(zc_json_str(v, "bad"), "a\xef\xbf\xbd");
	zc_json_set_str(v, "none", NULL);
	CHECK(json_is_null(json_object_get(v, "none")));
	zc_json_set_time(v, "when", 0);
	CHECK_STR(zc_json_str(v, "when"), "1970-01-01T00:00:00.000Z");
	zc_json_set_time(v, "never", -1);
	CHECK(json_is_null(json_object_get(v, "never")));
	char *d = zc_json_dump(json_object_get(v, "s"));
	CHECK_STR(d, "\"猫\"");
	zc_free(d);
	json_decref(v);

	struct zc_buf b = ZC_BUF_INIT;
	zc_json_buf_string(&b, "a\"b\\\n猫");
	/* a JSON literal that reads back as the same string */
	json_t *lit = json_loads(b.p, JSON_DECODE_ANY, NULL);
	CHECK_STR(json_string_value(lit), "a\"b\\\n猫");
	CHECK(strchr(b.p, '\n') == NULL);
	json_decref(lit);
	/* runs copied whole (issue 19): escapes at both ends and side by side */
	zc_buf_reset(&b);
	zc_json_buf_string(&b, "\"\x01猫\\\"tail\t");
	CHECK_STR(b.p, "\"\\\"\\u0001猫\\\\\\\"tail\\u0009\"");
	zc_buf_reset(&b);
	zc_json_buf_string(&b, "");
	CHECK_STR(b.p, "\"\"");
	zc_buf_release(&b);

	json_t *deep = json_pack("{s:[[{s:i}]]}", "a", "b", 1);
	CHECK_INT(zc_json_depth(deep), 4);
	CHECK_INT(zc_json_depth(json_object_get(json_object_get(deep, "a"), "nothing")), 0);
	json_decref(deep);

	/* a detail too big for the error is cut to fit, never dropped whole */
	json_t *ids = json_array();
	for (int i = 0; i < 200; i++)
		json_array_append_new(ids, json_sprintf("m%06d", i));
	zc_fail(&e, ZCOR_ECONFLICT, "has children");
	zc_json_err_detail(&e, json_pack("{s:s, s:o}", "reason", "has_children", "ids", ids));
	CHECK(strlen(e.detail) > 0 && strlen(e.detail) < sizeof(e.detail));
	json_t *dj = json_loads(e.detail, 0, NULL);
	CHECK(dj != NULL);
	CHECK_STR(zc_json_str(dj, "reason"), "has_children");
	CHECK(json_array_size(json_object_get(dj, "ids")) > 0);
	CHECK(json_array_size(json_object_get(dj, "ids")) < 200);
	json_decref(dj);
}

/* The byte-by-byte rule zc_utf8_valid keeps (zc_utf8_seq over the whole). */
static int utf8_valid_ref(const char *s, size_t len)
{
	for (size_t i = 0, n; i < len; i += n)
		if (!(n = zc_utf8_seq(s + i, len - i)))
			return 0;
	return 1;
}

/* issue 15: zc_utf8_valid reads runs of ASCII 8 bytes at a time; the
 * same answer as byte by byte for a NUL, a high byte, a bad or cut
 * sequence and a good one at every offset of every length to 40 */
static void issue15_utf8_valid_ascii_runs(void)
{
	static const char *const odd[] = {"\0", "\x80", "\xff", "\xc3", "\xe4\xb8", "\xc3\xa9", "名",
					  "\xf0\x9f\x98\x80", "\xed\xa0\x80", "\x7f", "\x01"};
	static const size_t odd_len[] = {1, 1, 1, 1, 2, 2, 3, 4, 3, 1, 1};
	long bad = 0;
	for (size_t k = 0; k < sizeof(odd) / sizeof(odd[0]); k++)
		for (size_t len = 0; len <= 40; len++)
			for (size_t at = 0; at + odd_len[k] <= len; at++) {
				char b[48];
				memset(b, 'a', sizeof(b));
				memcpy(b + at, odd[k], odd_len[k]);
				int want = utf8_valid_ref(b, len), got = zc_utf8_valid(b, len);
				if (got != want && bad++ < 5)
					fprintf(stderr, "odd %zu at %zu of %zu: %d, expected %d\n", k, at, len, got, want);
			}
	CHECK_INT(bad, 0);
	CHECK_INT(zc_utf8_valid("abcdefgh\0abcdefg", 17), 0);
	CHECK_INT(zc_utf8_valid("abcdefghijklmnop", 16), 1);
	CHECK_INT(zc_utf8_valid("abcdefghijklmno\x80", 16), 0);
}

/* ISO-8601 out and in: a zone is required, offsets count, nonsense is
 * refused naming the field. */
static void time_format_and_parse(void)
{
	char t[ZC_TIME_LEN];
	zc_time_format(1767323045123LL, t);
	CHECK_STR(t, "2026-01-02T03:04:05.123Z");
	zc_time_stamp(1767323045123LL, t);
	CHECK_STR(t, "20260102T030405123Z");
	struct zc_err e = {0};
	int64_t ms = 0;
	CHECK_INT(zc_time_parse("2026-01-02T03:04:05.123Z", "at", &ms, &e), ZCOR_OK);
	CHECK_INT(ms, 1767323045123LL);
	CHECK_INT(zc_time_parse("2026-01-02T11:04:05+08:00", "at", &ms, &e), ZCOR_OK);
	CHECK_INT(ms, 1767323045000LL);
	CHECK_INT(zc_time_parse("2026-01-02T03:04:05", "at", &ms, &e), ZCOR_EINVAL);
	CHECK_HAS(e.msg, "at");
	CHECK_INT(zc_time_parse("yesterday", "since", &ms, &e), ZCOR_EINVAL);
	CHECK_HAS(e.msg, "since");
	CHECK_INT(zc_time_parse("2026-13-40T00:00:00Z", "at", &ms, &e), ZCOR_EINVAL);
	char date[ZC_DATE_LEN];
	zc_time_local_date(1767323045000LL, date);
	CHECK_INT(strlen(date), 10);
	CHECK(date[4] == '-' && date[7] == '-');
	CHECK(zc_time_now_ms() > 1700000000000LL);
	double a = zc_time_mono_ms(), b2 = zc_time_mono_ms();
	CHECK(b2 >= a);
}

/* Issue 13, item 8: assert is live in every build (CMakeLists.txt takes
 * -DNDEBUG out of the release configurations), so a bug of ours — here
 * a buffer handed NULL data with a length — stops the process. */
static void issue13_8_asserts_are_on(void)
{
#ifdef NDEBUG
	CHECK(!"NDEBUG is defined: assert() is compiled out of this build");
#endif
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);
		if (devnull >= 0)
			dup2(devnull, 2);
		struct zc_buf b = ZC_BUF_INIT;
		zc_buf_add(&b, NULL, 5);
		_exit(0);
	}
	int status = 0;
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
}

/* issue 19: zc_json_dump writes our own text, not jansson's; it must be
 * jansson's json_dumps(JSON_COMPACT | JSON_ENCODE_ANY) byte for byte
 * (every answer of every tool goes through it): every escape, a NUL inside
 * a string, CJK and emoji, integers at their ends, reals, nesting and the
 * order of keys; then random byte strings (escaped as jansson does). */
static void issue19_dump_is_janssons_byte_for_byte(void)
{
	const char *doc = "{\"s\":\"q\\\"b\\\\s/\\b\\f\\n\\r\\t\\u0001\\u001f\\u007f 猫咪🐱\","
			  "\"nul\":\"a\\u0000b\",\"z\":1,\"a\":[],\"o\":{},\"n\":null,\"t\":true,"
			  "\"f\":false,\"i\":[-9223372036854775808,9223372036854775807,0,-1],"
			  "\"r\":[0.5,1e300,-2.25,3.0,1e-7,0.1],\"deep\":[[{\"k\\n\":[{}]}]],"
			  "\"键\":\"值\"}";
	json_t *v = NULL;
	struct zc_err e = {0};
	json_malloc_t jmalloc;
	json_free_t jfree;
	json_get_alloc_funcs(&jmalloc, &jfree);
	CHECK_INT(zc_json_parse(doc, strlen(doc), "x", &v, &e), ZCOR_OK);
	json_object_set_new(v, "late", json_string("after the others"));
	json_object_del(v, "z");
	json_object_set_new(v, "z", json_integer(2));
	json_t *all[] = {v, json_object_get(v, "s"), json_object_get(v, "i"), json_object_get(v, "r")};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		char *ours = zc_json_dump(all[i]), *theirs = json_dumps(all[i], JSON_COMPACT | JSON_ENCODE_ANY);
		CHECK_STR(ours, theirs);
		zc_free(ours);
		jfree(theirs);
	}
	json_decref(v);
	unsigned seed = 19;
	for (int round = 0; round < 2000; round++) {
		char raw[80];
		size_t n = (size_t)(round % 80);
		for (size_t i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			/* ASCII and controls only (every byte below 0x80 is UTF-8),
			 * mostly plain so that whole words are plain too */
			unsigned r = (seed >> 16) % 0x100;
			raw[i] = (char)(r < 0x30 ? r : r < 0x60 ? r + 0x20 : 'a' + r % 26);
		}
		json_t *str = json_stringn(raw, n), *arr = json_pack("[o,{s:O}]", str, "k", str);
		char *ours = zc_json_dump(arr), *theirs = json_dumps(arr, JSON_COMPACT | JSON_ENCODE_ANY);
		CHECK_STR(ours, theirs);
		zc_free(ours);
		jfree(theirs);
		json_decref(arr);
	}
}

/* zc_time_format and zc_buf_addll write their digits themselves (issue
 * 19: snprintf was 3,500 instructions a time, three in every search
 * hit): the same text as the C library's gmtime_r and "%lld", over every
 * millisecond of a day, its ends, a century of random instants, years
 * 0..9999 and beyond (the printf form), and the integer ends. */
static void issue19_time_and_integers_without_printf(void)
{
	unsigned long long seed = 19;
	for (int round = 0; round < 200000; round++) {
		long long ms;
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		if (round < 86400)
			ms = 1767225600000LL + round * 1000LL + round % 1000;
		else if (round < 100000)
			ms = (long long)(seed >> 20) % 4102444800000LL; /* 1970..2100 */
		else if (round < 150000) /* years -20000..40000, negative instants */
			ms = (long long)(seed >> 1) % 1900000000000000LL - 693000000000000LL;
		else {
			static const long long ENDS[] = {0, -1, 1, 999, -999, -1000, -1001, 86399999,
							 -62167219200000LL, -62167219200001LL,
							 253402300799999LL, 253402300800000LL};
			ms = ENDS[round % (sizeof(ENDS) / sizeof(ENDS[0]))];
		}
		long long secs = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
		time_t tt = (time_t)secs;
		struct tm tm;
		CHECK(gmtime_r(&tt, &tm) != NULL);
		char want[64], got[ZC_TIME_LEN];
		snprintf(want, sizeof(want), "%04lld-%02d-%02dT%02d:%02d:%02d.%03dZ", (long long)tm.tm_year + 1900,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ms - secs * 1000));
		zc_time_format(ms, got);
		if (strcmp(got, want) != 0) {
			CHECK_STR(got, want);
			break;
		}
	}
	static const long long INTS[] = {0, 1, -1, 9, 10, -10, 99, 100, 1234567890123LL, -987654321,
					 9223372036854775807LL, -9223372036854775807LL - 1};
	struct zc_buf b = ZC_BUF_INIT;
	for (size_t i = 0; i < sizeof(INTS) / sizeof(INTS[0]) + 1000; i++) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		long long v = i < sizeof(INTS) / sizeof(INTS[0]) ? INTS[i] : (long long)seed >> (seed % 63);
		char want[32];
		snprintf(want, sizeof(want), "%lld", v);
		zc_buf_reset(&b);
		zc_buf_adds(&b, "x");
		zc_buf_addll(&b, v);
		CHECK_STR(b.p + 1, want);
		CHECK_INT(b.len, strlen(want) + 1);
	}
	zc_buf_release(&b);
}

/* The escape byte by byte, as it was written before it went eight at a
 * time: jansson's form (low 0) or zc_json_buf_string's (every byte below
 * 0x20 as \u00xx). */
static void escape_slowly(struct zc_buf *b, const unsigned char *s, size_t len, int low)
{
	zc_buf_addc(b, '"');
	for (size_t i = 0; i < len; i++) {
		unsigned c = s[i];
		char t[8];
		if (c == '"' || c == '\\') {
			zc_buf_addc(b, '\\');
			zc_buf_addc(b, (char)c);
		} else if (c >= 0x20) {
			zc_buf_addc(b, (char)c);
		} else if (!low && c && strchr("\b\f\n\r\t", (int)c)) {
			zc_buf_addc(b, '\\');
			zc_buf_addc(b, "btnvfr"[c == '\b' ? 0 : c == '\t' ? 1 : c == '\n' ? 2 : c == '\f' ? 4 : 5]);
		} else {
			snprintf(t, sizeof(t), low ? "\\u%04x" : "\\u%04X", c);
			zc_buf_adds(b, t);
		}
	}
	zc_buf_addc(b, '"');
}

/* JSON string escapes eight bytes at a time (issue 19) write what the
 * byte loop wrote: every length to 70 at every offset in the buffer, with
 * the escaped bytes dense, sparse, at chunk ends, runs of them, bytes
 * above 0x7F and NUL (zc_json_buf_stringn), in both forms. */
static void issue19_escape_eight_at_a_time(void)
{
	static const unsigned char SPECIAL[] = {'"', '\\', 0, 1, '\b', '\t', '\n', 0x0b, '\f', '\r', 0x1f, 0x20,
						0x21, 0x23, 0x5b, 0x5d, 0x5c, 0x7f, 0x80, 0xa2, 0xdc, 0xe0, 0xff};
	unsigned seed = 8;
	struct zc_buf got = ZC_BUF_INIT, want = ZC_BUF_INIT;
	for (int round = 0; round < 20000; round++) {
		unsigned char raw[72];
		size_t n = (size_t)(round % 71);
		int density = round / 71 % 4; /* none, 1 in 16, 1 in 3, all */
		for (size_t i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			unsigned r = seed >> 8;
			int special = density == 3 || (density == 1 && r % 16 == 0) || (density == 2 && r % 3 == 0);
			raw[i] = special ? SPECIAL[(r >> 8) % sizeof(SPECIAL)] : (unsigned char)('a' + r % 26);
		}
		for (int low = 0; low < 2; low++) {
			size_t lead = (size_t)(round % 9);
			zc_buf_reset(&got);
			zc_buf_reset(&want);
			for (size_t i = 0; i < lead; i++) {
				zc_buf_addc(&got, 'x');
				zc_buf_addc(&want, 'x');
			}
			if (low) { /* a C string: to its first NUL */
				raw[n] = 0;
				size_t len = strlen((const char *)raw);
				zc_json_buf_string(&got, (const char *)raw);
				escape_slowly(&want, raw, len, 1);
			} else {
				zc_json_buf_stringn(&got, (const char *)raw, n);
				escape_slowly(&want, raw, n, 0);
			}
			CHECK_INT(got.len, want.len);
			CHECK_STR(got.p, want.p);
			if (got.len != want.len || strcmp(got.p, want.p) != 0)
				goto done;
		}
	}
done:
	zc_buf_release(&got);
	zc_buf_release(&want);
}

/* zc_utf8_valid checks ASCII and three-byte characters inline (issue
 * 19): the same answer as walking zc_utf8_seq, on random bytes weighted
 * to the edges (NUL, 0x7F/0x80, overlong E0 80, surrogates ED A0, EF BF
 * BF, truncated sequences, four bytes, F4 90) at every length to 12. */
static void issue19_utf8_valid_is_the_seq_walk(void)
{
	static const unsigned char B[] = {0x00, 0x01, 'a', 0x7f, 0x80, 0x9f, 0xa0, 0xbf, 0xc0, 0xc2, 0xdf,
					  0xe0, 0xe1, 0xe7, 0xed, 0xee, 0xef, 0xf0, 0xf4, 0xf5, 0xff, 0x8c, 0xab};
	unsigned seed = 7;
	for (int round = 0; round < 300000; round++) {
		unsigned char t[12];
		size_t n = (size_t)(round % 13);
		for (size_t i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			t[i] = B[(seed >> 12) % sizeof(B)];
		}
		int want = utf8_valid_ref((const char *)t, n);
		if (zc_utf8_valid((const char *)t, n) != want) {
			CHECK_INT(zc_utf8_valid((const char *)t, n), want);
			break;
		}
	}
	CHECK(zc_utf8_valid("猫咪 a", strlen("猫咪 a")));
	CHECK(!zc_utf8_valid("\xe7\x8c", 2));
	CHECK(!zc_utf8_valid("\xed\xa0\x80", 3));
	CHECK(!zc_utf8_valid("\xe0\x9f\xbf", 3));
	CHECK(!zc_utf8_valid("a\0b", 3));
}

const struct t_case t_cases[] = {
	{"issue13_8_asserts_are_on", issue13_8_asserts_are_on},
	{"buf_grows_and_detaches", buf_grows_and_detaches},
	{"json_helpers", json_helpers},
	{"issue19_dump_is_janssons_byte_for_byte", issue19_dump_is_janssons_byte_for_byte},
	{"issue15_utf8_valid_ascii_runs", issue15_utf8_valid_ascii_runs},
	{"issue19_escape_eight_at_a_time", issue19_escape_eight_at_a_time},
	{"issue19_utf8_valid_is_the_seq_walk", issue19_utf8_valid_is_the_seq_walk},
	{"time_format_and_parse", time_format_and_parse},
	{"issue19_time_and_integers_without_printf", issue19_time_and_integers_without_printf},
	{"quote_cuts_on_characters", quote_cuts_on_characters},
	{"messages_are_always_valid_utf8", messages_are_always_valid_utf8},
	{"lossy_and_scrub", lossy_and_scrub},
	{0},
};
