// SPDX-License-Identifier: GPL-3.0-or-later
// browser.batch end to end: real Chromium with the real extension and the real C core engine
// (tests/chaperone-test-engine), the batch sent as the app sends it (engine → bridge → worker).
// On the fixture app that talks to its own JSON API (api-app.html), a batch of reads is signed by
// the page's own cookie and CSRF header and each one reaches the server; a batch whose second step
// sends a message is held there — the fixture's log proves the message and the steps after it
// never reached the server. On a compose page, elements named by role and name are filled and
// clicked in one batch, the page shows it, and a click that would save is held as a single act's.

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';

import { API_COOKIE, API_CSRF, API_PLANTED_TOKEN, startFixtureServer } from '../fixtures/serve.mjs';
import { ENGINE_PATH, TestEngine } from '../js/engine-harness.mjs';
import { Browser, browserWhyNot, domWait } from './browser-harness.mjs';

const engineWhyNot = () => (!ENGINE_PATH ? 'CHAPERONE_TEST_ENGINE is not set (ninja -C build)'
  : existsSync(ENGINE_PATH) ? null : `no engine harness at ${ENGINE_PATH}`);
const skip = browserWhyNot() ?? engineWhyNot() ?? false;
if (skip) console.log(`# skipped: ${skip}`);

const NEVER = [API_COOKIE, API_CSRF, API_PLANTED_TOKEN];

