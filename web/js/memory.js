// memory.js — the Memory panel: search (zcor_memory_query: keywords, time
// range, superseded on request, pages), the tree of roots with children
// loaded when expanded, a node's detail (path, children, keywords, source
// message, important mark, superseded state) and its edits: create, edit,
// delete (a refusal explained in the page's words from the error's
// details), important (with the replacement receipt), merge and supersede.
// Opening another node or saving one keeps the search, its page and the
// tree's open branches (render returns show(id) for main.js). Only the
// node opened last is drawn: an answer for one opened before it is dropped
// (ctx.gen counts the openings).
import { h, clear, field, fmtTime, splitList } from './dom.js';
import { api, qs } from './api.js';
import { t, has } from './i18n.js';
import { load, errorBox, empty, pager, picker, loading, busy, form, reveal, timeRange, roving, convLink } from './ui.js';
import { bulkSelection, selectBox } from './bulk.js'; // bulk actions (issue 18)

const LIMIT = 20;

export function render(root, app, arg) {
  const results = h('div');
  const tree = h('div', { class: 'tree' });
  const detail = h('div', { id: 'detail', tabindex: '-1' });
  const kw = h('input', { type: 'search', id: 'q-keywords', placeholder: t('mem.keywordsHint') });
  const when = timeRange('q', () => search(0));
  const sup = h('input', { type: 'checkbox', id: 'q-superseded' });
  const sort = h('select', { id: 'q-sort' }, ['updated', 'hits', 'created'].map((o) => h('option', { value: o }, t(`mem.sort.${o}`))));
  sort.addEventListener('change', () => search(0));
  const expanded = new Set(); // tree branches the operator opened
  let offset = 0;

  async function search(at = 0) {
    offset = at;
    let range;
    try { range = when.range(); } catch (e) { clear(results, errorBox(e)); return; }
    const params = { keywords: splitList(kw.value.replace(/\s+/g, ',')), from: range.from,
      to: range.to, limit: LIMIT, offset: at, includeSuperseded: sup.checked ? 'true' : '', sort: sort.value };
    // the page's search (GET find): title, keywords, content and linked
    // people's aliases, with synonyms; each result says what matched
    await load(results, () => api('GET', `find${qs(params)}`), (page) => [
      page.items.length ? roving(h('ul', { class: 'list', 'aria-label': t('mem.results') }, page.items.map((n) => nodeItem(n, open)))) : empty(t('state.noMatch')),
      pager(page, at, LIMIT, search)]);
  }
  // after a change: the same search page, the same open branches; the
  // caller awaits it before opening the changed memory, so the lists
  // above it (on a phone) do not shrink and grow again after it came
  // into view
  const treeView = {}; // the tree's filters, its page of roots, the memory on show
  const ctx = { gen: 0, refresh: () => Promise.all([drawTree(tree, open, expanded, treeView), search(offset)]) };
  // opening goes through the address (#memory/<id>): back and reload work
  const open = (id) => app.go('memory', id);
  const show = (id) => {
    treeView.current = id;
    markCurrent(tree, id);
    if (id) return showNode(detail, app, id, ctx);
    ++ctx.gen; // a node still loading is no longer wanted
    clear(detail, empty(t('mem.pick')));
  };

  // bulk actions on selected memories (issue 18, bulk.js)
  const bulk = bulkSelection(app, () => ctx.refresh());
  root.append(bulk.cols = h('div', { class: 'cols' },
    h('div', {},
      h('section', { class: 'card', 'aria-labelledby': 'h-search' },
        h('h2', { id: 'h-search' }, t('mem.search')),
        h('form', { onsubmit: (e) => { e.preventDefault(); search(0); } },
          h('div', { class: 'row' }, field(t('mem.keywords'), kw)), when.el,
          h('div', { class: 'row' }, field(t('mem.sort'), sort), h('label', { for: 'q-superseded' }, sup, ' ', t('mem.includeSuperseded')),
            h('button', { type: 'submit', class: 'primary' }, t('action.search')),
            h('button', { type: 'button', id: 'new-node', onclick: () => { if (app.mayLeave()) editNode(detail, app, null, ctx); } }, t('mem.new')),
            bulk.toggle)),
        results),
      bulk.bar,
      h('section', { class: 'card', 'aria-labelledby': 'h-tree' }, h('h2', { id: 'h-tree' }, t('mem.tree')), tree)),
    h('section', { class: 'card', 'aria-label': t('mem.detail') }, detail)));
  bulk.attach(bulk.cols);
  search(0);
  treeView.current = arg;
  drawTree(tree, open, expanded, treeView);
  show(arg);
  return { show };
}

