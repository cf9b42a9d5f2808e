// conversation.js — one conversation in one place (issue 18, "per
// conversation"): the parts of #conversations/<key> that the
// Conversations panel (conversations.js) adds to its transcript, views and
// digest runs — the conversation's memories (its own scope, GET
// find?scope=<key>, and how many global memories it sees besides), its
// turns (GET turns?conversation=) — and a jump bar over the sections.
import { h, clear, fmtTime } from './dom.js';
import { api, qs } from './api.js';
import { t, has } from './i18n.js';
import { load, empty, pager, roving, recordedError } from './ui.js';
import { nodeItem } from './memory.js';

const MEM_LIMIT = 20;
// a status in the page's words where it has them, else as it is
const said = (prefix, v) => (has(`${prefix}.${v}`) ? t(`${prefix}.${v}`) : String(v ?? ''));
const TURN_LIMIT = 10;

// The jump bar: a button per section (id, heading key) that brings it
// into view and gives it the focus. Buttons, not #anchors: the address
// is the page's route.
export function jumpBar(sections) {
  return h('nav', { class: 'row jump', id: 'cv-jump', 'aria-label': t('cv.jump') }, sections.map(([id, key]) =>
    h('button', { type: 'button', 'data-to': id, onclick: () => {
      const el = document.getElementById(id);
      if (!el) return;
      el.scrollIntoView({ block: 'start' });
      el.focus({ preventScroll: true });
    } }, t(key))));
}

// The conversation's memories: its own (scope = key), a page at a time,
// then the global ones it sees besides (counted; listed on request). No
// other conversation's memory is visible from it (Q-SCOPE).
export function memoriesSection(key, app) {
  const own = h('div', { id: 'cv-memories' });
  const global = h('div', { id: 'cv-global' });
  const open = (id) => app.go('memory', id);
  const list = (el, scope, offset, again) => load(el,
    () => api('GET', `find${qs({ scope, limit: MEM_LIMIT, offset })}`), (page) => [
      page.items.length ? roving(h('ul', { class: 'list', 'aria-label': t(scope === 'global' ? 'cv.globalList' : 'cv.ownList') },
        page.items.map((n) => nodeItem(n, open)))) : empty(t(scope === 'global' ? 'cv.noGlobal' : 'cv.noOwn')),
      pager(page, offset, MEM_LIMIT, again)]);
  const ownPage = (offset = 0) => list(own, key, offset, ownPage);
  ownPage(0);
  // the global ones: their number first, the list behind a button
  const globalList = h('div', { id: 'cv-global-list', hidden: true });
  const globalPage = (offset = 0) => list(globalList, 'global', offset, globalPage);
  const toggle = h('button', { type: 'button', id: 'cv-global-toggle', 'aria-expanded': 'false', 'aria-controls': 'cv-global-list',
    onclick: () => {
      const show = globalList.hidden;
      globalList.hidden = !show;
      toggle.setAttribute('aria-expanded', String(show));
      toggle.textContent = t(show ? 'cv.globalHide' : 'cv.globalShow');
      if (show) globalPage(0);
    } }, t('cv.globalShow'));
  load(global, () => api('GET', `find${qs({ scope: 'global', limit: 1 })}`), (page) => [
    h('p', { class: 'meta', id: 'cv-global-count' }, t('cv.globalCount', { count: page.total ?? 0 })),
    page.total ? toggle : null]);
  return h('section', { id: 'cv-sec-memories', tabindex: '-1', 'aria-labelledby': 'h-cv-memories' },
    h('h3', { id: 'h-cv-memories' }, t('cv.memories')),
    h('p', { class: 'meta' }, t('cv.ownScope', { key })), own, global, globalList);
}

// The conversation's turns (the bot's replies), newest first: when, how it
// ended, the reply, what was recalled (linked) and the tool calls.
export function turnsSection(key, app) {
  const out = h('div', { id: 'cv-turns' });
  const page = (offset = 0) => load(out, () => api('GET', `turns${qs({ conversation: key, limit: TURN_LIMIT, offset })}`), (p) => [
    p.items.length ? h('ol', { class: 'list' }, p.items.map((r) => turn(r, app))) : empty(t('cv.noTurns')),
    pager(p, offset, TURN_LIMIT, page)], (e) => (e.status === 404 ? t('state.missingRoute') : ''));
  page(0);
  return h('section', { id: 'cv-sec-turns', tabindex: '-1', 'aria-labelledby': 'h-cv-turns' },
    h('h3', { id: 'h-cv-turns' }, t('cv.turns')), out);
}

function turn(r, app) {
  const calls = r.toolCalls ?? [];
  const recalled = r.recalled ?? [];
  return h('li', { class: 'record turn', 'data-turn': r.id, 'data-status': r.status },
    h('div', {}, h('strong', {}, `#${r.id}`), ' ',
      h('span', { class: `tag ${r.status === 'ok' ? '' : 'sup'}` }, said('cv.turnStatus', r.status)), ' ',
      h('span', { class: 'meta' }, [fmtTime(r.startedAt), t('cv.turnCalls', { count: calls.length }),
        r.modelMs != null ? t('chat.modelMs', { ms: r.modelMs }) : ''].filter(Boolean).join(' · '))),
    r.reply ? h('div', { class: 'text reply' }, r.reply) : null,
    recordedError(r.error), // worded from its code, the server's sentence marked
    recalled.length ? h('div', { class: 'meta turn-recalled' }, `${t('cv.turnRecalled')}${t('colon')}`,
      recalled.map((id, i) => [i ? ', ' : '', h('button', { type: 'button', class: 'link', onclick: () => app.go('memory', id) }, id)])) : null,
    calls.length ? h('ul', { class: 'list turn-calls' }, calls.map((c) => h('li', { 'data-tool': c.name },
      h('code', {}, c.name), ' ', h('span', { class: 'meta' }, `${said('cv.callStatus', c.status)} · ${c.ms ?? 0} ms`)))) : null);
}
