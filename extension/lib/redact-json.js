// SPDX-License-Identifier: GPL-3.0-or-later
// The redaction of a JSON-like value (chp-redact-json.c), the last thing a result passes before it
// leaves the extension: a deep copy in which every string is redacted as text, and strings and
// numbers under secret member names (or in a {name, value} pair with a secret name) become
// markers.

import { isMarker, marker } from './redact-marker.js';
import { isSecretName } from './redact-names.js';
import { redactText } from './redact-text.js';

const MAX_JSON_DEPTH = 256;
const MAX_JSON_NODES = 1_000_000; // JS values can share children; a tree from JSON never gets here

// g_ascii_dtostr: "%.17g".
function formatDouble(v) {
  if (Number.isNaN(v)) return 'nan';
  if (!Number.isFinite(v)) return v > 0 ? 'inf' : '-inf';
  const [mantissa, expText] = v.toExponential(16).split('e');
  const exp = Number(expText);
  const trim = (t) => (t.includes('.') ? t.replace(/0+$/, '').replace(/\.$/, '') : t);
  if (exp < -4 || exp >= 17) {
    const sign = exp < 0 ? '-' : '+';
    return `${trim(mantissa)}e${sign}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  return trim(v.toFixed(16 - exp));
}

// The text a number has in the C: json-glib reads integral JSON numbers as int64.
function numberText(v) {
  if (Number.isInteger(v) && Math.abs(v) < 2 ** 63) return BigInt(v).toString();
  return formatDouble(v);
}

const PLAIN_NAME = /^[A-Za-z_-]*$/;

function defineMember(into, key, value) {
  if (key === '__proto__') {
    Object.defineProperty(into, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    into[key] = value;
  }
}

class Walk {
  constructor() {
    this.count = 0;
    this.nodes = 0;
    this.path = new Set(); // objects on the way down: a cycle is cut, not followed
  }

  // A scalar under secretName (null: not a secret name).
  /**
   * A member's name as the text redactor reads it: a map keyed by tokens or session ids
   * ({"ghp_…": {…}}) hides them as any text does. A masked name already in `into` is numbered
   * (" #2", " #3"…), so two hidden keys do not become one.
   */
  key(k, into) {
    // A short name of letters (ref, role, frameUrl) holds nothing the redactor finds: most of a
    // large snapshot's members, passed over without a scan.
    if (k.length < 16 && PLAIN_NAME.test(k)) return k;
    const r = redactText(k);
    if (r.count === 0) return k;
    this.count += r.count;
    let name = r.text;
    for (let n = 2; Object.hasOwn(into, name); n++) name = `${r.text} #${n}`;
    return name;
  }

  scalar(v, secretName) {
    if (typeof v === 'string') {
      if (secretName !== null && v !== '' && !isMarker(v)) {
        this.count++;
        return marker(secretName, v);
      }
      const r = redactText(v);
      this.count += r.count;
      return r.text;
    }
    if (typeof v === 'number' || typeof v === 'bigint') {
      if (secretName !== null) {
        this.count++;
        return marker(secretName, typeof v === 'bigint' ? v.toString() : numberText(v));
      }
      return v;
    }
    // Booleans say "filled", "credential", "session: true": never a secret.
    if (typeof v === 'boolean') return v;
    return null; // null, and what JSON has no word for (undefined, functions, symbols)
  }

  node(v, secretName, depth) {
    // Deeper than anything the frame reader lets in (or a value that shares or loops): drop it.
    if (depth > MAX_JSON_DEPTH || ++this.nodes > MAX_JSON_NODES ||
        (v !== null && typeof v === 'object' && this.path.has(v))) {
      this.count++;
      return null;
    }
    if (v === null || typeof v !== 'object') return this.scalar(v, secretName);

    this.path.add(v);
    try {
      if (Array.isArray(v)) {
        // Scalars in a list under a secret name ("cookies": ["a=b"]) are secrets; objects in it
        // are judged member by member.
        const out = new Array(v.length);
        for (let i = 0; i < v.length; i++) out[i] = this.node(v[i], secretName, depth + 1);
        return out;
      }
      // A header, cookie or field as {name, value}: the value is as secret as its name says.
      const pairName = typeof v.name === 'string' && isSecretName(v.name) ? v.name : null;
      const out = {};
      for (const key of Object.keys(v)) {
        let name = null;
        if (isSecretName(key)) name = key;
        else if (pairName !== null && key === 'value') name = pairName;
        defineMember(out, this.key(key, out), this.node(v[key], name, depth + 1));
      }
      return out;
    } finally {
      this.path.delete(v);
    }
  }
}

/**
 * A deep copy of a JSON-like value with every string passed through redactText(), and strings and
 * numbers under secret member names (or in a `{name, value}` pair with a secret name) replaced by
 * a marker. Member names pass the text redactor too (a masked one is numbered when it would
 * collide); booleans, nulls and the shape are kept; the input is not changed.
 */
export function redactValue(v) {
  const walk = new Walk();
  const value = walk.node(v, null, 0);
  return { value, count: walk.count };
}
