// SPDX-License-Identifier: GPL-3.0-or-later
// The agent interface end to end: the official MCP TypeScript SDK (a client no one here wrote)
// launches the real relay, chaperone-mcp, which reaches the real app under Xvfb; the real extension
// in real Chromium is paired with it (Pair pressed in the app through AT-SPI) and tabs are granted
// in its popup, as a person does. One app and one browser serve every test here, in order; the
// person's presses (Done, Cancel Task, Resume All, Stop All, Pause, Resume) go through the
// accessibility tree. The last test pairs a second browser and then closes it.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';

import { startFixtureServer } from '../fixtures/serve.mjs';
import { APP, atspi, display, startApp, whyNot } from './app-harness.mjs';
import { Browser, browserWhyNot, domWait } from './browser-harness.mjs';
import * as H from './mcp-harness.mjs';
import { until } from '../lib/until.mjs';

const skip = whyNot() ?? browserWhyNot() ?? H.mcpWhyNot() ?? false;
if (skip) console.log(`# skipped: ${skip}`);

const MAX_CHARS = 8000;

const W = { browsers: [] };   // the world every test shares

const call = (tool, args = {}, options) => W.agent.call(tool, args, options);

async function pairInApp(browser, popup) {
  const code = await browser.startPairing(popup);
  assert.equal(await atspi('wait-label', display(code)), display(code), 'the app shows the popup\'s code');
  await atspi('press', 'Pair');
  await browser.waitForState('connected');
}

/** Tab refs of the granted tabs, by page path: {large, compose}. */
async function readTabs(agent = W.agent) {
  const r = H.ok(await agent.call('browser_tabs'), 'browser_tabs');
  const tabs = H.structuredOf(r).tabs ?? [];
  const find = (path) => tabs.find((t) => (t.url ?? '').startsWith(`${W.sites.originA}${path}`));
  return { result: r, tabs, large: find('/mcp-large.html'), compose: find('/mcp-compose.html') };
}

async function connectOne() {
  W.agent = await H.connectAgent({ name: 'mcp-e2e-one', runtimeDir: W.app.runtimeDir });
}

before(async () => {
  if (skip) return;
  W.sites = await startFixtureServer();
  W.app = await startApp();
  const a = await Browser.launch();
  W.browsers.push(a);
  W.a = a;
  await a.setPort(W.app.port);
  W.large = await a.ctx.newPage();
  await W.large.goto(`${W.sites.originA}/mcp-large.html`);
  W.compose = await a.ctx.newPage();
  await W.compose.goto(`${W.sites.originA}/mcp-compose.html`);
  W.ungranted = await a.ctx.newPage();
  await W.ungranted.goto(`${W.sites.originA}/handoff.html`);
  const popup = await a.popup(W.large);
  await pairInApp(a, popup);
  // Control (click, type, hand over to the person) on two tabs, and the large page's iframe.
  const largeTabId = await a.tabIdOf(W.large);
  const frames = await a.popupFrames(popup, W.large);
  await a.grant(popup, {
    pages: [W.large, W.compose], preset: 'control', extras: ['browser.tab.navigate'], label: 'MCP e2e',
    frames: { [largeTabId]: frames.map((f) => f.frameId) },
  });
  await popup.close();
  await W.compose.bringToFront();
  await connectOne();
  // The grant reaches the app over the bridge; nothing tells the agent when: it asks again.
  const { large, compose } = await until(async () => {
    const t = await readTabs();
    return t.large && t.compose ? t : null;
  }, { timeout: 15000, what: 'browser_tabs to list both granted tabs' });
  W.tabs = { large: large.tab, compose: compose.tab };
}, { timeout: 120000 });

after(async () => {
  await W.agent?.close();
  await W.other?.close();
  for (const b of W.browsers) await b.close();
  await W.app?.stop();
  if (W.app) await rm(W.app.home, { recursive: true, force: true }); // a restarted app keeps it
  await W.sites?.close();
});

/**
 * A test on the shared world. A failure prints what the app and the relay said; an app that died
 * (a crash is never retried away: under ASan its stack is in that log) fails this test, and the
 * next ones get a fresh app on the same data and port, so that one crash is one failure.
 */
function scenario(name, fn, { timeout = 90000 } = {}) {
  test(name, { skip, timeout }, async () => {
    try {
      await fn();
      const crash = W.app.crash();
      assert.equal(crash, null, crash ?? '');
    } catch (err) {
      console.log(W.app?.log.slice(-200).join('\n'));
      if (W.agent) console.log(W.agent.stderr().slice(-2000));
      if (W.app && !W.app.alive()) {
        console.log(`# ${W.app.crash() ?? 'the app is gone'}; starting it again for the next tests`);
        await restartApp().catch((e) => console.log(`# could not restart the app: ${e.message}`));
      }
      throw err;
    }
  });
}

