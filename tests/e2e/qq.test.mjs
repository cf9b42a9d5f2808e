// qq.test.mjs — issue 15, the QQ world's events and replies end to end:
// `zcor serve` with worlds.qq (forward mode) dialling the fake NapCat of
// tests/fake_napcat.mjs, the model at tests/fake_openai.mjs. Each check of
// the Tests list is a test of its own, written from the contract
// (docs/QQ.md): what is logged (the transcript over REST), what wakes
// the bot, what one turn covers, and the OneBot actions zcor sends. The
// connection itself (drops, tokens, reverse mode, status) is in
// qq_conn.test.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { get } from 'node:http';

import { seg, sha256 } from '../fake_napcat.mjs';
import { request } from '../net.mjs';
import { BOT, batchTexts, sleep, withWorld } from '../qq_world.mjs';

const G1 = 100000001, G2 = 100000002;
// past quietMs (150) and maxWaitMs (1000): what has not happened by then never will
const QUIET_WAIT = 1300;

async function waitFor(pred, ms, what) {
  const t0 = Date.now();
  while (!pred()) {
    if (Date.now() - t0 > ms) assert.fail(`${what} did not happen within ${ms} ms`);
    await sleep(20);
  }
}

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000a49444154789c63000100000500010d0a2db40000000049454e44ae426082', 'hex');

test('[issue 15] a mention is answered in that group: send_group_msg, a reply segment quoting it first, then the text', async () => {
  await withWorld({ model: () => ({ content: '在的，什么事？' }) }, async (w) => {
    const id = w.nc.groupMessage({ groupId: G1, groupName: '测试一群', userId: 111, card: '阿狸',
      segments: [seg.at(BOT), seg.text(' 你在吗')] });
    const send = await w.nc.waitAction('send_group_msg', 8000);
    assert.equal(send.params.group_id, G1, 'group_id is a number, the group the mention came from');
    const msg = send.params.message;
    assert.ok(Array.isArray(msg), 'message is an array of segments');
    assert.deepEqual(msg[0], { type: 'reply', data: { id: String(id) } });
    assert.ok(msg.slice(1).some((s) => s.type === 'text' && s.data.text.includes('在的，什么事？')), JSON.stringify(msg));
    // logged before the turn, with its sender and the mention
    const items = await w.waitLogged(`group:${G1}`, 1);
    assert.equal(items[0].id, String(id));
    assert.equal(items[0].senderId, '111');
    assert.equal(items[0].senderName, '阿狸');
    assert.ok(items[0].mentions.includes(String(BOT)), JSON.stringify(items[0]));
    assert.match(items[0].text, /你在吗/);
    // one request, one turn, in that conversation
    assert.equal(w.fake.requests.length, 1);
    assert.deepEqual(batchTexts(w.fake.requests[0]).length, 1);
    const turns = await w.turns(`group:${G1}`);
    assert.equal(turns.total, 1);
    assert.equal(turns.items[0].reply, '在的，什么事？');
    await sleep(400);
    assert.equal(w.nc.sent('send_group_msg').length, 1, 'sent once');
  });
});

test('[issue 15] a message without a mention is logged and not answered', async () => {
  await withWorld({}, async (w) => {
    const id = w.nc.groupMessage({ groupId: G1, userId: 111, nickname: '路人', segments: [seg.text('今天天气不错')] });
    const items = await w.waitLogged(`group:${G1}`, 1);
    assert.equal(items[0].id, String(id));
    assert.equal(items[0].text, '今天天气不错');
    assert.equal(items[0].senderName, '路人');
    // time is seconds in the event, ISO 8601 UTC in the log
    assert.ok(Math.abs(Date.parse(items[0].time) - Date.now()) < 10000, items[0].time);
    await sleep(QUIET_WAIT);
    assert.deepEqual(w.nc.sent().filter((a) => a.action.startsWith('send_')), []);
    assert.equal(w.fake.requests.length, 0, 'no turn, no model call');
    assert.equal((await w.turns()).total, 0);
  });
});

