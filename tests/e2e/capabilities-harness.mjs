// SPDX-License-Identifier: GPL-3.0-or-later
// The setup the extension-capabilities-*.test.mjs files share: browser, engine, pairing, grants, and calls as the app makes them.
// Every capability of the extension, end to end: real Chromium with the real extension, the real
// C core engine (tests/chaperone-test-engine, no GTK) and the fixture sites. Each agent request is
// made the way the app makes it — `call(deviceId, method, params)` routed by the engine to the
// paired browser — never by calling the extension's handlers inside the browser. What the person
// does is done as a person does it: pairing and grants in the popup, Done on the page's banner
// and Esc with real (trusted) input, Revoke/Resume/Done through the engine functions the app's
// buttons call. The browser is only read from (tab state, page text) to check what a person
// would notice.
//
//
// One browser, one engine and one pairing per test file (setUpCapabilities() in the file's describe);
// the tests of a file run in order and the last ones may change its shared state.

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, test } from 'node:test';

import { startFixtureServer } from '../fixtures/serve.mjs';
import { ENGINE_PATH, TestEngine } from '../js/engine-harness.mjs';
import { Browser, EXTENSION_ORIGIN, browserWhyNot } from './browser-harness.mjs';
import { until } from '../lib/until.mjs';

function engineWhyNot() {
  if (!ENGINE_PATH) return 'CHAPERONE_TEST_ENGINE is not set (ninja -C build; see tests/js/engine-harness.mjs)';
  if (!existsSync(ENGINE_PATH)) return `no engine harness at ${ENGINE_PATH} (ninja -C build)`;
  return null;
}

export const skip = browserWhyNot() ?? engineWhyNot() ?? false;
if (skip) console.log(`# skipped: ${skip}`);

// Put into fields by the agent; must never come back in any reply.
export const SECRET_NAME = 'Zq7-distinctive-name-value-913';
export const SECRET_PASSWORD = 'Pw-hunter2-distinctive-4471';
const HIDDEN_FIELD_VALUE = 'hidden-csrf-token-value'; // forms.html's hidden input
export const COOKIE_VALUE = 's3cr3t-session-value'; // serve.mjs's HttpOnly cookie
const NEVER_IN_A_REPLY = [SECRET_NAME, SECRET_PASSWORD, HIDDEN_FIELD_VALUE, COOKIE_VALUE];

export const MAX_TEXT_BYTES = 20480;
export const MAX_NODES = 2000;
export const MAX_SCAN = 10000;

export let sites;
export let engine;
export let browser;
export let popup;
export let deviceId;

/** The engine restarted on the same port and data directory (the restart step): later calls go to it. */
export function setEngine(next) {
  engine = next;
}

export const pages = {}; // name → Playwright page
export const tabs = {}; // name → tabId
export const grants = {}; // label → grantId

// A failed test leaves the browser's and the engine's last words in the log (see after()).
let failed = false;
export const step = (name, fn) => test(name, async (t) => {
  try {
    await fn(t);
  } catch (err) {
    failed = true;
    throw err;
  }
});

// ---- calls as the app makes them ------------------------------------------------------------

/** One engine → browser call; every reply is checked for values that must never leave the page. */
export async function call(method, params = {}, { timeoutMs = 8000 } = {}) {
  const reply = await engine.call(deviceId, method, params, { timeoutMs });
  const text = JSON.stringify(reply);
  for (const secret of NEVER_IN_A_REPLY) {
    assert.ok(!text.includes(secret), `${method} replied with a field/cookie value (${secret}): ${text.slice(0, 400)}`);
  }
  return reply;
}

export async function ok(method, params) {
  const reply = await call(method, params);
  assert.ok(reply.result !== undefined,
    `${method} ${JSON.stringify(params)} failed: ${JSON.stringify(reply.error)}`);
  return reply.result;
}

export async function refused(code, method, params) {
  const reply = await call(method, params);
  assert.equal(reply.error?.code, code,
    `${method} ${JSON.stringify(params)} should answer ${code}, got ${JSON.stringify(reply.error ?? reply.result).slice(0, 300)}`);
  return reply.error;
}

export const context = (name, extra = {}) => ok('browser.context', { tabId: tabs[name], ...extra });
export const nodeNamed = (ctx, name) => {
  const node = ctx.nodes.find((n) => n.name === name);
  assert.ok(node, `a node named "${name}" among ${ctx.nodes.map((n) => n.name).join(' | ').slice(0, 600)}`);
  return node;
};
export const fieldNamed = (ctx, name) => {
  const field = ctx.forms.flatMap((f) => f.fields).find((f) => f.name === name);
  assert.ok(field, `a field named "${name}"`);
  return field;
};
export const pageText = (name, selector) => pages[name].textContent(selector);
export const workerEval = async (fn, arg) => (await browser.worker()).evaluate(fn, arg);
export const tabActive = (tabId) => workerEval(async (id) => (await chrome.tabs.get(id)).active, tabId);

