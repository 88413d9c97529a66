// SPDX-License-Identifier: GPL-3.0-or-later
// browser.api.call through the router over a fake chrome.* (tests/js/ext-capture-harness.mjs): a
// call goes only to what the page already talks to, signs itself with the page's own header only
// inside the page, comes back redacted; a send, a payment or a delete is held — nothing is sent —
// until the person's Approve sends it once; a plain write goes through only under a plan.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { captureSetup, request } from './ext-capture-harness.mjs';

const CSRF = 'Cs-distinctive-csrf-3381';
const TOKEN = 'sk_live_51HdistinctiveKey0000';

/** A page that answers every call with `reply` (by executeScript), and remembers each call. */
async function apiSetup(opts) {
  const s = await captureSetup(opts);
  s.calls = [];
  s.reply = { status: 200, ok: true, contentType: 'application/json', size: 64, truncated: false, ms: 3,
    json: { contacts: [{ id: 1, name: 'Ann' }], apiKey: TOKEN } };
  const pageAgent = s.fake.chrome.scripting.executeScript; // the pill and other page-agent ops
  s.fake.chrome.scripting.executeScript = async (inject) => {
    const { target, world, func, args } = inject;
    if (func?.name !== 'pageFetch') return pageAgent(inject);
    s.calls.push({ target, world, func, req: structuredClone(args[0]) });
    return [{ frameId: 0, documentId: target.documentIds?.[0], result: structuredClone(s.reply) }];
  };
  // The page has loaded and talked to its API (with its CSRF header), and its widget to its own.
  request(s.wr, { url: 'https://app.example/api/contacts', documentId: s.top(),
    headers: [{ name: 'Cookie', value: 'sid=x' }, { name: 'X-CSRF-Token', value: CSRF }] });
  request(s.wr, { url: 'https://api.widget.example/v1/ping', documentId: s.widget(), frameId: 5 });
  return s;
}

const call = (s, params) => s.router.handle('browser.api.call', { tabId: 1, ...params });
const resolve = (s, holdId, outcome) => s.router.handle('extension.hold.resolve', { holdId, outcome });

