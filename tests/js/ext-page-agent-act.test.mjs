// SPDX-License-Identifier: GPL-3.0-or-later
// The page agent acts: covered and modal targets, holds, the pill, the handoff banner, navigating away.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import {
  opts, server, inject, open, ok, refused, hidePasswordRow, byName, piercedNodes, clickOwnUi,
  ownUiText
} from './page-agent-harness.mjs';
import { guardDialogs } from '../../extension/lib/page-dialogs-main.js';
import { domWait } from '../e2e/browser-harness.mjs';

test('overlay.html: a covered button is refused and says what covers it', opts, async () => {
  const page = await open('/overlay.html');
  const ctx = await ok(page, 'context', { captureId: 'c1' });
  const err = await refused(page, 'action', { captureId: 'c1', ref: byName(ctx, 'Covered button').ref, action: 'click' }, 'target_denied');
  assert.match(err.message, /covered by div#overlay\.click-shield/);
  assert.equal(await page.textContent('#status'), 'Nothing clicked.');
  const done = await ok(page, 'action', { captureId: 'c1', ref: byName(ctx, 'Uncovered button').ref, action: 'click' });
  assert.equal(done.changes.textChanged, true);
  assert.equal(await page.textContent('#status'), 'Uncovered button clicked.');
  // Focus and scroll are not clicks: allowed on the covered button.
  await ok(page, 'action', { captureId: 'c1', ref: byName(ctx, 'Covered button').ref, action: 'scroll' });
  await page.close();
});

test('modal.html: nothing behind an open modal can be clicked; inside it can', opts, async () => {
  const page = await open('/modal.html');
  const ctx = await ok(page, 'context', { captureId: 'c1' });
  assert.equal(byName(ctx, 'Pick this one').inModal, true);
  assert.equal(byName(ctx, 'Behind button').inModal, undefined);
  const err = await refused(page, 'action', { captureId: 'c1', ref: byName(ctx, 'Behind button').ref, action: 'click' }, 'target_denied');
  assert.match(err.message, /modal/);
  await refused(page, 'action', { captureId: 'c1', ref: byName(ctx, 'Behind button').ref, action: 'focus' }, 'target_denied');
  await ok(page, 'action', { captureId: 'c1', ref: byName(ctx, 'Pick this one').ref, action: 'click' });
  assert.equal(await page.textContent('#clicked'), 'Confirmed.');
  await ok(page, 'action', { captureId: 'c1', ref: byName(ctx, 'Close').ref, action: 'click' });
  await ok(page, 'action', { captureId: 'c1', ref: byName(ctx, 'Behind button').ref, action: 'click' });
  assert.equal(await page.textContent('#clicked'), 'Behind button clicked.');
  await page.close();

  // [aria-modal=true] that does not cover the button: only the modal rule can refuse.
  const aria = await open('/modal.html?kind=aria');
  const actx = await ok(aria, 'context', { captureId: 'a1' });
  assert.equal(byName(actx, 'Accept').inModal, true);
  const aerr = await refused(aria, 'action', { captureId: 'a1', ref: byName(actx, 'Behind button').ref, action: 'click' }, 'target_denied');
  assert.match(aerr.message, /modal dialog \(div#aria-modal/);
  assert.equal(await aria.textContent('#clicked'), 'Nothing clicked.');
  await ok(aria, 'action', { captureId: 'a1', ref: byName(actx, 'Close settings').ref, action: 'click' });
  await ok(aria, 'action', { captureId: 'a1', ref: byName(actx, 'Behind button').ref, action: 'click' });
  assert.equal(await aria.textContent('#clicked'), 'Behind button clicked.');
  await aria.close();
});

test('holds: a changed form is not approved; a plan covers writes only; a missed POST submit is held', opts, async () => {
  const page = await open('/forms.html');
  await hidePasswordRow(page);
  const ctx = await ok(page, 'context', { captureId: 'h1' });
  const save = byName(ctx, 'Save profile').ref;
  const first = await ok(page, 'action', { captureId: 'h1', ref: save, action: 'click' });
  assert.equal(first.held.kind, 'write');
  assert.equal(first.held.reason, 'label');
  // The agent changes a field after the hold: the approval was about something else.
  const name = ctx.forms[0].fields.find((f) => f.name === 'fullName');
  await ok(page, 'action', { captureId: 'h1', ref: name.ref, action: 'setValue', value: 'Someone else' });
  const changed = await ok(page, 'action', { captureId: 'h1', ref: save, action: 'click', expect: first.held.canonical });
  assert.deepEqual(changed, { changed: true });
  assert.equal(await page.evaluate(() => window.__formEvents.some((e) => e.type === 'submit')), false);

  // A plan for another site covers nothing; one for this host lets the write through, once.
  const host = new URL(server.originA).hostname;
  const other = await ok(page, 'action', { captureId: 'h1', ref: save, action: 'click', allow: { planId: 'plan-1', sites: ['example.com'] } });
  assert.ok(other.held);
  const planned = await ok(page, 'action', { captureId: 'h1', ref: save, action: 'click', allow: { planId: 'plan-1', sites: [host] } });
  assert.equal(planned.done, true);
  assert.deepEqual(planned.plan, { planId: 'plan-1', site: host });
  // The step the app says this write is comes back with it (for the pill and the app); numbers
  // out of bounds or of the wrong type are left out, never passed on.
  const stepped = await ok(page, 'action', { captureId: 'h1', ref: save, action: 'click',
    allow: { planId: 'plan-1', sites: [host], step: 2, of: 3 } });
  assert.deepEqual(stepped.plan, { planId: 'plan-1', site: host, step: 2, of: 3 });
  for (const [step, of] of [[0, 3], [2, 99], [4, 3], ['2', '3'], [1.5, 3], [2, Infinity], [null, 3]]) {
    const v = await ok(page, 'action', { captureId: 'h1', ref: save, action: 'click',
      allow: { planId: 'plan-1', sites: [host], step, of } });
    assert.deepEqual(v.plan, { planId: 'plan-1', site: host }, `step ${step} of ${of}`);
  }
  await page.close();

  // A plain-looking control whose script submits a POST form: the capturing listener holds it.
  const p2 = await open('/index.html');
  await p2.evaluate(() => {
    const f = document.createElement('form');
    f.method = 'post';
    f.action = '/submitted';
    // The field labelled as Vuetify labels one: two labels `for` it (the floating one and the
    // outline's), one named by aria-labelledby. The card names it once, as the snapshot does.
    f.innerHTML = '<label id="q-label" for="q">* Query</label><label for="q" aria-hidden="true">* Query</label>'
      + '<input id="q" name="q" aria-labelledby="q-label" value="hello"><span role="button" id="go" tabindex="0">Go on</span>';
    document.body.prepend(f);
    window.__pageSawSubmit = false;
    f.addEventListener('submit', () => { window.__pageSawSubmit = true; });
    window.__goClicks = 0;
    document.getElementById('go').addEventListener('click', () => { window.__goClicks += 1; f.requestSubmit(); });
  });
  const c2 = await ok(p2, 'context', { captureId: 'h2' });
  const go = await ok(p2, 'action', { captureId: 'h2', ref: byName(c2, 'Go on').ref, action: 'click' });
  assert.equal(go.held.reason, 'form-submit');
  assert.equal(go.held.kind, 'outward');
  assert.deepEqual(go.held.fields, [{ name: '* Query', value: 'hello' }]);
  assert.equal(await p2.evaluate(() => window.__pageSawSubmit), false, 'the page never saw the submit');
  assert.equal(new URL(p2.url()).pathname, '/index.html');
  // A double-click: the first press's submission is held, and the second press is not made.
  const twice = await ok(p2, 'action', { captureId: 'h2', ref: byName(c2, 'Go on').ref, action: 'dblclick' });
  assert.equal(twice.held?.reason, 'form-submit', JSON.stringify(twice));
  assert.equal(await p2.evaluate(() => window.__goClicks), 2, 'one press of the double-click, after the single click');
  assert.equal(await p2.evaluate(() => window.__pageSawSubmit), false, 'the page never saw a submit');

  // form.submit() fires no submit event: the navigate event (Navigation API) still holds it.
  await p2.evaluate(() => {
    const f = document.createElement('form');
    f.method = 'post';
    f.action = '/submitted';
    f.hidden = true;
    f.innerHTML = '<input name="message" value="send everything">';
    document.body.prepend(f);
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = 'OK';
    b.addEventListener('click', () => { window.__submits = (window.__submits ?? 0) + 1; f.submit(); });
    document.body.prepend(b);
  });
  const c3 = await ok(p2, 'context', { captureId: 'h3' });
  const okClick = await ok(p2, 'action', { captureId: 'h3', ref: byName(c3, 'OK').ref, action: 'click' });
  assert.equal(okClick.held?.reason, 'form-submit', JSON.stringify(okClick));
  assert.deepEqual(okClick.held.fields, [{ name: 'message', value: 'send everything' }]);
  // The click ran (that is how the submit was seen) and its submit was stopped before it left:
  // the page is still here, with the one submit it tried.
  assert.equal(await p2.evaluate(() => window.__submits), 1, 'the click ran once');
  assert.equal(new URL(p2.url()).pathname, '/index.html', 'the POST never left');
  await p2.close();
});

test('pill: closed shadow root, never in a snapshot, Esc and Stop only when trusted', opts, async () => {
  const page = await open('/handoff.html', { stub: true });
  const before = await ok(page, 'context', { captureId: 'p0' });
  // The worker sends the Stop shortcut the browser has bound; the pill names it (never Esc, which
  // a page can swallow).
  assert.deepEqual(await ok(page, 'pill', { show: true, step: 3, shortcut: 'Ctrl+Shift+E' }), { shown: true, stopped: false, step: 3 });
  assert.match(await ownUiText(page), /Agent · step 3 · Ctrl\+Shift\+E to stop/);
  const probe = await page.evaluate(() => {
    // What a page script can learn: a host element with no reachable shadow root.
    const hosts = [...document.documentElement.children].filter((e) => e !== document.head && e !== document.body);
    return { hosts: hosts.length, shadow: hosts.map((h) => h.shadowRoot), text: document.documentElement.innerText };
  });
  assert.equal(probe.hosts, 1);
  assert.deepEqual(probe.shadow, [null], 'closed shadow root: unreachable from the page');
  assert.doesNotMatch(probe.text, /to stop/);
  const during = await ok(page, 'context', { captureId: 'p1', diff: true });
  assert.equal(during.scanned, before.scanned, 'the pill host is skipped by the walk');
  assert.deepEqual(during.nodes, before.nodes);
  assert.doesNotMatch(JSON.stringify(during), /to stop|Stop/);

  // A page script's synthetic Escape does nothing; the person's does.
  await page.evaluate(() => window.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true })));
  assert.deepEqual(await page.evaluate(() => window.__sent), []);
  await page.keyboard.press('Escape');
  assert.deepEqual(await page.evaluate(() => window.__sent), [{ type: 'page.stop', source: 'esc' }]);
  assert.match(await ownUiText(page), /Agent stopped/);
  await page.keyboard.press('Escape');
  assert.equal((await page.evaluate(() => window.__sent)).length, 1, 'once stopped, Esc says nothing more');

  // Resumed (the worker shows the pill again), then the Stop button, pressed by a person.
  await ok(page, 'pill', { show: true, step: 4 });
  assert.match(await ownUiText(page), /step 4/);
  await clickOwnUi(page, 'stop');
  assert.deepEqual((await page.evaluate(() => window.__sent))[1], { type: 'page.stop', source: 'pill' });
  assert.deepEqual(await ok(page, 'pill', { show: false }), { shown: false });
  assert.equal(await page.evaluate(() => document.documentElement.children.length), 2, 'host removed');
  await page.keyboard.press('Escape');
  assert.equal((await page.evaluate(() => window.__sent)).length, 2, 'no pill, no Esc stop');
  await page.close();
});

