// qq_note.test.mjs — issue 15 (the QQ world's reply overhead): a turn
// worker does not wait for its delivery note's fsync. The note (what
// NapCat answered to the send) goes to the noter thread, which writes the
// notes that queued without their fsync and then waits for one
// (zcor_sync) — the fsync that makes the turn's record (committed before
// the reply, deferSync) durable too (docs/FORMATS.md, "A QQ turn's
// record"). The disk is a shim (tests/crash/fsynchold.c, LD_PRELOAD):
// while the file `hold` exists every fsync of `zcor serve` waits. Two
// mentions in two groups are logged (durable) and queued for the one
// turn worker; while the first turn's model answer is on its way the
// test starts holding the disk: the first reply goes out, its note's
// fsync is held, and the worker takes the second turn and answers it
// all the same (with the note on the worker, the second reply waits for
// the disk). Once the disk lets go every delivery is on its record.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { sql, until } from '../cli.mjs';
import { seg } from '../fake_napcat.mjs';
import { BOT, sleep, startWorld } from '../qq_world.mjs';

const SHIM = process.env.ZCOR_FSYNC_HOLD_SHIM;
const G0 = 100000070, G1 = 100000071, G2 = 100000072;

test('[issue15] issue15_note_off_worker: the one turn worker answers the next mention while the last delivery note waits for its fsync',
  { skip: !SHIM || !existsSync(SHIM) ? 'libzcor_fsynchold.so not built (release tree only)' : false }, async () => {
    const holdDir = (await import('../tmpdir.mjs')).mkTmp('zcor-hold-');
    const hold = join(holdDir, 'hold');
    let asked = 0;
    const w = await startWorld({
      qq: { quietMs: 0, maxConcurrentTurns: 1 },
      env: { LD_PRELOAD: SHIM, ZCOR_FSYNC_HOLD: hold },
      // the second turn's answer comes late: the test holds the disk meanwhile
      model: () => (++asked === 2 ? { content: '收到', delayMs: 1500 } : { content: '收到' }),
    });
    const delivered = () => sql(w.dir, `SELECT json_extract(record, '$.delivery.status') AS s FROM turns ORDER BY id`)
      .map((r) => r.s);
    try {
      // a first turn with the disk free (a new store's first recall writes
      // synonyms.json, with its own fsync)
      const id0 = w.nc.groupMessage({ groupId: G0, userId: 110, segments: [seg.at(BOT), seg.text(' 先来')] });
      await w.nc.waitFor(() => w.sendsQuoting(id0).length === 1, 8000, 'the warm-up mention answered');
      await until('its delivery noted', () => delivered().length === 1 && delivered()[0] === 'sent', 5000);
      const logged0 = (await w.worlds()).qq.eventsLogged;
      const id1 = w.nc.groupMessage({ groupId: G1, userId: 111, segments: [seg.at(BOT), seg.text(' 第一个')] });
      const id2 = w.nc.groupMessage({ groupId: G2, userId: 112, segments: [seg.at(BOT), seg.text(' 第二个')] });
      for (let i = 0; i < 100 && (await w.worlds()).qq.eventsLogged < logged0 + 2; i++) await sleep(50);
      assert.equal((await w.worlds()).qq.eventsLogged, logged0 + 2, 'both mentions logged and durable');
      for (let i = 0; i < 100 && asked < 2; i++) await sleep(20);
      assert.equal(asked, 2, 'the first of the two turns is waiting for its model answer');
      writeFileSync(hold, '');
      const first = [id1, id2], answered = () => first.filter((id) => w.sendsQuoting(id).length === 1).length;
      await w.nc.waitFor(() => answered() >= 1, 8000, 'the first of the two answered');
      await sleep(300); // its note is with the noter now, its fsync held
      await w.nc.waitFor(() => answered() === 2, 8000,
        'the second answered by the one worker while the first one\'s note waits for its fsync');
      assert.ok(existsSync(hold), 'the disk was held all along');
      rmSync(hold);
      // (read with the sqlite3 shell after the disk let go)
      let got = [];
      for (let i = 0; i < 100 && !(got.length === 3 && got.every((s) => s === 'sent')); i++) {
        await sleep(50);
        got = delivered();
      }
      assert.deepEqual(got, ['sent', 'sent', 'sent'], 'every delivery noted on its record');
      assert.equal(w.sendsQuoting(id1).length, 1);
      assert.equal(w.sendsQuoting(id2).length, 1);
    } finally {
      if (existsSync(hold)) rmSync(hold);
      await w.stop();
    }
  });
