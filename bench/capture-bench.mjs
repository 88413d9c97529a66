#!/usr/bin/env node
// SPDX-License-Identifier: GPL-3.0-or-later
// capture-bench.mjs: what the site's-API capture (extension/lib/capture.js) costs a page load.
// Real Chromium with the real extension; a fixture page (api-bench.html) that makes 30 XHR/fetch
// calls at load (GETs and PUTs with JSON bodies, in waves); N loads of it with no capture and N
// with a grant that has browser.network.read (capture on: every request seen by webRequest
// listeners, XHR headers copied with extraHeaders), in one tab, the grant made and revoked
// between loads, interleaved one for one so drift on the machine hits both alike. Figures, not assertions; not a test. The target
// (issue 17): capture costs at most 5% of the load.
//
//   node bench/capture-bench.mjs [--loads=N] [--warmup=N] [--apps=N]
//
// Then the same four modes on the three real apps of the real-site suite (tests/realsites/:
// TiddlyWiki, MailDev, Node-RED, served on loopback), N loads each (--apps=0 leaves them out):
// what a person's own app costs to load with capture on. There `doneMs` is the end of the app's
// last XHR/fetch once the app shows its content (the wiki's tiddlers loaded, the inbox listed, the
// flows drawn), read from the page's own Resource Timing entries.
//
// Measured per load, in the page: `doneMs`, performance.now() when the last of the 30 calls ended
// (from the navigation's start: the time an app needs to be usable), and `loadMs`, the
// navigation's loadEventEnd. The grant is made through the worker's popup path (the popup's own
// message, as its Create button sends it): no engine, no pairing needed. Needs Chromium and
// `npm ci` (playwright-core); without them it says why and exits 0.

import { loadavg } from 'node:os';

const { Browser, browserWhyNot } = await import('../tests/e2e/browser-harness.mjs');
const { startFixtureServer } = await import('../tests/fixtures/serve.mjs');

const opts = { loads: 20, warmup: 3, apps: 10 };
for (const arg of process.argv.slice(2)) {
  let m;
  if ((m = /^--loads=(\d+)$/.exec(arg))) opts.loads = Math.max(1, Number(m[1]));
  else if ((m = /^--warmup=(\d+)$/.exec(arg))) opts.warmup = Number(m[1]);
  else if ((m = /^--apps=(\d+)$/.exec(arg))) opts.apps = Number(m[1]);
  else {
    console.error('usage: node bench/capture-bench.mjs [--loads=N] [--warmup=N] [--apps=N]');
    process.exit(2);
  }
}

const why = browserWhyNot();
if (why) {
  console.log(`capture-bench: skipped: ${why}`);
  process.exit(0);
}