test('pill: "plan step N of M" while a plan runs; bad plan numbers are never shown', opts, async () => {
  const page = await open('/handoff.html', { stub: true });
  // The pill's label exactly (in its closed shadow root, as DevTools sees it).
  const label = async () => {
    const { cdp, all, attr } = await piercedNodes(page);
    await cdp.detach();
    const el = all.find((n) => n.nodeType === 1 && attr(n, 'class') === 'label');
    assert.ok(el, 'the pill has a label');
    return (el.children || []).filter((n) => n.nodeType === 3).map((n) => n.nodeValue).join('');
  };
  assert.deepEqual(await ok(page, 'pill', { show: true, step: 5, plan: { step: 2, of: 3 }, shortcut: 'Ctrl+Shift+E' }),
    { shown: true, stopped: false, step: 5, plan: { step: 2, of: 3 } });
  assert.equal(await label(), 'Agent · plan step 2 of 3 · Ctrl+Shift+E to stop');
  // The English fallback is the catalogue's English (outside an extension getMessage is absent).
  const en = JSON.parse(await readFile(new URL('../../extension/_locales/en/messages.json', import.meta.url), 'utf8'));
  assert.equal(`${en.page_pill_plan.message.replace('$1', '2').replace('$2', '3')} · ${en.page_pill_shortcut.message.replace('$1', 'Ctrl+Shift+E')}`,
    'Agent · plan step 2 of 3 · Ctrl+Shift+E to stop');
  // No shortcut bound (the person removed it): the pill names none — and never claims Esc.
  await ok(page, 'pill', { show: true, step: 6, plan: { step: 3, of: 3 } });
  assert.equal(await label(), 'Agent · plan step 3 of 3');

  // Anything but whole numbers with 1 ≤ step ≤ of ≤ 20 is dropped: the plain step shows.
  for (const plan of [{ step: 0, of: 3 }, { step: 2, of: 99 }, { step: '2', of: '3' }, { step: 4, of: 3 },
    { step: 1.5, of: 3 }, { step: 2, of: Infinity }, { step: 2 }, 'step 2 of 3', null, [2, 3]]) {
    const v = await ok(page, 'pill', { show: true, step: 7, plan });
    assert.deepEqual(v, { shown: true, stopped: false, step: 7 }, JSON.stringify(plan));
    assert.equal(await label(), 'Agent · step 7', JSON.stringify(plan));
  }
  // The plan ended (no plan in the op): back to the step; stopped wins over a plan.
  await ok(page, 'pill', { show: true, step: 8, plan: { step: 1, of: 2 } });
  await ok(page, 'pill', { show: true, step: 9 });
  assert.equal(await label(), 'Agent · step 9');
  await ok(page, 'pill', { show: true, step: 9, stopped: true, plan: { step: 1, of: 2 } });
  assert.equal(await label(), 'Agent stopped');
  await page.close();
});

