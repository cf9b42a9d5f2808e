/*
 * test_validate.c — one validator (issue 13, item 5): the recall request
 * and the log batch are checked by text/schema.c, as tools' arguments
 * are. Each bad input answers the very message it answered when the
 * checks were written by hand (the table was taken from that code), the
 * first of several mistakes is the one it named then, and input the
 * hand-written checks took is still taken.
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"

struct golden {
	const char *in, *msg;
};

/* "x" n times, as a JSON string's body. */
static char *rep(const char *ch, int n)
{
	size_t k = strlen(ch);
	char *s = malloc(k * (size_t)n + 1);
	for (int i = 0; i < n; i++)
		memcpy(s + k * (size_t)i, ch, k);
	s[k * (size_t)n] = '\0';
	return s;
}

/* in's "@" (at most one) replaced by fill. */
static char *expand(const char *in, const char *fill)
{
	const char *at = strchr(in, '@');
	if (!at)
		return strdup(in);
	size_t a = (size_t)(at - in), f = strlen(fill), b = strlen(at + 1);
	char *s = malloc(a + f + b + 1);
	memcpy(s, in, a);
	memcpy(s + a, fill, f);
	memcpy(s + a + f, at + 1, b + 1);
	return s;
}

#define CONV "\"conversation\":\"group:1\""
#define RECALL_EACH                                                                                \
	"field 'messages': each message is a string or {text, senderId?, senderName?} with a text of " \
	"at most 20000 characters"
#define RECALL_CONV "field 'conversation': is required (group:<id>, private:<qq> or console:<name>)"

static const struct golden recall_golden[] = {
	{"[]", "the recall request must be a JSON object"},
	{"{\"x\":1}", "unknown field 'x'; a recall request has conversation, messages, speakers, mentions, "
		      "explain, preview"},
	{"{\"messages\":[\"x\"],\"x\":1}", "unknown field 'x'; a recall request has conversation, messages, "
					   "speakers, mentions, explain, preview"},
	{"{\"messages\":[\"x\"]}", RECALL_CONV},
	{"{\"conversation\":5,\"messages\":[\"x\"]}", RECALL_CONV},
	{"{\"conversation\":null,\"messages\":[\"x\"]}", RECALL_CONV},
	{"{\"conversation\":\"nope\",\"messages\":[]}", NULL}, /* zc_conv_check's, prefixed: below */
	{"{" CONV "}", "field 'messages': must be an array of 1 to 100 messages"},
	{"{" CONV ",\"messages\":[]}", "field 'messages': must be an array of 1 to 100 messages"},
	{"{" CONV ",\"messages\":\"hi\"}", "field 'messages': must be an array of 1 to 100 messages"},
	{"{" CONV ",\"messages\":[@]}", "field 'messages': must be an array of 1 to 100 messages"},
	{"{" CONV ",\"messages\":[1]}", RECALL_EACH},
	{"{" CONV ",\"messages\":[{\"senderId\":\"1\"}]}", RECALL_EACH},
	{"{" CONV ",\"messages\":[{\"text\":7}]}", RECALL_EACH},
	{"{" CONV ",\"messages\":[\"@\"]}", RECALL_EACH},
	{"{" CONV ",\"messages\":[{\"text\":\"@\"}]}", RECALL_EACH},
	{"{" CONV ",\"messages\":[\"a\"],\"speakers\":{}}", "field 'speakers': must be an array of {id, name?}"},
	{"{" CONV ",\"messages\":[\"a\"],\"speakers\":null}", "field 'speakers': must be an array of {id, name?}"},
	{"{" CONV ",\"messages\":[\"a\"],\"speakers\":[{\"name\":\"a\"}]}",
	 "field 'speakers': each speaker needs a string 'id'"},
	{"{" CONV ",\"messages\":[\"a\"],\"speakers\":[\"a\"]}", "field 'speakers': each speaker needs a string 'id'"},
	{"{" CONV ",\"messages\":[\"a\"],\"speakers\":[{\"id\":3}]}",
	 "field 'speakers': each speaker needs a string 'id'"},
	{"{" CONV ",\"messages\":[\"a\"],\"mentions\":\"a\"}", "field 'mentions': must be an array of person ids"},
	{"{" CONV ",\"messages\":[\"a\"],\"mentions\":[1]}",
	 "field 'mentions': must be an array of person ids (strings)"},
	{"{" CONV ",\"messages\":[\"a\"],\"explain\":1}", "field 'explain': must be true or false"},
	{"{" CONV ",\"messages\":[\"a\"],\"explain\":null}", "field 'explain': must be true or false"},
	/* the first mistake in the order the fields were checked */
	{"{\"explain\":1,\"mentions\":1,\"speakers\":1,\"messages\":[]," CONV "}",
	 "field 'messages': must be an array of 1 to 100 messages"},
	{"{\"explain\":1,\"mentions\":1,\"speakers\":1," CONV ",\"messages\":[\"a\"]}",
	 "field 'speakers': must be an array of {id, name?}"},
	{"{\"explain\":1,\"mentions\":1," CONV ",\"messages\":[\"a\"]}",
	 "field 'mentions': must be an array of person ids"},
	{0, 0},
};

