// hostile_paths.test.mjs — issue 12, "nothing outside the memory
// directory", made permanent: every hostile path and name of the corpus
// (tests/hostile/paths.txt, tests/hostile/names.txt: data, one per line
// with escapes) is driven through every entry point a path or a name
// reaches, over the real interfaces:
//   - `zcor mcp` over stdio (raw JSON-RPC lines, thousands of calls in one
//     process): every qq_memory action (path argument, image and name
//     fields, written lines; list and search, which read every view, for
//     a sample), qq_save_sticker (media, name),
//     qq_rename_sticker (from, to), zcor_memory_restore (backupFile), as
//     the operator and inside a group conversation; invalid UTF-8 as raw
//     bytes on the line;
//   - `zcor tool` (a sample of the same calls, one process each);
//   - `zcor import qq-memory` of a generated directory whose file names
//     and lines use the corpus (with links and a FIFO planted in it), then
//     `zcor migrate cognition --apply` of the COGNITION.md lines it brought;
//   - one `zcor serve`: every route that serves a file
//     (/api/v1/stickers/<name>, /api/v1/media/<name>, /assets/<path>,
//     /<path>) and views/read?path=.
// Beside the memory directory D lie canaries (outside/victim.gif — a real
// GIF —, outside/secret.txt, secret.txt): at the end they must be as they
// were (bytes, mtime, inode, link count), nothing new may exist outside D,
// no served body may equal a canary's bytes (or /etc/passwd), every call
// must get a well-formed answer (an error or a result; exit codes 0/1/2,
// migrate's 0/2/3 — never a signal), and the catalog must hold no path
// outside stickers/. The names the corpus lists as valid must still be
// accepted; every other name must be refused as a sticker name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync,
} from 'node:fs';
import { Agent } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { createHash } from 'node:crypto';

import { mkTmp } from '../tmpdir.mjs';
import { request, startServe, runThenStop } from '../net.mjs';

const BIN = process.env.ZCOR_BIN;
assert.ok(BIN, 'ZCOR_BIN must name the zcor binary');
const TESTS = dirname(dirname(fileURLToPath(import.meta.url)));
const GIF = Buffer.from('R0lGODlhAQABAIAAAP///wAAACwAAAAAAQABAAACAkQBADs=', 'base64');
// the cached image: its sha-256 (the cache names files by it)
const HASH = createHash('sha256').update(GIF).digest('hex');
const SECRET = 'the canary: never read, served or copied by zcor\n';
const ABS_CANARY = '/tmp/zcor-hostile-canary.gif'; // named by paths.txt

function env() {
  const e = { ...process.env };
  delete e.ZCOR_DIR;
  return e;
}

// ---- the corpus ------------------------------------------------------------

// One line of the corpus as bytes: \\ \n \r \t \0 \xHH \u{H…} \z, and
// {OUTSIDE} replaced by the canary directory.
function unescape(line, outside) {
  const src = Buffer.from(line.replaceAll('{OUTSIDE}', outside), 'utf8');
  const out = [];
  for (let i = 0; i < src.length; i++) {
    if (src[i] !== 0x5c || i + 1 >= src.length) { out.push(src[i]); continue; }
    const c = String.fromCharCode(src[++i]);
    if (c === '\\') out.push(0x5c);
    else if (c === 'n') out.push(0x0a);
    else if (c === 'r') out.push(0x0d);
    else if (c === 't') out.push(0x09);
    else if (c === '0') out.push(0);
    else if (c === 'z') { /* the empty string */ }
    else if (c === 'x') { out.push(parseInt(src.subarray(i + 1, i + 3).toString(), 16)); i += 2; }
    else if (c === 'u') {
      const end = src.indexOf(0x7d, i);
      out.push(...Buffer.from(String.fromCodePoint(parseInt(src.subarray(i + 2, end).toString(), 16)), 'utf8'));
      i = end;
    } else throw new Error(`unknown escape \\${c} in ${line}`);
  }
  return Buffer.from(out);
}

