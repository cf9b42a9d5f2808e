// digest.test.mjs — issue 16, the digest agent's run (Q-DIGEST,
// docs/DIGEST.md) through the real CLI (`zcor digest`, `zcor transcript
// log`, `zcor tool`) with the scripted model of tests/fake_openai.mjs;
// every request the fake received is checked, the store with sqlite3.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { startFakeOpenAI } from '../fake_openai.mjs';
import { request, withServe } from '../net.mjs';
import { mkTmp } from '../tmpdir.mjs';
import { cleanEnv as env, sql, zc } from '../cli.mjs';

const BIN = process.env.ZCOR_BIN;
assert.ok(BIN, 'ZCOR_BIN must name the zcor binary');




function setup(fake, extra = {}) {
  const dir = mkTmp('zcor-digest-');
  writeFileSync(join(dir, 'config.json'),
    JSON.stringify({ provider: { baseUrl: fake.baseUrl, model: 'fake', maxRetries: 0 }, ...extra }));
  return dir;
}

// Logs n lines into conv: "第i句…" from sender 100+i%3, a minute apart.
async function logLines(dir, conv, n, from = 0, pad = '') {
  const messages = [];
  for (let i = from; i < from + n; i++) {
    const t = new Date(Date.UTC(2026, 10, 20, 8, 0) + i * 60000).toISOString();
    messages.push({ id: `m${i}`, time: t, senderId: String(100 + (i % 3)), senderName: `人${i % 3}`, text: `第${i}句${pad}` });
  }
  const r = await zc(dir, ['transcript', 'log', '--conversation', conv], JSON.stringify({ messages }));
  assert.equal(r.code, 0, r.stderr);
}

const conv = (dir, key) => sql(dir, `SELECT lines_since_digest AS lines, last_digest_date AS date FROM conversations WHERE key = '${key}'`)[0];
const toolNames = (req) => (req.body.tools || []).map((t) => t.function.name).sort();
const userText = (req) => req.body.messages.find((m) => m.role === 'user').content;
const systemText = (req) => req.body.messages.find((m) => m.role === 'system').content;
const digestNow = (dir, key, more = []) => zc(dir, ['digest', '--now', '--conversation', key, '--json', ...more]);

