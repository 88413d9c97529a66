// SPDX-License-Identifier: GPL-3.0-or-later
// browser.screenshot (extension/lib/capabilities/trace.js) through the real router over the fake
// chrome.*: the boxes' maths, the order of the checks and every refusal, the capture gate, the
// bound on size. Node has no OffscreenCanvas: the drawing is a fake drawer that reads the real
// JPEG's size and records what it was asked to draw; the real drawing is checked in Chromium
// (tests/e2e/extension-screenshot.test.mjs).

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { ChaperoneError } from '../../extension/lib/router.js';
import { METHODS } from '../../extension/lib/scopes.js';
import {
  CAPTURE_RATE, CaptureGate, SHOT, checkedMask, imageBoxes, outputSize, screenshotParts,
} from '../../extension/lib/capabilities/trace.js';
import { TINY_JPEG, fakeClock } from './fake-chrome.mjs';
import { SHOT_MASK, code, setup } from './router-harness.mjs';

/** Width and height from a JPEG's start-of-frame segment. */
function jpegSize(bytes) {
  for (let i = 2; i + 9 < bytes.length;) {
    if (bytes[i] !== 0xff) throw new Error('not a JPEG segment');
    const marker = bytes[i + 1];
    if (marker >= 0xc0 && marker <= 0xc2) {
      return { height: (bytes[i + 5] << 8) | bytes[i + 6], width: (bytes[i + 7] << 8) | bytes[i + 8] };
    }
    i += 2 + ((bytes[i + 2] << 8) | bytes[i + 3]);
  }
  throw new Error('no start of frame');
}

/**
 * A drawer with the worker's interface: decodes the size of the real JPEG it is given, records the
 * boxes it is asked to paint and the encodings asked for; an encoding is `size(width, quality)`
 * bytes long (a small picture by default).
 */
function fakeDrawer({ size = () => 5000 } = {}) {
  const log = { decoded: [], painted: [], encoded: [], released: 0 };
  return {
    log,
    async decode(dataUrl) {
      const bytes = Buffer.from(dataUrl.slice(dataUrl.indexOf(',') + 1), 'base64');
      const { width, height } = jpegSize(bytes);
      log.decoded.push({ width, height });
      return { image: { width, height }, width, height };
    },
    paint(image, boxes, colour) {
      log.painted.push({ boxes: structuredClone(boxes), colour });
      return { image };
    },
    async encode(canvas, width, height, quality) {
      log.encoded.push({ width, height, quality });
      return new Uint8Array(size(width, quality)).fill(0xd9);
    },
    release() {
      log.released += 1;
    },
  };
}

/** The router of router-harness.mjs with a fake drawer and a capture gate on a hand-moved clock. */
async function shots({ size, grantTabs } = {}) {
  const s = await setup(grantTabs ? { grantTabs } : {});
  const drawer = fakeDrawer({ size });
  const clock = fakeClock();
  const waits = [];
  screenshotParts(s.router, {
    drawer, now: clock,
    sleep: async (ms) => { waits.push(ms); clock.advance(ms); },
  });
  return { ...s, drawer, clock, waits };
}

const shotOps = (pageLog) => pageLog.filter((c) => c.op === 'shotMask');
const refusal = (promise) => promise.then(() => assert.fail('should have been refused'), (e) => {
  assert.ok(e instanceof ChaperoneError, String(e?.stack ?? e));
  return e;
});

