// api.js — the REST API (docs/API.md) with the token header. The token
// comes from <meta name="zcor-token">, which the server fills in only for
// a caller that already holds it; the API never accepts the cookie.
const token = document.querySelector('meta[name="zcor-token"]')?.content || '';

// status, code ("conflict"), message (the server's, English) and details
// (what a refusal names, docs/API.md "Errors"; {} when none).
export class ApiError extends Error {
  constructor(status, code, message, details) {
    super(message || code || `HTTP ${status}`);
    this.status = status;
    this.code = code || '';
    this.details = details && typeof details === 'object' ? details : {};
  }
}

export async function api(method, path, body) {
  const init = { method, headers: { Authorization: `Bearer ${token}` }, credentials: 'omit' };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(`/api/v1/${path}`, init);
  } catch (e) {
    throw new ApiError(0, 'network', String(e.message || e));
  }
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = null; }
  if (!res.ok) {
    const err = data && data.error;
    throw new ApiError(res.status, err?.code, err?.message || text.slice(0, 300), err?.details);
  }
  return data;
}

// Image bytes (stickers) as a blob: URL, fetched with the header.
export async function blobUrl(path) {
  const res = await fetch(`/api/v1/${path}`, { headers: { Authorization: `Bearer ${token}` }, credentials: 'omit' });
  if (!res.ok) throw new ApiError(res.status, 'not_found', `HTTP ${res.status}`);
  return URL.createObjectURL(await res.blob());
}

export function qs(params) {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params))
    if (v !== undefined && v !== null && v !== '' && !(Array.isArray(v) && !v.length))
      u.set(k, Array.isArray(v) ? v.join(',') : String(v));
  const s = u.toString();
  return s ? `?${s}` : '';
}

// POST path with body, its answer an event stream (text/event-stream:
// "event: name" and "data: JSON" lines, a blank line after each event);
// onEvent(name, data) for each as it comes. An answer that is not a
// stream (a refusal before the turn began) throws its ApiError.
export async function stream(path, body, onEvent) {
  let res;
  try {
    res = await fetch(`/api/v1/${path}`, {
      method: 'POST', credentials: 'omit',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
  } catch (e) {
    throw new ApiError(0, 'network', String(e.message || e));
  }
  if (!(res.headers.get('content-type') || '').startsWith('text/event-stream')) {
    const text = await res.text();
    let data = null;
    try { data = JSON.parse(text); } catch { data = null; }
    const err = data && data.error;
    throw new ApiError(res.status, err?.code, err?.message || text.slice(0, 300), err?.details);
  }
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += value;
    let cut;
    while ((cut = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, cut);
      buf = buf.slice(cut + 2);
      let name = 'message';
      const data = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) name = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (!data.length) continue; // a keep-alive comment
      let parsed = null;
      try { parsed = JSON.parse(data.join('\n')); } catch { continue; }
      onEvent(name, parsed);
    }
  }
}
