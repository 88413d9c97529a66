// SPDX-License-Identifier: GPL-3.0-or-later
// The extension's bridge client over the native host, for real: the worker's own code
// (bridge-client.js, bridge-transport.js, native-socket.js) through the built
// chaperone-native-host, started as Chrome starts it (native-host-shim.mjs), to the real engine.
// The same protocol as over the WebSocket (ext-bridge-client-*.test.mjs): pairing with the origin
// the browser vouched for, auth, requests both ways, chunked messages over the host's 1 MiB
// limit, a revocation; and "auto" falling back when the WebSocket cannot connect, but not when
// the app refuses. The extension is told a port where nothing listens: the host reads the
// engine's from CHAPERONE_BRIDGE_PORT in the browser's environment.

import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import WebSocket from 'ws';

import { TransportChooser } from '../../extension/lib/bridge-transport.js';
import { NativeSocket } from '../../extension/lib/native-socket.js';
import { LIMITS } from '../../extension/lib/protocol.js';
import { ORIGIN, connected, engineTest, pairApproved, whenOf } from './bridge-client-harness.mjs';
import { hostsExited, nativeHostWhyNot, nativeRuntime } from './native-host-shim.mjs';

const whyNot = nativeHostWhyNot();

/** A loopback port that takes connections and drops them at once, counting them. */
async function droppingPort() {
  const server = createServer((socket) => { server.hits++; socket.destroy(); });
  server.hits = 0;
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: server.address().port, close: () => new Promise((r) => server.close(r)) };
}

/** make() with the worker's transport wiring: the chooser in `mode`, the host on `engine.port`. */
function nativeBridge({ engine, make, cleanups }, { mode = 'native', wsPort = 1 } = {}) {
  const made = make({ port: wsPort });
  const runtime = nativeRuntime({ origin: ORIGIN, env: { CHAPERONE_BRIDGE_PORT: String(engine.port) } });
  const chooser = new TransportChooser({
    mode,
    makers: {
      websocket: (url) => {
        const ws = new WebSocket(url, { origin: ORIGIN, maxPayload: LIMITS.maxFrameBytes });
        ws.on('close', () => made.changes.notify());
        return ws;
      },
      native: (url) => new NativeSocket(url, { runtime }),
    },
  });
  made.bridge.createSocket = chooser.createSocket;
  cleanups.push(async () => {
    made.bridge.stop();
    await hostsExited(runtime);
  });
  return { ...made, runtime, chooser };
}

const nativeTest = (name, body, options) => engineTest(name, async (ctx) => {
  if (whyNot) {
    ctx.t.skip(whyNot);
    return;
  }
  await body(ctx);
}, options);

nativeTest('native: pairing through the host shows the extension\'s origin; the paired device connects and is served', async (ctx) => {
  const { engine } = ctx;
  const { bridge, runtime } = nativeBridge(ctx);
  await bridge.start();
  const { result, prompt } = await pairApproved(engine, bridge);
  assert.equal(result.outcome, 'approved');
  assert.equal(prompt.origin, ORIGIN, 'the pairing window shows the origin the browser vouched for');
  assert.deepEqual(runtime.ports[0].posted[0], { type: 'native_open', path: '/pairing' }, 'no port: the host knows it');

  const snap = await connected(bridge);
  assert.equal(snap.transport, 'native');
  assert.equal(snap.transportPort, engine.port, 'the host dialled the engine, not the port in Options');
  assert.equal(snap.port, 1);
  const device = await engine.device(result.deviceId);
  assert.equal(device.origin, ORIGIN, 'the auth was signed over, and bound to, the same origin');

  bridge.onRequest = async (method, params) => ({ method, params });
  const echo = await engine.call(result.deviceId, 'browser.tabs', { a: 1, s: 'café ✓' });
  assert.deepEqual(echo.result, { method: 'browser.tabs', params: { a: 1, s: 'café ✓' } });
  const info = await bridge.request('engine.info');
  assert.equal(info.deviceId, result.deviceId);
});

