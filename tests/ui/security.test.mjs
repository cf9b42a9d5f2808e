// security.test.mjs — the page's security in a real browser: memory text
// is shown as text (an <img onerror> title runs nothing); a page on
// another origin that posts a form or fetches with credentials changes
// nothing, though the browser sends the page's cookie along; the page
// and its assets carry a strict CSP and nosniff and need the token; the
// language switch (Chinese first) persists; the page works at phone width.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { withPage, openPanel, shot } from './serve.mjs';

const XSS = '<img src=x onerror=alert(1)>';
const XSS2 = '<img src=x onerror="window.__pwned=1">';

test('xss: memory text with HTML is shown literally and runs nothing', async () => {
  await withPage(async ({ srv, page }) => {
    const node = (await srv.api('POST', 'nodes', { title: XSS, content: `${XSS2}<script>window.__pwned=2</script>`,
      keywords: [XSS], sourceMessage: XSS2 })).body.node;
    await srv.api('PUT', 'people/666', { name: XSS, relationship: XSS2, affinity: 0, reason: XSS });
    await openPanel(page, srv, `memory/${node.id}`);
    await page.locator('#node-title').waitFor();
    assert.equal(await page.locator('#node-title').textContent(), XSS);
    assert.equal(await page.locator('#node-content').textContent(), `${XSS2}<script>window.__pwned=2</script>`);
    assert.equal(await page.locator('#node-source').textContent(), XSS2);
    // the search list and the tree show the title as text too
    await page.locator('ul[aria-label="搜索结果"] button.link', { hasText: XSS }).waitFor();
    await page.locator('.tree .node', { hasText: XSS }).waitFor();
    assert.equal(await page.locator('main img').count(), 0, 'no <img> was made from memory text');
    // history and people
    await openPanel(page, srv, 'history');
    await page.locator('#history-list td.add', { hasText: XSS }).first().waitFor();
    await openPanel(page, srv, 'people');
    await page.locator('#people-list button.link', { hasText: XSS }).click();
    await page.locator('#p-name').waitFor();
    assert.equal(await page.inputValue('#p-name'), XSS);
    assert.equal(await page.locator('main img').count(), 0);
    assert.equal(await page.evaluate(() => window.__pwned), undefined);
    // (withPage fails the test on any alert dialog or page error)
  });
});

test('csrf: a form post and a credentialed fetch from another origin change nothing', async () => {
  await withPage(async ({ srv, page, context }) => {
    // the operator has the page open: the browser holds the cookie
    await openPanel(page, srv, 'memory');
    const cookies = await context.cookies(srv.base);
    assert.ok(cookies.some((c) => c.name === 'zcor_token' && c.httpOnly), JSON.stringify(cookies));

    // a hostile page on another origin (same host, another port: the
    // same site, so SameSite=Strict still lets the cookie go along)
    const target = `${srv.base}/api/v1/nodes`;
    const hostile = `<!doctype html><html><body>
<iframe name="sink"></iframe>
<form id="f" method="POST" action="${target}" enctype="text/plain" target="sink">
<input name='{"title":"csrf-form","content":"x","pad":"' value='"}'></form>
<form id="g" method="POST" action="${srv.base}/api/v1/config" enctype="text/plain" target="sink">
<input name='{"relationships":false,"pad":"' value='"}'></form>
<script>
window.done = (async () => {
  const r = [];
  try { await fetch(${JSON.stringify(target)}, { method: 'POST', mode: 'no-cors', credentials: 'include',
    headers: { 'Content-Type': 'text/plain' }, body: JSON.stringify({ title: 'csrf-fetch', content: 'x' }) }); r.push('fetch sent'); }
  catch (e) { r.push('fetch failed: ' + e.message); }
  try { await fetch(${JSON.stringify(`${srv.base}/api/v1/nodes`)}, { credentials: 'include' }); r.push('read allowed'); }
  catch (e) { r.push('read blocked'); }
  for (const id of ['f', 'g']) {
    await new Promise((ok) => { document.querySelector('iframe').onload = ok; document.getElementById(id).submit(); });
  }
  return r;
})();
</script></body></html>`;
    const evil = createServer((req, res) => { res.setHeader('Content-Type', 'text/html'); res.end(hostile); });
    await new Promise((ok) => evil.listen(0, '127.0.0.1', ok));
    try {
      const attacker = await context.newPage();
      await attacker.goto(`http://127.0.0.1:${evil.address().port}/`);
      const r = await attacker.evaluate(() => window.done);
      assert.deepEqual(r, ['fetch sent', 'read blocked']);
      await attacker.close();
    } finally {
      evil.close();
    }
    // the requests did reach zcor, and were refused
    const log = srv.stderr().split('\n').filter((l) => l.includes('"method":"POST"')).map((l) => JSON.parse(l));
    assert.ok(log.filter((l) => l.path === '/api/v1/nodes').length >= 2, srv.stderr());
    assert.ok(log.every((l) => l.status === 403 || l.status === 401), JSON.stringify(log));
    // and nothing changed
    assert.equal((await srv.api('GET', 'nodes')).body.total, 0);
    assert.equal((await srv.api('GET', 'config')).body.relationships, true);
  });
});

