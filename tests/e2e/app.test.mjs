// End to end with the real app: Chaperone starts under a virtual display, a browser (the Node
// test client, signing with WebCrypto as the extension does) asks to pair, a person compares the
// code and presses Pair through the accessibility tree, then requests flow both ways, and the
// person revokes the browser from the window. Also: pressing Reject.

import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { ChaperoneClient, PairingError } from '../js/chaperone-client.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const driver = join(here, 'atspi-driver.py');
const APP = process.env.CHAPERONE_APP ? resolve(process.env.CHAPERONE_APP) : null;
const ORIGIN = 'chrome-extension://abcdefghijklmnopabcdefghijklmnop';
const run = promisify(execFile);

function whyNot() {
  if (!APP) return 'CHAPERONE_APP is not set (meson sets it when the UI is built)';
  if (!process.env.DISPLAY) return 'no DISPLAY: run under xvfb-run';
  if (!process.env.DBUS_SESSION_BUS_ADDRESS) return 'no session bus: run under dbus-run-session';
  return null;
}

async function atspi(...args) {
  // Debian's Python: it has the GObject bindings for AT-SPI, whatever else is first on PATH.
  const { stdout } = await run('/usr/bin/python3', [driver, ...args], { timeout: 30000 });
  return stdout.trim();
}

/** Starts the app on an ephemeral port with private XDG folders; resolves once it listens. */
async function startApp() {
  const home = await mkdtemp(join(tmpdir(), 'chaperone-e2e-'));
  const env = {
    ...process.env,
    GDK_BACKEND: 'x11',
    GSETTINGS_BACKEND: 'memory',
    XDG_DATA_HOME: join(home, 'data'),
    XDG_CONFIG_HOME: join(home, 'config'),
    XDG_CACHE_HOME: join(home, 'cache'),
    LANGUAGE: 'en',
    LC_ALL: 'C.UTF-8',
  };
  // The accessibility bridge is what the person's tools use; the unit tests turn it off.
  delete env.NO_AT_BRIDGE;
  delete env.GTK_A11Y;

  const child = spawn(APP, ['--bridge-port', '0'], { env, detached: true,
                                                      stdio: ['ignore', 'pipe', 'pipe'] });
  const log = [];
  const port = await new Promise((resolvePort, reject) => {
    const timer = setTimeout(() => reject(new Error(`the app did not listen:\n${log.join('\n')}`)),
                             20000);
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (line) => {
        log.push(line);
        const m = /bridge: listening on 127\.0\.0\.1:(\d+)/.exec(line);
        if (m) {
          clearTimeout(timer);
          resolvePort(Number(m[1]));
        }
      });
    }
    child.on('exit', (code, signal) => {
      log.push(`[the app exited: ${code ?? signal}]`);
      reject(new Error(`the app exited (${code ?? signal}):\n${log.join('\n')}`));
    });
  });

  return {
    port,
    log,
    async stop() {
      try { process.kill(-child.pid, 'SIGTERM'); } catch { /* already gone */ }
      await new Promise((r) => { child.once('exit', r); setTimeout(r, 3000); });
      try { process.kill(-child.pid, 'SIGKILL'); } catch { /* already gone */ }
      await rm(home, { recursive: true, force: true });
    },
  };
}

const display = (code) => `${code.slice(0, 3)} ${code.slice(3)}`;

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
    const dangerous = exported.filter((name) => /pair|approv|reject|revok|resume|grant/i.test(name));
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

async function until(get, timeoutMs = 10000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = get();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}
