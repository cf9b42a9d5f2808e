// make-corpus.mjs — writes the seed corpora of fuzz_views, fuzz_import and
// fuzz_transcript (tests/fuzz/corpus-<target>/) from tests/fixtures and a
// few hand-made edge cases. The seeds are committed; run this again
// (`node tests/fuzz/make-corpus.mjs`) after changing the input formats of
// those targets, whose tables (paths[], names[], targets[], convs[]) the
// constants here mirror. corpus-mcp/ is hand-written JSON-RPC.
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const FIX = join(HERE, '..', 'fixtures', 'qq-memory');
const fix = (p) => readFileSync(join(FIX, p));

function corpus(target, seeds) {
  const dir = join(HERE, `corpus-${target}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir);
  for (const [name, bytes] of Object.entries(seeds)) writeFileSync(join(dir, name), bytes);
}

// ---- fuzz_views: a byte (the path's index), then steps separated by
// 0xFF 0xFF, each a byte (1: append, 0: write) and the text ---------------
const VIEWS = ['INDEX.md', 'PEOPLE.md', 'COGNITION.md', 'STICKERS.md', 'MEMORY.md', 'archive'];
const SEP = Buffer.from([0xff, 0xff]);
const step = (text, append = false) => Buffer.concat([Buffer.from([append ? 1 : 0]), Buffer.from(text)]);
const view = (kind, text, append = false) => Buffer.concat([Buffer.from([VIEWS.indexOf(kind)]), step(text, append)]);
const steps = (kind, ...s) => Buffer.concat([Buffer.from([VIEWS.indexOf(kind)]),
  ...s.flatMap(([text, append], i) => (i ? [SEP, step(text, append)] : [step(text, append)]))]);
const memory = fix('conversations/group-100000001/MEMORY.md').toString();
corpus('views', {
  index: view('INDEX.md', fix('INDEX.md')),
  people: view('PEOPLE.md', fix('PEOPLE.md')),
  cognition: view('COGNITION.md', fix('COGNITION.md').toString().replace(/^.*\.qq-media.*\n/m, '')),
  'cognition-path': view('COGNITION.md', fix('COGNITION.md')),
  stickers: view('STICKERS.md', fix('STICKERS.md').toString().replace(/\.qq-stickers\//g, 'stickers/')),
  memory: view('MEMORY.md', memory),
  'memory-private': view('MEMORY.md', fix('conversations/private-200000002/MEMORY.md')),
  archive: view('archive', fix('conversations/group-100000001/archive/2026-09.md')),
  'memory-append': steps('MEMORY.md', [memory], ['## 事实\n- 新来的事实｜2026-11-01\n- 新来的事实｜2026-11-01\n', true],
    ['## 事实\n- 新来的事实｜2026-11-01\n', true]),
  'cognition-append': steps('COGNITION.md', ['## 缩写\n- awsl｜啊我死了｜变体：阿伟死了\n', true],
    ['## 缩写\n- awsl｜啊我死了｜变体：阿伟死了/awsl\n', true], ['# COGNITION.md\n\n## 缩写\n- yyds｜永远的神\n']),
  'memory-dup-headings': view('MEMORY.md', '# MEMORY.md\n\n## 事实\n- a｜1\n\n## 在追\n- b\n\n## 事实\n- a｜1\n- c｜2026-01-01\n'),
  'people-crlf': view('PEOPLE.md', '# PEOPLE.md\r\n\r\n## 人物\r\n- 甲（QQ 1）｜朋友\r\n- 乙（QQ 2）（别名：b/bb）｜同学｜首见 2026-01-01｜置信：存疑\r\n'),
  'stickers-media': view('STICKERS.md', '# STICKERS.md\n\n## 已收藏\n- 猫｜喵｜media/abc.gif\n'),
  'memory-unparsed': view('MEMORY.md', '# MEMORY.md\n\n随便写的一行\n## \n- \n-｜｜\n### 三级\n- x｜y｜置顶｜存疑｜2026-02-30\n'),
  empty: view('MEMORY.md', ''),
  'title-only': view('COGNITION.md', '# COGNITION.md\n'),
  'not-utf8': Buffer.concat([Buffer.from([1, 0]), Buffer.from('# PEOPLE.md\n\n## 人物\n- '), Buffer.from([0xe4, 0xb8, 0xff]), Buffer.from('（QQ 3）\n')]),
  nul: Buffer.concat([Buffer.from([0, 0]), Buffer.from('# INDEX\n\n- a'), Buffer.from([0]), Buffer.from('b\n')]),
});

// ---- fuzz_import: records building a directory tree ---------------------
// names[] and targets[] of fuzz_import.c, in order
const NAMES = ['INDEX.md', 'PEOPLE.md', 'COGNITION.md', 'STICKERS.md', 'digest.json', 'memory-state.json',
  'conversations', 'group-1', 'group-100000001', 'private-2', 'console-x', 'group-', 'MEMORY.md',
  'archive', '2026-01.md', '2026-13.md', 'log', '2026-01-01.jsonl', '2026-02-30.jsonl', '.qq-stickers',
  'stickers', 'media', '.qq-media', '无语.gif', 'a.gif', 'b.png', 'c.jpg', 'x', '中文', '.hidden',
  'README', 'memory.db'];
const TARGETS = ['INDEX.md', 'a.gif', '.', '..', '../..', '/', 'nonexistent', '/dev/zero', '/dev/null',
  '../canary/secret.txt', '../../canary/secret.txt', '../../../canary/secret.txt',
  '../../../../canary/secret.txt', '../../../../../canary/secret.txt', '@/canary/secret.txt',
  '@/canary/img.gif', '@/canary', '@/canary/dir', '../canary', '../../canary', '../../../canary',
  '@/mem', '@/out', '@/mem/memory.db', 'loop', '/proc/self/cwd'];

function components(path) {
  const parts = path.split('/');
  if (parts.length > 4) throw new Error(`too deep: ${path}`);
  const bytes = [];
  for (const p of parts) {
    const i = NAMES.indexOf(p);
    if (i >= 0) { bytes.push(i); continue; }
    const raw = Buffer.from(p);
    if (raw.length > 32) throw new Error(`name too long: ${p}`);
    bytes.push(0xe0 | (raw.length - 1), ...raw);
  }
  return { depth: parts.length, bytes };
}
const rec = {
  file(path, content) {
    const c = Buffer.from(content);
    const { depth, bytes } = components(path);
    return Buffer.from([0 | ((depth - 1) << 2), ...bytes, c.length & 255, c.length >> 8, ...c]);
  },
  dir(path) {
    const { depth, bytes } = components(path);
    return Buffer.from([1 | ((depth - 1) << 2), ...bytes]);
  },
  link(path, target) {
    const { depth, bytes } = components(path);
    const t = TARGETS.indexOf(target);
    if (t < 0) throw new Error(`no target ${target}`);
    return Buffer.from([2 | ((depth - 1) << 2), ...bytes, t]);
  },
  fifo(path) {
    const { depth, bytes } = components(path);
    return Buffer.from([3 | ((depth - 1) << 2), ...bytes]);
  },
};

// the fixture directory, file by file
function fixtureTree(skip = () => false) {
  const out = [];
  const walk = (rel) => {
    for (const e of readdirSync(join(FIX, rel), { withFileTypes: true })) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (skip(p)) continue;
      if (e.isDirectory()) walk(p); else out.push(rec.file(p, fix(p)));
    }
  };
  walk('');
  return Buffer.concat(out);
}
const G = 'conversations/group-100000001';
corpus('import', {
  fixture: fixtureTree(),
  'views-only': Buffer.concat([rec.file('INDEX.md', fix('INDEX.md')), rec.file('PEOPLE.md', fix('PEOPLE.md')),
    rec.file('COGNITION.md', fix('COGNITION.md')), rec.file(`${G}/MEMORY.md`, fix(`${G}/MEMORY.md`))]),
  'links-out': Buffer.concat([
    rec.file('INDEX.md', '# INDEX\n\n- 有链接的目录\n'),
    rec.link('PEOPLE.md', '@/canary/secret.txt'),
    rec.link('COGNITION.md', '../canary/secret.txt'),
    rec.dir('.qq-stickers'),
    rec.link('.qq-stickers/无语.gif', '@/canary/img.gif'),
    rec.file('STICKERS.md', '# STICKERS.md\n\n## 已收藏\n- 无语｜无语｜.qq-stickers/无语.gif\n'),
    rec.dir('conversations'),
    rec.link('conversations/group-1', '@/canary/dir'),
    rec.link(`${G}`, '../..'),
  ]),
  'links-loop': Buffer.concat([
    rec.dir(`${G}/log`),
    rec.link(`${G}/log/2026-01-01.jsonl`, 'loop'),
    rec.link(`${G}/archive`, '.'),
    rec.link('conversations/group-1', '..'),
    rec.link('MEMORY.md', '/'),
  ]),
  'links-into-mem': Buffer.concat([
    rec.link('INDEX.md', '@/mem/memory.db'),
    rec.link('.qq-stickers', '@/out'),
    rec.file('STICKERS.md', '# STICKERS.md\n\n## 已收藏\n- a｜a｜.qq-stickers/a.gif\n'),
  ]),
  devices: Buffer.concat([
    rec.fifo('INDEX.md'),
    rec.link('PEOPLE.md', '/dev/zero'),
    rec.fifo(`${G}/MEMORY.md`),
    rec.dir(`${G}/log`),
    rec.fifo(`${G}/log/2026-01-01.jsonl`),
    rec.file('COGNITION.md', fix('COGNITION.md')),
  ]),
  // links in the export directory, there before the export (op bit 4)
  'export-over-links': Buffer.concat([
    fixtureTree((p) => p.includes('log')),
    Buffer.from([0x10 | 2, NAMES.indexOf('INDEX.md'), TARGETS.indexOf('@/canary/secret.txt')]),
    Buffer.from([0x10 | 2, NAMES.indexOf('conversations'), TARGETS.indexOf('@/canary/dir')]),
    Buffer.from([0x10 | 2, NAMES.indexOf('.qq-stickers'), TARGETS.indexOf('@/canary')]),
    Buffer.from([0x10 | 2, NAMES.indexOf('PEOPLE.md'), TARGETS.indexOf('../canary/secret.txt')]),
  ]),
  'odd-names': Buffer.concat([
    rec.file('conversations/group-/MEMORY.md', '# MEMORY.md\n\n## 事实\n- x\n'),
    rec.file('conversations/console-x/MEMORY.md', '# MEMORY.md\n\n## 事实\n- y\n'),
    rec.file(`${G}/archive/2026-13.md`, '# archive\n\n## 事实\n- z｜2026-13-01\n'),
    rec.file(`${G}/log/2026-02-30.jsonl`, '{"id":"1","senderId":"2","text":"hi"}\n'),
    rec.file('.hidden', 'x'),
    rec.file('memory-state.json', '{"version":3,"nodes":[]}'),
    rec.dir('MEMORY.md'),
  ]),
});

// ---- fuzz_transcript: a byte (conversation + 8 × caller), then the batch
// convs[] of fuzz_transcript.c: group:1, private:2, console:fuzz,
// group:100000001, "", "group:", "private:../x", NULL; callers: 0 host, 1
// bound to the key, 2 bound to group:9
const CONVS = 8;
const batch = (conv, who, b) =>
  Buffer.concat([Buffer.from([conv + CONVS * who]), Buffer.from(typeof b === 'string' ? b : JSON.stringify(b))]);
const GIF = 'R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==';
const msg = (id, extra = {}) => ({ id, time: '2026-11-29T20:00:00+08:00', senderId: '100000002', senderName: '小林', text: '周五开黑', ...extra });
corpus('transcript', {
  one: batch(0, 0, { messages: [msg('1')] }),
  'fixture-line': batch(3, 0, `{"messages":[${fix(`${G}/log/2026-10-18.jsonl`).toString().split('\n')[0]}]}`),
  full: batch(0, 0, { messages: [msg('2', { mentions: ['100000001', 3], replyTo: '1', media: [{ type: 'image', data: GIF, name: 'a.gif' }] })] }),
  'integer-ids': batch(1, 0, { messages: [{ id: 7, senderId: 200000002, text: '私聊' }] }),
  self: batch(2, 0, { messages: [msg('s', { self: true }), msg('t')] }),
  'dup-in-batch': batch(0, 0, { messages: [msg('d'), msg('d'), msg('e')] }),
  'bound-same': batch(0, 1, { messages: [msg('b')] }),
  'bound-other': batch(0, 2, { messages: [msg('o')] }),
  'bad-key': batch(4, 0, { messages: [msg('k')] }),
  'traversal-key': batch(6, 0, { messages: [msg('k')] }),
  'null-key': batch(7, 0, { messages: [msg('k')] }),
  'unknown-field': batch(0, 0, { messages: [msg('u', { color: 'red' })] }),
  'bad-time': batch(0, 0, { messages: [msg('t', { time: '昨天' })] }),
  'media-file': batch(0, 0, { messages: [msg('f', { media: [{ type: 'image', file: '/dev/null' }] })] }),
  'media-bad': batch(0, 0, { messages: [msg('m', { media: [{ type: 'image', data: '!!!' }] })] }),
  empty: batch(0, 0, { messages: [] }),
  'not-json': batch(0, 0, '{"messages":[{"id":"1",'),
  many: batch(0, 0, { messages: Array.from({ length: 100 }, (_, i) => msg(`n${i}`, { text: `第${i}条` })) }),
});
