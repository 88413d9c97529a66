// SPDX-License-Identifier: GPL-3.0-or-later
// Real Chromium with the real, unpacked extension, driven by Playwright the way a person uses it:
// the options page to set the port, the popup's own buttons to pair and to grant. Shared by the
// end-to-end suites and the extension benchmark.

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { deadline, until, watch } from '../lib/until.mjs';

const here = dirname(fileURLToPath(import.meta.url));

export const EXTENSION_DIR = resolve(here, '..', '..', 'extension');
// Fixed by the development `key` in manifest.json (docs/extension.md says how it is derived).
export const EXTENSION_ID = 'immigohjinbkkjncmhkefbfainfbcigp';
export const EXTENSION_ORIGIN = `chrome-extension://${EXTENSION_ID}`;
export const CHROMIUM = process.env.CHAPERONE_CHROMIUM ?? '/usr/lib/chromium/chromium';
// The native-messaging host of the build (meson sets it; else beside the engine harness).
export const NATIVE_HOST = process.env.CHAPERONE_NATIVE_HOST
  ? resolve(process.env.CHAPERONE_NATIVE_HOST)
  : process.env.CHAPERONE_TEST_ENGINE
    ? resolve(dirname(process.env.CHAPERONE_TEST_ENGINE), '..', 'native-host', 'chaperone-native-host')
    : null;

/**
 * Registers the native host for one Chromium profile as `chaperone doctor --fix` does for a
 * person's browser, in the folder Chromium reads for a custom --user-data-dir: the manifest names
 * the build's host and allows the test extension's origin alone.
 */
export async function registerNativeHost(userDataDir, hostPath = NATIVE_HOST) {
  const dir = join(userDataDir, 'NativeMessagingHosts');
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'io.github.chaperone.native.json'), JSON.stringify({
    name: 'io.github.chaperone.native',
    description: 'Chaperone (end-to-end test)',
    path: hostPath,
    type: 'stdio',
    allowed_origins: [`${EXTENSION_ORIGIN}/`],
  }, null, 2));
}

let playwright = null;
try {
  playwright = await import('playwright-core');
} catch {
  // reported by browserWhyNot()
}

/** Why the browser suites cannot run here, or null. */
export function browserWhyNot() {
  if (!existsSync(CHROMIUM)) return `no Chromium at ${CHROMIUM} (apt install chromium)`;
  if (!playwright) return 'playwright-core is not installed (npm ci)';
  return null;
}

/**
 * A plain headless Chromium, without the extension, for the suites that put the content scripts
 * into pages themselves (ext-page-agent, ext-page-ui) or play a web page (bridge-web-page).
 * Call only when browserWhyNot() is null.
 */
export function launchPlainChromium() {
  return playwright.chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
}

const display = (code) => `${code.slice(0, 3)} ${code.slice(3)}`;

/**
 * Resolves with `fn(arg)`'s value in `page` once it is truthy, looked at again on every DOM
 * mutation of the page (a MutationObserver there, not a clock); fails after `timeout` ms naming
 * `what`. The predicate goes in as source text (evaluated by the DevTools protocol, so an
 * extension page's CSP does not stand in the way): it may use only `arg`, never its closure.
 */
export async function domWait(page, fn, arg, { timeout = 10000, what }) {
  const expression = `new Promise((resolve, reject) => {
    const fn = (${fn.toString()});
    const arg = ${JSON.stringify(arg ?? null)};
    let observer = null;
    const check = () => {
      let value;
      try { value = fn(arg); } catch (err) { observer?.disconnect(); reject(err); return; }
      if (value) { observer?.disconnect(); resolve(value); }
    };
    observer = new MutationObserver(check);
    observer.observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
    check();
  })`;
  return deadline(page.evaluate(expression), { timeout, what });
}

