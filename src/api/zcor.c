/*
 * zcor.c — libzcor's public face (include/zcor.h): handles, JSON in and
 * out, error shapes. API layer (src/api/): adapters (CLI, server) call
 * only this; it calls the llm, tools, recall and memory layers and holds
 * no rule of its own. Each layer owns its state: the handle holds one of
 * each, opened in layer order and closed in reverse by its own close.
 */
#include "zcor.h"

#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/json.h"
#include "base/timeutil.h"
#include "base/utf8.h"
#include "agent/digest.h"
#include "agent/turn.h"
#include "llm/llm.h"
#include "text/norm.h"
#include "memory/dialogue.h"
#include "memory/digest.h"
#include "memory/memory.h"
#include "memory/media.h"
#include "memory/transcript.h"
#include "recall/recall.h"
#include "tools/skills.h"
#include "tools/tools.h"

/* The last error of a handle, or of a thread's handle-less calls
 * (zcor.h, the convention): the code, the message and details as the
 * failing layer gave them, and zcor_errjson's text, made when first asked
 * for and kept until the next call. */
struct last_err {
	int code;
	struct zc_err err;
	char *json;
};

struct zcor {
	struct zc_mem mem;       /* memory layer: the store, config, synonyms */
	struct zc_recall recall; /* recall layer: its caches, over mem */
	struct zc_llm llm;       /* LLM layer: the provider, over mem's config */
	struct zc_skills skills; /* tools layer: the skills discovered (tools/skills.h) */
	int interrupted;         /* zcor_interrupt (any thread; atomic): runs stop */
	struct last_err last; /* what zcor_errmsg/_errcode/_errjson answer */
	/* zcor_open's failure, kept: every later call on the handle answers it */
	int open_rc;
	struct zc_err open_err;
	char *dir;
	/* The handle's lock (hold() below) and the thread that writes the
	 * queued read records of a handle nobody calls (memory.h, ZC_READS_*),
	 * started with the first such record. */
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t flusher;
	int flusher_started, closing;
};

/*
 * Every call on a handle holds its lock from start to end, and so does the
 * flusher while it writes an idle handle's read records: the handle's
 * SQLite connection is used by one thread at a time. Recursive, so that a
 * callback (a provider) may call in again; released by the cleanup
 * attribute on every return path, so the functions below keep their own
 * early returns.
 */
static zcor *hold(zcor *z)
{
	if (z)
		pthread_mutex_lock(&z->lock);
	return z;
}

static void release(zcor **z)
{
	if (*z)
		pthread_mutex_unlock(&(*z)->lock);
}

#define HOLD(z) zcor *held_ __attribute__((cleanup(release))) = hold(z)

/* After a failed write (a full disk, another process holding the lock):
 * the flusher tries again this much later. */
#define FLUSH_RETRY_MS 50

static void wait_ms(zcor *z, long ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(&z->wake, &z->lock, &ts);
}

static void *flusher_main(void *arg)
{
	zcor *z = arg;
	pthread_mutex_lock(&z->lock);
	while (!z->closing) {
		long due = zc_mem_flush_due(&z->mem);
		if (due < 0) {
			pthread_cond_wait(&z->wake, &z->lock);
		} else if (due > 0) {
			wait_ms(z, due);
		} else {
			struct zc_err e = {0};
			/* never waits for another process's lock while holding
			 * the handle's: the handle's callers would wait too */
			if (zc_mem_flush_try(&z->mem, &e) != ZCOR_OK)
				wait_ms(z, FLUSH_RETRY_MS);
		}
	}
	pthread_mutex_unlock(&z->lock);
	return NULL;
}

/* A read record was queued (inside a call, the lock held). Without a
 * thread the queue still goes out with the next call or at close. */
static void work_deferred(void *ud)
{
	zcor *z = ud;
	if (!z->flusher_started)
		z->flusher_started = pthread_create(&z->flusher, NULL, flusher_main, z) == 0;
	else
		pthread_cond_signal(&z->wake);
}

static void *json_alloc(size_t n) { return zc_malloc(n); }

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static pthread_key_t thread_json_key; /* frees a thread's errjson text when it ends */
static void init_libs(void)
{
	json_set_alloc_funcs(json_alloc, zc_free);
	pthread_key_create(&thread_json_key, zc_free);
}

void zcor_free(void *p) { zc_free(p); }

/* ---- the last error (zcor.h, the convention) ------------------------ */

/* The handle-less calls' last error, one per thread: a call with z NULL
 * on one thread never shows on another. */
static __thread struct last_err thread_last;

static struct last_err *last_of(zcor *z) { return z ? &z->last : &thread_last; }

static void last_clear(zcor *z)
{
	struct last_err *l = last_of(z);
	l->code = ZCOR_OK;
	zc_err_clear(&l->err);
	zc_free(l->json);
	l->json = NULL;
	if (!z)
		pthread_setspecific(thread_json_key, NULL);
}

/*
 * The start of every call: the last error is forgotten; a handle whose
 * zcor_open failed answers that failure again (as every call on it does)
 * and the call stops there.
 */
static int begin(zcor *z)
{
	pthread_once(&init_once, init_libs);
	last_clear(z);
	if (z && z->open_rc) {
		z->last.code = z->open_rc;
		z->last.err = z->open_err;
	}
	return z ? z->open_rc : ZCOR_OK;
}

/* The end of every call: rc is the call's code, its message and details
 * already in last_of(z)->err. */
static int done(zcor *z, int rc)
{
	last_of(z)->code = rc;
	return rc;
}

/* A refused argument without details of its own names its field in
 * them still (issue 18: a page words the refusal in its own language):
 * the message of such a refusal begins "argument '<field>'" (STYLE.md),
 * so {"field", "reason": "invalid"} comes from there. NULL otherwise. */
static json_t *field_of(const char *msg)
{
	static const char lead[] = "argument '";
	if (strncmp(msg, lead, sizeof(lead) - 1) != 0)
		return NULL;
	const char *f = msg + sizeof(lead) - 1, *end = strchr(f, '\'');
	if (!end || end == f || end - f > 200)
		return NULL;
	char buf[201];
	memcpy(buf, f, (size_t)(end - f));
	buf[end - f] = '\0';
	json_t *name = zc_json_string_own(zc_utf8_lossy(buf));
	return name ? json_pack("{s:o, s:s}", "field", name, "reason", "invalid") : NULL;
}

/* {"error": {"code", "message", "details"?}} for the failure in e;
 * details is the detail the failing rule gave (err.h), when it did. */
static char *error_json(int code, const struct zc_err *e)
{
	/* the message may quote bytes from outside (a decoded URI, a path) */
	json_t *j = json_pack("{s:{s:s, s:o}}", "error", "code", zcor_code_name(code), "message",
			      zc_json_string_own(zc_utf8_lossy(e->msg)));
	json_t *detail = e->detail[0] ? json_loads(e->detail, 0, NULL) : NULL;
	if (!detail && code == ZCOR_EINVAL)
		detail = field_of(e->msg);
	if (json_is_object(detail))
		json_object_set(json_object_get(j, "error"), "details", detail);
	json_decref(detail);
	char *s = zc_json_dump(j);
	json_decref(j);
	return s;
}

