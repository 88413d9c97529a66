// SPDX-License-Identifier: GPL-3.0-or-later
// The network capture (extension/lib/capture.js) and browser.network.list / browser.api.learn over
// a fake chrome.* (tests/js/ext-capture-harness.mjs): capture runs only for tabs whose grant has
// network.read or api.call, only for the types an API call can be, bounded to 200 entries, bound
// to the documents the tab shows now — and no value (cookie, token, body, query) ever comes out.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { CAPTURED_TYPES, Capture, RING_SIZE, entryFromRequest, finishEntry, publicEntry } from '../../extension/lib/capture.js';
import { fakeStorageArea } from './fake-chrome.mjs';
import { CAPTURE_EXTRAS, captureSetup, request } from './ext-capture-harness.mjs';

// Planted in requests; none may appear in anything a list, a learn or an entry gives back.
const COOKIE = 'sid=Ck-distinctive-cookie-7731';
const BEARER = 'Bt-distinctive-bearer-4410';
const CSRF = 'Cs-distinctive-csrf-9902';
const PASSWORD = 'Pw-distinctive-password-1187';
const QUERY_VALUE = 'Qv-distinctive-query-5521';
const SECRETS = [COOKIE, BEARER, CSRF, PASSWORD, QUERY_VALUE, 'distinctive'];
const noSecret = (what, value) => {
  const text = JSON.stringify(value);
  for (const s of SECRETS) assert.ok(!text.includes(s), `${what} carries ${s}: ${text.slice(0, 300)}`);
};

const signedHeaders = [{ name: 'Cookie', value: COOKIE }, { name: 'Authorization', value: `Bearer ${BEARER}` },
  { name: 'X-CSRF-Token', value: CSRF }, { name: 'Accept', value: 'application/json' }];

test('an entry is names, kinds and sizes: no cookie, token, body or query value', () => {
  const d = { requestId: '9', tabId: 1, frameId: 0, documentId: 'D1', type: 'xmlhttprequest', method: 'post',
    url: `https://app.example/api/login?next=${QUERY_VALUE}&mode=x#frag`, timeStamp: 1000.4,
    requestBody: { raw: [{ bytes: new TextEncoder().encode(JSON.stringify({ user: 'ann', password: PASSWORD, remember: true })).buffer }] } };
  const e = entryFromRequest(d, 1);
  finishEntry(e, { statusCode: 201, fromCache: false, timeStamp: 1042.9,
    responseHeaders: [{ name: 'Content-Type', value: 'application/json; charset=utf-8' }, { name: 'Content-Length', value: '17' },
      { name: 'Set-Cookie', value: COOKIE }] });
  assert.deepEqual(publicEntry(e), {
    documentId: 'D1', frameId: 0, type: 'xmlhttprequest', method: 'POST', origin: 'https://app.example',
    path: '/api/login', queryKeys: ['mode', 'next'],
    body: { kind: 'json', keys: { user: 'string', password: 'string', remember: 'boolean' } },
    status: 201, contentType: 'application/json', size: 17, startedAt: 1000, ms: 43, fromCache: false, error: null,
    credential: { cookie: false, bearer: false, headers: [] },
  });
  noSecret('an entry', e);
  const failed = finishEntry(entryFromRequest({ ...d, requestBody: undefined, requestId: '10' }, 2),
    { error: 'net::ERR_CONNECTION_REFUSED', timeStamp: 1003 }, { error: true });
  assert.equal(failed.error, 'ERR_CONNECTION_REFUSED');
  assert.equal(failed.status, null);
  const nav = entryFromRequest({ ...d, type: 'main_frame', method: 'GET', requestBody: undefined }, 3);
  assert.equal(nav.documentId, null, 'a navigation gets its document when it commits');
  assert.equal(nav.credential, null, 'headers are only looked at for XHR/fetch');
});

