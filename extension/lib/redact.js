// SPDX-License-Identifier: GPL-3.0-or-later
// Redaction (DESIGN §8), the extension's half of src/core/policy/chp-redact.c: masks secrets in
// page-derived text and JSON before a result leaves the extension; the app then redacts again.
// Every secret becomes `[redacted <name> len=N]` (<name>: the kind — jwt, bearer, … — or the
// parameter, header or member name it was found under; N: its length in characters). Markers
// pass through unchanged, so redacting twice changes nothing more.
//
// The rules, names and false-positive guards are those of the table at the top of chp-redact.c,
// scanned the same way: one pass, no regular expressions over the text, look-aheads bounded or
// consumed, so the cost is linear. The C counts its bounds (MAX_NAME, MAX_QUOTED) in UTF-8
// bytes; so does this file.

const MAX_NAME = 128; // longer "names" are not names
const MAX_QUOTED = 4096; // a quoted value with no end this far is masked to here
const MAX_MARKER_NAME = 40;
const MAX_JSON_DEPTH = 256;
const MAX_TOKENS = 16;
const MAX_JSON_NODES = 1_000_000; // JS values can share children; a tree from JSON never gets here
const MARKER_PREFIX = '[redacted ';

// ---- names ---------------------------------------------------------------------------------------

const SECRET_SUBSTRINGS = [
  'password', 'passwd', 'passphrase', 'passcode', 'passwort', 'secret', 'token', 'apikey',
  'csrf', 'xsrf', 'cookie', 'sessionid', 'sessid', 'privatekey', 'accesskey', 'authorization',
  'mnemonic',
];

const SECRET_WORDS = [
  'pin', 'otp', 'totp', 'hotp', 'cvv', 'cvc', 'csc', 'pwd', 'pw', 'pass', 'mfa', '2fa', 'auth',
  'sid', 'ssn', 'sig', 'signature', 'session', 'bearer', 'jwt', 'iban', 'cardnumber', 'ccnumber',
  'ccnum',
];

const SECRET_WORD_SUFFIXES = new Set(['code', 'number', 'num', 'no']);

const SECRET_PAIRS = [
  ['api', 'key'], ['api', 'keys'], ['access', 'key'], ['private', 'key'],
  ['card', 'number'], ['card', 'num'], ['card', 'no'], ['cc', 'number'],
  ['cc', 'num'], ['cc', 'no'], ['credit', 'card'], ['security', 'code'],
  ['account', 'number'], ['account', 'key'], ['verification', 'code'],
  ['recovery', 'code'], ['recovery', 'codes'], ['backup', 'code'], ['backup', 'codes'],
  ['recovery', 'phrase'], ['seed', 'phrase'],
];

const NOT_SECRET_WORDS = new Set([
  'tokens', 'tokenizer', 'tokenize', 'tokenized', 'tokenization', 'secretary', 'secretariat',
]);

const META_WORDS = new Set([
  'length', 'len', 'count', 'size', 'type', 'kind', 'name', 'names', 'label', 'hint', 'field',
  'fields', 'policy', 'rule', 'rules', 'required', 'present', 'filled', 'enabled', 'disabled',
  'visible', 'expires', 'expiry', 'expiration', 'expired', 'exp', 'ttl', 'age', 'max', 'min',
  'url', 'uri', 'endpoint', 'path', 'domain', 'format', 'status', 'header', 'param', 'strength',
  'reset', 'changed', 'updated', 'created', 'at', 'date', 'time', 'timeout', 'mode', 'version',
  'valid', 'invalid', 'error', 'errors', 'message', 'placeholder', 'prompt', 'icon',
]);

const isDigit = (c) => c >= '0' && c <= '9';
const isUpper = (c) => c >= 'A' && c <= 'Z';
const isLower = (c) => c >= 'a' && c <= 'z';
const isAlpha = (c) => isUpper(c) || isLower(c);
const isAlnum = (c) => isAlpha(c) || isDigit(c);
const NON_ASCII = /[^\x00-\x7F]/;
// ASCII-only lowercasing (g_ascii_strdown): a Kelvin sign must not become a 'k'.
const asciiLower = (s) => (NON_ASCII.test(s) ? s.replace(/[A-Z]+/g, (m) => m.toLowerCase()) : s.toLowerCase());

const isHighSurrogate = (c) => c >= 0xD800 && c <= 0xDBFF;
const isLowSurrogate = (c) => c >= 0xDC00 && c <= 0xDFFF;

/** UTF-8 bytes of one UTF-16 code unit (a surrogate pair counts 2 + 2). */
const unitBytes = (s, i) => {
  const c = s.charCodeAt(i);
  return c < 0x80 ? 1 : c < 0x800 ? 2 : c >= 0xD800 && c <= 0xDFFF ? 2 : 3;
};

function utf8Length(s, limit = Infinity) {
  let n = 0;
  for (let i = 0; i < s.length && n <= limit; i++) n += unitBytes(s, i);
  return n;
}

function isSecretWord(word) {
  for (const secret of SECRET_WORDS) {
    if (!word.startsWith(secret)) continue;
    let rest = word.slice(secret.length);
    if (rest === '' || SECRET_WORD_SUFFIXES.has(rest)) return true;
    let k = 0;
    while (k < rest.length && isDigit(rest[k])) k++;
    rest = rest.slice(k);
    if (rest === '') return true;
  }
  return false;
}

// "X-Api-Key", "userPassword", "csrf_token2" → lowercase words, split at non-alphanumerics and at a
// lowercase letter or digit followed by a capital; at most MAX_TOKENS words.
function splitWords(name) {
  const words = [];
  let w = '';
  for (let i = 0; i <= name.length; i++) {
    const c = i < name.length ? name[i] : '';
    const alnum = c !== '' && isAlnum(c);
    const camel = alnum && isUpper(c) && w.length > 0 && (isLower(name[i - 1]) || isDigit(name[i - 1]));
    if ((!alnum || camel) && w.length > 0) {
      words.push(w);
      w = '';
      if (words.length === MAX_TOKENS) return words;
    }
    if (alnum) w += isUpper(c) ? String.fromCharCode(c.charCodeAt(0) + 32) : c;
  }
  return words;
}

/**
 * Whether a value under this parameter, header, cookie, field or JSON member name is a secret
 * (chp_redact_name_is_secret). Anything that is not a string is not a secret name.
 */
// Pages repeat their names: remember the last few thousand answers.
const nameCache = new Map();

export function isSecretName(name) {
  if (typeof name !== 'string' || name.length === 0 || name.length > MAX_NAME * 4) return false;
  let known = nameCache.get(name);
  if (known === undefined) {
    known = judgeName(name);
    if (nameCache.size >= 4096) nameCache.clear();
    nameCache.set(name, known);
  }
  return known;
}

