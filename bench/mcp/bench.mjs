#!/usr/bin/env node
// bench.mjs — the MCP benchmark (issue 4). Node 20, no other runtime.
//
//   node bench/mcp/bench.mjs [--quick] [--bin build/zcor] [--out FILE]
//
// 1. HTTP: `zcor serve`, one MCP session, tools/call zcor_memory_read {id}
//    over 16 keep-alive connections: requests/s, p50/p99.
// 2. stdio: `zcor mcp`, the same call one at a time (requests/s, p50/p99)
//    and pipelined (all sent, then all read: requests/s).
// 3. The MCP reference memory server (@modelcontextprotocol/server-memory,
//    stdio, its JSONL file in a temp dir) against `zcor mcp` on the same
//    logical workload at 1k and 10k: create one entity / memory per call,
//    then search by a person's name. One request in flight on both sides.
//
// The clients speak newline-delimited JSON-RPC (stdio) and plain POSTs
// (HTTP) themselves, with no MCP SDK: the SDK would add the same client
// cost to both sides of the comparison and hide part of the server's. Every
// response is checked (no JSON-RPC error, isError not true). A table goes to
// stdout, the JSON to --out (default bench/results/mcp-<date>.json).
// Run from anywhere; paths are relative to the repository.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, readdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const TOP = resolve(HERE, '..', '..');
const PROTOCOL = '2025-06-18';

// ---- arguments ----------------------------------------------------------

const argv = process.argv.slice(2);
const opt = { quick: false, bin: join(TOP, 'build', 'zcor'), out: null };
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === '--quick') opt.quick = true;
  else if (a === '--bin') opt.bin = resolve(argv[++i]);
  else if (a === '--out') opt.out = resolve(argv[++i]);
  else {
    console.error('usage: node bench/mcp/bench.mjs [--quick] [--bin build/zcor] [--out FILE]');
    process.exit(2);
  }
}
const CFG = opt.quick
  ? { httpRequests: 2000, httpConns: 16, httpOneRequests: 500, stdioRequests: 2000, warmup: 200, sizes: [200, 1000], searches: 50 }
  : { httpRequests: 20000, httpConns: 16, httpOneRequests: 5000, stdioRequests: 20000, warmup: 1000, sizes: [1000, 10000], searches: 200 };
const day = new Date().toISOString().slice(0, 10).replaceAll('-', '');
opt.out ??= join(TOP, 'bench', 'results', `mcp-${day}${opt.quick ? '-quick' : ''}.json`);

const REF_ENTRY = join(HERE, 'node_modules', '@modelcontextprotocol', 'server-memory', 'dist', 'index.js');
const REF_VERSION = JSON.parse(
  readFileSync(join(HERE, 'node_modules', '@modelcontextprotocol', 'server-memory', 'package.json'), 'utf8'),
).version;

// ---- small helpers ------------------------------------------------------

const now = () => process.hrtime.bigint();
const ms = (ns) => Number(ns) / 1e6;

function stats(latNs) {
  const a = Float64Array.from(latNs, (x) => Number(x) / 1e6).sort();
  const pct = (p) => (a.length ? a[Math.min(a.length - 1, Math.ceil((p / 100) * a.length) - 1)] : NaN);
  let sum = 0;
  for (const x of a) sum += x;
  return { n: a.length, p50: pct(50), p99: pct(99), mean: sum / a.length, max: a[a.length - 1] };
}

function tmp(prefix) {
  return mkdtempSync(join(os.tmpdir(), prefix));
}

function duBytes(path) {
  const st = statSync(path);
  if (!st.isDirectory()) return st.size;
  let n = 0;
  for (const e of readdirSync(path)) n += duBytes(join(path, e));
  return n;
}

function checkResult(msg, what) {
  if (msg.error) throw new Error(`${what}: JSON-RPC error ${JSON.stringify(msg.error)}`);
  if (msg.result && msg.result.isError)
    throw new Error(`${what}: tool error ${JSON.stringify(msg.result.content).slice(0, 300)}`);
  return msg.result;
}

