// media_scope.test.mjs — issue 12 #10 and #12 over HTTP, against a real
// `zcor serve`: the media cache is scoped (a caller bound to group:222
// that knows the hash of an image sent only in private:111 can neither
// fetch it nor save it as a global sticker, and is told the same as for
// an image never cached), and a media item's `file` is the host's alone
// (never a bound caller's; a FIFO answers at once; one message for every
// bad file).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { request, withServe } from '../net.mjs';
import { mkTmp } from '../tmpdir.mjs';

const BIN = process.env.ZCOR_BIN;
assert.ok(BIN, 'ZCOR_BIN must name the zcor binary');

function env() {
  const e = { ...process.env };
  delete e.ZCOR_DIR;
  delete e.ZCOR_TOKEN;
  return e;
}

const gif = Buffer.from('GIF89a\x01\x00\x01\x00\x80\x00\x00 only for 111', 'latin1');
const hash = createHash('sha256').update(gif).digest('hex');

async function within(promise, ms, what) {
  let timer;
  try {
    return await Promise.race([promise, new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
    })]);
  } finally {
    clearTimeout(timer);
  }
}

test('I12-12: a conversation sees only the media of its own messages', async () => {
  const dir = mkTmp('zcor-media-scope-');
  await withServe(BIN, dir, env(), async (srv) => {
    const logged = await request(srv, '/api/v1/conversations/private%3A111/messages', { method: 'POST',
      body: { messages: [{ id: 'p1', senderId: '111', text: '只给你看', media: [{ type: 'image', data: gif.toString('base64') }] }] } });
    assert.equal(logged.status, 200, logged.text);
    const path = `/api/v1/media/${hash}.gif`;
    // the host plane and the conversation itself
    for (const conv of [undefined, 'private:111']) {
      const r = await request(srv, path, { conv });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.headers['content-type'], 'image/gif');
    }
    // another conversation: as if it were never cached
    const other = await request(srv, path, { conv: 'group:222' });
    const never = await request(srv, `/api/v1/media/${'0'.repeat(64)}.gif`, { conv: 'group:222' });
    assert.equal(other.status, 404);
    assert.equal(other.json.error.message.replace(hash, 'H'), never.json.error.message.replace('0'.repeat(64), 'H'));
    const save = await request(srv, '/api/v1/tools/qq_save_sticker', { method: 'POST', conv: 'group:222',
      body: { media: `media/${hash}.gif`, name: '偷来的' } });
    assert.equal(save.status, 404, save.text);
    assert.equal(existsSync(join(dir, 'stickers', '偷来的.gif')), false);
    // nor can it make the image its own by posting the reference
    const claim = await request(srv, '/api/v1/conversations/group%3A222/messages', { method: 'POST', conv: 'group:222',
      body: { messages: [{ id: 'g1', senderId: '5', media: [`media/${hash}.gif`] }] } });
    assert.equal(claim.status, 400, claim.text);
    assert.equal((await request(srv, path, { conv: 'group:222' })).status, 404);
    // the host may collect it
    const mine = await request(srv, '/api/v1/tools/qq_save_sticker', { method: 'POST', body: { media: `media/${hash}.gif`, name: '收藏' } });
    assert.equal(mine.status, 200, mine.text);
  });
});

test('I12-10: a media file is the host\'s, never hangs, and says nothing about the machine', async () => {
  const dir = mkTmp('zcor-media-file-');
  const tmp = mkTmp('zcor-media-file-x-');
  const fifo = join(tmp, 'pipe.gif');
  assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
  const good = join(tmp, 'good.gif');
  writeFileSync(good, gif);
  writeFileSync(join(tmp, 'notes.txt'), 'just words');
  await withServe(BIN, dir, env(), async (srv) => {
    const post = (conv, id, file) => within(request(srv, '/api/v1/conversations/group%3A1/messages', { method: 'POST', conv,
      body: { messages: [{ id, senderId: '1', media: [{ type: 'image', file }] }] } }), 10000, `POST ${file}`);
    // bound: refused before any look at the file
    const bound = await post('group:1', 'b1', good);
    assert.equal(bound.status, 400);
    assert.match(bound.json.error.message, /cannot name a file on the server/);
    // host: one message for a FIFO, a missing file, a directory, a non-image
    const messages = [];
    for (const [i, f] of [fifo, join(tmp, 'missing.gif'), tmp, join(tmp, 'notes.txt')].entries()) {
      const r = await post(undefined, `h${i}`, f);
      assert.equal(r.status, 400, r.text);
      messages.push(r.json.error.message.split(f).join('<path>'));
    }
    assert.equal(new Set(messages).size, 1, messages.join('\n'));
    const ok = await post(undefined, 'h9', good);
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.json.logged, 1);
  });
});
