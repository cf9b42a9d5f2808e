/*
 * magic.h — what kind of file bytes are, judged by their magic numbers.
 * Base layer, pure: the one sniff that the media cache, the sticker
 * import and the QQ world's image download share.
 */
#ifndef ZC_MAGIC_H
#define ZC_MAGIC_H

#include <stddef.h>

/* The kind of image the bytes are: "png", "jpeg", "gif" or "webp"; NULL
 * when they are none of these (or data is NULL). */
const char *zc_image_kind(const void *data, size_t len);

#endif
