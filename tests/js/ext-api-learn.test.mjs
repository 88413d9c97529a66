// SPDX-License-Identifier: GPL-3.0-or-later
// browser.api.learn's reduction (extension/lib/api-learn.js) and the shapes it is made of
// (extension/lib/api-shape.js): what an agent reads as the site's API — routes with {id} and
// {<item>} where the page's data was, merged query keys and body shapes — and never a value.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  baseTemplate, credentialKind, isPlural, learnRoutes, singular, templatePaths,
} from '../../extension/lib/api-learn.js';
import {
  credentialOfHeaders, graphqlOf, isIdSegment, jsonBodyShape, redactPath, requestBodyShape, restoreShapes,
  shapeOf, splitUrl, stableJson, textBodyShape,
} from '../../extension/lib/api-shape.js';

const T = (paths) => Object.fromEntries(templatePaths(paths));

test('segments that name one thing become {id}: numbers, UUIDs, hex, long tokens', () => {
  for (const seg of ['42', '0', '3f2a9c1b', '550e8400-e29b-41d4-a716-446655440000', 'a1b2c3d4e5f6g7h8i9']) {
    assert.ok(isIdSegment(seg), seg);
  }
  for (const seg of ['contacts', 'v1', 'api', 'notes', 'HelloThere', 'deadbeef']) {
    assert.equal(isIdSegment(seg), false, seg);
  }
  assert.deepEqual(baseTemplate('/api/contacts/42'), ['api', 'contacts', '{id}']);
  assert.deepEqual(baseTemplate('/api/items/550e8400-e29b-41d4-a716-446655440000/tags'), ['api', 'items', '{id}', 'tags']);
  assert.deepEqual(baseTemplate('/api/v1/contacts/search'), ['api', 'v1', 'contacts', 'search'],
    'a plain word after a collection is an endpoint, not an item');
});

test('a named item after a collection becomes {<singular>}; encoded ones too, anywhere after one', () => {
  assert.deepEqual(baseTemplate('/recipes/default/tiddlers/HelloThere'), ['recipes', 'default', 'tiddlers', '{tiddler}']);
  assert.deepEqual(baseTemplate('/recipes/default/tiddlers/My%20Note'), ['recipes', 'default', 'tiddlers', '{tiddler}']);
  assert.deepEqual(baseTemplate('/files/My%20Doc/raw'), ['files', '{file}', 'raw']);
  assert.deepEqual(baseTemplate('/wiki/My%20Page'), ['wiki', '{id}'], 'encoded after a non-collection: {id}');
  assert.equal(singular('tiddlers'), 'tiddler');
  assert.equal(singular('categories'), 'category');
  assert.equal(singular('addresses'), 'address');
  assert.equal(singular('boxes'), 'box');
  assert.ok(isPlural('contacts') && !isPlural('address') && !isPlural('status') && !isPlural('{id}'));
});

test('two paths that differ in one segment after a collection share it as a parameter', () => {
  const t = T(['/recipes/default/tiddlers/HelloThere', '/recipes/default/tiddlers/Foo',
    '/recipes/default/tiddlers/bar', '/users/alice/profile', '/users/bob/profile']);
  assert.equal(t['/recipes/default/tiddlers/HelloThere'], '/recipes/default/tiddlers/{tiddler}');
  assert.equal(t['/recipes/default/tiddlers/Foo'], '/recipes/default/tiddlers/{tiddler}');
  assert.equal(t['/recipes/default/tiddlers/bar'], '/recipes/default/tiddlers/{tiddler}',
    'a lower-case title joins the route its siblings show');
  assert.equal(t['/users/alice/profile'], '/users/{user}/profile');
  assert.equal(t['/users/bob/profile'], '/users/{user}/profile');
});

test('different endpoints stay apart', () => {
  const t = T(['/api/contacts', '/api/messages', '/api/v1/x', '/api/v2/x', '/api/contacts/42', '/api/contacts/search']);
  assert.equal(t['/api/contacts'], '/api/contacts');
  assert.equal(t['/api/messages'], '/api/messages', 'two plain words after a non-collection are two routes');
  assert.equal(t['/api/v1/x'], '/api/v1/x', 'versions are not parameters');
  assert.equal(t['/api/contacts/42'], '/api/contacts/{id}');
  assert.equal(t['/api/contacts/search'], '/api/contacts/search', 'an endpoint beside an {id} stays');
});