test('[Q-DIGEST] a run: its input is the transcript since the last digest, the newest kept within digestMaxChars with a note; only the digest tools are offered; the upserts land in the views; success marks it done', async () => {
  const fake = await startFakeOpenAI([
    { toolCalls: [{ name: 'skill', arguments: { name: 'message-digest' } }] },
    { toolCalls: [
      { name: 'qq_memory', arguments: { action: 'upsert', path: 'conversations/group-500/MEMORY.md', name: '周五固定开黑', meaning: '晚上八点', section: '惯例与偏好', date: '2026-11-20' } },
      { name: 'qq_memory', arguments: { action: 'upsert', path: 'COGNITION.md', name: '蚌埠住了', meaning: '忍不住笑了' } },
      { name: 'zcor_memory_write', arguments: { title: 'x', content: 'y' } },
    ] },
    { content: '写了两条。', usage: { prompt_tokens: 50, completion_tokens: 5 } },
  ]);
  try {
    const dir = setup(fake, { digestMaxChars: 1000 });
    await logLines(dir, 'group:500', 40, 0, '。'.repeat(20));
    assert.equal(conv(dir, 'group:500').lines, 40);
    const r = await digestNow(dir, 'group:500');
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const run = JSON.parse(r.stdout).runs[0];
    assert.equal(run.status, 'ok');
    assert.equal(run.lines, 40);
    assert.ok(run.cut, 'cut');
    assert.ok(run.sentLines > 0 && run.sentLines < 40, String(run.sentLines));
    assert.ok(run.chars <= 1000);
    // the input: the newest lines, oldest of them first, the note naming the left-out ones
    const req = fake.requests[0];
    const user = userText(req);
    assert.match(user, /第39句/);
    assert.doesNotMatch(user, /第0句/);
    assert.ok(user.indexOf(`第${40 - run.sentLines}句`) < user.indexOf('第39句'));
    assert.doesNotMatch(user, new RegExp(`第${39 - run.sentLines}句`));
    assert.match(user, new RegExp(`更早的 ${40 - run.sentLines} 条被省略了`));
    // the system prompt: which conversation, the skills, message-digest; no persona
    const sys = systemText(req);
    assert.match(sys, /group:500/);
    assert.match(sys, /message-digest/);
    assert.match(sys, /learn-meme/);
    assert.equal(req.body.messages.length, 2);
    // the tools: exactly the digest audience's list
    assert.deepEqual(toolNames(req), ['qq_memory', 'qq_save_sticker', 'qq_transcript', 'skill', 'wiki_lookup']);
    // the calls: the two upserts ran, the undeclared tool was refused
    const calls = run.toolCalls;
    assert.deepEqual(calls.map((c) => [c.name, c.status]),
      [['skill', 'ok'], ['qq_memory', 'ok'], ['qq_memory', 'ok'], ['zcor_memory_write', 'refused']]);
    const mem = JSON.parse((await zc(dir, ['tool', 'qq_memory', JSON.stringify({ action: 'read', path: 'conversations/group-500/MEMORY.md' })])).stdout);
    assert.match(mem.text, /周五固定开黑｜晚上八点/);
    const cog = JSON.parse((await zc(dir, ['tool', 'qq_memory', JSON.stringify({ action: 'read', path: 'COGNITION.md' })])).stdout);
    assert.match(cog.text, /蚌埠住了｜忍不住笑了/);
    // done: lines reset, the local date kept; the calls' history has actor digest
    assert.equal(conv(dir, 'group:500').lines, 0);
    assert.match(conv(dir, 'group:500').date, /^\d{4}-\d\d-\d\d$/);
    assert.ok(sql(dir, "SELECT count(*) AS n FROM history WHERE actor = 'digest'")[0].n >= 2);
    // the record
    const list = JSON.parse((await zc(dir, ['digest', '--json'])).stdout);
    assert.equal(list.total, 1);
    const rec = list.items[0];
    assert.equal(rec.conversation, 'group:500');
    assert.equal(rec.status, 'ok');
    assert.equal(rec.trigger, 'manual');
    assert.equal(rec.toolCalls.length, 4);
    assert.deepEqual(rec.tokens, { prompt: 50, completion: 5, total: 55 });
    assert.ok(rec.toolCalls.every((c) => typeof c.ms === 'number' && 'arguments' in c));
    // nothing new: no run, no request
    const again = await digestNow(dir, 'group:500');
    assert.equal(again.code, 0);
    assert.equal(JSON.parse(again.stdout).runs[0].idle, true);
    assert.equal(fake.requests.length, 3);
  } finally {
    await fake.close();
  }
});

test('[Q-DIGEST] a private chat\'s digest is refused writing COGNITION.md and PEOPLE.md, as the chat itself is; its own MEMORY.md is written', async () => {
  const fake = await startFakeOpenAI([
    { toolCalls: [
      { name: 'qq_memory', arguments: { action: 'upsert', path: 'COGNITION.md', name: '私聊梗', meaning: '不该公开' } },
      { name: 'qq_memory', arguments: { action: 'upsert', path: 'PEOPLE.md', name: '小明', qq: '101', meaning: '朋友' } },
      { name: 'qq_memory', arguments: { action: 'upsert', path: 'conversations/private-101/MEMORY.md', name: '喜欢猫', meaning: '养了两只' } },
    ] },
    { content: '完成' },
  ]);
  try {
    const dir = setup(fake);
    await logLines(dir, 'private:101', 3);
    const r = await digestNow(dir, 'private:101');
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const calls = JSON.parse(r.stdout).runs[0].toolCalls;
    assert.deepEqual(calls.map((c) => c.status), ['error', 'error', 'ok']);
    assert.match(calls[0].error, /COGNITION\.md/);
    assert.match(calls[1].error, /PEOPLE\.md/);
    const cog = JSON.parse((await zc(dir, ['tool', 'qq_memory', JSON.stringify({ action: 'read', path: 'COGNITION.md' })])).stdout);
    assert.doesNotMatch(cog.text, /私聊梗/);
    const ppl = JSON.parse((await zc(dir, ['tool', 'qq_memory', JSON.stringify({ action: 'read', path: 'PEOPLE.md' })])).stdout);
    assert.doesNotMatch(ppl.text, /小明/);
  } finally {
    await fake.close();
  }
});

