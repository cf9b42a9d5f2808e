/*
 * config.c — config.json (see config.h). Memory layer: checks and keeps
 * settings; it never acts on them (the LLM layer reads "provider").
 */
#include "memory/config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/json.h"
#include "base/utf8.h"

static void provider_defaults(struct zc_provider_config *p)
{
	memset(p, 0, sizeof(*p));
	p->connect_timeout_ms = ZC_PROVIDER_CONNECT_TIMEOUT_DEFAULT;
	p->timeout_ms = ZC_PROVIDER_TIMEOUT_DEFAULT;
	p->max_retries = ZC_PROVIDER_RETRIES_DEFAULT;
	p->max_response_bytes = ZC_PROVIDER_RESPONSE_DEFAULT;
}

static void defaults(struct zc_config *c)
{
	c->recall_chars = ZC_RECALL_CHARS_DEFAULT;
	c->profile = ZC_PROFILE_SCORED;
	c->relationships = 1;
	provider_defaults(&c->provider);
	c->memory_file_max_bytes = ZC_MEMORY_FILE_MAX_DEFAULT;
	c->memory_archive_ratio = ZC_MEMORY_ARCHIVE_RATIO_DEFAULT;
	c->view_max_bytes = ZC_VIEW_MAX_DEFAULT;
	c->bot_id[0] = '\0';
	c->private_chats = 1;
	c->media_cache_max = ZC_MEDIA_CACHE_DEFAULT;
	c->mirror = 0;
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

/* ---- provider ------------------------------------------------------- */

static const char provider_keys[] =
	"provider.baseUrl, provider.model, provider.apiKeyEnv, provider.connectTimeoutMs, "
	"provider.timeoutMs, provider.maxRetries, provider.maxResponseBytes";

/* http(s)://host[:port][/path], printable ASCII without spaces, no query
 * or fragment (the client appends /chat/completions). Stored without a
 * trailing '/'. */
static int check_base_url(const json_t *v, struct zc_provider_config *p, struct zc_err *e)
{
	static const char want[] =
		"'provider.baseUrl' must be an http:// or https:// URL such as "
		"\"http://127.0.0.1:8080/v1\" (no spaces, query or fragment, at most %d bytes)";
	const char *u = json_string_value(v);
	size_t n = u ? strlen(u) : 0;
	if (!u || n == 0 || n >= sizeof(p->base_url))
		return zc_fail(e, ZCOR_EINVAL, want, ZC_PROVIDER_URL_MAX - 1);
	const char *host = NULL;
	if (strncmp(u, "http://", 7) == 0)
		host = u + 7;
	else if (strncmp(u, "https://", 8) == 0)
		host = u + 8;
	if (!host || *host == '\0' || *host == '/')
		return zc_fail(e, ZCOR_EINVAL, want, ZC_PROVIDER_URL_MAX - 1);
	for (const char *c = u; *c; c++) {
		unsigned char ch = (unsigned char)*c;
		if (ch <= 0x20 || ch >= 0x7f || ch == '?' || ch == '#')
			return zc_fail(e, ZCOR_EINVAL, want, ZC_PROVIDER_URL_MAX - 1);
	}
	while (n > (size_t)(host - u) && u[n - 1] == '/')
		n--;
	memcpy(p->base_url, u, n);
	p->base_url[n] = '\0';
	return ZCOR_OK;
}

static int check_model(const json_t *v, struct zc_provider_config *p, struct zc_err *e)
{
	const char *s = json_string_value(v);
	size_t n = s ? strlen(s) : 0;
	int ok = n > 0 && n < sizeof(p->model);
	for (size_t i = 0; ok && i < n; i++)
		ok = (unsigned char)s[i] >= 0x20 && s[i] != 0x7f;
	if (!ok)
		return zc_fail(e, ZCOR_EINVAL,
			       "'provider.model' must be the model's name as the server knows it, such as "
			       "\"gpt-4o-mini\" (1 to %d bytes, no control characters)",
			       ZC_PROVIDER_MODEL_MAX - 1);
	memcpy(p->model, s, n + 1);
	return ZCOR_OK;
}

static int check_key_env(const json_t *v, struct zc_provider_config *p, struct zc_err *e)
{
	const char *s = json_string_value(v);
	size_t n = s ? strlen(s) : 0;
	int ok = n > 0 && n < sizeof(p->api_key_env) && (isalpha((unsigned char)s[0]) || s[0] == '_');
	for (size_t i = 0; ok && i < n; i++)
		ok = isalnum((unsigned char)s[i]) || s[i] == '_';
	if (!ok)
		return zc_fail(e, ZCOR_EINVAL,
			       "'provider.apiKeyEnv' must be the name of an environment variable holding the "
			       "API key, such as \"OPENAI_API_KEY\" (letters, digits and _, at most %d)",
			       ZC_PROVIDER_ENV_MAX - 1);
	memcpy(p->api_key_env, s, n + 1);
	return ZCOR_OK;
}

static int check_range(const json_t *v, const char *key, long lo, long hi, const char *unit,
		       long *out, struct zc_err *e)
{
	if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
		return zc_fail(e, ZCOR_EINVAL, "'provider.%s' must be an integer from %ld to %ld%s", key,
			       lo, hi, unit);
	*out = (long)json_integer_value(v);
	return ZCOR_OK;
}

static int check_provider(const json_t *o, struct zc_provider_config *p, struct zc_err *e)
{
	provider_defaults(p);
	if (json_is_null(o))
		return ZCOR_OK; /* "provider": null switches it off */
	if (!json_is_object(o))
		return zc_fail(e, ZCOR_EINVAL,
			       "'provider' must be an object such as {\"baseUrl\": "
			       "\"http://127.0.0.1:8080/v1\", \"model\": \"name\"}, or null for none");
	int rc = ZCOR_OK, have_url = 0, have_model = 0;
	long retries = p->max_retries;
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)o, k, v) {
		if (strcmp(k, "baseUrl") == 0) {
			rc = check_base_url(v, p, e);
			have_url = 1;
		} else if (strcmp(k, "model") == 0) {
			rc = check_model(v, p, e);
			have_model = 1;
		} else if (strcmp(k, "apiKeyEnv") == 0) {
			rc = check_key_env(v, p, e);
		} else if (strcmp(k, "apiKey") == 0) {
			rc = zc_fail(e, ZCOR_EINVAL,
				     "'provider.apiKey' is not allowed: the API key never goes into config.json; "
				     "put it in an environment variable and name that variable in "
				     "'provider.apiKeyEnv'");
		} else if (strcmp(k, "connectTimeoutMs") == 0) {
			rc = check_range(v, k, 100, 120000, " (milliseconds)", &p->connect_timeout_ms, e);
		} else if (strcmp(k, "timeoutMs") == 0) {
			rc = check_range(v, k, 1000, 600000, " (milliseconds, retries included)",
					 &p->timeout_ms, e);
		} else if (strcmp(k, "maxRetries") == 0) {
			rc = check_range(v, k, 0, 10, "", &retries, e);
		} else if (strcmp(k, "maxResponseBytes") == 0) {
			rc = check_range(v, k, 1024, 64L << 20, " (1 KiB to 64 MiB)", &p->max_response_bytes,
					 e);
		} else {
			rc = zc_fail(e, ZCOR_EINVAL, "unknown key 'provider.%s'; known: %s", k, provider_keys);
		}
		if (rc)
			return rc;
	}
	if (!have_url || !have_model)
		return zc_fail(e, ZCOR_EINVAL, "'provider.%s' is required when 'provider' is set",
			       have_url ? "model" : "baseUrl");
	p->max_retries = (int)retries;
	p->enabled = 1;
	return ZCOR_OK;
}

