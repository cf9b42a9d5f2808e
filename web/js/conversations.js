// conversations.js — the Conversations panel: conversations with their
// counters, a conversation's transcript by date with a search, and its
// rendered views (MEMORY.md, PEOPLE.md, COGNITION.md, STICKERS.md,
// INDEX.md) read-only, stickers shown as images fetched with the token;
// its digest runs (GET digests?conversation=) with what each changed and
// a button that runs one now (POST conversations/:key/digest).
import { h, clear, field, fmtTime, splitList } from './dom.js';
import { api, qs, blobUrl } from './api.js';
import { t, has } from './i18n.js';
import { load, empty, pager, errorBox, busy, recordedError } from './ui.js';
// the per-conversation page (issue 18): its memories, turns, jump bar
import { memoriesSection, turnsSection, jumpBar } from './conversation.js';

const LIMIT = 50;

export function render(root, app, arg) {
  const qq = h('div', { id: 'qq-status' });
  const list = h('div', { id: 'conv-list' });
  const side = h('div', { id: 'conv-detail' });
  const allViews = h('div', { id: 'all-views' });
  root.append(h('div', { class: 'cols' },
    h('div', {},
      qq,
      h('section', { class: 'card', 'aria-labelledby': 'h-conv' }, h('h2', { id: 'h-conv' }, t('tab.conversations')), list),
      h('section', { class: 'card', 'aria-labelledby': 'h-views' }, h('h2', { id: 'h-views' }, t('conv.allViews')), allViews)),
    h('section', { class: 'card', 'aria-label': t('conv.detail') }, side)));
  load(allViews, () => api('GET', 'views'), (data) => viewList(data.items, (path) => {
    const box = h('div', { id: 'cv-view' });
    clear(side, box);
    showView(box, path);
  }), (e) => (e.status === 404 ? t('state.missingRoute') : ''));
  clear(side, empty(t('conv.pick')));
  qqStatus(qq);
  // the table scrolls in its card on a phone, not the page (issue 18)
  load(list, () => api('GET', 'conversations'), (data) => data.items.length ? h('div', { class: 'scroll' }, h('table', {},
    h('thead', {}, h('tr', {}, ['conv.key', 'conv.title', 'conv.messages', 'conv.sinceDigest', 'conv.lastMessage', 'conv.lastDigest'].map((k) => h('th', {}, t(k))))),
    h('tbody', {}, data.items.map((c) => h('tr', {},
      h('td', {}, h('button', { type: 'button', class: 'link', onclick: () => app.go('conversations', c.key) }, c.key)),
      h('td', {}, c.title ?? ''),
      h('td', {}, String(c.messages ?? '')), h('td', {}, String(c.linesSinceDigest ?? '')),
      h('td', {}, fmtTime(c.lastMessageAt)), h('td', {}, c.lastDigestDate || fmtTime(c.lastDigestAt) || '—')))))) : empty(t('conv.none')),
  (e) => (e.status === 404 ? t('state.missingRoute') : ''));
  if (arg) conversation(side, arg, app);
}

// The QQ world's connection (GET worlds), shown only when it is enabled,
// and asked again every QQ_REFRESH_MS while the panel shows it (a hidden
// tab skips the request): a dropped connection, a refused token, the
// heartbeats and the reconnects show up without a reload.
const QQ_REFRESH_MS = 5000;

