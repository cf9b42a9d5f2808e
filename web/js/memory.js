// memory.js — the Memory panel: search (zcor_memory_query: keywords, time
// range, superseded on request, pages), the tree of roots with children
// loaded when expanded, a node's detail (path, children, keywords, source
// message, important mark, superseded state) and its edits: create, edit,
// delete (with the server's reason when refused), important (with the
// replacement receipt), merge and supersede.
import { h, clear, field, fmtTime, localToIso, splitList } from './dom.js';
import { api, qs } from './api.js';
import { t } from './i18n.js';
import { load, errorBox, empty, pager, picker, loading } from './ui.js';

const LIMIT = 20;

export function render(root, app, arg) {
  const results = h('div');
  const tree = h('div', { class: 'tree' });
  const detail = h('div', { id: 'detail', tabindex: '-1' });
  const kw = h('input', { type: 'search', id: 'q-keywords', placeholder: t('mem.keywordsHint') });
  const from = h('input', { type: 'datetime-local', id: 'q-from' });
  const to = h('input', { type: 'datetime-local', id: 'q-to' });
  const sup = h('input', { type: 'checkbox', id: 'q-superseded' });

  async function search(offset = 0) {
    const params = { keywords: splitList(kw.value.replace(/\s+/g, ',')), from: localToIso(from.value),
      to: localToIso(to.value), limit: LIMIT, offset, includeSuperseded: sup.checked ? 'true' : '' };
    await load(results, () => api('GET', `nodes${qs(params)}`), (page) => [
      page.items.length ? h('ul', { class: 'list', 'aria-label': t('mem.results') }, page.items.map((n) => nodeItem(n, open))) : empty(t('state.noMatch')),
      pager(page, offset, LIMIT, search)]);
  }
  const open = (id) => showNode(detail, app, id, { refresh: () => { drawTree(tree, open); search(); } });

  root.append(h('div', { class: 'cols' },
    h('div', {},
      h('section', { class: 'card', 'aria-labelledby': 'h-search' },
        h('h2', { id: 'h-search' }, t('mem.search')),
        h('form', { onsubmit: (e) => { e.preventDefault(); search(0); } },
          h('div', { class: 'row' }, field(t('mem.keywords'), kw), field(t('mem.from'), from), field(t('mem.to'), to)),
          h('div', { class: 'row' }, h('label', { for: 'q-superseded' }, sup, ' ', t('mem.includeSuperseded')),
            h('button', { type: 'submit', class: 'primary' }, t('action.search')),
            h('button', { type: 'button', id: 'new-node', onclick: () => editNode(detail, app, null, { refresh: () => { drawTree(tree, open); search(); } }) }, t('mem.new')))),
        results),
      h('section', { class: 'card', 'aria-labelledby': 'h-tree' }, h('h2', { id: 'h-tree' }, t('mem.tree')), tree)),
    h('section', { class: 'card', 'aria-label': t('mem.detail') }, detail)));
  clear(detail, empty(t('mem.pick')));
  search(0);
  drawTree(tree, open);
  if (arg) open(arg);
}

function tags(n) {
  return [n.important ? h('span', { class: 'tag imp' }, t('mem.important')) : null,
    n.supersededBy ? h('span', { class: 'tag sup' }, t('mem.superseded')) : null];
}

function nodeItem(n, open) {
  return h('li', {},
    h('button', { type: 'button', class: 'link', onclick: () => open(n.id) }, n.title), ' ', tags(n),
    h('div', { class: 'meta' }, `${n.id} · ${fmtTime(n.updatedAt)}`));
}

// The tree: roots first; a node's children are asked for when it opens.
function drawTree(el, open) {
  load(el, () => api('GET', 'roots'), (data) => data.items.length ? h('ul', { role: 'tree' }, data.items.map((n) => treeItem(n, open))) : empty());
}

function treeItem(n, open) {
  const kids = h('ul', { role: 'group', hidden: true });
  let loaded = false;
  const twisty = h('button', { type: 'button', class: 'twisty', 'aria-expanded': 'false', 'aria-label': t('mem.expand', { title: n.title }) }, '▸');
  twisty.addEventListener('click', async () => {
    const openNow = twisty.getAttribute('aria-expanded') !== 'true';
    twisty.setAttribute('aria-expanded', String(openNow));
    twisty.textContent = openNow ? '▾' : '▸';
    kids.hidden = !openNow;
    if (openNow && !loaded) {
      loaded = true;
      const holder = h('li');
      kids.replaceChildren(holder);
      try {
        const data = await api('GET', `nodes/${encodeURIComponent(n.id)}/children`);
        kids.replaceChildren(...(data.items.length ? data.items.map((c) => treeItem(c, open)) : [h('li', { class: 'empty' }, t('mem.noChildren'))]));
      } catch (e) {
        loaded = false;
        kids.replaceChildren(h('li', {}, errorBox(e)));
      }
    }
  });
  return h('li', { role: 'treeitem' }, twisty,
    h('button', { type: 'button', class: 'node', onclick: () => open(n.id) }, n.title), ' ', tags(n), kids);
}

