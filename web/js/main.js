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

const panels = { memory, history, people, synonyms, config, conversations };
const main = document.getElementById('panel');
const statusEl = document.getElementById('status');
const tabs = document.getElementById('tabs');

// the token has done its work in the URL (the cookie and the meta tag
// carry it now): keep it out of the address bar and the history
if (new URLSearchParams(location.search).has('token'))
  history_replace(location.pathname + location.hash);
function history_replace(u) { window.history.replaceState(null, '', u); }

const app = {
  status(msg, kind = 'ok') {
    statusEl.className = msg ? `status-${kind}` : '';
    statusEl.setAttribute('role', kind === 'error' ? 'alert' : 'status');
    statusEl.textContent = msg || '';
  },
  go(panel, arg) {
    const hash = `#${panel}${arg ? `/${encodeURIComponent(arg)}` : ''}`;
    if (location.hash === hash) route(); else location.hash = hash;
  },
};

function current() {
  const [p, ...rest] = location.hash.replace(/^#/, '').split('/');
  return { id: panels[p] ? p : 'memory', arg: rest.length ? decodeURIComponent(rest.join('/')) : '' };
}

function drawTabs(active) {
  clear(tabs, Object.keys(panels).map((id) => h('button', {
    type: 'button', role: 'tab', id: `tab-${id}`, 'aria-selected': String(id === active),
    'aria-controls': 'panel', onclick: () => app.go(id),
  }, t(`tab.${id}`))));
}

function route() {
  const { id, arg } = current();
  app.status('');
  drawTabs(id);
  main.setAttribute('aria-labelledby', `tab-${id}`);
  main.dataset.panel = id;
  clear(main);
  panels[id].render(main, app, arg);
}

const langBtn = document.getElementById('lang');
function drawLang() {
  langBtn.textContent = getLang() === 'zh' ? 'English' : '中文';
  langBtn.setAttribute('aria-label', t('lang.switch'));
  document.documentElement.lang = getLang() === 'zh' ? 'zh-CN' : 'en';
  document.title = t('app.title');
  applyStatic(document);
}
langBtn.addEventListener('click', () => {
  setLang(getLang() === 'zh' ? 'en' : 'zh');
  drawLang();
  route();
});

// arrow keys move between tabs (the tablist pattern)
tabs.addEventListener('keydown', (e) => {
  if (e.key !== 'ArrowRight' && e.key !== 'ArrowLeft') return;
  const ids = Object.keys(panels);
  const i = ids.indexOf(current().id);
  const next = ids[(i + (e.key === 'ArrowRight' ? 1 : ids.length - 1)) % ids.length];
  app.go(next);
  requestAnimationFrame(() => document.getElementById(`tab-${next}`)?.focus());
});

window.addEventListener('hashchange', route);
drawLang();
route();
