// SPDX-License-Identifier: GPL-3.0-or-later
// The engine-per-test wrapper (engineTest), bridge factory and timers the ext-bridge-client-*.test.mjs files share.
// The extension's bridge client (extension/lib/bridge-client.js) against the real engine through the
// `chaperone-test-engine` harness: the worker's own code, given Node's `ws` as its WebSocket and
// in-memory storage, pairs, authenticates, serves and calls, chunks, reconnects and resumes. A small
// scripted engine (same protocol, our own key) covers what the real one never sends: a ninth
// request, a duplicate id, broken chunk transfers.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import WebSocket from 'ws';
import { BridgeClient } from '../../extension/lib/bridge-client.js';
import { Keystore, memoryKeyStore, memoryStorageArea } from '../../extension/lib/keystore.js';
import { LIMITS } from '../../extension/lib/protocol.js';
import { ENGINE_PATH, TestEngine } from './engine-harness.mjs';
import { watch } from '../lib/until.mjs';

export const ORIGIN = 'chrome-extension://immigohjinbkkjncmhkefbfainfbcigp';
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

export function untilAborted(signal) {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

/**
 * A BridgeClient wired as background.js wires it, but with Node's `ws` (which needs the Origin the
 * browser would set) and in-memory chrome.storage/IndexedDB. `frames` records every frame sent.
 */
export function makeBridge({ port, local = memoryStorageArea(), session = memoryStorageArea(), keys = memoryKeyStore(),
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

export const sentOfType = (frames, type) => frames.map((f) => JSON.parse(f.text)).filter((m) => m.type === type);

/** Pairs through the popup's path, pressing Pair in the "app" when the engine shows the code. */
export async function pairApproved(engine, bridge, options) {
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

export async function connected(bridge, timeoutMs = 5000) {
  await whenOf(bridge)(() => bridge.connected, 'the bridge to be connected', timeoutMs);
  return bridge.snapshot();
}

export const madeOf = new WeakMap();   // bridge → what makeBridge made with it
export const whenOf = (bridge) => madeOf.get(bridge).when;

export function engineTest(name, body, { timeout = 30000 } = {}) {
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
export async function startEngineAt({ port, dataDir, heartbeatMs }) {
  const args = ['--port', String(port), '--data-dir', dataDir];
  if (heartbeatMs !== undefined) args.push('--heartbeat-ms', String(heartbeatMs));
  const child = spawn(ENGINE_PATH, args, { detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  const engine = new TestEngine(child, dataDir);
  const listening = await engine.waitFor({ event: 'listening' }, { timeoutMs: 10000 });
  engine.port = listening.port;
  engine.engineId = listening.engineId;
  return engine;
}

export async function quitKeepingData(engine) {
  const exited = new Promise((r) => engine.child.once('exit', r));
  engine.send({ cmd: 'quit' });
  await exited;
}
