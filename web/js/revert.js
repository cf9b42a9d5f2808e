// revert.js — History's 撤销此更改 / "Revert this change" (issue 18): on a
// record of a change, a button that asks first, then reverts it as a new
// recorded change (POST history/{seq}/revert, actor ui). The server
// decides what can be reverted (src/memory/revert.c); a refusal is worded
// here from its details (docs/API.md "Reverting a change"): the later
// records in the way, each one a link to its target's records.
import { h, clear, fmtTime } from './dom.js';
import { api } from './api.js';
import { t, has } from './i18n.js';
import { busy, errorBox } from './ui.js';

// The control for record r, or null for a record without a change to
// revert (a failed call, a read). onDone() after a revert (the list again).
export function revertControl(r, app, onDone) {
  // a revert names the record it reverted
  const note = r.operation === 'history_revert' && r.arguments?.seq ? h('p', { class: 'meta reverts' }, t('rev.reverts', { seq: r.arguments.seq })) : null;
  if (r.status !== 'ok' || !((r.before && r.before.length) || (r.after && r.after.length))) return note;
  const out = h('div', { class: 'revert-msg' });
  const ask = h('button', { type: 'button', class: 'revert', 'data-seq': r.seq, onclick: () => confirmRevert(r, app, out, ask, onDone) }, t('rev.button'));
  return [note, h('div', { class: 'revert-box' }, ask, out)];
}

function confirmRevert(r, app, out, ask, onDone) {
  const yes = h('button', { type: 'button', class: 'danger revert-yes', onclick: () => busy(yes, async () => {
    try {
      const res = await api('POST', `history/${r.seq}/revert`);
      app.status(t('rev.done', { seq: res.reverted }));
      await onDone();
    } catch (e) {
      clear(out, refusal(e, app));
      out.firstChild?.focus();
    }
  }) }, t('rev.yes'));
  clear(out, h('div', { class: 'notice', role: 'group', 'aria-label': t('rev.button') },
    h('p', {}, t('rev.ask', { seq: r.seq })), yes, ' ',
    h('button', { type: 'button', onclick: () => { clear(out); ask.focus(); } }, t('action.cancel'))));
  yes.focus();
}

// Why a revert was refused, in the page's words.
function refusal(e, app) {
  const d = e.details || {};
  if (e.code !== 'conflict' || !has(`rev.why.${d.reason}`)) return h('div', { tabindex: '-1' }, errorBox(e));
  const opWord = (op) => (has(`op.${op}`) ? t(`op.${op}`) : op);
  const conflicts = Array.isArray(d.conflicts) ? d.conflicts : [];
  const vars = { seq: d.seq ?? '', by: d.revertedBy ?? '', newest: d.newest ?? '', id: d.id ?? (d.ids || []).join('、'), target: d.target ?? '',
    field: d.field && has(`field.${d.field}`) ? t(`field.${d.field}`) : d.field ?? '', count: d.count ?? conflicts.length,
    op: d.operation ? opWord(d.operation) : '', max: d.max ?? 5 };
  return h('div', { class: 'error revert-refused', role: 'alert', tabindex: '-1', 'data-reason': d.reason },
    h('p', {}, t('rev.refused'), ' ', t(`rev.why.${d.reason}`, vars)),
    conflicts.length ? h('ul', { class: 'refs' }, conflicts.map((c) => h('li', { 'data-conflict': c.seq },
      `#${c.seq} ${opWord(c.operation)} · ${fmtTime(c.at)} · ${has(`hist.actor.${c.actor}`) ? t(`hist.actor.${c.actor}`) : c.actor} `,
      (c.targets || []).slice(0, 1).map((id) => h('button', { type: 'button', class: 'link',
        onclick: () => app.go('history', `targetId=${encodeURIComponent(id)}`, { fresh: true }) }, t('rev.seeTarget', { id })))))) : null,
    (d.count ?? 0) > conflicts.length ? h('p', {}, t('mem.refused.more', { n: d.count - conflicts.length })) : null,
    has(`rev.why.${d.reason}.next`) ? h('p', {}, t(`rev.why.${d.reason}.next`, vars)) : null);
}
