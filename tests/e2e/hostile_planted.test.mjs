// hostile_planted.test.mjs — issue 12: links and FIFOs planted inside a
// memory directory, as data (tests/hostile/planted.json). Each case is
// planted in a fresh copy of a used directory (an image in the media
// cache, a collected sticker, a backup, mirror/ on, PERSONA.md); then
// every entry point that reads or writes there runs through the CLI and
// a real `zcor serve`, each call under a timeout. Nothing outside the
// directory may be read (a canary in every outside file never shows up in
// an answer or inside the directory), written, linked or removed (the
// outside tree is the same, byte for byte; no new link appears); nothing
// hangs; nothing crashes (no signal, serve exits 0); and zcor doctor
// names the planted path (UNSAFE_PATH).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  cpSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { request, runThenStop, startServe } from '../net.mjs';
import { mkTmp } from '../tmpdir.mjs';

const BIN = process.env.ZCOR_BIN;
assert.ok(BIN, 'ZCOR_BIN must name the zcor binary');
const HERE = dirname(fileURLToPath(import.meta.url));
const CORPUS = JSON.parse(readFileSync(join(HERE, '..', 'hostile', 'planted.json'), 'utf8'));
const LIMIT_MS = 20000; // one call; a hang fails the case instead of the suite
const CANARY = `ZCOR-OUTSIDE-CANARY-${randomBytes(6).toString('hex')}`;
const gif = (tail) => Buffer.concat([Buffer.from('GIF89a\x01\x00\x01\x00\x80\x00\x00', 'latin1'), Buffer.from(tail)]);

function env() {
  const e = { ...process.env };
  delete e.ZCOR_DIR;
  delete e.ZCOR_TOKEN;
  return e;
}

