// SPDX-License-Identifier: GPL-3.0-or-later
// The site's own API end to end: real Chromium with the real extension and the real C core
// engine (tests/chaperone-test-engine), each call made as the app makes it (engine → bridge →
// worker). A fixture app (api-app.html) talks to its JSON API with its HttpOnly session cookie and
// a CSRF header; the person grants it with "See the requests" and "Use the site's own API". Then:
// network.list shows the app's calls as names and sizes, learn gives its routes, a read signed
// with the page's own cookie and CSRF header works and comes back redacted, a message and a delete
// are held — the fixture's log proves nothing reached the server — and the person's Approve sends
// the message once; a server the page never talked to and a page under the URL floor are refused.

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';

import { API_COOKIE, API_CSRF, API_PLANTED_TOKEN, startFixtureServer } from '../fixtures/serve.mjs';
import { ENGINE_PATH, TestEngine } from '../js/engine-harness.mjs';
import { Browser, browserWhyNot, domWait } from './browser-harness.mjs';
import { until } from '../lib/until.mjs';

const engineWhyNot = () => (!ENGINE_PATH ? 'CHAPERONE_TEST_ENGINE is not set (ninja -C build)'
  : existsSync(ENGINE_PATH) ? null : `no engine harness at ${ENGINE_PATH}`);
const skip = browserWhyNot() ?? engineWhyNot() ?? false;
if (skip) console.log(`# skipped: ${skip}`);

const BANK = 'mybank.test'; // blind by the built-in floor ("bank" in the host), mapped to loopback
const NEVER = [API_COOKIE, API_CSRF, API_PLANTED_TOKEN];

