// SPDX-License-Identifier: GPL-3.0-or-later
// browser.screenshot end to end: real Chromium with the real extension, the real C core engine
// (tests/chaperone-test-engine) and tests/fixtures/sites/screenshot.html. The call is made as the
// app's trace recording makes it, through the bridge; the person pairs and grants in the popup. The
// picture that comes back is decoded in a page canvas and its pixels read: the boxes are where the
// typed fields are, in the box colour, and the rest of the page is still there.

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';

import { startFixtureServer } from '../fixtures/serve.mjs';
import { ENGINE_PATH, TestEngine } from '../js/engine-harness.mjs';
import { Browser, EXTENSION_ORIGIN, browserWhyNot, domWait } from './browser-harness.mjs';

const engineWhyNot = () => (!ENGINE_PATH ? 'CHAPERONE_TEST_ENGINE is not set (ninja -C build)'
  : existsSync(ENGINE_PATH) ? null : `no engine harness at ${ENGINE_PATH} (ninja -C build)`);
const skip = browserWhyNot() ?? engineWhyNot() ?? false;
if (skip) console.log(`# skipped: ${skip}`);

const SECRET = 'Zq7-typed-into-the-page-5521';
const BOX = [32, 32, 32]; // SHOT.box in extension/lib/capabilities/trace.js

let sites;
let engine;
let browser;
let popup;
let deviceId;
let shot; // the fixture page
let other; // a page in another tab of the same window
let tabId;

async function call(method, params) {
  const reply = await engine.call(deviceId, method, params, { timeoutMs: 10000 });
  assert.ok(!JSON.stringify(reply).includes(SECRET), 'no typed value in any reply');
  return reply;
}

/**
 * The picture decoded by a page's canvas (the popup's tab: any page will do but the one shot):
 * a function (x, y) → [r, g, b] in the picture's pixels.
 */
async function decode(jpeg) {
  const { width, height, rgba } = await popup.evaluate(async (b64) => {
    const img = new Image();
    img.src = `data:image/jpeg;base64,${b64}`;
    await img.decode();
    const c = document.createElement('canvas');
    c.width = img.naturalWidth;
    c.height = img.naturalHeight;
    const g = c.getContext('2d');
    g.drawImage(img, 0, 0);
    // The pixels as one base64 string: a list of millions of numbers is slow to carry back.
    const data = g.getImageData(0, 0, c.width, c.height).data;
    let bin = '';
    for (let i = 0; i < data.length; i += 0x8000) bin += String.fromCharCode(...data.subarray(i, i + 0x8000));
    return { width: c.width, height: c.height, rgba: btoa(bin) };
  }, jpeg);
  const data = Buffer.from(rgba, 'base64');
  return { width, height, at: (x, y) => [...data.subarray((y * width + x) * 4, (y * width + x) * 4 + 3)] };
}

const near = (rgb, want, tolerance = 16) => rgb.every((v, i) => Math.abs(v - want[i]) <= tolerance);

/** A rectangle's points, inset by 3 picture px from its edges (JPEG blurs the edges of a box). */
function inside([left, top, right, bottom], scale) {
  const [x0, y0, x1, y1] = [Math.ceil(left * scale) + 3, Math.ceil(top * scale) + 3,
    Math.floor(right * scale) - 4, Math.floor(bottom * scale) - 4];
  const points = [];
  for (let y = y0; y <= y1; y += Math.max(1, Math.floor((y1 - y0) / 4))) {
    for (let x = x0; x <= x1; x += Math.max(1, Math.floor((x1 - x0) / 6))) points.push([x, y]);
  }
  return points;
}

const rectOf = (selector) => shot.evaluate((sel) => {
  const r = document.querySelector(sel).getBoundingClientRect();
  return [r.left, r.top, r.right, r.bottom];
}, selector);

