// serve_limits.test.mjs — `zcor serve` under slow and many connections
// (issue 12, defect 5: 256 connections that each sent a request line and
// then a header line every 10 s locked every client out, without a
// token). Connections are bounded per client address (32) and a
// connection has an absolute deadline for its headers (--header-timeout)
// and its body (--body-timeout), not only MHD's idle timeout that a
// trickle resets. The whole 127/8 is loopback: the attackers connect from
// 127.0.0.1, the legitimate client from 127.0.0.2.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';

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

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// One GET from a given local address, with a deadline of its own.
function get(srv, path, { from = '127.0.0.2', auth = true, timeoutMs = 5000 } = {}) {
  return new Promise((resolve, reject) => {
    const headers = { host: `127.0.0.1:${srv.port}` };
    if (auth) headers.authorization = `Bearer ${srv.token}`;
    const r = httpRequest({ host: '127.0.0.1', port: srv.port, path, headers, localAddress: from, agent: false },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c) => { text += c; });
        res.on('end', () => resolve({ status: res.statusCode, text }));
      });
    r.setTimeout(timeoutMs, () => r.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    r.on('error', reject);
    r.end();
  });
}

// A slow-loris client: a request line, then a header line every gapMs,
// never the end of the headers. .closedAt is when the server closed it.
function slowClient(port, gapMs, from = '127.0.0.1') {
  const c = { closed: false, closedAt: 0, openedAt: Date.now() };
  const sock = connect({ host: '127.0.0.1', port, localAddress: from });
  c.sock = sock;
  let timer = null;
  sock.on('connect', () => {
    sock.write('GET /api/v1/nodes HTTP/1.1\r\n');
    timer = setInterval(() => { if (!c.closed) sock.write('X-Slow: 1\r\n'); }, gapMs);
  });
  sock.on('data', () => {});
  sock.on('error', () => {});
  sock.on('close', () => { c.closed = true; c.closedAt = Date.now(); clearInterval(timer); });
  c.stop = () => { clearInterval(timer); sock.destroy(); };
  return c;
}

test('[issue 12 #5] 256 slow connections from one address: the page and the API still answer another client', async () => {
  const dir = mkTmp('zcor-limits-');
  const srv = await startServe(BIN, dir, cleanEnv());
  const attackers = [];
  await runThenStop(srv, async () => {
    try {
      for (let i = 0; i < 256; i++) attackers.push(slowClient(srv.port, 2000));
      await sleep(1500);
      // meanwhile another client is answered, page and API
      const t0 = Date.now();
      const api = await get(srv, '/api/v1/nodes');
      assert.equal(api.status, 200, api.text);
      const page = await get(srv, `/?token=${srv.token}`, { auth: false });
      assert.equal(page.status, 200);
      assert.match(page.text, /<html/i);
      assert.ok(Date.now() - t0 < 3000, `answers took ${Date.now() - t0} ms`);
      // several at once too, from a third address
      const many = await Promise.all(Array.from({ length: 8 }, () => get(srv, '/api/v1/config', { from: '127.0.0.3' })));
      assert.deepEqual(many.map((r) => r.status), Array(8).fill(200));
      // the server holds at most 32 of the slow ones; the others it closed at once
      const open = attackers.filter((a) => !a.closed).length;
      assert.ok(open <= 32, `${open} slow connections from one address are still open`);
    } finally {
      for (const a of attackers) a.stop();
    }
  });
});

test('[issue 12 #5] 8 addresses × 32 slow connections, reconnecting when cut: another client is still answered', async () => {
  const dir = mkTmp('zcor-limits-');
  const srv = await startServe(BIN, dir, cleanEnv());
  const attackers = [];
  let stop = false;
  // each slot reopens as soon as the server closes it (evicted or refused)
  const slot = (from) => {
    const c = slowClient(srv.port, 1000, from);
    attackers.push(c);
    c.sock.on('close', () => { if (!stop) setTimeout(() => slot(from), 20); });
  };
  await runThenStop(srv, async () => {
    try {
      for (let a = 2; a < 10; a++) for (let i = 0; i < 32; i++) slot(`127.0.0.${a}`);
      await sleep(1500);
      const results = [];
      for (let i = 0; i < 12; i++) {
        results.push(await get(srv, '/api/v1/config', { from: '127.0.0.200', timeoutMs: 3000 }).then((r) => r.status, (e) => e.message));
        await sleep(100);
      }
      assert.deepEqual(results, Array(12).fill(200));
    } finally {
      stop = true;
      for (const a of attackers) a.stop();
    }
  });
});

test('[issue 12 #5] --header-timeout is a deadline for the whole header, however slowly it trickles in', async () => {
  const dir = mkTmp('zcor-limits-');
  const srv = await startServe(BIN, dir, cleanEnv(), ['--header-timeout', '2', '--body-timeout', '2']);
  await runThenStop(srv, async () => {
    // a header line every 300 ms keeps MHD's idle timer (60 s) from ever firing
    const slow = slowClient(srv.port, 300);
    // a connection that sends nothing at all
    const idle = connect({ host: '127.0.0.1', port: srv.port });
    let idleClosedAt = 0;
    idle.on('error', () => {});
    idle.on('close', () => { idleClosedAt = Date.now(); });
    const t0 = Date.now();
    while ((!slow.closed || !idleClosedAt) && Date.now() - t0 < 6000) await sleep(50);
    slow.stop();
    idle.destroy();
    assert.ok(slow.closed, 'a slow header sender was never cut off');
    const took = slow.closedAt - slow.openedAt;
    assert.ok(took >= 1800 && took < 4000, `the slow sender was closed after ${took} ms (deadline 2 s)`);
    assert.ok(idleClosedAt && idleClosedAt - t0 < 4000, 'an idle connection was not closed at the header deadline');
    assert.match(srv.stderr(), /"event":"deadline","phase":"headers"/);
    // a request at a normal pace is answered, and another one on the same connection
    const ok = await get(srv, '/api/v1/nodes', { from: '127.0.0.1' });
    assert.equal(ok.status, 200, ok.text);
  });
});

