// SPDX-License-Identifier: GPL-3.0-or-later
// A test client that plays the Chaperone extension on the wire exactly as the real extension does
// (DESIGN §2–5, notes/protocol-decisions.md): WebCrypto P-256 with a non-extractable private key,
// P1363 signatures, commit-then-reveal pairing, signed auth, the request/event/ping envelope and
// chunking. It also exposes the seams tests need to misbehave on purpose: raw frames, forged fields,
// replayed auth, frames written together.

import { EventEmitter } from 'node:events';
import { performance } from 'node:perf_hooks';

import { isErrorCode } from '../../extension/lib/protocol-errors.js';
import {
  LIMITS, approvedText, b64urlDecode, b64urlEncode, clientAuthText, code as pairingCode, commitment,
  displayCode, engineChallengeText, engineIdOf, fingerprintOf, generateKeyPair, pairingTranscript,
  randomId, randomNonce, revealText, signText, verifyText,
} from '../../extension/lib/protocol.js';
import { ChaperoneError, PairingError, RawConnection, closedError, withTimeout } from './chaperone-wire.mjs';

// The errors, the raw connection and withTimeout live in chaperone-wire.mjs; importers keep importing them from here.
export { ChaperoneError, PairingError, RawConnection, withTimeout };

const PROTOCOL = 1;
const DEFAULT_CAPABILITIES = Object.freeze(['browser.tabs', 'browser.context', 'browser.node.action']);
const utf8Decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * The extension, as the engine sees it.
 *
 *   const c = new ChaperoneClient({ port, origin });
 *   await c.pair({ onCode: ({ code }) => ... });   // the person approves in the app
 *   await c.connect();                             // → hello_ack
 *   c.onRequest(async (method, params, { signal }) => ...);
 *   await c.request('engine.info');
 *
 * Events: 'event' (engine event message), 'protocol-error' (error frames from the engine),
 * 'message' (every message after reassembly), 'close' ({code, reason}).
 */
export class ChaperoneClient extends EventEmitter {
  // The pure computations, reachable from the client for convenience (they live in extension/lib/protocol.js).
  static pairingTranscript = pairingTranscript;
  static commitment = commitment;
  static code = pairingCode;

  #conn = null;
  #handler = null;
  #outgoing = new Map(); // our requests awaiting responses
  #incoming = new Map(); // engine requests we are working on
  #transfers = new Map(); // chunked messages being reassembled
  #pings = new Map();
  #nextRequestId = 0;
  #pingSequence = 0;

  constructor({
    port, origin, host = '127.0.0.1', hostHeader, installationId = randomId(), browser = 'chromium',
    client = 'chaperone-test-client', version = '0.1.0', keys = null, pinned = null, autoPong = true,
  }) {
    super();
    if (!port) throw new TypeError('port is required');
    if (!origin) throw new TypeError('origin is required');
    Object.assign(this, { port, origin, host, hostHeader, installationId, browser, client, version });
    this.keys = keys;
    this.pinned = pinned; // {engineJwk, engineId, deviceId} once paired
    this.autoPong = autoPong;
    this.session = null;
    this.sequence = 0; // last event sequence sent; survives reconnects, like the worker's storage
    this.lastAuth = null; // the exact auth frame last sent, for replay tests
    this.closeInfo = null;
    this.stats = { maxEngineInFlight: 0, busyAnswered: 0, pingsAnswered: 0 };
  }

  get connected() {
    return this.#conn?.isOpen === true && this.session !== null;
  }

  /** The engine requests currently being handled (for asserting the in-flight window). */
  get engineInFlight() {
    return this.#incoming.size;
  }

  async ensureKeys() {
    this.keys ??= await generateKeyPair();
    return this.keys;
  }

  /** A fresh key pair, as after "forget and re-pair"; the installationId stays. */
  async rotateKey() {
    this.keys = await generateKeyPair();
    return this.keys;
  }

  async fingerprint() {
    return fingerprintOf((await this.ensureKeys()).jwk);
  }

  // ---- pairing ----

