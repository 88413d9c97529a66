// SPDX-License-Identifier: GPL-3.0-or-later
// One WebSocket to the app as the bridge client reads it: opened with a time limit, read message by
// message during a handshake (pairing or auth), then handed to a push handler; and the error every
// failure on it becomes. Shared by the pairing and the connection, which open their own sockets.

export const PROTOCOL = 1;
/** How long one step of a handshake (open, challenge, ack, a pairing message) may take. */
export const HANDSHAKE_TIMEOUT_MS = 10000;

/** A failure with a protocol error code (protocol-errors.js) or one of the client's own. */
export class BridgeError extends Error {
  constructor(code, message, data) {
    super(message ?? code);
    this.name = 'BridgeError';
    this.code = code;
    if (data !== undefined) this.data = data;
  }
}

function closedError(info) {
  const err = new BridgeError('closed', `connection closed (${info.code})`);
  err.closeCode = info.code;
  return err;
}

/**
 * One WebSocket seen through the standard browser API (addEventListener, send, close), which the
 * npm `ws` package offers too. Messages queue until a handler is set, so the handshake reads them
 * one by one and the session then switches to push delivery.
 */
export class Socket {
  static open(createSocket, url, timers, timeoutMs) {
    return new Promise((resolve, reject) => {
      let ws;
      try {
        ws = createSocket(url);
      } catch (err) {
        reject(new BridgeError('not_running', String(err?.message ?? err)));
        return;
      }
      const sock = new Socket(ws);
      const timer = timers.setTimeout(() => {
        sock.close(1000);
        reject(new BridgeError('not_running', 'the connection did not open in time'));
      }, timeoutMs);
      ws.addEventListener('open', () => {
        timers.clearTimeout(timer);
        resolve(sock);
      }, { once: true });
      // A refused connection (nothing listening, or an HTTP 403) closes before it opened.
      sock.closed.then((info) => {
        timers.clearTimeout(timer);
        reject(new BridgeError('not_running', `could not connect (${info.code})`));
      });
    });
  }

  #queue = [];
  #waiters = [];
  #handler = null;

  constructor(ws) {
    this.ws = ws;
    this.closeInfo = null;
    this.closed = new Promise((resolve) => {
      ws.addEventListener('close', (event) => {
        this.closeInfo = { code: event.code, reason: event.reason ?? '' };
        for (const w of this.#waiters.splice(0)) w.reject(closedError(this.closeInfo));
        resolve(this.closeInfo);
      }, { once: true });
    });
    // An error is always followed by a close; listening keeps Node's `ws` from throwing it.
    ws.addEventListener('error', () => {});
    ws.addEventListener('message', (event) => {
      const text = typeof event.data === 'string' ? event.data : null;
      if (this.#handler) this.#handler(text);
      else if (this.#waiters.length) this.#waiters.shift().resolve(text);
      else this.#queue.push(text);
    });
  }

  get isOpen() {
    return this.ws.readyState === 1;
  }

  /** The next message parsed as JSON; rejects on close or after timeoutMs. */
  async next(timers, timeoutMs) {
    const text = await new Promise((resolve, reject) => {
      if (this.#queue.length) {
        resolve(this.#queue.shift());
        return;
      }
      if (this.closeInfo) {
        reject(closedError(this.closeInfo));
        return;
      }
      const waiter = {
        resolve: (v) => { timers.clearTimeout(timer); resolve(v); },
        reject: (e) => { timers.clearTimeout(timer); reject(e); },
      };
      const timer = timers.setTimeout(() => {
        this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
        reject(new BridgeError('timeout', `no message within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#waiters.push(waiter);
    });
    try {
      const msg = JSON.parse(text);
      if (msg && typeof msg === 'object' && typeof msg.type === 'string') return msg;
    } catch {
      // fall through
    }
    throw new BridgeError('protocol', 'the app sent a frame that is not a protocol message');
  }

  setHandler(handler) {
    this.#handler = handler;
    for (const text of this.#queue.splice(0)) handler(text);
  }

  send(text) {
    if (this.isOpen) this.ws.send(text);
  }

  close(code = 1000, reason) {
    if (this.ws.readyState === 0 || this.ws.readyState === 1) {
      try {
        this.ws.close(code, reason);
      } catch {
        this.ws.close();
      }
    }
    return this.closed;
  }
}
