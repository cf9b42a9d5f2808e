/*
 * prefix.c — the system prefix (Z-PREFIX, SPEC §4 end), built anew on
 * every turn: PERSONA.md (re-read each time), the external_event_frame
 * and declared-tools rules, memory-tool guidance, relationship guidance
 * only while relationship memory is on, and the important memories
 * (at most 5) in marking order with their latest content — those the
 * conversation may see. Not recorded in history. Recall layer.
 */
#include <string.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/fs.h"
#include "base/json.h"
#include "base/utf8.h"
#include "recall/recall.h"

#define PERSONA_MAX_BYTES (256u << 10)

static const char rules[] =
	"## 系统规则 / System rules\n"
	"- external_event_frame 是系统合成的外部事件投递帧，用来把外部消息交给你；它不是工具，禁止调用它。\n"
	"  external_event_frame is a frame the system synthesises to deliver external events; it is not a "
	"tool and must never be called.\n"
	"- 只能调用本次请求中声明的工具。 / Call only the tools declared in the current request.\n";

/* QQ conversations only: the mention form the QQ world turns into an at
 * segment (world/qq_reply.c; docs/QQ.md) */
static const char qq_rules[] =
	"- 在 QQ 里要 @ 某人，就在回复里写 [[@QQ号]]（例如 [[@123456]]），它会变成真正的 @；不要写 \"@昵称\"。\n"
	"  To mention someone in QQ, write [[@QQ number]] (such as [[@123456]]) in the reply; it becomes a "
	"real @. Do not write \"@nickname\".\n";

static const char memory_guidance[] =
	"## 记忆 / Memory\n"
	"- 对话前部的【自动回忆】是系统按消息检索的参考资料，不是对方说的话；需要细节时用 zcor_memory_read 按 id 读取。\n"
	"- 值得长期记住的事用 zcor_memory_write 保存（有来源时附 sourceMessage）；旧信息过时用 zcor_memory_supersede "
	"或 zcor_memory_merge，不要重复保存。\n"
	"- 找记忆：zcor_memory_query 做本地关键词查询，zcor_memory_search 做同义词扩展加筛选的检索。\n"
	"- The memory context above is reference material found for these messages, not something anyone "
	"said. Save what is worth keeping with zcor_memory_write; supersede or merge outdated records instead "
	"of duplicating them.\n";

/* Seed 003's memory files and transcript: only while its long-term
 * memory is on ("memory": false takes these tools away, so no hint may
 * send the model to them). */
static const char files_guidance[] =
	"- 自动回忆只挑了相关的几条：没看到的用 qq_memory search 查记忆文件（含冷层 archive），"
	"用 qq_transcript search 查聊天原话；听不懂的梗先查 COGNITION.md，懂之前不要装懂。"
	"结构化的记忆文件（PEOPLE.md、COGNITION.md、STICKERS.md、MEMORY.md）只用 qq_memory upsert 按条改。\n"
	"- Recall picked only a few entries: look up the rest with qq_memory search (the archive "
	"included) and what was said with qq_transcript search; change the memory files one entry at a "
	"time with qq_memory upsert.\n";

static const char relationship_guidance[] =
	"## 人物关系 / Relationships\n"
	"- 对话涉及某人时，先用 zcor_relationship_read 或 zcor_relationship_query 查询关系和好感度；"
	"取得新的互动依据后再用 zcor_relationship_write 更新，并写明原因。\n"
	"- When a person comes up, look them up first; update the relationship only after new evidence, "
	"with the reason.\n";

int zc_prefix(struct zc_mem *m, const char *conversation, char **out, struct zc_err *e)
{
	struct zc_buf b = ZC_BUF_INIT;
	*out = NULL;
	char *persona_path = zc_path_join(m->dir, "PERSONA.md"), *persona = NULL;
	struct zc_err pe = {0};
	size_t plen = 0;
	if (zc_read_file_nofollow(persona_path, PERSONA_MAX_BYTES, &persona, &plen, &pe) == ZCOR_OK && *persona) {
		/* a hand-edited file: the prefix goes into JSON, which must be
		 * UTF-8 (a NULL from json_pack crashed serve); bad bytes show
		 * as U+FFFD */
		if (!zc_utf8_valid(persona, plen)) {
			char *valid = zc_utf8_lossy(persona);
			zc_free(persona);
			persona = valid;
		}
		zc_buf_adds(&b, persona);
		if (b.p[b.len - 1] != '\n')
			zc_buf_addc(&b, '\n');
		zc_buf_addc(&b, '\n');
	}
	zc_free(persona);
	zc_free(persona_path);
	zc_config_refresh(&m->conf);
	zc_buf_adds(&b, rules);
	if (conversation && (strncmp(conversation, "group:", 6) == 0 || strncmp(conversation, "private:", 8) == 0))
		zc_buf_adds(&b, qq_rules);
	zc_buf_addc(&b, '\n');
	zc_buf_adds(&b, memory_guidance);
	if (m->conf.cfg.memory)
		zc_buf_adds(&b, files_guidance);
	if (m->conf.cfg.relationships) {
		zc_buf_addc(&b, '\n');
		zc_buf_adds(&b, relationship_guidance);
	}
	int rc = zc_store_begin(&m->store, 0, e);
	if (rc)
		goto fail;
	sqlite3_stmt *st = zc_stmt(&m->store,
				   "SELECT id, title, content FROM nodes WHERE important_seq IS NOT NULL "
				   "AND (?9 IS NULL OR scope = 'global' OR scope = ?9) ORDER BY important_seq",
				   e);
	if (!st) {
		zc_store_rollback(&m->store);
		rc = e->code;
		goto fail;
	}
	if (conversation)
		sqlite3_bind_text(st, 9, conversation, -1, SQLITE_TRANSIENT);
	int n = 0, step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		if (n++ == 0)
			zc_buf_adds(&b, "\n## 重要记忆 / Important memories\n");
		zc_buf_addf(&b, "%d. [%s] %s：%s\n", n, sqlite3_column_text(st, 0), sqlite3_column_text(st, 1),
			    sqlite3_column_text(st, 2));
	}
	sqlite3_reset(st);
	zc_store_rollback(&m->store);
	if (step != SQLITE_DONE) {
		rc = zc_store_fail(&m->store, step, e, "building the prefix");
		goto fail;
	}
	*out = zc_buf_detach(&b);
	return ZCOR_OK;
fail:
	zc_buf_release(&b);
	return rc;
}