async function restartApp() {
  await W.agent?.close();
  // Its death was this test's failure, said above: the next tests start on a fresh app.
  await W.app.stopKeepingData().catch(() => {});
  W.app = await startApp({ home: W.app.home, port: W.app.port });
  for (const b of W.browsers) await b.waitForState('connected', { timeoutMs: 45000 });
  await connectOne();
  const { large, compose } = await until(async () => {
    const t = await readTabs().catch(() => ({}));
    return t.large && t.compose ? t : null;
  }, { timeout: 20000, what: 'browser_tabs to list both granted tabs again' });
  W.tabs = { large: large.tab, compose: compose.tab };
}

/** Presses the first button the app shows whose accessible name matches `pattern`. */
async function pressMatching(pattern) {
  return atspi('press-match', pattern.source);
}

const refOf = (result, name) => H.nodesOf(result).find((n) => n.name === name)?.ref
  ?? H.refLines(H.textOf(result)).find((l) => l.name === name)?.ref;

// ---- tools/list ------------------------------------------------------------------------------------

scenario('tools/list: each tool has JSON Schema input and output schemas, and none approves anything', async () => {
  const { tools } = await W.agent.client.listTools();
  const names = tools.map((t) => t.name);
  for (const name of H.CORE_TOOLS) assert.ok(names.includes(name), `${name} among ${names}`);
  assert.deepEqual(await H.schemaProblems(tools, { requireOutput: H.CORE_TOOLS }), []);
  // DESIGN §7: there is no tool that approves, resumes, pairs or grants.
  assert.deepEqual(names.filter((n) => /approve|resume|pair|grant|unpause|unstop/i.test(n)), []);
});

// ---- browser_tabs ------------------------------------------------------------------------------------

scenario('browser_tabs: the granted tabs and only those, each named by its browser', async () => {
  const { result, tabs, large, compose } = await readTabs();
  assert.ok(large && compose, `both granted tabs listed: ${JSON.stringify(tabs)}`);
  for (const t of [large, compose]) {
    assert.match(t.tab, /^b\d+:\d+$/, 'a tab ref names browser and tab');
    assert.ok(H.textOf(result).includes(t.tab), 'the text names the tab too');
  }
  assert.equal(large.tab.split(':')[0], compose.tab.split(':')[0], 'one browser');
  assert.equal(tabs.some((t) => (t.url ?? '').includes('/handoff.html')), false, 'an ungranted tab is not listed');
  assert.equal(large.title, 'MCP large fixture');
  // The page's words are marked in structuredContent as in the text, with the result's marker.
  const marker = result.structuredContent.untrusted;
  assert.match(marker ?? '', /^[a-z2-7]{10}$/, JSON.stringify(result.structuredContent));
  assert.ok(H.textOf(result).includes(`<untrusted-page-content-${marker}>`), 'the same marker in the text');
  const raw = result.structuredContent.tabs.find((t) => t.tab === large.tab);
  assert.equal(raw.title, `<untrusted-page-content-${marker}>MCP large fixture</untrusted-page-content-${marker}>`);
});

// ---- browser_snapshot ----------------------------------------------------------------------------------

scenario('browser_snapshot of the compose page: one line per control with its ref, page text wrapped as untrusted', async () => {
  const r = H.ok(await call('browser_snapshot', { tab: W.tabs.compose }), 'snapshot');
  const text = H.textOf(r);
  assert.ok(text.length <= MAX_CHARS, `${text.length} chars`);
  const lines = H.refLines(text);
  for (const name of ['Search mail', 'Email', 'API key', 'Subject', 'Message', 'Save draft', 'Preview']) {
    assert.equal(lines.filter((l) => l.name === name).length, 1, `one line for "${name}" in:\n${text}`);
  }
  assert.equal(lines.find((l) => l.name === 'Save draft').role, 'button');
  assert.equal(new Set(lines.map((l) => l.ref)).size, lines.length, 'refs are distinct');
  // structuredContent does not repeat the text: the elements are said once, in the text.
  const structured = JSON.stringify(r.structuredContent);
  for (const name of ['Save draft', 'Search mail', 'Subject']) {
    assert.equal(structured.includes(name), false, `"${name}" is not repeated in ${structured}`);
  }
  assert.ok(structured.length < text.length, `structuredContent ${structured.length} B beside text ${text.length}`);
  assert.ok(H.untrustedSpans(text).length > 0, `an untrusted wrapper in:\n${text}`);
  for (const pageText of ['Save draft', 'Search mail', 'Draft', 'No draft yet']) {
    if (text.includes(pageText)) assert.ok(H.onlyInsideUntrusted(text, pageText), `"${pageText}" only inside the wrapper`);
  }
});

scenario('browser_snapshot with until: waits for words the page shows later, and says so when they never show', async () => {
  // The page shows the words 300 ms from now, from its own timer: one call reads them.
  await W.compose.evaluate(() => setTimeout(() => {
    const p = document.createElement('p');
    p.id = 'late-words';
    p.textContent = 'Delivery confirmed at noon';
    document.body.append(p);
  }, 300));
  const r = H.ok(await call('browser_snapshot', { tab: W.tabs.compose, until: 'delivery  CONFIRMED' }), 'until');
  assert.equal(r.structuredContent.untilFound, true, JSON.stringify(r.structuredContent));
  assert.ok(H.textOf(r).includes('Delivery confirmed at noon'), H.textOf(r));
  assert.ok(H.onlyInsideUntrusted(H.textOf(r), 'Delivery confirmed at noon'), 'the words are the page\'s');
  // Words that never show: after the extension's 10 s, the page as it is, and our words first.
  const none = H.ok(await call('browser_snapshot', { tab: W.tabs.compose, until: 'never on this page' }), 'until, never shown');
  assert.equal(none.structuredContent.untilFound, false);
  assert.match(H.textOf(none), /^The text you waited for \(until\) did not show within 10 s/);
  assert.ok(H.refLines(H.textOf(none)).some((l) => l.name === 'Subject'), 'the snapshot follows');
  await W.compose.evaluate(() => document.getElementById('late-words')?.remove());
});

