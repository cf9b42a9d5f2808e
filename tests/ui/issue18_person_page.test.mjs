// issue18_person_page.test.mjs — issue 18, "per person": #people/<id> shows
// the record (the People editor), the linked memory node by its title, the
// memories that mention the person (the page's search for the name and
// each alias: title, search terms, content, the memory linked to them) and
// their recent messages across conversations (GET messages?sender=, the
// transcript's sender rule), each linked to its conversation. axe-core at
// 1440 / 390 px, zh and en.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withPage, openPanel, axeClean, eachWidthAndLanguage, shot } from './serve.mjs';

test('issue18_person_page: record, linked node, memories that mention them, their messages across conversations', async () => {
  await withPage(async ({ srv, page }) => {
    const node = async (title, content) => (await srv.api('POST', 'nodes', { title, content })).body.node;
    const dossier = await node('档案一号', '一个朋友');
    const byName = await node('小红喜欢猫', '养了两只');
    const byAlias = await node('生日', '红红的生日在三月');
    await node('无关的', '别的事');
    const put = await srv.api('PUT', 'people/12345', { name: '小红', aliases: ['红红'], relationship: '朋友', affinity: 30, reason: 'r', memoryNodeId: dossier.id });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    const log = (conv, messages) => srv.api('POST', `conversations/${encodeURIComponent(conv)}/messages`, { messages });
    assert.equal((await log('group:100000001', [
      { id: 'g1', time: '2026-11-20T10:00:00Z', senderId: '12345', senderName: '小红', text: '群里第一句' },
      { id: 'g2', time: '2026-11-20T10:01:00Z', senderId: '999', senderName: '别人', text: '别人说的' },
      { id: 'g3', time: '2026-11-21T10:00:00Z', senderId: '12345', senderName: '小红', text: '群里第二句' }])).status, 200);
    assert.equal((await log('private:12345', [
      { id: 'p1', time: '2026-11-22T10:00:00Z', senderId: '12345', senderName: '小红', text: '私聊一句' }])).status, 200);
    // the route, across conversations, newest first
    const r = await srv.api('GET', 'messages?sender=12345');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.items.map((m) => m.id), ['p1', 'g3', 'g1']);
    const bad = await srv.api('GET', 'messages');
    assert.equal(bad.status, 400);
    assert.match(bad.body.error.message, /keywords/);

    await openPanel(page, srv, 'people/12345');
    await page.locator('#p-name').waitFor();
    assert.equal(await page.inputValue('#p-name'), '小红');
    // the linked node by its title
    await page.locator('#person-node-link', { hasText: '档案一号' }).waitFor();
    // the memories that mention them: by name, by alias, the linked one; not the others
    const mems = page.locator('#person-memories li');
    await mems.first().waitFor();
    const titles = await mems.locator('> button.link').allTextContents();
    assert.deepEqual(titles.slice().sort(), [byName.title, byAlias.title, dossier.title].sort());
    assert.match(await page.locator('#person-terms').innerText(), /小红、红红/);
    // their messages, newest first, each with its conversation
    const msgs = page.locator('#person-message-list > li');
    await msgs.first().waitFor();
    assert.deepEqual(await msgs.evaluateAll((els) => els.map((e) => e.dataset.id)), ['p1', 'g3', 'g1']);
    assert.equal(await msgs.first().locator('button.conv-link').textContent(), 'private:12345');
    await shot(page, 'person');

    await eachWidthAndLanguage(page, async (p, what) => {
      await p.locator('#person-message-list > li').first().waitFor();
      await p.locator('#person-memories li').first().waitFor();
      await axeClean(p, `person page ${what}`);
    });
    await page.setViewportSize({ width: 1440, height: 900 });

    // the links: a memory, the node, a conversation
    await mems.locator('> button.link', { hasText: byAlias.title }).click();
    await page.locator('#node-title', { hasText: byAlias.title }).waitFor();
    await openPanel(page, srv, 'people/12345');
    await page.locator('#person-node-link').click();
    await page.locator('#node-title', { hasText: '档案一号' }).waitFor();
    await openPanel(page, srv, 'people/12345');
    await page.locator('#person-message-list > li[data-id="g3"] button.conv-link').click();
    await page.locator('main[data-panel="conversations"] #cv-title', { hasText: 'group:100000001' }).waitFor();

    // a person with no node, no mention and no message says so
    assert.equal((await srv.api('PUT', 'people/777', { name: '路人甲', aliases: [], relationship: '', affinity: 0, reason: '' })).status, 200);
    await openPanel(page, srv, 'people/777');
    await page.locator('#person-node p.empty').waitFor();
    await page.locator('#person-memories p.empty').waitFor();
    await page.locator('#person-messages p.empty').waitFor();
  });
});
