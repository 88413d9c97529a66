// SPDX-License-Identifier: GPL-3.0-or-later
// Bridge protocol against the real engine: the request/event/ping envelope and chunking.

import assert from 'node:assert/strict';
import { isErrorCode } from '../../extension/lib/protocol-errors.js';
import { ChaperoneError } from './chaperone-client.mjs';
import { deadline, once, watch } from '../lib/until.mjs';
import { LIMITS } from '../../extension/lib/protocol.js';
import {
  drained, untilAborted, pairApproved, connectOnline, closeCodeOf, bridgeTest
} from './bridge-harness.mjs';

// ---- envelope ----

bridgeTest('envelope: requests go both ways and errors keep their code', async ({ engine, makeClient }) => {
  const client = makeClient();
  const { deviceId } = await pairApproved(engine, client);
  const ack = await connectOnline(engine, client);
  const seen = [];
  client.onRequest(async (method, params) => {
    seen.push({ method, params });
    if (method === 'browser.node.action') throw new ChaperoneError('stale_node', 'that node is gone', { ref: params.ref });
    return { tabs: [{ id: 7, title: 'Inbox' }] };
  });

  const reply = await engine.call(deviceId, 'browser.tabs', { all: true });
  assert.deepEqual(reply.result, { tabs: [{ id: 7, title: 'Inbox' }] });
  assert.deepEqual(seen[0], { method: 'browser.tabs', params: { all: true } });

  const failed = await engine.call(deviceId, 'browser.node.action', { ref: 'e12' });
  assert.equal(failed.error?.code, 'stale_node', 'the page-side error reaches the agent unchanged');

  const info = await client.request('engine.info');
  assert.equal(info.engineId, engine.engineId);
  assert.equal(info.engineInstanceId, ack.engineInstanceId);
  assert.equal(info.deviceId, deviceId);
  assert.equal(typeof info.version, 'string');
  assert.equal(typeof info.deviceName, 'string');
  assert.equal(info.defaultGrantMinutes, 15, 'the grant duration the app offers by default');

  await assert.rejects(client.request('engine.nonsense'), { code: 'unknown_method' });
});

bridgeTest('envelope: events reach the engine in order with their sequence', async ({ engine, makeClient }) => {
  const client = makeClient();
  const { deviceId } = await pairApproved(engine, client);
  await connectOnline(engine, client);
  const after = engine.mark();
  const names = ['grant.changed', 'tab.updated', 'handoff.done'];
  names.forEach((name, i) => client.emitEvent(name, { i }));
  const got = [];
  for (const [i, name] of names.entries()) {
    got.push(await engine.waitFor({ event: 'ext-event', deviceId, sequence: i + 1 }, { after }));
    assert.equal(got[i].name, name);
    assert.deepEqual(got[i].data, { i });
  }
  const order = engine.events.slice(after).filter((e) => e.event === 'ext-event').map((e) => e.sequence);
  assert.deepEqual(order, [1, 2, 3]);
});

bridgeTest('heartbeat: pings both ways, and the engine knows the round trip', async ({ engine, makeClient }) => {
  const client = makeClient();
  const { deviceId } = await pairApproved(engine, client);
  await connectOnline(engine, client);
  const rtt = await client.ping();
  assert.ok(rtt >= 0, `round trip ${rtt} ms`);

  // The engine's pings, counted as they arrive; the second one's pong was sent when it came.
  let pings = 0;
  await once(client, 'message', { filter: (m) => m.type === 'ping' && ++pings >= 2, timeout: 5000,
                                  what: 'the engine to ping twice' });
  // A round trip after the pong makes sure the engine has read it.
  await client.ping();
  const device = await engine.device(deviceId);
  assert.equal(typeof device.rttMs, 'number', 'the app shows a round trip');
  assert.ok(device.rttMs >= 0);
  assert.ok(client.connected, 'answered pings keep the connection');
}, { heartbeatMs: 200 });

