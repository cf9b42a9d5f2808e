// recall.js — the Recall preview panel (issue 18): type a message, pick a
// conversation and a speaker, and see what the bot would get for it — the
// recall header exactly as a turn builds it, every candidate with the
// scores `zcor recall --explain` gives and why it was kept or cut, and
// the system prefix with the important memories. One call,
// POST recall/preview (zcor_recall_preview: the turn's own request and
// recall; no hit is counted). Each memory links to it, each person too.
import { h, clear, field, splitList } from './dom.js';
import { api } from './api.js';
import { t, has, getLang } from './i18n.js';
import { errorBox, form, loading } from './ui.js';

const FEATURES = ['entity', 'lexical', 'feedback', 'context', 'recency', 'salience', 'sectionPrior', 'expired'];

export function render(root, app) {
  const text = h('textarea', { id: 'rp-text', required: true, rows: 3, placeholder: t('rp.textHint') });
  const conv = h('input', { type: 'text', id: 'rp-conv', list: 'rp-conv-keys', value: 'console:web', required: true, placeholder: 'group:100000001' });
  const keys = h('datalist', { id: 'rp-conv-keys' });
  api('GET', 'conversations').then((d) => keys.append(...(d.items || []).map((c) => h('option', { value: c.key })))).catch(() => {});
  const sid = h('input', { type: 'text', id: 'rp-speaker', placeholder: '12345' });
  const sname = h('input', { type: 'text', id: 'rp-speaker-name' });
  const mentions = h('input', { type: 'text', id: 'rp-mentions', placeholder: t('mem.keywordsHint') });
  const out = h('div', { id: 'rp-out', 'aria-live': 'polite' });
  root.append(h('section', { class: 'card', 'aria-labelledby': 'h-rp' },
    h('h2', { id: 'h-rp' }, t('tab.recall')),
    h('p', { class: 'meta' }, t('rp.help')),
    form({ id: 'rp-form' }, async () => {
      loading(out);
      try {
        const r = await api('POST', 'recall/preview', { conversation: conv.value.trim(), text: text.value,
          senderId: sid.value.trim(), senderName: sname.value.trim(), mentions: splitList(mentions.value) });
        clear(out, result(r, app));
      } catch (e) { clear(out, errorBox(e)); }
    },
    field(t('rp.text'), text),
    h('div', { class: 'row' }, field(t('hist.conversation'), conv), keys, field(t('rp.speaker'), sid),
      field(t('rp.speakerName'), sname), field(t('rp.mentions'), mentions)),
    h('button', { type: 'submit', class: 'primary', id: 'rp-go' }, t('rp.go'))),
    out));
}

const num = (x) => (typeof x === 'number' ? x.toFixed(3) : '—');
// recall's reasons are English: the Chinese page has words for each
const why = (w) => (getLang() === 'zh' && has(`rp.why.${w}`) ? t(`rp.why.${w}`) : w || '—');

// a memory or a person, linked to where it is edited
function target(x, app) {
  if (x.kind === 'person')
    return h('button', { type: 'button', class: 'link', onclick: () => app.go('people', x.personId) }, `${x.name ?? x.personId} (${x.personId})`);
  if (x.id)
    return h('button', { type: 'button', class: 'link', onclick: () => app.go('memory', x.id) }, `${x.title ?? x.id} (${x.id})`);
  return h('span', {}, x.title ?? x.path ?? x.kind ?? '—');
}

function result(r, app) {
  const cands = r.explain || [];
  const kept = cands.filter((x) => x.included).length;
  return [
    h('p', { id: 'rp-summary' }, r.disabled ? t('rp.disabled')
      : t('rp.summary', { kept, cut: cands.length - kept, used: r.used, budget: r.budget, profile: t(`cfg.profile.${r.profile}`) })),
    r.terms?.length ? h('p', { class: 'meta' }, `${t('rp.terms')}${t('colon')}${r.terms.join('、')}`,
      r.expandedTerms?.length > r.terms.length ? ` · ${t('rp.expanded')}${t('colon')}${r.expandedTerms.join('、')}` : '') : null,
    h('h3', {}, t('rp.header')),
    r.header ? h('pre', { id: 'rp-header', class: 'text' }, r.header) : h('p', { class: 'empty', id: 'rp-header-empty' }, t('rp.noHeader')),
    h('h3', {}, t('rp.candidates')),
    cands.length ? h('div', { class: 'scroll' }, h('table', { id: 'rp-cands', class: 'diff-table' },
      h('caption', { class: 'meta' }, r.formula?.score ?? ''),
      h('thead', {}, h('tr', {}, [t('rp.item'), t('rp.outcome'), t('rp.why'), t('rp.score'), ...FEATURES.map((f) => t(`rp.f.${f}`))]
        .map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, cands.map((x) => h('tr', { class: x.included ? 'kept' : 'cut', 'data-id': x.id ?? x.personId ?? '' },
        h('th', { scope: 'row' }, target(x, app)),
        h('td', {}, h('span', { class: `tag ${x.included ? 'st-ok' : 'st-error'}` }, x.included ? t('rp.kept') : t('rp.cut'))),
        h('td', {}, why(x.why)), h('td', {}, num(x.score)),
        FEATURES.map((f) => h('td', {}, num(x.features?.[f])))))))) : h('p', { class: 'empty' }, t('rp.noCandidates')),
    h('h3', {}, t('rp.prefix')),
    important(r.prefix || '', app),
    h('details', {}, h('summary', {}, t('rp.prefixFull')), h('pre', { id: 'rp-prefix', class: 'text' }, r.prefix || '')),
  ];
}

// The important memories of the prefix ("1. [id] title：content"), linked.
function important(prefix, app) {
  const at = prefix.indexOf('## 重要记忆');
  const lines = at < 0 ? [] : prefix.slice(at).split('\n').slice(1).filter((l) => /^\d+\. \[/.test(l));
  if (!lines.length) return h('p', { class: 'empty', id: 'rp-important-empty' }, t('rp.noImportant'));
  return h('ol', { id: 'rp-important' }, lines.map((l) => {
    const m = /^\d+\. \[([^\]]+)\] ([^：]*)：?(.*)$/.exec(l);
    return h('li', {}, m ? [h('button', { type: 'button', class: 'link', onclick: () => app.go('memory', m[1]) }, `${m[2]} (${m[1]})`), ' ', h('span', { class: 'meta' }, m[3])] : l);
  }));
}
