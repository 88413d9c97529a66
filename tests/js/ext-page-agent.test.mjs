// SPDX-License-Identifier: GPL-3.0-or-later
// The page agent (extension/content/page-agent.js) for real, in Chromium, on the fixture sites.
// No extension is needed for this: the classic scripts are added to the page as they would be
// by chrome.scripting.executeScript (here in the page's main world, so page script and agent share
// a world — the closed-shadow-root checks hold all the more in the real ISOLATED world).
// chrome.runtime is absent unless a test stubs it to watch page.stop / page.handoff messages.
// One browser for the whole file; skipped, with the reason printed, when Chromium is missing.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, test } from 'node:test';

import { PAGE_FILES } from '../../extension/lib/page-bridge.js';
import { startFixtureServer } from '../fixtures/serve.mjs';
import { browserWhyNot, domWait, launchPlainChromium } from '../e2e/browser-harness.mjs';
import { until } from '../lib/until.mjs';

const skip = browserWhyNot() ?? false;
if (skip) console.log(`# skipping ext-page-agent tests: ${skip}`);

// The files executeScript({files}) injects, in its order: the worker's own list.
const FILES = await Promise.all(PAGE_FILES.map((f) =>
  readFile(new URL(`../../extension/${f}`, import.meta.url), 'utf8')));

let server;
let browser;
let context;

before(async () => {
  if (skip) return;
  server = await startFixtureServer();
  browser = await launchPlainChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
});

after(async () => {
  await context?.close();
  await browser?.close();
  await server?.close();
});

/**
 * Injects the agent into a page or frame, as executeScript({files}) would: the classic scripts
 * are evaluated as they are, without adding <script> elements (which would change the DOM and
 * dirty the layout the first capture then pays for).
 */
