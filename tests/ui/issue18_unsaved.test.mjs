// issue18_unsaved.test.mjs — issue 18, "a warning before leaving unsaved
// edits": the memory editor and the config panel, once edited and not
// saved, ask before another tab, another memory, the language switch or
// closing the page (beforeunload); staying keeps the edit and the
// address; saving or cancelling clears the question. axe-core at 1440 /
// 390 px, zh and en, on the config panel with its new 放弃修改 button.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withPage, openPanel, axeClean, eachWidthAndLanguage } from './serve.mjs';

test('issue18_unsaved_edits_warn: the memory editor and config ask before their changes are lost', async () => {
  await withPage(async ({ srv, page }) => {
    const a = (await srv.api('POST', 'nodes', { title: '要编辑的', content: '原文' })).body.node;
    const b = (await srv.api('POST', 'nodes', { title: '另一条', content: '别的' })).body.node;
    const asked = [];
    const until = async (n) => { for (let i = 0; i < 100 && asked.length < n; i++) await new Promise((r) => setTimeout(r, 20)); };
    let answer = false; // false: stay
    page.removeAllListeners('dialog'); // serve.mjs accepts every confirm; here each is counted
    page.on('dialog', async (d) => {
      asked.push([d.type(), d.message()]);
      await (answer || d.type() === 'beforeunload' ? d.accept() : d.dismiss()).catch(() => {});
    });

    // the memory editor, edited: another memory from the tree asks; staying keeps the edit and the address
    await openPanel(page, srv, `memory/${a.id}`);
    await page.locator('#node-title', { hasText: '要编辑的' }).waitFor();
    await page.click('#edit-node');
    await page.fill('#e-content', '改了一半');
    await page.locator(`.tree [role=treeitem][data-id="${b.id}"] > .node`).click();
    await until(1);
    assert.equal(asked.length, 1, 'asked before opening another memory');
    assert.equal(asked[0][0], 'confirm');
    assert.match(asked[0][1], /未保存的修改/);
    assert.equal(await page.inputValue('#e-content'), '改了一半');
    assert.ok(page.url().endsWith(`#memory/${a.id}`), page.url());
    // another tab asks too
    await page.click('#tab-history');
    await until(2);
    assert.equal(asked.length, 2);
    assert.equal(await page.locator('main').getAttribute('data-panel'), 'memory');
    assert.equal(await page.inputValue('#e-content'), '改了一半');
    // closing the page: beforeunload
    await page.close({ runBeforeUnload: true });
    await until(3);
    assert.equal(asked.length, 3);
    assert.equal(asked[2][0], 'beforeunload');
  });

  await withPage(async ({ srv, page }) => {
    const a = (await srv.api('POST', 'nodes', { title: '要编辑的', content: '原文' })).body.node;
    const b = (await srv.api('POST', 'nodes', { title: '另一条', content: '别的' })).body.node;
    const asked = [];
    const until = async (n) => { for (let i = 0; i < 100 && asked.length < n; i++) await new Promise((r) => setTimeout(r, 20)); };
    let answer = true;
    page.removeAllListeners('dialog');
    page.on('dialog', async (d) => { asked.push(d.type()); if (answer) await d.accept(); else await d.dismiss(); });
    await openPanel(page, srv, `memory/${a.id}`);
    await page.locator('#node-title', { hasText: '要编辑的' }).waitFor();

    // leaving on purpose: asked, and the other memory opens
    await page.click('#edit-node');
    await page.fill('#e-title', '要编辑的（改）');
    await page.locator(`.tree [role=treeitem][data-id="${b.id}"] > .node`).click();
    await page.locator('#node-title', { hasText: '另一条' }).waitFor();
    await until(1);
    assert.equal(asked.length, 1);
    assert.equal((await srv.api('GET', `nodes/${a.id}`)).body.node.title, '要编辑的');

    // saved: no question after
    await page.click('#edit-node');
    await page.fill('#e-content', '存下来的');
    await page.click('#e-save');
    await page.locator('#status', { hasText: '已保存' }).waitFor();
    await page.locator(`.tree [role=treeitem][data-id="${a.id}"] > .node`).click();
    await page.locator('#node-title', { hasText: '要编辑的' }).waitFor();
    assert.equal(asked.length, 1, 'nothing asked after saving');
    // cancelled: no question after
    await page.click('#edit-node');
    await page.fill('#e-content', '不要了');
    await page.click('#e-cancel');
    await page.click('#tab-history');
    await page.locator('main[data-panel="history"]').waitFor();
    assert.equal(asked.length, 1, 'nothing asked after cancelling');
    // an untouched editor asks nothing
    await openPanel(page, srv, `memory/${a.id}`);
    await page.click('#edit-node');
    await page.click('#tab-people');
    await page.locator('main[data-panel="people"]').waitFor();
    assert.equal(asked.length, 1, 'nothing asked for an unchanged editor');

    // the config panel: edited → asked before another tab and the language
    answer = false;
    await openPanel(page, srv, 'config');
    await page.locator('#c-recallChars').waitFor();
    await page.fill('#c-recallChars', '777');
    await page.click('#tab-memory');
    await until(2);
    assert.equal(asked.length, 2);
    assert.equal(await page.locator('main').getAttribute('data-panel'), 'config');
    await page.click('#lang');
    await until(3);
    assert.equal(asked.length, 3);
    assert.equal(await page.evaluate(() => document.documentElement.lang), 'zh-CN', 'the language stayed');
    assert.equal(await page.inputValue('#c-recallChars'), '777');
    // 放弃修改: the saved value back, nothing asked
    await page.click('#c-cancel');
    await page.waitForFunction(() => document.querySelector('#c-recallChars')?.value !== '777');
    await page.click('#tab-memory');
    await page.locator('main[data-panel="memory"]').waitFor();
    await until(3);
    assert.equal(asked.length, 3);
    // saved: nothing asked
    await openPanel(page, srv, 'config');
    await page.locator('#c-recallChars').waitFor();
    await page.fill('#c-recallChars', '777');
    await page.click('#c-save');
    await page.locator('#status', { hasText: '配置已保存' }).waitFor();
    await page.click('#tab-memory');
    await page.locator('main[data-panel="memory"]').waitFor();
    assert.equal(asked.length, 3, 'nothing asked after saving the config');
    assert.equal((await srv.api('GET', 'config')).body.recallChars, 777);

    await openPanel(page, srv, 'config');
    await eachWidthAndLanguage(page, async (p, what) => {
      await p.locator('#c-cancel').waitFor();
      await axeClean(p, `config ${what}`);
    });
  });
});
