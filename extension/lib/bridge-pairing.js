// SPDX-License-Identifier: GPL-3.0-or-later
// One pairing attempt on /pairing (docs/protocol.md §4), the messages only: commit to our new key,
// check the engine's key and id, reveal, show the six digits, and verify the app's signed approval
// before anything is kept. The client (bridge-client.js) runs it, shows its progress and stores
// what it returns. The JS half of src/core/chp-bridge-pairing.c.

import {
  approvedText, code as pairingCode, commitment, displayCode, engineIdOf, pairingTranscript,
  randomNonce, revealText, signText, verifyText,
} from './protocol.js';
import { BridgeError, HANDSHAKE_TIMEOUT_MS, PROTOCOL, Socket } from './bridge-socket.js';

/**
 * The steps of one attempt for `bridge` (a BridgeClient: its socket maker, timers, keystore and
 * names) on `port`. Resolves with {outcome: 'approved', deviceId, engineId, code, keys, record} or
 * {outcome, message, retryAfter?}; throws a BridgeError with `outcome` when no socket opens or the
 * attempt was cancelled (`live()` false). `onSocket(sock)` gets the socket as soon as it is open,
 * `onPending(pairing)` the code to show, `tamper(msg)` may rewrite each incoming message (tests).
 */
export async function pairingSteps(bridge, { port, tamper = (m) => m, live, onSocket, onPending }) {
  const fail = (outcome, message, extra = {}) => Object.assign(new BridgeError(outcome, message), { outcome }, extra);
  let sock;
  try {
    sock = await Socket.open(bridge.createSocket, `ws://127.0.0.1:${port}/pairing`, bridge.timers, HANDSHAKE_TIMEOUT_MS);
  } catch {
    throw fail('not_running', `Chaperone is not running on port ${port}`);
  }
  onSocket(sock);
  if (!live()) throw fail('cancelled', 'pairing cancelled');
  const keys = await bridge.keystore.newKeyPair();
  const installationId = await bridge.keystore.installationId();
  const nonceC = randomNonce();
  sock.send(JSON.stringify({
    type: 'pair_request',
    protocol: PROTOCOL,
    installationId,
    client: bridge.client,
    version: bridge.version,
    browser: bridge.browser,
    publicKey: keys.jwk,
    commitment: await commitment(nonceC, keys.jwk),
  }));

  // 120 s for the person plus slack; the engine ends the attempt itself with pair_expired.
  const next = async (types, timeoutMs) => {
    let msg;
    try {
      msg = tamper(await sock.next(bridge.timers, timeoutMs));
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
      origin: bridge.origin,
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
    const expiresAt = Number.isSafeInteger(pending.expiresAt) ? pending.expiresAt : bridge.timers.now() + 120000;
    if (!live()) throw fail('cancelled', 'pairing cancelled');
    onPending({ phase: 'pending', port, code: sixDigits, display: displayCode(sixDigits), expiresAt, requestId: challenge.requestId });

    const approved = await next(['pair_approved'], Math.max(1000, expiresAt - bridge.timers.now()) + 10000);
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
        pairedAt: bridge.timers.now(),
      },
    };
  } catch (err) {
    if (err instanceof BridgeError && err.outcome) return toResult(err);
    return { outcome: 'failed', message: String(err?.message ?? err) };
  }
}
