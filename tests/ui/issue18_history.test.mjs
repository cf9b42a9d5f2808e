// issue18_history.test.mjs — issue 18, defect 1 (History is noise): the
// page's own browsing (queries, tree expansion, path lookups, history
// searches) leaves no history record, its changes do (actor ui), the
// model's calls do, reads included (seed 000); History filters by
// operation, actor, conversation, status and target id, "changes only"
// by default with the reads one click away, and an operation's name in
// the page's language (合并, "merge") finds its records. axe-core: no
// serious violation at 1440 and 390 px, in Chinese and English.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { withPage, openPanel, axeClean, eachWidthAndLanguage, shot } from './serve.mjs';

// The model's calls: MCP over HTTP (actor model).
async function mcp(srv) {
  const transport = new StreamableHTTPClientTransport(new URL(`${srv.base}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${srv.token}` } },
  });
  const client = new Client({ name: 'issue18', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

test('issue18_history_noise: the page\'s browsing is not recorded, its changes and the model\'s reads are; filters by operation (合并 / merge), actor, conversation, status, target id; changes only by default', async () => {
  await withPage(async ({ srv, page }) => {
    const a = (await srv.api('POST', 'nodes', { title: '合并甲', content: '猫咪甲', keywords: ['猫咪'] })).body.node;
    const b = (await srv.api('POST', 'nodes', { title: '合并乙', content: '猫咪乙', keywords: ['猫咪'] })).body.node;
    const merged = await srv.api('POST', 'merge', { ids: [a.id, b.id], title: '猫咪合集', content: '甲和乙', reason: '重复' });
    assert.equal(merged.status, 201);
    const parent = (await srv.api('POST', 'nodes', { title: '有孩子', content: 'x' })).body.node;
    await srv.api('POST', 'nodes', { title: '孩子', content: 'y', parentId: parent.id });
    assert.equal((await srv.api('DELETE', `nodes/${parent.id}`)).status, 409); // a refused change
    const inGroup = await fetch(`${srv.base}/api/v1/nodes`, { method: 'POST',
      headers: { Authorization: `Bearer ${srv.token}`, 'Content-Type': 'application/json', 'X-Zcor-Conversation': 'group:100000001' },
      body: JSON.stringify({ title: '群里写的', content: 'z' }) });
    assert.equal(inGroup.status, 201);
    const client = await mcp(srv);
    try {
      await client.callTool({ name: 'zcor_memory_query', arguments: { keywords: ['猫咪'] } });
      await client.callTool({ name: 'zcor_memory_trace', arguments: { id: a.id } });
    } finally {
      await client.close();
    }
    const all = async () => (await srv.api('GET', 'history?limit=100')).body;
    const before = await all();
    // the model's reads are recorded, the page's own reads above are not
    assert.ok(before.items.some((r) => r.operation === 'zcor_memory_query' && r.actor === 'model'));
    assert.ok(before.items.some((r) => r.operation === 'zcor_memory_trace' && r.actor === 'model'));
    assert.ok(!before.items.some((r) => r.actor === 'ui' && ['zcor_memory_query', 'zcor_memory_history', 'zcor_memory_children'].includes(r.operation)),
      before.items.map((r) => `${r.actor} ${r.operation}`).join());

    // browsing in the page: search, open the tree, a memory, its path; people; History searches
    await openPanel(page, srv, 'memory');
    await page.fill('#q-keywords', '猫咪');
    await page.locator('main form button[type=submit]').first().click();
    await page.locator('main ul.list li button.link', { hasText: '猫咪合集' }).click();
    await page.locator('#node-title', { hasText: '猫咪合集' }).waitFor();
    const branch = page.locator('[role=treeitem]', { hasText: '有孩子' }).first();
    await branch.focus();
    await page.keyboard.press('ArrowRight');
    await page.locator('[role=treeitem]', { hasText: '孩子' }).nth(1).waitFor();
    await openPanel(page, srv, 'people');
    await page.locator('main[data-panel=people] section').first().waitFor();
    await openPanel(page, srv, 'conversations');
    await page.locator('main[data-panel=conversations] section').first().waitFor();
    await openPanel(page, srv, 'history');
    const records = page.locator('#history-list li.record');
    await records.first().waitFor();
    await page.click('main form button[type=submit]');
    await records.first().waitFor();
    const after = await all();
    assert.equal(after.total, before.total, `the page's browsing was recorded: ${after.items.slice(0, after.total - before.total).map((r) => r.operation)}`);

    // changes only by default: the model's reads are one click away
    assert.equal(await page.isChecked('#h-changes'), true);
    const ops = async () => records.locator('.op').allTextContents();
    await page.locator('#history-list .pager').waitFor();
    assert.ok(!(await ops()).includes('查询记忆'), (await ops()).join());
    assert.ok((await ops()).includes('合并记忆'));
    await page.uncheck('#h-changes');
    await records.filter({ has: page.locator('.op', { hasText: '查询记忆' }) }).first().waitFor();
    assert.match(await records.filter({ has: page.locator('.op', { hasText: '查询记忆' }) }).first().innerText(), /操作者：模型/);
    await page.check('#h-changes');
    await records.filter({ has: page.locator('.op', { hasText: '查询记忆' }) }).first().waitFor({ state: 'detached' });

    // an operation's name in the page's words: 合并 finds the merge
    const search = () => page.click('main form button[type=submit]');
    const only = async (want, what) => {
      await page.waitForFunction(([sel, w]) => {
        const all = [...document.querySelectorAll(sel)].map((e) => e.textContent);
        return all.length > 0 && all.every((x) => w.includes(x));
      }, ['#history-list li.record .op', want]);
      return what;
    };
    await page.fill('#h-keywords', '合并');
    await search();
    await only(['合并记忆']);
    assert.equal(await records.count(), 1);
    await page.locator('#h-ops-matched', { hasText: '合并记忆' }).waitFor();
    await page.fill('#h-keywords', '');

    // actor: the model's records only (its change; its reads with the box unchecked)
    await page.selectOption('#h-actor', 'model');
    await page.uncheck('#h-changes');
    await only(['查询记忆', '查看路径']);
    assert.equal(await records.count(), 2);
    await page.check('#h-changes');
    await page.locator('#history-list p.empty').waitFor();
    await page.selectOption('#h-actor', '');

    // conversation: the group's record only; the operator's (后台) only
    await page.fill('#h-conv', 'group:100000001');
    await search();
    await only(['写入记忆']);
    assert.equal(await records.count(), 1);
    assert.match(await records.first().innerText(), /群里写的/);
    await page.fill('#h-conv', '后台');
    await search();
    await records.filter({ hasText: '合并甲' }).first().waitFor();
    assert.ok(!(await records.allInnerTexts()).some((x) => /群里写的/.test(x)));
    await page.fill('#h-conv', '');

    // status: the refused delete
    await page.selectOption('#h-status', 'error');
    await only(['删除记忆']);
    assert.equal(await records.count(), 1);
    await page.selectOption('#h-status', '');

    // target id: what touched memory a — its write and the merge
    await page.fill('#h-target', a.id);
    await search();
    await only(['写入记忆', '合并记忆']);
    assert.equal(await records.count(), 2);
    await shot(page, 'history-filters');
    await page.fill('#h-target', '');

    // English: "merge" finds the merge
    await page.click('#lang');
    await page.locator('#h-keywords').waitFor();
    await page.fill('#h-keywords', 'merge');
    await search();
    await only(['Merge memories']);
    assert.equal(await records.count(), 1);
    await page.click('#lang');

    // a malformed filter is refused naming it
    for (const [q, field] of [['actor=nobody', 'actor'], ['conversation=nowhere', 'conversation'], ['status=maybe', 'status'], ['changesOnly=perhaps', 'changesOnly']]) {
      const r = await srv.api('GET', `history?${q}`);
      assert.equal(r.status, 400, q);
      assert.match(r.body.error.message, new RegExp(field), q);
    }

    // still nothing of the page's own in the log
    assert.equal((await all()).total, before.total);

    await eachWidthAndLanguage(page, async (p, what) => {
      await p.locator('#history-list li.record').first().waitFor();
      await axeClean(p, `history ${what}`);
    });
  });
});
