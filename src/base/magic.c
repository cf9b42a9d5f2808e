/*
 * magic.c — image kinds by their magic numbers (see magic.h). Base layer:
 * reads only the bytes it is given, never a name or an extension.
 */
#include "base/magic.h"

#include <string.h>

const char *zc_image_kind(const void *data, size_t n)
{
	const unsigned char *d = data;
	if (!d)
		return NULL;
	if (n >= 8 && memcmp(d, "\x89PNG\r\n\x1a\n", 8) == 0)
		return "png";
	if (n >= 3 && d[0] == 0xff && d[1] == 0xd8 && d[2] == 0xff)
		return "jpeg";
	if (n >= 6 && (memcmp(d, "GIF87a", 6) == 0 || memcmp(d, "GIF89a", 6) == 0))
		return "gif";
	if (n >= 12 && memcmp(d, "RIFF", 4) == 0 && memcmp(d + 8, "WEBP", 4) == 0)
		return "webp";
	return NULL;
}
