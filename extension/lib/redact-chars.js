// SPDX-License-Identifier: GPL-3.0-or-later
// How both redactions read characters: ASCII classes as GLib's g_ascii_* see them, and lengths in
// UTF-8 bytes, which is how the C counts its bounds (MAX_NAME, MAX_QUOTED). Shared by the parts of
// the extension's redaction (redact.js); the text scan keeps its own copies of the ASCII classes
// (redact-text.js says why).

export const isDigit = (c) => c >= '0' && c <= '9';
export const isUpper = (c) => c >= 'A' && c <= 'Z';
export const isLower = (c) => c >= 'a' && c <= 'z';
export const isAlpha = (c) => isUpper(c) || isLower(c);
export const isAlnum = (c) => isAlpha(c) || isDigit(c);
const NON_ASCII = /[^\x00-\x7F]/;
// ASCII-only lowercasing (g_ascii_strdown): a Kelvin sign must not become a 'k'.
export const asciiLower = (s) => (NON_ASCII.test(s) ? s.replace(/[A-Z]+/g, (m) => m.toLowerCase()) : s.toLowerCase());

export const isHighSurrogate = (c) => c >= 0xD800 && c <= 0xDBFF;
export const isLowSurrogate = (c) => c >= 0xDC00 && c <= 0xDFFF;

/** UTF-8 bytes of one UTF-16 code unit (a surrogate pair counts 2 + 2). */
export const unitBytes = (s, i) => {
  const c = s.charCodeAt(i);
  return c < 0x80 ? 1 : c < 0x800 ? 2 : c >= 0xD800 && c <= 0xDFFF ? 2 : 3;
};

export function utf8Length(s, limit = Infinity) {
  let n = 0;
  for (let i = 0; i < s.length && n <= limit; i++) n += unitBytes(s, i);
  return n;
}

export const isTokenChar = (c) => isAlnum(c) || c === '_' || c === '-';
export const isNameChar = (c) => isTokenChar(c) || c === '.' || c === '[' || c === ']';
// g_ascii_isspace: not \v.
export const isSpace = (c) => c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f';
export const isValueDelim = (c) => isSpace(c) || '&;,"\'<>`)]}#'.includes(c);

export const lowerChar = (c) => (isUpper(c) ? String.fromCharCode(c.charCodeAt(0) + 32) : c);