function tags(n) {
  return [n.important ? h('span', { class: 'tag imp' }, t('mem.important')) : null,
    n.supersededBy ? h('span', { class: 'tag sup' }, t('mem.superseded')) : null];
}

// one memory in a list (also the per-conversation page's, conversation.js)
export function nodeItem(n, open) {
  return h('li', {}, selectBox(n),
    h('button', { type: 'button', class: 'link', onclick: () => open(n.id) }, n.title), ' ', tags(n),
    h('div', { class: 'meta' }, `${n.id} · ${fmtTime(n.updatedAt)}${n.hits ? ` · ${t('mem.hitsN', { count: n.hits })}` : ''}`),
    n.content ? h('div', { class: 'preview' }, [...n.content].length > 80 ? `${[...n.content].slice(0, 80).join('')}…` : n.content) : null,
    n.matched?.length ? h('div', { class: 'meta matched' }, n.matched.map((m) => t(m.word === normWord(m.keyword) ? 'mem.matched' : 'mem.matchedVia',
      { keyword: m.keyword, field: t(`mem.field.${m.field}`), word: m.word })).join('；')) : null);
}

// roughly the server's normalisation, to tell "matched as typed" from "matched through a synonym"
const normWord = (w) => String(w).normalize('NFKC').toLowerCase();

// ---- the tree ------------------------------------------------------------
// The WAI-ARIA tree pattern: roots first, a node's children asked for when
// it opens. One treeitem is in the tab order (roving tabindex); Up/Down go
// through the visible items, Right opens a branch (then goes to its first
// child), Left closes it (or goes to the parent), Home/End go to the first
// and last, Enter or Space shows the memory. Mouse: the triangle opens and
// closes, the title shows.

let seq = 0;

// The roots come ROOTS_PAGE at a time ("show more"), filtered by kind and
// by conversation (scope); each item is labelled with its kind and scope
// when they are not the plain ones, and the memory on show is marked
// (aria-current). view.kind / view.scope / view.shown / view.current
// survive a redraw after a change.
const ROOTS_PAGE = 50;