function corpus(file, outside) {
  const items = [];
  let valid = false;
  for (const line of readFileSync(join(TESTS, 'hostile', file), 'utf8').split('\n')) {
    if (line === '# valid:') valid = true;
    if (!line || line.startsWith('#')) continue;
    const bytes = unescape(line, outside);
    items.push({ line, bytes, str: bytes.toString('utf8'), utf8: Buffer.from(bytes.toString('utf8'), 'utf8').equals(bytes), valid });
  }
  return items;
}

// ---- the world: D beside its canaries ------------------------------------------

function snapshot(path) {
  const st = lstatSync(path);
  return { bytes: readFileSync(path), ino: st.ino, nlink: st.nlink, mtime: st.mtimeMs, size: st.size };
}

function world() {
  const top = mkTmp('zcor-hostile-');
  const D = join(top, 'D');
  const outside = join(top, 'outside');
  mkdirSync(outside);
  writeFileSync(join(outside, 'victim.gif'), GIF);
  writeFileSync(join(outside, 'secret.txt'), SECRET);
  writeFileSync(join(top, 'secret.txt'), SECRET);
  mkdirSync(join(D, 'media'), { recursive: true });
  mkdirSync(join(D, 'stickers'));
  // an image is in the media cache only when a message brought it (media.c)
  const logged = zcor(['--dir', D, 'transcript', 'log', '--conversation', 'group:1'], JSON.stringify({ messages: [
    { id: 'img-1', time: '2026-11-30T10:00:00Z', senderId: '9', text: '图', media: [{ type: 'image', data: GIF.toString('base64') }] }] }));
  assert.equal(logged.status, 0, logged.stdout.toString() + logged.stderr);
  const canaries = {};
  for (const p of [join(outside, 'victim.gif'), join(outside, 'secret.txt'), join(top, 'secret.txt')]) canaries[p] = snapshot(p);
  return { top, D, outside, canaries };
}

function checkCanaries(w, allowedTop) {
  for (const [p, was] of Object.entries(w.canaries)) {
    const now = snapshot(p);
    assert.ok(now.bytes.equals(was.bytes), `${p} changed`);
    assert.deepEqual([now.ino, now.nlink, now.mtime, now.size], [was.ino, was.nlink, was.mtime, was.size], `${p}: inode, links or mtime changed`);
  }
  assert.deepEqual(readdirSync(w.outside).sort(), ['secret.txt', 'victim.gif'], 'nothing new outside');
  assert.deepEqual(readdirSync(w.top).sort(), allowedTop.sort(), 'nothing new beside D');
  assert.ok(!existsSync(ABS_CANARY), `${ABS_CANARY} was created`);
}

const canaryBodies = () => [GIF, Buffer.from(SECRET), ...(existsSync('/etc/passwd') ? [readFileSync('/etc/passwd')] : [])];

// Everything under D is zcor's own: no symlink, and every sticker file a
// real image with one link.
function checkMemoryDir(w) {
  const walk = (d) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const st = lstatSync(p);
      assert.ok(!st.isSymbolicLink(), `${p} is a symlink`);
      if (st.isDirectory()) walk(p);
    }
  };
  walk(w.D);
  const magic = [Buffer.from('GIF8'), Buffer.from([0x89, 0x50, 0x4e, 0x47]), Buffer.from([0xff, 0xd8, 0xff]), Buffer.from('RIFF')];
  for (const name of readdirSync(join(w.D, 'stickers'))) {
    const p = join(w.D, 'stickers', name);
    const st = lstatSync(p);
    assert.ok(st.isFile(), `${p} is not a regular file`);
    assert.equal(st.nlink, 1, `${p} has ${st.nlink} links`);
    const head = readFileSync(p).subarray(0, 4);
    assert.ok(magic.some((m) => head.subarray(0, m.length).equals(m)), `${p} is no image`);
  }
}

// ---- the interfaces ----------------------------------------------------------

