// SPDX-License-Identifier: GPL-3.0-or-later
// What a request or a reply looks like without what it says: origins, paths, the names of query
// keys and body members with the type of each, which credentials went with it (as kinds and
// header names). Pure functions shared by the capture (lib/capture.js), the learned catalogue
// (lib/api-learn.js) and the calls (capabilities/api.js), so every one of them reduces a request
// the same way and none of them ever keeps a value: a name is all that leaves this file, and a
// name that looks like a value (a token used as a key) is replaced by a placeholder.

import { marker } from './redact-marker.js';
import { isSecretName } from './redact-names.js';
import { redactText } from './redact-text.js';

export const MAX_QUERY_KEYS = 32;
export const MAX_BODY_KEYS = 64;
/** Request bodies are read up to this many bytes (larger ones are 'binary' or cut). */
export const MAX_BODY_BYTES = 64 * 1024;
const MAX_NAME = 80;

export const TYPE_WORDS = Object.freeze(['string', 'number', 'boolean', 'null', 'object', 'array']);

/** 'string' | 'number' | 'boolean' | 'null' | 'object' | 'array' of a JSON value. */
export function typeOf(v) {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return 'array';
  const t = typeof v;
  return t === 'string' || t === 'number' || t === 'boolean' ? t : 'object';
}

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

/**
 * Whether a path segment (as sent, percent-encoding included) names one thing rather than a kind
 * of things: a number, a UUID, hex of 8 or more, a long token with digits in it, or anything
 * percent-encoded or with a space (titles, names: the page's data, not the API's words).
 */
export function isIdSegment(seg) {
  if (typeof seg !== 'string' || seg === '') return false;
  if (/^\d+$/.test(seg) || UUID.test(seg)) return true;
  if (seg.length >= 8 && /^[0-9a-f]+$/i.test(seg) && /\d/.test(seg)) return true;
  if (seg.length >= 16 && /\d/.test(seg)) return true;
  return seg.includes('%') || seg.includes(' ') || seg.includes('+');
}

/** A path segment that may carry a secret on its own: a long token (≥ 16, letters and digits). */
function isTokenSegment(seg) {
  return seg.length >= 16 && /\d/.test(seg) && /[A-Za-z]/.test(seg) && !UUID.test(seg);
}

// Segments after which the next one is a one-time secret (/reset/<token>, /invite/<code>).
const SECRET_LEADS = new Set(['reset', 'token', 'tokens', 'verify', 'verification', 'confirm', 'activate',
  'activation', 'invite', 'invitation', 'magic', 'login', 'auth', 'oauth', 'session', 'sessions', 'key',
  'keys', 'secret', 'unsubscribe', 'password', 'otp', 'code']);

/**
 * A path as it may be shown: each segment through the redactor (a JWT, a key of a known shape),
 * and a long token — or any segment right after one that names a secret (/reset/…) — as a marker.
 * → {path, redacted}
 */
export function redactPath(path) {
  const segs = String(path ?? '').split('/');
  let redacted = false;
  for (let i = 0; i < segs.length; i++) {
    const seg = segs[i];
    if (seg === '' || (seg.startsWith('{') && seg.endsWith('}'))) continue;
    const prev = i > 0 ? segs[i - 1].toLowerCase() : '';
    if (isTokenSegment(seg) || (SECRET_LEADS.has(prev) && seg.length >= 6 && !/^[a-z]+$/.test(seg))) {
      segs[i] = marker(SECRET_LEADS.has(prev) ? prev : 'token', seg);
      redacted = true;
      continue;
    }
    const r = redactText(seg);
    if (r.count > 0) {
      segs[i] = r.text;
      redacted = true;
    }
  }
  return { path: segs.join('/'), redacted };
}

/** A name (query key, body member) as it may be kept: short, and a placeholder when it is an id. */
export function keyName(name) {
  const s = String(name);
  if (s === '') return null;
  if (isIdSegment(s) || isTokenSegment(s)) return '{key}';
  return s.length > MAX_NAME ? s.slice(0, MAX_NAME) : s;
}

