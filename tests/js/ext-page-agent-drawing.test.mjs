// SPDX-License-Identifier: GPL-3.0-or-later
// The page agent on a flow editor's page (tests/fixtures/sites/drawing.html, shaped as Node-RED's
// editor is; tests/e2e/realsites-engine.test.mjs does the same on Node-RED itself): a drawing's
// nodes listed by their move cursor, a click that lands on the shape and moves the focus as a
// person's does, a double-click, an autofill trap that is not a sign-in form, a cover waited for while it fades,
// and a code editor filled through its own Select All and a paste.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { opts, open, ok, refused, run, byName } from './page-agent-harness.mjs';

const status = (page) => page.textContent('#status');

test('drawing.html: a drawing\'s nodes are listed by their move cursor; a click selects one and focuses its canvas, whose Enter opens it', opts, async () => {
  const page = await open('/drawing.html');
  // The trap at top −2000 px is no password a person is asked for: the page is read.
  const ctx = await ok(page, 'context', { captureId: 'd1' });
  assert.equal(ctx.auth.passwordField, false);
  const clickable = ctx.nodes.filter((n) => n.state.clickable).map((n) => n.name);
  // The nodes of the drawing, named by their labels, and the card below it; not the 16 px
  // icon's group (an icon is never walked into), nor the palette's item with the move cursor (in
  // HTML, a drag handle).
  assert.deepEqual(clickable, ['Every night at two', 'Format the report', 'Harbour trip ✕']);

  const node = ctx.nodes.find((n) => n.name === 'Format the report');
  await ok(page, 'action', { captureId: 'd1', ref: node.ref, action: 'click' });
  assert.equal(await status(page), 'Selected Format the report', 'the rect\'s own handler heard the press');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'canvas', 'the press focused the canvas');
  await ok(page, 'action', { captureId: 'd1', action: 'press', key: 'Enter' });
  assert.equal(await status(page), 'Editing Format the report');
  await page.close();
});

test('drawing.html: a click on the canvas lands on the drawing inside its focusable frame, where the page listens', opts, async () => {
  const page = await open('/drawing.html');
  const ctx = await ok(page, 'context', { captureId: 'd9' });
  await ok(page, 'action', { captureId: 'd9', ref: byName(ctx, 'Paste a node').ref, action: 'click' });
  assert.equal(await status(page), 'Placing Harbour lights');
  // The frame (focusable, no control) is what a snapshot lists; its centre is the drawing's.
  const canvas = ctx.nodes.find((n) => n.role === 'generic' && !n.state.clickable && n.tag === 'div');
  assert.ok(canvas, JSON.stringify(ctx.nodes.map((n) => [n.role, n.name, n.tag])));
  await ok(page, 'action', { captureId: 'd9', ref: canvas.ref, action: 'click' });
  assert.equal(await status(page), 'Placed Harbour lights', 'the svg\'s own handler heard the press');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'canvas', 'and the frame took the focus');
  // Only a drawing: a row's press is the row's, though an icon of its own is at its centre.
  const row = ctx.nodes.find((n) => n.role === 'row');
  await ok(page, 'action', { captureId: 'd9', ref: row.ref, action: 'click' });
  assert.equal(await status(page), 'Trip opened');
  await page.close();
});

test('drawing.html: a double-click opens a node; on a control that sends it is one click, held and approved as one', opts, async () => {
  const page = await open('/drawing.html');
  const ctx = await ok(page, 'context', { captureId: 'd1' });
  const node = ctx.nodes.find((n) => n.name === 'Every night at two');
  // A batch's wait for a text right after the act: the page says whether it shows once settled.
  const r = await ok(page, 'action', { captureId: 'd1', ref: node.ref, action: 'dblclick', untilText: 'opened every NIGHT' });
  assert.equal(r.action, 'dblclick');
  assert.equal(r.untilFound, true);
  assert.equal(await status(page), 'Opened Every night at two (2)');
  const send = ctx.nodes.find((n) => n.name === 'Send the report');
  const held = await ok(page, 'action', { captureId: 'd1', ref: send.ref, action: 'dblclick' });
  assert.equal(held.held?.kind, 'outward', JSON.stringify(held));
  assert.equal(await status(page), 'Opened Every night at two (2)', 'nothing was sent');
  const done = await ok(page, 'action', { captureId: 'd1', ref: send.ref, action: 'dblclick', expect: held.held.canonical });
  assert.equal(done.done, true, JSON.stringify(done));
  assert.equal(done.action, 'click', 'said as what ran: one click');
  assert.equal(await status(page), 'Report sent 1', 'approved, it sent once');
  assert.equal((await ok(page, 'action', { captureId: 'd1', ref: node.ref, action: 'click', untilText: 'Closed' })).untilFound, false);
  await page.close();
});

