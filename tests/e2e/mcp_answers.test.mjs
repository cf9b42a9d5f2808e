// mcp_answers.test.mjs — issue 12, defect 3: every JSON-RPC request with an
// id gets exactly one answer, over both real transports: `zcor mcp` (stdio,
// one line in, one line out) and `zcor serve`'s /mcp (one POST, one JSON
// body; a notification is 202 with an empty body).
//
// The repros: an error message cut with %.100s split a character of a
// 50-character Chinese name; jansson refused the message and nothing was
// sent (stdio: no line; HTTP: 202 with an empty body). Here: unknown
// method, unknown tool, unknown prompt, resources/read of a bad URI; ids
// of every JSON type; and a PERSONA.md that is not UTF-8 (the system
// prefix carries it). The messages are sent as raw text, so the ids and
// escapes are exactly as written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { request, runThenStop, startServe } from '../net.mjs';
import { mkTmp } from '../tmpdir.mjs';

const BIN = process.env.ZCOR_BIN;
assert.ok(BIN, 'ZCOR_BIN must name the zcor binary');

function cleanEnv() {
  const e = { ...process.env };
  delete e.ZCOR_DIR;
  delete e.ZCOR_TOKEN;
  return e;
}

const ZH50 = '中'.repeat(50); // 150 bytes: %.100s split its 34th character
const INIT = '{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18",'
  + '"capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}';
const INITIALIZED = '{"jsonrpc":"2.0","method":"notifications/initialized"}';
const rpc = (id, method, params) =>
  `{"jsonrpc":"2.0","id":${id},"method":${JSON.stringify(method)}${params ? `,"params":${JSON.stringify(params)}` : ''}}`;

// Each case: the raw message, then what must come back: `id` is the raw
// JSON text of the answer's id (null when JSON-RPC cannot use the one
// sent), `code` the error code or undefined for a result, `quotes` text
// the error message must hold whole. `answer: false`: a notification.
const CASES = [
  // the four repros
  { line: rpc(2, ZH50), id: '2', code: -32601, quotes: ZH50 },
  { line: rpc(3, 'tools/call', { name: ZH50, arguments: {} }), id: '3', code: -32602, quotes: ZH50 },
  { line: rpc(4, 'prompts/get', { name: ZH50 }), id: '4', code: -32602, quotes: ZH50 },
  { line: rpc(5, 'resources/read', { uri: `zcor://node/${ZH50}/${ZH50}` }), id: '5', code: -32602, quotes: ZH50 },
  { line: rpc(6, 'resources/read', { uri: `zcor://memory/${ZH50}` }), id: '6', code: -32602, quotes: ZH50 },
  { line: rpc(7, 'resources/read', { uri: `zcor://node/${ZH50}` }), id: '7', code: -32002, quotes: ZH50 },
  // ids of every JSON type; a string or an integer is echoed exactly
  { line: rpc(0, 'ping'), id: '0' },
  { line: rpc(-7, 'ping'), id: '-7' },
  { line: rpc('9007199254740993', 'ping'), id: '9007199254740993' }, // beyond a double: echoed as sent
  { line: rpc('"请求-中文"', 'ping'), id: '"请求-中文"' },
  { line: rpc('"\\u4e2d\\u6587\\ud83d\\ude00"', 'ping'), id: '"中文😀"' },
  { line: rpc('""', ZH50), id: '""', code: -32601 },
  { line: rpc(`"${ZH50}"`, 'tools/call', { name: ZH50 }), id: `"${ZH50}"`, code: -32602 },
  // MCP forbids a null id; JSON-RPC 2.0 answers such a request (a
  // notification is a request *without* an id member) — with id null
  { line: rpc('null', 'ping'), id: 'null', code: -32600 },
  { line: rpc('1.5', 'ping'), id: 'null', code: -32600 },
  { line: rpc('true', 'ping'), id: 'null', code: -32600 },
  { line: rpc('{"a":1}', 'ping'), id: 'null', code: -32600 },
  { line: rpc('[1]', 'ping'), id: 'null', code: -32600 },
  { line: rpc('"\\ud800"', 'ping'), id: 'null', code: -32700 }, // a lone surrogate is not JSON
  // notifications: no id member, no answer, whatever the method
  { line: `{"jsonrpc":"2.0","method":"${ZH50}"}`, answer: false },
  { line: `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"${ZH50}"}}`, answer: false },
  // text that is not UTF-8 in a result: PERSONA.md is in the system prefix
  { line: rpc(8, 'prompts/get', { name: 'system-prefix' }), id: '8', prefix: true },
];

