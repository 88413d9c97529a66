// SPDX-License-Identifier: GPL-3.0-or-later
// The worker's link to the Chaperone app (docs/protocol.md): pairing on /pairing, the authenticated
// connection on /extension, the envelope both ways with chunking, heartbeat and resume, and
// reconnecting with back-off. The WebSocket constructor, storage and timers are injected, so the
// same code runs in the service worker and in Node against the real engine harness.

import { isErrorCode } from './protocol-errors.js';
import {
  LIMITS, approvedText, b64urlDecode, b64urlEncode, clientAuthText, code as pairingCode, commitment,
  displayCode, engineChallengeText, engineIdOf, fingerprintOf, pairingTranscript, randomId,
  randomNonce, revealText, signText, verifyText,
} from './protocol.js';

const PROTOCOL = 1;
const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8', { fatal: true });

/** Everything the popup and the badge show; see snapshot(). */
export const STATES = Object.freeze([
  'not_paired', 'pairing', 'connecting', 'connected', 'wrong_engine', 'revoked',
]);

/** Outcomes of one pairing attempt, as the popup words them. */
export const PAIRING_OUTCOMES = Object.freeze([
  'approved', 'rejected', 'expired', 'locked', 'not_running', 'busy', 'rate_limited', 'failed',
  'bad_signature', 'cancelled',
]);