// Deterministic PRNG (mulberry32): the same data on every run and both sides.
function rng(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// ---- a JSON-RPC client over a child's stdio --------------------------------

class StdioRpc {
  constructor(label, cmd, args, env) {
    this.label = label;
    this.nextId = 1;
    this.pending = new Map();
    this.stderr = '';
    this.child = spawn(cmd, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stderr.setEncoding('utf8');
    this.child.stderr.on('data', (d) => {
      this.stderr = (this.stderr + d).slice(-4000);
    });
    let buf = '';
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (d) => {
      buf += d;
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line.trim()) this.onLine(line);
      }
    });
    this.exited = new Promise((res) => this.child.on('exit', (code, sig) => res({ code, sig })));
    this.exited.then(({ code, sig }) => {
      for (const p of this.pending.values())
        p.reject(new Error(`${label} exited (${code ?? sig}) with a request in flight: ${this.stderr}`));
      this.pending.clear();
    });
  }

  onLine(line) {
    const msg = JSON.parse(line);
    if (msg.id === undefined || msg.id === null || !this.pending.has(msg.id)) {
      if (msg.method) return; // a notification or a request from the server: not awaited
      throw new Error(`${this.label}: unexpected message ${line.slice(0, 200)}`);
    }
    const p = this.pending.get(msg.id);
    this.pending.delete(msg.id);
    p.resolve(msg);
  }

  frame(method, params) {
    const id = this.nextId++;
    const text = JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n';
    const done = new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
    return { text, done };
  }

  request(method, params) {
    const { text, done } = this.frame(method, params);
    this.child.stdin.write(text);
    return done;
  }

  // Sends every request in one write, then resolves when all are answered.
  pipeline(method, paramsList) {
    const frames = paramsList.map((p) => this.frame(method, p));
    this.child.stdin.write(frames.map((f) => f.text).join(''));
    return Promise.all(frames.map((f) => f.done));
  }

  notify(method, params) {
    this.child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method, ...(params ? { params } : {}) }) + '\n');
  }

  async initialize() {
    const r = await this.request('initialize', {
      protocolVersion: PROTOCOL,
      capabilities: {},
      clientInfo: { name: 'zcor-bench-mcp', version: '1' },
    });
    checkResult(r, `${this.label} initialize`);
    this.notify('notifications/initialized');
    return r.result;
  }

  async tool(name, args) {
    return checkResult(await this.request('tools/call', { name, arguments: args }), `${this.label} ${name}`);
  }

  async close() {
    this.child.stdin.end();
    const t = setTimeout(() => this.child.kill('SIGKILL'), 10000);
    const r = await this.exited;
    clearTimeout(t);
    return r;
  }
}

function zcorStdio(dir) {
  const env = { ...process.env };
  delete env.ZCOR_DIR;
  return new StdioRpc('zcor mcp', opt.bin, ['--dir', dir, 'mcp'], env);
}

function referenceStdio(file) {
  return new StdioRpc('server-memory', process.execPath, [REF_ENTRY], { ...process.env, MEMORY_FILE_PATH: file });
}

// ---- 1. HTTP --------------------------------------------------------------

