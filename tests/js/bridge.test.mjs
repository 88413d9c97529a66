// SPDX-License-Identifier: GPL-3.0-or-later
// Protocol tests against the real engine through the `chaperone-test-engine` harness
// (CHAPERONE_TEST_ENGINE): the test client plays the extension, the harness plays the person and
// the agent. Each test runs its own engine on an ephemeral port with a fresh data directory.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';

import { isErrorCode } from '../../extension/lib/protocol-errors.js';
import { ChaperoneClient, ChaperoneError, PairingError, RawConnection } from './chaperone-client.mjs';
import { ENGINE_PATH, TestEngine } from './engine-harness.mjs';
import { deadline, once, watch } from '../lib/until.mjs';
import { LIMITS, fingerprintOf, generateKeyPair, randomNonce } from '../../extension/lib/protocol.js';

const ORIGIN_A = 'chrome-extension://abcdefghijklmnopabcdefghijklmnop';
const ORIGIN_B = 'chrome-extension://ponmlkjihgfedcbaponmlkjihgfedcba';
const ORIGIN_SENTINEL = 'chrome-extension://pppppppppppppppppppppppppppppppp';
const ORIGIN_FIREFOX = 'moz-extension://0b6f2c3e-94a1-4d7b-8c5e-2f1a9d3b7e60';
const SKIP_REASON = 'CHAPERONE_TEST_ENGINE not set: point it at the built harness '
  + '(e.g. build/tests/chaperone-test-engine) to run the bridge protocol tests';

const digits = (code) => String(code).replace(/\s/g, '');

/**
 * Everything the engine wrote to `client` before this returns has reached it: the harness reads
 * its commands in order (so every command sent before was handled, and what it sent the device is
 * queued), and the engine's pong comes after whatever it queued before the ping.
 */
async function drained(engine, client) {
  await engine.devices();
  await client.ping();
}

