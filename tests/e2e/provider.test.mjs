// provider.test.mjs — zcor_memory_search's LLM stage on the provider from
// config.json (SPEC §3.1, §9), through the real CLI against a fake
// OpenAI-compatible server on 127.0.0.1 that each test scripts: the
// request zcor sends, retries on 429/503/500 honouring Retry-After (seconds
// and HTTP-date), no retry on 401/400, the total timeout, size limit, the
// body forms some servers send (keep-alive comments, SSE streams) and the
// clear errors for broken answers and a missing API key variable.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';

import { mkTmp } from '../tmpdir.mjs';

const BIN = process.env.ZCOR_BIN;
assert.ok(BIN, 'ZCOR_BIN must name the zcor binary');

const KEY_ENV = 'ZCOR_TEST_PROVIDER_KEY';
const KEY = 'sk-test-1234567890';

function env(extra = {}) {
  const e = { ...process.env, [KEY_ENV]: KEY, ...extra };
  delete e.ZCOR_DIR;
  for (const k of ['http_proxy', 'https_proxy', 'HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'all_proxy'])
    delete e[k];
  return e;
}

// The fake server: `script` is a list of handlers, one per request (the
// last one repeats); each gets (req, res, body). Records every request.
async function fakeServer(script) {
  const requests = [];
  const server = createServer((req, res) => {
    let data = '';
    req.setEncoding('utf8');
    req.on('data', (c) => { data += c; });
    req.on('end', () => {
      let body = null;
      try { body = JSON.parse(data); } catch { body = data; }
      requests.push({ method: req.method, url: req.url, headers: req.headers, body, at: Date.now() });
      const h = script[Math.min(requests.length, script.length) - 1];
      h(req, res, body);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}

// Handlers.
const completion = (content) => ({
  id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'test-model',
  choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
});
const answer = (ids) => (req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(completion(JSON.stringify({ ids }))));
};
const status = (code, message, headers = {}) => (req, res) => {
  res.writeHead(code, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ error: { message, type: 'test', code: null } }));
};
const raw = (text, headers = { 'content-type': 'application/json' }) => (req, res) => {
  res.writeHead(200, headers);
  res.end(text);
};

// Runs zcor without blocking the event loop (the fake server lives here).
function run(args, { extraEnv } = {}) {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const p = spawn(BIN, args, { env: env(extraEnv) });
    let stdout = '', stderr = '';
    p.stdout.setEncoding('utf8').on('data', (c) => { stdout += c; });
    p.stderr.setEncoding('utf8').on('data', (c) => { stderr += c; });
    const timer = setTimeout(() => p.kill('SIGKILL'), 30000);
    p.on('error', reject);
    p.on('close', (code) => {
      clearTimeout(timer);
      resolve({ status: code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

function toolSync(dir, name, args) {
  const r = spawnSync(BIN, ['--dir', dir, 'tool', name, JSON.stringify(args)],
    { env: env(), encoding: 'utf8', timeout: 30000 });
  assert.equal(r.status, 0, `${name}: ${r.stdout}${r.stderr}`);
  return JSON.parse(r.stdout);
}

// A memory directory with two 咖啡 memories (candidates) and one other,
// and config.json pointing at the fake server.
function setup(baseUrl, provider = {}) {
  const dir = mkTmp('zcor-provider-');
  const a = toolSync(dir, 'zcor_memory_write', { title: '咖啡店在东门', content: '学校东门那家咖啡店周一休息' }).node;
  const b = toolSync(dir, 'zcor_memory_write', { title: '最喜欢的咖啡', content: '燕麦拿铁，少冰，不加糖' }).node;
  toolSync(dir, 'zcor_memory_write', { title: '天气', content: '周末下雨' });
  writeFileSync(join(dir, 'config.json'), JSON.stringify({
    provider: { baseUrl, model: 'test-model', apiKeyEnv: KEY_ENV, ...provider },
  }, null, 2));
  return { dir, a, b };
}

async function search(dir, opts) {
  const r = await run(['--dir', dir, 'tool', 'zcor_memory_search', JSON.stringify({ keywords: ['咖啡'] })], opts);
  const out = JSON.parse(r.stdout);
  return { ...r, out };
}

function assertError(r, code = 'provider_error') {
  assert.equal(r.status, 1, r.stdout + r.stderr);
  assert.equal(r.out.error?.code, code, r.stdout);
  return r.out.error.message;
}

// ---- success ------------------------------------------------------------

test('search returns the ids the provider chose, in its order; the request is complete', async () => {
  let ctx;
  const srv = await fakeServer([(req, res) => answer([ctx.b.id, ctx.a.id])(req, res)]);
  ctx = setup(srv.baseUrl);
  try {
    const r = await search(ctx.dir);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.deepEqual(r.out.items.map((n) => n.id), [ctx.b.id, ctx.a.id]);
    assert.equal(r.out.candidates, 2);
    assert.equal(srv.requests.length, 1);
    const q = srv.requests[0];
    assert.equal(q.method, 'POST');
    assert.equal(q.url, '/v1/chat/completions');
    assert.equal(q.headers.authorization, `Bearer ${KEY}`);
    assert.match(q.headers['content-type'], /^application\/json/);
    assert.equal(q.body.model, 'test-model');
    assert.equal(q.body.stream, false);
    assert.equal(q.body.temperature, 0);
    assert.deepEqual(q.body.messages.map((m) => m.role), ['system', 'user']);
    assert.ok(q.body.messages[0].content.length > 0);
    const user = q.body.messages[1].content;
    for (const n of [ctx.a, ctx.b]) {
      assert.ok(user.includes(n.id), `user message lacks ${n.id}`);
      assert.ok(user.includes(n.title), `user message lacks ${n.title}`);
      assert.ok(user.includes(n.content), `user message lacks ${n.content}`);
    }
    assert.ok(user.includes('咖啡'));
    assert.ok(!user.includes('周末下雨'), 'a non-candidate was sent');
  } finally {
    await srv.close();
  }
});

test('without apiKeyEnv no Authorization header is sent', async () => {
  const srv = await fakeServer([answer([])]);
  const ctx = setup(srv.baseUrl, { apiKeyEnv: undefined });
  try {
    const r = await search(ctx.dir);
    assert.equal(r.status, 0, r.stdout);
    assert.deepEqual(r.out.items, []);
    assert.equal(srv.requests[0].headers.authorization, undefined);
  } finally {
    await srv.close();
  }
});

// ---- retries ------------------------------------------------------------

test('429 with Retry-After: 1 is retried after a second', async () => {
  let ctx;
  const srv = await fakeServer([status(429, 'slow down', { 'retry-after': '1' }),
    (req, res) => answer([ctx.a.id])(req, res)]);
  ctx = setup(srv.baseUrl);
  try {
    const r = await search(ctx.dir);
    assert.equal(r.status, 0, r.stdout);
    assert.deepEqual(r.out.items.map((n) => n.id), [ctx.a.id]);
    assert.equal(srv.requests.length, 2);
    assert.ok(srv.requests[1].at - srv.requests[0].at >= 1000 - 20,
      `retried after ${srv.requests[1].at - srv.requests[0].at} ms`);
    assert.ok(r.ms >= 1000);
  } finally {
    await srv.close();
  }
});

test('503 with an HTTP-date Retry-After is retried at that date', async () => {
  let ctx;
  const srv = await fakeServer([
    (req, res) => status(503, 'maintenance', { 'retry-after': new Date(Date.now() + 2000).toUTCString() })(req, res),
    (req, res) => answer([ctx.b.id])(req, res)]);
  ctx = setup(srv.baseUrl);
  try {
    const r = await search(ctx.dir);
    assert.equal(r.status, 0, r.stdout);
    assert.deepEqual(r.out.items.map((n) => n.id), [ctx.b.id]);
    assert.equal(srv.requests.length, 2);
    // the date has whole seconds, so the wait is 1 to 2 s (backoff alone would be 0.5 s)
    const gap = srv.requests[1].at - srv.requests[0].at;
    assert.ok(gap >= 900 && gap < 4000, `retried after ${gap} ms`);
  } finally {
    await srv.close();
  }
});

test('500 is retried with backoff', async () => {
  let ctx;
  const srv = await fakeServer([status(500, 'oops'), (req, res) => answer([ctx.a.id])(req, res)]);
  ctx = setup(srv.baseUrl);
  try {
    const r = await search(ctx.dir);
    assert.equal(r.status, 0, r.stdout);
    assert.deepEqual(r.out.items.map((n) => n.id), [ctx.a.id]);
    assert.equal(srv.requests.length, 2);
    assert.ok(srv.requests[1].at - srv.requests[0].at >= 400);
  } finally {
    await srv.close();
  }
});

test('5xx until maxRetries runs out: the error says how many attempts', async () => {
  const srv = await fakeServer([status(502, 'bad gateway')]);
  const ctx = setup(srv.baseUrl, { maxRetries: 1 });
  try {
    const msg = assertError(await search(ctx.dir));
    assert.equal(srv.requests.length, 2);
    assert.match(msg, /502/);
    assert.match(msg, /bad gateway/);
    assert.match(msg, /2 attempts/);
  } finally {
    await srv.close();
  }
});

// ---- no retry -----------------------------------------------------------

test('401 is not retried and the error names the status and the message', async () => {
  const srv = await fakeServer([status(401, 'Incorrect API key provided')]);
  const ctx = setup(srv.baseUrl);
  try {
    const msg = assertError(await search(ctx.dir));
    assert.equal(srv.requests.length, 1);
    assert.match(msg, /401/);
    assert.match(msg, /Incorrect API key provided/);
    assert.ok(!msg.includes(KEY), 'the key leaked into the message');
  } finally {
    await srv.close();
  }
});

test('400 is not retried', async () => {
  const srv = await fakeServer([status(400, "'messages' is required")]);
  const ctx = setup(srv.baseUrl);
  try {
    const msg = assertError(await search(ctx.dir));
    assert.equal(srv.requests.length, 1);
    assert.match(msg, /400/);
    assert.match(msg, /'messages' is required/);
  } finally {
    await srv.close();
  }
});

// ---- limits -------------------------------------------------------------

test('a server that stalls past timeoutMs is an error within bounded time', async () => {
  const srv = await fakeServer([() => { /* never answers */ }]);
  const ctx = setup(srv.baseUrl, { timeoutMs: 1500 });
  try {
    const r = await search(ctx.dir);
    const msg = assertError(r);
    assert.match(msg, /timeoutMs/);
    assert.ok(r.ms >= 1400 && r.ms < 6000, `took ${r.ms} ms`);
    assert.equal(srv.requests.length, 1);
  } finally {
    await srv.close();
  }
});

test('a response larger than maxResponseBytes is an error', async () => {
  let ctx;
  const srv = await fakeServer([(req, res) => {
    const big = completion(JSON.stringify({ ids: [ctx.a.id] }));
    big.padding = 'x'.repeat(8192);
    raw(JSON.stringify(big))(req, res);
  }]);
  ctx = setup(srv.baseUrl, { maxResponseBytes: 1024 });
  try {
    const msg = assertError(await search(ctx.dir));
    assert.match(msg, /larger than/);
    assert.equal(srv.requests.length, 1);
  } finally {
    await srv.close();
  }
});

test('a missing API key variable is a clear error naming it, and nothing is sent', async () => {
  const srv = await fakeServer([answer([])]);
  const ctx = setup(srv.baseUrl, { apiKeyEnv: 'ZCOR_TEST_NO_SUCH_KEY' });
  try {
    const msg = assertError(await search(ctx.dir));
    assert.match(msg, /ZCOR_TEST_NO_SUCH_KEY/);
    assert.match(msg, /not set/);
    assert.equal(srv.requests.length, 0);
  } finally {
    await srv.close();
  }
});

// ---- answers ------------------------------------------------------------

test('malformed JSON is a provider_error', async () => {
  const srv = await fakeServer([raw('{"choices": [{"message": ')]);
  const ctx = setup(srv.baseUrl);
  try {
    const msg = assertError(await search(ctx.dir));
    assert.match(msg, /not valid JSON/);
    assert.equal(srv.requests.length, 1);
  } finally {
    await srv.close();
  }
});

test('a missing choices[0].message.content is a provider_error', async () => {
  const srv = await fakeServer([raw(JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant' }, finish_reason: 'length' }] }))]);
  const ctx = setup(srv.baseUrl);
  try {
    const msg = assertError(await search(ctx.dir));
    assert.match(msg, /choices\[0\]\.message\.content/);
  } finally {
    await srv.close();
  }
});

test('ids outside the candidates are a provider_error', async () => {
  const srv = await fakeServer([answer(['m999999'])]);
  const ctx = setup(srv.baseUrl);
  try {
    const msg = assertError(await search(ctx.dir));
    assert.match(msg, /m999999/);
    assert.match(msg, /not among the candidates/);
  } finally {
    await srv.close();
  }
});

test('keep-alive comment lines before the JSON are skipped', async () => {
  let ctx;
  const srv = await fakeServer([(req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('\n\n: OPENROUTER PROCESSING\n\n');
    setTimeout(() => {
      res.write(': keep-alive\n\n');
      res.end(JSON.stringify(completion(JSON.stringify({ ids: [ctx.b.id, ctx.a.id] }))));
    }, 100);
  }]);
  ctx = setup(srv.baseUrl);
  try {
    const r = await search(ctx.dir);
    assert.equal(r.status, 0, r.stdout);
    assert.deepEqual(r.out.items.map((n) => n.id), [ctx.b.id, ctx.a.id]);
  } finally {
    await srv.close();
  }
});

test('an SSE-streamed answer is joined from its deltas', async () => {
  let ctx;
  const srv = await fakeServer([(req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const text = JSON.stringify({ ids: [ctx.a.id, ctx.b.id] });
    const parts = [text.slice(0, 3), text.slice(3, 12), text.slice(12)];
    const chunk = (delta, finish = null) => `data: ${JSON.stringify({
      id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }],
    })}\n\n`;
    res.write(': keep-alive\n\n');
    res.write(chunk({ role: 'assistant', content: '' }));
    let i = 0;
    const next = () => {
      if (i < parts.length) {
        res.write(chunk({ content: parts[i++] }));
        setTimeout(next, 30);
      } else {
        res.write(chunk({}, 'stop'));
        res.end('data: [DONE]\n\n');
      }
    };
    next();
  }]);
  ctx = setup(srv.baseUrl);
  try {
    const r = await search(ctx.dir);
    assert.equal(r.status, 0, r.stdout);
    assert.deepEqual(r.out.items.map((n) => n.id), [ctx.a.id, ctx.b.id]);
  } finally {
    await srv.close();
  }
});

test('config.json changes are picked up between calls', async () => {
  let ctx;
  const srv = await fakeServer([(req, res) => answer([ctx.a.id])(req, res)]);
  ctx = setup(srv.baseUrl);
  try {
    writeFileSync(join(ctx.dir, 'config.json'), JSON.stringify({
      provider: { baseUrl: srv.baseUrl, model: 'other-model' },
    }));
    const r = await search(ctx.dir);
    assert.equal(r.status, 0, r.stdout);
    assert.equal(srv.requests[0].body.model, 'other-model');
    // the provider removed: back to no_provider
    writeFileSync(join(ctx.dir, 'config.json'), JSON.stringify({ recallChars: 10 }));
    const none = await search(ctx.dir);
    assertError(none, 'no_provider');
  } finally {
    await srv.close();
  }
});
