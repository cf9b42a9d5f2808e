// memory.test.mjs — the Memory and History panels in a real browser
// against a real `zcor serve`: create → find → edit every field (parent
// through the picker, clearing the source message) → a refused delete
// explained in the page's words → history diff → delete the child, then
// the parent; the success messages that must stay on screen; the important
// mark's replacement receipt; merge; supersede; paging, the time filter and
// the search surviving a save. Every change is checked through the REST
// API too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withPage, openPanel, shot } from './serve.mjs';

const results = 'ul[aria-label="搜索结果"]';

test('memory: create, find, edit, refused delete, history diff, delete', async () => {
  await withPage(async ({ srv, page }) => {
    await openPanel(page, srv, 'memory');
    // Chinese by default
    await page.getByRole('tab', { name: '记忆' }).waitFor();
    await page.locator('main p.empty').first().waitFor(); // empty store: "没有结果"

    // create a root; the success message stays after the panel shows it
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
    assert.equal(await page.locator('#status').textContent(), `已新建 ${rootId}`);
    assert.deepEqual(await page.locator('#node-keywords .tag').allTextContents(), ['猫', '橘猫']);
    assert.equal(await page.locator('#node-source').textContent(), '我最喜欢橘猫了');

    // two more roots: one becomes the child's parent later
    await page.click('#new-node');
    await page.fill('#e-title', '家里的宠物');
    await page.fill('#e-content', '养了一只猫');
    await page.click('#e-save');
    await page.locator('#node-title', { hasText: '家里的宠物' }).waitFor();
    const petsId = (await srv.api('GET', 'nodes?keywords=宠物')).body.items[0].id;

    // a memory made a child of the first through the picker; the label
    // names the chosen parent
    await page.click('#new-node');
    await page.fill('#e-title', '宠物名字');
    await page.fill('#e-content', '橘猫叫大黄');
    await page.fill('#e-keywords', '名字');
    await page.fill('#e-source', '它叫大黄');
    await page.getByLabel('查找父节点').fill('动物');
    await page.getByLabel('查找父节点').press('Enter');
    await page.locator('.picker button.link', { hasText: '喜欢的动物' }).click();
    await page.getByLabel('父节点', { exact: true }).filter({ hasText: rootId }).waitFor();
    await page.click('#e-save');
    await page.locator('#node-title', { hasText: '宠物名字' }).waitFor();
    const childId = (await srv.api('GET', 'nodes?keywords=大黄')).body.items[0].id;
    assert.equal(await page.locator('#status').textContent(), `已新建 ${childId}`);
    // its path shows the parent, and the parent lists it as a child
    await page.locator('.pathbar button', { hasText: '喜欢的动物' }).click();
    await page.locator('#node-title', { hasText: '喜欢的动物' }).waitFor();
    assert.deepEqual(await page.locator('#node-children button.link').allTextContents(), ['宠物名字']);
    assert.match(await page.locator('#node-children').innerText(), new RegExp(childId));

    // find the child by keywords
    await page.fill('#q-keywords', '大黄');
    await page.click('form button[type=submit]');
    await page.locator(`${results} li`).first().waitFor();
    assert.equal(await page.locator(`${results} li`).count(), 1);
    await page.locator(`${results} button.link`, { hasText: '宠物名字' }).click();
    await page.locator('#node-title', { hasText: '宠物名字' }).waitFor();
    await shot(page, 'memory');

    // edit every field: title, content, keywords, parent (another one,
    // through the picker), and clear the source message
    await page.click('#edit-node');
    await page.fill('#e-title', '猫的名字');
    await page.fill('#e-content', '橘猫叫二黄');
    await page.fill('#e-keywords', '名字, 二黄');
    await page.getByLabel('查找父节点').fill('宠物');
    await page.getByLabel('查找父节点').press('Enter');
    await page.locator('.picker button.link', { hasText: '家里的宠物' }).click();
    await page.getByLabel('父节点', { exact: true }).filter({ hasText: petsId }).waitFor();
    await page.fill('#e-source', '');
    await page.click('#e-save');
    await page.locator('#node-title', { hasText: '猫的名字' }).waitFor();
    assert.equal(await page.locator('#status').textContent(), '已保存');
    await page.locator('#node-content', { hasText: '橘猫叫二黄' }).waitFor();
    assert.deepEqual(await page.locator('#node-keywords .tag').allTextContents(), ['名字', '二黄']);
    assert.equal(await page.locator('#node-source').count(), 0);
    await page.locator('#detail p.empty', { hasText: '没有原始消息' }).waitFor();
    await page.locator('.pathbar button', { hasText: '家里的宠物' }).waitFor();
    const edited = (await srv.api('GET', `nodes/${childId}`)).body.node;
    assert.equal(edited.title, '猫的名字');
    assert.equal(edited.content, '橘猫叫二黄');
    assert.deepEqual(edited.keywords, ['名字', '二黄']);
    assert.equal(edited.parentId, petsId);
    assert.equal(edited.sourceMessage, null);

    // deleting the new parent is refused, and the page says why in its
    // own words, with a link to the child that keeps it
    await page.locator('.pathbar button', { hasText: '家里的宠物' }).click();
    await page.locator('#node-title', { hasText: '家里的宠物' }).waitFor();
    await page.click('#delete-node');
    await page.click('#confirm-delete');
    const refused = page.locator('#delete-refused');
    await refused.waitFor();
    assert.equal(await refused.getAttribute('data-reason'), 'has_children');
    const why = await refused.innerText();
    assert.match(why, /删除被拒绝/);
    assert.match(why, /1 个子节点/);
    assert.match(why, new RegExp(`猫的名字 \\(${childId}\\)`));
    assert.doesNotMatch(why, /zcor_memory_write|child memories/, 'no English server text in the Chinese page');
    assert.equal((await srv.api('GET', `nodes/${petsId}`)).status, 200);
    // the link leads to the child
    await refused.getByRole('button', { name: `猫的名字 (${childId})` }).click();
    await page.locator('#node-title', { hasText: '猫的名字' }).waitFor();

    // history: the edit's before/after diff, in the page's words
    await openPanel(page, srv, 'history');
    await page.fill('#h-keywords', '二黄');
    await page.click('main form button[type=submit]');
    const rec = page.locator('#history-list li.record').first();
    await rec.waitFor();
    await rec.locator('tr[data-field=content] td.del', { hasText: '橘猫叫大黄' }).waitFor();
    await rec.locator('tr[data-field=content] td.add', { hasText: '橘猫叫二黄' }).waitFor();
    assert.equal(await rec.locator('tr[data-field=content] th').textContent(), '内容');
    assert.equal(await rec.locator('tr[data-field=title] th').textContent(), '标题');
    await rec.locator('tr[data-field=sourceMessage] td.del', { hasText: '它叫大黄' }).waitFor();
    assert.equal(await rec.locator('.op').textContent(), '写入记忆');
    assert.match(await rec.innerText(), /操作者：网页/);
    assert.match(await rec.innerText(), /状态：成功/);
    await shot(page, 'history');

    // delete the child, then its parent: both go, each with its message
    await openPanel(page, srv, `memory/${childId}`);
    await page.locator('#node-title', { hasText: '猫的名字' }).waitFor();
    await page.click('#delete-node');
    await page.click('#confirm-delete');
    await page.locator('#status', { hasText: '已删除“猫的名字”' }).waitFor();
    await page.locator('#detail p.empty', { hasText: '选择一条记忆' }).waitFor();
    assert.equal((await srv.api('GET', `nodes/${childId}`)).status, 404);
    await page.locator('.tree .node', { hasText: '家里的宠物' }).click();
    await page.locator('#node-title', { hasText: '家里的宠物' }).waitFor();
    await page.click('#delete-node');
    await page.click('#confirm-delete');
    await page.locator('#status', { hasText: '已删除“家里的宠物”' }).waitFor();
    assert.equal((await srv.api('GET', `nodes/${petsId}`)).status, 404);
    assert.equal((await srv.api('GET', 'nodes')).body.total, 1);
    // the tree no longer shows either
    await page.locator('.tree .node', { hasText: '喜欢的动物' }).waitFor();
    assert.equal(await page.locator('.tree .node', { hasText: '家里的宠物' }).count(), 0);
  });
});

