// issue18_tree_open_branch.test.mjs — issue 18, axe's
// label-content-name-mismatch on an open tree branch: a treeitem named
// by its title and tags (aria-labelledby) held its children's group, so
// once open its visible text (its own and every child's) was not in its
// name (WCAG 2.5.3). The group now sits beside the item, owned by it
// (aria-owns): the item's text is its title and tags, its name the same;
// the tree still nests for assistive technology and the keyboard. The
// Memory panel's axe check runs with branches open, two levels deep, at
// 1440 / 390 px, zh and en; the arrow keys still go in and out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withPage, openPanel, axeClean, eachWidthAndLanguage } from './serve.mjs';

test('issue18_tree_open_branch_name_matches_text: an open branch passes axe (label-content-name-mismatch)', async () => {
  await withPage(async ({ srv, page }) => {
    const branch = (await srv.api('POST', 'nodes', { title: '有孩子的根', content: 'a' })).body.node;
    const kid = (await srv.api('POST', 'nodes', { title: '第一个孩子', content: 'b', parentId: branch.id })).body.node;
    const grand = (await srv.api('POST', 'nodes', { title: '孙辈', content: 'c', parentId: kid.id })).body.node;
    const kid2 = (await srv.api('POST', 'nodes', { title: '第二个孩子', content: 'd', parentId: branch.id })).body.node;
    await srv.api('POST', `nodes/${kid2.id}/important`, { important: true });
    const leaf = (await srv.api('POST', 'nodes', { title: '孤单的根', content: 'e' })).body.node;

    await openPanel(page, srv, 'memory');
    const item = (id) => page.locator(`.tree [role=treeitem][data-id="${id}"]`);
    await item(branch.id).locator(':scope > .twisty').click();
    await item(kid.id).waitFor();
    await item(kid.id).locator(':scope > .twisty').click();
    await item(grand.id).waitFor();
    assert.equal(await item(branch.id).getAttribute('aria-expanded'), 'true');
    assert.equal(await item(kid.id).getAttribute('aria-expanded'), 'true');

    // each item's visible text is its own title and tags: its accessible name
    for (const id of [branch.id, kid.id, kid2.id, grand.id, leaf.id]) {
      const { text, name } = await item(id).evaluate((el) => ({
        text: el.innerText.replace(/\s+/g, ' ').trim(),
        name: el.getAttribute('aria-labelledby').split(' ').map((x) => document.getElementById(x).textContent).join(' ').replace(/\s+/g, ' ').trim(),
      }));
      assert.ok(name.includes(text.replace(/^[▸▾]\s*/, '')), `${id}: name "${name}", text "${text}"`);
    }
    // the children are still the branch's: owned by it, beside it
    const owned = await item(branch.id).getAttribute('aria-owns');
    assert.ok(owned, 'the branch owns its group');
    assert.equal(await page.locator(`#${owned}[role=group] > [role=treeitem]`).count(), 2);

    // the keyboard: Right into the first child, Left back out, Down past the open branch
    await item(branch.id).focus();
    await page.keyboard.press('ArrowRight');
    assert.equal(await page.evaluate(() => document.activeElement?.dataset?.id), kid.id);
    await page.keyboard.press('ArrowDown');
    assert.equal(await page.evaluate(() => document.activeElement?.dataset?.id), grand.id);
    await page.keyboard.press('ArrowDown');
    assert.equal(await page.evaluate(() => document.activeElement?.dataset?.id), kid2.id);
    await page.keyboard.press('ArrowLeft');
    assert.equal(await page.evaluate(() => document.activeElement?.dataset?.id), branch.id);
    await page.keyboard.press('ArrowLeft'); // closes it
    assert.equal(await item(branch.id).getAttribute('aria-expanded'), 'false');
    assert.equal(await item(kid.id).isVisible(), false);
    await page.keyboard.press('ArrowDown');
    assert.equal(await page.evaluate(() => document.activeElement?.dataset?.id), leaf.id);
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('ArrowRight'); // open again, the grandchild still open under its parent
    await item(grand.id).waitFor();

    // the language switch draws the panel anew, branches closed: opened again
    const openAll = async (p) => {
      for (const id of [branch.id, kid.id]) {
        const it = p.locator(`.tree [role=treeitem][data-id="${id}"]`);
        await it.waitFor();
        if (await it.getAttribute('aria-expanded') === 'false') await it.locator(':scope > .twisty').click();
      }
      await p.locator(`.tree [role=treeitem][data-id="${grand.id}"]`).waitFor();
    };
    await eachWidthAndLanguage(page, async (p, what) => {
      await openAll(p);
      await axeClean(p, `open tree branch ${what}`);
    });
  });
});
