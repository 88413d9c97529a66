// SPDX-License-Identifier: GPL-3.0-or-later
// Which calls of a site's own API are held for the person (extension/lib/api-outward.js): sends,
// payments, publishing and campaigns are outward, DELETE (or a delete operation) deletes, other
// writes are writes a plan may cover, reads are never held; and what the card shows of the body.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  DELETE_WORDS, OUTWARD_WORDS, canonicalOf, classifyCall, heldCall, holdFields, wordsOf,
} from '../../extension/lib/api-outward.js';
import { isMarkerHeader } from '../../extension/lib/api-shape.js';

const APP = 'https://app.example';
const JWT = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abcdefghi';
const kind = (method, path, body) => classifyCall({ method, url: APP + path, body }).kind;

test('the word table is the clicks\' table (outward-words.json) plus the nouns APIs use', () => {
  for (const w of ['send', 'publish', 'tweet', 'comment', 'pay', 'checkout', 'transfer', 'envoyer', 'payer']) {
    assert.ok(OUTWARD_WORDS.has(w), w);
  }
  for (const w of ['messages', 'mail', 'payments', 'invoice', 'billing', 'campaign', 'broadcast', 'charge']) {
    assert.ok(OUTWARD_WORDS.has(w), w);
  }
  for (const w of ['delete', 'remove', 'destroy', 'supprimer']) assert.ok(DELETE_WORDS.has(w), w);
  assert.deepEqual(wordsOf('sendMessage'), ['send', 'message']);
  assert.deepEqual(wordsOf('chat.postMessage'), ['chat', 'post', 'message']);
  assert.deepEqual(wordsOf('send_invoice-now'), ['send', 'invoice', 'now']);
});

test('messages, mail, sends, posts, payments, invoices, campaigns and transfers are outward', () => {
  assert.equal(kind('POST', '/api/messages', { to: 'a', text: 'hi' }), 'outward');
  assert.equal(kind('POST', '/mail/send'), 'outward');
  assert.equal(kind('POST', '/api/v1/statuses', { status: 'hello' }), 'outward');
  assert.equal(kind('POST', '/wp-json/wp/v2/posts', { title: 'x' }), 'outward');
  assert.equal(kind('POST', '/api/posts/7/comments', { text: 'x' }), 'outward');
  assert.equal(kind('POST', '/api/payments', { amount: 10 }), 'outward');
  assert.equal(kind('POST', '/checkout/session'), 'outward');
  assert.equal(kind('POST', '/billing/invoices/12/finalize'), 'outward');
  assert.equal(kind('POST', '/api/campaigns/5/start'), 'outward');
  assert.equal(kind('POST', '/api/broadcasts'), 'outward');
  assert.equal(kind('POST', '/bank/transfer', { amount: 1 }), 'outward');
  assert.equal(kind('PATCH', '/api/messages/5', { text: 'draft' }), 'outward', 'every doubt holds');
  assert.equal(kind('POST', '/api/things', { recipients: ['a'] }), 'outward', 'a body that names recipients sends');
  assert.equal(kind('POST', '/api/do?action=send'), 'outward', 'an action in the query');
  assert.equal(kind('POST', '/rpc', { action: 'publish' }), 'outward', 'an action in the body');
});

test('GraphQL mutations and JSON-RPC methods are judged by their operation', () => {
  assert.equal(kind('POST', '/graphql', { query: 'mutation { sendMessage(to: 1, text: "x") { id } }' }), 'outward');
  assert.equal(kind('POST', '/graphql', { operationName: 'Save', query: 'mutation Save { sendMessage { id } }' }), 'outward',
    'the first field counts even under another operation name');
  assert.equal(kind('POST', '/graphql', { query: 'mutation { updateNote(id: 1, text: "x") { id } }' }), 'write');
  assert.equal(kind('POST', '/graphql', { query: 'mutation { deleteContact(id: 1) { id } }' }), 'delete');
  assert.equal(kind('POST', '/graphql', { query: 'query { contacts { id } }' }), 'read', 'a GraphQL query reads');
  assert.equal(kind('POST', '/graphql', { query: '{ me { id } }' }), 'read');
  assert.equal(kind('POST', '/graphql', { extensions: { persistedQuery: { sha256Hash: 'abc' } } }), 'write',
    'a persisted query says nothing: held as a write');
  assert.equal(kind('POST', '/rpc', { jsonrpc: '2.0', method: 'chat.postMessage', params: { text: 'x' } }), 'outward');
  assert.equal(kind('POST', '/rpc', { jsonrpc: '2.0', method: 'notes.save', params: {} }), 'write');
  assert.equal(kind('POST', '/rpc', { jsonrpc: '2.0', method: 'files.remove', params: {} }), 'delete');
});

