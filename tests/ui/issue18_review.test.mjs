// issue18_review.test.mjs — issue 18's review (s23-audit18), in the page:
// a bulk move onto a memory's own descendant and a bulk merge titled with
// spaces only are refused in the page's words — the field and why
// (形成循环 / "make a loop", 只有空格 / "only spaces") — not a bare
// "conflict" beside the server's English; nothing changes. At 1440 / 390
// px, zh and en, axe-core on the refusals.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { withPage, openPanel, axeClean, eachWidthAndLanguage } from './serve.mjs';

const mk = async (srv, title, extra = {}) => (await srv.api('POST', 'nodes', { title, content: `${title}的内容`, ...extra })).body.node;

async function search(page, words) {
  await page.fill('#q-keywords', words);
  await page.locator('main form button[type=submit]').first().click();
  await page.locator('main ul.list li').first().waitFor();
}
const pick = (page, title) => page.locator('main ul[aria-label] > li', { has: page.locator('button.link', { hasText: new RegExp(`^${title}$`) }) }).locator('input.sel').check();

test('issue18_review_bulk_refusals_worded: a move into a descendant and a merge titled with spaces say why, in zh and en', async () => {
  await withPage(async ({ srv, page }) => {
    const top = await mk(srv, '复查上层');
    const low = await mk(srv, '复查下层', { parentId: top.id });
    await openPanel(page, srv, 'memory');
    await eachWidthAndLanguage(page, async (p, what) => {
      const zh = what.endsWith('zh');
      await openPanel(p, srv, 'memory');
      await p.click('#bulk-toggle');
      await search(p, '复查');
      // move 上层 under its own child
      await pick(p, '复查上层');
      await p.click('#bulk-move');
      await p.locator('#bulk-move-form input[type=search]').fill('复查下层');
      await p.keyboard.press('Enter');
      await p.locator('#bulk-move-form button.link', { hasText: '复查下层' }).click();
      await p.click('#bulk-move-go');
      const row = p.locator(`#bulk-out .bulk-results li[data-id="${top.id}"]`);
      await row.waitFor();
      assert.equal(await row.getAttribute('data-ok'), 'false', what);
      const why = await row.locator('.why').innerText();
      assert.match(why, zh ? /“父节点”是这条记忆自己或它下面的记忆，移过去会形成循环/ : /“Parent” is this memory itself or one under it, which would make a loop/, `${what}: ${why}`);
      await axeClean(p, `bulk move refused ${what}`);
      // merge both, the title spaces only
      await pick(p, '复查下层');
      await p.click('#bulk-merge');
      await p.fill('#bulk-m-title', '  \u3000 ');
      await p.fill('#bulk-m-reason', '复查');
      await p.click('#bulk-merge-go');
      const m = p.locator('#bulk-out .bulk-results li').first();
      await m.waitFor();
      assert.equal(await m.getAttribute('data-ok'), 'false', what);
      const mwhy = await m.locator('.why').innerText();
      assert.match(mwhy, zh ? /“标题”只有空格；请写一个标题/ : /“Title” is only spaces; write a title/, `${what}: ${mwhy}`);
      await axeClean(p, `bulk merge refused ${what}`);
      await p.click('#bulk-toggle');
    });
    // nothing changed
    assert.equal((await srv.api('GET', `nodes/${top.id}`)).body.node.parentId, null);
    assert.equal((await srv.api('GET', `nodes/${low.id}`)).body.node.supersededBy, null);
    assert.equal((await srv.api('GET', 'history?operations=zcor_memory_merge&status=ok')).body.total, 0);
  });
});

test('issue18_review_people_sorted_by_affinity: the People list sorts by the latest change or affinity, either way', async () => {
  await withPage(async ({ srv, page }) => {
    for (const [id, name, affinity] of [['201', '低分', -80], ['202', '高分', 95], ['203', '中分', 5]])
      await srv.api('PUT', `people/${id}`, { name, affinity, relationship: '群友', reason: '复查' });
    await openPanel(page, srv, 'people');
    const names = () => page.locator('#people-list ul.list > li > button.link').allInnerTexts();
    await eachWidthAndLanguage(page, async (p, what) => {
      await openPanel(p, srv, 'people');
      await p.locator('#people-list ul.list > li').first().waitFor();
      assert.deepEqual(await names(), ['中分', '高分', '低分'], what);
      await p.selectOption('#p-sort', 'affinity');
      await p.waitForFunction(() => document.querySelector('#people-list li button.link')?.textContent === '高分');
      assert.deepEqual(await names(), ['高分', '中分', '低分'], what);
      // the keyboard: the select is reachable and changes the order
      await p.focus('#p-sort');
      await p.keyboard.press('ArrowDown');
      await p.waitForFunction(() => document.querySelector('#people-list li button.link')?.textContent === '低分');
      assert.deepEqual(await names(), ['低分', '中分', '高分'], what);
      const label = await p.locator('label[for="p-sort"]').innerText();
      assert.equal(label, what.endsWith('zh') ? '排序' : 'Sort');
      assert.equal(await p.locator('#p-sort option:checked').innerText(), what.endsWith('zh') ? '好感度从低到高' : 'Lowest affinity first');
      await axeClean(p, `people sorted ${what}`);
    });
  });
});

