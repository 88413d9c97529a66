// SPDX-License-Identifier: GPL-3.0-or-later
// The extension's bridge client against the real engine: reconnect and resume.

import assert from 'node:assert/strict';
import { memoryKeyStore, memoryStorageArea } from '../../extension/lib/keystore.js';
import {
  sentOfType, pairApproved, connected, whenOf, engineTest, startEngineAt, quitKeepingData
} from './bridge-client-harness.mjs';

// ---- reconnect and resume ----

engineTest('reconnect: after the app restarts on the same port the worker comes back by itself', async ({ engine, make, cleanups }) => {
  const { bridge, sockets, when } = make();
  await bridge.start();
  const { result } = await pairApproved(engine, bridge);
  const first = await connected(bridge);

  await quitKeepingData(engine);
  await when(() => bridge.state === 'connecting', 'the popup to show connecting');
  // A few dials while the app is away, each refused.
  const dialled = sockets.length;
  await when(() => sockets.length >= dialled + 2 && bridge.snapshot().lastError === 'not_running',
             'two more dials to find nothing listening');
  assert.equal(bridge.snapshot().lastError, 'not_running');

  const restarted = await startEngineAt({ port: engine.port, dataDir: engine.dataDir });
  cleanups.push(() => restarted.stop());
  assert.equal(restarted.engineId, engine.engineId, 'the app kept its identity');
  const online = await restarted.waitFor({ event: 'device-online', deviceId: result.deviceId }, { timeoutMs: 5000 });
  const second = await connected(bridge);
  assert.notEqual(second.session.connectionId, first.session.connectionId);
  assert.equal(online.resumed, false, 'a new app process has no session to resume');
  bridge.onRequest = async () => ({ back: true });
  assert.deepEqual((await restarted.call(result.deviceId, 'browser.tabs', {})).result, { back: true });
});

engineTest('stop: a Stop outlives the app quitting, and a browser that connects while stopped is told at once', async ({ engine, make, cleanups }) => {
  const { bridge, changes, when } = make();
  await bridge.start();
  const { result } = await pairApproved(engine, bridge);
  await connected(bridge);
  const told = [];
  bridge.onRequest = async (method) => {
    told.push(method);
    changes.notify();
    return { ok: true };
  };
  assert.equal((await engine.command({ cmd: 'stop-all' })).result.stopped, true);
  await when(() => told.includes('extension.stop'), 'the connected browser to be told');

  // Quit and start again (what D-Bus activation does for any agent): still stopped, before any
  // browser is back, and the browser is told as soon as it connects.
  await quitKeepingData(engine);
  told.length = 0;
  const restarted = await startEngineAt({ port: engine.port, dataDir: engine.dataDir });
  cleanups.push(() => restarted.stop());
  assert.equal(restarted.events.find((e) => e.event === 'listening').stopped, true);
  await when(() => told.includes('extension.stop'), 'the browser to be told when it connects', 10000);
  assert.equal(told[0], 'extension.stop', 'the stop is the first thing it hears');
  const refused = await restarted.command({
    cmd: 'agent-call', deviceId: result.deviceId, method: 'browser.tabs', params: {},
  });
  assert.equal(refused.error?.code, 'stopped');

  // Only the person's Resume lifts it, and that too outlives a restart.
  assert.equal((await restarted.command({ cmd: 'resume-all' })).result.stopped, false);
  await quitKeepingData(restarted);
  const again = await startEngineAt({ port: engine.port, dataDir: engine.dataDir });
  cleanups.push(() => again.stop());
  assert.equal(again.events.find((e) => e.event === 'listening').stopped, false);
});