/* ---- admission (Q-LOG) ------------------------------------------------ */

/* An id as it appears after "group:" / "private:" in a conversation key. */
static int id_ok(const char *s, size_t max)
{
	size_t n = s ? strlen(s) : 0;
	int ok = n > 0 && n < max;
	for (size_t i = 0; ok && i < n; i++)
		ok = isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '-' || s[i] == '.';
	return ok;
}

static int check_id_list(const json_t *v, const char *key, struct zc_err *e)
{
	if (!json_is_array(v) || json_array_size(v) > ZC_ADMISSION_LIST_MAX)
		return zc_fail(e, ZCOR_EINVAL,
			       "'admission.%s' must be an array of ids such as [\"100000001\"] (at most %d; "
			       "null or left out admits every one)",
			       key, ZC_ADMISSION_LIST_MAX);
	size_t i;
	json_t *x;
	json_array_foreach(v, i, x) {
		if (!id_ok(json_string_value(x), 65))
			return zc_fail(e, ZCOR_EINVAL,
				       "'admission.%s[%zu]' must be an id string (letters, digits, _ - ., at "
				       "most 64), such as \"100000001\"",
				       key, i);
	}
	return ZCOR_OK;
}

static int check_admission(const json_t *o, struct zc_config *out, struct zc_err *e)
{
	if (!json_is_object(o))
		return zc_fail(e, ZCOR_EINVAL,
			       "'admission' must be an object such as {\"privateChats\": true, \"groups\": "
			       "[\"100000001\"]}");
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)o, k, v) {
		int rc = ZCOR_OK;
		if (strcmp(k, "privateChats") == 0) {
			if (!json_is_boolean(v))
				return zc_fail(e, ZCOR_EINVAL, "'admission.privateChats' must be true or false");
			out->private_chats = json_is_true(v);
		} else if (strcmp(k, "groups") == 0 || strcmp(k, "privates") == 0) {
			if (!json_is_null(v)) /* null: no allow-list, as when absent */
				rc = check_id_list(v, k, e);
		} else {
			rc = zc_fail(e, ZCOR_EINVAL,
				     "unknown key 'admission.%s'; known: admission.privateChats, "
				     "admission.groups, admission.privates",
				     k);
		}
		if (rc)
			return rc;
	}
	return ZCOR_OK;
}