/** A promise that settles when the handler's signal aborts, rejecting with the abort reason. */
function untilAborted(signal) {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

/**
 * Pairs `client`, pressing Pair in the "app" once the engine shows a code, and checks that the code
 * the engine shows is the one the extension shows.
 */
async function pairApproved(engine, client) {
  const after = engine.mark();
  let shown = null;
  const pairing = client.pair({ onCode: (c) => { shown = c; } });
  pairing.catch(() => {}); // awaited below; this only keeps an early failure from going unhandled
  const prompt = await Promise.race([
    engine.waitFor((e) => e.event === 'pairing' && e.installationId === client.installationId, { after }),
    pairing.then(() => { throw new Error('pairing finished before the engine asked the person'); }),
  ]);
  assert.equal(prompt.origin, client.origin);
  assert.equal(prompt.browser, client.browser);
  engine.approve(prompt.requestId);
  const result = await pairing;
  assert.ok(shown, 'the extension showed a code');
  assert.match(digits(prompt.code), /^\d{6}$/);
  assert.equal(digits(prompt.code), shown.code, 'the app and the popup show the same six digits');
  assert.equal(prompt.requestId, result.requestId);
  const ended = await engine.waitFor({ event: 'pairing-ended', requestId: prompt.requestId }, { after });
  assert.equal(ended.outcome, 'approved');
  return result;
}

/** Starts a pairing and waits for the engine to show it, without deciding. */
async function pairPending(engine, client, options = {}) {
  const after = engine.mark();
  const pairing = client.pair(options);
  pairing.catch(() => {});
  const prompt = await Promise.race([
    engine.waitFor((e) => e.event === 'pairing' && e.installationId === client.installationId, { after }),
    pairing.then(() => { throw new Error('pairing finished before the engine asked the person'); }),
  ]);
  return { pairing, prompt, after };
}

/** Connects and waits until the engine reports the device online. */
async function connectOnline(engine, client, options) {
  const after = engine.mark();
  const ack = await client.connect(options);
  await engine.waitFor({ event: 'device-online', deviceId: client.pinned.deviceId }, { after });
  return ack;
}

/** Opens a raw /extension socket with a valid Origin and reads the engine's challenge. */
async function rawExtensionSocket(engine, origin = ORIGIN_A) {
  const raw = await RawConnection.open({ port: engine.port, path: '/extension', origin });
  const challenge = await raw.next();
  assert.equal(challenge.type, 'challenge');
  return raw;
}

/** Waits for the socket to close and returns the close code. */
async function closeCodeOf(connOrClient, timeoutMs = 7000) {
  const closed = connOrClient instanceof RawConnection ? connOrClient.closed : connOrClient.whenClosed({ timeoutMs });
  const info = await deadline(closed, { timeout: timeoutMs, what: 'the engine to close the socket' });
  return info.code;
}

/**
 * Declares a test that runs against a fresh engine. With {badInput:true} a sentinel device is
 * paired first and, after the test body, must still connect, call and be called: bad input must
 * never take the engine down for everyone else.
 */
function bridgeTest(name, body, { badInput = false, heartbeatMs, timeout = 30000 } = {}) {
  test(name, { timeout }, async (t) => {
    if (!ENGINE_PATH) {
      t.skip(SKIP_REASON);
      return;
    }
    const engine = await TestEngine.start({ heartbeatMs });
    const clients = [];
    const makeClient = (options = {}) => {
      const c = new ChaperoneClient({ port: engine.port, origin: ORIGIN_A, ...options });
      clients.push(c);
      return c;
    };
    try {
      let sentinel = null;
      if (badInput) {
        sentinel = makeClient({ origin: ORIGIN_SENTINEL });
        await pairApproved(engine, sentinel);
      }
      await body({ engine, makeClient, t });
      if (sentinel) await assertStillServes(engine, sentinel);
      assert.equal(engine.exit, null, `the engine is still running\n${engine.stderrTail()}`);
    } finally {
      await Promise.all(clients.map((c) => c.terminate()));
      await engine.stop();
    }
  });
}

async function assertStillServes(engine, sentinel) {
  assert.equal(engine.exit, null, `the engine died during the test\n${engine.stderrTail()}`);
  sentinel.onRequest(async (method, params) => ({ method, params }));
  if (!sentinel.connected) await connectOnline(engine, sentinel);
  const info = await sentinel.request('engine.info');
  assert.equal(info.engineId, engine.engineId, 'a good client still gets engine.info');
  const reply = await engine.call(sentinel.pinned.deviceId, 'sentinel.echo', { still: 'here' });
  assert.deepEqual(reply.result, { method: 'sentinel.echo', params: { still: 'here' } },
    'the engine can still call a good client');
  await sentinel.close();
}

// ---- pairing ----

bridgeTest('pairing: the person approves the code both sides show, then the device connects', async ({ engine, makeClient }) => {
  const client = makeClient();
  const paired = await pairApproved(engine, client);
  assert.equal(paired.engineId, engine.engineId);
  assert.equal(client.pinned.engineId, engine.engineId);

  const device = await engine.device(paired.deviceId);
  assert.ok(device, 'the approved device is listed');
  assert.equal(device.origin, ORIGIN_A);
  assert.equal(device.installationId, client.installationId);
  assert.equal(device.fingerprint, await client.fingerprint(), 'the app shows the key the extension holds');
  assert.match(device.fingerprint, /^[0-9a-f]{4}( [0-9a-f]{4}){7}$/);
  assert.equal(device.revoked, false);
  assert.equal(device.online, false, 'paired is not yet online');

  const ack = await connectOnline(engine, client);
  assert.equal(ack.protocol, 1);
  assert.equal(ack.engineId, engine.engineId);
  assert.equal(ack.deviceId, paired.deviceId);
  assert.equal(ack.resumed, false);
  assert.match(ack.sessionId, /^[A-Za-z0-9_-]{22}$/);
  assert.match(ack.connectionId, /^[A-Za-z0-9_-]{22}$/);
  assert.deepEqual(ack.limits, { ...LIMITS }, 'hello_ack announces the agreed limits');
  assert.equal((await engine.device(paired.deviceId)).online, true);
});

bridgeTest('pairing: a firefox origin pairs and connects too', async ({ engine, makeClient }) => {
  const client = makeClient({ origin: ORIGIN_FIREFOX, browser: 'firefox' });
  await pairApproved(engine, client);
  await connectOnline(engine, client);
  assert.equal((await client.request('engine.info')).deviceId, client.pinned.deviceId);
});

bridgeTest('pairing: Reject ends it, stores nothing, and the extension stays unpaired', async ({ engine, makeClient }) => {
  const client = makeClient();
  const { pairing, prompt, after } = await pairPending(engine, client);
  engine.reject(prompt.requestId);
  await assert.rejects(pairing, (err) => err instanceof PairingError && err.outcome === 'rejected');
  const ended = await engine.waitFor({ event: 'pairing-ended', requestId: prompt.requestId }, { after });
  assert.equal(ended.outcome, 'rejected');
  assert.equal(client.pinned, null, 'no engine key is pinned');
  assert.deepEqual(await engine.devices(), []);
  await assert.rejects(client.connect(), { code: 'not_paired' });
});

bridgeTest('pairing: revealing another nonce than the one committed is commitment_mismatch', async ({ engine, makeClient }) => {
  const client = makeClient();
  await assert.rejects(client.pair({ forge: { revealNonceC: randomNonce() } }),
    (err) => err instanceof PairingError && err.outcome === 'error' && err.code === 'commitment_mismatch');
  assert.equal(client.pinned, null);
  assert.deepEqual((await engine.devices()).filter((d) => d.installationId === client.installationId), []);
  assert.equal(engine.events.some((e) => e.event === 'pairing' && e.installationId === client.installationId), false,
    'no code is shown to the person for a failed reveal');
}, { badInput: true });

bridgeTest('pairing: a reveal signed by another key is bad_signature', async ({ engine, makeClient }) => {
  const client = makeClient();
  const other = await generateKeyPair();
  await assert.rejects(client.pair({ forge: { revealKey: other.privateKey } }),
    (err) => err instanceof PairingError && err.code === 'bad_signature');
  assert.equal(engine.events.some((e) => e.event === 'pairing' && e.installationId === client.installationId), false);
}, { badInput: true });

bridgeTest('pairing: three failed attempts lock pairing for ten minutes', async ({ engine, makeClient }) => {
  const client = makeClient();
  const other = await generateKeyPair();
  for (let i = 0; i < 3; i++) {
    await assert.rejects(client.pair({ forge: { revealKey: other.privateKey } }), { code: 'bad_signature' });
  }
  // Now even an honest attempt is refused, with how long to wait.
  await assert.rejects(client.pair(), (err) => {
    assert.ok(err instanceof PairingError, err.message);
    assert.equal(err.outcome, 'locked');
    assert.ok(Number.isInteger(err.retryAfter) && err.retryAfter > 0 && err.retryAfter <= 600000,
      `retryAfter ${err.retryAfter} is in (0, 10 min]`);
    return true;
  });
}, { badInput: true });

bridgeTest('pairing: re-pairing the same installation rotates its key and keeps the device', async ({ engine, makeClient }) => {
  const client = makeClient();
  const first = await pairApproved(engine, client);
  const oldKeys = client.keys;
  await client.rotateKey();
  const second = await pairApproved(engine, client);
  assert.equal(second.deviceId, first.deviceId, 'the device keeps its id');

  const listed = (await engine.devices()).filter((d) => d.installationId === client.installationId);
  assert.equal(listed.length, 1, 'still one device for this installation');
  assert.equal(listed[0].fingerprint, await fingerprintOf(client.keys.jwk));
  assert.notEqual(listed[0].fingerprint, await fingerprintOf(oldKeys.jwk));

  await connectOnline(engine, client);
  await client.close();

  // The old key no longer opens a session for this device.
  const stale = makeClient({ installationId: client.installationId, keys: oldKeys, pinned: client.pinned });
  await assert.rejects(stale.connect(), { code: 'closed', closeCode: 4401 });
});

bridgeTest('pairing: a second request from an installation with one pending is refused busy', async ({ engine, makeClient }) => {
  const client = makeClient();
  const { pairing, prompt } = await pairPending(engine, client);
  await assert.rejects(client.pair(), (err) => err instanceof PairingError && err.code === 'busy');
  // The first one is untouched and can still be approved.
  engine.approve(prompt.requestId);
  assert.equal((await pairing).requestId, prompt.requestId);
}, { badInput: true });

// ---- connection and auth ----

bridgeTest('auth: a replayed auth frame is refused on a new connection', async ({ engine, makeClient }) => {
  const client = makeClient();
  await pairApproved(engine, client);
  await connectOnline(engine, client);
  const captured = client.lastAuth;
  await client.close();

  const raw = await rawExtensionSocket(engine);
  raw.sendRaw(captured);
  assert.equal(await closeCodeOf(raw), 4401);
}, { badInput: true });

bridgeTest('auth: an auth signed by another key is refused', async ({ engine, makeClient }) => {
  const client = makeClient();
  await pairApproved(engine, client);
  const impostor = makeClient({
    installationId: client.installationId, keys: await generateKeyPair(), pinned: client.pinned,
  });
  await assert.rejects(impostor.connect(), { code: 'closed', closeCode: 4401 });
  assert.equal((await engine.device(client.pinned.deviceId)).online, false);
}, { badInput: true });

bridgeTest('auth: a paired device connecting from another origin is refused', async ({ engine, makeClient }) => {
  const client = makeClient();
  await pairApproved(engine, client);
  const elsewhere = makeClient({
    origin: ORIGIN_B, installationId: client.installationId, keys: client.keys, pinned: client.pinned,
  });
  await assert.rejects(elsewhere.connect(), { code: 'closed', closeCode: 4401 });
}, { badInput: true });

bridgeTest('auth: the client refuses an engine it did not pair with', async ({ engine, makeClient }) => {
  const client = makeClient();
  await pairApproved(engine, client);
  const otherEngine = await TestEngine.start();
  try {
    const confused = makeClient({
      port: otherEngine.port, installationId: client.installationId, keys: client.keys, pinned: client.pinned,
    });
    await assert.rejects(confused.connect(), { code: 'engine_mismatch' });
  } finally {
    await otherEngine.stop();
  }
});

bridgeTest('upgrade: a bad Origin or Host is refused with HTTP 403 before any WebSocket', async ({ engine }) => {
  const refused = async (path, options, why) => {
    let conn;
    try {
      conn = await RawConnection.open({ port: engine.port, path, ...options });
    } catch (err) {
      assert.equal(err.statusCode, 403, `${why}: expected HTTP 403, got ${err.message}`);
      return;
    }
    await conn.terminate();
    assert.fail(`${why}: the engine upgraded the connection instead of answering 403`);
  };
  const badOrigins = [
    [undefined, 'no Origin'],
    ['null', 'Origin "null"'],
    ['https://example.com', 'a web page'],
    ['http://127.0.0.1', 'a local page'],
    ['chrome-extension://ABCDEFGHIJKLMNOPABCDEFGHIJKLMNOP', 'upper-case extension id'],
    ['chrome-extension://qbcdefghijklmnopabcdefghijklmnop', 'a letter outside a-p'],
    ['chrome-extension://abcdefghijklmnopabcdefghijklmno', '31 letters'],
    [`${ORIGIN_A}/`, 'a trailing slash'],
    [`${ORIGIN_A}.evil.com`, 'a suffix'],
    ['moz-extension://0B6F2C3E-94A1-4D7B-8C5E-2F1A9D3B7E60', 'upper-case uuid'],
  ];
  const badHosts = [
    [`evil.example:${engine.port}`, 'a rebinding host name'],
    [`localhost.evil.example:${engine.port}`, 'localhost as a prefix'],
    [`127.0.0.1:${engine.port + 1}`, 'another port'],
    ['127.0.0.1', 'no port'],
    [`[::1]:${engine.port}`, 'IPv6 loopback, not in the allowlist'],
  ];
  for (const path of ['/extension', '/pairing']) {
    for (const [origin, why] of badOrigins) await refused(path, { origin }, `${path}, ${why}`);
    for (const [hostHeader, why] of badHosts) await refused(path, { origin: ORIGIN_A, hostHeader }, `${path}, ${why}`);
  }
  // The allowed forms do upgrade: "localhost:<port>" as Host, and a Firefox origin.
  const localhost = await RawConnection.open({ port: engine.port, path: '/extension', origin: ORIGIN_A, hostHeader: `localhost:${engine.port}` });
  assert.equal((await localhost.next()).type, 'challenge');
  await localhost.close();
  const firefox = await RawConnection.open({ port: engine.port, path: '/extension', origin: ORIGIN_FIREFOX });
  assert.equal((await firefox.next()).type, 'challenge');
  await firefox.close();
}, { badInput: true });

// libsoup 3.2 bounds each frame, not a message split over many continuation frames: without the
// engine's own byte budget under libsoup, these fill its memory. 24 MiB is far past any budget.
/** The engine's peak resident memory: what it held at worst, even if it let go since. */
async function rssKiB(pid) {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)[1]);
}

