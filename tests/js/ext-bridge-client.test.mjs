// SPDX-License-Identifier: GPL-3.0-or-later
// The extension's bridge client (extension/lib/bridge-client.js) against the real engine through the
// `chaperone-test-engine` harness: the worker's own code, given Node's `ws` as its WebSocket and
// in-memory storage, pairs, authenticates, serves and calls, chunks, reconnects and resumes. A small
// scripted engine (same protocol, our own key) covers what the real one never sends: a ninth
// request, a duplicate id, broken chunk transfers.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';

import WebSocket, { WebSocketServer } from 'ws';

import { BridgeClient } from '../../extension/lib/bridge-client.js';
import { Keystore, memoryKeyStore, memoryStorageArea } from '../../extension/lib/keystore.js';
import {
  LIMITS, b64urlEncode, engineChallengeText, engineIdOf, generateKeyPair, randomId, randomNonce, signText,
} from '../../extension/lib/protocol.js';
import { ENGINE_PATH, TestEngine } from './engine-harness.mjs';
import { deadline, watch } from '../lib/until.mjs';

const ORIGIN = 'chrome-extension://immigohjinbkkjncmhkefbfainfbcigp';
const SKIP_REASON = 'CHAPERONE_TEST_ENGINE not set: point it at build/tests/chaperone-test-engine';

/**
 * The real timers, with the ones still to fire kept in `live` (id → ms): what a client has
 * scheduled is then something a test can look at, instead of waiting to see whether it fires.
 */
function trackedTimers() {
  const live = new Map();
  return {
    live,
    setTimeout(fn, ms) {
      const id = setTimeout(() => { live.delete(id); fn(); }, ms);
      live.set(id, ms);
      return id;
    },
    clearTimeout(id) {
      live.delete(id);
      clearTimeout(id);
    },
    setInterval(fn, ms) {
      const id = setInterval(fn, ms);
      live.set(id, ms);
      return id;
    },
    clearInterval(id) {
      live.delete(id);
      clearInterval(id);
    },
    now: () => Date.now(),
  };
}

