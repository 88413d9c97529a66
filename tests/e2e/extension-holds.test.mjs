// SPDX-License-Identifier: GPL-3.0-or-later
// Holds end to end: real Chromium with the real extension and the real C core engine. A save on a
// page that re-renders its toolbar as TiddlyWiki does (holds-editor.html) is held as a write; the
// page re-renders while the person reads the card; their Approve (the engine call the card's
// button makes) runs the save on the control that shows it now; an Approve after the editor
// closed ends 'changed'. With CHAPERONE_TIDDLYWIKI_URL (a `tiddlywiki --listen` server) the same
// on real TiddlyWiki; without it that step is skipped and says why.

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';

import { startFixtureServer } from '../fixtures/serve.mjs';
import { ENGINE_PATH, TestEngine } from '../js/engine-harness.mjs';
import { until } from '../lib/until.mjs';
import { Browser, browserWhyNot } from './browser-harness.mjs';

const engineWhyNot = () => (!ENGINE_PATH ? 'CHAPERONE_TEST_ENGINE is not set (ninja -C build)'
  : existsSync(ENGINE_PATH) ? null : `no engine harness at ${ENGINE_PATH}`);
const skip = browserWhyNot() ?? engineWhyNot() ?? false;
if (skip) console.log(`# skipped: ${skip}`);
const TIDDLYWIKI = process.env.CHAPERONE_TIDDLYWIKI_URL || '';
const skipTiddlyWiki = skip || (TIDDLYWIKI ? false
  : 'CHAPERONE_TIDDLYWIKI_URL is not set (npx tiddlywiki <dir> --init server; --listen port=<port>)');
if (!skip && skipTiddlyWiki) console.log(`# skipping the TiddlyWiki step: ${skipTiddlyWiki}`);

const SAVE = 'Confirm changes to this tiddler';

