// SPDX-License-Identifier: GPL-3.0-or-later
// The hostile agent of adversarial.test.mjs: the corpus and its expectations, the shared state of
// the run (W), and how one page is attacked (attackPage) on a few tabs at once (overLanes).

import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { browserWhyNot } from './browser-harness.mjs';
import { watch } from '../lib/until.mjs';
import * as H from './mcp-harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
export const CORPUS_DIR = resolve(here, '..', 'fixtures', 'adversarial');
export const INDEX = JSON.parse(readFileSync(join(CORPUS_DIR, 'index.json'), 'utf8'));

const ENGINE = process.env.CHAPERONE_TEST_ENGINE;
export const skip = browserWhyNot()
  ?? H.mcpWhyNot()
  ?? (!ENGINE ? 'CHAPERONE_TEST_ENGINE is not set (meson sets it)' : null)
  ?? (!existsSync(ENGINE) ? `no engine harness at ${ENGINE} (ninja -C build)` : null)
  ?? false;
if (skip) console.log(`# skipped: ${skip}`);

export const EXPECTS = ['held', 'gated', 'blind', 'hands-only', 'no-secret', 'inert', 'changed'];
export const BANK_HOST = 'mybank.test';
export const HANDS_HOST = 'account.microsoft.com';
export const LANES = 3;                              // tabs on origin A attacked at once
const MAX_CLICKS = 5;                         // per page
const MAX_INSPECTS = 6;
// Typed by the hostile agent into every credential-looking field; must never come back.
const TYPED_SECRET = 'AdvTyped-Secret-Pw-5521x';
// Everything that must never appear in any result.
const NEVER = [TYPED_SECRET, ...new Set(INDEX.flatMap((p) => [...(p.secrets ?? []), ...(p.markers ?? [])]))];
// The most dangerous controls, by name (English, French, Chinese), tried first.
const DANGER = /send|envoy|发送|pay|支付|付款|buy|checkout|check out|order|donate|transfer|wire|delete|supprim|删除|remove|approve|allow|confirm|submit|post|publish|save|create|update|archive|continue|next|ok\b|turn off|verify|sign in/i;
const CREDENTIAL_NAME = /password|passwort|mot de passe|token|api key|secret|card number|cvc|cvv|\bpin\b|otp|one-time/i;
const FIELD_ROLES = new Set(['textbox', 'searchbox', 'spinbutton', 'combobox', 'textarea', 'input']);
const CLICK_ROLES = new Set(['button', 'link', 'menuitem', 'tab', 'checkbox', 'radio', 'switch', 'option']);

// A relay whose parent is a process of its own (the shell stays, as its parent): another agent.
export const ownProcess = { command: '/bin/sh', args: ['-c', '"$0" "$@"; exit $?', H.RELAY] };

export const W = {
  sites: null, world: null, engine: null, browser: null, deviceId: null, socket: null,
  lanes: [],              // [{page, tab}] on origin A
  special: {},            // host → {page, tab} (the bank, the hands-only host)
  runs: new Map(),        // file → run record (see attackPage)
  attempts: [],           // every tool call: {file, tool, outcome}
  leaks: [],              // {file, tool, secret, excerpt}
  setupNotes: [],
  connectMs: [],          // how long each new MCP session took to connect
};

// ---- calls, counted and scanned ----------------------------------------------------------------

/** The outcome of a result as a short word: ok, held, or the error code. */
export function outcomeOf(result) {
  if (result?.isError) return H.errorCode(result);
  const s = result?.structuredContent ?? {};
  if (s.held === true) return 'held';
  if (s.waiting === true) return 'waiting';
  return 'ok';
}

/**
 * The runs of the pages that expect one of `expects`: each of those pages in the corpus must have
 * a run, so that a check over them cannot pass because nothing was tried.
 */
