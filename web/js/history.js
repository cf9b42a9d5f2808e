// history.js — the History panel: records filtered by keywords, time,
// operation, actor, conversation, status and target id, changes only by
// default (the page's own browsing is not recorded at all: issue 18; the
// model's reads are, and one click shows them). Each record shows
// operation, actor, conversation, status and a field-by-field diff of its
// before/after snapshots, in the page's language (the tool name stays
// beside the operation: it is what logs and MCP clients show). A keyword
// that names an operation in the page's words (合并, "merge") filters by
// that operation. Its arg (#history/keywords=…&from=ISO&to=ISO&targetId=…,
// as the Conversations panel's digest runs link to it) fills the filter
// before the first search.
import { h, clear, field, fmtTime, splitList } from './dom.js';
import { api, qs } from './api.js';
import { t, has, keysOf } from './i18n.js';
import { load, empty, pager, timeRange, errorBox, convLink, recordedError } from './ui.js';
import { revertControl } from './revert.js'; // History: revert a change (issue 18)

const LIMIT = 20;
const ACTORS = ['model', 'ui', 'cli', 'digest'];

// The operations whose name in the page's words holds word (case folded),
// as tool names.
function opsNamed(word) {
  const w = word.toLocaleLowerCase();
  return keysOf('op.').filter((k) => t(k).toLocaleLowerCase().includes(w)).map((k) => k.slice(3));
}

const select = (id, label, options, value) => field(label, h('select', { id },
  options.map(([v, text]) => h('option', { value: v, selected: v === value }, text))));

export function render(root, app, arg) {
  const p = new URLSearchParams(arg || '');
  const kw = h('input', { type: 'search', id: 'h-keywords', placeholder: t('mem.keywordsHint'), value: p.get('keywords') ?? '' });
  const when = timeRange('h', () => search(0));
  when.set(p.get('from'), p.get('to'));
  const op = select('h-op', t('hist.operation'), [['', t('hist.anyOp')], ...keysOf('op.').map((k) => [k.slice(3), t(k)])], p.get('operation') ?? '');
  const actor = select('h-actor', t('hist.actor'), [['', t('hist.anyActor')], ...ACTORS.map((a) => [a, t(`hist.actor.${a}`)])], p.get('actor') ?? '');
  // a conversation key, or 后台 / operator (host) for the operator's own
  const convSel = h('input', { type: 'search', id: 'h-conv', list: 'h-conv-keys', placeholder: t('hist.convHint'), value: p.get('conversation') === 'host' ? t('hist.host') : p.get('conversation') ?? '' });
  const convKeys = h('datalist', { id: 'h-conv-keys' }, h('option', { value: t('hist.host') }));
  const status = select('h-status', t('hist.status'), [['', t('hist.anyStatus')], ['ok', t('hist.status.ok')], ['error', t('hist.status.error')]], p.get('status') ?? '');
  const target = h('input', { type: 'search', id: 'h-target', placeholder: t('hist.targetHint'), value: p.get('targetId') ?? '' });
  const changes = h('input', { type: 'checkbox', id: 'h-changes', checked: p.get('changesOnly') !== 'false' });
  const matched = h('p', { class: 'meta', id: 'h-ops-matched', 'aria-live': 'polite' });
  const out = h('div', { id: 'history-list' });
  api('GET', 'conversations').then((d) => convKeys.append(...(d.items || []).map((c) => h('option', { value: c.key })))).catch(() => {});
  const value = (wrap) => wrap.querySelector('select').value;
  const conversation = () => {
    const v = convSel.value.trim();
    return v === t('hist.host') || v.toLowerCase() === 'host' ? 'host' : v;
  };

  async function search(offset = 0) {
    // keywords that name operations become the operation filter
    const words = splitList(kw.value.replace(/\s+/g, ','));
    const ops = new Set(value(op) ? [value(op)] : []);
    const named = [];
    const rest = [];
    for (const w of words) {
      const found = opsNamed(w);
      if (found.length) { found.forEach((o) => ops.add(o)); named.push(...found); } else rest.push(w);
    }
    matched.textContent = named.length ? t('hist.opsMatched', { ops: [...new Set(named)].map((o) => t(`op.${o}`)).join('、') }) : '';
    let range;
    try { range = when.range(); } catch (e) { clear(out, errorBox(e)); return; }
    const params = { keywords: rest, from: range.from, to: range.to, operations: [...ops],
      actor: value(actor), conversation: conversation(), status: value(status), targetId: target.value.trim(),
      changesOnly: changes.checked ? 'true' : '', limit: LIMIT, offset };
    await load(out, () => api('GET', `history${qs(params)}`), (page) => [
      page.items.length ? h('ol', { class: 'list' }, page.items.map((r) => record(r, app, () => search(offset)))) : empty(t('state.noMatch')),
      pager(page, offset, LIMIT, search)]);
  }
  root.append(h('section', { class: 'card', 'aria-labelledby': 'h-history' },
    h('h2', { id: 'h-history' }, t('tab.history')),
    h('form', { onsubmit: (e) => { e.preventDefault(); search(0); } },
      h('div', { class: 'row' }, field(t('mem.keywords'), kw)), when.el,
      h('div', { class: 'row' }, op, actor, field(t('hist.conversation'), convSel), convKeys, status, field(t('hist.target'), target)),
      h('div', { class: 'row' }, h('label', { for: 'h-changes' }, changes, ' ', t('hist.changesOnly')),
        h('button', { type: 'submit', class: 'primary' }, t('action.search'))),
      matched),
    out));
  // the filters apply as they change; the text boxes on submit
  for (const el of [op, actor, status].map((w) => w.querySelector('select')).concat([changes]))
    el.addEventListener('change', () => search(0));
  search(0);
}

