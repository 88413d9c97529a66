// SPDX-License-Identifier: GPL-3.0-or-later
// The URL floor (DESIGN §8), the extension's half of src/core/policy/chp-url-floor.c: which pages an agent
// may never see (blind), may read but not act in (hands-only), or may use within its grant (ok).
// Pure: no chrome.* and no I/O, so Node tests run the same rows as tests/test-url-floor.c.
//
// The C side reads URLs with GLib's GUri (strict, as GLib 2.74 parses with G_URI_FLAGS_NONE) and
// hosts with GLib's IDNA functions; floor-uri.js and floor-idna.js repeat those steps instead of
// using WHATWG `URL`, because a floor that parses differently from the app's is two floors. Like
// the C, it fails closed: anything it cannot read the way the C does is blind ("malformed").
//
// Rules, strongest first (the first that matches gives the reason) — the same table as the C:
//   blind       malformed, browser_page, not_web, chaperone, extension_store, password_manager,
//               sign_in, bank, person_blind
//   hands-only  account_settings, person_hands_only
//   ok          ok
// A page with a visible password field is blind ("sign_in"): pageLevel().

import { asciiLower, hostnameToAscii, hostnameToUnicode, utf8Length } from './floor-idna.js';
import { BANK_WORDS, BROWSER_SCHEMES, BUILTIN_RULES, CONFUSABLES } from './floor-rules.js';
import { formatIpv6, isXDigit, parseIpv6, peekScheme, uriParse } from './floor-uri.js';

/** The levels, weakest first: a higher index always wins. */
export const FLOOR_LEVELS = Object.freeze(['ok', 'hands-only', 'blind']);

/** URLs longer than this many UTF-8 bytes are refused whole ("malformed"), as CHP_URL_FLOOR_MAX_URL. */
export const MAX_URL = 65536;

const MAX_PATTERN = 1024;

// The built-in tables come from src/core/policy/floor-rules.json, which chp-url-floor.c is built from too
// (floor-rules.js is made from it by build-aux/gen-floor-rules.py): one list for both floors.
const BROWSER_SCHEMES_SET = new Set(BROWSER_SCHEMES);
const CONFUSABLES_MAP = new Map(CONFUSABLES);

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

// ---- hosts --------------------------------------------------------------------------------------

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
