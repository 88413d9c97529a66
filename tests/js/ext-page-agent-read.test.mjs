// SPDX-License-Identifier: GPL-3.0-or-later
// The page agent reads pages: forms, a big page, diffs, stale refs, shadow roots, frames, auth signals, the sign-in floor.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  opts, server, inject, open, run, ok, refused, approve, hidePasswordRow, showPasswordRow, byName,
  clickOwnUi, ownUiText
} from './page-agent-harness.mjs';

test('forms.html: fields without values, setValue with the native setter and bubbling events', opts, async () => {
  const page = await open('/forms.html');
  await page.fill('#password', 'hunter2-secret');
  await page.fill('#bio', 'typed biography words');
  // A shown password field makes this a sign-in page (refused below, "sign-in floor"); with its
  // row hidden the field is still listed — filled, by length only — and the page can be worked.
  await hidePasswordRow(page);
  const ctx = await ok(page, 'context', { captureId: 'c1' });
  assert.equal(ctx.title, 'Forms fixture');
  assert.equal(ctx.lang, 'en');
  assert.equal(ctx.nodes.length, 9);
  assert.equal(ctx.forms.length, 1);
  const form = ctx.forms[0];
  assert.equal(form.name, 'profile');
  assert.equal(form.method, 'post');
  assert.ok(form.ref);
  assert.deepEqual(form.fields.map((f) => f.type), ['text', 'email', 'password', 'select-one', 'checkbox', 'textarea', 'file']);
  const pw = form.fields.find((f) => f.name === 'password');
  assert.deepEqual({ credential: pw.credential, filled: pw.filled, valueLength: pw.valueLength, label: pw.label },
    { credential: true, filled: true, valueLength: 14, label: 'New password' });
  assert.equal(form.fields.find((f) => f.name === 'fullName').required, true);
  assert.equal(form.fields.filter((f) => f.credential).length, 1);
  const json = JSON.stringify(ctx);
  assert.doesNotMatch(json, /hunter2|typed biography|hidden-csrf-token-value/, 'no field value anywhere');
  assert.deepEqual(byName(ctx, 'Disabled action').state, { disabled: true });
  assert.equal(ctx.auth.passwordField, false, 'hidden: not a password a person is asked for');
  assert.equal(ctx.auth.signInForm, false);

  const insp = await ok(page, 'inspect', { captureId: 'c1', ref: pw.ref });
  assert.equal(insp.credential, true);
  assert.equal(insp.attributes.autocomplete, 'new-password');
  assert.equal(insp.attributes.type, 'password');
  assert.equal(insp.visible, false);
  assert.equal(insp.bounds.width, 0);
  assert.doesNotMatch(JSON.stringify(insp), /hunter2/);

  // setValue: native setter (the page's React-style tracker is bypassed) + input and change.
  const name = form.fields.find((f) => f.name === 'fullName');
  const act = await ok(page, 'action', { captureId: 'c1', ref: name.ref, action: 'setValue', value: 'Ada Lovelace' });
  assert.equal(act.done, true);
  assert.equal(act.action, 'setValue');
  const seen = await page.evaluate(() => ({ value: document.getElementById('name').value, events: window.__formEvents, tracked: window.__tracker.tracked }));
  assert.equal(seen.value, 'Ada Lovelace');
  assert.equal(seen.tracked, '', 'the instance setter (a framework tracker) was not used');
  assert.deepEqual(seen.events.filter((e) => e.id === 'name').map((e) => [e.type, e.bubbles]), [['input', true], ['change', true]]);

  const country = form.fields.find((f) => f.name === 'country');
  await ok(page, 'action', { captureId: 'c1', ref: country.ref, action: 'setValue', value: 'de' });
  assert.equal(await page.inputValue('#country'), 'de');
  await ok(page, 'action', { captureId: 'c1', ref: country.ref, action: 'setValue', value: 'China' });
  assert.equal(await page.inputValue('#country'), 'cn');
  await refused(page, 'action', { captureId: 'c1', ref: country.ref, action: 'setValue', value: 'Atlantis' }, 'invalid_params');
  const box = form.fields.find((f) => f.name === 'newsletter');
  await ok(page, 'action', { captureId: 'c1', ref: box.ref, action: 'setValue', value: true });
  assert.equal(await page.isChecked('#newsletter'), true);
  const bio = form.fields.find((f) => f.name === 'bio');
  await ok(page, 'action', { captureId: 'c1', ref: bio.ref, action: 'setValue', value: 'Line one\nLine two' });
  assert.equal(await page.inputValue('#bio'), 'Line one\nLine two');

  const file = form.fields.find((f) => f.name === 'avatar');
  await refused(page, 'action', { captureId: 'c1', ref: file.ref, action: 'setValue', value: '/etc/passwd' }, 'invalid_params');
  await refused(page, 'action', { captureId: 'c1', ref: name.ref, action: 'setValue', value: 42 }, 'invalid_params');
  await refused(page, 'action', { captureId: 'c1', ref: byName(ctx, 'Save profile').ref, action: 'setValue', value: 'x' }, 'target_denied');
  // Disabled for good: refused (after the short wait a person gives a control turned off).
  const stays = await refused(page, 'action', { captureId: 'c1', ref: byName(ctx, 'Disabled action').ref, action: 'click' }, 'target_denied');
  assert.match(stays.message, /disabled/);
  // Turned off for a moment (a button off while its page is busy): the click waits for it.
  await page.evaluate(() => {
    const b = document.getElementById('disabled-btn');
    b.addEventListener('click', () => { window.__disabledClicked = true; }, { once: true });
    setTimeout(() => { b.disabled = false; }, 80);
  });
  await ok(page, 'action', { captureId: 'c1', ref: byName(ctx, 'Disabled action').ref, action: 'click' });
  assert.equal(await page.evaluate(() => window.__disabledClicked), true);
  await page.evaluate(() => { document.getElementById('disabled-btn').disabled = true; });
  await refused(page, 'action', { captureId: 'c1', ref: name.ref, action: 'explode' }, 'invalid_params');

  // The submit stays on the page and records itself; the agent sees what changed.
  const { held, done: sub } = await approve(page, 'c1', byName(ctx, 'Save profile').ref);
  assert.equal(held.kind, 'write');
  assert.equal(held.word, 'save');
  assert.equal(held.control, 'Save profile');
  assert.equal(held.site, server.originA);
  assert.deepEqual(held.fields.find((f) => f.name.startsWith('New password')), { name: 'New password', secret: true, length: 14 });
  assert.ok(held.fields.some((f) => f.value === 'Ada Lovelace'));
  const secret = await page.inputValue('#password');
  assert.ok(secret.length === 14 && !held.canonical.includes(secret), 'no secret in canonical');
  assert.equal(sub.changes.urlChanged, false);
  assert.equal(sub.changes.textChanged, true);
  assert.match(await page.textContent('#result'), /Submitted: fullName=Ada Lovelace, email=, password=\(14 chars\)/);

  const focus = await ok(page, 'action', { captureId: 'c1', ref: name.ref, action: 'focus' });
  assert.equal(focus.done, true);
  assert.equal(await page.evaluate(() => document.activeElement.id), 'name');
  const after = await ok(page, 'context', { captureId: 'c2' });
  const name2 = after.forms[0].fields.find((f) => f.name === 'fullName');
  assert.equal(name2.ref, name.ref, 'same element, same ref');
  assert.deepEqual({ filled: name2.filled, valueLength: name2.valueLength }, { filled: true, valueLength: 12 });
  assert.equal(after.nodes.find((n) => n.ref === name.ref).state.focused, true);
  // (The page itself prints the submission into its text; the fields and nodes never carry values.)
  assert.doesNotMatch(JSON.stringify([after.forms, after.nodes]), /Ada Lovelace|Line one|hunter2/, 'values are not read back');
  await page.close();
});