#define MSG "\"id\":\"1\",\"senderId\":\"2\""
#define ID_REQ "field 'messages[0].id': is required: the message id (string or integer, 1 to 128 bytes)"
#define SENDER_REQ \
	"field 'messages[0].senderId': is required: the sender's id (string or integer, 1 to 64 bytes)"
#define A_MESSAGE_HAS \
	"unknown; a message has id, time, senderId, senderName, text, mentions, replyTo, media, self"
#define TIME_TYPE \
	"field 'messages[0].time': must be an ISO-8601 time with a zone, such as \"2026-11-29T20:00:00+08:00\""

static const struct golden log_golden[] = {
	{"[]", "the batch must be a JSON object {\"messages\": […]}"},
	{"{\"x\":1}", "field 'x': unknown; a batch has only 'messages' and 'recall'"},
	{"{\"messages\":[1],\"x\":1}", "field 'x': unknown; a batch has only 'messages' and 'recall'"},
	{"{\"messages\":[{" MSG "}],\"recall\":0}", "field 'recall': must be true or false: false logs "
	 "without computing the recall header (a world whose turn follows recalls there)"},
	{"{}", "field 'messages': must be an array of 1 to 100 messages"},
	{"{\"messages\":[]}", "field 'messages': must be an array of 1 to 100 messages"},
	{"{\"messages\":{}}", "field 'messages': must be an array of 1 to 100 messages"},
	{"{\"messages\":[@]}", "field 'messages': must be an array of 1 to 100 messages"},
	{"{\"messages\":[1]}", "field 'messages[0]': must be an object {id, time, senderId, senderName, text, …}"},
	{"{\"messages\":[{\"q\":1}]}", "field 'messages[0].q': " A_MESSAGE_HAS},
	{"{\"messages\":[{" MSG ",\"self\":\"x\"}]}", "field 'messages[0].self': must be true or false"},
	{"{\"messages\":[{" MSG ",\"self\":null}]}", "field 'messages[0].self': must be true or false"},
	{"{\"messages\":[{\"senderId\":\"2\"}]}", ID_REQ},
	{"{\"messages\":[{\"id\":\"\",\"senderId\":\"2\"}]}", ID_REQ},
	{"{\"messages\":[{\"id\":null,\"senderId\":\"2\"}]}", ID_REQ},
	{"{\"messages\":[{\"id\":1.5,\"senderId\":\"2\"}]}", ID_REQ},
	{"{\"messages\":[{\"id\":2.0,\"senderId\":\"2\"}]}", ID_REQ},
	{"{\"messages\":[{\"id\":\"a\\u0001\",\"senderId\":\"2\"}]}", ID_REQ},
	{"{\"messages\":[{\"id\":\"@\",\"senderId\":\"2\"}]}", ID_REQ},
	{"{\"messages\":[{\"id\":\"1\"}]}", SENDER_REQ},
	{"{\"messages\":[{\"id\":\"1\",\"senderId\":[]}]}", SENDER_REQ},
	{"{\"messages\":[{" MSG ",\"time\":5}]}", TIME_TYPE},
	{"{\"messages\":[{" MSG ",\"time\":\"yesterday\"}]}",
	 "argument 'messages[0].time': 'yesterday' is not a date-time; use ISO-8601 with a time zone, e.g. "
	 "2026-11-29T20:00:00+08:00"},
	{"{\"messages\":[{" MSG ",\"senderName\":5}]}",
	 "field 'messages[0].senderName': must be a string of at most 200 characters"},
	{"{\"messages\":[{" MSG ",\"senderName\":\"@\"}]}",
	 "field 'messages[0].senderName': must be a string of at most 200 characters"},
	{"{\"messages\":[{" MSG ",\"text\":{}}]}", "field 'messages[0].text': must be a string of at most 20000 characters"},
	{"{\"messages\":[{" MSG ",\"text\":\"@\"}]}",
	 "field 'messages[0].text': must be a string of at most 20000 characters"},
	{"{\"messages\":[{" MSG ",\"mentions\":\"a\"}]}",
	 "field 'messages[0].mentions': must be an array of at most 50 person ids"},
	{"{\"messages\":[{" MSG ",\"mentions\":[@]}]}",
	 "field 'messages[0].mentions': must be an array of at most 50 person ids"},
	{"{\"messages\":[{" MSG ",\"mentions\":[{}]}]}",
	 "field 'messages[0].mentions': each mention is a person id (string or integer)"},
	{"{\"messages\":[{" MSG ",\"mentions\":[\"\"]}]}",
	 "field 'messages[0].mentions': each mention is a person id (string or integer)"},
	{"{\"messages\":[{" MSG ",\"replyTo\":{}}]}",
	 "field 'messages[0].replyTo': must be the id of the message replied to, or null"},
	{"{\"messages\":[{" MSG ",\"replyTo\":\"\"}]}",
	 "field 'messages[0].replyTo': must be the id of the message replied to, or null"},
	{"{\"messages\":[{" MSG ",\"media\":\"a\"}]}",
	 "field 'messages[0].media': must be an array of at most 10 media items"},
	{"{\"messages\":[{" MSG ",\"media\":[@]}]}",
	 "field 'messages[0].media': must be an array of at most 10 media items"},
	/* the second message, and the first mistake in the order of the checks */
	{"{\"messages\":[{" MSG "},{\"id\":\"3\"}]}",
	 "field 'messages[1].senderId': is required: the sender's id (string or integer, 1 to 64 bytes)"},
	{"{\"messages\":[{\"q\":1,\"self\":\"x\"}]}", "field 'messages[0].q': " A_MESSAGE_HAS},
	{"{\"messages\":[{\"text\":5,\"self\":\"x\"}]}", "field 'messages[0].self': must be true or false"},
	{"{\"messages\":[{\"senderName\":5,\"time\":5}]}", ID_REQ},
	{"{\"messages\":[{\"media\":5,\"replyTo\":{},\"mentions\":5,\"text\":5,\"senderName\":5,\"time\":5," MSG "}]}",
	 TIME_TYPE},
	{"{\"messages\":[{\"media\":5,\"replyTo\":{},\"mentions\":5,\"text\":5," MSG "}]}",
	 "field 'messages[0].text': must be a string of at most 20000 characters"},
	{"{\"messages\":[{\"media\":5,\"replyTo\":{}," MSG "}]}",
	 "field 'messages[0].replyTo': must be the id of the message replied to, or null"},
	{"{\"messages\":[{\"media\":5,\"text\":\"x\"," MSG "},{\"q\":1}]}",
	 "field 'messages[0].media': must be an array of at most 10 media items"},
	{0, 0},
};

