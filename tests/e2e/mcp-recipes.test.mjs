// SPDX-License-Identifier: GPL-3.0-or-later
// Recipes remembered in the site memory (issue 17 item 7), end to end: the official MCP SDK as the
// agent → the relay → the core engine harness → the real extension in real Chromium → the fixture
// app (tests/fixtures/sites/api-app.html, whose JSON API wants the page's cookie and CSRF header)
// and its compose page. One agent session saves two recipes — reads of the site's API, and a fill
// and a click by role and name — and a third that keeps a literal value (kept for its session
// only: the site memory refuses it, naming the field). The session ends. A new session meets the
// recipes on its arrival card and in browser_api list, replays each with one call and new params
// (the reads reach the server signed by the page, the fill shows in the page), and cannot replay
// the third. What the first session typed is nowhere in the memory's database.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { API_COOKIE, API_CSRF, API_PLANTED_TOKEN, startFixtureServer } from '../fixtures/serve.mjs';
import { until } from '../lib/until.mjs';
import { Browser, browserWhyNot, domWait } from './browser-harness.mjs';
import * as H from './mcp-harness.mjs';

const skip = H.mcpWhyNot() ?? browserWhyNot() ??
  (process.env.CHAPERONE_TEST_ENGINE ? null : 'CHAPERONE_TEST_ENGINE is not set (ninja -C build)') ?? false;
if (skip) console.log(`# skipped: ${skip}`);

const SECRETS = [API_COOKIE, API_CSRF, API_PLANTED_TOKEN];
const TYPED = 'Lunch-Unique-7731';
const W = { stops: [] };

/** A tool call whose result carries no secret of the server's. */
async function call(agent, tool, args) {
  const r = await agent.call(tool, args, { timeout: 60000 });
  const all = JSON.stringify(r);
  for (const s of SECRETS) assert.ok(!all.includes(s), `a secret reached the agent: ${H.textOf(r).slice(0, 300)}`);
  return r;
}

before(async () => {
  if (skip) return;
  W.sites = await startFixtureServer();
  W.stops.push(() => W.sites.close());
  W.world = await H.startEngineWithAgents();
  W.stops.push(() => W.world.stop());
  const { engine } = W.world;
  W.browser = await Browser.launch();
  W.stops.push(() => W.browser.close());
  await W.browser.setPort(engine.port);
  W.pages = {};
  for (const [name, path] of [['app', '/api-app.html'], ['compose', '/mcp-compose.html']]) {
    W.pages[name] = await W.browser.ctx.newPage();
    await W.pages[name].goto(`${W.sites.originA}${path}`);
  }
  const popup = await W.browser.popup(W.pages.app);
  const mark = engine.mark();
  await W.browser.startPairing(popup);
  const pairing = await engine.waitFor({ event: 'pairing' }, { after: mark, timeoutMs: 15000 });
  engine.approve(pairing.requestId);
  await engine.waitFor({ event: 'device-online' }, { after: mark, timeoutMs: 20000 });
  await W.browser.waitForState('connected');
  await W.browser.grant(popup, { pages: [W.pages.app, W.pages.compose], preset: 'control',
    extras: ['browser.network.read', 'browser.api.call'], label: 'E2E recipes' });
  await popup.close();
  // Capture starts with the grant: the app makes its calls again.
  await W.pages.app.reload();
  await domWait(W.pages.app, () => document.getElementById('status')?.textContent === 'Ready', null,
    { what: 'the app to have made its calls' });
}, { timeout: 120000 });

after(async () => {
  for (const fn of W.stops.splice(0).reverse()) await fn().catch(() => {});
}, { timeout: 30000 });

const tabsOf = async (agent) => {
  const tabs = H.structuredOf(await call(agent, 'browser_tabs', {})).tabs;
  const of = (path) => tabs.find((t) => t.url?.includes(path))?.tab;
  return { app: of('/api-app.html'), compose: of('/mcp-compose.html') };
};