function untilAborted(signal) {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

/**
 * A BridgeClient wired as background.js wires it, but with Node's `ws` (which needs the Origin the
 * browser would set) and in-memory chrome.storage/IndexedDB. `frames` records every frame sent.
 */
function makeBridge({ port, local = memoryStorageArea(), session = memoryStorageArea(), keys = memoryKeyStore(),
  capabilities = ['browser.tabs', 'browser.context'] } = {}) {
  const frames = [];
  const sockets = [];
  const portRef = { port };
  const timers = trackedTimers();
  // Told of every state change, socket and state: what the tests wait on.
  const changes = watch();
  const bridge = new BridgeClient({
    createSocket: (url) => {
      const ws = new WebSocket(url, { origin: ORIGIN, maxPayload: LIMITS.maxFrameBytes });
      const send = ws.send.bind(ws);
      ws.send = (text) => {
        frames.push({ url, text });
        send(text);
      };
      ws.on('close', () => changes.notify());
      sockets.push(ws);
      changes.notify();
      return ws;
    },
    timers,
    origin: ORIGIN,
    keystore: new Keystore({ local, keys }),
    getPort: async () => portRef.port,
    session,
    client: 'chaperone-extension',
    version: '0.1.0',
    browser: 'Chromium',
    capabilities: () => capabilities,
    backoff: { initialMs: 50, maxMs: 400 },
  });
  const states = [];
  bridge.onStateChange = (s) => {
    states.push(s.state);
    changes.notify();
  };
  /** Resolves once `predicate()` holds, looked at on each state change and socket. */
  const when = (predicate, what, timeout = 5000) => changes.when(predicate, { timeout, what });
  return { bridge, frames, sockets, states, local, session, keys, portRef, timers, changes, when };
}

const sentOfType = (frames, type) => frames.map((f) => JSON.parse(f.text)).filter((m) => m.type === type);

/** Pairs through the popup's path, pressing Pair in the "app" when the engine shows the code. */
async function pairApproved(engine, bridge, options) {
  const after = engine.mark();
  const pairing = bridge.pair(options);
  const prompt = await engine.waitFor({ event: 'pairing' }, { after });
  await whenOf(bridge)(() => bridge.snapshot().pairing?.phase === 'pending', 'the popup to show the code');
  const shown = bridge.snapshot().pairing;
  assert.equal(bridge.state, 'pairing');
  assert.equal(shown.code, String(prompt.code).replace(/\s/g, ''), 'the app and the popup show the same code');
  assert.match(shown.display, /^\d{3} \d{3}$/);
  assert.equal(prompt.origin, ORIGIN);
  engine.approve(prompt.requestId);
  const result = await pairing;
  return { result, prompt };
}

async function connected(bridge, timeoutMs = 5000) {
  await whenOf(bridge)(() => bridge.connected, 'the bridge to be connected', timeoutMs);
  return bridge.snapshot();
}

const madeOf = new WeakMap();   // bridge → what makeBridge made with it
const whenOf = (bridge) => madeOf.get(bridge).when;

function engineTest(name, body, { timeout = 30000 } = {}) {
  test(name, { timeout }, async (t) => {
    if (!ENGINE_PATH) {
      t.skip(SKIP_REASON);
      return;
    }
    const engine = await TestEngine.start();
    const bridges = [];
    const make = (options = {}) => {
      const made = makeBridge({ port: engine.port, ...options });
      madeOf.set(made.bridge, made);
      bridges.push(made.bridge);
      return made;
    };
    const cleanups = [];
    try {
      await body({ engine, make, cleanups, t });
    } finally {
      for (const b of bridges) b.stop();
      for (const c of cleanups) await c();
      await engine.stop();
    }
  });
}

/** Starts the harness on a given port and data dir (the app restarting with its identity). */
async function startEngineAt({ port, dataDir, heartbeatMs }) {
  const args = ['--port', String(port), '--data-dir', dataDir];
  if (heartbeatMs !== undefined) args.push('--heartbeat-ms', String(heartbeatMs));
  const child = spawn(ENGINE_PATH, args, { detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  const engine = new TestEngine(child, dataDir);
  const listening = await engine.waitFor({ event: 'listening' }, { timeoutMs: 10000 });
  engine.port = listening.port;
  engine.engineId = listening.engineId;
  return engine;
}

async function quitKeepingData(engine) {
  const exited = new Promise((r) => engine.child.once('exit', r));
  engine.send({ cmd: 'quit' });
  await exited;
}

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

// ---- envelope ----

engineTest('envelope: requests both ways, errors keep their code, events carry a rising sequence', async ({ engine, make }) => {
  const { bridge } = make();
  await bridge.start();
  const { result } = await pairApproved(engine, bridge);
  await connected(bridge);
  bridge.onRequest = async (method, params) => {
    if (method === 'browser.fail') throw Object.assign(new Error('the tab navigated'), { code: 'stale_document' });
    if (method === 'browser.crash') throw new TypeError('secret page text in a message');
    return { method, params };
  };
  const echo = await engine.call(result.deviceId, 'browser.tabs', { a: 1 });
  assert.deepEqual(echo.result, { method: 'browser.tabs', params: { a: 1 } });
  const failed = await engine.call(result.deviceId, 'browser.fail', {});
  assert.equal(failed.error.code, 'stale_document');
  const crashed = await engine.call(result.deviceId, 'browser.crash', {});
  assert.equal(crashed.error.code, 'internal');
  assert.doesNotMatch(crashed.error.message, /secret/, 'an unexpected exception says nothing of the page');

  const info = await bridge.request('engine.info');
  assert.equal(info.engineId, engine.engineId);
  assert.equal(info.deviceId, result.deviceId);
  await assert.rejects(bridge.request('engine.nope'), { code: 'unknown_method' });

  const s1 = bridge.sendEvent('grant.changed', { grants: [], reason: 'created', grantId: 'g1' });
  const s2 = bridge.sendEvent('stop.changed', { stopped: true, source: 'popup', at: Date.now() });
  assert.equal(s2, s1 + 1);
  const e2 = await engine.waitFor({ event: 'ext-event', sequence: s2 });
  assert.equal(e2.name, 'stop.changed');
});

engineTest('envelope: cancel from the app reaches the handler\'s AbortSignal', async ({ engine, make }) => {
  const { bridge } = make();
  await bridge.start();
  const { result } = await pairApproved(engine, bridge);
  await connected(bridge);
  let reached;
  const started = new Promise((r) => { reached = r; });
  let sawAbort;
  const aborted = new Promise((r) => { sawAbort = r; });
  bridge.onRequest = async (method, params, { signal }) => {
    if (method === 'extension.grants') return { grants: [] }; // asked on every connection
    reached();
    try {
      return await untilAborted(signal);
    } catch (err) {
      sawAbort(err);
      throw err;
    }
  };
  const call = engine.startCall(result.deviceId, 'browser.context', {}, { timeoutMs: 10000 });
  await deadline(started, { what: 'the call to reach the handler' });
  engine.send({ cmd: 'cancel', tag: call.tag });
  assert.equal((await call.reply).error?.code, 'cancelled');
  assert.equal((await deadline(aborted, { what: 'the handler to see the abort' })).code, 'cancelled');
});

engineTest('envelope: eight engine calls run at once; the engine holds the ninth until one ends', async ({ engine, make }) => {
  const { bridge, changes, when } = make();
  await bridge.start();
  const { result } = await pairApproved(engine, bridge);
  await connected(bridge);
  let started = 0;
  const gates = [];
  bridge.onRequest = async (method, params) => {
    // The engine asks every new connection for its grants; that call must not take a gate (it
    // would hold one of the eight slots, and the ninth call's gate would come after the release).
    if (method !== 'browser.slow') return { grants: [] };
    started++;
    changes.notify();
    await new Promise((release) => gates.push(release));
    return { n: params.n };
  };
  const calls = Array.from({ length: 9 }, (_, n) => engine.startCall(result.deviceId, 'browser.slow', { n }, { timeoutMs: 15000 }));
  await when(() => started === 8, 'eight calls to reach the handler');
  gates.shift()();
  await when(() => started === 9, 'the ninth to go out once a slot freed');
  while (gates.length) gates.shift()();
  const replies = await Promise.all(calls.map((c) => c.reply));
  replies.forEach((r, n) => assert.deepEqual(r.result, { n }, `call ${n}: ${JSON.stringify(r)} started=${started}`));
  assert.equal(bridge.stats.maxEngineInFlight, 8);
  assert.equal(bridge.stats.busyAnswered, 0);
});

engineTest('chunking: a result over 512 KiB and a 1 MiB parameter cross whole', async ({ engine, make }) => {
  const { bridge, frames } = make();
  await bridge.start();
  const { result } = await pairApproved(engine, bridge);
  await connected(bridge);
  const unit = 'abc é 😀 ';
  const big = unit.repeat(Math.ceil((1.5 * 1024 * 1024) / Buffer.byteLength(unit)));
  bridge.onRequest = async (method, params) => {
    if (method === 'browser.context') return { text: big };
    return { bytes: Buffer.byteLength(params.blob), same: params.blob === big.slice(0, params.blob.length) };
  };
  const reply = await engine.call(result.deviceId, 'browser.context', {}, { timeoutMs: 15000 });
  assert.equal(reply.result?.text, big, 'the 1.5 MiB response arrived whole');
  const chunks = sentOfType(frames, 'chunk');
  assert.ok(chunks.length >= 6, `the response went as chunks (${chunks.length})`);
  assert.ok(frames.every((f) => Buffer.byteLength(f.text) <= LIMITS.maxFrameBytes), 'no frame over 640 KiB');

  const blob = big.slice(0, 1024 * 1024);
  const echoed = await engine.call(result.deviceId, 'browser.eval', { blob }, { timeoutMs: 15000 });
  assert.deepEqual(echoed.result, { bytes: Buffer.byteLength(blob), same: true });

  const info = await bridge.request('engine.info', { blob });
  assert.equal(info.engineId, engine.engineId, 'a chunked request from the extension is answered');

  // Over 16 MiB the engine gets an answer anyway: too_large, not a hung call.
  bridge.onRequest = async () => ({ text: 'x'.repeat(LIMITS.maxMessageBytes + 10) });
  const tooBig = await engine.call(result.deviceId, 'browser.context', {}, { timeoutMs: 15000 });
  assert.equal(tooBig.error?.code, 'too_large');
});

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

// ---- a scripted engine for what the real one never sends ----

/**
 * Speaks the engine side of §5 with its own key; the test pins that key in the extension's storage
 * as a pairing would, then drives frames by hand.
 */
async function scriptedEngine() {
  const engineKeys = await generateKeyPair();
  const engineId = await engineIdOf(engineKeys.jwk);
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((r) => server.once('listening', r));
  const peers = [];
  server.on('connection', async (ws) => {
    const peer = { ws, inbox: [], waiters: [] };
    peers.push(peer);
    ws.on('message', (data) => {
      const msg = JSON.parse(data.toString());
      const waiter = peer.waiters.findIndex((w) => w.match(msg));
      if (waiter >= 0) peer.waiters.splice(waiter, 1)[0].resolve(msg);
      else peer.inbox.push(msg);
    });
    const challenge = {
      type: 'challenge', protocol: 1, engineId, engineInstanceId: randomId(), connectionId: randomId(),
      challenge: randomNonce(), timestamp: Date.now(),
    };
    challenge.signature = await signText(engineKeys.privateKey, engineChallengeText(challenge));
    ws.send(JSON.stringify(challenge));
    const auth = await peerNext(peer, (m) => m.type === 'auth');
    ws.send(JSON.stringify({
      type: 'hello_ack', protocol: 1, engineId, engineInstanceId: challenge.engineInstanceId,
      connectionId: challenge.connectionId, sessionId: randomId(), deviceId: auth.deviceId, resumed: false,
      lastSequence: 0, limits: { ...LIMITS },
    }));
  });
  return {
    port: server.address().port,
    pinning: { deviceId: randomId(), engineId, enginePublicKey: engineKeys.jwk, pairedAt: Date.now() },
    peer: () => peers.at(-1),
    close: () => new Promise((r) => {
      for (const p of peers) p.ws.terminate();
      server.close(r);
    }),
  };
}

function peerNext(peer, match, timeoutMs = 5000) {
  const i = peer.inbox.findIndex(match);
  if (i >= 0) return Promise.resolve(peer.inbox.splice(i, 1)[0]);
  const waiter = { match };
  const next = new Promise((resolve) => { waiter.resolve = resolve; });
  peer.waiters.push(waiter);
  return deadline(next, { timeout: timeoutMs, what: `a frame from the extension matching ${match}` })
    .finally(() => { const w = peer.waiters.indexOf(waiter); if (w >= 0) peer.waiters.splice(w, 1); });
}

async function withScriptedEngine(body) {
  const fake = await scriptedEngine();
  const made = makeBridge({ port: fake.port });
  madeOf.set(made.bridge, made);
  const keystore = new Keystore({ local: made.local, keys: made.keys });
  await keystore.save(await generateKeyPair(), fake.pinning);
  try {
    await made.bridge.start();
    await connected(made.bridge);
    await body({ fake, peer: fake.peer(), ...made });
  } finally {
    made.bridge.stop();
    await fake.close();
  }
}

test('envelope: a ninth concurrent request is answered busy, a duplicate id duplicate_id', async () => {
  await withScriptedEngine(async ({ bridge, peer }) => {
    const gates = [];
    bridge.onRequest = () => new Promise((release) => gates.push(release));
    for (let n = 1; n <= 9; n++) {
      peer.ws.send(JSON.stringify({ type: 'request', id: `e${n}`, method: 'browser.slow', params: {}, timeoutMs: 5000 }));
    }
    const busy = await peerNext(peer, (m) => m.type === 'response' && m.id === 'e9');
    assert.equal(busy.error.code, 'busy');
    assert.equal(gates.length, 8, 'eight reached the handler');
    peer.ws.send(JSON.stringify({ type: 'request', id: 'e3', method: 'browser.slow', params: {}, timeoutMs: 5000 }));
    const dup = await peerNext(peer, (m) => m.type === 'response' && m.id === 'e3');
    assert.equal(dup.error.code, 'duplicate_id');
    gates.forEach((g, i) => g({ i }));
    const done = await peerNext(peer, (m) => m.type === 'response' && m.id === 'e3' && m.result);
    assert.ok(done.result, 'the original e3 still completes once');
  });
});

test('envelope: pings are answered with the same sequence and timestamp', async () => {
  await withScriptedEngine(async ({ peer }) => {
    peer.ws.send(JSON.stringify({ type: 'ping', sequence: 7, timestamp: 1234 }));
    const pong = await peerNext(peer, (m) => m.type === 'pong');
    assert.equal(pong.sequence, 7);
    assert.equal(pong.timestamp, 1234);
    assert.ok(Number.isSafeInteger(pong.replyTimestamp));
  });
});

test('chunking: gaps, duplicates, wrong totals, oversize and too many transfers get error frames', async () => {
  await withScriptedEngine(async ({ bridge, peer }) => {
    bridge.onRequest = async (method, params) => ({ got: params.pad.length });
    const bytes = Buffer.from(JSON.stringify({ type: 'request', id: 'big', method: 'm', params: { pad: 'y'.repeat(600000) }, timeoutMs: 5000 }));
    const size = LIMITS.chunkSize;
    const total = Math.ceil(bytes.length / size);
    const chunk = (transferId, index, extra = {}) => JSON.stringify({
      type: 'chunk', transferId, index, total, originalBytes: bytes.length,
      data: b64urlEncode(bytes.subarray(index * size, (index + 1) * size)), ...extra,
    });
    const errorFor = (transferId) => peerNext(peer, (m) => m.type === 'error' && m.transferId === transferId);

    peer.ws.send(chunk('gap', 0));
    peer.ws.send(chunk('gap', 2));
    assert.equal((await errorFor('gap')).code, 'invalid_params');
    peer.ws.send(chunk('dup', 0));
    peer.ws.send(chunk('dup', 0));
    assert.equal((await errorFor('dup')).code, 'invalid_params');
    peer.ws.send(chunk('total', 0, { total: total + 1 }));
    assert.equal((await errorFor('total')).code, 'invalid_params');
    peer.ws.send(chunk('huge', 0, { originalBytes: LIMITS.maxMessageBytes + 1, total: Math.ceil((LIMITS.maxMessageBytes + 1) / size) }));
    assert.equal((await errorFor('huge')).code, 'too_large');

    // The connection still works: a whole transfer is reassembled and answered.
    for (let i = 0; i < total; i++) peer.ws.send(chunk('good', i));
    const answer = await peerNext(peer, (m) => m.type === 'response' && m.id === 'big');
    assert.deepEqual(answer.result, { got: 600000 });

    for (let n = 0; n < 8; n++) peer.ws.send(chunk(`open${n}`, 0));
    peer.ws.send(chunk('ninth', 0));
    assert.equal((await errorFor('ninth')).code, 'busy');
  });
});

test('connect: the badge states follow the connection', async () => {
  await withScriptedEngine(async ({ bridge, states }) => {
    assert.equal(bridge.state, 'connected');
    assert.ok(states.includes('connecting'));
  });
});
