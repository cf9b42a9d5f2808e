/*
 * registry.c — the table of tools (tools.h). Names and arguments are
 * exactly seed 000's and seed 003's. Descriptions are what the model
 * reads: Chinese first, English beside it. Tools layer: a row per tool
 * (family, audience, schema, when it is offered, its handler: an
 * operation or a plain function), the one answer to which rows a caller
 * sees, and the dispatch by handler kind; it never holds a rule of the
 * seeds (memory/ does) and never runs anything a row does not name.
 */
#include "tools/tools.h"

#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/json.h"
#include "memory/transcript.h"
#include "text/schema.h"
#include "tools/wiki.h"
#include "tools/skills.h"

#define OBJ(props, req) \
	"{\"type\":\"object\",\"properties\":{" props "},\"required\":[" req "],\"additionalProperties\":false}"
#define ID_PROP(name, what) "\"" name "\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":64,\"description\":\"" what "\"}"
#define KEYWORDS_PROP(what) \
	"\"keywords\":{\"type\":\"array\",\"items\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":200},\"maxItems\":50,\"description\":\"" what "\"}"
#define TIME_PROP(name, what) "\"" name "\":{\"type\":\"string\",\"maxLength\":64,\"description\":\"" what "\"}"
#define PAGE_PROPS \
	"\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":100,\"description\":\"每页条数，默认 20，最多 100 / page size, default 20, max 100\"}," \
	"\"offset\":{\"type\":\"integer\",\"minimum\":0,\"description\":\"跳过的条数，默认 0 / items to skip, default 0\"}"
#define TITLE_PROP "\"title\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":500,\"description\":\"标题 / title\"}"
#define CONTENT_PROP "\"content\":{\"type\":\"string\",\"maxLength\":100000,\"description\":\"正文 / content\"}"
#define REASON_PROP "\"reason\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":2000,\"description\":\"原因 / why\"}"
#define IDS_PROP(min) "\"ids\":{\"type\":\"array\",\"items\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":64},\"minItems\":" min ",\"maxItems\":50,\"uniqueItems\":true,\"description\":\"记忆 id 列表 / memory ids\"}"

/* The audiences of the rows. The digest agent's tools are seed 003's
 * (its session has qq_memory, qq_transcript and the skill). */
#define FOR_MODEL_HOST (ZC_AUD_MODEL | ZC_AUD_HOST)
#define FOR_DIGEST_TOO (ZC_AUD_MODEL | ZC_AUD_DIGEST | ZC_AUD_HOST)
/* The handler kinds: the three last members of a row (the handler, and
 * the live part of the description, if any). */
#define OP(def) &def, NULL, NULL
#define FN(fn) NULL, fn, NULL
#define FN_DESCRIBED(fn, describe) NULL, fn, describe

