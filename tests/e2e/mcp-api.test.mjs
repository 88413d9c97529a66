// SPDX-License-Identifier: GPL-3.0-or-later
// The site's own API (issue 17) as an agent meets it, end to end: the official MCP SDK as the
// agent → the relay → the engine → the real extension in real Chromium → the fixture app
// (tests/fixtures/sites/api-app.html, whose JSON API wants the page's HttpOnly cookie and the
// CSRF header the page sends). The agent learns the page's calls, reads through route, makes a
// send that is held until the person approves (then it reaches the server once), sees a payment
// and a delete held, and watches an entry quarantined when the app changes. Nothing the server
// holds as a secret — the cookie, the CSRF value, a token in a reply, an email — reaches the
// agent's results or the memory's database.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { API_COOKIE, API_CSRF, API_PLANTED_TOKEN, startFixtureServer } from '../fixtures/serve.mjs';
import { until } from '../lib/until.mjs';
import { chaperoneWhyNot, startChaperoneWorld } from '../realsites/world.mjs';
import * as H from './mcp-harness.mjs';

const skip = await chaperoneWhyNot() ?? false;
if (skip) console.log(`# skipped: ${skip}`);

const W = {};
const SECRETS = [API_COOKIE, API_CSRF, API_PLANTED_TOKEN];

before(async () => {
  if (skip) return;
  W.server = await startFixtureServer();
  const app = { name: 'fixture', label: 'Fixture API app', origin: W.server.originA, url: `${W.server.originA}/api-app.html?person` };
  W.world = await startChaperoneWorld([app], { name: 'mcp-api' });
  W.agent = W.world.agent;
  W.tab = W.world.driver.tabOf(app);
  // The page's calls happen as it loads: load it again now that the tab is granted (capture
  // starts with the grant).
  await W.agent.call('browser_navigate', { tab: W.tab, url: app.url });
}, { timeout: 120000 });

after(async () => {
  await W.world?.stop();
  await W.server?.close();
});

const api = async (args) => {
  const r = await W.agent.call('browser_api', { tab: W.tab, ...args });
  const text = H.textOf(r);
  for (const s of SECRETS) assert.ok(!text.includes(s) && !JSON.stringify(r).includes(s), `a secret reached the agent: ${text.slice(0, 300)}`);
  return r;
};
const entryOf = (listText, method, template) => {
  const line = listText.split('\n').find((l) => l.includes(` ${method} ${template}`));
  assert.ok(line, `${method} ${template} in ${listText}`);
  return line.trim().split(' ')[0];
};

test('learn: the page\'s own calls as entries, names only; browser_network lists them without values', { skip, timeout: 60000 }, async () => {
  const learned = await api({ action: 'learn' });
  assert.equal(learned.isError, undefined, H.textOf(learned));
  const text = H.textOf(learned);
  assert.match(text, / GET \/api\/contacts \?limit,sort/);
  assert.match(text, / GET \/api\/contacts\/\{id\}/);
  assert.match(text, / PUT \/api\/notes\/\{id\}/);
  W.list = text;
  const net = H.textOf(await W.agent.call('browser_network', { tab: W.tab }));
  assert.match(net, /GET 200 \/api\/contacts \?limit,sort/);
  assert.match(net, /x-csrf-token/, 'the header is named');
  for (const s of SECRETS) assert.ok(!net.includes(s), 'no value in the request list');
});

test('route: a read through the site\'s API, with the page\'s cookie and CSRF header; the reply\'s token masked', { skip, timeout: 60000 }, async () => {
  const before = W.server.apiLog().length;
  const list = await api({ action: 'route', hint: 'contacts' });
  assert.equal(list.structuredContent.route, 'api', H.textOf(list));
  assert.equal(list.structuredContent.status, 200);
  const one = await api({ action: 'route', hint: 'contact', params: { id: '1' } });
  assert.equal(one.structuredContent.route, 'api', H.textOf(one));
  assert.match(H.textOf(one), /apiToken/, 'the member is there, its value masked');
  const sent = W.server.apiLog().slice(before);
  assert.ok(sent.length >= 2 && sent.every((e) => e.cookie && e.csrf && e.method === 'GET'), JSON.stringify(sent));
  const none = await api({ action: 'route', hint: 'invoices' });
  assert.equal(none.structuredContent.route, 'ui');
});

