// mcp_stdio.test.mjs — black-box tests of `zcor mcp` (SPEC §8): the MCP
// server over stdio, spoken to by the ecosystem's own clients — the official
// TypeScript SDK (Client + StdioClientTransport) and the MCP Inspector CLI —
// plus raw newline-delimited JSON-RPC for what a well-behaved client never
// sends. Only the binary in $ZCOR_BIN is used; every test gets its own
// temporary memory directory. The npm packages come from tests/node_modules
// (scripts/deps installs them); nothing here needs the network.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';

import { mkTmp } from '../tmpdir.mjs';

const BIN = process.env.ZCOR_BIN;
assert.ok(BIN, 'ZCOR_BIN must name the zcor binary');
const TESTS = dirname(dirname(fileURLToPath(import.meta.url)));

const SEED_000_TOOLS = [
  'zcor_memory_write', 'zcor_memory_read', 'zcor_memory_delete', 'zcor_memory_children',
  'zcor_memory_trace', 'zcor_memory_important', 'zcor_memory_query', 'zcor_memory_merge',
  'zcor_memory_supersede', 'zcor_memory_history', 'zcor_memory_backup', 'zcor_memory_restore',
  'zcor_memory_search', 'zcor_relationship_read', 'zcor_relationship_query',
  'zcor_relationship_write', 'zcor_relationship_delete', 'zcor_synonyms_add',
];
const RELATIONSHIP_TOOLS = SEED_000_TOOLS.filter((n) => n.startsWith('zcor_relationship_'));
const CJK = /[\u4e00-\u9fff]/;

function cleanEnv() {
  const env = { ...process.env };
  delete env.ZCOR_DIR;
  return env;
}

function tmp() {
  return mkTmp('zcor-mcp-');
}

function zcorArgs(dir, conv) {
  return ['--dir', dir, ...(conv ? ['--conversation', conv] : []), 'mcp'];
}

// An SDK client connected to a fresh `zcor mcp` process.
async function connect(dir, conv) {
  const transport = new StdioClientTransport({
    command: BIN, args: zcorArgs(dir, conv), env: cleanEnv(), stderr: 'pipe',
  });
  const client = new Client({ name: 'zcor-e2e', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

// Runs fn with a connected client and always closes it.
async function withClient(dir, conv, fn) {
  const client = await connect(dir, conv);
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}

// A tool call that must succeed; returns structuredContent after checking
// that the text content carries the same JSON.
async function call(client, name, args = {}) {
  const r = await client.callTool({ name, arguments: args });
  assert.equal(r.isError, false, `${name}: ${JSON.stringify(r.content)}`);
  assert.equal(r.content.length, 1);
  assert.equal(r.content[0].type, 'text');
  assert.deepEqual(JSON.parse(r.content[0].text), r.structuredContent);
  return r.structuredContent;
}

// A tool call that must fail as a tool error (isError); returns the error object.
async function callError(client, name, args, code) {
  const r = await client.callTool({ name, arguments: args });
  assert.equal(r.isError, true, `${name} should fail: ${JSON.stringify(r.structuredContent)}`);
  assert.equal(typeof r.structuredContent.error, 'object');
  assert.equal(r.content[0].type, 'text');
  assert.equal(r.content[0].text, r.structuredContent.error.message);
  if (code) assert.equal(r.structuredContent.error.code, code, r.structuredContent.error.message);
  return r.structuredContent.error;
}

async function rejectsWith(promise, code) {
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof McpError, `expected an McpError, got ${e}`);
    assert.equal(e.code, code, e.message);
    return true;
  });
}

// ---- the official SDK ---------------------------------------------------

test('initialize: server info, instructions, capabilities', async () => {
  await withClient(tmp(), null, async (client) => {
    const info = client.getServerVersion();
    assert.equal(info.name, 'zcor');
    assert.equal(info.version, '0.1.0');
    const caps = client.getServerCapabilities();
    assert.ok(caps.tools && caps.prompts && caps.resources, JSON.stringify(caps));
    const instr = client.getInstructions();
    assert.match(instr, CJK);
    assert.match(instr, /zcor_memory_write/);
    assert.match(instr, /long-term memory/);
    assert.deepEqual(await client.ping(), {});
  });
});

