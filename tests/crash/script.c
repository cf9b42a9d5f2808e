/*
 * script.c — the streams of writes of the power-loss test (script.h).
 *
 * Between them the streams write through every path zcor has to disk:
 * memory.db transactions of every size (a node, a 30-message batch, a
 * restore that replaces everything), synonyms.json and config.json (temp
 * file + fsync + rename + fsync of the directory), the media cache and
 * its eviction, stickers saved and renamed (a hard link, then the old
 * name removed after the commit), backups, mirror/ switched off and on,
 * and reads whose history records commit without an fsync.
 */
#include "script.h"

#include <jansson.h>
#include <nettle/sha2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GROUP "group:1001"
#define MEMORY_MD "conversations/group-1001/MEMORY.md"
/* 2026-11-30T08:00:00Z: every run sees the same times */
#define T0 1795939200000LL

static int64_t clock_of(void *ud)
{
	const struct pl_run *r = ud;
	return T0 + (int64_t)r->step * 60000;
}

void pl_run_init(struct pl_run *r, zcor *z, int script)
{
	memset(r, 0, sizeof(*r));
	r->script = script;
	r->step = script * 1000;
	zcor_set_clock(z, clock_of, r);
}

/* ---- deterministic content ---------------------------------------------- */

static const char *const phrases[] = {
	"断电以后确认过的记忆必须都在，",
	"没有确认的要么整条在要么整条不在，",
	"同义词和配置文件不能只写了一半，",
	"重启后数据库的完整性检查要通过，",
	"the write was acknowledged, so it must survive; ",
	"周五晚上八点固定开黑，别迟到。",
};

/* About nchars characters of text for step `seed` (caller frees). */
static char *text(int seed, size_t nchars)
{
	size_t cap = nchars * 4 + 64, len = 0;
	char *s = malloc(cap);
	if (!s)
		abort();
	len = (size_t)snprintf(s, cap, "第%d段：", seed);
	for (size_t i = 0, chars = 4; chars < nchars; i++) {
		const char *p = phrases[((size_t)seed * 7 + i) % (sizeof(phrases) / sizeof(phrases[0]))];
		size_t n = strlen(p);
		if (len + n + 1 >= cap)
			break;
		memcpy(s + len, p, n);
		len += n;
		chars += n / 3;
	}
	s[len] = '\0';
	return s;
}

/* A small PNG-signed image, different for every seed. */
static size_t image(int seed, unsigned char *out, size_t cap)
{
	static const unsigned char sig[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13,
					    'I',  'H', 'D', 'R'};
	size_t n = sizeof(sig);
	memcpy(out, sig, n);
	uint32_t x = 2166136261u ^ (uint32_t)seed;
	while (n < cap && n < 600) {
		x = x * 16777619u + 0x9e3779b9u;
		out[n++] = (unsigned char)(x >> 24);
	}
	return n;
}

static char *base64(const unsigned char *d, size_t n)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *s = malloc((n + 2) / 3 * 4 + 1), *p = s;
	if (!s)
		abort();
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)d[i] << 16 | (i + 1 < n ? (uint32_t)d[i + 1] << 8 : 0) |
			     (i + 2 < n ? d[i + 2] : 0);
		*p++ = tab[v >> 18 & 63];
		*p++ = tab[v >> 12 & 63];
		*p++ = i + 1 < n ? tab[v >> 6 & 63] : '=';
		*p++ = i + 2 < n ? tab[v & 63] : '=';
	}
	*p = '\0';
	return s;
}

/* "media/<sha256>.png" of image(seed): the reference zcor gives it. */
static void media_ref(int seed, char out[80])
{
	unsigned char img[600], dig[SHA256_DIGEST_SIZE];
	size_t n = image(seed, img, sizeof(img));
	struct sha256_ctx c;
	sha256_init(&c);
	sha256_update(&c, n, img);
	sha256_digest(&c, SHA256_DIGEST_SIZE, dig);
	char *p = out + snprintf(out, 80, "media/");
	for (int i = 0; i < SHA256_DIGEST_SIZE; i++)
		p += snprintf(p, 3, "%02x", dig[i]);
	snprintf(p, 80 - (size_t)(p - out), ".png");
}

/* ---- calls ------------------------------------------------------------------ */