const char *zcor_errmsg(zcor *z)
{
	HOLD(z);
	return last_of(z)->err.msg;
}

int zcor_errcode(zcor *z)
{
	HOLD(z);
	return last_of(z)->code;
}

const char *zcor_errjson(zcor *z)
{
	HOLD(z);
	pthread_once(&init_once, init_libs);
	struct last_err *l = last_of(z);
	if (!l->code)
		return NULL;
	if (!l->json) {
		l->json = error_json(l->code, &l->err);
		if (!z)
			pthread_setspecific(thread_json_key, l->json);
	}
	return l->json ? l->json : "{\"error\":{\"code\":\"internal\",\"message\":\"out of memory\"}}";
}

/* Sets *out_json to out (consumed), or on failure to NULL; records rc. */
static int answer(zcor *z, int rc, json_t *out, char **out_json)
{
	*out_json = NULL;
	if (!rc)
		*out_json = zc_json_dump(out);
	json_decref(out);
	return done(z, rc);
}

/* ---- handles ---------------------------------------------------------- */

const char *zcor_dir(zcor *z) { return z->dir; }

/* Not in zcor.h: zcor-bench counts the pages SQLite had to read for each
 * recall (sqlite3_db_status, SQLITE_DBSTATUS_CACHE_MISS), a measure of
 * the cold-cache tail that the machine's timing noise does not blur. */
struct zc_mem *zc_bench_mem(zcor *z);
struct zc_mem *zc_bench_mem(zcor *z) { return &z->mem; }
struct zc_recall *zc_bench_recall(zcor *z);
struct zc_recall *zc_bench_recall(zcor *z) { return &z->recall; }
/* A test that uses the handle's connection itself takes the handle's
 * lock around it, as every call does: the read-record flusher thread
 * shares the connection (opened without SQLite's own mutex). */
void zc_bench_lock(zcor *z, int on);
void zc_bench_lock(zcor *z, int on)
{
	if (on)
		pthread_mutex_lock(&z->lock);
	else
		pthread_mutex_unlock(&z->lock);
}

int zcor_open(zcor **out, const char *dir)
{
	pthread_once(&init_once, init_libs);
	*out = NULL;
	last_clear(NULL);
	zcor *z = zc_calloc(1, sizeof(*z));
	if (!z)
		return done(NULL, zc_fail(&thread_last.err, ZCOR_EINTERNAL, "out of memory"));
	pthread_mutexattr_t ma;
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&z->lock, &ma);
	pthread_mutexattr_destroy(&ma);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&z->wake, &ca);
	pthread_condattr_destroy(&ca);
	z->dir = zc_strdup(dir ? dir : "");
	*out = z;
	int rc = dir && *dir ? zc_mem_open(&z->mem, dir, &z->last.err)
			     : zc_fail(&z->last.err, ZCOR_EINVAL, "no memory directory given");
	if (rc) {
		/* the handle stays, to say why (zcor_errmsg) until zcor_close */
		z->open_rc = rc;
		z->open_err = z->last.err;
		return done(z, rc);
	}
	zc_recall_open(&z->recall, &z->mem);
	zc_llm_open(&z->llm, &z->mem.conf);
	zc_skills_init(&z->skills, dir);
	zc_mem_on_deferred(&z->mem, work_deferred, z);
	return done(z, ZCOR_OK);
}

void zcor_close(zcor *z)
{
	if (!z)
		return;
	if (z->flusher_started) {
		pthread_mutex_lock(&z->lock);
		z->closing = 1;
		pthread_cond_signal(&z->wake);
		pthread_mutex_unlock(&z->lock);
		pthread_join(z->flusher, NULL);
	}
	if (!z->open_rc) {
		zc_skills_release(&z->skills);
		zc_llm_close(&z->llm);
		zc_recall_close(&z->recall);
		zc_mem_close(&z->mem); /* writes what is still queued */
	}
	pthread_cond_destroy(&z->wake);
	pthread_mutex_destroy(&z->lock);
	zc_free(z->last.json);
	zc_free(z->dir);
	zc_free(z);
}

int zcor_flush(zcor *z)
{
	HOLD(z);
	int rc = begin(z);
	if (rc)
		return rc;
	return done(z, zc_mem_fts_catch_up(&z->mem, &z->last.err));
}

void zcor_set_provider(zcor *z, const struct zcor_provider *p) { zc_llm_set_provider(&z->llm, p); }

void zcor_set_fallback_provider(zcor *z, const struct zcor_provider *p)
{
	zc_llm_set_fallback(&z->llm, p);
}

static int64_t system_now(void *ud) { return zc_time_now_ms(); }

void zcor_interrupt(zcor *z)
{
	if (z)
		__atomic_store_n(&z->interrupted, 1, __ATOMIC_RELEASE);
}

void zcor_set_clock(zcor *z, int64_t (*now_ms)(void *ud), void *ud)
{
	z->mem.now_ms = now_ms ? now_ms : system_now;
	z->mem.clock_ud = ud;
}

/* Conversation keys: group:<id>, private:<qq>, console:<name>. */
static int conv_check(const char *key, struct zc_err *e)
{
	if (!key)
		return zc_fail(e, ZCOR_EINVAL,
			       "no conversation key given; use group:<id>, private:<qq> or console:<name>");
	return zc_conv_check(key, e);
}

int zcor_check_conversation(zcor *z, const char *key)
{
	HOLD(z);
	int rc = begin(z);
	if (rc)
		return rc;
	return done(z, conv_check(key, &last_of(z)->err));
}

/* ---- tools ------------------------------------------------------------ */

int zcor_tool_call(zcor *z, const struct zcor_ctx *ctx, const char *name, const char *args_json,
		   char **out_json)
{
	HOLD(z);
	static const struct zcor_ctx host = {ZCOR_ACTOR_CLI, NULL};
	*out_json = NULL;
	int rc = begin(z);
	if (rc)
		return rc;
	if (!ctx)
		ctx = &host;
	if (ctx->conversation && (rc = conv_check(ctx->conversation, &z->last.err)))
		return done(z, rc);
	const struct zc_tool *t = zc_tool_find(name);
	if (!t)
		return done(z, zc_fail(&z->last.err, ZCOR_ENOTFOUND,
				       "no tool named '%s'; `zcor tools` lists them", ZC_Q(name, 100)));
	/* an explicit provider wins, else config.json's, else the fallback,
	 * else none (memory/search.c then answers no_provider) */
	const struct zcor_provider *provider = zc_llm_provider(&z->llm);
	json_t *result = NULL;
	char *text = NULL;
	rc = zc_tool_call_text(&z->mem, ctx, t, provider, zc_llm_http_get(), &z->skills, args_json,
			       &result, &text, &z->last.err);
	if (text) { /* the operation's own text (zcor_memory_query's hits) */
		*out_json = text;
		return done(z, rc);
	}
	return answer(z, rc, result, out_json);
}