const struct zc_tool zc_tools[] = {
	{"zcor_memory_write", "zcor", "写入记忆 / Write a memory",
	 "新增或更新一条记忆节点。不给 id 时新建；给已有 id 时更新（未知 id 报错）。新节点省略 parentId 为根节点；"
	 "更新时省略 parentId 保留原父节点，传 null 移到根。sourceMessage 保存确有来源的原始消息文本（最多 20000 字符），传 null 清除。",
	 "Create a memory node (no id) or update one (an existing id; an unknown id is an error). A new node without parentId is a root; "
	 "an update without parentId keeps its parent, null moves it to the root. sourceMessage keeps the raw message text it came from "
	 "(at most 20,000 characters); null clears it.",
	 OBJ(TITLE_PROP "," CONTENT_PROP "," ID_PROP("id", "要更新的记忆 id；新建时省略 / id to update; omit to create") ","
	     KEYWORDS_PROP("检索词 / search words") ","
	     "\"parentId\":{\"type\":[\"string\",\"null\"],\"maxLength\":64,\"description\":\"父节点 id，null 为根；须是本记忆同一范围的记忆，或全局记忆（私聊中只能是本私聊的） / parent id, null for root; a memory of the same scope, or a global one (in a private chat: only its own)\"},"
	     "\"sourceMessage\":{\"type\":[\"string\",\"null\"],\"maxLength\":20000,\"description\":\"原始消息文本 / raw source message\"}",
	     "\"title\",\"content\""),
	 FOR_MODEL_HOST, ZC_OFFER_ALWAYS, OP(zc_op_memory_write)},
	{"zcor_memory_read", "zcor", "读取记忆 / Read a memory",
	 "按 id 读取一条记忆的当前内容（被替代的记录也能读取）。",
	 "Read the current content of one memory by id (superseded records are readable too).",
	 OBJ(ID_PROP("id", "记忆 id / memory id"), "\"id\""),
	 FOR_MODEL_HOST, ZC_OFFER_ALWAYS, OP(zc_op_memory_read)},
	{"zcor_memory_delete", "zcor", "删除记忆 / Delete a memory",
	 "删除一条记忆；历史保留删除前内容，并同步取消重要标记。有子节点、被人物关系关联或是替代目标时拒绝删除，需先处理这些引用。",
	 "Delete a memory; history keeps its content and its important mark is removed. Refused while it has children, a person "
	 "links to it, or it is a supersede target: deal with those first.",
	 OBJ(ID_PROP("id", "记忆 id / memory id"), "\"id\""),
	 FOR_MODEL_HOST, ZC_OFFER_ALWAYS, OP(zc_op_memory_delete)},
	{"zcor_memory_children", "zcor", "子节点 / Children",
	 "读取根节点（省略 parentId）或指定节点的直属子节点。",
	 "List the root nodes (no parentId) or the direct children of a node.",
	 OBJ(ID_PROP("parentId", "父节点 id；省略则列根节点 / parent id; omit for roots"), ""),
	 FOR_MODEL_HOST, ZC_OFFER_ALWAYS, OP(zc_op_memory_children)},
	{"zcor_memory_trace", "zcor", "路径 / Trace",
	 "读取从根到目标节点的路径，以及目标节点的直属子节点。",
	 "Read the path from the root to a node, and the node's direct children.",
	 OBJ(ID_PROP("id", "记忆 id / memory id"), "\"id\""),
	 FOR_MODEL_HOST, ZC_OFFER_ALWAYS, OP(zc_op_memory_trace)},
	{"zcor_memory_important", "zcor", "重要记忆 / Important",
	 "标记或取消重要记忆。重要记忆最多 5 条，按首次标记顺序排列并进入每次的系统提示；第 6 条会取消最早一条的标记，回执写明被替换的 id 和标题。",
	 "Mark or unmark a memory as important. At most 5, in the order first marked, all in every system prompt; a 6th unmarks "
	 "the earliest, and the receipt names the replaced id and title.",
	 OBJ(ID_PROP("id", "记忆 id / memory id") ",\"important\":{\"type\":\"boolean\",\"description\":\"true 标记，false 取消 / true to mark, false to unmark\"}",
	     "\"id\",\"important\""),
	 FOR_MODEL_HOST, ZC_OFFER_ALWAYS, OP(zc_op_memory_important)},
	{"zcor_memory_query", "zcor", "查询记忆 / Query memories",
	 "本地查询当前记忆，不调用 LLM、不扩展同义词：每个关键词（NFKC 和大小写归一化后）都要出现在标题或正文中；from/to 为带时区的 ISO 时间（含端点），按更新时间筛选。"
	 "结果按更新时间倒序，返回 items、total、nextOffset。",
	 "Local query over current memories, no LLM and no synonyms: every keyword (NFKC + case folded) must be a substring of the "
	 "title or content; from/to are ISO-8601 times with a zone (inclusive) on updatedAt. Newest first; returns items, total, "
	 "nextOffset.",
	 OBJ(KEYWORDS_PROP("全部需要命中的关键词 / keywords that must all match") ","
	     TIME_PROP("from", "起始时间（带时区）/ from, ISO-8601 with zone") ","
	     TIME_PROP("to", "结束时间（带时区）/ to, ISO-8601 with zone") "," PAGE_PROPS ","
	     "\"includeSuperseded\":{\"type\":\"boolean\",\"description\":\"包括被替代的记录 / include superseded records\"}",
	     ""),
	 FOR_MODEL_HOST, ZC_OFFER_ALWAYS, OP(zc_op_memory_query)},
	{"zcor_memory_merge", "zcor", "合并记忆 / Merge memories",
	 "把几条记忆合并成一条新记录：来源记录被标记为被替代并保留，重要标记转移到新记录。",
	 "Merge memories into a new record: the sources are marked superseded by it and kept; important marks move to it.",
	 OBJ(IDS_PROP("2") "," TITLE_PROP "," CONTENT_PROP "," KEYWORDS_PROP("检索词 / search words") "," REASON_PROP,
	     "\"ids\",\"title\",\"content\",\"reason\""),
	 FOR_MODEL_HOST, ZC_OFFER_ALWAYS, OP(zc_op_memory_merge)},
	{"zcor_memory_supersede", "zcor", "替代记忆 / Supersede",
	 "把已有记忆标记为被另一条现有记录替代。被替代的记录保留、可按 id 读取，但不再参与自动回忆、检索和默认查询。",
	 "Mark memories as superseded by an existing record. They stay readable by id but leave auto-recall, search and default "
	 "queries.",
	 OBJ(IDS_PROP("1") "," ID_PROP("replacementId", "替代它们的记忆 id / the replacing memory") "," REASON_PROP,
	     "\"ids\",\"replacementId\",\"reason\""),
	 FOR_MODEL_HOST, ZC_OFFER_ALWAYS, OP(zc_op_memory_supersede)},
	{"zcor_memory_history", "zcor", "操作历史 / History",
	 "本地查询操作历史：关键词匹配整条记录，from/to 按操作时间筛选（带时区 ISO 时间，含端点），按时间倒序；"
	 "可按操作、操作者、对话、状态、目标 id 筛选，changesOnly 只看改动（不含读取）。",
	 "Query the operation history: keywords match the whole record; from/to filter on the operation time (ISO-8601 with zone, "
	 "inclusive); newest first; optional filters by operation, actor, conversation, status and target id, and changesOnly "
	 "(changes without the reads).",
	 OBJ(KEYWORDS_PROP("关键词 / keywords") "," TIME_PROP("from", "起始时间 / from") "," TIME_PROP("to", "结束时间 / to") ","
	     "\"operations\":{\"type\":\"array\",\"items\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":64},\"maxItems\":50,"
	     "\"description\":\"操作名（工具名）之一 / one of these operation (tool) names\"},"
	     "\"actor\":{\"type\":\"string\",\"enum\":[\"model\",\"ui\",\"cli\",\"digest\"],\"description\":\"操作者 / actor\"},"
	     "\"conversation\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":80,"
	     "\"description\":\"对话键，host 为后台 / conversation key, host for the operator's\"},"
	     "\"status\":{\"type\":\"string\",\"enum\":[\"ok\",\"error\"],\"description\":\"状态 / status\"},"
	     ID_PROP("targetId", "涉及的记忆或人物 id / the memory or person id it touched") ","
	     "\"changesOnly\":{\"type\":\"boolean\",\"description\":\"只看改动 / changes only, no reads\"},"
	     PAGE_PROPS, ""),
	 FOR_MODEL_HOST, ZC_OFFER_ALWAYS, OP(zc_op_memory_history)},
	{"zcor_memory_backup", "zcor", "备份 / Backup",
	 "把当前 Memory 状态备份为 backups/ 下带时间戳的文件。",
	 "Back up the current memory state to a timestamped file in backups/.",
	 OBJ("", ""),
	 FOR_MODEL_HOST, ZC_OFFER_ALWAYS, OP(zc_op_memory_backup)},
	{"zcor_memory_restore", "zcor", "恢复 / Restore",
	 "从 backups/ 下的备份恢复 Memory 状态（接受版本 1、2、3）；恢复前会先备份当前状态。",
	 "Restore the memory state from a file in backups/ (format 1, 2 or 3); the current state is backed up first.",
	 OBJ("\"backupFile\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":255,\"description\":\"backups/ 下的文件名 / file name in backups/\"}",
	     "\"backupFile\""),
	 FOR_MODEL_HOST, ZC_OFFER_ALWAYS, OP(zc_op_memory_restore)},
	{"zcor_memory_search", "zcor", "检索记忆 / Search memories",
	 "关键词数组检索：关键词经 NFKC 和大小写归一化，并通过同义词组双向、传递扩展；按标题命中的不同扩展词数取最多 20 条候选，再由 LLM 按相关性挑出最多 5 条。"
	 "正文不参与第一阶段匹配；没有标题命中时返回空结果。",
	 "Keyword search: keywords are NFKC + case folded and expanded through synonym groups (both ways, transitively); up to 20 "
	 "candidates by the number of distinct expanded words in their titles, then an LLM picks at most 5 by relevance. Content is "
	 "not matched in the first stage; no title hit gives an empty result.",
	 OBJ("\"keywords\":{\"type\":\"array\",\"items\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":200},\"minItems\":1,\"maxItems\":50,\"description\":\"关键词 / keywords\"}",
	     "\"keywords\""),
	 FOR_MODEL_HOST, ZC_OFFER_ALWAYS, OP(zc_op_memory_search)},
	{"zcor_relationship_read", "zcor", "读取人物关系 / Read a relationship",
	 "按 personId 读取人物关系：姓名、别名、关系描述、好感度（-100 到 100，0 为中立）和判断原因。",
	 "Read a person's relationship by personId: name, aliases, relationship, affinity (-100 to 100, 0 neutral) and reason.",
	 OBJ(ID_PROP("personId", "人物 id（QQ 上为 QQ 号）/ person id (the QQ number on QQ)"), "\"personId\""),
	 FOR_MODEL_HOST, ZC_OFFER_RELATIONSHIPS, OP(zc_op_relationship_read)},
	{"zcor_relationship_query", "zcor", "查询人物关系 / Query relationships",
	 "按关键词查询人物关系（匹配 id、姓名、别名、关系和原因）。",
	 "Query relationships by keywords (matched against id, name, aliases, relationship and reason).",
	 OBJ(KEYWORDS_PROP("关键词 / keywords") "," PAGE_PROPS ","
	     "\"sort\":{\"type\":\"string\",\"enum\":[\"updated\",\"affinity\",\"affinityLow\"],\"description\":\"排序：updated 最近修改（默认），affinity 好感度从高到低，affinityLow 从低到高 / order: updated (latest change, the default), affinity (highest first), affinityLow (lowest first)\"}",
	     ""),
	 FOR_MODEL_HOST, ZC_OFFER_RELATIONSHIPS, OP(zc_op_relationship_query)},
	{"zcor_relationship_write", "zcor", "保存人物关系 / Write a relationship",
	 "保存人物关系和好感度（-100 到 100），写明判断原因；可用 memoryNodeId 关联人物节点。对话涉及某人时先查询，取得新的互动依据后再更新。",
	 "Save a person's relationship and affinity (-100 to 100) with the reason; memoryNodeId links a person node. Look a person "
	 "up when they come up; update after new evidence.",
	 OBJ(ID_PROP("personId", "人物 id / person id") ","
	     "\"name\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":200,\"description\":\"姓名 / name\"},"
	     "\"relationship\":{\"type\":\"string\",\"maxLength\":2000,\"description\":\"关系描述 / relationship\"},"
	     "\"affinity\":{\"type\":\"integer\",\"minimum\":-100,\"maximum\":100,\"description\":\"好感度 -100..100 / affinity\"},"
	     "\"reason\":{\"type\":\"string\",\"maxLength\":2000,\"description\":\"判断原因 / why\"},"
	     "\"aliases\":{\"type\":\"array\",\"items\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":200},\"maxItems\":50,\"description\":\"别名 / aliases\"},"
	     "\"memoryNodeId\":{\"type\":[\"string\",\"null\"],\"maxLength\":64,\"description\":\"关联的人物节点 id，null 取消 / linked node, null to unlink\"}",
	     "\"personId\",\"name\",\"relationship\",\"affinity\",\"reason\""),
	 FOR_MODEL_HOST, ZC_OFFER_RELATIONSHIPS, OP(zc_op_relationship_write)},
	{"zcor_relationship_delete", "zcor", "删除人物关系 / Delete a relationship",
	 "删除人物关系；历史保留删除前内容。",
	 "Delete a relationship; history keeps its content.",
	 OBJ(ID_PROP("personId", "人物 id / person id"), "\"personId\""),
	 FOR_MODEL_HOST, ZC_OFFER_RELATIONSHIPS, OP(zc_op_relationship_delete)},
	{"zcor_synonyms_add", "zcor", "添加同义词 / Add synonyms",
	 "添加一组同义词（至少两个词）；检索时双向、传递扩展。",
	 "Add a group of synonyms (at least two words); search expands them both ways and transitively.",
	 OBJ("\"terms\":{\"type\":\"array\",\"items\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":64},\"minItems\":2,\"maxItems\":50,\"description\":\"同义的词 / words that mean the same\"}",
	     "\"terms\""),
	 FOR_MODEL_HOST, ZC_OFFER_ALWAYS, OP(zc_op_synonyms_add)},
	{"qq_memory", "qq", "记忆文件 / Memory views",
	 "读写长期记忆的各个视图。path：INDEX.md（短索引）、PEOPLE.md（全局人物表，QQ 号为主键）、COGNITION.md（全局语言梗/黑话，只有文字）、"
	 "STICKERS.md（表情包目录）、conversations/<slug>/MEMORY.md（本会话热层，slug 为会话 key 把冒号换成短横线，如 group-100000001）、"
	 "conversations/<slug>/archive/YYYY-MM.md（冷层，只读可搜）。action：read（带行号引用与未解析行提示；version=N 读第 N 个旧版本）、"
	 "list（列出视图与冷层文件）、search（query 关键词，含冷层）、upsert（按 name 新增或原地替换一条，只给字段，格式与分节由代码生成：name、meaning、"
	 "usage、type=缩写/谐音/专名/其它、variants、image、scene、section=人物/惯例与偏好/在追/事实、date、qq、aliases、pinned、confidence=确认/存疑）、"
	 "remove（按 name 或 line 删除）、write（整份覆盖，条目数掉到 90% 以下被拒，除非 force: true）、append（追加条目）。结构化文件请用 upsert，"
	 "不要整份重写。私聊会话不能写 PEOPLE.md / COGNITION.md / STICKERS.md / INDEX.md，请写进本会话的 MEMORY.md；"
	 "COGNITION.md 里不许出现文件路径；STICKERS.md 的图片必须先用 qq_save_sticker 收藏。",
	 "Read and change the memory views. path: INDEX.md (short index), PEOPLE.md (global people by QQ number), COGNITION.md (global "
	 "slang, words only), STICKERS.md (sticker catalog), conversations/<slug>/MEMORY.md (this conversation's hot memory; slug is the key "
	 "with '-' for ':', e.g. group-100000001), conversations/<slug>/archive/YYYY-MM.md (cold, read-only, searchable). action: read "
	 "(line references and a note on unparsed lines; version=N reads an earlier version), list, search (query words, archive "
	 "included), upsert (add or replace one entry by name; give fields, the code formats them: name, meaning, usage, type, variants, "
	 "image, scene, section, date, qq, aliases, pinned, confidence), remove (by name or line), write (replace the whole view; refused "
	 "below 90% of the entries unless force: true), append. Prefer upsert. A private conversation cannot write the global views: use "
	 "its own MEMORY.md. No file paths in COGNITION.md; collect an image with qq_save_sticker before cataloguing it.",
	 OBJ("\"action\":{\"type\":\"string\",\"enum\":[\"read\",\"append\",\"write\",\"search\",\"list\",\"upsert\",\"remove\"],\"description\":\"动作 / action\"},"
	     "\"path\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":512,\"description\":\"视图路径 / view path\"},"
	     "\"content\":{\"type\":\"string\",\"maxLength\":1048576,\"description\":\"write / append 的 Markdown 文本 / Markdown text for write and append\"},"
	     "\"force\":{\"type\":\"boolean\",\"description\":\"write 时允许条目数降到 90% 以下 / allow a write to drop below 90% of the entries\"},"
	     "\"query\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":500,\"description\":\"search 的关键词，空格分隔 / search words, space-separated\"},"
	     "\"version\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":20,\"description\":\"read 旧版本：1 为上一版 / read an earlier version, 1 = the previous one\"},"
	     "\"line\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"remove 的行号 / line to remove\"},"
	     "\"name\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":200,\"description\":\"条目名（梗的写法、表情包名、人名、事项）/ entry name\"},"
	     "\"meaning\":{\"type\":\"string\",\"maxLength\":2000,\"description\":\"含义 / 内容 / meaning\"},"
	     "\"usage\":{\"type\":\"string\",\"maxLength\":2000,\"description\":\"用法（COGNITION）/ usage\"},"
	     "\"type\":{\"type\":\"string\",\"enum\":[\"缩写\",\"谐音\",\"专名\",\"其它\"],\"description\":\"梗的类型（COGNITION）/ slang type\"},"
	     "\"variants\":{\"type\":[\"string\",\"array\"],\"items\":{\"type\":\"string\"},\"description\":\"变体写法，用 / 分隔（COGNITION）/ variants, '/'-separated\"},"
	     "\"image\":{\"type\":\"string\",\"maxLength\":300,\"description\":\"收藏后的 stickers/ 路径（STICKERS）/ collected sticker path\"},"
	     "\"scene\":{\"type\":\"string\",\"maxLength\":2000,\"description\":\"使用场景（STICKERS）/ when to use it\"},"
	     "\"picture\":{\"type\":\"string\",\"maxLength\":2000,\"description\":\"画面（STICKERS）/ what it shows\"},"
	     "\"section\":{\"type\":\"string\",\"maxLength\":40,\"description\":\"MEMORY.md 的节：人物 / 惯例与偏好 / 在追 / 事实\"},"
	     "\"date\":{\"type\":\"string\",\"maxLength\":10,\"description\":\"事实日期 YYYY-MM-DD / fact date\"},"
	     "\"expires\":{\"type\":\"string\",\"maxLength\":10,\"description\":\"过期日期 YYYY-MM-DD（MEMORY）/ expiry date\"},"
	     "\"qq\":{\"type\":\"string\",\"maxLength\":20,\"description\":\"QQ 号（PEOPLE）/ QQ number\"},"
	     "\"aliases\":{\"type\":[\"string\",\"array\"],\"items\":{\"type\":\"string\"},\"description\":\"别名，用 / 分隔 / aliases, '/'-separated\"},"
	     "\"pinned\":{\"type\":\"boolean\",\"description\":\"置顶：不滚入冷层 / pinned: never archived\"},"
	     "\"confidence\":{\"type\":\"string\",\"enum\":[\"确认\",\"存疑\"],\"description\":\"置信；存疑的条目不进提示词 / doubtful entries are never injected\"}",
	     "\"action\""),
	 FOR_DIGEST_TOO, ZC_OFFER_ALWAYS, OP(zc_op_qq_memory)},
	{"qq_save_sticker", "qq", "收藏表情包 / Save a sticker",
	 "把别人发来的图片（消息里的 media/<哈希>.<扩展名> 路径）收藏为 stickers/<name>.<扩展名>，并写进 STICKERS.md 的已收藏区。"
	 "收藏后发送用返回的 send 字段，路径原样带扩展名：[[图片: stickers/名字.gif]]。",
	 "Collect an image someone sent (its media/<hash>.<ext> path from the message) as stickers/<name>.<ext> and catalog it in "
	 "STICKERS.md. Send it afterwards with the returned `send` text, the path exactly as given, extension included.",
	 OBJ("\"media\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":300,\"description\":\"media/ 下的图片路径 / the media/ path\"},"
	     "\"name\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":64,\"description\":\"表情包名字 / sticker name\"},"
	     "\"meaning\":{\"type\":\"string\",\"maxLength\":2000,\"description\":\"含义 / meaning\"},"
	     "\"scene\":{\"type\":\"string\",\"maxLength\":2000,\"description\":\"使用场景 / when to use it\"}",
	     "\"media\",\"name\""),
	 /* the digest agent too: seed 003 names it a writer of STICKERS.md,
	  * and its skills collect before recording (issue 16) */
	 FOR_DIGEST_TOO, ZC_OFFER_ALWAYS, OP(zc_op_qq_save_sticker)},
	{"qq_rename_sticker", "qq", "重命名表情包 / Rename a sticker",
	 "给已收藏的表情包改名：文件与 STICKERS.md 条目一起搬，失败时两者都保持原样。",
	 "Rename a collected sticker: the file and its STICKERS.md entry move together; on failure both stay as they were.",
	 OBJ("\"from\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":300,\"description\":\"原名字或 stickers/ 路径 / current name or path\"},"
	     "\"to\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":64,\"description\":\"新名字（不带扩展名）/ new name, no extension\"}",
	     "\"from\",\"to\""),
	 FOR_MODEL_HOST, ZC_OFFER_ALWAYS, OP(zc_op_qq_rename_sticker)},
	{"skill", "qq", "加载 skill / Load a skill",
	 "按名字加载一个 skill（做某类事的操作说明，如摘要、学梗、收表情包、查萌娘百科），返回它的正文（不含 front matter）。"
	 "遇到下面列出的情况时，先加载对应的 skill，再照它做；名字只能是列出的之一。",
	 "Load a skill by name (instructions for one kind of work: digesting, learning slang, collecting stickers, looking "
	 "things up on the Moegirl wiki) and return its text without the front matter. When a situation below comes up, load "
	 "that skill first and follow it; the name must be one of those listed.",
	 OBJ("\"name\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":64,\"description\":\"skill 的名字（kebab-case，如 learn-meme）/ the skill's name (kebab-case, such as learn-meme)\"}",
	     "\"name\""),
	 FOR_DIGEST_TOO, ZC_OFFER_ALWAYS, FN_DESCRIBED(zc_skill_tool, zc_skill_describe)},
	{"qq_transcript", "qq", "聊天转录 / Transcript",
	 "查聊天原话（转录）。action=list 列出有转录的会话及计数；read 按时间正序读一个会话（可给 from/to 带时区 ISO 时间）；"
	 "search 按关键词找原话（每个关键词经 NFKC 和大小写归一化后都要出现在消息正文里，单字也行），按时间倒序；sender 只看某人说的话。"
	 "发送者撤回的消息仍保留，带 recalledAt（已撤回的时间）。"
	 "在会话里调用时只能看到本会话的转录，conversation 可省略；宿主平面可看所有会话。分页：limit 默认 20、最多 100，offset，返回 total 和 nextOffset。",
	 "Look up what was actually said (the transcript). action=list lists the conversations with a log and their counters; "
	 "read pages through one conversation oldest first (from/to: ISO-8601 with a zone, inclusive); search finds messages "
	 "whose text contains every keyword (NFKC + case folded; single characters work), newest first; sender keeps one "
	 "person's messages. A message its sender "
	 "withdrew stays, with recalledAt (已撤回: when). Inside a conversation "
	 "only its own transcript is visible and conversation may be left out; the host plane sees every conversation. "
	 "Pages: limit (default 20, max 100), offset; returns total and nextOffset.",
	 OBJ("\"action\":{\"type\":\"string\",\"enum\":[\"list\",\"read\",\"search\"],\"description\":\"list 会话列表 / read 按时间读 / search 关键词找原话\"},"
	     "\"conversation\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":80,\"description\":\"会话 key，如 group:100000001；会话内可省略 / conversation key such as group:100000001; optional inside a conversation\"},"
	     TIME_PROP("from", "起始时间（带时区，含端点）/ from, ISO-8601 with zone, inclusive") ","
	     TIME_PROP("to", "结束时间（带时区，含端点）/ to, ISO-8601 with zone, inclusive") ","
	     KEYWORDS_PROP("search 时全部需要出现在原话里的关键词 / for search: keywords that must all occur in the text") ","
	     "\"sender\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":64,\"description\":\"只看这个发送者的消息（QQ 号，如 12345）；search 只给 sender 不给关键词时列出 TA 的消息 / only this sender's messages (a QQ number such as 12345); search with a sender and no keywords lists that sender's messages\"},"
	     PAGE_PROPS,
	     "\"action\""),
	 FOR_DIGEST_TOO, ZC_OFFER_ALWAYS, OP(zc_op_qq_transcript)},
	{"wiki_lookup", "wiki", "查维基 / Wiki lookup",
	 "moegirl skill 的查词工具（SPEC §3.2）：在萌娘百科（或 config.json 的 wiki.baseUrl 指向的 MediaWiki）先用 opensearch 找词条标题，"
	 "再取该词条开头的纯文本简介。返回 title、extract（最多 1200 字，超出截断并标 truncated）、url、redirectedFrom（经重定向时）、"
	 "candidates（opensearch 给出的候选标题）。查不到词条时返回 not_found，details.candidates 列出相近标题。"
	 "只用来核实梗、角色、作品的来历；查不到或不确定时不要写进记忆。",
	 "The moegirl skill's lookup (SPEC §3.2): finds the page title with opensearch on the Moegirl wiki (or the MediaWiki at "
	 "config.json's wiki.baseUrl), then reads that page's opening text as plain text. Returns title, extract (at most 1,200 "
	 "characters; longer ones are cut and marked truncated), url, redirectedFrom (when a redirect was followed) and "
	 "candidates (opensearch's titles). No page: not_found, with close titles in details.candidates. Use it to check where "
	 "a meme, character or work comes from; when nothing is found or you are unsure, write nothing.",
	 OBJ("\"query\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":100,\"description\":\"要查的词、角色名或作品名 / the word, character or work to look up\"}",
	     "\"query\""),
	 FOR_DIGEST_TOO, ZC_OFFER_ALWAYS, FN(zc_wiki_lookup)},
	{0},
};

