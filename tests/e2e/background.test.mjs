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

import { until, whyNot } from './app-harness.mjs';
import { appEnv, bridgeAccepts, launchAgain, pressIn, startApp, windowsOf } from './desktop-harness.mjs';

test('--background starts with no window; launching again shows it; closing keeps the bridge',
     { skip: whyNot() ?? false, timeout: 120000 }, async () => {
  const home = await mkdtemp(join(tmpdir(), 'chaperone-e2e-bg-'));
  const env = appEnv(home);
  const app = await startApp(env, ['--background', '--bridge-port', '0']);
  try {
    // Listening, yet nothing on screen, and it stays up with no window to keep it.
    assert.ok(await bridgeAccepts(app.port), 'the bridge accepts connections');
    await new Promise((r) => setTimeout(r, 1500));
    assert.deepEqual(await windowsOf(app.pid), [], 'no window after --background');
    assert.ok(app.alive(), 'the app holds itself with no window');

    // A login start while it already runs changes nothing.
    await launchAgain(env, ['--background']);
    await new Promise((r) => setTimeout(r, 1000));
    assert.deepEqual(await windowsOf(app.pid), [], '--background again shows no window');

    // Launching Chaperone again (the launcher, the command line) reaches this instance, which
    // shows its window; the second process ends at once.
    await launchAgain(env);
    const shown = await until(async () => (await windowsOf(app.pid)).length > 0 && windowsOf(app.pid),
                              15000);
    assert.ok(shown.includes('Chaperone'), `the main window is shown: ${shown}`);

    // The person closes the window: the app and its bridge go on.
    await pressIn(app.pid, 'Close');
    await until(async () => (await windowsOf(app.pid)).length === 0, 15000);
    await new Promise((r) => setTimeout(r, 1000));
    assert.ok(app.alive(), 'still running after the window closed');
    assert.ok(await bridgeAccepts(app.port), 'the bridge still accepts connections');

    // And the window comes back when asked for, on the same engine.
    await launchAgain(env);
    await until(async () => (await windowsOf(app.pid)).includes('Chaperone'), 15000);
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
    await until(async () => (await windowsOf(app.pid)).includes('Chaperone'), 15000);
    await pressIn(app.pid, 'Close');
    const code = await Promise.race([app.exited,
                                     new Promise((r) => setTimeout(() => r('still running'), 15000))]);
    assert.equal(code, 0, 'the app quit cleanly when its window closed');
    assert.equal(await bridgeAccepts(app.port), false, 'the bridge is closed');
  } catch (err) {
    console.log(app.log.join('\n'));
    throw err;
  } finally {
    await app.stop();
    await rm(home, { recursive: true, force: true });
  }
});
