// cli.test.mjs — black-box tests of the `zcor` command line (SPEC §8):
// `zcor tool`, `zcor tools`, help, backup/restore, conversations, the
// memory directory options and two processes at once. Only the binary in
// $ZCOR_BIN is used; every test gets its own temporary directory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { mkTmp } from '../tmpdir.mjs';

const BIN = process.env.ZCOR_BIN;
assert.ok(BIN, 'ZCOR_BIN must name the zcor binary');

const SEED_000_TOOLS = [
  'zcor_memory_write', 'zcor_memory_read', 'zcor_memory_delete', 'zcor_memory_children',
  'zcor_memory_trace', 'zcor_memory_important', 'zcor_memory_query', 'zcor_memory_merge',
  'zcor_memory_supersede', 'zcor_memory_history', 'zcor_memory_backup', 'zcor_memory_restore',
  'zcor_memory_search', 'zcor_relationship_read', 'zcor_relationship_query',
  'zcor_relationship_write', 'zcor_relationship_delete', 'zcor_synonyms_add',
];

// The environment without ZCOR_DIR, so only what a test sets decides the directory.
function cleanEnv(extra = {}) {
  const env = { ...process.env, ...extra };
  if (!('ZCOR_DIR' in extra)) delete env.ZCOR_DIR;
  return env;
}

function tmp() {
  return mkTmp('zcor-cli-');
}