async function inject(target) {
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

async function open(path, { origin = server.originA, stub = false } = {}) {
  const page = await context.newPage();
  await page.goto(origin + path);
  if (stub) await stubRuntime(page);
  await inject(page);
  return page;
}

const run = (target, op, args) => target.evaluate(([o, a]) => globalThis.__chaperonePage.run(o, a), [op, args]);

async function ok(target, op, args) {
  const r = await run(target, op, args);
  assert.equal(r.ok, true, `${op} failed: ${JSON.stringify(r.error)}`);
  return r.value;
}

async function refused(target, op, args, code) {
  const r = await run(target, op, args);
  assert.equal(r.ok, false, `${op} should have been refused`);
  assert.equal(r.error.code, code, r.error.message);
  assert.equal(typeof r.error.message, 'string');
  return r.error;
}

/** A click the page holds, then approved as the person would: the same click with expect. */
async function approve(target, captureId, ref, extra = {}) {
  const held = await ok(target, 'action', { captureId, ref, action: 'click' });
  assert.ok(held.held, `the click should have been held: ${JSON.stringify(held)}`);
  const done = await ok(target, 'action', { captureId, ref, action: 'click', expect: held.held.canonical, ...extra });
  return { held: held.held, done };
}

/**
 * Hides a password field's row (display:none on its label) the way a page hides a section it does
 * not show: a hidden password field does not make the page a sign-in page.
 */
const hidePasswordRow = (target, selector = '#password') =>
  target.evaluate((sel) => { document.querySelector(sel).closest('label').style.display = 'none'; }, selector);
const showPasswordRow = (target, selector = '#password') =>
  target.evaluate((sel) => { document.querySelector(sel).closest('label').style.display = ''; }, selector);

const byName = (ctx, name) => {
  const n = ctx.nodes.find((x) => x.name === name);
  assert.ok(n, `node "${name}" in ${JSON.stringify(ctx.nodes.map((x) => x.name))}`);
  return n;
};

/** Nodes of a page's DOM including closed shadow roots (DevTools can see them; pages cannot). */
async function piercedNodes(page) {
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
async function clickOwnUi(page, which) {
  await untilArmed(page, which);
  const { cdp, all, attr } = await piercedNodes(page);
  const node = all.find((n) => attr(n, 'data-chaperone') === which);
  assert.ok(node, `Chaperone UI element ${which}`);
  const { model } = await cdp.send('DOM.getBoxModel', { backendNodeId: node.backendNodeId });
  const q = model.content;
  await page.mouse.click((q[0] + q[4]) / 2, (q[1] + q[5]) / 2);
  await cdp.detach();
}

async function ownUiText(page) {
  const { cdp, all } = await piercedNodes(page);
  await cdp.detach();
  return all.filter((n) => n.nodeType === 3).map((n) => n.nodeValue).join(' ');
}

test('forms.html: fields without values, setValue with the native setter and bubbling events', { skip }, async () => {
  const page = await open('/forms.html');
  await page.fill('#password', 'hunter2-secret');
  await page.fill('#bio', 'typed biography words');
  // A shown password field makes this a sign-in page (refused below, "sign-in floor"); with its
  // row hidden the field is still listed — filled, by length only — and the page can be worked.
  await hidePasswordRow(page);
  const ctx = await ok(page, 'context', { captureId: 'c1' });
  assert.equal(ctx.title, 'Forms fixture');
  assert.equal(ctx.lang, 'en');
  assert.equal(ctx.nodes.length, 9);
  assert.equal(ctx.forms.length, 1);
  const form = ctx.forms[0];
  assert.equal(form.name, 'profile');
  assert.equal(form.method, 'post');
  assert.ok(form.ref);
  assert.deepEqual(form.fields.map((f) => f.type), ['text', 'email', 'password', 'select-one', 'checkbox', 'textarea', 'file']);
  const pw = form.fields.find((f) => f.name === 'password');
  assert.deepEqual({ credential: pw.credential, filled: pw.filled, valueLength: pw.valueLength, label: pw.label },
    { credential: true, filled: true, valueLength: 14, label: 'New password' });
  assert.equal(form.fields.find((f) => f.name === 'fullName').required, true);
  assert.equal(form.fields.filter((f) => f.credential).length, 1);
  const json = JSON.stringify(ctx);
  assert.doesNotMatch(json, /hunter2|typed biography|hidden-csrf-token-value/, 'no field value anywhere');
  assert.deepEqual(byName(ctx, 'Disabled action').state, { disabled: true });
  assert.equal(ctx.auth.passwordField, false, 'hidden: not a password a person is asked for');
  assert.equal(ctx.auth.signInForm, false);

  const insp = await ok(page, 'inspect', { captureId: 'c1', ref: pw.ref });
  assert.equal(insp.credential, true);
  assert.equal(insp.attributes.autocomplete, 'new-password');
  assert.equal(insp.attributes.type, 'password');
  assert.equal(insp.visible, false);
  assert.equal(insp.bounds.width, 0);
  assert.doesNotMatch(JSON.stringify(insp), /hunter2/);

  // setValue: native setter (the page's React-style tracker is bypassed) + input and change.
  const name = form.fields.find((f) => f.name === 'fullName');
  const act = await ok(page, 'action', { captureId: 'c1', ref: name.ref, action: 'setValue', value: 'Ada Lovelace' });
  assert.equal(act.done, true);
  assert.equal(act.action, 'setValue');
  const seen = await page.evaluate(() => ({ value: document.getElementById('name').value, events: window.__formEvents, tracked: window.__tracker.tracked }));
  assert.equal(seen.value, 'Ada Lovelace');
  assert.equal(seen.tracked, '', 'the instance setter (a framework tracker) was not used');
  assert.deepEqual(seen.events.filter((e) => e.id === 'name').map((e) => [e.type, e.bubbles]), [['input', true], ['change', true]]);

  const country = form.fields.find((f) => f.name === 'country');
  await ok(page, 'action', { captureId: 'c1', ref: country.ref, action: 'setValue', value: 'de' });
  assert.equal(await page.inputValue('#country'), 'de');
  await ok(page, 'action', { captureId: 'c1', ref: country.ref, action: 'setValue', value: 'China' });
  assert.equal(await page.inputValue('#country'), 'cn');
  await refused(page, 'action', { captureId: 'c1', ref: country.ref, action: 'setValue', value: 'Atlantis' }, 'invalid_params');
  const box = form.fields.find((f) => f.name === 'newsletter');
  await ok(page, 'action', { captureId: 'c1', ref: box.ref, action: 'setValue', value: true });
  assert.equal(await page.isChecked('#newsletter'), true);
  const bio = form.fields.find((f) => f.name === 'bio');
  await ok(page, 'action', { captureId: 'c1', ref: bio.ref, action: 'setValue', value: 'Line one\nLine two' });
  assert.equal(await page.inputValue('#bio'), 'Line one\nLine two');

  const file = form.fields.find((f) => f.name === 'avatar');
  await refused(page, 'action', { captureId: 'c1', ref: file.ref, action: 'setValue', value: '/etc/passwd' }, 'invalid_params');
  await refused(page, 'action', { captureId: 'c1', ref: name.ref, action: 'setValue', value: 42 }, 'invalid_params');
  await refused(page, 'action', { captureId: 'c1', ref: byName(ctx, 'Save profile').ref, action: 'setValue', value: 'x' }, 'target_denied');
  await refused(page, 'action', { captureId: 'c1', ref: byName(ctx, 'Disabled action').ref, action: 'click' }, 'target_denied');
  await refused(page, 'action', { captureId: 'c1', ref: name.ref, action: 'explode' }, 'invalid_params');

  // The submit stays on the page and records itself; the agent sees what changed.
  const { held, done: sub } = await approve(page, 'c1', byName(ctx, 'Save profile').ref);
  assert.equal(held.kind, 'write');
  assert.equal(held.word, 'save');
  assert.equal(held.control, 'Save profile');
  assert.equal(held.site, server.originA);
  assert.deepEqual(held.fields.find((f) => f.name.startsWith('New password')), { name: 'New password', secret: true, length: 14 });
  assert.ok(held.fields.some((f) => f.value === 'Ada Lovelace'));
  const secret = await page.inputValue('#password');
  assert.ok(secret.length === 14 && !held.canonical.includes(secret), 'no secret in canonical');
  assert.equal(sub.changes.urlChanged, false);
  assert.equal(sub.changes.textChanged, true);
  assert.match(await page.textContent('#result'), /Submitted: fullName=Ada Lovelace, email=, password=\(14 chars\)/);

  const focus = await ok(page, 'action', { captureId: 'c1', ref: name.ref, action: 'focus' });
  assert.equal(focus.done, true);
  assert.equal(await page.evaluate(() => document.activeElement.id), 'name');
  const after = await ok(page, 'context', { captureId: 'c2' });
  const name2 = after.forms[0].fields.find((f) => f.name === 'fullName');
  assert.equal(name2.ref, name.ref, 'same element, same ref');
  assert.deepEqual({ filled: name2.filled, valueLength: name2.valueLength }, { filled: true, valueLength: 12 });
  assert.equal(after.nodes.find((n) => n.ref === name.ref).state.focused, true);
  // (The page itself prints the submission into its text; the fields and nodes never carry values.)
  assert.doesNotMatch(JSON.stringify([after.forms, after.nodes]), /Ada Lovelace|Line one|hunter2/, 'values are not read back');
  await page.close();
});

test('big.html: 10,000 elements captured within bounds, visible nodes first (the time is printed; bench/ measures it)', { skip }, async (t) => {
  const page = await open('/big.html');
  assert.equal(await page.evaluate(() => document.getElementsByTagName('*').length), 10000);
  const timing = await page.evaluate(async () => {
    const runs = [];
    let value = null;
    let bytes = 0;
    for (let i = 0; i < 9; i += 1) {
      const t0 = performance.now();
      const r = await globalThis.__chaperonePage.run('context', { captureId: `b${i}`, maxTextBytes: 20480, maxNodes: 400, maxScan: 10000, diff: i > 0 });
      runs.push(performance.now() - t0);
      value = r.value;
      bytes = new TextEncoder().encode(JSON.stringify(r)).length;
    }
    return { runs, value, bytes };
  });
  const v = timing.value;
  const sorted = timing.runs.slice().sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)];
  const msg = `big.html capture: first ${timing.runs[0].toFixed(1)} ms, median ${median.toFixed(1)} ms, best ${sorted[0].toFixed(1)} ms; `
    + `${timing.bytes} bytes JSON; scanned ${v.scanned}, nodeCount ${v.nodeCount}, nodes ${v.nodes.length}, text ${new TextEncoder().encode(v.text).length} B`;
  t.diagnostic(msg);
  assert.ok(v.scanned >= 9990 && v.scanned <= 10000, `scanned ${v.scanned}`);
  assert.equal(v.nodes.length, 400);
  assert.ok(v.nodeCount >= 990 && v.nodeCount <= 1010, `about 1,000 actionable: ${v.nodeCount}`);
  assert.equal(v.truncated, true);
  assert.equal(v.textTruncated, true);
  assert.ok(new TextEncoder().encode(v.text).length <= 20480);
  assert.ok(v.forms.every((f) => f.fields.length <= 50));
  // Visible first: the controls in the viewport are all kept; the kept ones are in document order.
  const inView = await page.evaluate(() => [...document.querySelectorAll('#root button, #root a, #root input')]
    .filter((e) => { const r = e.getBoundingClientRect(); return r.top < innerHeight && r.bottom > 0; }).length);
  assert.ok(inView > 0);
  assert.equal(v.nodes[0].name, 'Action 0');
  const nums = v.nodes.map((n) => Number(n.ref.slice(1)));
  assert.ok(new Set(nums).size === nums.length, 'refs unique');
  // Unchanged page: the diff is empty and every ref stayed.
  assert.deepEqual({ a: v.diff.added.length, r: v.diff.removed.length, c: v.diff.changed.length, t: v.diff.textChanged },
    { a: 0, r: 0, c: 0, t: false });
  // How fast is measured by bench/extension-bench.mjs (browser.context of a 10,000-element
  // page), not asserted here: the diagnostic above prints this run's figures.

  const small = await ok(page, 'context', { captureId: 's', maxScan: 500, maxNodes: 20, maxTextBytes: 100 });
  assert.equal(small.scanned, 500);
  assert.equal(small.truncated, true);
  assert.equal(small.nodes.length, 20);
  assert.ok(new TextEncoder().encode(small.text).length <= 100);
  // Bounds are capped, never raised by the caller.
  const capped = await ok(page, 'context', { captureId: 'x', maxScan: 1e9, maxNodes: 1e9, maxTextBytes: 1e9 });
  assert.ok(capped.scanned <= 10000 && capped.nodes.length <= 2000 && new TextEncoder().encode(capped.text).length <= 20480);
  // With the extension's own limits (CONTEXT_LIMITS) every actionable node of the page is kept,
  // so the app can page through all of them.
  const all = await ok(page, 'context', { captureId: 'all', maxTextBytes: 20480, maxNodes: 2000, maxScan: 10000 });
  assert.equal(all.nodes.length, all.nodeCount);
  assert.ok(all.nodeCount >= 990, `every actionable node kept (${all.nodes.length})`);
  assert.ok(new TextEncoder().encode(JSON.stringify(all)).length < 512 * 1024, 'the reply stays under one unchunked frame');
  await page.close();
});

