// SPDX-License-Identifier: GPL-3.0-or-later
// The router end to end over a fake chrome.*: the order of the checks, Stop (set before anything is
// awaited), Resume only by the person, refs and captures, steps and the pill, handoffs, and the
// handlers' results.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { ChaperoneError, MAX_CAPTURES, Router } from '../../extension/lib/router.js';
import {
  eventLog, fakeClock, fakeStorageArea, inertTimers, makeFakeChrome,
} from './fake-chrome.mjs';
import { watch } from '../lib/until.mjs';

// The router does some of its work a task later (the pill is drawn after the call that moved the
// step; a closed tab's cleanup awaits storage). Tests wait for that work's effect — a page-agent
// call, an emitted event, a storage write — each of which tells `seen`.
const seen = watch();
const after = (predicate, what) => seen.when(predicate, { timeout: 5000, what });
const told = (log) => {
  const push = log.push.bind(log);
  log.push = (...items) => { const n = push(...items); seen.notify(); return n; };
  return log;
};
const noticed = (emit) => {
  const wrapped = (event, data) => { emit(event, data); seen.notify(); };
  return Object.assign(wrapped, { events: emit.events, named: emit.named });
};

/** What the fake page agent answers, per op. */
function pageAgent(log = []) {
  told(log);
  return async (op, args, where) => {
    log.push({ op, args, where });
    switch (op) {
      case 'context':
        return { ok: true, value: {
          url: 'https://a.example/inbox', title: 'Inbox', text: 'hello', textTruncated: false, headings: [],
          forms: [{ ref: 'e3', name: 'f', fields: [{ ref: 'e4', name: 'q', type: 'text', filled: false, valueLength: 0 }] }],
          nodes: [{ ref: 'e1', role: 'button', name: 'Send' }, { ref: 'e2', role: 'link', name: 'Next' }],
          iframes: [{ index: 0, name: 'pay', title: 'Pay', src: 'https://pay.example/widget', origin: 'https://pay.example' }],
          diff: args.diff ? { added: [{ ref: 'e9' }], removed: ['e2'], changed: [], textChanged: false } : null,
        } };
      case 'inspect':
        if (args.ref === 'e404') return { ok: false, error: { code: 'stale_node', message: 'gone' } };
        return { ok: true, value: { ref: args.ref, tag: 'button', name: 'Send' } };
      case 'action':
        return { ok: true, value: { action: args.action, ref: args.ref, done: true, changes: {} } };
      default:
        return { ok: true, value: { shown: true } };
    }
  };
}

async function setup({ storage, preset = 'control', extras = ['browser.tab.navigate', 'browser.cookies.read'],
  durationMin = 15, pageLog = [], grantTabs = [{ tabId: 1, frameIds: [5] }] } = {}) {
  if (storage) watchWrites(storage);
  const fake = makeFakeChrome({ storage, pageRun: pageAgent(pageLog) });
  fake.addTab({ id: 1, url: 'https://a.example/inbox', title: 'Inbox', active: true,
    children: [{ frameId: 5, url: 'https://pay.example/widget' }, { frameId: 6, url: 'https://ads.example/x' }] });
  fake.addTab({ id: 2, url: 'https://b.example/', title: 'B' });
  fake.addTab({ id: 3, url: 'chrome-extension://immigohjinbkkjncmhkefbfainfbcigp/popup/popup.html', title: 'Chaperone' });
  const clock = fakeClock();
  const emit = noticed(eventLog());
  const router = new Router({ chrome: fake.chrome, emit, now: clock, timers: inertTimers() });
  await router.load();
  let grant = null;
  if (grantTabs) {
    const reply = await router.onPopupMessage({ type: 'popup.createGrant', tabs: grantTabs, preset, extras,
      durationMin, label: 'Task' });
    assert.equal(reply.ok, true, JSON.stringify(reply));
    grant = reply.grant;
  }
  return { fake, clock, emit, router, grant, pageLog };
}

const code = async (promise) => {
  try {
    await promise;
    return 'ok';
  } catch (e) {
    assert.ok(e instanceof ChaperoneError, `a ChaperoneError, not ${e?.stack ?? e}`);
    return e.code;
  }
};
/** A storage area that tells `seen` after each write. */
function watchWrites(area) {
  if (area.watched) return area;
  const set = area.set.bind(area);
  area.set = async (items) => { await set(items); seen.notify(); };
  area.watched = true;
  return area;
}

test('the checks run in the contract\'s order', async () => {
  const { router, clock, fake } = await setup({ preset: 'read', extras: [] });
  // stopped beats everything, even an unknown method and bad params.
  router.stop('app');
  assert.equal(await code(router.handle('browser.nope', 'bad')), 'stopped');
  assert.equal(await code(router.handle('browser.context', { tabId: 'x' })), 'stopped');
  router.resume('app');
  // unknown method before params.
  assert.equal(await code(router.handle('browser.nope', 'bad')), 'unknown_method');
  // params before the grant: a bad shape on a tab nobody granted is invalid_params.
  assert.equal(await code(router.handle('browser.context', { tabId: 2, frameId: -1 })), 'invalid_params');
  // grant before scope: dom.write on an ungranted tab is no_grant.
  assert.equal(await code(router.handle('browser.navigate', { tabId: 2, url: 'https://b.example/' })), 'no_grant');
  // scope before target: navigate on the granted tab without tab.navigate is scope_denied even to another site.
  assert.equal(await code(router.handle('browser.navigate', { tabId: 1, url: 'https://evil.example/' })), 'scope_denied');
  assert.equal(await code(router.handle('browser.cookies', { tabId: 1 })), 'scope_denied');
  // target: a frame not in the grant, then origin, then document.
  assert.equal(await code(router.handle('browser.context', { tabId: 1, frameId: 6 })), 'target_denied');
  assert.equal(await code(router.handle('browser.context', { tabId: 1, frameId: 0, documentId: 'OLD' })), 'stale_document');
  fake.navigate(1, 5, 'https://evil.example/');
  assert.equal(await code(router.handle('browser.context', { tabId: 1, frameId: 5 })), 'origin_changed');
  assert.equal(await code(router.handle('browser.context', { tabId: 1 })), 'ok');
  // expiry turns the same call into grant_expired.
  clock.advance(15 * 60_000);
  assert.equal(await code(router.handle('browser.context', { tabId: 1 })), 'grant_expired');
  assert.equal(await code(router.handle('browser.tabs', {})), 'grant_expired');
});

