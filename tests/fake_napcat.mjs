// fake_napcat.mjs — a scripted NapCat (OneBot v11 over WebSocket, npm `ws`)
// for the QQ world's black-box tests (issue 15). It plays both roles
// NapCat offers:
//   forward  a WebSocket server on 127.0.0.1:<free port> (NapCat's
//            network.websocketServers) that zcor dials; it checks the
//            access token (Authorization: Bearer, or ?access_token=) and
//            refuses a wrong one with HTTP 401 (authFailure 'http') or as
//            NapCat itself does: the upgrade goes through, then one frame
//            {status: "failed", retcode: 1403, message: "token验证失败"}
//            and a close (authFailure 'retcode');
//   reverse  a client that connects to `zcor serve`'s endpoint
//            (NapCat's network.websocketClients) with Authorization,
//            X-Self-ID and x-client-role: Universal.
// On each connection it sends the lifecycle/connect meta event, then a
// heartbeat every heartbeatMs; it answers actions {action, params, echo}
// with {status, retcode, data, message, wording, echo} (get_login_info →
// {user_id, nickname}; send_group_msg / send_private_msg → {message_id}
// increasing; anything else ok with data null), records every action, and
// emits events in NapCat's own shapes (ids numbers in events and strings
// inside segments, time in seconds, message_format "array"). The same
// port serves images over HTTP (GET /img/<name>) for image segments' url.
//
//   const nc = await startFakeNapCat({ token: 't', selfId: 3000000001 });
//   … worlds.qq.url = nc.url …
//   await nc.waitConnected();
//   const id = nc.groupMessage({ groupId: 100, userId: 111, segments: [seg.at(nc.selfId), seg.text(' 你好')] });
//   const send = await nc.waitAction((a) => a.action === 'send_group_msg');
//   nc.onAction('send_group_msg', { fail: { retcode: 100, message: 'x' }, once: true });
//   nc.drop(); await nc.close();
//
// Rules for actions (nc.onAction(action | '*', rule)), the newest first,
// each used for every matching call or only once (once: true); a rule is
// an object or a function (call) => object | undefined (undefined: next
// rule). Fields:
//   fail     { retcode, message }: status "failed"
//   silent   no answer at all (the caller's timeout)
//   drop     drop the connection instead of answering (the action was
//            received: it may have run)
//   delayMs  wait before answering
//   data     the answer's data instead of the default
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { WebSocket, WebSocketServer } from 'ws';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const nowS = () => Math.floor(Date.now() / 1000);

// Message segments as NapCat reports them (types/message.ts, api/msg.ts):
// every id inside a segment is a string.
export const seg = {
  text: (text) => ({ type: 'text', data: { text } }),
  at: (qq) => ({ type: 'at', data: { qq: String(qq) } }),
  atAll: () => ({ type: 'at', data: { qq: 'all' } }),
  reply: (id) => ({ type: 'reply', data: { id: String(id) } }),
  // a QQ face: data.raw is NapCat's faceElement (faceText such as "/菜汪"
  // for the newer faces, absent for many classic ones)
  face: (id, faceText) => ({ type: 'face', data: { id: String(id),
    raw: { faceIndex: Number(id), faceType: 1, ...(faceText ? { faceText } : {}) }, resultId: null, chainCount: null } }),
  // an image: sub_type 0 a picture, 1 a sticker (表情包); file_size as
  // NapCat sends it, a string of bytes
  image: ({ url, file = 'A1B2C3D4.png', subType = 0, fileSize, summary = '' }) => ({ type: 'image',
    data: { summary, file, sub_type: subType, url, ...(fileSize !== undefined ? { file_size: String(fileSize) } : {}) } }),
  file: ({ name, size, id = 'f-' + name }) => ({ type: 'file', data: { file: name, file_id: id, file_size: String(size) } }),
  forward: (id) => ({ type: 'forward', data: { id: String(id) } }),
  record: (file = 'voice.amr') => ({ type: 'record', data: { file, file_size: '2048' } }),
};

