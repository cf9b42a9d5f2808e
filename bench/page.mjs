#!/usr/bin/env node
// bench/page.mjs — issue 18's scale check of the Memory page: a store of
// 5,000 memories, 20,000 messages and 300 people (tests/ui/bigstore.mjs:
// `zcor restore` of a generated state file, `zcor transcript import` of
// seed-003 log files, real tool calls for history), a real `zcor serve`,
// Debian's Chromium (playwright-core, tests/ui/serve.mjs). It opens every
// panel and runs every search, each ROUNDS times, and prints the time of
// each in the browser: from the navigation (or the submit) to the panel or
// the results drawn (no loading line left, a frame painted). A benchmark,
// not a test: nothing passes or fails; docs/PERFORMANCE.md quotes it.
//
//   ZCOR_BIN=build/zcor node bench/page.mjs [--memories N] [--messages N]
//     [--history N] [--rounds K] [--json]
//
// Run from the repository (tests/node_modules holds playwright-core).
import { loadavg, cpus } from 'node:os';

import { buildStore, convKey } from '../tests/ui/bigstore.mjs';
import { startServe, withBrowser, tmp } from '../tests/ui/serve.mjs';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const MEMORIES = arg('memories', 5000);
const MESSAGES = arg('messages', 20000);
const HISTORY = arg('history', 300);
const ROUNDS = arg('rounds', 5);
const JSON_OUT = process.argv.includes('--json');
const BUDGET_MS = 300;

// The steps: [name, hash to open first (or null: stay), the actions in the
// page, the selector of what is drawn when it is done]. Actions: {hash},
// {fill: selector, value}, {select: selector, value}, {click: selector},
// {submit: selector} (the form's requestSubmit).
const CONV = convKey(1);
const steps = [
  ['open Memory (tree roots)', null, [{ hash: '#memory' }], '#panel .tree [role=treeitem]'],
  ['search memories 猫咪', '#memory', [{ fill: '#q-keywords', value: '猫咪' }, { submit: '#q-keywords' }], '#panel ul.list[aria-label] > li, #panel section p.empty'],
  ['search memories 猫咪 火锅 (sort by hits)', '#memory', [{ fill: '#q-keywords', value: '猫咪 火锅' }, { select: '#q-sort', value: 'hits' }, { submit: '#q-keywords' }], '#panel ul.list[aria-label] > li, #panel section p.empty'],
  ['open a memory', '#memory', [{ hash: '#memory/m000002' }], '#node-title'],
  ['open Recall preview', null, [{ hash: '#recall' }], '#rp-form'],
  ['recall preview 猫咪和火锅', '#recall', [{ fill: '#rp-text', value: '今天猫咪吃火锅了吗' }, { fill: '#rp-conv', value: CONV }, { click: '#rp-go' }], '#rp-cands'],
  ['open History', null, [{ hash: '#history' }], '#history-list li.record, #history-list p.empty'],
  ['search history 猫咪', '#history', [{ fill: '#h-keywords', value: '猫咪' }, { submit: '#h-keywords' }], '#history-list li.record, #history-list p.empty'],
  ['open People', null, [{ hash: '#people' }], '#people-list li'],
  ['search people 小明', '#people', [{ fill: '#p-keywords', value: '小明' }, { submit: '#p-keywords' }], '#people-list li, #people-list p.empty'],
  ['open Synonyms', null, [{ hash: '#synonyms' }], '#syn-table tbody tr'],
  ['filter synonyms 猫', '#synonyms', [{ fill: '#s-filter', value: '猫' }], '#syn-table tbody tr'],
  ['open Config', null, [{ hash: '#config' }], '#c-save'],
  ['open Conversations', null, [{ hash: '#conversations' }], '#conv-list li, #conv-list tr'],
  ['open a transcript (newest first)', '#conversations', [{ hash: `#conversations/${encodeURIComponent(CONV)}` }], '#cv-messages li'],
  ['search a transcript 猫咪', `#conversations/${encodeURIComponent(CONV)}`, [{ fill: '#cv-keywords', value: '猫咪' }, { submit: '#cv-keywords' }], '#cv-messages li, #cv-messages p.empty'],
  ['open Chat', null, [{ hash: '#chat' }], '#chat-form, #chat-no-provider'],
  ['open Backups', null, [{ hash: '#backups' }], '#bk-table tbody tr, #bk-list p.empty'],
  ['open Stats', null, [{ hash: '#stats' }], '#st-totals'],
  ['stats per week', '#stats', [{ select: '#st-bucket', value: 'week' }], '#st-growth'],
];