test('DELETE and delete operations are deletes; a plain PUT note save is a write; a plain GET reads', () => {
  assert.equal(kind('DELETE', '/api/contacts/3'), 'delete');
  assert.equal(kind('DELETE', '/api/messages/3'), 'delete', 'deleting a message sends nothing');
  assert.equal(kind('POST', '/api/contacts/3/remove'), 'delete');
  assert.equal(kind('PUT', '/api/notes/3', { text: 'buy milk' }), 'write', 'a note save; its text is not judged');
  assert.equal(kind('PUT', '/recipes/default/tiddlers/HelloThere', { title: 'HelloThere' }), 'write');
  assert.equal(kind('POST', '/api/contacts', { name: 'Ann' }), 'write');
  for (const m of ['GET', 'HEAD']) {
    assert.equal(kind(m, '/api/messages?folder=sent'), 'read', `${m} of messages reads them`);
    assert.equal(kind(m, '/api/messages/send?action=delete'), 'delete', `a ${m} that says it deletes`);
  }
});

test('a GET that acts is judged by what it says it does: its members, its operation step, overrides', () => {
  const deletes = [
    // WordPress's trash links (a bulk action's second select too), Joomla's task, Yii's route.
    '/wp-admin/post.php?post=5&action=trash&_wpnonce=0a1b2c3d4e', '/wp-admin/comment.php?c=7&action=trashcomment',
    '/wp-admin/edit.php?action=-1&action2=trash&post[]=5&_wpnonce=x', '/index.php?option=com_content&task=articles.delete&cid=4',
    '/index.php?r=post/delete&id=4', '/x?_action=delete&id=5', '/x?action[0]=delete', '/x?action=dElete', '/x?do=dodelete',
    // SMF splits its query at ";".
    '/index.php?topic=5.0;action=removetopic2;sesc=x',
    // The verb as the member's name: PHP's isset($_GET['delete']), OpenCart's cart, Solr's cores.
    '/admin/users.php?delete=5', '/cart?remove=abc', '/x?del=1', '/x?deleteId=5', '/solr/admin/cores?action=UNLOAD&deleteIndex=true',
    // The operation step, as routers read it.
    '/api/posts/5/delete', '/api/deleteaccount', '/api/users/5/deleteAccount', '/api/users/5/remove-avatar/',
    '/api/deleteAllMessages', '/posts/5/dElete', '/Posts/Delete/5', '/index.php/news/delete/5', '/post/delete/id/5',
    '/admin/delete.php?id=5', '/posts/5/delete.json', '/DeleteUser.do?id=5', '/api/chat.delete?channel=C1&ts=1',
    // Steps behind an escaped slash or backslash, which a decoding proxy or IIS follows.
    '/notes/..%2F..%2Faccount%2Fdelete', '/notes/x%2Fdelete', '/notes/x%5Cdelete',
    '/api/notes/5/%64elete', '/api/notes/5/delete;jsessionid=A1B2', '/posts/5/delete%20',
    // Any step that is a delete verb alone; a front controller's path in the query; the delete
    // table's phrases; admin panels' and mail's verbs.
    '/Users/Delete/bob', '/files/delete/report.pdf', '/checkout/cart/delete/id/5/uenc/aHR0cA,,/', '/cart/clear',
    '/index.php?/posts/delete/5', '/?q=node/5/delete', '/src/empty_trash.php?smtoken=abc', '/api/cancelSubscription',
    '/Orders/Cancel/5', '/json-api/killdns?domain=example.com', '/manager/text/undeploy?path=/examples',
    '/connector.php?cmd=rm&targets[]=l1_Zm9v', '/imp/message.php?actionID=delete_message&uid=5',
    '/imp/mailbox.php?actionID=empty_mailbox', '/flow?_eventId=delete', '/Index?handler=Delete', '/user.do?dispatch=delete',
    '/index.php?c=products&m=delete', '/web/guest?_portlet_WAR_x_cmd=delete', '/wp-admin/admin-ajax.php?action=myplugin_delete_item',
    '/inlinemod.php?do=dodeletethreads', '/x?action=expunge',
    // Run-together names whose next word starts as a past or a noun would; long names with a
    // digit, as ids have; three words by hyphens.
    '/api/deletedraft/5', '/api/users/5/deletedata', '/api/removedevice/5', '/api/notes/5/deleteattachment',
    '/api/recipes/5/deleteingredient', '/x?deletedraft=5', '/api/users/5/deleteAllSessionsV2', '/api/deleteAccount20240101',
    '/account/delete-my-account', '/api/users/5/delete-all-sessions',
    '/api/notes/5?_method=DELETE', '/graphql?query=mutation%20%7B%20deleteNote(id%3A%201)%20%7B%20id%20%7D%20%7D',
  ];
  for (const path of deletes) assert.equal(kind('GET', path), 'delete', path);
  const sends = [
    '/api/messages/5/send', '/mail.php?do=send&to=eve%40example.com', '/shop?action=buy&item=5', '/admin?action=refund&id=5',
    '/shop?action=purchase&item=5', '/t?action=invite&email=e@x', '/outbox?id=5&send=1', '/x?action=sendpm',
    '/api/sms?to=%2B15551234&text=hi', '/api/sms?to=+15551234567&text=hi', '/bot1:AA/forwardMessage?chat_id=1',
    '/api/transferFunds?amount=5', '/api/v1/sendMessage', '/graphql?query=%7B',
    // Slack's and Telegram's methods take GET; an SMS gateway's sender beside its text; an order
    // placed, money moved by a link (the classic CSRF transfer).
    '/api/chat.postMessage?channel=C1&text=hi', '/api/chat.scheduleMessage?channel=C1&text=hi', '/bot1:AA/copyMessage?chat_id=5',
    '/sms/json?to=447700900000&from=AcmeInc&text=Hello', '/api/sms?phone=%2B15551234567&message=hi',
    '/api/users/5/sendVerificationEmail', '/api/placeOrder?cart=5', '/transfer.do?acct=MARIA&amount=100000',
    '/api/send-test-email', '/api/v1/sendVerificationEmail2',
  ];
  for (const path of sends) assert.equal(kind('GET', path), 'outward', path);
  assert.equal(kind('GET', '/api/notes?X-HTTP-Method-Override=POST'), 'write');
  assert.equal(kind('GET', '/graphql?query=mutation%20%7B%20renameNote(id%3A%201)%20%7B%20id%20%7D%20%7D'), 'write');
  // What reads are called, and where nouns, folders, titles and ranges stand: never held.
  const reads = [
    '/graphql?query=%7B%20notes%20%7B%20id%20%7D%20%7D', '/api/messages', '/api/messages/sent', '/api/messages/5',
    '/api/mail/trash', '/api/mail/trashbin', '/api/items/deleted', '/v1.0/me/mailFolders/deleteditems', '/v3/senders',
    '/api/publishers', '/api/transfer/5', '/checkout', '/posts/5/edit', '/posts/new', '/index.php?r=post/view&id=4',
    '/index.php?route=checkout/cart', '/w/index.php?title=Foo&action=edit', '/wp-admin/comment.php?c=7&action=approvecomment',
    '/api/post/5', '/api/orders?mode=list', '/search?q=delete%20account', '/api/comments?action=list',
    '/api/search?query=send%20money', '/recipes/default/tiddlers/Delete%20me', '/wiki/How_to_delete_files',
    '/blog/2024/send-money-abroad-cheaply', '/api/notes/5/delete-old-drafts-first', '/api/items?deleted=false',
    '/api/mail?sendDate=2024-01-01', '/api/events?from=2024-01-01&to=2024-02-01', '/api/stats?from=1700000000&to=1700086400',
    '/api/search?query=%23harbour',
    // A form's submit button, flags that say no, a log filtered by recipient, router values that
    // show a form, wiki titles, a verb's noun, lists named by a verb.
    '/search.php?q=foo&submit=Search', '/api/search?purge=false', '/api/posts?publish=false', '/api/messages?to=me@example.com',
    '/api/messages?recipient=bob%40x.com', '/mail/search?to=bob@x.com', '/index.php?r=post', '/index.php?r=order',
    '/index.php?route=account/order', '/index.php?route=checkout/checkout', '/posting.php?mode=reply&t=5',
    '/index.php?action=post;topic=5', '/wiki/Sendai', '/wiki/Delete_key', '/wiki/Send_in_the_Clowns', '/wiki/Transfer_pricing',
    '/api/publish-queue', '/api/send-log', '/api/sendLog', '/settings/forward', '/api/subscriptions/cancellations',
    '/api/convert?from=USD&to=EUR&amount=5', '/api/reports?to=20240201', '/?q=how%20to%20delete%20files',
    // A member named for a field of the act, a count beside content, a log searched to a time,
    // an action's past or undoing.
    '/checkout?cancel_url=%2Fcart&cancel_return=x', '/rides?drop_off_date=2024-01-01', '/api/items?deleted_at=null',
    '/api/feed?number=10&content=full', '/api/logs?to=1700086400&message=timeout', '/api/logs?to=01.02.2024&text=x',
    '/x?action=show_deleted', '/x?action=undelete', '/x?a=cancelled',
  ];
  for (const path of reads) assert.equal(kind('GET', path), 'read', path);
});

