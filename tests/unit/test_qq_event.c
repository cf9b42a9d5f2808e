/*
 * test_qq_event.c — the QQ world's events and replies (src/world/qq_event.h,
 * issue 15): NapCat-shaped OneBot v11 frames as NapCat sends them (ids as
 * numbers in events and strings in segments, time in seconds) for every
 * kind the issue lists, malformed ones, the reply's segments (stickers,
 * mentions, splitting, the quote), and the image download against a real
 * HTTP server on 127.0.0.1 in this process (a thread with a listening
 * socket answering canned responses by path).
 */
#include "harness.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <nettle/base64.h>

#include "base/buf.h"
#include "base/utf8.h"
#include "world/qq_event.h"

#define BOT "3000000001"

static const char *const NAMES[] = {"小钟", "XiaoZhong"};

/* Parses a frame (JSON text) into ev; the return code. */
static int parse(const char *frame, const char *self, struct zc_qq_event *ev, char *err, size_t cap)
{
	json_error_t je;
	json_t *j = json_loads(frame, 0, &je);
	if (!j) {
		fprintf(stderr, "bad test frame: %s: %s\n", je.text, frame);
		t_failures++;
		memset(ev, 0, sizeof(*ev));
		return -2;
	}
	int rc = zc_qq_event_parse(j, self, NAMES, 2, ev, err, cap);
	json_decref(j);
	return rc;
}

static const char *mstr(const struct zc_qq_event *ev, const char *key)
{
	return json_string_value(json_object_get(ev->message, key));
}

/* ---- messages ------------------------------------------------------------ */

static void group_at_image_text(void)
{
	struct zc_qq_event ev;
	char err[200];
	const char *frame =
		"{\"self_id\":3000000001,\"user_id\":123456789,\"time\":1767225600,"
		"\"message_id\":1850360718,\"message_seq\":1850360718,\"real_id\":1850360718,"
		"\"real_seq\":\"4512\",\"message_type\":\"group\",\"sender\":{\"user_id\":123456789,"
		"\"nickname\":\"阿明\",\"card\":\"明哥\",\"role\":\"member\"},\"raw_message\":"
		"\"[CQ:at,qq=3000000001] [CQ:image,file=AB12.png] 看这个\",\"font\":14,"
		"\"sub_type\":\"normal\",\"message\":[{\"type\":\"at\",\"data\":{\"qq\":\"3000000001\"}},"
		"{\"type\":\"text\",\"data\":{\"text\":\" \"}},{\"type\":\"image\",\"data\":{\"summary\":\"\","
		"\"file\":\"AB12.png\",\"sub_type\":0,\"url\":\"https://multimedia.nt.qq.com.cn/download?"
		"appid=1407&fileid=abc\",\"file_size\":\"48213\"}},{\"type\":\"text\",\"data\":{\"text\":"
		"\" 看这个\"}}],\"message_format\":\"array\",\"post_type\":\"message\",\"group_id\":"
		"987654321,\"group_name\":\"周末爬山群\"}";
	CHECK_INT(parse(frame, BOT, &ev, err, sizeof(err)), 0);
	CHECK_INT(ev.kind, ZC_QQ_MESSAGE);
	CHECK_STR(ev.conversation, "group:987654321");
	CHECK_STR(ev.message_id, "1850360718");
	CHECK_STR(ev.group_name, "周末爬山群");
	CHECK_STR(mstr(&ev, "id"), "1850360718");
	CHECK_STR(mstr(&ev, "time"), "2026-01-01T00:00:00.000Z");
	CHECK_STR(mstr(&ev, "senderId"), "123456789");
	CHECK_STR(mstr(&ev, "senderName"), "明哥");
	CHECK_STR(mstr(&ev, "text"), "[图片] 看这个");
	CHECK(json_is_null(json_object_get(ev.message, "replyTo")));
	CHECK(json_object_get(ev.message, "media") == NULL);
	json_t *m = json_object_get(ev.message, "mentions");
	CHECK_INT(json_array_size(m), 1);
	CHECK_STR(json_string_value(json_array_get(m, 0)), BOT);
	CHECK_INT(ev.at_bot, 1);
	CHECK_INT(ev.at_all, 0);
	CHECK_INT(ev.name_hit, 0);
	CHECK_INT(ev.lone_sticker, 0);
	CHECK_INT(ev.time_ms, 1767225600000LL);
	CHECK_INT(json_array_size(ev.images), 1);
	json_t *im = json_array_get(ev.images, 0);
	CHECK_HAS(json_string_value(json_object_get(im, "url")), "https://multimedia.nt.qq.com.cn/");
	CHECK_STR(json_string_value(json_object_get(im, "file")), "AB12.png");
	CHECK_INT(json_integer_value(json_object_get(im, "fileSize")), 48213);
	CHECK(json_is_false(json_object_get(im, "sticker")));
	zc_qq_event_release(&ev);

	/* the same message before the bot's id is known: nothing is at the bot */
	CHECK_INT(parse(frame, "", &ev, err, sizeof(err)), 0);
	CHECK_INT(ev.kind, ZC_QQ_MESSAGE);
	CHECK_INT(ev.at_bot, 0);
	zc_qq_event_release(&ev);
}

static const char *group_frame(const char *segments, char *buf, size_t n)
{
	snprintf(buf, n,
		 "{\"self_id\":3000000001,\"user_id\":123456789,\"time\":1767225600,\"message_id\":77,"
		 "\"message_type\":\"group\",\"sub_type\":\"normal\",\"group_id\":987654321,"
		 "\"sender\":{\"user_id\":123456789,\"nickname\":\"阿明\",\"card\":\"\"},"
		 "\"message\":%s,\"message_format\":\"array\",\"post_type\":\"message\"}",
		 segments);
	return buf;
}

static void reply_segment(void)
{
	struct zc_qq_event ev;
	char err[200], f[2048];
	CHECK_INT(parse(group_frame("[{\"type\":\"reply\",\"data\":{\"id\":\"1850360718\"}},"
				    "{\"type\":\"text\",\"data\":{\"text\":\"同意\"}}]",
				    f, sizeof(f)),
			BOT, &ev, err, sizeof(err)),
		  0);
	CHECK_STR(json_string_value(json_object_get(ev.message, "replyTo")), "1850360718");
	CHECK_STR(mstr(&ev, "text"), "同意");
	CHECK_STR(mstr(&ev, "senderName"), "阿明"); /* an empty card: the nickname */
	zc_qq_event_release(&ev);
}

