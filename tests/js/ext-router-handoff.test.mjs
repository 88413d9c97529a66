// SPDX-License-Identifier: GPL-3.0-or-later
// The router's handoffs: requested, answered, resolved, cancelled, bounded, surviving a killed worker.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Router } from '../../extension/lib/router.js';
import { fakeClock, fakeStorageArea, inertTimers, makeFakeChrome } from './fake-chrome.mjs';
import { after, pageAgent, setup, code } from './router-harness.mjs';

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
