// config.js — the Config panel: recall budget (recallChars), relationship
// memory on/off, recall profile. Settings this page does not know yet are
// shown read-only, so new ones appear as they are added.
import { h, clear, field } from './dom.js';
import { api } from './api.js';
import { t } from './i18n.js';
import { load, errorBox } from './ui.js';

const KNOWN = ['recallChars', 'relationships', 'recall'];

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
  const msg = h('div');
  const others = Object.fromEntries(Object.entries(cfg).filter(([k]) => !KNOWN.includes(k) && k !== 'warning'));
  return h('form', { onsubmit: async (e) => {
    e.preventDefault();
    try {
      await api('PUT', 'config', { recallChars: Number(chars.value), relationships: rel.checked, recall: { profile: profile.value } });
      app.status(t('cfg.saved'));
      reload();
    } catch (err) { clear(msg, errorBox(err)); }
  } },
  cfg.warning ? h('div', { class: 'notice' }, cfg.warning) : null,
  field(t('cfg.recallChars'), chars), h('p', { class: 'meta' }, t('cfg.recallCharsHelp')),
  h('div', {}, h('label', { for: 'c-relationships' }, rel, ' ', t('cfg.relationships'))), h('p', { class: 'meta' }, t('cfg.relationshipsHelp')),
  field(t('cfg.profile'), profile),
  h('button', { type: 'submit', class: 'primary', id: 'c-save' }, t('action.save')), msg,
  Object.keys(others).length ? [h('h3', {}, t('cfg.others')), h('pre', {}, JSON.stringify(others, null, 2))] : null);
}
