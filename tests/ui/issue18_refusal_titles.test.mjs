// issue18_refusal_titles.test.mjs — issue 18, defect 11 ("a refused delete
// of a replacement lists only an id"): the refusal's details carry the
// referrers' titles (built in src/memory with the ids, docs/API.md
// "Errors"), and the page lists each superseded memory and each linked
// person by title or name beside its id, in zh and en. axe-core on
// the refusal at 1280 px zh and 390 px en.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withPage, openPanel, axeClean } from './serve.mjs';

test('issue18_refused_delete_lists_titles: a replacement\'s refused delete lists the replaced titles beside their ids', async () => {
  await withPage(async ({ srv, page }) => {
    const old1 = (await srv.api('POST', 'nodes', { title: '旧的生日', content: '三月' })).body.node;
    const old2 = (await srv.api('POST', 'nodes', { title: '更旧的生日', content: '二月' })).body.node;
    const repl = (await srv.api('POST', 'nodes', { title: '正确的生日', content: '四月' })).body.node;
    assert.equal((await srv.api('POST', 'supersede', { ids: [old1.id, old2.id], replacementId: repl.id, reason: '记错了' })).status, 200);
    const linked = (await srv.api('POST', 'nodes', { title: '小蓝的资料', content: '邻居' })).body.node;
    await srv.api('PUT', 'people/30003', { name: '小蓝', relationship: '邻居', affinity: 1, reason: '住隔壁', memoryNodeId: linked.id });

    // the server's details
    const r = await srv.api('DELETE', `nodes/${repl.id}`);
    assert.equal(r.status, 409);
    assert.deepEqual(r.body.error.details.titles, { [old1.id]: '旧的生日', [old2.id]: '更旧的生日' });
    const p = await srv.api('DELETE', `nodes/${linked.id}`);
    assert.deepEqual(p.body.error.details.titles, { 30003: '小蓝' });

    // the page
    await openPanel(page, srv, `memory/${repl.id}`);
    await page.locator('#node-title', { hasText: '正确的生日' }).waitFor();
    await page.click('#delete-node');
    await page.click('#confirm-delete');
    const refused = page.locator('#delete-refused');
    await refused.waitFor();
    assert.equal(await refused.getAttribute('data-reason'), 'supersede_target');
    const refs = refused.locator('ul.refs li');
    assert.deepEqual(await refs.allInnerTexts(), [`旧的生日 (${old1.id})`, `更旧的生日 (${old2.id})`]);
    await axeClean(page, 'refusal 1280px zh');

    // English, and a linked person by name
    await page.click('#lang');
    await openPanel(page, srv, `memory/${linked.id}`);
    await page.locator('#node-title', { hasText: '小蓝的资料' }).waitFor();
    await page.click('#delete-node');
    await page.click('#confirm-delete');
    await refused.waitFor();
    assert.equal(await refused.getAttribute('data-reason'), 'linked_from_person');
    assert.deepEqual(await refs.allInnerTexts(), ['小蓝 (30003)']);
    await page.setViewportSize({ width: 390, height: 844 });
    await axeClean(page, 'refusal 390px en');
    await refused.getByRole('button', { name: '小蓝 (30003)' }).click();
    await page.locator('main[data-panel="people"]').waitFor();
    assert.equal(await page.inputValue('#p-name'), '小蓝');
  });
});