int zcor_tools_json(zcor *z, unsigned flags, char **out_json)
{
	HOLD(z);
	*out_json = NULL;
	int rc = begin(z);
	if (rc)
		return rc;
	/* ZCOR_TOOLS_ALL: the host plane's list; else the model's, under the
	 * handle's config (none without a handle: every row of it) */
	unsigned audience = (flags & ZCOR_TOOLS_ALL) ? ZC_AUD_HOST : ZC_AUD_MODEL;
	const struct zc_config *cfg = NULL;
	if (z && !z->open_rc)
		zc_config_refresh(&z->mem.conf); /* skills.projectRoot, and the model's offer */
	if (z && audience == ZC_AUD_MODEL)
		cfg = &z->mem.conf.cfg;
	struct zc_tool_list l;
	zc_tools_for(audience, cfg, NULL, &l);
	/* the skill row lists the skills: the handle's, or without a handle
	 * the built-in ones and ~/.dsh/skills (no memory directory, so no
	 * project root) */
	struct zc_skills none;
	struct zc_skills *skills = z && !z->open_rc ? &z->skills : &none;
	if (skills == &none)
		zc_skills_init(&none, NULL);
	struct zcor_ctx ctx = {audience == ZC_AUD_HOST ? ZCOR_ACTOR_CLI : ZCOR_ACTOR_MODEL, NULL};
	const struct zc_tool_env env = {z && !z->open_rc ? &z->mem : NULL, &ctx, NULL, NULL, skills};
	json_t *arr = json_array();
	for (size_t i = 0; i < l.n; i++) {
		const struct zc_tool *t = l.v[i];
		json_t *schema = json_deep_copy(zc_tool_schema(t));
		char *zh = zc_tool_description(t, &env, 0), *en = zc_tool_description(t, &env, 1);
		json_array_append_new(
			arr, json_pack("{s:s, s:s, s:s, s:s, s:o}", "name", t->name, "title", t->title,
				       "description", (flags & ZCOR_TOOLS_ENGLISH) ? en : zh,
				       "descriptionEn", en, "inputSchema", schema));
		zc_free(zh);
		zc_free(en);
	}
	if (skills == &none)
		zc_skills_release(&none);
	return answer(z, ZCOR_OK, arr, out_json);
}

int zcor_tool_offered(zcor *z, const char *name)
{
	HOLD(z);
	const struct zc_tool *t = zc_tool_find(name);
	if (!t || !z || z->open_rc)
		return t != NULL && (t->audience & ZC_AUD_MODEL);
	zc_config_refresh(&z->mem.conf);
	return zc_tool_visible(t, ZC_AUD_MODEL, &z->mem.conf.cfg, NULL);
}

/* ---- recall and the prefix -------------------------------------------- */

/* Recall reads nodes_fts: the rows of new nodes are written first. */
static int recall_now(zcor *z, const json_t *req, json_t **out, struct zc_err *e)
{
	struct zc_err ignored = {0};
	zc_mem_fts_catch_up(&z->mem, &ignored); /* failing, recall goes on without them */
	return zc_recall(&z->recall, req, out, e);
}

int zcor_recall(zcor *z, const char *request_json, char **out_json)
{
	HOLD(z);
	*out_json = NULL;
	int rc = begin(z);
	if (rc)
		return rc;
	json_t *req = NULL, *out = NULL;
	rc = zc_json_parse(request_json ? request_json : "", request_json ? strlen(request_json) : 0,
			   "the recall request", &req, &z->last.err);
	if (!rc)
		rc = recall_now(z, req, &out, &z->last.err);
	json_decref(req);
	return answer(z, rc, out, out_json);
}

/* The preview's request: {conversation, text, senderId?, senderName?,
 * mentions?}, each field checked here, naming it. */
static int preview_request(const json_t *in, json_t **req, struct zc_err *e)
{
	static const char *const known[] = {"conversation", "text", "senderId", "senderName", "mentions"};
	const char *k;
	json_t *v;
	*req = NULL;
	if (!json_is_object(in))
		return zc_fail(e, ZCOR_EINVAL, "the preview request must be a JSON object");
	json_object_foreach((json_t *)in, k, v) {
		size_t i = 0;
		while (i < sizeof(known) / sizeof(known[0]) && strcmp(k, known[i]))
			i++;
		if (i == sizeof(known) / sizeof(known[0]))
			return zc_fail(e, ZCOR_EINVAL,
				       "argument '%s': unknown; a preview has conversation, text, senderId, "
				       "senderName, mentions",
				       ZC_Q(k, 60));
		if (i < 4 && !json_is_string(v))
			return zc_fail(e, ZCOR_EINVAL, "argument '%s': must be a string", k);
	}
	const char *conv = zc_json_str(in, "conversation"), *text = zc_json_str(in, "text");
	if (!conv)
		return zc_fail(e, ZCOR_EINVAL,
			       "argument 'conversation': required; group:<id>, private:<qq> or console:<name>");
	if (zc_conv_check(conv, e))
		return zc_err_prefix(e, "argument 'conversation'");
	if (!text || !*text)
		return zc_fail(e, ZCOR_EINVAL, "argument 'text': required, the message to recall for");
	json_t *mentions = json_object_get(in, "mentions");
	if (mentions && !json_is_array(mentions))
		return zc_fail(e, ZCOR_EINVAL, "argument 'mentions': must be an array of person ids");
	/* as a logged message has them: a sender id and name (null when not given) */
	const char *sid = zc_json_str(in, "senderId"), *sname = zc_json_str(in, "senderName");
	json_t *msg = json_pack("{s:s, s:o, s:o}", "text", text, "senderId",
				sid && *sid ? json_string(sid) : json_null(), "senderName",
				sname && *sname ? json_string(sname) : json_null());
	if (mentions)
		json_object_set(msg, "mentions", mentions);
	json_t *batch = json_pack("[o]", msg);
	*req = zc_turn_recall_request(conv, batch);
	json_decref(batch);
	if (!*req)
		return zc_fail(e, ZCOR_EINTERNAL, "the preview request could not be built (out of memory)");
	json_object_set_new(*req, "explain", json_true());
	json_object_set_new(*req, "countHits", json_false());
	return ZCOR_OK;
}

int zcor_recall_preview(zcor *z, const char *request_json, char **out_json)
{
	HOLD(z);
	*out_json = NULL;
	int rc = begin(z);
	if (rc)
		return rc;
	json_t *in = NULL, *req = NULL, *out = NULL;
	char *prefix = NULL;
	rc = zc_json_parse(request_json ? request_json : "", request_json ? strlen(request_json) : 0,
			   "the preview request", &in, &z->last.err);
	if (!rc)
		rc = preview_request(in, &req, &z->last.err);
	if (!rc)
		rc = recall_now(z, req, &out, &z->last.err);
	if (!rc)
		rc = zc_prefix(&z->mem, zc_json_str(req, "conversation"), &prefix, &z->last.err);
	if (!rc)
		json_object_set_new(out, "prefix", zc_json_string_own(prefix));
	else
		zc_free(prefix);
	json_decref(in);
	json_decref(req);
	if (rc) {
		json_decref(out);
		out = NULL;
	}
	return answer(z, rc, out, out_json);
}

