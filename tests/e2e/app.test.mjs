// SPDX-License-Identifier: GPL-3.0-or-later
// End to end with the real app: Chaperone starts under a virtual display, a browser (the Node
// test client, signing with WebCrypto as the extension does) asks to pair, a person compares the
// code and presses Pair through the accessibility tree, then requests flow both ways, and the
// person revokes the browser from the window. Also: pressing Reject.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { ChaperoneClient, PairingError } from '../js/chaperone-client.mjs';
import { atspi, display, run, startApp, until, whyNot } from './app-harness.mjs';

const ORIGIN = 'chrome-extension://abcdefghijklmnopabcdefghijklmnop';

test('pair with Pair pressed in the app, requests both ways, revoke from the window',
     { skip: whyNot() ?? false, timeout: 120000 }, async () => {
  const app = await startApp();
  try {
    const client = new ChaperoneClient({ port: app.port, origin: ORIGIN, browser: 'E2E Browser 1' });

    // The person compares: the app shows the same six digits as the browser.
    let code = null;
    const paired = client.pair({
      timeoutMs: 60000,
      onCode: (c) => { code = c.code; },
    });
    await atspi('wait-label', 'E2E Browser 1');
    const shown = await atspi('wait-label', display(await until(() => code)));
    assert.equal(shown, display(code));
    await atspi('press', 'Pair');
    const { deviceId } = await paired;

    // The browser updated itself since it paired: the app learns it when it asks.
    let asked = 0;
    client.extensionInfo = () => {
      asked++;
      return { client: 'chaperone-test-client', version: '2', browser: 'E2E Browser 2' };
    };
    const hello = await client.connect();
    assert.equal(hello.deviceId, deviceId);

    // Browser -> app.
    const info = await client.request('engine.info', {});
    assert.equal(info.deviceId, deviceId);
    assert.equal(info.deviceName, 'E2E Browser 1');

    // App -> browser, seen by the person in the Browsers list.
    await atspi('wait-label', 'E2E Browser 2');
    assert.equal(asked, 1);

    // Revoke, confirmed in a dialog: the socket closes at once with 4403.
    await atspi('press', 'Revoke E2E Browser 1');
    await atspi('press', 'Revoke');
    const closed = await client.whenClosed({ timeoutMs: 10000 });
    assert.equal(closed.code, 4403);
    assert.equal(await atspi('absent', 'Revoke E2E Browser 1'), '');

    // And it cannot come back.
    await assert.rejects(client.connect(), (err) => err.closeCode === 4403);
  } catch (err) {
    // What the app said is the first thing anyone needs when this fails.
    console.log(app.log.join('\n'));
    throw err;
  } finally {
    await app.stop();
  }
});

test('nothing that pairs, approves or revokes is reachable over D-Bus',
     { skip: whyNot() ?? false, timeout: 60000 }, async () => {
  const app = await startApp();
  try {
    // org.gtk.Actions is exported for the application and each window: list both.
    const paths = ['/io/github/chaperone/Chaperone', '/io/github/chaperone/Chaperone/window/1'];
    const exported = [];
    for (const path of paths) {
      const { stdout } = await run('gdbus', ['call', '--session', '--dest',
                                             'io.github.chaperone.Chaperone', '--object-path', path,
                                             '--method', 'org.gtk.Actions.List'],
                                   { timeout: 10000 }).catch(() => ({ stdout: '' }));
      exported.push(...[...stdout.matchAll(/'([^']+)'/g)].map((m) => m[1]));
    }
    assert.ok(exported.includes('quit'), `the app's actions were listed: ${exported}`);
    // Only what is safe for any program of the user to trigger may be there (quit, about,
    // preferences, show a page); nothing that decides, undoes a stop, or destroys records.
    const dangerous = exported.filter((name) =>
      /pair|approv|reject|revok|resume|grant|done|handoff|clear|rename|disconnect|pause/i.test(name));
    assert.deepEqual(dangerous, [], `exported on the session bus: ${dangerous}`);
  } finally {
    await app.stop();
  }
});

test('Reject in the app: the browser is told and nothing is paired',
     { skip: whyNot() ?? false, timeout: 120000 }, async () => {
  const app = await startApp();
  try {
    const client = new ChaperoneClient({ port: app.port, origin: ORIGIN, browser: 'E2E Rejected' });
    const paired = client.pair({ timeoutMs: 60000 });
    await atspi('wait-label', 'E2E Rejected');
    await atspi('press', 'Reject');
    await assert.rejects(paired, (err) => err instanceof PairingError && err.outcome === 'rejected');
    // Said in plain words.
    await atspi('wait-label', 'rejected');
  } catch (err) {
    // What the app said is the first thing anyone needs when this fails.
    console.log(app.log.join('\n'));
    throw err;
  } finally {
    await app.stop();
  }
});