const DOCS = new Map([['D1', { frameId: 0, url: 'https://app.example/inbox?folder=secret-folder#x' }],
  ['D2', { frameId: 7, url: 'https://widget.example/embed/abc?k=v' }]]);
let seq = 0;
const entry = (over) => ({
  seq: ++seq, requestId: String(seq), documentId: 'D1', frameId: 0, type: 'xmlhttprequest', method: 'GET',
  origin: 'https://app.example', path: '/', queryKeys: [], body: { kind: 'none', keys: {} }, status: 200,
  contentType: 'application/json', size: 10, startedAt: 1000 + seq, ms: 5, fromCache: false, error: null,
  credential: { cookie: true, bearer: false, headers: [] }, agent: false, ...over,
});

test('learn: one route per (method, origin, template), counts, merged query keys and bodies', () => {
  const entries = [
    entry({ path: '/api/contacts/1', queryKeys: ['fields'] }),
    entry({ path: '/api/contacts/2', queryKeys: ['expand'], status: 404 }),
    entry({ method: 'PUT', path: '/api/notes/9', body: { kind: 'json', keys: { text: 'string' } },
      credential: { cookie: true, bearer: false, headers: ['x-csrf-token', 'x-requested-with'] } }),
    entry({ method: 'PUT', path: '/api/notes/10', body: { kind: 'json', keys: { pinned: 'boolean' } } }),
    entry({ method: 'POST', path: '/graphql', body: { kind: 'json', keys: { query: 'string' }, operation: 'sendMessage', operationType: 'mutation' } }),
    entry({ method: 'POST', path: '/graphql', body: { kind: 'json', keys: { query: 'string', variables: 'object' }, operation: 'contacts', operationType: 'query' } }),
    entry({ origin: 'https://widget.example', path: '/v1/track', documentId: 'D2', frameId: 7,
      credential: { cookie: false, bearer: true, headers: [] } }),
    // A frame of another origin calling the site (an ad's no-cors fetch) plants no route of the
    // site's, nor one of a third origin's.
    entry({ path: '/api/account/email', documentId: 'D2', frameId: 7 }),
    entry({ origin: 'https://api.widget.example', path: '/v1/ping', documentId: 'D2', frameId: 7 }),
    entry({ path: '/old', documentId: 'GONE' }),
    entry({ path: '/page.css', type: 'main_frame' }),
    entry({ path: '/api/agent-did-this', agent: true }),
  ];
  const routes = learnRoutes(entries, DOCS);
  const by = Object.fromEntries(routes.map((r) => [`${r.method} ${r.origin}${r.pathTemplate}`, r]));
  assert.deepEqual(Object.keys(by).sort(), [
    'GET https://app.example/api/contacts/{id}', 'GET https://widget.example/v1/track',
    'POST https://app.example/graphql', 'PUT https://app.example/api/notes/{id}',
  ], 'old documents, navigations, the agent\'s own calls and another origin\'s frame calling out teach nothing');
  const contacts = by['GET https://app.example/api/contacts/{id}'];
  assert.equal(contacts.count, 2);
  assert.deepEqual(contacts.queryKeys, ['expand', 'fields']);
  assert.equal(contacts.sampleStatus, 404, 'the newest status');
  assert.deepEqual(contacts.credential, { kind: 'cookie' });
  assert.equal(contacts.frameUrl, 'https://app.example', 'the frame\'s origin, not its page');
  assert.equal(contacts.frameOrigin, 'https://app.example');
  const notes = by['PUT https://app.example/api/notes/{id}'];
  assert.deepEqual(notes.body, { kind: 'json', keys: { text: 'string', pinned: 'boolean' } });
  assert.deepEqual(notes.credential, { kind: 'header', header: 'x-csrf-token' }, 'the CSRF header, not x-requested-with');
  const gql = by['POST https://app.example/graphql'];
  assert.deepEqual(gql.body.operations, ['sendMessage', 'contacts']);
  const track = by['GET https://widget.example/v1/track'];
  assert.deepEqual(track.credential, { kind: 'bearer', header: 'authorization' });
  assert.equal(track.frameId, 7);
  assert.equal(track.frameUrl, 'https://widget.example');
  assert.ok(routes.every((r) => r.lastAt > 0 && r.contentType === 'application/json'));
});

