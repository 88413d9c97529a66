// SPDX-License-Identifier: GPL-3.0-or-later
// The page agent on real editors and widgets: frames that are part of the page (srcdoc, a
// script-written about:blank editor), a React-style controlled input, contenteditable editors
// (one that keeps its own model), a textarea in a shadow root, select / checkbox / radio / date,
// keys (shortcuts, Tab, Escape, Enter that submits or sends), typing, and a hover menu.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { opts, server, open, ok, refused, byName } from './page-agent-harness.mjs';
import { deadline } from '../lib/until.mjs';

const field = (ctx, label) => {
  const f = ctx.forms.flatMap((x) => x.fields).find((x) => x.label === label);
  assert.ok(f, `field "${label}" in ${JSON.stringify(ctx.forms.flatMap((x) => x.fields).map((x) => x.label))}`);
  return f;
};
const text = (page, selector) => page.textContent(selector);

test('widgets-frames.html: srcdoc and script-written about:blank frames are read and acted on as the page', opts, async () => {
  const page = await open('/widgets-frames.html');
  const ctx = await ok(page, 'context', { captureId: 'f1' });
  const names = ctx.nodes.map((n) => n.name);
  for (const n of ['Srcdoc field', 'Srcdoc button', 'Type the text for this note']) assert.ok(names.includes(n), `${n} in ${JSON.stringify(names)}`);
  assert.ok(!names.includes('Sandboxed button'), 'an opaque sandbox is not this page');
  assert.match(ctx.text, /Inside the srcdoc frame\./, 'the frame\'s text is the page\'s text');
  assert.ok(!/Opaque sandbox/.test(ctx.text));
  const frames = Object.fromEntries(ctx.iframes.map((f) => [f.title, f]));
  assert.equal(frames['Srcdoc frame'].inline, true);
  assert.equal(frames['Body editor'].inline, true);
  assert.equal(frames['Body editor'].docUrl, `${server.originA}/widgets-frames.html`, 'document.open() gave it the page\'s URL');
  assert.equal(frames['Sandboxed frame'].inline, undefined);
  assert.equal(frames['Cross-origin frame'].inline, undefined);

  // Its nodes' boxes are in the page's viewport, as a person sees them.
  const box = (await ok(page, 'inspect', { captureId: 'f1', ref: byName(ctx, 'Srcdoc button').ref })).bounds;
  const real = await page.frameLocator('#srcdoc-frame').locator('#srcdoc-button').boundingBox();
  assert.ok(Math.abs(box.x - real.x) <= 1 && Math.abs(box.y - real.y) <= 1, `${JSON.stringify(box)} vs ${JSON.stringify(real)}`);
  await ok(page, 'action', { captureId: 'f1', ref: byName(ctx, 'Srcdoc button').ref, action: 'click' });
  assert.equal(await page.frameLocator('#srcdoc-frame').locator('#srcdoc-status').textContent(), 'Srcdoc button clicked.');
  await ok(page, 'action', { captureId: 'f1', ref: byName(ctx, 'Type the text for this note').ref, action: 'setValue', value: 'Hello from the agent' });
  assert.equal(await text(page, '#preview'), 'Hello from the agent', 'the page heard the body editor\'s input');
  await ok(page, 'action', { captureId: 'f1', ref: byName(ctx, 'Srcdoc field').ref, action: 'type', text: 'abc' });
  assert.equal(await page.frameLocator('#srcdoc-frame').locator('#srcdoc-input').inputValue(), 'abc');
  const again = await ok(page, 'context', { captureId: 'f2' });
  assert.equal(byName(again, 'Srcdoc field').state.focused, true, 'focus is seen through the frame');
  assert.equal(byName(again, 'Srcdoc button').ref, byName(ctx, 'Srcdoc button').ref, 'refs in frames keep their names');

  // A frame that is part of the page cannot be covered by the page unnoticed.
  await page.evaluate(() => {
    const f = document.getElementById('srcdoc-frame').getBoundingClientRect();
    const cover = Object.assign(document.createElement('div'), { id: 'cover' });
    Object.assign(cover.style, { position: 'absolute', left: `${f.left}px`, top: `${f.top + scrollY}px`, width: `${f.width}px`, height: `${f.height}px`, background: 'rgba(0,0,0,.1)' });
    document.body.append(cover);
  });
  const covered = await refused(page, 'action', { captureId: 'f2', ref: byName(again, 'Srcdoc button').ref, action: 'click' }, 'target_denied');
  assert.match(covered.message, /frame is covered by div#cover/);

  // A password field in such a frame makes the whole page a sign-in page.
  await page.evaluate(() => {
    const d = document.getElementById('srcdoc-frame').contentDocument;
    d.body.append(Object.assign(d.createElement('input'), { type: 'password' }));
  });
  await refused(page, 'context', { captureId: 'f3' }, 'refused_floor');
  await refused(page, 'action', { captureId: 'f2', ref: byName(again, 'Srcdoc field').ref, action: 'focus' }, 'refused_floor');
  await page.close();
});

test('widgets-editors.html: fill reaches a controlled input, editors, a shadow textarea and choices', opts, async () => {
  const page = await open('/widgets-editors.html');
  const ctx = await ok(page, 'context', { captureId: 'w1' });
  const act = (ref, action, extra) => ok(page, 'action', { captureId: 'w1', ref, action, ...extra });

  await act(field(ctx, 'Controlled name').ref, 'setValue', { value: 'Ada' });
  assert.equal(await text(page, '#react-model'), 'model: "Ada"', 'the framework took the value');
  assert.equal(await page.inputValue('#react-name'), 'Ada');

  await act(byName(ctx, 'Plain editor').ref, 'setValue', { value: 'Plain words' });
  assert.equal(await text(page, '#plain-editable'), 'Plain words');
  await act(byName(ctx, 'Model editor').ref, 'setValue', { value: 'Kept in the model' });
  assert.equal(await text(page, '#model-out'), 'model editor: "Kept in the model"', 'the editor took it from beforeinput');
  await act(byName(ctx, 'Model editor').ref, 'setValue', { value: 'Replaced' });
  assert.equal(await text(page, '#model-out'), 'model editor: "Replaced"', 'a second fill replaces, as selecting all and typing does');

  await act(field(ctx, 'Shadow note').ref, 'setValue', { value: 'In the shadow' });
  assert.equal(await text(page, '#shadow-out'), 'shadow: "In the shadow"');

  await act(field(ctx, 'Country').ref, 'setValue', { value: 'Germany' });
  assert.match(await text(page, '#choices-out'), /country=de /, 'chosen by its label');
  await act(field(ctx, 'Country').ref, 'setValue', { value: 'fr' });
  assert.match(await text(page, '#choices-out'), /country=fr /, 'or by its value');
  const none = await refused(page, 'action', { captureId: 'w1', ref: field(ctx, 'Country').ref, action: 'setValue', value: 'Spain' }, 'invalid_params');
  assert.match(none.message, /"France"/, 'the refusal names the options');
  await refused(page, 'action', { captureId: 'w1', ref: field(ctx, 'Country').ref, action: 'setValue', value: 'Japan' }, 'target_denied');
  await act(field(ctx, 'Agree to the terms').ref, 'setValue', { value: 'true' });
  await act(field(ctx, 'Large').ref, 'setValue', { value: 'true' });
  await act(field(ctx, 'Start date').ref, 'setValue', { value: '2026-05-31' });
  assert.equal(await text(page, '#choices-out'), 'choices: country=fr agree=true size=l start=2026-05-31');
  const date = await refused(page, 'action', { captureId: 'w1', ref: field(ctx, 'Start date').ref, action: 'setValue', value: '31/05/2026' }, 'invalid_params');
  assert.match(date.message, /YYYY-MM-DD/);
  assert.equal(await page.inputValue('#start'), '2026-05-31', 'a date it could not read left the field as it was');
  await page.close();
});

test('tables.html: a data table\'s rows are listed, named by their cells, and a click picks one', opts, async () => {
  const page = await open('/tables.html');
  const ctx = await ok(page, 'context', { captureId: 't1' });
  // Not the header's row, not the row with a link of its own (the link is listed), not the
  // layout table's row.
  assert.deepEqual(ctx.nodes.filter((n) => n.role === 'row').map((n) => n.name), ['Sea Otter A3 9.5', 'Kittiwake B7 11.2']);
  assert.ok(byName(ctx, 'C2'), 'the link in the third row');
  await ok(page, 'action', { captureId: 't1', ref: byName(ctx, 'Kittiwake B7 11.2').ref, action: 'click' });
  assert.equal(await text(page, '#status'), 'Picked Kittiwake', 'the table\'s own listener heard it');
  await page.close();
});

test('widgets-editors.html: a slider says where its thumb is; the arrows move it, a fill sets a range', opts, async () => {
  const page = await open('/widgets-editors.html');
  const look = async (id) => {
    const ctx = await ok(page, 'context', { captureId: id });
    return { ctx, fenders: byName(ctx, 'Fenders'), volume: byName(ctx, 'Volume') };
  };
  let { fenders, volume } = await look('s1');
  // The thumb's number, never its aria-valuetext (the page's own words); a range's bounds.
  assert.deepEqual([fenders.role, fenders.state], ['slider', { value: '2', min: '0', max: '10' }]);
  assert.deepEqual([volume.role, volume.state], ['slider', { value: '5', min: '0', max: '11' }]);
  for (let i = 0; i < 2; i++) await ok(page, 'action', { captureId: 's1', ref: fenders.ref, action: 'press', key: 'ArrowRight' });
  await ok(page, 'action', { captureId: 's1', ref: volume.ref, action: 'setValue', value: '8' });
  ({ fenders, volume } = await look('s2'));
  assert.equal(fenders.state.value, '4');
  assert.equal(volume.state.value, '8');
  assert.equal(await page.inputValue('#volume'), '8');
  // Past its end the range would stop at 11: refused, not set to something else.
  const over = await refused(page, 'action', { captureId: 's2', ref: volume.ref, action: 'setValue', value: '20' }, 'invalid_params');
  assert.match(over.message, /within its min, max and step/);
  assert.equal(await page.inputValue('#volume'), '8', 'left as it was');
  await page.close();
});

test('widgets-editors.html: a search opens on focus and lists on input; keys and typing', opts, async () => {
  const page = await open('/widgets-editors.html');
  const ctx = await ok(page, 'context', { captureId: 'k1' });
  const act = (ref, action, extra) => ok(page, 'action', { captureId: 'k1', ref, action, ...extra });

  await act(field(ctx, 'Search notes').ref, 'setValue', { value: 'Hello' });
  assert.equal(await page.isVisible('#search-popup'), true, 'the results opened');
  assert.equal(await text(page, '#search-results'), '3 matches for Hello');
  await act(undefined, 'press', { key: 'Escape' });       // the focused element: the search box
  assert.equal(await page.isVisible('#search-popup'), false);
  assert.equal(await text(page, '#status'), 'Search closed.');

  // Control+s saves: a write, held as a Save button's click would be; approved, the same press.
  const save = await act(undefined, 'press', { key: 'Control+s' });
  assert.equal(save.held.kind, 'write', JSON.stringify(save));
  assert.equal(save.held.control, 'Control+s');
  assert.equal(save.held.word, 'save', 'the card says it saves');
  assert.equal(save.held.source, undefined);
  assert.equal(save.heldAction, 'press:Control+s');
  assert.equal(await text(page, '#status'), 'Search closed.', 'not pressed yet');
  await act(save.heldRef, save.heldAction, { expect: save.held.canonical });
  assert.equal(await text(page, '#status'), 'Saved with Control+s.', 'a shortcut matched by keyCode and ctrlKey');
  const planned = await act(undefined, 'press', { key: 'Control+s', allow: { planId: 'p1', sites: ['127.0.0.1'], step: 1, of: 1 } });
  assert.equal(planned.done, true, 'a plan covers the save key');

  await act(field(ctx, 'First field').ref, 'type', { text: 'Hi!' });
  assert.equal(await page.inputValue('#first'), 'Hi!');
  await act(undefined, 'press', { key: 'Backspace' });
  assert.equal(await page.inputValue('#first'), 'Hi');
  await act(undefined, 'press', { key: 'Tab' });
  assert.equal(await page.evaluate(() => document.activeElement.id), 'second');
  await act(undefined, 'type', { text: 'next' });
  assert.equal(await page.inputValue('#second'), 'next');
  await act(undefined, 'press', { key: 'Shift+Tab' });
  assert.equal(await page.evaluate(() => document.activeElement.id), 'first');

  await act(field(ctx, 'Find').ref, 'setValue', { value: 'notes' });
  await act(field(ctx, 'Find').ref, 'press', { key: 'Enter' });
  assert.equal(await text(page, '#status'), 'Found notes.', 'Enter submitted the form through its default button');

  await refused(page, 'action', { captureId: 'k1', action: 'press', key: 'Hyper+x' }, 'invalid_params');
  await refused(page, 'action', { captureId: 'k1', action: 'press', key: 'Return' }, 'invalid_params');
  await page.close();
});

test('widgets-editors.html: Enter that would send is held as the Send click; approving sends', opts, async () => {
  server.clearSink();
  const page = await open('/widgets-editors.html');
  const ctx = await ok(page, 'context', { captureId: 's1' });
  const message = field(ctx, 'Message').ref;
  await ok(page, 'action', { captureId: 's1', ref: message, action: 'setValue', value: 'See you at 5' });
  await refused(page, 'action', { captureId: 's1', ref: message, action: 'type', text: 'line\nbreak' }, 'invalid_params');
  for (const key of ['Enter', 'Control+Enter']) {
    const held = await ok(page, 'action', { captureId: 's1', ref: message, action: 'press', key });
    assert.equal(held.held.kind, 'outward', `${key}: ${JSON.stringify(held)}`);
    assert.equal(held.held.control, 'Send');
    assert.equal(held.heldRef, byName(ctx, 'Send').ref, 'the hold is about the Send button');
    assert.equal(held.heldAction, 'click');
  }
  assert.equal(await page.inputValue('#message'), 'See you at 5', 'no line break went in');
  assert.deepEqual(server.sinkLog(), [], 'nothing was sent');
  // Shift+Enter is a line break, not a send (the page's own handler lets it through).
  await ok(page, 'action', { captureId: 's1', ref: message, action: 'press', key: 'Shift+Enter' });
  assert.equal(await page.inputValue('#message'), 'See you at 5\n');
  await page.close();
});

test('widgets-editors.html: Enter that posts a form with no button is held by its submission; approving presses it again',
  opts, async () => {
  server.clearSink();
  const page = await open('/widgets-editors.html');
  const ctx = await ok(page, 'context', { captureId: 'p1' });
  const title = field(ctx, 'Note title').ref;
  await ok(page, 'action', { captureId: 'p1', ref: title, action: 'setValue', value: 'Groceries' });
  const held = await ok(page, 'action', { captureId: 'p1', ref: title, action: 'press', key: 'Enter' });
  assert.equal(held.held.reason, 'form-submit', JSON.stringify(held));
  assert.deepEqual(held.held.fields, [{ name: 'Note title', value: 'Groceries' }]);
  assert.equal(held.heldAction, 'press:Enter');
  assert.equal(held.heldRef, title);
  assert.deepEqual(server.sinkLog(), [], 'nothing was sent');
  // Something else than what was held: not sent.
  await page.fill('#note-title', 'Groceries and more');
  assert.equal((await ok(page, 'action', { captureId: 'p1', ref: title, action: held.heldAction, expect: held.held.canonical })).changed, true);
  await page.fill('#note-title', 'Groceries');
  // The person's Approve (the hold runs its action with the canonical it showed). What the
  // person notices is the note posted, once. The page's answer (navigating:true) races the POST
  // that takes its document away, so nothing waits on the old document across that navigation:
  // a raw DevTools Runtime.evaluate starts the run and returns at once (Playwright's evaluate
  // can follow a navigation its call started: the suspect for a run that hung in CI), and the
  // answer, if it comes before the document goes, reaches a binding Playwright keeps.
  const answers = [];
  await deadline(page.exposeFunction('__chaperoneAnswer', (v) => { answers.push(v); }),
                 { what: 'the answer binding' });
  const navigated = page.waitForEvent('framenavigated', { predicate: (f) => f === page.mainFrame(), timeout: 15000 });
  const cdp = await deadline(page.context().newCDPSession(page), { what: 'a DevTools session on the page' });
  const args = JSON.stringify({ captureId: 'p1', ref: held.heldRef, action: held.heldAction, expect: held.held.canonical });
  const started = await deadline(cdp.send('Runtime.evaluate', {
    expression: `void globalThis.__chaperonePage.run('action', ${args}).then((v) => globalThis.__chaperoneAnswer(v))`,
    awaitPromise: false,
  }), { what: 'DevTools to start the approved press' });
  assert.equal(started.exceptionDetails, undefined, JSON.stringify(started.exceptionDetails));
  // The document may already be going: a detach that does not answer is not the test's business.
  await deadline(cdp.detach(), { timeout: 5000, what: 'the DevTools session to detach' }).catch(() => {});
  const sent = await server.sinkWait((e) => e.path.endsWith('/note'), { what: 'the note posted' });
  assert.equal(sent.method, 'POST');
  await navigated;
  for (const v of answers) {
    assert.equal(v.value?.done, true, JSON.stringify(v));
    assert.equal(v.value.changes.navigating, true, JSON.stringify(v));
  }
  assert.equal(server.sinkLog().filter((e) => e.path.endsWith('/note')).length, 1, 'posted once');
  // Everything the person notices is checked. Closing the tab after a navigation that the
  // DevTools session above saw start has hung once in about 40 runs here (Playwright's close,
  // after every assertion passed): bounded, and left to the browser context's own close.
  await deadline(page.close(), { timeout: 5000, what: 'the page to close' }).catch(() => {});
});

test('widgets-editors.html: hover opens a menu from script and moving away closes it', opts, async () => {
  const page = await open('/widgets-editors.html');
  const ctx = await ok(page, 'context', { captureId: 'h1' });
  await ok(page, 'action', { captureId: 'h1', ref: byName(ctx, 'Account').ref, action: 'hover' });
  assert.equal(await text(page, '#hover-out'), 'hover: menu open');
  const open2 = await ok(page, 'context', { captureId: 'h2' });
  assert.ok(open2.nodes.some((n) => n.name === 'Profile' && !n.state.hidden), 'the menu\'s items are there to click');
  await ok(page, 'action', { captureId: 'h2', ref: byName(open2, 'Profile').ref, action: 'hover' });
  assert.equal(await text(page, '#hover-out'), 'hover: menu open', 'moving inside the menu keeps it open');
  await ok(page, 'action', { captureId: 'h2', ref: field(open2, 'First field').ref, action: 'hover' });
  assert.equal(await text(page, '#hover-out'), 'hover: menu closed');
  await page.close();
});

// Etherpad's editor (tests/realsites: the pad task): the body of a frame in a frame, its role
// "application". An agent sees a textbox named as its frame, puts the caret at the end with
// Control+End, and types lines; Enter there is a new paragraph, never the chat's Send.
test('widgets-pad.html: a pad whose editor is a frame\'s body is typed into at the caret, Enter a new paragraph', opts, async () => {
  const page = await open('/widgets-pad.html');
  await page.waitForFunction(() => document.getElementById('pad').textContent !== '(loading)', null, { timeout: 10000 });
  const ctx = await ok(page, 'context', { captureId: 'd1' });
  const pad = byName(ctx, 'pad');
  assert.equal(pad.role, 'textbox', 'an editable body is a textbox, whatever role the page gives it');
  assert.ok(ctx.iframes.filter((f) => f.inline).length >= 2, `both frames are part of the page: ${JSON.stringify(ctx.iframes)}`);
  const act = (action, extra) => ok(page, 'action', { captureId: 'd1', action, ...extra });

  await act('click', { ref: pad.ref });
  const after = await ok(page, 'context', { captureId: 'd2' });
  assert.equal(byName(after, 'pad').state.focused, true, 'focus is seen in the frame in a frame');
  await act('press', { key: 'Control+End' });
  const typed = await act('type', { text: '\nTuesday: berth B7 closed.' });
  assert.equal(typed.held, undefined, `a line break in a pad is no send: ${JSON.stringify(typed)}`);
  assert.equal(await text(page, '#pad'), 'Harbour log|Monday: the ferry left at 06:40.|Tuesday: berth B7 closed.');
  // A wait for words (a snapshot's `until`) reads the frames of the page too: these lines run on
  // only in the pad (the page's own copy has a "|" between them).
  assert.deepEqual(await ok(page, 'waitText', { text: 'left at 06:40. Tuesday', timeoutMs: 3000 }), { found: true });
  assert.deepEqual(await ok(page, 'waitText', { text: 'private schedule', timeoutMs: 300 }), { found: false },
    'a hidden frame\'s words are not shown');
  await act('press', { key: 'Control+Home' });
  await act('type', { text: 'Log: ' });
  assert.equal(await text(page, '#pad'), 'Log: Harbour log|Monday: the ferry left at 06:40.|Tuesday: berth B7 closed.');
  await act('press', { key: 'End' });
  const enter = await act('press', { key: 'Enter' });
  assert.equal(enter.held, undefined, `Enter in a pad is no send: ${JSON.stringify(enter)}`);
  await act('type', { text: 'Wednesday' });
  assert.equal(await text(page, '#pad'), 'Log: Harbour log|Wednesday|Monday: the ferry left at 06:40.|Tuesday: berth B7 closed.');
  assert.equal(await text(page, '#sent'), '(nothing)');

  // The chat box beside it still sends on Enter: held as its Send button's click.
  const chat = await ok(page, 'context', { captureId: 'd3' });
  await ok(page, 'action', { captureId: 'd3', ref: byName(chat, 'Chat message').ref, action: 'type', text: 'hello' });
  const held = await ok(page, 'action', { captureId: 'd3', ref: byName(chat, 'Chat message').ref, action: 'press', key: 'Enter' });
  assert.equal(held.held?.control, 'Send', JSON.stringify(held));
  assert.equal(await text(page, '#sent'), '(nothing)');

  // Etherpad's chat has no Send button: its Enter sends, named by the field ("Write your message
  // here"), so it is held as a send, the message on the card; approved, the same press sends it.
  const box = byName(chat, 'Write your message here').ref;
  await ok(page, 'action', { captureId: 'd3', ref: box, action: 'type', text: 'Ferry delayed by fog' });
  const send = await ok(page, 'action', { captureId: 'd3', ref: box, action: 'press', key: 'Enter' });
  assert.equal(send.held?.kind, 'outward', JSON.stringify(send));
  assert.equal(send.held.control, 'Enter');
  assert.equal(send.held.source, 'Write your message here', 'the card names the field it sends');
  assert.ok(send.held.fields.some((f) => f.value === 'Ferry delayed by fog'), `the card shows the message: ${JSON.stringify(send.held.fields)}`);
  assert.equal(send.heldAction, 'press:Enter');
  assert.equal(await text(page, '#chatlog'), '(nothing)', 'held: nothing sent');
  // A carriage return is Enter's key: typed, it would send unasked. Refused as any line break.
  await refused(page, 'action', { captureId: 'd3', ref: box, action: 'type', text: 'secret\r' }, 'invalid_params');
  await ok(page, 'action', { captureId: 'd3', ref: send.heldRef, action: send.heldAction, expect: send.held.canonical });
  assert.equal(await text(page, '#chatlog'), 'Ferry delayed by fog', 'approved: sent');
  // A search of the messages is no message: its Enter finds.
  const search = byName(chat, 'Search messages').ref;
  await ok(page, 'action', { captureId: 'd3', ref: search, action: 'type', text: 'fog' });
  const find = await ok(page, 'action', { captureId: 'd3', ref: search, action: 'press', key: 'Enter' });
  assert.equal(find.held, undefined, JSON.stringify(find));
  assert.equal(await text(page, '#found'), 'results for fog');
  await page.close();
});

// A messenger's multi-line box with no Send button (Discord's kind): named as a message, its Enter
// is the send, held; a line break typed there is refused, a carriage return too; a toolbar's
// Share beside it is not what Enter means.
test('widgets-chat.html: Enter in a message box with no Send button is held as its send; typed line breaks refused', opts, async () => {
  const page = await open('/widgets-chat.html');
  const ctx = await ok(page, 'context', { captureId: 'm1' });
  const crew = byName(ctx, 'Message the crew').ref;
  for (const text of ['one\ntwo', 'one\rtwo', 'one\r\n']) {
    await refused(page, 'action', { captureId: 'm1', ref: crew, action: 'type', text }, 'invalid_params');
  }
  assert.equal(await text(page, '#crewlog'), '(nothing)');
  await ok(page, 'action', { captureId: 'm1', ref: crew, action: 'type', text: 'All hands at six' });
  const send = await ok(page, 'action', { captureId: 'm1', ref: crew, action: 'press', key: 'Enter' });
  assert.equal(send.held?.control, 'Enter', JSON.stringify(send));
  assert.equal(send.held.source, 'Message the crew');
  assert.equal(await text(page, '#crewlog'), '(nothing)', 'held: nothing sent');
  await ok(page, 'action', { captureId: 'm1', ref: send.heldRef, action: send.heldAction, expect: send.held.canonical });
  assert.equal(await text(page, '#crewlog'), 'All hands at six', 'approved: sent');
  const line = await ok(page, 'action', { captureId: 'm1', ref: crew, action: 'press', key: 'Shift+Enter' });
  assert.equal(line.held, undefined, 'Shift+Enter is a line break');
  assert.equal(await text(page, '#crewlog'), 'All hands at six');
  await page.close();
});