function freePort() {
  return new Promise((res, rej) => {
    const s = net.createServer();
    s.on('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
}

function startServe(dir, port) {
  const env = { ...process.env };
  delete env.ZCOR_DIR;
  // stderr carries one access-log line per request: /dev/null, as a quiet
  // deployment would have it (a pipe nobody reads would stall the server).
  const child = spawn(opt.bin, ['--dir', dir, 'serve', '--listen', `127.0.0.1:${port}`], {
    env,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  return new Promise((res, rej) => {
    let out = '';
    child.on('exit', (code) => rej(new Error(`zcor serve exited (${code}) before serving: ${out}`)));
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/zcor: serving .* at (http:\/\/127\.0\.0\.1:(\d+))\/\?token=([0-9A-Za-z_-]+)/);
      if (m) res({ child, base: m[1], token: m[3] });
    });
  });
}

function post(agent, base, headers, body) {
  return new Promise((res, rej) => {
    const req = http.request(
      `${base}/mcp`,
      { method: 'POST', agent, headers: { ...headers, 'Content-Length': Buffer.byteLength(body) } },
      (r) => {
        const chunks = [];
        r.on('data', (c) => chunks.push(c));
        r.on('end', () => res({ status: r.statusCode, headers: r.headers, body: Buffer.concat(chunks).toString('utf8'), reused: req.reusedSocket }));
        r.on('error', rej);
      },
    );
    req.on('error', rej);
    req.end(body);
  });
}

async function benchHttp() {
  const dir = tmp('zcor-bench-mcp-http-');
  const port = await freePort();
  const srv = await startServe(join(dir, 'store'), port);
  const agent = new http.Agent({ keepAlive: true, maxSockets: CFG.httpConns });
  const agent1 = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const base = {
      Authorization: `Bearer ${srv.token}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
    };
    const rpc = (id, method, params) => JSON.stringify({ jsonrpc: '2.0', id, method, params });
    const init = await post(agent, srv.base, base, rpc(1, 'initialize', {
      protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'zcor-bench-mcp', version: '1' },
    }));
    if (init.status !== 200) throw new Error(`initialize: HTTP ${init.status} ${init.body}`);
    const sid = init.headers['mcp-session-id'];
    if (!sid) throw new Error('initialize: no Mcp-Session-Id');
    const h = { ...base, 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': PROTOCOL };
    const ack = await post(agent, srv.base, h, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    if (ack.status !== 202) throw new Error(`notifications/initialized: HTTP ${ack.status}`);
    const w = await post(agent, srv.base, h, rpc(2, 'tools/call', {
      name: 'zcor_memory_write',
      arguments: { title: '王子涵喜欢火锅', content: '王子涵说周末想约群友去吃火锅，最好是重庆老火锅。' },
    }));
    const id = checkResult(JSON.parse(w.body), 'http zcor_memory_write').structuredContent.node.id;
    const body = rpc(3, 'tools/call', { name: 'zcor_memory_read', arguments: { id } });
    const first = JSON.parse((await post(agent, srv.base, h, body)).body);
    checkResult(first, 'http zcor_memory_read');

    let newSockets = 0;
    async function run(agent, conns, total, lat) {
      let next = 0;
      async function worker() {
        while (next < total) {
          next++;
          const t0 = now();
          const r = await post(agent, srv.base, h, body);
          const t1 = now();
          if (r.status !== 200 || !r.body.includes('"isError":false'))
            throw new Error(`http zcor_memory_read: HTTP ${r.status} ${r.body.slice(0, 300)}`);
          if (!r.reused) newSockets++;
          if (lat) lat.push(t1 - t0);
        }
      }
      const t0 = now();
      await Promise.all(Array.from({ length: conns }, worker));
      return now() - t0;
    }
    await run(agent, CFG.httpConns, CFG.warmup, null);
    const warmSockets = newSockets;
    newSockets = 0;
    const lat = [];
    const wall = await run(agent, CFG.httpConns, CFG.httpRequests, lat);
    const timedSockets = newSockets;
    // the same call on one connection, for comparison (not asked by the issue)
    const lat1 = [];
    const wall1 = await run(agent1, 1, CFG.httpOneRequests, lat1);
    return {
      connections: CFG.httpConns,
      requests: CFG.httpRequests,
      responseBytes: Buffer.byteLength(JSON.stringify(first)),
      socketsOpened: { warmup: warmSockets, timed: timedSockets },
      seconds: ms(wall) / 1e3,
      rps: CFG.httpRequests / (ms(wall) / 1e3),
      latencyMs: stats(lat),
      oneConnection: {
        requests: CFG.httpOneRequests,
        seconds: ms(wall1) / 1e3,
        rps: CFG.httpOneRequests / (ms(wall1) / 1e3),
        latencyMs: stats(lat1),
      },
    };
  } finally {
    agent.destroy();
    agent1.destroy();
    srv.child.kill('SIGTERM');
    await new Promise((r) => srv.child.on('exit', r));
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---- 2. stdio -----------------------------------------------------------

async function benchStdio() {
  const dir = tmp('zcor-bench-mcp-stdio-');
  const z = zcorStdio(join(dir, 'store'));
  try {
    await z.initialize();
    const w = await z.tool('zcor_memory_write', {
      title: '王子涵喜欢火锅',
      content: '王子涵说周末想约群友去吃火锅，最好是重庆老火锅。',
    });
    const args = { id: w.structuredContent.node.id };
    for (let i = 0; i < CFG.warmup; i++) await z.tool('zcor_memory_read', args);
    const lat = [];
    let t0 = now();
    for (let i = 0; i < CFG.stdioRequests; i++) {
      const t = now();
      await z.tool('zcor_memory_read', args);
      lat.push(now() - t);
    }
    const seqWall = now() - t0;
    const list = Array.from({ length: CFG.stdioRequests }, () => ({ name: 'zcor_memory_read', arguments: args }));
    t0 = now();
    const all = await z.pipeline('tools/call', list);
    const pipeWall = now() - t0;
    all.forEach((m) => checkResult(m, 'zcor mcp zcor_memory_read (pipelined)'));
    return {
      requests: CFG.stdioRequests,
      sequential: { seconds: ms(seqWall) / 1e3, rps: CFG.stdioRequests / (ms(seqWall) / 1e3), latencyMs: stats(lat) },
      pipelined: { seconds: ms(pipeWall) / 1e3, rps: CFG.stdioRequests / (ms(pipeWall) / 1e3) },
    };
  } finally {
    await z.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---- 3. the reference memory server against zcor mcp -----------------------

const SURNAMES = '王李张刘陈杨黄赵吴徐孙马朱胡郭何林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘蒋蔡杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范廖贾夏韦方白邹孟熊秦邱江尹薛';
const GIVEN = ['子涵', '梓轩', '浩宇', '一诺', '欣怡', '雨桐', '思远', '佳琪', '俊杰', '明杰', '晓峰', '嘉怡', '若曦', '天宇', '志强', '文博', '雅婷', '宇航', '沐宸', '可馨', '晨阳', '诗琪', '子墨', '奕辰'];
const FOODS = ['火锅', '烤串', '螺蛳粉', '麻辣烫', '小龙虾', '煲仔饭', '肠粉', '烤鸭', '酸菜鱼', '生煎'];
const PLACES = ['万达', '大学城', '解放碑', '春熙路', '五道口', '西湖边', '老城区', '地铁口那家店'];
const GAMES = ['原神', '王者荣耀', '英雄联盟', '永劫无间', '崩坏星穹铁道', '蛋仔派对', '和平精英', 'CS2'];
const RANKS = ['黄金', '铂金', '钻石', '星耀', '王者', '大师'];
const CITIES = ['上海', '北京', '成都', '重庆', '杭州', '广州', '深圳', '武汉', '西安', '长沙'];
const DISTRICTS = ['浦东', '海淀', '高新区', '渝中', '滨江', '天河', '南山', '洪山', '雁塔', '岳麓'];
const JOBS = ['前端', '运维', '产品经理', '设计', '测试', '销售', '老师', '医生'];
const PETS = [['猫', '橘子'], ['狗', '旺财'], ['仓鼠', '团子'], ['猫', '煤球'], ['鹦鹉', '豆豆']];
const TOPICS = ['口味', '游戏', '住处', '生日', '开黑', '工作', '宠物', '忌口'];

function makeData(n, searches) {
  const r = rng(4);
  const pick = (a) => a[Math.floor(r() * a.length)];
  const names = new Set();
  while (names.size < 500) names.add(pick(SURNAMES) + pick(GIVEN));
  const people = [...names];
  const items = [];
  for (let i = 0; i < n; i++) {
    const p = pick(people);
    let q = pick(people);
    if (q === p) q = people[(people.indexOf(p) + 1) % people.length];
    const k = Math.floor(r() * TOPICS.length);
    const food = pick(FOODS);
    const [pet, petName] = pick(PETS);
    const content = [
      () => `${p}喜欢吃${food}，说周末想约群友一起去${pick(PLACES)}，人多可以拼桌。`,
      () => `${p}最近在玩${pick(GAMES)}，段位${pick(RANKS)}，经常在群里喊人带，说${q}打得比他好。`,
      () => `${p}住在${pick(CITIES)}${pick(DISTRICTS)}，离${pick(PLACES)}不远，下班一般八点到家。`,
      () => `${p}的生日是${1 + Math.floor(r() * 12)}月${1 + Math.floor(r() * 28)}日，去年群里给他发了红包，${q}还做了表情包。`,
      () => `${p}和${q}每周五晚上固定开黑${pick(GAMES)}，九点上线，缺人会在群里@大家。`,
      () => `${p}在${pick(CITIES)}做${pick(JOBS)}，经常加班到十点，周末才有空水群。`,
      () => `${p}养了一只${pet}叫${petName}，隔三差五在群里发照片，${q}最喜欢它。`,
      () => `${p}不吃${food}，聚餐点菜的时候别点，上次${q}忘了他还生气了。`,
    ][k]();
    items.push({ title: `${p}的${TOPICS[k]}（第${i + 1}条）`, content });
  }
  const terms = Array.from({ length: searches }, () => pick(people));
  return { items, terms };
}

const SIDES = {
  reference: {
    start: (dir) => referenceStdio(join(dir, 'memory.jsonl')),
    store: (dir) => join(dir, 'memory.jsonl'),
    create: (c, it) => c.tool('create_entities', { entities: [{ name: it.title, entityType: 'memory', observations: [it.content] }] }),
    created: (res) => res.structuredContent.entities.length === 1,
    search: (c, term) => c.tool('search_nodes', { query: term }),
    hits: (res) => res.structuredContent.entities.length,
  },
  zcor: {
    start: (dir) => zcorStdio(join(dir, 'store')),
    store: (dir) => join(dir, 'store'),
    create: (c, it) => c.tool('zcor_memory_write', { title: it.title, content: it.content }),
    created: (res) => res.structuredContent.created === true,
    search: (c, term) => c.tool('zcor_memory_query', { keywords: [term], limit: 100 }),
    hits: (res) => res.structuredContent.total,
  },
};

async function workload(sideName, data) {
  const side = SIDES[sideName];
  const dir = tmp(`zcor-bench-mcp-${sideName}-`);
  const c = side.start(dir);
  try {
    await c.initialize();
    const create = [];
    let t0 = now();
    for (const it of data.items) {
      const t = now();
      const res = await side.create(c, it);
      create.push(now() - t);
      if (!side.created(res)) throw new Error(`${sideName}: not created: ${JSON.stringify(res).slice(0, 300)}`);
    }
    const createWall = now() - t0;
    const search = [];
    const hits = [];
    t0 = now();
    for (const term of data.terms) {
      const t = now();
      const res = await side.search(c, term);
      search.push(now() - t);
      hits.push(side.hits(res));
    }
    const searchWall = now() - t0;
    const last = create.slice(-Math.min(200, create.length));
    return {
      create: { seconds: ms(createWall) / 1e3, latencyMs: stats(create), lastLatencyMs: stats(last) },
      search: { seconds: ms(searchWall) / 1e3, latencyMs: stats(search) },
      hits,
      storeBytes: duBytes(side.store(dir)),
    };
  } finally {
    await c.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function benchCompare() {
  const out = [];
  for (const n of CFG.sizes) {
    const data = makeData(n, CFG.searches);
    process.stderr.write(`  ${n} entities: reference…`);
    const reference = await workload('reference', data);
    process.stderr.write(' zcor…');
    const zcor = await workload('zcor', data);
    process.stderr.write(' done\n');
    const mismatches = reference.hits.filter((h, i) => h !== zcor.hits[i]).length;
    const meanHits = zcor.hits.reduce((a, b) => a + b, 0) / zcor.hits.length;
    delete reference.hits;
    delete zcor.hits;
    out.push({
      n,
      searches: CFG.searches,
      meanHits,
      hitMismatches: mismatches,
      reference,
      zcor,
      ratio: {
        createTotal: reference.create.seconds / zcor.create.seconds,
        createP50: reference.create.latencyMs.p50 / zcor.create.latencyMs.p50,
        createP99: reference.create.latencyMs.p99 / zcor.create.latencyMs.p99,
        createLastP50: reference.create.lastLatencyMs.p50 / zcor.create.lastLatencyMs.p50,
        searchP50: reference.search.latencyMs.p50 / zcor.search.latencyMs.p50,
        searchP99: reference.search.latencyMs.p99 / zcor.search.latencyMs.p99,
      },
    });
  }
  return out;
}

// ---- main -----------------------------------------------------------------


const f = (x, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : String(x));
const k = (x) => Math.round(x).toLocaleString('en-US');

async function main() {
  const started = new Date();
  const result = {
    bench: 'mcp',
    issue: 4,
    date: started.toISOString(),
    command: ['node', 'bench/mcp/bench.mjs', ...argv].join(' '),
    quick: opt.quick,
    config: CFG,
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model,
      memGiB: Math.round(os.totalmem() / 2 ** 30),
      kernel: os.release(),
      node: process.version,
    },
    zcor: { bin: opt.bin },
    reference: { package: '@modelcontextprotocol/server-memory', version: REF_VERSION },
  };
  process.stderr.write('== MCP over HTTP (zcor serve) ==\n');
  result.http = await benchHttp();
  process.stderr.write('== MCP over stdio (zcor mcp) ==\n');
  result.stdio = await benchStdio();
  process.stderr.write('== reference memory server vs zcor mcp (stdio) ==\n');
  result.compare = await benchCompare();

  const H = result.http, S = result.stdio;
  console.log(`\nzcor_memory_read, one node (${H.responseBytes} B response)`);
  console.log('| transport | requests | req/s | p50 ms | p99 ms |');
  console.log('|---|---:|---:|---:|---:|');
  console.log(`| HTTP, ${H.connections} keep-alive connections | ${k(H.requests)} | ${k(H.rps)} | ${f(H.latencyMs.p50, 3)} | ${f(H.latencyMs.p99, 3)} |`);
  console.log(`| HTTP, 1 keep-alive connection | ${k(H.oneConnection.requests)} | ${k(H.oneConnection.rps)} | ${f(H.oneConnection.latencyMs.p50, 3)} | ${f(H.oneConnection.latencyMs.p99, 3)} |`);
  console.log(`| stdio, sequential | ${k(S.requests)} | ${k(S.sequential.rps)} | ${f(S.sequential.latencyMs.p50, 3)} | ${f(S.sequential.latencyMs.p99, 3)} |`);
  console.log(`| stdio, pipelined | ${k(S.requests)} | ${k(S.pipelined.rps)} | | |`);
  console.log(`\nreference server-memory ${REF_VERSION} vs zcor mcp, stdio, one request in flight (times in ms)`);
  console.log('| N | phase | reference total s | ref p50 | ref p99 | zcor total s | zcor p50 | zcor p99 | ratio p50 | ratio p99 | ratio total |');
  console.log('|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const c of result.compare) {
    const R = c.reference, Z = c.zcor, q = c.ratio;
    console.log(`| ${k(c.n)} | create | ${f(R.create.seconds)} | ${f(R.create.latencyMs.p50)} | ${f(R.create.latencyMs.p99)} | ${f(Z.create.seconds)} | ${f(Z.create.latencyMs.p50)} | ${f(Z.create.latencyMs.p99)} | ${f(q.createP50, 1)}× | ${f(q.createP99, 1)}× | ${f(q.createTotal, 1)}× |`);
    console.log(`| ${k(c.n)} | search ×${c.searches} | ${f(R.search.seconds)} | ${f(R.search.latencyMs.p50)} | ${f(R.search.latencyMs.p99)} | ${f(Z.search.seconds)} | ${f(Z.search.latencyMs.p50)} | ${f(Z.search.latencyMs.p99)} | ${f(q.searchP50, 1)}× | ${f(q.searchP99, 1)}× | ${f(R.search.seconds / Z.search.seconds, 1)}× |`);
  }
  for (const c of result.compare)
    console.log(`N=${c.n}: last 200 creates p50 reference ${f(c.reference.create.lastLatencyMs.p50)} ms, zcor ${f(c.zcor.create.lastLatencyMs.p50)} ms (${f(c.ratio.createLastP50, 1)}×); ` +
      `mean hits ${f(c.meanHits, 1)}, hit-count mismatches ${c.hitMismatches}; store ${k(c.reference.storeBytes)} B vs ${k(c.zcor.storeBytes)} B`);

  mkdirSync(dirname(opt.out), { recursive: true });
  writeFileSync(opt.out, JSON.stringify(result, null, 2) + '\n');
  console.log(`\nJSON: ${opt.out}`);
}

main().catch((e) => {
  console.error(e.stack || e);
  process.exit(1);
});
