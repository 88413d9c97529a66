// SPDX-License-Identifier: GPL-3.0-or-later
// The worker's link to the Chaperone app (docs/protocol.md): pairing on /pairing, the authenticated
// connection on /extension, the envelope both ways with chunking, heartbeat and resume, and
// reconnecting with back-off. The WebSocket constructor, storage and timers are injected, so the
// same code runs in the service worker and in Node against the real engine harness.
// This file is the state machine; its parts: bridge-socket.js (one WebSocket), bridge-pairing.js
// (a pairing's messages), bridge-auth.js (a connection's handshake), bridge-requests.js (calls
// both ways) and bridge-chunks.js (chunking).

import { LIMITS, fingerprintOf } from './protocol.js';
import { authenticate } from './bridge-auth.js';
import { ChunkAssembler, chunkFrames } from './bridge-chunks.js';
import { pairingSteps } from './bridge-pairing.js';
import { IncomingRequests, OutgoingRequests, toWireError } from './bridge-requests.js';
import { BridgeError, HANDSHAKE_TIMEOUT_MS, Socket } from './bridge-socket.js';

export { BridgeError, toWireError };

const utf8 = new TextEncoder();

/** Everything the popup and the badge show; see snapshot(). */
export const STATES = Object.freeze([
  'not_paired', 'pairing', 'connecting', 'connected', 'wrong_engine', 'revoked',
]);

/** Outcomes of one pairing attempt, as the popup words them. */
export const PAIRING_OUTCOMES = Object.freeze([
  'approved', 'rejected', 'expired', 'locked', 'not_running', 'busy', 'rate_limited', 'failed',
  'bad_signature', 'cancelled',
]);

const OUTBOX_LIMIT = 64;

const defaultTimers = {
  setTimeout: (fn, ms) => globalThis.setTimeout(fn, ms),
  clearTimeout: (id) => globalThis.clearTimeout(id),
  setInterval: (fn, ms) => globalThis.setInterval(fn, ms),
  clearInterval: (id) => globalThis.clearInterval(id),
  now: () => Date.now(),
};

/**
 * The connection state machine:
 *   not_paired → pairing → (approved) connecting ⇄ connected
 *   connecting → wrong_engine (the challenge is not signed by the pinned engine; retried slowly)
 *   connected/connecting → revoked (4403: stop; the person must pair again)
 * `onStateChange(snapshot)` is called on every change; `onRequest(method, params, {signal, id})`
 * answers engine requests; `authGrants()` gives auth.grants.
 */
export class BridgeClient {
  #conn = null;
  #gen = 0; // bumped to abandon a connect attempt or a socket (restart, unpair, stop)
  #retryTimer = null;
  #watchdog = null;
  #backoff;
  #running = false;
  #connecting = false;
  #incoming; // the engine's requests to us
  #outgoing; // ours to the engine
  #chunks; // incoming chunked messages being put together
  #outbox = []; // events not known to have reached the engine: [{msg, sentOn}]
  #pairingRun = null;
  #paired = null; // the stored pairing record, cached for snapshots
  #connState = 'not_paired'; // the connection's own state; `state` shows 'pairing' over it