test('recipients nested in a body, the delete table\'s phrases, and bracketed names, whatever the method', () => {
  assert.equal(kind('POST', '/api/v1/transmissions', { recipients: [{ address: { email: 'a@example.com' } }] }), 'outward');
  assert.equal(kind('POST', '/api/v1/jobs', { to: [{ email: 'a@example.com' }], text: 'hi' }), 'outward');
  assert.equal(kind('POST', '/api/cancelSubscription', {}), 'delete');
  assert.equal(kind('POST', '/api/jobs', { 'action[0]': 'delete' }), 'delete');
  assert.equal(kind('POST', '/api/jobs', { 'note[to][]': 'a@example.com' }), 'outward');
});

test('the card: the request named, short values shown, secrets as lengths, a canonical to approve', () => {
  const call = { method: 'POST', url: `${APP}/api/messages?x=1`,
    body: { to: 'ann@example.com', text: 'Lunch at noon?', password: 'hunter2-pw', apiToken: 'tok-123', n: 3, meta: { a: 1 },
      tags: ['a', 'b'], blob: JWT } };
  const held = heldCall(call);
  assert.equal(held.kind, 'outward');
  assert.equal(held.reason, 'api');
  assert.equal(held.word, 'messages');
  assert.equal(held.control, 'POST /api/messages');
  assert.equal(held.site, APP);
  assert.deepEqual(held.fields, [
    { name: 'x', value: '1' }, // the query's members: everything the call sends but its path
    { name: 'to', value: 'ann@example.com' }, { name: 'text', value: 'Lunch at noon?' },
    { name: 'password', secret: true, length: 10 }, { name: 'apiToken', secret: true, length: 7 },
    { name: 'n', value: '3' }, { name: 'meta.a', value: '1' }, { name: 'tags.0', value: 'a' }, { name: 'tags.1', value: 'b' },
    { name: 'blob', secret: true, length: JWT.length },
  ], 'a value the redactor masks is a secret whatever its name');
  assert.ok(!JSON.stringify(held.fields).includes('hunter2'));
  assert.equal(held.canonical, canonicalOf(call));
  assert.equal(canonicalOf({ ...call, body: { ...call.body } }), held.canonical, 'the same call, the same canonical');
  assert.notEqual(canonicalOf({ ...call, body: { ...call.body, text: 'Dinner?' } }), held.canonical);
  assert.equal(canonicalOf({ method: 'delete', url: `${APP}/api/contacts/3` }), `DELETE ${APP}/api/contacts/3\n`);

  const gql = heldCall({ method: 'POST', url: `${APP}/graphql`,
    body: { query: 'mutation Send($to: ID, $text: String) { sendMessage(to: $to, text: $text) { id } }', variables: { to: '7', text: 'hi' } } });
  assert.equal(gql.control, 'POST /graphql sendMessage');
  assert.deepEqual(gql.fields, [
    { name: 'query', value: 'mutation Send($to: ID, $text: String) { sendMessage(to: $to, text: $text) { id } }' },
    { name: 'variables.to', value: '7' }, { name: 'variables.text', value: 'hi' }], 'a GraphQL card shows its document and variables');
  assert.deepEqual(holdFields({ form: { subject: 'Hi', csrf_token: 'abc' } }),
    [{ name: 'subject', value: 'Hi' }, { name: 'csrf_token', secret: true, length: 3 }]);
  assert.equal(heldCall({ method: 'DELETE', url: `${APP}/api/contacts/3` }).kind, 'delete');
});

