// issue18_config.test.mjs — issue 18, defect 2 (a blank recall budget
// saved as 0 and turned auto-recall off with a green "saved"): every
// number box is checked in the page against the server's rules (GET
// config/fields) — blank, not a whole number, out of range → a message
// naming the field, nothing sent; the server refuses the same values with
// details naming the field, which the page words at its box; turning
// auto-recall off asks first. axe-core at 1440 / 390 px, zh and en.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withPage, openPanel, axeClean, eachWidthAndLanguage } from './serve.mjs';

test('issue18_config_validation: blank / fractional / out-of-range values are refused naming the field (page and server); recall off asks first', async () => {
  await withPage(async ({ srv, page }) => {
    const cfg = async () => (await srv.api('GET', 'config')).body;
    // the server: blank, wrong type, out of range → 400 naming the field in its details
    for (const [body, field] of [[{ recallChars: '' }, 'recallChars'], [{ recallChars: 'many' }, 'recallChars'],
      [{ mediaCacheMax: 0 }, 'mediaCacheMax'], [{ recall: { profile: '' } }, 'recall.profile'], [{ relationships: 'yes' }, 'relationships'],
      [{ memoryArchiveRatio: 5 }, 'memoryArchiveRatio'], [{ nope: 1 }, 'nope']]) {
      const r = await srv.api('PUT', 'config', body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.error.details.field, field, JSON.stringify(r.body));
      assert.match(r.body.error.message, new RegExp(field.replace('.', '\\.')));
    }
    assert.equal((await cfg()).recallChars, 6000);
    const rules = (await srv.api('GET', 'config/fields')).body.fields;
    assert.deepEqual(rules.find((f) => f.field === 'recallChars'), { field: 'recallChars', type: 'integer', min: 0, max: 200000, default: 6000 });

    await openPanel(page, srv, 'config');
    await page.locator('#c-recallChars').waitFor();
    const save = () => page.click('#c-save');
    const error = page.locator('main .error');

    // blank: refused in the page, naming the field; nothing saved, no green line
    await page.fill('#c-recallChars', '');
    await save();
    await error.filter({ hasText: '自动回忆字符预算：不能为空（0 到 200000 的整数）' }).waitFor();
    assert.equal(await page.getAttribute('#c-recallChars', 'aria-invalid'), 'true');
    assert.match(await page.locator('#c-recallChars-err').innerText(), /自动回忆字符预算/);
    assert.equal(await page.evaluate(() => document.activeElement.id), 'c-recallChars');
    assert.equal(await page.locator('#status').innerText(), '');
    assert.equal((await cfg()).recallChars, 6000);

    // a fraction, a number out of range, two boxes at once
    await page.fill('#c-recallChars', '1.5');
    await page.fill('#c-mediaCacheMax', '0');
    await save();
    await error.filter({ hasText: '须为整数' }).waitFor();
    assert.match(await error.innerText(), /图片缓存上限（张）：超出范围（1 到 100000 的整数）/);
    await page.fill('#c-recallChars', '9999999');
    await page.fill('#c-mediaCacheMax', '200');
    await save();
    await error.filter({ hasText: '超出范围（0 到 200000 的整数）' }).waitFor();
    assert.equal(await page.getAttribute('#c-mediaCacheMax', 'aria-invalid'), null);
    const c1 = await cfg();
    assert.equal(c1.recallChars, 6000);
    assert.equal(c1.mediaCacheMax, 200);

    // a value only the server can judge: its refusal is worded at the box
    await page.fill('#c-recallChars', '3000');
    await page.fill('#c-botId', 'not an id!');
    await save();
    await error.filter({ hasText: '服务器拒绝了设置，没有保存任何内容' }).waitFor();
    assert.match(await error.innerText(), /机器人自己的 QQ 号（它的消息不记录）：值不对/);
    assert.equal(await page.getAttribute('#c-botId', 'aria-invalid'), 'true');
    assert.equal((await cfg()).recallChars, 6000);
    await page.fill('#c-botId', '');

    // a good value saves; the old error goes
    await save();
    await page.locator('#status', { hasText: '配置已保存' }).waitFor();
    assert.equal((await cfg()).recallChars, 3000);
    assert.equal(await error.count(), 0);

    // 0 turns auto-recall off: asked first; cancel keeps it on
    await page.fill('#c-recallChars', '0');
    await save();
    await page.locator('#c-confirm-off').waitFor();
    assert.equal(await page.evaluate(() => document.activeElement.id), 'c-confirm-off');
    await page.click('#c-confirm-cancel');
    assert.equal((await cfg()).recallChars, 3000);
    await save();
    await page.click('#c-confirm-off');
    await page.locator('#status', { hasText: '配置已保存' }).waitFor();
    assert.equal((await cfg()).recallChars, 0);
    // already off: saving again asks nothing
    await page.locator('#c-recallChars').waitFor();
    await save();
    await page.locator('#status', { hasText: '配置已保存' }).waitFor();
    assert.equal(await page.locator('#c-confirm-off').count(), 0);

    // English
    await page.click('#lang');
    await page.locator('#c-recallChars').waitFor();
    await page.fill('#c-recallChars', '');
    await save();
    await error.filter({ hasText: 'Auto-recall character budget: must not be empty (a whole number from 0 to 200000)' }).waitFor();
    await page.click('#lang');

    await eachWidthAndLanguage(page, async (p, what) => {
      await p.locator('#c-recallChars').waitFor();
      await p.fill('#c-recallChars', '');
      await p.click('#c-save');
      await p.locator('#c-recallChars-err').waitFor();
      await axeClean(p, `config with an error, ${what}`);
    });
    assert.equal((await cfg()).recallChars, 0);
  });
});
