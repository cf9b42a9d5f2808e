// issue18_sort.test.mjs — issue 18, missing: sorting the page's search
// results (by last change, by how often recall injected them, by
// creation) and a content preview in each result. axe-core at 1440 /
// 390 px, zh and en.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withPage, openPanel, cli, axeClean, eachWidthAndLanguage } from './serve.mjs';

test('issue18_sort_and_preview: results sorted by change, hits or creation; each with a content preview', async () => {
  await withPage(async ({ srv, page }) => {
    const mk = async (title, content) => (await srv.api('POST', 'nodes', { title, content, keywords: ['排序'] })).body.node;
    const a = await mk('排序甲', '短的内容');
    const b = await mk('排序乙 刺猬', '长'.repeat(100));
    const c = await mk('排序丙', '丙的内容');
    await srv.api('PUT', `nodes/${a.id}`, { title: '排序甲', content: '短的内容，改过' }); // a: the last changed
    // b recalled twice (hits count in the CLI's process, written when it exits)
    for (let i = 0; i < 2; i++) {
      const r = cli(srv.dir, '--conversation', 'group:100000001', 'recall', '--message', '刺猬在哪');
      assert.equal(r.status, 0, r.stderr);
    }
    assert.ok(JSON.parse(cli(srv.dir, 'tool', 'zcor_memory_read', JSON.stringify({ id: b.id })).stdout).node.hits >= 2);
    const bad = await srv.api('GET', 'find?sort=random');
    assert.equal(bad.status, 400);
    assert.match(bad.body.error.message, /argument 'sort'/);

    await openPanel(page, srv, 'memory');
    await page.fill('#q-keywords', '排序');
    await page.locator('main form button[type=submit]').first().click();
    const titles = () => page.locator('main ul.list[aria-label="搜索结果"] > li > button.link').allTextContents();
    await page.waitForFunction(() => document.querySelectorAll('main ul.list[aria-label="搜索结果"] > li').length === 3);
    assert.deepEqual(await titles(), ['排序甲', '排序丙', '排序乙 刺猬']);
    await page.selectOption('#q-sort', 'hits');
    await page.waitForFunction(() => document.querySelector('main ul.list[aria-label="搜索结果"] > li > button.link')?.textContent === '排序乙 刺猬');
    assert.match(await page.locator('main ul.list > li', { hasText: '排序乙' }).locator('.meta').first().innerText(), /回忆 \d+ 次/);
    await page.selectOption('#q-sort', 'created');
    await page.waitForFunction(() => document.querySelector('main ul.list[aria-label="搜索结果"] > li > button.link')?.textContent === '排序丙');
    assert.deepEqual(await titles(), ['排序丙', '排序乙 刺猬', '排序甲']);
    // the preview: the content's start, cut at 80 characters
    assert.equal(await page.locator('main ul.list > li', { hasText: '排序乙' }).locator('.preview').textContent(), `${'长'.repeat(80)}…`);
    assert.equal(await page.locator('main ul.list > li', { hasText: '排序丙' }).locator('.preview').textContent(), '丙的内容');
    void c;

    await eachWidthAndLanguage(page, async (p, what) => {
      await p.locator('#q-sort').waitFor();
      await p.locator('main ul.list > li .preview').first().waitFor();
      await axeClean(p, `memory results ${what}`);
    });
  });
});
