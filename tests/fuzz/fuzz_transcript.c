/*
 * fuzz_transcript.c — a libFuzzer target for the transcript batch parser
 * and logger: zcor_log_messages, what `POST /api/v1/conversations/{key}/
 * messages` and `zcor transcript log` hand their JSON batch to
 * (src/memory/transcript.c, media.c for the media items). The input's
 * first byte picks the conversation key (valid and not) and the caller (the
 * host plane, or a caller bound to that conversation or to another one);
 * the rest is the batch text.
 *
 * One memory directory, started afresh every RESET_EVERY inputs.
 *
 * Oracle, besides ASan/UBSan/LeakSanitizer:
 * - an answer is {logged, skipped: […], …} or {"error": {code, message}};
 * - every message of an accepted batch is logged or skipped with a reason
 *   (logged + skipped = the batch's messages), and the conversation's
 *   message count grows by exactly `logged`;
 * - the same batch again logs nothing (idempotent by message id);
 * - a refused batch logs nothing; a caller bound to another conversation
 *   is refused before anything is read.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "fuzz.h"

const char *fz_target = "fuzz_transcript";

#define RESET_EVERY 1000

static const char *const convs[] = {
	"group:1", "private:2", "console:fuzz", "group:100000001", "", "group:", "private:../x", NULL,
};
#define NCONVS (sizeof(convs) / sizeof(convs[0]))

static zcor *z;
static char *dir;
static unsigned long runs;

static void close_dir(void)
{
	zcor_close(z);
	z = NULL;
	fz_rmtree(dir);
	free(dir);
	dir = NULL;
}

static void open_dir(void)
{
	dir = fz_mkdtemp("transcript");
	z = fz_open(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	open_dir();
	atexit(close_dir);
	return 0;
}

/* The conversation's message count (0 without a log). */
static long long messages(const char *key)
{
	if (!key)
		return 0;
	char *out = NULL;
	long long n = 0;
	if (zcor_conversation_get(z, NULL, key, &out) == ZCOR_OK) {
		json_t *v = json_loads(out, 0, NULL);
		n = json_integer_value(json_object_get(json_object_get(v, "conversation"), "messages"));
		json_decref(v);
	}
	zcor_free(out);
	return n;
}

/* Logs batch; returns the code and *out the parsed answer (checked). */
static int log_batch(const struct zcor_ctx *ctx, const char *key, const char *batch, json_t **out)
{
	char *res = NULL;
	int rc = zcor_log_messages(z, ctx, key, batch, &res);
	if (rc != ZCOR_OK && res)
		fz_bug("a refused batch still answered a result: %.300s", res);
	if (rc != ZCOR_OK)
		res = zc_strdup(zcor_errjson(z));
	*out = json_loads(res ? res : "", 0, NULL);
	if (!json_is_object(*out))
		fz_bug("the answer is not a JSON object: %.300s", res ? res : "(null)");
	if (rc == ZCOR_OK) {
		if (!json_is_integer(json_object_get(*out, "logged")) ||
		    json_integer_value(json_object_get(*out, "logged")) < 0 ||
		    !json_is_array(json_object_get(*out, "skipped")))
			fz_bug("an accepted batch's answer has no logged / skipped: %.300s", res);
	} else {
		json_t *err = json_object_get(*out, "error");
		if (!json_is_string(json_object_get(err, "code")) || !json_is_string(json_object_get(err, "message")) ||
		    !*json_string_value(json_object_get(err, "message")))
			fz_bug("a refused batch's answer is not {error: {code, message}}: %.300s", res);
	}
	zcor_free(res);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (++runs % RESET_EVERY == 0) {
		close_dir();
		open_dir();
	}
	const char *key = convs[data[0] % NCONVS];
	int who = (data[0] / NCONVS) % 3; /* 0 host plane, 1 bound to key, 2 bound to another */
	struct zcor_ctx bound = {ZCOR_ACTOR_MODEL, who == 1 ? key : "group:9"};
	const struct zcor_ctx *ctx = who == 0 || (who == 1 && !key) ? NULL : &bound;
	char *batch = malloc(size);
	memcpy(batch, data + 1, size - 1);
	batch[size - 1] = '\0';

	long long before = messages(key);
	json_t *out = NULL;
	int rc = log_batch(ctx, key, batch, &out);
	long long after = messages(key);
	/* refused as another conversation's; without a key, as missing one */
	if (ctx == &bound && who == 2 && (key ? rc != ZCOR_EFORBIDDEN : rc == ZCOR_OK))
		fz_bug("a caller bound to group:9 logged into '%s' (code %d)", key ? key : "(null)", rc);
	if (rc != ZCOR_OK) {
		if (after != before)
			fz_bug("a refused batch changed the message count of '%s' from %lld to %lld", key, before, after);
		goto out;
	}
	/* accepted: the batch is JSON with messages, each logged or skipped */
	json_t *doc = json_loads(batch, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, NULL);
	size_t n = json_array_size(json_object_get(doc, "messages"));
	json_decref(doc);
	long long logged = json_integer_value(json_object_get(out, "logged"));
	size_t skipped = json_array_size(json_object_get(out, "skipped"));
	if (n == 0 || (size_t)logged + skipped != n)
		fz_bug("%zu messages, %lld logged + %zu skipped", n, logged, skipped);
	if (after - before != logged)
		fz_bug("%lld logged but the count of '%s' went from %lld to %lld", logged, key, before, after);
	json_decref(out);
	out = NULL;
	if (log_batch(ctx, key, batch, &out) != ZCOR_OK)
		fz_bug("the same batch again was refused: %s",
		       json_string_value(json_object_get(json_object_get(out, "error"), "message")));
	if (json_integer_value(json_object_get(out, "logged")) != 0 || messages(key) != after)
		fz_bug("the same batch again logged %lld more", (long long)json_integer_value(json_object_get(out, "logged")));
out:
	json_decref(out);
	free(batch);
	return 0;
}
