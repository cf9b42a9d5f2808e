// digest_lease.test.mjs — issue 16: one digest run per conversation at a
// time across processes (the store's lease, memory/lease.c), through two
// real processes: `zcor digest --now` and a second `zcor digest --now` or
// `zcor serve`'s REST route, against the scripted model of
// tests/fake_openai.mjs. A process killed with SIGKILL mid-run leaves its
// lease, which runs out at digestTimeoutMs + 5 s.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { startFakeOpenAI } from '../fake_openai.mjs';
import { request, withServe } from '../net.mjs';
import { mkTmp } from '../tmpdir.mjs';
import { cleanEnv as env, sql, zc, start, until } from '../cli.mjs';

const BIN = process.env.ZCOR_BIN;
assert.ok(BIN, 'ZCOR_BIN must name the zcor binary');





async function setup(fake, extra = {}) {
  const dir = mkTmp('zcor-dlease-');
  writeFileSync(join(dir, 'config.json'),
    JSON.stringify({ provider: { baseUrl: fake.baseUrl, model: 'fake', maxRetries: 0 }, ...extra }));
  const messages = [1, 2, 3].map((i) => ({ id: `m${i}`, time: `2026-11-20T08:0${i}:00Z`, senderId: '101', senderName: '甲', text: `第${i}句` }));
  const r = await zc(dir, ['transcript', 'log', '--conversation', 'group:1'], JSON.stringify({ messages }));
  assert.equal(r.code, 0, r.stderr);
  return dir;
}

const digestNow = ['digest', '--now', '--conversation', 'group:1', '--json'];

test('issue16_digest_lease_two_processes: while `zcor digest --now` runs group:1, a second process is refused naming the conversation and the holder (CLI exit 1; REST 409 conflict, digest_running); the model is asked once; the lease is gone after', async () => {
  const fake = await startFakeOpenAI([{ content: '写好了。', delayMs: 2500 }]);
  try {
    const dir = await setup(fake);
    const a = start(dir, digestNow);
    await until('the first run to ask the model', () => fake.requests.length === 1);
    assert.equal(sql(dir, "SELECT count(*) AS n FROM leases WHERE kind = 'digest' AND conversation = 'group:1'")[0].n, 1);
    const b = await zc(dir, digestNow);
    assert.equal(b.code, 1, b.stdout + b.stderr);
    const err = JSON.parse(b.stdout).runs[0].error;
    assert.equal(err.code, 'conflict');
    assert.match(err.message, new RegExp(`a digest of conversation 'group:1' is running already, held by process ${a.pid} \\(a manual run\\) until`));
    assert.equal(err.details.reason, 'digest_running');
    assert.equal(err.details.pid, a.pid);
    await withServe(BIN, dir, env(), async (srv) => {
      const r = await request(srv, '/api/v1/conversations/group:1/digest', { method: 'POST', body: {} });
      assert.equal(r.status, 409, r.text);
      assert.equal(r.json.error.code, 'conflict');
      assert.equal(r.json.error.details.reason, 'digest_running');
      assert.match(r.json.error.message, /group:1.*is running already, held by process/);
    });
    const ra = await a.done;
    assert.equal(ra.code, 0, ra.stdout + ra.stderr);
    assert.equal(JSON.parse(ra.stdout).runs[0].status, 'ok');
    assert.equal(fake.requests.length, 1, 'the model was asked once');
    // one record: the refused runs wrote nothing
    assert.deepEqual(sql(dir, 'SELECT status FROM digests'), [{ status: 'ok' }]);
    // the record's start is the run's (it was its end, as for turns)
    assert.ok(sql(dir, 'SELECT ended_at - started_at AS d FROM digests')[0].d >= 2000);
    assert.deepEqual(sql(dir, "SELECT count(*) AS n FROM leases WHERE kind = 'digest'"), [{ n: 0 }]);
  } finally {
    await fake.close();
  }
});

