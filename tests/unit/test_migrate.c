/*
 * test_migrate.c — `zcor migrate cognition` (SPEC §6, seed 003 从旧认知库迁移)
 * and the perceptual fingerprint it relies on. Images are drawn here and
 * written with stb_image_write, so a "re-encoded" sticker is the same
 * picture saved as a lossy JPEG, as QQ does when it forwards one.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stb_image_write.h>

#include "harness.h"
#include "memory/memory.h" /* zc_image_dhash, zc_image_distance */

#define W 96
#define H 80

/* A picture: a gradient and a few blocks placed by `seed`. */
static void draw(int seed, unsigned char *px)
{
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++) {
			unsigned char *p = px + (y * W + x) * 3;
			int v = (x * 255 / W + seed * 37) % 256;
			int block = ((x / (12 + seed % 5)) + (y / (10 + seed % 3)) + seed) % 3 == 0;
			p[0] = (unsigned char)(block ? 255 - v : v);
			p[1] = (unsigned char)((y * 255 / H + seed * 91) % 256);
			p[2] = (unsigned char)(block ? 30 : 200);
		}
}

static void write_image(const char *path, int seed, int jpeg)
{
	unsigned char px[W * H * 3];
	draw(seed, px);
	int ok = jpeg ? stbi_write_jpg(path, W, H, 3, px, 55) : stbi_write_png(path, W, H, 3, px, W * 3);
	CHECK(ok);
}

