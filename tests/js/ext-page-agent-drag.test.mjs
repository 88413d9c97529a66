// SPDX-License-Identifier: GPL-3.0-or-later
// The page agent's drag (content/page-pointer.js) in Chromium, on widgets-drag.html: what can be
// dragged is listed as such; a board's card moves by HTML's drag and drop, a palette's tool by
// the pointer; a drop onto Trash is held as the delete it is, and its Approve runs that very
// drag; a drop where the page takes none says so; a drag a person could not make is refused.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { opts, open, ok, refused, byName } from './page-agent-harness.mjs';

const text = (page, selector) => page.textContent(selector);

test('widgets-drag.html: cards and tools are listed as draggable, by their markup or their cursor', opts, async () => {
  const page = await open('/widgets-drag.html');
  const ctx = await ok(page, 'context', { captureId: 'd0' });
  for (const name of ['Repaint berth B7', 'Order 4411 rope', 'buoy', 'crane']) {
    const n = byName(ctx, name);
    assert.equal(n.state.draggable, true, `${name}: ${JSON.stringify(n)}`);
    assert.equal(n.state.clickable, undefined, `${name} is not clickable by its look`);
  }
  // The zones are where things drop, not things to drag.
  assert.ok(!ctx.nodes.some((n) => n.name === 'Trash' && n.state.draggable));
  await page.close();
});

test('widgets-drag.html: a card moves to another column by HTML drag and drop, a write a plan covers', opts, async () => {
  const page = await open('/widgets-drag.html');
  const ctx = await ok(page, 'context', { captureId: 'd1' });
  const card = byName(ctx, 'Repaint berth B7').ref;
  // Dropped on the column's button, as a person drops it in the column: the column takes it. The
  // drop is judged by its target's words ("Add a card …"): a write, held with no plan …
  const to = byName(ctx, 'Add a card to Done').ref;
  const held = await ok(page, 'action', { captureId: 'd1', ref: card, to, action: 'drag' });
  assert.equal(held.held?.kind, 'write', JSON.stringify(held));
  assert.equal(await text(page, '#status'), '(nothing)');
  // … and done under a plan for this site, which says the step it was.
  const host = new URL(page.url()).hostname;
  const r = await ok(page, 'action', { captureId: 'd1', ref: card, to, action: 'drag', allow: { planId: 'plan-1', sites: [host], step: 1, of: 1 } });
  assert.equal(r.done, true, JSON.stringify(r));
  assert.equal(r.plan?.planId, 'plan-1', JSON.stringify(r));
  assert.equal(r.plan.opens, undefined, 'a drop is the write itself, not an editor opening: it spends its step');
  assert.equal(r.changes.dropped, undefined, 'the page took the drop');
  assert.equal(r.changes.settled, true);
  assert.equal(await text(page, '#status'), 'Moved Repaint berth B7 to Done.');
  assert.equal(await page.evaluate(() => document.querySelector('#done #c1') !== null), true);
  await page.close();
});

test('widgets-drag.html: a card dropped on a zone in a shadow root', opts, async () => {
  const page = await open('/widgets-drag.html');
  const ctx = await ok(page, 'context', { captureId: 'd5' });
  const r = await ok(page, 'action', { captureId: 'd5', ref: byName(ctx, 'Repaint berth B7').ref, to: byName(ctx, 'Shelf').ref, action: 'drag' });
  assert.equal(r.done, true, JSON.stringify(r));
  assert.equal(await text(page, '#status'), 'Shelved Repaint berth B7.');
  await page.close();
});

test('widgets-drag.html: a palette tool is put down on the map by the pointer', opts, async () => {
  const page = await open('/widgets-drag.html');
  const ctx = await ok(page, 'context', { captureId: 'd2' });
  const r = await ok(page, 'action', { captureId: 'd2', ref: byName(ctx, 'crane').ref, to: byName(ctx, 'Harbour map').ref, action: 'drag' });
  assert.equal(r.done, true, JSON.stringify(r));
  assert.equal(await text(page, '#placed'), 'a crane');
  assert.equal(await page.locator('#canvas .placed').count(), 1);
  assert.equal(await page.locator('.ghost').count(), 0, 'the release ended the drag');
  await page.close();
});

