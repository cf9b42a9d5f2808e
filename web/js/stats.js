// stats.js — the Stats panel (issue 18): the memories counted by kind,
// scope and tier, how many were created per day or week, the most and
// least recalled, the stale and the expired (GET stats, one SQL aggregate
// each on the server). The charts are small hand-drawn SVG; each has its
// numbers as text too (an aria-label and a table), so a screen reader and
// a narrow phone lose nothing. Every memory listed links to it.
import { h, clear, field, fmtTime } from './dom.js';
import { api, qs } from './api.js';
import { t, has } from './i18n.js';
import { load, empty, form as busyForm } from './ui.js';

const NS = 'http://www.w3.org/2000/svg';

// An SVG element (h() makes HTML ones); text only through text nodes.
function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) el.setAttribute(k, String(v));
  for (const c of children.flat()) if (c !== null && c !== undefined) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}

const kindName = (k) => (has(`kind.${k}`) ? t(`kind.${k}`) : k);
const scopeName = (k) => (k === 'global' ? t('mem.global') : k);
const tierName = (k) => (has(`st.tier.${k}`) ? t(`st.tier.${k}`) : k);

// A horizontal bar chart of [{label, count}] with the numbers as a table
// beside it; id on the figure.
function bars(id, title, rows) {
  const max = Math.max(1, ...rows.map((r) => r.count));
  const rowH = 22;
  const total = rows.reduce((a, r) => a + r.count, 0);
  const label = `${title}${t('st.colon')}${rows.map((r) => `${r.label} ${r.count}`).join(t('st.sep')) || t('st.nothing')}`;
  const chart = s('svg', { viewBox: `0 0 200 ${Math.max(1, rows.length) * rowH}`, width: '100%', height: Math.max(1, rows.length) * rowH, class: 'st-bars', role: 'img', 'aria-label': label, preserveAspectRatio: 'none' },
    rows.map((r, i) => s('rect', { x: 0, y: i * rowH + 4, height: rowH - 8, width: Math.max(1, (r.count / max) * 200), class: `st-bar st-c${i % 6}` })));
  return h('figure', { class: 'st-fig', id },
    h('figcaption', {}, title, ' ', h('span', { class: 'meta' }, t('st.totalN', { count: total }))),
    rows.length ? chart : null,
    rows.length ? h('table', { class: 'st-table' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, t('st.value')), h('th', { scope: 'col' }, t('st.count')))),
      h('tbody', {}, rows.map((r, i) => h('tr', {}, h('th', { scope: 'row' }, h('span', { class: `st-key st-c${i % 6}`, 'aria-hidden': 'true' }), r.label), h('td', {}, String(r.count)))))) : empty(t('st.nothing')));
}

// Created per day / week: a column chart, its numbers in a table that
// opens under it.
function growth(g) {
  const items = g.items || [];
  const max = Math.max(1, ...items.map((x) => x.count));
  const sum = items.reduce((a, x) => a + x.count, 0);
  const top = items.reduce((a, x) => (x.count > (a?.count ?? 0) ? x : a), null);
  const unit = g.bucket === 'week' ? 'week' : 'day';
  const w = 10;
  const label = t(`st.growthLabel.${unit}`, { n: items.length, count: sum, from: items[0]?.start ?? '', to: items[items.length - 1]?.start ?? '' })
    + (top ? t(`st.growthTop.${unit}`, { start: top.start, count: top.count }) : '');
  const chart = s('svg', { viewBox: `0 0 ${items.length * w} 60`, class: 'st-cols', role: 'img', 'aria-label': label, preserveAspectRatio: 'none' },
    items.map((x, i) => s('rect', { x: i * w + 1, width: w - 2, y: 60 - (x.count / max) * 58, height: (x.count / max) * 58, class: 'st-bar st-c0' },
      s('title', {}, `${x.start}: ${x.count}`))));
  return h('figure', { class: 'st-fig st-wide', id: 'st-growth' },
    h('figcaption', {}, t(`st.growth.${unit}`), ' ', h('span', { class: 'meta' }, t('st.totalN', { count: sum }))),
    chart,
    h('div', { class: 'st-axis meta', 'aria-hidden': 'true' }, h('span', {}, items[0]?.start ?? ''), h('span', {}, items[items.length - 1]?.start ?? '')),
    h('details', {}, h('summary', {}, t('st.table')),
      h('div', { class: 'scroll' }, h('table', { class: 'st-table' },
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, t(`st.start.${unit}`)), h('th', { scope: 'col' }, t('st.created')))),
        h('tbody', {}, items.map((x) => h('tr', {}, h('th', { scope: 'row' }, x.start), h('td', {}, String(x.count)))))))));
}

