// SPDX-License-Identifier: GPL-3.0-or-later
// Whether a call of the site's own API (browser.api.call) sends, destroys or changes something
// with the person's login — the same question content/outward.js answers for a click, asked of a
// request instead of a control, with the same word table (src/core/policy/outward-words.json, as
// written into outward.js) plus the nouns APIs name their outward collections with. Pure, so Node
// tests run it; the worker imports outward.js for its table (a classic script that publishes it).
//
// The judgement, and why:
// - GET and HEAD read: never held. A GraphQL request over POST whose every operation is a `query`
//   reads too (the GraphQL convention: queries have no effects) — a GraphQL request only: a body
//   of nothing but query, variables, operationName and extensions; a mutation, a persisted query
//   or anything else over POST is judged like any write, by every operation and field it runs.
//   A GraphQL body that does not parse is held as outward: it cannot be read for what it does.
// - A POST that stands for another method (_method, X-HTTP-Method-Override in the body or the
//   query) is judged as that one: DELETE deletes.
// - DELETE destroys, whatever it names ('delete'), and so does an operation (path segment, GraphQL
//   operation or first field, JSON-RPC method, an action-like query or body member) whose verb
//   is a delete word ("deleteMessage"): the verb says what is done, the noun only to what.
// - Otherwise a send, post, pay, transfer… verb, or a noun of what leaves the site (messages,
//   mail, posts, comments, payments, invoices, billing, campaigns, broadcasts, transfers, orders),
//   or a body that names recipients, makes it 'outward'. As for clicks, every doubt holds:
//   `PATCH /api/messages/5` is outward although it may only edit a draft.
// - Anything else ('write') a plan the person approved may cover; outward and delete never.

import '../content/outward.js';
import { graphqlOf, jsonRpcMethod, redactPath, stableJson } from './api-shape.js';
import { isSecretName } from './redact-names.js';
import { redactText } from './redact-text.js';

export const WRITE_METHODS = Object.freeze(['POST', 'PUT', 'PATCH', 'DELETE']);
export const READ_METHODS = Object.freeze(['GET', 'HEAD']);

const TABLE = globalThis.ChaperoneOutward?.WORDS;

/** Single words of a row of the click table, in every Latin language it has ('=word' as word). */
function singleWords(row) {
  const out = new Set();
  for (const [lang, words] of Object.entries(row ?? {})) {
    if (lang === 'zh') continue; // path and operation names are ASCII words
    for (const w of words) {
      const word = w.replace(/^=/, '').toLowerCase();
      if (/^[a-z]+$/.test(word)) out.add(word);
    }
  }
  return out;
}

// Nouns APIs give the collections an outward act creates in (POST /api/messages sends one).
const OUTWARD_NOUNS = ['message', 'messages', 'mail', 'mails', 'email', 'emails', 'sendmail', 'sms', 'dm',
  'dms', 'chat', 'chats', 'conversation', 'conversations', 'post', 'posts', 'comment', 'comments', 'tweet',
  'tweets', 'statuses', 'reply', 'replies', 'payment', 'payments', 'payout', 'payouts', 'checkout',
  'charge', 'charges', 'invoice', 'invoices', 'billing', 'order', 'orders', 'purchase', 'purchases',
  'campaign', 'campaigns', 'broadcast', 'broadcasts', 'newsletter', 'newsletters', 'transfer', 'transfers',
  'remittance', 'donation', 'donations', 'invitation', 'invitations', 'invite', 'invites', 'notify',
  'refund', 'refunds', 'publish', 'publication', 'publications', 'share', 'shares'];
export const OUTWARD_WORDS = Object.freeze(new Set([...singleWords(TABLE?.outward), ...OUTWARD_NOUNS]));
export const DELETE_WORDS = Object.freeze(new Set([...singleWords(TABLE?.delete), 'del', 'destroy', 'remove',
  'delete', 'trash', 'purge']));

// Body members that name where a message goes: a request with them sends.
const RECIPIENT_KEYS = new Set(['to', 'recipient', 'recipients', 'cc', 'bcc', 'phone', 'email_to', 'send_to']);
// Query and body members whose value names the operation (?action=send, ?method=photos.delete).
const ACTION_KEYS = new Set(['action', 'op', 'operation', 'do', 'cmd', 'command', 'intent', 'verb', 'method']);

/** The words of a name: split at non-letters and camelCase, lower case ("sendMessage" → send, message). */
export function wordsOf(name) {
  let s = String(name ?? '');
  try {
    s = decodeURIComponent(s);
  } catch {
    // kept as sent
  }
  return s.replace(/([a-z])([A-Z])/g, '$1 $2').replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase().split(/[^a-z]+/).filter(Boolean);
}

/**
 * A body's members, with a form's fields among them: [name, value] pairs. Both levels, for a body
 * that has a `form` beside other members says what it does in either.
 */
function membersOf(body) {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return [];
  const out = Object.entries(body).filter(([k]) => k !== 'form' || !body.form || typeof body.form !== 'object');
  if (body.form && typeof body.form === 'object' && !Array.isArray(body.form)) out.push(...Object.entries(body.form));
  return out;
}

