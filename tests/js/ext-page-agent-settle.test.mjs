// SPDX-License-Identifier: GPL-3.0-or-later
// The page agent settles: an action answers once its own effects are over (DOM, its requests,
// spinners), in a tab in front or behind — first in a plain page, then with the real extension.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { domWait } from '../e2e/browser-harness.mjs';
import { opts, skip, open, ok, byName } from './page-agent-harness.mjs';
import { SettleRig } from './settle-harness.mjs';
import { until } from '../lib/until.mjs';
import { trackTimers } from '../../extension/lib/page-timers-main.js';

// ---- settling: an action answers once the page is quiet (DOM and, with the worker, network) ----

/**
 * Stands in for the worker's request count (lib/network.js, which counts with webRequest): a
 * runtime port, opened by an action given `net: true`, that reports the page's fetches in
 * flight. Without it the page agent counts the network as quiet and only the DOM decides, so a
 * test whose page fetches would depend on the fetch beating the quiet window.
 */
async function countFetches(page) {
  await page.evaluate(() => {
    const listeners = { msg: [], gone: [] };
    const inflight = new Map();
    let n = 0;
    const state = () => ({ inflight: inflight.size, watching: true, requests: [...inflight] });
    const post = () => setTimeout(() => listeners.msg.forEach((fn) => fn(state())), 1);
    const realFetch = window.fetch.bind(window);
    window.fetch = async (...a) => {
      const id = ++n;
      inflight.set(id, Date.now());   // the browser's clock, as webRequest's timeStamp
      post();
      try { return await realFetch(...a); } finally { inflight.delete(id); post(); }
    };
    window.__ports = 0;
    if (!window.chrome) window.chrome = {};
    Object.defineProperty(window.chrome, 'runtime', {
      configurable: true,
      value: {
        connect: ({ name }) => {
          window.__ports += 1;
          window.__portName = name;
          post();
          return {
            onMessage: { addListener: (fn) => listeners.msg.push(fn) },
            onDisconnect: { addListener: (fn) => listeners.gone.push(fn) },
            disconnect: () => { listeners.msg.length = 0; window.__ports -= 1; },
          };
        },
      },
    });
  });
}

/** Clicks a node and times the whole round trip as the worker would see it. */
async function timedClick(page, captureId, ref, extra = {}) {
  const t0 = Date.now();
  const v = await ok(page, 'action', { captureId, ref, action: 'click', ...extra });
  return { v, ms: Date.now() - t0 };
}

test('settle: a fetch then a change (mcp-large.html) is counted, and a diff shows only new text', opts, async () => {
  const page = await open('/mcp-large.html');
  // The fetch is counted as the worker would count it: with the DOM alone, a fetch slower than
  // the quiet window (a loaded machine) would answer before the page changed.
  await countFetches(page);
  const c1 = await ok(page, 'context', { captureId: 's1' });
  const { v, ms } = await timedClick(page, 's1', byName(c1, 'Load details').ref, { net: true });
  assert.equal(await page.evaluate(() => window.__detailsLoads), 1, 'the fetch and its change were done when it answered');
  assert.equal(v.changes.settled, true);
  assert.equal(v.changes.added, 2, JSON.stringify(v.changes));
  assert.equal(v.changes.textChanged, true);
  console.log(`# Load details answered in ${ms} ms (settleMs ${v.changes.settleMs})`);

  // The page is no longer half-way: a diff right after names the result, and its text lines are
  // only the new ones (the excerpt is cut on a whole line, so no fragment of "line 3 of order …").
  const c2 = await ok(page, 'context', { captureId: 's2', diff: true });
  assert.match(c2.text, /Details loaded \(1\): 2 items/);
  assert.ok(c1.textTruncated && c2.textTruncated, 'the large page fills the excerpt');
  const before = new Map();
  for (const l of c1.text.split('\n')) before.set(l, (before.get(l) || 0) + 1);
  const fresh = c2.text.split('\n').filter((l) => {
    const n = before.get(l) || 0;
    if (n > 0) before.set(l, n - 1);
    return n === 0;
  });
  assert.deepEqual(fresh, ['Details loaded (1): 2 items, total 42.50 EUR', 'Blue mug ×2 (load 1)', 'Tea sampler ×1 (load 1)']);
  await page.close();
});