static void faces(void)
{
	struct zc_qq_event ev;
	char err[200], f[2048];
	CHECK_INT(parse(group_frame("[{\"type\":\"face\",\"data\":{\"id\":\"317\",\"raw\":{\"faceIndex\":"
				    "317,\"faceText\":\"/菜汪\",\"faceType\":2},\"resultId\":null,"
				    "\"chainCount\":null}}]",
				    f, sizeof(f)),
			BOT, &ev, err, sizeof(err)),
		  0);
	CHECK_STR(mstr(&ev, "text"), "[表情:/菜汪]");
	CHECK_INT(ev.lone_sticker, 1);
	zc_qq_event_release(&ev);

	CHECK_INT(parse(group_frame("[{\"type\":\"face\",\"data\":{\"id\":\"317\"}},"
				    "{\"type\":\"text\",\"data\":{\"text\":\"哈哈\"}}]",
				    f, sizeof(f)),
			BOT, &ev, err, sizeof(err)),
		  0);
	CHECK_STR(mstr(&ev, "text"), "[表情:id=317]哈哈");
	CHECK_INT(ev.lone_sticker, 0);
	zc_qq_event_release(&ev);

	/* a sticker image alone (sub_type 1, "[动画表情]") is a lone sticker too */
	CHECK_INT(parse(group_frame("[{\"type\":\"image\",\"data\":{\"summary\":\"[动画表情]\",\"file\":"
				    "\"C3.gif\",\"sub_type\":1,\"url\":\"https://x/C3\",\"file_size\":"
				    "\"1024\"}},{\"type\":\"text\",\"data\":{\"text\":\" \"}}]",
				    f, sizeof(f)),
			BOT, &ev, err, sizeof(err)),
		  0);
	CHECK_STR(mstr(&ev, "text"), "[动画表情] ");
	CHECK_INT(ev.lone_sticker, 1);
	CHECK(json_is_true(json_object_get(json_array_get(ev.images, 0), "sticker")));
	CHECK_STR(json_string_value(json_object_get(json_array_get(ev.images, 0), "summary")),
		  "[动画表情]");
	zc_qq_event_release(&ev);

	/* a sticker with no summary, and a plain picture */
	CHECK_INT(parse(group_frame("[{\"type\":\"image\",\"data\":{\"file\":\"a\",\"sub_type\":\"1\"}},"
				    "{\"type\":\"image\",\"data\":{\"file\":\"b\",\"sub_type\":0}}]",
				    f, sizeof(f)),
			BOT, &ev, err, sizeof(err)),
		  0);
	CHECK_STR(mstr(&ev, "text"), "[动画表情][图片]");
	CHECK_INT(ev.lone_sticker, 0);
	CHECK_INT(json_array_size(ev.images), 2);
	zc_qq_event_release(&ev);
}

static void private_friend(void)
{
	struct zc_qq_event ev;
	char err[200];
	CHECK_INT(parse("{\"self_id\":3000000001,\"user_id\":555666777,\"time\":1767225601,"
			"\"message_id\":-2147000001,\"message_type\":\"private\",\"sub_type\":\"friend\","
			"\"sender\":{\"user_id\":555666777,\"nickname\":\"Lily\",\"card\":\"\"},"
			"\"raw_message\":\"在吗\",\"font\":14,\"message\":[{\"type\":\"text\",\"data\":"
			"{\"text\":\"在吗\"}}],\"message_format\":\"array\",\"post_type\":\"message\","
			"\"target_id\":555666777}",
			BOT, &ev, err, sizeof(err)),
		  0);
	CHECK_INT(ev.kind, ZC_QQ_MESSAGE);
	CHECK_STR(ev.conversation, "private:555666777");
	CHECK_STR(ev.message_id, "-2147000001"); /* OneBot's int32 ids may be negative */
	CHECK_STR(ev.temp_group, "");
	CHECK(ev.group_name == NULL);
	CHECK_STR(mstr(&ev, "senderName"), "Lily");
	CHECK_STR(mstr(&ev, "text"), "在吗");
	zc_qq_event_release(&ev);
}

static void temporary_chat(void)
{
	struct zc_qq_event ev;
	char err[200];
	/* today's NapCat: the group in group_id, temp_source 0 */
	CHECK_INT(parse("{\"self_id\":3000000001,\"user_id\":444,\"time\":1767225602,\"message_id\":9,"
			"\"message_type\":\"private\",\"sub_type\":\"group\",\"group_id\":987654321,"
			"\"temp_source\":0,\"sender\":{\"user_id\":444,\"nickname\":\"路人\"},"
			"\"message\":[{\"type\":\"text\",\"data\":{\"text\":\"你好\"}}],"
			"\"message_format\":\"array\",\"post_type\":\"message\"}",
			BOT, &ev, err, sizeof(err)),
		  0);
	CHECK_INT(ev.kind, ZC_QQ_MESSAGE);
	CHECK_STR(ev.conversation, "private:444");
	CHECK_STR(ev.temp_group, "987654321");
	zc_qq_event_release(&ev);
	/* older versions: sender.group_id */
	CHECK_INT(parse("{\"user_id\":444,\"message_id\":10,\"message_type\":\"private\",\"sub_type\":"
			"\"group\",\"temp_source\":0,\"sender\":{\"user_id\":444,\"nickname\":\"路人\","
			"\"group_id\":112233},\"message\":[],\"post_type\":\"message\"}",
			BOT, &ev, err, sizeof(err)),
		  0);
	CHECK_STR(ev.temp_group, "112233");
	CHECK(json_is_null(json_object_get(ev.message, "time"))); /* no time: the caller's now */
	zc_qq_event_release(&ev);
	/* NapCat's stand-in 284840486 is no group */
	CHECK_INT(parse("{\"user_id\":444,\"message_id\":11,\"message_type\":\"private\",\"sub_type\":"
			"\"group\",\"group_id\":284840486,\"temp_source\":284840486,\"sender\":{},"
			"\"message\":[],\"post_type\":\"message\"}",
			BOT, &ev, err, sizeof(err)),
		  0);
	CHECK_STR(ev.temp_group, "");
	CHECK_STR(ev.conversation, "private:444");
	CHECK(json_is_null(json_object_get(ev.message, "senderName")));
	zc_qq_event_release(&ev);
}

