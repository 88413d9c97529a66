// SPDX-License-Identifier: GPL-3.0-or-later
// Holds (extension/lib/holds.js and the router's hold methods): a click the page holds becomes a
// hold the person approves or declines; approval reruns it with the canonical string on the same
// document only; a grant that ends expires what it held. Then the page half in Chromium
// (page-holds.js) on holds-editor.html, which re-renders its toolbar as TiddlyWiki does: the
// approved act runs on the control that shows it now, and ends 'changed' when none does.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { ChaperoneError, Router } from '../../extension/lib/router.js';
import { HoldStore, isHoldId, publicHold, signatureOf } from '../../extension/lib/holds.js';
import { METHODS } from '../../extension/lib/scopes.js';
import { eventLog, fakeClock, fakeStorageArea, inertTimers, makeFakeChrome } from './fake-chrome.mjs';
import { opts, open, ok, byName } from './page-agent-harness.mjs';

const HELD = {
  kind: 'outward', reason: 'label', word: 'send', control: 'Send', site: 'https://a.example',
  fields: [{ name: 'To', value: 'bob@example.com' }, { name: 'Password', secret: true, length: 9 }],
  canonical: '{"url":"https://a.example/inbox","kind":"outward","control":"Send"}',
};

/** A page that holds every click without expect; with expect, `answer` says what it does. */
function holdingPage(log, answer = () => ({ ok: true, value: { action: 'click', done: true, changes: { textChanged: true } } })) {
  return async (op, args, where) => {
    log.push({ op, args, where });
    if (op === 'context') {
      return { ok: true, value: { url: 'https://a.example/inbox', title: 'Inbox', text: '', headings: [], forms: [],
        nodes: [{ ref: 'e1', role: 'button', name: 'Send' }], iframes: [] } };
    }
    if (op === 'action') {
      if (typeof args.expect === 'string') return answer(args);
      if (args.allow) return { ok: true, value: { action: 'click', done: true, changes: {}, plan: { planId: args.allow.planId, site: 'a.example' } } };
      return { ok: true, value: { held: HELD } };
    }
    return { ok: true, value: {} };
  };
}

