// turn.test.mjs — issue 14, part 1: the turn (docs/TURN.md) through the
// real CLI (`zcor chat --once`, `zcor turns`) and REST (GET /api/v1/turns),
// with the scripted OpenAI-compatible server of tests/fake_openai.mjs on
// 127.0.0.1; every request the fake received is checked. The database is
// looked at with the sqlite3 shell.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { startFakeOpenAI } from '../fake_openai.mjs';
import { request, withServe } from '../net.mjs';
import { mkTmp } from '../tmpdir.mjs';
import { cleanEnv as env, sql, zc } from '../cli.mjs';

const BIN = process.env.ZCOR_BIN;
assert.ok(BIN, 'ZCOR_BIN must name the zcor binary');




function setup(fake, extra = {}) {
  const dir = mkTmp('zcor-turn-');
  writeFileSync(join(dir, 'config.json'),
    JSON.stringify({ provider: { baseUrl: fake.baseUrl, model: 'fake', maxRetries: 0 }, ...extra }));
  return dir;
}

async function chat(dir, text, conv = 'console:a', more = []) {
  return zc(dir, ['chat', '--once', text, '--conversation', conv, '--json', ...more]);
}

// The frame's data in a request: the tool result of the last
// external_event_frame call (or of index i among them).
function frames(req) {
  const msgs = req.body.messages;
  const ids = msgs.filter((m) => m.role === 'assistant' && (m.tool_calls || [])
    .some((c) => c.function.name === 'external_event_frame')).map((m) => m.tool_calls[0].id);
  return ids.map((id) => JSON.parse(msgs.find((m) => m.role === 'tool' && m.tool_call_id === id).content));
}
const toolNames = (req) => (req.body.tools || []).map((t) => t.function.name);

test('[issue 14] a full turn: the model writes a memory and answers; the next batch (a new process) recalls it; the header is never stored', async () => {
  const fake = await startFakeOpenAI([
    { toolCalls: [{ name: 'zcor_memory_write', arguments: { title: '晨光咖啡', keywords: ['晨光', '咖啡店'], content: '东门那家咖啡店叫晨光' } }],
      usage: { prompt_tokens: 100, completion_tokens: 10 } },
    { content: '记住了，东门那家叫晨光。', usage: { prompt_tokens: 120, completion_tokens: 8 } },
    { content: '晨光还开着。' },
  ]);
  try {
    const dir = setup(fake);
    let r = await chat(dir, '东门那家咖啡店叫晨光，记一下');
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.reply, '记住了，东门那家叫晨光。');
    assert.equal(out.toolCalls.length, 1);
    assert.equal(out.toolCalls[0].name, 'zcor_memory_write');
    assert.equal(out.toolCalls[0].status, 'ok');
    assert.deepEqual(out.tokens, { prompt: 220, completion: 18, total: 238 });
    assert.match(r.stderr, /· zcor_memory_write/);
    // the first request: the system prefix, then the frame holding the batch as data
    const [q0, q1] = fake.requests;
    // issue 14: the turn's two requests come over one kept connection
    assert.equal(q1.conn, q0.conn, 'the second request reuses the first one\'s connection');
    assert.equal(fake.connections(), 1);
    assert.equal(q0.body.messages[0].role, 'system');
    assert.match(q0.body.messages[0].content, /external_event_frame/);
    assert.ok(toolNames(q0).includes('zcor_memory_write'));
    assert.ok(!toolNames(q0).includes('external_event_frame'));
    const f0 = frames(q0);
    assert.equal(f0.length, 1);
    assert.equal(f0[0].messages[0].text, '东门那家咖啡店叫晨光，记一下');
    assert.equal(f0[0].messages[0].senderId, 'operator');
    // the tool result went back as a tool message
    const res = q1.body.messages.at(-1);
    assert.equal(res.role, 'tool');
    assert.equal(res.tool_call_id, q1.body.messages.at(-2).tool_calls[0].id);
    const node = JSON.parse(res.content);
    assert.ok(node.id || node.node, res.content);
    const rows = sql(dir, "SELECT scope, title FROM nodes");
    assert.deepEqual(rows, [{ scope: 'console:a', title: '晨光咖啡' }]);
    const hist = sql(dir, "SELECT actor, conversation FROM history WHERE operation = 'zcor_memory_write'");
    assert.deepEqual(hist, [{ actor: 'model', conversation: 'console:a' }]);

    // the next batch, in a new process: the header carries the memory
    r = await chat(dir, '晨光咖啡还开着吗');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).reply, '晨光还开着。');
    assert.ok(JSON.parse(r.stdout).recalled.length >= 1);
    const q2 = fake.requests[2];
    const f2 = frames(q2);
    assert.equal(f2.length, 2, 'the dialogue continues after the restart');
    assert.equal(f2[0].recall, undefined, 'an earlier frame carries no header');
    assert.match(f2[1].recall, /东门那家咖啡店叫晨光/);
    assert.equal(f2[1].messages[0].text, '晨光咖啡还开着吗');
    // the dialogue: turn 1's tool exchange and reply are there
    const texts = q2.body.messages.map((m) => m.content || '');
    assert.ok(texts.includes('记住了，东门那家叫晨光。'));
    assert.ok(q2.body.messages.some((m) => (m.tool_calls || []).some((c) => c.function.name === 'zcor_memory_write')));
    // the header is nowhere in the store's dialogue
    const header = f2[1].recall;
    const stored = sql(dir, 'SELECT message FROM dialogue ORDER BY seq').map((x) => x.message);
    assert.ok(stored.length >= 6);
    for (const m of stored) {
      assert.ok(!m.includes('"recall"'), m);
      assert.ok(!m.includes(JSON.stringify(header).slice(1, 40)), m);
    }
    // the records
    r = await zc(dir, ['turns', '--json']);
    const turns = JSON.parse(r.stdout);
    assert.equal(turns.total, 2);
    assert.equal(turns.items[0].status, 'ok');
    assert.equal(turns.items[1].toolCalls[0].name, 'zcor_memory_write');
    assert.equal(turns.items[1].batch.length, 1);
    assert.ok(turns.items[0].recalled.length >= 1);
    assert.equal(fake.remaining(), 0);
  } finally {
    await fake.close();
  }
});