#define NTOOLS (sizeof(zc_tools) / sizeof(zc_tools[0]) - 1)
_Static_assert(NTOOLS <= ZC_TOOLS_MAX, "ZC_TOOLS_MAX is below the table's rows");

static json_t *schemas[NTOOLS];
static pthread_once_t schemas_once = PTHREAD_ONCE_INIT;

static void parse_schemas(void)
{
	for (size_t i = 0; i < NTOOLS; i++) {
		json_error_t je;
		schemas[i] = json_loads(zc_tools[i].schema, 0, &je);
		/* our own table: a broken schema is a bug, not the world's mistake */
		if (!schemas[i]) {
			fprintf(stderr, "zcor: BUG: schema of %s: %s\n", zc_tools[i].name, je.text);
			abort();
		}
	}
}

const struct zc_tool *zc_tool_find(const char *name)
{
	for (size_t i = 0; i < NTOOLS; i++)
		if (strcmp(zc_tools[i].name, name) == 0)
			return &zc_tools[i];
	return NULL;
}

unsigned zc_tool_audience_of(const struct zcor_ctx *ctx)
{
	switch (ctx->actor) {
	case ZCOR_ACTOR_MODEL:
		return ZC_AUD_MODEL;
	case ZCOR_ACTOR_DIGEST:
		return ZC_AUD_DIGEST;
	default: /* ui, cli: the operator */
		return ZC_AUD_HOST;
	}
}

