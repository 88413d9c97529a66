#!/usr/bin/env node
// SPDX-License-Identifier: GPL-3.0-or-later
// Writes tests/vectors/{pairing,auth,encoding}.json, the vectors that the C tests and the JS tests
// must both pass. Run by hand (`node tests/js/make-vectors.mjs`) and commit the output: every input
// is derived from a fixed label, so a rerun changes only the signatures (ECDSA is randomized, which
// is why consumers verify signatures rather than compare them).

import { createECDH } from 'node:crypto';
import { writeFile } from 'node:fs/promises';

import {
  AUTH_LABEL, PAIR_LABEL, approvedText, b64urlEncode, clientAuthText, codeDetails, codeText,
  commitment, commitmentText, displayCode, engineChallengeText, engineIdOf, fingerprintOf,
  importKeyPair, joinSigned, pairingTranscript, revealText, sha256, signText, sortedCapabilities,
  toHex, uncompressedPoint,
} from '../../extension/lib/protocol.js';

const OUT = new URL('../vectors/', import.meta.url);
const ORIGIN = 'chrome-extension://abcdefghijklmnopabcdefghijklmnop';
const MOZ_ORIGIN = 'moz-extension://0b6f2c3e-94a1-4d7b-8c5e-2f1a9d3b7e60';
const T0 = 1767225600000; // 2026-01-01T00:00:00Z
const GENERATOR = 'tests/js/make-vectors.mjs';

const seed = (label) => sha256(`chaperone test vectors: ${label}`);
const fixedId = async (label) => b64urlEncode((await seed(label)).subarray(0, 16));
const fixedNonce = async (label) => b64urlEncode(await seed(label));

/**
 * A P-256 key whose private scalar is SHA-256 of a label. WebCrypto cannot derive a public key
 * from d, so this one step uses node:crypto; everything after it goes through WebCrypto.
 */
async function fixedKey(label, description) {
  const ecdh = createECDH('prime256v1');
  ecdh.setPrivateKey(Buffer.from(await seed(`key ${label}`)));
  const point = ecdh.getPublicKey();
  const jwk = {
    kty: 'EC',
    crv: 'P-256',
    x: b64urlEncode(point.subarray(1, 33)),
    y: b64urlEncode(point.subarray(33, 65)),
    d: b64urlEncode(ecdh.getPrivateKey()),
  };
  return { description, jwk, pair: await importKeyPair(jwk) };
}

/** DER form of a P1363 signature, for the vector that proves DER is refused on the wire. */
function p1363ToDer(sig64) {
  const int = (bytes) => {
    let i = 0;
    while (i < bytes.length - 1 && bytes[i] === 0) i++;
    const trimmed = bytes.subarray(i);
    return trimmed[0] & 0x80 ? [0x02, trimmed.length + 1, 0, ...trimmed] : [0x02, trimmed.length, ...trimmed];
  };
  const body = [...int(sig64.subarray(0, 32)), ...int(sig64.subarray(32))];
  return new Uint8Array([0x30, body.length, ...body]);
}

/** Flips the last character of a string to another base64url character. */
function tamperLast(text) {
  const last = text.at(-1);
  return text.slice(0, -1) + (last === 'A' ? 'B' : 'A');
}

async function keysSection() {
  const keys = {
    extension: await fixedKey('extension', 'the extension installation key (its private key is non-extractable in a real browser)'),
    engine: await fixedKey('engine', 'the engine identity key'),
    other: await fixedKey('other', 'an unrelated key, for signatures that must not verify'),
    extensionRotated: await fixedKey('extension rotated', 'the same installation after it re-paired with a new key'),
  };
  const json = Object.fromEntries(Object.entries(keys).map(([name, k]) => [name, { description: k.description, jwk: k.jwk }]));
  return { keys, json };
}

