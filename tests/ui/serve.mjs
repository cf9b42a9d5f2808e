// serve.mjs — what the browser tests share: a real `zcor serve` on a
// temporary directory and a free port (as in e2e/http.test.mjs), Debian's
// Chromium driven by playwright-core, the CLI, and screenshots.
//
// ZCOR_SCREENSHOTS=DIR makes shot() write DIR/<name>.png (the README's
// pictures: `ZCOR_SCREENSHOTS=$PWD/docs/screenshots ctest -L ui`).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

import { freePort } from '../net.mjs';
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

// Starts `zcor serve`; resolves once it printed its URL (with ?token=).
export async function startServe(dir = tmp()) {
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const p = spawn(BIN, ['--dir', dir, 'serve', '--listen', `127.0.0.1:${port}`],
      { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '', stderr = '';
    p.stdout.setEncoding('utf8');
    p.stderr.setEncoding('utf8').on('data', (c) => { stderr += c; });
    const exited = new Promise((resolve) => p.on('close', (code, signal) => resolve({ code, signal })));
    const url = await new Promise((resolve) => {
      const timer = setTimeout(() => resolve(null), 20000);
      p.stdout.on('data', (c) => {
        stdout += c;
        const m = /^zcor: serving .* at (http:\/\/\S+)$/m.exec(stdout);
        if (m) { clearTimeout(timer); resolve(m[1]); }
      });
      exited.then(() => { clearTimeout(timer); resolve(null); });
    });
    if (!url) {
      p.kill('SIGKILL');
      await exited;
      if (attempt < 2 && /cannot listen/.test(stderr)) continue;
      assert.fail(`zcor serve did not print its URL: ${stdout}${stderr}`);
    }
    const token = new URL(url).searchParams.get('token');
    const base = `http://127.0.0.1:${port}`;
    return {
      dir, port, token, url, base,
      stderr: () => stderr,
      // the REST API as a script would call it (with the header)
      async api(method, path, body) {
        const res = await fetch(`${base}/api/v1/${path}`, {
          method, headers: { Authorization: `Bearer ${token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
          body: body ? JSON.stringify(body) : undefined,
        });
        return { status: res.status, body: await res.json() };
      },
      async stop() {
        if (p.exitCode === null && p.signalCode === null) p.kill('SIGTERM');
        const timer = setTimeout(() => p.kill('SIGKILL'), 15000);
        const r = await exited;
        clearTimeout(timer);
        assert.equal(r.code, 0, `zcor serve exited ${r.code} (${r.signal}): ${stderr}`);
      },
    };
  }
}

// `zcor --dir D ARGS…` → { status, stdout, stderr }
export function cli(dir, ...args) {
  const r = spawnSync(BIN, ['--dir', dir, ...args], { env: cleanEnv(), encoding: 'utf8', timeout: 60000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

// Runs fn({ srv, browser, page }) with a fresh server, browser and page
// (1280 px wide, Chinese UI); console errors and page errors fail the test.
export async function withPage(fn, { viewport = { width: 1280, height: 900 }, dir } = {}) {
  const srv = await startServe(dir);
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
    await srv.stop();
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
