// SPDX-License-Identifier: GPL-3.0-or-later
// Which way the bridge client reaches the app: the browser's own WebSocket to 127.0.0.1, or the
// native-messaging host (native-socket.js), as the person chose in Options — "auto" (the default),
// "websocket" or "native". The client is given `createSocket` from here and never knows which it
// got: the protocol is the same on both (docs/protocol.md, "Native messaging").
//
// The rule for "auto" (docs/extension.md, "Transport"):
//   - Each socket tries the transports in order and falls back to the next only when one cannot
//     connect at all: it closed (or could not be made) before it opened — blocked by a policy or
//     a sandbox, nothing listening, an HTTP refusal at the upgrade.
//   - Once a socket is open it is what that connection uses. Whatever comes after the open — a
//     4401 auth refusal, a 4403 revocation, a pairing rejected or locked, a dropped connection —
//     is the app's answer (or its absence) and never a reason to switch.
//   - The order is the WebSocket first, except after the native host opened where the WebSocket
//     could not: then the native host goes first, and the WebSocket is tried again only when the
//     native host cannot connect. So two working transports never alternate; a switch happens
//     only when the one in use cannot even connect. A new worker starts from the WebSocket again.
//   - Firefox does not tell the host the extension's origin, so there "auto" is the WebSocket
//     alone (native-host/README.md, "Firefox").

import { SocketEvents } from './socket-events.js';

export const TRANSPORT_MODES = Object.freeze(['auto', 'websocket', 'native']);
export const DEFAULT_TRANSPORT = 'auto';

/** The transports one socket tries, in order, for `mode`. */
export function transportOrder(mode, { preferred = 'websocket', nativeAvailable = true } = {}) {
  if (mode === 'websocket') return ['websocket'];
  if (mode === 'native') return ['native'];
  if (!nativeAvailable) return ['websocket'];
  return preferred === 'native' ? ['native', 'websocket'] : ['websocket', 'native'];
}

/**
 * A WebSocket-like object over the first transport of `order` that opens. Until one opens, a
 * candidate's error and close are its own business (the next is tried); after that, its events
 * are this socket's. `hooks.opened(name)` and `hooks.failed(name, socketOrError)` tell the chooser.
 */
class ChosenSocket extends SocketEvents {
  #makers;
  #order;
  #next = 0;
  #hooks;
  #current = null;
  #currentName = null;
  #opened = false;
  #closing = false;

  constructor(url, order, makers, hooks) {
    super();
    this.url = url;
    this.tried = [];
    this.#makers = makers;
    this.#order = order;
    this.#hooks = hooks;
    const error = this.#tryNext();
    // Nothing could even be made (no WebSocket, no native messaging): throw as `new WebSocket` does.
    if (error) throw error;
  }

  get readyState() {
    return this.#current?.readyState ?? 3;
  }

  /** 'websocket' or 'native' once open, else null. */
  get transport() {
    return this.#opened ? this.#currentName : null;
  }

  /** The bridge port the native host dialled (it knows it, the extension need not), else null. */
  get hostPort() {
    return this.#opened ? this.#current.hostPort ?? null : null;
  }

  send(data) {
    this.#current.send(data);
  }

  close(code, reason) {
    // Closed by the client (a timeout, a stop): no fallback after this.
    this.#closing = true;
    if (code === undefined) this.#current?.close();
    else this.#current?.close(code, reason);
  }

  /** Starts the next candidate; returns undefined once one is under way, else the last error. */
  #tryNext() {
    let lastError = new Error('no transport to try');
    while (this.#next < this.#order.length) {
      const name = this.#order[this.#next++];
      let ws;
      try {
        ws = this.#makers[name](this.url);
      } catch (err) {
        this.#hooks.failed(name, err);
        lastError = err;
        continue;
      }
      this.tried.push(name);
      this.#current = ws;
      this.#currentName = name;
      this.#watch(ws, name);
      return undefined;
    }
    return lastError;
  }

  #watch(ws, name) {
    const mine = () => ws === this.#current;
    ws.addEventListener('open', () => {
      if (!mine()) return;
      this.#opened = true;
      this.#hooks.opened(name);
      this.emit('open');
    }, { once: true });
    ws.addEventListener('message', (event) => {
      if (mine() && this.#opened) this.emit('message', { data: event.data });
    });
    ws.addEventListener('error', (event) => {
      if (mine() && this.#opened) this.emit('error', { message: event?.message });
    });
    ws.addEventListener('close', (event) => {
      if (!mine()) return;
      if (!this.#opened && !this.#closing) {
        this.#hooks.failed(name, ws);
        if (this.#tryNext() === undefined) return;
        this.emit('error', {});
      }
      this.emit('close', { code: event.code, reason: event.reason ?? '', wasClean: event.wasClean });
    }, { once: true });
  }
}

/**
 * The person's choice and what it has learned: `createSocket` for BridgeClient, `setMode` when
 * the setting changes, `describe()` for the popup and the options page.
 * `makers`: {websocket: (url) => WebSocket, native: (url) => NativeSocket}.
 */
export class TransportChooser {
  constructor({ makers, mode = DEFAULT_TRANSPORT, nativeAvailable = true, log = () => {} }) {
    this.makers = makers;
    this.nativeAvailable = nativeAvailable;
    this.log = log;
    this.mode = TRANSPORT_MODES.includes(mode) ? mode : DEFAULT_TRANSPORT;
    this.preferred = 'websocket';
    this.problem = null; // {kind, message}: why the native host last failed to connect
    this.createSocket = (url) => new ChosenSocket(url, this.order(), this.makers, {
      opened: (name) => this.#opened(name),
      failed: (name, what) => this.#failed(name, what),
    });
  }

  /** A new choice starts afresh: the WebSocket first again, no stale problem shown. */
  setMode(mode) {
    const next = TRANSPORT_MODES.includes(mode) ? mode : DEFAULT_TRANSPORT;
    if (next === this.mode) return false;
    this.mode = next;
    this.preferred = 'websocket';
    this.problem = null;
    return true;
  }

  order() {
    return transportOrder(this.mode, { preferred: this.preferred, nativeAvailable: this.nativeAvailable });
  }

  describe() {
    return {
      mode: this.mode,
      nativeAvailable: this.nativeAvailable,
      preferred: this.preferred,
      problem: this.problem ? { ...this.problem } : null,
    };
  }

  #opened(name) {
    if (this.mode === 'auto' && this.preferred !== name) this.log('transport', `now ${name} first`);
    if (this.mode === 'auto') this.preferred = name;
    if (name === 'native') this.problem = null;
  }

  #failed(name, what) {
    this.log('transport', `${name} did not connect`);
    if (name !== 'native') return;
    // A thrown error (no native messaging at all) or the socket's own account of its failure.
    const message = what instanceof Error ? what.message : what?.failure ?? 'the native host did not connect';
    const kind = what instanceof Error ? 'unavailable' : what?.failureKind ?? 'host';
    this.problem = { kind, message };
  }
}