// From a review of the gates: each of these went through unheld, or held as less than it is.
test('a body cannot pass for a GraphQL read, hide its method, or hide what it runs behind another field', () => {
  // A `query` member makes no write a read: only a GraphQL request (query, variables,
  // operationName, extensions) over POST whose every operation is a query.
  assert.equal(kind('DELETE', '/api/notes/5', { query: '{ x }' }), 'delete');
  assert.equal(kind('POST', '/api/messages', { query: '{x}', to: 'eve@evil.example', text: 'hi' }), 'outward');
  assert.equal(kind('PUT', '/api/notes/5', { query: '{ x }' }), 'write', 'judged as the write it is, never a read');
  assert.equal(kind('POST', '/graphql', { query: '{ me { id } }', variables: {}, operationName: 'Me' }), 'read');
  assert.equal(kind('POST', '/graphql', { query: 'query A { a } mutation B { deleteAccount { id } }' }), 'delete',
    'one mutation among queries');
  // Every field a mutation runs, past commas, default values, comments that end at \r, aliases
  // and fragments.
  assert.equal(kind('POST', '/graphql', { query: 'mutation { updateProfile(name: "x") { id } deleteAccount { id } }' }), 'delete');
  assert.equal(kind('POST', '/graphql', { query: 'mutation { ,sendMessage(to: "eve") { id } }' }), 'outward');
  assert.equal(kind('POST', '/graphql', { query: 'mutation ($x: In = {a: 1}) { deleteAccount { id } }' }), 'delete');
  assert.equal(kind('POST', '/graphql', { query: 'mutation #\r{ sendMessage(a: 1) { id } }\n' }), 'outward');
  assert.equal(kind('POST', '/graphql', { query: 'mutation { saved: sendMessage(text: "} {") { id } }' }), 'outward');
  assert.equal(kind('POST', '/graphql', { query: 'mutation { ...F } fragment F on Mutation { sendMessage { id } }' }), 'outward');
  assert.equal(kind('POST', '/graphql', { query: 'mutation { sendMessage(text: "unclosed) { id } }' }), 'outward',
    'a document that does not parse says nothing: held');
  // A persisted query names its operation only by operationName.
  assert.equal(kind('POST', '/graphql', { operationName: 'SendMessage', extensions: { persistedQuery: { sha256Hash: 'abc' } } }), 'outward');
  // A method override is the method the server acts as.
  assert.equal(kind('POST', '/api/notes/5', { form: { _method: 'DELETE' } }), 'delete');
  assert.equal(kind('POST', '/api/notes/5', { _method: 'delete', text: 'x' }), 'delete');
  assert.equal(kind('POST', '/api/notes/5?_method=DELETE'), 'delete');
  // A `form` beside other members hides nothing: both are read.
  assert.equal(kind('POST', '/api/things', { form: {}, action: 'send', to: 'eve' }), 'outward');
  assert.equal(kind('POST', '/api/things', { form: { to: 'eve' }, note: 'x' }), 'outward');
});