function judgeName(name) {
  if (utf8Length(name, MAX_NAME) > MAX_NAME) return false;
  const words = splitWords(name);
  const n = words.length;
  if (n === 0 || (n >= 2 && META_WORDS.has(words[n - 1]))) return false;
  for (let i = 0; i < n; i++) {
    const word = words[i];
    if (NOT_SECRET_WORDS.has(word)) continue;
    if (SECRET_SUBSTRINGS.some((s) => word.includes(s))) return true;
    if (isSecretWord(word)) return true;
    if (i + 1 < n && SECRET_PAIRS.some(([a, b]) => word === a && words[i + 1] === b)) return true;
  }
  return false;
}

// ---- markers -------------------------------------------------------------------------------------

const isMarkerNameChar = (c) => isAlnum(c) || c === '_' || c === '.' || c === '-';

// The length of a well-formed marker at s[p], or 0.
function markerLen(s, p) {
  const n = s.length - p;
  let i = MARKER_PREFIX.length;
  if (n < i || !s.startsWith(MARKER_PREFIX, p)) return 0;
  let start = i;
  while (i < n && i - start < 64 && isMarkerNameChar(s[p + i])) i++;
  if (i === start || n - i < 5 || !s.startsWith(' len=', p + i)) return 0;
  i += 5;
  start = i;
  while (i < n && i - start < 10 && isDigit(s[p + i])) i++;
  if (i === start || i >= n || s[p + i] !== ']') return 0;
  return i + 1;
}

/** Whether `s` is exactly one `[redacted <name> len=N]` marker. */
export function isMarker(s) {
  return typeof s === 'string' && s.length > 0 && markerLen(s, 0) === s.length;
}

function countChars(s) {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (!(c >= 0xDC00 && c <= 0xDFFF && i > 0 && s.charCodeAt(i - 1) >= 0xD800 && s.charCodeAt(i - 1) <= 0xDBFF)) n++;
  }
  return n;
}

function marker(name, secret) {
  // The name is page text too: only characters that cannot end the marker or start markup.
  let clean = '';
  for (let i = 0; i < name.length && clean.length < MAX_MARKER_NAME; i++) {
    if (isMarkerNameChar(name[i])) clean += name[i];
    else if (clean.length > 0 && !clean.endsWith('_')) clean += '_';
  }
  clean = clean.replace(/_+$/, '');
  return `${MARKER_PREFIX}${clean || 'secret'} len=${countChars(secret)}]`;
}

// ---- text ----------------------------------------------------------------------------------------

const isTokenChar = (c) => isAlnum(c) || c === '_' || c === '-';
const isNameChar = (c) => isTokenChar(c) || c === '.' || c === '[' || c === ']';
const isBlank = (c) => c === ' ' || c === '\t';
// g_ascii_isspace: not \v.
const isSpace = (c) => c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f';
const isValueDelim = (c) => isSpace(c) || '&;,"\'<>`)]}#'.includes(c);

const KEY_SHAPES = [
  ['sk_live_', 10, 0, false, false, 'stripe_key'],
  ['sk_test_', 10, 0, false, false, 'stripe_key'],
  ['rk_live_', 10, 0, false, false, 'stripe_key'],
  ['rk_test_', 10, 0, false, false, 'stripe_key'],
  ['sk-', 20, 0, false, false, 'api_key'],
  ['ghp_', 30, 0, false, false, 'github_token'],
  ['gho_', 30, 0, false, false, 'github_token'],
  ['ghu_', 30, 0, false, false, 'github_token'],
  ['ghs_', 30, 0, false, false, 'github_token'],
  ['ghr_', 30, 0, false, false, 'github_token'],
  ['github_pat_', 30, 0, false, false, 'github_token'],
  ['glpat-', 20, 0, false, false, 'gitlab_token'],
  ['xoxa-', 10, 0, false, false, 'slack_token'],
  ['xoxb-', 10, 0, false, false, 'slack_token'],
  ['xoxe-', 10, 0, false, false, 'slack_token'],
  ['xoxp-', 10, 0, false, false, 'slack_token'],
  ['xoxr-', 10, 0, false, false, 'slack_token'],
  ['xoxs-', 10, 0, false, false, 'slack_token'],
  ['npm_', 36, 0, false, false, 'npm_token'],
  ['hf_', 30, 0, false, false, 'hf_token'],
  ['AKIA', 16, 16, true, false, 'aws_key'],
  ['ASIA', 16, 16, true, true, 'aws_key'], // "ASIAN…" is a word; real ones have digits
  ['AIza', 35, 35, false, false, 'google_api_key'],
  ['ya29.', 20, 0, false, false, 'google_oauth_token'], // the '.' is part of the prefix
].map(([prefix, minBody, exactBody, upperDigits, needsDigit, name]) =>
  ({ prefix, minBody, exactBody, upperDigits, needsDigit, name }));

const KEY_SHAPE_STARTS = new Set(KEY_SHAPES.map((shape) => shape.prefix[0]));

// ---- numbers: cards and national ids (match_number in the C) -------------------------------------

const MAX_ID_CHARS = 19; // the longest card number; ids are shorter
const MAX_GROUPS = 8;

// The number being read (one at a time: reused, so that reading one allocates nothing): its
// characters as codes (digits, and the letters an id may have) and where each group ends, the
// groups split by one space or one '-' (the same one).
const NUM = {
  c: new Uint8Array(MAX_ID_CHARS),
  n: 0,
  groups: 0,
  groupChars: new Uint8Array(MAX_GROUPS), // characters before the end of each group
  groupEnd: new Array(MAX_GROUPS).fill(0), // text offset after each group
  sep: '',
};

const codeIsDigit = (c) => c >= 48 && c <= 57;
const CODE_X = 88;
const CODE_x = 120;

// Reads the number at s[i] into NUM. Groups stop where one more would pass MAX_ID_CHARS; a first
// group longer than that is no id at all (false).
function readNumber(s, i) {
  const n = s.length;
  const num = NUM;
  let e = i;
  num.n = 0;
  num.groups = 0;
  num.sep = '';
  for (;;) {
    const start = e;
    while (e < n) {
      const c = s.charCodeAt(e);
      // A French NIR's department may be 2A or 2B (Corsica); a Chinese id may end in X.
      const letter = (num.n === 6 && num.c[5] === 50 && (c === 65 || c === 66))
        || (num.n === 17 && (c === CODE_X || c === CODE_x));
      if (!codeIsDigit(c) && !letter) break;
      if (num.n === MAX_ID_CHARS) {
        if (num.groups === 0) return false;
        num.n = num.groupChars[num.groups - 1];
        return true;
      }
      num.c[num.n++] = c;
      e++;
      if (c === CODE_X || c === CODE_x) break;
    }
    if (e === start) break;
    num.groupChars[num.groups] = num.n;
    num.groupEnd[num.groups] = e;
    num.groups++;
    const last = num.c[num.n - 1];
    if (num.groups === MAX_GROUPS || e + 1 >= n || (s[e] !== ' ' && s[e] !== '-')
        || (num.sep !== '' && s[e] !== num.sep) || !isDigit(s[e + 1]) || last === CODE_X || last === CODE_x) break;
    num.sep = s[e];
    e++;
  }
  return num.groups > 0;
}

