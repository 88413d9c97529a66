// SPDX-License-Identifier: GPL-3.0-or-later
// The browser, fixture server and helpers the ext-page-agent-*.test.mjs files share; importing it opens them.
// The page agent (extension/content/page-agent.js) for real, in Chromium, on the fixture sites.
// No extension is needed for this: the classic scripts are added to the page as they would be
// by chrome.scripting.executeScript (here in the page's main world, so page script and agent share
// a world — the closed-shadow-root checks hold all the more in the real ISOLATED world).
// chrome.runtime is absent unless a test stubs it to watch page.stop / page.handoff messages.
// One browser for the whole file; skipped, with the reason printed, when Chromium is missing.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before } from 'node:test';
import { PAGE_FILES } from '../../extension/lib/page-bridge.js';
import { startFixtureServer } from '../fixtures/serve.mjs';
import { browserWhyNot, launchPlainChromium } from '../e2e/browser-harness.mjs';
import { deadline, until } from '../lib/until.mjs';

export const skip = browserWhyNot() ?? false;
if (skip) console.log(`# skipping ext-page-agent tests: ${skip}`);

/**
 * The options every test of these files takes: skipped with the reason above, and a test that
 * hangs fails after a minute under its own name (the runner's own limit is the whole file's).
 */
export const opts = Object.freeze({ skip, timeout: 60000 });

/** No page op takes this long, even on a loaded machine: one that does has hung, and says which. */
const OP_LIMIT_MS = 30000;

// The files executeScript({files}) injects, in its order: the worker's own list.
const FILES = await Promise.all(PAGE_FILES.map((f) =>
  readFile(new URL(`../../extension/${f}`, import.meta.url), 'utf8')));

export let server;
let browser;
let context;

before(async () => {
  if (skip) return;
  server = await startFixtureServer();
  browser = await launchPlainChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
});

after(async () => {
  // Bounded, so a browser that will not close fails here by name instead of running the file out.
  await deadline((async () => {
    await context?.close();
    await browser?.close();
  })(), { timeout: OP_LIMIT_MS, what: 'Chromium to close' });
  await server?.close();
});

/**
 * Injects the agent into a page or frame, as executeScript({files}) would: the classic scripts
 * are evaluated as they are, without adding <script> elements (which would change the DOM and
 * dirty the layout the first capture then pays for).
 */
export async function inject(target) {
  for (const source of FILES) await target.evaluate(source);
}

/** Stubs chrome.runtime.sendMessage so a test can see what the page would tell the worker. */
async function stubRuntime(page) {
  await page.evaluate(() => {
    window.__sent = [];
    if (!window.chrome) window.chrome = {};
    Object.defineProperty(window.chrome, 'runtime', {
      configurable: true,
      value: { sendMessage: (m) => { window.__sent.push(m); return Promise.resolve(); } },
    });
  });
}

export async function open(path, { origin = server.originA, stub = false } = {}) {
  const page = await context.newPage();
  await page.goto(origin + path);
  if (stub) await stubRuntime(page);
  await inject(page);
  return page;
}

export const run = (target, op, args) => deadline(
  target.evaluate(([o, a]) => globalThis.__chaperonePage.run(o, a), [op, args]),
  { timeout: OP_LIMIT_MS, what: `the page agent's answer to ${op} ${JSON.stringify(args).slice(0, 200)}` });

export async function ok(target, op, args) {
  const r = await run(target, op, args);
  assert.equal(r.ok, true, `${op} failed: ${JSON.stringify(r.error)}`);
  return r.value;
}

export async function refused(target, op, args, code) {
  const r = await run(target, op, args);
  assert.equal(r.ok, false, `${op} should have been refused`);
  assert.equal(r.error.code, code, r.error.message);
  assert.equal(typeof r.error.message, 'string');
  return r.error;
}

/** A click the page holds, then approved as the person would: the same click with expect. */
export async function approve(target, captureId, ref, extra = {}) {
  const held = await ok(target, 'action', { captureId, ref, action: 'click' });
  assert.ok(held.held, `the click should have been held: ${JSON.stringify(held)}`);
  const done = await ok(target, 'action', { captureId, ref, action: 'click', expect: held.held.canonical, ...extra });
  return { held: held.held, done };
}

/**
 * Hides a password field's row (display:none on its label) the way a page hides a section it does
 * not show: a hidden password field does not make the page a sign-in page.
 */
export const hidePasswordRow = (target, selector = '#password') =>
  target.evaluate((sel) => { document.querySelector(sel).closest('label').style.display = 'none'; }, selector);
export const showPasswordRow = (target, selector = '#password') =>
  target.evaluate((sel) => { document.querySelector(sel).closest('label').style.display = ''; }, selector);

export const byName = (ctx, name) => {
  const n = ctx.nodes.find((x) => x.name === name);
  assert.ok(n, `node "${name}" in ${JSON.stringify(ctx.nodes.map((x) => x.name))}`);
  return n;
};

/** Nodes of a page's DOM including closed shadow roots (DevTools can see them; pages cannot). */
export async function piercedNodes(page) {
  const cdp = await page.context().newCDPSession(page);
  const { root } = await cdp.send('DOM.getDocument', { depth: -1, pierce: true });
  const all = [];
  const parent = new Map();
  const walk = (n) => {
    all.push(n);
    for (const c of [...(n.children || []), ...(n.shadowRoots || []), ...(n.contentDocument ? [n.contentDocument] : [])]) {
      parent.set(c, n);
      walk(c);
    }
  };
  walk(root);
  const attr = (n, name) => {
    const a = n.attributes || [];
    for (let i = 0; i < a.length; i += 2) if (a[i] === name) return a[i + 1];
    return null;
  };
  return { cdp, all, attr, parent };
}

/**
 * Waits until a click on Chaperone's element `which` counts: page-ui.js marks its pill or bar,
 * inside the closed root, with the time (the page's performance.now) from which the
 * IntersectionObserver has reported it visible long enough.
 */
async function untilArmed(page, which) {
  await until(async () => {
    const { cdp, all, attr, parent } = await piercedNodes(page);
    await cdp.detach();
    let n = all.find((x) => attr(x, 'data-chaperone') === which);
    while (n && attr(n, 'data-armed-at') === null) n = parent.get(n);
    const at = n ? Number(attr(n, 'data-armed-at')) : NaN;
    return Number.isFinite(at) && await page.evaluate(() => performance.now()) >= at;
  }, { what: `Chaperone's ${which} button to take clicks` });
}

/** A trusted mouse click on the element of a closed shadow root carrying data-chaperone=<which>. */
export async function clickOwnUi(page, which) {
  await untilArmed(page, which);
  const { cdp, all, attr } = await piercedNodes(page);
  const node = all.find((n) => attr(n, 'data-chaperone') === which);
  assert.ok(node, `Chaperone UI element ${which}`);
  const { model } = await cdp.send('DOM.getBoxModel', { backendNodeId: node.backendNodeId });
  const q = model.content;
  await page.mouse.click((q[0] + q[4]) / 2, (q[1] + q[5]) / 2);
  await cdp.detach();
}

export async function ownUiText(page) {
  const { cdp, all } = await piercedNodes(page);
  await cdp.detach();
  return all.filter((n) => n.nodeType === 3).map((n) => n.nodeValue).join(' ');
}
