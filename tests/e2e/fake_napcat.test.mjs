// fake_napcat.test.mjs — the scripted NapCat of tests/fake_napcat.mjs
// speaks OneBot v11 as NapCat does, checked with a plain `ws` client and
// server (no zcor): the token refused both ways (HTTP 401, and NapCat's
// own 1403 frame then close), lifecycle and heartbeats, answers matched by
// echo with increasing message ids, the action rules (failed, silent,
// delayed, drop), events in NapCat's shapes (ids numbers in events,
// strings in segments, time in seconds), the message_sent echo, the image
// server, and the reverse role's headers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { WebSocket, WebSocketServer } from 'ws';

import { seg, sha256, startFakeNapCat } from '../fake_napcat.mjs';

// A client for the forward role: collects frames; call() matches by echo.
function client(url, token) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, token ? { headers: { Authorization: `Bearer ${token}` } } : {});
    const frames = [];
    const waiting = new Set();
    let echo = 0;
    ws.on('message', (d) => {
      const f = JSON.parse(d.toString());
      frames.push(f);
      for (const w of [...waiting]) w();
    });
    const until = (pred, ms = 3000) => new Promise((res, rej) => {
      const check = () => { const f = frames.find(pred); if (f) { waiting.delete(check); clearTimeout(t); res(f); } };
      const t = setTimeout(() => { waiting.delete(check); rej(new Error('no such frame in time')); }, ms);
      waiting.add(check);
      check();
    });
    const c = {
      ws, frames, until,
      call(action, params = {}, ms = 3000) {
        const e = `e${++echo}`;
        ws.send(JSON.stringify({ action, params, echo: e }));
        return until((f) => f.echo === e, ms);
      },
      closed: new Promise((res) => ws.on('close', (code) => res(code))),
    };
    ws.on('open', () => resolve(c));
    ws.on('unexpected-response', (req, res) => resolve({ status: res.statusCode }));
    ws.on('error', reject);
  });
}

test('fake_napcat: a wrong token is refused with HTTP 401, or as NapCat does (1403 then close)', async () => {
  let nc = await startFakeNapCat({ token: 'right' });
  try {
    assert.equal((await client(nc.url, 'wrong')).status, 401);
    assert.equal((await client(nc.url)).status, 401);
    assert.deepEqual(nc.dials.map((d) => d.ok), [false, false]);
    assert.equal(nc.dials[0].authorization, 'Bearer wrong');
    // ?access_token= works as NapCat's does
    const q = await client(`${nc.url}?access_token=right`);
    assert.ok(q.ws);
    q.ws.close();
  } finally {
    await nc.close();
  }
  nc = await startFakeNapCat({ token: 'right', authFailure: 'retcode' });
  try {
    const c = await client(nc.url, 'wrong');
    const f = await c.until(() => true);
    assert.deepEqual([f.status, f.retcode, f.message, f.wording, f.data], ['failed', 1403, 'token验证失败', 'token验证失败', null]);
    await c.closed;
    assert.equal(nc.connections(), 0, 'a refused socket is no connection');
  } finally {
    await nc.close();
  }
});

