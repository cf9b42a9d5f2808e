// ui.js — pieces the panels share: loading / error / empty states, a
// pager, a memory picker (search and choose a node), the busy state of a
// form or button while its request runs, and revealing a detail pane.
import { h, clear, field } from './dom.js';
import { api, qs } from './api.js';
import { t, has } from './i18n.js';

export function loading(el) {
  return clear(el, h('p', { class: 'loading', role: 'status' }, t('state.loading')));
}

// The error in the page's words (issue 18): what its code means and, when
// the details name a field (docs/API.md "Errors"), which field and why;
// then the server's own message, marked as such (it is English). A wrong
// token and the network have words of their own. Showing an error clears
// the status line: one line at a time.
export function errorBox(e, hint) {
  clearStatus();
  const known = e?.status === 401 ? t('state.unauthorized') : e?.code === 'network' ? t('state.network') : '';
  const words = known || explain(e);
  const server = e && e.message ? e.message : String(e);
  return h('div', { class: 'error', role: 'alert' },
    `${t('state.error')}${e && e.status ? ` (${e.status}${e.code ? ` ${e.code}` : ''})` : ''}${t('colon')}`,
    words || server,
    words && !known && server ? h('span', { class: 'server-says' }, `\n${t('err.server')}${t('colon')}`, h('span', { lang: 'en' }, server)) : null,
    hint ? `\n${hint}` : '');
}

// The code's and the field's meaning in the page's words, or ''.
export function explain(e) {
  const d = e?.details || {};
  const code = e?.code && has(`err.code.${e.code}`) ? t(`err.code.${e.code}`) : '';
  if (!d.field) return code;
  const name = d.field.replace(/\[\d+\]/g, '').split('.').pop();
  const fieldName = has(`field.${name}`) ? t(`field.${name}`) : d.field;
  const why = has(`err.why.${d.reason}`) ? t(`err.why.${d.reason}`) : t('err.why.invalid');
  return `${code ? `${code}${t('err.sep')}` : ''}${t('err.field', { field: fieldName, why })}`;
}

function clearStatus() {
  const s = document.getElementById('status');
  if (s && s.textContent) { s.textContent = ''; s.className = ''; }
}

export function empty(text) {
  return h('p', { class: 'empty' }, text || t('state.empty'));
}

// Loads data into el: a loading line first, then render(data) or the error.
// hint(e) may add a line to the error (e.g. what a 404 means there).
export async function load(el, fetcher, render, hint) {
  loading(el);
  let data;
  try {
    data = await fetcher();
  } catch (e) {
    clear(el, errorBox(e, hint ? hint(e) : ''));
    return;
  }
  clear(el, render(data));
}

// { total, nextOffset } from a page; onPage(offset). Nothing when there
// is nothing to page through (the empty state says so).
export function pager(page, offset, limit, onPage) {
  const total = page.total ?? 0;
  if (!total && !offset) return null;
  return h('div', { class: 'pager' },
    h('button', { type: 'button', disabled: offset <= 0, onclick: () => onPage(Math.max(0, offset - limit)) }, t('page.prev')),
    h('span', { class: 'meta' }, t('page.of', { from: Math.min(offset + 1, total), to: Math.min(offset + limit, total), total })),
    h('button', { type: 'button', disabled: page.nextOffset == null, onclick: () => onPage(page.nextOffset) }, t('page.next')));
}

// Runs fn() for el (a form or a button) once at a time: while it runs el
// is aria-busy and its buttons are disabled, so a double click or a second
// Enter sends one request. Focus goes back to the button it was on.
export async function busy(el, fn) {
  if (el.getAttribute('aria-busy') === 'true') return undefined;
  const buttons = el.tagName === 'FORM' ? [...el.querySelectorAll('button')] : [el];
  const was = buttons.map((b) => b.disabled);
  const focused = buttons.find((b) => b === document.activeElement);
  el.setAttribute('aria-busy', 'true');
  buttons.forEach((b) => { b.disabled = true; });
  try {
    return await fn();
  } finally {
    el.removeAttribute('aria-busy');
    buttons.forEach((b, i) => { b.disabled = was[i]; });
    if (focused?.isConnected && (document.activeElement === document.body || !document.activeElement)) focused.focus();
  }
}

