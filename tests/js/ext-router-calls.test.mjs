// SPDX-License-Identifier: GPL-3.0-or-later
// The router's call path over a fake chrome.*: the order of the checks, Stop and Resume, steps and plan steps.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Router } from '../../extension/lib/router.js';
import { fakeClock, fakeStorageArea, inertTimers, makeFakeChrome } from './fake-chrome.mjs';
import { after, pageAgent, setup, code } from './router-harness.mjs';

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
    // Keys, typing, hover: each action's own argument, and only press and type go without a ref.
    ['browser.node.action', { ref: 'abc:e1', action: 'press' }],
    ['browser.node.action', { ref: 'abc:e1', action: 'press', key: 'Hyper+x' }],
    ['browser.node.action', { ref: 'abc:e1', action: 'press', key: 'Control+' }],
    ['browser.node.action', { ref: 'abc:e1', action: 'press', key: 'x'.repeat(65) }],
    ['browser.node.action', { ref: 'abc:e1', action: 'click', key: 'Enter' }],
    ['browser.node.action', { ref: 'abc:e1', action: 'type' }],
    ['browser.node.action', { ref: 'abc:e1', action: 'type', text: '' }],
    ['browser.node.action', { ref: 'abc:e1', action: 'type', text: 'x'.repeat(2001) }],
    ['browser.node.action', { ref: 'abc:e1', action: 'hover', text: 'x' }],
    ['browser.node.action', { action: 'hover', captureId: 'abc' }],
    ['browser.node.action', { action: 'press', key: 'Enter' }],
    ['browser.node.action', { action: 'press', key: 'Enter', captureId: 'ABC:1' }],
    ['browser.node.action', { ref: 'abc:e1', action: 'press', key: 'Enter', captureId: 'abc' }],
    ['browser.node.action', { ref: 'abc:e1', action: 'hover', allow: { planId: 'p1', sites: ['a.example'] } }],
    // A drag: to, a ref of the same capture as ref, and only with drag.
    ['browser.node.action', { ref: 'abc:e1', action: 'drag' }],
    ['browser.node.action', { ref: 'abc:e1', action: 'drag', to: 'e2' }],
    ['browser.node.action', { ref: 'abc:e1', action: 'drag', to: 'xyz:e2' }],
    ['browser.node.action', { action: 'drag', to: 'abc:e2', captureId: 'abc' }],
    ['browser.node.action', { ref: 'abc:e1', action: 'click', to: 'abc:e2' }],
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
