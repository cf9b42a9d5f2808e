// synonyms.js — the Synonyms panel: the new-group box first, then the
// groups in file order, 20 to a page and numbered from 1, filtered by a
// term; edit, delete, and the local expansion of a typed word. Groups are addressed by
// their place in the file, so an edit or a delete also sends the group as
// shown ("expected"): if another tab or a hand edit changed it meanwhile
// the server answers 409 and the page reloads the groups.
import { h, clear, field, splitList } from './dom.js';
import { api, qs } from './api.js';
import { t } from './i18n.js';
import { load, empty, errorBox, busy, form, pager, fileWarning } from './ui.js';

const PAGE = 20;

export function render(root, app) {
  const list = h('div', { id: 'syn-list' });
  const word = h('input', { type: 'search', id: 's-word' });
  const preview = h('div', { id: 's-preview', 'aria-live': 'polite' });
  const add = h('input', { type: 'text', id: 's-add', placeholder: t('syn.termsHint') });
  const addMsg = h('div');
  const filter = h('input', { type: 'search', id: 's-filter' });
  let groups = [];
  let offset = 0; // the page of the (filtered) groups shown: PAGE at a time

  const draw = () => {
    const f = filter.value.trim().toLowerCase();
    const rows = groups.map((g, i) => [g, i]).filter(([g]) => !f || g.some((x) => x.toLowerCase().includes(f)));
    if (offset >= rows.length) offset = Math.max(0, Math.floor((rows.length - 1) / PAGE) * PAGE);
    const shown = rows.slice(offset, offset + PAGE);
    const page = { total: rows.length, nextOffset: offset + PAGE < rows.length ? offset + PAGE : null };
    return rows.length ? [h('table', {}, h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, '#'), h('th', { scope: 'col' }, t('syn.terms')), h('th', { scope: 'col' }, t('syn.actions')))),
      h('tbody', {}, shown.map(([g, i]) => groupRow(g, i, reload, app)))), pager(page, offset, PAGE, (at) => { offset = at; redraw(); })] : empty(t('state.noMatch'));
  };
  const redraw = () => { const tb = list.querySelector('#syn-table'); if (tb) clear(tb, draw()); };
  // note: why the list was reloaded (a group changed meanwhile)
  const reload = (note) => load(list, () => api('GET', 'synonyms'), (data) => {
    groups = data.groups || [];
    return [note ? h('div', { class: 'notice', role: 'alert', id: 'syn-note' }, note) : null,
      data.warning ? fileWarning('syn-warning', t('syn.fileWarning'), data.warning) : null, h('div', { id: 'syn-table' }, draw())];
  });
  filter.addEventListener('input', () => { offset = 0; redraw(); });
  // terms typed and not added are asked about before they are lost (main.js; issue 18)
  add.addEventListener('input', () => app.unsaved('synonyms/new', add.value.trim() ? add : null));

  async function expand() {
    if (!word.value.trim()) return clear(preview);
    await load(preview, () => api('GET', `synonyms/expand${qs({ word: word.value.trim() })}`), (r) =>
      h('div', {}, h('p', { class: 'meta' }, `${t('syn.normalized')}${t('colon')}`, r.normalized),
        (r.expansion || []).some((x) => x !== r.normalized) ? h('ul', { class: 'list', id: 's-expansion' }, r.expansion.map((x) => h('li', {}, x))) : empty(t('syn.noExpansion'))));
  }
  let timer = null;
  word.addEventListener('input', () => { clearTimeout(timer); timer = setTimeout(expand, 250); });

  root.append(h('div', { class: 'cols' },
    h('section', { class: 'card', 'aria-labelledby': 'h-syn' }, h('h2', { id: 'h-syn' }, t('tab.synonyms')),
      // the new group first (issue 18): the list below is long
      form({ id: 's-add-form' }, async () => {
        try {
          const terms = splitList(add.value);
          await api('POST', 'synonyms', { terms });
          app.status(t('syn.added'));
          add.value = '';
          app.unsaved('synonyms/new', null);
          clear(addMsg);
          filter.value = terms[0] || ''; // the new group, found where it went
          offset = 0;
          reload();
        } catch (err) { clear(addMsg, errorBox(err)); }
      }, h('div', { class: 'row' }, field(t('syn.add'), add), h('button', { type: 'submit', class: 'primary', id: 's-add-btn' }, t('action.add'))), addMsg),
      field(t('syn.filter'), filter), list),
    h('section', { class: 'card', 'aria-labelledby': 'h-preview' }, h('h2', { id: 'h-preview' }, t('syn.preview')),
      h('form', { onsubmit: (e) => { e.preventDefault(); expand(); } }, field(t('syn.word'), word)), preview)));
  reload();
}

function groupRow(g, i, reload, app) {
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
    h('button', { type: 'button', 'aria-label': t('syn.editN', { n: i + 1 }), onclick: () => {
      const input = h('input', { type: 'text', value: g.join(', '), 'aria-label': t('syn.terms') });
      // an edit not saved is asked about before it is lost (main.js; issue 18)
      input.addEventListener('input', () => app.unsaved(`synonyms/${i}`, input));
      input.addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); save.click(); } });
      const save = h('button', { type: 'button', class: 'primary', onclick: () => busy(save, async () => {
        try { await api('PUT', `synonyms/${i}`, { terms: splitList(input.value), expected: g }); reload(); } catch (err) { failed(err); }
      }) }, t('action.save'));
      clear(cell, input, msg);
      clear(actions, save, h('button', { type: 'button', onclick: () => { app.unsaved(`synonyms/${i}`, null); clear(cell, g.join('、')); normal(); } }, t('action.cancel')));
      input.focus();
    } }, t('action.edit')),
    del);
  const del = h('button', { type: 'button', class: 'danger', 'aria-label': t('syn.deleteN', { n: i + 1 }), onclick: () => {
    if (!window.confirm(t('syn.confirmDelete', { terms: g.join('、') }))) return;
    busy(del, async () => {
      try { await api('DELETE', `synonyms/${i}`, { expected: g }); reload(); } catch (err) { failed(err); }
    });
  } }, t('action.delete'));
  normal();
  // shown from 1; data-group is the API's index (synonyms/{n}, from 0)
  return h('tr', { 'data-group': i }, h('td', {}, String(i + 1)), cell, actions);
}