test('overlay.html: a covered button is refused and says what covers it', { skip }, async () => {
  const page = await open('/overlay.html');
  const ctx = await ok(page, 'context', { captureId: 'c1' });
  const err = await refused(page, 'action', { captureId: 'c1', ref: byName(ctx, 'Covered button').ref, action: 'click' }, 'target_denied');
  assert.match(err.message, /covered by div#overlay\.click-shield/);
  assert.equal(await page.textContent('#status'), 'Nothing clicked.');
  const done = await ok(page, 'action', { captureId: 'c1', ref: byName(ctx, 'Uncovered button').ref, action: 'click' });
  assert.equal(done.changes.textChanged, true);
  assert.equal(await page.textContent('#status'), 'Uncovered button clicked.');
  // Focus and scroll are not clicks: allowed on the covered button.
  await ok(page, 'action', { captureId: 'c1', ref: byName(ctx, 'Covered button').ref, action: 'scroll' });
  await page.close();
});

test('modal.html: nothing behind an open modal can be clicked; inside it can', { skip }, async () => {
  const page = await open('/modal.html');
  const ctx = await ok(page, 'context', { captureId: 'c1' });
  assert.equal(byName(ctx, 'Pick this one').inModal, true);
  assert.equal(byName(ctx, 'Behind button').inModal, undefined);
  const err = await refused(page, 'action', { captureId: 'c1', ref: byName(ctx, 'Behind button').ref, action: 'click' }, 'target_denied');
  assert.match(err.message, /modal/);
  await refused(page, 'action', { captureId: 'c1', ref: byName(ctx, 'Behind button').ref, action: 'focus' }, 'target_denied');
  await ok(page, 'action', { captureId: 'c1', ref: byName(ctx, 'Pick this one').ref, action: 'click' });
  assert.equal(await page.textContent('#clicked'), 'Confirmed.');
  await ok(page, 'action', { captureId: 'c1', ref: byName(ctx, 'Close').ref, action: 'click' });
  await ok(page, 'action', { captureId: 'c1', ref: byName(ctx, 'Behind button').ref, action: 'click' });
  assert.equal(await page.textContent('#clicked'), 'Behind button clicked.');
  await page.close();

  // [aria-modal=true] that does not cover the button: only the modal rule can refuse.
  const aria = await open('/modal.html?kind=aria');
  const actx = await ok(aria, 'context', { captureId: 'a1' });
  assert.equal(byName(actx, 'Accept').inModal, true);
  const aerr = await refused(aria, 'action', { captureId: 'a1', ref: byName(actx, 'Behind button').ref, action: 'click' }, 'target_denied');
  assert.match(aerr.message, /modal dialog \(div#aria-modal/);
  assert.equal(await aria.textContent('#clicked'), 'Nothing clicked.');
  await ok(aria, 'action', { captureId: 'a1', ref: byName(actx, 'Close settings').ref, action: 'click' });
  await ok(aria, 'action', { captureId: 'a1', ref: byName(actx, 'Behind button').ref, action: 'click' });
  assert.equal(await aria.textContent('#clicked'), 'Behind button clicked.');
  await aria.close();
});

test('holds: a changed form is not approved; a plan covers writes only; a missed POST submit is held', { skip }, async () => {
  const page = await open('/forms.html');
  await hidePasswordRow(page);
  const ctx = await ok(page, 'context', { captureId: 'h1' });
  const save = byName(ctx, 'Save profile').ref;
  const first = await ok(page, 'action', { captureId: 'h1', ref: save, action: 'click' });
  assert.equal(first.held.kind, 'write');
  assert.equal(first.held.reason, 'label');
  // The agent changes a field after the hold: the approval was about something else.
  const name = ctx.forms[0].fields.find((f) => f.name === 'fullName');
  await ok(page, 'action', { captureId: 'h1', ref: name.ref, action: 'setValue', value: 'Someone else' });
  const changed = await ok(page, 'action', { captureId: 'h1', ref: save, action: 'click', expect: first.held.canonical });
  assert.deepEqual(changed, { changed: true });
  assert.equal(await page.evaluate(() => window.__formEvents.some((e) => e.type === 'submit')), false);

  // A plan for another site covers nothing; one for this host lets the write through, once.
  const host = new URL(server.originA).hostname;
  const other = await ok(page, 'action', { captureId: 'h1', ref: save, action: 'click', allow: { planId: 'plan-1', sites: ['example.com'] } });
  assert.ok(other.held);
  const planned = await ok(page, 'action', { captureId: 'h1', ref: save, action: 'click', allow: { planId: 'plan-1', sites: [host] } });
  assert.equal(planned.done, true);
  assert.deepEqual(planned.plan, { planId: 'plan-1', site: host });
  // The step the app says this write is comes back with it (for the pill and the app); numbers
  // out of bounds or of the wrong type are left out, never passed on.
  const stepped = await ok(page, 'action', { captureId: 'h1', ref: save, action: 'click',
    allow: { planId: 'plan-1', sites: [host], step: 2, of: 3 } });
  assert.deepEqual(stepped.plan, { planId: 'plan-1', site: host, step: 2, of: 3 });
  for (const [step, of] of [[0, 3], [2, 99], [4, 3], ['2', '3'], [1.5, 3], [2, Infinity], [null, 3]]) {
    const v = await ok(page, 'action', { captureId: 'h1', ref: save, action: 'click',
      allow: { planId: 'plan-1', sites: [host], step, of } });
    assert.deepEqual(v.plan, { planId: 'plan-1', site: host }, `step ${step} of ${of}`);
  }
  await page.close();

  // A plain-looking control whose script submits a POST form: the capturing listener holds it.
  const p2 = await open('/index.html');
  await p2.evaluate(() => {
    const f = document.createElement('form');
    f.method = 'post';
    f.action = '/submitted';
    f.innerHTML = '<input name="q" value="hello"><span role="button" id="go" tabindex="0">Go on</span>';
    document.body.prepend(f);
    window.__pageSawSubmit = false;
    f.addEventListener('submit', () => { window.__pageSawSubmit = true; });
    document.getElementById('go').addEventListener('click', () => f.requestSubmit());
  });
  const c2 = await ok(p2, 'context', { captureId: 'h2' });
  const go = await ok(p2, 'action', { captureId: 'h2', ref: byName(c2, 'Go on').ref, action: 'click' });
  assert.equal(go.held.reason, 'form-submit');
  assert.equal(go.held.kind, 'outward');
  assert.deepEqual(go.held.fields, [{ name: 'q', value: 'hello' }]);
  assert.equal(await p2.evaluate(() => window.__pageSawSubmit), false, 'the page never saw the submit');
  assert.equal(new URL(p2.url()).pathname, '/index.html');

  // form.submit() fires no submit event: the navigate event (Navigation API) still holds it.
  await p2.evaluate(() => {
    const f = document.createElement('form');
    f.method = 'post';
    f.action = '/submitted';
    f.hidden = true;
    f.innerHTML = '<input name="message" value="send everything">';
    document.body.prepend(f);
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = 'OK';
    b.addEventListener('click', () => { window.__submits = (window.__submits ?? 0) + 1; f.submit(); });
    document.body.prepend(b);
  });
  const c3 = await ok(p2, 'context', { captureId: 'h3' });
  const okClick = await ok(p2, 'action', { captureId: 'h3', ref: byName(c3, 'OK').ref, action: 'click' });
  assert.equal(okClick.held?.reason, 'form-submit', JSON.stringify(okClick));
  assert.deepEqual(okClick.held.fields, [{ name: 'message', value: 'send everything' }]);
  // The click ran (that is how the submit was seen) and its submit was stopped before it left:
  // the page is still here, with the one submit it tried.
  assert.equal(await p2.evaluate(() => window.__submits), 1, 'the click ran once');
  assert.equal(new URL(p2.url()).pathname, '/index.html', 'the POST never left');
  await p2.close();
});

test('dynamic.html: action reports changes; diff re-uses refs and names what changed', { skip }, async () => {
  const page = await open('/dynamic.html');
  const c1 = await ok(page, 'context', { captureId: 'c1', diff: true });
  assert.equal(c1.diff, null, 'no previous capture yet');
  const load = byName(c1, 'Load details');
  const steady = byName(c1, 'Steady button');
  const placeholder = byName(c1, 'Placeholder');
  const agree = byName(c1, 'I agree');
  const act = await ok(page, 'action', { captureId: 'c1', ref: load.ref, action: 'click' });
  const { settleMs, ...counted } = act.changes;
  assert.deepEqual(counted, { urlChanged: false, titleChanged: true, added: 4, removed: 1, textChanged: true, settled: true });
  assert.ok(Number.isInteger(settleMs) && settleMs >= 80, `settleMs ${settleMs}`);
  const c2 = await ok(page, 'context', { captureId: 'c2', diff: true });
  assert.equal(c2.title, 'Dynamic fixture — loaded');
  assert.equal(byName(c2, 'Reload details').ref, load.ref, 'renamed node keeps its ref');
  assert.equal(byName(c2, 'Steady button').ref, steady.ref);
  assert.deepEqual(c2.diff.added.map((n) => n.name), ['First new', 'Second new']);
  assert.deepEqual(c2.diff.removed, [placeholder.ref]);
  assert.deepEqual(c2.diff.changed.map((n) => [n.ref, n.name]).sort(), [[agree.ref, 'I agree'], [load.ref, 'Reload details']].sort());
  assert.equal(c2.diff.textChanged, true);
  assert.ok(!c2.diff.added.some((n) => n.ref === steady.ref));

  // A framework re-render (same button, new element) keeps the ref: stable key, old one gone.
  await page.evaluate(() => {
    const old = document.getElementById('steady');
    old.replaceWith(old.cloneNode(true));
  });
  const c3 = await ok(page, 'context', { captureId: 'c3', diff: true });
  assert.equal(byName(c3, 'Steady button').ref, steady.ref);
  assert.deepEqual({ a: c3.diff.added, r: c3.diff.removed, c: c3.diff.changed, t: c3.diff.textChanged }, { a: [], r: [], c: [], t: false });
  // …and the ref of an older capture still points at the element that capture saw (now gone).
  await refused(page, 'inspect', { captureId: 'c1', ref: steady.ref }, 'stale_node');
  const insp = await ok(page, 'inspect', { captureId: 'c3', ref: steady.ref });
  assert.equal(insp.name, 'Steady button');
  await page.close();
});

test('stale_node: removed, unknown, evicted; refs never retarget', { skip }, async () => {
  const page = await open('/handoff.html');
  const c1 = await ok(page, 'context', { captureId: 'k1' });
  const btn = byName(c1, 'Page button');
  assert.equal((await ok(page, 'inspect', { ref: `k1:${btn.ref}` })).name, 'Page button', 'wire form "<captureId>:<ref>" accepted');
  await refused(page, 'inspect', { captureId: 'k1', ref: 'e999' }, 'stale_node');
  await refused(page, 'inspect', { captureId: 'nope', ref: btn.ref }, 'stale_node');
  await refused(page, 'inspect', { captureId: 'k1', ref: 42 }, 'invalid_params');
  // Four captures per document are kept: a fifth evicts the first.
  for (const id of ['k2', 'k3', 'k4', 'k5']) await ok(page, 'context', { captureId: id });
  await refused(page, 'inspect', { captureId: 'k1', ref: btn.ref }, 'stale_node');
  await ok(page, 'inspect', { captureId: 'k2', ref: btn.ref });
  // Removed, then an identical element put in its place: still stale for the old capture.
  await page.evaluate(() => {
    const b = document.getElementById('page-button');
    const twin = b.cloneNode(true);
    b.remove();
    document.body.appendChild(twin);
  });
  const err = await refused(page, 'action', { captureId: 'k5', ref: btn.ref, action: 'click' }, 'stale_node');
  assert.match(err.message, /no longer in the page/);
  // Installing twice is harmless: the captures survive.
  await inject(page);
  await refused(page, 'inspect', { captureId: 'k5', ref: btn.ref }, 'stale_node');
  await ok(page, 'inspect', { captureId: 'k6', ref: byName(await ok(page, 'context', { captureId: 'k6' }), 'Page button').ref });
  // run never throws.
  assert.equal((await run(page, 'nonsense', {})).error.code, 'unknown_method');
  assert.equal((await run(page, 'context', null)).ok, true);
  assert.equal((await page.evaluate(() => globalThis.__chaperonePage.run())).error.code, 'unknown_method');
  await page.close();
});

test('shadow.html: open shadow roots are walked and acted in; closed ones stay closed', { skip }, async () => {
  const page = await open('/shadow.html');
  const ctx = await ok(page, 'context', { captureId: 'c1' });
  assert.equal(ctx.shadowRoots, 2);
  const names = ctx.nodes.map((n) => n.name);
  assert.deepEqual(names, ['Shadow button', 'Shadow input', 'Nested shadow link', 'Slotted button']);
  assert.doesNotMatch(JSON.stringify(ctx), /Closed secret/);
  assert.ok(ctx.headings.some((h) => h.text === 'Open widget'));
  await ok(page, 'action', { captureId: 'c1', ref: byName(ctx, 'Shadow button').ref, action: 'click' });
  assert.equal(await page.textContent('#status'), 'Shadow button clicked.');
  await ok(page, 'action', { captureId: 'c1', ref: byName(ctx, 'Shadow input').ref, action: 'setValue', value: 'in the shadow' });
  assert.equal(await page.evaluate(() => document.getElementById('open-host').shadowRoot.getElementById('shadow-input').value), 'in the shadow');
  await page.close();
});

test('iframe.html: frames listed with their origins; the agent works inside each frame', { skip }, async () => {
  const page = await open('/iframe.html');
  const ctx = await ok(page, 'context', { captureId: 'c1' });
  assert.deepEqual(ctx.iframes.map((f) => [f.index, f.name, f.title, f.origin]), [
    [0, 'same-frame', 'Same-origin frame', server.originA],
    [1, 'cross-frame', 'Cross-origin frame', server.originB],
  ]);
  assert.deepEqual(ctx.nodes.map((n) => n.name), ['Top button']);
  for (const [label, origin] of [['same', server.originA], ['cross', server.originB]]) {
    const frame = page.frames().find((f) => f.url().startsWith(origin) && f.url().includes(`label=${label}`));
    assert.ok(frame, `${label} frame`);
    await frame.waitForLoadState();
    await inject(frame);
    const fctx = await ok(frame, 'context', { captureId: `f-${label}` });
    const btn = byName(fctx, `Child button (${label})`);
    await ok(frame, 'action', { captureId: `f-${label}`, ref: btn.ref, action: 'click' });
    assert.equal(await frame.textContent('#status'), `Clicked in ${label}.`);
  }
  await page.close();
});

test('auth signals: sign-in form, password, OTP, CAPTCHA, QR', { skip }, async () => {
  const login = await open('/login.html');
  // With its password shown the page is refused whole ("sign-in floor" below); the other
  // signals are read on the same page with the password row hidden.
  assert.deepEqual((await refused(login, 'context', {}, 'refused_floor')).data, { level: 'blind', reason: 'sign_in' });
  await hidePasswordRow(login);
  const l = await ok(login, 'context', {});
  assert.deepEqual(l.auth, { passwordField: false, otpField: false, signInForm: true, captcha: false, qr: false },
    'a form with a "Sign in" button is a sign-in form');
  await login.goto(`${server.originA}/login.html?otp=1`);
  await inject(login);
  await hidePasswordRow(login);
  assert.equal((await ok(login, 'context', {})).auth.otpField, true);
  await login.close();
  const auth = await open('/auth.html');
  const a = await ok(auth, 'context', {});
  assert.deepEqual(a.auth, { passwordField: false, otpField: true, signInForm: false, captcha: true, qr: true });
  assert.equal(a.forms[0].fields[0].credential, true, 'totp_code is a credential');
  await auth.close();
  const plain = await open('/handoff.html');
  assert.deepEqual((await ok(plain, 'context', {})).auth, { passwordField: false, otpField: false, signInForm: false, captcha: false, qr: false });
  await plain.close();
});

test('contenteditable: what was typed into a credential editable never leaves the page; an ordinary editor keeps its text', { skip }, async () => {
  const page = await open('/handoff.html');
  await page.evaluate(() => document.body.insertAdjacentHTML('beforeend',
    '<div contenteditable="true" aria-label="Recovery phrase">apple banana cherry delta</div>' +
    '<div contenteditable="true" aria-label="Notes"><p>Buy milk</p><p>Call Bob</p></div>' +
    '<div contenteditable="true" placeholder="\u52a9\u8bb0\u8bcd">gamma epsilon zeta</div>'));
  const c = await ok(page, 'context', {});
  const all = JSON.stringify(c);
  for (const secret of ['apple', 'banana', 'gamma', 'zeta']) {
    assert.ok(!all.includes(secret), `"${secret}" typed into a credential editable was read out: ${c.text}`);
  }
  assert.match(c.text, /\[redacted credential len=25\]/);
  assert.match(c.text, /Buy milk/, 'an ordinary editor is page text an agent reads');
  await page.close();
});

test('pill: closed shadow root, never in a snapshot, Esc and Stop only when trusted', { skip }, async () => {
  const page = await open('/handoff.html', { stub: true });
  const before = await ok(page, 'context', { captureId: 'p0' });
  // The worker sends the Stop shortcut the browser has bound; the pill names it (never Esc, which
  // a page can swallow).
  assert.deepEqual(await ok(page, 'pill', { show: true, step: 3, shortcut: 'Ctrl+Shift+E' }), { shown: true, stopped: false, step: 3 });
  assert.match(await ownUiText(page), /Agent · step 3 · Ctrl\+Shift\+E to stop/);
  const probe = await page.evaluate(() => {
    // What a page script can learn: a host element with no reachable shadow root.
    const hosts = [...document.documentElement.children].filter((e) => e !== document.head && e !== document.body);
    return { hosts: hosts.length, shadow: hosts.map((h) => h.shadowRoot), text: document.documentElement.innerText };
  });
  assert.equal(probe.hosts, 1);
  assert.deepEqual(probe.shadow, [null], 'closed shadow root: unreachable from the page');
  assert.doesNotMatch(probe.text, /to stop/);
  const during = await ok(page, 'context', { captureId: 'p1', diff: true });
  assert.equal(during.scanned, before.scanned, 'the pill host is skipped by the walk');
  assert.deepEqual(during.nodes, before.nodes);
  assert.doesNotMatch(JSON.stringify(during), /to stop|Stop/);

  // A page script's synthetic Escape does nothing; the person's does.
  await page.evaluate(() => window.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true })));
  assert.deepEqual(await page.evaluate(() => window.__sent), []);
  await page.keyboard.press('Escape');
  assert.deepEqual(await page.evaluate(() => window.__sent), [{ type: 'page.stop', source: 'esc' }]);
  assert.match(await ownUiText(page), /Agent stopped/);
  await page.keyboard.press('Escape');
  assert.equal((await page.evaluate(() => window.__sent)).length, 1, 'once stopped, Esc says nothing more');

  // Resumed (the worker shows the pill again), then the Stop button, pressed by a person.
  await ok(page, 'pill', { show: true, step: 4 });
  assert.match(await ownUiText(page), /step 4/);
  await clickOwnUi(page, 'stop');
  assert.deepEqual((await page.evaluate(() => window.__sent))[1], { type: 'page.stop', source: 'pill' });
  assert.deepEqual(await ok(page, 'pill', { show: false }), { shown: false });
  assert.equal(await page.evaluate(() => document.documentElement.children.length), 2, 'host removed');
  await page.keyboard.press('Escape');
  assert.equal((await page.evaluate(() => window.__sent)).length, 2, 'no pill, no Esc stop');
  await page.close();
});

