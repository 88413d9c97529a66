// SPDX-License-Identifier: GPL-3.0-or-later
// The grant store: what the popup may create, how grants end, what survives a killed worker, and
// that nothing the engine can send creates or widens a grant.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { GrantStore, clipText } from '../../extension/lib/grants.js';
import { Router } from '../../extension/lib/router.js';
import { methodNames } from '../../extension/lib/scopes.js';
import {
  eventLog, fakeClock, fakeStorageArea, inertTimers, makeFakeChrome,
} from './fake-chrome.mjs';

function setup({ storage } = {}) {
  const fake = makeFakeChrome({ storage });
  fake.addTab({ id: 1, url: 'https://a.example/inbox', title: 'Inbox', children: [
    { frameId: 5, url: 'https://pay.example/widget' },
    { frameId: 6, url: 'about:blank' },
    { frameId: 7, url: 'chrome-extension://abcdefghijklmnopabcdefghijklmnop/frame.html' },
  ] });
  fake.addTab({ id: 2, url: 'https://b.example/', title: 'B' });
  fake.addTab({ id: 3, url: 'chrome://settings/', title: 'Settings' });
  fake.addTab({ id: 4, windowId: 2, url: 'https://c.example/', title: 'C' });
  const clock = fakeClock();
  const timers = inertTimers();
  const emit = eventLog();
  const store = new GrantStore({ chrome: fake.chrome, emit, now: clock, timers });
  return { fake, clock, timers, emit, store };
}

const request = (over = {}) => ({ tabs: [{ tabId: 1 }], preset: 'read', label: 'Sort the inbox', ...over });
const refused = (e) => e.code === 'invalid_params';

test('a grant from the popup: targets filled from the tab and its frames, scopes expanded', async () => {
  const { store, emit, clock, fake } = setup();
  const g = await store.createFromPopup(request({ tabs: [{ tabId: 1, frameIds: [5] }], preset: 'control',
    extras: ['browser.cookies.read'], durationMin: 60 }));
  assert.match(g.grantId, /^[A-Za-z0-9_-]{22}$/);
  assert.match(g.taskId, /^[A-Za-z0-9_-]{22}$/);
  assert.equal(g.label, 'Sort the inbox');
  assert.deepEqual(g.scopes, ['browser.tabs.read', 'browser.dom.read', 'browser.dom.write', 'browser.tab.activate',
    'browser.human.takeover', 'browser.cookies.read']);
  assert.equal(g.createdAt, clock());
  assert.equal(g.expiresAt, clock() + 3_600_000);
  assert.deepEqual(g.targets, [
    { tabId: 1, frameId: 0, documentId: fake.frame(1, 0).documentId, origin: 'https://a.example',
      url: 'https://a.example/inbox', title: 'Inbox' },
    { tabId: 1, frameId: 5, documentId: fake.frame(1, 5).documentId, origin: 'https://pay.example',
      url: 'https://pay.example/widget', title: 'Inbox' },
  ]);
  const [changed] = emit.named('grant.changed');
  assert.equal(changed.reason, 'created');
  assert.equal(changed.grantId, g.grantId);
  assert.deepEqual(changed.grants, [g], 'the full list every time');
  assert.deepEqual(store.list(), [g]);
  assert.deepEqual(fake.calls.alarms.map((a) => a.info.when), [g.expiresAt], 'an alarm backs the timer');
});

test('the default duration is 15 minutes and the default preset must still be named', async () => {
  const { store, clock } = setup();
  const g = await store.createFromPopup(request());
  assert.equal(g.expiresAt - clock(), 15 * 60_000);
  assert.deepEqual(g.scopes, ['browser.tabs.read', 'browser.dom.read']);
  await assert.rejects(store.createFromPopup(request({ tabs: [{ tabId: 2 }], preset: undefined })), refused);
});

test('durations outside 5/15/60/480 minutes are refused', async () => {
  const { store } = setup();
  for (const durationMin of [0, 10, 30, 120, 481, 1440, '15', null, -15]) {
    await assert.rejects(store.createFromPopup(request({ durationMin })), refused, String(durationMin));
  }
  assert.deepEqual(store.list(), []);
  for (const [tabId, durationMin] of [[1, 5], [2, 480]]) {
    await store.createFromPopup(request({ tabs: [{ tabId }], durationMin }));
  }
  assert.equal(store.list().length, 2);
});

