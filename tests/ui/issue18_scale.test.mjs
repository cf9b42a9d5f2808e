// issue18_scale.test.mjs — issue 18, Tests: "a store of 5,000 memories
// and 20,000 messages generated for the tests: every panel opens and
// every search answers". Not timed (the times are bench/page.mjs's, in
// docs/PERFORMANCE.md): on a store of that shape (tests/ui/bigstore.mjs,
// built through zcor restore and transcript import) each step of the
// benchmark — every panel opened, every search run — draws what it
// should, with no error on the page or in a panel.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withPage, tmp } from './serve.mjs';
import { buildStore, PAGE_STEPS, runStep } from './bigstore.mjs';

test('issue18_scale_every_panel_opens: 5,000 memories, 20,000 messages, every panel and search drawn without an error', async () => {
  const dir = tmp();
  buildStore(dir, { memories: 5000, messages: 20000, people: 300, historyCalls: 5 });
  await withPage(async ({ srv, page }) => {
    assert.equal((await srv.api('GET', 'stats')).body.total, 5000);
    await page.goto(`${srv.url}#memory`);
    await page.locator('main[data-panel=memory] .tree [role=treeitem]').first().waitFor();
    for (const step of PAGE_STEPS) {
      await runStep(page, step);
      const errors = await page.locator('#panel .error, #status.status-error').allInnerTexts();
      assert.deepEqual(errors, [], step[0]);
    }
    // the transcript opened at the newest of its 2,000 messages
    await page.evaluate(() => { location.hash = '#conversations/group%3A100000002'; });
    await page.locator('#cv-messages li').first().waitFor();
    assert.match(await page.locator('#cv-messages li').first().innerText(), /1999/);
  }, { dir });
});