test('the boxes: CSS px to picture px at the measured scale, padded, rounded outward, clipped to the picture', () => {
  const mask = { width: 100, height: 50, boxes: [[10, 10, 30, 20], [95, 45, 120, 80], [-5, 0, 1, 1], [50, 60, 70, 90]] };
  // 2 device px per CSS px (devicePixelRatio 2, or 125 % zoom at 1.6: the picture says which).
  assert.deepEqual(imageBoxes(mask, 200, 100, 2), [
    { x: 16, y: 16, width: 48, height: 28 },
    { x: 186, y: 86, width: 14, height: 14 }, // clipped at the picture's edge
    { x: 0, y: 0, width: 6, height: 6 },
    // [50, 60, 70, 90] is below the viewport: dropped
  ]);
  // A fractional scale rounds outward: the box covers every pixel the field touches.
  assert.deepEqual(imageBoxes({ width: 100, height: 50, boxes: [[10.2, 10.2, 20.7, 20.7]] }, 125, 62.5, 0),
    [{ x: 12, y: 12, width: 14, height: 14 }]);
  assert.deepEqual(outputSize(2560, 1440, 1024), { width: 1024, height: 576 });
  assert.deepEqual(outputSize(800, 600, 1024), { width: 800, height: 600 });
  assert.deepEqual(outputSize(4000, 1, 1024), { width: 1024, height: 1 });
  // A page answer that is not a mask is refused whole, never half drawn.
  for (const bad of [null, {}, { ...SHOT_MASK, width: 0 }, { ...SHOT_MASK, boxes: [[1, 2, 3]] },
    { ...SHOT_MASK, boxes: [[1, 2, 3, NaN]] }, { ...SHOT_MASK, frames: [{ url: 7, box: [0, 0, 1, 1] }] },
    { ...SHOT_MASK, boxes: Array.from({ length: SHOT.maxBoxes + 1 }, () => [0, 0, 1, 1]) }]) {
    assert.throws(() => checkedMask(bad), (e) => e.code === 'internal', JSON.stringify(bad)?.slice(0, 80));
  }
});

test('a tab in front: asked of the page twice on the checked document, captured once as JPEG, boxed, answered', async () => {
  const { router, fake, pageLog, drawer, emit } = await shots();
  const shot = await router.handle('browser.screenshot', { tabId: 1 });
  // The app's picture of a failed step is no step of the agent's: no agent.step, no pill.
  assert.deepEqual(emit.named('agent.step'), []);
  assert.equal(pageLog.some((c) => c.op === 'pill'), false);
  assert.deepEqual(Object.keys(shot).sort(), ['height', 'jpeg', 'masked', 'width']);
  assert.deepEqual([shot.width, shot.height, shot.masked], [64, 40, 1]);
  assert.equal(Buffer.from(shot.jpeg, 'base64').length, 5000, 'the encoded picture, whole, in base64');
  assert.ok(Buffer.from(shot.jpeg, 'base64').every((b) => b === 0xd9));

  const asked = shotOps(pageLog);
  assert.equal(asked.length, 2, 'before the capture and after it');
  for (const a of asked) assert.deepEqual(a.where, { tabId: 1, frameId: 0, documentId: fake.frame(1, 0).documentId });
  assert.deepEqual(fake.calls.capture, [{ windowId: 1, options: { format: 'jpeg', quality: 90 }, tabId: 1 }]);
  assert.deepEqual(fake.calls.tabsUpdate, [], 'no tab is switched');
  // The 64×40 picture of a 32×20 viewport: 2 px a CSS px, 2 CSS px around the field's box.
  assert.deepEqual(drawer.log.decoded, [{ width: 64, height: 40 }]);
  assert.deepEqual(drawer.log.painted, [{ boxes: [{ x: 4, y: 4, width: 32, height: 20 }], colour: SHOT.box }]);
  assert.deepEqual(drawer.log.encoded, [{ width: 64, height: 40, quality: 0.6 }]);
  assert.equal(drawer.log.released, 1, 'the decoded picture is let go');
  // Read scope is enough, as for a snapshot.
  assert.deepEqual(METHODS['browser.screenshot'], { scope: 'browser.dom.read' });
});

