// ui.js — pieces the panels share: loading / error / empty states, a
// pager, a memory picker (search and choose a node).
import { h, clear, field } from './dom.js';
import { api, qs } from './api.js';
import { t } from './i18n.js';

export function loading(el) {
  return clear(el, h('p', { class: 'loading', role: 'status' }, t('state.loading')));
}

export function errorBox(e, hint) {
  return h('div', { class: 'error', role: 'alert' },
    `${t('state.error')}${e && e.status ? ` (${e.status}${e.code ? ` ${e.code}` : ''})` : ''}: `,
    e && e.message ? e.message : String(e), hint ? `\n${hint}` : '');
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

// { total, nextOffset } from a page; onPage(offset)
export function pager(page, offset, limit, onPage) {
  const total = page.total ?? 0;
  return h('div', { class: 'pager' },
    h('button', { type: 'button', disabled: offset <= 0, onclick: () => onPage(Math.max(0, offset - limit)) }, t('page.prev')),
    h('span', { class: 'meta' }, t('page.of', { from: total ? offset + 1 : 0, to: Math.min(offset + limit, total), total })),
    h('button', { type: 'button', disabled: page.nextOffset == null, onclick: () => onPage(page.nextOffset) }, t('page.next')));
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