test('one session saves recipes; the site memory keeps those without typed values', { skip, timeout: 90000 }, async () => {
  const agent = await H.connectAgent({ name: 'recipes-first', socket: W.world.socket, timeoutMs: 20000 });
  try {
    const tabs = await tabsOf(agent);
    const learned = H.textOf(await call(agent, 'browser_api', { tab: tabs.app, action: 'learn' }));
    W.entry = /(e[0-9a-f]{12}) GET \/api\/contacts\/\{id\}/.exec(learned)?.[1];
    assert.ok(W.entry, learned);

    const reads = await call(agent, 'browser_batch', { tab: tabs.app, saveAs: 'contact-pair', params: { a: '1', b: '2' },
      steps: [{ api: { entryId: W.entry, params: { id: '{{a}}' } } }, { api: { entryId: W.entry, params: { id: '{{b}}' } } }] });
    assert.equal(H.structuredOf(reads).done, 2, H.textOf(reads));
    assert.match(H.textOf(reads), /Remembered for this site/);

    const fill = await call(agent, 'browser_batch', { tab: tabs.compose, saveAs: 'subject', params: { subject: TYPED },
      steps: [{ act: { target: { role: 'textbox', name: 'Subject' }, action: 'fill', value: '{{subject}}' } },
        { act: { target: { role: 'button', name: 'Preview' }, action: 'click' } }, { wait: { text: 'Preview' } }] });
    assert.equal(H.structuredOf(fill).done, 3, H.textOf(fill));
    assert.match(H.textOf(fill), /Remembered for this site/);

    const literal = await call(agent, 'browser_batch', { tab: tabs.app, saveAs: 'first-contact',
      steps: [{ api: { entryId: W.entry, params: { id: '1' } } }] });
    assert.equal(H.structuredOf(literal).done, 1, H.textOf(literal));
    assert.match(H.textOf(literal), /It lasts as long as this session.*recipes\[0\]\.steps\[0\]\.api\.params\[#0\] is a typed value/);
  } finally {
    await agent.close();
  }
});

test('a new session finds them on its arrival card and in the list, and replays each with one call', { skip, timeout: 90000 }, async () => {
  const agent = await H.connectAgent({ name: 'recipes-later', socket: W.world.socket, timeoutMs: 20000 });
  try {
    const tabs = await tabsOf(agent);
    const snap = H.textOf(await call(agent, 'browser_snapshot', { tab: tabs.app }));
    assert.match(snap, /^Chaperone remembers this site/);
    assert.match(snap, /Recipes: contact-pair \(a, b; 2 steps\); subject \(subject; 3 steps\)/);
    const list = H.textOf(await call(agent, 'browser_api', { tab: tabs.app, action: 'list' }));
    assert.match(list, /Recipes remembered for this site.*contact-pair \(a, b; 2 steps\)/);
    assert.doesNotMatch(list, /first-contact/);

    const before = W.sites.apiLog().length;
    const reads = await call(agent, 'browser_batch', { tab: tabs.app, recipe: 'contact-pair', params: { a: '2', b: '3' } });
    assert.equal(H.structuredOf(reads).done, 2, H.textOf(reads));
    assert.match(H.textOf(reads), /Bob Brown/);
    const sent = W.sites.apiLog().slice(before).filter((e) => e.method === 'GET');
    assert.deepEqual(sent.map((e) => e.path).sort(), ['/api/contacts/2', '/api/contacts/3']);
    assert.ok(sent.every((e) => e.cookie && e.csrf), 'the page\'s own cookie and CSRF header signed each');

    const fill = await call(agent, 'browser_batch', { tab: tabs.compose, recipe: 'subject', params: { subject: 'Dinner at 8' } });
    assert.equal(H.structuredOf(fill).done, 3, H.textOf(fill));
    assert.equal(await W.pages.compose.evaluate(() => document.getElementById('subject').value), 'Dinner at 8');

    const missing = await call(agent, 'browser_batch', { tab: tabs.app, recipe: 'first-contact' });
    assert.equal(missing.isError, true);
    assert.match(H.textOf(missing), /no recipe "first-contact".*Remembered for this site: contact-pair/);
  } finally {
    await agent.close();
  }
});

test('the memory\'s database holds the recipes\' placeholders, never what was typed or a secret', { skip, timeout: 30000 }, async () => {
  const { dataDir } = W.world.engine;
  const bytes = async () => Buffer.concat(await Promise.all(['chaperone.db', 'chaperone.db-wal']
    .map((f) => readFile(join(dataDir, f)).catch(() => Buffer.alloc(0)))));
  await until(async () => (await bytes()).includes('{{subject}}'), { timeout: 10000, what: 'the recipe on disk' });
  const all = await bytes();
  for (const s of [...SECRETS, TYPED, 'Dinner at 8']) assert.ok(!all.includes(s), `${s} in the database`);
});