test('a read goes from inside the page, signed by the page\'s own header, and comes back redacted', async () => {
  const s = await apiSetup();
  const answer = await call(s, { method: 'GET', url: 'https://app.example/api/contacts?limit=5',
    credential: { kind: 'header', header: 'X-CSRF-Token' } });
  assert.equal(s.calls.length, 1);
  const [c] = s.calls;
  assert.deepEqual(c.target, { tabId: 1, documentIds: [s.top()] }, 'the checked document, nothing else');
  assert.equal(c.world, 'ISOLATED');
  assert.equal(c.req.method, 'GET');
  assert.equal(c.req.headers['x-csrf-token'], CSRF, 'the page\'s own value goes into the page');
  assert.equal(c.req.body, undefined);
  assert.equal(c.func.name, 'pageFetch');
  assert.equal(answer.status, 200);
  assert.deepEqual(answer.shape, { contacts: 'array', apiKey: 'string' });
  assert.deepEqual(answer.json.contacts, [{ id: 1, name: 'Ann' }]);
  assert.match(answer.json.apiKey, /^\[redacted apiKey len=\d+\]$/);
  const text = JSON.stringify(answer);
  assert.ok(!text.includes(CSRF) && !text.includes(TOKEN), text);

  s.reply = { status: 200, ok: true, contentType: 'text/plain', size: 30, truncated: false, ms: 1,
    text: `token=${TOKEN} done` };
  const plain = await call(s, { method: 'GET', url: 'https://app.example/api/export' });
  assert.ok(!plain.text.includes(TOKEN), plain.text);

  // The page's own CSRF value, written back into the HTML (or JSON) a site serves, never comes
  // back to the agent, nor an HTML page's token tags' values whoever set them.
  s.reply = { status: 200, ok: true, contentType: 'text/html', size: 300, truncated: false, ms: 1,
    text: `<meta name="csrf-token" content="kP3xQ9v2Lm8Zr0hJ"><form><input type="hidden" name="authenticity_token" value='Qw7eRt9yUi0oPa1s'>`
      + `<input name="q" value="lighthouse"></form><p>${CSRF}</p>` };
  const html = await call(s, { method: 'GET', url: 'https://app.example/api/export' });
  assert.ok(!html.text.includes(CSRF), html.text);
  assert.ok(!html.text.includes('kP3xQ9v2Lm8Zr0hJ') && !html.text.includes('Qw7eRt9yUi0oPa1s'), html.text);
  assert.match(html.text, /<meta name="csrf-token" content="\[redacted\]">/);
  assert.match(html.text, /name="q" value="lighthouse"/, 'a field that is no token is left as it is');
  s.reply = { status: 200, ok: true, contentType: 'application/json', size: 60, truncated: false, ms: 1,
    json: { session: { note: `csrf is ${CSRF}` } } };
  const json = await call(s, { method: 'GET', url: 'https://app.example/api/export' });
  assert.ok(!JSON.stringify(json).includes(CSRF), JSON.stringify(json));
  // Nor escaped as a URL or a PHP JSON string writes it, nor as a member's name, nor deep down,
  // nor its first part where a long reply was cut.
  // An HTML token tag inside a JSON reply, whoever set it.
  s.reply = { status: 200, ok: true, contentType: 'application/json', size: 90, truncated: false, ms: 1,
    json: { html: '<input type="hidden" name="authenticity_token" value="Q9rTx8wLm2Kp5Zb7">' } };
  assert.ok(!JSON.stringify(await call(s, { method: 'GET', url: 'https://app.example/api/export' })).includes('Q9rTx8wLm2Kp5Zb7'));
  // A tag made to be slow to read (each attribute is read once: bench figures in the note).
  s.reply = { status: 200, ok: true, contentType: 'text/html', size: 65536, truncated: false, ms: 1,
    text: `<meta ${'id='.repeat(21000)}>` };
  assert.equal((await call(s, { method: 'GET', url: 'https://app.example/api/export' })).text, s.reply.text);
  const KEY = 'Zq7v/Kp+Lm3nXw9R';
  request(s.wr, { url: 'https://app.example/api/keys', documentId: s.top(), headers: [{ name: 'X-Api-Key', value: KEY }] });
  s.reply = { status: 200, ok: true, contentType: 'text/plain', size: 300, truncated: false, ms: 1,
    text: `next=${encodeURIComponent(KEY)} php="${KEY.replace(/\//g, '\\/')}"` };
  const escaped = (await call(s, { method: 'GET', url: 'https://app.example/api/export' })).text;
  assert.equal(escaped, 'next=[redacted] php="[redacted]"');
  let deep = { leaf: CSRF };
  for (let i = 0; i < 100; i++) deep = { d: deep };
  s.reply = { status: 200, ok: true, contentType: 'application/json', size: 60, truncated: false, ms: 1,
    json: { [CSRF]: 1, deep } };
  assert.ok(!JSON.stringify(await call(s, { method: 'GET', url: 'https://app.example/api/export' })).includes(CSRF));
  s.reply = { status: 200, ok: true, contentType: 'text/plain', size: 70000, truncated: true, ms: 1,
    text: `${'x'.repeat(100)}${CSRF.slice(0, -3)}` };
  const cut = await call(s, { method: 'GET', url: 'https://app.example/api/export' });
  assert.ok(!cut.text.includes(CSRF.slice(0, 8)), cut.text.slice(-40));
  assert.deepEqual(plain.shape, { type: 'text' });
});

