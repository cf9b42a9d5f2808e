/*
 * media.c — the inbound media cache (Q-STK, first half): images that
 * arrive with messages, stored once by content hash as
 * media/<sha256>.<ext> in the memory directory, evicted least recently
 * used first beyond config.json's mediaCacheMax.
 *
 * Memory layer (see media.h). The extension comes from the bytes (PNG,
 * JPEG, GIF, WebP), never from a name; nothing larger than 10 MiB is
 * taken. It never decides which messages are logged (transcript.c does)
 * and never opens a transaction of its own except for zc_media_path and
 * zc_media_read.
 *
 * What it serves is what its table knows, to whom may see it (a
 * conversation: the images of its own messages), from a regular file in
 * a real media/ directory: a link or FIFO planted there is never
 * followed, and a write replaces it instead of writing through it.
 */
#include "memory/media.h"

#include <nettle/base64.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/fs.h"
#include "base/json.h"
#include "base/magic.h"
#include "base/utf8.h"
#include "memory/sticker.h"

static void hex(const unsigned char *d, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[d[i] >> 4];
		out[2 * i + 1] = digits[d[i] & 15];
	}
	out[2 * n] = '\0';
}

void zc_sha256_hex(const void *data, size_t len, char out[65])
{
	struct sha256_ctx c;
	unsigned char d[SHA256_DIGEST_SIZE];
	sha256_init(&c);
	sha256_update(&c, len, data);
	sha256_digest(&c, sizeof(d), d);
	hex(d, sizeof(d), out);
}

/* The file extension the cache gives an image of this kind (zc_image_kind
 * reads the magic bytes), or NULL when it is none. */
static const char *sniff_ext(const unsigned char *d, size_t n)
{
	const char *k = zc_image_kind(d, n);
	return k && strcmp(k, "jpeg") == 0 ? "jpg" : k;
}

/* "media/<64 hex>.<png|jpg|gif|webp>" -> hash and ext; 0 when malformed. */
static int parse_ref(const char *ref, char hash[65], const char **ext)
{
	static const char *const exts[] = {"png", "jpg", "gif", "webp"};
	if (!ref || strncmp(ref, "media/", 6) != 0 || strlen(ref) < 6 + 64 + 2)
		return 0;
	const char *h = ref + 6;
	for (int i = 0; i < 64; i++)
		if (!((h[i] >= '0' && h[i] <= '9') || (h[i] >= 'a' && h[i] <= 'f')))
			return 0;
	if (h[64] != '.')
		return 0;
	for (size_t i = 0; i < 4; i++) {
		if (strcmp(h + 65, exts[i]) == 0) {
			memcpy(hash, h, 64);
			hash[64] = '\0';
			*ext = exts[i];
			return 1;
		}
	}
	return 0;
}

static int bad_field(struct zc_err *e, const char *field, const char *why)
{
	return zc_fail(e, ZCOR_EINVAL, "field '%s': %s", field, why);
}

static int decode_base64(const char *src, const char *field, struct zc_media_in *mi, struct zc_err *e)
{
	const char *comma = strncmp(src, "data:", 5) == 0 ? strchr(src, ',') : NULL;
	if (comma)
		src = comma + 1; /* a data: URL */
	size_t n = strlen(src);
	if (n / 4 * 3 > (size_t)ZC_MEDIA_BYTES_MAX + 3)
		return bad_field(e, field, "the image is larger than 10 MiB");
	struct base64_decode_ctx ctx;
	size_t len = BASE64_DECODE_LENGTH(n);
	mi->data = zc_malloc(len + 1);
	base64_decode_init(&ctx);
	if (!base64_decode_update(&ctx, &len, mi->data, n, src) || !base64_decode_final(&ctx))
		return bad_field(e, field, "is not valid base64; send the image bytes base64-encoded");
	mi->len = len;
	return ZCOR_OK;
}

void zc_media_in_release(struct zc_media_in *mi)
{
	if (mi)
		zc_free(mi->data);
}

/* The bytes of a host's {"file": "/abs/path"}: one message for every
 * failure, so it tells nothing about the machine's files. */
static int read_server_file(const char *file, const char *field, struct zc_media_in *mi, struct zc_err *e)
{
	char *bytes = NULL;
	struct zc_err fe = {0};
	if (file[0] == '/' && zc_read_file(file, ZC_MEDIA_BYTES_MAX, &bytes, &mi->len, &fe) == ZCOR_OK &&
	    sniff_ext((unsigned char *)bytes, mi->len)) {
		mi->data = (unsigned char *)bytes;
		return ZCOR_OK;
	}
	zc_free(bytes);
	mi->len = 0;
	return zc_fail(e, ZCOR_EINVAL,
		       "field '%s.file': cannot take an image from '%s': 'file' must be the absolute "
		       "path of a readable regular PNG, JPEG, GIF or WebP file of at most 10 MiB on "
		       "the server; or send the bytes as 'data' (base64)",
		       field, ZC_Q(file, 200));
}

