// bigstore.mjs — a store of issue 18's size for the page (5,000 memories,
// 20,000 messages by default) built through zcor's own interfaces, fast:
// the memories and people as one state file that `zcor restore` takes in
// one transaction (the bulk path of a restore), the messages as seed-003
// log files that `zcor transcript import` reads, and some history through
// real tool calls. Deterministic (a fixed seed). Used by
// tests/ui/issue18_scale.test.mjs (a smaller count) and bench/page.mjs.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { cli } from './serve.mjs';
import { mkTmp } from '../tmpdir.mjs';

const WORDS = ['周五', '开黑', '群主', '打本', '奶茶', '考研', '原神', '生日', '猫咪', '加班', '火锅', '北京',
  '上海', '周末', '早睡', '摸鱼', '表情包', '学长', '室友', '副本', '抽卡', '番剧', '实习', '面试', '旅游',
  '演唱会', '健身', '外卖', '野餐', '电影'];
const NAMES = ['小明', '小红', '阿杰', '老王', '小林', '大壮', '小美', '阿强', '小雪', '老李'];
const DAY = 86400000;

export const CONVERSATIONS = 10;
export const convKey = (i) => `group:${100000001 + i}`;

function rand(seed) {
  let x = seed >>> 0 || 1;
  return () => { x ^= x << 13; x >>>= 0; x ^= x >> 17; x ^= x << 5; x >>>= 0; return x / 4294967296; };
}

// { memories, messages, people, historyCalls } → the directory's path,
// built (a new directory). now: the instant the times are spread before.
export function buildStore(dir, { memories = 5000, messages = 20000, people = 300, historyCalls = 0, now = Date.now() } = {}) {
  const r = rand(18);
  const pick = (a) => a[Math.floor(r() * a.length)];
  const iso = (ms) => new Date(ms).toISOString();
  const nodes = [];
  const roots = Math.max(1, Math.round(memories / 16));
  for (let i = 1; i <= memories; i++) {
    const id = `m${String(i).padStart(6, '0')}`;
    const w = [pick(WORDS), pick(WORDS), pick(WORDS)];
    const created = now - Math.floor(r() * 200 * DAY);
    const kind = i % 50 === 0 ? 'document' : i % 17 === 0 ? 'cognition' : i % 23 === 0 ? 'sticker' : 'memory';
    const scope = i % 3 === 0 ? convKey(i % CONVERSATIONS) : i % 29 === 0 ? `private:${20000 + (i % 7)}` : 'global';
    // the first `roots` are roots; the others hang under an earlier one of
    // their scope's visible ones (a root, or a global one)
    let parentId = null;
    if (i > roots) {
      const p = nodes[Math.floor(r() * Math.min(nodes.length, roots * 4))];
      if (p.scope === scope || (p.scope === 'global' && !scope.startsWith('private:'))) parentId = p.id;
    }
    nodes.push({
      id, title: `${pick(NAMES)}的${w[0]}${i}`,
      content: `${pick(NAMES)}说${w[0]}和${w[1]}，还有${w[2]}。第${i}条记忆，写于第${Math.floor((now - created) / DAY)}天前。`,
      keywords: [w[0], w[1]], parentId, scope, kind,
      tier: i % 13 === 0 ? 'archive' : 'hot', expires: i % 41 === 0 ? '2026-01-01' : null,
      createdAt: iso(created), updatedAt: iso(created + Math.floor(r() * (now - created))),
    });
  }
  const ppl = [];
  for (let i = 0; i < people; i++) {
    ppl.push({
      personId: String(10000 + i), name: `${pick(NAMES)}${i}`, aliases: [`${pick(WORDS)}${i}`],
      relationship: '群友', affinity: Math.floor(r() * 200) - 100, reason: '常聊天',
      memoryNodeId: i < memories && nodes[i].scope === 'global' ? nodes[i].id : null,
    });
  }
  const state = { format: 'zcor-memory-state', version: 3, nodes, important: nodes.slice(0, 5).map((n) => n.id), people: ppl };
  mkdirSync(join(dir, 'backups'), { recursive: true });
  const file = 'memory-state-20260101T000000000Z.json';
  writeFileSync(join(dir, 'backups', file), JSON.stringify(state));
  let res = cli(dir, 'restore', file);
  assert.equal(res.status, 0, res.stderr);

  // the messages: per conversation, one log file per day
  const logs = mkTmp('zcor-logs-');
  const per = Math.ceil(messages / CONVERSATIONS);
  for (let c = 0; c < CONVERSATIONS; c++) {
    const days = new Map();
    for (let k = 0; k < per && c * per + k < messages; k++) {
      const at = now - (per - k) * 600000; // one every ten minutes, up to now
      const day = iso(at).slice(0, 10);
      const sender = 10000 + Math.floor(r() * people);
      const line = { id: `${c}-${k}`, time: iso(at), senderId: String(sender), senderName: `${pick(NAMES)}${sender - 10000}`,
        text: `${pick(WORDS)}${pick(WORDS)}，${pick(NAMES)}你${pick(WORDS)}了吗 ${k}`, mentions: k % 9 === 0 ? [String(10000 + (k % people))] : [],
        replyTo: k % 7 === 0 && k > 0 ? `${c}-${k - 1}` : null, media: [] };
      if (!days.has(day)) days.set(day, []);
      days.get(day).push(JSON.stringify(line));
    }
    const d = join(logs, `c${c}`);
    mkdirSync(d, { recursive: true });
    const files = [];
    for (const [day, lines] of days) {
      const f = join(d, `${day}.jsonl`);
      writeFileSync(f, `${lines.join('\n')}\n`);
      files.push(f);
    }
    res = cli(dir, 'transcript', 'import', '--conversation', convKey(c), ...files);
    assert.equal(res.status, 0, res.stderr);
  }

  // history: real calls (each its own transaction and record)
  for (let i = 0; i < historyCalls; i++) {
    const n = nodes[i % nodes.length];
    res = cli(dir, 'tool', 'zcor_memory_write', JSON.stringify({ id: n.id, title: n.title, content: `${n.content} 改过${i}` }));
    assert.equal(res.status, 0, res.stderr);
  }
  return { dir, nodes, people: ppl };
}

