// SPDX-License-Identifier: GPL-3.0-or-later
// GLib's URI reader (GUri, strict, as GLib 2.74 parses with G_URI_FLAGS_NONE) and the IP address
// readers under it (glibc's inet_pton and inet_ntop, GLib's g_hostname_is_ip_address), repeated
// for the extension's URL floor (floor.js) instead of WHATWG `URL`: a floor that parses
// differently from the app's chp-url-floor.c is two floors.

import { NON_ASCII, asciiLower, hostnameToAscii } from './floor-idna.js';

const isDigit = (c) => c >= '0' && c <= '9';
const isAlpha = (c) => (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
export const isXDigit = (c) => isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');

const utf8Decoder = new TextDecoder('utf-8', { fatal: true });
const utf8Encoder = new TextEncoder();

// GUri's uri_decoder without G_URI_FLAGS_PARSE_RELAXED: every '%' must start "%XX", and what it
// decodes to must be UTF-8 without a NUL. Returns null where GUri fails.
function percentDecode(s) {
  if (s.indexOf('%') === -1) return s.indexOf('\0') === -1 ? s : null;
  const bytes = [];
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '%') {
      if (i + 2 >= s.length || !isXDigit(s[i + 1]) || !isXDigit(s[i + 2])) return null;
      bytes.push(parseInt(s.slice(i + 1, i + 3), 16));
      i += 2;
    } else if (c.charCodeAt(0) < 0x80) {
      bytes.push(c.charCodeAt(0));
    } else {
      // Copy a whole character (a surrogate pair stays together).
      let j = i + 1;
      while (j < s.length && s.charCodeAt(j) >= 0x80) j++;
      for (const b of utf8Encoder.encode(s.slice(i, j))) bytes.push(b);
      i = j - 1;
    }
  }
  let out;
  try {
    out = utf8Decoder.decode(new Uint8Array(bytes));
  } catch {
    return null;
  }
  return out.indexOf('\0') === -1 ? out : null;
}

// ---- IP addresses ----------------------------------------------------------------------------

// Strict dotted quad: no leading zeros, each part <= 255 (glibc inet_pton4 and GLib's check).
function parseIpv4Strict(s) {
  const parts = s.split('.');
  if (parts.length !== 4) return null;
  const out = [];
  for (const p of parts) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(p)) return null;
    const v = Number(p);
    if (v > 255) return null;
    out.push(v);
  }
  return out;
}

// IPv6 as glibc's inet_pton reads it: 8 groups of 1-4 hex digits, one "::" standing for at least
// one zero group, and an optional dotted quad at the end. Returns 8 words or null.
export function parseIpv6(s) {
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const side = (str, allowV4) => {
    if (str === '') return [];
    const groups = str.split(':');
    const words = [];
    for (let k = 0; k < groups.length; k++) {
      const g = groups[k];
      if (allowV4 && k === groups.length - 1 && g.includes('.')) {
        const v4 = parseIpv4Strict(g);
        if (!v4) return null;
        words.push((v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3]);
      } else {
        if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
        words.push(parseInt(g, 16));
      }
    }
    return words;
  };
  if (halves.length === 1) {
    const words = side(s, true);
    return words && words.length === 8 ? words : null;
  }
  const left = side(halves[0], false);
  const right = side(halves[1], true);
  if (!left || !right || left.length + right.length > 7) return null;
  return [...left, ...new Array(8 - left.length - right.length).fill(0), ...right];
}

// glibc inet_ntop: lowercase hex, the first longest run (>= 2) of zero words as "::", and
// "::ffff:a.b.c.d" / "::a.b.c.d" for IPv4-mapped and -compatible addresses.
export function formatIpv6(w) {
  let best = { base: -1, len: 0 };
  let cur = { base: -1, len: 0 };
  for (let i = 0; i < 8; i++) {
    if (w[i] === 0) {
      if (cur.base === -1) cur = { base: i, len: 1 };
      else cur.len++;
    } else if (cur.base !== -1) {
      if (best.base === -1 || cur.len > best.len) best = cur;
      cur = { base: -1, len: 0 };
    }
  }
  if (cur.base !== -1 && (best.base === -1 || cur.len > best.len)) best = cur;
  if (best.base !== -1 && best.len < 2) best = { base: -1, len: 0 };
  let out = '';
  for (let i = 0; i < 8; i++) {
    if (best.base !== -1 && i >= best.base && i < best.base + best.len) {
      if (i === best.base) out += ':';
      continue;
    }
    if (i !== 0) out += ':';
    if (i === 6 && best.base === 0 && (best.len === 6 || (best.len === 5 && w[5] === 0xffff))) {
      out += `${w[6] >> 8}.${w[6] & 0xff}.${w[7] >> 8}.${w[7] & 0xff}`;
      return out;
    }
    out += w[i].toString(16);
  }
  if (best.base !== -1 && best.base + best.len === 8) out += ':';
  return out;
}

// GLib's g_hostname_is_ip_address: strict IPv4, or IPv6 with an optional non-empty zone.
function isIpAddress(s) {
  if (s.includes(':')) {
    const pct = s.indexOf('%');
    if (pct !== -1 && pct === s.length - 1) return false;
    return parseIpv6(pct === -1 ? s : s.slice(0, pct)) !== null;
  }
  return parseIpv4Strict(s) !== null;
}