// provider.temperature (config.json) is the turn's: 0.7 unless set.
test('[issue 14] provider.temperature reaches every request of a turn; 0.7 by default', async () => {
  const fake = await startFakeOpenAI([{ content: '好' }, { content: '好' }]);
  try {
    let dir = setup(fake);
    assert.equal((await chat(dir, '你好')).code, 0);
    dir = setup(fake);
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ provider: { baseUrl: fake.baseUrl,
      model: 'fake', maxRetries: 0, temperature: 0.2 } }));
    assert.equal((await chat(dir, '你好')).code, 0);
    assert.deepEqual(fake.requests.map((q) => q.body.temperature), [0.7, 0.2]);
  } finally {
    await fake.close();
  }
});

test('[issue 14] a call of external_event_frame, of an undeclared tool, or with arguments that are no object is refused and runs nothing', async () => {
  const fake = await startFakeOpenAI([
    { toolCalls: [
      { name: 'external_event_frame', arguments: {} },
      { name: 'zcor_relationship_write', arguments: { personId: '1', name: 'x', relationship: 'y', affinity: 1, reason: 'z' } },
      { name: 'no_such_tool', arguments: {} },
      { name: 'zcor_memory_write', arguments: '[1,2]' },
    ] },
    { content: '好' },
  ]);
  try {
    const dir = setup(fake, { relationships: false });
    const r = await chat(dir, '你好');
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.deepEqual(out.toolCalls.map((c) => c.status), ['refused', 'refused', 'refused', 'error']);
    // relationship memory off: its tools are not offered
    const names = toolNames(fake.requests[0]);
    assert.ok(names.includes('zcor_memory_write'));
    assert.ok(!names.some((n) => n.startsWith('zcor_relationship_')), names.join());
    const results = fake.requests[1].body.messages.filter((m) => m.role === 'tool').slice(-4).map((m) => JSON.parse(m.content));
    assert.match(results[0].error.message, /external_event_frame .*must never be called/);
    assert.match(results[1].error.message, /'zcor_relationship_write' is not a tool declared in this request/);
    assert.match(results[2].error.message, /'no_such_tool' is not a tool declared/);
    assert.match(results[3].error.message, /not a JSON object/);
    assert.deepEqual(sql(dir, 'SELECT count(*) AS n FROM nodes'), [{ n: 0 }]);
    assert.deepEqual(sql(dir, 'SELECT count(*) AS n FROM people'), [{ n: 0 }]);
    assert.deepEqual(sql(dir, 'SELECT count(*) AS n FROM history'), [{ n: 0 }]);
  } finally {
    await fake.close();
  }
});

