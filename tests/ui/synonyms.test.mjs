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
    await page.locator(`tr[data-group="${i}"]`).getByRole('button', { name: `编辑第 ${i} 组` }).click();
    await page.locator(`tr[data-group="${i}"] input`).fill('咕噜兽, 噜噜怪, 咕咕兽');
    await page.locator(`tr[data-group="${i}"]`).getByRole('button', { name: '保存' }).click();
    await page.locator(`tr[data-group="${i}"]`, { hasText: '咕咕兽' }).waitFor();
    assert.deepEqual((await groupOf(srv, '咕噜兽')).group, ['咕噜兽', '噜噜怪', '咕咕兽']);
    await page.fill('#s-word', '噜噜怪');
    await page.locator('#s-expansion li', { hasText: '咕咕兽' }).waitFor();

    // delete it
    await page.fill('#s-filter', '咕噜兽');
    await page.locator(`tr[data-group="${i}"]`).getByRole('button', { name: `删除第 ${i} 组` }).click();
    await page.locator('#syn-table p.empty').waitFor();
    assert.equal((await groupOf(srv, '咕噜兽')).i, -1);
    await page.fill('#s-word', '噜噜怪');
    await page.locator('#s-preview', { hasText: '没有同义词扩展' }).waitFor();
  });
});
