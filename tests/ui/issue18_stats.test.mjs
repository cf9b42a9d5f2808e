// issue18_stats.test.mjs — issue 18, "Stats": the Stats panel shows the
// counts by kind, scope and tier, the memories created per day or week,
// the most and least recalled (hit counts and last hit), the stale and
// the expired — as small SVG charts whose numbers are there as text too
// (aria-label and tables), each memory linked; the numbers are GET
// stats'; a bad number of days is refused naming the box. axe-core at
// 1440 / 390 px, zh and en.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withPage, openPanel, cli, axeClean, eachWidthAndLanguage, shot } from './serve.mjs';

test('issue18_stats_panel: counts by kind, scope and tier, growth, most and least recalled, stale and expired, as charts with text', async () => {
  await withPage(async ({ srv, page }) => {
    const cat = (await srv.api('POST', 'nodes', { title: '猫咪笔记', content: '猫咪喜欢晒太阳', keywords: ['猫咪'] })).body.node.id;
    const imp = (await srv.api('POST', 'nodes', { title: '主人的生日', content: '三月一日' })).body.node.id;
    await srv.api('POST', 'nodes', { title: '今天的天气', content: '下雨' });
    await srv.api('POST', `nodes/${imp}/important`, { important: true });
    let r = cli(srv.dir, '--conversation', 'group:1', 'tool', 'zcor_memory_write', JSON.stringify({ title: '群一的事', content: '周五聚餐' }));
    assert.equal(r.status, 0, r.stderr);
    r = cli(srv.dir, 'tool', 'qq_memory', JSON.stringify({ action: 'upsert', path: 'conversations/group-1/MEMORY.md', name: '期中考试', meaning: '下周三', section: '事实', expires: '2020-01-01' }));
    assert.equal(r.status, 0, r.stderr);
    for (let i = 0; i < 2; i++)
      assert.equal((await srv.api('POST', 'recall', { conversation: 'group:1', messages: [{ text: '猫咪在干嘛' }] })).status, 200);
    const want = (await srv.api('GET', 'stats')).body;
    assert.equal(want.mostRecalled[0].id, cat);

    await openPanel(page, srv, 'stats');
    await page.locator('#st-totals').waitFor();
    for (const k of ['total', 'current', 'superseded', 'important', 'neverRecalled'])
      assert.equal(await page.locator(`#st-totals [data-key=${k}] dd`).textContent(), String(want[k]), k);
    assert.equal(await page.locator('#st-totals [data-key=important] dt').textContent(), '重要记忆');

    // the three bar charts: a bar per value, the numbers as text
    const table = async (id) => (await page.locator(`#${id} tbody tr`).allInnerTexts()).map((x) => x.replace(/\s+/g, ' ').trim());
    assert.deepEqual(await table('st-kind'), want.byKind.map((x) => `${x.kind === 'memory' ? '记忆' : x.kind} ${x.count}`));
    assert.deepEqual(await table('st-scope'), want.byScope.map((x) => `${x.scope === 'global' ? '全局' : x.scope} ${x.count}`));
    assert.ok((await table('st-scope')).includes('group:1 2'));
    assert.deepEqual(await table('st-tier'), [`常用（参与回忆） ${want.current}`]);
    assert.equal(await page.locator('#st-kind svg rect').count(), want.byKind.length);
    assert.equal(await page.locator('#st-scope svg').getAttribute('role'), 'img');
    assert.match(await page.locator('#st-scope svg').getAttribute('aria-label'), /^按对话范围：全局 3，group:1 2$/);

    await shot(page, 'stats');

    // created per day: 30 columns, today's holds all five
    assert.equal(await page.locator('#st-growth svg rect').count(), 30);
    assert.match(await page.locator('#st-growth svg').getAttribute('aria-label'), /最近 30 天（.+ 到 .+）每天新建的记忆，共 5 条；最多的一天是 .+（5 条）/);
    await page.locator('#st-growth summary').click();
    assert.equal(await page.locator('#st-growth tbody tr').count(), 30);
    assert.match((await page.locator('#st-growth tbody tr').last().innerText()).replace(/\s+/g, ' '), / 5$/);

    // most and least recalled, stale, expired
    const most = page.locator(`#st-most tr[data-id="${cat}"]`);
    assert.match((await most.innerText()).replace(/\s+/g, ' '), new RegExp(`猫咪笔记 ${cat} ${want.mostRecalled[0].hits} `));
    assert.equal(await page.locator('#st-most tbody tr').count(), want.mostRecalled.length);
    assert.equal(await page.locator('#st-least tbody tr').count(), want.leastRecalled.length);
    assert.match(await page.locator('#st-least tbody tr').first().innerText(), /从未/);
    assert.match(await page.locator('#h-st-stale').textContent(), /30 天没有被回忆也没有修改（0 条）/);
    assert.match(await page.locator('#h-st-expired').textContent(), /已过期：过期时间已过（1 条）/);
    assert.match(await page.locator('#st-expired-list tbody tr').innerText(), /期中考试[\s\S]*2020-01-01[\s\S]*group:1/);

    // per week
    await page.selectOption('#st-bucket', 'week');
    await page.locator('#st-growth figcaption', { hasText: '每周新建的记忆' }).waitFor();
    assert.equal(await page.locator('#st-growth svg rect').count(), 26);

    // a bad number of days: refused, naming the box
    await page.fill('#st-staleDays', '0');
    await page.click('#st-go');
    await page.locator('#st-body .error', { hasText: '多少天没有回忆也没有修改算作冷落' }).waitFor();
    await page.fill('#st-staleDays', '30');
    await page.click('#st-go');
    await page.locator('#st-totals').waitFor();

    // each memory links to it
    await page.locator(`#st-most tr[data-id="${cat}"] button.link`).click();
    await page.locator('#node-title', { hasText: '猫咪笔记' }).waitFor();

    await eachWidthAndLanguage(page, async (p, what) => {
      await openPanel(p, srv, 'stats');
      await p.locator('#st-totals').waitFor();
      if (what.endsWith('en')) {
        await p.locator('#h-st-most', { hasText: 'Most recalled' }).waitFor();
        assert.match(await p.locator('#h-st-expired').textContent(), /Expired: past their expiry date \(1\)/);
        assert.match(await p.locator('#st-scope svg').getAttribute('aria-label'), /^By conversation scope: global 3, group:1 2$/);
      }
      await axeClean(p, `stats ${what}`);
      const wide = await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(wide <= 0, `${what}: the page is ${wide}px wider than the window`);
    });
  });
});