  constructor({
    createSocket, origin, keystore, getPort, session, timers = defaultTimers,
    client = 'chaperone-extension', version = '0', browser = 'Chromium',
    capabilities = () => [], keepAlive = null, backoff = { initialMs: 500, maxMs: 30000 },
    log = () => {},
  }) {
    Object.assign(this, { createSocket, origin, keystore, getPort, session, timers, client, version, browser });
    this.capabilities = capabilities;
    this.keepAlive = keepAlive;
    this.backoffOptions = backoff;
    this.#backoff = backoff.initialMs;
    this.log = log;
    this.onRequest = null;
    this.onStateChange = null;
    this.onEngineEvent = null;
    this.authGrants = null;
    this.port = null;
    this.pairing = null; // {phase, code, display, expiresAt} while an attempt runs
    this.pairingResult = null; // {outcome, at, retryAt?, port, message?} of the last attempt
    this.lastError = null; // why the last connect failed: not_running, refused, replaced, protocol
    this.retryAt = null;
    this.sessionInfo = null; // {sessionId, connectionId, resumed, lastSequence, connectedAt}
    this.limits = { ...LIMITS };
    this.sequence = 0;
    this.engineFingerprint = null;
    this.stats = { busyAnswered: 0, pingsAnswered: 0, maxEngineInFlight: 0 };
    const limits = () => this.limits;
    const connected = () => this.#conn !== null;
    const send = (message) => this.#trySend(message);
    this.#incoming = new IncomingRequests({
      answer: (method, params, ctx) => this.#answerRequest(method, params, ctx),
      connected,
      send,
      sendError: (code, message) => this.#sendError(code, message),
      limits,
      stats: this.stats,
    });
    this.#outgoing = new OutgoingRequests({
      connected, send, sendRaw: (text) => this.#conn?.send(text), limits, timers: this.timers,
    });
    this.#chunks = new ChunkAssembler({
      timers: this.timers,
      limits,
      onMessage: (msg) => this.#handle(msg),
      onError: (code, message, extra) => this.#sendError(code, message, extra),
    });
  }

  // ---- state ----

  snapshot() {
    return {
      state: this.state,
      port: this.port,
      paired: this.#paired !== null,
      deviceId: this.#paired?.deviceId ?? null,
      engineId: this.#paired?.engineId ?? null,
      pairedAt: this.#paired?.pairedAt ?? null,
      engineFingerprint: this.engineFingerprint,
      pairing: this.pairing ? { ...this.pairing } : null,
      pairingResult: this.pairingResult ? { ...this.pairingResult } : null,
      lastError: this.lastError,
      retryAt: this.retryAt,
      session: this.sessionInfo ? { ...this.sessionInfo } : null,
      ...this.#transportInUse(),
    };
  }

  /**
   * How the live connection travels: 'websocket' or 'native' (bridge-transport.js; a plain
   * WebSocket says nothing and is one), and the bridge port it reached — over the native host
   * the host's own, which need not be the one in Options. Nulls while not connected.
   */
  #transportInUse() {
    const ws = this.#conn?.ws;
    if (!ws) return { transport: null, transportPort: null };
    const transport = ws.transport ?? 'websocket';
    return { transport, transportPort: transport === 'native' ? ws.hostPort ?? null : this.port };
  }

  /** 'pairing' while an attempt runs (the connection goes on underneath), else the connection's state. */
  get state() {
    return this.pairing ? 'pairing' : this.#connState;
  }

  get connected() {
    return this.#connState === 'connected' && this.#conn !== null;
  }

  get deviceId() {
    return this.#paired?.deviceId ?? null;
  }

  #setState(state, extra = {}) {
    Object.assign(this, extra);
    this.#connState = state;
    this.log('state', this.state, this.lastError ?? '');
    try {
      this.onStateChange?.(this.snapshot());
    } catch (err) {
      this.log('onStateChange failed', err);
    }
  }

  #changed() {
    this.#setState(this.#connState);
  }

  /** Loads the pairing and the session counters, then connects if paired. */
  async start() {
    this.#running = true;
    this.port = await this.getPort();
    const stored = await this.session.get(['sessionId', 'lastSequence']);
    if (Number.isSafeInteger(stored.lastSequence)) this.sequence = Math.max(this.sequence, stored.lastSequence);
    await this.#loadPairing();
    if (!this.#paired) {
      this.#setState('not_paired');
      return;
    }
    this.#connectSoon(0);
  }

  async #loadPairing() {
    const record = await this.keystore.load();
    this.#paired = record?.pairing ?? null;
    this.engineFingerprint = this.#paired ? await fingerprintOf(this.#paired.enginePublicKey) : null;
    return record;
  }

  /** Stops everything (tests, extension shutdown). Keeps the stored session for a later start(). */
  stop() {
    this.#running = false;
    this.#gen++;
    this.#clearRetry();
    this.#pairingRun?.cancel();
    const conn = this.#conn;
    if (conn) {
      this.#detach(conn, { code: 1001, reason: 'stopped' });
      conn.close(1001, 'going away');
    }
  }

  /** The alarm's wake-up: reconnects at once when paired but not connected or trying. */
  kick() {
    if (!this.#running || !this.#paired || this.#conn || this.#connecting) return;
    if (this.#connState === 'revoked') return;
    this.#clearRetry();
    this.#connectSoon(0);
  }

  /** Port change: drop the socket and dial the new port at once, with the back-off reset. */
  async restart() {
    this.port = await this.getPort();
    this.#gen++;
    this.#clearRetry();
    this.#backoff = this.backoffOptions.initialMs;
    const conn = this.#conn;
    if (conn) {
      this.#detach(conn, { code: 1000, reason: 'restart' });
      conn.close(1000, 'reconnecting');
    }
    this.#connecting = false;
    await this.#loadPairing();
    if (!this.#running) return;
    if (this.#paired) this.#connectSoon(0);
    else this.#setState('not_paired');
  }

  /** Forgets the pairing (key, pinned engine, session); installationId stays. */
  async unpair() {
    this.#gen++;
    this.#clearRetry();
    this.#pairingRun?.cancel();
    const conn = this.#conn;
    if (conn) {
      this.#detach(conn, { code: 1000, reason: 'unpaired' });
      conn.close(1000, 'unpaired');
    }
    this.#connecting = false;
    await this.keystore.unpair();
    await this.session.remove(['sessionId']);
    this.#paired = null;
    this.engineFingerprint = null;
    this.sessionInfo = null;
    this.pairingResult = null;
    this.#setState('not_paired', { lastError: null, retryAt: null });
  }

  // ---- connection ----

  #clearRetry() {
    if (this.#retryTimer !== null) this.timers.clearTimeout(this.#retryTimer);
    this.#retryTimer = null;
    this.retryAt = null;
  }

  #connectSoon(delayMs) {
    this.#clearRetry();
    const gen = this.#gen;
    const run = () => {
      this.#retryTimer = null;
      this.retryAt = null;
      if (gen === this.#gen && this.#running) this.#connect(gen);
    };
    if (delayMs <= 0) {
      run();
      return;
    }
    this.retryAt = this.timers.now() + delayMs;
    this.#retryTimer = this.timers.setTimeout(run, delayMs);
  }

  #scheduleReconnect({ max = false } = {}) {
    if (!this.#running || !this.#paired) return;
    const delay = max ? this.backoffOptions.maxMs : this.#backoff;
    this.#backoff = Math.min(this.#backoff * 2, this.backoffOptions.maxMs);
    this.#connectSoon(delay);
    this.#changed();
  }

  async #connect(gen) {
    if (this.#conn || this.#connecting) return;
    this.#connecting = true;
    let sock = null;
    const stale = () => gen !== this.#gen || !this.#running;
    try {
      const record = await this.#loadPairing();
      if (stale()) return;
      if (!record) {
        this.#setState('not_paired');
        return;
      }
      this.port = await this.getPort();
      // wrong_engine and revoked stay shown while retrying, so the popup keeps saying why.
      if (this.#connState !== 'wrong_engine') this.#setState('connecting');
      try {
        sock = await Socket.open(this.createSocket, `ws://127.0.0.1:${this.port}/extension`, this.timers,
          HANDSHAKE_TIMEOUT_MS);
      } catch {
        if (stale()) return;
        this.lastError = 'not_running';
        if (this.#connState === 'wrong_engine') this.#setState('connecting');
        this.#scheduleReconnect();
        return;
      }
      if (stale()) {
        sock.close(1000);
        return;
      }
      const authed = await authenticate(this, sock, record, stale);
      if (!authed) {
        // The challenge is not the pinned engine's (§5.1): tell the person, retry slowly.
        if (stale()) return;
        this.#setState('wrong_engine', { lastError: 'wrong_engine' });
        this.#scheduleReconnect({ max: true });
        return;
      }
      this.grantsDeferred = authed.deferredGrants;
      this.#attach(sock, authed.ack);
    } catch (err) {
      if (sock) sock.close(1000);
      if (stale()) return;
      this.log('connect failed', err?.message);
      if (err.closeCode === 4403) {
        this.#setState('revoked', { lastError: 'revoked' });
        return;
      }
      this.lastError = err.closeCode === 4401 ? 'refused' : err.closeCode === 4409 ? 'replaced' : 'protocol';
      if (this.#connState !== 'connecting') this.#setState('connecting');
      this.#scheduleReconnect({ max: err.closeCode === 4401 || err.closeCode === 4409 });
    } finally {
      if (gen === this.#gen) this.#connecting = false;
    }
  }

  #attach(sock, ack) {
    this.#conn = sock;
    this.#backoff = this.backoffOptions.initialMs;
    this.limits = { ...LIMITS, ...(ack.limits ?? {}) };
    const lastSequence = Number.isSafeInteger(ack.lastSequence) ? ack.lastSequence : 0;
    this.sessionInfo = {
      sessionId: ack.sessionId,
      connectionId: ack.connectionId,
      engineInstanceId: ack.engineInstanceId,
      resumed: ack.resumed === true,
      lastSequence,
      connectedAt: this.timers.now(),
    };
    this.session.set({ sessionId: ack.sessionId }).catch(() => {});
    sock.closed.then((info) => this.#detach(sock, info));
    sock.setHandler((text) => this.#dispatch(sock, text));
    this.#armWatchdog();
    this.#setState('connected', { lastError: null, retryAt: null });
    // Events the engine did not get: on a resumed session those above its lastSequence, keeping
    // their numbers; on a new one those never sent at all (the old session is gone with the rest).
    if (this.sessionInfo.resumed) {
      this.sequence = Math.max(this.sequence, lastSequence);
      this.#outbox = this.#outbox.filter((e) => e.msg.sequence > lastSequence);
    } else {
      this.#outbox = this.#outbox.filter((e) => e.sentOn === null);
    }
    for (const entry of this.#outbox) {
      entry.sentOn = ack.connectionId;
      this.#trySend(entry.msg);
    }
    if (this.grantsDeferred) {
      this.sendEvent('grant.changed', { grants: this.grantsDeferred, reason: 'sync' });
      this.grantsDeferred = false;
    }
    this.#outgoing.pump();
  }

  /** The socket is gone: stop its work, fail our waiting calls, reconnect unless told not to. */
  #detach(sock, info) {
    if (this.#conn !== sock) return;
    this.#conn = null;
    if (this.#watchdog !== null) this.timers.clearTimeout(this.#watchdog);
    this.#watchdog = null;
    this.#incoming.abortAll();
    this.#outgoing.failSent();
    this.#chunks.clear();
    if (!this.#running || info.reason === 'restart' || info.reason === 'unpaired' || info.reason === 'stopped') return;
    if (info.code === 4403) {
      this.#setState('revoked', { lastError: 'revoked' });
      return;
    }
    this.lastError = info.code === 4409 ? 'replaced' : 'disconnected';
    this.#setState('connecting');
    this.#scheduleReconnect({ max: info.code === 4409 });
  }

  #armWatchdog() {
    if (this.#watchdog !== null) this.timers.clearTimeout(this.#watchdog);
    // The engine pings every heartbeatMs; three missed means it is gone without a close frame.
    const ms = this.limits.heartbeatMs * 3 + 5000;
    const sock = this.#conn;
    this.#watchdog = this.timers.setTimeout(() => {
      if (this.#conn === sock) sock.close(4408, 'heartbeat timeout');
    }, ms);
  }

  // ---- sending ----

  #trySend(message) {
    const conn = this.#conn;
    if (!conn) return false;
    const text = JSON.stringify(message);
    const bytes = utf8.encode(text);
    if (bytes.length > this.limits.maxMessageBytes) {
      throw new BridgeError('too_large', `message of ${bytes.length} bytes is over ${this.limits.maxMessageBytes}`);
    }
    if (bytes.length <= this.limits.chunkThreshold) {
      conn.send(text);
      return true;
    }
    for (const frame of chunkFrames(bytes, this.limits.chunkSize)) conn.send(frame);
    return true;
  }

  #sendError(code, message, extra = {}) {
    this.#conn?.send(JSON.stringify({ type: 'error', code, message, ...extra }));
  }

  /**
   * Sends an event with the next sequence number (kept in storage.session, so a restarted worker
   * goes on counting). While offline it waits in the outbox and goes out on the next connection.
   */
  sendEvent(event, data = {}) {
    const sequence = ++this.sequence;
    this.session.set({ lastSequence: sequence }).catch(() => {});
    const msg = { type: 'event', event, data, sequence, timestamp: this.timers.now() };
    const entry = { msg, sentOn: null };
    this.#outbox.push(entry);
    if (this.#outbox.length > OUTBOX_LIMIT) this.#outbox.shift();
    if (this.#conn) {
      entry.sentOn = this.sessionInfo?.connectionId ?? 'sent';
      try {
        this.#trySend(msg);
      } catch (err) {
        this.log('event not sent', event, err?.message);
      }
    }
    return sequence;
  }

  /**
   * Calls an engine method; resolves with its result or rejects with BridgeError(code). At most
   * limits.maxInFlight are on the wire; the rest wait here. `signal` cancels (a `cancel` is sent).
   */
  request(method, params = {}, { timeoutMs = 10000, signal } = {}) {
    return this.#outgoing.call(method, params, { timeoutMs, signal });
  }

  // ---- receiving ----

  #dispatch(sock, text) {
    if (this.#conn !== sock) return;
    this.#armWatchdog();
    let msg;
    try {
      msg = JSON.parse(text);
    } catch {
      this.#sendError('invalid_params', 'the frame is not JSON');
      return;
    }
    if (msg === null || typeof msg !== 'object' || Array.isArray(msg) || typeof msg.type !== 'string') {
      this.#sendError('invalid_params', 'the frame has no type');
      return;
    }
    if (msg.type === 'chunk') this.#chunks.take(msg);
    else this.#handle(msg);
  }

  #handle(msg) {
    switch (msg.type) {
      case 'request': this.#incoming.take(msg); break;
      case 'response': this.#outgoing.answer(msg); break;
      case 'cancel': this.#incoming.cancel(msg); break;
      case 'event':
        try {
          this.onEngineEvent?.(msg.event, msg.data);
        } catch (err) {
          this.log('engine event handler failed', err?.message);
        }
        break;
      case 'ping':
        this.stats.pingsAnswered++;
        this.#conn?.send(JSON.stringify({
          type: 'pong', sequence: msg.sequence, timestamp: msg.timestamp, replyTimestamp: this.timers.now(),
        }));
        break;
      case 'pong':
      case 'error':
        if (msg.type === 'error') this.log('the app reported', msg.code, msg.message);
        break;
      default: this.#sendError('unsupported', `unknown message type ${JSON.stringify(msg.type).slice(0, 40)}`);
    }
  }

  /** An engine request's answer (extension.info here, the rest from onRequest, the router). */
  #answerRequest(method, params, ctx) {
    // Answered here: the engine asks on every connection, and the router need not know about it.
    if (method === 'extension.info') return this.extensionInfo();
    if (!this.onRequest) throw new BridgeError('unknown_method', `no handler for ${method}`);
    return this.onRequest(method, params, ctx);
  }

  extensionInfo() {
    return {
      client: this.client,
      version: this.version,
      browser: this.browser,
      capabilities: [...new Set([...this.capabilities(), 'extension.info'])].sort(),
      // The worker adds what the app needs after it reconnects (whether the person stopped it).
      ...(this.extraInfo?.() ?? {}),
    };
  }

  // ---- pairing ----

  /**
   * Runs one pairing attempt (docs/protocol.md §4) and resolves with its outcome
   * ({outcome, retryAt?, message?}); never rejects. Progress shows in snapshot().pairing.
   * A second call while one runs returns the same promise. Test seam: `tamper(msg)` may rewrite
   * each incoming pairing message, as a man in the middle would.
   */
  pair({ tamper } = {}) {
    if (this.#pairingRun) return this.#pairingRun.promise;
    let cancel = () => {};
    const cancelled = new Promise((resolve) => { cancel = () => resolve({ outcome: 'cancelled' }); });
    const run = { cancel: () => cancel(), promise: null };
    this.#pairingRun = run;
    run.promise = this.#runPairing({ tamper, cancelled }).finally(() => {
      this.#pairingRun = null;
    });
    return run.promise;
  }

  cancelPairing() {
    this.#pairingRun?.cancel();
  }

  async #runPairing({ tamper, cancelled }) {
    this.port = await this.getPort();
    const port = this.port;
    this.pairingResult = null;
    this.pairing = { phase: 'connecting', port };
    this.#changed();
    const alive = this.keepAlive ? this.timers.setInterval(() => {
      try {
        this.keepAlive();
      } catch {
        // only a hint to the browser
      }
    }, 20000) : null;
    let sock = null;
    let result;
    let over = false; // a cancelled attempt may still read queued frames; it must not show a code
    const onPending = (pending) => {
      this.pairing = pending;
      this.#changed();
    };
    try {
      const attempt = pairingSteps(this, { port, tamper, live: () => !over, onPending, onSocket: (s) => {
        sock = s;
        if (over) s.close(1000);
      } });
      result = await Promise.race([attempt, cancelled]);
      attempt.catch(() => {});
    } catch (err) {
      result = { outcome: err.outcome ?? 'failed', message: err.message };
    } finally {
      over = true;
      if (alive !== null) this.timers.clearInterval(alive);
      sock?.close(1000);
    }
    if (result.retryAfter !== undefined) result.retryAt = this.timers.now() + result.retryAfter;
    this.pairingResult = { ...result, port, at: this.timers.now() };
    delete this.pairingResult.keys;
    delete this.pairingResult.record;
    this.pairing = null;
    if (result.outcome === 'approved') {
      await this.keystore.save(result.keys, result.record);
      await this.#loadPairing();
      // A re-pair rotated our key: the open connection (if any) used the old one.
      this.#gen++;
      const conn = this.#conn;
      if (conn) {
        this.#detach(conn, { code: 1000, reason: 'restart' });
        conn.close(1000, 'paired again');
      }
      this.#connecting = false;
      this.#backoff = this.backoffOptions.initialMs;
      this.#setState('connecting', { lastError: null });
      if (this.#running) this.#connectSoon(0);
    } else {
      // The connection went on underneath: a failed re-pair leaves a working pairing alone.
      this.#changed();
    }
    const { keys, record, ...outcome } = result;
    return outcome;
  }

}