test('refused before anything is captured: no grant, a blind page, a sign-in page, a tab behind, a child frame\'s grant, stopped', async () => {
  const { router, fake, pageLog } = await shots();
  const none = () => {
    assert.deepEqual(fake.calls.capture, [], 'nothing was captured');
    assert.deepEqual(fake.calls.tabsUpdate, [], 'no tab was switched');
  };
  assert.equal(await code(router.handle('browser.screenshot', { tabId: 2 })), 'no_grant');
  assert.equal(await code(router.handle('browser.screenshot', {})), 'invalid_params');
  assert.equal(await code(router.handle('browser.screenshot', { tabId: -1 })), 'invalid_params');
  none();

  // The URL floor: the router refuses a blind page; the page is not even asked.
  router.setFloorRules({ blind: ['a.example'] });
  const blind = await refusal(router.handle('browser.screenshot', { tabId: 1 }));
  assert.equal(blind.code, 'refused_floor');
  assert.deepEqual(blind.data, { tabId: 1, level: 'blind', reason: 'person_blind' });
  assert.equal(shotOps(pageLog).length, 0);
  router.setFloorRules({});
  none();

  // A page that shows a password field: the page agent refuses, the tab's level is made again.
  const run = router.page.run.bind(router.page);
  router.page.run = async (where, op, args, opts) => {
    if (op === 'shotMask') throw new ChaperoneError('refused_floor', 'This page shows a password field');
    return run(where, op, args, opts);
  };
  const signIn = await refusal(router.handle('browser.screenshot', { tabId: 1 }));
  assert.equal(signIn.code, 'refused_floor');
  assert.deepEqual(signIn.data, { tabId: 1, level: 'blind', reason: 'sign_in' });
  assert.doesNotMatch(signIn.message, /inbox|a\.example/);
  assert.deepEqual(screenshotParts(router).gate.slots, [], 'no capture slot was spent on it');
  router.page.run = run;
  none();

  // A tab behind another in its window: captureVisibleTab could only take the one in front, and
  // the person's tab is never switched to take it.
  fake.tabs.get(1).active = false;
  const behind = await refusal(router.handle('browser.screenshot', { tabId: 1 }));
  assert.equal(behind.code, 'target_denied');
  assert.deepEqual(behind.data, { tabId: 1, reason: 'not_shown' });
  fake.tabs.get(1).active = true;
  // A minimized window shows no tab.
  fake.windowStates.set(1, 'minimized');
  assert.equal(await code(router.handle('browser.screenshot', { tabId: 1 })), 'target_denied');
  fake.windowStates.delete(1);
  none();

  // Stopped: as every browser.* call.
  await router.stop('popup');
  assert.equal(await code(router.handle('browser.screenshot', { tabId: 1 })), 'stopped');
  await router.resume('popup');
  none();
  assert.ok(await router.handle('browser.screenshot', { tabId: 1 }), 'and it works again');
});

test('only the top frame\'s grant lets the whole tab be taken', async () => {
  const { router, fake, grant } = await shots({ grantTabs: [{ tabId: 1, frameIds: [5] }] });
  assert.ok(grant.targets.some((t) => t.frameId === 0), 'the harness grants the top frame');
  // The grant's top frame is on another site now: the whole tab is not the granted page.
  fake.navigate(1, 0, 'https://elsewhere.example/');
  assert.equal(await code(router.handle('browser.screenshot', { tabId: 1 })), 'origin_changed');
  assert.deepEqual(fake.calls.capture, []);
});

