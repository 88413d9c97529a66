// SPDX-License-Identifier: GPL-3.0-or-later
// A person's tasks on real open-source web apps, installed from npm and served on loopback
// (tests/realsites/apps.mjs: TiddlyWiki, MailDev, Node-RED), done by a scripted agent through
// Chaperone's MCP interface with the official SDK: the relay → the core engine harness → the real
// extension in real Chromium → the app's page. Each task is judged by the app's own state (the
// wiki's HTTP API, the mail server's inbox, the flow runtime's deployed flows), never by what the
// agent believes. The person's approvals (a plan before a write, a held delete) go through the
// engine's JSON lines; realsites-app.test.mjs presses them in the real app through AT-SPI.
// bench/realsite-bench.mjs runs the same tasks beside Playwright MCP and Chrome DevTools MCP.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { BENCH_APPS, startApps, suiteAppsWhyNot } from '../realsites/apps.mjs';
import { SUITE_TASKS, TASKS, runTask } from '../realsites/tasks.mjs';
import { chaperoneWhyNot, startChaperoneWorld } from '../realsites/world.mjs';
import * as H from './mcp-harness.mjs';

const skip = suiteAppsWhyNot() ?? await chaperoneWhyNot() ?? false;
if (skip) console.log(`# skipped: ${skip}`);

const W = {};

before(async () => {
  if (skip) return;
  // Side by side; when one fails to start, startApps stops those that did.
  W.running = await startApps([...BENCH_APPS, 'tiddlywiki-cm', 'nodered-dashboard', 'etherpad', 'verdaccio']);
  W.apps = W.running.apps;
  W.world = await startChaperoneWorld(Object.values(W.apps), { name: 'realsites-engine' });
}, { timeout: 120000 });

after(async () => {
  await W.world?.stop();
  await W.running?.stop();
});

/** Runs `task` once through Chaperone; a failure says why and what the relay said. */
async function run(task) {
  const app = W.apps[task.app];
  await W.world.pages[task.app].bringToFront();
  const out = await runTask(task, W.world.driver, app);
  if (!out.ok) console.log(W.world.agent.stderr().slice(-1500));
  console.log(`# ${task.title}: ${out.ok ? 'done' : 'FAILED'} in ${out.calls} calls, ${out.bytes} bytes, `
    + `${out.approvals} approval(s), ${Math.round(out.ms)} ms`);
  assert.equal(out.why, null, `${task.title}: ${out.why}`);
  return out;
}

test('TiddlyWiki: search a word, open the first result, and read the text the server holds', { skip, timeout: 60000 }, async () => {
  const out = await run(TASKS.wikiRead);
  assert.equal(out.approvals, 0, 'a read asks the person nothing');
});

// Issue 17: the same read through the wiki's own API, from inside its page: learned from the
// calls the page makes as it loads, then remembered — the second run starts from the site's
// memory (no learn) and its first snapshot would carry the arrival card.
test('TiddlyWiki through its own API: learned once, then read from memory; the text is the server\'s', { skip, timeout: 90000 }, async () => {
  const first = await run(TASKS.wikiApiRead);
  assert.equal(first.approvals, 0, 'a read asks the person nothing');
  const again = await run(TASKS.wikiApiRead);
  assert.ok(again.calls < first.calls, `the second run starts from memory: ${again.calls} vs ${first.calls} calls`);
  // Another agent session coming to the wiki: its first snapshot starts with the arrival card.
  const later = await H.connectAgent({ name: 'realsites-later', socket: W.world.world.socket, timeoutMs: 20000 });
  try {
    const tabs = H.structuredOf(await later.call('browser_tabs')).tabs ?? [];
    const tab = tabs.find((t) => (t.url ?? '').startsWith(W.apps.tiddlywiki.origin))?.tab;
    assert.ok(tab, 'the wiki\'s tab is granted');
    const first = H.textOf(await later.call('browser_snapshot', { tab }));
    assert.match(first, /^Chaperone remembers this site/, first.slice(0, 300));
    assert.match(first, /GET \/recipes\/default\/tiddlers\.json/);
    const second = H.textOf(await later.call('browser_snapshot', { tab }));
    assert.doesNotMatch(second, /Chaperone remembers this site/, 'once a session');
  } finally {
    await later.close();
  }
});