async function pairingVector(keys, name, description, { origin, labelSuffix = '' }) {
  const ext = keys.extension.pair;
  const eng = keys.engine.pair;
  const inputs = {
    requestId: await fixedId(`requestId${labelSuffix}`),
    origin,
    installationId: await fixedId(`installationId${labelSuffix}`),
    extensionKey: 'extension',
    engineKey: 'engine',
    nonceC: await fixedNonce(`nonceC${labelSuffix}`),
    nonceE: await fixedNonce(`nonceE${labelSuffix}`),
    deviceId: await fixedId(`deviceId${labelSuffix}`),
  };
  const engineId = await engineIdOf(eng.jwk);
  const transcript = pairingTranscript({ ...inputs, extJwk: ext.jwk, engineId, engineJwk: eng.jwk });
  const details = await codeDetails(transcript);
  const reveal = revealText(transcript);
  const approved = approvedText(transcript, inputs.deviceId);
  return {
    name,
    kind: 'pairing',
    description,
    inputs,
    expected: {
      engineId,
      commitmentText: commitmentText(inputs.nonceC, ext.jwk),
      commitment: await commitment(inputs.nonceC, ext.jwk),
      transcript,
      revealText: reveal,
      revealSignature: await signText(ext.privateKey, reveal),
      codeText: codeText(transcript),
      codeDigestHex: details.digestHex,
      codeFirst8Hex: details.first8Hex,
      codeUint64: details.uint64,
      code: details.code,
      codeDisplay: displayCode(details.code),
      approvedText: approved,
      approvedSignature: await signText(eng.privateKey, approved),
    },
  };
}

async function publicKeyVectors(keys) {
  const out = [];
  for (const name of ['extension', 'engine', 'other', 'extensionRotated']) {
    const { jwk } = keys[name].pair;
    out.push({
      name: `public-key-${name}`,
      kind: 'public-key',
      description: `The ${name} key's uncompressed point, its sha256 id (the engineId when the key is an engine's) and the fingerprint the app shows.`,
      key: name,
      pointHex: toHex(uncompressedPoint(jwk)),
      sha256Id: await engineIdOf(jwk),
      fingerprint: await fingerprintOf(jwk),
    });
  }
  return out;
}

async function makePairing() {
  const { keys, json } = await keysSection();
  const basic = await pairingVector(keys, 'pairing-chrome', 'A full pairing from a Chrome extension origin: every intermediate string, the code and both signatures.', { origin: ORIGIN });
  const moz = await pairingVector(keys, 'pairing-firefox', 'The same computation from a Firefox moz-extension origin with other ids and nonces.', { origin: MOZ_ORIGIN, labelSuffix: ' firefox' });
  const e = basic.expected;
  const der = p1363ToDer(Buffer.from(e.revealSignature, 'base64url'));

  const vectors = [
    ...(await publicKeyVectors(keys)),
    basic,
    moz,
    {
      name: 'reveal-signed-by-other-key',
      kind: 'signature',
      description: 'The reveal text signed by a key that is not the one the extension sent: the engine answers bad_signature.',
      key: 'extension',
      text: e.revealText,
      signature: await signText(keys.other.pair.privateKey, e.revealText),
      valid: false,
    },
    {
      name: 'reveal-tampered-text',
      kind: 'signature',
      description: 'A valid reveal signature checked against a transcript whose nonceE changed by one character.',
      key: 'extension',
      text: revealText([...e.transcript.slice(0, 9), tamperLast(e.transcript[9])]),
      signature: e.revealSignature,
      valid: false,
    },
    {
      name: 'reveal-signature-der',
      kind: 'signature',
      description: 'The valid reveal signature re-encoded as DER: the wire format is P1363 (64 bytes) only, so this must not verify.',
      key: 'extension',
      text: e.revealText,
      signature: b64urlEncode(der),
      valid: false,
    },
    {
      name: 'approved-signed-by-extension',
      kind: 'signature',
      description: 'The approval text signed by the extension key instead of the engine key: the extension must not pin the engine on it.',
      key: 'engine',
      text: e.approvedText,
      signature: await signText(keys.extension.pair.privateKey, e.approvedText),
      valid: false,
    },
    {
      name: 'approved-for-other-device',
      kind: 'signature',
      description: 'A valid approval signature checked against the same transcript with another deviceId.',
      key: 'engine',
      text: approvedText(e.transcript, await fixedId('another deviceId')),
      signature: e.approvedSignature,
      valid: false,
    },
    {
      name: 'commitment-other-nonce',
      kind: 'commitment',
      description: 'The commitment to one nonceC does not match a reveal of another: the engine answers commitment_mismatch.',
      key: 'extension',
      nonceC: await fixedNonce('nonceC other'),
      commitment: await commitment(await fixedNonce('nonceC other'), keys.extension.pair.jwk),
      matches: e.commitment,
      equal: false,
    },
    {
      name: 'transcript-installation-id-with-newline',
      kind: 'refuse',
      description: 'An installationId containing "\\n" would shift every later field; building the reveal text must be refused.',
      items: [PAIR_LABEL, 'reveal', e.transcript[0], e.transcript[1], `${e.transcript[2]}\nforged`, ...e.transcript.slice(3)],
    },
    {
      name: 'transcript-origin-with-trailing-newline',
      kind: 'refuse',
      description: 'An origin ending in "\\n" must be refused, not trimmed.',
      items: [PAIR_LABEL, 'code', e.transcript[0], `${ORIGIN}\n`, ...e.transcript.slice(2)],
    },
  ];
  return {
    description: 'Pairing (DESIGN §3): commitment, transcript, reveal/approval signatures, the six-digit code, engineId and fingerprints. Keys are full JWKs with d: import d as a non-extractable signing key. Signatures are randomized ECDSA P1363 (base64url, 64 bytes): verify them, never compare them. Kinds: public-key, pairing, signature (valid says whether it must verify), commitment (equal says whether the two match), refuse (joining items must be refused). codeUint64 is a decimal string because it can exceed 2^53.',
    generator: GENERATOR,
    keys: json,
    vectors,
  };
}