test('tools/list offers every seed-000 tool with a schema and a Chinese description, in a fixed order', async () => {
  await withClient(tmp(), null, async (client) => {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    for (const n of SEED_000_TOOLS) assert.ok(names.includes(n), `missing ${n}`);
    for (const t of tools) {
      assert.equal(t.inputSchema.type, 'object', t.name);
      assert.equal(t.inputSchema.$schema, 'https://json-schema.org/draft/2020-12/schema');
      assert.match(t.description, CJK, t.name);
      assert.equal(typeof t.title, 'string');
    }
    const again = await client.listTools();
    assert.deepEqual(again.tools, tools);
  });
});

test('tools/call: every family through the SDK', async () => {
  const dir = tmp();
  await withClient(dir, null, async (client) => {
    // memory: write -> read -> query
    const w = await call(client, 'zcor_memory_write', { title: '北大', content: '在海淀', keywords: ['学校'] });
    assert.equal(w.node.title, '北大');
    const id = w.node.id;
    const r = await call(client, 'zcor_memory_read', { id });
    assert.equal(r.node.content, '在海淀');
    const q = await call(client, 'zcor_memory_query', { keywords: ['海淀'] });
    assert.equal(q.total, 1);
    assert.equal(q.items[0].id, id);
    const child = await call(client, 'zcor_memory_write', { title: '未名湖', content: '湖', parentId: id });
    const tr = await call(client, 'zcor_memory_trace', { id: child.node.id });
    assert.ok(JSON.stringify(tr).includes(id));

    // relationships
    await call(client, 'zcor_relationship_write',
      { personId: '10001', name: '小明', relationship: '朋友', affinity: 10, reason: '一起吃饭' });
    const p = await call(client, 'zcor_relationship_read', { personId: '10001' });
    assert.equal(p.person.name, '小明');
    assert.equal(p.person.affinity, 10);

    // synonyms
    const s = await call(client, 'zcor_synonyms_add', { terms: ['喵星人', '猫咪'] });
    assert.ok(s.expansion.includes('猫咪'), JSON.stringify(s));

    // history: the calls above, as the model
    const h = await call(client, 'zcor_memory_history', { limit: 100 });
    const ops = h.items.map((i) => i.operation);
    for (const op of ['zcor_memory_write', 'zcor_memory_read', 'zcor_relationship_write', 'zcor_synonyms_add'])
      assert.ok(ops.includes(op), `history lacks ${op}: ${ops}`);
    assert.ok(h.items.every((i) => i.actor === 'model'), JSON.stringify(h.items.map((i) => i.actor)));

    // backup
    const b = await call(client, 'zcor_memory_backup');
    assert.match(b.file, /^backups\/memory-state-.*\.json$/);
    assert.ok(existsSync(join(dir, b.file)));
  });
});

test('a failing tool is a result with isError, an unknown tool a -32602 error', async () => {
  await withClient(tmp(), null, async (client) => {
    await callError(client, 'zcor_memory_read', { id: 'no-such-id' }, 'not_found');
    await callError(client, 'zcor_memory_write', { title: 42 }, 'invalid_argument');
    await rejectsWith(client.callTool({ name: 'no_such_tool', arguments: {} }), -32602);
    // the session is still usable
    await call(client, 'zcor_memory_children');
  });
});

test('resources: list and read a node written before', async () => {
  const dir = tmp();
  const id = await withClient(dir, null, async (client) =>
    (await call(client, 'zcor_memory_write', { title: '资源节点', content: '可以读到' })).node.id);
  await withClient(dir, null, async (client) => {
    const { resources } = await client.listResources();
    const res = resources.find((r) => r.name === id);
    assert.ok(res, JSON.stringify(resources));
    assert.equal(res.uri, `zcor://node/${id}`);
    assert.equal(res.title, '资源节点');
    assert.equal(res.mimeType, 'application/json');
    const { contents } = await client.readResource({ uri: res.uri });
    assert.equal(contents.length, 1);
    assert.equal(contents[0].uri, res.uri);
    assert.equal(contents[0].mimeType, 'application/json');
    assert.equal(JSON.parse(contents[0].text).node.content, '可以读到');
    const { resourceTemplates } = await client.listResourceTemplates();
    assert.equal(resourceTemplates[0].uriTemplate, 'zcor://node/{id}');
    await rejectsWith(client.readResource({ uri: 'zcor://node/nope' }), -32002);
    await rejectsWith(client.readResource({ uri: 'file:///etc/passwd' }), -32602);
  });
});