function drawTree(el, open, expanded, view = {}) {
  return load(el, () => api('GET', 'roots'), (data) => {
    if (!data.items.length) return empty();
    const all = data.items;
    const opt = (v, text) => h('option', { value: v }, text);
    const kindSel = h('select', { id: 'tree-kind' }, opt('', t('mem.anyKind')),
      [...new Set(all.map((n) => n.kind || 'memory'))].map((k) => opt(k, kindWord(k))));
    const scopeSel = h('select', { id: 'tree-scope' }, opt('', t('mem.anyScope')),
      [...new Set(all.map((n) => n.scope || 'global'))].map((k) => opt(k, k === 'global' ? t('mem.global') : k)));
    kindSel.value = view.kind || '';
    scopeSel.value = view.scope || '';
    const list = h('div');
    view.shown = view.shown || ROOTS_PAGE;
    const draw = (focusFrom = -1) => {
      view.kind = kindSel.value;
      view.scope = scopeSel.value;
      const roots = all.filter((n) => (!view.kind || (n.kind || 'memory') === view.kind) && (!view.scope || (n.scope || 'global') === view.scope));
      if (!roots.length) return clear(list, empty(t('state.noMatch')));
      const ul = h('ul', { role: 'tree', 'aria-labelledby': 'h-tree' }, roots.slice(0, view.shown).map((n) => treeItem(n, open, expanded)));
      ul.firstChild.tabIndex = 0;
      ul.addEventListener('keydown', (e) => treeKey(e, ul, open));
      // a click focuses an item too: it becomes the one in the tab order
      ul.addEventListener('focusin', (e) => { if (e.target.getAttribute('role') === 'treeitem') rove(ul, e.target); });
      const left = roots.length - view.shown;
      clear(list, ul, h('p', { class: 'meta', id: 'tree-count' }, t('mem.treeCount', { shown: Math.min(view.shown, roots.length), total: roots.length })),
        left > 0 ? h('button', { type: 'button', id: 'tree-more', onclick: () => { view.shown += ROOTS_PAGE; draw(view.shown - ROOTS_PAGE); } }, t('mem.treeMore', { n: Math.min(left, ROOTS_PAGE) })) : null);
      markCurrent(list, view.current);
      if (focusFrom >= 0) { const x = ul.querySelectorAll(':scope > [role=treeitem]')[focusFrom]; if (x) { rove(ul, x); x.focus(); } }
    };
    kindSel.addEventListener('change', () => { view.shown = ROOTS_PAGE; draw(); });
    scopeSel.addEventListener('change', () => { view.shown = ROOTS_PAGE; draw(); });
    draw();
    // a filter only where there is a choice (fewer Tab stops before the tree)
    const choice = (sel) => sel.options.length > 2;
    return [choice(kindSel) || choice(scopeSel) ? h('div', { class: 'row' }, choice(kindSel) ? field(t('mem.kind'), kindSel) : null,
      choice(scopeSel) ? field(t('mem.scopeFilter'), scopeSel) : null) : null, list];
  });
}

// The memory on show, marked in the tree (and no other).
function markCurrent(el, id) {
  for (const x of el.querySelectorAll('[role=treeitem][aria-current]')) x.removeAttribute('aria-current');
  if (id) for (const x of el.querySelectorAll(`[role=treeitem][data-id="${CSS.escape(id)}"]`)) x.setAttribute('aria-current', 'true');
}

const kindWord = (k) => (has(`kind.${k}`) ? t(`kind.${k}`) : k);

function rove(tree, item) {
  for (const x of tree.querySelectorAll('[role=treeitem][tabindex="0"]')) if (x !== item) x.tabIndex = -1;
  item.tabIndex = 0;
}

const visibleItems = (tree) => [...tree.querySelectorAll('[role=treeitem]')].filter((x) => !x.parentElement.closest('[hidden]'));
// An item's group of children sits beside it (the next li, role none),
// owned by it (aria-owns), not inside it: inside, an open branch's visible
// text would be its children's too, not its name (WCAG 2.5.3, axe's
// label-content-name-mismatch; issue 18). Its parent is the item owning
// the group it is in.
const groupOf = (item) => (item.hasAttribute('aria-owns') ? document.getElementById(item.getAttribute('aria-owns')) : null);
const parentOf = (item) => (item.parentElement?.getAttribute('role') === 'group' ? item.parentElement.parentElement.previousElementSibling : null);

function treeKey(e, tree, open) {
  const item = e.target.closest('[role=treeitem]');
  if (!item || e.target !== item || e.altKey || e.ctrlKey || e.metaKey) return;
  const items = visibleItems(tree);
  const i = items.indexOf(item);
  const state = item.getAttribute('aria-expanded');
  let to = null;
  switch (e.key) {
    case 'ArrowDown': to = items[i + 1]; break;
    case 'ArrowUp': to = items[i - 1]; break;
    case 'Home': to = items[0]; break;
    case 'End': to = items[items.length - 1]; break;
    case 'ArrowRight':
      if (state === 'false') item.querySelector(':scope > .twisty').click();
      else if (state === 'true') to = groupOf(item)?.querySelector(':scope > [role=treeitem]');
      break;
    case 'ArrowLeft':
      if (state === 'true') item.querySelector(':scope > .twisty').click();
      else to = parentOf(item);
      break;
    case 'Enter': case ' ': open(item.dataset.id); break;
    default: return;
  }
  e.preventDefault();
  if (to) { rove(tree, to); to.focus(); }
}