// The body editor is a script-written about:blank iframe, part of the page; "Confirm changes to
// this tiddler" is a save the plan covers (issue 15, items 2 and 3).
test('TiddlyWiki: a new tiddler with a title and body, saved, is on the server, with one approval (the plan)',
  { skip, timeout: 60000 },
  async () => {
    const out = await run(TASKS.wikiWrite);
    assert.ok(out.approvals <= 1, `at most one approval: ${out.approvals}`);
  });

// The wiki's CodeMirror 5 editor: what is filled is what CodeMirror holds and the server saves,
// lines and indentation included (issue 15, item 2).
test('TiddlyWiki with its CodeMirror editor: a body of several lines is saved as typed, with one approval (the plan)',
  { skip, timeout: 60000 },
  async () => {
    const out = await run(SUITE_TASKS.wikiCodeMirrorWrite);
    assert.ok(out.approvals <= 1, `at most one approval: ${out.approvals}`);
  });

// Typing into the field the wiki focused, and its own save shortcut (issue 15, item 2).
test('TiddlyWiki by keyboard: the title typed where the focus is and Control+Enter save the tiddler, with one approval',
  { skip, timeout: 60000 },
  async () => {
    const out = await run(SUITE_TASKS.wikiKeys);
    assert.ok(out.approvals <= 1, `at most one approval: ${out.approvals}`);
  });

// Control Panel → Settings: a checkbox, a radio button and a select, each the wiki's setting on
// its server afterwards (issue 15, item 2).
test('TiddlyWiki\'s settings: a checkbox, a radio button and a select set through Chaperone are saved by the wiki, with one approval',
  { skip, timeout: 60000 },
  async () => {
    const out = await run(SUITE_TASKS.wikiSettings);
    assert.ok(out.approvals <= 1, `at most one approval: ${out.approvals}`);
  });

// The wiki's Delete asks "Do you wish to delete the tiddler …?" with window.confirm after the
// click. Before, nobody answered it (here the test's browser answered Cancel; in a person's
// browser the page stopped behind their tab) and the tiddler stayed. The person's approval of
// the held delete now answers the page's own question OK.
test('TiddlyWiki: a delete the person approved goes through the wiki\'s own confirm dialog; the tiddler is gone',
  { skip, timeout: 60000 }, async () => {
    const out = await run(SUITE_TASKS.wikiDelete);
    assert.ok(out.approvals <= 2, `the draft and the delete: ${out.approvals}`);
  });

// A tag's order set by dragging one of its tiddlers above another in the tag pill's dropdown
// (browser_act's drag, by HTML's drag and drop on the wiki's own links): the wiki saves the order
// in the tag's tiddler, on the server.
test('TiddlyWiki: a tag\'s tiddlers reordered by a drag in its dropdown; the server keeps the order',
  { skip, timeout: 60000 }, async () => {
    const out = await run(SUITE_TASKS.wikiTagOrder);
    assert.equal(out.approvals, 0, `a drop on a tiddler's link asks nothing: ${out.approvals}`);
  });

test('MailDev: search the inbox, open the message, read the body the server holds', { skip, timeout: 60000 }, async () => {
  const out = await run(TASKS.mailRead);
  assert.ok(out.approvals <= 1, `at most the one hold below: ${out.approvals}`);
});

// The list item's accessible name carries the preview, "…please pay by Friday": a command's long
// name is judged by what it says first (content/outward.js), so opening it is no payment.
test('MailDev: reading a message asks the person nothing',
  { skip, timeout: 60000 },
  async () => {
    const out = await run(TASKS.mailRead);
    assert.equal(out.approvals, 0, 'a read asks the person nothing');
  });

