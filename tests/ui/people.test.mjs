// people.test.mjs — the People panel: create (affinity slider, aliases,
// relationship, reason, a linked memory node), search, edit, delete.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withPage, openPanel, shot } from './serve.mjs';

test('people: create with a linked node, search, edit the affinity, delete', async () => {
  await withPage(async ({ srv, page }) => {
    const node = (await srv.api('POST', 'nodes', { title: '小明的资料', content: '同事，喜欢篮球' })).body.node;
    await openPanel(page, srv, 'people');
    await page.click('#new-person');
    await page.fill('#p-id', '10001');
    await page.fill('#p-name', '小明');
    await page.fill('#p-aliases', '明明, 阿明');
    await page.fill('#p-relationship', '同事');
    await page.locator('#p-affinity').fill('35');
    await page.locator('#p-affinity-value', { hasText: '35' }).waitFor();
    await page.fill('#p-reason', '一起打篮球');
    await page.getByLabel('查找要关联的记忆').fill('小明');
    await page.getByLabel('查找要关联的记忆').press('Enter');
    await page.locator('.picker button.link', { hasText: '小明的资料' }).click();
    // the linked node is shown under its label
    await page.getByLabel('关联记忆节点').filter({ hasText: node.id }).waitFor();
    await page.click('#p-save');
    await page.locator('#status', { hasText: '已保存 小明' }).waitFor();
    let p = (await srv.api('GET', 'people/10001')).body.person;
    assert.equal(p.affinity, 35);
    assert.deepEqual(p.aliases, ['明明', '阿明']);
    assert.equal(p.memoryNodeId, node.id);
    assert.equal(p.reason, '一起打篮球');

    // search by alias, then lower the affinity below zero with the keyboard
    await page.fill('#p-keywords', '阿明');
    await page.locator('main form button[type=submit]').first().click();
    await page.locator('#people-list button.link', { hasText: '小明' }).click();
    await page.locator('#p-affinity').fill('-40');
    await page.locator('#p-affinity').press('ArrowLeft'); // -41
    await page.locator('#p-affinity-value', { hasText: '-41' }).waitFor();
    await page.click('#p-save');
    await page.locator('#status', { hasText: '已保存' }).waitFor();
    await page.locator('#people-list .tag', { hasText: '-41' }).waitFor();
    p = (await srv.api('GET', 'people/10001')).body.person;
    assert.equal(p.affinity, -41);
    await shot(page, 'people');

    // the link leads to the node
    await page.locator('#p-node button', { hasText: node.id }).click();
    await page.locator('#node-title', { hasText: '小明的资料' }).waitFor();

    // delete (the confirm dialog is accepted)
    await openPanel(page, srv, 'people');
    await page.locator('#people-list button.link', { hasText: '小明' }).click();
    await page.click('#p-delete');
    await page.locator('#status', { hasText: '已删除 小明' }).waitFor();
    assert.equal((await srv.api('GET', 'people/10001')).status, 404);
  });
});