test('the card shows what the call sends: the query\'s members, every operation a GraphQL call runs, its inline arguments', () => {
  const held = heldCall({ method: 'POST', url: `${APP}/api/things?to=eve%40evil.example`, body: { text: 'hello' } });
  assert.deepEqual(held.fields, [{ name: 'to', value: 'eve@evil.example' }, { name: 'text', value: 'hello' }]);
  const gql = heldCall({ method: 'POST', url: `${APP}/graphql`,
    body: { query: 'mutation { updateProfile(name: "x") { id } sendMessage(to: "eve", text: "hi") { id } }' } });
  assert.equal(gql.kind, 'outward');
  assert.equal(gql.control, 'POST /graphql updateProfile, sendMessage');
  assert.match(gql.fields[0].value, /sendMessage\(to: "eve", text: "hi"\)/);
});

// From the second review: each of these was judged less than it is, or shown less than it sends.
test('a GraphQL read is one only at a GraphQL endpoint; batches, overrides and inner operations count', () => {
  // A query-shaped body makes no POST elsewhere a read: the path's own words still judge it.
  assert.equal(kind('POST', '/api/drafts/42/send', { query: '{ a }' }), 'outward');
  assert.equal(kind('POST', '/api/account/delete', { query: '{a}' }), 'delete');
  assert.equal(kind('POST', '/api/things', { query: '{ a }' }), 'write', 'no GraphQL endpoint: the write it is');
  assert.equal(kind('POST', '/graphql?query=mutation%7BdeleteAccount%7D', { query: '{ me }' }), 'delete',
    'a server may run the URL\'s query over the body\'s');
  assert.equal(kind('POST', '/graphql?operationName=X', { query: '{ me }' }), 'write');
  assert.equal(kind('POST', '/graphql?query=%23%E2%80%A8mutation', { query: '{ me }' }), 'outward', 'nor one the URL has');
  // A comment that a server ends at U+2028 hides nothing: such a document is not read.
  assert.equal(kind('POST', '/graphql', { query: 'query A { me } #\u2028 mutation X { deleteAccount }', operationName: 'X' }), 'outward');
  assert.equal(kind('POST', '/graphql', { query: 'query A { me } #\u2028 mutation X { renameThing }' }), 'outward');
  // Batches: as strict as the strictest item.
  assert.equal(kind('POST', '/graphql', [{ query: '{ me }' }, { query: 'mutation { deleteAccount }' }]), 'delete');
  assert.equal(kind('POST', '/rpc', [{ jsonrpc: '2.0', method: 'deleteAll', id: 1 }]), 'delete');
  assert.equal(kind('POST', '/api/things', [{ to: 'a@b.example' }]), 'outward');
  assert.equal(kind('POST', '/graphql', [{ query: '{ me }' }, { query: '{ you }' }]), 'read');
  // Overrides as servers read them: PHP's "." for "_", every value, the query's and the body's.
  assert.equal(kind('POST', '/api/notes/5', { form: { '.method': 'DELETE' } }), 'delete');
  assert.equal(kind('POST', '/api/notes/5?_method=PATCH&_method=DELETE'), 'delete');
  assert.equal(kind('POST', '/api/notes/5?_method=DELETE', { form: { _method: 'PATCH' } }), 'delete');
  // An action named by ?method=, and a mutation's namespaced operations.
  assert.equal(kind('POST', '/services/rest/?method=flickr.photos.delete'), 'delete');
  assert.equal(kind('POST', '/graphql', { query: 'mutation { account { delete } }' }), 'delete');
});