async function fragmentBomb(conn, sliceBytes) {
  // Each fragment stays under the frame limit, so only a bound on the whole message can stop it.
  const slice = 'a'.repeat(sliceBytes);
  let sent = 0;
  try {
    while (sent < 24 * 1024 * 1024 && conn.isOpen) {
      sent += slice.length;
      // Let the socket drain, as a real sender would have to: every 1 MiB, wait until this
      // fragment has been written out (the send's own callback).
      if (sent % (1024 * 1024) < slice.length) await new Promise((r) => conn.sendRaw(slice, { fin: false }, r));
      else conn.sendRaw(slice, { fin: false });
    }
  } catch {
    // The engine hung up mid-send: that is the point.
  }
  return sent;
}

bridgeTest('limits: a message fragmented past the budget before auth is cut off', async ({ engine }) => {
  const raw = await rawExtensionSocket(engine);
  const before = await rssKiB(engine.child.pid);
  await fragmentBomb(raw, 8 * 1024);
  const code = await closeCodeOf(raw, 10000);
  assert.ok([1006, 1009, 4401].includes(code), `closed with ${code}`);
  const grown = (await rssKiB(engine.child.pid)) - before;
  assert.ok(grown < 8 * 1024, `the engine grew by ${grown} KiB holding a 24 MiB message`);
}, { badInput: true });