// The text NapCat puts in raw_message (CQ codes), for realism only.
function rawMessage(segments) {
  return segments.map((s) => (s.type === 'text' ? s.data.text
    : `[CQ:${s.type}${Object.entries(s.data).filter(([, v]) => typeof v !== 'object').map(([k, v]) => `,${k}=${v}`).join('')}]`)).join('');
}

// Starts the fake. opts:
//   token        the access token it expects (null/undefined: none checked)
//   authFailure  'http' (401 on the handshake, default) or 'retcode' (NapCat's own)
//   selfId       the bot's QQ number (default 3000000001)
//   nickname     get_login_info's nickname (default '小钟')
//   heartbeatMs  the heartbeat interval (default 1000; 0: none)
//   lifecycle    send lifecycle/connect on each connection (default true)
//   reportSelfMessage  after each send, emit its message_sent echo (default false)
// Resolves { url, port, selfId, actions, dials, imageHits, connections(),
// connected(), … } (see the methods below).
export async function startFakeNapCat(opts = {}) {
  const selfId = Number(opts.selfId ?? 3000000001);
  const nickname = opts.nickname ?? '小钟';
  const token = opts.token ?? null;
  const authFailure = opts.authFailure ?? 'http';
  const state = {
    heartbeatMs: opts.heartbeatMs ?? 1000,
    lifecycle: opts.lifecycle ?? true,
    reportSelfMessage: opts.reportSelfMessage ?? false,
    heartbeats: true,
  };
  let nextMessageId = 1000 + Math.floor(Math.random() * 1000);
  const actions = []; // { action, params, echo, at, conn, answered }
  const dials = [];   // every handshake: { at, authorization, url, ok, headers }
  const imageHits = []; // { name, at }
  const images = new Map(); // name → { bytes, type, delayMs }
  const rules = [];
  const waiters = new Set();
  const sockets = new Set(); // open connections (both roles)
  let connCount = 0;

  const notify = () => { for (const w of [...waiters]) w(); };

  function waitFor(pred, timeoutMs, what) {
    return new Promise((resolve, reject) => {
      const check = () => {
        let v;
        try { v = pred(); } catch (e) { cleanup(); reject(e); return; }
        if (v) { cleanup(); resolve(v); }
      };
      const timer = setTimeout(() => { cleanup(); reject(new Error(`fake_napcat: ${what} did not happen within ${timeoutMs} ms`)); }, timeoutMs);
      const cleanup = () => { clearTimeout(timer); waiters.delete(check); };
      waiters.add(check);
      check();
    });
  }

  function ruleFor(call) {
    for (let i = rules.length - 1; i >= 0; i--) {
      const r = rules[i];
      if (r.action !== '*' && r.action !== call.action) continue;
      const v = typeof r.rule === 'function' ? r.rule(call) : r.rule;
      if (!v) continue;
      if (r.rule.once || v.once) rules.splice(i, 1);
      return v;
    }
    return {};
  }

  function defaultData(call) {
    switch (call.action) {
      case 'get_login_info': return { user_id: selfId, nickname };
      case 'send_group_msg':
      case 'send_private_msg':
      case 'send_msg': return { message_id: ++nextMessageId };
      case 'get_status': return { online: true, good: true, stat: {} };
      case 'get_version_info': return { app_name: 'NapCat.Onebot', protocol_version: 'v11', app_version: '4.8.0' };
      default: return null;
    }
  }

  function sendJson(ws, obj) {
    if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(obj));
  }

  // message_sent: what NapCat reports of the bot's own message (with
  // reportSelfMessage), built like an incoming one but post_type
  // message_sent and user_id the bot.
  function sentEcho(call, messageId) {
    const p = call.params || {};
    const message = Array.isArray(p.message) ? p.message : [seg.text(String(p.message ?? ''))];
    const group = call.action === 'send_group_msg' || (call.action === 'send_msg' && p.message_type === 'group');
    return {
      self_id: selfId, user_id: selfId, time: nowS(), message_id: messageId, message_seq: messageId,
      real_id: messageId, real_seq: String(messageId), message_type: group ? 'group' : 'private',
      sender: { user_id: selfId, nickname, card: '' }, raw_message: rawMessage(message), font: 14,
      sub_type: group ? 'normal' : 'friend', message, message_format: 'array', post_type: 'message_sent',
      message_sent_type: 'self',
      ...(group ? { group_id: Number(p.group_id), group_name: '' } : { target_id: Number(p.user_id) }),
    };
  }

  async function onFrame(ws, data) {
    let call;
    try {
      call = JSON.parse(data.toString());
    } catch {
      sendJson(ws, { status: 'failed', retcode: 1400, data: null, message: 'json解析失败,请检查数据格式', wording: 'json解析失败,请检查数据格式', echo: null });
      return;
    }
    const rec = { action: call.action, params: call.params ?? {}, echo: call.echo, at: Date.now(), conn: ws.fakeConn, answered: null };
    actions.push(rec);
    notify();
    const r = ruleFor(rec);
    if (r.drop) { ws.terminate(); return; }
    if (r.silent) return;
    if (r.delayMs) await sleep(r.delayMs);
    if (r.fail) {
      const message = r.fail.message ?? 'failed';
      rec.answered = 'failed';
      sendJson(ws, { status: 'failed', retcode: r.fail.retcode ?? 100, data: null, message, wording: message, echo: call.echo ?? null, stream: 'normal-action' });
      notify();
      return;
    }
    const data0 = r.data !== undefined ? r.data : defaultData(rec);
    rec.answered = 'ok';
    rec.data = data0;
    sendJson(ws, { status: 'ok', retcode: 0, data: data0, message: '', wording: '', echo: call.echo ?? null, stream: 'normal-action' });
    notify();
    if (state.reportSelfMessage && data0 && data0.message_id && /^send_/.test(rec.action)) {
      await sleep(5);
      sendJson(ws, sentEcho(rec, data0.message_id));
    }
  }

  // A connection of either role, once open: lifecycle, heartbeats, actions.
  function attach(ws, role) {
    ws.fakeConn = ++connCount;
    ws.fakeRole = role;
    sockets.add(ws);
    ws.on('message', (d) => { onFrame(ws, d).catch(() => {}); });
    ws.on('error', () => {});
    let hb = null;
    const beat = () => {
      if (state.heartbeats && state.heartbeatMs > 0)
        sendJson(ws, { time: nowS(), self_id: selfId, post_type: 'meta_event', meta_event_type: 'heartbeat',
          status: { online: true, good: true }, interval: state.heartbeatMs });
      hb = setTimeout(beat, state.heartbeatMs > 0 ? state.heartbeatMs : 200);
    };
    ws.on('close', () => { sockets.delete(ws); if (hb) clearTimeout(hb); notify(); });
    if (state.lifecycle)
      sendJson(ws, { time: nowS(), self_id: selfId, post_type: 'meta_event', meta_event_type: 'lifecycle', sub_type: 'connect' });
    hb = setTimeout(beat, state.heartbeatMs > 0 ? state.heartbeatMs : 200);
    notify();
  }

  const tokenOf = (req) => {
    const q = new URL(req.url, 'http://x').searchParams.get('access_token');
    if (q) return q;
    const h = req.headers.authorization || '';
    return h.startsWith('Bearer ') ? h.slice(7) : null;
  };

  const wss = new WebSocketServer({ noServer: true });
  const http = createServer(async (req, res) => {
    const m = /^\/img\/([^/?]+)/.exec(req.url);
    const img = m && images.get(decodeURIComponent(m[1]));
    if (!img) { res.writeHead(404); res.end('no such image'); return; }
    imageHits.push({ name: decodeURIComponent(m[1]), at: Date.now() });
    notify();
    if (img.delayMs) await sleep(img.delayMs);
    res.writeHead(200, { 'content-type': img.type, 'content-length': img.bytes.length });
    res.end(img.bytes);
  });
  http.on('upgrade', (req, socket, head) => {
    const given = tokenOf(req);
    const ok = !token || given === token;
    dials.push({ at: Date.now(), authorization: req.headers.authorization ?? null, url: req.url, ok, headers: req.headers });
    notify();
    if (!ok && authFailure === 'http') {
      const body = Buffer.from('token验证失败');
      socket.end(Buffer.concat([Buffer.from('HTTP/1.1 401 Unauthorized\r\nContent-Type: text/plain; charset=utf-8\r\n'
        + `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n`), body]));
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      if (!ok) {
        // NapCat itself: the refusal as an answer, then close
        ws.send(JSON.stringify({ status: 'failed', retcode: 1403, data: null, message: 'token验证失败', wording: 'token验证失败', echo: null, stream: 'normal-action' }));
        ws.close();
        return;
      }
      attach(ws, 'forward');
    });
  });
  await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address();

  // every open connection gets the event (NapCat's onEvent)
  function emit(event) {
    const open = [...sockets].filter((s) => s.readyState === WebSocket.OPEN);
    if (!open.length) throw new Error('fake_napcat: no connection to emit on');
    for (const s of open) s.send(JSON.stringify(event));
    return event;
  }

  const base = () => ({ time: nowS(), self_id: selfId });

  function messageEvent({ type, messageId, userId, nickname: nick = `用户${userId}`, card = '', role = 'member', segments,
    groupId, groupName, subType, time, postType = 'message' }) {
    const id = messageId ?? ++nextMessageId;
    const ev = {
      ...base(), ...(time !== undefined ? { time } : {}),
      user_id: Number(userId), message_id: id, message_seq: id, real_id: id, real_seq: String(id),
      message_type: type, sender: { user_id: Number(userId), nickname: nick, card, ...(type === 'group' ? { role } : {}) },
      raw_message: rawMessage(segments), font: 14, sub_type: subType, message: segments, message_format: 'array',
      post_type: postType,
    };
    if (type === 'group') { ev.group_id = Number(groupId); ev.group_name = groupName ?? `群${groupId}`; }
    if (type === 'private' && subType === 'group') { ev.group_id = Number(groupId); ev.temp_source = 0; }
    if (postType === 'message_sent') ev.message_sent_type = 'self';
    return ev;
  }

  return {
    url: `ws://127.0.0.1:${port}/`,
    port,
    selfId,
    actions,
    dials,
    imageHits,
    connections: () => connCount,
    connected: () => [...sockets].filter((s) => s.readyState === WebSocket.OPEN).length,
    // the actions named so (all when no name)
    sent: (name) => actions.filter((a) => !name || a.action === name),

    // Serves bytes at http://127.0.0.1:<port>/img/<name>; returns the url.
    image(name, bytes, type = 'image/png', delayMs = 0) {
      images.set(name, { bytes, type, delayMs });
      return `http://127.0.0.1:${port}/img/${encodeURIComponent(name)}`;
    },

    onAction(action, rule) { rules.push({ action, rule }); },
    clearRules() { rules.length = 0; },
    set heartbeats(on) { state.heartbeats = on; },
    set reportSelfMessage(on) { state.reportSelfMessage = on; },

    // Resolves once n connections are open (default 1).
    waitConnected(timeoutMs = 5000, n = 1) {
      return waitFor(() => [...sockets].filter((s) => s.readyState === WebSocket.OPEN).length >= n, timeoutMs, `${n} open connection(s)`);
    },
    waitDisconnected(timeoutMs = 5000) {
      return waitFor(() => ![...sockets].some((s) => s.readyState === WebSocket.OPEN), timeoutMs, 'no open connection');
    },
    // Resolves with the first recorded action (from index `from`) that pred accepts.
    waitAction(pred, timeoutMs = 5000, from = 0) {
      const p = typeof pred === 'string' ? ((a) => a.action === pred) : pred;
      return waitFor(() => actions.slice(from).find(p), timeoutMs, `an action (${pred.toString().slice(0, 80)})`);
    },
    // Resolves once the action is answered (or failed) — for "ready" checks.
    waitAnswered(name, timeoutMs = 5000, from = 0) {
      return waitFor(() => actions.slice(from).find((a) => a.action === name && a.answered), timeoutMs, `${name} answered`);
    },
    waitFor,

    emit,
    // Sends data as it is (a string: a text frame; a Buffer with binary: a
    // binary frame) on every open connection: frames NapCat never sends.
    emitRaw(data, { binary = false } = {}) {
      const open = [...sockets].filter((s) => s.readyState === WebSocket.OPEN);
      if (!open.length) throw new Error('fake_napcat: no connection to emit on');
      for (const s of open) s.send(data, { binary });
    },
    // A group message; returns its message_id (a number).
    groupMessage({ groupId, userId, segments, ...rest }) {
      return emit(messageEvent({ type: 'group', groupId, userId, segments, subType: 'normal', ...rest })).message_id;
    },
    // A private message from a friend (temp: { groupId } makes it a temporary chat through that group).
    privateMessage({ userId, segments, groupId, ...rest }) {
      return emit(messageEvent({ type: 'private', userId, segments, subType: groupId ? 'group' : 'friend', groupId, ...rest })).message_id;
    },
    // NapCat's echo of a message the bot sent (from this or another device).
    messageSent({ groupId, userId, segments, messageId }) {
      const ev = messageEvent({ type: groupId ? 'group' : 'private', groupId, userId: selfId, nickname, segments,
        subType: groupId ? 'normal' : 'friend', messageId, postType: 'message_sent' });
      if (!groupId) ev.target_id = Number(userId);
      return emit(ev).message_id;
    },
    // notice notify poke in a group (user_id pokes target_id)
    poke({ groupId, userId, targetId }) {
      return emit({ ...base(), post_type: 'notice', notice_type: 'notify', sub_type: 'poke', group_id: Number(groupId),
        user_id: Number(userId), target_id: Number(targetId),
        raw_info: [{ col: '1', nm: '', type: 'qq', uid: 'u_x' }, { jp: '', src: '', type: 'img' }, { txt: '戳了戳', type: 'nor' }] });
    },
    // notice group_recall: userId's message messageId was recalled by operatorId
    groupRecall({ groupId, userId, messageId, operatorId = userId }) {
      return emit({ ...base(), post_type: 'notice', notice_type: 'group_recall', group_id: Number(groupId),
        user_id: Number(userId), operator_id: Number(operatorId), message_id: Number(messageId) });
    },
    // A controllable drop: terminate (no close frame, as a dead network) or close (1000/1001).
    drop({ clean = false } = {}) {
      for (const s of [...sockets]) { if (clean) s.close(1001, 'going away'); else s.terminate(); }
    },

    // Reverse role: connects to url as NapCat's websocketClients does.
    // headers: token (Authorization: Bearer), selfId (X-Self-ID),
    // role (x-client-role); null leaves one out. Resolves { ws } once
    // open, or { status, body } when the server answered the handshake
    // with another status than 101.
    connectReverse(url, { token: tok = token, selfId: sid = selfId, role = 'Universal' } = {}) {
      const headers = { 'User-Agent': 'OneBot/11' };
      if (tok !== null && tok !== undefined) headers.Authorization = `Bearer ${tok}`;
      if (sid !== null && sid !== undefined) headers['X-Self-ID'] = String(sid);
      if (role !== null && role !== undefined) headers['x-client-role'] = role;
      return new Promise((resolve, reject) => {
        const ws = new WebSocket(url, { headers, handshakeTimeout: 3000, perMessageDeflate: false });
        ws.on('unexpected-response', (req, res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c) => { body += c; });
          res.on('end', () => resolve({ status: res.statusCode, body }));
          res.on('error', () => resolve({ status: res.statusCode, body }));
        });
        ws.on('open', () => { attach(ws, 'reverse'); resolve({ ws, status: 101 }); });
        ws.on('error', (e) => { if (ws.readyState !== WebSocket.OPEN) reject(e); });
      });
    },

    close() {
      for (const s of [...sockets]) s.terminate();
      for (const w of [...waiters]) waiters.delete(w);
      return new Promise((resolve) => { wss.close(); http.closeAllConnections(); http.close(() => resolve()); });
    },
  };
}

export const sha256 = (b) => createHash('sha256').update(b).digest('hex');