// → [the item, the li holding its group]
function treeItem(n, open, expanded) {
  const titleId = `tn${++seq}`;
  const tagsId = `tt${seq}`;
  const kids = h('ul', { role: 'group', id: `tg${seq}` });
  const holder = h('li', { role: 'none', class: 'tree-group', hidden: true }, kids);
  let loaded = false;
  // the listing tells whether there is anything to open (hasChildren): a
  // leaf has no expander and no aria-expanded (issue 18)
  const leaf = n.hasChildren === false;
  const twisty = leaf ? h('span', { class: 'twisty leaf', 'aria-hidden': 'true' })
    : h('span', { class: 'twisty', 'aria-hidden': 'true' }, '▸');
  const item = h('li', { role: 'treeitem', tabindex: '-1', 'aria-expanded': leaf ? null : 'false', 'data-id': n.id,
    'aria-owns': leaf ? null : kids.id, 'aria-labelledby': `${titleId} ${tagsId}` }, twisty, selectBox(n),
  h('span', { class: 'node', id: titleId, onclick: () => open(n.id) }, n.title), ' ', h('span', { id: tagsId }, tags(n),
    n.kind && n.kind !== 'memory' ? h('span', { class: 'tag kind' }, kindWord(n.kind)) : null,
    n.scope && n.scope !== 'global' ? h('span', { class: 'tag scope' }, n.scope) : null));
  async function toggle(openNow) {
    item.setAttribute('aria-expanded', String(openNow));
    twisty.textContent = openNow ? '▾' : '▸';
    holder.hidden = !openNow;
    if (openNow) expanded.add(n.id); else expanded.delete(n.id);
    if (!openNow || loaded) return;
    loaded = true;
    kids.replaceChildren(h('li', { role: 'none', class: 'loading' }, t('state.loading')));
    try {
      const data = await api('GET', `nodes/${encodeURIComponent(n.id)}/children`);
      if (data.items.length) {
        kids.replaceChildren(...data.items.flatMap((c) => treeItem(c, open, expanded)));
      } else { // a leaf: nothing to open
        kids.replaceChildren();
        holder.hidden = true;
        item.removeAttribute('aria-expanded');
        item.removeAttribute('aria-owns');
        twisty.textContent = '';
        twisty.classList.add('leaf');
      }
    } catch (e) {
      loaded = false;
      kids.replaceChildren(h('li', { role: 'none' }, errorBox(e)));
    }
  }
  twisty.addEventListener('click', () => { if (item.hasAttribute('aria-expanded')) toggle(item.getAttribute('aria-expanded') !== 'true'); });
  if (!leaf && expanded.has(n.id)) toggle(true);
  return [item, holder];
}

// ---- a node --------------------------------------------------------------