// Runs zcor once; returns { status, stdout, stderr }.
function zcor(args, { input, cwd, env } = {}) {
  const r = spawnSync(BIN, args, {
    input, cwd, env: env ?? cleanEnv(), encoding: 'utf8', maxBuffer: 64 << 20, timeout: 60000,
  });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

// `zcor --dir DIR [--conversation CONV] tool NAME JSON`, expecting success; returns the JSON.
function tool(dir, name, args = {}, conv) {
  const pre = ['--dir', dir, ...(conv ? ['--conversation', conv] : [])];
  const r = zcor([...pre, 'tool', name, JSON.stringify(args)]);
  assert.equal(r.status, 0, `${name} exited ${r.status}: ${r.stdout}${r.stderr}`);
  return JSON.parse(r.stdout);
}

// A tool call that must fail with exit 1 and an error object; returns the error.
function toolError(dir, name, argsText, { conv, code, stdin = false } = {}) {
  const pre = ['--dir', dir, ...(conv ? ['--conversation', conv] : [])];
  const r = stdin ? zcor([...pre, 'tool', name, '-'], { input: argsText })
    : zcor([...pre, 'tool', name, argsText]);
  assert.equal(r.status, 1, `${name} ${argsText.slice(0, 80)}: exit ${r.status}, stdout ${r.stdout.slice(0, 300)}`);
  const out = JSON.parse(r.stdout);
  assert.equal(typeof out.error, 'object', r.stdout);
  assert.equal(typeof out.error.code, 'string');
  assert.equal(typeof out.error.message, 'string');
  assert.ok(out.error.message.length > 0);
  if (code) assert.equal(out.error.code, code, out.error.message);
  return out.error;
}

function write(dir, title, content = 'x', conv) {
  const out = tool(dir, 'zcor_memory_write', { title, content }, conv);
  assert.equal(out.node.title, title);
  assert.ok(out.node.id);
  return out.node;
}

// ---- zcor recall, zcor prefix ----------------------------------------------

test('recall and prefix: --dir/--conversation after the command or before it; --speaker ID:NAME, --mention, --json, --explain', () => {
  const dir = tmp();
  const cafe = tool(dir, 'zcor_memory_write', { title: '咖啡店', content: '东门咖啡店周一休息', keywords: ['咖啡'] }).node;
  tool(dir, 'zcor_memory_write', { title: '私聊咖啡', content: '只在私聊说过的咖啡店' }, 'private:2');
  tool(dir, 'zcor_relationship_write', { personId: '10001', name: '阿青', relationship: '群友', affinity: 10, reason: '常聊天' });
  tool(dir, 'zcor_relationship_write', { personId: '10002', name: '小白', relationship: '群友', affinity: 5, reason: '常聊天' });
  tool(dir, 'zcor_relationship_write', { personId: '10003', name: '老王', relationship: '群友', affinity: 0, reason: '偶尔' });
  for (const pre of [['recall', '--dir', dir, '--conversation', 'group:1'], ['--dir', dir, '--conversation', 'group:1', 'recall'],
    ['recall', `--dir=${dir}`, '--conversation=group:1']]) {
    const r = zcor([...pre, '--message', '咖啡店今天开吗']);
    assert.equal(r.status, 0, r.stderr);
    assert.ok(r.stdout.includes(`[${cafe.id}`), r.stdout);
    assert.ok(r.stdout.includes('东门咖啡店周一休息'), r.stdout);
    assert.ok(!r.stdout.includes('只在私聊'), r.stdout); // another conversation's record
  }
  let r = zcor(['recall', '--dir', dir, '--conversation', 'group:1', '--speaker', '10001:阿青', '--mention', '10002',
    '--message', '咖啡店今天开吗', '--message', '还有人去吗', '--json']);
  assert.equal(r.status, 0, r.stderr);
  let j = JSON.parse(r.stdout);
  assert.ok(j.items.some((x) => x.id === cafe.id), r.stdout);
  assert.ok(j.items.some((x) => x.personId === '10001'), r.stdout); // the speaker
  assert.ok(j.items.some((x) => x.personId === '10002'), r.stdout); // @-mentioned
  assert.ok(!j.items.some((x) => x.personId === '10003'), r.stdout);
  assert.ok(j.header.includes('阿青') && j.header.includes('小白'), j.header);
  assert.equal(j.explain, undefined);
  r = zcor(['recall', '--dir', dir, '--conversation', 'group:1', '--message', '咖啡店今天开吗', '--explain']);
  assert.equal(r.status, 0, r.stderr);
  j = JSON.parse(r.stdout);
  const c = j.explain.find((x) => x.id === cafe.id);
  assert.ok(c, r.stdout);
  assert.equal(c.included, true);
  for (const f of ['entity', 'lexical', 'recency', 'salience', 'sectionPrior', 'expired']) assert.equal(typeof c.features[f], 'number', f);
  assert.ok(c.features.entity > 0 || c.features.lexical > 0, JSON.stringify(c));
  assert.ok(!j.explain.some((x) => x.title === '私聊咖啡'), r.stdout);

  for (const pre of [['prefix', '--dir', dir, '--conversation', 'group:1'], ['--dir', dir, 'prefix']]) {
    r = zcor(pre);
    assert.equal(r.status, 0, r.stderr);
    assert.ok(r.stdout.includes('external_event_frame'), r.stdout);
  }
  // bad usage: exit 2 with the usage line
  for (const args of [['recall', '--dir', dir, '--conversation', 'group:1'], // no --message
    ['recall', '--dir', dir, '--message', 'x'], // no conversation
    ['recall', '--dir', dir, '--conversation', 'bad key', '--message', 'x'],
    ['prefix', '--dir', dir, 'extra'], ['prefix', '--dir', dir, '--conversation', 'nope']]) {
    r = zcor(args);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    assert.match(r.stderr, /usage: zcor (recall|prefix)|--conversation/);
  }
});

// ---- zcor tool ----------------------------------------------------------

test('tool prints the result JSON and exits 0', () => {
  const dir = tmp();
  const r = zcor(['--dir', dir, 'tool', 'zcor_memory_write', '{"title":"北大","content":"在海淀"}']);
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.node.title, '北大');
  assert.equal(out.node.content, '在海淀');
  const read = tool(dir, 'zcor_memory_read', { id: out.node.id });
  assert.equal(read.node.title, '北大');
  assert.ok(existsSync(join(dir, 'memory.db')));
});