describe('browser.screenshot through the engine', { skip }, () => {
  before(async () => {
    sites = await startFixtureServer();
    engine = await TestEngine.start();
    browser = await Browser.launch();
    await browser.setPort(engine.port);
    shot = await browser.ctx.newPage();
    await shot.goto(`${sites.originA}/screenshot.html`);
    await shot.frameLocator('#same').locator('#child-input').waitFor({ timeout: 10000 });
    await shot.frameLocator('#cross').locator('#child-input').waitFor({ timeout: 10000 });
    other = await browser.ctx.newPage();
    await other.goto(`${sites.originA}/forms.html?tab=other`);
    tabId = await browser.tabIdOf(shot);

    popup = await browser.popup(shot);
    const mark = engine.mark();
    const code = await browser.startPairing(popup);
    const pairing = await engine.waitFor({ event: 'pairing' }, { after: mark, timeoutMs: 15000 });
    assert.equal(pairing.code.replace(/\D/g, ''), code);
    assert.equal(pairing.origin, EXTENSION_ORIGIN);
    engine.approve(pairing.requestId);
    deviceId = (await engine.waitFor({ event: 'device-online' }, { after: mark, timeoutMs: 20000 })).deviceId;
    await browser.waitForState('connected');
    // Read is enough for a screenshot, as for a snapshot.
    await browser.grant(popup, { pages: [shot], preset: 'read', label: 'E2E screenshot' });
  }, { timeout: 90000 });

  after(async () => {
    await browser?.close();
    await engine?.stop();
    await sites?.close();
  }, { timeout: 30000 });

  test('the picture of the tab in front: boxes over what was typed and over credential fields; the page around them', async () => {
    await shot.fill('#name', SECRET);
    await shot.frameLocator('#same').locator('#child-input').fill(SECRET);
    await shot.bringToFront();
    const started = performance.now();
    const reply = await call('browser.screenshot', { tabId });
    const ms = performance.now() - started;
    assert.ok(reply.result, JSON.stringify(reply.error));
    const { jpeg, width, height, masked } = reply.result;
    const bytes = Buffer.from(jpeg, 'base64').length;
    console.log(`# screenshot: ${width}×${height}, ${bytes} bytes, ${masked} boxes, ${ms.toFixed(0)} ms through the engine`);
    assert.ok(bytes <= 300 * 1024, `at most 300 KB (${bytes})`);
    const viewport = await shot.evaluate(() => [innerWidth, innerHeight]);
    assert.equal(width, Math.min(1024, viewport[0]), 'at most 1024 px wide');
    assert.equal(height, Math.round((viewport[1] * width) / viewport[0]), 'the proportions kept');
    const scale = width / viewport[0];

    const pic = await decode(jpeg);
    assert.deepEqual([pic.width, pic.height], [width, height]);
    const boxed = async (what, rect) => {
      for (const [x, y] of inside(rect, scale)) {
        assert.ok(near(pic.at(x, y), BOX), `${what} is boxed at (${x}, ${y}): ${pic.at(x, y)}`);
      }
    };
    await boxed('the filled field', await rectOf('#name'));
    await boxed('the one-time-code field (empty)', await rectOf('#otp'));
    await boxed('the editor with text', await rectOf('#editor'));
    await boxed('the open shadow root\'s filled field', await rectOf('#open-host'));
    await boxed('the closed shadow root\'s filled field', await rectOf('#closed-host'));
    await boxed('the cross-origin frame', await rectOf('#cross'));
    const frame = await rectOf('#same');
    const child = await shot.frameLocator('#same').locator('#child-input').evaluate((el) => {
      const r = el.getBoundingClientRect();
      return [r.left, r.top, r.right, r.bottom];
    });
    await boxed('the same-origin frame\'s filled field', [frame[0] + child[0], frame[1] + child[1], frame[0] + child[2], frame[1] + child[3]]);
    assert.ok(masked >= 7, `one box each at least (${masked})`);

    // The rest of the page is the page: the blue block, the empty field's white, the frame's text.
    for (const [x, y] of inside(await rectOf('#plain'), scale)) assert.ok(near(pic.at(x, y), [120, 190, 250], 24), `blue at (${x}, ${y}): ${pic.at(x, y)}`);
    for (const [x, y] of inside(await rectOf('#empty'), scale)) assert.ok(!near(pic.at(x, y), BOX, 40), `the empty field is not boxed at (${x}, ${y})`);
    assert.ok(masked < 20, 'and not much else');
  });

  test('refused once a password field shows; answered again once it is hidden', async () => {
    await shot.bringToFront();
    await shot.click('#show-signin');
    await domWait(shot, () => document.getElementById('password').checkVisibility(), null, { what: 'the password field to show' });
    const reply = await call('browser.screenshot', { tabId });
    assert.equal(reply.error?.code, 'refused_floor', JSON.stringify(reply).slice(0, 300));
    // (The engine harness passes the code and message on; the data is checked in ext-trace-screenshot.test.mjs.)
    assert.match(reply.error.message, /password field/);
    await shot.evaluate(() => { document.getElementById('signin').hidden = true; });
    assert.ok((await call('browser.screenshot', { tabId })).result, 'a picture once the field is gone');
  });

  test('a burst: captures wait their turn for Chrome\'s two a second, the rest are busy at once', async () => {
    await shot.bringToFront();
    const replies = await Promise.all(Array.from({ length: 6 }, () => call('browser.screenshot', { tabId })));
    const pictures = replies.filter((r) => r.result).length;
    const busy = replies.filter((r) => r.error?.code === 'busy');
    console.log(`# burst of 6: ${pictures} pictures, ${busy.length} busy`);
    assert.equal(pictures + busy.length, 6, JSON.stringify(replies.map((r) => r.error ?? 'ok')));
    assert.ok(pictures >= 2 && busy.length >= 2, `${pictures} pictures, ${busy.length} busy`);
    for (const b of busy) assert.match(b.error.message, /two screenshots a second/, 'refused by the gate, never by Chrome\'s quota');
  });

  test('a page JPEG cannot make small: encoded smaller until it fits in 300 KB', async () => {
    await shot.goto(`${sites.originA}/screenshot.html?noise=1`);
    await shot.bringToFront();
    const reply = await call('browser.screenshot', { tabId });
    assert.ok(reply.result, JSON.stringify(reply.error));
    const bytes = Buffer.from(reply.result.jpeg, 'base64').length;
    console.log(`# noise: ${reply.result.width}×${reply.result.height}, ${bytes} bytes`);
    assert.ok(bytes <= 300 * 1024, `${bytes} bytes`);
    const pic = await decode(reply.result.jpeg);
    assert.deepEqual([pic.width, pic.height], [reply.result.width, reply.result.height]);
  });

  test('a tab behind another is refused, and stays behind', async () => {
    await other.bringToFront();
    const active = async () => (await browser.worker()).evaluate(async (id) => (await chrome.tabs.get(id)).active, tabId);
    assert.equal(await active(), false);
    const reply = await call('browser.screenshot', { tabId });
    assert.equal(reply.error?.code, 'target_denied', JSON.stringify(reply).slice(0, 300));
    assert.match(reply.error.message, /not the one its window shows/);
    assert.equal(await active(), false, 'the person\'s tab was not switched');
  });
});