test('unknown methods, including prototype names, are unknown_method', async () => {
  const { router } = await setup();
  for (const m of ['browser.eval', 'toString', '__proto__', 'constructor', 'hasOwnProperty', '', 42, undefined,
    'extension.info', 'popup.createGrant']) {
    assert.equal(await code(router.handle(m, {})), 'unknown_method', String(m));
  }
  assert.ok(router.methods().includes('browser.context'));
  assert.ok(!router.methods().includes('extension.info'), 'extension.info is answered by the worker itself');
});

test('params shapes are checked: invalid_params', async () => {
  const { router } = await setup();
  const cases = [
    ['browser.tabs', 'x'], ['browser.tabs', []], ['browser.frames', {}], ['browser.frames', { tabId: 1.5 }],
    ['browser.context', { tabId: 1, diff: 'yes' }], ['browser.context', { tabId: 1, documentId: 7 }],
    ['browser.node.inspect', {}], ['browser.node.inspect', { ref: 'e12' }], ['browser.node.inspect', { ref: 'a:b:c' }],
    ['browser.node.action', { ref: 'abc:e1', action: 'submit' }], ['browser.node.action', { ref: 'abc:e1', action: 'setValue' }],
    ['browser.node.action', { ref: 'abc:e1', action: 'click', value: 'x' }],
    ['browser.navigate', { tabId: 1 }], ['browser.navigate', { tabId: 1, url: 'not a url' }],
    ['browser.handoff.request', { tabId: 1, reason: 'bored', message: 'x' }],
    ['browser.handoff.request', { tabId: 1, reason: 'qr', message: 'x'.repeat(251) }],
    ['browser.handoff.request', { tabId: 1, reason: 'qr', message: '项'.repeat(251) }],
    ['browser.handoff.request', { tabId: 1, reason: 'qr', message: '😀'.repeat(251) }],
    ['browser.handoff.request', { tabId: 1, reason: 'qr', message: 42 }],
    ['browser.handoff.status', {}], ['browser.handoff.status', { handoffId: 'unknown-id' }],
    ['grant.revoke', {}], ['grant.revoke', { grantId: 'nope' }],
    ['extension.handoff.resolve', { handoffId: 'x', outcome: 'maybe' }],
    ['extension.handoff.resolve', { handoffId: 'unknown', outcome: 'done' }],
    ['extension.stop', { source: 'agent' }],
  ];
  for (const [method, params] of cases) {
    assert.equal(await code(router.handle(method, params)), 'invalid_params', `${method} ${JSON.stringify(params)}`);
  }
  assert.equal(router.state().stopped, false, 'a refused extension.stop did not stop');
});

test('stop: set before anything is awaited — a call after stop() returned is refused while storage still writes', async () => {
  const storage = fakeStorageArea();
  const { router, emit, pageLog } = await setup({ storage });
  let release;
  const gate = new Promise((r) => { release = r; });
  // The write waiting at the gate is what this test holds: it knows when the write got there.
  let atGate;
  const reachedGate = new Promise((r) => { atGate = r; });
  storage.gate = { then: (ok, fail) => { atGate(); return gate.then(ok, fail); } };
  const writesBefore = storage.writes;

  const saved = router.stop('esc');
  let savedDone = false;
  saved.then(() => { savedDone = true; });
  // The call starts after stop() returned; the stop's write is still pending.
  const call = router.handle('browser.context', { tabId: 1 });
  assert.equal(await code(call), 'stopped');
  await reachedGate;
  assert.equal(savedDone, false, 'the storage write had not finished');
  assert.equal(storage.writes, writesBefore, 'nothing reached storage yet');
  assert.deepEqual(emit.named('stop.changed').at(-1).stopped, true);
  assert.equal(emit.named('stop.changed').at(-1).source, 'esc');

  release();
  storage.gate = null;
  await saved;
  assert.deepEqual(storage.backing.get('stopped').stopped, true);
  assert.ok(pageLog.some((c) => c.op === 'pill' && c.args.stopped === true), 'the pill shows stopped');
});

test('stop from the popup, the page (any tab) and the app all act at once', async () => {
  for (const how of ['popup', 'page', 'pageOtherTab', 'app']) {
    const { router } = await setup();
    const storageGate = new Promise(() => {}); // storage never answers
    router.chrome.storage.session.gate = storageGate;
    if (how === 'popup') router.onPopupMessage({ type: 'popup.stop' });
    if (how === 'page') router.onPageMessage({ type: 'page.stop', source: 'esc' }, { tab: { id: 1 }, frameId: 0 });
    if (how === 'pageOtherTab') router.onPageMessage({ type: 'page.stop', source: 'pill' }, { tab: { id: 2 }, frameId: 0 });
    if (how === 'app') router.handle('extension.stop', { source: 'app' });
    assert.equal(router.state().stopped, true, how);
    assert.equal(await code(router.handle('browser.tabs', {})), 'stopped', how);
  }
});

test('a call in flight when Stop lands is refused too', async () => {
  let releasePage;
  const { router, fake } = await setup();
  const slow = new Promise((r) => { releasePage = r; });
  let entered;
  const inPage = new Promise((r) => { entered = r; });
  const realExec = fake.chrome.scripting.executeScript;
  fake.chrome.scripting.executeScript = async (opts) => {
    if (opts.func) {
      entered();
      await slow;
    }
    return realExec(opts);
  };
  const call = router.handle('browser.context', { tabId: 1 });
  await inPage;   // the call is in the page when Stop lands
  router.stop('pill');
  assert.equal(await code(call), 'stopped');
  releasePage();
});