// One CLI call, bounded; returns { status, out } (out: stdout + stderr).
function run(dir, args, { input, conv } = {}) {
  const r = spawnSync(BIN, ['--dir', dir, ...(conv ? ['--conversation', conv] : []), ...args],
    { env: env(), input, encoding: 'utf8', timeout: LIMIT_MS, maxBuffer: 64 << 20 });
  const what = `zcor ${args.join(' ').slice(0, 120)}`;
  assert.notEqual(r.error?.code, 'ETIMEDOUT', `${what} hung (more than ${LIMIT_MS} ms)`);
  assert.equal(r.signal, null, `${what} died of ${r.signal}: ${r.stderr}`);
  assert.ok(r.status >= 0 && r.status <= 3, `${what} exited ${r.status}: ${r.stderr}`);
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

function runOk(dir, args, opts) {
  const r = run(dir, args, opts);
  assert.equal(r.status, 0, r.out);
  return JSON.parse(r.out);
}

async function bounded(promise, what) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${LIMIT_MS} ms`)), LIMIT_MS);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

// Every entry below a directory, without following links: path → what it
// is (a link's target, a file's sha-256, 'dir', 'fifo').
function tree(root) {
  const out = new Map();
  const walk = (rel) => {
    const p = rel ? join(root, rel) : root;
    const st = lstatSync(p, { throwIfNoEntry: false });
    if (!st) return;
    if (st.isSymbolicLink()) out.set(rel, `link → ${readlinkSync(p)}`);
    else if (st.isDirectory()) {
      out.set(rel, 'dir');
      for (const n of readdirSync(p)) walk(rel ? join(rel, n) : n);
    } else if (st.isFile()) out.set(rel, `file ${createHash('sha256').update(readFileSync(p)).digest('hex')}`);
    else out.set(rel, st.isFIFO() ? 'fifo' : 'other');
  };
  walk('');
  return out;
}

function regularFiles(root) {
  return [...tree(root)].filter(([, k]) => k.startsWith('file ')).map(([rel]) => join(root, rel));
}

function links(root) {
  return [...tree(root)].filter(([, k]) => k.startsWith('link')).map(([rel]) => rel).sort();
}

// A used directory to copy for each case, and the state backup (holding
// the canary) that stands outside.
function template() {
  const tpl = join(mkTmp('zcor-planted-tpl-'), 'mem');
  mkdirSync(tpl);
  writeFileSync(join(tpl, 'config.json'), '{"mirror": true}\n');
  writeFileSync(join(tpl, 'PERSONA.md'), '我是测试用的人设。\n');
  const image = gif('template image');
  runOk(tpl, ['transcript', 'log', '--conversation', 'group:1'], {
    input: JSON.stringify({ messages: [{ id: 't1', time: '2026-11-29T10:00:00Z', senderId: '5', text: '看图', media: [{ type: 'image', data: image.toString('base64') }] }] }),
  });
  const ref = runOk(tpl, ['tool', 'qq_transcript', '{"action":"read","conversation":"group:1"}']).items[0].media[0];
  assert.match(ref, /^media\/[0-9a-f]{64}\.gif$/);
  runOk(tpl, ['tool', 'qq_save_sticker', JSON.stringify({ media: ref, name: '无语', meaning: '懒得吐槽' })]);
  runOk(tpl, ['tool', 'zcor_memory_write', '{"title":"模板记忆","content":"在模板里写的"}']);
  const backup = runOk(tpl, ['backup']).file.replace(/^backups\//, '');
  const scratch = join(mkTmp('zcor-planted-state-'), 'mem');
  runOk(scratch, ['tool', 'zcor_memory_write', JSON.stringify({ title: CANARY, content: CANARY })]);
  const state = readFileSync(join(scratch, runOk(scratch, ['backup']).file));
  return { tpl, ref, hash: ref.slice(6, 70), image, backup, state };
}

// The outside directory: every file holds the canary.
function outside(root, t) {
  const o = join(root, 'outside');
  mkdirSync(join(o, 'dir'), { recursive: true });
  writeFileSync(join(o, 'secret.gif'), gif(CANARY));
  writeFileSync(join(o, 'secret.txt'), `${CANARY}\n`);
  writeFileSync(join(o, 'state.json'), t.state);
  for (const n of ['canary.gif', 'link.gif', 'x.gif', `${t.hash}.gif`]) writeFileSync(join(o, 'dir', n), gif(CANARY));
  writeFileSync(join(o, 'dir', 'memory-state-outside.json'), t.state);
  return o;
}

function plant(mem, out, c, t) {
  const where = c.where.replace('{hash}', t.hash);
  const p = join(mem, where);
  rmSync(p, { recursive: true, force: true });
  mkdirSync(dirname(p), { recursive: true });
  if (c.kind === 'symlink') symlinkSync(join(out, c.target), p);
  else {
    const r = spawnSync('mkfifo', [p]);
    assert.equal(r.status, 0, `mkfifo ${p}`);
  }
  return where;
}

// Every CLI entry point that reads or writes inside the directory.
function cliCalls(mem, exp, t) {
  const outs = [];
  const call = (args, opts) => { const r = run(mem, args, opts); outs.push(r.out); return r; };
  const tool = (name, args, conv) => call(['tool', name, JSON.stringify(args)], { conv });
  // first, while it is as planted (a media write replaces a planted file)
  const doctor = call(['doctor', '--json']);
  tool('qq_save_sticker', { media: t.ref, name: 'link' });
  tool('qq_save_sticker', { media: t.ref, name: 'x' });
  tool('qq_save_sticker', { media: t.ref, name: '群里存的' }, 'group:1');
  tool('qq_memory', { action: 'upsert', path: 'STICKERS.md', name: 'link', meaning: '种下的', image: 'stickers/link.gif' });
  tool('qq_rename_sticker', { from: 'link', to: 'link2' });
  tool('qq_rename_sticker', { from: '无语', to: '无语2' });
  tool('zcor_memory_backup', {});
  for (const f of [t.backup, 'memory-state-outside.json', 'memory-state-planted.json', 'memory-state-fifo.json']) tool('zcor_memory_restore', { backupFile: f });
  call(['restore', t.backup]);
  call(['export', 'qq-memory', exp]);
  tool('zcor_memory_write', { title: '改动', content: '镜像要跟着写' }); // mirror/ follows a change
  call(['transcript', 'log', '--conversation', 'group:1'], {
    input: JSON.stringify({ messages: [
      { id: 'c1', time: '2026-11-30T10:00:00Z', senderId: '6', text: '同一张图', media: [{ type: 'image', data: t.image.toString('base64') }] },
      { id: 'c2', time: '2026-11-30T10:01:00Z', senderId: '6', text: '新图', media: [{ type: 'image', data: gif('new image').toString('base64') }, t.ref] }] }),
  });
  call(['prefix']);
  call(['--conversation', 'group:1', 'recall', '--message', '无语 模板记忆', '--json']);
  const check = call(['check-reply', '[[图片: stickers/link.gif]] [[图片: stickers/x.gif]] [[图片: stickers/canary.gif]] [[图片: stickers/无语.gif]]']);
  return { outs, check, doctor };
}

// Every REST route that reads or writes inside the directory, and the
// page's files (embedded: they must not care).
async function serveCalls(mem, t) {
  const outs = [];
  const srv = await startServe(BIN, mem, env());
  await runThenStop(srv, async () => {
    const hit = async (path, opts = {}) => {
      const r = await bounded(request(srv, path, opts), `${opts.method ?? 'GET'} ${path}`);
      outs.push(r.text);
      assert.ok(r.status < 500, `${opts.method ?? 'GET'} ${path} answered ${r.status}: ${r.text}`);
      return r;
    };
    for (const f of ['link.gif', 'x.gif', 'canary.gif', encodeURIComponent('无语.gif'), encodeURIComponent('无语2.gif')]) await hit(`/api/v1/stickers/${f}`);
    await hit(`/api/v1/media/${t.hash}.gif`);
    await hit(`/api/v1/media/${t.hash}.gif`, { conv: 'group:1' });
    await hit('/');
    await hit('/assets/app.css');
    await hit('/api/v1/tools/qq_save_sticker', { method: 'POST', body: { media: t.ref, name: 'link3' } });
    await hit('/api/v1/tools/qq_rename_sticker', { method: 'POST', body: { from: 'link', to: 'link4' } });
    await hit('/api/v1/backup', { method: 'POST', body: {} });
    await hit('/api/v1/restore', { method: 'POST', body: { backupFile: t.backup } });
    await hit('/api/v1/restore', { method: 'POST', body: { backupFile: 'memory-state-outside.json' } });
    // the Backups panel (issue 18): the listing and the download of a planted link, FIFO or outside name
    await hit('/api/v1/backups');
    for (const n of ['memory-state-planted.json', 'memory-state-fifo.json', 'memory-state-outside.json', encodeURIComponent(t.backup)]) await hit(`/api/v1/backups/${n}`);
    await hit('/api/v1/conversations/group%3A1/messages', { method: 'POST',
      body: { messages: [{ id: 's1', time: '2026-11-30T11:00:00Z', senderId: '7', text: '服务器收图', media: [{ type: 'image', data: t.image.toString('base64') }] }] } });
    await hit('/api/v1/nodes', { method: 'POST', body: { title: '网页写的', content: '镜像' } });
    await hit('/api/v1/prefix?conversation=group%3A1');
    await hit('/api/v1/recall', { method: 'POST', body: { conversation: 'group:1', messages: ['无语'] } });
    await hit('/api/v1/check-reply', { method: 'POST', body: { text: '[[图片: stickers/link.gif]]' } });
  });
  return outs;
}

const t = template();

for (const c of CORPUS.cases) {
  test(`I12-9 planted ${c.kind} at ${c.where}${c.target ? ` → outside/${c.target}` : ''}`, async () => {
    const root = mkTmp('zcor-planted-');
    const mem = join(root, 'mem'), exp = join(root, 'export');
    cpSync(t.tpl, mem, { recursive: true });
    const out = outside(root, t);
    const where = plant(mem, out, c, t);
    const before = tree(out);
    const planted = links(mem);

    const { outs, check, doctor } = cliCalls(mem, exp, t);
    outs.push(...await serveCalls(mem, t));

    // nothing outside written, linked or removed
    assert.deepEqual(tree(out), before, 'the outside directory changed');
    // nothing outside read: the canary shows nowhere
    for (const o of outs) assert.ok(!o.includes(CANARY), `an answer carried the outside canary: ${o.slice(0, 300)}`);
    for (const f of [...regularFiles(mem), ...regularFiles(exp)]) {
      assert.ok(!readFileSync(f).includes(CANARY), `${f} holds what was outside`);
    }
    // no new link (rename must not carry a planted one to a new name), none exported
    const now = links(mem);
    assert.ok(now.every((l) => planted.includes(l)), `new links: ${now.filter((l) => !planted.includes(l))}`);
    assert.deepEqual(links(exp), []);
    // a planted file is no sendable sticker
    const images = JSON.parse(check.out).images;
    assert.ok(!images.some((i) => i === where || i === 'stickers/canary.gif'), `sendable: ${images}`);
    // the doctor names it and asks for a person
    assert.equal(doctor.status, 2, doctor.out);
    const findings = JSON.parse(doctor.out).findings.filter((f) => f.code === 'UNSAFE_PATH');
    assert.ok(findings.some((f) => f.path === where), `doctor: ${JSON.stringify(findings)}`);
  });
}

// #7 through the CLI: a used directory whose memory.db became 0 bytes is
// refused by every command (it used to open as a new, empty store, exit
// 0), nothing is changed, and the doctor says why (exit 2).
test('I12-7 an empty memory.db in a used directory is refused, and the doctor says so', () => {
  const mem = join(mkTmp('zcor-planted-empty-'), 'mem');
  cpSync(t.tpl, mem, { recursive: true });
  for (const f of ['memory.db-wal', 'memory.db-shm']) rmSync(join(mem, f), { force: true });
  writeFileSync(join(mem, 'memory.db'), '');
  const before = tree(mem);
  const q = run(mem, ['tool', 'zcor_memory_query', '{}']);
  assert.equal(q.status, 1, q.out);
  assert.match(q.out, /memory\.db is empty \(0 bytes\) but the directory holds data/);
  assert.match(q.out, /zcor restore/);
  const d = run(mem, ['doctor', '--json']);
  assert.equal(d.status, 2, d.out);
  assert.ok(JSON.parse(d.out).findings.some((f) => f.code === 'MEMORY_DB_EMPTY' && f.path === 'memory.db'), d.out);
  assert.deepEqual(tree(mem), before, 'a refused directory changed');
  // what the message says to do works
  cpSync(join(mem, 'memory.db'), join(mem, 'memory.db.empty'));
  rmSync(join(mem, 'memory.db'));
  run(mem, ['restore', t.backup]);
  assert.equal(runOk(mem, ['tool', 'zcor_memory_query', '{"keywords":["模板记忆"]}']).total, 1);
});

// serve.token planted as a FIFO or as a link to an outside file: zcor
// serve neither hangs on it nor follows it; it refuses to start, names
// the file, and leaves the outside alone.
for (const kind of ['fifo', 'symlink']) {
  test(`I12-9/10 a planted serve.token (${kind}) stops zcor serve clearly`, () => {
    const root = mkTmp('zcor-planted-token-');
    const mem = join(root, 'mem');
    cpSync(t.tpl, mem, { recursive: true });
    const out = outside(root, t);
    rmSync(join(mem, 'serve.token'), { force: true });
    plant(mem, out, { kind, where: 'serve.token', target: 'secret.txt' }, t);
    const before = tree(out);
    const r = run(mem, ['serve', '--listen', `127.0.0.1:${20000 + Math.floor(Math.random() * 20000)}`]);
    assert.notEqual(r.status, 0, r.out);
    assert.match(r.out, /serve\.token/);
    assert.ok(!r.out.includes(CANARY), r.out);
    assert.deepEqual(tree(out), before, 'the outside directory changed');
  });
}
