// issue18_synonyms.test.mjs — issue 18, defect 7 (the synonyms panel drew
// every group in one table thousands of pixels tall, the new-group box at
// the bottom, numbered from 0): the new-group box comes first, the groups
// are paged 20 at a time and numbered from 1, the filter pages too, and a
// new group is shown once added. axe-core at 1440 / 390 px, zh and en.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withPage, openPanel, axeClean, eachWidthAndLanguage } from './serve.mjs';

test('issue18_synonyms_paged: new group first, 20 groups a page numbered from 1, the added group shown', async () => {
  await withPage(async ({ srv, page }) => {
    const total = (await srv.api('GET', 'synonyms')).body.groups.length;
    assert.ok(total > 40, `${total} built-in groups`);
    await openPanel(page, srv, 'synonyms');
    const rows = page.locator('#syn-table tbody tr');
    await rows.first().waitFor();
    assert.equal(await rows.count(), 20);
    assert.equal(await rows.first().locator('td').first().textContent(), '1');
    assert.equal(await rows.last().locator('td').first().textContent(), '20');
    await page.locator('#syn-table .pager', { hasText: `第 1–20 条，共 ${total} 条` }).waitFor();
    // the box for a new group comes before the list
    assert.ok(await page.evaluate(() => !!(document.querySelector('#s-add').compareDocumentPosition(document.querySelector('#syn-table')) & Node.DOCUMENT_POSITION_FOLLOWING)));
    const tall = await page.evaluate(() => document.querySelector('#syn-table').getBoundingClientRect().height);
    assert.ok(tall < 2000, `the table is ${tall}px tall`);
    // the next page
    await page.locator('#syn-table .pager button', { hasText: '下一页' }).click();
    await page.locator('#syn-table .pager', { hasText: `第 21–40 条，共 ${total} 条` }).waitFor();
    assert.equal(await rows.first().locator('td').first().textContent(), '21');
    // a filter starts from its first page
    await page.fill('#s-filter', '猫');
    await page.locator('#syn-table .pager', { hasText: '第 1–' }).waitFor();
    assert.ok(await rows.count() >= 1);
    await page.fill('#s-filter', '');
    // a new group: added, then shown (found by its first term)
    await page.fill('#s-add', '咕噜兽, 噜噜怪');
    await page.click('#s-add-btn');
    await page.locator('#status', { hasText: '已添加词组' }).waitFor();
    await page.locator('#syn-table tbody tr', { hasText: '咕噜兽' }).waitFor();
    assert.equal(await page.inputValue('#s-filter'), '咕噜兽');
    const row = page.locator('#syn-table tbody tr', { hasText: '咕噜兽' });
    assert.equal(await row.locator('td').first().textContent(), String(total + 1));
    await row.getByRole('button', { name: `编辑第 ${total + 1} 组` }).waitFor();

    await eachWidthAndLanguage(page, async (p, what) => {
      await p.locator('#syn-table tbody tr').first().waitFor();
      await axeClean(p, `synonyms ${what}`);
    });
  });
});
