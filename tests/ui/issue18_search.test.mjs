// issue18_search.test.mjs — issue 18, defect 4 (the page's search missed
// obvious matches: a memory's keywords and a person's aliases were not
// searched, synonyms not applied): the Memory page's search box matches
// title, content, keywords and the aliases of a linked person, through
// synonym groups, and says which field matched; the model's
// zcor_memory_query keeps seed 000's rule (title and content only, no
// synonyms). axe-core at 1440 / 390 px, zh and en.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withPage, openPanel, cli, axeClean, eachWidthAndLanguage } from './serve.mjs';

test('issue18_search_fields: keywords, aliases and synonyms are searched in the page, the matched field is said; zcor_memory_query unchanged', async () => {
  await withPage(async ({ srv, page }) => {
    const byKeyword = (await srv.api('POST', 'nodes', { title: '周末计划', content: '去公园', keywords: ['野餐'] })).body.node;
    const byAlias = (await srv.api('POST', 'nodes', { title: '同学档案', content: '爱打篮球' })).body.node;
    await srv.api('PUT', 'people/10001', { name: '王小明', aliases: ['明哥'], relationship: '同学', affinity: 0, reason: 'r', memoryNodeId: byAlias.id });
    const bySynonym = (await srv.api('POST', 'nodes', { title: '喵星人的口粮', content: '每天两顿' })).body.node; // 猫咪 ~ 喵星人 (built-in group)
    const byTitle = (await srv.api('POST', 'nodes', { title: '野餐清单', content: '三明治' })).body.node;

    // the model's query: seed 000's rule stays (no keywords, no aliases, no synonyms)
    const q = (kw) => JSON.parse(cli(srv.dir, 'tool', 'zcor_memory_query', JSON.stringify({ keywords: [kw] })).stdout).items.map((n) => n.id);
    assert.deepEqual(q('野餐'), [byTitle.id]);
    assert.deepEqual(q('明哥'), []);
    assert.deepEqual(q('猫咪'), []);

    await openPanel(page, srv, 'memory');
    const results = page.locator('main ul.list[aria-label="搜索结果"] > li');
    const search = async (kw) => {
      await page.fill('#q-keywords', kw);
      await page.locator('main form button[type=submit]').first().click();
      await page.locator('main ul.list[aria-label="搜索结果"], #panel p.empty').first().waitFor();
      await page.waitForFunction(() => !document.querySelector('#panel section p.loading'));
    };
    const item = (n) => results.filter({ has: page.locator('button.link', { hasText: n.title }) });

    await search('野餐');
    await item(byKeyword).waitFor();
    assert.equal(await results.count(), 2);
    assert.match(await item(byKeyword).locator('.matched').innerText(), /“野餐”在检索词中/);
    assert.match(await item(byTitle).locator('.matched').innerText(), /“野餐”在标题中/);

    await search('明哥');
    await item(byAlias).waitFor();
    assert.equal(await results.count(), 1);
    assert.match(await item(byAlias).locator('.matched').innerText(), /“明哥”在关联人物的名字或别名中/);

    await search('猫咪');
    await item(bySynonym).waitFor();
    assert.match(await item(bySynonym).locator('.matched').innerText(), /“猫咪”经同义词“喵星人”在标题中/);

    // two keywords: both must match, each reported
    await search('野餐 三明治');
    await item(byTitle).waitFor();
    assert.equal(await results.count(), 1);
    assert.match(await item(byTitle).locator('.matched').innerText(), /“野餐”在标题中；“三明治”在内容中/);

    // the page's searches leave no history record
    assert.equal((await srv.api('GET', 'history?operations=memory%20find')).body.total, 0);

    // English
    await page.click('#lang');
    await search('猫咪');
    await page.locator('main ul.list > li .matched', { hasText: '“猫咪” as its synonym “喵星人” in the title' }).waitFor();
    await page.click('#lang');

    await eachWidthAndLanguage(page, async (p, what) => {
      await p.fill('#q-keywords', '野餐');
      await p.locator('main form button[type=submit]').first().click();
      await p.locator('.matched').first().waitFor();
      await axeClean(p, `memory search ${what}`);
    });
  });
});