test('[issue 14] a looping model is stopped at turn.maxSteps; the tools are withdrawn and it still answers', async () => {
  const loop = (k) => ({ toolCalls: [{ name: 'zcor_memory_query', arguments: { keywords: [`词${k}`] } }] });
  const fake = await startFakeOpenAI([loop(1), loop(2), loop(3), { content: '不查了，直接说。' }]);
  try {
    const dir = setup(fake, { turn: { maxSteps: 3 } });
    const r = await chat(dir, '查一下');
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.reply, '不查了，直接说。');
    assert.equal(out.limit, 'steps');
    assert.equal(fake.requests.length, 4);
    for (const q of fake.requests.slice(0, 3)) assert.ok(q.body.tools.length > 0);
    assert.equal(fake.requests[3].body.tools, undefined);
    assert.match(fake.requests[3].body.messages.at(-1).content, /工具已收回/);
  } finally {
    await fake.close();
  }
});

test('[issue 14] the same call (name and arguments) a third time is not run and the tools are withdrawn', async () => {
  const same = { toolCalls: [{ name: 'zcor_memory_query', arguments: { keywords: ['同一个'], limit: 5 } }] };
  const reordered = { toolCalls: [{ name: 'zcor_memory_query', arguments: '{"limit":5,"keywords":["同一个"]}' }] };
  const fake = await startFakeOpenAI([same, reordered, same, { content: '就这些。' }]);
  try {
    const dir = setup(fake);
    const r = await chat(dir, '查');
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.deepEqual(out.toolCalls.map((c) => c.status), ['ok', 'ok', 'refused']);
    assert.equal(out.limit, 'repeat');
    assert.equal(out.reply, '就这些。');
    assert.equal(fake.requests[3].body.tools, undefined);
    assert.deepEqual(sql(dir, "SELECT count(*) AS n FROM history WHERE operation = 'zcor_memory_query'"), [{ n: 2 }]);
  } finally {
    await fake.close();
  }
});

test('[issue 14] the turn deadline: a slow model is cut, the tools withdrawn, one answer asked for; the turn ends cleanly', async () => {
  const fake = await startFakeOpenAI([
    { toolCalls: [{ name: 'zcor_memory_query', arguments: { keywords: ['慢'] } }], delayMs: 1200 },
    { toolCalls: [{ name: 'zcor_memory_query', arguments: { keywords: ['更慢'] } }], delayMs: 5000 },
    { content: '时间到了，先这样。' },
  ]);
  try {
    const dir = setup(fake, { turn: { deadlineMs: 1500 } });
    const t0 = Date.now();
    const r = await chat(dir, '慢慢查');
    const took = Date.now() - t0;
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.limit, 'deadline');
    assert.equal(out.reply, '时间到了，先这样。');
    assert.equal(fake.requests.length, 3);
    assert.equal(fake.requests[2].body.tools, undefined);
    assert.ok(took < 4500, `the turn took ${took} ms`);
    // nothing is left held: the next turn runs at once
    const r2 = await zc(dir, ['turns', '--json']);
    assert.equal(JSON.parse(r2.stdout).items[0].limit, 'deadline');
    assert.deepEqual(sql(dir, "SELECT count(*) AS n FROM leases WHERE kind = 'turn'"), [{ n: 0 }]);
  } finally {
    await fake.close();
  }
});