// In the page: marks what `ready` matches now as old, runs the actions,
// and resolves with the milliseconds until `ready` matches something new,
// no loading line is left and a frame was painted.
async function timed(page, actions, ready) {
  return page.evaluate(async ({ actions, ready }) => {
    for (const el of document.querySelectorAll(ready)) el.dataset.benchOld = '1';
    const done = () => [...document.querySelectorAll(ready)].some((el) => !el.dataset.benchOld)
      && !document.querySelector('#panel .loading');
    const t0 = performance.now();
    for (const a of actions) {
      if (a.hash) location.hash = a.hash;
      else if (a.fill) { const el = document.querySelector(a.fill); el.value = a.value; el.dispatchEvent(new Event('input', { bubbles: true })); }
      else if (a.select) { const el = document.querySelector(a.select); el.value = a.value; el.dispatchEvent(new Event('change', { bubbles: true })); }
      else if (a.click) document.querySelector(a.click).click();
      else if (a.submit) document.querySelector(a.submit).form.requestSubmit();
    }
    await new Promise((resolve, reject) => {
      if (done()) { resolve(); return; }
      const mo = new MutationObserver(() => { if (done()) { mo.disconnect(); resolve(); } });
      mo.observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
      setTimeout(() => { mo.disconnect(); reject(new Error(`not drawn in 30 s: ${ready}`)); }, 30000);
    });
    await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
    return performance.now() - t0;
  }, { actions, ready });
}

async function main() {
  const dir = tmp();
  const t0 = Date.now();
  buildStore(dir, { memories: MEMORIES, messages: MESSAGES, people: 300, historyCalls: HISTORY });
  const buildS = (Date.now() - t0) / 1000;
  const srv = await startServe(dir);
  const rows = [];
  try {
    await withBrowser(srv, async ({ page }) => {
      await page.goto(`${srv.url}#memory`);
      await page.locator('main[data-panel=memory] .tree [role=treeitem]').first().waitFor();
      for (const [name, before, actions, ready] of steps) {
        const ms = [];
        for (let k = 0; k < ROUNDS; k++) {
          if (before) {
            await page.evaluate((h) => { location.hash = h; }, before);
            await page.waitForFunction(() => !document.querySelector('#panel .loading'));
          } else {
            await page.evaluate(() => { location.hash = '#config'; });
            await page.locator('main[data-panel=config] #c-save').waitFor();
            if (actions[0].hash === '#config') {
              await page.evaluate(() => { location.hash = '#memory'; });
              await page.locator('main[data-panel=memory] .tree [role=treeitem]').first().waitFor();
            }
          }
          ms.push(await timed(page, actions, ready));
        }
        ms.sort((a, b) => a - b);
        rows.push({ step: name, medianMs: Math.round(ms[ms.length >> 1]), maxMs: Math.round(ms[ms.length - 1]) });
        if (!JSON_OUT) process.stderr.write(`${name}: median ${rows.at(-1).medianMs} ms, max ${rows.at(-1).maxMs} ms\n`);
      }
    }, { viewport: { width: 1440, height: 900 } });
  } finally {
    await srv.stop();
  }
  const out = {
    date: new Date().toISOString(), machine: `${cpus().length} × ${cpus()[0]?.model ?? '?'}`,
    loadavg: loadavg().map((x) => x.toFixed(2)).join(' '), memories: MEMORIES, messages: MESSAGES, history: HISTORY,
    rounds: ROUNDS, buildSeconds: buildS, budgetMs: BUDGET_MS, steps: rows,
    over: rows.filter((r) => r.medianMs > BUDGET_MS).map((r) => r.step),
  };
  if (JSON_OUT) process.stdout.write(`${JSON.stringify(out, null, 1)}\n`);
  else {
    process.stdout.write(`| step | median ms | max ms |\n|---|---|---|\n${rows.map((r) => `| ${r.step} | ${r.medianMs} | ${r.maxMs} |`).join('\n')}\n`);
    process.stdout.write(`\n${out.date}, ${out.machine}, load average ${out.loadavg}; store built in ${buildS.toFixed(1)} s\n`);
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
