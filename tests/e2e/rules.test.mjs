// SPDX-License-Identifier: GPL-3.0-or-later
// "Always allow" end to end: the official MCP SDK client drives the real relay and app under Xvfb,
// the real extension in real Chromium holds the agent's Save draft, and the person presses
// "Always Allow" on the card through the accessibility tree. The agent's next Save draft on that
// site runs with no card; the Grants page lists the rule, used once; Revoke there brings the card
// back.

import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { after, before, test } from 'node:test';

import { startFixtureServer } from '../fixtures/serve.mjs';
import { atspi, display, startApp, whyNot } from './app-harness.mjs';
import { Browser, browserWhyNot, domWait } from './browser-harness.mjs';
import * as H from './mcp-harness.mjs';
import { until } from '../lib/until.mjs';

const skip = whyNot() ?? browserWhyNot() ?? H.mcpWhyNot() ?? false;
if (skip) console.log(`# skipped: ${skip}`);

const W = {};
const call = (tool, args = {}) => W.agent.call(tool, args);
const refOf = (result, name) => H.nodesOf(result).find((n) => n.name === name)?.ref
  ?? assert.fail(`no "${name}" in the snapshot`);
const saves = () => W.compose.evaluate(() => window.__draftSaves ?? 0);

before(async () => {
  if (skip) return;
  W.sites = await startFixtureServer();
  W.app = await startApp();
  W.browser = await Browser.launch();
  await W.browser.setPort(W.app.port);
  W.compose = await W.browser.ctx.newPage();
  await W.compose.goto(`${W.sites.originA}/mcp-compose.html`);
  const popup = await W.browser.popup(W.compose);
  const code = await W.browser.startPairing(popup);
  assert.equal(await atspi('wait-label', display(code)), display(code));
  await atspi('press', 'Pair');
  await W.browser.waitForState('connected');
  await W.browser.grant(popup, { pages: [W.compose], preset: 'control', label: 'Rules e2e' });
  await popup.close();
  await W.compose.bringToFront();
  W.agent = await H.connectAgent({ name: 'rules-e2e', runtimeDir: W.app.runtimeDir });
  W.tab = await until(async () => {
    const r = H.ok(await call('browser_tabs'), 'browser_tabs');
    return (H.structuredOf(r).tabs ?? []).find((t) => (t.url ?? '').includes('/mcp-compose.html'))?.tab;
  }, { timeout: 15000, what: 'browser_tabs to list the granted compose tab' });
}, { timeout: 120000 });

after(async () => {
  await W.agent?.close();
  await W.browser?.close();
  await W.app?.stop();
  if (W.app) await rm(W.app.home, { recursive: true, force: true });
  await W.sites?.close();
});

/** The agent types a subject (so no two clicks in a row are the same) and presses Save draft. */
async function saveDraft(subject) {
  const snap = H.ok(await call('browser_snapshot', { tab: W.tab }), 'snapshot');
  H.ok(await call('browser_act', { tab: W.tab, ref: refOf(snap, 'Subject'), action: 'fill', value: subject }), 'fill');
  return call('browser_act', { tab: W.tab, ref: refOf(snap, 'Save draft'), action: 'click' });
}

test('Always Allow on a held Save draft: the next one runs with no card, the rule shows used once, Revoke brings the card back', { skip, timeout: 120000 }, async () => {
  try {
    const host = new URL(W.sites.originA).hostname;
    const before0 = await saves();

    // Held: the card offers "Always allow" for this site and this agent.
    const held = await saveDraft('First');
    assert.equal(held.structuredContent?.held, true, JSON.stringify(held.structuredContent));
    assert.equal(held.structuredContent.kind, 'write');
    await atspi('wait-label', `In any browser, always allow changes on ${host} by rules-e2e`);
    await atspi('press', 'Always Allow');
    const done = H.ok(await call('browser_wait', { id: held.structuredContent.holdId, timeoutMs: 15000 }), 'wait');
    assert.equal(done.structuredContent.state, 'done', JSON.stringify(done.structuredContent));
    await domWait(W.compose, (n) => (window.__draftSaves ?? 0) >= n, before0 + 1, { timeout: 5000, what: 'the approved Save draft' });

    // The next one: done at once, saved, and no card came.
    const ran = H.ok(await saveDraft('Second'), 'the ruled Save draft');
    assert.notEqual(ran.structuredContent.held, true, JSON.stringify(ran.structuredContent));
    assert.equal(ran.structuredContent.ok, true, JSON.stringify(ran.structuredContent));
    await domWait(W.compose, (n) => (window.__draftSaves ?? 0) >= n, before0 + 2, { timeout: 5000, what: 'the ruled Save draft' });
    assert.equal(await atspi('absent', 'Approve'), '', 'no card for it');

    // The Grants page lists the rule, used once; Revoke takes it away.
    await atspi('page', 'Grants');
    await atspi('wait-label', `Changes on ${host}`);
    await atspi('wait-label', 'Used 1 time');
    await atspi('press', `Revoke the rule for ${host}`);
    await atspi('absent', `Revoke the rule for ${host}`);

    // And the next Save draft is held for the person again.
    await atspi('page', 'Needs You');
    const again = await saveDraft('Third');
    assert.equal(again.structuredContent?.held, true, JSON.stringify(again.structuredContent));
    await atspi('wait-label', 'Button: Save draft');
    await atspi('press', 'Decline');
    const declined = H.ok(await call('browser_wait', { id: again.structuredContent.holdId, timeoutMs: 15000 }), 'wait');
    assert.equal(declined.structuredContent.state, 'declined');
    assert.equal(await saves(), before0 + 2, 'nothing more was saved');
  } catch (err) {
    console.log(W.app?.log.slice(-200).join('\n'));
    console.log(W.agent?.stderr().slice(-2000));
    throw err;
  }
});