test('tool reads its arguments from standard input with -', () => {
  const dir = tmp();
  const r = zcor(['--dir', dir, 'tool', 'zcor_memory_write', '-'],
    { input: JSON.stringify({ title: '从标准输入', content: 'stdin\n多行' }) });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.node.title, '从标准输入');
  assert.equal(out.node.content, 'stdin\n多行');
});

test('tool without arguments means {}', () => {
  const dir = tmp();
  write(dir, 'root one');
  const r = zcor(['--dir', dir, 'tool', 'zcor_memory_children']);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /root one/);
});

test('tool errors print {"error":{code,message}} and exit 1', () => {
  const dir = tmp();
  toolError(dir, 'zcor_memory_read', '{"id":"no-such-id"}', { code: 'not_found' });
  toolError(dir, 'zcor_memory_write', '{"title":"a",', { code: 'invalid_argument' });
  toolError(dir, 'zcor_memory_write', 'not json at all', { code: 'invalid_argument' });
  toolError(dir, 'zcor_memory_write',
    JSON.stringify({ title: 't', content: 'c', sourceMessage: 'x'.repeat(20001) }),
    { code: 'invalid_argument', stdin: true });
  toolError(dir, 'zcor_memory_write',
    JSON.stringify({ title: 't', content: 'c', sourceMessage: '字'.repeat(20001) }),
    { code: 'invalid_argument', stdin: true });
  toolError(dir, 'zcor_relationship_write',
    JSON.stringify({ personId: '10001', name: '小明', relationship: '朋友', affinity: 101, reason: '测试' }),
    { code: 'invalid_argument' });
  toolError(dir, 'zcor_relationship_write',
    JSON.stringify({ personId: '10001', name: '小明', relationship: '朋友', affinity: -101, reason: '测试' }),
    { code: 'invalid_argument' });
  toolError(dir, 'zcor_memory_query', '{"from":"2024-01-01T00:00:00"}', { code: 'invalid_argument' });
  toolError(dir, 'zcor_memory_history', '{"to":"2024-01-01T00:00:00"}', { code: 'invalid_argument' });
  toolError(dir, 'zcor_memory_query', '{"limit":0}', { code: 'invalid_argument' });
  toolError(dir, 'zcor_memory_query', '{"limit":101}', { code: 'invalid_argument' });
  // nothing was written by any of them
  const q = tool(dir, 'zcor_memory_query', {});
  assert.equal(q.total, 0);
  assert.equal(tool(dir, 'zcor_relationship_query', {}).total ?? 0, 0);
});

test('tool boundaries that must pass: 20,000-character sourceMessage, affinity ±100, limit 1 and 100', () => {
  const dir = tmp();
  const src = '字'.repeat(20000);
  const r = zcor(['--dir', dir, 'tool', 'zcor_memory_write', '-'],
    { input: JSON.stringify({ title: 't', content: 'c', sourceMessage: src }) });
  assert.equal(r.status, 0, r.stdout.slice(0, 300));
  assert.equal(JSON.parse(r.stdout).node.sourceMessage, src);
  for (const affinity of [100, -100]) {
    tool(dir, 'zcor_relationship_write',
      { personId: `p${affinity}`, name: 'n', relationship: 'r', affinity, reason: 'why' });
  }
  assert.equal(tool(dir, 'zcor_memory_query', { limit: 1 }).items.length, 1);
  assert.equal(tool(dir, 'zcor_memory_query', { limit: 100 }).items.length, 1);
});