// Draws node id into el; false, drawing nothing, when another node (or the
// editor) was opened while it loaded: a late answer does not replace the
// one the operator chose, nor take the focus.
async function showNode(el, app, id, ctx, { focus } = {}) {
  const my = ++ctx.gen;
  loading(el);
  let node, trace;
  try {
    [{ node }, trace] = await Promise.all([api('GET', `nodes/${encodeURIComponent(id)}`),
      api('GET', `nodes/${encodeURIComponent(id)}/trace`)]);
  } catch (e) {
    if (my !== ctx.gen) return false;
    clear(el, errorBox(e));
    reveal(el);
    return false;
  }
  if (my !== ctx.gen) return false;
  const msg = h('div', { id: 'node-msg' });
  const path = trace.path || [];
  const children = trace.children || [];
  const toggle = h('button', { type: 'button', id: 'toggle-important', onclick: () => busy(toggle, async () => {
    clear(msg);
    try {
      const r = await api('POST', `nodes/${encodeURIComponent(id)}/important`, { important: !node.important });
      await ctx.refresh();
      if (my !== ctx.gen) return; // another node is open now
      if (!await showNode(el, app, id, ctx, { focus: '#toggle-important' })) return;
      if (r.receipt) clear(el.querySelector('#node-msg'), receipt(r.receipt, app));
    } catch (e) {
      clear(msg, errorBox(e));
    }
  }) }, node.important ? t('mem.unmark') : t('mem.mark'));
  clear(el,
    h('h2', { id: 'node-title' }, node.title), h('div', {}, tags(node), h('span', { class: 'meta' }, node.id)),
    h('nav', { class: 'pathbar', 'aria-label': t('mem.path') }, t('mem.path'), t('colon'),
      path.map((p, i) => [i ? ' › ' : '', p.id === node.id ? h('strong', {}, p.title) : h('button', { type: 'button', onclick: () => app.go('memory', p.id) }, p.title)])),
    h('p', { class: 'meta' }, `${t('mem.created')} ${fmtTime(node.createdAt)} · ${t('mem.updated')} ${fmtTime(node.updatedAt)} · ${t('mem.scope')} `,
      node.scope && node.scope !== 'global' ? convLink(app, node.scope) : node.scope),
    node.supersededBy ? h('div', { class: 'notice' }, t('mem.supersededBy'), ' ',
      h('button', { type: 'button', class: 'link', onclick: () => app.go('memory', node.supersededBy) }, node.supersededBy),
      node.supersededReason ? ` — ${node.supersededReason}` : '') : null,
    h('h3', {}, t('mem.terms')), node.keywords?.length ? h('p', { id: 'node-keywords' }, node.keywords.map((k) => h('span', { class: 'tag' }, k))) : empty(),
    h('h3', {}, t('mem.content')), h('div', { class: 'text', id: 'node-content' }, node.content),
    h('h3', {}, t('mem.source')), node.sourceMessage ? h('div', { class: 'text', id: 'node-source' }, node.sourceMessage) : empty(t('mem.noSource')),
    h('h3', {}, t('mem.children')),
    children.length ? h('ul', { class: 'list', id: 'node-children' }, children.map((c) => h('li', {}, h('button', { type: 'button', class: 'link', onclick: () => app.go('memory', c.id) }, c.title), ' ', h('span', { class: 'meta' }, c.id)))) : empty(t('mem.noChildren')),
    h('div', { class: 'row' },
      h('button', { type: 'button', id: 'edit-node', onclick: () => editNode(el, app, node, ctx) }, t('action.edit')),
      toggle,
      h('button', { type: 'button', id: 'merge-node', onclick: () => mergeForm(msg, app, node, ctx) }, t('mem.merge')),
      h('button', { type: 'button', id: 'supersede-node', onclick: () => supersedeForm(msg, app, node, ctx) }, t('mem.supersede')),
      h('button', { type: 'button', class: 'danger', id: 'delete-node', onclick: () => confirmDelete(msg, app, node, children, ctx) }, t('action.delete'))),
    msg);
  // opened from the tree with the keyboard beside it (two columns): the
  // focus stays in the tree, so the arrows go on browsing (issue 18)
  const inTree = document.activeElement?.getAttribute('role') === 'treeitem' && window.matchMedia('(min-width: 761px)').matches;
  if (focus) el.querySelector(focus)?.focus(); else if (!inTree) reveal(el);
  return true;
}

function receipt(r, app) {
  return h('div', { class: 'notice', id: 'receipt', role: 'status' }, t('mem.receipt'), ' ',
    h('button', { type: 'button', class: 'link', onclick: () => app.go('memory', r.replacedId) }, r.replacedTitle),
    ` (${r.replacedId})\n`, t('mem.receiptReminder'));
}

