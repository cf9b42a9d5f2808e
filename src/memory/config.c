/*
 * config.c — config.json (see config.h). Memory layer: keeps the file
 * (base/watch.h) and checks it against the table of keys below; it never
 * acts on a setting (the LLM layer reads "provider", recall its budget and
 * profile, tools "relationships"). Adding a key is adding a row.
 */
#include "memory/config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stddef.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/json.h"
#include "base/utf8.h"

/* ---- checks of the string-valued keys --------------------------------- */

/* http(s)://host[:port][/path], printable ASCII without spaces, no query
 * or fragment (the client appends /chat/completions). Stored without a
 * trailing '/'. */
static int check_base_url(const struct zc_conf_row *row, const json_t *v, struct zc_config *out,
			  struct zc_err *e)
{
	(void)row;
	struct zc_provider_config *p = &out->provider;
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

static int check_model(const struct zc_conf_row *row, const json_t *v, struct zc_config *out,
		       struct zc_err *e)
{
	(void)row;
	struct zc_provider_config *p = &out->provider;
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

static int check_key_env(const struct zc_conf_row *row, const json_t *v, struct zc_config *out,
			 struct zc_err *e)
{
	(void)row;
	struct zc_provider_config *p = &out->provider;
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

/*
 * wiki.baseUrl: http(s)://host[:port][/path], printable ASCII, no spaces,
 * query or fragment; the path either ends in "api.php" (taken as it is)
 * or is the wiki's script path ("https://example.org/w/", "/api.php"
 * appended). Another *.php ("index.php") is refused: that is not the API.
 */
static int check_wiki_url(const struct zc_conf_row *row, const json_t *v, struct zc_config *out,
			  struct zc_err *e)
{
	(void)row;
	static const char want[] =
		"'wiki.baseUrl' must be a MediaWiki API address: an http:// or https:// URL ending in "
		"api.php, such as \"https://zh.moegirl.org.cn/api.php\", or the wiki's script path such "
		"as \"https://example.org/w/\" (api.php is added); no spaces, query or fragment, at most "
		"%d bytes";
	const char *u = json_string_value(v);
	size_t n = u ? strlen(u) : 0, cap = sizeof(out->wiki.base_url) - sizeof("/api.php");
	const char *host = NULL;
	if (u && strncmp(u, "http://", 7) == 0)
		host = u + 7;
	else if (u && strncmp(u, "https://", 8) == 0)
		host = u + 8;
	if (!host || n > cap || *host == '\0' || *host == '/' || *host == ':')
		return zc_fail(e, ZCOR_EINVAL, want, (int)cap);
	for (const char *c = u; *c; c++) {
		unsigned char ch = (unsigned char)*c;
		if (ch <= 0x20 || ch >= 0x7f || ch == '?' || ch == '#')
			return zc_fail(e, ZCOR_EINVAL, want, (int)cap);
	}
	const char *path = strchr(host, '/');
	if (path && n >= 7 && strcmp(u + n - 7, "api.php") == 0) {
		memcpy(out->wiki.base_url, u, n + 1);
		return ZCOR_OK;
	}
	const char *last = path ? strrchr(path, '/') + 1 : "";
	if (strstr(last, ".php"))
		return zc_fail(e, ZCOR_EINVAL,
			       "'wiki.baseUrl' names '%s', which is not the MediaWiki API: give the "
			       "api.php address, such as \"https://zh.moegirl.org.cn/api.php\"",
			       ZC_Q(last, 60));
	while (n > (size_t)(host - u) && u[n - 1] == '/')
		n--;
	snprintf(out->wiki.base_url, sizeof(out->wiki.base_url), "%.*s/api.php", (int)n, u);
	return ZCOR_OK;
}

/* An id as it appears after "group:" / "private:" in a conversation key. */
static int id_ok(const char *s, size_t max)
{
	size_t n = s ? strlen(s) : 0;
	int ok = n > 0 && n < max;
	for (size_t i = 0; ok && i < n; i++)
		ok = isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '-' || s[i] == '.';
	return ok;
}

static int check_id_list(const struct zc_conf_row *row, const json_t *v, struct zc_config *out,
			 struct zc_err *e)
{
	(void)out;
	if (json_is_null(v)) /* null: no allow-list, as when absent */
		return ZCOR_OK;
	const char *key = row->name + sizeof("admission.") - 1;
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

static int check_api_key(const struct zc_conf_row *row, const json_t *v, struct zc_config *out,
			 struct zc_err *e)
{
	(void)row, (void)v, (void)out;
	return zc_fail(e, ZCOR_EINVAL,
		       "'provider.apiKey' is not allowed: the API key never goes into config.json; "
		       "put it in an environment variable and name that variable in "
		       "'provider.apiKeyEnv'");
}

/* timeZone: an IANA name, tried by reading its zone file (TZif) from the
 * system's zoneinfo; null or "" is the system's own zone. */
static int check_time_zone(const struct zc_conf_row *row, const json_t *v, struct zc_config *out,
			   struct zc_err *e)
{
	(void)row;
	static const char want[] =
		"'timeZone' must be an IANA time zone name such as \"Asia/Shanghai\" or \"UTC\" "
		"(a file under /usr/share/zoneinfo), or null for the system's zone";
	if (json_is_null(v) || (json_is_string(v) && !json_string_length(v))) {
		out->time_zone[0] = '\0';
		return ZCOR_OK;
	}
	const char *z = json_string_value(v);
	size_t n = z ? strlen(z) : 0;
	if (!z || n >= sizeof(out->time_zone) || *z == '/' || *z == '.' || strstr(z, ".."))
		return zc_fail(e, ZCOR_EINVAL, want);
	for (const char *c = z; *c; c++)
		if (!((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
		      *c == '/' || *c == '_' || *c == '-' || *c == '+'))
			return zc_fail(e, ZCOR_EINVAL, want);
	char path[160], *data = NULL;
	size_t len = 0;
	snprintf(path, sizeof(path), "/usr/share/zoneinfo/%s", z);
	struct zc_err fe = {0};
	int ok = zc_read_file(path, 1u << 20, &data, &len, &fe) == ZCOR_OK && len >= 4 &&
		 memcmp(data, "TZif", 4) == 0;
	zc_free(data);
	if (!ok)
		return zc_fail(e, ZCOR_EINVAL, "'timeZone': '%s' is not a time zone this system knows (no zone file %s); %s",
			       ZC_Q(z, 64), path, "give an IANA name such as \"Asia/Shanghai\", or null");
	snprintf(out->time_zone, sizeof(out->time_zone), "%s", z);
	return ZCOR_OK;
}

static int check_bot_id(const struct zc_conf_row *row, const json_t *v, struct zc_config *out,
			struct zc_err *e)
{
	(void)row;
	if (json_is_null(v)) {
		out->bot_id[0] = '\0';
		return ZCOR_OK;
	}
	if (!id_ok(json_string_value(v), sizeof(out->bot_id)))
		return zc_fail(e, ZCOR_EINVAL,
			       "'botId' must be the bot's own sender id as a string, such as "
			       "\"3000000001\" (letters, digits, _ - ., at most 64), or null");
	snprintf(out->bot_id, sizeof(out->bot_id), "%s", json_string_value(v));
	return ZCOR_OK;
}

/* worlds.console.apology, worlds.qq.apology: the row's own field */
static int check_apology(const struct zc_conf_row *row, const json_t *v, struct zc_config *out,
			 struct zc_err *e)
{
	const char *s = json_string_value(v);
	if (json_is_null(v))
		s = "";
	if (!s || zc_utf8_len(s) > ZC_APOLOGY_CHARS || strlen(s) >= row->size)
		return zc_fail(e, ZCOR_EINVAL,
			       "'%s' must be a short text (at most %d characters) "
			       "sent when a turn fails, such as \"抱歉，我这边出了点问题。\", or \"\" for none",
			       row->name, ZC_APOLOGY_CHARS);
	snprintf((char *)out + row->off, row->size, "%s", s);
	return ZCOR_OK;
}

/* skills.projectRoot: where <root>/.dsh/skills and <root>/.agents/skills
 * are looked for (tools/skills.h); "" (or null) is the memory
 * directory's parent. Absolute, so it means one place whichever directory
 * zcor was started in. */
static int check_skills_root(const struct zc_conf_row *row, const json_t *v, struct zc_config *out,
			     struct zc_err *e)
{
	(void)row;
	const char *s = json_is_null(v) ? "" : json_string_value(v);
	size_t n = s ? strlen(s) : 0;
	int ok = s && (n == 0 || s[0] == '/') && n < sizeof(out->skills_root) &&
		 zc_utf8_valid(s, n);
	for (size_t i = 0; ok && i < n; i++)
		ok = (unsigned char)s[i] >= 0x20 && s[i] != 0x7f;
	if (!ok)
		return zc_fail(e, ZCOR_EINVAL,
			       "'skills.projectRoot' must be an absolute directory path such as "
			       "\"/home/bot/qqbot\" (at most %d bytes, no control characters), or \"\" for the "
			       "memory directory's parent",
			       ZC_SKILLS_ROOT_MAX - 1);
	memcpy(out->skills_root, s, n + 1);
	return ZCOR_OK;
}

static json_t *skills_root_json(const struct zc_config *c) { return json_string(c->skills_root); }

/* ---- worlds.qq ------------------------------------------------------------ */

/* ws://host[:port][/path[?query]]: printable ASCII without spaces; wss://
 * is not spoken (a TLS-terminating proxy, or reverse mode, instead). */
static int check_qq_url(const struct zc_conf_row *row, const json_t *v, struct zc_config *out,
			struct zc_err *e)
{
	(void)row;
	static const char want[] =
		"'worlds.qq.url' must be NapCat's WebSocket server as a ws:// URL with a host, such as "
		"\"ws://127.0.0.1:3001/\" (no spaces, at most %d bytes; for wss:// put a TLS-terminating "
		"proxy in front or use \"mode\": \"reverse\")";
	const char *u = json_string_value(v);
	size_t n = u ? strlen(u) : 0;
	if (!u || n >= sizeof(out->qq.url) || strncmp(u, "ws://", 5) != 0)
		return zc_fail(e, ZCOR_EINVAL, want, ZC_QQ_URL_MAX - 1);
	const char *host = u + 5;
	if (*host == '\0' || *host == '/' || *host == ':' || *host == '?')
		return zc_fail(e, ZCOR_EINVAL, want, ZC_QQ_URL_MAX - 1);
	for (const char *c = u; *c; c++) {
		unsigned char ch = (unsigned char)*c;
		if (ch <= 0x20 || ch >= 0x7f || ch == '#')
			return zc_fail(e, ZCOR_EINVAL, want, ZC_QQ_URL_MAX - 1);
	}
	memcpy(out->qq.url, u, n + 1);
	return ZCOR_OK;
}

/* "/…": under ZC_QQ_PATH_MAX bytes, printable ASCII, no "..", no query */
static int check_qq_path(const struct zc_conf_row *row, const json_t *v, struct zc_config *out,
			 struct zc_err *e)
{
	(void)row;
	const char *p = json_string_value(v);
	size_t n = p ? strlen(p) : 0;
	int ok = p && p[0] == '/' && n < sizeof(out->qq.path) && !strstr(p, "..");
	for (size_t i = 0; ok && i < n; i++) {
		unsigned char ch = (unsigned char)p[i];
		ok = ch > 0x20 && ch < 0x7f && ch != '?' && ch != '#' && ch != '%';
	}
	if (!ok)
		return zc_fail(e, ZCOR_EINVAL,
			       "'worlds.qq.path' must be the path NapCat connects to, starting with \"/\", "
			       "such as \"/onebot/v11/ws\" (under %d characters, no spaces, \"..\", query or %%)",
			       ZC_QQ_PATH_MAX);
	memcpy(out->qq.path, p, n + 1);
	return ZCOR_OK;
}

static int check_qq_token_env(const struct zc_conf_row *row, const json_t *v, struct zc_config *out,
			      struct zc_err *e)
{
	(void)row;
	const char *s = json_string_value(v);
	size_t n = s ? strlen(s) : 0;
	int ok = n > 0 && n < sizeof(out->qq.token_env) && (isalpha((unsigned char)s[0]) || s[0] == '_');
	for (size_t i = 0; ok && i < n; i++)
		ok = isalnum((unsigned char)s[i]) || s[i] == '_';
	if (!ok)
		return zc_fail(e, ZCOR_EINVAL,
			       "'worlds.qq.accessTokenEnv' must be the name of the environment variable "
			       "holding NapCat's access token, such as \"NAPCAT_TOKEN\" (letters, digits and "
			       "_, at most %d)",
			       ZC_PROVIDER_ENV_MAX - 1);
	memcpy(out->qq.token_env, s, n + 1);
	return ZCOR_OK;
}

static int check_qq_names(const struct zc_conf_row *row, const json_t *v, struct zc_config *out,
			  struct zc_err *e)
{
	(void)row;
	if (!json_is_array(v) || json_array_size(v) > ZC_QQ_CONF_NAMES)
		return zc_fail(e, ZCOR_EINVAL,
			       "'worlds.qq.names' must be an array of the names that wake the bot in a group "
			       "besides an @, such as [\"小钟\"] (at most %d)",
			       ZC_QQ_CONF_NAMES);
	size_t i;
	json_t *x;
	json_array_foreach(v, i, x) {
		const char *s = json_string_value(x);
		int ok = s && *s && zc_utf8_len(s) <= ZC_QQ_CONF_NAME_CHARS &&
			 strlen(s) < ZC_QQ_CONF_NAME_BYTES;
		for (const char *c = s; ok && *c; c++)
			ok = (unsigned char)*c >= 0x20 && *c != 0x7f;
		if (!ok)
			return zc_fail(e, ZCOR_EINVAL,
				       "'worlds.qq.names[%zu]' must be a name of 1 to %d characters without "
				       "control characters, such as \"小钟\"",
				       i, ZC_QQ_CONF_NAME_CHARS);
		snprintf(out->qq.names[i], sizeof(out->qq.names[i]), "%s", s);
	}
	out->qq.n_names = (int)json_array_size(v);
	return ZCOR_OK;
}

static json_t *qq_names_json(const struct zc_config *cfg)
{
	json_t *a = json_array();
	for (int i = 0; i < cfg->qq.n_names; i++)
		json_array_append_new(a, json_string(cfg->qq.names[i]));
	return a;
}

static int hhmm(const char *s, int *minutes)
{
	if (!isdigit((unsigned char)s[0]) || !isdigit((unsigned char)s[1]) || s[2] != ':' ||
	    !isdigit((unsigned char)s[3]) || !isdigit((unsigned char)s[4]))
		return -1;
	int h = (s[0] - '0') * 10 + (s[1] - '0'), m = (s[3] - '0') * 10 + (s[4] - '0');
	if (h > 23 || m > 59)
		return -1;
	*minutes = h * 60 + m;
	return 0;
}

static int quiet_hours_parse(const char *s, int *from_min, int *to_min)
{
	if (!s || strlen(s) != 11 || s[5] != '-' || hhmm(s, from_min) || hhmm(s + 6, to_min))
		return -1;
	return 0;
}

static int check_quiet_hours(const struct zc_conf_row *row, const json_t *v, struct zc_config *out,
			     struct zc_err *e)
{
	(void)row;
	const char *s = json_is_null(v) ? "" : json_string_value(v);
	int a, b;
	if (!s || (*s && quiet_hours_parse(s, &a, &b)))
		return zc_fail(e, ZCOR_EINVAL,
			       "'worlds.qq.proactive.quietHours' must be \"HH:MM-HH:MM\" in local time, such "
			       "as \"00:00-08:00\" (it may cross midnight: \"23:00-07:00\"), or \"\" for none");
	snprintf(out->qq.quiet_hours, sizeof(out->qq.quiet_hours), "%s", s);
	return ZCOR_OK;
}

static json_t *quiet_hours_json(const struct zc_config *cfg)
{
	return json_string(cfg->qq.quiet_hours);
}

/* ---- recall.weights ------------------------------------------------------ */

/* Measured on the dev sets (docs/PERFORMANCE.md, "Recall quality"):
 * relevance first, recency and the rest breaking ties. */
const struct zc_recall_weights zc_recall_weights_default = {
	.entity = 0.3,
	.lexical = 1.0,
	.recency = 0.02,
	.salience = 0.05,
	.prior = 0.02,
	.expired = -5,
	.feedback = 0.5,
	.context = 0.2,
};

/* Seed 003: 实体命中 3、词汇命中 2、最近性 1、命中次数与置顶 0.8、节先验 0.5、过期 −5. */
const struct zc_recall_weights zc_recall_weights_seed003 = {
	.entity = 3,
	.lexical = 2,
	.recency = 1,
	.salience = 0.8,
	.prior = 0.5,
	.expired = -5,
	.feedback = 0,
	.context = 0,
};

#define WEIGHT_KEYS "entity, lexical, recency, salience, sectionPrior, expired, feedback, context"

static const struct zc_conf_row *find(const char *sec, const char *key);
static int check_value(const struct zc_conf_row *r, const json_t *v, struct zc_config *out,
		       struct zc_err *e);

/* A preset's name, or an object of some of the rows "recall.weights.<key>"
 * (the rest from "default"). */
static int check_weights(const struct zc_conf_row *row, const json_t *v, struct zc_config *out,
			 struct zc_err *e)
{
	(void)row;
	const char *name = json_string_value(v);
	if (name && (strcmp(name, "default") == 0 || strcmp(name, "seed003") == 0)) {
		out->weights = name[0] == 'd' ? zc_recall_weights_default : zc_recall_weights_seed003;
		snprintf(out->weights_name, sizeof(out->weights_name), "%s", name);
		return ZCOR_OK;
	}
	if (!json_is_object(v))
		return zc_fail(e, ZCOR_EINVAL,
			       "'recall.weights' must be \"default\", \"seed003\" (seed 003's 3 / 2 / 1 / 0.8 / "
			       "0.5 / -5) or an object of numbers with some of the keys " WEIGHT_KEYS);
	out->weights = zc_recall_weights_default;
	const char *k;
	json_t *x;
	json_object_foreach((json_t *)v, k, x) {
		const struct zc_conf_row *r = find("recall.weights", k);
		if (!r)
			return zc_fail(e, ZCOR_EINVAL, "unknown key 'recall.weights.%s'; known: " WEIGHT_KEYS,
				       ZC_Q(k, 40));
		int rc = check_value(r, x, out, e);
		if (rc)
			return rc;
	}
	snprintf(out->weights_name, sizeof(out->weights_name), "custom");
	return ZCOR_OK;
}

/* The preset's name, or the object of every weight in effect. */
static json_t *weights_json(const struct zc_config *cfg)
{
	if (strcmp(cfg->weights_name, "custom"))
		return json_string(cfg->weights_name[0] ? cfg->weights_name : "default");
	const struct zc_recall_weights *w = &cfg->weights;
	return json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "entity", w->entity, "lexical",
			 w->lexical, "recency", w->recency, "salience", w->salience, "sectionPrior",
			 w->prior, "expired", w->expired, "feedback", w->feedback, "context", w->context);
}

/* ---- the table ---------------------------------------------------------- */

#define F(field) offsetof(struct zc_config, field), sizeof(((struct zc_config *)0)->field)
#define NOFIELD ((size_t)-1), 0

static const char *const profiles[] = {"scored", "seed 003, the default", "zcor", "seed 000", NULL};
static const char *const qq_modes[] = {"forward", "zcor dials NapCat's websocketServers",
				       "reverse", "NapCat's websocketClients dial zcor serve", NULL};
static const char *const qq_image_modes[] = {"base64", "the bytes in the message; any host",
					     "file", "file:// of the sticker; NapCat on this host", NULL};
static json_t *qq_url_json(const struct zc_config *c) { return json_string(c->qq.url); }
static json_t *qq_path_json(const struct zc_config *c) { return json_string(c->qq.path); }
static json_t *qq_token_env_json(const struct zc_config *c) { return json_string(c->qq.token_env); }
static json_t *qq_apology_json(const struct zc_config *c) { return json_string(c->qq.apology); }
static json_t *wiki_url_json(const struct zc_config *c) { return json_string(c->wiki.base_url); }

/* The order is the order of config_json and of the "known" lists. */
const struct zc_conf_row zc_conf_rows[] = {
	{.name = "recallChars", .type = ZC_CONF_INT, .layer = "recall", F(recall_chars), .lo = 0,
	 .hi = ZC_RECALL_CHARS_MAX, .def = ZC_RECALL_CHARS_DEFAULT, .lo_note = " (auto-recall off)",
	 .help = "auto-recall budget in characters; 0 switches auto-recall off"},
	{.name = "recall", .type = ZC_CONF_SECTION, .layer = "recall", NOFIELD,
	 .example = "'recall' must be an object such as {\"profile\": \"scored\"}",
	 .flags = ZC_CONF_LIST_KEYS, .help = "how recall scores"},
	{.name = "recall.profile", .type = ZC_CONF_ENUM, .layer = "recall", F(profile),
	 .values = profiles, .def = ZC_PROFILE_SCORED,
	 .help = "\"scored\" (seed 003) or \"zcor\" (seed 000)"},
	{.name = "recall.weights", .type = ZC_CONF_STRING, .layer = "recall", F(weights_name),
	 .check = check_weights, .json = weights_json,
	 .help = "the scored profile's weights: \"default\", \"seed003\" or an object of " WEIGHT_KEYS},
#define WEIGHT(key, field, what)                                                                   \
	{.name = "recall.weights." key, .type = ZC_CONF_REAL, .layer = "recall", F(weights.field),     \
	 .dlo = -ZC_RECALL_WEIGHT_MAX, .dhi = ZC_RECALL_WEIGHT_MAX,                                     \
	 .def = 0, .unit = "0 turns the feature off", .flags = ZC_CONF_HIDDEN, .help = what}
	WEIGHT("entity", entity, "a name, alias or term of the record in the batch"),
	WEIGHT("lexical", lexical, "BM25 of the batch's tokens"),
	WEIGHT("recency", recency, "exp(-age / 30 days)"),
	WEIGHT("salience", salience, "hits and pinned"),
	WEIGHT("sectionPrior", prior, "the section prior"),
	WEIGHT("expired", expired, "past its expiry date"),
	WEIGHT("feedback", feedback, "pseudo-relevance feedback"),
	WEIGHT("context", context, "dialogue context"),
#undef WEIGHT
	{.name = "relationships", .type = ZC_CONF_BOOL, .layer = "tools", F(relationships), .def = 1,
	 .help = "offer the relationship tools and their guidance"},
	{.name = "skills", .type = ZC_CONF_SECTION, .layer = "tools", NOFIELD,
	 .example = "'skills' must be an object such as {\"projectRoot\": \"/home/bot/qqbot\"}",
	 .help = "skill 的发现（docs/SKILLS.md） / where skills are discovered (docs/SKILLS.md)"},
	{.name = "skills.projectRoot", .type = ZC_CONF_STRING, .layer = "tools", F(skills_root),
	 .check = check_skills_root, .json = skills_root_json,
	 .help = "项目根目录：在其下的 .dsh/skills 与 .agents/skills 找 skill；空为记忆目录的上一级 / the "
		 "project root whose .dsh/skills and .agents/skills hold skills; \"\" for the memory "
		 "directory's parent"},
	{.name = "provider", .type = ZC_CONF_SECTION, .layer = "llm", F(provider.enabled),
	 .example = "'provider' must be an object such as {\"baseUrl\": "
		    "\"http://127.0.0.1:8080/v1\", \"model\": \"name\"}, or null for none",
	 .flags = ZC_CONF_NULLABLE, .help = "an OpenAI-compatible chat completions endpoint, or null"},
	{.name = "provider.baseUrl", .type = ZC_CONF_STRING, .layer = "llm", F(provider.base_url),
	 .check = check_base_url, .flags = ZC_CONF_REQUIRED, .help = "http(s)://host[:port][/path]"},
	{.name = "provider.model", .type = ZC_CONF_STRING, .layer = "llm", F(provider.model),
	 .check = check_model, .flags = ZC_CONF_REQUIRED, .help = "the model's name as the server knows it"},
	{.name = "provider.apiKeyEnv", .type = ZC_CONF_STRING, .layer = "llm", F(provider.api_key_env),
	 .check = check_key_env, .flags = ZC_CONF_EMPTY_OMIT,
	 .help = "the environment variable holding the API key"},
	{.name = "provider.apiKey", .type = ZC_CONF_STRING, .layer = "llm", NOFIELD,
	 .check = check_api_key, .flags = ZC_CONF_HIDDEN, .help = "refused: keys stay out of the file"},
	{.name = "provider.connectTimeoutMs", .type = ZC_CONF_INT, .layer = "llm",
	 F(provider.connect_timeout_ms), .lo = 100, .hi = 120000,
	 .def = ZC_PROVIDER_CONNECT_TIMEOUT_DEFAULT, .unit = "milliseconds",
	 .help = "time to connect"},
	{.name = "provider.timeoutMs", .type = ZC_CONF_INT, .layer = "llm", F(provider.timeout_ms),
	 .lo = 1000, .hi = 600000, .def = ZC_PROVIDER_TIMEOUT_DEFAULT,
	 .unit = "milliseconds, retries included", .help = "time for one request, retries included"},
	{.name = "provider.maxRetries", .type = ZC_CONF_INT, .layer = "llm", F(provider.max_retries),
	 .lo = 0, .hi = 10, .def = ZC_PROVIDER_RETRIES_DEFAULT, .help = "retries of a failed request"},
	{.name = "provider.maxResponseBytes", .type = ZC_CONF_INT, .layer = "llm",
	 F(provider.max_response_bytes), .lo = 1024, .hi = 64L << 20,
	 .def = (double)ZC_PROVIDER_RESPONSE_DEFAULT, .unit = "1 KiB to 64 MiB",
	 .help = "the largest answer read"},
	{.name = "provider.temperature", .type = ZC_CONF_REAL, .layer = "llm", F(provider.temperature),
	 .dlo = 0, .dhi = 2, .def = ZC_PROVIDER_TEMPERATURE_DEFAULT,
	 .unit = "0 to 2; 0 is the most deterministic",
	 .help = "对话回合的采样温度（记忆搜索的筛选总是 0） / the turn's sampling temperature (the "
		 "search filter always uses 0)"},
	{.name = "wiki", .type = ZC_CONF_SECTION, .layer = "tools", NOFIELD,
	 .example = "'wiki' must be an object such as {\"baseUrl\": "
		    "\"https://zh.moegirl.org.cn/api.php\", \"timeoutMs\": 8000}",
	 .help = "wiki_lookup 查询的 MediaWiki（默认萌娘百科） / the MediaWiki wiki_lookup asks (default "
		 "the Moegirl wiki)"},
	{.name = "wiki.baseUrl", .type = ZC_CONF_STRING, .layer = "tools", F(wiki.base_url),
	 .check = check_wiki_url, .json = wiki_url_json,
	 .help = "MediaWiki 的 api.php 地址（或脚本路径，自动补 api.php） / the wiki's api.php (or its "
		 "script path; api.php is added)"},
	{.name = "wiki.timeoutMs", .type = ZC_CONF_INT, .layer = "tools", F(wiki.timeout_ms),
	 .lo = 100, .hi = 60000, .def = ZC_WIKI_TIMEOUT_DEFAULT,
	 .unit = "milliseconds per request, its retry included", .flags = ZC_CONF_SAY_DEFAULT,
	 .help = "每次请求维基的时限 / the time of each request to the wiki"},
	{.name = "wiki.maxBytes", .type = ZC_CONF_INT, .layer = "tools", F(wiki.max_bytes),
	 .lo = 1024, .hi = 16L << 20, .def = (double)ZC_WIKI_MAX_BYTES_DEFAULT,
	 .unit = "bytes, 1 KiB to 16 MiB", .flags = ZC_CONF_SAY_DEFAULT,
	 .help = "维基一次回答最多读多少字节 / the largest answer read from the wiki"},
	{.name = "botId", .type = ZC_CONF_STRING, .layer = "memory", F(bot_id), .check = check_bot_id,
	 .flags = ZC_CONF_EMPTY_NULL, .help = "the bot's own sender id, or null"},
	{.name = "admission", .type = ZC_CONF_SECTION, .layer = "memory", NOFIELD,
	 .example = "'admission' must be an object such as {\"privateChats\": true, \"groups\": "
		    "[\"100000001\"]}",
	 .help = "which chats are logged (Q-LOG)"},
	{.name = "admission.privateChats", .type = ZC_CONF_BOOL, .layer = "memory", F(private_chats),
	 .def = 1, .help = "log private chats at all"},
	{.name = "admission.groups", .type = ZC_CONF_STRING, .layer = "memory", NOFIELD,
	 .check = check_id_list, .flags = ZC_CONF_IN_DOC,
	 .help = "the groups logged (null or absent: all)"},
	{.name = "admission.privates", .type = ZC_CONF_STRING, .layer = "memory", NOFIELD,
	 .check = check_id_list, .flags = ZC_CONF_IN_DOC,
	 .help = "the private chats logged (null or absent: all)"},
	{.name = "mediaCacheMax", .type = ZC_CONF_INT, .layer = "memory", F(media_cache_max), .lo = 1,
	 .hi = ZC_MEDIA_CACHE_MAX, .def = ZC_MEDIA_CACHE_DEFAULT, .unit = "inbound media files kept",
	 .flags = ZC_CONF_SAY_DEFAULT, .help = "inbound media files kept (LRU)"},
	{.name = "dialogueChars", .type = ZC_CONF_INT, .layer = "agent", F(dialogue_chars), .lo = 0,
	 .hi = 1000000, .def = ZC_DIALOGUE_CHARS_DEFAULT, .unit = "characters",
	 .flags = ZC_CONF_SAY_DEFAULT,
	 .help = "对话上下文（机器人自己的回复、工具往来、之前投递的消息）每轮最多发送的字符数 / "
		 "the dialogue a turn sends the model, in characters"},
	{.name = "ambientMessages", .type = ZC_CONF_INT, .layer = "agent", F(ambient_messages),
	 .lo = 0, .hi = 1000, .def = ZC_AMBIENT_MESSAGES_DEFAULT, .unit = "messages",
	 .flags = ZC_CONF_SAY_DEFAULT,
	 .help = "对话上下文里最多带上之前批次的多少条外部消息 / "
		 "external messages of earlier batches the dialogue carries"},
	{.name = "turn", .type = ZC_CONF_SECTION, .layer = "agent", NOFIELD,
	 .example = "'turn' must be an object such as {\"maxSteps\": 8, \"deadlineMs\": 120000}",
	 .help = "一轮对话的上限 / the limits of one turn"},
	{.name = "turn.maxSteps", .type = ZC_CONF_INT, .layer = "agent", F(turn.max_steps), .lo = 1,
	 .hi = 64, .def = ZC_TURN_MAX_STEPS_DEFAULT, .unit = "model requests with tools",
	 .flags = ZC_CONF_SAY_DEFAULT,
	 .help = "每轮最多几次带工具的模型请求，到达后收回工具、请模型直接回答 / "
		 "model requests with tools per turn; then the tools are withdrawn"},
	{.name = "turn.deadlineMs", .type = ZC_CONF_INT, .layer = "agent", F(turn.deadline_ms),
	 .lo = 1000, .hi = 3600000, .def = ZC_TURN_DEADLINE_DEFAULT, .unit = "milliseconds",
	 .flags = ZC_CONF_SAY_DEFAULT,
	 .help = "工具循环的总时限 / the time of the tool loop; then the model is asked to answer"},
	{.name = "turn.toolTimeoutMs", .type = ZC_CONF_INT, .layer = "agent", F(turn.tool_timeout_ms),
	 .lo = 100, .hi = 600000, .def = ZC_TURN_TOOL_TIMEOUT_DEFAULT, .unit = "milliseconds",
	 .flags = ZC_CONF_SAY_DEFAULT,
	 .help = "一次工具调用在网络上最多等多久（搜索的模型筛选、wiki_lookup 的请求；也不超过本轮"
		 "或摘要剩下的时间；记忆操作是事务，不会被中途切断） / the most a tool call waits on the "
		 "network (search's model stage, wiki_lookup's requests; never past the turn's or the "
		 "digest run's time left; memory operations are transactions, never cut)"},
	{.name = "turn.waitMs", .type = ZC_CONF_INT, .layer = "agent", F(turn.wait_ms), .lo = 0,
	 .hi = 3600000, .def = ZC_TURN_WAIT_DEFAULT, .unit = "milliseconds",
	 .flags = ZC_CONF_SAY_DEFAULT,
	 .help = "同一会话已有一轮在进行时，下一轮最多等待多久（之后返回 busy） / how long a turn "
		 "waits for the running turn of its conversation, then busy"},
	{.name = "worlds", .type = ZC_CONF_SECTION, .layer = "world", NOFIELD,
	 .example = "'worlds' must be an object such as {\"console\": {\"apology\": \"\"}}",
	 .help = "各个 World 的设置 / the worlds' settings"},
	{.name = "worlds.console", .type = ZC_CONF_SECTION, .layer = "world", NOFIELD,
	 .example = "'worlds.console' must be an object such as {\"apology\": \"抱歉，出了点问题。\"}",
	 .help = "控制台 World / the console world"},
	{.name = "worlds.console.apology", .type = ZC_CONF_STRING, .layer = "world",
	 F(console_apology), .check = check_apology,
	 .help = "一轮失败时发给用户的简短致歉，空为不发 / a short apology sent when a turn fails; "
		 "\"\" for none"},
	{.name = "worlds.qq", .type = ZC_CONF_SECTION, .layer = "world", NOFIELD,
	 .example = "'worlds.qq' must be an object such as {\"enabled\": true, \"mode\": \"forward\", "
		    "\"url\": \"ws://127.0.0.1:3001/\"}",
	 .help = "QQ World：经 OneBot v11 连 NapCat（docs/QQ.md） / the QQ world: OneBot v11 to NapCat"},
	{.name = "worlds.qq.enabled", .type = ZC_CONF_BOOL, .layer = "world", F(qq.enabled), .def = 0,
	 .unit = "zcor serve runs the QQ world",
	 .help = "zcor serve 是否运行 QQ World / whether zcor serve runs the QQ world"},
	{.name = "worlds.qq.mode", .type = ZC_CONF_ENUM, .layer = "world", F(qq.mode),
	 .values = qq_modes, .def = ZC_QQ_MODE_FORWARD,
	 .help = "forward：zcor 连 NapCat 的 websocketServers；reverse：NapCat 的 websocketClients 连 zcor / "
		 "forward: zcor dials NapCat; reverse: NapCat dials zcor serve"},
	{.name = "worlds.qq.url", .type = ZC_CONF_STRING, .layer = "world", F(qq.url),
	 .check = check_qq_url, .json = qq_url_json,
	 .help = "forward 模式下 NapCat 的地址，只支持 ws:// / NapCat's WebSocket server (forward), ws:// only"},
	{.name = "worlds.qq.path", .type = ZC_CONF_STRING, .layer = "world", F(qq.path),
	 .check = check_qq_path, .json = qq_path_json,
	 .help = "reverse 模式下 zcor serve 接受 NapCat 连接的路径 / the path zcor serve answers NapCat on "
		 "(reverse)"},
	{.name = "worlds.qq.accessTokenEnv", .type = ZC_CONF_STRING, .layer = "world", F(qq.token_env),
	 .check = check_qq_token_env, .json = qq_token_env_json,
	 .help = "存放 NapCat access token 的环境变量名（token 本身不进配置） / the environment variable "
		 "holding NapCat's access token (never the token itself)"},
	{.name = "worlds.qq.names", .type = ZC_CONF_STRING, .layer = "world", NOFIELD,
	 .check = check_qq_names, .json = qq_names_json,
	 .help = "群里除了 @ 之外能叫醒机器人的名字（最多 16 个，每个不超过 32 字） / the names that wake "
		 "the bot in a group besides an @ (at most 16, 32 characters each)"},
	{.name = "worlds.qq.quietMs", .type = ZC_CONF_INT, .layer = "world", F(qq.quiet_ms), .lo = 0,
	 .hi = 60000, .def = 1500, .unit = "milliseconds without a new message before the turn starts",
	 .flags = ZC_CONF_SAY_DEFAULT,
	 .help = "安静多久（毫秒）才把一串消息交给一轮 / the quiet window that gathers a burst"},
	{.name = "worlds.qq.maxWaitMs", .type = ZC_CONF_INT, .layer = "world", F(qq.max_wait_ms),
	 .lo = 0, .hi = 600000, .def = 6000,
	 .unit = "milliseconds after the first waking message at most", .flags = ZC_CONF_SAY_DEFAULT,
	 .help = "从第一条叫醒的消息起最多等多久就开始一轮 / a burst's turn starts at most this long "
		 "after its first waking message"},
	{.name = "worlds.qq.actionTimeoutMs", .type = ZC_CONF_INT, .layer = "world",
	 F(qq.action_timeout_ms), .lo = 100, .hi = 120000, .def = 10000, .unit = "milliseconds",
	 .flags = ZC_CONF_SAY_DEFAULT,
	 .help = "一次 OneBot 动作等待应答的时限 / the time a OneBot action waits for its answer"},
	{.name = "worlds.qq.reconnectMinMs", .type = ZC_CONF_INT, .layer = "world",
	 F(qq.reconnect_min_ms), .lo = 100, .hi = 600000, .def = 1000, .unit = "milliseconds",
	 .flags = ZC_CONF_SAY_DEFAULT, .help = "第一次重连前等待 / the first reconnect's backoff"},
	{.name = "worlds.qq.reconnectMaxMs", .type = ZC_CONF_INT, .layer = "world",
	 F(qq.reconnect_max_ms), .lo = 1000, .hi = 3600000, .def = 60000, .unit = "milliseconds",
	 .flags = ZC_CONF_SAY_DEFAULT,
	 .help = "重连退避的上限（token 被拒时也按它重试） / the backoff's cap (a refused token is "
		 "retried at it)"},
	{.name = "worlds.qq.repliesPerMinute", .type = ZC_CONF_INT, .layer = "world",
	 F(qq.replies_per_minute), .lo = 1, .hi = 600, .def = 6, .unit = "turns per conversation",
	 .flags = ZC_CONF_SAY_DEFAULT,
	 .help = "每个会话每分钟最多回复几轮，超出的只记录不回复 / replies per minute per conversation; "
		 "beyond: logged, no turn"},
	{.name = "worlds.qq.maxConcurrentTurns", .type = ZC_CONF_INT, .layer = "world",
	 F(qq.max_concurrent_turns), .lo = 1, .hi = 64, .def = 4, .unit = "turns",
	 .flags = ZC_CONF_SAY_DEFAULT,
	 .help = "所有会话同时进行的轮次上限 / turns running at once, all conversations together"},
	{.name = "worlds.qq.replyMaxChars", .type = ZC_CONF_INT, .layer = "world",
	 F(qq.reply_max_chars), .lo = 50, .hi = 10000, .def = 1500, .unit = "characters",
	 .flags = ZC_CONF_SAY_DEFAULT,
	 .help = "一条消息最多多少字，更长的回复拆成几条 / one message's text at most; longer replies "
		 "are split"},
	{.name = "worlds.qq.imageMode", .type = ZC_CONF_ENUM, .layer = "world", F(qq.image_mode),
	 .values = qq_image_modes, .def = ZC_QQ_IMAGE_BASE64,
	 .help = "表情包怎么发给 NapCat：base64（任何主机）或 file（NapCat 在同一台机器） / how stickers "
		 "go to NapCat: base64 (any host) or file (NapCat on this host)"},
	{.name = "worlds.qq.mediaMaxBytes", .type = ZC_CONF_INT, .layer = "world",
	 F(qq.media_max_bytes), .lo = 1024, .hi = 64L << 20, .def = 10485760, .unit = "bytes",
	 .flags = ZC_CONF_SAY_DEFAULT,
	 .help = "下载一张收到的图片最多多大 / the largest inbound image downloaded"},
	{.name = "worlds.qq.mediaTimeoutMs", .type = ZC_CONF_INT, .layer = "world",
	 F(qq.media_timeout_ms), .lo = 500, .hi = 120000, .def = 10000, .unit = "milliseconds",
	 .flags = ZC_CONF_SAY_DEFAULT, .help = "同一批事件里图片下载合计的时限 / the time the image downloads of one batch of events take together"},
	{.name = "worlds.qq.pipelineLogging", .type = ZC_CONF_BOOL, .layer = "world",
	 F(qq.pipeline_logging), .def = 0,
	 .unit = "the logging thread writes the next chunk while the last one waits for the disk",
	 .help = "落盘流水线：上一批等磁盘时下一批已在写（默认关：每批落盘后才取下一批） / the logging "
		 "thread writes the next chunk of events while the last one waits for its fsync (off: "
		 "each chunk is durable before the next is taken)"},
	{.name = "worlds.qq.proactive", .type = ZC_CONF_SECTION, .layer = "world", NOFIELD,
	 .example = "'worlds.qq.proactive' must be an object such as {\"probability\": 0.05, "
		    "\"cooldownS\": 600, \"quietHours\": \"00:00-08:00\"}",
	 .help = "没被叫醒时偶尔主动接话 / replying now and then without being woken"},
	{.name = "worlds.qq.proactive.probability", .type = ZC_CONF_REAL, .layer = "world",
	 F(qq.probability), .dlo = 0, .dhi = 1, .def = 0,
	 .unit = "the chance a batch nobody woke the bot for gets a turn; 0 never",
	 .help = "没被叫醒的一批消息得到回复的概率，0 为从不 / the chance of a proactive reply; 0 never"},
	{.name = "worlds.qq.proactive.cooldownS", .type = ZC_CONF_INT, .layer = "world",
	 F(qq.cooldown_s), .lo = 0, .hi = 86400, .def = 600,
	 .unit = "seconds after the bot's last reply in that conversation", .flags = ZC_CONF_SAY_DEFAULT,
	 .help = "同一会话上次回复后多久内不主动接话 / seconds after the last reply without a proactive one"},
	{.name = "worlds.qq.proactive.quietHours", .type = ZC_CONF_STRING, .layer = "world",
	 F(qq.quiet_hours), .check = check_quiet_hours, .json = quiet_hours_json,
	 .help = "这段本地时间里不主动接话（\"HH:MM-HH:MM\"，空为不限） / local hours without proactive "
		 "replies (\"HH:MM-HH:MM\", \"\" for none)"},
	{.name = "worlds.qq.apology", .type = ZC_CONF_STRING, .layer = "world", F(qq.apology),
	 .check = check_apology, .json = qq_apology_json,
	 .help = "一轮失败时发到群里/私聊的简短致歉，空为不发 / a short apology sent when a turn fails; "
		 "\"\" for none"},
	{.name = "memoryFileMaxBytes", .type = ZC_CONF_INT, .layer = "memory",
	 F(memory_file_max_bytes), .lo = 1024, .hi = ZC_VIEW_MAX_LIMIT,
	 .def = ZC_MEMORY_FILE_MAX_DEFAULT, .unit = "bytes", .help = "hard cap of a MEMORY.md view"},
	{.name = "memoryArchiveRatio", .type = ZC_CONF_REAL, .layer = "memory",
	 F(memory_archive_ratio), .dlo = 0.1, .dhi = 1.0, .def = ZC_MEMORY_ARCHIVE_RATIO_DEFAULT,
	 .unit = "the share of memoryFileMaxBytes above which old entries move to the archive",
	 .help = "rollover above memoryFileMaxBytes x this (Q-ROLL)"},
	{.name = "viewMaxBytes", .type = ZC_CONF_INT, .layer = "memory", F(view_max_bytes),
	 .lo = 1024, .hi = ZC_VIEW_MAX_LIMIT, .def = ZC_VIEW_MAX_DEFAULT, .unit = "bytes",
	 .help = "cap of every other view"},
	{.name = "mirror", .type = ZC_CONF_BOOL, .layer = "memory", F(mirror), .def = 0,
	 .unit = "keep mirror/ current with the views as files",
	 .help = "keep mirror/ (the views as files) current"},
	{.name = "memory", .type = ZC_CONF_BOOL, .layer = "agent", F(memory), .def = 1,
	 .unit = "the long-term memory of seed 003 on or off",
	 .help = "关掉整个长期记忆（工具、skill 提示、定时摘要都消失） / false removes the memory "
		 "tools, the skills and the digest timer"},
	{.name = "digestAtHour", .type = ZC_CONF_INT, .layer = "agent", F(digest_at_hour), .lo = 0,
	 .hi = 23, .def = ZC_DIGEST_AT_HOUR_DEFAULT, .unit = "the local hour, 0 to 23",
	 .flags = ZC_CONF_SAY_DEFAULT,
	 .help = "每天几点（本地时间）醒来跑摘要 / the local hour the daily digest wakes at"},
	{.name = "digestMinLines", .type = ZC_CONF_INT, .layer = "agent", F(digest_min_lines),
	 .lo = 1, .hi = 1000000, .def = ZC_DIGEST_MIN_LINES_DEFAULT, .unit = "new lines",
	 .flags = ZC_CONF_SAY_DEFAULT,
	 .help = "攒够多少条新消息才摘要，不够就留到明天 / the new lines a conversation needs for "
		 "its digest; fewer wait for the next day"},
	{.name = "digestMaxChars", .type = ZC_CONF_INT, .layer = "agent", F(digest_max_chars),
	 .lo = 1000, .hi = 2000000, .def = ZC_DIGEST_MAX_CHARS_DEFAULT, .unit = "characters",
	 .flags = ZC_CONF_SAY_DEFAULT,
	 .help = "一次摘要最多喂多少字符的转录（超出保留最近的） / the transcript one digest gets, "
		 "the newest kept when cut"},
	{.name = "digestTimeoutMs", .type = ZC_CONF_INT, .layer = "agent", F(digest_timeout_ms),
	 .lo = 1000, .hi = 3600000, .def = ZC_DIGEST_TIMEOUT_DEFAULT, .unit = "milliseconds",
	 .flags = ZC_CONF_SAY_DEFAULT,
	 .help = "一次摘要的硬超时 / the hard limit of one digest run"},
	{.name = "timeZone", .type = ZC_CONF_STRING, .layer = "agent", F(time_zone),
	 .check = check_time_zone, .flags = ZC_CONF_EMPTY_NULL,
	 .help = "摘要用的本地时间所在时区（IANA 名，null 为系统时区） / the time zone of the "
		 "digest's local hour and dates (an IANA name; null: the system's)"},
	{.name = "digestCatchUp", .type = ZC_CONF_BOOL, .layer = "agent", F(digest_catch_up),
	 .def = 1, .unit = "a missed digest runs on the conversation's first message after start",
	 .help = "错过摘要点就在下次有人说话时补一次 / a missed digest runs on the first message "
		 "after start"},
	{0},
};

#undef F
#undef NOFIELD

/* ---- the generic checker ------------------------------------------------ */

static int has_field(const struct zc_conf_row *r) { return r->off != (size_t)-1; }

static void *field(const struct zc_conf_row *r, struct zc_config *c) { return (char *)c + r->off; }

static const void *cfield(const struct zc_conf_row *r, const struct zc_config *c)
{
	return (const char *)c + r->off;
}

static void set_int(const struct zc_conf_row *r, struct zc_config *c, long long v)
{
	if (r->size == sizeof(int))
		*(int *)field(r, c) = (int)v;
	else
		*(long *)field(r, c) = (long)v;
}

static long long get_int(const struct zc_conf_row *r, const struct zc_config *c)
{
	return r->size == sizeof(int) ? *(const int *)cfield(r, c) : *(const long *)cfield(r, c);
}

/* The section a row belongs to ("" for the top level): is row `r` a
 * child of section `sec`? */
static int in_section(const struct zc_conf_row *r, const char *sec)
{
	const char *dot = strrchr(r->name, '.'); /* sections nest: "worlds.console.apology" */
	if (!*sec)
		return dot == NULL;
	size_t n = strlen(sec);
	return dot && (size_t)(dot - r->name) == n && strncmp(r->name, sec, n) == 0;
}

static const struct zc_conf_row *find(const char *sec, const char *key)
{
	size_t n = strlen(sec);
	for (const struct zc_conf_row *r = zc_conf_rows; r->name; r++) {
		if (!in_section(r, sec))
			continue;
		const char *own = n ? r->name + n + 1 : r->name;
		if (strcmp(own, key) == 0)
			return r;
	}
	return NULL;
}

/* The keys a section takes, as its unknown-key message lists them. */
static void known_keys(const char *sec, struct zc_buf *b)
{
	for (const struct zc_conf_row *r = zc_conf_rows; r->name; r++) {
		if (!in_section(r, sec) || (r->flags & ZC_CONF_HIDDEN))
			continue;
		if (r->type == ZC_CONF_SECTION && (r->flags & ZC_CONF_LIST_KEYS)) {
			known_keys(r->name, b);
			continue;
		}
		zc_buf_addf(b, "%s%s", b->len ? ", " : "", r->name);
	}
}

static void defaults(struct zc_config *c)
{
	memset(c, 0, sizeof(*c));
	for (const struct zc_conf_row *r = zc_conf_rows; r->name; r++) {
		if (!has_field(r))
			continue;
		if (r->type == ZC_CONF_INT || r->type == ZC_CONF_BOOL || r->type == ZC_CONF_ENUM)
			set_int(r, c, (long long)r->def);
		else if (r->type == ZC_CONF_REAL)
			*(double *)field(r, c) = r->def;
	}
	/* (the weight rows' own defaults are those of the preset) */
	c->weights = zc_recall_weights_default;
	snprintf(c->weights_name, sizeof(c->weights_name), "default");
	/* worlds.qq's strings with a default (docs/QQ.md) */
	snprintf(c->qq.url, sizeof(c->qq.url), "ws://127.0.0.1:3001/");
	snprintf(c->qq.path, sizeof(c->qq.path), "/onebot/v11/ws");
	snprintf(c->qq.token_env, sizeof(c->qq.token_env), "NAPCAT_TOKEN");
	snprintf(c->wiki.base_url, sizeof(c->wiki.base_url), "%s", ZC_WIKI_URL_DEFAULT);
}

static int bad_int(const struct zc_conf_row *r, struct zc_err *e)
{
	char unit[256] = "";
	if (r->flags & ZC_CONF_SAY_DEFAULT)
		snprintf(unit, sizeof(unit), " (%s; default %lld)", r->unit, (long long)r->def);
	else if (r->unit)
		snprintf(unit, sizeof(unit), " (%s)", r->unit);
	return zc_fail(e, ZCOR_EINVAL, "'%s' must be an integer from %lld%s to %lld%s", r->name, r->lo,
		       r->lo_note ? r->lo_note : "", r->hi, unit);
}

static int bad_enum(const struct zc_conf_row *r, struct zc_err *e)
{
	struct zc_buf b = ZC_BUF_INIT;
	for (size_t i = 0; r->values[i]; i += 2)
		zc_buf_addf(&b, "%s\"%s\" (%s)", i ? " or " : "", r->values[i], r->values[i + 1]);
	int rc = zc_fail(e, ZCOR_EINVAL, "'%s' must be %s", r->name, zc_buf_str(&b));
	zc_buf_release(&b);
	return rc;
}

static int check_section(const struct zc_conf_row *sec, const json_t *o, struct zc_config *out,
			 struct zc_err *e);

/* {field: "<sec>.<key>", reason: "unknown"} on e. */
static void unknown_detail(struct zc_err *e, const char *sec, const char *key)
{
	char name[400];
	snprintf(name, sizeof(name), "%s%s%s", sec, *sec ? "." : "", ZC_Q(key, 60));
	json_t *d = json_pack("{s:s, s:s}", "field", name, "reason", "unknown");
	if (d) /* out of memory: the message alone */
		zc_json_err_detail(e, d);
}

static const char *type_name(enum zc_conf_type t)
{
	static const char *const names[] = {"object", "integer", "number", "boolean", "enum", "string"};
	return names[t];
}

/* What a program (the page) needs to check a row's value itself and to
 * word a refusal: {field, type, min?, max?, values?, default?}. */
static json_t *row_rule(const struct zc_conf_row *r)
{
	json_t *o = json_pack("{s:s, s:s}", "field", r->name, "type", type_name(r->type));
	if (r->type == ZC_CONF_INT) {
		json_object_set_new(o, "min", json_integer(r->lo));
		json_object_set_new(o, "max", json_integer(r->hi));
		json_object_set_new(o, "default", json_integer((json_int_t)r->def));
	} else if (r->type == ZC_CONF_REAL) {
		json_object_set_new(o, "min", json_real(r->dlo));
		json_object_set_new(o, "max", json_real(r->dhi));
	} else if (r->type == ZC_CONF_ENUM) {
		json_t *vals = json_array();
		for (size_t i = 0; r->values[i]; i += 2)
			json_array_append_new(vals, json_string(r->values[i]));
		json_object_set_new(o, "values", vals);
	}
	if (r->flags & (ZC_CONF_NULLABLE | ZC_CONF_EMPTY_NULL))
		json_object_set_new(o, "nullable", json_true());
	return o;
}

json_t *zc_config_fields(void)
{
	json_t *a = json_array();
	for (const struct zc_conf_row *r = zc_conf_rows; r->name; r++)
		if (!(r->flags & ZC_CONF_HIDDEN) && r->type != ZC_CONF_SECTION)
			json_array_append_new(a, row_rule(r));
	return json_pack("{s:o}", "fields", a);
}

static int check_one(const struct zc_conf_row *r, const json_t *v, struct zc_config *out,
		     struct zc_err *e);

/* A refused value names its row in the error's details too (issue 18:
 * the page words it in its own language); a section's own refusal, or a
 * check that gave details of its own, keeps them. */
static int check_value(const struct zc_conf_row *r, const json_t *v, struct zc_config *out,
		       struct zc_err *e)
{
	int rc = check_one(r, v, out, e);
	if (rc == ZCOR_EINVAL && e && !e->detail[0]) {
		json_t *d = row_rule(r);
		if (d) { /* out of memory: the message alone */
			json_object_set_new(d, "reason",
					    json_string(r->type == ZC_CONF_SECTION ? "type" : "invalid"));
			zc_json_err_detail(e, d);
		}
	}
	return rc;
}

static int check_one(const struct zc_conf_row *r, const json_t *v, struct zc_config *out,
		     struct zc_err *e)
{
	switch (r->type) {
	case ZC_CONF_SECTION:
		return check_section(r, v, out, e);
	case ZC_CONF_INT:
		if (!json_is_integer(v) || json_integer_value(v) < r->lo || json_integer_value(v) > r->hi)
			return bad_int(r, e);
		set_int(r, out, json_integer_value(v));
		return ZCOR_OK;
	case ZC_CONF_REAL: {
		double d = json_is_number(v) ? json_number_value(v) : NAN; /* NAN: outside any range */
		if (!(d >= r->dlo && d <= r->dhi))
			return zc_fail(e, ZCOR_EINVAL, "'%s' must be a number from %g to %g (%s)", r->name,
				       r->dlo, r->dhi, r->unit);
		*(double *)field(r, out) = d;
		return ZCOR_OK;
	}
	case ZC_CONF_BOOL:
		if (!json_is_boolean(v)) {
			char unit[256] = "";
			if (r->unit)
				snprintf(unit, sizeof(unit), " (%s)", r->unit);
			return zc_fail(e, ZCOR_EINVAL, "'%s' must be true or false%s", r->name, unit);
		}
		set_int(r, out, json_is_true(v));
		return ZCOR_OK;
	case ZC_CONF_ENUM: {
		const char *s = json_string_value(v);
		for (size_t i = 0; s && r->values[i]; i += 2)
			if (strcmp(s, r->values[i]) == 0) {
				set_int(r, out, (long long)(i / 2));
				return ZCOR_OK;
			}
		return bad_enum(r, e);
	}
	case ZC_CONF_STRING:
		return r->check(r, v, out, e);
	}
	return zc_fail(e, ZCOR_EINTERNAL, "config row '%s' has no type", r->name);
}

/* An object of the section's rows (or null where the section allows it:
 * then it is off and keeps its defaults). */
static int check_section(const struct zc_conf_row *sec, const json_t *o, struct zc_config *out,
			 struct zc_err *e)
{
	if ((sec->flags & ZC_CONF_NULLABLE) && json_is_null(o))
		return ZCOR_OK;
	if (!json_is_object(o))
		return zc_fail(e, ZCOR_EINVAL, "%s", sec->example);
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)o, k, v) {
		const struct zc_conf_row *r = find(sec->name, k);
		if (!r) {
			struct zc_buf known = ZC_BUF_INIT;
			known_keys(sec->name, &known);
			int rc = zc_fail(e, ZCOR_EINVAL, "unknown key '%s.%s'; known: %s", sec->name, k,
					 zc_buf_str(&known));
			zc_buf_release(&known);
			unknown_detail(e, sec->name, k);
			return rc;
		}
		int rc = check_value(r, v, out, e);
		if (rc)
			return rc;
	}
	for (const struct zc_conf_row *r = zc_conf_rows; r->name; r++) {
		if (in_section(r, sec->name) && (r->flags & ZC_CONF_REQUIRED) &&
		    !json_object_get(o, r->name + strlen(sec->name) + 1))
			return zc_fail(e, ZCOR_EINVAL, "'%s' is required when '%s' is set", r->name,
				       sec->name);
	}
	if (has_field(sec))
		set_int(sec, out, 1); /* its "enabled" */
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
		const struct zc_conf_row *r = find("", k);
		if (!r) {
			struct zc_buf known = ZC_BUF_INIT;
			known_keys("", &known);
			int rc = zc_fail(e, ZCOR_EINVAL, "unknown key '%s'; known: %s", k, zc_buf_str(&known));
			zc_buf_release(&known);
			unknown_detail(e, "", k);
			return rc;
		}
		int rc = check_value(r, v, out, e);
		if (rc)
			return rc;
	}
	return ZCOR_OK;
}

/* ---- the settings as JSON ---------------------------------------------- */

static json_t *value_json(const struct zc_conf_row *r, const struct zc_config *cfg);

static json_t *section_json(const struct zc_conf_row *sec, const struct zc_config *cfg)
{
	if ((sec->flags & ZC_CONF_NULLABLE) && !get_int(sec, cfg))
		return json_null();
	json_t *o = json_object();
	for (const struct zc_conf_row *r = zc_conf_rows; r->name; r++) {
		if (!in_section(r, sec->name) || (r->flags & (ZC_CONF_HIDDEN | ZC_CONF_IN_DOC)))
			continue;
		json_t *v = value_json(r, cfg);
		if (v)
			json_object_set_new(o, r->name + strlen(sec->name) + 1, v);
	}
	return o;
}

/* NULL: left out. */
static json_t *value_json(const struct zc_conf_row *r, const struct zc_config *cfg)
{
	if (r->json)
		return r->json(cfg);
	switch (r->type) {
	case ZC_CONF_SECTION:
		return section_json(r, cfg);
	case ZC_CONF_INT:
		return json_integer((json_int_t)get_int(r, cfg));
	case ZC_CONF_REAL:
		return json_real(*(const double *)cfield(r, cfg));
	case ZC_CONF_BOOL:
		return json_boolean(get_int(r, cfg));
	case ZC_CONF_ENUM:
		return json_string(r->values[2 * get_int(r, cfg)]);
	case ZC_CONF_STRING: {
		const char *s = cfield(r, cfg);
		if (*s)
			return json_string(s);
		return (r->flags & ZC_CONF_EMPTY_NULL) ? json_null() : NULL;
	}
	}
	return NULL;
}

json_t *zc_config_json(const struct zc_config *cfg)
{
	json_t *o = json_object();
	for (const struct zc_conf_row *r = zc_conf_rows; r->name; r++) {
		if (!in_section(r, "") || (r->flags & (ZC_CONF_HIDDEN | ZC_CONF_IN_DOC)))
			continue;
		json_t *v = value_json(r, cfg);
		if (v)
			json_object_set_new(o, r->name, v);
	}
	return o;
}

json_t *zc_confile_json(const struct zc_confile *c)
{
	json_t *j = zc_config_json(&c->cfg);
	/* the rows kept in the document (config.h): null when absent */
	for (const struct zc_conf_row *r = zc_conf_rows; r->name; r++) {
		if (!(r->flags & ZC_CONF_IN_DOC))
			continue;
		const char *dot = strchr(r->name, '.');
		char sec[64];
		snprintf(sec, sizeof(sec), "%.*s", (int)(dot - r->name), r->name);
		json_t *have = json_object_get(json_object_get(c->doc, sec), dot + 1);
		json_object_set(json_object_get(j, sec), dot + 1, have ? have : json_null());
	}
	if (c->warning[0])
		json_object_set_new(j, "warning", json_string(c->warning));
	return j;
}

/* ---- the file ------------------------------------------------------------ */

void zc_config_init(struct zc_confile *c, const char *path)
{
	memset(c, 0, sizeof(*c));
	c->path = zc_strdup(path);
	zc_watch_init(&c->file, path, "config.json", ZC_CONFIG_MAX_BYTES, 1);
	defaults(&c->cfg);
	c->doc = json_object();
}

void zc_config_release(struct zc_confile *c)
{
	if (!c)
		return;
	zc_free(c->path);
	zc_watch_release(&c->file);
	json_decref(c->doc);
	memset(c, 0, sizeof(*c));
}

static int check_into(void *ud, const json_t *doc, struct zc_err *e)
{
	return zc_config_check(doc, ud, e);
}

static void use(struct zc_confile *c, const struct zc_config *cfg, json_t *doc)
{
	c->cfg = *cfg;
	json_decref(c->doc);
	c->doc = doc;
	c->good = 1;
}

void zc_config_refresh(struct zc_confile *c)
{
	struct zc_config cfg;
	json_t *doc = NULL;
	struct zc_err e = {0};
	switch (zc_watch_poll(&c->file, check_into, &cfg, &doc, &e)) {
	case ZC_WATCH_SAME:
	case ZC_WATCH_ERROR:
		return;
	case ZC_WATCH_MISSING:
		/* no file: the defaults are the settings (and stay the good
		 * ones if a broken file appears later) */
		c->good = 1;
		return;
	case ZC_WATCH_REMOVED:
		c->good = 1;
		defaults(&cfg);
		use(c, &cfg, json_object());
		c->warning[0] = '\0';
		return;
	case ZC_WATCH_LOADED:
		c->warning[0] = '\0';
		use(c, &cfg, doc);
		return;
	case ZC_WATCH_BAD:
		break;
	}
	const char *kept = "the last good settings stay in use";
	if (!c->good) {
		/* a process starting on a broken file: the copy of the last
		 * valid one, if there is one */
		struct zc_err ce = {0};
		if (zc_watch_last_good(&c->file, check_into, &cfg, &doc, &ce) == ZCOR_OK) {
			use(c, &cfg, doc);
			kept = "the last good settings (config.json" ZC_CONFIG_LAST_GOOD_SUFFIX ") are in use";
		} else {
			kept = "the defaults are in use (no valid earlier config.json was kept)";
		}
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
		rc = zc_watch_write(&c->file, withnl, n + 1, e);
		zc_free(withnl);
		zc_free(text);
	}
	if (!rc) {
		use(c, &cfg, doc);
		c->warning[0] = '\0';
	} else {
		json_decref(doc);
	}
	unlock_dir(lock);
	return rc;
}