bridgeTest('limits: a message fragmented past the budget after auth is cut off', async ({ engine, makeClient }) => {
  const client = makeClient();
  await pairApproved(engine, client);
  await connectOnline(engine, client);
  const before = await rssKiB(engine.child.pid);
  await fragmentBomb({
    get isOpen() { return client.connected; },
    sendRaw: (text, options, done) => client.sendRaw(text, options, done),
  }, 60 * 1024);
  const code = await closeCodeOf(client, 10000);
  assert.ok([1006, 1009].includes(code), `closed with ${code}`);
  const grown = (await rssKiB(engine.child.pid)) - before;
  assert.ok(grown < 8 * 1024, `the engine grew by ${grown} KiB holding a 24 MiB message`);
}, { badInput: true });

bridgeTest('auth: anything but auth as the first message closes 4401', async ({ engine }) => {
  const raw = await rawExtensionSocket(engine);
  raw.send({ type: 'request', id: 'r1', method: 'engine.info', params: {}, timeoutMs: 1000 });
  assert.equal(await closeCodeOf(raw), 4401);
}, { badInput: true });

bridgeTest('auth: a first message over 16 KiB closes the socket', async ({ engine }) => {
  const raw = await rawExtensionSocket(engine);
  raw.send({ type: 'auth', padding: 'x'.repeat(17 * 1024) });
  // 4401 when the engine reads and refuses it; 1009, or 1006 from libsoup, when a 16 KiB frame
  // limit before auth stops it earlier. A normal close (1000) or no close would be the bug.
  const code = await closeCodeOf(raw);
  assert.ok([4401, 1009, 1006].includes(code), `closed with ${code}`);
}, { badInput: true });

bridgeTest('auth: a socket that does not authenticate is closed 4401, not before its 5 s are up', async ({ engine }) => {
  const raw = await rawExtensionSocket(engine);
  const started = Date.now();
  // How soon after the 5 s is for bench/; 20 s is only the failure deadline.
  assert.equal(await closeCodeOf(raw, 20000), 4401);
  const waited = Date.now() - started;
  assert.ok(waited >= 4000, `closed after ${waited} ms: the engine gives 5 s`);
}, { badInput: true, timeout: 40000 });

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