/* The row's "offered when" (the model's and the digest agent's). */
static int offered(const struct zc_tool *t, const struct zc_config *cfg, const char *conversation)
{
	(void)conversation; /* no rule reads it yet (tools.h) */
	/* memory: false (seed 003's 关掉): the seed-003 memory tools, the
	 * skills and the wiki are gone */
	if (!cfg->memory && (strcmp(t->family, "qq") == 0 || strcmp(t->family, "wiki") == 0 ||
			     strcmp(t->name, "skill") == 0))
		return 0;
	switch (t->offer) {
	case ZC_OFFER_RELATIONSHIPS:
		return cfg->relationships;
	default:
		return 1;
	}
}

int zc_tool_visible(const struct zc_tool *t, unsigned audience, const struct zc_config *cfg,
		    const char *conversation)
{
	assert(audience == ZC_AUD_MODEL || audience == ZC_AUD_DIGEST || audience == ZC_AUD_HOST);
	if (!(t->audience & audience))
		return 0;
	return audience == ZC_AUD_HOST || !cfg || offered(t, cfg, conversation);
}

size_t zc_tools_for(unsigned audience, const struct zc_config *cfg, const char *conversation,
		    struct zc_tool_list *out)
{
	out->n = 0;
	for (size_t i = 0; i < NTOOLS; i++)
		if (zc_tool_visible(&zc_tools[i], audience, cfg, conversation))
			out->v[out->n++] = &zc_tools[i];
	return out->n;
}

