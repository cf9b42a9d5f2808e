// history.js — the History panel: records filtered by keywords and
// operation time; each shows operation, actor, conversation, status and
// a field-by-field diff of its before/after snapshots. Operations, actors,
// statuses and field names are shown in the page's language (the tool
// name stays beside the operation: it is what logs and MCP clients show).
// Its arg (#history/keywords=…&from=ISO&to=ISO, as the Conversations
// panel's digest runs link to it) fills the filter before the first search.
import { h, field, fmtTime, localToIso, isoToLocal, splitList } from './dom.js';
import { api, qs } from './api.js';
import { t, has } from './i18n.js';
import { load, empty, pager } from './ui.js';

const LIMIT = 20;

export function render(root, app, arg) {
  const kw = h('input', { type: 'search', id: 'h-keywords', placeholder: t('mem.keywordsHint') });
  const from = h('input', { type: 'datetime-local', id: 'h-from', step: 1 });
  const to = h('input', { type: 'datetime-local', id: 'h-to', step: 1 });
  if (arg) {
    const p = new URLSearchParams(arg);
    kw.value = p.get('keywords') ?? '';
    from.value = isoToLocal(p.get('from'));
    to.value = isoToLocal(p.get('to'));
  }
  const out = h('div', { id: 'history-list' });
  async function search(offset = 0) {
    const params = { keywords: splitList(kw.value.replace(/\s+/g, ',')), from: localToIso(from.value), to: localToIso(to.value), limit: LIMIT, offset };
    await load(out, () => api('GET', `history${qs(params)}`), (page) => [
      page.items.length ? h('ol', { class: 'list' }, page.items.map(record)) : empty(t('state.noMatch')),
      pager(page, offset, LIMIT, search)]);
  }
  root.append(h('section', { class: 'card', 'aria-labelledby': 'h-history' },
    h('h2', { id: 'h-history' }, t('tab.history')),
    h('form', { onsubmit: (e) => { e.preventDefault(); search(0); } },
      h('div', { class: 'row' }, field(t('mem.keywords'), kw), field(t('mem.from'), from), field(t('mem.to'), to),
        h('button', { type: 'submit', class: 'primary' }, t('action.search')))),
    out));
  search(0);
}

// a word of the page for key, or the identifier itself when it has none
const word = (prefix, id) => (has(`${prefix}.${id}`) ? t(`${prefix}.${id}`) : String(id));

function record(r) {
  const before = [].concat(r.before ?? []);
  const after = [].concat(r.after ?? []);
  const pairs = Math.max(before.length, after.length);
  const ok = r.status === 'ok';
  return h('li', { class: 'record', 'data-seq': r.seq },
    h('div', {}, h('strong', { class: 'op' }, word('op', r.operation)), ' ',
      h('code', { class: 'meta' }, r.operation), ' ',
      h('span', { class: `tag ${ok ? '' : 'sup'}` }, `${t('hist.status')}: ${word('hist.status', r.status)}`), ' ',
      h('span', { class: 'meta' }, `${fmtTime(r.at)} · ${t('hist.actor')}: ${word('hist.actor', r.actor)} · ${t('hist.conversation')}: ${r.conversation ?? t('hist.host')} · #${r.seq}`)),
    r.error ? h('div', { class: 'error' }, `${t('hist.error')}: `, typeof r.error === 'string' ? r.error : JSON.stringify(r.error)) : null,
    r.receipt ? receipt(r.receipt) : null,
    pairs ? Array.from({ length: pairs }, (_, i) => diff(before[i] ?? null, after[i] ?? null)) : null,
    h('details', {}, h('summary', {}, t('hist.arguments')), h('pre', {}, JSON.stringify(r.arguments, null, 2))));
}

// The important mark's receipt in words; any other receipt field by field.
function receipt(rc) {
  if (rc && rc.replacedId)
    return h('div', { class: 'notice receipt' }, t('hist.receiptReplaced', { title: rc.replacedTitle ?? '', id: rc.replacedId }));
  return h('div', { class: 'notice receipt' }, t('hist.receipt'), h('dl', {},
    Object.entries(rc || {}).map(([k, v]) => [h('dt', {}, word('field', k)), h('dd', {}, show(k, v))])));
}

// A value as text: times in local time, yes / no, lists joined.
function show(k, v) {
  if (v === undefined || v === null) return '—';
  if (typeof v === 'boolean') return v ? t('val.yes') : t('val.no');
  if (typeof v === 'string') return /At$/.test(k) ? fmtTime(v) : v;
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v.length ? v.join('、') : '—';
  return JSON.stringify(v);
}

// Only the fields that changed (for a create or a delete, those with a value).
function diff(b, a) {
  const keys = [...new Set([...Object.keys(b || {}), ...Object.keys(a || {})])]
    .filter((k) => JSON.stringify(b?.[k] ?? null) !== JSON.stringify(a?.[k] ?? null));
  const label = (a || b)?.title ?? (a || b)?.name ?? (a || b)?.id ?? (a || b)?.personId ?? '';
  return h('table', { class: 'diff-table' },
    h('caption', { class: 'meta' }, `${b ? (a ? t('hist.changed') : t('hist.removed')) : t('hist.added')}: `, String(label)),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, t('hist.field')), h('th', { scope: 'col' }, t('hist.before')), h('th', { scope: 'col' }, t('hist.after')))),
    h('tbody', {}, keys.map((k) => h('tr', { 'data-field': k }, h('th', { scope: 'row' }, word('field', k)),
      h('td', { class: 'del' }, b ? h('div', { class: 'text' }, show(k, b[k])) : '—'),
      h('td', { class: 'add' }, a ? h('div', { class: 'text' }, show(k, a[k])) : '—')))));
}
