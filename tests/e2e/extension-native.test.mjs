// SPDX-License-Identifier: GPL-3.0-or-later
// The real extension in real Chromium reaching the app through the native-messaging host: the
// host registered for the test profile (<user-data-dir>/NativeMessagingHosts/, as `chaperone
// doctor --fix` registers it for a person's browser), the bridge port in the browser's
// environment (CHAPERONE_BRIDGE_PORT, which the host inherits), the real C core engine
// (chaperone-test-engine) and the fixture sites. The person does what a person does: chooses the
// transport in Options, pairs in the popup, grants a tab there; the agent's click is made the way
// the app makes it, `call(deviceId, method, params)`.
//   1. "native" chosen in Options: pairing, the origin the app shows, a granted click.
//   2. "auto" with the WebSocket unreachable (the extension is told a port that drops every
//      connection): it falls back to the host, and Options says so.
//   3. "auto" against an app whose administrator locked Transport=native: the app refuses the
//      WebSocket at the upgrade, and the extension, unasked, pairs and connects through the host.

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { startFixtureServer } from '../fixtures/serve.mjs';
import { ENGINE_PATH, TestEngine } from '../js/engine-harness.mjs';
import { Browser, EXTENSION_ORIGIN, NATIVE_HOST, browserWhyNot, domWait } from './browser-harness.mjs';
import { until } from '../lib/until.mjs';

const skip = browserWhyNot()
  ?? (!ENGINE_PATH || !existsSync(ENGINE_PATH) ? 'no engine harness (CHAPERONE_TEST_ENGINE)' : null)
  ?? (!NATIVE_HOST || !existsSync(NATIVE_HOST) ? `no native host at ${NATIVE_HOST} (ninja -C build)` : null)
  ?? false;
if (skip) console.log(`# skipped: ${skip}`);

let sites;
let engine;
let dropping; // a port that takes each connection and drops it: a WebSocket there never opens
let hits = 0;
const browsers = [];
let failed = false;

async function launch(app = engine) {
  const browser = await Browser.launch({ nativeHost: { port: app.port } });
  browsers.push(browser);
  (await browser.worker()).on('console', (m) => browser.consoleLines.push(`[worker] ${m.type()}: ${m.text()}`));
  return browser;
}

/** Pairs in the popup, the code compared and Pair pressed in the "app"; resolves with the device id. */
async function pair(browser, popup, app = engine) {
  const mark = app.mark();
  const code = await browser.startPairing(popup);
  const pairing = await app.waitFor({ event: 'pairing' }, { after: mark, timeoutMs: 15000 });
  assert.equal(pairing.code.replace(/\D/g, ''), code, 'the app shows the code the popup shows');
  assert.equal(pairing.origin, EXTENSION_ORIGIN, 'the app sees the origin Chromium passed the host');
  app.approve(pairing.requestId);
  assert.equal((await app.waitFor({ event: 'pairing-ended', requestId: pairing.requestId },
    { after: mark, timeoutMs: 10000 })).outcome, 'approved');
  const online = await app.waitFor({ event: 'device-online' }, { after: mark, timeoutMs: 20000 });
  await browser.waitForState('connected');
  return online.deviceId;
}

const snapshot = async (browser) => (await browser.worker()).evaluate(() => globalThis.chaperone.bridge.snapshot());

const step = (name, fn) => test(name, { timeout: 90000 }, async () => {
  try {
    await fn();
  } catch (err) {
    failed = true;
    throw err;
  }
});

