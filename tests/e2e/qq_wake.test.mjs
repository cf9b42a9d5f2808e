// qq_wake.test.mjs — s22 (issue 15): a waking message that a turn's batch
// took is answered by that turn's reply. Before, its wake (set after the
// turn was queued, before the worker read the batch) stayed pending, and
// the next non-waking message got a second turn and a second reply,
// quoting the mention the first reply had answered already.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { seg } from '../fake_napcat.mjs';
import { BOT, batchTexts, sleep, withWorld } from '../qq_world.mjs';

const G1 = 100000071, G2 = 100000072;

async function until(pred, ms, what) {
  const t0 = Date.now();
  while (!pred()) {
    if (Date.now() - t0 > ms) assert.fail(`${what} did not happen within ${ms} ms`);
    await sleep(20);
  }
}

test('[s22 issue15] a mention the running turn\'s batch took wakes no second turn; later chatter is only logged', async () => {
  const model = (req) => {
    const t = batchTexts(req).join('|');
    if (t.includes('占住')) return { content: '好', delayMs: 1200 }; // holds the one worker
    return { content: '两个都收到', delayMs: 700 };
  };
  await withWorld({ model, qq: { maxConcurrentTurns: 1, quietMs: 0 } }, async (w) => {
    // G2 takes the only worker for 1.2 s
    w.nc.groupMessage({ groupId: G2, userId: 221, segments: [seg.at(BOT), seg.text(' 占住')] });
    await until(() => w.fake.requests.length === 1, 5000, 'G2\'s turn');
    // G1: a mention (its turn queued behind G2's), then another while it is queued
    const m1 = w.nc.groupMessage({ groupId: G1, userId: 111, segments: [seg.at(BOT), seg.text(' 第一个')] });
    await sleep(150);
    const m2 = w.nc.groupMessage({ groupId: G1, userId: 112, segments: [seg.at(BOT), seg.text(' 第二个')] });
    await w.waitLogged(`group:${G1}`, 2);
    assert.equal(w.fake.requests.length, 1, 'G1 waits for the worker');
    // G1's turn takes both and answers them in one reply
    await until(() => w.fake.requests.length === 2, 5000, 'G1\'s turn');
    assert.deepEqual(batchTexts(w.fake.requests[1]).length, 2, JSON.stringify(batchTexts(w.fake.requests[1])));
    // chatter while G1's model answers, and after
    w.nc.groupMessage({ groupId: G1, userId: 113, segments: [seg.text('闲聊一句')] });
    await w.nc.waitFor(() => w.sendsTo({ group: G1 }).length === 1, 5000, 'G1\'s reply');
    w.nc.groupMessage({ groupId: G1, userId: 114, segments: [seg.text('再闲聊一句')] });
    await w.waitLogged(`group:${G1}`, 4);
    await sleep(1300);
    const sends = w.sendsTo({ group: G1 });
    assert.equal(sends.length, 1, `one reply in G1, quoting ${m1}: ${JSON.stringify(sends.map((a) => a.params.message[0]))}`);
    assert.deepEqual(sends[0].params.message[0], { type: 'reply', data: { id: String(m1) } });
    assert.equal(w.fake.requests.length, 2, 'no turn for the chatter');
    assert.equal(w.sendsQuoting(m2).length, 0);
  });
});
