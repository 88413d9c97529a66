// SPDX-License-Identifier: GPL-3.0-or-later
// The worker's tab list (extension/lib/tab-cache.js): primed by one chrome.tabs.query, then kept
// from the tab events; an event during the priming query is not lost; events it cannot follow make
// it ask again. And browser.tabs on top of it answers as it did when it asked on every call.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { TabCache, tabCacheFor } from '../../extension/lib/tab-cache.js';
import { Router } from '../../extension/lib/router.js';
import { eventLog, fakeClock, inertTimers, makeFakeChrome } from './fake-chrome.mjs';

function threeTabs() {
  const fake = makeFakeChrome();
  fake.addTab({ id: 1, url: 'https://a.example/', title: 'A', active: true });
  fake.addTab({ id: 2, url: 'https://b.example/', title: 'B' });
  fake.addTab({ id: 7, windowId: 2, url: 'https://c.example/', title: 'C', active: true });
  return fake;
}

const ids = (tabs) => tabs.map((t) => t.id);

/** A gate the fake's tabs.query waits on: open() lets the pending query answer. */
function gate(fake) {
  let open;
  const opened = new Promise((resolve) => {
    open = resolve;
  });
  let asked;
  const askedP = new Promise((resolve) => {
    asked = resolve;
  });
  fake.queryGate = async () => {
    asked();
    await opened;
  };
  return { open: () => { fake.queryGate = null; open(); }, asked: askedP };
}

test('primed by one query, then many list() calls ask the browser nothing', async () => {
  const fake = threeTabs();
  const cache = new TabCache({ chrome: fake.chrome });
  assert.equal(fake.chrome.tabs.queries, 0, 'nothing is asked before the first list()');
  const first = await cache.list();
  assert.deepEqual(ids(first), [1, 2, 7]);
  assert.deepEqual(first[0], { id: 1, windowId: 1, index: 0, url: 'https://a.example/', title: 'A', active: true },
    'only the fields browser.tabs uses');
  for (let i = 0; i < 50; i += 1) assert.deepEqual(await cache.list(), first);
  assert.equal(fake.chrome.tabs.queries, 1);
  assert.equal(cache.queries, 1);
  // Concurrent first calls share the one query.
  const fresh = new TabCache({ chrome: threeTabs().chrome });
  const [a, b] = await Promise.all([fresh.list(), fresh.list()]);
  assert.deepEqual(a, b);
  assert.equal(fresh.queries, 1);
});

test('a caller cannot change the list by changing what it got', async () => {
  const fake = threeTabs();
  const cache = new TabCache({ chrome: fake.chrome });
  (await cache.list())[0].url = 'https://evil.example/';
  assert.equal((await cache.list())[0].url, 'https://a.example/');
});

test('onCreated, onUpdated, onRemoved and onActivated are reflected without a query', async () => {
  const fake = threeTabs();
  const cache = new TabCache({ chrome: fake.chrome });
  await cache.list();

  fake.addTab({ id: 4, url: 'https://d.example/', title: 'D' }); // onCreated
  let tabs = await cache.list();
  assert.deepEqual(ids(tabs), [1, 2, 4, 7]);
  assert.equal(tabs.find((t) => t.id === 4).index, 2);

  fake.navigate(2, 0, 'https://b.example/next'); // onUpdated {url}
  fake.setTitle(2, 'B next'); // onUpdated {title}
  tabs = await cache.list();
  assert.deepEqual([tabs[1].url, tabs[1].title], ['https://b.example/next', 'B next']);

  await fake.chrome.tabs.update(4, { active: true }); // onActivated
  tabs = await cache.list();
  assert.deepEqual(tabs.map((t) => [t.id, t.active]), [[1, false], [2, false], [4, true], [7, true]],
    'only the tabs of that window change');

  fake.closeTab(2); // onRemoved
  tabs = await cache.list();
  assert.deepEqual(ids(tabs), [1, 4, 7]);
  assert.deepEqual(tabs.map((t) => t.index), [0, 1, 0], 'the tabs after it move up');

  assert.equal(fake.chrome.tabs.queries, 1, 'all of it from the events');
  const asked = (await fake.chrome.tabs.query({})).map(({ incognito: _i, ...t }) => t)
    .sort((a, b) => a.windowId - b.windowId || a.index - b.index); // Chromium's order; the fake's is insertion
  assert.deepEqual(await cache.list(), asked, 'the same as asking');
});

