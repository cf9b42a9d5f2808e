// issue18_people_unsaved.test.mjs — issue 18, "a warning before leaving
// unsaved edits", for the People editor (as ui/issue18_unsaved for the
// memory editor and the config panel): once edited and not saved it asks
// before another person (the list, 新建人物), another tab, the language
// switch or closing the page; staying keeps the edit and the address;
// saving or 放弃修改 (Discard changes) clears the question, and an
// untouched editor asks nothing. axe-core at 1440 / 390 px, zh and en.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withPage, openPanel, axeClean, eachWidthAndLanguage } from './serve.mjs';

const person = (name) => ({ name, aliases: [], relationship: '朋友', affinity: 10, reason: 'r' });

async function counting(page, answer) {
  const asked = [];
  page.removeAllListeners('dialog'); // serve.mjs accepts every confirm; here each is counted
  page.on('dialog', async (d) => {
    asked.push([d.type(), d.message()]);
    await (answer() || d.type() === 'beforeunload' ? d.accept() : d.dismiss()).catch(() => {});
  });
  const until = async (n) => { for (let i = 0; i < 100 && asked.length < n; i++) await new Promise((r) => setTimeout(r, 20)); };
  return { asked, until };
}

test('issue18_people_unsaved_edits_warn: the People editor asks before its changes are lost', async () => {
  await withPage(async ({ srv, page }) => {
    assert.equal((await srv.api('PUT', 'people/111', person('阿一'))).status, 200);
    assert.equal((await srv.api('PUT', 'people/222', person('阿二'))).status, 200);
    const { asked, until } = await counting(page, () => false); // stay
    await openPanel(page, srv, 'people/111');
    await page.locator('#p-name').waitFor();
    assert.equal(await page.inputValue('#p-name'), '阿一');
    await page.fill('#p-relationship', '改了一半');
    // another person from the list: asked; staying keeps the edit and the address
    await page.locator('#people-list button.link', { hasText: '阿二' }).click();
    await until(1);
    assert.equal(asked.length, 1, 'asked before opening another person');
    assert.equal(asked[0][0], 'confirm');
    assert.match(asked[0][1], /未保存的修改/);
    assert.equal(await page.inputValue('#p-name'), '阿一');
    assert.equal(await page.inputValue('#p-relationship'), '改了一半');
    assert.ok(page.url().endsWith('#people/111'), page.url());
    // 新建人物, another tab, the language: asked each time, nothing lost
    await page.click('#new-person');
    await until(2);
    assert.equal(asked.length, 2);
    assert.equal(await page.inputValue('#p-relationship'), '改了一半');
    await page.click('#tab-memory');
    await until(3);
    assert.equal(asked.length, 3);
    assert.equal(await page.locator('main').getAttribute('data-panel'), 'people');
    await page.click('#lang');
    await until(4);
    assert.equal(asked.length, 4);
    assert.equal(await page.evaluate(() => document.documentElement.lang), 'zh-CN', 'the language stayed');
    assert.equal(await page.inputValue('#p-relationship'), '改了一半');
    // closing the page: beforeunload
    await page.close({ runBeforeUnload: true });
    await until(5);
    assert.equal(asked.length, 5);
    assert.equal(asked[4][0], 'beforeunload');
    assert.equal((await srv.api('GET', 'people/111')).body.person.relationship, '朋友', 'nothing was saved');
  });

  await withPage(async ({ srv, page }) => {
    assert.equal((await srv.api('PUT', 'people/111', person('阿一'))).status, 200);
    assert.equal((await srv.api('PUT', 'people/222', person('阿二'))).status, 200);
    const node = (await srv.api('POST', 'nodes', { title: '阿一的档案', content: 'x' })).body.node;
    const { asked, until } = await counting(page, () => true); // leave
    await openPanel(page, srv, 'people/111');
    await page.locator('#p-name').waitFor();

    // leaving on purpose: asked, and the other person opens
    await page.fill('#p-aliases', '小一');
    await page.locator('#people-list button.link', { hasText: '阿二' }).click();
    await page.locator('#person-editor h2', { hasText: '阿二' }).waitFor();
    await until(1);
    assert.equal(asked.length, 1);
    assert.deepEqual((await srv.api('GET', 'people/111')).body.person.aliases, []);

    // saved: no question after
    await page.locator('#people-list button.link', { hasText: '阿一' }).click();
    await page.locator('#person-editor h2', { hasText: '阿一' }).waitFor();
    await page.fill('#p-relationship', '老朋友');
    await page.click('#p-save');
    await page.locator('#status', { hasText: '已保存 阿一' }).waitFor();
    await page.locator('#people-list button.link', { hasText: '阿二' }).click();
    await page.locator('#person-editor h2', { hasText: '阿二' }).waitFor();
    assert.equal(asked.length, 1, 'nothing asked after saving');
    assert.equal((await srv.api('GET', 'people/111')).body.person.relationship, '老朋友');

    // 放弃修改: the record as it was, nothing asked after
    await page.fill('#p-name', '不要了');
    await page.click('#p-cancel');
    assert.equal(await page.inputValue('#p-name'), '阿二');
    await page.click('#tab-history');
    await page.locator('main[data-panel="history"]').waitFor();
    assert.equal(asked.length, 1, 'nothing asked after discarding');

    // linking a memory is a change too; an untouched editor asks nothing
    await openPanel(page, srv, 'people/111');
    await page.locator('#p-name').waitFor();
    await page.click('#tab-memory');
    await page.locator('main[data-panel="memory"]').waitFor();
    assert.equal(asked.length, 1, 'nothing asked for an unchanged editor');
    await openPanel(page, srv, 'people/111');
    await page.locator('#p-name').waitFor();
    await page.locator('#person-editor .picker input').fill('阿一的档案');
    await page.locator('#person-editor .picker button', { hasText: '查找' }).click();
    await page.locator('#person-editor .picker li button.link', { hasText: '阿一的档案' }).click();
    await page.locator('#p-node', { hasText: node.id }).waitFor();
    await page.click('#tab-memory');
    await until(2);
    assert.equal(asked.length, 2, 'a new link is asked about');

    await openPanel(page, srv, 'people/111');
    await eachWidthAndLanguage(page, async (p, what) => {
      await p.locator('#p-cancel').waitFor();
      await axeClean(p, `people editor ${what}`);
    });
  });
});