// A form whose submit runs fn(form) under busy().
export function form(attrs, fn, ...children) {
  return h('form', { ...attrs, onsubmit: (e) => { e.preventDefault(); busy(e.currentTarget, () => fn(e.currentTarget)); } }, ...children);
}

// The from / to filter of a list: each a date box (#<id>-from, #<id>-to)
// and an optional time box beside it (#<id>-from-time, …), and the
// shortcuts 今天 / 昨天 / 最近 7 天. A date alone means that whole local
// day (from its first to its last millisecond); a time without its date
// is a problem to show, never ignored. onPick() runs after a shortcut.
// → { el, range(): { from, to } (ISO, '' for none) or throws an Error
// naming the box, set(fromIso, toIso) }.
export function timeRange(id, onPick) {
  const box = (which) => {
    const date = h('input', { type: 'date', id: `${id}-${which}` });
    const time = h('input', { type: 'time', id: `${id}-${which}-time`, step: 1, 'aria-label': t(`range.${which}Time`) });
    return { date, time };
  };
  const from = box('from');
  const to = box('to');
  // the time boxes only on request: each is five Tab stops (issue 18)
  const withTime = h('input', { type: 'checkbox', id: `${id}-with-time` });
  const times = [from.time, to.time];
  const showTimes = () => times.forEach((x) => { x.hidden = !withTime.checked; if (!withTime.checked) x.value = ''; });
  withTime.addEventListener('change', showTimes);
  const ymd = (d) => `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
  const daysAgo = (n) => { const d = new Date(); d.setDate(d.getDate() - n); return ymd(d); };
  const pick = (a, b) => {
    from.date.value = daysAgo(a); from.time.value = '';
    to.date.value = daysAgo(b); to.time.value = '';
    onPick?.();
  };
  const iso = (b, end, label) => {
    if (!b.date.value) {
      if (b.time.value) throw new Error(t('range.noDate', { field: label }));
      return '';
    }
    const [y, m, d] = b.date.value.split('-').map(Number);
    const [hh, mm, ss] = b.time.value ? b.time.value.split(':').map(Number) : (end ? [23, 59, 59] : [0, 0, 0]);
    const at = new Date(y, m - 1, d, hh, mm, ss || 0, end ? 999 : 0);
    if (Number.isNaN(at.getTime())) throw new Error(t('range.bad', { field: label }));
    return at.toISOString();
  };
  const el = h('div', { class: 'row range' },
    field(t('mem.from'), from.date), from.time,
    field(t('mem.to'), to.date), to.time,
    h('label', { for: withTime.id }, withTime, ' ', t('range.withTime')),
    h('div', { class: 'shortcuts', role: 'group', 'aria-label': t('range.shortcuts') },
      h('button', { type: 'button', id: `${id}-today`, onclick: () => pick(0, 0) }, t('range.today')),
      h('button', { type: 'button', id: `${id}-yesterday`, onclick: () => pick(1, 1) }, t('range.yesterday')),
      h('button', { type: 'button', id: `${id}-week`, onclick: () => pick(6, 0) }, t('range.week'))));
  const setBox = (b, v) => {
    const d = new Date(v || '');
    if (!v || Number.isNaN(d.getTime())) { b.date.value = ''; b.time.value = ''; return; }
    const p = (n) => String(n).padStart(2, '0');
    b.date.value = ymd(d);
    b.time.value = `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
    withTime.checked = true; // an exact time given: shown
  };
  showTimes();
  return {
    el,
    range: () => ({ from: iso(from, false, t('mem.from')), to: iso(to, true, t('mem.to')) }),
    set(f, tt) { setBox(from, f); setBox(to, tt); showTimes(); },
  };
}

