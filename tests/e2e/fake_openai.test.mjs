// fake_openai.test.mjs — the scripted OpenAI-compatible server of
// tests/fake_openai.mjs answers as OpenAI does, checked with Node's own
// fetch: tool calls whole and streamed (deltas by index, arguments in
// pieces that join to the JSON), text streamed with usage, errors with
// Retry-After, a stream without [DONE], the recorded requests and an
// exhausted script.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { startFakeOpenAI } from '../fake_openai.mjs';

async function post(fake, body) {
  return fetch(`${fake.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-x' },
    body: JSON.stringify(body),
  });
}

// Reads an SSE body into its data payloads.
async function events(res) {
  const text = await res.text();
  return text.split('\n\n').filter((b) => b.startsWith('data: ')).map((b) => b.slice(6));
}

const messages = [{ role: 'system', content: '你是助手' }, { role: 'user', content: '咖啡店叫什么？' }];

test('fake_openai: a whole answer with tool calls, then text; requests recorded', async () => {
  const fake = await startFakeOpenAI([
    { toolCalls: [{ id: 'call_q', name: 'zcor_memory_query', arguments: { keywords: ['咖啡'] } },
      { name: 'qq_memory', arguments: '{"action":' }] },
    (req) => ({ content: `got ${req.body.messages.length} messages`, usage: { prompt_tokens: 7, completion_tokens: 3 } }),
  ]);
  try {
    let r = await post(fake, { model: 'm', messages, tools: [], stream: false });
    assert.equal(r.status, 200);
    let j = await r.json();
    const m = j.choices[0].message;
    assert.equal(m.content, null);
    assert.equal(j.choices[0].finish_reason, 'tool_calls');
    assert.equal(m.tool_calls[0].id, 'call_q');
    assert.deepEqual(JSON.parse(m.tool_calls[0].function.arguments), { keywords: ['咖啡'] });
    assert.equal(m.tool_calls[1].function.arguments, '{"action":'); // a string goes as it is
    assert.match(m.tool_calls[1].id, /^call_\d+$/);
    r = await post(fake, { model: 'm', messages: [...messages, { role: 'assistant', content: 'x' }] });
    j = await r.json();
    assert.equal(j.choices[0].message.content, 'got 3 messages');
    assert.deepEqual(j.usage, { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 });
    assert.equal(fake.requests.length, 2);
    assert.equal(fake.requests[0].url, '/v1/chat/completions');
    assert.equal(fake.requests[0].headers.authorization, 'Bearer sk-x');
    assert.deepEqual(fake.requests[0].body.messages, messages);
    r = await post(fake, { model: 'm', messages });
    assert.equal(r.status, 500);
    assert.match((await r.json()).error.message, /script exhausted at request 3/);
  } finally {
    await fake.close();
  }
});

test('fake_openai: streamed tool calls and text join back to the answer', async () => {
  const args = { keywords: ['东门', '咖啡'], limit: 5 };
  const fake = await startFakeOpenAI([
    { content: '我查一下', toolCalls: [{ name: 'a', arguments: args }, { name: 'b', arguments: {} }],
      usage: { prompt_tokens: 1, completion_tokens: 2 }, chunkChars: 2 },
    { content: '好', omitDone: true },
  ]);
  try {
    const r = await post(fake, { model: 'm', messages, stream: true, stream_options: { include_usage: true } });
    assert.match(r.headers.get('content-type'), /text\/event-stream/);
    const ev = await events(r);
    assert.equal(ev.at(-1), '[DONE]');
    const chunks = ev.slice(0, -1).map((e) => JSON.parse(e));
    let text = '';
    const tc = [];
    let finish = null, usage = null;
    for (const c of chunks) {
      if (c.usage) usage = c.usage;
      const ch = c.choices[0];
      if (!ch) continue;
      if (ch.finish_reason) finish = ch.finish_reason;
      text += ch.delta.content || '';
      for (const d of ch.delta.tool_calls || []) {
        if (!tc[d.index]) {
          assert.ok(d.id && d.function.name, 'id and name come in the first delta');
          tc[d.index] = { id: d.id, name: d.function.name, args: '' };
        } else {
          assert.equal(d.id, undefined);
        }
        tc[d.index].args += d.function.arguments || '';
      }
    }
    assert.equal(text, '我查一下');
    assert.equal(finish, 'tool_calls');
    assert.deepEqual(usage, { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 });
    assert.deepEqual(tc.map((c) => c.name), ['a', 'b']);
    assert.deepEqual(JSON.parse(tc[0].args), args);
    assert.ok(chunks.filter((c) => c.choices[0]?.delta.tool_calls?.[0]?.index === 0).length > 3,
      'arguments arrive in pieces');
    const r2 = await post(fake, { model: 'm', messages, stream: true });
    const ev2 = await events(r2);
    assert.notEqual(ev2.at(-1), '[DONE]');
    assert.equal(JSON.parse(ev2.at(-1)).choices[0].finish_reason, 'stop');
  } finally {
    await fake.close();
  }
});

test('fake_openai: 429 with Retry-After, a raw body, a hang-up', async () => {
  const fake = await startFakeOpenAI([
    { status: 429, error: 'slow down', headers: { 'retry-after': '1' } },
    { raw: 'not json' },
    { hangUp: true },
  ]);
  try {
    let r = await post(fake, { model: 'm', messages });
    assert.equal(r.status, 429);
    assert.equal(r.headers.get('retry-after'), '1');
    assert.equal((await r.json()).error.message, 'slow down');
    r = await post(fake, { model: 'm', messages });
    assert.equal(await r.text(), 'not json');
    await assert.rejects(post(fake, { model: 'm', messages }));
    assert.equal(fake.remaining(), 0);
  } finally {
    await fake.close();
  }
});
