// SPDX-License-Identifier: GPL-3.0-or-later
// The Stop shortcut, end to end: the real extension in HEADED Chromium under the test's X display,
// paired with the core engine (tests/chaperone-test-engine), a granted tab whose page swallows every
// key in the capture phase on window and document — registered before anything of Chaperone's is in
// the page, as a hostile page would. The person presses the real keys (xdotool sends them to the X
// server, so they come through the browser's whole input path, as from a keyboard): Esc is
// swallowed by the page, which is why the pill no longer claims it; Ctrl+Shift+E is the browser's
// — chrome.commands — and stops the agent anyway. Headed, because headless Chromium has no
// browser window to route accelerators through.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';

import { startFixtureServer } from '../fixtures/serve.mjs';
import { ENGINE_PATH, TestEngine } from '../js/engine-harness.mjs';
import { Browser, EXTENSION_ORIGIN, browserWhyNot } from './browser-harness.mjs';
import { until } from '../lib/until.mjs';

function whyNot() {
  if (!process.env.DISPLAY) return 'no X display (build-aux/test.sh runs the suite under xvfb-run)';
  try {
    execFileSync('xdotool', ['version'], { stdio: 'ignore' });
  } catch {
    return 'xdotool is not installed (apt install xdotool; build-aux/install-deps.sh --test)';
  }
  if (!ENGINE_PATH) return 'CHAPERONE_TEST_ENGINE is not set (ninja -C build; see tests/js/engine-harness.mjs)';
  if (!existsSync(ENGINE_PATH)) return `no engine harness at ${ENGINE_PATH} (ninja -C build)`;
  return browserWhyNot();
}

const skip = whyNot() ?? false;
if (skip) console.log(`# skipped: ${skip}`);

/** Keys as from the keyboard: to the X server, into Chromium's focused window. */
function pressKeys(keys) {
  // Without a window manager nothing gives Chromium's window the keyboard focus: give it.
  const windows = execFileSync('xdotool', ['search', '--onlyvisible', '--class', 'chromium'], { encoding: 'utf8' })
    .split('\n').filter(Boolean);
  assert.ok(windows.length > 0, 'a visible Chromium window');
  execFileSync('xdotool', ['windowfocus', '--sync', windows.at(-1)]);
  execFileSync('xdotool', ['key', '--clearmodifiers', keys]);
}

