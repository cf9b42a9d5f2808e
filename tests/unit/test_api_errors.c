/*
 * test_api_errors.c — the one error convention of include/zcor.h (issue
 * 13, item 3): each call family on failure returns its code with *out
 * NULL, and zcor_errmsg / zcor_errcode / zcor_errjson agree; the next
 * successful call clears them; a handle-less call's error is the calling
 * thread's alone; a failed zcor_open still gives a handle that says why.
 */
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

/* The three accessors agree on code (its name in the JSON) and message. */
static void check_error(zcor *z, int code, const char *needle)
{
	CHECK_INT(zcor_errcode(z), code);
	CHECK_HAS(zcor_errmsg(z), needle);
	const char *j = zcor_errjson(z);
	json_t *v = j ? json_loads(j, 0, NULL) : NULL;
	CHECK(v != NULL);
	CHECK_STR(t_errcode(v), zcor_code_name(code));
	CHECK_STR(t_errmsg(v), zcor_errmsg(z));
	json_decref(v);
}

static void check_clear(zcor *z)
{
	CHECK_INT(zcor_errcode(z), ZCOR_OK);
	CHECK_STR(zcor_errmsg(z), "");
	CHECK(zcor_errjson(z) == NULL);
}

static void each_family_fails_the_same_way(void)
{
	zcor *z = t_open();
	char *out = (char *)"sentinel";
	/* a tool */
	CHECK_INT(zcor_tool_call(z, NULL, "zcor_memory_read", "{\"id\":\"m404\"}", &out), ZCOR_ENOTFOUND);
	CHECK(out == NULL);
	check_error(z, ZCOR_ENOTFOUND, "m404");
	/* details travel in zcor_errjson */
	json_t *w = t_call_ok(z, NULL, "zcor_memory_write", "{\"title\":\"父\",\"content\":\"x\"}");
	char args[200];
	snprintf(args, sizeof(args), "{\"title\":\"子\",\"content\":\"y\",\"parentId\":\"%s\"}", t_str(w, "node.id"));
	json_decref(t_call_ok(z, NULL, "zcor_memory_write", "%s", args));
	snprintf(args, sizeof(args), "{\"id\":\"%s\"}", t_str(w, "node.id"));
	out = (char *)"sentinel";
	CHECK_INT(zcor_tool_call(z, NULL, "zcor_memory_delete", args, &out), ZCOR_ECONFLICT);
	CHECK(out == NULL);
	json_t *e = json_loads(zcor_errjson(z), 0, NULL);
	CHECK_STR(t_str(e, "error.details.reason"), "has_children");
	json_decref(e);
	json_decref(w);
	/* a later success clears it */
	CHECK_INT(zcor_tool_call(z, NULL, "zcor_memory_query", "{\"keywords\":[\"父\"]}", &out), ZCOR_OK);
	CHECK(out != NULL);
	zcor_free(out);
	check_clear(z);
	/* recall, a request of its own */
	out = (char *)"sentinel";
	CHECK_INT(zcor_recall(z, "{\"messages\":[\"x\"]}", &out), ZCOR_EINVAL);
	CHECK(out == NULL);
	check_error(z, ZCOR_EINVAL, "conversation");
	/* text out: the prefix */
	out = (char *)"sentinel";
	CHECK_INT(zcor_prefix(z, "nope", &out), ZCOR_EINVAL);
	CHECK(out == NULL);
	check_error(z, ZCOR_EINVAL, "nope");
	/* settings: no out at all, the message names the key */
	CHECK_INT(zcor_config_set(z, "{\"recallChars\":-5}"), ZCOR_EINVAL);
	check_error(z, ZCOR_EINVAL, "recallChars");
	out = NULL;
	CHECK_INT(zcor_config_json(z, &out), ZCOR_OK);
	CHECK(out != NULL);
	zcor_free(out);
	check_clear(z);
	/* a report: its failure is no report */
	out = (char *)"sentinel";
	int rc = zcor_transcript_import_file(z, "group:1", "/nonexistent/x.jsonl", &out);
	CHECK(rc != ZCOR_OK);
	CHECK_INT(zcor_errcode(z), rc);
	CHECK(out == NULL);
	check_error(z, zcor_errcode(z), "/nonexistent/x.jsonl");
	/* bytes out */
	char *data = (char *)"sentinel";
	size_t len = 7;
	const char *mime = "x";
	rc = zcor_sticker_read(z, "none.gif", &data, &len, &mime);
	CHECK(rc != ZCOR_OK);
	CHECK_INT(zcor_errcode(z), rc);
	CHECK(data == NULL && len == 0 && mime == NULL);
	check_error(z, rc, "stickers");
	/* a handle's error is not the thread's */
	CHECK_INT(zcor_errcode(NULL), ZCOR_OK);
	zcor_close(z);
}

struct other {
	int code;
	char msg[200];
};

static void *other_thread(void *arg)
{
	struct other *o = arg;
	o->code = zcor_errcode(NULL);
	snprintf(o->msg, sizeof(o->msg), "%s", zcor_errmsg(NULL));
	/* its own failure, then its end frees its zcor_errjson text */
	zcor_check_conversation(NULL, "elsewhere");
	(void)zcor_errjson(NULL);
	return NULL;
}

