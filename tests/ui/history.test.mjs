// history.test.mjs — the History panel: the keyword and time filters and
// paging, and each record's operation, actor, conversation and status in
// the page's words (Chinese, then English), with the raw tool name beside.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withPage, openPanel, cli } from './serve.mjs';

test('history: filters by keywords and time, pages, and shows operation, actor, conversation and status', async () => {
  await withPage(async ({ srv, page }) => {
    for (let i = 1; i <= 23; i++)
      assert.equal((await srv.api('POST', 'nodes', { title: `翻页记录${i}`, content: '历史分页' })).status, 201);
    // one from the command line, one inside a conversation, one refused
    assert.equal(cli(srv.dir, 'tool', 'zcor_memory_write', '{"title":"命令行写的","content":"历史来源"}').status, 0);
    const inConv = await fetch(`${srv.base}/api/v1/nodes`, { method: 'POST',
      headers: { Authorization: `Bearer ${srv.token}`, 'Content-Type': 'application/json', 'X-Zcor-Conversation': 'group:100000001' },
      body: JSON.stringify({ title: '群里写的', content: '历史来源' }) });
    assert.equal(inConv.status, 201);
    const parent = (await srv.api('POST', 'nodes', { title: '有孩子的', content: '历史来源' })).body.node;
    await srv.api('POST', 'nodes', { title: '孩子', content: 'x', parentId: parent.id });
    assert.equal((await srv.api('DELETE', `nodes/${parent.id}`)).status, 409);

    await openPanel(page, srv, 'history');
    const list = page.locator('#history-list');
    const records = list.locator('li.record');

    // keywords, then the pages
    await page.fill('#h-keywords', '历史分页');
    await page.click('main form button[type=submit]');
    await page.locator('.pager', { hasText: '第 1–20 条，共 23 条' }).waitFor();
    assert.equal(await records.count(), 20);
    assert.match(await records.first().innerText(), /翻页记录23/);
    // (the page's own searches are not recorded: issue 18)
    await page.locator('.pager button', { hasText: '下一页' }).click();
    await page.locator('.pager', { hasText: '第 21–23 条，共 23 条' }).waitFor();
    assert.equal(await records.count(), 3);
    assert.match(await records.first().innerText(), /翻页记录3\b/);
    assert.match(await records.last().innerText(), /翻页记录1\b/);

    // time: a range after the records, then one before them, find nothing
    await page.fill('#h-from', '2999-01-01');
    await page.click('main form button[type=submit]');
    await list.locator('p.empty', { hasText: '没有结果' }).waitFor();
    assert.equal(await page.locator('.pager').count(), 0);
    await page.fill('#h-from', '');
    await page.fill('#h-to', '2000-01-01');
    await page.click('main form button[type=submit]');
    await list.locator('p.empty', { hasText: '没有结果' }).waitFor();
    await page.fill('#h-to', '2999-01-01');
    await page.click('main form button[type=submit]');
    await page.locator('.pager', { hasText: '第 1–20 条' }).waitFor();
    assert.equal(await records.count(), 20);

    // who, where and how it went
    await page.fill('#h-to', '');
    await page.fill('#h-keywords', '历史来源');
    await page.click('main form button[type=submit]');
    const byCli = records.filter({ hasText: '命令行写的' }).first();
    await byCli.waitFor();
    assert.equal(await byCli.locator('.op').textContent(), '写入记忆');
    assert.equal(await byCli.locator('code').textContent(), 'zcor_memory_write');
    assert.match(await byCli.innerText(), /操作者：命令行 · 对话：后台/);
    assert.match(await byCli.innerText(), /状态：成功/);
    const byConv = records.filter({ hasText: '群里写的' }).first();
    assert.match(await byConv.innerText(), /操作者：网页 · 对话：group:100000001/);
    assert.equal(await byConv.locator('tr[data-field=scope] th').textContent(), '范围');
    assert.equal(await byConv.locator('tr[data-field=scope] td.add').textContent(), 'group:100000001');
    await page.fill('#h-keywords', parent.id);
    await page.click('main form button[type=submit]');
    const refused = records.filter({ has: page.locator('.op', { hasText: '删除记忆' }) }).first();
    await refused.waitFor();
    assert.match(await refused.innerText(), /状态：失败/);
    assert.match(await refused.locator('.error').innerText(), /^失败，服务器当时的说明（英文）：conflict: memory/);

    // the same in English
    await page.click('#lang');
    await page.fill('#h-keywords', '历史来源');
    await page.click('main form button[type=submit]');
    const en = records.filter({ hasText: '群里写的' }).first();
    await en.waitFor();
    assert.equal(await en.locator('.op').textContent(), 'Write memory');
    assert.match(await en.innerText(), /actor: web page · conversation: group:100000001/);
    assert.match(await en.innerText(), /status: ok/);
    assert.equal(await en.locator('tr[data-field=content] th').textContent(), 'Content');
    assert.equal(await en.locator('tr[data-field=important] td.add').textContent(), 'no');
  });
});
