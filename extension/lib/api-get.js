// SPDX-License-Identifier: GPL-3.0-or-later
// A GET that acts. Many server-rendered sites delete or send on a link that carries a nonce:
// WordPress's post.php?action=trash, OpenCart's cart?remove=…, ASP.NET MVC's /Posts/Delete/5,
// Magento's /checkout/cart/delete/id/5/…, SquirrelMail's empty_trash.php, Slack's GET
// chat.postMessage, Joomla's task=articles.delete. A GET or HEAD (the same handler on most
// servers) reads unless its URL says it deletes or sends, as a server reads the URL:
// - a query member named by a delete verb or phrase (?delete=5, ?removeItem=3, ?deleteIndex=true)
//   or by a send verb alone (?send=1), unless its value says no (?publish=false) or it names a
//   field of the act (cancel_url, deleted_at) — but not a form's submit button (?submit=Search);
// - an action member's value (actionKey: the keys of actions, bulk actions, sub-actions and
//   dispatchers, as a body's are judged too — action2, _action, actionID, _eventId, handler,
//   dispatch, cmd…, any key ending in _cmd or _action — and the query's a and m), its last part
//   where it names a controller too (r=post/delete, task=articles.delete;
//   route=checkout/cart is the cart), any of its words (myplugin_delete_item): a delete verb or
//   phrase, or a verb that sends or pays (?action=refund); nouns that show a form (?mode=reply,
//   ?action=post, ?r=order) and write verbs (?action=edit) are left to the page, as a control
//   that opens a form would be;
// - a path step that is a delete or send verb alone (/Users/Delete/bob, …/cart/delete/id/5/…),
//   and the path's operation step — the last, or the one before only ids and an `id` step
//   (/post/delete/id/5) — cut of its extension and path parameter (delete.php, DeleteUser.do,
//   chat.delete;jsessionid=…), as a name: words run together in any case (deleteAllMessages,
//   dElete, removetopic2), by "_" (delete_all; a capitalized one is a wiki title: Delete_key), or
//   at most three by "-" (a longer one is a post's slug), that starts with a delete verb or phrase
//   (cancelSubscription, empty_trash) or a verb that sends — a verb that is also a noun
//   (transfer, pay, post) only ahead of another word (transferFunds, postMessage: GET
//   /api/transfer/5 reads one); never a title (escaped, with a space), a noun ("GET
//   /api/messages" reads them), or a verb's past or agent (deleteditems, senders). A path in the
//   query (index.php?/posts/delete/5) is read as one;
// - a recipient with an address (?to=ann@example.com, ?to=+15551234, ?to=447700900000) beside
//   something to send (text, body, message, subject): a log filtered by recipient reads, and a
//   range's `to` is a date or a time;
// - a method override or a GraphQL mutation in the query (judged as over POST), and a GraphQL
//   document at a GraphQL endpoint that cannot be read through.
// Query members are split at ";" too (SMF, CGI.pm and Rack read it as "&").

import { graphqlOf, isIdSegment } from './api-shape.js';
import {
  DELETE_WORDS, OVERRIDE_KEYS, RECIPIENT_KEYS, RECIPIENT_NAME, actionKey, deletePhraseIn, graphqlPath, keyOf,
  outwardPhraseIn, wordsOf,
} from './api-words.js';

const WRITE_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE'];
// Verbs that send. Alone, a name is one only if it can be nothing else; as a name's first word,
// these and the verbs that are nouns too, ahead of what they send (transferFunds, postMessage,
// sendVerificationEmail; sendLog and publishQueue are lists).
const SEND_ALONE = new Set(['send', 'resend', 'publish', 'submit', 'tweet', 'retweet', 'repost']);
const SEND_VERBS = new Set([...SEND_ALONE, 'pay', 'transfer', 'broadcast', 'forward', 'post', 'copy', 'schedule',
  'place', 'make']);
