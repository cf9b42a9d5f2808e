// mcp_sampling.test.mjs — zcor_memory_search over `zcor mcp` when no LLM
// provider is configured but the client offers sampling (SPEC §9): zcor
// asks the client to run the model with sampling/createMessage, through
// the official TypeScript SDK client acting as the host.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';

import { mkTmp } from '../tmpdir.mjs';

const BIN = process.env.ZCOR_BIN;
assert.ok(BIN, 'ZCOR_BIN must name the zcor binary');

function env() {
  const e = { ...process.env };
  delete e.ZCOR_DIR;
  return e;
}

// A client with (or without) the sampling capability; `answer` builds the
// model's reply text from the sampling request.
async function connect(dir, answer) {
  const transport = new StdioClientTransport({
    command: BIN, args: ['--dir', dir, 'mcp'], env: env(), stderr: 'pipe',
  });
  const caps = answer ? { capabilities: { sampling: {} } } : {};
  const client = new Client({ name: 'zcor-sampling-e2e', version: '1.0.0' }, caps);
  const seen = [];
  if (answer) {
    client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
      seen.push(req.params);
      return { model: 'scripted', role: 'assistant', content: { type: 'text', text: answer(req.params) } };
    });
  }
  await client.connect(transport);
  return { client, seen };
}

async function write(client, title, content) {
  const r = await client.callTool({ name: 'zcor_memory_write', arguments: { title, content } });
  assert.equal(r.isError, false);
  return r.structuredContent.node.id;
}

test('search asks the client to sample when no provider is configured', async () => {
  const dir = mkTmp('zcor-sampling-');
  let target;
  const { client, seen } = await connect(dir, () => JSON.stringify({ ids: [target] }));
  try {
    target = await write(client, '周五固定开黑', '每周五晚上八点开黑，别迟到');
    await write(client, '开黑要带耳机', '语音太吵');
    const r = await client.callTool({ name: 'zcor_memory_search', arguments: { keywords: ['开黑'] } });
    assert.equal(r.isError, false, JSON.stringify(r));
    assert.deepEqual(r.structuredContent.items.map((n) => n.id), [target]);
    assert.equal(seen.length, 1);
    const text = seen[0].messages[0].content.text;
    assert.match(text, /周五固定开黑/);
    assert.match(text, /每周五晚上八点开黑/); // the full text goes along
    assert.ok(seen[0].systemPrompt.length > 0);
    // the session goes on normally afterwards
    const q = await client.callTool({ name: 'zcor_memory_query', arguments: { keywords: ['开黑'] } });
    assert.equal(q.structuredContent.total, 2);
  } finally {
    await client.close();
  }
});

test('an id outside the candidates from sampling is a tool error', async () => {
  const dir = mkTmp('zcor-sampling-');
  const { client } = await connect(dir, () => JSON.stringify({ ids: ['m999999'] }));
  try {
    await write(client, '周五固定开黑', '八点');
    const r = await client.callTool({ name: 'zcor_memory_search', arguments: { keywords: ['开黑'] } });
    assert.equal(r.isError, true);
    assert.equal(r.structuredContent.error.code, 'provider_error');
  } finally {
    await client.close();
  }
});

test('without sampling and without a provider, search says no_provider', async () => {
  const dir = mkTmp('zcor-sampling-');
  const { client } = await connect(dir, null);
  try {
    await write(client, '周五固定开黑', '八点');
    const r = await client.callTool({ name: 'zcor_memory_search', arguments: { keywords: ['开黑'] } });
    assert.equal(r.isError, true);
    assert.equal(r.structuredContent.error.code, 'no_provider');
  } finally {
    await client.close();
  }
});

test('a configured provider wins over sampling', async () => {
  const dir = mkTmp('zcor-sampling-');
  // a provider nobody listens on: the search must fail with its error, not sample
  writeFileSync(join(dir, 'config.json'), JSON.stringify({
    provider: { baseUrl: 'http://127.0.0.1:9/v1', model: 'm', timeoutMs: 1000, maxRetries: 0 },
  }));
  let sampled = 0;
  const { client } = await connect(dir, () => { sampled++; return '{"ids":[]}'; });
  try {
    await write(client, '周五固定开黑', '八点');
    const r = await client.callTool({ name: 'zcor_memory_search', arguments: { keywords: ['开黑'] } });
    assert.equal(r.isError, true);
    assert.equal(r.structuredContent.error.code, 'provider_error');
    assert.equal(sampled, 0);
  } finally {
    await client.close();
  }
});

test('issue 12: a refusal quoted from the client is cut on character boundaries', async () => {
  const dir = mkTmp('zcor-sampling-');
  const reason = '拒'.repeat(100); // 300 bytes: %.200s split a character
  const transport = new StdioClientTransport({
    command: BIN, args: ['--dir', dir, 'mcp'], env: env(), stderr: 'pipe',
  });
  const client = new Client({ name: 'zcor-sampling-e2e', version: '1.0.0' }, { capabilities: { sampling: {} } });
  client.setRequestHandler(CreateMessageRequestSchema, async () => { throw new Error(reason); });
  await client.connect(transport);
  try {
    await write(client, '周五固定开黑', '八点');
    const r = await client.callTool({ name: 'zcor_memory_search', arguments: { keywords: ['开黑'] } });
    assert.equal(r.isError, true);
    const m = r.structuredContent.error.message;
    assert.match(m, /the client refused sampling/);
    assert.ok(m.includes(reason), m);
    assert.ok(!m.includes('?') && !m.includes('\ufffd'), m);
  } finally {
    await client.close();
  }
});
