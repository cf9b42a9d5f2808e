// issue18_revert.test.mjs — issue 18, "from a History record of a change:
// revert that change": 撤销此更改 / "Revert this change" asks first, then
// reverts as a new recorded change (actor ui, naming the record) that
// restores the before-snapshot; a refusal (a later change of the same
// memory) says why in the page's words and names the later record.
// axe-core at 1440 / 390 px, zh and en, with the question and a refusal
// on show.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withPage, openPanel, axeClean, eachWidthAndLanguage, shot } from './serve.mjs';

const recordOf = (page, seq) => page.locator(`#history-list li.record[data-seq="${seq}"]`);

async function seqOf(srv, op, id) {
  const h = (await srv.api('GET', `history?operations=${op}&targetId=${id}&limit=1`)).body;
  return h.items[0].seq;
}

test('issue18_revert_from_history: a change reverted as a new recorded change; a later change refuses it, named', async () => {
  await withPage(async ({ srv, page }) => {
    const n = (await srv.api('POST', 'nodes', { title: '撤销测试', content: '第一版' })).body.node;
    await srv.api('PUT', `nodes/${n.id}`, { title: '撤销测试', content: '第二版' });
    const update = await seqOf(srv, 'zcor_memory_write', n.id);

    await openPanel(page, srv, 'history');
    const rec = recordOf(page, update);
    await rec.waitFor();
    // a read or a failed call has no button; this change has
    await rec.locator('button.revert').click();
    await rec.locator('.revert-msg', { hasText: '撤销本身会作为一条新的更改记录' }).waitFor();
    assert.equal(await page.evaluate(() => document.activeElement?.className), 'danger revert-yes');
    await shot(page, 'history-revert');
    await page.keyboard.press('Enter'); // keyboard: the focused 确认撤销
    await page.locator('#status', { hasText: `已撤销记录 #${update}` }).waitFor();
    assert.equal((await srv.api('GET', `nodes/${n.id}`)).body.node.content, '第一版');
    // its own record, on top: actor ui, naming the record
    const h = (await srv.api('GET', 'history?operations=history_revert&limit=5')).body;
    assert.equal(h.items.length, 1);
    assert.equal(h.items[0].actor, 'ui');
    assert.equal(h.items[0].arguments.seq, update);
    const mine = recordOf(page, h.items[0].seq);
    await mine.waitFor();
    assert.match(await mine.locator('.op').textContent(), /撤销更改/);
    assert.match(await mine.locator('.reverts').textContent(), new RegExp(`#${update}`));

    // reverting it again: refused, already reverted, named
    await rec.locator('button.revert').click();
    await rec.locator('.revert-yes').click();
    const refused = rec.locator('.revert-refused');
    await refused.waitFor();
    assert.equal(await refused.getAttribute('data-reason'), 'already_reverted');
    assert.match(await refused.textContent(), new RegExp(`已经被记录 #${h.items[0].seq} 撤销过了`));
    assert.equal((await srv.api('GET', `nodes/${n.id}`)).body.node.content, '第一版');

    // a later change of the same memory: refused, the later record listed
    const m = (await srv.api('POST', 'nodes', { title: '冲突测试', content: 'a' })).body.node;
    await srv.api('PUT', `nodes/${m.id}`, { title: '冲突测试', content: 'b' });
    const first = await seqOf(srv, 'zcor_memory_write', m.id);
    await srv.api('PUT', `nodes/${m.id}`, { title: '冲突测试', content: 'c' });
    const second = await seqOf(srv, 'zcor_memory_write', m.id);
    assert.ok(second > first);

    const refuse = async (p) => {
      await p.locator('#history-list li.record').first().waitFor();
      const r = recordOf(p, first);
      await r.locator('button.revert').click();
      await r.locator('.revert-yes').click();
      const box = r.locator('.revert-refused');
      await box.waitFor();
      return box;
    };
    await openPanel(page, srv, 'history');
    let box = await refuse(page);
    assert.equal(await box.getAttribute('data-reason'), 'later_change');
    assert.match(await box.textContent(), /之后又有 1 条更改动过同一条记忆/);
    assert.equal(await box.locator(`[data-conflict="${second}"]`).count(), 1);
    assert.match(await box.locator(`[data-conflict="${second}"]`).textContent(), /写入记忆/);
    assert.equal((await srv.api('GET', `nodes/${m.id}`)).body.node.content, 'c');
    // its link: that memory's records
    await box.locator(`[data-conflict="${second}"] button.link`).click();
    await page.waitForFunction((id) => document.querySelector('#h-target')?.value === id, m.id);

    await eachWidthAndLanguage(page, async (p, what) => {
      box = await refuse(p);
      if (what.endsWith('en')) {
        assert.match(await box.textContent(), /a later change touched the same memory/); // one: the singular (issue 18 review)
        assert.match(await box.textContent(), /Write memory/);
      }
      await axeClean(p, `history revert refused ${what}`);
      // the question too
      const ok = recordOf(p, second);
      await ok.locator('button.revert').click();
      await ok.locator('.revert-yes').waitFor();
      await axeClean(p, `history revert asked ${what}`);
      await ok.locator('.revert-msg button:not(.revert-yes)').click(); // cancel
      assert.equal(await ok.locator('.revert-yes').count(), 0);
    });
    assert.equal((await srv.api('GET', `nodes/${m.id}`)).body.node.content, 'c');
  });
});