scenario('browser_snapshot of the 10,000-element page: bounded pages, and every actionable element reachable by page and by query', async () => {
  // Every actionable element's name, as the page knows it (light DOM and the open shadow root).
  const expected = await W.large.evaluate(() => {
    const pick = (root) => [...root.querySelectorAll('button, a[href], input, select, textarea')]
      .map((el) => el.getAttribute('aria-label') || el.textContent.trim() || el.closest('label')?.textContent.trim());
    const names = [...pick(document), ...pick(document.getElementById('widget').shadowRoot)];
    return names.map((n) => (n === 'Search orders' ? n : n.replace(/\s+/g, ' ')));
  });
  assert.equal(expected.length, await W.large.evaluate(() => window.__mcpLarge.actionable));

  const first = H.ok(await call('browser_snapshot', { tab: W.tabs.large }), 'first page');
  const names = new Set();
  const refs = new Set();
  let page = first;
  let pages = 0;
  for (;;) {
    const text = H.textOf(page);
    pages += 1;
    assert.ok(text.length <= MAX_CHARS, `page ${pages}: ${text.length} chars`);
    assert.ok(H.untrustedSpans(text).length > 0, `page ${pages} wraps page text as untrusted`);
    for (const l of H.refLines(text)) { names.add(l.name); refs.add(l.ref); }
    const next = H.nextPageOf(page);
    if (next === null || next === undefined || pages >= 100) break;
    page = H.ok(await call('browser_snapshot', { tab: W.tabs.large, page: next }), `page ${next}`);
  }
  assert.ok(pages > 1, 'the first page says there is more');
  const missing = expected.filter((n) => !names.has(n));
  assert.deepEqual(missing.slice(0, 20), [], `${missing.length} of ${expected.length} actionable elements unreachable over ${pages} pages`);
  assert.ok(refs.size >= expected.length, `${refs.size} distinct refs`);

  // A query finds one far below the fold, on one small page.
  const last = expected.filter((n) => n.startsWith('Carrier for order')).at(-1);
  const q = H.ok(await call('browser_snapshot', { tab: W.tabs.large, query: last }), 'query');
  const qLines = H.refLines(H.textOf(q));
  assert.ok(qLines.some((l) => l.name === last), H.textOf(q));
  assert.ok(qLines.length <= 5, `the query keeps few lines (${qLines.length})`);

  // The same-origin iframe is its own frame.
  const frames = H.structuredOf(first).frames ?? [];
  const child = frames.find((f) => (f.url ?? '').includes('/mcp-large-frame.html'));
  assert.ok(child, `the iframe is listed: ${JSON.stringify(frames)}`);
  const frameArg = child.frame ?? child.frameId ?? child.id;
  const inFrame = H.ok(await call('browser_snapshot', { tab: W.tabs.large, frame: frameArg }), 'frame snapshot');
  const frameNames = H.refLines(H.textOf(inFrame)).map((l) => l.name);
  for (const n of ['Add note', 'Notes help', 'Note priority']) assert.ok(frameNames.includes(n), `${n} in ${frameNames}`);
  assert.ok(!frameNames.includes('Load details'), 'only the frame');
}, { timeout: 120000 });

// ---- browser_act -------------------------------------------------------------------------------------

scenario('browser_act click: the page changes (a fetch, then new text 50 ms later), and the result shows what changed', async () => {
  await W.large.bringToFront();
  const snap = H.ok(await call('browser_snapshot', { tab: W.tabs.large, query: 'Load details' }));
  const ref = refOf(snap, 'Load details');
  assert.ok(ref, H.textOf(snap));
  const before = await W.large.evaluate(() => window.__detailsLoads ?? 0);
  const r = H.ok(await call('browser_act', { tab: W.tabs.large, ref, action: 'click' }), 'click');
  const changes = r.structuredContent?.changes;
  assert.ok(changes && typeof changes === 'object', `changes reported: ${JSON.stringify(r.structuredContent)}`);
  assert.equal(changes.textChanged, true, JSON.stringify(changes));
  assert.equal(r.structuredContent.ok, true);
  assert.equal(await W.large.evaluate(() => window.__detailsLoads ?? 0), before + 1);
  // The result itself shows what changed — the diff against this agent's previous snapshot,
  // the page's words inside the untrusted wrapper — not a whole new snapshot.
  const text = H.textOf(r);
  assert.match(text, /Changes on tab \S+ since your previous snapshot of this document/, text);
  assert.match(text, new RegExp(`Details loaded \\(${before + 1}\\)`), text);
  assert.ok(H.onlyInsideUntrusted(text, 'Details loaded'), text);
  assert.ok(text.length < 6000, `a compact result: ${text.length} characters`);
  // That diff is now the agent's latest snapshot: asked again, nothing has changed since.
  const again = H.textOf(H.ok(await call('browser_snapshot', { tab: W.tabs.large, diff: true }), 'diff'));
  assert.match(again, /0 added, 0 changed, 0 removed; the page text did not change/, again);
});