const json_t *zc_tool_schema(const struct zc_tool *t)
{
	assert(t >= zc_tools && t < zc_tools + NTOOLS);
	pthread_once(&schemas_once, parse_schemas);
	return schemas[t - zc_tools];
}

char *zc_tool_description(const struct zc_tool *t, const struct zc_tool_env *env, int english)
{
	struct zc_buf b = ZC_BUF_INIT;
	zc_buf_adds(&b, english ? t->desc_en : t->desc_zh);
	if (t->describe && env && env->skills)
		t->describe(env, english, &b);
	return zc_buf_detach(&b);
}

/* ---- refusing a caller outside the audience --------------------------- */

static const char *audience_name(unsigned audience)
{
	switch (audience) {
	case ZC_AUD_MODEL:
		return "a model in a conversation";
	case ZC_AUD_DIGEST:
		return "the digest agent";
	default:
		return "the host plane (CLI, REST, the page)";
	}
}

/* A call refused before its operation ran, recorded as failed (a read
 * of the operator's page excepted, as the runner does: zc_mem_unrecorded;
 * a plain function is a read). */
static void record_failure(struct zc_mem *m, const struct zcor_ctx *ctx, const struct zc_tool *t,
			   json_t *args, const char *raw, const struct zc_err *e)
{
	if (!zc_mem_unrecorded(ctx, t->op ? t->op->flags : ZC_OP_READ))
		zc_mem_record_failure(m, ctx, t->name, args, raw, e);
}

