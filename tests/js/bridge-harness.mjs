// SPDX-License-Identifier: GPL-3.0-or-later
// The engine-per-test wrapper (bridgeTest), origins and pairing helpers the bridge-*.test.mjs files share.
// Protocol tests against the real engine through the `chaperone-test-engine` harness
// (CHAPERONE_TEST_ENGINE): the test client plays the extension, the harness plays the person and
// the agent. Each test runs its own engine on an ephemeral port with a fresh data directory.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ChaperoneClient, RawConnection } from './chaperone-client.mjs';
import { ENGINE_PATH, TestEngine } from './engine-harness.mjs';
import { deadline, once } from '../lib/until.mjs';

export const ORIGIN_A = 'chrome-extension://abcdefghijklmnopabcdefghijklmnop';
export const ORIGIN_B = 'chrome-extension://ponmlkjihgfedcbaponmlkjihgfedcba';
const ORIGIN_SENTINEL = 'chrome-extension://pppppppppppppppppppppppppppppppp';
export const ORIGIN_FIREFOX = 'moz-extension://0b6f2c3e-94a1-4d7b-8c5e-2f1a9d3b7e60';
const SKIP_REASON = 'CHAPERONE_TEST_ENGINE not set: point it at the built harness '
  + '(e.g. build/tests/chaperone-test-engine) to run the bridge protocol tests';

const digits = (code) => String(code).replace(/\s/g, '');

/**
 * Everything the engine wrote to `client` before this returns has reached it: the harness reads
 * its commands in order (so every command sent before was handled, and what it sent the device is
 * queued), and the engine's pong comes after whatever it queued before the ping.
 */
export async function drained(engine, client) {
  await engine.devices();
  await client.ping();
}

/** A promise that settles when the handler's signal aborts, rejecting with the abort reason. */
export function untilAborted(signal) {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

/**
 * Pairs `client`, pressing Pair in the "app" once the engine shows a code, and checks that the code
 * the engine shows is the one the extension shows.
 */
export async function pairApproved(engine, client) {
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
export async function pairPending(engine, client, options = {}) {
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
export async function connectOnline(engine, client, options) {
  const after = engine.mark();
  const ack = await client.connect(options);
  await engine.waitFor({ event: 'device-online', deviceId: client.pinned.deviceId }, { after });
  return ack;
}

/** Opens a raw /extension socket with a valid Origin and reads the engine's challenge. */
export async function rawExtensionSocket(engine, origin = ORIGIN_A) {
  const raw = await RawConnection.open({ port: engine.port, path: '/extension', origin });
  const challenge = await raw.next();
  assert.equal(challenge.type, 'challenge');
  return raw;
}

/** Waits for the socket to close and returns the close code. */
export async function closeCodeOf(connOrClient, timeoutMs = 7000) {
  const closed = connOrClient instanceof RawConnection ? connOrClient.closed : connOrClient.whenClosed({ timeoutMs });
  const info = await deadline(closed, { timeout: timeoutMs, what: 'the engine to close the socket' });
  return info.code;
}

/**
 * Declares a test that runs against a fresh engine. With {badInput:true} a sentinel device is
 * paired first and, after the test body, must still connect, call and be called: bad input must
 * never take the engine down for everyone else.
 */
export function bridgeTest(name, body, { badInput = false, heartbeatMs, timeout = 30000 } = {}) {
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
