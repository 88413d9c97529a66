// SPDX-License-Identifier: GPL-3.0-or-later
// Bridge protocol against the real engine: sessions and routing.

import assert from 'node:assert/strict';
import { deadline } from '../lib/until.mjs';
import {
  ORIGIN_A, ORIGIN_B, ORIGIN_FIREFOX, drained, untilAborted, pairApproved, connectOnline,
  closeCodeOf, bridgeTest
} from './bridge-harness.mjs';

// ---- sessions and routing ----

bridgeTest('resume: a restarted service worker gets its session back, and waiting calls reach it', async ({ engine, makeClient }) => {
  const client = makeClient();
  const { deviceId } = await pairApproved(engine, client);
  const first = await connectOnline(engine, client);
  client.emitEvent('tab.updated', { n: 1 });
  client.emitEvent('tab.updated', { n: 2 });
  await engine.waitFor({ event: 'ext-event', deviceId, sequence: 2 });

  const offline = engine.mark();
  await client.close(1001); // what Chrome sends when it stops the worker
  await engine.waitFor({ event: 'device-offline', deviceId }, { after: offline });

  // A call made while the worker is away waits for it instead of failing.
  client.onRequest(async (method) => ({ answeredAfterResume: method }));
  const call = engine.startCall(deviceId, 'browser.tabs', {}, { timeoutMs: 8000 });
  // The harness reads commands in order: once it answers this one, the call above is waiting.
  await engine.devices();

  const online = engine.mark();
  const second = await client.connect({ resumeSessionId: first.sessionId });
  assert.equal(second.resumed, true);
  assert.equal(second.sessionId, first.sessionId);
  assert.equal(second.lastSequence, 2, 'the engine says which events it already has');
  assert.notEqual(second.connectionId, first.connectionId);
  const event = await engine.waitFor({ event: 'device-online', deviceId }, { after: online });
  assert.equal(event.resumed, true);
  assert.deepEqual((await call.reply).result, { answeredAfterResume: 'browser.tabs' });

  // A resume id that is not this device's session starts a fresh one.
  await client.close(1001);
  const third = await client.connect({ resumeSessionId: 'AAAAAAAAAAAAAAAAAAAAAA' });
  assert.equal(third.resumed, false);
  assert.notEqual(third.sessionId, first.sessionId);
});

bridgeTest('resume: a call in flight when the socket drops fails device_offline and is never re-sent', async ({ engine, makeClient }) => {
  const client = makeClient();
  const { deviceId } = await pairApproved(engine, client);
  const first = await connectOnline(engine, client);
  let clicks = 0;
  let reached;
  const reachedClick = new Promise((r) => { reached = r; });
  client.onRequest(async (method, params, { signal }) => {
    if (method === 'browser.tabs') return { tabs: [] };
    clicks++;
    reached();
    return untilAborted(signal);
  });
  const call = engine.startCall(deviceId, 'browser.node.action', { action: 'click' }, { timeoutMs: 8000 });
  await deadline(reachedClick, { what: 'the click to reach the extension' });
  await client.terminate();
  assert.equal((await call.reply).error?.code, 'device_offline');

  await client.connect({ resumeSessionId: first.sessionId });
  // A replay would be sent as the session resumes, before anything asked after it.
  assert.deepEqual((await engine.call(deviceId, 'browser.tabs', {})).result, { tabs: [] });
  await drained(engine, client);
  assert.equal(clicks, 1, 'the click is not replayed on the resumed session');
});

bridgeTest('resume: a newer connection of the same device replaces the older one (4409)', async ({ engine, makeClient }) => {
  const older = makeClient();
  const { deviceId } = await pairApproved(engine, older);
  const first = await connectOnline(engine, older);
  const newer = makeClient({ installationId: older.installationId, keys: older.keys, pinned: older.pinned });
  newer.onRequest(async () => 'newer');
  older.onRequest(async () => 'older');
  const second = await newer.connect({ resumeSessionId: first.sessionId });
  assert.equal(await closeCodeOf(older, 3000), 4409);
  assert.equal(second.sessionId, first.sessionId);
  assert.equal((await engine.call(deviceId, 'browser.tabs', {})).result, 'newer');
});

bridgeTest('routing: two browsers online at once each get only their own calls', async ({ engine, makeClient }) => {
  const chrome = makeClient({ origin: ORIGIN_A });
  const edge = makeClient({ origin: ORIGIN_B, browser: 'edge' });
  const a = await pairApproved(engine, chrome);
  const b = await pairApproved(engine, edge);
  assert.notEqual(a.deviceId, b.deviceId);
  await connectOnline(engine, chrome);
  await connectOnline(engine, edge);
  chrome.onRequest(async (method, params) => ({ who: 'chrome', params }));
  edge.onRequest(async (method, params) => ({ who: 'edge', params }));

  const [toA, toB] = await Promise.all([
    engine.call(a.deviceId, 'browser.tabs', { q: 1 }),
    engine.call(b.deviceId, 'browser.tabs', { q: 2 }),
  ]);
  assert.deepEqual(toA.result, { who: 'chrome', params: { q: 1 } });
  assert.deepEqual(toB.result, { who: 'edge', params: { q: 2 } });

  const listed = await engine.devices();
  assert.equal(listed.filter((d) => d.online).length, 2);

  // Paired but never connected, and never paired at all: neither has a session, so both fail at
  // once instead of waiting, and nothing is routed to the browsers that are online.
  const absent = makeClient({ origin: ORIGIN_FIREFOX });
  const c = await pairApproved(engine, absent);
  let misrouted = 0;
  chrome.onRequest(async () => { misrouted++; });
  edge.onRequest(async () => { misrouted++; });
  const offline = await engine.call(c.deviceId, 'browser.tabs', {});
  assert.equal(offline.error?.code, 'device_offline', 'a paired device with no session fails at once');
  const unknown = await engine.call('AAAAAAAAAAAAAAAAAAAAAA', 'browser.tabs', {});
  assert.equal(unknown.error?.code, 'not_paired', 'an unknown device is not paired');
  assert.equal(misrouted, 0, 'never routed to another device');
});