// Whatever the scheme of the page's Authorization header, a server that writes the credential
// back (a "your token is …" page, an error that quotes the request) hands the agent nothing of it.
test('an Authorization credential echoed back is scrubbed, whatever its scheme', async () => {
  const s = await apiSetup();
  const export_ = () => call(s, { method: 'GET', url: 'https://app.example/api/export' });
  for (const [i, scheme] of ['Token', 'Basic', 'Digest', 'DPoP', 'MAC', 'Bearer', 'token', 'Api-Key_v2'].entries()) {
    const secret = `q${i}Zr7vKp3Lm9Xw2Ns`;
    request(s.wr, { url: 'https://app.example/api/contacts', documentId: s.top(),
      headers: [{ name: 'Authorization', value: `${scheme}  ${secret}` }] });
    s.reply = { status: 401, ok: false, contentType: 'text/plain', size: 60, truncated: false, ms: 1,
      text: `you sent ${secret}, not valid; with its scheme: ${scheme}  ${secret}` };
    const { text } = await export_();
    assert.ok(text.startsWith('you sent [redacted], not valid;') && !text.includes(secret), `${scheme}: ${text}`);
    s.reply = { status: 200, ok: true, contentType: 'application/json', size: 60, truncated: false, ms: 1,
      json: { you: { sent: `"${secret}"` } } };
    assert.ok(!JSON.stringify(await export_()).includes(secret), scheme);
  }
  // Escaped as JSON writers and URL encoders write it (a cut JSON reply comes as text), and a
  // Basic credential's user:password and password as the server decoded them.
  const TOKEN = 'k+9/Zr7=vKp3Lm9';
  const BASIC = `Basic ${btoa('alice:Pa55+word-long!')}`;
  for (const [value, echoed] of [
    [`Bearer ${TOKEN}`, 'k\\u002B9/Zr7=vKp3Lm9'],
    [`Bearer ${TOKEN}`, 'k\\u002b9\\u002fZr7\\u003dvKp3Lm9'],
    [`Bearer ${TOKEN}`, encodeURIComponent(TOKEN).replace(/%[0-9A-F]{2}/g, (x) => x.toLowerCase())],
    [BASIC, 'Pa55+word-long!'],
    [BASIC, 'alice:Pa55+word-long!'],
  ]) {
    request(s.wr, { url: 'https://app.example/api/contacts', documentId: s.top(),
      headers: [{ name: 'Authorization', value }] });
    s.reply = { status: 401, ok: false, contentType: 'text/plain', size: 60, truncated: false, ms: 1,
      text: `{"sent":"${echoed}"` };
    const { text } = await export_();
    assert.equal(text, '{"sent":"[redacted]"', `${echoed}: ${text}`);
  }
  // A token shorter than a secret (8 characters) is no secret worth a reply's words: it stays.
  request(s.wr, { url: 'https://app.example/api/contacts', documentId: s.top(),
    headers: [{ name: 'Authorization', value: 'Token ab12' }] });
  s.reply = { status: 200, ok: true, contentType: 'text/plain', size: 20, truncated: false, ms: 1, text: 'id ab12 ok' };
  assert.equal((await export_()).text, 'id ab12 ok');
});

// The page reads a text reply up to 64 KiB (api-fetch.js, run here for real on a fetch that
// answers `body`); a secret the cut falls into leaves none of its first part at the end.
test('a text reply cut in the middle of a secret leaves no part of it', async () => {
  const s = await apiSetup();
  const TOKEN68 = 'tK9wQ2xZ7mV4bN8rL3pJ6hF1';
  const TAG_VALUE = 'mE7tA4cS9rF2tV8aL5uE3xQ0';   // a token tag's value the page never sent
  request(s.wr, { url: 'https://app.example/api/contacts', documentId: s.top(),
    headers: [{ name: 'Authorization', value: `Token ${TOKEN68}` }] });
  const faked = s.fake.chrome.scripting.executeScript;
  let body = '';
  let type = 'text/plain';
  s.fake.chrome.scripting.executeScript = async (inject) => {
    if (inject.func?.name !== 'pageFetch') return faked(inject);
    const fetch = globalThis.fetch;
    globalThis.fetch = async () => new Response(body, { status: 200, headers: { 'content-type': type } });
    try {
      return [{ frameId: 0, documentId: inject.target.documentIds?.[0], result: await inject.func(...inject.args) }];
    } finally {
      globalThis.fetch = fetch;
    }
  };
  const cases = [
    ['an echoed token', 'text/plain', 'your key: ', TOKEN68, ' (keep it safe)'],
    ['the page\'s CSRF header value', 'text/plain', 'csrf=', CSRF, '&next=1'],
    ['a CSRF meta tag\'s value', 'text/html', '<meta name="csrf-token" content="', TAG_VALUE, '">'],
    ['a hidden authenticity_token', 'text/html', '<input type="hidden" name="authenticity_token" value=\'', TAG_VALUE, '\'>'],
    ['the page\'s CSRF value in its meta tag', 'text/html', '<meta name="csrf-token" content=', CSRF, '>'],
  ];
  for (const [what, contentType, before, secret, after] of cases) {
    for (let k = 8; k < secret.length; k++) {
      type = contentType;
      // The 64 KiB cut falls k characters into the secret.
      body = `${'x'.repeat(64 * 1024 - before.length - k)}${before}${secret}${after}${'y'.repeat(100)}`;
      const answer = await call(s, { method: 'GET', url: 'https://app.example/api/export' });
      assert.equal(answer.truncated, true);
      assert.ok(answer.text.startsWith('xxxx'));
      assert.ok(!answer.text.includes(secret.slice(0, 8)), `${what}, cut ${k} in: …${answer.text.slice(-60)}`);
    }
  }
});