test('resume only from the popup or extension.resume; stop survives a killed worker', async () => {
  const storage = fakeStorageArea();
  const { router, fake } = await setup({ storage });
  await router.stop('pill');
  for (const attempt of [
    () => router.onPageMessage({ type: 'page.resume' }, { tab: { id: 1 } }),
    () => router.onPageMessage({ type: 'popup.resume' }, { tab: { id: 1 } }),
    () => router.handle('browser.resume', {}),
    () => router.handle('browser.context', { tabId: 1, resume: true }),
  ]) {
    await attempt().catch(() => {});
    assert.equal(router.state().stopped, true);
  }
  await router.flush();

  // A new worker on the same session storage is still stopped.
  const again = new Router({ chrome: makeFakeChrome({ storage }).chrome, now: fakeClock(), timers: inertTimers() });
  await again.load();
  assert.equal(again.state().stopped, true);
  assert.equal(await code(again.handle('browser.tabs', {})), 'stopped');

  await router.onPopupMessage({ type: 'popup.resume' });
  assert.equal(router.state().stopped, false);
  assert.equal(await code(router.handle('browser.tabs', {})), 'ok');
  await again.handle('extension.resume', {});
  assert.equal(again.state().stopped, false);
  void fake;
});

test('the engine can always revoke, resolve and resume while stopped', async () => {
  const { router, grant } = await setup();
  router.stop('app');
  assert.deepEqual(await router.handle('extension.grants', {}), { grants: [grant] });
  assert.deepEqual(await router.handle('grant.revoke', { grantId: grant.grantId }), { grantId: grant.grantId, revoked: true });
  assert.deepEqual(await router.handle('extension.resume', {}), { stopped: false });
});

test('steps: each agent call on a tab counts, the pill shows the step, agent.step is sent', async () => {
  const { router, emit, pageLog } = await setup();
  await router.handle('browser.context', { tabId: 1 });
  await router.handle('browser.frames', { tabId: 1 });
  await after(() => pageLog.some((c) => c.op === 'pill' && c.args.step === 2), 'the pill drawn with step 2');
  assert.deepEqual(emit.named('agent.step'), [{ tabId: 1, step: 1 }, { tabId: 1, step: 2 }]);
  // The pill is drawn a task after each call: calls in a burst draw it once or twice, always
  // with the step as it is by then, never an older one.
  const pills = pageLog.filter((c) => c.op === 'pill');
  assert.ok(pills.length >= 1, 'the pill was drawn');
  assert.equal(pills.at(-1).args.step, 2);
  assert.ok(pills.every((p) => p.where.frameId === 0 && p.args.show === true && p.args.stopped === false));
  assert.equal(router.stepOf(1), 2);
  // Refused calls do not count.
  await router.handle('browser.context', { tabId: 1, frameId: 6 }).catch(() => {});
  assert.equal(router.stepOf(1), 2);
});

/**
 * A page agent whose "e1" is a write control: with `allow` covering a.example its click goes through
 * and the answer carries `plan` (as page-agent.js answers), plus `extra` when a test sets it.
 */
function planPage(log = [], planned = { extra: {} }) {
  const base = pageAgent(log);
  return async (op, args, where) => {
    if (op !== 'action' || args.action !== 'click') return base(op, args, where);
    log.push({ op, args, where });
    const value = { action: 'click', ref: args.ref, done: true, changes: {} };
    if (args.ref === 'e1' && args.allow?.sites?.includes('a.example')) {
      value.plan = { planId: args.allow.planId, site: 'a.example', ...planned.extra };
    }
    return { ok: true, value };
  };
}

/** One granted tab (1, a.example, Control) whose page is planPage(). */
async function planSetup(storage, log, planned) {
  const fake = makeFakeChrome({ storage, pageRun: planPage(log, planned) });
  fake.addTab({ id: 1, url: 'https://a.example/inbox', title: 'Inbox', active: true });
  const router = new Router({ chrome: fake.chrome, now: fakeClock(), timers: inertTimers() });
  await router.load();
  const made = await router.onPopupMessage({ type: 'popup.createGrant', tabs: [{ tabId: 1 }], preset: 'control', label: 'T' });
  assert.equal(made.ok, true);
  return { fake, router, grant: made.grant };
}

test('plan steps: a covered write\'s step goes to the pill; kept while clicks carry the plan; cleared otherwise', async () => {
  const storage = fakeStorageArea();
  const log = [];
  const planned = { extra: {} };
  const { router: r, grant } = await planSetup(storage, log, planned);
  const ctx = await r.handle('browser.context', { tabId: 1 });
  const ref = (e) => `${ctx.captureId}:${e}`;
  // Every call moves the step, and the pill is drawn a task later with it: lastPill waits for the
  // pill drawn after the latest call.
  const pills = () => log.filter((c) => c.op === 'pill');
  let drawnBefore = 0;
  const handle = (method, params) => {
    drawnBefore = pills().length;
    return r.handle(method, params);
  };
  const click = (e, allow) => handle('browser.node.action', { ref: ref(e), action: 'click', ...(allow ? { allow } : {}) });
  const lastPill = async () => {
    await after(() => pills().length > drawnBefore, 'the pill drawn after the last call');
    return pills().at(-1).args;
  };
  const planA = (step, of = 3) => ({ planId: 'plan-a', sites: ['a.example'], step, of });

  // The covered write: step 1 of 3 is remembered and the pill says it.
  const first = await click('e1', planA(1));
  assert.deepEqual(first.plan, { planId: 'plan-a', site: 'a.example' }, 'the answer keeps its plan (not redacted)');
  assert.deepEqual(r.planOf(1), { planId: 'plan-a', step: 1, of: 3 });
  assert.deepEqual(await lastPill(), { show: true, step: 2, stopped: false, plan: { step: 1, of: 3 } });
  // A click the plan does not cover (no `plan` back) with the same plan: kept, as the step used.
  await click('e2', planA(2));
  assert.deepEqual((await lastPill()).plan, { step: 1, of: 3 });
  // Fills, reads and other calls never carry `allow`: they say nothing about the plan.
  await handle('browser.node.action', { ref: ref('e4'), action: 'setValue', value: 'x' });
  await handle('browser.context', { tabId: 1 });
  assert.deepEqual((await lastPill()).plan, { step: 1, of: 3 });
  // The next covered write moves it on.
  await click('e1', planA(2));
  assert.deepEqual(await lastPill(), { show: true, step: 6, stopped: false, plan: { step: 2, of: 3 } });
  // A click without `allow`: the plan ended (or none covers) — the pill says the step again.
  await click('e2');
  assert.equal(r.planOf(1), null);
  assert.deepEqual(await lastPill(), { show: true, step: 7, stopped: false });

  // The page's own step numbers are taken when it gives them; numbers it should not have are not.
  planned.extra = { step: 2, of: 3 };
  await click('e1', planA(2));
  assert.deepEqual(r.planOf(1), { planId: 'plan-a', step: 2, of: 3 });
  planned.extra = { step: 0, of: '3' };
  await click('e1', planA(3));
  assert.deepEqual(r.planOf(1), { planId: 'plan-a', step: 3, of: 3 }, 'the app\'s numbers, not the bad ones');
  planned.extra = {};

  // Another plan's `allow` ends what was said about the first one.
  await click('e1', planA(3));
  assert.deepEqual(r.planOf(1), { planId: 'plan-a', step: 3, of: 3 });
  await click('e2', { planId: 'plan-b', sites: ['a.example'], step: 1, of: 2 });
  assert.equal(r.planOf(1), null);
  assert.equal((await lastPill()).plan, undefined);

  // Numbers a plan cannot have (the app allows up to 1000, a plan at most 20 steps) are not shown.
  await click('e1', planA(5, 30));
  assert.equal(r.planOf(1), null);
  assert.equal((await lastPill()).plan, undefined);
  // Without step numbers (an older app) there is nothing to show either.
  await click('e1', { planId: 'plan-a', sites: ['a.example'] });
  assert.equal(r.planOf(1), null);

  // Stop ends every plan: the stopped pill has no plan, and resuming does not bring it back.
  await click('e1', planA(1));
  assert.ok(r.planOf(1));
  r.stop('app');
  assert.equal(r.planOf(1), null);
  const stoppedPill = await lastPill();
  assert.equal(stoppedPill.stopped, true);
  assert.equal(stoppedPill.plan, undefined);
  r.resume('app');
  assert.equal((await lastPill()).plan, undefined);

  // The grant going ends it too, in memory and in storage.
  await click('e1', planA(2));
  assert.ok(r.planOf(1));
  await r.flush();
  assert.deepEqual(storage.backing.get('plans'), { 1: { planId: 'plan-a', step: 2, of: 3 } });
  await r.handle('grant.revoke', { grantId: grant.grantId });
  assert.equal(r.planOf(1), null);
  await r.flush();
  assert.deepEqual(storage.backing.get('plans'), {});
});