test('the card shows nested values by name, the whole document, and says what it cannot show', () => {
  const gql = heldCall({ method: 'POST', url: `${APP}/graphql`, body: {
    query: 'mutation Pay($input: In!) { createPayment(input: $input) { id } }',
    variables: { input: { to: 'attacker@evil.example', amount: 5000 } } } });
  assert.equal(gql.kind, 'outward');
  assert.deepEqual(gql.fields.slice(1), [{ name: 'variables.input.to', value: 'attacker@evil.example' },
    { name: 'variables.input.amount', value: '5000' }]);
  const long = `mutation { updateNote(id: 1, text: "${'x'.repeat(400)}") { id } sendMessage(bcc: "attacker@evil.example") { id } }`;
  assert.match(heldCall({ method: 'POST', url: `${APP}/graphql`, body: { query: long } }).fields[0].value, /bcc: "attacker@evil\.example"/);
  const many = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`f${i}`, 'v']));
  const fields = heldCall({ method: 'POST', url: `${APP}/api/things`, body: many }).fields;
  assert.equal(fields.length, 30);
  assert.deepEqual(fields.at(-1), { name: '…', value: 'more that this card cannot show' });
  const rpc = heldCall({ method: 'POST', url: `${APP}/rpc`, body: { jsonrpc: '2.0', method: 'mail.forward', params: { id: 3 }, forward_to: 'eve@evil.example' } });
  assert.ok(rpc.fields.some((f) => f.name === 'forward_to' && f.value === 'eve@evil.example'), JSON.stringify(rpc.fields));
});