test('the page and its assets: token required, strict CSP, nosniff, no-referrer', async () => {
  await withPage(async ({ srv, page }) => {
    for (const path of ['/', '/index.html', '/assets/js/main.js', '/assets/app.css']) {
      const res = await fetch(`${srv.base}${path}`);
      assert.equal(res.status, 401, `${path} without the token`);
    }
    const res = await fetch(srv.url);
    assert.equal(res.status, 200);
    const csp = res.headers.get('content-security-policy');
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(res.headers.get('referrer-policy'), 'no-referrer');
    const html = await res.text();
    assert.ok(html.includes(`<meta name="zcor-token" content="${srv.token}">`));
    assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script');
    const cookie = res.headers.get('set-cookie').split(';')[0];
    for (const [path, type] of [['/assets/js/main.js', /^text\/javascript/], ['/assets/app.css', /^text\/css/]]) {
      const a = await fetch(`${srv.base}${path}`, { headers: { cookie } });
      assert.equal(a.status, 200, path);
      assert.match(a.headers.get('content-type'), type);
      assert.equal(a.headers.get('x-content-type-options'), 'nosniff');
    }
    assert.equal((await fetch(`${srv.base}/assets/nope.js`, { headers: { cookie } })).status, 404);
    // the page drops ?token= from the address bar once loaded
    await openPanel(page, srv, 'memory');
    assert.equal(new URL(page.url()).search, '');
    // and keeps working on reload (cookie for the page, meta for the API)
    await page.reload();
    await page.locator('main[data-panel="memory"] p.empty').first().waitFor();
  });
});

test('language: Chinese by default, English on the switch, kept across reloads; phone width', async () => {
  await withPage(async ({ srv, page }) => {
    await openPanel(page, srv, 'memory');
    await page.getByRole('tab', { name: '记忆' }).waitFor();
    assert.equal(await page.getAttribute('html', 'lang'), 'zh-CN');
    // the switch's name starts with its visible text (WCAG 2.5.3), in
    // that language; the tab list is named in the page's language
    const toEnglish = page.getByRole('button', { name: /^English/ });
    assert.equal(await toEnglish.count(), 1);
    assert.match(await toEnglish.innerText(), /^English/);
    assert.equal(await page.locator('#lang [lang=en]').textContent(), 'English');
    assert.equal(await page.getByRole('tablist', { name: '面板' }).count(), 1);
    // without JavaScript the page says so in both languages
    const html = await (await fetch(srv.url)).text();
    assert.match(html, /<noscript>[^<]*<p[^>]*>记忆页面需要 JavaScript。<span lang="en">The Memory page needs JavaScript.<\/span>/);
    await toEnglish.click();
    await page.getByRole('tab', { name: 'Memory' }).waitFor();
    await page.getByRole('heading', { name: 'Find memories' }).waitFor();
    assert.equal(await page.getAttribute('html', 'lang'), 'en');
    assert.equal(await page.getByRole('button', { name: /^中文/ }).count(), 1);
    assert.equal(await page.getByRole('tablist', { name: 'Panels' }).count(), 1);
    await page.reload();
    await page.getByRole('tab', { name: 'Synonyms' }).waitFor();
    // keyboard: the tabs move with the arrow keys
    await page.getByRole('tab', { name: 'Memory' }).focus();
    await page.keyboard.press('ArrowRight');
    await page.locator('main[data-panel="recall"]').waitFor(); // the Recall preview (issue 18) is second
    await page.click('#lang');
    await page.getByRole('tab', { name: '回忆预览' }).waitFor();

    // phone width: one column, nothing wider than the screen
    await page.setViewportSize({ width: 390, height: 844 });
    await openPanel(page, srv, 'memory');
    await page.locator('#new-node').waitFor();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `the page is ${overflow}px wider than a phone`);
    await shot(page, 'memory-phone');
  });
});
