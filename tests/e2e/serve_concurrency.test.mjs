// serve_concurrency.test.mjs — `zcor serve` and CLI processes on one
// memory directory at once (SPEC §1: zcor stays correct when a second
// process opens it while serve runs). Issue 12, defect 13: "cannot open
// the memory directory … memory.db failed (disk I/O error)" under
// concurrent requests after CLI writes.
//
// The cause was serve's read-ahead (zcor_warm → zc_store_prefetch): it
// opened memory.db and its -wal with open() and closed them, and closing
// any descriptor of a file drops every POSIX lock the process holds on
// it, SQLite's included. From then on the next CLI process to close its
// connection thought it was the last one, checkpointed and deleted the
// -wal and -shm that serve still used: serve went on in a deleted WAL
// (its writes invisible to every other process, lost at its exit) and
// new connections hit disk I/O errors. The test has readers, writers and
// CLI writers run together through a server that read ahead, and expects
// no 5xx and every acknowledged write readable by every process, during
// and after.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

import { request, runThenStop, startServe } from '../net.mjs';
import { mkTmp } from '../tmpdir.mjs';

const BIN = process.env.ZCOR_BIN;
assert.ok(BIN, 'ZCOR_BIN must name the zcor binary');

function cleanEnv() {
  const e = { ...process.env };
  delete e.ZCOR_DIR;
  delete e.ZCOR_TOKEN;
  return e;
}

// One `zcor --dir dir tool name args` process; resolves { code, out, err }.
function cli(dir, name, args) {
  return new Promise((resolve, reject) => {
    const p = spawn(BIN, ['--dir', dir, 'tool', name, JSON.stringify(args)],
      { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '', err = '';
    p.stdout.setEncoding('utf8').on('data', (c) => { out += c; });
    p.stderr.setEncoding('utf8').on('data', (c) => { err += c; });
    p.on('error', reject);
    p.on('close', (code) => resolve({ code, out, err }));
  });
}

test('issue 12 #13: serve readers and writers with CLI writers on one directory: no 5xx, no write lost', async () => {
  const dir = mkTmp('zcor-conc-');
  // a store the CLI filled before serve started, as in the report
  const seeded = [];
  for (let i = 0; i < 20; i++) {
    const r = await cli(dir, 'zcor_memory_write', { title: `种子 ${i}`, content: `早先写的第 ${i} 条` });
    assert.equal(r.code, 0, r.out + r.err);
    seeded.push(JSON.parse(r.out).node.id);
  }
  // serve reads the store ahead (--warm, on by default) before it listens
  const srv = await startServe(BIN, dir, cleanEnv(), ['--warm', '8']);
  await runThenStop(srv, async () => {
    const failures = [];   // every 5xx or transport error, with its body
    const acked = [];      // ids a writer was told are written
    let writersLeft = 0;
    const note = (what, r) => {
      if (r.status >= 500) failures.push(`${what}: ${r.status} ${r.text}`);
    };
    const call = async (what, path, opts) => {
      try {
        const r = await request(srv, path, opts);
        note(what, r);
        return r;
      } catch (e) {
        failures.push(`${what}: ${e.message}`);
        return { status: 0 };
      }
    };

    const cliWriter = async (w) => {
      for (let i = 0; i < 25; i++) {
        const r = await cli(dir, 'zcor_memory_write', { title: `命令行 ${w}-${i}`, content: '命令行写入' });
        if (r.code !== 0) failures.push(`cli write ${w}-${i}: exit ${r.code} ${r.out}${r.err}`);
        else acked.push(JSON.parse(r.out).node.id);
        if (i % 5 === 4) { // a CLI reader too (it opens, reads, closes)
          const q = await cli(dir, 'zcor_memory_read', { id: seeded[i % seeded.length] });
          if (q.code !== 0) failures.push(`cli read: exit ${q.code} ${q.out}${q.err}`);
        }
      }
    };
    const httpWriter = async (w) => {
      for (let i = 0; i < 30; i++) {
        const r = await call('POST /nodes', '/api/v1/nodes', { method: 'POST',
          body: { title: `网页 ${w}-${i}`, content: '网页写入', keywords: ['并发'] } });
        if (r.status === 201) acked.push(r.json.node.id);
        else if (r.status) failures.push(`POST /nodes: ${r.status} ${r.text}`);
        if (i % 4 === 0 && r.status === 201) // mark important: the page then fires reads
          await call('PUT important', `/api/v1/nodes/${r.json.node.id}/important`,
            { method: 'PUT', body: { important: true } });
      }
    };
    const reader = async (k) => {
      const paths = ['/api/v1/nodes?limit=50', '/api/v1/roots', `/api/v1/nodes/${seeded[k % seeded.length]}`,
        '/api/v1/history?limit=5', '/api/v1/nodes?keywords=%E5%B9%B6%E5%8F%91', '/api/v1/config'];
      for (let i = 0; writersLeft > 0 || i < 10; i++) {
        // four reads at once, as the page does after a change
        await Promise.all([0, 1, 2, 3].map((j) => {
          const p = paths[(i + j + k) % paths.length];
          return call(`GET ${p}`, p);
        }));
      }
    };

    const writers = [0, 1, 2].map(cliWriter).concat([0, 1].map(httpWriter));
    writersLeft = writers.length;
    const done = writers.map((p) => p.finally(() => { writersLeft--; }));
    await Promise.all([...done, ...[0, 1, 2].map(reader)]);

    assert.deepEqual(failures, [], `requests failed:\n${failures.slice(0, 20).join('\n')}\n${srv.stderr().slice(-3000)}`);
    assert.equal(acked.length, 3 * 25 + 2 * 30);
    // the WAL serve writes into is still the directory's own
    const wal = join(dir, 'memory.db-wal');
    if (existsSync(wal)) {
      const fds = readdirSync(`/proc/${srv.proc.pid}/fd`).map((fd) => {
        try { return statSync(`/proc/${srv.proc.pid}/fd/${fd}`).ino; } catch { return null; }
      });
      assert.ok(fds.includes(statSync(wal).ino), 'serve writes to a memory.db-wal that is no longer in the directory');
    }
    // every acknowledged write, through serve and through a new process
    for (const id of [...seeded, ...acked]) {
      const r = await request(srv, `/api/v1/nodes/${id}`);
      assert.equal(r.status, 200, `serve cannot read ${id}: ${r.status} ${r.text}`);
    }
    const list = await cli(dir, 'zcor_memory_query', { limit: 1 });
    assert.equal(list.code, 0, list.out + list.err);
    assert.equal(JSON.parse(list.out).total, seeded.length + acked.length,
      'a process started now does not see every acknowledged write');
  });
  // and after serve stopped
  const after = await cli(dir, 'zcor_memory_query', { limit: 1 });
  assert.equal(after.code, 0, after.out + after.err);
  assert.equal(JSON.parse(after.out).total, 20 + 3 * 25 + 2 * 30, 'writes were lost when serve stopped');
});