test('only what the page already talks to; the floor; a credential the page never sent', async () => {
  const s = await apiSetup();
  await assert.rejects(call(s, { method: 'GET', url: 'https://evil.example/api/x' }),
    (e) => e.code === 'target_denied' && /already talks to/.test(e.message));
  // The widget's frame talks to its API; the page itself never did: not the page's to call.
  await assert.rejects(call(s, { method: 'GET', url: 'https://api.widget.example/v1/ping' }),
    (e) => e.code === 'target_denied' && /already talks to/.test(e.message));
  await assert.rejects(call(s, { method: 'GET', url: 'https://mybank.example/api/x' }), { code: 'refused_floor' });
  await assert.rejects(call(s, { method: 'GET', url: 'https://app.example/api/x', credential: { kind: 'bearer' } }),
    (e) => e.code === 'target_denied' && /sign in again/.test(e.message));
  await assert.rejects(call(s, { method: 'GET', url: 'https://app.example/x', credential: { kind: 'header', header: 'cookie' } }),
    { code: 'invalid_params' });
  // A method override says what a call does, not who sends it: never a "credential" to carry,
  // which would turn a plan-covered POST into a DELETE.
  for (const header of ['X-HTTP-Method', 'x-http-method-override', 'X-Method-Override']) {
    await assert.rejects(call(s, { method: 'POST', url: 'https://app.example/api/notes/1', body: { a: 1 },
      credential: { kind: 'header', header } }), { code: 'invalid_params' }, header);
  }
  for (const bad of [{ method: 'TRACE', url: 'https://app.example/' }, { method: 'GET', url: 'ftp://app.example/' },
    { method: 'GET', url: 'https://u:p@app.example/' }, { method: 'GET', url: 'https://app.example/', body: {} },
    { method: 'POST', url: 'https://app.example/', body: { form: { a: 1 } } },
    { method: 'POST', url: 'https://app.example/', body: { big: 'x'.repeat(70000) } },
    // A step up (or none) in the path goes somewhere no route names: /api/notes/.. is /api/.
    { method: 'GET', url: 'https://app.example/api/notes/../admin' },
    { method: 'PUT', url: 'https://app.example/api/v1/%2E%2e/admin', body: {} },
    { method: 'GET', url: 'https://app.example/api/./x' },
    // What the URL parser drops or turns into "/" makes a step too: "/.\t./" is "/../".
    { method: 'GET', url: 'https://app.example/api/.\t./admin' },
    { method: 'GET', url: 'https://app.example\\api\\..\\admin' }]) {
    await assert.rejects(call(s, bad), { code: 'invalid_params' }, JSON.stringify(bad).slice(0, 80));
  }
  // The person made the app hands-only: it is read, but a GET that deletes is an act like any.
  s.router.setFloorRules({ blind: [], handsOnly: ['app.example'] });
  await call(s, { method: 'GET', url: 'https://app.example/api/contacts' });
  await assert.rejects(call(s, { method: 'GET', url: 'https://app.example/api/notes/5/delete' }),
    (e) => e.code === 'refused_floor' && e.data.level === 'hands-only');
  s.router.setFloorRules({ blind: [], handsOnly: [] });
  s.reply = { error: 'redirected', message: 'x' };
  await assert.rejects(call(s, { method: 'GET', url: 'https://app.example/api/go' }), { code: 'target_denied' });
  assert.equal(s.calls.filter((c) => c.req.url.includes('evil') || c.req.url.includes('bank')).length, 0);
});