test('pill over a showModal() dialog: shown in the top layer, Esc still stops', opts, async () => {
  // The dialog makes the rest of the page inert, the pill's Stop button included (a known limit:
  // see the report); the Esc key, heard on window in the capture phase, still works.
  const page = await open('/modal.html', { stub: true });
  await ok(page, 'pill', { show: true, step: 1 });
  assert.equal(await page.evaluate(() => [...document.querySelectorAll('[popover]')].some((h) => h.matches(':popover-open'))), true);
  await page.keyboard.press('Escape');
  assert.deepEqual(await page.evaluate(() => window.__sent), [{ type: 'page.stop', source: 'esc' }]);
  await page.close();
});

test('handoff banner: reason text, agent message as plain text, trusted Done / Cancel task', opts, async () => {
  const page = await open('/handoff.html', { stub: true });
  const hostile = '<img src=x onerror="window.__pwned=1">Scan the code, please';
  assert.deepEqual(await ok(page, 'handoff', { show: true, handoffId: 'h1', reason: 'qr', message: hostile }),
    { shown: true, handoffId: 'h1', reason: 'qr' });
  const text = await ownUiText(page);
  assert.match(text, /Chaperone needs you/);
  assert.match(text, /Scan the QR code on this page with your phone/);
  assert.ok(text.includes(hostile), 'the message is shown verbatim, as text');
  const { all } = await piercedNodes(page);
  assert.equal(all.filter((n) => n.nodeName === 'IMG').length, 0, 'never parsed as markup');
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.equal(await page.evaluate(() => document.body.innerText.includes('Chaperone needs you')), false);
  const ctx = await ok(page, 'context', {});
  assert.deepEqual(ctx.nodes.map((n) => n.name), ['Page button'], 'banner buttons are not the agent\u2019s to press');
  await refused(page, 'handoff', { show: true, reason: 'qr' }, 'invalid_params');

  await clickOwnUi(page, 'done');
  assert.deepEqual(await page.evaluate(() => window.__sent), [{ type: 'page.handoff', handoffId: 'h1', outcome: 'done' }]);
  await clickOwnUi(page, 'done');
  assert.equal((await page.evaluate(() => window.__sent)).length, 1, 'answered once');
  assert.equal((await ok(page, 'handoff', { show: false, handoffId: 'other' })).shown, true, 'another id does not hide it');
  assert.equal((await ok(page, 'handoff', { show: false, handoffId: 'h1' })).shown, false);

  for (const reason of ['mfa', 'captcha', 'device', 'login', 'other', 'bogus']) {
    const v = await ok(page, 'handoff', { show: true, handoffId: `h-${reason}`, reason, message: '' });
    assert.equal(v.reason, reason === 'bogus' ? 'other' : reason);
  }
  assert.match(await ownUiText(page), /The agent needs you to do something on this page/);
  await ok(page, 'handoff', { show: true, handoffId: 'h2', reason: 'login', message: 'Please sign in' });
  assert.match(await ownUiText(page), /Sign in to this site yourself/);
  await clickOwnUi(page, 'cancel');
  assert.deepEqual((await page.evaluate(() => window.__sent))[1], { type: 'page.handoff', handoffId: 'h2', outcome: 'cancelled' });
  await page.close();
});