test('the picture is thrown away when the tab, the document or the boxes changed across the capture', async () => {
  const { router, fake, pageLog } = await shots();
  // The person switches to another tab while the picture is taken: what was captured may be that tab.
  fake.onCapture = async () => { await fake.chrome.tabs.update(2, { active: true }); };
  const switched = await refusal(router.handle('browser.screenshot', { tabId: 1 }));
  assert.deepEqual([switched.code, switched.data], ['target_denied', { tabId: 1, reason: 'not_shown' }]);
  await fake.chrome.tabs.update(1, { active: true });
  // …and back again: the picture is taken again, the second time untroubled.
  fake.calls.capture.length = 0;
  let flips = 0;
  fake.onCapture = async () => {
    if (flips++ > 0) return;
    await fake.chrome.tabs.update(2, { active: true });
    await fake.chrome.tabs.update(1, { active: true });
  };
  const again = await router.handle('browser.screenshot', { tabId: 1 });
  assert.equal(again.masked, 1);
  assert.equal(fake.calls.capture.length, 2, 'captured twice, the first picture dropped');
  fake.onCapture = null;

  // The page scrolls (its boxes move) between the two answers, every time: busy, nothing answered.
  let n = 0;
  const run = router.page.run.bind(router.page);
  router.page.run = async (where, op, args, opts) => {
    if (op !== 'shotMask') return run(where, op, args, opts);
    pageLog.push({ op, where });
    n += 1;
    return { ...SHOT_MASK, scrollY: n * 10, boxes: [[4, 4 - n * 10, 16, 10 - n * 10]], frames: [] };
  };
  fake.calls.capture.length = 0;
  const moving = await refusal(router.handle('browser.screenshot', { tabId: 1 }));
  assert.equal(moving.code, 'busy');
  assert.equal(fake.calls.capture.length, SHOT.attempts);

  // The document was replaced after the capture: the second ask, pinned to the checked document, fails.
  router.page.run = async (where, op, args, opts) => {
    if (op !== 'shotMask') return run(where, op, args, opts);
    if (fake.calls.capture.length > 0) throw new ChaperoneError('stale_document', 'The document went away');
    return structuredClone({ ...SHOT_MASK });
  };
  fake.calls.capture.length = 0;
  assert.equal(await code(router.handle('browser.screenshot', { tabId: 1 })), 'stale_document');
});

/** A second window whose tab, on chrome.google.com, is granted Read: a site the built-in floor blinds by path. */
async function storeTab(s) {
  s.fake.addTab({ id: 4, windowId: 2, url: 'https://chrome.google.com/', title: 'Google', active: true });
  const reply = await s.router.onPopupMessage({ type: 'popup.createGrant', tabs: [{ tabId: 4 }], preset: 'read',
    extras: [], durationMin: 15, label: 'Store' });
  assert.equal(reply.ok, true, JSON.stringify(reply));
}

test('an SPA route to a blind page during the call: refused, though the document is the same', async () => {
  const s = await shots();
  await storeTab(s);
  assert.ok(await s.router.handle('browser.screenshot', { tabId: 4 }), 'the site itself is not blind');
  s.fake.onCapture = async () => { s.fake.tabs.get(4).url = 'https://chrome.google.com/webstore/detail/x'; };
  const e = await refusal(s.router.handle('browser.screenshot', { tabId: 4 }));
  assert.deepEqual([e.code, e.data], ['refused_floor', { tabId: 4, level: 'blind', reason: 'extension_store' }]);
});

test('frames: one of the page whose own URL is blind is boxed whole; others are the page\'s to box', async () => {
  const s = await shots();
  await storeTab(s);
  const run = s.router.page.run.bind(s.router.page);
  s.router.page.run = async (where, op, args, opts) => (op !== 'shotMask' ? run(where, op, args, opts) : {
    ...structuredClone(SHOT_MASK),
    frames: [{ url: 'https://chrome.google.com/webstore/frame', box: [0, 10, 32, 20] },
      { url: 'https://chrome.google.com/news', box: [20, 0, 32, 8] }],
  });
  const shot = await s.router.handle('browser.screenshot', { tabId: 4 });
  assert.equal(shot.masked, 2);
  assert.deepEqual(s.drawer.log.painted[0].boxes,
    [{ x: 4, y: 4, width: 32, height: 20 }, { x: 0, y: 16, width: 64, height: 24 }]);
  assert.equal(s.fake.calls.capture[0].windowId, 2, 'the window of the tab');
});