engineTest('reconnect: a dropped socket is redialled and the session resumes', async ({ engine, make }) => {
  const { bridge, sockets } = make();
  await bridge.start();
  const { result } = await pairApproved(engine, bridge);
  const first = await connected(bridge);
  // The engine's report of this first connection may still be on its way (its stdout is read
  // as it comes): taken for the reconnection's, it said resumed:false on a loaded machine.
  await engine.waitFor({ event: 'device-online', deviceId: result.deviceId, resumed: false });
  const offline = engine.mark();
  sockets.at(-1).terminate(); // the network drops without a close frame
  const gone = await engine.waitFor({ event: 'device-offline', deviceId: result.deviceId }, { after: offline });
  const online = await engine.waitFor({ event: 'device-online', deviceId: result.deviceId },
                                      { after: engine.events.indexOf(gone) + 1 });
  assert.equal(online.resumed, true);
  const second = await connected(bridge);
  assert.equal(second.session.sessionId, first.session.sessionId);
  assert.equal(second.session.resumed, true);
});

engineTest('resume: a restarted service worker resumes its session and goes on counting events', async ({ engine, make }) => {
  const local = memoryStorageArea();
  const session = memoryStorageArea();
  const keys = memoryKeyStore();
  const first = make({ local, session, keys });
  await first.bridge.start();
  const { result } = await pairApproved(engine, first.bridge);
  const before = await connected(first.bridge);
  first.bridge.sendEvent('tab.updated', { n: 1 });
  first.bridge.sendEvent('tab.updated', { n: 2 });
  await engine.waitFor({ event: 'ext-event', sequence: 2 });
  assert.equal(session.data.sessionId, before.session.sessionId);
  assert.equal(session.data.lastSequence, 2);

  // Chrome stops the worker: its memory is gone, chrome.storage.session and IndexedDB are not.
  const offline = engine.mark();
  first.bridge.stop();
  await engine.waitFor({ event: 'device-offline', deviceId: result.deviceId }, { after: offline });
  const call = engine.startCall(result.deviceId, 'browser.tabs', {}, { timeoutMs: 8000 });

  const second = make({ local, session, keys });
  second.bridge.onRequest = async (method) => ({ answeredAfterResume: method });
  await second.bridge.start();
  const after = await connected(second.bridge);
  assert.equal(after.session.resumed, true);
  assert.equal(after.session.sessionId, before.session.sessionId);
  assert.equal(after.session.lastSequence, 2);
  assert.equal(sentOfType(second.frames, 'auth')[0].resumeSessionId, before.session.sessionId);
  assert.deepEqual((await call.reply).result, { answeredAfterResume: 'browser.tabs' });
  assert.equal(second.bridge.sendEvent('tab.updated', { n: 3 }), 3, 'the sequence goes on across the restart');
  await engine.waitFor({ event: 'ext-event', sequence: 3 });
});

engineTest('resume: events sent while the app was away reach it on the next connection', async ({ engine, make, cleanups }) => {
  const { bridge } = make();
  await bridge.start();
  const { result } = await pairApproved(engine, bridge);
  await connected(bridge);
  await quitKeepingData(engine);
  await whenOf(bridge)(() => !bridge.connected, 'the worker to see the app go');
  const seq = bridge.sendEvent('stop.changed', { stopped: true, source: 'esc', at: Date.now() });
  const restarted = await startEngineAt({ port: engine.port, dataDir: engine.dataDir });
  cleanups.push(() => restarted.stop());
  const event = await restarted.waitFor({ event: 'ext-event', deviceId: result.deviceId, sequence: seq });
  assert.equal(event.name, 'stop.changed');
});

engineTest('unpair: forgets key and engine, keeps installationId, closes the connection', async ({ engine, make }) => {
  const { bridge, local, keys } = make();
  await bridge.start();
  const { result } = await pairApproved(engine, bridge);
  await connected(bridge);
  const { installationId } = local.data;
  const offline = engine.mark();
  await bridge.unpair();
  assert.equal(bridge.state, 'not_paired');
  assert.equal(local.data.pairing, undefined);
  assert.equal(await keys.get('device'), undefined);
  assert.equal(local.data.installationId, installationId);
  await engine.waitFor({ event: 'device-offline', deviceId: result.deviceId }, { after: offline });

  // Pairing again from the same installation rotates the key of the same device.
  const again = await pairApproved(engine, bridge);
  assert.equal(again.result.deviceId, result.deviceId);
  await connected(bridge);
});