/* ZCOR_EFORBIDDEN for a caller that does not see t, saying why and what
 * to do; the call is recorded as failed. */
static int refuse(struct zc_mem *m, const struct zcor_ctx *ctx, const struct zc_tool *t,
		  unsigned audience, json_t *args, struct zc_err *e)
{
	int rc;
	if (t->audience & audience) { /* in the audience, but not offered now */
		rc = zc_fail(e, ZCOR_EFORBIDDEN,
			     "relationship memory is switched off in config.json, so '%s' is not "
			     "offered; the operator can switch it on (\"relationships\": true)",
			     t->name);
	} else {
		struct zc_tool_list l;
		struct zc_buf names = ZC_BUF_INIT;
		zc_tools_for(audience, &m->conf.cfg, ctx->conversation, &l);
		for (size_t i = 0; i < l.n; i++)
			zc_buf_addf(&names, "%s%s", i ? ", " : "", l.v[i]->name);
		rc = zc_fail(e, ZCOR_EFORBIDDEN,
			     "'%s' is not offered to %s; its tools are: %s", t->name,
			     audience_name(audience), names.len ? zc_buf_str(&names) : "none");
		zc_buf_release(&names);
	}
	record_failure(m, ctx, t, args, NULL, e);
	return rc;
}

/* ---- calls ------------------------------------------------------------ */