int zc_config_allowed(const struct zc_confile *c, const char *list, const char *id)
{
	json_t *l = json_object_get(json_object_get(c->doc, "admission"), list);
	if (!json_is_array(l))
		return 1;
	size_t i;
	json_t *x;
	json_array_foreach(l, i, x) {
		if (json_is_string(x) && strcmp(json_string_value(x), id) == 0)
			return 1;
	}
	return 0;
}

/* ---- the document ---------------------------------------------------- */

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
		} else if (strcmp(k, "provider") == 0) {
			int rc = check_provider(v, &out->provider, e);
			if (rc)
				return rc;
		} else if (strcmp(k, "memoryFileMaxBytes") == 0 || strcmp(k, "viewMaxBytes") == 0) {
			if (!json_is_integer(v) || json_integer_value(v) < 1024 ||
			    json_integer_value(v) > ZC_VIEW_MAX_LIMIT)
				return zc_fail(e, ZCOR_EINVAL, "'%s' must be an integer from 1024 to %ld (bytes)",
					       k, ZC_VIEW_MAX_LIMIT);
			if (k[0] == 'm')
				out->memory_file_max_bytes = (long)json_integer_value(v);
			else
				out->view_max_bytes = (long)json_integer_value(v);
		} else if (strcmp(k, "mirror") == 0) {
			if (!json_is_boolean(v))
				return zc_fail(e, ZCOR_EINVAL,
					       "'mirror' must be true or false (keep mirror/ current with the "
					       "views as files)");
			out->mirror = json_is_true(v);
		} else if (strcmp(k, "memoryArchiveRatio") == 0) {
			double r = json_is_number(v) ? json_number_value(v) : -1;
			if (!(r >= 0.1 && r <= 1.0))
				return zc_fail(e, ZCOR_EINVAL,
					       "'memoryArchiveRatio' must be a number from 0.1 to 1 (the share "
					       "of memoryFileMaxBytes above which old entries move to the archive)");
			out->memory_archive_ratio = r;
		} else if (strcmp(k, "botId") == 0) {
			if (json_is_null(v)) {
				out->bot_id[0] = '\0';
			} else if (!id_ok(json_string_value(v), sizeof(out->bot_id))) {
				return zc_fail(e, ZCOR_EINVAL,
					       "'botId' must be the bot's own sender id as a string, such as "
					       "\"3000000001\" (letters, digits, _ - ., at most 64), or null");
			} else {
				snprintf(out->bot_id, sizeof(out->bot_id), "%s", json_string_value(v));
			}
		} else if (strcmp(k, "admission") == 0) {
			int rc = check_admission(v, out, e);
			if (rc)
				return rc;
		} else if (strcmp(k, "mediaCacheMax") == 0) {
			if (!json_is_integer(v) || json_integer_value(v) < 1 ||
			    json_integer_value(v) > ZC_MEDIA_CACHE_MAX)
				return zc_fail(e, ZCOR_EINVAL,
					       "'mediaCacheMax' must be an integer from 1 to %d (inbound media "
					       "files kept; default %d)",
					       ZC_MEDIA_CACHE_MAX, ZC_MEDIA_CACHE_DEFAULT);
			out->media_cache_max = (long)json_integer_value(v);
		} else {
			return zc_fail(e, ZCOR_EINVAL,
				       "unknown key '%s'; known: recallChars, recall.profile, relationships, "
				       "provider, botId, admission, mediaCacheMax, memoryFileMaxBytes, "
				       "memoryArchiveRatio, viewMaxBytes, mirror",
				       k);
		}
	}
	return ZCOR_OK;
}