test('[Q-DIGEST] a failed run is recorded and keeps its lines; a timed-out run is abandoned at digestTimeoutMs, recorded, its tool calls stay; the next run works', async () => {
  const fake = await startFakeOpenAI([
    { status: 500, error: 'boom' },
    { toolCalls: [{ name: 'qq_memory', arguments: { action: 'upsert', path: 'conversations/group-7/MEMORY.md', name: '先写的', meaning: '留下' } }] },
    { delayMs: 4000, content: 'too late' },
    { content: '好了' },
  ]);
  try {
    const dir = setup(fake, { digestTimeoutMs: 1500 });
    await logLines(dir, 'group:7', 5);
    let r = await digestNow(dir, 'group:7');
    assert.equal(r.code, 1);
    let out = JSON.parse(r.stdout).runs[0];
    assert.equal(out.error.code, 'provider_error');
    assert.equal(out.error.details.status, 'error');
    assert.equal(conv(dir, 'group:7').lines, 5);
    assert.equal(conv(dir, 'group:7').date, null);
    const t0 = Date.now();
    r = await digestNow(dir, 'group:7');
    const took = Date.now() - t0;
    assert.equal(r.code, 1);
    out = JSON.parse(r.stdout).runs[0];
    assert.equal(out.error.details.status, 'timeout');
    assert.match(out.error.message, /timed out/);
    assert.ok(took < 3500, `abandoned at the limit, not at the answer (${took} ms)`);
    assert.equal(conv(dir, 'group:7').lines, 5);
    const mem = JSON.parse((await zc(dir, ['tool', 'qq_memory', JSON.stringify({ action: 'read', path: 'conversations/group-7/MEMORY.md' })])).stdout);
    assert.match(mem.text, /先写的｜留下/);
    const list = JSON.parse((await zc(dir, ['digest', '--conversation', 'group:7', '--json'])).stdout);
    assert.deepEqual(list.items.map((d) => d.status), ['timeout', 'error']);
    assert.equal(list.items[0].toolCalls.length, 1);
    r = await digestNow(dir, 'group:7');
    assert.equal(r.code, 0, r.stdout);
    assert.equal(conv(dir, 'group:7').lines, 0);
  } finally {
    await fake.close();
  }
});

test('[Q-DIGEST] --now runs only the due conversations (at least digestMinLines, not digested today); memory: false runs nothing; a bad digest setting is reported naming the key', async () => {
  const fake = await startFakeOpenAI([{ content: '好' }]);
  try {
    const dir = setup(fake, { digestMinLines: 10 });
    await logLines(dir, 'group:1', 12);
    await logLines(dir, 'group:2', 9);
    let r = await zc(dir, ['digest', '--now', '--json']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.deepEqual(JSON.parse(r.stdout).runs.map((x) => x.conversation), ['group:1']);
    assert.equal(conv(dir, 'group:2').lines, 9);
    await logLines(dir, 'group:1', 12, 100);
    r = await zc(dir, ['digest', '--now', '--json']);
    assert.deepEqual(JSON.parse(r.stdout).runs, [], 'digested today already');
    assert.equal(conv(dir, 'group:1').lines, 12);
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ provider: { baseUrl: fake.baseUrl, model: 'fake' }, memory: false }));
    r = await digestNow(dir, 'group:2');
    assert.equal(r.code, 1);
    assert.match(JSON.parse(r.stdout).runs[0].error.message, /"memory": false/);
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ provider: { baseUrl: fake.baseUrl, model: 'fake' }, digestAtHour: 24 }));
    r = await zc(dir, ['doctor']);
    assert.equal(r.code, 2);
    assert.match(r.stdout, /CONFIG_INVALID[^]*'digestAtHour' must be an integer from 0 to 23/);
    assert.equal(fake.requests.length, 1);
  } finally {
    await fake.close();
  }
});