function qqStatus(el) {
  const again = () => setTimeout(() => {
    if (!el.isConnected) return; // the panel was left or redrawn
    if (document.hidden) again();
    else qqStatus(el);
  }, QQ_REFRESH_MS);
  api('GET', 'worlds').then((w) => {
    if (!el.isConnected) return;
    const q = w?.qq;
    if (!q?.enabled) return; // off until zcor serve restarts
    const c = q.connection ?? {};
    const ms = (v) => (v == null ? '—' : fmtTime(new Date(v).toISOString()));
    const rows = [
      ['qq.mode', q.mode ?? c.mode ?? ''],
      ['qq.state', t(`qq.state.${c.state}`) === `qq.state.${c.state}` ? (c.state ?? '') : t(`qq.state.${c.state}`)],
      ['qq.since', ms(c.connectedSince)],
      ['qq.heartbeat', ms(c.lastHeartbeat)],
      ['qq.self', q.selfId || c.selfId || '—'],
      ['qq.reconnects', String(c.reconnects ?? 0)],
      ['qq.sendsFailed', String(q.sendsFailed ?? 0)],
      ['qq.rateLimited', String(q.rateLimited ?? 0)],
    ];
    if (c.lastError) rows.push(['qq.lastError', c.lastError]);
    clear(el, h('section', { class: 'card', 'aria-labelledby': 'h-qq' }, h('h2', { id: 'h-qq' }, t('qq.title')),
      h('table', { class: `qq-${c.state ?? 'unknown'}` }, h('tbody', {}, rows.map(([k, v]) => h('tr', {}, h('th', { scope: 'row' }, t(k)), h('td', {}, v)))))));
    again();
  }).catch((e) => {
    // an older server without the route (404), a token no longer valid:
    // nothing more to ask
    if (e?.status >= 400 && e.status < 500) return;
    again(); // zcor serve restarting, a network blip: the card stays as it was
  });
}

function conversation(el, key, app) {
  const date = h('input', { type: 'date', id: 'cv-date' });
  const kw = h('input', { type: 'search', id: 'cv-keywords' });
  const msgs = h('div', { id: 'cv-messages' });
  const views = h('div', { id: 'cv-views' });
  const viewText = h('div', { id: 'cv-view' });
  async function search(offset = 0) {
    let from = '', to = '';
    if (date.value) {
      const d = new Date(`${date.value}T00:00:00`);
      from = d.toISOString();
      to = new Date(d.getTime() + 86400000 - 1).toISOString();
    }
    const keywords = splitList(kw.value.replace(/\s+/g, ','));
    const url = (p) => `conversations/${encodeURIComponent(key)}/messages${qs({ from, to, keywords, ...p })}`;
    // newest first (issue 18): a search already is; a read is oldest
    // first, so the page counted from the newest is read from its end and
    // turned round (offset counts from the newest message)
    const fetchPage = async () => {
      if (keywords.length) return api('GET', url({ limit: LIMIT, offset }));
      const { total } = await api('GET', url({ limit: 1, offset: 0 }));
      const end = Math.max(0, total - offset);
      const at = Math.max(0, end - LIMIT);
      const page = end ? await api('GET', url({ limit: end - at, offset: at })) : { items: [] };
      return { items: page.items.slice().reverse(), total, nextOffset: at > 0 ? offset + LIMIT : null };
    };
    await load(msgs, fetchPage, (page) => [
      page.items.length ? h('ol', { class: 'list', id: 'cv-list' }, page.items.map((m) => h('li', { 'data-id': m.id },
        h('div', { class: 'meta' }, `${fmtTime(m.time)} · ${m.senderName ?? ''} (${m.senderId ?? ''}) · #${m.id}`,
          m.replyTo ? h('span', { class: 'reply' }, ` · ${t('conv.replyTo', { id: m.replyTo })}`) : null,
          m.recalledAt ? h('span', { class: 'recalled', title: fmtTime(m.recalledAt) }, ` · ${t('conv.recalled')}`) : null),
        m.mentions?.length ? h('div', { class: 'meta mentions' }, m.mentions.map((x) => `@${x}`).join(' ')) : null,
        h('div', { class: 'text' }, m.text ?? ''),
        m.media?.length ? h('div', { class: 'stickers' }, m.media.map((x) => media(typeof x === 'string' ? x : JSON.stringify(x)))) : null))) : empty(t('state.noMatch')),
      pager(page, offset, LIMIT, search)]);
  }
  const title = h('h2', { id: 'cv-title' }, key);
  // a group by its name where the log knows it
  api('GET', `conversations/${encodeURIComponent(key)}`).then((c) => { if (c?.title) clear(title, `${c.title} (${key})`); }).catch(() => {});
  // one place for the conversation (issue 18): its memories, the
  // transcript, the views, its turns and digest runs
  clear(el, title,
    jumpBar([['cv-sec-memories', 'cv.memories'], ['cv-sec-transcript', 'conv.transcript'], ['cv-sec-views', 'conv.views'],
      ['cv-sec-turns', 'cv.turns'], ['cv-sec-digests', 'dig.title']]),
    memoriesSection(key, app),
    h('section', { id: 'cv-sec-transcript', tabindex: '-1', 'aria-labelledby': 'h-cv-transcript' },
      h('h3', { id: 'h-cv-transcript' }, t('conv.transcript'), ' ', h('span', { class: 'meta' }, t('conv.newestFirst'))),
      h('form', { onsubmit: (e) => { e.preventDefault(); search(0); } },
        h('div', { class: 'row' }, field(t('conv.date'), date), field(t('mem.keywords'), kw), h('button', { type: 'submit', class: 'primary' }, t('action.search')))),
      msgs),
    h('section', { id: 'cv-sec-views', tabindex: '-1', 'aria-labelledby': 'h-cv-views' },
      h('h3', { id: 'h-cv-views' }, t('conv.views')), views, viewText),
    turnsSection(key, app),
    digests(key, app));
  search(0);
  load(views, () => api('GET', `views${qs({ conversation: key })}`), (data) => viewList(data.items, (path) => showView(viewText, path)),
    (e) => (e.status === 404 ? t('state.missingRoute') : ''));
}