test('create validation: tabs, frames, label, window, preset, extras', async () => {
  const { store } = setup();
  const cases = {
    'no tabs': { tabs: [] },
    'tabs not a list': { tabs: 1 },
    'a missing tab': { tabs: [{ tabId: 99 }] },
    'a browser page': { tabs: [{ tabId: 3 }] },
    'a tab twice': { tabs: [{ tabId: 1 }, { tabId: 1 }] },
    'a tab id that is not an integer': { tabs: [{ tabId: '1' }] },
    'a missing frame': { tabs: [{ tabId: 1, frameIds: [42] }] },
    'an about:blank frame': { tabs: [{ tabId: 1, frameIds: [6] }] },
    'an extension frame': { tabs: [{ tabId: 1, frameIds: [7] }] },
    'frameIds not a list': { tabs: [{ tabId: 1, frameIds: 5 }] },
    'no label': { label: '   ' },
    'label not text': { label: 42 },
    'label too long': { label: 'x'.repeat(101) },
    'another window': { tabs: [{ tabId: 4 }], windowId: 1 },
    'unknown preset': { preset: 'everything' },
    'unknown extra': { extras: ['browser.eval'] },
  };
  for (const [what, over] of Object.entries(cases)) {
    await assert.rejects(store.createFromPopup(request(over)), refused, what);
  }
  await assert.rejects(store.createFromPopup(null), refused);
  assert.deepEqual(store.list(), [], 'nothing was created by a refused request');
});

test('a tab already granted cannot be granted again (revoke first), even by two racing creates', async () => {
  const { store } = setup();
  const both = await Promise.allSettled([store.createFromPopup(request()), store.createFromPopup(request())]);
  assert.deepEqual(both.map((r) => r.status).sort(), ['fulfilled', 'rejected']);
  await assert.rejects(store.createFromPopup(request({ tabs: [{ tabId: 2 }, { tabId: 1 }] })), refused);
  assert.equal(store.list().length, 1);
});

test('labels and titles are cut to one bounded line before they leave the extension', () => {
  assert.equal(clipText('a\nb\r\tc', 100), 'a b c');
  const long = clipText('é'.repeat(2000), 1024);
  assert.ok(new TextEncoder().encode(long).length <= 1024);
  assert.ok(long.endsWith('…'));
});

test('expiry: at each call, the tab answers grant_expired and grant.changed says expired', async () => {
  const { store, clock, emit } = setup();
  const g = await store.createFromPopup(request({ durationMin: 5 }));
  assert.ok(store.lookupTab(1).grant);
  clock.advance(5 * 60_000 - 1);
  assert.ok(store.lookupTab(1).grant, 'still live a millisecond before');
  clock.advance(1);
  const { error } = store.lookupTab(1);
  assert.equal(error.code, 'grant_expired');
  assert.deepEqual(store.list(), []);
  const last = emit.named('grant.changed').at(-1);
  assert.deepEqual(last, { grants: [], reason: 'expired', grantId: g.grantId });
  assert.equal(store.lookupTab(2).error.code, 'no_grant', 'a tab never granted');
});

test('expiry by timer and by alarm, with nothing calling', async () => {
  const { store, clock, timers, emit } = setup();
  await store.createFromPopup(request({ durationMin: 5 }));
  assert.equal(timers.pending.size, 1);
  assert.ok([...timers.pending.values()][0].ms >= 5 * 60_000);
  clock.advance(5 * 60_000);
  timers.runAll();
  assert.equal(emit.named('grant.changed').at(-1).reason, 'expired');

  const second = setup();
  await second.store.createFromPopup(request({ durationMin: 5 }));
  second.clock.advance(5 * 60_000);
  second.store.handleAlarm({ name: second.fake.calls.alarms[0].name });
  assert.equal(second.emit.named('grant.changed').at(-1).reason, 'expired');
});

