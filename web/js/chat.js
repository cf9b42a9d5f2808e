// chat.js — the Chat panel: talk to the bot in a console conversation
// (console:web by default, the other console:* ones from the conversation
// list) through POST /api/v1/chat. The reply streams in; under each reply
// what was recalled and every tool call, expandable, and a memory the
// model wrote or changed links to it. Only console conversations: a
// group's or private chat's turn belongs to its world (docs/TURN.md).
// Everything from the server or the model goes in as text.
import { h, clear } from './dom.js';
import { api, qs, stream } from './api.js';
import { t } from './i18n.js';
import { empty, errorBox, busy } from './ui.js';

const DEFAULT = 'console:web';
// tools whose result names the memory they wrote or changed
const WRITES = new Set(['zcor_memory_write', 'zcor_memory_merge', 'zcor_memory_supersede', 'zcor_memory_important']);
const MEMORY_ID = /^m[0-9]+$/;

let chosen = DEFAULT; // kept while the page is open

export function render(root, app) {
  const select = h('select', { id: 'chat-conv' });
  const notice = h('div', { id: 'chat-notice' });
  const log = h('div', { id: 'chat-log', 'aria-live': 'polite' });
  const input = h('textarea', { id: 'chat-text', rows: 3, required: true });
  const sendForm = h('form', { id: 'chat-form', onsubmit: (e) => { e.preventDefault(); busy(sendForm, send); } },
    h('label', { for: 'chat-text' }, t('chat.message')), input,
    h('div', { class: 'row' }, h('button', { type: 'submit', class: 'primary' }, t('chat.send'))));
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); sendForm.requestSubmit(); }
  });
  root.append(h('section', { class: 'card chat', 'aria-labelledby': 'h-chat' },
    h('h2', { id: 'h-chat' }, t('tab.chat')),
    h('div', { class: 'row' }, h('div', {}, h('label', { for: 'chat-conv' }, t('chat.conversation')), select)),
    notice, log, sendForm));

  function fillConversations(keys) {
    const all = [...new Set([DEFAULT, chosen, ...keys])];
    clear(select, all.map((k) => h('option', { value: k, selected: k === chosen }, k)));
  }
  fillConversations([]);
  api('GET', 'conversations').then((d) => fillConversations(d.items.map((c) => c.key).filter((k) => k.startsWith('console:'))))
    .catch(() => {});
  select.addEventListener('change', () => { chosen = select.value; loadTurns(); });
  api('GET', 'config').then((cfg) => { if (!cfg?.provider?.baseUrl) showNoProvider(); }).catch(() => {});

  function showNoProvider() {
    clear(notice, h('p', { class: 'notice', id: 'chat-no-provider' }, t('chat.noProvider')));
  }

  // the conversation's recent turns, oldest first
  async function loadTurns() {
    clear(log);
    let page;
    try {
      page = await api('GET', `turns${qs({ conversation: chosen, limit: 10 })}`);
    } catch (e) {
      log.append(errorBox(e));
      return;
    }
    if (!page.items.length) log.append(empty(t('chat.empty')));
    for (const rec of page.items.slice().reverse()) {
      const ex = exchange(null);
      ex.finish(rec);
    }
  }

  // One exchange on screen: the operator's text, the reply as it streams,
  // then the recalled memories and the tool calls.
  function exchange(text) {
    log.querySelector('.empty')?.remove();
    const reply = h('div', { class: 'text reply' });
    const calls = h('ol', { class: 'list calls' });
    const callsBox = h('details', { class: 'tools' }, h('summary', {}, t('chat.tools', { n: 0 })), calls);
    const recalled = h('details', { class: 'recalled' }, h('summary', {}, t('chat.recalled', { n: 0 })));
    const status = h('p', { class: 'meta' }, t('chat.thinking'));
    const el = h('article', { class: 'exchange' },
      text !== null ? [h('div', { class: 'meta' }, t('chat.you')), h('div', { class: 'text mine' }, text)] : null,
      h('div', { class: 'meta' }, t('chat.bot')), reply, status, recalled, callsBox);
    log.append(el);
    let streamed = '';
    let n = 0;
    const running = [];
    const setCount = () => { callsBox.firstChild.textContent = t('chat.tools', { n }); };
    return {
      delta(s) { streamed += s; reply.textContent = streamed; },
      toolStart(d) {
        const li = h('li', { class: 'call' }, h('code', {}, d.name), ' ', h('span', { class: 'tag' }, t('chat.running')),
          h('pre', { class: 'args' }, pretty(d.arguments)));
        running.push(li);
        calls.append(li);
        n += 1;
        setCount();
      },
      toolEnd(d) {
        const li = running.shift();
        if (!li) return;
        clear(li, callLine(d.name, d.status), h('pre', { class: 'args' }, pretty(d.arguments)),
          memoryLinks(d.name, d.result), d.result ? h('details', {}, h('summary', {}, t('chat.result')), h('pre', {}, pretty(d.result))) : null);
      },
      // rec: the turn's result or record
      finish(rec) {
        reply.textContent = rec.reply ?? streamed;
        if (rec.idle) reply.textContent = t('chat.idle');
        status.textContent = [rec.startedAt ? new Date(rec.startedAt).toLocaleString() : '',
          rec.modelMs != null ? t('chat.modelMs', { ms: rec.modelMs }) : '',
          rec.limit ? t('chat.limit', { limit: rec.limit }) : '',
          rec.error ? `${t('state.error')}${t('colon')}${rec.error.message}` : ''].filter(Boolean).join(' · ');
        const ids = rec.recalled || [];
        recalled.firstChild.textContent = t('chat.recalled', { n: ids.length });
        recalled.append(ids.length ? h('ul', { class: 'list' }, ids.map((id) => h('li', {}, memoryLink(id)))) : empty(t('chat.none')));
        // calls refused without running came in no event: the record has them all
        const tc = rec.toolCalls || [];
        if (tc.length !== calls.children.length) {
          clear(calls, tc.map((c) => h('li', { class: 'call' }, callLine(c.name, c.status, c.ms),
            h('pre', { class: 'args' }, pretty(c.arguments)), c.error ? h('div', { class: 'error' }, c.error) : null)));
        }
        n = tc.length || calls.children.length;
        setCount();
      },
      fail(e) {
        status.replaceWith(errorBox(e));
        if (!streamed) reply.textContent = e?.details?.apology || '';
      },
    };
  }

  function callLine(name, st, ms) {
    return h('div', {}, h('code', {}, name), ' ', h('span', { class: `tag st-${st}` }, t(`chat.status.${st}`)),
      ms != null ? h('span', { class: 'meta' }, ` ${ms} ms`) : null);
  }

  function memoryLink(id) {
    return h('button', { type: 'button', class: 'link memlink', onclick: () => app.go('memory', id) }, id);
  }

  // the memories a write's result names (its id, or its node's)
  function memoryLinks(name, result) {
    if (!WRITES.has(name) || !result) return null;
    let r;
    try { r = JSON.parse(result); } catch { return null; }
    const ids = new Set();
    const take = (o) => { if (o && typeof o === 'object') for (const k of ['id', 'newId', 'mergedId']) if (MEMORY_ID.test(String(o[k] ?? ''))) ids.add(o[k]); };
    take(r); take(r?.node); take(r?.result);
    if (!ids.size) return null;
    return h('p', {}, `${t('chat.changed')} `, [...ids].map((id) => [memoryLink(id), ' ']));
  }

  async function send() {
    const text = input.value.trim();
    if (!text) return;
    const ex = exchange(text);
    input.value = '';
    try {
      await stream('chat', { conversation: chosen, text }, (name, d) => {
        if (name === 'delta') ex.delta(d.text);
        else if (name === 'tool' && d.phase === 'start') ex.toolStart(d);
        else if (name === 'tool') ex.toolEnd(d);
        else if (name === 'turn') ex.finish(d);
        else if (name === 'error') ex.fail(Object.assign(new Error(d.error?.message), { code: d.error?.code, details: d.error?.details || {} }));
      });
    } catch (e) {
      if (e.code === 'no_provider') { showNoProvider(); input.value = text; }
      ex.fail(e);
    }
  }

  loadTurns();
  return {};
}

function pretty(s) {
  try { return JSON.stringify(JSON.parse(s), null, 2); } catch { return String(s ?? ''); }
}