/** {origin, path, queryKeys} of an absolute URL, or null. The query and fragment stay behind. */
export function splitUrl(url) {
  let u;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  if (!/^(https?|wss?):$/.test(u.protocol)) return null;
  const keys = new Set();
  for (const k of u.searchParams.keys()) {
    const name = keyName(k);
    if (name) keys.add(name);
  }
  // The browser's own spelling (scheme://host[:port], no default port), as grants hold origins.
  return {
    origin: u.origin,
    path: u.pathname || '/',
    queryKeys: [...keys].sort().slice(0, MAX_QUERY_KEYS),
  };
}

/** The top-level members of a JSON value as {name: type}, or for an array its first item's. */
export function keysOf(value) {
  const keys = {};
  if (!value || typeof value !== 'object' || Array.isArray(value)) return keys;
  let n = 0;
  for (const [k, v] of Object.entries(value)) {
    const name = keyName(k);
    if (!name || Object.hasOwn(keys, name)) continue;
    if (++n > MAX_BODY_KEYS) break;
    keys[name] = typeOf(v);
  }
  return keys;
}

/**
 * The shape of a reply: {name: type} of an object's members, or {array: length, item: {…}} of an
 * array (its first item's members), or {type} of anything else.
 */
export function shapeOf(value) {
  if (Array.isArray(value)) return { array: value.length, item: keysOf(value[0]) };
  if (value && typeof value === 'object') return keysOf(value);
  return { type: typeOf(value) };
}

// A GraphQL document, read as far as judging it needs: its operations, their types and names, and
// the fields each selects at its top (the operations it runs: `mutation { updateProfile … 
// deleteAccount … }` runs both), with the top fields of the fragments it spreads there. Commas
// are blanks, comments end at either line end, strings and block strings are tokens, and
// arguments, variables' defaults and directives are skipped as balanced groups, so a `{` in a
// default value or a string is never taken for a selection. Bounded: GQL_MAX_CHARS of text and
// GQL_MAX_TOKENS tokens; past them, or for anything that does not parse, null (and the caller
// cannot call it a read).
const GQL_MAX_CHARS = 32 * 1024;
const GQL_MAX_TOKENS = 8192;
const GQL_MAX_FIELDS = 1024;
const GQL_PUNCT = new Set(['{', '}', '(', ')', '[', ']', ':', '=', '@', '$', '!', '|', '&']);
const GQL_NAME_START = /[A-Za-z_]/;
const GQL_NAME = /[A-Za-z0-9_]/;

// Characters a GraphQL server may read otherwise than this tokenizer: graphql-java ends a comment
// at U+2028 and U+2029 too. A document with any of them is not read at all.
// eslint-disable-next-line no-control-regex
const GQL_UNSURE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\u0085\u2028\u2029]/;

function gqlTokens(src) {
  if (src.length > GQL_MAX_CHARS || GQL_UNSURE.test(src)) return null;
  const out = [];
  let i = 0;
  while (i < src.length) {
    if (out.length > GQL_MAX_TOKENS) return null;
    const c = src[i];
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === ',' || c === '\ufeff') {
      i += 1;
    } else if (c === '#') {
      while (i < src.length && src[i] !== '\n' && src[i] !== '\r') i += 1;
    } else if (src.startsWith('"""', i)) {
      let j = i + 3;
      while (j < src.length && !src.startsWith('"""', j)) j += src.startsWith('\\"""', j) ? 4 : 1;
      if (j >= src.length) return null;
      out.push('"');
      i = j + 3;
    } else if (c === '"') {
      let j = i + 1;
      while (j < src.length && src[j] !== '"') {
        if (src[j] === '\n' || src[j] === '\r') return null;
        j += src[j] === '\\' ? 2 : 1;
      }
      if (j >= src.length) return null;
      out.push('"');
      i = j + 1;
    } else if (src.startsWith('...', i)) {
      out.push('...');
      i += 3;
    } else if (GQL_PUNCT.has(c)) {
      out.push(c);
      i += 1;
    } else if (GQL_NAME_START.test(c)) {
      let j = i + 1;
      while (j < src.length && GQL_NAME.test(src[j])) j += 1;
      out.push(`n:${src.slice(i, j)}`);
      i = j;
    } else if (c === '-' || (c >= '0' && c <= '9')) {
      let j = i + 1;
      while (j < src.length && /[0-9.eE+-]/.test(src[j])) j += 1;
      out.push('0');
      i = j;
    } else {
      return null;
    }
  }
  return out;
}

