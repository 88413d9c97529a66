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
import { Browser, browserWhyNot, until } from './browser-harness.mjs';

const skip = whyNot() ?? browserWhyNot() ?? false;
if (skip) console.log(`# skipped: ${skip}`);

// GTK 4.8's AT-SPI code sometimes crashes the app while the tests walk the accessibility tree
// (it answers GetChildAtIndex with a NULL object path: "g_variant_is_object_path: assertion
// 'string != NULL' failed", then SIGSEGV; docs/architecture.md). That upstream crash, and only
// that one, earns the scenario a second run from scratch, said loudly in the log; a second
// crash, or any other failure, fails the test.
const GTK_ATSPI_CRASH = "g_variant_is_object_path: assertion 'string != NULL' failed";

test('pair, grant, revoke a grant, stop and resume, restart, revoke the browser — with the real app',
     { skip, timeout: 480000 }, async () => {
  try {
    await scenario();
  } catch (err) {
    if (!err.gtkAtspiCrash) throw err;
    console.log('# the app hit the GTK 4.8 AT-SPI crash (see docs/architecture.md); running again');
    await scenario();
  }
});

async function scenario() {
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
    await until(async () => /connected/i.test(await browser.status(popup)),
                { what: 'the popup to say it is connected' });

    // The device row's Revoke button names the browser: learn its name from the app.
    const buttons = (await atspi('buttons')).split('\n');
    const revokeDevice = buttons.find((b) => b.startsWith('Revoke '));
    assert.ok(revokeDevice, `a Revoke button for the paired browser among: ${buttons.join(', ')}`);

    // A grant made in the popup appears in the app, with its label and site...
    await browser.grant(popup, { pages: [page], preset: 'control', label: 'E2E app grant' });
    await new Promise((r) => setTimeout(r, 1500)); // the window turns to Grants (see below)
    await atspi('wait-label', 'E2E app grant');
    // ...and the person revokes it from the app: the popup no longer lists it.
    await atspi('press', 'Revoke E2E app grant');
    await until(async () => !(await popup.textContent('#active-list'))?.includes('E2E app grant'),
                { what: 'the popup to drop the grant revoked in the app' });
    await atspi('absent', 'Revoke E2E app grant');

    // Stop in the popup stops the agent in this browser, and Resume in the popup lets it act
    // again. (The app's own Resume is pressed through the core engine in
    // extension-capabilities.test.mjs: walking this app's accessibility tree right after a
    // browser stops meets a GTK 4.8 AT-SPI crash — docs/architecture.md.)
    await popup.click('#stop-button');
    await until(async () => (await (await browser.worker()).evaluate(
      () => globalThis.chaperone.router.state().stopped)) === true, { what: 'Stop to stop the agent' });
    await popup.click('#resume-button');
    await until(async () => (await (await browser.worker()).evaluate(
      () => globalThis.chaperone.router.state().stopped)) === false,
                { what: 'Resume in the popup to resume the browser' });

    // The app restarts on the same port: the extension reconnects by itself.
    await app.stopKeepingData();
    await browser.waitForState('connecting', { timeoutMs: 10000 }).catch(() => {});
    app = await startApp({ home: app.home, port: app.port });
    await browser.waitForState('connected', { timeoutMs: 45000 });

    // Revoking the browser in the app disconnects it at once and for good.
    await atspi('press', revokeDevice);
    await atspi('press', 'Revoke');
    await browser.waitForState('revoked', { timeoutMs: 10000 });
    await until(async () => /pair/i.test(await popup.textContent('#pair-section').catch(() => '')),
                { what: 'the popup to offer pairing again' });
  } catch (err) {
    console.log(app.log.join('\n'));
    console.log(browser.consoleLines.join('\n'));
    if (app.log.some((line) => line.includes(GTK_ATSPI_CRASH))) err.gtkAtspiCrash = true;
    throw err;
  } finally {
    await browser.close();
    await app.stop();
    await rm(app.home, { recursive: true, force: true });
    await sites.close();
  }
}
