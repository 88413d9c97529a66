// SPDX-License-Identifier: GPL-3.0-or-later
// Real Firefox ESR with the Firefox build of the extension (build-aux/make-firefox-extension.py),
// driven over WebDriver BiDi — Firefox's own remote protocol, no patched browser — through
// puppeteer-core, the way browser-harness.mjs drives Chromium: the options page to set the port,
// the popup's own buttons to pair and to grant, as a person presses them.
//
// Firefox gives each installation a random moz-extension:// UUID. The profile is told which one
// to give ours (the pref extensions.webextensions.uuids, a fresh random UUID per launch), so the
// test knows the origin the app must see without asking the extension.
//
// Two things only a test needs: Firefox's BiDi refuses to navigate a tab to an extension page
// unless it is started with -remote-allow-system-access (a person types the address or clicks
// the toolbar button instead), and the background page's state is read through
// runtime.getBackgroundPage() from one of the extension's own pages (BiDi does not list
// background pages).

import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { deadline, until } from '../lib/until.mjs';

const here = dirname(fileURLToPath(import.meta.url));

export const FIREFOX = process.env.CHAPERONE_FIREFOX ?? '/usr/bin/firefox-esr';
// Meson sets it to its build's folder; by hand, the default build's.
export const FIREFOX_EXTENSION_DIR = resolve(process.env.CHAPERONE_FIREFOX_EXTENSION
  ?? join(here, '..', '..', 'build', 'extension-firefox'));
// The packed add-on meson builds beside that folder.
export const FIREFOX_XPI = join(dirname(FIREFOX_EXTENSION_DIR), 'chaperone-firefox.xpi');
// browser_specific_settings.gecko.id in the Firefox build's manifest.
export const GECKO_ID = 'chaperone@chaperone.github.io';

let puppeteer = null;
try {
  puppeteer = (await import('puppeteer-core')).default;
} catch {
  // reported by firefoxWhyNot()
}

/** Why the Firefox suites cannot run here, or null. */
export function firefoxWhyNot() {
  if (!existsSync(FIREFOX)) return `no Firefox at ${FIREFOX} (apt install firefox-esr)`;
  if (!puppeteer) return 'puppeteer-core is not installed (npm ci)';
  if (!existsSync(join(FIREFOX_EXTENSION_DIR, 'manifest.json'))) {
    return `no Firefox build of the extension at ${FIREFOX_EXTENSION_DIR} (ninja -C build)`;
  }
  return null;
}

/**
 * Resolves with `fn(arg)`'s value in `page` once it is truthy, looked at again on every DOM
 * mutation (puppeteer's mutation polling: a MutationObserver in the page, not a clock).
 */
export async function domWait(page, fn, arg, { timeout = 10000, what }) {
  const handle = await deadline(page.waitForFunction(fn, { polling: 'mutation', timeout: 0 }, arg ?? null),
                                { timeout, what });
  try {
    return await handle.jsonValue();
  } finally {
    await handle.dispose().catch(() => {});
  }
}

export class Firefox {
  /**
   * Launches Firefox ESR with a fresh profile and the extension installed as a temporary add-on.
   * `localDomains`: host names Firefox resolves to loopback (the pref network.dns.localDomains),
   * as Chromium's --host-resolver-rules maps them in browser-harness.mjs.
   *
   * `permanent`: instead, the packed add-on (chaperone-firefox.xpi) installed for good, as ESR
   * does with unsigned add-ons allowed (xpinstall.signatures.required false, as the README says):
   * placed in the profile's extensions folder, which Firefox installs from at start (the pref
   * extensions.autoDisableScopes 0 spares the prompt a person would answer). `profile` and `uuid`:
   * start again on the profile (and with the extension's UUID) of a Firefox that was closed with
   * close({keepProfile: true}).
   */
  static async launch({ headless = true, localDomains = [], permanent = false, profile = null, uuid = null } = {}) {
    uuid ??= randomUUID();
    profile ??= await mkdtemp(join(tmpdir(), 'chaperone-firefox-'));
    if (permanent) {
      await mkdir(join(profile, 'extensions'), { recursive: true });
      await copyFile(FIREFOX_XPI, join(profile, 'extensions', `${GECKO_ID}.xpi`));
    }
    const browser = await puppeteer.launch({
      browser: 'firefox',
      executablePath: FIREFOX,
      headless,
      userDataDir: profile,
      args: ['-remote-allow-system-access'],
      extraPrefsFirefox: {
        'extensions.webextensions.uuids': JSON.stringify({ [GECKO_ID]: uuid }),
        // No first-run pages, no updates or telemetry in the test's profile.
        'browser.shell.checkDefaultBrowser': false,
        'app.update.enabled': false,
        'datareporting.policy.dataSubmissionEnabled': false,
        ...(localDomains.length ? { 'network.dns.localDomains': localDomains.join(',') } : {}),
        ...(permanent ? { 'xpinstall.signatures.required': false, 'extensions.autoDisableScopes': 0 } : {}),
      },
    });
    const firefox = new Firefox(browser, profile, uuid);
    try {
      if (!permanent) {
        // The BiDi command webExtension.install, with the unpacked folder: a temporary add-on, as
        // about:debugging's "Load Temporary Add-on" makes one.
        const id = await browser.installExtension(FIREFOX_EXTENSION_DIR);
        if (id !== GECKO_ID) throw new Error(`installed as ${id}, not ${GECKO_ID}`);
      }
      firefox.control = await firefox.extensionPage('options/options.html');
      await firefox.control.evaluate(() => { globalThis.bgPage = () => chrome.runtime.getBackgroundPage(); });
      await until(() => firefox.bg(async () => !!(await bgPage())?.chaperone?.bridge).catch(() => false),
                  { timeout: 15000, what: 'the extension\'s background page to start' });
    } catch (err) {
      await firefox.close();
      throw err;
    }
    return firefox;
  }

