// issue18_conversation_page.test.mjs — issue 18, "per conversation": one
// place (#conversations/<key>) with the conversation's memories (its own
// scope, and how many global ones it sees besides; no other
// conversation's), its transcript newest first, its views, its turns
// (GET turns?conversation=) and its digest runs; reached from the
// Conversations panel and from a conversation key elsewhere in the page
// (a memory's scope, a History record). The turn and the digest run
// against the scripted model of tests/fake_openai.mjs. axe-core at 1440 /
// 390 px, zh and en; at 390 px the page is no wider than the screen.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { startFakeOpenAI } from '../fake_openai.mjs';
import { withPage, openPanel, axeClean, eachWidthAndLanguage, shot, tmp } from './serve.mjs';

const CONV = 'console:web';

test('issue18_conversation_page: memories in scope, global count, transcript, views, turns and digests in one place', async () => {
  const fake = await startFakeOpenAI([
    // the turn: a memory written in the conversation, then the reply
    { toolCalls: [{ name: 'zcor_memory_write', arguments: { title: '本对话的咖啡店', keywords: ['咖啡'], content: '东门那家叫晨光' } }] },
    { content: '记住了，叫晨光。' },
    // the digest run
    { content: '没有要整理的。' },
  ]);
  const dir = tmp();
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ provider: { baseUrl: fake.baseUrl, model: 'fake', maxRetries: 0 } }));
  try {
    await withPage(async ({ srv, page }) => {
      const bound = (conv, body) => fetch(`${srv.base}/api/v1/nodes`, { method: 'POST',
        headers: { Authorization: `Bearer ${srv.token}`, 'Content-Type': 'application/json', 'X-Zcor-Conversation': conv },
        body: JSON.stringify(body) });
      assert.equal((await srv.api('POST', 'nodes', { title: '全局的规矩', content: '大家都知道' })).status, 201);
      assert.equal((await bound('group:100000001', { title: '别的群的秘密', content: '不该出现' })).status, 201);
      const logged = await srv.api('POST', `conversations/${encodeURIComponent(CONV)}/messages`, { messages: [
        { id: 'w1', time: '2026-11-20T12:00:00Z', senderId: '42', senderName: '小红', text: '第一句' },
        { id: 'w2', time: '2026-11-20T12:01:00Z', senderId: '42', senderName: '小红', text: '第二句' }] });
      assert.equal(logged.status, 200, JSON.stringify(logged.body));
      const chat = await fetch(`${srv.base}/api/v1/chat`, { method: 'POST',
        headers: { Authorization: `Bearer ${srv.token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ conversation: CONV, text: '东门那家咖啡店叫晨光，记一下' }) });
      assert.equal(chat.status, 200);
      assert.match(await chat.text(), /记住了/);
      const dig = await srv.api('POST', `conversations/${encodeURIComponent(CONV)}/digest`, {});
      assert.equal(dig.status, 200, JSON.stringify(dig.body));
      const mine = (await srv.api('GET', 'find?scope=console%3Aweb')).body.items;
      assert.deepEqual(mine.map((n) => n.title), ['本对话的咖啡店']);

      // from the Conversations panel
      await openPanel(page, srv, 'conversations');
      await page.locator('#conv-list tr', { hasText: CONV }).locator('button.link').click();
      await page.locator('#cv-title', { hasText: CONV }).waitFor();
      // its own memories, not the other group's, not the global one
      const own = page.locator('#cv-memories li');
      await own.first().waitFor();
      assert.equal(await own.count(), 1);
      assert.match(await own.innerText(), /本对话的咖啡店/);
      assert.doesNotMatch(await page.locator('#cv-sec-memories').innerText(), /别的群的秘密/);
      // the global ones it sees besides: counted, listed on request
      await page.locator('#cv-global-count', { hasText: '它还看得到 1 条全局记忆' }).waitFor();
      assert.equal(await page.locator('#cv-global-list').isVisible(), false);
      await page.click('#cv-global-toggle');
      await page.locator('#cv-global-list li', { hasText: '全局的规矩' }).waitFor();
      assert.equal(await page.locator('#cv-global-list li').count(), 1);
      assert.equal(await page.getAttribute('#cv-global-toggle', 'aria-expanded'), 'true');
      // the transcript, newest first (the chat's message on top)
      const msgs = page.locator('#cv-messages li');
      await msgs.first().waitFor();
      assert.equal(await msgs.count(), 3);
      assert.match(await msgs.first().innerText(), /东门那家咖啡店叫晨光/);
      assert.match(await msgs.last().innerText(), /第一句/);
      // the views (loaded, whatever there is)
      await page.locator('#cv-views ul, #cv-views p.empty').first().waitFor();
      // its turn: the reply, the tool call, the recalled count
      const turn = page.locator('#cv-turns li.turn');
      await turn.first().waitFor();
      assert.equal(await turn.count(), 1);
      assert.match(await turn.innerText(), /记住了，叫晨光。/);
      assert.match(await turn.innerText(), /完成/);
      assert.match(await turn.innerText(), /工具调用 1 次/);
      assert.equal(await turn.locator('li[data-tool="zcor_memory_write"]').count(), 1);
      // its digest run
      await page.locator('#cv-digests li.digest-run').first().waitFor();
      assert.equal(await page.locator('#cv-digests li.digest-run').count(), 1);
      await page.locator('#cv-title').scrollIntoViewIfNeeded();
      await shot(page, 'conversation');
      // the jump bar: a section comes into view with the focus
      await page.locator('#cv-jump button[data-to="cv-sec-turns"]').click();
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'cv-sec-turns');

      await eachWidthAndLanguage(page, async (p, what) => {
        await p.locator('#cv-turns li.turn').first().waitFor();
        await p.locator('#cv-memories li').first().waitFor();
        await axeClean(p, `conversation page ${what}`);
        // on a phone the page is no wider than the screen (the list's table scrolls in its card)
        const vw = p.viewportSize().width;
        assert.ok(await p.evaluate(() => document.documentElement.scrollWidth) <= vw, `${what}: wider than the screen`);
      });
      await page.setViewportSize({ width: 1440, height: 900 });
      if (await page.evaluate(() => document.documentElement.lang) === 'en') await page.click('#lang');

      // a memory opens from the list; its scope links back to the page
      await page.locator('#cv-memories li button.link', { hasText: '本对话的咖啡店' }).click();
      await page.locator('#node-title', { hasText: '本对话的咖啡店' }).waitFor();
      await page.locator('#detail button.conv-link', { hasText: CONV }).click();
      await page.locator('main[data-panel="conversations"] #cv-title', { hasText: CONV }).waitFor();
      assert.ok(page.url().endsWith(`#conversations/${encodeURIComponent(CONV)}`), page.url());
      // a History record's conversation links to it too
      await openPanel(page, srv, 'history');
      const rec = page.locator('#history-list li.record', { has: page.locator(`button.conv-link[data-conversation="${CONV}"]`) }).first();
      await rec.waitFor();
      await rec.locator('button.conv-link').click();
      await page.locator('main[data-panel="conversations"] #cv-title', { hasText: CONV }).waitFor();
      await page.locator('#cv-memories li').first().waitFor();
    }, { dir });
  } finally {
    await fake.close();
  }
});
