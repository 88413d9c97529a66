// SPDX-License-Identifier: GPL-3.0-or-later
// The extension's bridge client against the real engine: pairing and connection.

import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { TestEngine } from './engine-harness.mjs';
import { ORIGIN, sentOfType, pairApproved, connected, engineTest } from './bridge-client-harness.mjs';

// ---- pairing ----

engineTest('pairing: approved in the app, the engine is pinned and the worker connects', async ({ engine, make }) => {
  const { bridge, local, keys, frames } = make();
  await bridge.start();
  assert.equal(bridge.state, 'not_paired');
  const { result } = await pairApproved(engine, bridge);
  assert.equal(result.outcome, 'approved');
  assert.equal(result.engineId, engine.engineId);

  const { pairing, installationId } = local.data;
  assert.match(installationId, /^[A-Za-z0-9_-]{22}$/);
  assert.equal(pairing.engineId, engine.engineId);
  assert.equal(pairing.deviceId, result.deviceId);
  assert.deepEqual(Object.keys(pairing.enginePublicKey).sort(), ['crv', 'kty', 'x', 'y']);
  const stored = await keys.get('device');
  assert.equal(stored.privateKey.extractable, false, 'the private key cannot be exported');
  assert.equal(stored.privateKey.type, 'private');

  const request = sentOfType(frames, 'pair_request')[0];
  assert.equal(request.installationId, installationId);
  assert.match(request.commitment, /^[A-Za-z0-9_-]{43}$/);
  assert.deepEqual(Object.keys(request.publicKey).sort(), ['crv', 'kty', 'x', 'y'], 'no ext/key_ops on the wire');

  const snap = await connected(bridge);
  assert.equal(snap.state, 'connected');
  assert.equal(snap.pairingResult.outcome, 'approved');
  const online = await engine.waitFor({ event: 'device-online', deviceId: result.deviceId });
  assert.equal(online.resumed, false);
  const device = await engine.device(result.deviceId);
  assert.equal(device.installationId, installationId);
  assert.equal(device.origin, ORIGIN);
});

engineTest('pairing: Reject in the app leaves the extension unpaired', async ({ engine, make }) => {
  const { bridge, local } = make();
  await bridge.start();
  const after = engine.mark();
  const pairing = bridge.pair();
  const prompt = await engine.waitFor({ event: 'pairing' }, { after });
  engine.reject(prompt.requestId);
  const outcome = await pairing;
  assert.equal(outcome.outcome, 'rejected');
  assert.equal(bridge.state, 'not_paired');
  assert.equal(bridge.snapshot().pairingResult.outcome, 'rejected');
  assert.equal(local.data.pairing, undefined);
  assert.deepEqual(await engine.devices(), []);
});

engineTest('pairing: an approval whose signature was tampered with is refused and nothing is pinned', async ({ engine, make }) => {
  const { bridge, local, keys, frames, timers } = make();
  await bridge.start();
  // A man in the middle changes one character of the engine's signature on its way to the popup.
  const tamper = (msg) => {
    if (msg.type !== 'pair_approved') return msg;
    const s = msg.signature;
    return { ...msg, signature: (s[0] === 'A' ? 'B' : 'A') + s.slice(1) };
  };
  const { result } = await pairApproved(engine, bridge, { tamper });
  assert.equal(result.outcome, 'bad_signature');
  assert.equal(bridge.state, 'not_paired');
  assert.equal(local.data.pairing, undefined, 'no engine is pinned');
  assert.equal(await keys.get('device'), undefined, 'the key of a refused pairing is not kept');
  // Nothing has connected with it, and nothing is scheduled that could.
  assert.equal(frames.filter((f) => f.url.endsWith('/extension')).length, 0, 'nothing connects with it');
  assert.equal(bridge.retryAt, null, 'no connection is scheduled');
  assert.deepEqual([...timers.live.values()], [], 'no timer is left to fire');
});

engineTest('pairing: nothing listening on the port is "not running on port N"', async ({ make }) => {
  const { bridge } = make({ port: 1 });
  await bridge.start();
  const outcome = await bridge.pair();
  assert.equal(outcome.outcome, 'not_running');
  assert.equal(bridge.snapshot().pairingResult.port, 1);
  assert.equal(bridge.state, 'not_paired');
});