const median = (v) => {
  const s = [...v].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const MODES = ['none', 'read', 'capture', 'api'];

/**
 * `load()` N times in each mode (after `warmup` loads), the modes rotated load by load so drift
 * on the machine and one mode's garbage hit all alike. → {mode: [load()'s figures]}.
 */
async function measure(sw, tabId, load, loads, warmup, { fresh = null } = {}) {
  // 'none': no grant; 'read': a Read grant (what any grant costs a load: its pill, its bookkeeping);
  // 'capture': a Read grant with browser.network.read, which turns capture on (lean: names,
  // sizes, statuses); 'api': with browser.api.call too (deep: request bodies' shapes and XHR
  // headers as well, what the site's-API calls need).
  const setMode = (mode) => sw.evaluate(async ({ tabId, mode }) => {
    const router = globalThis.chaperone.router;
    for (const g of router.grants.list()) await router.onPopupMessage({ type: 'popup.revokeGrant', grantId: g.grantId });
    if (mode !== 'none') {
      const r = await router.onPopupMessage({ type: 'popup.createGrant', tabs: [{ tabId }], preset: 'read',
        extras: mode === 'capture' ? ['browser.network.read'] : mode === 'api' ? ['browser.network.read', 'browser.api.call'] : [],
        durationMin: 60, label: 'capture bench' });
      if (r.ok !== true) throw new Error(JSON.stringify(r));
    }
    return router.capture.capturing(tabId) === (mode === 'capture' || mode === 'api');
  }, { tabId, mode });
  const runs = Object.fromEntries(MODES.map((m) => [m, []]));
  for (let i = 0; i < warmup + loads; i++) {
    for (let k = 0; k < MODES.length; k++) {
      const mode = MODES[(i + k) % MODES.length];
      // fresh(): a new tab for this load, showing the page already (see below); → its id.
      if (fresh) tabId = await fresh();
      if (!(await setMode(mode))) throw new Error('capture did not follow the grant');
      const r = await load();
      if (i >= warmup) runs[mode].push(r);
    }
  }
  if (fresh) tabId = await fresh();
  await setMode('capture');
  await load();
  const seen = await sw.evaluate(async (tabId) => {
    const c = globalThis.chaperone.router.capture;
    const docs = await c.documents(tabId);
    return { entries: c.entriesOf(tabId, docs).length, capturing: c.capturing(tabId) };
  }, tabId);
  await setMode('none');
  return { runs, seen };
}

function report(runs, labels) {
  console.log(`${'measure (median ms)'.padEnd(34)} ${'no grant'.padStart(10)} ${'Read grant'.padStart(11)} ` +
    `${'lean'.padStart(8)} ${'deep'.padStart(8)} ${'lean/Read'.padStart(10)} ${'deep/Read'.padStart(10)}`);
  for (const [key, label] of Object.entries(labels)) {
    const [a, b, c, d] = MODES.map((m) => median(runs[m].map((r) => r[key])));
    console.log(`${label.padEnd(34)} ${a.toFixed(1).padStart(10)} ${b.toFixed(1).padStart(11)} ${c.toFixed(1).padStart(8)} ` +
      `${d.toFixed(1).padStart(8)} ${(c / b).toFixed(3).padStart(10)} ${(d / b).toFixed(3).padStart(10)}`);
  }
}

/** What shows that each real app is usable: its content, drawn from its own API's answer. */
const APP_READY = {
  tiddlywiki: () => document.querySelector('.tc-story-river .tc-tiddler-frame') !== null &&
    performance.getEntriesByType('resource').some((e) => e.name.includes('/recipes/default/tiddlers.json')),
  // The seed's last message listed (tests/realsites/apps.mjs MAIL_SEED).
  maildev: () => document.body?.innerText.includes('Weekly status') === true,
  nodered: () => document.querySelectorAll('#red-ui-workspace-chart .red-ui-flow-node').length > 0,
};

const sites = await startFixtureServer();
const browser = await Browser.launch();
try {
  const url = `${sites.originA}/api-bench.html`;
  // One tab for all: the same process, the same place in the window; only the grant differs.
  const page = await browser.ctx.newPage();
  await page.goto(url);
  const sw = await browser.worker();
  const tabId = await browser.tabIdOf(page);
  const load = async () => {
    await page.goto(url);
    await page.waitForFunction(() => typeof window.__doneAt === 'number', null, { timeout: 15000 });
    return page.evaluate(() => ({
      doneMs: window.__doneAt,
      loadMs: performance.getEntriesByType('navigation')[0]?.loadEventEnd ?? NaN,
    }));
  };
  const fixture = await measure(sw, tabId, load, opts.loads, opts.warmup);
  console.log(`\nChaperone capture benchmark: ${opts.loads} loads each of api-bench.html (30 XHR/fetch calls), ` +
    `${opts.warmup} warm-up; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  report(fixture.runs, { doneMs: 'last of the 30 calls ended', loadMs: 'loadEventEnd' });
  console.log(`capture saw ${fixture.seen.entries} requests of the last load (capturing: ${fixture.seen.capturing}); ` +
    'target: capture ≤ 5% of the load');

  const { appsWhyNot, startApps } = await import('../tests/realsites/apps.mjs');
  const appsWhy = opts.apps === 0 ? 'left out (--apps=0)' : appsWhyNot();
  if (appsWhy) {
    console.log(`\nreal apps: skipped: ${appsWhy}`);
  } else {
    const started = await startApps();
    try {
      for (const app of Object.values(started.apps)) {
        // Each load in a tab of its own, opened on the app untimed and then loaded again, timed:
        // Node-RED's editor keeps ~40 MB of every earlier load alive in its tab's renderer (in
        // plain Chromium too), so one tab reloaded 60 times would end up measuring the swap.
        let tab = null;
        const fresh = async () => {
          await tab?.close();
          tab = await browser.ctx.newPage();
          await tab.goto(app.url);
          await tab.waitForFunction(APP_READY[app.name], null, { timeout: 30000 });
          return browser.tabIdOf(tab);
        };
        const appLoad = async () => {
          await tab.goto(app.url);
          await tab.waitForFunction(APP_READY[app.name], null, { timeout: 30000 });
          return tab.evaluate(() => {
            const calls = performance.getEntriesByType('resource')
              .filter((e) => e.initiatorType === 'xmlhttprequest' || e.initiatorType === 'fetch');
            return {
              doneMs: Math.max(0, ...calls.map((e) => e.responseEnd)),
              loadMs: performance.getEntriesByType('navigation')[0]?.loadEventEnd ?? NaN,
              calls: calls.length,
            };
          });
        };
        const r = await measure(sw, null, appLoad, opts.apps, 1, { fresh });
        await tab.close();
        const calls = median(r.runs.none.map((x) => x.calls));
        console.log(`\n${app.label}: ${opts.apps} loads each, 1 warm-up; its load makes ${calls} XHR/fetch calls; ` +
          `load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
        report(r.runs, { doneMs: 'its last call of the load ended', loadMs: 'loadEventEnd' });
        console.log(`capture saw ${r.seen.entries} requests of the last load (capturing: ${r.seen.capturing})`);
      }
    } finally {
      await started.stop();
    }
  }
} finally {
  await browser.close();
  await sites.close();
}