test('pill: "plan step N of M" while a plan runs; bad plan numbers are never shown', { skip }, async () => {
  const page = await open('/handoff.html', { stub: true });
  // The pill's label exactly (in its closed shadow root, as DevTools sees it).
  const label = async () => {
    const { cdp, all, attr } = await piercedNodes(page);
    await cdp.detach();
    const el = all.find((n) => n.nodeType === 1 && attr(n, 'class') === 'label');
    assert.ok(el, 'the pill has a label');
    return (el.children || []).filter((n) => n.nodeType === 3).map((n) => n.nodeValue).join('');
  };
  assert.deepEqual(await ok(page, 'pill', { show: true, step: 5, plan: { step: 2, of: 3 }, shortcut: 'Ctrl+Shift+E' }),
    { shown: true, stopped: false, step: 5, plan: { step: 2, of: 3 } });
  assert.equal(await label(), 'Agent · plan step 2 of 3 · Ctrl+Shift+E to stop');
  // The English fallback is the catalogue's English (outside an extension getMessage is absent).
  const en = JSON.parse(await readFile(new URL('../../extension/_locales/en/messages.json', import.meta.url), 'utf8'));
  assert.equal(`${en.page_pill_plan.message.replace('$1', '2').replace('$2', '3')} · ${en.page_pill_shortcut.message.replace('$1', 'Ctrl+Shift+E')}`,
    'Agent · plan step 2 of 3 · Ctrl+Shift+E to stop');
  // No shortcut bound (the person removed it): the pill names none — and never claims Esc.
  await ok(page, 'pill', { show: true, step: 6, plan: { step: 3, of: 3 } });
  assert.equal(await label(), 'Agent · plan step 3 of 3');

  // Anything but whole numbers with 1 ≤ step ≤ of ≤ 20 is dropped: the plain step shows.
  for (const plan of [{ step: 0, of: 3 }, { step: 2, of: 99 }, { step: '2', of: '3' }, { step: 4, of: 3 },
    { step: 1.5, of: 3 }, { step: 2, of: Infinity }, { step: 2 }, 'step 2 of 3', null, [2, 3]]) {
    const v = await ok(page, 'pill', { show: true, step: 7, plan });
    assert.deepEqual(v, { shown: true, stopped: false, step: 7 }, JSON.stringify(plan));
    assert.equal(await label(), 'Agent · step 7', JSON.stringify(plan));
  }
  // The plan ended (no plan in the op): back to the step; stopped wins over a plan.
  await ok(page, 'pill', { show: true, step: 8, plan: { step: 1, of: 2 } });
  await ok(page, 'pill', { show: true, step: 9 });
  assert.equal(await label(), 'Agent · step 9');
  await ok(page, 'pill', { show: true, step: 9, stopped: true, plan: { step: 1, of: 2 } });
  assert.equal(await label(), 'Agent stopped');
  await page.close();
});

