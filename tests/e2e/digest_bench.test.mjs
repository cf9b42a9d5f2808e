// digest_bench.test.mjs — `zcor-bench digest` (issue 16's benchmark) runs:
// a small conversation is digested by the scripted agent, every run's
// upserts are in their views and the input is reported. The times
// themselves are the benchmark's (docs/PERFORMANCE.md), not checked here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

const BIN = process.env.ZCOR_BIN;
assert.ok(BIN, 'ZCOR_BIN must name the zcor binary');
const BENCH = join(dirname(BIN), 'zcor-bench');

test('[issue 16] zcor-bench digest: a small run succeeds and its upserts land in the views', { skip: !existsSync(BENCH) && 'no zcor-bench' }, () => {
  const r = spawnSync(BENCH, ['digest', '--lines', '300', '--runs', '3', '--upserts', '6', '--json'],
    { encoding: 'utf8', timeout: 120000 });
  if (r.error) throw r.error;
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.benchmark, 'digest');
  assert.equal(out.lines, 300);
  assert.equal(out.runs, 3);
  assert.equal(out.upsertsLanded, 18, r.stdout);
  // one request with the calls, one follow-up, per run
  assert.equal(out.requestsPerRun, 2);
  assert.ok(out.inputChars > 0 && out.sentLines > 0 && out.sentLines <= 300, r.stdout);
  assert.equal(typeof out.cut, 'boolean');
  assert.ok(out.totalUs.p50 > 0 && out.totalUs.max >= out.totalUs.p99, r.stdout);
});

test('[issue 16] zcor-bench digest: a bad option is a usage error', { skip: !existsSync(BENCH) && 'no zcor-bench' }, () => {
  const r = spawnSync(BENCH, ['digest', '--lines', '0'], { encoding: 'utf8', timeout: 30000 });
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /--lines/);
});
