// SPDX-License-Identifier: GPL-3.0-or-later
// extension/lib/native-socket.js against a scripted native port: what the host says of its own
// becomes the events a WebSocket fires (native_opened → open; native_closed → close, or error and
// close 1006 when it never opened; native_error and a port that ends → error and close), messages
// pass as objects on the port and as JSON text to the client, and bridge-socket.js's Socket.open
// reads it as it reads a WebSocket. The real host: ext-native-transport.test.mjs.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { NATIVE_HOST, NativeSocket } from '../../extension/lib/native-socket.js';
import { BridgeError, Socket } from '../../extension/lib/bridge-socket.js';

const URL_EXT = 'ws://127.0.0.1:64333/extension';

/** A chrome.runtime whose one port the test plays as the host. */
function fakeRuntime() {
  const runtime = {
    lastError: undefined,
    port: null,
    connectNative(name) {
      const list = () => { const l = []; return { l, addListener: (fn) => l.push(fn) }; };
      const port = {
        name, posted: [], disconnected: 0, onMessage: list(), onDisconnect: list(),
        postMessage(m) { port.posted.push(m); },
        disconnect() { port.disconnected++; },
      };
      runtime.port = port;
      return port;
    },
    /** The host sends `m`. */
    say(m) { for (const fn of runtime.port.onMessage.l) fn(m, runtime.port); },
    /** The host's end, with Chrome's lastError set during the call. */
    end(message) {
      runtime.lastError = message ? { message } : undefined;
      for (const fn of runtime.port.onDisconnect.l) fn(runtime.port);
      runtime.lastError = undefined;
    },
  };
  return runtime;
}

/** Every event of `ws`, in order, as [type, detail]. */
function record(ws) {
  const events = [];
  for (const type of ['open', 'message', 'error', 'close']) {
    ws.addEventListener(type, (e) => events.push([type, type === 'message' ? e.data : type === 'close' ? e.code : null]));
  }
  return events;
}

const tick = () => new Promise((r) => queueMicrotask(r));
const timers = { setTimeout: (fn, ms) => setTimeout(fn, ms), clearTimeout: (id) => clearTimeout(id) };

test('it connects the named host and asks for the path only: the host, not the extension, knows the port', () => {
  const rt = fakeRuntime();
  const ws = new NativeSocket('ws://127.0.0.1:5/pairing', { runtime: rt });
  assert.equal(rt.port.name, NATIVE_HOST);
  assert.deepEqual(rt.port.posted, [{ type: 'native_open', path: '/pairing' }]);
  assert.equal(ws.readyState, 0);
  assert.equal(ws.transport, 'native');
  assert.throws(() => ws.send('{"type":"x"}'), /still connecting/, 'no send before open, as a WebSocket');
});

test('only the bridge\'s two doors; without native messaging it throws as `new WebSocket` does', () => {
  const rt = fakeRuntime();
  for (const url of ['ws://127.0.0.1:1/other', 'ws://127.0.0.1:1/extension/', 'http://127.0.0.1:1/extension',
    'ws://127.0.0.1:1/extension?x=1', 'not a url']) {
    assert.throws(() => new NativeSocket(url, { runtime: rt }), SyntaxError, url);
  }
  assert.throws(() => new NativeSocket(URL_EXT, { runtime: {} }), /not available/);
});

test('native_opened opens; messages cross as objects on the port and JSON text to the client', async () => {
  const rt = fakeRuntime();
  const ws = new NativeSocket(URL_EXT, { runtime: rt });
  const events = record(ws);
  rt.say({ type: 'native_opened', port: 40001 });
  assert.equal(ws.readyState, 1);
  assert.equal(ws.hostPort, 40001);
  rt.say({ type: 'challenge', n: 1, s: 'café ✓' });
  ws.send(JSON.stringify({ type: 'auth', a: [1, 2] }));
  assert.deepEqual(rt.port.posted.at(-1), { type: 'auth', a: [1, 2] });
  assert.deepEqual(events, [['open', null], ['message', '{"type":"challenge","n":1,"s":"café ✓"}']]);

  // The bridge closes: its code and reason, no error; the port is let go.
  rt.say({ type: 'native_closed', code: 4401, reason: 'not authenticated' });
  assert.deepEqual(events.slice(2), [['close', 4401]]);
  assert.equal(ws.readyState, 3);
  assert.equal(rt.port.disconnected, 1);
  ws.send('{"type":"late"}');
  assert.equal(rt.port.posted.length, 2, 'nothing is sent after the close');
  rt.end();
  await tick();
  assert.equal(events.length, 3, 'the port ending after the close says nothing more');
});