// ---- the sign-in floor: a page that shows a password field is blind -----------------------

test('sign-in floor: a visible password field refuses context, inspect and action, with nothing of the page', { skip }, async () => {
  const page = await open('/login.html', { stub: true });
  await page.fill('#username', 'ada@example.org');
  await page.fill('#password', 'correct-horse');
  // Refs made while the password row was hidden (a page that shows it later, a two-step sign-in).
  await hidePasswordRow(page);
  const ctx = await ok(page, 'context', { captureId: 'l1' });
  const user = ctx.forms[0].fields.find((f) => f.name === 'username');
  const signIn = byName(ctx, 'Sign in');
  await showPasswordRow(page);

  const page1 = new URL(page.url()).pathname;
  const attempts = [
    ['context', { captureId: 'l2' }],
    ['context', { captureId: 'l2', diff: true }],
    ['inspect', { captureId: 'l1', ref: user.ref }],
    ['action', { captureId: 'l1', ref: signIn.ref, action: 'click' }],
    ['action', { captureId: 'l1', ref: user.ref, action: 'setValue', value: 'mallory' }],
    ['action', { captureId: 'l1', ref: user.ref, action: 'focus' }],
    ['action', { captureId: 'l1', ref: signIn.ref, action: 'click', allow: { planId: 'p', sites: ['127.0.0.1'], step: 1, of: 2 } }],
    // Even a bad request is refused as the floor, before its arguments are looked at.
    ['inspect', { captureId: 'nope', ref: 'e999' }],
  ];
  for (const [op, args] of attempts) {
    const r = await run(page, op, args);
    assert.deepEqual(Object.keys(r).sort(), ['error', 'ok'], `${op}: an error and nothing else`);
    assert.equal(r.ok, false, `${op} ${JSON.stringify(args)} answered`);
    assert.deepEqual(Object.keys(r.error).sort(), ['code', 'data', 'message']);
    assert.equal(r.error.code, 'refused_floor');
    assert.deepEqual(r.error.data, { level: 'blind', reason: 'sign_in' });
    const json = JSON.stringify(r);
    for (const pageWord of ['Sign in —', 'Fixture', 'Email or username', 'Password', 'ada@', 'correct-horse',
      page1, '127.0.0.1', 'username', user.ref, signIn.ref, 'status']) {
      assert.ok(!json.includes(pageWord), `${op}: the refusal carries "${pageWord}": ${json}`);
    }
  }
  // Nothing was done: no click, no fill, no focus.
  assert.equal(await page.textContent('#status'), '');
  assert.equal(await page.inputValue('#username'), 'ada@example.org');
  assert.notEqual(await page.evaluate(() => document.activeElement.id), 'username');

  // Chaperone's own pill and the login handoff banner still work on exactly this page.
  assert.deepEqual(await ok(page, 'pill', { show: true, step: 4 }), { shown: true, stopped: false, step: 4 });
  assert.deepEqual(await ok(page, 'handoff', { show: true, handoffId: 'h-login', reason: 'login', message: 'Please sign in' }),
    { shown: true, handoffId: 'h-login', reason: 'login' });
  const own = await ownUiText(page);
  assert.match(own, /Agent · step 4/);
  assert.match(own, /Sign in to this site yourself/);
  await clickOwnUi(page, 'done');
  assert.deepEqual(await page.evaluate(() => window.__sent), [{ type: 'page.handoff', handoffId: 'h-login', outcome: 'done' }]);

  // The person signed in and the field went away: the page is the agent's again.
  await page.evaluate(() => document.getElementById('password').closest('label').remove());
  assert.equal((await ok(page, 'context', { captureId: 'l3' })).title, 'Sign in — Fixture');
  await page.close();
});

