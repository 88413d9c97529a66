// SPDX-License-Identifier: GPL-3.0-or-later
// A write through TiddlyWiki's own API (issue 17), end to end with the real wiki from npm
// (tests/realsites/apps.mjs): the official MCP SDK as the agent → the relay → the core engine
// harness → the real extension in real Chromium → TiddlyWiki 5 served on loopback. The wiki's
// server refuses a write without the `X-Requested-With: TiddlyWiki` header its own client sends
// (a CSRF guard). The person saves a tiddler in the page; the agent learns the PUT the page made,
// and its own PUT of a new tiddler is held for the person (a write no plan covers); the person
// approves; the extension sends it as the page sends its own, marker header included, and the
// wiki's own HTTP API shows the tiddler saved.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { until } from '../lib/until.mjs';
import { appsWhyNot, startTiddlyWiki } from '../realsites/apps.mjs';
import { chaperoneWhyNot, startChaperoneWorld } from '../realsites/world.mjs';
import * as H from './mcp-harness.mjs';

const skip = appsWhyNot() ?? await chaperoneWhyNot() ?? false;
if (skip) console.log(`# skipped: ${skip}`);

const W = {};

before(async () => {
  if (skip) return;
  W.wiki = await startTiddlyWiki();
  W.world = await startChaperoneWorld([W.wiki], { name: 'mcp-tiddlywiki-api' });
  W.agent = W.world.agent;
  W.tab = W.world.driver.tabOf(W.wiki);
  W.page = W.world.pages[W.wiki.name];
  await until(() => W.page.evaluate(() => !!globalThis.$tw?.wiki && !!globalThis.$tw?.syncer),
    { timeout: 20000, what: 'the wiki to start in the page' });
}, { timeout: 120000 });

after(async () => {
  await W.world?.stop();
  await W.wiki?.stop();
}, { timeout: 30000 });

test('an approved write through the wiki\'s own API saves, sent as the page sends its own', { skip, timeout: 90000 }, async () => {
  // The person saves a tiddler in the page: the wiki's client PUTs it, with its marker header.
  await W.page.evaluate(() => globalThis.$tw.wiki.addTiddler(new globalThis.$tw.Tiddler(
    { title: 'Person Note', text: 'Written in the page by the person.' })));
  await until(async () => (await W.wiki.tiddler('Person Note')) !== null, { timeout: 20000, what: 'the page\'s own save' });

  const learned = H.textOf(await W.agent.call('browser_api', { tab: W.tab, action: 'learn' }));
  const line = learned.split('\n').find((l) => / PUT \/recipes\/default\/tiddlers\/\{tiddler\}/.test(l));
  assert.ok(line, learned);
  const entryId = line.trim().split(' ')[0];

  const held = await W.agent.call('browser_api', { tab: W.tab, action: 'call', entryId,
    params: { tiddler: 'Agent Note' }, body: { title: 'Agent Note', text: 'Saved through the wiki\'s API.' } });
  assert.equal(held.structuredContent?.held, true, H.textOf(held));
  assert.equal(held.structuredContent.kind, 'write', 'a write no plan covers waits for the person');
  assert.equal(await W.wiki.tiddler('Agent Note'), null, 'nothing was sent before the person approved');

  await W.world.person.approveHold(held.structuredContent.holdId, held.structuredContent);
  const done = await W.agent.call('browser_wait', { id: held.structuredContent.holdId, timeoutMs: 30000 });
  assert.equal(done.structuredContent.state, 'done', JSON.stringify(done.structuredContent));
  const saved = await W.wiki.tiddler('Agent Note');
  assert.ok(saved, 'the wiki\'s server holds the tiddler');
  assert.equal(saved.text, 'Saved through the wiki\'s API.');
});