test('drawing.html: a double-click\'s second press goes only to the node its first found, still judged as it was', opts, async () => {
  const page = await open('/drawing.html');
  const ctx = await ok(page, 'context', { captureId: 'd1' });
  // The first click turns "Review order" into "Place order": the second is not made.
  const once = await ok(page, 'action', { captureId: 'd1', ref: ctx.nodes.find((n) => n.name === 'Review order').ref, action: 'dblclick' });
  assert.equal(once.action, 'click', 'the agent hears that one click ran');
  assert.equal(await page.textContent('#order'), 'Place order');
  assert.notEqual(await status(page), 'Order placed', 'nothing unjudged was pressed');
  // A card clickable by its look, with its own Delete at its centre: the card is clicked, never
  // the Delete nobody judged.
  const card = ctx.nodes.find((n) => n.state.clickable && n.name.startsWith('Harbour trip'));
  assert.ok(card, JSON.stringify(ctx.nodes.map((n) => n.name)));
  const r = await ok(page, 'action', { captureId: 'd1', ref: card.ref, action: 'click' });
  assert.equal(r.done, true, JSON.stringify(r));
  assert.equal(await status(page), 'Trip opened');
  await page.close();
});

test('drawing.html: a press the page cancels keeps the focus where it was; a press on what takes no focus takes it away', opts, async () => {
  const page = await open('/drawing.html');
  await page.evaluate(() => {
    const h1 = document.querySelector('h1');
    h1.setAttribute('onclick', '');
    // A menu that keeps the focus in its field cancels the press, as search dropdowns do.
    h1.addEventListener('mousedown', (e) => { if (window.__keep) e.preventDefault(); });
    window.__keep = true;
    document.getElementById('close-notice').focus();
  });
  const ctx = await ok(page, 'context', { captureId: 'd1' });
  const flows = ctx.nodes.find((n) => n.name === 'Flows');
  await ok(page, 'action', { captureId: 'd1', ref: flows.ref, action: 'click' });
  assert.equal(await page.evaluate(() => document.activeElement.id), 'close-notice', 'the cancelled press left the focus');
  await page.evaluate(() => { window.__keep = false; });
  await ok(page, 'action', { captureId: 'd1', ref: flows.ref, action: 'click' });
  assert.equal(await page.evaluate(() => document.activeElement.localName), 'body', 'focus left the button, as a person\'s click takes it');
  await page.close();
});

test('drawing.html: a password field no scrolling reaches is a trap, but one a scroll or a slide brings into view is a sign-in form', opts, async () => {
  const page = await open('/drawing.html');
  // In a scrolled box, above its view: the person scrolls the box up and sees it.
  await page.evaluate(() => {
    const box = document.createElement('div');
    box.id = 'box';
    box.style.cssText = 'position: absolute; top: 0; left: 700px; width: 200px; height: 100px; overflow: auto;';
    box.innerHTML = '<label>Password <input type="password"></label><div style="height: 3000px"></div>';
    document.body.append(box);
    box.scrollTop = 2500;
  });
  await refused(page, 'context', { captureId: 'd1' }, 'refused_floor');
  // Laid out above the page, slid into view by a transform: it is in view.
  await page.evaluate(() => {
    document.getElementById('box').remove();
    const panel = document.createElement('div');
    panel.id = 'panel';
    panel.style.cssText = 'position: absolute; top: -2000px; left: 0; transform: translateY(2100px);';
    panel.innerHTML = '<label>Password <input type="password"></label>';
    document.body.append(panel);
  });
  await refused(page, 'context', { captureId: 'd2' }, 'refused_floor');
  await page.evaluate(() => document.getElementById('panel').remove());
  assert.equal((await ok(page, 'context', { captureId: 'd3' })).auth.passwordField, false);
  // Only a trap's shape is exempt: placed far out on purpose, in a page laid out top to bottom
  // and left to right. A field just above the page, or a page that flows another way (vertical
  // writing, right to left), where scrolling may reach what lies before the origin, counts.
  for (const [how, undo] of [
    ['document.getElementById("trap").parentNode.style.top = "-50px"', 'document.getElementById("trap").parentNode.style.top = "-2000px"'],
    ['document.documentElement.style.writingMode = "vertical-rl"', 'document.documentElement.style.writingMode = ""'],
    ['document.body.dir = "rtl"', 'document.body.dir = ""'],
  ]) {
    await page.evaluate(how);
    await refused(page, 'context', { captureId: 'd4' }, 'refused_floor');
    await page.evaluate(undo);
  }
  assert.equal((await ok(page, 'context', { captureId: 'd5' })).auth.passwordField, false);
  await page.close();
});