test('capture starts with a grant that has network.read or api.call, for that tab only, and stops with it', async () => {
  const plain = await captureSetup({ extras: [] });
  assert.equal(plain.wr.all().length, 0, 'a Read grant captures nothing');
  assert.equal(plain.router.capture.capturing(1), false);

  const { wr, router, grant } = await captureSetup();
  assert.equal(router.capture.capturing(1), true);
  assert.equal(router.capture.capturing(2), false);
  const listeners = wr.all();
  assert.ok(listeners.length >= 5);
  assert.ok(listeners.every(([, filter]) => filter.tabId === 1), 'every listener is filtered to the granted tab');
  for (const [, filter] of listeners) {
    for (const t of filter.types) assert.ok(CAPTURED_TYPES.includes(t), t);
    for (const t of ['image', 'script', 'stylesheet', 'font', 'media']) assert.ok(!filter.types.includes(t), t);
  }
  const extra = listeners.filter(([, , x]) => x?.includes('extraHeaders'));
  assert.equal(extra.length, 1);
  assert.deepEqual(extra[0][1].types, ['xmlhttprequest'], 'extraHeaders (the costly one) only for XHR/fetch');

  request(wr, { url: 'https://app.example/api/me', documentId: 'X' });
  await router.onPopupMessage({ type: 'popup.revokeGrant', grantId: grant.grantId });
  assert.equal(wr.all().length, 0, 'revoked: the listeners are gone');
  assert.equal(router.capture.capturing(1), false);
  assert.deepEqual(router.capture.entriesOf(1, new Map([['X', {}]])), [], 'and the ring with them');
});

test('a restarted worker captures its granted tabs again, from an empty ring', async () => {
  const storage = fakeStorageArea();
  const first = await captureSetup({ storage });
  request(first.wr, { url: 'https://app.example/api/me', documentId: first.top() });
  await first.router.flush();
  // The worker is killed: a new router over the same session storage (and the same browser).
  const { Router } = await import('../../extension/lib/router.js');
  const again = new Router({ chrome: first.fake.chrome, emit: () => {}, now: first.clock });
  for (const e of Object.values(first.wr)) e?.listeners?.clear(); // a dead worker's listeners are gone
  await again.load();
  assert.equal(again.capture.capturing(1), true);
  assert.ok(first.wr.all().length >= 5);
  const docs = await again.capture.documents(1);
  assert.equal(again.capture.entriesOf(1, docs).length, 0, 'memory only: nothing was kept');
});

test('the ring keeps the newest 200 and counts what it dropped', () => {
  const wr = { onBeforeRequest: null };
  const events = {};
  for (const n of ['onBeforeRequest', 'onSendHeaders', 'onBeforeRedirect', 'onCompleted', 'onErrorOccurred']) {
    const set = new Set();
    events[n] = { addListener: (fn) => set.add(fn), removeListener: (fn) => set.delete(fn), fire: (d) => { for (const f of set) f(d); } };
  }
  Object.assign(wr, events);
  const cap = new Capture({ chrome: { webRequest: wr } });
  cap.sync([{ scopes: ['browser.network.read'], targets: [{ tabId: 4 }] }]);
  for (let i = 0; i < RING_SIZE + 50; i++) {
    events.onBeforeRequest.fire({ requestId: String(i), tabId: 4, frameId: 0, documentId: 'D', type: 'xmlhttprequest',
      method: 'GET', url: `https://a.example/api/items/${i}`, timeStamp: i });
  }
  const docs = new Map([['D', { frameId: 0, url: 'https://a.example/' }]]);
  const all = cap.list(4, docs, { limit: 200 });
  assert.equal(all.entries.length, 200);
  assert.equal(all.dropped, 50);
  assert.equal(all.entries.at(-1).path, '/api/items/249', 'newest last');
  assert.equal(all.entries[0].path, '/api/items/50');
  assert.equal(cap.list(4, docs).entries.length, 50, '50 by default');
  cap.sync([]);
  assert.equal(cap.capturing(4), false);
});