export function runsOf(...expects) {
  const pages = INDEX.filter((e) => expects.includes(e.expect));
  const runs = [...W.runs.values()].filter((r) => expects.includes(r.expect));
  assert.ok(pages.length > 0, `the corpus has pages that expect ${expects.join('/')}`);
  assert.deepEqual(pages.map((e) => e.file).filter((f) => !W.runs.has(f)), [],
                   `every page that expects ${expects.join('/')} was attacked`);
  return runs;
}

export function scan(file, tool, value) {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  for (const secret of NEVER) {
    const at = text.indexOf(secret);
    if (at >= 0) W.leaks.push({ file, tool, secret, excerpt: text.slice(Math.max(0, at - 80), at + secret.length + 40) });
  }
}

/**
 * A hostile session on one page: calls through the SDK, every result scanned and counted; a
 * session the loop guard paused is replaced by a fresh one (the pause is counted).
 */
export class Hostile {
  constructor(file) {
    this.file = file;
    this.agent = null;
    this.sessions = 0;
    this.log = [];        // {tool, args, outcome, result}
  }

  async open() {
    await this.agent?.close();
    const t0 = Date.now();
    this.agent = await H.connectAgent({ name: `hostile-${this.file}-${++this.sessions}`, socket: W.socket,
                                        ...ownProcess });
    W.connectMs.push(Date.now() - t0);
  }

  async call(tool, args = {}) {
    if (!this.agent) await this.open();
    let result;
    let outcome;
    try {
      result = await this.agent.call(tool, args, { timeout: 15000 });
      outcome = outcomeOf(result);
    } catch (err) {
      result = { thrown: String(err?.message ?? err) };
      outcome = err?.code !== undefined ? `rpc error ${err.code}` : 'thrown';
    }
    scan(this.file, tool, result);
    const entry = { tool, args, outcome, result };
    this.log.push(entry);
    W.attempts.push({ file: this.file, tool, outcome });
    if (outcome === 'paused') await this.open();     // the person would have to resume it; we start anew
    return entry;
  }

  async close() {
    await this.agent?.close();
    this.agent = null;
  }
}

// ---- the person's side -------------------------------------------------------------------------

export function pageUrl(entry, query = '') {
  const base = entry.host ? `http://${entry.host}:${W.sites.portA}` : W.sites.originA;
  return `${base}/adversarial/${entry.file}${query}`;
}

/** The lane (tab) a page is opened in: its own host's tab, or one of the origin-A lanes. */
function tabFor(entry, laneIndex) {
  if (entry.host) return W.special[entry.host];
  return W.lanes[laneIndex];
}

/**
 * Opens `entry` in `lane`'s tab, as the person would, and waits for it to load. A submit the
 * previous page let through may still be navigating the tab: that navigation is let finish first.
 */
export async function openIn(lane, entry, query = '') {
  const url = pageUrl(entry, query);
  for (let attempt = 0; ; attempt++) {
    try {
      await lane.page.goto(url, { waitUntil: 'load', timeout: 10000 });
      return;
    } catch (err) {
      if (attempt >= 3 || !/interrupted by another navigation|ERR_ABORTED/.test(String(err?.message))) throw err;
      await lane.page.waitForLoadState('load', { timeout: 5000 }).catch(() => {});
      if (lane.page.url() === url) return;   // "interrupted" by a navigation to the same page
    }
  }
}

/**
 * Counts the main-frame navigations of a lane's tab from now on; `stop()` when done.
 * → {count(), next(after, what)}
 */
function navigationsOf(page) {
  let n = 0;
  const seen = watch();
  const on = (frame) => { if (frame === page.mainFrame()) { n += 1; seen.notify(); } };
  page.on('framenavigated', on);
  return {
    count: () => n,
    next: (after, what) => seen.when(() => n > after, { timeout: 10000, what }),
    stop: () => page.off('framenavigated', on),
  };
}

/**
 * After an act that was done (`entry`, its log entry): when the act says it started a navigation
 * (changes.navigating or urlChanged), waits for the tab to commit it and load. → the tab's URL.
 */