test('big.html: 10,000 elements captured within bounds, visible nodes first (the time is printed; bench/ measures it)', opts, async (t) => {
  const page = await open('/big.html');
  assert.equal(await page.evaluate(() => document.getElementsByTagName('*').length), 10000);
  const timing = await page.evaluate(async () => {
    const runs = [];
    let value = null;
    let bytes = 0;
    for (let i = 0; i < 9; i += 1) {
      const t0 = performance.now();
      const r = await globalThis.__chaperonePage.run('context', { captureId: `b${i}`, maxTextBytes: 20480, maxNodes: 400, maxScan: 10000, diff: i > 0 });
      runs.push(performance.now() - t0);
      value = r.value;
      bytes = new TextEncoder().encode(JSON.stringify(r)).length;
    }
    return { runs, value, bytes };
  });
  const v = timing.value;
  const sorted = timing.runs.slice().sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)];
  const msg = `big.html capture: first ${timing.runs[0].toFixed(1)} ms, median ${median.toFixed(1)} ms, best ${sorted[0].toFixed(1)} ms; `
    + `${timing.bytes} bytes JSON; scanned ${v.scanned}, nodeCount ${v.nodeCount}, nodes ${v.nodes.length}, text ${new TextEncoder().encode(v.text).length} B`;
  t.diagnostic(msg);
  assert.ok(v.scanned >= 9990 && v.scanned <= 10000, `scanned ${v.scanned}`);
  assert.equal(v.nodes.length, 400);
  assert.ok(v.nodeCount >= 990 && v.nodeCount <= 1010, `about 1,000 actionable: ${v.nodeCount}`);
  assert.equal(v.truncated, true);
  assert.equal(v.textTruncated, true);
  assert.ok(new TextEncoder().encode(v.text).length <= 20480);
  assert.ok(v.forms.every((f) => f.fields.length <= 50));
  // Visible first: the controls in the viewport are all kept; the kept ones are in document order.
  const inView = await page.evaluate(() => [...document.querySelectorAll('#root button, #root a, #root input')]
    .filter((e) => { const r = e.getBoundingClientRect(); return r.top < innerHeight && r.bottom > 0; }).length);
  assert.ok(inView > 0);
  assert.equal(v.nodes[0].name, 'Action 0');
  const nums = v.nodes.map((n) => Number(n.ref.slice(1)));
  assert.ok(new Set(nums).size === nums.length, 'refs unique');
  // Unchanged page: the diff is empty and every ref stayed.
  assert.deepEqual({ a: v.diff.added.length, r: v.diff.removed.length, c: v.diff.changed.length, t: v.diff.textChanged },
    { a: 0, r: 0, c: 0, t: false });
  // How fast is measured by bench/extension-bench.mjs (browser.context of a 10,000-element
  // page), not asserted here: the diagnostic above prints this run's figures.

  const small = await ok(page, 'context', { captureId: 's', maxScan: 500, maxNodes: 20, maxTextBytes: 100 });
  assert.equal(small.scanned, 500);
  assert.equal(small.truncated, true);
  assert.equal(small.nodes.length, 20);
  assert.ok(new TextEncoder().encode(small.text).length <= 100);
  // Bounds are capped, never raised by the caller.
  const capped = await ok(page, 'context', { captureId: 'x', maxScan: 1e9, maxNodes: 1e9, maxTextBytes: 1e9 });
  assert.ok(capped.scanned <= 10000 && capped.nodes.length <= 2000 && new TextEncoder().encode(capped.text).length <= 20480);
  // With the extension's own limits (CONTEXT_LIMITS) every actionable node of the page is kept,
  // so the app can page through all of them.
  const all = await ok(page, 'context', { captureId: 'all', maxTextBytes: 20480, maxNodes: 2000, maxScan: 10000 });
  assert.equal(all.nodes.length, all.nodeCount);
  assert.ok(all.nodeCount >= 990, `every actionable node kept (${all.nodes.length})`);
  assert.ok(new TextEncoder().encode(JSON.stringify(all)).length < 512 * 1024, 'the reply stays under one unchunked frame');
  await page.close();
});