const SENT = new Set(['message', 'messages', 'mail', 'email', 'emails', 'sms', 'dm', 'pm', 'chat', 'tweet', 'status',
  'comment', 'reply', 'post', 'invite', 'invites', 'invitation', 'invoice', 'invoices', 'money', 'funds', 'payment',
  'transfer', 'notification', 'notifications', 'newsletter', 'campaign', 'order', 'text', 'fax', 'tip', 'gift']);
// As an action's value: what sends or pays (?action=refund); not what shows a form (post, reply).
const ACTION_SEND_WORDS = new Set([...SEND_ALONE, 'pay', 'transfer', 'broadcast', 'forward', 'refund', 'charge',
  'payout', 'purchase', 'buy', 'invite', 'notify', 'donate', 'sendmail']);
// Money moves: a pay or transfer step with an amount beside it (GET /transfer.do?amount=…).
const MONEY_WORDS = new Set(['pay', 'payment', 'transfer', 'withdraw', 'withdrawal', 'payout', 'charge', 'refund',
  'donate']);
const AMOUNT_KEYS = new Set(['amount', 'sum', 'total', 'value', 'amt']);
// The operations verbs that destroy on admin panels, mail and file managers, beyond the click
// table's.
const OPS_DELETE_WORDS = ['rm', 'unlink', 'kill', 'undeploy', 'drop', 'cancel', 'del', 'expunge'];
// Trash is a folder in a path or a key (GET /api/mail/trash lists it); as an action it trashes.
const NAME_DELETE_WORDS = new Set([...DELETE_WORDS, ...OPS_DELETE_WORDS].filter((w) => w !== 'trash'));
const ACTION_DELETE_WORDS = new Set([...DELETE_WORDS, ...OPS_DELETE_WORDS]);
// A step that is only this clears what it is under (/cart/clear, /trash/empty).
const STEP_DELETE_WORDS = new Set([...NAME_DELETE_WORDS, 'clear', 'empty']);
const DELETE_STEMS = ['delete', 'remove', 'destroy', 'purge', 'erase', 'kill', 'cancel', 'expunge'];
const SEND_STEMS = ['send', 'publish'];
// A query's one-letter action members (?a=delete, ?m=remove); in a JSON body `a` and `m` are as
// often free text, so only the query reads them so.
const getActionKey = (k) => actionKey(k) || k === 'a' || k === 'm';
// Where a message goes, beside what it says (text, body…): a log filtered by recipient reads.
const RECIPIENT_GET_KEYS = new Set([...RECIPIENT_KEYS, 'number', 'numbers', 'mobile', 'msisdn', 'chat_id']);
const CONTENT_KEYS = new Set(['text', 'body', 'message', 'msg', 'subject', 'content', 'html']);
const NO = /^(?:false|0|no|off)$/i;
// Names the path step may end in that are not an operation's: what it is served as.
const EXTENSION = /\.(?:php\d?|json|xml|html?|js|do|action|aspx?|ashx|cgi|pl|jsp|py|rb)$/i;
// A name as an operation's: letters and digits, words run together or joined by "_", or at most
// three joined by "-" (more is a post's slug). (Each separator starts a new group: no two ways
// to match, no backtracking.)
const NAME = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$|^[a-z]+(?:-[a-z0-9]+){1,2}$/i;
// A member named for where, when or why an act happens, not for the act (cancel_url,
// drop_off_date, deleted_at).
const FIELD_SUFFIX = new Set(['url', 'uri', 'link', 'return', 'redirect', 'date', 'at', 'on', 'time', 'by', 'after',
  'before', 'reason', 'count', 'type']);
// A wiki's title: capitalized words joined by "_" (Delete_key, Send_in_the_Clowns).
const TITLE = /^[A-Z][a-z0-9]*(?:_[A-Za-z0-9]+)+$/;
// A front controller's route in `q` (Drupal's ?q=node/5/delete), not a search's words.
const ROUTE_VALUE = /^[a-z0-9_-]+(?:\/[^/\s]+)+\/?$/i;

const unescape = (s) => s.replace(/%[0-9a-f]{2}/gi, (e) => String.fromCharCode(parseInt(e.slice(1), 16)));

