// main.js — the Memory page: tabs (one per panel, routed by location.hash),
// the language switch, the status line. Panels live in their own modules
// and render into <main>; each exports render(root, app, arg).
import { h, clear } from './dom.js';
import { t, getLang, setLang, applyStatic } from './i18n.js';
import * as memory from './memory.js';
import * as history from './history.js';
import * as people from './people.js';
import * as synonyms from './synonyms.js';
import * as config from './config.js';
import * as conversations from './conversations.js';
import * as chat from './chat.js';
import * as recall from './recall.js';
// the Backups and Stats panels (issue 18)
import * as backups from './backups.js';
import * as stats from './stats.js';

const panels = { memory, recall, history, people, synonyms, config, conversations, chat };
// the Backups and Stats panels (issue 18)
Object.assign(panels, { backups, stats });
const main = document.getElementById('panel');
const statusEl = document.getElementById('status');
const tabs = document.getElementById('tabs');

// the token has done its work in the URL (the cookie and the meta tag
// carry it now): keep it out of the address bar and the history
if (new URLSearchParams(location.search).has('token'))
  history_replace(location.pathname + location.hash);
function history_replace(u) { window.history.replaceState(null, '', u); }

// The panel on screen ({ id, view }: view is what its render returned;
// a view with show(arg) takes a new arg without being redrawn, so a
// search and its page survive opening another record) and a status
// message waiting for the next route (app.go's status).
let shown = null;
let pending = null;
// Editors with changes not saved (key → the editor's element): leaving
// them (another tab, another memory, the language, closing the page) is
// asked first (issue 18). An editor no longer on the page counts no more.
const unsaved = new Map();
let routed = location.hash; // the address the panel on screen was drawn for
function anyUnsaved() {
  for (const [k, el] of unsaved) if (!el.isConnected) unsaved.delete(k);
  return unsaved.size > 0;
}
window.addEventListener('beforeunload', (e) => {
  if (!anyUnsaved()) return;
  e.preventDefault();
  e.returnValue = '';
});

const app = {
  status(msg, kind = 'ok') {
    // one line at a time: a new message replaces an error still shown
    // from before (issue 18); errorBox clears this line in turn
    if (msg) for (const el of main.querySelectorAll('.error[role=alert]')) el.remove();
    statusEl.className = msg ? `status-${kind}` : '';
    statusEl.setAttribute('role', kind === 'error' ? 'alert' : 'status');
    statusEl.textContent = msg || '';
  },
  // status: a message to show once there (every route clears the line);
  // fresh: draw the panel anew even when it is on screen.
  go(panel, arg, { status, fresh } = {}) {
    pending = { status, fresh };
    const hash = `#${panel}${arg ? `/${encodeURIComponent(arg)}` : ''}`;
    if (location.hash === hash) route(); else location.hash = hash;
  },
  // an editor tells it has changes (el) or has none any more (null)
  unsaved(key, el) { if (el) unsaved.set(key, el); else unsaved.delete(key); },
  // true when nothing unsaved would be lost, or the operator agreed to
  // lose it; asked once
  mayLeave() {
    if (!anyUnsaved()) return true;
    if (!window.confirm(t('unsaved.ask'))) return false;
    unsaved.clear();
    return true;
  },
};

function current() {
  const [p, ...rest] = location.hash.replace(/^#/, '').split('/');
  return { id: panels[p] ? p : 'memory', arg: rest.length ? decodeURIComponent(rest.join('/')) : '' };
}

// The tablist pattern: only the selected tab is in the Tab order (the
// arrow keys move between them), and a tab that had the focus keeps it
// when the tabs are drawn again (issue 18: the arrows lost it).
function drawTabs(active) {
  const focused = tabs.contains(document.activeElement);
  tabs.setAttribute('aria-label', t('nav.panels'));
  clear(tabs, Object.keys(panels).map((id) => h('button', {
    type: 'button', role: 'tab', id: `tab-${id}`, 'aria-selected': String(id === active),
    tabindex: id === active ? '0' : '-1',
    'aria-controls': 'panel', onclick: () => app.go(id, '', { fresh: true }),
  }, t(`tab.${id}`))));
  if (focused) document.getElementById(`tab-${active}`)?.focus();
}

function route(fresh = false) {
  if (!app.mayLeave()) { // staying: the address goes back to what is shown
    pending = null;
    if (location.hash !== routed) history_replace(location.pathname + location.search + routed);
    return;
  }
  routed = location.hash;
  const { id, arg } = current();
  const p = pending || {};
  pending = null;
  app.status(p.status || '');
  drawTabs(id);
  if (!fresh && !p.fresh && shown?.id === id && shown.view?.show) {
    shown.view.show(arg);
    return;
  }
  main.setAttribute('aria-labelledby', `tab-${id}`);
  main.dataset.panel = id;
  clear(main);
  shown = { id, view: panels[id].render(main, app, arg) };
}

// The button names the other language in that language; its accessible
// name starts with that visible text (WCAG 2.5.3) and says what it does.
const langBtn = document.getElementById('lang');
function drawLang() {
  const other = getLang() === 'zh' ? 'en' : 'zh';
  clear(langBtn, h('span', { lang: other === 'en' ? 'en' : 'zh-CN' }, other === 'en' ? 'English' : '中文'),
    h('span', { class: 'sr-only' }, ` ${t('lang.switch')}`));
  document.documentElement.lang = getLang() === 'zh' ? 'zh-CN' : 'en';
  document.title = t('app.title');
  applyStatic(document);
}
langBtn.addEventListener('click', () => {
  if (!app.mayLeave()) return;
  setLang(getLang() === 'zh' ? 'en' : 'zh');
  drawLang();
  route(true);
});

// arrow keys move between tabs (the tablist pattern)
tabs.addEventListener('keydown', (e) => {
  if (e.key !== 'ArrowRight' && e.key !== 'ArrowLeft') return;
  const ids = Object.keys(panels);
  const i = ids.indexOf(current().id);
  const next = ids[(i + (e.key === 'ArrowRight' ? 1 : ids.length - 1)) % ids.length];
  e.preventDefault();
  app.go(next); // drawTabs moves the focus to it
});

window.addEventListener('hashchange', () => route());
drawLang();
route(true);
