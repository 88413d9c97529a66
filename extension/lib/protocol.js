// SPDX-License-Identifier: GPL-3.0-or-later
// Pure protocol computations (DESIGN §2–4, docs/protocol.md), done the way the extension does them:
// WebCrypto only, P1363 signatures, base64url without padding. The extension's service worker, the
// Node test client, the vector generator and the vector tests all import this one file, so they agree
// by construction and the shared vectors test the code the extension really runs.

const subtle = globalThis.crypto.subtle;
const utf8 = new TextEncoder();

export const PAIR_LABEL = 'chaperone-pair-v1';
export const AUTH_LABEL = 'chaperone-auth-v1';

/** Limits from the decisions file; hello_ack announces the same numbers. */
export const LIMITS = Object.freeze({
  maxInFlight: 8,
  chunkThreshold: 524288,
  chunkSize: 262144,
  maxMessageBytes: 16777216,
  maxTransfers: 8,
  transferTimeoutMs: 30000,
  maxFrameBytes: 655360,
  heartbeatMs: 15000,
});

/** Bytes an unauthenticated peer may send before it must have authenticated. */
export const PRE_AUTH_LIMIT = 16384;

const ECDSA = { name: 'ECDSA', hash: 'SHA-256' };
const P256 = { name: 'ECDSA', namedCurve: 'P-256' };
const B64URL = /^[A-Za-z0-9_-]*$/;
const B64URL_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** Errors of this module are refusals (a bad input), so callers can tell them from bugs. */
export class ProtocolInputError extends Error {
  constructor(message) {
    super(message);
    this.name = 'ProtocolInputError';
  }
}

// ---- base64url (RFC 4648 §5, no padding) ----