bridgeTest('heartbeat: a device that stops answering pings is closed 4408', async ({ engine, makeClient }) => {
  const client = makeClient({ autoPong: false });
  const { deviceId } = await pairApproved(engine, client);
  const after = engine.mark();
  await connectOnline(engine, client);
  assert.equal(await closeCodeOf(client, 4000), 4408);
  await engine.waitFor({ event: 'device-offline', deviceId }, { after });
}, { heartbeatMs: 150 });

bridgeTest('envelope: malformed JSON and unknown types get an error frame; the connection keeps working', async ({ engine, makeClient }) => {
  const client = makeClient();
  await pairApproved(engine, client);
  await connectOnline(engine, client);
  for (const frame of ['{"type":"request",', 'not json', '[]', '{"id":"x"}', '{"type":"teleport"}']) {
    const error = client.waitFor('protocol-error');
    client.sendRaw(frame);
    const msg = await error;
    assert.ok(isErrorCode(msg.code), `${frame}: error code ${msg.code} is in the table`);
    assert.equal(typeof msg.message, 'string');
    assert.ok(client.connected, `${frame}: still connected`);
  }
  assert.equal((await client.request('engine.info')).engineId, engine.engineId);
}, { badInput: true });

bridgeTest('envelope: a request id already in flight is answered duplicate_id', async ({ engine, makeClient }) => {
  const client = makeClient();
  await pairApproved(engine, client);
  await connectOnline(engine, client);
  const responses = [];
  const answered = watch();
  client.on('message', (m) => { if (m.type === 'response' && m.id === 'same') { responses.push(m); answered.notify(); } });
  // Written in one socket write so the engine reads the second before it has answered the first.
  const request = { type: 'request', id: 'same', method: 'engine.info', params: {}, timeoutMs: 5000 };
  client.sendTogether([request, request]);
  await answered.when(() => responses.length === 2, { what: 'both requests to be answered' });
  const errors = responses.filter((r) => r.error);
  assert.equal(errors.length, 1, 'exactly one of the two is refused');
  assert.equal(errors[0].error.code, 'duplicate_id');
  assert.equal(responses.find((r) => !r.error).result.engineId, engine.engineId, 'the first is answered normally');
  assert.equal((await client.request('engine.info')).engineId, engine.engineId);
}, { badInput: true });

bridgeTest('envelope: nine concurrent calls never put more than eight in flight at the extension', async ({ engine, makeClient }) => {
  const client = makeClient();
  const { deviceId } = await pairApproved(engine, client);
  await connectOnline(engine, client);
  let active = 0;
  let maxActive = 0;
  let started = 0;
  const gates = [];
  const arrivals = watch();
  client.onRequest(async (method, params) => {
    active++;
    started++;
    maxActive = Math.max(maxActive, active);
    arrivals.notify();
    try {
      await new Promise((release) => gates.push(release));
      return { n: params.n };
    } finally {
      active--;
    }
  });
  const calls = Array.from({ length: 9 }, (_, n) => engine.startCall(deviceId, 'browser.slow', { n }, { timeoutMs: 15000 }));
  await arrivals.when(() => started === 8, { what: 'eight calls to reach the extension' });
  // The engine has handled all nine and written out whatever it was going to send.
  await drained(engine, client);
  assert.equal(started, 8, 'the engine holds the ninth call back');
  gates.shift()();
  await arrivals.when(() => started === 9, { what: 'the ninth call, sent once a slot freed' });
  while (gates.length) gates.shift()();
  const replies = await Promise.all(calls.map((c) => c.reply));
  replies.forEach((r, n) => assert.deepEqual(r.result, { n }, `call ${n} completed`));
  assert.equal(maxActive, 8);
  assert.equal(client.stats.maxEngineInFlight, 8);
  assert.equal(client.stats.busyAnswered, 0, 'the extension never had to answer busy');
});