  /**
   * Runs the whole pairing and resolves once the engine's approval verifies; the engine key is then
   * pinned. Throws PairingError for rejected/expired/error/locked, ChaperoneError otherwise.
   *
   * forge (tests only): {commitment} sends that commitment instead; {revealNonceC} reveals another
   * nonce than the one committed (signing the transcript that nonce makes); {revealKey} signs the
   * reveal with another private key; {revealSignature} sends that signature as is.
   */
  async pair({ onCode, timeoutMs = 10000, forge = {} } = {}) {
    const keys = await this.ensureKeys();
    const conn = await this.#open('/pairing', timeoutMs);
    const deadline = Date.now() + timeoutMs;
    const next = (types) => this.#nextPairing(conn, types, deadline);
    try {
      const nonceC = randomNonce();
      conn.send({
        type: 'pair_request',
        protocol: PROTOCOL,
        installationId: this.installationId,
        client: this.client,
        version: this.version,
        browser: this.browser,
        publicKey: keys.jwk,
        commitment: forge.commitment ?? await commitment(nonceC, keys.jwk),
      });

      const challenge = await next(['pair_challenge']);
      const engineJwk = challenge.enginePublicKey;
      // The engine's id must be its key's hash; otherwise the code would bind a key it did not name.
      if (typeof challenge.engineId !== 'string' || challenge.engineId !== await engineIdOf(engineJwk)) {
        throw new ChaperoneError('engine_mismatch', 'pair_challenge engineId is not the hash of its key');
      }
      const revealed = forge.revealNonceC ?? nonceC;
      const transcript = pairingTranscript({
        requestId: challenge.requestId,
        origin: this.origin,
        installationId: this.installationId,
        extJwk: keys.jwk,
        engineId: challenge.engineId,
        engineJwk,
        nonceC: revealed,
        nonceE: challenge.nonceE,
      });
      const signature = forge.revealSignature
        ?? await signText(forge.revealKey ?? keys.privateKey, revealText(transcript));
      conn.send({ type: 'pair_reveal', requestId: challenge.requestId, nonceC: revealed, signature });

      const pending = await next(['pair_pending']);
      this.#checkRequestId(pending, challenge.requestId);
      const code = await pairingCode(transcript);
      onCode?.({ code, display: displayCode(code), requestId: challenge.requestId, expiresAt: pending.expiresAt });

      const approved = await next(['pair_approved']);
      this.#checkRequestId(approved, challenge.requestId);
      if (approved.engineId !== challenge.engineId
          || approved.enginePublicKey?.x !== engineJwk.x || approved.enginePublicKey?.y !== engineJwk.y) {
        throw new ChaperoneError('engine_mismatch', 'pair_approved names another engine than pair_challenge');
      }
      if (typeof approved.deviceId !== 'string'
          || !await verifyText(engineJwk, approved.signature, approvedText(transcript, approved.deviceId))) {
        throw new ChaperoneError('bad_signature', 'the approval signature does not verify');
      }
      this.pinned = { engineJwk, engineId: challenge.engineId, deviceId: approved.deviceId };
      return {
        deviceId: approved.deviceId,
        engineId: challenge.engineId,
        requestId: challenge.requestId,
        code,
        fingerprint: await fingerprintOf(keys.jwk),
      };
    } finally {
      conn.close(1000);
    }
  }

