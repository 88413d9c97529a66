// SPDX-License-Identifier: GPL-3.0-or-later
// The URL floor (DESIGN §8), the extension's half of src/core/policy/chp-url-floor.c: which pages an agent
// may never see (blind), may read but not act in (hands-only), or may use within its grant (ok).
// Pure: no chrome.* and no I/O, so Node tests run the same rows as tests/test-url-floor.c.
//
// The C side reads URLs with GLib's GUri (strict, as GLib 2.74 parses with G_URI_FLAGS_NONE) and
// hosts with GLib's IDNA functions; this file repeats those steps instead of using WHATWG `URL`,
// because a floor that parses differently from the app's is two floors. Like the C, it fails
// closed: anything it cannot read the way the C does is blind ("malformed").
//
// Rules, strongest first (the first that matches gives the reason) — the same table as the C:
//   blind       malformed, browser_page, not_web, chaperone, extension_store, password_manager,
//               sign_in, bank, person_blind
//   hands-only  account_settings, person_hands_only
//   ok          ok
// A page with a visible password field is blind ("sign_in"): pageLevel().

import { BANK_WORDS, BROWSER_SCHEMES, BUILTIN_RULES, CONFUSABLES } from './floor-rules.js';

/** The levels, weakest first: a higher index always wins. */
export const FLOOR_LEVELS = Object.freeze(['ok', 'hands-only', 'blind']);

/** URLs longer than this many UTF-8 bytes are refused whole ("malformed"), as CHP_URL_FLOOR_MAX_URL. */
export const MAX_URL = 65536;

const MAX_PATTERN = 1024;

// The built-in tables come from src/core/policy/floor-rules.json, which chp-url-floor.c is built from too
// (floor-rules.js is made from it by build-aux/gen-floor-rules.py): one list for both floors.
const BROWSER_SCHEMES_SET = new Set(BROWSER_SCHEMES);
const CONFUSABLES_MAP = new Map(CONFUSABLES);

// ---- small helpers ---------------------------------------------------------------------------

