// chat_tty.test.mjs — issue 14, part 2: `zcor chat`, the console world
// (docs/TURN.md, "The console"), in a real terminal: tmux runs it in a
// 120×40 pane on a server of its own (-S socket in the test's directory,
// no user config), the test types with send-keys and reads the screen with
// capture-pane (-e keeps the escapes, so the dim tool line is seen as
// dim). The model is tests/fake_openai.mjs; every request it received is
// checked. Without a terminal (a pipe) the same command runs one turn per
// line. tmux comes from scripts/deps; without it the tmux tests skip,
// unless CI is set: then they fail.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, spawnSync } from 'node:child_process';
import { existsSync, lstatSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { startFakeOpenAI } from '../fake_openai.mjs';
import { mkTmp } from '../tmpdir.mjs';

const BIN = process.env.ZCOR_BIN;
assert.ok(BIN, 'ZCOR_BIN must name the zcor binary');

const HAVE_TMUX = spawnSync('tmux', ['-V'], { encoding: 'utf8' }).status === 0;
if (!HAVE_TMUX && process.env.CI) throw new Error('tmux is missing and CI is set: scripts/deps test installs it');
const tmuxSkip = HAVE_TMUX ? false : 'tmux is not installed (scripts/deps test installs it); CI would fail here';

function env() {
  const e = { ...process.env, LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8' };
  delete e.ZCOR_DIR;
  delete e.TMUX;
  for (const k of ['http_proxy', 'https_proxy', 'HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'all_proxy']) delete e[k];
  return e;
}

const sh = (s) => `'${s.replace(/'/g, `'\\''`)}'`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// One terminal: `zcor chat` in a tmux pane; its exit status lands in
// <dir>/status. Async throughout: the fake model lives in this process.
let terms = 0;
class Term {
  constructor(dir, args) {
    this.dir = dir;
    // a server per terminal: one being killed never takes the next one's session
    this.sock = join(dir, `tmux-${++terms}.sock`);
    this.args = args;
  }

  tmux(...a) {
    return new Promise((resolve, reject) => {
      execFile('tmux', ['-S', this.sock, '-f', '/dev/null', ...a], { env: env(), encoding: 'utf8' },
        (err, stdout, stderr) => (err ? reject(new Error(`tmux ${a[0]}: ${stderr || err.message}`)) : resolve(stdout)));
    });
  }

  async start() {
    this.status = join(this.dir, `status-${terms}`);
    const cmd = `${[BIN, '--dir', this.dir, 'chat', ...this.args].map(sh).join(' ')}; echo $? > ${sh(this.status)}; sleep 30`;
    await this.tmux('new-session', '-d', '-x', '120', '-y', '40', '-s', 'chat', cmd);
    return this;
  }

  screen(escapes = false) {
    return this.tmux('capture-pane', '-p', '-J', ...(escapes ? ['-e'] : []), '-t', 'chat');
  }

  // send-keys -l types text as it is; keys (Enter, Left, Up) by name
  type(text) { return this.tmux('send-keys', '-t', 'chat', '-l', text); }
  key(...names) { return this.tmux('send-keys', '-t', 'chat', ...names); }
  async line(text) { await this.prompt(); await this.type(text); await this.key('Enter'); }

  async waitFor(re, { escapes = false, ms = 15000 } = {}) {
    const end = Date.now() + ms;
    let s = '';
    while (Date.now() < end) {
      s = await this.screen(escapes);
      if (re.test(s)) return s;
      await sleep(100);
    }
    assert.fail(`the terminal never showed ${re}; it shows:\n${s}`);
  }

  // the prompt on the last line: libedit reads the keys from now on (keys
  // typed before would meet the terminal in cooked mode)
  async prompt() {
    const end = Date.now() + 15000;
    let s = '';
    while (Date.now() < end) {
      s = await this.screen();
      if (/^>\s*$/.test(s.trimEnd().split('\n').at(-1) + ' ')) return s;
      await sleep(50);
    }
    assert.fail(`no prompt; the terminal shows:\n${s}`);
  }

  async exitStatus(ms = 10000) {
    const f = this.status;
    const end = Date.now() + ms;
    while (Date.now() < end) {
      if (existsSync(f) && readFileSync(f, 'utf8').trim() !== '') return Number(readFileSync(f, 'utf8').trim());
      await sleep(100);
    }
    assert.fail(`zcor chat did not exit; the terminal shows:\n${await this.screen()}`);
  }

  async close() {
    await this.tmux('kill-server').catch(() => {});
  }
}

function setup(fake) {
  const dir = mkTmp('zcor-chat-');
  if (fake) {
    writeFileSync(join(dir, 'config.json'),
      JSON.stringify({ provider: { baseUrl: fake.baseUrl, model: 'fake', maxRetries: 0 } }));
  }
  return dir;
}

function sql(dir, q) {
  const r = spawnSync('sqlite3', ['-json', join(dir, 'memory.db'), q], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim() ? JSON.parse(r.stdout) : [];
}

// The batch's texts in a request: the last external_event_frame's result.
function batchTexts(req) {
  const msgs = req.body.messages;
  const call = msgs.filter((m) => m.role === 'assistant' && (m.tool_calls || [])
    .some((c) => c.function.name === 'external_event_frame')).at(-1);
  const res = msgs.find((m) => m.role === 'tool' && m.tool_call_id === call.tool_calls[0].id);
  return JSON.parse(res.content).messages.map((m) => m.text);
}

test('[issue 14] zcor chat in a terminal: a dim tool line while the tool runs, the streamed reply, /recall with reasons, /turn, /quit exits 0', { skip: tmuxSkip }, async () => {
  const fake = await startFakeOpenAI([
    { toolCalls: [{ name: 'zcor_memory_write', arguments: { title: '晨光咖啡', keywords: ['晨光', '咖啡店'], content: '东门那家咖啡店叫晨光' } }] },
    // the answer after the tool waits, so the screen is read while the turn runs
    { content: '记住了，东门那家叫晨光。', delayMs: 1500, chunkChars: 2 },
    { content: '晨光还开着，早上七点开门。' },
  ]);
  const dir = setup(fake);
  const t = await new Term(dir, ['--conversation', 'console:a']).start();
  try {
    await t.waitFor(/\/help/);
    await t.line('东门那家咖啡店叫晨光，记一下');
    // the tool line is there, dim (SGR 2), and the reply not yet
    let s = await t.waitFor(/zcor_memory_write: ok/, { escapes: true });
    assert.match(s, /\x1b\[2m· zcor_memory_write \{/);
    assert.doesNotMatch(s, /记住了/);
    s = await t.waitFor(/记住了，东门那家叫晨光。/);
    assert.doesNotMatch(s, /the reply sent/, 'the reply streamed, so it is not printed again');
    assert.deepEqual(batchTexts(fake.requests[0]), ['东门那家咖啡店叫晨光，记一下']);

    await t.line('晨光咖啡还开着吗');
    await t.waitFor(/晨光还开着，早上七点开门。/);
    assert.match(batchTexts(fake.requests[2]).join(), /晨光咖啡还开着吗/);
    const [{ id }] = sql(dir, "SELECT id FROM nodes WHERE title = '晨光咖啡'");

    // /recall: the id the last turn sent, its title and why it was kept
    await t.line('/recall');
    s = await t.waitFor(/recalled for the last batch: 1 memories/);
    assert.match(s, new RegExp(`✓ ${id} 晨光咖啡 \\[记忆\\] [0-9.]+ — ranked within`));

    // /turn: the last record, as JSON
    await t.line('/turn');
    s = await t.waitFor(/"reply": "晨光还开着，早上七点开门。"/);
    assert.match(s, /"status": "ok"/);
    assert.match(s, new RegExp(`"recalled": \\[\\s*"${id}"`));

    // issue 14: /recall again: the same listing, and looking is not a hit
    await t.line('/recall');
    s = await t.waitFor(/recalled for the last batch: 1 memories[^]*recalled for the last batch: 1 memories/);

    await t.line('/nosuch');
    await t.waitFor(/no command '\/nosuch'/);
    await t.line('/quit');
    assert.equal(await t.exitStatus(), 0);
    assert.equal(fake.remaining(), 0);
    // issue14_recall_counts_hits_twice: the second turn recalled it once;
    // the two /recall looks added nothing (hits fold in at close)
    assert.deepEqual(sql(dir, `SELECT hits FROM nodes WHERE id = '${id}'`), [{ hits: 1 }]);
    assert.equal(fake.requests.length, 3, 'the commands asked the model nothing');
  } finally {
    await t.close();
    await fake.close();
  }
});

test('[issue 14] zcor chat line editing: Left and an inserted character send the edited text; Up brings back history; Ctrl-D exits 0', { skip: tmuxSkip }, async () => {
  const fake = await startFakeOpenAI([{ content: '好的' }, { content: '又一次' }, { content: '第三次' }]);
  const dir = setup(fake);
  try {
    let t = await new Term(dir, []).start();
    try {
      await t.prompt();
      await t.type('东门咖啡');
      await t.key('Left', 'Left');
      await t.type('的');
      await t.key('Enter');
      await t.waitFor(/好的/);
      assert.deepEqual(batchTexts(fake.requests[0]), ['东门的咖啡']);
      await t.prompt();
      await t.key('Up');
      await t.key('Enter');
      await t.waitFor(/又一次/);
      assert.deepEqual(batchTexts(fake.requests[1]), ['东门的咖啡']);
      await t.prompt();
      await t.key('C-d');
      assert.equal(await t.exitStatus(), 0);
      assert.equal(readFileSync(join(dir, 'chat_history'), 'utf8'), '东门的咖啡\n');
    } finally {
      await t.close();
    }
    // a new session finds the history
    t = await new Term(dir, []).start();
    try {
      await t.prompt();
      await t.key('Up');
      await t.type('!');
      await t.key('Enter');
      await t.waitFor(/第三次/);
      assert.deepEqual(batchTexts(fake.requests[2]), ['东门的咖啡!']);
      assert.equal(sql(dir, "SELECT count(*) AS n FROM messages WHERE conversation = 'console:local'")[0].n, 3);
    } finally {
      await t.close();
    }
  } finally {
    await fake.close();
  }
});

test('[issue 14] zcor chat history never goes through a link: a planted chat_history link is not read, not written through, and replaced', { skip: tmuxSkip }, async () => {
  const fake = await startFakeOpenAI([{ content: '好的' }]);
  const dir = setup(fake);
  const outside = join(mkTmp('zcor-chat-outside-'), 'secret');
  writeFileSync(outside, '外面的秘密\n');
  symlinkSync(outside, join(dir, 'chat_history'));
  const t = await new Term(dir, []).start();
  try {
    await t.waitFor(/history not read/);
    await t.prompt();
    await t.key('Up'); // nothing to bring back: the link was not read
    await t.line('你好');
    await t.waitFor(/好的/);
    assert.deepEqual(batchTexts(fake.requests[0]), ['你好']);
    await t.line('/quit');
    assert.equal(await t.exitStatus(), 0);
  } finally {
    await t.close();
    await fake.close();
  }
  assert.equal(readFileSync(outside, 'utf8'), '外面的秘密\n');
  assert.ok(lstatSync(join(dir, 'chat_history')).isFile());
  assert.equal(readFileSync(join(dir, 'chat_history'), 'utf8'), '你好\n/quit\n');
});

test('[issue 14] zcor chat with no provider, in a terminal: says how to configure one, exits 2, logs nothing', { skip: tmuxSkip }, async () => {
  const dir = setup(null);
  const t = await new Term(dir, []).start();
  try {
    const status = await t.exitStatus();
    const s = await t.screen();
    assert.equal(status, 2, s);
    assert.match(s, /no model provider is configured/);
    assert.match(s, /"provider": \{"baseUrl"/);
    assert.match(s, /PROVIDERS\.md/);
  } finally {
    await t.close();
  }
  assert.equal(sql(dir, 'SELECT count(*) AS n FROM messages')[0].n, 0);
});

function zc(dir, args, input) {
  return new Promise((resolve) => {
    const p = spawn(BIN, ['--dir', dir, ...args], { env: env() });
    let stdout = '', stderr = '';
    p.stdout.setEncoding('utf8').on('data', (c) => { stdout += c; });
    p.stderr.setEncoding('utf8').on('data', (c) => { stderr += c; });
    p.stdin.end(input);
    p.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

test('[issue 14] zcor chat without a terminal: one turn per line, replies on stdout, tool lines on stderr, commands work, no escapes', async () => {
  const fake = await startFakeOpenAI([
    { toolCalls: [{ name: 'zcor_memory_query', arguments: { keywords: ['咖啡'] } }] },
    { content: '第一句的回答' },
    { content: '第二句的回答' },
  ]);
  try {
    const dir = setup(fake);
    const r = await zc(dir, ['chat', '--conversation', 'console:b'], '第一句\n\n//斜杠开头\n/turn\n/nosuch\n');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^第一句的回答\n第二句的回答\n\{/);
    assert.match(r.stdout, /"reply": "第二句的回答"/);
    assert.match(r.stderr, /^· zcor_memory_query \{/m);
    assert.match(r.stderr, /no command '\/nosuch'/);
    assert.doesNotMatch(r.stdout + r.stderr, /\x1b/);
    assert.deepEqual(batchTexts(fake.requests[0]), ['第一句']);
    assert.deepEqual(batchTexts(fake.requests[2]), ['/斜杠开头']);
    assert.ok(!existsSync(join(dir, 'chat_history')), 'a script keeps no history');
  } finally {
    await fake.close();
  }
});

test('[issue 14] zcor chat without a terminal: no provider exits 2 with the how-to; a line that is not UTF-8 is refused and logs nothing', async () => {
  let r = await zc(setup(null), ['chat'], 'hello\n');
  assert.equal(r.code, 2);
  assert.match(r.stderr, /no model provider is configured.*"provider"/);
  assert.equal(r.stdout, '');
  const fake = await startFakeOpenAI([]);
  try {
    const dir = setup(fake);
    r = await zc(dir, ['chat'], Buffer.from([0x66, 0xff, 0xfe, 0x0a]));
    assert.equal(r.code, 1);
    assert.match(r.stderr, /not sent.*not UTF-8/);
    assert.equal(fake.requests.length, 0);
    assert.equal(sql(dir, 'SELECT count(*) AS n FROM messages')[0].n, 0);
  } finally {
    await fake.close();
  }
});