int zcor_warm(zcor *z, int budget_mb, char **out_json)
{
	HOLD(z);
	*out_json = NULL;
	int rc = begin(z);
	if (rc)
		return rc;
	json_t *out = NULL;
	rc = budget_mb < 1 || budget_mb > ZCOR_WARM_MAX_MB
		     ? zc_fail(&z->last.err, ZCOR_EINVAL, "budget_mb: must be 1..%d (megabytes), got %d",
			       ZCOR_WARM_MAX_MB, budget_mb)
		     : zc_recall_warm(&z->recall, (size_t)budget_mb << 20, &out, &z->last.err);
	return answer(z, rc, out, out_json);
}

int zcor_prefix(zcor *z, const char *conversation, char **out)
{
	HOLD(z);
	*out = NULL;
	int rc = begin(z);
	if (rc)
		return rc;
	if (conversation && (rc = conv_check(conversation, &z->last.err)))
		return done(z, rc);
	rc = zc_prefix(&z->mem, conversation, out, &z->last.err);
	if (rc) {
		zc_free(*out);
		*out = NULL;
	}
	return done(z, rc);
}

/* ---- settings --------------------------------------------------------- */

int zcor_config_json(zcor *z, char **out_json)
{
	HOLD(z);
	*out_json = NULL;
	int rc = begin(z);
	if (rc)
		return rc;
	zc_config_refresh(&z->mem.conf);
	return answer(z, ZCOR_OK, zc_confile_json(&z->mem.conf), out_json);
}

int zcor_config_fields(zcor *z, char **out_json)
{
	HOLD(z);
	*out_json = NULL;
	int rc = begin(z);
	if (rc)
		return rc;
	return answer(z, ZCOR_OK, zc_config_fields(), out_json);
}

int zcor_config_set(zcor *z, const char *settings_json)
{
	HOLD(z);
	int rc = begin(z);
	if (rc)
		return rc;
	json_t *patch = NULL;
	rc = zc_json_parse(settings_json ? settings_json : "", settings_json ? strlen(settings_json) : 0,
			   "the settings", &patch, &z->last.err);
	if (!rc)
		rc = zc_config_set(&z->mem.conf, patch, &z->last.err);
	json_decref(patch);
	return done(z, rc);
}

int zcor_reindex(zcor *z, char **out_json)
{
	HOLD(z);
	*out_json = NULL;
	int rc = begin(z);
	if (rc)
		return rc;
	json_t *counts = NULL;
	rc = zc_mem_reindex(&z->mem, &counts, &z->last.err);
	return answer(z, rc, counts, out_json);
}

/* ---- nodes for hosts -------------------------------------------------- */

/* The host plane for a NULL ctx; a bound ctx's key must be one. */
static int host_ctx(zcor *z, const struct zcor_ctx **ctx)
{
	static const struct zcor_ctx host = {ZCOR_ACTOR_UI, NULL};
	if (!*ctx)
		*ctx = &host;
	if ((*ctx)->conversation)
		return conv_check((*ctx)->conversation, &z->last.err);
	return ZCOR_OK;
}

int zcor_node_get(zcor *z, const struct zcor_ctx *ctx, const char *id, char **out_json)
{
	HOLD(z);
	*out_json = NULL;
	int rc = begin(z);
	if (rc || (rc = host_ctx(z, &ctx)))
		return done(z, rc);
	json_t *node = NULL;
	rc = zc_node_read(&z->mem, ctx, id, &node, &z->last.err);
	return answer(z, rc, rc ? NULL : json_pack("{s:o}", "node", node), out_json);
}

/* An optional JSON object argument: NULL or "" is {}; what names it in
 * the error ("the search must be a JSON object"). */
static int object_arg(zcor *z, const char *json, const char *what, json_t **out)
{
	int given = json && *json;
	int rc = zc_json_parse(given ? json : "{}", given ? strlen(json) : 2, what, out, &z->last.err);
	if (!rc && !json_is_object(*out))
		rc = zc_fail(&z->last.err, ZCOR_EINVAL, "%s must be a JSON object", what);
	return rc;
}

int zcor_memory_find(zcor *z, const struct zcor_ctx *ctx, const char *args_json, char **out_json)
{
	HOLD(z);
	*out_json = NULL;
	int rc = begin(z);
	if (rc || (rc = host_ctx(z, &ctx)))
		return done(z, rc);
	json_t *args = NULL, *out = NULL;
	rc = object_arg(z, args_json, "the search", &args);
	if (!rc)
		rc = zc_mem_run(&z->mem, ctx, &zc_op_memory_find, args, &out, &z->last.err);
	json_decref(args);
	return answer(z, rc, out, out_json);
}

int zcor_node_list(zcor *z, const struct zcor_ctx *ctx, const char *cursor, int limit,
		   char **out_json)
{
	HOLD(z);
	*out_json = NULL;
	int rc = begin(z);
	if (rc || (rc = host_ctx(z, &ctx)))
		return done(z, rc);
	long long before = 0;
	if (cursor && *cursor) {
		char *end = NULL;
		before = strtoll(cursor, &end, 10);
		if (*end || before <= 0)
			return done(z, zc_fail(&z->last.err, ZCOR_EINVAL, "cursor '%s' was not given by zcor",
					       ZC_Q(cursor, 40)));
	}
	if (limit < 1 || limit > 1000)
		limit = 100;
	json_t *page = NULL;
	rc = zc_node_page(&z->mem, ctx, before, limit, &page, &z->last.err);
	if (rc)
		return answer(z, rc, NULL, out_json);
	json_t *next = json_object_get(page, "next");
	char buf[32];
	if (json_is_integer(next)) {
		snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(next));
		json_object_set_new(page, "nextCursor", json_string(buf));
	} else {
		json_object_set_new(page, "nextCursor", json_null());
	}
	json_object_del(page, "next");
	return answer(z, ZCOR_OK, page, out_json);
}

/* ---- synonyms --------------------------------------------------------- */

int zcor_synonyms_list(zcor *z, char **out_json)
{
	HOLD(z);
	*out_json = NULL;
	int rc = begin(z);
	if (rc)
		return rc;
	struct zc_err e = {0};
	zc_syn_refresh(&z->mem.syn, &e);
	json_t *j = json_pack("{s:O}", "groups", z->mem.syn.groups);
	if (zc_syn_warning(&z->mem.syn)[0])
		json_object_set_new(j, "warning", json_string(zc_syn_warning(&z->mem.syn)));
	/* the file could not be read again: the groups are the last good
	 * ones, and this says why (data about the list, not the call's
	 * failure; zcor.h) */
	if (e.code)
		json_object_set_new(j, "error", json_string(e.msg));
	return answer(z, ZCOR_OK, j, out_json);
}

