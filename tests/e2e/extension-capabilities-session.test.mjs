// SPDX-License-Identifier: GPL-3.0-or-later
// Extension capabilities end to end, over a session: grant scopes and expiry, handoffs, Stop, restarts, revocations.

import assert from 'node:assert/strict';
import { describe } from 'node:test';

import { TestEngine } from '../js/engine-harness.mjs';
import { until } from '../lib/until.mjs';
import {
  skip, sites, engine, browser, popup, deviceId, pages, tabs, grants, step, ok, refused, context,
  nodeNamed, fieldNamed, workerEval, tabActive, setEngine, setUpCapabilities
} from './capabilities-harness.mjs';

describe('extension capabilities through the engine', { skip }, () => {
  setUpCapabilities();

  // ---- what the grant allows -----------------------------------------------------------------------

  step('scope_denied under a Read grant; no_grant on an ungranted tab', async () => {
    const ctx = await context('read'); // reading is allowed
    const button = nodeNamed(ctx, 'Page button');
    await refused('scope_denied', 'browser.node.action', { ref: button.ref, action: 'click' });
    await refused('scope_denied', 'browser.navigate', { tabId: tabs.read, url: `${sites.originA}/forms.html` });
    await refused('scope_denied', 'browser.cookies', { tabId: tabs.read });
    await refused('scope_denied', 'browser.takeover', { tabId: tabs.read });
    await refused('scope_denied', 'browser.handoff.request', { tabId: tabs.read, reason: 'other', message: 'x' });

    await refused('no_grant', 'browser.context', { tabId: tabs.ungranted });
    await refused('no_grant', 'browser.cookies', { tabId: tabs.ungranted });
    await refused('no_grant', 'browser.navigate', { tabId: tabs.ungranted, url: `${sites.originA}/login.html` });
  });

  step('grant_expired when the 5-minute grant has run out', async () => {
    // Five minutes cannot be waited out here. The grant store takes its clock as `now` (the
    // Router's constructor parameter, kept as grants.now); the test moves that clock six minutes
    // ahead — the grant itself, made in the popup, is untouched — and the expiry is found by the
    // call's own check, as it would be at minute six.
    await ok('browser.context', { tabId: tabs.short });
    const mark = engine.mark();
    await workerEval(() => { globalThis.chaperone.router.grants.now = () => Date.now() + 6 * 60 * 1000; });
    try {
      await refused('grant_expired', 'browser.context', { tabId: tabs.short });
    } finally {
      await workerEval(() => { globalThis.chaperone.router.grants.now = Date.now; });
    }
    await refused('grant_expired', 'browser.context', { tabId: tabs.short });
    const changed = await engine.waitFor((e) => e.event === 'grants-changed' &&
      !e.grants.some((g) => g.grantId === grants['E2E five minutes']), { after: mark });
    assert.ok(changed.grants.some((g) => g.grantId === grants['E2E control']), 'the other grants live on');
    await until(async () => !(await popup.textContent('#active-list')).includes('E2E five minutes'),
      { what: 'the popup to drop the expired grant' });
    await ok('browser.context', { tabId: tabs.forms });
  });

  // ---- handoffs ------------------------------------------------------------------------------------

  async function requestHandoff(reason, message) {
    const mark = engine.mark();
    const r = await ok('browser.handoff.request', { tabId: tabs.handoff, reason, message });
    assert.equal(r.state, 'waiting');
    const arrived = await engine.waitFor((e) => e.event === 'handoff-arrived' && e.handoff.handoffId === r.handoffId,
      { after: mark });
    assert.equal(arrived.handoff.reason, reason);
    assert.equal(arrived.handoff.tabId, tabs.handoff);
    await until(async () => {
      const text = await browser.closedShadowText(pages.handoff);
      return text.includes('Chaperone needs you') && text.includes(message) && text.includes('Done');
    }, { timeout: 5000, what: 'the handoff banner in the page' });
    return r.handoffId;
  }

  async function bannerGone() {
    await until(async () => !(await browser.closedShadowText(pages.handoff)).includes('Chaperone needs you'),
      { timeout: 5000, what: 'the banner to go' });
  }

  step('handoff answered on the page: a real click on Done', async () => {
    const handoffId = await requestHandoff('qr', 'Scan the code with your phone');
    assert.deepEqual(await ok('browser.handoff.status', { handoffId }), { handoffId, state: 'waiting' });
    // Playwright's locators do not reach into the banner's closed shadow root: click at its box.
    assert.equal(await pages.handoff.getByRole('button', { name: 'Done' }).count(), 0);
    const mark = engine.mark();
    await browser.clickInClosedShadow(pages.handoff, 'data-chaperone', 'done');
    await engine.waitFor((e) => e.event === 'handoffs-changed' && e.handoffs.length === 0, { after: mark });
    const status = await ok('browser.handoff.status', { handoffId });
    assert.deepEqual([status.state, status.outcome, status.by], ['done', 'done', 'page']);
    await bannerGone();
  });

  step('handoff answered in the app: Show tab, then Done', async () => {
    const handoffId = await requestHandoff('mfa', 'Type the code from your authenticator');
    await pages.forms.bringToFront();
    const shown = await engine.command({ cmd: 'show-handoff-tab', deviceId, handoffId });
    assert.equal(shown.result?.shown, true, JSON.stringify(shown));
    assert.equal(await tabActive(tabs.handoff), true);
    const mark = engine.mark();
    const resolved = await engine.command({ cmd: 'resolve-handoff', deviceId, handoffId, outcome: 'done' });
    assert.deepEqual(resolved.result, { handoffId, state: 'done' });
    await engine.waitFor((e) => e.event === 'handoffs-changed' && e.handoffs.length === 0, { after: mark });
    const status = await ok('browser.handoff.status', { handoffId });
    assert.deepEqual([status.state, status.outcome, status.by], ['done', 'done', 'app']);
    await bannerGone();
  });

  step('a waiting handoff survives a reload, blocks a second one, and the agent can cancel it', async () => {
    const handoffId = await requestHandoff('login', 'Sign in with your own password');
    const busy = await refused('busy', 'browser.handoff.request', { tabId: tabs.handoff, reason: 'other', message: 'again' });
    assert.equal(busy.message.length > 0, true);
    await pages.handoff.reload();
    await until(async () => (await browser.closedShadowText(pages.handoff)).includes('Sign in with your own password'),
      { timeout: 5000, what: 'the banner to come back after the reload' });
    // A page script cannot answer for the person: it cannot even reach the closed root, and a
    // synthetic click on the page is not a click on Done.
    await pages.handoff.evaluate(() => document.body.click());
    assert.equal((await ok('browser.handoff.status', { handoffId })).state, 'waiting');

    const mark = engine.mark();
    assert.deepEqual(await ok('browser.handoff.cancel', { handoffId }), { handoffId, state: 'cancelled' });
    await engine.waitFor((e) => e.event === 'handoffs-changed' && e.handoffs.length === 0, { after: mark });
    const status = await ok('browser.handoff.status', { handoffId });
    assert.deepEqual([status.state, status.outcome, status.by], ['cancelled', 'cancelled', 'agent']);
    await bannerGone();
  });

  // ---- the person's Stop ---------------------------------------------------------------------------

  step('pill shows the step; Esc stops every call; Resume in the app restarts', async () => {
    try {
      await pillEscResume();
    } finally {
      // Whatever failed, the later tests need a browser that is not stopped.
      await engine.command({ cmd: 'resume', deviceId });
    }
  });

  async function pillEscResume() {
    const stepShown = async () => {
      const text = await browser.closedShadowText(pages.handoff);
      return Number(/step (\d+)/.exec(text)?.[1] ?? NaN);
    };
    // The worker tells the app each step (agent.step) as the call starts, and redraws the pill a
    // task after the call answers: the step to expect is the one told, not the one the pill shows
    // as the answer arrives (that can still be the step before).
    const stepTold = async (mark) => (await engine.waitFor((e) => e.event === 'ext-event' &&
      e.name === 'agent.step' && e.data?.tabId === tabs.handoff, { after: mark })).data.step;
    const mark0 = engine.mark();
    const ctx = await context('handoff');
    const n = await stepTold(mark0);
    assert.ok(n >= 1);
    await until(async () => (await stepShown()) === n, { timeout: 5000, what: `the pill to show step ${n}` });
    // The pill names the browser's Stop shortcut (chrome.commands), never Esc, which a page can swallow.
    assert.match(await browser.closedShadowText(pages.handoff), /Ctrl\+Shift\+E to stop/);
    const mark1 = engine.mark();
    await ok('browser.node.inspect', { ref: nodeNamed(ctx, 'Page button').ref });
    assert.equal(await stepTold(mark1), n + 1, 'one call, one step');
    await until(async () => (await stepShown()) === n + 1, { timeout: 5000, what: `the pill to show step ${n + 1}` });

    // A page script's Escape is not the person's: it stops nothing.
    await pages.handoff.evaluate(() => {
      for (const target of [window, document, document.body]) {
        target.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', code: 'Escape', bubbles: true }));
      }
    });
    await ok('browser.context', { tabId: tabs.handoff });
    assert.equal((await engine.device(deviceId)).stopped, false);

    // The person presses Esc in the page (a trusted key press).
    await pages.handoff.bringToFront();
    const mark = engine.mark();
    await pages.handoff.keyboard.press('Escape');
    const changed = await engine.waitFor((e) => e.event === 'ext-event' && e.name === 'stop.changed', { after: mark });
    assert.deepEqual([changed.data.stopped, changed.data.source], [true, 'esc']);
    await until(async () => (await engine.device(deviceId)).stopped === true, { what: 'the app to show the browser stopped' });
    await until(async () => /Agent stopped/.test(await browser.closedShadowText(pages.handoff)),
      { timeout: 5000, what: 'the pill to say stopped' });

    await refused('stopped', 'browser.tabs');
    await refused('stopped', 'browser.context', { tabId: tabs.forms });
    await refused('stopped', 'browser.node.action', { ref: nodeNamed(ctx, 'Page button').ref, action: 'click' });
    await refused('stopped', 'browser.navigate', { tabId: tabs.forms, url: `${sites.originA}/login.html` });
    await refused('stopped', 'browser.cookies', { tabId: tabs.cookies });
    await refused('stopped', 'browser.handoff.request', { tabId: tabs.handoff, reason: 'other', message: 'x' });

    const resumed = await engine.command({ cmd: 'resume', deviceId });
    assert.deepEqual(resumed.result, { stopped: false });
    await until(async () => (await engine.device(deviceId)).stopped === false, { what: 'the app to show it resumed' });
    await ok('browser.tabs');
    await ok('browser.context', { tabId: tabs.handoff });
    await until(async () => /step \d+ · Ctrl\+Shift\+E to stop/.test(await browser.closedShadowText(pages.handoff)),
      { timeout: 5000, what: 'the pill to show the agent active again' });

    // The pill's own Stop button, clicked by the person, stops it too.
    const mark2 = engine.mark();
    await browser.clickInClosedShadow(pages.handoff, 'data-chaperone', 'stop');
    const byPill = await engine.waitFor((e) => e.event === 'ext-event' && e.name === 'stop.changed', { after: mark2 });
    assert.deepEqual([byPill.data.stopped, byPill.data.source], [true, 'pill']);
    await refused('stopped', 'browser.context', { tabId: tabs.forms });
    assert.deepEqual((await engine.command({ cmd: 'resume', deviceId })).result, { stopped: false });
    await ok('browser.context', { tabId: tabs.forms });
  }

  // ---- surviving restarts ----------------------------------------------------------------------------

  step('the service worker is stopped by the browser and comes back with its grants', async () => {
    const ctx = await context('forms');
    await workerEval(() => { globalThis.__e2eMarker = 'old worker'; });
    const mark = engine.mark();
    await browser.stopServiceWorker();
    await engine.waitFor({ event: 'device-offline', deviceId }, { after: mark, timeoutMs: 10000 });

    // Opening the popup (a person looking at it) wakes the worker.
    const look = await browser.popup(pages.forms);
    const online = await engine.waitFor({ event: 'device-online', deviceId }, { after: mark, timeoutMs: 20000 });
    await look.close();
    assert.equal(await workerEval(() => globalThis.__e2eMarker ?? 'new worker'), 'new worker', 'a fresh worker');
    assert.equal(online.resumed, true, 'the logical session resumed');

    // Grants and captures were kept in chrome.storage.session.
    const listed = (await ok('browser.tabs')).tabs.map((t) => t.tabId);
    assert.ok(listed.includes(tabs.forms));
    const inspected = await ok('browser.node.inspect', { ref: fieldNamed(ctx, 'email').ref });
    assert.equal(inspected.attributes.type, 'email', 'a ref from before the restart still works');
    await ok('browser.context', { tabId: tabs.forms });
  });

  step('the engine restarts on the same port: the extension reconnects by itself', async () => {
    const { dataDir, port } = engine;
    await engine.stop({ keepData: true });
    setEngine(await TestEngine.start({ dataDir, port }));
    const online = await engine.waitFor({ event: 'device-online', deviceId }, { timeoutMs: 40000 });
    assert.equal(online.deviceId, deviceId);
    await browser.waitForState('connected', { timeoutMs: 10000 });
    // The app asks the browser for its grants after it connects (extension.grants): its list fills again.
    await until(async () => (await engine.command({ cmd: 'grants' })).result
      .some((g) => g.grantId === grants['E2E control']), { timeout: 5000, what: 'the app to list the grants again' });
    await ok('browser.context', { tabId: tabs.forms });
  });

  step('revoking a grant in the app: the popup drops it and calls answer no_grant', async () => {
    await ok('browser.context', { tabId: tabs.read });
    const r = await engine.command({ cmd: 'revoke-grant', deviceId, grantId: grants['E2E read only'] });
    assert.deepEqual(r.result, { grantId: grants['E2E read only'], revoked: true });
    await popup.reload();
    await until(async () => {
      const list = await popup.textContent('#active-list');
      return list.includes('E2E control') && !list.includes('E2E read only');
    }, { what: 'the popup to drop the revoked grant' });
    await refused('no_grant', 'browser.context', { tabId: tabs.read });
    assert.ok(!(await ok('browser.tabs')).tabs.some((t) => t.tabId === tabs.read));
  });

  step('revoking the browser in the app: the extension shows revoked', async () => {
    const r = await engine.command({ cmd: 'revoke', deviceId });
    assert.equal(r.result, true);
    await browser.waitForState('revoked', { timeoutMs: 10000 });
    const reply = await engine.call(deviceId, 'browser.tabs', {}, { timeoutMs: 2000 });
    assert.ok(reply.error, 'no call reaches a revoked browser');
    // The app drops a revoked browser from its list (or, at least, shows it revoked).
    const device = await engine.device(deviceId);
    assert.ok(device === undefined || device.revoked === true, JSON.stringify(device));
    assert.equal((await engine.command({ cmd: 'grants' })).result.length, 0, 'its grants went with it');
  });
});
