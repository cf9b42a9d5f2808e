// synonyms.js — the Synonyms panel: the groups in file order, add, edit,
// delete, and the local expansion of a typed word.
import { h, clear, field, splitList } from './dom.js';
import { api, qs } from './api.js';
import { t } from './i18n.js';
import { load, empty, errorBox } from './ui.js';

export function render(root, app) {
  const list = h('div', { id: 'syn-list' });
  const word = h('input', { type: 'search', id: 's-word' });
  const preview = h('div', { id: 's-preview', 'aria-live': 'polite' });
  const add = h('input', { type: 'text', id: 's-add', placeholder: t('syn.termsHint') });
  const addMsg = h('div');
  const filter = h('input', { type: 'search', id: 's-filter' });
  let groups = [];

  const draw = () => {
    const f = filter.value.trim().toLowerCase();
    const rows = groups.map((g, i) => [g, i]).filter(([g]) => !f || g.some((x) => x.toLowerCase().includes(f)));
    return rows.length ? h('table', {}, h('thead', {}, h('tr', {}, h('th', {}, '#'), h('th', {}, t('syn.terms')), h('th', {}, ''))),
      h('tbody', {}, rows.map(([g, i]) => groupRow(g, i, reload)))) : empty(t('state.noMatch'));
  };
  const reload = () => load(list, () => api('GET', 'synonyms'), (data) => {
    groups = data.groups || [];
    return [data.warning ? h('div', { class: 'notice' }, data.warning) : null, h('div', { id: 'syn-table' }, draw())];
  });
  filter.addEventListener('input', () => { const tb = list.querySelector('#syn-table'); if (tb) clear(tb, draw()); });

  async function expand() {
    if (!word.value.trim()) return clear(preview);
    await load(preview, () => api('GET', `synonyms/expand${qs({ word: word.value.trim() })}`), (r) =>
      h('div', {}, h('p', { class: 'meta' }, `${t('syn.normalized')}: `, r.normalized),
        (r.expansion || []).some((x) => x !== r.normalized) ? h('ul', { class: 'list', id: 's-expansion' }, r.expansion.map((x) => h('li', {}, x))) : empty(t('syn.noExpansion'))));
  }
  let timer = null;
  word.addEventListener('input', () => { clearTimeout(timer); timer = setTimeout(expand, 250); });

  root.append(h('div', { class: 'cols' },
    h('section', { class: 'card', 'aria-labelledby': 'h-syn' }, h('h2', { id: 'h-syn' }, t('tab.synonyms')),
      field(t('syn.filter'), filter), list,
      h('form', { onsubmit: async (e) => {
        e.preventDefault();
        try {
          await api('POST', 'synonyms', { terms: splitList(add.value) });
          app.status(t('syn.added'));
          add.value = '';
          clear(addMsg);
          reload();
        } catch (err) { clear(addMsg, errorBox(err)); }
      } }, h('div', { class: 'row' }, field(t('syn.add'), add), h('button', { type: 'submit', class: 'primary', id: 's-add-btn' }, t('action.add'))), addMsg)),
    h('section', { class: 'card', 'aria-labelledby': 'h-preview' }, h('h2', { id: 'h-preview' }, t('syn.preview')),
      h('form', { onsubmit: (e) => { e.preventDefault(); expand(); } }, field(t('syn.word'), word)), preview)));
  reload();
}

function groupRow(g, i, reload) {
  const cell = h('td', {}, g.join('、'));
  const msg = h('div');
  const actions = h('td', {});
  const normal = () => clear(actions,
    h('button', { type: 'button', 'aria-label': t('syn.editN', { n: i }), onclick: () => {
      const input = h('input', { type: 'text', value: g.join(', '), 'aria-label': t('syn.terms') });
      clear(cell, input, msg);
      clear(actions, h('button', { type: 'button', class: 'primary', onclick: async () => {
        try { await api('PUT', `synonyms/${i}`, { terms: splitList(input.value) }); reload(); } catch (err) { clear(msg, errorBox(err)); }
      } }, t('action.save')), h('button', { type: 'button', onclick: () => { clear(cell, g.join('、')); normal(); } }, t('action.cancel')));
      input.focus();
    } }, t('action.edit')),
    h('button', { type: 'button', class: 'danger', 'aria-label': t('syn.deleteN', { n: i }), onclick: async () => {
      if (!window.confirm(t('syn.confirmDelete', { terms: g.join('、') }))) return;
      try { await api('DELETE', `synonyms/${i}`); reload(); } catch (err) { clear(msg, errorBox(err)); cell.append(msg); }
    } }, t('action.delete')));
  normal();
  return h('tr', { 'data-group': i }, h('td', {}, String(i)), cell, actions);
}
