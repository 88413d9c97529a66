// SPDX-License-Identifier: GPL-3.0-or-later
// The trace browser walked as a screen reader walks it: an agent (the official MCP SDK through
// the real relay) works in the real app under Xvfb, so its session is recorded step by step;
// then, through the accessibility tree only, Activity is opened, the session's row is found by
// the name a screen reader reads and opened with its own action (no pointer, no key), its steps
// are read from their rows' labels, and Back returns to the sessions.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { atspi, startApp, whyNot } from './app-harness.mjs';
import * as H from './mcp-harness.mjs';

const skip = whyNot() ?? H.mcpWhyNot() ?? false;
if (skip) console.log(`# skipped: ${skip}`);

const AGENT = 'trace-walker';
// How the row names the agent: the name it gave, and its version.
const ROW = `^${AGENT} 1\\.0\\.0, `;
const W = {};

// "ROLE<tab>NAME<tab>ACTIONS" lines from the driver, as objects.
const parseNodes = (text) => text.split('\n').filter(Boolean).map((line) => {
  const [role, name, actions] = line.split('\t');
  return { role, name, actions: actions ? actions.split(',') : [] };
});

before(async () => {
  if (skip) return;
  // Opening a timeline through AT-SPI leaves GTK 4.8 with 136 B to 20 KB unfreed at exit in about
  // one run in three, on a stack of malloc and g_malloc only (GTK has no frame pointers, so
  // LeakSanitizer cannot say whose); valgrind shows no chp_ frame in it. Memory errors stay fatal.
  W.app = await startApp({ noLeakCheck: 'a timeline opened through AT-SPI: GTK 4.8 leaks on exit, sometimes (docs/architecture.md, Tests)' });
  // No browser is paired: every call is answered by the app itself, and every one is a step.
  W.agent = await H.connectAgent({ name: AGENT, version: '1.0.0', runtimeDir: W.app.runtimeDir });
  const tabs = await W.agent.call('browser_tabs');
  assert.notEqual(tabs.isError, true, JSON.stringify(tabs));
  const snapshot = await W.agent.call('browser_snapshot', { tab: 'b1:7' });
  assert.equal(snapshot.isError, true, 'no such tab: the step fails');
  await W.agent.call('browser_tabs');
  // The agent leaves: its trace ends.
  await W.agent.close();
}, { timeout: 120000 });

after(async () => {
  await W.agent?.close();
  await W.app?.stop();
});

test('Activity by the accessibility tree: a row opens its timeline by its action, Back returns',
     { skip, timeout: 120000 }, async () => {
  try {
    await atspi('page', 'Activity');

    // The session's row: a button named with what it shows, with an action that opens it.
    const rows = parseNodes(await atspi('nodes', ROW));
    assert.equal(rows.length, 1, JSON.stringify(rows));
    assert.equal(rows[0].role, 'push button', JSON.stringify(rows[0]));
    assert.match(rows[0].name, /^trace-walker 1\.0\.0, Completed\. .*3 steps, 1 error/,
                 'agent, outcome, steps and errors: what the row shows');
    assert.deepEqual(rows[0].actions, ['row.open'], JSON.stringify(rows[0]));
    // Nothing of the session's steps is in the tree before it is opened.
    const before = (await atspi('labels')).split('\n');
    assert.ok(!before.includes('browser_snapshot'), 'no step is shown yet');

    // Opened as a screen reader opens it: the row's own action.
    await atspi('activate', ROW);

    // The timeline (its steps are read when a session is opened): each step's words, in order, as
    // a screen reader reads the labels of its row: number, time, tool, outcome.
    await atspi('wait-label', 'browser_snapshot');
    const words = (await atspi('labels')).split('\n');
    const tools = words.filter((w) => /^browser_/.test(w));
    assert.deepEqual(tools, ['browser_tabs', 'browser_snapshot', 'browser_tabs'],
                     words.join(' | '));
    const at = (tool, from = 0) => words.indexOf(tool, from);
    const second = at('browser_snapshot');
    assert.equal(words[at('browser_tabs') + 1], 'OK', `step 1 reads OK: ${words.join(' | ')}`);
    assert.match(words[second + 1], /^(Error|Refused)/,
                 `step 2 reads as failed: ${words.join(' | ')}`);
    assert.ok(words.lastIndexOf('1', at('browser_tabs')) >= 0 &&
              words.lastIndexOf('2', second) > at('browser_tabs'),
              `each step is numbered before its tool: ${words.join(' | ')}`);

    // Back to the sessions, as a screen reader presses the button: the steps leave the tree and
    // the session's row is there to open again.
    await atspi('press', 'Back to the sessions');
    await atspi('no-label', 'browser_snapshot');
    assert.deepEqual(parseNodes(await atspi('nodes', ROW)).map((n) => n.actions), [['row.open']]);
    assert.equal(W.app.crash(), null);
  } catch (err) {
    console.log(W.app?.log.slice(-200).join('\n'));
    // What the tree held: every named node but the labels, and the labels.
    console.log(await atspi('nodes', '.').catch((e) => String(e)));
    console.log(await atspi('labels').catch((e) => String(e)));
    throw err;
  }
});