function confirmDelete(msg, app, node, children, ctx) {
  const yes = h('button', { type: 'button', class: 'danger', id: 'confirm-delete', onclick: () => busy(yes, async () => {
    try {
      await api('DELETE', `nodes/${encodeURIComponent(node.id)}`);
      await ctx.refresh();
      app.go('memory', '', { status: t('mem.deleted', { title: node.title }) });
    } catch (e) {
      clear(msg, refusal(e, app, children));
      msg.firstChild.focus();
    }
  }) }, t('action.confirmDelete'));
  clear(msg, h('div', { class: 'notice' }, t('mem.confirmDelete', { title: node.title }), ' ', yes, ' ',
    h('button', { type: 'button', onclick: () => clear(msg) }, t('action.cancel'))));
  yes.focus();
}

// A refused delete's reason (details.reason) → its words (bulk.js too).
export const deleteWhy = { has_children: 'mem.refused.children', linked_from_person: 'mem.refused.person', supersede_target: 'mem.refused.superseded' };

// Why a delete was refused, in the page's words, from the error's details
// (docs/API.md "Errors"), with links to what still refers to the node.
function refusal(e, app, children) {
  const d = e.details || {};
  const ids = Array.isArray(d.ids) ? d.ids : Array.isArray(d.personIds) ? d.personIds : [];
  const why = deleteWhy[d.reason];
  if (e.code !== 'conflict' || !why) return h('div', { tabindex: '-1' }, errorBox(e));
  // the server names each referrer (details.titles: a memory's title, a
  // person's name), so a replaced memory is listed by title, not by id alone
  const titles = d.titles && typeof d.titles === 'object' ? d.titles : {};
  const title = (id) => (typeof titles[id] === 'string' && titles[id]) || children.find((c) => c.id === id)?.title;
  const link = (id) => h('button', { type: 'button', class: 'link', 'data-ref': id,
    onclick: () => app.go(d.reason === 'linked_from_person' ? 'people' : 'memory', id) },
  title(id) ? `${title(id)} (${id})` : id);
  return h('div', { class: 'error', role: 'alert', tabindex: '-1', id: 'delete-refused', 'data-reason': d.reason },
    h('p', {}, t('mem.deleteRefused'), ' ', t(why, { count: d.count ?? ids.length })),
    ids.length ? h('ul', { class: 'refs' }, ids.map((id) => h('li', {}, link(id)))) : null,
    (d.count ?? 0) > ids.length ? h('p', {}, t('mem.refused.more', { n: d.count - ids.length })) : null,
    h('p', {}, t(`${why}.next`)));
}

// create (node null) or edit: title, content, keywords, parent (picker), source
function editNode(el, app, node, ctx) {
  ++ctx.gen; // a node still loading does not replace the editor
  const title = h('input', { type: 'text', id: 'e-title', value: node?.title ?? '', required: true });
  const content = h('textarea', { id: 'e-content' });
  content.value = node?.content ?? '';
  const keywords = h('input', { type: 'text', id: 'e-keywords', value: (node?.keywords || []).join(', ') });
  const source = h('textarea', { id: 'e-source' });
  source.value = node?.sourceMessage ?? '';
  let parentId = node ? node.parentId : null;
  const parentShow = h('output', { id: 'e-parent' }, parentId || t('pick.rootValue'));
  const msg = h('div');
  // a change not saved is asked about before it is lost (main.js)
  let editor = null; // the form below
  const edited = () => app.unsaved('memory', editor);
  for (const x of [title, content, keywords, source]) x.addEventListener('input', edited);
  const leave = () => { app.unsaved('memory', null); return true; };
  clear(el, editor = form({ 'aria-labelledby': 'e-h' }, async () => {
    const body = { title: title.value, content: content.value, keywords: splitList(keywords.value),
      parentId, sourceMessage: source.value === '' ? null : source.value };
    try {
      const r = node ? await api('PUT', `nodes/${encodeURIComponent(node.id)}`, body) : await api('POST', 'nodes', body);
      leave();
      await ctx.refresh();
      app.go('memory', r.node.id, { status: node ? t('mem.saved') : t('mem.createdOk', { id: r.node.id }) });
    } catch (err) {
      clear(msg, errorBox(err));
    }
  },
  h('h2', { id: 'e-h' }, node ? t('mem.editTitle', { id: node.id }) : t('mem.new')),
  field(t('mem.title'), title), field(t('mem.content'), content), field(t('mem.keywordsList'), keywords),
  h('div', {}, h('label', { for: 'e-parent' }, t('mem.parent')), parentShow),
  picker((p) => { parentId = p ? p.id : null; parentShow.textContent = p ? `${p.title} (${p.id})` : t('pick.rootValue'); edited(); }, { allowRoot: true, label: t('mem.parentFind') }),
  field(t('mem.source'), source),
  h('div', { class: 'row' }, h('button', { type: 'submit', class: 'primary', id: 'e-save' }, t('action.save')),
    h('button', { type: 'button', id: 'e-cancel', onclick: () => leave() && (node ? app.go('memory', node.id) : clear(el, empty(t('mem.pick')))) }, t('action.cancel'))),
  msg));
  reveal(el);
  title.focus({ preventScroll: true });
}

