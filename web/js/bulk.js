// bulk.js — bulk actions on selected memories in the Memory panel (issue
// 18): 选择多条 / "Select several" shows a checkbox on each result and
// tree item and a selection bar with the count; the actions are delete
// (asked first), move under a parent (picked by search), merge (title,
// content, keywords, reason), mark / unmark important and supersede (the
// replacement picked by search). Each goes through the existing
// operations: one call per memory where the operation is per memory
// (delete, move, mark: each a separate recorded change, which the form
// says), the multi-id operation where there is one (merge, supersede).
// The results are listed per memory: which succeeded, which were refused
// and why, in the page's words. Checkboxes are native controls (Space
// toggles them); they are Tab stops only while selecting.
import { h, clear, field, splitList } from './dom.js';
import { api } from './api.js';
import { t, has } from './i18n.js';
import { busy, explain, picker, form } from './ui.js';
import { deleteWhy } from './memory.js';

let active = null; // the Memory panel's selection while it is drawn
let tools = null; // GET tools, once: the operations' rules (s23-minor18)

// A checkbox for memory n (in a result or a tree item), or null before
// the panel made a selection.
export function selectBox(n) {
  return active ? active.box(n) : null;
}

// The selection of the Memory panel: the toggle button, the bar (its
// actions, forms and results) and attach(root), root the panel's columns
// (class "selecting" while selecting, which shows the boxes). refresh()
// draws the results and the tree again (awaited).
export function bulkSelection(app, refresh) {
  let root = null;
  const sel = new Map(); // id → the node as listed
  const count = h('span', { id: 'bulk-count', 'aria-live': 'polite' });
  const work = h('div', { id: 'bulk-work' });
  const out = h('div', { id: 'bulk-out', tabindex: '-1' });
  const buttons = {};
  // a new action: the last one's results go
  const action = (id, label, fn, cls) => (buttons[id] = h('button', { type: 'button', id: `bulk-${id}`, class: cls, onclick: () => { clear(out); fn(); } }, label));
  const bar = h('section', { class: 'card bulk-bar', id: 'bulk-bar', 'aria-labelledby': 'bulk-h', hidden: true },
    h('h2', { id: 'bulk-h' }, t('bulk.title')), h('p', {}, count),
    h('div', { class: 'row', role: 'group', 'aria-label': t('bulk.actions') },
      action('delete', t('action.delete'), () => deleteForm(), 'danger'),
      action('move', t('bulk.move'), () => moveForm()),
      action('merge', t('mem.merge'), () => mergeForm()),
      action('mark', t('mem.mark'), () => markForm(true)),
      action('unmark', t('mem.unmark'), () => markForm(false)),
      action('supersede', t('mem.supersede'), () => supersedeForm()),
      action('clear', t('bulk.clear'), () => { sel.clear(); sync(); clear(work); })),
    work, out);
  const toggle = h('button', { type: 'button', id: 'bulk-toggle', 'aria-pressed': 'false', onclick: () => setOn(!on) }, t('bulk.toggle'));
  let on = false;

  function setOn(v) {
    on = v;
    toggle.setAttribute('aria-pressed', String(v));
    root?.classList.toggle('selecting', v);
    bar.hidden = !v;
    if (!v) { sel.clear(); clear(work); clear(out); }
    sync();
  }
  // the count, the buttons and every box of the panel as the selection is
  function sync() {
    count.textContent = t('bulk.count', { count: sel.size });
    for (const [id, b] of Object.entries(buttons))
      b.disabled = id === 'clear' ? !sel.size : id === 'merge' ? sel.size < 2 : !sel.size;
    for (const box of root?.querySelectorAll('input.sel') || []) box.checked = sel.has(box.dataset.id);
  }
  function box(n) {
    return h('input', { type: 'checkbox', class: 'sel', 'data-id': n.id, checked: sel.has(n.id),
      'aria-label': t('bulk.pick', { title: n.title }),
      onchange: (e) => { if (e.target.checked) sel.set(n.id, n); else sel.delete(n.id); sync(); } });
  }
  active = { box };

  const nodes = () => [...sel.values()];
  const name = (n) => `${n.title} (${n.id})`;
  const several = () => h('p', { class: 'notice', id: 'bulk-several' }, t('bulk.several', { count: sel.size }));
  const cancel = () => h('button', { type: 'button', onclick: () => { clear(work); toggle.focus(); } }, t('action.cancel'));
  const listed = () => h('ul', { class: 'list bulk-picked' }, nodes().map((n) => h('li', {}, name(n))));

  // Runs each call(n) in turn and lists what each did; done(ok ids).
  async function each(list, call, what) {
    const rows = [];
    for (const n of list) {
      try {
        const r = await call(n);
        rows.push({ n, ok: true, note: r });
      } catch (e) {
        rows.push({ n, ok: false, e });
      }
    }
    await report(rows, what);
    return rows;
  }
  async function report(rows, what) {
    for (const r of rows) if (r.ok && what.drop) sel.delete(r.n.id);
    clear(work);
    await refresh();
    sync();
    const good = rows.filter((r) => r.ok).length;
    clear(out, h('div', { role: 'status' },
      h('p', {}, t('bulk.done', { what: what.label, ok: good, refused: rows.length - good })),
      h('ul', { class: 'list bulk-results' }, rows.map((r) => h('li', { 'data-id': r.n.id, 'data-ok': String(r.ok) },
        h('span', { class: `tag ${r.ok ? 'st-ok' : 'st-refused'}` }, r.ok ? t('bulk.ok') : t('bulk.refused')), ' ', name(r.n),
        r.ok ? (r.note ? h('div', { class: 'meta' }, r.note) : null) : h('div', { class: 'why' }, why(r.e)))))));
    out.focus();
  }

  function deleteForm() {
    const yes = h('button', { type: 'button', class: 'danger', id: 'bulk-delete-yes', onclick: () => busy(yes, () =>
      each(deleteOrder(nodes()), (n) => api('DELETE', `nodes/${encodeURIComponent(n.id)}`).then(() => ''), { label: t('action.delete'), drop: true })) },
    t('action.confirmDelete'));
    clear(work, h('div', { class: 'notice', role: 'group', 'aria-label': t('action.delete') },
      h('p', {}, t('bulk.confirmDelete', { count: sel.size })), listed(), several(), yes, ' ', cancel()));
    yes.focus();
  }

  function moveForm() {
    let parent; // undefined: not chosen; null: the root
    const show = h('output', { id: 'bulk-parent' }, '—');
    const go = h('button', { type: 'submit', class: 'primary', id: 'bulk-move-go', disabled: true }, t('bulk.move'));
    const find = picker((p) => { parent = p; show.textContent = p ? name(p) : t('pick.rootValue'); go.disabled = false; }, { allowRoot: true, label: t('mem.parentFind') });
    clear(work, form({ id: 'bulk-move-form', 'aria-labelledby': 'bulk-move-h' }, () => each(nodes(), async (n) => {
      // the memory as it is now: a write names its title and content
      const { node } = await api('GET', `nodes/${encodeURIComponent(n.id)}`);
      await api('PUT', `nodes/${encodeURIComponent(n.id)}`, { title: node.title, content: node.content, parentId: parent ? parent.id : null });
      return '';
    }, { label: t('bulk.move') }),
    h('h3', { id: 'bulk-move-h' }, t('bulk.moveTitle', { count: sel.size })), find,
    h('p', {}, h('label', { for: 'bulk-parent' }, t('mem.parent')), ' ', show), several(), go, ' ', cancel()));
    find.querySelector('input').focus();
  }

  function markForm(want) {
    const go = h('button', { type: 'button', class: 'primary', id: 'bulk-mark-go', onclick: () => busy(go, () =>
      each(nodes(), async (n) => {
        const r = await api('POST', `nodes/${encodeURIComponent(n.id)}/important`, { important: want });
        if (r.receipt?.replacedId) return t('hist.receiptReplaced', { title: r.receipt.replacedTitle ?? '', id: r.receipt.replacedId });
        return r.changed === false ? t('bulk.unchanged') : '';
      }, { label: want ? t('mem.mark') : t('mem.unmark') })) }, want ? t('mem.mark') : t('mem.unmark'));
    clear(work, h('div', { class: 'notice', role: 'group', 'aria-label': want ? t('mem.mark') : t('mem.unmark') },
      h('p', {}, t(want ? 'bulk.markAsk' : 'bulk.unmarkAsk', { count: sel.size })), listed(), several(), go, ' ', cancel()));
    go.focus();
  }

  // one call for them all: every memory the same result
  const once = async (call, what) => {
    let rows;
    try {
      const r = await call();
      rows = nodes().map((n) => ({ n, ok: true, note: r }));
    } catch (e) {
      rows = nodes().map((n) => ({ n, ok: false, e }));
    }
    await report(rows, what);
  };

  // minor findings of the issue 18 review (s23-minor18): the reason box
  // checked before the one call, by the tool's own rule (GET tools: the
  // operation's inputSchema, read once); the box marked and focused, the
  // words tied to it. True when the box is refused.
  async function reasonRefused(tool, input) {
    tools ??= api('GET', 'tools').catch(() => []);
    const list = await tools;
    const rule = (Array.isArray(list) ? list : list.tools || []).find((x) => x.name === tool)?.inputSchema?.properties?.reason || {};
    const short = rule.minLength !== undefined && [...input.value].length < rule.minLength;
    const note = document.getElementById(`${input.id}-err`);
    if (!short) {
      input.removeAttribute('aria-invalid');
      input.removeAttribute('aria-describedby');
      note?.remove();
      return false;
    }
    input.setAttribute('aria-invalid', 'true');
    input.setAttribute('aria-describedby', `${input.id}-err`);
    const words = explain({ details: { field: 'reason', reason: 'minLength' } });
    if (note) note.textContent = words;
    else input.after(h('p', { class: 'field-error', id: `${input.id}-err`, role: 'alert' }, words));
    input.focus();
    return true;
  }

  function mergeForm() {
    const list = nodes();
    const title = h('input', { type: 'text', id: 'bulk-m-title', value: list[0]?.title ?? '', required: true });
    const content = h('textarea', { id: 'bulk-m-content' });
    content.value = list.map((n) => n.content ?? '').filter(Boolean).join('\n');
    const keywords = h('input', { type: 'text', id: 'bulk-m-keywords', value: [...new Set(list.flatMap((n) => n.keywords || []))].join(', ') });
    const reason = h('input', { type: 'text', id: 'bulk-m-reason' });
    clear(work, form({ id: 'bulk-merge-form', 'aria-labelledby': 'bulk-merge-h' }, async () => (await reasonRefused('zcor_memory_merge', reason)) || once(async () => {
      const r = await api('POST', 'merge', { ids: list.map((n) => n.id), title: title.value, content: content.value,
        keywords: splitList(keywords.value), reason: reason.value });
      return t('mem.merged', { id: r.node.id });
    }, { label: t('mem.merge'), drop: true }),
    h('h3', { id: 'bulk-merge-h' }, t('bulk.mergeTitle', { count: list.length })), h('p', { class: 'meta' }, t('mem.mergeHelp')), listed(),
    h('p', { class: 'meta' }, t('bulk.oneCall')),
    field(t('mem.title'), title), field(t('mem.content'), content), field(t('mem.keywordsList'), keywords), field(t('mem.reason'), reason),
    h('button', { type: 'submit', class: 'primary', id: 'bulk-merge-go' }, t('mem.merge')), ' ', cancel()));
    title.focus();
  }

  function supersedeForm() {
    let replacement = null;
    const show = h('output', { id: 'bulk-replacement' }, '—');
    const reason = h('input', { type: 'text', id: 'bulk-s-reason' });
    const go = h('button', { type: 'submit', class: 'primary', id: 'bulk-supersede-go', disabled: true }, t('mem.supersede'));
    const find = picker((n) => { replacement = n; show.textContent = n ? name(n) : '—'; go.disabled = !n; }, { label: t('mem.replacementFind') });
    clear(work, form({ id: 'bulk-supersede-form', 'aria-labelledby': 'bulk-supersede-h' }, async () => (await reasonRefused('zcor_memory_supersede', reason)) || once(async () => {
      await api('POST', 'supersede', { ids: nodes().map((n) => n.id), replacementId: replacement.id, reason: reason.value });
      return t('bulk.supersededBy', { title: replacement.title, id: replacement.id });
    }, { label: t('mem.supersede'), drop: true }),
    h('h3', { id: 'bulk-supersede-h' }, t('bulk.supersedeTitle', { count: sel.size })), h('p', { class: 'meta' }, t('mem.supersedeHelp')), listed(),
    h('p', { class: 'meta' }, t('bulk.oneCall')), find,
    h('p', {}, h('label', { for: 'bulk-replacement' }, t('mem.replacement')), ' ', show),
    field(t('mem.reason'), reason), go, ' ', cancel()));
    find.querySelector('input').focus();
  }

  sync();
  return { toggle, bar, attach: (el) => { root = el; } };
}

// Children before their parents when both are selected: a parent with a
// selected child would be refused while the child is still there.
function deleteOrder(list) {
  const left = [...list];
  const order = [];
  while (left.length) {
    const i = left.findIndex((n) => !left.some((m) => m.parentId === n.id));
    order.push(...left.splice(i < 0 ? 0 : i, 1));
  }
  return order;
}

// Why one call was refused, in the page's words: a delete's reason as the
// detail pane words it, else the code and field, with the server's own
// message (English) beside it.
function why(e) {
  const d = e?.details || {};
  if (e?.code === 'conflict' && deleteWhy[d.reason])
    return [t(deleteWhy[d.reason], { count: d.count ?? (d.ids || d.personIds || []).length }), ' ',
      (d.ids || d.personIds || []).map((id) => (d.titles?.[id] ? `${d.titles[id]} (${id})` : id)).join('、')];
  const words = explain(e) || (has(`err.code.${e?.code}`) ? t(`err.code.${e.code}`) : '');
  return [words || e?.message || String(e), words && e?.message ? h('span', { class: 'server-says' }, ` — ${t('err.server')}${t('colon')}`, h('span', { lang: 'en' }, e.message)) : null];
}
