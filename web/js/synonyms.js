// synonyms.js — the Synonyms panel: the groups in file order, add, edit,
// delete, and the local expansion of a typed word. Groups are addressed by
// their place in the file, so an edit or a delete also sends the group as
// shown ("expected"): if another tab or a hand edit changed it meanwhile
// the server answers 409 and the page reloads the groups.
import { h, clear, field, splitList } from './dom.js';
import { api, qs } from './api.js';
import { t } from './i18n.js';
import { load, empty, errorBox, busy, form } from './ui.js';

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
  // note: why the list was reloaded (a group changed meanwhile)
  const reload = (note) => load(list, () => api('GET', 'synonyms'), (data) => {
    groups = data.groups || [];
    return [note ? h('div', { class: 'notice', role: 'alert', id: 'syn-note' }, note) : null,
      data.warning ? h('div', { class: 'notice' }, data.warning) : null, h('div', { id: 'syn-table' }, draw())];
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
      form({}, async () => {
        try {
          await api('POST', 'synonyms', { terms: splitList(add.value) });
          app.status(t('syn.added'));
          add.value = '';
          clear(addMsg);
          reload();
        } catch (err) { clear(addMsg, errorBox(err)); }
      }, h('div', { class: 'row' }, field(t('syn.add'), add), h('button', { type: 'submit', class: 'primary', id: 's-add-btn' }, t('action.add'))), addMsg)),
    h('section', { class: 'card', 'aria-labelledby': 'h-preview' }, h('h2', { id: 'h-preview' }, t('syn.preview')),
      h('form', { onsubmit: (e) => { e.preventDefault(); expand(); } }, field(t('syn.word'), word)), preview)));
  reload();
}

function groupRow(g, i, reload) {
  const cell = h('td', {}, g.join('、'));
  const msg = h('div');
  const actions = h('td', {});
  // a 409: the group is not the one shown any more; show the list as it is
  const failed = (err) => {
    if (err.code === 'conflict' && err.details?.reason === 'group_changed') {
      reload(t('syn.changed', { terms: g.join('、') }));
      return;
    }
    clear(msg, errorBox(err));
    if (!msg.isConnected) cell.append(msg);
  };
  const normal = () => clear(actions,
    h('button', { type: 'button', 'aria-label': t('syn.editN', { n: i }), onclick: () => {
      const input = h('input', { type: 'text', value: g.join(', '), 'aria-label': t('syn.terms') });
      input.addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); save.click(); } });
      const save = h('button', { type: 'button', class: 'primary', onclick: () => busy(save, async () => {
        try { await api('PUT', `synonyms/${i}`, { terms: splitList(input.value), expected: g }); reload(); } catch (err) { failed(err); }
      }) }, t('action.save'));
      clear(cell, input, msg);
      clear(actions, save, h('button', { type: 'button', onclick: () => { clear(cell, g.join('、')); normal(); } }, t('action.cancel')));
      input.focus();
    } }, t('action.edit')),
    del);
  const del = h('button', { type: 'button', class: 'danger', 'aria-label': t('syn.deleteN', { n: i }), onclick: () => {
    if (!window.confirm(t('syn.confirmDelete', { terms: g.join('、') }))) return;
    busy(del, async () => {
      try { await api('DELETE', `synonyms/${i}`, { expected: g }); reload(); } catch (err) { failed(err); }
    });
  } }, t('action.delete'));
  normal();
  return h('tr', { 'data-group': i }, h('td', {}, String(i)), cell, actions);
}