test('unknown tool and bad usage exit 2', () => {
  const dir = tmp();
  const cases = [
    ['--dir', dir, 'tool', 'zcor_no_such_tool', '{}'],
    ['--dir', dir, 'tool'],
    ['--dir', dir, 'tool', 'zcor_memory_read', '{}', 'extra'],
    ['--dir', dir, '--bogus', 'tool', 'zcor_memory_children'],
    ['--dir', dir, '--conversation', 'group:', 'tool', 'zcor_memory_children'],
    ['--dir', dir, '--conversation', 'team:1', 'tool', 'zcor_memory_children'],
    ['--dir', dir, '--conversation', 'group:a b', 'tool', 'zcor_memory_children'],
    ['--dir', dir, 'no-such-command'],
    ['--dir', dir],
    [],
    ['tools', '--bogus'],
    ['help', 'no-such-command'],
  ];
  for (const args of cases) {
    const r = zcor(args);
    assert.equal(r.status, 2, `zcor ${args.join(' ')}: exit ${r.status}: ${r.stdout}${r.stderr}`);
  }
  // bad usage changes nothing
  assert.equal(tool(dir, 'zcor_memory_query', {}).total, 0);
});

// ---- zcor tools -----------------------------------------------------------

test('tools lists every seed-000 tool', () => {
  const r = zcor(['tools']);
  assert.equal(r.status, 0, r.stderr);
  for (const name of SEED_000_TOOLS) assert.match(r.stdout, new RegExp(`^${name}\\b`, 'm'), name);
  assert.match(r.stdout, /[\u4e00-\u9fff]/);
});

test('tools --json: name, Chinese description and an object inputSchema for each', () => {
  const r = zcor(['tools', '--json']);
  assert.equal(r.status, 0, r.stderr);
  const list = JSON.parse(r.stdout);
  assert.ok(Array.isArray(list));
  const byName = new Map(list.map((t) => [t.name, t]));
  assert.equal(byName.size, list.length, 'tool names are unique');
  for (const name of SEED_000_TOOLS) {
    const t = byName.get(name);
    assert.ok(t, `${name} is listed`);
    assert.equal(typeof t.description, 'string');
    assert.match(t.description, /[\u4e00-\u9fff]/, `${name} has a Chinese description`);
    assert.equal(typeof t.descriptionEn, 'string');
    assert.ok(t.descriptionEn.length > 0);
    assert.equal(typeof t.inputSchema, 'object');
    assert.equal(t.inputSchema.type, 'object', `${name} inputSchema.type`);
  }
  assert.deepEqual(byName.get('zcor_memory_write').inputSchema.required.slice().sort(), ['content', 'title']);
  // deterministic order
  assert.equal(zcor(['tools', '--json']).stdout, r.stdout);
});

// ---- help -------------------------------------------------------------------

