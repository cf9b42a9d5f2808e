// transcript.test.mjs — black-box tests of the message log (Q-LOG): a batch
// POSTed over real HTTP to `zcor serve` is logged and answered with the
// recall header of a memory written earlier; the bot's own message is not
// logged; the shapes the web page reads (GET conversations, GET messages);
// a caller bound by X-Zcor-Conversation cannot touch another conversation
// (403); the `zcor transcript` commands with their exit statuses; and the
// tool qq_transcript through the official MCP SDK client over stdio, where
// `zcor mcp --conversation private:…` never sees another conversation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { request, withServe as withServeOn } from '../net.mjs';
import { mkTmp } from '../tmpdir.mjs';

const BIN = process.env.ZCOR_BIN;
assert.ok(BIN, 'ZCOR_BIN must name the zcor binary');

function cleanEnv(extra = {}) {
  const e = { ...process.env, TZ: 'UTC', ...extra };
  delete e.ZCOR_DIR;
  delete e.ZCOR_TOKEN;
  return e;
}

const tmp = () => mkTmp('zcor-transcript-');

const withServe = (dir, fn) => withServeOn(BIN, dir, cleanEnv(), fn);
const req = request;

function ok(r) {
  assert.equal(r.status, 200, r.text);
  assert.ok(r.json && !r.json.error, r.text);
  return r.json;
}

function zcor(dir, args, input) {
  const r = spawnSync(BIN, ['--dir', dir, ...args], { env: cleanEnv(), encoding: 'utf8', input, timeout: 30000 });
  let json;
  try { json = JSON.parse(r.stdout); } catch { json = undefined; }
  return { status: r.status, json, stdout: r.stdout, stderr: r.stderr };
}

const CONV_KEYS = ['key', 'slug', 'createdAt', 'lastMessageAt', 'messages', 'linesSinceDigest',
  'lastDigestAt', 'lastDigestDate', 'title'];
const MSG_KEYS = ['id', 'time', 'senderId', 'senderName', 'text', 'mentions', 'replyTo', 'media'];

// Issue 14 (turn cost): a world whose turn follows logs with "recall": false —
// the turn recalls for the batch itself, so the log's header would be thrown away.
test('issue 14: "recall": false logs the batch without its recall header; a bad value is refused and logs nothing', async () => {
  const dir = tmp();
  await withServe(dir, async (srv) => {
    ok(await req(srv, '/api/v1/tools/zcor_memory_write', {
      method: 'POST', body: { title: 'kaguya是群主', content: 'kaguya是群主，每周六带大家打本', keywords: ['kaguya'] },
    }));
    const url = '/api/v1/conversations/group%3A100000001/messages';
    const msg = (id) => ({ id, senderId: '111', senderName: 'Alice', text: 'kaguya 这周六还打本吗' });
    const bad = await req(srv, url, { method: 'POST', body: { messages: [msg('r0')], recall: 'no' } });
    assert.equal(bad.status, 400, bad.text);
    assert.match(bad.json.error.message, /field 'recall': must be true or false/);
    const off = ok(await req(srv, url, { method: 'POST', body: { messages: [msg('r1')], recall: false } }));
    assert.equal(off.logged, 1);
    assert.equal(off.header, '');
    assert.deepEqual(off.items, []);
    const on = ok(await req(srv, url, { method: 'POST', body: { messages: [msg('r2')], recall: true } }));
    assert.ok(on.header.includes('kaguya是群主'), on.header);
    const dflt = ok(await req(srv, url, { method: 'POST', body: { messages: [msg('r3')] } }));
    assert.ok(dflt.header.includes('kaguya是群主'), dflt.header);
    const page = ok(await req(srv, url));
    assert.deepEqual(page.items.map((m) => m.id), ['r1', 'r2', 'r3'], 'the refused batch logged nothing');
  });
});

