// interaction.test.mjs — how the Memory page behaves under hands and
// keys: the tree answers the WAI-ARIA tree keys (roving tabindex, arrows,
// Home/End, Enter); a save is sent once however often it is clicked, and
// the form is busy meanwhile; a slow answer for a memory or person opened
// before another does not replace the one opened last, nor take the focus;
// at phone width an opened memory, the editor and a person come into
// view, and the History diff fits the screen.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withPage, openPanel } from './serve.mjs';

const focusedItem = (page) => page.evaluate(() => {
  const a = document.activeElement;
  return a?.getAttribute('role') === 'treeitem' ? a.querySelector(':scope > .node').textContent : `${a?.tagName}#${a?.id}`;
});

test('tree: arrow keys, Home/End, Right/Left open and close, Enter shows; one item in the tab order', async () => {
  await withPage(async ({ srv, page }) => {
    const a = (await srv.api('POST', 'nodes', { title: '甲', content: '1' })).body.node;
    const b = (await srv.api('POST', 'nodes', { title: '乙', content: '2' })).body.node;
    await srv.api('POST', 'nodes', { title: '丙', content: '3' });
    await srv.api('POST', 'nodes', { title: '甲的孩子一', content: '4', parentId: a.id });
    await srv.api('POST', 'nodes', { title: '甲的孩子二', content: '5', parentId: a.id });
    await openPanel(page, srv, 'memory');
    const tree = page.getByRole('tree', { name: '记忆树' });
    await tree.getByRole('treeitem', { name: '甲' }).waitFor();
    assert.equal(await tree.locator('[role=treeitem][tabindex="0"]').count(), 1);

    // Tab reaches the tree from the control before it (the last result)
    await page.locator('ul[aria-label="搜索结果"] button.link').last().focus();
    await page.keyboard.press('Tab');
    assert.equal(await focusedItem(page), '甲');
    await page.keyboard.press('ArrowDown');
    assert.equal(await focusedItem(page), '乙');
    await page.keyboard.press('End');
    assert.equal(await focusedItem(page), '丙');
    await page.keyboard.press('Home');
    assert.equal(await focusedItem(page), '甲');
    await page.keyboard.press('ArrowUp'); // already the first: stays
    assert.equal(await focusedItem(page), '甲');

    // Right opens 甲 (children load), Right again goes to its first child
    const itemA = tree.getByRole('treeitem', { name: '甲', exact: true });
    assert.equal(await itemA.getAttribute('aria-expanded'), 'false');
    await page.keyboard.press('ArrowRight');
    await tree.getByRole('treeitem', { name: '甲的孩子一' }).waitFor();
    assert.equal(await itemA.getAttribute('aria-expanded'), 'true');
    await page.keyboard.press('ArrowRight');
    assert.equal(await focusedItem(page), '甲的孩子一');
    await page.keyboard.press('ArrowDown');
    assert.equal(await focusedItem(page), '甲的孩子二');
    await page.keyboard.press('ArrowDown'); // past the open branch: the next root
    assert.equal(await focusedItem(page), '乙');
    await page.keyboard.press('ArrowUp');
    // Left on a child goes to its parent; Left on an open parent closes it
    await page.keyboard.press('ArrowLeft');
    assert.equal(await focusedItem(page), '甲');
    await page.keyboard.press('ArrowLeft');
    assert.equal(await itemA.getAttribute('aria-expanded'), 'false');
    assert.equal(await tree.getByRole('treeitem', { name: '甲的孩子一' }).isVisible(), false);
    await page.keyboard.press('ArrowDown'); // the closed branch is skipped
    assert.equal(await focusedItem(page), '乙');
    // the roving tabindex followed the focus
    assert.equal(await tree.locator('[role=treeitem][tabindex="0"]').count(), 1);
    assert.equal(await tree.locator('[role=treeitem][tabindex="0"] > .node').textContent(), '乙');

    // a leaf, once opened, says it has no children (no aria-expanded)
    await page.keyboard.press('ArrowRight');
    await page.waitForFunction(() => ![...document.querySelectorAll('[role=treeitem]')]
      .find((x) => x.querySelector(':scope > .node').textContent === '乙').hasAttribute('aria-expanded'));

    // Enter shows the memory
    await page.keyboard.press('Enter');
    await page.locator('#node-title', { hasText: '乙' }).waitFor();
    assert.equal(new URL(page.url()).hash, `#memory/${b.id}`);
  });
});

