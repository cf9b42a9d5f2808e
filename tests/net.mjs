// net.mjs — what the node tests share to talk to a real `zcor serve`: a
// free port, a server started on a directory and stopped (exit 0 checked),
// and one HTTP request with the token and an optional conversation.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';

export async function freePort() {
  const s = createServer();
  await new Promise((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address();
  await new Promise((resolve) => s.close(resolve));
  return port;
}

// Starts `bin --dir dir serve [args…]` on a free port (another one if that
// port was taken meanwhile); resolves once it printed its URL, with { dir,
// port, token, url, proc, exited, stderr(), stop() }. stop() sends SIGTERM
// and checks the server exited 0 (resolves { code, signal }).
export async function startServe(bin, dir, env, args = []) {
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const p = spawn(bin, ['--dir', dir, 'serve', '--listen', `127.0.0.1:${port}`, ...args],
      { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '', stderr = '';
    p.stdout.setEncoding('utf8');
    p.stderr.setEncoding('utf8').on('data', (c) => { stderr += c; });
    const exited = new Promise((resolve) => p.on('close', (code, signal) => resolve({ code, signal })));
    const url = await new Promise((resolve) => {
      const timer = setTimeout(() => resolve(null), 20000);
      p.stdout.on('data', (c) => {
        stdout += c;
        const m = /^zcor: serving .* at (http:\/\/\S+)$/m.exec(stdout);
        if (m) { clearTimeout(timer); resolve(m[1]); }
      });
      exited.then(() => { clearTimeout(timer); resolve(null); });
    });
    if (!url) {
      p.kill('SIGKILL');
      await exited;
      if (attempt < 2 && /cannot listen/.test(stderr)) continue; // the port was taken meanwhile
      assert.fail(`zcor serve did not print its URL: ${stdout}${stderr}`);
    }
    return {
      dir, port, url, proc: p, exited,
      token: new URL(url).searchParams.get('token'),
      stderr: () => stderr,
      async stop() {
        if (p.exitCode === null && p.signalCode === null) p.kill('SIGTERM');
        const timer = setTimeout(() => p.kill('SIGKILL'), 15000);
        const r = await exited;
        clearTimeout(timer);
        assert.equal(r.signal, null, `zcor serve died of ${r.signal}: ${stderr}`);
        assert.equal(r.code, 0, `zcor serve exited ${r.code}: ${stderr}`);
        return r;
      },
    };
  }
}

// Runs fn(srv) and stops srv (exit 0 checked) — also when fn threw,
// without hiding fn's error.
export async function runThenStop(srv, fn) {
  let failed = null;
  try {
    return await fn(srv);
  } catch (e) {
    failed = e;
    throw e;
  } finally {
    try {
      await srv.stop();
    } catch (e) {
      if (!failed) throw e;
    }
  }
}

export async function withServe(bin, dir, env, fn) {
  return runThenStop(await startServe(bin, dir, env), fn);
}

// One HTTP request to srv. opts: method, headers, body (string | Buffer |
// object → JSON), auth (true: the bearer token; a string: that token;
// false: none), host (the Host header), origin, conv (X-Zcor-Conversation),
// agent (default false: a connection of its own). Resolves { status,
// headers, text, json } (json undefined when the body is not JSON).
export function request(srv, path, opts = {}) {
  const { method = 'GET', headers = {}, auth = true, host, origin, conv, agent = false } = opts;
  let { body } = opts;
  const h = { ...headers };
  if (auth) h.authorization = `Bearer ${auth === true ? srv.token : auth}`;
  h.host = host ?? `127.0.0.1:${srv.port}`;
  if (origin) h.origin = origin;
  if (conv) h['x-zcor-conversation'] = conv;
  if (body !== undefined && typeof body !== 'string' && !Buffer.isBuffer(body)) {
    body = JSON.stringify(body);
    h['content-type'] ??= 'application/json';
  }
  if (body !== undefined) h['content-length'] = Buffer.byteLength(body);
  return new Promise((resolve, reject) => {
    const r = httpRequest({ host: '127.0.0.1', port: srv.port, method, path, headers: h, agent },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json;
          try { json = JSON.parse(text); } catch { json = undefined; }
          resolve({ status: res.statusCode, headers: res.headers, text, json });
        });
        res.on('error', reject);
      });
    r.on('error', reject);
    if (body !== undefined) r.end(body); else r.end();
  });
}
