// qq_pipeline.test.mjs — issue 15 (the QQ world's reply overhead): the
// logging thread is pipelined. A chunk of events is committed without
// waiting for its fsync (ZCOR_LOG_NO_FSYNC) and handed to the syncer,
// which waits for the disk and only then counts its messages and wakes
// the bot; meanwhile the logging thread parses and writes the next chunk.
// The disk is a shim here (tests/crash/fsynchold.c, LD_PRELOAD): while
// the file `hold` exists every fsync of `zcor serve` waits (the test
// reads the log with the sqlite3 shell, and the counters from
// /api/v1/worlds, which reads no store). With the
// flush of the first mention held, a second mention in another group is
// still written to the log (the logging thread did not wait for the
// first one's fsync), and neither is counted as logged nor answered
// until the disk lets go; then both are answered, once each.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { sql, until } from '../cli.mjs';
import { seg } from '../fake_napcat.mjs';
import { BOT, sleep, startWorld } from '../qq_world.mjs';

const SHIM = process.env.ZCOR_FSYNC_HOLD_SHIM;
const G1 = 100000061, G2 = 100000062;

test('[issue15] pipelined logging: the next chunk is written while the last one waits for its fsync; nothing counts or wakes before it is durable',
  { skip: !SHIM || !existsSync(SHIM) ? 'libzcor_fsynchold.so not built (release tree only)' : false }, async () => {
    const holdDir = (await import('../tmpdir.mjs')).mkTmp('zcor-hold-');
    const hold = join(holdDir, 'hold');
    const w = await startWorld({
      qq: { quietMs: 0, pipelineLogging: true },
      env: { LD_PRELOAD: SHIM, ZCOR_FSYNC_HOLD: hold },
      model: () => ({ content: '收到' }),
    });
    try {
      const logged0 = (await w.worlds()).qq.eventsLogged;
      writeFileSync(hold, '');
      const id1 = w.nc.groupMessage({ groupId: G1, userId: 111, segments: [seg.at(BOT), seg.text(' 第一个')] });
      // (read with the sqlite3 shell: a call of zcor serve's own may
      // wait for the disk too, its read records' commit)
      const count = (g) => sql(w.dir, `SELECT count(*) AS n FROM messages WHERE conversation = 'group:${g}'`)[0].n;
      await until('the first mention committed', () => count(G1) === 1, 5000); // its fsync is held
      const id2 = w.nc.groupMessage({ groupId: G2, userId: 112, segments: [seg.at(BOT), seg.text(' 第二个')] });
      // written while the first chunk's fsync has not returned
      await until('the second mention written while the first one\'s fsync is held', () => count(G2) === 1, 5000);
      await sleep(300);
      const held = (await w.worlds()).qq;
      assert.equal(held.eventsLogged, logged0, 'nothing is counted as logged before its fsync');
      assert.equal(w.sendsQuoting(id1).length + w.sendsQuoting(id2).length, 0, 'nothing is answered before its fsync');
      assert.equal(w.fake.requests.length, 0, 'no turn ran before its batch was durable');
      rmSync(hold);
      await w.nc.waitFor(() => w.sendsQuoting(id1).length === 1 && w.sendsQuoting(id2).length === 1, 8000,
        'both mentions answered once the disk lets go');
      assert.equal((await w.worlds()).qq.eventsLogged, logged0 + 2);
      await sleep(300);
      assert.equal(w.sendsQuoting(id1).length, 1);
      assert.equal(w.sendsQuoting(id2).length, 1);
    } finally {
      if (existsSync(hold)) rmSync(hold);
      await w.stop();
    }
  });