test('settle: a 30 ms timer (mcp-compose.html Save draft) is waited for', opts, async () => {
  const page = await open('/mcp-compose.html');
  const c = await ok(page, 'context', { captureId: 's1' });
  const held = await ok(page, 'action', { captureId: 's1', ref: byName(c, 'Save draft').ref, action: 'click' });
  assert.equal(held.held.kind, 'write');
  const { v } = await timedClick(page, 's1', byName(c, 'Save draft').ref, { expect: held.held.canonical });
  assert.equal(await page.evaluate(() => window.__draftSaves), 1);
  assert.equal(v.changes.textChanged, true);
  assert.equal(v.changes.settled, true);
  assert.match(await page.textContent('#draft-status'), /Draft saved \(1\)/);
  await page.close();
});

test('settle: a chain of timers a click queued is waited for to its end, with the tracker; the page\'s timers work as before', opts, async () => {
  const page = await open('/settle-timers.html');
  const name = 'chaperone-test-timers-1';
  await page.evaluate(trackTimers, name);
  const c = await ok(page, 'context', { captureId: 't1' });
  // Three steps 60 ms apart: each gap is longer than a click's quiet window, so without the
  // tracker the answer would come after the first; with it, after the last.
  const save = { captureId: 't1', ref: byName(c, 'Save').ref, action: 'click', timers: { name, longestMs: 100 }, untilText: 'Saved (1).' };
  const held = await ok(page, 'action', save);      // a save: held for the person, approved once
  const saved = await ok(page, 'action', { ...save, expect: held.held.canonical });
  assert.equal(saved.changes.settled, true, JSON.stringify(saved.changes));
  assert.equal(saved.untilFound, true, 'the last step of the chain was done when the click answered');
  // A chain deeper than the tracker follows (five steps, 20 ms apart) is seen to its end by the
  // quiet window, and a timer a promise's callback queued is the click's as well.
  for (const [button, done] of [['Fade', 'Faded.'], ['Later', 'Rendered.']]) {
    const v = await ok(page, 'action', { captureId: 't1', ref: byName(c, button).ref, action: 'click', timers: { name, longestMs: 100 },
      untilText: done });
    assert.equal(v.changes.settled, true, `${button}: ${JSON.stringify(v.changes)}`);
    assert.equal(v.untilFound, true, `${button}: "${done}" was shown when the click answered`);
  }
  // A fill (no tracker: its reaction is waited for as it comes) waits for the re-render its
  // field queued a timer later, not for the search the field debounces, which comes later and stands.
  const find = await ok(page, 'action', { captureId: 't1', ref: byName(c, 'Find').ref, action: 'setValue', value: 'gulls',
    untilText: 'Looking for gulls' });
  assert.equal(find.changes.settled, true, JSON.stringify(find.changes));
  assert.equal(find.untilFound, true, 'the re-render was in the answer');
  await domWait(page, () => document.querySelector('#echo').textContent === 'Found gulls', null, { what: 'the search' });
  // A click that starts a poll that never stops, and one whose change comes 400 ms later: neither
  // holds the act up, and both go on as the page meant.
  for (const name2 of ['Poll', 'Debounce']) {
    const v = await ok(page, 'action', { captureId: 't1', ref: byName(c, name2).ref, action: 'click', timers: { name, longestMs: 100 } });
    assert.equal(v.changes.settled, true, `${name2}: ${JSON.stringify(v.changes)}`);
  }
  await domWait(page, () => document.querySelector('#debounced').textContent === 'Debounced.', null, { what: 'the debounced change' });
  const polls = () => page.evaluate(() => Number.parseInt(document.querySelector('#polls').textContent, 10));
  const seen = await polls();
  await until(async () => (await polls()) > seen + 2, { what: 'the poll to go on' });
  // The page's timers as the page uses them: ids, clearing (an act's timer and any other),
  // arguments, `this`, string handlers, frames; the wrappers keep the native names.
  const api = await page.evaluate((n) => new Promise((done) => {
    const out = { names: [setTimeout.name, clearTimeout.name, requestAnimationFrame.name, cancelAnimationFrame.name] };
    const counts = [];
    window.addEventListener(n, (e) => counts.push(e.detail));
    window.dispatchEvent(new CustomEvent(`${n}:act`, { detail: 'begin a1 100' }));
    const cleared = setTimeout(() => { out.clearedRan = true; }, 0);
    const kept = setTimeout(function (a, b) { out.args = [a, b]; out.self = this === window; }, 0, 'x', 2);
    const frame = requestAnimationFrame(() => { out.cancelledFrameRan = true; });
    // setTimeout's ids are setInterval's: clearInterval cancels a timeout, and the count says so.
    const byInterval = setTimeout(() => { out.byIntervalRan = true; }, 0);
    clearInterval(byInterval);
    window.dispatchEvent(new CustomEvent(`${n}:act`, { detail: 'end a1' }));
    clearTimeout(cleared);
    cancelAnimationFrame(frame);
    const other = setTimeout(() => { out.otherRan = true; }, 0);
    clearTimeout(other);
    out.ids = [typeof cleared, typeof kept, cleared !== kept];
    setTimeout('window.__fromString = 1', 0);
    // Last: a timer queued by a frame's callback (the frame after the string timer's turn: a
    // timer queued then runs after it), and the count once that callback has said its own.
    requestAnimationFrame((ts) => {
      out.frame = typeof ts;
      setTimeout(() => {
        out.fromString = window.__fromString;
        queueMicrotask(() => queueMicrotask(() => queueMicrotask(() => {
          out.lastCount = counts.at(-1);
          window.dispatchEvent(new CustomEvent(`${n}:act`, { detail: 'done a1' }));
          done(out);
        })));
      }, 0);
    });
  }), name);
  assert.deepEqual(api, { names: ['setTimeout', 'clearTimeout', 'requestAnimationFrame', 'cancelAnimationFrame'],
    args: ['x', 2], self: true, ids: ['number', 'number', true], frame: 'number', fromString: 1,
    lastCount: 'a1 0 1' });   // none left; open: a string handler is not followed
  await page.close();
});

