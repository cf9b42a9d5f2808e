// http.test.mjs — black-box tests of `zcor serve` (SPEC §8, docs/API.md):
// the HTTP security rules (Host / Origin against DNS rebinding, the token,
// the body and nesting limits, the page cookie that the API never accepts),
// the REST API under /api/v1/ with its error statuses, MCP Streamable HTTP
// at /mcp spoken by the official TypeScript SDK client, sessions, a slow
// LLM provider that must not block other requests, and SIGTERM while a
// request is in flight.
//
// Every test starts its own `$ZCOR_BIN --dir <tmp> serve --listen
// 127.0.0.1:<free port>`, reads the URL (with ?token=) from stdout, and
// stops it with SIGTERM, expecting exit 0. Requests go through node's
// http.request (one connection each) so the tests control Host and Origin.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, createServer } from 'node:http';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';

import { request, runThenStop, startServe as startServeOn } from '../net.mjs';
import { mkTmp } from '../tmpdir.mjs';

const BIN = process.env.ZCOR_BIN;
assert.ok(BIN, 'ZCOR_BIN must name the zcor binary');

const MiB = 1 << 20;

function cleanEnv(extra = {}) {
  const e = { ...process.env, ...extra };
  delete e.ZCOR_DIR;
  delete e.ZCOR_TOKEN;
  // libcurl (the provider) honours these; the fake provider is on loopback
  for (const k of ['http_proxy', 'https_proxy', 'HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'all_proxy'])
    delete e[k];
  return e;
}

function tmp() {
  return mkTmp('zcor-http-');
}

// Starts `zcor serve` (net.mjs) and checks what it printed and wrote.
async function startServe(dir = tmp(), { env } = {}) {
  const srv = await startServeOn(BIN, dir, cleanEnv(env));
  const u = new URL(srv.url);
  assert.equal(u.hostname, '127.0.0.1');
  assert.equal(Number(u.port), srv.port);
  assert.ok(srv.token && srv.token.length >= 16, srv.url);
  assert.equal(readFileSync(join(dir, 'serve.token'), 'utf8').trim(), srv.token);
  return srv;
}

// Runs fn(server) and always stops the server (exit 0 checked).
const withServe = async (fn, opts) => runThenStop(await startServe(opts?.dir, opts), fn);

const req = request; // net.mjs

function assertError(r, status, code) {
  assert.equal(r.status, status, `${r.status} ${r.text}`);
  assert.match(r.headers['content-type'] ?? '', /^application\/json/);
  assert.equal(typeof r.json?.error, 'object', r.text);
  assert.equal(typeof r.json.error.message, 'string');
  assert.ok(r.json.error.message.length > 0);
  if (code) assert.equal(r.json.error.code, code, r.text);
  return r.json.error;
}

function assertOk(r, status = 200) {
  assert.equal(r.status, status, `${r.status} ${r.text}`);
  assert.ok(r.json && !r.json.error, r.text);
  return r.json;
}

// Runs the CLI synchronously against dir (for checks after a server stopped).
function tool(dir, name, args = {}) {
  const r = spawnSync(BIN, ['--dir', dir, 'tool', name, JSON.stringify(args)],
    { env: cleanEnv(), encoding: 'utf8', timeout: 30000 });
  return { status: r.status, out: r.stdout ? JSON.parse(r.stdout) : null, stderr: r.stderr };
}

const nested = (depth) => '['.repeat(depth) + ']'.repeat(depth);

// ---- the security matrix ------------------------------------------------

test('security: Host and Origin (DNS rebinding), token, body size, nesting depth', async () => {
  await withServe(async (srv) => {
    const P = srv.port;
    // Host
    assertError(await req(srv, '/api/v1/nodes', { host: `evil.example.com:${P}` }), 403, 'forbidden');
    assertError(await req(srv, '/api/v1/nodes', { host: 'evil.example.com' }), 403, 'forbidden');
    assertError(await req(srv, '/api/v1/nodes', { host: `localhost:${P + 1 === 65536 ? P - 1 : P + 1}` }), 403, 'forbidden');
    assertError(await req(srv, '/mcp', { method: 'POST', host: `evil.example.com:${P}`,
      body: { jsonrpc: '2.0', id: 1, method: 'ping' } }), 403, 'forbidden');
    // the Host check comes before the token: a rebinding page learns nothing
    assertError(await req(srv, '/api/v1/nodes', { host: `evil.example.com:${P}`, auth: false }), 403, 'forbidden');
    for (const host of [`localhost:${P}`, `127.0.0.1:${P}`, `LOCALHOST:${P}`, `[::1]:${P}`])
      assertOk(await req(srv, '/api/v1/nodes', { host }));

    // Origin
    assertError(await req(srv, '/api/v1/nodes', { origin: 'http://evil.example.com' }), 403, 'forbidden');
    assertError(await req(srv, '/api/v1/nodes', { origin: `http://evil.example.com:${P}` }), 403, 'forbidden');
    assertError(await req(srv, '/api/v1/nodes', { method: 'POST', origin: 'http://evil.example.com',
      body: { title: 'x', content: 'y' } }), 403, 'forbidden');
    assertError(await req(srv, '/api/v1/nodes', { origin: `https://127.0.0.1:${P}` }), 403, 'forbidden');
    assertError(await req(srv, '/api/v1/nodes', { origin: 'null' }), 403, 'forbidden');
    assertOk(await req(srv, '/api/v1/nodes', { origin: `http://127.0.0.1:${P}` }));
    assertOk(await req(srv, '/api/v1/nodes', { origin: `http://localhost:${P}` }));

    // token
    for (const path of ['/api/v1/nodes', '/api/v1/tools', '/mcp']) {
      const method = path === '/mcp' ? 'POST' : 'GET';
      const body = path === '/mcp' ? { jsonrpc: '2.0', id: 1, method: 'ping' } : undefined;
      assertError(await req(srv, path, { method, body, auth: false }), 401, 'unauthorized');
      assertError(await req(srv, path, { method, body, auth: 'wrong-token-0123456789' }), 401, 'unauthorized');
      // same length, one character off
      const off = srv.token.slice(0, -1) + (srv.token.endsWith('0') ? '1' : '0');
      assertError(await req(srv, path, { method, body, auth: off }), 401, 'unauthorized');
    }
    // the API does not take the token from the query string
    assertError(await req(srv, `/api/v1/nodes?token=${srv.token}`, { auth: false }), 401, 'unauthorized');
    assertError(await req(srv, '/api/v1/nodes', { auth: false, headers: { authorization: `Basic ${srv.token}` } }),
      401, 'unauthorized');
    // nothing was written by the refused POSTs
    assert.equal(assertOk(await req(srv, '/api/v1/nodes')).total, 0);

    // body size: 1 MiB + 1 → 413; exactly 1 MiB is read (and then judged as JSON)
    const big = Buffer.alloc(MiB + 1, 0x61);
    assertError(await req(srv, '/api/v1/nodes', { method: 'POST', body: big,
      headers: { 'content-type': 'application/json' } }), 413);
    assertError(await req(srv, '/mcp', { method: 'POST', body: big,
      headers: { 'content-type': 'application/json' } }), 413);
    const exact = Buffer.alloc(MiB, 0x61);
    const r = await req(srv, '/api/v1/nodes', { method: 'POST', body: exact,
      headers: { 'content-type': 'application/json' } });
    assertError(r, 400, 'invalid_argument');

    // nesting: 1,000 levels → 400, on the API and on /mcp; 64 is the limit
    const deep = nested(1000);
    assertError(await req(srv, '/api/v1/nodes', { method: 'POST', body: deep,
      headers: { 'content-type': 'application/json' } }), 400, 'invalid_argument');
    assertError(await req(srv, '/api/v1/tools/zcor_memory_write', { method: 'POST',
      body: `{"title":"t","content":"c","keywords":${nested(999)}}`,
      headers: { 'content-type': 'application/json' } }), 400, 'invalid_argument');
    assertError(await req(srv, '/mcp', { method: 'POST', body: deep,
      headers: { 'content-type': 'application/json' } }), 400, 'invalid_argument');
    // a ping whose params nest to 64 levels in all is fine; 65 is not
    const ping = (d) => `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"x":${nested(d - 3)}}}}`;
    const ok64 = await req(srv, '/mcp', { method: 'POST', body: ping(64),
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' } });
    assert.equal(ok64.status, 200, ok64.text);
    assert.deepEqual(ok64.json, { jsonrpc: '2.0', id: 1, result: {} });
    assertError(await req(srv, '/mcp', { method: 'POST', body: ping(65),
      headers: { 'content-type': 'application/json' } }), 400, 'invalid_argument');
    // brackets inside strings do not count
    const w = await req(srv, '/api/v1/nodes', { method: 'POST',
      body: { title: '括号', content: nested(500) } });
    assert.equal(assertOk(w, 201).node.content, nested(500));

    // a bad X-Zcor-Conversation is refused, not ignored
    assertError(await req(srv, '/api/v1/nodes', { conv: 'bogus' }), 400, 'invalid_argument');

    // the server is still fine
    assert.equal(assertOk(await req(srv, '/api/v1/nodes')).total, 1);
  });
});

test('security: 401 says how to authenticate (WWW-Authenticate: Bearer)',
  async () => {
  await withServe(async (srv) => {
    const r = await req(srv, '/api/v1/nodes', { auth: false });
    assertError(r, 401, 'unauthorized');
    assert.match(r.headers['www-authenticate'] ?? '', /^Bearer\b/, 'docs/API.md: 401 and WWW-Authenticate: Bearer');
  });
});

test('the page: ?token= sets an HttpOnly SameSite=Strict cookie, which the API never accepts (CSRF)', async () => {
  await withServe(async (srv) => {
    assertError(await req(srv, '/', { auth: false }), 401, 'unauthorized');
    assertError(await req(srv, '/?token=not-the-token-at-all', { auth: false }), 401, 'unauthorized');
    const page = await req(srv, `/?token=${srv.token}`, { auth: false });
    assert.equal(page.status, 200, page.text);
    assert.match(page.headers['content-type'], /^text\/html/);
    const set = [].concat(page.headers['set-cookie'] ?? []);
    assert.equal(set.length, 1, JSON.stringify(page.headers));
    assert.match(set[0], /HttpOnly/i);
    assert.match(set[0], /SameSite=Strict/i);
    const cookie = set[0].split(';')[0];
    assert.ok(cookie.includes(srv.token));
    // the page reloads with the cookie alone
    const again = await req(srv, '/', { auth: false, headers: { cookie } });
    assert.equal(again.status, 200);
    // the API refuses the cookie alone: reads and writes
    assertError(await req(srv, '/api/v1/nodes', { auth: false, headers: { cookie } }), 401, 'unauthorized');
    assertError(await req(srv, '/api/v1/nodes', { method: 'POST', auth: false, headers: { cookie },
      body: { title: '跨站', content: '写入' } }), 401, 'unauthorized');
    // a cross-site form post (urlencoded) likewise
    assertError(await req(srv, '/api/v1/tools/zcor_memory_write', { method: 'POST', auth: false,
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'title=a&content=b' }), 401, 'unauthorized');
    assertError(await req(srv, '/mcp', { method: 'POST', auth: false, headers: { cookie },
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } }), 401, 'unauthorized');
    assert.equal(assertOk(await req(srv, '/api/v1/nodes')).total, 0);
    // unknown paths are JSON 404s
    assertError(await req(srv, '/nope'), 404, 'not_found');
    assertError(await req(srv, '/api/v1/nope'), 404, 'not_found');
  });
});

// ---- REST -------------------------------------------------------------

test('REST: nodes round trip, history as actor ui, and the error statuses', async () => {
  await withServe(async (srv) => {
    const created = await req(srv, '/api/v1/nodes', { method: 'POST',
      body: { title: '北大', content: '在海淀', keywords: ['学校'] } });
    const node = assertOk(created, 201).node;
    assert.equal(node.title, '北大');
    assert.match(created.headers['content-type'], /^application\/json/);
    const id = node.id;
    // an id in the body of POST is ignored: POST always creates
    const other = assertOk(await req(srv, '/api/v1/nodes', { method: 'POST',
      body: { id, title: '另一个', content: '新的' } }), 201).node;
    assert.notEqual(other.id, id);

    assert.equal(assertOk(await req(srv, `/api/v1/nodes/${id}`)).node.content, '在海淀');
    const put = assertOk(await req(srv, `/api/v1/nodes/${id}`, { method: 'PUT',
      body: { title: '北京大学', content: '在海淀区', keywords: ['学校', '北京'] } }));
    assert.equal(put.node.id, id);
    assert.equal(put.node.title, '北京大学');
    assert.equal(assertOk(await req(srv, `/api/v1/nodes/${id}`)).node.title, '北京大学');

    const q = assertOk(await req(srv, `/api/v1/nodes?keywords=${encodeURIComponent('海淀,北京')}`));
    assert.equal(q.total, 1);
    assert.equal(q.items[0].id, id);
    const none = assertOk(await req(srv, `/api/v1/nodes?keywords=${encodeURIComponent('海淀,上海')}`));
    assert.equal(none.total, 0);
    const page = assertOk(await req(srv, '/api/v1/nodes?limit=1&offset=0'));
    assert.equal(page.items.length, 1);
    assert.equal(page.total, 2);
    assert.equal(page.nextOffset, 1);

    const imp = assertOk(await req(srv, `/api/v1/nodes/${id}/important`, { method: 'POST', body: { important: true } }));
    assert.equal(imp.important, true);
    assert.equal(assertOk(await req(srv, `/api/v1/nodes/${id}`)).node.important, true);

    const child = assertOk(await req(srv, '/api/v1/nodes', { method: 'POST',
      body: { title: '未名湖', content: '湖', parentId: id } }), 201).node;
    const trace = assertOk(await req(srv, `/api/v1/nodes/${child.id}/trace`));
    assert.deepEqual(trace.path.map((n) => n.id), [id, child.id]);
    const kids = assertOk(await req(srv, `/api/v1/nodes/${id}/children`));
    assert.deepEqual(kids.items.map((n) => n.id), [child.id]);
    const roots = assertOk(await req(srv, '/api/v1/roots'));
    assert.deepEqual(roots.items.map((n) => n.id).sort(), [id, other.id].sort());

    // errors
    const nf = assertError(await req(srv, '/api/v1/nodes/no-such-id'), 404, 'not_found');
    assert.match(nf.message, /no-such-id/);
    assertError(await req(srv, '/api/v1/nodes/no-such-id', { method: 'PUT', body: { title: 'a', content: 'b' } }),
      404, 'not_found');
    assertError(await req(srv, '/api/v1/nodes/no-such-id', { method: 'DELETE' }), 404, 'not_found');
    assertError(await req(srv, '/api/v1/nodes/no-such-id/trace'), 404, 'not_found');
    const bad = assertError(await req(srv, '/api/v1/nodes', { method: 'POST', body: { title: 42, content: 'x' } }),
      400, 'invalid_argument');
    assert.match(bad.message, /title/);
    assertError(await req(srv, '/api/v1/nodes', { method: 'POST', body: '{"title": "a", ' ,
      headers: { 'content-type': 'application/json' } }), 400, 'invalid_argument');
    assertError(await req(srv, '/api/v1/nodes', { method: 'POST', body: '[1,2]',
      headers: { 'content-type': 'application/json' } }), 400, 'invalid_argument');
    assertError(await req(srv, '/api/v1/nodes?limit=abc'), 400, 'invalid_argument');
    assertError(await req(srv, '/api/v1/nodes', { method: 'POST',
      body: { title: 'x', content: 'y', parentId: 'no-such-parent' } }), 404);
    assertError(await req(srv, `/api/v1/nodes/${id}`, { method: 'PUT',
      body: { title: '北京大学', content: '在海淀区', parentId: child.id } }), 409, 'conflict'); // a cycle
    const conflict = assertError(await req(srv, `/api/v1/nodes/${id}`, { method: 'DELETE' }), 409, 'conflict');
    assert.match(conflict.message, new RegExp(child.id));
    // the refusal's detail: which rule, and who still refers to the node
    assert.deepEqual(conflict.details, { reason: 'has_children', count: 1, ids: [child.id], titles: { [child.id]: child.title } });

    // delete the child, then the parent
    assertOk(await req(srv, `/api/v1/nodes/${child.id}`, { method: 'DELETE' }));
    assertOk(await req(srv, `/api/v1/nodes/${id}`, { method: 'DELETE' }));
    assertError(await req(srv, `/api/v1/nodes/${id}`), 404, 'not_found');

    // history: every change above was recorded as the UI, refused ones
    // too; the reads were not (the operator browsing, issue 18)
    const h = assertOk(await req(srv, '/api/v1/history?limit=100'));
    assert.ok(h.items.length > 0);
    assert.ok(h.items.every((i) => i.actor === 'ui'), JSON.stringify(h.items.map((i) => i.actor)));
    const ops = h.items.map((i) => i.operation);
    for (const op of ['zcor_memory_write', 'zcor_memory_important', 'zcor_memory_delete'])
      assert.ok(ops.includes(op), `history lacks ${op}: ${ops}`);
    for (const op of ['zcor_memory_query', 'zcor_memory_trace', 'zcor_memory_children', 'zcor_memory_history'])
      assert.ok(!ops.includes(op), `history records the read ${op}: ${ops}`);
    const del = h.items.find((i) => i.operation === 'zcor_memory_delete' && i.status === 'ok' && i.arguments.id === id);
    assert.ok(del, 'the delete is in history');
    assert.equal(del.before[0].title, '北京大学', 'history keeps the deleted content');
    assert.ok(h.items.some((i) => i.operation === 'zcor_memory_delete' && i.status === 'error'));
    const hk = assertOk(await req(srv, `/api/v1/history?keywords=${encodeURIComponent('北京大学')}&limit=100`));
    assert.ok(hk.total > 0);
    // GET nodes/{id} is not recorded
    assert.ok(!ops.includes('zcor_memory_read'), ops.join());

    // tools
    const tools = assertOk(await req(srv, '/api/v1/tools'));
    const list = Array.isArray(tools) ? tools : tools.tools;
    assert.ok(list.some((t) => t.name === 'zcor_memory_write'), JSON.stringify(tools).slice(0, 200));
    const viaTool = assertOk(await req(srv, '/api/v1/tools/zcor_memory_write', { method: 'POST',
      body: { title: '工具', content: '直接调用' } }));
    assert.equal(viaTool.node.title, '工具');
    assertError(await req(srv, '/api/v1/tools/no_such_tool', { method: 'POST', body: {} }), 404);
  });
});

test('REST: people, synonyms, merge and supersede', async () => {
  await withServe(async (srv) => {
    const w = assertOk(await req(srv, '/api/v1/people/10001', { method: 'PUT',
      body: { name: '小明', relationship: '朋友', affinity: 10, reason: '一起吃饭', aliases: ['明明'] } }));
    assert.equal(w.person.personId, '10001');
    const p = assertOk(await req(srv, '/api/v1/people/10001')).person;
    assert.equal(p.name, '小明');
    assert.equal(p.affinity, 10);
    assert.deepEqual(p.aliases, ['明明']);
    assertOk(await req(srv, '/api/v1/people/10001', { method: 'PUT',
      body: { name: '小明', relationship: '好朋友', affinity: 30, reason: '帮我搬家' } }));
    assert.equal(assertOk(await req(srv, '/api/v1/people/10001')).person.affinity, 30);
    const q = assertOk(await req(srv, `/api/v1/people?keywords=${encodeURIComponent('小明')}`));
    assert.equal(q.total, 1);
    const bad = assertError(await req(srv, '/api/v1/people/10002', { method: 'PUT',
      body: { name: '小红', relationship: '同学', affinity: 500, reason: '太高' } }), 400, 'invalid_argument');
    assert.match(bad.message, /affinity/);
    assertError(await req(srv, '/api/v1/people/10002'), 404, 'not_found');
    assertOk(await req(srv, '/api/v1/people/10001', { method: 'DELETE' }));
    assertError(await req(srv, '/api/v1/people/10001'), 404, 'not_found');
    assertError(await req(srv, '/api/v1/people/10001', { method: 'DELETE' }), 404, 'not_found');

    const s = assertOk(await req(srv, '/api/v1/synonyms', { method: 'POST', body: { terms: ['喵星人', '主子'] } }));
    assert.ok(s.expansion.includes('主子'), JSON.stringify(s));
    assertError(await req(srv, '/api/v1/synonyms', { method: 'POST', body: { terms: 'x' } }), 400, 'invalid_argument');
    const syn = JSON.parse(readFileSync(join(srv.dir, 'synonyms.json'), 'utf8'));
    assert.ok(JSON.stringify(syn).includes('主子'));

    // edit and delete by index, with the group as read ("expected"): a
    // group that changed meanwhile is 409 and nothing changes
    const groups = () => JSON.parse(readFileSync(join(srv.dir, 'synonyms.json'), 'utf8')).groups;
    const n = groups().findIndex((g) => g.includes('主子'));
    assertOk(await req(srv, `/api/v1/synonyms/${n}`, { method: 'PUT',
      body: { terms: ['喵星人', '主子', '猫主子'], expected: ['喵星人', '主子'] } }));
    const stale = assertError(await req(srv, `/api/v1/synonyms/${n}`, { method: 'PUT',
      body: { terms: ['喵星人', '主人'], expected: ['喵星人', '主子'] } }), 409, 'conflict');
    assert.deepEqual(stale.details, { reason: 'group_changed', current: ['喵星人', '主子', '猫主子'] });
    const staleDel = assertError(await req(srv, `/api/v1/synonyms/${n}`, { method: 'DELETE',
      body: { expected: ['喵星人', '主子'] } }), 409, 'conflict');
    assert.equal(staleDel.details.reason, 'group_changed');
    assert.deepEqual(groups()[n], ['喵星人', '主子', '猫主子'], 'the refused calls changed nothing');
    assertError(await req(srv, `/api/v1/synonyms/${n}`, { method: 'DELETE', body: '{"expected": [' ,
      headers: { 'content-type': 'application/json' } }), 400, 'invalid_argument');
    const before = groups().length;
    assertOk(await req(srv, `/api/v1/synonyms/${n}`, { method: 'DELETE', body: { expected: ['喵星人', '主子', '猫主子'] } }));
    assert.equal(groups().length, before - 1);
    // without "expected" the index alone still works (older clients)
    assertOk(await req(srv, '/api/v1/synonyms', { method: 'POST', body: { terms: ['汪星人', '狗子'] } }));
    const k = groups().findIndex((g) => g.includes('狗子'));
    assertOk(await req(srv, `/api/v1/synonyms/${k}`, { method: 'DELETE' }));
    assert.equal(groups().findIndex((g) => g.includes('狗子')), -1);

    // merge (201) and supersede
    const a = assertOk(await req(srv, '/api/v1/nodes', { method: 'POST', body: { title: '旧一', content: '甲' } }), 201).node;
    const b = assertOk(await req(srv, '/api/v1/nodes', { method: 'POST', body: { title: '旧二', content: '乙' } }), 201).node;
    const m = await req(srv, '/api/v1/merge', { method: 'POST',
      body: { ids: [a.id, b.id], title: '合并', content: '甲乙', reason: '重复' } });
    const merged = assertOk(m, 201);
    const mid = merged.node?.id ?? merged.id;
    assert.ok(mid, m.text);
    assert.equal(assertOk(await req(srv, `/api/v1/nodes/${a.id}`)).node.supersededBy, mid);
    const c = assertOk(await req(srv, '/api/v1/nodes', { method: 'POST', body: { title: '旧三', content: '丙' } }), 201).node;
    assertOk(await req(srv, '/api/v1/supersede', { method: 'POST', body: { ids: [c.id], replacementId: mid, reason: '过时' } }));
    assert.equal(assertOk(await req(srv, `/api/v1/nodes/${c.id}`)).node.supersededBy, mid);
    assert.equal(assertOk(await req(srv, '/api/v1/nodes')).total, 1);
    assert.equal(assertOk(await req(srv, '/api/v1/nodes?includeSuperseded=true')).total, 4);
    // a supersede target cannot be deleted
    assertError(await req(srv, `/api/v1/nodes/${mid}`, { method: 'DELETE' }), 409, 'conflict');
  });
});

test('REST: config GET/PUT; a bad value is 400 naming the key and leaves the file unchanged', async () => {
  await withServe(async (srv) => {
    const cfg = assertOk(await req(srv, '/api/v1/config'));
    assert.equal(cfg.recallChars, 6000);
    const put = assertOk(await req(srv, '/api/v1/config', { method: 'PUT', body: { recallChars: 3000 } }));
    assert.equal(put.recallChars, 3000);
    const file = join(srv.dir, 'config.json');
    const before = readFileSync(file, 'utf8');
    assert.equal(JSON.parse(before).recallChars, 3000);
    assert.equal(assertOk(await req(srv, '/api/v1/config')).recallChars, 3000);

    for (const [body, key] of [[{ recallChars: 'lots' }, 'recallChars'], [{ recallChars: -1 }, 'recallChars'],
      [{ relationships: 'yes' }, 'relationships']]) {
      const e = assertError(await req(srv, '/api/v1/config', { method: 'PUT', body }), 400, 'invalid_argument');
      assert.ok(e.message.includes(key), `${e.message} should name ${key}`);
      assert.equal(readFileSync(file, 'utf8'), before, 'config.json changed');
    }
    assertError(await req(srv, '/api/v1/config', { method: 'PUT', body: '{"recallChars":',
      headers: { 'content-type': 'application/json' } }), 400, 'invalid_argument');
    assert.equal(readFileSync(file, 'utf8'), before);
    assert.equal(assertOk(await req(srv, '/api/v1/config')).recallChars, 3000);

    // relationship memory off: still managed over REST (the Memory page)
    assert.equal(assertOk(await req(srv, '/api/v1/config', { method: 'PUT', body: { relationships: false } }))
      .relationships, false);
    assertOk(await req(srv, '/api/v1/people/1', { method: 'PUT',
      body: { name: 'a', relationship: 'b', affinity: 0, reason: 'c' } }));
  });
});

test('REST: recall and prefix; X-Zcor-Conversation binds writes and reads', async () => {
  await withServe(async (srv) => {
    const cafe = assertOk(await req(srv, '/api/v1/nodes', { method: 'POST',
      body: { title: '咖啡店', content: '东门咖啡店周一休息', keywords: ['咖啡'] } }), 201).node;
    const r = assertOk(await req(srv, '/api/v1/recall', { method: 'POST',
      body: { conversation: 'group:1', messages: ['咖啡店今天开吗'] } }));
    assert.ok(r.header.includes(cafe.id), r.header);
    assert.ok(r.header.includes('东门咖啡店周一休息'));
    assert.ok(r.items.some((i) => i.id === cafe.id));
    assertError(await req(srv, '/api/v1/recall', { method: 'POST', body: { conversation: 'group:1', messages: 'x' } }),
      400, 'invalid_argument');
    assertError(await req(srv, '/api/v1/recall', { method: 'POST', body: { conversation: 'bad key', messages: ['x'] } }),
      400, 'invalid_argument');

    // a write bound to group:1 gets that scope...
    const secret = assertOk(await req(srv, '/api/v1/nodes', { method: 'POST', conv: 'group:1',
      body: { title: '一群秘密', content: '只在一群说过的拿铁', keywords: ['拿铁'] } }), 201).node;
    assert.equal(secret.scope, 'group:1');
    // ...is visible to group:1...
    const r1 = assertOk(await req(srv, '/api/v1/recall', { method: 'POST', conv: 'group:1',
      body: { messages: ['拿铁好喝吗'] } }));
    assert.ok(r1.header.includes(secret.id), r1.header);
    assert.equal(assertOk(await req(srv, `/api/v1/nodes/${secret.id}`, { conv: 'group:1' })).node.id, secret.id);
    // ...and not to group:2
    const r2 = assertOk(await req(srv, '/api/v1/recall', { method: 'POST', conv: 'group:2',
      body: { messages: ['拿铁好喝吗'] } }));
    assert.ok(!r2.header.includes(secret.id), r2.header);
    assert.ok(!r2.header.includes('只在一群说过的拿铁'));
    assertError(await req(srv, `/api/v1/nodes/${secret.id}`, { conv: 'group:2' }), 404, 'not_found');
    assert.equal(assertOk(await req(srv, `/api/v1/nodes?keywords=${encodeURIComponent('拿铁')}`, { conv: 'group:2' })).total, 0);
    assertError(await req(srv, `/api/v1/nodes/${secret.id}`, { method: 'PUT', conv: 'group:2',
      body: { title: '改', content: '改' } }), 404, 'not_found');
    // global memory is visible from group:2
    assert.equal(assertOk(await req(srv, `/api/v1/nodes/${cafe.id}`, { conv: 'group:2' })).node.id, cafe.id);

    // the prefix carries the rules and the important memories
    assertOk(await req(srv, `/api/v1/nodes/${cafe.id}/important`, { method: 'POST', body: { important: true } }));
    const pre = assertOk(await req(srv, '/api/v1/prefix'));
    assert.equal(typeof pre.prefix, 'string');
    assert.match(pre.prefix, /external_event_frame/);
    assert.ok(pre.prefix.includes('东门咖啡店周一休息'), pre.prefix);
    writeFileSync(join(srv.dir, 'PERSONA.md'), '我是小咪，一只住在图书馆的猫。\n');
    assert.match(assertOk(await req(srv, '/api/v1/prefix?conversation=group:1')).prefix, /小咪/);
    assertError(await req(srv, '/api/v1/prefix?conversation=nope'), 400, 'invalid_argument');
  });
});

test('REST: recalls are counted on the node once the server stops (its pooled handles write what they hold)', async () => {
  const dir = tmp();
  let id;
  await withServe(async (srv) => {
    id = assertOk(await req(srv, '/api/v1/nodes', { method: 'POST',
      body: { title: '拉面馆', content: '北门拉面馆周三休息', keywords: ['拉面'] } }), 201).node.id;
    // three requests on connections of their own, and two at once
    for (let i = 0; i < 3; i++) {
      const r = assertOk(await req(srv, '/api/v1/recall', { method: 'POST',
        body: { conversation: 'group:1', messages: ['拉面馆今天开吗'] } }));
      assert.ok(r.items.some((x) => x.id === id), JSON.stringify(r));
    }
    const both = await Promise.all([0, 1].map(() => req(srv, '/api/v1/recall', { method: 'POST',
      body: { conversation: 'group:1', messages: ['想吃拉面'] } })));
    for (const r of both) assert.ok(assertOk(r).items.some((x) => x.id === id));
  }, { dir });
  const r = spawnSync(BIN, ['--dir', dir, 'tool', 'zcor_memory_read', JSON.stringify({ id })],
    { env: cleanEnv(), encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).node.hits, 5, r.stdout);
});

test('serve --warm: a bad value exits 2 naming --warm; 0 and 8 serve', async () => {
  const dir = tmp();
  for (const bad of ['x', '-1', '1025']) {
    const r = spawnSync(BIN, ['--dir', dir, 'serve', '--warm', bad], { env: cleanEnv(), encoding: 'utf8' });
    assert.equal(r.status, 2, `--warm ${bad}: ${r.stdout}${r.stderr}`);
    assert.match(r.stderr, /--warm/);
  }
  const id = assertOk(await (async () => {
    const srv = await startServeOn(BIN, dir, cleanEnv());
    return runThenStop(srv, () => req(srv, '/api/v1/nodes', { method: 'POST',
      body: { title: '预读测试', content: '周末吃火锅', keywords: ['预读'] } }));
  })(), 201).node.id;
  for (const mb of ['0', '8']) {
    const srv = await startServeOn(BIN, dir, cleanEnv(), ['--warm', mb]);
    await runThenStop(srv, async () => {
      const r = assertOk(await req(srv, '/api/v1/recall', { method: 'POST',
        body: { conversation: 'group:1', messages: ['预读'] } }));
      assert.ok(r.items.some((x) => x.id === id), JSON.stringify(r));
    });
  }
});

test('REST: a host bound to group:2 cannot read group:1 through recall\'s or prefix\'s own conversation field',
  async () => {
  await withServe(async (srv) => {
    const secret = assertOk(await req(srv, '/api/v1/nodes', { method: 'POST', conv: 'group:1',
      body: { title: '一群秘密', content: '只在一群说过的拿铁', keywords: ['拿铁'] } }), 201).node;
    const r = await req(srv, '/api/v1/recall', { method: 'POST', conv: 'group:2',
      body: { conversation: 'group:1', messages: ['拿铁好喝吗'] } });
    // either refused, or answered for group:2 — never group:1's memory
    if (r.status === 200) assert.ok(!r.json.header.includes(secret.id), `binding bypassed: ${r.json.header}`);
    else assertError(r, 403, 'forbidden');
    // the system prefix likewise: an important group:1 memory must not show under a group:2 binding
    assertOk(await req(srv, `/api/v1/nodes/${secret.id}/important`, { method: 'POST', conv: 'group:1', body: { important: true } }));
    const own = assertOk(await req(srv, '/api/v1/prefix', { conv: 'group:1' }));
    assert.ok(own.prefix.includes('只在一群说过的拿铁'), own.prefix);
    assert.ok(!assertOk(await req(srv, '/api/v1/prefix', { conv: 'group:2' })).prefix.includes('只在一群说过的拿铁'));
    const p = await req(srv, '/api/v1/prefix?conversation=group:1', { conv: 'group:2' });
    if (p.status === 200) assert.ok(!p.json.prefix.includes('只在一群说过的拿铁'), 'binding bypassed through prefix?conversation=');
    else assertError(p, 403, 'forbidden');
  });
});

test('REST: backup and restore', async () => {
  await withServe(async (srv) => {
    const a = assertOk(await req(srv, '/api/v1/nodes', { method: 'POST', body: { title: '备份前', content: '保留' } }), 201).node;
    const b = await req(srv, '/api/v1/backup', { method: 'POST' });
    const backup = assertOk(b, 201);
    assert.match(backup.file, /^backups\/memory-state-.*\.json$/);
    assert.ok(existsSync(join(srv.dir, backup.file)));
    assert.equal(JSON.parse(readFileSync(join(srv.dir, backup.file), 'utf8')).version ?? 3, 3);
    const later = assertOk(await req(srv, '/api/v1/nodes', { method: 'POST', body: { title: '备份后', content: '会消失' } }), 201).node;
    const r = assertOk(await req(srv, '/api/v1/restore', { method: 'POST', body: { backupFile: backup.file } }));
    assert.match(r.backupOfPrevious, /^backups\//);
    assert.ok(existsSync(join(srv.dir, r.backupOfPrevious)));
    assertOk(await req(srv, `/api/v1/nodes/${a.id}`));
    assertError(await req(srv, `/api/v1/nodes/${later.id}`), 404, 'not_found');
    // confined to backups/
    assertError(await req(srv, '/api/v1/restore', { method: 'POST', body: { backupFile: '../serve.token' } }),
      400, 'invalid_argument');
    assertError(await req(srv, '/api/v1/restore', { method: 'POST', body: { backupFile: '/etc/passwd' } }),
      400, 'invalid_argument');
    assertError(await req(srv, '/api/v1/restore', { method: 'POST',
      body: { backupFile: 'memory-state-20000101T000000000Z.json' } }), 404, 'not_found');
    assertOk(await req(srv, `/api/v1/nodes/${a.id}`));
  });
});

test('REST: check-reply — every [[图片: …]] must be a collected sticker with its exact extension (Q-STK)', async () => {
  await withServe(async (srv) => {
    mkdirSync(join(srv.dir, 'stickers'), { recursive: true });
    writeFileSync(join(srv.dir, 'stickers', '敲盆.gif'), Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00;', 'latin1'));
    const history = assertOk(await req(srv, '/api/v1/history')).total;
    const check = async (text, conv) => assertOk(await req(srv, '/api/v1/check-reply', { method: 'POST', body: { text }, conv }));
    // the seed's accident: 敲盆.gif written as 敲盆.jpg
    let r = await check('好耶 [[图片: stickers/敲盆.jpg]]');
    assert.equal(r.ok, false);
    assert.deepEqual(r.images, []);
    assert.equal(r.problems.length, 1);
    assert.equal(r.problems[0].image, 'stickers/敲盆.jpg');
    assert.equal(r.problems[0].suggestion, 'stickers/敲盆.gif');
    assert.match(r.problems[0].message, /stickers\/敲盆\.jpg/);
    r = await check('好耶 [[图片: stickers/敲盆.gif]] 再来 [[图片:stickers/敲盆.gif ]]');
    assert.deepEqual(r, { ok: true, images: ['stickers/敲盆.gif', 'stickers/敲盆.gif'], problems: [] });
    // every wrong one is listed, not only the first; the media cache is never sendable
    r = await check('[[图片: stickers/敲盆]] [[图片: media/0123.gif]] [[图片: stickers/../memory.db]] [[图片: stickers/敲盆.gif]]');
    assert.equal(r.ok, false);
    assert.deepEqual(r.problems.map((p) => p.image), ['stickers/敲盆', 'media/0123.gif', 'stickers/../memory.db']);
    assert.deepEqual(r.images, ['stickers/敲盆.gif']);
    r = await check('[[图片: stickers/敲盆.gif');
    assert.equal(r.ok, false);
    assert.equal(r.problems[0].image, null);
    assert.deepEqual(await check('没有图片的回复'), { ok: true, images: [], problems: [] });
    // a caller bound to a conversation gets the same answer (stickers are global)
    assert.equal((await check('[[图片: stickers/敲盆.gif]]', 'private:5')).ok, true);
    // bad bodies name the field and change nothing
    for (const [body, field] of [[{}, 'text'], [{ text: 5 }, 'text'], [{ text: 'x', conversation: 'group:1' }, 'conversation']]) {
      const e = assertError(await req(srv, '/api/v1/check-reply', { method: 'POST', body }), 400, 'invalid_argument');
      assert.match(e.message, new RegExp(`argument '${field}'`));
    }
    assertError(await req(srv, '/api/v1/check-reply', { method: 'POST', body: '[1]' }), 400, 'invalid_argument');
    assertError(await req(srv, '/api/v1/check-reply'), 404, 'not_found');
    // a check is not a memory operation: no history (nor the history
    // query, the operator's read: issue 18)
    assert.equal(assertOk(await req(srv, '/api/v1/history')).total, history);
  });
});

// ---- MCP over HTTP ----------------------------------------------------

async function sdkClient(srv, headers = {}) {
  const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${srv.port}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${srv.token}`, ...headers } },
  });
  const client = new Client({ name: 'zcor-e2e-http', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

async function call(client, name, args = {}) {
  const r = await client.callTool({ name, arguments: args });
  assert.equal(r.isError, false, `${name}: ${JSON.stringify(r.content)}`);
  assert.deepEqual(JSON.parse(r.content[0].text), r.structuredContent);
  return r.structuredContent;
}

async function rejectsWith(promise, code) {
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof McpError, `expected an McpError, got ${e}`);
    assert.equal(e.code, code, e.message);
    return true;
  });
}

test('MCP: the official SDK client over Streamable HTTP — tools of every family, isError, resources, the prefix prompt', async () => {
  await withServe(async (srv) => {
    const { client, transport } = await sdkClient(srv);
    try {
      assert.equal(client.getServerVersion().name, 'zcor');
      assert.ok(transport.sessionId, 'the server gave a session id');
      assert.deepEqual(await client.ping(), {});
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name);
      for (const n of ['zcor_memory_write', 'zcor_memory_read', 'zcor_memory_query', 'zcor_memory_search',
        'zcor_relationship_write', 'zcor_synonyms_add', 'zcor_memory_history', 'zcor_memory_backup'])
        assert.ok(names.includes(n), `missing ${n}`);

      // memory
      const w = await call(client, 'zcor_memory_write', { title: '北大', content: '在海淀', keywords: ['学校'] });
      const id = w.node.id;
      assert.equal((await call(client, 'zcor_memory_read', { id })).node.content, '在海淀');
      assert.equal((await call(client, 'zcor_memory_query', { keywords: ['海淀'] })).total, 1);
      const child = await call(client, 'zcor_memory_write', { title: '未名湖', content: '湖', parentId: id });
      assert.deepEqual((await call(client, 'zcor_memory_trace', { id: child.node.id })).path.map((n) => n.id),
        [id, child.node.id]);
      assert.equal((await call(client, 'zcor_memory_children', { parentId: id })).items.length, 1);
      await call(client, 'zcor_memory_important', { id, important: true });
      // search without a provider: no candidates → empty, no LLM needed
      assert.deepEqual((await call(client, 'zcor_memory_search', { keywords: ['不存在的词'] })).items, []);
      // relationships
      await call(client, 'zcor_relationship_write',
        { personId: '10001', name: '小明', relationship: '朋友', affinity: 10, reason: '一起吃饭' });
      assert.equal((await call(client, 'zcor_relationship_read', { personId: '10001' })).person.name, '小明');
      assert.equal((await call(client, 'zcor_relationship_query', { keywords: ['小明'] })).total, 1);
      // synonyms
      assert.ok((await call(client, 'zcor_synonyms_add', { terms: ['喵星人', '猫咪'] })).expansion.includes('猫咪'));
      // history, as the model
      const h = await call(client, 'zcor_memory_history', { limit: 100 });
      assert.ok(h.items.length >= 8);
      assert.ok(h.items.every((i) => i.actor === 'model'), JSON.stringify(h.items.map((i) => i.actor)));
      // backup
      const b = await call(client, 'zcor_memory_backup');
      assert.ok(existsSync(join(srv.dir, b.file)));

      // tool errors are results with isError
      for (const [name, args, code] of [['zcor_memory_read', { id: 'no-such-id' }, 'not_found'],
        ['zcor_memory_write', { title: 42 }, 'invalid_argument'],
        ['zcor_memory_delete', { id }, 'conflict']]) {
        const r = await client.callTool({ name, arguments: args });
        assert.equal(r.isError, true, `${name} should fail`);
        assert.equal(r.structuredContent.error.code, code);
        assert.equal(r.content[0].text, r.structuredContent.error.message);
      }
      await rejectsWith(client.callTool({ name: 'no_such_tool', arguments: {} }), -32602);

      // resources
      const { resources } = await client.listResources();
      const res = resources.find((r) => r.name === id);
      assert.ok(res, JSON.stringify(resources));
      const { contents } = await client.readResource({ uri: res.uri });
      assert.equal(JSON.parse(contents[0].text).node.title, '北大');
      await rejectsWith(client.readResource({ uri: 'zcor://node/nope' }), -32002);

      // the prompt carries the important memory
      const { prompts } = await client.listPrompts();
      assert.ok(prompts.some((p) => p.name === 'system-prefix'));
      const p = await client.getPrompt({ name: 'system-prefix' });
      assert.match(p.messages[0].content.text, /external_event_frame/);
      assert.ok(p.messages[0].content.text.includes('在海淀'), p.messages[0].content.text);
      await rejectsWith(client.getPrompt({ name: 'nope' }), -32602);
    } finally {
      await transport.terminateSession().catch(() => {});
      await client.close();
    }
  });
});

test('MCP: an SDK client bound with X-Zcor-Conversation writes in that scope', async () => {
  await withServe(async (srv) => {
    const one = await sdkClient(srv, { 'X-Zcor-Conversation': 'group:1' });
    let id;
    try {
      const w = await call(one.client, 'zcor_memory_write', { title: '一群的秘密', content: '只在一群' });
      assert.equal(w.node.scope, 'group:1');
      id = w.node.id;
    } finally {
      await one.client.close();
    }
    const two = await sdkClient(srv, { 'X-Zcor-Conversation': 'group:2' });
    try {
      const r = await two.client.callTool({ name: 'zcor_memory_read', arguments: { id } });
      assert.equal(r.isError, true);
      assert.equal(r.structuredContent.error.code, 'not_found');
    } finally {
      await two.client.close();
    }
  });
});

const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

test('MCP: Mcp-Session-Id is issued and echoed; DELETE ends the session; GET is 405; notifications 202', async () => {
  await withServe(async (srv) => {
    const init = await req(srv, '/mcp', { method: 'POST', body: INIT, headers: MCP_HEADERS });
    assert.equal(init.status, 200, init.text);
    assert.match(init.headers['content-type'], /^application\/json/);
    assert.equal(init.json.result.protocolVersion, '2025-06-18');
    const sid = init.headers['mcp-session-id'];
    assert.match(sid ?? '', /^[\x21-\x7e]{16,}$/, 'a visible-ASCII session id');
    const H = { ...MCP_HEADERS, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' };

    const n = await req(srv, '/mcp', { method: 'POST', headers: H,
      body: { jsonrpc: '2.0', method: 'notifications/initialized' } });
    assert.equal(n.status, 202);
    assert.equal(n.text, '');
    const list = await req(srv, '/mcp', { method: 'POST', headers: H,
      body: { jsonrpc: '2.0', id: 2, method: 'tools/list' } });
    assert.equal(list.status, 200, list.text);
    assert.ok(list.json.result.tools.length > 0);
    // another initialize (no session header) opens another session
    const init2 = await req(srv, '/mcp', { method: 'POST', body: INIT, headers: MCP_HEADERS });
    assert.notEqual(init2.headers['mcp-session-id'], sid);

    // no server-initiated stream
    const get = await req(srv, '/mcp', { headers: { accept: 'text/event-stream', 'mcp-session-id': sid } });
    assert.equal(get.status, 405);

    // an unknown session is 404
    assertError(await req(srv, '/mcp', { method: 'POST', headers: { ...H, 'mcp-session-id': 'nope' },
      body: { jsonrpc: '2.0', id: 3, method: 'ping' } }), 404);

    const del = await req(srv, '/mcp', { method: 'DELETE', headers: { 'mcp-session-id': sid } });
    assert.ok(del.status >= 200 && del.status < 300, `DELETE: ${del.status}`);
    const after = await req(srv, '/mcp', { method: 'POST', headers: H,
      body: { jsonrpc: '2.0', id: 4, method: 'tools/list' } });
    assert.equal(after.status, 404, after.text);
    assertError(await req(srv, '/mcp', { method: 'DELETE', headers: { 'mcp-session-id': sid } }), 404);
    // DELETE needs the token like everything else
    assertError(await req(srv, '/mcp', { method: 'DELETE', auth: false,
      headers: { 'mcp-session-id': init2.headers['mcp-session-id'] } }), 401);

    // without a session header: served statelessly
    const st = await req(srv, '/mcp', { method: 'POST', headers: MCP_HEADERS,
      body: { jsonrpc: '2.0', id: 5, method: 'tools/call',
        params: { name: 'zcor_memory_write', arguments: { title: '无状态', content: '一次调用' } } } });
    assert.equal(st.status, 200, st.text);
    assert.equal(st.json.result.isError, false);
    assert.equal(st.json.result.structuredContent.node.title, '无状态');
    // JSON-RPC errors stay JSON-RPC
    const parse = await req(srv, '/mcp', { method: 'POST', headers: MCP_HEADERS, body: '{"jsonrpc":' });
    assert.equal(parse.status, 200, parse.text);
    assert.equal(parse.json.error.code, -32700);
    const unknown = await req(srv, '/mcp', { method: 'POST', headers: MCP_HEADERS,
      body: { jsonrpc: '2.0', id: 6, method: 'no/such' } });
    assert.equal(unknown.json.error.code, -32601);
  });
});

// ---- a slow provider, and SIGTERM in flight ------------------------------

// A fake OpenAI-compatible server that answers after delayMs with ids().
async function slowProvider(delayMs, ids) {
  const requests = [];
  const server = createServer((q, res) => {
    let data = '';
    q.on('data', (c) => { data += c; });
    q.on('end', () => {
      requests.push({ url: q.url, at: Date.now(), body: data });
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({
          id: 'c1', object: 'chat.completion', created: 1, model: 'test-model',
          choices: [{ index: 0, message: { role: 'assistant', content: JSON.stringify({ ids: ids() }) },
            finish_reason: 'stop' }],
        }));
      }, delayMs);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${server.address().port}/v1`,
    requests,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}

// A directory with two 咖啡 candidates and config.json on the provider.
function providerDir(baseUrl) {
  const dir = tmp();
  const ids = [];
  for (const [title, content] of [['咖啡店在东门', '周一休息'], ['最喜欢的咖啡', '燕麦拿铁']]) {
    const r = tool(dir, 'zcor_memory_write', { title, content });
    assert.equal(r.status, 0, r.stderr);
    ids.push(r.out.node.id);
  }
  writeFileSync(join(dir, 'config.json'), JSON.stringify({
    provider: { baseUrl, model: 'test-model', timeoutMs: 20000 },
  }, null, 2));
  return { dir, ids };
}

// The provider takes 6 s: a request held behind it would take that long,
// so the bounds below leave a loaded 2-core machine room without letting
// a blocked request pass.
test('a slow provider call does not block other requests', async () => {
  let ids = [];
  const prov = await slowProvider(6000, () => ids.slice(0, 1));
  try {
    const ctx = providerDir(prov.baseUrl);
    ids = ctx.ids;
    await withServe(async (srv) => {
      // a few requests first, so the pool has seen connections
      for (let i = 0; i < 4; i++) assertOk(await req(srv, '/api/v1/nodes'));
      const started = Date.now();
      const search = req(srv, '/api/v1/search', { method: 'POST', body: { keywords: ['咖啡'] } });
      // wait until the provider has the request: the search is now in its LLM stage
      while (prov.requests.length === 0) {
        assert.ok(Date.now() - started < 5000, `the provider was never called: ${srv.stderr()}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      const times = [];
      for (let i = 0; i < 10; i++) {
        const t0 = Date.now();
        const r = await req(srv, '/api/v1/nodes');
        times.push(Date.now() - t0);
        assert.equal(assertOk(r).total, 2);
      }
      // and an MCP call and a write, concurrently
      const t1 = Date.now();
      const [w, m] = await Promise.all([
        req(srv, '/api/v1/nodes', { method: 'POST', body: { title: '并发', content: '写入' } }),
        req(srv, '/mcp', { method: 'POST', headers: MCP_HEADERS, body: { jsonrpc: '2.0', id: 1, method: 'ping' } }),
      ]);
      times.push(Date.now() - t1);
      assertOk(w, 201);
      assert.equal(m.status, 200);
      const slowest = Math.max(...times);
      assert.ok(slowest < 2000, `requests during the slow search took up to ${slowest} ms: ${times}`);
      assert.ok(Date.now() - started < 5900, 'the probes finished while the search was pending');

      const s = await search;
      const took = Date.now() - started;
      const out = assertOk(s);
      assert.deepEqual(out.items.map((n) => n.id), [ids[0]]);
      assert.ok(took >= 5900, `the search took ${took} ms`);
    }, { dir: ctx.dir });
  } finally {
    await prov.close();
  }
});

test('a slow provider call does not block other requests on kept-alive connections (a browser\'s)',
  async () => {
    let ids = [];
    const prov = await slowProvider(6000, () => ids.slice(0, 1));
    // 30 browser-like connections, each kept alive by an agent of its own
    // (with the search's, 31: serve takes at most 32 from one address)
    const agents = Array.from({ length: 30 }, () => new Agent({ keepAlive: true, maxSockets: 1 }));
    try {
      const ctx = providerDir(prov.baseUrl);
      ids = ctx.ids;
      await withServe(async (srv) => {
        // opened one after another, so the server's threads accept them in turn
        for (const agent of agents) {
          assertOk(await req(srv, '/api/v1/nodes', { agent }));
          await new Promise((r) => setTimeout(r, 5));
        }
        const started = Date.now();
        const search = req(srv, '/api/v1/search', { method: 'POST', body: { keywords: ['咖啡'] } });
        while (prov.requests.length === 0) {
          assert.ok(Date.now() - started < 5000, `the provider was never called: ${srv.stderr()}`);
          await new Promise((r) => setTimeout(r, 20));
        }
        // a request that writes nothing (a query records its call in
        // history, and 30 of those at once wait on each other's fsync —
        // the store's serialisation, not the slow provider)
        const times = await Promise.all(agents.map(async (agent) => {
          const t0 = Date.now();
          assertOk(await req(srv, '/api/v1/config', { agent }));
          return Date.now() - t0;
        }));
        assertOk(await search);
        assert.ok(Math.max(...times) < 3000, `kept-alive requests during the slow search took up to ${Math.max(...times)} ms`);
      }, { dir: ctx.dir });
    } finally {
      for (const agent of agents) agent.destroy();
      await prov.close();
    }
  });

// Starts a search that waits 2 s on the provider, sends SIGTERM once the
// provider has the request, and returns what the client got and when the
// server exited.
async function sigtermDuringSearch() {
  let ids = [];
  const prov = await slowProvider(2000, () => ids.slice(0, 2));
  try {
    const ctx = providerDir(prov.baseUrl);
    ids = ctx.ids;
    const srv = await startServe(ctx.dir);
    let stopped = false;
    try {
      assertOk(await req(srv, '/api/v1/nodes', { method: 'POST', body: { title: '停机前', content: '写完了' } }), 201);
      const started = Date.now();
      const search = req(srv, '/api/v1/search', { method: 'POST', body: { keywords: ['咖啡'] } })
        .then((r) => r, (e) => ({ error: e }));
      while (prov.requests.length === 0) {
        assert.ok(Date.now() - started < 5000, `the provider was never called: ${srv.stderr()}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      srv.proc.kill('SIGTERM');
      await srv.stop(); // exit code 0, checked
      stopped = true;
      const exitedAfter = Date.now() - started;
      return { ctx, srv, ids, response: await search, exitedAfter };
    } finally {
      if (!stopped) await srv.stop().catch(() => {});
    }
  } finally {
    await prov.close();
  }
}

test('SIGTERM while a slow search is in flight: the server finishes it, exits 0, the store is intact', async () => {
  const { ctx, srv, exitedAfter } = await sigtermDuringSearch();
  assert.ok(exitedAfter >= 1900, `the server exited after ${exitedAfter} ms, before the search was done`);
  assert.match(srv.stderr(), /SIGTERM/);
  // the store is intact and usable by the next process
  const q = tool(ctx.dir, 'zcor_memory_query', {});
  assert.equal(q.status, 0, q.stderr);
  assert.equal(q.out.total, 3);
  assert.ok(q.out.items.some((n) => n.title === '停机前'));
  const h = tool(ctx.dir, 'zcor_memory_history', { limit: 100 });
  assert.equal(h.status, 0, h.stderr);
  // (the search is the operator's read: not recorded, issue 18; the
  // write before it is)
  assert.ok(h.out.items.some((i) => i.operation === 'zcor_memory_write' && i.actor === 'ui' && i.status === 'ok'));
  assert.ok(!h.out.items.some((i) => i.operation === 'zcor_memory_search' && i.actor === 'ui'));
});

test('SIGTERM while a slow search is in flight: the client gets the answer or a clean JSON error',
  async () => {
    const { ids, srv, response: s } = await sigtermDuringSearch();
    assert.ok(!s.error, `the in-flight search lost its connection: ${s.error?.message}; ${srv.stderr()}`);
    if (s.status === 200) assert.deepEqual(s.json.items.map((n) => n.id), ids.slice(0, 2));
    else assertError(s, s.status);
  });

test('SIGINT stops the server with exit 0 too', async () => {
  const srv = await startServe();
  assertOk(await req(srv, '/api/v1/nodes'));
  srv.proc.kill('SIGINT');
  const r = await srv.exited;
  assert.equal(r.code, 0, srv.stderr());
  assert.match(srv.stderr(), /SIGINT/);
});
