// SPDX-License-Identifier: GPL-3.0-or-later
// The site's own API in real Firefox ESR, as extension-api.test.mjs and mcp-api.test.mjs prove it
// in Chromium: the Firefox build of the extension, the core engine (tests/chaperone-test-engine)
// calling it as the app does (`engine.call(deviceId, method, params)`), and the fixture app
// (api-app.html), whose JSON API wants the page's HttpOnly cookie and the CSRF header its script
// sends. The person pairs, and grants the app with "See the requests" and "Use the site's own API"
// in the popup; the app loads again so its calls are captured. Then: the request list names its
// calls, learn gives their routes with templates and how each is signed, a read made inside the
// page is signed with the page's own cookie and header and comes back redacted, a message is held
// until the person's Approve sends it once, a delete, a payment and a GraphQL mutation are held
// and never reach the server, another server and a page under the URL floor are refused. An agent
// (the official MCP SDK through chaperone-mcp) routes a hint to the GET, and is sent to the page
// ("ui", with the reason) once the app has retired that route. No reply carries the cookie, the
// CSRF value or the token planted in a reply. What Firefox cannot do is named where it is skipped
// (docs/extension.md, "Firefox").

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before } from 'node:test';

import { API_COOKIE, API_CSRF, API_PLANTED_TOKEN, startFixtureServer } from '../fixtures/serve.mjs';
import { ENGINE_PATH, TestEngine } from '../js/engine-harness.mjs';
import { until } from '../lib/until.mjs';
import { Firefox, domWait, firefoxWhyNot } from './firefox-harness.mjs';
import { firefoxSuite } from './firefox-suite.mjs';
import * as H from './mcp-harness.mjs';

const skip = firefoxWhyNot()
  ?? (!ENGINE_PATH ? 'CHAPERONE_TEST_ENGINE is not set (meson sets it)' : null)
  ?? (!existsSync(ENGINE_PATH) ? `no engine harness at ${ENGINE_PATH}` : null)
  ?? false;
if (skip) console.log(`# skipped: ${skip}`);
// The agent's steps need the relay and the SDK as well; the rest runs without them.
const agentSkip = skip || H.mcpWhyNot() || false;
if (!skip && agentSkip) console.log(`# the agent's steps skipped: ${agentSkip}`);

// Blind by the built-in floor ("bank" in the host); Firefox resolves it to loopback (the pref
// network.dns.localDomains), where the fixture server answers any name.
const BANK = 'mybank.test';
const NEVER = [API_COOKIE, API_CSRF, API_PLANTED_TOKEN];
const CSRF = { kind: 'header', header: 'x-csrf-token' };

const { W, step, marking, noValue, ok, refused, teardown } = firefoxSuite({ skip, never: NEVER });

async function resolveHold(holdId, outcome) {
  const reply = await W.engine.command({ cmd: 'resolve-hold', deviceId: W.deviceId, holdId, outcome }, { timeoutMs: 10000 });
  assert.ok(reply.result, `resolve-hold: ${JSON.stringify(reply)}`);
  return reply.result;
}
/** The agent's browser_api on the app's tab; nothing of a value in its text or its structure. */
async function api(args) {
  const r = await W.agent.call('browser_api', { tab: W.agentTab, ...args });
  noValue(`browser_api ${args.action}`, r);
  return r;
}
const arrived = (method, path) => W.sites.apiLog().filter((e) => e.method === method && e.path === path);
const app = () => W.sites.originA;
const routesOf = (learned) => Object.fromEntries(learned.entries.map((r) => [`${r.method} ${r.pathTemplate}`, r]));
const PAGE_ROUTES = ['GET /api/contacts', 'GET /api/contacts/{id}', 'PUT /api/notes/{id}', 'POST /graphql'];

before(async () => {
  if (!skip) await marking(setUp);   // a failure shows the browser's and engine's last words
}, { timeout: 120000 });