test('prompts: system-prefix', async () => {
  await withClient(tmp(), null, async (client) => {
    const { prompts } = await client.listPrompts();
    assert.deepEqual(prompts.map((p) => p.name), ['system-prefix']);
    assert.ok(prompts[0].description);
    const p = await client.getPrompt({ name: 'system-prefix' });
    assert.equal(p.messages.length, 1);
    assert.equal(p.messages[0].role, 'user');
    assert.equal(p.messages[0].content.type, 'text');
    assert.match(p.messages[0].content.text, /external_event_frame/);
    await rejectsWith(client.getPrompt({ name: 'nope' }), -32602);
  });
});

test('relationship tools are not offered when config.json switches them off', async () => {
  const dir = tmp();
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ relationships: false }));
  await withClient(dir, null, async (client) => {
    const names = (await client.listTools()).tools.map((t) => t.name);
    for (const n of RELATIONSHIP_TOOLS) assert.ok(!names.includes(n), `${n} offered`);
    assert.ok(names.includes('zcor_memory_write'));
    assert.doesNotMatch(client.getInstructions(), /zcor_relationship/);
    await rejectsWith(client.callTool({ name: 'zcor_relationship_read', arguments: { personId: '1' } }), -32602);
    const p = await client.getPrompt({ name: 'system-prefix' });
    assert.doesNotMatch(p.messages[0].content.text, /zcor_relationship/);
  });
});

test('--conversation scopes the session: group:1 writes are not readable from group:2', async () => {
  const dir = tmp();
  const id = await withClient(dir, 'group:1', async (client) => {
    const w = await call(client, 'zcor_memory_write', { title: '一群的秘密', content: '只在一群' });
    assert.equal(w.node.scope, 'group:1');
    assert.equal((await call(client, 'zcor_memory_read', { id: w.node.id })).node.title, '一群的秘密');
    return w.node.id;
  });
  await withClient(dir, 'group:2', async (client) => {
    await callError(client, 'zcor_memory_read', { id }, 'not_found');
    await rejectsWith(client.readResource({ uri: `zcor://node/${id}` }), -32002);
    const { resources } = await client.listResources();
    assert.ok(!resources.some((r) => r.name === id));
  });
  await withClient(dir, 'group:1', async (client) => {
    const { contents } = await client.readResource({ uri: `zcor://node/${id}` });
    assert.equal(JSON.parse(contents[0].text).node.title, '一群的秘密');
  });
});

// ---- raw JSON-RPC lines ---------------------------------------------------

