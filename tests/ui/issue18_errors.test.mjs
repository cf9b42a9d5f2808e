// issue18_errors.test.mjs — issue 18, defect 6 (server errors appeared in
// English inside the Chinese page — synonyms, supersede, the
// mark-important receipt — and an old green message stayed beside a new
// red error): errors carry a code and, for a refused argument, details
// naming the field; the page words both in zh / en with the server's
// English message marked as such; one status line at a time. axe-core
// at 1440 / 390 px, zh and en.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withPage, openPanel, axeClean, eachWidthAndLanguage } from './serve.mjs';

test('issue18_errors_worded: refusals in the page\'s words with the field; the receipt in one language; one status line at a time', async () => {
  await withPage(async ({ srv, page }) => {
    // the server: codes and fields in the details, for schema refusals
    // and for the rules' own "argument '…'" refusals alike
    let r = await srv.api('POST', 'synonyms', { terms: ['单独'] });
    assert.deepEqual(r.body.error.details, { field: 'terms', reason: 'minItems' });
    r = await srv.api('POST', 'synonyms', { terms: ['同一', '同一'] });
    assert.deepEqual(r.body.error.details, { field: 'terms', reason: 'invalid' });
    r = await srv.api('POST', 'nodes', { content: 'x' });
    assert.deepEqual(r.body.error.details, { field: 'title', reason: 'missing' });

    // synonyms: a green line, then a refusal — the green line goes
    await openPanel(page, srv, 'synonyms');
    await page.locator('#syn-table').waitFor();
    await page.fill('#s-add', '咕噜兽, 噜噜怪');
    await page.click('#s-add-btn');
    await page.locator('#status', { hasText: '已添加词组' }).waitFor();
    await page.fill('#s-add', '同一, 同一');
    await page.click('#s-add-btn');
    const err = page.locator('main .error').first();
    await err.waitFor();
    assert.match(await err.innerText(), /^出错了 \(400 invalid_argument\)：请求里有值不对，没有做任何更改：“词条”的值不对/);
    assert.match(await err.locator('.server-says').innerText(), /服务器说明（英文）：argument 'terms'/);
    assert.equal(await err.locator('.server-says [lang=en]').count(), 1);
    assert.equal(await page.locator('#status').innerText(), '', 'the green line went when the error came');
    // and a success takes the error away
    await page.fill('#s-add', '喵喵兽, 咪咪兽');
    await page.click('#s-add-btn');
    await page.locator('#status', { hasText: '已添加词组' }).waitFor();
    assert.equal(await page.locator('main .error').count(), 0);

    // supersede a memory by itself: the rule's refusal, worded with its field
    const a = (await srv.api('POST', 'nodes', { title: '自己替代自己', content: 'x' })).body.node;
    await openPanel(page, srv, `memory/${a.id}`);
    await page.locator('#node-title', { hasText: '自己替代自己' }).waitFor();
    await page.click('#supersede-node');
    await page.getByLabel('查找替代记录').fill('自己替代自己');
    await page.getByLabel('查找替代记录').press('Enter');
    await page.locator('.picker button.link', { hasText: '自己替代自己' }).click();
    await page.fill('#s-reason', '试试');
    await page.locator('#node-msg button[type=submit]').click();
    const sup = page.locator('#supersede-form .error');
    await sup.waitFor();
    assert.match(await sup.innerText(), /请求里有值不对，没有做任何更改：“记忆 ID”里有替代它们的那条记忆：一条记忆不能取代它自己/);
    assert.match(await sup.innerText(), /cannot supersede itself/);

    // the receipt of the 6th important mark: Chinese only in the Chinese page
    const ids = [];
    for (let i = 1; i <= 6; i++)
      ids.push((await srv.api('POST', 'nodes', { title: `事项${i}`, content: `内容${i}` })).body.node.id);
    for (const id of ids.slice(0, 5)) await srv.api('POST', `nodes/${id}/important`, { important: true });
    await openPanel(page, srv, `memory/${ids[5]}`);
    await page.locator('#node-title', { hasText: '事项6' }).waitFor();
    await page.click('#toggle-important');
    const receipt = page.locator('#receipt');
    await receipt.waitFor();
    assert.match(await receipt.innerText(), /重要记忆最多 5 条/);
    assert.doesNotMatch(await receipt.innerText(), /At most/);

    // English
    await page.click('#lang');
    await openPanel(page, srv, 'synonyms');
    await page.locator('#syn-table').waitFor();
    await page.fill('#s-add', '一个');
    await page.click('#s-add-btn');
    await page.locator('main .error', { hasText: 'A value in the request is not valid; nothing was changed: “Terms” has too few items' }).waitFor();
    await page.click('#lang');

    await eachWidthAndLanguage(page, async (p, what) => {
      await p.locator('#s-add').waitFor();
      await p.fill('#s-add', '一个');
      await p.click('#s-add-btn');
      await p.locator('main .error').first().waitFor();
      await axeClean(p, `synonyms with an error, ${what}`);
    });
  });
});