async function setUp() {
  W.sites = await startFixtureServer();
  if (agentSkip) {
    W.engine = await TestEngine.start();
  } else {
    W.world = await H.startEngineWithAgents();
    W.engine = W.world.engine;
  }
  W.ff = await Firefox.launch({ localDomains: [BANK] });
  await W.ff.setPort(W.engine.port);
  const open = async (name, url) => {
    W.pages[name] = await W.ff.newPage(url, name);
    W.tabs[name] = await W.ff.tabIdOf(W.pages[name]);
    assert.ok(Number.isInteger(W.tabs[name]), `the tab of ${url}`);
  };
  await open('app', `${app()}/api-app.html`);
  await open('bank', `http://${BANK}:${W.sites.portA}/api-app.html`);
  W.popup = await W.ff.popup(W.pages.app);
  W.deviceId = await W.ff.pairWith(W.engine, W.popup);
  // The person ticks the two extras in the popup, as they would for a task that needs the API.
  await W.ff.grant(W.popup, { pages: [W.pages.app, W.pages.bank], preset: 'read',
    extras: ['browser.network.read', 'browser.api.call'], label: 'Firefox site API' });
  // The app's calls from now on are captured: it loads again (same site, the grant stays), and
  // the extension is told of each call in its own time: learn is asked until it has them all.
  await W.pages.app.reload();
  await domWait(W.pages.app, () => document.getElementById('status')?.textContent === 'Ready', null,
    { what: 'the app to have made its calls' });
  let learned;
  await until(async () => {
    learned = await ok('browser.api.learn', { tabId: W.tabs.app, frameId: 0 });
    const routes = routesOf(learned);
    return PAGE_ROUTES.every((r) => routes[r]) && routes['GET /api/contacts/{id}'].count === 3;
  }, { what: 'the app\'s own calls to be learned', timeout: 15000 })
    .catch((err) => assert.fail(`${err.message}: ${JSON.stringify(learned).slice(0, 800)}`));
}

after(teardown, { timeout: 30000 });

step('network.list shows the app\'s calls as names, kinds and sizes, and how they were signed', async () => {
  const list = await ok('browser.network.list', { tabId: W.tabs.app, frameId: 0 });
  assert.equal(list.capturing, true);
  assert.equal(list.origin, app());
  const shown = list.entries.map((e) => `${e.type} ${e.method} ${e.path}`);
  for (const want of ['xmlhttprequest GET /api/contacts', 'xmlhttprequest GET /api/contacts/1',
    'xmlhttprequest GET /api/contacts/3', 'xmlhttprequest PUT /api/notes/7', 'xmlhttprequest POST /graphql']) {
    assert.ok(shown.includes(want), `${want} among ${shown.join(' | ')}`);
  }
  assert.ok(!shown.some((s) => /site\.css/.test(s)), 'stylesheets are not captured');
  const contacts = list.entries.find((e) => e.path === '/api/contacts');
  assert.deepEqual(contacts.queryKeys, ['limit', 'sort']);
  assert.equal(contacts.status, 200);
  assert.equal(contacts.contentType, 'application/json');
  assert.ok(contacts.size > 0 && contacts.ms >= 0, JSON.stringify(contacts));
  assert.deepEqual(contacts.credential, { cookie: true, bearer: false, headers: ['x-csrf-token'] },
    'the cookie and the CSRF header were sent: said as names (Firefox shows Cookie without extraHeaders)');
  const note = list.entries.find((e) => e.path === '/api/notes/7');
  assert.deepEqual(note.body, { kind: 'json', keys: { text: 'string', pinned: 'boolean' } });
  assert.equal(list.entries.find((e) => e.path === '/graphql').body.operation, 'Contacts');
  const some = await ok('browser.network.list', { tabId: W.tabs.app, limit: 3, filter: { type: 'api' } });
  assert.equal(some.entries.length, 3);
  assert.ok(some.entries.every((e) => e.type === 'xmlhttprequest'));
});

// Known bug (docs/extension.md, "Firefox"; firefox-capabilities.test.mjs skips its list step for
// it): the reload's own main-frame request is not always bound to its new document. The app's
// XHR/fetch calls above carry their document in the request itself and are not touched by it.
const NAV_BINDING = 'Firefox does not always bind a reloaded page\'s main-frame request to its new document '
  + '(docs/extension.md, Firefox)';
step('network.list: the page load itself comes first, bound to the page it started', async () => {
  const list = await ok('browser.network.list', { tabId: W.tabs.app, frameId: 0 });
  assert.equal(`${list.entries[0]?.type} ${list.entries[0]?.method} ${list.entries[0]?.path}`, 'main_frame GET /api-app.html',
    JSON.stringify(list.entries.map((e) => e.path)));
}, { skip: skip || NAV_BINDING });

step('learn gives the routes with templates and how each is signed', async () => {
  const learned = await ok('browser.api.learn', { tabId: W.tabs.app, frameId: 0 });
  assert.equal(learned.capturing, true);
  assert.equal(learned.origin, app());
  const routes = routesOf(learned);
  for (const want of PAGE_ROUTES) assert.ok(routes[want], `${want} among ${Object.keys(routes).join(' | ')}`);
  assert.equal(routes['GET /api/contacts/{id}'].count, 3, 'fetch and XHR calls of one route');
  assert.deepEqual(routes['GET /api/contacts/{id}'].queryKeys, ['expand']);
  assert.deepEqual(routes['PUT /api/notes/{id}'].credential, CSRF);
  assert.deepEqual(routes['GET /api/contacts'].credential, CSRF);
  assert.equal(routes['PUT /api/notes/{id}'].frameUrl, app(), 'the frame\'s origin, never its page');
  assert.equal(routes['GET /api/contacts'].origin, app());
});