test('issue18_review_synonyms_unsaved_warn: a synonym group edited, or terms typed in the new-group box, ask before they are lost', async () => {
  await withPage(async ({ srv, page }) => {
    await srv.api('POST', 'synonyms', { terms: ['复查词甲', '复查词乙'] });
    const asked = [];
    let answer = false; // false: stay
    page.removeAllListeners('dialog'); // serve.mjs accepts every confirm; here each is counted
    page.on('dialog', async (d) => {
      asked.push([d.type(), d.message()]);
      await (answer || d.type() === 'beforeunload' ? d.accept() : d.dismiss()).catch(() => {});
    });
    const until = async (n) => { for (let i = 0; i < 100 && asked.length < n; i++) await new Promise((r) => setTimeout(r, 20)); };
    await openPanel(page, srv, 'synonyms');
    await eachWidthAndLanguage(page, async (p, what) => {
      const zh = what.endsWith('zh');
      answer = true;
      await openPanel(p, srv, 'synonyms');
      answer = false;
      await p.fill('#s-filter', '复查词');
      const row = p.locator('#syn-table tbody tr').first();
      await row.waitFor();
      // the group's edit, typed: another tab asks; staying keeps the edit
      await row.locator('button', { hasText: zh ? '编辑' : 'Edit' }).click();
      await row.locator('input').fill('复查词甲, 复查词丙');
      const n = asked.length;
      await p.click('#tab-history');
      await until(n + 1);
      assert.equal(asked.length, n + 1, `${what}: asked before another tab`);
      assert.match(asked[n][1], zh ? /未保存的修改/ : /not saved|unsaved/i);
      assert.equal(await p.locator('main').getAttribute('data-panel'), 'synonyms', what);
      assert.equal(await row.locator('input').inputValue(), '复查词甲, 复查词丙', what);
      await axeClean(p, `synonyms edit unsaved ${what}`);
      // cancelling the edit: nothing to ask any more
      await row.locator('button', { hasText: zh ? '取消' : 'Cancel' }).click();
      // the new-group box, typed: the tab asks as well
      await p.fill('#s-add', '复查新甲, 复查新乙');
      await p.click('#tab-history');
      await until(n + 2);
      assert.equal(asked.length, n + 2, `${what}: asked for the new-group box`);
      assert.equal(await p.inputValue('#s-add'), '复查新甲, 复查新乙');
      await p.fill('#s-add', '');
      // nothing typed: leaving asks nothing
      await p.click('#tab-history');
      await p.locator('main[data-panel="history"]').waitFor();
      assert.equal(asked.length, n + 2, `${what}: nothing asked with nothing typed`);
    });
    // nothing was changed on the way
    assert.deepEqual((await srv.api('GET', 'synonyms')).body.groups.filter((g) => g.some((x) => x.startsWith('复查'))), [['复查词甲', '复查词乙']]);
  });
});

test('issue18_review_revert_refusal_plurals: one later change, one child — English in the singular', async () => {
  await withPage(async ({ srv, page }) => {
    const seqOf = async (id) => (await srv.api('GET', `history?operations=zcor_memory_write&targetId=${id}&limit=5`)).body.items.at(-1).seq;
    // a create that has one child now
    const top = await mk(srv, '复查撤销父');
    await mk(srv, '复查撤销子', { parentId: top.id });
    const made = await seqOf(top.id);
    // a change with one later change of the same memory
    const c = await mk(srv, '复查撤销改');
    await srv.api('PUT', `nodes/${c.id}`, { title: '复查撤销改', content: '第二版' });
    const first = await seqOf(c.id);
    await openPanel(page, srv, 'history');
    await eachWidthAndLanguage(page, async (p, what) => {
      const zh = what.endsWith('zh');
      await openPanel(p, srv, 'history');
      for (const [seq, reason, re] of [
        [made, 'has_children', zh ? /现在有 1 个子节点/ : /has 1 child memory now, and the revert/],
        [first, 'later_change', zh ? /之后又有 1 条更改/ : /a later change touched the same memory or person, and reverting would overwrite it/]]) {
        const rec = p.locator(`#history-list li.record[data-seq="${seq}"]`);
        await rec.locator('button.revert').click();
        await rec.locator('.revert-yes').click();
        const refused = rec.locator('.revert-refused');
        await refused.waitFor();
        assert.equal(await refused.getAttribute('data-reason'), reason, what);
        const text = await refused.textContent();
        assert.match(text, re, `${what}: ${text}`);
        if (!zh) assert.doesNotMatch(text, /\b1 child memories|later changes \(1\)/, what);
      }
      await axeClean(p, `revert refusals ${what}`);
    });
  });
});