scenario('browser_act fill: the field takes the value as typing would, a secret never comes back, and Save draft reports', async () => {
  await W.compose.bringToFront();
  const snap = H.ok(await call('browser_snapshot', { tab: W.tabs.compose }));
  const events = await W.compose.evaluate(() => window.__inputEvents);
  const r = H.ok(await call('browser_act', { tab: W.tabs.compose, ref: refOf(snap, 'Subject'), action: 'fill', value: 'Quarterly report' }), 'fill');
  assert.equal(await W.compose.inputValue('#subject'), 'Quarterly report');
  assert.ok(await W.compose.evaluate(() => window.__inputEvents) > events, 'the page saw input events');
  assert.ok(r.structuredContent?.changes && typeof r.structuredContent.changes === 'object', JSON.stringify(r.structuredContent));

  const secret = 'hunter2-e2e-secret';
  const pw = await call('browser_act', { tab: W.tabs.compose, ref: refOf(snap, 'API key'), action: 'fill', value: secret });
  assert.ok(!JSON.stringify(pw).includes(secret), 'the result never echoes a secret');
  const again = await call('browser_snapshot', { tab: W.tabs.compose });
  assert.ok(!JSON.stringify(again).includes(secret), 'nor does a snapshot');

  // Save draft changes data with the person's login and no plan covers it: held, not done.
  const saves = await W.compose.evaluate(() => window.__draftSaves ?? 0);
  const held = await call('browser_act', { tab: W.tabs.compose, ref: refOf(snap, 'Save draft'), action: 'click' });
  assert.equal(held.isError, undefined, JSON.stringify(held.structuredContent));
  assert.equal(held.structuredContent.held, true, JSON.stringify(held.structuredContent));
  assert.match(held.structuredContent.holdId, /^b\d+:k-/);
  assert.equal(held.structuredContent.kind, 'write');
  assert.ok(!JSON.stringify(held).includes(secret), 'the hold shows a credential field by its length only');
  // Held means the click was never made: the page's count is read after the answer.
  assert.equal(await W.compose.evaluate(() => window.__draftSaves ?? 0), saves, 'nothing was saved');
});

// Only the person decides on a hold, and only in the app: the card in Needs you, pressed through
// the accessibility tree. Decline ends it with nothing done; Approve does the click once. The agent
// learns each outcome through browser_wait. (The hold left by the test above is declined here first,
// so one Approve button shows when the second hold comes.)
scenario('a held Save draft: Decline in the app → declined, nothing saved; Approve in the app → done, saved once', async () => {
  await W.compose.bringToFront();
  const saves = await W.compose.evaluate(() => window.__draftSaves ?? 0);
  const holdOf = async (subject) => {
    const snap = H.ok(await call('browser_snapshot', { tab: W.tabs.compose }));
    // Something else in between, as an agent does after an answer: the same click three times in
    // a row would pause this agent (the loop guard), held or not.
    H.ok(await call('browser_act', { tab: W.tabs.compose, ref: refOf(snap, 'Subject'), action: 'fill', value: subject }));
    const r = await call('browser_act', { tab: W.tabs.compose, ref: refOf(snap, 'Save draft'), action: 'click' });
    assert.equal(r.structuredContent?.held, true, JSON.stringify(r.structuredContent));
    return r.structuredContent.holdId;
  };

  // Every Decline showing is the earlier test's hold or this one's: all of them end declined.
  const first = await holdOf('First try');
  const pending = H.ok(await call('browser_wait', { id: first, timeoutMs: 200 }), 'short wait');
  assert.equal(pending.structuredContent.state, 'held', 'no answer keeps it held');
  await atspi('wait-label', 'Button: Save draft');
  // Each Decline pressed, one after another, until none is left (the driver waits for each to go).
  await atspi('press-all', 'Decline');
  const declined = H.ok(await call('browser_wait', { id: first, timeoutMs: 15000 }), 'wait');
  assert.equal(declined.structuredContent.state, 'declined', JSON.stringify(declined.structuredContent));
  assert.equal(await W.compose.evaluate(() => window.__draftSaves ?? 0), saves, 'a declined hold saves nothing');
  assert.equal(await atspi('absent', 'Approve'), '', 'no hold card is left');

  const second = await holdOf('Second try');
  assert.notEqual(second, first);
  await atspi('wait-label', 'Button: Save draft');
  await atspi('press', 'Approve');
  const done = H.ok(await call('browser_wait', { id: second, timeoutMs: 15000 }), 'wait');
  assert.equal(done.structuredContent.state, 'done', JSON.stringify(done.structuredContent));
  await domWait(W.compose, (n) => (window.__draftSaves ?? 0) >= n, saves + 1, { timeout: 5000, what: 'the approved Save draft' });
  // A second run of the approved click would come through the same tab before a later call's
  // answer does: one more round trip through the extension, then count.
  H.ok(await call('browser_snapshot', { tab: W.tabs.compose }), 'a snapshot after the approval');
  assert.equal(await W.compose.evaluate(() => window.__draftSaves ?? 0), saves + 1, 'the approved click ran once');
  // Taken once: the same hold cannot be approved again, by anyone.
  const again = H.ok(await call('browser_wait', { id: second, timeoutMs: 200 }));
  assert.equal(again.structuredContent.state, 'done');
});