step('a read made inside the page is signed with its cookie and CSRF header; the planted token comes back masked', async () => {
  const before = arrived('GET', '/api/contacts/2').length;
  const listed = async () => (await ok('browser.network.list', { tabId: W.tabs.app, limit: 200, filter: { text: '/api/contacts/2' } })).entries;
  const listedBefore = (await listed()).length;
  const r = await ok('browser.api.call', { tabId: W.tabs.app, frameId: 0, method: 'GET', url: `${app()}/api/contacts/2`,
    credential: CSRF });
  assert.equal(r.status, 200, JSON.stringify(r));
  assert.equal(r.json.name, 'Bob Brown');
  assert.match(r.json.apiToken, /^\[redacted apiToken len=\d+\]$/);
  assert.deepEqual(r.shape, { id: 'number', name: 'string', email: 'string', apiToken: 'string' });
  const got = arrived('GET', '/api/contacts/2');
  assert.equal(got.length, before + 1, 'sent once');
  assert.equal(got.at(-1).cookie, true, 'the page\'s own HttpOnly cookie signed it');
  assert.equal(got.at(-1).csrf, true, 'with the CSRF value the page itself sent');
  assert.equal(got.at(-1).origin, app());
  // Firefox tells the worker of a request on its own time, maybe after the call has answered:
  // wait for one more entry than before, ended, not for the last one the list had.
  const entries = await until(async () => {
    const l = await listed();
    return l.length > listedBefore && l.at(-1).status !== null ? l : null;
  }, { what: 'our read in the tab\'s request list, ended' });
  assert.equal(entries.at(-1).agent, true, 'the list tells the agent\'s own call from the page\'s');
});

step('a message is held and nothing reaches the server; the person\'s Approve sends it once', async () => {
  const held = await ok('browser.api.call', { tabId: W.tabs.app, frameId: 0, method: 'POST', url: `${app()}/api/messages`,
    body: { to: 'ann@example.com', text: 'Lunch at noon?' }, credential: CSRF });
  assert.equal(held.held, true, JSON.stringify(held));
  assert.equal(held.hold.kind, 'outward');
  assert.equal(held.hold.control, 'POST /api/messages');
  assert.deepEqual(held.hold.fields, [{ name: 'to', value: 'ann@example.com' }, { name: 'text', value: 'Lunch at noon?' }]);
  // The page's own calls are all in (learned above): a request in flight now would be ours.
  assert.equal(arrived('POST', '/api/messages').length, 0, 'nothing was sent');
  const done = await resolveHold(held.hold.holdId, 'approve');
  assert.equal(done.state, 'done', JSON.stringify(done));
  assert.deepEqual(done.changes, { status: 201 });
  const sent = arrived('POST', '/api/messages');
  assert.equal(sent.length, 1, 'sent exactly once');
  assert.equal(sent[0].cookie && sent[0].csrf, true, JSON.stringify(sent[0]));
  assert.ok(sent[0].bodyBytes > 0);
});

step('a delete, a payment and a GraphQL sendMessage are held; declined, they never reach the server', async () => {
  const graphqlBefore = arrived('POST', '/graphql').length;
  const del = await ok('browser.api.call', { tabId: W.tabs.app, method: 'DELETE', url: `${app()}/api/contacts/3`,
    credential: CSRF });
  assert.equal(del.held, true, JSON.stringify(del));
  assert.equal(del.hold.kind, 'delete');
  const pay = await ok('browser.api.call', { tabId: W.tabs.app, method: 'POST', url: `${app()}/api/payments`,
    body: { amount: 12, currency: 'EUR' }, credential: CSRF });
  assert.equal(pay.held, true, JSON.stringify(pay));
  assert.equal(pay.hold.kind, 'outward');
  const gql = await ok('browser.api.call', { tabId: W.tabs.app, method: 'POST', url: `${app()}/graphql`,
    body: { query: 'mutation { sendMessage(to: 1, text: "hi") { id } }' }, credential: CSRF });
  assert.equal(gql.held, true, JSON.stringify(gql));
  assert.equal(gql.hold.kind, 'outward');
  for (const h of [del, pay, gql]) assert.equal((await resolveHold(h.hold.holdId, 'decline')).state, 'declined');
  assert.equal(arrived('DELETE', '/api/contacts/3').length, 0, 'the delete was not sent');
  assert.equal(arrived('POST', '/api/payments').length, 0, 'the payment was not sent');
  assert.equal(arrived('POST', '/graphql').length, graphqlBefore, 'the mutation was not sent');
});