/* One media item of a logged message: {"type":"image", "data": base64 |
 * "file": "/abs/path", "name"?} or a cached reference "media/<hash>.<ext>". */
int zc_media_parse(json_t *v, const char *field, int host, struct zc_media_in *mi, struct zc_err *e)
{
	memset(mi, 0, sizeof(*mi));
	if (json_is_string(v)) {
		if (!parse_ref(json_string_value(v), mi->hash, &mi->ext))
			return bad_field(e, field,
					 "a string must be a cached reference \"media/<sha256>.<ext>\"; send a "
					 "new image as {\"type\":\"image\",\"data\":\"<base64>\"}");
		return ZCOR_OK;
	}
	if (!json_is_object(v))
		return bad_field(e, field,
				 "must be {\"type\":\"image\",\"data\":\"<base64>\"}, {\"type\":\"image\","
				 "\"file\":\"/absolute/path\"} or \"media/<sha256>.<ext>\"");
	const char *k;
	json_t *x;
	json_object_foreach(v, k, x) {
		if (strcmp(k, "type") && strcmp(k, "data") && strcmp(k, "file") && strcmp(k, "name")) {
			zc_fail(e, ZCOR_EINVAL, "field '%s.%s': unknown; a media item has type, data, file, name",
				field, ZC_Q(k, 40));
			return ZCOR_EINVAL;
		}
	}
	const char *type = zc_json_str(v, "type");
	if (!type || strcmp(type, "image") != 0)
		return bad_field(e, field, "'type' must be \"image\" (the only kind cached)");
	json_t *name = json_object_get(v, "name");
	if (name && (!json_is_string(name) || strlen(json_string_value(name)) > 255))
		return bad_field(e, field, "'name' must be a string of at most 255 bytes");
	const char *data = zc_json_str(v, "data"), *file = zc_json_str(v, "file");
	int rc;
	if ((data != NULL) == (file != NULL))
		return bad_field(e, field, "give exactly one of 'data' (base64) and 'file' (an absolute path)");
	if (file && !host) {
		/* decided before the file system is asked anything */
		zc_fail(e, ZCOR_EINVAL,
			"field '%s.file': a caller bound to a conversation cannot name a file on the "
			"server (only the host can, without X-Zcor-Conversation); send the image bytes "
			"as 'data' (base64)",
			field);
		return ZCOR_EINVAL;
	}
	if (data) {
		if ((rc = decode_base64(data, field, mi, e)))
			return rc;
	} else if ((rc = read_server_file(file, field, mi, e))) {
		return rc;
	}
	if (mi->len > (size_t)ZC_MEDIA_BYTES_MAX)
		return bad_field(e, field, "the image is larger than 10 MiB");
	if (!(mi->ext = sniff_ext(mi->data, mi->len)))
		return bad_field(e, field, "is not a PNG, JPEG, GIF or WebP image (judged by its bytes)");
	zc_sha256_hex(mi->data, mi->len, mi->hash);
	return ZCOR_OK;
}

/* Stores one media item (the file once, the row's last use now); a file
 * written here is named in `written` (removed again if the batch rolls
 * back: the write lock is ours, so no other row can refer to it yet). A
 * link or FIFO planted under the file's name is replaced, never written
 * through; a planted media/ directory is refused. */
int zc_media_store(struct zc_mem *m, const struct zc_media_in *mi, int64_t now, json_t *written,
		       struct zc_err *e)
{
	struct zc_buf name = ZC_BUF_INIT;
	int rc = ZCOR_OK;
	char *dir = zc_path_join(m->dir, "media"), *path = NULL;
	zc_buf_addf(&name, "%s.%s", mi->hash, mi->ext);
	path = zc_path_join(dir, zc_buf_str(&name));
	if (mi->data && (rc = zc_dir_inside(m->dir, "media", ZC_DIR_CREATE, e)))
		goto out;
	if (mi->data && zc_file_kind(path) != ZC_FILE_REGULAR) {
		if ((rc = zc_write_file_atomic(path, mi->data, mi->len, e)))
			goto out;
		json_array_append_new(written, json_string(zc_buf_str(&name)));
	}
	sqlite3_stmt *st = zc_stmt(&m->store,
				   "INSERT INTO media(hash, ext, bytes, origin, first_seen, last_used) "
				   "VALUES(?1, ?2, ?3, NULL, ?4, ?4) "
				   "ON CONFLICT(hash) DO UPDATE SET last_used = excluded.last_used",
				   e);
	if (!st) {
		rc = e->code;
		goto out;
	}
	sqlite3_bind_text(st, 1, mi->hash, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, mi->ext, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)mi->len);
	sqlite3_bind_int64(st, 4, now);
	if (!mi->data) { /* a reference: only an existing row counts */
		sqlite3_reset(st);
		st = zc_stmt(&m->store, "UPDATE media SET last_used = ?2 WHERE hash = ?1", e);
		if (!st) {
			rc = e->code;
			goto out;
		}
		sqlite3_bind_text(st, 1, mi->hash, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, now);
	}
	int step = sqlite3_step(st);
	sqlite3_reset(st);
	if (step != SQLITE_DONE)
		rc = zc_store_fail(&m->store, step, e, "storing media");
