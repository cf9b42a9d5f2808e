// digest_schedule.test.mjs — issue 16, the digest schedule inside `zcor
// serve` (Q-DIGEST, docs/DIGEST.md "The schedule") with the scripted model
// of tests/fake_openai.mjs and the test clock: ZCOR_TEST_NOW starts the
// schedule's clock at an instant and lets it run in real time; TZ=UTC
// makes local time UTC. Messages are logged by separate CLI processes, as
// a world's would be; the records are read with sqlite3.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { startFakeOpenAI } from '../fake_openai.mjs';
import { startServe, runThenStop } from '../net.mjs';
import { mkTmp } from '../tmpdir.mjs';
import { cleanEnv, sql, zc as zcIn } from '../cli.mjs';

const BIN = process.env.ZCOR_BIN;
assert.ok(BIN, 'ZCOR_BIN must name the zcor binary');

function env(now) {
  return cleanEnv({ TZ: 'UTC', ...(now ? { ZCOR_TEST_NOW: now } : {}) });
}

const zc = (dir, args, input) => zcIn(dir, args, input, env());


let seq = 0;
async function logLines(dir, conv, n) {
  const messages = [];
  for (let i = 0; i < n; i++) {
    seq++;
    messages.push({ id: `s${seq}`, time: new Date(Date.UTC(2026, 10, 30, 8, 0) + seq * 1000).toISOString(), senderId: '100', senderName: '甲', text: `第${seq}句` });
  }
  const r = await zc(dir, ['transcript', 'log', '--conversation', conv], JSON.stringify({ messages }));
  assert.equal(r.code, 0, r.stderr);
}

function setup(fake, extra = {}) {
  const dir = mkTmp('zcor-dsched-');
  writeFileSync(join(dir, 'config.json'),
    JSON.stringify({ provider: { baseUrl: fake.baseUrl, model: 'fake', maxRetries: 0 }, digestMinLines: 5, ...extra }));
  return dir;
}