test('at most two captures a second: a third waits for its slot; one further off than the bound is busy at once', async () => {
  const clock = fakeClock();
  const waits = [];
  const gate = new CaptureGate({ now: clock, sleep: async (ms) => { waits.push(ms); } });
  await gate.take();
  await gate.take();
  assert.deepEqual(waits, [], 'two at once');
  await gate.take();
  await gate.take();
  assert.deepEqual(waits, [CAPTURE_RATE.windowMs, CAPTURE_RATE.windowMs], 'the next two a window later');
  const e = await gate.take().then(() => null, (x) => x);
  assert.equal(e.code, 'busy');
  assert.equal(e.data.retryAfter, 2 * CAPTURE_RATE.windowMs);
  clock.advance(CAPTURE_RATE.windowMs);
  await gate.take();
  assert.equal(waits.at(-1), CAPTURE_RATE.windowMs, 'a slot once the window moved on');

  // Through the router: screenshots one after another wait their turn; a Stop ends a wait.
  const { router, waits: routerWaits, fake, pageLog } = await shots();
  for (let i = 0; i < 3; i++) await router.handle('browser.screenshot', { tabId: 1 });
  assert.deepEqual(routerWaits, [CAPTURE_RATE.windowMs], 'the third waited for its slot');
  assert.equal(fake.calls.capture.length, 3);
  assert.equal(shotOps(pageLog).length, 2 + 2 + 3, 'after its wait the page was asked again');
  const stopGate = new CaptureGate({ now: fakeClock() });
  await stopGate.take();
  await stopGate.take();
  const ac = new AbortController();
  const waiting = stopGate.take(ac.signal);
  ac.abort(new ChaperoneError('stopped', 'The person stopped the agent'));
  assert.equal((await waiting.catch((x) => x)).code, 'stopped');
});

test('the picture is made smaller until it fits in 300 KB; too_large when even the smallest does not', async () => {
  const big = await shots({ size: (width, quality) => (width === 64 && quality > 0.3 ? 400_000 : 200_000) });
  const shot = await big.router.handle('browser.screenshot', { tabId: 1 });
  assert.deepEqual(big.drawer.log.encoded.map((e) => e.quality), [0.6, 0.45, 0.3]);
  assert.equal(Buffer.from(shot.jpeg, 'base64').length, 200_000);

  // A wide picture is shrunk to 1024 px, then to 768 and 512 when it still does not fit.
  const huge = await shots({ size: () => 400_000 });
  huge.fake.captureDataUrl = TINY_JPEG;
  assert.equal(await code(huge.router.handle('browser.screenshot', { tabId: 1 })), 'too_large');
  assert.equal(huge.drawer.log.encoded.length, SHOT.tries.length);
  assert.deepEqual(SHOT.tries.map(([w]) => w), [1024, 1024, 1024, 768, 512]);
});

test('the answer passes the router\'s redaction unchanged; Chrome\'s refusals become codes without its words', async () => {
  const { router, fake } = await shots();
  const shot = await router.handle('browser.screenshot', { tabId: 1 });
  assert.doesNotMatch(shot.jpeg, /redacted/);

  const said = (message) => { fake.onCapture = async () => { throw new Error(message); }; };
  said('This request exceeds the MAX_CAPTURE_VISIBLE_TAB_CALLS_PER_SECOND quota.');
  const quota = await refusal(router.handle('browser.screenshot', { tabId: 1 }));
  assert.deepEqual([quota.code, quota.data], ['busy', { retryAfter: 1000 }]);
  said("Either the '<all_urls>' or 'activeTab' permission is required.");
  assert.equal(await code(router.handle('browser.screenshot', { tabId: 1 })), 'unsupported');
  said('Failed to capture tab: https://a.example/inbox?token=abc');
  const other = await refusal(router.handle('browser.screenshot', { tabId: 1 }));
  assert.equal(other.code, 'internal');
  assert.doesNotMatch(other.message, /a\.example|token/);
  fake.onCapture = null;
  fake.captureDataUrl = 'data:image/png;base64,iVBORw0KGgo=';
  assert.equal(await code(router.handle('browser.screenshot', { tabId: 1 })), 'internal');
  fake.captureDataUrl = null;
  // A picture the browser cannot decode: internal, in words of our own.
  const broken = { ...fakeDrawer(), decode: async () => { throw new Error('decode failed for https://a.example/inbox'); } };
  screenshotParts(router, { drawer: broken, sleep: async () => {} });
  const undrawn = await refusal(router.handle('browser.screenshot', { tabId: 1 }));
  assert.equal(undrawn.code, 'internal');
  assert.doesNotMatch(undrawn.message, /a\.example/);
});