// Starts `zcor mcp` and returns { send(obj|string), next(): Promise<object>,
// end(): Promise<{code, stderr}> } speaking raw lines.
function raw(dir, conv) {
  const p = spawn(BIN, zcorArgs(dir, conv), { env: cleanEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
  const lines = [];
  const waiters = [];
  let stderr = '';
  p.stderr.on('data', (d) => { stderr += d; });
  createInterface({ input: p.stdout }).on('line', (line) => {
    const w = waiters.shift();
    if (w) w(line); else lines.push(line);
  });
  const exited = new Promise((resolve) => p.on('close', (code) => resolve({ code, stderr })));
  return {
    send(m) { p.stdin.write((typeof m === 'string' ? m : JSON.stringify(m)) + '\n'); },
    async next() {
      const line = lines.length ? lines.shift() : await new Promise((resolve) => waiters.push(resolve));
      return JSON.parse(line); // every stdout line must be one JSON message
    },
    end() { p.stdin.end(); return exited; },
  };
}

const init = (id, protocolVersion) => ({
  jsonrpc: '2.0', id, method: 'initialize',
  params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

test('raw: version negotiation, pre-initialize refusal, errors, exit 0 at EOF', async () => {
  const dir = tmp();
  let s = raw(dir);
  s.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
  let r = await s.next();
  assert.equal(r.id, 1);
  assert.equal(r.error.code, -32600);
  s.send({ jsonrpc: '2.0', id: 'p', method: 'ping' });
  assert.deepEqual(await s.next(), { jsonrpc: '2.0', id: 'p', result: {} });
  s.send(init(2, '2025-06-18'));
  r = await s.next();
  assert.equal(r.result.protocolVersion, '2025-06-18');
  s.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  s.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2 } });
  s.send('');
  s.send('{"jsonrpc":"2.0","id":3,');
  r = await s.next();
  assert.equal(r.error.code, -32700);
  assert.equal(r.id, null);
  s.send([{ jsonrpc: '2.0', id: 4, method: 'ping' }]);
  assert.equal((await s.next()).error.code, -32600);
  s.send({ jsonrpc: '2.0', id: 5, method: 'sampling/nothing' });
  assert.equal((await s.next()).error.code, -32601);
  s.send({ jsonrpc: '2.0', id: 'str-6', method: 'tools/list' });
  r = await s.next();
  assert.equal(r.id, 'str-6');
  assert.ok(r.result.tools.length >= SEED_000_TOOLS.length);
  let done = await s.end();
  assert.equal(done.code, 0, done.stderr);

  s = raw(dir);
  s.send(init(1, '1999-01-01'));
  r = await s.next();
  assert.equal(r.result.protocolVersion, '2025-11-25');
  s.send(init(2, '2025-03-26'));
  assert.equal((await s.next()).error.code, -32600); // already initialized
  done = await s.end();
  assert.equal(done.code, 0, done.stderr);
});

test('--warm MB: the store is read ahead before the first message (0 skips it); a bad value exits 2', async () => {
  const dir = tmp();
  // something to read: a few memories written through a first session
  await withClient(dir, null, async (c) => {
    for (let i = 0; i < 5; i++) {
      const r = await c.callTool({ name: 'zcor_memory_write', arguments: { title: `预读${i}`, content: '周末吃火锅' } });
      assert.ok(!r.isError, JSON.stringify(r));
    }
  });
  const ping = JSON.stringify({ jsonrpc: '2.0', id: 'p', method: 'ping' }) + '\n';
  for (const mb of ['8', '0']) {
    const r = spawnSync(BIN, ['--dir', dir, 'mcp', '--warm', mb], { env: cleanEnv(), input: ping, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), { jsonrpc: '2.0', id: 'p', result: {} });
    assert.equal(r.stderr, '');
  }
  for (const bad of ['x', '-1', '1025', '']) {
    const r = spawnSync(BIN, ['--dir', dir, 'mcp', '--warm', bad], { env: cleanEnv(), input: ping, encoding: 'utf8' });
    assert.equal(r.status, 2, `--warm '${bad}': ${r.stdout}${r.stderr}`);
    assert.match(r.stderr, /--warm/);
    assert.equal(r.stdout, '');
  }
});

test('raw: a line over 4 MiB gets -32600 and is skipped; the next message is answered', async () => {
  const s = raw(tmp());
  s.send(init(1, '2025-11-25'));
  await s.next();
  const big = JSON.stringify({
    jsonrpc: '2.0', id: 2, method: 'tools/call',
    params: { name: 'zcor_memory_write', arguments: { title: 'big', content: 'x'.repeat(4 << 20) } },
  });
  s.send(big);
  const r = await s.next();
  assert.equal(r.error.code, -32600);
  assert.match(r.error.message, /longer than/);
  s.send({ jsonrpc: '2.0', id: 3, method: 'tools/call',
    params: { name: 'zcor_memory_query', arguments: {} } });
  const q = await s.next();
  assert.equal(q.id, 3);
  assert.equal(q.result.structuredContent.total, 0); // the big write never ran
  const done = await s.end();
  assert.equal(done.code, 0, done.stderr);
  assert.match(done.stderr, /skipped/);
});

// ---- the MCP Inspector CLI ----------------------------------------------

function runInspector(args) {
  const bin = join(TESTS, 'node_modules', '.bin', 'mcp-inspector-cli');
  assert.ok(existsSync(bin), `${bin} missing: run scripts/deps`);
  return new Promise((resolve, reject) => {
    // cwd: inspector-cli 1.0.3 tests fs.existsSync('../package.json') against the
    // working directory but imports it relative to its own module, so it needs
    // a working directory whose parent holds a package.json (tests/).
    const p = spawn(bin, args, {
      cwd: join(TESTS, 'e2e'), env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '', stderr = '';
    p.stdout.on('data', (d) => { stdout += d; });
    p.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => { p.kill(); reject(new Error(`inspector timed out: ${stderr}`)); }, 60000);
    p.on('error', reject);
    p.on('close', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
  });
}

test('the MCP Inspector CLI lists the tools', async () => {
  const dir = tmp();
  const r = await runInspector(['--cli', BIN, ...zcorArgs(dir), '--method', 'tools/list']);
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  const names = out.tools.map((t) => t.name);
  for (const n of SEED_000_TOOLS) assert.ok(names.includes(n), `missing ${n}`);
});
