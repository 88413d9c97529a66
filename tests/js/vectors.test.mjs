// SPDX-License-Identifier: GPL-3.0-or-later
// Checks every shared vector in tests/vectors/*.json with WebCrypto, the way the extension computes:
// private keys imported non-extractable, every expected value recomputed, every signature verified,
// and each key signing afresh so the keys themselves are proven to be pairs.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, test } from 'node:test';

import {
  ProtocolInputError, approvedText, b64urlDecode, b64urlEncode, clientAuthText, codeDetails, codeText,
  commitment, commitmentText, displayCode, engineChallengeText, engineIdOf, fingerprintOf,
  importKeyPair, joinSigned, pairingTranscript, revealText, sha256, signText, sortedCapabilities,
  toHex, uncompressedPoint, verifyText,
} from '../../extension/lib/protocol.js';

const VECTORS = new URL('../vectors/', import.meta.url);
const load = async (file) => JSON.parse(await readFile(new URL(file, VECTORS), 'utf8'));

const files = {
  pairing: await load('pairing.json'),
  auth: await load('auth.json'),
  encoding: await load('encoding.json'),
};

async function importKeys(file) {
  const keys = {};
  for (const [name, { jwk }] of Object.entries(file.keys ?? {})) {
    keys[name] = await importKeyPair(jwk);
  }
  return keys;
}

/** Verifies the vector's signature, then signs the same text again and verifies that too. */
async function assertSignedBy(pair, text, signature, what) {
  assert.ok(await verifyText(pair.jwk, signature, text), `${what}: the vector's signature verifies`);
  const fresh = await signText(pair.privateKey, text);
  assert.equal(b64urlDecode(fresh).length, 64, `${what}: a P1363 signature is 64 bytes`);
  assert.ok(await verifyText(pair.publicKey, fresh, text), `${what}: a fresh signature verifies`);
}

const checks = {
  async 'public-key'(v, keys) {
    const { jwk } = keys[v.key];
    assert.equal(toHex(uncompressedPoint(jwk)), v.pointHex);
    assert.equal(await engineIdOf(jwk), v.sha256Id);
    assert.equal(await fingerprintOf(jwk), v.fingerprint);
    assert.match(v.fingerprint, /^[0-9a-f]{4}( [0-9a-f]{4}){7}$/);
  },

  async pairing(v, keys) {
    const { inputs: i, expected: e } = v;
    const ext = keys[i.extensionKey];
    const eng = keys[i.engineKey];
    const engineId = await engineIdOf(eng.jwk);
    assert.equal(engineId, e.engineId);
    assert.equal(commitmentText(i.nonceC, ext.jwk), e.commitmentText);
    assert.equal(await commitment(i.nonceC, ext.jwk), e.commitment);
    assert.equal(b64urlEncode(await sha256(e.commitmentText)), e.commitment);

    const transcript = pairingTranscript({ ...i, extJwk: ext.jwk, engineId, engineJwk: eng.jwk });
    assert.deepEqual(transcript, e.transcript);
    assert.equal(revealText(transcript), e.revealText);
    assert.equal(codeText(transcript), e.codeText);
    assert.equal(approvedText(transcript, i.deviceId), e.approvedText);

    const details = await codeDetails(transcript);
    assert.equal(details.digestHex, e.codeDigestHex);
    assert.equal(details.first8Hex, e.codeFirst8Hex);
    assert.equal(details.uint64, e.codeUint64);
    assert.equal(details.code, e.code);
    assert.equal(displayCode(e.code), e.codeDisplay);

    await assertSignedBy(ext, e.revealText, e.revealSignature, 'reveal');
    await assertSignedBy(eng, e.approvedText, e.approvedSignature, 'approval');
    // Each signature belongs to one key only: the roles cannot be swapped.
    assert.equal(await verifyText(eng.jwk, e.revealSignature, e.revealText), false);
    assert.equal(await verifyText(ext.jwk, e.approvedSignature, e.approvedText), false);
  },

  async 'engine-challenge'(v, keys) {
    assert.equal(engineChallengeText(v.inputs), v.expected.text);
    await assertSignedBy(keys[v.key], v.expected.text, v.expected.signature, 'challenge');
  },

  async 'client-auth'(v, keys) {
    assert.deepEqual(sortedCapabilities(v.inputs.capabilities), v.expected.sortedCapabilities);
    assert.equal(clientAuthText(v.inputs), v.expected.text);
    await assertSignedBy(keys[v.key], v.expected.text, v.expected.signature, 'auth');
  },

  async signature(v, keys) {
    assert.equal(await verifyText(keys[v.key].jwk, v.signature, v.text), v.valid);
  },

  async commitment(v, keys) {
    const computed = await commitment(v.nonceC, keys[v.key].jwk);
    assert.equal(computed, v.commitment);
    assert.equal(computed === v.matches, v.equal);
  },

  refuse(v) {
    assert.throws(() => joinSigned(v.items), ProtocolInputError);
  },

  b64url(v) {
    const bytes = Buffer.from(v.hex, 'hex');
    assert.equal(b64urlEncode(bytes), v.text);
    assert.equal(toHex(b64urlDecode(v.text)), v.hex);
    assert.doesNotMatch(v.text, /=/);
  },

  'b64url-invalid'(v) {
    assert.throws(() => b64urlDecode(v.text), ProtocolInputError);
  },

  async sha256(v) {
    const input = v.text !== undefined ? v.text : Buffer.from(v.hex, 'hex');
    assert.equal(toHex(await sha256(input)), v.digestHex);
  },

  join(v) {
    assert.equal(joinSigned(v.items), v.text);
    assert.equal(Buffer.from(v.text, 'utf8').toString('hex'), v.textHex);
  },

  async code(v) {
    const details = await codeDetails(v.transcript);
    assert.equal(details.digestHex, v.expected.codeDigestHex);
    assert.equal(details.first8Hex, v.expected.codeFirst8Hex);
    assert.equal(details.uint64, v.expected.codeUint64);
    assert.equal(details.code, v.expected.code);
    assert.equal(displayCode(details.code), v.expected.codeDisplay);
    assert.match(v.expected.code, /^\d{6}$/);
  },
};