test('dynamic.html: action reports changes; diff re-uses refs and names what changed', opts, async () => {
  const page = await open('/dynamic.html');
  const c1 = await ok(page, 'context', { captureId: 'c1', diff: true });
  assert.equal(c1.diff, null, 'no previous capture yet');
  const load = byName(c1, 'Load details');
  const steady = byName(c1, 'Steady button');
  const placeholder = byName(c1, 'Placeholder');
  const agree = byName(c1, 'I agree');
  const act = await ok(page, 'action', { captureId: 'c1', ref: load.ref, action: 'click' });
  const { settleMs, ...counted } = act.changes;
  assert.deepEqual(counted, { urlChanged: false, titleChanged: true, added: 4, removed: 1, textChanged: true, settled: true });
  assert.ok(Number.isInteger(settleMs) && settleMs >= 40, `settleMs ${settleMs}`);
  const c2 = await ok(page, 'context', { captureId: 'c2', diff: true });
  assert.equal(c2.title, 'Dynamic fixture — loaded');
  assert.equal(byName(c2, 'Reload details').ref, load.ref, 'renamed node keeps its ref');
  assert.equal(byName(c2, 'Steady button').ref, steady.ref);
  assert.deepEqual(c2.diff.added.map((n) => n.name), ['First new', 'Second new']);
  assert.deepEqual(c2.diff.removed, [placeholder.ref]);
  assert.deepEqual(c2.diff.changed.map((n) => [n.ref, n.name]).sort(), [[agree.ref, 'I agree'], [load.ref, 'Reload details']].sort());
  assert.equal(c2.diff.textChanged, true);
  assert.ok(!c2.diff.added.some((n) => n.ref === steady.ref));

  // A framework re-render (same button, new element) keeps the ref: stable key, old one gone.
  await page.evaluate(() => {
    const old = document.getElementById('steady');
    old.replaceWith(old.cloneNode(true));
  });
  const c3 = await ok(page, 'context', { captureId: 'c3', diff: true });
  assert.equal(byName(c3, 'Steady button').ref, steady.ref);
  assert.deepEqual({ a: c3.diff.added, r: c3.diff.removed, c: c3.diff.changed, t: c3.diff.textChanged }, { a: [], r: [], c: [], t: false });
  // …and the ref of an older capture still points at the element that capture saw (now gone).
  await refused(page, 'inspect', { captureId: 'c1', ref: steady.ref }, 'stale_node');
  const insp = await ok(page, 'inspect', { captureId: 'c3', ref: steady.ref });
  assert.equal(insp.name, 'Steady button');
  await page.close();
});

