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
// Query and body members whose value names the operation (?action=send).
const ACTION_KEYS = new Set(['action', 'op', 'operation', 'do', 'cmd', 'command', 'intent', 'verb']);

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
const OVERRIDE_KEYS = new Set(['_method', 'x-http-method-override', 'x-http-method', 'x-method-override']);

/** The method a call stands for by an override in its body or query, upper case, or null. */
function overrideOf(url, body) {
  const found = membersOf(body).find(([k, v]) => OVERRIDE_KEYS.has(k.toLowerCase()) && typeof v === 'string');
  if (found) return found[1].trim().toUpperCase();
  try {
    for (const [k, v] of new URL(url).searchParams) if (OVERRIDE_KEYS.has(k.toLowerCase())) return v.trim().toUpperCase();
  } catch {
    // no URL: nothing in it
  }
  return null;
}

/** The names a call is judged by, each as {words, source}: operation names first, then the path. */
function namesOf(method, url, body) {
  const names = [];
  const gql = graphqlOf(body);
  if (gql) {
    // Every operation it names and every field it runs: `mutation { updateProfile … deleteAccount … }`.
    if (gql.name) names.push(gql.name);
    names.push(...(gql.operations ?? []), ...gql.fields);
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
    }
    for (const seg of u.pathname.split('/')) if (seg) names.push(seg);
  }
  return { names, gql };
}

/**
 * {kind: 'read'|'write'|'outward'|'delete', word} of a call. `word`: what decided (a word of a
 * name, 'DELETE', 'recipient'), or null.
 */
export function classifyCall({ method, url, body }) {
  const m = String(method ?? 'GET').toUpperCase();
  if (READ_METHODS.includes(m)) return { kind: 'read', word: null };
  if (m === 'DELETE' || overrideOf(url, body) === 'DELETE') return { kind: 'delete', word: 'DELETE' };
  const { names, gql } = namesOf(m, url, body);
  // A read only as a GraphQL request over POST whose every operation is a query.
  if (m === 'POST' && gql && gql.queries) return { kind: 'read', word: null };
  const words = names.flatMap(wordsOf);
  const del = words.find((w) => DELETE_WORDS.has(w));
  if (del) return { kind: 'delete', word: del };
  const out = words.find((w) => OUTWARD_WORDS.has(w));
  if (out) return { kind: 'outward', word: out };
  if (membersOf(body).some(([k]) => RECIPIENT_KEYS.has(k.toLowerCase()))) return { kind: 'outward', word: 'recipient' };
  // A GraphQL body that cannot be read through says nothing of what it runs: every doubt holds.
  if (gql && gql.unread) return { kind: 'outward', word: 'graphql' };
  return { kind: 'write', word: null };
}

/** The one string a person approves: method, URL and body, members in sorted order. */
export function canonicalOf({ method, url, body }) {
  return `${String(method).toUpperCase()} ${url}\n${stableJson(body)}`;
}

const SECRETISH = /secret|token|passw|pwd|pin|otp|cvv|cvc|card|iban|ssn/i;
const MAX_FIELDS = 30;
const MAX_SHOWN = 200;

/** One field of the card: a short plain value as it is, anything secret as its length only. */
function fieldOf(name, v) {
  const secretName = isSecretName(name) || SECRETISH.test(name);
  if (typeof v === 'string') {
    if (secretName || redactText(v).count > 0) return { name, secret: true, length: [...v].length };
    const flat = v.replace(/\s+/g, ' ');
    return { name, value: flat.length > MAX_SHOWN ? flat.slice(0, MAX_SHOWN - 1) + '…' : flat };
  }
  if (typeof v === 'number' || typeof v === 'boolean') {
    return secretName ? { name, secret: true, length: String(v).length } : { name, value: String(v) };
  }
  if (v === null || v === undefined) return { name, value: '' };
  return { name, value: Array.isArray(v) ? `[${v.length}]` : '{…}' };
}

/**
 * The fields a hold's card shows, which are everything the call sends but its path: the query's
 * members (`?to=…` names a recipient as well as a body does), then the body's — its members with
 * a form's fields among them; a GraphQL call's document (its inline arguments are what it sends)
 * and variables; a JSON-RPC call's params.
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
  const gql = graphqlOf(body);
  if (gql) {
    pairs.push(['query', body.query]);
    if (body.variables && typeof body.variables === 'object' && !Array.isArray(body.variables)) {
      pairs.push(...Object.entries(body.variables));
    }
    pairs.push(...Object.entries(body).filter(([k]) => k !== 'query' && k !== 'variables'));
  } else if (jsonRpcMethod(body) && body.params && typeof body.params === 'object' && !Array.isArray(body.params)) {
    pairs.push(...Object.entries(body.params));
  } else {
    pairs.push(...membersOf(body));
  }
  return pairs.slice(0, MAX_FIELDS).map(([k, v]) => fieldOf(String(k).slice(0, 80), v));
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