/* Calls tool with args (taken); *out gets the parsed result if wanted. */
static int tool(zcor *z, const char *conv, const char *name, json_t *args, json_t **out, char *msg,
		size_t cap)
{
	char *a = json_dumps(args, JSON_COMPACT);
	json_decref(args);
	struct zcor_ctx ctx = {ZCOR_ACTOR_MODEL, conv};
	char *o = NULL;
	int rc = zcor_tool_call(z, &ctx, name, a, &o);
	free(a);
	if (rc)
		snprintf(msg, cap, "%s: %s", name, o ? o : "(no answer)");
	if (out)
		*out = rc || !o ? NULL : json_loads(o, 0, NULL);
	zcor_free(o);
	return rc;
}

/* zcor_memory_write; a new node's id goes to r->ids[slot]. */
static int write_node(struct pl_run *r, zcor *z, int slot, const char *update, const char *title,
		      size_t chars, const char *parent, char *msg, size_t cap)
{
	char *body = text(r->step, chars);
	json_t *a = json_pack("{s:s, s:s, s:[s, s]}", "title", title, "content", body, "keywords",
			      title, "断电");
	free(body);
	if (update)
		json_object_set_new(a, "id", json_string(update));
	if (parent)
		json_object_set_new(a, "parentId", json_string(parent));
	json_t *out = NULL;
	int rc = tool(z, NULL, "zcor_memory_write", a, &out, msg, cap);
	const char *id = json_string_value(json_object_get(json_object_get(out, "node"), "id"));
	if (!rc && slot >= 0)
		snprintf(r->ids[slot], sizeof(r->ids[slot]), "%s", id ? id : "?");
	json_decref(out);
	return rc;
}

/* A batch of n messages in GROUP, the first with an image when slot >= 0
 * (its reference goes to r->media[slot]). */
static int log_batch(struct pl_run *r, zcor *z, int n, size_t chars, int slot, char *msg, size_t cap)
{
	json_t *msgs = json_array();
	for (int k = 0; k < n; k++) {
		char id[32], at[40];
		snprintf(id, sizeof(id), "s%d-%d", r->step, k);
		snprintf(at, sizeof(at), "2026-11-30T%02d:%02d:%02d.000Z", 8 + r->step / 60 % 12,
			 r->step % 60, k % 60);
		char *body = text(r->step * 100 + k, chars);
		json_t *m = json_pack("{s:s, s:s, s:s, s:s, s:s}", "id", id, "time", at, "senderId",
				      k % 2 ? "20002" : "20001", "senderName", k % 2 ? "小电" : "阿停",
				      "text", body);
		free(body);
		if (k == 0 && slot >= 0) {
			unsigned char img[600];
			size_t len = image(r->step, img, sizeof(img));
			char *b = base64(img, len);
			json_object_set_new(m, "media", json_pack("[{s:s, s:s}]", "type", "image", "data", b));
			free(b);
			media_ref(r->step, r->media[slot]);
		}
		json_array_append_new(msgs, m);
	}
	json_t *batch = json_pack("{s:o}", "messages", msgs);
	char *b = json_dumps(batch, JSON_COMPACT);
	json_decref(batch);
	char *out = NULL;
	int rc = zcor_log_messages(z, NULL, GROUP, b, &out);
	free(b);
	if (rc)
		snprintf(msg, cap, "zcor_log_messages: %s", out ? out : "(no answer)");
	zcor_free(out);
	return rc;
}

static int config(zcor *z, const char *json, char *msg, size_t cap)
{
	int rc = zcor_config_set(z, json);
	if (rc)
		snprintf(msg, cap, "zcor_config_set %s: %s", json, zcor_errmsg(z));
	return rc;
}

static int synonyms(zcor *z, const char *a, const char *b, const char *c, char *msg, size_t cap)
{
	return tool(z, NULL, "zcor_synonyms_add", json_pack("{s:[s, s, s]}", "terms", a, b, c), NULL,
		    msg, cap);
}

static int upsert_memory(struct pl_run *r, zcor *z, const char *name, const char *section, char *msg,
			 size_t cap)
{
	char *meaning = text(r->step, 30);
	json_t *a = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "action", "upsert", "path", MEMORY_MD,
			      "name", name, "meaning", meaning, "section", section, "date", "2026-11-30");
	free(meaning);
	return tool(z, GROUP, "qq_memory", a, NULL, msg, cap);
}