test('waitText: words and labels shown now or later are found; hidden and script text are not; it ends at its bound', opts, async () => {
  const page = await open('/dynamic.html');
  assert.deepEqual(await ok(page, 'waitText', { text: 'waiting' }), { found: true }, 'shown already, any case');
  // The page shows the words later, from its own timer: found then, not at the bound.
  await page.evaluate(() => setTimeout(() => document.getElementById('load').click(), 150));
  const started = Date.now();
  assert.deepEqual(await ok(page, 'waitText', { text: 'The details   are here', timeoutMs: 10000 }), { found: true });
  assert.ok(Date.now() - started < 10000, 'answered when the words came, before the bound');
  // What a person does not see does not count: hidden text, a script's text.
  await page.evaluate(() => {
    const p = document.createElement('p');
    p.hidden = true;
    p.textContent = 'Hidden words here';
    const s = document.createElement('script');
    s.type = 'application/json';
    s.textContent = '{"store":"Script words here"}';
    document.body.append(p, s);
  });
  for (const text of ['Hidden words here', 'Script words here']) {
    assert.deepEqual(await ok(page, 'waitText', { text, timeoutMs: 200 }), { found: false }, text);
  }
  // A rendered element's label is what the snapshot names it by: it counts; a hidden one's not.
  await page.evaluate(() => {
    const shown = document.createElement('button');
    shown.setAttribute('aria-label', 'Confirm changes to this note');
    shown.textContent = '✓';
    const hidden = document.createElement('button');
    hidden.setAttribute('aria-label', 'Discard the hidden draft');
    hidden.style.display = 'none';
    document.body.append(shown, hidden);
  });
  assert.deepEqual(await ok(page, 'waitText', { text: 'confirm CHANGES', timeoutMs: 200 }), { found: true });
  assert.deepEqual(await ok(page, 'waitText', { text: 'Discard the hidden', timeoutMs: 200 }), { found: false });
  await refused(page, 'waitText', { text: '   ' }, 'invalid_params');
  await page.close();
});

test('stale_node: removed, unknown, evicted; refs never retarget', opts, async () => {
  const page = await open('/handoff.html');
  const c1 = await ok(page, 'context', { captureId: 'k1' });
  const btn = byName(c1, 'Page button');
  assert.equal((await ok(page, 'inspect', { ref: `k1:${btn.ref}` })).name, 'Page button', 'wire form "<captureId>:<ref>" accepted');
  await refused(page, 'inspect', { captureId: 'k1', ref: 'e999' }, 'stale_node');
  await refused(page, 'inspect', { captureId: 'nope', ref: btn.ref }, 'stale_node');
  await refused(page, 'inspect', { captureId: 'k1', ref: 42 }, 'invalid_params');
  // Four captures per document are kept: a fifth evicts the first.
  for (const id of ['k2', 'k3', 'k4', 'k5']) await ok(page, 'context', { captureId: id });
  await refused(page, 'inspect', { captureId: 'k1', ref: btn.ref }, 'stale_node');
  await ok(page, 'inspect', { captureId: 'k2', ref: btn.ref });
  // Removed, then an identical element put in its place: still stale for the old capture.
  await page.evaluate(() => {
    const b = document.getElementById('page-button');
    const twin = b.cloneNode(true);
    b.remove();
    document.body.appendChild(twin);
  });
  const err = await refused(page, 'action', { captureId: 'k5', ref: btn.ref, action: 'click' }, 'stale_node');
  assert.match(err.message, /no longer in the page/);
  // Installing twice is harmless: the captures survive.
  await inject(page);
  await refused(page, 'inspect', { captureId: 'k5', ref: btn.ref }, 'stale_node');
  await ok(page, 'inspect', { captureId: 'k6', ref: byName(await ok(page, 'context', { captureId: 'k6' }), 'Page button').ref });
  // run never throws.
  assert.equal((await run(page, 'nonsense', {})).error.code, 'unknown_method');
  assert.equal((await run(page, 'context', null)).ok, true);
  assert.equal((await page.evaluate(() => globalThis.__chaperonePage.run())).error.code, 'unknown_method');
  await page.close();
});