test('onMoved reorders the window, as tabs.query would', async () => {
  const fake = threeTabs();
  fake.addTab({ id: 3, url: 'https://d.example/' });
  const cache = new TabCache({ chrome: fake.chrome });
  assert.deepEqual(ids(await cache.list()), [1, 2, 3, 7]);
  fake.chrome.tabs.onMoved.fire(3, { windowId: 1, fromIndex: 2, toIndex: 0 });
  assert.deepEqual(ids(await cache.list()), [3, 1, 2, 7]);
  fake.chrome.tabs.onMoved.fire(3, { windowId: 1, fromIndex: 0, toIndex: 1 });
  assert.deepEqual(ids(await cache.list()), [1, 3, 2, 7]);
  assert.equal(cache.queries, 1);
});

test('an event during the priming query is not lost', async () => {
  for (const [what, during, check] of [
    ['a created tab', (fake) => fake.addTab({ id: 9, url: 'https://new.example/', title: 'New' }),
      (tabs) => assert.ok(tabs.some((t) => t.id === 9 && t.url === 'https://new.example/'))],
    ['a closed tab', (fake) => fake.closeTab(2), (tabs) => assert.ok(!tabs.some((t) => t.id === 2))],
    ['a navigation', (fake) => fake.navigate(1, 0, 'https://a.example/later'),
      (tabs) => assert.equal(tabs.find((t) => t.id === 1).url, 'https://a.example/later')],
    ['an activation', (fake) => fake.chrome.tabs.update(2, { active: true }),
      (tabs) => assert.deepEqual(tabs.filter((t) => t.windowId === 1).map((t) => t.active), [false, true])],
  ]) {
    // The query answers with the tabs as they were before the event (its answer was made first).
    const fake = threeTabs();
    const before = structuredClone([...fake.tabs.values()]);
    const cache = new TabCache({ chrome: fake.chrome });
    const realQuery = fake.chrome.tabs.query;
    let release;
    fake.chrome.tabs.query = async () => {
      fake.chrome.tabs.queries += 1;
      await new Promise((resolve) => {
        release = resolve;
      });
      return structuredClone(before);
    };
    const listing = cache.list();
    await new Promise((resolve) => setImmediate(resolve));
    await during(fake);
    release();
    const tabs = await listing;
    check(tabs);
    check(await cache.list());
    assert.equal(fake.chrome.tabs.queries, 1, what);
    fake.chrome.tabs.query = realQuery;
  }
});

test('an event the answer already shows changes nothing when replayed', async () => {
  const fake = threeTabs();
  const cache = new TabCache({ chrome: fake.chrome });
  const g = gate(fake);
  const listing = cache.list();
  await g.asked;
  fake.addTab({ id: 4, url: 'https://d.example/' }); // also in the answer: the gate holds, the tabs do not
  fake.closeTab(1);
  g.open();
  const tabs = await listing;
  assert.deepEqual(tabs.map((t) => [t.id, t.index]), [[2, 0], [4, 1], [7, 0]]);
});

test('onReplaced, onAttached and onDetached make the next list() ask again', async () => {
  const fake = threeTabs();
  const cache = new TabCache({ chrome: fake.chrome });
  await cache.list();

  // A prerendered page swaps in: tab 2 becomes tab 12.
  const two = fake.tabs.get(2);
  fake.tabs.delete(2);
  fake.tabs.set(12, { ...two, id: 12 });
  fake.chrome.tabs.onReplaced.fire(12, 2);
  assert.equal(cache.fresh, false);
  assert.deepEqual(ids(await cache.list()), [1, 12, 7]);
  assert.equal(fake.chrome.tabs.queries, 2);
  await cache.list();
  assert.equal(fake.chrome.tabs.queries, 2, 'then answers from memory again');

  // Tab 1 dragged into window 2.
  fake.chrome.tabs.onDetached.fire(1, { oldWindowId: 1, oldPosition: 0 });
  Object.assign(fake.tabs.get(1), { windowId: 2, index: 1 });
  fake.tabs.get(12).index = 0;
  fake.chrome.tabs.onAttached.fire(1, { newWindowId: 2, newPosition: 1 });
  const tabs = await cache.list();
  assert.deepEqual(tabs.map((t) => [t.id, t.windowId, t.index]), [[12, 1, 0], [7, 2, 0], [1, 2, 1]]);
  assert.equal(fake.chrome.tabs.queries, 3);
});

test('a stale-making event during the priming query leaves the list stale', async () => {
  const fake = threeTabs();
  const cache = new TabCache({ chrome: fake.chrome });
  const g = gate(fake);
  const listing = cache.list();
  await g.asked;
  fake.chrome.tabs.onAttached.fire(7, { newWindowId: 1, newPosition: 2 });
  g.open();
  await listing;
  assert.equal(cache.fresh, false);
  await cache.list();
  assert.equal(fake.chrome.tabs.queries, 2);
});

