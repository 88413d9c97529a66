// SPDX-License-Identifier: GPL-3.0-or-later
// Redaction in the extension (extension/lib/redact.js) against tests/vectors/redact.json, the rows
// the app's tests/test-redact.c runs too: a secret that comes through is a leak, and ordinary text
// that gets masked is a page the agent can no longer read. Every row is also redacted a second
// time, which must change nothing. What only JS values can be (lone surrogates, cycles, shared
// children, values JSON has no word for) is tested below the rows.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';

import * as PATTERNS from '../../extension/lib/redact-patterns.js';
import { isMarker, isSecretName, redactText, redactValue } from '../../extension/lib/redact.js';

const VECTORS = JSON.parse(await readFile(new URL('../vectors/redact.json', import.meta.url), 'utf8')).vectors;

function assertJson(input, expected, count) {
  const before = JSON.stringify(input);
  const once = redactValue(input);
  assert.deepEqual(once.value, expected);
  assert.equal(once.count, count);
  // A copy: the input is untouched.
  assert.equal(JSON.stringify(input), before);
  const twice = redactValue(once.value);
  assert.deepEqual(twice.value, once.value);
  assert.equal(twice.count, 0);
}

const checks = {
  text(v) {
    const once = redactText(v.input);
    assert.equal(once.text, v.expect);
    assert.equal(once.count, v.count);
    assert.deepEqual(redactText(once.text), { text: once.text, count: 0 });
  },
  json(v) {
    assertJson(v.input, v.expect, v.count);
  },
  name(v) {
    assert.equal(isSecretName(v.input), v.expect, JSON.stringify(v.input));
  },
};

for (const [i, v] of VECTORS.entries()) {
  test(`vector ${String(i).padStart(3, '0')} ${v.kind}: ${v.name}`, () => {
    assert.ok(checks[v.kind], `a kind of row this test knows: ${v.kind}`);
    checks[v.kind](v);
  });
}

test('the rows: three kinds, each name once', () => {
  const kinds = new Set(VECTORS.map((v) => v.kind));
  assert.deepEqual([...kinds].sort(), ['json', 'name', 'text']);
  const names = VECTORS.map((v) => v.name);
  assert.equal(new Set(names).size, names.length, 'row names are unique');
});

test('redact-patterns.js holds what redact-patterns.json says (the meson test compares the text)', async () => {
  const DATA_URL = new URL('../../src/core/policy/redact-patterns.json', import.meta.url);
  const data = JSON.parse(await readFile(DATA_URL, 'utf8'));
  const { names } = data;
  assert.deepEqual(PATTERNS.SECRET_SUBSTRINGS, names.substrings.words);
  assert.deepEqual(PATTERNS.SECRET_WORDS, names.words.words);
  assert.deepEqual(PATTERNS.SECRET_WORD_SUFFIXES, names.words.suffixes);
  assert.deepEqual(PATTERNS.SECRET_PAIRS, names.pairs.pairs);
  assert.deepEqual(PATTERNS.NOT_SECRET_WORDS, names.notSecretWords.words);
  assert.deepEqual(PATTERNS.META_WORDS, names.metaWords.words);
  assert.deepEqual(PATTERNS.KEY_SHAPES, data.keyShapes.shapes.map((s) => ({
    prefix: s.prefix, minBody: s.minBody ?? s.exactBody, exactBody: s.exactBody ?? 0,
    upperDigits: s.bodyChars === 'A-Z0-9', needsDigit: s.needsDigit === true, name: s.name,
  })));
  assert.deepEqual(PATTERNS.AUTH_SCHEMES, data.authSchemes.schemes);
  assert.deepEqual(PATTERNS.LINE_HEADERS, data.lineHeaders.names);
  assert.deepEqual(PATTERNS.PHRASES, ['code', 'key'].flatMap((kind) =>
    data.phrases[kind].phrases.map(([text, name]) => ({ text, name, kind }))));
  assert.deepEqual(PATTERNS.CONNECTOR_WORDS, data.connectors.words);
  assert.deepEqual(PATTERNS.CODE_LEADS, data.codeBeforePhrase.leads);
  assert.deepEqual(PATTERNS.CODE_ENDS, data.codeBeforePhrase.ends);
});

test('a lone surrogate is repaired, as the C repairs invalid UTF-8', () => {
  assert.deepEqual(redactText('\uD800token=abc'), { text: '\uFFFDtoken=[redacted token len=3]', count: 1 });
});

test('secret names: what only JS callers can pass, and the 128-byte bound', () => {
  // Overlong names are not names (128 bytes, as the C counts).
  assert.equal(isSecretName(`${'a'.repeat(200)}password`), false);
  assert.equal(isSecretName(`${'a'.repeat(120)}password`), true);
  assert.equal(isSecretName(`${'é'.repeat(60)}pw`), true); // 122 bytes
  assert.equal(isSecretName(`${'é'.repeat(64)}pw`), false); // 130 bytes
  for (const v of [undefined, null, 1, {}, ['password'], true]) assert.equal(isSecretName(v), false);
});