static void handle_less_errors_are_the_threads(void)
{
	CHECK_INT(zcor_check_conversation(NULL, "bogus:1"), ZCOR_EINVAL);
	check_error(NULL, ZCOR_EINVAL, "bogus:1");
	struct other o = {-1, ""};
	pthread_t t;
	CHECK(pthread_create(&t, NULL, other_thread, &o) == 0);
	pthread_join(t, NULL);
	CHECK_INT(o.code, ZCOR_OK);
	CHECK_STR(o.msg, "");
	/* the other thread's failure did not reach this one */
	check_error(NULL, ZCOR_EINVAL, "bogus:1");
	/* a handle-less success clears it */
	CHECK_INT(zcor_check_conversation(NULL, "group:1"), ZCOR_OK);
	check_clear(NULL);
	char *out = NULL;
	CHECK_INT(zcor_tools_json(NULL, ZCOR_TOOLS_ALL, &out), ZCOR_OK);
	CHECK(out != NULL);
	zcor_free(out);
	/* doctor of a directory that opens: memory.db is not the reason */
	out = (char *)"sentinel";
	CHECK_INT(zcor_doctor_unopened(NULL, t_tmpdir(), &out), ZCOR_ENOTFOUND);
	CHECK(out == NULL);
	check_error(NULL, ZCOR_ENOTFOUND, "memory.db");
}

static void failed_open_gives_a_handle_that_says_why(void)
{
	const char *dir = t_tmpdir();
	char p[600];
	snprintf(p, sizeof(p), "%s/memory.db", dir);
	FILE *f = fopen(p, "w");
	CHECK(f != NULL);
	fputs("this is not a SQLite database, and it is long enough to say so............", f);
	fclose(f);
	zcor *z = NULL;
	int rc = zcor_open(&z, dir);
	CHECK_INT(rc, ZCOR_EIO);
	CHECK(z != NULL);
	check_error(z, ZCOR_EIO, "memory.db");
	CHECK_STR(zcor_dir(z), dir);
	/* every call on it answers the same failure */
	char *out = (char *)"sentinel";
	CHECK_INT(zcor_tool_call(z, NULL, "zcor_memory_important", "{}", &out), ZCOR_EIO);
	CHECK(out == NULL);
	check_error(z, ZCOR_EIO, "memory.db");
	CHECK_INT(zcor_flush(z), ZCOR_EIO);
	CHECK_INT(zcor_check_conversation(z, "group:1"), ZCOR_EIO);
	/* and the doctor of that directory says why, with no handle */
	out = NULL;
	CHECK_INT(zcor_doctor_unopened(NULL, dir, &out), ZCOR_OK);
	CHECK_HAS(out, "MEMORY_DB_DAMAGED");
	zcor_free(out);
	zcor_close(z);
	/* no directory at all */
	z = NULL;
	CHECK_INT(zcor_open(&z, ""), ZCOR_EINVAL);
	CHECK(z != NULL);
	check_error(z, ZCOR_EINVAL, "directory");
	zcor_close(z);
}

/* issue 15: the schema check joins a value's path by hand (no snprintf
 * per value): the paths its refusals name, at the root, in an array
 * (one and two digits) and below an object's key */
static void issue15_schema_paths_joined_by_hand(void)
{
	zcor *z = t_open();
	static const struct {
		const char *args, *says;
	} cases[] = {
		{"{\"keywords\":[5]}", "argument 'keywords[0]': must be a string"},
		{"{\"keywords\":[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\",\"i\",\"j\",\"k\",5]}",
		 "argument 'keywords[11]': must be a string"},
		{"{\"keywords\":\"x\"}", "argument 'keywords': must be an array"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = 0;
		json_t *v = t_call_raw(z, NULL, &rc, "zcor_memory_query", cases[i].args);
		CHECK_INT(rc, ZCOR_EINVAL);
		CHECK_STR(t_errmsg(v), cases[i].says);
		json_decref(v);
	}
	char *out = NULL;
	CHECK_INT(zcor_log_messages(z, NULL, "group:1",
				    "{\"messages\":[{\"id\":\"1\",\"senderId\":\"2\"},{\"id\":\"2\","
				    "\"senderId\":\"2\",\"senderName\":7}]}",
				    &out),
		  ZCOR_EINVAL);
	CHECK_STR(zcor_errmsg(z), "field 'messages[1].senderName': must be a string of at most 200 characters");
	zcor_free(out);
	zcor_close(z);
}

const struct t_case t_cases[] = {
	{"issue15_schema_paths_joined_by_hand", issue15_schema_paths_joined_by_hand},
	{"each_family_fails_the_same_way", each_family_fails_the_same_way},
	{"handle_less_errors_are_the_threads", handle_less_errors_are_the_threads},
	{"failed_open_gives_a_handle_that_says_why", failed_open_gives_a_handle_that_says_why},
	{0},
};