// ---- the page on such a store (bench/page.mjs, issue18_scale) ----------

// The steps: [name, hash to open first (or null: stay), the actions in the
// page, the selector of what is drawn when it is done]. Actions: {hash},
// {fill: selector, value}, {select: selector, value}, {click: selector},
// {submit: selector} (the form's requestSubmit).
const CONV = convKey(1);
export const PAGE_STEPS = [
  ['open Memory (tree roots)', null, [{ hash: '#memory' }], '#panel .tree [role=treeitem]'],
  ['search memories 猫咪', '#memory', [{ fill: '#q-keywords', value: '猫咪' }, { submit: '#q-keywords' }], '#panel ul.list[aria-label] > li, #panel section p.empty'],
  ['search memories 猫咪 火锅 (sort by hits)', '#memory', [{ fill: '#q-keywords', value: '猫咪 火锅' }, { select: '#q-sort', value: 'hits' }, { submit: '#q-keywords' }], '#panel ul.list[aria-label] > li, #panel section p.empty'],
  ['open a memory', '#memory', [{ hash: '#memory/m000002' }], '#node-title'],
  ['open Recall preview', null, [{ hash: '#recall' }], '#rp-form'],
  ['recall preview 猫咪和火锅', '#recall', [{ fill: '#rp-text', value: '今天猫咪吃火锅了吗' }, { fill: '#rp-conv', value: CONV }, { click: '#rp-go' }], '#rp-cands'],
  ['open History', null, [{ hash: '#history' }], '#history-list li.record, #history-list p.empty'],
  ['search history 猫咪', '#history', [{ fill: '#h-keywords', value: '猫咪' }, { submit: '#h-keywords' }], '#history-list li.record, #history-list p.empty'],
  ['open People', null, [{ hash: '#people' }], '#people-list li'],
  ['search people 小明', '#people', [{ fill: '#p-keywords', value: '小明' }, { submit: '#p-keywords' }], '#people-list li, #people-list p.empty'],
  ['open Synonyms', null, [{ hash: '#synonyms' }], '#syn-table tbody tr'],
  ['filter synonyms 猫', '#synonyms', [{ fill: '#s-filter', value: '猫' }], '#syn-table tbody tr'],
  ['open Config', null, [{ hash: '#config' }], '#c-save'],
  ['open Conversations', null, [{ hash: '#conversations' }], '#conv-list li, #conv-list tr'],
  ['open a transcript (newest first)', '#conversations', [{ hash: `#conversations/${encodeURIComponent(CONV)}` }], '#cv-messages li'],
  ['search a transcript 猫咪', `#conversations/${encodeURIComponent(CONV)}`, [{ fill: '#cv-keywords', value: '猫咪' }, { submit: '#cv-keywords' }], '#cv-messages li, #cv-messages p.empty'],
  ['open Chat', null, [{ hash: '#chat' }], '#chat-form, #chat-no-provider'],
  ['open Backups', null, [{ hash: '#backups' }], '#bk-table tbody tr, #bk-list p.empty'],
  ['open Stats', null, [{ hash: '#stats' }], '#st-totals'],
  ['stats per week', '#stats', [{ select: '#st-bucket', value: 'week' }], '#st-growth'],
  // the issue 18 review (s23-audit18): a person's page, People sorted by affinity
  ['open a person (memories, messages)', '#people', [{ hash: '#people/10007' }], '#person-message-list li'],
  ['sort people by affinity', '#people', [{ select: '#p-sort', value: 'affinity' }], '#people-list li'],
];

