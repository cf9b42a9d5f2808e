// cli.mjs — running the real zcor binary from a node:test file: its
// environment (no ZCOR_DIR, no proxies), a process with its outcome, the
// store read back with the Debian sqlite3 shell, waiting for a condition.
// One copy for the end-to-end suites that drive the CLI.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export const BIN = process.env.ZCOR_BIN;

// The environment a zcor process gets: the test's, without ZCOR_DIR
// (every call names --dir) and without proxies (the fakes are local).
export function cleanEnv(extra = {}) {
  const e = { ...process.env, ...extra };
  delete e.ZCOR_DIR;
  for (const k of ['http_proxy', 'https_proxy', 'HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'all_proxy']) delete e[k];
  return e;
}

// A zcor process on dir; p.done resolves to {code, signal, stdout, stderr}.
export function start(dir, args, input, env = cleanEnv()) {
  assert.ok(BIN, 'ZCOR_BIN must name the zcor binary');
  const p = spawn(BIN, ['--dir', dir, ...args], { env });
  let stdout = '', stderr = '';
  p.stdout.setEncoding('utf8').on('data', (c) => { stdout += c; });
  p.stderr.setEncoding('utf8').on('data', (c) => { stderr += c; });
  if (input !== undefined) p.stdin.end(input); else p.stdin.end();
  p.done = new Promise((resolve) => p.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return p;
}

// zcor without blocking the event loop (a fake server may live in it).
export const zc = (dir, args, input, env) => start(dir, args, input, env).done;

// Rows of q on dir's memory.db, as objects.
export function sql(dir, q) {
  const r = spawnSync('sqlite3', ['-json', join(dir, 'memory.db'), q], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim() ? JSON.parse(r.stdout) : [];
}

// Waits until fn() is truthy, failing after ms with what was awaited.
export async function until(what, fn, ms = 10000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await fn()) return;
    await sleep(25);
  }
  assert.fail(`timed out waiting for ${what}`);
}