test('busy: a double click on save creates one memory; forms are busy and disabled while their request runs', async () => {
  await withPage(async ({ srv, page }) => {
    await openPanel(page, srv, 'memory');
    await page.click('#new-node');
    await page.fill('#e-title', '只应有一条');
    await page.fill('#e-content', '双击保存');
    await page.dblclick('#e-save');
    await page.locator('#node-title', { hasText: '只应有一条' }).waitFor();
    await page.waitForTimeout(500); // a second request would have landed by now
    assert.equal((await srv.api('GET', 'nodes')).body.total, 1);

    // hold the merge request: the form is busy, its button disabled, and
    // pressing Enter or clicking again sends nothing more
    const other = (await srv.api('POST', 'nodes', { title: '另一条', content: '合并用' })).body.node;
    const first = (await srv.api('GET', 'nodes?keywords=只应有一条')).body.items[0];
    await openPanel(page, srv, `memory/${first.id}`);
    await page.locator('#node-title', { hasText: '只应有一条' }).waitFor();
    await page.click('#merge-node');
    await page.getByLabel('添加要合并的记忆').fill('另一条');
    await page.getByLabel('添加要合并的记忆').press('Enter');
    await page.locator('.picker button.link', { hasText: '另一条' }).click();
    await page.fill('#m-reason', '重复');
    let release;
    const held = new Promise((r) => { release = r; });
    let posts = 0;
    await page.route('**/api/v1/merge', async (route) => { posts++; await held; await route.continue(); });
    const submit = page.locator('#merge-form button[type=submit]');
    await submit.click();
    await page.locator('#merge-form[aria-busy="true"]').waitFor();
    assert.equal(await submit.isDisabled(), true);
    await submit.click({ force: true });
    await page.locator('#m-reason').press('Enter');
    release();
    await page.locator('#node-title', { hasText: '只应有一条' }).waitFor();
    await page.locator('#status', { hasText: '已合并为' }).waitFor();
    assert.equal(posts, 1);
    assert.equal((await srv.api('GET', `nodes/${other.id}`)).body.node.supersededBy != null, true);
    assert.equal((await srv.api('GET', 'nodes')).body.total, 1); // the merged one; the sources are superseded
    await page.unroute('**/api/v1/merge');

    // people and synonyms forms too
    await openPanel(page, srv, 'people');
    await page.click('#new-person');
    await page.fill('#p-id', '1');
    await page.fill('#p-name', '阿忙');
    let releasePerson;
    const heldPerson = new Promise((r) => { releasePerson = r; });
    await page.route('**/api/v1/people/**', async (route) => {
      if (route.request().method() === 'PUT') await heldPerson;
      await route.continue();
    });
    await page.click('#p-save');
    await page.locator('#person-editor form[aria-busy="true"]').waitFor();
    assert.equal(await page.locator('#p-save').isDisabled(), true);
    releasePerson();
    await page.locator('#status', { hasText: '已保存 阿忙' }).waitFor();
    assert.equal(await page.locator('#p-save').isDisabled(), false);
  });
});

// Holds the requests that match(url, method) until the returned release()
// is called; held() resolves once one is held, answered() once its answer
// reached the page; done() lets them through again.
async function hold(page, match) {
  let release, isHeld;
  const gate = new Promise((r) => { release = r; });
  const held = new Promise((r) => { isHeld = r; });
  const pred = (url) => match(decodeURIComponent(new URL(url).pathname));
  await page.route(pred, async (route) => { isHeld(); await gate; await route.continue(); });
  const answered = page.waitForResponse((res) => pred(res.url()));
  return { release, held: () => held, answered: () => answered, done: () => page.unroute(pred) };
}

test('late answers: a memory opened before another does not replace it, nor take the focus', async () => {
  await withPage(async ({ srv, page }) => {
    const slow = (await srv.api('POST', 'nodes', { title: '慢的记忆', content: '先点的' })).body.node;
    const fast = (await srv.api('POST', 'nodes', { title: '快的记忆', content: '后点的' })).body.node;
    await openPanel(page, srv, 'memory');
    const result = (title) => page.locator('ul[aria-label="搜索结果"] button.link', { hasText: title });
    await result('快的记忆').waitFor();
    // open the slow one, then the fast one while the slow one is held
    let h = await hold(page, (p) => p === `/api/v1/nodes/${slow.id}`);
    await result('慢的记忆').click();
    await h.held();
    await result('快的记忆').click();
    await page.locator('#node-title', { hasText: '快的记忆' }).waitFor();
    await page.focus('#q-keywords'); // the operator moved on
    h.release();
    await h.answered();
    await page.waitForTimeout(500); // the late answer would be drawn by now
    assert.equal(await page.locator('#node-title').textContent(), '快的记忆');
    assert.equal(new URL(page.url()).hash, `#memory/${fast.id}`);
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'q-keywords', 'the late answer took the focus');
    await h.done();

    // the important mark re-shows its memory: not once another is open
    h = await hold(page, (p) => p === `/api/v1/nodes/${fast.id}/important`);
    await page.click('#toggle-important');
    await h.held();
    await result('慢的记忆').click();
    await page.locator('#node-title', { hasText: '慢的记忆' }).waitFor();
    h.release();
    await h.answered();
    await page.waitForTimeout(500);
    assert.equal(await page.locator('#node-title').textContent(), '慢的记忆');
    assert.equal(new URL(page.url()).hash, `#memory/${slow.id}`);
    assert.equal((await srv.api('GET', `nodes/${fast.id}`)).body.node.important, true);
    await h.done();
  });
});