function idList() {
  const ids = [];
  const show = h('ul', { class: 'list' });
  const draw = () => clear(show, ids.map((n) => h('li', {}, `${n.title} (${n.id}) `,
    h('button', { type: 'button', onclick: () => { ids.splice(ids.indexOf(n), 1); draw(); } }, t('action.remove')))));
  return { ids, show, add: (n) => { if (n && !ids.some((x) => x.id === n.id)) { ids.push(n); draw(); } } };
}

function mergeForm(msg, app, node, ctx) {
  const list = idList();
  list.add(node);
  const title = h('input', { type: 'text', id: 'm-title', value: node.title });
  const content = h('textarea', { id: 'm-content' });
  content.value = node.content;
  const keywords = h('input', { type: 'text', id: 'm-keywords', value: (node.keywords || []).join(', ') });
  const reason = h('input', { type: 'text', id: 'm-reason' });
  const out = h('div');
  clear(msg, form({ class: 'card', id: 'merge-form' }, async () => {
    try {
      const r = await api('POST', 'merge', { ids: list.ids.map((n) => n.id), title: title.value, content: content.value,
        keywords: splitList(keywords.value), reason: reason.value });
      await ctx.refresh();
      app.go('memory', r.node.id, { status: t('mem.merged', { id: r.node.id }) });
    } catch (err) { clear(out, errorBox(err)); }
  }, h('h3', {}, t('mem.merge')), h('p', { class: 'meta' }, t('mem.mergeHelp')), list.show,
  picker(list.add, { label: t('mem.mergeAdd') }),
  field(t('mem.title'), title), field(t('mem.content'), content), field(t('mem.keywordsList'), keywords), field(t('mem.reason'), reason),
  h('button', { type: 'submit', class: 'primary' }, t('mem.merge')), out));
  title.focus();
}

function supersedeForm(msg, app, node, ctx) {
  let replacement = null;
  const show = h('p', {}, h('label', { for: 's-replacement' }, t('mem.replacement')), h('output', { id: 's-replacement' }, '—'));
  const reason = h('input', { type: 'text', id: 's-reason' });
  const out = h('div');
  const find = picker((n) => { replacement = n; show.querySelector('output').textContent = n ? `${n.title} (${n.id})` : '—'; }, { label: t('mem.replacementFind') });
  clear(msg, form({ class: 'card', id: 'supersede-form' }, async () => {
    try {
      await api('POST', 'supersede', { ids: [node.id], replacementId: replacement?.id, reason: reason.value });
      await ctx.refresh();
      app.go('memory', node.id, { status: t('mem.supersededOk') });
    } catch (err) { clear(out, errorBox(err)); }
  }, h('h3', {}, t('mem.supersede')), h('p', { class: 'meta' }, t('mem.supersedeHelp')),
  find, show, field(t('mem.reason'), reason), h('button', { type: 'submit', class: 'primary' }, t('mem.supersede')), out));
  find.querySelector('input').focus();
}
