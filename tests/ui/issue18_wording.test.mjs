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

// s23-minor18: a Chinese label takes the full-width colon (消息里的词：,
// 好感度（−100…100）：, 服务器说明（英文）：); an ASCII one after a Chinese
// character (or a bracket closing Chinese words) is a slip. English keeps ': '.
const ASCII_AFTER_CJK = /[\u3400-\u9fff\uff09](\s*\([^)]*\))?\s?:(?!\/)/;

test('issue18_minor_full_width_colons: the Chinese page puts ：after its labels, the English one ": "', async () => {
  await withPage(async ({ srv, page }) => {
    await srv.api('POST', 'nodes', { title: '猫咪笔记', content: '猫咪喜欢晒太阳', keywords: ['猫咪'] });
    await srv.api('PUT', 'people/12345', { name: '小明', relationship: '同学', affinity: 10, reason: '初识' });
    const slips = async (where) => {
      await page.waitForFunction(() => !document.querySelector('main p.loading'));
      const text = await page.locator('body').innerText();
      const m = text.match(ASCII_AFTER_CJK);
      assert.equal(m, null, `${where}: “${m && text.slice(Math.max(0, m.index - 20), m.index + 20)}”`);
    };
    for (const p of PANELS) {
      await openPanel(page, srv, p);
      await page.locator(`main[data-panel="${p}"] h2`).first().waitFor();
      await slips(p);
    }
    // the people form's affinity label
    await openPanel(page, srv, 'people');
    await page.click('#new-person');
    await page.locator('label[for=p-affinity]').waitFor();
    await slips('people form');
    assert.match(await page.locator('label[for=p-affinity]').textContent(), /^好感度（−100…100）：/);
    // the recall preview's words of the message
    await openPanel(page, srv, 'recall');
    await page.fill('#rp-text', '猫咪在干嘛');
    await page.fill('#rp-conv', 'group:1');
    await page.click('#rp-go');
    await page.locator('#rp-header').waitFor();
    assert.match(await page.locator('#rp-out').innerText(), /消息里的词：/);
    await slips('recall preview');
    // an error box: the server's sentence introduced with ：
    await page.fill('#rp-conv', 'nonsense');
    await page.click('#rp-go');
    await page.locator('#rp-out .error').waitFor();
    assert.match(await page.locator('#rp-out .error').innerText(), /服务器说明（英文）：/);
    await slips('recall refused');
    // English keeps the ASCII colon
    await page.click('#lang');
    await openPanel(page, srv, 'people');
    await page.click('#new-person');
    assert.match(await page.locator('label[for=p-affinity]').textContent(), /^Affinity \(−100…100\): /);
  });
});