test('issue16_digest_lease_expires_after_kill: a run killed with SIGKILL while the model hangs leaves its lease; the next run is refused until it runs out (digestTimeoutMs + 5 s), then runs', async () => {
  const fake = await startFakeOpenAI([{ content: '永远不来', delayMs: 60000 }, { content: '这次好了。' }]);
  try {
    const dir = await setup(fake, { digestTimeoutMs: 2000 });
    const a = start(dir, digestNow);
    await until('the run to ask the model', () => fake.requests.length === 1);
    a.kill('SIGKILL');
    assert.equal((await a.done).signal, 'SIGKILL');
    const [{ until: leaseEnd }] = sql(dir, "SELECT until FROM leases WHERE kind = 'digest'");
    let b = await zc(dir, digestNow);
    assert.equal(b.code, 1, b.stdout);
    assert.equal(JSON.parse(b.stdout).runs[0].error.details.reason, 'digest_running');
    assert.ok(leaseEnd - Date.now() <= 7000, `the lease ends within digestTimeoutMs + 5 s (${leaseEnd - Date.now()} ms)`);
    await sleep(Math.max(0, leaseEnd - Date.now() + 100));
    b = await zc(dir, digestNow);
    assert.equal(b.code, 0, b.stdout + b.stderr);
    assert.equal(JSON.parse(b.stdout).runs[0].status, 'ok');
    assert.deepEqual(sql(dir, 'SELECT lines_since_digest AS n FROM conversations'), [{ n: 0 }]);
  } finally {
    await fake.close();
  }
});

test('issue16_digest_cli_sigterm: SIGTERM to `zcor digest --now` while the model hangs cuts the run: recorded as interrupted, lines kept, the lease given back at once (no wait for it to run out)', async () => {
  const fake = await startFakeOpenAI([{ content: '永远不来', delayMs: 60000 }, { content: '好了。' }]);
  try {
    const dir = await setup(fake, { digestTimeoutMs: 60000 });
    const a = start(dir, digestNow);
    await until('the run to ask the model', () => fake.requests.length === 1);
    const t0 = Date.now();
    a.kill('SIGTERM');
    const ra = await a.done;
    assert.ok(Date.now() - t0 < 4000, `took ${Date.now() - t0} ms`);
    assert.equal(ra.code, 1, ra.stdout + ra.stderr);
    assert.match(JSON.parse(ra.stdout).runs[0].error.message, /interrupted after \d+ ms/);
    assert.deepEqual(sql(dir, 'SELECT status FROM digests'), [{ status: 'error' }]);
    assert.deepEqual(sql(dir, 'SELECT count(*) AS n FROM leases'), [{ n: 0 }]);
    const b = await zc(dir, digestNow);
    assert.equal(b.code, 0, b.stdout + b.stderr);
  } finally {
    await fake.close();
  }
});

test('issue16_digest_due_again_under_lease: a run listed as due asks again once it holds the lease — two `zcor digest --now` one after the other never digest a conversation twice on one date', async () => {
  const step = (req) => {
    const sys = JSON.stringify(req.body.messages[0]);
    return sys.includes('group:1') ? { content: 'ok1', delayMs: 3000 } : { content: 'ok2' };
  };
  const fake = await startFakeOpenAI([step, step, step, step]);
  try {
    const dir = mkTmp('zcor-dlease-due-');
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ provider: { baseUrl: fake.baseUrl, model: 'fake', maxRetries: 0 }, digestMinLines: 1 }));
    for (const c of ['group:1', 'group:2']) {
      const messages = [1, 2].map((i) => ({ id: `${c}m${i}`, time: `2026-11-20T08:0${i}:00Z`, senderId: '101', senderName: '甲', text: `第${i}句` }));
      const r = await zc(dir, ['transcript', 'log', '--conversation', c], JSON.stringify({ messages }));
      assert.equal(r.code, 0, r.stderr);
    }
    // A lists both as due and digests group:1 first (a slow model)
    const a = start(dir, ['digest', '--now', '--json']);
    await until('A asked the model about group:1', () => fake.requests.length >= 1);
    // B lists both too: group:1 is A's (refused), group:2 it digests
    const b = await zc(dir, ['digest', '--now', '--json']);
    assert.equal(sql(dir, "SELECT count(*) AS n FROM digests WHERE conversation = 'group:2'")[0].n, 1, b.stdout + b.stderr);
    // a new line: group:2 has lines again, but was digested today
    const late = [{ id: 'late1', time: '2026-11-20T08:09:00Z', senderId: '102', senderName: '乙', text: '又一句' }];
    assert.equal((await zc(dir, ['transcript', 'log', '--conversation', 'group:2'], JSON.stringify({ late: undefined, messages: late }))).code, 0);
    const ra = await a.done;
    const runs = JSON.parse(ra.stdout).runs;
    assert.equal(sql(dir, "SELECT count(*) AS n FROM digests WHERE conversation = 'group:2'")[0].n, 1,
      `group:2 digested once on this date: ${ra.stdout}`);
    assert.ok(runs.some((r) => r.notDue === true && r.conversation === 'group:2'), ra.stdout);
    assert.equal(sql(dir, "SELECT lines_since_digest AS n FROM conversations WHERE key = 'group:2'")[0].n, 1, 'the late line waits');
  } finally { await fake.close(); }
});