test('fake_napcat: lifecycle, heartbeats, answers by echo, increasing message ids, recorded actions', async () => {
  const nc = await startFakeNapCat({ token: 't', heartbeatMs: 100, selfId: 3000000001 });
  try {
    const c = await client(nc.url, 't');
    await nc.waitConnected();
    const life = await c.until((f) => f.post_type === 'meta_event');
    assert.deepEqual([life.meta_event_type, life.sub_type, life.self_id], ['lifecycle', 'connect', 3000000001]);
    assert.ok(Number.isInteger(life.time) && Math.abs(life.time - Date.now() / 1000) < 5, 'time in seconds');
    const hb = await c.until((f) => f.meta_event_type === 'heartbeat');
    assert.equal(hb.interval, 100);
    assert.deepEqual(hb.status, { online: true, good: true });
    const login = await c.call('get_login_info');
    assert.deepEqual([login.status, login.retcode, login.data], ['ok', 0, { user_id: 3000000001, nickname: '小钟' }]);
    assert.equal(login.wording, '');
    const a = await c.call('send_group_msg', { group_id: 100, message: [seg.text('一')] });
    const b = await c.call('send_private_msg', { user_id: 111, message: [seg.text('二')] });
    assert.ok(b.data.message_id > a.data.message_id);
    assert.deepEqual(nc.sent().map((x) => x.action), ['get_login_info', 'send_group_msg', 'send_private_msg']);
    assert.equal(nc.sent('send_group_msg')[0].params.group_id, 100);
    assert.equal(nc.sent('send_group_msg')[0].conn, 1);
    // heartbeats stop on demand, so a client's "two missed" can be tested
    nc.heartbeats = false;
    await new Promise((r) => setTimeout(r, 50));
    const n = c.frames.filter((f) => f.meta_event_type === 'heartbeat').length;
    await new Promise((r) => setTimeout(r, 350));
    assert.equal(c.frames.filter((f) => f.meta_event_type === 'heartbeat').length, n);
    c.ws.close();
  } finally {
    await nc.close();
  }
});

test('fake_napcat: action rules — failed, delayed, silent (once), then a drop', async () => {
  const nc = await startFakeNapCat({});
  try {
    const c = await client(nc.url);
    nc.onAction('send_group_msg', { fail: { retcode: 1403, message: 'token验证失败' }, once: true });
    let r = await c.call('send_group_msg', { group_id: 1, message: [] });
    assert.deepEqual([r.status, r.retcode, r.message, r.data], ['failed', 1403, 'token验证失败', null]);
    r = await c.call('send_group_msg', { group_id: 1, message: [] });
    assert.equal(r.status, 'ok', 'once: the next call is answered as usual');
    nc.onAction('get_status', { delayMs: 300 });
    const t0 = Date.now();
    await c.call('get_status');
    assert.ok(Date.now() - t0 >= 280);
    nc.onAction('get_login_info', { silent: true, once: true });
    await assert.rejects(c.call('get_login_info', {}, 400), /no such frame/);
    assert.equal((await c.call('get_login_info')).status, 'ok');
    nc.onAction('send_private_msg', (call) => (call.params.user_id === 9 ? { drop: true } : undefined));
    assert.equal((await c.call('send_private_msg', { user_id: 8, message: [] })).status, 'ok');
    c.ws.send(JSON.stringify({ action: 'send_private_msg', params: { user_id: 9, message: [] }, echo: 'x' }));
    await c.closed;
    await nc.waitDisconnected();
    assert.equal(nc.sent('send_private_msg').at(-1).answered, null);
  } finally {
    await nc.close();
  }
});