/* An fn row's call, run as a read's `pre` (tools.h): outside any
 * transaction, and answering alone, so the runner never begins one. */
struct fn_call {
	const struct zc_tool *t;
	struct zc_tool_env env;
};

static int fn_pre(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	const struct fn_call *c = op->ud;
	int rc = c->t->fn(&c->env, args, out, e);
	if (rc) {
		json_decref(*out);
		*out = NULL;
		return rc;
	}
	if (!*out)
		*out = json_object();
	return ZCOR_OK;
}

static int fn_body(struct zc_op *op, json_t *args, json_t **out, struct zc_err *e)
{
	/* fn_pre always answers: reaching here is our own bug */
	assert(0);
	return zc_fail(e, ZCOR_EINTERNAL, "'%s' has no body to run", op->name);
}

/* zc_tool_run that may answer in text (zc_mem_run_text) */
static int run_text(struct zc_mem *m, const struct zcor_ctx *ctx, const struct zc_tool *t,
		    const struct zcor_provider *provider, const struct zc_http_get *http,
		    struct zc_skills *skills, json_t *args, json_t **out, char **text,
		    struct zc_err *e)
{
	assert((t->op != NULL) != (t->fn != NULL));
	if (t->op)
		return zc_mem_run_text(m, ctx, t->op, args, (void *)provider, out, text, e);
	struct fn_call c = {t, {m, ctx, provider, http, skills}};
	const struct zc_opdef def = {t->name, fn_pre, fn_body, ZC_OP_READ};
	return zc_mem_run_text(m, ctx, &def, args, &c, out, text, e);
}