test('it never opened: nothing listening, or an HTTP refusal → error, then close 1006, and why', () => {
  for (const [closed, kind, words] of [
    [{ type: 'native_closed', code: 0, status: 0, reason: 'Could not connect: Connection refused' }, 'unreachable', /nothing answered/],
    [{ type: 'native_closed', code: 0, status: 403, reason: 'Forbidden' }, 'refused', /HTTP 403/],
  ]) {
    const rt = fakeRuntime();
    const ws = new NativeSocket(URL_EXT, { runtime: rt });
    const events = record(ws);
    rt.say(closed);
    assert.deepEqual(events, [['error', null], ['close', 1006]]);
    assert.equal(ws.failureKind, kind);
    assert.match(ws.failure, words);
  }
});

test('a host that is not installed, not allowed, or refuses the caller: error, close, and the browser\'s words', () => {
  const rt = fakeRuntime();
  const ws = new NativeSocket(URL_EXT, { runtime: rt });
  const events = record(ws);
  rt.end('Specified native messaging host not found.');
  assert.deepEqual(events, [['error', null], ['close', 1006]]);
  assert.equal(ws.failure, 'Specified native messaging host not found.');
  assert.equal(ws.failureKind, 'host');

  // Firefox: the host says why it refuses, then ends.
  const ff = fakeRuntime();
  const refused = new NativeSocket(URL_EXT, { runtime: ff });
  const seen = record(refused);
  ff.say({ type: 'native_error', code: 'unsupported', message: 'Firefox does not tell a native host the extension\'s origin' });
  ff.end('Native host has exited.');
  assert.deepEqual(seen, [['error', null], ['close', 1003]]);
  assert.match(refused.failure, /unsupported.*origin/);
  assert.equal(refused.failureKind, 'host');

  // Anything but the host's own words before native_opened is not this host.
  const odd = fakeRuntime();
  const other = new NativeSocket(URL_EXT, { runtime: odd });
  const oddEvents = record(other);
  odd.say({ type: 'challenge' });
  assert.deepEqual(oddEvents, [['error', null], ['close', 1006]]);
});

test('after open: a native_error closes with the matching code; the host going away is 1006', () => {
  const rt = fakeRuntime();
  const ws = new NativeSocket(URL_EXT, { runtime: rt });
  const events = record(ws);
  rt.say({ type: 'native_opened', port: 1 });
  rt.say({ type: 'native_error', code: 'too_large', message: 'x' });
  assert.deepEqual(events, [['open', null], ['error', null], ['close', 1009]]);
  assert.equal(ws.failure, null, 'it had opened: not a connection failure');

  const gone = fakeRuntime();
  const ws2 = new NativeSocket(URL_EXT, { runtime: gone });
  const events2 = record(ws2);
  gone.say({ type: 'native_opened', port: 1 });
  gone.end('Native host has exited.');
  assert.deepEqual(events2, [['open', null], ['error', null], ['close', 1006]]);
});

test('close(): the port is disconnected and the close event is ours to fire (Chrome fires none for that side)', async () => {
  const rt = fakeRuntime();
  const ws = new NativeSocket(URL_EXT, { runtime: rt });
  const events = record(ws);
  rt.say({ type: 'native_opened', port: 1 });
  ws.close(4408, 'heartbeat timeout');
  assert.equal(ws.readyState, 2);
  assert.equal(rt.port.disconnected, 1);
  await tick();
  assert.deepEqual(events, [['open', null], ['close', 4408]]);
  assert.equal(ws.readyState, 3);
  ws.close();
  await tick();
  assert.equal(events.length, 2, 'one close only');
});

test('Socket.open (bridge-socket.js) reads it as a WebSocket: open resolves; never-opened is not_running', async () => {
  const rt = fakeRuntime();
  const opening = Socket.open((url) => new NativeSocket(url, { runtime: rt }), URL_EXT, timers, 5000);
  rt.say({ type: 'native_opened', port: 7 });
  const sock = await opening;
  assert.equal(sock.isOpen, true);
  rt.say({ type: 'hello_ack', x: 1 });
  assert.deepEqual(await sock.next(timers, 1000), { type: 'hello_ack', x: 1 });
  await Promise.all([sock.close(1000), tick()]);

  const down = fakeRuntime();
  const failing = Socket.open((url) => new NativeSocket(url, { runtime: down }), URL_EXT, timers, 5000);
  down.say({ type: 'native_closed', code: 0, status: 0, reason: 'refused' });
  await assert.rejects(failing, (err) => err instanceof BridgeError && err.code === 'not_running');

  // No native messaging at all: the constructor throws, Socket.open says not_running.
  await assert.rejects(Socket.open((url) => new NativeSocket(url, { runtime: {} }), URL_EXT, timers, 5000),
    { code: 'not_running' });
});
