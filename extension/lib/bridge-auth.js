// SPDX-License-Identifier: GPL-3.0-or-later
// Authenticating a connection to the paired app (docs/protocol.md §5): the app's challenge must be
// signed by the engine key pinned at pairing; then our signed auth (capabilities, grants, the
// session to resume) and the app's hello_ack. What follows (state, reconnecting) is the client's.

import { clientAuthText, engineChallengeText, signText, verifyText } from './protocol.js';
import { BridgeError, HANDSHAKE_TIMEOUT_MS, PROTOCOL } from './bridge-socket.js';

const utf8 = new TextEncoder();
// Until hello_ack the engine reads at most 16 KiB; the auth frame must stay below that.
const PRE_AUTH_BUDGET = 15 * 1024;

/**
 * Challenge → auth → hello_ack on a fresh socket of `bridge` (a BridgeClient), as the stored
 * `record` says. Returns {ack, deferredGrants} — the grants that did not fit in the auth frame, to
 * send as an event once connected, or false — or null when the challenge is not signed by the
 * pinned engine (the socket is then closed). Throws BridgeError on anything else.
 */
export async function authenticate(bridge, sock, record, stale) {
  const { pairing, privateKey } = record;
  const challenge = await sock.next(bridge.timers, HANDSHAKE_TIMEOUT_MS);
  if (stale()) throw new BridgeError('stale', 'abandoned');
  if (challenge.type !== 'challenge' || challenge.protocol !== PROTOCOL) {
    throw new BridgeError('protocol', `expected challenge, got ${challenge.type}`);
  }
  if (!await challengeSignedByPinned(challenge, pairing)) {
    // §5.1: send nothing, close; the client tells the person. Never fall back to pairing.
    sock.close(1000);
    return null;
  }
  const installationId = await bridge.keystore.installationId();
  const capabilities = [...new Set([...bridge.capabilities(), 'extension.info'])].sort();
  const { sessionId: resumeSessionId } = await bridge.session.get('sessionId');
  let grants;
  try {
    grants = bridge.authGrants ? await bridge.authGrants() : undefined;
  } catch (err) {
    bridge.log('authGrants failed', err?.message);
  }
  const auth = {
    type: 'auth',
    installationId,
    deviceId: pairing.deviceId,
    client: bridge.client,
    version: bridge.version,
    capabilities,
    ...(typeof resumeSessionId === 'string' ? { resumeSessionId } : {}),
    ...(Array.isArray(grants) ? { grants } : {}),
    signature: await signText(privateKey, clientAuthText({
      origin: bridge.origin,
      engineId: challenge.engineId,
      engineInstanceId: challenge.engineInstanceId,
      connectionId: challenge.connectionId,
      challenge: challenge.challenge,
      installationId,
      capabilities,
    })),
  };
  let text = JSON.stringify(auth);
  let deferredGrants = false;
  if (utf8.encode(text).length > PRE_AUTH_BUDGET && auth.grants) {
    // The engine reads at most 16 KiB before hello_ack; many grants go as an event afterwards.
    delete auth.grants;
    text = JSON.stringify(auth);
    deferredGrants = grants;
  }
  if (stale()) throw new BridgeError('stale', 'abandoned');
  sock.send(text);
  const ack = await sock.next(bridge.timers, HANDSHAKE_TIMEOUT_MS);
  if (ack.type !== 'hello_ack' || ack.engineId !== pairing.engineId
      || ack.connectionId !== challenge.connectionId || ack.deviceId !== pairing.deviceId) {
    throw new BridgeError('protocol', 'hello_ack does not match the challenge and the pairing');
  }
  if (stale()) throw new BridgeError('stale', 'abandoned');
  return { ack, deferredGrants };
}

async function challengeSignedByPinned(challenge, pairing) {
  if (challenge.engineId !== pairing.engineId) return false;
  try {
    return await verifyText(pairing.enginePublicKey, challenge.signature, engineChallengeText(challenge));
  } catch {
    return false;
  }
}