int zc_tool_run(struct zc_mem *m, const struct zcor_ctx *ctx, const struct zc_tool *t,
		const struct zcor_provider *provider, const struct zc_http_get *http,
		struct zc_skills *skills, json_t *args,
		json_t **out, struct zc_err *e)
{
	return run_text(m, ctx, t, provider, http, skills, args, out, NULL, e);
}

int zc_tool_call(struct zc_mem *m, const struct zcor_ctx *ctx, const struct zc_tool *t,
		 const struct zcor_provider *provider, const struct zc_http_get *http,
		 struct zc_skills *skills,
		 const char *args_text, json_t **out, struct zc_err *e)
{
	return zc_tool_call_text(m, ctx, t, provider, http, skills, args_text, out, NULL, e);
}

int zc_tool_call_text(struct zc_mem *m, const struct zcor_ctx *ctx, const struct zc_tool *t,
		      const struct zcor_provider *provider, const struct zc_http_get *http,
		      struct zc_skills *skills, const char *args_text, json_t **out, char **text,
		      struct zc_err *e)
{
	json_t *args = NULL;
	*out = NULL;
	if (text)
		*text = NULL;
	int rc;
	if (!args_text || !*args_text)
		args = json_object();
	else if ((rc = zc_json_parse(args_text, strlen(args_text), "arguments", &args, e))) {
		record_failure(m, ctx, t, NULL, args_text, e);
		return rc;
	}
	if ((rc = zc_schema_check(zc_tool_schema(t), args, e))) {
		record_failure(m, ctx, t, args, NULL, e);
		json_decref(args);
		return rc;
	}
	zc_schema_coerce(zc_tool_schema(t), args);
	zc_config_refresh(&m->conf);
	unsigned audience = zc_tool_audience_of(ctx);
	if (!zc_tool_visible(t, audience, &m->conf.cfg, ctx->conversation))
		rc = refuse(m, ctx, t, audience, args, e);
	else
		rc = run_text(m, ctx, t, provider, http, skills, args, out, text, e);
	json_decref(args);
	return rc;
}
