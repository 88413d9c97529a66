// Real Chromium with the real, unpacked extension, driven by Playwright the way a person uses it:
// the options page to set the port, the popup's own buttons to pair and to grant. Shared by the
// end-to-end suites and the extension benchmark.

import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

export const EXTENSION_DIR = resolve(here, '..', '..', 'extension');
// Fixed by the development `key` in manifest.json (docs/extension.md says how it is derived).
export const EXTENSION_ID = 'immigohjinbkkjncmhkefbfainfbcigp';
export const EXTENSION_ORIGIN = `chrome-extension://${EXTENSION_ID}`;
export const CHROMIUM = process.env.CHAPERONE_CHROMIUM ?? '/usr/lib/chromium/chromium';

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

const display = (code) => `${code.slice(0, 3)} ${code.slice(3)}`;

async function until(get, { timeoutMs = 10000, what = 'a condition' } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await get();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export class Browser {
  /** Launches Chromium with a fresh profile and the extension loaded; resolves with its worker up. */
  static async launch({ headless = true } = {}) {
    const userDataDir = await mkdtemp(join(tmpdir(), 'chaperone-chromium-'));
    const ctx = await playwright.chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless,
      args: [
        '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync',
        '--disable-dev-shm-usage',
        `--disable-extensions-except=${EXTENSION_DIR}`, `--load-extension=${EXTENSION_DIR}`,
      ],
    });
    const browser = new Browser(ctx, userDataDir);
    await browser.worker();
    return browser;
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
    await until(async () => (await page.textContent('#port-message'))?.trim(), { what: 'the port to be saved' });
    await page.close();
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
    const shown = await until(async () => {
      const visible = await popup.isVisible('#pair-code');
      const text = visible ? (await popup.textContent('#pair-code'))?.trim() : '';
      return /^\d{3} \d{3}$/.test(text ?? '') ? text : null;
    }, { timeoutMs: 15000, what: 'the popup to show a pairing code' });
    return shown.replace(' ', '');
  }

  /** The popup's status line, e.g. "Connected to Chaperone". */
  async status(popup) {
    return (await popup.textContent('#status-text'))?.trim() ?? '';
  }

  /** Waits until the worker reports `state` (the bridge client's state name). */
  async waitForState(state, { timeoutMs = 20000 } = {}) {
    return until(async () => {
      const sw = await this.worker();
      const got = await sw.evaluate(() => globalThis.chaperone?.bridge?.state).catch(() => null);
      return got === state ? got : null;
    }, { timeoutMs, what: `the extension to be ${state}` });
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
    await until(async () => (await popup.textContent('#active-list'))?.includes(label),
                { what: `the grant "${label}" to be listed in the popup` });
  }

  async close() {
    await this.ctx.close().catch(() => {});
    await rm(this.userDataDir, { recursive: true, force: true });
  }
}

export { display, until };