describe('the Stop shortcut (chrome.commands) in headed Chromium', { skip }, () => {
  let sites;
  let engine;
  let browser;
  let page;
  let tabId;
  let deviceId;
  let failed = false;
  const step = (name, fn) => test(name, async (t) => {
    try {
      await fn(t);
    } catch (err) {
      failed = true;
      throw err;
    }
  });

  const call = (method, params = {}) => engine.call(deviceId, method, params, { timeoutMs: 8000 });
  const stopChanged = (mark) => engine.waitFor((e) => e.event === 'ext-event' && e.name === 'stop.changed',
    { after: mark, timeoutMs: 10000 });

  before(async () => {
    sites = await startFixtureServer();
    engine = await TestEngine.start();
    browser = await Browser.launch({ headless: false });
    (await browser.worker()).on('console', (m) => browser.consoleLines.push(`[worker] ${m.type()}: ${m.text()}`));
    await browser.setPort(engine.port);

    // The hostile page: before any of its own scripts (and long before Chaperone's), it swallows
    // every key press in the capture phase, where Chaperone's Esc listener would hear it.
    page = await browser.ctx.newPage();
    await page.addInitScript(() => {
      window.__swallowed = [];
      const swallow = (e) => {
        window.__swallowed.push(e.key);
        e.preventDefault();
        e.stopImmediatePropagation();
      };
      for (const target of [window, document]) {
        for (const type of ['keydown', 'keyup', 'keypress']) target.addEventListener(type, swallow, true);
      }
    });
    await page.goto(`${sites.originA}/handoff.html?shortcut`);
    tabId = await browser.tabIdOf(page);

    const popup = await browser.popup(page);
    const mark = engine.mark();
    const code = await browser.startPairing(popup);
    const pairing = await engine.waitFor({ event: 'pairing' }, { after: mark, timeoutMs: 15000 });
    assert.equal(pairing.code.replace(/\D/g, ''), code, 'the app shows the code the popup shows');
    assert.equal(pairing.origin, EXTENSION_ORIGIN);
    engine.approve(pairing.requestId);
    deviceId = (await engine.waitFor({ event: 'device-online' }, { after: mark, timeoutMs: 20000 })).deviceId;
    await browser.waitForState('connected');
    await browser.grant(popup, { pages: [page], preset: 'control', label: 'Shortcut task' });
    await popup.close();
  }, { timeout: 90000 });

  after(async () => {
    if (failed) {
      console.log(browser?.consoleLines.slice(-60).join('\n'));
      console.log(engine?.stderrTail());
    }
    await browser?.close();
    await engine?.stop();
    await sites?.close();
  }, { timeout: 30000 });

  step('the browser binds the command to Ctrl+Shift+E, and the pill names that key, not Esc', async () => {
    const commands = await (await browser.worker()).evaluate(() => chrome.commands.getAll());
    // (Chrome lists the toolbar button's own _execute_action too, unbound.)
    assert.equal(commands.find((c) => c.name === 'stop-agent')?.shortcut, 'Ctrl+Shift+E', JSON.stringify(commands));
    assert.ok((await call('browser.context', { tabId })).result, 'the agent reads the page');
    await until(async () => /Agent · step \d+ · Ctrl\+Shift\+E to stop/.test(await browser.closedShadowText(page)),
      { what: 'the pill to name the shortcut' });
    assert.doesNotMatch(await browser.closedShadowText(page), /Esc/);
  });

  step('Esc, pressed by the person, is swallowed by the page: it cannot be relied on', async () => {
    // The pill is up (Esc is heard only while it is), as after any call of the agent's.
    assert.ok((await call('browser.context', { tabId })).result, 'the agent reads the page');
    await until(async () => /Agent · step \d+/.test(await browser.closedShadowText(page)), { what: 'the pill' });
    await page.bringToFront();
    const before = (await page.evaluate(() => window.__swallowed.length));
    pressKeys('Escape');
    await until(() => page.evaluate((n) => window.__swallowed.slice(n).includes('Escape'), before),
      { what: 'the page to have swallowed the Escape key' });
    // Nothing stopped: the agent still works.
    assert.ok((await call('browser.tabs')).result, 'browser.tabs still answers');
    assert.equal((await engine.device(deviceId)).stopped, false);
  });

  step('Ctrl+Shift+E, pressed by the person in that page, stops the agent all the same', async () => {
    await page.bringToFront();
    const mark = engine.mark();
    pressKeys('ctrl+shift+e');
    const changed = await stopChanged(mark);
    assert.deepEqual([changed.data.stopped, changed.data.source], [true, 'shortcut']);
    await until(async () => (await engine.device(deviceId)).stopped === true, { what: 'the app to show the browser stopped' });
    assert.equal((await call('browser.tabs')).error?.code, 'stopped');
    assert.equal((await call('browser.context', { tabId })).error?.code, 'stopped');
    await until(async () => /Agent stopped/.test(await browser.closedShadowText(page)), { what: 'the pill to say stopped' });
    // The page's listener was there and heard the modifiers; the command's key never reached it.
    assert.ok((await page.evaluate(() => window.__swallowed)).includes('Control'), 'the page heard Ctrl');

    // Only the person resumes (here through the engine function the app's Resume calls).
    assert.deepEqual((await engine.command({ cmd: 'resume', deviceId })).result, { stopped: false });
    assert.ok((await call('browser.tabs')).result, 'answers again after Resume');
  });
});