/** `promise`'s value, or undefined once `ms` have passed (the promise is left to itself). */
async function within(promise, ms) {
  let timer;
  try {
    return await Promise.race([promise, new Promise((r) => { timer = setTimeout(r, ms); })]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The CDP session `opening` gives within `ms`, or null; one that comes later is detached, not
 * left attached.
 */
async function sessionWithin(opening, ms) {
  const session = await within(opening, ms);
  if (!session) opening.then((late) => late?.detach().catch(() => {}));
  return session ?? null;
}

/**
 * Closes a tab without hanging. Chromium can acknowledge a close that races a navigation commit
 * and then drop it (crbug.com/536385539) — a form the person just sent is such a navigation —
 * and Playwright's page.close() waits forever, never asking again. So: close, and while the tab
 * is still there after a second, ask the browser again ourselves (Target.closeTarget over a
 * browser session; asking again closes it). → true when the tab is closed.
 */
export async function closePage(page, { attempts = 3, waitMs = 1000 } = {}) {
  if (page.isClosed()) return true;
  const ctx = page.context();
  // The target's id first, while the page still answers.
  let targetId = null;
  const session = await sessionWithin(ctx.newCDPSession(page).catch(() => null), waitMs);
  if (session) {
    targetId = (await within(session.send('Target.getTargetInfo').catch(() => null), waitMs))?.targetInfo?.targetId ?? null;
    await within(session.detach().catch(() => {}), waitMs);
  }
  const closing = page.close().catch(() => {});
  for (let i = 0; i < attempts && !page.isClosed(); i++) {
    await within(closing, waitMs);
    if (page.isClosed() || !targetId) break;
    const browser = await sessionWithin(ctx.browser()?.newBrowserCDPSession().catch(() => null) ??
      Promise.resolve(null), waitMs);
    if (!browser) break;
    await within(browser.send('Target.closeTarget', { targetId }).catch(() => {}), waitMs);
    await within(browser.detach().catch(() => {}), waitMs);
  }
  await within(closing, waitMs);
  return page.isClosed();
}

// The switches Playwright's own launch adds (playwright-core's chromiumSwitches) that change how
// pages run — timers and renderers of background tabs left unthrottled, no back/forward cache —
// so that in a detachable browser the debugger is the only difference.
const PLAYWRIGHT_SWITCHES = ['--disable-field-trial-config', '--disable-background-timer-throttling',
  '--disable-backgrounding-occluded-windows', '--disable-back-forward-cache', '--disable-hang-monitor',
  '--disable-ipc-flooding-protection', '--disable-renderer-backgrounding', '--allow-pre-commit-input',
  '--disable-popup-blocking', '--disable-prompt-on-repost', '--no-default-browser-check', '--disable-default-apps',
  '--password-store=basic', '--use-mock-keychain', '--metrics-recording-only', '--force-color-profile=srgb'];

export class Browser {
  /**
   * Launches Chromium with a fresh profile and the extension loaded; resolves with its worker up.
   * `extraArgs`: more command-line flags after the usual ones (e.g.
   * `--host-resolver-rules=MAP mybank.test 127.0.0.1`); none by default.
   */
  static async launch({ headless = true, extraArgs = [], nativeHost = null, detachable = false } = {}) {
    const userDataDir = await mkdtemp(join(tmpdir(), 'chaperone-chromium-'));
    // `nativeHost: {port}`: the host is registered for this profile, and the browser's
    // environment (which the host inherits) names the bridge port, as for an app run elsewhere.
    if (nativeHost) await registerNativeHost(userDataDir, nativeHost.path ?? NATIVE_HOST);
    const env = nativeHost?.port ? { ...process.env, CHAPERONE_BRIDGE_PORT: String(nativeHost.port) } : null;
    const args = [
      '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      '--disable-dev-shm-usage',
      `--disable-extensions-except=${EXTENSION_DIR}`, `--load-extension=${EXTENSION_DIR}`,
      ...extraArgs,
    ];
    if (detachable) return Browser.launchDetachable(userDataDir, { headless, env, args });
    const ctx = await playwright.chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM, headless, ...(env ? { env } : {}), args,
    });
    const browser = new Browser(ctx, userDataDir);
    await browser.worker();
    return browser;
  }

  /**
   * A Chromium that Playwright drives over the DevTools protocol only until detach(): then it
   * runs as a person's does, with no debugger attached (Playwright follows every request over
   * the protocol): a benchmark measures there without what Playwright adds.
   */
  static async launchDetachable(userDataDir, { headless, env, args }) {
    const child = spawn(CHROMIUM, [...args, ...PLAYWRIGHT_SWITCHES, ...(headless ? ['--headless'] : []),
      '--remote-debugging-port=0', `--user-data-dir=${userDataDir}`, 'about:blank'],
    { env: env ?? process.env, stdio: 'ignore' });
    const exited = new Promise((r) => { child.once('exit', r); child.once('error', r); });
    let cdp = null;
    try {
      // Chromium writes the port it listens on into the profile once it does.
      const portFile = join(userDataDir, 'DevToolsActivePort');
      const port = await until(async () => {
        if (child.exitCode !== null) throw new Error(`Chromium exited (${child.exitCode}) before it listened`);
        return Number((await readFile(portFile, 'utf8').catch(() => '')).split('\n')[0]) || null;
      }, { timeout: 20000, what: 'Chromium to say its DevTools port' });
      cdp = await playwright.chromium.connectOverCDP(`http://127.0.0.1:${port}`);
      const browser = new Browser(cdp.contexts()[0], userDataDir);
      browser.detachable = { child, exited, cdp };
      await browser.worker();
      return browser;
    } catch (e) {
      // Nothing is left running or on disk when the launch fails.
      await cdp?.close().catch(() => {});
      child.kill('SIGTERM');
      await exited;
      await rm(userDataDir, { recursive: true, force: true });
      throw e;
    }
  }

  /** Lets go of a detachable browser (launch({detachable: true})): it runs on, undriven. */
  async detach() {
    await this.detachable?.cdp.close();
  }

  constructor(ctx, userDataDir) {
    this.ctx = ctx;
    this.userDataDir = userDataDir;
    this.consoleLines = [];
  }

  /** The extension's service worker, waiting for it to start (again) if need be. */
  async worker({ timeoutMs = 15000 } = {}) {
    const ours = () => this.ctx.serviceWorkers().find((w) => w.url().startsWith(EXTENSION_ORIGIN));
    const found = ours();
    if (found) return found;
    return this.ctx.waitForEvent('serviceworker', {
      predicate: (w) => w.url().startsWith(EXTENSION_ORIGIN),
      timeout: timeoutMs,
    });
  }

  /** Opens one of the extension's own pages in a tab, as a person opening it would. */
  async extensionPage(path) {
    const page = await this.ctx.newPage();
    page.on('console', (m) => this.consoleLines.push(`[${path}] ${m.type()}: ${m.text()}`));
    await page.goto(`${EXTENSION_ORIGIN}/${path}`);
    return page;
  }

  /** Sets the bridge port in the options page, as a person would, and closes it. */
  async setPort(port) {
    const page = await this.extensionPage('options/options.html');
    await page.fill('#port', String(port));
    await page.click('#port-save');
    // The worker stores the port and reconnects first: on a loaded machine that is seconds.
    await domWait(page, () => document.querySelector('#port-message')?.textContent.trim(), null,
                  { timeout: 30000, what: 'the options page to say the port was saved' });
    await page.close();
  }

  /** Chooses the transport in the options page ('auto', 'websocket', 'native'), as a person would. */
  async setTransport(mode) {
    const page = await this.extensionPage('options/options.html');
    await page.check(`input[name="transport"][value="${mode}"]`);
    await domWait(page, () => document.querySelector('#transport-message')?.textContent.trim(), null,
                  { what: 'the options page to say the transport was saved' });
    await page.close();
    await until(async () => (await (await this.worker()).evaluate(() => globalThis.chaperone?.transports?.mode)
      .catch(() => null)) === mode, { what: `the worker to use the ${mode} transport` });
  }

  /**
   * Opens the popup (as a tab) for the window of `forPage` — the popup grants tabs of "this
   * window", and a popup opened as a tab needs to be told which that is.
   */
  async popup(forPage) {
    let query = '';
    if (forPage) {
      const windowId = await this.windowIdOf(forPage);
      query = `?windowId=${windowId}`;
    }
    return this.extensionPage(`popup/popup.html${query}`);
  }

  /** The browser's window id of a page, asked of the extension's worker. */
  async windowIdOf(page) {
    const url = page.url();
    const sw = await this.worker();
    return sw.evaluate(async (u) => (await chrome.tabs.query({})).find((t) => t.url === u)?.windowId, url);
  }

  async tabIdOf(page) {
    const url = page.url();
    const sw = await this.worker();
    return sw.evaluate(async (u) => (await chrome.tabs.query({})).find((t) => t.url === u)?.id, url);
  }

  /**
   * Presses "Pair with Chaperone" in the popup; resolves with the code the popup shows (six
   * digits, without the space) once it shows one.
   */
  async startPairing(popup) {
    await popup.click('#pair-button');
    // The code comes once the worker is connected to the bridge and the app has answered: on a
    // loaded machine (CI, two cores, a browser per suite) that is seconds, as for the port.
    const shown = await domWait(popup, () => {
      const el = document.querySelector('#pair-code');
      const text = el && el.checkVisibility() ? el.textContent.trim() : '';
      return /^\d{3} \d{3}$/.test(text) ? text : null;
    }, null, { timeout: 30000, what: 'the popup to show a pairing code' });
    return shown.replace(' ', '');
  }

  /** The popup's status line, e.g. "Connected to Chaperone". */
  async status(popup) {
    return (await popup.textContent('#status-text'))?.trim() ?? '';
  }

  /**
   * Waits until the worker reports `state` (the bridge client's state name). The worker can be
   * stopped and started under us, and nothing outside it hears its state change: looked at
   * through until().
   */
  async waitForState(state, { timeoutMs = 20000 } = {}) {
    return until(async () => {
      const sw = await this.worker();
      const got = await sw.evaluate(() => globalThis.chaperone?.bridge?.state).catch(() => null);
      return got === state ? got : null;
    }, { timeout: timeoutMs, what: `the extension to be ${state}` });
  }

  /**
   * Creates a grant in the popup the way a person does: ticks the tabs, picks the preset and
   * extras, the duration and a label, presses Create grant.
   */
  async grant(popup, { pages, preset = 'read', extras = [], durationMs = 900000, label = 'E2E task',
                       frames = {} }) {
    await popup.reload();
    for (const page of pages) {
      const tabId = await this.tabIdOf(page);
      await popup.check(`#tab-${tabId}`);
      for (const frameId of frames[tabId] ?? []) await popup.check(`#frame-${tabId}-${frameId}`);
    }
    await popup.check(`input[name="preset"][value="${preset}"]`);
    for (const scope of extras) await popup.check(`#extra-${scope.replace(/\./g, '-')}`);
    await popup.selectOption('#grant-duration', String(durationMs));
    await popup.fill('#grant-label', label);
    await popup.click('#grant-create');
    await domWait(popup, (l) => document.querySelector('#active-list')?.textContent.includes(l), label,
                  { what: `the grant "${label}" to be listed in the popup` });
  }

  /**
   * The frame checkboxes the popup offers for a tab, as a person reads them: [{frameId, label}].
   * (Browser.grant takes frame ids; a test picks them by the origin in the label.)
   */
  async popupFrames(popup, page) {
    const tabId = await this.tabIdOf(page);
    await popup.reload();
    await popup.waitForSelector(`#tab-${tabId}`, { timeout: 10000 });
    return popup.$$eval(`li:has(> #tab-${tabId}) .frame-box`, (boxes) => boxes.map((b) => ({
      frameId: Number(b.dataset.frameId),
      label: document.querySelector(`label[for="${b.id}"]`)?.textContent ?? '',
    })));
  }

  /**
   * The text inside closed shadow roots of a page (Chaperone's pill and banner), read through the
   * DevTools protocol: neither the page's scripts nor Playwright's locators can see into a closed
   * root. Keep to small pages: the whole DOM is fetched.
   */
  async closedShadowText(page) {
    const cdp = await this.ctx.newCDPSession(page);
    try {
      const { root } = await cdp.send('DOM.getDocument', { depth: -1, pierce: true });
      const texts = [];
      const walk = (n, closed) => {
        if (n.nodeType === 3 && closed && n.nodeValue.trim()) texts.push(n.nodeValue.trim());
        for (const c of n.children ?? []) walk(c, closed);
        for (const sr of n.shadowRoots ?? []) walk(sr, closed || sr.shadowRootType === 'closed');
      };
      walk(root, false);
      return texts.join('\n');
    } finally {
      await cdp.detach().catch(() => {});
    }
  }

  /**
   * Clicks, with a real (trusted) mouse click at its centre, the element inside a closed shadow
   * root that carries `attribute="value"` (e.g. the banner's data-chaperone="done"). Returns the
   * point clicked. Throws when there is no such element or it has no box.
   *
   * Chaperone's pill and banner count a click only once they have been seen fully visible (the
   * banner: for half a second), so a page cannot reveal them under the pointer just before a
   * click; page-ui.js marks the time from which clicks count (`data-armed-at`, the page's
   * performance.now) inside the closed root. This waits for it, as a person's eyes would.
   */
  async clickInClosedShadow(page, attribute, value, { timeoutMs = 10000 } = {}) {
    let point;
    await until(async () => {
      const found = await this.#closedShadowTarget(page, attribute, value);
      if (found.armedAt === null || await page.evaluate(() => performance.now()) < found.armedAt) return false;
      point = found.point;
      return true;
    }, { timeout: timeoutMs, what: `[${attribute}="${value}"] to take clicks` });
    await page.mouse.click(point.x, point.y);
    return point;
  }

  /** {point, armedAt} of the element clickInClosedShadow means; armedAt null while not armed. */
  async #closedShadowTarget(page, attribute, value) {
    const cdp = await this.ctx.newCDPSession(page);
    try {
      const { root } = await cdp.send('DOM.getDocument', { depth: -1, pierce: true });
      const attr = (n, name) => {
        const a = Array.isArray(n.attributes) ? n.attributes : [];
        for (let i = 0; i < a.length; i += 2) if (a[i] === name) return a[i + 1];
        return null;
      };
      let found = null;
      let armedAt = null;
      const walk = (n, closed, armed) => {
        if (found) return;
        const mark = closed && n.nodeType === 1 ? attr(n, 'data-armed-at') : null;
        const here = mark !== null ? Number(mark) : armed;
        if (closed && n.nodeType === 1 && attr(n, attribute) === value) {
          found = n;
          armedAt = here;
          return;
        }
        for (const c of n.children ?? []) walk(c, closed, here);
        for (const sr of n.shadowRoots ?? []) walk(sr, closed || sr.shadowRootType === 'closed', null);
      };
      walk(root, false, null);
      if (!found) throw new Error(`no [${attribute}="${value}"] in a closed shadow root`);
      const { model } = await cdp.send('DOM.getBoxModel', { nodeId: found.nodeId });
      const q = model.content;
      const point = { x: (q[0] + q[2] + q[4] + q[6]) / 4, y: (q[1] + q[3] + q[5] + q[7]) / 4 };
      return { point, armedAt: Number.isFinite(armedAt) ? armedAt : null };
    } finally {
      await cdp.detach().catch(() => {});
    }
  }

  /**
   * Stops the extension's service worker for real, as Chrome does to an idle worker, through the
   * DevTools protocol's ServiceWorker domain (from one of the extension's own pages, which shares
   * its storage partition). Resolves once Chrome reports it stopped. Anything that wakes the worker
   * afterwards (an extension page's message, a browser event it listens to, its alarm) starts a
   * fresh instance: new globals, state only from chrome.storage.
   */
  async stopServiceWorker({ timeoutMs = 10000 } = {}) {
    const page = await this.ctx.newPage();
    await page.goto(`${EXTENSION_ORIGIN}/options/options.html`);
    const cdp = await this.ctx.newCDPSession(page);
    try {
      const ours = new Map(); // versionId → runningStatus
      const updates = watch();
      let stoppedSeen = false;
      cdp.on('ServiceWorker.workerVersionUpdated', ({ versions }) => {
        for (const v of versions) {
          if (!v.scriptURL.startsWith(EXTENSION_ORIGIN)) continue;
          ours.set(v.versionId, v.runningStatus);
          if (v.runningStatus === 'stopped') stoppedSeen = true;
        }
        updates.notify();
      });
      await cdp.send('ServiceWorker.enable');
      await updates.when(() => ours.size > 0, { timeout: timeoutMs, what: 'the extension\'s service worker to be listed' });
      stoppedSeen = false;
      const stopped = updates.when(() => stoppedSeen, { timeout: timeoutMs, what: 'Chrome to report the service worker stopped' });
      for (const versionId of ours.keys()) await cdp.send('ServiceWorker.stopWorker', { versionId });
      await stopped;
    } finally {
      await cdp.detach().catch(() => {});
      await page.close().catch(() => {});
    }
  }

  async close() {
    if (this.closed) return;
    this.closed = true;
    if (this.detachable) {
      await this.detachable.cdp.close().catch(() => {});
      this.detachable.child.kill('SIGTERM');
      await this.detachable.exited;
    } else {
      await this.ctx.close().catch(() => {});
    }
    await rm(this.userDataDir, { recursive: true, force: true });
  }
}

export { display };
