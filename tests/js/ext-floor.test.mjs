// SPDX-License-Identifier: GPL-3.0-or-later
// The URL floor in the extension (extension/lib/floor.js) against tests/vectors/floor.json, the rows
// the app's tests/test-url-floor.c runs too: a row that passes the wrong way is a bank page an agent
// can read, or an ordinary site it cannot. The two floors must answer every row alike, and both are
// built from one table, src/core/policy/floor-rules.json.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';

import {
  FLOOR_LEVELS, MAX_URL, floorLevel, normalizePattern, pageLevel, parseFloorRules,
} from '../../extension/lib/floor.js';
import { BANK_WORDS, BROWSER_SCHEMES, BUILTIN_RULES, CONFUSABLES } from '../../extension/lib/floor-rules.js';

const load = async (path) => JSON.parse(await readFile(new URL(path, import.meta.url), 'utf8'));
const FILE = await load('../vectors/floor.json');
const DATA = await load('../../src/core/policy/floor-rules.json');

// The person's entries and the bridge port every row is checked with.
const PERSON_BLIND = FILE.person.blind;
const PERSON_HANDS = FILE.person.handsOnly;
const RULES = { blind: PERSON_BLIND, handsOnly: PERSON_HANDS, bridgePort: FILE.bridgePort };

// The vectors write the C's level words; floor.js says 'hands-only'.
const levelOf = (r) => `${r.level === 'hands-only' ? 'hands_only' : r.level}/${r.reason}`;

for (const [i, v] of FILE.vectors.entries()) {
  test(`vector ${String(i).padStart(3, '0')}: ${JSON.stringify(v.url).slice(0, 80)} is ${v.level}/${v.reason}`, () => {
    assert.equal(levelOf(floorLevel(v.url, RULES)), `${v.level}/${v.reason}`);
  });
}

// What only a JS string can be: not text (the C's row is a byte that is not UTF-8), or holding a NUL
// (a C string ends there).
const JS_ONLY = [
  ['https://ex\uD800ample.com/', 'blind/malformed'],
  ['https://example.com/\uDC00', 'blind/malformed'],
  ['http://exa\u0000mple.com/', 'blind/malformed'],
];

for (const [url, want] of JS_ONLY) {
  test(`JS only: ${JSON.stringify(url)} is ${want}`, () => {
    assert.equal(levelOf(floorLevel(url, RULES)), want);
  });
}

test('every rule of floor-rules.json answers its own level and reason, for its host and a subdomain', () => {
  let checked = 0;
  for (const group of DATA.groups) {
    for (const rule of group.rules) {
      const path = rule.path ?? '/';
      const want = `${rule.level}/${rule.reason}`;
      assert.equal(levelOf(floorLevel(`https://${rule.host}${path}`)), want, rule.host);
      assert.equal(levelOf(floorLevel(`https://www.${rule.host}${path}/x`)), want, rule.host);
      checked++;
    }
  }
  assert.ok(checked > 50);
});

test('floor-rules.js holds what floor-rules.json says (the meson test compares the text too)', () => {
  const rules = DATA.groups.flatMap((g) => g.rules).map((r) => ({
    host: r.host, path: r.path ?? null, level: r.level === 'hands_only' ? 'hands-only' : r.level, reason: r.reason,
  }));
  assert.deepEqual(BUILTIN_RULES.map((r) => ({ ...r })), rules);
  assert.deepEqual([...BROWSER_SCHEMES], DATA.browserSchemes.schemes);
  assert.deepEqual([...BANK_WORDS], DATA.bankWords.words);
  assert.deepEqual(CONFUSABLES.map(([from, to]) => [`U+${from.toString(16).toUpperCase().padStart(4, '0')}`, to]),
    DATA.confusables.letters);
  for (const table of [BUILTIN_RULES, BROWSER_SCHEMES, BANK_WORDS, CONFUSABLES]) assert.ok(Object.isFrozen(table));
  assert.ok(BUILTIN_RULES.every(Object.isFrozen));
});

test('the levels are ordered weakest first and the answers only ever use them', () => {
  assert.deepEqual([...FLOOR_LEVELS], ['ok', 'hands-only', 'blind']);
  assert.throws(() => { FLOOR_LEVELS.push('x'); });
  for (const { url } of FILE.vectors) {
    assert.ok(FLOOR_LEVELS.includes(floorLevel(url, RULES).level));
  }
});