test('late answers: a person opened from the address does not replace one opened from the list since', async () => {
  await withPage(async ({ srv, page }) => {
    // the address opens one (held), the list another at once
    await srv.api('PUT', 'people/1', { name: '慢的人', relationship: '朋友', affinity: 1, reason: '先' });
    await srv.api('PUT', 'people/2', { name: '快的人', relationship: '朋友', affinity: 2, reason: '后' });
    const h = await hold(page, (p) => p === '/api/v1/people/1');
    await openPanel(page, srv, 'people/1');
    await h.held();
    await page.locator('#people-list button.link', { hasText: '快的人' }).click();
    await page.locator('#person-editor h2', { hasText: '快的人' }).waitFor();
    h.release();
    await h.answered();
    await page.waitForTimeout(500);
    assert.equal(await page.locator('#person-editor h2').textContent(), '快的人 (2)');
    assert.equal(await page.inputValue('#p-name'), '快的人');
    await h.done();

    // a save that answers after another person was opened: saved, not redrawn
    const s = await hold(page, (p) => p === '/api/v1/people/2');
    await page.fill('#p-name', '快的人改');
    await page.click('#p-save');
    await s.held();
    await page.locator('#people-list button.link', { hasText: '慢的人' }).click();
    await page.locator('#person-editor h2', { hasText: '慢的人' }).waitFor();
    s.release();
    await s.answered();
    await page.waitForTimeout(500);
    assert.equal(await page.locator('#person-editor h2').textContent(), '慢的人 (1)');
    assert.equal(await page.inputValue('#p-name'), '慢的人');
    assert.equal((await srv.api('GET', 'people/2')).body.person.name, '快的人改');
    await s.done();
  });
});

test('phone width: an opened memory, the editor and a person come into view; the History diff fits', async () => {
  await withPage(async ({ srv, page }) => {
    for (let i = 1; i <= 12; i++)
      await srv.api('POST', 'nodes', { title: `手机笔记${i}`, content: `第 ${i} 条` });
    await srv.api('PUT', 'people/7', { name: '小手机', relationship: '朋友', affinity: 1, reason: '测试' });
    await openPanel(page, srv, 'memory');
    const inView = (sel) => page.evaluate((s) => {
      const r = document.querySelector(s).getBoundingClientRect();
      return r.top >= -1 && r.top < window.innerHeight && r.bottom > 0;
    }, sel);
    // open the last result: the detail is far below it on a phone
    await page.locator('ul[aria-label="搜索结果"] button.link', { hasText: '手机笔记1' }).last().click();
    await page.locator('#node-title', { hasText: '手机笔记1' }).waitFor();
    await page.waitForFunction(() => document.activeElement?.id === 'detail');
    assert.ok(await inView('#node-title'), 'the opened memory is on screen');
    // back to the top, then edit: the editor comes into view, its title focused
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.click('#edit-node');
    await page.waitForFunction(() => document.activeElement?.id === 'e-title');
    assert.ok(await inView('#e-title'), 'the editor is on screen');
    await page.fill('#e-content', '在手机上改的，一段比较长的内容，'.repeat(8));
    await page.click('#e-save');
    await page.locator('#node-content', { hasText: '在手机上改的' }).waitFor();
    // the redraw after saving scrolls it into view; under load that may
    // come a frame after the text (a poll, failing if it never does)
    const shown = await page.waitForFunction((s) => {
      const r = document.querySelector(s)?.getBoundingClientRect();
      return r && r.top >= -1 && r.top < window.innerHeight && r.bottom > 0;
    }, '#node-title', { timeout: 5000 }).then(() => true, () => false);
    assert.ok(shown, 'the saved memory is on screen');

    // a person opened from the list comes into view
    await openPanel(page, srv, 'people');
    await page.locator('#people-list button.link', { hasText: '小手机' }).click();
    await page.waitForFunction(() => document.activeElement?.id === 'p-name');
    assert.ok(await inView('#p-name'), 'the person editor is on screen');

    // the History diff: shown, nothing wider than the screen
    await openPanel(page, srv, 'history');
    await page.fill('#h-keywords', '在手机上改的');
    await page.click('main form button[type=submit]');
    const row = page.locator('#history-list tr[data-field=content]').first();
    await row.waitFor();
    const box = await row.boundingBox();
    assert.ok(box.x >= 0 && box.x + box.width <= 390, `the diff row spans ${box.x}…${box.x + box.width}`);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `the History panel is ${overflow}px wider than a phone`);
  }, { viewport: { width: 390, height: 844 } });
});
