// qqdir.test.mjs — the seed-003 directory layout through the CLI (X-STORE,
// Q-PEOPLE, SPEC §10): `zcor import qq-memory`, `zcor export qq-memory`
// and `zcor doctor`, on the hand-made fixture tests/fixtures/qq-memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

import { mkTmp } from '../tmpdir.mjs';

const BIN = process.env.ZCOR_BIN;
const FIXTURE = join(process.env.ZCOR_FIXTURES, 'qq-memory');
assert.ok(BIN && process.env.ZCOR_FIXTURES, 'ZCOR_BIN and ZCOR_FIXTURES must be set');

function tmp() {
  return mkTmp('zcor-qqdir-');
}

function zcor(args) {
  const env = { ...process.env };
  delete env.ZCOR_DIR;
  const r = spawnSync(BIN, args, { env, encoding: 'utf8', timeout: 60000 });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function ok(args) {
  const r = zcor(args);
  assert.equal(r.status, 0, `zcor ${args.join(' ')} exited ${r.status}: ${r.stdout}${r.stderr}`);
  return JSON.parse(r.stdout);
}

// Every file under dir as {relative path: bytes as base64}.
function tree(dir) {
  const out = {};
  const walk = (d) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out[relative(dir, p)] = readFileSync(p).toString('base64');
    }
  };
  walk(dir);
  return out;
}