test('plan steps: kept across a killed worker and a page load; bad stored entries dropped; gone with the tab', async () => {
  const storage = fakeStorageArea();
  const { fake, router } = await planSetup(storage, []);
  const ctx = await router.handle('browser.context', { tabId: 1 });
  await router.handle('browser.node.action', { ref: `${ctx.captureId}:e1`, action: 'click',
    allow: { planId: 'plan-z', sites: ['a.example'], step: 2, of: 4 } });
  assert.deepEqual(router.planOf(1), { planId: 'plan-z', step: 2, of: 4 });
  await router.flush();

  // A new worker on the same session storage still knows it, and a page load on the granted site
  // brings the pill back with it.
  const log2 = [];
  const fake2 = makeFakeChrome({ storage, pageRun: planPage(log2) });
  fake2.tabs.set(1, fake.tabs.get(1));
  fake2.frames.set(1, fake.frames.get(1));
  const again = new Router({ chrome: fake2.chrome, now: fakeClock(), timers: inertTimers() });
  await again.load();
  assert.deepEqual(again.planOf(1), { planId: 'plan-z', step: 2, of: 4 });
  fake2.navigate(1, 0, 'https://a.example/next');
  fake2.chrome.webNavigation.onDOMContentLoaded.fire({ tabId: 1, frameId: 0 });
  await after(() => log2.some((c) => c.op === 'pill'), 'the pill drawn on the page load');
  const pill = log2.filter((c) => c.op === 'pill').at(-1);
  assert.deepEqual(pill?.args, { show: true, step: 2, stopped: false, plan: { step: 2, of: 4 } });

  // Bad entries in storage are dropped on load.
  storage.backing.set('plans', { 1: { planId: 'p', step: 0, of: 3 }, 2: { planId: 'p', step: 1, of: 99 },
    x: { planId: 'p', step: 1, of: 2 }, 3: { planId: 7, step: 1, of: 2 }, 4: { planId: 'ok', step: 1, of: 2 } });
  const third = new Router({ chrome: makeFakeChrome({ storage }).chrome, now: fakeClock(), timers: inertTimers() });
  await third.load();
  assert.deepEqual([1, 2, 3].map((t) => third.planOf(t)), [null, null, null]);
  assert.deepEqual(third.planOf(4), { planId: 'ok', step: 1, of: 2 });
  // A tab closing ends its plan step.
  fake2.closeTab(1);
  await after(() => again.planOf(1) === null, 'the closed tab\'s plan step to end');
});

test('sign-in floor: the page\'s refusal of a page with a visible password reaches the engine as refused_floor, blind', async () => {
  const log = [];
  const { router } = await setup({ pageLog: log });
  const ctx = await router.handle('browser.context', { tabId: 1 });
  // From now on the page shows a password field: the page agent refuses every read and act.
  router.page.run = async (where, op) => {
    log.push({ op, where });
    throw new ChaperoneError('refused_floor', 'This page shows a password field');
  };
  for (const [m, p] of [['browser.context', { tabId: 1 }], ['browser.node.inspect', { ref: `${ctx.captureId}:e1` }],
    ['browser.node.action', { ref: `${ctx.captureId}:e1`, action: 'click' }]]) {
    const e = await router.handle(m, p).catch((x) => x);
    assert.ok(e instanceof ChaperoneError, m);
    assert.equal(e.code, 'refused_floor', m);
    assert.deepEqual(e.data, { tabId: 1, level: 'blind', reason: 'sign_in' }, m);
    assert.doesNotMatch(e.message, /inbox|a\.example/, 'no page address in the refusal');
  }
  // A hands-only site with a password shown is blind all the same (pageLevel).
  router.setFloorRules({ handsOnly: ['a.example'] });
  const e = await router.handle('browser.context', { tabId: 1 }).catch((x) => x);
  assert.deepEqual(e.data, { tabId: 1, level: 'blind', reason: 'sign_in' });
  // Handoffs still work on that page: the person signs in there.
  const h = await router.handle('browser.handoff.request', { tabId: 1, reason: 'login', message: 'Sign in please' });
  assert.equal(h.state, 'waiting');
  assert.ok(log.some((c) => c.op === 'handoff'), 'the banner was asked for');
});

