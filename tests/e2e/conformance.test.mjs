// conformance.test.mjs — the official MCP conformance suite
// (@modelcontextprotocol/conformance 0.1.13, from tests/node_modules) run
// against a real `zcor serve`, every server scenario (`--suite all`, the
// pending ones included), compared with conformance-baseline.json.
//
// The suite has no option for custom headers and zcor's /mcp needs
// `Authorization: Bearer <token>`, so the suite talks to
// conformance-proxy.mjs, which adds the header and forwards to zcor
// unchanged (Host/Origin included, so the dns-rebinding-protection
// scenario is judged by zcor itself).
//
// The test fails when a scenario outside the baseline fails, when a
// baseline scenario passes (the baseline must stay honest: remove it), and
// when the baseline names a scenario the suite does not have.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { startProxy } from './conformance-proxy.mjs';
import { startServe } from '../net.mjs';
import { mkTmp } from '../tmpdir.mjs';

const BIN = process.env.ZCOR_BIN;
assert.ok(BIN, 'ZCOR_BIN must name the zcor binary');
const HERE = dirname(fileURLToPath(import.meta.url));
const SUITE = join(HERE, '..', 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const BASELINE = join(HERE, 'conformance-baseline.json');

function cleanEnv() {
  const e = { ...process.env, NO_PROXY: '127.0.0.1,localhost', no_proxy: '127.0.0.1,localhost' };
  delete e.ZCOR_DIR;
  delete e.ZCOR_TOKEN;
  for (const k of ['http_proxy', 'https_proxy', 'HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'all_proxy'])
    delete e[k];
  return e;
}

function run(cmd, args, { cwd, timeoutMs }) {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { cwd, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '', stderr = '';
    p.stdout.setEncoding('utf8').on('data', (c) => { stdout += c; });
    p.stderr.setEncoding('utf8').on('data', (c) => { stderr += c; });
    const timer = setTimeout(() => p.kill('SIGKILL'), timeoutMs);
    p.on('error', reject);
    p.on('close', (code, signal) => { clearTimeout(timer); resolve({ code, signal, stdout, stderr }); });
  });
}

// results/server-<scenario>-<ISO time with dashes>/checks.json → Map
// scenario → checks. A scenario fails when any check is a FAILURE (the
// suite's own rule for its summary).
function readResults(outDir) {
  const results = new Map();
  for (const d of readdirSync(outDir)) {
    const m = /^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/.exec(d);
    if (!m) continue;
    const f = join(outDir, d, 'checks.json');
    const checks = existsSync(f) ? JSON.parse(readFileSync(f, 'utf8')) : [];
    results.set(m[1], checks);
  }
  return results;
}

const failedChecks = (checks) => checks.filter((c) => c.status === 'FAILURE');

test('the baseline file is well formed: every entry has a scenario and a reason, once', () => {
  const b = JSON.parse(readFileSync(BASELINE, 'utf8'));
  assert.ok(Array.isArray(b.expectedFailures));
  const seen = new Set();
  for (const e of b.expectedFailures) {
    assert.equal(typeof e.scenario, 'string');
    assert.ok(!seen.has(e.scenario), `${e.scenario} listed twice`);
    seen.add(e.scenario);
    assert.equal(typeof e.reason, 'string');
    assert.ok(e.reason.length >= 20, `${e.scenario}: give a reason`);
  }
});

test('MCP conformance suite (all server scenarios) against zcor serve matches the baseline', async () => {
  assert.ok(existsSync(SUITE), `${SUITE} missing: run scripts/deps`);
  const baseline = new Map(JSON.parse(readFileSync(BASELINE, 'utf8')).expectedFailures
    .map((e) => [e.scenario, e.reason]));

  const work = mkTmp('zcor-conformance-');
  const dir = join(work, 'memory');
  const outDir = join(work, 'results');
  const srv = await startServe(BIN, dir, cleanEnv());
  const proxy = await startProxy({ target: `http://127.0.0.1:${srv.port}`, token: srv.token });
  let r;
  try {
    r = await run(process.execPath, [SUITE, 'server', '--url', `${proxy.url}/mcp`, '--suite', 'all', '-o', outDir],
      { cwd: work, timeoutMs: 110000 });
  } finally {
    await proxy.close();
    await srv.stop(); // exit 0 and no signal, checked
  }
  assert.equal(r.signal, null, `the suite was killed (timeout?): ${r.stdout.slice(-2000)}${r.stderr}`);
  assert.match(r.stdout, /=== SUMMARY ===/, `the suite did not finish: ${r.stdout.slice(-2000)}${r.stderr}`);

  const results = readResults(outDir);
  // every scenario the suite lists was run
  const listed = await run(process.execPath, [SUITE, 'list', '--server'], { cwd: work, timeoutMs: 30000 });
  const names = [...listed.stdout.matchAll(/^\s+- (\S+)/gm)].map((m) => m[1]);
  assert.ok(names.length >= 20, listed.stdout);
  for (const n of names) assert.ok(results.has(n), `scenario ${n} was not run`);

  const unexpected = [], stale = [], passed = [];
  for (const [scenario, checks] of results) {
    const failures = failedChecks(checks);
    if (failures.length && !baseline.has(scenario))
      unexpected.push(`${scenario}: ${failures.map((c) => `${c.id}: ${c.errorMessage ?? c.description}`).join('; ')}`);
    if (!failures.length && baseline.has(scenario)) stale.push(scenario);
    if (!failures.length) passed.push(scenario);
  }
  const unknown = [...baseline.keys()].filter((s) => !results.has(s));
  assert.deepEqual(unexpected, [], `scenarios failing outside the baseline:\n${unexpected.join('\n')}`);
  assert.deepEqual(stale, [], `baseline scenarios that now pass (remove them from conformance-baseline.json): ${stale}`);
  assert.deepEqual(unknown, [], `baseline scenarios the suite does not have: ${unknown}`);
  // the core of the protocol is among the passes
  for (const s of ['server-initialize', 'ping', 'tools-list', 'resources-list', 'prompts-list', 'dns-rebinding-protection'])
    assert.ok(passed.includes(s), `${s} should pass`);
  // the proxy only added the token: zcor saw the requests and logged them
  assert.match(srv.stderr(), /"path":"\/mcp","status":200/);
  assert.match(srv.stderr(), /"status":403/, 'zcor itself refused the rebinding request');
});