  async #nextPairing(conn, types, deadline) {
    const msg = await conn.next({ timeoutMs: Math.max(1, deadline - Date.now()) });
    switch (msg.type) {
      case 'pair_error':
        throw new PairingError('error', msg.code, msg.message);
      case 'pair_locked':
        throw new PairingError('locked', 'locked', undefined, { retryAfter: msg.retryAfter });
      case 'pair_rejected':
        throw new PairingError('rejected', 'rejected', undefined, { requestId: msg.requestId });
      case 'pair_expired':
        throw new PairingError('expired', 'expired', undefined, { requestId: msg.requestId });
      default:
        if (!types.includes(msg.type)) {
          throw new ChaperoneError('protocol', `expected ${types.join('/')}, got ${msg.type}`);
        }
        return msg;
    }
  }

  #checkRequestId(msg, requestId) {
    if (msg.requestId !== requestId) {
      throw new ChaperoneError('protocol', `${msg.type} for request ${msg.requestId}, not ${requestId}`);
    }
  }

  // ---- connection ----

  /**
   * Opens /extension, checks the engine's signed challenge against the pinned key, authenticates
   * and resolves with hello_ack. A refused auth rejects with ChaperoneError 'closed' (closeCode
   * 4401/4403). `mutateAuth(auth)` may return a forged auth frame (tests only).
   */
  async connect({ resumeSessionId, capabilities = DEFAULT_CAPABILITIES, grants, mutateAuth, timeoutMs = 5000 } = {}) {
    if (!this.pinned) throw new ChaperoneError('not_paired', 'pair before connecting');
    if (this.#conn) throw new ChaperoneError('protocol', 'already connected');
    const keys = await this.ensureKeys();
    const conn = await this.#open('/extension', timeoutMs);
    try {
      const challenge = await conn.next({ timeoutMs });
      if (challenge.type !== 'challenge') {
        throw new ChaperoneError('protocol', `expected challenge, got ${challenge.type}`);
      }
      await this.#checkChallenge(challenge);

      let auth = {
        type: 'auth',
        installationId: this.installationId,
        deviceId: this.pinned.deviceId,
        client: this.client,
        version: this.version,
        capabilities: [...capabilities],
        ...(resumeSessionId ? { resumeSessionId } : {}),
        ...(grants ? { grants } : {}),
        signature: await signText(keys.privateKey, clientAuthText({
          origin: this.origin,
          engineId: challenge.engineId,
          engineInstanceId: challenge.engineInstanceId,
          connectionId: challenge.connectionId,
          challenge: challenge.challenge,
          installationId: this.installationId,
          capabilities,
        })),
      };
      if (mutateAuth) auth = mutateAuth(auth);
      this.lastAuth = JSON.stringify(auth);
      conn.sendRaw(this.lastAuth);

      const ack = await conn.next({ timeoutMs });
      if (ack.type !== 'hello_ack') throw new ChaperoneError('protocol', `expected hello_ack, got ${ack.type}`);
      if (ack.engineId !== this.pinned.engineId || ack.connectionId !== challenge.connectionId
          || ack.deviceId !== this.pinned.deviceId || ack.protocol !== PROTOCOL) {
        throw new ChaperoneError('protocol', 'hello_ack does not match the challenge and the pairing');
      }
      this.#attach(conn, ack);
      return ack;
    } catch (err) {
      conn.terminate();
      throw err;
    }
  }

  async #checkChallenge(challenge) {
    const mismatch = () => new ChaperoneError('engine_mismatch', 'this Chaperone is not the one you paired with');
    if (challenge.engineId !== this.pinned.engineId) throw mismatch();
    let text;
    try {
      text = engineChallengeText(challenge);
    } catch {
      throw mismatch();
    }
    if (!await verifyText(this.pinned.engineJwk, challenge.signature, text)) throw mismatch();
  }

  #attach(conn, ack) {
    this.#conn = conn;
    this.closeInfo = null;
    this.session = {
      sessionId: ack.sessionId,
      connectionId: ack.connectionId,
      engineInstanceId: ack.engineInstanceId,
      resumed: ack.resumed,
      lastSequence: ack.lastSequence,
      limits: ack.limits,
    };
    conn.once('close', (info) => this.#onClose(conn, info));
    conn.setHandler((text) => this.#dispatch(text));
  }

  #onClose(conn, info) {
    if (this.#conn !== conn) return;
    this.#conn = null;
    this.session = null;
    this.closeInfo = info;
    for (const [id, entry] of this.#incoming) {
      entry.controller.abort(new ChaperoneError('cancelled', 'the connection closed'));
      this.#incoming.delete(id);
    }
    for (const [, pending] of this.#outgoing) pending.reject(closedError(info));
    this.#outgoing.clear();
    for (const [, ping] of this.#pings) ping.reject(closedError(info));
    this.#pings.clear();
    for (const [, transfer] of this.#transfers) clearTimeout(transfer.timer);
    this.#transfers.clear();
    this.emit('close', info);
  }

  /** Resolves with {code, reason} when the current connection closes. */
  whenClosed({ timeoutMs = 5000 } = {}) {
    if (!this.#conn) return Promise.resolve(this.closeInfo);
    return withTimeout(this.#conn.closed, timeoutMs, 'the connection did not close');
  }

  close(code = 1000, reason) {
    return this.#conn ? this.#conn.close(code, reason) : Promise.resolve(this.closeInfo);
  }

  terminate() {
    return this.#conn ? this.#conn.terminate() : Promise.resolve(this.closeInfo);
  }

  async #open(path, timeoutMs) {
    return RawConnection.open({
      port: this.port, path, origin: this.origin, host: this.host, hostHeader: this.hostHeader, timeoutMs,
    });
  }

  /** A bare connection with this client's Origin, for tests that speak the protocol by hand. */
  openRaw(path = '/extension', options = {}) {
    return RawConnection.open({
      port: this.port, path, origin: this.origin, host: this.host, hostHeader: this.hostHeader, ...options,
    });
  }

  // ---- sending ----

  #requireConn() {
    if (!this.#conn) throw new ChaperoneError('closed', 'not connected');
    return this.#conn;
  }

  /** Sends one envelope message, chunked when its serialization is over the threshold. */
  send(message) {
    const text = JSON.stringify(message);
    const bytes = Buffer.from(text, 'utf8');
    if (bytes.length > LIMITS.maxMessageBytes) {
      throw new ChaperoneError('too_large', `message of ${bytes.length} bytes is over ${LIMITS.maxMessageBytes}`);
    }
    if (bytes.length > LIMITS.chunkThreshold) this.sendChunks(bytes);
    else this.#requireConn().sendRaw(text);
  }

  /** A text frame as is: malformed JSON, unknown types, oversize frames. */
  sendRaw(text, options, written) {
    this.#requireConn().sendRaw(text, options, written);
  }

  /** Several frames in one socket write (see RawConnection.sendTogether). */
  sendTogether(messages) {
    this.#requireConn().sendTogether(messages.map((m) => (typeof m === 'string' ? m : JSON.stringify(m))));
  }

  /**
   * Sends `message` (object, string or bytes) as chunk frames of 256 KiB slices. Tests may bend the
   * transfer: {indices} sends only those slices in that order (gaps, duplicates), {total} and
   * {originalBytes} override the announced sizes. Returns the transferId.
   */
  sendChunks(message, { transferId = randomId(), indices, total, originalBytes } = {}) {
    const conn = this.#requireConn();
    const bytes = Buffer.isBuffer(message) || message instanceof Uint8Array
      ? Buffer.from(message)
      : Buffer.from(typeof message === 'string' ? message : JSON.stringify(message), 'utf8');
    const size = LIMITS.chunkSize;
    const count = Math.ceil(bytes.length / size);
    for (const index of indices ?? [...Array(count).keys()]) {
      conn.sendRaw(JSON.stringify({
        type: 'chunk',
        transferId,
        index,
        total: total ?? count,
        originalBytes: originalBytes ?? bytes.length,
        data: b64urlEncode(bytes.subarray(index * size, (index + 1) * size)),
      }));
    }
    return transferId;
  }

  /**
   * Calls an engine method. Resolves with the result; rejects with ChaperoneError(code) for an
   * error response, 'timeout' if nothing came back in time (a cancel is then sent), 'closed' if the
   * connection dropped first.
   */
  request(method, params = {}, { timeoutMs = 10000, id } = {}) {
    const requestId = id ?? `c${++this.#nextRequestId}`;
    return new Promise((resolve, reject) => {
      // The engine enforces timeoutMs itself; the extra second only catches an engine that never answers.
      const timer = setTimeout(() => {
        this.#outgoing.delete(requestId);
        if (this.#conn) this.send({ type: 'cancel', id: requestId });
        reject(new ChaperoneError('timeout', `${method} got no response in ${timeoutMs} ms`));
      }, timeoutMs + 1000);
      this.#outgoing.set(requestId, {
        resolve: (v) => { clearTimeout(timer); resolve(v); },
        reject: (e) => { clearTimeout(timer); reject(e); },
      });
      try {
        this.send({ type: 'request', id: requestId, method, params, timeoutMs });
      } catch (err) {
        this.#outgoing.get(requestId).reject(err);
        this.#outgoing.delete(requestId);
      }
    });
  }

  /** Sends an event with the next sequence number and returns that number. */
  emitEvent(event, data = {}) {
    const sequence = ++this.sequence;
    this.send({ type: 'event', event, data, sequence, timestamp: Date.now() });
    return sequence;
  }

  /** Pings the engine and resolves with the round trip in milliseconds. */
  ping({ timeoutMs = 5000 } = {}) {
    const sequence = ++this.#pingSequence;
    const start = performance.now();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pings.delete(sequence);
        reject(new ChaperoneError('timeout', `no pong for ping ${sequence}`));
      }, timeoutMs);
      this.#pings.set(sequence, {
        resolve: () => { clearTimeout(timer); resolve(performance.now() - start); },
        reject: (e) => { clearTimeout(timer); reject(e); },
      });
      this.send({ type: 'ping', sequence, timestamp: Date.now() });
    });
  }

  /**
   * Installs the handler for engine → extension requests: handler(method, params, {id, signal,
   * timeoutMs}). Its value is the result; a thrown ChaperoneError becomes that error code, anything
   * else `internal`. The signal aborts on cancel or disconnect.
   */
  onRequest(handler) {
    this.#handler = handler;
  }

  /** What `extension.info` answers; a test may replace it to play a browser that updated. */
  extensionInfo() {
    return { client: 'chaperone-test-client', version: '1', browser: this.browser };
  }

  /** Resolves with the first emitted `name` whose payload satisfies `predicate`. */
  waitFor(name, predicate = () => true, { timeoutMs = 5000 } = {}) {
    return new Promise((resolve, reject) => {
      const listener = (value) => {
        if (!predicate(value)) return;
        clearTimeout(timer);
        this.off(name, listener);
        resolve(value);
      };
      const timer = setTimeout(() => {
        this.off(name, listener);
        reject(new ChaperoneError('timeout', `no matching '${name}' within ${timeoutMs} ms`));
      }, timeoutMs);
      this.on(name, listener);
    });
  }

  // ---- receiving ----

  #sendError(code, message, extra = {}) {
    if (this.#conn) this.#conn.send({ type: 'error', code, message, ...extra });
  }

  #dispatch(text) {
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
    this.emit('message', msg);
    switch (msg.type) {
      case 'request': this.#onEngineRequest(msg); break;
      case 'response': this.#onResponse(msg); break;
      case 'cancel': this.#onCancel(msg); break;
      case 'event': this.emit('event', msg); break;
      case 'ping':
        if (this.autoPong) {
          this.stats.pingsAnswered++;
          this.send({ type: 'pong', sequence: msg.sequence, timestamp: msg.timestamp, replyTimestamp: Date.now() });
        }
        break;
      case 'pong': {
        const ping = this.#pings.get(msg.sequence);
        this.#pings.delete(msg.sequence);
        ping?.resolve();
        break;
      }
      case 'error': this.emit('protocol-error', msg); break;
      default: this.#sendError('unsupported', `unknown message type ${JSON.stringify(msg.type)}`);
    }
  }

  #onResponse(msg) {
    const pending = this.#outgoing.get(msg.id);
    if (!pending) return; // late answer to a request we already gave up on
    this.#outgoing.delete(msg.id);
    if (msg.error) {
      pending.reject(new ChaperoneError(msg.error.code, msg.error.message, msg.error.data));
    } else {
      pending.resolve(msg.result);
    }
  }

  #respond(id, body) {
    if (!this.#conn) return;
    try {
      this.send({ type: 'response', id, ...body });
    } catch (err) {
      // A result too large to send still gets an answer, so the engine's call does not hang.
      const code = err instanceof ChaperoneError ? err.code : 'internal';
      this.send({ type: 'response', id, error: { code, message: err.message } });
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
    if (this.#incoming.size >= LIMITS.maxInFlight) {
      this.stats.busyAnswered++;
      this.#respond(id, { error: { code: 'busy', message: `${LIMITS.maxInFlight} requests already in flight` } });
      return;
    }
    const entry = { controller: new AbortController() };
    this.#incoming.set(id, entry);
    this.stats.maxEngineInFlight = Math.max(this.stats.maxEngineInFlight, this.#incoming.size);
    const ctx = { id, signal: entry.controller.signal, timeoutMs: msg.timeoutMs };
    const run = async () => {
      // Like the real extension, answered by the client itself: the engine asks both on every
      // connection, and tests' handlers only see the methods they are about. This client holds
      // no grants.
      if (msg.method === 'extension.info') return this.extensionInfo();
      if (msg.method === 'extension.grants') return { grants: [] };
      if (!this.#handler) throw new ChaperoneError('unknown_method', `no handler for ${msg.method}`);
      return this.#handler(msg.method, msg.params, ctx);
    };
    run().then(
      (result) => this.#finish(id, entry, { result: result === undefined ? null : result }),
      (err) => this.#finish(id, entry, { error: toWireError(err) }),
    );
  }

  #finish(id, entry, body) {
    // Cancelled or disconnected meanwhile: that answer was already given (or cannot be).
    if (this.#incoming.get(id) !== entry) return;
    this.#incoming.delete(id);
    this.#respond(id, body);
  }

  #onCancel(msg) {
    const entry = this.#incoming.get(msg.id);
    if (!entry) return;
    // Answer at once and free the slot, so the engine's window and ours agree.
    this.#incoming.delete(msg.id);
    entry.controller.abort(new ChaperoneError('cancelled', 'cancelled by the engine'));
    this.#respond(msg.id, { error: { code: 'cancelled', message: 'cancelled by the engine' } });
  }

  #onChunk(msg) {
    const { transferId, index, total, originalBytes, data } = msg;
    if (typeof transferId !== 'string' || transferId.length === 0 || transferId.length > 128) {
      this.#sendError('invalid_params', 'a chunk needs a transferId');
      return;
    }
    const fail = (code, message) => {
      const transfer = this.#transfers.get(transferId);
      if (transfer) clearTimeout(transfer.timer);
      this.#transfers.delete(transferId);
      this.#sendError(code, message, { transferId });
    };
    const size = LIMITS.chunkSize;
    let transfer = this.#transfers.get(transferId);
    if (!transfer) {
      if (!Number.isSafeInteger(originalBytes) || originalBytes <= 0) return fail('invalid_params', 'bad originalBytes');
      if (originalBytes > LIMITS.maxMessageBytes) return fail('too_large', `message of ${originalBytes} bytes`);
      if (total !== Math.ceil(originalBytes / size)) return fail('invalid_params', 'total does not match originalBytes');
      if (index !== 0) return fail('invalid_params', `gap: transfer starts at chunk ${index}`);
      if (this.#transfers.size >= LIMITS.maxTransfers) return fail('busy', 'too many transfers open');
      let open = originalBytes;
      for (const t of this.#transfers.values()) open += t.originalBytes;
      if (open > LIMITS.maxMessageBytes) return fail('too_large', 'too many bytes in flight');
      transfer = { total, originalBytes, parts: [], timer: null };
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
    clearTimeout(transfer.timer);
    transfer.timer = setTimeout(() => fail('timeout', 'transfer idle for too long'), LIMITS.transferTimeoutMs);
    if (transfer.parts.length < total) return undefined;

    clearTimeout(transfer.timer);
    this.#transfers.delete(transferId);
    let inner;
    try {
      inner = JSON.parse(utf8Decoder.decode(Buffer.concat(transfer.parts)));
    } catch {
      return fail('invalid_params', 'reassembled message is not UTF-8 JSON');
    }
    if (!['request', 'response', 'event'].includes(inner?.type)) {
      return fail('invalid_params', 'a chunked message is a request, response or event');
    }
    this.#handle(inner);
    return undefined;
  }
}

function toWireError(err) {
  if (err instanceof ChaperoneError && isErrorCode(err.code)) {
    return { code: err.code, message: err.message, ...(err.data !== undefined ? { data: err.data } : {}) };
  }
  return { code: 'internal', message: String(err?.message ?? err) };
}
