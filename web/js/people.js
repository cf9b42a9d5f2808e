// people.js — the People panel: search, create, edit (affinity −100…100,
// aliases, relationship, reason), delete, and a link to a memory node.
// #people/<personId> opens that person (the Memory panel links here when
// a person's link keeps a memory from being deleted). Only the person
// opened last is drawn: an answer for one opened before it is dropped
// (gen counts the openings, from the address, the list or "new").
import { h, clear, field, fmtTime, splitList } from './dom.js';
import { api, qs } from './api.js';
import { t } from './i18n.js';
import { load, empty, pager, picker, errorBox, busy, form, reveal, loading } from './ui.js';
// the per-person page (issue 18): linked node, memories, messages
import { about } from './person.js';

const LIMIT = 20;

export function render(root, app, arg) {
  const kw = h('input', { type: 'search', id: 'p-keywords', placeholder: t('mem.keywordsHint') });
  // sorting (issue 18): by the latest change, or by affinity either way
  const sort = h('select', { id: 'p-sort' }, ['updated', 'affinity', 'affinityLow'].map((o) => h('option', { value: o }, t(`ppl.sort.${o}`))));
  sort.addEventListener('change', () => search(0));
  const list = h('div', { id: 'people-list' });
  const editor = h('div', { id: 'person-editor', tabindex: '-1' });
  const more = h('div', { id: 'person-more' }); // person.js, under the record
  let offset = 0;
  let gen = 0;
  async function search(at = 0) {
    offset = at;
    await load(list, () => api('GET', `people${qs({ keywords: splitList(kw.value.replace(/\s+/g, ',')), limit: LIMIT, offset: at, sort: sort.value })}`), (page) => [
      page.items.length ? h('ul', { class: 'list' }, page.items.map((p) => h('li', {},
        h('button', { type: 'button', class: 'link', onclick: () => open(p) }, p.name), ' ',
        h('span', { class: 'tag' }, `${t('ppl.affinity')} ${p.affinity}`),
        h('div', { class: 'meta' }, `${p.personId} · ${p.relationship}${p.aliases?.length ? ` · ${p.aliases.join(', ')}` : ''}`)))) : empty(t('state.noMatch')),
      pager(page, at, LIMIT, search)]);
  }
  const refresh = () => search(offset);
  // the list and "new" open a person at once, dropping one still loading
  // (after asking, when the one open has changes not saved)
  const open = (p) => { if (!app.mayLeave()) return; const my = ++gen; edit(editor, app, p, refresh, () => my === gen); };
  async function show(pid) {
    const my = ++gen;
    if (!pid) { clear(editor, empty(t('ppl.pick'))); clear(more); return; }
    loading(editor);
    try {
      const { person } = await api('GET', `people/${encodeURIComponent(pid)}`);
      if (my !== gen) return;
      edit(editor, app, person, refresh, () => my === gen);
    } catch (e) {
      if (my !== gen) return;
      clear(editor, errorBox(e));
      reveal(editor);
    }
  }
  root.append(h('div', { class: 'cols' },
    h('section', { class: 'card', 'aria-labelledby': 'h-people' }, h('h2', { id: 'h-people' }, t('tab.people')),
      h('form', { onsubmit: (e) => { e.preventDefault(); search(0); } },
        h('div', { class: 'row' }, field(t('mem.keywords'), kw), h('button', { type: 'submit', class: 'primary' }, t('action.search')),
          h('button', { type: 'button', id: 'new-person', onclick: () => open(null) }, t('ppl.new'))),
        h('div', { class: 'row' }, field(t('mem.sort'), sort))),
      list),
    h('section', { class: 'card', 'aria-label': t('ppl.editor') }, editor, more)));
  search(0);
  show(arg);
  return { show };
}