test('[issue 12 #5] --body-timeout bounds a body sent byte by byte; a body in a few parts is fine', async () => {
  const dir = mkTmp('zcor-limits-');
  const srv = await startServe(BIN, dir, cleanEnv(), ['--header-timeout', '2', '--body-timeout', '2']);
  await runThenStop(srv, async () => {
    const body = JSON.stringify({ text: 'x'.repeat(60) });
    const head = `POST /api/v1/check-reply HTTP/1.1\r\nHost: 127.0.0.1:${srv.port}\r\n`
      + `Authorization: Bearer ${srv.token}\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`;
    // byte by byte, one every 200 ms: 14 s for the whole body
    const sock = connect({ host: '127.0.0.1', port: srv.port });
    let closedAt = 0, answer = '';
    sock.on('data', (d) => { answer += d; });
    sock.on('error', () => {});
    sock.on('close', () => { closedAt = Date.now(); });
    await new Promise((r) => sock.on('connect', r));
    sock.write(head);
    const t0 = Date.now();
    for (let i = 0; i < body.length && !closedAt; i++) {
      sock.write(body[i]);
      await sleep(200);
    }
    sock.destroy();
    assert.ok(closedAt, 'a byte-by-byte body was never cut off');
    assert.ok(closedAt - t0 >= 1800 && closedAt - t0 < 4000, `closed after ${closedAt - t0} ms (deadline 2 s)`);
    assert.equal(answer, '', 'nothing is answered to a request whose body never came');
    assert.match(srv.stderr(), /"event":"deadline","phase":"body"/);

    // the same body in three parts, 0.5 s apart: answered
    const r = await new Promise((resolve, reject) => {
      const s = connect({ host: '127.0.0.1', port: srv.port });
      let text = '';
      s.on('data', (d) => { text += d; });
      s.on('error', reject);
      s.on('close', () => resolve(text));
      s.on('connect', async () => {
        s.write(head);
        for (const part of [body.slice(0, 20), body.slice(20, 40), body.slice(40)]) {
          await sleep(500);
          s.write(part);
        }
      });
    });
    assert.match(r, /^HTTP\/1\.1 200 /, r);
  });
});

test('serve --header-timeout / --body-timeout: a bad value exits 2 naming the option', () => {
  const dir = mkTmp('zcor-limits-');
  for (const [opt, v] of [['--header-timeout', '0'], ['--header-timeout', 'soon'], ['--body-timeout', '-3'],
    ['--body-timeout', '99999']]) {
    const r = spawnSync(BIN, ['--dir', dir, 'serve', '--listen', '127.0.0.1:1', opt, v],
      { env: cleanEnv(), encoding: 'utf8', timeout: 10000 });
    assert.equal(r.status, 2, `${opt} ${v}: ${r.stderr}`);
    assert.ok(r.stderr.includes(opt), r.stderr);
  }
});

// A body announced over the 1 MiB cap is refused as soon as the headers
// are in (413), not after the client sent it all (audit of issue 12).
test('[issue 12 #5] Content-Length over the cap: 413 before any of the body is sent', async () => {
  const dir = mkTmp('zcor-limits-');
  const srv = await startServe(BIN, dir, cleanEnv());
  await runThenStop(srv, async () => {
    const answer = await new Promise((resolve, reject) => {
      const sock = connect({ host: '127.0.0.1', port: srv.port });
      let text = '';
      const timer = setTimeout(() => { sock.destroy(); resolve(text || 'no answer within 3 s'); }, 3000);
      sock.on('connect', () => sock.write(`POST /api/v1/nodes HTTP/1.1\r\nHost: 127.0.0.1:${srv.port}\r\n` +
        `Authorization: Bearer ${srv.token}\r\nContent-Type: application/json\r\nContent-Length: 2000000\r\n\r\n`));
      sock.on('data', (c) => { text += c; if (text.includes('\r\n\r\n') && text.includes('}')) { clearTimeout(timer); sock.destroy(); resolve(text); } });
      sock.on('error', reject);
    });
    assert.match(answer, /^HTTP\/1\.1 413/, answer);
  });
});

// A client that sends the whole oversized body without waiting (fetch, a
// bot's HTTP library) must read the 413, not a reset: the server drains
// what it refused before closing (lingering close). Without the drain
// about one request in thirty failed with EPIPE or ECONNRESET here.
test('[issue 12 #5] a client sending 1 MiB + 1 at once gets the 413 every time, never a reset', async () => {
  const dir = mkTmp('zcor-limits-');
  const srv = await startServe(BIN, dir, cleanEnv());
  await runThenStop(srv, async () => {
    const big = Buffer.alloc((1 << 20) + 1, 0x61);
    const failures = [];
    for (let i = 0; i < 120; i++) {
      try {
        const r = await request(srv, i % 2 ? '/mcp' : '/api/v1/nodes', { method: 'POST', body: big,
          headers: { 'content-type': 'application/json' } });
        if (r.status !== 413) failures.push(`#${i}: ${r.status}`);
      } catch (e) {
        failures.push(`#${i}: ${e.code || e.message}`);
      }
    }
    assert.deepEqual(failures, []);
  });
});