test('a message is held, nothing is sent; Approve sends it once, as held', async () => {
  const s = await apiSetup();
  const body = { to: 'ann@example.com', text: 'Lunch?', csrf_token: 'abc' };
  const url = 'https://app.example/api/messages';
  const held = await call(s, { method: 'POST', url, body, credential: { kind: 'header', header: 'x-csrf-token' } });
  assert.equal(held.held, true);
  assert.equal(s.calls.length, 0, 'nothing reached the page');
  assert.equal(held.hold.kind, 'outward');
  assert.equal(held.hold.reason, 'api');
  assert.equal(held.hold.control, 'POST /api/messages');
  assert.equal(held.hold.site, 'https://app.example');
  assert.deepEqual(held.hold.fields, [{ name: 'to', value: 'ann@example.com' }, { name: 'text', value: 'Lunch?' },
    { name: 'csrf_token', secret: true, length: 3 }]);
  assert.equal(held.hold.canonical, undefined, 'the canonical stays in the worker');
  assert.equal(s.emit.named('hold.changed').at(-1).state, 'held');
  const stored = s.router.holds.get(held.hold.holdId);
  assert.ok(!JSON.stringify(stored).includes(CSRF), 'the hold keeps the header name, never its value');

  // The agent cannot approve by writing the canonical itself.
  const again = await call(s, { method: 'POST', url, body, expect: `POST ${url}\n${JSON.stringify(body)}` });
  assert.equal(again.held, true);
  assert.equal(s.calls.length, 0);

  s.reply = { status: 201, ok: true, contentType: 'application/json', size: 9, truncated: false, ms: 2, json: { id: 9 } };
  const done = await resolve(s, held.hold.holdId, 'approve');
  assert.equal(done.state, 'done');
  assert.deepEqual(done.changes, { status: 201 });
  assert.equal(s.calls.length, 1, 'sent once');
  assert.equal(s.calls[0].req.method, 'POST');
  assert.equal(s.calls[0].req.body, JSON.stringify(body));
  assert.equal(s.calls[0].req.headers['Content-Type'], 'application/json');
  assert.equal(s.calls[0].req.headers['x-csrf-token'], CSRF);
  assert.equal((await resolve(s, held.hold.holdId, 'approve')).state, 'done');
  assert.equal(s.calls.length, 1, 'a second Approve sends nothing more');
});

test('deletes and payments are held whatever the plan; a plain write goes through under a plan only', async () => {
  const s = await apiSetup();
  const allow = { planId: 'plan-1', sites: ['app.example'], step: 1, of: 2 };
  const del = await call(s, { method: 'DELETE', url: 'https://app.example/api/contacts/3', allow });
  assert.equal(del.held, true);
  assert.equal(del.hold.kind, 'delete');
  const pay = await call(s, { method: 'POST', url: 'https://app.example/api/payments', body: { amount: 5 }, allow });
  assert.equal(pay.hold.kind, 'outward');
  const gql = await call(s, { method: 'POST', url: 'https://app.example/graphql',
    body: { query: 'mutation { sendMessage(to: 1, text: "x") { id } }' }, allow });
  assert.equal(gql.hold.kind, 'outward');
  assert.equal(gql.hold.control, 'POST /graphql sendMessage');
  const note = { method: 'PUT', url: 'https://app.example/api/notes/4', body: { text: 'milk' } };
  const unplanned = await call(s, note);
  assert.equal(unplanned.hold.kind, 'write', 'a write without a plan waits for the person');
  assert.equal(s.calls.length, 0);
  const other = await call(s, { ...note, allow: { ...allow, sites: ['elsewhere.example'] } });
  assert.equal(other.held, true, 'a plan for another site covers nothing here');
  const planned = await call(s, { ...note, allow });
  assert.equal(planned.held, undefined);
  assert.deepEqual(planned.plan, { planId: 'plan-1', site: 'app.example', step: 1, of: 2 });
  assert.equal(s.calls.length, 1);
  assert.deepEqual(s.router.planOf(1), { planId: 'plan-1', step: 1, of: 2 }, 'the pill can say "plan step 1 of 2"');
  const read = await call(s, { method: 'POST', url: 'https://app.example/graphql', body: { query: 'query { contacts { id } }' } });
  assert.equal(read.held, undefined, 'a GraphQL query reads');
  // A GET that deletes (a link with a nonce, as WordPress's) is held as the delete it is.
  const trash = await call(s, { method: 'GET', url: 'https://app.example/wp-admin/post.php?post=5&action=trash', allow });
  assert.equal(trash.held, true);
  assert.equal(trash.hold.kind, 'delete');
  assert.equal(trash.hold.control, 'GET /wp-admin/post.php');
  assert.deepEqual(trash.hold.fields, [{ name: 'post', value: '5' }, { name: 'action', value: 'trash' }]);
  assert.equal(s.calls.length, 2, 'nothing was sent');
  // A route (readOnly) never holds: a call that is no read is refused, and nothing waits for the person.
  const holds = s.router.holds.list().length;
  await assert.rejects(call(s, { method: 'GET', url: 'https://app.example/api/notes/5/delete', readOnly: true }),
    { code: 'target_denied', message: /deletes something/ });
  await assert.rejects(call(s, { method: 'POST', url: 'https://app.example/api/messages', body: { text: 'x' }, readOnly: true }),
    { code: 'target_denied', message: /sends something/ });
  assert.equal(s.router.holds.list().length, holds);
  assert.equal((await call(s, { method: 'GET', url: 'https://app.example/api/contacts/3', readOnly: true })).status, 200);
  assert.equal(s.calls.length, 3, 'only the read was sent');

  assert.equal((await resolve(s, del.hold.holdId, 'decline')).state, 'declined');
  assert.equal(s.calls.length, 3, 'a declined delete is never sent');
  assert.equal((await resolve(s, trash.hold.holdId, 'approve')).state, 'done');
  assert.equal(s.calls.length, 4, 'an approved one is sent once');
  assert.equal(s.calls[3].req.url, 'https://app.example/wp-admin/post.php?post=5&action=trash');
});