// A list of links as one Tab stop (issue 18: twenty results were twenty
// Tab presses before the tree): the first link (or the last focused) is
// in the Tab order, Up / Down / Home / End move between them. → ul.
export function roving(ul) {
  const links = () => [...ul.querySelectorAll(':scope > li > button.link')];
  links().forEach((b, i) => { b.tabIndex = i === 0 ? 0 : -1; });
  ul.addEventListener('focusin', (e) => {
    if (!links().includes(e.target)) return;
    for (const b of links()) b.tabIndex = b === e.target ? 0 : -1;
  });
  ul.addEventListener('keydown', (e) => {
    const all = links();
    const i = all.indexOf(document.activeElement);
    if (i < 0) return;
    const to = { ArrowDown: all[i + 1], ArrowUp: all[i - 1], Home: all[0], End: all[all.length - 1] }[e.key];
    if (!to) return;
    e.preventDefault();
    to.focus();
  });
  return ul;
}

// Focuses el (a pane with tabindex=-1) and scrolls it into view when its
// top is not on screen: on a phone the detail sits below the list that
// opened it.
export function reveal(el) {
  if (!el.isConnected) return;
  el.focus({ preventScroll: true });
  const top = el.getBoundingClientRect().top;
  if (top < 0 || top > window.innerHeight * 0.5) el.scrollIntoView({ block: 'start' });
}

// A search box that lists memories to choose from; onPick(node) (or
// onPick(null) for "no parent / root" when allowRoot).
export function picker(onPick, { allowRoot = false, label } = {}) {
  const input = h('input', { type: 'search', placeholder: t('pick.placeholder') });
  const out = h('div');
  async function search() {
    const kw = input.value.trim().split(/[\s,，]+/).filter(Boolean);
    await load(out, () => api('GET', `nodes${qs({ keywords: kw, limit: 10, includeSuperseded: 'true' })}`), (page) =>
      page.items.length ? h('ul', { class: 'list' }, page.items.map((n) => h('li', {},
        h('button', { type: 'button', class: 'link', onclick: () => { clear(out); onPick(n); } }, n.title),
        ' ', h('span', { class: 'meta' }, n.id)))) : empty(t('state.noMatch')));
  }
  input.addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); search(); } });
  return h('div', { class: 'picker' },
    h('div', { class: 'row' }, field(label || t('pick.label'), input),
      h('button', { type: 'button', onclick: search }, t('action.find')),
      allowRoot ? h('button', { type: 'button', onclick: () => { clear(out); onPick(null); } }, t('pick.root')) : null),
    out);
}

// ---- the per-conversation page (issue 18) ---------------------------------
// A conversation key as a link to its page (#conversations/<key>), for
// any panel that shows one; text: what to show, the key by default.
export function convLink(app, key, text) {
  return h('button', { type: 'button', class: 'link conv-link', 'data-conversation': key,
    onclick: () => app.go('conversations', key) }, text ?? key);
}

// issue 18 review: a file's warning the server sends with a listing
// (config.json, synonyms.json edited by hand and broken) in the page's
// words, the server's own sentence after it, marked as the server's.
export function fileWarning(id, words, server) {
  return h('div', { class: 'notice', role: 'status', id }, words,
    h('span', { class: 'server-says' }, `\n${t('err.server')}${t('colon')}`, h('span', { lang: 'en' }, server)));
}

// minor findings of the issue 18 review (s23-minor18): an error a record
// kept (a turn's, a digest run's, a call's, History's): {code, message,
// details} is worded from its code and field (explain) with the server's
// sentence after it, marked; a bare message (no code kept) is introduced
// as what the server said then, marked lang=en. lead: the words before it.
export function recordedError(err, { lead = t('hist.error'), tag = 'div', cls = 'error' } = {}) {
  if (!err) return null;
  const server = typeof err === 'string' ? err : (err.message ?? JSON.stringify(err));
  const words = typeof err === 'object' ? explain(err) : '';
  if (!words) return h(tag, { class: cls }, t('hist.errorSaid'), h('span', { lang: 'en' }, server));
  return h(tag, { class: cls }, `${lead}${t('err.sep')}${words}`,
    server ? h('span', { class: 'server-says' }, `\n${t('err.server')}${t('colon')}`, h('span', { lang: 'en' }, server)) : null);
}
