// SPDX-License-Identifier: GPL-3.0-or-later
// Whether a call of the site's own API (browser.api.call) sends, destroys or changes something
// with the person's login — the same question content/outward.js answers for a click, asked of a
// request instead of a control, with the same word table (src/core/policy/outward-words.json, as
// written into outward.js) plus the nouns APIs name their outward collections with
// (lib/api-words.js). Pure, so Node tests run it.
//
// The judgement, and why:
// - GET and HEAD read, unless the URL says it deletes or sends (lib/api-get.js: ?action=trash,
//   …/5/delete, ?to=ann@example.com). A GraphQL request over POST whose every operation is a
//   `query` reads too (the GraphQL convention: queries have no effects) — a GraphQL request
//   only: a body of nothing but query, variables, operationName and extensions; a mutation, a
//   persisted query or anything else over POST is judged like any write, by every operation and
//   field it runs.
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

import { graphqlOf, jsonRpcMethod, redactPath, stableJson } from './api-shape.js';
import { actingGet, actionVerdict } from './api-get.js';
import {
  DELETE_WORDS, JOINED_DELETE, JOINED_OUTWARD, OUTWARD_WORDS, OVERRIDE_KEYS, RECIPIENT_KEYS,
  RECIPIENT_NAME, URL_KEYS, actionKey, deletePhraseIn, graphqlPath, joined, keyOf, wordsOf,
} from './api-words.js';
import { isSecretName } from './redact-names.js';
import { redactText } from './redact-text.js';

export const WRITE_METHODS = Object.freeze(['POST', 'PUT', 'PATCH', 'DELETE']);
export const READ_METHODS = Object.freeze(['GET', 'HEAD']);
// What the tests and the worker read from here too.
export { DELETE_WORDS, OUTWARD_WORDS, wordsOf };

const MAX_WALK = 4000;
const MAX_WALK_DEPTH = 16;

/**
 * Every member of a body at any depth, as [name (keyOf), value] pairs, array items under their
 * member's name, a form's fields among them: a body says what it does anywhere in it (a batch's
 * sub-requests, `{_method: ["DELETE"]}`). Bounded; past the bound, `over` is set.
 */
function walkMembers(body) {
  const out = [];
  // The names of what holds more members ({recipients: [{address: {email}}]}: a recipient).
  out.containers = new Set();
  const walk = (v, name, depth) => {
    if (out.length >= MAX_WALK || depth > MAX_WALK_DEPTH) {
      out.over = true;
      return;
    }
    if (name !== null && v && typeof v === 'object') out.containers.add(name);
    if (Array.isArray(v)) for (const x of v) walk(x, name, depth + 1);
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, keyOf(k), depth + 1);
    else if (name !== null) out.push([name, v]);
  };
  walk(body, null, 0);
  return out;
}

/** A body's own members, with a form's fields among them, for the card: [name, value] pairs. */
function membersOf(body) {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return [];
  const plainForm = body.form && typeof body.form === 'object' && !Array.isArray(body.form);
  const out = Object.entries(body).filter(([k]) => k !== 'form' || !plainForm);
  if (plainForm) out.push(...Object.entries(body.form));
  return out;
}

/** The URL's members as [name (keyOf), value] pairs, or [] for no URL. */
function queryOf(url) {
  try {
    return [...new URL(url).searchParams].map(([k, v]) => [keyOf(k), v]);
  } catch {
    return [];
  }
}

/**
 * What a call is judged by (see the top of this file): {opNames: its operations' names (GraphQL's,
 * JSON-RPC's), urlNames: the query's and the path's, memberNames: what its members name (an
 * action, a sub-request's method or URL), methods: every method it may stand for by an override,
 * recipients: whether a member names one, gql, unread: a GraphQL document in it (body or URL)
 * that could not be read, over: a body too large to walk}.
 */
function judgedOf(url, body) {
  const opNames = [];
  const urlNames = [];
  const memberNames = [];
  // What the action members (body and query) say, read as a GET's are.
  const acts = [];
  const methods = [];
  const gql = graphqlOf(body);
  let unread = gql?.unread === true;
  if (gql) opNames.push(...[gql.name].filter(Boolean), ...(gql.operations ?? []), ...gql.judged);
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    // A persisted query names its operation only by operationName; a JSON-RPC call by method.
    if (typeof body.operationName === 'string') opNames.push(body.operationName);
    if (typeof body.method === 'string' && ('jsonrpc' in body || 'params' in body || 'id' in body)) opNames.push(body.method);
  }
  const members = walkMembers(body);
  let recipients = [...members.containers].some((k) => RECIPIENT_KEYS.has(k) || RECIPIENT_NAME.test(k));
  for (const [k, v] of members) {
    if (RECIPIENT_KEYS.has(k) || RECIPIENT_NAME.test(k)) recipients = true;
    // Rails' nested attributes delete what carries a true _destroy.
    if (k === '_destroy' && (v === true || v === 1 || v === '1' || v === 'true')) methods.push('DELETE');
    if (typeof v !== 'string') continue;
    if (OVERRIDE_KEYS.has(k)) methods.push(v.trim().toUpperCase());
    if (actionKey(k)) {
      memberNames.push(v);
      acts.push(actionVerdict(v));
    } else if (URL_KEYS.has(k)) memberNames.push(v);
    // A GraphQL document deeper in (a batch's item): what it runs counts too.
    if (k === 'query' && body?.query !== v) {
      const inner = graphqlOf({ query: v });
      if (inner) opNames.push(...inner.judged);
      if (inner?.unread) unread = true;
    }
  }
  const query = queryOf(url);
  for (const [k, v] of query) {
    urlNames.push(k);
    if (RECIPIENT_KEYS.has(k) || RECIPIENT_NAME.test(k)) recipients = true;
    if (OVERRIDE_KEYS.has(k)) methods.push(v.trim().toUpperCase());
    if (actionKey(k)) {
      urlNames.push(v);
      acts.push(actionVerdict(v));
    }
    // A GraphQL document in the URL, which a server may run over the body's.
    if (k === 'query') {
      const inUrl = graphqlOf({ query: v });
      if (inUrl) urlNames.push(...inUrl.judged);
      if (inUrl?.unread) unread = true;
    }
  }
  try {
    for (const seg of new URL(url).pathname.split('/')) if (seg) urlNames.push(seg);
  } catch {
    // no URL: no path
  }
  const acted = acts.find((a) => a?.kind === 'delete') ?? acts.find(Boolean) ?? null;
  return { opNames, urlNames, memberNames, acted, methods, recipients, gql, unread, over: members.over === true, query };
}

