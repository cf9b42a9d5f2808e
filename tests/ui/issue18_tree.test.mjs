// issue18_tree.test.mjs — issue 18, defect 8 (the tree did not scale: every
// root at once, the opened item not marked, the page jumping to the top
// when an item opened, INDEX.md and other conversations' records mixed in
// unlabelled): roots 50 at a time, the memory on show marked, the scroll
// position kept, kind and scope labelled and filterable. axe-core at
// 1440 / 390 px, zh and en.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withPage, openPanel, axeClean, eachWidthAndLanguage } from './serve.mjs';

test('issue18_tree_scales: roots paged, the open memory marked, scroll kept, kind and scope labelled and filtered', async () => {
  await withPage(async ({ srv, page }) => {
    for (let i = 1; i <= 58; i++)
      await srv.api('POST', 'nodes', { title: `根${String(i).padStart(2, '0')}`, content: 'x' });
    const inGroup = await fetch(`${srv.base}/api/v1/nodes`, { method: 'POST',
      headers: { Authorization: `Bearer ${srv.token}`, 'Content-Type': 'application/json', 'X-Zcor-Conversation': 'group:100000001' },
      body: JSON.stringify({ title: '群里的根', content: 'z' }) });
    assert.equal(inGroup.status, 201);
    assert.equal((await srv.api('POST', 'tools/qq_memory', { action: 'write', path: 'INDEX.md', content: '# 索引\n- 一条\n' })).status, 200);
    const roots = (await srv.api('GET', 'roots')).body.items;
    const total = roots.length;
    assert.ok(total >= 60, `${total} roots`);
    assert.ok(roots.some((n) => n.kind === 'document'), 'INDEX.md is a document root');

    await openPanel(page, srv, 'memory');
    const items = page.locator('.tree [role=tree] > [role=treeitem]');
    await items.first().waitFor();
    assert.equal(await items.count(), 50);
    await page.locator('#tree-count', { hasText: `显示 50 / ${total} 个顶层记忆` }).waitFor();
    await page.click('#tree-more');
    await page.waitForFunction((n) => document.querySelectorAll('.tree [role=tree] > [role=treeitem]').length === n, total);
    // the first of the new ones has the focus
    assert.equal(await page.evaluate(() => document.activeElement?.dataset?.id != null), true);

    // labels: kind and scope
    const doc = items.filter({ has: page.locator('.tag.kind', { hasText: '文档（INDEX.md）' }) });
    assert.equal(await doc.count(), 1);
    const grp = items.filter({ hasText: '群里的根' });
    assert.equal(await grp.locator('.tag.scope').textContent(), 'group:100000001');
    // filters
    await page.selectOption('#tree-kind', 'document');
    await page.waitForFunction(() => document.querySelectorAll('.tree [role=tree] > [role=treeitem]').length === 1);
    await page.selectOption('#tree-kind', '');
    await page.selectOption('#tree-scope', 'group:100000001');
    await page.waitForFunction(() => document.querySelectorAll('.tree [role=tree] > [role=treeitem]').length === 1);
    assert.match(await items.first().innerText(), /群里的根/);
    await page.selectOption('#tree-scope', '');
    await items.nth(49).waitFor();

    // open one far down: marked, and the page stays where it was
    const far = items.nth(45);
    await far.scrollIntoViewIfNeeded();
    const y = await page.evaluate(() => window.scrollY);
    assert.ok(y > 200, `scrolled to ${y}`);
    const farId = await far.getAttribute('data-id');
    await far.locator('.node').click();
    await page.locator('#node-title').waitFor();
    assert.equal(await page.locator(`.tree [role=treeitem][data-id="${farId}"]`).getAttribute('aria-current'), 'true');
    assert.equal(await page.locator('.tree [role=treeitem][aria-current]').count(), 1);
    assert.ok(Math.abs((await page.evaluate(() => window.scrollY)) - y) < 50, 'the page did not jump');

    await eachWidthAndLanguage(page, async (p, what) => {
      await p.locator('.tree [role=treeitem]').first().waitFor();
      await axeClean(p, `tree ${what}`);
    });
  });
});
