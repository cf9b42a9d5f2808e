// skills.test.mjs — issue 16, "Skills (SPEC §7)", through the real CLI and
// `zcor serve`: a project skill read with `zcor tool skill`, an unknown
// name refused with the list, the list in the skill row of `zcor tools`,
// REST and MCP tools/list (the same text), an invalid SKILL.md reported by
// `zcor doctor` as SKILL_INVALID; and in one serve process, the model's
// `tools` of a turn (the scripted OpenAI-compatible server records them)
// listing a skill added between two turns, and the model's skill call
// answered with the skill's text. $HOME is a directory of the test's own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { startFakeOpenAI } from '../fake_openai.mjs';
import { request, withServe } from '../net.mjs';
import { mkTmp } from '../tmpdir.mjs';

const BIN = process.env.ZCOR_BIN;
assert.ok(BIN, 'ZCOR_BIN must name the zcor binary');

function project() {
  const root = mkTmp('zcor-skills-');
  const p = { root, dir: join(root, 'data'), home: join(root, 'home') };
  mkdirSync(p.dir, { recursive: true });
  mkdirSync(p.home, { recursive: true });
  return p;
}

function env(p) {
  const e = { ...process.env, HOME: p.home };
  delete e.ZCOR_DIR;
  for (const k of ['http_proxy', 'https_proxy', 'HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'all_proxy']) delete e[k];
  return e;
}

function skill(dir, name, description, body) {
  mkdirSync(join(dir, name), { recursive: true });
  writeFileSync(join(dir, name, 'SKILL.md'),
    `---\nname: ${name}\n${description === null ? '' : `description: ${description}\n`}---\n${body}`);
}

function zc(p, args) {
  return spawnSync(BIN, ['--dir', p.dir, ...args], { env: env(p), encoding: 'utf8' });
}

const skillRow = (list) => list.find((t) => t.name === 'skill');

test('[issue 16] a project skill through the CLI: the text without front matter, unknown names listed, the list in `zcor tools`, doctor SKILL_INVALID', () => {
  const p = project();
  skill(join(p.root, '.dsh', 'skills'), 'greet-user', '有人打招呼时', '# 打招呼\n\n先问好。\n');
  skill(join(p.root, '.agents', 'skills'), 'broken', null, 'no description\n');
  let r = zc(p, ['--conversation', 'group:100000001', 'tool', 'skill', '{"name":"greet-user"}']);
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.text, '# 打招呼\n\n先问好。\n');
  assert.equal(out.source, '.dsh/skills');
  assert.equal(out.description, '有人打招呼时');
  // a built-in one
  r = zc(p, ['tool', 'skill', '{"name":"message-digest"}']);
  assert.equal(r.status, 0, r.stderr);
  assert.match(JSON.parse(r.stdout).text, /^# 摘要/);
  // unknown (the broken one too): exit 1, the names in effect listed
  for (const name of ['nope', 'broken', '../../etc/passwd']) {
    r = zc(p, ['tool', 'skill', JSON.stringify({ name })]);
    assert.equal(r.status, 1, r.stdout);
    const err = JSON.parse(r.stdout).error;
    assert.equal(err.code, 'not_found');
    assert.match(err.message, /greet-user, learn-meme, learn-sticker, message-digest, moegirl, update-cognition/);
    assert.deepEqual(err.details.available, ['greet-user', 'learn-meme', 'learn-sticker', 'message-digest', 'moegirl', 'update-cognition']);
  }
  // `zcor tools` lists the project's skills (the directory exists now)
  r = zc(p, ['tools', '--json']);
  assert.equal(r.status, 0, r.stderr);
  const row = skillRow(JSON.parse(r.stdout));
  assert.match(row.description, /- greet-user：有人打招呼时/);
  assert.match(row.description, /- moegirl：/);
  assert.match(row.descriptionEn, /Available skills \(name: description\):\n(.|\n)*- greet-user: 有人打招呼时/);
  assert.doesNotMatch(row.description, /broken/);
  // doctor: the broken one, with the file and the reason; exit 2
  r = zc(p, ['doctor', '--json']);
  assert.equal(r.status, 2, r.stdout + r.stderr);
  const found = JSON.parse(r.stdout).findings.filter((f) => f.code === 'SKILL_INVALID');
  assert.equal(found.length, 1, r.stdout);
  assert.equal(found[0].path, join(p.root, '.agents', 'skills', 'broken', 'SKILL.md'));
  assert.match(found[0].message, /no 'description'/);
  r = zc(p, ['doctor']);
  assert.match(r.stdout, /SKILL_INVALID .*broken\/SKILL\.md/);
});

test('[issue 16] one serve process: a skill added between two turns is in the second turn\'s tools, and in REST and MCP tools/list; the model\'s skill call gets the text', async () => {
  const fake = await startFakeOpenAI([
    { toolCalls: [{ name: 'skill', arguments: { name: 'learn-meme' } }] },
    { content: '懂了。' },
    { content: '又懂了。' },
  ]);
  try {
    const p = project();
    writeFileSync(join(p.dir, 'config.json'),
      JSON.stringify({ provider: { baseUrl: fake.baseUrl, model: 'fake', maxRetries: 0 } }));
    await withServe(BIN, p.dir, env(p), async (srv) => {
      let r = await request(srv, '/api/v1/chat', { method: 'POST', body: { text: '蚌埠住了是什么意思' } });
      assert.equal(r.status, 200, r.text);
      skill(join(p.root, '.dsh', 'skills'), 'hot-skill', '热加进来的', '# 热\n');
      r = await request(srv, '/api/v1/chat', { method: 'POST', body: { text: '再来' } });
      assert.equal(r.status, 200, r.text);
      const reqs = fake.requests.filter((q) => q.url.endsWith('/chat/completions'));
      assert.equal(reqs.length, 3);
      const desc = (q) => q.body.tools.find((t) => t.function.name === 'skill').function.description;
      assert.match(desc(reqs[0]), /- learn-meme：/);
      assert.doesNotMatch(desc(reqs[0]), /hot-skill/);
      assert.equal(desc(reqs[1]), desc(reqs[0]));
      assert.match(desc(reqs[2]), /- hot-skill：热加进来的/);
      // the model's call of skill was answered with the text, no front matter
      const result = reqs[1].body.messages.filter((m) => m.role === 'tool').map((m) => m.content)
        .find((c) => c.includes('学梗'));
      assert.ok(result, JSON.stringify(reqs[1].body.messages));
      const text = JSON.parse(result).text;
      assert.match(text, /^# 学梗/);
      assert.ok(!text.startsWith('---') && !text.includes('description:'), text.slice(0, 200));
      // REST (the host's list) and MCP tools/list (the model's) show the same description
      const rest = await request(srv, '/api/v1/tools');
      assert.equal(rest.status, 200, rest.text);
      const restList = Array.isArray(rest.json) ? rest.json : rest.json.items ?? rest.json.tools;
      const H = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
      const init = await request(srv, '/mcp', { method: 'POST', headers: H, body: { jsonrpc: '2.0', id: 1,
        method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } } });
      assert.equal(init.status, 200, init.text);
      const S = { ...H, 'mcp-session-id': init.headers['mcp-session-id'], 'mcp-protocol-version': '2025-06-18' };
      await request(srv, '/mcp', { method: 'POST', headers: S, body: { jsonrpc: '2.0', method: 'notifications/initialized' } });
      const list = await request(srv, '/mcp', { method: 'POST', headers: S, body: { jsonrpc: '2.0', id: 2, method: 'tools/list' } });
      assert.equal(list.status, 200, list.text);
      const mcpDesc = skillRow(list.json.result.tools).description;
      assert.equal(mcpDesc, desc(reqs[2]));
      assert.equal(skillRow(restList).description, mcpDesc);
    });
  } finally {
    await fake.close();
  }
});
