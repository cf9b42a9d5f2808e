// bench.test.mjs — what `zcor-bench quality` reads from a data file (issue
// 17, item 5): the times of items and queries. A time it misreads moves
// recency silently ("1:56 pm on 8 May, 2023" once became year 1, month
// 56), so every form is either read exactly or refused. zcor-bench sits
// beside the zcor binary ($ZCOR_BIN) in the build directory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

import { mkTmp } from '../tmpdir.mjs';

const BIN = process.env.ZCOR_BIN;
assert.ok(BIN, 'ZCOR_BIN must name the zcor binary');
const BENCH = join(dirname(BIN), 'zcor-bench');

function quality(pools) {
  const file = join(mkTmp('zcor-bench-'), 'data.json');
  writeFileSync(file, JSON.stringify({ pools }));
  const r = spawnSync(BENCH, ['quality', '--data', file, '--json'], { encoding: 'utf8', timeout: 60000 });
  if (r.error) throw r.error;
  return r;
}

// Two records alike but for their time, the later one listed first, and a
// query after both: recall breaks the tie by recency, so the later one
// ranks first exactly when both times were read right (read wrongly, or
// not at all, the record written last — the earlier — wins the tie).
const PAIRS = [
  ['9:00 am on 8 May, 2023', '11:00 pm on 8 May, 2023'], // am / pm
  ['12:30 pm on 8 May, 2023', '1:00 pm on 8 May, 2023'], // 12 pm is noon
  ['11:00 pm on 8 May, 2023', '12:05 am on 9 May, 2023'], // 12 am is midnight
  ['1:00 pm on 31 Jan, 2023', '1:00 pm on 1 February 2023'], // month names, comma optional
  ['2024年04月01日 周一 08:42', '2024年04月01日 周一 09:05'],
  ['2024年4月1日', '2024年04月02日 星期二 00:00:01'],
  ['2023-05-08T14:10:00+02:00', '2023-05-08T13:56:00Z'], // 12:10 UTC is earlier
  ['2023-05-08 13:56', '2023-05-08T13:57:00'], // no zone: UTC
];

test('bench quality: every time form it accepts is read exactly (the later record ranks first)', { skip: !existsSync(BENCH) && 'no zcor-bench' }, () => {
  const pools = PAIRS.map(([earlier, later], i) => ({
    id: `pair${i}`,
    items: [
      { id: 'later', title: '周五晚上固定开黑', content: '九点上号', time: later },
      { id: 'earlier', title: '周五晚上固定开黑', content: '九点上号', time: earlier },
    ],
    queries: [{ text: '周五晚上开黑几点上号', relevant: ['later'] }],
  }));
  const r = quality(pools);
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.clock, 'data times (UTC)');
  for (const m of ['scored', 'zcor']) assert.equal(out.methods[m]['recall@1'], 1, `${m}: ${r.stdout}`);
});

test('bench quality: an unreadable time is an error naming the pool, the item and the text', { skip: !existsSync(BENCH) && 'no zcor-bench' }, () => {
  const bad = ['1:56 pm on 8 Mai, 2023', '13:56 pm on 8 May, 2023', '2024年13月01日 周一 08:42',
    '2023-02-30', 'yesterday', '2024/04/01 08:42', '8 May 2023'];
  for (const time of bad) {
    const r = quality([{ id: 'p1', items: [{ id: 'm7', title: '开黑', time }], queries: [{ text: '开黑', relevant: ['m7'] }] }]);
    assert.equal(r.status, 3, `${time}: exit ${r.status} ${r.stdout}`);
    assert.equal(r.stdout, '', time);
    assert.match(r.stderr, /pool 'p1', item 'm7': time '/, time);
    assert.ok(r.stderr.includes(time), r.stderr);
  }
  // a query's time too, and a time that is not a string
  let r = quality([{ id: 'p2', items: [{ id: 'a', title: '开黑' }], queries: [{ text: '开黑', time: 'soon', relevant: ['a'] }] }]);
  assert.equal(r.status, 3, r.stdout);
  assert.match(r.stderr, /pool 'p2', query 1: time 'soon'/);
  r = quality([{ id: 'p3', items: [{ id: 'a', title: '开黑', time: 20230508 }], queries: [{ text: '开黑', relevant: ['a'] }] }]);
  assert.equal(r.status, 3, r.stdout);
  assert.match(r.stderr, /pool 'p3', item 'a': 'time' must be a string/);
});

// `zcor-bench turn` (issue 14): the turn's own cost against a zero-latency
// scripted model inside the bench. Its times are not checked (a benchmark,
// never a timed test); its JSON's shape is, and that the scripted model did
// what it says: half the turns with one zcor_memory_write call (two
// requests), half answered directly (one), every turn recorded.
const STATS = ['ownUs', 'ownCpuUs', 'totalUs', 'logUs', 'turnOwnUs', 'httpUs', 'serverUs', 'pagesRead', 'pagesWritten', 'fdatasync4kUs'];

test('[issue 14] bench turn --json: the shape of its results', { skip: !existsSync(BENCH) && 'no zcor-bench' }, () => {
  const tmp = mkTmp('zcor-bench-turn-');
  const r = spawnSync(BENCH, ['turn', '--memories', '200', '--turns', '20', '--warmup', '2', '--json'],
    { encoding: 'utf8', timeout: 60000, env: { ...process.env, TMPDIR: tmp } });
  if (r.error) throw r.error;
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.benchmark, 'turn');
  assert.equal(out.conversations, 100);
  assert.equal(out.turns, 20);
  assert.equal(typeof out.machine, 'string');
  assert.match(out.goal, /2000/);
  assert.equal(out.results.length, 1);
  const x = out.results[0];
  assert.equal(x.memories, 200);
  assert.equal(x.turns, 20);
  assert.equal(x.reused, false);
  assert.equal(x.turnsWithToolCall, 10);
  assert.equal(x.requestsPerTurn, 1.5);
  assert.ok(Number.isInteger(x.modelMsSum) && x.modelMsSum >= 0, r.stdout);
  assert.ok(x.requestBytesMean > 1000, r.stdout);
  for (const k of STATS) {
    const s = x[k];
    assert.ok(s, `${k} missing: ${r.stdout}`);
    for (const f of ['p50', 'p99', 'max', 'mean']) assert.equal(typeof s[f], 'number', `${k}.${f}`);
    assert.ok(s.p50 >= 0 && s.p50 <= s.p99 && s.p99 <= s.max, `${k}: ${JSON.stringify(s)}`);
  }
  assert.ok(x.httpUs.mean > 0, 'the provider calls were timed');
  assert.ok(x.ownUs.p50 <= x.totalUs.p50, 'own cost is the total minus the HTTP calls');
  assert.deepEqual(Object.keys(x.vsFirst).sort(), ['memories', 'ownP50', 'ownP99']);
  assert.equal(x.vsFirst.memories, 200);
  assert.equal(x.vsFirst.ownP99, 1);
});

test('[issue 14] bench turn: bad options are refused with the option named', { skip: !existsSync(BENCH) && 'no zcor-bench' }, () => {
  for (const [args, re] of [[['--turns', '0'], /--turns: give a whole number from 1/],
    [['--conversations', '999'], /--conversations: give a whole number from 1 to 240/],
    [['--memories', '1k'], /--memories: give whole numbers/],
    [['--frobnicate'], /usage: zcor-bench turn/]]) {
    const r = spawnSync(BENCH, ['turn', ...args], { encoding: 'utf8', timeout: 10000 });
    assert.equal(r.status, 2, `${args}: ${r.stderr}`);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, re);
  }
});
