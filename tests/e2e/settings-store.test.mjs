// SPDX-License-Identifier: GPL-3.0-or-later
// What decides how much agents see — the pages they never see or may only read, the longest
// result — is the person's, in the app's own 0600 store: another program of the user rewriting
// GSettings (`gsettings set`) changes nothing, and an older version's GSettings values are carried
// over once. The real app under the virtual display, its Preferences read through the
// accessibility tree.

import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { run, whyNot } from './app-harness.mjs';
import { appEnv, labelsOf, pressIn, startApp, waitNoWindow, waitWindow } from './desktop-harness.mjs';

const SCHEMA = 'io.github.chaperone.Chaperone';

async function openPreferences(app) {
  await run('gdbus', ['call', '--session', '--dest', SCHEMA, '--object-path',
                      '/io/github/chaperone/Chaperone', '--method', 'org.gtk.Actions.Activate',
                      'preferences', '[]', '{}'], { timeout: 10000 });
  await waitWindow(app.pid, 'Preferences');
  return labelsOf(app.pid);
}

async function closePreferences(app) {
  await pressIn(app.pid, 'Close');
  await waitNoWindow(app.pid, 'Preferences');
}

test('the floor lists live in the store: imported once from GSettings, then deaf to it',
     { skip: whyNot() ?? false, timeout: 180000 }, async () => {
  const home = await mkdtemp(join(tmpdir(), 'chaperone-e2e-settings-'));
  // What an older version left in GSettings (the keyfile backend, so it is there before start).
  await mkdir(join(home, 'config', 'glib-2.0', 'settings'), { recursive: true });
  await writeFile(join(home, 'config', 'glib-2.0', 'settings', 'keyfile'),
                  "[io/github/chaperone/Chaperone]\nfloor-blind=['mail.example.com']\n");
  const env = appEnv(home, { backend: 'keyfile' });
  const gsettings = (...args) => run('gsettings', args, { env, timeout: 10000 });

  let app = await startApp(env, ['--background', '--bridge-port', '0']);
  try {
    let labels = await openPreferences(app);
    assert.ok(labels.includes('mail.example.com'), `the old entry was carried over: ${labels}`);
    // Carried over once: GSettings no longer holds it, and nothing reads it any more.
    assert.equal((await gsettings('get', SCHEMA, 'floor-blind')).stdout.trim(), '@as []');
    await closePreferences(app);

    // Another program of the person's rewrites GSettings to weaken the floor.
    await gsettings('set', SCHEMA, 'floor-blind', '[]');
    await gsettings('set', SCHEMA, 'floor-hands-only', "['other.example']");
    await gsettings('set', SCHEMA, 'agent-result-max-chars', '100000');
    labels = await openPreferences(app);
    assert.ok(labels.includes('mail.example.com'), `the person's entry is still there: ${labels}`);
    assert.ok(!labels.includes('other.example'), `GSettings changed the floor: ${labels}`);
    await closePreferences(app);

    // And it is still there after the app starts again: it is the store's, not the process's.
    await app.stop();
    app = await startApp(env, ['--background', '--bridge-port', '0']);
    labels = await openPreferences(app);
    assert.ok(labels.includes('mail.example.com'), `kept across a restart: ${labels}`);
    assert.ok(!labels.includes('other.example'), `GSettings was imported again: ${labels}`);
  } catch (err) {
    console.log(app.log.join('\n'));
    throw err;
  } finally {
    await app.stop();
    await rm(home, { recursive: true, force: true });
  }
});
