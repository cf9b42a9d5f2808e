// privacy.test.mjs — Q-SCOPE end to end: a model inside a private
// conversation (the official MCP SDK client over `zcor mcp --conversation
// private:200`) tries every write path into global memory and every read
// path into another conversation. Each write must be refused and change
// nothing; no read may return another conversation's canary.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { request, withServe as withServeOn } from '../net.mjs';
import { mkTmp } from '../tmpdir.mjs';

const BIN = process.env.ZCOR_BIN;
assert.ok(BIN, 'ZCOR_BIN must name the zcor binary');

function env() {
  const e = { ...process.env };
  delete e.ZCOR_DIR;
  return e;
}

function cli(dir, args, input, conv) {
  const r = spawnSync(BIN, ['--dir', dir, ...(conv ? ['--conversation', conv] : []), ...args],
    { env: env(), encoding: 'utf8', input, timeout: 60000 });
  assert.equal(r.status, 0, `zcor ${args.join(' ')}: ${r.stdout}${r.stderr}`);
  return JSON.parse(r.stdout);
}

async function connect(dir, conv) {
  const transport = new StdioClientTransport({
    command: BIN, args: ['--dir', dir, '--conversation', conv, 'mcp'], env: env(), stderr: 'pipe',
  });
  const client = new Client({ name: 'zcor-privacy', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

async function call(client, name, args) {
  const r = await client.callTool({ name, arguments: args });
  return { isError: !!r.isError, text: r.content.map((c) => c.text ?? '').join('\n'), data: r.structuredContent };
}

// A store with global memory and two other conversations holding canaries.
function setup() {
  const dir = mkTmp('zcor-privacy-');
  const globalNode = cli(dir, ['tool', 'zcor_memory_write', JSON.stringify({ title: '全局记忆', content: '大家都知道的事' })]).node.id;
  cli(dir, ['tool', 'qq_memory', JSON.stringify({ action: 'upsert', path: 'PEOPLE.md', name: 'kaguya', qq: '100000001', meaning: '群主' })]);
  cli(dir, ['tool', 'qq_memory', JSON.stringify({ action: 'upsert', path: 'COGNITION.md', name: '蚌埠住了', meaning: '忍不住笑了', type: '谐音' })]);
  cli(dir, ['tool', 'qq_memory', JSON.stringify({ action: 'write', path: 'INDEX.md', content: '索引' })]);
  mkdirSync(join(dir, 'stickers'), { recursive: true });
  writeFileSync(join(dir, 'stickers', '无语.gif'), Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00;', 'latin1'));
  cli(dir, ['tool', 'qq_memory', JSON.stringify({ action: 'upsert', path: 'STICKERS.md', name: '无语', meaning: '懒得吐槽', image: 'stickers/无语.gif' })]);
  // another private chat and a group, each with a canary in every place
  const other = cli(dir, ['tool', 'zcor_memory_write', JSON.stringify({ title: '私密 CANARY300', content: 'CANARY300 只在私聊 300 说过' })], undefined, 'private:300').node.id;
  cli(dir, ['tool', 'qq_memory', JSON.stringify({ action: 'upsert', path: 'conversations/private-300/MEMORY.md', name: 'CANARY300 约定', meaning: 'CANARY300' })], undefined, 'private:300');
  cli(dir, ['tool', 'qq_memory', JSON.stringify({ action: 'upsert', path: 'conversations/group-1/MEMORY.md', name: 'CANARYG1 群约定', meaning: 'CANARYG1' })], undefined, 'group:1');
  cli(dir, ['transcript', 'log', '--conversation', 'private:300'], JSON.stringify({ messages: [{ id: 'p1', time: '2026-11-29T10:00:00Z', senderId: '300', senderName: '三百', text: 'CANARY300 悄悄话' }] }));
  cli(dir, ['transcript', 'log', '--conversation', 'group:1'], JSON.stringify({ messages: [{ id: 'g1', time: '2026-11-29T10:00:00Z', senderId: '100000001', senderName: 'kaguya', text: 'CANARYG1 群聊' }] }));
  // real inputs for the writes that need a file, so that only the gate can
  // refuse them: an inbound image in the media cache, a state backup
  const gif = Buffer.from('GIF89a\x02\x00\x02\x00\x00\x00\x00;', 'latin1');
  const media = `media/${createHash('sha256').update(gif).digest('hex')}.gif`;
  // cached the way images arrive: in a message (of group:1, which may see it)
  cli(dir, ['transcript', 'log', '--conversation', 'group:1'], JSON.stringify({ messages: [{ id: 'g2', time: '2026-11-29T10:01:00Z', senderId: '100000002', text: '图', media: [{ type: 'image', data: gif.toString('base64') }] }] }));
  const backup = cli(dir, ['backup']).file;
  return { dir, globalNode, other, media, backup };
}

function exportAll(dir) {
  const out = join(mkTmp('zcor-privacy-x-'), 'x');
  cli(dir, ['export', 'qq-memory', out]);
  // everything but what private:200 may write into its own scope
  const state = cli(dir, ['tool', 'zcor_memory_query', '{"limit":100}']).items.filter((n) => n.scope !== 'private:200');
  const people = cli(dir, ['tool', 'zcor_relationship_query', '{"limit":100}']);
  const syn = spawnSync(BIN, ['--dir', dir, 'tool', 'zcor_synonyms_add', '{"terms":["探针甲","探针乙"]}'], { env: env(), encoding: 'utf8' });
  assert.equal(syn.status, 0);
  return JSON.stringify({ out: spawnSync('cat', ['-A', ...['PEOPLE.md', 'COGNITION.md', 'STICKERS.md', 'INDEX.md'].map((f) => join(out, f))], { encoding: 'utf8' }).stdout, state, people });
}

test('Q-SCOPE: a private conversation cannot write global memory by any path', async () => {
  const { dir, globalNode, media, backup } = setup();
  const before = exportAll(dir);
  const c = await connect(dir, 'private:200');
  try {
    // a record of its own, for the link attempts below
    const own0 = (await call(c, 'zcor_memory_write', { title: '私聊先记的', content: '只属于 200' })).data.node.id;
    const refused = [];
    const tryWrite = async (name, args) => {
      const r = await call(c, name, args);
      if (!r.isError) refused.push(`${name} ${JSON.stringify(args)} was allowed: ${r.text}`);
      return r;
    };
    for (const path of ['PEOPLE.md', 'COGNITION.md', 'STICKERS.md', 'INDEX.md']) {
      const r = await tryWrite('qq_memory', { action: 'upsert', path, name: '私聊学的', meaning: '不许进全局', qq: '123456' });
      if (path !== 'INDEX.md') assert.match(r.text, /conversations\/private-200\/MEMORY\.md/);
      await tryWrite('qq_memory', { action: 'write', path, content: '## 人物\n- 私聊学的｜不许进全局\n', force: true });
      await tryWrite('qq_memory', { action: 'append', path, content: '- 私聊学的｜不许进全局\n' });
      await tryWrite('qq_memory', { action: 'remove', path, name: 'kaguya' });
    }
    await tryWrite('qq_memory', { action: 'upsert', path: 'conversations/group-1/MEMORY.md', name: 'x', meaning: 'y' });
    await tryWrite('qq_memory', { action: 'remove', path: 'conversations/private-300/MEMORY.md', name: 'CANARY300 约定' });
    await tryWrite('qq_save_sticker', { media, name: '偷偷收藏' });
    await tryWrite('qq_rename_sticker', { from: '无语', to: '私聊改名' });
    await tryWrite('zcor_memory_write', { id: globalNode, title: '改全局', content: '不许' });
    await tryWrite('zcor_memory_delete', { id: globalNode });
    await tryWrite('zcor_memory_important', { id: globalNode, important: true });
    await tryWrite('zcor_memory_merge', { ids: [globalNode], title: '合并全局', content: '不许', reason: '私聊' });
    await tryWrite('zcor_memory_merge', { ids: [globalNode, own0], title: '合并全局', content: '不许', reason: '私聊' });
    await tryWrite('zcor_memory_supersede', { ids: [globalNode], replacementId: own0, reason: '私聊' });
    // links to a global record from a private one: a child under it, or
    // one superseded by it, would keep every other conversation from
    // deleting it, and their refusal would have to speak of this one
    let r = await tryWrite('zcor_memory_write', { title: '挂在全局下', content: '不许', parentId: globalNode });
    assert.match(r.text, /parentId/);
    await tryWrite('zcor_memory_write', { id: own0, title: '挂在全局下', content: '不许', parentId: globalNode });
    await tryWrite('zcor_memory_supersede', { ids: [own0], replacementId: globalNode, reason: '私聊' });
    await tryWrite('zcor_relationship_write', { personId: '100000001', name: 'kaguya', relationship: '私聊里说的', affinity: -50, reason: '不许' });
    await tryWrite('zcor_relationship_write', { personId: '100000001', name: 'kaguya', relationship: '群主', affinity: 0, reason: '链接', memoryNodeId: own0 });
    await tryWrite('zcor_relationship_delete', { personId: '100000001' });
    await tryWrite('zcor_synonyms_add', { terms: ['私聊暗号', '全局词'] });
    r = await tryWrite('zcor_memory_restore', { backupFile: backup });
    assert.doesNotMatch(r.text, /not_found|no such|does not exist/i, 'the backup is real: only the gate refuses');
    assert.deepEqual(refused, []);
    // its own record is unlinked as before
    const mine0 = await call(c, 'zcor_memory_read', { id: own0 });
    assert.equal(mine0.data.node.parentId, null);
    assert.equal(mine0.data.node.supersededBy, null);
    // what a private conversation may write stays in its own scope
    const own = await call(c, 'zcor_memory_write', { title: '私聊的事', content: '只属于 200' });
    assert.equal(own.isError, false, own.text);
    assert.equal(own.data.node.scope, 'private:200');
    const mine = await call(c, 'qq_memory', { action: 'upsert', path: 'conversations/private-200/MEMORY.md', name: '私聊约定', meaning: '只属于 200' });
    assert.equal(mine.isError, false, mine.text);
  } finally {
    await c.close();
  }
  // global memory is exactly as it was (the probe synonym group is the host's own)
  const after = exportAll(dir);
  assert.equal(after.replace(/探针/g, ''), before.replace(/探针/g, ''));
  // the inputs were good: outside a private chat the same calls go through
  cli(dir, ['tool', 'qq_save_sticker', JSON.stringify({ media, name: '群里收藏' })], undefined, 'group:1');
  cli(dir, ['tool', 'zcor_memory_restore', JSON.stringify({ backupFile: backup })]);
});

test('Q-SCOPE: a private conversation reads nothing of another conversation', async () => {
  const { dir, other } = setup();
  const c = await connect(dir, 'private:200');
  const leaks = [];
  const look = async (name, args) => {
    const r = await call(c, name, args);
    if (/CANARY300|CANARYG1/.test(r.text + JSON.stringify(r.data ?? {}))) leaks.push(`${name} ${JSON.stringify(args)}: ${r.text.slice(0, 200)}`);
    return r;
  };
  try {
    await look('zcor_memory_read', { id: other });
    await look('zcor_memory_query', { keywords: ['CANARY300'] });
    await look('zcor_memory_query', {});
    await look('zcor_memory_children', {});
    await look('zcor_memory_trace', { id: other });
    // history: only this conversation's own records (its own arguments
    // may name the probe word; another conversation's records never show)
    for (const args of [{ keywords: ['CANARY300'] }, {}, { keywords: ['private:300'] }]) {
      const h = await call(c, 'zcor_memory_history', args);
      for (const it of h.data.items) {
        if (it.conversation !== 'private:200') leaks.push(`history shows ${it.conversation}: ${JSON.stringify(it).slice(0, 200)}`);
      }
    }
    await look('zcor_memory_search', { keywords: ['CANARY300'] });
    for (const path of ['conversations/private-300/MEMORY.md', 'conversations/group-1/MEMORY.md', 'PEOPLE.md', 'COGNITION.md', 'INDEX.md', 'STICKERS.md']) {
      await look('qq_memory', { action: 'read', path });
    }
    const list = await look('qq_memory', { action: 'list' });
    assert.doesNotMatch(list.text, /private-300|group-1/);
    await look('qq_memory', { action: 'search', query: 'CANARY300' });
    await look('qq_memory', { action: 'search', query: 'CANARYG1' });
    const tl = await look('qq_transcript', { action: 'list' });
    assert.doesNotMatch(tl.text, /private:300|group:1/);
    for (const conversation of ['private:300', 'group:1']) {
      const r = await look('qq_transcript', { action: 'read', conversation });
      assert.equal(r.isError, true);
      await look('qq_transcript', { action: 'search', conversation, keywords: ['CANARY'] });
    }
    await look('qq_transcript', { action: 'search', keywords: ['CANARY'] });
    const resources = await c.listResources();
    assert.ok(!JSON.stringify(resources).includes(other), 'another conversation\'s node is not a resource');
    await assert.rejects(c.readResource({ uri: `zcor://node/${other}` }));
    const prompt = await c.getPrompt({ name: 'system-prefix', arguments: {} });
    assert.doesNotMatch(JSON.stringify(prompt), /CANARY/);
  } finally {
    await c.close();
  }
  assert.deepEqual(leaks, []);
});

test('Q-SCOPE: no refusal names another conversation\'s record, even where older data links across scopes', async () => {
  const { dir, globalNode, other, backup } = setup();
  // a state copy from before links were kept within one scope: private:300's
  // record under a global one (restore takes the operator's copy as it is)
  const state = JSON.parse(readFileSync(join(dir, backup), 'utf8'));
  state.nodes.find((n) => n.id === other).parentId = globalNode;
  const old = 'backups/memory-state-20200101T000000000Z.json';
  writeFileSync(join(dir, old), JSON.stringify(state));
  cli(dir, ['tool', 'zcor_memory_restore', JSON.stringify({ backupFile: old })]);
  const c = await connect(dir, 'group:1');
  try {
    const del = await call(c, 'zcor_memory_delete', { id: globalNode });
    assert.equal(del.isError, true, 'the global record is still held by its child');
    assert.ok(!del.text.includes(other), `the refusal names ${other}: ${del.text}`);
    assert.doesNotMatch(del.text, /CANARY300|private:300/);
    const kids = await call(c, 'zcor_memory_children', { parentId: globalNode });
    assert.deepEqual(kids.data.items, []);
    const trace = await call(c, 'zcor_memory_trace', { id: globalNode });
    assert.ok(!JSON.stringify(trace.data).includes(other));
    const hist = await call(c, 'zcor_memory_history', {});
    assert.ok(!JSON.stringify(hist.data).includes(other), 'nor does its history');
  } finally {
    await c.close();
  }
  // the operator sees both ends, and the doctor names the link
  const host = spawnSync(BIN, ['--dir', dir, 'tool', 'zcor_memory_delete', JSON.stringify({ id: globalNode })], { env: env(), encoding: 'utf8' });
  assert.equal(host.status, 1);
  assert.ok(host.stdout.includes(other), host.stdout);
  const doc = spawnSync(BIN, ['--dir', dir, 'doctor', '--json'], { env: env(), encoding: 'utf8' });
  assert.equal(doc.status, 2, doc.stdout);
  const link = JSON.parse(doc.stdout).findings.find((f) => f.code === 'SCOPE_LINK');
  assert.ok(link && link.message.includes(other) && link.message.includes(globalNode), doc.stdout);
});

// ---- the same over REST: X-Zcor-Conversation --------------------------

const withServe = (dir, fn) => withServeOn(BIN, dir, env(), fn);
const req = (srv, method, path, body, conv) => request(srv, path, { method, body, conv });

test('Q-SCOPE over REST: a host bound to private:200 writes no global memory and reads no other conversation', async () => {
  const { dir, globalNode, media } = setup();
  const before = exportAll(dir);
  const conv = 'private:200';
  await withServe(dir, async (srv) => {
    const writes = [];
    for (const path of ['PEOPLE.md', 'COGNITION.md', 'STICKERS.md', 'INDEX.md']) {
      writes.push(['POST', '/api/v1/tools/qq_memory', { action: 'upsert', path, name: '私聊学的', meaning: '不许进全局', qq: '123456' }]);
      writes.push(['POST', '/api/v1/tools/qq_memory', { action: 'write', path, content: '## 人物\n- 私聊学的｜不许进全局\n', force: true }]);
      writes.push(['POST', '/api/v1/tools/qq_memory', { action: 'append', path, content: '- 私聊学的｜不许进全局\n' }]);
      writes.push(['POST', '/api/v1/tools/qq_memory', { action: 'remove', path, name: 'kaguya' }]);
    }
    writes.push(
      ['POST', '/api/v1/tools/qq_memory', { action: 'upsert', path: 'conversations/group-1/MEMORY.md', name: 'x', meaning: 'y' }],
      ['POST', '/api/v1/tools/qq_memory', { action: 'remove', path: 'conversations/private-300/MEMORY.md', name: 'CANARY300 约定' }],
      ['POST', '/api/v1/tools/qq_save_sticker', { media, name: '偷偷收藏' }],
      ['POST', '/api/v1/tools/qq_rename_sticker', { from: '无语', to: '私聊改名' }],
      ['POST', '/api/v1/nodes', { title: '挂在全局下', content: '不许', parentId: globalNode }],
      ['PUT', `/api/v1/nodes/${globalNode}`, { title: '改全局', content: '不许' }],
      ['DELETE', `/api/v1/nodes/${globalNode}`],
      ['POST', '/api/v1/merge', { ids: [globalNode], title: '合并', content: '不许', reason: 'r' }],
      ['PUT', '/api/v1/people/100000001', { name: 'kaguya', relationship: '私聊里说的', affinity: -50, reason: '不许' }],
      ['POST', '/api/v1/synonyms', { terms: ['私聊暗号', '全局词'] }],
    );
    const allowed = [];
    for (const [method, path, body] of writes) {
      const r = await req(srv, method, path, body, conv);
      if (r.status < 400) allowed.push(`${method} ${path} ${JSON.stringify(body)}: ${r.status} ${r.text.slice(0, 200)}`);
      else assert.match(r.text, /"error"/);
    }
    assert.deepEqual(allowed, []);
    // its own MEMORY.md it may write
    const mine = await req(srv, 'POST', '/api/v1/tools/qq_memory', { action: 'upsert', path: 'conversations/private-200/MEMORY.md', name: '私聊约定', meaning: '只属于 200' }, conv);
    assert.equal(mine.status, 200, mine.text);
    // reads: nothing of private:300 or group:1
    const leaks = [];
    for (const [method, path, body] of [
      ['GET', '/api/v1/views/read?path=conversations/private-300/MEMORY.md'],
      ['GET', '/api/v1/views/read?path=conversations/group-1/MEMORY.md'],
      ['GET', '/api/v1/views'],
      ['GET', '/api/v1/views?conversation=private:300'],
      ['POST', '/api/v1/tools/qq_memory', { action: 'search', query: 'CANARY300' }],
      ['POST', '/api/v1/tools/qq_memory', { action: 'search', query: 'CANARYG1' }],
      ['POST', '/api/v1/tools/qq_transcript', { action: 'read', conversation: 'private:300' }],
      ['POST', '/api/v1/tools/qq_transcript', { action: 'search', keywords: ['CANARY'] }],
      ['GET', '/api/v1/conversations/group%3A1/messages'],
      ['GET', '/api/v1/conversations'],
      ['GET', '/api/v1/nodes?keywords=CANARY300'],
    ]) {
      const r = await req(srv, method, path, body, conv);
      // content never; another conversation's name only where the request gave it
      const asked = path + JSON.stringify(body ?? {});
      const names = ['private-300', 'group-1', 'private:300', 'group:1'].filter((n) => !asked.includes(n));
      if (/CANARY300|CANARYG1/.test(r.text) || names.some((n) => r.text.includes(n))) leaks.push(`${method} ${path}: ${r.text.slice(0, 200)}`);
    }
    assert.deepEqual(leaks, []);
  });
  const after = exportAll(dir);
  assert.equal(after.replace(/探针/g, ''), before.replace(/探针/g, ''));
});