test('context: refs carry the capture id; a ref finds its capture; old or unknown refs are stale_node', async () => {
  const { router, fake, pageLog, grant } = await setup();
  const ctx = await router.handle('browser.context', { tabId: 1 });
  assert.match(ctx.captureId, /^[a-z0-9]{8}$/);
  assert.equal(ctx.tabId, 1);
  assert.equal(ctx.frameId, 0);
  assert.equal(ctx.documentId, fake.frame(1, 0).documentId);
  assert.deepEqual(ctx.nodes.map((n) => n.ref), [`${ctx.captureId}:e1`, `${ctx.captureId}:e2`]);
  assert.equal(ctx.forms[0].ref, `${ctx.captureId}:e3`);
  assert.equal(ctx.forms[0].fields[0].ref, `${ctx.captureId}:e4`);
  const contextCall = pageLog.find((c) => c.op === 'context');
  assert.deepEqual(contextCall.args, { captureId: ctx.captureId, maxTextBytes: 20480, maxNodes: 2000, maxScan: 10000, diff: false });
  assert.equal(contextCall.where.documentId, ctx.documentId, 'pinned to the checked document');
  // Frames: the granted child is readable, the ad frame is not (and shows no URL).
  const pay = ctx.frames.find((f) => f.frameId === 5);
  assert.equal(pay.readable, true);
  assert.equal(pay.name, 'pay', 'matched with the page\'s <iframe>');
  const ad = ctx.frames.find((f) => f.frameId === 6);
  assert.deepEqual([ad.readable, ad.reason, ad.url], [false, 'not_granted', null]);

  const inspected = await router.handle('browser.node.inspect', { ref: `${ctx.captureId}:e1` });
  assert.equal(inspected.ref, `${ctx.captureId}:e1`);
  assert.deepEqual(pageLog.filter((c) => c.op === 'inspect').at(-1).args, { captureId: ctx.captureId, ref: 'e1' });
  assert.equal(await code(router.handle('browser.node.inspect', { ref: `${ctx.captureId}:e404` })), 'stale_node',
    'the page\'s own stale_node comes through');
  assert.equal(await code(router.handle('browser.node.inspect', { ref: 'zzzzzzzz:e1' })), 'stale_node');

  // A diff names removed nodes by the capture the agent saw them in.
  const next = await router.handle('browser.context', { tabId: 1, diff: true });
  assert.deepEqual(next.diff.added.map((n) => n.ref), [`${next.captureId}:e9`]);
  assert.deepEqual(next.diff.removed, [`${ctx.captureId}:e2`]);

  // The page navigated: the old ref is stale_document, never another element.
  fake.navigate(1, 0, 'https://a.example/other');
  assert.equal(await code(router.handle('browser.node.action', { ref: `${ctx.captureId}:e1`, action: 'click' })),
    'stale_document');

  // Only the last 32 captures are kept.
  const fresh = await router.handle('browser.context', { tabId: 1 });
  for (let i = 0; i < MAX_CAPTURES; i++) await router.handle('browser.context', { tabId: 1 });
  assert.equal(await code(router.handle('browser.node.inspect', { ref: `${fresh.captureId}:e1` })), 'stale_node');

  // A ref made under a grant that has ended does not come back under a new grant.
  const last = await router.handle('browser.context', { tabId: 1 });
  await router.handle('grant.revoke', { grantId: grant.grantId });
  await router.onPopupMessage({ type: 'popup.createGrant', tabs: [{ tabId: 1 }], preset: 'control', label: 'Again' });
  assert.equal(await code(router.handle('browser.node.inspect', { ref: `${last.captureId}:e1` })), 'stale_node');
});

test('captures survive a killed worker', async () => {
  const storage = fakeStorageArea();
  const { router, fake } = await setup({ storage });
  const ctx = await router.handle('browser.context', { tabId: 1 });
  await router.flush();
  const fake2 = makeFakeChrome({ storage, pageRun: pageAgent() });
  fake2.tabs.set(1, fake.tabs.get(1));
  fake2.frames.set(1, fake.frames.get(1));
  const again = new Router({ chrome: fake2.chrome, now: fakeClock(), timers: inertTimers() });
  await again.load();
  const r = await again.handle('browser.node.inspect', { ref: `${ctx.captureId}:e1` });
  assert.equal(r.tag, 'button');
});

test('an action that makes the page navigate answers stale_document (done), never a result about the old page', async () => {
  const { router, fake } = await setup();
  const ctx = await router.handle('browser.context', { tabId: 1 });
  const real = fake.chrome.scripting.executeScript;
  fake.chrome.scripting.executeScript = async (opts) => {
    const out = await real(opts);
    if (opts.func && opts.args[0] === 'action') {
      // As the page agent answers when its act started a navigation (it watches for one).
      out[0].result.value.changes = { ...out[0].result.value.changes, navigating: true };
      fake.navigate(1, 0, 'https://a.example/next');
    }
    return out;
  };
  await assert.rejects(router.handle('browser.node.action', { ref: `${ctx.captureId}:e2`, action: 'click' }),
    (e) => e.code === 'stale_document' && e.data.done === true);

  // The document disappearing during the injection is stale_document too.
  const ctx2 = await router.handle('browser.context', { tabId: 1 });
  fake.chrome.scripting.executeScript = async (opts) => {
    if (opts.func) throw new Error('Frame with ID 0 was removed.');
    return real(opts);
  };
  assert.equal(await code(router.handle('browser.node.action', { ref: `${ctx2.captureId}:e1`, action: 'focus' })),
    'stale_document');
  fake.chrome.scripting.executeScript = real;
  const ok = await router.handle('browser.node.action', { ref: `${ctx2.captureId}:e1`, action: 'setValue', value: 'hi' });
  assert.equal(ok.done, true);
});

test('cancel: an aborted call answers cancelled', async () => {
  const { router } = await setup();
  const ac = new AbortController();
  ac.abort();
  assert.equal(await code(router.handle('browser.context', { tabId: 1 }, { signal: ac.signal })), 'cancelled');
  const later = new AbortController();
  const call = router.handle('browser.navigate', { tabId: 1, url: 'https://a.example/slow' }, { signal: later.signal });
  router.chrome.tabs.update = async () => ({}); // the navigation never commits
  later.abort();
  assert.equal(await code(call), 'cancelled');
});