// Where a POST says which method it stands for (Rails', Laravel's and others' _method; the
// X-HTTP-Method-Override convention as a member or a query key): the server acts as that one.
// Names as servers read them: PHP turns "." and spaces (and "[") in a name into "_".
const OVERRIDE_KEYS = new Set(['_method', 'x_http_method_override', 'x_http_method', 'x_method_override']);
const overrideKey = (k) => OVERRIDE_KEYS.has(String(k).toLowerCase().replace(/[-. []/g, '_'));

/**
 * Every method a call may stand for by an override in its query or body, upper case: servers
 * differ in which one they take (the first, the last, the query's or the body's).
 */
function overridesOf(url, body) {
  const out = membersOf(body).filter(([k, v]) => overrideKey(k) && typeof v === 'string').map(([, v]) => v);
  try {
    for (const [k, v] of new URL(url).searchParams) if (overrideKey(k)) out.push(v);
  } catch {
    // no URL: nothing in it
  }
  return out.map((v) => v.trim().toUpperCase());
}

/**
 * The names a call is judged by: operation names first, then the query's and the path's; its
 * GraphQL body, and whether a GraphQL document in it (body or URL) could not be read.
 */
function namesOf(method, url, body) {
  const names = [];
  const gql = graphqlOf(body);
  let unread = gql?.unread === true;
  if (gql) {
    // Every operation it names and every field it runs: `mutation { updateProfile … deleteAccount … }`.
    if (gql.name) names.push(gql.name);
    names.push(...(gql.operations ?? []), ...gql.judged);
  }
  // A persisted query says its operation by name only, with no document to read.
  if (body && typeof body === 'object' && typeof body.operationName === 'string' && body.operationName.length <= 80) {
    names.push(body.operationName);
  }
  const rpc = jsonRpcMethod(body);
  if (rpc) names.push(rpc);
  for (const [k, v] of membersOf(body)) {
    if (ACTION_KEYS.has(k.toLowerCase()) && typeof v === 'string' && v.length <= 64) names.push(v);
  }
  let u = null;
  try {
    u = new URL(url);
  } catch {
    u = null;
  }
  if (u) {
    for (const [k, v] of u.searchParams) {
      names.push(k);
      if (ACTION_KEYS.has(k.toLowerCase()) && v.length <= 64) names.push(v);
      // A GraphQL document in the URL, which a server may run over the body's.
      if (k.toLowerCase() === 'query') {
        const inUrl = graphqlOf({ query: v });
        if (inUrl) names.push(...inUrl.judged);
        if (inUrl?.unread) unread = true;
      }
    }
    for (const seg of u.pathname.split('/')) if (seg) names.push(seg);
  }
  return { names, gql, unread };
}

/**
 * {kind: 'read'|'write'|'outward'|'delete', word} of a call. `word`: what decided (a word of a
 * name, 'DELETE', 'recipient'), or null.
 */
const STRICTNESS = ['read', 'write', 'outward', 'delete'];
const MAX_BATCH = 50;
// A GraphQL endpoint says so in its path (/graphql, /api/gql): a body elsewhere that looks like
// a query is judged as the write its method is.
const GRAPHQL_PATH = new Set(['graphql', 'gql']);
// URL members a GraphQL server may take over the body's (express-graphql reads ?query= first).
const GRAPHQL_URL_KEYS = new Set(['query', 'variables', 'operationname', 'extensions']);

export function classifyCall({ method, url, body }) {
  const m = String(method ?? 'GET').toUpperCase();
  if (READ_METHODS.includes(m)) return { kind: 'read', word: null };
  // A batch (GraphQL's, JSON-RPC's, or any list) is as strict as its strictest item.
  if (Array.isArray(body)) {
    if (body.length === 0 || body.length > MAX_BATCH) return { kind: 'outward', word: 'batch' };
    return body.map((item) => classifyCall({ method: m, url, body: item === null || typeof item !== 'object' ? {} : item }))
      .reduce((a, b) => (STRICTNESS.indexOf(b.kind) > STRICTNESS.indexOf(a.kind) ? b : a));
  }
  if (m === 'DELETE' || overridesOf(url, body).includes('DELETE')) return { kind: 'delete', word: 'DELETE' };
  const { names, gql, unread } = namesOf(m, url, body);
  const words = names.flatMap(wordsOf);
  const del = words.find((w) => DELETE_WORDS.has(w));
  if (del) return { kind: 'delete', word: del };
  const out = words.find((w) => OUTWARD_WORDS.has(w));
  if (out) return { kind: 'outward', word: out };
  if (membersOf(body).some(([k]) => RECIPIENT_KEYS.has(k.toLowerCase()))) return { kind: 'outward', word: 'recipient' };
  // A GraphQL body that cannot be read through says nothing of what it runs: every doubt holds.
  if (unread) return { kind: 'outward', word: 'graphql' };
  // A read only as a GraphQL request over POST to a GraphQL endpoint, with nothing in its URL a
  // server could run instead, whose every operation is a query (and no word above said more).
  if (m === 'POST' && gql && gql.queries && graphqlEndpoint(url)) return { kind: 'read', word: null };
  return { kind: 'write', word: null };
}

function graphqlEndpoint(url) {
  try {
    const u = new URL(url);
    if ([...u.searchParams.keys()].some((k) => GRAPHQL_URL_KEYS.has(k.toLowerCase()))) return false;
    return u.pathname.split('/').some((seg) => wordsOf(seg).some((w) => GRAPHQL_PATH.has(w)));
  } catch {
    return false;
  }
}

/** The one string a person approves: method, URL and body, members in sorted order. */
export function canonicalOf({ method, url, body }) {
  return `${String(method).toUpperCase()} ${url}\n${stableJson(body)}`;
}

const SECRETISH = /secret|token|passw|pwd|pin|otp|cvv|cvc|card|iban|ssn/i;
const MAX_FIELDS = 30;
const MAX_SHOWN = 200;
const MAX_DOCUMENT_SHOWN = 1000;
const MAX_DEPTH = 4;

/** One field of the card: a short plain value as it is, anything secret as its length only. */
function fieldOf(name, v, max = MAX_SHOWN) {
  const last = name.split('.').pop();
  const secretName = isSecretName(name) || isSecretName(last) || SECRETISH.test(name);
  if (typeof v === 'string') {
    if (secretName || redactText(v).count > 0) return { name, secret: true, length: [...v].length };
    const flat = v.replace(/\s+/g, ' ');
    return { name, value: flat.length > max ? flat.slice(0, max - 1) + '…' : flat };
  }
  if (typeof v === 'number' || typeof v === 'boolean') {
    return secretName ? { name, secret: true, length: String(v).length } : { name, value: String(v) };
  }
  if (v === null || v === undefined) return { name, value: '' };
  return { name, value: Array.isArray(v) ? `[${v.length}]` : '{…}' };
}

/** [name, value] pairs with nested members as dotted names ("input.to"), MAX_DEPTH deep. */
function flatten(pairs, prefix = '', depth = 0, out = []) {
  for (const [k, v] of pairs) {
    if (out.length > MAX_FIELDS) break;
    const name = prefix ? `${prefix}.${k}` : String(k);
    const inner = v && typeof v === 'object' ? (Array.isArray(v) ? v.map((x, i) => [i, x]) : Object.entries(v)) : null;
    if (inner && inner.length && depth < MAX_DEPTH) flatten(inner, name, depth + 1, out);
    else out.push([name, v]);
  }
  return out;
}

/**
 * The fields a hold's card shows, which are everything the call sends but its path: the query's
 * members (`?to=…` names a recipient as well as a body does), then the body's — its members with
 * a form's fields among them; a GraphQL call's document (its inline arguments are what it sends)
 * and variables; a JSON-RPC call's params and the rest. Nested members are shown by dotted name
 * ("input.to"); what does not fit is said to be there, never silently left out.
 */
export function holdFields(body, url = null) {
  const pairs = [];
  if (url) {
    try {
      pairs.push(...new URL(url).searchParams);
    } catch {
      // no URL: no query
    }
  }
  let document = null;
  const gql = graphqlOf(body);
  if (gql) {
    document = body.query;
    pairs.push(...Object.entries(body).filter(([k]) => k !== 'query'));
  } else if (jsonRpcMethod(body) && body.params && typeof body.params === 'object') {
    pairs.push(...Object.entries(body).filter(([k]) => k !== 'params'), ...Object.entries(body.params));
  } else if (Array.isArray(body)) {
    pairs.push(...body.map((x, i) => [i, x]));
  } else {
    pairs.push(...membersOf(body));
  }
  const flat = flatten(pairs);
  const fields = [];
  if (document !== null) fields.push(fieldOf('query', document, MAX_DOCUMENT_SHOWN));
  const room = MAX_FIELDS - fields.length;
  const shown = flat.length > room ? room - 1 : flat.length;
  fields.push(...flat.slice(0, shown).map(([k, v]) => fieldOf(String(k).slice(0, 80), v)));
  if (flat.length > shown) fields.push({ name: '…', value: 'more that this card cannot show' });
  return fields;
}

/**
 * What router.holds.create needs for a held call: {kind, reason:'api', word, control, site, fields,
 * canonical}. `control` is what the card names: "POST /api/messages" (and the operation).
 */
export function heldCall({ method, url, body }, verdict = classifyCall({ method, url, body })) {
  const u = new URL(url);
  const m = String(method).toUpperCase();
  const gql = graphqlOf(body);
  const rpc = jsonRpcMethod(body);
  // Every operation a GraphQL call runs, not its first only ("updateProfile, deleteAccount").
  const ops = gql ? (gql.fields.length ? gql.fields : [gql.name].filter(Boolean)) : rpc ? [rpc] : [];
  const control = `${m} ${redactPath(u.pathname).path}${ops.length ? ` ${ops.join(', ')}` : ''}`;
  return {
    kind: verdict.kind === 'read' ? 'write' : verdict.kind,
    reason: 'api',
    word: verdict.word,
    control: control.slice(0, 160),
    site: u.origin,
    fields: holdFields(body, url),
    canonical: canonicalOf({ method: m, url, body }),
  };
}
