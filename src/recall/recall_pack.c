/*
 * recall_pack.c — packing what recall picked into recallChars (SPEC §4):
 * the items' lines, ids kept when text is cut; the header's extras (INDEX,
 * slang vocabulary, archive line, sticker catalog, recent slang) and the
 * view citations.
 *
 * Recall layer, behind recall.h (recall_int.h is what the files of recall.c
 * share, not an interface). Reads the store inside the caller's read
 * transaction, through indexes only; never writes and never records history.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/json.h"
#include "base/timeutil.h"
#include "memory/sticker.h"
#include "recall/recall_int.h"
#include "text/norm.h"
#include "text/tokens.h"

/* ---- packing -------------------------------------------------------- */


/* Adds s if it fits whole; returns 1 if added. */
static int pack_add(struct pack *p, const char *s)
{
	size_t n = zc_utf8_len(s);
	if (p->used + n > p->budget)
		return 0;
	zc_buf_adds(&p->b, s);
	p->used += n;
	return 1;
}

/* Adds at most the characters left, ending with `tail` (which must fit). */
static int pack_cut(struct pack *p, const char *s, const char *tail)
{
	size_t tl = zc_utf8_len(tail);
	if (p->used + tl > p->budget)
		return 0;
	size_t room = p->budget - p->used - tl;
	size_t bytes = zc_utf8_prefix(s, room);
	zc_buf_add(&p->b, s, bytes);
	zc_buf_adds(&p->b, tail);
	p->used += zc_utf8_len(s) < room ? zc_utf8_len(s) + tl : room + tl;
	return 1;
}

/* One line of text, newlines folded to spaces. */
static void one_line(struct zc_buf *b, const char *s)
{
	for (; s && *s; s++)
		zc_buf_addc(b, *s == '\n' || *s == '\r' ? ' ' : *s);
}

static void item_line(const struct item *x, struct zc_buf *id, struct zc_buf *body)
{
	const json_t *o = x->obj;
	if (x->kind == 'p') {
		if (x->cite[0])
			zc_buf_addf(id, "- [人物 %s · %s] ", zc_json_str(o, "personId"), x->cite);
		else
			zc_buf_addf(id, "- [人物 %s] ", zc_json_str(o, "personId"));
		one_line(body, zc_json_str(o, "name"));
		json_t *al = json_object_get(o, "aliases");
		if (json_array_size(al)) {
			zc_buf_adds(body, "（别名：");
			size_t i;
			json_t *a;
			json_array_foreach(al, i, a) {
				if (i)
					zc_buf_addc(body, '/');
				one_line(body, json_string_value(a));
			}
			zc_buf_adds(body, "）");
		}
		const char *rel = zc_json_str(o, "relationship");
		if (rel && *rel) {
			zc_buf_adds(body, "｜");
			one_line(body, rel);
		}
		zc_buf_addf(body, "｜好感度 %lld", (long long)json_integer_value(json_object_get(o, "affinity")));
		return;
	}
	if (x->cite[0])
		zc_buf_addf(id, "- [%s · %s] ", x->id, x->cite);
	else
		zc_buf_addf(id, "- [%s] ", x->id);
	one_line(body, x->title);
	zc_buf_adds(body, "：");
	one_line(body, x->content);
	if (x->usage) {
		zc_buf_adds(body, "（用法：");
		one_line(body, x->usage);
		zc_buf_adds(body, "）");
	}
}

static int archive_line(struct recall *r, struct pack *p);
static int sticker_catalog(struct recall *r, struct pack *p);

/* The INDEX document, the slang vocabulary line, the archive line and the
 * sticker catalog, when they exist. */