describe('the extension over the native host', { skip }, () => {
  before(async () => {
    sites = await startFixtureServer();
    engine = await TestEngine.start();
    dropping = createServer((socket) => { hits++; socket.destroy(); });
    await new Promise((r) => dropping.listen(0, '127.0.0.1', r));
  }, { timeout: 30000 });

  after(async () => {
    if (failed) {
      for (const b of browsers) console.log(b.consoleLines.slice(-40).join('\n'));
      console.log(engine?.stderrTail());
    }
    for (const b of browsers) await b.close();
    await new Promise((r) => (dropping ? dropping.close(r) : r()));
    await engine?.stop();
    await sites?.close();
  }, { timeout: 30000 });

  step('"native" in Options: paired through the host with the extension\'s own origin, then a granted click', async () => {
    const browser = await launch();
    // The port in Options drops every connection: only the host's own port can work.
    await browser.setPort(dropping.address().port);
    await browser.setTransport('native');
    const page = await browser.ctx.newPage();
    await page.goto(`${sites.originA}/overlay.html`);
    const popup = await browser.popup(page);
    const deviceId = await pair(browser, popup);
    assert.equal(hits, 0, 'no WebSocket was opened');

    const snap = await snapshot(browser);
    assert.equal(snap.transport, 'native');
    assert.equal(snap.transportPort, engine.port);
    assert.equal((await engine.device(deviceId)).origin, EXTENSION_ORIGIN);
    await popup.reload();
    await domWait(popup, (port) => document.querySelector('#transport-line')?.textContent.includes(`(port ${port})`),
      engine.port, { what: 'the popup to say it is connected through the native host' });
    assert.match(await popup.textContent('#transport-line'), /native host/);

    await browser.grant(popup, { pages: [page], preset: 'control', label: 'Native click' });
    const tabId = await browser.tabIdOf(page);
    await until(async () => (await engine.command({ cmd: 'grants' })).result.some((g) => g.label === 'Native click'),
      { what: 'the app to mirror the grant made in the popup' });
    const ctx = await engine.call(deviceId, 'browser.context', { tabId }, { timeoutMs: 8000 });
    const button = ctx.result?.nodes?.find((n) => n.name === 'Uncovered button');
    assert.ok(button, `the agent sees the button: ${JSON.stringify(ctx).slice(0, 300)}`);
    const click = await engine.call(deviceId, 'browser.node.action', { ref: button.ref, action: 'click' }, { timeoutMs: 8000 });
    assert.ok(click.result !== undefined, `the click went through: ${JSON.stringify(click.error)}`);
    assert.equal(await page.textContent('#status'), 'Uncovered button clicked.');
  });

  step('"auto" with the WebSocket unreachable: the same attempt falls back to the host, and Options says so', async () => {
    const browser = await launch();
    await browser.setPort(dropping.address().port);
    assert.equal(await (await browser.worker()).evaluate(() => globalThis.chaperone.transports.mode), 'auto',
      'auto is the default');
    const before = hits;
    const page = await browser.ctx.newPage();
    await page.goto(`${sites.originA}/overlay.html`);
    const popup = await browser.popup(page);
    const deviceId = await pair(browser, popup);
    assert.ok(hits > before, 'the WebSocket was tried first');

    const snap = await snapshot(browser);
    assert.equal(snap.transport, 'native');
    assert.equal(snap.port, dropping.address().port, 'Options still says the port it was told');
    assert.equal(snap.transportPort, engine.port);
    assert.ok((await engine.device(deviceId)).online);
    const options = await browser.extensionPage('options/options.html');
    await domWait(options, () => /native host/.test(document.querySelector('#transport-in-use')?.textContent ?? ''),
      null, { what: 'the options page to say the connection goes through the native host' });
    assert.equal(await options.isChecked('input[name="transport"][value="auto"]'), true);
  });

  step('"auto" against an app locked to Transport=native: the WebSocket is refused, and the extension goes through the host', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'chaperone-policy-'));
    const policy = join(dir, 'policy.conf');
    await writeFile(policy, '[Chaperone]\nTransport=native\n');
    const locked = await TestEngine.start({ policy });
    try {
      const browser = await launch(locked);
      // The port in Options is the app's own, and it answers: but not to a browser's WebSocket.
      await browser.setPort(locked.port);
      const page = await browser.ctx.newPage();
      await page.goto(`${sites.originA}/overlay.html`);
      const popup = await browser.popup(page);
      const deviceId = await pair(browser, popup, locked);
      const snap = await snapshot(browser);
      assert.equal(snap.transport, 'native', 'connected through the host');
      assert.ok((await locked.device(deviceId)).online);
      await browser.close();
    } finally {
      await locked.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