test('Q-LOG: a batch over HTTP is logged and answered with the recall header; the bot is not logged', async () => {
  const dir = tmp();
  await withServe(dir, async (srv) => {
    ok(await req(srv, '/api/v1/config', { method: 'PUT', body: { botId: '3000' } }));
    const mem = ok(await req(srv, '/api/v1/tools/zcor_memory_write', {
      method: 'POST', body: { title: 'kaguya是群主', content: 'kaguya是群主，每周六带大家打本', keywords: ['kaguya'] },
    }));
    const memId = mem.id ?? mem.node?.id;
    assert.ok(memId, JSON.stringify(mem));

    const logged = ok(await req(srv, '/api/v1/conversations/group%3A100000001/messages', {
      method: 'POST',
      body: { messages: [
        { id: 'm1', time: '2026-11-29T20:00:00+08:00', senderId: '111', senderName: 'Alice', text: 'kaguya 这周六还打本吗', mentions: ['222'] },
        { id: 'm2', time: '2026-11-29T20:00:05+08:00', senderId: '3000', senderName: 'bot', text: '我是机器人' },
        { id: 'm3', time: '2026-11-29T20:00:09+08:00', senderId: '222', text: '我也想知道', self: false },
      ] },
    }));
    assert.equal(logged.logged, 2);
    assert.deepEqual(logged.skipped, [{ messageId: 'm2', reason: 'self' }]);
    assert.ok(logged.header.includes(memId), logged.header);
    assert.ok(logged.header.includes('kaguya是群主'), logged.header);
    assert.ok(logged.items.some((it) => it.id === memId));

    // the page's list
    const list = ok(await req(srv, '/api/v1/conversations'));
    assert.equal(list.items.length, 1);
    assert.deepEqual(Object.keys(list.items[0]).sort(), [...CONV_KEYS].sort());
    assert.equal(list.items[0].key, 'group:100000001');
    assert.equal(list.items[0].slug, 'group-100000001');
    assert.equal(list.items[0].messages, 2);
    assert.equal(list.items[0].linesSinceDigest, 2);

    // the page's transcript request, empty parameters included
    const page = ok(await req(srv, '/api/v1/conversations/group%3A100000001/messages?from=&to=&keywords=&limit=&offset='));
    assert.equal(page.total, 2);
    assert.equal(page.nextOffset, null);
    for (const k of MSG_KEYS) assert.ok(k in page.items[0], `missing ${k}`);
    assert.deepEqual(page.items.map((m) => m.id), ['m1', 'm3']);
    assert.ok(!page.items.some((m) => m.senderId === '3000'));
    assert.deepEqual(page.items[0].mentions, ['222']);
    const found = ok(await req(srv, `/api/v1/conversations/group%3A100000001/messages?keywords=${encodeURIComponent('打本')}&limit=5`));
    assert.deepEqual(found.items.map((m) => m.id), ['m1']);
    const ranged = ok(await req(srv, `/api/v1/conversations/group%3A100000001/messages?from=${encodeURIComponent('2026-11-29T12:00:06Z')}`));
    assert.deepEqual(ranged.items.map((m) => m.id), ['m3']);

    // redelivery is idempotent
    const again = ok(await req(srv, '/api/v1/conversations/group%3A100000001/messages', {
      method: 'POST', body: { messages: [{ id: 'm1', senderId: '111', text: 'kaguya 这周六还打本吗' }] },
    }));
    assert.equal(again.logged, 0);
    assert.deepEqual(again.skipped, [{ messageId: 'm1', reason: 'duplicate' }]);

    // bad input names the field, changes nothing
    const bad = await req(srv, '/api/v1/conversations/group%3A100000001/messages', {
      method: 'POST', body: { messages: [{ id: 'm9', text: 'no sender' }] },
    });
    assert.equal(bad.status, 400, bad.text);
    assert.match(bad.json.error.message, /messages\[0\]\.senderId/);

    // a conversation-bound caller touches only its own key
    for (const [method, path, body] of [
      ['GET', '/api/v1/conversations/group%3A100000001/messages'],
      ['GET', '/api/v1/conversations/group%3A100000001'],
      ['POST', '/api/v1/conversations/group%3A100000001/messages', { messages: [{ id: 'x', senderId: '5', text: 'sneak' }] }],
      ['POST', '/api/v1/conversations/group%3A100000001/digest-done'],
    ]) {
      const r = await req(srv, path, { method, body, conv: 'private:5' });
      assert.equal(r.status, 403, `${method} ${path}: ${r.text}`);
      assert.equal(r.json.error.code, 'forbidden');
    }
    const own = ok(await req(srv, '/api/v1/conversations', { conv: 'private:5' }));
    assert.deepEqual(own.items, []);

    const done = ok(await req(srv, '/api/v1/conversations/group%3A100000001/digest-done', { method: 'POST' }));
    assert.equal(done.conversation.linesSinceDigest, 0);
    assert.match(done.conversation.lastDigestDate, /^\d{4}-\d{2}-\d{2}$/);
    const one = ok(await req(srv, '/api/v1/conversations/group%3A100000001'));
    assert.equal(one.conversation.linesSinceDigest, 0);
    assert.equal(one.conversation.messages, 2);
    const missing = await req(srv, '/api/v1/conversations/group%3A404');
    assert.equal(missing.status, 404, missing.text);
  });
});

