// SPDX-License-Identifier: GPL-3.0-or-later
// A WebSocket to the app's bridge that travels through Chaperone's native-messaging host
// (native-host/, docs/protocol.md "Native messaging") instead of the browser's own socket: the
// same surface bridge-socket.js reads from `new WebSocket(url)` (readyState, addEventListener,
// send, close; open/message/error/close events), over `runtime.connectNative`. One port is one
// socket, as one host process is one WebSocket.
//
// What the host says of its own is turned into the events a WebSocket would fire:
//   native_opened            → open (the host's socket to the bridge is open)
//   native_closed {code: 0}  → error, then close 1006 (it never opened: nothing listening, or 403)
//   native_closed {code: n}  → close n, with the bridge's reason
//   native_error {code}      → error, then close (the host refused something and is ending)
//   the port disconnecting   → error, then close 1006 (host not installed, forbidden, crashed)
// Everything else is a message of the bridge, relayed as is.

import { SocketEvents } from './socket-events.js';

export const NATIVE_HOST = 'io.github.chaperone.native';

const CONNECTING = 0;
const OPEN = 1;
const CLOSING = 2;
const CLOSED = 3;

// A native_error's code as the close code a WebSocket would have seen for the same fault.
const ERROR_CLOSE_CODES = { invalid_params: 1007, unsupported: 1003, too_large: 1009 };
const PATHS = new Set(['/extension', '/pairing']);

/** The path of a bridge URL (`ws://127.0.0.1:<port>/extension`); anything else throws. */
function pathOf(url) {
  let parsed;
  try {
    parsed = new URL(url);
  } catch {
    throw new SyntaxError(`not a URL: ${url}`);
  }
  if (parsed.protocol !== 'ws:' || !PATHS.has(parsed.pathname) || parsed.search || parsed.hash) {
    throw new SyntaxError(`the native host reaches only the bridge's two doors, not ${url}`);
  }
  return parsed.pathname;
}

export class NativeSocket extends SocketEvents {
  static CONNECTING = CONNECTING;
  static OPEN = OPEN;
  static CLOSING = CLOSING;
  static CLOSED = CLOSED;

  #port;

  /**
   * `runtime`: chrome.runtime (or a stand-in with connectNative); `host`: the host's name.
   * Throws when native messaging is not there at all (no `nativeMessaging` permission), as
   * `new WebSocket` throws for a URL it will not open.
   */
  constructor(url, { runtime = globalThis.chrome?.runtime, host = NATIVE_HOST } = {}) {
    super();
    const path = pathOf(url);
    if (typeof runtime?.connectNative !== 'function') {
      throw new Error('native messaging is not available to this extension');
    }
    this.url = url;
    this.transport = 'native';
    this.readyState = CONNECTING;
    this.hostPort = null; // the bridge port the host dialled, from native_opened
    this.failure = null; // why it ended without opening, in the browser's or the host's words
    // 'unreachable' (nothing listening), 'refused' (an HTTP answer at the upgrade) or 'host' (the
    // host is not installed, not allowed for this extension, refused the caller, or crashed).
    this.failureKind = null;
    this.#port = runtime.connectNative(host);
    this.#port.onMessage.addListener((message) => this.#onMessage(message));
    this.#port.onDisconnect.addListener((port) => this.#onDisconnect(port, runtime));
    // No port: the host dials the one it knows (its environment, the app's setting, 64333), never
    // one the extension names (docs/protocol.md, "native_open").
    this.#port.postMessage({ type: 'native_open', path });
  }

  /** `text` is the JSON text a WebSocket would send; the port carries it as the object it is. */
  send(text) {
    if (this.readyState === CONNECTING) throw new Error('InvalidStateError: still connecting');
    if (this.readyState !== OPEN) return;
    // Native messaging carries JSON values, not text: the browser serializes the object again.
    // Signatures cover field values (docs/protocol.md §2), never a frame's bytes.
    this.#port.postMessage(JSON.parse(text));
  }

  close(code = 1000, reason = '') {
    if (this.readyState === CLOSING || this.readyState === CLOSED) return;
    this.readyState = CLOSING;
    // The host sees the port go, closes its socket as "going away" (1001) and exits.
    try {
      this.#port.disconnect();
    } catch {
      // already gone
    }
    // The browser fires no onDisconnect for the side that disconnected: the close is ours to say.
    queueMicrotask(() => this.#finish({ code, reason, wasClean: true }));
  }

  #finish({ code, reason, wasClean }) {
    if (this.readyState === CLOSED) return;
    this.readyState = CLOSED;
    this.emit('close', { code, reason: reason ?? '', wasClean });
  }

  #fail(failure, code, reason, kind = 'host') {
    if (this.readyState === CLOSED) return;
    if (this.readyState === CONNECTING) {
      this.failure = failure;
      this.failureKind = kind;
    }
    try {
      this.#port.disconnect();
    } catch {
      // already gone
    }
    this.emit('error', { message: failure });
    this.#finish({ code, reason, wasClean: false });
  }

  #onMessage(message) {
    if (this.readyState === CLOSED || this.readyState === CLOSING) return;
    const type = message && typeof message === 'object' ? message.type : undefined;
    if (type === 'native_opened' && this.readyState === CONNECTING) {
      this.readyState = OPEN;
      this.hostPort = Number.isInteger(message.port) ? message.port : null;
      this.emit('open');
      return;
    }
    if (type === 'native_closed') {
      const code = Number.isInteger(message.code) ? message.code : 1006;
      const reason = typeof message.reason === 'string' ? message.reason : '';
      if (code === 0 || this.readyState === CONNECTING) {
        // Never opened: `status` 403 is the bridge's Host/Origin gate, 0 is nothing listening.
        const status = Number.isInteger(message.status) ? message.status : 0;
        this.#fail(status ? `the bridge answered HTTP ${status}` : 'nothing answered on the bridge port', 1006, reason,
          status ? 'refused' : 'unreachable');
        return;
      }
      try {
        this.#port.disconnect();
      } catch {
        // already gone
      }
      this.#finish({ code, reason, wasClean: code !== 1006 });
      return;
    }
    if (type === 'native_error') {
      const code = typeof message.code === 'string' ? message.code : 'internal';
      this.#fail(`the native host refused: ${code}${typeof message.message === 'string' ? ` (${message.message})` : ''}`,
        ERROR_CLOSE_CODES[code] ?? 1006, `native host: ${code}`);
      return;
    }
    if (this.readyState !== OPEN) {
      // Only the host speaks before native_opened; anything else means a host of another kind.
      this.#fail('the native host did not say the socket opened', 1006, 'unexpected message');
      return;
    }
    this.emit('message', { data: JSON.stringify(message) });
  }

  #onDisconnect(port, runtime) {
    // Chrome says why in runtime.lastError during this call, Firefox in port.error.
    const why = runtime?.lastError?.message ?? port?.error?.message ?? null;
    if (this.readyState === CLOSED) return;
    this.#fail(why ?? 'the native host ended', 1006, why ?? 'the native host ended');
  }
}