// A plan: the agent asks once for a list of writes, the person approves it in the app, and the
// writes it names run without a card each — one step each, shown on the page's pill — and no more.
scenario('browser_plan: approved in the app, Save draft runs as plan step 1 of 1 (the pill says so); the next one is held again', async () => {
  await W.compose.bringToFront();
  const site = new URL(W.sites.originA).hostname;
  const summary = `Save the quarterly report draft ${Date.now() % 100000}`;
  const posted = H.ok(await call('browser_plan', { summary, steps: [{ kind: 'edit', site, summary: 'Save the draft once' }] }), 'plan');
  const { id } = posted.structuredContent;
  assert.equal(posted.structuredContent.state, 'waiting', JSON.stringify(posted.structuredContent));
  await atspi('wait-label', summary);
  await atspi('press', 'Approve Plan');
  const approved = H.ok(await call('browser_wait', { id, timeoutMs: 15000 }), 'wait');
  assert.equal(approved.structuredContent.state, 'approved', JSON.stringify(approved.structuredContent));

  const saves = await W.compose.evaluate(() => window.__draftSaves ?? 0);
  let snap = H.ok(await call('browser_snapshot', { tab: W.tabs.compose }));
  const done = H.ok(await call('browser_act', { tab: W.tabs.compose, ref: refOf(snap, 'Save draft'), action: 'click' }), 'planned click');
  assert.notEqual(done.structuredContent.held, true, JSON.stringify(done.structuredContent));
  assert.equal(done.structuredContent.planStep, 1, JSON.stringify(done.structuredContent));
  await domWait(W.compose, (n) => (window.__draftSaves ?? 0) >= n, saves + 1, { timeout: 5000, what: 'the planned Save draft' });
  await until(async () => /plan step 1 of 1/.test(await W.a.closedShadowText(W.compose)),
              { timeout: 5000, what: 'the pill to say plan step 1 of 1' });

  // The plan's one step is spent: the same write waits for the person again.
  snap = H.ok(await call('browser_snapshot', { tab: W.tabs.compose }));
  H.ok(await call('browser_act', { tab: W.tabs.compose, ref: refOf(snap, 'Subject'), action: 'fill', value: 'After the plan' }));
  const held = H.ok(await call('browser_act', { tab: W.tabs.compose, ref: refOf(snap, 'Save draft'), action: 'click' }));
  assert.equal(held.structuredContent.held, true, JSON.stringify(held.structuredContent));
  assert.equal(await W.compose.evaluate(() => window.__draftSaves ?? 0), saves + 1, 'saved once, by the plan');
  await atspi('wait-label', 'Button: Save draft');
  await atspi('press', 'Decline');
  const declined = H.ok(await call('browser_wait', { id: held.structuredContent.holdId, timeoutMs: 15000 }));
  assert.equal(declined.structuredContent.state, 'declined');
});

// The settle the design asks for: an act answers once the page's own work that it set off is
// done (events: the tab's requests, DOM mutations; a short quiet window covers UI timers), so
// `changes` counts it and the agent never sees a half-updated page.
scenario('browser_act answers only once the page settled: a fetch + 50 ms, a 30 ms timer', async () => {
  await W.large.bringToFront();
  const snap = H.ok(await call('browser_snapshot', { tab: W.tabs.large, query: 'Load details' }));
  const before = await W.large.evaluate(() => window.__detailsLoads ?? 0);
  const r = H.ok(await call('browser_act', { tab: W.tabs.large, ref: refOf(snap, 'Load details'), action: 'click' }));
  assert.equal(await W.large.evaluate(() => window.__detailsLoads ?? 0), before + 1,
               'the fetch and its text change were done when browser_act answered');
  assert.ok(r.structuredContent.changes.added >= 2, `the two new list items are counted: ${JSON.stringify(r.structuredContent.changes)}`);

  await W.compose.bringToFront();
  const form = H.ok(await call('browser_snapshot', { tab: W.tabs.compose }));
  const previews = await W.compose.evaluate(() => window.__previews ?? 0);
  H.ok(await call('browser_act', { tab: W.tabs.compose, ref: refOf(form, 'Preview'), action: 'click' }));
  assert.equal(await W.compose.evaluate(() => window.__previews ?? 0), previews + 1, 'the 30 ms timer had run');
});