test('browser.tabs lists granted tabs only, never extension pages; a tab that left its site shows what was granted', async () => {
  const { router, fake, grant } = await setup({ grantTabs: [{ tabId: 1 }, { tabId: 2 }] });
  let { tabs } = await router.handle('browser.tabs', {});
  assert.deepEqual(tabs.map((t) => t.tabId), [1, 2]);
  assert.deepEqual(Object.keys(tabs[0]).sort(), ['active', 'expiresAt', 'grantId', 'label', 'origin', 'scopes', 'tabId',
    'title', 'url', 'windowId']);
  assert.equal(tabs[0].grantId, grant.grantId);
  fake.navigate(2, 0, 'https://secret.example/private?token=1');
  fake.tabs.get(2).title = 'Secret';
  ({ tabs } = await router.handle('browser.tabs', {}));
  const two = tabs.find((t) => t.tabId === 2);
  assert.deepEqual([two.url, two.title, two.state], ['https://b.example/', 'B', 'origin_changed']);
  // The popup never offers extension pages either.
  const offered = await router.onPopupMessage({ type: 'popup.tabs', windowId: 1 });
  assert.ok(offered.tabs.every((t) => !t.url.startsWith('chrome-extension:')));
  assert.equal(offered.tabs.find((t) => t.tabId === 1).grantable, false, 'already granted');
});

test('browser.frames: readability and reasons, no URL for unreadable frames', async () => {
  const { router } = await setup();
  const { frames } = await router.handle('browser.frames', { tabId: 1 });
  const by = Object.fromEntries(frames.map((f) => [f.frameId, f]));
  assert.equal(by[0].readable, true);
  assert.equal(by[5].readable, true);
  assert.deepEqual([by[6].readable, by[6].reason, by[6].url, by[6].origin], [false, 'not_granted', null, 'https://ads.example']);
});

test('navigate: same origin waits for the commit; another origin is target_denied', async () => {
  const { router, fake } = await setup();
  const r = await router.handle('browser.navigate', { tabId: 1, url: 'https://a.example/next' });
  assert.equal(r.url, 'https://a.example/next');
  assert.equal(r.documentId, fake.frame(1, 0).documentId);
  assert.equal(await code(router.handle('browser.navigate', { tabId: 1, url: 'https://evil.example/' })), 'target_denied');
  // javascript: is below the URL floor (not_web): refused before the origin check.
  assert.equal(await code(router.handle('browser.navigate', { tabId: 1, url: 'javascript:alert(1)' })), 'refused_floor');
  // The grant followed the same-origin navigation.
  assert.equal(router.grants.list()[0].targets[0].url, 'https://a.example/next');
});

test('takeover focuses the tab and its window', async () => {
  const { router, fake } = await setup();
  assert.deepEqual(await router.handle('browser.takeover', { tabId: 1 }), { tabId: 1, focused: true });
  assert.deepEqual(fake.calls.windowsUpdate.at(-1), { windowId: 1, props: { focused: true } });
});

test('cookies: metadata and lengths, never values', async () => {
  const { router, fake } = await setup();
  fake.cookies.push({ name: 'sid', value: 'SECRET-VALUE', domain: 'a.example', path: '/', secure: true, httpOnly: true,
    sameSite: 'lax', session: true });
  fake.cookies.push({ name: 'pref', value: 'dark', domain: '.a.example', path: '/', secure: false, httpOnly: false,
    sameSite: 'no_restriction', session: false, expirationDate: 1900000000 });
  fake.cookies.push({ name: 'other', value: 'x', domain: 'b.example', path: '/' });
  const { cookies } = await router.handle('browser.cookies', { tabId: 1 });
  assert.deepEqual(cookies.map((c) => c.name), ['sid', 'pref']);
  assert.equal(cookies[0].valueLength, 12);
  assert.equal(cookies[1].expirationDate, 1900000000);
  assert.ok(!JSON.stringify(cookies).includes('SECRET'), 'no value anywhere');
  assert.ok(cookies.every((c) => !('value' in c)));
});

test('handoff: request → waiting at once, banner, focus; answered on the page; status and events', async () => {
  const { router, emit, pageLog, fake } = await setup();
  const changes = [];
  router.handoffs.onChange((h, waiting) => changes.push([h.state, waiting]));
  const r = await router.handle('browser.handoff.request', { tabId: 1, reason: 'qr', message: 'Scan the code' });
  assert.deepEqual(Object.keys(r).sort(), ['handoffId', 'state']);
  assert.equal(r.state, 'waiting');
  assert.equal(router.handoffs.waitingCount(), 1);
  const banner = pageLog.find((c) => c.op === 'handoff');
  assert.deepEqual(banner.args, { show: true, handoffId: r.handoffId, reason: 'qr', message: 'Scan the code' });
  assert.ok(fake.calls.tabsUpdate.some((u) => u.tabId === 1 && u.props.active));
  const ev = emit.named('handoff.changed')[0];
  assert.deepEqual([ev.state, ev.tabId, ev.origin, ev.reason], ['waiting', 1, 'https://a.example', 'qr']);
  assert.ok(!('grantId' in ev));
  assert.equal(await code(router.handle('browser.handoff.request', { tabId: 1, reason: 'mfa', message: '' })), 'busy');

  assert.deepEqual(await router.handle('browser.handoff.status', { handoffId: r.handoffId }),
    { handoffId: r.handoffId, state: 'waiting' });
  // Another tab's content script cannot answer it; nor can a child frame.
  await router.onPageMessage({ type: 'page.handoff', handoffId: r.handoffId, outcome: 'done' }, { tab: { id: 2 }, frameId: 0 });
  await router.onPageMessage({ type: 'page.handoff', handoffId: r.handoffId, outcome: 'done' }, { tab: { id: 1 }, frameId: 5 });
  assert.equal(router.handoffs.waitingCount(), 1);
  const answered = await router.onPageMessage({ type: 'page.handoff', handoffId: r.handoffId, outcome: 'done' },
    { tab: { id: 1 }, frameId: 0 });
  assert.equal(answered.state, 'done');
  assert.deepEqual(await router.handle('browser.handoff.status', { handoffId: r.handoffId }),
    { handoffId: r.handoffId, state: 'done', outcome: 'done', by: 'page' });
  assert.deepEqual(changes, [['waiting', 1], ['done', 0]]);
  await after(() => pageLog.some((c) => c.op === 'handoff' && c.args.show === false && c.args.handoffId === r.handoffId),
    'the banner to go away');
  // An answer after the first one changes nothing.
  assert.deepEqual(await router.handle('extension.handoff.resolve', { handoffId: r.handoffId, outcome: 'cancelled' }),
    { handoffId: r.handoffId, state: 'done' });
});

