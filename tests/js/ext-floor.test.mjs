// The URL floor in the extension (extension/lib/floor.js) against the same rows as the app's
// tests/test-url-floor.c: a row that passes the wrong way is a bank page an agent can read, or an
// ordinary site it cannot. The two floors must answer every row alike.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  FLOOR_LEVELS, MAX_URL, floorLevel, normalizePattern, pageLevel, parseFloorRules,
} from '../../extension/lib/floor.js';

const BRIDGE_PORT = 64333;

// The person's entries used by every row (PERSON_BLIND / PERSON_HANDS in the C test).
const PERSON_BLIND = [
  'health.example', '*.corp.example', 'https://Payroll.Example.NET/login', '10.0.0.7',
  'nope/path', '*', '',
];
const PERSON_HANDS = ['shop.example', '*.docs.example'];
const RULES = { blind: PERSON_BLIND, handsOnly: PERSON_HANDS, bridgePort: BRIDGE_PORT };

const OK = (url) => [url, 'ok', 'ok'];
const HANDS = (url, reason) => [url, 'hands-only', reason];
const BLIND = (url, reason) => [url, 'blind', reason];

// CASES of tests/test-url-floor.c, row for row. Invalid UTF-8 (a C byte string) becomes a lone
// surrogate here: the one way a JS string can fail to be text.
const CASES = [
  // Ordinary pages.
  OK('https://example.com/'),
  OK('http://example.com/a?b=c#d'),
  OK('https://www.wikipedia.org/wiki/Bank_(disambiguation)'),
  OK('https://example.com/?next=https://bank.com/'),
  OK('https://news.example.org:8443/x'),
  OK('https://192.168.1.20/router'),
  OK('http://localhost:8080/dev'),
  OK('https://127.0.0.1:64334/'),
  OK('https://chrome.google.com/intl/en/chrome/'),
  OK('https://google.com/search?q=chase.com'),
  OK('https://notchase.com/'),
  OK('https://github.com/settingsfoo'),
  OK('https://github.com/chaperone/chaperone'),
  OK('https://bitwarden.com/pricing'),
  OK('https://ba.nk.example/'),

  // Browser and non-web pages.
  BLIND('chrome://settings/passwords', 'browser_page'),
  BLIND('chrome-extension://abcdefghijklmnopabcdefghijklmnop/popup.html', 'browser_page'),
  BLIND('edge://settings', 'browser_page'),
  BLIND('brave://wallet', 'browser_page'),
  BLIND('about:blank', 'browser_page'),
  BLIND('ABOUT:config', 'browser_page'),
  BLIND('view-source:https://example.com/', 'browser_page'),
  BLIND('devtools://devtools/bundled/inspector.html', 'browser_page'),
  BLIND('moz-extension://0b1c2d3e-aaaa-bbbb-cccc-111122223333/p.html', 'browser_page'),
  BLIND('chrome-untrusted://print/', 'browser_page'),
  BLIND('file:///home/person/.ssh/id_ed25519', 'not_web'),
  BLIND('data:text/html,<h1>hi</h1>', 'not_web'),
  BLIND('javascript:alert(document.cookie)', 'not_web'),
  BLIND('ftp://example.com/x', 'not_web'),
  BLIND('ws://example.com/socket', 'not_web'),
  BLIND('blob:chrome-extension://abcdefghijklmnopabcdefghijklmnop/1234', 'browser_page'),
  BLIND('blob:https://mybank.example/5b1c0a4e', 'bank'),
  OK('blob:https://example.com/5b1c0a4e-1111-2222-3333-444455556666'),
  BLIND('blob:blob:https://example.com/x', 'malformed'),
  BLIND('blob:null/5b1c0a4e', 'malformed'),
  BLIND('filesystem:https://bank.example/temporary/x', 'bank'),

  // Extension stores.
  BLIND('https://chromewebstore.google.com/detail/x/abc', 'extension_store'),
  BLIND('https://chrome.google.com/webstore/detail/abc', 'extension_store'),
  BLIND('https://chrome.google.com/WebStore', 'extension_store'),
  BLIND('https://chrome.google.com//webstore/category', 'extension_store'),
  BLIND('https://chrome.google.com/intl/../webstore/x', 'extension_store'),
  BLIND('https://chrome.google.com/%77ebstore/x', 'extension_store'),
  BLIND('https://microsoftedge.microsoft.com/addons/detail/x', 'extension_store'),
  BLIND('https://addons.mozilla.org/en-US/firefox/', 'extension_store'),

  // Password managers.
  BLIND('https://vault.bitwarden.com/#/vault', 'password_manager'),
  BLIND('https://my.1password.com/vaults', 'password_manager'),
  BLIND('https://lastpass.com/vault/', 'password_manager'),
  BLIND('https://app.dashlane.com/', 'password_manager'),
  BLIND('https://passwords.google.com/', 'password_manager'),
  BLIND('https://passwords.google/', 'password_manager'),
  BLIND('https://keepersecurity.com/vault/', 'password_manager'),

  // Sign-in hosts.
  BLIND('https://accounts.google.com/signin/v2', 'sign_in'),
  BLIND('https://login.microsoftonline.com/common/oauth2', 'sign_in'),
  BLIND('https://github.com/login?return_to=x', 'sign_in'),

  // Banks.
  BLIND('https://www.bankofamerica.com/', 'bank'),
  BLIND('https://online.lloydsbank.co.uk/', 'bank'),
  BLIND('https://mybank.example/', 'bank'),
  BLIND('https://BANK.example/', 'bank'),
  BLIND('https://www.labanquepostale.fr/', 'bank'),
  BLIND('https://secure.chase.com/web/auth', 'bank'),
  BLIND('https://chase.com/', 'bank'),
  BLIND('https://www.paypal.com/myaccount', 'bank'),
  BLIND('https://xn--bnk-6cd.com/', 'bank'), // b + Cyrillic а + nk
  BLIND('https://b\u0430nk.com/', 'bank'), // the same, as Unicode
  BLIND('https://\uFF42\uFF41\uFF4E\uFF4B.example/', 'bank'), // full-width ｂａｎｋ
  BLIND('https://b\u00E0nk.example/', 'bank'), // bànk: accents dropped
  BLIND('https://xn--bnk-qla.de/', 'bank'), // bänk, punycode
  BLIND('https://\u042C\u0410NK.example/', 'bank'), // ЬАNK, Cyrillic
  BLIND('https://my-bank\u3002example/', 'bank'), // ideographic full stop
  BLIND('https://bank.com./', 'bank'), // trailing dot
  BLIND('https://b%61nk.com/', 'bank'), // percent-encoded host
  BLIND('https://evil.test@bank.com/', 'bank'), // userinfo is not the host
  BLIND('https://user:pw@secure.bank.com:8443/x', 'bank'),
  OK('https://bank.com@evil.test/'),
  OK('https://bank.com:443@evil.test/'),

  // Chaperone's bridge.
  BLIND('http://127.0.0.1:64333/pairing', 'chaperone'),
  BLIND('http://localhost:64333/', 'chaperone'),
  BLIND('http://LOCALHOST.:64333/', 'chaperone'),
  BLIND('http://app.localhost:64333/', 'chaperone'),
  BLIND('http://[::1]:64333/extension', 'chaperone'),
  BLIND('http://[::ffff:127.0.0.1]:64333/', 'chaperone'),
  BLIND('http://127.1:64333/', 'chaperone'), // WHATWG short IPv4
  BLIND('http://2130706433:64333/', 'chaperone'), // 127.0.0.1 as one number
  BLIND('http://0x7f.0.0.1:64333/', 'chaperone'),
  BLIND('http://0177.0.0.1:64333/', 'chaperone'),
  BLIND('http://127.0.0.2:64333/', 'chaperone'),
  BLIND('http://0.0.0.0:64333/', 'chaperone'),
  BLIND('http://%31%32%37.0.0.1:64333/', 'malformed'), // GUri refuses an encoded IP

  // Parser tricks: refused rather than guessed.
  BLIND('https://example.com\\@bank.com/', 'malformed'),
  BLIND('https://bank.com\\.example.com/', 'malformed'),
  BLIND('https://a@b@example.com/', 'malformed'),
  BLIND('https://exa mple.com/', 'malformed'),
  BLIND('https://ba\tnk.com/', 'malformed'),
  BLIND('https://ba\nnk.com/', 'malformed'),
  BLIND(' https://example.com/', 'malformed'),
  BLIND('https:///path', 'malformed'),
  BLIND('https://', 'malformed'),
  BLIND('https://example.com:99999/', 'malformed'),
  BLIND('https://example..com/', 'malformed'),
  BLIND('https://%2561.example/', 'malformed'), // encoded twice
  BLIND('https://[fe80::1%25eth0]/', 'malformed'),
  BLIND('https://256.0.0.1/', 'malformed'),
  BLIND('https://1.2.3.4.5/', 'malformed'),
  BLIND('example.com', 'malformed'),
  BLIND('//example.com/', 'malformed'),
  BLIND('', 'malformed'),
  BLIND('https://ex\uD800ample.com/', 'malformed'),
  BLIND('https://example.com/%', 'malformed'),

  // Hands-only.
  HANDS('https://myaccount.google.com/security', 'account_settings'),
  HANDS('https://account.microsoft.com/', 'account_settings'),
  HANDS('https://appleid.apple.com/account/manage', 'account_settings'),
  HANDS('https://github.com/settings/tokens', 'account_settings'),
  HANDS('https://GitHub.com/Settings', 'account_settings'),

  // The person's entries.
  BLIND('https://health.example/records', 'person_blind'),
  BLIND('https://portal.health.example/', 'person_blind'),
  BLIND('https://wiki.corp.example/', 'person_blind'),
  OK('https://corp.example/'), // "*." is subdomains only
  OK('https://nothealth.example/'),
  BLIND('https://payroll.example.net/anything', 'person_blind'), // a URL entry: its host
  BLIND('http://10.0.0.7:8080/', 'person_blind'),
  OK('http://10.0.0.70/'),
  HANDS('https://shop.example/cart', 'person_hands_only'),
  HANDS('https://a.docs.example/', 'person_hands_only'),
  OK('https://docs.example/'),
  BLIND('https://mybank.shop.example/', 'bank'), // blind beats hands-only
];

