// qq_conn.test.mjs — issue 15, the QQ world's connection end to end:
// `zcor serve` and the fake NapCat of tests/fake_napcat.mjs in both roles.
// A drop and a re-dial lose nothing and send nothing twice (a reply whose
// send never left is sent once after the reconnect; one that NapCat
// received but never answered is not sent again and is recorded
// "unknown"); two missed heartbeats re-dial; a wrong token is refused
// clearly, said once, never in a fast loop (HTTP 401, and NapCat's own
// retcode 1403); a failed send is recorded on the turn; reverse mode
// checks NapCat's headers, then works; GET /api/v1/worlds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { seg } from '../fake_napcat.mjs';
import { freePort, request, withServe } from '../net.mjs';
import { mkTmp } from '../tmpdir.mjs';
import { BIN, BOT, TOKEN, cleanEnv, sleep, withWorld } from '../qq_world.mjs';

const G1 = 100000001;

// get_login_info answered on connection n
const loginOn = (w, n) => w.nc.waitFor(() => w.nc.actions.some((a) => a.conn === n && a.action === 'get_login_info' && a.answered),
  5000, `get_login_info on connection ${n}`);

async function waitUntil(pred, ms, what) {
  const t0 = Date.now();
  while (!pred()) {
    if (Date.now() - t0 > ms) assert.fail(`${what} did not happen within ${ms} ms`);
    await sleep(20);
  }
}

// the group's newest turn once its delivery note is there
async function waitTurnNote(w, conv) {
  const t0 = Date.now();
  for (;;) {
    const t = (await w.turns(conv)).items[0];
    if (t && t.delivery) return t;
    if (Date.now() - t0 > 5000) assert.fail(`no delivery note on the turn: ${JSON.stringify(t)}`);
    await sleep(50);
  }
}

const reconnected = (w, n = 2) => w.nc.waitFor(() => w.nc.connections() >= n && w.nc.connected() >= 1, 8000, `connection #${n}`);

test('[issue 15] the connection drops and comes back: messages before and right after are logged, once', async () => {
  await withWorld({}, async (w) => {
    const before = w.nc.groupMessage({ groupId: G1, userId: 111, segments: [seg.text('掉线前')] });
    await w.waitLogged(`group:${G1}`, 1);
    w.nc.drop();
    await reconnected(w);
    // at once, before zcor has even asked get_login_info again
    const after = [1, 2, 3].map((i) => w.nc.groupMessage({ groupId: G1, userId: 111, segments: [seg.text(`重连后${i}`)] }));
    const items = await w.waitLogged(`group:${G1}`, 4);
    assert.deepEqual(items.map((x) => x.id), [before, ...after].map(String));
    assert.match(w.srv.stderr(), /qq: connection lost: .*reconnecting in [\d.]+ s/);
    // the "connected" line follows get_login_info's answer, which may come after the messages
    const connected = () => (w.srv.stderr().match(/qq: connected to ws:\/\/127\.0\.0\.1:\d+\/? as 3000000001/g) || []).length;
    for (let i = 0; connected() < 2 && i < 100; i++) await sleep(30);
    assert.equal(connected(), 2, w.srv.stderr());
    // the world's status counts the reconnect
    await loginOn(w, 2);
    const st = (await w.worlds()).qq.connection;
    assert.equal(st.state, 'connected');
    assert.ok(st.reconnects >= 1, JSON.stringify(st));
  });
});

test('[issue 15] a reply whose send could not leave (connection down) is sent once after the reconnect', async () => {
  // the drop comes while the model thinks; zcor re-dials only after
  // reconnectMinMs (1500, jitter or not, later than the answer at 400)
  await withWorld({ qq: { reconnectMinMs: 1500, reconnectMaxMs: 3000 }, model: () => ({ content: '回来了', delayMs: 400 }) }, async (w) => {
    const id = w.nc.groupMessage({ groupId: G1, userId: 111, segments: [seg.at(BOT), seg.text(' 问个事')] });
    await waitUntil(() => w.fake.requests.length >= 1, 8000, 'the model request');
    w.nc.drop();
    await reconnected(w);
    await w.nc.waitFor(() => w.sendsQuoting(id).length >= 1, 8000, 'the reply after the reconnect');
    await sleep(1500);
    const sends = w.sendsQuoting(id);
    assert.equal(sends.length, 1, 'sent once');
    assert.equal(sends[0].conn, 2, 'on the new connection');
    const turn = (await w.turns(`group:${G1}`)).items[0];
    assert.equal(turn.delivery?.status, 'sent', JSON.stringify(turn));
  });
});