  constructor(browser, profile, uuid) {
    this.browser = browser;
    this.profile = profile;
    this.uuid = uuid;
    this.origin = `moz-extension://${uuid}`;
    this.consoleLines = [];
    this.control = null;
  }

  /** A new tab showing `url` (a web page), loaded. */
  async newPage(url, name = url) {
    const page = await this.browser.newPage();
    page.on('console', (m) => this.consoleLines.push(`[${name}] ${m.type()}: ${m.text()}`));
    if (url) await page.goto(url);
    return page;
  }

  /**
   * Opens one of the extension's own pages in a tab, as a person opening its address would.
   * Firefox loads extension pages in the extension's process: puppeteer sees the old document
   * go away and does not follow, so the page is awaited by its own address, from inside.
   */
  async extensionPage(path) {
    const page = await this.browser.newPage();
    page.on('console', (m) => this.consoleLines.push(`[${path}] ${m.type()}: ${m.text()}`));
    const url = `${this.origin}/${path}`;
    page.goto(url).catch(() => {});
    await until(async () => (await page.evaluate(() => document.readyState === 'complete' && location.href)
      .catch(() => null)) === url, { timeout: 15000, what: `${url} to load` });
    return page;
  }

  /** Reloads an extension page and waits for the new document (the old one is marked). */
  async reload(page) {
    const url = await page.evaluate(() => {
      window.__chaperoneOld = true;
      setTimeout(() => location.reload(), 0);
      return location.href;
    });
    await until(() => page.evaluate((u) => document.readyState === 'complete' && location.href === u
      && !window.__chaperoneOld, url).catch(() => false), { timeout: 15000, what: `${url} to reload` });
  }

  /**
   * `fn(arg)` run in one of the extension's pages, and its value; there `await bgPage()` is the
   * background page's window (an event page in Firefox; its globalThis.chaperone is what a
   * worker's evaluate reads in browser-harness.mjs). The extension's CSP forbids building code
   * from text, so the background is reached from the page, not evaluated into.
   */
  async bg(fn, arg) {
    return this.control.evaluate(fn, arg ?? null);
  }

  /** `fn(arg)` run in an extension page, where `chrome.*` is the extension's: its value. */
  ext(fn, arg) {
    return this.control.evaluate(fn, arg ?? null);
  }

  async tabIdOf(page) {
    const url = page.url();
    return this.ext(async (u) => (await chrome.tabs.query({})).find((t) => t.url === u)?.id, url);
  }

  async windowIdOf(page) {
    const url = page.url();
    return this.ext(async (u) => (await chrome.tabs.query({})).find((t) => t.url === u)?.windowId, url);
  }

  /** Sets the bridge port in the options page, as a person would. */
  async setPort(port) {
    const page = await this.extensionPage('options/options.html');
    await page.evaluate(() => { document.querySelector('#port').value = ''; });
    await page.type('#port', String(port));
    await page.click('#port-save');
    await domWait(page, () => document.querySelector('#port-message')?.textContent.trim(), null,
                  { timeout: 30000, what: 'the options page to say the port was saved' });
    await page.close();
  }

  /** The popup, as a tab, for the window of `forPage` (it grants tabs of "this window"). */
  async popup(forPage) {
    const query = forPage ? `?windowId=${await this.windowIdOf(forPage)}` : '';
    return this.extensionPage(`popup/popup.html${query}`);
  }

  /** Presses "Pair with Chaperone"; resolves with the six digits the popup shows. */
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