test("[issue 14] privacy: a turn in console:a never sends console:b's or a private chat's memory to the model", async () => {
  const fake = await startFakeOpenAI([
    { toolCalls: [{ name: 'zcor_memory_query', arguments: { keywords: ['咖啡'] } },
      { name: 'zcor_memory_search', arguments: { keywords: ['咖啡'] } },
      { name: 'qq_transcript', arguments: { action: 'search', keywords: ['咖啡'] } }] },
    // zcor_memory_search's filter stage asks the model too
    (req) => ({ content: JSON.stringify({ ids: [] }) }),
    { content: '好的' },
  ]);
  try {
    const dir = setup(fake);
    const w = async (conv, title, content) => {
      const args = conv ? ['--conversation', conv] : [];
      const r = await zc(dir, [...args, 'tool', 'zcor_memory_write', JSON.stringify({ title, keywords: ['咖啡'], content })]);
      assert.equal(r.code, 0, r.stderr);
    };
    await w(null, '咖啡 全局', 'GLOBALSEEN 咖啡');
    await w('console:b', '咖啡 b', 'CANARYB 咖啡');
    await w('private:123', '咖啡 私聊', 'CANARYPRIV 咖啡');
    let r = await zc(dir, ['transcript', 'log', '--conversation', 'console:b'],
      JSON.stringify({ messages: [{ id: 'b1', senderId: 'u', text: 'CANARYLOG 咖啡' }] }));
    assert.equal(r.code, 0, r.stderr);
    r = await chat(dir, '咖啡');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(fake.requests.length, 3);
    const all = fake.requests.map((q) => JSON.stringify(q.body)).join('\n');
    assert.match(all, /GLOBALSEEN/);
    for (const canary of ['CANARYB', 'CANARYPRIV', 'CANARYLOG']) assert.ok(!all.includes(canary), canary);
  } finally {
    await fake.close();
  }
});

test('[issue 14] messages logged during a running turn form the next batch; nothing is lost', async () => {
  const fake = await startFakeOpenAI([{ content: '一', delayMs: 1500 }, { content: '二' }]);
  try {
    const dir = setup(fake);
    const first = chat(dir, '第一条');
    while (fake.requests.length === 0) await new Promise((res) => setTimeout(res, 20));
    const r = await zc(dir, ['transcript', 'log', '--conversation', 'console:a'],
      JSON.stringify({ messages: [{ id: 'during', senderId: 'u2', senderName: '小王', text: '中途来的' }] }));
    assert.equal(r.code, 0, r.stderr);
    const r1 = await first;
    assert.equal(r1.code, 0, r1.stderr);
    assert.deepEqual(frames(fake.requests[0])[0].messages.map((m) => m.text), ['第一条']);
    const r2 = await chat(dir, '第三条');
    assert.equal(r2.code, 0, r2.stderr);
    const f = frames(fake.requests[1]);
    assert.deepEqual(f.at(-1).messages.map((m) => m.text), ['中途来的', '第三条']);
    assert.equal(JSON.parse(r2.stdout).batch.length, 2);
  } finally {
    await fake.close();
  }
});

test('[issue 14] two conversations run their turns at the same time; one conversation runs one turn at a time', async () => {
  const slow = () => ({ content: '慢', delayMs: 900 });
  const fake = await startFakeOpenAI([slow, slow, slow, slow]);
  try {
    const dir = setup(fake);
    // two conversations: both requests arrive before either answer
    let [a, b] = await Promise.all([chat(dir, '甲', 'console:a'), chat(dir, '乙', 'console:b')]);
    assert.equal(a.code, 0, a.stderr);
    assert.equal(b.code, 0, b.stderr);
    assert.ok(Math.abs(fake.requests[0].at - fake.requests[1].at) < 800,
      `requests at ${fake.requests[0].at} and ${fake.requests[1].at}`);
    // one conversation: a second turn started while the first runs waits
    // for it (its message is logged at once, and forms its batch)
    const pa = chat(dir, '丙', 'console:c');
    while (fake.requests.length < 3) await new Promise((res) => setTimeout(res, 20));
    [a, b] = await Promise.all([pa, chat(dir, '丁', 'console:c')]);
    assert.equal(a.code, 0, a.stderr);
    assert.equal(b.code, 0, b.stderr);
    const [q3, q4] = fake.requests.slice(2);
    assert.ok(q4.at - q3.at >= 850, `the same conversation's turns overlapped: ${q3.at} ${q4.at}`);
    assert.deepEqual(frames(q3).at(-1).messages.map((m) => m.text), ['丙']);
    assert.deepEqual(frames(q4).at(-1).messages.map((m) => m.text), ['丁']);
  } finally {
    await fake.close();
  }
});