// current() says whether this person is still the one open: a save that
// answers after another was opened redraws nothing.
function edit(el, app, p, refresh, current = () => true) {
  const id = h('input', { type: 'text', id: 'p-id', value: p?.personId ?? '', readonly: !!p, required: true, placeholder: '12345', 'aria-describedby': 'p-id-hint' });
  const name = h('input', { type: 'text', id: 'p-name', value: p?.name ?? '', required: true });
  const aliases = h('input', { type: 'text', id: 'p-aliases', value: (p?.aliases || []).join(', ') });
  const rel = h('input', { type: 'text', id: 'p-relationship', value: p?.relationship ?? '' });
  const affinity = h('input', { type: 'range', id: 'p-affinity', min: -100, max: 100, step: 1, value: p?.affinity ?? 0 });
  const affShow = h('output', { for: 'p-affinity', id: 'p-affinity-value' }, String(p?.affinity ?? 0));
  // a number box beside the slider (issue 18), the two kept together
  const affNum = h('input', { type: 'number', id: 'p-affinity-num', min: -100, max: 100, step: 1, value: p?.affinity ?? 0, 'aria-label': t('ppl.affinityNum') });
  affinity.addEventListener('input', () => { affShow.textContent = affinity.value; affNum.value = affinity.value; });
  affNum.addEventListener('input', () => {
    const v = Math.max(-100, Math.min(100, Math.round(Number(affNum.value))));
    if (affNum.value !== '' && Number.isFinite(v)) { affinity.value = String(v); affShow.textContent = String(v); }
  });
  const reason = h('textarea', { id: 'p-reason' });
  reason.value = p?.reason ?? '';
  let nodeId = p?.memoryNodeId ?? null;
  const nodeShow = h('output', { id: 'p-node' });
  const drawNode = () => clear(nodeShow, nodeId ? h('button', { type: 'button', class: 'link', onclick: () => app.go('memory', nodeId) }, nodeId) : t('ppl.noNode'));
  // a change not saved is asked about before it is lost (main.js, as the
  // memory editor and the config panel; issue 18)
  let formEl = null;
  const edited = () => app.unsaved('people', formEl);
  const leave = () => app.unsaved('people', null);
  for (const x of [id, name, aliases, rel, affinity, affNum, reason]) x.addEventListener('input', edited);
  drawNode();
  const msg = h('div');
  const del = p ? h('button', { type: 'button', class: 'danger', id: 'p-delete', onclick: () => {
    if (!window.confirm(t('ppl.confirmDelete', { name: p.name }))) return;
    busy(del, async () => {
      try {
        await api('DELETE', `people/${encodeURIComponent(p.personId)}`);
        leave();
        refresh();
        app.go('people', '', { status: t('ppl.deleted', { name: p.name }) });
      } catch (err) { clear(msg, errorBox(err)); }
    });
  } }, t('action.delete')) : null;
  clear(el, formEl = form({}, async () => {
    // on QQ the id is the bare QQ number (the server refuses "qq:12345"
    // for a new person: recall matches the speaker's number)
    const bare = /^qq:\s*(\d+)$/i.exec(id.value.trim());
    if (!p && bare) {
      clear(msg, h('div', { class: 'error', role: 'alert' }, t('ppl.idForm', { id: id.value.trim(), bare: bare[1] })));
      id.focus();
      return;
    }
    const body = { name: name.value, aliases: splitList(aliases.value), relationship: rel.value,
      affinity: Number(affinity.value), reason: reason.value, memoryNodeId: nodeId };
    try {
      const saved = await api('PUT', `people/${encodeURIComponent(id.value.trim())}`, body);
      leave();
      app.status(t('ppl.saved', { name: name.value }));
      refresh();
      // the person as saved (its new 更新于), not as sent
      if (current()) edit(el, app, saved?.person ?? { ...p, personId: id.value.trim(), ...body }, refresh, current);
    } catch (err) {
      const d = err.details || {};
      clear(msg, d.reason === 'id_form' ? h('div', { class: 'error', role: 'alert' }, t('ppl.idForm', { id: id.value.trim(), bare: d.suggestion })) : errorBox(err));
    }
  },
  h('h2', {}, p ? `${p.name} (${p.personId})` : t('ppl.new')),
  p ? h('p', { class: 'meta', id: 'p-times' }, `${t('mem.created')} ${fmtTime(p.createdAt)} · ${t('mem.updated')} ${fmtTime(p.updatedAt)}`) : null,
  field(t('ppl.id'), id), h('p', { class: 'meta', id: 'p-id-hint' }, t('ppl.idHint')), field(t('ppl.name'), name), field(t('ppl.aliases'), aliases), field(t('ppl.relationship'), rel),
  h('div', {}, h('label', { for: 'p-affinity' }, t('ppl.affinity'), t('ppl.affinityRange'), t('colon'), affShow), h('div', { class: 'row' }, affinity, affNum)),
  field(t('ppl.reason'), reason),
  h('div', {}, h('label', { for: 'p-node' }, t('ppl.node')), nodeShow, ' ',
    h('button', { type: 'button', onclick: () => { nodeId = null; drawNode(); edited(); } }, t('ppl.unlink'))),
  picker((n) => { nodeId = n ? n.id : null; drawNode(); edited(); }, { label: t('ppl.linkFind') }),
  h('div', { class: 'row' }, h('button', { type: 'submit', class: 'primary', id: 'p-save' }, t('action.save')),
    // 放弃修改: the record as it was (a new one: the empty form)
    h('button', { type: 'button', id: 'p-cancel', onclick: () => { leave(); edit(el, app, p, refresh, current); } }, t('ppl.cancel')), del),
  msg));
  reveal(el);
  (p ? name : id).focus({ preventScroll: true });
  const more = el.parentElement?.querySelector('#person-more');
  if (more) about(more, app, p);
}
