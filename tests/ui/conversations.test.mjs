// conversations.test.mjs — the Conversations panel against the
// conversation routes (GET conversations, …/messages, views, views/read,
// stickers/<name>) and the seed-003 fixture tests/fixtures/qq-memory
// (imported with `zcor import qq-memory`).
//
// The messages are logged the way a world logs them: POST
// conversations/{key}/messages (docs/API.md, "Log a batch").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { withPage, openPanel, shot, cli, tmp } from './serve.mjs';

// the seed-003 memory directory fixture (tests/fixtures/qq-memory)
const QQ_MEMORY = fileURLToPath(new URL('../fixtures/qq-memory', import.meta.url));

test('conversations: list with counters, transcript by date and keywords, read-only views', async () => {
  await withPage(async ({ srv, page }) => {
    const logged = await srv.api('POST', 'conversations/group%3A100000001/messages', { messages: [
      { id: 'a1', time: '2026-03-01T12:00:00Z', senderId: '42', senderName: '小红', text: '今天去看了熊猫' },
      { id: 'a2', time: '2026-03-01T12:01:00Z', senderId: '43', senderName: '小蓝', text: '<b>熊猫</b>好可爱' }] });
    assert.equal(logged.status, 200, JSON.stringify(logged.body));
    assert.equal(logged.body.logged, 2, JSON.stringify(logged.body));
    await openPanel(page, srv, 'conversations');
    const row = page.locator('#conv-list tr', { hasText: 'group:100000001' });
    await row.waitFor();
    assert.match(await row.innerText(), /\b2\b/);
    await row.locator('button.link').click();
    await page.locator('#cv-messages li').first().waitFor();
    assert.equal(await page.locator('#cv-messages li').count(), 2);
    // markup in a message is text
    await page.locator('#cv-messages .text', { hasText: '<b>熊猫</b>好可爱' }).waitFor();
    await page.fill('#cv-keywords', '看了');
    await page.fill('#cv-date', '2026-03-01');
    await page.locator('#conv-detail form button[type=submit]').click();
    await page.locator('#cv-messages li').first().waitFor();
    await page.waitForFunction(() => document.querySelectorAll('#cv-messages li').length === 1);
    await page.fill('#cv-date', '2026-03-02');
    await page.locator('#conv-detail form button[type=submit]').click();
    await page.locator('#cv-messages p.empty').waitFor();
    await shot(page, 'conversations');

    // the views: each opens read-only, with the API's text
    const vr = await srv.api('GET', 'views?conversation=group%3A100000001');
    assert.equal(vr.status, 200, JSON.stringify(vr.body));
    const views = vr.body.items;
    if (views.length) {
      await page.locator('#cv-views button.link').first().waitFor();
      const first = views[0].path;
      await page.locator('#cv-views button.link', { hasText: first }).click();
      const text = (await srv.api('GET', `views/read?path=${encodeURIComponent(first)}`)).body.text;
      await page.locator('#cv-view pre.view-text').waitFor();
      assert.equal(await page.locator('#cv-view pre.view-text').textContent(), text);
      const stickers = views.find((v) => /STICKERS\.md$/.test(v.path));
      if (stickers) {
        await page.locator('#cv-views button.link', { hasText: stickers.path }).click();
        const body = (await srv.api('GET', `views/read?path=${encodeURIComponent(stickers.path)}`)).body.text;
        if (/stickers\//.test(body)) {
          const img = page.locator('#cv-view .stickers img').first();
          await img.waitFor();
          await page.waitForFunction(() => { const i = document.querySelector('#cv-view .stickers img'); return i && i.complete && i.naturalWidth > 0; });
          assert.match(await img.getAttribute('src'), /^blob:/);
        }
      }
    } else {
      await page.locator('#cv-views p.empty').waitFor();
    }
  });
});

test('views: every view read-only from the panel, STICKERS.md with its images', async () => {
  const dir = tmp();
  const imp = cli(dir, 'import', 'qq-memory', QQ_MEMORY);
  assert.equal(imp.status, 0, imp.stderr);
  await withPage(async ({ srv, page }) => {
    const all = (await srv.api('GET', 'views')).body.items;
    assert.ok(all.some((v) => v.path === 'STICKERS.md'), JSON.stringify(all));
    await openPanel(page, srv, 'conversations');
    for (const v of all) await page.locator('#all-views button.link', { hasText: v.path }).first().waitFor();
    await page.locator('#all-views button.link', { hasText: /^STICKERS\.md$/ }).click();
    const text = (await srv.api('GET', 'views/read?path=STICKERS.md')).body.text;
    await page.locator('#cv-view pre.view-text').waitFor();
    assert.equal(await page.locator('#cv-view pre.view-text').textContent(), text);
    const names = [...text.matchAll(/stickers\/(\S+)/g)].map((m) => m[1]);
    assert.ok(names.length >= 1, text);
    // each sticker is an image fetched with the token header (a blob: URL)
    await page.waitForFunction((n) => {
      const im = [...document.querySelectorAll('#cv-view .stickers img')];
      return im.length === n && im.every((i) => i.complete && i.naturalWidth > 0 && i.src.startsWith('blob:'));
    }, names.length);
    await shot(page, 'views');
  }, { dir });
});

test('conversations: an image someone sent is shown from the media cache', async () => {
  await withPage(async ({ srv, page }) => {
    // a 2×2 PNG, sent inline as a message's media
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGP4z8AARAwQCgAf7gP9i18U1AAAAABJRU5ErkJggg==';
    const logged = await srv.api('POST', 'conversations/group%3A7/messages', { messages: [
      { id: 'p1', time: '2026-03-01T12:00:00Z', senderId: '42', senderName: '小红', text: '看这个', media: [{ type: 'image', data: png, name: 'x.png' }] }] });
    assert.equal(logged.status, 200, JSON.stringify(logged.body));
    const ref = (await srv.api('GET', 'conversations/group%3A7/messages')).body.items[0].media[0];
    assert.match(ref, /^media\/[0-9a-f]{64}\.png$/);
    await openPanel(page, srv, 'conversations');
    await page.locator('#conv-list button.link', { hasText: 'group:7' }).click();
    const img = page.locator('#cv-messages img.media');
    await img.waitFor();
    await page.waitForFunction(() => { const i = document.querySelector('#cv-messages img.media'); return i && i.complete && i.naturalWidth === 2; });
    assert.match(await img.getAttribute('src'), /^blob:/);
    // the route refuses names outside the cache
    assert.equal((await srv.api('GET', 'media/..%2Fmemory.db')).status, 404); // no such route
    assert.equal((await srv.api('GET', 'media/.memory.db')).status, 400);
    assert.equal((await srv.api('GET', `media/${'0'.repeat(64)}.png`)).status, 404);
  });
});
