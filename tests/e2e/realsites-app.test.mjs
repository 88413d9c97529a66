// SPDX-License-Identifier: GPL-3.0-or-later
// Real-site tasks through the real app, with the person's approvals pressed in it: the official
// MCP SDK launches chaperone-mcp, which reaches the real GTK app under Xvfb; the real extension
// in real Chromium is paired (Pair pressed through AT-SPI) and the apps' tabs are granted in its
// popup, as a person does. When the agent's delete of a mail in MailDev is held, the person
// reads the card in Needs You and presses Approve through the accessibility tree — nothing the
// agent can call — and the message is then gone from the mail server. The TiddlyWiki write, with
// its one plan approved through Approve Plan, waits for other branches' fixes (see below).

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { atspi, display, startApp, whyNot } from './app-harness.mjs';
import { Browser, browserWhyNot } from './browser-harness.mjs';
import * as H from './mcp-harness.mjs';
import { appsWhyNot, startApps } from '../realsites/apps.mjs';
import { ChaperoneDriver } from '../realsites/drivers.mjs';
import { TASKS, runTask } from '../realsites/tasks.mjs';

const skip = whyNot() ?? browserWhyNot() ?? H.mcpWhyNot() ?? appsWhyNot() ?? false;
if (skip) console.log(`# skipped: ${skip}`);

const W = {};

/** The person at the app: reads the card, presses its button through AT-SPI. */
const person = {
  log: [],
  async approveHold(holdId, held) {
    this.log.push({ hold: holdId, kind: held.kind, control: held.control });
    // The card names the control the agent wants to press (as the hold does: "Button: Delete email").
    await atspi('wait-label', held.control);
    await atspi('press', 'Approve');
  },
  async approvePlan(planId, summary) {
    this.log.push({ plan: planId });
    await atspi('wait-label', summary);
    await atspi('press', 'Approve Plan');
  },
};

before(async () => {
  if (skip) return;
  W.running = await startApps(['maildev', 'tiddlywiki']);
  W.apps = W.running.apps;
  W.app = await startApp();
  W.browser = await Browser.launch();
  await W.browser.setPort(W.app.port);
  W.pages = {};
  for (const app of Object.values(W.apps)) {
    W.pages[app.name] = await W.browser.ctx.newPage();
    await W.pages[app.name].goto(app.url);
  }
  const popup = await W.browser.popup(W.pages.maildev);
  const code = await W.browser.startPairing(popup);
  assert.equal(await atspi('wait-label', display(code)), display(code), 'the app shows the popup\'s code');
  await atspi('press', 'Pair');
  await W.browser.waitForState('connected');
  await W.browser.grant(popup, { pages: Object.values(W.pages), preset: 'control', extras: ['browser.tab.navigate'],
    label: 'Real-site tasks' });
  await popup.close();
  W.agent = await H.connectAgent({ name: 'realsites-app', runtimeDir: W.app.runtimeDir });
  W.driver = new ChaperoneDriver(W.agent, person);
  await W.driver.learnTabs(Object.values(W.apps).map((a) => a.origin));
}, { timeout: 120000 });

after(async () => {
  await W.agent?.close();
  await W.browser?.close();
  await W.app?.stop();
  await W.running?.stop();
});

async function run(task) {
  await W.pages[task.app].bringToFront();
  const out = await runTask(task, W.driver, W.apps[task.app]);
  console.log(`# ${task.title}: ${out.ok ? 'done' : 'FAILED'} in ${out.calls} calls, ${out.bytes} bytes, `
    + `${out.approvals} approval(s), ${Math.round(out.ms)} ms`);
  if (!out.ok) {
    console.log(W.app.log.slice(-60).join('\n'));
    console.log(W.agent.stderr().slice(-1500));
  }
  assert.equal(out.why, null, `${task.title}: ${out.why}`);
  assert.equal(W.app.crash(), null, W.app.crash() ?? '');
  return out;
}

test('MailDev: the agent\'s delete is held; the person presses Approve in the app; the mail server no longer has the message', { skip, timeout: 90000 }, async () => {
  const before = person.log.length;
  const out = await run(TASKS.mailDelete);
  const holds = person.log.slice(before).filter((e) => e.hold);
  assert.equal(holds.length, 1, `one card, approved in the app: ${JSON.stringify(person.log.slice(before))}`);
  assert.equal(holds[0].kind, 'delete', JSON.stringify(holds[0]));
  assert.equal(out.approvals, 1);
  assert.equal(await atspi('absent', 'Approve'), '', 'no hold card is left');
});

// TiddlyWiki's body editor is an about:blank iframe, part of the page, and "Confirm changes to
// this tiddler" a save: one plan, approved in the app, covers the whole write (issue 15).
test('TiddlyWiki: the write runs under one plan approved in the app (Approve Plan), and the tiddler is on the server',
  { skip, timeout: 90000 },
  async () => {
    const before = person.log.length;
    const out = await run(TASKS.wikiWrite);
    assert.deepEqual(person.log.slice(before).map((e) => Object.keys(e)[0]), ['plan'], 'one approval: the plan');
    assert.equal(out.approvals, 1);
  });