// ---- GUri --------------------------------------------------------------------------------------

// GUri's parse_host (strict): an IP literal in brackets, a plain dotted quad as it is, anything
// else percent-decoded (an encoded IP address is refused) and converted to ASCII.
function parseHost(raw) {
  if (raw[0] === '[') {
    if (raw[raw.length - 1] !== ']') return { ok: false };
    const addr = raw.slice(1, -1);
    const pct = addr.indexOf('%');
    const bare = pct === -1 ? addr : addr.slice(0, pct);
    if (!isIpAddress(bare) || !bare.includes(':')) return { ok: false };
    // A zone id survives GUri but no floor check accepts a host with '%': refuse it here.
    if (pct !== -1) return { ok: false };
    return { ok: true, host: addr };
  }
  if (isDigit(raw[0] ?? '') && isIpAddress(raw)) return { ok: true, host: raw };
  const decoded = percentDecode(raw);
  if (decoded === null || isIpAddress(decoded)) return { ok: false };
  if (NON_ASCII.test(decoded)) return { ok: true, host: hostnameToAscii(decoded) };
  return { ok: true, host: decoded };
}

// RFC 3986 5.2.4, as GLib's remove_dot_segments; `i` walks the input once, so it is linear.
function removeDotSegments(path) {
  const out = [];
  let i = 0;
  let rest = null; // a replaced "/" ("/." or "/.." at the end) still to be read
  const at = (k, str) => path.startsWith(str, k);
  while (rest !== null || i < path.length) {
    if (rest !== null) {
      out.push(rest);
      rest = null;
    } else if (at(i, '../')) i += 3;
    else if (at(i, './')) i += 2;
    else if (at(i, '/./')) i += 2;
    else if (i + 2 === path.length && at(i, '/.')) {
      i = path.length;
      rest = '/';
    } else if (at(i, '/../')) {
      i += 3;
      out.pop();
    } else if (i + 3 === path.length && at(i, '/..')) {
      i = path.length;
      out.pop();
      rest = '/';
    } else if ((i + 1 === path.length && at(i, '.')) || (i + 2 === path.length && at(i, '..'))) {
      i = path.length;
    } else {
      let end = path.indexOf('/', i + 1);
      if (end === -1) end = path.length;
      out.push(path.slice(i, end));
      i = end;
    }
  }
  return out.join('');
}

// g_uri_parse (G_URI_FLAGS_NONE, GLib 2.74): { scheme, host, port, path } with every component
// percent-decoded, or null where GUri fails. host is null when there is no authority.
export function uriParse(s) {
  let p = 0;
  while (p < s.length && (isAlpha(s[p]) || (p > 0 && (isDigit(s[p]) || '.+-'.includes(s[p]))))) p++;
  if (!(p > 0 && s[p] === ':')) return null; // no scheme: "not absolute"
  const scheme = asciiLower(s.slice(0, p));
  p++;
  let host = null;
  let port = -1;
  if (s.startsWith('//', p)) {
    p += 2;
    let pathStart = p;
    while (pathStart < s.length && !'/?#'.includes(s[pathStart])) pathStart++;
    const at = s.indexOf('@', p);
    if (at !== -1 && at < pathStart) {
      if (percentDecode(s.slice(p, at)) === null) return null;
      p = at + 1;
    }
    let colon = -1;
    if (s[p] === '[') {
      const bracket = s.indexOf(']', p);
      if (bracket !== -1 && bracket < pathStart && s[bracket + 1] === ':') colon = bracket + 1;
    } else {
      const c = s.indexOf(':', p);
      if (c !== -1 && c < pathStart) colon = c;
    }
    const parsed = parseHost(s.slice(p, colon !== -1 ? colon : pathStart));
    if (!parsed.ok) return null;
    host = parsed.host;
    if (colon !== -1 && colon !== pathStart - 1) {
      const digits = s.slice(colon + 1, pathStart);
      if (!/^[0-9]+$/.test(digits) || Number(digits) > 65535) return null;
      port = Number(digits);
    }
    p = pathStart;
  }
  let end = s.indexOf('#', p);
  if (end !== -1) {
    if (percentDecode(s.slice(end + 1)) === null) return null;
  } else {
    end = s.length;
  }
  const question = s.indexOf('?', p);
  if (question !== -1 && question < end) {
    if (percentDecode(s.slice(question + 1, end)) === null) return null;
    end = question;
  }
  const path = percentDecode(s.slice(p, end));
  if (path === null) return null;
  return { scheme, host, port, path: removeDotSegments(path) };
}

// g_uri_peek_scheme: the lowercase scheme, or null.
export function peekScheme(url) {
  if (!isAlpha(url[0] ?? '')) return null;
  let i = 1;
  while (i < url.length && (isAlpha(url[i]) || isDigit(url[i]) || '.+-'.includes(url[i]))) i++;
  return url[i] === ':' ? asciiLower(url.slice(0, i)) : null;
}