test('widgets-drag.html: a drop onto Trash is held as a delete; its Approve runs the same drag', opts, async () => {
  const page = await open('/widgets-drag.html');
  const ctx = await ok(page, 'context', { captureId: 'd3' });
  const card = byName(ctx, 'Order 4411 rope').ref;
  const trash = byName(ctx, 'Trash').ref;
  const held = await ok(page, 'action', { captureId: 'd3', ref: card, to: trash, action: 'drag' });
  assert.ok(held.held, JSON.stringify(held));
  assert.equal(held.held.reason, 'drop');
  assert.notEqual(held.held.kind, 'none');
  assert.equal(held.held.control, 'Trash', 'the card names where it drops');
  assert.equal(held.held.source, 'Order 4411 rope', 'and what');
  assert.ok(held.held.canonical.includes('"source":"Order 4411 rope"'), 'both ends are what the person approves');
  assert.equal(held.heldRef, trash, 'approving acts on the drop target');
  assert.equal(held.heldAction, `drag:${card}`, 'and drags the same card');
  assert.equal(await page.locator('#c2').count(), 1, 'nothing was deleted while held');
  assert.equal(await text(page, '#status'), '(nothing)');

  // Another card onto the same Trash is another question: the approval does not carry over.
  const other = byName(ctx, 'Repaint berth B7').ref;
  const changed = await ok(page, 'action', { captureId: 'd3', ref: trash, action: `drag:${other}`, expect: held.held.canonical });
  assert.equal(changed.changed, true, JSON.stringify(changed));
  assert.equal(await page.locator('#c1').count(), 1);

  const done = await ok(page, 'action', { captureId: 'd3', ref: trash, action: held.heldAction, expect: held.held.canonical });
  assert.equal(done.done, true, JSON.stringify(done));
  assert.equal(await page.locator('#c2').count(), 0, 'the approved drop deleted the card');
  assert.equal(await text(page, '#status'), 'Deleted Order 4411 rope.');
  await page.close();
});

