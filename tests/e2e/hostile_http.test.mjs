// hostile_http.test.mjs — `zcor serve` against hostile requests (issue 12:
// "no crash on any request"). The requests are data, in
// tests/hostile/http-matrix.json (its "about" says how to read it): each
// is sent as raw bytes over a real TCP socket (node:net) to a real
// server, and must get an answer of the listed status class (or a
// closed connection, where listed) whose body parses when it says it is
// JSON; after each one the server must still answer, and at the end the
// store and config.json must be as before and every access-log line
// valid JSON. Beside the matrix, the crashes the matrix found that need
// a file set up (PERSONA.md that is not UTF-8).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';

import { request, runThenStop, startServe } from '../net.mjs';
import { mkTmp } from '../tmpdir.mjs';

const BIN = process.env.ZCOR_BIN;
assert.ok(BIN, 'ZCOR_BIN must name the zcor binary');

const MATRIX = JSON.parse(readFileSync(new URL('../hostile/http-matrix.json', import.meta.url), 'utf8'));

function cleanEnv() {
  const e = { ...process.env };
  delete e.ZCOR_DIR;
  delete e.ZCOR_TOKEN;
  return e;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

// A string of the matrix as bytes: placeholders replaced, \xNN as byte NN.
function bytes(s, vars) {
  const text = s.replace(/\{(host|token|port|len)\}/g, (m, k) => String(vars[k]));
  const out = [];
  let last = 0;
  for (const m of text.matchAll(/\\x([0-9a-fA-F]{2})/g)) {
    out.push(Buffer.from(text.slice(last, m.index), 'utf8'), Buffer.from([parseInt(m[1], 16)]));
    last = m.index + m[0].length;
  }
  out.push(Buffer.from(text.slice(last), 'utf8'));
  return Buffer.concat(out);
}

// A line or body: a string, or a list of strings and {repeat, times, sep}.
function parts(p, vars) {
  if (p === undefined) return Buffer.alloc(0);
  if (typeof p === 'string') return bytes(p, vars);
  return Buffer.concat(p.map((x) => (typeof x === 'string' ? bytes(x, vars)
    : bytes(Array(x.times).fill(x.repeat).join(x.sep ?? ''), vars))));
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Sends one case over a socket of its own; resolves { closed, status,
// headers, body (Buffer), ms } — closed: no answer came before the server
// closed the connection.
function exchange(port, c, vars) {
  const body = parts(c.body, vars);
  const v = { ...vars, len: body.length };
  const end = c.lineEnd ?? '\r\n';
  const lines = c.send.map((l) => Buffer.concat([parts(l, v), Buffer.from(end)]));
  const head = Buffer.concat([...lines, Buffer.from(end)]);
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const sock = connect({ host: '127.0.0.1', port });
    const chunks = [];
    let gone = false, done = false;
    const timer = setTimeout(() => finish(new Error(`no answer and no close within 15 s`)), 15000);
    function parse() {
      const all = Buffer.concat(chunks);
      const sep = all.indexOf('\r\n\r\n');
      if (sep < 0) return null;
      const [statusLine, ...hs] = all.subarray(0, sep).toString('latin1').split('\r\n');
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
      if (!m) return { bad: statusLine };
      const headers = {};
      for (const h of hs) {
        const i = h.indexOf(':');
        headers[h.slice(0, i).trim().toLowerCase()] = h.slice(i + 1).trim();
      }
      const rest = all.subarray(sep + 4);
      const cl = headers['content-length'];
      if (cl !== undefined && rest.length < Number(cl)) return null;
      return { status: Number(m[1]), headers, body: cl !== undefined ? rest.subarray(0, Number(cl)) : rest };
    }
    function finish(err, r) {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      if (err) reject(err); else resolve({ ...r, ms: Date.now() - t0 });
    }
    sock.on('data', (d) => {
      chunks.push(d);
      const r = parse();
      if (r && !r.bad && r.headers['content-length'] !== undefined) finish(null, { closed: false, ...r });
    });
    sock.on('error', () => { gone = true; });
    sock.on('close', () => {
      gone = true;
      if (!chunks.length) return finish(null, { closed: true });
      const r = parse();
      if (!r || r.bad) return finish(new Error(`not an HTTP answer: ${Buffer.concat(chunks).toString('latin1').slice(0, 200)}`));
      finish(null, { closed: false, ...r });
    });
    sock.on('connect', async () => {
      try {
        if (!c.slowMs) {
          sock.write(Buffer.concat([head, body]));
          return;
        }
        if (c.slow === 'body') {
          sock.write(head);
          for (const b of body) {
            await sleep(c.slowMs);
            if (gone || done) return;
            sock.write(Buffer.from([b]));
          }
          return;
        }
        for (const l of lines) {
          if (gone || done) return;
          sock.write(l);
          await sleep(c.slowMs);
        }
        if (!gone && !done) sock.write(Buffer.concat([Buffer.from(end), body]));
      } catch { /* the server closed: checked by the outcome */ }
    });
  });
}

function outcomeOk(r, expect) {
  return expect.some((e) => (e === 'closed' ? r.closed
    : !r.closed && (/^\dxx$/.test(e) ? Math.floor(r.status / 100) === Number(e[0]) : r.status === Number(e))));
}

// Checks one answer against its case.
function check(c, r) {
  const what = r.closed ? 'closed' : `${r.status} ${r.headers['content-type'] ?? ''} ${r.body.toString('latin1').slice(0, 300)}`;
  assert.ok(outcomeOk(r, c.expect), `${c.id}: got ${what}, expected ${c.expect.join(' or ')}`);
  if (r.closed) {
    if (c.closedWithinMs) assert.ok(r.ms <= c.closedWithinMs, `${c.id}: closed after ${r.ms} ms`);
    return;
  }
  assert.ok(r.status < 500 || c.expect.includes(String(r.status)), `${c.id}: ${what}`);
  if (c.answerWithinMs) assert.ok(r.ms <= c.answerWithinMs, `${c.id}: answered after ${r.ms} ms`);
  const isJson = /^application\/json/.test(r.headers['content-type'] ?? '');
  if (c.json) assert.ok(isJson, `${c.id}: not JSON: ${what}`);
  if (!isJson) return;
  let text, j;
  assert.doesNotThrow(() => { text = utf8.decode(r.body); }, `${c.id}: the JSON is not valid UTF-8`);
  assert.doesNotThrow(() => { j = JSON.parse(text); }, `${c.id}: the JSON does not parse: ${text.slice(0, 300)}`);
  if (r.status >= 400 && !j.jsonrpc) {
    assert.equal(typeof j.error?.code, 'string', `${c.id}: ${text}`);
    assert.equal(typeof j.error?.message, 'string', `${c.id}: ${text}`);
    assert.ok(j.error.message.length > 0);
  }
  if (j.jsonrpc) assert.ok('error' in j || 'result' in j, `${c.id}: ${text}`);
  if (Array.isArray(j)) for (const x of j) assert.ok(x && ('error' in x || 'result' in x), `${c.id}: ${text}`);
  if (c.code) assert.equal(j.error?.code, c.code, `${c.id}: ${text}`);
  if (c.mentions) assert.ok(j.error?.message?.includes(c.mentions), `${c.id}: the message should name ${c.mentions}: ${text}`);
}

test('hostile HTTP matrix (tests/hostile/http-matrix.json): every request answered or closed, serve alive and the store unchanged', async (t) => {
  const dir = mkTmp('zcor-hostile-');
  const srv = await startServe(BIN, dir, cleanEnv(), ['--header-timeout', '3', '--body-timeout', '3']);
  await runThenStop(srv, async () => {
    const seed = await request(srv, '/api/v1/nodes', { method: 'POST', body: { title: '原样', content: '不被改动的记忆' } });
    assert.equal(seed.status, 201, seed.text);
    const id = seed.json.node.id;
    const cfgBefore = (await request(srv, '/api/v1/config')).text;
    const vars = { host: `127.0.0.1:${srv.port}`, token: srv.token, port: srv.port };
    for (const c of MATRIX.cases) {
      const label = c.issue ? `[issue ${c.issue.replace('#', ' #')}] ${c.id}` : c.id;
      await t.test(label, async () => {
        const r = await exchange(srv.port, c, vars);
        check(c, r);
        // still alive, and nothing changed
        const alive = await request(srv, '/api/v1/nodes?limit=1');
        assert.equal(alive.status, 200, `after ${c.id}: ${alive.status} ${alive.text}\n${srv.stderr().slice(-2000)}`);
        assert.equal(alive.json.total, 1, `after ${c.id} the store has ${alive.json.total} memories`);
      });
    }
    const node = await request(srv, `/api/v1/nodes/${id}`);
    assert.equal(node.status, 200);
    assert.equal(node.json.node.content, '不被改动的记忆');
    assert.equal((await request(srv, '/api/v1/config')).text, cfgBefore);
  });
  // every access-log line is one JSON object (paths and methods quoted safely)
  for (const line of srv.stderr().split('\n').filter((l) => l.startsWith('{')))
    assert.doesNotThrow(() => JSON.parse(line), `not JSON: ${line}`);
});

test('issue 12 #2: a PERSONA.md that is not UTF-8 does not crash GET /api/v1/prefix', async () => {
  const dir = mkTmp('zcor-hostile-');
  writeFileSync(join(dir, 'PERSONA.md'), Buffer.from([0xe4, 0xbd, 0xa0, 0xff, 0x0a, 0xc3]));
  const srv = await startServe(BIN, dir, cleanEnv());
  await runThenStop(srv, async () => {
    const r = await request(srv, '/api/v1/prefix');
    assert.equal(r.status, 200, `${r.status} ${r.text}`);
    assert.ok(r.json.prefix.startsWith('你\ufffd'), r.json.prefix.slice(0, 20));
    assert.equal((await request(srv, '/api/v1/nodes')).status, 200);
  });
});