step('a server the page never talked to is refused; so is a page under the URL floor', async () => {
  const error = await refused('target_denied', 'browser.api.call',
    { tabId: W.tabs.app, method: 'GET', url: `${W.sites.originB}/api/contacts` });
  assert.match(error.message, /already talks to/);
  assert.equal(W.sites.apiLog().filter((e) => e.origin === W.sites.originB).length, 0);
  const floor = await refused('refused_floor', 'browser.network.list', { tabId: W.tabs.bank });
  assert.match(floor.message, /off limits/, JSON.stringify(floor));
  await refused('refused_floor', 'browser.api.call',
    { tabId: W.tabs.bank, method: 'GET', url: `http://${BANK}:${W.sites.portA}/api/contacts` });
  await refused('refused_floor', 'browser.api.learn', { tabId: W.tabs.bank });
  assert.equal(W.sites.apiLog().filter((e) => e.origin !== app()).length, 0, 'nothing reached another server');
});

step('an agent\'s route {hint} reads through the GET, signed as the page signs it; a hint with no route says ui', async () => {
  W.agent = await H.connectAgent({ name: 'firefox-api-e2e', socket: W.world.socket });
  const tabs = H.structuredOf(H.ok(await W.agent.call('browser_tabs'), 'browser_tabs')).tabs ?? [];
  W.agentTab = tabs.find((t) => (t.url ?? '').startsWith(`${app()}/api-app.html`))?.tab;
  assert.ok(W.agentTab, JSON.stringify(tabs));
  const learned = H.textOf(H.ok(await api({ action: 'learn' }), 'learn'));
  assert.match(learned, / GET \/api\/contacts \?limit,sort \(header/);
  assert.match(learned, / GET \/api\/contacts\/\{id\} \?expand \(header/);
  assert.match(learned, / PUT \/api\/notes\/\{id\}/);
  const before = W.sites.apiLog().length;
  const list = H.ok(await api({ action: 'route', hint: 'contacts' }), 'route contacts');
  assert.equal(list.structuredContent.route, 'api', H.textOf(list));
  assert.equal(list.structuredContent.pathTemplate, '/api/contacts');
  assert.equal(list.structuredContent.status, 200);
  const one = H.ok(await api({ action: 'route', hint: 'contact', params: { id: '1' } }), 'route contact');
  assert.equal(one.structuredContent.route, 'api', H.textOf(one));
  assert.equal(one.structuredContent.pathTemplate, '/api/contacts/{id}');
  assert.match(H.textOf(one), /Ann Archer/);
  assert.match(H.textOf(one), /apiToken/, 'the member is there, its value masked');
  const sent = W.sites.apiLog().slice(before);
  assert.deepEqual(sent.map((e) => `${e.method} ${e.path}`), ['GET /api/contacts', 'GET /api/contacts/1']);
  assert.ok(sent.every((e) => e.cookie && e.csrf), JSON.stringify(sent));
  const none = H.ok(await api({ action: 'route', hint: 'invoices' }), 'route invoices');
  assert.equal(none.structuredContent.route, 'ui');
  assert.equal(W.sites.apiLog().length, before + 2, 'a hint with no route sends nothing');
}, { skip: agentSkip });

step('the app retires a route: route says ui with the server\'s answer, then that the entry is quarantined', async () => {
  W.sites.retireApi('/api/contacts');
  try {
    for (let i = 0; i < 2; i++) {
      const r = H.ok(await api({ action: 'route', hint: 'contacts' }), 'route contacts, retired');
      assert.equal(r.structuredContent.route, 'ui', H.textOf(r));
      assert.match(r.structuredContent.why, /GET \/api\/contacts answered 404/);
    }
    const before = W.sites.apiLog().length;
    const after = H.ok(await api({ action: 'route', hint: 'contacts' }), 'route contacts, quarantined');
    assert.equal(after.structuredContent.route, 'ui');
    assert.match(after.structuredContent.why, /quarantined/);
    assert.equal(W.sites.apiLog().length, before, 'a quarantined entry is not called');
    assert.match(H.textOf(await api({ action: 'list' })), /GET \/api\/contacts \?limit,sort .*quarantined/);
  } finally {
    W.sites.retireApi(null);
  }
}, { skip: agentSkip });

// extension-api.test.mjs stops the worker and sees capture come back from an empty ring. Firefox
// runs the background as an event page that it suspends on its own after 30 s idle, and BiDi has
// no command to suspend it on purpose: that path stays tested in Chromium.
step('a stopped background comes back capturing the granted tab again, from an empty ring', () => {}, {
  skip: skip || 'Firefox\'s event page cannot be suspended on purpose over WebDriver BiDi (docs/extension.md, Firefox)',
});