// In the page: marks what `ready` matches now as old, runs the actions,
// and resolves with the milliseconds until `ready` matches something new,
// no loading line is left and a frame was painted.
export async function timed(page, actions, ready) {
  return page.evaluate(async ({ actions, ready }) => {
    for (const el of document.querySelectorAll(ready)) el.dataset.benchOld = '1';
    const done = () => [...document.querySelectorAll(ready)].some((el) => !el.dataset.benchOld)
      && !document.querySelector('#panel .loading');
    const t0 = performance.now();
    for (const a of actions) {
      if (a.hash) location.hash = a.hash;
      else if (a.fill) { const el = document.querySelector(a.fill); el.value = a.value; el.dispatchEvent(new Event('input', { bubbles: true })); }
      else if (a.select) { const el = document.querySelector(a.select); el.value = a.value; el.dispatchEvent(new Event('change', { bubbles: true })); }
      else if (a.click) document.querySelector(a.click).click();
      else if (a.submit) document.querySelector(a.submit).form.requestSubmit();
    }
    await new Promise((resolve, reject) => {
      if (done()) { resolve(); return; }
      const mo = new MutationObserver(() => { if (done()) { mo.disconnect(); resolve(); } });
      mo.observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
      setTimeout(() => { mo.disconnect(); reject(new Error(`not drawn in 30 s: ${ready}`)); }, 30000);
    });
    await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
    return performance.now() - t0;
  }, { actions, ready });
}

// One step from a panel drawn before it (the step's own `before`, else
// Config, or Memory for Config itself: a navigation from elsewhere),
// timed: → ms.
export async function runStep(page, [, before, actions, ready]) {
  const settle = () => page.waitForFunction(() => !document.querySelector('#panel .loading'));
  if (before) {
    await page.evaluate((h) => { location.hash = h; }, before);
  } else {
    const from = actions[0].hash === '#config' ? '#memory' : '#config';
    await page.evaluate((h) => { location.hash = h; }, from);
    await page.locator(`main[data-panel=${from.slice(1)}]`).waitFor();
  }
  await settle();
  return timed(page, actions, ready);
}