  /**
   * Pairs with a TestEngine (tests/js/engine-harness.mjs) as a person does: Pair pressed in the
   * popup, the two codes compared, the app's Pair pressed (the engine's approve). → deviceId.
   */
  async pairWith(engine, popup) {
    const mark = engine.mark();
    const code = await this.startPairing(popup);
    const pairing = await engine.waitFor({ event: 'pairing' }, { after: mark, timeoutMs: 15000 });
    if (pairing.code.replace(/\D/g, '') !== code) throw new Error(`the app shows ${pairing.code}, the popup ${code}`);
    if (pairing.origin !== this.origin) throw new Error(`pairing from ${pairing.origin}, not ${this.origin}`);
    engine.approve(pairing.requestId);
    const online = await engine.waitFor({ event: 'device-online' }, { after: mark, timeoutMs: 20000 });
    await this.waitForState('connected');
    return online.deviceId;
  }

  /** The background's bridge state, looked at until it is `state`. */
  async waitForState(state, { timeoutMs = 20000 } = {}) {
    return until(async () => {
      const got = await this.bg(async () => (await bgPage())?.chaperone?.bridge?.state).catch(() => null);
      return got === state ? got : null;
    }, { timeout: timeoutMs, what: `the extension to be ${state}` });
  }

  /** Ticks a checkbox the way a person does: a click, only when it is not ticked yet. */
  async check(page, selector) {
    await page.waitForSelector(selector, { timeout: 10000 });
    if (!(await page.$eval(selector, (el) => el.checked))) await page.click(selector);
  }

  /** Creates a grant in the popup as a person does (browser-harness.mjs's Browser.grant). */
  async grant(popup, { pages, preset = 'read', extras = [], durationMs = 900000, label = 'E2E task' }) {
    await this.reload(popup);
    for (const page of pages) await this.check(popup, `#tab-${await this.tabIdOf(page)}`);
    await this.check(popup, `input[name="preset"][value="${preset}"]`);
    for (const scope of extras) await this.check(popup, `#extra-${scope.replace(/\./g, '-')}`);
    await popup.select('#grant-duration', String(durationMs));
    await popup.type('#grant-label', label);
    await popup.click('#grant-create');
    await domWait(popup, (l) => document.querySelector('#active-list')?.textContent.includes(l), label,
                  { what: `the grant "${label}" to be listed in the popup` });
  }

  /**
   * What Chaperone's pill and banner show, read from their closed shadow roots the way only an
   * extension can: a content script of ours (scripting.executeScript, the isolated world) opens
   * them with Firefox's `openOrClosedShadowRoot`. The page's own scripts cannot. With `attribute`
   * and `value`, also the centre of the element that carries them and the time (the page's
   * performance.now) from which page-ui.js counts clicks on it (data-armed-at), or null.
   */
  async closedShadow(page, attribute = null, value = null) {
    const tabId = await this.tabIdOf(page);
    const [{ result }] = await this.ext(([id, attr, val]) => chrome.scripting.executeScript({
      target: { tabId: id, frameIds: [0] },
      args: [attr, val],
      func: (a, v) => {
        const out = { text: [], target: null, now: performance.now() };
        for (const host of document.documentElement.children) {
          const root = host.openOrClosedShadowRoot;
          if (!root || host.shadowRoot) continue;   // ours are closed
          out.text.push(root.textContent.replace(/\s+/g, ' ').trim());
          const el = a ? root.querySelector(`[${a}="${v}"]`) : null;
          if (el && !out.target) {
            const armed = el.closest('[data-armed-at]');
            const r = el.getBoundingClientRect();
            out.target = { x: r.left + r.width / 2, y: r.top + r.height / 2,
                           armedAt: armed ? Number(armed.getAttribute('data-armed-at')) : null };
          }
        }
        out.text = out.text.join('\n');
        return out;
      },
    }), [tabId, attribute, value]);
    return result;
  }

  /**
   * A person's click (trusted input through BiDi) at the centre of the element in a closed shadow
   * root that carries `attribute="value"`, once page-ui.js counts clicks on it — as a person's
   * eyes would wait for a bar that just appeared (browser-harness.mjs's clickInClosedShadow).
   */
  async clickInClosedShadow(page, attribute, value, { timeoutMs = 10000 } = {}) {
    const target = await until(async () => {
      const got = await this.closedShadow(page, attribute, value);
      const t = got.target;
      return t && t.armedAt !== null && got.now >= t.armedAt ? t : null;
    }, { timeout: timeoutMs, what: `[${attribute}="${value}"] to take clicks` });
    await page.mouse.click(target.x, target.y);
    return target;
  }

  /** Quits Firefox; its profile goes too, unless `keepProfile` (to launch on it again). */
  async close({ keepProfile = false } = {}) {
    await this.browser?.close().catch(() => {});
    this.browser = null;
    if (!keepProfile) await rm(this.profile, { recursive: true, force: true }).catch(() => {});
  }
}