// A table of memories (mostRecalled, stale, …); cols picks the columns
// after the title.
function memories(id, items, cols, app) {
  if (!items.length) return empty(t('st.none'));
  const cell = {
    hits: (x) => String(x.hits),
    lastHitAt: (x) => (x.lastHitAt ? fmtTime(x.lastHitAt) : t('st.never')),
    updatedAt: (x) => fmtTime(x.updatedAt),
    expires: (x) => x.expires || '',
    where: (x) => `${kindName(x.kind)} · ${scopeName(x.scope)}`,
  };
  return h('div', { class: 'scroll' }, h('table', { id, class: 'st-list' },
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, t('field.title')), cols.map((c) => h('th', { scope: 'col' }, t(`st.col.${c}`))))),
    h('tbody', {}, items.map((x) => h('tr', { 'data-id': x.id },
      h('th', { scope: 'row' }, h('button', { type: 'button', class: 'link', onclick: () => app.go('memory', x.id) }, x.title || x.id), ' ', h('span', { class: 'meta' }, x.id)),
      cols.map((c) => h('td', {}, cell[c](x))))))));
}

function draw(data, app) {
  const totals = ['total', 'current', 'superseded', 'important', 'neverRecalled'];
  const section = (id, title, ...body) => h('section', { class: 'st-part', 'aria-labelledby': id }, h('h3', { id }, title), ...body);
  return h('div', {},
    h('dl', { class: 'st-totals', id: 'st-totals' }, totals.map((k) => h('div', { 'data-key': k }, h('dt', {}, t(`st.n.${k}`)), h('dd', {}, String(data[k]))))),
    h('div', { class: 'st-grid' },
      bars('st-kind', t('st.byKind'), data.byKind.map((x) => ({ label: kindName(x.kind), count: x.count }))),
      bars('st-scope', t('st.byScope'), data.byScope.map((x) => ({ label: scopeName(x.scope), count: x.count }))),
      bars('st-tier', t('st.byTier'), data.byTier.map((x) => ({ label: tierName(x.tier), count: x.count })))),
    growth(data.growth),
    section('h-st-most', t('st.most'), memories('st-most', data.mostRecalled, ['hits', 'lastHitAt', 'where'], app)),
    section('h-st-least', t('st.least'), h('p', { class: 'meta' }, t('st.leastHelp')), memories('st-least', data.leastRecalled, ['hits', 'lastHitAt', 'updatedAt'], app)),
    section('h-st-stale', t('st.stale', { days: data.stale.days, count: data.stale.count }),
      data.stale.count > data.stale.items.length ? h('p', { class: 'meta' }, t('st.firstN', { n: data.stale.items.length })) : null,
      memories('st-stale-list', data.stale.items, ['updatedAt', 'lastHitAt', 'where'], app)),
    section('h-st-expired', t('st.expired', { count: data.expired.count }),
      data.expired.count > data.expired.items.length ? h('p', { class: 'meta' }, t('st.firstN', { n: data.expired.items.length })) : null,
      memories('st-expired-list', data.expired.items, ['expires', 'updatedAt', 'where'], app)));
}

export function render(root, app) {
  const body = h('div', { id: 'st-body' });
  const bucket = h('select', { id: 'st-bucket' }, ['day', 'week'].map((b) => h('option', { value: b }, t(`st.bucket.${b}`))));
  const stale = h('input', { type: 'number', id: 'st-staleDays', min: 1, max: 3650, step: 1, value: 30, inputmode: 'numeric' });
  // the days go even when the box is blank (qs() drops empty values):
  // the server refuses an empty staleDays naming it, so a blank box is
  // never quietly 30; the refused box is marked and focused
  const show = () => load(body, async () => {
    stale.removeAttribute('aria-invalid');
    stale.removeAttribute('aria-describedby');
    const q = qs({ bucket: bucket.value });
    try {
      return await api('GET', `stats${q}${q ? '&' : '?'}staleDays=${encodeURIComponent(stale.value.trim())}`);
    } catch (e) {
      if (e.details?.field === 'staleDays') {
        stale.setAttribute('aria-invalid', 'true');
        stale.setAttribute('aria-describedby', 'st-body');
        stale.focus();
      }
      throw e;
    }
  }, (data) => draw(data, app));
  const controls = busyForm({ class: 'row', novalidate: true, 'aria-label': t('st.controls') }, show,
    field(t('st.bucket'), bucket), field(t('field.staleDays'), stale),
    h('button', { type: 'submit', id: 'st-go' }, t('st.refresh')));
  bucket.addEventListener('change', () => controls.requestSubmit());
  root.append(h('section', { class: 'card', 'aria-labelledby': 'h-stats' },
    h('h2', { id: 'h-stats' }, t('st.title')), h('p', { class: 'meta' }, t('st.help')), controls, body));
  show();
}
