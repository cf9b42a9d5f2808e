/*
 * imagehash.c — a perceptual fingerprint of an image (a difference hash),
 * so that a sticker QQ re-encoded (other bytes, other hash, same picture)
 * is recognised as the same one (Q-STK, `zcor migrate cognition`).
 *
 * Memory layer helper. Decoding is stb_image's (PNG, JPEG, GIF first
 * frame, BMP); the hash: the picture in grey, averaged down to 9×8 cells,
 * one bit per pair of neighbours in a row (left brighter than right).
 * Re-encoding moves a few bits; a different picture about half of them.
 */
#include <stdint.h>
#include <string.h>

#include <stb_image.h>

#include "base/alloc.h"
#include "base/fs.h"
#include "memory/memory.h"

#define IMAGE_MAX_BYTES (16L << 20)
#define IMAGE_MAX_SIDE 8192

int zc_image_dhash(const char *path, uint64_t *hash, struct zc_err *e)
{
	char *data = NULL;
	size_t len = 0;
	int rc = zc_read_file_nofollow(path, IMAGE_MAX_BYTES, &data, &len, e); /* files of the directory */
	if (rc)
		return rc;
	int w = 0, h = 0, comp = 0;
	if (len > INT32_MAX || !stbi_info_from_memory((const unsigned char *)data, (int)len, &w, &h, &comp) ||
	    w <= 0 || h <= 0 || w > IMAGE_MAX_SIDE || h > IMAGE_MAX_SIDE) {
		zc_free(data);
		return zc_fail(e, ZCOR_EINVAL, "'%s' is not an image zcor can read (png, jpg, gif, bmp)", path);
	}
	unsigned char *px = stbi_load_from_memory((const unsigned char *)data, (int)len, &w, &h, &comp, 1);
	zc_free(data);
	if (!px)
		return zc_fail(e, ZCOR_EINVAL, "'%s' could not be decoded: %s", path, stbi_failure_reason());
	double cell[8][9];
	memset(cell, 0, sizeof(cell));
	for (int cy = 0; cy < 8; cy++)
		for (int cx = 0; cx < 9; cx++) {
			int x0 = cx * w / 9, x1 = (cx + 1) * w / 9, y0 = cy * h / 8, y1 = (cy + 1) * h / 8;
			if (x1 <= x0)
				x1 = x0 + 1;
			if (y1 <= y0)
				y1 = y0 + 1;
			double sum = 0;
			long n = 0;
			for (int y = y0; y < y1 && y < h; y++)
				for (int x = x0; x < x1 && x < w; x++, n++)
					sum += px[(size_t)y * (size_t)w + (size_t)x];
			cell[cy][cx] = n ? sum / (double)n : 0;
		}
	stbi_image_free(px);
	uint64_t v = 0;
	for (int cy = 0; cy < 8; cy++)
		for (int cx = 0; cx < 8; cx++)
			v = (v << 1) | (cell[cy][cx] > cell[cy][cx + 1]);
	*hash = v;
	return ZCOR_OK;
}

int zc_image_distance(uint64_t a, uint64_t b)
{
	return __builtin_popcountll(a ^ b);
}
