/*
 * config.c — config.json (see config.h).
 */
#include "memory/config.h"

#include <errno.h>
#include <string.h>

#include "base/alloc.h"
#include "base/json.h"

static void defaults(struct zc_config *c)
{
	c->recall_chars = ZC_RECALL_CHARS_DEFAULT;
	c->profile = ZC_PROFILE_SCORED;
	c->relationships = 1;
}

void zc_config_init(struct zc_confile *c, const char *path)
{
	memset(c, 0, sizeof(*c));
	c->path = zc_strdup(path);
	defaults(&c->cfg);
	c->doc = json_object();
}

void zc_config_release(struct zc_confile *c)
{
	if (!c)
		return;
	zc_free(c->path);
	json_decref(c->doc);
	memset(c, 0, sizeof(*c));
}

static int check_recall(const json_t *r, struct zc_config *out, struct zc_err *e)
{
	if (!json_is_object(r))
		return zc_fail(e, ZCOR_EINVAL, "'recall' must be an object such as {\"profile\": \"scored\"}");
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)r, k, v) {
		if (strcmp(k, "profile") == 0) {
			const char *p = json_string_value(v);
			if (p && strcmp(p, "scored") == 0)
				out->profile = ZC_PROFILE_SCORED;
			else if (p && strcmp(p, "zcor") == 0)
				out->profile = ZC_PROFILE_ZCOR;
			else
				return zc_fail(e, ZCOR_EINVAL,
					       "'recall.profile' must be \"scored\" (seed 003, the default) or "
					       "\"zcor\" (seed 000)");
		} else {
			return zc_fail(e, ZCOR_EINVAL, "unknown key 'recall.%s'; known: recall.profile", k);
		}
	}
	return ZCOR_OK;
}

int zc_config_check(const json_t *doc, struct zc_config *out, struct zc_err *e)
{
	defaults(out);
	if (!json_is_object(doc))
		return zc_fail(e, ZCOR_EINVAL, "the top level must be a JSON object");
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)doc, k, v) {
		if (strcmp(k, "recallChars") == 0) {
			if (!json_is_integer(v) || json_integer_value(v) < 0 ||
			    json_integer_value(v) > ZC_RECALL_CHARS_MAX)
				return zc_fail(e, ZCOR_EINVAL,
					       "'recallChars' must be an integer from 0 (auto-recall off) to %d",
					       ZC_RECALL_CHARS_MAX);
			out->recall_chars = (long)json_integer_value(v);
		} else if (strcmp(k, "recall") == 0) {
			int rc = check_recall(v, out, e);
			if (rc)
				return rc;
		} else if (strcmp(k, "relationships") == 0) {
			if (!json_is_boolean(v))
				return zc_fail(e, ZCOR_EINVAL, "'relationships' must be true or false");
			out->relationships = json_is_true(v);
		} else {
			return zc_fail(e, ZCOR_EINVAL,
				       "unknown key '%s'; known: recallChars, recall.profile, relationships", k);
		}
	}
	return ZCOR_OK;
}

void zc_config_refresh(struct zc_confile *c)
{
	int changed = zc_file_changed(c->path, &c->seen);
	if (changed < 0) {
		if (errno == ENOENT && c->seen.known) {
			/* the file was removed: back to the defaults */
			memset(&c->seen, 0, sizeof(c->seen));
			defaults(&c->cfg);
			json_decref(c->doc);
			c->doc = json_object();
			c->warning[0] = '\0';
		}
		return;
	}
	if (!changed)
		return;
	char *data = NULL;
	size_t len = 0;
	json_t *doc = NULL;
	struct zc_err e = {0};
	struct zc_config cfg;
	int rc = zc_read_file(c->path, ZC_CONFIG_MAX_BYTES, &data, &len, &e);
	if (!rc)
		rc = zc_json_parse(data, len, "config.json", &doc, &e);
	if (!rc)
		rc = zc_config_check(doc, &cfg, &e);
	if (rc) {
		snprintf(c->warning, sizeof(c->warning),
			 "config.json: %.480s; the last good settings stay in use until it is fixed", e.msg);
		json_decref(doc);
	} else {
		c->warning[0] = '\0';
		c->cfg = cfg;
		json_decref(c->doc);
		c->doc = doc;
	}
	zc_free(data);
}

int zc_config_set(struct zc_confile *c, const json_t *patch, struct zc_err *e)
{
	zc_config_refresh(c);
	if (!json_is_object(patch))
		return zc_fail(e, ZCOR_EINVAL, "settings must be a JSON object");
	json_t *doc = json_deep_copy(c->doc);
	json_object_update_recursive(doc, (json_t *)patch);
	struct zc_config cfg;
	int rc = zc_config_check(doc, &cfg, e);
	if (!rc) {
		char *text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		size_t n = strlen(text);
		char *withnl = zc_malloc(n + 2);
		memcpy(withnl, text, n);
		withnl[n] = '\n';
		withnl[n + 1] = '\0';
		rc = zc_write_file_atomic(c->path, withnl, n + 1, e);
		zc_free(withnl);
		zc_free(text);
	}
	if (!rc) {
		c->cfg = cfg;
		json_decref(c->doc);
		c->doc = doc;
		c->warning[0] = '\0';
		zc_file_changed(c->path, &c->seen);
	} else {
		json_decref(doc);
	}
	return rc;
}

json_t *zc_config_json(const struct zc_config *cfg)
{
	return json_pack("{s:I, s:{s:s}, s:b}", "recallChars", (json_int_t)cfg->recall_chars, "recall",
			 "profile", cfg->profile == ZC_PROFILE_ZCOR ? "zcor" : "scored", "relationships",
			 cfg->relationships);
}
