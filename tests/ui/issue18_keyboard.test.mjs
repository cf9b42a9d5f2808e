// issue18_keyboard.test.mjs — issue 18, defect 9 (keyboard): the arrow
// keys on the tabs keep the focus on the tabs (and only the selected tab
// is a Tab stop); few Tab presses lead from the search box to the tree;
// opening a memory from the tree with Enter keeps the arrow-key browsing
// going. axe-core at 1440 / 390 px, zh and en.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withPage, openPanel, axeClean, eachWidthAndLanguage } from './serve.mjs';

const focusedId = (page) => page.evaluate(() => document.activeElement?.id || document.activeElement?.dataset?.id || document.activeElement?.tagName);

test('issue18_keyboard: tabs keep the focus, few Tabs to the tree, Enter in the tree keeps browsing', async () => {
  await withPage(async ({ srv, page }) => {
    const ids = [];
    for (let i = 1; i <= 25; i++) ids.push((await srv.api('POST', 'nodes', { title: `键盘${String(i).padStart(2, '0')}`, content: '键盘测试' })).body.node.id);

    await openPanel(page, srv, 'memory');
    await page.locator('[role=treeitem]').first().waitFor();
    // the tabs: one Tab stop, the arrows move the focus with the selection
    assert.equal(await page.locator('#tabs [role=tab][tabindex="0"]').count(), 1);
    await page.locator('#tab-memory').focus();
    await page.keyboard.press('ArrowRight');
    await page.locator('main[data-panel=recall]').waitFor();
    await page.waitForFunction(() => document.activeElement?.id === 'tab-recall');
    await page.keyboard.press('ArrowRight');
    await page.locator('main[data-panel=history]').waitFor();
    await page.waitForFunction(() => document.activeElement?.id === 'tab-history');
    await page.keyboard.press('ArrowLeft');
    await page.waitForFunction(() => document.activeElement?.id === 'tab-recall');
    await page.keyboard.press('ArrowLeft');
    await page.waitForFunction(() => document.activeElement?.id === 'tab-memory');
    assert.equal(await page.locator('#tabs [role=tab][tabindex="0"]').getAttribute('id'), 'tab-memory');

    // from the search box to the tree
    await page.locator('[role=treeitem]').first().waitFor();
    await page.locator('#q-keywords').focus();
    let presses = 0;
    while (presses < 80 && (await page.evaluate(() => document.activeElement?.getAttribute('role'))) !== 'treeitem') {
      await page.keyboard.press('Tab');
      presses++;
    }
    console.log(`# Tab presses from the search box to the tree: ${presses}`);
    assert.ok(presses <= 20, `${presses} Tab presses from the search box to the tree`);

    // Enter opens the memory; the arrows go on from there
    const first = await focusedId(page);
    await page.keyboard.press('Enter');
    await page.locator('#node-title').waitFor();
    assert.equal(await focusedId(page), first);
    await page.keyboard.press('ArrowDown');
    const second = await focusedId(page);
    assert.notEqual(second, first);
    await page.keyboard.press('Enter');
    await page.waitForFunction((id) => location.hash === `#memory/${id}`, second);
    assert.equal(await focusedId(page), second);

    await eachWidthAndLanguage(page, async (p, what) => {
      await p.locator('[role=treeitem]').first().waitFor();
      await axeClean(p, `memory ${what}`);
    });
  });
});