async function makeAuth() {
  const { keys, json } = await keysSection();
  const engineId = await engineIdOf(keys.engine.pair.jwk);
  const challengeInputs = {
    engineId,
    engineInstanceId: await fixedId('engineInstanceId'),
    connectionId: await fixedId('connectionId'),
    challenge: await fixedNonce('challenge'),
    timestamp: T0,
  };
  const challengeText = engineChallengeText(challengeInputs);
  const challengeSig = await signText(keys.engine.pair.privateKey, challengeText);

  const authVector = async (name, description, capabilities, origin = ORIGIN) => {
    const inputs = {
      origin,
      engineId,
      engineInstanceId: challengeInputs.engineInstanceId,
      connectionId: challengeInputs.connectionId,
      challenge: challengeInputs.challenge,
      installationId: await fixedId('installationId'),
      capabilities,
    };
    const text = clientAuthText(inputs);
    return {
      name,
      kind: 'client-auth',
      description,
      key: 'extension',
      inputs,
      expected: {
        sortedCapabilities: sortedCapabilities(capabilities),
        text,
        signature: await signText(keys.extension.pair.privateKey, text),
      },
    };
  };

  const basicAuth = await authVector('client-auth-basic', 'The auth text: capabilities arrive unsorted and are signed sorted, joined with ",".',
    ['browser.tabs', 'browser.context', 'browser.node.action']);
  const otherConnection = await fixedId('another connectionId');

  const vectors = [
    {
      name: 'engine-challenge',
      kind: 'engine-challenge',
      description: 'The engine signs its challenge; the timestamp is signed as its decimal string.',
      key: 'engine',
      inputs: challengeInputs,
      expected: { text: challengeText, signature: challengeSig },
    },
    basicAuth,
    await authVector('client-auth-byte-order', 'Sorting is by code unit (byte order for ASCII): upper case before lower case, a prefix before its extensions.',
      ['browser.tabs', 'Browser.zeta', 'browser.context2', 'browser.context', 'a']),
    await authVector('client-auth-no-capabilities', 'No capabilities: the last item is empty, so the signed text ends with "\\n".', []),
    await authVector('client-auth-firefox', 'A moz-extension origin.', ['browser.tabs'], MOZ_ORIGIN),
    {
      name: 'engine-challenge-by-other-key',
      kind: 'signature',
      description: 'A challenge signed by an engine that is not the pinned one: the extension says "this Chaperone is not the one you paired with".',
      key: 'engine',
      text: challengeText,
      signature: await signText(keys.other.pair.privateKey, challengeText),
      valid: false,
    },
    {
      name: 'engine-challenge-other-timestamp',
      kind: 'signature',
      description: 'A valid challenge signature checked against a text with another timestamp.',
      key: 'engine',
      text: engineChallengeText({ ...challengeInputs, timestamp: T0 + 1 }),
      signature: challengeSig,
      valid: false,
    },
    {
      name: 'client-auth-replayed-on-another-connection',
      kind: 'signature',
      description: 'An auth signature captured on one connection, checked against the text of another connectionId: a replay must fail.',
      key: 'extension',
      text: clientAuthText({ ...basicAuth.inputs, connectionId: otherConnection }),
      signature: basicAuth.expected.signature,
      valid: false,
    },
    {
      name: 'client-auth-unsorted-signature',
      kind: 'signature',
      description: 'A signature over the capabilities in arrival order (not sorted) does not verify against the canonical text.',
      key: 'extension',
      text: basicAuth.expected.text,
      signature: await signText(keys.extension.pair.privateKey,
        joinSigned([AUTH_LABEL, 'client-auth', ORIGIN, engineId, challengeInputs.engineInstanceId,
          challengeInputs.connectionId, challengeInputs.challenge, basicAuth.inputs.installationId,
          basicAuth.inputs.capabilities.join(',')])),
      valid: false,
    },
    {
      name: 'client-auth-signed-by-other-key',
      kind: 'signature',
      description: 'The auth text signed by a key that is not the device\'s: the engine closes 4401.',
      key: 'extension',
      text: basicAuth.expected.text,
      signature: await signText(keys.other.pair.privateKey, basicAuth.expected.text),
      valid: false,
    },
    {
      name: 'client-auth-old-key-after-rotation',
      kind: 'signature',
      description: 'After re-pairing with a new key, the old key\'s signature no longer verifies for the device.',
      key: 'extensionRotated',
      text: basicAuth.expected.text,
      signature: basicAuth.expected.signature,
      valid: false,
    },
    {
      name: 'client-auth-capability-with-newline',
      kind: 'refuse',
      description: 'A capability containing "\\n" puts a newline in the last field: refused.',
      items: [AUTH_LABEL, 'client-auth', ORIGIN, engineId, challengeInputs.engineInstanceId,
        challengeInputs.connectionId, challengeInputs.challenge, basicAuth.inputs.installationId,
        'browser.tabs\nbrowser.context'],
    },
  ];
  return {
    description: 'Connection auth (DESIGN §4): the engine\'s signed challenge and the extension\'s signed auth. Same key and signature rules as pairing.json. Kinds: engine-challenge, client-auth, signature, refuse.',
    generator: GENERATOR,
    keys: json,
    vectors,
  };
}