test('[issue 15] five quick messages make one turn: one model request with all five, one turn record', async () => {
  await withWorld({}, async (w) => {
    const texts = ['小钟', '帮我看看', '这个问题', '怎么回事', '在线等'];
    const ids = [];
    for (const t of texts) {
      ids.push(w.nc.groupMessage({ groupId: G1, userId: 111, segments: [seg.text(t)] })); // the first wakes by name
      await sleep(40);
    }
    await w.nc.waitAction('send_group_msg', 8000);
    await sleep(QUIET_WAIT);
    assert.equal(w.fake.requests.length, 1, 'one model request');
    assert.deepEqual(batchTexts(w.fake.requests[0]), texts);
    const turns = await w.turns(`group:${G1}`);
    assert.equal(turns.total, 1, JSON.stringify(turns.items.map((t) => t.batch)));
    assert.equal(turns.items[0].batch.length, 5);
    assert.equal(w.nc.sent('send_group_msg').length, 1);
    assert.equal((await w.transcript(`group:${G1}`)).length, 5);
  });
});

test('[issue 15] a sticker reply ([[图片: stickers/x.gif]]) becomes an image segment whose base64 is the file\'s bytes', async () => {
  const gif = Buffer.concat([Buffer.from('GIF89a\x01\x00\x01\x00\x80\x00\x00', 'latin1'), Buffer.from('qq-test sticker 菜汪')]);
  let send = null;
  await withWorld({ model: () => ({ content: send }) }, async (w) => {
    // the official way: an image seen in a conversation, collected with qq_save_sticker
    const logged = await request(w.srv, '/api/v1/conversations/private%3A555/messages', { method: 'POST',
      body: { messages: [{ id: 's1', senderId: '555', text: '这个表情', media: [{ type: 'image', data: gif.toString('base64'), name: 'x.gif' }] }] } });
    assert.equal(logged.status, 200, logged.text);
    const saved = await request(w.srv, '/api/v1/tools/qq_save_sticker', { method: 'POST',
      body: { media: `media/${sha256(gif)}.gif`, name: '菜汪', meaning: '无语' } });
    assert.equal(saved.status, 200, saved.text);
    send = saved.json.send ?? saved.json.data?.send;
    assert.equal(send, '[[图片: stickers/菜汪.gif]]');
    const id = w.nc.groupMessage({ groupId: G1, userId: 111, segments: [seg.at(BOT), seg.text(' 来个表情')] });
    const act = await w.nc.waitAction('send_group_msg', 8000);
    const msg = act.params.message;
    assert.deepEqual(msg[0], { type: 'reply', data: { id: String(id) } });
    const img = msg.find((s) => s.type === 'image');
    assert.ok(img, JSON.stringify(msg));
    assert.match(img.data.file, /^base64:\/\//);
    assert.equal(sha256(Buffer.from(img.data.file.slice('base64://'.length), 'base64')), sha256(gif));
    assert.ok(!msg.some((s) => s.type === 'text' && s.data.text.includes('[[图片')), 'the marker is not sent as text');
  });
});

test('[issue 15] the bot\'s own messages (message_sent, and user_id = the bot) are never logged nor answered', async () => {
  // botId is not set: the world learns the bot's id from get_login_info
  await withWorld({ napcat: { reportSelfMessage: true }, model: () => ({ content: '收到' }) }, async (w) => {
    const id = w.nc.groupMessage({ groupId: G1, userId: 111, segments: [seg.at(BOT), seg.text(' 说句话')] });
    const send = await w.nc.waitAction('send_group_msg', 8000);
    await w.nc.waitAnswered('send_group_msg', 2000); // then NapCat echoes it as message_sent
    // from the bot's phone: a message_sent, and one reported as a plain message from the bot's id
    w.nc.messageSent({ groupId: G1, segments: [seg.text('我在手机上说的')] });
    w.nc.groupMessage({ groupId: G1, userId: BOT, nickname: '小钟', segments: [seg.at(BOT), seg.text(' 自己@自己')] });
    w.nc.messageSent({ userId: 111, segments: [seg.text('私聊里我说的')] });
    const later = w.nc.groupMessage({ groupId: G1, userId: 112, segments: [seg.text('别人的话')] });
    const items = await w.waitLogged(`group:${G1}`, (xs) => xs.some((x) => x.id === String(later)));
    assert.deepEqual(items.map((x) => x.id), [String(id), String(later)]);
    assert.ok(!items.some((x) => x.senderId === String(BOT)));
    assert.ok(!items.some((x) => x.id === String(send.data.message_id)));
    assert.deepEqual(await w.transcript('private:111'), []);
    await sleep(QUIET_WAIT);
    assert.equal(w.nc.sent('send_group_msg').length, 1, 'the bot\'s own @ of itself wakes nothing');
    assert.equal(w.fake.requests.length, 1);
  });
});

test('[issue 15] an admission allow-list (admission.groups) keeps another group out of the transcript and unanswered', async () => {
  await withWorld({ config: { admission: { groups: [String(G1)] } } }, async (w) => {
    w.nc.groupMessage({ groupId: G2, userId: 111, segments: [seg.at(BOT), seg.text(' 外面的群')] });
    const inside = w.nc.groupMessage({ groupId: G1, userId: 111, segments: [seg.at(BOT), seg.text(' 里面的群')] });
    await w.nc.waitAction('send_group_msg', 8000);
    await sleep(QUIET_WAIT);
    assert.deepEqual(await w.transcript(`group:${G2}`), []);
    assert.deepEqual((await w.transcript(`group:${G1}`)).map((x) => x.id), [String(inside)]);
    assert.deepEqual(w.sendsTo({ group: G2 }), []);
    assert.equal(w.sendsTo({ group: G1 }).length, 1);
    assert.equal(w.fake.requests.length, 1);
    assert.ok(!w.fake.requests.some((q) => JSON.stringify(q.body).includes('外面的群')));
  });
});

test('[issue 15] a slow model in one group does not delay another group', async () => {
  const model = (req) => (batchTexts(req).join('').includes('A组') ? { content: 'A 的回答', delayMs: 3000 } : { content: 'B 的回答' });
  await withWorld({ model }, async (w) => {
    w.nc.groupMessage({ groupId: G1, userId: 111, segments: [seg.at(BOT), seg.text(' A组的问题')] });
    await sleep(50);
    const t0 = Date.now();
    w.nc.groupMessage({ groupId: G2, userId: 222, segments: [seg.at(BOT), seg.text(' B组的问题')] });
    const b = await w.nc.waitAction((a) => a.action === 'send_group_msg' && a.params.group_id === G2, 8000);
    const took = b.at - t0;
    assert.ok(took < 1500, `group B's reply took ${took} ms`);
    assert.equal(w.sendsTo({ group: G1 }).length, 0, 'A is still waiting for its model');
    const a = await w.nc.waitAction((x) => x.action === 'send_group_msg' && x.params.group_id === G1, 8000);
    assert.ok(a.at > b.at);
  });
});

test('[issue 15] an image is downloaded into the media cache: media/<sha>.png in the transcript with the fake\'s bytes', async () => {
  await withWorld({}, async (w) => {
    const url = w.nc.image('D0C5A1B2.png', PNG);
    const id = w.nc.groupMessage({ groupId: G1, userId: 111, segments: [seg.at(BOT),
      seg.image({ url, file: 'D0C5A1B2.png', fileSize: PNG.length }), seg.text(' 这张图')] });
    const items = await w.waitLogged(`group:${G1}`, 1);
    assert.equal(items[0].id, String(id));
    const ref = `media/${sha256(PNG)}.png`;
    assert.deepEqual(items[0].media, [ref]);
    assert.ok(w.nc.imageHits.length >= 1, 'zcor fetched the url');
    const got = await new Promise((resolve, reject) => {
      get({ host: '127.0.0.1', port: w.srv.port, path: `/api/v1/${ref}`, headers: { authorization: `Bearer ${w.srv.token}` } }, (res) => {
        assert.equal(res.statusCode, 200);
        const c = [];
        res.on('data', (d) => c.push(d));
        res.on('end', () => resolve(Buffer.concat(c)));
      }).on('error', reject);
    });
    assert.equal(sha256(got), sha256(PNG));
    // the model saw the image as part of the message
    await w.nc.waitAction('send_group_msg', 8000);
    assert.match(JSON.stringify(w.fake.requests[0].body), new RegExp(sha256(PNG)));
  });
});

test('[issue 15] audit: a slow image host in one group holds another group\'s reply up one mediaTimeoutMs at most, not one per image', async () => {
  await withWorld({ qq: { mediaTimeoutMs: 1500 } }, async (w) => {
    // three images, each answered after 1.4 s: one at a time, 4.2 s of downloads
    const urls = ['s1.png', 's2.png', 's3.png'].map((n) => w.nc.image(n, PNG, 'image/png', 1400));
    w.nc.groupMessage({ groupId: G1, userId: 111, segments: urls.map((url, i) => seg.image({ url, file: `s${i}.png` })) });
    await w.nc.waitFor(() => w.nc.imageHits.length >= 1, 3000, 'the first download');
    const t0 = Date.now();
    w.nc.groupMessage({ groupId: G2, userId: 222, segments: [seg.at(BOT), seg.text(' 在吗')] });
    await w.nc.waitAction((a) => a.action === 'send_group_msg' && a.params.group_id === G2, 8000);
    const ms = Date.now() - t0;
    assert.ok(ms < 3000, `G2 was answered ${ms} ms after its mention (the downloads of G1's images take 1.5 s together at most)`);
    // G1's message is logged all the same, with what arrived in time
    const items = await w.waitLogged(`group:${G1}`, 1);
    assert.equal(items[0].text, '[图片][图片][图片]');
    assert.ok(items[0].media.length <= 1, JSON.stringify(items[0]));
  });
});

test('[issue 15] group_recall flags the message (recalledAt), it stays in the log', async () => {
  await withWorld({}, async (w) => {
    const id = w.nc.groupMessage({ groupId: G1, userId: 111, segments: [seg.text('说错了')] });
    const keep = w.nc.groupMessage({ groupId: G1, userId: 112, segments: [seg.text('这条不撤')] });
    await w.waitLogged(`group:${G1}`, 2);
    w.nc.groupRecall({ groupId: G1, userId: 111, messageId: id });
    const items = await w.waitLogged(`group:${G1}`, (xs) => xs.some((x) => x.id === String(id) && x.recalledAt));
    assert.equal(items.length, 2, 'kept, flagged');
    const r = items.find((x) => x.id === String(id));
    assert.ok(Math.abs(Date.parse(r.recalledAt) - Date.now()) < 10000, r.recalledAt);
    assert.equal(items.find((x) => x.id === String(keep)).recalledAt ?? null, null);
    assert.equal(w.fake.requests.length, 0, 'a recall wakes nothing');
  });
});

test('[issue 15] a poke at the bot wakes it in that group; a poke at someone else does not', async () => {
  await withWorld({ model: () => ({ content: '别戳了' }) }, async (w) => {
    w.nc.groupMessage({ groupId: G1, userId: 111, segments: [seg.text('大家好')] });
    w.nc.groupMessage({ groupId: G2, userId: 111, segments: [seg.text('大家好')] });
    await w.waitLogged(`group:${G1}`, 1);
    await w.waitLogged(`group:${G2}`, 1);
    w.nc.poke({ groupId: G2, userId: 111, targetId: 222 });
    await sleep(QUIET_WAIT);
    assert.deepEqual(w.sendsTo({ group: G2 }), []);
    assert.equal(w.fake.requests.length, 0);
    w.nc.poke({ groupId: G1, userId: 111, targetId: BOT });
    const send = await w.nc.waitAction('send_group_msg', 8000);
    assert.equal(send.params.group_id, G1);
    assert.ok(send.params.message.some((s) => s.type === 'text' && s.data.text.includes('别戳了')));
    assert.equal(w.fake.requests.length, 1);
    // a poke is no message: the transcript holds only what was said
    assert.equal((await w.transcript(`group:${G1}`)).length, 1);
  });
});

test('[issue 15] a poke at the bot wakes it in an admitted group that has said nothing yet; not in a group the allow-list keeps out', async () => {
  const G3 = 100000003;
  await withWorld({ config: { admission: { groups: [String(G3)] } }, model: () => ({ content: '我在' }) }, async (w) => {
    w.nc.poke({ groupId: G2, userId: 111, targetId: BOT });
    w.nc.poke({ groupId: G3, userId: 111, targetId: BOT });
    await w.nc.waitFor(() => w.sendsTo({ group: G3 }).length === 1, 8000, 'the poke in the fresh group answered');
    await sleep(QUIET_WAIT);
    assert.deepEqual(w.sendsTo({ group: G2 }), []);
    assert.equal(w.fake.requests.length, 1);
  });
});

test('[issue 15] @全体成员 alone does not wake the bot; it is logged with the mention "all"', async () => {
  await withWorld({}, async (w) => {
    const id = w.nc.groupMessage({ groupId: G1, userId: 111, role: 'admin', segments: [seg.atAll(), seg.text(' 今晚八点开会')] });
    const items = await w.waitLogged(`group:${G1}`, 1);
    assert.equal(items[0].id, String(id));
    assert.ok(items[0].mentions.includes('all'), JSON.stringify(items[0]));
    await sleep(QUIET_WAIT);
    assert.deepEqual(w.sendsTo({ group: G1 }), []);
    assert.equal(w.fake.requests.length, 0);
  });
});

test('[issue 15] a private message is always answered (send_private_msg with user_id)', async () => {
  await withWorld({ model: () => ({ content: '私聊收到' }) }, async (w) => {
    const id = w.nc.privateMessage({ userId: 222, nickname: '小明', segments: [seg.text('随便说一句')] });
    const send = await w.nc.waitAction('send_private_msg', 8000);
    assert.equal(send.params.user_id, 222);
    assert.equal(send.params.group_id, undefined);
    assert.ok(send.params.message.some((s) => s.type === 'text' && s.data.text.includes('私聊收到')), JSON.stringify(send.params));
    const items = await w.waitLogged('private:222', 1);
    assert.equal(items[0].id, String(id));
    assert.equal(items[0].senderName, '小明');
    assert.deepEqual(w.nc.sent('send_group_msg'), []);
  });
});

test('[issue 15] a temporary chat (private, sub_type group) is logged as private:<user> and answered through send_private_msg with its group_id', async () => {
  await withWorld({ model: () => ({ content: '临时会话收到' }) }, async (w) => {
    const id = w.nc.privateMessage({ userId: 333, groupId: G1, segments: [seg.text('群里加不了好友，临时问下')] });
    const send = await w.nc.waitAction('send_private_msg', 8000);
    assert.equal(send.params.user_id, 333);
    assert.equal(send.params.group_id, G1);
    const items = await w.waitLogged('private:333', 1);
    assert.equal(items[0].id, String(id));
    assert.deepEqual(await w.transcript(`group:${G1}`), []);
  });
});

test('[issue 15] segments render in order (face with raw.faceText / id, file, forward, reply); a name or a reply to the bot wakes it', async () => {
  await withWorld({ model: () => ({ content: '嗯' }) }, async (w) => {
    const first = w.nc.groupMessage({ groupId: G1, userId: 111, segments: [seg.text('看'), seg.face(317, '/菜汪'),
      seg.face(14), seg.file({ name: '周报.pdf', size: 20480 }), seg.forward('7301234'), seg.record()] });
    const replying = w.nc.groupMessage({ groupId: G1, userId: 112, segments: [seg.reply(first), seg.text('同意')] });
    const items = await w.waitLogged(`group:${G1}`, 2);
    const t = items[0].text;
    const order = ['看', '[表情:/菜汪]', '[表情:id=14]', '周报.pdf', '合并转发', '7301234'].map((s) => [s, t.indexOf(s)]);
    for (const [s, at] of order) assert.ok(at >= 0, `${s} in ${t}`);
    assert.deepEqual(order.map((x) => x[1]), [...order.map((x) => x[1])].sort((a, b) => a - b), t);
    assert.match(t, /文件/);
    assert.match(t, /\[[^\]]+\]$/, 'an unknown segment (record) as [类型] at the end');
    assert.equal(items[1].replyTo, String(first));
    assert.equal(items[1].text, '同意');
    await sleep(QUIET_WAIT);
    assert.equal(w.fake.requests.length, 0, 'none of them wakes the bot');
    // a name from worlds.qq.names wakes it; its reply's message id is the bot's
    w.nc.groupMessage({ groupId: G1, userId: 111, segments: [seg.text('问问小钟吧')] });
    const sent = await w.nc.waitAnswered('send_group_msg', 8000);
    const botMsg = sent.data.message_id;
    await sleep(QUIET_WAIT);
    assert.equal(w.fake.requests.length, 1);
    // a reply to the bot's own message wakes it, without @ or name
    const r = w.nc.groupMessage({ groupId: G1, userId: 113, segments: [seg.reply(botMsg), seg.text('你说得对')] });
    await w.nc.waitFor(() => w.sendsQuoting(r).length === 1, 8000, 'the reply to the bot answered');
    assert.equal(w.fake.requests.length, 2);
  });
});