test('[Q-DIGEST] REST: POST /api/v1/conversations/:key/digest runs one, GET /api/v1/digests lists them; a bound caller only its own; an unknown field is refused', async () => {
  const fake = await startFakeOpenAI([{ content: '好' }]);
  try {
    const dir = setup(fake);
    await logLines(dir, 'group:3', 2);
    await logLines(dir, 'group:4', 2);
    await withServe(BIN, dir, env(), async (srv) => {
      let r = await request(srv, '/api/v1/conversations/group:3/digest', { method: 'POST', body: { colour: 1 } });
      assert.equal(r.status, 400);
      assert.match(r.json.error.message, /'colour': unknown/);
      r = await request(srv, '/api/v1/conversations/group:4/digest', { method: 'POST', body: {}, conv: 'group:3' });
      assert.equal(r.status, 403, r.text);
      r = await request(srv, '/api/v1/conversations/group:3/digest', { method: 'POST', body: {} });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.status, 'ok');
      assert.equal(r.json.lines, 2);
      assert.equal(r.json.after.linesSinceDigest, 0);
      r = await request(srv, '/api/v1/digests');
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.json.items.map((d) => [d.conversation, d.status]), [['group:3', 'ok']]);
      r = await request(srv, '/api/v1/digests', { conv: 'group:4' });
      assert.deepEqual(r.json.items, []);
    });
    assert.equal(fake.requests.length, 1);
  } finally {
    await fake.close();
  }
});

test('issue16_digest_collects_sticker: the digest agent is offered qq_save_sticker (seed 003: it writes STICKERS.md, collecting first); it collects the image of a digested line and the entry lands in STICKERS.md; an image only another conversation saw is refused', async () => {
  const { createHash } = await import('node:crypto');
  const gif = (tag) => Buffer.concat([Buffer.from('R0lGODlhAQABAIAAAP///wAAACwAAAAAAQABAAACAkQBADs=', 'base64'), Buffer.from(tag)]);
  const mine = gif('mine'), theirs = gif('theirs');
  const ref = (b) => `media/${createHash('sha256').update(b).digest('hex')}.gif`;
  const fake = await startFakeOpenAI([
    { toolCalls: [
      { name: 'qq_save_sticker', arguments: { media: ref(mine), name: '无语猫', meaning: '无语、懒得吐槽', scene: '对方说了离谱的话时' } },
      { name: 'qq_save_sticker', arguments: { media: ref(theirs), name: '别人的图' } },
    ] },
    { content: '收藏了一张。' },
  ]);
  try {
    const dir = setup(fake);
    const log = async (conv, id, data) => {
      const r = await zc(dir, ['transcript', 'log', '--conversation', conv], JSON.stringify({ messages: [
        { id, time: '2026-11-20T08:00:00Z', senderId: '101', senderName: '甲', text: '看这个', media: [{ type: 'image', data: data.toString('base64') }] }] }));
      assert.equal(r.code, 0, r.stderr);
    };
    await log('group:500', 'g1', mine);
    await log('group:600', 'o1', theirs);
    const r = await digestNow(dir, 'group:500');
    assert.equal(r.code, 0, r.stdout + r.stderr);
    // the digested line carries the image's path, and the tool is offered
    assert.ok(userText(fake.requests[0]).includes(`看这个 [图片: ${ref(mine)}]`), userText(fake.requests[0]));
    assert.ok(toolNames(fake.requests[0]).includes('qq_save_sticker'));
    const calls = JSON.parse(r.stdout).runs[0].toolCalls;
    assert.deepEqual(calls.map((c) => [c.name, c.status]), [['qq_save_sticker', 'ok'], ['qq_save_sticker', 'error']]);
    assert.match(calls[1].error, /not in the media cache/);
    const st = JSON.parse((await zc(dir, ['tool', 'qq_memory', JSON.stringify({ action: 'read', path: 'STICKERS.md' })])).stdout);
    assert.match(st.text, /无语猫/);
    assert.match(st.text, /stickers\/无语猫\.gif/);
    assert.doesNotMatch(st.text, /别人的图|media\//);
    assert.ok(existsSync(join(dir, 'stickers', '无语猫.gif')));
    assert.deepEqual(sql(dir, "SELECT DISTINCT actor FROM history WHERE operation = 'qq_save_sticker'"), [{ actor: 'digest' }]);
  } finally {
    await fake.close();
  }
});

test('issue16_memory_off_no_file_hints: with "memory": false the system prefix no longer sends the model to qq_memory / qq_transcript (tools it is not offered); with it on, it does', async () => {
  const fake = await startFakeOpenAI([]);
  try {
    const dir = setup(fake);
    let r = await zc(dir, ['--conversation', 'group:1', 'prefix']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /qq_memory search/);
    assert.match(r.stdout, /zcor_memory_write/);
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ provider: { baseUrl: fake.baseUrl, model: 'fake' }, memory: false }));
    r = await zc(dir, ['--conversation', 'group:1', 'prefix']);
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout, /qq_memory|qq_transcript|COGNITION\.md/);
    assert.match(r.stdout, /zcor_memory_write/, 'seed 000\'s memory tools stay');
  } finally {
    await fake.close();
  }
});

