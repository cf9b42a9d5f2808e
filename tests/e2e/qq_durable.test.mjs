// qq_durable.test.mjs — s22 (issue 15's reply overhead): the QQ world's
// turn record commits without waiting for its fsync (zcor_turn's
// deferSync) and the reply goes out at once; the delivery note after the
// send is the synced commit that makes the record durable with it
// (docs/TURN.md, "Durability"). zcor serve is killed (SIGKILL) at the
// point that matters — NapCat has the reply action and has not answered
// it, so no note was written — and started again on the same directory:
// the message it answered is logged, its turn record is there with that
// batch, and the next mention's turn gets only the new message: the bot
// never answers the first one again.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { seg } from '../fake_napcat.mjs';
import { request, startServe } from '../net.mjs';
import { BIN, BOT, TOKEN, batchTexts, cleanEnv, sleep, startWorld } from '../qq_world.mjs';

const G1 = 100000051;

test('[s22 issue15] deferred record: kill -9 right at the reply action loses nothing, and the answered batch is never answered again', async () => {
  const w = await startWorld({ model: () => ({ content: '收到' }) });
  let srv2 = null;
  try {
    // NapCat takes the reply and never answers it: the world waits there
    w.nc.onAction('send_group_msg', { drop: true, once: true });
    const id1 = w.nc.groupMessage({ groupId: G1, userId: 111, segments: [seg.at(BOT), seg.text(' 第一个问题')] });
    await w.nc.waitFor(() => w.sendsQuoting(id1).length === 1, 8000, 'the first reply action');
    w.srv.proc.kill('SIGKILL');
    const r = await w.srv.exited;
    assert.equal(r.signal, 'SIGKILL');
    const requestsBefore = w.fake.requests.length;
    assert.equal(requestsBefore, 1, 'one model request for the first mention');

    srv2 = await startServe(BIN, w.dir, cleanEnv({ NAPCAT_TOKEN: TOKEN }));
    await w.nc.waitFor(() => w.nc.actions.filter((a) => a.action === 'get_login_info' && a.answered).length >= 2,
      8000, 'get_login_info on the second connection');
    await sleep(100);
    const get = async (path) => {
      const res = await request(srv2, path);
      assert.equal(res.status, 200, res.text);
      return res.json;
    };
    // the answered message and its turn survived the kill
    const log1 = await get(`/api/v1/conversations/${encodeURIComponent(`group:${G1}`)}/messages?limit=100`);
    assert.deepEqual(log1.items.map((m) => m.id), [String(id1)]);
    const turns1 = await get(`/api/v1/turns?conversation=${encodeURIComponent(`group:${G1}`)}`);
    assert.equal(turns1.total, 1, JSON.stringify(turns1));
    assert.deepEqual(turns1.items[0].batch, [String(id1)]);
    assert.equal(turns1.items[0].reply, '收到');

    // the next mention: a turn of its own message only, answered once
    const id2 = w.nc.groupMessage({ groupId: G1, userId: 111, segments: [seg.at(BOT), seg.text(' 第二个问题')] });
    await w.nc.waitFor(() => w.sendsQuoting(id2).length === 1, 8000, 'the second reply action');
    assert.equal(w.fake.requests.length, requestsBefore + 1);
    const texts = batchTexts(w.fake.requests[requestsBefore]);
    assert.equal(texts.length, 1, `the second turn's batch holds the new message alone: ${JSON.stringify(texts)}`);
    assert.match(texts[0], /第二个问题/);
    await sleep(400);
    assert.equal(w.sendsQuoting(id1).length, 1, 'the first mention is never answered again');
    let turns2;
    for (let t0 = Date.now(); ; await sleep(50)) {
      turns2 = await get(`/api/v1/turns?conversation=${encodeURIComponent(`group:${G1}`)}`);
      if (turns2.items[0] && turns2.items[0].delivery) break;
      if (Date.now() - t0 > 5000) assert.fail(`no delivery note: ${JSON.stringify(turns2)}`);
    }
    assert.equal(turns2.total, 2);
    assert.deepEqual(turns2.items[0].batch, [String(id2)]);
    assert.equal(turns2.items[0].delivery.status, 'sent', JSON.stringify(turns2.items[0]));
  } finally {
    if (srv2) await srv2.stop();
    await w.nc.close();
    await w.fake.close();
  }
});