static int extras(struct recall *r, struct pack *p)
{
	sqlite3_stmt *st = zc_stmt(&r->m->store,
				   "SELECT n.content FROM nodes n WHERE n.kind = 'document' AND n.kind <> 'memory' AND n.title = "
				   "'INDEX.md' AND +n.superseded_by IS NULL AND +n.scope IN ('global', ?9) "
				   "ORDER BY n.scope = 'global' DESC, n.seq LIMIT 1",
				   r->e);
	if (!st)
		return r->e->code;
	zc_recall_bind_conv(r, st);
	if (sqlite3_step(st) == SQLITE_ROW) {
		const char *text = (const char *)sqlite3_column_text(st, 0);
		if (text && *text) {
			struct zc_buf b = ZC_BUF_INIT;
			zc_buf_adds(&b, "## INDEX.md\n");
			size_t cut = zc_utf8_prefix(text, ZC_RECALL_INDEX_CHARS);
			zc_buf_add(&b, text, cut);
			zc_buf_adds(&b, text[cut] ? "…\n" : "\n");
			if (!pack_add(p, b.p))
				pack_cut(p, b.p, "…\n");
			zc_buf_release(&b);
		}
	}
	sqlite3_reset(st);
	st = zc_stmt(&r->m->store,
		     "SELECT n.title, n.keywords FROM nodes n WHERE n.kind = 'cognition' AND n.kind <> 'memory' AND " CURRENT_SQL
		     " ORDER BY n.seq",
		     r->e);
	if (!st)
		return r->e->code;
	zc_recall_bind_conv(r, st);
	struct zc_buf v = ZC_BUF_INIT;
	while (sqlite3_step(st) == SQLITE_ROW) {
		zc_buf_adds(&v, v.len ? "、" : "## 梗词汇表（听不懂时用 qq_memory search 查）：");
		one_line(&v, (const char *)sqlite3_column_text(st, 0));
		json_t *kw = json_loads((const char *)sqlite3_column_text(st, 1), 0, NULL);
		size_t i;
		json_t *k;
		json_array_foreach(kw, i, k) {
			zc_buf_addc(&v, '/');
			one_line(&v, json_string_value(k));
		}
		json_decref(kw);
	}
	sqlite3_reset(st);
	if (v.len) {
		zc_buf_addc(&v, '\n');
		if (!pack_add(p, v.p))
			pack_cut(p, v.p, "…\n");
	}
	zc_buf_release(&v);
	int rc = archive_line(r, p);
	return rc ? rc : sticker_catalog(r, p);
}

/* Where an entry of a memory view sits (view_lines), for its citation. */
static int cite_of(struct recall *r, struct item *x)
{
	sqlite3_stmt *st = zc_stmt(&r->m->store,
				   "SELECT path, line FROM view_lines WHERE kind = ?1 AND ref = ?2", r->e);
	if (!st)
		return r->e->code;
	sqlite3_bind_text(st, 1, x->kind == 'p' ? "person" : "node", -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, x->seq);
	x->cite[0] = '\0';
	if (sqlite3_step(st) == SQLITE_ROW)
		snprintf(x->cite, sizeof(x->cite), "%s#L%lld", (const char *)sqlite3_column_text(st, 0),
			 (long long)sqlite3_column_int64(st, 1));
	sqlite3_reset(st);
	return ZCOR_OK;
}

/* The cold layer as one line of constant length (Q-ROLL: no pointer
 * lines in the hot layer; the months are listed by qq_memory list). */
static int archive_line(struct recall *r, struct pack *p)
{
	if (!r->ctx.conversation)
		return ZCOR_OK;
	sqlite3_stmt *st = zc_stmt(&r->m->store,
				   "SELECT count(DISTINCT archive_month), min(archive_month), "
				   "max(archive_month) FROM nodes WHERE scope = ?1 AND kind = 'memory' AND "
				   "tier = 'archive' AND archive_month IS NOT NULL AND scope <> 'global'",
				   r->e);
	if (!st)
		return r->e->code;
	sqlite3_bind_text(st, 1, r->ctx.conversation, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) > 0) {
		struct zc_buf b = ZC_BUF_INIT;
		char slug[96];
		zc_conv_slug(r->ctx.conversation, slug, sizeof(slug));
		zc_buf_addf(&b, "更早的记忆：conversations/%s/archive/ 下 %lld 个文件（%s … %s），不在提示词里，用 qq_memory search 查。\n",
			    slug, (long long)sqlite3_column_int64(st, 0),
			    (const char *)sqlite3_column_text(st, 1), (const char *)sqlite3_column_text(st, 2));
		pack_add(p, b.p);
		zc_buf_release(&b);
	}
	sqlite3_reset(st);
	return ZCOR_OK;
}