test('memory: refused deletes name the person and the superseded memory', async () => {
  await withPage(async ({ srv, page }) => {
    const a = (await srv.api('POST', 'nodes', { title: '小红的资料', content: '同学' })).body.node;
    const b = (await srv.api('POST', 'nodes', { title: '旧地址', content: '北京' })).body.node;
    const c = (await srv.api('POST', 'nodes', { title: '新地址', content: '上海' })).body.node;
    await srv.api('PUT', 'people/20002', { name: '小红', relationship: '同学', affinity: 5, reason: '同班', memoryNodeId: a.id });
    await srv.api('POST', 'supersede', { ids: [b.id], replacementId: c.id, reason: '搬家了' });

    await openPanel(page, srv, `memory/${a.id}`);
    await page.locator('#node-title', { hasText: '小红的资料' }).waitFor();
    await page.click('#delete-node');
    await page.click('#confirm-delete');
    const refused = page.locator('#delete-refused');
    await refused.waitFor();
    assert.match(await refused.innerText(), /1 个人物的关系关联到这条记忆/);
    // the person link opens that person in the People panel
    await refused.getByRole('button', { name: '20002' }).click();
    await page.locator('main[data-panel="people"]').waitFor();
    assert.equal(await page.inputValue('#p-name'), '小红');

    await openPanel(page, srv, `memory/${c.id}`);
    await page.locator('#node-title', { hasText: '新地址' }).waitFor();
    await page.click('#delete-node');
    await page.click('#confirm-delete');
    await refused.waitFor();
    assert.equal(await refused.getAttribute('data-reason'), 'supersede_target');
    assert.match(await refused.innerText(), /1 条已被取代记忆的替代记录/);
    await refused.getByRole('button', { name: b.id }).click();
    await page.locator('#node-title', { hasText: '旧地址' }).waitFor();
    assert.equal((await srv.api('GET', `nodes/${c.id}`)).status, 200);

    // and in English
    await page.click('#lang');
    await openPanel(page, srv, `memory/${c.id}`);
    await page.locator('#node-title', { hasText: '新地址' }).waitFor();
    await page.click('#delete-node');
    await page.click('#confirm-delete');
    await refused.waitFor();
    assert.match(await refused.innerText(), /Delete refused: it replaces 1 superseded memory:/);
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
    // focus stays on the button that was pressed
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'toggle-important');
    // and unmark it again
    await page.locator('#toggle-important', { hasText: '取消重要' }).click();
    await page.locator('#toggle-important', { hasText: '标记重要' }).waitFor();
    assert.equal((await srv.api('GET', `nodes/${ids[5]}`)).body.node.important, false);

    // the receipt in the history, in words
    await openPanel(page, srv, 'history');
    await page.locator('#history-list .receipt', { hasText: `重要记忆已满：“事项1”（${ids[0]}）被取消了重要标记。` }).first().waitFor();

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
    assert.equal(await page.locator('#status').textContent(), `已合并为 ${old.supersededBy}`);

    // supersede 事项4 by 事项5
    await openPanel(page, srv, `memory/${ids[3]}`);
    await page.locator('#node-title', { hasText: '事项4' }).waitFor();
    await page.click('#supersede-node');
    await page.getByLabel('查找替代记录').fill('事项5');
    await page.getByLabel('查找替代记录').press('Enter');
    await page.locator('.picker button.link', { hasText: '事项5' }).click();
    await page.getByLabel('替代记录', { exact: true }).filter({ hasText: ids[4] }).waitFor();
    await page.fill('#s-reason', '过时');
    await page.locator('#node-msg button[type=submit]').click();
    await page.locator('.notice', { hasText: ids[4] }).waitFor();
    assert.equal(await page.locator('#status').textContent(), '已标记为被取代');
    assert.equal((await srv.api('GET', `nodes/${ids[3]}`)).body.node.supersededBy, ids[4]);
    // hidden from the default search, shown on request
    await page.fill('#q-keywords', '事项4');
    await page.click('form button[type=submit]');
    await page.locator('#panel p.empty', { hasText: '没有结果' }).first().waitFor();
    await page.check('#q-superseded');
    await page.click('form button[type=submit]');
    await page.locator(`${results} .tag.sup`).waitFor();
  });
});