test('handoff message: at most 250 characters (code points), whatever the script; a clear refusal beyond', async () => {
  // The agent tool allows 250 characters and the app refuses a field over 1,024 bytes: 250 code
  // points are at most 1,000 bytes of UTF-8, so what the extension accepts the app keeps.
  for (const message of ['x'.repeat(250), '项'.repeat(250), '😀'.repeat(250), 'é'.repeat(250)]) {
    const { router, pageLog, emit } = await setup();
    const r = await router.handle('browser.handoff.request', { tabId: 1, reason: 'other', message });
    assert.equal(r.state, 'waiting');
    assert.equal(emit.named('handoff.changed')[0].message, message, 'kept whole');
    assert.ok(Buffer.byteLength(message) <= 1024);
    assert.equal(pageLog.find((c) => c.op === 'handoff').args.message, message);
  }
  const { router } = await setup();
  await assert.rejects(router.handle('browser.handoff.request', { tabId: 1, reason: 'qr', message: '项'.repeat(251) }),
    (e) => e.code === 'invalid_params' && /251 characters long; at most 250/.test(e.message));
  assert.equal(router.handoffs.waitingCount(), 0, 'nothing waits after a refusal');
});

test('handoff: resolved from the app, cancelled by the agent, shown by the app', async () => {
  const { router, emit } = await setup();
  const a = await router.handle('browser.handoff.request', { tabId: 1, reason: 'mfa', message: 'Type the code' });
  assert.deepEqual(await router.handle('extension.handoff.show', { handoffId: a.handoffId }), { handoffId: a.handoffId, shown: true });
  assert.deepEqual(await router.handle('extension.handoff.resolve', { handoffId: a.handoffId, outcome: 'cancelled' }),
    { handoffId: a.handoffId, state: 'cancelled' });
  assert.equal(emit.named('handoff.changed').at(-1).by, 'app');
  const b = await router.handle('browser.handoff.request', { tabId: 1, reason: 'captcha', message: '' });
  assert.deepEqual(await router.handle('browser.handoff.cancel', { handoffId: b.handoffId }),
    { handoffId: b.handoffId, state: 'cancelled' });
  assert.equal(emit.named('handoff.changed').at(-1).by, 'agent');
});

test('handoff dies with its grant: cancelled by grant; then status answers for the grant', async () => {
  const { router, emit, grant, clock } = await setup();
  const h = await router.handle('browser.handoff.request', { tabId: 1, reason: 'login', message: 'Sign in' });
  await router.onPopupMessage({ type: 'popup.revokeGrant', grantId: grant.grantId });
  const ev = emit.named('handoff.changed').at(-1);
  assert.deepEqual([ev.handoffId, ev.state, ev.by], [h.handoffId, 'cancelled', 'grant']);
  assert.equal(router.handoffs.waitingCount(), 0);
  assert.equal(await code(router.handle('browser.handoff.status', { handoffId: h.handoffId })), 'no_grant');

  // The same through expiry.
  const g2 = (await router.onPopupMessage({ type: 'popup.createGrant', tabs: [{ tabId: 1 }], preset: 'control', label: 'T' })).grant;
  const h2 = await router.handle('browser.handoff.request', { tabId: 1, reason: 'qr', message: '' });
  clock.advance(g2.expiresAt - clock());
  assert.equal(await code(router.handle('browser.handoff.status', { handoffId: h2.handoffId })), 'grant_expired');
  assert.equal(router.handoffs.get(h2.handoffId).state, 'cancelled');
});

test('a handoff survives a killed worker', async () => {
  const storage = fakeStorageArea();
  const { router, fake } = await setup({ storage });
  const h = await router.handle('browser.handoff.request', { tabId: 1, reason: 'device', message: 'Tap yes' });
  await router.flush();
  const fake2 = makeFakeChrome({ storage, pageRun: pageAgent() });
  fake2.tabs.set(1, fake.tabs.get(1));
  fake2.frames.set(1, fake.frames.get(1));
  const again = new Router({ chrome: fake2.chrome, now: fakeClock(), timers: inertTimers() });
  await again.load();
  assert.equal(again.handoffs.waitingCount(), 1);
  assert.equal((await again.handle('browser.handoff.status', { handoffId: h.handoffId })).state, 'waiting');
});

test('popup replies: errors carry a code and message, never throw', async () => {
  const { router } = await setup({ grantTabs: null });
  const bad = await router.onPopupMessage({ type: 'popup.createGrant', tabs: [{ tabId: 1 }], preset: 'read', label: 'x', durationMin: 20 });
  assert.deepEqual([bad.ok, bad.error.code], [false, 'invalid_params']);
  assert.equal((await router.onPopupMessage({ type: 'popup.nope' })).error.code, 'unknown_method');
  assert.equal((await router.onPopupMessage({ type: 'popup.revokeGrant', grantId: 'x' })).error.code, 'invalid_params');
  const state = await router.onPopupMessage({ type: 'popup.state' });
  assert.deepEqual([state.ok, state.stopped, state.grants, state.handoffsWaiting], [true, false, [], 0]);
});

test('a tab closing ends what belongs to it', async () => {
  const { router, fake, emit } = await setup();
  const h = await router.handle('browser.handoff.request', { tabId: 1, reason: 'qr', message: '' });
  fake.closeTab(1);
  await after(() => emit.named('grant.changed').at(-1)?.reason === 'closed', 'the closed tab\'s grant to end');
  assert.equal(router.handoffs.get(h.handoffId).state, 'cancelled');
  assert.deepEqual(router.grants.list(), []);
  assert.equal(emit.named('grant.changed').at(-1).reason, 'closed');
});

