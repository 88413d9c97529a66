// SPDX-License-Identifier: GPL-3.0-or-later
// The `[redacted <name> len=N]` marker every secret becomes (chp-redact-marker.c): written, and
// recognised, so that an earlier pass's markers pass through unchanged and redacting twice
// changes nothing more.

import { isAlnum, isDigit } from './redact-chars.js';

export const MARKER_PREFIX = '[redacted ';
const MAX_MARKER_NAME = 40;

const isMarkerNameChar = (c) => isAlnum(c) || c === '_' || c === '.' || c === '-';

// The length of a well-formed marker at s[p], or 0.
export function markerLen(s, p) {
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

/** The marker for `secret`, found under `name`. */
export function marker(name, secret) {
  // The name is page text too: only characters that cannot end the marker or start markup.
  let clean = '';
  for (let i = 0; i < name.length && clean.length < MAX_MARKER_NAME; i++) {
    if (isMarkerNameChar(name[i])) clean += name[i];
    else if (clean.length > 0 && !clean.endsWith('_')) clean += '_';
  }
  clean = clean.replace(/_+$/, '');
  return `${MARKER_PREFIX}${clean || 'secret'} len=${countChars(secret)}]`;
}