int zcor_synonyms_expand(zcor *z, const char *word, char **out_json)
{
	HOLD(z);
	*out_json = NULL;
	int rc = begin(z);
	if (rc)
		return rc;
	json_t *out = NULL;
	rc = zc_synonyms_expand(&z->mem, word ? word : "", &out, &z->last.err);
	return answer(z, rc, out, out_json);
}

int zcor_synonyms_edit(zcor *z, const struct zcor_ctx *ctx, const char *args_json, char **out_json)
{
	HOLD(z);
	*out_json = NULL;
	int rc = begin(z);
	if (rc || (rc = host_ctx(z, &ctx)))
		return done(z, rc);
	json_t *args = NULL, *out = NULL;
	rc = zc_json_parse(args_json ? args_json : "", args_json ? strlen(args_json) : 0, "arguments",
			   &args, &z->last.err);
	if (!rc && !json_is_object(args))
		rc = zc_fail(&z->last.err, ZCOR_EINVAL, "arguments must be a JSON object");
	if (!rc)
		rc = zc_mem_run(&z->mem, ctx, &zc_op_synonyms_edit, args, &out, &z->last.err);
	json_decref(args);
	return answer(z, rc, out, out_json);
}

/* ---- reverting a change (History's revert, issue 18) ------------------- */

int zcor_history_revert(zcor *z, const struct zcor_ctx *ctx, long long seq, char **out_json)
{
	HOLD(z);
	*out_json = NULL;
	int rc = begin(z);
	if (rc || (rc = host_ctx(z, &ctx)))
		return done(z, rc);
	json_t *args = json_pack("{s:I}", "seq", (json_int_t)seq), *out = NULL;
	rc = zc_mem_run(&z->mem, ctx, &zc_op_history_revert, args, &out, &z->last.err);
	json_decref(args);
	return answer(z, rc, out, out_json);
}

/* ---- stickers and media ----------------------------------------------- */

int zcor_check_reply(zcor *z, const char *text)
{
	HOLD(z);
	int rc = begin(z);
	if (rc)
		return rc;
	return done(z, zc_sticker_check_reply(&z->mem, text, &z->last.err));
}

/* The out values of a read that failed are NULL and 0. */
static int read_done(zcor *z, int rc, char **data, size_t *len, const char **mime)
{
	if (rc) {
		zc_free(*data);
		*data = NULL;
		*len = 0;
		*mime = NULL;
	}
	return done(z, rc);
}

int zcor_sticker_read(zcor *z, const char *file, char **data, size_t *len, const char **mime)
{
	HOLD(z);
	*data = NULL;
	*len = 0;
	*mime = NULL;
	int rc = begin(z);
	if (rc)
		return rc;
	rc = zc_image_read(&z->mem, "stickers", file, data, len, mime, &z->last.err);
	return read_done(z, rc, data, len, mime);
}

int zcor_media_read(zcor *z, const struct zcor_ctx *ctx, const char *file, char **data, size_t *len,
		    const char **mime)
{
	HOLD(z);
	static const struct zcor_ctx host = {ZCOR_ACTOR_UI, NULL};
	*data = NULL;
	*len = 0;
	*mime = NULL;
	int rc = begin(z);
	if (rc)
		return rc;
	rc = zc_media_read(&z->mem, ctx ? ctx : &host, file, data, len, mime, &z->last.err);
	return read_done(z, rc, data, len, mime);
}

int zcor_check_reply_json(zcor *z, const char *request_json, char **out_json)
{
	HOLD(z);
	*out_json = NULL;
	int rc = begin(z);
	if (rc)
		return rc;
	json_t *req = NULL, *out = NULL;
	rc = zc_json_parse(request_json ? request_json : "", request_json ? strlen(request_json) : 0,
			   "the request", &req, &z->last.err);
	if (!rc && !json_is_object(req))
		rc = zc_fail(&z->last.err, ZCOR_EINVAL, "the request must be a JSON object {\"text\": …}");
	const char *k;
	json_t *v;
	if (!rc) {
		json_object_foreach(req, k, v) {
			if (strcmp(k, "text") != 0) {
				rc = zc_fail(&z->last.err, ZCOR_EINVAL,
					     "argument '%s': unknown; the request is {\"text\": the reply}", ZC_Q(k, 60));
				break;
			}
		}
	}
	if (!rc && !json_is_string(json_object_get(req, "text")))
		rc = zc_fail(&z->last.err, ZCOR_EINVAL,
			     "argument 'text': %s; give the reply to check as a string",
			     json_object_get(req, "text") ? "must be a string" : "missing");
	if (!rc)
		out = zc_sticker_reply_report(&z->mem, json_string_value(json_object_get(req, "text")));
	json_decref(req);
	return answer(z, rc, out, out_json);
}

/* ---- seed-003 directories, doctor, migrate ---------------------------- */

int zcor_import_qq(zcor *z, const char *dir, void (*progress)(void *ud, const char *path),
		   void *ud, char **report_json)
{
	HOLD(z);
	*report_json = NULL;
	int rc = begin(z);
	if (rc)
		return rc;
	struct zcor_ctx ctx = {ZCOR_ACTOR_CLI, NULL};
	json_t *r = NULL;
	rc = zc_import_qq(&z->mem, &ctx, dir, progress, ud, &r, &z->last.err);
	return answer(z, rc, r, report_json);
}

int zcor_export_qq(zcor *z, const char *dir, char **report_json)
{
	HOLD(z);
	*report_json = NULL;
	int rc = begin(z);
	if (rc)
		return rc;
	json_t *r = NULL;
	rc = zc_export_qq(&z->mem, dir, &r, &z->last.err);
	return answer(z, rc, r, report_json);
}

int zcor_doctor(zcor *z, int rebuild, char **report_json)
{
	HOLD(z);
	*report_json = NULL;
	int rc = begin(z);
	if (rc)
		return rc;
	json_t *r = NULL;
	rc = zc_doctor(&z->mem, rebuild, &r, &z->last.err);
	if (!rc) { /* the skills with bad front matter: SKILL_INVALID (tools/skills.h) */
		zc_skills_refresh(&z->skills, &z->mem.conf.cfg);
		json_t *bad = zc_skills_problems(&z->skills);
		if (json_array_size(bad))
			json_object_set(r, "needsAttention", json_true());
		json_array_extend(json_object_get(r, "findings"), bad);
		json_decref(bad);
	}
	return answer(z, rc, r, report_json);
}

