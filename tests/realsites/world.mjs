// SPDX-License-Identifier: GPL-3.0-or-later
// The person's side for the real-site tasks through Chaperone, without GTK: the core engine harness
// with its agent socket (tests/e2e/mcp-harness.mjs), real Chromium with the real extension
// (browser-harness.mjs), paired, one tab per app opened and granted (control, and navigation inside
// the site) in the popup as a person does, and the agent connected through the real relay with the
// official SDK. The person's approvals go through the engine's JSON lines — the same engine calls
// the app's Approve buttons make (chp_engine_resolve_hold_async, chp_engine_decide_plan).
//
//   const w = await startChaperoneWorld(Object.values(apps));  // {driver, browser, pages, engine, stop()}

import * as H from '../e2e/mcp-harness.mjs';
import { ChaperoneDriver } from './drivers.mjs';

/** Why Chaperone's side cannot run here, or null. */
export async function chaperoneWhyNot() {
  const why = H.mcpWhyNot();
  if (why) return why;
  const { existsSync } = await import('node:fs');
  const engine = process.env.CHAPERONE_TEST_ENGINE;
  if (!engine) return 'CHAPERONE_TEST_ENGINE is not set (meson sets it)';
  if (!existsSync(engine)) return `no engine harness at ${engine}`;
  const { browserWhyNot } = await import('../e2e/browser-harness.mjs');
  return browserWhyNot();
}

/** The person, through the engine: approves a hold or a plan as its Approve button would. */
export function enginePerson(engine) {
  return {
    log: [],
    async approveHold(agentHoldId, held = {}) {
      this.log.push({ hold: agentHoldId, kind: held.kind, control: held.control });
      const { until } = await import('../lib/until.mjs');
      // The engine's hold event names the hold and its browser; the agent's id is "bN:k-<hold>".
      const hold = await until(() => engine.events.slice().reverse().map((e) => e.hold)
        .find((h) => h && agentHoldId.endsWith(`:k-${h.holdId}`)),
      { timeout: 10000, what: `the engine's event for hold ${agentHoldId}` });
      await engine.command({ cmd: 'resolve-hold', deviceId: hold.deviceId, holdId: hold.holdId, outcome: 'approve' },
        { timeoutMs: 10000 });
    },
    async approvePlan(planId) {
      this.log.push({ plan: planId });
      await engine.command({ cmd: 'decide-plan', planId, approve: true }, { timeoutMs: 10000 });
    },
  };
}

/**
 * Chromium as a person runs it, driven over CDP (the bench's background figures): Playwright's own
 * launch turns background throttling off and emulates focus on its pages, so a tab behind another
 * would never be hidden nor throttled. Connected to a browser it did not launch, it adds neither.
 */
