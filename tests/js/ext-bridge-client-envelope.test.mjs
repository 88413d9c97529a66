// SPDX-License-Identifier: GPL-3.0-or-later
// The extension's bridge client: the envelope against the real engine, and a scripted engine for what it never sends.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WebSocketServer } from 'ws';
import { Keystore } from '../../extension/lib/keystore.js';
import {
  LIMITS, b64urlEncode, engineChallengeText, engineIdOf, generateKeyPair, randomId, randomNonce, signText
} from '../../extension/lib/protocol.js';
import { deadline } from '../lib/until.mjs';
import {
  untilAborted, makeBridge, sentOfType, pairApproved, connected, madeOf, engineTest
} from './bridge-client-harness.mjs';

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