test('learn never shows a token that was in a path', () => {
  const token = 'Zk9ab3Qx7Lm2Np4Rs6Tu8Vw';
  const routes = learnRoutes([entry({ method: 'POST', path: `/reset/${token}` })], DOCS);
  assert.equal(routes[0].pathTemplate, '/reset/{id}');
  assert.ok(!JSON.stringify(routes).includes(token));
});

test('learn keeps the frame\'s origin only: a page\'s path names the person', () => {
  const pages = ['/in/jane-doe-4a5b', '/invite/aB3dE5g', '/u/alice%40example.com', '/in/jane-doe'];
  const docs = new Map(pages.map((p, i) => [`P${i}`, { frameId: 0, url: `https://people.example${p}?tab=1` }]));
  const routes = learnRoutes(pages.map((_, i) => entry({ origin: 'https://people.example', path: `/api/r${'a'.repeat(i + 1)}`,
    documentId: `P${i}` })), docs);
  assert.equal(routes.length, pages.length);
  for (const r of routes) {
    assert.equal(r.frameUrl, 'https://people.example');
    assert.equal(r.frameOrigin, 'https://people.example');
  }
  for (const p of pages) assert.ok(!JSON.stringify(routes).includes(p.split('/')[2]), p);
  const blank = learnRoutes([entry({ documentId: 'B' })], new Map([['B', { frameId: 0, url: 'about:blank' }]]));
  assert.equal(blank[0].frameUrl, null, 'a frame without an origin names none');
});

test('paths shown in lists pass the redactor; long tokens and what follows /reset/ are masked', () => {
  assert.deepEqual(redactPath('/api/contacts/42'), { path: '/api/contacts/42', redacted: false });
  const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abcdefgh';
  assert.equal(redactPath(`/auth/${jwt}`).redacted, true);
  assert.ok(!redactPath(`/auth/${jwt}`).path.includes(jwt));
  const r = redactPath('/reset/abc123XYZ');
  assert.equal(r.redacted, true);
  assert.match(r.path, /^\/reset\/\[redacted reset len=9\]$/);
  assert.equal(redactPath('/files/a1b2c3d4e5f6g7h8i9j0/raw').path.includes('a1b2c3d4e5f6g7h8i9j0'), false);
});

test('URLs: origin, path, query key names only (sorted, unique, bounded, ids as {key})', () => {
  const u = splitUrl('https://app.example:8443/api/x?b=1&a=2&b=3&token=SECRETVALUE&550e8400e29b41d4#frag');
  assert.deepEqual(u, { origin: 'https://app.example:8443', path: '/api/x', queryKeys: ['a', 'b', 'token', '{key}'] });
  const many = splitUrl(`https://a.example/?${Array.from({ length: 50 }, (_, i) => `k${String(i).padStart(2, '0')}=v`).join('&')}`);
  assert.equal(many.queryKeys.length, 32);
  assert.equal(splitUrl('chrome://settings'), null);
});