const allDigits = (c, from, to) => {
  for (let k = from; k < to; k++) if (!codeIsDigit(c[k])) return false;
  return true;
};

const numberOf = (c, from, len) => {
  let v = 0;
  for (let k = from; k < from + len; k++) v = v * 10 + (c[k] - 48);
  return v;
};

function luhnOk(c, n) {
  let sum = 0;
  for (let k = 0; k < n; k++) {
    let d = c[n - 1 - k] - 48;
    if (k % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return sum % 10 === 0;
}

// A payment card: 13 to 19 digits with a card network's first digits and length, and a valid Luhn
// check digit (one number in ten passes Luhn alone).
function cardOk(c, n) {
  if (n < 13 || n > 19 || !allDigits(c, 0, n)) return false;
  const two = numberOf(c, 0, 2);
  const four = numberOf(c, 0, 4);
  let brand;
  switch (c[0]) {
    case 52: brand = n === 13 || n === 16 || n === 19; break; // '4': Visa
    case 53: brand = two >= 51 && two <= 55 && n === 16; break; // '5': Mastercard
    case 50: brand = four >= 2221 && four <= 2720 && n === 16; break; // '2': Mastercard's 2-series
    case 51: // '3': American Express; JCB; Diners
      brand = ((two === 34 || two === 37) && n === 15) || (two === 35 && n >= 16)
        || ((two === 36 || two === 38 || two === 39 || (two === 30 && c[2] <= 53)) && n >= 14);
      break;
    case 54: brand = n >= 16; break; // '6': Discover, UnionPay, Maestro
    default: brand = false;
  }
  return brand && luhnOk(c, n);
}

// A US social security number, 123-45-6789: area not 000, 666 or 9xx, group not 00, serial not 0000.
function ssnOk(num, groups) {
  const c = num.c;
  if (groups !== 3 || num.sep !== '-' || num.groupChars[0] !== 3 || num.groupChars[1] !== 5
    || num.groupChars[2] !== 9 || !allDigits(c, 0, 9)) return false;
  const area = numberOf(c, 0, 3);
  return area !== 0 && area !== 666 && c[0] !== 57 && numberOf(c, 3, 2) !== 0 && numberOf(c, 5, 4) !== 0;
}

// A French social security number (NIR): sex, year, month, department (2A/2B for Corsica), commune,
// order, then a key that is 97 minus the first thirteen digits modulo 97.
function nirOk(c, n) {
  if (n !== 15 || !(c[0] === 49 || c[0] === 50 || c[0] === 51 || c[0] === 52 || c[0] === 55 || c[0] === 56)) {
    return false; // 1, 2, 3, 4, 7, 8
  }
  if (!allDigits(c, 0, 6) || !allDigits(c, 7, 15)) return false;
  const month = numberOf(c, 3, 2);
  if (!((month >= 1 && month <= 12) || (month >= 20 && month <= 42) || month >= 50)) return false;
  let v = 0; // < 10^13 < 2^53: exact
  for (let k = 0; k < 13; k++) {
    let d;
    if (k === 5 && c[6] === 65) d = 1; // 2A counts as 19
    else if (k === 6 && c[6] === 65) d = 9;
    else if (k === 5 && c[6] === 66) d = 1; // 2B as 18
    else if (k === 6 && c[6] === 66) d = 8;
    else if (!codeIsDigit(c[k])) return false;
    else d = c[k] - 48;
    v = v * 10 + d;
  }
  return 97 - (v % 97) === numberOf(c, 13, 2);
}

const CN_WEIGHTS = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2];
const CN_CHECK = '10X98765432';

// A Chinese resident identity number: region, birth date, sequence, then a check character
// (ISO 7064 MOD 11-2; 'X' stands for 10).
function cnIdOk(c, n) {
  if (n !== 18 || c[0] < 49 || c[0] > 56 || !allDigits(c, 0, 17)) return false;
  let sum = 0;
  for (let k = 0; k < 17; k++) sum += CN_WEIGHTS[k] * (c[k] - 48);
  const year = numberOf(c, 6, 4);
  const month = numberOf(c, 10, 2);
  const day = numberOf(c, 12, 2);
  if (year < 1900 || year > 2099 || month < 1 || month > 12 || day < 1 || day > 31) return false;
  const last = c[17] === CODE_x ? CODE_X : c[17];
  return last === CN_CHECK.charCodeAt(sum % 11);
}

// ---- phrases: "Your verification code is 482913", "API key is …" (PHRASES in the C) --------------

// What a page says just before a secret: [text (lowercase; a space stands for one to four blanks),
// the marker's name, 'code' | 'key']. A short code only after one of these: a six-digit number
// alone is an order, a date or a price. Single words already secret as names (password, token, …)
// only add "is": their "name: value" and "name=value" forms are the rules above.
const PHRASES = [
  ['verification code', 'verification_code', 'code'],
  ['confirmation code', 'confirmation_code', 'code'],
  ['security code', 'security_code', 'code'],
  ['one-time code', 'one_time_code', 'code'],
  ['one time code', 'one_time_code', 'code'],
  ['one-time passcode', 'one_time_code', 'code'],
  ['one-time password', 'one_time_code', 'code'],
  ['one time password', 'one_time_code', 'code'],
  ['login code', 'login_code', 'code'],
  ['sign-in code', 'login_code', 'code'],
  ['authentication code', 'auth_code', 'code'],
  ['auth code', 'auth_code', 'code'],
  ['access code', 'access_code', 'code'],
  ['activation code', 'activation_code', 'code'],
  ['recovery code', 'recovery_code', 'code'],
  ['backup code', 'backup_code', 'code'],
  ['2fa code', 'otp', 'code'],
  ['mfa code', 'otp', 'code'],
  ['sms code', 'otp', 'code'],
  ['otp', 'otp', 'code'],
  ['totp', 'otp', 'code'],
  ['pin', 'pin', 'code'],
  ['pin code', 'pin', 'code'],
  ['passcode', 'passcode', 'code'],
  ['your code', 'code', 'code'],
  ['code de v\u00e9rification', 'verification_code', 'code'],
  ['code de confirmation', 'confirmation_code', 'code'],
  ['code de s\u00e9curit\u00e9', 'security_code', 'code'],
  ['code \u00e0 usage unique', 'one_time_code', 'code'],
  ['code de r\u00e9cup\u00e9ration', 'recovery_code', 'code'],
  ['code de secours', 'backup_code', 'code'],
  ['code pin', 'pin', 'code'],
  ['votre code', 'code', 'code'],
  ['\u9a8c\u8bc1\u7801', 'verification_code', 'code'], // 验证码
  ['\u6821\u9a8c\u7801', 'verification_code', 'code'], // 校验码
  ['\u52a8\u6001\u7801', 'one_time_code', 'code'], // 动态码
  ['\u52a8\u6001\u5bc6\u7801', 'one_time_code', 'code'], // 动态密码
  ['\u6062\u590d\u7801', 'recovery_code', 'code'], // 恢复码
  ['\u5907\u7528\u7801', 'backup_code', 'code'], // 备用码

  ['password', 'password', 'key'],
  ['passphrase', 'passphrase', 'key'],
  ['secret', 'secret', 'key'],
  ['token', 'token', 'key'],
  ['api key', 'api_key', 'key'],
  ['access key', 'access_key', 'key'],
  ['secret key', 'secret_key', 'key'],
  ['private key', 'private_key', 'key'],
  ['account key', 'account_key', 'key'],
  ['client secret', 'client_secret', 'key'],
  ['mot de passe', 'password', 'key'],
  ['cl\u00e9 priv\u00e9e', 'private_key', 'key'],
  ['cl\u00e9 secr\u00e8te', 'secret_key', 'key'],
  ['cl\u00e9 api', 'api_key', 'key'],
  ["cl\u00e9 d'api", 'api_key', 'key'],
  ['\u5bc6\u7801', 'password', 'key'], // 密码
  ['\u79c1\u94a5', 'private_key', 'key'], // 私钥
  ['\u5bc6\u94a5', 'secret_key', 'key'], // 密钥
].map(([text, name, kind]) => ({
  text, name, kind,
  // One ASCII word ("pin", "token"): too common a word to be trusted without "is" or ':'.
  single: !text.includes(' ') && text.charCodeAt(0) < 0x80,
}));

// Words between a phrase and its secret: "is", "est", "是", "为".
const CONNECTOR_WORDS = ['is', 'was', 'est', '\u662f', '\u4e3a', '\u70ba'];

const lowerChar = (c) => (isUpper(c) ? String.fromCharCode(c.charCodeAt(0) + 32) : c);

// Every word start asks whether a phrase starts there: a set of the phrases' first three characters
// (lowercase, hashed) rules out almost every word in one lookup, as in the C; a phrase in another
// script is looked up by its first character. Only a "maybe": atPhrase() decides.
const PHRASE_START_BITS = 4096;
const lowerCode = (c) => (c >= 65 && c <= 90 ? c + 32 : c);
const startHash = (a, b, c) => (lowerCode(a) * 961 + lowerCode(b) * 31 + lowerCode(c)) % PHRASE_START_BITS;
const PHRASE_START = new Uint8Array(PHRASE_START_BITS);
const PHRASE_FIRST_WIDE = new Set();
for (const p of PHRASES) {
  const t = p.text;
  if (t.charCodeAt(0) < 0x80) PHRASE_START[startHash(t.charCodeAt(0), t.charCodeAt(1), t.charCodeAt(2))] = 1;
  else PHRASE_FIRST_WIDE.add(t[0]);
}
function mayStartPhrase(s, i) {
  if (i + 2 >= s.length) return false;
  const c = s.charCodeAt(i);
  if (c >= 0x80) return PHRASE_FIRST_WIDE.has(s[i]);
  return PHRASE_START[startHash(c, s.charCodeAt(i + 1), s.charCodeAt(i + 2))] === 1;
}

// The phrases by their first character, in table order.
const PHRASES_BY_FIRST = new Map();
for (const p of PHRASES) {
  if (!PHRASES_BY_FIRST.has(p.text[0])) PHRASES_BY_FIRST.set(p.text[0], []);
  PHRASES_BY_FIRST.get(p.text[0]).push(p);
}

// A key (printable ASCII, as keyEnd reads it): 6+ characters with a digit or a symbol, or 16+.
function looksLikeKey(s, from, to) {
  let telling = false;
  for (let k = from; k < to; k++) if (!isAlpha(s[k])) telling = true;
  return (to - from >= 6 && telling) || to - from >= 16;
}

class Scan {
  constructor(s) {
    this.s = s;
    this.n = s.length;
    this.out = [];
    this.count = 0;
    this.noPemEnd = false; // a search for "-----END " already failed: never search again
    this.pwFrom = 0; // a URL's password, masked when the scan gets there; pwTo 0: none
    this.pwTo = 0;
    this.keepFrom = 0; // s[keepFrom..keepTo) is copied text not yet in out: runs join up
    this.keepTo = 0;
  }

  flush() {
    if (this.keepTo > this.keepFrom) this.out.push(this.s.slice(this.keepFrom, this.keepTo));
    this.keepFrom = this.keepTo;
  }

  emit(name, from, to) {
    this.flush();
    this.out.push(marker(name, this.s.slice(from, to)));
    this.count++;
  }

  copy(from, to) {
    if (to <= from) return;
    if (from !== this.keepTo) {
      this.flush();
      this.keepFrom = from;
    }
    this.keepTo = to;
  }

  skipBlanks(i, max) {
    for (let k = 0; k < max && i < this.n && isBlank(this.s[i]); k++) i++;
    return i;
  }

  run(i, ok) {
    while (i < this.n && ok(this.s[i])) i++;
    return i;
  }

  // A JWT or JWE: "eyJ" + base64url, then 2 to 4 more ".segment"s (the last may be empty).
  matchJwt(i) {
    let e = this.run(i, isTokenChar);
    let segments = 1;
    if (e - i < 10 || !this.s.startsWith('eyJ', i)) return 0;
    while (segments < 5 && e < this.n && this.s[e] === '.') {
      const next = this.run(e + 1, isTokenChar);
      if (segments === 1 && next - (e + 1) < 2) return 0;
      if (next === e + 1 && segments >= 3) break; // a sentence's full stop after a whole token
      e = next;
      segments++;
    }
    return segments >= 3 ? e - i : 0;
  }

  matchKeyShape(i) {
    if (!KEY_SHAPE_STARTS.has(this.s[i])) return null;
    for (const shape of KEY_SHAPES) {
      const plen = shape.prefix.length;
      if (!this.s.startsWith(shape.prefix, i)) continue;
      const wordEnd = this.run(i + plen, isTokenChar);
      const body = wordEnd - i - plen;
      if (body === 0 || body < shape.minBody || (shape.exactBody !== 0 && body !== shape.exactBody)) continue;
      let digit = false;
      let ok = true;
      for (let j = i + plen; j < wordEnd; j++) {
        const c = this.s[j];
        digit ||= isDigit(c);
        if (shape.upperDigits && !isUpper(c) && !isDigit(c)) ok = false;
      }
      if (!ok || (shape.needsDigit && !digit)) continue;
      return { len: wordEnd - i, name: shape.name };
    }
    return null;
  }

  // "Bearer <token>" and "Basic <base64>": the scheme word stays, the credential goes. Returns the
  // end of the credential, or 0.
  matchAuthScheme(i) {
    const { s, n } = this;
    if (s[i] !== 'b' && s[i] !== 'B') return 0;
    for (const scheme of ['bearer', 'basic']) {
      const len = scheme.length;
      if (n - i <= len || asciiLower(s.slice(i, i + len)) !== scheme || !isBlank(s[i + len])) continue;
      const v = this.skipBlanks(i + len, 4);
      let e = v;
      let telling = false;
      for (; e < n; e++) {
        const c = s[e];
        if (isDigit(c) || '-._~+/'.includes(c)) telling = true;
        else if (!isAlpha(c)) break;
      }
      while (e < n && s[e] === '=') {
        e++;
        telling = true;
      }
      if (e - v < 8 || !telling) return 0;
      this.copy(i, v);
      this.emit(scheme, v, e);
      return e;
    }
    return 0;
  }

  // A PEM private key block, BEGIN line to END line.
  matchPem(i) {
    const { s } = this;
    if (this.noPemEnd || !s.startsWith('-----BEGIN ', i)) return 0;
    const lineEnd = s.indexOf('-----', i + 11);
    if (lineEnd === -1 || lineEnd - i > 80 || !s.slice(i, lineEnd).includes('PRIVATE KEY')) return 0;
    const end = s.indexOf('-----END ', lineEnd + 5);
    if (end === -1) {
      this.noPemEnd = true;
      return 0;
    }
    const close = s.indexOf('-----', end + 9);
    if (close === -1 || close - end > 80) return 0;
    this.emit('private_key', i, close + 5);
    return close + 5 - i;
  }

  atLineStart(i) {
    while (i > 0 && isBlank(this.s[i - 1])) i--;
    return i === 0 || '\n\r"\''.includes(this.s[i - 1]);
  }

  // A quoted value starting at the quote s[v]: the content's end (the closing quote), or where the
  // search stopped (a newline, the end, MAX_QUOTED bytes). Backslash escapes skipped when asked.
  quotedEnd(v, escapes) {
    const { s, n } = this;
    const q = s[v];
    let e = v + 1;
    let bytes = 1; // UTF-8 bytes of s[v..e)
    while (e < n && bytes <= MAX_QUOTED) {
      const c = s[e];
      if (c === q || c === '\n' || c === '\r') break;
      if (escapes && c === '\\' && e + 1 < n && s[e + 1] !== '\n') {
        bytes += 1;
        e++;
      }
      bytes += unitBytes(s, e);
      e++;
    }
    // The C can stop inside a character here (and leave the rest of its bytes after the marker);
    // a JS string must not be cut between the halves of a surrogate pair.
    if (e < n && e > 0 && isLowSurrogate(s.charCodeAt(e)) && isHighSurrogate(s.charCodeAt(e - 1))) e++;
    return Math.min(e, n);
  }

  // Finds the value after a secret name s[i..j); returns [from, to] or null.
  findValue(i, j) {
    const { s, n } = this;
    let k = this.skipBlanks(j, 4);

    if (k < n && s[k] === '=' && (k + 1 >= n || s[k + 1] !== '=')) {
      const v = this.skipBlanks(k + 1, 4);
      if (v < n && (s[v] === '"' || s[v] === '\'')) {
        const to = this.quotedEnd(v, false);
        return to > v + 1 ? [v + 1, to] : null;
      }
      let e = v;
      while (e < n && !isValueDelim(s[e])) e++;
      return e > v ? [v, e] : null;
    }

    if (k < n && s[k] === ':' && (k + 1 >= n || s[k + 1] !== ':')) {
      const lower = asciiLower(s.slice(i, j));
      const quote = i > 0 && (s[i - 1] === '"' || s[i - 1] === '\'') ? s[i - 1] : null;
      const header = lower === 'cookie' || lower === 'set-cookie' || lower === 'authorization' ||
        lower === 'proxy-authorization' || lower.includes('-');
      if (header && this.atLineStart(i)) {
        const v = this.skipBlanks(k + 1, 16);
        let e = v;
        while (e < n && s[e] !== '\n' && s[e] !== '\r' && s[e] !== quote) e++;
        while (e > v && isBlank(s[e - 1])) e--;
        return e > v ? [v, e] : null;
      }
      const v = this.skipBlanks(k + 1, 4);
      if (v < n && (s[v] === '"' || s[v] === '\'')) {
        const to = this.quotedEnd(v, true);
        return to > v + 1 ? [v + 1, to] : null;
      }
      let e = v;
      while (e < n && !isSpace(s[e]) && !',;}])"\'<>'.includes(s[e])) e++;
      k = this.skipBlanks(e, Infinity);
      if (e > v && (k === n || '\r\n,;}])"\''.includes(s[k])) && looksSecret(s, v, e)) return [v, e];
      return null;
    }

    if (k > j && k < n) {
      let digit = false;
      let alpha = false;
      let e = k;
      for (; e < n && (isAlnum(s[e]) || '+/_-='.includes(s[e])); e++) {
        digit ||= isDigit(s[e]);
        alpha ||= isAlpha(s[e]);
      }
      if (e - k >= 20 && digit && alpha && (e === n || !isNameChar(s[e]) || s[e] === '.')) return [k, e];
    }
    return null;
  }

  // A card number or a national id at s[i], a word start with a digit: { len, name } or null. The
  // whole number is tried first, then shorter ones at its group ends (a card number followed by its
  // expiry date), each ending a word.
  // d: the end of the digits at s[i].
  matchNumber(i, d) {
    const { s, n } = this;
    // Most numbers are short and alone ("12", "2024,"): out before anything is read. What can match
    // is 13 or more digits, or digits then a separator and a digit, or a NIR's 2A/2B.
    if (d - i < 13 && !(d + 1 < n && (s[d] === ' ' || s[d] === '-') && isDigit(s[d + 1]))
        && !(d - i === 6 && s[d - 1] === '2' && (s[d] === 'A' || s[d] === 'B'))) return null;
    // "3.4111…" is a decimal fraction, not a number of its own. A marker's ']' counts as the digit it
    // may have replaced: the second pass must keep what the first kept.
    if (i >= 2 && (s[i - 1] === '.' || s[i - 1] === ',') && (isDigit(s[i - 2]) || s[i - 2] === ']')) return null;
    if (!readNumber(s, i)) return null;
    const num = NUM;
    for (let g = num.groups; g > 0; g--) {
      const len = num.groupChars[g - 1];
      const e = num.groupEnd[g - 1];
      // The number must end a word: "4111…1111abc" and "…1111-rc1" are names, "…1111.5" a decimal
      // ('[' as a digit: a marker there must not make the second pass differ).
      if (e < n && (isTokenChar(s[e])
          || ((s[e] === '.' || s[e] === ',') && (isDigit(s[e + 1] ?? '') || s[e + 1] === '[')))) continue;
      let name;
      if (g === num.groups && ssnOk(num, g)) name = 'ssn';
      else if (cardOk(num.c, len)) name = 'card_number';
      else if (nirOk(num.c, len) || cnIdOk(num.c, len)) name = 'national_id';
      else continue;
      return { len: e - i, name };
    }
    return null;
  }

  // "scheme://user:password@host": u is just after "//". Finds the password (from the first ':' to
  // the last '@' of the authority, as a browser reads it) and leaves it for scan() to mask when it
  // gets there: the user part before it is scanned as any text, so that a second pass, which no
  // longer finds the '@' past the marker, reads it the same way.
  findUserinfo(u) {
    const { s, n } = this;
    let at = -1;
    let e = u;
    for (let bytes = 0; e < n && bytes <= 256; bytes += unitBytes(s, e), e++) {
      const c = s[e];
      if (isSpace(c) || '/?#"\'<>`'.includes(c)) break;
      if (c === '@') at = e;
    }
    if (at === -1) return;
    const colon = s.indexOf(':', u);
    if (colon === -1 || colon >= at || colon + 1 === at || markerLen(s, colon + 1) > 0) return;
    this.pwFrom = colon + 1;
    this.pwTo = at;
  }

  // The end of `text` (lowercase) matched at s[i], ASCII case ignored, or 0.
  matchWords(i, text) {
    const { s, n } = this;
    let k = i;
    for (const p of text) {
      if (p === ' ') {
        const b = this.skipBlanks(k, 4);
        if (b === k) return 0;
        k = b;
      } else if (s.startsWith(p, k) || (k < n && p.length === 1 && lowerChar(s[k]) === p)) {
        k += p.length;
      } else {
        return 0;
      }
    }
    // A whole word: "pin" is not "ping".
    if (k < n && isTokenChar(s[k]) && isTokenChar(s[k - 1])) return 0;
    return k;
  }

  // A short code at s[v]: 3 to 12 digits (two groups of three or four may be split by a space), or
  // 4 to 32 letters, digits and inner hyphens with two digits at least. Its end, or 0.
  codeEnd(v) {
    const { s, n } = this;
    let e = v;
    let digits = 0;
    let other = false;
    while (e < n && (isAlnum(s[e]) || (s[e] === '-' && e > v && e + 1 < n && isAlnum(s[e + 1])))) {
      if (isDigit(s[e])) digits++;
      else other = true;
      e++;
    }
    if (!other && (e - v === 3 || e - v === 4) && e + 1 < n && s[e] === ' ') {
      let f = e + 1;
      while (f < n && isDigit(s[f])) f++;
      if (f - (e + 1) === e - v && !(f < n && isTokenChar(s[f]))) {
        digits += f - (e + 1);
        e = f;
      }
    }
    // "482913.5", "482913:x", "482913-": part of something longer. '[' as a letter: a later rule's
    // marker there must not make the second pass mask what the first kept.
    if (e < n && (isTokenChar(s[e]) || s[e] === '@' || s[e] === '/'
        || ('.:,'.includes(s[e]) && e + 1 < n && (isAlnum(s[e + 1]) || s[e + 1] === '[')))) return 0;
    if (!other) return digits >= 3 && digits <= 12 ? e : 0;
    return e - v >= 4 && e - v <= 32 && digits >= 2 ? e : 0;
  }

  // A key after "is": printable ASCII up to a delimiter, less a sentence's full stop; its end, or
  // 0. One that runs into a '[' is refused: a later rule may mask part of a refused key, and the
  // second pass, which stops at that marker, must refuse what is left of it too.
  keyEnd(v) {
    const { s, n } = this;
    let e = v;
    while (e < n && s.charCodeAt(e) > 0x20 && s.charCodeAt(e) < 0x7f && !'"\'<>`,;()[]{}'.includes(s[e])) e++;
    if (s[e] === '[') return 0;
    while (e > v && '.!?:'.includes(s[e - 1])) e--;
    return looksLikeKey(s, v, e) ? e : 0;
  }

  // "secret key 4f2c9a7e…" with nothing between: 20 or more letters, digits and +/_-= with both a
  // letter and a digit, as after a secret name; its end, or 0.
  longTokenEnd(v) {
    const { s, n } = this;
    let digit = false;
    let alpha = false;
    let e = v;
    for (; e < n && (isAlnum(s[e]) || '+/_-='.includes(s[e])); e++) {
      digit ||= isDigit(s[e]);
      alpha ||= isAlpha(s[e]);
    }
    return e - v >= 20 && digit && alpha && (e === n || !isNameChar(s[e]) || s[e] === '.') ? e : 0;
  }

  // "482913 is your verification code", "G-482913 est votre code": a code at s[i], then "is your"
  // and, within four more words, "code", "passcode", "pin" or "otp". Its end, or 0.
  // d: the end of the digits at s[i] (i itself when there are none).
  codeBeforePhrase(i, d) {
    const { s, n } = this;
    // Out at once unless "is", "est" (or a second group of digits) follows the word.
    let w = d;
    while (w < n && (isAlnum(s[w]) || s[w] === '-')) w++;
    const next = s[this.skipBlanks(w, 4)] ?? '';
    if (!isDigit(next) && !'iIeE'.includes(next || '_')) return 0;
    const e = this.codeEnd(i);
    if (e === 0) return 0;
    let k = 0;
    for (const lead of ['is your', 'est votre']) {
      k = this.matchWords(this.skipBlanks(e, 4), lead);
      if (k > 0) break;
    }
    for (let w = 0; k > 0 && w < 5; w++) {
      const word = this.skipBlanks(k, 4);
      if (word === k) return 0;
      if (['code', 'passcode', 'pin', 'otp'].some((end) => this.matchWords(word, end) > 0)) return e;
      k = this.run(word, isTokenChar);
      if (k === word || k - word > 32) return 0;
    }
    return 0;
  }

  // A phrase of PHRASES at s[i] and the secret after it. Emits everything up to the end of the
  // secret and returns that end, or 0.
  atPhrase(i) {
    const { s, n } = this;
    for (const phrase of PHRASES_BY_FIRST.get(lowerChar(s[i])) ?? []) {
      const k = this.matchWords(i, phrase.text);
      if (k === 0) continue;

      // "is", "is:", ":", "：", "est", "是" … or nothing.
      let v = this.skipBlanks(k, 4);
      let word = false;
      let colon = false;
      for (const connector of CONNECTOR_WORDS) {
        const after = this.matchWords(v, connector);
        if (after > 0) {
          word = true;
          v = this.skipBlanks(after, 4);
          break;
        }
      }
      if (v < n && s[v] === ':' && !(v + 1 < n && s[v + 1] === ':')) {
        colon = true;
        v++;
      } else if (s[v] === '\uFF1A') { // full-width colon
        colon = true;
        v++;
      }
      v = this.skipBlanks(v, 4);
      if (v >= n || markerLen(s, v) > 0) continue;

      let e;
      if (phrase.kind === 'code') e = phrase.single && !word && !colon ? 0 : this.codeEnd(v);
      else if (word) e = this.keyEnd(v);
      else if (colon) {
        // As "name: value": the value ends its line. A single word's is that rule's.
        e = phrase.single ? 0 : this.keyEnd(v);
        const after = this.skipBlanks(e, Infinity);
        if (e > 0 && after < n && !'\r\n,;}])"\'.!?'.includes(s[after])) e = 0;
      } else {
        e = phrase.single ? 0 : this.longTokenEnd(v);
      }
      if (e === 0) continue;
      this.copy(i, v);
      this.emit(phrase.name, v, e);
      return e;
    }
    return 0;
  }

  // At the start of a word: a key shape, an auth scheme, or a name and maybe its value. Always
  // consumes at least one character and returns the new position.
  atWord(i) {
    const { s, n } = this;
    let m = this.matchJwt(i);
    if (m > 0) {
      this.emit('jwt', i, i + m);
      return i + m;
    }
    const shape = this.matchKeyShape(i);
    if (shape) {
      this.emit(shape.name, i, i + shape.len);
      return i + shape.len;
    }
    m = this.matchAuthScheme(i);
    if (m > 0) return m;
    if (isDigit(s[i]) || (i + 2 < n && s[i + 1] === '-' && isDigit(s[i + 2]))) {
      // Both look at the digits first: read them once.
      let d = i;
      while (d < n && isDigit(s[d])) d++;
      const number = d > i ? this.matchNumber(i, d) : null;
      if (number) {
        this.emit(number.name, i, i + number.len);
        return i + number.len;
      }
      m = this.codeBeforePhrase(i, d);
      if (m > 0) {
        this.emit('code', i, m);
        return m;
      }
    }

    const j = this.run(i, isNameChar);
    let nameEnd = j;
    while (nameEnd > i && s[nameEnd - 1] === '.') nameEnd--;

    // "postgres://admin:pw@db": the password in a URL's userinfo.
    if (j + 2 < n && s[j] === ':' && s[j + 1] === '/' && s[j + 2] === '/' && isScheme(s, i, j)) {
      this.findUserinfo(j + 3);
    }

    // "API key 4f2c…": two words that only together name a secret.
    if (nameEnd === j && j - i === 3 && asciiLower(s.slice(i, j)) === 'api' && j + 4 <= n &&
        s[j] === ' ' && asciiLower(s.slice(j + 1, j + 4)) === 'key') {
      const after = this.run(j + 1, isNameChar);
      const found = after - (j + 1) === 3 ? this.findValue(i, after) : null;
      if (found && markerLen(s, found[0]) === 0) {
        this.copy(i, found[0]);
        this.emit('api_key', found[0], found[1]);
        return found[1];
      }
    }

    if (nameEnd === j && j - i <= MAX_NAME && isSecretName(s.slice(i, j))) {
      const found = this.findValue(i, j);
      if (found) {
        this.copy(i, found[0]);
        // An earlier pass's marker: keep it as it is, and the main loop copies it.
        if (markerLen(s, found[0]) > 0) return found[0];
        this.emit(s.slice(i, j), found[0], found[1]);
        return found[1];
      }
    }

    // An OAuth callback's "?code=…" (not "country_code", not "code=404").
    if (j - i === 4 && i > 0 && '?&#'.includes(s[i - 1]) && asciiLower(s.slice(i, j)) === 'code' && s[j] === '=') {
      // Not through a '[': a marker a later rule leaves there would make the second pass longer
      // than the first.
      let e = j + 1;
      while (e < n && !isValueDelim(s[e]) && s[e] !== '[') e++;
      if (utf8Length(s.slice(j + 1, e), 8) >= 8) {
        this.copy(i, j + 1);
        this.emit('code', j + 1, e);
        return e;
      }
    }

    if (mayStartPhrase(s, i)) {
      m = this.atPhrase(i);
      if (m > 0) return m;
    }

    this.copy(i, j);
    return j;
  }

  // `"name": "value"` or `'name' => 'value'` with a secret name. Returns the position after the
  // masked value (its closing quote is left to the main loop), or 0 when this is not one.
  quotedMember(i) {
    const { s, n } = this;
    const q = s[i];
    let e = i + 1;
    let bytes = 1; // UTF-8 bytes of s[i..e), as the C's e - i
    while (e < n && bytes <= MAX_NAME && s[e] !== q && s[e] !== '\n' && s[e] !== '\\') {
      bytes += unitBytes(s, e);
      e++;
    }
    // Where the C stops inside a multi-byte character it sees no quote there.
    if (bytes > MAX_NAME + 1) return 0;
    if (e >= n || s[e] !== q || e === i + 1) return 0;
    let k = this.skipBlanks(e + 1, 4);
    if (k < n && s[k] === ':') k++;
    else if (k + 1 < n && s[k] === '=' && s[k + 1] === '>') k += 2;
    else return 0;
    const name = s.slice(i + 1, e);
    // A name holding an earlier pass's marker is not one: "[redacted ssn len=11]" says ssn.
    if (!isSecretName(name) || name.includes(MARKER_PREFIX)) return 0;

    const v = this.skipBlanks(k, 4);
    if (v < n && (s[v] === '"' || s[v] === '\'')) {
      const end = this.quotedEnd(v, true);
      if (end === v + 1) return 0;
      if (markerLen(s, v + 1) === end - v - 1) {
        // An earlier pass's marker: the member as that pass left it, its name not read again as
        // text (where "token=abc" would now be found).
        this.copy(i, v + 1);
        return v + 1;
      }
      this.copy(i, v + 1);
      this.emit(name, v + 1, end);
      return end;
    }
    if (markerLen(s, v) > 0) {
      // A number an earlier pass masked: as above.
      this.copy(i, v);
      return v;
    }
    let end = v;
    while (end < n && (isDigit(s[end]) || '+-.eE'.includes(s[end]))) end++;
    const first = s[v] === '-' && v + 1 < n ? s[v + 1] : s[v];
    if (end === v || !isDigit(first)) return 0;
    this.copy(i, v);
    this.emit(name, v, end);
    return end;
  }

  scan() {
    const { s, n } = this;
    let i = 0;
    let plain = 0; // start of the characters not yet copied
    while (i < n) {
      if (this.pwTo > 0 && i >= this.pwFrom) {
        const here = i === this.pwFrom; // else a rule before it masked through it
        if (here) {
          this.copy(plain, i);
          this.emit('password', i, this.pwTo);
          i = this.pwTo;
          plain = i;
        }
        this.pwFrom = 0;
        this.pwTo = 0;
        if (here) continue;
      }
      const c = s[i];
      let m;
      if (c === '[' && (m = markerLen(s, i)) > 0) {
        this.copy(plain, i + m);
        i += m;
        plain = i;
      } else if (c === '-' && (this.copy(plain, i), plain = i, m = this.matchPem(i)) > 0) {
        i += m;
        plain = i;
      } else if ((c === '"' || c === '\'') && (this.copy(plain, i), plain = i, m = this.quotedMember(i)) > 0) {
        i = m;
        plain = i;
      } else if (isTokenChar(c) && (i === 0 || !isTokenChar(s[i - 1]))) {
        this.copy(plain, i);
        i = this.atWord(i);
        plain = i;
      } else if (c >= '\u0080' && mayStartPhrase(s, i) && (this.copy(plain, i), plain = i, m = this.atPhrase(i)) > 0) {
        i = m; // "验证码：482913"
        plain = i;
      } else {
        i++;
      }
    }
    this.copy(plain, n);
    this.flush();
  }
}

function isScheme(s, from, to) {
  if (to === from || !isAlpha(s[from])) return false;
  for (let k = from + 1; k < to; k++) if (!isAlnum(s[k]) && !'+-.'.includes(s[k])) return false;
  return true;
}

function looksSecret(s, from, to) {
  let telling = false;
  for (let i = from; i < to; i++) if (!isAlpha(s[i])) telling = true;
  const len = utf8Length(s.slice(from, to));
  return (len >= 6 && telling) || len >= 16;
}

/**
 * `s` with each secret replaced by `[redacted <name> len=N]`, and how many were masked. Lone
 * surrogates are replaced with U+FFFD first (as the C repairs invalid UTF-8). Anything that is
 * not a string gives empty text.
 */
export function redactText(s) {
  if (typeof s !== 'string') return { text: '', count: 0 };
  if (/[\uD800-\uDFFF]/.test(s)) {
    s = s.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
  }
  const sc = new Scan(s);
  sc.scan();
  return { text: sc.out.join(''), count: sc.count };
}

// ---- JSON ----------------------------------------------------------------------------------------

// g_ascii_dtostr: "%.17g".
function formatDouble(v) {
  if (Number.isNaN(v)) return 'nan';
  if (!Number.isFinite(v)) return v > 0 ? 'inf' : '-inf';
  const [mantissa, expText] = v.toExponential(16).split('e');
  const exp = Number(expText);
  const trim = (t) => (t.includes('.') ? t.replace(/0+$/, '').replace(/\.$/, '') : t);
  if (exp < -4 || exp >= 17) {
    const sign = exp < 0 ? '-' : '+';
    return `${trim(mantissa)}e${sign}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  return trim(v.toFixed(16 - exp));
}

// The text a number has in the C: json-glib reads integral JSON numbers as int64.
function numberText(v) {
  if (Number.isInteger(v) && Math.abs(v) < 2 ** 63) return BigInt(v).toString();
  return formatDouble(v);
}

function defineMember(into, key, value) {
  if (key === '__proto__') {
    Object.defineProperty(into, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    into[key] = value;
  }
}

class Walk {
  constructor() {
    this.count = 0;
    this.nodes = 0;
    this.path = new Set(); // objects on the way down: a cycle is cut, not followed
  }

  // A scalar under secretName (null: not a secret name).
  scalar(v, secretName) {
    if (typeof v === 'string') {
      if (secretName !== null && v !== '' && !isMarker(v)) {
        this.count++;
        return marker(secretName, v);
      }
      const r = redactText(v);
      this.count += r.count;
      return r.text;
    }
    if (typeof v === 'number' || typeof v === 'bigint') {
      if (secretName !== null) {
        this.count++;
        return marker(secretName, typeof v === 'bigint' ? v.toString() : numberText(v));
      }
      return v;
    }
    // Booleans say "filled", "credential", "session: true": never a secret.
    if (typeof v === 'boolean') return v;
    return null; // null, and what JSON has no word for (undefined, functions, symbols)
  }

  node(v, secretName, depth) {
    // Deeper than anything the frame reader lets in (or a value that shares or loops): drop it.
    if (depth > MAX_JSON_DEPTH || ++this.nodes > MAX_JSON_NODES ||
        (v !== null && typeof v === 'object' && this.path.has(v))) {
      this.count++;
      return null;
    }
    if (v === null || typeof v !== 'object') return this.scalar(v, secretName);

    this.path.add(v);
    try {
      if (Array.isArray(v)) {
        // Scalars in a list under a secret name ("cookies": ["a=b"]) are secrets; objects in it
        // are judged member by member.
        const out = new Array(v.length);
        for (let i = 0; i < v.length; i++) out[i] = this.node(v[i], secretName, depth + 1);
        return out;
      }
      // A header, cookie or field as {name, value}: the value is as secret as its name says.
      const pairName = typeof v.name === 'string' && isSecretName(v.name) ? v.name : null;
      const out = {};
      for (const key of Object.keys(v)) {
        let name = null;
        if (isSecretName(key)) name = key;
        else if (pairName !== null && key === 'value') name = pairName;
        defineMember(out, key, this.node(v[key], name, depth + 1));
      }
      return out;
    } finally {
      this.path.delete(v);
    }
  }
}

/**
 * A deep copy of a JSON-like value with every string passed through redactText(), and strings and
 * numbers under secret member names (or in a `{name, value}` pair with a secret name) replaced by
 * a marker. Booleans, nulls, member names and the shape are kept; the input is not changed.
 */
export function redactValue(v) {
  const walk = new Walk();
  const value = walk.node(v, null, 0);
  return { value, count: walk.count };
}