test('sign-in floor: a hidden password field does not refuse; open shadow roots and the top document count', { skip }, async () => {
  const page = await open('/handoff.html');
  const ctx = await ok(page, 'context', { captureId: 'x1' });
  const button = byName(ctx, 'Page button').ref;
  const hiddenWays = {
    'display:none': '<input type="password" style="display:none">',
    'visibility:hidden': '<input type="password" style="visibility:hidden">',
    'hidden container': '<div hidden><label>PIN <input type="password" name="pin"></label></div>',
    'display:none container': '<div style="display:none"><input type="PASSWORD"></div>',
    'zero box': '<input type="password" style="width:0;height:0;padding:0;border:0;margin:0">',
    'type=hidden': '<input type="hidden" name="password" value="x">',
    template: '<template><input type="password"></template>',
  };
  for (const [how, html] of Object.entries(hiddenWays)) {
    await page.evaluate((h) => {
      const box = document.createElement('div');
      box.className = 'probe';
      box.innerHTML = h;
      document.body.appendChild(box);
    }, html);
    const v = await ok(page, 'context', { captureId: 'x2' });
    assert.equal(v.auth.passwordField, false, how);
    await ok(page, 'inspect', { captureId: 'x1', ref: button });
    await ok(page, 'action', { captureId: 'x1', ref: button, action: 'focus' });
    await page.evaluate(() => document.querySelector('.probe').remove());
  }

  // Shown, in the light DOM: refused; hidden again: answered again.
  await page.evaluate(() => document.body.insertAdjacentHTML('beforeend', '<input id="pw" type="password">'));
  await refused(page, 'context', {}, 'refused_floor');
  await refused(page, 'action', { captureId: 'x1', ref: button, action: 'click' }, 'refused_floor');
  await page.evaluate(() => { document.getElementById('pw').style.display = 'none'; });
  await ok(page, 'action', { captureId: 'x1', ref: button, action: 'focus' });
  await page.evaluate(() => document.getElementById('pw').remove());

  // Inside an open shadow root: the snapshot's walk goes there and refuses (inspect and action
  // check the light DOM only — see page-agent.js — and the refs they need come from a snapshot).
  await page.evaluate(() => {
    const host = document.createElement('div');
    host.id = 'shadow-login';
    document.body.appendChild(host);
    host.attachShadow({ mode: 'open' }).innerHTML = '<label>Password <input type="password"></label>';
  });
  const shadow = await refused(page, 'context', { captureId: 'x3' }, 'refused_floor');
  assert.deepEqual(shadow.data, { level: 'blind', reason: 'sign_in' });
  await page.evaluate(() => document.getElementById('shadow-login').remove());
  await ok(page, 'context', { captureId: 'x4' });
  await page.close();

  // A same-origin child frame of a page that shows a password field is refused too. (A
  // cross-origin frame cannot read its top document; there the worker's URL floor is the check.)
  const framed = await open('/iframe.html');
  const same = framed.frames().find((f) => f.url().includes('label=same'));
  await same.waitForLoadState();
  await inject(same);
  await ok(same, 'context', {});
  await framed.evaluate(() => document.body.insertAdjacentHTML('afterbegin', '<input type="password" id="top-pw">'));
  assert.deepEqual((await refused(same, 'context', {}, 'refused_floor')).data, { level: 'blind', reason: 'sign_in' });
  await framed.close();
});

test('pill over a showModal() dialog: shown in the top layer, Esc still stops', { skip }, async () => {
  // The dialog makes the rest of the page inert, the pill's Stop button included (a known limit:
  // see the report); the Esc key, heard on window in the capture phase, still works.
  const page = await open('/modal.html', { stub: true });
  await ok(page, 'pill', { show: true, step: 1 });
  assert.equal(await page.evaluate(() => [...document.querySelectorAll('[popover]')].some((h) => h.matches(':popover-open'))), true);
  await page.keyboard.press('Escape');
  assert.deepEqual(await page.evaluate(() => window.__sent), [{ type: 'page.stop', source: 'esc' }]);
  await page.close();
});