for (const [fileName, file] of Object.entries(files)) {
  describe(`${fileName}.json`, () => {
    test('is documented and well-formed', () => {
      assert.equal(typeof file.description, 'string');
      const names = new Set();
      for (const v of file.vectors) {
        assert.equal(typeof v.description, 'string', `${v.name} has a description`);
        assert.ok(v.description.length > 10, `${v.name} has a real description`);
        assert.ok(checks[v.kind], `${v.name}: kind "${v.kind}" has a checker`);
        assert.ok(!names.has(v.name), `${v.name} is unique`);
        names.add(v.name);
      }
    });

    if (file.keys) {
      test('keys are P-256 JWKs with 32-byte d, x and y', async () => {
        for (const [name, { jwk, description }] of Object.entries(file.keys)) {
          assert.equal(typeof description, 'string');
          assert.equal(jwk.kty, 'EC', name);
          assert.equal(jwk.crv, 'P-256', name);
          for (const c of ['d', 'x', 'y']) assert.equal(b64urlDecode(jwk[c]).length, 32, `${name}.${c}`);
        }
        // The imported private key stays inside WebCrypto, as it does in the extension.
        const keys = await importKeys(file);
        for (const pair of Object.values(keys)) assert.equal(pair.privateKey.extractable, false);
      });
    }

    for (const v of file.vectors) {
      test(`${v.kind}: ${v.name}`, async () => {
        await checks[v.kind](v, await importKeys(file));
      });
    }
  });
}

test('the files share one set of keys', () => {
  assert.deepEqual(files.pairing.keys, files.auth.keys);
});

test('the code cases cover the edges the C side can get wrong', () => {
  const codes = files.encoding.vectors.filter((v) => v.kind === 'code');
  assert.ok(codes.some((v) => v.expected.code.startsWith('0')), 'a code with a leading zero');
  assert.ok(codes.some((v) => v.expected.code.startsWith('000')), 'a code with three leading zeros');
  assert.ok(codes.some((v) => BigInt(v.expected.codeUint64) >= 2n ** 63n), 'a digest prefix with the top bit set');
});
