// SPDX-License-Identifier: GPL-3.0-or-later
// Calls both ways over the connection to the app (docs/protocol.md §6): the engine's requests to
// this browser — ids, at most maxInFlight at once (busy beyond), cancellation, answers — and ours
// to the engine, which wait here for a free slot, time out and can be cancelled. The connection
// itself (socket, state, reconnecting) is the client's; these only keep the books.

import { isErrorCode } from './protocol-errors.js';
import { BridgeError } from './bridge-socket.js';

/** A handler's exception as a wire error; anything that is not a protocol error says nothing of the page. */
export function toWireError(err, method = 'the request') {
  if (err && typeof err.code === 'string' && isErrorCode(err.code)) {
    return {
      code: err.code,
      message: String(err.message ?? err.code),
      ...(err.data !== undefined && err.data !== null && typeof err.data === 'object' ? { data: err.data } : {}),
    };
  }
  return { code: 'internal', message: `unexpected failure in ${method}` };
}

/**
 * The engine's requests. `answer(method, params, {id, signal, timeoutMs})` gives a result (or
 * throws); `connected()` says whether a connection is up; `send(message)` sends a protocol message
 * (throws BridgeError when it cannot go, e.g. too_large); `sendError(code, message)` a bare error
 * frame; `limits()` the connection's limits; `stats` counts busy answers and the most in flight.
 */
export class IncomingRequests {
  #incoming = new Map();
  #answer;
  #connected;
  #send;
  #sendError;
  #limits;
  #stats;

  constructor({ answer, connected, send, sendError, limits, stats }) {
    this.#answer = answer;
    this.#connected = connected;
    this.#send = send;
    this.#sendError = sendError;
    this.#limits = limits;
    this.#stats = stats;
  }

  /** A `request` frame. */
  take(msg) {
    const { id } = msg;
    if (typeof id !== 'string' || id.length === 0 || id.length > 128) {
      this.#sendError('invalid_params', 'a request id is a non-empty string of at most 128 characters');
      return;
    }
    if (this.#incoming.has(id)) {
      this.#respond(id, { error: { code: 'duplicate_id', message: `request ${id} is already in flight` } });
      return;
    }
    const { maxInFlight } = this.#limits();
    if (this.#incoming.size >= maxInFlight) {
      this.#stats.busyAnswered++;
      this.#respond(id, { error: { code: 'busy', message: `${maxInFlight} requests already in flight` } });
      return;
    }
    if (typeof msg.method !== 'string' || msg.method === '') {
      this.#respond(id, { error: { code: 'invalid_params', message: 'a request names its method' } });
      return;
    }
    const params = msg.params && typeof msg.params === 'object' && !Array.isArray(msg.params) ? msg.params : {};
    const entry = { controller: new AbortController() };
    this.#incoming.set(id, entry);
    this.#stats.maxEngineInFlight = Math.max(this.#stats.maxEngineInFlight, this.#incoming.size);
    const ctx = { id, signal: entry.controller.signal, timeoutMs: msg.timeoutMs };
    // Async, so that a handler that throws at once is answered like one that rejects.
    const run = async () => this.#answer(msg.method, params, ctx);
    run().then(
      (result) => this.#finish(id, entry, { result: result === undefined ? null : result }),
      (err) => this.#finish(id, entry, { error: toWireError(err, msg.method) }),
    );
  }

  #respond(id, body) {
    if (!this.#connected()) return;
    try {
      this.#send({ type: 'response', id, ...body });
    } catch (err) {
      // A result too large to send still gets an answer, so the engine's call does not hang.
      const code = err instanceof BridgeError && isErrorCode(err.code) ? err.code : 'internal';
      this.#send({ type: 'response', id, error: { code, message: err.message } });
    }
  }

  #finish(id, entry, body) {
    if (this.#incoming.get(id) !== entry) return; // cancelled or disconnected: already answered
    this.#incoming.delete(id);
    this.#respond(id, body);
  }

