// Redaction in the extension (extension/lib/redact.js) against the same rows as the app's
// tests/test-redact.c: a secret that comes through is a leak, and ordinary text that gets masked
// is a page the agent can no longer read. Every row is also redacted a second time, which must
// change nothing.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { isMarker, isSecretName, redactText, redactValue } from '../../extension/lib/redact.js';

const JWT = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.' +
  'SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c';

// CASES of tests/test-redact.c, row for row: [in, out, count].
const CASES = [
  // Headers: the whole value, at a line start.
  ['Cookie: sid=abc; theme=dark', 'Cookie: [redacted Cookie len=19]', 1],
  ['Set-Cookie: id=a3fWa; Path=/; HttpOnly', 'Set-Cookie: [redacted Set-Cookie len=26]', 1],
  ['Authorization: Basic dXNlcjpwYXNz', 'Authorization: [redacted Authorization len=18]', 1],
  ['  proxy-authorization:   Digest abc  ',
    '  proxy-authorization:   [redacted proxy-authorization len=10]  ', 1],
  ['X-Api-Key: 12345abcde', 'X-Api-Key: [redacted X-Api-Key len=10]', 1],
  ['X-CSRF-Token: Zk3Q', 'X-CSRF-Token: [redacted X-CSRF-Token len=4]', 1],
  ['Accept: text/html\r\nCookie: a=b\r\nHost: x',
    'Accept: text/html\r\nCookie: [redacted Cookie len=3]\r\nHost: x', 1],
  ["curl -H 'Authorization: token abc' https://x",
    "curl -H 'Authorization: [redacted Authorization len=9]' https://x", 1],

  // JWTs, bearer tokens.
  [`id ${JWT} end`, 'id [redacted jwt len=108] end', 1],
  [`(${JWT}).`, '([redacted jwt len=108]).', 1],
  ['eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0. next', '[redacted jwt len=36] next', 1],
  ['eyJhbGciOi is just a prefix', 'eyJhbGciOi is just a prefix', 0],
  ['use Bearer abc123.def-456 now', 'use Bearer [redacted bearer len=14] now', 1],
  ['bearer   dGhpcyBpcyBhIHRva2Vu==', 'bearer   [redacted bearer len=22]', 1],
  ['The Bearer of bad news; Bearer instruments', 'The Bearer of bad news; Bearer instruments', 0],
  ['Basic authentication is weak', 'Basic authentication is weak', 0],

  // API key shapes.
  ['key: sk-proj-abcdefghijklmnopqrstuvwx', 'key: [redacted api_key len=32]', 1],
  ['sk_live_4eC39HqLyjWDarjtT1zdp7dc', '[redacted stripe_key len=32]', 1],
  ['ghp_abcdefghijklmnopqrstuvwxyz0123456789', '[redacted github_token len=40]', 1],
  ['github_pat_11ABCDEFG0abcdefghijklmnopqrstuvwxyz', '[redacted github_token len=47]', 1],
  ['xoxb-123456789012-abcdefghij', '[redacted slack_token len=28]', 1],
  ['AKIAIOSFODNN7EXAMPLE', '[redacted aws_key len=20]', 1],
  ['AIzaSyA1bcdefghijklmnopqrstuvwxyz0123-_', '[redacted google_api_key len=39]', 1],
  ['glpat-abcdefghij0123456789', '[redacted gitlab_token len=26]', 1],
  ['pip install sk-learn; task-abcdefghijklmnopqrstuvwxyz',
    'pip install sk-learn; task-abcdefghijklmnopqrstuvwxyz', 0],
  ['ASIANCOUNTRIESABCDE and AKIA1234', 'ASIANCOUNTRIESABCDE and AKIA1234', 0],

  // name=value: query strings, cookies, form bodies.
  ['https://x.test/cb?access_token=abc123&state=xyz#f',
    'https://x.test/cb?access_token=[redacted access_token len=6]&state=xyz#f', 1],
  ['?session_id=9f8e&lang=en', '?session_id=[redacted session_id len=4]&lang=en', 1],
  ['sid=abc123; theme=dark; PHPSESSID=q1w2e3',
    'sid=[redacted sid len=6]; theme=dark; PHPSESSID=[redacted PHPSESSID len=6]', 2],
  ['user[password]=hunter2&user[email]=a@b.c',
    'user[password]=[redacted user_password len=7]&user[email]=a@b.c', 1],
  ['csrfmiddlewaretoken=Zk3Q&next=/',
    'csrfmiddlewaretoken=[redacted csrfmiddlewaretoken len=4]&next=/', 1],
  ['authenticity_token="a+b/c=="', 'authenticity_token="[redacted authenticity_token len=7]"', 1],
  ["api_key = 'abc 123'", "api_key = '[redacted api_key len=7]'", 1],
  ['client_secret=s3cr3t&grant_type=x',
    'client_secret=[redacted client_secret len=6]&grant_type=x', 1],
  ['X-Amz-Signature=abcdef0123&X-Amz-Date=2024',
    'X-Amz-Signature=[redacted X-Amz-Signature len=10]&X-Amz-Date=2024', 1],
  ['otp=123456 pin=0000 cvv=123',
    'otp=[redacted otp len=6] pin=[redacted pin len=4] cvv=[redacted cvv len=3]', 3],
  ['[token=abc]', '[token=[redacted token len=3]]', 1],
  ['a&amp;token=abc', 'a&amp;token=[redacted token len=3]', 1],
  ['token=', 'token=', 0],

  // Lengths are characters, not bytes (or UTF-16 units).
  ['pass=\u00E9t\u00E9\u{1F642}x', 'pass=[redacted pass len=5]', 1],
  ['password: \u5BC6\u7801\u5BC6\u7801\u5BC6\u7801x1', 'password: [redacted password len=8]', 1],

  // name: value outside headers: one secret-looking token ending its line.
  ['password: hunter22', 'password: [redacted password len=8]', 1],
  ["token: 'abc def'", "token: '[redacted token len=7]'", 1],
  ['Password: must be 8 characters', 'Password: must be 8 characters', 0],
  ['Password: required', 'Password: required', 0],
  ['Session: 2024-25 season', 'Session: 2024-25 season', 0],
  ['Token::from_str(x)', 'Token::from_str(x)', 0],
  ['This site uses a cookie: it remembers you', 'This site uses a cookie: it remembers you', 0],

  // Quoted members in JSON or dict text.
  ['{"apiKey": "abcd\\"ef", "name":"x", "pin": 1234}',
    '{"apiKey": "[redacted apiKey len=8]", "name":"x", "pin": [redacted pin len=4]}', 2],
  ["{'password' => 'hunter2'}", "{'password' => '[redacted password len=7]'}", 1],
  ['{"tokenType": "Bearer", "passwordHint": "pet"}',
    '{"tokenType": "Bearer", "passwordHint": "pet"}', 0],
  ['{"password": true, "secret": null}', '{"password": true, "secret": null}', 0],
  ['"password": "unterminated secret\n next', '"password": "[redacted password len=19]\n next', 1],

  // A secret word and a long token after it.
  ['token 4f2c9a7e1b3d5f6a8c0e2b4d', 'token [redacted token len=24]', 1],
  ['Your API key 4f2c9a7e1b3d5f6a8c0e2b4d.', 'Your API key [redacted api_key len=24].', 1],
  ['secret sauce recipe', 'secret sauce recipe', 0],

  // PEM private keys.
  ['a\n-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg\n-----END PRIVATE KEY-----\nb',
    'a\n[redacted private_key len=68]\nb', 1],
  ['-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----',
    '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----', 0],
  ['-----BEGIN RSA PRIVATE KEY----- no end', '-----BEGIN RSA PRIVATE KEY----- no end', 0],

  // False-positive guards: ordinary text stays as it is.
  ['', '', 0],
  ['Hello, world. Sign in to continue.', 'Hello, world. Sign in to continue.', 0],
  ['session/123e4567-e89b-12d3-a456-426614174000/x', 'session/123e4567-e89b-12d3-a456-426614174000/x', 0],
  ['commit 4f2c9a7e1b3d5f6a8c0e2b4d6f8a0c1e2b4d6f8a', 'commit 4f2c9a7e1b3d5f6a8c0e2b4d6f8a0c1e2b4d6f8a', 0],
  ['?id=123e4567-e89b-12d3-a456-426614174000&page=2', '?id=123e4567-e89b-12d3-a456-426614174000&page=2', 0],
  ['key=home.title&author=Jane', 'key=home.title&author=Jane', 0],
  ['if (a == b && password == c)', 'if (a == b && password == c)', 0],
  ['tokens=1500 max_tokens=4096', 'tokens=1500 max_tokens=4096', 0],
  ['shipping=fast spinner=on footprint=3', 'shipping=fast spinner=on footprint=3', 0],
  ['The secretary=Jane; the passenger=Bob', 'The secretary=Jane; the passenger=Bob', 0],
  ['password_length=12 tokenExpires=3600', 'password_length=12 tokenExpires=3600', 0],
  ['Forgot your password? Reset it here.', 'Forgot your password? Reset it here.', 0],

  // Markers from an earlier pass go through untouched.
  ['token=[redacted token len=3]', 'token=[redacted token len=3]', 0],
  ['Cookie: [redacted Cookie len=19]', 'Cookie: [redacted Cookie len=19]', 0],
  ['[redacted api_key len=40] and [redacted jwt len=155]',
    '[redacted api_key len=40] and [redacted jwt len=155]', 0],
  ['[redacted nope] token=abc', '[redacted nope] token=[redacted token len=3]', 1],
];