/** The strictest verdict words give: delete, outward, or null. */
function verdictOf(names) {
  const each = names.map(wordsOf);
  const words = each.flat();
  // A phrase of the delete table within one name: cancelSubscription, empty_trash.
  const del = words.find((w) => DELETE_WORDS.has(w)) ?? words.map((w) => joined(w, JOINED_DELETE)).find(Boolean) ??
    each.map(deletePhraseIn).find(Boolean);
  if (del) return { kind: 'delete', word: del };
  const out = words.find((w) => OUTWARD_WORDS.has(w)) ?? words.map((w) => joined(w, JOINED_OUTWARD)).find(Boolean);
  return out ? { kind: 'outward', word: out } : null;
}

const STRICTNESS = ['read', 'write', 'outward', 'delete'];
const MAX_BATCH = 50;

/**
 * {kind: 'read'|'write'|'outward'|'delete', word} of a call. `word`: what decided (a word of a
 * name, 'DELETE', 'recipient'), or null.
 */
export function classifyCall({ method, url, body }) {
  const m = String(method ?? 'GET').toUpperCase();
  if (READ_METHODS.includes(m)) {
    // A GET reads unless its URL says it acts (lib/api-get.js); one that stands for another
    // method is judged as that one.
    const acts = actingGet(url);
    if (acts?.method) return classifyCall({ method: acts.method, url });
    return acts ?? { kind: 'read', word: null };
  }
  // A batch of GraphQL requests is as strict as its strictest; any other list (records, JSON-RPC
  // or other sub-requests) is judged as one body, every item walked.
  if (Array.isArray(body) && body.length > 0 && body.length <= MAX_BATCH &&
      body.every((x) => x && typeof x === 'object' && !Array.isArray(x) && typeof x.query === 'string')) {
    return body.map((item) => classifyCall({ method: m, url, body: item }))
      .reduce((a, b) => (STRICTNESS.indexOf(b.kind) > STRICTNESS.indexOf(a.kind) ? b : a));
  }
  const j = judgedOf(url, body);
  if (m === 'DELETE' || j.methods.includes('DELETE')) return { kind: 'delete', word: 'DELETE' };
  if (j.over) return { kind: 'outward', word: 'body' };
  // The URL's words first: a query-shaped body makes no POST to /api/drafts/42/send a read.
  const byUrl = verdictOf(j.urlNames);
  if (byUrl?.kind === 'delete') return byUrl;
  if (j.acted?.kind === 'delete') return j.acted;
  // A GraphQL request over POST to a GraphQL endpoint, with no query string a server could run
  // instead, whose every operation is a query: a read, whatever the fields it reads are called
  // (`query Orders { orders }` reads orders).
  if (!byUrl && !j.unread && !j.recipients && m === 'POST' && j.gql?.queries && j.query.length === 0 &&
      graphqlEndpoint(url) && !verdictOf(j.memberNames) && !j.acted) {
    return { kind: 'read', word: null };
  }
  const verdict = verdictOf([...j.opNames, ...j.memberNames]) ?? j.acted;
  if (verdict?.kind === 'delete') return verdict;
  if (byUrl) return byUrl;
  if (verdict) return verdict;
  if (j.recipients) return { kind: 'outward', word: 'recipient' };
  // A GraphQL document that cannot be read through says nothing of what it runs: every doubt holds —
  // where it is GraphQL (a GraphQL path, or a body with variables or an operation name); elsewhere
  // a `query: "#harbour"` is a search's words.
  const graphqlish = graphqlPath(url) || (body && typeof body === 'object' && !Array.isArray(body) &&
    ('variables' in body || 'operationName' in body));
  if (j.unread && graphqlish) return { kind: 'outward', word: 'graphql' };
  return { kind: 'write', word: null };
}

const graphqlEndpoint = (url) => {
  try {
    return new URL(url).search === '' && graphqlPath(url);
  } catch {
    return false;
  }
};

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
  // The document as it is, with what the redactor masks masked (an IBAN in an argument), not
  // hidden whole as one secret value would be.
  if (document !== null) fields.push(fieldOf('query', redactText(document).text, MAX_DOCUMENT_SHOWN));
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
