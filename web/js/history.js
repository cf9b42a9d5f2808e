// history.js — the History panel: records filtered by keywords and
// operation time; each shows operation, actor, conversation, status and
// a field-by-field diff of its before/after snapshots.
import { h, field, fmtTime, localToIso, splitList } from './dom.js';
import { api, qs } from './api.js';
import { t } from './i18n.js';
import { load, empty, pager } from './ui.js';

const LIMIT = 20;

export function render(root) {
  const kw = h('input', { type: 'search', id: 'h-keywords', placeholder: t('mem.keywordsHint') });
  const from = h('input', { type: 'datetime-local', id: 'h-from' });
  const to = h('input', { type: 'datetime-local', id: 'h-to' });
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

function record(r) {
  const before = [].concat(r.before ?? []);
  const after = [].concat(r.after ?? []);
  const pairs = Math.max(before.length, after.length);
  return h('li', { class: 'record' },
    h('div', {}, h('strong', {}, r.operation), ' ',
      h('span', { class: `tag ${r.status === 'ok' ? '' : 'sup'}` }, `${t('hist.status')}: ${r.status}`), ' ',
      h('span', { class: 'meta' }, `${fmtTime(r.at)} · ${t('hist.actor')}: ${r.actor} · ${t('hist.conversation')}: ${r.conversation ?? t('hist.host')} · #${r.seq}`)),
    r.error ? h('div', { class: 'error' }, typeof r.error === 'string' ? r.error : JSON.stringify(r.error)) : null,
    r.receipt ? h('div', { class: 'notice' }, JSON.stringify(r.receipt, null, 1)) : null,
    pairs ? Array.from({ length: pairs }, (_, i) => diff(before[i] ?? null, after[i] ?? null)) : null,
    h('details', {}, h('summary', {}, t('hist.arguments')), h('pre', {}, JSON.stringify(r.arguments, null, 2))));
}

const show = (v) => (v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v));

// Only the fields that changed (all of them for a create or a delete).
function diff(b, a) {
  const keys = [...new Set([...Object.keys(b || {}), ...Object.keys(a || {})])]
    .filter((k) => show(b?.[k]) !== show(a?.[k]));
  const label = (a || b)?.title ?? (a || b)?.name ?? (a || b)?.id ?? (a || b)?.personId ?? '';
  return h('table', { class: 'diff-table' },
    h('caption', { class: 'meta' }, `${b ? (a ? t('hist.changed') : t('hist.removed')) : t('hist.added')}: `, String(label)),
    h('thead', {}, h('tr', {}, h('th', {}, t('hist.field')), h('th', {}, t('hist.before')), h('th', {}, t('hist.after')))),
    h('tbody', {}, keys.map((k) => h('tr', {}, h('th', {}, k),
      h('td', { class: 'del' }, b ? h('div', { class: 'text' }, show(b[k])) : '—'),
      h('td', { class: 'add' }, a ? h('div', { class: 'text' }, show(a[k])) : '—')))));
}
