// SPDX-License-Identifier: GPL-3.0-or-later
// Numbers the text scan masks without a name next to them, because they check out as what they are
// (chp-redact-numbers.c): a payment card (network prefix, length, Luhn), a US social security
// number, a French NIR or a Chinese resident id with its check digit. Numbers in prose (an order,
// a date, a phone number, a price) fail these checks and stay.

import { isDigit, isTokenChar } from './redact-chars.js';

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

/** The scan's number rule, a method of redact-text.js's Scan (`this` is the scan). */
export const numberRules = {
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
  },
};