engineTest('pairing: cancelling in the popup ends the attempt in the app', async ({ engine, make }) => {
  const { bridge } = make();
  await bridge.start();
  const after = engine.mark();
  const pairing = bridge.pair();
  const prompt = await engine.waitFor({ event: 'pairing' }, { after });
  bridge.cancelPairing();
  assert.equal((await pairing).outcome, 'cancelled');
  const ended = await engine.waitFor({ event: 'pairing-ended', requestId: prompt.requestId }, { after });
  assert.notEqual(ended.outcome, 'approved');
  assert.equal(bridge.state, 'not_paired');
});

// ---- connection ----

engineTest('connect: auth is signed, carries capabilities and grants, and hello_ack makes it online', async ({ engine, make }) => {
  const { bridge, frames } = make({ capabilities: ['browser.tabs', 'browser.context'] });
  bridge.authGrants = () => [{ grantId: 'g1', label: 'test', targets: [], scopes: ['browser.tabs.read'] }];
  await bridge.start();
  const { result } = await pairApproved(engine, bridge);
  await connected(bridge);
  const auth = sentOfType(frames, 'auth')[0];
  assert.equal(auth.deviceId, result.deviceId);
  assert.deepEqual(auth.capabilities, ['browser.context', 'browser.tabs', 'extension.info']);
  assert.equal(auth.grants[0].grantId, 'g1');
  assert.equal(auth.resumeSessionId, undefined, 'a first connection has nothing to resume');
  assert.equal((await engine.device(result.deviceId)).online, true);

  // The engine asks extension.info on every connection; the client answers it itself.
  const info = await engine.call(result.deviceId, 'extension.info', {});
  assert.equal(info.result.client, 'chaperone-extension');
  assert.equal(info.result.version, '0.1.0');
  assert.equal(info.result.browser, 'Chromium');
  assert.deepEqual(info.result.capabilities, ['browser.context', 'browser.tabs', 'extension.info']);
});

engineTest('connect: another Chaperone on the port is wrong_engine and gets no auth', async ({ engine, make, cleanups }) => {
  const { bridge, frames, states, when } = make();
  await bridge.start();
  await pairApproved(engine, bridge);
  await connected(bridge);

  const impostor = await TestEngine.start();
  cleanups.push(() => impostor.stop());
  const authsBefore = sentOfType(frames, 'auth').length;
  const impostorEvents = impostor.mark();
  bridge.getPort = async () => impostor.port;
  const statesBefore = states.length;
  await bridge.restart();
  await when(() => bridge.state === 'wrong_engine', 'the popup to say this is not the paired Chaperone');
  assert.equal(bridge.snapshot().lastError, 'wrong_engine');
  // It tries again (the slow retry), and meets the other engine again.
  await when(() => states.slice(statesBefore).filter((st) => st === 'wrong_engine').length >= 2,
             'a second attempt to end wrong_engine');
  assert.equal(sentOfType(frames, 'auth').length, authsBefore, 'no auth was sent to the other engine');
  assert.ok(!impostor.events.slice(impostorEvents).some((e) => e.event === 'device-online'));
  assert.equal(bridge.state, 'wrong_engine', 'it stays wrong_engine while retrying');

  // Pointed back at the paired app, it connects again.
  bridge.getPort = async () => engine.port;
  await bridge.restart();
  await connected(bridge);
});

engineTest('connect: a revoked device stops reconnecting and says so', async ({ engine, make }) => {
  const { bridge, frames, sockets, timers, when } = make();
  await bridge.start();
  const { result } = await pairApproved(engine, bridge);
  await connected(bridge);
  await engine.command({ cmd: 'revoke', deviceId: result.deviceId });
  await when(() => bridge.state === 'revoked', 'the popup to show revoked');
  const opened = frames.length;
  // No reconnect loop: no dial is scheduled, and no timer at all is left that could start one.
  assert.equal(bridge.retryAt, null, 'no reconnect is scheduled');
  assert.deepEqual([...timers.live.values()], [], 'no timer is left to fire');
  await when(() => sockets.every((ws) => ws.readyState === WebSocket.CLOSED), 'the revoked socket to close');
  assert.equal(bridge.state, 'revoked');
  assert.equal(frames.length, opened, 'no reconnect loop');
});