int zcor_doctor_unopened(zcor *z, const char *dir, char **report_json)
{
	HOLD(z);
	*report_json = NULL;
	int rc = begin(z);
	if (rc)
		return rc;
	json_t *r = dir ? zc_doctor_unopened(dir) : NULL;
	if (!r)
		return done(z, zc_fail(&last_of(z)->err, ZCOR_ENOTFOUND,
				       "memory.db in '%s' is not why it cannot be opened; zcor_open's "
				       "error says why",
				       ZC_Q(dir ? dir : "", 200)));
	return answer(z, ZCOR_OK, r, report_json);
}

int zcor_migrate_cognition(zcor *z, int apply, char **report_json)
{
	HOLD(z);
	*report_json = NULL;
	int rc = begin(z);
	if (rc)
		return rc;
	json_t *r = NULL;
	rc = zc_migrate_cognition(&z->mem, apply, &r, &z->last.err);
	return answer(z, rc, r, report_json);
}

/* ---- transcripts ------------------------------------------------------ */

/* The recall request of a logged batch: its admitted messages (text and
 * sender) and everyone they @-mention (SPEC Q-QUERY). */
static json_t *batch_recall_request(const char *conversation, const json_t *admitted)
{
	json_t *msgs = json_array(), *mentions = json_array();
	size_t i, j;
	json_t *v, *x;
	json_array_foreach(admitted, i, v) {
		json_array_append_new(msgs, json_pack("{s:O, s:O, s:O}", "text", json_object_get(v, "text"),
						      "senderId", json_object_get(v, "senderId"),
						      "senderName", json_object_get(v, "senderName")));
		json_array_foreach(json_object_get(v, "mentions"), j, x) json_array_append(mentions, x);
	}
	return json_pack("{s:s, s:o, s:o}", "conversation", conversation, "messages", msgs, "mentions",
			 mentions);
}

int zcor_log_messages(zcor *z, const struct zcor_ctx *ctx, const char *conversation,
		      const char *batch_json, char **out_json)
{
	HOLD(z);
	*out_json = NULL;
	int rc = begin(z);
	if (rc || (rc = host_ctx(z, &ctx)))
		return done(z, rc);
	json_t *batch = NULL, *out = NULL, *recall = NULL;
	if (ctx->conversation && conversation && strcmp(ctx->conversation, conversation) != 0)
		rc = zc_fail(&z->last.err, ZCOR_EFORBIDDEN,
			     "this caller is bound to conversation '%s' and cannot log into '%s'",
			     ctx->conversation, ZC_Q(conversation, 80));
	if (!rc)
		rc = zc_json_parse(batch_json ? batch_json : "", batch_json ? strlen(batch_json) : 0,
				   "the batch", &batch, &z->last.err);
	/* "recall": false — a world whose turn follows (zc_turn recalls for
	 * the batch itself): the header would be computed only to be dropped */
	int want_recall = !json_is_false(json_object_get(batch, "recall"));
	if (!rc)
		rc = zc_transcript_log(&z->mem, ctx, conversation, batch, &out, &z->last.err);
	json_decref(batch);
	if (rc)
		return answer(z, rc, NULL, out_json);
	json_t *admitted = json_incref(json_object_get(out, "admitted"));
	json_object_del(out, "admitted");
	if (want_recall && json_array_size(admitted) > 0) {
		struct zc_err re = {0};
		json_t *req = batch_recall_request(conversation, admitted);
		if (recall_now(z, req, &recall, &re) == ZCOR_OK) {
			json_object_set(out, "header", json_object_get(recall, "header"));
			json_object_set(out, "items", json_object_get(recall, "items"));
		} else {
			json_object_set_new(out, "recallError", json_string(re.msg));
		}
		json_decref(req);
		json_decref(recall);
	}
	if (!json_object_get(out, "header")) {
		json_object_set_new(out, "header", json_string(""));
		json_object_set_new(out, "items", json_array());
	}
	json_decref(admitted);
	return answer(z, ZCOR_OK, out, out_json);
}

int zcor_conversations(zcor *z, const struct zcor_ctx *ctx, char **out_json)
{
	HOLD(z);
	*out_json = NULL;
	int rc = begin(z);
	if (rc || (rc = host_ctx(z, &ctx)))
		return done(z, rc);
	json_t *out = NULL;
	rc = zc_conversations_list(&z->mem, ctx, &out, &z->last.err);
	return answer(z, rc, out, out_json);
}

int zcor_conversation_get(zcor *z, const struct zcor_ctx *ctx, const char *key, char **out_json)
{
	HOLD(z);
	*out_json = NULL;
	int rc = begin(z);
	if (rc || (rc = host_ctx(z, &ctx)))
		return done(z, rc);
	json_t *out = NULL;
	rc = zc_conversation_get(&z->mem, ctx, key, &out, &z->last.err);
	return answer(z, rc, out, out_json);
}

int zcor_message_recalled(zcor *z, const struct zcor_ctx *ctx, const char *conversation,
			  const char *message_id, long long at_ms, char **out_json)
{
	HOLD(z);
	*out_json = NULL;
	int rc = begin(z);
	if (rc || (rc = host_ctx(z, &ctx)))
		return done(z, rc);
	json_t *out = NULL;
	rc = zc_transcript_recalled(&z->mem, ctx, conversation, message_id, at_ms, &out, &z->last.err);
	return answer(z, rc, out, out_json);
}

int zcor_conversation_title(zcor *z, const char *conversation, const char *title)
{
	HOLD(z);
	int rc = begin(z);
	if (rc)
		return done(z, rc);
	return done(z, zc_conversation_set_title(&z->mem, conversation, title, &z->last.err));
}

int zcor_log_batches(zcor *z, const struct zcor_ctx *ctx, const char *batches_json, char **out_json)
{
	HOLD(z);
	*out_json = NULL;
	int rc = begin(z);
	if (rc || (rc = host_ctx(z, &ctx)))
		return done(z, rc);
	json_t *doc = NULL, *out = NULL;
	rc = zc_json_parse(batches_json ? batches_json : "", batches_json ? strlen(batches_json) : 0,
			   "the batches", &doc, &z->last.err);
	if (!rc && (!json_is_object(doc) || json_object_size(doc) != 1 ||
		    !json_object_get(doc, "batches")))
		rc = zc_fail(&z->last.err, ZCOR_EINVAL,
			     "the body must be {\"batches\": [{\"conversation\", \"messages\": [...]}…]}");
	if (!rc)
		rc = zc_transcript_log_many(&z->mem, ctx, json_object_get(doc, "batches"), &out,
					    &z->last.err);
	json_decref(doc);
	return answer(z, rc, out, out_json);
}

int zcor_log_batches_c(zcor *z, const struct zcor_ctx *ctx, struct zcor_log_batch *batches, size_t n,
		       unsigned flags)
{
	HOLD(z);
	int rc = begin(z);
	if (rc || (rc = host_ctx(z, &ctx)))
		return done(z, rc);
	return done(z, zc_transcript_log_many_c(&z->mem, ctx, batches, n,
						(flags & ZCOR_LOG_NO_FSYNC) != 0, &z->last.err));
}

