// SPDX-License-Identifier: GPL-3.0-or-later
// The words a call of the site's own API is judged by (lib/api-outward.js for any call,
// lib/api-get.js for a GET that acts): the clicks' word table (src/core/policy/outward-words.json,
// as written into content/outward.js) plus the nouns APIs name their outward collections with,
// the members that name an operation, a recipient or another method, and how a server reads a
// name. Pure, so Node tests run it; the worker imports outward.js for its table (a classic script
// that publishes it).

import '../content/outward.js';

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
export const RECIPIENT_KEYS = new Set(['to', 'recipient', 'recipients', 'cc', 'bcc', 'phone', 'email_to', 'send_to']);
// Query and body members whose value names the operation (?action=send, ?method=photos.delete):
// Joomla's task, Yii's r and route, and the bulk and sub-action keys of CMSs, forums and web
// frameworks, in a body as in a query (POST /user.do {dispatch: "delete"} deletes as the GET does).
export const ACTION_KEYS = new Set(['action', 'op', 'operation', 'do', 'cmd', 'command', 'intent', 'verb', 'method', 'task',
  'r', 'route', 'act', 'mode', 'action2', '_action', 'actionid', '_eventid', 'eventid', 'handler', 'dispatch', 'sa',
  'subaction', 'doaction', 'func', 'function']);
/** Whether a member (as keyOf reads it) names the operation: ACTION_KEYS, or a name ending _cmd or _action. */
export const actionKey = (k) => ACTION_KEYS.has(k) || k.endsWith('_cmd') || k.endsWith('_action');
// A recipient member by its name's forms: to, recipient_id, recipientIds (as keyOf reads them).
export const RECIPIENT_NAME = /^(?:to|cc|bcc|recipients?|send_?to|email_?to)(?:_?(?:id|ids|email|emails|address|addresses|user|users|list))?$/;

/** The words of a name: split at non-letters and camelCase ("sendMessage" → send, message). */
export function wordsOf(name) {
  // Each escape on its own, as a server decodes what it can ("%64elete;x=%zz" is delete).
  const s = String(name ?? '').replace(/%[0-9a-f]{2}/gi, (e) => String.fromCharCode(parseInt(e.slice(1), 16)));
  // "HTMLParser" is HTML, Parser: a capital before a capitalized word ends a word (a lookahead,
  // linear on a long run of capitals).
  return s.replace(/([a-z])([A-Z])/g, '$1 $2').replace(/([A-Z])(?=[A-Z][a-z])/g, '$1 ')
    .toLowerCase().split(/[^a-z]+/).filter(Boolean);
}

// The table's phrases, as words (cancelSubscription, empty_trash, clearHistory, placeOrder).
const phrasesOf = (row) => Object.entries(row ?? {}).filter(([lang]) => lang !== 'zh')
  .flatMap(([, words]) => words).filter((w) => /^[a-z]+(?: [a-z]+)+$/.test(w)).map((w) => w.split(' '));
const DELETE_PHRASES = phrasesOf(TABLE?.delete);
const OUTWARD_PHRASES = phrasesOf(TABLE?.outward);

function phraseIn(words, phrases) {
  for (const phrase of phrases) {
    for (let i = 0; i + phrase.length <= words.length; i++) {
      if (phrase.every((w, j) => words[i + j] === w)) return phrase.join(' ');
    }
  }
  return null;
}

/** The delete phrase `words` (a name's, in order) has in them, joined by spaces, or null. */
export const deletePhraseIn = (words) => phraseIn(words, DELETE_PHRASES);
/** The outward phrase (place order, send money…) `words` have in them, or null. */
export const outwardPhraseIn = (words) => phraseIn(words, OUTWARD_PHRASES);

/**
 * A member's name as a server reads it: leading blanks gone, a bracketed name's innermost part
 * (Rails' and PHP's `note[to]`; an index's outer name), and PHP's "_" for ".", "-" and blanks inside.
 */
export function keyOf(k) {
  let n = String(k).replace(/^\s+/, '').toLowerCase();
  for (let open = n.lastIndexOf('['); open >= 0; open = n.lastIndexOf('[')) {
    let end = n.length;
    while (end > open + 1 && n[end - 1] === ']') end -= 1;
    const inner = n.slice(open + 1, end);
    // An index (`action[0]`, `note[to][]`) is an item of the name before it: qs makes
    // action[0]=delete ['delete'], which is 'delete' to a loose comparison.
    if (open > 0 && (inner === '' || /^\d+$/.test(inner))) {
      n = n.slice(0, open);
      continue;
    }
    n = inner || n.slice(0, open);
    break;
  }
  return n.replace(/[-. ]/g, '_');
}

// Where a POST says which method it stands for (Rails', Laravel's and others' _method; the
// X-HTTP-Method-Override convention as a member or a query key): the server acts as that one.
export const OVERRIDE_KEYS = new Set(['_method', 'x_http_method_override', 'x_http_method', 'x_method_override']);
// Members whose value is where a sub-request goes (a $batch's), judged by its words.
export const URL_KEYS = new Set(['url', 'relative_url', 'uri', 'href', 'path', 'endpoint']);

// Words a route may run together with another ("deleteaccount", "sendmessage"; routes match
// without case on many servers): found at either end of a word too.
export const JOINED_DELETE = ['delete', 'remove', 'destroy', 'purge', 'trash'];
export const JOINED_OUTWARD = ['send', 'message', 'payment', 'invoice', 'transfer', 'publish', 'checkout', 'broadcast', 'campaign'];
export const joined = (w, stems) => stems.find((s) => w.length > s.length + 2 && (w.startsWith(s) || w.endsWith(s)));

// A GraphQL endpoint says so in its path (/graphql, /api/gql): a body elsewhere that looks like
// a query is judged as the write its method is.
const GRAPHQL_PATH = new Set(['graphql', 'gql']);

/** Whether a URL's path names a GraphQL endpoint (graphql or gql as a word of a step). */
export function graphqlPath(url) {
  try {
    return new URL(url).pathname.split('/').some((seg) => wordsOf(seg).some((w) => GRAPHQL_PATH.has(w)));
  } catch {
    return false;
  }
}