async function showNode(el, app, id, ctx) {
  loading(el);
  let node, trace;
  try {
    [{ node }, trace] = await Promise.all([api('GET', `nodes/${encodeURIComponent(id)}`),
      api('GET', `nodes/${encodeURIComponent(id)}/trace`)]);
  } catch (e) {
    clear(el, errorBox(e));
    return;
  }
  const msg = h('div', { id: 'node-msg' });
  const reopen = () => showNode(el, app, id, ctx);
  const act = async (fn, after) => {
    clear(msg);
    try {
      const r = await fn();
      after(r);
    } catch (e) {
      clear(msg, errorBox(e));
    }
  };
  const path = trace.path || [];
  clear(el,
    h('h2', { id: 'node-title' }, node.title), h('div', {}, tags(node), h('span', { class: 'meta' }, node.id)),
    h('nav', { class: 'pathbar', 'aria-label': t('mem.path') }, t('mem.path'), ': ',
      path.map((p, i) => [i ? ' › ' : '', p.id === node.id ? h('strong', {}, p.title) : h('button', { type: 'button', onclick: () => app.go('memory', p.id) }, p.title)])),
    h('p', { class: 'meta' }, `${t('mem.created')} ${fmtTime(node.createdAt)} · ${t('mem.updated')} ${fmtTime(node.updatedAt)} · ${t('mem.scope')} ${node.scope}`),
    node.supersededBy ? h('div', { class: 'notice' }, t('mem.supersededBy'), ' ',
      h('button', { type: 'button', class: 'link', onclick: () => app.go('memory', node.supersededBy) }, node.supersededBy),
      node.supersededReason ? ` — ${node.supersededReason}` : '') : null,
    h('h3', {}, t('mem.keywords')), node.keywords?.length ? h('p', {}, node.keywords.map((k) => h('span', { class: 'tag' }, k))) : empty(),
    h('h3', {}, t('mem.content')), h('div', { class: 'text', id: 'node-content' }, node.content),
    h('h3', {}, t('mem.source')), node.sourceMessage ? h('div', { class: 'text', id: 'node-source' }, node.sourceMessage) : empty(t('mem.noSource')),
    h('h3', {}, t('mem.children')),
    trace.children?.length ? h('ul', { class: 'list' }, trace.children.map((c) => h('li', {}, h('button', { type: 'button', class: 'link', onclick: () => app.go('memory', c.id) }, c.title)))) : empty(t('mem.noChildren')),
    h('div', { class: 'row', style: null },
      h('button', { type: 'button', id: 'edit-node', onclick: () => editNode(el, app, node, ctx) }, t('action.edit')),
      h('button', { type: 'button', id: 'toggle-important', onclick: () => act(
        () => api('POST', `nodes/${encodeURIComponent(id)}/important`, { important: !node.important }),
        (r) => { reopen().then(() => { if (r.receipt) clear(el.querySelector('#node-msg'), receipt(r.receipt, app)); }); ctx.refresh(); }) },
      node.important ? t('mem.unmark') : t('mem.mark')),
      h('button', { type: 'button', id: 'merge-node', onclick: () => mergeForm(msg, app, node, ctx) }, t('mem.merge')),
      h('button', { type: 'button', id: 'supersede-node', onclick: () => supersedeForm(msg, app, node, ctx) }, t('mem.supersede')),
      h('button', { type: 'button', class: 'danger', id: 'delete-node', onclick: () => confirmDelete(msg, app, node, ctx) }, t('action.delete'))),
    msg);
}

function receipt(r, app) {
  return h('div', { class: 'notice', id: 'receipt', role: 'status' }, t('mem.receipt'), ' ',
    h('button', { type: 'button', class: 'link', onclick: () => app.go('memory', r.replacedId) }, r.replacedTitle),
    ` (${r.replacedId})\n`, r.reminder);
}

