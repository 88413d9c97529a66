// SPDX-License-Identifier: GPL-3.0-or-later
// The wire under ChaperoneClient: its error types and RawConnection, one WebSocket read frame by frame.

import { EventEmitter } from 'node:events';

import WebSocket, { Sender } from 'ws';

import { LIMITS } from '../../extension/lib/protocol.js';

/**
 * A failure with a protocol error code (see extension/lib/protocol-errors.js) or one of the
 * client's own: closed (socket closed; closeCode says how), engine_mismatch, http_status, protocol.
 */
export class ChaperoneError extends Error {
  constructor(code, message, data) {
    super(message ?? code);
    this.name = 'ChaperoneError';
    this.code = code;
    if (data !== undefined) this.data = data;
  }
}

/** Pairing ended without approval: outcome is rejected, expired, error or locked. */
export class PairingError extends ChaperoneError {
  constructor(outcome, code, message, extra = {}) {
    super(code, message ?? `pairing ${outcome}: ${code}`);
    this.name = 'PairingError';
    this.outcome = outcome;
    Object.assign(this, extra);
  }
}

export function closedError(info) {
  const err = new ChaperoneError('closed', `connection closed (${info.code}${info.reason ? ` ${info.reason}` : ''})`);
  err.closeCode = info.code;
  err.closeReason = info.reason;
  return err;
}

/**
 * One WebSocket with the Origin/Host the test chooses. Messages queue until a handler is set, so
 * the handshake can be read step by step and the session then switches to push delivery.
 */
export class RawConnection extends EventEmitter {
  /**
   * Opens ws://host:port/path. An HTTP refusal rejects with ChaperoneError('http_status') whose
   * statusCode is the server's status (403 for a bad Origin or Host).
   */
  static open({ port, path, origin, host = '127.0.0.1', hostHeader, headers = {}, timeoutMs = 5000 }) {
    return new Promise((resolve, reject) => {
      let settled = false;
      const allHeaders = hostHeader === undefined ? headers : { ...headers, Host: hostHeader };
      const ws = new WebSocket(`ws://${host}:${port}${path}`, {
        origin,
        headers: allHeaders,
        handshakeTimeout: timeoutMs,
        // The engine never sends a frame over its own limit; holding it to that catches one that does.
        maxPayload: LIMITS.maxFrameBytes,
      });
      ws.on('unexpected-response', (req, res) => {
        settled = true;
        const err = new ChaperoneError('http_status', `HTTP ${res.statusCode} instead of a WebSocket upgrade`);
        err.statusCode = res.statusCode;
        res.resume();
        req.destroy();
        reject(err);
      });
      // Kept for the socket's whole life: an 'error' with no listener would crash the test run.
      ws.on('error', (err) => {
        if (!settled) {
          settled = true;
          reject(err);
        }
      });
      ws.once('open', () => {
        settled = true;
        resolve(new RawConnection(ws));
      });
    });
  }

  #queue = [];
  #waiters = [];
  #handler = null;

  constructor(ws) {
    super();
    this.ws = ws;
    this.closeInfo = null;
    this.closed = new Promise((resolve) => {
      ws.on('close', (code, reason) => {
        this.closeInfo = { code, reason: reason.toString() };
        for (const w of this.#waiters.splice(0)) w.reject(closedError(this.closeInfo));
        resolve(this.closeInfo);
        this.emit('close', this.closeInfo);
      });
    });
    ws.on('message', (data, isBinary) => {
      const text = isBinary ? null : data.toString('utf8');
      if (this.#handler) this.#handler(text, data);
      else if (this.#waiters.length) this.#waiters.shift().resolve(text);
      else this.#queue.push(text);
    });
  }

  get isOpen() {
    return this.ws.readyState === WebSocket.OPEN;
  }

  /** The next message parsed as JSON; rejects on close (ChaperoneError 'closed') or timeout. */
  async next({ timeoutMs = 5000 } = {}) {
    const text = await this.nextText({ timeoutMs });
    try {
      return JSON.parse(text);
    } catch {
      throw new ChaperoneError('protocol', `the engine sent something that is not JSON: ${String(text).slice(0, 80)}`);
    }
  }

  nextText({ timeoutMs = 5000 } = {}) {
    if (this.#queue.length) return Promise.resolve(this.#queue.shift());
    if (this.closeInfo) return Promise.reject(closedError(this.closeInfo));
    return new Promise((resolve, reject) => {
      const waiter = {
        resolve: (v) => { clearTimeout(timer); resolve(v); },
        reject: (e) => { clearTimeout(timer); reject(e); },
      };
      const timer = setTimeout(() => {
        this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
        reject(new ChaperoneError('timeout', `no message within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#waiters.push(waiter);
    });
  }

  /** Switches to push delivery; whatever already queued is delivered first, in order. */
  setHandler(handler) {
    this.#handler = handler;
    for (const text of this.#queue.splice(0)) handler(text);
  }

  send(obj) {
    this.sendRaw(JSON.stringify(obj));
  }

  /**
   * One text frame, exactly as given. `compress:false` keeps it uncompressed on the wire too.
   * `written(err)` is called once the frame has left for the socket.
   */
  sendRaw(text, { compress, fin } = {}, written) {
    // fin:false sends a fragment: the message goes on in the next sendRaw.
    const options = {};
    if (compress !== undefined) options.compress = compress;
    if (fin !== undefined) options.fin = fin;
    this.ws.send(text, options, written);
  }

  /**
   * Writes several text frames with one socket write, so the engine reads them in one go; this is
   * how a test gets two requests with one id both "in flight" before either is answered.
   */
  sendTogether(texts) {
    const buffers = texts.flatMap((text) => Sender.frame(Buffer.from(text, 'utf8'), {
      fin: true, opcode: 0x01, mask: true, readOnly: false, rsv1: false,
    }));
    this.ws._socket.write(Buffer.concat(buffers));
  }

  close(code = 1000, reason) {
    if (this.ws.readyState === WebSocket.CONNECTING || this.ws.readyState === WebSocket.OPEN) {
      this.ws.close(code, reason);
    }
    return this.closed;
  }

  /** Drops the TCP connection without a close frame, as a crashed browser would. */
  terminate() {
    this.ws.terminate();
    return this.closed;
  }
}

export function withTimeout(promise, timeoutMs, message) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new ChaperoneError('timeout', `${message} within ${timeoutMs} ms`)), timeoutMs);
    }),
  ]).finally(() => clearTimeout(timer));
}