/* Reads and checks a config file; *doc and *cfg on success. */
static int load(const char *path, json_t **doc, struct zc_config *cfg, char **data, size_t *len,
		struct zc_err *e)
{
	*doc = NULL;
	int rc = zc_read_file_nofollow(path, ZC_CONFIG_MAX_BYTES, data, len, e);
	if (!rc)
		rc = zc_json_parse(*data, *len, "config.json", doc, e);
	if (!rc)
		rc = zc_config_check(*doc, cfg, e);
	if (rc) {
		json_decref(*doc);
		*doc = NULL;
	}
	return rc;
}

static char *last_good_path(const struct zc_confile *c)
{
	size_t n = strlen(c->path) + sizeof(ZC_CONFIG_LAST_GOOD_SUFFIX);
	char *p = zc_malloc(n);
	snprintf(p, n, "%s%s", c->path, ZC_CONFIG_LAST_GOOD_SUFFIX);
	return p;
}

/* Keeps a copy of valid settings beside config.json (when it differs). */
static void save_last_good(const struct zc_confile *c, const char *data, size_t len)
{
	char *path = last_good_path(c), *old = NULL;
	size_t oldlen = 0;
	struct zc_err e = {0};
	if (zc_read_file_nofollow(path, ZC_CONFIG_MAX_BYTES, &old, &oldlen, &e) || oldlen != len ||
	    memcmp(old, data, len) != 0)
		zc_write_file_atomic(path, data, len, &e); /* best effort: a copy */
	zc_free(old);
	zc_free(path);
}