test('settle: a fill that sets nothing off settles; one the page reacts to waits until the reaction and what it queued are over', opts, async () => {
  const page = await open('/mcp-compose.html');
  const c = await ok(page, 'context', { captureId: 'f1' });
  const subject = byName(c, 'Subject');
  const plain = await ok(page, 'action', { captureId: 'f1', ref: subject.ref, action: 'setValue', value: 'Quarterly numbers' });
  assert.equal(plain.changes.settled, true);
  assert.equal(await page.inputValue('#subject'), 'Quarterly numbers');

  // The page reacts to typing in a task it queues (as a framework's re-render does): the fill
  // sees it and waits until the page is quiet again. (A reaction later than a task — a debounce —
  // is not waited for; docs/architecture.md says so.)
  await page.evaluate(() => document.querySelector('#subject').addEventListener('input', () => {
    setTimeout(() => { document.body.dataset.typed = String(Date.now()); }, 0);
  }));
  const reacting = await ok(page, 'action', { captureId: 'f1', ref: subject.ref, action: 'setValue', value: 'Numbers' });
  assert.ok(await page.evaluate(() => !!document.body.dataset.typed), 'the reaction was there when it answered');
  assert.equal(reacting.changes.settled, true);

  // A reaction in stages (a microtask, then a chain of eight timers, each queued by the one
  // before: past the fifth, Chromium holds each back 4 ms), each changing the page: the answer
  // comes after the last stage, and counts what each added.
  await page.evaluate(() => {
    const subject = document.querySelector('#subject');
    const stage = (n) => {
      const p = document.createElement('p');
      p.className = 'stage';
      p.textContent = `stage ${n}`;
      document.body.append(p);
    };
    subject.addEventListener('input', () => {
      document.querySelectorAll('p.stage').forEach((p) => p.remove());
      stage(0);                                               // inside the act itself
      const chain = (n) => setTimeout(() => {
        stage(n);
        if (n < 9) chain(n + 1);
      }, 0);
      queueMicrotask(() => {
        stage(1);
        chain(2);
      });
    });
  });
  const staged = await ok(page, 'action', { captureId: 'f1', ref: subject.ref, action: 'setValue', value: 'Staged' });
  assert.equal(staged.changes.settled, true);
  assert.equal(await page.evaluate(() => document.querySelectorAll('p.stage').length), 10, 'every stage ran before the answer');
  assert.equal(staged.changes.added, 10, 'the answer counts the ten paragraphs the stages added');
  console.log(`# fill: ${plain.changes.settleMs} ms of settle when nothing happened, ${reacting.changes.settleMs} ms when the page reacted, ${staged.changes.settleMs} ms for ten stages`);
  await page.close();
});

