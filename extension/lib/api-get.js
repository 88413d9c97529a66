// SPDX-License-Identifier: GPL-3.0-or-later
// A GET that acts. Many server-rendered sites delete or send on a link that carries a nonce:
// WordPress's post.php?action=trash, OpenCart's cart?remove=…, ASP.NET MVC's /Posts/Delete/5,
// Slack's GET chat.delete, Joomla's task=articles.delete. A GET or HEAD (the same handler on most
// servers) reads unless its URL says it deletes or sends, as a server reads the URL:
// - a query member named by a delete verb (?delete=5, ?removeItem=3, deleteIndex=true), or
//   named by a send verb alone (?send=1);
// - an action member's value (ACTION_KEYS and the keys of bulk and sub-actions: action2,
//   _action, sa…), the last part of it where it names a controller too (r=post/delete,
//   task=articles.delete, route=checkout/cart is the cart): a delete or send verb, where nouns
//   that are verbs as an action count (?action=refund, ?action=invite);
// - the path's operation step: the last step, or the one before only numbers, ids and an `id`
//   step (/Posts/Delete/5, /post/delete/id/5), a file extension and a path parameter cut
//   (delete.php, delete.json, DeleteUser.do, chat.delete;jsessionid=…), a name of words run
//   together in any case (deleteAllMessages, dElete, removetopic2) or at most two joined by a
//   hyphen (a longer one is a slug: send-money-abroad-cheaply), starting with a delete or send
//   verb — a verb that is a noun too (transfer, pay) only ahead of another word (transferFunds:
//   GET /api/transfer/5 reads one): a step that is a title (escaped, with a space) is data, and
//   nouns never count ("GET /api/messages" reads them), nor a verb's past or agent
//   (deleteditems, senders);
// - a recipient with an address (?to=ann@example.com, ?to=+15551234), not a range's `to`
//   (?from=…&to=…, a date);
// - a method override or a GraphQL mutation in the query (judged as over POST), and a GraphQL
//   document at a GraphQL endpoint that cannot be read through.
// Query members are split at ";" too (SMF, CGI.pm and Rack read it as "&"). Write verbs (save,
// edit, approve) are left to the page: a GET …/edit shows a form, and only what deletes or sends
// is never done without the person.

import { graphqlOf, isIdSegment } from './api-shape.js';
import {
  ACTION_KEYS, DELETE_WORDS, OVERRIDE_KEYS, RECIPIENT_NAME, TABLE, graphqlPath, keyOf, singleWords, wordsOf,
} from './api-words.js';

const WRITE_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE'];
// Verbs that send. Alone, a name is one of them only if it can be nothing else ("GET /api/transfer/5"
// reads a transfer, "GET /checkout" shows a page); as a name's first word of two or more, any
// (transferFunds, payInvoice).
const SEND_ALONE = new Set(['send', 'resend', 'publish', 'submit', 'tweet', 'retweet', 'repost', 'forward']);
const SEND_VERBS = new Set([...SEND_ALONE, 'pay', 'transfer', 'broadcast']);
// As an action's value, words that are nouns elsewhere are what is done (?action=refund).
const ACTION_SEND_WORDS = new Set([...SEND_VERBS, ...[...singleWords(TABLE?.outward)].filter((w) => w !== 'message'),
  'checkout', 'refund', 'charge', 'payout', 'purchase', 'order', 'invite', 'notify', 'email', 'mail', 'donate',
  'post', 'reply', 'comment', 'share', 'buy']);
// The bulk and sub-action keys of CMSs and forums, beside the action members every call has.
const GET_ACTION_KEYS = new Set([...ACTION_KEYS, 'action2', '_action', 'sa', 'subaction', 'a', 'doaction', 'func',
  'function']);
// Trash is a folder in a path or a key (GET /api/mail/trash lists it); as an action it trashes.
const NAME_DELETE_WORDS = new Set([...DELETE_WORDS].filter((w) => w !== 'trash'));
const DELETE_STEMS = ['delete', 'remove', 'destroy', 'purge', 'erase'];
const SEND_STEMS = ['send', 'publish'];
// Names the path step may end in that are not an operation's: what it is served as.
const EXTENSION = /\.(?:php\d?|json|xml|html?|do|action|aspx?|ashx|cgi|pl|jsp|py|rb)$/i;
// A name as an operation's: letters and digits, words run together or joined by "_", or at most
// two joined by "-". (Each "_" starts a new group: no two ways to match, no backtracking.)
const NAME = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$|^[a-z]+-[a-z]+$/i;
// The other end of a range: a `to` beside one is where the range ends, not a recipient.
const RANGE_KEYS = new Set(['from', 'since', 'start', 'begin', 'min', 'gte', 'after']);

const unescape = (s) => s.replace(/%[0-9a-f]{2}/gi, (e) => String.fromCharCode(parseInt(e.slice(1), 16)));

