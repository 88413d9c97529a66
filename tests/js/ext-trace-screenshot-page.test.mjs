// SPDX-License-Identifier: GPL-3.0-or-later
// The page agent's shotMask op (extension/content/page-shot.js) for real, in Chromium, on
// tests/fixtures/sites/screenshot.html: which boxes a failure screenshot gets — filled fields and
// editors, credential fields filled or not, open shadow roots, same-origin frames, a cross-origin
// frame whole — and its refusal once a password field shows. The picture itself is checked with
// the real extension in tests/e2e/extension-screenshot.test.mjs.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { ok, open, refused, run, opts } from './page-agent-harness.mjs';

/** [left, top, right, bottom] of `selector` in the page's viewport (CSS px), as the op rounds it. */
const edgesOf = (page, selector) => page.evaluate((sel) => {
  const r = document.querySelector(sel).getBoundingClientRect();
  return [Math.floor(r.left), Math.floor(r.top), Math.ceil(r.right), Math.ceil(r.bottom)];
}, selector);

const has = (mask, box) => mask.boxes.some((b) => b.every((v, i) => v === box[i]));

describe('shotMask in a real page', opts, () => {
  test('boxes filled fields, editors and credential fields, never empty ones; says nothing of a value', async () => {
    const page = await open('/screenshot.html');
    await page.frameLocator('#same').locator('#child-input').waitFor();
    const before = await ok(page, 'shotMask', {});
    assert.deepEqual([before.width, before.height, before.dpr, before.scrollY], [1280, 800, 1, 0]);
    assert.ok(!has(before, await edgesOf(page, '#name')), 'an empty text field is not boxed');
    assert.ok(has(before, await edgesOf(page, '#otp')), 'a one-time-code field is boxed, filled or not');
    assert.ok(has(before, await edgesOf(page, '#editor')), 'an editor holding text');
    assert.ok(has(before, await edgesOf(page, '#open-host')), 'a filled field in an open shadow root');
    assert.ok(has(before, await edgesOf(page, '#cross')), 'a frame of another origin, whole');
    assert.ok(!has(before, await edgesOf(page, '#same')), 'a same-origin frame is looked into, not boxed whole');
    assert.deepEqual(before.frames.map((f) => f.url), [`${new URL(page.url()).origin}/iframe-child.html?label=shot`],
      'the same-origin frame with its own URL is listed for the worker\'s floor');
    for (const sel of ['#empty', '#notes', '#plain', '#show-signin']) assert.ok(!has(before, await edgesOf(page, sel)), sel);

    const SECRET = 'Zq7-screenshot-typed-value';
    await page.fill('#name', SECRET);
    await page.fill('#far-input', SECRET);
    await page.frameLocator('#same').locator('#child-input').fill(SECRET);
    await page.evaluate(() => window.scrollTo(0, 0));
    const after = await ok(page, 'shotMask', {});
    assert.ok(has(after, await edgesOf(page, '#name')), 'the filled field is boxed now');
    const frame = await edgesOf(page, '#same');
    const child = await page.frameLocator('#same').locator('#child-input').evaluate((el) => {
      const r = el.getBoundingClientRect();
      return [r.left, r.top, r.right, r.bottom];
    });
    const inFrame = [Math.floor(frame[0] + child[0]), Math.floor(frame[1] + child[1]), Math.ceil(frame[0] + child[2]),
      Math.ceil(frame[1] + child[3])];
    assert.ok(has(after, inFrame), `the frame's filled field, where the page shows it: ${JSON.stringify(after.boxes)}`);
    assert.ok(after.boxes.every((b) => b[1] < 800), 'a field below the viewport is not in the picture');
    assert.ok(!JSON.stringify(after).includes(SECRET), 'no value');

    // Scrolled: the boxes move with the page (the worker compares two answers for this).
    await page.evaluate(() => window.scrollTo(0, 30));
    const scrolled = await ok(page, 'shotMask', {});
    assert.equal(scrolled.scrollY, 30);
    assert.ok(has(scrolled, await edgesOf(page, '#name')));
    assert.notDeepEqual(scrolled.boxes, after.boxes);
    await page.close();
  });

  test('refused once a password field shows, in the page or in an open shadow root', async () => {
    const page = await open('/screenshot.html');
    await ok(page, 'shotMask', {});
    await page.click('#show-signin');
    const error = await refused(page, 'shotMask', {}, 'refused_floor');
    assert.deepEqual(error.data, { level: 'blind', reason: 'sign_in' });
    await page.evaluate(() => { document.getElementById('signin').hidden = true; });
    await ok(page, 'shotMask', {});
    // A password the light-DOM check cannot see: the op's own walk finds it.
    await page.evaluate(() => {
      const input = document.createElement('input');
      input.type = 'password';
      document.getElementById('open-host').shadowRoot.append(input);
    });
    const r = await run(page, 'shotMask', {});
    assert.deepEqual([r.ok, r.error.code, r.error.data], [false, 'refused_floor', { level: 'blind', reason: 'sign_in' }]);
    await page.close();
  });
});