async function settleNavigation(lane, entry, navs, before) {
  const changes = entry?.result?.structuredContent?.changes ?? {};
  if (changes.navigating || changes.urlChanged || navs.count() > before) {
    await navs.next(before, `the navigation ${entry.tool} started in ${lane.name}`);
    await lane.page.waitForLoadState('load', { timeout: 10000 });
  }
  return lane.page.url();
}

export async function agentTabs(agent) {
  const r = H.ok(await agent.call('browser_tabs'), 'browser_tabs');
  return H.structuredOf(r).tabs ?? [];
}

// ---- the attack on one page --------------------------------------------------------------------

export const nodeName = (n) => String(n?.name ?? n?.label ?? '');
const nodeRole = (n) => String(n?.role ?? n?.tag ?? '');
export const isField = (n) => FIELD_ROLES.has(nodeRole(n)) || /^(input|textarea)$/i.test(String(n?.tag ?? ''));
const isClickable = (n) => !isField(n) && (CLICK_ROLES.has(nodeRole(n)) || /^(button|a)$/i.test(String(n?.tag ?? '')));

/** The nodes of a snapshot (structured when the result has them, else parsed from its lines). */
export function nodesOfSnapshot(result) {
  const structured = H.nodesOf(result).filter((n) => n && n.ref);
  if (structured.length) return structured;
  return H.refLines(H.textOf(result)).map((l) => ({ ref: l.ref, role: l.role, name: l.name }));
}

/** Clicks in order of danger: the index's control first, then DANGER names, then everything else. */
export function clickOrder(entry, nodes) {
  const clickable = nodes.filter(isClickable);
  const rank = (n) => {
    const name = nodeName(n);
    if (entry.control && name === entry.control) return 0;
    if (entry.control && name.includes(entry.control)) return 1;
    if (DANGER.test(name)) return 2;
    return 3;
  };
  return clickable.map((n, i) => ({ n, i })).sort((a, b) => rank(a.n) - rank(b.n) || a.i - b.i).map((x) => x.n);
}

/**
 * Everything a hostile agent tries on one page. Returns the run record:
 * {file, expect, entry, first (the first snapshot's outcome), clicks: [{name, outcome, result}],
 *  fills, inspects, navigate, log}.
 */
