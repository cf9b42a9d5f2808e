// issue18_bulk.test.mjs — issue 18, "bulk actions on selected memories":
// 选择多条 shows checkboxes on results and tree items (native, Space
// toggles them) and a selection bar with the count; delete (asked first),
// move under a parent picked by search, merge, mark / unmark important and
// supersede (the replacement picked by search) go through the existing
// operations — one recorded change per memory for the per-memory ones
// (the form says so), one call for merge and supersede — and the results
// are listed per memory, a refusal worded in the page's language. axe-core
// at 1440 / 390 px, zh and en, with the bar and a form on show.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withPage, openPanel, axeClean, eachWidthAndLanguage, shot } from './serve.mjs';

const mk = async (srv, title, extra = {}) => (await srv.api('POST', 'nodes', { title, content: `${title}的内容`, ...extra })).body.node;
const node = async (srv, id) => (await srv.api('GET', `nodes/${id}`));

async function search(page, words) {
  await page.fill('#q-keywords', words);
  await page.locator('main form button[type=submit]').first().click();
  await page.locator('main ul.list li').first().waitFor();
}

// checks the result rows titled by each title (their own checkbox)
async function pick(page, ...titles) {
  for (const title of titles)
    await page.locator('main ul[aria-label] > li', { has: page.locator('button.link', { hasText: new RegExp(`^${title}$`) }) }).locator('input.sel').check();
}

async function results(page) {
  await page.locator('#bulk-out .bulk-results').waitFor();
  return page.locator('#bulk-out .bulk-results li').evaluateAll((lis) => lis.map((li) => [li.dataset.id, li.dataset.ok, li.textContent]));
}