int zcor_sync(zcor *z)
{
	HOLD(z);
	int rc = begin(z);
	if (rc)
		return done(z, rc);
	return done(z, zc_store_flush(&z->mem.store, &z->last.err));
}

int zcor_admission(zcor *z, const char *conversation, char **out_json)
{
	HOLD(z);
	*out_json = NULL;
	int rc = begin(z);
	if (rc)
		return rc;
	json_t *out = NULL;
	rc = zc_transcript_admission(&z->mem, conversation, &out, &z->last.err);
	return answer(z, rc, out, out_json);
}

int zcor_digest_done(zcor *z, const char *conversation, char **out_json)
{
	HOLD(z);
	*out_json = NULL;
	int rc = begin(z);
	if (rc)
		return rc;
	json_t *out = NULL;
	rc = zc_transcript_digest_done(&z->mem, conversation, &out, &z->last.err);
	return answer(z, rc, out, out_json);
}

int zcor_transcript_export(zcor *z, const char *conversation, const char *root_dir, char **out_json)
{
	HOLD(z);
	*out_json = NULL;
	int rc = begin(z);
	if (rc)
		return rc;
	json_t *out = NULL;
	rc = root_dir && *root_dir
		     ? zc_transcript_export(&z->mem, conversation, root_dir, &out, &z->last.err)
		     : zc_fail(&z->last.err, ZCOR_EINVAL, "the export needs a directory to write into");
	return answer(z, rc, out, out_json);
}

int zcor_transcript_import_file(zcor *z, const char *conversation, const char *path, char **out_json)
{
	HOLD(z);
	*out_json = NULL;
	int rc = begin(z);
	if (rc)
		return rc;
	json_t *out = NULL;
	rc = path ? zc_transcript_import_file(&z->mem, conversation, path, &out, &z->last.err)
		  : zc_fail(&z->last.err, ZCOR_EINVAL, "the import needs a file");
	return answer(z, rc, out, out_json);
}

int zcor_media_path(zcor *z, const char *ref, char **out_path)
{
	HOLD(z);
	*out_path = NULL;
	int rc = begin(z);
	if (rc)
		return rc;
	rc = zc_media_path(&z->mem, ref, out_path, &z->last.err);
	if (rc) {
		zc_free(*out_path);
		*out_path = NULL;
	}
	return done(z, rc);
}

/* ---- the turn --------------------------------------------------------- */

int zcor_turn_stream(zcor *z, const char *conversation, const char *opts_json,
		     const struct zcor_turn_events *ev, char **out_json)
{
	HOLD(z);
	*out_json = NULL;
	int rc = begin(z);
	if (rc || (rc = conv_check(conversation, &z->last.err)))
		return done(z, rc);
	json_t *opts = NULL, *out = NULL;
	if (opts_json && *opts_json)
		rc = zc_json_parse(opts_json, strlen(opts_json), "the turn's options", &opts,
				   &z->last.err);
	if (!rc)
		rc = zc_turn(&z->mem, &z->recall, &z->skills, conversation, opts, ev, &out,
			     &z->last.err);
	json_decref(opts);
	return answer(z, rc, out, out_json);
}

int zcor_turn(zcor *z, const char *conversation, const char *opts_json, char **out_json)
{
	return zcor_turn_stream(z, conversation, opts_json, NULL, out_json);
}

/* The query of a list of records: {conversation?, limit?, offset?}; a
 * caller bound to a conversation reads only its own (*conv set to it). */
static int records_query(zcor *z, const struct zcor_ctx *ctx, const char *query_json,
			 const char *what, const char **conv, long long *limit, long long *offset,
			 json_t **q)
{
	int rc = ZCOR_OK;
	*conv = NULL;
	*q = NULL;
	if (query_json && *query_json)
		rc = zc_json_parse(query_json, strlen(query_json), "the query", q, &z->last.err);
	if (!rc && *q && !json_is_object(*q))
		rc = zc_fail(&z->last.err, ZCOR_EINVAL,
			     "the query must be a JSON object such as {\"conversation\": \"console:local\"}");
	if (!rc && *q) {
		const char *k;
		json_t *v;
		json_object_foreach(*q, k, v) {
			if (strcmp(k, "conversation") && strcmp(k, "limit") && strcmp(k, "offset")) {
				rc = zc_fail(&z->last.err, ZCOR_EINVAL,
					     "argument '%s': unknown; the query takes conversation, limit and "
					     "offset",
					     ZC_Q(k, 60));
				break;
			}
		}
		json_t *c = json_object_get(*q, "conversation");
		if (!rc && c && !json_is_null(c)) {
			*conv = json_string_value(c);
			rc = *conv ? conv_check(*conv, &z->last.err)
				   : zc_fail(&z->last.err, ZCOR_EINVAL,
					     "argument 'conversation': must be a conversation key string");
		}
		if (!rc)
			rc = zc_page_args(*q, limit, offset, &z->last.err);
	}
	if (!rc && ctx->conversation && *conv && strcmp(*conv, ctx->conversation) != 0)
		rc = zc_fail(&z->last.err, ZCOR_EFORBIDDEN,
			     "this caller is bound to conversation '%s' and cannot read the %s of '%s'",
			     ctx->conversation, what, ZC_Q(*conv, 80));
	if (!rc && ctx->conversation)
		*conv = ctx->conversation;
	return rc;
}

int zcor_turns(zcor *z, const struct zcor_ctx *ctx, const char *query_json, char **out_json)
{
	HOLD(z);
	*out_json = NULL;
	int rc = begin(z);
	if (rc || (rc = host_ctx(z, &ctx)))
		return done(z, rc);
	json_t *q = NULL, *out = NULL;
	long long limit = 20, offset = 0;
	const char *conv = NULL;
	rc = records_query(z, ctx, query_json, "turns", &conv, &limit, &offset, &q);
	if (!rc)
		rc = zc_turns_list(&z->mem, conv, limit, offset, &out, &z->last.err);
	json_decref(q);
	return answer(z, rc, out, out_json);
}

/* ---- the digest agent ------------------------------------------------- */

