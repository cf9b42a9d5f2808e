// tool_timeout.test.mjs — issue 14 (a hanging tool call ends at the time
// per tool call and at the turn deadline) and issue 16 (digestTimeoutMs
// cuts a tool call of the digest run), through the real CLI (`zcor chat
// --once`, `zcor digest --now`) with the scripted model of
// tests/fake_openai.mjs and a wiki on 127.0.0.1 that accepts every
// connection and never answers.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';

import { startFakeOpenAI } from '../fake_openai.mjs';
import { mkTmp } from '../tmpdir.mjs';
import { cleanEnv as env, sql, zc } from '../cli.mjs';

const BIN = process.env.ZCOR_BIN;
assert.ok(BIN, 'ZCOR_BIN must name the zcor binary');




// The wiki that never answers: every request is counted and left open.
let asked = 0;
const hanging = createServer(() => { asked++; });
await new Promise((resolve) => hanging.listen(0, '127.0.0.1', resolve));
const WIKI = `http://127.0.0.1:${hanging.address().port}/api.php`;
after(() => new Promise((resolve) => { hanging.closeAllConnections(); hanging.close(resolve); }));

function setup(fake, extra = {}) {
  const dir = mkTmp('zcor-tooltime-');
  writeFileSync(join(dir, 'config.json'), JSON.stringify({
    provider: { baseUrl: fake.baseUrl, model: 'fake', maxRetries: 0 },
    wiki: { baseUrl: WIKI, timeoutMs: 30000 }, ...extra,
  }));
  return dir;
}

const lookup = { toolCalls: [{ name: 'wiki_lookup', arguments: { query: '阿卡林' } }] };
const lastTool = (req) => JSON.parse(req.body.messages.filter((m) => m.role === 'tool').at(-1).content);

test('issue14_hanging_tool_call: wiki_lookup on a wiki that never answers ends at turn.toolTimeoutMs; the error goes back to the model, the tools are withdrawn and it is asked once to answer; the record shows timeout and its time; the next batch runs', async () => {
  const fake = await startFakeOpenAI([lookup, { content: '查不到，先不管了。' }, { content: '第二批也好了。' }]);
  try {
    const dir = setup(fake, { turn: { toolTimeoutMs: 800 } });
    const t0 = Date.now();
    const r = await zc(dir, ['chat', '--once', '阿卡林是谁', '--json']);
    const took = Date.now() - t0;
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.reply, '查不到，先不管了。');
    assert.equal(out.limit, 'toolTime');
    assert.ok(took < 5000, `the turn took ${took} ms with wiki.timeoutMs 30000`);
    assert.equal(out.toolCalls.length, 1);
    const call = out.toolCalls[0];
    assert.equal(call.status, 'timeout');
    assert.ok(call.ms >= 700 && call.ms < 3000, `the call's time: ${call.ms} ms`);
    assert.match(call.error, /cut at the time per tool call \(turn\.toolTimeoutMs\)/);
    // the tool's error went back to the model, the tools withdrawn (issue 14 step 6: at the limit)
    assert.equal(fake.requests.length, 2);
    assert.match(lastTool(fake.requests[1]).error.message, /did not answer in the time this call had/);
    assert.equal(fake.requests[1].body.tools, undefined);
    // the stored record says the same
    const rec = JSON.parse((await zc(dir, ['turns', '--json'])).stdout).items[0];
    assert.equal(rec.status, 'ok');
    assert.equal(rec.toolCalls[0].status, 'timeout');
    assert.equal(typeof rec.toolCalls[0].ms, 'number');
    assert.ok(sql(dir, 'SELECT ended_at - started_at AS d FROM turns')[0].d >= 700, 'the record keeps the turn\'s start');
    // not stuck: the lease is free, the next batch runs at once
    const r2 = await zc(dir, ['chat', '--once', '还在吗', '--json']);
    assert.equal(r2.code, 0, r2.stderr);
    assert.equal(JSON.parse(r2.stdout).reply, '第二批也好了。');
  } finally {
    await fake.close();
  }
});

test('issue14_hanging_tool_call_deadline: the turn deadline cuts a hanging wiki_lookup; the tools are withdrawn and the model asked once to answer', async () => {
  const fake = await startFakeOpenAI([lookup, { content: '时间到了。' }]);
  try {
    const dir = setup(fake, { turn: { deadlineMs: 1500, toolTimeoutMs: 600000 } });
    const t0 = Date.now();
    const r = await zc(dir, ['chat', '--once', '阿卡林是谁', '--json']);
    const took = Date.now() - t0;
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.reply, '时间到了。');
    assert.equal(out.limit, 'deadline');
    assert.ok(took < 5000, `the turn took ${took} ms`);
    assert.equal(out.toolCalls[0].status, 'timeout');
    assert.match(out.toolCalls[0].error, /cut at the turn's deadline \(turn\.deadlineMs\)/);
    assert.equal(fake.requests.length, 2);
    assert.equal(fake.requests[1].body.tools, undefined, 'tools withdrawn');
  } finally {
    await fake.close();
  }
});

test('issue16_digest_timeout_cuts_tool_call: a digest run whose wiki_lookup hangs ends within digestTimeoutMs (not wiki.timeoutMs), recorded as timeout with the call\'s timeout', async () => {
  const fake = await startFakeOpenAI([lookup, { content: '不该走到这里' }]);
  try {
    const dir = setup(fake, { digestTimeoutMs: 1500, turn: { toolTimeoutMs: 600000 } });
    const messages = [1, 2, 3].map((i) => ({ id: `m${i}`, time: `2026-11-20T08:0${i}:00Z`, senderId: '101', senderName: '甲', text: `阿卡林${i}` }));
    let r = await zc(dir, ['transcript', 'log', '--conversation', 'group:9'], JSON.stringify({ messages }));
    assert.equal(r.code, 0, r.stderr);
    const before = asked;
    const t0 = Date.now();
    r = await zc(dir, ['digest', '--now', '--conversation', 'group:9', '--json']);
    const took = Date.now() - t0;
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.ok(took < 1500 + 1500, `the run took ${took} ms with digestTimeoutMs 1500`);
    assert.ok(asked > before, 'the wiki was asked');
    const run = JSON.parse(r.stdout).runs[0];
    assert.equal(run.error.details.status, 'timeout');
    const rec = JSON.parse((await zc(dir, ['digest', '--json'])).stdout).items[0];
    assert.equal(rec.status, 'timeout');
    assert.equal(rec.toolCalls[0].name, 'wiki_lookup');
    assert.equal(rec.toolCalls[0].status, 'timeout');
    assert.match(rec.toolCalls[0].error, /digestTimeoutMs/);
    assert.equal(fake.requests.length, 1, 'abandoned: the model is not asked again');
    assert.deepEqual(sql(dir, "SELECT lines_since_digest AS n FROM conversations WHERE key = 'group:9'"), [{ n: 3 }]);
  } finally {
    await fake.close();
  }
});
