// SPDX-License-Identifier: GPL-3.0-or-later
// Secret names (chp-redact-names.c): which parameter, header, cookie, field and JSON member names
// hold a secret, for the text scan and the JSON walk alike. The word lists are those of
// src/core/policy/redact-patterns.json (redact-patterns.js); the rules that read them are the C's.

import { isAlnum, isDigit, isLower, isUpper, utf8Length } from './redact-chars.js';
import {
  META_WORDS as META_LIST, NOT_SECRET_WORDS as NOT_SECRET_LIST, SECRET_PAIRS, SECRET_SUBSTRINGS,
  SECRET_WORDS, SECRET_WORD_SUFFIXES as SUFFIX_LIST,
} from './redact-patterns.js';

export const MAX_NAME = 128; // longer "names" are not names
const MAX_TOKENS = 16;

const SECRET_WORD_SUFFIXES = new Set(SUFFIX_LIST);
const NOT_SECRET_WORDS = new Set(NOT_SECRET_LIST);
const META_WORDS = new Set(META_LIST);

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
