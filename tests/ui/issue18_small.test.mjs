// issue18_small.test.mjs — issue 18, defect 11 (small things): the
// before/after table is coloured and a create lists no internal fields
// (层 hot, 其他属性 {}); the page title is larger than its section
// headings; on a phone the tree's buttons are 44 px and the English tabs
// stay in one row; affinity has a number box beside its slider; 更新于
// changes after saving a person. axe-core at 1440 / 390 px, zh and en.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withPage, openPanel, axeClean, eachWidthAndLanguage } from './serve.mjs';

test('issue18_small_things: diff colours, quiet creates, title size, phone targets and tabs, affinity box, 更新于 after save', async () => {
  await withPage(async ({ srv, page }) => {
    const n = (await srv.api('POST', 'nodes', { title: '小事一件', content: '第一版' })).body.node;
    await srv.api('PUT', `nodes/${n.id}`, { title: '小事一件', content: '第二版' });
    await srv.api('POST', 'nodes', { title: '小事的孩子', content: 'c', parentId: n.id });
    await srv.api('PUT', 'people/10001', { name: '小明', relationship: '同学', affinity: 5, reason: '先' });

    // History: the change coloured, the create without internal fields
    await openPanel(page, srv, 'history');
    const change = page.locator('#history-list li.record', { hasText: '第二版' }).first();
    await change.waitFor();
    const bg = (sel) => change.locator(sel).first().evaluate((el) => getComputedStyle(el).backgroundColor);
    assert.equal(await bg('tr[data-field=content] td.add'), 'rgb(231, 246, 238)');
    assert.equal(await bg('tr[data-field=content] td.del'), 'rgb(253, 236, 234)');
    const created = page.locator('#history-list li.record', { hasText: '小事的孩子' }).first();
    for (const f of ['tier', 'attrs', 'hits', 'pinned', 'kind'])
      assert.equal(await created.locator(`tr[data-field=${f}]`).count(), 0, f);
    assert.equal(await created.locator('tr[data-field=title] td.add').textContent(), '小事的孩子');

    // the title is the largest heading
    const size = (sel) => page.locator(sel).first().evaluate((el) => parseFloat(getComputedStyle(el).fontSize));
    assert.ok(await size('header h1, .top h1') > await size('main h2'));

    // People: a number box beside the slider; 更新于 changes after a save
    await openPanel(page, srv, 'people/10001');
    await page.locator('#p-affinity-num').waitFor();
    const before = await page.locator('#p-times').innerText();
    await page.fill('#p-affinity-num', '42');
    assert.equal(await page.inputValue('#p-affinity'), '42');
    assert.equal(await page.locator('#p-affinity-value').textContent(), '42');
    await page.locator('#p-affinity').fill('-7');
    assert.equal(await page.inputValue('#p-affinity-num'), '-7');
    await page.waitForTimeout(1100); // a second later, as the time is shown
    await page.click('#p-save');
    await page.locator('#status', { hasText: '已保存 小明' }).waitFor();
    await page.waitForFunction((b) => document.querySelector('#p-times')?.innerText !== b, before);
    assert.equal((await srv.api('GET', 'people/10001')).body.person.affinity, -7);

    // a phone: the tree's buttons are touch-sized, English tabs one row
    await page.setViewportSize({ width: 390, height: 844 });
    await openPanel(page, srv, 'memory');
    const twisty = page.locator('.tree .twisty').first();
    await twisty.waitFor();
    const box = await twisty.boundingBox();
    assert.ok(box.width >= 44 && box.height >= 44, JSON.stringify(box));
    await page.click('#lang');
    await page.getByRole('tab', { name: 'Memory' }).waitFor();
    const nav = await page.locator('#tabs').boundingBox();
    const tab = await page.getByRole('tab', { name: 'Memory' }).boundingBox();
    assert.ok(nav.height < tab.height * 1.8, `the tabs take ${nav.height}px (a tab ${tab.height}px)`);
    const wide = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(wide <= 0, `the page is ${wide}px wider than the phone`);
    await page.click('#lang');

    await eachWidthAndLanguage(page, async (p, what) => {
      await openPanel(p, srv, 'people/10001');
      await p.locator('#p-affinity-num').waitFor();
      await axeClean(p, `people ${what}`);
      await openPanel(p, srv, 'history');
      await p.locator('#history-list li.record').first().waitFor();
      await axeClean(p, `history ${what}`);
    });
  });
});