/** The URL's query as a server may split it: [name, value] pairs at "&" and ";", decoded. */
function pairsOf(url) {
  return url.search.slice(1).split(/[&;]/).filter(Boolean).map((pair) => {
    const at = pair.indexOf('=');
    const [k, v] = at < 0 ? [pair, ''] : [pair.slice(0, at), pair.slice(at + 1)];
    return [unescape(k.replace(/\+/g, ' ')), unescape(v.replace(/\+/g, ' '))];
  });
}

// What a verb's past, agent or noun ends in (deleted, senders, cancellation, removal), and a
// run-together past before what it qualifies (deleteditems: Microsoft Graph's folder).
const NOT_VERB = /^(?:e?d|ers?|ing|ions?|als?|ations?|led|lations?)$/;
const PAST_OF = /^e?d(?:items|messages|files|posts|mails|users|notes|documents|records|folders|objects|entries)$/;

/**
 * The rest of a run-together name (one word, lower case) after a verb of `stems` it starts with
 * ("deleteaccount" → account, "killdns" → dns), or null where it goes on as the verb's past,
 * agent or noun, or is too short to be a word of its own ("sendai").
 */
function afterVerb(w, stems) {
  for (const s of stems) {
    if (!w.startsWith(s) || w.length < s.length + 2) continue;
    const rest = w.slice(s.length);
    if (!NOT_VERB.test(rest) && !PAST_OF.test(rest)) return rest;
  }
  return null;
}

/** Whether a run-together action has a verb of `stems` inside (dodeletethreads), neither undone nor past. */
function hasVerbInside(w, stems) {
  return stems.some((s) => {
    const at = w.indexOf(s);
    return at >= 0 && w.slice(Math.max(0, at - 2), at) !== 'un' && !NOT_VERB.test(w.slice(at + s.length));
  });
}

/**
 * 'delete', 'outward' or null: what a name (a path step, a key, an action's value) says it does.
 * `action`: an action's value, where any word counts and trash trashes.
 */
function verdictOfName(name, { action = false } = {}) {
  const words = wordsOf(String(name).trim());
  const whole = String(name).toLowerCase().replace(/[^a-z]/g, '');
  const first = words[0] ?? '';
  // One word run together ("deleteaccount"): read past its verb; words apart are read as words.
  const single = words.length === 1;
  const deletes = action ? ACTION_DELETE_WORDS : NAME_DELETE_WORDS;
  const runTogether = action && single &&
    (afterVerb(whole, ['trash', 'empty']) !== null || hasVerbInside(whole, DELETE_STEMS));
  const del = (action ? words.find((w) => deletes.has(w)) : deletes.has(first) ? first : null) ??
    (deletes.has(whole) || (single && afterVerb(whole, DELETE_STEMS) !== null) || runTogether ? whole : null) ??
    (action && first === 'empty' && words.length > 1 ? whole : null) ??
    deletePhraseIn(action ? words : words.slice(0, 3));
  if (del) return { kind: 'delete', word: del };
  const ahead = words.length > 1 && SEND_VERBS.has(first) && words.slice(1).some((w) => SENT.has(w));
  const joined = single && SENT.has(afterVerb(whole, SEND_STEMS) ?? '');
  const send = action
    ? words.find((w) => ACTION_SEND_WORDS.has(w)) ??
      (single && (hasVerbInside(whole, SEND_STEMS) || joined) ? whole : null)
    : (SEND_ALONE.has(whole) || ahead ? first : null) ?? (joined ? whole : null);
  const phrase = send ? null : outwardPhraseIn(action ? words : words.slice(0, 3));
  return send || phrase ? { kind: 'outward', word: send ?? phrase } : null;
}

/**
 * The names a path says what it does by: each step that is a delete or send verb alone, and the
 * operation step (see above).
 */