// Until hello_ack the engine reads at most 16 KiB; the auth frame must stay below that.
const PRE_AUTH_BUDGET = 15 * 1024;
const HANDSHAKE_TIMEOUT_MS = 10000;
const OUTBOX_LIMIT = 64;

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
class Socket {
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
  #incoming = new Map();
  #outgoing = new Map();
  #queued = []; // our requests waiting for a free slot (the engine takes at most maxInFlight)
  #transfers = new Map();
  #outbox = []; // events not known to have reached the engine: [{msg, sentOn}]
  #pairingRun = null;
  #paired = null; // the stored pairing record, cached for snapshots
  #nextRequestId = 0;
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
    };
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
      const ack = await this.#handshake(sock, record, stale);
      if (!ack) return;
      this.#attach(sock, ack);
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

  /** Challenge → auth → hello_ack. Returns the ack, or null when the engine is not the pinned one. */
  async #handshake(sock, record, stale) {
    const { pairing, privateKey } = record;
    const challenge = await sock.next(this.timers, HANDSHAKE_TIMEOUT_MS);
    if (stale()) throw new BridgeError('stale', 'abandoned');
    if (challenge.type !== 'challenge' || challenge.protocol !== PROTOCOL) {
      throw new BridgeError('protocol', `expected challenge, got ${challenge.type}`);
    }
    if (!await this.#challengeSignedByPinned(challenge, pairing)) {
      // §5.1: send nothing, close, tell the person; never fall back to pairing on our own.
      sock.close(1000);
      if (stale()) return null;
      this.#setState('wrong_engine', { lastError: 'wrong_engine' });
      this.#scheduleReconnect({ max: true });
      return null;
    }
    const installationId = await this.keystore.installationId();
    const capabilities = [...new Set([...this.capabilities(), 'extension.info'])].sort();
    const { sessionId: resumeSessionId } = await this.session.get('sessionId');
    let grants;
    try {
      grants = this.authGrants ? await this.authGrants() : undefined;
    } catch (err) {
      this.log('authGrants failed', err?.message);
    }
    const auth = {
      type: 'auth',
      installationId,
      deviceId: pairing.deviceId,
      client: this.client,
      version: this.version,
      capabilities,
      ...(typeof resumeSessionId === 'string' ? { resumeSessionId } : {}),
      ...(Array.isArray(grants) ? { grants } : {}),
      signature: await signText(privateKey, clientAuthText({
        origin: this.origin,
        engineId: challenge.engineId,
        engineInstanceId: challenge.engineInstanceId,
        connectionId: challenge.connectionId,
        challenge: challenge.challenge,
        installationId,
        capabilities,
      })),
    };
    let text = JSON.stringify(auth);
    this.grantsDeferred = false;
    if (utf8.encode(text).length > PRE_AUTH_BUDGET && auth.grants) {
      // The engine reads at most 16 KiB before hello_ack; many grants go as an event afterwards.
      delete auth.grants;
      text = JSON.stringify(auth);
      this.grantsDeferred = grants;
    }
    if (stale()) throw new BridgeError('stale', 'abandoned');
    sock.send(text);
    const ack = await sock.next(this.timers, HANDSHAKE_TIMEOUT_MS);
    if (ack.type !== 'hello_ack' || ack.engineId !== pairing.engineId
        || ack.connectionId !== challenge.connectionId || ack.deviceId !== pairing.deviceId) {
      throw new BridgeError('protocol', 'hello_ack does not match the challenge and the pairing');
    }
    if (stale()) throw new BridgeError('stale', 'abandoned');
    return ack;
  }

  async #challengeSignedByPinned(challenge, pairing) {
    if (challenge.engineId !== pairing.engineId) return false;
    try {
      return await verifyText(pairing.enginePublicKey, challenge.signature, engineChallengeText(challenge));
    } catch {
      return false;
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
    this.#pumpQueue();
  }

  /** The socket is gone: stop its work, fail our waiting calls, reconnect unless told not to. */
  #detach(sock, info) {
    if (this.#conn !== sock) return;
    this.#conn = null;
    if (this.#watchdog !== null) this.timers.clearTimeout(this.#watchdog);
    this.#watchdog = null;
    for (const [id, entry] of this.#incoming) {
      entry.controller.abort(new BridgeError('cancelled', 'the connection closed'));
      this.#incoming.delete(id);
    }
    for (const pending of this.#outgoing.values()) pending.reject(new BridgeError('device_offline', 'the connection closed'));
    this.#outgoing.clear();
    for (const transfer of this.#transfers.values()) this.timers.clearTimeout(transfer.timer);
    this.#transfers.clear();
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
    const size = this.limits.chunkSize;
    const total = Math.ceil(bytes.length / size);
    const transferId = randomId();
    for (let index = 0; index < total; index++) {
      conn.send(JSON.stringify({
        type: 'chunk',
        transferId,
        index,
        total,
        originalBytes: bytes.length,
        data: b64urlEncode(bytes.subarray(index * size, (index + 1) * size)),
      }));
    }
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
    return new Promise((resolve, reject) => {
      if (!this.#conn) {
        reject(new BridgeError('device_offline', 'not connected to Chaperone'));
        return;
      }
      const id = `x${++this.#nextRequestId}`;
      const job = { id, method, params, timeoutMs, resolve, reject, timer: null, signal };
      const fail = (err) => {
        if (job.timer !== null) this.timers.clearTimeout(job.timer);
        const wasSent = this.#outgoing.delete(id);
        this.#queued = this.#queued.filter((q) => q !== job);
        if (wasSent) this.#conn?.send(JSON.stringify({ type: 'cancel', id }));
        reject(err);
        this.#pumpQueue();
      };
      job.fail = fail;
      job.timer = this.timers.setTimeout(() => fail(new BridgeError('timeout', `${method} got no response in ${timeoutMs} ms`)), timeoutMs);
      signal?.addEventListener('abort', () => fail(new BridgeError('cancelled', 'cancelled')), { once: true });
      this.#queued.push(job);
      this.#pumpQueue();
    });
  }

  #pumpQueue() {
    while (this.#conn && this.#queued.length && this.#outgoing.size < this.limits.maxInFlight) {
      const job = this.#queued.shift();
      this.#outgoing.set(job.id, {
        resolve: (v) => { this.timers.clearTimeout(job.timer); job.resolve(v); },
        reject: (e) => { this.timers.clearTimeout(job.timer); job.reject(e); },
      });
      try {
        this.#trySend({ type: 'request', id: job.id, method: job.method, params: job.params, timeoutMs: job.timeoutMs });
      } catch (err) {
        this.#outgoing.get(job.id).reject(err);
        this.#outgoing.delete(job.id);
      }
    }
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
    if (msg.type === 'chunk') this.#onChunk(msg);
    else this.#handle(msg);
  }

  #handle(msg) {
    switch (msg.type) {
      case 'request': this.#onEngineRequest(msg); break;
      case 'response': this.#onResponse(msg); break;
      case 'cancel': this.#onCancel(msg); break;
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

  #onResponse(msg) {
    const pending = this.#outgoing.get(msg.id);
    if (!pending) return; // an answer to a call we already gave up on
    this.#outgoing.delete(msg.id);
    if (msg.error) {
      pending.reject(new BridgeError(isErrorCode(msg.error.code) ? msg.error.code : 'internal',
        msg.error.message, msg.error.data));
    } else {
      pending.resolve(msg.result);
    }
    this.#pumpQueue();
  }

  #respond(id, body) {
    if (!this.#conn) return;
    try {
      this.#trySend({ type: 'response', id, ...body });
    } catch (err) {
      // A result too large to send still gets an answer, so the engine's call does not hang.
      const code = err instanceof BridgeError && isErrorCode(err.code) ? err.code : 'internal';
      this.#trySend({ type: 'response', id, error: { code, message: err.message } });
    }
  }

  #onEngineRequest(msg) {
    const { id } = msg;
    if (typeof id !== 'string' || id.length === 0 || id.length > 128) {
      this.#sendError('invalid_params', 'a request id is a non-empty string of at most 128 characters');
      return;
    }
    if (this.#incoming.has(id)) {
      this.#respond(id, { error: { code: 'duplicate_id', message: `request ${id} is already in flight` } });
      return;
    }
    if (this.#incoming.size >= this.limits.maxInFlight) {
      this.stats.busyAnswered++;
      this.#respond(id, { error: { code: 'busy', message: `${this.limits.maxInFlight} requests already in flight` } });
      return;
    }
    if (typeof msg.method !== 'string' || msg.method === '') {
      this.#respond(id, { error: { code: 'invalid_params', message: 'a request names its method' } });
      return;
    }
    const params = msg.params && typeof msg.params === 'object' && !Array.isArray(msg.params) ? msg.params : {};
    const entry = { controller: new AbortController() };
    this.#incoming.set(id, entry);
    this.stats.maxEngineInFlight = Math.max(this.stats.maxEngineInFlight, this.#incoming.size);
    const ctx = { id, signal: entry.controller.signal, timeoutMs: msg.timeoutMs };
    const run = async () => {
      // Answered here: the engine asks on every connection, and the router need not know about it.
      if (msg.method === 'extension.info') return this.extensionInfo();
      if (!this.onRequest) throw new BridgeError('unknown_method', `no handler for ${msg.method}`);
      return this.onRequest(msg.method, params, ctx);
    };
    run().then(
      (result) => this.#finish(id, entry, { result: result === undefined ? null : result }),
      (err) => this.#finish(id, entry, { error: toWireError(err, msg.method) }),
    );
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

  #finish(id, entry, body) {
    if (this.#incoming.get(id) !== entry) return; // cancelled or disconnected: already answered
    this.#incoming.delete(id);
    this.#respond(id, body);
  }

  #onCancel(msg) {
    const entry = this.#incoming.get(msg.id);
    if (!entry) return;
    // Answer at once and free the slot, so the engine's window and ours agree.
    this.#incoming.delete(msg.id);
    entry.controller.abort(new BridgeError('cancelled', 'cancelled by Chaperone'));
    this.#respond(msg.id, { error: { code: 'cancelled', message: 'cancelled by Chaperone' } });
  }

  #onChunk(msg) {
    const { transferId, index, total, originalBytes, data } = msg;
    if (typeof transferId !== 'string' || transferId.length === 0 || transferId.length > 128) {
      this.#sendError('invalid_params', 'a chunk needs a transferId');
      return;
    }
    const fail = (code, message) => {
      const transfer = this.#transfers.get(transferId);
      if (transfer) this.timers.clearTimeout(transfer.timer);
      this.#transfers.delete(transferId);
      this.#sendError(code, message, { transferId });
    };
    const { chunkSize: size, maxMessageBytes, maxTransfers, transferTimeoutMs } = this.limits;
    let transfer = this.#transfers.get(transferId);
    if (!transfer) {
      if (!Number.isSafeInteger(originalBytes) || originalBytes <= 0) return fail('invalid_params', 'bad originalBytes');
      if (originalBytes > maxMessageBytes) return fail('too_large', `message of ${originalBytes} bytes`);
      if (total !== Math.ceil(originalBytes / size)) return fail('invalid_params', 'total does not match originalBytes');
      if (index !== 0) return fail('invalid_params', `gap: transfer starts at chunk ${index}`);
      if (this.#transfers.size >= maxTransfers) return fail('busy', 'too many transfers open');
      let open = originalBytes;
      for (const t of this.#transfers.values()) open += t.originalBytes;
      if (open > maxMessageBytes) return fail('too_large', 'too many bytes in flight');
      transfer = { total, originalBytes, parts: [], received: 0, timer: null };
      this.#transfers.set(transferId, transfer);
    } else if (total !== transfer.total || originalBytes !== transfer.originalBytes) {
      return fail('invalid_params', 'total or originalBytes changed mid-transfer');
    } else if (index < transfer.parts.length) {
      return fail('invalid_params', `duplicate chunk ${index}`);
    } else if (index !== transfer.parts.length) {
      return fail('invalid_params', `gap: chunk ${index} after ${transfer.parts.length - 1}`);
    }
    let slice;
    try {
      slice = b64urlDecode(data);
    } catch {
      return fail('invalid_params', 'chunk data is not base64url');
    }
    const expected = index < total - 1 ? size : originalBytes - size * (total - 1);
    if (slice.length !== expected) return fail('invalid_params', `chunk ${index} has ${slice.length} bytes, not ${expected}`);
    transfer.parts.push(slice);
    transfer.received += slice.length;
    this.timers.clearTimeout(transfer.timer);
    transfer.timer = this.timers.setTimeout(() => fail('timeout', 'transfer idle for too long'), transferTimeoutMs);
    if (transfer.parts.length < total) return undefined;

    this.timers.clearTimeout(transfer.timer);
    this.#transfers.delete(transferId);
    const whole = new Uint8Array(transfer.received);
    let offset = 0;
    for (const part of transfer.parts) {
      whole.set(part, offset);
      offset += part.length;
    }
    let inner;
    try {
      inner = JSON.parse(utf8Decoder.decode(whole));
    } catch {
      return fail('invalid_params', 'reassembled message is not UTF-8 JSON');
    }
    if (!['request', 'response', 'event'].includes(inner?.type)) {
      return fail('invalid_params', 'a chunked message is a request, response or event');
    }
    this.#handle(inner);
    return undefined;
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
    try {
      const attempt = this.#pairingSteps({ port, tamper, live: () => !over, onSocket: (s) => {
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

  async #pairingSteps({ port, tamper = (m) => m, live, onSocket }) {
    const fail = (outcome, message, extra = {}) => Object.assign(new BridgeError(outcome, message), { outcome }, extra);
    let sock;
    try {
      sock = await Socket.open(this.createSocket, `ws://127.0.0.1:${port}/pairing`, this.timers, HANDSHAKE_TIMEOUT_MS);
    } catch {
      throw fail('not_running', `Chaperone is not running on port ${port}`);
    }
    onSocket(sock);
    if (!live()) throw fail('cancelled', 'pairing cancelled');
    const keys = await this.keystore.newKeyPair();
    const installationId = await this.keystore.installationId();
    const nonceC = randomNonce();
    sock.send(JSON.stringify({
      type: 'pair_request',
      protocol: PROTOCOL,
      installationId,
      client: this.client,
      version: this.version,
      browser: this.browser,
      publicKey: keys.jwk,
      commitment: await commitment(nonceC, keys.jwk),
    }));

    // 120 s for the person plus slack; the engine ends the attempt itself with pair_expired.
    const next = async (types, timeoutMs) => {
      let msg;
      try {
        msg = tamper(await sock.next(this.timers, timeoutMs));
      } catch (err) {
        if (err.code === 'timeout') throw fail('expired', 'no answer from Chaperone');
        throw fail('failed', 'Chaperone closed the pairing');
      }
      switch (msg.type) {
        case 'pair_error':
          throw fail(['busy', 'rate_limited'].includes(msg.code) ? msg.code : 'failed', String(msg.code));
        case 'pair_locked':
          throw fail('locked', 'pairing is locked', { retryAfter: Number(msg.retryAfter) || 0 });
        case 'pair_rejected': throw fail('rejected', 'rejected in Chaperone');
        case 'pair_expired': throw fail('expired', 'no decision in time');
        default:
          if (!types.includes(msg.type)) throw fail('failed', `unexpected ${msg.type}`);
          return msg;
      }
    };
    const toResult = (err) => ({ outcome: err.outcome ?? 'failed', message: err.message, ...(err.retryAfter !== undefined ? { retryAfter: err.retryAfter } : {}) });

    try {
      const challenge = await next(['pair_challenge'], HANDSHAKE_TIMEOUT_MS);
      const engineJwk = challenge.enginePublicKey;
      let engineId;
      try {
        engineId = await engineIdOf(engineJwk);
      } catch {
        throw fail('failed', 'the engine key is not a P-256 key');
      }
      // The id must be the key's hash, or the code would bind a key it did not name.
      if (challenge.engineId !== engineId) throw fail('failed', 'engineId is not the hash of the engine key');
      const transcript = pairingTranscript({
        requestId: challenge.requestId,
        origin: this.origin,
        installationId,
        extJwk: keys.jwk,
        engineId,
        engineJwk,
        nonceC,
        nonceE: challenge.nonceE,
      });
      sock.send(JSON.stringify({
        type: 'pair_reveal',
        requestId: challenge.requestId,
        nonceC,
        signature: await signText(keys.privateKey, revealText(transcript)),
      }));

      const pending = await next(['pair_pending'], HANDSHAKE_TIMEOUT_MS);
      if (pending.requestId !== challenge.requestId) throw fail('failed', 'pair_pending for another request');
      const sixDigits = await pairingCode(transcript);
      const expiresAt = Number.isSafeInteger(pending.expiresAt) ? pending.expiresAt : this.timers.now() + 120000;
      if (!live()) throw fail('cancelled', 'pairing cancelled');
      this.pairing = { phase: 'pending', port, code: sixDigits, display: displayCode(sixDigits), expiresAt, requestId: challenge.requestId };
      this.#changed();

      const approved = await next(['pair_approved'], Math.max(1000, expiresAt - this.timers.now()) + 10000);
      if (approved.requestId !== challenge.requestId || approved.engineId !== engineId
          || approved.enginePublicKey?.x !== engineJwk.x || approved.enginePublicKey?.y !== engineJwk.y) {
        throw fail('bad_signature', 'the approval names another engine');
      }
      if (typeof approved.deviceId !== 'string' || approved.deviceId.includes('\n')
          || !await verifyText(engineJwk, approved.signature, approvedText(transcript, approved.deviceId))) {
        // Discard the result (§4.1): nothing is pinned and nothing connects with it.
        throw fail('bad_signature', 'the approval signature does not verify');
      }
      return {
        outcome: 'approved',
        deviceId: approved.deviceId,
        engineId,
        code: sixDigits,
        keys,
        record: {
          deviceId: approved.deviceId,
          engineId,
          enginePublicKey: { kty: 'EC', crv: 'P-256', x: engineJwk.x, y: engineJwk.y },
          pairedAt: this.timers.now(),
        },
      };
    } catch (err) {
      if (err instanceof BridgeError && err.outcome) return toResult(err);
      return { outcome: 'failed', message: String(err?.message ?? err) };
    }
  }
}

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
