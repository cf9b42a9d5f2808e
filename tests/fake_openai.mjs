// fake_openai.mjs — a scripted OpenAI-compatible chat completions server
// for the black-box tests (the turn's e2e tests talk to it through zcor):
// POST /v1/chat/completions answered per request from a script, streamed
// (SSE, when the request asks for stream: true) or as one JSON object,
// with text and/or tool calls; every request is recorded.
//
//   const fake = await startFakeOpenAI([
//     { toolCalls: [{ name: 'zcor_memory_query', arguments: { keywords: ['咖啡'] } }] },
//     { content: '叫「晨光」', usage: { prompt_tokens: 30, completion_tokens: 5 } },
//   ]);
//   … config.json "provider": { baseUrl: fake.baseUrl, model: 'fake' } …
//   fake.requests[0].body.messages …; await fake.close();
//
// A step is an object or a function (request) => object, used once, in
// order; when the script runs out the server answers 500 with an error
// naming the request, so a test sees an unexpected extra call. Fields:
//   content            the assistant's text (string or null)
//   toolCalls          [{ id?, name, arguments }] (arguments: an object is
//                      JSON-encoded, a string is sent as it is)
//   finishReason       default 'tool_calls' with tool calls, else 'stop'
//   usage              { prompt_tokens, completion_tokens, total_tokens? }
//   stream             true/false to override what the request asked for
//   chunkChars         streamed text and arguments cut into pieces of this
//                      many characters (default 3)
//   delayMs            wait before answering
//   status, headers,   an error answer: status (e.g. 429) with body
//   error              { error: { message: error } } and extra headers
//   raw                a body sent as it is (status 200 unless status given)
//   omitDone           a stream without its final data: [DONE]
//   hangUp             close the connection after the head (and any delay)
import { createServer } from 'node:http';

let callSeq = 0;

function calls(step) {
  return (step.toolCalls || []).map((c) => ({
    id: c.id || `call_${++callSeq}`,
    type: 'function',
    function: {
      name: c.name,
      arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments ?? {}),
    },
  }));
}

function finishOf(step, tc) {
  return step.finishReason ?? (tc.length ? 'tool_calls' : 'stop');
}

function usageOf(step) {
  if (!step.usage) return undefined;
  const u = { ...step.usage };
  if (u.total_tokens === undefined) u.total_tokens = (u.prompt_tokens || 0) + (u.completion_tokens || 0);
  return u;
}

function pieces(text, n) {
  const chars = [...text];
  const out = [];
  for (let i = 0; i < chars.length; i += n) out.push(chars.slice(i, i + n).join(''));
  return out;
}

function wholeBody(step, model) {
  const tc = calls(step);
  const message = { role: 'assistant', content: step.content ?? null };
  if (tc.length) message.tool_calls = tc;
  return {
    id: 'chatcmpl-fake', object: 'chat.completion', created: Math.floor(Date.now() / 1000), model,
    choices: [{ index: 0, message, finish_reason: finishOf(step, tc) }],
    ...(step.usage ? { usage: usageOf(step) } : {}),
  };
}

// The SSE events of a streamed answer, as OpenAI sends them: the role,
// text deltas, each tool call's id and name first and then its arguments
// in pieces, the finish_reason, usage when asked for, [DONE].
function streamEvents(step, model, includeUsage) {
  const n = step.chunkChars || 3;
  const chunk = (delta, finish = null) => ({
    id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const ev = [chunk({ role: 'assistant', content: '' })];
  for (const p of pieces(step.content || '', n)) ev.push(chunk({ content: p }));
  calls(step).forEach((c, index) => {
    ev.push(chunk({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.function.name, arguments: '' } }] }));
    for (const p of pieces(c.function.arguments, n))
      ev.push(chunk({ tool_calls: [{ index, function: { arguments: p } }] }));
  });
  ev.push(chunk({}, finishOf(step, step.toolCalls || [])));
  if (includeUsage && step.usage)
    ev.push({ id: 'chatcmpl-fake', object: 'chat.completion.chunk', model, choices: [], usage: usageOf(step) });
  return ev.map((e) => `data: ${JSON.stringify(e)}\n\n`).concat(step.omitDone ? [] : ['data: [DONE]\n\n']);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Starts the server on 127.0.0.1 (a free port); resolves with { baseUrl,
// port, requests, remaining(), close() }. Each request is recorded as
// { method, url, headers, body (parsed JSON, or the text), at, conn (the
// number of the TCP connection it came on, from 1) }; connections() is how
// many were accepted.
export async function startFakeOpenAI(script = []) {
  const queue = [...script];
  const requests = [];
  const server = createServer((req, res) => {
    let data = '';
    req.setEncoding('utf8');
    req.on('data', (c) => { data += c; });
    req.on('end', async () => {
      let body = data;
      try { body = JSON.parse(data); } catch { /* recorded as text */ }
      const rec = { method: req.method, url: req.url, headers: req.headers, body, at: Date.now(), conn: req.socket.fakeConn };
      requests.push(rec);
      if (req.method !== 'POST' || !req.url.endsWith('/chat/completions')) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `fake_openai: no route ${req.method} ${req.url}` } }));
        return;
      }
      let step = queue.shift();
      if (typeof step === 'function') step = await step(rec);
      if (!step) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `fake_openai: script exhausted at request ${requests.length}` } }));
        return;
      }
      if (step.delayMs) await sleep(step.delayMs);
      if (step.hangUp) { req.socket.destroy(); return; }
      const model = (body && body.model) || 'fake';
      if (step.status && step.status >= 300) {
        res.writeHead(step.status, { 'content-type': 'application/json', ...(step.headers || {}) });
        res.end(step.raw ?? JSON.stringify({ error: { message: step.error || `fake_openai: status ${step.status}` } }));
        return;
      }
      if (step.raw !== undefined) {
        res.writeHead(step.status || 200, { 'content-type': 'application/json', ...(step.headers || {}) });
        res.end(step.raw);
        return;
      }
      const stream = step.stream ?? Boolean(body && body.stream);
      if (!stream) {
        res.writeHead(200, { 'content-type': 'application/json', ...(step.headers || {}) });
        res.end(JSON.stringify(wholeBody(step, model)));
        return;
      }
      const includeUsage = Boolean(body && body.stream_options && body.stream_options.include_usage);
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...(step.headers || {}) });
      for (const e of streamEvents(step, model, includeUsage)) {
        res.write(e);
        await sleep(1);
      }
      res.end();
    });
  });
  let conns = 0;
  server.on('connection', (sock) => { sock.fakeConn = ++conns; });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    port,
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    remaining: () => queue.length,
    connections: () => conns,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}