test('clickable.html: what only the pointer says can be clicked is listed [clickable], named by its text, and clicked like a button', opts, async () => {
  const page = await open('/clickable.html');
  const ctx = await ok(page, 'context', { captureId: 'k1' });
  const clickable = ctx.nodes.filter((n) => n.state.clickable).map((n) => `${n.role} ${n.name}`);
  // The outermost element under the pointer, named by its whole text; not the icon without a
  // label, not a hidden one, not what a link or a button already is.
  assert.deepEqual(clickable, ['generic Harbour notes 2 days ago', 'generic Garden plan last week',
    'generic Send message to the harbour master', 'generic Send the weekly report to all our clients now',
    'generic Pay the invoice of the harbour office', 'generic Delete this message from the inbox', 'generic Settings']);
  assert.equal(ctx.nodes.filter((n) => /Harbour notes|Fancy|A link/.test(n.name)).length, 3, 'each element once');
  assert.ok(!ctx.nodes.some((n) => n.name === 'Not shown'), 'a hidden one is not listed');
  // Named from its content, blocks apart as they are shown.
  assert.equal(ctx.nodes.find((n) => n.role === 'option').name, 'harbour-tides Tide tables for the harbour. 1.2.0');

  const garden = ctx.nodes.find((n) => n.name.startsWith('Garden plan'));
  const r = await ok(page, 'action', { captureId: 'k1', ref: garden.ref, action: 'click' });
  assert.equal(r.done, true);
  assert.equal(await page.textContent('#status'), 'Opened Garden plan', 'the page\'s own listener ran');
  // A click that would send, pay or delete is held, whatever the element is: judged as itself
  // (not a focusable container or a listbox around it), by its leading words as a button is,
  // however long its name.
  const holds = {};
  for (const [start, kind] of [['Send message', 'outward'], ['Send the weekly', 'outward'], ['Pay the invoice', 'outward'],
    ['Delete this message', 'delete']]) {
    const node = ctx.nodes.find((n) => n.name.startsWith(start));
    const held = await ok(page, 'action', { captureId: 'k1', ref: node.ref, action: 'click' });
    assert.equal(held.held?.kind, kind, `${start}: ${JSON.stringify(held)}`);
    holds[start] = { ref: node.ref, canonical: held.held.canonical };
  }
  assert.equal(await page.textContent('#status'), 'Opened Garden plan', 'nothing was sent');
  // The person approves while the list re-renders its rows, as React does: the approved click
  // goes to the row that now shows exactly what was approved.
  await page.evaluate(() => {
    const old = document.querySelector('.result[data-id="3"]');
    old.replaceWith(old.cloneNode(true));
  });
  const send = holds['Send message'];
  const approved = await ok(page, 'action', { captureId: 'k1', ref: send.ref, action: 'click', expect: send.canonical });
  assert.equal(approved.done, true, JSON.stringify(approved));
  assert.equal(await page.textContent('#status'), 'Opened Send message to the harbour master');
  // "Click to edit": the row becomes an editor. It is a textbox now, and what is typed into it
  // is not its name.
  await page.evaluate(() => {
    const row = document.querySelector('.result[data-id="2"]');
    row.setAttribute('contenteditable', 'true');
    row.textContent = 'typed words stay in the page';
  });
  const edited = (await ok(page, 'context', { captureId: 'k3' })).nodes.find((n) => n.role === 'textbox');
  assert.ok(edited, 'the editor is listed');
  assert.ok(!edited.state.clickable && !/typed words/.test(edited.name), JSON.stringify(edited));
  // A batch step finds it by role and name as listed.
  assert.deepEqual(await ok(page, 'find', { captureId: 'k2', role: 'generic', name: 'Harbour notes 2 days ago' }),
    { ref: ctx.nodes.find((n) => n.name.startsWith('Harbour notes')).ref });
  await page.close();
});

test('find: the one rendered element with a role and name, kept in the batch\'s own capture; none or several are counted', opts, async () => {
  const page = await open('/dynamic.html');
  const own = await ok(page, 'context', { captureId: 'a1' });
  const steady = byName(own, 'Steady button').ref;
  const found = await ok(page, 'find', { captureId: 'b1', role: 'button', name: '  steady BUTTON ' });
  assert.deepEqual(found, { ref: steady }, 'any case and spacing; the ref the agent\'s capture gave it');
  await ok(page, 'action', { captureId: 'b1', ref: found.ref, action: 'focus' });
  assert.equal(await page.evaluate(() => document.activeElement.id), 'steady');
  // A ref without a capture id still means the agent's own capture, not the batch's.
  assert.equal((await ok(page, 'inspect', { ref: byName(own, 'Load details').ref })).name, 'Load details');
  // A hidden twin is not counted; shown, it makes two, and the step must say which.
  await page.evaluate(() => {
    const twin = document.getElementById('steady').cloneNode(true);
    twin.id = 'twin';
    twin.hidden = true;
    document.body.appendChild(twin);
  });
  assert.deepEqual(await ok(page, 'find', { captureId: 'b1', role: 'button', name: 'Steady button' }), { ref: steady });
  await page.evaluate(() => { document.getElementById('twin').hidden = false; });
  assert.deepEqual(await ok(page, 'find', { captureId: 'b1', role: 'button', name: 'Steady button' }), { count: 2 });
  assert.deepEqual(await ok(page, 'find', { captureId: 'b1', role: 'link', name: 'Steady button' }), { count: 0 },
    'the role counts as much as the name');
  await refused(page, 'find', { captureId: 'b1', role: 'button' }, 'invalid_params');
  await page.close();
});