// Q-QUERY: the query of a batch is its text *and* its speakers: the sender
// of a message and everyone it @-mentions reach the header (SPEC §4: the
// speaker's and @-mentioned people are always included) even when no text
// names them.
test('Q-QUERY: a batch\'s sender and @-mentioned people reach its recall header though the text never names them', async () => {
  const dir = tmp();
  await withServe(dir, async (srv) => {
    const upsert = async (body) => ok(await req(srv, '/api/v1/tools/qq_memory', { method: 'POST', body: { action: 'upsert', path: 'PEOPLE.md', ...body } }));
    await upsert({ name: 'kaguya', qq: '100000001', aliases: 'soyo', meaning: '群主，周六常组织打本' });
    await upsert({ name: '阿杰', qq: '100000003', meaning: '喜欢猫' });
    await upsert({ name: '小红', qq: '100000009', meaning: '不在这批消息里' });
    const people = ok(await req(srv, '/api/v1/views/read?path=PEOPLE.md')).text.split('\n');
    const lineOf = (qq) => people.findIndex((l) => l.includes(`QQ ${qq}`)) + 1;

    // the same text without speakers recalls nobody: what follows is the speakers' doing
    const bare = ok(await req(srv, '/api/v1/recall', { method: 'POST', body: { conversation: 'group:1', messages: ['今天天气不错', '是啊'] } }));
    assert.doesNotMatch(bare.header, /\[人物 /, bare.header);

    const logged = ok(await req(srv, '/api/v1/conversations/group%3A1/messages', {
      method: 'POST',
      body: { messages: [
        // the sender, under a display name that is not his PEOPLE.md name
        { id: 'q1', time: '2026-11-29T20:00:00+08:00', senderId: '100000001', senderName: '某群友', text: '今天天气不错' },
        // a message that @-mentions 阿杰 without writing his name
        { id: 'q2', time: '2026-11-29T20:00:05+08:00', senderId: '555', senderName: '路人', text: '是啊', mentions: ['100000003'] },
      ] },
    }));
    assert.equal(logged.logged, 2);
    for (const qq of ['100000001', '100000003']) {
      assert.ok(lineOf(qq) > 0);
      assert.ok(logged.header.includes(`[人物 ${qq} · PEOPLE.md#L${lineOf(qq)}]`), `${qq} in ${logged.header}`);
      assert.ok(logged.items.some((it) => it.kind === 'person' && it.personId === qq), JSON.stringify(logged.items));
    }
    assert.match(logged.header, /kaguya（别名：soyo）｜群主，周六常组织打本/);
    assert.doesNotMatch(logged.header, /100000009|小红/, 'nobody else');
  });
});

test('Q-LOG: zcor transcript log, list, read, search, export and import', () => {
  const dir = tmp();
  const batch = JSON.stringify({ messages: [
    { id: '1', time: '2026-11-28T10:00:00Z', senderId: '11', senderName: '甲', text: '周六打本吗' },
    { id: '2', time: '2026-11-29T10:00:00Z', senderId: '12', text: '好' },
  ] });
  let r = zcor(dir, ['transcript', 'log', '--conversation', 'group:7'], batch);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.equal(r.json.logged, 2);
  r = zcor(dir, ['transcript', 'list']);
  assert.equal(r.status, 0);
  assert.deepEqual(r.json.items.map((c) => c.key), ['group:7']);
  r = zcor(dir, ['transcript', 'read', '--conversation', 'group:7', '--from', '2026-11-29T00:00:00Z']);
  assert.equal(r.status, 0);
  assert.deepEqual(r.json.items.map((m) => m.id), ['2']);
  r = zcor(dir, ['transcript', 'search', '--conversation', 'group:7', '好']);
  assert.equal(r.status, 0);
  assert.deepEqual(r.json.items.map((m) => m.id), ['2']);

  const out = tmp();
  r = zcor(dir, ['transcript', 'export', '--out', out]);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.equal(r.json.files, 2);
  const file = join(out, 'conversations', 'group-7', 'log', '2026-11-28.jsonl');
  assert.ok(existsSync(file));
  const line = JSON.parse(readFileSync(file, 'utf8').trim());
  assert.deepEqual(Object.keys(line).sort(), [...MSG_KEYS].sort());
  assert.equal(line.text, '周六打本吗');

  const dir2 = tmp();
  const bad = join(out, 'bad.jsonl');
  writeFileSync(bad, `${readFileSync(file, 'utf8')}not json\n`);
  r = zcor(dir2, ['transcript', 'import', '--conversation', 'group:7', bad]);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.equal(r.json.logged, 1);
  assert.deepEqual(r.json.errors.map((e) => e.line), [2]);
  r = zcor(dir2, ['transcript', 'read', '--conversation', 'group:7']);
  assert.equal(r.json.items[0].text, '周六打本吗');

  // a tool error exits 1, bad usage 2
  r = zcor(dir, ['transcript', 'read', '--conversation', 'group:404']);
  assert.equal(r.status, 1);
  assert.equal(r.json.error.code, 'not_found');
  r = zcor(dir, ['transcript', 'log', '--conversation', 'group:7'], '{"messages":[{"id":"3"}]}');
  assert.equal(r.status, 1);
  assert.match(r.json.error.message, /senderId/);
  assert.equal(zcor(dir, ['transcript', 'search', '--conversation', 'group:7']).status, 2);
  assert.equal(zcor(dir, ['transcript', 'frobnicate']).status, 2);
  assert.equal(zcor(dir, ['transcript', 'read', '--conversation', 'room:1']).status, 2);
  r = zcor(dir, ['--conversation', 'private:5', 'transcript', 'read', '--conversation', 'group:7']);
  assert.equal(r.status, 1);
  assert.equal(r.json.error.code, 'forbidden');
});

test('Q-SCOPE: qq_transcript over MCP stdio inside a private chat sees only that chat', async () => {
  const dir = tmp();
  let r = zcor(dir, ['transcript', 'log', '--conversation', 'group:1'],
    JSON.stringify({ messages: [{ id: 'g1', senderId: '1', text: '群里的秘密：周六打本' }] }));
  assert.equal(r.status, 0, r.stdout + r.stderr);
  r = zcor(dir, ['transcript', 'log', '--conversation', 'private:5'],
    JSON.stringify({ messages: [{ id: 'p1', senderId: '5', text: '私聊：周六打本吗' }] }));
  assert.equal(r.status, 0, r.stdout + r.stderr);

  const transport = new StdioClientTransport({
    command: BIN, args: ['--dir', dir, '--conversation', 'private:5', 'mcp'], env: cleanEnv(), stderr: 'pipe',
  });
  const client = new Client({ name: 'zcor-e2e', version: '1.0.0' });
  await client.connect(transport);
  try {
    const names = (await client.listTools()).tools.map((t) => t.name);
    assert.ok(names.includes('qq_transcript'));
    let res = await client.callTool({ name: 'qq_transcript', arguments: { action: 'list' } });
    assert.equal(res.isError, false, JSON.stringify(res.content));
    assert.deepEqual(res.structuredContent.items.map((c) => c.key), ['private:5']);
    res = await client.callTool({ name: 'qq_transcript', arguments: { action: 'search', keywords: ['打本'] } });
    assert.equal(res.isError, false, JSON.stringify(res.content));
    assert.deepEqual(res.structuredContent.items.map((m) => m.id), ['p1']);
    for (const action of ['read', 'search']) {
      res = await client.callTool({ name: 'qq_transcript', arguments: { action, conversation: 'group:1', keywords: ['打本'] } });
      assert.equal(res.isError, true, `${action}: ${JSON.stringify(res.structuredContent)}`);
      assert.equal(res.structuredContent.error.code, 'forbidden');
      assert.ok(!JSON.stringify(res.structuredContent).includes('群里的秘密'));
    }
  } finally {
    await client.close();
  }
  // the host plane sees both
  r = zcor(dir, ['tool', 'qq_transcript', '{"action":"search","keywords":["打本"]}']);
  assert.equal(r.status, 0);
  assert.equal(r.json.total, 2);
});