static void file_forward_other(void)
{
	struct zc_qq_event ev;
	char err[200], f[2048];
	CHECK_INT(parse(group_frame("[{\"type\":\"file\",\"data\":{\"file\":\"报告.pdf\",\"file_id\":"
				    "\"a1b2\",\"file_size\":\"2097152\",\"url\":\"file:///x\"}},"
				    "{\"type\":\"forward\",\"data\":{\"id\":\"7412345678901234567\"}},"
				    "{\"type\":\"record\",\"data\":{\"file\":\"v.amr\"}},"
				    "{\"type\":\"dice\",\"data\":{\"result\":\"4\"}},"
				    "{\"type\":\"at\",\"data\":{\"qq\":\"all\"}},"
				    "{\"type\":\"at\",\"data\":{\"qq\":\"222\",\"name\":\"小红\"}},"
				    "{\"type\":\"at\",\"data\":{\"qq\":222}}]",
				    f, sizeof(f)),
			BOT, &ev, err, sizeof(err)),
		  0);
	CHECK_STR(mstr(&ev, "text"),
		  "[文件:报告.pdf 2.0 MB][合并转发:7412345678901234567][语音][dice]@全体成员@小红@222");
	CHECK_INT(ev.at_all, 1);
	CHECK_INT(ev.at_bot, 0);
	json_t *m = json_object_get(ev.message, "mentions");
	CHECK_INT(json_array_size(m), 2); /* "all" and 222 once */
	CHECK_STR(json_string_value(json_array_get(m, 0)), "all");
	CHECK_STR(json_string_value(json_array_get(m, 1)), "222");
	CHECK_INT(json_array_size(ev.images), 0);
	zc_qq_event_release(&ev);
}

static void names_wake(void)
{
	struct zc_qq_event ev;
	char err[200], f[2048];
	CHECK_INT(parse(group_frame("[{\"type\":\"text\",\"data\":{\"text\":\"hey xiaozhong, 在吗\"}}]",
				    f, sizeof(f)),
			BOT, &ev, err, sizeof(err)),
		  0);
	CHECK_INT(ev.name_hit, 1); /* ASCII in either case */
	zc_qq_event_release(&ev);
	CHECK_INT(parse(group_frame("[{\"type\":\"text\",\"data\":{\"text\":\"问问小钟吧\"}}]", f, sizeof(f)),
			BOT, &ev, err, sizeof(err)),
		  0);
	CHECK_INT(ev.name_hit, 1);
	zc_qq_event_release(&ev);
	CHECK_INT(parse(group_frame("[{\"type\":\"text\",\"data\":{\"text\":\"小 钟 Xiao Zhong\"}},"
				    "{\"type\":\"at\",\"data\":{\"qq\":\"9\",\"name\":\"小钟\"}}]",
				    f, sizeof(f)),
			BOT, &ev, err, sizeof(err)),
		  0);
	CHECK_INT(ev.name_hit, 0); /* an @ of someone else named so is not the name in the text */
	zc_qq_event_release(&ev);
}

static void caps(void)
{
	struct zc_qq_event ev;
	char err[200];
	struct zc_buf b = ZC_BUF_INIT;
	zc_buf_adds(&b, "{\"user_id\":1,\"message_id\":2,\"message_type\":\"group\",\"group_id\":3,"
			"\"post_type\":\"message\",\"sender\":{\"card\":\"");
	for (int i = 0; i < 100; i++)
		zc_buf_adds(&b, "名");
	zc_buf_adds(&b, "\\n\"},\"message\":[{\"type\":\"text\",\"data\":{\"text\":\"");
	for (int i = 0; i < 20000; i++)
		zc_buf_adds(&b, "长");
	zc_buf_adds(&b, "\"}}]}");
	CHECK_INT(parse(b.p, BOT, &ev, err, sizeof(err)), 0);
	const char *name = mstr(&ev, "senderName"), *text = mstr(&ev, "text");
	CHECK(name && zc_utf8_len(name) == 64 && zc_utf8_valid(name, strlen(name)));
	CHECK(text && strlen(text) <= (16u << 10) && zc_utf8_valid(text, strlen(text)));
	CHECK(text && zc_utf8_len(text) > 5000);
	CHECK_HAS(text, "…[消息太长，后面的省略了]");
	zc_qq_event_release(&ev);
	zc_buf_release(&b);
}

static void cq_string(void)
{
	struct zc_qq_event ev;
	char err[200];
	CHECK_INT(parse("{\"self_id\":3000000001,\"user_id\":123,\"time\":1767225600,\"message_id\":5,"
			"\"message_type\":\"group\",\"group_id\":42,\"sender\":{\"nickname\":\"阿明\"},"
			"\"message\":\"[CQ:reply,id=4][CQ:at,qq=3000000001] 你好&#91;x&#93;&amp;"
			"[CQ:image,file=a.jpg,sub_type=0,url=https://h/a?x=1&amp;y=2][CQ:face,id=14]"
			"[CQ:oops\",\"message_format\":\"string\",\"post_type\":\"message\"}",
			BOT, &ev, err, sizeof(err)),
		  0);
	CHECK_STR(mstr(&ev, "text"), "你好[x]&[图片][表情:id=14][CQ:oops");
	CHECK_INT(ev.at_bot, 1);
	CHECK_STR(json_string_value(json_object_get(ev.message, "replyTo")), "4");
	CHECK_STR(json_string_value(json_object_get(json_array_get(ev.images, 0), "url")),
		  "https://h/a?x=1&y=2");
	zc_qq_event_release(&ev);
}

/* ---- the other kinds ------------------------------------------------------ */

static void pokes(void)
{
	struct zc_qq_event ev;
	char err[200];
	CHECK_INT(parse("{\"time\":1767225603,\"self_id\":3000000001,\"post_type\":\"notice\","
			"\"notice_type\":\"notify\",\"sub_type\":\"poke\",\"target_id\":3000000001,"
			"\"user_id\":123456789,\"group_id\":987654321,\"raw_info\":[{\"col\":\"1\","
			"\"nm\":\"\",\"type\":\"qq\",\"uid\":\"u_x\"},{\"txt\":\"戳了戳\",\"type\":\"nor\"}]}",
			BOT, &ev, err, sizeof(err)),
		  0);
	CHECK_INT(ev.kind, ZC_QQ_POKE);
	CHECK_INT(ev.poke_at_bot, 1);
	CHECK_STR(ev.conversation, "group:987654321");
	CHECK_STR(ev.user_id, "123456789");
	CHECK_STR(ev.target_id, BOT);
	CHECK(ev.message == NULL);
	zc_qq_event_release(&ev);
	/* a friend's poke: the private conversation */
	CHECK_INT(parse("{\"time\":1767225603,\"self_id\":3000000001,\"post_type\":\"notice\","
			"\"notice_type\":\"notify\",\"sub_type\":\"poke\",\"target_id\":3000000001,"
			"\"user_id\":555,\"sender_id\":555}",
			BOT, &ev, err, sizeof(err)),
		  0);
	CHECK_INT(ev.kind, ZC_QQ_POKE);
	CHECK_STR(ev.conversation, "private:555");
	zc_qq_event_release(&ev);
	/* a poke at someone else */
	CHECK_INT(parse("{\"time\":1767225603,\"self_id\":3000000001,\"post_type\":\"notice\","
			"\"notice_type\":\"notify\",\"sub_type\":\"poke\",\"target_id\":222,"
			"\"user_id\":123456789,\"group_id\":987654321}",
			BOT, &ev, err, sizeof(err)),
		  0);
	CHECK_INT(ev.kind, ZC_QQ_IGNORE);
	CHECK_INT(ev.poke_at_bot, 0);
	zc_qq_event_release(&ev);
}