// `zcor mcp` speaking raw lines: call(name, args) or callRaw(bytes) queue
// a request; done() ends stdin and resolves the answers by id and the exit.
function mcp(dir, conv) {
  const p = spawn(BIN, ['--dir', dir, ...(conv ? ['--conversation', conv] : []), 'mcp'],
    { env: env(), stdio: ['pipe', 'pipe', 'pipe'] });
  const answers = new Map();
  const unparsable = [];
  const nullIds = [];
  let stderr = '', next = 1;
  p.stderr.on('data', (d) => { stderr += d; });
  createInterface({ input: p.stdout }).on('line', (line) => {
    let m;
    try { m = JSON.parse(line); } catch { unparsable.push(line); return; }
    if (m.id === null || m.id === undefined) nullIds.push(m);
    else answers.set(m.id, m);
  });
  const exited = new Promise((resolve) => p.on('close', (code, signal) => resolve({ code, signal })));
  const send = (buf) => p.stdin.write(Buffer.concat([buf, Buffer.from('\n')]));
  send(Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'hostile', version: '1' } } })));
  send(Buffer.from(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })));
  const calls = [];
  return {
    call(name, args, what) {
      const id = next++;
      calls.push({ id, name, args, what });
      send(Buffer.from(JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } })));
      return id;
    },
    // a request whose argument holds raw bytes (invalid UTF-8): the line
    // itself is then not JSON text, and the answer is a parse error
    callRaw(name, key, bytes, rest = {}) {
      const id = next++;
      const head = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: { ...rest, [key]: '\u0001MARK\u0001' } } });
      const [a, b] = head.split('\\u0001MARK\\u0001');
      const body = [];
      for (const byte of bytes) {
        if (byte === 0x22 || byte === 0x5c) body.push(0x5c, byte);
        else if (byte < 0x20) body.push(...Buffer.from(`\\u00${byte.toString(16).padStart(2, '0')}`));
        else body.push(byte);
      }
      send(Buffer.concat([Buffer.from(a), Buffer.from(body), Buffer.from(b)]));
      return id;
    },
    calls,
    async done() {
      p.stdin.end();
      const r = await exited;
      return { ...r, answers, unparsable, nullIds, stderr };
    },
  };
}

// The tool result of an MCP answer: {error: {code, message}} or the result.
function toolResult(m) {
  assert.equal(m.jsonrpc, '2.0');
  if (m.error) return { rpcError: m.error };
  assert.ok(Array.isArray(m.result?.content) && typeof m.result.content[0]?.text === 'string', `no content: ${JSON.stringify(m)}`);
  const j = m.result.structuredContent;
  assert.ok(j && typeof j === 'object', `no structured content: ${JSON.stringify(m)}`);
  assert.equal(Boolean(m.result.isError), Boolean(j.error), JSON.stringify(m));
  if (m.result.isError) assert.ok(j.error.code && typeof j.error.message === 'string', `bad error: ${JSON.stringify(j)}`);
  return j;
}

function zcor(args, input) {
  const r = spawnSync(BIN, args, { env: env(), input, timeout: 30000, maxBuffer: 64 << 20 });
  if (r.error) throw r.error;
  assert.equal(r.signal, null, `zcor ${args.join(' ')} died of ${r.signal}: ${r.stderr}`);
  return r;
}