void zc_config_refresh(struct zc_confile *c)
{
	int changed = zc_file_changed(c->path, &c->seen);
	if (changed < 0) {
		if (errno == ENOENT) {
			/* no file: the defaults are the settings (and stay the
			 * good ones if a broken file appears later) */
			c->good = 1;
			if (c->seen.known) { /* it was removed */
				memset(&c->seen, 0, sizeof(c->seen));
				defaults(&c->cfg);
				json_decref(c->doc);
				c->doc = json_object();
				c->warning[0] = '\0';
			}
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
	int rc = load(c->path, &doc, &cfg, &data, &len, &e);
	if (!rc) {
		c->warning[0] = '\0';
		c->cfg = cfg;
		json_decref(c->doc);
		c->doc = doc;
		c->good = 1;
		save_last_good(c, data, len);
		zc_free(data);
		return;
	}
	zc_free(data);
	const char *kept = "the last good settings stay in use";
	if (!c->good) {
		/* a process starting on a broken file: the copy of the last
		 * valid one, if there is one */
		char *path = last_good_path(c), *copy = NULL;
		size_t clen = 0;
		struct zc_err ce = {0};
		if (load(path, &doc, &cfg, &copy, &clen, &ce) == ZCOR_OK) {
			c->cfg = cfg;
			json_decref(c->doc);
			c->doc = doc;
			c->good = 1;
			kept = "the last good settings (config.json" ZC_CONFIG_LAST_GOOD_SUFFIX ") are in use";
		} else {
			kept = "the defaults are in use (no valid earlier config.json was kept)";
		}
		zc_free(copy);
		zc_free(path);
	}
	char q[441]; /* with the rest of the sentence, fits c->warning */
	snprintf(c->warning, sizeof(c->warning), "config.json: %s; %s until it is fixed",
		 zc_utf8_quote(q, sizeof(q), e.msg, sizeof(q)), kept);
}

/*
 * Serialises config.json's writers (every zcor process, every handle):
 * an exclusive flock on the memory directory itself, held from reading
 * the file to renaming its new version into place, so a PUT never merges
 * into a copy another writer has just replaced (two PUTs of different
 * keys lost one). flock, not fcntl: its locks belong to the open file,
 * so closing this descriptor cannot drop a lock SQLite holds. Returns
 * the descriptor to unlock_dir, or -1 (then unserialised: best effort on
 * a file system without flock).
 */
static int lock_dir(const char *path)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if ((size_t)(slash - path) < sizeof(dir))
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	else
		return -1;
	int fd = open(*dir ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while (flock(fd, LOCK_EX) != 0) {
		if (errno != EINTR) {
			close(fd);
			return -1;
		}
	}
	return fd;
}

static void unlock_dir(int fd)
{
	if (fd >= 0)
		close(fd); /* releases the flock */
}

int zc_config_set(struct zc_confile *c, const json_t *patch, struct zc_err *e)
{
	if (!json_is_object(patch))
		return zc_fail(e, ZCOR_EINVAL, "settings must be a JSON object");
	int lock = lock_dir(c->path);
	zc_config_refresh(c);
	/* a file a person left invalid is theirs to fix: merging into the
	 * last good copy would replace what they wrote (issue 12, defect 6) */
	if (c->warning[0]) {
		unlock_dir(lock);
		return zc_fail(e, ZCOR_ECONFLICT,
			       "%s; fix config.json by hand (or remove it) before changing settings "
			       "here; nothing was written",
			       c->warning);
	}
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
		if (!rc)
			save_last_good(c, withnl, n + 1);
		zc_free(withnl);
		zc_free(text);
	}
	if (!rc) {
		c->cfg = cfg;
		json_decref(c->doc);
		c->doc = doc;
		c->good = 1;
		c->warning[0] = '\0';
		zc_file_changed(c->path, &c->seen);
	} else {
		json_decref(doc);
	}
	unlock_dir(lock);
	return rc;
}

static json_t *provider_json(const struct zc_provider_config *p)
{
	if (!p->enabled)
		return json_null();
	json_t *o = json_pack("{s:s, s:s}", "baseUrl", p->base_url, "model", p->model);
	if (p->api_key_env[0])
		json_object_set_new(o, "apiKeyEnv", json_string(p->api_key_env));
	json_object_set_new(o, "connectTimeoutMs", json_integer(p->connect_timeout_ms));
	json_object_set_new(o, "timeoutMs", json_integer(p->timeout_ms));
	json_object_set_new(o, "maxRetries", json_integer(p->max_retries));
	json_object_set_new(o, "maxResponseBytes", json_integer(p->max_response_bytes));
	return o;
}

json_t *zc_config_json(const struct zc_config *cfg)
{
	json_t *o = json_pack("{s:I, s:{s:s}, s:b, s:o, s:o, s:I}", "recallChars",
			 (json_int_t)cfg->recall_chars, "recall", "profile",
			 cfg->profile == ZC_PROFILE_ZCOR ? "zcor" : "scored", "relationships",
			 cfg->relationships, "provider", provider_json(&cfg->provider), "botId",
			 cfg->bot_id[0] ? json_string(cfg->bot_id) : json_null(), "mediaCacheMax",
			 (json_int_t)cfg->media_cache_max);
	json_object_set_new(o, "memoryFileMaxBytes", json_integer(cfg->memory_file_max_bytes));
	json_object_set_new(o, "memoryArchiveRatio", json_real(cfg->memory_archive_ratio));
	json_object_set_new(o, "viewMaxBytes", json_integer(cfg->view_max_bytes));
	json_object_set_new(o, "mirror", json_boolean(cfg->mirror));
	return o;
}