scenario('browser_navigate stays on the granted origin, and an old ref is stale, never another element', async () => {
  const snap = H.ok(await call('browser_snapshot', { tab: W.tabs.compose }));
  const oldRef = refOf(snap, 'Save draft');
  const saves = await W.compose.evaluate(() => window.__draftSaves ?? 0);
  H.ok(await call('browser_navigate', { tab: W.tabs.compose, url: `${W.sites.originA}/mcp-compose.html?again=1` }), 'same origin');
  await W.compose.waitForURL(/again=1/, { timeout: 10000 });
  const stale = await call('browser_act', { tab: W.tabs.compose, ref: oldRef, action: 'click' });
  assert.match(String(H.errorCode(stale)), /^stale_/, JSON.stringify(stale.structuredContent));
  assert.equal(await W.compose.evaluate(() => window.__draftSaves ?? 0), 0, `nothing was clicked (${saves} before the navigation)`);
  const away = await call('browser_navigate', { tab: W.tabs.compose, url: `${W.sites.originB}/mcp-compose.html` });
  assert.ok(away.isError, 'another origin is refused');
  assert.ok(W.compose.url().startsWith(W.sites.originA));
});

// ---- bad arguments ----------------------------------------------------------------------------------

scenario('bad arguments are JSON-RPC invalid params (-32602), and the session goes on', async () => {
  const invalid = (e) => e instanceof H.SDK.McpError && e.code === H.SDK.ErrorCode.InvalidParams;
  await assert.rejects(call('browser_snapshot', {}), invalid, 'no tab');
  await assert.rejects(call('browser_act', { tab: W.tabs.compose, ref: 'e1', action: 'explode' }), invalid, 'no such action');
  await assert.rejects(call('browser_wait', { id: 42 }), invalid, 'id of the wrong type');
  await assert.rejects(call('browser_fly', {}), (e) => e instanceof H.SDK.McpError
    && [H.SDK.ErrorCode.InvalidParams, H.SDK.ErrorCode.MethodNotFound].includes(e.code), 'no such tool');
  // A well-formed call to a tab that is not granted is a tool error with a code, not a protocol one.
  const r = await call('browser_snapshot', { tab: 'b999:1' });
  assert.ok(r.isError && typeof H.errorCode(r) === 'string', JSON.stringify(r));
  H.ok(await call('browser_tabs'), 'the session still works');
});

// ---- handoffs: the person decides in the app ------------------------------------------------------

scenario('browser_handoff → a card in Needs you → the person presses Done → browser_wait says done', async () => {
  const message = `Sign in to the mail page for the e2e test ${Date.now() % 100000}`;
  const r = H.ok(await call('browser_handoff', { tab: W.tabs.compose, reason: 'login', message }), 'handoff');
  const { id, state } = r.structuredContent;
  assert.equal(state, 'waiting');
  assert.ok(id);
  const pending = H.ok(await call('browser_wait', { id, timeoutMs: 200 }), 'short wait');
  assert.equal(pending.structuredContent.state, 'waiting', 'still waiting after a short wait');
  await atspi('wait-label', message);
  await atspi('press', 'Done');
  const done = H.ok(await call('browser_wait', { id, timeoutMs: 15000 }), 'wait');
  assert.equal(done.structuredContent.id, id);
  assert.equal(done.structuredContent.state, 'done', JSON.stringify(done.structuredContent));
});

scenario('cancelling a browser_wait mid-call ends that call; the session goes on; Cancel Task in the app ends the handoff', async () => {
  const message = `Scan the code for the e2e test ${Date.now() % 100000}`;
  const { id } = H.ok(await call('browser_handoff', { tab: W.tabs.compose, reason: 'qr', message })).structuredContent;
  const controller = new AbortController();
  // Aborted once the request has gone out to the relay (so the cancellation has a call to end).
  const sent = W.agent.sent((m) => m.method === 'tools/call' && m.params?.name === 'browser_wait',
                            'the browser_wait request to be written to the relay');
  const waiting = call('browser_wait', { id, timeoutMs: 60000 }, { signal: controller.signal });
  await sent;
  controller.abort(new Error('the agent changed its mind'));
  await assert.rejects(waiting, /changed its mind/);
  H.ok(await call('browser_tabs'), 'the session still works');
  const still = H.ok(await call('browser_wait', { id, timeoutMs: 100 }));
  assert.equal(still.structuredContent.state, 'waiting', 'cancelling the wait does not cancel the handoff');
  await atspi('wait-label', message);
  await atspi('press', 'Cancel Task');
  const ended = H.ok(await call('browser_wait', { id, timeoutMs: 15000 }));
  assert.match(ended.structuredContent.state, /^cancell?ed$/, JSON.stringify(ended.structuredContent));
});

// ---- stop, resume, pause ---------------------------------------------------------------------------

// Another agent, as far as the app can tell: its relay launched by a process of its own (a shell
// that stays its parent), not by this test process. Two relays this process launches itself are
// two sessions of one agent, which a pause holds together (docs/agents.md, "What identifies an
// agent").
const ownProcess = { command: '/bin/sh', args: ['-c', '"$0" "$@"; exit $?', H.RELAY] };