int zcor_digest(zcor *z, const char *conversation, const char *opts_json, char **out_json)
{
	HOLD(z);
	*out_json = NULL;
	int rc = begin(z);
	if (rc || (rc = conv_check(conversation, &z->last.err)))
		return done(z, rc);
	json_t *opts = NULL, *out = NULL;
	const char *trigger = "manual";
	int if_due = -1;
	if (opts_json && *opts_json)
		rc = zc_json_parse(opts_json, strlen(opts_json), "the digest's options", &opts,
				   &z->last.err);
	if (!rc && opts && !json_is_object(opts))
		rc = zc_fail(&z->last.err, ZCOR_EINVAL,
			     "the digest's options must be a JSON object such as {\"trigger\": \"manual\"}");
	if (!rc && opts) {
		const char *k;
		json_t *v;
		json_object_foreach(opts, k, v) {
			const char *t = json_string_value(v);
			if (strcmp(k, "ifDue") == 0) {
				if (!json_is_boolean(v)) {
					rc = zc_fail(&z->last.err, ZCOR_EINVAL,
						     "option 'ifDue': must be true or false");
					break;
				}
				if_due = json_is_true(v);
				continue;
			}
			if (strcmp(k, "trigger") != 0) {
				rc = zc_fail(&z->last.err, ZCOR_EINVAL,
					     "option '%s': unknown; the options are trigger and ifDue",
					     ZC_Q(k, 60));
				break;
			}
			if (!t || (strcmp(t, "manual") && strcmp(t, "schedule") && strcmp(t, "catch-up"))) {
				rc = zc_fail(&z->last.err, ZCOR_EINVAL,
					     "option 'trigger': must be \"manual\", \"schedule\" or \"catch-up\"");
				break;
			}
			trigger = t;
		}
	}
	if (!rc)
		rc = zc_digest_run(&z->mem, &z->skills, conversation, trigger,
				   /* the schedule's runs are for due conversations only */
				   if_due >= 0 ? if_due : strcmp(trigger, "manual") != 0,
				   &z->interrupted, &out, &z->last.err);
	json_decref(opts);
	return answer(z, rc, out, out_json);
}

int zcor_digest_due(zcor *z, char **out_json)
{
	HOLD(z);
	*out_json = NULL;
	int rc = begin(z);
	if (rc)
		return done(z, rc);
	static const struct zcor_ctx host = {ZCOR_ACTOR_CLI, NULL};
	json_t *list = NULL, *out = NULL;
	zc_config_refresh(&z->mem.conf);
	long min = z->mem.conf.cfg.digest_min_lines;
	char today[ZC_DATE_LEN], woke[ZC_DATE_LEN];
	zc_time_local_date(zc_mem_now(&z->mem), today);
	/* the local date of the latest wake at or before now: a conversation
	 * not digested on or after it missed that wake (catch-up's rule) */
	zc_time_local_date(zc_digest_next_wake(zc_mem_now(&z->mem) - 86400000,
					       (int)z->mem.conf.cfg.digest_at_hour),
			   woke);
	rc = zc_conversations_list(&z->mem, &host, &list, &z->last.err);
	if (!rc) {
		json_t *items = json_array(), *all = json_array(), *v;
		size_t i;
		json_array_foreach(json_object_get(list, "items"), i, v) {
			const char *last = json_string_value(json_object_get(v, "lastDigestDate"));
			json_t *row = json_pack("{s:b, s:O, s:O, s:O, s:O, s:b}", "missedWake",
						!last || strcmp(last, woke) < 0, "conversation",
						json_object_get(v, "key"), "linesSinceDigest",
						json_object_get(v, "linesSinceDigest"), "lastDigestDate",
						json_object_get(v, "lastDigestDate")
							? json_object_get(v, "lastDigestDate")
							: json_null(),
						"messages", json_object_get(v, "messages"), "due",
						zc_digest_due(v, today, min));
			if (zc_digest_due(v, today, min))
				json_array_append(items, json_object_get(v, "key"));
			json_array_append_new(all, row);
		}
		int64_t now = zc_mem_now(&z->mem);
		out = json_pack("{s:s, s:I, s:I, s:I, s:I, s:b, s:b, s:o, s:o}", "today", today, "now",
				(json_int_t)now, "nextWake",
				(json_int_t)zc_digest_next_wake(now, (int)z->mem.conf.cfg.digest_at_hour),
				"atHour", (json_int_t)z->mem.conf.cfg.digest_at_hour, "minLines",
				(json_int_t)min, "memory", z->mem.conf.cfg.memory, "catchUp",
				z->mem.conf.cfg.digest_catch_up, "due", items, "conversations", all);
	}
	json_decref(list);
	return answer(z, rc, out, out_json);
}

int zcor_digests(zcor *z, const struct zcor_ctx *ctx, const char *query_json, char **out_json)
{
	HOLD(z);
	*out_json = NULL;
	int rc = begin(z);
	if (rc || (rc = host_ctx(z, &ctx)))
		return done(z, rc);
	json_t *q = NULL, *out = NULL;
	long long limit = 20, offset = 0;
	const char *conv = NULL;
	rc = records_query(z, ctx, query_json, "digests", &conv, &limit, &offset, &q);
	if (!rc)
		rc = zc_digests_list(&z->mem, conv, limit, offset, &out, &z->last.err);
	json_decref(q);
	return answer(z, rc, out, out_json);
}

int zcor_turn_note(zcor *z, long long turn_id, const char *note_json)
{
	HOLD(z);
	int rc = begin(z);
	if (rc)
		return done(z, rc);
	return done(z, zc_turn_note(&z->mem, turn_id, note_json, 0, &z->last.err));
}

int zcor_turn_note_flags(zcor *z, long long turn_id, const char *note_json, unsigned flags)
{
	HOLD(z);
	int rc = begin(z);
	if (rc)
		return done(z, rc);
	return done(z, zc_turn_note(&z->mem, turn_id, note_json, (flags & ZCOR_NOTE_NO_FSYNC) != 0,
				    &z->last.err));
}

/* ---- the Memory page's Backups and Stats panels (issue 18) ------------- */

int zcor_backups(zcor *z, const struct zcor_ctx *ctx, char **out_json)
{
	HOLD(z);
	*out_json = NULL;
	int rc = begin(z);
	if (rc || (rc = host_ctx(z, &ctx)) ||
	    (rc = zc_backups_operator_only(ctx, "the backups hold the memory of every conversation",
					   &z->last.err)))
		return done(z, rc);
	json_t *out = NULL;
	rc = zc_backups_list(&z->mem, &out, &z->last.err);
	return answer(z, rc, out, out_json);
}

int zcor_backup_open(zcor *z, const struct zcor_ctx *ctx, const char *name, int *fd,
		     long long *size)
{
	HOLD(z);
	*fd = -1;
	*size = 0;
	int rc = begin(z);
	if (rc || (rc = host_ctx(z, &ctx)) ||
	    (rc = zc_backups_operator_only(ctx, "the backups hold the memory of every conversation",
					   &z->last.err)))
		return done(z, rc);
	return done(z, zc_backup_open(&z->mem, name, fd, size, &z->last.err));
}

int zcor_memory_stats(zcor *z, const struct zcor_ctx *ctx, const char *query_json, char **out_json)
{
	HOLD(z);
	*out_json = NULL;
	int rc = begin(z);
	if (rc || (rc = host_ctx(z, &ctx)))
		return done(z, rc);
	json_t *args = NULL, *out = NULL;
	rc = object_arg(z, query_json, "the stats query", &args);
	if (!rc) {
		zc_mem_flush_hits(&z->mem); /* the counts this handle holds, in */
		rc = zc_mem_run(&z->mem, ctx, &zc_op_memory_stats, args, &out, &z->last.err);
	}
	json_decref(args);
	return answer(z, rc, out, out_json);
}
