// person.js — one person in one place (issue 18, "per person"): what the
// People panel (people.js) draws under a person's record at
// #people/<id> — the linked memory node by its title, the memories that
// mention them and their recent messages across the conversations.
//
// The memories that mention a person are the page's own search (GET
// find: title, keywords, content and the names and aliases of the people
// linked to a memory, with synonyms) for each of their name and aliases,
// merged: the same set the operator gets typing the name in the Memory
// panel, one term at a time. Their messages are GET messages?sender=<id>
// (the transcript rule, src/memory/transcript.c): the id a world logs a
// speaker with is the person's id (on QQ the bare number).
import { h, clear, fmtTime } from './dom.js';
import { api, qs } from './api.js';
import { t } from './i18n.js';
import { load, empty, pager, roving, convLink } from './ui.js';
import { nodeItem } from './memory.js';

const TERMS_MAX = 6; // the name and the first aliases searched
const MEM_LIMIT = 20; // per term
const MSG_LIMIT = 20;

// Draws p's sections into el (none for a new person). Each call draws new
// sections: an answer for a person opened before lands in one no longer
// on the page.
export function about(el, app, p) {
  if (!p) { clear(el); return; }
  const node = h('div', { id: 'person-node' });
  const mems = h('div', { id: 'person-memories' });
  const msgs = h('div', { id: 'person-messages' });
  const section = (id, key, ...body) => h('section', { 'aria-labelledby': id }, h('h3', { id }, t(key)), ...body);
  clear(el,
    section('h-person-node', 'pp.node', node),
    section('h-person-memories', 'pp.memories', mems),
    section('h-person-messages', 'pp.messages', h('p', { class: 'meta' }, t('pp.messagesHint', { id: p.personId })), msgs));
  const open = (id) => app.go('memory', id);

  if (p.memoryNodeId) {
    load(node, () => api('GET', `nodes/${encodeURIComponent(p.memoryNodeId)}`), (({ node: n }) =>
      h('p', {}, h('button', { type: 'button', class: 'link', id: 'person-node-link', onclick: () => open(n.id) }, n.title),
        ' ', h('span', { class: 'meta' }, n.id))));
  } else {
    clear(node, empty(t('pp.noNode')));
  }

  const terms = [...new Set([p.name, ...(p.aliases || [])].map((x) => String(x ?? '').trim()).filter(Boolean))].slice(0, TERMS_MAX);
  load(mems, async () => {
    const pages = await Promise.all(terms.map((w) => api('GET', `find${qs({ keywords: [w], limit: MEM_LIMIT })}`)));
    const seen = new Map();
    for (const pg of pages) for (const n of pg.items) {
      const had = seen.get(n.id);
      if (had) had.matched = [...(had.matched || []), ...(n.matched || [])];
      else seen.set(n.id, { ...n });
    }
    const items = [...seen.values()].sort((a, b) => String(b.updatedAt).localeCompare(String(a.updatedAt)));
    return { items, more: pages.some((pg) => (pg.total ?? 0) > pg.items.length) };
  }, (({ items, more }) => [
    h('p', { class: 'meta', id: 'person-terms' }, t('pp.terms', { terms: terms.join('、') })),
    items.length ? roving(h('ul', { class: 'list', 'aria-labelledby': 'h-person-memories' }, items.map((n) => nodeItem(n, open))))
      : empty(t('pp.noMemories')),
    more ? h('p', { class: 'meta' }, t('pp.more', { n: MEM_LIMIT })) : null]));

  const page = (offset = 0) => load(msgs, () => api('GET', `messages${qs({ sender: p.personId, limit: MSG_LIMIT, offset })}`),
    ((pg) => [
      pg.items.length ? h('ol', { class: 'list', id: 'person-message-list' }, pg.items.map((m) => h('li', { 'data-id': m.id, 'data-conversation': m.conversation },
        h('div', { class: 'meta' }, convLink(app, m.conversation), ` · ${fmtTime(m.time)} · ${m.senderName ?? ''} · #${m.id}`,
          m.recalledAt ? ` · ${t('conv.recalled')}` : ''),
        h('div', { class: 'text' }, m.text ?? '')))) : empty(t('pp.noMessages')),
      pager(pg, offset, MSG_LIMIT, page)]),
    (e) => (e.status === 404 ? t('state.missingRoute') : ''));
  page(0);
}
