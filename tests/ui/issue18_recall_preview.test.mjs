// issue18_recall_preview.test.mjs — issue 18, "Recall preview": type a
// message, pick a conversation and a speaker, and see exactly the header
// the bot would get (the same as `zcor recall` for that message and
// speaker), every candidate with its scores and why it was kept or cut
// (`zcor recall --explain`), and the system prefix's important memories;
// each links to its memory or person. A preview counts no hit and leaves
// no history record. axe-core at 1440 / 390 px, zh and en.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withPage, openPanel, cli, tmp, axeClean, eachWidthAndLanguage, shot } from './serve.mjs';

const CONV = 'group:100000001';

function recallCli(dir, explain) {
  const r = cli(dir, '--conversation', CONV, 'recall', '--message', '猫咪在干嘛', '--speaker', '12345:小明', '--json', ...(explain ? ['--explain'] : []));
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

const hits = (dir, id) => JSON.parse(cli(dir, 'tool', 'zcor_memory_read', JSON.stringify({ id })).stdout).node.hits;

test('issue18_recall_preview: the header as the bot gets it, every candidate kept or cut with its scores, the important memories; linked; no hit counted', async () => {
  const dir = tmp();
  const ids = {};
  await withPage(async ({ srv, page }) => {
    for (let i = 1; i <= 3; i++)
      ids[`cat${i}`] = (await srv.api('POST', 'nodes', { title: `猫咪笔记${i}`, content: `猫咪喜欢晒太阳${i}`, keywords: ['猫咪'] })).body.node.id;
    ids.other = (await srv.api('POST', 'nodes', { title: '今天的天气', content: '下雨' })).body.node.id;
    ids.imp = (await srv.api('POST', 'nodes', { title: '主人的生日', content: '三月一日' })).body.node.id;
    await srv.api('POST', `nodes/${ids.imp}/important`, { important: true });
    assert.equal((await srv.api('PUT', 'people/12345', { name: '小明', relationship: '同学', affinity: 20, reason: '常聊天' })).status, 200);
    const expected = recallCli(srv.dir, true); // (counts hits in its own process: read below)
    const hitsAfterCli = hits(srv.dir, ids.cat1);
    assert.ok(hitsAfterCli >= 1, 'a recall counts its hits');
    const historyBefore = (await srv.api('GET', 'history?limit=1')).body.total;

    await openPanel(page, srv, 'recall');
    await page.fill('#rp-text', '猫咪在干嘛');
    await page.fill('#rp-conv', CONV);
    await page.fill('#rp-speaker', '12345');
    await page.fill('#rp-speaker-name', '小明');
    await page.click('#rp-go');
    await page.locator('#rp-header').waitFor();

    // the header: exactly what recall gives for that message and speaker
    assert.equal(await page.locator('#rp-header').textContent(), expected.header);
    assert.match(await page.locator('#rp-summary').innerText(), /^保留 \d+ 条，舍弃 \d+ 条；用了 \d+ \/ 6000 字/);
    // every candidate of --explain, kept or cut for the same reason, with
    // the preview's scores (the CLI's run above counted hits: salience
    // moved a little since)
    const rows = page.locator('#rp-cands tbody tr');
    const shown = (await srv.api('POST', 'recall/preview', { conversation: CONV, text: '猫咪在干嘛', senderId: '12345', senderName: '小明' })).body;
    assert.equal(shown.header, expected.header);
    const list = (e) => e.map((x) => `${x.id ?? x.personId} ${x.title ?? x.name} ${x.included} ${x.why}`).join('\n');
    assert.equal(list(shown.explain), list(expected.explain));
    assert.equal(await rows.count(), shown.explain.length);
    assert.deepEqual(shown.explain.map((x) => [x.id ?? x.personId, x.included, x.why]).sort(),
      expected.explain.map((x) => [x.id ?? x.personId, x.included, x.why]).sort());
    for (const x of shown.explain) {
      const row = page.locator(`#rp-cands tbody tr[data-id="${x.id ?? x.personId}"]`);
      assert.equal(await row.getAttribute('class'), x.included ? 'kept' : 'cut', x.title ?? x.name);
      assert.equal(await row.locator('td').nth(2).textContent(), x.score.toFixed(3));
      assert.equal(await row.locator('td').nth(3).textContent(), x.features.entity.toFixed(3));
    }
    const cat = page.locator(`#rp-cands tr[data-id="${ids.cat1}"]`);
    assert.match(await cat.innerText(), /保留/);
    assert.match(await cat.innerText(), /在所属分区的名额内/);
    assert.match(await page.locator('#rp-cands tr[data-id="12345"]').innerText(), /小明 \(12345\)[\s\S]*保留[\s\S]*是发言人或被 @ 的人/);
    const other = page.locator(`#rp-cands tr[data-id="${ids.other}"]`);
    if (await other.count()) assert.match(await other.innerText(), /舍弃/);
    // the prefix's important memories
    await page.locator('#rp-important li', { hasText: `主人的生日 (${ids.imp})` }).waitFor();
    assert.match(await page.locator('#rp-prefix').textContent(), /## 重要记忆/);

    await shot(page, 'recall');

    // a preview leaves no history record
    assert.equal((await srv.api('GET', 'history?limit=1')).body.total, historyBefore);

    // each item links to its memory
    await cat.getByRole('button').click();
    await page.locator('#node-title', { hasText: '猫咪笔记1' }).waitFor();
    await page.goBack();
    await page.locator('main[data-panel=recall]').waitFor();

    // English: recall's own reasons
    await openPanel(page, srv, 'recall');
    await page.click('#lang');
    await page.fill('#rp-text', '猫咪在干嘛');
    await page.fill('#rp-conv', CONV);
    await page.click('#rp-go');
    await page.locator(`#rp-cands tr[data-id="${ids.cat1}"]`, { hasText: "ranked within its section's quota" }).waitFor();
    assert.match(await page.locator('#rp-summary').innerText(), /kept, \d+ cut/);
    await page.click('#lang');

    // auto-recall off: said so
    await srv.api('PUT', 'config', { recallChars: 0 });
    await openPanel(page, srv, 'recall');
    await page.fill('#rp-text', '猫咪在干嘛');
    await page.fill('#rp-conv', CONV);
    await page.click('#rp-go');
    await page.locator('#rp-summary', { hasText: '自动回忆已关闭' }).waitFor();
    await srv.api('PUT', 'config', { recallChars: 6000 });

    await eachWidthAndLanguage(page, async (p, what) => {
      await p.locator('#rp-text').waitFor();
      await p.fill('#rp-text', '猫咪在干嘛');
      await p.fill('#rp-conv', CONV);
      await p.click('#rp-go');
      await p.locator('#rp-cands').waitFor();
      await axeClean(p, `recall preview ${what}`);
    });
    ids.hitsAfterCli = hitsAfterCli;
  }, { dir });
  // the server is gone (its pending hit counts written): the previews counted none
  assert.equal(hits(dir, ids.cat1), ids.hitsAfterCli);
});
