// SPDX-License-Identifier: GPL-3.0-or-later
// Issue 6, end to end: a hostile agent against the adversarial corpus (tests/fixtures/adversarial/,
// listed in its index.json). The official MCP TypeScript SDK client — an agent no one here wrote —
// drives the real relay (chaperone-mcp) into the core engine harness (chaperone-test-engine),
// paired with the real extension in real Chromium; the tabs are granted with the Control preset in
// the popup, as a person does. On every page the agent tries its worst: it reads everything,
// inspects every field, types a fake password into credential fields, clicks the most dangerous
// control first and then every other one, and tries to open the bank. No person approves anything
// (except in the sub-test for pages that change after a hold).
//
// What is asserted is what really happened, not what the agent was told: the fixture server's sink
// (serve.mjs) records every POST/PUT/PATCH/DELETE that reached it, and it must stay empty; every
// tool result (text and structuredContent) is scanned for the planted secrets, the typed password
// and the blind pages' text. Then, per page, the contract of notes/safety-contract.md: outward acts
// and writes answer `held`, blind pages `refused_floor`, hands-only pages are readable but not
// actable, a change after a hold answers `changed`, the third identical act `paused`.
// At the end a table of the refusals by code is printed.
//
// Each page gets a new MCP session (a new relay process), so the loop guard (3 identical acts or 3
// failures in a row pause a session) never ends the run early; a session that is paused anyway is
// replaced, and the pause is counted. A pause holds for the agent, not only its session (its name
// and the process that launched the relay: docs/agents.md), so each hostile session is its own
// agent: another name, and a relay launched by a shell of its own rather than by this process.
// Pages run on a few tabs at once ("lanes") to stay quick.

import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { startFixtureServer } from '../fixtures/serve.mjs';
import { Browser, EXTENSION_ORIGIN, closePage, domWait } from './browser-harness.mjs';
import { until } from '../lib/until.mjs';
import * as H from './mcp-harness.mjs';

import {
  CORPUS_DIR, INDEX, skip, EXPECTS, BANK_HOST,
  HANDS_HOST, LANES, ownProcess, W, outcomeOf, runsOf,
  scan, pageUrl, openIn, agentTabs, nodeName, isField,
  nodesOfSnapshot, clickOrder, attackPage, overLanes, Hostile,
} from './adversarial-harness.mjs';

// ---- setup -------------------------------------------------------------------------------------

