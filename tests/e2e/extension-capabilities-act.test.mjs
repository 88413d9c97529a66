// SPDX-License-Identifier: GPL-3.0-or-later
// Extension capabilities end to end, acting: clicks, focus and scroll, refs, settling, navigation, takeover, cookies,
// and real widgets in a background tab (frames that are part of the page, editors, choices, keys, hover).

import assert from 'node:assert/strict';
import { describe } from 'node:test';

import {
  skip, COOKIE_VALUE, sites, engine, pages, tabs, step, call, ok, refused, context, nodeNamed,
  fieldNamed, pageText, tabActive, setUpCapabilities, deviceId
} from './capabilities-harness.mjs';

describe('extension capabilities through the engine', { skip }, () => {
  setUpCapabilities();

  // ---- acting --------------------------------------------------------------------------------------

  step('click: an uncovered button is clicked; a covered one is refused (target_denied)', async () => {
    const ctx = await context('overlay');
    const covered = await refused('target_denied', 'browser.node.action',
      { ref: nodeNamed(ctx, 'Covered button').ref, action: 'click' });
    assert.match(covered.message, /covered/);
    assert.equal(await pageText('overlay', '#status'), 'Nothing clicked.', 'neither the button nor the overlay got a click');

    await ok('browser.node.action', { ref: nodeNamed(ctx, 'Uncovered button').ref, action: 'click' });
    assert.equal(await pageText('overlay', '#status'), 'Uncovered button clicked.');
    assert.match((await context('overlay')).text, /Uncovered button clicked\./, 'the agent sees it too');
  });

  step('click: a button behind an open modal dialog is refused; one inside it works', async () => {
    const ctx = await context('modal');
    const confirm = nodeNamed(ctx, 'Pick this one');
    assert.equal(confirm.inModal, true);
    const behind = await refused('target_denied', 'browser.node.action',
      { ref: nodeNamed(ctx, 'Behind button').ref, action: 'click' });
    assert.match(behind.message, /modal/);
    assert.equal(await pageText('modal', '#clicked'), 'Nothing clicked.');
    await ok('browser.node.action', { ref: confirm.ref, action: 'click' });
    assert.equal(await pageText('modal', '#clicked'), 'Confirmed.');

    // An [aria-modal=true] dialog that covers nothing: only the modal rule can refuse the click.
    await ok('browser.navigate', { tabId: tabs.modal, url: `${sites.originA}/modal.html?kind=aria` });
    const aria = await context('modal');
    const refusedAria = await refused('target_denied', 'browser.node.action',
      { ref: nodeNamed(aria, 'Behind button').ref, action: 'click' });
    assert.match(refusedAria.message, /modal/);
    assert.equal(await pageText('modal', '#clicked'), 'Nothing clicked.');
    await ok('browser.node.action', { ref: nodeNamed(aria, 'Accept').ref, action: 'click' });
    assert.equal(await pageText('modal', '#clicked'), 'Accepted.');
  });

  step('focus and scroll', async () => {
    const forms = await context('forms');
    await ok('browser.node.action', { ref: fieldNamed(forms, 'email').ref, action: 'focus' });
    assert.equal(await pages.forms.evaluate(() => document.activeElement?.id), 'email');
    assert.equal((await ok('browser.node.inspect', { ref: fieldNamed(forms, 'email').ref })).state.focused, true);

    const big = await context('big');
    const far = big.nodes.at(-1);
    assert.equal((await ok('browser.node.inspect', { ref: far.ref })).inViewport, false, 'the last node starts below the fold');
    await ok('browser.node.action', { ref: far.ref, action: 'scroll' });
    assert.equal((await ok('browser.node.inspect', { ref: far.ref })).inViewport, true);
    assert.ok(await pages.big.evaluate(() => window.scrollY > 1000), 'the page scrolled');
  });

  step('a file input is refused; the file chooser stays empty', async () => {
    const ctx = await context('forms');
    await refused('invalid_params', 'browser.node.action',
      { ref: fieldNamed(ctx, 'avatar').ref, action: 'setValue', value: '/etc/passwd' });
    assert.equal(await pages.forms.evaluate(() => document.getElementById('avatar').files.length), 0);
  });

  step('refs: an unknown capture and a capture the page no longer keeps are stale_node', async () => {
    await refused('stale_node', 'browser.node.inspect', { ref: 'zzzzzzzz:e1' });
    const old = await context('forms');
    const oldRef = fieldNamed(old, 'email').ref;
    for (let i = 0; i < 4; i += 1) await context('forms'); // the page keeps its last four captures
    await refused('stale_node', 'browser.node.inspect', { ref: oldRef });
    // The same node through a fresh capture is fine.
    await ok('browser.node.inspect', { ref: fieldNamed(await context('forms'), 'email').ref });
  });

  // ---- settling ------------------------------------------------------------------------------------

  step('browser.node.action answers once the page settled: after its own slow request, and after a quiet window for a no-op', async () => {
    // The worker counts the tab's requests (webRequest) while the page waits for DOM quiet: a
    // 1.5 s fetch, then a text change, is all done when the action answers.
    const nav = await context('nav');
    const t0 = Date.now();
    const slow = await ok('browser.node.action', { ref: nodeNamed(nav, 'Start slow operation').ref, action: 'click' });
    const slowMs = Date.now() - t0;
    assert.equal(await pageText('nav', '#slow-status'), 'Done.', 'the fetch and its change were done when it answered');
    assert.equal(slow.changes.settled, true, JSON.stringify(slow.changes));
    assert.equal(slow.changes.textChanged, true);
    assert.ok(slow.changes.settleMs >= 1500, `waited for the 1.5 s request: settleMs ${slow.changes.settleMs}`);

    // A button that does nothing: one quiet window (40 ms), not the cap.
    const dyn = await context('dynamic');
    const t1 = Date.now();
    const noop = await ok('browser.node.action', { ref: nodeNamed(dyn, 'Steady button').ref, action: 'click' });
    const noopMs = Date.now() - t1;
    assert.equal(noop.changes.settled, true);
    assert.deepEqual([noop.changes.added, noop.changes.removed, noop.changes.textChanged], [0, 0, false]);
    console.log(`# through the engine: slow fetch click ${slowMs} ms (settleMs ${slow.changes.settleMs}), `
      + `no-op click ${noopMs} ms (settleMs ${noop.changes.settleMs})`);
  });

  // ---- navigation ----------------------------------------------------------------------------------

  step('navigation: stale_document, navigate within the site, refused to another, origin_changed', async () => {
    const page = pages.nav;
    const first = await context('nav');
    const goSame = nodeNamed(first, 'Go to the next page');
    const click = await call('browser.node.action', { ref: goSame.ref, action: 'click' });
    // The page navigates ~300 ms later: the click is done either way (a stale_document here says so).
    assert.ok(click.result?.done === true || (click.error?.code === 'stale_document' && click.error?.message),
      JSON.stringify(click));
    await page.waitForURL(`${sites.originA}/navigate-target.html`, { timeout: 5000 });

    // Refs and document ids of the old page no longer reach anything.
    await refused('stale_document', 'browser.node.inspect', { ref: goSame.ref });
    await refused('stale_document', 'browser.node.action', { ref: goSame.ref, action: 'click' });
    await refused('stale_document', 'browser.context', { tabId: tabs.nav, documentId: first.documentId });
    assert.match((await context('nav')).text, /You arrived/);

    // browser.navigate within the granted site.
    const back = await ok('browser.navigate', { tabId: tabs.nav, url: `${sites.originA}/navigate-away.html` });
    assert.equal(back.url, `${sites.originA}/navigate-away.html`);
    assert.ok(back.documentId && back.documentId !== first.documentId);
    await page.waitForURL(`${sites.originA}/navigate-away.html`, { timeout: 5000 });

    // ...never to another site.
    // Refused before anything was asked of the tab: no navigation was started to come later.
    let moved = 0;
    const onNav = (frame) => { if (frame === page.mainFrame()) moved += 1; };
    page.on('framenavigated', onNav);
    await refused('target_denied', 'browser.navigate', { tabId: tabs.nav, url: `${sites.originB}/navigate-target.html` });
    // A round trip through the same tab's page agent after the refusal: a navigation the
    // refused call had started would have committed before it answers.
    await context('nav');
    page.off('framenavigated', onNav);
    assert.equal(moved, 0, 'no navigation was started');
    assert.equal(page.url(), `${sites.originA}/navigate-away.html`, 'the tab did not move');

    // The page itself goes to another site: the grant does not follow.
    const again = await context('nav');
    await call('browser.node.action', { ref: nodeNamed(again, 'Go to the other origin').ref, action: 'click' });
    await page.waitForURL(`${sites.originB}/navigate-target.html`, { timeout: 5000 });
    await refused('origin_changed', 'browser.context', { tabId: tabs.nav });
    await refused('origin_changed', 'browser.cookies', { tabId: tabs.nav });
    const listed = (await ok('browser.tabs')).tabs.find((t) => t.tabId === tabs.nav);
    assert.equal(listed.state, 'origin_changed');
    assert.ok(listed.url.startsWith(sites.originA), 'the listing shows only what was granted');
  });

  step('browser.takeover brings the tab to the front', async () => {
    await pages.forms.bringToFront();
    assert.equal(await tabActive(tabs.handoff), false);
    const r = await ok('browser.takeover', { tabId: tabs.handoff, message: 'Please look at this' });
    assert.deepEqual(r, { tabId: tabs.handoff, focused: true });
    assert.equal(await tabActive(tabs.handoff), true);
    assert.equal(await tabActive(tabs.forms), false);
  });

  // ---- widgets, in a tab the person is not looking at ------------------------------------------------

  const labelled = (ctx, label) => {
    const f = ctx.forms.flatMap((x) => x.fields).find((x) => x.label === label);
    assert.ok(f, `field ${label}`);
    return f;
  };

  step('frames that are part of the page: read, clicked and filled under the page\'s grant', async () => {
    await ok('browser.navigate', { tabId: tabs.overlay, url: `${sites.originA}/widgets-frames.html` });
    await pages.overlay.waitForURL(`${sites.originA}/widgets-frames.html`);
    assert.equal(await tabActive(tabs.overlay), false, 'a background tab');
    const ctx = await context('overlay');
    assert.match(ctx.text, /Inside the srcdoc frame\./);
    const inline = ctx.frames.filter((f) => f.inline);
    assert.equal(inline.length, 2, JSON.stringify(ctx.frames));
    assert.ok(inline.every((f) => f.readable && f.origin === sites.originA && !f.reason), 'readable, never not_web');
    const cross = ctx.frames.find((f) => f.title === 'Cross-origin frame');
    assert.equal(cross.readable, false, 'a cross-origin frame keeps its own rules');
    assert.ok(!ctx.nodes.some((n) => n.name === 'Sandboxed button'));

    await ok('browser.node.action', { ref: nodeNamed(ctx, 'Srcdoc button').ref, action: 'click' });
    assert.equal(await pages.overlay.frameLocator('#srcdoc-frame').locator('#srcdoc-status').textContent(), 'Srcdoc button clicked.');
    await ok('browser.node.action', { ref: nodeNamed(ctx, 'Type the text for this note').ref, action: 'setValue', value: 'Body text' });
    assert.equal(await pageText('overlay', '#preview'), 'Body text', 'the script-written editor\'s page heard it');
  });

  step('editors and choices: a controlled input, a model editor, a shadow textarea, select, checkbox, radio, date', async () => {
    await ok('browser.navigate', { tabId: tabs.overlay, url: `${sites.originA}/widgets-editors.html` });
    await pages.overlay.waitForURL(`${sites.originA}/widgets-editors.html`);
    const ctx = await context('overlay');
    const fill = (ref, value) => ok('browser.node.action', { ref, action: 'setValue', value });
    await fill(labelled(ctx, 'Controlled name').ref, 'Ada');
    assert.equal(await pageText('overlay', '#react-model'), 'model: "Ada"');
    await fill(nodeNamed(ctx, 'Model editor').ref, 'Kept in the model');
    assert.equal(await pageText('overlay', '#model-out'), 'model editor: "Kept in the model"');
    await fill(nodeNamed(ctx, 'Plain editor').ref, 'Plain words');
    assert.equal(await pageText('overlay', '#plain-editable'), 'Plain words');
    await fill(labelled(ctx, 'Shadow note').ref, 'In the shadow');
    assert.equal(await pageText('overlay', '#shadow-out'), 'shadow: "In the shadow"');
    await fill(labelled(ctx, 'Country').ref, 'Germany');
    await fill(labelled(ctx, 'Agree to the terms').ref, 'true');
    await fill(labelled(ctx, 'Small').ref, 'true');
    await fill(labelled(ctx, 'Start date').ref, '2026-05-31');
    assert.equal(await pageText('overlay', '#choices-out'), 'choices: country=de agree=true size=s start=2026-05-31');
  });

  step('a search opens on focus in a background tab; keys, typing and hover', async () => {
    assert.equal(await tabActive(tabs.overlay), false, 'still a background tab');
    const ctx = await context('overlay');
    const act = (params) => ok('browser.node.action', params);
    await act({ ref: labelled(ctx, 'Search notes').ref, action: 'setValue', value: 'Hello' });
    assert.equal(await pages.overlay.isVisible('#search-popup'), true, 'the results opened although the tab has no focus');
    assert.equal(await pageText('overlay', '#search-results'), '3 matches for Hello');
    await act({ captureId: ctx.captureId, action: 'press', key: 'Escape' });
    assert.equal(await pageText('overlay', '#status'), 'Search closed.');
    // Control+s is a save: held, and the person's Approve presses it.
    const save = await act({ captureId: ctx.captureId, action: 'press', key: 'Control+s' });
    assert.equal(save.held, true, JSON.stringify(save));
    assert.equal(save.hold.kind, 'write');
    assert.equal(await pageText('overlay', '#status'), 'Search closed.');
    await engine.command({ cmd: 'resolve-hold', deviceId, holdId: save.hold.holdId, outcome: 'approve' }, { timeoutMs: 8000 });
    assert.equal(await pageText('overlay', '#status'), 'Saved with Control+s.');
    await act({ ref: labelled(ctx, 'First field').ref, action: 'type', text: 'abc' });
    await act({ captureId: ctx.captureId, action: 'press', key: 'Tab' });
    await act({ captureId: ctx.captureId, action: 'type', text: 'xyz' });
    assert.deepEqual([await pages.overlay.inputValue('#first'), await pages.overlay.inputValue('#second')], ['abc', 'xyz']);
    await act({ ref: nodeNamed(ctx, 'Account').ref, action: 'hover' });
    assert.equal(await pageText('overlay', '#hover-out'), 'hover: menu open');
    await refused('invalid_params', 'browser.node.action', { captureId: ctx.captureId, action: 'press', key: 'Hyper+x' });
    await refused('invalid_params', 'browser.node.action', { ref: nodeNamed(ctx, 'Account').ref, action: 'click', key: 'Enter' });
  });

  step('Enter that would send is held as the Send click; the person\'s Approve sends it', async () => {
    sites.clearSink();
    const ctx = await context('overlay');
    const message = labelled(ctx, 'Message').ref;
    await ok('browser.node.action', { ref: message, action: 'setValue', value: 'See you at 5' });
    const held = await ok('browser.node.action', { ref: message, action: 'press', key: 'Enter' });
    assert.equal(held.held, true, JSON.stringify(held));
    assert.equal(held.hold.kind, 'outward');
    assert.equal(held.hold.control, 'Send');
    assert.deepEqual(sites.sinkLog(), [], 'nothing was sent');
    const resolved = await engine.command({ cmd: 'resolve-hold', deviceId, holdId: held.hold.holdId, outcome: 'approve' }, { timeoutMs: 8000 });
    assert.ok(JSON.stringify(resolved).includes('done'), JSON.stringify(resolved));
    await pages.overlay.waitForURL(/\/adversarial\/sink\/chat/, { timeout: 5000 });
    assert.equal(sites.sinkLog().length, 1, 'sent once, after the person approved');
  });

  // A drag in a background tab: by the pointer onto the map; onto Trash, held as the delete it
  // is, kept as the drag of that card (its hold's action), which the person's Approve runs.
  step('drag: a tool onto the map by the pointer; a card onto Trash is held, and the person\'s Approve drops it', async () => {
    assert.equal(await tabActive(tabs.drag), false, 'a background tab');
    const ctx = await context('drag');
    await ok('browser.node.action', { ref: nodeNamed(ctx, 'buoy').ref, to: nodeNamed(ctx, 'Harbour map').ref, action: 'drag' });
    assert.equal(await pageText('drag', '#placed'), 'a buoy');
    const held = await ok('browser.node.action', { ref: nodeNamed(ctx, 'Order 4411 rope').ref, to: nodeNamed(ctx, 'Trash').ref, action: 'drag' });
    assert.equal(held.held, true, JSON.stringify(held));
    assert.equal(held.hold.control, 'Trash');
    assert.equal(held.hold.source, 'Order 4411 rope', 'the worker keeps what is dropped for the card');
    assert.equal(await pageText('drag', '#status'), '(nothing)', 'nothing dropped while held');
    const resolved = await engine.command({ cmd: 'resolve-hold', deviceId, holdId: held.hold.holdId, outcome: 'approve' }, { timeoutMs: 8000 });
    assert.ok(JSON.stringify(resolved).includes('done'), JSON.stringify(resolved));
    assert.equal(await pageText('drag', '#status'), 'Deleted Order 4411 rope.');
    await refused('invalid_params', 'browser.node.action', { ref: nodeNamed(ctx, 'buoy').ref, action: 'drag' });
  });

  step('browser.cookies: names and flags, never values', async () => {
    const { cookies } = await ok('browser.cookies', { tabId: tabs.cookies });
    const byName = Object.fromEntries(cookies.map((c) => [c.name, c]));
    assert.deepEqual(Object.keys(byName).sort(), ['fixture_pref', 'fixture_session']);
    const session = byName.fixture_session;
    assert.deepEqual([session.httpOnly, session.session, session.secure, session.path, session.valueLength],
      [true, true, false, '/', COOKIE_VALUE.length]);
    assert.equal(session.domain, '127.0.0.1');
    assert.equal(byName.fixture_pref.httpOnly, false);
    assert.equal(byName.fixture_pref.session, false);
    assert.equal(typeof byName.fixture_pref.expirationDate, 'number');
    assert.equal(byName.fixture_pref.valueLength, 'dark'.length);
    for (const c of cookies) assert.ok(!('value' in c));
    assert.ok(!JSON.stringify(cookies).includes('dark'), 'no cookie value in the reply');
  });
});
