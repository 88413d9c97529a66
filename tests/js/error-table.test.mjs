// SPDX-License-Identifier: GPL-3.0-or-later
// Keeps the JavaScript error table (extension/lib/protocol-errors.js) and the C X-macro table
// (src/wire/chp-error-codes.h) identical, so the extension and the engine never disagree on a code.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';

import { ERROR_CODES, isErrorCode } from '../../extension/lib/protocol-errors.js';

const C_TABLE = new URL('../../src/wire/chp-error-codes.h', import.meta.url);

// Anchored at the start of a line so an example inside a comment (" * CHP_ERROR_CODE (...)")
// is not taken for an entry.
const ENTRY = /^[ \t]*CHP_ERROR_CODE[ \t]*\([ \t]*([A-Z][A-Z0-9_]*)[ \t]*,[ \t]*"([^"\\]*)"[ \t]*\)/gm;

async function readCTable() {
  const text = await readFile(C_TABLE, 'utf8');
  return [...text.matchAll(ENTRY)].map(([, name, code]) => ({ name, code }));
}

test('the C error table lists the same codes as the JS table, in the same order', async () => {
  const entries = await readCTable();
  assert.deepEqual(entries.map((e) => e.code), [...ERROR_CODES]);
});

test('each C enum name is its code in upper case', async () => {
  // A mismatch here (say CHP_ERROR_STALE_NODE mapped to "stale_document") would send one error
  // under another's name; the table's order alone cannot catch that.
  for (const { name, code } of await readCTable()) {
    assert.equal(name, code.toUpperCase(), `${name} should map to "${name.toLowerCase()}"`);
  }
});

test('the JS table is the 26 codes of DESIGN §5 and policy_denied (issue 18), frozen and without repeats', () => {
  assert.equal(ERROR_CODES.length, 27);
  assert.equal(new Set(ERROR_CODES).size, ERROR_CODES.length);
  assert.ok(Object.isFrozen(ERROR_CODES));
  assert.throws(() => { ERROR_CODES.push('made_up'); }, TypeError);
  for (const code of ERROR_CODES) assert.match(code, /^[a-z]+(_[a-z]+)*$/);
});

test('isErrorCode accepts exactly the table', () => {
  assert.ok(isErrorCode('stale_document'));
  assert.ok(isErrorCode('internal'));
  assert.equal(isErrorCode('STALE_DOCUMENT'), false);
  assert.equal(isErrorCode('made_up'), false);
  assert.equal(isErrorCode(''), false);
  assert.equal(isErrorCode(undefined), false);
  // Not a string, even one that stringifies to a code.
  assert.equal(isErrorCode(['busy']), false);
  assert.equal(isErrorCode({ toString: () => 'busy' }), false);
});