const digests = (dir) => sql(dir, "SELECT conversation, status, json_extract(record, '$.trigger') AS trigger FROM digests ORDER BY id");
const lines = (dir, key) => sql(dir, `SELECT lines_since_digest AS n, last_digest_date AS date FROM conversations WHERE key = '${key}'`)[0];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function until(what, fn, ms = 10000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

test('[Q-DIGEST schedule] fires at digestAtHour local and not before; under digestMinLines waits and the count grows; a restart on the same local date does not digest twice', async () => {
  const fake = await startFakeOpenAI([{ content: '好' }]);
  try {
    const dir = setup(fake);
    await logLines(dir, 'group:1', 6);
    await logLines(dir, 'group:2', 3);
    let srv = await startServe(BIN, dir, env('2026-12-01T03:59:57Z'));
    await runThenStop(srv, async () => {
      await until('the start line', () => /memory enabled at 2026-12-01 04:00/.test(srv.stderr()));
      await sleep(1200);
      assert.deepEqual(digests(dir), [], 'nothing before 04:00');
      await until('the 04:00 digest', () => digests(dir).length === 1);
      assert.deepEqual(digests(dir), [{ conversation: 'group:1', status: 'ok', trigger: 'schedule' }]);
      await until('its log lines', () => /digest group:1: done/.test(srv.stderr()));
      assert.match(srv.stderr(), /digest group:1: 6\/5 lines \(schedule\)/);
      assert.deepEqual(lines(dir, 'group:1'), { n: 0, date: '2026-12-01' });
      // group:2 waits: its lines stay and keep counting
      assert.deepEqual(lines(dir, 'group:2'), { n: 3, date: null });
      await logLines(dir, 'group:2', 1);
      assert.equal(lines(dir, 'group:2').n, 4);
      await until('the next wake line', () => /next wake at 2026-12-02 04:00/.test(srv.stderr()));
    });
    // enough new lines again, but it was digested on this local date
    await logLines(dir, 'group:1', 6);
    srv = await startServe(BIN, dir, env('2026-12-01T10:00:00Z'));
    await runThenStop(srv, async () => {
      await until('the start line', () => /memory enabled at 2026-12-02 04:00/.test(srv.stderr()));
      await logLines(dir, 'group:1', 1); // its first message after start: no catch-up either
      await sleep(2500);
    });
    assert.equal(digests(dir).length, 1);
    assert.equal(lines(dir, 'group:1').n, 7);
    assert.equal(fake.requests.length, 1);
  } finally {
    await fake.close();
  }
});

test('[Q-DIGEST schedule] catch-up: after a missed wake a due conversation is digested on its first message after start, once; one that was not due then is not retried on later messages', async () => {
  const fake = await startFakeOpenAI([{ content: '好' }]);
  try {
    const dir = setup(fake);
    await logLines(dir, 'group:3', 6);
    await logLines(dir, 'group:4', 6);
    await logLines(dir, 'group:5', 2);
    const srv = await startServe(BIN, dir, env('2026-12-01T10:00:00Z'));
    await runThenStop(srv, async () => {
      await until('the start line', () => /memory enabled at 2026-12-02 04:00 UTC: .*catch-up on/.test(srv.stderr()));
      await sleep(1500);
      assert.deepEqual(digests(dir), [], 'the catch-up waits for a message');
      await logLines(dir, 'group:3', 1);
      await until('the catch-up', () => digests(dir).length === 1);
      assert.deepEqual(digests(dir), [{ conversation: 'group:3', status: 'ok', trigger: 'catch-up' }]);
      assert.match(srv.stderr(), /digest group:3: 7\/5 lines \(catch-up\)/);
      await logLines(dir, 'group:5', 1); // 3 lines: not due, its catch-up is spent
      await sleep(1500);
      await logLines(dir, 'group:5', 5);
      await logLines(dir, 'group:3', 6);
      await sleep(2500);
    });
    assert.equal(digests(dir).length, 1);
    assert.equal(lines(dir, 'group:4').n, 6, 'group:4 never spoke after start');
    assert.equal(lines(dir, 'group:5').n, 8);
    assert.equal(fake.requests.length, 1);
  } finally {
    await fake.close();
  }
});

test('[Q-DIGEST schedule] catch-up only after a missed wake: a conversation digested at the last wake that speaks before the next one waits for that wake, not before the hour', async () => {
  const fake = await startFakeOpenAI([{ content: '好' }]);
  try {
    const dir = setup(fake);
    await logLines(dir, 'group:6', 6);
    // digested at yesterday's wake (2026-12-01 04:00), 6 lines since
    sql(dir, "UPDATE conversations SET last_digest_date = '2026-12-01', lines_since_digest = 6 WHERE key = 'group:6'");
    const srv = await startServe(BIN, dir, env('2026-12-02T02:00:00Z'));
    await runThenStop(srv, async () => {
      await until('the start line', () => /memory enabled at 2026-12-02 04:00 UTC/.test(srv.stderr()));
      await logLines(dir, 'group:6', 1);
      await sleep(2500);
    });
    assert.deepEqual(digests(dir), [], 'no wake was missed: 04:00 is its time, not 02:00');
    assert.equal(fake.requests.length, 0);
  } finally {
    await fake.close();
  }
});

test('[Q-DIGEST schedule] SIGTERM during the daily round: the run in flight is cut and recorded as interrupted (issue 16: stopping does not wait for digestTimeoutMs), its lines and the conversations after it are left for the next start', async () => {
  const fake = await startFakeOpenAI([{ content: '好', delayMs: 2500 }, { content: '好' }]);
  try {
    const dir = setup(fake);
    await logLines(dir, 'group:7', 6);
    await logLines(dir, 'group:8', 6);
    const srv = await startServe(BIN, dir, env('2026-12-01T03:59:58Z'));
    await until('the first run of the round', () => /digest group:[78]: 6\/5 lines \(schedule\)/.test(srv.stderr()));
    await until('its request', () => fake.requests.length === 1);
    await srv.stop();
    const ran = digests(dir);
    assert.equal(ran.length, 1, JSON.stringify(ran));
    assert.equal(ran[0].status, 'error');
    assert.equal(fake.requests.length, 1, 'the second conversation was not started');
    assert.equal([lines(dir, 'group:7').n, lines(dir, 'group:8').n].sort().join(','), '6,6');
  } finally {
    await fake.close();
  }
});

test('[Q-DIGEST schedule] memory: false — no timer: nothing is digested at the hour, and the start says so', async () => {
  const fake = await startFakeOpenAI([]);
  try {
    const dir = setup(fake, { memory: false });
    await logLines(dir, 'group:6', 6);
    const srv = await startServe(BIN, dir, env('2026-12-01T03:59:59Z'));
    await runThenStop(srv, async () => {
      await until('the start line', () => /memory disabled/.test(srv.stderr()));
      await logLines(dir, 'group:6', 1);
      await sleep(3000);
      assert.doesNotMatch(srv.stderr(), /digest group:6|next wake/, 'no timer, no round');
    });
    assert.deepEqual(digests(dir), []);
    assert.equal(fake.requests.length, 0);
  } finally {
    await fake.close();
  }
});

test('[Q-DIGEST schedule] timeZone: the hour and the local date are config.json\'s zone, not the process\'s TZ; a zone the system does not know is reported naming the key', async () => {
  const fake = await startFakeOpenAI([{ content: '好' }]);
  try {
    const dir = setup(fake, { timeZone: 'Asia/Shanghai' });
    await logLines(dir, 'group:8', 6);
    // 19:59:57 UTC is 03:59:57 in Shanghai (UTC+8); TZ=UTC in the environment
    const srv = await startServe(BIN, dir, env('2026-11-30T19:59:57Z'));
    await runThenStop(srv, async () => {
      await until('the start line', () => /memory enabled at 2026-12-01 04:00 CST/.test(srv.stderr()));
      assert.match(srv.stderr(), /local time is Asia\/Shanghai/);
      await until('the 04:00 digest', () => digests(dir).length === 1);
    });
    assert.deepEqual(lines(dir, 'group:8'), { n: 0, date: '2026-12-01' });
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ timeZone: 'Mars/Olympus_Mons' }));
    const r = await zc(dir, ['doctor']);
    assert.equal(r.code, 2);
    assert.match(r.stdout, /'timeZone': 'Mars\/Olympus_Mons' is not a time zone this system knows/);
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ timeZone: '../../etc/passwd' }));
    assert.match((await zc(dir, ['doctor'])).stdout, /'timeZone' must be an IANA time zone name/);
  } finally {
    await fake.close();
  }
});

