// qq.test.mjs — issue 15: the QQ world on the Memory page. `zcor serve`
// with worlds.qq in forward mode dialling the scripted NapCat of
// tests/fake_napcat.mjs (tests/qq_world.mjs; nothing here wakes the bot,
// so the scripted model is never asked), then in Chromium the
// Conversations panel: the QQ connection card (#qq-status) in Chinese and
// English, kept fresh while the panel is open; the group's name in the
// 群名 column; a recalled message marked 已撤回 in its transcript; a
// refused token (both ways NapCat refuses) said as token 被拒; axe-core
// finds nothing on the panel with the card.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

import { seg } from '../fake_napcat.mjs';
import { BOT, sleep, startWorld, withWorld } from '../qq_world.mjs';
import { openPanel, shot, withBrowser } from './serve.mjs';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const GROUP = 762001234;
const CONV = `group:${GROUP}`;

// axe-core on the page as it is (injected through the DevTools protocol,
// which the page's CSP does not govern): no violations at all.
async function axeClean(page) {
  await page.evaluate(AXE);
  const res = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
  assert.deepEqual(res.violations.map((v) => `${v.impact} ${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), []);
}

// The QQ card as { row heading: value }, once it is drawn.
async function card(page) {
  await page.locator('#qq-status table tr').first().waitFor();
  return page.locator('#qq-status table tr').evaluateAll((trs) => Object.fromEntries(trs.map((tr) =>
    [tr.querySelector('th').textContent.trim(), tr.querySelector('td').textContent.trim()])));
}

// Waits until the card (without a reload) satisfies pred; the last card otherwise.
async function cardUntil(page, pred, ms) {
  const t0 = Date.now();
  let c;
  while (Date.now() - t0 < ms) {
    c = await card(page);
    if (pred(c)) return c;
    await sleep(100);
  }
  assert.fail(`the QQ card did not get there within ${ms} ms: ${JSON.stringify(c)}`);
}

// polls GET worlds until pred(qq) holds
async function worldsUntil(w, pred, ms = 8000) {
  const t0 = Date.now();
  for (;;) {
    const { qq } = await w.worlds();
    if (pred(qq)) return qq;
    if (Date.now() - t0 > ms) assert.fail(`GET worlds did not get there within ${ms} ms: ${JSON.stringify(qq)}`);
    await sleep(50);
  }
}

const TIME = /\d{1,2}:\d{2}:\d{2}/; // fmtTime: the browser's toLocaleString

test('[issue 15] QQ card (已连接 / connected, QQ number, heartbeat, reconnects, kept fresh), 群名, 已撤回, axe clean', async () => {
  await withWorld({}, async (w) => {
    await worldsUntil(w, (q) => q.connection?.state === 'connected' && q.connection.lastHeartbeat != null);
    await withBrowser(w.srv, async ({ page }) => {
      // 1. the card, in the page's default language
      await openPanel(page, w.srv, 'conversations');
      await page.locator('#h-qq', { hasText: 'QQ 连接' }).waitFor();
      let c = await card(page);
      assert.equal(c['状态'], '已连接', JSON.stringify(c));
      assert.equal(c['机器人 QQ 号'], String(BOT), JSON.stringify(c));
      assert.match(c['最近心跳'] ?? '', TIME, JSON.stringify(c));
      assert.match(c['连接时间'] ?? '', TIME, JSON.stringify(c));
      assert.equal(c['重连次数'], '0', JSON.stringify(c));
      assert.equal(c['模式'], 'forward', JSON.stringify(c));
      // the heartbeat cell follows NapCat's heartbeats while the panel is open
      const beat = c['最近心跳'];
      await cardUntil(page, (x) => x['最近心跳'] !== beat && TIME.test(x['最近心跳']), 12000);

      // … and in English
      await page.getByRole('button', { name: /^English/ }).click();
      await page.locator('#h-qq', { hasText: 'QQ connection' }).waitFor();
      c = await card(page);
      assert.equal(c.State, 'connected', JSON.stringify(c));
      assert.equal(c['Bot QQ number'], String(BOT), JSON.stringify(c));
      assert.equal(c.Reconnects, '0', JSON.stringify(c));
      await page.click('#lang'); // back to Chinese
      await page.locator('#h-qq', { hasText: 'QQ 连接' }).waitFor();
      await shot(page, 'qq-card');

      // 5. axe-core: the panel with the card
      await axeClean(page);

      // 2. a group message (it does not wake the bot) names its group
      const id = w.nc.groupMessage({ groupId: GROUP, userId: 20001, nickname: '阿山', groupName: '周末爬山群',
        segments: [seg.text('周六早上八点在香山东门集合')] });
      await w.waitLogged(CONV, 1);
      await openPanel(page, w.srv, 'conversations');
      const row = page.locator('#conv-list tbody tr', { hasText: CONV });
      await row.waitFor();
      const heads = await page.locator('#conv-list thead th').allTextContents();
      const col = heads.indexOf('群名');
      assert.ok(col >= 0, `no 群名 column: ${heads}`);
      assert.equal((await row.locator('td').nth(col).textContent()).trim(), '周末爬山群');

      // 3. its transcript: not recalled, then recalled by its sender
      await row.locator('button.link').click();
      const msg = page.locator('#cv-messages li', { hasText: '周六早上八点在香山东门集合' });
      await msg.waitFor();
      assert.match(await msg.innerText(), new RegExp(`#${id}\\b`));
      assert.equal(await msg.locator('.recalled').count(), 0, 'marked before it was recalled');
      assert.doesNotMatch(await msg.innerText(), /已撤回/);
      w.nc.groupRecall({ groupId: GROUP, userId: 20001, messageId: id });
      await w.waitLogged(CONV, (items) => items.some((m) => m.id === String(id) && m.recalledAt));
      await page.locator('#conv-detail form button[type=submit]').click(); // the transcript again
      await msg.locator('.recalled').waitFor({ timeout: 8000 });
      assert.match(await msg.locator('.meta').innerText(), /已撤回/);
      assert.match(await msg.innerText(), /周六早上八点在香山东门集合/, 'the recalled text stays readable');
      await shot(page, 'qq-recalled');

      // the card follows a lost connection without a reload: zcor dials
      // again and the card counts the reconnect
      w.nc.drop();
      await cardUntil(page, (x) => x['重连次数'] === '1' && x['状态'] === '已连接', 15000);
    });
  });
});

test('[issue 15] QQ card: a refused token (HTTP 401 and NapCat\'s retcode 1403) says token 被拒', async () => {
  const worlds = await Promise.all(['http', 'retcode'].map((authFailure) =>
    startWorld({ napcat: { authFailure }, envToken: 'not-the-token', ready: false })));
  try {
    await Promise.all(worlds.map((w) => worldsUntil(w, (q) => q.connection?.state === 'refused')));
    for (const w of worlds) {
      await withBrowser(w.srv, async ({ page }) => {
        await openPanel(page, w.srv, 'conversations');
        const c = await card(page);
        assert.equal(c['状态'], 'token 被拒', JSON.stringify(c));
        assert.match(c['最近错误'] ?? '', /token/i, JSON.stringify(c));
        assert.equal(await page.locator('#qq-status table.qq-refused').count(), 1);
        await page.getByRole('button', { name: /^English/ }).click();
        await page.locator('#h-qq', { hasText: 'QQ connection' }).waitFor();
        assert.equal((await card(page)).State, 'token refused');
      });
    }
  } finally {
    const errs = [];
    for (const w of worlds) await w.stop().catch((e) => errs.push(e));
    if (errs.length) throw errs[0];
  }
});