static void recalls(void)
{
	struct zc_qq_event ev;
	char err[200];
	CHECK_INT(parse("{\"time\":1767225604,\"self_id\":3000000001,\"post_type\":\"notice\","
			"\"group_id\":987654321,\"user_id\":123456789,\"notice_type\":\"group_recall\","
			"\"operator_id\":888,\"message_id\":1850360718}",
			BOT, &ev, err, sizeof(err)),
		  0);
	CHECK_INT(ev.kind, ZC_QQ_RECALL);
	CHECK_STR(ev.conversation, "group:987654321");
	CHECK_STR(ev.message_id, "1850360718");
	CHECK_STR(ev.operator_id, "888");
	CHECK_STR(ev.user_id, "123456789");
	CHECK_INT(ev.time_ms, 1767225604000LL);
	zc_qq_event_release(&ev);
	CHECK_INT(parse("{\"time\":1767225604,\"self_id\":3000000001,\"post_type\":\"notice\","
			"\"notice_type\":\"friend_recall\",\"user_id\":555,\"message_id\":66}",
			BOT, &ev, err, sizeof(err)),
		  0);
	CHECK_INT(ev.kind, ZC_QQ_RECALL);
	CHECK_STR(ev.conversation, "private:555");
	CHECK_STR(ev.message_id, "66");
	zc_qq_event_release(&ev);
	/* other notices, requests, unknown post types */
	CHECK_INT(parse("{\"post_type\":\"notice\",\"notice_type\":\"group_increase\",\"group_id\":1,"
			"\"user_id\":2}",
			BOT, &ev, err, sizeof(err)),
		  0);
	CHECK_INT(ev.kind, ZC_QQ_IGNORE);
	CHECK_INT(parse("{\"post_type\":\"request\",\"request_type\":\"friend\",\"user_id\":2,"
			"\"comment\":\"hi\",\"flag\":\"f\"}",
			BOT, &ev, err, sizeof(err)),
		  0);
	CHECK_INT(ev.kind, ZC_QQ_IGNORE);
}

static void self_messages(void)
{
	struct zc_qq_event ev;
	char err[200];
	/* NapCat's echo of what the bot sent */
	CHECK_INT(parse("{\"self_id\":3000000001,\"user_id\":3000000001,\"time\":1767225605,"
			"\"message_id\":1999,\"message_type\":\"group\",\"sender\":{\"user_id\":3000000001,"
			"\"nickname\":\"小钟\",\"card\":\"\"},\"message\":[{\"type\":\"text\",\"data\":"
			"{\"text\":\"好的\"}}],\"message_format\":\"array\",\"post_type\":\"message_sent\","
			"\"message_sent_type\":\"self\",\"group_id\":987654321,\"target_id\":987654321}",
			BOT, &ev, err, sizeof(err)),
		  0);
	CHECK_INT(ev.kind, ZC_QQ_SELF);
	CHECK_STR(ev.conversation, "group:987654321");
	CHECK_STR(ev.message_id, "1999");
	CHECK(ev.message == NULL);
	zc_qq_event_release(&ev);
	/* even before the bot's id is known */
	CHECK_INT(parse("{\"user_id\":3000000001,\"message_id\":2000,\"message_type\":\"private\","
			"\"message\":[],\"post_type\":\"message_sent\",\"target_id\":555}",
			"", &ev, err, sizeof(err)),
		  0);
	CHECK_INT(ev.kind, ZC_QQ_SELF);
	CHECK_STR(ev.conversation, "private:555");
	zc_qq_event_release(&ev);
	/* a "message" whose sender is the bot (another client of the account) */
	const char *own = "{\"user_id\":3000000001,\"message_id\":2001,\"message_type\":\"group\","
			  "\"group_id\":4,\"message\":[],\"post_type\":\"message\"}";
	CHECK_INT(parse(own, BOT, &ev, err, sizeof(err)), 0);
	CHECK_INT(ev.kind, ZC_QQ_SELF);
	zc_qq_event_release(&ev);
	CHECK_INT(parse(own, "", &ev, err, sizeof(err)), 0);
	CHECK_INT(ev.kind, ZC_QQ_MESSAGE);
	zc_qq_event_release(&ev);
}

static void metas(void)
{
	struct zc_qq_event ev;
	char err[200];
	CHECK_INT(parse("{\"time\":1767225600,\"self_id\":3000000001,\"post_type\":\"meta_event\","
			"\"meta_event_type\":\"lifecycle\",\"sub_type\":\"connect\"}",
			BOT, &ev, err, sizeof(err)),
		  0);
	CHECK_INT(ev.kind, ZC_QQ_META);
	CHECK_STR(ev.meta, "lifecycle");
	CHECK_STR(ev.meta_sub, "connect");
	CHECK_INT(ev.heartbeat_ms, 0);
	CHECK_STR(ev.conversation, "");
	CHECK(ev.message == NULL);
	CHECK_INT(parse("{\"time\":1767225630,\"self_id\":3000000001,\"post_type\":\"meta_event\","
			"\"meta_event_type\":\"heartbeat\",\"status\":{\"online\":true,\"good\":true},"
			"\"interval\":30000}",
			BOT, &ev, err, sizeof(err)),
		  0);
	CHECK_INT(ev.kind, ZC_QQ_META);
	CHECK_STR(ev.meta, "heartbeat");
	CHECK_INT(ev.heartbeat_ms, 30000);
	CHECK_INT(parse("{\"post_type\":\"meta_event\",\"meta_event_type\":\"heartbeat\","
			"\"interval\":\"30s\"}",
			BOT, &ev, err, sizeof(err)),
		  -1);
	CHECK_HAS(err, "interval");
}