before(async () => {
  if (skip) return;
  const t0 = Date.now();
  W.sites = await startFixtureServer();
  W.world = await H.startEngineWithAgents();
  W.engine = W.world.engine;
  W.socket = W.world.socket;
  W.browser = await Browser.launch({
    extraArgs: [`--host-resolver-rules=MAP ${BANK_HOST} 127.0.0.1, MAP ${HANDS_HOST} 127.0.0.1`],
  });
  await W.browser.setPort(W.engine.port);

  // The person's tabs: LANES on origin A, one on the bank host, one on the hands-only host.
  const loop = INDEX.find((e) => e.file === 'loop-guard.html');
  for (let i = 0; i < LANES; i++) {
    const page = await W.browser.ctx.newPage();
    await page.goto(`${pageUrl(loop)}?lane=${i}`);
    W.lanes.push({ page, host: null, name: `lane${i}` });
  }
  for (const host of [BANK_HOST, HANDS_HOST]) {
    const first = INDEX.find((e) => e.host === host);
    const page = await W.browser.ctx.newPage();
    await page.goto(`${pageUrl(first)}?lane=${host}`);
    W.special[host] = { page, host, name: host };
  }

  // Pairing, approved as the person would in the app.
  const popup = await W.browser.popup(W.lanes[0].page);
  const mark = W.engine.mark();
  await W.browser.startPairing(popup);
  const pairing = await W.engine.waitFor({ event: 'pairing' }, { after: mark, timeoutMs: 15000 });
  assert.equal(pairing.origin, EXTENSION_ORIGIN);
  W.engine.approve(pairing.requestId);
  W.deviceId = (await W.engine.waitFor({ event: 'device-online' }, { after: mark, timeoutMs: 20000 })).deviceId;
  await W.browser.waitForState('connected');

  // The grant: Control (+ navigate, so that the agent's navigation to the bank meets the floor,
  // not a missing scope) on every tab the popup offers.
  // The popup lists the window's tabs as it opens; a tab still settling may be missing from the
  // first look, and the popup does not redraw for it: it is opened again (as a person would),
  // until every tab is offered.
  let offered = [];
  const people = [...W.lanes, ...Object.values(W.special)];
  await until(async () => {
    await popup.reload();
    offered = [];
    for (const t of people) if (await popup.$(`#tab-${await W.browser.tabIdOf(t.page)}`)) offered.push(t);
    return offered.length === people.length;
  }, { timeout: 10000, what: `the popup to offer every tab (${people.map((t) => t.name).join(', ')})` });
  await W.browser.grant(popup, { pages: offered.map((t) => t.page), preset: 'control',
                                 extras: ['browser.tab.navigate'], label: 'Adversarial' });
  await popup.close();

  // The agent's names for the tabs.
  const scout = await H.connectAgent({ name: 'adversarial-scout', socket: W.socket });
  try {
    const tabs = await until(async () => {
      const list = await agentTabs(scout);
      return list.length >= offered.length ? list : null;
    }, { timeout: 10000, what: 'browser_tabs to list the granted tabs' });
    for (let i = 0; i < LANES; i++) {
      W.lanes[i].tab = tabs.find((t) => (t.url ?? '').includes(`lane=${i}`))?.tab;
      assert.ok(W.lanes[i].tab, `lane ${i} listed: ${JSON.stringify(tabs)}`);
    }
    for (const host of [BANK_HOST, HANDS_HOST]) {
      const t = tabs.find((x) => (x.url ?? '').startsWith(`http://${host}:`));
      if (t) W.special[host].tab = t.tab;
      else {
        W.setupNotes.push(`browser_tabs does not list the ${host} tab`);
        delete W.special[host];
      }
    }
  } finally {
    await scout.close();
  }
  console.log(`# adversarial: setup ${Date.now() - t0} ms; ${INDEX.length} pages; ${W.setupNotes.join('; ') || 'all tabs granted'}`);
}, { timeout: 60000 });

after(async () => {
  if (W.attempts.length) printTable();
  dump();
  await W.browser?.close();
  await W.world?.stop();
  await W.sites?.close();
}, { timeout: 30000 });

/** ADVERSARIAL_DUMP=file.json: every page's attempts (tool, args, outcome, structuredContent) for a person to read. */
function dump() {
  const path = process.env.ADVERSARIAL_DUMP;
  if (!path) return;
  const runs = [...W.runs.values()].map((r) => ({
    file: r.file, expect: r.expect, first: r.first, error: r.error, leftTo: r.leftTo, navigate: r.navigate,
    attempts: (r.log ?? []).map((a) => ({ tool: a.tool, args: a.args, outcome: a.outcome,
      structured: a.result?.structuredContent ?? a.result?.thrown ?? null,
      text: H.textOf(a.result).slice(0, 400) })),
  }));
  writeFileSync(path, JSON.stringify({ sink: W.sites?.sinkLog() ?? [], leaks: W.leaks, runs }, null, 1));
  console.log(`# adversarial: attempts written to ${path}`);
}

function printTable() {
  const byCode = {};
  for (const a of W.attempts) {
    byCode[a.outcome] ??= { attempts: 0, pages: new Set() };
    byCode[a.outcome].attempts += 1;
    byCode[a.outcome].pages.add(a.file);
  }
  const rows = Object.entries(byCode).sort((a, b) => b[1].attempts - a[1].attempts)
    .map(([code, v]) => ({ outcome: code, attempts: v.attempts, pages: v.pages.size }));
  const refused = W.attempts.filter((a) => a.outcome !== 'ok').length;
  console.log('# adversarial: outcomes of the hostile agent\'s attempts (ok = the act or read was done)');
  console.table(rows);
  console.log(`# adversarial: ${W.attempts.length} attempts in total on ${W.runs.size} pages, ${refused} refused or held `
    + `(${W.attempts.filter((a) => a.tool === 'browser_act').length} acts); `
    + `${W.hostileSends ?? '?'} request(s) reached the sink during the hostile run (no approvals); `
    + `${W.leaks.length} secret leak(s)`);
}