test('memory: search pages through results and filters by time; a save keeps the search and its page', async () => {
  await withPage(async ({ srv, page }) => {
    for (let i = 1; i <= 23; i++)
      assert.equal((await srv.api('POST', 'nodes', { title: `笔记${i}`, content: '分页测试' })).status, 201);
    await openPanel(page, srv, 'memory');
    await page.fill('#q-keywords', '分页测试');
    await page.click('form button[type=submit]');
    const items = page.locator(`${results} li`);
    await page.locator('.pager', { hasText: '第 1–20 条，共 23 条' }).waitFor();
    assert.equal(await items.count(), 20);
    assert.match(await items.first().innerText(), /笔记23/); // newest first
    await page.locator('.pager button', { hasText: '下一页' }).click();
    await page.locator('.pager', { hasText: '第 21–23 条，共 23 条' }).waitFor();
    assert.equal(await items.count(), 3);
    assert.match(await items.last().innerText(), /笔记1\b/);

    // open one on page 2 and save it: the search, its page and the
    // results stay (the saved one is now the newest, so 笔记3 moves up)
    await page.locator(`${results} button.link`, { hasText: '笔记2' }).first().click();
    await page.locator('#node-title', { hasText: '笔记2' }).waitFor();
    await page.click('#edit-node');
    await page.fill('#e-content', '分页测试，改过');
    await page.click('#e-save');
    await page.locator('#node-content', { hasText: '改过' }).waitFor();
    assert.equal(await page.inputValue('#q-keywords'), '分页测试');
    await page.locator('.pager', { hasText: '第 21–23 条，共 23 条' }).waitFor();
    assert.equal(await items.count(), 3);
    assert.equal(await page.locator('#status').textContent(), '已保存');

    await page.locator('.pager button', { hasText: '上一页' }).click();
    await page.locator('.pager', { hasText: '第 1–20 条' }).waitFor();
    assert.match(await items.first().innerText(), /笔记2\b/);

    // a time range that ends before they were written finds nothing, and
    // an empty result has no pager ("第 0–0 条" says nothing)
    await page.fill('#q-to', '2000-01-01');
    await page.click('form button[type=submit]');
    await page.locator('#panel p.empty', { hasText: '没有结果' }).first().waitFor();
    assert.equal(await page.locator('.pager').count(), 0);
    // one that starts after they were written finds nothing either
    await page.fill('#q-to', '');
    await page.fill('#q-from', '2999-01-01');
    await page.click('form button[type=submit]');
    await page.locator('#panel p.empty', { hasText: '没有结果' }).first().waitFor();
    assert.equal(await page.locator('.pager').count(), 0);
    // one that starts before finds them all
    await page.fill('#q-from', '2000-01-01');
    await page.click('form button[type=submit]');
    await page.locator('.pager', { hasText: '共 23 条' }).waitFor();
  });
});