const stopped = async (agent = W.agent) => H.errorCode(await agent.call('browser_snapshot', { tab: W.tabs.compose })) === 'stopped';
const works = async (agent = W.agent) => !(await agent.call('browser_snapshot', { tab: W.tabs.compose })).isError;

scenario('browser_stop stops every call until the person resumes in the app; Stop All in the app does the same', async () => {
  H.ok(await call('browser_stop', { reason: 'e2e: the agent stops itself' }), 'browser_stop');
  assert.ok(await stopped(), 'a call after browser_stop is refused as stopped');
  // Resume All, or a stopped browser's own Resume; never an agent's.
  await pressMatching(/^(Resume All|Resume (?!.*mcp-e2e).*)$/);
  // The person's press reaches the engine and then the browser: the agent asks until it works.
  await until(works, { timeout: 15000, what: 'calls to work again after Resume' });

  await atspi('press', 'Stop All');
  await until(stopped, { timeout: 15000, what: 'calls to be refused as stopped after Stop All' });
  await atspi('press', 'Resume All');
  await until(works, { timeout: 15000, what: 'calls to work again after Resume All' });
});

scenario('pausing one agent in the Agents page leaves the other at work; Resume lets it act again', async () => {
  W.other = await H.connectAgent({ name: 'mcp-e2e-two', socket: W.app.agentSocket, ...ownProcess });
  H.ok(await W.other.call('browser_tabs'), 'the second agent works');
  await H.showPage('Agents'); // a button on a page not shown takes no press
  await pressMatching(/^Pause .*mcp-e2e-one/);
  await until(async () => H.errorCode(await W.agent.call('browser_tabs')) === 'paused',
              { timeout: 10000, what: 'the paused agent\'s calls to answer paused' });
  assert.equal(H.errorCode(await call('browser_snapshot', { tab: W.tabs.compose })), 'paused');
  H.ok(await W.other.call('browser_snapshot', { tab: W.tabs.compose }), 'the other agent is not paused');
  await pressMatching(/^Resume .*mcp-e2e-one/);
  await until(() => works(), { timeout: 10000, what: 'the agent to work again after Resume' });
  await W.other.close();
  W.other = null;
});

scenario('a pause holds for the agent: its new sessions — the same name, or the same agent process — answer paused until Resume in the app', async () => {
  const socket = W.app.agentSocket;
  await H.showPage('Agents');
  await pressMatching(/^Pause .*mcp-e2e-one/);
  await until(async () => H.errorCode(await W.agent.call('browser_tabs')) === 'paused',
              { timeout: 10000, what: 'the paused agent\'s calls to answer paused' });

  // The agent hangs up and comes back, as an agent told "paused" might: a new MCP session under
  // another name from the same agent process (this one launches its relay), and one under its own
  // name from another process. Neither gets round the pause; another agent is not held by it.
  await W.agent.close();
  W.agent = null;
  const renamed = await H.connectAgent({ name: 'mcp-e2e-renamed', socket });
  const again = await H.connectAgent({ name: 'mcp-e2e-one', socket, ...ownProcess });
  const stranger = await H.connectAgent({ name: 'mcp-e2e-stranger', socket, ...ownProcess });
  try {
    for (const [agent, how] of [[renamed, 'the same agent process'], [again, 'the same name']]) {
      const r = await agent.call('browser_snapshot', { tab: W.tabs.compose });
      assert.equal(H.errorCode(r), 'paused', `a new session from ${how}: ${JSON.stringify(r.structuredContent)}`);
    }
    H.ok(await stranger.call('browser_snapshot', { tab: W.tabs.compose }), 'another agent is not paused');

    // One Resume, on any of its rows, lets every session of the agent act again.
    await pressMatching(/^Resume .*mcp-e2e/);
    await until(() => works(again), { timeout: 10000, what: 'the agent\'s new session to work after Resume' });
    assert.ok(await works(renamed), 'the other session of the agent goes on too');
  } finally {
    await renamed.close();
    await stranger.close();
    W.agent = again; // the tests after this one go on with the agent's newest session
  }
});

// ---- two browsers --------------------------------------------------------------------------------