test('MailDev: a delete is held for the person; approved, the message is gone from the server and only it', { skip, timeout: 60000 }, async () => {
  const before = W.world.person.log.length;
  const out = await run(TASKS.mailDelete);
  assert.equal(out.approvals, 1, 'one approval: the held delete');
  assert.ok(W.world.person.log.slice(before).some((e) => e.hold), 'the person approved a hold');
});

test('Node-RED: search the flows and read the matching nodes the runtime holds', { skip, timeout: 60000 }, async () => {
  const out = await run(TASKS.flowRead);
  assert.equal(out.approvals, 0, 'a read asks the person nothing');
});

test('Node-RED: add a flow and deploy it; the runtime has it, with at most one approval', { skip, timeout: 60000 }, async () => {
  const out = await run(TASKS.flowAdd);
  assert.ok(out.approvals <= 1, `at most one approval: ${out.approvals}`);
});

test('Node-RED: a function node\'s code replaced in its Monaco editor is what the runtime deploys, with one approval (the plan)',
  { skip, timeout: 60000 }, async () => {
    const out = await run(SUITE_TASKS.flowFunctionEdit);
    assert.ok(out.approvals <= 1, `at most one approval: ${out.approvals}`);
  });

// A flow shared as JSON: the editor's import shortcut and dialog, then a click on the canvas to
// put the nodes down — it must land on the drawing inside the canvas's focusable frame, where the
// editor listens, as a person's click does (before, it went to the frame and the nodes stayed
// on the pointer, so Deploy had nothing to deploy).
test('Node-RED: a flow imported from JSON, put down on the canvas and deployed is in the runtime, with one approval',
  { skip, timeout: 60000 }, async () => {
    const out = await run(SUITE_TASKS.flowImport);
    assert.ok(out.approvals <= 1, `at most one approval: ${out.approvals}`);
  });

// A node dragged from the palette onto the canvas (browser_act's drag, by the pointer: jQuery UI's
// draggable and droppable) and deployed: it is in the runtime, on the flow the canvas showed.
test('Node-RED: a node dragged from the palette onto the canvas and deployed is in the runtime, with one approval',
  { skip, timeout: 60000 }, async () => {
    const out = await run(SUITE_TASKS.flowDrag);
    assert.ok(out.approvals <= 1, `at most one approval: ${out.approvals}`);
  });

// An icon without a name, and the tooltip Node-RED draws 750 ms after the pointer enters it: the
// hover reaches the editor's own handlers, and the snapshot that waits for the tooltip's words
// shows the line they are on first, though the page's long text would cut it (issue 15, item 2).
test('Node-RED: hovering an unnamed sidebar icon shows its tooltip, read as the editor names the tab', { skip, timeout: 60000 }, async () => {
  const out = await run(SUITE_TASKS.flowSidebarTooltip);
  assert.equal(out.approvals, 0, 'a read asks the person nothing');
});

// A Vue app (Node-RED Dashboard 2.0, Vuetify): its fields keep their values in Vue's state, a date
// is a native date input, a dropdown opens a menu over the page, a slider's thumb moves with the
// arrow keys (pressed until the answer says it is there: more than three presses in a row, which
// the loop guard allows for keys that only move), a table's row is clicked (listed as a row: nothing
// in a Vue table's markup says it can be); the runtime must hold what was typed and picked
// (issue 15, item 2). Each fill
// answers settled: Vuetify keeps an indeterminate progress bar at height 0 in every field, and
// it is no spinner. The plan covers the fields and the switches; "Book" commits the person to
// someone else, as a payment does, so it is held and approved at the moment: two approvals.
test('Node-RED Dashboard (Vue): a booking (text, date, number, checkbox, switch), a dropdown, a slider, a radio and a table row reach the runtime',
  { skip, timeout: 60000 }, async () => {
    const out = await run(SUITE_TASKS.dashboardBooking);
    assert.equal(out.approvals, 2, `the plan, then the held Book: ${out.approvals}`);
  });