bridgeTest('envelope: cancelling a call aborts the page work and answers cancelled', async ({ engine, makeClient }) => {
  const client = makeClient();
  const { deviceId } = await pairApproved(engine, client);
  await connectOnline(engine, client);
  let reached;
  const started = new Promise((r) => { reached = r; });
  let sawAbort;
  const aborted = new Promise((r) => { sawAbort = r; });
  client.onRequest(async (method, params, { signal }) => {
    reached();
    try {
      return await untilAborted(signal);
    } catch (err) {
      sawAbort(err);
      throw err;
    }
  });
  const call = engine.startCall(deviceId, 'browser.context', {}, { timeoutMs: 10000 });
  await deadline(started, { what: 'the call to reach the extension' });
  engine.send({ cmd: 'cancel', tag: call.tag });
  const reply = await call.reply;
  assert.equal(reply.error?.code, 'cancelled');
  assert.equal((await deadline(aborted, { what: 'the handler to see the abort' })).code, 'cancelled');
  assert.equal(client.engineInFlight, 0);
});

bridgeTest('revoke: the socket closes 4403 at once and the outstanding call fails revoked', async ({ engine, makeClient }) => {
  const client = makeClient();
  const { deviceId } = await pairApproved(engine, client);
  await connectOnline(engine, client);
  let reached;
  const reachedSignal = new Promise((r) => { reached = r; });
  client.onRequest(async (method, params, { signal }) => {
    reached(signal);
    return untilAborted(signal);
  });
  const call = engine.startCall(deviceId, 'browser.context', {}, { timeoutMs: 10000 });
  const handlerSignal = await deadline(reachedSignal, { what: 'the call to reach the extension' });

  const revoked = await engine.command({ cmd: 'revoke', deviceId });
  assert.equal(revoked.result, true);
  assert.equal(await closeCodeOf(client, 2000), 4403);
  assert.equal((await call.reply).error?.code, 'revoked');
  assert.ok(handlerSignal.aborted, 'the page work is stopped');

  // The app may keep listing it as revoked or drop it; either way it is not online.
  const device = await engine.device(deviceId);
  assert.ok(device === undefined || (device.revoked === true && device.online === false),
    `revoked device listed as ${JSON.stringify(device)}`);
  await assert.rejects(client.connect(), { code: 'closed', closeCode: 4403 });
  const later = await engine.call(deviceId, 'browser.tabs', {});
  assert.ok(['revoked', 'device_offline'].includes(later.error?.code),
    `a call to a revoked device fails at once (got ${JSON.stringify(later)})`);
});

// ---- chunking ----

bridgeTest('chunking: large messages cross in both directions intact', async ({ engine, makeClient }) => {
  const client = makeClient();
  const { deviceId } = await pairApproved(engine, client);
  await connectOnline(engine, client);
  // Multi-byte characters make 256 KiB slices cut through characters: only byte-wise reassembly works.
  const unit = 'abc é 😀 ';
  const big = unit.repeat(Math.ceil((2 * 1024 * 1024) / Buffer.byteLength(unit)));
  assert.ok(Buffer.byteLength(big) >= 2 * 1024 * 1024);
  client.onRequest(async (method, params) => {
    if (method === 'browser.context') return { text: big };
    return { echoedBytes: Buffer.byteLength(params.blob), same: params.blob === big.slice(0, params.blob.length) };
  });

  const reply = await engine.call(deviceId, 'browser.context', {}, { timeoutMs: 15000 });
  assert.equal(reply.result?.text.length, big.length, 'the 2 MiB response arrived whole');
  assert.equal(reply.result.text, big);

  // Engine → extension: a 1 MiB parameter has to arrive chunked (the client takes no frame over
  // 640 KiB, so an unchunked one would close the connection) and intact.
  const blob = big.slice(0, 1024 * 1024);
  const echoed = await engine.call(deviceId, 'browser.eval', { blob }, { timeoutMs: 15000 });
  assert.deepEqual(echoed.result, { echoedBytes: Buffer.byteLength(blob), same: true });

  // Extension → engine: a chunked request is reassembled and answered.
  const info = await client.request('engine.info', { blob });
  assert.equal(info.engineId, engine.engineId);
});