async function launchAsAPerson() {
  const { spawn } = await import('node:child_process');
  const { mkdtemp, rm } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const playwright = await import('playwright-core');
  const { Browser, CHROMIUM, EXTENSION_DIR } = await import('../e2e/browser-harness.mjs');
  const { deadline } = await import('../lib/until.mjs');
  const userDataDir = await mkdtemp(join(tmpdir(), 'chaperone-chromium-'));
  const child = spawn(CHROMIUM, ['--headless=new', '--remote-debugging-port=0', `--user-data-dir=${userDataDir}`,
    '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--no-default-browser-check',
    '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage',
    '--window-size=1280,800', `--disable-extensions-except=${EXTENSION_DIR}`, `--load-extension=${EXTENSION_DIR}`,
    'about:blank'], { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  let err = '';
  const endpoint = await deadline(new Promise((ok, fail) => {
    child.stderr.on('data', (d) => {
      err += d;
      const m = /DevTools listening on (ws:\/\/\S+)/.exec(err);
      if (m) ok(m[1]);
    });
    child.once('exit', (code) => fail(new Error(`Chromium exited (${code}): ${err.slice(-500)}`)));
  }), { timeout: 20000, what: 'Chromium\'s DevTools endpoint' });
  const cdp = await playwright.chromium.connectOverCDP(endpoint, { noDefaults: true });
  const browser = new Browser(cdp.contexts()[0], userDataDir);
  browser.close = async () => {
    await cdp.close().catch(() => {});
    try { process.kill(-child.pid, 'SIGTERM'); } catch { /* gone */ }
    await new Promise((ok) => (child.exitCode !== null ? ok() : child.once('exit', ok)));
    await rm(userDataDir, { recursive: true, force: true }).catch(() => {});
  };
  await browser.worker();
  return browser;
}

/**
 * `throttled`: Chromium as a person runs it (launchAsAPerson), so that `background(name)` really
 * hides the app's tab behind another tab of its window, timers throttled; `front(name)` shows it.
 */
export async function startChaperoneWorld(apps, { name = 'realsites', throttled = false } = {}) {
  const { Browser, EXTENSION_ORIGIN } = await import('../e2e/browser-harness.mjs');
  const { until } = await import('../lib/until.mjs');
  const stops = [];
  const stop = async () => { for (const fn of stops.splice(0).reverse()) await fn().catch(() => {}); };
  try {
    const world = await H.startEngineWithAgents();
    stops.push(() => world.stop());
    const { engine } = world;
    const browser = throttled ? await launchAsAPerson() : await Browser.launch();
    stops.push(() => browser.close());
    await browser.setPort(engine.port);
    const pages = {};
    for (const app of apps) {
      pages[app.name] = await browser.ctx.newPage();
      await pages[app.name].goto(app.url);
    }
    const first = pages[apps[0].name];
    const popup = await browser.popup(first);
    const mark = engine.mark();
    await browser.startPairing(popup);
    const pairing = await engine.waitFor({ event: 'pairing' }, { after: mark, timeoutMs: 15000 });
    if (pairing.origin !== EXTENSION_ORIGIN) throw new Error(`pairing from ${pairing.origin}`);
    engine.approve(pairing.requestId);
    await engine.waitFor({ event: 'device-online' }, { after: mark, timeoutMs: 20000 });
    await browser.waitForState('connected');
    await browser.grant(popup, { pages: Object.values(pages), preset: 'control', extras: ['browser.tab.navigate', 'browser.network.read', 'browser.api.call'],
      label: 'Real-site tasks' });
    await popup.close();
    await first.bringToFront();
    const agent = await H.connectAgent({ name, socket: world.socket, timeoutMs: 20000 });
    stops.push(() => agent.close());
    const person = enginePerson(engine);
    const driver = new ChaperoneDriver(agent, person);
    await driver.learnTabs(apps.map((a) => a.origin));
    const visibility = (n) => pages[n].evaluate(() => document.visibilityState);
    const tabIdOf = async (n) => browser.tabIdOf(pages[n]);
    return {
      driver, agent, browser, pages, engine, person, world, stop,
      /** Shows the app's tab (its window's active tab). */
      async front(n) {
        const sw = await browser.worker();
        await sw.evaluate((id) => chrome.tabs.update(id, { active: true }), await tabIdOf(n));
        await until(async () => (await visibility(n)) === 'visible', { what: `${n}'s tab to be visible` });
      },
      /** Puts another tab of the same window in front of the app's tab (one per window, kept). */
      async background(n) {
        const sw = await browser.worker();
        await sw.evaluate(async (tabId) => {
          const { windowId } = await chrome.tabs.get(tabId);
          globalThis.__realsiteCovers ??= new Map();
          const cover = globalThis.__realsiteCovers.get(windowId);
          if (cover !== undefined) {
            try { await chrome.tabs.update(cover, { active: true }); return; } catch { /* closed */ }
          }
          const t = await chrome.tabs.create({ windowId, url: 'about:blank', active: true });
          globalThis.__realsiteCovers.set(windowId, t.id);
        }, await tabIdOf(n));
        if (throttled) await until(async () => (await visibility(n)) === 'hidden', { what: `${n}'s tab to be hidden` });
      },
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
