// digest.test.mjs — issue 16: a conversation's digest runs on the Memory
// page. `zcor serve` with a scripted model (tests/fake_openai.mjs) whose
// digest makes one qq_memory upsert; in Chromium the Conversations
// panel's 摘要记录 section: 立即摘要 is disabled while the run goes,
// its outcome is shown, the run is listed (time, trigger, outcome,
// lines/chars, cut, tool calls) with its call and what it changed, and
// its link opens History filtered to the run, showing the upsert's
// record; axe-core finds nothing on either panel.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

import { startFakeOpenAI } from '../fake_openai.mjs';
import { withPage, openPanel, shot, tmp } from './serve.mjs';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const CONV = 'group:500';

async function axeClean(page) {
  await page.evaluate(AXE);
  const res = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
  assert.deepEqual(res.violations.map((v) => `${v.impact} ${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), []);
}

test('[issue 16] 摘要记录: 立即摘要 (disabled while it runs) shows the outcome; the run is listed with its tool call; its link opens History; axe clean', async () => {
  const upsert = { action: 'upsert', path: 'conversations/group-500/MEMORY.md', name: '周五固定开黑', meaning: '晚上八点', section: '惯例与偏好', date: '2026-11-20' };
  const fake = await startFakeOpenAI([
    // the first answer waits: the button is seen disabled meanwhile
    { toolCalls: [{ name: 'qq_memory', arguments: upsert }], delayMs: 800 },
    { content: '写了一条。', usage: { prompt_tokens: 40, completion_tokens: 4 } },
  ]);
  const dir = tmp();
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ provider: { baseUrl: fake.baseUrl, model: 'fake', maxRetries: 0 } }));
  try {
    await withPage(async ({ srv, page }) => {
      const messages = Array.from({ length: 3 }, (_, i) => ({ id: `m${i}`, time: new Date(Date.UTC(2026, 10, 20, 12, i)).toISOString(),
        senderId: '42', senderName: '小红', text: `周五晚上八点开黑 ${i}` }));
      const logged = await srv.api('POST', `conversations/${encodeURIComponent(CONV)}/messages`, { messages });
      assert.equal(logged.status, 200, JSON.stringify(logged.body));

      await openPanel(page, srv, `conversations/${CONV}`);
      await page.locator('#h-cv-digests', { hasText: '摘要记录' }).waitFor();
      await page.locator('#cv-digests p.empty', { hasText: '还没有摘要记录' }).waitFor();
      const btn = page.getByRole('button', { name: '立即摘要' });
      await btn.click();
      // disabled while the run goes, enabled again after
      assert.equal(await btn.isDisabled(), true, 'the button is disabled while the digest runs');
      await page.locator('#cv-digest-outcome', { hasText: /摘要 #1 完成：给了 3 行，1 次工具调用/ }).waitFor();
      assert.equal(await btn.isDisabled(), false);
      assert.equal(fake.requests.length, 2);

      // the run, listed
      const run = page.locator('#cv-digests li.digest-run');
      await run.first().waitFor();
      assert.equal(await run.count(), 1);
      const text = await run.innerText();
      assert.match(text, /#1/);
      assert.match(text, /结果：完成/);
      assert.match(text, /触发：手动/);
      assert.match(text, /给了 3\/3 行、\d+ 字/);
      assert.match(text, /未截断/);
      assert.match(text, /工具调用：1/);
      const call = run.locator('li[data-tool="qq_memory"]');
      assert.equal(await call.count(), 1);
      assert.match(await call.innerText(), /成功/);
      assert.match(await call.innerText(), /upsert · conversations\/group-500\/MEMORY\.md · 周五固定开黑 · 晚上八点/);
      await shot(page, 'digest-runs');
      await axeClean(page);

      // in English too
      await page.getByRole('button', { name: /^English/ }).click();
      await page.locator('#h-cv-digests', { hasText: 'Digest runs' }).waitFor();
      assert.match(await page.locator('#cv-digests li.digest-run').innerText(), /Outcome: done/);
      await page.click('#lang');
      await page.locator('#h-cv-digests', { hasText: '摘要记录' }).waitFor();

      // the link: History, filtered to the run (actor digest, its window)
      await page.locator('#cv-digests li.digest-run button.digest-history').click();
      await page.locator('main[data-panel="history"]').waitFor();
      await page.locator('#history-list li.record').first().waitFor();
      // issue16_digest_history_link_own_run: by actor and conversation,
      // not a word search that also finds other conversations' runs
      assert.equal(await page.inputValue('#h-actor'), 'digest');
      assert.equal(await page.inputValue('#h-conv'), CONV);
      assert.notEqual(await page.inputValue('#h-from'), '');
      assert.notEqual(await page.inputValue('#h-to'), '');
      const recs = page.locator('#history-list li.record');
      assert.equal(await recs.count(), 1, await page.locator('#history-list').innerText());
      assert.match(await recs.innerText(), /qq_memory/);
      assert.match(await recs.innerText(), /操作者：整理/);
      assert.match(await recs.innerText(), new RegExp(`对话：${CONV}`));
      await axeClean(page);

      // a second run with nothing new says so and lists nothing more
      await openPanel(page, srv, `conversations/${CONV}`);
      await page.locator('#cv-digests li.digest-run').first().waitFor();
      await page.getByRole('button', { name: '立即摘要' }).click();
      await page.locator('#cv-digest-outcome', { hasText: '没有新消息' }).waitFor();
      // (the list is read again after the outcome: wait for it to be back)
      await page.locator('#cv-digests li.digest-run').first().waitFor();
      assert.equal(await page.locator('#cv-digests li.digest-run').count(), 1);
    }, { dir });
  } finally {
    await fake.close();
  }
});