test('[issue 15] a send NapCat received but never answered before the drop is not sent again; the turn says "unknown"', async () => {
  await withWorld({ model: () => ({ content: '这句可能发出去了' }) }, async (w) => {
    w.nc.onAction('send_group_msg', { drop: true, once: true });
    const id = w.nc.groupMessage({ groupId: G1, userId: 111, segments: [seg.at(BOT), seg.text(' 问')] });
    await w.nc.waitFor(() => w.sendsQuoting(id).length === 1, 8000, 'the send');
    await reconnected(w);
    await loginOn(w, 2);
    await sleep(1500);
    assert.equal(w.sendsQuoting(id).length, 1, 'never sent twice');
    const turn = await waitTurnNote(w, `group:${G1}`);
    assert.equal(turn.delivery.status, 'unknown', JSON.stringify(turn.delivery));
    // the next mention is answered as usual
    const next = w.nc.groupMessage({ groupId: G1, userId: 111, segments: [seg.at(BOT), seg.text(' 再问')] });
    await w.nc.waitFor(() => w.sendsQuoting(next).length === 1, 8000, 'the next reply');
  });
});

test('[issue 15] a send NapCat answers "failed" is recorded on the turn (retcode, message) and not retried', async () => {
  await withWorld({ model: () => ({ content: '发不出去' }) }, async (w) => {
    w.nc.onAction('send_group_msg', { fail: { retcode: 1200, message: '消息发送失败: 被禁言' }, once: true });
    const id = w.nc.groupMessage({ groupId: G1, userId: 111, segments: [seg.at(BOT), seg.text(' 说话')] });
    await w.nc.waitFor(() => w.sendsQuoting(id).length === 1, 8000, 'the send');
    const turn = await waitTurnNote(w, `group:${G1}`);
    assert.equal(turn.delivery.status, 'failed');
    assert.equal(turn.delivery.retcode, 1200);
    assert.match(turn.delivery.message, /被禁言/);
    await sleep(800);
    assert.equal(w.sendsQuoting(id).length, 1);
    const st = (await w.worlds()).qq;
    assert.ok(st.sendsFailed >= 1, JSON.stringify(st));
    assert.equal(st.connection.state, 'connected', 'a failed send is no refused token');
  });
});

test('[issue 15] two missed heartbeats: zcor drops the connection and re-dials', async () => {
  await withWorld({ napcat: { heartbeatMs: 300 } }, async (w) => {
    // zcor learns the interval from a heartbeat: one must have arrived
    for (let i = 0; (await w.worlds()).qq.connection.lastHeartbeat == null; i++) {
      assert.ok(i < 100, 'no heartbeat seen in 5 s');
      await sleep(50);
    }
    w.nc.heartbeats = false;
    const t0 = Date.now();
    await w.nc.waitFor(() => w.nc.connections() >= 2, 5000, 're-dial');
    const took = Date.now() - t0;
    // the last heartbeat came at most 300 ms before t0: two intervals without one end 300 ms after t0 at the earliest
    assert.ok(took >= 300, `re-dialled after ${took} ms, before two intervals passed`);
    w.nc.heartbeats = true;
  });
});

