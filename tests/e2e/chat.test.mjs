// chat.test.mjs — issue 14, part 3: POST /api/v1/chat, one turn of a
// console conversation answered as server-sent events, read by a real SSE
// client (eventsource-parser over fetch's stream) against a real
// `zcor serve` and the scripted model of tests/fake_openai.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createParser } from 'eventsource-parser';

import { startFakeOpenAI } from '../fake_openai.mjs';
import { request, withServe } from '../net.mjs';
import { mkTmp } from '../tmpdir.mjs';

const BIN = process.env.ZCOR_BIN;
assert.ok(BIN, 'ZCOR_BIN must name the zcor binary');

function env() {
  const e = { ...process.env };
  delete e.ZCOR_DIR;
  for (const k of ['http_proxy', 'https_proxy', 'HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'all_proxy']) delete e[k];
  return e;
}

function setup(fake) {
  const dir = mkTmp('zcor-chat-');
  if (fake)
    writeFileSync(join(dir, 'config.json'),
      JSON.stringify({ provider: { baseUrl: fake.baseUrl, model: 'fake', maxRetries: 0 } }));
  return dir;
}

// POST /api/v1/chat read as a stream: { status, type, events: [{event,
// data (parsed JSON)}], at: [ms since the request, per event] } — or
// { status, json } for an answer that is not an event stream.
async function chat(srv, body, { conv } = {}) {
  const t0 = Date.now();
  const res = await fetch(`http://127.0.0.1:${srv.port}/api/v1/chat`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${srv.token}`, 'Content-Type': 'application/json',
      ...(conv ? { 'X-Zcor-Conversation': conv } : {}) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const type = res.headers.get('content-type') || '';
  if (!type.startsWith('text/event-stream')) return { status: res.status, type, json: await res.json() };
  const events = [], at = [];
  const parser = createParser({
    onEvent: (e) => { events.push({ event: e.event, data: JSON.parse(e.data) }); at.push(Date.now() - t0); },
  });
  const decoder = new TextDecoder();
  for await (const chunk of res.body) parser.feed(decoder.decode(chunk, { stream: true }));
  return { status: res.status, type, events, at };
}

test('[issue 14] POST chat streams delta, tool start/end, then the turn record, in order; the message is logged as the operator\'s', async () => {
  const fake = await startFakeOpenAI([
    { content: '我记', toolCalls: [{ name: 'zcor_memory_write', arguments: { title: '晨光咖啡', keywords: ['晨光'], content: '东门那家咖啡店叫晨光' } }] },
    { content: '记住了，东门那家叫晨光。', chunkChars: 2, delayMs: 300 },
  ]);
  try {
    const dir = setup(fake);
    await withServe(BIN, dir, env(), async (srv) => {
      const r = await chat(srv, { text: '东门那家咖啡店叫晨光，记一下' });
      assert.equal(r.status, 200);
      const names = r.events.map((e) => e.event + (e.data.phase ? `:${e.data.phase}` : ''));
      const deltas = r.events.filter((e) => e.event === 'delta').map((e) => e.data.text);
      // text streams in pieces (chunkChars 2), not as one block at the end
      assert.ok(deltas.length >= 5, names.join(' '));
      assert.equal(deltas.join(''), '我记记住了，东门那家叫晨光。');
      const start = names.indexOf('tool:start'), end = names.indexOf('tool:end'), last = names.length - 1;
      assert.ok(start > 0 && end > start && names[last] === 'turn', names.join(' '));
      assert.ok(names.slice(end + 1, last).every((n) => n === 'delta'), names.join(' '));
      const ts = r.events[start].data, te = r.events[end].data;
      assert.equal(ts.name, 'zcor_memory_write');
      assert.equal(JSON.parse(ts.arguments).title, '晨光咖啡');
      assert.equal(te.status, 'ok');
      assert.equal(te.arguments, ts.arguments);
      const written = JSON.parse(te.result);
      // the first delta left before the model's second answer was there
      // (it waits 300 ms): the stream is fed as the turn runs
      assert.ok(r.at[names.indexOf('delta')] + 250 < r.at[last], r.at.join(' '));
      const turn = r.events[last].data;
      assert.equal(turn.conversation, 'console:web');
      assert.equal(turn.reply, '记住了，东门那家叫晨光。');
      assert.equal(turn.toolCalls.length, 1);
      assert.equal(turn.toolCalls[0].status, 'ok');
      assert.equal(turn.batch.length, 1);
      // the record is the one GET turns lists
      const list = await request(srv, '/api/v1/turns?conversation=console:web');
      assert.equal(list.json.items[0].id, turn.turn);
      assert.equal(list.json.items[0].reply, turn.reply);
      // the memory exists; the message is in the transcript, the operator's
      const id = written.id || written.node?.id;
      assert.ok(id, te.result);
      const node = await request(srv, `/api/v1/nodes/${id}`);
      assert.equal(node.status, 200, node.text);
      const tr = await request(srv, '/api/v1/conversations/console:web/messages');
      assert.deepEqual(tr.json.items.map((m) => [m.senderId, m.text]), [['operator', '东门那家咖啡店叫晨光，记一下']]);
      assert.equal(tr.json.items[0].id, turn.batch[0]);
      // the model got the text in the frame
      assert.match(JSON.stringify(fake.requests[0].body.messages), /东门那家咖啡店叫晨光，记一下/);
    });
  } finally {
    await fake.close();
  }
});

test('[issue 14] POST chat with no provider is 503 no_provider saying how to set one up, and logs nothing', async () => {
  const dir = setup(null);
  await withServe(BIN, dir, env(), async (srv) => {
    const r = await chat(srv, { text: '你好' });
    assert.equal(r.status, 503);
    assert.equal(r.json.error.code, 'no_provider');
    assert.match(r.json.error.message, /provider/);
    assert.match(r.json.error.message, /PROVIDERS\.md|config\.json/);
    const tr = await request(srv, '/api/v1/conversations/console:web');
    assert.equal(tr.status, 404, tr.text);
  });
});

test('[issue 14] POST chat: a failing provider ends the stream with an error event carrying the recorded turn', async () => {
  const fake = await startFakeOpenAI([{ status: 500, error: 'model exploded' }]);
  try {
    const dir = setup(fake);
    await withServe(BIN, dir, env(), async (srv) => {
      const r = await chat(srv, { conversation: 'console:x', text: '在吗' });
      assert.equal(r.status, 200);
      const last = r.events.at(-1);
      assert.equal(last.event, 'error');
      assert.equal(last.data.error.code, 'provider_error');
      assert.ok(Number.isInteger(last.data.error.details.turn), JSON.stringify(last.data));
      assert.ok(!r.events.some((e) => e.event === 'turn'));
    });
  } finally {
    await fake.close();
  }
});

test('[issue 14] POST chat: bad bodies are 400 naming the field; a non-console conversation is refused; nothing is logged', async () => {
  const fake = await startFakeOpenAI([]);
  try {
    const dir = setup(fake);
    await withServe(BIN, dir, env(), async (srv) => {
      const cases = [
        [{}, /field 'text'/],
        [{ text: '' }, /field 'text'/],
        [{ text: 42 }, /field 'text'/],
        [{ text: 'x'.repeat(20001) }, /field 'text': .*20000/],
        [{ text: 'hi', colour: 'red' }, /field 'colour': unknown/],
        [{ text: 'hi', conversation: 7 }, /field 'conversation'/],
        [{ text: 'hi', conversation: 'console:' }, /field 'conversation'/],
        [{ text: 'hi', conversation: 'group:100000001' }, /field 'conversation': 'group:100000001' is not a console/],
        [{ text: 'hi', conversation: 'private:12345' }, /field 'conversation': 'private:12345' is not a console/],
        ['[1]', /JSON object/],
        ['{"text":', /not valid JSON/],
      ];
      for (const [body, re] of cases) {
        const r = await chat(srv, body);
        assert.equal(r.status, 400, JSON.stringify(body));
        assert.equal(r.json.error.code, 'invalid_argument');
        assert.match(r.json.error.message, re);
      }
      const list = await request(srv, '/api/v1/conversations');
      assert.deepEqual(list.json.items, []);
      assert.equal(fake.requests.length, 0);
    });
  } finally {
    await fake.close();
  }
});

test('[issue 14] POST chat: a caller bound with X-Zcor-Conversation chats only in its own conversation', async () => {
  const fake = await startFakeOpenAI([{ content: '好的' }]);
  try {
    const dir = setup(fake);
    await withServe(BIN, dir, env(), async (srv) => {
      let r = await chat(srv, { conversation: 'console:b', text: 'hi' }, { conv: 'console:a' });
      assert.equal(r.status, 403);
      assert.equal(r.json.error.code, 'forbidden');
      // without a conversation it is its own, not console:web
      r = await chat(srv, { text: 'hi' }, { conv: 'console:a' });
      assert.equal(r.status, 200);
      assert.equal(r.events.at(-1).event, 'turn');
      assert.equal(r.events.at(-1).data.conversation, 'console:a');
      // bound to a group: refused like any non-console conversation
      r = await chat(srv, { text: 'hi' }, { conv: 'group:100000001' });
      assert.equal(r.status, 400);
      assert.match(r.json.error.message, /not a console/);
      const list = await request(srv, '/api/v1/conversations');
      assert.deepEqual(list.json.items.map((c) => c.key), ['console:a']);
    });
  } finally {
    await fake.close();
  }
});

test('[issue 14] POST chat: the page\'s rules for writes — no bearer token (a cookie alone) is 401, a foreign Origin 403', async () => {
  const fake = await startFakeOpenAI([]);
  try {
    const dir = setup(fake);
    await withServe(BIN, dir, env(), async (srv) => {
      let r = await request(srv, '/api/v1/chat', { method: 'POST', auth: false, body: { text: 'hi' },
        headers: { cookie: `zcor_token=${srv.token}` } });
      assert.equal(r.status, 401);
      r = await request(srv, '/api/v1/chat', { method: 'POST', body: { text: 'hi' }, origin: 'http://evil.example' });
      assert.equal(r.status, 403);
      assert.equal(fake.requests.length, 0);
    });
  } finally {
    await fake.close();
  }
});