// The documents read last: a held call is judged, then carded, from the same body (a deep
// document takes a good part of a second to read on a slow machine; three reads were three times
// that). Read-only to callers: frozen.
const RECENT_DOCUMENTS = 4;
const recentDocuments = new Map();

/** {operations: [{type, name, fields, nested}], fragments} of a GraphQL document (see above), or null. */
export function graphqlDocument(src) {
  if (typeof src !== 'string') return null;
  if (recentDocuments.has(src)) return recentDocuments.get(src);
  const doc = readDocument(src);
  if (doc) {
    for (const op of doc.operations) {
      Object.freeze(op.fields);
      Object.freeze(op.nested);
      Object.freeze(op);
    }
    Object.freeze(doc.operations);
    Object.freeze(doc.fragments);
    Object.freeze(doc);
  } else if (src.length > GQL_MAX_CHARS) {
    return null;   // refused at its length: nothing to keep
  }
  recentDocuments.set(src, doc);
  if (recentDocuments.size > RECENT_DOCUMENTS) recentDocuments.delete(recentDocuments.keys().next().value);
  return doc;
}

/** Forgets the documents read last: a capture that stops keeps nothing of the page's bodies. */
export function forgetDocuments() {
  recentDocuments.clear();
}

function readDocument(src) {
  const toks = typeof src === 'string' ? gqlTokens(src) : null;
  if (!toks) return null;
  let i = 0;
  const name = () => {
    const t = toks[i];
    if (!t || !t.startsWith('n:')) throw new SyntaxError('a name');
    i += 1;
    return t.slice(2);
  };
  const is = (word) => toks[i] === `n:${word}`;
  const group = (open, close) => {
    for (let depth = 0; i < toks.length;) {
      const t = toks[i++];
      if (t === open) depth += 1;
      else if (t === close && --depth === 0) return;
    }
    throw new SyntaxError('an unclosed group');
  };
  const directives = () => {
    while (toks[i] === '@') {
      i += 1;
      name();
      if (toks[i] === '(') group('(', ')');
    }
  };
  // A selection set: its own fields (aliases read through) and the fragments it spreads.
  const selection = () => {
    const out = { fields: [], nested: [], spreads: [] };
    if (toks[i++] !== '{') throw new SyntaxError('a selection');
    while (toks[i] !== '}') {
      if (i >= toks.length) throw new SyntaxError('an unclosed selection');
      if (toks[i] === '...') {
        i += 1;
        if (is('on') || toks[i] === '@' || toks[i] === '{') {
          if (is('on')) {
            i += 1;
            name();
          }
          directives();
          const inner = selection();
          out.fields.push(...inner.fields);
          out.nested.push(...inner.nested);
          out.spreads.push(...inner.spreads);
        } else {
          out.spreads.push(name());
          directives();
        }
        continue;
      }
      let field = name();
      if (toks[i] === ':') {
        i += 1;
        field = name();
      }
      out.fields.push(field);
      if (toks[i] === '(') group('(', ')');
      directives();
      if (toks[i] === '{') {
        // What it selects within: a mutation's namespaced operations (`account { delete }`) run
        // there too, and a fragment spread there is spread into the operation.
        const inner = selection();
        out.nested.push(...inner.fields, ...inner.nested);
        out.spreads.push(...inner.spreads);
        // Bounded as it grows, level by level: a deep document is not read (and not copied up
        // thousands of times).
        if (out.nested.length > GQL_MAX_FIELDS) throw new SyntaxError('too many fields');
      }
    }
    i += 1;
    return out;
  };
  const operations = [];
  const fragments = new Map();
  try {
    while (i < toks.length) {
      if (toks[i] === '{') {
        operations.push({ type: 'query', name: null, ...selection() });
      } else if (is('fragment')) {
        i += 1;
        const fragment = name();
        if (!is('on')) throw new SyntaxError('a type condition');
        i += 1;
        name();
        directives();
        fragments.set(fragment, selection());
      } else {
        const type = name();
        if (type !== 'query' && type !== 'mutation' && type !== 'subscription') throw new SyntaxError('an operation');
        const op = toks[i]?.startsWith('n:') ? name() : null;
        if (toks[i] === '(') group('(', ')');
        directives();
        operations.push({ type, name: op, ...selection() });
      }
    }
  } catch {
    return null;
  }
  if (operations.length === 0) return null;
  // Each operation's fields with those of the fragments it spreads, through other fragments, each
  // fragment once; bounded, as a document that fans out past GQL_MAX_FIELDS is not read.
  for (const op of operations) {
    const fields = new Set(op.fields);
    const nested = new Set(op.nested);
    const seen = new Set();
    const pending = [...op.spreads];
    while (pending.length) {
      const f = pending.pop();
      if (seen.has(f) || !fragments.has(f)) continue;
      seen.add(f);
      const frag = fragments.get(f);
      for (const x of frag.fields) fields.add(x);
      for (const x of frag.nested) nested.add(x);
      pending.push(...frag.spreads);
      if (fields.size + nested.size > GQL_MAX_FIELDS) return null;
    }
    op.fields = [...fields];
    op.nested = [...nested];
    delete op.spreads;
  }
  return { operations, fragments: [...fragments.keys()] };
}

