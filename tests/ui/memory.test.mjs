// memory.test.mjs — the Memory and History panels in a real browser
// against a real `zcor serve`: create → find → edit (parent through the
// picker) → a refused delete with its reason → history diff → delete;
// the important mark's replacement receipt; merge; the tree's lazy
// children. Every change is checked through the REST API too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withPage, openPanel, shot } from './serve.mjs';

test('memory: create, find, edit, history diff, refused delete, delete', async () => {
  await withPage(async ({ srv, page }) => {
    await openPanel(page, srv, 'memory');
    // Chinese by default
    await page.getByRole('tab', { name: '记忆' }).waitFor();
    await page.locator('main p.empty').first().waitFor(); // empty store: "没有结果"

    // create a root
    await page.click('#new-node');
    await page.fill('#e-title', '喜欢的动物');
    await page.fill('#e-content', '用户喜欢猫，尤其是橘猫。');
    await page.fill('#e-keywords', '猫, 橘猫');
    await page.fill('#e-source', '我最喜欢橘猫了');
    await page.click('#e-save');
    await page.locator('#node-title', { hasText: '喜欢的动物' }).waitFor();
    const roots = await srv.api('GET', 'roots');
    assert.equal(roots.body.items.length, 1);
    const rootId = roots.body.items[0].id;
    assert.equal(roots.body.items[0].sourceMessage, '我最喜欢橘猫了');
    assert.deepEqual(roots.body.items[0].keywords, ['猫', '橘猫']);

    // a second memory, made a child of the first through the picker
    await page.click('#new-node');
    await page.fill('#e-title', '宠物名字');
    await page.fill('#e-content', '橘猫叫大黄');
    await page.getByLabel('查找父节点').fill('动物');
    await page.getByLabel('查找父节点').press('Enter');
    await page.locator('.picker button.link', { hasText: '喜欢的动物' }).click();
    await page.locator('#e-parent', { hasText: rootId }).waitFor();
    await page.click('#e-save');
    await page.locator('#node-title', { hasText: '宠物名字' }).waitFor();
    // its path shows the parent
    await page.locator('.pathbar button', { hasText: '喜欢的动物' }).waitFor();

    // find it by keywords
    await page.fill('#q-keywords', '大黄');
    await page.click('form button[type=submit]');
    await page.locator('ul[aria-label="搜索结果"] li').first().waitFor();
    assert.equal(await page.locator('ul[aria-label="搜索结果"] li').count(), 1);
    await shot(page, 'memory');

    // edit the child
    await page.click('#edit-node');
    await page.fill('#e-content', '橘猫叫二黄');
    await page.click('#e-save');
    await page.locator('#node-content', { hasText: '橘猫叫二黄' }).waitFor();

    // the tree: the root expands lazily to its child
    const twisty = page.locator('.tree button.twisty').first();
    await twisty.click();
    await page.locator('.tree ul[role=group] button.node', { hasText: '宠物名字' }).waitFor();

    // deleting the parent is refused, and the page says why
    await page.locator('.tree button.node', { hasText: '喜欢的动物' }).first().click();
    await page.locator('#node-title', { hasText: '喜欢的动物' }).waitFor();
    await page.click('#delete-node');
    await page.click('#confirm-delete');
    await page.locator('#node-msg .error').waitFor();
    assert.match(await page.locator('#node-msg').innerText(), /409|conflict/);
    assert.equal((await srv.api('GET', `nodes/${rootId}`)).status, 200);

    // history: the edit's before/after diff
    await openPanel(page, srv, 'history');
    await page.fill('#h-keywords', '二黄');
    await page.click('main form button[type=submit]');
    const rec = page.locator('#history-list li.record').first();
    await rec.waitFor();
    await rec.locator('table.diff-table td.del', { hasText: '橘猫叫大黄' }).waitFor();
    await rec.locator('table.diff-table td.add', { hasText: '橘猫叫二黄' }).waitFor();
    assert.match(await rec.innerText(), /zcor_memory_write/);
    assert.match(await rec.innerText(), /ui/);
    await shot(page, 'history');

    // delete the child, then the parent
    await openPanel(page, srv, 'memory');
    await page.fill('#q-keywords', '宠物');
    await page.click('form button[type=submit]');
    await page.locator('ul[aria-label="搜索结果"] button.link', { hasText: '宠物名字' }).click();
    await page.click('#delete-node');
    await page.click('#confirm-delete');
    await page.locator('#status', { hasText: '已删除' }).waitFor();
    const q = await srv.api('GET', 'nodes?keywords=宠物');
    assert.equal(q.body.total, 0);
  });
});