// a word of the page for key, or the identifier itself when it has none
const word = (prefix, id) => (has(`${prefix}.${id}`) ? t(`${prefix}.${id}`) : String(id));

function record(r, app, again) {
  const before = [].concat(r.before ?? []);
  const after = [].concat(r.after ?? []);
  const pairs = Math.max(before.length, after.length);
  const ok = r.status === 'ok';
  return h('li', { class: 'record', 'data-seq': r.seq },
    h('div', {}, h('strong', { class: 'op' }, word('op', r.operation)), ' ',
      h('code', { class: 'meta' }, r.operation), ' ',
      h('span', { class: `tag ${ok ? '' : 'sup'}` }, `${t('hist.status')}${t('colon')}${word('hist.status', r.status)}`), ' ',
      h('span', { class: 'meta' }, `${fmtTime(r.at)} · ${t('hist.actor')}${t('colon')}${word('hist.actor', r.actor)} · ${t('hist.conversation')}${t('colon')}`,
        r.conversation ? convLink(app, r.conversation) : t('hist.host'), ` · #${r.seq}`)),
    // the recorded message is the server's English (issue 18 review): said so, marked
    recordedError(r.error, { cls: 'error hist-error' }),
    r.receipt ? receipt(r.receipt) : null,
    pairs ? Array.from({ length: pairs }, (_, i) => diff(before[i] ?? null, after[i] ?? null)) : null,
    h('details', {}, h('summary', {}, t('hist.arguments')), h('pre', {}, JSON.stringify(r.arguments, null, 2))),
    revertControl(r, app, again));
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

// What a create or a delete leaves out: fields at their internal default
// (issue 18: 层 hot, 其他属性 {} said nothing to the operator).
const QUIET = { tier: 'hot', attrs: {}, hits: 0, pinned: false, kind: 'memory', lastHitAt: null, archiveMonth: null,
  section: null, confidence: null, date: null, expires: null, mergedFrom: null, mergedReason: null,
  supersededBy: null, supersededReason: null, sourceMessage: null, parentId: null };
const quiet = (k, v) => k in QUIET && JSON.stringify(v ?? null) === JSON.stringify(QUIET[k]);

// Only the fields that changed (for a create or a delete, those with a
// value other than their default).
function diff(b, a) {
  const keys = [...new Set([...Object.keys(b || {}), ...Object.keys(a || {})])]
    .filter((k) => JSON.stringify(b?.[k] ?? null) !== JSON.stringify(a?.[k] ?? null))
    .filter((k) => (b && a) || !quiet(k, (a || b)[k]));
  const label = (a || b)?.title ?? (a || b)?.name ?? (a || b)?.id ?? (a || b)?.personId ?? '';
  return h('table', { class: 'diff-table' },
    h('caption', { class: 'meta' }, `${b ? (a ? t('hist.changed') : t('hist.removed')) : t('hist.added')}${t('colon')}`, String(label)),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, t('hist.field')), h('th', { scope: 'col' }, t('hist.before')), h('th', { scope: 'col' }, t('hist.after')))),
    h('tbody', {}, keys.map((k) => h('tr', { 'data-field': k }, h('th', { scope: 'row' }, word('field', k)),
      h('td', { class: 'del' }, b ? h('div', { class: 'text' }, show(k, b[k])) : '—'),
      h('td', { class: 'add' }, a ? h('div', { class: 'text' }, show(k, a[k])) : '—')))));
}