test('drawing.html: a click waits for a cover that fades away, and is refused when the cover stays', opts, async () => {
  const page = await open('/drawing.html');
  const ctx = await ok(page, 'context', { captureId: 'd1' });
  const ref = (name) => ctx.nodes.find((n) => n.name === name).ref;
  await ok(page, 'action', { captureId: 'd1', ref: ref('Close the notice'), action: 'click' });
  // The notice is still fading (300 ms) over the button: the click waits for it, then lands.
  const r = await ok(page, 'action', { captureId: 'd1', ref: ref('Open details'), action: 'click' });
  assert.equal(r.done, true);
  assert.equal(await status(page), 'Clicked details');
  const err = await refused(page, 'action', { captureId: 'd1', ref: ref('Behind the wall'), action: 'click' }, 'target_denied');
  assert.match(err.message, /covered by div#wall/);
  assert.equal(await status(page), 'Clicked details', 'nothing was clicked through the wall');
  await page.close();
});

test('drawing.html: a fill of a code editor replaces its whole text through its Select All and a paste; an empty fill clears it', opts, async () => {
  const page = await open('/drawing.html');
  const ctx = await ok(page, 'context', { captureId: 'd1' });
  const code = ctx.nodes.find((n) => n.name === 'Code');
  assert.ok(code, 'the editor\'s textbox is listed');
  const text = 'function f() {\n    return [1, 2];\n}\n';
  await ok(page, 'action', { captureId: 'd1', ref: code.ref, action: 'setValue', value: text });
  assert.equal(await page.evaluate(() => window.__editor.doc), text, 'as typed: nothing kept, nothing indented or closed');
  assert.equal(await page.evaluate(() => document.querySelector('#code .lines').textContent), text.replace(/\n/g, ''));
  await ok(page, 'action', { captureId: 'd1', ref: code.ref, action: 'setValue', value: '' });
  assert.equal(await page.evaluate(() => window.__editor.doc), '');
  // CodeMirror 5's shape: the textarea is full size but clipped to nothing by its wrapper.
  const five = ctx.nodes.find((n) => n.name === 'Code five');
  await ok(page, 'action', { captureId: 'd1', ref: five.ref, action: 'setValue', value: 'first,\ndraft' });
  await ok(page, 'action', { captureId: 'd1', ref: five.ref, action: 'setValue', value: text });
  assert.equal(await page.evaluate(() => window.__editor5.doc), text, 'the second fill replaced the first');
  // A person's field that escapes its 0 px wrapper is filled as any field: whole, changed, and
  // with no editor's Control+A sent to it.
  const composer = ctx.nodes.find((n) => n.name === 'Composer');
  await ok(page, 'action', { captureId: 'd1', ref: composer.ref, action: 'setValue', value: 'New note' });
  assert.deepEqual(await page.evaluate(() => [document.getElementById('composer').value, window.__composerChanged,
    window.__composerKeys]), ['New note', true, 0]);
  await page.close();
});

test('drawing.html: a sign-in form an act brings up ends what a batch\'s wait may learn there', opts, async () => {
  const page = await open('/drawing.html');
  const ctx = await ok(page, 'context', { captureId: 'd1' });
  // The act is done and said; whether the text shows is not (the wait's own visit is refused).
  const r = await ok(page, 'action', { captureId: 'd1', ref: ctx.nodes.find((n) => n.name === 'Check my account').ref,
    action: 'click', untilText: 'Enter your password' });
  assert.equal(r.done, true);
  assert.equal(r.untilFound, false);
  await refused(page, 'waitText', { text: 'Enter your password', timeoutMs: 1000 }, 'refused_floor');
  // A wait under way when a password field appears ends refused, not found.
  const page2 = await open('/drawing.html');
  const waiting = run(page2, 'waitText', { text: 'Enter your password', timeoutMs: 5000 });
  await page2.evaluate(() => document.getElementById('reauth').click());
  const w = await waiting;
  assert.equal(w.ok, false, JSON.stringify(w));
  assert.equal(w.error.code, 'refused_floor');
  await page.close();
  await page2.close();
});
