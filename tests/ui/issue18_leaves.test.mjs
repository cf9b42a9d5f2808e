// issue18_leaves.test.mjs — issue 18, defect 8 (the tree's leaves showed ▸
// until clicked): the listing (GET roots, GET nodes/{id}/children) tells
// hasChildren, computed in its own statement, and a leaf is drawn with no
// expander and no aria-expanded; a branch keeps ▸ and opens. No children
// are asked for before the operator opens a branch. axe-core at 1440 /
// 390 px, zh and en.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withPage, openPanel, axeClean, eachWidthAndLanguage } from './serve.mjs';

test('issue18_tree_leaves_no_expander: the listing says hasChildren, a leaf shows no ▸', async () => {
  await withPage(async ({ srv, page }) => {
    const branch = (await srv.api('POST', 'nodes', { title: '有孩子的根', content: 'a' })).body.node;
    const kid = (await srv.api('POST', 'nodes', { title: '孩子叶子', content: 'b', parentId: branch.id })).body.node;
    const grand = (await srv.api('POST', 'nodes', { title: '孩子的孩子', content: 'c', parentId: kid.id })).body.node;
    const leaf = (await srv.api('POST', 'nodes', { title: '孤单的根', content: 'd' })).body.node;

    // the server: each item says whether it has children
    const roots = (await srv.api('GET', 'roots')).body.items;
    assert.equal(roots.find((n) => n.id === branch.id).hasChildren, true);
    assert.equal(roots.find((n) => n.id === leaf.id).hasChildren, false);
    const kids = (await srv.api('GET', `nodes/${branch.id}/children`)).body.items;
    assert.deepEqual(kids.map((n) => [n.id, n.hasChildren]), [[kid.id, true]]);
    const grands = (await srv.api('GET', `nodes/${kid.id}/children`)).body.items;
    assert.deepEqual(grands.map((n) => [n.id, n.hasChildren]), [[grand.id, false]]);

    const childAsks = [];
    page.on('request', (r) => { if (/\/children(\?|$)/.test(r.url())) childAsks.push(r.url()); });
    await openPanel(page, srv, 'memory');
    const item = (id) => page.locator(`.tree [role=treeitem][data-id="${id}"]`);
    await item(leaf.id).waitFor();
    // a leaf: no ▸, nothing to expand, before any click
    assert.equal((await item(leaf.id).locator(':scope > .twisty').textContent()).trim(), '');
    assert.equal(await item(leaf.id).getAttribute('aria-expanded'), null);
    // a branch: ▸ and closed
    assert.equal(await item(branch.id).locator(':scope > .twisty').textContent(), '▸');
    assert.equal(await item(branch.id).getAttribute('aria-expanded'), 'false');
    assert.equal(childAsks.length, 0, 'no children asked for before a branch opens');
    // clicking a leaf's (empty) expander opens nothing and asks nothing
    await item(leaf.id).locator(':scope > .twisty').dispatchEvent('click');
    assert.equal(await item(leaf.id).getAttribute('aria-expanded'), null);
    assert.equal(childAsks.length, 0);

    await item(branch.id).locator(':scope > .twisty').click();
    await item(kid.id).waitFor();
    assert.equal(await item(branch.id).getAttribute('aria-expanded'), 'true');
    assert.equal(await item(kid.id).locator(':scope > .twisty').textContent(), '▸');
    assert.equal(await item(kid.id).getAttribute('aria-expanded'), 'false');
    await item(kid.id).locator(':scope > .twisty').click();
    await item(grand.id).waitFor();
    assert.equal((await item(grand.id).locator(':scope > .twisty').textContent()).trim(), '');
    assert.equal(await item(grand.id).getAttribute('aria-expanded'), null);

    // closed again (axe on an open branch: ui/issue18_tree_open_branch)
    await item(branch.id).locator(':scope > .twisty').click();
    assert.equal(await item(branch.id).getAttribute('aria-expanded'), 'false');
    await eachWidthAndLanguage(page, async (p, what) => {
      await p.locator('.tree [role=treeitem]').first().waitFor();
      await axeClean(p, `tree leaves ${what}`);
    });
  });
});
