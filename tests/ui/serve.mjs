// serve.mjs — what the browser tests share: a real `zcor serve` on a
// temporary directory and a free port (as in e2e/http.test.mjs), Debian's
// Chromium driven by playwright-core, the CLI, and screenshots.
//
// ZCOR_SCREENSHOTS=DIR makes shot() write DIR/<name>.png (the README's
// pictures: `ZCOR_SCREENSHOTS=$PWD/docs/screenshots ctest -L ui`).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

import { startServe as startServeOn } from '../net.mjs';
import { mkTmp } from '../tmpdir.mjs';

export const BIN = process.env.ZCOR_BIN;
assert.ok(BIN, 'ZCOR_BIN must name the zcor binary');
const CHROMIUM = process.env.ZCOR_CHROMIUM || '/usr/bin/chromium';
export const TIMEOUT = 30000; // a slow, shared 2-core machine

export function cleanEnv() {
  const e = { ...process.env };
  delete e.ZCOR_DIR;
  delete e.ZCOR_TOKEN;
  return e;
}

export function tmp() {
  return mkTmp('zcor-ui-');
}

// Starts `zcor serve` (net.mjs), with base and api() for scripting it.
export async function startServe(dir = tmp()) {
  const srv = await startServeOn(BIN, dir, cleanEnv());
  const base = `http://127.0.0.1:${srv.port}`;
  return Object.assign(srv, {
    base,
    // the REST API as a script would call it (with the header)
    async api(method, path, body) {
      const res = await fetch(`${base}/api/v1/${path}`, {
        method, headers: { Authorization: `Bearer ${srv.token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      return { status: res.status, body: await res.json() };
    },
  });
}

// `zcor --dir D ARGS…` → { status, stdout, stderr }
export function cli(dir, ...args) {
  const r = spawnSync(BIN, ['--dir', dir, ...args], { env: cleanEnv(), encoding: 'utf8', timeout: 60000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

// Runs fn({ srv, browser, page }) with a fresh server, browser and page
// (1280 px wide, Chinese UI); console errors and page errors fail the test.
export async function withPage(fn, { viewport, dir } = {}) {
  const srv = await startServe(dir);
  try {
    await withBrowser(srv, fn, { viewport });
  } finally {
    await srv.stop();
  }
}

// The same on a server the caller started (and stops): any object with
// url (the page's address with its token), e.g. tests/qq_world.mjs's srv.
export async function withBrowser(srv, fn, { viewport = { width: 1280, height: 900 } } = {}) {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'], headless: true });
  const errors = [];
  try {
    const context = await browser.newContext({ viewport, locale: 'zh-CN' });
    const page = await context.newPage();
    page.setDefaultTimeout(TIMEOUT);
    page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
    page.on('dialog', (d) => (d.type() === 'confirm' ? d.accept() : errors.push(`dialog: ${d.type()} ${d.message()}`) && d.dismiss()));
    await fn({ srv, browser, context, page });
    assert.deepEqual(errors, [], 'the page raised errors or unexpected dialogs');
  } finally {
    await browser.close();
  }
}

// Opens the page at a panel (hash) and waits for the panel to be drawn.
export async function openPanel(page, srv, panel) {
  await page.goto(`${srv.url}#${panel}`);
  await page.locator(`main[data-panel="${panel.split('/')[0]}"]`).waitFor();
}

export async function shot(page, name) {
  const dir = process.env.ZCOR_SCREENSHOTS;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `${name}.png`) }); // the viewport: 1280 × 900, or the phone's
}

// axe-core (npm, pinned in tests/package.json) on the page as it is,
// injected through the DevTools protocol (which the page's CSP does not
// govern): no violations of impact serious or critical (or of any impact
// with { all: true }). what names the state in the failure.
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
export async function axeClean(page, what = '', { all = false } = {}) {
  if (!(await page.evaluate(() => !!window.axe))) await page.evaluate(AXE);
  const res = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
  const bad = res.violations.filter((v) => all || v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(bad.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), [], `axe-core: ${what}`);
}

// Runs check(page, label) at desktop (1440 px) and phone (390 px) widths,
// in Chinese then English (the language switch), on the page as fn left it.
export async function eachWidthAndLanguage(page, check) {
  for (const [w, hgt] of [[1440, 900], [390, 844]]) {
    await page.setViewportSize({ width: w, height: hgt });
    for (const lang of ['zh', 'en']) {
      const now = await page.evaluate(() => document.documentElement.lang);
      if ((lang === 'en') !== (now === 'en')) await page.click('#lang');
      await check(page, `${w}px ${lang}`);
    }
  }
}