test('fake_napcat: events in NapCat\'s shapes, the message_sent echo, and the images it serves', async () => {
  const nc = await startFakeNapCat({ reportSelfMessage: true });
  try {
    const c = await client(nc.url);
    await nc.waitConnected();
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000a49444154789c63000100000500010d0a2db40000000049454e44ae426082', 'hex');
    const url = nc.image('cat.png', png);
    const id = nc.groupMessage({ groupId: 100, groupName: '测试群', userId: 111, card: '阿狸', segments: [
      seg.at(nc.selfId), seg.image({ url, fileSize: png.length }), seg.text(' 看猫'), seg.face(317, '/菜汪'),
      seg.file({ name: '报告.pdf', size: 1234 }), seg.forward('7301'), seg.reply(42), seg.atAll()] });
    const ev = await c.until((f) => f.post_type === 'message');
    assert.equal(ev.message_id, id);
    assert.equal(typeof ev.group_id, 'number');
    assert.equal(typeof ev.user_id, 'number');
    assert.equal(ev.sender.card, '阿狸');
    assert.equal(ev.sender.role, 'member');
    assert.equal(ev.message_format, 'array');
    assert.equal(ev.group_name, '测试群');
    assert.deepEqual(ev.message[0], { type: 'at', data: { qq: '3000000001' } });
    assert.equal(ev.message[1].data.file_size, String(png.length));
    assert.equal(ev.message[1].data.sub_type, 0);
    assert.equal(ev.message[3].data.raw.faceText, '/菜汪');
    assert.equal(ev.message[3].data.id, '317');
    assert.deepEqual(ev.message[6], { type: 'reply', data: { id: '42' } });
    assert.deepEqual(ev.message[7], { type: 'at', data: { qq: 'all' } });
    const got = Buffer.from(await (await fetch(ev.message[1].data.url)).arrayBuffer());
    assert.equal(sha256(got), sha256(png));
    assert.equal(nc.imageHits.length, 1);

    const pid = nc.privateMessage({ userId: 222, segments: [seg.text('私聊')] });
    const tid = nc.privateMessage({ userId: 333, groupId: 100, segments: [seg.text('临时')] });
    nc.poke({ groupId: 100, userId: 111, targetId: nc.selfId });
    nc.groupRecall({ groupId: 100, userId: 111, messageId: id });
    const p = await c.until((f) => f.message_id === pid);
    assert.deepEqual([p.message_type, p.sub_type, p.group_id], ['private', 'friend', undefined]);
    const t = await c.until((f) => f.message_id === tid);
    assert.deepEqual([t.message_type, t.sub_type, t.group_id], ['private', 'group', 100]);
    const poke = await c.until((f) => f.sub_type === 'poke');
    assert.deepEqual([poke.notice_type, poke.target_id, poke.user_id, poke.group_id], ['notify', nc.selfId, 111, 100]);
    const rc = await c.until((f) => f.notice_type === 'group_recall');
    assert.deepEqual([rc.message_id, rc.operator_id], [id, 111]);

    // the bot sends: the answer, then NapCat's message_sent echo with the same id
    const ans = await c.call('send_group_msg', { group_id: 100, message: [seg.text('好')] });
    const echo = await c.until((f) => f.post_type === 'message_sent');
    assert.equal(echo.message_id, ans.data.message_id);
    assert.deepEqual([echo.user_id, echo.group_id, echo.message[0].data.text], [nc.selfId, 100, '好']);
    nc.messageSent({ userId: 222, segments: [seg.text('从手机发的')] });
    const own = await c.until((f) => f.post_type === 'message_sent' && f.message_type === 'private');
    assert.deepEqual([own.user_id, own.target_id], [nc.selfId, 222]);
    c.ws.close();
  } finally {
    await nc.close();
  }
});

test('fake_napcat: the reverse role sends NapCat\'s headers and reads a refused handshake\'s status', async () => {
  const seen = [];
  const http = createServer();
  const wss = new WebSocketServer({ noServer: true });
  http.on('upgrade', (req, socket, head) => {
    seen.push(req.headers);
    if (req.headers.authorization !== 'Bearer tok') {
      socket.end('HTTP/1.1 401 Unauthorized\r\nContent-Length: 3\r\nConnection: close\r\n\r\nno\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      ws.on('message', () => {});
      ws.send(JSON.stringify({ action: 'get_login_info', params: {}, echo: 1 }));
    });
  });
  await new Promise((r) => http.listen(0, '127.0.0.1', r));
  const url = `ws://127.0.0.1:${http.address().port}/onebot/v11/ws`;
  const nc = await startFakeNapCat({ token: 'tok', heartbeatMs: 0 });
  try {
    const bad = await nc.connectReverse(url, { token: 'bad' });
    assert.equal(bad.status, 401);
    const good = await nc.connectReverse(url);
    assert.equal(good.status, 101);
    assert.deepEqual([seen[1].authorization, seen[1]['x-self-id'], seen[1]['x-client-role']], ['Bearer tok', '3000000001', 'Universal']);
    const call = await nc.waitAnswered('get_login_info');
    assert.equal(call.echo, 1);
    assert.equal(nc.connected(), 1);
    nc.drop();
    await nc.waitDisconnected();
  } finally {
    await nc.close();
    wss.close();
    http.closeAllConnections();
    await new Promise((r) => http.close(r));
  }
});
