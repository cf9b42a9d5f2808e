// chat.test.mjs — issue 14, part 3: the Chat panel in Chromium against a
// real `zcor serve` and the scripted model of tests/fake_openai.mjs: type,
// see the text stream in, expand the tool calls, follow the link to the
// memory the model wrote, axe-core finds nothing, and text the model or a
// memory carries (`<img onerror>`) shows as text. Without a provider the
// panel says how to configure one and the rest of the page works.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

import { startFakeOpenAI } from '../fake_openai.mjs';
import { withPage, openPanel, tmp, shot } from './serve.mjs';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const EVIL = '<img src=x onerror=alert(1)>';

// axe-core on the page as it is (injected through the DevTools protocol,
// which the page's CSP does not govern): no violations.
async function axeClean(page) {
  await page.evaluate(AXE);
  const res = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
  assert.deepEqual(res.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), []);
}

test('[issue 14] chat pane: streamed reply, tool calls expandable, the written memory linked, <img onerror> shown as text, axe clean', async () => {
  const fake = await startFakeOpenAI([
    { content: `我先记一下${EVIL}`, toolCalls: [{ name: 'zcor_memory_write', arguments: { title: `${EVIL}晨光`, keywords: ['晨光'], content: '东门那家咖啡店叫晨光' } }] },
    { content: `记住了：${EVIL}晨光。`, delayMs: 2500 },
  ]);
  const dir = tmp();
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ provider: { baseUrl: fake.baseUrl, model: 'fake', maxRetries: 0 } }));
  try {
    await withPage(async ({ srv, page }) => {
      // another console conversation is offered; a group is not
      for (const key of ['console:other', 'group:100000001'])
        assert.equal((await srv.api('POST', `conversations/${encodeURIComponent(key)}/messages`,
          { messages: [{ id: `x-${key}`, senderId: '111', text: 'hi' }] })).status, 200);
      await openPanel(page, srv, 'chat');
      await page.getByRole('tab', { name: '聊天' }).waitFor();
      const select = page.getByLabel('对话（仅 console:*）');
      await page.locator('#chat-conv option[value="console:other"]').waitFor({ state: 'attached' });
      assert.equal(await select.inputValue(), 'console:web');
      assert.deepEqual(await page.locator('#chat-conv option').allTextContents(), ['console:web', 'console:other']);
      await page.locator('#chat-log .empty').waitFor();

      await page.getByLabel('消息（Ctrl+Enter 发送）').fill('东门那家咖啡店叫晨光，记一下');
      await page.getByRole('button', { name: '发送' }).click();
      const ex = page.locator('#chat-log article.exchange').last();
      // the first answer's text is on screen while the model still thinks
      // over the second (2.5 s): it streamed, it did not wait for the end
      await ex.locator('.reply', { hasText: '我先记一下' }).waitFor();
      assert.equal(await ex.locator('p.meta').innerText(), '正在回答…');
      await ex.locator('.reply', { hasText: '记住了' }).waitFor();
      assert.equal(await ex.locator('.reply').innerText(), `记住了：${EVIL}晨光。`);
      assert.equal(await ex.locator('.mine').innerText(), '东门那家咖啡店叫晨光，记一下');
      assert.equal(await page.locator('#chat-log img').count(), 0, 'markup from the model stays text');

      // the tool calls, expandable; the written memory links to the memory
      const tools = ex.locator('details.tools');
      assert.equal(await tools.locator('> summary').innerText(), '工具调用（1）');
      assert.equal(await tools.locator('.calls').isVisible(), false);
      await tools.locator('> summary').click();
      const call = tools.locator('li.call');
      await call.locator('code', { hasText: 'zcor_memory_write' }).waitFor();
      assert.equal(await call.locator('.tag').innerText(), '成功');
      assert.match(await call.locator('pre.args').innerText(), /东门那家咖啡店叫晨光/);
      await ex.locator('details.recalled > summary').click();
      await axeClean(page);
      await shot(page, 'chat');

      const link = call.locator('button.memlink');
      const id = (await link.innerText()).trim();
      assert.match(id, /^m[0-9]+$/);
      await link.click();
      await page.locator('main[data-panel="memory"]').waitFor();
      await page.locator('#detail', { hasText: '东门那家咖啡店叫晨光' }).waitFor();
      assert.match(await page.locator('#detail').innerText(), /<img src=x onerror=alert\(1\)>晨光/);
      assert.equal(await page.locator('#detail img').count(), 0);

      // back in the pane, the turn is listed from its record
      await openPanel(page, srv, 'chat');
      await page.locator('#chat-log article.exchange .reply', { hasText: '记住了' }).waitFor();
      assert.equal(fake.requests.length, 2);
    }, { dir });
  } finally {
    await fake.close();
  }
});

test('[issue 14] chat pane without a provider says how to configure one (docs/PROVIDERS.md); the page works; a send changes nothing', async () => {
  await withPage(async ({ srv, page }) => {
    await openPanel(page, srv, 'chat');
    const notice = page.locator('#chat-no-provider');
    await notice.waitFor();
    assert.match(await notice.innerText(), /config\.json.*"provider".*docs\/PROVIDERS\.md/s);
    await page.getByLabel('消息（Ctrl+Enter 发送）').fill('你好');
    await page.getByRole('button', { name: '发送' }).click();
    await page.locator('#chat-log .error', { hasText: '503 no_provider' }).waitFor();
    assert.equal(await page.getByLabel('消息（Ctrl+Enter 发送）').inputValue(), '你好', 'the text is kept to send later');
    assert.deepEqual((await srv.api('GET', 'conversations')).body.items, []);
    await axeClean(page);
    // the rest of the page
    await page.getByRole('tab', { name: '记忆' }).click();
    await page.locator('main[data-panel="memory"]').waitFor();
    await page.locator('main[data-panel="memory"] .error').waitFor({ state: 'detached', timeout: 2000 }).catch(() => {});
    assert.equal(await page.locator('main .error').count(), 0);
    // English too
    await page.getByRole('button', { name: /^English/ }).click();
    await openPanel(page, srv, 'chat');
    assert.match(await page.locator('#chat-no-provider').innerText(), /No model is configured.*docs\/PROVIDERS\.md/s);
  });
});