test('a send is held: nothing reaches the server until the person approves, then it does once', { skip, timeout: 60000 }, async () => {
  const id = entryOf(W.list, 'POST', '/api/messages');
  const before = W.server.apiLog().length;
  const held = await api({ action: 'call', entryId: id, body: { to: 'Ada', text: 'See you at 5' } });
  assert.equal(held.structuredContent.held, true, H.textOf(held));
  assert.equal(held.structuredContent.kind, 'outward');
  assert.deepEqual(W.server.apiLog().slice(before).filter((e) => e.method === 'POST'), [], 'nothing sent');
  await W.world.person.approveHold(held.structuredContent.holdId, held.structuredContent);
  const done = await W.agent.call('browser_wait', { id: held.structuredContent.holdId, timeoutMs: 30000 });
  assert.equal(done.structuredContent.state, 'done', JSON.stringify(done.structuredContent));
  await W.server.apiWait((e) => e.method === 'POST' && e.path === '/api/messages', { after: before, what: 'the approved send' });
  assert.equal(W.server.apiLog().slice(before).filter((e) => e.path === '/api/messages').length, 1, 'sent once');
});

test('a payment and a delete are held too; an entry the page never called does not exist', { skip, timeout: 60000 }, async () => {
  const before = W.server.apiLog().length;
  const del = entryOf(W.list, 'DELETE', '/api/contacts/{id}');
  const held = await api({ action: 'call', entryId: del, params: { id: '2' } });
  assert.equal(held.structuredContent.held, true, H.textOf(held));
  assert.equal(held.structuredContent.kind, 'delete');
  const p = await api({ action: 'call', entryId: entryOf(W.list, 'POST', '/api/payments'), body: { amount: 12, currency: 'EUR' } });
  assert.equal(p.structuredContent.held, true, H.textOf(p));
  assert.equal(p.structuredContent.kind, 'outward');
  const nope = await W.agent.call('browser_api', { tab: W.tab, action: 'call', entryId: 'e0123456789ab' });
  assert.equal(nope.isError, true);
  assert.deepEqual(W.server.apiLog().slice(before).filter((e) => e.method !== 'GET'), [], 'nothing written');
});

test('a GET that deletes is never routed, and a call of it is held: nothing reaches the server', { skip, timeout: 60000 }, async () => {
  const before = W.server.apiLog().length;
  const deletes = (e) => e.method === 'GET' && /\/delete$/.test(e.path);
  const routed = await api({ action: 'route', hint: 'delete note', params: { id: '7' } });
  assert.equal(routed.structuredContent.route, 'ui', H.textOf(routed));
  assert.match(routed.structuredContent.why, /deletes something/);
  const held = await api({ action: 'call', entryId: entryOf(W.list, 'GET', '/api/notes/{id}/delete'), params: { id: '7' } });
  assert.equal(held.structuredContent.held, true, H.textOf(held));
  assert.equal(held.structuredContent.kind, 'delete');
  assert.deepEqual(W.server.apiLog().slice(before).filter(deletes), [], 'nothing deleted');
});

test('the app changes: the entry misses twice, is quarantined, and route says ui', { skip, timeout: 60000 }, async () => {
  W.server.retireApi('/api/contacts');
  try {
    for (let i = 0; i < 2; i++) {
      const r = await api({ action: 'route', hint: 'contacts' });
      assert.equal(r.structuredContent.route, 'ui');
      assert.match(r.structuredContent.why, /404/);
    }
    const after = await api({ action: 'route', hint: 'contacts' });
    assert.equal(after.structuredContent.route, 'ui');
    assert.match(after.structuredContent.why, /quarantined/);
    assert.match(H.textOf(await api({ action: 'list' })), /GET \/api\/contacts \?limit,sort .*quarantined/);
  } finally {
    W.server.retireApi(null);
  }
});

test('the site memory on disk holds shapes, never the cookie, the CSRF value, a token or an email', { skip, timeout: 60000 }, async () => {
  const { dataDir } = W.world.world.engine;
  const bytes = async () => Buffer.concat(await Promise.all(['chaperone.db', 'chaperone.db-wal']
    .map((f) => readFile(join(dataDir, f)).catch(() => Buffer.alloc(0)))));
  // The memory's writes are the store thread's: wait until the learned template is on disk.
  await until(async () => (await bytes()).includes('/api/contacts/{id}'), { timeout: 10000, what: 'the learned entries on disk' });
  const all = await bytes();
  for (const s of [...SECRETS, 'ada@example.com', 'See you at 5']) assert.ok(!all.includes(s), `${s} in the database`);
});