// Rows only the JS side has, each checked against the C build while this file was written.
const JS_CASES = [
  ['ASIA1234567890ABCDEF', '[redacted aws_key len=20]', 1],
  ['Token: 4f2c9a7e1b3d', 'Token: [redacted Token len=12]', 1],
  ['pw==x', 'pw==x', 0],
  ['pw = "abc" ', 'pw = "[redacted pw len=3]" ', 1],
  ['password:"a\\"b"', 'password:"[redacted password len=4]"', 1],
  ['"pin": -12.5e3,', '"pin": [redacted pin len=7],', 1],
  ['"pin": -x', '"pin": -x', 0],
  ['Bearer  \t abcdefgh1', 'Bearer  \t [redacted bearer len=9]', 1],
  ['eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig.more.parts.too',
    '[redacted jwt len=51].too', 1], // five segments at most
  ['\uD800token=abc', '\uFFFDtoken=[redacted token len=3]', 1], // a lone surrogate is repaired
  ['token=\u{1F642}\u{1F642}', 'token=[redacted token len=2]', 1],
];

for (const [i, [input, output, count]] of CASES.entries()) {
  test(`C row ${String(i).padStart(3, '0')}: ${JSON.stringify(input).slice(0, 60)}`, () => {
    const once = redactText(input);
    assert.equal(once.text, output);
    assert.equal(once.count, count);
    const twice = redactText(once.text);
    assert.equal(twice.text, once.text);
    assert.equal(twice.count, 0);
  });
}

