// states.test.mjs — the page's loading and error states: a slow answer
// shows "加载中…" until it arrives; a wrong token (the real server's 401),
// a server error and a lost connection each show an error box that says
// what happened, in the page's words first.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withPage, openPanel } from './serve.mjs';

test('states: loading, then the data; a wrong token, a 500 and a dead server each show their error', async () => {
  await withPage(async ({ srv, page }) => {
    await srv.api('POST', 'nodes', { title: '慢慢来', content: '加载测试' });

    // a slow answer: the loading line, then the results
    let release;
    const held = new Promise((r) => { release = r; });
    const query = (u) => u.pathname === '/api/v1/find'; // the page's search (issue 18)
    await page.route(query, async (route) => { await held; await route.continue(); });
    await page.goto(`${srv.url}#memory`);
    const loading = page.locator('#panel section').first().locator('p.loading', { hasText: '加载中…' });
    await loading.waitFor();
    assert.equal(await loading.getAttribute('role'), 'status');
    release();
    await page.locator('ul[aria-label="搜索结果"] button.link', { hasText: '慢慢来' }).waitFor();
    assert.equal(await loading.count(), 0);
    await page.unroute(query);

    // a wrong token: the real server answers 401 and the page says what to do
    await page.route('**/api/v1/**', (route) => route.continue({
      headers: { ...route.request().headers(), authorization: 'Bearer not-the-token-at-all' } }));
    await page.reload();
    const err = page.locator('#panel .error[role=alert]').first();
    await err.waitFor();
    assert.match(await err.innerText(), /^出错了 \(401 unauthorized\)：令牌缺失或不对/);
    // the tree's own request answers on its own time: wait for its error
    await page.locator('.tree .error').first().waitFor();
    assert.equal(await page.locator('.tree .error').count(), 1, 'the tree says it too');
    await page.unroute('**/api/v1/**');

    // a server error on the tree only: the search still works
    await page.route('**/api/v1/roots', (route) => route.fulfill({ status: 500, contentType: 'application/json',
      body: JSON.stringify({ error: { code: 'io_error', message: 'disk on fire' } }) }));
    await page.reload();
    await page.locator('.tree .error', { hasText: '出错了 (500 io_error)：读写文件出错' }).waitFor();
    await page.locator('ul[aria-label="搜索结果"] button.link', { hasText: '慢慢来' }).waitFor();
    await page.unroute('**/api/v1/roots');

    // the server is gone: opening a memory says so
    await page.route('**/api/v1/nodes/**', (route) => route.abort('connectionrefused'));
    await page.locator('ul[aria-label="搜索结果"] button.link', { hasText: '慢慢来' }).click();
    await page.locator('#detail .error', { hasText: '连不上服务器' }).waitFor();
  });
});