// The members a GraphQL request over POST has (the GraphQL over HTTP convention): a body with any
// other is something else that happens to have a `query`, judged as any write.
const GRAPHQL_MEMBERS = new Set(['query', 'variables', 'operationName', 'extensions']);
const OPERATION_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,79}$/;
const LOOKS_GRAPHQL = /^[\s,\ufeff]*(?:#|\{|(?:query|mutation|subscription|fragment)\b)/;

/**
 * What a GraphQL body asks, as names: {type (mutation or subscription if any operation is one,
 * else query), name (operationName, or the first operation's), field (the first field it runs),
 * fields (every field its operations run at their top), judged (the names it is judged by: those,
 * and a mutation's inner fields), queries (true when it is a GraphQL request and every
 * operation in it is a query: a read)}; null when it is not GraphQL. A body whose `query` starts
 * as a document but does not parse is {type: null, unread: true}: it says nothing, and reads
 * nothing.
 */
export function graphqlOf(body) {
  if (!body || typeof body !== 'object' || Array.isArray(body) || typeof body.query !== 'string') return null;
  const opName = typeof body.operationName === 'string' && OPERATION_NAME.test(body.operationName)
    ? body.operationName : null;
  const doc = graphqlDocument(body.query);
  if (!doc) {
    // Only what starts as a document can be one that did not parse: a search's `query: "harbour
    // notes"` is no GraphQL at all.
    return LOOKS_GRAPHQL.test(body.query)
      ? { type: null, name: opName, field: null, fields: [], judged: [], queries: false, unread: true } : null;
  }
  const ops = doc.operations;
  const other = ops.find((o) => o.type !== 'query');
  const fields = [...new Set(ops.flatMap((o) => o.fields))];
  // Judged by: a query's top fields (its inner ones are what it reads); a mutation's inner fields
  // too, which may be operations of their own (`account { delete }`).
  const judged = [...new Set(ops.flatMap((o) => (o.type === 'query' ? o.fields : [...o.fields, ...o.nested])))];
  return {
    type: other ? other.type : 'query', name: opName ?? ops[0].name, field: ops[0].fields[0] ?? null, fields, judged,
    operations: ops.map((o) => o.name).filter(Boolean),
    queries: !other && Object.keys(body).every((k) => GRAPHQL_MEMBERS.has(k)),
  };
}

/** A JSON-RPC body's method name, or null. */
export function jsonRpcMethod(body) {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return null;
  if (typeof body.method !== 'string' || !('jsonrpc' in body || 'params' in body || 'id' in body)) return null;
  return /^[A-Za-z0-9_./:-]{1,80}$/.test(body.method) ? body.method : null;
}

/** The operation a body names: GraphQL's operationName or first field, or a JSON-RPC method. */
export function operationOf(body) {
  const gql = graphqlOf(body);
  if (gql && gql.type) return { operation: gql.name ?? gql.field, operationType: gql.type };
  const rpc = jsonRpcMethod(body);
  return rpc ? { operation: rpc, operationType: 'rpc' } : null;
}

/** {kind:'json', keys, operation?} of a parsed JSON body. */
export function jsonBodyShape(value) {
  const shape = { kind: 'json', keys: Array.isArray(value) ? keysOf(value[0]) : keysOf(value) };
  if (Array.isArray(value)) shape.array = value.length;
  const op = operationOf(value);
  if (op) Object.assign(shape, op);
  return shape;
}

const NONE = Object.freeze({ kind: 'none', keys: Object.freeze({}) });

/**
 * The shape of webRequest's `requestBody`: form fields' names, or raw bytes (≤ 64 KiB) read as
 * JSON (top-level names and types, a GraphQL or JSON-RPC operation), as a urlencoded form, as
 * text or as binary. Never a value.
 */
export function requestBodyShape(requestBody) {
  if (!requestBody || typeof requestBody !== 'object') return { kind: 'none', keys: {} };
  if (requestBody.formData && typeof requestBody.formData === 'object') {
    const keys = {};
    let n = 0;
    for (const k of Object.keys(requestBody.formData)) {
      const name = keyName(k);
      if (!name || Object.hasOwn(keys, name)) continue;
      if (++n > MAX_BODY_KEYS) break;
      keys[name] = 'string';
    }
    return { kind: 'form', keys };
  }
  const raw = Array.isArray(requestBody.raw) ? requestBody.raw : [];
  if (raw.length === 0) return { kind: 'none', keys: {} };
  if (raw.some((part) => part && part.file !== undefined)) return { kind: 'binary', keys: {} };
  let total = 0;
  const parts = [];
  for (const part of raw) {
    const bytes = part?.bytes;
    if (!bytes) continue;
    const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
    total += view.byteLength;
    if (total > MAX_BODY_BYTES) return { kind: 'binary', keys: {} };
    parts.push(view);
  }
  const all = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.byteLength;
  }
  let text;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(all);
  } catch {
    return { kind: 'binary', keys: {} };
  }
  return textBodyShape(text);
}