test('handoff banner: reason text, agent message as plain text, trusted Done / Cancel task', { skip }, async () => {
  const page = await open('/handoff.html', { stub: true });
  const hostile = '<img src=x onerror="window.__pwned=1">Scan the code, please';
  assert.deepEqual(await ok(page, 'handoff', { show: true, handoffId: 'h1', reason: 'qr', message: hostile }),
    { shown: true, handoffId: 'h1', reason: 'qr' });
  const text = await ownUiText(page);
  assert.match(text, /Chaperone needs you/);
  assert.match(text, /Scan the QR code on this page with your phone/);
  assert.ok(text.includes(hostile), 'the message is shown verbatim, as text');
  const { all } = await piercedNodes(page);
  assert.equal(all.filter((n) => n.nodeName === 'IMG').length, 0, 'never parsed as markup');
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.equal(await page.evaluate(() => document.body.innerText.includes('Chaperone needs you')), false);
  const ctx = await ok(page, 'context', {});
  assert.deepEqual(ctx.nodes.map((n) => n.name), ['Page button'], 'banner buttons are not the agent\u2019s to press');
  await refused(page, 'handoff', { show: true, reason: 'qr' }, 'invalid_params');

  await clickOwnUi(page, 'done');
  assert.deepEqual(await page.evaluate(() => window.__sent), [{ type: 'page.handoff', handoffId: 'h1', outcome: 'done' }]);
  await clickOwnUi(page, 'done');
  assert.equal((await page.evaluate(() => window.__sent)).length, 1, 'answered once');
  assert.equal((await ok(page, 'handoff', { show: false, handoffId: 'other' })).shown, true, 'another id does not hide it');
  assert.equal((await ok(page, 'handoff', { show: false, handoffId: 'h1' })).shown, false);

  for (const reason of ['mfa', 'captcha', 'device', 'login', 'other', 'bogus']) {
    const v = await ok(page, 'handoff', { show: true, handoffId: `h-${reason}`, reason, message: '' });
    assert.equal(v.reason, reason === 'bogus' ? 'other' : reason);
  }
  assert.match(await ownUiText(page), /The agent needs you to do something on this page/);
  await ok(page, 'handoff', { show: true, handoffId: 'h2', reason: 'login', message: 'Please sign in' });
  assert.match(await ownUiText(page), /Sign in to this site yourself/);
  await clickOwnUi(page, 'cancel');
  assert.deepEqual((await page.evaluate(() => window.__sent))[1], { type: 'page.handoff', handoffId: 'h2', outcome: 'cancelled' });
  await page.close();
});

test('navigate-away.html: an action that navigates reports and the new document starts clean', { skip }, async () => {
  const page = await open('/navigate-away.html?delay=150');
  const ctx = await ok(page, 'context', { captureId: 'n1' });
  const act = await ok(page, 'action', { captureId: 'n1', ref: byName(ctx, 'Go to the next page').ref, action: 'click' });
  assert.equal(act.done, true);
  await page.waitForURL(/navigate-target\.html/);
  assert.equal(await page.evaluate(() => typeof globalThis.__chaperonePage), 'undefined', 'agent and refs belong to the old document');
  await inject(page);
  await refused(page, 'inspect', { captureId: 'n1', ref: 'e1' }, 'stale_node');
  assert.equal((await ok(page, 'context', {})).title, 'Navigation target');
  await page.close();
});

// ---- settling: an action answers once the page is quiet (DOM and, with the worker, network) ----

/**
 * Stands in for the worker's request count (lib/network.js, which counts with webRequest): a
 * runtime port, opened by an action given `net: true`, that reports the page's fetches in
 * flight. Without it the page agent counts the network as quiet and only the DOM decides, so a
 * test whose page fetches would depend on the fetch beating the quiet window.
 */
async function countFetches(page) {
  await page.evaluate(() => {
    const listeners = { msg: [], gone: [] };
    let inflight = 0;
    const post = () => setTimeout(() => listeners.msg.forEach((fn) => fn({ inflight, watching: true })), 1);
    const realFetch = window.fetch.bind(window);
    window.fetch = async (...a) => {
      inflight += 1;
      post();
      try { return await realFetch(...a); } finally { inflight -= 1; post(); }
    };
    window.__ports = 0;
    if (!window.chrome) window.chrome = {};
    Object.defineProperty(window.chrome, 'runtime', {
      configurable: true,
      value: {
        connect: ({ name }) => {
          window.__ports += 1;
          window.__portName = name;
          post();
          return {
            onMessage: { addListener: (fn) => listeners.msg.push(fn) },
            onDisconnect: { addListener: (fn) => listeners.gone.push(fn) },
            disconnect: () => { listeners.msg.length = 0; window.__ports -= 1; },
          };
        },
      },
    });
  });
}

/** Clicks a node and times the whole round trip as the worker would see it. */
async function timedClick(page, captureId, ref, extra = {}) {
  const t0 = Date.now();
  const v = await ok(page, 'action', { captureId, ref, action: 'click', ...extra });
  return { v, ms: Date.now() - t0 };
}

test('settle: a fetch then a change (mcp-large.html) is counted, and a diff shows only new text', { skip }, async () => {
  const page = await open('/mcp-large.html');
  // The fetch is counted as the worker would count it: with the DOM alone, a fetch slower than
  // the quiet window (a loaded machine) would answer before the page changed.
  await countFetches(page);
  const c1 = await ok(page, 'context', { captureId: 's1' });
  const { v, ms } = await timedClick(page, 's1', byName(c1, 'Load details').ref, { net: true });
  assert.equal(await page.evaluate(() => window.__detailsLoads), 1, 'the fetch and its change were done when it answered');
  assert.equal(v.changes.settled, true);
  assert.equal(v.changes.added, 2, JSON.stringify(v.changes));
  assert.equal(v.changes.textChanged, true);
  assert.ok(v.changes.settleMs >= 130, `fetch 50 ms + a quiet window: ${v.changes.settleMs} ms`);
  console.log(`# Load details answered in ${ms} ms (settleMs ${v.changes.settleMs})`);

  // The page is no longer half-way: a diff right after names the result, and its text lines are
  // only the new ones (the excerpt is cut on a whole line, so no fragment of "line 3 of order …").
  const c2 = await ok(page, 'context', { captureId: 's2', diff: true });
  assert.match(c2.text, /Details loaded \(1\): 2 items/);
  assert.ok(c1.textTruncated && c2.textTruncated, 'the large page fills the excerpt');
  const before = new Map();
  for (const l of c1.text.split('\n')) before.set(l, (before.get(l) || 0) + 1);
  const fresh = c2.text.split('\n').filter((l) => {
    const n = before.get(l) || 0;
    if (n > 0) before.set(l, n - 1);
    return n === 0;
  });
  assert.deepEqual(fresh, ['Details loaded (1): 2 items, total 42.50 EUR', 'Blue mug ×2 (load 1)', 'Tea sampler ×1 (load 1)']);
  await page.close();
});

