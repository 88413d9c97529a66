// SPDX-License-Identifier: GPL-3.0-or-later
// Running in the background, with the real app under the virtual display: `--background` (what
// Start at Login runs) starts with the bridge open and no window; launching Chaperone again
// brings the window; closing it leaves the app and its bridge running while "Run in background"
// is on, and quits when it is off. Windows are seen through the accessibility tree.

import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { whyNot } from './app-harness.mjs';
import {
  appEnv, appRoundTrip, bridgeAccepts, launchAgain, pressIn, startApp, waitNoWindow, waitWindow, windowsOf,
} from './desktop-harness.mjs';
import { endedCleanUnderSanitizers } from '../lib/sanitizer.mjs';
import { deadline } from '../lib/until.mjs';

test('--background starts with no window; launching again shows it; closing keeps the bridge',
     { skip: whyNot() ?? false, timeout: 120000 }, async () => {
  const home = await mkdtemp(join(tmpdir(), 'chaperone-e2e-bg-'));
  const env = appEnv(home);
  const app = await startApp(env, ['--background', '--bridge-port', '0']);
  try {
    // Listening, yet nothing on screen, and it stays up with no window to keep it. The app made
    // up its mind about a window while it handled its command line, before its main loop answers
    // anything: a round trip through that loop comes after.
    assert.ok(await bridgeAccepts(app.port), 'the bridge accepts connections');
    await appRoundTrip(env);
    assert.deepEqual(await windowsOf(app.pid), [], 'no window after --background');
    assert.ok(app.alive(), 'the app holds itself with no window');

    // A login start while it already runs changes nothing. The second process ends only once
    // this one has handled its command line.
    await launchAgain(env, ['--background']);
    await appRoundTrip(env);
    assert.deepEqual(await windowsOf(app.pid), [], '--background again shows no window');

    // Launching Chaperone again (the launcher, the command line) reaches this instance, which
    // shows its window; the second process ends at once.
    await launchAgain(env);
    await waitWindow(app.pid, 'Chaperone');

    // The person closes the window: the app and its bridge go on. Its main loop still answers
    // after the window is gone (a loop that had quit would not).
    await pressIn(app.pid, 'Close');
    await waitNoWindow(app.pid);
    await appRoundTrip(env);
    assert.ok(app.alive(), 'still running after the window closed');
    assert.ok(await bridgeAccepts(app.port), 'the bridge still accepts connections');

    // And the window comes back when asked for, on the same engine.
    await launchAgain(env);
    await waitWindow(app.pid, 'Chaperone');
    assert.ok(await bridgeAccepts(app.port));
  } catch (err) {
    console.log(app.log.join('\n'));
    throw err;
  } finally {
    await app.stop();
    await rm(home, { recursive: true, force: true });
  }
});

test('with "Run in background" off, closing the window quits',
     { skip: whyNot() ?? false, timeout: 120000 }, async () => {
  const home = await mkdtemp(join(tmpdir(), 'chaperone-e2e-bg-'));
  // The keyfile backend, so the setting can be made before the app starts.
  await mkdir(join(home, 'config', 'glib-2.0', 'settings'), { recursive: true });
  await writeFile(join(home, 'config', 'glib-2.0', 'settings', 'keyfile'),
                  '[io/github/chaperone/Chaperone]\nrun-in-background=false\n');
  const env = appEnv(home, { backend: 'keyfile' });
  const app = await startApp(env, ['--bridge-port', '0']);
  try {
    await waitWindow(app.pid, 'Chaperone');
    await pressIn(app.pid, 'Close');
    const code = await deadline(app.exited, { timeout: 15000, what: 'the app to quit when its window closed' });
    assert.ok(code === 0 || endedCleanUnderSanitizers(app.log), `the app quit cleanly when its window closed (${code})`);
    assert.equal(await bridgeAccepts(app.port), false, 'the bridge is closed');
  } catch (err) {
    console.log(app.log.join('\n'));
    throw err;
  } finally {
    await app.stop();
    await rm(home, { recursive: true, force: true });
  }
});