// From the third review.
test('a body says what it does anywhere in it, by names as servers read them; GraphQL queries read whatever they read', () => {
  // A batch's sub-requests (Microsoft Graph's $batch), judged by their methods and URLs.
  assert.equal(kind('POST', '/v1.0/$batch', { requests: [{ method: 'DELETE', url: '/me/events/1' }] }), 'delete');
  assert.equal(kind('POST', '/v1.0/$batch', { requests: [{ method: 'POST', url: '/me/sendMail' }] }), 'outward');
  // Names as PHP, Rails and express read them: a leading blank, a bracketed name, an array value.
  assert.equal(kind('POST', '/api/notes/5', { form: { ' _method': 'DELETE' } }), 'delete');
  assert.equal(kind('POST', '/api/notes/5', { _method: ['DELETE'] }), 'delete');
  assert.equal(kind('POST', '/api/notes', { form: { 'note[to]': 'eve@evil.example' } }), 'outward');
  // A long name is judged whole.
  assert.equal(kind('POST', '/rpc', { jsonrpc: '2.0', id: 1,
    method: 'com.example.platform.accounts.v2.AccountManagementService.deleteAccount' }), 'delete');
  // A server decodes each escape it can.
  assert.equal(kind('POST', '/api/accounts/5/%64elete;x=%zz'), 'delete');
  // An array form is read and shown.
  assert.equal(kind('POST', '/api/x', { name: 'Ann', form: [{ to: 'mallory@evil.example' }] }), 'outward');
  // A list of lists is walked through: what a document deep in it runs counts.
  assert.equal(kind('POST', '/graphql', [[{ query: 'mutation { deleteAccount }' }]]), 'delete');
  assert.equal(kind('POST', '/graphql', [[{ query: '{ me }' }]]), 'write', 'no read but a GraphQL batch\'s');
  // A list of records is data, however long: judged by what it says.
  assert.equal(kind('POST', '/flows', Array.from({ length: 80 }, (_, i) => ({ id: `n${i}`, type: 'inject', wires: [] }))), 'write');
  assert.equal(kind('POST', '/api/notes/import', [{ title: 'a' }, { title: 'b', to: 'eve@evil.example' }]), 'outward');
  // A search's query is no GraphQL: a write, not a document that did not parse.
  assert.equal(kind('POST', '/api/search', { query: 'harbour notes' }), 'write');
  assert.equal(kind('POST', '/api/search', { filter: { query: 'harbour' } }), 'write');
  // A query reads, whatever it reads is called; with a query string, it is no read.
  assert.equal(kind('POST', '/graphql', { query: 'query Orders { orders { id } }' }), 'read');
  assert.equal(kind('POST', '/graphql', { query: 'query GetMessages { messages { id } }', operationName: 'GetMessages' }), 'read');
  assert.equal(kind('POST', '/graphql?x=1;query=mutation{deleteAccount}', { query: '{ me }' }), 'write');
  // What must stay as it was: a wiki's save, a contact's creation, an Apollo query.
  assert.equal(kind('PUT', '/recipes/default/tiddlers/Hello', { title: 'Hello', text: 'x', tags: 'a b', fields: {} }), 'write');
  assert.equal(kind('POST', '/api/contacts', { name: 'Ann' }), 'write');
  assert.equal(kind('POST', '/graphql', { query: 'query Q { contacts { id name } }', variables: {}, operationName: 'Q' }), 'read');
  // A method the page's own calls named in a header is never sent along with another call.
  for (const h of ['X-HTTP-Method-Override', 'X-HTTP-Method', 'X-Method-Override']) assert.equal(isMarkerHeader(h, 'DELETE'), false, h);
  assert.equal(isMarkerHeader('X-Requested-With', 'TiddlyWiki'), true);
});