test('person rules: bad entries are left out and counted; a second list replaces the first', () => {
  // "nope/path", "*" and "" are not host patterns (the C returns 3 for the same lists).
  const parsed = parseFloorRules({ blind: PERSON_BLIND, handsOnly: PERSON_HANDS });
  assert.equal(parsed.refused, 3);
  assert.deepEqual(parsed.blind, ['health.example', '*.corp.example', 'payroll.example.net', '10.0.0.7']);
  assert.deepEqual(parsed.handsOnly, ['shop.example', '*.docs.example']);

  const only = { blind: ['health.example'] };
  assert.equal(parseFloorRules(only).refused, 0);
  assert.equal(floorLevel('https://wiki.corp.example/', only).level, 'ok');
  assert.equal(floorLevel('https://shop.example/', only).level, 'ok');
  assert.equal(floorLevel('https://health.example/', only).level, 'blind');

  // The person cannot lower a built-in rule: no entries changes nothing for a bank.
  assert.equal(floorLevel('https://health.example/', {}).level, 'ok');
  assert.equal(levelOf(floorLevel('https://chase.com/', {})), 'blind/bank');
  // An entry in both lists is blind.
  assert.equal(levelOf(floorLevel('https://x.example/', { blind: ['x.example'], handsOnly: ['x.example'] })),
    'blind/person_blind');
});

test('parseFloorRules reads anything engine.info could carry without throwing', () => {
  const empty = { blind: [], handsOnly: [], refused: 0 };
  for (const v of [undefined, null, 0, 'x', [], true]) assert.deepEqual(parseFloorRules(v), empty);
  assert.deepEqual(parseFloorRules({ blind: 'a.example', handsOnly: { 0: 'b.example' } }), empty);
  const mixed = parseFloorRules({ blind: ['a.example', 7, null, {}, ['b.example'], 'A.EXAMPLE'] });
  assert.deepEqual(mixed.blind, ['a.example']);
  assert.equal(mixed.refused, 4);
  // Normalised entries read back as themselves.
  const again = parseFloorRules(mixed);
  assert.deepEqual(again.blind, mixed.blind);
  assert.equal(again.refused, 0);
});

test('normalizePattern accepts exactly what chp_url_floor_normalize_pattern accepts', () => {
  const rows = [
    // The C test's rows.
    ['Example.COM', 'example.com'],
    ['  example.com.  ', 'example.com'],
    ['*.Corp.Example', '*.corp.example'],
    ['https://user@Shop.Example:8443/a?b', 'shop.example'],
    ['b\u00E4nk.de', 'xn--bnk-qla.de'],
    ['192.168.0.1', '192.168.0.1'],
    ['*.192.168.0.1', null],
    ['*', null],
    ['', null],
    ['example.com/path', null],
    ['exa mple.com', null],
    ['a..b', null],
    // More, each as the C answers.
    ['::1', '::1'],
    ['0:0:0:0:0:0:0:1', '::1'],
    ['[::1]', null],
    ['*.::1', null],
    ['2001:DB8::0:1', '2001:db8::1'],
    ['::ffff:7f00:1', '::ffff:127.0.0.1'],
    ['fe80::1%eth0', null],
    ['http://[::1]:80/', '::1'],
    ['127.1', '127.0.0.1'],
    ['0x7f.1', '127.0.0.1'],
    ['*.127.1', null],
    ['ftp://Files.Example/x', 'files.example'],
    ['file:///etc/passwd', null],
    ['://example.com', null],
    ['https://exa%2fmple.com/', null],
    ['https://b%61nk.com/', 'bank.com'],
    ['\u3002', null],
    ['\uFF42\uFF41\uFF4E\uFF4B.example', 'bank.example'],
    ['xn--bnk-qla.de', 'xn--bnk-qla.de'],
    ['ex\u00ADample.com', 'example.com'],
    ['\tshop.example\r\n', 'shop.example'],
    ['\vshop.example', null], // g_strstrip leaves \v, and \v is no host character
    ['a'.repeat(64) + '.com', null],
    [`${'a.'.repeat(126)}ab`, null], // 254 characters
    [`${'a.'.repeat(125)}abc`, `${'a.'.repeat(125)}abc`], // 253
    ['x'.repeat(1025), null],
    ['ex\uD800.com', null],
  ];
  for (const [input, want] of rows) assert.equal(normalizePattern(input), want, JSON.stringify(input));
  for (const v of [undefined, null, 42, {}, ['a.example']]) assert.equal(normalizePattern(v), null);
});