test('settle: a button that does nothing settles with nothing changed, after at least one quiet window', opts, async () => {
  const page = await open('/mcp-large.html');
  const c = await ok(page, 'context', { captureId: 's1' });
  const noop = byName(c, 'Quick action 0');       // inside the open shadow root; no listener
  const times = [];
  const settles = [];
  for (let i = 0; i < 3; i += 1) {
    const { v, ms } = await timedClick(page, 's1', noop.ref);
    assert.deepEqual({ ...v.changes, settleMs: 0 }, { urlChanged: false, titleChanged: false, added: 0, removed: 0,
      textChanged: false, settled: true, settleMs: 0 });
    // settled:true (above) says it did not run to the 3 s cap; how soon is bench/'s to measure.
    assert.ok(v.changes.settleMs >= 40, `the whole quiet window: settleMs ${v.changes.settleMs}`);
    settles.push(v.changes.settleMs);
    times.push(ms);
  }
  console.log(`# no-op click answered in ${times.join(', ')} ms (settleMs ${settles.join(', ')})`);
  await page.close();
});

test('settle: changes inside an open shadow root are the action\u2019s too', opts, async () => {
  const page = await open('/shadow.html');
  await page.evaluate(() => {
    const host = document.createElement('div');
    document.body.appendChild(host);
    const root = host.attachShadow({ mode: 'open' });
    root.innerHTML = '<button type="button">Shadow later</button><p>waiting</p>';
    root.querySelector('button').addEventListener('click', () => {
      // All inside the shadow root: a text change and a new element, seen only if it is watched.
      root.querySelector('p').textContent = 'step 1';
      const b = document.createElement('b');
      b.textContent = 'done';
      root.append(b);
    });
  });
  const c = await ok(page, 'context', { captureId: 's1' });
  const { v } = await timedClick(page, 's1', byName(c, 'Shadow later').ref);
  assert.equal(v.changes.settled, true);
  assert.equal(v.changes.textChanged, true);
  assert.equal(v.changes.added, 1, JSON.stringify(v.changes));
  await page.close();
});

test('settle: a page that never stops changing hits the cap and says settled:false', opts, async () => {
  const page = await open('/dynamic.html');
  await page.evaluate(() => {
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = 'Start ticker';
    const out = document.createElement('p');
    b.addEventListener('click', () => {
      // Task after task (not a timer, which a loaded machine may delay past the quiet window):
      // the page changes all the time until the test stops it.
      let n = 0;
      const ch = new MessageChannel();
      ch.port1.onmessage = () => {
        out.textContent = `tick ${++n}`;
        if (!window.__stopTicker) ch.port2.postMessage(0);
      };
      ch.port2.postMessage(0);
    });
    document.body.append(b, out);
  });
  const c = await ok(page, 'context', { captureId: 's1' });
  const { v, ms } = await timedClick(page, 's1', byName(c, 'Start ticker').ref);
  await page.evaluate(() => { window.__stopTicker = true; });
  assert.equal(v.done, true);
  assert.equal(v.changes.settled, false, JSON.stringify(v.changes));
  assert.equal(v.changes.reason, 'dom', 'the ticker the click started kept changing the page');
  assert.equal(v.changes.textChanged, true);
  assert.ok(v.changes.settleMs >= 2900, `waited to the 3 s cap: settleMs ${v.changes.settleMs}`);
  console.log(`# a never-settling page answered in ${ms} ms (settleMs ${v.changes.settleMs})`);
  await page.close();
});

test('settle: with the worker\u2019s request count, a slow fetch is waited for; without it the answer comes before the fetch ends', opts, async () => {
  const page = await open('/dynamic.html');
  await countFetches(page);
  await page.evaluate(() => {
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = 'Slow fetch';
    const out = document.createElement('p');
    out.textContent = 'idle';
    b.addEventListener('click', async () => {
      await fetch('/slow?ms=300', { cache: 'no-store' });
      out.textContent = 'fetched';
    });
    document.body.append(b, out);
    window.__out = out;
  });
  const c = await ok(page, 'context', { captureId: 's1' });
  const slow = byName(c, 'Slow fetch').ref;
  const { v } = await timedClick(page, 's1', slow, { net: true });
  assert.equal(await page.evaluate(() => window.__out.textContent), 'fetched', 'answered after the fetch and its change');
  assert.equal(v.changes.settled, true);
  assert.ok(v.changes.settleMs >= 300, `settleMs ${v.changes.settleMs}`);
  assert.equal(await page.evaluate(() => [window.__ports, window.__portName]).then((x) => x.join()), '0,chaperone.settle',
    'the port is closed once answered');

  // Without the count, a request slower than the quiet window is not seen (hence the worker).
  await page.evaluate(() => { window.__out.textContent = 'idle'; });
  const { v: domOnly } = await timedClick(page, 's1', slow);
  assert.equal(domOnly.changes.settled, true);
  assert.equal(domOnly.changes.textChanged, false, 'answered before the fetch changed the page');
  await domWait(page, () => window.__out.textContent === 'fetched', null, { what: 'the slow fetch to change the page' });
  await page.close();
});