export async function attackPage(entry, lane) {
  const run = { file: entry.file, expect: entry.expect, entry, clicks: [], fills: [], inspects: [], snapshots: [] };
  const started = Date.now();
  W.runs.set(entry.file, run);
  const h = new Hostile(entry.file);
  run.hostile = h;
  try {
    await openIn(lane, entry);
    const tab = lane.tab;
    const snap = await h.call('browser_snapshot', { tab });
    run.first = snap.outcome;
    run.snapshots.push(snap.outcome);
    let nodes = snap.outcome === 'ok' ? nodesOfSnapshot(snap.result) : [];
    run.nodeCount = nodes.length;

    if (snap.outcome !== 'ok') {
      // Nothing readable: try anyway, with refs an agent would guess.
      for (const ref of ['1:e1', '1:e2', '1:e3']) run.inspects.push((await h.call('browser_inspect', { tab, ref })).outcome);
      run.fills.push((await h.call('browser_act', { tab, ref: '1:e2', action: 'fill', value: TYPED_SECRET })).outcome);
      for (const ref of ['1:e3', '1:e4']) {
        const c = await h.call('browser_act', { tab, ref, action: 'click' });
        run.clicks.push({ name: `(guessed ${ref})`, outcome: c.outcome, result: c.result });
      }
    } else {
      // Read every field (and anything named like a secret), then type into the fields.
      const fields = nodes.filter(isField);
      const toInspect = [...fields, ...nodes.filter((n) => !isField(n) && CREDENTIAL_NAME.test(nodeName(n)))].slice(0, MAX_INSPECTS);
      for (const n of toInspect) run.inspects.push((await h.call('browser_inspect', { tab, ref: n.ref })).outcome);
      for (const n of fields.slice(0, MAX_INSPECTS)) {
        const name = nodeName(n);
        const value = CREDENTIAL_NAME.test(name) ? TYPED_SECRET
          : /mail|^to$/i.test(name) ? 'mallory@evil.test' : /amount/i.test(name) ? '9999' : `hostile text for ${name.slice(0, 20)}`;
        const f = await h.call('browser_act', { tab, ref: n.ref, action: 'fill', value });
        run.fills.push(f.outcome);
      }
      // Click: the most dangerous first, then every other control, each once.
      const names = clickOrder(entry, nodes).map((n) => ({ ref: n.ref, name: nodeName(n), role: nodeRole(n) }));
      const tried = new Set();
      let refsFresh = true;
      for (const target of names) {
        if (run.clicks.length >= MAX_CLICKS) break;
        const key = `${target.role}|${target.name}|${target.ref}`;
        if (tried.has(key)) continue;
        tried.add(key);
        let ref = target.ref;
        if (!refsFresh) {
          // The page may have changed (or left): look the control up again by its name.
          const again = await h.call('browser_snapshot', { tab });
          run.snapshots.push(again.outcome);
          if (again.outcome !== 'ok') break;
          nodes = nodesOfSnapshot(again.result);
          const same = nodes.find((n) => nodeName(n) === target.name && nodeRole(n) === target.role);
          if (!same) continue;
          ref = same.ref;
        }
        const navs = navigationsOf(lane.page);
        let c;
        let url;
        try {
          c = await h.call('browser_act', { tab, ref, action: 'click' });
          url = c.outcome === 'ok' ? await settleNavigation(lane, c, navs, 0) : lane.page.url();
        } finally {
          navs.stop();
        }
        run.clicks.push({ name: target.name, outcome: c.outcome, result: c.result });
        refsFresh = c.outcome !== 'ok';
        // Left the page (a link, or a submit that got through): one more look, then stop.
        if (c.outcome === 'ok' && !url.includes(`/adversarial/${entry.file}`)) {
          const look = await h.call('browser_snapshot', { tab });
          run.snapshots.push(look.outcome);
          run.leftTo = lane.page.url();
          break;
        }
      }
    }
    // And the bank, directly.
    run.urlBeforeNavigate = lane.page.url();
    const navs = navigationsOf(lane.page);
    try {
      const nav = await h.call('browser_navigate', { tab, url: `http://${BANK_HOST}:${W.sites.portA}/adversarial/bank-home.html` });
      run.navigate = nav.outcome;
      // A navigate that was done has committed its page by the time it answers (it answers with
      // the new document); one that was refused started nothing.
      run.navigatedTo = nav.outcome === 'ok' ? await settleNavigation(lane, nav, navs, 0) : lane.page.url();
    } finally {
      navs.stop();
    }
  } catch (err) {
    run.error = String(err?.stack ?? err);
  } finally {
    run.log = h.log;
    run.sessions = h.sessions;
    await h.close();
    run.ms = Date.now() - started;
  }
  return run;
}

/** Runs `fn(entry, lane)` over entries, LANES at a time on origin A, the special hosts each on their own tab. */
export async function overLanes(entries, fn) {
  const queues = Array.from({ length: LANES }, () => []);
  const special = {};
  let i = 0;
  for (const e of entries) {
    if (e.host) (special[e.host] ??= []).push(e);
    else queues[i++ % LANES].push(e);
  }
  const workers = [
    ...queues.map((q, li) => (async () => { for (const e of q) await fn(e, W.lanes[li]); })()),
    ...Object.entries(special).map(([host, q]) => (async () => {
      const lane = W.special[host];
      for (const e of q) {
        if (!lane) { W.runs.set(e.file, { file: e.file, expect: e.expect, entry: e, error: `no granted tab on ${host}`, clicks: [] }); continue; }
        await fn(e, lane);
      }
    })()),
  ];
  await Promise.all(workers);
}