// Rows only the JS side has: more of the parser's corners (each checked against the C build while
// this file was written) and what JS callers can pass that C callers cannot.
const JS_CASES = [
  BLIND('https://example.com/?q=%ff', 'malformed'), // decodes to non-UTF-8
  BLIND('https://example.com/?q=%00', 'malformed'),
  BLIND('https://example.com/#%ff', 'malformed'),
  BLIND('https://user%@example.com/', 'malformed'),
  BLIND('https://example.com:+80/', 'malformed'),
  OK('https://example.com:/'),
  OK('https://example.com:0080/'),
  OK('https://example.com/%c3%a9'),
  BLIND('https://chrome.google.com/x/..%2fwebstore', 'extension_store'),
  BLIND('https://chrome.google.com/%2e%2e/webstore', 'extension_store'),
  BLIND('https://[v1.x]/', 'malformed'),
  BLIND('https://[::1%25eth0]/', 'malformed'),
  BLIND('https:bank.com', 'malformed'),
  BLIND('https:/bank.com', 'malformed'),
  BLIND('https://09.1.1.1/', 'malformed'),
  BLIND('https://x.09/', 'malformed'),
  OK('https://1.2.3/'),
  OK('https://0x7f000001/'),
  BLIND('HTTPS://BANK.COM', 'bank'),
  BLIND('https://b\u00ADank.com/', 'bank'), // a soft hyphen is dropped
  BLIND('https://bank.com\u3002/', 'bank'),
  BLIND('https://xn--bnk-6cd.xn--p1ai/', 'bank'),
  BLIND('https://XN--BNK-6CD.com/', 'bank'),
  OK('https://xn--zzzzzzzzzzzz.com/'),
  BLIND('https://a.b\u3002\u3002c/', 'malformed'),
  BLIND('https://ba\u0578k.example/', 'bank'), // Armenian ո for n
  BLIND('https://BANQUE.example/', 'bank'),
  OK('https://0x1g/'), // hex-host-not-number in the C test
  OK('https://a.0xg/'),
  BLIND('http://[::]:64333/', 'chaperone'),
  BLIND('http://[::ffff:0.0.0.0]:64333/', 'chaperone'),
  OK('http://[::2]:64333/'),
  OK('http://[::1]:64334/'),
  BLIND('http://LocalHost:64333/', 'chaperone'),
  OK('http://notlocalhost:64333/'),
  BLIND('https://GITHUB.com/SESSION', 'sign_in'),
  BLIND('https://github.com/login/oauth', 'sign_in'),
  OK('https://github.com/loginx'),
  HANDS('https://github.com//settings', 'account_settings'),
  BLIND('https://chrome.google.com/webstore', 'extension_store'),
  BLIND('HTTP://CHROME.GOOGLE.COM/WEBSTORE?x', 'extension_store'),
  BLIND('https://foo.alipay.com/', 'bank'),
  BLIND('chrome-search://local-ntp', 'browser_page'),
  BLIND('Chrome://settings', 'browser_page'),
  BLIND('mailto:a@b.c', 'not_web'),
  BLIND('1http://example.com/', 'malformed'),
  BLIND('http://exa\u007Fmple.com/', 'malformed'),
  BLIND('http://exa\u0000mple.com/', 'malformed'),
  BLIND('https://example.com/\uDC00', 'malformed'),
  // GLib refuses a name over 1020 bytes before removing soft hyphens from it.
  BLIND(`https://example${'\u00AD'.repeat(600)}.com/`, 'malformed'),
  OK(`https://example${'\u00AD'.repeat(400)}.com/`),
];

