// config.js — the Config panel: recall budget (recallChars), relationship
// memory on/off, recall profile; the conversation settings (bot id,
// admission, media cache) and the memory files' limits and mirror; the
// long-term memory and its digest agent (memory, digestAtHour,
// digestMinLines, digestMaxChars, digestTimeoutMs, digestCatchUp,
// timeZone; docs/DIGEST.md). Every value is checked by the server, which
// names the field; the page sends what was typed (a blank number as "").
// Settings this page does not know yet are shown read-only, so new ones
// appear as they are added.
import { h, clear, field, splitList } from './dom.js';
import { api } from './api.js';
import { t } from './i18n.js';
import { load, errorBox, form as busyForm, fileWarning } from './ui.js';

const KNOWN = ['recallChars', 'relationships', 'recall', 'botId', 'admission', 'mediaCacheMax',
  'memoryFileMaxBytes', 'memoryArchiveRatio', 'viewMaxBytes', 'mirror',
  'memory', 'digestAtHour', 'digestMinLines', 'digestMaxChars', 'digestTimeoutMs', 'digestCatchUp', 'timeZone'];

// What a number input holds, for the server to check: "" when blank (so
// the server says the field is missing a number, instead of a 0 sent).
const typed = (input) => (input.value.trim() === '' ? '' : Number(input.value));

// A number input for key; its value goes back as a number.
function num(id, value, step = 1) {
  return h('input', { type: 'number', id, step, value: value ?? '' });
}

export function render(root, app) {
  const body = h('div');
  root.append(h('section', { class: 'card', 'aria-labelledby': 'h-config' }, h('h2', { id: 'h-config' }, t('tab.config')), body));
  // the keys' rules (GET config/fields) check every number box before
  // anything is sent; an older server without them: the server checks
  load(body, () => Promise.all([api('GET', 'config'), api('GET', 'config/fields').catch(() => ({ fields: [] }))]),
    ([cfg, rules]) => form(cfg, app, () => render(clear(root), app), Object.fromEntries(rules.fields.map((f) => [f.field, f]))));
}

// The config key of a control: data-key, else its id without "c-"
// (c-recallChars → recallChars), so a new number row is checked as it is
// added.
const keyOf = (el) => el.dataset.key || el.id.replace(/^c-/, '');
const labelOf = (el) => el.labels?.[0]?.textContent.trim() || keyOf(el);

// What is wrong with a number box's value under rule, in the page's
// words, or '' when nothing is.
function numberProblem(el, rule) {
  const v = el.value.trim();
  const range = rule && rule.min !== undefined ? t(rule.type === 'integer' ? 'cfg.err.intRange' : 'cfg.err.numRange', { min: rule.min, max: rule.max }) : '';
  if (v === '') return t('cfg.err.blank', { range });
  const n = Number(v);
  if (!Number.isFinite(n) || (rule?.type === 'integer' && !Number.isInteger(n))) return t(rule?.type === 'integer' ? 'cfg.err.notInt' : 'cfg.err.notNum', { range });
  if (rule && rule.min !== undefined && (n < rule.min || n > rule.max)) return t('cfg.err.range', { range });
  return '';
}

// Marks el invalid with problem (or clears it), the message tied to it.
function mark(el, problem) {
  let note = document.getElementById(`${el.id}-err`);
  if (!problem) {
    el.removeAttribute('aria-invalid');
    el.removeAttribute('aria-describedby');
    note?.remove();
    return;
  }
  el.setAttribute('aria-invalid', 'true');
  if (!note) {
    note = h('p', { class: 'field-error', id: `${el.id}-err` });
    el.after(note);
  }
  note.textContent = `${labelOf(el)}${t('colon')}${problem}`;
  el.setAttribute('aria-describedby', note.id);
}

