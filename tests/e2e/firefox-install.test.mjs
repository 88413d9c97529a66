// SPDX-License-Identifier: GPL-3.0-or-later
// The Firefox add-on kept for good (issue 18: "without developer mode where the browser allows
// it"): Firefox ESR with unsigned add-ons allowed (xpinstall.signatures.required false, the step
// the README gives) installs the packed build, chaperone-firefox.xpi, as an ordinary add-on —
// not a temporary one from about:debugging — and it stays: Firefox quit and started again on the
// same profile brings the extension back, and it connects to the app again as the same paired
// device, with no new pairing. The app is the core engine (tests/chaperone-test-engine); Firefox is
// driven over WebDriver BiDi (firefox-harness.mjs).

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before } from 'node:test';

import { startFixtureServer } from '../fixtures/serve.mjs';
import { ENGINE_PATH, TestEngine } from '../js/engine-harness.mjs';
import { FIREFOX_XPI, Firefox, firefoxWhyNot } from './firefox-harness.mjs';
import { firefoxSuite } from './firefox-suite.mjs';

const skip = firefoxWhyNot()
  ?? (!existsSync(FIREFOX_XPI) ? `no packed add-on at ${FIREFOX_XPI} (ninja -C build)` : null)
  ?? (!ENGINE_PATH ? 'CHAPERONE_TEST_ENGINE is not set (meson sets it)' : null)
  ?? (!existsSync(ENGINE_PATH) ? `no engine harness at ${ENGINE_PATH}` : null)
  ?? false;
if (skip) console.log(`# skipped: ${skip}`);

const { W, step, teardown } = firefoxSuite({ skip, timeout: 90000 });

/**
 * How Firefox installed the extension: "development" for a temporary add-on; "sideload" for one
 * placed in the profile as the harness places it (a person's Install Add-on From File gives
 * "normal"; both are kept).
 */
const installType = (ff) => ff.ext(async () => (await chrome.management.getSelf()).installType);

before(async () => {
  if (skip) return;
  W.sites = await startFixtureServer();
  W.engine = await TestEngine.start();
}, { timeout: 60000 });

after(teardown, { timeout: 30000 });

step('the packed add-on installs as an ordinary add-on and pairs', async () => {
  W.ff = await Firefox.launch({ permanent: true });
  assert.equal(await installType(W.ff), 'sideload', 'installed for good, not as a temporary add-on');
  await W.ff.setPort(W.engine.port);
  const page = await W.ff.newPage(`${W.sites.originA}/forms.html`, 'forms');
  W.deviceId = await W.ff.pairWith(W.engine, await W.ff.popup(page));
  W.origin = W.ff.origin;
  W.profile = W.ff.profile;
  W.uuid = W.ff.uuid;
});

step('Firefox quit and started again: the add-on is still there and connects as the same device, unasked', async () => {
  const mark = W.engine.mark();
  await W.ff.close({ keepProfile: true });
  await W.engine.waitFor({ event: 'device-offline', deviceId: W.deviceId }, { after: mark, timeoutMs: 20000 });

  const again = W.engine.mark();
  W.ff = await Firefox.launch({ permanent: true, profile: W.profile, uuid: W.uuid });
  assert.equal(await installType(W.ff), 'sideload');
  const online = await W.engine.waitFor({ event: 'device-online' }, { after: again, timeoutMs: 30000 });
  assert.equal(online.deviceId, W.deviceId, 'the same paired browser, not a new one');
  await W.ff.waitForState('connected');
  assert.equal(W.ff.origin, W.origin);
  // Nothing asked the person to pair again.
  assert.equal(W.engine.events.slice(again).filter((e) => e.event === 'pairing').length, 0,
               'no pairing request after the restart');
});