  /** A `cancel` frame. */
  cancel(msg) {
    const entry = this.#incoming.get(msg.id);
    if (!entry) return;
    // Answer at once and free the slot, so the engine's window and ours agree.
    this.#incoming.delete(msg.id);
    entry.controller.abort(new BridgeError('cancelled', 'cancelled by Chaperone'));
    this.#respond(msg.id, { error: { code: 'cancelled', message: 'cancelled by Chaperone' } });
  }

  /** The connection closed: every request still running is aborted, and none is answered. */
  abortAll() {
    for (const [id, entry] of this.#incoming) {
      entry.controller.abort(new BridgeError('cancelled', 'the connection closed'));
      this.#incoming.delete(id);
    }
  }
}

/**
 * Our requests to the engine. `connected()` says whether a connection is up; `send(message)`
 * sends a protocol message (throws BridgeError when it cannot go, e.g. too_large); `sendRaw(text)`
 * sends a frame as it is; `limits()` and `timers` as the client's.
 */
export class OutgoingRequests {
  #outgoing = new Map();
  #queued = []; // our requests waiting for a free slot (the engine takes at most maxInFlight)
  #nextRequestId = 0;
  #connected;
  #send;
  #sendRaw;
  #limits;
  #timers;

  constructor({ connected, send, sendRaw, limits, timers }) {
    this.#connected = connected;
    this.#send = send;
    this.#sendRaw = sendRaw;
    this.#limits = limits;
    this.#timers = timers;
  }

  /** BridgeClient.request(): resolves with the result or rejects with BridgeError(code). */
  call(method, params, { timeoutMs, signal }) {
    return new Promise((resolve, reject) => {
      if (!this.#connected()) {
        reject(new BridgeError('device_offline', 'not connected to Chaperone'));
        return;
      }
      const id = `x${++this.#nextRequestId}`;
      const job = { id, method, params, timeoutMs, resolve, reject, timer: null, signal };
      const fail = (err) => {
        if (job.timer !== null) this.#timers.clearTimeout(job.timer);
        const wasSent = this.#outgoing.delete(id);
        this.#queued = this.#queued.filter((q) => q !== job);
        if (wasSent) this.#sendRaw(JSON.stringify({ type: 'cancel', id }));
        reject(err);
        this.pump();
      };
      job.fail = fail;
      job.timer = this.#timers.setTimeout(() => fail(new BridgeError('timeout', `${method} got no response in ${timeoutMs} ms`)), timeoutMs);
      signal?.addEventListener('abort', () => fail(new BridgeError('cancelled', 'cancelled')), { once: true });
      this.#queued.push(job);
      this.pump();
    });
  }

  /** Sends waiting requests while a connection is up and the engine has free slots. */
  pump() {
    while (this.#connected() && this.#queued.length && this.#outgoing.size < this.#limits().maxInFlight) {
      const job = this.#queued.shift();
      this.#outgoing.set(job.id, {
        resolve: (v) => { this.#timers.clearTimeout(job.timer); job.resolve(v); },
        reject: (e) => { this.#timers.clearTimeout(job.timer); job.reject(e); },
      });
      try {
        this.#send({ type: 'request', id: job.id, method: job.method, params: job.params, timeoutMs: job.timeoutMs });
      } catch (err) {
        this.#outgoing.get(job.id).reject(err);
        this.#outgoing.delete(job.id);
      }
    }
  }

  /** A `response` frame. */
  answer(msg) {
    const pending = this.#outgoing.get(msg.id);
    if (!pending) return; // an answer to a call we already gave up on
    this.#outgoing.delete(msg.id);
    if (msg.error) {
      pending.reject(new BridgeError(isErrorCode(msg.error.code) ? msg.error.code : 'internal',
        msg.error.message, msg.error.data));
    } else {
      pending.resolve(msg.result);
    }
    this.pump();
  }

  /** The connection closed: what was sent fails; what still waits goes on the next connection. */
  failSent() {
    for (const pending of this.#outgoing.values()) pending.reject(new BridgeError('device_offline', 'the connection closed'));
    this.#outgoing.clear();
  }
}
