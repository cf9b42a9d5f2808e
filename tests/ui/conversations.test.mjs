// conversations.test.mjs — the Conversations panel against the
// conversation routes (GET conversations, …/messages, views, views/read,
// stickers/<name>). Not registered in CTest until those routes land.
//
// The conversation and its messages are put into memory.db's schema-4
// tables (conversations, messages) with the sqlite3 shell before the
// server starts, as the bot loop would have logged them. NOTE for the
// merge: the messages table's FTS trigger uses zcor's own tokenizer,
// which the sqlite3 shell lacks ("no such tokenizer: zcor"), so seed()
// must switch to the real logging path (the console world or an import)
// once it exists on this branch.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { withPage, openPanel, shot, cli, tmp } from './serve.mjs';

function seed(dir, text) {
  const r = spawnSync('sqlite3', [`${dir}/memory.db`], { input: text, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
}

test('conversations: list with counters, transcript by date and keywords, read-only views', async () => {
  const dir = tmp();
  assert.equal(cli(dir, 'tool', 'zcor_memory_query', '{}').status, 0); // creates the store
  const day = Date.parse('2026-03-01T12:00:00Z');
  seed(dir, `
INSERT INTO conversations(key, slug, created_at, last_message_at, messages, lines_since_digest)
  VALUES ('group:100000001', 'group-100000001', ${day}, ${day + 60000}, 2, 2);
INSERT INTO messages(conversation, message_id, at, sender_id, sender_name, text, text_norm)
  VALUES ('group:100000001', 'a1', ${day}, '42', '小红', '今天去看了熊猫', '今天去看了熊猫'),
         ('group:100000001', 'a2', ${day + 60000}, '43', '小蓝', '<b>熊猫</b>好可爱', '<b>熊猫</b>好可爱');`);
  await withPage(async ({ srv, page }) => {
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
    const views = (await srv.api('GET', 'views?conversation=group%3A100000001')).body.items;
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
  }, { dir });
});