describe('the site\'s own API through the engine', { skip }, () => {
  let sites;
  let engine;
  let browser;
  let deviceId;
  const pages = {};
  const tabs = {};

  /** One call as the app makes it; no reply ever carries the cookie, the CSRF value or the token. */
  const call = async (method, params) => {
    const reply = await engine.call(deviceId, method, params, { timeoutMs: 10000 });
    const text = JSON.stringify(reply);
    for (const v of NEVER) assert.ok(!text.includes(v), `${method} replied with a value (${v}): ${text.slice(0, 300)}`);
    return reply;
  };
  const ok = async (method, params) => {
    const reply = await call(method, params);
    assert.ok(reply.result !== undefined, `${method} failed: ${JSON.stringify(reply.error)}`);
    return reply.result;
  };
  const refused = async (code, method, params) => {
    const reply = await call(method, params);
    assert.equal(reply.error?.code, code, `${method} should answer ${code}: ${JSON.stringify(reply).slice(0, 300)}`);
    return reply.error;
  };
  const resolveHold = async (holdId, outcome) => {
    const reply = await engine.command({ cmd: 'resolve-hold', deviceId, holdId, outcome }, { timeoutMs: 10000 });
    assert.ok(reply.result, `resolve-hold: ${JSON.stringify(reply)}`);
    return reply.result;
  };
  const arrived = (method, path) => sites.apiLog().filter((e) => e.method === method && e.path === path);
  const app = () => `${sites.originA}`;

  before(async () => {
    sites = await startFixtureServer();
    engine = await TestEngine.start();
    browser = await Browser.launch({ extraArgs: [`--host-resolver-rules=MAP ${BANK} 127.0.0.1`] });
    (await browser.worker()).on('console', (m) => browser.consoleLines.push(`[worker] ${m.type()}: ${m.text()}`));
    await browser.setPort(engine.port);
    const open = async (name, url) => {
      pages[name] = await browser.ctx.newPage();
      await pages[name].goto(url);
      tabs[name] = await browser.tabIdOf(pages[name]);
    };
    await open('app', `${app()}/api-app.html`);
    await open('bank', `http://${BANK}:${sites.portA}/api-app.html`);
    const popup = await browser.popup(pages.app);
    const mark = engine.mark();
    await browser.startPairing(popup);
    const pairing = await engine.waitFor({ event: 'pairing' }, { after: mark, timeoutMs: 15000 });
    engine.approve(pairing.requestId);
    deviceId = (await engine.waitFor({ event: 'device-online' }, { after: mark, timeoutMs: 20000 })).deviceId;
    await browser.waitForState('connected');
    // The person ticks the two extras in the popup, as they would for a task that needs the API.
    await browser.grant(popup, { pages: [pages.app, pages.bank], preset: 'read',
      extras: ['browser.network.read', 'browser.api.call'], label: 'E2E site API' });
    // The app's calls from now on are captured: it loads again (same site, the grant stays).
    await pages.app.reload();
    await domWait(pages.app, () => document.getElementById('status')?.textContent === 'Ready', null,
      { what: 'the app to have made its calls' });
  }, { timeout: 90000 });

  after(async () => {
    await browser?.close();
    await engine?.stop();
    await sites?.close();
  }, { timeout: 30000 });

  test('network.list shows the app\'s calls as names, kinds and sizes', async () => {
    const list = await ok('browser.network.list', { tabId: tabs.app, frameId: 0 });
    assert.equal(list.capturing, true);
    assert.equal(list.origin, app());
    const shown = list.entries.map((e) => `${e.type} ${e.method} ${e.path}`);
    assert.equal(shown[0], 'main_frame GET /api-app.html', 'the page load itself, bound to the page it started');
    for (const want of ['xmlhttprequest GET /api/contacts', 'xmlhttprequest GET /api/contacts/1',
      'xmlhttprequest GET /api/contacts/3', 'xmlhttprequest PUT /api/notes/7', 'xmlhttprequest POST /graphql']) {
      assert.ok(shown.includes(want), `${want} among ${shown.join(' | ')}`);
    }
    assert.ok(!shown.some((s) => /site\.css/.test(s)), 'stylesheets are not captured');
    const contacts = list.entries.find((e) => e.path === '/api/contacts');
    assert.deepEqual(contacts.queryKeys, ['limit', 'sort']);
    assert.equal(contacts.status, 200);
    assert.equal(contacts.contentType, 'application/json');
    assert.ok(contacts.size > 0 && contacts.ms >= 0);
    assert.deepEqual(contacts.credential, { cookie: true, bearer: false, headers: ['x-csrf-token'] },
      'the cookie and the CSRF header were sent: said as names');
    const note = list.entries.find((e) => e.path === '/api/notes/7');
    assert.deepEqual(note.body, { kind: 'json', keys: { text: 'string', pinned: 'boolean' } });
    const gql = list.entries.find((e) => e.path === '/graphql');
    assert.equal(gql.body.operation, 'Contacts');
    const api = await ok('browser.network.list', { tabId: tabs.app, limit: 3, filter: { type: 'api' } });
    assert.equal(api.entries.length, 3);
    assert.ok(api.entries.every((e) => e.type === 'xmlhttprequest'));
  });

  test('learn gives the routes with templates and how each is signed', async () => {
    const learned = await ok('browser.api.learn', { tabId: tabs.app, frameId: 0 });
    const routes = Object.fromEntries(learned.entries.map((r) => [`${r.method} ${r.pathTemplate}`, r]));
    for (const want of ['GET /api/contacts', 'GET /api/contacts/{id}', 'PUT /api/notes/{id}', 'POST /graphql']) {
      assert.ok(routes[want], `${want} among ${Object.keys(routes).join(' | ')}`);
    }
    assert.equal(routes['GET /api/contacts/{id}'].count, 3, 'fetch and XHR calls of one route');
    assert.deepEqual(routes['GET /api/contacts/{id}'].queryKeys, ['expand']);
    assert.deepEqual(routes['PUT /api/notes/{id}'].credential, { kind: 'header', header: 'x-csrf-token' });
    assert.equal(routes['PUT /api/notes/{id}'].frameUrl, app(), 'the frame\'s origin, never its page');
    assert.equal(routes['GET /api/contacts'].origin, app());
  });

  test('a read signed with the page\'s cookie and CSRF header works; the planted token comes back masked', async () => {
    const before = arrived('GET', '/api/contacts/2').length;
    const listed = async () => (await ok('browser.network.list', { tabId: tabs.app, limit: 200, filter: { text: '/api/contacts/2' } })).entries;
    const listedBefore = (await listed()).length;
    const r = await ok('browser.api.call', { tabId: tabs.app, frameId: 0, method: 'GET', url: `${app()}/api/contacts/2`,
      credential: { kind: 'header', header: 'x-csrf-token' } });
    assert.equal(r.status, 200, JSON.stringify(r));
    assert.equal(r.json.name, 'Bob Brown');
    assert.match(r.json.apiToken, /^\[redacted apiToken len=\d+\]$/);
    assert.deepEqual(r.shape, { id: 'number', name: 'string', email: 'string', apiToken: 'string' });
    const got = arrived('GET', '/api/contacts/2');
    assert.equal(got.length, before + 1);
    assert.equal(got.at(-1).cookie, true, 'the page\'s own HttpOnly cookie signed it');
    assert.equal(got.at(-1).csrf, true, 'with the CSRF value the page itself sent');
    // The browser tells the worker of a request on its own time: wait for one more entry, ended.
    const entries = await until(async () => {
      const l = await listed();
      return l.length > listedBefore && l.at(-1).status !== null ? l : null;
    }, { what: 'our read in the tab\'s request list, ended' });
    assert.equal(entries.at(-1).agent, true, 'the list tells the agent\'s own call from the page\'s');
  });

  test('a message is held and nothing reaches the server; the person\'s Approve sends it once', async () => {
    const params = { tabId: tabs.app, frameId: 0, method: 'POST', url: `${app()}/api/messages`,
      body: { to: 'ann@example.com', text: 'Lunch at noon?' }, credential: { kind: 'header', header: 'x-csrf-token' } };
    const held = await ok('browser.api.call', params);
    assert.equal(held.held, true, JSON.stringify(held));
    assert.equal(held.hold.kind, 'outward');
    assert.equal(held.hold.control, 'POST /api/messages');
    assert.deepEqual(held.hold.fields, [{ name: 'to', value: 'ann@example.com' }, { name: 'text', value: 'Lunch at noon?' }]);
    // The page's own calls are all in: a request in flight now would be ours.
    assert.equal(arrived('POST', '/api/messages').length, 0, 'nothing was sent');
    const done = await resolveHold(held.hold.holdId, 'approve');
    assert.equal(done.state, 'done', JSON.stringify(done));
    assert.deepEqual(done.changes, { status: 201 });
    const sent = arrived('POST', '/api/messages');
    assert.equal(sent.length, 1, 'sent exactly once');
    assert.equal(sent[0].cookie && sent[0].csrf, true);
    assert.ok(sent[0].bodyBytes > 0);
  });

  test('a delete and a GraphQL sendMessage are held; declined, they never reach the server', async () => {
    const graphqlBefore = arrived('POST', '/graphql').length;
    const del = await ok('browser.api.call', { tabId: tabs.app, method: 'DELETE', url: `${app()}/api/contacts/3`,
      credential: { kind: 'header', header: 'x-csrf-token' } });
    assert.equal(del.held, true);
    assert.equal(del.hold.kind, 'delete');
    const gql = await ok('browser.api.call', { tabId: tabs.app, method: 'POST', url: `${app()}/graphql`,
      body: { query: 'mutation { sendMessage(to: 1, text: "hi") { id } }' } });
    assert.equal(gql.hold.kind, 'outward');
    assert.equal((await resolveHold(del.hold.holdId, 'decline')).state, 'declined');
    assert.equal((await resolveHold(gql.hold.holdId, 'decline')).state, 'declined');
    assert.equal(arrived('DELETE', '/api/contacts/3').length, 0);
    assert.equal(arrived('POST', '/graphql').length, graphqlBefore, 'the mutation was not sent');
  });

  test('a server the page never talked to is refused; so is a page under the URL floor', async () => {
    const error = await refused('target_denied', 'browser.api.call',
      { tabId: tabs.app, method: 'GET', url: `${sites.originB}/api/contacts` });
    assert.match(error.message, /already talks to/);
    // Nor by a redirect of the page's own server: not followed (a browser that follows one takes
    // the CSRF header along to the other server).
    const moved = await refused('target_denied', 'browser.api.call', { tabId: tabs.app, method: 'GET', url: `${app()}/api/moved`,
      credential: { kind: 'header', header: 'x-csrf-token' } });
    assert.match(moved.message, /redirect/);
    assert.equal(arrived('GET', '/api/moved').length > 0, true, 'the call reached the page\'s own server');
    assert.equal(sites.apiLog().filter((e) => e.origin === sites.originB).length, 0);
    const floor = await refused('refused_floor', 'browser.network.list', { tabId: tabs.bank });
    assert.match(floor.message, /off limits/, JSON.stringify(floor));
    await refused('refused_floor', 'browser.api.call',
      { tabId: tabs.bank, method: 'GET', url: `http://${BANK}:${sites.portA}/api/contacts` });
    await refused('refused_floor', 'browser.api.learn', { tabId: tabs.bank });
  });

  test('a stopped worker comes back capturing the granted tab again, from an empty ring', async () => {
    const mark = engine.mark();
    await browser.stopServiceWorker();
    await engine.waitFor({ event: 'device-offline', deviceId }, { after: mark, timeoutMs: 10000 });
    const look = await browser.popup(pages.app); // a person opening the popup wakes the worker
    await engine.waitFor({ event: 'device-online', deviceId }, { after: mark, timeoutMs: 20000 });
    await look.close();
    const empty = await ok('browser.network.list', { tabId: tabs.app });
    assert.equal(empty.capturing, true, 'capture started again for the granted tab');
    assert.equal(empty.entries.length, 0, 'the ring was memory only');
    const unsigned = await refused('target_denied', 'browser.api.call',
      { tabId: tabs.app, method: 'GET', url: `${app()}/api/contacts/1`, credential: { kind: 'header', header: 'x-csrf-token' } });
    assert.match(unsigned.message, /sign in again/, 'the header value went with the old worker');
    await pages.app.reload();
    await domWait(pages.app, () => document.getElementById('status')?.textContent === 'Ready', null,
      { what: 'the app to have made its calls again' });
    const again = await ok('browser.network.list', { tabId: tabs.app, filter: { type: 'api' } });
    assert.ok(again.entries.length >= 6, JSON.stringify(again.entries.map((e) => e.path)));
    const r = await ok('browser.api.call', { tabId: tabs.app, method: 'GET', url: `${app()}/api/contacts/1`,
      credential: { kind: 'header', header: 'x-csrf-token' } });
    assert.equal(r.status, 200, 'signed again with what the page sent after the restart');
  });
});
