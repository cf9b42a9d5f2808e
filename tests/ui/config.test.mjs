// config.test.mjs — the Config panel: a change made in the page takes
// effect for the CLI (`zcor prefix`), and a bad value is refused with the
// server's message while the file stays as it was.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withPage, openPanel, shot, cli } from './serve.mjs';

test('config: relationship memory off and a new budget reach `zcor prefix`; a bad value is refused', async () => {
  await withPage(async ({ srv, page }) => {
    let prefix = cli(srv.dir, 'prefix');
    assert.equal(prefix.status, 0, prefix.stderr);
    assert.match(prefix.stdout, /zcor_relationship_read/, 'relationship guidance is on by default');

    await openPanel(page, srv, 'config');
    await page.locator('#c-recallChars').waitFor();
    await shot(page, 'config');
    assert.equal(await page.isChecked('#c-relationships'), true);
    await page.uncheck('#c-relationships');
    await page.fill('#c-recallChars', '1234');
    await page.selectOption('#c-profile', 'scored');
    await page.click('#c-save');
    await page.locator('#status', { hasText: '配置已保存' }).waitFor();
    await page.locator('#c-recallChars').waitFor();
    assert.equal(await page.inputValue('#c-recallChars'), '1234');

    prefix = cli(srv.dir, 'prefix');
    assert.equal(prefix.status, 0, prefix.stderr);
    assert.doesNotMatch(prefix.stdout, /zcor_relationship_read/, 'relationship guidance is gone');
    const cfg = (await srv.api('GET', 'config')).body;
    assert.equal(cfg.recallChars, 1234);
    assert.equal(cfg.relationships, false);
    assert.equal(cfg.recall.profile, 'scored');

    // a negative budget: the server's message is shown, nothing changes
    await page.fill('#c-recallChars', '-5');
    await page.click('#c-save');
    await page.locator('main .error', { hasText: 'recallChars' }).waitFor();
    assert.equal((await srv.api('GET', 'config')).body.recallChars, 1234);
  });
});