nativeTest('native: a 1.5 MiB answer and a 1 MiB parameter cross the host whole, as chunks under its 1 MiB limit', async (ctx) => {
  const { engine } = ctx;
  const { bridge } = nativeBridge(ctx);
  await bridge.start();
  const { result } = await pairApproved(engine, bridge);
  await connected(bridge);
  const unit = 'abc é 😀 ';
  const big = unit.repeat(Math.ceil((1.5 * 1024 * 1024) / Buffer.byteLength(unit)));
  bridge.onRequest = async (method, params) => (method === 'browser.context'
    ? { text: big } : { bytes: Buffer.byteLength(params.blob), same: params.blob === big.slice(0, params.blob.length) });
  const reply = await engine.call(result.deviceId, 'browser.context', {}, { timeoutMs: 15000 });
  assert.equal(reply.result?.text, big);
  const blob = big.slice(0, 1024 * 1024);
  const echoed = await engine.call(result.deviceId, 'browser.eval', { blob }, { timeoutMs: 15000 });
  assert.deepEqual(echoed.result, { bytes: Buffer.byteLength(blob), same: true });
  const info = await bridge.request('engine.info', { blob });
  assert.equal(info.engineId, engine.engineId, 'and the engine takes a chunked request through it');
});

nativeTest('native: Reject in the app, and a revocation, are the app\'s answers over the host too', async (ctx) => {
  const { engine } = ctx;
  const { bridge, local } = nativeBridge(ctx);
  await bridge.start();
  const after = engine.mark();
  const pairing = bridge.pair();
  const prompt = await engine.waitFor({ event: 'pairing' }, { after });
  engine.reject(prompt.requestId);
  assert.equal((await pairing).outcome, 'rejected');
  assert.equal(local.data.pairing, undefined);

  const { result } = await pairApproved(engine, bridge);
  await connected(bridge);
  await engine.command({ cmd: 'revoke', deviceId: result.deviceId });
  await whenOf(bridge)(() => bridge.state === 'revoked', 'the popup to show revoked');
  assert.equal(bridge.snapshot().transport, null);
});

nativeTest('auto: the WebSocket cannot connect, so the same attempt goes through the host; it stays there', async (ctx) => {
  const { engine, cleanups } = ctx;
  const dropping = await droppingPort();
  cleanups.push(dropping.close);
  const { bridge, chooser, runtime } = nativeBridge(ctx, { mode: 'auto', wsPort: dropping.port });
  await bridge.start();
  const { result } = await pairApproved(engine, bridge);
  assert.equal(result.outcome, 'approved');
  assert.equal(dropping.server.hits, 1, 'the WebSocket was tried first, once');
  const snap = await connected(bridge);
  assert.equal(snap.transport, 'native');
  assert.equal(chooser.preferred, 'native');
  // The connection went straight to the host: the WebSocket that failed is not tried again.
  assert.equal(dropping.server.hits, 1);
  assert.equal(runtime.ports.length, 2, 'one host for the pairing, one for the connection');
});

nativeTest('auto: the app\'s refusal after the WebSocket opened (a revocation) is not a reason to use the host', async (ctx) => {
  const { engine } = ctx;
  const { bridge, runtime, when } = nativeBridge(ctx, { mode: 'auto', wsPort: engine.port });
  await bridge.start();
  const { result } = await pairApproved(engine, bridge);
  assert.equal((await connected(bridge)).transport, 'websocket');
  await engine.command({ cmd: 'revoke', deviceId: result.deviceId });
  await when(() => bridge.state === 'revoked', 'the revocation to reach the extension');
  bridge.kick(); // the alarm's wake-up: a revoked extension stays put, over either transport
  assert.equal(runtime.ports.length, 0, 'the native host was never started');
});

nativeTest('a browser paired over the WebSocket authenticates through the host as the same device, and back', async (ctx) => {
  const { engine } = ctx;
  const { bridge, chooser, runtime } = nativeBridge(ctx, { mode: 'websocket', wsPort: engine.port });
  await bridge.start();
  const { result } = await pairApproved(engine, bridge);
  assert.equal((await connected(bridge)).transport, 'websocket');

  // The person picks "Native host only" in Options: the worker sets the mode and restarts.
  chooser.setMode('native');
  await bridge.restart();
  const viaHost = await connected(bridge);
  assert.equal(viaHost.transport, 'native');
  assert.equal(viaHost.deviceId, result.deviceId);
  assert.equal(runtime.ports.length, 1);
  assert.equal((await bridge.request('engine.info')).deviceId, result.deviceId);

  chooser.setMode('websocket');
  await bridge.restart();
  assert.equal((await connected(bridge)).transport, 'websocket');
  assert.deepEqual((await engine.devices()).map((d) => d.deviceId), [result.deviceId], 'one device throughout');
});