test('navigate-away.html: an action that navigates reports and the new document starts clean', opts, async () => {
  const page = await open('/navigate-away.html?delay=150');
  const ctx = await ok(page, 'context', { captureId: 'n1' });
  const act = await ok(page, 'action', { captureId: 'n1', ref: byName(ctx, 'Go to the next page').ref, action: 'click' });
  assert.equal(act.done, true);
  await page.waitForURL(/navigate-target\.html/);
  assert.equal(await page.evaluate(() => typeof globalThis.__chaperonePage), 'undefined', 'agent and refs belong to the old document');
  await inject(page);
  await refused(page, 'inspect', { captureId: 'n1', ref: 'e1' }, 'stale_node');
  assert.equal((await ok(page, 'context', {})).title, 'Navigation target');
  await page.close();
});

test('dialogs.html: a page\'s own confirm and alert during an act are answered, never left open, and told', opts, async () => {
  const page = await open('/dialogs.html');
  // What the worker installs in the page's main world before a click (page-bridge.js).
  await page.evaluate(guardDialogs);
  const ctx = await ok(page, 'context', { captureId: 'g1' });
  const act = (name, extra) => ok(page, 'action', { captureId: 'g1', ref: byName(ctx, name).ref, action: 'click', ...extra });

  // The agent's own click: the page's question is the person's, so it is answered Cancel.
  const close = await act('Close the editor');
  assert.deepEqual(close.dialogs, [{ kind: 'confirm', message: 'Discard your changes to "Ferry times"?', answered: 'cancel' }]);
  assert.equal(await page.textContent('#status'), 'Still editing');
  const check = await act('Check the spelling');
  assert.deepEqual(check.dialogs, [{ kind: 'alert', message: 'No spelling mistakes found.', answered: 'closed' }]);
  assert.equal(await page.textContent('#status'), 'Checked');

  // A delete is held; approved, the page's "Do you wish to delete…?" is the person's question
  // again, answered OK.
  const held = await act('Delete this note');
  assert.equal(held.held?.kind, 'delete', JSON.stringify(held));
  const done = await act('Delete this note', { expect: held.held.canonical });
  assert.deepEqual(done.dialogs, [{ kind: 'confirm', message: 'Do you wish to delete the note "Ferry times"?', answered: 'ok' }]);
  assert.equal(await page.textContent('#status'), 'Deleted');

  // Outside an act the page's dialogs are its own, as they always were: the browser opens it.
  const later = await act('Check later');
  assert.equal(later.dialogs, undefined, 'asked after the act answered');
  const dialog = await page.waitForEvent('dialog');
  assert.equal(dialog.message(), 'Replace the saved copy?');
  await dialog.accept();
  await domWait(page, () => document.getElementById('status').textContent === 'Replaced', null, { what: 'the page\'s own answer' });
  await page.close();
});