test('[issue 15] messages that arrive during a turn are the next batch: one turn at a time, a waking one schedules it', async () => {
  let n = 0;
  await withWorld({ model: () => (++n === 1 ? { content: '第一轮', delayMs: 800 } : { content: '第二轮' }) }, async (w) => {
    w.nc.groupMessage({ groupId: G1, userId: 111, segments: [seg.at(BOT), seg.text(' 第一个问题')] });
    await waitFor(() => w.fake.requests.length === 1, 5000, 'the first turn\'s request');
    w.nc.groupMessage({ groupId: G1, userId: 112, segments: [seg.text('插一句')] });
    w.nc.groupMessage({ groupId: G1, userId: 113, segments: [seg.at(BOT), seg.text(' 第二个问题')] });
    await w.nc.waitFor(() => w.sendsTo({ group: G1 }).length === 2, 8000, 'two replies');
    assert.equal(w.fake.requests.length, 2);
    const first = batchTexts(w.fake.requests[0]), second = batchTexts(w.fake.requests[1]);
    assert.equal(first.length, 1, JSON.stringify(first));
    assert.match(first[0], /第一个问题/);
    assert.equal(second.length, 2, JSON.stringify(second));
    assert.match(second[0], /插一句/);
    assert.match(second[1], /第二个问题/);
    const [a, b] = w.sendsTo({ group: G1 });
    assert.ok(a.params.message.some((s) => s.type === 'text' && s.data.text.includes('第一轮')));
    assert.ok(b.params.message.some((s) => s.type === 'text' && s.data.text.includes('第二轮')));
    const turns = (await w.turns(`group:${G1}`)).items;
    assert.equal(turns.length, 2);
    assert.ok(Date.parse(turns[0].startedAt) >= Date.parse(turns[1].endedAt), 'one turn at a time');
  });
});