/* The collected stickers: 名字（含义）→ 完整路径, the path exactly as it
 * must be sent (Q-STK: a guessed extension is a sticker that is "not
 * there"). */
static int sticker_catalog(struct recall *r, struct pack *p)
{
	sqlite3_stmt *st = zc_stmt(&r->m->store,
				   "SELECT title, content, json_extract(attrs, '$.image') FROM nodes WHERE "
				   "scope = 'global' AND kind = 'sticker' AND kind <> 'memory' AND section = '已收藏' AND "
				   ZC_MAY_INJECT_SQL("", "") " AND json_extract(attrs, '$.image') IS NOT NULL "
				   "ORDER BY coalesce(json_extract(attrs, '$.pos'), seq), seq LIMIT ?1",
				   r->e);
	if (!st)
		return r->e->code;
	sqlite3_bind_int(st, 1, ZC_RECALL_STICKERS);
	struct zc_buf b = ZC_BUF_INIT;
	while (sqlite3_step(st) == SQLITE_ROW) {
		/* a stored path that is no stickers/ file is never offered */
		if (!zc_sticker_path_ok((const char *)sqlite3_column_text(st, 2)))
			continue;
		if (!b.len)
			zc_buf_adds(&b, "## 已收藏的表情包（发送时原样写 [[图片: 完整路径]]）\n");
		zc_buf_adds(&b, "- ");
		one_line(&b, (const char *)sqlite3_column_text(st, 0));
		const char *meaning = (const char *)sqlite3_column_text(st, 1);
		if (meaning && *meaning) {
			zc_buf_adds(&b, "（");
			one_line(&b, meaning);
			zc_buf_adds(&b, "）");
		}
		zc_buf_adds(&b, "→ ");
		one_line(&b, (const char *)sqlite3_column_text(st, 2));
		zc_buf_addc(&b, '\n');
	}
	sqlite3_reset(st);
	if (b.len && !pack_add(p, b.p))
		pack_cut(p, b.p, "…\n");
	zc_buf_release(&b);
	return ZCOR_OK;
}

/* "Recently learned slang" (seed 003): the newest COGNITION.md entries
 * by date, an entry without one taking the date above it in the file;
 * at most 15 entries and 1200 characters, those already shown left out.
 * A fallback: it takes only what the budget has left. */
static int recent_slang(struct recall *r, size_t npicked, struct pack *p)
{
	sqlite3_stmt *st = zc_stmt(&r->m->store,
				   "SELECT n.seq, n.title, n.content, json_extract(n.attrs, '$.usage') "
				   "FROM view_lines v JOIN nodes n ON n.seq = v.ref WHERE v.path = "
				   "'COGNITION.md' AND v.kind = 'node' AND " ZC_MAY_INJECT_SQL("n.", "n.")
				   " ORDER BY v.eff_date DESC, v.line DESC LIMIT ?1",
				   r->e);
	if (!st)
		return r->e->code;
	sqlite3_bind_int(st, 1, ZC_RECALL_RECENT_SLANG + (int)npicked);
	struct zc_buf b = ZC_BUF_INIT;
	int n = 0;
	while (n < ZC_RECALL_RECENT_SLANG && sqlite3_step(st) == SQLITE_ROW) {
		sqlite3_int64 seq = sqlite3_column_int64(st, 0);
		int shown = 0;
		for (size_t i = 0; i < npicked && !shown; i++)
			shown = r->it[i].picked && r->it[i].kind == 'n' && r->it[i].seq == seq;
		if (shown)
			continue;
		struct zc_buf line = ZC_BUF_INIT;
		zc_buf_adds(&line, "- ");
		one_line(&line, (const char *)sqlite3_column_text(st, 1));
		zc_buf_adds(&line, "：");
		one_line(&line, (const char *)sqlite3_column_text(st, 2));
		const char *usage = (const char *)sqlite3_column_text(st, 3);
		if (usage && *usage) {
			zc_buf_adds(&line, "（用法：");
			one_line(&line, usage);
			zc_buf_adds(&line, "）");
		}
		zc_buf_addc(&line, '\n');
		if (zc_utf8_len(b.p ? b.p : "") + zc_utf8_len(line.p) > ZC_RECALL_RECENT_SLANG_CHARS) {
			zc_buf_release(&line);
			break;
		}
		if (!b.len)
			zc_buf_adds(&b, "## 最近学的梗\n");
		zc_buf_adds(&b, line.p);
		zc_buf_release(&line);
		n++;
	}
	sqlite3_reset(st);
	if (b.len)
		pack_add(p, b.p);
	zc_buf_release(&b);
	return ZCOR_OK;
}