test('an Approve after the page moved on sends nothing: changed', async () => {
  const s = await apiSetup();
  const held = await call(s, { method: 'POST', url: 'https://app.example/api/messages', body: { text: 'x' } });
  s.fake.navigate(1, 0, 'https://app.example/other');
  assert.equal((await resolve(s, held.hold.holdId, 'approve')).state, 'changed');
  assert.equal(s.calls.length, 0);
  const h2 = await call(s, { method: 'POST', url: 'https://app.example/api/messages', body: { text: 'y' } });
  await assert.rejects(call(s, { method: 'GET', url: 'https://api.widget.example/v1/ping' }),
    { code: 'target_denied' }, 'what the old page talked to is not what the new one talks to');
  s.router.stop('popup');
  await assert.rejects(resolve(s, h2.hold.holdId, 'approve'), { code: 'stopped' });
  assert.equal(s.calls.length, 0, JSON.stringify(s.calls.map((c) => c.req.url)));
});

test('a call carries the marker headers the page sends with that endpoint, as it sends them; never a credential', async () => {
  const s = await apiSetup();
  // The page saved a tiddler as TiddlyWiki does: its CSRF guard wants X-Requested-With on writes.
  // X-Trace-Id's value is key-like: it is credential-ish, never a marker.
  request(s.wr, { url: 'https://app.example/recipes/default/tiddlers/Harbour%20Notes', method: 'PUT',
    documentId: s.top(), headers: [{ name: 'X-Requested-With', value: 'TiddlyWiki' },
      { name: 'X-Trace-Id', value: 'a81f0c9d22be4417a81f0c9d' }, { name: 'X-CSRF-Token', value: CSRF }] });
  const listed = JSON.stringify(await s.router.handle('browser.network.list', { tabId: 1, frameId: 0 }));
  assert.ok(listed.includes('x-requested-with') && !listed.includes('TiddlyWiki'), 'a list names the header, never its value');

  const allow = { planId: 'plan-1', sites: ['app.example'] };
  const held = await call(s, { method: 'PUT', url: 'https://app.example/recipes/default/tiddlers/New%20Note',
    body: { title: 'New Note', text: 'milk' } });
  assert.equal(held.hold.kind, 'write');
  assert.ok(!JSON.stringify(s.router.holds.get(held.hold.holdId)).includes('TiddlyWiki'), 'the hold keeps no header');
  const done = await resolve(s, held.hold.holdId, 'approve');
  assert.equal(done.state, 'done');
  assert.equal(s.calls.at(-1).req.headers['x-requested-with'], 'TiddlyWiki', 'the approved write is sent as the page sends it');
  assert.equal(s.calls.at(-1).req.headers['x-trace-id'], undefined, 'a key-like value is no marker');
  assert.equal(s.calls.at(-1).req.headers['x-csrf-token'], undefined, 'a credential only when the call asks for it');

  await call(s, { method: 'PUT', url: 'https://app.example/recipes/default/tiddlers/Other', body: { text: 'x' }, allow });
  assert.equal(s.calls.at(-1).req.headers['x-requested-with'], 'TiddlyWiki', 'a write under a plan too');
  await call(s, { method: 'GET', url: 'https://app.example/api/contacts' });
  assert.equal(s.calls.at(-1).req.headers['x-requested-with'], undefined, 'another endpoint: what the page sent with it (nothing)');
  await call(s, { method: 'DELETE', url: 'https://app.example/recipes/default/tiddlers/Other', allow });
  assert.equal(s.calls.length, 3, 'the delete is held, not sent');
});
