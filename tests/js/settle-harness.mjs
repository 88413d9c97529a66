// SPDX-License-Identifier: GPL-3.0-or-later
// Settling as an agent meets it: real Chromium with the real extension, its worker driving the page
// agent the way browser.node.action does (lib/capabilities/act.js: the tab's requests watched
// from before the page acts, the op on the document's own port, the worker's clock ticking), on
// the fixture sites — without the app or the engine, whose part (pairing, grants) settling does
// not touch. Used by ext-page-agent-settle.test.mjs and bench/extension-bench.mjs.
//
// A tab in the background is a real one: another tab brought to front in the same window, so the
// page is hidden (document.visibilityState) and Chromium throttles its timers as it does for a
// person's background tabs; headed under Xvfb (CHAPERONE_SETTLE_HEADED=1) or headless alike.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Browser, CHROMIUM, EXTENSION_DIR } from '../e2e/browser-harness.mjs';
import { startFixtureServer } from '../fixtures/serve.mjs';
import { until } from '../lib/until.mjs';

// Chromium as a person runs it, driven over CDP: Playwright's own launch turns background
// throttling off and emulates focus on every page it opens (Chromium counts such a tab as being
// captured, and a captured tab is never hidden), so neither would show what a background tab does.
// Connected over CDP to a browser it did not launch, Playwright adds neither.
async function launchThrottled({ headless }) {
  const playwright = await import('playwright-core');
  const userDataDir = await mkdtemp(join(tmpdir(), 'chaperone-chromium-'));
  const child = spawn(CHROMIUM, [
    ...(headless ? ['--headless=new'] : []),
    '--remote-debugging-port=0', `--user-data-dir=${userDataDir}`,
    '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--no-default-browser-check',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    '--disable-dev-shm-usage', '--window-size=1280,800',
    `--disable-extensions-except=${EXTENSION_DIR}`, `--load-extension=${EXTENSION_DIR}`, 'about:blank',
  ], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  const endpoint = await new Promise((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`Chromium gave no DevTools endpoint: ${err.slice(-500)}`)), 20000);
    child.stderr.on('data', (d) => {
      err += d;
      const m = /DevTools listening on (ws:\/\/\S+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        ok(m[1]);
      }
    });
    child.on('exit', (code) => fail(new Error(`Chromium exited (${code}): ${err.slice(-500)}`)));
  });
  child.stderr.resume();
  const cdp = await playwright.chromium.connectOverCDP(endpoint, { noDefaults: true });
  const browser = new Browser(cdp.contexts()[0], userDataDir);
  browser.close = async () => {
    await cdp.close().catch(() => {});
    child.kill('SIGTERM');
    await new Promise((ok) => (child.exitCode !== null ? ok() : child.once('exit', ok)));
    await rm(userDataDir, { recursive: true, force: true }).catch(() => {});
  };
  await browser.worker();
  return browser;
}

export class SettleRig {
  static async start({ headless = process.env.CHAPERONE_SETTLE_HEADED !== '1' } = {}) {
    const rig = new SettleRig();
    rig.server = await startFixtureServer();
    rig.browser = await launchThrottled({ headless });
    rig.sw = await rig.browser.worker();
    return rig;
  }

  async close() {
    await this.browser?.close().catch(() => {});
    await this.server?.close().catch(() => {});
  }

  /** Opens a fixture page in a new tab: {page, tabId, documentId}. */
  async open(path) {
    const page = await this.browser.ctx.newPage();
    await page.goto(this.server.originA + path);
    await page.bringToFront();
    const tabId = await this.browser.tabIdOf(page);
    assert.ok(Number.isSafeInteger(tabId), `the worker sees the tab of ${path}`);
    const documentId = await this.sw.evaluate(async (id) =>
      (await chrome.webNavigation.getFrame({ tabId: id, frameId: 0 })).documentId, tabId);
    return { page, tabId, documentId };
  }

  /**
   * Sends `tab` to the background as a person's other tab would: a tab opened in front of it in
   * its own window (Playwright's pages may each get a window, where none hides another).
   */
  async background(tab) {
    await this.sw.evaluate(async ({ tabId, url }) => {
      const { windowId } = await chrome.tabs.get(tabId);
      globalThis.__settleCovers ??= new Map();
      const cover = globalThis.__settleCovers.get(windowId);
      if (cover !== undefined) {
        try {
          await chrome.tabs.update(cover, { active: true });
          return;
        } catch (_) { /* closed: open another */ }
      }
      const t = await chrome.tabs.create({ windowId, url, active: true });
      globalThis.__settleCovers.set(windowId, t.id);
    }, { tabId: tab.tabId, url: `${this.server.originA}/handoff.html` });
    await until(async () => (await tab.page.evaluate(() => document.visibilityState)) === 'hidden',
      { what: 'the page to be hidden behind another tab' });
  }

  async front(tab) {
    await this.sw.evaluate((tabId) => chrome.tabs.update(tabId, { active: true }), tab.tabId);
    await until(async () => (await tab.page.evaluate(() => document.visibilityState)) === 'visible',
      { what: 'the page to be visible' });
  }

  /** One page-agent op through the worker's page bridge; the reply value (throws on an error). */
  async op(tab, op, args) {
    return this.sw.evaluate(async ({ where, op: name, args: a }) => {
      const { router } = globalThis.chaperone;
      return router.page.run(where, name, a);
    }, { where: { tabId: tab.tabId, frameId: 0, documentId: tab.documentId }, op, args });
  }

  async capture(tab) {
    const captureId = `c${Math.random().toString(36).slice(2, 10)}`;
    const ctx = await this.op(tab, 'context', { captureId });
    return { ...ctx, captureId };
  }

  /**
   * An action as browser.node.action runs it: {value, ms} with ms the worker's time for page.run
   * (and, before a document's first click, for preparing its main world).
   * A click the page holds (a write, e.g. Save) is approved as the person would, once.
   */
  async act(tab, ctx, name, action, extra = {}) {
    const node = ctx.nodes.find((n) => n.name === name);
    assert.ok(node, `node "${name}" in ${JSON.stringify(ctx.nodes.map((n) => n.name))}`);
    const run = (more) => this.sw.evaluate(async ({ where, args }) => {
      const { router } = globalThis.chaperone;
      const network = router.network;
      const release = network.watch(where.tabId);
      if (network.available) args.net = true;
      const start = performance.now();
      // As act.js does: before a click or key press the main world is prepared (the dialog guard
      // and the timer tracker), and the act names the tracker and its longest delay.
      if (['click', 'dblclick', 'press', 'drag'].includes(args.action)) {
        const timers = await router.page.prepareMainWorld(where);
        if (timers) args.timers = timers;
      }
      try {
        const value = await router.page.run(where, 'action', args, { network: network.available ? network : null });
        return { value, ms: performance.now() - start };
      } finally {
        release();
      }
    }, { where: { tabId: tab.tabId, frameId: 0, documentId: tab.documentId },
      args: { captureId: ctx.captureId, ref: node.ref, action, ...extra, ...more } });
    let r = await run({});
    if (r.value?.held) r = await run({ expect: r.value.held.canonical });
    return r;
  }
}
