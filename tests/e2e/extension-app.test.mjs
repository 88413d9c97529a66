// SPDX-License-Identifier: GPL-3.0-or-later
// The real extension in real Chromium against the real app: the person pairs from the popup and
// presses Pair in the app after comparing the same six digits, grants a tab in the popup and sees
// it in the app, revokes it from the app, stops and resumes the agent in the popup,
// the app restarts and the browser comes back by itself, and revoking the browser in the app
// disconnects it for good. Every app button is pressed through the accessibility tree.

import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { test } from 'node:test';

import { startFixtureServer } from '../fixtures/serve.mjs';
import { atspi, display, startApp, whyNot } from './app-harness.mjs';
import { Browser, browserWhyNot, domWait } from './browser-harness.mjs';
import { until } from '../lib/until.mjs';

const skip = whyNot() ?? browserWhyNot() ?? false;
if (skip) console.log(`# skipped: ${skip}`);

// One run: an app that dies fails the test with what it printed (under ASan, the stack); a crash
// is never retried away.
test('pair, grant, revoke a grant, stop and resume, restart, revoke the browser — with the real app',
     { skip, timeout: 240000 }, async () => {
  const sites = await startFixtureServer();
  let app = await startApp();
  const browser = await Browser.launch();
  try {
    await browser.setPort(app.port);
    const page = await browser.ctx.newPage();
    await page.goto(`${sites.originA}/forms.html`);
    const popup = await browser.popup(page);

    // Pairing: the popup shows a code; the app shows the same one; the person presses Pair.
    const code = await browser.startPairing(popup);
    assert.match(code, /^\d{6}$/);
    assert.equal(await atspi('wait-label', display(code)), display(code),
                 'the app shows the code the popup shows');
    await atspi('press', 'Pair');
    await browser.waitForState('connected');
    await domWait(popup, () => /connected/i.test(document.querySelector('#status-text')?.textContent ?? ''), null,
                  { what: 'the popup to say it is connected' });

    // The device row's Revoke button names the browser: learn its name from the app.
    const buttons = (await atspi('buttons')).split('\n');
    const revokeDevice = buttons.find((b) => b.startsWith('Revoke '));
    assert.ok(revokeDevice, `a Revoke button for the paired browser among: ${buttons.join(', ')}`);

    // A grant made in the popup appears in the app, with its label and site...
    await browser.grant(popup, { pages: [page], preset: 'control', label: 'E2E app grant' });
    await atspi('wait-label', 'E2E app grant');
    // ...and the person revokes it from the app: the popup no longer lists it.
    await atspi('press', 'Revoke E2E app grant');
    await domWait(popup, () => !document.querySelector('#active-list')?.textContent.includes('E2E app grant'), null,
                  { what: 'the popup to drop the grant revoked in the app' });
    await atspi('absent', 'Revoke E2E app grant');

    // Stop in the popup stops the agent in this browser, and Resume in the popup lets it act
    // again. (The worker's state is its own: looked at through until().)
    await popup.click('#stop-button');
    await until(async () => (await (await browser.worker()).evaluate(
      () => globalThis.chaperone.router.state().stopped)) === true, { what: 'Stop to stop the agent' });
    await popup.click('#resume-button');
    await until(async () => (await (await browser.worker()).evaluate(
      () => globalThis.chaperone.router.state().stopped)) === false,
                { what: 'Resume in the popup to resume the browser' });

    // The app restarts on the same port: the extension reconnects by itself.
    await app.stopKeepingData();
    await browser.waitForState('connecting', { timeoutMs: 10000 });
    app = await startApp({ home: app.home, port: app.port });
    await browser.waitForState('connected', { timeoutMs: 45000 });

    // Revoking the browser in the app disconnects it at once and for good.
    await atspi('press', revokeDevice);
    await atspi('press', 'Revoke');
    await browser.waitForState('revoked', { timeoutMs: 10000 });
    await domWait(popup, () => /pair/i.test(document.querySelector('#pair-section')?.textContent ?? ''), null,
                  { what: 'the popup to offer pairing again' });
    assert.equal(app.crash(), null);
  } catch (err) {
    console.log(app.log.join('\n'));
    console.log(browser.consoleLines.join('\n'));
    throw err;
  } finally {
    // The app's stop throws on an unclean exit (a sanitizer's report): the fixture server goes all
    // the same, or the test run waits on it until its timeout.
    try {
      await browser.close();
      await app.stop();
    } finally {
      await rm(app.home, { recursive: true, force: true });
      await sites.close();
    }
  }
});