scenario('two browsers paired at once: each tab names its browser and a call never falls back to the other', async () => {
  const b = await Browser.launch();
  W.browsers.push(b);
  await b.setPort(W.app.port);
  const pageB = await b.ctx.newPage();
  await pageB.goto(`${W.sites.originB}/mcp-compose.html`);
  const popupB = await b.popup(pageB);
  await pairInApp(b, popupB); // a second profile of the same extension: "Add as another profile" is the default
  await b.grant(popupB, { pages: [pageB], preset: 'control', label: 'MCP e2e B' });
  await popupB.close();

  const listed = await until(async () => {
    const r = await call('browser_tabs');
    const tabs = H.structuredOf(r)?.tabs ?? [];
    const tb = tabs.find((t) => (t.url ?? '').startsWith(W.sites.originB));
    return tb ? tabs : null;
  }, { timeout: 15000, what: 'browser_tabs to list browser B\'s tab' });
  const tA = W.tabs.compose;
  const tB = listed.find((t) => (t.url ?? '').startsWith(W.sites.originB)).tab;
  const [bA, idA] = tA.split(':');
  const [bB, idB] = tB.split(':');
  assert.notEqual(bA, bB, `the two tabs name two browsers: ${tA}, ${tB}`);

  // Each call lands in its own browser.
  const snapB = H.ok(await call('browser_snapshot', { tab: tB }), 'B snapshot');
  H.ok(await call('browser_act', { tab: tB, ref: refOf(snapB, 'Subject'), action: 'fill', value: 'typed in B' }), 'B fill');
  assert.equal(await pageB.inputValue('#subject'), 'typed in B');
  assert.notEqual(await W.compose.inputValue('#subject'), 'typed in B', 'nothing typed in A');
  // A browser's tab number under the other browser's name is not that tab.
  if (idA !== idB) {
    assert.ok((await call('browser_snapshot', { tab: `${bB}:${idA}` })).isError, `${bB}:${idA} is not A's tab`);
    assert.ok((await call('browser_snapshot', { tab: `${bA}:${idB}` })).isError, `${bA}:${idB} is not B's tab`);
  }

  // Browser B goes away: its tab is no longer listed, a call to it fails, and nothing is done in
  // A instead.
  const aSubject = await W.compose.inputValue('#subject');
  await b.close();
  W.browsers.splice(W.browsers.indexOf(b), 1);
  await until(async () => {
    const tabs = H.structuredOf(H.ok(await call('browser_tabs')))?.tabs ?? [];
    return !tabs.some((t) => t.tab === tB);
  }, { timeout: 10000, what: 'browser_tabs to drop the closed browser\'s tab' });
  const started = Date.now();
  const fill = await call('browser_act', { tab: tB, ref: refOf(snapB, 'Subject'), action: 'fill', value: 'must not land in A' },
                          { timeout: 60000 });
  console.log(`# a call to the closed browser's tab failed after ${Date.now() - started} ms: ${H.errorCode(fill)}`);
  assert.ok(fill.isError, 'a call to the closed browser fails');
  assert.equal(typeof H.errorCode(fill), 'string');
  assert.equal(await W.compose.inputValue('#subject'), aSubject, 'and did nothing in the other browser');
  H.ok(await call('browser_snapshot', { tab: tA }), 'browser A still works');
}, { timeout: 120000 });

// Issue 16: the person finds what the agent did in Activity's sessions, as a screen reader reads
// it: the agent's session, its steps and the holds it asked the person about (approved above).
scenario('the trace browser: Activity lists the agent\'s session with its steps and what it asked the person (AT-SPI)', async () => {
  await atspi('page', 'Activity');
  const summary = await atspi('wait-label', 'asked you,');
  assert.match(summary, /^\d+ steps? · \d+ asked you, \d+ approved/, summary);
  const [, steps, asked, approved] = /^(\d+) steps? · (\d+) asked you, (\d+) approved/.exec(summary);
  assert.ok(Number(steps) >= Number(asked) && Number(asked) >= Number(approved) && Number(approved) >= 1, summary);
  const labels = (await atspi('labels')).split('\n').map((l) => l.trim());
  assert.ok(labels.some((l) => /^mcp-e2e-/.test(l)), `an agent's name on its session: ${labels.filter((l) => /mcp|e2e|step/.test(l)).join(' | ')}`);
  await atspi('page', 'Needs You');
});

// Issue 16: an act that failed on a page leaves the person a masked picture of the tab in the
// trace (the app asks the browser for it; the agent never gets it), which `chaperone report`
// exports — run as a person runs it, beside the running app.
scenario('a failing act: its step in the trace has a picture of the tab, and `chaperone report` exports it', async () => {
  const snap = H.ok(await call('browser_snapshot', { tab: W.tabs.compose }));
  const ref = refOf(snap, 'Save draft');
  assert.ok(ref, 'Save draft has a ref');
  await W.compose.evaluate(() => document.getElementById('save-draft').remove());
  const failed = await call('browser_act', { tab: W.tabs.compose, ref, action: 'click' });
  assert.equal(H.errorCode(failed), 'stale_node', JSON.stringify(failed.structuredContent));
  assert.ok(!JSON.stringify(failed).includes('image/jpeg'), 'the agent gets no picture');

  const out = join(W.app.home, 'report.json');
  const step = await until(async () => {
    await promisify(execFile)(APP, ['report', '--data-dir', join(W.app.home, 'data', 'chaperone'), '--last', '10',
      '-o', out], { env: { ...process.env, GSETTINGS_BACKEND: 'memory' } });
    const report = JSON.parse(await readFile(out, 'utf8'));
    const steps = (report.sessions ?? []).flatMap((s) => s.steps ?? []);
    const found = steps.filter((x) => x.tool === 'browser_act' && x.error_code === 'stale_node').at(-1);
    return found?.shot?.bytes > 0 ? found : null;
  }, { what: 'the failing step, with its picture, in the exported trace', timeout: 20000 });
  assert.equal(step.shot.type, 'image/jpeg');
  assert.ok(step.shot.width > 0 && step.shot.height > 0, JSON.stringify(step.shot));
  await W.compose.reload();
});
