// issue18_transcript.test.mjs — issue 18, defect 10 (transcripts opened
// at the oldest message, page 1 weeks ago): the newest message first,
// pages going back in time, a date jumps to that day (newest first
// there too), mentions and replies shown. axe-core at 1440 / 390 px, zh
// and en.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withPage, openPanel, axeClean, eachWidthAndLanguage } from './serve.mjs';

const KEY = 'group:100000001';

test('issue18_transcript_newest_first: newest first, older pages, a date jumps to its day, mentions and replies visible', async () => {
  await withPage(async ({ srv, page }) => {
    // 40 messages on 20 November, then 20 on 28 November (noon UTC: the
    // same day in the browser's zone, UTC here)
    const msg = (i, day) => ({ id: `x${i}`, time: new Date(Date.UTC(2026, 10, day, 12, 0, i)).toISOString(), senderId: '10001', senderName: '小明', text: `第${i}条` });
    const batch = [];
    for (let i = 1; i <= 40; i++) batch.push(msg(i, 20));
    for (let i = 41; i <= 60; i++) batch.push(msg(i, 28));
    batch[59] = { ...batch[59], text: '回复你', mentions: ['10002'], replyTo: 'x59' };
    const r = await srv.api('POST', `conversations/${encodeURIComponent(KEY)}/messages`, { messages: batch, recall: false });
    assert.equal(r.body.logged, 60, JSON.stringify(r.body));

    await openPanel(page, srv, `conversations/${KEY}`);
    const items = page.locator('#cv-list > li');
    await items.first().waitFor();
    // newest first
    assert.equal(await items.first().getAttribute('data-id'), 'x60');
    assert.equal(await items.nth(1).getAttribute('data-id'), 'x59');
    assert.equal(await items.count(), 50);
    assert.match(await items.first().innerText(), /回复 #x59/);
    assert.match(await items.first().locator('.mentions').innerText(), /@10002/);
    await page.locator('#cv-messages .pager', { hasText: '第 1–50 条，共 60 条' }).waitFor();
    // older pages
    await page.locator('#cv-messages .pager button', { hasText: '下一页' }).click();
    await page.locator('#cv-messages .pager', { hasText: '第 51–60 条' }).waitFor();
    assert.equal(await items.first().getAttribute('data-id'), 'x10');
    assert.equal(await items.count(), 10);
    assert.equal(await items.last().getAttribute('data-id'), 'x1');
    // a date: that day only, newest first
    await page.fill('#cv-date', '2026-11-20');
    await page.locator('#cv-messages').locator('..').locator('form button[type=submit]').first().click();
    await page.locator('#cv-messages .pager', { hasText: '共 40 条' }).waitFor();
    assert.equal(await items.first().getAttribute('data-id'), 'x40');

    await eachWidthAndLanguage(page, async (p, what) => {
      await p.locator('#cv-list > li').first().waitFor();
      await axeClean(p, `transcript ${what}`);
    });
  });
});
