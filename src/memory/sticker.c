/*
 * sticker.c — the one rule for sticker names and catalog paths (see
 * sticker.h). What counts as an image by its bytes is base/magic.h's.
 *
 * Memory layer, pure functions: no store, no files. A name is judged on
 * its own characters and on what NFKC makes of each, because a name that
 * is harmless here may reach a tool that normalises it (a full-width
 * solidus becomes '/', U+2025 becomes ".."), and a name that only looks
 * like a path misleads whoever reads the catalog. Callers never build a
 * path under stickers/ from a name or read one from the store without
 * asking this module first.
 */
#include "memory/sticker.h"

#include <stdint.h>
#include <string.h>
#include <strings.h>

#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include "base/alloc.h"
#include "base/utf8.h"
#include "text/norm.h"

#define NAME_RULE                                                                                  \
	"a sticker name becomes the file name stickers/<name>.<ext>: 1 to 64 characters without / \\ " \
	": * ? \" < > | [ ] ｜ %, spaces, control characters or look-alikes of / \\ and . (such as ／ " \
	"＼ ∕ ⧸ ． ․ …), no '..', not starting with '.' or '-' nor ending with '.', e.g. 无语"

/* Slashes and backslashes NFKC leaves as they are. */
static int slash_like(UChar32 c)
{
	static const UChar32 list[] = {0x2044, 0x2215, 0x2216, 0x29F5, 0x29F8, 0x29F9,
				       0x2571, 0x2572, 0x27CB, 0x27CD, 0x1735, 0x3033};
	for (size_t i = 0; i < sizeof(list) / sizeof(list[0]); i++)
		if (c == list[i])
			return 1;
	return 0;
}

/* Does one non-ASCII character fold (NFKC) into a '/', '\' or '.'? */
static int folds_to_path_char(const char *s, size_t n)
{
	char *f = zc_norm_n(s, n);
	int bad = strpbrk(f, "/\\.") != NULL;
	zc_free(f);
	return bad;
}

/* What is wrong with the n bytes of name s, or NULL when it is a sticker
 * name. */
static const char *name_problem_n(const char *s, size_t n)
{
	if (!s || n == 0)
		return "it is empty";
	if (memchr(s, '\0', n))
		return "it has a NUL character";
	if (!zc_utf8_valid(s, n))
		return "it is not valid UTF-8";
	if (n > ZC_STICKER_NAME_BYTES)
		return "it is longer than 200 bytes";
	if (s[0] == '.')
		return "it starts with '.'";
	if (s[0] == '-')
		return "it starts with '-'";
	if (s[n - 1] == '.')
		return "it ends with '.'";
	for (size_t i = 0; i + 1 < n; i++)
		if (s[i] == '.' && s[i + 1] == '.')
			return "it has '..'";
	size_t chars = 0;
	for (int32_t i = 0, len = (int32_t)n; i < len;) {
		int32_t at = i;
		UChar32 c;
		U8_NEXT(s, i, len, c);
		if (c < 0)
			return "it is not valid UTF-8";
		if (++chars > ZC_STICKER_NAME_CHARS)
			return "it is longer than 64 characters";
		if (c < 0x20 || c == 0x7f || (c >= 0x80 && c <= 0x9f))
			return "it has a control character";
		if (c < 0x80) {
			if (strchr("/\\", (int)c))
				return "it has a '/' or '\\' (a name is not a path)";
			if (strchr(":*?\"<>|[]%", (int)c))
				return "it has one of : * ? \" < > | [ ] %";
			if (c == ' ')
				return "it has a space";
			continue;
		}
		if (c == 0xFF5C)
			return "it has '｜' (the field separator of STICKERS.md)";
		if (u_isUWhiteSpace(c) || u_charType(c) == U_SPACE_SEPARATOR)
			return "it has a space character";
		/* bidi marks and overrides, zero-width spaces, BOM; the two
		 * joiners stay (emoji sequences need them) */
		if (u_charType(c) == U_FORMAT_CHAR && c != 0x200C && c != 0x200D)
			return "it has an invisible formatting character (such as a bidi mark)";
		if (slash_like(c) || folds_to_path_char(s + at, (size_t)(i - at)))
			return "it has a character that looks like '/', '\\' or '.'";
	}
	return NULL;
}

static const char *const image_exts[] = {".gif", ".png", ".jpg", ".jpeg", ".webp", ".bmp"};

const char *zc_sticker_file_problem(const char *file)
{
	if (!file || !*file)
		return "it is empty";
	const char *dot = strrchr(file, '.');
	int ext = 0;
	for (size_t i = 0; dot && i < sizeof(image_exts) / sizeof(image_exts[0]); i++)
		ext |= strcasecmp(dot, image_exts[i]) == 0;
	if (!ext)
		return "it does not end in .gif, .png, .jpg, .jpeg, .webp or .bmp";
	return name_problem_n(file, (size_t)(dot - file));
}

const char *zc_sticker_path_problem(const char *path)
{
	if (!path || strncmp(path, "stickers/", 9) != 0)
		return "it is not inside stickers/";
	return zc_sticker_file_problem(path + 9);
}

const char *zc_sticker_name_problem(const char *name)
{
	return name_problem_n(name, name ? strlen(name) : 0);
}

int zc_sticker_name_check(const char *field, const char *name, struct zc_err *e)
{
	const char *why = zc_sticker_name_problem(name);
	if (!why)
		return ZCOR_OK;
	return zc_fail(e, ZCOR_EINVAL, "argument '%s': '%s' is not a sticker name: %s; %s", field,
		       ZC_Q(name, 40), why, NAME_RULE);
}

int zc_sticker_file_check(const char *field, const char *file, struct zc_err *e)
{
	const char *why = zc_sticker_file_problem(file);
	if (!why)
		return ZCOR_OK;
	return zc_fail(e, ZCOR_EINVAL,
		       "argument '%s': '%s' is not a sticker file name <name>.<ext>: %s; %s", field,
		       ZC_Q(file, 40), why, NAME_RULE);
}

int zc_sticker_path_check(const char *field, const char *path, struct zc_err *e)
{
	const char *why = zc_sticker_path_problem(path);
	if (!why)
		return ZCOR_OK;
	return zc_fail(e, ZCOR_EINVAL,
		       "argument '%s': '%s' is not a collected sticker's path: %s; give the path "
		       "stickers/<name>.<ext> that qq_save_sticker returned (%s)",
		       field, ZC_Q(path, 60), why, NAME_RULE);
}

int zc_sticker_path_ok(const char *path)
{
	return zc_sticker_path_problem(path) == NULL;
}

int zc_sticker_file_ok(const char *file)
{
	return zc_sticker_file_problem(file) == NULL;
}
