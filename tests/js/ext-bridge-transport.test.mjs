// SPDX-License-Identifier: GPL-3.0-or-later
// The transport rule (extension/lib/bridge-transport.js, docs/extension.md "Transport") with
// scripted sockets: "auto" falls back to the native host only when the WebSocket cannot connect
// at all, never on what the app answers after an open (4401, 4403, a pairing refused); the one
// that worked goes first next time, so two working transports never alternate; "websocket" and
// "native" use one alone; Firefox's "auto" is the WebSocket alone; and the setting's storage.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { TransportChooser, transportOrder } from '../../extension/lib/bridge-transport.js';
import { BridgeError, Socket } from '../../extension/lib/bridge-socket.js';
import {
  getTransport, parseTransport, setTransport, transportChange, TRANSPORT_KEY,
} from '../../extension/lib/settings.js';
import { memoryStorageArea } from '../../extension/lib/keystore.js';

/** A WebSocket-like object the test opens, fails or closes. */
class Scripted {
  #l = { open: [], message: [], error: [], close: [] };
  constructor(name, url) {
    Object.assign(this, { name, url, readyState: 0, sent: [], closedWith: null });
  }
  addEventListener(type, fn, opts) {
    const entry = { fn, once: Boolean(opts?.once) };
    this.#l[type].push(entry);
  }
  #fire(type, e = {}) {
    const list = this.#l[type];
    this.#l[type] = list.filter((x) => !x.once);
    for (const { fn } of list) fn({ type, ...e });
  }
  open() { this.readyState = 1; this.#fire('open'); }
  fail() { this.readyState = 3; this.#fire('error'); this.#fire('close', { code: 1006, reason: '' }); }
  serverClose(code, reason = '') { this.readyState = 3; this.#fire('close', { code, reason, wasClean: true }); }
  receive(data) { this.#fire('message', { data }); }
  send(t) { this.sent.push(t); }
  close(code, reason) { this.closedWith = code ?? 1005; this.serverClose(code ?? 1005, reason); }
}

function world({ mode = 'auto', nativeAvailable = true, nativeThrows = false } = {}) {
  const made = [];
  const maker = (name) => (url) => {
    if (name === 'native' && nativeThrows) throw new Error('native messaging is not available to this extension');
    const s = new Scripted(name, url);
    made.push(s);
    return s;
  };
  const chooser = new TransportChooser({ makers: { websocket: maker('websocket'), native: maker('native') }, mode, nativeAvailable });
  return { chooser, made, last: () => made.at(-1) };
}

const timers = { setTimeout: (fn, ms) => setTimeout(fn, ms), clearTimeout: (id) => clearTimeout(id) };
const URL_EXT = 'ws://127.0.0.1:64333/extension';

test('the orders: auto is the WebSocket first, then the native host; each explicit choice is one alone', () => {
  assert.deepEqual(transportOrder('auto'), ['websocket', 'native']);
  assert.deepEqual(transportOrder('auto', { preferred: 'native' }), ['native', 'websocket']);
  assert.deepEqual(transportOrder('auto', { nativeAvailable: false }), ['websocket'], 'Firefox');
  assert.deepEqual(transportOrder('websocket', { preferred: 'native' }), ['websocket']);
  assert.deepEqual(transportOrder('native'), ['native']);
});

test('auto: a WebSocket that cannot connect falls back to the native host, in the same attempt', async () => {
  const { chooser, made } = world();
  const opening = Socket.open(chooser.createSocket, URL_EXT, timers, 5000);
  assert.deepEqual(made.map((s) => s.name), ['websocket']);
  made[0].fail(); // blocked by a policy, refused, nothing listening: it never opened
  assert.deepEqual(made.map((s) => s.name), ['websocket', 'native']);
  assert.equal(made[1].url, URL_EXT);
  made[1].open();
  const sock = await opening;
  assert.equal(sock.ws.transport, 'native');
  sock.send('{"type":"auth"}');
  assert.deepEqual(made[1].sent, ['{"type":"auth"}']);
  made[1].receive('{"type":"hello_ack"}');
  assert.deepEqual(await sock.next(timers, 1000), { type: 'hello_ack' });
  assert.equal(chooser.preferred, 'native', 'the one that worked goes first next time');
});

test('auto: after an open, the app\'s answers are not reasons to switch (4401, 4403, a pairing refused, a drop)', async () => {
  for (const code of [4401, 4403, 4409, 1000, 1006]) {
    const { chooser, made } = world();
    const sock = await (async () => {
      const opening = Socket.open(chooser.createSocket, URL_EXT, timers, 5000);
      made[0].open();
      return opening;
    })();
    made[0].serverClose(code, 'the app said so');
    const info = await sock.closed;
    assert.equal(info.code, code);
    assert.deepEqual(made.map((s) => s.name), ['websocket'], `no native host after ${code}`);
    assert.equal(chooser.preferred, 'websocket');
  }
});

test('auto does not flap: the working transport stays first until it cannot connect', async () => {
  const { chooser, made, last } = world();
  const connect = async (steps) => {
    const opening = Socket.open(chooser.createSocket, URL_EXT, timers, 5000);
    for (const step of steps) last()[step]();
    return opening.then((s) => s.ws.transport, (e) => e.code);
  };
  assert.equal(await connect(['fail', 'open']), 'native');
  // Both would work now: the native host stays, connection after connection.
  assert.equal(await connect(['open']), 'native');
  assert.equal(await connect(['open']), 'native');
  assert.deepEqual(made.slice(2).map((s) => s.name), ['native', 'native'], 'the WebSocket was not tried again');
  // The app is down: both are tried, neither opens, nothing changes.
  assert.equal(await connect(['fail', 'fail']), 'not_running');
  assert.equal(chooser.preferred, 'native');
  // The native host stops working (uninstalled) while the WebSocket works: back to it, and it stays.
  assert.equal(await connect(['fail', 'open']), 'websocket');
  assert.equal(await connect(['open']), 'websocket');
  assert.equal(made.at(-1).name, 'websocket');
});

test('"websocket" never starts the native host; "native" never opens a WebSocket', async () => {
  const ws = world({ mode: 'websocket' });
  const a = Socket.open(ws.chooser.createSocket, URL_EXT, timers, 5000);
  ws.made[0].fail();
  await assert.rejects(a, (e) => e instanceof BridgeError && e.code === 'not_running');
  assert.deepEqual(ws.made.map((s) => s.name), ['websocket']);

  const nat = world({ mode: 'native' });
  const b = Socket.open(nat.chooser.createSocket, URL_EXT, timers, 5000);
  nat.made[0].fail();
  await assert.rejects(b, { code: 'not_running' });
  assert.deepEqual(nat.made.map((s) => s.name), ['native']);
});

test('Firefox (no native host for it): auto is the WebSocket alone', async () => {
  const { chooser, made } = world({ nativeAvailable: false });
  const opening = Socket.open(chooser.createSocket, URL_EXT, timers, 5000);
  made[0].fail();
  await assert.rejects(opening, { code: 'not_running' });
  assert.deepEqual(made.map((s) => s.name), ['websocket']);
});

test('the native host\'s problem is kept for the popup, and cleared once it connects or the choice changes', async () => {
  const { chooser } = world({ mode: 'native', nativeThrows: true });
  await assert.rejects(Socket.open(chooser.createSocket, URL_EXT, timers, 5000), { code: 'not_running' });
  assert.deepEqual(chooser.describe().problem, { kind: 'unavailable', message: 'native messaging is not available to this extension' });
  const w = world();
  const o2 = Socket.open(w.chooser.createSocket, URL_EXT, timers, 5000);
  w.made[0].fail();
  Object.assign(w.made[1], { failure: 'Specified native messaging host not found.', failureKind: 'host' });
  w.made[1].fail();
  await assert.rejects(o2, { code: 'not_running' });
  assert.deepEqual(w.chooser.describe().problem, { kind: 'host', message: 'Specified native messaging host not found.' });
  assert.equal(w.chooser.setMode('websocket'), true);
  assert.equal(w.chooser.describe().problem, null);
  assert.equal(w.chooser.setMode('websocket'), false, 'the same choice again changes nothing');
  assert.equal(w.chooser.setMode('nonsense'), true, 'a damaged value is auto');
  assert.equal(w.chooser.mode, 'auto');
});

test('closed by the client while connecting: no fallback after that', async () => {
  const { chooser, made } = world();
  const ws = chooser.createSocket(URL_EXT);
  const closes = [];
  ws.addEventListener('close', (e) => closes.push(e.code));
  ws.close(1000);
  assert.deepEqual(closes, [1000]);
  assert.deepEqual(made.map((s) => s.name), ['websocket']);
});

test('settings: the choice is kept in storage.local; a damaged value reads as auto; changes are seen', async () => {
  const local = memoryStorageArea();
  assert.equal(await getTransport(local), 'auto');
  assert.equal(await setTransport(local, 'native'), 'native');
  assert.equal(await getTransport(local), 'native');
  await assert.rejects(setTransport(local, 'carrier-pigeon'), RangeError);
  assert.equal(await getTransport(local), 'native', 'nothing saved');
  await local.set({ [TRANSPORT_KEY]: 42 });
  assert.equal(await getTransport(local), 'auto');
  assert.equal(parseTransport('websocket'), 'websocket');
  assert.equal(parseTransport('WebSocket'), null);
  assert.equal(transportChange({ [TRANSPORT_KEY]: { newValue: 'native' } }, 'local'), 'native');
  assert.equal(transportChange({ [TRANSPORT_KEY]: { newValue: 'x' } }, 'local'), 'auto');
  assert.equal(transportChange({ [TRANSPORT_KEY]: { newValue: 'native' } }, 'session'), undefined);
  assert.equal(transportChange({ bridgePort: { newValue: 1 } }, 'local'), undefined);
});
