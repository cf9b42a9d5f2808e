// backups.js — the Backups panel (issue 18): the files zcor wrote in
// backups/ (GET backups: the state copies restore takes, and migrate
// cognition's copies of the views), a backup made now (POST backup), one
// restored (POST restore, after a confirmation that says what is replaced
// and that the current state is backed up first, as zcor_memory_restore
// does) and one downloaded as the export of the memory state (GET
// backups/{name}). A transcript's export stays in the CLI (`zcor
// transcript export`). A panel of its own, not a part of Config: Config is
// one form of settings with its unsaved-changes guard, these are actions
// on files.
import { h, clear, fmtTime } from './dom.js';
import { api, blobUrl } from './api.js';
import { t } from './i18n.js';
import { load, errorBox, empty, busy } from './ui.js';

// 1234 → "1.2 KB"
function fmtBytes(n) {
  if (n < 1024) return t('bk.bytes', { n });
  const units = ['KB', 'MB', 'GB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

const bare = (f) => String(f || '').replace(/^backups\//, '');

export function render(root, app) {
  // s23-minor18: the list and the confirm box take the focus after a
  // restore (its confirm button is gone then), never the page body
  const list = h('div', { id: 'bk-list', tabindex: '-1', 'aria-label': t('bk.caption') });
  const confirmBox = h('div', { id: 'bk-confirm-box', tabindex: '-1' });
  const msg = h('div');
  let fresh = ''; // the name to mark as new in the list
  const reload = () => load(list, () => api('GET', 'backups'), (page) => table(page.items));

  const make = h('button', { type: 'button', class: 'primary', id: 'bk-make' }, t('bk.make'));
  make.addEventListener('click', () => busy(make, async () => {
    clear(msg);
    clear(confirmBox);
    try {
      const r = await api('POST', 'backup', {});
      fresh = bare(r.file);
      app.status(t('bk.made', { name: fresh, nodes: t('bk.nodes', { count: r.nodes }), people: t('bk.people', { count: r.people }) }));
      reload();
    } catch (e) {
      clear(msg, errorBox(e));
    }
  }));

  // 导出当前状态: a backup made now, then downloaded
  const exportNow = h('button', { type: 'button', id: 'bk-export-now' }, t('bk.exportNow'));
  exportNow.addEventListener('click', () => busy(exportNow, async () => {
    clear(msg);
    clear(confirmBox);
    try {
      const r = await api('POST', 'backup', {});
      fresh = bare(r.file);
      reload();
      await save(fresh);
    } catch (e) {
      clear(msg, errorBox(e));
    }
  }));

  // name's bytes (GET backups/{name}, with the header) saved as name
  async function save(name) {
    const url = await blobUrl(`backups/${encodeURIComponent(name)}`);
    const a = h('a', { href: url, download: name, hidden: true });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60000);
    app.status(t('bk.downloaded', { name }));
  }

  async function download(item, button) {
    await busy(button, async () => {
      clear(msg);
      try {
        await save(item.name);
      } catch (e) {
        clear(msg, errorBox(e));
      }
    });
  }

  function askRestore(item, opener) {
    clear(msg);
    const yes = h('button', { type: 'button', class: 'danger', id: 'bk-confirm' }, t('bk.restoreYes'));
    const no = h('button', { type: 'button', id: 'bk-cancel', onclick: () => { clear(confirmBox); opener.focus(); } }, t('action.cancel'));
    yes.addEventListener('click', () => busy(yes, async () => {
      try {
        const r = await api('POST', 'restore', { backupFile: item.name });
        clear(confirmBox);
        fresh = bare(r.backupOfPrevious);
        app.status(t('bk.restored', { name: item.name, nodes: t('bk.nodes', { count: r.nodes }), people: t('bk.people', { count: r.people }), previous: fresh }));
        await reload();
        list.focus(); // the list with the backup of the replaced state marked new
      } catch (e) {
        clear(confirmBox, errorBox(e));
        confirmBox.focus(); // the refusal, where the confirm button was
      }
    }));
    // how much is there now (the Stats panel's count), when it answers
    const now = h('li', { id: 'bk-ask-now', hidden: true });
    api('GET', 'stats?limit=1').then((st) => { now.textContent = t('bk.restoreNow', { count: st.total }); now.hidden = false; }, () => {});
    clear(confirmBox, h('div', { class: 'notice', role: 'alert', id: 'bk-ask' },
      h('p', {}, t('bk.restoreAsk', { name: item.name, time: fmtTime(item.time) })),
      h('ul', {}, h('li', {}, t('bk.restoreReplaces')), now, h('li', {}, t('bk.restoreKeeps')), h('li', {}, t('bk.restoreSaves'))),
      h('div', { class: 'row' }, yes, no)));
    yes.focus();
  }

  function table(items) {
    if (!items.length) return empty(t('bk.none'));
    return h('div', { class: 'scroll' }, h('table', { id: 'bk-table' },
      h('caption', { class: 'sr-only' }, t('bk.caption')),
      h('thead', {}, h('tr', {}, [t('bk.name'), t('bk.kind'), t('bk.size'), t('bk.time'), t('bk.actions')].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, items.map((x) => {
        const dl = h('button', { type: 'button', class: 'bk-export', 'aria-label': `${t('bk.export')} ${x.name}` }, t('bk.export'));
        dl.addEventListener('click', () => download(x, dl));
        const rs = x.kind === 'state' ? h('button', { type: 'button', class: 'bk-restore danger', 'aria-label': `${t('bk.restore')} ${x.name}` }, t('bk.restore')) : null;
        rs?.addEventListener('click', () => askRestore(x, rs));
        return h('tr', { 'data-name': x.name, class: x.name === fresh ? 'fresh' : null },
          h('th', { scope: 'row' }, h('code', {}, x.name), x.name === fresh ? h('span', { class: 'tag imp' }, t('bk.new')) : null),
          h('td', {}, t(`bk.kind.${x.kind}`)),
          h('td', {}, fmtBytes(x.size)),
          h('td', {}, fmtTime(x.time)),
          h('td', {}, h('div', { class: 'row' }, dl, rs)));
      }))));
  }

  root.append(h('section', { class: 'card', 'aria-labelledby': 'h-backups' },
    h('h2', { id: 'h-backups' }, t('bk.title')),
    h('p', {}, t('bk.intro')),
    h('p', { class: 'meta' }, t('bk.transcripts'), ' ', h('code', {}, 'zcor transcript export')),
    h('div', { class: 'row' }, make, exportNow), msg, confirmBox, list));
  reload();
}