json_t *zc_recall_item_json(const struct item *x)
{
	if (x->kind == 'p')
		return json_pack("{s:s, s:s, s:O, s:s, s:b, s:f}", "kind", "person", "personId",
				 zc_json_str(x->obj, "personId"), "name", json_object_get(x->obj, "name"),
				 "section", x->section, "truncated", x->truncated, "score", x->score);
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:b, s:f}", "kind", "node", "id", x->id, "title",
			 x->title ? x->title : "", "section", x->section[0] ? x->section : "记忆",
			 "scope", x->scope, "truncated", x->truncated, "score", x->score);
}

int zc_recall_pack_items(struct recall *r, size_t npicked, struct pack *p, json_t *items)
{
	static const char head[] =
		"【自动回忆】以下是系统按当前消息检索到的记忆，只是参考资料，不是对方说的话；"
		"方括号里是 id 与出处，完整内容用 zcor_memory_read 或 qq_memory read 读取。\n";
	int rc = ZCOR_OK;
	size_t start = p->b.len, start_used = p->used;
	if (!pack_add(p, head))
		return ZCOR_OK;
	size_t after_head = p->used;
	if ((rc = extras(r, p)))
		return rc;
	if (npicked && pack_add(p, "## 相关记忆\n")) {
		for (size_t i = 0; i < npicked; i++) {
			struct item *x = &r->it[i];
			struct zc_buf id = ZC_BUF_INIT, body = ZC_BUF_INIT, line = ZC_BUF_INIT;
			if ((rc = cite_of(r, x)))
				return rc;
			item_line(x, &id, &body);
			zc_buf_addf(&line, "%s%s\n", id.p, body.p);
			if (!pack_add(p, line.p)) {
				/* past the budget: keep the id, cut title and body */
				x->truncated = 1;
				size_t idc = zc_utf8_len(id.p), tail = zc_utf8_len("…（已截断）\n");
				if (p->used + idc + tail > p->budget) {
					x->picked = 0;
					x->why = "no room left in recallChars";
				} else {
					zc_buf_adds(&p->b, id.p);
					p->used += idc;
					pack_cut(p, body.p, "…（已截断）\n");
				}
			}
			zc_buf_release(&id);
			zc_buf_release(&body);
			zc_buf_release(&line);
			if (x->picked)
				json_array_append_new(items, zc_recall_item_json(x));
		}
	}
	/* seed 003's section; seed 000 (profile zcor) injects its hits alone,
	 * at most ZC_RECALL_ZCOR_MAX, and nothing when nothing hit */
	if (r->profile != ZC_PROFILE_ZCOR && (rc = recent_slang(r, npicked, p)))
		return rc;
	if (json_array_size(items) == 0 && (p->used == after_head || r->profile == ZC_PROFILE_ZCOR)) {
		/* nothing to say: no header at all (and seed 000 says nothing
		 * without a hit, whatever else the header could carry) */
		p->b.len = start;
		if (p->b.p)
			p->b.p[start] = '\0';
		p->used = start_used;
	}
	return rc;
}

