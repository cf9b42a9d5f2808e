// issue18_person_id.test.mjs — issue 18, defect 5 (the person-id hint
// showed qq:12345, but recall matches bare QQ numbers, so a person saved
// that way was never recalled for its speaker): one id form, the bare QQ
// number — the server refuses a new "qq:12345" with the id to use (and a
// person saved so before stays readable and deletable), the page says
// the same before sending, the hint shows 12345; the person saved in the
// page is recalled for its speaker. axe-core at 1440 / 390 px, zh and en.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withPage, openPanel, cli, axeClean, eachWidthAndLanguage } from './serve.mjs';

function recallFor(dir, speaker) {
  const r = cli(dir, '--conversation', 'group:100000001', 'recall', '--message', '今天天气不错', '--speaker', speaker, '--json');
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

test('issue18_person_id_form: the bare QQ number is the one id form (server and page); the saved person is recalled for its speaker', async () => {
  await withPage(async ({ srv, page }) => {
    // the server, whoever calls: refused with the id to use, nothing saved
    const r = await srv.api('PUT', 'people/qq%3A12345', { name: '小明', relationship: '同事', affinity: 10, reason: '一起吃饭' });
    assert.equal(r.status, 400);
    assert.deepEqual(r.body.error.details, { field: 'personId', reason: 'id_form', suggestion: '12345' });
    assert.match(r.body.error.message, /argument 'personId'.*'12345'/);
    const viaCli = cli(srv.dir, 'tool', 'zcor_relationship_write', JSON.stringify({ personId: 'QQ:777', name: 'x', relationship: 'y', affinity: 0, reason: 'z' }));
    assert.equal(viaCli.status, 1);
    assert.match(viaCli.stdout + viaCli.stderr, /bare QQ number, '777'/);
    assert.equal((await srv.api('GET', 'people')).body.total, 0);
    // other ids are as they were (a console name, a bare number)
    assert.equal((await srv.api('PUT', 'people/alice', { name: 'Alice', relationship: '朋友', affinity: 0, reason: 'r' })).status, 200);

    await openPanel(page, srv, 'people');
    await page.click('#new-person');
    // the hint shows the form recall matches
    assert.equal(await page.getAttribute('#p-id', 'placeholder'), '12345');
    assert.match(await page.locator('#p-id-hint').innerText(), /QQ 号本身，例如 12345（不加 qq: 前缀）/);
    await page.fill('#p-id', 'qq:12345');
    await page.fill('#p-name', '小明');
    await page.fill('#p-relationship', '同事');
    await page.fill('#p-reason', '一起吃饭');
    await page.click('#p-save');
    await page.locator('main .error', { hasText: '“qq:12345”带了前缀：QQ 上的人物 ID 是 QQ 号本身，请改为 12345' }).waitFor();
    assert.equal((await srv.api('GET', 'people')).body.total, 1);
    await page.fill('#p-id', '12345');
    await page.click('#p-save');
    await page.locator('#status', { hasText: '已保存 小明' }).waitFor();
    assert.equal(await page.locator('main .error').count(), 0);

    // recall finds the person for its speaker
    const got = recallFor(srv.dir, '12345:小明');
    assert.ok(got.items.some((i) => i.kind === 'person' && i.personId === '12345'), JSON.stringify(got.items));
    assert.match(got.header, /小明｜同事/);

    // English
    await page.click('#lang');
    await page.click('#new-person');
    assert.match(await page.locator('#p-id-hint').innerText(), /the QQ number itself, such as 12345 \(no qq: prefix\)/);
    await page.fill('#p-id', 'qq:999');
    await page.fill('#p-name', 'x');
    await page.click('#p-save');
    await page.locator('main .error', { hasText: 'on QQ a person ID is the QQ number itself; use 999' }).waitFor();
    await page.click('#lang');

    await eachWidthAndLanguage(page, async (p, what) => {
      await p.locator('#new-person').click();
      await p.locator('#p-id-hint').waitFor();
      await axeClean(p, `people editor ${what}`);
    });
  });
});