test('settle: a 30 ms timer (mcp-compose.html Save draft) is waited for', { skip }, async () => {
  const page = await open('/mcp-compose.html');
  const c = await ok(page, 'context', { captureId: 's1' });
  const held = await ok(page, 'action', { captureId: 's1', ref: byName(c, 'Save draft').ref, action: 'click' });
  assert.equal(held.held.kind, 'write');
  const { v } = await timedClick(page, 's1', byName(c, 'Save draft').ref, { expect: held.held.canonical });
  assert.equal(await page.evaluate(() => window.__draftSaves), 1);
  assert.equal(v.changes.textChanged, true);
  assert.equal(v.changes.settled, true);
  assert.match(await page.textContent('#draft-status'), /Draft saved \(1\)/);
  await page.close();
});

test('settle: a fill that sets nothing off settles; one the page reacts to waits the full quiet window', { skip }, async () => {
  const page = await open('/mcp-compose.html');
  const c = await ok(page, 'context', { captureId: 'f1' });
  const subject = byName(c, 'Subject');
  const plain = await ok(page, 'action', { captureId: 'f1', ref: subject.ref, action: 'setValue', value: 'Quarterly numbers' });
  assert.equal(plain.changes.settled, true);
  assert.ok(plain.changes.settleMs >= 2, `the light window: ${plain.changes.settleMs} ms`);
  assert.equal(await page.inputValue('#subject'), 'Quarterly numbers');

  // The page reacts to typing in a task it queues (as a framework's re-render does): the fill
  // sees it and waits like a click. (A reaction later than the 2 ms light window — a debounce —
  // is not waited for; docs/extension.md says so.)
  await page.evaluate(() => document.querySelector('#subject').addEventListener('input', () => {
    setTimeout(() => { document.body.dataset.typed = String(Date.now()); }, 0);
  }));
  const reacting = await ok(page, 'action', { captureId: 'f1', ref: subject.ref, action: 'setValue', value: 'Numbers' });
  assert.equal(reacting.changes.settled, true);
  assert.ok(reacting.changes.settleMs >= 80, `a reacting page gets the full window: ${reacting.changes.settleMs} ms`);
  console.log(`# fill: ${plain.changes.settleMs} ms of settle when nothing happened, ${reacting.changes.settleMs} ms when the page reacted`);
  await page.close();
});

test('settle: a button that does nothing settles with nothing changed, after at least one quiet window', { skip }, async () => {
  const page = await open('/mcp-large.html');
  const c = await ok(page, 'context', { captureId: 's1' });
  const noop = byName(c, 'Quick action 0');       // inside the open shadow root; no listener
  const times = [];
  const settles = [];
  for (let i = 0; i < 3; i += 1) {
    const { v, ms } = await timedClick(page, 's1', noop.ref);
    assert.deepEqual({ ...v.changes, settleMs: 0 }, { urlChanged: false, titleChanged: false, added: 0, removed: 0,
      textChanged: false, settled: true, settleMs: 0 });
    // settled:true (above) says it did not run to the 3 s cap; how soon is bench/'s to measure.
    assert.ok(v.changes.settleMs >= 80, `the whole quiet window: settleMs ${v.changes.settleMs}`);
    settles.push(v.changes.settleMs);
    times.push(ms);
  }
  console.log(`# no-op click answered in ${times.join(', ')} ms (settleMs ${settles.join(', ')})`);
  await page.close();
});

test('settle: changes inside an open shadow root keep the page unsettled too', { skip }, async () => {
  const page = await open('/shadow.html');
  await page.evaluate(() => {
    const host = document.createElement('div');
    document.body.appendChild(host);
    const root = host.attachShadow({ mode: 'open' });
    root.innerHTML = '<button type="button">Shadow later</button><p>waiting</p>';
    root.querySelector('button').addEventListener('click', () => {
      // Three steps 50 ms apart, all inside the shadow root: each one restarts the quiet window.
      let n = 0;
      const step = () => {
        root.querySelector('p').textContent = `step ${++n}`;
        if (n < 3) setTimeout(step, 50);
      };
      setTimeout(step, 50);
    });
  });
  const c = await ok(page, 'context', { captureId: 's1' });
  const { v } = await timedClick(page, 's1', byName(c, 'Shadow later').ref);
  assert.equal(await page.evaluate(() => document.querySelector('div:last-of-type').shadowRoot.querySelector('p').textContent), 'step 3');
  assert.equal(v.changes.textChanged, true);
  assert.ok(v.changes.settleMs >= 150 + 80, `waited for the last step: ${v.changes.settleMs}`);
  await page.close();
});

test('settle: a page that never stops changing hits the cap and says settled:false', { skip }, async () => {
  const page = await open('/dynamic.html');
  await page.evaluate(() => {
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = 'Start ticker';
    const out = document.createElement('p');
    b.addEventListener('click', () => {
      let n = 0;
      window.__ticker = setInterval(() => { out.textContent = `tick ${++n}`; }, 20);
    });
    document.body.append(b, out);
  });
  const c = await ok(page, 'context', { captureId: 's1' });
  const { v, ms } = await timedClick(page, 's1', byName(c, 'Start ticker').ref);
  await page.evaluate(() => clearInterval(window.__ticker));
  assert.equal(v.done, true);
  assert.equal(v.changes.settled, false);
  assert.equal(v.changes.textChanged, true);
  assert.ok(v.changes.settleMs >= 2900, `waited to the 3 s cap: settleMs ${v.changes.settleMs}`);
  console.log(`# a never-settling page answered in ${ms} ms (settleMs ${v.changes.settleMs})`);
  await page.close();
});

test('settle: with the worker\u2019s request count, a slow fetch is waited for; without it the answer comes before the fetch ends', { skip }, async () => {
  const page = await open('/dynamic.html');
  await countFetches(page);
  await page.evaluate(() => {
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = 'Slow fetch';
    const out = document.createElement('p');
    out.textContent = 'idle';
    b.addEventListener('click', async () => {
      await fetch('/slow?ms=300', { cache: 'no-store' });
      out.textContent = 'fetched';
    });
    document.body.append(b, out);
    window.__out = out;
  });
  const c = await ok(page, 'context', { captureId: 's1' });
  const slow = byName(c, 'Slow fetch').ref;
  const { v } = await timedClick(page, 's1', slow, { net: true });
  assert.equal(await page.evaluate(() => window.__out.textContent), 'fetched', 'answered after the fetch and its change');
  assert.equal(v.changes.settled, true);
  assert.ok(v.changes.settleMs >= 300, `settleMs ${v.changes.settleMs}`);
  assert.equal(await page.evaluate(() => [window.__ports, window.__portName]).then((x) => x.join()), '0,chaperone.settle',
    'the port is closed once answered');

  // Without the count, a request slower than the quiet window is not seen (hence the worker).
  await page.evaluate(() => { window.__out.textContent = 'idle'; });
  const { v: domOnly } = await timedClick(page, 's1', slow);
  assert.equal(domOnly.changes.settled, true);
  assert.equal(domOnly.changes.textChanged, false, 'answered before the fetch changed the page');
  await domWait(page, () => window.__out.textContent === 'fetched', null, { what: 'the slow fetch to change the page' });
  await page.close();
});

test('settle: a navigation away ends the wait, before the document goes (navigating:true, settled:false)', { skip }, async () => {
  const page = await open('/navigate-away.html?delay=400');
  const c = await ok(page, 'context', { captureId: 's1' });
  // A link: the navigation starts with the click; the answer comes before the document goes.
  const { v, ms } = await timedClick(page, 's1', byName(c, 'Next page (link)').ref);
  assert.equal(v.done, true);
  assert.equal(v.changes.navigating, true);
  assert.equal(v.changes.settled, false);
  console.log(`# a navigating click answered in ${ms} ms`);
  await page.waitForURL(/navigate-target\.html/);
  await page.close();
});