/* The fill of a row: the smallest input just past its limit. */
static char *fill(const char *in)
{
	if (strstr(in, "[@]")) {
		/* one more item than the array takes */
		int n = strstr(in, "mentions") ? 51 : strstr(in, "media") ? 11 : 101;
		const char *item = strstr(in, "media") ? "{\"type\":\"image\",\"file\":\"x.png\"}," : "\"a\",";
		char *s = rep(item, n);
		s[strlen(s) - 1] = '\0';
		return s;
	}
	if (strstr(in, "\"id\":\"@\""))
		return rep("i", 129);
	if (strstr(in, "senderName"))
		return rep("名", 201);
	return rep("名", 20001);
}

static void run_golden(const struct golden *g, int recall)
{
	zcor *z = t_open();
	for (; g->in; g++) {
		char *f = strchr(g->in, '@') ? fill(g->in) : strdup("");
		char *in = expand(g->in, f), *out = NULL;
		int rc = recall ? zcor_recall(z, in, &out) : zcor_log_messages(z, NULL, "group:1", in, &out);
		CHECK_INT(rc, ZCOR_EINVAL);
		if (g->msg) {
			CHECK_STR(zcor_errmsg(z), g->msg);
		} else {
			CHECK_HAS(zcor_errmsg(z), "field 'conversation': ");
			CHECK_HAS(zcor_errmsg(z), "nope");
		}
		if (rc == ZCOR_OK)
			zcor_free(out);
		free(in);
		free(f);
	}
	zcor_close(z);
}

