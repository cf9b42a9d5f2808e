// issue18_backups.test.mjs — issue 18, "Backup, restore and export from
// the page": the Backups panel lists the backups zcor wrote in backups/
// (not a file or link planted there), makes one, downloads one as the
// export of the memory state (the file's own bytes and name), exports the
// current state (a backup made, then downloaded), and restores one only
// after a confirmation that says what is replaced and that the current
// state is backed up first — that copy then shows in the list.
// axe-core at 1440 / 390 px, zh and en.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { withPage, openPanel, tmp, axeClean, eachWidthAndLanguage, shot } from './serve.mjs';

test('issue18_backups_panel: list, back up now, export (download), restore after a confirmation naming the state backup', async () => {
  await withPage(async ({ srv, page }) => {
    await srv.api('POST', 'nodes', { title: '备份前的记忆', content: '一' });
    await openPanel(page, srv, 'backups');
    await page.locator('#bk-list .empty', { hasText: '还没有备份' }).waitFor();

    // back up now
    await page.click('#bk-make');
    await page.locator('#status', { hasText: /已备份为 memory-state-\d{8}T\d{9}Z\.json：1 条记忆，0 个人物/ }).waitFor();
    const listed = (await srv.api('GET', 'backups')).body.items;
    assert.equal(listed.length, 1);
    const first = listed[0].name;
    const row = page.locator(`#bk-table tr[data-name="${first}"]`);
    await row.waitFor();
    assert.match(await row.innerText(), /记忆状态（可恢复）/);
    assert.match(await row.innerText(), /新/);

    // what zcor did not write is not listed
    const outside = tmp();
    writeFileSync(join(outside, 'x.json'), 'SECRET');
    symlinkSync(join(outside, 'x.json'), join(srv.dir, 'backups', 'memory-state-20200101T000000000Z.json'));
    writeFileSync(join(srv.dir, 'backups', 'notes.txt'), 'mine');
    await openPanel(page, srv, 'memory');
    await openPanel(page, srv, 'backups');
    await row.waitFor();
    assert.equal(await page.locator('#bk-table tbody tr').count(), 1);

    // export: the file itself, under its own name
    const [dl] = await Promise.all([page.waitForEvent('download'), row.locator('.bk-export').click()]);
    assert.equal(dl.suggestedFilename(), first);
    const saved = await dl.path();
    assert.equal(readFileSync(saved, 'utf8'), readFileSync(join(srv.dir, 'backups', first), 'utf8'));
    await page.locator('#status', { hasText: `已开始下载 ${first}` }).waitFor();

    // export the current state: a backup made now and downloaded
    const [now] = await Promise.all([page.waitForEvent('download'), page.click('#bk-export-now')]);
    const made = (await srv.api('GET', 'backups')).body.items;
    assert.equal(made.length, 2);
    assert.equal(now.suggestedFilename(), made[0].name);
    assert.notEqual(made[0].name, first);
    assert.equal(readFileSync(await now.path(), 'utf8'), readFileSync(join(srv.dir, 'backups', made[0].name), 'utf8'));
    await page.locator(`#bk-table tr[data-name="${made[0].name}"]`, { hasText: '新' }).waitFor();

    // restore: asked first; cancel changes nothing
    await srv.api('POST', 'nodes', { title: '备份后的记忆', content: '二' });
    await row.locator('.bk-restore').click();
    const ask = page.locator('#bk-ask');
    await ask.waitFor();
    const words = await ask.innerText();
    assert.match(words, new RegExp(`用 ${first.replace(/\./g, '\\.')}（.+）恢复？`));
    assert.match(words, /现在的全部记忆、人物和重要标记（所有对话的）会被这份备份里的内容替换/);
    assert.match(words, /聊天记录、同义词、配置和历史记录不变/);
    await page.locator('#bk-ask-now', { hasText: '现在有 2 条记忆（含已被取代的）' }).waitFor();
    assert.match(words, /现在的状态会先自动备份到 backups\//);
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'bk-confirm');
    await page.click('#bk-cancel');
    assert.equal(await ask.count(), 0);
    assert.equal((await srv.api('GET', 'nodes?keywords=备份后的记忆')).body.items.length, 1);

    await row.locator('.bk-restore').click();
    await page.click('#bk-confirm');
    await page.locator('#status', { hasText: `已从 ${first} 恢复：1 条记忆，0 个人物。恢复前的状态已备份为 memory-state-` }).waitFor();
    assert.equal((await srv.api('GET', 'nodes?keywords=备份后的记忆')).body.items.length, 0);
    // the automatic state backup is listed, marked new, and holds what was replaced
    const after = (await srv.api('GET', 'backups')).body.items;
    assert.equal(after.length, 3);
    const previous = after[0].name;
    const prevRow = page.locator(`#bk-table tr[data-name="${previous}"]`);
    await prevRow.waitFor();
    assert.match(await prevRow.innerText(), /新/);
    assert.match(readFileSync(join(srv.dir, 'backups', previous), 'utf8'), /备份后的记忆/);
    await shot(page, 'backups');

    // English, plurals right: 1 memory, 0 people
    await page.click('#lang');
    await page.click('#bk-make');
    await page.locator('#status', { hasText: /^Backed up as memory-state-\d{8}T\d{9}Z\.json: 1 memory, 0 people\.$/ }).waitFor();
    await page.click('#lang');

    await eachWidthAndLanguage(page, async (p, what) => {
      await openPanel(p, srv, 'backups');
      await p.locator('#bk-table tbody tr').first().waitFor();
      await axeClean(p, `backups ${what}`);
      await p.locator('.bk-restore').first().click();
      await p.locator('#bk-ask').waitFor();
      if (what.endsWith('en')) assert.match(await p.locator('#bk-ask').innerText(), /backed up to backups\//);
      await axeClean(p, `backups, restore asked ${what}`);
      await p.click('#bk-cancel');
      const wide = await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(wide <= 0, `${what}: the page is ${wide}px wider than the window`);
    });
  });
});