test('issue16_digest_hour_change_live: digestAtHour changed in config.json on a running serve takes effect at the next wake computed from the new value, not after the old wake', async () => {
  const fake = await startFakeOpenAI([{ content: '好' }]);
  try {
    const dir = setup(fake);
    await logLines(dir, 'group:8', 6);
    const srv = await startServe(BIN, dir, env('2026-12-01T02:59:52Z'));
    await runThenStop(srv, async () => {
      await until('the start line', () => /memory enabled at 2026-12-01 04:00/.test(srv.stderr()));
      writeFileSync(join(dir, 'config.json'),
        JSON.stringify({ provider: { baseUrl: fake.baseUrl, model: 'fake', maxRetries: 0 }, digestMinLines: 5, digestAtHour: 3 }));
      await until('the new wake', () => /digestAtHour is now 03:00 \(config\.json\): next wake at 2026-12-01 03:00/.test(srv.stderr()));
      await until('the 03:00 digest', () => digests(dir).length === 1, 15000);
      assert.deepEqual(digests(dir), [{ conversation: 'group:8', status: 'ok', trigger: 'schedule' }]);
      await until('the next wake line', () => /next wake at 2026-12-02 03:00/.test(srv.stderr()));
      // a new timeZone cannot move a running process's local time: it says so
      writeFileSync(join(dir, 'config.json'),
        JSON.stringify({ provider: { baseUrl: fake.baseUrl, model: 'fake', maxRetries: 0 }, digestMinLines: 5, digestAtHour: 3, timeZone: 'Asia/Tokyo' }));
      await until('the zone line', () => /timeZone changed in config\.json to 'Asia\/Tokyo': restart zcor serve to apply it; until then the digest hour and dates follow the system's zone/.test(srv.stderr()));
    });
  } finally {
    await fake.close();
  }
});
