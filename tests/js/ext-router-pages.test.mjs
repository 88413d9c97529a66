// SPDX-License-Identifier: GPL-3.0-or-later
// The router and the page: the sign-in floor, refs and captures, navigation, tabs, frames, cookies, redaction.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ChaperoneError, MAX_CAPTURES, Router } from '../../extension/lib/router.js';
import { fakeClock, fakeStorageArea, inertTimers, makeFakeChrome } from './fake-chrome.mjs';
import { after, pageAgent, setup, code } from './router-harness.mjs';

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

test('capture: an act that changed the page in place answers with the page read right after, as browser.context would', async () => {
  const { router, fake } = await setup();
  const ctx = await router.handle('browser.context', { tabId: 1 });
  const page = pageAgent([]);
  const asked = [];
  const real = fake.chrome.scripting.executeScript;
  fake.chrome.scripting.executeScript = async (opts) => {
    const out = await real(opts);
    if (opts.func && opts.args[0] === 'action') {
      asked.push(opts.args[1].capture ?? null);
      // As the page agent answers when its act changed the page: its context op's read of it.
      if (opts.args[1].capture) {
        out[0].result.value.changes = { added: 1, removed: 1, textChanged: false, settled: true };
        out[0].result.value.context = (await page('context', opts.args[1].capture)).value;
      }
    }
    return out;
  };
  const acted = await router.handle('browser.node.action', { ref: `${ctx.captureId}:e1`, action: 'click', capture: true });
  assert.match(asked[0].captureId, /^[a-z0-9]{8}$/);
  assert.equal(asked[0].diff, true, 'a diff against the capture the agent last saw');
  const read = acted.context;
  assert.equal(read.captureId, asked[0].captureId);
  assert.equal(read.documentId, ctx.documentId);
  assert.deepEqual(read.nodes.map((n) => n.ref), [`${read.captureId}:e1`, `${read.captureId}:e2`]);
  assert.deepEqual(read.diff.removed, [`${ctx.captureId}:e2`], 'removed nodes are named as the agent saw them');
  assert.ok(read.frames.some((f) => f.frameId === 5), 'frames as browser.context has them');
  // It is the document's latest capture: its refs act, and the next diff is against it.
  assert.equal((await router.handle('browser.node.inspect', { ref: `${read.captureId}:e1` })).tag, 'button');
  const next = await router.handle('browser.context', { tabId: 1, diff: true });
  assert.deepEqual(next.diff.removed, [`${read.captureId}:e2`]);
  // Not asked for: the page is not asked to read itself, and a page's stray context is dropped.
  fake.chrome.scripting.executeScript = async (opts) => {
    const out = await real(opts);
    if (opts.func && opts.args[0] === 'action') {
      asked.push(opts.args[1].capture ?? null);
      out[0].result.value.context = { nodes: [], text: 'unasked' };
    }
    return out;
  };
  const plain = await router.handle('browser.node.action', { ref: `${next.captureId}:e1`, action: 'click' });
  assert.equal(asked.at(-1), null);
  assert.equal('context' in plain, false);
  assert.equal(await code(router.handle('browser.node.action', { ref: `${next.captureId}:e1`, action: 'click', capture: 'yes' })),
    'invalid_params');
  fake.chrome.scripting.executeScript = real;
});

