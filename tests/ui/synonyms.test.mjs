// synonyms.test.mjs — the Synonyms panel: add a group, preview a word's
// local expansion, edit the group (the preview follows), delete it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withPage, openPanel, shot } from './serve.mjs';

async function groupOf(srv, term) {
  const { groups } = (await srv.api('GET', 'synonyms')).body;
  const i = groups.findIndex((g) => g.includes(term));
  return { i, group: groups[i] };
}

test('synonyms: add, preview the expansion, edit, delete', async () => {
  await withPage(async ({ srv, page }) => {
    await openPanel(page, srv, 'synonyms');
    await page.locator('#syn-table').waitFor(); // the built-in groups
    await page.fill('#s-add', '咕噜兽, 噜噜怪');
    await page.click('#s-add-btn');
    await page.locator('#status', { hasText: '已添加词组' }).waitFor();
    const { i } = await groupOf(srv, '咕噜兽');
    assert.ok(i >= 0, 'the group is in the file');

    // typing a word previews its expansion
    await page.fill('#s-word', '咕噜兽');
    await page.locator('#s-expansion li', { hasText: '噜噜怪' }).waitFor();
    await shot(page, 'synonyms');

    // edit the group: the filter finds it, the new term appears in the preview
    await page.fill('#s-filter', '咕噜兽');
    await page.locator(`tr[data-group="${i}"]`).getByRole('button', { name: `编辑第 ${i + 1} 组` }).click();
    await page.locator(`tr[data-group="${i}"] input`).fill('咕噜兽, 噜噜怪, 咕咕兽');
    await page.locator(`tr[data-group="${i}"]`).getByRole('button', { name: '保存' }).click();
    await page.locator(`tr[data-group="${i}"]`, { hasText: '咕咕兽' }).waitFor();
    assert.deepEqual((await groupOf(srv, '咕噜兽')).group, ['咕噜兽', '噜噜怪', '咕咕兽']);
    await page.fill('#s-word', '噜噜怪');
    await page.locator('#s-expansion li', { hasText: '咕咕兽' }).waitFor();

    // delete it
    await page.fill('#s-filter', '咕噜兽');
    await page.locator(`tr[data-group="${i}"]`).getByRole('button', { name: `删除第 ${i + 1} 组` }).click();
    await page.locator('#syn-table p.empty').waitFor();
    assert.equal((await groupOf(srv, '咕噜兽')).i, -1);
    await page.fill('#s-word', '噜噜怪');
    await page.locator('#s-preview', { hasText: '没有同义词扩展' }).waitFor();
  });
});

test('synonyms: a group changed elsewhere is not overwritten; the page says so and shows the groups as they are', async () => {
  await withPage(async ({ srv, page }) => {
    assert.equal((await srv.api('POST', 'synonyms', { terms: ['甲方', '客户'] })).status, 200);
    assert.equal((await srv.api('POST', 'synonyms', { terms: ['乙方', '供应商'] })).status, 200);
    await openPanel(page, srv, 'synonyms');
    await page.locator('#syn-table').waitFor();
    const a = (await groupOf(srv, '甲方')).i;
    const b = (await groupOf(srv, '乙方')).i;
    assert.equal(b, a + 1);
    await page.fill('#s-filter', '方'); // the list is paged (issue 18): find them
    await page.locator(`tr[data-group="${a}"]`).waitFor();

    // another tab deletes 甲方's group: 乙方's moves up into its place
    assert.equal((await srv.api('DELETE', `synonyms/${a}`)).status, 200);
    // this tab still shows 甲方 at that place and deletes it: refused,
    // and 乙方's group (now at that index) is left alone
    await page.locator(`tr[data-group="${a}"]`).getByRole('button', { name: `删除第 ${a + 1} 组` }).click();
    await page.locator('#syn-note', { hasText: '词组“甲方、客户”已经在别处被修改' }).waitFor();
    assert.deepEqual((await groupOf(srv, '乙方')).group, ['乙方', '供应商']);
    // the list is reloaded: 乙方 is shown at its new place
    await page.locator(`tr[data-group="${a}"]`, { hasText: '乙方' }).waitFor();

    // another tab edits 乙方's group; an edit of the old terms is refused too
    assert.equal((await srv.api('PUT', `synonyms/${a}`, { terms: ['乙方', '供应商', '卖方'] })).status, 200);
    await page.locator(`tr[data-group="${a}"]`).getByRole('button', { name: `编辑第 ${a + 1} 组` }).click();
    await page.locator(`tr[data-group="${a}"] input`).fill('乙方, 供货商');
    await page.locator(`tr[data-group="${a}"]`).getByRole('button', { name: '保存' }).click();
    await page.locator('#syn-note', { hasText: '“乙方、供应商”' }).waitFor();
    assert.deepEqual((await groupOf(srv, '乙方')).group, ['乙方', '供应商', '卖方']);
    await page.locator(`tr[data-group="${a}"]`, { hasText: '卖方' }).waitFor();
    // and the refusals are in the history as the page's conflicts
    const h = (await srv.api('GET', 'history?keywords=synonyms_edit&limit=10')).body;
    assert.equal(h.items.filter((r) => r.status === 'error' && /conflict/.test(r.error)).length, 2);
  });
});
