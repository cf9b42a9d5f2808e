// issue18_wording.test.mjs — issue 18, defect 12 (wording): one term for
// one thing (回忆, not 召回; a memory's 检索词 everywhere), no internal
// jargon (种子规则, 未整理行数, 归一化, （宿主）), no doubled colons, English
// plurals right. Every panel is read in Chinese and English.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withPage, openPanel } from './serve.mjs';

const PANELS = ['memory', 'recall', 'history', 'people', 'synonyms', 'config', 'conversations', 'chat'];
const JARGON = /召回|种子规则|未整理行数|归一化|宿主/;
const DOUBLED = /[:：]\s*[:：]/;

test('issue18_wording: no jargon nor doubled colons on any panel; a memory\'s 检索词; English plurals', async () => {
  await withPage(async ({ srv, page }) => {
    const parent = (await srv.api('POST', 'nodes', { title: '有一个孩子', content: 'x', keywords: ['家'] })).body.node;
    await srv.api('POST', 'nodes', { title: '孩子', content: 'y', parentId: parent.id });
    await srv.api('POST', `conversations/${encodeURIComponent('group:100000001')}/messages`, {
      messages: [{ id: 'w1', time: '2026-11-29T10:00:00Z', senderId: '1', senderName: 'a', text: '你好' }] });
    for (const lang of ['zh', 'en']) {
      for (const p of PANELS) {
        await openPanel(page, srv, p);
        await page.locator(`main[data-panel="${p}"] h2`).first().waitFor();
        await page.waitForFunction(() => !document.querySelector('main p.loading'));
        const text = await page.locator('body').innerText();
        assert.doesNotMatch(text, JARGON, `${p} (${lang})`);
        assert.doesNotMatch(text, DOUBLED, `${p} (${lang})`);
      }
      if (lang === 'zh') await page.click('#lang');
    }
    await page.click('#lang'); // back to Chinese

    // a memory's keywords are its 检索词, in the detail as in the editor and History
    await openPanel(page, srv, `memory/${parent.id}`);
    await page.locator('#node-title', { hasText: '有一个孩子' }).waitFor();
    assert.equal(await page.locator('#node-keywords').locator('xpath=preceding-sibling::h3[1]').textContent(), '检索词');
    // the confirm step, then the refusal: 1 child, in English
    await page.click('#lang');
    await page.locator('#node-title').waitFor();
    await page.click('#delete-node');
    await page.click('#confirm-delete');
    await page.locator('#delete-refused, main .error', { hasText: 'it still has 1 child memory:' }).first().waitFor();
  });
});