/* Each malformed event: -1, a message naming the field, nothing kept. */
static void malformed(void)
{
	static const struct {
		const char *frame, *says;
	} cases[] = {
		{"[1,2]", "the event must be a JSON object"},
		{"{\"time\":1}", "post_type"},
		{"{\"post_type\":\"message\",\"message_type\":\"group\",\"message_id\":1,\"group_id\":2,"
		 "\"message\":[]}",
		 "user_id is missing"},
		{"{\"post_type\":\"message\",\"message_type\":\"group\",\"user_id\":1,\"group_id\":2,"
		 "\"message\":[]}",
		 "message_id is missing"},
		{"{\"post_type\":\"message\",\"message_type\":\"group\",\"message_id\":1,\"user_id\":1,"
		 "\"message\":[]}",
		 "group_id is missing"},
		{"{\"post_type\":\"message\",\"message_type\":\"group\",\"message_id\":1,\"user_id\":\"12a\","
		 "\"group_id\":2,\"message\":[]}",
		 "user_id must be a number or a string of 1 to 19 digits (at most 9223372036854775807), not '12a'"},
		{"{\"post_type\":\"message\",\"message_type\":\"group\",\"message_id\":1,\"user_id\":"
		 "\"12345678901234567890123\",\"group_id\":2,\"message\":[]}",
		 "user_id must be a number or a string of 1 to 19 digits"},
		/* issue 15: 19 digits past 2^63 - 1 are no id (sent back as a number, the group
		 * would be another one) */
		{"{\"post_type\":\"message\",\"message_type\":\"group\",\"message_id\":1,\"user_id\":1,"
		 "\"group_id\":\"9999999999999999999\",\"message\":[]}",
		 "group_id must be a number or a string of 1 to 19 digits (at most 9223372036854775807)"},
		{"{\"post_type\":\"message\",\"message_type\":\"group\",\"message_id\":1,\"user_id\":"
		 "\"9223372036854775808\",\"group_id\":2,\"message\":[]}",
		 "user_id must be a number or a string of 1 to 19 digits"},
		{"{\"post_type\":\"message\",\"message_type\":\"group\",\"message_id\":1,\"user_id\":1.5,"
		 "\"group_id\":2,\"message\":[]}",
		 "user_id must be a whole number"},
		{"{\"post_type\":\"message\",\"message_type\":\"group\",\"message_id\":1,\"user_id\":-4,"
		 "\"group_id\":2,\"message\":[]}",
		 "user_id must be a positive number"},
		{"{\"post_type\":\"message\",\"message_type\":\"group\",\"message_id\":1,\"user_id\":1,"
		 "\"group_id\":[2],\"message\":[]}",
		 "group_id must be a number or a string of digits"},
		{"{\"post_type\":\"message\",\"message_type\":\"group\",\"message_id\":1,\"user_id\":1,"
		 "\"group_id\":2,\"message\":[{\"type\":\"text\",\"data\":{\"text\":\"a\"}},"
		 "{\"type\":\"text\",\"data\":\"b\"}]}",
		 "message[1].data must be an object"},
		{"{\"post_type\":\"message\",\"message_type\":\"group\",\"message_id\":1,\"user_id\":1,"
		 "\"group_id\":2,\"message\":[{\"type\":\"at\",\"data\":{\"qq\":\"everyone\"}}]}",
		 "message[0].data.qq must be a number or \"all\""},
		{"{\"post_type\":\"message\",\"message_type\":\"group\",\"message_id\":1,\"user_id\":1,"
		 "\"group_id\":2,\"message\":[{\"type\":\"text\",\"data\":{\"text\":5}}]}",
		 "message[0].data.text must be a string"},
		{"{\"post_type\":\"message\",\"message_type\":\"group\",\"message_id\":1,\"user_id\":1,"
		 "\"group_id\":2,\"message\":[{\"data\":{}}]}",
		 "message[0].type must be a string"},
		{"{\"post_type\":\"message\",\"message_type\":\"group\",\"message_id\":1,\"user_id\":1,"
		 "\"group_id\":2,\"message\":[\"hi\"]}",
		 "message[0] must be an object"},
		{"{\"post_type\":\"message\",\"message_type\":\"group\",\"message_id\":1,\"user_id\":1,"
		 "\"group_id\":2,\"message\":[{\"type\":\"reply\",\"data\":{\"id\":\"abc\"}}]}",
		 "message[0].data.id must be the id of the message replied to"},
		{"{\"post_type\":\"message\",\"message_type\":\"group\",\"message_id\":1,\"user_id\":1,"
		 "\"group_id\":2,\"message\":{}}",
		 "message must be an array of segments"},
		{"{\"post_type\":\"message\",\"message_type\":\"group\",\"message_id\":1,\"user_id\":1,"
		 "\"group_id\":2,\"sender\":{\"card\":7},\"message\":[]}",
		 "sender.card must be a string"},
		{"{\"post_type\":\"message\",\"message_type\":\"group\",\"message_id\":1,\"user_id\":1,"
		 "\"group_id\":2,\"time\":\"now\",\"message\":[]}",
		 "time must be a number of seconds"},
		{"{\"post_type\":\"notice\",\"notice_type\":\"group_recall\",\"group_id\":2}",
		 "message_id is missing"},
		{"{\"post_type\":\"notice\",\"notice_type\":\"notify\",\"sub_type\":\"poke\",\"user_id\":1}",
		 "target_id is missing"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct zc_qq_event ev;
		char err[200];
		memset(err, 'x', sizeof(err));
		int rc = parse(cases[i].frame, BOT, &ev, err, sizeof(err));
		if (rc != -1 || !strstr(err, cases[i].says))
			fprintf(stderr, "case %zu: rc %d, '%s'\n", i, rc, err);
		CHECK_INT(rc, -1);
		CHECK_HAS(err, cases[i].says);
		CHECK(ev.message == NULL && ev.images == NULL && ev.group_name == NULL);
		CHECK_INT(ev.kind, ZC_QQ_IGNORE);
		zc_qq_event_release(&ev);
	}
	/* a tiny err buffer is still terminated and valid UTF-8 */
	struct zc_qq_event ev;
	char small[12];
	CHECK_INT(parse("{\"post_type\":\"message\",\"message_type\":\"group\",\"message_id\":1,"
			"\"user_id\":\"一二三四五\",\"group_id\":2,\"message\":[]}",
			BOT, &ev, small, sizeof(small)),
		  -1);
	CHECK(strlen(small) < sizeof(small) && zc_utf8_valid(small, strlen(small)));
}

/* ---- replies -------------------------------------------------------------- */

struct stickers {
	int calls;
};

static int read_sticker(void *ud, const char *file, char **data, size_t *len)
{
	struct stickers *s = ud;
	s->calls++;
	if (strcmp(file, "委屈猫.gif") != 0)
		return -1;
	*data = malloc(10);
	memcpy(*data, "GIF89a\x01\x00\xff\x00", 10);
	*len = 10;
	return 0;
}

static char *reply_json(const char *reply, const struct zc_qq_reply_opts *o, json_t **problems)
{
	json_t *out = NULL;
	char err[200];
	int rc = zc_qq_reply_segments(reply, o, &out, problems, err, sizeof(err));
	CHECK_INT(rc, 0);
	char *s = out ? json_dumps(out, JSON_COMPACT) : NULL;
	json_decref(out);
	return s;
}

static void reply_sticker_and_at(void)
{
	struct stickers st = {0};
	struct zc_qq_reply_opts o = {"1850360718", 1500, 0, NULL, read_sticker, &st};
	json_t *pr = NULL;
	char *s = reply_json("好的[[@123456]] 给你看[[图片:  stickers/委屈猫.gif ]]哈[[@abc]][[@]]", &o, &pr);
	char b64[32];
	base64_encode_raw(b64, 10, (const uint8_t *)"GIF89a\x01\x00\xff\x00");
	b64[BASE64_ENCODE_RAW_LENGTH(10)] = '\0';
	char want[512];
	snprintf(want, sizeof(want),
		 "[[{\"type\":\"reply\",\"data\":{\"id\":\"1850360718\"}},{\"type\":\"text\",\"data\":"
		 "{\"text\":\"好的\"}},{\"type\":\"at\",\"data\":{\"qq\":\"123456\"}},{\"type\":\"text\","
		 "\"data\":{\"text\":\" 给你看\"}},{\"type\":\"image\",\"data\":{\"file\":\"base64://%s\"}},"
		 "{\"type\":\"text\",\"data\":{\"text\":\"哈[[@abc]][[@]]\"}}]]",
		 b64);
	CHECK_STR(s, want);
	CHECK_INT(json_array_size(pr), 0);
	CHECK_INT(st.calls, 1);
	free(s);
	json_decref(pr);

	/* a sticker the callback cannot read, and a path outside stickers/ */
	s = reply_json("看[[图片: stickers/没有.gif]][[图片: media/abc.png]][[图片: stickers/../x.gif]]", &o,
		       &pr);
	CHECK_STR(s, "[[{\"type\":\"reply\",\"data\":{\"id\":\"1850360718\"}},{\"type\":\"text\","
		     "\"data\":{\"text\":\"看\"}}]]");
	CHECK_INT(json_array_size(pr), 3); /* in the reply's order */
	CHECK_HAS(json_string_value(json_array_get(pr, 0)), "stickers/没有.gif");
	CHECK_HAS(json_string_value(json_array_get(pr, 0)), "cannot be read");
	CHECK_HAS(json_string_value(json_array_get(pr, 1)), "media/abc.png");
	CHECK_HAS(json_string_value(json_array_get(pr, 2)), "stickers/../x.gif");
	free(s);
	json_decref(pr);

	/* nothing to send: no message, not even the quote */
	s = reply_json("[[图片: stickers/没有.gif]]\n", &o, &pr);
	CHECK_STR(s, "[]");
	free(s);
	json_decref(pr);
	/* an unclosed marker stays text; no quote in a private chat */
	o.quote_id = NULL;
	s = reply_json("[[图片: stickers/委屈猫.gif", &o, NULL);
	CHECK_STR(s, "[[{\"type\":\"text\",\"data\":{\"text\":\"[[图片: stickers/委屈猫.gif\"}}]]");
	free(s);
}

static void reply_local_files(void)
{
	const char *dir = t_tmpdir();
	char path[4096];
	snprintf(path, sizeof(path), "%s/敲 盆#1.gif", dir);
	FILE *f = fopen(path, "wb");
	CHECK(f != NULL);
	if (f) {
		fputs("GIF89a", f);
		fclose(f);
	}
	struct zc_qq_reply_opts o = {NULL, 100, 1, dir, NULL, NULL};
	json_t *pr = NULL;
	char *s = reply_json("[[图片: stickers/敲 盆#1.gif]][[图片: stickers/无.gif]]", &o, &pr);
	CHECK_HAS(s, "\"file\":\"file://");
	CHECK_HAS(s, "/%E6%95%B2%20%E7%9B%86%231.gif\"");
	CHECK_INT(json_array_size(pr), 1);
	CHECK_HAS(json_string_value(json_array_get(pr, 0)), "stickers/无.gif");
	free(s);
	json_decref(pr);
}

/* Every message of out: its text's characters, and that no text is
 * empty and no two texts are neighbours. */
static void check_split(json_t *out, size_t max, size_t *n_msgs, struct zc_buf *all)
{
	size_t i, j;
	json_t *msg, *sg;
	*n_msgs = json_array_size(out);
	json_array_foreach(out, i, msg) {
		size_t chars = 0;
		const char *prev = "";
		json_array_foreach(msg, j, sg) {
			const char *type = json_string_value(json_object_get(sg, "type"));
			if (strcmp(type, "text") == 0) {
				const char *t = json_string_value(json_object_get(json_object_get(sg, "data"), "text"));
				CHECK(*t);
				CHECK(strcmp(prev, "text") != 0);
				chars += zc_utf8_len(t);
				zc_buf_adds(all, t);
			}
			if (strcmp(type, "reply") == 0)
				CHECK(i == 0 && j == 0);
			prev = type;
		}
		CHECK(chars <= max);
	}
}

static void reply_split(void)
{
	struct zc_qq_reply_opts o = {"42", 20, 0, NULL, read_sticker, &(struct stickers){0}};
	json_t *out = NULL;
	char err[200];
	size_t n;
	/* sentences: cut after 。 / ！, never inside a character */
	const char *r = "今天天气很好，我们去爬山吧。山顶的风景特别漂亮！记得带水和吃的，还有外套。";
	CHECK_INT(zc_qq_reply_segments(r, &o, &out, NULL, err, sizeof(err)), 0);
	struct zc_buf all = ZC_BUF_INIT;
	check_split(out, 20, &n, &all);
	CHECK_INT(n, 3);
	CHECK_STR(all.p, r);
	CHECK_STR(json_string_value(json_object_get(
			  json_object_get(json_array_get(json_array_get(out, 0), 1), "data"), "text")),
		  "今天天气很好，我们去爬山吧。");
	json_decref(out);
	zc_buf_reset(&all);

	/* line ends first; the line end itself is not sent at a message's end */
	r = "第一行第一行\n第二行第二行第二行第二行\n第三行";
	CHECK_INT(zc_qq_reply_segments(r, &o, &out, NULL, err, sizeof(err)), 0);
	check_split(out, 20, &n, &all);
	CHECK_INT(n, 2);
	CHECK_STR(all.p, "第一行第一行\n第二行第二行第二行第二行第三行");
	json_decref(out);
	zc_buf_reset(&all);

	/* issue 15 audit: a runaway reply (100 KB) becomes at most
	 * ZC_QQ_REPLY_MESSAGES_MAX messages, the last ending with "…", and a
	 * problem says so — never 85 messages into a group */
	struct zc_buf huge = ZC_BUF_INIT;
	for (int i = 0; i < 2000; i++)
		zc_buf_adds(&huge, "这是一句话。");
	json_t *probs = NULL;
	CHECK_INT(zc_qq_reply_segments(huge.p, &o, &out, &probs, err, sizeof(err)), 0);
	CHECK_INT(json_array_size(out), ZC_QQ_REPLY_MESSAGES_MAX);
	json_t *last = json_array_get(out, ZC_QQ_REPLY_MESSAGES_MAX - 1);
	CHECK_STR(json_string_value(json_object_get(
			  json_object_get(json_array_get(last, json_array_size(last) - 1), "data"), "text")),
		  "…");
	CHECK_INT(json_array_size(probs), 1);
	CHECK_HAS(json_string_value(json_array_get(probs, 0)), "the rest was left out");
	json_decref(out);
	json_decref(probs);
	zc_buf_release(&huge);

	/* no line or sentence end: cut at 20 characters */
	struct zc_buf longr = ZC_BUF_INIT;
	for (int i = 0; i < 45; i++)
		zc_buf_adds(&longr, "字");
	CHECK_INT(zc_qq_reply_segments(longr.p, &o, &out, NULL, err, sizeof(err)), 0);
	check_split(out, 20, &n, &all);
	CHECK_INT(n, 3);
	CHECK_STR(all.p, longr.p);
	json_decref(out);
	zc_buf_reset(&all);

	/* a full stop inside a version number is no sentence end: cut at 20 */
	r = "版本号是v1.2.3的那个包已经发布了很久很久很久了真的是";
	CHECK_INT(zc_qq_reply_segments(r, &o, &out, NULL, err, sizeof(err)), 0);
	check_split(out, 20, &n, &all);
	CHECK_INT(n, 2);
	CHECK_STR(json_string_value(json_object_get(
			  json_object_get(json_array_get(json_array_get(out, 0), 1), "data"), "text")),
		  "版本号是v1.2.3的那个包已经发布了很");
	json_decref(out);
	zc_buf_reset(&all);

	/* an image is never split and stays between its texts; 3.14 is no sentence end */
	r = "圆周率是3.14左右的数，[[图片: stickers/委屈猫.gif]]这张图是我最喜欢的一张表情包了真的";
	CHECK_INT(zc_qq_reply_segments(r, &o, &out, NULL, err, sizeof(err)), 0);
	check_split(out, 20, &n, &all);
	CHECK_STR(all.p, "圆周率是3.14左右的数，这张图是我最喜欢的一张表情包了真的");
	char *s = json_dumps(out, JSON_COMPACT);
	CHECK_HAS(s, "\"text\":\"圆周率是3.14左右的数，\"}},{\"type\":\"image\"");
	free(s);
	json_decref(out);
	zc_buf_release(&all);
	zc_buf_release(&longr);

	/* bad input */
	CHECK_INT(zc_qq_reply_segments("\xff\xfe", &o, &out, NULL, err, sizeof(err)), -1);
	CHECK_HAS(err, "UTF-8");
	CHECK(out == NULL);
}

/* ---- the image download ------------------------------------------------------ */

struct route {
	const char *path;
	const char *head; /* the status line and headers, without the blank line */
	const char *body;
	size_t body_len;
	int hang; /* read the request, answer nothing */
};

struct srv {
	int fd, port;
	volatile int stop;
	pthread_t th;
	const struct route *routes;
	size_t n;
};

static void serve_one(struct srv *s, int c)
{
	char req[4096];
	size_t got = 0;
	while (got < sizeof(req) - 1) {
		struct pollfd p = {c, POLLIN, 0};
		if (poll(&p, 1, 2000) <= 0)
			return;
		ssize_t k = recv(c, req + got, sizeof(req) - 1 - got, 0);
		if (k <= 0)
			return;
		got += (size_t)k;
		req[got] = '\0';
		if (strstr(req, "\r\n\r\n"))
			break;
	}
	char path[256] = "";
	sscanf(req, "%*s %255s", path);
	const struct route *r = NULL;
	for (size_t i = 0; i < s->n && !r; i++)
		if (strcmp(s->routes[i].path, path) == 0)
			r = &s->routes[i];
	if (r && r->hang) {
		while (!s->stop) { /* until the client gives up */
			struct pollfd p = {c, POLLIN, 0};
			char x[64];
			if (poll(&p, 1, 50) > 0 && recv(c, x, sizeof(x), 0) <= 0)
				break;
		}
		return;
	}
	const char *nf = "HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\nConnection: close";
	struct zc_buf b = ZC_BUF_INIT;
	zc_buf_adds(&b, r ? r->head : nf);
	zc_buf_adds(&b, "\r\n\r\n");
	if (r)
		zc_buf_add(&b, r->body, r->body_len);
	else
		zc_buf_adds(&b, "not found");
	for (size_t off = 0; off < b.len;) {
		ssize_t k = send(c, b.p + off, b.len - off, MSG_NOSIGNAL);
		if (k <= 0)
			break;
		off += (size_t)k;
	}
	zc_buf_release(&b);
	shutdown(c, SHUT_WR);
}

static void *serve(void *ud)
{
	struct srv *s = ud;
	while (!s->stop) {
		struct pollfd p = {s->fd, POLLIN, 0};
		if (poll(&p, 1, 50) <= 0)
			continue;
		int c = accept(s->fd, NULL, NULL);
		if (c < 0)
			continue;
		serve_one(s, c);
		close(c);
	}
	return NULL;
}

static void srv_start(struct srv *s, const struct route *routes, size_t n)
{
	memset(s, 0, sizeof(*s));
	s->routes = routes;
	s->n = n;
	s->fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {0};
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t al = sizeof(a);
	CHECK(bind(s->fd, (struct sockaddr *)&a, sizeof(a)) == 0);
	CHECK(listen(s->fd, 8) == 0);
	getsockname(s->fd, (struct sockaddr *)&a, &al);
	s->port = ntohs(a.sin_port);
	pthread_create(&s->th, NULL, serve, s);
}

static void srv_stop(struct srv *s)
{
	s->stop = 1;
	pthread_join(s->th, NULL);
	close(s->fd);
}

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Fetches path from the server; the return code, with what came in err. */
static int fetch(const struct srv *s, const char *path, long max, int timeout_ms, unsigned char **d,
		 size_t *n, char *err, size_t cap)
{
	char url[256];
	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", s->port, path);
	return zc_qq_fetch_image(url, max, timeout_ms, d, n, err, cap);
}

static void fetch_image(void)
{
	static char png[3000], big[5000];
	memcpy(png, "\x89PNG\r\n\x1a\n", 8);
	for (size_t i = 8; i < sizeof(png); i++)
		png[i] = (char)(i * 7);
	memcpy(big, png, sizeof(png));
	const struct route routes[] = {
		{"/ok.png", "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: 3000\r\n"
			    "Connection: close", png, sizeof(png), 0},
		/* announced too big */
		{"/announced", "HTTP/1.1 200 OK\r\nContent-Length: 5000\r\nConnection: close", big,
		 sizeof(big), 0},
		/* streamed too big: no length, until the close */
		{"/streamed", "HTTP/1.1 200 OK\r\nConnection: close", big, sizeof(big), 0},
		{"/text", "HTTP/1.1 200 OK\r\nContent-Length: 11\r\nConnection: close", "hello world", 11, 0},
		{"/to-file", "HTTP/1.1 302 Found\r\nLocation: file:///etc/passwd\r\nContent-Length: 0\r\n"
			     "Connection: close", "", 0, 0},
		{"/to-ok", "HTTP/1.1 301 Moved\r\nLocation: /ok.png\r\nContent-Length: 0\r\n"
			   "Connection: close", "", 0, 0},
		{"/loop", "HTTP/1.1 302 Found\r\nLocation: /loop\r\nContent-Length: 0\r\n"
			  "Connection: close", "", 0, 0},
		{"/hang", "", "", 0, 1},
	};
	struct srv s;
	srv_start(&s, routes, sizeof(routes) / sizeof(routes[0]));
	unsigned char *d = NULL;
	size_t n = 0;
	char err[300];

	CHECK_INT(fetch(&s, "/ok.png", 4000, 5000, &d, &n, err, sizeof(err)), 0);
	CHECK(d && n == sizeof(png) && memcmp(d, png, n) == 0);
	free(d);
	CHECK_INT(fetch(&s, "/to-ok", 4000, 5000, &d, &n, err, sizeof(err)), 0);
	CHECK(d && n == sizeof(png));
	free(d);

	CHECK_INT(fetch(&s, "/announced", 4000, 5000, &d, &n, err, sizeof(err)), -1);
	CHECK_HAS(err, "larger than 4000 bytes");
	CHECK(d == NULL && n == 0);
	CHECK_INT(fetch(&s, "/streamed", 4000, 5000, &d, &n, err, sizeof(err)), -1);
	CHECK_HAS(err, "larger than 4000 bytes");
	CHECK(d == NULL);
	CHECK_INT(fetch(&s, "/missing", 4000, 5000, &d, &n, err, sizeof(err)), -1);
	CHECK_HAS(err, "HTTP 404");
	CHECK_INT(fetch(&s, "/text", 4000, 5000, &d, &n, err, sizeof(err)), -1);
	CHECK_HAS(err, "not a PNG, JPEG, GIF or WebP");
	CHECK_INT(fetch(&s, "/to-file", 4000, 5000, &d, &n, err, sizeof(err)), -1);
	CHECK_HAS(err, "other than http(s)");
	CHECK(d == NULL);
	CHECK_INT(fetch(&s, "/loop", 4000, 5000, &d, &n, err, sizeof(err)), -1);
	CHECK_HAS(err, "could not be downloaded");

	double t0 = now_ms();
	CHECK_INT(fetch(&s, "/hang", 4000, 300, &d, &n, err, sizeof(err)), -1);
	double took = now_ms() - t0;
	CHECK_HAS(err, "within 300 ms");
	CHECK(took >= 250 && took < 3000);

	CHECK_INT(zc_qq_fetch_image("file:///etc/passwd", 4000, 300, &d, &n, err, sizeof(err)), -1);
	CHECK_HAS(err, "not http(s)");
	CHECK_INT(zc_qq_fetch_image("ftp://127.0.0.1/x.png", 4000, 300, &d, &n, err, sizeof(err)), -1);
	CHECK_HAS(err, "not http(s)");
	srv_stop(&s);
}

/* An @ of the bot is not in the text (mentions keeps it); an @ of someone
 * else is, by name when the segment has one. */
static void at_bot_left_out_others_kept(void)
{
	struct zc_qq_event ev;
	char err[200];
	const char *frame =
		"{\"self_id\":3000000001,\"user_id\":123456789,\"time\":1767225600,"
		"\"message_id\":77,\"message_type\":\"group\",\"sender\":{\"user_id\":123456789,"
		"\"nickname\":\"阿明\",\"card\":\"\"},\"sub_type\":\"normal\",\"message\":["
		"{\"type\":\"at\",\"data\":{\"qq\":\"3000000001\"}},{\"type\":\"text\",\"data\":"
		"{\"text\":\" 问问\"}},{\"type\":\"at\",\"data\":{\"qq\":\"222\",\"name\":\"张三\"}},"
		"{\"type\":\"text\",\"data\":{\"text\":\" 和 \"}},{\"type\":\"at\",\"data\":"
		"{\"qq\":\"333\"}}],\"message_format\":\"array\",\"post_type\":\"message\","
		"\"group_id\":987654321}";
	CHECK_INT(parse(frame, BOT, &ev, err, sizeof(err)), 0);
	CHECK_STR(mstr(&ev, "text"), "问问@张三 和 @333");
	CHECK(ev.at_bot);
	json_t *m = json_object_get(ev.message, "mentions");
	CHECK_INT((int)json_array_size(m), 3);
	CHECK_STR(json_string_value(json_array_get(m, 0)), "3000000001");
	zc_qq_event_release(&ev);
}

const struct t_case t_cases[] = {
	{"at_bot_left_out_others_kept", at_bot_left_out_others_kept},
	{"group_at_image_text", group_at_image_text},
	{"reply_segment", reply_segment},
	{"faces", faces},
	{"private_friend", private_friend},
	{"temporary_chat", temporary_chat},
	{"file_forward_other", file_forward_other},
	{"names_wake", names_wake},
	{"caps", caps},
	{"cq_string", cq_string},
	{"pokes", pokes},
	{"recalls", recalls},
	{"self_messages", self_messages},
	{"metas", metas},
	{"malformed", malformed},
	{"reply_sticker_and_at", reply_sticker_and_at},
	{"reply_local_files", reply_local_files},
	{"reply_split", reply_split},
	{"fetch_image", fetch_image},
	{NULL, NULL},
};