/** The shape of a body given as text (JSON, a urlencoded form, or other text). */
export function textBodyShape(text) {
  if (typeof text !== 'string' || text === '') return { kind: 'none', keys: {} };
  const t = text.trim();
  if (t.startsWith('{') || t.startsWith('[')) {
    try {
      return jsonBodyShape(JSON.parse(t));
    } catch {
      // not JSON after all
    }
  }
  // name=value&name=value, with nothing that is not a form's.
  if (/^[^\s=&]+=[^\s&]*(&[^\s=&]+=[^\s&]*)*$/.test(t)) {
    const keys = {};
    for (const k of new URLSearchParams(t).keys()) {
      const name = keyName(k);
      if (name && !Object.hasOwn(keys, name) && Object.keys(keys).length < MAX_BODY_KEYS) keys[name] = 'string';
    }
    return { kind: 'form', keys };
  }
  // eslint-disable-next-line no-control-regex
  return /[\u0000-\u0008\u000e-\u001f]/.test(t) ? { kind: 'binary', keys: {} } : { kind: 'text', keys: {} };
}

export const noBody = () => ({ kind: NONE.kind, keys: {} });

// ---- credentials -------------------------------------------------------------------------------

/**
 * Whether a request header signs or marks a request as the page's own: authorization, x-*,
 * *-token, *csrf*, *xsrf*. The values of these (never of Cookie) are kept in the worker's memory
 * so a call can sign itself as the page did.
 */
// Headers that say what a request does rather than who sends it: never carried along as a
// "credential", where an agent's call could name one and turn a POST into a DELETE.
const METHOD_OVERRIDES = new Set(['x-http-method', 'x-http-method-override', 'x-method-override']);

export function isCredentialHeader(name) {
  const n = String(name).toLowerCase();
  if (n === 'cookie' || n === 'x-client-data') return false; // the cookie is the browser's to send
  if (METHOD_OVERRIDES.has(n)) return false;
  return n === 'authorization' || n.startsWith('x-') || n.endsWith('-token') ||
    n.includes('csrf') || n.includes('xsrf');
}

/**
 * A header that only marks a request as the page's own, with a plain value the page sends on
 * every such call (X-Requested-With: TiddlyWiki, which CSRF guards check): a custom x- name
 * that does not sign (headerWeight 0, no secret-sounding name) and a short word-like value with
 * no long number and nothing key-like. Its name and value are kept with the request, so a call
 * of the same endpoint is sent as the page sends it; anything else stays credential-ish (its
 * value never leaves the worker but to sign a call, and only when the agent asks for it).
 */