/** Looks for a transcript whose code satisfies `want`, varying only nonceE. */
async function findCodeCase(base, want, label) {
  for (let i = 0; i < 200000; i++) {
    const transcript = [...base.slice(0, 9), await fixedNonce(`nonceE search ${label} ${i}`)];
    const details = await codeDetails(transcript);
    if (want(details)) return { transcript, details };
  }
  throw new Error(`no transcript found for ${label}`);
}

async function makeEncoding() {
  const { keys } = await keysSection();
  const engineId = await engineIdOf(keys.engine.pair.jwk);
  const extJwk = keys.extension.pair.jwk;
  const engJwk = keys.engine.pair.jwk;
  const base = pairingTranscript({
    requestId: await fixedId('requestId'), origin: ORIGIN, installationId: await fixedId('installationId'),
    extJwk, engineId, engineJwk: engJwk, nonceC: await fixedNonce('nonceC'), nonceE: await fixedNonce('nonceE'),
  });

  const b64 = (name, bytes, description) => ({
    name, kind: 'b64url', description, hex: toHex(bytes), text: b64urlEncode(bytes),
  });
  const bad = (name, text, description) => ({ name, kind: 'b64url-invalid', description, text });
  const digest = async (name, description, { text, hex }) => ({
    name, kind: 'sha256', description,
    ...(text !== undefined ? { text } : { hex }),
    digestHex: toHex(await sha256(text !== undefined ? text : Buffer.from(hex, 'hex'))),
  });
  const join = (name, description, items) => ({
    name, kind: 'join', description, items, text: joinSigned(items), textHex: toHex(Buffer.from(joinSigned(items))),
  });
  const codeCase = async (name, description, want) => {
    const { transcript, details } = await findCodeCase(base, want, name);
    return {
      name, kind: 'code', description, transcript,
      expected: {
        codeDigestHex: details.digestHex, codeFirst8Hex: details.first8Hex, codeUint64: details.uint64,
        code: details.code, codeDisplay: displayCode(details.code),
      },
    };
  };

  const vectors = [
    b64('b64url-empty', new Uint8Array(0), 'Zero bytes encode to the empty string.'),
    b64('b64url-one-byte', new Uint8Array([0]), 'One byte: two characters, no "==".'),
    b64('b64url-two-bytes', new Uint8Array([0xfb, 0xff]), 'Two bytes that use both URL-safe characters ("-" and "_"): three characters, no "=".'),
    b64('b64url-three-bytes', new Uint8Array([0xff, 0xef, 0xbe]), 'Three bytes: four characters, "_" and "-" again.'),
    b64('b64url-16-bytes', (await seed('b64 16')).subarray(0, 16), 'An id: 16 bytes are 22 characters.'),
    b64('b64url-32-bytes', await seed('b64 32'), 'A nonce: 32 bytes are 43 characters.'),
    b64('b64url-64-bytes', new Uint8Array(64).fill(0xff), 'A signature-sized value: 64 bytes are 86 characters.'),
    bad('b64url-padded', 'AA==', 'Padding is not used: "=" is refused.'),
    bad('b64url-standard-alphabet', '+/8', 'The standard alphabet\'s "+" and "/" are refused.'),
    bad('b64url-whitespace', 'AAAA AAAA', 'Whitespace is refused.'),
    bad('b64url-newline', 'AAAA\nAAAA', 'A line break is refused.'),
    bad('b64url-impossible-length', 'AAAAA', 'A length of 4n+1 encodes no byte string.'),
    bad('b64url-nonzero-trailing-bits', 'AB', 'Two characters carry one byte and four unused bits; a strict decoder refuses non-zero unused bits, so each value has one encoding.'),
    bad('b64url-nonzero-trailing-bits-3', '-_9', 'Three characters carry two bytes and two unused bits, which must be zero.'),
    await digest('sha256-empty', 'SHA-256 of zero bytes.', { text: '' }),
    await digest('sha256-abc', 'SHA-256 of "abc" (FIPS 180-2 example).', { text: 'abc' }),
    await digest('sha256-utf8', 'Text is hashed as UTF-8: "é" is two bytes, "😀" four.', { text: 'é😀' }),
    await digest('sha256-point', 'SHA-256 of the engine key\'s uncompressed point (engineId without its prefix).', { hex: toHex(uncompressedPoint(engJwk)) }),
    join('join-two', 'Items joined with "\\n", no trailing newline.', ['chaperone-pair-v1', 'commit']),
    join('join-empty-last', 'An empty last item leaves the text ending in "\\n".', ['a', '']),
    join('join-single-empty', 'One empty item is the empty text.', ['']),
    join('join-carriage-return', 'Only "\\n" is refused; "\\r" is an ordinary character.', ['a\r', 'b']),
    join('join-utf8', 'Non-ASCII items are signed as UTF-8 bytes (see textHex).', ['chaperone-pair-v1', 'é😀']),
    { name: 'join-refused-newline', kind: 'refuse', description: 'A field containing "\\n" is refused.', items: ['chaperone-pair-v1', 'a\nb'] },
    { name: 'join-refused-only-newline', kind: 'refuse', description: 'A field that is only "\\n" is refused.', items: ['chaperone-pair-v1', '\n'] },
    await codeCase('code-leading-zero', 'The code is below 100000: it keeps its leading zero ("0xx xxx").', (d) => d.code < '100000'),
    await codeCase('code-three-leading-zeros', 'The code is below 1000: three leading zeros ("000 xxx").', (d) => d.code < '001000'),
    await codeCase('code-high-bit', 'The first byte of the digest is >= 0x80: read as a signed 64-bit value it would be negative and give another code.', (d) => parseInt(d.first8Hex.slice(0, 2), 16) >= 0x80),
    await codeCase('code-low-bit', 'The first byte of the digest is < 0x80.', (d) => parseInt(d.first8Hex.slice(0, 2), 16) < 0x80),
  ];
  return {
    description: 'Encoding rules shared by C and JS: base64url without padding (and strict decoding), SHA-256, signed-text joining, and the six-digit code from a transcript (T as in pairing.json). Kinds: b64url (hex <-> text both ways), b64url-invalid (decoding must fail), sha256 (text is UTF-8; hex is raw bytes), join (textHex is the UTF-8 of text), refuse, code (codeUint64 is a decimal string because it can exceed 2^53).',
    generator: GENERATOR,
    vectors,
  };
}

for (const [file, make] of [['pairing.json', makePairing], ['auth.json', makeAuth], ['encoding.json', makeEncoding]]) {
  const data = await make();
  await writeFile(new URL(file, OUT), `${JSON.stringify(data, null, 2)}\n`);
  console.log(`wrote tests/vectors/${file} (${data.vectors.length} vectors)`);
}