test('shadow.html: open shadow roots are walked and acted in; closed ones stay closed', opts, async () => {
  const page = await open('/shadow.html');
  const ctx = await ok(page, 'context', { captureId: 'c1' });
  assert.equal(ctx.shadowRoots, 2);
  const names = ctx.nodes.map((n) => n.name);
  assert.deepEqual(names, ['Shadow button', 'Shadow input', 'Nested shadow link', 'Slotted button']);
  assert.doesNotMatch(JSON.stringify(ctx), /Closed secret/);
  assert.ok(ctx.headings.some((h) => h.text === 'Open widget'));
  await ok(page, 'action', { captureId: 'c1', ref: byName(ctx, 'Shadow button').ref, action: 'click' });
  assert.equal(await page.textContent('#status'), 'Shadow button clicked.');
  await ok(page, 'action', { captureId: 'c1', ref: byName(ctx, 'Shadow input').ref, action: 'setValue', value: 'in the shadow' });
  assert.equal(await page.evaluate(() => document.getElementById('open-host').shadowRoot.getElementById('shadow-input').value), 'in the shadow');
  await page.close();
});

test('iframe.html: frames listed with their origins; the agent works inside each frame', opts, async () => {
  const page = await open('/iframe.html');
  const ctx = await ok(page, 'context', { captureId: 'c1' });
  assert.deepEqual(ctx.iframes.map((f) => [f.index, f.name, f.title, f.origin]), [
    [0, 'same-frame', 'Same-origin frame', server.originA],
    [1, 'cross-frame', 'Cross-origin frame', server.originB],
  ]);
  assert.deepEqual(ctx.nodes.map((n) => n.name), ['Top button']);
  for (const [label, origin] of [['same', server.originA], ['cross', server.originB]]) {
    const frame = page.frames().find((f) => f.url().startsWith(origin) && f.url().includes(`label=${label}`));
    assert.ok(frame, `${label} frame`);
    await frame.waitForLoadState();
    await inject(frame);
    const fctx = await ok(frame, 'context', { captureId: `f-${label}` });
    const btn = byName(fctx, `Child button (${label})`);
    await ok(frame, 'action', { captureId: `f-${label}`, ref: btn.ref, action: 'click' });
    assert.equal(await frame.textContent('#status'), `Clicked in ${label}.`);
  }
  await page.close();
});

test('auth signals: sign-in form, password, OTP, CAPTCHA, QR', opts, async () => {
  const login = await open('/login.html');
  // With its password shown the page is refused whole ("sign-in floor" below); the other
  // signals are read on the same page with the password row hidden.
  assert.deepEqual((await refused(login, 'context', {}, 'refused_floor')).data, { level: 'blind', reason: 'sign_in' });
  await hidePasswordRow(login);
  const l = await ok(login, 'context', {});
  assert.deepEqual(l.auth, { passwordField: false, otpField: false, signInForm: true, captcha: false, qr: false },
    'a form with a "Sign in" button is a sign-in form');
  await login.goto(`${server.originA}/login.html?otp=1`);
  await inject(login);
  await hidePasswordRow(login);
  assert.equal((await ok(login, 'context', {})).auth.otpField, true);
  await login.close();
  const auth = await open('/auth.html');
  const a = await ok(auth, 'context', {});
  assert.deepEqual(a.auth, { passwordField: false, otpField: true, signInForm: false, captcha: true, qr: true });
  assert.equal(a.forms[0].fields[0].credential, true, 'totp_code is a credential');
  await auth.close();
  const plain = await open('/handoff.html');
  assert.deepEqual((await ok(plain, 'context', {})).auth, { passwordField: false, otpField: false, signInForm: false, captcha: false, qr: false });
  await plain.close();
});

test('contenteditable: what was typed into a credential editable never leaves the page; an ordinary editor keeps its text', opts, async () => {
  const page = await open('/handoff.html');
  await page.evaluate(() => document.body.insertAdjacentHTML('beforeend',
    '<div contenteditable="true" aria-label="Recovery phrase">apple banana cherry delta</div>' +
    '<div contenteditable="true" aria-label="Notes"><p>Buy milk</p><p>Call Bob</p></div>' +
    '<div contenteditable="true" placeholder="\u52a9\u8bb0\u8bcd">gamma epsilon zeta</div>'));
  const c = await ok(page, 'context', {});
  const all = JSON.stringify(c);
  for (const secret of ['apple', 'banana', 'gamma', 'zeta']) {
    assert.ok(!all.includes(secret), `"${secret}" typed into a credential editable was read out: ${c.text}`);
  }
  assert.match(c.text, /\[redacted credential len=25\]/);
  assert.match(c.text, /Buy milk/, 'an ordinary editor is page text an agent reads');
  await page.close();
});