// Headers that say which method a POST stands for (SharePoint sends X-HTTP-Method: DELETE): never
// a marker, so a call never carries one the page sent with another.
const METHOD_HEADERS = new Set(['x-http-method-override', 'x-http-method', 'x-method-override']);

export function isMarkerHeader(name, value) {
  const n = String(name ?? '').toLowerCase();
  if (!n.startsWith('x-') || n === 'x-client-data' || METHOD_HEADERS.has(n) || headerWeight(n) > 0) return false;
  const v = typeof value === 'string' ? value : '';
  if (!/^[A-Za-z0-9][A-Za-z0-9 ._/-]{0,39}$/.test(v) || /\d{5}/.test(v)) return false;
  if (v.length >= 16 && /\d/.test(v) && /[A-Za-z]/.test(v)) return false; // key-like
  return redactText(v).count === 0;
}

/** How strongly a header name says "this signs the request" (0: it only marks it). */
export function headerWeight(name) {
  const n = String(name).toLowerCase();
  if (n === 'authorization') return 3;
  if (n.includes('csrf') || n.includes('xsrf')) return 2;
  if (n.endsWith('-token') || isSecretName(n)) return 1;
  return 0;
}

/**
 * The credentials of webRequest's requestHeaders, as kinds and names:
 * {cookie: bool, bearer: bool, headers: [other credential-ish header names, sorted]}.
 */
export function credentialOfHeaders(headers) {
  const out = { cookie: false, bearer: false, headers: [] };
  const names = new Set();
  for (const h of Array.isArray(headers) ? headers : []) {
    const name = String(h?.name ?? '').toLowerCase();
    if (name === 'cookie') {
      out.cookie = true;
    } else if (name === 'authorization' && /^\s*bearer\s/i.test(String(h.value ?? ''))) {
      out.bearer = true;
    } else if (isCredentialHeader(name) && /^[a-z0-9!#$%&'*+.^_`|~-]{1,64}$/.test(name)) {
      names.add(name);
    }
  }
  out.headers = [...names].sort().slice(0, 16);
  return out;
}

/** The content type without its parameters, lower case, or null. */
export function mediaType(value) {
  if (typeof value !== 'string') return null;
  const t = value.split(';')[0].trim().toLowerCase();
  return t === '' ? null : t.slice(0, 100);
}

/** JSON text with object members in sorted order, so equal bodies always read the same. */
export function stableJson(v) {
  if (v === undefined) return '';
  const walk = (x) => {
    if (Array.isArray(x)) return x.map(walk);
    if (x && typeof x === 'object') {
      const out = {};
      for (const k of Object.keys(x).sort()) out[k] = walk(x[k]);
      return out;
    }
    return x;
  };
  return JSON.stringify(walk(v));
}

/** A shape this file made: {name: type word}, {array: n, item: {…}} or {type: word}. */
function isShape(v) {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return false;
  if (Object.hasOwn(v, 'array')) return Number.isSafeInteger(v.array) && isShape(v.item);
  return Object.values(v).every((t) => typeof t === 'string' && (TYPE_WORDS.includes(t) || ['text', 'binary', 'empty'].includes(t)));
}

/**
 * Puts back, in a redacted copy of an answer, the shapes the redactor took for values: under a
 * member name that reads as a secret ("password", "token") a shape holds a type word, which says
 * nothing of the value. Only members named `keys` (a body's) and `shape` (a reply's) are put back;
 * a reply's own data (`json`, `text`) is never looked at.
 */
export function restoreShapes(original, redacted, depth = 0) {
  if (!original || typeof original !== 'object' || !redacted || typeof redacted !== 'object' || depth > 8) return;
  for (const k of Object.keys(original)) {
    if (k === 'json' || k === 'text') continue;
    const o = original[k];
    if ((k === 'keys' || k === 'shape') && isShape(o)) {
      redacted[k] = structuredClone(o);
    } else if (o && typeof o === 'object') {
      restoreShapes(o, redacted[k], depth + 1);
    }
  }
}
