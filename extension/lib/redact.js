// Redaction (DESIGN §8), the extension's half of src/core/chp-redact.c: masks secrets in
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
  ['account', 'number'],
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
].map(([prefix, minBody, exactBody, upperDigits, needsDigit, name]) =>
  ({ prefix, minBody, exactBody, upperDigits, needsDigit, name }));

const KEY_SHAPE_STARTS = new Set(KEY_SHAPES.map((shape) => shape.prefix[0]));

class Scan {
  constructor(s) {
    this.s = s;
    this.n = s.length;
    this.out = [];
    this.count = 0;
    this.noPemEnd = false; // a search for "-----END " already failed: never search again
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
    const wordEnd = this.run(i, isTokenChar);
    for (const shape of KEY_SHAPES) {
      const plen = shape.prefix.length;
      if (wordEnd - i <= plen || !this.s.startsWith(shape.prefix, i)) continue;
      const body = wordEnd - i - plen;
      if (body < shape.minBody || (shape.exactBody !== 0 && body !== shape.exactBody)) continue;
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

    const j = this.run(i, isNameChar);
    let nameEnd = j;
    while (nameEnd > i && s[nameEnd - 1] === '.') nameEnd--;

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
    if (!isSecretName(name)) return 0;

    const v = this.skipBlanks(k, 4);
    if (v < n && (s[v] === '"' || s[v] === '\'')) {
      const end = this.quotedEnd(v, true);
      if (end === v + 1 || markerLen(s, v + 1) === end - v - 1) return 0;
      this.copy(i, v + 1);
      this.emit(name, v + 1, end);
      return end;
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
      } else {
        i++;
      }
    }
    this.copy(plain, n);
    this.flush();
  }
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