test('[issue 15] maxWaitMs: a burst that never goes quiet still gets its turn about maxWaitMs after the waking message', async () => {
  await withWorld({}, async (w) => {
    const t0 = Date.now();
    w.nc.groupMessage({ groupId: G1, userId: 111, segments: [seg.at(BOT), seg.text(' 开始')] });
    const stop = Date.now() + 3000;
    let i = 0, last = t0, gap = 0;
    while (Date.now() < stop) {
      await sleep(80); // always inside quietMs (150)
      w.nc.groupMessage({ groupId: G1, userId: 112, segments: [seg.text(`刷屏${++i}`)] });
      if (!w.sendsTo({ group: G1 }).length) gap = Math.max(gap, Date.now() - last);
      last = Date.now();
    }
    const first = w.sendsTo({ group: G1 })[0];
    assert.ok(first, 'answered while the burst went on');
    // without maxWaitMs it could come only after the burst (3 s + quietMs); the turn itself may take a while on a busy machine
    assert.ok(first.at - t0 < 2600, `the first reply came ${first.at - t0} ms after the waking message`);
    // (on a loaded machine a timer may fire late: a gap past quietMs ends the burst early, rightly)
    if (gap < 150)
      assert.ok(first.at - t0 >= 900, `the first reply came ${first.at - t0} ms after the waking message, before maxWaitMs`);
  });
});