async function setup({ answer, preset = 'control' } = {}) {
  const log = [];
  const fake = makeFakeChrome({ pageRun: holdingPage(log, answer) });
  fake.addTab({ id: 1, url: 'https://a.example/inbox', title: 'Inbox', active: true });
  const emit = eventLog();
  const clock = fakeClock();
  const router = new Router({ chrome: fake.chrome, emit, now: clock, timers: inertTimers() });
  await router.load();
  const reply = await router.onPopupMessage({ type: 'popup.createGrant', tabs: [{ tabId: 1 }], preset, extras: [],
    durationMin: 15, label: 'Task' });
  assert.equal(reply.ok, true, JSON.stringify(reply));
  const ctx = await router.handle('browser.context', { tabId: 1 });
  return { fake, router, emit, log, grant: reply.grant, ref: `${ctx.captureId}:e1` };
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

test('HoldStore: ids, public view without canonical, states end once, storage', async () => {
  const storage = fakeStorageArea();
  const events = [];
  const store = new HoldStore({ storage, emit: (e, d) => events.push([e, d]), now: () => 1000 });
  const h = store.create({ held: HELD, tabId: 1, frameId: 0, documentId: 'D', grantId: 'g', captureId: 'c', ref: 'e1', action: 'click' });
  assert.ok(isHoldId(h.holdId) && /^k[a-z0-9]{16}$/.test(h.holdId));
  assert.equal(h.signature, signatureOf(HELD.canonical));
  assert.match(h.signature, /^[0-9a-f]{16}$/);
  const view = publicHold(h);
  assert.equal(view.canonical, undefined);
  assert.equal(view.captureId, undefined);
  assert.equal(view.ref, undefined);
  assert.deepEqual(Object.keys(view).sort(),
    ['control', 'createdAt', 'fields', 'holdId', 'kind', 'reason', 'signature', 'site', 'state', 'tabId', 'word']);
  assert.deepEqual(events.at(-1), ['hold.changed', view]);
  assert.equal(store.end(h.holdId, 'declined').state, 'declined');
  assert.equal(store.end(h.holdId, 'done').state, 'declined', 'the first outcome stays');
  assert.equal(events.at(-1)[1].endedAt, 1000);
  await store.flush();
  const again = new HoldStore({ storage, now: () => 2000 });
  await again.load();
  assert.equal(again.get(h.holdId).canonical, HELD.canonical);
  assert.equal(again.get('knotanidatall0000'), null);
});

test('a held click is a hold, not an error; status, decline, and the method table', async () => {
  const { router, emit, ref } = await setup();
  assert.deepEqual(METHODS['browser.hold.status'], { scope: 'browser.dom.write' });
  assert.deepEqual(METHODS['extension.hold.resolve'], { scope: null, stopExempt: true });
  const r = await router.handle('browser.node.action', { ref, action: 'click' });
  assert.equal(r.held, true);
  assert.equal(r.hold.state, 'held');
  assert.equal(r.hold.kind, 'outward');
  assert.equal(r.hold.tabId, 1);
  assert.equal(r.hold.canonical, undefined);
  assert.deepEqual(emit.named('hold.changed').at(-1), r.hold);
  assert.deepEqual(await router.handle('browser.hold.status', { holdId: r.hold.holdId }), r.hold);
  assert.equal(await code(router.handle('browser.hold.status', { holdId: 'nope' })), 'invalid_params');
  const d = await router.handle('extension.hold.resolve', { holdId: r.hold.holdId, outcome: 'decline' });
  assert.equal(d.state, 'declined');
  assert.equal((await router.handle('browser.hold.status', { holdId: r.hold.holdId })).state, 'declined');
  assert.equal(await code(router.handle('extension.hold.resolve', { holdId: r.hold.holdId, outcome: 'maybe' })), 'invalid_params');
});

test('approve: reruns with expect on the same document → done; changed; failed; stopped', async () => {
  let answer = null;
  const { router, log, ref, fake } = await setup({ answer: (args) => answer(args) });
  answer = () => ({ ok: true, value: { action: 'click', done: true, changes: { textChanged: true } } });
  const a = (await router.handle('browser.node.action', { ref, action: 'click' })).hold;
  const done = await router.handle('extension.hold.resolve', { holdId: a.holdId, outcome: 'approve' });
  assert.equal(done.state, 'done');
  assert.deepEqual(done.changes, { textChanged: true });
  const rerun = log.filter((l) => l.op === 'action').at(-1);
  assert.equal(rerun.args.expect, HELD.canonical);
  assert.equal(rerun.args.ref, 'e1');

  answer = () => ({ ok: true, value: { changed: true } });
  const b = (await router.handle('browser.node.action', { ref, action: 'click' })).hold;
  assert.equal((await router.handle('extension.hold.resolve', { holdId: b.holdId, outcome: 'approve' })).state, 'changed');

  // The control is there but cannot be clicked as shown (covered, hidden, gone): the act the
  // person approved has changed; an approval never ends in a refusal of its target.
  for (const why of ['target_denied', 'stale_node', 'stale_document']) {
    answer = () => ({ ok: false, error: { code: why, message: 'covered' } });
    const c = (await router.handle('browser.node.action', { ref, action: 'click' })).hold;
    const changed = await router.handle('extension.hold.resolve', { holdId: c.holdId, outcome: 'approve' });
    assert.equal(changed.state, 'changed', why);
    assert.equal(changed.error, undefined, why);
  }
  answer = () => ({ ok: false, error: { code: 'internal', message: 'broken' } });
  const broken = (await router.handle('browser.node.action', { ref, action: 'click' })).hold;
  const failed = await router.handle('extension.hold.resolve', { holdId: broken.holdId, outcome: 'approve' });
  assert.equal(failed.state, 'failed');
  assert.equal(failed.error, 'internal');

  const e = (await router.handle('browser.node.action', { ref, action: 'click' })).hold;
  router.stop('app');
  assert.equal(await code(router.handle('extension.hold.resolve', { holdId: e.holdId, outcome: 'approve' })), 'stopped');
  assert.equal((await router.handle('extension.hold.resolve', { holdId: e.holdId, outcome: 'decline' })).state, 'declined');
  router.resume('app');

  // The document is gone: the approval was about a page that is no longer there.
  const f = (await router.handle('browser.node.action', { ref, action: 'click' })).hold;
  fake.navigate(1, 0, 'https://a.example/other');
  assert.equal((await router.handle('extension.hold.resolve', { holdId: f.holdId, outcome: 'approve' })).state, 'changed');
});

test('a grant that ends expires its holds; allow is checked and passed to the page', async () => {
  const { router, grant, ref, log, emit } = await setup();
  const h = (await router.handle('browser.node.action', { ref, action: 'click' })).hold;
  for (const allow of [{ planId: 'p', sites: [] }, { planId: 'p', sites: ['not a host'] }, { sites: ['a.example'] }, 'x',
    { planId: 'p', sites: ['a.example'], step: 0 }]) {
    assert.equal(await code(router.handle('browser.node.action', { ref, action: 'click', allow })), 'invalid_params');
  }
  assert.equal(await code(router.handle('browser.node.action', { ref, action: 'focus', allow: { planId: 'p', sites: ['a.example'] } })), 'invalid_params');
  const planned = await router.handle('browser.node.action', { ref, action: 'click', allow: { planId: 'plan-1', sites: ['a.example'], step: 1, of: 2 } });
  assert.deepEqual(planned.plan, { planId: 'plan-1', site: 'a.example' });
  // step and of go along: the page labels its pill with them (and checks them again).
  assert.deepEqual(log.filter((l) => l.op === 'action').at(-1).args.allow, { planId: 'plan-1', sites: ['a.example'], step: 1, of: 2 });
  await router.handle('grant.revoke', { grantId: grant.grantId });
  assert.equal(router.holds.get(h.holdId).state, 'expired');
  assert.equal(emit.named('hold.changed').at(-1).state, 'expired');
});

// ---- the page: an approved hold finds its control after a re-render ----------------------------

const SAVE = 'Confirm changes to this tiddler';

test('page: a re-rendered toolbar still runs the approved save; a closed editor is changed', opts, async () => {
  const page = await open('/holds-editor.html?open');
  await page.fill('#title', 'Shopping list');
  const ctx = await ok(page, 'context', { captureId: 'r1' });
  const ref = byName(ctx, SAVE).ref;
  const held = await ok(page, 'action', { captureId: 'r1', ref, action: 'click' });
  assert.equal(held.held?.kind, 'write', 'a save is a write (a plan may cover it), not outward');
  assert.equal(held.held.word, 'confirm');
  // The card shows what is saved: the fields beside the toolbar (no form on such pages).
  assert.deepEqual(held.held.fields.map((f) => f.value), ['Shopping list', '']);
  // While the person reads the card, the page re-renders (the syncer's status, as TiddlyWiki's
  // does): every node of the toolbar is new, nothing the card showed changed.
  const renders = await page.evaluate(() => window.__renders);
  await page.evaluate(() => renderEditor());
  assert.ok(await page.evaluate((n) => window.__renders > n, renders), 'the toolbar was re-rendered');
  // What was approved is the act (this control, this page), not the node that showed it.
  const done = await ok(page, 'action', { captureId: 'r1', ref, action: 'click', expect: held.held.canonical });
  assert.equal(done.done, true, JSON.stringify(done));
  assert.deepEqual(await page.evaluate(() => window.__saved.map((x) => x.title)), ['Shopping list']);
  assert.equal(done.changes.verified, true, 'the save showed: a toast');
  assert.equal(done.changes.by, 'notice');

  // The editor is gone: no control shows the approved act any more.
  await page.click('#new');
  const ctx2 = await ok(page, 'context', { captureId: 'r2' });
  const again = await ok(page, 'action', { captureId: 'r2', ref: byName(ctx2, SAVE).ref, action: 'click' });
  await page.click('[data-act=cancel]');
  const changed = await ok(page, 'action', { captureId: 'r2', ref: byName(ctx2, SAVE).ref, action: 'click', expect: again.held.canonical });
  assert.deepEqual(changed, { changed: true });
  assert.equal(await page.evaluate(() => window.__saved.length), 1, 'nothing else was saved');
  await page.close();
});

test('page: two controls showing the same act are not guessed between', opts, async () => {
  const page = await open('/holds-editor.html?open');
  const ctx = await ok(page, 'context', { captureId: 't1' });
  const ref = byName(ctx, SAVE).ref;
  const held = await ok(page, 'action', { captureId: 't1', ref, action: 'click' });
  await page.evaluate(() => {
    const bar = document.querySelector('.tc-tiddler-controls');
    bar.replaceWith(bar.cloneNode(true));
    document.querySelector('.tc-tiddler-title').append(document.querySelector('.tc-tiddler-controls').cloneNode(true));
  });
  const changed = await ok(page, 'action', { captureId: 't1', ref, action: 'click', expect: held.held.canonical });
  assert.deepEqual(changed, { changed: true });
  assert.equal(await page.evaluate(() => window.__saved.length), 0);
  await page.close();
});

test('page: inside a plan for its site, the save runs without a hold', opts, async () => {
  const page = await open('/holds-editor.html?open');
  const ctx = await ok(page, 'context', { captureId: 'p1' });
  const host = new URL(page.url()).hostname;
  const allow = { planId: 'plan-1', sites: [host], step: 1, of: 1 };
  await page.fill('#title', 'Planned');
  const fresh = await ok(page, 'context', { captureId: 'p2' });
  const done = await ok(page, 'action', { captureId: 'p2', ref: byName(fresh, SAVE).ref, action: 'click', allow });
  assert.equal(done.held, undefined, JSON.stringify(done));
  assert.equal(done.plan?.planId, 'plan-1');
  assert.equal(done.changes.verified, true);
  assert.deepEqual(await page.evaluate(() => window.__saved.map((x) => x.title)), ['Planned']);
  // Delete is never covered by a plan.
  await page.click('#new');
  const ctx3 = await ok(page, 'context', { captureId: 'p3' });
  const del = await ok(page, 'action', { captureId: 'p3', ref: byName(ctx3, 'Delete this tiddler').ref, action: 'click', allow });
  assert.equal(del.held?.kind, 'delete');
  assert.ok(ctx.nodes.length > 0);
  await page.close();
});

test('page: a write is verified by what the page shows, or said not to be', opts, async () => {
  const page = await open('/holds-editor.html?open');
  const host = new URL(page.url()).hostname;
  const allow = { planId: 'plan-1', sites: [host] };
  const click = async (id, name) => {
    const ctx = await ok(page, 'context', { captureId: id });
    return ok(page, 'action', { captureId: id, ref: byName(ctx, name).ref, action: 'click', allow });
  };
  // No toast: the editor closing (the save control gone) is the sign.
  await page.evaluate(() => { window.toast = () => {}; });
  await page.fill('#title', 'Quiet save');
  const quiet = await click('v1', SAVE);
  assert.deepEqual([quiet.changes.verified, quiet.changes.by], [true, 'control-gone']);
  // A save that shows nothing at all: could not confirm.
  await page.click('#new');
  await page.evaluate(() => {
    document.addEventListener('click', (e) => { if (e.target.closest('[data-act=save]')) e.stopImmediatePropagation(); }, true);
  });
  const silent = await click('v2', SAVE);
  assert.equal(silent.changes.verified, false, JSON.stringify(silent.changes));
  assert.equal(silent.changes.by, undefined);
  await page.close();
});

test('page: a bare Confirm is judged by the form it sits in (describe() in a real DOM)', opts, async () => {
  const page = await open('/holds-checkout.html');
  const kinds = await page.evaluate(() => Object.fromEntries(
    ['confirm-pay', 'pay', 'confirm-send', 'send', 'discard', 'confirm-profile', 'save-profile', 'done-profile', 'done-tour']
      .map((id) => {
        const d = globalThis.ChaperoneOutward.describe(document.getElementById(id));
        return [id, globalThis.ChaperoneOutward.classify(d).kind];
      })));
  assert.deepEqual(kinds, {
    'confirm-pay': 'outward', pay: 'outward', 'confirm-send': 'outward', send: 'outward', discard: 'delete',
    'confirm-profile': 'write', 'save-profile': 'write', 'done-profile': 'write', 'done-tour': 'none',
  });
  const d = await page.evaluate(() => globalThis.ChaperoneOutward.describe(document.getElementById('confirm-pay')));
  assert.equal(d.scope, 'Pay Example Store');
  assert.ok(d.hints.includes('cc-number') && d.editing);
  await page.fill('#card', '4242424242424242');
  const after = await page.evaluate(() => JSON.stringify(globalThis.ChaperoneOutward.describe(document.getElementById('confirm-pay'))));
  assert.ok(!after.includes('4242'), 'names only, never a value');
  await page.close();
});

test('page: a save approved for one draft does not save another, nor changed text', opts, async () => {
  const page = await open('/holds-editor.html?open');
  await page.fill('#title', 'First');
  const ctx = await ok(page, 'context', { captureId: 'd1' });
  const held = await ok(page, 'action', { captureId: 'd1', ref: byName(ctx, SAVE).ref, action: 'click' });
  await page.fill('#body', 'written after the card was shown');
  const changed = await ok(page, 'action', { captureId: 'd1', ref: byName(ctx, SAVE).ref, action: 'click', expect: held.held.canonical });
  assert.deepEqual(changed, { changed: true });
  assert.equal(await page.evaluate(() => window.__saved.length), 0);
  await page.close();
});

test('page: an approval given while the story river slides waits for it, then clicks', opts, async () => {
  const page = await open('/holds-editor.html?open');
  await page.fill('#title', 'Slid');
  const ctx = await ok(page, 'context', { captureId: 's1' });
  const ref = byName(ctx, SAVE).ref;
  const held = await ok(page, 'action', { captureId: 's1', ref, action: 'click' });
  await page.evaluate(() => window.slide());
  // Mid-slide the frame below covers the save: a click now is refused as covered…
  const covered = await page.evaluate(() => {
    const el = document.querySelector('[data-act=save]');
    const r = el.getBoundingClientRect();
    return !el.contains(document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2));
  });
  assert.ok(covered, 'the slide covers the save at its start');
  // …but the person's approval waits for the page to stand still.
  const done = await ok(page, 'action', { captureId: 's1', ref, action: 'click', expect: held.held.canonical });
  assert.equal(done.done, true, JSON.stringify(done));
  assert.deepEqual(await page.evaluate(() => window.__saved.map((x) => x.title)), ['Slid']);
  await page.close();
});

test('page: the agent\u2019s own click waits for the slide too, inside a plan', opts, async () => {
  const page = await open('/holds-editor.html?open');
  const allow = { planId: 'plan-1', sites: [new URL(page.url()).hostname] };
  await page.fill('#title', 'Planned while sliding');
  const ctx = await ok(page, 'context', { captureId: 'q1' });
  await page.evaluate(() => window.slide());
  const done = await ok(page, 'action', { captureId: 'q1', ref: byName(ctx, SAVE).ref, action: 'click', allow });
  assert.equal(done.done, true, JSON.stringify(done));
  assert.deepEqual(await page.evaluate(() => window.__saved.map((x) => x.title)), ['Planned while sliding']);
  await page.close();
});