// Etherpad's editor is the body of an about:srcdoc frame inside another, role "application"
// (issue 15, item 2: contenteditable in frames that inherit the page's origin, on a real page): a
// line added at its end is in the pad on the server. The pad saves as it is typed in: no control
// commits it, so nothing is held and nothing asked.
test('Etherpad: a line typed at the end of a pad (its editor a frame\'s body in a frame) is in the pad on the server',
  { skip, timeout: 60000 }, async () => {
    const out = await run(SUITE_TASKS.padAppend);
    assert.equal(out.approvals, 0, `typing asks nothing: ${out.approvals}`);
  });

// A React (MUI) combobox whose suggestions come from the server a moment after the typing: the
// suggestion is named as it reads (name, description, version apart), clicked, and the package's
// README read as the registry holds it.
test('Verdaccio: a package found in the search box\'s suggestions, opened, and its README read', { skip, timeout: 60000 }, async () => {
  const out = await run(SUITE_TASKS.registryRead);
  assert.equal(out.approvals, 0, 'a read asks the person nothing');
});

// The pad's chat sends on Enter with no Send button beside it: a message to others, held; the
// person's one approval sends it (it is in the pad's chat on the server).
test('Etherpad: a chat message (Enter in a box with no Send button) is held, and sent once approved', { skip, timeout: 60000 }, async () => {
  const out = await run(SUITE_TASKS.padChat);
  assert.equal(out.approvals, 1, `the held send: ${out.approvals}`);
});

// Issue 16: what the agent did above is its trace, masked; the same agent, connecting again
// later, reads its earlier steps on the wiki with browser_history (the official SDK as the agent).
test('traces: the tasks above are in the trace file without a typed word; browser_history gives the agent its steps', { skip, timeout: 60000 }, async () => {
  const { readFile } = await import('node:fs/promises');
  const { join } = await import('node:path');
  // The body, as typed (the title is also the page's own words after the save: its editor is
  // named by it, and element names are kept).
  const typed = [TASKS.wikiWrite.body].filter(Boolean);
  assert.ok(typed.length > 0, 'the write task typed something');
  // The recorder's writes are batched: the file catches up with what was queued.
  const { until } = await import('../lib/until.mjs');
  const { dataDir } = W.world.world.engine;
  const bytes = async () => {
    const parts = await Promise.all(['traces.db', 'traces.db-wal'].map((f) => readFile(join(dataDir, f)).catch(() => Buffer.alloc(0))));
    return Buffer.concat(parts);
  };
  await until(async () => (await bytes()).includes('browser_act'), { timeout: 10000, what: 'the steps in traces.db' });
  const all = await bytes();
  for (const word of typed) assert.equal(all.includes(Buffer.from(word)), false, `"${word}" is not in the trace file`);

  const again = await H.connectAgent({ name: 'realsites-engine', socket: W.world.world.socket, timeoutMs: 20000 });
  try {
    const r = await again.call('browser_history', { site: new URL(W.apps.tiddlywiki.origin).host });
    assert.equal(r.isError, undefined, JSON.stringify(r).slice(0, 500));
    assert.ok(r.structuredContent.sessions >= 1, JSON.stringify(r.structuredContent));
    const text = H.textOf(r);
    assert.match(text, /browser_act fill textbox/);
    assert.match(text, /untrusted-page-content/);
    for (const word of typed) assert.equal(text.includes(word), false, `"${word}" is not given back`);
    const stranger = await H.connectAgent({ name: 'someone-else', socket: W.world.world.socket, timeoutMs: 20000 });
    try {
      const s = await stranger.call('browser_history', { site: new URL(W.apps.tiddlywiki.origin).host });
      assert.equal(s.structuredContent.sessions, 0, 'another agent sees none of it');
    } finally {
      await stranger.close();
    }
  } finally {
    await again.close();
  }
});