test('an event it cannot follow (an unknown tab activated, no tab in onUpdated) makes it ask again', async () => {
  const fake = threeTabs();
  const cache = new TabCache({ chrome: fake.chrome });
  await cache.list();
  fake.chrome.tabs.onActivated.fire({ tabId: 99, windowId: 1 });
  assert.equal(cache.fresh, false);
  await cache.list();
  fake.chrome.tabs.onUpdated.fire(1, { title: 'x' });
  assert.equal(cache.fresh, false);
  await cache.list();
  assert.equal(fake.chrome.tabs.queries, 3);
});

test('a failed query is not kept: the next list() asks again', async () => {
  const fake = threeTabs();
  const cache = new TabCache({ chrome: fake.chrome });
  const realQuery = fake.chrome.tabs.query;
  fake.chrome.tabs.query = async () => {
    throw new Error('browser busy');
  };
  await assert.rejects(cache.list(), /browser busy/);
  fake.chrome.tabs.query = realQuery;
  assert.deepEqual(ids(await cache.list()), [1, 2, 7]);
});

test('tabCacheFor gives one list per chrome namespace', () => {
  const a = makeFakeChrome().chrome;
  const b = makeFakeChrome().chrome;
  assert.equal(tabCacheFor(a), tabCacheFor(a));
  assert.notEqual(tabCacheFor(a), tabCacheFor(b));
});

// ---- browser.tabs on top of it ----

async function routerWithGrant() {
  const fake = threeTabs();
  fake.addTab({ id: 3, url: 'chrome-extension://immigohjinbkkjncmhkefbfainfbcigp/popup/popup.html', title: 'Chaperone' });
  const router = new Router({ chrome: fake.chrome, emit: eventLog(), now: fakeClock(), timers: inertTimers() });
  await router.load();
  const reply = await router.onPopupMessage({ type: 'popup.createGrant', tabs: [{ tabId: 1 }, { tabId: 2 }],
    preset: 'read', extras: [], durationMin: 15, label: 'Task' });
  assert.equal(reply.ok, true, JSON.stringify(reply));
  return { fake, router, grant: reply.grant };
}

test('browser.tabs asks the browser once, then follows the events; grants are read on every call', async () => {
  const { fake, router, grant } = await routerWithGrant();
  const before = fake.chrome.tabs.queries;
  let { tabs } = await router.handle('browser.tabs', {});
  assert.deepEqual(tabs.map((t) => t.tabId), [1, 2]);
  assert.deepEqual(tabs[0], { tabId: 1, windowId: 1, title: 'A', url: 'https://a.example/', origin: 'https://a.example',
    active: true, grantId: grant.grantId, label: 'Task', scopes: grant.scopes, expiresAt: grant.expiresAt });
  for (let i = 0; i < 20; i += 1) await router.handle('browser.tabs', {});
  assert.equal(fake.chrome.tabs.queries - before, 1, 'one query for 21 calls');

  fake.navigate(1, 0, 'https://a.example/inbox');
  fake.setTitle(1, 'Inbox');
  await fake.chrome.tabs.update(2, { active: true });
  ({ tabs } = await router.handle('browser.tabs', {}));
  assert.deepEqual(tabs.map((t) => [t.tabId, t.url, t.title, t.active]),
    [[1, 'https://a.example/inbox', 'Inbox', false], [2, 'https://b.example/', 'B', true]]);

  // A tab that left its site shows what was granted (the event carried the new URL).
  fake.navigate(2, 0, 'https://secret.example/private');
  ({ tabs } = await router.handle('browser.tabs', {}));
  assert.deepEqual(Object.entries(tabs[1]).filter(([k]) => ['url', 'title', 'state'].includes(k)),
    [['title', 'B'], ['url', 'https://b.example/'], ['state', 'origin_changed']]);

  // A closed tab goes from the list and from the grant.
  fake.closeTab(2);
  await new Promise((resolve) => setImmediate(resolve));
  ({ tabs } = await router.handle('browser.tabs', {}));
  assert.deepEqual(tabs.map((t) => t.tabId), [1]);

  // Revoked: the grant store answers, not the tab list.
  router.grants.revoke(grant.grantId);
  await assert.rejects(router.handle('browser.tabs', {}), (e) => e.code === 'no_grant');
  assert.equal(fake.chrome.tabs.queries - before, 1);
});

test('a tab closed before its onRemoved lands is listed, and a call naming it answers with an error', async () => {
  const { fake, router } = await routerWithGrant();
  await router.handle('browser.tabs', {});
  // Gone from the browser, its events not yet delivered.
  fake.tabs.delete(2);
  fake.frames.delete(2);
  assert.ok((await router.handle('browser.tabs', {})).tabs.some((t) => t.tabId === 2), 'the sub-millisecond window');
  for (const [m, p] of [['browser.context', { tabId: 2 }], ['browser.frames', { tabId: 2 }]]) {
    const e = await router.handle(m, p).then(() => null, (x) => x);
    assert.equal(e?.code, 'stale_document', m);
  }
});
