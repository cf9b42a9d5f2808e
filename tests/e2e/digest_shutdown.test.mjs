// digest_shutdown.test.mjs — issue 16: SIGTERM while `zcor serve`'s
// schedule runs a digest does not wait for digestTimeoutMs: the run is cut
// (zcor_interrupt: the provider request abandoned), recorded as failed in
// one transaction with its lines kept, the lease given back, and serve
// exits 0 promptly. The scripted model hangs; ZCOR_TEST_NOW puts the
// schedule's clock just before digestAtHour (TZ=UTC).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { startFakeOpenAI } from '../fake_openai.mjs';
import { request, startServe } from '../net.mjs';
import { mkTmp } from '../tmpdir.mjs';
import { cleanEnv, sql, until } from '../cli.mjs';

const BIN = process.env.ZCOR_BIN;
assert.ok(BIN, 'ZCOR_BIN must name the zcor binary');

function env(now) {
  return cleanEnv({ TZ: 'UTC', ...(now ? { ZCOR_TEST_NOW: now } : {}) });
}



test('issue16_sigterm_cuts_digest: SIGTERM during a scheduled digest whose model hangs: serve exits 0 within seconds (digestTimeoutMs 60000), the run is recorded as interrupted with its lines kept, the lease is free', async () => {
  const fake = await startFakeOpenAI([{ content: '太迟了', delayMs: 55000 }]);
  try {
    const dir = mkTmp('zcor-dstop-');
    writeFileSync(join(dir, 'config.json'), JSON.stringify({
      provider: { baseUrl: fake.baseUrl, model: 'fake', maxRetries: 0, timeoutMs: 60000 },
      digestMinLines: 2, digestTimeoutMs: 60000,
    }));
    const messages = [1, 2, 3].map((i) => ({ id: `m${i}`, time: `2026-11-30T08:0${i}:00Z`, senderId: '101', senderName: '甲', text: `第${i}句` }));
    const log = spawnSync(BIN, ['--dir', dir, 'transcript', 'log', '--conversation', 'group:1'], { input: JSON.stringify({ messages }), env: env(), encoding: 'utf8' });
    assert.equal(log.status, 0, log.stderr);
    const srv = await startServe(BIN, dir, env('2026-12-01T03:59:59Z'));
    await until('the scheduled run to ask the model', () => fake.requests.length === 1);
    await until('the run to start', () => /digest group:1: 3\/2 lines \(schedule\)/.test(srv.stderr()));
    const t0 = Date.now();
    srv.proc.kill('SIGTERM');
    const r = await srv.exited;
    const took = Date.now() - t0;
    assert.equal(r.code, 0, srv.stderr());
    assert.ok(took < 5000, `serve took ${took} ms to stop`);
    assert.match(srv.stderr(), /digest group:1: failed: .*interrupted/);
    const rows = sql(dir, "SELECT status, json_extract(error, '$.message') AS msg FROM digests");
    assert.equal(rows.length, 1);
    assert.equal(rows[0].status, 'error');
    assert.match(rows[0].msg, /interrupted after \d+ ms: zcor is stopping/);
    assert.deepEqual(sql(dir, "SELECT lines_since_digest AS n, last_digest_date AS d FROM conversations WHERE key = 'group:1'"), [{ n: 3, d: null }]);
    assert.deepEqual(sql(dir, 'SELECT count(*) AS n FROM leases'), [{ n: 0 }]);
  } finally {
    await fake.close();
  }
});

test('issue16_sigterm_cuts_rest_digest: SIGTERM while a digest started through REST (POST …/digest) waits on a hanging model: the run is cut and answered (502, interrupted), recorded, and serve exits 0 promptly', async () => {
  const fake = await startFakeOpenAI([{ content: '太迟了', delayMs: 55000 }]);
  try {
    const dir = mkTmp('zcor-dstop-rest-');
    writeFileSync(join(dir, 'config.json'), JSON.stringify({
      provider: { baseUrl: fake.baseUrl, model: 'fake', maxRetries: 0, timeoutMs: 60000 }, digestTimeoutMs: 60000,
    }));
    const messages = [1, 2].map((i) => ({ id: `m${i}`, time: `2026-11-30T08:0${i}:00Z`, senderId: '101', senderName: '甲', text: `第${i}句` }));
    const log = spawnSync(BIN, ['--dir', dir, 'transcript', 'log', '--conversation', 'group:2'], { input: JSON.stringify({ messages }), env: env(), encoding: 'utf8' });
    assert.equal(log.status, 0, log.stderr);
    const srv = await startServe(BIN, dir, env());
    const answer = request(srv, '/api/v1/conversations/group:2/digest', { method: 'POST', body: {} });
    await until('the run to ask the model', () => fake.requests.length === 1);
    const t0 = Date.now();
    srv.proc.kill('SIGTERM');
    const r = await srv.exited;
    assert.equal(r.code, 0, srv.stderr());
    assert.ok(Date.now() - t0 < 5000, `serve took ${Date.now() - t0} ms to stop`);
    const res = await answer;
    assert.equal(res.status, 502, res.text);
    assert.match(res.json.error.message, /interrupted after \d+ ms: zcor is stopping/);
    assert.deepEqual(sql(dir, 'SELECT status FROM digests'), [{ status: 'error' }]);
    assert.deepEqual(sql(dir, 'SELECT count(*) AS n FROM leases'), [{ n: 0 }]);
  } finally {
    await fake.close();
  }
});
