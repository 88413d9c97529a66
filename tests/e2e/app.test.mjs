// SPDX-License-Identifier: GPL-3.0-or-later
// End to end with the real app: Chaperone starts under a virtual display, a browser (the Node
// test client, signing with WebCrypto as the extension does) asks to pair, a person compares the
// code and presses Pair through the accessibility tree, then requests flow both ways, and the
// person revokes the browser from the window. Also: pressing Reject.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { ChaperoneClient, PairingError } from '../js/chaperone-client.mjs';
import { atspi, display, run, startApp, whyNot } from './app-harness.mjs';
import { endedCleanUnderSanitizers } from '../lib/sanitizer.mjs';
import { deadline } from '../lib/until.mjs';

const ORIGIN = 'chrome-extension://abcdefghijklmnopabcdefghijklmnop';

test('pair with Pair pressed in the app, requests both ways, revoke from the window',
     { skip: whyNot() ?? false, timeout: 120000 }, async () => {
  const app = await startApp();
  try {
    const client = new ChaperoneClient({ port: app.port, origin: ORIGIN, browser: 'E2E Browser 1' });

    // The person compares: the app shows the same six digits as the browser.
    let showCode;
    const codeShown = new Promise((r) => { showCode = r; });
    const paired = client.pair({
      timeoutMs: 60000,
      onCode: (c) => showCode(c.code),
    });
    await atspi('wait-label', 'E2E Browser 1');
    const code = await deadline(codeShown, { what: 'the browser to show its code' });
    const shown = await atspi('wait-label', display(code));
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

// Every interface the app may export on the session bus, the methods each one has, and why they
// are harmless. An interface or a method not listed here fails the test: a new door must be
// looked at, and tried below, before it ships.
const STANDARD = ['Get', 'GetAll', 'Set', 'Introspect', 'Ping', 'GetMachineId'];
const KNOWN_INTERFACES = {
  'org.freedesktop.DBus.Properties': STANDARD,
  'org.freedesktop.DBus.Introspectable': STANDARD,
  'org.freedesktop.DBus.Peer': STANDARD,
  // What launching chaperone again does: activate, open, a command line.
  'org.gtk.Application': ['Activate', 'Open', 'CommandLine'],
  // The same; its ActivateAction runs only the actions checked below.
  'org.freedesktop.Application': ['Activate', 'Open', 'ActivateAction'],
  // The exported actions, each one listed below and run.
  'org.gtk.Actions': ['List', 'Describe', 'DescribeAll', 'Activate', 'SetState'],
  // The tray icon: a click opens the window, its menu is the one below.
  'org.kde.StatusNotifierItem': ['ContextMenu', 'Activate', 'SecondaryActivate', 'Scroll', 'ProvideXdgActivationToken'],
  // The tray's menu: each item listed below and clicked.
  'com.canonical.dbusmenu': ['GetLayout', 'GetGroupProperties', 'GetProperty', 'Event', 'EventGroup', 'AboutToShow',
                             'AboutToShowGroup'],
};
// Every action the app may export, and why any program of the user may run it.
const KNOWN_ACTIONS = {
  quit: 'quits (the bridge closes with the app: nothing is approved)',
  about: 'shows About',
  preferences: 'shows Preferences (changing one is a press in that window)',
  'show-needs-you': 'shows the Needs you page',
  'show-help-overlay': 'shows the keyboard shortcuts',
  'start-engine': "starts the engine only if it is not running (the window's Try Again), as launching the app does",
  'check-setup': 'shows Check Setup, which only reads; its Fix is a press in that window (a widget action)',
};
// Every item the tray menu may have (by label), and why a click on it is harmless.
const KNOWN_MENU_ITEMS = [
  [/^Open$/, 'opens the window'],
  [/^Needs you/, 'opens the window on Needs you'],
  [/^Stop all$/, 'stops every agent: the safe way only'],
  [/^Stopped/, 'a note that opens the window (Resume is the person\'s, in the window)'],
  [/^Quit$/, 'quits'],
];

const DEST = 'io.github.chaperone.Chaperone';
const gdbusCall = (path, method, ...args) =>
  run('gdbus', ['call', '--session', '--dest', DEST, '--object-path', path, '--method', method, '--', ...args],
      { timeout: 10000 });

/** {path: {interface: [method names]}} of every object the app exports, walked from / by introspection. */
async function exportedObjects() {
  const { stdout } = await run('gdbus', ['introspect', '--session', '--dest', DEST, '--object-path', '/', '--recurse'],
                               { timeout: 20000 });
  const objects = {};
  let path = null;
  let iface = null;
  let section = null;
  for (const line of stdout.split('\n')) {
    let m;
    if ((m = /^\s*node (\/\S*) \{/.exec(line))) {
      path = m[1];
      objects[path] = {};
      iface = null;
    } else if ((m = /^\s*interface (\S+) \{/.exec(line)) && path) {
      iface = m[1];
      objects[path][iface] = [];
    } else if ((m = /^\s*(methods|signals|properties):$/.exec(line))) {
      section = m[1];
    } else if ((m = /^\s+([A-Za-z_]\w*)\(/.exec(line)) && iface && section === 'methods') {
      objects[path][iface].push(m[1]);
    }
  }
  return objects;
}

test('D-Bus: every object, interface, method, action and tray item the app exports is known and tried with a pairing waiting; none decides it',
     { skip: whyNot() ?? false, timeout: 120000 }, async () => {
  const app = await startApp();
  try {
    // A browser asks to pair: the approval every door below could try to reach.
    const client = new ChaperoneClient({ port: app.port, origin: ORIGIN, browser: 'E2E D-Bus door' });
    const paired = client.pair({ timeoutMs: 90000 });
    paired.catch(() => {});
    await atspi('wait-label', 'E2E D-Bus door');

    const objects = await exportedObjects();
    const paths = Object.keys(objects).filter((p) => Object.keys(objects[p]).length > 0);
    const where = JSON.stringify(objects);
    assert.ok(objects['/io/github/chaperone/Chaperone']?.['org.gtk.Actions'], `the app's actions are there: ${where}`);
    assert.ok(paths.some((p) => p.startsWith('/io/github/chaperone/Chaperone/window/')), `a window's object is there: ${where}`);
    const unknown = [];
    for (const p of paths) {
      for (const [iface, methods] of Object.entries(objects[p])) {
        if (!(iface in KNOWN_INTERFACES)) unknown.push(`${p} ${iface}`);
        else for (const m of methods) if (!KNOWN_INTERFACES[iface].includes(m)) unknown.push(`${p} ${iface}.${m}`);
      }
    }
    assert.deepEqual(unknown, [], 'interfaces or methods exported that this test does not know');

    const tried = [];
    // Every action on every object that has them: known, and run (quit last, below).
    for (const path of paths.filter((p) => objects[p]['org.gtk.Actions'])) {
      const { stdout } = await gdbusCall(path, 'org.gtk.Actions.DescribeAll');
      // {'name': (enabled, signature 'param type', [state])}
      const actions = [...stdout.matchAll(/'([^']+)': \((true|false), (?:signature )?'([^']*)'/g)]
        .map((m) => ({ name: m[1], enabled: m[2] === 'true', param: m[3] }));
      assert.ok(actions.length > 0, `${path} lists its actions: ${stdout}`);
      for (const a of actions) {
        assert.ok(a.name in KNOWN_ACTIONS, `${path}: action ${a.name} is not known to be harmless`);
        if (a.name === 'quit' || !a.enabled) continue;
        const param = a.param === '' ? '[]' : a.param === 's' ? "[<'door-test'>]" : null;
        assert.ok(param, `${path}: ${a.name} takes a ${a.param} this test cannot make`);
        await gdbusCall(path, 'org.gtk.Actions.Activate', a.name, param, '{}');
        tried.push(`action ${a.name}`);
      }
    }
    // The tray icon's clicks, and every item of its menu but Quit.
    for (const path of paths.filter((p) => objects[p]['org.kde.StatusNotifierItem'])) {
      for (const method of ['Activate', 'SecondaryActivate']) {
        await gdbusCall(path, `org.kde.StatusNotifierItem.${method}`, '0', '0');
        tried.push(`tray ${method}`);
      }
    }
    let quitItem = null;
    for (const path of paths.filter((p) => objects[p]['com.canonical.dbusmenu'])) {
      const { stdout } = await gdbusCall(path, 'com.canonical.dbusmenu.GetLayout', '0', '-1', '[]');
      const items = [...stdout.matchAll(/\((\d+), \{[^}]*'label': <'([^']*)'>/g)].map((m) => ({ id: m[1], label: m[2] }));
      assert.ok(items.length > 0, `the tray menu lists its items: ${stdout}`);
      for (const item of items) {
        assert.ok(KNOWN_MENU_ITEMS.some(([re]) => re.test(item.label)), `tray item "${item.label}" is not known to be harmless`);
        if (/^Quit$/.test(item.label)) {
          quitItem = { path, id: item.id };
          continue;
        }
        await gdbusCall(path, 'com.canonical.dbusmenu.Event', item.id, 'clicked', "<''>", '0');
        tried.push(`tray item ${item.label}`);
      }
    }
    console.log(`# D-Bus doors tried with a pairing waiting: ${tried.join(', ')}`);
    assert.ok(tried.length >= 3, `the doors were tried: ${tried}`);
    assert.equal(app.crash(), null);

    // None of that decided the pairing: it is still waiting, and the person's Reject decides it.
    await atspi('press', 'Reject');
    await assert.rejects(paired, (err) => err instanceof PairingError && err.outcome === 'rejected');

    // And Quit (the tray's, else the action) does what it says, and only that.
    if (quitItem) await gdbusCall(quitItem.path, 'com.canonical.dbusmenu.Event', quitItem.id, 'clicked', "<''>", '0');
    else await gdbusCall('/io/github/chaperone/Chaperone', 'org.gtk.Actions.Activate', 'quit', '[]', '{}');
    const exit = await deadline(app.exited, { timeout: 20000, what: 'the app to quit' });
    assert.ok((exit.code === 0 && exit.signal === null) || endedCleanUnderSanitizers(app.log),
              `the app quit cleanly: ${JSON.stringify(exit)}\n${app.log.slice(-60).join('\n')}`);
  } catch (err) {
    console.log(app.log.join('\n'));
    throw err;
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