test('revoke: the tab answers no_grant (not grant_expired); the alarm is cleared', async () => {
  const { store, emit, fake } = setup();
  const g = await store.createFromPopup(request());
  const gone = store.revoke(g.grantId);
  assert.equal(gone.grantId, g.grantId);
  assert.equal(store.lookupTab(1).error.code, 'no_grant');
  assert.deepEqual(emit.named('grant.changed').at(-1), { grants: [], reason: 'revoked', grantId: g.grantId });
  assert.ok(fake.calls.cleared.some((name) => name.endsWith(g.grantId)));
  assert.equal(store.revoke(g.grantId), null, 'revoking twice finds nothing');
  assert.equal(store.revoke('nope'), null);
});

test('tombstones: an expired grant keeps answering grant_expired until a new grant covers the tab', async () => {
  const { store, clock } = setup();
  await store.createFromPopup(request({ durationMin: 5 }));
  clock.advance(6 * 60_000);
  assert.equal(store.lookupTab(1).error.code, 'grant_expired');
  clock.advance(60 * 60_000);
  assert.equal(store.lookupTab(1).error.code, 'grant_expired', 'still, an hour later');
  assert.equal(store.noGrantError().code, 'grant_expired');
  const fresh = await store.createFromPopup(request());
  assert.equal(store.lookupTab(1).grant.grantId, fresh.grantId);
  store.revoke(fresh.grantId);
  assert.equal(store.lookupTab(1).error.code, 'no_grant', 'the newest ending decides');
});

test('a killed worker: a new store on the same storage has the same grants, tombstones and expiry', async () => {
  const storage = fakeStorageArea();
  const first = setup({ storage });
  const a = await first.store.createFromPopup(request({ durationMin: 5 }));
  const b = await first.store.createFromPopup(request({ tabs: [{ tabId: 2 }], durationMin: 60 }));
  const c = await first.store.createFromPopup(request({ tabs: [{ tabId: 4 }] }));
  first.store.revoke(c.grantId);
  await first.store.flush();

  const fake2 = makeFakeChrome({ storage });
  const emit2 = eventLog();
  const revived = new GrantStore({ chrome: fake2.chrome, emit: emit2, now: first.clock, timers: inertTimers() });
  await revived.load();
  assert.deepEqual(revived.list(), [a, b]);
  assert.equal(revived.lookupTab(4).error.code, 'no_grant');

  // The worker was gone while `a` ran out: loading expires it and tells the engine.
  const fake3 = makeFakeChrome({ storage });
  const emit3 = eventLog();
  first.clock.advance(10 * 60_000);
  const later = new GrantStore({ chrome: fake3.chrome, emit: emit3, now: first.clock, timers: inertTimers() });
  await later.load();
  assert.deepEqual(later.list().map((g) => g.grantId), [b.grantId]);
  assert.equal(later.lookupTab(1).error.code, 'grant_expired');
  assert.deepEqual(emit3.named('grant.changed').map((e) => e.reason), ['expired']);
  assert.ok(fake3.calls.alarms.some((x) => x.name.endsWith(b.grantId)), 'the alarm is set again');
});

test('damaged storage is ignored, not trusted', async () => {
  const storage = fakeStorageArea(new Map([['grants', [
    { grantId: 'x', targets: [{ tabId: 1, frameId: 0, origin: 'chrome-extension://abc' }], scopes: ['browser.dom.read'],
      createdAt: 1, expiresAt: 9e15 },
    { grantId: 'y', targets: [{ tabId: 1, frameId: 0, origin: 'https://a.example' }], scopes: ['browser.everything'],
      createdAt: 1, expiresAt: 9e15 },
    'junk',
  ]], ['grantTombstones', 'junk']]));
  const { store } = setup({ storage });
  await store.load();
  assert.deepEqual(store.list(), []);
});