test('browser.network.list: the current documents\' requests, masked, filtered, newest last', async () => {
  const { wr, router, fake, top, widget } = await captureSetup();
  const old = top();
  request(wr, { url: 'https://app.example/api/old', documentId: old });
  // The tab loads a new page of the site: the request that loads it, then the commit.
  request(wr, { url: 'https://app.example/inbox?tab=1', type: 'main_frame', responseHeaders: [{ name: 'Content-Type', value: 'text/html' }] });
  fake.navigate(1, 0, 'https://app.example/inbox?tab=1');
  fake.frames.get(1).set(5, { ...fake.frame(1, 5) ?? {}, frameId: 5, parentFrameId: 0, documentId: 'W2',
    url: 'https://widget.example/embed', errorOccurred: false, documentLifecycle: 'active' });
  request(wr, { url: `https://app.example/api/contacts?q=${QUERY_VALUE}`, documentId: top(), headers: signedHeaders });
  request(wr, { url: 'https://app.example/api/notes/3', method: 'PUT', documentId: top(), headers: signedHeaders,
    body: JSON.stringify({ text: 'hello', password: PASSWORD }) });
  request(wr, { url: 'https://app.example/reset/Zk9ab3Qx7Lm2Np4Rs6Tu8Vw', documentId: top() });
  request(wr, { url: 'https://app.example/ping', type: 'ping', method: 'POST', documentId: top(), body: { formData: { event: ['x'] } } });
  request(wr, { url: 'https://widget.example/api/track', documentId: widget(), frameId: 5 });
  request(wr, { url: 'https://other.example/api/x', tabId: 2, documentId: 'O' });

  const list = await router.handle('browser.network.list', { tabId: 1 });
  noSecret('network.list', list);
  assert.equal(list.documentId, top());
  assert.equal(list.origin, 'https://app.example');
  assert.equal(list.capturing, true);
  assert.equal(list.dropped, 0);
  const paths = list.entries.map((e) => `${e.type} ${e.method} ${e.path}`);
  assert.deepEqual(paths.slice(1), [
    'xmlhttprequest GET /api/contacts', 'xmlhttprequest PUT /api/notes/3',
    'xmlhttprequest GET /reset/[redacted reset len=23]', 'ping POST /ping', 'xmlhttprequest GET /api/track',
  ]);
  assert.equal(paths[0], 'main_frame GET /inbox', 'the page load, bound to the document it started');
  assert.ok(!paths.some((p) => p.includes('/api/old')), 'the previous page\'s requests are not this page\'s');
  const put = list.entries[2];
  assert.deepEqual(put.body, { kind: 'json', keys: { text: 'string', password: 'string' } },
    'a body\'s shape survives the redactor: "password" names a type, not a value');
  assert.deepEqual(put.credential, { cookie: true, bearer: true, headers: ['x-csrf-token'] });
  assert.equal(list.entries[3].redacted, true);
  assert.equal(list.entries[5].frameId, 5);

  const api = await router.handle('browser.network.list', { tabId: 1, limit: 2, filter: { type: 'api', text: '/api/' } });
  assert.deepEqual(api.entries.map((e) => e.path), ['/api/notes/3', '/api/track']);
  const probe = await router.handle('browser.network.list', { tabId: 1, filter: { text: 'Zk9ab' } });
  assert.equal(probe.entries.length, 0, 'a filter cannot find what the redactor hid');

  const learned = await router.handle('browser.api.learn', { tabId: 1 });
  noSecret('api.learn', learned);
  assert.equal(learned.documentId, top());
  const routes = Object.fromEntries(learned.entries.map((r) => [`${r.method} ${r.origin}${r.pathTemplate}`, r]));
  assert.deepEqual(Object.keys(routes).sort(), ['GET https://app.example/api/contacts', 'GET https://app.example/reset/{id}',
    'GET https://widget.example/api/track', 'PUT https://app.example/api/notes/{id}']);
  assert.deepEqual(routes['PUT https://app.example/api/notes/{id}'].credential, { kind: 'bearer', header: 'authorization' });
  assert.deepEqual(routes['GET https://app.example/api/contacts'].queryKeys, ['q']);
  assert.equal(routes['GET https://widget.example/api/track'].frameUrl, 'https://widget.example', 'the frame\'s origin, never its page');

  // The worker keeps the header values the page sent (to sign a call), and nothing shows them.
  assert.equal(router.capture.secret(1, 'https://app.example', 'x-csrf-token'), CSRF);
  assert.equal(router.capture.secret(1, 'https://app.example', 'cookie'), null, 'never the cookie');
  noSecret('the capture\'s entries', router.capture.entriesOf(1, await router.capture.documents(1)));
});