bridgeTest('chunking: a gap, a duplicate or a wrong total gets an error frame; the connection keeps working', async ({ engine, makeClient }) => {
  const client = makeClient();
  await pairApproved(engine, client);
  await connectOnline(engine, client);
  const message = { type: 'request', id: 'chunky', method: 'engine.info', params: { pad: 'y'.repeat(700 * 1024) }, timeoutMs: 5000 };
  const cases = [
    ['a gap', { indices: [0, 2] }],
    ['a duplicate', { indices: [0, 0] }],
    ['a wrong total', { total: 2 }],
    ['a transfer that starts in the middle', { indices: [1] }],
  ];
  for (const [why, bend] of cases) {
    const transferId = `bad-${why.replace(/\W/g, '')}`;
    const error = client.waitFor('protocol-error', (m) => m.transferId === transferId);
    client.sendChunks(message, { transferId, ...bend });
    const msg = await error;
    assert.ok(isErrorCode(msg.code), `${why}: code ${msg.code} is in the table`);
    assert.ok(client.connected, `${why}: still connected`);
  }
  assert.equal((await client.request('engine.info')).engineId, engine.engineId);
}, { badInput: true });

bridgeTest('chunking: a message over 16 MiB is refused too_large', async ({ engine, makeClient }) => {
  const client = makeClient();
  await pairApproved(engine, client);
  await connectOnline(engine, client);
  const originalBytes = LIMITS.maxMessageBytes + 1;
  const transferId = 'huge';
  const error = client.waitFor('protocol-error', (m) => m.transferId === transferId);
  // The first slice announces the size; the engine must refuse before buffering 16 MiB.
  client.sendChunks('z'.repeat(LIMITS.chunkSize), {
    transferId, indices: [0], total: Math.ceil(originalBytes / LIMITS.chunkSize), originalBytes,
  });
  assert.equal((await error).code, 'too_large');
  assert.ok(client.connected);
  // The extension's own side refuses to send one, rather than have it refused.
  assert.throws(() => client.send({ type: 'event', event: 'x', data: 'z'.repeat(originalBytes), sequence: 1, timestamp: 0 }),
    { code: 'too_large' });
  assert.equal((await client.request('engine.info')).engineId, engine.engineId);
}, { badInput: true });

bridgeTest('limits: a frame of exactly 640 KiB is read; one byte more closes the connection', async ({ engine, makeClient }) => {
  const client = makeClient();
  const { deviceId } = await pairApproved(engine, client);
  const frameOf = (bytes, sequence) => {
    const empty = JSON.stringify({ type: 'event', event: 'x', sequence, data: '' });
    return JSON.stringify({ type: 'event', event: 'x', sequence, data: 'a'.repeat(bytes - empty.length) });
  };
  const LIMIT = 640 * 1024;

  let after = engine.mark();
  await connectOnline(engine, client);
  const exact = frameOf(LIMIT, 1);
  assert.equal(Buffer.byteLength(exact), LIMIT);
  client.sendRaw(exact, { compress: false });
  await engine.waitFor({ event: 'ext-event', deviceId, sequence: 1 }, { after });

  after = engine.mark();
  const over = frameOf(LIMIT + 1, 2);
  assert.equal(Buffer.byteLength(over), LIMIT + 1);
  client.sendRaw(over, { compress: false });
  const code = await closeCodeOf(client, 5000);
  // libsoup closes with 1009; if its TCP close overtakes the close frame the client sees 1006.
  assert.ok([1009, 1006].includes(code), `closed with ${code}`);
  await engine.waitFor({ event: 'device-offline', deviceId }, { after });
}, { badInput: true });
