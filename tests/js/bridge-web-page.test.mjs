// SPDX-License-Identifier: GPL-3.0-or-later
// A web page attacks the bridge, from real Chromium on a real web origin, as a stranger's site
// would: WebSockets to the two doors and to every path under them. None may open; the engine reads
// out nothing (no engineId), opens no pairing window and counts no bad attempt; a browser still
// pairs afterwards. The raw-client side of the same gate is tests/test-bridge.c.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import WebSocket from 'ws';

import { browserWhyNot, launchPlainChromium } from '../e2e/browser-harness.mjs';
import { startFixtureServer } from '../fixtures/serve.mjs';
import { ENGINE_PATH, TestEngine } from './engine-harness.mjs';

let skip = false;
if (!ENGINE_PATH) skip = 'CHAPERONE_TEST_ENGINE not set: point it at build/tests/chaperone-test-engine';
else skip = browserWhyNot() ?? false;
if (skip) console.log(`# skipping bridge-web-page tests: ${skip}`);

const PATHS = ['/pairing', '/pairing/', '/pairing/x', '/pairing//', '/pairing/%2e%2e',
  '/extension', '/extension/', '/extension/x', '/extension/.', '/'];

let server;
let browser;

before(async () => {
  if (skip) return;
  server = await startFixtureServer();
  browser = await launchPlainChromium();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

/** In the page: dials each path; says which opened and what came back before it closed. */
async function dialFromPage(page, port) {
  return page.evaluate(async ({ port, paths }) => {
    const dial = (path) => new Promise((resolve) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`);
      const got = [];
      ws.onopen = () => {
        got.push('open');
        // What an attacking page would send next: a pairing request with its own labels.
        ws.send(JSON.stringify({ type: 'pair_request', protocol: 1, client: 'evil', browser: 'Evil' }));
      };
      ws.onmessage = (e) => got.push(String(e.data).slice(0, 200));
      ws.onclose = (e) => resolve({ path, got, code: e.code });
      ws.onerror = () => got.push('error');
    });
    const results = [];
    for (const path of paths) results.push(await dial(path));
    return results;
  }, { port, paths: PATHS });
}

test('a web page cannot open the pairing or extension socket on any path', async (t) => {
  if (skip) return t.skip(skip);
  const engine = await TestEngine.start();
  try {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${server.originA}/index.html`);
    assert.match(page.url(), /^http:\/\/127\.0\.0\.1:\d+\//, 'the attacker is a real web origin');

    const mark = engine.mark();
    const results = await dialFromPage(page, engine.port);
    await context.close();

    for (const r of results) {
      assert.ok(!r.got.includes('open'), `${r.path} opened from a web page: ${JSON.stringify(r)}`);
      assert.ok(!r.got.some((m) => m.includes('engineId')), `${r.path} said the engineId`);
    }
    // The engine reports every pairing it shows the person; none may have started.
    assert.equal(engine.events.slice(mark).filter((e) => e.event === 'pairing').length, 0);

    // Pairing is not locked for the person: an extension origin still gets its challenge.
    const ws = new WebSocket(`ws://127.0.0.1:${engine.port}/extension`,
      { origin: 'chrome-extension://immigohjinbkkjncmhkefbfainfbcigp' });
    const first = await new Promise((resolve, reject) => {
      ws.once('message', (data) => resolve(JSON.parse(String(data))));
      ws.once('error', reject);
    });
    assert.equal(first.type, 'challenge');
    ws.close();
  } finally {
    await engine.stop();
  }
});
