/*
 * media.c — the inbound media cache (Q-STK, first half): images that
 * arrive with messages, stored once by content hash as
 * media/<sha256>.<ext> in the memory directory, evicted least recently
 * used first beyond config.json's mediaCacheMax.
 *
 * Memory layer (see media.h). The extension comes from the bytes (PNG,
 * JPEG, GIF, WebP), never from a name; nothing larger than 10 MiB is
 * taken. It never decides which messages are logged (transcript.c does)
 * and never opens a transaction of its own except for zc_media_path.
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
#include "base/utf8.h"

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

static const char *sniff_ext(const unsigned char *d, size_t n)
{
	if (n >= 8 && memcmp(d, "\x89PNG\r\n\x1a\n", 8) == 0)
		return "png";
	if (n >= 3 && d[0] == 0xff && d[1] == 0xd8 && d[2] == 0xff)
		return "jpg";
	if (n >= 6 && (memcmp(d, "GIF87a", 6) == 0 || memcmp(d, "GIF89a", 6) == 0))
		return "gif";
	if (n >= 12 && memcmp(d, "RIFF", 4) == 0 && memcmp(d + 8, "WEBP", 4) == 0)
		return "webp";
	return NULL;
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

/* One media item of a logged message: {"type":"image", "data": base64 |
 * "file": "/abs/path", "name"?} or a cached reference "media/<hash>.<ext>". */
int zc_media_parse(json_t *v, const char *field, struct zc_media_in *mi, struct zc_err *e)
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
	if (data) {
		if ((rc = decode_base64(data, field, mi, e)))
			return rc;
	} else {
		if (file[0] != '/')
			return bad_field(e, field, "'file' must be an absolute path");
		char *bytes = NULL;
		struct zc_err fe = {0};
		if (zc_read_file(file, ZC_MEDIA_BYTES_MAX, &bytes, &mi->len, &fe)) {
			zc_fail(e, ZCOR_EINVAL, "field '%s': cannot read '%s': %s", field, ZC_Q(file, 200), fe.msg);
			return ZCOR_EINVAL;
		}
		mi->data = (unsigned char *)bytes;
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
 * back: the write lock is ours, so no other row can refer to it yet). */
int zc_media_store(struct zc_mem *m, const struct zc_media_in *mi, int64_t now, json_t *written,
		       struct zc_err *e)
{
	struct zc_buf name = ZC_BUF_INIT;
	int rc = ZCOR_OK;
	char *dir = zc_path_join(m->dir, "media"), *path = NULL;
	zc_buf_addf(&name, "%s.%s", mi->hash, mi->ext);
	path = zc_path_join(dir, zc_buf_str(&name));
	if (mi->data && !zc_file_exists(path)) {
		if ((rc = zc_mkdir_p(dir, e)) || (rc = zc_write_file_atomic(path, mi->data, mi->len, e)))
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
	char *dir = zc_path_join(m->dir, "media");
	json_array_foreach(files, i, f) {
		char *p = zc_path_join(dir, json_string_value(f));
		unlink(p); /* already forgotten by the store; a leftover file is harmless */
		zc_free(p);
	}
	zc_free(dir);
}

int zc_media_path(struct zc_mem *m, const char *ref, char **path, struct zc_err *e)
{
	char hash[65];
	const char *ext = NULL;
	*path = NULL;
	if (!parse_ref(ref, hash, &ext))
		return zc_fail(e, ZCOR_EINVAL,
			       "media reference '%s' is not of the form media/<sha256>.<png|jpg|gif|webp>",
			       ZC_Q(ref, 100));
	int rc = zc_store_begin(&m->store, 1, e);
	if (rc)
		return rc;
	sqlite3_stmt *st = zc_stmt(&m->store, "UPDATE media SET last_used = ?2 WHERE hash = ?1 AND ext = ?3", e);
	if (!st) {
		rc = e->code;
		goto out;
	}
	sqlite3_bind_text(st, 1, hash, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, zc_mem_now(m));
	sqlite3_bind_text(st, 3, ext, -1, SQLITE_STATIC);
	int step = sqlite3_step(st);
	sqlite3_reset(st);
	if (step != SQLITE_DONE) {
		rc = zc_store_fail(&m->store, step, e, "looking up media");
		goto out;
	}
	char *p = zc_path_join(m->dir, ref);
	if (sqlite3_changes(m->store.db) == 0 || !zc_file_exists(p)) {
		zc_free(p);
		rc = zc_fail(e, ZCOR_ENOTFOUND,
			     "media '%s' is not in the cache (it keeps the last %ld images, oldest use "
			     "evicted first); ask for the image again",
			     ref, m->conf.cfg.media_cache_max);
		goto out;
	}
	*path = p;
out:
	if (rc)
		zc_store_rollback(&m->store);
	else if ((rc = zc_store_commit(&m->store, e))) {
		zc_free(*path);
		*path = NULL;
	}
	return rc;
}