function pathNames(path) {
  // Split at the slashes a server may see too: an escaped one (%2F, decoded by some proxies) or
  // a backslash (%5C, a slash to IIS), so "/notes/..%2Faccount%2Fdelete" says its "delete".
  const steps = path.split('/').flatMap((raw) => unescape(raw.split(';')[0]).split(/[/\\]/))
    .map((s) => s.trim()).filter(Boolean);
  const out = steps.filter((s) => STEP_DELETE_WORDS.has(s.toLowerCase()) || SEND_ALONE.has(s.toLowerCase()));
  let i = steps.length - 1;
  // Ids after the operation are passed over; one that is a name may be the operation itself
  // (deleteAllSessionsV2 is long and has a digit, as an id does).
  for (; i > 0 && isIdSegment(steps[i]); i -= 1) if (NAME.test(steps[i]) && !TITLE.test(steps[i])) out.push(steps[i]);
  if (i > 0 && i < steps.length - 1 && steps[i].toLowerCase() === 'id') i -= 1;
  if (i < 0) return out;
  const parts = steps[i].replace(EXTENSION, '').split('.');
  // A dotted method (Slack's chat.delete, Flickr's photos.delete) says its verb last.
  const name = parts[parts.length - 1];
  if (NAME.test(name) && !TITLE.test(name)) out.push(name);
  return out;
}

// An action's operation: its last part where it names a controller too (r=post/delete,
// task=articles.delete).
const actionStep = (value) => String(value).split(/[/.:]/).filter(Boolean).pop() ?? '';

/**
 * What an action member's value (?action=…, {dispatch: …}) says it does, whatever the method:
 * {kind: 'delete' | 'outward', word} or null. Any of its words counts, run-together verbs are
 * read (dodeletethreads), and emptying and trashing delete (empty_mailbox).
 */
export const actionVerdict = (value) => verdictOfName(actionStep(value), { action: true });

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
  const keys = new Set(pairs.map(([k]) => keyOf(k)));
  const says = [...keys].some((k) => CONTENT_KEYS.has(k));
  const names = pathNames(u.pathname);
  const actions = [];
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
    // A path in the query, as a front controller routes it (index.php?/posts/delete/5, ?q=node/5/delete).
    if (raw.startsWith('/') && value === '') names.push(...pathNames(raw));
    if (k === 'q' && ROUTE_VALUE.test(value)) names.push(...pathNames(value));
    // A recipient beside what is sent, when it is an address (a range's `to` is a date or a time).
    if (says && (RECIPIENT_GET_KEYS.has(k) || RECIPIENT_NAME.test(k)) && isAddress(value)) {
      found ??= { kind: 'outward', word: 'recipient' };
    }
    // A key is judged by its name (?delete=5, ?removeItem=3; a send as the whole name, ?send=1),
    // unless its value says no or the name is a field's (cancel_url).
    const bare = raw.replace(/\[.*$/, '');
    const byKey = NO.test(value.trim()) || k === 'submit' || FIELD_SUFFIX.has(wordsOf(bare).at(-1)) ? null
      : verdictOfName(bare);
    if (byKey?.kind === 'delete' || (byKey && SEND_ALONE.has(k))) found = strictest(found, byKey);
    if (getActionKey(k)) {
      actions.push(actionStep(value));
      found = strictest(found, actionVerdict(value));
    }
  }
  for (const name of names) {
    const alone = name.toLowerCase();
    found = strictest(found, STEP_DELETE_WORDS.has(alone) ? { kind: 'delete', word: alone } : verdictOfName(name));
  }
  // Money that moves: a pay or transfer step or action with an amount (GET /transfer.do?amount=…).
  if (!found && [...keys].some((k) => AMOUNT_KEYS.has(k)) &&
      [...names, ...actions].some((n) => wordsOf(n).some((w) => MONEY_WORDS.has(w)))) {
    found = { kind: 'outward', word: 'amount' };
  }
  return found;
}

/**
 * Whether a recipient member's value is an address: an email address, or a phone number written
 * as one (+…, or 11 to 15 digits: international without the +; ten are a time in seconds, as in
 * a range's ?to=1700086400).
 */
function isAddress(value) {
  const t = value.trim();
  return t.includes('@') || /^\+\d[\d\s().-]{5,}\d$/.test(t) || /^\d{11,15}$/.test(t);
}

function strictest(a, b) {
  if (!a || !b) return a ?? b;
  return b.kind === 'delete' && a.kind !== 'delete' ? b : a;
}
