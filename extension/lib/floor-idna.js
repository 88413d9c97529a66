// SPDX-License-Identifier: GPL-3.0-or-later
// GLib's hostname functions (ghostutils.c: g_hostname_to_ascii, g_hostname_to_unicode) repeated
// for the extension's URL floor (floor.js), IDNA 2003 nameprep and punycode as GLib does them: a
// floor that reads hosts differently from the app's chp-url-floor.c is two floors.

export const NON_ASCII = /[^\x00-\x7F]/;

// ASCII-only lowercasing (g_ascii_strdown), and lengths in UTF-8 bytes as the C counts them: shared
// with floor-uri.js and floor.js.
export const asciiLower = (s) => s.replace(/[A-Z]+/g, (m) => m.toLowerCase());

/** UTF-8 length of a well-formed string, stopping early once it passes `limit`. */
export function utf8Length(s, limit = Infinity) {
  let n = 0;
  for (let i = 0; i < s.length && n <= limit; i++) {
    const c = s.charCodeAt(i);
    n += c < 0x80 ? 1 : c < 0x800 ? 2 : c >= 0xD800 && c <= 0xDFFF ? 2 : 3;
  }
  return n;
}

const IDNA_JUNK = /[\u00AD\u1806\u200B\u2060\uFEFF\u034F\u180B-\u180D\u200C\u200D\uFE00-\uFE0F]/gu;
const IDNA_PROHIBITED =
  /[\p{Cc}\p{Cf}\p{Cn}\p{Co}\p{Cs}\p{Zl}\p{Zp}\p{Zs}\uFFFC\uFFFD\u2FF0-\u2FFB\u0340\u0341]/u;
const IDNA_DOTS = /[.\u3002\uFF0E\uFF61]/;
const UPPER = /\p{Lu}/u;
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
export function hostnameToAscii(hostname) {
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
export function hostnameToUnicode(ascii) {
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
