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

import { buildStore, PAGE_STEPS as steps, runStep } from '../tests/ui/bigstore.mjs';
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
        for (let k = 0; k < ROUNDS; k++) ms.push(await runStep(page, [name, before, actions, ready]));
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