static int upsert_cognition(zcor *z, const char *name, const char *meaning, char *msg, size_t cap)
{
	return tool(z, GROUP, "qq_memory",
		    json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "action", "upsert", "path",
			      "COGNITION.md", "name", name, "meaning", meaning, "usage", "群里断网时",
			      "type", "其它", "variants", "断线/掉了"),
		    NULL, msg, cap);
}

static int person(zcor *z, const char *id, const char *name, const char *node, char *msg, size_t cap)
{
	json_t *a = json_pack("{s:s, s:s, s:s, s:i, s:s}", "personId", id, "name", name,
			      "relationship", "群友", "affinity", 20, "reason", "一起查过断电");
	if (node)
		json_object_set_new(a, "memoryNodeId", json_string(node));
	return tool(z, NULL, "zcor_relationship_write", a, NULL, msg, cap);
}

static int important(zcor *z, const char *id, char *msg, size_t cap)
{
	return tool(z, NULL, "zcor_memory_important", json_pack("{s:s, s:b}", "id", id, "important", 1),
		    NULL, msg, cap);
}

static int backup(struct pl_run *r, zcor *z, int slot, char *msg, size_t cap)
{
	json_t *out = NULL;
	int rc = tool(z, NULL, "zcor_memory_backup", json_object(), &out, msg, cap);
	const char *f = json_string_value(json_object_get(out, "file"));
	if (!rc)
		snprintf(r->backup[slot], sizeof(r->backup[slot]), "%s", f ? f : "?");
	json_decref(out);
	return rc;
}

static int save_sticker(struct pl_run *r, zcor *z, int media, const char *name, char *msg, size_t cap)
{
	return tool(z, GROUP, "qq_save_sticker",
		    json_pack("{s:s, s:s, s:s}", "media", r->media[media], "name", name, "meaning",
			      "电没了的表情"),
		    NULL, msg, cap);
}

static int rename_sticker(zcor *z, const char *from, const char *to, char *msg, size_t cap)
{
	return tool(z, GROUP, "qq_rename_sticker", json_pack("{s:s, s:s}", "from", from, "to", to),
		    NULL, msg, cap);
}

/* ---- the streams ---------------------------------------------------------- */

static const int nsteps[] = {10, 31, 8, 1};

int pl_script_steps(int script) { return nsteps[script]; }

static int base_step(struct pl_run *r, zcor *z, int i, char *m, size_t c)
{
	switch (i) {
	case 0: return config(z, "{\"mirror\": true, \"recallChars\": 6000}", m, c);
	case 1: return write_node(r, z, 0, NULL, "电源", 2000, NULL, m, c);
	case 2: return write_node(r, z, 1, NULL, "备用电池", 1500, NULL, m, c);
	case 3: return write_node(r, z, 2, NULL, "机房", 1800, r->ids[0], m, c);
	case 4: return write_node(r, z, 3, NULL, "电池更换", 1200, NULL, m, c);
	case 5: return synonyms(z, "断电", "停电", "掉电", m, c);
	case 6: return upsert_memory(r, z, "周五开黑", "惯例与偏好", m, c);
	case 7: return log_batch(r, z, 3, 80, 0, m, c);
	case 8: return upsert_cognition(z, "掉线", "网断了", m, c);
	default: return person(z, "10001", "阿停", NULL, m, c);
	}
}