test('keys: press and type go without a ref to the capture\'s document; a held press is the click it stands for', async () => {
  const { router, fake, pageLog } = await setup();
  const ctx = await router.handle('browser.context', { tabId: 1 });
  const pressed = await router.handle('browser.node.action', { captureId: ctx.captureId, action: 'press', key: 'Escape' });
  assert.equal(pressed.done, true);
  const sent = pageLog.filter((l) => l.op === 'action').at(-1);
  assert.deepEqual([sent.args.action, sent.args.key, sent.args.captureId, 'ref' in sent.args], ['press', 'Escape', ctx.captureId, false]);
  await router.handle('browser.node.action', { ref: `${ctx.captureId}:e4`, action: 'type', text: 'hi' });
  assert.equal(pageLog.filter((l) => l.op === 'action').at(-1).args.text, 'hi');

  // The page holds Enter as the click on Send (e1): the hold is that click, so Approve clicks it.
  const real = fake.chrome.scripting.executeScript;
  const heldAs = (heldRef, heldAction) => async (opts) => {
    if (opts.func && opts.args[0] === 'action') {
      return [{ result: { ok: true, value: { held: { kind: 'outward', reason: 'label', word: 'send', control: 'Send',
        site: 'https://a.example', fields: [], canonical: '{"c":1}' }, heldRef, heldAction } } }];
    }
    return real(opts);
  };
  fake.chrome.scripting.executeScript = heldAs('e1', 'click');
  const held = await router.handle('browser.node.action', { ref: `${ctx.captureId}:e4`, action: 'press', key: 'Enter' });
  assert.equal(held.held, true);
  const h = router.holds.get(held.hold.holdId);
  assert.deepEqual([h.ref, h.action], ['e1', 'click']);
  // A page that says approving runs something else than the click or this very press: refused.
  fake.chrome.scripting.executeScript = heldAs('e1', 'press:Delete');
  assert.equal(await code(router.handle('browser.node.action', { ref: `${ctx.captureId}:e4`, action: 'press', key: 'Enter' })), 'internal');
  fake.chrome.scripting.executeScript = real;
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

test('navigate: the page moving its own hash while the navigation is on its way does not end it; an anchor link does', async () => {
  const { router, fake } = await setup();
  fake.chrome.tabs.update = async (tabId, props) => {
    // The old document writes its hash first (as Node-RED does while it loads), then the new one commits.
    fake.chrome.webNavigation.onReferenceFragmentUpdated.fire({ tabId, frameId: 0, url: 'https://a.example/#flow/1',
      documentId: fake.frame(1, 0).documentId, documentLifecycle: 'active' });
    setTimeout(() => fake.navigate(tabId, 0, props.url), 5);
    return {};
  };
  const r = await router.handle('browser.navigate', { tabId: 1, url: 'https://a.example/' });
  assert.equal(r.url, 'https://a.example/');
  assert.equal(r.documentId, fake.frame(1, 0).documentId, 'the new document, not the old one');

  // A link to an anchor of the same document ends with that same-document update.
  fake.chrome.tabs.update = async (tabId, props) => {
    fake.chrome.webNavigation.onReferenceFragmentUpdated.fire({ tabId, frameId: 0, url: props.url,
      documentId: fake.frame(1, 0).documentId, documentLifecycle: 'active' });
    return {};
  };
  const same = await router.handle('browser.navigate', { tabId: 1, url: 'https://a.example/#part-2' });
  assert.equal(same.url, 'https://a.example/#part-2');
});

test('navigate answers once the new document loaded, so the next snapshot sees the page; a failed load says loaded:false', async () => {
  const { router, fake } = await setup();
  const order = [];
  let documentId = null;
  fake.chrome.tabs.update = async (tabId, props) => {
    setTimeout(() => {
      documentId = fake.navigate(tabId, 0, props.url, { load: false });
      order.push('committed');
      setTimeout(() => {
        order.push('loaded');
        fake.chrome.webNavigation.onCompleted.fire({ tabId, frameId: 0, url: props.url, documentId });
      }, 30);
    }, 1);
    return {};
  };
  const r = await router.handle('browser.navigate', { tabId: 1, url: 'https://a.example/slow-images' });
  order.push('answered');
  assert.deepEqual(order, ['committed', 'loaded', 'answered']);
  assert.equal(r.loaded, true);
  assert.equal(r.documentId, documentId);

  // The load fails after the commit (the server hung up on a script): answered, and said so.
  fake.chrome.tabs.update = async (tabId, props) => {
    setTimeout(() => {
      const doc = fake.navigate(tabId, 0, props.url, { load: false });
      setTimeout(() => fake.chrome.webNavigation.onErrorOccurred.fire({ tabId, frameId: 0, url: props.url,
        documentId: doc, error: 'net::ERR_CONNECTION_RESET' }), 5);
    }, 1);
    return {};
  };
  const failed = await router.handle('browser.navigate', { tabId: 1, url: 'https://a.example/broken' });
  assert.equal(failed.loaded, false);
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