describe('holds through the engine', { skip }, () => {
  let sites;
  let engine;
  let browser;
  let deviceId;
  const pages = {};
  const tabs = {};

  const call = async (method, params) => {
    const reply = await engine.call(deviceId, method, params, { timeoutMs: 8000 });
    assert.ok(reply.result !== undefined, `${method} failed: ${JSON.stringify(reply.error)}`);
    return reply.result;
  };
  /** The card's Approve or Decline: the engine function its button calls. */
  const resolveHold = async (holdId, outcome) => {
    const reply = await engine.command({ cmd: 'resolve-hold', deviceId, holdId, outcome }, { timeoutMs: 8000 });
    assert.ok(reply.result, `resolve-hold: ${JSON.stringify(reply)}`);
    return reply.result;
  };
  const named = (ctx, name) => {
    const node = ctx.nodes.find((n) => n.name === name);
    assert.ok(node, `a node named "${name}" among ${ctx.nodes.map((n) => n.name).join(' | ').slice(0, 500)}`);
    return node;
  };

  before(async () => {
    sites = await startFixtureServer();
    engine = await TestEngine.start();
    browser = await Browser.launch();
    await browser.setPort(engine.port);
    const open = async (name, url) => {
      pages[name] = await browser.ctx.newPage();
      await pages[name].goto(url);
      tabs[name] = await browser.tabIdOf(pages[name]);
    };
    await open('editor', `${sites.originA}/holds-editor.html?open`);
    if (!skipTiddlyWiki) await open('tw', TIDDLYWIKI);

    const popup = await browser.popup(pages.editor);
    const mark = engine.mark();
    await browser.startPairing(popup);
    const pairing = await engine.waitFor({ event: 'pairing' }, { after: mark, timeoutMs: 15000 });
    engine.approve(pairing.requestId);
    deviceId = (await engine.waitFor({ event: 'device-online' }, { after: mark, timeoutMs: 20000 })).deviceId;
    await browser.waitForState('connected');
    await browser.grant(popup, { pages: Object.values(pages), preset: 'control', label: 'E2E holds' });
  }, { timeout: 90000 });

  after(async () => {
    await browser?.close();
    await engine?.stop();
    await sites?.close();
  }, { timeout: 30000 });

  test('an approved save runs after the page re-rendered its toolbar; after the editor closed it is changed', async () => {
    const page = pages.editor;
    await page.fill('#title', 'Shopping list');
    await page.fill('#body', 'eggs');
    const ctx = await call('browser.context', { tabId: tabs.editor });
    const held = await call('browser.node.action', { ref: named(ctx, SAVE).ref, action: 'click' });
    assert.equal(held.held, true, JSON.stringify(held));
    assert.equal(held.hold.kind, 'write', 'a save is a write a plan may cover, not an outward act');
    assert.deepEqual(held.hold.fields.map((f) => f.value), ['Shopping list', 'eggs'], 'the card shows what is saved');
    // While the card is up the page re-renders (as TiddlyWiki's syncer does): new toolbar nodes.
    await page.evaluate(() => renderEditor());
    const done = await resolveHold(held.hold.holdId, 'approve');
    assert.equal(done.state, 'done', JSON.stringify(done));
    assert.equal(done.changes?.verified, true, 'the save showed on the page');
    assert.deepEqual(await page.evaluate(() => window.__saved), [{ title: 'Shopping list', text: 'eggs' }]);

    // A second save held, then the editor is closed before the Approve: nothing to run.
    await page.click('#new');
    const ctx2 = await call('browser.context', { tabId: tabs.editor });
    const again = await call('browser.node.action', { ref: named(ctx2, SAVE).ref, action: 'click' });
    assert.equal(again.held, true);
    await page.click('[data-act=cancel]');
    const changed = await resolveHold(again.hold.holdId, 'approve');
    assert.equal(changed.state, 'changed', JSON.stringify(changed));
    assert.equal(await page.evaluate(() => window.__saved.length), 1, 'nothing else was saved');
  });

  test('inside a plan: opening the editor spends no step, the save goes through and is verified', async () => {
    const page = pages.editor;
    const allow = { planId: 'plan-e2e', sites: [new URL(sites.originA).hostname], step: 1, of: 1 };
    const ctx = await call('browser.context', { tabId: tabs.editor });
    const opened = await call('browser.node.action', { ref: named(ctx, 'new tiddler').ref, action: 'click', allow });
    assert.equal(opened.held, undefined, JSON.stringify(opened));
    assert.equal(opened.plan?.opens, true, 'opening an editor spends no step');
    assert.equal(opened.changes.verified, undefined, 'nothing was saved, nothing to verify');
    await page.fill('#title', 'Planned note');
    const ctx2 = await call('browser.context', { tabId: tabs.editor });
    const saved = await call('browser.node.action', { ref: named(ctx2, SAVE).ref, action: 'click', allow });
    assert.equal(saved.held, undefined, JSON.stringify(saved));
    assert.equal(saved.plan?.opens, undefined, 'the save spends the step');
    assert.equal(saved.changes.verified, true);
    assert.equal(await page.evaluate(() => window.__saved.at(-1).title), 'Planned note');
  });

  test('real TiddlyWiki: new tiddler, title, approved save', { skip: skipTiddlyWiki }, async () => {
    const page = pages.tw;
    const title = `Chaperone e2e ${Date.now()}`;
    await page.click('button[aria-label="new tiddler"]');
    await page.locator('.tc-tiddler-edit-frame input.tc-titlebar').fill(title);
    const ctx = await call('browser.context', { tabId: tabs.tw });
    const held = await call('browser.node.action', { ref: named(ctx, SAVE).ref, action: 'click' });
    assert.equal(held.held, true, JSON.stringify(held));
    assert.equal(held.hold.kind, 'write');
    console.log(`# TiddlyWiki hold: kind ${held.hold.kind}, word ${held.hold.word}, control "${held.hold.control}"`);
    const done = await resolveHold(held.hold.holdId, 'approve');
    console.log(`# TiddlyWiki approve: state ${done.state}, changes ${JSON.stringify(done.changes)}`);
    assert.equal(done.state, 'done', JSON.stringify(done));
    await until(() => page.evaluate((t) => [...document.querySelectorAll('.tc-tiddler-view-frame .tc-title')]
      .some((e) => e.textContent.trim() === t), title), { timeout: 10000, what: "the saved tiddler shown in view mode" });
  });

  test('real TiddlyWiki inside a plan: new tiddler and save, no card', { skip: skipTiddlyWiki }, async () => {
    const page = pages.tw;
    const allow = { planId: 'plan-tw', sites: [new URL(TIDDLYWIKI).hostname], step: 1, of: 1 };
    const title = `Chaperone plan ${Date.now()}`;
    const ctx = await call('browser.context', { tabId: tabs.tw });
    const opened = await call('browser.node.action', { ref: named(ctx, 'new tiddler').ref, action: 'click', allow });
    assert.equal(opened.plan?.opens, true, JSON.stringify(opened));
    await page.locator('.tc-tiddler-edit-frame input.tc-titlebar').first().fill(title);
    const ctx2 = await call('browser.context', { tabId: tabs.tw });
    const saved = await call('browser.node.action', { ref: named(ctx2, SAVE).ref, action: 'click', allow });
    console.log(`# TiddlyWiki plan save: held ${saved.held ?? false}, changes ${JSON.stringify(saved.changes)}`);
    assert.equal(saved.held, undefined, JSON.stringify(saved));
    assert.equal(saved.plan?.opens, undefined);
    assert.equal(saved.changes.verified, true);
  });
});