static int main_step(struct pl_run *r, zcor *z, int i, char *m, size_t c)
{
	switch (i) {
	case 0: return write_node(r, z, 4, NULL, "断电之后", 3000, NULL, m, c);
	case 1: return log_batch(r, z, 3, 120, 1, m, c);
	case 2: return synonyms(z, "重启", "reboot", "重新启动", m, c);
	case 3: return write_node(r, z, -1, r->ids[0], "电源", 2500, NULL, m, c);
	case 4: return important(z, r->ids[4], m, c);
	case 5: return upsert_memory(r, z, "电源检查", "事实", m, c);
	case 6: return config(z, "{\"recallChars\": 5000}", m, c);
	case 7: return backup(r, z, 0, m, c); /* restored at step 28: before the sticker, whose file moves */
	case 8: return save_sticker(r, z, 1, "断电", m, c);
	case 9: return write_node(r, z, 5, NULL, "断电记录", 2000, r->ids[4], m, c);
	case 10: return tool(z, NULL, "zcor_memory_read", json_pack("{s:s}", "id", r->ids[4]), NULL, m, c);
	case 11: return rename_sticker(z, "断电", "停电", m, c);
	case 12: return person(z, "10002", "小电", r->ids[5], m, c);
	case 13: return log_batch(r, z, 30, 600, -1, m, c);
	case 14:
		return tool(z, NULL, "zcor_memory_merge",
			    json_pack("{s:[s, s], s:s, s:s, s:[s], s:s}", "ids", r->ids[1], r->ids[3], "title",
				      "电池", "content", "备用电池和它的更换记录", "keywords", "电池", "reason",
				      "同一件事"),
			    NULL, m, c);
	case 15: return write_node(r, z, -1, r->ids[4], "断电之后", 3500, NULL, m, c);
	case 16: return upsert_cognition(z, "跳闸", "电闸自己断开了", m, c);
	case 17: return config(z, "{\"mediaCacheMax\": 2}", m, c);
	case 18: return log_batch(r, z, 2, 60, 2, m, c);
	case 19: return log_batch(r, z, 2, 60, 3, m, c);
	case 20: return important(z, r->ids[2], m, c);
	case 21: return write_node(r, z, 7, NULL, "要删的", 500, NULL, m, c);
	case 22: return tool(z, NULL, "zcor_memory_delete", json_pack("{s:s}", "id", r->ids[7]), NULL, m, c);
	case 23: return config(z, "{\"mirror\": false}", m, c);
	/* a view changes with mirror/ off (it is no longer complete), then on
	 * (it is rewritten whole) */
	case 24: return upsert_memory(r, z, "镜像关着", "事实", m, c);
	case 25: return config(z, "{\"mirror\": true}", m, c);
	case 26: return upsert_memory(r, z, "镜像开着", "事实", m, c);
	case 27: return synonyms(z, "供电", "电源", "power", m, c);
	case 28:
		return tool(z, NULL, "zcor_memory_restore", json_pack("{s:s}", "backupFile", r->backup[0]),
			    NULL, m, c);
	case 29: return write_node(r, z, 10, NULL, "恢复之后", 1000, NULL, m, c);
	default: return tool(z, NULL, "zcor_memory_children", json_object(), NULL, m, c);
	}
}

static int fresh_step(struct pl_run *r, zcor *z, int i, char *m, size_t c)
{
	switch (i) {
	case 0: return write_node(r, z, 0, NULL, "第一条", 1500, NULL, m, c);
	case 1: return log_batch(r, z, 2, 80, 0, m, c);
	case 2: return save_sticker(r, z, 0, "新表情", m, c);
	case 3: return backup(r, z, 0, m, c);
	case 4: return config(z, "{\"mirror\": true}", m, c);
	case 5: return write_node(r, z, 1, NULL, "第二条", 1500, r->ids[0], m, c);
	case 6: return rename_sticker(z, "新表情", "旧表情", m, c);
	default: return synonyms(z, "初次", "第一次", "first", m, c);
	}
}

int pl_run_step(struct pl_run *r, zcor *z, int i, char *msg, size_t cap)
{
	r->step = r->script * 1000 + 1 + i;
	if (r->script == PL_SCRIPT_MAIN && i == 0) {
		/* what the base stream made: ids are a counter, the image a seed */
		for (int k = 0; k < 4; k++)
			snprintf(r->ids[k], sizeof(r->ids[k]), "m%06d", k + 1);
		media_ref(PL_SCRIPT_BASE * 1000 + 1 + 7, r->media[0]);
	}
	msg[0] = '\0';
	switch (r->script) {
	case PL_SCRIPT_BASE: return base_step(r, z, i, msg, cap);
	case PL_SCRIPT_MAIN: return main_step(r, z, i, msg, cap);
	case PL_SCRIPT_FRESH: return fresh_step(r, z, i, msg, cap);
	default: {
		/* reads the store without a history record: what a host does
		 * first after a restart */
		char *out = NULL;
		int rc = zcor_node_list(z, NULL, NULL, 20, &out);
		if (rc)
			snprintf(msg, cap, "zcor_node_list: %s", out ? out : "(no answer)");
		zcor_free(out);
		return rc;
	}
	}
}