static void issue13_recall_request_through_the_schema(void) { run_golden(recall_golden, 1); }

static void issue13_log_batch_through_the_schema(void) { run_golden(log_golden, 0); }

/* What the hand-written checks took is still taken: nulls for the
 * optional fields, ids as integers, a message as a plain string. */
static void issue13_valid_input_still_taken(void)
{
	zcor *z = t_open();
	char *out = NULL;
	CHECK_INT(zcor_log_messages(z, NULL, "group:1",
				    "{\"messages\":[{\"id\":7,\"senderId\":8,\"time\":null,\"senderName\":null,"
				    "\"text\":null,\"mentions\":null,\"replyTo\":null,\"media\":null},"
				    "{\"id\":\"9\",\"senderId\":\"8\",\"text\":\"你好\",\"mentions\":[1,\"2\"],"
				    "\"replyTo\":7,\"time\":\"2026-11-29T20:00:00+08:00\",\"self\":false,"
				    "\"media\":[]}]}",
				    &out),
		  ZCOR_OK);
	json_t *r = t_answer(z, ZCOR_OK, out);
	CHECK_INT(t_int(r, "logged"), 2);
	char *reply = t_sql_str(zcor_dir(z), "SELECT reply_to FROM messages WHERE message_id = '9'");
	char *mentions = t_sql_str(zcor_dir(z), "SELECT mentions FROM messages WHERE message_id = '9'");
	CHECK_STR(reply, "7");
	CHECK_STR(mentions, "[\"1\",\"2\"]");
	free(reply);
	free(mentions);
	json_decref(r);
	out = NULL;
	CHECK_INT(zcor_recall(z,
			      "{" CONV ",\"messages\":[\"你好\",{\"text\":\"x\",\"senderId\":5,\"extra\":1}],"
			      "\"speakers\":[{\"id\":\"8\",\"name\":7}],\"mentions\":[],\"explain\":false}",
			      &out),
		  ZCOR_OK);
	zcor_free(out);
	zcor_close(z);
}

const struct t_case t_cases[] = {
	{"issue13_recall_request_through_the_schema", issue13_recall_request_through_the_schema},
	{"issue13_log_batch_through_the_schema", issue13_log_batch_through_the_schema},
	{"issue13_valid_input_still_taken", issue13_valid_input_still_taken},
	{0},
};
