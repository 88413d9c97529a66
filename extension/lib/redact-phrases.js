// SPDX-License-Identifier: GPL-3.0-or-later
// Secrets a page announces in words (chp-redact-phrases.c): "Your verification code is 482913",
// "API key is …", "Votre mot de passe est …", "验证码：482913", "482913 is your code" — found after
// (or before) a phrase of PHRASES, from src/core/policy/redact-patterns.json.

import { isAlnum, isAlpha, isDigit, isNameChar, isTokenChar, lowerChar } from './redact-chars.js';
import { markerLen } from './redact-marker.js';
import { CODE_ENDS, CODE_LEADS, CONNECTOR_WORDS, PHRASES as PHRASE_LIST } from './redact-patterns.js';

const PHRASES = PHRASE_LIST.map((p) => ({
  ...p,
  // One ASCII word ("pin", "token"): too common a word to be trusted without "is" or ':'.
  single: !p.text.includes(' ') && p.text.charCodeAt(0) < 0x80,
}));

// What may start a lead of CODE_LEADS ("is your"), in either ASCII case: a quick "no" for most
// words.
const LEAD_STARTS = new Set(CODE_LEADS.flatMap((lead) => [lead[0], lead[0].toUpperCase()]));

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
export function mayStartPhrase(s, i) {
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

/** The scan's phrase rules, methods of redact-text.js's Scan (`this` is the scan). */
export const phraseRules = {
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
  },

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
  },

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
  },

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
  },

  // "482913 is your verification code", "G-482913 est votre code": a code at s[i], then a lead of
  // CODE_LEADS ("is your") and, within four more words, a word of CODE_ENDS ("code", "passcode",
  // "pin" or "otp"). Its end, or 0.
  // d: the end of the digits at s[i] (i itself when there are none).
  codeBeforePhrase(i, d) {
    const { s, n } = this;
    // Out at once unless "is", "est" (or a second group of digits) follows the word.
    let w = d;
    while (w < n && (isAlnum(s[w]) || s[w] === '-')) w++;
    const next = s[this.skipBlanks(w, 4)] ?? '';
    if (!isDigit(next) && !LEAD_STARTS.has(next)) return 0;
    const e = this.codeEnd(i);
    if (e === 0) return 0;
    let k = 0;
    for (const lead of CODE_LEADS) {
      k = this.matchWords(this.skipBlanks(e, 4), lead);
      if (k > 0) break;
    }
    for (let w = 0; k > 0 && w < 5; w++) {
      const word = this.skipBlanks(k, 4);
      if (word === k) return 0;
      if (CODE_ENDS.some((end) => this.matchWords(word, end) > 0)) return e;
      k = this.run(word, isTokenChar);
      if (k === word || k - word > 32) return 0;
    }
    return 0;
  },

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
  },
};