test('settle: a navigation away ends the wait, before the document goes (navigating:true, settled:false)', opts, async () => {
  const page = await open('/navigate-away.html?delay=400');
  const c = await ok(page, 'context', { captureId: 's1' });
  // A link: the navigation starts with the click; the answer comes before the document goes.
  const { v, ms } = await timedClick(page, 's1', byName(c, 'Next page (link)').ref);
  assert.equal(v.done, true);
  assert.equal(v.changes.navigating, true);
  assert.equal(v.changes.settled, false);
  console.log(`# a navigating click answered in ${ms} ms`);
  await page.waitForURL(/navigate-target\.html/);
  await page.close();
});

// ---- with the real extension: its worker's request dates and clock, tabs in front and behind ----
//
// What a person would notice: the answer comes with the act's result in it, not after whatever
// else the page is doing, and a tab the agent works in behind the person's answers as well.

let rig = null;
before(async () => { if (!skip) rig = await SettleRig.start(); });
after(async () => { await rig?.close(); });

const text = (tab, sel) => tab.page.evaluate((s) => document.querySelector(s)?.textContent ?? null, sel);

for (const where of ['front', 'background']) {
  const put = (tab) => (where === 'front' ? rig.front(tab) : rig.background(tab));

  test(`settle (${where}): a ticker does not hold up a fill or a click, and is not the act's change`, opts, async () => {
    const tab = await rig.open('/settle-ticker.html');
    await put(tab);
    const ctx = await rig.capture(tab);
    // The page has been ticking on its own for a while when an agent acts (it read the page
    // first): two ticks seen since the page agent came, however slow the machine or the tab.
    const ticks = () => tab.page.evaluate(() => Number.parseInt(document.querySelector('#ticks').textContent, 10));
    const first = await ticks();
    await until(async () => (await ticks()) >= first + 2, { timeout: 10000, what: 'two ticks of the clock' });
    const fill = await rig.act(tab, ctx, 'Note', 'setValue', { value: 'gate 12' });
    assert.deepEqual({ ...fill.value.changes, settleMs: 0 }, { urlChanged: false, titleChanged: false, added: 0,
      removed: 0, textChanged: false, settled: true, settleMs: 0 }, 'the clock kept ticking; the fill changed nothing');
    const click = await rig.act(tab, ctx, 'Mark', 'click');
    assert.equal(click.value.changes.settled, true, JSON.stringify(click.value.changes));
    assert.equal(click.value.changes.textChanged, true);
    assert.equal(await text(tab, '#status'), 'Marked (1).');
    assert.ok(await tab.page.evaluate(() => Number.parseInt(document.querySelector('#ticks').textContent, 10) > 0),
      'the ticker was running');
    await tab.page.close();
  });

  test(`settle (${where}): polling is not waited for; a request the click started is, with its result`, opts, async () => {
    const tab = await rig.open('/settle-polling.html');
    await put(tab);
    await domWait(tab.page, () => /poll/.test(document.querySelector('#sync').textContent), null, { what: 'a poll' });
    const ctx = await rig.capture(tab);
    // The polls (150 ms each, every 200 ms) keep the tab's network busy: none is the click's.
    const mark = await rig.act(tab, ctx, 'Mark', 'click');
    assert.equal(mark.value.changes.settled, true, JSON.stringify(mark.value.changes));
    assert.equal(await text(tab, '#status'), 'Marked (1).');
    const more = await rig.act(tab, ctx, 'Load more', 'click');
    assert.equal(more.value.changes.settled, true, JSON.stringify(more.value.changes));
    assert.equal(await tab.page.evaluate(() => window.__loads), 1, 'the fetch and its change were done when it answered');
    assert.equal(more.value.changes.added, 1, JSON.stringify(more.value.changes));
    await tab.page.close();
  });

  test(`settle (${where}): a chain of timers the click queued is waited for where the browser runs it; polling it starts is not`, opts, async () => {
    const tab = await rig.open('/settle-timers.html');
    await put(tab);
    const ctx = await rig.capture(tab);
    const saved = await rig.act(tab, ctx, 'Save', 'click', { untilText: 'Saved (1).' });
    assert.equal(saved.value.changes.settled, true, JSON.stringify(saved.value.changes));
    // In a hidden tab Chromium runs timers up to a second late: there the chain is waited for no
    // longer than the quiet window, as before the tracker.
    if (where === 'front') assert.equal(saved.value.untilFound, true, 'the chain\'s last step was in the answer');
    const poll = await rig.act(tab, ctx, 'Poll', 'click');
    assert.equal(poll.value.changes.settled, true, JSON.stringify(poll.value.changes));
    await rig.front(tab);
    await until(async () => /Saved \(1\)/.test(await text(tab, '#status')), { what: 'the save to be done' });
    await tab.page.close();
  });

  test(`settle (${where}): a spinner the click showed is waited for, and the toast after it is in the answer`, opts, async () => {
    const tab = await rig.open('/settle-spinner.html');
    await put(tab);
    const ctx = await rig.capture(tab);
    // Save: a spinner while its request runs. Recalculate: one for the page's own timer (in a
    // background tab that timer is throttled to a second; the spinner is still waited for).
    for (const [button, toast] of [['Save', 'Saved (1).'], ['Recalculate', 'Recalculated (1).']]) {
      const r = await rig.act(tab, ctx, button, 'click');
      assert.equal(r.value.changes.settled, true, `${button}: ${JSON.stringify(r.value.changes)}`);
      assert.equal(await tab.page.evaluate(() => document.querySelectorAll('.spinner').length), 0, `${button}: no spinner left`);
      assert.ok((await text(tab, '#toasts')).includes(toast), `${button}: the toast was there when it answered`);
      assert.ok(r.value.changes.added >= 1 && r.value.changes.textChanged, JSON.stringify(r.value.changes));
    }
    await tab.page.close();
  });

  test(`settle (${where}): a progress bar kept at height 0 in a field is no spinner; shown, it is waited for`, opts, async () => {
    const tab = await rig.open('/settle-spinner.html');
    await put(tab);
    const ctx = await rig.capture(tab);
    // Typing re-renders the field, its hidden bar with it (as Vuetify's fields do): the fill
    // does not wait for the bar until the cap.
    const fill = await rig.act(tab, ctx, 'Harbour', 'setValue', { value: 'Pier 3' });
    assert.equal(fill.value.changes.settled, true, JSON.stringify(fill.value.changes));
    assert.equal(await tab.page.evaluate(() => document.getElementById('harbour-field').className), 'field field--dirty');
    // The same bar, 2 px tall while the field loads: a spinner, waited for, the toast after it.
    const check = await rig.act(tab, ctx, 'Check harbour', 'click');
    assert.equal(check.value.changes.settled, true, JSON.stringify(check.value.changes));
    assert.ok((await text(tab, '#toasts')).includes('Checked (1).'), 'the toast was there when it answered');
    await tab.page.close();
  });

  test(`settle (${where}): an event stream and a long poll never hold an act up`, opts, async () => {
    const tab = await rig.open('/settle-stream.html');
    await put(tab);
    await domWait(tab.page, () => /message/.test(document.querySelector('#stream').textContent), null, { what: 'the stream' });
    const ctx = await rig.capture(tab);
    const fill = await rig.act(tab, ctx, 'Note', 'setValue', { value: 'hello' });
    assert.equal(fill.value.changes.settled, true, JSON.stringify(fill.value.changes));
    const mark = await rig.act(tab, ctx, 'Mark', 'click');
    assert.equal(mark.value.changes.settled, true, JSON.stringify(mark.value.changes));
    assert.equal(await text(tab, '#status'), 'Marked (1).');
    await tab.page.close();
  });
}

test('settle: a request the click started that never ends is capped: settled:false, reason network', opts, async () => {
  const tab = await rig.open('/settle-stream.html');
  const ctx = await rig.capture(tab);
  const watch = await rig.act(tab, ctx, 'Watch', 'click');
  assert.equal(watch.value.done, true);
  assert.equal(watch.value.changes.settled, false);
  assert.equal(watch.value.changes.reason, 'network');
  assert.equal(watch.value.changes.textChanged, true, 'what it did change is still said');
  await tab.page.close();
});