// The server's refusal of a value (details.field, docs/API.md) in the
// page's words, at its box when the page has one.
function serverProblem(formEl, err, rules) {
  const d = err.details || {};
  if (!d.field) return null;
  const el = [...formEl.querySelectorAll('input, select')].find((x) => keyOf(x) === d.field || (x.id === 'c-profile' && d.field === 'recall.profile'));
  const rule = rules[d.field] || d;
  const range = rule.min !== undefined ? t(rule.type === 'integer' ? 'cfg.err.intRange' : 'cfg.err.numRange', { min: rule.min, max: rule.max }) : '';
  const words = d.reason === 'unknown' ? t('cfg.err.unknown')
    : rule.type === 'integer' || rule.type === 'number' ? t('cfg.err.range', { range })
      : rule.type === 'boolean' ? t('cfg.err.bool')
        : rule.type === 'enum' ? t('cfg.err.enum', { values: (rule.values || []).join(' / ') })
          : t('cfg.err.value');
  if (el) mark(el, words);
  return `${el ? labelOf(el) : d.field}${t('colon')}${words}`;
}

function form(cfg, app, reload, rules = {}) {
  const chars = h('input', { type: 'number', id: 'c-recallChars', step: 1, value: cfg.recallChars });
  const rel = h('input', { type: 'checkbox', id: 'c-relationships', checked: cfg.relationships });
  const profile = h('select', { id: 'c-profile' }, ['zcor', 'scored'].map((p) =>
    h('option', { value: p, selected: cfg.recall?.profile === p }, t(`cfg.profile.${p}`))));
  const adm = cfg.admission || {};
  const botId = h('input', { type: 'text', id: 'c-botId', value: cfg.botId ?? '' });
  const priv = h('input', { type: 'checkbox', id: 'c-privateChats', checked: adm.privateChats !== false });
  const groups = h('input', { type: 'text', id: 'c-groups', value: (adm.groups || []).join(', ') });
  const privates = h('input', { type: 'text', id: 'c-privates', value: (adm.privates || []).join(', ') });
  const media = num('c-mediaCacheMax', cfg.mediaCacheMax);
  const memMax = num('c-memoryFileMaxBytes', cfg.memoryFileMaxBytes);
  const ratio = num('c-memoryArchiveRatio', cfg.memoryArchiveRatio, 0.05);
  const viewMax = num('c-viewMaxBytes', cfg.viewMaxBytes);
  const mirror = h('input', { type: 'checkbox', id: 'c-mirror', checked: !!cfg.mirror });
  const digest = 'digestAtHour' in cfg;
  const memory = h('input', { type: 'checkbox', id: 'c-memory', checked: cfg.memory !== false });
  const atHour = num('c-digestAtHour', cfg.digestAtHour);
  const minLines = num('c-digestMinLines', cfg.digestMinLines);
  const maxChars = num('c-digestMaxChars', cfg.digestMaxChars);
  const timeout = num('c-digestTimeoutMs', cfg.digestTimeoutMs);
  const catchUp = h('input', { type: 'checkbox', id: 'c-digestCatchUp', checked: cfg.digestCatchUp !== false });
  const zone = h('input', { type: 'text', id: 'c-timeZone', value: cfg.timeZone ?? '', placeholder: 'Asia/Shanghai' });
  const list = (input) => { const v = splitList(input.value); return v.length ? v : null; };
  const msg = h('div');
  const others = Object.fromEntries(Object.entries(cfg).filter(([k]) => !KNOWN.includes(k) && k !== 'warning'));
  const confirmOff = h('div');
  let offConfirmed = false;
  // a change not saved is asked about before it is lost (main.js);
  // saving, or 放弃修改, clears it
  const leave = () => app.unsaved('config', null);
  const formEl = busyForm({ novalidate: true }, async (formEl) => {
    clear(msg);
    app.status('');
    // every number box checked first: nothing is sent while one is wrong
    const wrong = [];
    for (const el of formEl.querySelectorAll('input[type=number]')) {
      const problem = numberProblem(el, rules[keyOf(el)]);
      mark(el, problem);
      if (problem) wrong.push(el);
    }
    if (wrong.length) {
      clear(msg, h('div', { class: 'error', role: 'alert' }, t('cfg.err.fix'), h('ul', {}, wrong.map((el) => h('li', {}, `${labelOf(el)}${t('colon')}${numberProblem(el, rules[keyOf(el)])}`)))));
      wrong[0].focus();
      return;
    }
    // turning auto-recall off is asked once more
    if (Number(chars.value) === 0 && cfg.recallChars > 0 && !offConfirmed) {
      const yes = h('button', { type: 'button', class: 'danger', id: 'c-confirm-off', onclick: () => { offConfirmed = true; clear(confirmOff); formEl.requestSubmit(); } }, t('cfg.offYes'));
      clear(confirmOff, h('div', { class: 'notice', role: 'alert' }, t('cfg.offAsk'), ' ', yes, ' ',
        h('button', { type: 'button', id: 'c-confirm-cancel', onclick: () => { clear(confirmOff); chars.focus(); } }, t('action.cancel'))));
      yes.focus();
      return;
    }
    offConfirmed = false;
    try {
      const patch = { recallChars: Number(chars.value), relationships: rel.checked, recall: { profile: profile.value } };
      if ('botId' in cfg) {
        patch.botId = botId.value.trim() || null;
        patch.admission = { privateChats: priv.checked, groups: list(groups), privates: list(privates) };
        patch.mediaCacheMax = Number(media.value);
      }
      if ('memoryFileMaxBytes' in cfg) {
        patch.memoryFileMaxBytes = Number(memMax.value);
        patch.memoryArchiveRatio = Number(ratio.value);
        patch.viewMaxBytes = Number(viewMax.value);
        patch.mirror = mirror.checked;
      }
      if (digest) {
        Object.assign(patch, {
          memory: memory.checked, digestAtHour: typed(atHour), digestMinLines: typed(minLines),
          digestMaxChars: typed(maxChars), digestTimeoutMs: typed(timeout), digestCatchUp: catchUp.checked,
          timeZone: zone.value.trim() || null,
        });
      }
      await api('PUT', 'config', patch);
      leave();
      app.status(t('cfg.saved'));
      reload();
    } catch (err) {
      const words = serverProblem(formEl, err, rules);
      clear(msg, words ? h('div', { class: 'error', role: 'alert' }, t('cfg.err.refused'), ' ', words) : errorBox(err));
    }
  },
  cfg.warning ? fileWarning('cfg-warning', t('cfg.fileWarning'), cfg.warning) : null,
  field(t('cfg.recallChars'), chars), h('p', { class: 'meta' }, t('cfg.recallCharsHelp')),
  h('div', {}, h('label', { for: 'c-relationships' }, rel, ' ', t('cfg.relationships'))), h('p', { class: 'meta' }, t('cfg.relationshipsHelp')),
  field(t('cfg.profile'), profile),
  'botId' in cfg || 'memoryFileMaxBytes' in cfg ? h('fieldset', {}, h('legend', {}, t('cfg.qq')),
    'botId' in cfg ? [field(t('cfg.botId'), botId),
      h('div', {}, h('label', { for: 'c-privateChats' }, priv, ' ', t('cfg.privateChats'))),
      field(t('cfg.groups'), groups), field(t('cfg.privates'), privates),
      field(t('cfg.mediaCacheMax'), media)] : null,
    'memoryFileMaxBytes' in cfg ? [field(t('cfg.memoryFileMaxBytes'), memMax),
      field(t('cfg.memoryArchiveRatio'), ratio), field(t('cfg.viewMaxBytes'), viewMax),
      h('div', {}, h('label', { for: 'c-mirror' }, mirror, ' ', t('cfg.mirror')))] : null) : null,
  digest ? h('fieldset', {}, h('legend', {}, t('cfg.digest')),
    h('div', {}, h('label', { for: 'c-memory' }, memory, ' ', t('cfg.memory'))), h('p', { class: 'meta' }, t('cfg.memoryHelp')),
    field(t('cfg.digestAtHour'), atHour), field(t('cfg.digestMinLines'), minLines),
    field(t('cfg.digestMaxChars'), maxChars), field(t('cfg.digestTimeoutMs'), timeout),
    h('div', {}, h('label', { for: 'c-digestCatchUp' }, catchUp, ' ', t('cfg.digestCatchUp'))),
    field(t('cfg.timeZone'), zone), h('p', { class: 'meta' }, t('cfg.timeZoneHelp'))) : null,
  h('div', { class: 'row' }, h('button', { type: 'submit', class: 'primary', id: 'c-save' }, t('action.save')),
    h('button', { type: 'button', id: 'c-cancel', onclick: () => { leave(); reload(); } }, t('cfg.cancel'))), confirmOff, msg,
  Object.keys(others).length ? [h('h3', {}, t('cfg.others')), h('pre', {}, JSON.stringify(others, null, 2))] : null);
  formEl.addEventListener('input', () => app.unsaved('config', formEl));
  return formEl;
}