// An inbound image of a message (media/<hash>.<ext>), fetched with the
// token; anything else is shown as its text.
function media(ref) {
  const m = /^media\/([0-9a-f]{64}\.[a-z]+)$/.exec(ref);
  if (!m) return h('span', { class: 'meta' }, `${t('conv.media')}${t('colon')}${ref}`);
  const img = h('img', { alt: ref, class: 'media' });
  blobUrl(`media/${m[1]}`).then((u) => { img.src = u; }).catch((e) => { img.replaceWith(errorBox(e)); });
  return h('figure', {}, img, h('figcaption', {}, ref.slice(6, 18) + '…'));
}

function viewList(items, open) {
  return items.length ? h('ul', { class: 'list' }, items.map((v) => h('li', {},
    h('button', { type: 'button', class: 'link', onclick: () => open(v.path) }, v.path),
    h('span', { class: 'meta' }, ` ${v.kind ?? ''} · ${v.entries ?? 0} · ${v.bytes ?? 0} B`)))) : empty(t('conv.noViews'));
}

function showView(el, path) {
  load(el, () => api('GET', `views/read${qs({ path })}`), (v) => {
    const stickers = h('div', { class: 'stickers' });
    if (/STICKERS\.md$/.test(v.path)) {
      const names = [...new Set([...String(v.text).matchAll(/stickers\/([^\s)\]"'`]+)/g)].map((m) => m[1]))];
      for (const name of names) {
        const img = h('img', { alt: name });
        stickers.append(h('figure', {}, img, h('figcaption', {}, name)));
        blobUrl(`stickers/${encodeURIComponent(name)}`).then((u) => { img.src = u; }).catch((e) => { img.replaceWith(errorBox(e)); });
      }
    }
    return [h('h4', {}, v.path), v.note ? h('p', { class: 'notice' }, v.note) : null, stickers, h('pre', { class: 'view-text' }, v.text)];
  });
}

// ---- digest runs (docs/DIGEST.md) ---------------------------------------

const DIGEST_LIMIT = 10;
const word = (prefix, id) => (has(`${prefix}.${id}`) ? t(`${prefix}.${id}`) : String(id ?? ''));

// The section: the button, its outcome line, the runs newest first.
function digests(key, app) {
  const out = h('div', { id: 'cv-digests' });
  const outcome = h('div', { id: 'cv-digest-outcome', role: 'status' });
  const btn = h('button', { type: 'button', id: 'cv-digest-now', class: 'primary' }, t('dig.now'));
  async function list(offset = 0) {
    await load(out, () => api('GET', `digests${qs({ conversation: key, limit: DIGEST_LIMIT, offset })}`), (page) => [
      page.items.length ? h('ol', { class: 'list' }, page.items.map((r) => run(r, app))) : empty(t('dig.none')),
      pager(page, offset, DIGEST_LIMIT, list)], (e) => (e.status === 404 ? t('state.missingRoute') : ''));
  }
  btn.addEventListener('click', () => busy(btn, async () => {
    clear(outcome, h('p', { class: 'loading' }, t('dig.running')));
    try {
      const r = await api('POST', `conversations/${encodeURIComponent(key)}/digest`, {});
      clear(outcome, h('p', { class: 'notice' }, r?.idle ? t('dig.idle')
        : t('dig.done', { id: r.digest, lines: r.sentLines ?? r.lines ?? 0, calls: (r.toolCalls ?? []).length })));
    } catch (e) {
      clear(outcome, errorBox(e, e?.details?.digest ? t('dig.failedKept', { id: e.details.digest }) : ''));
    }
    await list(0);
  }));
  list(0);
  return h('section', { id: 'cv-sec-digests', tabindex: '-1', 'aria-labelledby': 'h-cv-digests' },
    h('h3', { id: 'h-cv-digests' }, t('dig.title')),
    h('div', { class: 'row' }, btn), outcome, out);
}

// One run: when, trigger, outcome, lines and characters given, cut, its
// tool calls with what each did, and the link to History for the run's
// window (its calls' records carry actor digest).
function run(r, app) {
  const calls = r.toolCalls ?? [];
  const ok = r.status === 'ok';
  return h('li', { class: 'record digest-run', 'data-digest': r.id, 'data-status': r.status },
    h('div', {},
      h('strong', {}, `#${r.id}`), ' ',
      h('span', { class: `tag ${ok ? '' : 'sup'}` }, `${t('dig.outcome')}${t('colon')}${word('dig.status', r.status)}`), ' ',
      h('span', { class: 'meta' }, [
        fmtTime(r.startedAt),
        `${t('dig.trigger')}${t('colon')}${word('dig.trigger', r.trigger)}`,
        t('dig.given', { sent: r.sentLines ?? 0, lines: r.lines ?? 0, chars: r.chars ?? 0 }),
        r.cut ? t('dig.cut') : t('dig.notCut'),
        `${t('dig.calls')}${t('colon')}${calls.length}`,
      ].join(' · '))),
    recordedError(r.error), // worded from its code, the server's sentence marked
    calls.length ? h('ul', { class: 'list digest-calls' }, calls.map((c) => h('li', { 'data-tool': c.name, 'data-status': c.status },
      h('code', {}, c.name), ' ', h('span', { class: 'meta' }, `${word('hist.status', c.status)} · ${c.ms ?? 0} ms`), ' ',
      change(c.arguments), ' ', recordedError(c.error, { tag: 'span' })))) : null,
    calls.length ? h('button', { type: 'button', class: 'link digest-history', onclick: () => app.go('history', historyArg(r)) }, t('dig.history')) : null);
}

// What a call did, from its arguments: qq_memory's action, path and entry;
// another tool's arguments as they are, short.
function change(a) {
  let args = a;
  if (typeof args === 'string') { try { args = JSON.parse(args); } catch { /* shown as text */ } }
  if (args && typeof args === 'object' && !Array.isArray(args)) {
    const parts = [args.action, args.path, args.name ?? args.key ?? args.title, args.meaning].filter((x) => typeof x === 'string' && x);
    if (parts.length) return h('span', { class: 'digest-change' }, parts.join(' · '));
  }
  const text = typeof args === 'string' ? args : JSON.stringify(args ?? {});
  return h('span', { class: 'digest-change meta' }, text.length > 200 ? `${text.slice(0, 200)}…` : text);
}

// History's filter for a run: keyword "digest" (the actor) and the run's
// window, whole seconds around it (History's inputs take seconds).
function historyArg(r) {
  const from = Math.floor(new Date(r.startedAt).getTime() / 1000) * 1000;
  const to = Math.ceil(new Date(r.endedAt ?? r.startedAt).getTime() / 1000) * 1000;
  // the digest's own calls in this conversation in the run's window: not
  // a word search, so another conversation's run at the same time is out
  return `${qs({ actor: 'digest', conversation: r.conversation, from: new Date(from).toISOString(), to: new Date(to).toISOString() }).slice(1)}`;
}