static char *path_in(const char *dir, const char *rel)
{
	char *p = NULL;
	if (asprintf(&p, "%s/%s", dir, rel) < 0)
		abort();
	return p;
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void fingerprint_sees_through_reencoding(void)
{
	const char *d = t_tmpdir();
	char *a_png = path_in(d, "a.png"), *a_jpg = path_in(d, "a.jpg"), *b_png = path_in(d, "b.png");
	write_image(a_png, 1, 0);
	write_image(a_jpg, 1, 1);
	write_image(b_png, 4, 0);
	uint64_t a = 0, a2 = 0, b = 0;
	struct zc_err e = {0};
	CHECK_INT(zc_image_dhash(a_png, &a, &e), ZCOR_OK);
	CHECK_INT(zc_image_dhash(a_jpg, &a2, &e), ZCOR_OK);
	CHECK_INT(zc_image_dhash(b_png, &b, &e), ZCOR_OK);
	CHECK(zc_image_distance(a, a2) <= ZC_IMAGE_SAME);
	CHECK(zc_image_distance(a, b) > ZC_IMAGE_SAME);
	/* not an image: a clear error */
	char *txt = path_in(d, "x.png");
	write_text(txt, "not a picture");
	CHECK_INT(zc_image_dhash(txt, &b, &e), ZCOR_EINVAL);
	free(a_png);
	free(a_jpg);
	free(b_png);
	free(txt);
}

/* A seed-003 directory with three media-keyed COGNITION.md entries and one
 * collected sticker; the store imports it and gets the cached media. */
static zcor *old_deployment(const char **dirp)
{
	const char *src = t_tmpdir();
	char *p;
	p = path_in(src, ".qq-stickers");
	mkdir(p, 0755);
	free(p);
	p = path_in(src, ".qq-stickers/猫猫.jpg");
	write_image(p, 1, 1); /* collected long ago, re-encoded by QQ */
	free(p);
	p = path_in(src, "STICKERS.md");
	write_text(p, "## 已收藏\n- 猫猫｜可爱｜.qq-stickers/猫猫.jpg\n");
	free(p);
	p = path_in(src, "COGNITION.md");
	write_text(p, "## 其它\n"
		      "- .qq-media/aaa.png｜猫猫图｜群主常发的猫猫\n"
		      "- .qq-media/bbb.png｜狗狗｜新来的狗狗表情\n"
		      "- .qq-media/ccc.jpg｜过期图｜早就没了的图\n"
		      "- 蚌埠住了｜忍不住笑了\n");
	free(p);
	zcor *z = t_open();
	const char *dir = zcor_dir(z);
	char *out = NULL;
	CHECK_INT(zcor_import_qq(z, src, NULL, NULL, &out), ZCOR_OK);
	zcor_free(out);
	p = path_in(dir, "media");
	mkdir(p, 0755);
	free(p);
	p = path_in(dir, "media/aaa.png");
	write_image(p, 1, 0); /* the same picture as 猫猫.jpg */
	free(p);
	p = path_in(dir, "media/bbb.png");
	write_image(p, 4, 0); /* a new one */
	free(p);
	*dirp = dir;
	return z;
}

static json_t *migrate(zcor *z, int apply)
{
	char *out = NULL;
	int rc = zcor_migrate_cognition(z, apply, &out);
	CHECK_INT(rc, ZCOR_OK);
	json_t *j = out ? json_loads(out, 0, NULL) : json_object();
	zcor_free(out);
	return j;
}

static const char *action_of(json_t *r, const char *media)
{
	size_t i;
	json_t *a;
	json_array_foreach(json_object_get(r, "actions"), i, a) if (strcmp(t_str(a, "media"), media) == 0) return t_str(a, "action");
	return NULL;
}

static void migrate_dry_run_changes_nothing(void)
{
	const char *dir;
	zcor *z = old_deployment(&dir);
	json_t *before = t_call(z, NULL, "qq_memory", "{\"action\":\"read\",\"path\":\"COGNITION.md\"}");
	json_t *st_before = t_call(z, NULL, "qq_memory", "{\"action\":\"read\",\"path\":\"STICKERS.md\"}");
	json_t *r = migrate(z, 0);
	CHECK(json_is_false(t_get(r, "applied")));
	CHECK_INT(json_array_size(t_get(r, "actions")), 3);
	CHECK_STR(action_of(r, ".qq-media/aaa.png"), "same-as-collected");
	CHECK_STR(action_of(r, ".qq-media/bbb.png"), "collect");
	CHECK_STR(action_of(r, ".qq-media/ccc.jpg"), "expired");
	CHECK_INT(t_int(r, "unrecognised"), 1);
	json_t *after = t_call(z, NULL, "qq_memory", "{\"action\":\"read\",\"path\":\"COGNITION.md\"}");
	json_t *st_after = t_call(z, NULL, "qq_memory", "{\"action\":\"read\",\"path\":\"STICKERS.md\"}");
	CHECK_STR(t_str(after, "text"), t_str(before, "text"));
	CHECK_STR(t_str(st_after, "text"), t_str(st_before, "text"));
	char *p = path_in(dir, "stickers/狗狗.png");
	CHECK(access(p, F_OK) != 0);
	free(p);
	json_decref(before);
	json_decref(after);
	json_decref(st_before);
	json_decref(st_after);
	json_decref(r);
	zcor_close(z);
}

static void migrate_apply_moves_entries_to_stickers(void)
{
	const char *dir;
	zcor *z = old_deployment(&dir);
	json_t *r = migrate(z, 1);
	CHECK(json_is_true(t_get(r, "applied")));
	CHECK(json_array_size(t_get(r, "backups")) == 2);
	CHECK(t_str(r, "stateBackup") != NULL);
	json_t *st = t_call(z, NULL, "qq_memory", "{\"action\":\"read\",\"path\":\"STICKERS.md\"}");
	const char *text = t_str(st, "text");
	/* the re-encoded picture joined the sticker it already was: one 猫猫 */
	CHECK(strstr(text, "- 猫猫｜") != NULL);
	CHECK(strstr(strstr(text, "- 猫猫｜") + 1, "- 猫猫｜") == NULL);
	CHECK(strstr(text, "stickers/猫猫.jpg") != NULL);
	/* the new one was collected, under 已收藏, with its extension */
	CHECK(strstr(text, "- 狗狗｜新来的狗狗表情｜stickers/狗狗.png") != NULL);
	char *p = path_in(dir, "stickers/狗狗.png");
	CHECK(access(p, F_OK) == 0);
	free(p);
	/* the lost one waits under 未收藏, marked 原图已过期 */
	const char *un = strstr(text, "## 未收藏");
	CHECK(un && strstr(un, "- 过期图｜早就没了的图｜原图已过期") != NULL);
	/* COGNITION.md keeps only the words */
	json_t *cog = t_call(z, NULL, "qq_memory", "{\"action\":\"read\",\"path\":\"COGNITION.md\"}");
	CHECK(strstr(t_str(cog, "text"), "qq-media") == NULL);
	CHECK(strstr(t_str(cog, "text"), "- 蚌埠住了｜忍不住笑了") != NULL);
	/* and there is nothing left to do */
	json_t *again = migrate(z, 1);
	CHECK_INT(json_array_size(t_get(again, "actions")), 0);
	CHECK_INT(t_int(again, "unrecognised"), 0);
	json_decref(again);
	json_decref(cog);
	json_decref(st);
	json_decref(r);
	zcor_close(z);
}

const struct t_case t_cases[] = {
	{"Q_STK_fingerprint_sees_through_reencoding", fingerprint_sees_through_reencoding},
	{"Q_STK_migrate_dry_run_changes_nothing", migrate_dry_run_changes_nothing},
	{"Q_STK_migrate_apply_moves_entries_to_stickers", migrate_apply_moves_entries_to_stickers},
	{0},
};