export function b64urlEncode(bytes) {
  // btoa over a binary string, in slices so a large input never overflows the argument list.
  const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let binary = '';
  for (let i = 0; i < view.length; i += 0x8000) {
    binary += String.fromCharCode.apply(null, view.subarray(i, i + 0x8000));
  }
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/**
 * Strict decoder: refuses padding, the standard alphabet's '+' and '/', whitespace, a length that no
 * byte string encodes to, and unused trailing bits that are not zero. Node's own decoder accepts all
 * of these, which would let two different strings stand for one signature or nonce.
 */
export function b64urlDecode(text) {
  if (typeof text !== 'string' || !B64URL.test(text)) {
    throw new ProtocolInputError('not base64url (RFC 4648 §5 alphabet, no padding)');
  }
  const rest = text.length % 4;
  if (rest === 1) throw new ProtocolInputError('base64url length cannot encode whole bytes');
  if (rest !== 0) {
    const last = B64URL_CHARS.indexOf(text[text.length - 1]);
    const unusedBits = rest === 2 ? 4 : 2;
    if (last & ((1 << unusedBits) - 1)) {
      throw new ProtocolInputError('base64url has non-zero trailing bits (not canonical)');
    }
  }
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

export function randomB64url(byteCount) {
  return b64urlEncode(globalThis.crypto.getRandomValues(new Uint8Array(byteCount)));
}

/** 16 random bytes: requestId, deviceId, installationId, ... (22 characters). */
export const randomId = () => randomB64url(16);
/** 32 random bytes: nonces and challenges (43 characters). */
export const randomNonce = () => randomB64url(32);

export function toHex(bytes) {
  const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  return Array.from(view, (b) => b.toString(16).padStart(2, '0')).join('');
}

// ---- signed text ----

/**
 * Joins the items of a signed text with "\n" (no trailing newline). A field containing "\n" could
 * shift every later field and make two different transcripts sign the same text, so it is refused.
 */
export function joinSigned(items) {
  for (const [i, item] of items.entries()) {
    if (typeof item !== 'string') {
      throw new ProtocolInputError(`signed field ${i} is not a string`);
    }
    if (item.includes('\n')) {
      throw new ProtocolInputError(`signed field ${i} contains a newline`);
    }
  }
  return items.join('\n');
}

export async function sha256(data) {
  const bytes = typeof data === 'string' ? utf8.encode(data) : data;
  return new Uint8Array(await subtle.digest('SHA-256', bytes));
}

// ---- keys ----

/** The public half as it travels: exactly {kty, crv, x, y}. */
export function publicJwk(jwk) {
  checkPublicJwk(jwk);
  return { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y };
}

export function checkPublicJwk(jwk) {
  if (!jwk || jwk.kty !== 'EC' || jwk.crv !== 'P-256') {
    throw new ProtocolInputError('public key is not an EC P-256 JWK');
  }
  for (const c of ['x', 'y']) {
    if (typeof jwk[c] !== 'string' || b64urlDecode(jwk[c]).length !== 32) {
      throw new ProtocolInputError(`public key ${c} is not a 32-byte base64url coordinate`);
    }
  }
}

/** 0x04 || X || Y, the 65-byte uncompressed point that engineId and fingerprints hash. */
export function uncompressedPoint(jwk) {
  checkPublicJwk(jwk);
  const point = new Uint8Array(65);
  point[0] = 4;
  point.set(b64urlDecode(jwk.x), 1);
  point.set(b64urlDecode(jwk.y), 33);
  return point;
}

export async function engineIdOf(jwk) {
  return `sha256:${toHex(await sha256(uncompressedPoint(jwk)))}`;
}

/** The fingerprint the app shows for a device: "3f2a 91bc 07de ..." (16 bytes, 8 groups). */
export async function fingerprintOf(jwk) {
  const hex = toHex((await sha256(uncompressedPoint(jwk))).subarray(0, 16));
  return hex.match(/.{4}/g).join(' ');
}

/**
 * A key pair as the extension makes it: the private key cannot be exported, only the public JWK.
 */
export async function generateKeyPair() {
  const { privateKey, publicKey } = await subtle.generateKey(P256, false, ['sign', 'verify']);
  const jwk = publicJwk(await subtle.exportKey('jwk', publicKey));
  return { privateKey, publicKey, jwk };
}

/** Imports a full JWK (with d) as a non-extractable signing key plus its public JWK. */
export async function importKeyPair(jwkWithD) {
  const privateKey = await subtle.importKey('jwk', jwkWithD, P256, false, ['sign']);
  const jwk = publicJwk(jwkWithD);
  const publicKey = await importPublicKey(jwk);
  return { privateKey, publicKey, jwk };
}

export async function importPublicKey(jwk) {
  return subtle.importKey('jwk', publicJwk(jwk), P256, true, ['verify']);
}

/** Signs `text` (UTF-8) and returns the 64-byte P1363 signature as base64url. */
export async function signText(privateKey, text) {
  return b64urlEncode(new Uint8Array(await subtle.sign(ECDSA, privateKey, utf8.encode(text))));
}

/**
 * True only for a valid 64-byte P1363 signature. A DER signature or an encoding that is not strict
 * base64url is false, never an exception, so a forged frame cannot crash the verifier.
 */
export async function verifyText(publicKeyOrJwk, signature, text) {
  let raw;
  try {
    raw = b64urlDecode(signature);
  } catch {
    return false;
  }
  if (raw.length !== 64) return false;
  const key = publicKeyOrJwk?.type === 'public' ? publicKeyOrJwk : await importPublicKey(publicKeyOrJwk);
  return subtle.verify(ECDSA, key, raw, utf8.encode(text));
}

// ---- pairing (DESIGN §3) ----

export function commitmentText(nonceC, extJwk) {
  return joinSigned([PAIR_LABEL, 'commit', nonceC, extJwk.x, extJwk.y]);
}

export async function commitment(nonceC, extJwk) {
  return b64urlEncode(await sha256(commitmentText(nonceC, extJwk)));
}

/**
 * The transcript T, in its fixed order. `engineJwk` and `extJwk` are the keys as sent on the wire.
 */
export function pairingTranscript({
  requestId, origin, installationId, extJwk, engineId, engineJwk, nonceC, nonceE,
}) {
  const items = [requestId, origin, installationId, extJwk.x, extJwk.y, engineId, engineJwk.x,
    engineJwk.y, nonceC, nonceE];
  joinSigned(items); // refuse a bad field here, before anything is signed or shown
  return items;
}

export const revealText = (transcript) => joinSigned([PAIR_LABEL, 'reveal', ...transcript]);
export const codeText = (transcript) => joinSigned([PAIR_LABEL, 'code', ...transcript]);
export const approvedText = (transcript, deviceId) =>
  joinSigned([PAIR_LABEL, 'approved', ...transcript, deviceId]);

/**
 * The six digits both sides show. Returned with the intermediate values so a mismatch between the
 * C and JS sides can be traced to the step that differs (a signed 64-bit read is a classic one).
 */
export async function codeDetails(transcript) {
  const digest = await sha256(codeText(transcript));
  const first8 = digest.subarray(0, 8);
  const value = new DataView(first8.buffer, first8.byteOffset, 8).getBigUint64(0, false);
  const code = (value % 1000000n).toString().padStart(6, '0');
  return { digestHex: toHex(digest), first8Hex: toHex(first8), uint64: value.toString(), code };
}

export async function code(transcript) {
  return (await codeDetails(transcript)).code;
}

/** "012345" → "012 345", the way the app and the popup show it. */
export function displayCode(sixDigits) {
  if (!/^\d{6}$/.test(sixDigits)) throw new ProtocolInputError('a pairing code has six digits');
  return `${sixDigits.slice(0, 3)} ${sixDigits.slice(3)}`;
}

// ---- connection (DESIGN §4) ----

export function engineChallengeText({ engineId, engineInstanceId, connectionId, challenge, timestamp }) {
  if (!Number.isSafeInteger(timestamp)) throw new ProtocolInputError('timestamp is not an integer');
  return joinSigned([AUTH_LABEL, 'engine-challenge', engineId, engineInstanceId, connectionId,
    challenge, String(timestamp)]);
}

/**
 * Capabilities are signed sorted (JS default sort, which for the ASCII names used is byte order)
 * and joined with ",". A name containing "," would make two lists sign alike, so it is refused.
 */
export function sortedCapabilities(capabilities) {
  for (const c of capabilities) {
    if (typeof c !== 'string' || c.includes(',')) {
      throw new ProtocolInputError('a capability is a string without ","');
    }
  }
  return [...capabilities].sort();
}

export function clientAuthText({
  origin, engineId, engineInstanceId, connectionId, challenge, installationId, capabilities,
}) {
  return joinSigned([AUTH_LABEL, 'client-auth', origin, engineId, engineInstanceId, connectionId,
    challenge, installationId, sortedCapabilities(capabilities).join(',')]);
}