const isDigit = (c) => c >= '0' && c <= '9';
const isAlpha = (c) => (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
const isXDigit = (c) => isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
const asciiLower = (s) => s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** UTF-8 length of a well-formed string, stopping early once it passes `limit`. */
function utf8Length(s, limit = Infinity) {
  let n = 0;
  for (let i = 0; i < s.length && n <= limit; i++) {
    const c = s.charCodeAt(i);
    n += c < 0x80 ? 1 : c < 0x800 ? 2 : c >= 0xD800 && c <= 0xDFFF ? 2 : 3;
  }
  return n;
}

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
function parseIpv6(s) {
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
function formatIpv6(w) {
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

// WHATWG's IPv4 number parser: "0x7f", "0177" and "127" are all 127.
function parseIpv4Part(s) {
  if (s === '') return null;
  let base = 10;
  if (s[0] === '0' && (s[1] === 'x' || s[1] === 'X')) {
    base = 16;
    s = s.slice(2);
  } else if (s[0] === '0' && s.length > 1) {
    base = 8;
    s = s.slice(1);
  }
  let v = 0;
  for (const c of s) {
    const d = isXDigit(c) ? parseInt(c, 16) : -1;
    if (d < 0 || d >= base) return null;
    v = v * base + d;
    if (v > 0xFFFFFFFF) return null;
  }
  return v;
}

function endsInANumber(host) {
  const last = host.slice(host.lastIndexOf('.') + 1);
  if (last === '') return false;
  if (last[0] === '0' && (last[1] === 'x' || last[1] === 'X')) return /^[0-9a-fA-F]*$/.test(last.slice(2));
  return /^[0-9]+$/.test(last);
}

function ipv4Canonical(host) {
  const parts = host.split('.');
  if (parts.length > 4) return null;
  let v = 0;
  for (let i = 0; i < parts.length; i++) {
    const part = parseIpv4Part(parts[i]);
    if (part === null) return null;
    if (i + 1 < parts.length) {
      if (part > 255) return null;
      v = v * 256 + part;
    } else {
      const shift = 8 * (4 - i);
      if (shift < 32 && part >= 2 ** shift) return null;
      v = v * 2 ** shift + part;
    }
  }
  v %= 2 ** 32;
  return `${Math.floor(v / 2 ** 24) & 255}.${Math.floor(v / 2 ** 16) & 255}.${Math.floor(v / 256) & 255}.${v & 255}`;
}

// ---- IDNA, as GLib's ghostutils.c does it (IDNA 2003 nameprep + punycode) --------------------

const IDNA_JUNK = /[\u00AD\u1806\u200B\u2060\uFEFF\u034F\u180B-\u180D\u200C\u200D\uFE00-\uFE0F]/gu;
const IDNA_PROHIBITED =
  /[\p{Cc}\p{Cf}\p{Cn}\p{Co}\p{Cs}\p{Zl}\p{Zp}\p{Zs}\uFFFC\uFFFD\u2FF0-\u2FFB\u0340\u0341]/u;
const IDNA_DOTS = /[.\u3002\uFF0E\uFF61]/;
const UPPER = /\p{Lu}/u;
const NON_ASCII = /[^\x00-\x7F]/;
const MAXU = 0xFFFFFFFF;

function nameprep(s) {
  s = s.replace(IDNA_JUNK, '');
  if (UPPER.test(s)) s = s.toLowerCase();
  if (!NON_ASCII.test(s)) return { name: s, unicode: false };
  s = s.normalize('NFKC');
  if (UPPER.test(s)) s = s.toLowerCase();
  if (IDNA_PROHIBITED.test(s)) return null;
  return { name: s, unicode: true };
}

function adapt(delta, numPoints, firstTime) {
  delta = firstTime ? Math.floor(delta / 700) : Math.floor(delta / 2);
  delta += Math.floor(delta / numPoints);
  let k = 0;
  while (delta > Math.floor((35 * 26) / 2)) {
    delta = Math.floor(delta / 35);
    k += 36;
  }
  return k + Math.floor((36 * delta) / (delta + 38));
}

const encodeDigit = (d) => String.fromCharCode(d < 26 ? d + 97 : d - 26 + 48);

function punycodeEncode(label) {
  const input = Array.from(label, (c) => c.codePointAt(0));
  let out = '';
  let basic = 0;
  for (const c of input) {
    if (c < 0x80) {
      out += asciiLower(String.fromCharCode(c));
      basic++;
    }
  }
  if (basic > 0) out += '-';
  let handled = basic;
  let delta = 0;
  let bias = 72;
  let n = 0x80;
  while (handled < input.length) {
    let m = MAXU;
    for (const c of input) if (c >= n && c < m) m = c;
    if (m - n > Math.floor((MAXU - delta) / (handled + 1))) return null;
    delta += (m - n) * (handled + 1);
    n = m;
    for (const c of input) {
      if (c < n) {
        delta++;
        if (delta > MAXU) return null;
      } else if (c === n) {
        let q = delta;
        for (let k = 36; ; k += 36) {
          const t = k <= bias ? 1 : k >= bias + 26 ? 26 : k - bias;
          if (q < t) break;
          out += encodeDigit(t + ((q - t) % (36 - t)));
          q = Math.floor((q - t) / (36 - t));
        }
        out += encodeDigit(q);
        bias = adapt(delta, handled + 1, handled === basic);
        delta = 0;
        handled++;
      }
    }
    delta++;
    n++;
  }
  return out;
}

function decodeDigit(c) {
  if (c >= 'A' && c <= 'Z') return c.charCodeAt(0) - 65;
  if (c >= 'a' && c <= 'z') return c.charCodeAt(0) - 97;
  if (c >= '0' && c <= '9') return c.charCodeAt(0) - 48 + 26;
  return MAXU;
}

function punycodeDecode(input) {
  let n = 0x80;
  let i = 0;
  let bias = 72;
  const out = [];
  let pos = 0;
  const split = input.lastIndexOf('-');
  if (split > 0) {
    for (let k = 0; k < split; k++) out.push(input.charCodeAt(k));
    pos = split + 1;
  }
  while (pos < input.length) {
    const oldi = i;
    let w = 1;
    for (let k = 36; ; k += 36) {
      if (pos >= input.length) return null;
      const digit = decodeDigit(input[pos++]);
      if (digit >= 36) return null;
      if (digit > Math.floor((MAXU - i) / w)) return null;
      i += digit * w;
      const t = k <= bias ? 1 : k >= bias + 26 ? 26 : k - bias;
      if (digit < t) break;
      if (w > Math.floor(MAXU / (36 - t))) return null;
      w *= 36 - t;
    }
    bias = adapt(i - oldi, out.length + 1, oldi === 0);
    if (Math.floor(i / (out.length + 1)) > MAXU - n) return null;
    n += Math.floor(i / (out.length + 1));
    i %= out.length + 1;
    out.splice(i, 0, n);
    i++;
  }
  if (out.some((c) => c > 0x10FFFF)) return null;
  return String.fromCodePoint(...out);
}

// g_hostname_to_ascii: nameprep, then each label with non-ASCII as "xn--" + punycode. The trailing
// dot is dropped on this path, as GLib does. GLib refuses names over 4 * 255 bytes up front.
function hostnameToAscii(hostname) {
  if (utf8Length(hostname, 1020) > 1020) return null;
  const prepped = nameprep(hostname);
  if (!prepped) return null;
  if (!prepped.unicode) return prepped.name;
  const name = prepped.name;
  let out = '';
  let pos = 0;
  do {
    let end = pos;
    while (end < name.length && !IDNA_DOTS.test(name[end])) end++;
    const label = name.slice(pos, end);
    const before = out.length;
    if (NON_ASCII.test(label)) {
      if (label.startsWith('xn--')) return null;
      const encoded = punycodeEncode(label);
      if (encoded === null) return null;
      out += `xn--${encoded}`;
    } else {
      out += label;
    }
    if (out.length - before > 63) return null;
    pos = end;
    if (pos < name.length) pos++;
    if (pos < name.length) out += '.';
  } while (pos < name.length);
  return out;
}

// g_hostname_to_unicode for an ASCII host: "xn--" labels decoded, the others lowercased.
function hostnameToUnicode(ascii) {
  let out = '';
  let pos = 0;
  do {
    let end = ascii.indexOf('.', pos);
    if (end === -1) end = ascii.length;
    const label = ascii.slice(pos, end);
    if (label.length >= 4 && asciiLower(label.slice(0, 4)) === 'xn--') {
      const decoded = punycodeDecode(label.slice(4));
      if (decoded === null) return null;
      out += decoded;
    } else {
      out += asciiLower(label);
    }
    pos = end;
    if (pos < ascii.length) pos++;
    if (pos < ascii.length) out += '.';
  } while (pos < ascii.length);
  return out;
}

// ---- hosts -------------------------------------------------------------------------------------

function labelsAreValid(host) {
  if (host.length > 253) return false;
  return host.split('.').every((label) => label.length > 0 && label.length <= 63);
}

const FORBIDDEN_HOST_CHARS = '#%/:<>?@[\\]^|*"\'`{}';

// normalize_host: the host as a browser would use it — ASCII, lowercase, no trailing dot, numeric
// IPv4 forms as a dotted quad, IPv6 canonical — or null when a browser would not load it.
function normalizeHost(raw) {
  if (typeof raw !== 'string' || raw === '') return null;
  if (raw.includes(':')) {
    if (raw.includes('%')) return null;
    const words = parseIpv6(raw);
    if (!words) return null;
    return { host: formatIpv6(words), isIp: true, words };
  }
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c <= 0x20 || c === 0x7f || FORBIDDEN_HOST_CHARS.includes(raw[i])) return null;
  }
  const trimmed = raw.endsWith('.') ? raw.slice(0, -1) : raw;
  if (trimmed === '') return null;
  let ascii = hostnameToAscii(trimmed);
  if (ascii === null) return null;
  ascii = asciiLower(ascii);
  if (ascii.endsWith('.')) ascii = ascii.slice(0, -1);
  if (!labelsAreValid(ascii)) return null;
  if (endsInANumber(ascii)) {
    const quad = ipv4Canonical(ascii);
    return quad === null ? null : { host: quad, isIp: true };
  }
  return { host: ascii, isIp: false };
}

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
function uriParse(s) {
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
function peekScheme(url) {
  if (!isAlpha(url[0] ?? '')) return null;
  let i = 1;
  while (i < url.length && (isAlpha(url[i]) || isDigit(url[i]) || '.+-'.includes(url[i]))) i++;
  return url[i] === ':' ? asciiLower(url.slice(0, i)) : null;
}

function hostMatches(host, domain, subdomainsOnly) {
  if (!subdomainsOnly && host.length === domain.length) return host === domain;
  return host.length > domain.length && host.endsWith(domain) &&
    host[host.length - domain.length - 1] === '.';
}

function pathMatches(path, prefix) {
  return asciiLower(path.slice(0, prefix.length)) === prefix &&
    (path.length === prefix.length || path[prefix.length] === '/');
}

// Lowercased (ASCII), runs of '/' collapsed, always starting with '/'.
function normalizePath(path) {
  let out = asciiLower(path).replace(/\/{2,}/g, '/');
  if (out[0] !== '/') out = `/${out}`;
  return out;
}

function hostSkeleton(unicode) {
  let out = '';
  for (const ch of unicode.normalize('NFKD')) {
    if (/\p{M}/u.test(ch)) continue;
    let c = ch.toLowerCase().codePointAt(0);
    if (CONFUSABLES_MAP.has(c)) out += CONFUSABLES_MAP.get(c);
    else out += String.fromCodePoint(c);
  }
  return out;
}

const containsBankWord = (s) => BANK_WORDS.some((w) => s.includes(w));

function hostIsBankish(ascii) {
  if (containsBankWord(ascii)) return true;
  const unicode = hostnameToUnicode(ascii);
  return unicode !== null && containsBankWord(hostSkeleton(unicode));
}

function hostIsLoopback(h) {
  if (!h.isIp) return h.host === 'localhost' || h.host.endsWith('.localhost');
  if (h.host.startsWith('127.') || h.host === '0.0.0.0') return true;
  if (h.words) {
    const w = h.words;
    const zeros5 = w.slice(0, 5).every((x) => x === 0);
    if (zeros5 && w[5] === 0 && w[6] === 0 && (w[7] === 1 || w[7] === 0)) return true;
    return zeros5 && w[5] === 0xffff && ((w[6] >> 8) === 127 || (w[6] === 0 && w[7] === 0));
  }
  return false;
}

// ---- the person's entries ----------------------------------------------------------------------

/**
 * A person's floor entry as the floor stores it, exactly as chp_url_floor_normalize_pattern:
 * `example.com` (the host and its subdomains), `*.corp.example` (subdomains only), an IP address
 * (exactly) or a whole URL (its host). Returns null when it is not a host pattern.
 */
export function normalizePattern(pattern) {
  if (typeof pattern !== 'string' || LONE_SURROGATE.test(pattern) || pattern.includes('\0')) return null;
  if (utf8Length(pattern, MAX_PATTERN) > MAX_PATTERN) return null;
  // g_strstrip: ASCII space, \t, \n, \f, \r (not \v).
  const text = pattern.replace(/^[ \t\n\f\r]+|[ \t\n\f\r]+$/g, '');
  if (text.includes('://')) {
    const uri = uriParse(text);
    if (!uri || uri.host === null) return null;
    return normalizeHost(uri.host)?.host ?? null;
  }
  const subdomainsOnly = text.startsWith('*.');
  const normal = normalizeHost(subdomainsOnly ? text.slice(2) : text);
  if (!normal || (normal.isIp && subdomainsOnly)) return null;
  return subdomainsOnly ? `*.${normal.host}` : normal.host;
}

/**
 * Validates engine.info's `floor: { blind: [...], handsOnly: [...] }`: entries that are not host
 * patterns are left out and counted. Returns `{ blind, handsOnly, refused }` with normalised
 * patterns; anything that is not an object or a list reads as no entries.
 */
export function parseFloorRules(infoFloor) {
  let refused = 0;
  const fill = (list) => {
    if (!Array.isArray(list)) return [];
    const out = [];
    for (const entry of list) {
      const normal = normalizePattern(entry);
      if (normal === null) refused++;
      else if (!out.includes(normal)) out.push(normal);
    }
    return out;
  };
  const src = infoFloor !== null && typeof infoFloor === 'object' ? infoFloor : {};
  const blind = fill(src.blind);
  const handsOnly = fill(src.handsOnly);
  return { blind, handsOnly, refused };
}

function personMatches(patterns, host) {
  for (const raw of patterns) {
    const pattern = normalizePattern(raw);
    if (pattern === null) continue;
    if (pattern.startsWith('*.')) {
      if (hostMatches(host, pattern.slice(2), true)) return true;
    } else if (hostMatches(host, pattern, false)) {
      return true;
    }
  }
  return false;
}

// ---- checking ----------------------------------------------------------------------------------

const blindBecause = (reason) => ({ level: 'blind', reason });

function checkUrl(url, rules, depth) {
  if (url === '' || url.length > MAX_URL || LONE_SURROGATE.test(url) ||
      utf8Length(url, MAX_URL) > MAX_URL) {
    return blindBecause('malformed');
  }
  // Browsers drop tabs and newlines inside URLs and read '\' as '/'; GUri does neither, so such a
  // URL could be classified by a host the browser never loads. Refuse it rather than guess.
  for (let i = 0; i < url.length; i++) {
    const c = url.charCodeAt(i);
    if (c <= 0x20 || c === 0x7f || c === 0x5c) return blindBecause('malformed');
  }

  const scheme = peekScheme(url);
  if (scheme === null) return blindBecause('malformed');
  if (scheme === 'blob' || scheme === 'filesystem') {
    if (depth > 0) return blindBecause('malformed');
    return checkUrl(url.slice(scheme.length + 1), rules, depth + 1);
  }
  if (scheme !== 'http' && scheme !== 'https') {
    return blindBecause(BROWSER_SCHEMES_SET.has(scheme) ? 'browser_page' : 'not_web');
  }

  const uri = uriParse(url);
  if (!uri) return blindBecause('malformed');
  // The host alone decides: userinfo ("https://bank.com@evil.test") is not where a browser goes.
  const h = normalizeHost(uri.host);
  if (!h) return blindBecause('malformed');
  const host = h.host;

  const port = uri.port >= 0 ? uri.port : scheme === 'https' ? 443 : 80;
  if (rules.bridgePort !== 0 && port === rules.bridgePort && hostIsLoopback(h)) {
    return blindBecause('chaperone');
  }

  const path = normalizePath(uri.path);
  const ruleMatches = (rule) => hostMatches(host, rule.host, false) &&
    (rule.path === null || pathMatches(path, rule.path));

  for (const rule of BUILTIN_RULES) {
    if (rule.level === 'blind' && ruleMatches(rule)) return blindBecause(rule.reason);
  }
  if (!h.isIp && hostIsBankish(host)) return blindBecause('bank');
  if (personMatches(rules.blind, host)) return blindBecause('person_blind');
  for (const rule of BUILTIN_RULES) {
    if (rule.level === 'hands-only' && ruleMatches(rule)) return { level: 'hands-only', reason: rule.reason };
  }
  if (personMatches(rules.handsOnly, host)) return { level: 'hands-only', reason: 'person_hands_only' };
  return { level: 'ok', reason: 'ok' };
}

function readRules(options) {
  const o = options !== null && typeof options === 'object' ? options : {};
  const port = o.bridgePort;
  return {
    blind: Array.isArray(o.blind) ? o.blind : [],
    handsOnly: Array.isArray(o.handsOnly) ? o.handsOnly : [],
    bridgePort: Number.isInteger(port) && port > 0 && port <= 65535 ? port : 0,
  };
}

/**
 * The floor level of a URL as the browser reports it or as an agent asks for it.
 * @param url      the URL; anything that is not a string is blind ("malformed")
 * @param options  `{ blind, handsOnly }`: the person's entries (as normalizePattern accepts; bad
 *                 ones are ignored), `bridgePort`: the bridge's port (0: none)
 * @returns `{ level: 'ok'|'hands-only'|'blind', reason }` — reason is a short word for the error
 *          detail and the audit (the C's words: 'bank', 'person_blind', 'ok', …), never the URL
 */
export function floorLevel(url, options = {}) {
  if (typeof url !== 'string') return blindBecause('malformed');
  return checkUrl(url, readRules(options), 0);
}

/**
 * floorLevel() for a page whose content is known: a page that shows a visible password field is
 * a sign-in page and blind ("sign_in") whatever its URL; a page already blind keeps its reason.
 */
export function pageLevel(url, visiblePassword, rules = {}) {
  const result = floorLevel(url, rules);
  if (result.level !== 'blind' && visiblePassword) return blindBecause('sign_in');
  return result;
}