test('isMarker: exactly one well-formed marker', () => {
  assert.equal(isMarker('[redacted password len=8]'), true);
  assert.equal(isMarker('[redacted X-Api-Key len=0]'), true);
  assert.equal(isMarker('[redacted password len=8] '), false);
  assert.equal(isMarker('[redacted  len=8]'), false);
  assert.equal(isMarker('[redacted pass word len=8]'), false);
  assert.equal(isMarker('[redacted password len=]'), false);
  assert.equal(isMarker('[redacted password len=8'), false);
  assert.equal(isMarker(''), false);
  for (const v of [undefined, null, 8, {}, ['[redacted a len=1]']]) assert.equal(isMarker(v), false);
});

test('an unterminated quoted secret is masked to 4096 bytes, never through half a character', () => {
  const r = redactText(`password="${'a'.repeat(4093)}\u{1F642}\u{1F642}x`);
  // The bound falls inside the first emoji: the character is masked whole, as the C does since
  // a comparison of the two found it leaving half a character behind.
  assert.equal(r.text, 'password="[redacted password len=4094]\u{1F642}x');
  assert.equal(r.count, 1);
  assert.deepEqual(redactText(`password="${'a'.repeat(5000)}`),
    { text: `password="[redacted password len=4096]${'a'.repeat(904)}`, count: 1 });
  assert.equal(redactText(`password="${'é'.repeat(3000)}`).text,
    `password="[redacted password len=2048]${'é'.repeat(952)}`);
});

test('text that is not a string gives empty text', () => {
  for (const v of [undefined, null, 0, 42, true, {}, ['token=abc'], Symbol('x')]) {
    assert.deepEqual(redactText(v), { text: '', count: 0 });
  }
});

// ---- JSON ----

test('JSON: 100 levels are kept as they are', () => {
  let input = { token: 'abc' };
  let want = { token: '[redacted token len=3]' };
  for (let i = 0; i < 100; i++) {
    input = { x: input };
    want = { x: want };
  }
  assertJson(input, want, 1);
});

test('JSON: deeper than 256 levels is dropped, counted once', () => {
  let root = ['token=abc'];
  for (let i = 0; i < 400; i++) root = [root];
  const { value, count } = redactValue(root);
  assert.equal(count, 1);
  let depth = 0;
  let node = value;
  while (Array.isArray(node)) {
    node = node[0];
    depth++;
  }
  assert.equal(node, null);
  assert.ok(depth < 400);
});

test('JSON: what only JS values can be — cycles, shared children, odd types, __proto__', () => {
  const loop = { token: 'abc' };
  loop.self = loop;
  const r = redactValue(loop);
  assert.deepEqual(r.value, { token: '[redacted token len=3]', self: null });
  assert.equal(r.count, 2);

  const shared = { password: 'x' };
  assert.deepEqual(redactValue([shared, shared]).value,
    [{ password: '[redacted password len=1]' }, { password: '[redacted password len=1]' }]);

  assert.deepEqual(redactValue({ a: undefined, b: () => 1, c: Symbol('s'), token: 5n }).value,
    { a: null, b: null, c: null, token: '[redacted token len=1]' });
  assert.deepEqual(redactValue(undefined), { value: null, count: 0 });

  const proto = JSON.parse('{"__proto__": {"password": "x"}}');
  const out = redactValue(proto).value;
  assert.equal(Object.getPrototypeOf(out), Object.prototype);
  assert.deepEqual(Object.keys(out), ['__proto__']);
  assert.equal(JSON.stringify(out), '{"__proto__":{"password":"[redacted password len=1]"}}');
});

test('JSON: a wide value that shares children ends (2^40 paths: exponential would not)', { timeout: 30000 }, () => {
  let node = { token: 'abc' };
  for (let i = 0; i < 40; i++) node = { a: node, b: node }; // 2^40 paths
  const { count } = redactValue(node);
  assert.ok(count > 0);
});

test('1 MiB of each hard unit, and of real-looking text, is redacted and ends (a deadline; bench/ measures the speed)', { timeout: 60000 }, () => {
  const units = [
    '"password":"', 'password="', 'eyJaaaaaaaaaa.', 'Bearer ', '"', '[redacted ',
    '-----BEGIN PRIVATE KEY-----', 'password: ', 'a=', 'token ', '\'', 'api key ', 'x-a: ', '[',
    'é', 'eyJhbGciOiJIUzI1NiJ9.', 'sk-', ' ', 'token=abc ',
    // The rules that look further than a word: numbers in groups, phrases, URLs.
    '4111 ', '1-', '2 85 05 2A ', 'verification code ', '482913 is your ', 'https://a:', 'ya29.',
    '?code=', '\u9a8c\u8bc1\u7801', 'api key is ', 'secret key: ',
  ];
  for (const unit of units) {
    let text = unit.repeat(Math.ceil((1024 * 1024) / unit.length));
    const { text: out } = redactText(text);
    assert.equal(typeof out, 'string');
    text = null;
  }
  // "password: hunter22 and" keeps its word: a name: value token must end its line.
  const page = `${'Hello, world. Sign in with password: hunter22 and token=abc; '.repeat(20000)}`;
  const r = redactText(page);
  assert.equal(r.count, 20000);
});