out:
	zc_buf_release(&name);
	zc_free(dir);
	zc_free(path);
	return rc;
}

/* Deletes the rows of the least recently used media beyond the cap and
 * returns their file names (to unlink after the commit). */
int zc_media_evict(struct zc_mem *m, json_t *files, struct zc_err *e)
{
	sqlite3_stmt *st = zc_stmt(&m->store,
				   "DELETE FROM media WHERE rowid IN (SELECT rowid FROM media "
				   "ORDER BY last_used DESC, rowid DESC LIMIT -1 OFFSET ?1) "
				   "RETURNING hash, ext",
				   e);
	if (!st)
		return e->code;
	sqlite3_bind_int64(st, 1, m->conf.cfg.media_cache_max);
	int step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		char name[80];
		snprintf(name, sizeof(name), "%s.%s", (const char *)sqlite3_column_text(st, 0),
			 (const char *)sqlite3_column_text(st, 1));
		json_array_append_new(files, json_string(name));
	}
	sqlite3_reset(st);
	return step == SQLITE_DONE ? ZCOR_OK : zc_store_fail(&m->store, step, e, "evicting media");
}

void zc_media_unlink(struct zc_mem *m, json_t *files)
{
	size_t i;
	json_t *f;
	/* unlink through a planted media/ link would remove another
	 * directory's files */
	if (!json_array_size(files) || zc_dir_inside(m->dir, "media", 0, NULL))
		return;
	char *dir = zc_path_join(m->dir, "media");
	json_array_foreach(files, i, f) {
		char *p = zc_path_join(dir, json_string_value(f));
		unlink(p); /* already forgotten by the store; a leftover file is harmless */
		zc_free(p);
	}
	zc_free(dir);
}

/* ---- who may see a cached image (Q-SCOPE) -------------------------------- */

/* The rule, once: the table knows hash (with ext, when given) and conv,
 * when not NULL, has a message that refers to it. */
static int known(struct zc_mem *m, const char *conv, const char *hash, const char *ext, int *yes,
		 struct zc_err *e)
{
	*yes = 0;
	sqlite3_stmt *st = zc_stmt(&m->store,
				   "SELECT 1 FROM media WHERE hash = ?1 AND (?3 IS NULL OR ext = ?3) AND "
				   "(?2 IS NULL OR EXISTS (SELECT 1 FROM media_refs r WHERE r.hash = ?1 "
				   "AND r.conversation = ?2))",
				   e);
	if (!st)
		return e->code;
	sqlite3_bind_text(st, 1, hash, -1, SQLITE_STATIC);
	if (conv)
		sqlite3_bind_text(st, 2, conv, -1, SQLITE_STATIC);
	if (ext)
		sqlite3_bind_text(st, 3, ext, -1, SQLITE_STATIC);
	int step = sqlite3_step(st);
	sqlite3_reset(st);
	if (step != SQLITE_ROW && step != SQLITE_DONE)
		return zc_store_fail(&m->store, step, e, "looking up media");
	*yes = step == SQLITE_ROW;
	return ZCOR_OK;
}

int zc_media_visible(struct zc_mem *m, const char *conv, const char *hash, int *yes, struct zc_err *e)
{
	return known(m, conv, hash, NULL, yes, e);
}

int zc_media_check_ref(struct zc_mem *m, const char *conv, const struct zc_media_in *mi,
		       const char *field, struct zc_err *e)
{
	int yes = 0, rc;
	if (mi->data || !conv)
		return ZCOR_OK;
	if ((rc = zc_media_visible(m, conv, mi->hash, &yes, e)))
		return rc;
	if (!yes)
		return zc_fail(e, ZCOR_EINVAL,
			       "field '%s': 'media/%s.%s' is not an image of this conversation's messages; "
			       "send the image itself as {\"type\":\"image\",\"data\":\"<base64>\"}",
			       field, mi->hash, mi->ext);
	return ZCOR_OK;
}