test('widgets-drag.html: a drop where the page takes none says so; drags a person could not make are refused', opts, async () => {
  const page = await open('/widgets-drag.html');
  const ctx = await ok(page, 'context', { captureId: 'd4' });
  const card = byName(ctx, 'Repaint berth B7').ref;
  // The map takes tools by the pointer, and no card: the page does not take that drop.
  const r = await ok(page, 'action', { captureId: 'd4', ref: card, to: byName(ctx, 'Harbour map').ref, action: 'drag' });
  assert.equal(r.changes.dropped, false, JSON.stringify(r));
  assert.equal(await page.evaluate(() => document.querySelector('#todo #c1') !== null), true, 'the card stayed');
  await refused(page, 'action', { captureId: 'd4', ref: card, to: card, action: 'drag' }, 'invalid_params');
  // The folders say nothing by their words, but a drop at their centre lands on "Delete forever":
  // refused, so that the agent drops on that button, which is judged (held as the delete).
  const folders = await refused(page, 'action', { captureId: 'd4', ref: card, to: byName(ctx, 'Folders').ref, action: 'drag' }, 'target_denied');
  assert.match(folders.message, /drop point is on button#purge \("Delete forever"\)/);
  const purge = await ok(page, 'action', { captureId: 'd4', ref: card, to: byName(ctx, 'Delete forever').ref, action: 'drag' });
  assert.equal(purge.held?.reason, 'drop', JSON.stringify(purge));
  // A page that puts a control that deletes at the drop point once the drag started: judged again
  // at the drop, the drag ends with nothing dropped (under a plan: the target itself is a write).
  const host = new URL(page.url()).hostname;
  const moved = await refused(page, 'action', { captureId: 'd4', ref: byName(ctx, 'Archive the old notices').ref,
    to: byName(ctx, 'Add a card to Done').ref, action: 'drag', allow: { planId: 'plan-1', sites: [host] } }, 'target_denied');
  assert.match(moved.message, /put a control under the drop point during the drag; the drag ended with nothing dropped/);
  assert.equal(await page.locator('.card').count(), 4, 'nothing was deleted');
  // A card whose centre is its own Delete button: the press would be that button's, so it is no
  // place to start a drag (a press and release there may be its click).
  const card4 = ctx.nodes.find((n) => n.tag === 'div' && n.name === 'Delete this card');
  const inCard = await refused(page, 'action', { captureId: 'd4', ref: card4.ref, to: byName(ctx, 'Harbour map').ref, action: 'drag' }, 'target_denied');
  assert.match(inCard.message, /would be pressed on button#c4-delete/);
  assert.equal(await page.locator('#c4').count(), 1, 'the card is still there');
  // What is pressed is judged too: a control a click on would hold is no thing to drag.
  const pressed = await refused(page, 'action', { captureId: 'd4', ref: byName(ctx, 'Delete forever').ref, to: byName(ctx, 'Harbour map').ref, action: 'drag' }, 'target_denied');
  assert.match(pressed.message, /not something to drag/);
  assert.equal(await text(page, '#status'), '(nothing)', 'nothing was dropped or deleted');
  await refused(page, 'action', { captureId: 'd4', ref: card, action: 'drag' }, 'invalid_params');
  // Behind a modal, the map cannot be reached.
  await page.evaluate(() => {
    const d = document.createElement('dialog');
    d.textContent = 'Busy';
    document.body.append(d);
    d.showModal();
  });
  const e = await refused(page, 'action', { captureId: 'd4', ref: byName(ctx, 'buoy').ref, to: byName(ctx, 'Harbour map').ref, action: 'drag' }, 'target_denied');
  assert.match(e.message, /modal|dialog|covered|inert/i);
  assert.equal(await text(page, '#placed'), '(nothing)');
  await page.close();
});

// widgets-drag-traps.html: drops whose meaning is not in the target the agent names.
test('widgets-drag-traps.html: a drop goes to the target judged, not to an unjudged zone inside it', opts, async () => {
  const page = await open('/widgets-drag-traps.html');
  const ctx = await ok(page, 'context', { captureId: 't1' });
  // The Inbox says nothing of deleting; the plain zone at its centre deletes what lands on it, and
  // is nothing a click would press. The drop goes to the Inbox, which takes it.
  const r = await ok(page, 'action', { captureId: 't1', ref: byName(ctx, 'Ferry timetable').ref, to: byName(ctx, 'Inbox').ref, action: 'drag' });
  assert.equal(r.done, true, JSON.stringify(r));
  assert.equal(await text(page, '#status'), 'Moved Ferry timetable to Inbox.');
  assert.equal(await page.locator('#c1').count(), 1, 'the card was not deleted');
  await page.close();
});

test('widgets-drag-traps.html: what the browser would drag, the release and an approved drop are judged too', opts, async () => {
  const page = await open('/widgets-drag-traps.html');
  const ctx = await ok(page, 'context', { captureId: 't2' });
  // An item inside a crate the browser drags whole: the drag would carry the crate, not the item named.
  const crate = await refused(page, 'action', { captureId: 't2', ref: byName(ctx, 'Lantern').ref, to: byName(ctx, 'Inbox').ref, action: 'drag' }, 'target_denied');
  assert.match(crate.message, /would drag div#crate\b.*"Crate 7".*around the element named/);
  assert.equal(await page.evaluate(() => document.getElementById('crate').parentElement.id), '', 'the crate did not move');

  // A tile the page lays under the pointer by its Remove button: the release is not let go on it.
  const tile = byName(ctx, 'Tile 5');
  assert.ok(tile, 'the tile is listed');
  const placed = await refused(page, 'action', { captureId: 't2', ref: tile.ref, to: byName(ctx, 'Board').ref, action: 'drag' }, 'target_denied');
  assert.match(placed.message, /the button was let go where the drag started/);
  assert.equal(await page.locator('#tile').count(), 1, 'the tile was not removed');
  assert.notEqual(await text(page, '#status'), 'Removed the tile.');

  // Trash is held as the delete it is; the person approves that drop, not the form its handler
  // also submits: the approved drop runs, and the submission is stopped.
  const held = await ok(page, 'action', { captureId: 't2', ref: byName(ctx, 'Berth plan').ref, to: byName(ctx, 'Trash').ref, action: 'drag' });
  assert.equal(held.held?.reason, 'drop', JSON.stringify(held));
  const url = page.url();
  const e = await refused(page, 'action', { captureId: 't2', ref: held.heldRef, action: held.heldAction, expect: held.held.canonical }, 'target_denied');
  assert.match(e.message, /the drop would submit a form: it was stopped and nothing was sent/);
  assert.equal(page.url(), url, 'the form was not sent');
  await page.close();
});