for (const [input, output, count] of JS_CASES) {
  test(`JS row: ${JSON.stringify(input).slice(0, 60)}`, () => {
    assert.deepEqual(redactText(input), { text: output, count });
    assert.deepEqual(redactText(output), { text: output, count: 0 });
  });
}

test('secret names, as the C decides them', () => {
  const secret = [
    'password', 'userPassword', 'new-password', 'passwd', 'PASSWORD_CONFIRMATION', 'pwd',
    'pass', 'api_key', 'apiKey', 'X-Api-Key', 'APIKEY', 'access_token', 'refreshToken',
    'XSRF-TOKEN', 'csrftoken', '_csrf', 'sessionid', 'session_id', 'JSESSIONID', 'sid',
    'session', 'auth', 'Authorization', 'cookie', 'Set-Cookie', 'client_secret', 'otp',
    'otpCode', 'totp', 'pin', 'pin2', 'userPin', 'cvv', 'cvc', 'card_number', 'cardNumber',
    'ccNumber', 'security_code', 'private_key', 'accessKey', 'ssn', 'iban', 'mfa_code',
    '2fa', 'X-Amz-Signature', 'sig', 'passwort', 'accountNumber',
  ];
  const plain = [
    'name', 'username', 'email', 'valueLength', 'filled', 'credential', 'type', 'label',
    'tokenType', 'passwordHint', 'sessionExpires', 'csrfHeaderName', 'password_length',
    'passwordField', 'shipping', 'spinner', 'pinned', 'author', 'authority', 'secure',
    'httpOnly', 'sameSite', 'expirationDate', 'domain', 'key', 'tokens', 'max_tokens',
    'secretary', 'passenger', 'compass', 'bypass', 'keyboard', '', 'id', 'documentId',
  ];
  for (const name of secret) assert.equal(isSecretName(name), true, name);
  for (const name of plain) assert.equal(isSecretName(name), false, name);
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

test('a page-chosen name cannot close the marker or look like markup', () => {
  assert.equal(redactText('a<b>]password=x').text, 'a<b>]password=[redacted password len=1]');
  assert.equal(redactText('{"pass]word <i>": "x"}').text, '{"pass]word <i>": "[redacted pass_word_i len=1]"}');
  // And the name in a marker is at most 40 characters.
  const long = `${'x'.repeat(60)}_token=abc`;
  assert.equal(redactText(long).text, `${long.slice(0, -3)}[redacted ${'x'.repeat(40)} len=3]`);
});

test('an unterminated quoted secret is masked to 4096 bytes, never through half a character', () => {
  const r = redactText(`password="${'a'.repeat(4093)}\u{1F642}\u{1F642}x`);
  // The C stops at byte 4096 inside the first emoji and leaves its last bytes after the marker;
  // JS takes the whole emoji instead (see the report): the text stays well-formed.
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

test('JSON members under secret names', () => {
  assertJson({ password: 'hunter2', user: 'bob' }, { password: '[redacted password len=7]', user: 'bob' }, 1);
  assertJson(JSON.parse('{"apiKey":"k","csrf_token":"c","sessionId":"s","otp":123456,"cvv":12.5}'), {
    apiKey: '[redacted apiKey len=1]', csrf_token: '[redacted csrf_token len=1]',
    sessionId: '[redacted sessionId len=1]', otp: '[redacted otp len=6]', cvv: '[redacted cvv len=4]',
  }, 5);
  // Empty strings, booleans and null say nothing secret.
  assertJson({ password: '', token: true, secret: null }, { password: '', token: true, secret: null }, 0);
  // Metadata about a secret stays.
  const meta = { tokenType: 'Bearer', passwordHint: 'pet', tokenExpires: 3600 };
  assertJson(meta, { ...meta }, 0);
  // Strings under other names still go through the text rules.
  assertJson({ text: 'Cookie: a=b', url: 'https://x.test/?token=abc' },
    { text: 'Cookie: [redacted Cookie len=3]', url: 'https://x.test/?token=[redacted token len=3]' }, 2);
});

test('JSON: what the snapshot sends for a form stays as it is', () => {
  const snapshot = JSON.parse('{"forms":[{"ref":"e1","name":"login","action":"https://x.test/session",' +
    '"method":"post","fields":[{"ref":"e2","name":"password","type":"password",' +
    '"label":"Password","required":true,"credential":true,"filled":true,' +
    '"valueLength":8},{"ref":"e3","name":"user_pin","type":"text","label":"PIN",' +
    '"required":false,"credential":true,"filled":false,"valueLength":0}]}]}');
  assertJson(snapshot, structuredClone(snapshot), 0);
});

test('JSON: cookie lists keep names and flags; scalars in a secret-named list are secrets', () => {
  const cookies = {
    cookies: [{ name: 'SID', domain: '.x.test', path: '/', secure: true, httpOnly: true, sameSite: 'lax',
      session: true, valueLength: 40 }],
  };
  assertJson(cookies, structuredClone(cookies), 0);
  assertJson({ cookies: ['a=b', 'c=d'], tokens: [1, 2] },
    { cookies: ['[redacted cookies len=3]', '[redacted cookies len=3]'], tokens: [1, 2] }, 2);
});

test('JSON: {name, value} pairs are as secret as the name says', () => {
  assertJson({
    headers: [{ name: 'Authorization', value: 'Bearer abc12345' }, { name: 'Accept', value: 'text/html' },
      { name: 'Set-Cookie', value: 'id=1' }],
  }, {
    headers: [{ name: 'Authorization', value: '[redacted Authorization len=15]' },
      { name: 'Accept', value: 'text/html' }, { name: 'Set-Cookie', value: '[redacted Set-Cookie len=4]' }],
  }, 2);
});

test('JSON: secrets are found however deep; top-level scalars and arrays', () => {
  assertJson({ a: [{ b: { c: [[{ secret: 'xyz', ok: 'fine' }]] } }], auth: { user: 'bob', password: 'p' } },
    { a: [{ b: { c: [[{ secret: '[redacted secret len=3]', ok: 'fine' }]] } }],
      auth: { user: 'bob', password: '[redacted password len=1]' } }, 2);
  assertJson(['ghp_abcdefghijklmnopqrstuvwxyz0123456789', 1, true, null],
    ['[redacted github_token len=40]', 1, true, null], 1);
  assertJson('plain text', 'plain text', 0);
  assertJson('token=abc', 'token=[redacted token len=3]', 1);
  assertJson(7, 7, 0);

  // 100 levels are kept as they are.
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

test('JSON: numbers under secret names are measured as the C prints them', () => {
  const { value } = redactValue({ pin: 0.1, otp: -7, cvv: 1e21, sig: 2 ** 40, ssn: 1e-7, pw: 123456789.123 });
  assert.deepEqual(value, {
    pin: '[redacted pin len=19]', // 0.10000000000000001
    otp: '[redacted otp len=2]',
    cvv: '[redacted cvv len=5]', // 1e+21
    sig: '[redacted sig len=13]',
    ssn: '[redacted ssn len=22]', // 9.9999999999999995e-08
    pw: '[redacted pw len=13]', // 123456789.123
  });
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

test('JSON: a wide value that shares children is bounded, not exponential', () => {
  let node = { token: 'abc' };
  for (let i = 0; i < 40; i++) node = { a: node, b: node }; // 2^40 paths
  const start = performance.now();
  const { count } = redactValue(node);
  assert.ok(count > 0);
  assert.ok(performance.now() - start < 10_000);
});

test('linear time: 1 MiB of each hard unit, and of real-looking text, finishes fast', () => {
  const units = [
    '"password":"', 'password="', 'eyJaaaaaaaaaa.', 'Bearer ', '"', '[redacted ',
    '-----BEGIN PRIVATE KEY-----', 'password: ', 'a=', 'token ', '\'', 'api key ', 'x-a: ', '[',
    'é', 'eyJhbGciOiJIUzI1NiJ9.', 'sk-', ' ', 'token=abc ',
  ];
  for (const unit of units) {
    let text = unit.repeat(Math.ceil((1024 * 1024) / unit.length));
    const start = performance.now();
    const { text: out } = redactText(text);
    const ms = performance.now() - start;
    assert.equal(typeof out, 'string');
    assert.ok(ms < 2000, `${JSON.stringify(unit)}: ${ms.toFixed(0)} ms`);
    text = null;
  }
  // "password: hunter22 and" keeps its word: a name: value token must end its line.
  const page = `${'Hello, world. Sign in with password: hunter22 and token=abc; '.repeat(20000)}`;
  const start = performance.now();
  const r = redactText(page);
  assert.equal(r.count, 20000);
  assert.ok(performance.now() - start < 2000);
});
