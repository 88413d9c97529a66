// SPDX-License-Identifier: GPL-3.0-or-later
// Extension capabilities end to end, reading: tabs, frames, fields, the sign-in floor, bounded contexts, diffs, inspect.

import assert from 'node:assert/strict';
import { describe } from 'node:test';

import {
  skip, SECRET_NAME, SECRET_PASSWORD, MAX_TEXT_BYTES, MAX_NODES, MAX_SCAN, sites, pages, tabs, step, ok,
  refused, context, nodeNamed, fieldNamed, pageText, open, setUpCapabilities
} from './capabilities-harness.mjs';

describe('extension capabilities through the engine', { skip }, () => {
  setUpCapabilities();

  // ---- reading -------------------------------------------------------------------------------------

  step('browser.tabs lists the granted tabs only, never extension pages', async () => {
    const { tabs: listed } = await ok('browser.tabs');
    const ids = listed.map((t) => t.tabId).sort((a, b) => a - b);
    const granted = ['forms', 'shadow', 'iframe', 'login', 'big', 'dynamic', 'overlay', 'modal', 'drag', 'nav', 'cookies',
      'handoff', 'read', 'short'].map((n) => tabs[n]).sort((a, b) => a - b);
    assert.deepEqual(ids, granted);
    assert.ok(!ids.includes(tabs.ungranted), 'the ungranted tab is not listed');
    for (const t of listed) {
      assert.ok(!t.url.startsWith('chrome-extension:'), `no extension page: ${t.url}`);
      assert.equal(t.origin, sites.originA);
      assert.ok(t.expiresAt > Date.now());
    }
    const forms = listed.find((t) => t.tabId === tabs.forms);
    assert.equal(forms.label, 'E2E control');
    assert.equal(forms.title, 'Forms fixture');
    assert.ok(forms.scopes.includes('browser.dom.write') && forms.scopes.includes('browser.cookies.read'));
    assert.deepEqual(listed.find((t) => t.tabId === tabs.read).scopes.sort(),
      ['browser.dom.read', 'browser.tabs.read']);
  });

  step('browser.frames: main, same-origin (granted) and cross-origin (not granted) frames', async () => {
    const { frames } = await ok('browser.frames', { tabId: tabs.iframe });
    assert.equal(frames.length, 3, JSON.stringify(frames));
    const main = frames.find((f) => f.frameId === 0);
    assert.deepEqual([main.readable, main.origin, main.url], [true, sites.originA, `${sites.originA}/iframe.html`]);
    const same = frames.find((f) => f.frameId === tabs.sameFrameId);
    assert.deepEqual([same.readable, same.origin, same.parentFrameId], [true, sites.originA, 0]);
    const cross = frames.find((f) => f.frameId === tabs.crossFrameId);
    assert.deepEqual([cross.readable, cross.reason, cross.origin, cross.url], [false, 'not_granted', sites.originB, null]);
    await refused('no_grant', 'browser.frames', { tabId: tabs.ungranted });
  });

  step('setValue reaches the page (input + change seen) and the value never comes back', async () => {
    const before = await context('forms');
    const name = fieldNamed(before, 'fullName');
    assert.deepEqual([name.filled, name.valueLength], [false, 0]);

    const set = await ok('browser.node.action', { ref: name.ref, action: 'setValue', value: SECRET_NAME });
    assert.equal(set.done, true);
    // The page holds the value and saw the events a framework listens to...
    assert.equal(await pages.forms.inputValue('#name'), SECRET_NAME);
    const events = await pages.forms.evaluate(() => window.__formEvents.filter((e) => e.id === 'name').map((e) => e.type));
    assert.ok(events.includes('input') && events.includes('change'), `input and change on #name: ${events}`);
    // ...through the native setter, so a React-style value tracker on the instance sees a change.
    assert.equal(await pages.forms.evaluate(() => window.__tracker.tracked), '');

    // Context and inspect say the fields are filled and how long the values are, never what they are
    // (call() checks every reply for the strings).
    const afterSet = await context('forms');
    const nameAfter = fieldNamed(afterSet, 'fullName');
    assert.deepEqual([nameAfter.filled, nameAfter.valueLength], [true, SECRET_NAME.length]);
    const inspected = await ok('browser.node.inspect', { ref: nameAfter.ref });
    assert.equal(inspected.tag, 'input');
    assert.ok(!('value' in inspected) && !('value' in inspected.attributes), 'inspect has no value');
  });

  step('a visible password field: the page answers refused_floor to every read and act, with nothing of it', async () => {
    const ctx = await context('forms');
    const name = fieldNamed(ctx, 'fullName');
    const showRow = (display) => pages.forms.evaluate((d) => { document.getElementById('password').closest('label').style.display = d; }, display);
    await showRow('');
    try {
      // The person types a password; no agent call reads or acts on the page while it shows.
      await pages.forms.fill('#password', SECRET_PASSWORD);
      const value = await pages.forms.inputValue('#name');
      for (const [method, params] of [
        ['browser.context', { tabId: tabs.forms }],
        ['browser.node.inspect', { ref: name.ref }],
        ['browser.node.action', { ref: name.ref, action: 'setValue', value: 'typed by an agent' }],
      ]) {
        const error = await refused('refused_floor', method, params);
        const said = JSON.stringify(error);
        for (const text of ['Profile', 'Full name', 'forms.html', SECRET_NAME]) {
          assert.ok(!said.includes(text), `${method}'s refusal says nothing of the page (${text}): ${said}`);
        }
      }
      assert.equal(await pages.forms.inputValue('#name'), value, 'nothing was typed');
    } finally {
      await pages.forms.fill('#password', '');
      await showRow('none');
    }
    await ok('browser.context', { tabId: tabs.forms });
  });

  step('browser.context is bounded on forms, shadow, iframe and big pages', async () => {
    for (const name of ['forms', 'shadow', 'iframe', 'big']) {
      const ctx = await context(name);
      assert.ok(Buffer.byteLength(ctx.text, 'utf8') <= MAX_TEXT_BYTES, `${name}: text ≤ 20 KiB`);
      assert.ok(ctx.nodes.length <= MAX_NODES, `${name}: ≤ 2,000 nodes (${ctx.nodes.length})`);
      assert.ok(ctx.scanned <= MAX_SCAN, `${name}: ≤ 10,000 scanned (${ctx.scanned})`);
      assert.equal(ctx.tabId, tabs[name]);
      assert.equal(ctx.frameId, 0);
      assert.match(ctx.captureId, /^[a-z0-9]+$/);
      for (const n of ctx.nodes) assert.ok(n.ref.startsWith(`${ctx.captureId}:`), 'refs name their capture');
    }
  });

  step('browser.context on a 10,000-element page: every actionable node kept from a bounded scan', async () => {
    const ctx = await context('big');
    // About 1,000 actionable elements, all under the cap: the app pages them for the agent.
    assert.ok(ctx.nodeCount >= 990 && ctx.nodeCount <= MAX_NODES, `actionable nodes (${ctx.nodeCount})`);
    assert.equal(ctx.nodes.length, ctx.nodeCount);
    assert.ok(ctx.scanned > 9000 && ctx.scanned <= MAX_SCAN, `scanned ${ctx.scanned}`);
    assert.ok(Buffer.byteLength(ctx.text, 'utf8') <= MAX_TEXT_BYTES);
    assert.ok(JSON.stringify(ctx).length < 512 * 1024, 'the whole reply stays small');
  });

  step('browser.context sees into open shadow roots, never closed ones', async () => {
    const ctx = await context('shadow');
    for (const n of ['Shadow button', 'Shadow input', 'Nested shadow link', 'Slotted button']) nodeNamed(ctx, n);
    assert.ok(!JSON.stringify(ctx).includes('Closed secret'), 'nothing from the closed shadow root');
    assert.ok(ctx.shadowRoots >= 2, `open shadow roots counted (${ctx.shadowRoots})`);
    // Acting inside an open shadow root works like anywhere else.
    await ok('browser.node.action', { ref: nodeNamed(ctx, 'Shadow button').ref, action: 'click' });
    assert.equal(await pageText('shadow', '#status'), 'Shadow button clicked.');
  });

  step('browser.context lists frames with unreadable reasons; a granted child frame can be read', async () => {
    const ctx = await context('iframe');
    const cross = ctx.frames.find((f) => f.frameId === tabs.crossFrameId);
    assert.deepEqual([cross.readable, cross.reason, cross.origin, cross.url], [false, 'not_granted', sites.originB, null]);
    assert.equal(cross.name, 'cross-frame');
    const same = ctx.frames.find((f) => f.frameId === tabs.sameFrameId);
    assert.deepEqual([same.readable, same.origin], [true, sites.originA]);
    assert.ok(!ctx.text.includes('Child frame ('), 'the top document text does not include the frames');

    const child = await context('iframe', { frameId: tabs.sameFrameId });
    assert.match(child.text, /Child frame \(same\)/);
    await ok('browser.node.action', { ref: nodeNamed(child, 'Child button (same)').ref, action: 'click' });
    assert.equal(await pages.iframe.frameLocator('#same').locator('#status').textContent(), 'Clicked in same.');
    await refused('target_denied', 'browser.context', { tabId: tabs.iframe, frameId: tabs.crossFrameId });
  });

  step('login.html shows a password field: a sign-in page, blind to agents (refused_floor, reason sign_in)', async () => {
    const error = await refused('refused_floor', 'browser.context', { tabId: tabs.login });
    assert.match(error.message, /password field/, JSON.stringify(error));
    assert.ok(!JSON.stringify(error).includes('Sign in — Fixture'), 'not even its title');
  });

  step('browser.context diff after a click on dynamic.html; a removed node is stale_node', async () => {
    const first = await context('dynamic');
    const placeholder = nodeNamed(first, 'Placeholder');
    const clicked = await ok('browser.node.action', { ref: nodeNamed(first, 'Load details').ref, action: 'click' });
    assert.equal(clicked.changes.titleChanged, true);
    assert.equal(clicked.changes.textChanged, true);
    assert.equal(await pages.dynamic.title(), 'Dynamic fixture — loaded');

    const second = await context('dynamic', { diff: true });
    assert.ok(second.diff, 'a diff against the previous capture');
    assert.equal(second.diff.textChanged, true);
    const addedNames = second.diff.added.map((n) => n.name);
    assert.ok(addedNames.includes('First new') && addedNames.includes('Second new'), `added: ${addedNames}`);
    assert.ok(second.diff.removed.includes(placeholder.ref), `removed names the old ref: ${second.diff.removed}`);
    assert.ok(second.diff.changed.some((n) => n.name === 'Reload details'), 'the renamed button changed');
    assert.match(second.text, /The details are here now\./);

    await refused('stale_node', 'browser.node.inspect', { ref: placeholder.ref });
    await refused('stale_node', 'browser.node.action', { ref: placeholder.ref, action: 'click' });
  });

  step('browser.node.inspect describes a node without its value', async () => {
    const ctx = await context('forms');
    const email = await ok('browser.node.inspect', { ref: fieldNamed(ctx, 'email').ref });
    assert.equal(email.tag, 'input');
    assert.equal(email.attributes.type, 'email');
    assert.equal(email.attributes.placeholder, 'you@example.com');
    assert.equal(email.visible, true);
    assert.equal(email.credential, false);
    assert.ok(email.bounds.width > 0 && email.bounds.height > 0);
    assert.ok(!('value' in email));
  });
});