for (const authFailure of ['http', 'retcode']) {
  test(`[issue 15] a wrong token is refused clearly (${authFailure === 'http' ? 'HTTP 401' : 'retcode 1403 then close, as NapCat does'}): one stderr line, state "refused", no fast loop`, async () => {
    // the backoff's cap is 10 s: a refusal is retried at the cap, so one dial, two at most, in 3 s
    await withWorld({ envToken: 'not-the-token', qq: { reconnectMaxMs: 10000 }, napcat: { authFailure }, ready: false }, async (w) => {
      await sleep(3000);
      const n = w.nc.dials.length;
      assert.ok(n >= 1 && n <= 2, `${n} dials in 3 s`);
      assert.ok(w.nc.dials.every((d) => d.authorization === 'Bearer not-the-token'));
      const lines = w.srv.stderr().split('\n').filter((l) => /^qq: NapCat refused the access token/.test(l));
      assert.equal(lines.length, 1, w.srv.stderr());
      assert.match(lines[0], authFailure === 'http' ? /HTTP 401/ : /retcode 1403/);
      assert.match(lines[0], /set NAPCAT_TOKEN to NapCat's token/);
      assert.match(lines[0], /not retrying for \d+ s/);
      const st = (await w.worlds()).qq.connection;
      assert.equal(st.state, 'refused', JSON.stringify(st));
      assert.deepEqual(w.nc.sent(), [], 'no action on a refused connection');
    });
  });
}

test('[issue 15] no token at all while NapCat wants one is refused the same way', async () => {
  await withWorld({ envToken: null, qq: { reconnectMaxMs: 10000 }, ready: false }, async (w) => {
    await sleep(1500);
    assert.ok(w.nc.dials.length >= 1 && w.nc.dials.length <= 2, `${w.nc.dials.length} dials`);
    assert.equal(w.nc.dials[0].authorization, null, 'no Authorization without the variable');
    assert.match(w.srv.stderr(), /qq: NapCat refused the access token .*NAPCAT_TOKEN/);
    assert.equal((await w.worlds()).qq.connection.state, 'refused');
  });
});

test('[issue 15] reverse mode: NapCat connects to serve\'s path; a wrong token gets 401, a bad header 400, then it works', async () => {
  await withWorld({ qq: { mode: 'reverse', path: '/onebot/v11/ws', url: undefined } }, async (w) => {
    const url = `ws://127.0.0.1:${w.srv.port}/onebot/v11/ws`;
    assert.equal((await w.nc.connectReverse(url, { token: 'wrong' })).status, 401);
    assert.equal((await w.nc.connectReverse(url, { token: null })).status, 401);
    assert.equal((await w.nc.connectReverse(url, { selfId: 'abc' })).status, 400);
    assert.equal((await w.nc.connectReverse(url, { role: null })).status, 400);
    const other = await w.nc.connectReverse(`ws://127.0.0.1:${w.srv.port}/other/path`).catch(() => ({ status: 0 }));
    assert.notEqual(other.status, 101, 'only worlds.qq.path upgrades');
    assert.equal(w.nc.connections(), 0);
    const ok = await w.nc.connectReverse(url);
    assert.equal(ok.status, 101);
    await w.nc.waitAnswered('get_login_info', 5000);
    await sleep(100);
    const id = w.nc.groupMessage({ groupId: G1, userId: 111, segments: [seg.at(BOT), seg.text(' 反向连接')] });
    await w.nc.waitFor(() => w.sendsQuoting(id).length === 1, 8000, 'the reply over the reverse connection');
    assert.equal(w.sendsQuoting(id)[0].conn, 1);
    const st = (await w.worlds()).qq.connection;
    assert.deepEqual([st.mode, st.state, st.selfId], ['reverse', 'connected', String(BOT)]);
    // the REST API is unaffected by the upgrade endpoint
    assert.equal((await request(w.srv, '/api/v1/conversations')).status, 200);
  });
});

test('[issue 15] reverse mode without the token\'s variable: zcor serve exits 2 saying so', async () => {
  const dir = mkTmp('zcor-qq-rev-');
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ worlds: { qq: { enabled: true, mode: 'reverse', path: '/onebot/v11/ws', accessTokenEnv: 'NAPCAT_TOKEN' } } }));
  const port = await freePort();
  const r = await new Promise((resolve) => {
    const p = spawn(BIN, ['--dir', dir, 'serve', '--listen', `127.0.0.1:${port}`], { env: cleanEnv() });
    let stderr = '';
    p.stderr.setEncoding('utf8').on('data', (c) => { stderr += c; });
    const t = setTimeout(() => p.kill('SIGKILL'), 5000);
    p.on('close', (code) => { clearTimeout(t); resolve({ code, stderr }); });
  });
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /NAPCAT_TOKEN/);
});

test('[issue 15] GET /api/v1/worlds: connected, selfId, lastHeartbeat, the groups with their names; {"enabled": false} without the world', async () => {
  await withWorld({ napcat: { heartbeatMs: 200 } }, async (w) => {
    w.nc.groupMessage({ groupId: G1, groupName: '周末打本群', userId: 111, segments: [seg.text('有人吗')] });
    await w.waitLogged(`group:${G1}`, 1);
    await sleep(500);
    const { qq } = await w.worlds();
    assert.equal(qq.enabled, true);
    const c = qq.connection;
    assert.equal(c.state, 'connected');
    assert.equal(c.mode, 'forward');
    assert.equal(c.selfId, String(BOT));
    assert.equal(typeof c.connectedSince, 'number');
    assert.equal(typeof c.lastHeartbeat, 'number');
    assert.ok(Date.now() - c.lastHeartbeat < 2000, `lastHeartbeat ${c.lastHeartbeat}`);
    assert.ok(c.lastHeartbeat >= c.connectedSince);
    assert.equal(c.heartbeatIntervalMs, 200);
    assert.equal(qq.groups.find((g) => g.conversation === `group:${G1}`)?.name, '周末打本群', JSON.stringify(qq.groups));
    assert.ok(qq.eventsLogged >= 1);
    // one line per connect (the contract's log lines)
    assert.equal((w.srv.stderr().match(/^qq: connected to /gm) || []).length, 1, w.srv.stderr());
    // the conversation's title is the group's name
    const conv = await request(w.srv, `/api/v1/conversations/group%3A${G1}`);
    assert.equal(conv.json.conversation.title, '周末打本群');
  });
  const dir = mkTmp('zcor-qq-off-');
  await withServe(BIN, dir, cleanEnv(), async (srv) => {
    const r = await request(srv, '/api/v1/worlds');
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json, { qq: { enabled: false } });
  });
});
