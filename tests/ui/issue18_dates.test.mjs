// issue18_dates.test.mjs — issue 18, defect 3 (a date without a time was
// silently ignored in the memory and history filters: every record came
// back): a date alone means that whole local day (the browser's zone,
// here Asia/Shanghai, 8 hours from UTC), a time narrows it, a time
// without a date is refused naming the box; 今天 / 昨天 / 最近 7 天 fill
// the range and search. axe-core at 1440 / 390 px, zh and en.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withPage, openPanel, axeClean, eachWidthAndLanguage } from './serve.mjs';

const ZONE = 'Asia/Shanghai';
const dayIn = (ms) => new Intl.DateTimeFormat('en-CA', { timeZone: ZONE }).format(new Date(ms)); // YYYY-MM-DD
const DAY = 86400000;

test('issue18_dates_whole_day: a date alone is its whole local day in the memory and history filters; 今天 / 昨天 / 最近 7 天', async () => {
  await withPage(async ({ srv, browser }) => {
    for (let i = 1; i <= 3; i++)
      assert.equal((await srv.api('POST', 'nodes', { title: `日期笔记${i}`, content: '按天筛选' })).status, 201);
    const today = dayIn(Date.now());
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'zh-CN', timezoneId: ZONE });
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    try {
      // ---- Memory
      await openPanel(page, srv, 'memory');
      const items = page.locator('main ul.list li button.link', { hasText: '日期笔记' });
      const empty = page.locator('#panel p.empty', { hasText: '没有结果' }).first();
      const search = () => page.locator('main form button[type=submit]').first().click();
      await page.fill('#q-keywords', '按天筛选');
      await search();
      await page.locator('.pager', { hasText: '共 3 条' }).waitFor();
      // the next day alone (in Shanghai) finds nothing: it is not ignored
      await page.fill('#q-from', dayIn(Date.now() + DAY));
      await search();
      await empty.waitFor();
      // today alone, as from and as to: its whole day
      await page.fill('#q-from', today);
      await search();
      await page.locator('.pager', { hasText: '共 3 条' }).waitFor();
      await page.fill('#q-from', '');
      await page.fill('#q-to', dayIn(Date.now() - DAY));
      await search();
      await empty.waitFor();
      await page.fill('#q-to', today);
      await search();
      await page.locator('.pager', { hasText: '共 3 条' }).waitFor();
      // from today, at a time after now: nothing; 00:00:00 that day: all
      await page.fill('#q-to', '');
      await page.fill('#q-from', today);
      await page.check('#q-with-time'); // the time boxes on request
      await page.fill('#q-from-time', '23:59:59');
      await search();
      await empty.waitFor();
      await page.fill('#q-from-time', '00:00:00');
      await search();
      await page.locator('.pager', { hasText: '共 3 条' }).waitFor();
      // a time without its date: said, not ignored
      await page.fill('#q-from', '');
      await search();
      await page.locator('main .error', { hasText: '“从”只填了时间：请同时填写日期' }).waitFor();
      await page.fill('#q-from-time', '');

      // shortcuts: 今天 and 最近 7 天 find them, 昨天 does not
      await page.click('#q-yesterday');
      await empty.waitFor();
      assert.equal(await page.inputValue('#q-from'), dayIn(Date.now() - DAY));
      await page.click('#q-today');
      await page.locator('.pager', { hasText: '共 3 条' }).waitFor();
      assert.equal(await page.inputValue('#q-from'), today);
      assert.equal(await page.inputValue('#q-to'), today);
      await page.click('#q-week');
      await page.locator('.pager', { hasText: '共 3 条' }).waitFor();
      assert.equal(await page.inputValue('#q-from'), dayIn(Date.now() - 6 * DAY));
      assert.equal(await items.count(), 3);

      // ---- History: the same boxes
      await openPanel(page, srv, 'history');
      const records = page.locator('#history-list li.record', { hasText: '日期笔记' });
      await records.first().waitFor();
      const hsearch = () => page.click('main form button[type=submit]');
      await page.fill('#h-keywords', '按天筛选');
      await page.fill('#h-from', dayIn(Date.now() + DAY));
      await hsearch();
      await page.locator('#history-list p.empty').waitFor();
      await page.fill('#h-from', today);
      await page.fill('#h-to', today);
      await hsearch();
      await page.locator('#history-list .pager', { hasText: '共 3 条' }).waitFor();
      await page.click('#h-yesterday');
      await page.locator('#history-list p.empty').waitFor();
      await page.click('#h-today');
      await page.locator('#history-list .pager', { hasText: '共 3 条' }).waitFor();

      // the shortcuts in English
      await page.click('#lang');
      await page.getByRole('button', { name: 'Last 7 days' }).click();
      await page.locator('#history-list .pager').waitFor();
      await page.click('#lang');

      await eachWidthAndLanguage(page, async (p, what) => {
        await openPanel(p, srv, 'memory');
        await p.locator('#q-today').waitFor();
        await axeClean(p, `memory ${what}`);
        await openPanel(p, srv, 'history');
        await p.locator('#h-today').waitFor();
        await axeClean(p, `history ${what}`);
      });
      assert.deepEqual(errors, []);
    } finally {
      await context.close();
    }
  });
});