describe('browser.batch through the engine', { skip }, () => {
  let sites;
  let engine;
  let browser;
  let deviceId;
  const pages = {};
  const tabs = {};

  const batch = async (tab, steps) => {
    const reply = await engine.call(deviceId, 'browser.batch', { tabId: tab, frameId: 0, steps, deadlineMs: 20000 },
      { timeoutMs: 25000 });
    const text = JSON.stringify(reply);
    for (const v of NEVER) assert.ok(!text.includes(v), `the batch replied with a value (${v}): ${text.slice(0, 300)}`);
    assert.ok(reply.result !== undefined, `browser.batch failed: ${JSON.stringify(reply.error)}`);
    return reply.result;
  };
  const arrived = (method, path) => sites.apiLog().filter((e) => e.method === method && e.path === path);
  const get = (path) => ({ api: { method: 'GET', url: `${sites.originA}${path}`,
    credential: { kind: 'header', header: 'x-csrf-token' } } });

  before(async () => {
    sites = await startFixtureServer();
    engine = await TestEngine.start();
    browser = await Browser.launch();
    await browser.setPort(engine.port);
    for (const [name, path] of [['app', '/api-app.html'], ['compose', '/mcp-compose.html']]) {
      pages[name] = await browser.ctx.newPage();
      await pages[name].goto(`${sites.originA}${path}`);
      tabs[name] = await browser.tabIdOf(pages[name]);
    }
    const popup = await browser.popup(pages.app);
    const mark = engine.mark();
    await browser.startPairing(popup);
    const pairing = await engine.waitFor({ event: 'pairing' }, { after: mark, timeoutMs: 15000 });
    engine.approve(pairing.requestId);
    deviceId = (await engine.waitFor({ event: 'device-online' }, { after: mark, timeoutMs: 20000 })).deviceId;
    await browser.waitForState('connected');
    await browser.grant(popup, { pages: [pages.app, pages.compose], preset: 'control',
      extras: ['browser.network.read', 'browser.api.call'], label: 'E2E batch' });
    // The app's calls from now on are captured: it loads again (same site, the grant stays).
    await pages.app.reload();
    await domWait(pages.app, () => document.getElementById('status')?.textContent === 'Ready', null,
      { what: 'the app to have made its calls' });
  }, { timeout: 90000 });

  after(async () => {
    await browser?.close();
    await engine?.stop();
    await sites?.close();
  }, { timeout: 30000 });

  test('a batch of reads: each is signed by the page and reaches the server, in one request', async () => {
    const before = ['/api/contacts/1', '/api/contacts/2', '/api/contacts'].map((p) => arrived('GET', p).length);
    const r = await batch(tabs.app, [get('/api/contacts/1'), get('/api/contacts/2'), get('/api/contacts?limit=2')]);
    assert.deepEqual([r.done, r.of, r.halted], [3, 3, undefined], JSON.stringify(r).slice(0, 400));
    assert.deepEqual(r.steps.map((s) => s.status), [200, 200, 200]);
    assert.match(r.steps[1].data, /Bob Brown/);
    assert.match(r.steps[0].data, /\[redacted apiToken len=\d+\]/);
    const now = ['/api/contacts/1', '/api/contacts/2', '/api/contacts'].map((p) => arrived('GET', p));
    assert.deepEqual(now.map((l, i) => l.length - before[i]), [1, 1, 1]);
    assert.ok(now.every((l) => l.at(-1).cookie && l.at(-1).csrf), 'the page\'s own cookie and CSRF header signed each');
  });

  test('a held send halts the batch at its step: nothing of it, nor after it, reaches the server', async () => {
    const readsBefore = arrived('GET', '/api/contacts/3').length;
    const r = await batch(tabs.app, [get('/api/contacts/1'),
      { api: { method: 'POST', url: `${sites.originA}/api/messages`, body: { to: 'ann@example.com', text: 'Lunch?' },
        credential: { kind: 'header', header: 'x-csrf-token' } } },
      get('/api/contacts/3')]);
    assert.equal(r.done, 1);
    assert.equal(r.held, true);
    assert.deepEqual([r.halted.step, r.halted.code], [2, 'held']);
    assert.equal(r.hold.kind, 'outward');
    assert.equal(r.hold.control, 'POST /api/messages');
    assert.equal(arrived('POST', '/api/messages').length, 0, 'the message was not sent');
    assert.equal(arrived('GET', '/api/contacts/3').length, readsBefore, 'step 3 never ran');
    const declined = await engine.command({ cmd: 'resolve-hold', deviceId, holdId: r.hold.holdId, outcome: 'decline' },
      { timeoutMs: 10000 });
    assert.equal(declined.result?.state, 'declined', JSON.stringify(declined));
  });

  test('fill and click by role and name in one batch; a click that would save is held there', async () => {
    const r = await batch(tabs.compose, [
      { act: { target: { role: 'textbox', name: 'Subject' }, action: 'setValue', value: 'Lunch plans' } },
      { act: { target: { role: 'button', name: 'Preview' }, action: 'click' } },
      { wait: { text: 'Preview (1)', timeoutMs: 5000 } },
    ]);
    assert.deepEqual([r.done, r.of, r.halted], [3, 3, undefined], JSON.stringify(r).slice(0, 400));
    assert.equal(await pages.compose.evaluate(() => document.getElementById('subject').value), 'Lunch plans');
    assert.equal(await pages.compose.evaluate(() => window.__previews), 1);

    const missing = await batch(tabs.compose, [{ act: { target: { role: 'button', name: 'Publish' }, action: 'click' } }]);
    assert.deepEqual([missing.done, missing.halted.step, missing.halted.code], [0, 1, 'stale_node']);

    const held = await batch(tabs.compose, [
      { act: { target: { role: 'textbox', name: 'Subject' }, action: 'setValue', value: 'Second' } },
      { act: { target: { role: 'button', name: 'Save draft' }, action: 'click' } },
      { act: { target: { role: 'button', name: 'Preview' }, action: 'click' } },
    ]);
    assert.equal(held.done, 1);
    assert.equal(held.held, true, JSON.stringify(held).slice(0, 400));
    assert.equal(held.halted.step, 2);
    assert.equal(await pages.compose.evaluate(() => window.__draftSaves ?? 0), 0, 'the save did not run');
    assert.equal(await pages.compose.evaluate(() => window.__previews), 1, 'step 3 never ran');
  });

  test('a later step acts on the element found before only while it still has that name', async () => {
    // The first fill renames its field ("Subject" becomes "Topic") and adds a new "Subject":
    // the second step must find the new one, not fill the renamed one again.
    await pages.compose.evaluate(() => {
      const old = document.getElementById('subject');
      old.addEventListener('input', () => {
        old.closest('label').firstChild.textContent = 'Topic ';
        const label = document.createElement('label');
        label.id = 'batch-new-subject';
        label.append('Subject ', Object.assign(document.createElement('input'), { type: 'text', id: 'subject-2' }));
        old.closest('form').append(label);
      }, { once: true });
    });
    try {
      const r = await batch(tabs.compose, [
        { act: { target: { role: 'textbox', name: 'Subject' }, action: 'setValue', value: 'One' } },
        { act: { target: { role: 'textbox', name: 'Subject' }, action: 'setValue', value: 'Two' } },
        { act: { target: { role: 'textbox', name: 'Subject' }, action: 'setValue', value: 'Three' } },
      ]);
      assert.deepEqual([r.done, r.halted], [3, undefined], JSON.stringify(r).slice(0, 400));
      assert.deepEqual(await pages.compose.evaluate(() => [document.getElementById('subject').value,
        document.getElementById('subject-2').value]), ['One', 'Three'], 'steps 2 and 3 filled the field named Subject then');
    } finally {
      await pages.compose.evaluate(() => {
        document.getElementById('batch-new-subject')?.remove();
        document.getElementById('subject').closest('label').firstChild.textContent = 'Subject ';
      });
    }
  });
});
