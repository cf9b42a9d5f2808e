// wiki.test.mjs — wiki_lookup, the moegirl skill's MediaWiki lookup (SPEC
// §3.2, issue 16), through the real CLI (`zcor tool wiki_lookup`) and MCP
// over stdio (the official SDK client), against a fake MediaWiki API on
// 127.0.0.1 that answers the way MediaWiki does (API:Opensearch: a
// 4-element array; Extension:TextExtracts: query.pages{id:{title,
// extract}} with query.redirects[{from,to}], "missing" for no page) and
// records every request: both calls with their parameters, a redirect, no
// page, a timeout, an oversized answer, an answer that is not JSON, an
// unreachable wiki, the cut extract, the cache, and the config rows.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { mkTmp } from '../tmpdir.mjs';

const BIN = process.env.ZCOR_BIN;
assert.ok(BIN, 'ZCOR_BIN must name the zcor binary');

function env() {
  const e = { ...process.env };
  delete e.ZCOR_DIR;
  for (const k of ['http_proxy', 'https_proxy', 'HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'all_proxy'])
    delete e[k];
  return e;
}

const LONG = '长'.repeat(2000);
const PAGES = {
  '初音未来': '初音未来是克理普敦未来媒体以雅马哈的VOCALOID系列语音合成引擎为基础开发的虚拟歌手。',
  '阿卡林': '阿卡林是《摇曳百合》中赤座灯里的昵称，也指存在感很低。',
  '长文': LONG,
};
const REDIRECTS = { '初音': '初音未来', 'Miku': '初音未来' };
const pageUrl = (base, t) => `${base}/${encodeURIComponent(t.replace(/ /g, '_'))}`;

// The fake wiki. Paths: /api.php and /w/api.php answer as MediaWiki;
// /slow/api.php never answers; /big/api.php answers 5000 bytes; /html/api.php
// answers a page of HTML; /ghost/api.php lists a title that turns out missing.
const requests = [];
const server = createServer((req, res) => {
  const u = new URL(req.url, 'http://x');
  requests.push({ method: req.method, path: u.pathname, params: Object.fromEntries(u.searchParams) });
  const json = (v) => { res.writeHead(200, { 'content-type': 'application/json' }); res.end(JSON.stringify(v)); };
  const site = `http://${req.headers.host}`;
  if (u.pathname === '/slow/api.php') return; // never answers
  if (u.pathname === '/big/api.php') return json(['x', ['x'.repeat(5000)], [''], ['']]);
  // issue 16: answers no MediaWiki gives — a title over 255 characters in
  // the search, a page URL of 3000 bytes, a page whose own title is too long
  if (u.pathname === '/longtitle/api.php') return json(['x', ['长'.repeat(256)], [''], ['']]);
  if (u.pathname === '/longurl/api.php') return json(['x', ['阿卡林'], [''], [`${site}/${'a'.repeat(3000)}`]]);
  if (u.pathname === '/longfinal/api.php') {
    if (u.searchParams.get('action') === 'opensearch') return json(['x', ['阿卡林'], [''], [`${site}/x`]]);
    return json({ query: { pages: { 1: { pageid: 1, ns: 0, title: '长'.repeat(300), extract: '文' } } } });
  }
  if (u.pathname === '/html/api.php') {
    res.writeHead(200, { 'content-type': 'text/html' });
    return res.end('<!DOCTYPE html><html><body>萌娘百科</body></html>');
  }
  const p = u.searchParams;
  if (p.get('action') === 'opensearch') {
    const q = p.get('search').toLowerCase();
    let titles = [...Object.keys(PAGES), ...Object.keys(REDIRECTS)].filter((t) => t.toLowerCase().includes(q));
    if (u.pathname === '/ghost/api.php') titles = ['幽灵词条'];
    return json([p.get('search'), titles, titles.map(() => ''), titles.map((t) => pageUrl(site, t))]);
  }
  if (p.get('action') === 'query') {
    const asked = p.get('titles');
    const to = REDIRECTS[asked];
    const title = to || asked;
    const query = {};
    if (to) query.redirects = [{ from: asked, to }];
    query.pages = PAGES[title] !== undefined && u.pathname !== '/ghost/api.php'
      ? { 1234: { pageid: 1234, ns: 0, title, extract: PAGES[title] } }
      : { '-1': { ns: 0, title, missing: '' } };
    return json({ batchcomplete: '', query });
  }
  json({ error: { code: 'badvalue', info: 'Unrecognized value for parameter "action"' } });
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const SITE = `http://127.0.0.1:${server.address().port}`;
after(() => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }));

function wikiDir(wiki) {
  const dir = mkTmp('zcor-wiki-');
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ wiki }, null, 2));
  return dir;
}