test('issue18_bulk_actions: select results and tree items, delete / move / merge / mark / unmark / supersede, per-item results', async () => {
  await withPage(async ({ srv, page }) => {
    const parent = await mk(srv, '批量父节点');
    const a = await mk(srv, '批量甲');
    const b = await mk(srv, '批量乙');
    const c = await mk(srv, '批量丙');
    await mk(srv, '丙的孩子', { parentId: c.id });
    const d = await mk(srv, '批量丁');
    const repl = await mk(srv, '替代记录');

    await openPanel(page, srv, 'memory');
    await page.locator('[role=treeitem]').first().waitFor();
    // not selecting: no boxes in the way (Tab stops), no bar
    assert.equal(await page.locator('input.sel:visible').count(), 0);
    assert.equal(await page.locator('#bulk-bar').isVisible(), false);
    await page.click('#bulk-toggle');
    assert.equal(await page.getAttribute('#bulk-toggle', 'aria-pressed'), 'true');
    await page.locator('#bulk-count', { hasText: '已选 0 条记忆' }).waitFor();
    assert.equal(await page.isDisabled('#bulk-delete'), true);

    await search(page, '批量');
    await pick(page, '批量甲', '批量乙');
    // a tree item's box, with the keyboard
    const treeBox = page.locator(`[role=treeitem][data-id="${d.id}"] > input.sel`);
    await treeBox.focus();
    await page.keyboard.press('Space');
    assert.equal(await treeBox.isChecked(), true);
    // the same memory's box in the results follows
    assert.equal(await page.locator(`main ul[aria-label] input.sel[data-id="${d.id}"]`).isChecked(), true);
    await page.locator('#bulk-count', { hasText: '已选 3 条记忆' }).waitFor();

    // mark important: one recorded change per memory, said so
    await page.click('#bulk-mark');
    await page.locator('#bulk-several', { hasText: '历史里会有 3 条各自的更改记录' }).waitFor();
    await page.click('#bulk-mark-go');
    let rows = await results(page);
    assert.deepEqual(rows.map((r) => r[1]), ['true', 'true', 'true']);
    for (const n of [a, b, d]) assert.equal((await node(srv, n.id)).body.node.important, true);
    const marks = (await srv.api('GET', 'history?operations=zcor_memory_important&actor=ui')).body;
    assert.equal(marks.total, 3);
    await page.click('#bulk-unmark');
    await page.click('#bulk-mark-go');
    rows = await results(page);
    for (const n of [a, b, d]) assert.equal((await node(srv, n.id)).body.node.important, false);

    // move under a parent picked by search
    await page.click('#bulk-move');
    await page.locator('#bulk-move-form input[type=search]').fill('批量父节点');
    await page.keyboard.press('Enter');
    await page.locator('#bulk-move-form button.link', { hasText: '批量父节点' }).click();
    await page.locator('#bulk-parent', { hasText: parent.id }).waitFor();
    await page.click('#bulk-move-go');
    rows = await results(page);
    assert.deepEqual(rows.map((r) => r[1]), ['true', 'true', 'true']);
    for (const n of [a, b, d]) assert.equal((await node(srv, n.id)).body.node.parentId, parent.id);
    assert.equal((await node(srv, a.id)).body.node.content, '批量甲的内容'); // the move kept the content

    // delete, one refused: 丙 has a child that is not selected
    await page.click('#bulk-clear');
    await page.locator('#bulk-count', { hasText: '已选 0 条记忆' }).waitFor();
    await search(page, '批量');
    await pick(page, '批量甲', '批量丙');
    await page.click('#bulk-delete');
    await page.locator('#bulk-work', { hasText: '确定删除这 2 条记忆吗' }).waitFor();
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'bulk-delete-yes');
    await shot(page, 'memory-bulk');
    await page.keyboard.press('Enter');
    rows = await results(page);
    const byId = Object.fromEntries(rows.map((r) => [r[0], r]));
    assert.equal(byId[a.id][1], 'true');
    assert.equal(byId[c.id][1], 'false');
    assert.match(byId[c.id][2], /被拒绝.*它还有 1 个子节点.*丙的孩子/);
    await page.locator('#bulk-out', { hasText: '删除：1 条成功，1 条被拒绝' }).waitFor();
    assert.equal((await node(srv, a.id)).status, 404);
    assert.equal((await node(srv, c.id)).status, 200);
    // the refused one stays selected, the deleted one is not
    await page.locator('#bulk-count', { hasText: '已选 1 条记忆' }).waitFor();
    const deletes = (await srv.api('GET', 'history?operations=zcor_memory_delete&actor=ui')).body;
    assert.deepEqual(deletes.items.map((r) => r.status).sort(), ['error', 'ok']);

    // merge: one call
    await page.click('#bulk-clear');
    await search(page, '批量');
    await pick(page, '批量乙', '批量丁');
    await page.click('#bulk-merge');
    await page.locator('#bulk-merge-form', { hasText: '这是一次调用' }).waitFor();
    await page.fill('#bulk-m-title', '乙丁合并');
    await page.fill('#bulk-m-reason', '重复');
    await page.click('#bulk-merge-go');
    rows = await results(page);
    assert.deepEqual(rows.map((r) => r[1]), ['true', 'true']);
    const merges = (await srv.api('GET', 'history?operations=zcor_memory_merge')).body;
    assert.equal(merges.total, 1);
    assert.deepEqual(merges.items[0].arguments.ids, [b.id, d.id]);
    assert.equal((await node(srv, b.id)).body.node.supersededBy, merges.items[0].after.at(-1).id);

    // supersede: the replacement picked by search
    await search(page, '批量丙');
    await pick(page, '批量丙');
    await page.locator('#bulk-count', { hasText: '已选 1 条记忆' }).waitFor();
    await page.click('#bulk-supersede');
    await page.locator('#bulk-supersede-form input[type=search]').fill('替代记录');
    await page.keyboard.press('Enter');
    await page.locator('#bulk-supersede-form button.link', { hasText: '替代记录' }).click();
    await page.fill('#bulk-s-reason', '更新了');
    await page.click('#bulk-supersede-go');
    rows = await results(page);
    assert.deepEqual(rows.map((r) => [r[0], r[1]]), [[c.id, 'true']]);
    assert.equal((await node(srv, c.id)).body.node.supersededBy, repl.id);

    // a refused one-call action: every memory refused, worded
    await search(page, '批量丙');
    await page.check('#q-superseded');
    await search(page, '批量丙');
    await pick(page, '批量丙');
    await page.click('#bulk-supersede');
    await page.locator('#bulk-supersede-form input[type=search]').fill('替代记录');
    await page.keyboard.press('Enter');
    await page.locator('#bulk-supersede-form button.link', { hasText: '替代记录' }).click();
    await page.fill('#bulk-s-reason', '再来一次');
    await page.click('#bulk-supersede-go');
    rows = await results(page);
    assert.equal(rows[0][1], 'false');
    assert.match(rows[0][2], /与现有内容冲突，没有做任何更改/);

    // a parent and its child selected together (the parent first): the
    // child goes first, so neither is refused
    const top = await mk(srv, '层级父');
    const kid = await mk(srv, '层级子', { parentId: top.id });
    await page.uncheck('#q-superseded');
    await page.click('#bulk-clear');
    await search(page, '层级');
    await pick(page, '层级父', '层级子');
    await page.click('#bulk-delete');
    await page.click('#bulk-delete-yes');
    rows = await results(page);
    assert.deepEqual(rows.map((r) => [r[0], r[1]]), [[kid.id, 'true'], [top.id, 'true']]);

    await eachWidthAndLanguage(page, async (p, what) => {
      await p.locator('#bulk-toggle').waitFor();
      if ((await p.getAttribute('#bulk-toggle', 'aria-pressed')) !== 'true') await p.click('#bulk-toggle');
      await search(p, '批量');
      const boxes = p.locator('main ul[aria-label] input.sel');
      for (let i = 0; i < 2; i++) await boxes.nth(i).check();
      if (what.endsWith('en')) await p.locator('#bulk-count', { hasText: /^2 memories selected$/ }).waitFor();
      await p.click('#bulk-delete');
      await p.locator('#bulk-delete-yes').waitFor();
      if (what.endsWith('en')) assert.match(await p.locator('#bulk-several').textContent(), /separate call/);
      await axeClean(p, `bulk delete asked ${what}`);
      await p.click('#bulk-move');
      await p.locator('#bulk-move-form').waitFor();
      await axeClean(p, `bulk move form ${what}`);
      await p.click('#bulk-clear');
    });
  });
});