test('bodies: form names, JSON top-level names and types, GraphQL operations, text and binary', () => {
  const enc = (s) => ({ raw: [{ bytes: new TextEncoder().encode(s).buffer }] });
  assert.deepEqual(requestBodyShape({ formData: { user: ['bob'], password: ['hunter2'] } }),
    { kind: 'form', keys: { user: 'string', password: 'string' } });
  assert.deepEqual(requestBodyShape(enc('{"to":"x","n":1,"ok":true,"z":null,"o":{},"a":[]}')),
    { kind: 'json', keys: { to: 'string', n: 'number', ok: 'boolean', z: 'null', o: 'object', a: 'array' } });
  assert.deepEqual(requestBodyShape(enc('{"query":"mutation Send($t: String) { sendMessage(text: $t) { id } }","variables":{"t":"hi"}}')),
    { kind: 'json', keys: { query: 'string', variables: 'object' }, operation: 'Send', operationType: 'mutation' });
  assert.equal(graphqlOf({ query: 'mutation { sendMessage(text: "x") { id } }' }).field, 'sendMessage');
  assert.equal(jsonBodyShape({ query: '{ me { id } }', operationName: 'Me' }).operation, 'Me');
  assert.equal(jsonBodyShape({ jsonrpc: '2.0', method: 'chat.postMessage', params: {} }).operation, 'chat.postMessage');
  assert.deepEqual(requestBodyShape(enc('a=1&b=2')), { kind: 'form', keys: { a: 'string', b: 'string' } });
  assert.deepEqual(requestBodyShape(enc('hello there')), { kind: 'text', keys: {} });
  assert.deepEqual(requestBodyShape({ raw: [{ bytes: new Uint8Array([0xff, 0xfe, 0x00]).buffer }] }), { kind: 'binary', keys: {} });
  assert.deepEqual(requestBodyShape({ raw: [{ file: '/x' }] }), { kind: 'binary', keys: {} });
  assert.deepEqual(requestBodyShape({ raw: [{ bytes: new Uint8Array(70000).buffer }] }), { kind: 'binary', keys: {} },
    'over 64 KiB is not read');
  assert.deepEqual(textBodyShape(''), { kind: 'none', keys: {} });
  assert.deepEqual(jsonBodyShape([{ id: 1 }, { id: 2 }]), { kind: 'json', keys: { id: 'number' }, array: 2 });
});

test('credentials as kinds and header names, never values', () => {
  const c = credentialOfHeaders([{ name: 'Cookie', value: 'sid=VALUE1' }, { name: 'Authorization', value: 'Bearer VALUE2' },
    { name: 'X-CSRF-Token', value: 'VALUE3' }, { name: 'Accept', value: 'x' }, { name: 'api-token', value: 'VALUE4' }]);
  assert.deepEqual(c, { cookie: true, bearer: true, headers: ['api-token', 'x-csrf-token'] });
  assert.ok(!JSON.stringify(c).includes('VALUE'));
  assert.deepEqual(credentialOfHeaders([{ name: 'authorization', value: 'Basic abc' }]),
    { cookie: false, bearer: false, headers: ['authorization'] });
  assert.deepEqual(credentialKind({ cookie: true, bearer: false, headers: ['authorization'] }), { kind: 'header', header: 'authorization' });
  assert.deepEqual(credentialKind({ cookie: false, bearer: false, headers: ['x-requested-with'] }), { kind: 'none' });
  assert.deepEqual(credentialKind(null), { kind: 'none' });
});

test('reply shapes, and shapes survive the redactor while values do not', () => {
  assert.deepEqual(shapeOf({ id: 1, name: 'x', token: 'y' }), { id: 'number', name: 'string', token: 'string' });
  assert.deepEqual(shapeOf([{ id: 1 }, { id: 2 }, { id: 3 }]), { array: 3, item: { id: 'number' } });
  assert.deepEqual(shapeOf('x'), { type: 'string' });
  const original = { body: { kind: 'json', keys: { password: 'string' } }, shape: { token: 'string' }, json: { token: 'string' } };
  const redacted = { body: { kind: 'json', keys: { password: '[redacted password len=6]' } },
    shape: { token: '[redacted token len=6]' }, json: { token: '[redacted token len=6]' } };
  restoreShapes(original, redacted);
  assert.deepEqual(redacted.body.keys, { password: 'string' });
  assert.deepEqual(redacted.shape, { token: 'string' });
  assert.deepEqual(redacted.json, { token: '[redacted token len=6]' }, 'the reply\'s own data stays redacted');
  assert.equal(stableJson({ b: 1, a: { d: 2, c: [3, { f: 1, e: 2 }] } }), '{"a":{"c":[3,{"e":2,"f":1}],"d":2},"b":1}');
});