export async function open(name, path) {
  const page = await browser.ctx.newPage();
  page.on('console', (m) => browser.consoleLines.push(`[${name}] ${m.type()}: ${m.text()}`));
  await page.goto(`${sites.originA}${path}`);
  pages[name] = page;
  tabs[name] = await browser.tabIdOf(page);
  assert.ok(Number.isInteger(tabs[name]), `the tab of ${path}`);
  return page;
}

/** Registers the before() and after() hooks that set up and tear down the shared state; call it in a describe. */
export function setUpCapabilities() {
  before(async () => {
    sites = await startFixtureServer();
    engine = await TestEngine.start();
    browser = await Browser.launch();
    (await browser.worker()).on('console', (m) => browser.consoleLines.push(`[worker] ${m.type()}: ${m.text()}`));
    await browser.setPort(engine.port);

    // Each page in its own tab of the one window; distinct URLs so each tab is found by its URL.
    await open('forms', '/forms.html');
    // A shown password field makes a page a sign-in page, which refuses agents whole (the step
    // "a visible password field…" below): the form's other fields are tested with its row hidden,
    // as a page hides a section it does not show.
    await pages.forms.evaluate(() => { document.getElementById('password').closest('label').style.display = 'none'; });
    await open('shadow', '/shadow.html');
    await open('iframe', '/iframe.html');
    await open('login', '/login.html');
    await open('big', '/big.html');
    await open('dynamic', '/dynamic.html');
    await open('overlay', '/overlay.html');
    await open('modal', '/modal.html');
    await open('drag', '/widgets-drag.html');
    await open('nav', '/navigate-away.html');
    await open('cookies', '/cookies.html');
    await open('handoff', '/handoff.html');
    await open('read', '/handoff.html?grant=read');
    await open('short', '/dynamic.html?grant=short');
    await open('ungranted', '/forms.html?grant=none');
    // The iframe's two children must have loaded for the popup to offer them.
    await pages.iframe.frameLocator('#cross').locator('#child-button').waitFor({ timeout: 10000 });
    await pages.iframe.frameLocator('#same').locator('#child-button').waitFor({ timeout: 10000 });

    // Pairing: the popup shows a code, the app shows one; the person compares and presses Pair.
    popup = await browser.popup(pages.forms);
    const mark = engine.mark();
    const code = await browser.startPairing(popup);
    const pairing = await engine.waitFor({ event: 'pairing' }, { after: mark, timeoutMs: 15000 });
    assert.equal(pairing.code.replace(/\D/g, ''), code, 'the app shows the code the popup shows');
    assert.equal(pairing.origin, EXTENSION_ORIGIN);
    engine.approve(pairing.requestId);
    assert.equal((await engine.waitFor({ event: 'pairing-ended', requestId: pairing.requestId },
      { after: mark, timeoutMs: 10000 })).outcome, 'approved');
    deviceId = (await engine.waitFor({ event: 'device-online' }, { after: mark, timeoutMs: 20000 })).deviceId;
    await browser.waitForState('connected');

    // Grants, made in the popup: Control (+ navigate, cookies) on most tabs, the iframe's
    // same-origin child frame but not its cross-origin one; Read on one tab; 5 minutes on another.
    const frames = await browser.popupFrames(popup, pages.iframe);
    const sameFrame = frames.find((f) => f.label.includes(sites.originA));
    assert.ok(sameFrame, `the popup offers the same-origin frame: ${JSON.stringify(frames)}`);
    assert.ok(frames.some((f) => f.label.includes(sites.originB)), 'and the cross-origin one');
    tabs.sameFrameId = sameFrame.frameId;
    tabs.crossFrameId = frames.find((f) => f.label.includes(sites.originB)).frameId;
    const controlled = ['forms', 'shadow', 'iframe', 'login', 'big', 'dynamic', 'overlay', 'modal', 'drag', 'nav',
      'cookies', 'handoff'];
    await browser.grant(popup, {
      pages: controlled.map((n) => pages[n]), preset: 'control',
      extras: ['browser.tab.navigate', 'browser.cookies.read'], label: 'E2E control',
      frames: { [tabs.iframe]: [sameFrame.frameId] },
    });
    await browser.grant(popup, { pages: [pages.read], preset: 'read', label: 'E2E read only' });
    await browser.grant(popup, { pages: [pages.short], preset: 'read', durationMs: 300000, label: 'E2E five minutes' });
    // The app learns of each grant from the extension's grant.changed event, which may come after
    // the popup is done: wait for the mirror to hold all three.
    const want = ['E2E control', 'E2E five minutes', 'E2E read only'];
    const listed = await until(async () => {
      const r = (await engine.command({ cmd: 'grants' })).result;
      return want.every((l) => r.some((g) => g.label === l)) ? r : null;
    }, { what: 'the app to mirror the three grants made in the popup', timeout: 15000 });
    for (const g of listed) grants[g.label] = g.grantId;
    assert.deepEqual(Object.keys(grants).sort(), want, 'the app mirrors the three grants made in the popup');
  }, { timeout: 90000 });

  after(async () => {
    if (failed) {
      console.log(browser?.consoleLines.slice(-60).join('\n'));
      console.log(engine?.stderrTail());
    }
    await browser?.close();
    await engine?.stop();
    await sites?.close();
  }, { timeout: 30000 });
}