// A memory directory whose PERSONA.md holds bytes that are not UTF-8.
function memoryDir() {
  const dir = mkTmp('zcor-answers-');
  writeFileSync(join(dir, 'PERSONA.md'), Buffer.concat([
    Buffer.from('我是'), Buffer.from([0xff, 0xfe]), Buffer.from('小助手\n')]));
  return dir;
}

// One answer: one JSON-RPC 2.0 object for the case's id, exactly one of
// result / error, and what the case asks of it.
function checkAnswer(c, text) {
  const what = `answer to ${c.line.slice(0, 120)}: ${text.slice(0, 300)}`;
  let v;
  assert.doesNotThrow(() => { v = JSON.parse(text); }, what);
  assert.equal(typeof v, 'object', what);
  assert.ok(v && !Array.isArray(v), what);
  assert.equal(v.jsonrpc, '2.0', what);
  assert.notEqual('result' in v, 'error' in v, what);
  // the id as raw text, so an integer beyond 2^53 is compared exactly
  const raw = /^\{"jsonrpc":"2\.0","id":(.*?),"(?:result|error)":/.exec(text);
  assert.ok(raw, what);
  assert.deepEqual(JSON.parse(raw[1]), JSON.parse(c.id), what);
  if (/^-?\d+$/.test(c.id)) assert.equal(raw[1], c.id, what);
  if (c.code === undefined) {
    assert.ok(v.result, what);
  } else {
    assert.equal(v.error?.code, c.code, what);
    assert.equal(typeof v.error.message, 'string', what);
    if (c.quotes) assert.ok(v.error.message.includes(c.quotes), what);
  }
  if (c.prefix) assert.match(v.result.messages[0].content.text, /我是\ufffd\ufffd小助手/, what);
}

test('stdio: every request with an id gets exactly one answer line, in order', async () => {
  const p = spawn(BIN, ['--dir', memoryDir(), 'mcp'], { env: cleanEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
  const out = [];
  let stderr = '';
  p.stdout.on('data', (d) => out.push(d));
  p.stderr.on('data', (d) => { stderr += d; });
  const exited = new Promise((resolve) => p.on('close', (code) => resolve(code)));
  p.stdin.end([INIT, INITIALIZED, ...CASES.map((c) => c.line)].join('\n') + '\n');
  assert.equal(await exited, 0, stderr);
  const lines = Buffer.concat(out).toString('utf8').split('\n');
  assert.equal(lines.pop(), '', 'the output ends with a newline');
  const answered = CASES.filter((c) => c.answer !== false);
  assert.equal(lines.length, 1 + answered.length,
    `one line for initialize and each request with an id:\n${lines.map((l) => l.slice(0, 160)).join('\n')}`);
  assert.equal(JSON.parse(lines[0]).id, 'init');
  answered.forEach((c, i) => checkAnswer(c, lines[1 + i]));
});

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

test('HTTP /mcp: every POST of a request with an id gets one JSON answer; a notification is 202', async () => {
  const srv = await startServe(BIN, memoryDir(), cleanEnv());
  await runThenStop(srv, async () => {
    const init = await request(srv, '/mcp', { method: 'POST', body: INIT, headers: MCP_HEADERS });
    assert.equal(init.status, 200, init.text);
    const sid = init.headers['mcp-session-id'];
    assert.ok(sid);
    const inSession = { ...MCP_HEADERS, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' };
    const n = await request(srv, '/mcp', { method: 'POST', body: INITIALIZED, headers: inSession });
    assert.equal(n.status, 202);
    // in the session, and statelessly (no session header)
    for (const headers of [inSession, MCP_HEADERS]) {
      for (const c of CASES) {
        const r = await request(srv, '/mcp', { method: 'POST', body: c.line, headers });
        if (c.answer === false) {
          assert.equal(r.status, 202, `${c.line.slice(0, 80)}: ${r.status} ${r.text}`);
          assert.equal(r.text, '');
          continue;
        }
        assert.equal(r.status, 200, `${c.line.slice(0, 80)}: ${r.status} ${r.text}`);
        assert.match(r.headers['content-type'] ?? '', /^application\/json/);
        checkAnswer(c, r.text);
      }
    }
  });
});