test('issue16_digest_import_keeps_new_lines: history imported after new lines (`zcor transcript import`) is not the digest\'s input; the new lines are what the model reads and what is marked done', async () => {
  const fake = await startFakeOpenAI([{ content: '摘要好了' }]);
  try {
    const old = mkTmp('zcor-digest-old-');
    const om = [1, 2, 3, 4, 5].map((i) => ({ id: `o${i}`, time: `2026-01-0${i}T08:00:00Z`, senderId: '101', senderName: '甲', text: `旧的第${i}句` }));
    assert.equal((await zc(old, ['transcript', 'log', '--conversation', 'group:1'], JSON.stringify({ messages: om }))).code, 0);
    const exp = mkTmp('zcor-digest-exp-');
    const r0 = await zc(old, ['transcript', 'export', '--conversation', 'group:1', '--out', exp]);
    assert.equal(r0.code, 0, r0.stderr);
    const ldir = join(exp, 'conversations', 'group-1', 'log');
    const { readdirSync } = await import('node:fs');
    const files = readdirSync(ldir).map((f) => join(ldir, f));
    const dir = setup(fake, { digestMinLines: 1 });
    const nm = [1, 2, 3].map((i) => ({ id: `n${i}`, time: `2026-11-20T08:0${i}:00Z`, senderId: '101', senderName: '甲', text: `新的第${i}句` }));
    assert.equal((await zc(dir, ['transcript', 'log', '--conversation', 'group:1'], JSON.stringify({ messages: nm }))).code, 0);
    const ri = await zc(dir, ['transcript', 'import', '--conversation', 'group:1', ...files]);
    assert.equal(ri.code, 0, ri.stderr);
    assert.equal(conv(dir, 'group:1').lines, 3, 'imported history is not counted as new');
    const rd = await zc(dir, ['digest', '--now', '--conversation', 'group:1', '--json']);
    assert.equal(rd.code, 0, rd.stderr);
    const input = fake.requests[0].body.messages[1].content;
    for (let i = 1; i <= 3; i++) assert.ok(input.includes(`新的第${i}句`), `new line ${i} in the input: ${input}`);
    assert.ok(!input.includes('旧的'), `no imported line in the input: ${input}`);
    assert.equal(conv(dir, 'group:1').lines, 0);
    assert.equal(sql(dir, "SELECT count(*) AS n FROM messages WHERE imported = 1")[0].n, 5);
  } finally { await fake.close(); }
});
