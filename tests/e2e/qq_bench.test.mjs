// qq_bench.test.mjs — `zcor-bench qq` (issue 15's benchmark) runs: a small
// flood (300 events over 10 groups, 10% mentions) is logged whole, nothing
// dropped, and every mention that woke a turn got its reply. The numbers
// themselves are the benchmark's (docs/PERFORMANCE.md), not checked here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

const BIN = process.env.ZCOR_BIN;
assert.ok(BIN, 'ZCOR_BIN must name the zcor binary');
const BENCH = join(dirname(BIN), 'zcor-bench');

test('[issue 15] zcor-bench qq: a small flood is logged whole and its mentions are answered', { skip: !existsSync(BENCH) && 'no zcor-bench' }, () => {
  const r = spawnSync(BENCH, ['qq', '--events', '300', '--groups', '10', '--mentions', '10', '--rate', '500', '--json'],
    { encoding: 'utf8', timeout: 120000 });
  if (r.error) throw r.error;
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.logged, 300, r.stdout);
  assert.equal(out.eventsDropped, 0);
  assert.ok(out.mentions > 0);
  assert.ok(out.replyMs.count > 0 && out.replyMs.count <= out.mentions, r.stdout);
  assert.ok(out.sends >= out.replyMs.count);
  assert.ok(out.eventsPerSecond > 0);
  assert.ok(out.rssKb.peak >= out.rssKb.start);
});

test('[issue 15] Q-LOG under a flood: more events than the world queues at once, sent as fast as the socket takes them, are all logged (the connection waits for room; none dropped)', { skip: !existsSync(BENCH) && 'no zcor-bench' }, () => {
  // 12,000 > the world's queue of 8,192 events
  const r = spawnSync(BENCH, ['qq', '--events', '12000', '--groups', '50', '--mentions', '1', '--json'],
    { encoding: 'utf8', timeout: 180000 });
  if (r.error) throw r.error;
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.eventsDropped, 0, r.stdout);
  assert.equal(out.logged, 12000, r.stdout);
});