// browser_snapshot's `until`: the lines that hold the awaited words come with the snapshot, from
// all of the page's text: a tooltip drawn at the end of a long page is past the excerpt.
test('until: the lines with the awaited words, past the excerpt of a long page; masked as the text is', opts, async () => {
  const page = await open('/big.html');
  await page.evaluate(() => document.body.insertAdjacentHTML('beforeend',
    '<div role="tooltip" style="position:absolute;top:0;left:0">Debug messages</div>' +
    '<div contenteditable="true" aria-label="Recovery phrase">Debug messages kept secret</div>'));
  const plain = await ok(page, 'context', {});
  assert.equal(plain.textTruncated, true, 'the page\'s text is longer than the excerpt');
  assert.doesNotMatch(plain.text, /Debug messages/, 'the tooltip is past the excerpt');
  assert.equal(plain.untilLines, undefined, 'no until, no lines');

  const c = await ok(page, 'context', { until: '  debug   MESSAGES ' });
  assert.deepEqual(c.untilLines, ['Debug messages'], 'found as the page shows it; the credential editable masked');
  assert.doesNotMatch(JSON.stringify(c), /kept secret/);
  assert.deepEqual((await ok(page, 'context', { until: 'words nowhere on the page' })).untilLines, []);
  // At most three lines, each at most 300 characters.
  await page.evaluate(() => {
    for (let i = 0; i < 5; i++) document.body.insertAdjacentHTML('beforeend', `<p>Debug messages ${i} ${'x'.repeat(400)}</p>`);
  });
  const many = await ok(page, 'context', { until: 'debug messages' });
  assert.equal(many.untilLines.length, 3);
  assert.ok(many.untilLines.every((l) => [...l].length <= 301), many.untilLines.map((l) => l.length).join());
  await page.close();
});

// ---- the sign-in floor: a page that shows a password field is blind -----------------------

test('sign-in floor: a visible password field refuses context, inspect and action, with nothing of the page', opts, async () => {
  const page = await open('/login.html', { stub: true });
  await page.fill('#username', 'ada@example.org');
  await page.fill('#password', 'correct-horse');
  // Refs made while the password row was hidden (a page that shows it later, a two-step sign-in).
  await hidePasswordRow(page);
  const ctx = await ok(page, 'context', { captureId: 'l1' });
  const user = ctx.forms[0].fields.find((f) => f.name === 'username');
  const signIn = byName(ctx, 'Sign in');
  await showPasswordRow(page);

  const page1 = new URL(page.url()).pathname;
  const attempts = [
    ['context', { captureId: 'l2' }],
    ['context', { captureId: 'l2', diff: true }],
    ['inspect', { captureId: 'l1', ref: user.ref }],
    ['find', { captureId: 'l3', role: 'button', name: 'Sign in' }],
    ['action', { captureId: 'l1', ref: signIn.ref, action: 'click' }],
    ['action', { captureId: 'l1', ref: user.ref, action: 'setValue', value: 'mallory' }],
    ['action', { captureId: 'l1', ref: user.ref, action: 'focus' }],
    ['action', { captureId: 'l1', ref: signIn.ref, action: 'click', allow: { planId: 'p', sites: ['127.0.0.1'], step: 1, of: 2 } }],
    // Even a bad request is refused as the floor, before its arguments are looked at.
    ['inspect', { captureId: 'nope', ref: 'e999' }],
  ];
  for (const [op, args] of attempts) {
    const r = await run(page, op, args);
    assert.deepEqual(Object.keys(r).sort(), ['error', 'ok'], `${op}: an error and nothing else`);
    assert.equal(r.ok, false, `${op} ${JSON.stringify(args)} answered`);
    assert.deepEqual(Object.keys(r.error).sort(), ['code', 'data', 'message']);
    assert.equal(r.error.code, 'refused_floor');
    assert.deepEqual(r.error.data, { level: 'blind', reason: 'sign_in' });
    const json = JSON.stringify(r);
    for (const pageWord of ['Sign in —', 'Fixture', 'Email or username', 'Password', 'ada@', 'correct-horse',
      page1, '127.0.0.1', 'username', user.ref, signIn.ref, 'status']) {
      assert.ok(!json.includes(pageWord), `${op}: the refusal carries "${pageWord}": ${json}`);
    }
  }
  // Nothing was done: no click, no fill, no focus.
  assert.equal(await page.textContent('#status'), '');
  assert.equal(await page.inputValue('#username'), 'ada@example.org');
  assert.notEqual(await page.evaluate(() => document.activeElement.id), 'username');

  // Chaperone's own pill and the login handoff banner still work on exactly this page.
  assert.deepEqual(await ok(page, 'pill', { show: true, step: 4 }), { shown: true, stopped: false, step: 4 });
  assert.deepEqual(await ok(page, 'handoff', { show: true, handoffId: 'h-login', reason: 'login', message: 'Please sign in' }),
    { shown: true, handoffId: 'h-login', reason: 'login' });
  const own = await ownUiText(page);
  assert.match(own, /Agent · step 4/);
  assert.match(own, /Sign in to this site yourself/);
  await clickOwnUi(page, 'done');
  assert.deepEqual(await page.evaluate(() => window.__sent), [{ type: 'page.handoff', handoffId: 'h-login', outcome: 'done' }]);

  // The person signed in and the field went away: the page is the agent's again.
  await page.evaluate(() => document.getElementById('password').closest('label').remove());
  assert.equal((await ok(page, 'context', { captureId: 'l3' })).title, 'Sign in — Fixture');
  await page.close();
});

