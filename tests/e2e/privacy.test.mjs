// privacy.test.mjs — Q-SCOPE end to end: a model inside a private
// conversation (the official MCP SDK client over `zcor mcp --conversation
// private:200`) tries every write path into global memory and every read
// path into another conversation. Each write must be refused and change
// nothing; no read may return another conversation's canary.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

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
  return { dir, globalNode, other };
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
  const { dir, globalNode } = setup();
  const before = exportAll(dir);
  const c = await connect(dir, 'private:200');
  try {
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
    await tryWrite('qq_save_sticker', { media: 'media/' + 'a'.repeat(64) + '.gif', name: '偷偷收藏' });
    await tryWrite('qq_rename_sticker', { from: '无语', to: '私聊改名' });
    await tryWrite('zcor_memory_write', { id: globalNode, title: '改全局', content: '不许' });
    await tryWrite('zcor_memory_delete', { id: globalNode });
    await tryWrite('zcor_memory_important', { id: globalNode, important: true });
    await tryWrite('zcor_relationship_write', { personId: '100000001', name: 'kaguya', relationship: '私聊里说的', affinity: -50, reason: '不许' });
    await tryWrite('zcor_relationship_delete', { personId: '100000001' });
    await tryWrite('zcor_synonyms_add', { terms: ['私聊暗号', '全局词'] });
    await tryWrite('zcor_memory_restore', { backupFile: 'memory-state-x.json' });
    assert.deepEqual(refused, []);
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