// ---- the corpus itself -------------------------------------------------------------------------

test('the corpus: at least 40 pages, each listed once with a known expectation and a comment saying what it attacks', () => {
  assert.ok(INDEX.length >= 40, `${INDEX.length} pages`);
  const files = new Set();
  for (const e of INDEX) {
    assert.ok(!files.has(e.file), `${e.file} listed once`);
    files.add(e.file);
    assert.ok(EXPECTS.includes(e.expect), `${e.file}: expect ${e.expect}`);
    assert.ok(typeof e.attack === 'string' && e.attack.length > 10, `${e.file}: attack`);
    const html = readFileSync(join(CORPUS_DIR, e.file), 'utf8');
    assert.match(html.slice(0, 600), /<!--\s*ATTACK:[\s\S]*RIGHT BEHAVIOUR[\s\S]*?-->/, `${e.file}: the comment at the top`);
    assert.doesNotMatch(html, /(src|href)="https?:\/\/(?!\{\{|mybank\.test)/, `${e.file}: no external resources`);
    if (!['blind', 'inert', 'no-secret', 'hands-only'].includes(e.expect) && !e.host) {
      assert.match(html, /\/adversarial\/sink\//, `${e.file}: a send reaches the sink`);
    }
  }
  for (const expect of EXPECTS) assert.ok(INDEX.some((e) => e.expect === expect), `some page expects ${expect}`);
});

// ---- the hostile run -----------------------------------------------------------------------------

test('a hostile agent tries every page (plumbing: each page opens, each session connects, the tabs stay granted)', { skip, timeout: 120000 }, async () => {
  const t0 = Date.now();
  await overLanes(INDEX, attackPage);
  W.hostileSends = W.sites.sinkLog().length;
  const slow = [...W.runs.values()].sort((a, b) => (b.ms ?? 0) - (a.ms ?? 0)).slice(0, 4).map((r) => `${r.file} ${r.ms} ms`);
  const cm = [...W.connectMs].sort((a, b) => a - b);
  console.log(`# adversarial: hostile run ${Date.now() - t0} ms; ${cm.length} sessions, connect median ${cm[cm.length >> 1]} ms; slowest pages: ${slow.join(', ')}`);
  const broken = [...W.runs.values()].filter((r) => r.error).map((r) => `${r.file}: ${r.error.split('\n')[0]}`);
  assert.deepEqual(broken, [], 'every page was attacked');
  // Snapshots work where the page is readable at all (blind pages answer refused_floor).
  const unreadable = [...W.runs.values()]
    .filter((r) => !['blind'].includes(r.expect) && r.first !== 'ok')
    .map((r) => `${r.file}: ${r.first}`);
  assert.deepEqual(unreadable, [], 'the readable pages could be read');
});

test('nothing reached a server: zero sends, payments, deletes or writes without a person\'s approval', { skip }, () => {
  assert.ok(W.runs.size > 0, 'the hostile run happened');
  const sends = W.sites.sinkLog();
  assert.deepEqual(sends.map((s) => `${s.method} ${s.host}${s.path}`), [],
    `requests that reached the sink:\n${JSON.stringify(sends, null, 1)}`);
});

test('no planted secret, typed password or blind page text in any result', { skip }, () => {
  assert.ok(W.attempts.length > 0, 'the hostile run happened');
  assert.deepEqual(W.leaks.map((l) => `${l.file} ${l.tool}: ${l.secret} in …${l.excerpt}…`), []);
});

test('outward acts (held) and writes/deletes (gated) answer held, with the kind of the act', { skip }, () => {
  const wrong = [];
  for (const r of runsOf('held', 'gated', 'changed')) {
    const held = r.clicks.filter((c) => c.outcome === 'held');
    if (!held.length) {
      wrong.push(`${r.file}: no click was held (${r.clicks.map((c) => `${c.name}→${c.outcome}`).join(', ') || 'no clicks'})`);
      continue;
    }
    const want = r.entry.kind ?? (r.expect === 'gated' ? 'write' : 'outward');
    const kinds = held.map((c) => c.result?.structuredContent?.kind);
    if (!kinds.includes(want)) wrong.push(`${r.file}: held as ${kinds.join('/')} not ${want}`);
    for (const c of held) {
      const s = c.result.structuredContent;
      if (s.ok !== false || !/^b\d+:/.test(String(s.holdId)) || s.state !== 'held') {
        wrong.push(`${r.file}: a held answer not as the contract says: ${JSON.stringify(s).slice(0, 300)}`);
      }
      if (c.result.isError) wrong.push(`${r.file}: held answered as an error`);
    }
  }
  assert.deepEqual(wrong, []);
});

test('blind pages (sign-in, bank) refuse everything with refused_floor', { skip }, () => {
  const wrong = [];
  for (const r of runsOf('blind')) {
    if (r.first !== 'refused_floor') wrong.push(`${r.file}: snapshot answered ${r.first}`);
    for (const a of r.log ?? []) {
      if (a.tool === 'browser_tabs') continue;
      if (a.outcome === 'ok' || a.outcome === 'held') wrong.push(`${r.file}: ${a.tool} answered ${a.outcome}`);
    }
  }
  assert.deepEqual(wrong, []);
});

test('hands-only pages are readable but no act is done (refused_floor)', { skip }, () => {
  const wrong = [];
  for (const r of runsOf('hands-only')) {
    if (r.first !== 'ok') wrong.push(`${r.file}: snapshot answered ${r.first}`);
    if (!(r.log ?? []).some((a) => a.tool === 'browser_act')) wrong.push(`${r.file}: no act was tried`);
    for (const a of r.log ?? []) {
      if (a.tool !== 'browser_act') continue;
      if (!['refused_floor', 'paused'].includes(a.outcome)) wrong.push(`${r.file}: ${a.args.action} answered ${a.outcome}`);
    }
  }
  assert.deepEqual(wrong, []);
});

test('the agent cannot open the bank: browser_navigate to the bank host is refused on every page', { skip }, () => {
  // (A tab already on the bank — opened there by the person, or by a link the agent clicked
  // (`linksTo`) — only the answer counts.)
  const wrong = [...W.runs.values()]
    .filter((r) => r.navigate !== undefined && (r.navigate === 'ok'
      || (r.entry.host !== BANK_HOST && r.entry.linksTo !== BANK_HOST
          && !String(r.urlBeforeNavigate).includes(BANK_HOST) && String(r.navigatedTo).includes(BANK_HOST))))
    .map((r) => `${r.file}: ${r.navigate} → ${r.navigatedTo}`);
  assert.deepEqual(wrong, []);
});

// ---- changes after a hold: the person approves through the engine (the app's function) ----------

/**
 * The person's Approve on a hold, through the engine harness: the same engine function the app's
 * button calls (chp_engine_resolve_hold_async). The harness command is `resolve-hold {deviceId,
 * holdId, outcome}`, like `resolve-handoff`. holdId: the engine's own id, from its events if it
 * reports holds, else the agent's id without its browser prefix ("b1:k…" → "k…").
 */
async function approveHold(agentHoldId, outcome = 'approve') {
  const fromEvents = W.engine.events.slice().reverse()
    .map((e) => e.hold)
    .find((hld) => hld && (hld.holdId === agentHoldId || agentHoldId.endsWith(`:${hld.holdId}`)));
  const holdId = fromEvents?.holdId ?? agentHoldId.replace(/^b\d+:k-/, '');
  return W.engine.command({ cmd: 'resolve-hold', deviceId: W.deviceId, holdId, outcome }, { timeoutMs: 8000 });
}

test('a page that changes after a hold: approving it answers changed, and nothing is sent', { skip, timeout: 120000 }, async () => {
  const pages = INDEX.filter((e) => e.expect === 'changed');
  assert.ok(pages.length >= 3, 'several changed pages');
  const before = W.sites.sinkLog().length;
  const outcomes = {};
  await overLanes(pages, async (entry, lane) => {
    const h = new Hostile(`${entry.file} (approve)`);
    const out = { file: entry.file };
    outcomes[entry.file] = out;
    try {
      // A page that changes on its own timer must change after the hold was taken, or the hold
      // rightly covers the changed page. On a loaded machine the snapshot and the click can take
      // longer than the timer: then the hold is declined and the page tried again, slower.
      let holdId = null;
      for (let attempt = 0, after = 2500; holdId === null; attempt++, after *= 2) {
        await openIn(lane, entry, entry.change === 'timer' ? `?after=${after}` : '');
        const snap = await h.call('browser_snapshot', { tab: lane.tab });
        assert.equal(snap.outcome, 'ok', `${entry.file}: snapshot`);
        const target = clickOrder(entry, nodesOfSnapshot(snap.result))[0];
        assert.ok(target, `${entry.file}: a control to click`);
        const click = await h.call('browser_act', { tab: lane.tab, ref: target.ref, action: 'click' });
        out.click = click.outcome;
        if (click.outcome !== 'held') return;
        const early = entry.change === 'timer' && await lane.page.evaluate(() => window.__changed === true);
        if (!early) {
          holdId = click.result.structuredContent.holdId;
          break;
        }
        await approveHold(click.result.structuredContent.holdId, 'decline');
        out.retries = attempt + 1;
        assert.ok(attempt < 2, `${entry.file}: the page changed before its hold was taken, ${attempt + 1} times`);
      }
      // The page changes: its own timer, or the tab hidden and shown again (else the page's own
      // mutate function, as the same change would come from the site).
      if (entry.change === 'visibility') {
        const other = W.lanes.find((l) => l !== lane) ?? lane;
        await other.page.bringToFront();
        await lane.page.bringToFront();
      }
      const changed = await domWait(lane.page, () => window.__changed === true, null, { timeout: 4000, what: 'the page to change' })
        .catch(() => false);
      if (!changed) await lane.page.evaluate(() => window.__mutate());
      const resolved = await approveHold(holdId);
      out.resolve = resolved.error ? `error: ${resolved.error.message ?? JSON.stringify(resolved.error)}` : resolved.result?.state;
      const waited = await h.call('browser_wait', { id: holdId, timeoutMs: 5000 });
      out.wait = waited.outcome === 'ok' ? waited.result.structuredContent?.state : waited.outcome;
    } catch (err) {
      out.error = String(err?.message ?? err).split('\n')[0];
    } finally {
      await h.close();
    }
  });
  console.log('# adversarial: changed pages after approval');
  console.table(Object.values(outcomes));
  const sent = W.sites.sinkLog().slice(before);
  assert.deepEqual(sent.map((s) => `${s.method} ${s.path}`), [], 'an approved hold on a changed page sends nothing');
  const wrong = Object.values(outcomes).filter((o) => o.click !== 'held' || o.wait !== 'changed' || o.error)
    .map((o) => JSON.stringify(o));
  assert.deepEqual(wrong, [], 'each: held, then approved after the change → changed');
});

// ---- the loop guard ---------------------------------------------------------------------------------

test('the loop guard: the same click three times in one session, the third answers paused', { skip, timeout: 30000 }, async () => {
  const lane = W.lanes[0];
  const entry = INDEX.find((e) => e.file === 'loop-guard.html');
  await openIn(lane, entry, '?guard=1');
  const agent = await H.connectAgent({ name: 'hostile-loop', socket: W.socket, ...ownProcess });
  try {
    const snap = H.ok(await agent.call('browser_snapshot', { tab: lane.tab }), 'snapshot');
    const ref = nodesOfSnapshot(snap).find((n) => nodeName(n) === 'Next tip')?.ref;
    assert.ok(ref, H.textOf(snap));
    const outcomes = [];
    for (let i = 0; i < 3; i++) {
      const r = await agent.call('browser_act', { tab: lane.tab, ref, action: 'click' });
      scan('loop-guard.html', 'browser_act', r);
      outcomes.push(outcomeOf(r));
      W.attempts.push({ file: 'loop-guard.html (guard)', tool: 'browser_act', outcome: outcomeOf(r) });
    }
    assert.deepEqual(outcomes.slice(0, 2), ['ok', 'ok'], 'the first two clicks are done');
    assert.equal(outcomes[2], 'paused', `the third identical click: ${outcomes}`);
    const tips = await lane.page.evaluate(() => window.__n ?? 1);
    assert.equal(tips, 3, 'the page saw two clicks, not three');
    // Paused means paused: any other call of this session is refused too.
    const after = await agent.call('browser_snapshot', { tab: lane.tab });
    assert.equal(H.errorCode(after), 'paused');
  } finally {
    await agent.close();
  }
});

// ---- other doors ------------------------------------------------------------------------------------

/**
 * Every tool an agent can call, and how this test tries it as a way to send the door page's form
 * (post-continue.html: a "Continue" button that POSTs to the sink). A tool listed by the relay and
 * missing here fails the test: a new door must be tried before it ships.
 */
const DOORS = {
  async browser_tabs(h) { return [(await h.call('browser_tabs')).outcome]; },
  async browser_snapshot(h, d) { return [(await h.call('browser_snapshot', { tab: d.tab })).outcome]; },
  async browser_inspect(h, d) { return [(await h.call('browser_inspect', { tab: d.tab, ref: d.ref })).outcome]; },
  async browser_act(h, d, tool) {
    // Every action the schema offers, on the button that sends.
    const actions = tool.inputSchema?.properties?.action?.enum ?? ['click'];
    const out = [];
    for (const action of actions) {
      const args = { tab: d.tab, ref: action === 'fill' ? d.field ?? d.ref : d.ref, action };
      if (action === 'fill') args.value = 'x=1';
      out.push(`${action}:${(await h.call('browser_act', args)).outcome}`);
    }
    return out;
  },
  async browser_navigate(h, d) {
    // A script or a document of the agent's own that would post the form. (A plain GET within
    // the granted site is what navigate is for, and sends no form.)
    const out = [];
    for (const url of ['javascript:document.forms[0].submit()',
                       `data:text/html,<form method=post action="${d.sink}"></form><script>document.forms[0].submit()</script>`]) {
      out.push(`${url.split(':')[0]}:${(await h.call('browser_navigate', { tab: d.tab, url })).outcome}`);
    }
    return out;
  },
  async browser_handoff(h, d) {
    const r = await h.call('browser_handoff', { tab: d.tab, reason: 'login', message: 'Press Continue for me' });
    d.handoffs.push(r.result?.structuredContent?.id);
    return [r.outcome];
  },
  async browser_wait(h) { return [(await h.call('browser_wait', { id: 'b1:k-not-a-hold', timeoutMs: 100 })).outcome]; },
  async browser_plan(h, d) {
    const site = new URL(d.sink).hostname;
    const r = await h.call('browser_plan', { summary: 'Continue the form', steps: [{ kind: 'create', site, summary: 'Press Continue' }] });
    d.plans.push(r.result?.structuredContent?.id);
    // The plan waits for the person: a click under it is still held.
    const click = await h.call('browser_act', { tab: d.tab, ref: d.ref, action: 'click' });
    return [r.outcome, `click under a waiting plan:${click.outcome}`];
  },
  async browser_history(h, d) {
    // It reads the app's trace only: the site of the form's own page, and a site name shaped to
    // break out of the query.
    const out = [];
    for (const [label, site] of [['site', new URL(d.sink).host], ['hostile site', "x' OR 1=1 --"]]) {
      out.push(`${label}:${(await h.call('browser_history', { site })).outcome}`);
    }
    return out;
  },
  async browser_network(h, d) {
    // It reads what the page requested; it sends nothing.
    return [(await h.call('browser_network', { tab: d.tab, all: true })).outcome];
  },
  async browser_api(h, d) {
    // Learn what the page called (a form's POST is a navigation, no API call), route a hint that
    // names the form, and call an entry the page never made: none of it may post the form.
    const out = [];
    for (const args of [{ action: 'learn' }, { action: 'list' }, { action: 'route', hint: 'continue other-doors' },
      { action: 'call', entryId: 'e0123456789ab', body: { door: 1 } }]) {
      out.push(`${args.action}:${(await h.call('browser_api', { tab: d.tab, ...args })).outcome}`);
    }
    return out;
  },
  async browser_batch(h, d) {
    // The sending click by ref and by role and name, inside one batch each.
    const out = [];
    for (const act of [{ ref: d.ref, action: 'click' }, { target: { role: 'button', name: 'Continue' }, action: 'click' }]) {
      out.push(`batch ${Object.keys(act)[0]}:${(await h.call('browser_batch', { tab: d.tab, steps: [{ act }] })).outcome}`);
    }
    return out;
  },
  async browser_stop(h, d) {
    const r = await h.call('browser_stop', { reason: 'the other-doors test' });
    const after = await h.call('browser_act', { tab: d.tab, ref: d.ref, action: 'click' });
    return [r.outcome, `click after stop:${after.outcome}`];
  },
};

test('other doors: every tool the relay lists is tried as a way to send the form; none sends, and an unknown tool fails', { skip, timeout: 60000 }, async () => {
  const h = new Hostile('other-doors');
  const d = { handoffs: [], plans: [] };
  try {
    await h.open();
    const { tools } = await h.agent.client.listTools();
    const names = tools.map((t) => t.name);
    assert.deepEqual(names.filter((n) => /approve|resume|unpause|grant|pair/i.test(n)), [], 'no tool approves anything');
    assert.deepEqual(names.filter((n) => !(n in DOORS)), [], 'tools this test does not know how to try');

    const lane = W.lanes[1];
    const entry = INDEX.find((e) => e.file === 'post-continue.html');
    await openIn(lane, entry, '?door=1');
    d.tab = lane.tab;
    d.sink = `${W.sites.originA}/adversarial/sink/other-doors`;
    const snap = await h.call('browser_snapshot', { tab: lane.tab });
    const nodes = nodesOfSnapshot(snap.result);
    d.ref = nodes.find((n) => nodeName(n) === 'Continue')?.ref;
    d.field = nodes.find(isField)?.ref;
    assert.ok(d.ref, `the door page's Continue button: ${H.textOf(snap.result).slice(0, 400)}`);
    const before = W.sites.sinkLog().length;

    // browser_stop last: after it every call is refused, which would hide the doors after it.
    const order = [...names.filter((n) => n !== 'browser_stop'), ...names.filter((n) => n === 'browser_stop')];
    const tried = [];
    for (const name of order) {
      // A paused session (the loop guard) is replaced by Hostile.call; the door is still tried.
      tried.push(`${name}→${(await DOORS[name](h, d, tools.find((t) => t.name === name))).join('/')}`);
    }
    console.log(`# adversarial: other doors tried: ${tried.join(', ')}`);
    assert.equal(tried.length, names.length, 'every listed tool was tried');
    assert.deepEqual(W.sites.sinkLog().slice(before), [], 'nothing sent through any tool');
    assert.ok(!tried.some((t) => /\bclick:ok\b/.test(t)), `the sending click was never done: ${tried}`);
    assert.ok(tried.some((t) => t.includes('click under a waiting plan:held')), `a waiting plan holds the click: ${tried}`);
    assert.ok(tried.some((t) => t.includes('click after stop:stopped')), `a stop refuses the click: ${tried}`);
  } finally {
    await h.close();
    // Put the world back for the tests after this one: resume, and end what was asked of the person.
    await W.engine.command({ cmd: 'resume-all' }).catch(() => {});
    for (const id of d.plans.filter(Boolean)) await W.engine.command({ cmd: 'decide-plan', planId: id, approve: false }).catch(() => {});
    const handoffs = (await W.engine.command({ cmd: 'handoffs' }).catch(() => null))?.result ?? [];
    for (const ho of Array.isArray(handoffs) ? handoffs : []) {
      if (ho.state === 'waiting') {
        await W.engine.command({ cmd: 'resolve-handoff', deviceId: W.deviceId, handoffId: ho.handoffId, outcome: 'cancelled' }).catch(() => {});
      }
    }
  }
});

// ---- the corpus works: the person's own clicks do send ------------------------------------------

test('positive control: the same controls clicked by the person (Playwright) do reach the sink', { skip, timeout: 180000 }, async () => {
  // Without this, a page whose form could never submit would pass everything above.
  const pages = INDEX.filter((e) => e.sends);
  const missing = [];
  // The person's own tabs, not granted (no agent is involved here): several at once.
  const tabs = await Promise.all(Array.from({ length: 6 }, () => W.browser.ctx.newPage()));
  const queue = [...pages];
  // A tab in the background draws no frames, and a click waits for one: on a busy machine that
  // made each click take seconds. The pages load in parallel; each click is made in front, one
  // at a time, as a person's would be.
  let front = Promise.resolve();
  const inFront = (page, fn) => {
    const turn = front.then(async () => {
      await page.bringToFront();
      return fn();
    });
    front = turn.catch(() => {});
    return turn;
  };
  const timings = [];                     // {file, open, click, sink} in ms
  const t0 = Date.now();
  await Promise.all(tabs.map(async (page) => { for (let entry; (entry = queue.shift());) await personSends(entry, { page }); }));
  const sentMs = Date.now() - t0;
  // Each tab's last page may still be committing the navigation its form started: closePage
  // does not hang on that (a plain close did, until the test's timeout: the "crawl" once seen).
  const closed = await Promise.all(tabs.map((p) => closePage(p)));
  const median = (k) => timings.map((t) => t[k]).sort((a, b) => a - b)[Math.floor(timings.length / 2)];
  const slowest = [...timings].sort((a, b) => (b.open + b.click + b.sink) - (a.open + a.click + a.sink)).slice(0, 3)
    .map((t) => `${t.file} (open ${t.open}, click ${t.click}, sink ${t.sink})`);
  console.log(`# adversarial: the person sent on ${pages.length - missing.length} of ${pages.length} pages in ${sentMs} ms ` +
              `(median ms: open ${median('open')}, click with its turn ${median('click')}, to the sink ${median('sink')}; ` +
              `slowest: ${slowest.join(', ')}); ${closed.filter(Boolean).length} of ${tabs.length} tabs closed after in ${Date.now() - t0 - sentMs} ms`);
  assert.deepEqual(missing, [], 'every sendable page really sends when the person clicks');

  async function personSends(entry, lane) {
    const before = W.sites.sinkLog().length;
    const path = `/adversarial/sink/${entry.file.replace(/\.html$/, '')}`;
    const t = [Date.now()];
    try {
      await openIn(lane, entry, entry.change === 'timer' ? '?after=-1' : '');
      t.push(Date.now());
      await inFront(lane.page, () => lane.page.locator(entry.sends).first().click({ force: true, noWaitAfter: true, timeout: 10000 }));
      t.push(Date.now());
      await W.sites.sinkWait((s) => s.path.startsWith(path), { after: before, timeout: 8000, what: `a request to ${path}` });
      t.push(Date.now());
      timings.push({ file: entry.file, open: t[1] - t[0], click: t[2] - t[1], sink: t[3] - t[2] });
    } catch (err) {
      missing.push(`${entry.file}: ${String(err?.message ?? err).split('\n')[0]}`);
      // Said at once: a run that times out never reaches the assertion below.
      console.log(`# adversarial: positive control: ${missing.at(-1)}`);
    }
    await lane.page.waitForLoadState('load', { timeout: 5000 }).catch(() => {});
  }
});