// Runs zcor without blocking the event loop (the fake wiki lives here).
function run(args) {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const p = spawn(BIN, args, { env: env() });
    let stdout = '', stderr = '';
    p.stdout.setEncoding('utf8').on('data', (c) => { stdout += c; });
    p.stderr.setEncoding('utf8').on('data', (c) => { stderr += c; });
    const timer = setTimeout(() => p.kill('SIGKILL'), 30000);
    p.on('error', reject);
    p.on('close', (code) => {
      clearTimeout(timer);
      resolve({ status: code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

async function lookup(dir, query, extra = []) {
  const from = requests.length;
  const r = await run(['--dir', dir, ...extra, 'tool', 'wiki_lookup', JSON.stringify({ query })]);
  let out = null;
  try { out = JSON.parse(r.stdout); } catch { /* asserted by the caller */ }
  return { ...r, out, seen: requests.slice(from) };
}

test('[Q-WIKI] opensearch finds the title, then prop=extracts reads its opening text, with exactly these parameters', async () => {
  const dir = wikiDir({ baseUrl: `${SITE}/api.php` });
  const r = await lookup(dir, '初音未来');
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.deepEqual(r.out, {
    title: '初音未来', extract: PAGES['初音未来'], truncated: false,
    url: pageUrl(SITE, '初音未来'), candidates: ['初音未来'],
  });
  assert.deepEqual(r.seen, [
    { method: 'GET', path: '/api.php',
      params: { action: 'opensearch', search: '初音未来', limit: '5', namespace: '0', format: 'json' } },
    { method: 'GET', path: '/api.php',
      params: { action: 'query', prop: 'extracts', exintro: '1', explaintext: '1', redirects: '1',
        titles: '初音未来', format: 'json' } },
  ]);
});

test('[Q-WIKI] a redirect is followed: the page\'s title and url, redirectedFrom the title searched', async () => {
  const dir = wikiDir({ baseUrl: `${SITE}/api.php` });
  const r = await lookup(dir, 'miku');
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.equal(r.out.title, '初音未来');
  assert.equal(r.out.redirectedFrom, 'Miku');
  assert.equal(r.out.extract, PAGES['初音未来']);
  assert.equal(r.out.url, pageUrl(SITE, '初音未来'));
  assert.deepEqual(r.out.candidates, ['Miku']);
  assert.equal(r.seen[1].params.titles, 'Miku');
});

test('[Q-WIKI] the candidate equal to the query is the one read, not just the first', async () => {
  const dir = wikiDir({ baseUrl: `${SITE}/api.php` });
  const r = await lookup(dir, '初音');
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.deepEqual(r.out.candidates, ['初音未来', '初音']);
  assert.equal(r.seen[1].params.titles, '初音');
  assert.equal(r.out.redirectedFrom, '初音');
});

test('[Q-WIKI] no page: not_found with the candidates, after one request; a listed title that is missing too', async () => {
  const dir = wikiDir({ baseUrl: `${SITE}/api.php` });
  let r = await lookup(dir, '不存在的梗');
  assert.equal(r.status, 1);
  assert.equal(r.out.error.code, 'not_found');
  assert.match(r.out.error.message, /has no page for '不存在的梗'/);
  assert.deepEqual(r.out.error.details, { reason: 'no_page', candidates: [] });
  assert.equal(r.seen.length, 1, 'no title: no extract query');

  const ghost = wikiDir({ baseUrl: `${SITE}/ghost/api.php` });
  r = await lookup(ghost, '幽灵');
  assert.equal(r.status, 1);
  assert.equal(r.out.error.code, 'not_found');
  assert.deepEqual(r.out.error.details.candidates, ['幽灵词条']);
  assert.equal(r.seen.length, 2);
});

test('[Q-WIKI] a wiki that does not answer: upstream_error within wiki.timeoutMs, naming the wiki and what to check', async () => {
  const dir = wikiDir({ baseUrl: `${SITE}/slow/api.php`, timeoutMs: 400 });
  const r = await lookup(dir, '初音未来');
  assert.equal(r.status, 1, r.stdout);
  assert.equal(r.out.error.code, 'upstream_error');
  assert.match(r.out.error.message, /the wiki at 'http:\/\/127\.0\.0\.1:\d+\/slow\/api\.php' did not answer within wiki\.timeoutMs \(400 ms\)/);
  assert.match(r.out.error.message, /wiki\.baseUrl/);
  assert.ok(r.ms < 5000, `took ${r.ms} ms`);
});

test('[Q-WIKI] an answer larger than wiki.maxBytes is refused', async () => {
  const dir = wikiDir({ baseUrl: `${SITE}/big/api.php`, maxBytes: 1024 });
  const r = await lookup(dir, 'x');
  assert.equal(r.status, 1, r.stdout);
  assert.equal(r.out.error.code, 'upstream_error');
  assert.match(r.out.error.message, /answered more than wiki\.maxBytes \(1024 bytes\)/);
});

test('issue16_wiki_caps_titles_and_urls: a query over 100 characters is refused naming the argument; an answer with a title over 255 characters or a URL over 2000 bytes is a clear error', async () => {
  let dir = wikiDir({ baseUrl: `${SITE}/api.php` });
  let r = await lookup(dir, '长'.repeat(101));
  assert.equal(r.status, 1, r.stdout);
  assert.equal(r.out.error.code, 'invalid_argument');
  assert.match(r.out.error.message, /'query'/);
  assert.match(r.out.error.message, /100/);
  assert.equal(r.seen.length, 0, 'the wiki was not asked');
  for (const [path, what] of [['longtitle', /answered a title of 256 characters \(at most 255 are taken\)/],
    ['longurl', /answered a page URL of \d{4} bytes \(at most 2000 are taken\)/],
    ['longfinal', /answered a title of 300 characters/]]) {
    dir = wikiDir({ baseUrl: `${SITE}/${path}/api.php` });
    r = await lookup(dir, '阿卡林');
    assert.equal(r.status, 1, r.stdout);
    assert.equal(r.out.error.code, 'upstream_error', path);
    assert.match(r.out.error.message, what, path);
    assert.match(r.out.error.message, /check that wiki\.baseUrl in config\.json is the wiki's api\.php/);
  }
});

test('[Q-WIKI] an answer that is not JSON (a page of HTML) is a clear error', async () => {
  const dir = wikiDir({ baseUrl: `${SITE}/html/api.php` });
  const r = await lookup(dir, '初音未来');
  assert.equal(r.status, 1, r.stdout);
  assert.equal(r.out.error.code, 'upstream_error');
  assert.match(r.out.error.message, /did not answer with the MediaWiki API's JSON \(it began '<!DOCTYPE html>/);
  assert.match(r.out.error.message, /check that wiki\.baseUrl in config\.json is the wiki's api\.php/);
});

test('[Q-WIKI] an unreachable wiki is a clear error naming it', async () => {
  const closed = createServer();
  await new Promise((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = closed.address().port;
  await new Promise((resolve) => closed.close(resolve));
  const dir = wikiDir({ baseUrl: `http://127.0.0.1:${port}/api.php`, timeoutMs: 2000 });
  const r = await lookup(dir, '初音未来');
  assert.equal(r.status, 1, r.stdout);
  assert.equal(r.out.error.code, 'upstream_error');
  assert.match(r.out.error.message, new RegExp(`the wiki at 'http://127\\.0\\.0\\.1:${port}/api\\.php' could not be asked`));
  assert.match(r.out.error.message, /check wiki\.baseUrl in config\.json and the network/);
});

test('[Q-WIKI] a long extract is cut on a character boundary and marked truncated', async () => {
  const dir = wikiDir({ baseUrl: `${SITE}/api.php` });
  const r = await lookup(dir, '长文');
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.equal(r.out.truncated, true);
  assert.equal(r.out.extract, '长'.repeat(1200) + '…');
});

test('[Q-WIKI] a script path as wiki.baseUrl gets api.php; the history records the call', async () => {
  const dir = wikiDir({ baseUrl: `${SITE}/w/` });
  const r = await lookup(dir, '阿卡林');
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.deepEqual(r.seen.map((s) => s.path), ['/w/api.php', '/w/api.php']);
  const h = await run(['--dir', dir, 'tool', 'zcor_memory_history', JSON.stringify({ keywords: ['wiki_lookup'] })]);
  const items = JSON.parse(h.stdout).items;
  assert.equal(items.length, 1);
  assert.equal(items[0].status, 'ok');
});

test('[Q-WIKI] the cache: the model asking twice (even spelled with other case and spaces) costs one lookup', async () => {
  const dir = wikiDir({ baseUrl: `${SITE}/api.php` });
  const transport = new StdioClientTransport({
    command: BIN, args: ['--dir', dir, '--conversation', 'group:100000001', 'mcp'], env: env(), stderr: 'pipe',
  });
  const client = new Client({ name: 'zcor-wiki-e2e', version: '1.0.0' });
  await client.connect(transport);
  try {
    const listed = await client.listTools();
    assert.ok(listed.tools.some((t) => t.name === 'wiki_lookup'), 'wiki_lookup is offered in a conversation');
    const from = requests.length;
    const a = await client.callTool({ name: 'wiki_lookup', arguments: { query: 'Miku' } });
    assert.equal(a.isError, false, JSON.stringify(a));
    const b = await client.callTool({ name: 'wiki_lookup', arguments: { query: '  miku ' } });
    assert.equal(b.isError, false, JSON.stringify(b));
    assert.deepEqual(b.structuredContent, a.structuredContent);
    assert.equal(requests.length - from, 2, 'one lookup: opensearch + extracts, nothing for the second call');
    // no page is remembered as well
    const c = await client.callTool({ name: 'wiki_lookup', arguments: { query: '查无此词' } });
    const d = await client.callTool({ name: 'wiki_lookup', arguments: { query: '查无此词' } });
    assert.equal(c.isError, true);
    assert.equal(d.isError, true);
    assert.equal(d.structuredContent.error.code, 'not_found');
    assert.equal(requests.length - from, 3);
  } finally {
    await client.close();
  }
});

test('[Q-WIKI] bad arguments are refused before any request', async () => {
  const dir = wikiDir({ baseUrl: `${SITE}/api.php` });
  for (const q of ['', '   ', '梗'.repeat(101)]) {
    const r = await lookup(dir, q);
    assert.equal(r.status, 1, r.stdout);
    assert.equal(r.out.error.code, 'invalid_argument');
    assert.match(r.out.error.message, /query/);
    assert.equal(r.seen.length, 0);
  }
});

test('[Q-WIKI] wiki.* rows in config.json are checked with messages that say what to write', async () => {
  const cases = [
    [{ baseUrl: 'ftp://wiki.example/api.php' }, /'wiki\.baseUrl' must be a MediaWiki API address: an http:\/\/ or https:\/\/ URL ending in api\.php/],
    [{ baseUrl: 'https://wiki.example/index.php' }, /'wiki\.baseUrl' names 'index\.php', which is not the MediaWiki API/],
    [{ baseUrl: 'https://wiki.example/api.php?action=query' }, /'wiki\.baseUrl' must be/],
    [{ timeoutMs: 5 }, /'wiki\.timeoutMs' must be an integer from 100 to 60000/],
    [{ maxBytes: 10 }, /'wiki\.maxBytes' must be an integer from 1024 to 16777216/],
    [{ base: 'x' }, /unknown key 'wiki\.base'/],
  ];
  for (const [wiki, re] of cases) {
    const dir = wikiDir(wiki);
    const r = await run(['--dir', dir, 'doctor', '--json']);
    assert.equal(r.status, 2, r.stdout + r.stderr);
    assert.match(r.stdout, re, JSON.stringify(wiki));
  }
  const dir = wikiDir('https://wiki.example/api.php');
  const r = await run(['--dir', dir, 'doctor', '--json']);
  assert.match(r.stdout, /'wiki' must be an object such as/);
});