static int not_cached(struct zc_mem *m, const char *ref, struct zc_err *e)
{
	return zc_fail(e, ZCOR_ENOTFOUND,
		       "media '%s' is not in the media cache (it keeps the last %ld images, oldest use "
		       "evicted first); ask for the image again",
		       ZC_Q(ref, 100), m->conf.cfg.media_cache_max);
}

int zc_media_lookup(struct zc_mem *m, const struct zcor_ctx *ctx, const char *ref, char **path,
		    struct zc_err *e)
{
	char hash[65];
	const char *ext = NULL;
	*path = NULL;
	if (!parse_ref(ref, hash, &ext))
		return zc_fail(e, ZCOR_EINVAL,
			       "media reference '%s' is not of the form media/<sha256>.<png|jpg|gif|webp>",
			       ZC_Q(ref ? ref : "", 100));
	int yes = 0, rc = known(m, ctx->conversation, hash, ext, &yes, e);
	if (rc)
		return rc;
	if (!yes)
		return not_cached(m, ref, e);
	/* known and visible: from here on the message may say more */
	struct zc_err de = {0};
	if (zc_dir_inside(m->dir, "media", 0, &de))
		return zc_fail(e, ZCOR_ENOTFOUND, "media '%s' cannot be read: %s (zcor doctor lists such paths)",
			       ZC_Q(ref, 100), de.msg);
	char *p = zc_path_join(m->dir, ref);
	enum zc_file_kind k = zc_file_kind(p);
	if (k != ZC_FILE_REGULAR) {
		zc_free(p);
		if (k == ZC_FILE_NONE)
			return not_cached(m, ref, e);
		return zc_fail(e, ZCOR_ENOTFOUND,
			       "media '%s' is not a regular file in media/ (a link or special file was put "
			       "there, which zcor does not follow); ask for the image again, and see zcor doctor",
			       ZC_Q(ref, 100));
	}
	*path = p;
	return ZCOR_OK;
}

static const char *mime_of(const char *ext)
{
	return !strcmp(ext, ".png")    ? "image/png"
	       : !strcmp(ext, ".jpg")  ? "image/jpeg"
	       : !strcmp(ext, ".gif")  ? "image/gif"
	       : !strcmp(ext, ".webp") ? "image/webp"
				       : "application/octet-stream";
}

int zc_media_read(struct zc_mem *m, const struct zcor_ctx *ctx, const char *ref, char **data,
		  size_t *len, const char **mime, struct zc_err *e)
{
	struct zc_buf full = ZC_BUF_INIT;
	char *path = NULL;
	*data = NULL;
	*len = 0;
	*mime = "application/octet-stream";
	zc_buf_addf(&full, "%s%s", ref && strncmp(ref, "media/", 6) == 0 ? "" : "media/", ref ? ref : "");
	int rc = zc_store_begin(&m->store, 0, e);
	if (!rc) {
		rc = zc_media_lookup(m, ctx, full.p, &path, e);
		zc_store_rollback(&m->store);
	}
	if (!rc && !(rc = zc_read_file_nofollow(path, ZC_MEDIA_BYTES_MAX, data, len, e)))
		*mime = mime_of(zc_file_ext(full.p));
	zc_free(path);
	zc_buf_release(&full);
	return rc;
}

/* What zc_media_path hands its operation (op->ud). */
struct media_call {
	const char *ref;
	char **path;
};

static int media_path_op(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	static const struct zcor_ctx host = {ZCOR_ACTOR_CLI, NULL};
	struct zc_mem *m = op->m;
	struct media_call *c = op->ud;
	const char *ref = c->ref;
	char **path = c->path;
	int rc = zc_media_lookup(m, &host, ref, path, e);
	if (rc)
		return rc;
	sqlite3_stmt *st = zc_stmt(&m->store, "UPDATE media SET last_used = ?2 WHERE hash = ?1", e);
	if (!st)
		return e->code;
	sqlite3_bind_text(st, 1, ref + 6, 64, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 2, op->now);
	int step = sqlite3_step(st);
	sqlite3_reset(st);
	return step == SQLITE_DONE ? ZCOR_OK : zc_store_fail(&m->store, step, e, "looking up media");
}

/* The cache's bookkeeping, not a call: no history record. */
static const struct zc_opdef media_path_def = {"media path", NULL, media_path_op,
					       ZC_OP_NO_HISTORY};

int zc_media_path(struct zc_mem *m, const char *ref, char **path, struct zc_err *e)
{
	static const struct zcor_ctx host = {ZCOR_ACTOR_CLI, NULL};
	struct media_call c = {ref, path};
	json_t *none = NULL;
	*path = NULL;
	int rc = zc_mem_run_ud(m, &host, &media_path_def, NULL, &c, &none, e);
	json_decref(none);
	if (rc) {
		zc_free(*path);
		*path = NULL;
	}
	return rc;
}