test('--help, help tool and tool --help exit 0 with usage text', () => {
  for (const args of [['--help'], ['-h'], ['help'], ['help', 'tool'], ['tool', '--help'], ['tools', '--help']]) {
    const r = zcor(args);
    assert.equal(r.status, 0, `zcor ${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stdout, /usage/i);
  }
  assert.match(zcor(['help', 'tool']).stdout, /tool NAME/);
  assert.match(zcor(['tool', '--help']).stdout, /tool NAME/);
});

// ---- backup / restore ---------------------------------------------------------

test('backup then restore round trip', () => {
  const dir = tmp();
  const a = write(dir, '备份前', 'kept');
  const b = zcor(['--dir', dir, 'backup']);
  assert.equal(b.status, 0, b.stdout + b.stderr);
  const backup = JSON.parse(b.stdout);
  assert.equal(typeof backup.file, 'string');
  assert.ok(existsSync(join(dir, backup.file)), backup.file);
  assert.equal(backup.nodes, 1);

  const later = write(dir, '备份后', 'dropped by the restore');
  tool(dir, 'zcor_memory_write', { id: a.id, title: '备份前（改）', content: 'changed' });

  const r = zcor(['--dir', dir, 'restore', backup.file]);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  const restored = JSON.parse(r.stdout);
  assert.equal(restored.nodes, 1);
  assert.equal(typeof restored.backupOfPrevious, 'string');
  assert.ok(existsSync(join(dir, restored.backupOfPrevious)));

  assert.equal(tool(dir, 'zcor_memory_read', { id: a.id }).node.title, '备份前');
  toolError(dir, 'zcor_memory_read', JSON.stringify({ id: later.id }), { code: 'not_found' });

  // the automatic backup of the state before the restore brings it back
  const back = zcor(['--dir', dir, 'restore', restored.backupOfPrevious]);
  assert.equal(back.status, 0, back.stdout + back.stderr);
  assert.equal(tool(dir, 'zcor_memory_read', { id: later.id }).node.title, '备份后');
  assert.equal(tool(dir, 'zcor_memory_read', { id: a.id }).node.title, '备份前（改）');

  // a file outside backups/ or missing is a tool error, and bad usage is 2
  assert.equal(zcor(['--dir', dir, 'restore', 'backups/no-such-file.json']).status, 1);
  assert.equal(zcor(['--dir', dir, 'restore']).status, 2);
  assert.equal(zcor(['--dir', dir, 'backup', 'extra']).status, 2);
});

// ---- conversations -------------------------------------------------------------

test('a write in group:1 is invisible from group:2 and visible from the host plane', () => {
  const dir = tmp();
  const n = write(dir, '群一的秘密', 'only for group 1', 'group:1');
  assert.equal(n.scope, 'group:1');
  const e = toolError(dir, 'zcor_memory_read', JSON.stringify({ id: n.id }), { conv: 'group:2', code: 'not_found' });
  assert.doesNotMatch(e.message, /群一的秘密/);
  assert.equal(tool(dir, 'zcor_memory_read', { id: n.id }, 'group:1').node.title, '群一的秘密');
  const host = tool(dir, 'zcor_memory_read', { id: n.id });
  assert.equal(host.node.title, '群一的秘密');
  assert.equal(host.node.scope, 'group:1');
  // nor does group 2 find it by query
  const q = tool(dir, 'zcor_memory_query', { keywords: ['群一'] }, 'group:2');
  assert.equal(q.total, 0);
  assert.equal(tool(dir, 'zcor_memory_query', { keywords: ['群一'] }).total, 1);
});

// ---- the memory directory --------------------------------------------------------

test('ZCOR_DIR names the memory directory when --dir is absent', () => {
  const dir = tmp();
  const cwd = tmp();
  const env = cleanEnv({ ZCOR_DIR: dir });
  const r = zcor(['tool', 'zcor_memory_write', '{"title":"env","content":"x"}'], { env, cwd });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.ok(existsSync(join(dir, 'memory.db')));
  assert.ok(!existsSync(join(cwd, 'zcor-data')));
  const id = JSON.parse(r.stdout).node.id;
  assert.equal(tool(dir, 'zcor_memory_read', { id }).node.title, 'env');
  // --dir wins over ZCOR_DIR
  const other = tmp();
  const w = zcor(['--dir', other, 'tool', 'zcor_memory_write', '{"title":"flag","content":"x"}'], { env, cwd });
  assert.equal(w.status, 0, w.stderr);
  assert.equal(tool(other, 'zcor_memory_query', {}).total, 1);
  assert.equal(tool(dir, 'zcor_memory_query', {}).total, 1);
});

test('the default memory directory is ./zcor-data', () => {
  const cwd = tmp();
  const r = zcor(['tool', 'zcor_memory_write', '{"title":"default","content":"x"}'], { cwd, env: cleanEnv() });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.ok(existsSync(join(cwd, 'zcor-data', 'memory.db')));
  const id = JSON.parse(r.stdout).node.id;
  assert.equal(tool(join(cwd, 'zcor-data'), 'zcor_memory_read', { id }).node.title, 'default');
});

// ---- two processes ------------------------------------------------------------------

function run(args) {
  return new Promise((resolve, reject) => {
    const p = spawn(BIN, args, { env: cleanEnv() });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => { stdout += d; });
    p.stderr.on('data', (d) => { stderr += d; });
    p.on('error', reject);
    p.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

test('two CLI writes at the same time both succeed', async () => {
  const dir = tmp();
  write(dir, 'existing'); // the store exists; the two race on writes, not on creation
  const rs = await Promise.all([1, 2, 3, 4].map((i) => run(['--dir', dir, 'tool', 'zcor_memory_write',
    JSON.stringify({ title: `并发 ${i}`, content: 'x'.repeat(50000) })])));
  const ids = rs.map((r, i) => {
    assert.equal(r.status, 0, `writer ${i + 1}: ${r.stdout}${r.stderr}`);
    return JSON.parse(r.stdout).node.id;
  });
  assert.equal(new Set(ids).size, ids.length, 'distinct ids');
  ids.forEach((id, i) => assert.equal(tool(dir, 'zcor_memory_read', { id }).node.title, `并发 ${i + 1}`));
  assert.equal(tool(dir, 'zcor_memory_query', {}).total, 5);
});

test('two CLI writes into a fresh directory at the same time both succeed', async () => {
  const dir = join(tmp(), 'new');
  const rs = await Promise.all([1, 2].map((i) => run(['--dir', dir, 'tool', 'zcor_memory_write',
    JSON.stringify({ title: `first ${i}`, content: 'x' })])));
  for (const r of rs) assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.equal(tool(dir, 'zcor_memory_query', {}).total, 2);
});

// ---- history -------------------------------------------------------------------------

test('check-reply: exit 0 when every [[图片: …]] is a collected sticker, 1 with the problems listed, 2 for bad usage', () => {
  const dir = tmp();
  mkdirSync(join(dir, 'stickers'), { recursive: true });
  writeFileSync(join(dir, 'stickers', '敲盆.gif'), Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00;', 'latin1'));
  let r = zcor(['--dir', dir, 'check-reply', '好耶 [[图片: stickers/敲盆.gif]]']);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { ok: true, images: ['stickers/敲盆.gif'], problems: [] });
  r = zcor(['--dir', dir, 'check-reply', '-'], { input: '好耶 [[图片: stickers/敲盆.jpg]]' });
  assert.equal(r.status, 1, r.stdout + r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.ok, false);
  assert.equal(out.problems[0].suggestion, 'stickers/敲盆.gif');
  assert.equal(zcor(['--dir', dir, 'check-reply']).status, 2);
  assert.equal(zcor(['--dir', dir, 'check-reply', 'a', 'b']).status, 2);
});

test('history records the CLI as actor "cli"', () => {
  const dir = tmp();
  const n = write(dir, '记历史');
  toolError(dir, 'zcor_memory_read', '{"id":"nope"}', { code: 'not_found' });
  const h = tool(dir, 'zcor_memory_history', {});
  assert.ok(h.items.length >= 2);
  for (const item of h.items) assert.equal(item.actor, 'cli', JSON.stringify(item));
  const w = h.items.find((i) => i.operation === 'zcor_memory_write');
  assert.ok(w, 'the write is in history');
  assert.equal(w.status, 'ok');
  assert.equal(w.conversation, null);
  assert.equal(w.arguments.title, '记历史');
  assert.ok(JSON.stringify(w.after).includes(n.id));
  const failed = h.items.find((i) => i.operation === 'zcor_memory_read');
  assert.equal(failed.status, 'error');
  // inside a conversation the actor is still the CLI, and the conversation is kept
  write(dir, 'in group', 'x', 'group:7');
  const g = tool(dir, 'zcor_memory_history', { keywords: ['in group'] });
  const gw = g.items.find((i) => i.operation === 'zcor_memory_write');
  assert.ok(gw);
  assert.equal(gw.actor, 'cli');
  assert.equal(gw.conversation, 'group:7');
});