test('same-origin navigation keeps the grant and moves the target; another origin does not', async () => {
  const { store, fake } = setup();
  await store.createFromPopup(request({ tabs: [{ tabId: 1, frameIds: [5] }] }));
  const doc = fake.navigate(1, 0, 'https://a.example/sent', { fire: false });
  store.handleCommitted({ tabId: 1, frameId: 0, url: 'https://a.example/sent', documentId: doc });
  let t0 = store.list()[0].targets.find((t) => t.frameId === 0);
  assert.equal(t0.documentId, doc);
  assert.equal(t0.url, 'https://a.example/sent');

  // A granted child frame's own navigation moves its own target only.
  store.handleCommitted({ tabId: 1, frameId: 5, url: 'https://pay.example/step2', documentId: 'CHILD2' });
  const t5 = store.list()[0].targets.find((t) => t.frameId === 5);
  assert.equal(t5.documentId, 'CHILD2');
  assert.equal(store.list()[0].targets.find((t) => t.frameId === 0).documentId, doc);

  store.handleCommitted({ tabId: 1, frameId: 0, url: 'https://evil.example/', documentId: 'EVIL' });
  t0 = store.list()[0].targets.find((t) => t.frameId === 0);
  assert.equal(t0.origin, 'https://a.example', 'the grant does not follow');
  assert.equal(t0.documentId, doc);
  store.handleCommitted({ tabId: 1, frameId: 0, url: 'https://a.example/x', documentId: 'PRE', documentLifecycle: 'prerender' });
  assert.equal(store.list()[0].targets.find((t) => t.frameId === 0).documentId, doc, 'a prerender is not the tab');
});

test('a closed tab leaves its grant; the last tab closing ends it', async () => {
  const { store, emit } = setup();
  const g = await store.createFromPopup(request({ tabs: [{ tabId: 1 }, { tabId: 2 }] }));
  store.handleTabRemoved(1);
  assert.deepEqual(store.list()[0].targets.map((t) => t.tabId), [2]);
  store.handleTabRemoved(2);
  assert.deepEqual(store.list(), []);
  assert.deepEqual(emit.named('grant.changed').slice(-1)[0], { grants: [], reason: 'closed', grantId: g.grantId });
});

test('nothing from the engine path creates or widens a grant', async () => {
  const fake = makeFakeChrome();
  fake.addTab({ id: 1, url: 'https://a.example/', title: 'A' });
  fake.addTab({ id: 2, url: 'https://b.example/', title: 'B' });
  const router = new Router({ chrome: fake.chrome, emit: eventLog(), now: fakeClock(), timers: inertTimers() });
  await router.load();
  let creates = 0;
  const real = router.grants.createFromPopup.bind(router.grants);
  router.grants.createFromPopup = (...args) => {
    creates += 1;
    return real(...args);
  };
  const g = (await router.onPopupMessage({ type: 'popup.createGrant', ...request() })).grant;
  assert.equal(creates, 1);
  const before = JSON.stringify(router.grants.list());

  // Every engine method, with params that try to name a grant, a scope, a tab, a preset.
  const hostile = [
    {}, { tabId: 2 }, { tabId: 1, scopes: ['browser.dom.write'] }, { grantId: g.grantId, scopes: ['browser.cookies.read'] },
    { tabs: [{ tabId: 2 }], preset: 'control', label: 'x' }, { grant: { ...g, scopes: ['browser.dom.write'] } },
    { type: 'popup.createGrant', tabs: [{ tabId: 2 }], preset: 'control', label: 'x' },
  ];
  for (const method of [...methodNames(), 'grant.create', 'popup.createGrant', 'extension.grant', 'grants.set']) {
    if (method === 'grant.revoke' || method === 'extension.stop') continue;
    for (const params of hostile) {
      await router.handle(method, params).catch(() => {});
    }
  }
  assert.equal(creates, 1, 'createFromPopup was never reached from handle()');
  assert.equal(JSON.stringify(router.grants.list()), before, 'no grant changed');
  // Even the page messages cannot create one.
  await router.onPageMessage({ type: 'popup.createGrant', ...request({ tabs: [{ tabId: 2 }] }) }, { tab: { id: 2 } });
  assert.equal(creates, 1);
});

test('the popup may send extraScopes and durationMs; the duration must still be one on offer', async () => {
  const { store, clock } = setup();
  const g = await store.createFromPopup({ tabs: [{ tabId: 1, frameIds: [0, 5] }], preset: 'read',
    extraScopes: ['browser.tab.navigate'], durationMs: 3_600_000, label: 'T' });
  assert.equal(g.expiresAt - clock(), 3_600_000);
  assert.ok(g.scopes.includes('browser.tab.navigate'));
  assert.deepEqual(g.targets.map((t) => t.frameId), [0, 5], 'frame 0 named or not, once');
  for (const durationMs of [1_000, 1_800_000, 28_800_001, '900000']) {
    await assert.rejects(store.createFromPopup({ tabs: [{ tabId: 2 }], preset: 'read', durationMs, label: 'T' }),
      refused, String(durationMs));
  }
});