test('[issue 14] a provider error ends the turn with a recorded error and the apology; the next turn works', async () => {
  const fake = await startFakeOpenAI([{ raw: 'this is not json' }, { content: '好了' }]);
  try {
    const dir = setup(fake, { worlds: { console: { apology: '抱歉，我这边出了点问题。' } } });
    let r = await zc(dir, ['chat', '--once', '坏掉的一次', '--conversation', 'console:a']);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /the turn failed \(recorded as turn 1/);
    assert.equal(r.stdout.trim(), '抱歉，我这边出了点问题。');
    r = await zc(dir, ['turns', '--json', '--conversation', 'console:a']);
    const rec = JSON.parse(r.stdout).items[0];
    assert.equal(rec.status, 'error');
    assert.equal(rec.error.code, 'provider_error');
    assert.equal(rec.apology, '抱歉，我这边出了点问题。');
    r = await chat(dir, '再来一次');
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.reply, '好了');
    assert.equal(out.batch.length, 1, 'the failed batch is not taken again');
    // the failed turn's frame and apology are in the dialogue
    const f = frames(fake.requests[1]);
    assert.deepEqual(f.map((x) => x.messages[0].text), ['坏掉的一次', '再来一次']);
    assert.ok(fake.requests[1].body.messages.some((m) => m.content === '抱歉，我这边出了点问题。'));
  } finally {
    await fake.close();
  }
});

test('[issue 14] no provider: zcor chat --once says how to configure one, exits 2 and logs nothing', async () => {
  const dir = mkTmp('zcor-turn-');
  const r = await zc(dir, ['chat', '--once', '你好']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /"provider": \{"baseUrl"/);
  assert.match(r.stderr, /apiKeyEnv/);
  assert.match(r.stderr, /docs\/PROVIDERS\.md/);
  assert.deepEqual(sql(dir, 'SELECT count(*) AS n FROM messages'), [{ n: 0 }]);
});

test('[issue 14] GET /api/v1/turns lists the records, by conversation, and honours X-Zcor-Conversation', async () => {
  const fake = await startFakeOpenAI([{ content: 'A' }, { content: 'B' }]);
  try {
    const dir = setup(fake);
    assert.equal((await chat(dir, 'a', 'console:a')).code, 0);
    assert.equal((await chat(dir, 'b', 'console:b')).code, 0);
    await withServe(BIN, dir, env(), async (srv) => {
      let r = await request(srv, '/api/v1/turns');
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.total, 2);
      r = await request(srv, '/api/v1/turns?conversation=console:b');
      assert.deepEqual(r.json.items.map((t) => t.reply), ['B']);
      r = await request(srv, '/api/v1/turns', { conv: 'console:a' });
      assert.deepEqual(r.json.items.map((t) => t.conversation), ['console:a']);
      r = await request(srv, '/api/v1/turns?conversation=console:b', { conv: 'console:a' });
      assert.equal(r.status, 403, r.text);
      r = await request(srv, '/api/v1/turns?colour=red');
      assert.equal(r.status, 400);
      assert.match(r.json.error.message, /'colour': unknown/);
    });
  } finally {
    await fake.close();
  }
});

test('issue16_turn_batch_not_imported: history imported into a conversation (`zcor transcript import`, old lines with newer seq) is never a turn\'s batch; the live message is', async () => {
  const fake = await startFakeOpenAI([{ content: '好的' }]);
  try {
    const old = mkTmp('zcor-turn-old-');
    const om = [1, 2, 3].map((i) => ({ id: `o${i}`, time: `2026-01-0${i}T08:00:00Z`, senderId: '101', senderName: '甲', text: `很久以前的第${i}句` }));
    assert.equal((await zc(old, ['transcript', 'log', '--conversation', 'console:imp'], JSON.stringify({ messages: om }))).code, 0);
    const exp = mkTmp('zcor-turn-exp-');
    const r0 = await zc(old, ['transcript', 'export', '--conversation', 'console:imp', '--out', exp]);
    assert.equal(r0.code, 0, r0.stderr);
    const { readdirSync } = await import('node:fs');
    const ldir = join(exp, 'conversations', 'console-imp', 'log');
    const files = readdirSync(ldir).map((f) => join(ldir, f));
    const dir = setup(fake);
    const ri = await zc(dir, ['transcript', 'import', '--conversation', 'console:imp', ...files]);
    assert.equal(ri.code, 0, ri.stderr);
    const r = await chat(dir, '现在的一句', 'console:imp');
    assert.equal(r.code, 0, r.stderr);
    const batch = JSON.stringify(frames(fake.requests[0]));
    assert.ok(batch.includes('现在的一句'), batch);
    assert.ok(!batch.includes('很久以前'), `no imported line in the batch: ${batch}`);
  } finally { await fake.close(); }
});