test('a fresh worker: Stop acts before load() finishes; Resume clears the stop kept in storage', async () => {
  const storage = fakeStorageArea();
  const fresh = () => new Router({ chrome: makeFakeChrome({ storage }).chrome, now: fakeClock(), timers: inertTimers() });
  const a = fresh(); // load() never called: the first thing this worker hears is Stop
  a.handle('extension.stop', { source: 'app' });
  assert.equal(a.state().stopped, true);
  assert.equal(await code(a.handle('browser.tabs', {})), 'stopped');
  await a.flush();
  assert.equal(storage.backing.get('stopped').stopped, true);

  const b = fresh(); // again not loaded: Resume must still clear what storage holds
  await b.onPopupMessage({ type: 'popup.resume' });
  await b.flush();
  assert.equal(b.state().stopped, false);
  assert.equal(storage.backing.get('stopped').stopped, false);

  const c = fresh();
  c.handle('extension.stop', {});
  await c.flush();
  const d = fresh();
  assert.deepEqual(await d.handle('extension.resume', {}), { stopped: false });
  await d.flush();
  assert.equal(storage.backing.get('stopped').stopped, false);
});

test('the page agent is injected once per document, not on every call', async () => {
  const { router, fake } = await setup();
  const injections = () => fake.calls.executeScript.filter((c) => c.files).length;
  await router.handle('browser.context', { tabId: 1 });
  // The call and the pill it shows may both find the document empty and both install: the
  // agent's own install is idempotent.
  const first = injections();
  assert.ok(first >= 1, 'the first call installs it');
  await router.handle('browser.context', { tabId: 1 });
  await router.handle('browser.context', { tabId: 1 });
  assert.equal(injections(), first, 'later calls find it there');
  fake.navigate(1, 0, 'https://a.example/next');
  await router.handle('browser.context', { tabId: 1 });
  assert.ok(injections() > first, 'a new document gets its own');
});

test('URL floor: blind pages answer only tabs, frames and handoffs; hands-only refuses actions', async () => {
  const { router } = await setup();
  const ctx = await router.handle('browser.context', { tabId: 1 });
  const ref = `${ctx.captureId}:e1`;
  router.setFloorRules({ handsOnly: ['a.example'] });
  assert.equal((await router.handle('browser.context', { tabId: 1 })).tabId, 1, 'hands-only pages are read');
  const e = await router.handle('browser.node.action', { ref, action: 'click' }).catch((x) => x);
  assert.equal(e.code, 'refused_floor');
  assert.deepEqual(e.data, { tabId: 1, level: 'hands-only', reason: 'person_hands_only' });

  router.setFloorRules({ blind: ['a.example'], handsOnly: ['not a pattern'] });
  for (const [m, p] of [['browser.context', { tabId: 1 }], ['browser.node.inspect', { ref }],
    ['browser.node.action', { ref, action: 'focus' }], ['browser.cookies', { tabId: 1 }], ['browser.takeover', { tabId: 1 }],
    ['browser.navigate', { tabId: 1, url: 'https://a.example/x' }]]) {
    assert.equal(await code(router.handle(m, p)), 'refused_floor', m);
  }
  assert.ok((await router.handle('browser.frames', { tabId: 1 })).frames.length > 0);
  const tab = (await router.handle('browser.tabs', {})).tabs[0];
  assert.equal(tab.floor, 'blind');
  assert.equal(tab.title, '');
  assert.equal(tab.url, 'https://a.example');
  const h = await router.handle('browser.handoff.request', { tabId: 1, reason: 'login', message: 'Sign in' });
  assert.equal(h.state, 'waiting');

  // Navigating to a blind URL from an ordinary page is refused too.
  router.setFloorRules({ blind: ['bank.a.example'] });
  assert.equal(await code(router.handle('browser.navigate', { tabId: 1, url: 'https://bank.a.example/' })), 'refused_floor');
  assert.equal(await code(router.handle('browser.navigate', { tabId: 1, url: 'chrome://settings/' })), 'refused_floor');
});

test('every browser.* result is redacted before it answers the engine', async () => {
  const { router } = await setup();
  const secret = 'ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789';
  router.page.run = async () => ({ url: `https://a.example/?token=abcdefgh12345678`, text: `key ${secret}`,
    headings: [], forms: [], nodes: [{ ref: 'e1', role: 'button', name: 'Send' }], iframes: [] });
  const ctx = await router.handle('browser.context', { tabId: 1 });
  assert.ok(!JSON.stringify(ctx).includes(secret));
  assert.match(ctx.text, /\[redacted github_token len=40\]/);
  assert.match(ctx.url, /token=\[redacted token len=16\]/);
  assert.equal(ctx.nodes[0].ref, `${ctx.captureId}:e1`, 'the shape stays');
});

test('Stop waits for the calls in flight to settle, then emits stop.halted', async () => {
  const { router, emit, clock } = await setup();
  let release;
  let entered;
  const inPage = new Promise((r) => { entered = r; });
  let abortSeen;
  const aborting = new Promise((r) => { abortSeen = r; });
  router.page.run = (where, op, args, { signal }) => new Promise((resolve, reject) => {
    release = resolve;
    entered();
    // The page takes its time to stop: it rejects when the test says so, not at once.
    signal.addEventListener('abort', () => abortSeen(() => reject(signal.reason)), { once: true });
  });
  const call = router.handle('browser.context', { tabId: 1 });
  await inPage;
  router.stop('pill');
  assert.equal(emit.named('stop.halted').length, 0, 'not before the call settles');
  const settle = await aborting;   // the page was told to stop
  clock.advance(25);
  assert.equal(emit.named('stop.halted').length, 0, 'still not while the page works on');
  settle();
  assert.equal(await code(call), 'stopped');
  await router.halted;
  const halted = emit.named('stop.halted').at(-1);
  assert.equal(halted.source, 'pill');
  assert.equal(halted.calls, 1);
  assert.equal(typeof halted.at, 'number');
  assert.equal(halted.haltedMs, 25);
  release?.();
  router.resume('app');
  router.stop('app');
  await router.halted;
  assert.deepEqual(emit.named('stop.halted').at(-1).calls, 0);
});