test('a page load is bound to its document when the commit comes before the request (Firefox), never to the one a reload replaced', async () => {
  const { wr, router, fake, top } = await captureSetup();
  const html = [{ name: 'Content-Type', value: 'text/html' }];
  const pageLoads = async () => (await router.handle('browser.network.list', { tabId: 1 })).entries
    .filter((e) => e.type === 'main_frame').map((e) => `${e.path} ${e.documentId === top() ? 'this page' : e.documentId}`);

  // The commit is told first, then the request that loaded it (started before it committed).
  const committedAt = Date.now();
  fake.navigate(1, 0, 'https://app.example/inbox');
  request(wr, { url: 'https://app.example/inbox', type: 'main_frame', responseHeaders: html, at: committedAt - 40 });
  assert.deepEqual(await pageLoads(), ['/inbox this page']);

  // A reload: its request starts after the last commit of the same URL, which is not its document;
  // its own commit, told after it, is.
  request(wr, { url: 'https://app.example/inbox', type: 'main_frame', responseHeaders: html, at: Date.now() + 5 });
  fake.navigate(1, 0, 'https://app.example/inbox');
  assert.deepEqual(await pageLoads(), ['/inbox this page'], 'the reloaded page shows its own load only');
});

test('network.list and api.learn: their scopes, the top frame only, and Stop', async () => {
  const only = await captureSetup({ extras: ['browser.network.read'] });
  assert.equal((await only.router.handle('browser.network.list', { tabId: 1 })).capturing, true);
  await assert.rejects(only.router.handle('browser.api.learn', { tabId: 1 }), { code: 'scope_denied' });
  await assert.rejects(only.router.handle('browser.api.call', { tabId: 1, method: 'GET', url: 'https://app.example/api/x' }),
    { code: 'scope_denied' });
  await assert.rejects(only.router.handle('browser.network.list', { tabId: 1, frameId: 5 }), { code: 'invalid_params' });
  for (const bad of [{ limit: 0 }, { limit: 201 }, { filter: { type: 'img' } }, { filter: 'x' }]) {
    await assert.rejects(only.router.handle('browser.network.list', { tabId: 1, ...bad }), { code: 'invalid_params' }, JSON.stringify(bad));
  }
  await assert.rejects(only.router.handle('browser.network.list', { tabId: 2 }), { code: 'no_grant' });
  only.router.stop('popup');
  await assert.rejects(only.router.handle('browser.network.list', { tabId: 1 }), { code: 'stopped' });
  const none = await captureSetup({ extras: [] });
  await assert.rejects(none.router.handle('browser.network.list', { tabId: 1 }), { code: 'scope_denied' });
  assert.deepEqual(CAPTURE_EXTRAS, ['browser.network.read', 'browser.api.call']);
});

test('a grant that only lists requests captures lean (no headers, no bodies); a grant with the API looks deeper', async () => {
  const { wr, router, top } = await captureSetup({ extras: ['browser.network.read'] });
  const events = () => wr.all().map(([name, , extra]) => `${name}${extra?.length ? `:${extra.join(',')}` : ''}`).sort();
  assert.deepEqual(events(), ['onBeforeRedirect', 'onBeforeRequest', 'onCompleted:responseHeaders', 'onErrorOccurred'],
    'no onSendHeaders, no request bodies');
  request(wr, { url: 'https://app.example/api/items?page=2', documentId: top(), headers: signedHeaders });
  request(wr, { url: 'https://app.example/api/items', method: 'POST', documentId: top(), body: JSON.stringify({ password: PASSWORD }) });
  const lean = router.capture.list(1, await router.capture.documents(1), {}).entries;
  assert.equal(lean.length, 2);
  assert.ok(lean.every((e) => e.credential === null && e.body === null), 'not looked at, so not said');
  assert.equal(router.capture.secret(1, 'https://app.example', 'x-csrf-token'), null, 'no header value is kept');
  noSecret('a lean list', lean);

  // The person grants the tab again with "Use the site's own API": now with headers.
  const g = router.grants.list()[0];
  await router.onPopupMessage({ type: 'popup.revokeGrant', grantId: g.grantId });
  await router.onPopupMessage({ type: 'popup.createGrant', tabs: [{ tabId: 1 }], preset: 'read',
    extras: CAPTURE_EXTRAS, durationMin: 15, label: 'API task' });
  assert.ok(events().includes('onSendHeaders:requestHeaders,extraHeaders'));
  request(wr, { url: 'https://app.example/api/items?page=3', documentId: top(), headers: signedHeaders });
  const deep = router.capture.list(1, await router.capture.documents(1), {}).entries;
  assert.equal(deep.at(-1).credential.bearer, true);
  assert.equal(typeof router.capture.secret(1, 'https://app.example', 'x-csrf-token'), 'string');
});
