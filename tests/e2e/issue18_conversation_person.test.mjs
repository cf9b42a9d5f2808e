// issue18_conversation_person.test.mjs — issue 18, the routes behind the
// per-conversation and per-person pages over real HTTP: GET find?scope=
// (a conversation's own memories; "global"; a bad scope is 400 naming the
// field and changes nothing), GET conversations/{key}/messages?sender=
// and GET messages?sender= (a sender's messages, every conversation the
// caller sees; a bound caller only its own; a bad sender is 400 naming
// it), none of them recorded in history for the page.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { request as req, withServe as withServeOn } from '../net.mjs';
import { mkTmp } from '../tmpdir.mjs';

const BIN = process.env.ZCOR_BIN;
assert.ok(BIN, 'ZCOR_BIN must name the zcor binary');

function cleanEnv() {
  const e = { ...process.env, TZ: 'UTC' };
  delete e.ZCOR_DIR;
  delete e.ZCOR_TOKEN;
  return e;
}

function ok(r) {
  assert.equal(r.status, 200, r.text);
  return r.json;
}

test('issue18_routes_find_scope_and_messages_sender', async () => {
  await withServeOn(BIN, mkTmp('zcor-issue18-cp-'), cleanEnv(), async (srv) => {
    for (const [conv, title] of [['group:1', '群一的'], ['group:1', '群一的二'], ['group:2', '群二的'], [null, '全局的']]) {
      const r = await req(srv, '/api/v1/nodes', { method: 'POST', body: { title, content: 'x' }, conv: conv ?? undefined });
      assert.equal(r.status, 201, r.text);
    }
    const own = ok(await req(srv, '/api/v1/find?scope=group%3A1'));
    assert.deepEqual(own.items.map((n) => n.title).sort(), ['群一的', '群一的二']);
    assert.deepEqual(ok(await req(srv, '/api/v1/find?scope=global')).items.map((n) => n.title), ['全局的']);
    // bound to group:2: another conversation's scope shows nothing
    assert.equal(ok(await req(srv, '/api/v1/find?scope=group%3A1', { conv: 'group:2' })).total, 0);
    const bad = await req(srv, '/api/v1/find?scope=nowhere');
    assert.equal(bad.status, 400, bad.text);
    assert.equal(bad.json.error.details.field, 'scope');

    const log = async (conv, messages) => ok(await req(srv, `/api/v1/conversations/${encodeURIComponent(conv)}/messages`, { method: 'POST', body: { messages } }));
    await log('group:1', [
      { id: 'a', time: '2026-11-20T10:00:00Z', senderId: '11', text: '一' },
      { id: 'b', time: '2026-11-20T10:01:00Z', senderId: '12', text: '二' },
      { id: 'c', time: '2026-11-20T10:02:00Z', senderId: '11', text: '三' }]);
    await log('private:11', [{ id: 'd', time: '2026-11-21T10:00:00Z', senderId: '11', text: '四' }]);
    // one conversation, oldest first (a read)
    assert.deepEqual(ok(await req(srv, '/api/v1/conversations/group%3A1/messages?sender=11')).items.map((m) => m.id), ['a', 'c']);
    // every conversation, newest first
    const all = ok(await req(srv, '/api/v1/messages?sender=11&limit=2'));
    assert.deepEqual(all.items.map((m) => [m.id, m.conversation]), [['d', 'private:11'], ['c', 'group:1']]);
    assert.equal(all.total, 3);
    assert.equal(all.nextOffset, 2);
    // with keywords too
    assert.deepEqual(ok(await req(srv, '/api/v1/messages?sender=11&keywords=%E4%B8%89')).items.map((m) => m.id), ['c']);
    // a bound caller: its own conversation only
    assert.deepEqual(ok(await req(srv, '/api/v1/messages?sender=11', { conv: 'private:11' })).items.map((m) => m.id), ['d']);
    // neither sender nor keywords; a sender too long
    const none = await req(srv, '/api/v1/messages');
    assert.equal(none.status, 400, none.text);
    assert.equal(none.json.error.details.field, 'keywords');
    const long = await req(srv, `/api/v1/messages?sender=${'9'.repeat(65)}`);
    assert.equal(long.status, 400, long.text);
    assert.match(long.json.error.message, /sender/);
    // the page's reads leave no history record
    const hist = ok(await req(srv, '/api/v1/history?operations=qq_transcript&changesOnly=false'));
    assert.equal(hist.total, 0, JSON.stringify(hist.items));
  });
});
