/*
 * media.h — the inbound media cache (Q-STK): images that arrive with
 * messages, kept once by content hash as media/<sha256>.<ext> in the
 * memory directory, least recently used evicted beyond mediaCacheMax.
 * Memory layer; transcript.c calls it inside a logged batch's
 * transaction; the media route, qq_save_sticker and zcor_media_path
 * resolve a reference only through zc_media_lookup (scope, the table, a
 * regular file).
 */
#ifndef ZC_MEDIA_H
#define ZC_MEDIA_H

#include <jansson.h>
#include <stdint.h>

#include "memory/memory.h"

#define ZC_MEDIA_BYTES_MAX (10L << 20) /* one inbound media file */

/* One checked media item of a message. */
struct zc_media_in {
	char hash[65];       /* sha-256 of the bytes, lowercase hex */
	const char *ext;     /* "png", "jpg", "gif" or "webp", from the bytes */
	unsigned char *data; /* the bytes (owned); NULL for a reference to a cached file */
	size_t len;
};

/* SHA-256 of data as 64 lowercase hex digits (nettle). */
void zc_sha256_hex(const void *data, size_t len, char out[65]);

/*
 * Checks one media item: {"type": "image", "data": base64 (or a data:
 * URL), "name"?}, {"type": "image", "file": "/absolute/path", "name"?} or
 * a cached reference "media/<sha256>.<ext>". Decodes, sniffs and hashes
 * it into *mi (release with zc_media_in_release, also after a failure).
 * ZCOR_EINVAL names `field` ("messages[0].media[1]"). Only the host plane
 * (host set) may name a server file; whatever is wrong with one (absent,
 * a FIFO, unreadable, too big, no image) gets the same message, so the
 * answer tells nothing about the machine's files.
 */
int zc_media_parse(json_t *v, const char *field, int host, struct zc_media_in *mi, struct zc_err *e);
void zc_media_in_release(struct zc_media_in *mi);

/* Inside the caller's transaction: writes the file if the cache lacks it
 * (its name appended to `written`, so a rollback can remove it) and sets
 * the row's last use to now. A reference only refreshes an existing row. */
int zc_media_store(struct zc_mem *m, const struct zc_media_in *mi, int64_t now, json_t *written,
		   struct zc_err *e);
/* Inside the caller's transaction: deletes the rows beyond mediaCacheMax,
 * least recently used first, and appends their file names to `files`. */
int zc_media_evict(struct zc_mem *m, json_t *files, struct zc_err *e);
/* Removes the named files of media/ (after the commit, or a rollback). */
void zc_media_unlink(struct zc_mem *m, json_t *files);

/*
 * Q-SCOPE for the media cache, the one rule: a conversation sees only the
 * images of its own messages (the media_refs table, kept by triggers on
 * the log); the host plane (conv NULL) sees every cached one. Inside the
 * caller's transaction.
 */
int zc_media_visible(struct zc_mem *m, const char *conv, const char *hash, int *yes, struct zc_err *e);
/* Inside the caller's transaction, before a message of conv (a bound
 * caller's; NULL: the host) is logged: a reference-only item must be an
 * image conv already sees, else ZCOR_EINVAL naming field (a conversation
 * cannot claim another one's image by its hash). */
int zc_media_check_ref(struct zc_mem *m, const char *conv, const struct zc_media_in *mi,
		       const char *field, struct zc_err *e);
/*
 * Resolves a reference "media/<sha256>.<ext>" for ctx inside the caller's
 * transaction: the cache's table knows it, ctx may see it (zc_media_visible)
 * and media/<sha256>.<ext> is a regular file in a real media/ directory.
 * *path: the absolute path (caller frees). ZCOR_EINVAL for a malformed
 * reference; ZCOR_ENOTFOUND, with the same message, for one not cached and
 * one another conversation's; ZCOR_ENOTFOUND naming the planted file when
 * the cache knows it but the file is not a regular one. Open *path with
 * zc_read_file_nofollow.
 */
int zc_media_lookup(struct zc_mem *m, const struct zcor_ctx *ctx, const char *ref, char **path,
		    struct zc_err *e);
/* Reads a cached image for ctx (zc_media_lookup in a read transaction of
 * its own; ref with or without "media/"): *data is the caller's (zc_free),
 * *mime static. */
int zc_media_read(struct zc_mem *m, const struct zcor_ctx *ctx, const char *ref, char **data,
		  size_t *len, const char **mime, struct zc_err *e);

/*
 * The cached file of a media reference "media/<sha256hex>.<ext>" for the
 * host plane (zc_media_lookup): checks
 * the form, that the cache holds it and that the file exists, counts it
 * as a use (LRU), and sets *path to the absolute path (caller frees with
 * zc_free). ZCOR_EINVAL for a malformed reference, ZCOR_ENOTFOUND for one
 * not (or no longer) cached. One transaction of its own.
 */
int zc_media_path(struct zc_mem *m, const char *ref, char **path, struct zc_err *e);

#endif