function pct(bytes) {
  let s = '';
  for (const b of bytes) s += /[A-Za-z0-9_~-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).padStart(2, '0').toUpperCase()}`;
  return s;
}

// ---- the test -------------------------------------------------------------------

test('issue 12: hostile paths and names through every entry point leave nothing outside D touched', { timeout: 90000 }, async () => {
  const w = world();
  const paths = corpus('paths.txt', w.outside);
  const names = corpus('names.txt', w.outside);
  assert.ok(paths.length + names.length >= 200, 'the corpus has at least 200 entries');
  const all = [...paths, ...names];
  const stickerLine = '- 起点｜起点｜stickers/起点.gif\n';

  // a collected sticker to rename from and to point at
  let r = zcor(['--dir', w.D, 'tool', 'qq_save_sticker', JSON.stringify({ media: `media/${HASH}.gif`, name: '起点' })]);
  assert.equal(r.status, 0, r.stdout.toString() + r.stderr);

  // 1. MCP over stdio, the operator
  const host = mcp(w.D);
  const nameCalls = [];
  all.forEach((it, i) => {
    const s = it.str;
    const path = paths.includes(it);
    if (path) {
      host.call('qq_memory', { action: 'read', path: s });
      host.call('qq_memory', { action: 'upsert', path: s, name: 'hostile' });
      host.call('qq_memory', { action: 'remove', path: s, name: s });
      host.call('qq_memory', { action: 'write', path: s, content: '- x｜y\n' });
      host.call('qq_memory', { action: 'append', path: s, content: '- x｜y\n' });
      host.call('qq_save_sticker', { media: s, name: '存' });
      host.call('qq_rename_sticker', { from: s || 'x', to: '改' });
      host.call('zcor_memory_restore', { backupFile: s });
    }
    if (i % 10 === 0) { // they read every view: a sample
      host.call('qq_memory', { action: 'list', path: s });
      host.call('qq_memory', { action: 'search', path: s, query: s || 'x' });
    }
    host.call('qq_memory', { action: 'upsert', path: 'STICKERS.md', name: 'n', image: s });
    host.call('qq_memory', { action: 'upsert', path: 'STICKERS.md', name: s, image: 'stickers/起点.gif' });
    host.call('qq_memory', { action: 'upsert', path: 'COGNITION.md', name: s || 'x', meaning: s });
    host.call('qq_memory', { action: 'remove', path: 'COGNITION.md', name: s || 'x' }); // keeps it small
    host.call('qq_memory', { action: 'write', path: 'STICKERS.md', force: true, content: `${stickerLine}- 坏｜m｜${s}\n- ${s}｜m｜stickers/起点.gif\n` });
    host.call('qq_memory', { action: 'append', path: 'STICKERS.md', content: `- 坏二｜m｜${s}\n- 坏三｜m｜.qq-stickers/${s}\n` });
    // what a rename would move, had a written path got into the catalog
    for (const from of ['坏', '坏二', '坏三']) host.call('qq_rename_sticker', { from, to: '好' });
    host.call('qq_rename_sticker', { from: '好', to: '坏' });
    nameCalls.push({ it, id: host.call('qq_rename_sticker', { from: '起点', to: s }), field: 'to' });
    host.call('qq_rename_sticker', { from: s || 'x', to: '起点' }); // back, if it moved
    nameCalls.push({ it, id: host.call('qq_save_sticker', { media: `media/${HASH}.gif`, name: s }), field: 'name' });
    if (!it.utf8) {
      host.callRaw('qq_memory', 'path', it.bytes, { action: 'read' });
      host.callRaw('qq_save_sticker', 'name', it.bytes, { media: `media/${HASH}.gif` });
      host.callRaw('qq_rename_sticker', 'to', it.bytes, { from: '起点' });
      host.callRaw('zcor_memory_restore', 'backupFile', it.bytes);
    }
  });
  const h = await host.done();
  // the same inside a group conversation (the write gate and its own views)
  const group = mcp(w.D, 'group:100000001');
  for (const it of paths) {
    group.call('qq_memory', { action: 'read', path: it.str });
    group.call('qq_memory', { action: 'write', path: it.str, content: '- x｜y\n' });
    group.call('qq_memory', { action: 'upsert', path: it.str, name: 'x' });
    group.call('qq_save_sticker', { media: it.str, name: '群存' });
    group.call('qq_rename_sticker', { from: '起点', to: it.str });
  }
  const g = await group.done();
  for (const [who, res, client] of [['host', h, host], ['group', g, group]]) {
    assert.equal(res.signal, null, `zcor mcp (${who}) died of ${res.signal}: ${res.stderr}`);
    assert.equal(res.code, 0, `zcor mcp (${who}) exited ${res.code}: ${res.stderr.slice(-2000)}`);
    assert.deepEqual(res.unparsable, [], 'every stdout line is one JSON message');
    let nul = 0;
    for (const c of client.calls) {
      const m = res.answers.get(c.id);
      // JSON text with \u0000 is refused as a whole (parse error, id null)
      if (!m && JSON.stringify(c.args).includes('\\u0000')) { nul++; continue; }
      assert.ok(m, `${who}: no answer to ${c.name} ${JSON.stringify(c.args)}`);
      const j = toolResult(m);
      assert.ok(!j.rpcError, `${who}: ${c.name} ${JSON.stringify(c.args)} -> ${JSON.stringify(j)}`);
    }
    // the lines with raw invalid UTF-8 or a NUL are parse errors, answered
    // with id null
    const raw = who === 'host' ? all.filter((it) => !it.utf8).length * 4 : 0;
    assert.equal(res.nullIds.length, nul + raw, `${who}: parse errors`);
    for (const m of res.nullIds) assert.equal(m.error?.code, -32700, JSON.stringify(m));
  }
  // the one name rule, seen from outside: valid names pass, the others are
  // refused as names (NUL by the schema, before any rule sees a C string)
  for (const { it, id, field } of nameCalls) {
    if (!names.includes(it)) continue;
    const m = h.answers.get(id);
    if (!m) { // refused with its line (a NUL), above
      assert.ok(it.bytes.includes(0) && !it.valid);
      continue;
    }
    const j = toolResult(m);
    if (it.valid) { // passes the rule (a clash with an existing sticker may still refuse it)
      assert.ok(!j.error || j.error.code === 'conflict', `${field} ${JSON.stringify(it.str)} is a valid sticker name: ${JSON.stringify(j)}`);
    } else if (it.utf8) {
      assert.equal(j.error?.code, 'invalid_argument', `${field} ${JSON.stringify(it.str)} must be refused: ${JSON.stringify(j)}`);
      assert.match(j.error.message, new RegExp(`'${field}'`));
    }
  }
  checkCanaries(w, ['D', 'outside', 'secret.txt']);

  // 2. `zcor tool`, a sample, one process a call (exit 0 result, 1 tool
  // error, 2 bad usage; the answer is JSON either way)
  for (const it of all.filter((_, i) => i % 16 === 0)) {
    for (const [tool, args] of [
      ['qq_memory', { action: 'read', path: it.str }],
      ['qq_save_sticker', { media: `media/${HASH}.gif`, name: it.str }],
      ['qq_rename_sticker', { from: '起点', to: it.str }],
      ['zcor_memory_restore', { backupFile: it.str }],
    ]) {
      r = zcor(['--dir', w.D, 'tool', tool, '-'], JSON.stringify(args));
      assert.ok([0, 1, 2].includes(r.status), `zcor tool ${tool} exited ${r.status}`);
      const j = JSON.parse(r.stdout.toString());
      assert.equal(r.status === 0, !j.error, `exit ${r.status} for ${r.stdout}`);
      if (tool === 'qq_rename_sticker' && r.status === 0) // back
        zcor(['--dir', w.D, 'tool', 'qq_rename_sticker', JSON.stringify({ from: it.str, to: '起点' })]);
    }
    if (!it.utf8) {
      r = zcor(['--dir', w.D, 'tool', 'qq_memory', '-'], Buffer.concat([Buffer.from('{"action":"read","path":"'), it.bytes.filter((b) => b >= 0x20 && b !== 0x22 && b !== 0x5c), Buffer.from('"}')]));
      assert.ok([1, 2].includes(r.status), `invalid UTF-8 on stdin: exit ${r.status}`);
    }
    r = zcor(['--dir', w.D, 'restore', it.str.replaceAll('\0', '') || 'x']);
    assert.ok([0, 1, 2].includes(r.status), `zcor restore exited ${r.status}`);
  }
  checkCanaries(w, ['D', 'outside', 'secret.txt']);

  // 3. import of a generated seed-003 directory, then migrate cognition
  const src = join(w.top, 'src');
  for (const d of ['.qq-stickers', 'conversations/group-1/archive', 'conversations/group-1/log']) mkdirSync(join(src, d), { recursive: true });
  const asName = (b) => b.length > 0 && b.length <= 250 && !b.includes(0x2f) && !b.includes(0) && !['.', '..'].includes(b.toString('latin1'));
  const under = (rel, b) => Buffer.concat([Buffer.from(join(src, rel) + '/'), b]);
  let stickers = '## 已收藏\n', cognition = '## 其它\n';
  all.forEach((it, i) => {
    const s = it.str.replaceAll('\n', ' ').replaceAll('\0', ''); // text files: no NUL, one line each
    stickers += `- 入${i}｜m｜${s}\n- ${s}｜m｜.qq-stickers/${s}\n- 甲${i}｜m｜stickers/${s}.gif\n`;
    cognition += `- .qq-media/${s}｜名${i}｜m\n- .qq-media/${HASH}.gif｜${s}｜迁移\n- ${s}｜m\n`;
    if (!asName(it.bytes)) return;
    writeFileSync(under('.qq-stickers', it.bytes), GIF);
    if (it.bytes.length <= 246) writeFileSync(under('.qq-stickers', Buffer.concat([it.bytes, Buffer.from('.gif')])), GIF);
    writeFileSync(under('conversations/group-1/archive', it.bytes), '## 事实\n- x｜y\n');
    writeFileSync(under('conversations/group-1/log', it.bytes), '{"id":"m1","time":"2026-01-01T00:00:00Z","senderId":"1","text":"x"}\n');
    if (it.bytes.length <= 244) writeFileSync(under('conversations/group-1/log', Buffer.concat([it.bytes, Buffer.from('.jsonl')])), `{"id":"h${i}","time":"2026-01-01T00:00:00Z","senderId":"1","text":"x"}\n`);
    mkdirSync(under('conversations', it.bytes), { recursive: true });
    writeFileSync(Buffer.concat([under('conversations', it.bytes), Buffer.from('/MEMORY.md')]), '## 事实\n- x｜y\n');
  });
  writeFileSync(join(src, 'STICKERS.md'), stickers);
  writeFileSync(join(src, 'COGNITION.md'), cognition);
  writeFileSync(join(src, 'conversations/group-1/MEMORY.md'), '## 事实\n- 好｜好\n');
  // links and a FIFO planted in the source: never followed, never opened
  symlinkSync(join(w.outside, 'victim.gif'), join(src, '.qq-stickers', 'link.gif'));
  symlinkSync(join(w.outside, 'secret.txt'), join(src, '.qq-stickers', 'secret.gif'));
  symlinkSync(w.outside, join(src, 'conversations', 'group-2'));
  symlinkSync(join(w.outside, 'secret.txt'), join(src, 'INDEX.md'));
  symlinkSync(join(w.top, 'secret.txt'), join(src, 'conversations/group-1/log/2026-01-02.jsonl'));
  writeFileSync(join(src, '.qq-stickers', 'text.gif'), SECRET);
  spawnSync('mkfifo', [join(src, 'PEOPLE.md')]);
  r = zcor(['--dir', w.D, 'import', 'qq-memory', src]);
  assert.ok([0, 1].includes(r.status), `import exited ${r.status}: ${r.stderr}`);
  const rep = JSON.parse(r.stdout.toString());
  assert.equal(r.status, 0, `import failed: ${JSON.stringify(rep.error)}`);
  const skipped = new Map(rep.skipped.map((x) => [x.path, x.why]));
  for (const p of ['.qq-stickers/link.gif', '.qq-stickers/secret.gif', 'conversations/group-2', 'INDEX.md', 'conversations/group-1/log/2026-01-02.jsonl'])
    assert.match(skipped.get(p) ?? '', /symbolic link/, `${p} is skipped as a link`);
  assert.match(skipped.get('PEOPLE.md') ?? '', /FIFO/);
  assert.match(skipped.get('.qq-stickers/text.gif') ?? '', /not a PNG, JPEG, GIF or WebP/);
  assert.ok(!JSON.stringify(rep).includes('never read, served'), 'nothing of a canary reaches the report');
  // renames of what the import brought (a path kept as written never moves)
  const after = mcp(w.D);
  all.forEach((it, i) => { // a sample: each rename renders the imported catalog
    if (i % 6) return;
    for (const from of [`入${i}`, it.str || 'x']) {
      after.call('qq_rename_sticker', { from, to: '搬' });
      after.call('qq_rename_sticker', { from: '搬', to: from });
    }
  });
  const a = await after.done();
  assert.equal(a.code, 0, a.stderr);
  for (const c of after.calls) if (a.answers.get(c.id)) toolResult(a.answers.get(c.id));
  else assert.ok(JSON.stringify(c.args).includes('\\u0000'), `no answer to ${JSON.stringify(c.args)}`);
  r = zcor(['--dir', w.D, 'migrate', 'cognition', '--json', '--apply']);
  assert.ok([0, 2].includes(r.status), `migrate exited ${r.status}: ${r.stdout}${r.stderr}`);
  const mig = JSON.parse(r.stdout.toString());
  assert.ok(mig.refused > 0, 'migrate refuses the hostile names');
  for (const a of mig.actions) if (a.image) assert.match(a.image, /^stickers\/[^/\\]+$/);
  checkCanaries(w, ['D', 'outside', 'secret.txt', 'src']);

  // 4. one `zcor serve`: the routes that serve a file
  const srv = await startServe(BIN, w.D, env());
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const forbidden = canaryBodies();
  await runThenStop(srv, async () => {
    for (const it of all) {
      const p = pct(it.bytes);
      const routes = [`/api/v1/stickers/${p}`, `/api/v1/media/${p}`, `/assets/${p}`, `/${p}`, `/api/v1/views/read?path=${p}`];
      if (/^[\x21-\x7e]+$/.test(it.str) && !it.str.includes('?') && !it.str.includes('#'))
        routes.push(`/api/v1/stickers/${it.str}`, `/api/v1/media/${it.str}`, `/assets/${it.str}`);
      for (const route of routes) {
        const res = await request(srv, route, { agent });
        assert.ok(res.status >= 200 && res.status < 600, `${route}: status ${res.status}`);
        const body = Buffer.from(res.text, 'utf8');
        for (const f of forbidden) assert.ok(!body.equals(f) && !res.text.includes(SECRET.trim()), `${route} served a canary`);
        if (res.status !== 200) assert.ok(res.json?.error?.code, `${route}: ${res.status} without an error JSON: ${res.text.slice(0, 200)}`);
      }
    }
    // a collected sticker is still served: the routes are not simply shut
    const saved = await request(srv, '/api/v1/tools/qq_save_sticker', { method: 'POST', agent, body: { media: `media/${HASH}.gif`, name: '终点' } });
    assert.equal(saved.status, 200, saved.text);
    const ok = await request(srv, `/api/v1/stickers/${encodeURIComponent('终点.gif')}`, { agent });
    assert.equal(ok.status, 200);
    assert.ok(Buffer.from(ok.text, 'latin1').length > 0);
  });
  agent.destroy();

  // nothing outside D; nothing but zcor's own inside; no path outside
  // stickers/ in the catalog (the doctor would name it)
  checkCanaries(w, ['D', 'outside', 'secret.txt', 'src']);
  checkMemoryDir(w);
  r = zcor(['--dir', w.D, 'doctor', '--json']);
  assert.ok([0, 2].includes(r.status), `doctor exited ${r.status}`);
  const doc = JSON.parse(r.stdout.toString());
  assert.deepEqual(doc.findings.filter((f) => f.code === 'STICKER_PATH_OUTSIDE'), []);
});