/** The URL's query as a server may split it: [name, value] pairs at "&" and ";", decoded. */
function pairsOf(url) {
  return url.search.slice(1).split(/[&;]/).filter(Boolean).map((pair) => {
    const at = pair.indexOf('=');
    const [k, v] = at < 0 ? [pair, ''] : [pair.slice(0, at), pair.slice(at + 1)];
    return [unescape(k.replace(/\+/g, ' ')), unescape(v.replace(/\+/g, ' '))];
  });
}

/**
 * Whether `w` (lower case, letters) starts with one of `stems` and goes on as another word does
 * ("deleteaccount", "removetopic"), not as the verb's past or agent ("deleteditems", "senders").
 */
function startsWithVerb(w, stems) {
  return stems.some((s) => w.startsWith(s) && w.length > s.length && !/^(?:e?d|ers?|ing)/.test(w.slice(s.length)));
}

/** 'delete', 'outward' or null: what a name (a step, a key, an action's value) says it does. */
function verdictOfName(name, { action = false } = {}) {
  const words = wordsOf(name);
  const whole = String(name).toLowerCase().replace(/[^a-z]/g, '');
  const first = words[0] ?? '';
  const deletes = action ? DELETE_WORDS : NAME_DELETE_WORDS;
  if (deletes.has(first) || deletes.has(whole) || startsWithVerb(whole, DELETE_STEMS) ||
      (action && (startsWithVerb(whole, ['trash']) || DELETE_STEMS.some((s) => whole.endsWith(s))))) {
    return { kind: 'delete', word: deletes.has(first) ? first : whole };
  }
  const sends = action ? ACTION_SEND_WORDS.has(first) || ACTION_SEND_WORDS.has(whole) ||
      SEND_STEMS.some((s) => whole.endsWith(s))
    : SEND_ALONE.has(whole) || (words.length > 1 && SEND_VERBS.has(first));
  if (sends || startsWithVerb(whole, SEND_STEMS)) {
    return { kind: 'outward', word: SEND_VERBS.has(first) || ACTION_SEND_WORDS.has(first) ? first : whole };
  }
  return null;
}

/** Whether a recipient member's value is an address: an email address, or a phone number. */
function isAddress(value, pairs) {
  if (value.includes('@')) return true;
  const t = value.trim();
  if (/^\d{4}-\d{2}-\d{2}/.test(t) || pairs.some(([k]) => RANGE_KEYS.has(keyOf(k)))) return false;
  return /^\+?\d[\d\s().-]{5,}\d$/.test(t);
}

/** The step of the path that may name the operation (see above), as a name, or null. */
function operationStep(url) {
  const steps = url.pathname.split('/').filter(Boolean)
    .map((raw) => unescape(raw.split(';')[0]));
  let i = steps.length - 1;
  while (i > 0 && isIdSegment(steps[i])) i -= 1;
  if (i > 0 && i < steps.length - 1 && steps[i].toLowerCase() === 'id') i -= 1;
  if (i < 0) return null;
  const parts = steps[i].replace(EXTENSION, '').split('.');
  // A dotted method (Slack's chat.delete, Flickr's photos.delete) says its verb last.
  const name = parts[parts.length - 1];
  return NAME.test(name) ? name : null;
}

/**
 * What a GET or HEAD to `url` does when its URL says it acts: {kind: 'delete' | 'outward', word},
 * {method} when it stands for another method (an override, a GraphQL mutation: judge it as that
 * one), or null for a read.
 */
export function actingGet(url) {
  let u;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  const pairs = pairsOf(u);
  let found = null;
  for (const [raw, value] of pairs) {
    const k = keyOf(raw);
    const meant = OVERRIDE_KEYS.has(k) ? value.trim().toUpperCase() : null;
    if (meant && WRITE_METHODS.includes(meant)) return { method: meant };
    if (k === 'query') {
      const gql = graphqlOf({ query: value });
      if (gql && !gql.unread && !gql.queries) return { method: 'POST' };
      if (gql?.unread && graphqlPath(url)) return { kind: 'outward', word: 'graphql' };
    }
    if (RECIPIENT_NAME.test(k) && isAddress(value, pairs)) found ??= { kind: 'outward', word: 'recipient' };
    // A key is judged by its name: ?delete=5, ?removeItem=3; a send only as the whole name (?send=1,
    // not ?sendDate=…).
    const byKey = verdictOfName(raw.replace(/\[.*$/, ''));
    if (byKey?.kind === 'delete' || (byKey && SEND_ALONE.has(k))) found = strictest(found, byKey);
    if (GET_ACTION_KEYS.has(k)) {
      const last = value.split(/[/.:]/).filter(Boolean).pop() ?? '';
      found = strictest(found, verdictOfName(last, { action: true }));
    }
  }
  const step = operationStep(u);
  return strictest(found, step ? verdictOfName(step) : null);
}

function strictest(a, b) {
  if (!a || !b) return a ?? b;
  return b.kind === 'delete' && a.kind !== 'delete' ? b : a;
}