test('X-STORE: import reads the seed-003 layout into views, with a report', () => {
  const dir = tmp();
  const r = zcor(['--dir', dir, 'import', 'qq-memory', FIXTURE]);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stderr, /\[1\] /, 'progress is reported on standard error');
  // the logs, most of a long import, report progress too: one line a day file
  assert.match(r.stderr, /^zcor import: \[\d+\] conversations\/group-100000001\/log\/2026-10-18\.jsonl$/m);
  assert.match(r.stderr, /^zcor import: \[\d+\] conversations\/private-200000002\/log\/2026-10-19\.jsonl$/m);
  const rep = JSON.parse(r.stdout);
  assert.equal(rep.stickersCopied, 2);
  const paths = rep.views.map((v) => v.path);
  for (const p of ['PEOPLE.md', 'COGNITION.md', 'STICKERS.md', 'INDEX.md',
    'conversations/group-100000001/MEMORY.md', 'conversations/group-100000001/archive/2026-09.md',
    'conversations/private-200000002/MEMORY.md']) assert.ok(paths.includes(p), `${p} imported`);
  // lines that do not parse are kept, and reported
  const unparsed = rep.unparsed.map((u) => u.text);
  assert.ok(unparsed.includes('- 这一行没写含义'));
  assert.ok(unparsed.includes('群规第一条：不许刷屏'));
  assert.ok(rep.keptAsWritten.some((k) => k.text.includes('.qq-media/3f9a1c.jpg')));
  const cog = ok(['--dir', dir, 'tool', 'qq_memory', '{"action":"read","path":"COGNITION.md"}']);
  assert.match(cog.text, /- 这一行没写含义/);
  assert.match(cog.note, /L\d+/);
  // duplicate 「## 谐音」 headings were merged into one
  assert.equal(cog.text.match(/^## 谐音$/gm).length, 1);
  assert.match(cog.text, /- 栓Q｜/);
  // collected stickers moved from .qq-stickers/ to stickers/
  const st = ok(['--dir', dir, 'tool', 'qq_memory', '{"action":"read","path":"STICKERS.md"}']);
  assert.match(st.text, /- 无语｜无语、懒得吐槽｜场景：有人说了句废话｜stickers\/无语\.gif/);
  assert.ok(statSync(join(dir, 'stickers', '敲盆.gif')).isFile());
  // the logs: alias keys accepted, a line that is not JSON reported by number
  assert.equal(rep.messages, 4);
  const glog = rep.logs.find((l) => l.conversation === 'group:100000001');
  assert.deepEqual(glog.errors.map((x) => x.line), [3]);
  const found = ok(['--dir', dir, 'tool', 'qq_transcript', '{"action":"search","conversation":"group:100000001","keywords":["蚌埠住了"]}']);
  assert.equal(found.items[0].senderName, '小林');
  // digest.json: the progress of each conversation, keyed by key or slug
  assert.equal(rep.digests, 2);
  const convs = ok(['--dir', dir, 'transcript', 'list']).items;
  const g = convs.find((c) => c.key === 'group:100000001');
  assert.equal(g.lastDigestDate, '2026-10-20');
  assert.equal(convs.find((c) => c.key === 'private:200000002').lastDigestAt, '2026-10-19T20:00:00.000Z');
});

test('Q-PEOPLE: group 「## 人」 entries become people once, never a private chat\'s', () => {
  const dir = tmp();
  const rep = ok(['--dir', dir, 'import', 'qq-memory', FIXTURE]);
  assert.equal(rep.peopleExtracted, 1, 'kaguya is already in PEOPLE.md; 阿杰 is new');
  const people = ok(['--dir', dir, 'tool', 'qq_memory', '{"action":"read","path":"PEOPLE.md"}']).text;
  assert.match(people, /- 阿杰（QQ 100000003）/);
  assert.doesNotMatch(people, /小红/, 'a private chat\'s people never reach PEOPLE.md');
  // kaguya kept as written in PEOPLE.md (only adds, never overwrites)
  assert.match(people, /- kaguya（QQ 100000001）（别名：soyo\/爽世）｜群主，周六常组织打本/);
  // importing again gives the same people (PEOPLE.md is replaced by the
  // file's, then the extraction adds the same one person)
  ok(['--dir', dir, 'import', 'qq-memory', FIXTURE]);
  const people2 = ok(['--dir', dir, 'tool', 'qq_memory', '{"action":"read","path":"PEOPLE.md"}']).text;
  assert.equal(people2, people);
  assert.equal(people2.match(/阿杰/g).length, 1);
});

test('X-STORE: import → export → import gives the same store', () => {
  const a = tmp(), b = tmp(), outA = join(tmp(), 'out'), outB = join(tmp(), 'out');
  ok(['--dir', a, 'import', 'qq-memory', FIXTURE]);
  const ex = ok(['--dir', a, 'export', 'qq-memory', outA]);
  assert.ok(ex.files.includes('conversations/group-100000001/archive/2026-09.md'));
  ok(['--dir', b, 'import', 'qq-memory', outA]);
  ok(['--dir', b, 'export', 'qq-memory', outB]);
  assert.deepEqual(tree(outB), tree(outA));
  // the exported layout uses the seed's sticker folder
  assert.match(readFileSync(join(outA, 'STICKERS.md'), 'utf8'), /\.qq-stickers\/无语\.gif/);
  // importing the same files again into the same store changes nothing
  ok(['--dir', b, 'import', 'qq-memory', outA]);
  const outC = join(tmp(), 'out');
  ok(['--dir', b, 'export', 'qq-memory', outC]);
  assert.deepEqual(tree(outC), tree(outA));
});

test('import of a missing directory fails with exit 1 and changes nothing', () => {
  const dir = tmp();
  const r = zcor(['--dir', dir, 'import', 'qq-memory', join(dir, 'nope')]);
  assert.equal(r.status, 1);
  assert.equal(JSON.parse(r.stdout).error.code, 'not_found');
  assert.equal(zcor(['--dir', dir, 'import', 'qq-memory']).status, 2, 'bad usage');
});

test('doctor: codes for unparsed slang and media paths; exit 2 until fixed, then 0', () => {
  const dir = tmp();
  ok(['--dir', dir, 'import', 'qq-memory', FIXTURE]);
  let r = zcor(['--dir', dir, 'doctor', '--json']);
  assert.equal(r.status, 2, r.stdout);
  let codes = JSON.parse(r.stdout).findings.map((f) => f.code);
  assert.ok(codes.includes('COGNITION_UNPARSED'));
  assert.ok(codes.includes('STICKER_MEDIA_PATH'));
  // fix them the way the doctor says: remove the lines by the number it gives
  for (;;) {
    const rep = JSON.parse(zcor(['--dir', dir, 'doctor', '--json']).stdout);
    const f = rep.findings.find((x) => x.path === 'COGNITION.md' && /UNPARSED|MEDIA_PATH/.test(x.code));
    if (!f) break;
    assert.ok(f.line > 0, `the finding names its line: ${JSON.stringify(f)}`);
    const text = ok(['--dir', dir, 'tool', 'qq_memory', '{"action":"read","path":"COGNITION.md"}']).text;
    assert.ok(f.message.endsWith(text.split('\n')[f.line - 1]), `line ${f.line} is the one named: ${f.message}`);
    ok(['--dir', dir, 'tool', 'qq_memory', JSON.stringify({ action: 'remove', path: 'COGNITION.md', line: f.line })]);
  }
  r = zcor(['--dir', dir, 'doctor', '--json']);
  assert.equal(r.status, 0, r.stdout);
  codes = JSON.parse(r.stdout).findings.map((f) => f.code);
  assert.deepEqual(codes.filter((c) => c !== 'VIEW_UNPARSED'), []);
});

test('doctor: a missing sticker file, a bad config.json; --rebuild', () => {
  const dir = tmp();
  ok(['--dir', dir, 'import', 'qq-memory', FIXTURE]);
  unlinkSync(join(dir, 'stickers', '敲盆.gif'));
  writeFileSync(join(dir, 'config.json'), '{"recallChars": "lots"}');
  const r = zcor(['--dir', dir, 'doctor', '--json', '--rebuild']);
  assert.equal(r.status, 2);
  const rep = JSON.parse(r.stdout);
  const missing = rep.findings.find((f) => f.code === 'STICKER_PATH_MISSING');
  assert.ok(missing && /敲盆/.test(missing.message), JSON.stringify(rep.findings));
  assert.ok(rep.findings.some((f) => f.code === 'CONFIG_INVALID' && /recallChars/.test(f.message)));
  assert.ok(rep.rebuilt, 'the derived data was rebuilt');
  const text = zcor(['--dir', dir, 'doctor']);
  assert.equal(text.status, 2);
  assert.match(text.stdout, /STICKER_PATH_MISSING/);
});

test('doctor and migrate: exit 3 when the command itself fails, bad usage included (2 means "needs a person")', () => {
  const dir = tmp();
  ok(['--dir', dir, 'import', 'qq-memory', FIXTURE]);
  for (const args of [['doctor', '--bogus'], ['doctor', 'extra'], ['doctor', '--json', '--json2'],
    ['migrate'], ['migrate', 'stickers'], ['migrate', 'cognition', '--bogus']]) {
    const r = zcor(['--dir', dir, ...args]);
    assert.equal(r.status, 3, `zcor ${args.join(' ')}: ${r.stdout}${r.stderr}`);
    assert.match(r.stderr, /^usage: zcor/m);
  }
  // a memory directory that cannot be opened (a file where the directory should be)
  const file = join(tmp(), 'not-a-dir');
  writeFileSync(file, 'x');
  for (const args of [['doctor'], ['doctor', '--json'], ['migrate', 'cognition']]) {
    const r = zcor(['--dir', file, ...args]);
    assert.equal(r.status, 3, `zcor --dir FILE ${args.join(' ')}: ${r.stdout}${r.stderr}`);
  }
  // and --help is not an error
  assert.equal(zcor(['--dir', dir, 'doctor', '--help']).status, 0);
});

test('migrate cognition: dry run by default, --apply after a backup, exit 2 while entries are unrecognised', () => {
  const dir = tmp();
  ok(['--dir', dir, 'import', 'qq-memory', FIXTURE]);
  const cogBefore = ok(['--dir', dir, 'tool', 'qq_memory', '{"action":"read","path":"COGNITION.md"}']).text;
  let r = zcor(['--dir', dir, 'migrate', 'cognition', '--json']);
  assert.equal(r.status, 2, r.stdout + r.stderr); // .qq-media/3f9a1c.jpg is gone from the cache
  let rep = JSON.parse(r.stdout);
  assert.equal(rep.applied, false);
  assert.deepEqual(rep.actions.map((a) => [a.media, a.action]), [['.qq-media/3f9a1c.jpg', 'expired']]);
  assert.equal(ok(['--dir', dir, 'tool', 'qq_memory', '{"action":"read","path":"COGNITION.md"}']).text, cogBefore);
  r = zcor(['--dir', dir, 'migrate', 'cognition', '--apply', '--json']);
  assert.equal(r.status, 2);
  rep = JSON.parse(r.stdout);
  assert.equal(rep.applied, true);
  for (const f of rep.backups) assert.ok(statSync(f).isFile(), f);
  const st = ok(['--dir', dir, 'tool', 'qq_memory', '{"action":"read","path":"STICKERS.md"}']).text;
  assert.match(st.split('## 未收藏')[1], /- 群主常发的猫猫表情｜群主常发的猫猫表情｜原图已过期/);
  assert.doesNotMatch(ok(['--dir', dir, 'tool', 'qq_memory', '{"action":"read","path":"COGNITION.md"}']).text, /qq-media/);
  r = zcor(['--dir', dir, 'migrate', 'cognition']);
  assert.equal(r.status, 0, 'nothing left to do');
  assert.match(r.stdout, /nothing to migrate/);
  assert.equal(zcor(['--dir', dir, 'migrate', 'stickers']).status, 3, 'bad usage is exit 3 here');
});

test('mirror/: with "mirror": true every changed view is kept current as a file', () => {
  const dir = tmp();
  ok(['--dir', dir, 'tool', 'qq_memory', '{"action":"upsert","path":"COGNITION.md","name":"早于镜像","meaning":"开启之前"}']);
  writeFileSync(join(dir, 'config.json'), '{"mirror": true}');
  ok(['--dir', dir, 'tool', 'qq_memory', '{"action":"upsert","path":"COGNITION.md","name":"蚌埠住了","meaning":"忍不住笑了","type":"谐音"}']);
  ok(['--dir', dir, '--conversation', 'group:1', 'tool', 'qq_memory', '{"action":"upsert","path":"conversations/group-1/MEMORY.md","name":"周五固定开黑","meaning":"晚上八点"}']);
  const cog = readFileSync(join(dir, 'mirror', 'COGNITION.md'), 'utf8');
  assert.equal(cog, ok(['--dir', dir, 'tool', 'qq_memory', '{"action":"read","path":"COGNITION.md"}']).text);
  assert.match(readFileSync(join(dir, 'mirror', 'conversations', 'group-1', 'MEMORY.md'), 'utf8'), /- 周五固定开黑｜晚上八点/);
  // a change through another tool (a person) reaches the mirror too
  ok(['--dir', dir, 'tool', 'zcor_relationship_write', JSON.stringify({ personId: '100000001', name: 'kaguya', relationship: '群主', affinity: 10, reason: '组织打本' })]);
  assert.match(readFileSync(join(dir, 'mirror', 'PEOPLE.md'), 'utf8'), /kaguya（QQ 100000001）｜群主｜好感 10/);
});