test('[issue 15] repliesPerMinute: past the limit a mention is logged, gets no turn and no reply', async () => {
  await withWorld({ qq: { repliesPerMinute: 1 } }, async (w) => {
    w.nc.groupMessage({ groupId: G1, userId: 111, segments: [seg.at(BOT), seg.text(' 一')] });
    await w.nc.waitAction('send_group_msg', 8000);
    await sleep(300);
    const second = w.nc.groupMessage({ groupId: G1, userId: 111, segments: [seg.at(BOT), seg.text(' 二')] });
    await w.waitLogged(`group:${G1}`, (xs) => xs.some((x) => x.id === String(second)));
    await sleep(QUIET_WAIT);
    assert.equal(w.sendsTo({ group: G1 }).length, 1);
    assert.equal(w.fake.requests.length, 1);
    assert.equal((await w.turns(`group:${G1}`)).total, 1);
    assert.ok((await w.worlds()).qq.rateLimited >= 1);
    // another group has its own budget
    w.nc.groupMessage({ groupId: G2, userId: 111, segments: [seg.at(BOT), seg.text(' 三')] });
    await w.nc.waitFor(() => w.sendsTo({ group: G2 }).length === 1, 8000, 'the other group answered');
  });
});

test('[issue 15] a failed turn sends worlds.qq.apology; a long reply is split, the reply segment only first; [[@id]] is an at segment', async () => {
  let n = 0;
  const long = '这是一段很长的回答。'.repeat(12); // 120 characters
  const model = () => (++n === 1 ? { status: 500, error: 'upstream down' } : { content: `[[@111]] ${long}` });
  await withWorld({ qq: { apology: '抱歉，我刚才走神了', replyMaxChars: 50 }, model }, async (w) => {
    w.nc.groupMessage({ groupId: G1, userId: 111, segments: [seg.at(BOT), seg.text(' 在吗')] });
    await w.nc.waitFor(() => w.sendsTo({ group: G1 }).length === 1, 8000, 'the apology');
    const apology = w.sendsTo({ group: G1 })[0].params.message;
    assert.ok(apology.some((s) => s.type === 'text' && s.data.text.includes('抱歉，我刚才走神了')), JSON.stringify(apology));
    assert.equal((await w.turns(`group:${G1}`)).items[0].status, 'error');
    await sleep(400);
    const m2 = w.nc.groupMessage({ groupId: G1, userId: 111, segments: [seg.at(BOT), seg.text(' 再说一遍')] });
    await w.nc.waitFor(() => w.sendsTo({ group: G1 }).length >= 4, 8000, 'the long reply in pieces');
    await sleep(500);
    const parts = w.sendsTo({ group: G1 }).slice(1).map((a) => a.params.message);
    assert.ok(parts.length >= 3, `${parts.length} messages`);
    assert.deepEqual(parts[0][0], { type: 'reply', data: { id: String(m2) } });
    assert.ok(parts.slice(1).every((p) => !p.some((s) => s.type === 'reply')), 'the reply segment only in the first');
    assert.ok(parts[0].some((s) => s.type === 'at' && s.data.qq === '111'), JSON.stringify(parts[0]));
    const text = parts.flat().filter((s) => s.type === 'text').map((s) => s.data.text).join('');
    assert.equal(text.replace(/\s/g, ''), long);
    for (const p of parts) {
      const chars = [...p.filter((s) => s.type === 'text').map((s) => s.data.text).join('')].length;
      assert.ok(chars <= 50, `a message of ${chars} characters`);
    }
    assert.equal(w.sendsTo({ group: G1 }).filter((a) => JSON.stringify(a.params).includes('抱歉')).length, 1, 'one apology');
  });
});
