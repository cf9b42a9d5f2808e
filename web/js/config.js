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
import { load, errorBox, form as busyForm } from './ui.js';

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
  load(body, () => api('GET', 'config'), (cfg) => form(cfg, app, () => render(clear(root), app)));
}

function form(cfg, app, reload) {
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
  return busyForm({}, async () => {
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
      app.status(t('cfg.saved'));
      reload();
    } catch (err) { clear(msg, errorBox(err)); }
  },
  cfg.warning ? h('div', { class: 'notice' }, cfg.warning) : null,
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
  h('button', { type: 'submit', class: 'primary', id: 'c-save' }, t('action.save')), msg,
  Object.keys(others).length ? [h('h3', {}, t('cfg.others')), h('pre', {}, JSON.stringify(others, null, 2))] : null);
}