const levelOf = (r) => `${r.level}/${r.reason}`;

for (const [i, [url, level, reason]] of CASES.entries()) {
  test(`C row ${String(i).padStart(3, '0')}: ${JSON.stringify(url)} is ${level}/${reason}`, () => {
    assert.equal(levelOf(floorLevel(url, RULES)), `${level}/${reason}`);
  });
}

for (const [url, level, reason] of JS_CASES) {
  test(`JS row: ${JSON.stringify(url)} is ${level}/${reason}`, () => {
    assert.equal(levelOf(floorLevel(url, RULES)), `${level}/${reason}`);
  });
}

test('the levels are ordered weakest first and the answers only ever use them', () => {
  assert.deepEqual([...FLOOR_LEVELS], ['ok', 'hands-only', 'blind']);
  assert.throws(() => { FLOOR_LEVELS.push('x'); });
  for (const [url] of [...CASES, ...JS_CASES]) {
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
  // A huge one is refused at once, not parsed.
  const start = performance.now();
  assert.equal(levelOf(floorLevel(`https://bank.com/${'x'.repeat(10_000_000)}`)), 'blind/malformed');
  assert.ok(performance.now() - start < 500);
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

test('every check is fast, whatever the URL', () => {
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
    const start = performance.now();
    const r = floorLevel(url, RULES);
    assert.equal(r.level, 'blind', url.slice(0, 40));
    assert.ok(performance.now() - start < 1000, `${url.slice(0, 40)} took too long`);
  }
});
