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
