// qq_world.mjs — what the QQ world's e2e tests (tests/e2e/qq*.test.mjs)
// share: `zcor serve` on a temporary memory directory whose config.json
// has worlds.qq pointing at the fake NapCat of tests/fake_napcat.mjs and
// a provider at tests/fake_openai.mjs, plus readers of what zcor did
// (the transcript and the turn records over REST, the batch a model
// request delivered).
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { startFakeNapCat } from './fake_napcat.mjs';
import { startFakeOpenAI } from './fake_openai.mjs';
import { request, startServe } from './net.mjs';
import { mkTmp } from './tmpdir.mjs';

export const BIN = process.env.ZCOR_BIN;
assert.ok(BIN, 'ZCOR_BIN must name the zcor binary');

export const BOT = 3000000001;
export const TOKEN = 'napcat-secret-token';
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export function cleanEnv(extra = {}) {
  const e = { ...process.env };
  delete e.ZCOR_DIR;
  delete e.ZCOR_TOKEN;
  delete e.NAPCAT_TOKEN;
  for (const k of ['http_proxy', 'https_proxy', 'HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'all_proxy']) delete e[k];
  return { ...e, ...extra };
}

// The batch a model request delivered: the messages of its last
// external_event_frame result (TURN.md, "The frame"), and that result.
export function lastFrame(req) {
  const msgs = req.body.messages || [];
  for (let i = msgs.length - 1; i >= 0; i--) {
    const m = msgs[i];
    if (m.role !== 'assistant' || !(m.tool_calls || []).some((c) => c.function.name === 'external_event_frame')) continue;
    const id = m.tool_calls[0].id;
    const res = msgs.find((x) => x.role === 'tool' && x.tool_call_id === id);
    try { return JSON.parse(res.content); } catch { return { messages: [] }; }
  }
  return { messages: [] };
}
export const batchTexts = (req) => (lastFrame(req).messages || []).map((m) => m.text);

// The qq settings every test starts from (short timers: the tests wait
// well past quietMs / maxWaitMs for what must not happen).
export const QQ_BASE = {
  enabled: true, mode: 'forward', accessTokenEnv: 'NAPCAT_TOKEN', names: ['小钟'],
  quietMs: 150, maxWaitMs: 1000, actionTimeoutMs: 2000, reconnectMinMs: 200, reconnectMaxMs: 1000,
};

// Starts the fakes and `zcor serve`. opts:
//   qq        worlds.qq settings over QQ_BASE (url defaults to the fake's)
//   config    other config.json keys (admission, botId, …)
//   napcat    startFakeNapCat options (token defaults to TOKEN)
//   envToken  NAPCAT_TOKEN given to zcor (default TOKEN; null: unset)
//   env       more environment for zcor serve
//   model     (req) => step for every model request (default: answers 好的)
//   ready     wait for the connection and get_login_info's answer (default
//             true in forward mode)
// Resolves { nc, fake, srv, dir, stop(), … readers }.
export async function startWorld(opts = {}) {
  const nc = await startFakeNapCat({ token: TOKEN, heartbeatMs: 500, ...(opts.napcat || {}) });
  const model = opts.model || (() => ({ content: '好的' }));
  const fake = await startFakeOpenAI(Array.from({ length: 200 }, () => (req) => model(req)));
  const dir = mkTmp('zcor-qq-');
  const qq = { ...QQ_BASE, url: nc.url, ...(opts.qq || {}) };
  writeFileSync(join(dir, 'config.json'), JSON.stringify({
    provider: { baseUrl: fake.baseUrl, model: 'fake', maxRetries: 0 },
    ...(opts.config || {}),
    worlds: { qq },
  }, null, 2));
  const envToken = opts.envToken === undefined ? TOKEN : opts.envToken;
  const srv = await startServe(BIN, dir, cleanEnv({ ...(envToken === null ? {} : { NAPCAT_TOKEN: envToken }), ...(opts.env || {}) }));
  const w = {
    nc, fake, srv, dir,
    async stop() {
      try {
        await srv.stop();
      } finally {
        await nc.close();
        await fake.close();
      }
    },
    // the transcript of a conversation (REST, the host plane), oldest first
    async transcript(conv) {
      const r = await request(srv, `/api/v1/conversations/${encodeURIComponent(conv)}/messages?limit=100`);
      if (r.status === 404) return [];
      assert.equal(r.status, 200, r.text);
      return r.json.items;
    },
    // polls the transcript until pred(items) holds; resolves the items
    async waitLogged(conv, pred, ms = 5000) {
      const p = typeof pred === 'number' ? ((items) => items.length >= pred) : pred;
      const t0 = Date.now();
      for (;;) {
        const items = await w.transcript(conv);
        if (p(items)) return items;
        if (Date.now() - t0 > ms) assert.fail(`${conv}: the transcript did not get there within ${ms} ms: ${JSON.stringify(items)}\n${srv.stderr()}`);
        await sleep(50);
      }
    },
    async turns(conv) {
      const r = await request(srv, `/api/v1/turns?limit=100${conv ? `&conversation=${encodeURIComponent(conv)}` : ''}`);
      assert.equal(r.status, 200, r.text);
      return r.json;
    },
    async worlds() {
      const r = await request(srv, '/api/v1/worlds');
      assert.equal(r.status, 200, r.text);
      return r.json;
    },
    // the send actions that quote message id (a reply segment first)
    sendsQuoting(id) {
      return nc.actions.filter((a) => a.action === 'send_group_msg' && Array.isArray(a.params.message)
        && a.params.message[0] && a.params.message[0].type === 'reply' && a.params.message[0].data.id === String(id));
    },
    // every send to a group / a private chat (group_id / user_id as numbers)
    sendsTo({ group, user }) {
      return nc.actions.filter((a) => (group !== undefined && a.action === 'send_group_msg' && a.params.group_id === group)
        || (user !== undefined && a.action === 'send_private_msg' && a.params.user_id === user));
    },
  };
  if (opts.ready ?? (qq.mode === 'forward')) {
    try {
      await nc.waitConnected(8000);
      await nc.waitAnswered('get_login_info', 5000);
      await sleep(100); // the world reads the answer
    } catch (e) {
      await w.stop().catch(() => {});
      throw new Error(`${e.message}\nzcor serve said:\n${srv.stderr()}`);
    }
  }
  return w;
}

// Runs fn(w) on a started world and stops it (zcor serve must exit 0).
export async function withWorld(opts, fn) {
  const w = await startWorld(opts);
  let failed = null;
  try {
    return await fn(w);
  } catch (e) {
    failed = e;
    e.message += `\n--- zcor serve stderr ---\n${w.srv.stderr()}`;
    throw e;
  } finally {
    try { await w.stop(); } catch (e) { if (!failed) throw e; }
  }
}