test('sign-in floor: a hidden password field does not refuse; open shadow roots and the top document count', opts, async () => {
  const page = await open('/handoff.html');
  const ctx = await ok(page, 'context', { captureId: 'x1' });
  const button = byName(ctx, 'Page button').ref;
  const hiddenWays = {
    'display:none': '<input type="password" style="display:none">',
    'visibility:hidden': '<input type="password" style="visibility:hidden">',
    'hidden container': '<div hidden><label>PIN <input type="password" name="pin"></label></div>',
    'display:none container': '<div style="display:none"><input type="PASSWORD"></div>',
    'zero box': '<input type="password" style="width:0;height:0;padding:0;border:0;margin:0">',
    'type=hidden': '<input type="hidden" name="password" value="x">',
    template: '<template><input type="password"></template>',
  };
  for (const [how, html] of Object.entries(hiddenWays)) {
    await page.evaluate((h) => {
      const box = document.createElement('div');
      box.className = 'probe';
      box.innerHTML = h;
      document.body.appendChild(box);
    }, html);
    const v = await ok(page, 'context', { captureId: 'x2' });
    assert.equal(v.auth.passwordField, false, how);
    await ok(page, 'inspect', { captureId: 'x1', ref: button });
    await ok(page, 'action', { captureId: 'x1', ref: button, action: 'focus' });
    await page.evaluate(() => document.querySelector('.probe').remove());
  }

  // Shown, in the light DOM: refused; hidden again: answered again.
  await page.evaluate(() => document.body.insertAdjacentHTML('beforeend', '<input id="pw" type="password">'));
  await refused(page, 'context', {}, 'refused_floor');
  await refused(page, 'action', { captureId: 'x1', ref: button, action: 'click' }, 'refused_floor');
  await page.evaluate(() => { document.getElementById('pw').style.display = 'none'; });
  await ok(page, 'action', { captureId: 'x1', ref: button, action: 'focus' });
  await page.evaluate(() => document.getElementById('pw').remove());

  // Inside an open shadow root: the snapshot's walk goes there and refuses (inspect and action
  // check the light DOM only — see page-agent.js — and the refs they need come from a snapshot).
  await page.evaluate(() => {
    const host = document.createElement('div');
    host.id = 'shadow-login';
    document.body.appendChild(host);
    host.attachShadow({ mode: 'open' }).innerHTML = '<label>Password <input type="password"></label>';
  });
  const shadow = await refused(page, 'context', { captureId: 'x3' }, 'refused_floor');
  assert.deepEqual(shadow.data, { level: 'blind', reason: 'sign_in' });
  await page.evaluate(() => document.getElementById('shadow-login').remove());
  await ok(page, 'context', { captureId: 'x4' });
  await page.close();

  // A same-origin child frame of a page that shows a password field is refused too. (A
  // cross-origin frame cannot read its top document; there the worker's URL floor is the check.)
  const framed = await open('/iframe.html');
  const same = framed.frames().find((f) => f.url().includes('label=same'));
  await same.waitForLoadState();
  await inject(same);
  await ok(same, 'context', {});
  await framed.evaluate(() => document.body.insertAdjacentHTML('afterbegin', '<input type="password" id="top-pw">'));
  assert.deepEqual((await refused(same, 'context', {}, 'refused_floor')).data, { level: 'blind', reason: 'sign_in' });
  await framed.close();
});

test('record lists: the controls and headings of a list item, a data row, a grid row, a feed article are inList; the page\'s own are not', opts, async () => {
  const page = await open('/index.html');
  await page.evaluate(() => {
    document.body.innerHTML = `
      <header><button>Compose</button><input type="search" aria-label="Search mail"></header>
      <nav><ul><li><button>Alice Smith</button></li></ul></nav>
      <ul><li>Alice Smith <button>Call Alice Smith</button></li><li><span id="host"></span></li></ul>
      <table><thead><tr><th><button>Sort by name</button></th></tr></thead>
        <tbody><tr><td>Bob Jones</td><td><button>Email Bob Jones</button></td></tr></tbody></table>
      <table role="presentation"><tr><td><button>Laid out</button></td></tr></table>
      <div role="grid"><div role="row"><div role="gridcell"><button>Open Carol</button></div></div></div>
      <div role="feed"><article><h2>Dan on holiday</h2><button>Like Dan's post</button></article></div>
      <h2>Inbox</h2>`;
    document.getElementById('host').attachShadow({ mode: 'open' }).innerHTML = '<button>Message Erin</button>';
  });
  const ctx = await ok(page, 'context', { captureId: 'c1' });
  for (const name of ['Alice Smith', 'Call Alice Smith', 'Message Erin', 'Email Bob Jones', 'Open Carol', 'Like Dan\'s post']) {
    assert.equal(byName(ctx, name).inList, true, name);
  }
  for (const name of ['Compose', 'Search mail', 'Sort by name', 'Laid out']) {
    assert.equal(byName(ctx, name).inList, undefined, name);
  }
  assert.deepEqual(ctx.headings, [{ level: 2, text: 'Dan on holiday', inList: true }, { level: 2, text: 'Inbox' }]);
  await page.close();
});