test('the bridge port: none set means no loopback page is ours; the default port counts', () => {
  assert.equal(floorLevel('http://127.0.0.1:64333/').level, 'ok');
  assert.equal(floorLevel('http://127.0.0.1:64333/', { bridgePort: 0 }).level, 'ok');
  assert.equal(levelOf(floorLevel('http://localhost/', { bridgePort: 80 })), 'blind/chaperone');
  assert.equal(floorLevel('https://localhost/', { bridgePort: 80 }).level, 'ok');
  assert.equal(levelOf(floorLevel('https://localhost/', { bridgePort: 443 })), 'blind/chaperone');
  // A port that is not a port is no port (and never throws).
  for (const bridgePort of ['64333', -1, 70000, 1.5, NaN, null]) {
    assert.equal(floorLevel('http://127.0.0.1:64333/', { bridgePort }).level, 'ok');
  }
});

test('pageLevel: a visible password field makes a page blind ("sign_in")', () => {
  assert.equal(levelOf(pageLevel('https://example.com/login', false, RULES)), 'ok/ok');
  assert.equal(levelOf(pageLevel('https://example.com/login', true, RULES)), 'blind/sign_in');
  // A hands-only page with a password field is blind.
  assert.equal(levelOf(pageLevel('https://shop.example/', true, RULES)), 'blind/sign_in');
  assert.equal(levelOf(pageLevel('https://myaccount.google.com/', true, RULES)), 'blind/sign_in');
  // A blind page keeps its own, more telling reason.
  assert.equal(levelOf(pageLevel('https://chase.com/', true, RULES)), 'blind/bank');
  assert.equal(levelOf(pageLevel('about:blank', false)), 'blind/browser_page');
  assert.equal(levelOf(pageLevel(undefined, false)), 'blind/malformed');
});

test('long URLs: up to MAX_URL bytes are judged, one more byte is malformed', () => {
  let url = 'https://example.com/?q=';
  url += 'a'.repeat(MAX_URL - url.length);
  assert.equal(floorLevel(url, RULES).level, 'ok');
  assert.equal(levelOf(floorLevel(`${url}a`, RULES)), 'blind/malformed');
  // Bytes, as in the C: a two-byte character counts twice.
  const wide = `https://example.com/?q=${'é'.repeat(32756)}a`; // 23 + 65512 + 1 bytes
  assert.equal(floorLevel(wide, RULES).level, 'ok');
  assert.equal(levelOf(floorLevel(`${wide}a`, RULES)), 'blind/malformed');
  // A huge one is refused as malformed (bench/ measures how soon; the test's timeout is only a
  // deadline against a runaway parse).
  assert.equal(levelOf(floorLevel(`https://bank.com/${'x'.repeat(10_000_000)}`)), 'blind/malformed');
});

test('anything that is not a URL string is blind, and nothing throws', () => {
  for (const v of [undefined, null, 0, 1, true, {}, [], ['https://example.com/'], new URL('https://example.com/'),
    Symbol('x'), () => 'https://example.com/']) {
    assert.equal(levelOf(floorLevel(v, RULES)), 'blind/malformed');
  }
  for (const options of [undefined, null, 0, 'x', { blind: 'x.example' }, { blind: [1, null, {}] }]) {
    assert.equal(floorLevel('https://example.com/', options).level, 'ok');
    assert.equal(floorLevel('https://chase.com/', options).level, 'blind');
  }
});

test('every hostile URL is judged blind and the check ends (a deadline, not a speed: bench/ measures)', { timeout: 30000 }, () => {
  const hostile = [
    `https://${'a.'.repeat(30000)}com/`,
    `https://${'%41'.repeat(20000)}/`,
    `https://chrome.google.com/${'../'.repeat(20000)}webstore`,
    `https://bank.example/${'/'.repeat(60000)}`,
    `https://[${':'.repeat(60000)}]/`,
    `https://xn--${'a'.repeat(60000)}/`,
    `https://${'\u0430'.repeat(30000)}/`,
    `blob:${'blob:'.repeat(13000)}`,
  ];
  for (const url of hostile) {
    const r = floorLevel(url, RULES);
    assert.equal(r.level, 'blind', url.slice(0, 40));
  }
});