test('issue18_review_recall_preview_terms: the message\'s words are not called 检索词, the memory\'s own field\'s name', async () => {
  await withPage(async ({ srv, page }) => {
    await mk(srv, '复查猫咪', { keywords: ['猫咪'] });
    await mk(srv, '复查天气', { keywords: ['下雨'] });
    assert.equal((await srv.api('PUT', 'config', { recall: { profile: 'zcor' } })).status, 200);
    await openPanel(page, srv, 'recall');
    await eachWidthAndLanguage(page, async (p, what) => {
      const zh = what.endsWith('zh');
      await openPanel(p, srv, 'recall');
      await p.fill('#rp-text', '猫咪在干嘛');
      await p.fill('#rp-conv', 'group:1');
      await p.click('#rp-go');
      await p.locator('#rp-cands tbody tr').first().waitFor();
      const text = await p.locator('main').innerText();
      if (zh) {
        assert.match(text, /消息里的词：/, what);
        assert.match(text, /标题或检索词含有消息里的词/, what);
        // 检索词 is a memory's field only: never the message's words
        assert.doesNotMatch(text, /检索词:|含有检索词|不含检索词/, what);
      } else {
        assert.match(text, /Words of the message: /, what);
      }
      await axeClean(p, `recall preview terms ${what}`);
    });
  });
});

test('issue18_review_file_warnings_worded: a broken config.json or synonyms.json is said in the page\'s words, the server\'s English marked as such', async () => {
  await withPage(async ({ srv, page }) => {
    await srv.api('POST', 'synonyms', { terms: ['复查好', '复查棒'] }); // synonyms.json written, then broken by hand
    writeFileSync(join(srv.dir, 'config.json'), '{"recallChars": 3000,');
    writeFileSync(join(srv.dir, 'synonyms.json'), '{"groups": [["a", ');
    await openPanel(page, srv, 'config');
    await eachWidthAndLanguage(page, async (p, what) => {
      const zh = what.endsWith('zh');
      for (const [panel, id, words] of [
        ['config', '#cfg-warning', zh ? /^config\.json 里有错误（可能是手动改坏的）：改正之前，它里面的设置不会生效/ : /^config\.json has an error \(perhaps from a hand edit\): until it is fixed its settings do not apply/],
        ['synonyms', '#syn-warning', zh ? /^synonyms\.json 的格式有误（可能是手动改坏的）：改正之前，继续使用上一次有效的同义词组/ : /^synonyms\.json is malformed \(perhaps from a hand edit\)/]]) {
        await openPanel(p, srv, panel);
        const box = p.locator(id);
        await box.waitFor();
        const text = await box.innerText();
        assert.match(text, words, `${what} ${panel}: ${text}`);
        // the server's sentence follows, marked English
        assert.equal(await box.locator('.server-says [lang=en]').count(), 1, `${what} ${panel}`);
        assert.match(await box.locator('.server-says [lang=en]').innerText(), panel === 'config' ? /^config\.json: / : /^synonyms\.json is malformed/);
        await axeClean(p, `${panel} file warning ${what}`);
      }
    });
  });
});

test('issue18_review_history_error_marked: a failed call\'s recorded message is said to be the server\'s English, marked lang=en', async () => {
  await withPage(async ({ srv, page }) => {
    const a = await mk(srv, '复查失败甲');
    const b = await mk(srv, '复查失败乙');
    const r = await srv.api('POST', 'merge', { ids: [a.id, b.id], title: '合并', content: 'x', reason: '' });
    assert.equal(r.status, 400);
    const rec = (await srv.api('GET', 'history?status=error&limit=1')).body.items[0];
    assert.ok(rec && rec.error, 'the failed call is recorded with its message');
    await openPanel(page, srv, 'history');
    await eachWidthAndLanguage(page, async (p, what) => {
      await openPanel(p, srv, `history/${encodeURIComponent('status=error')}`);
      const box = p.locator(`#history-list li.record[data-seq="${rec.seq}"] .hist-error`);
      await box.waitFor();
      assert.match(await box.innerText(), what.endsWith('zh') ? /^失败，服务器当时的说明（英文）：invalid_argument: argument 'reason'/ : /^Failed; what the server said then: invalid_argument: argument 'reason'/, what);
      assert.equal(await box.locator('[lang=en]').innerText(), rec.error, what);
      await axeClean(p, `history failed record ${what}`);
    });
  });
});