function confirmDelete(msg, app, node, ctx) {
  const yes = h('button', { type: 'button', class: 'danger', id: 'confirm-delete', onclick: async () => {
    try {
      await api('DELETE', `nodes/${encodeURIComponent(node.id)}`);
      app.status(t('mem.deleted', { title: node.title }));
      ctx.refresh();
      clear(document.getElementById('detail'), empty(t('mem.pick')));
    } catch (e) {
      clear(msg, h('p', {}, t('mem.deleteRefused')), errorBox(e));
    }
  } }, t('action.confirmDelete'));
  clear(msg, h('div', { class: 'notice' }, t('mem.confirmDelete', { title: node.title }), ' ', yes, ' ',
    h('button', { type: 'button', onclick: () => clear(msg) }, t('action.cancel'))));
  yes.focus();
}

// create (node null) or edit: title, content, keywords, parent (picker), source
function editNode(el, app, node, ctx) {
  const title = h('input', { type: 'text', id: 'e-title', value: node?.title ?? '', required: true });
  const content = h('textarea', { id: 'e-content' });
  content.value = node?.content ?? '';
  const keywords = h('input', { type: 'text', id: 'e-keywords', value: (node?.keywords || []).join(', ') });
  const source = h('textarea', { id: 'e-source' });
  source.value = node?.sourceMessage ?? '';
  let parentId = node ? node.parentId : null;
  const parentShow = h('span', { id: 'e-parent' }, parentId || t('pick.rootValue'));
  const msg = h('div');
  const form = h('form', { 'aria-labelledby': 'e-h', onsubmit: async (e) => {
    e.preventDefault();
    const body = { title: title.value, content: content.value, keywords: splitList(keywords.value),
      parentId, sourceMessage: source.value === '' ? null : source.value };
    try {
      const r = node ? await api('PUT', `nodes/${encodeURIComponent(node.id)}`, body) : await api('POST', 'nodes', body);
      app.status(node ? t('mem.saved') : t('mem.createdOk', { id: r.node.id }));
      ctx.refresh();
      app.go('memory', r.node.id);
    } catch (err) {
      clear(msg, errorBox(err));
    }
  } },
  h('h2', { id: 'e-h' }, node ? t('mem.editTitle', { id: node.id }) : t('mem.new')),
  field(t('mem.title'), title), field(t('mem.content'), content), field(t('mem.keywordsList'), keywords),
  h('div', {}, h('label', {}, t('mem.parent')), parentShow),
  picker((p) => { parentId = p ? p.id : null; parentShow.textContent = p ? `${p.title} (${p.id})` : t('pick.rootValue'); }, { allowRoot: true, label: t('mem.parentFind') }),
  field(t('mem.source'), source),
  h('div', { class: 'row' }, h('button', { type: 'submit', class: 'primary', id: 'e-save' }, t('action.save')),
    h('button', { type: 'button', onclick: () => (node ? app.go('memory', node.id) : clear(el, empty(t('mem.pick')))) }, t('action.cancel'))),
  msg);
  clear(el, form);
  title.focus();
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
  clear(msg, h('form', { class: 'card', onsubmit: async (e) => {
    e.preventDefault();
    try {
      const r = await api('POST', 'merge', { ids: list.ids.map((n) => n.id), title: title.value, content: content.value,
        keywords: splitList(keywords.value), reason: reason.value });
      app.status(t('mem.merged', { id: r.node.id }));
      ctx.refresh();
      app.go('memory', r.node.id);
    } catch (err) { clear(out, errorBox(err)); }
  } }, h('h3', {}, t('mem.merge')), h('p', { class: 'meta' }, t('mem.mergeHelp')), list.show,
  picker(list.add, { label: t('mem.mergeAdd') }),
  field(t('mem.title'), title), field(t('mem.content'), content), field(t('mem.keywordsList'), keywords), field(t('mem.reason'), reason),
  h('button', { type: 'submit', class: 'primary' }, t('mem.merge')), out));
}

function supersedeForm(msg, app, node, ctx) {
  let replacement = null;
  const show = h('p', {}, t('mem.replacement'), ': ', h('span', { id: 's-replacement' }, '—'));
  const reason = h('input', { type: 'text', id: 's-reason' });
  const out = h('div');
  clear(msg, h('form', { class: 'card', onsubmit: async (e) => {
    e.preventDefault();
    try {
      await api('POST', 'supersede', { ids: [node.id], replacementId: replacement?.id, reason: reason.value });
      app.status(t('mem.supersededOk'));
      ctx.refresh();
      app.go('memory', node.id);
    } catch (err) { clear(out, errorBox(err)); }
  } }, h('h3', {}, t('mem.supersede')), h('p', { class: 'meta' }, t('mem.supersedeHelp')),
  picker((n) => { replacement = n; show.lastChild.textContent = n ? `${n.title} (${n.id})` : '—'; }, { label: t('mem.replacementFind') }),
  show, field(t('mem.reason'), reason), h('button', { type: 'submit', class: 'primary' }, t('mem.supersede')), out));
}
