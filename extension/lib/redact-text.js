// SPDX-License-Identifier: GPL-3.0-or-later
// The text scan (chp-redact.c), the extension's half of the app's redaction of page text: the rules
// of the table at the top of chp-redact.c, tried at each word start in the same order, one pass,
// no regular expressions over the text, look-aheads bounded or consumed, so the cost is linear.
// The number and phrase rules are methods of Scan written in redact-numbers.js and
// redact-phrases.js; the words, key shapes, schemes and headers are redact-patterns.js.

import {
  asciiLower, isHighSurrogate, isLowSurrogate, isSpace, isValueDelim, unitBytes, utf8Length,
} from './redact-chars.js';
import { MARKER_PREFIX, marker, markerLen } from './redact-marker.js';
import { MAX_NAME, isSecretName } from './redact-names.js';
import { numberRules } from './redact-numbers.js';
import { AUTH_SCHEMES, KEY_SHAPES, LINE_HEADERS } from './redact-patterns.js';
import { mayStartPhrase, phraseRules } from './redact-phrases.js';

const MAX_QUOTED = 4096; // a quoted value with no end this far is masked to here

// The scan's own copies of redact-chars.js's ASCII classes: it calls them at every character, and
// V8 runs it 1.5 times slower through imported ones (measured on 1 MiB of text).
const isDigit = (c) => c >= '0' && c <= '9';
const isUpper = (c) => c >= 'A' && c <= 'Z';
const isLower = (c) => c >= 'a' && c <= 'z';
const isAlpha = (c) => isUpper(c) || isLower(c);
const isAlnum = (c) => isAlpha(c) || isDigit(c);
const isTokenChar = (c) => isAlnum(c) || c === '_' || c === '-';
const isNameChar = (c) => isTokenChar(c) || c === '.' || c === '[' || c === ']';
const isBlank = (c) => c === ' ' || c === '\t';

const KEY_SHAPE_STARTS = new Set(KEY_SHAPES.map((shape) => shape.prefix[0]));
// A scheme's first letter in either ASCII case: a quick "no" for most words.
const AUTH_SCHEME_STARTS = new Set(AUTH_SCHEMES.flatMap((s) => [s[0], s[0].toUpperCase()]));

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
    if (!AUTH_SCHEME_STARTS.has(s[i])) return 0;
    for (const scheme of AUTH_SCHEMES) {
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
      const header = LINE_HEADERS.includes(lower) || lower.includes('-');
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
      // "Token eyJ….eyJ….sig": the JWT whole, dots and all, not its first segment alone (which the
      // run below would stop at, leaving the claims and the signature to the agent).
      const jwt = this.matchJwt(k);
      if (jwt > 0) return [k, k + jwt];
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

// The number and phrase rules live in their own modules, as in the C.
Object.assign(Scan.prototype, numberRules, phraseRules);

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
