// qq_media.test.mjs — s22 (issue 15): image downloads are off the
// logging thread. A scripted slow image host on 127.0.0.1 (the fake
// NapCat's /img/, answering after a delay) holds up only the
// conversation whose message carries the image: another group's
// messages are logged and answered while the download hangs, and the
// slow group's own later message and a recall of it wait behind the image
// message, so its log stays in order.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { seg, sha256 } from '../fake_napcat.mjs';
import { BOT, sleep, withWorld } from '../qq_world.mjs';

const G1 = 100000061, G2 = 100000062;
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000a49444154789c63000100000500010d0a2db40000000049454e44ae426082', 'hex');

test('[s22 issue15] a hanging image download in one group: another group is logged and answered meanwhile; the slow group stays in order', async () => {
  await withWorld({ qq: { mediaTimeoutMs: 8000 } }, async (w) => {
    const url = w.nc.image('slow.png', PNG, 'image/png', 3500);
    const slow = w.nc.groupMessage({ groupId: G1, userId: 111, segments: [seg.image({ url, file: 'slow.png' }), seg.text(' 看图')] });
    const later = w.nc.groupMessage({ groupId: G1, userId: 112, segments: [seg.text('图后面的话')] });
    await w.nc.waitFor(() => w.nc.imageHits.length >= 1, 3000, 'the download to start');
    w.nc.groupRecall({ groupId: G1, userId: 112, messageId: later });
    const t0 = Date.now();
    const b1 = w.nc.groupMessage({ groupId: G2, userId: 221, segments: [seg.text('另一个群')] });
    const b2 = w.nc.groupMessage({ groupId: G2, userId: 222, segments: [seg.at(BOT), seg.text(' 在吗')] });
    // G2 is logged and answered while G1's image is still on its way
    const items2 = await w.waitLogged(`group:${G2}`, 2, 2500);
    assert.deepEqual(items2.map((m) => m.id), [String(b1), String(b2)]);
    await w.nc.waitAction((a) => a.action === 'send_group_msg' && a.params.group_id === G2, 2500);
    const ms = Date.now() - t0;
    assert.ok(ms < 2500, `G2 logged and answered ${ms} ms after its messages, while G1's download hangs 3.5 s`);
    assert.deepEqual(await w.transcript(`group:${G1}`), [], 'G1 waits for its image: nothing of it logged yet');
    // then G1: the image message with its bytes, the later one after it, recalled
    const items1 = await w.waitLogged(`group:${G1}`, (xs) => xs.length === 2 && xs[1].recalledAt, 8000);
    assert.deepEqual(items1.map((m) => m.id), [String(slow), String(later)]);
    assert.deepEqual(items1[0].media, [`media/${sha256(PNG)}.png`]);
    assert.ok(!items1[0].recalledAt, 'only the recalled message is flagged');
    await sleep(200);
    const st = await w.worlds();
    assert.ok(JSON.stringify(st).includes('"eventsDropped":0'), JSON.stringify(st));
  });
});