test('memory: the 6th important mark shows the replacement receipt; merge and supersede', async () => {
  await withPage(async ({ srv, page }) => {
    const ids = [];
    for (let i = 1; i <= 6; i++)
      ids.push((await srv.api('POST', 'nodes', { title: `事项${i}`, content: `内容${i}` })).body.node.id);
    for (const id of ids.slice(0, 5))
      assert.equal((await srv.api('POST', `nodes/${id}/important`, { important: true })).status, 200);
    await openPanel(page, srv, `memory/${ids[5]}`);
    await page.locator('#node-title', { hasText: '事项6' }).waitFor();
    await page.click('#toggle-important');
    const receipt = page.locator('#receipt');
    await receipt.waitFor();
    assert.match(await receipt.innerText(), /事项1/);
    assert.match(await receipt.innerText(), new RegExp(ids[0]));
    assert.equal((await srv.api('GET', `nodes/${ids[0]}`)).body.node.important, false);
    assert.equal((await srv.api('GET', `nodes/${ids[5]}`)).body.node.important, true);
    // and unmark it again
    await page.locator('#toggle-important', { hasText: '取消重要' }).click();
    await page.locator('#toggle-important', { hasText: '标记重要' }).waitFor();
    assert.equal((await srv.api('GET', `nodes/${ids[5]}`)).body.node.important, false);

    // merge 事项2 with 事项3
    await openPanel(page, srv, `memory/${ids[1]}`);
    await page.locator('#node-title', { hasText: '事项2' }).waitFor();
    await page.click('#merge-node');
    await page.getByLabel('添加要合并的记忆').fill('事项3');
    await page.getByLabel('添加要合并的记忆').press('Enter');
    await page.locator('.picker button.link', { hasText: '事项3' }).click();
    await page.fill('#m-title', '事项2和3');
    await page.fill('#m-content', '合并后的内容');
    await page.fill('#m-reason', '重复');
    await page.locator('#node-msg button[type=submit]').click();
    await page.locator('#node-title', { hasText: '事项2和3' }).waitFor();
    const old = (await srv.api('GET', `nodes/${ids[1]}`)).body.node;
    assert.ok(old.supersededBy, 'the merged source is superseded');

    // supersede 事项4 by 事项5
    await openPanel(page, srv, `memory/${ids[3]}`);
    await page.locator('#node-title', { hasText: '事项4' }).waitFor();
    await page.click('#supersede-node');
    await page.getByLabel('查找替代记录').fill('事项5');
    await page.getByLabel('查找替代记录').press('Enter');
    await page.locator('.picker button.link', { hasText: '事项5' }).click();
    await page.fill('#s-reason', '过时');
    await page.locator('#node-msg button[type=submit]').click();
    await page.locator('.notice', { hasText: ids[4] }).waitFor();
    assert.equal((await srv.api('GET', `nodes/${ids[3]}`)).body.node.supersededBy, ids[4]);
    // hidden from the default search, shown on request
    await page.fill('#q-keywords', '事项4');
    await page.click('form button[type=submit]');
    await page.locator('#panel p.empty', { hasText: '没有结果' }).first().waitFor();
    await page.check('#q-superseded');
    await page.click('form button[type=submit]');
    await page.locator('ul[aria-label="搜索结果"] .tag.sup').waitFor();
  });
});

test('memory: search pages through results and filters by time', async () => {
  await withPage(async ({ srv, page }) => {
    for (let i = 1; i <= 23; i++)
      assert.equal((await srv.api('POST', 'nodes', { title: `笔记${i}`, content: '分页测试' })).status, 201);
    await openPanel(page, srv, 'memory');
    await page.fill('#q-keywords', '分页测试');
    await page.click('form button[type=submit]');
    const items = page.locator('ul[aria-label="搜索结果"] li');
    await page.locator('.pager', { hasText: '第 1–20 条，共 23 条' }).waitFor();
    assert.equal(await items.count(), 20);
    assert.match(await items.first().innerText(), /笔记23/); // newest first
    await page.locator('.pager button', { hasText: '下一页' }).click();
    await page.locator('.pager', { hasText: '第 21–23 条，共 23 条' }).waitFor();
    assert.equal(await items.count(), 3);
    assert.match(await items.last().innerText(), /笔记1\b/);
    await page.locator('.pager button', { hasText: '上一页' }).click();
    await page.locator('.pager', { hasText: '第 1–20 条' }).waitFor();
    // a time range that ends before they were written finds nothing
    await page.fill('#q-to', '2000-01-01T00:00');
    await page.click('form button[type=submit]');
    await page.locator('.pager', { hasText: '共 0 条' }).waitFor();
    await page.fill('#q-to', '');
    await page.fill('#q-from', '2000-01-01T00:00');
    await page.click('form button[type=submit]');
    await page.locator('.pager', { hasText: '共 23 条' }).waitFor();
  });
});
