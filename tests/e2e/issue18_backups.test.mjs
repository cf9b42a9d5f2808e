// issue18_backups.test.mjs — issue 18, "Backup, restore and export from
// the page", over HTTP against a real `zcor serve`: GET backups lists the
// files zcor wrote in backups/ (name, size, time, kind) and nothing else;
// GET backups/{name} streams one as a download; a name that is a path
// (..%2F, an absolute path, %2e%2e), a file zcor did not write, or a
// symlink planted in backups/ (or backups/ itself a link) pointing outside
// receives a clear 400/404 and reads nothing; a caller bound to a group receives
// 403 (a backup holds every conversation's memory).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, renameSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
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

const SECRET = 'SECRET-OUTSIDE-THE-MEMORY-DIRECTORY';

test('issue18_backups_list_and_download: only zcor\'s own files in backups/, streamed as a download', async () => {
  const dir = mkTmp('zcor-backups-');
  const outside = mkTmp('zcor-outside-');
  const planted = 'memory-state-20200101T000000000Z.json';
  writeFileSync(join(outside, planted), SECRET);
  writeFileSync(join(outside, 'secret.txt'), SECRET);
  await withServe(BIN, dir, env(), async (srv) => {
    // no backups/ yet: an empty list
    let r = await request(srv, '/api/v1/backups');
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json, { items: [], truncated: false });

    assert.equal((await request(srv, '/api/v1/nodes', { method: 'POST', body: { title: '备份里的记忆', content: '内容' } })).status, 201);
    r = await request(srv, '/api/v1/backup', { method: 'POST', body: {} });
    assert.equal(r.status, 201, r.text);
    const name = r.json.file.replace(/^backups\//, '');
    assert.match(name, /^memory-state-\d{8}T\d{9}Z\.json$/);
    const path = join(dir, 'backups', name);

    // what zcor did not write is not listed: another file, a link under
    // zcor's own name, a directory
    writeFileSync(join(dir, 'backups', 'notes.txt'), 'not a backup');
    symlinkSync(join(outside, planted), join(dir, 'backups', planted));
    symlinkSync(join(outside, 'secret.txt'), join(dir, 'backups', 'COGNITION.md.bak-20200101T000000000Z'));
    mkdirSync(join(dir, 'backups', 'memory-state-20200102T000000000Z.json'));
    r = await request(srv, '/api/v1/backups');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.items.length, 1, r.text);
    const [item] = r.json.items;
    assert.equal(item.name, name);
    assert.equal(item.kind, 'state');
    assert.equal(item.size, statSync(path).size);
    const stamp = name.slice(13, 32);
    assert.equal(item.time, `${stamp.slice(0, 4)}-${stamp.slice(4, 6)}-${stamp.slice(6, 8)}T${stamp.slice(9, 11)}:${stamp.slice(11, 13)}:${stamp.slice(13, 15)}.${stamp.slice(15, 18)}Z`);

    // the download: the file's bytes, as an attachment
    r = await request(srv, `/api/v1/backups/${name}`);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.headers['content-disposition'], `attachment; filename="${name}"`);
    assert.match(r.headers['content-type'], /^application\/json/);
    assert.equal(r.headers['cache-control'], 'no-store');
    assert.equal(r.text, readFileSync(path, 'utf8'));
    assert.match(r.text, /备份里的记忆/);

    // refused, naming what to do, reading nothing
    const refused = [
      [`/api/v1/backups/..%2F..%2F${encodeURIComponent(join(outside, 'secret.txt'))}`, 404],
      ['/api/v1/backups/..%2Fmemory.db', 404],
      [`/api/v1/backups/${encodeURIComponent(join(outside, 'secret.txt'))}`, 404],
      [`/api/v1/backups/${join(outside, 'secret.txt')}`, 404],
      ['/api/v1/backups/..', 400],
      ['/api/v1/backups/%2e%2e', 400],
      ['/api/v1/backups/memory.db', 400],
      ['/api/v1/backups/notes.txt', 400],
      [`/api/v1/backups/${planted}`, 400], // the planted link
      ['/api/v1/backups/COGNITION.md.bak-20200101T000000000Z', 400],
      ['/api/v1/backups/memory-state-20200102T000000000Z.json', 400], // a directory
      ['/api/v1/backups/memory-state-20990101T000000000Z.json', 404], // none such
    ];
    for (const [p, status] of refused) {
      r = await request(srv, p);
      assert.equal(r.status, status, `${p}: ${r.text}`);
      assert.ok(r.json?.error?.message, `${p}: a JSON error`);
      assert.ok(!r.text.includes(SECRET), `${p} read the file outside`);
      assert.ok(!r.headers['content-disposition'], p);
    }
    r = await request(srv, '/api/v1/backups/notes.txt');
    assert.match(r.json.error.message, /not the name of a backup zcor wrote.*GET backups/);
    r = await request(srv, `/api/v1/backups/${planted}`);
    assert.match(r.json.error.message, /not a regular file \(a link/);

    // a caller bound to a group: the operator's
    for (const p of ['/api/v1/backups', `/api/v1/backups/${name}`]) {
      r = await request(srv, p, { conv: 'group:1' });
      assert.equal(r.status, 403, r.text);
      assert.match(r.json.error.message, /every conversation/);
    }
    // the operator's console may
    assert.equal((await request(srv, '/api/v1/backups', { conv: 'console:web' })).status, 200);

    // backups/ itself a link to a directory outside: refused, nothing read
    renameSync(join(dir, 'backups'), join(dir, 'backups.real'));
    symlinkSync(outside, join(dir, 'backups'));
    for (const p of ['/api/v1/backups', `/api/v1/backups/${planted}`]) {
      r = await request(srv, p);
      assert.equal(r.status, 400, `${p}: ${r.text}`);
      assert.match(r.json.error.message, /backups\/.*symbolic link/);
      assert.ok(!r.text.includes(SECRET), p);
    }
  });
});

test('issue18_backups_restore_lists_the_state_backup: a restore from the list adds the copy of the state it replaced', async () => {
  const dir = mkTmp('zcor-backups-');
  await withServe(BIN, dir, env(), async (srv) => {
    await request(srv, '/api/v1/nodes', { method: 'POST', body: { title: '旧的', content: '一' } });
    const made = (await request(srv, '/api/v1/backup', { method: 'POST', body: {} })).json.file.replace(/^backups\//, '');
    await request(srv, '/api/v1/nodes', { method: 'POST', body: { title: '新的', content: '二' } });
    const r = await request(srv, '/api/v1/restore', { method: 'POST', body: { backupFile: made } });
    assert.equal(r.status, 200, r.text);
    const previous = r.json.backupOfPrevious.replace(/^backups\//, '');
    const list = (await request(srv, '/api/v1/backups')).json.items.map((x) => x.name);
    assert.deepEqual(list, [previous, made].sort().reverse());
    // the copy of what was replaced holds it
    const copy = await request(srv, `/api/v1/backups/${previous}`);
    assert.match(copy.text, /新的/);
  });
});