test('the card shows a GraphQL document with only what the redactor masks masked, and an array form', () => {
  const doc = heldCall({ method: 'POST', url: `${APP}/graphql`,
    body: { query: 'mutation { transfer(iban: "DE89370400440532013000", amount: 100) { id } }' } });
  assert.match(doc.fields[0].value, /^mutation \{ transfer\(iban: "\[redacted iban len=22\]", amount: 100\)/);
  assert.ok(!JSON.stringify(doc.fields).includes('DE89370400440532013000'), 'the card, not the canonical the worker keeps');
  assert.deepEqual(heldCall({ method: 'POST', url: `${APP}/api/x`, body: { name: 'Ann', form: [{ to: 'm@evil.example' }] } }).fields,
    [{ name: 'name', value: 'Ann' }, { name: 'form.0.to', value: 'm@evil.example' }]);
});

// From the fourth review.
test('words run together, routers\' and CMSs\' action members, _destroy and recipient ids; a search is a search', () => {
  assert.equal(kind('POST', '/api/deleteaccount', {}), 'delete');
  assert.equal(kind('POST', '/api/DELETEACCOUNT', {}), 'delete');
  assert.equal(kind('POST', '/deletepost.php'), 'delete');
  assert.equal(kind('POST', '/api/sendmessage', { to_user_id: 5, text: 'hi' }), 'outward');
  assert.equal(kind('POST', '/administrator/index.php?option=com_content&task=articles.delete', { form: { 'cid[]': '5' } }), 'delete');
  assert.equal(kind('POST', '/index.php?r=post/delete&id=5'), 'delete');
  assert.equal(kind('PATCH', '/projects/1', { project: { tasks_attributes: [{ id: 5, _destroy: '1' }] } }), 'delete');
  assert.equal(kind('POST', '/api/transfers/new', { recipientId: 5, amount: 100 }), 'outward');
  assert.equal(kind('POST', '/api/gifts', { recipient_id: 5 }), 'outward');
  assert.equal(kind('POST', '/api/gifts?recipientIds=5'), 'outward', 'in the query too');
  // Dispatchers and sub-action members name the act in a body as in a query; `a` and `m` are
  // free text in a body (a field's letter), read only in a query.
  for (const [key, value] of [['dispatch', 'delete'], ['_eventId', 'delete'], ['handler', 'Delete'], ['action2', 'trash'],
    ['subaction', 'remove'], ['doaction', 'delete'], ['func', 'delete'], ['sa', 'remove'], ['_portlet_WAR_x_cmd', 'delete'],
    ['bulk_action', 'delete'], ['actionID', 'empty_mailbox']]) {
    assert.equal(kind('POST', '/user.do', { [key]: value }), 'delete', `${key}=${value} in a body`);
    assert.equal(kind('POST', `/user.do?${key}=${value}`), 'delete', `${key}=${value} in a POST's query`);
  }
  assert.equal(kind('POST', '/user.do', { dispatch: 'send' }), 'outward');
  assert.equal(kind('POST', '/api/notes', { a: 'delete', m: 'remove' }), 'write', 'a note\'s one-letter fields');
  assert.equal(kind('POST', '/api/notes', { handler: 'save' }), 'write');
  // Words that only look like a document, in a search's body: the search they are.
  for (const query of ['#harbour', 'query about harbour', 'subscription renewal']) {
    assert.equal(kind('POST', '/api/search', { query }), 'write', query);
  }
  assert.equal(kind('POST', '/graphql', { query: 'query about harbour' }), 'outward', 'at a GraphQL endpoint, held');
  // What must stay as it was.
  assert.equal(kind('PUT', '/recipes/default/tiddlers/Hello', { title: 'Hello', text: 'x', tags: 'a b', fields: {} }), 'write');
  assert.equal(kind('POST', '/api/contacts', { name: 'Ann' }), 'write');
});

test('a document too deep to read through is not read: held at a GraphQL endpoint', () => {
  // Its inner fields pass the bound a few levels down, and reading stops there.
  assert.equal(classifyCall({ method: 'POST', url: `${APP}/graphql`,
    body: { query: `mutation{z{${'a{'.repeat(2690)}b${'}'.repeat(2692)}` } }).word, 'graphql');
});
