#!/usr/bin/env node
// SPDX-License-Identifier: GPL-3.0-or-later
// realsite-bench.mjs: a person's tasks on real open-source web apps (TiddlyWiki, MailDev, Node-RED,
// installed from npm and served on loopback: tests/realsites/apps.mjs), done by one scripted agent
// (tests/realsites/tasks.mjs) through three browser MCP servers with the official MCP SDK client:
// Chaperone (SDK → chaperone-mcp → the core engine harness → the extension in Chromium; the
// person's approvals through the engine's JSON lines), Playwright MCP and Chrome DevTools MCP
// (bench/peers). Figures, not assertions; not a test.
//
//   node bench/realsite-bench.mjs [--quick] [--only=ours,playwright,devtools] [--json=PATH]
//
// Per task and server: success n/N (judged by the app's own state), tool calls, bytes of results
// (JSON, with any file a result links to), wall time (median), approvals asked of the person.
// Then the acts on each app's page: fill (its search box) and click + settle (a neutral control)
// medians per server — Chaperone's with its tab in front and in the background (another tab in
// front; Chromium throttles a background tab's timers) — and the ratios the issue targets.

import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
process.env.CHAPERONE_TEST_ENGINE ??= join(root, 'build', 'tests', 'chaperone-test-engine');
process.env.CHAPERONE_MCP ??= join(root, 'build', 'src', 'relay', 'chaperone-mcp');

const opts = { quick: false, only: null, json: join(root, 'build', 'bench', 'realsite-bench.json') };
for (const arg of process.argv.slice(2)) {
  let m;
  if (arg === '--quick' || arg === '-q') opts.quick = true;
  else if ((m = /^--only=(.+)$/.exec(arg))) opts.only = new Set(m[1].split(','));
  else if ((m = /^--json=(.+)$/.exec(arg))) opts.json = resolve(m[1]);
  else if (arg === '--help' || arg === '-h') {
    console.log('usage: node bench/realsite-bench.mjs [--quick] [--only=ours,playwright,devtools] [--json=PATH]');
    process.exit(0);
  } else {
    console.error(`realsite-bench: unknown option ${arg} (see --help)`);
    process.exit(2);
  }
}
const N = opts.quick ? { runs: 2, acts: 5 } : { runs: 3, acts: 15 };
const want = (name) => !opts.only || opts.only.has(name);

const { appsWhyNot, startApps } = await import('../tests/realsites/apps.mjs');
const { TASKS, runTask } = await import('../tests/realsites/tasks.mjs');
const D = await import('../tests/realsites/drivers.mjs');
const { chaperoneWhyNot, startChaperoneWorld } = await import('../tests/realsites/world.mjs');
const { median, round } = await import('./mcp-bench-report.mjs');
const { until } = await import('../tests/lib/until.mjs');

const t0 = performance.now();
const phase = (what) => console.error(`realsite-bench: ${what} (${((performance.now() - t0) / 1000).toFixed(1)} s)`);

const cleanups = [];
const cleanup = async () => { for (const fn of cleanups.splice(0).reverse()) await fn().catch(() => {}); };
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => cleanup().finally(() => process.exit(130)));
const watchdogMs = opts.quick ? 600000 : 1500000;
setTimeout(() => {
  console.error(`realsite-bench: gave up after ${watchdogMs / 1000} s`);
  cleanup().finally(() => process.exit(1));
}, watchdogMs).unref();

// The act figures: on each app's page, the field filled and a neutral control clicked (one the
// field's own popup does not cover: TiddlyWiki's search results hang over its sidebar tabs; and
// one a second click soon after does not turn into a double click: on Node-RED's flow tab that
// opens the flow's editor, whose shade then covers the tab, for a person too).
const ACTS = {
  tiddlywiki: { fill: { role: ['searchbox', 'textbox'], after: { role: 'button', name: /^control panel$|^Server status$/ } },
    click: { role: 'button', name: 'advanced search' } },
  maildev: { fill: { role: ['textbox', 'searchbox'], name: /search/i }, click: { role: 'button', name: 'Refresh emails' } },
  nodered: { fill: { role: ['textbox', 'searchbox'], name: 'filter nodes' }, click: { role: 'link', name: /^[^\p{L}\p{N}]*info$/u } },
};

async function actFigures(d, app, { background = null } = {}) {
  const spec = ACTS[app.name];
  if (d.name === 'ours') d.use(app);
  else await d.open(app);
  if (background) await background();
  // Fresh refs before each act, untimed: an app re-renders what a fill or click touched.
  const targets = async () => {
    const snap = await d.snapshot();
    const field = d.find(snap, { role: spec.fill.role, name: spec.fill.name }, { after: spec.fill.after });
    const control = d.find(snap, spec.click);
    // A person waits for a control to be enabled again (MailDev's Refresh, while it refreshes).
    return field && control && !control.disabled ? { field, control } : null;
  };
  const fresh = () => until(targets, { timeout: 30000, what: `${d.label}: the field and the control on ${app.label}` });
  const fill = [];
  const click = [];
  const failed = { fill: 0, click: 0, first: null };
  // Acts that answered before their effects settled (capped), by the reason the answer gave.
  const unsettled = {};
  const noteSettle = (r) => {
    const c = r?.structuredContent?.changes;
    if (c?.settled === false) unsettled[c.reason ?? 'unsaid'] = (unsettled[c.reason ?? 'unsaid'] ?? 0) + 1;
  };
  // One act, timed when it succeeds; a refusal is counted and said, and the figures go on.
  const timedAct = async (kind, times, i, fn) => {
    const s = performance.now();
    try {
      noteSettle(await fn());
      if (i) times.push(performance.now() - s);
    } catch (err) {
      failed[kind] += 1;
      // The page's own reason (inside the untrusted wrapper) says more than the app's sentence.
      const reason = /<untrusted-page-content-\w+>\s*([^<]{1,200})/.exec(err.message)?.[1]?.trim();
      failed.first ??= `${kind} #${i} (after ${Math.round(performance.now() - s)} ms): ${err.message.slice(0, 120)}` +
        `${reason ? ` … the page: ${reason}` : ''}`;
    }
  };
  for (let i = 0; i < 1 + N.acts; i++) {
    let t = await fresh();
    await timedAct('fill', fill, i, () => d.fill(t.field.ref, 'search field', `word${i}`));
    t = await fresh();
    await timedAct('click', click, i, () => d.click(t.control.ref, 'neutral control'));
  }
  return { fill_ms: round(median(fill), 1), click_ms: round(median(click), 1), n: N.acts,
    ...(failed.first ? { failed } : {}), ...(Object.keys(unsettled).length ? { unsettled } : {}) };
}

async function measure(d, apps, extra = {}) {
  const out = { server: d.label, tasks: {}, acts: {} };
  for (const [key, task] of Object.entries(TASKS)) {
    // Tasks only Chaperone can do that way (the site's own API): the peers have no such tool.
    if (task.ours && d.name !== 'ours') continue;
    phase(`${d.label}: ${task.title} x${N.runs}`);
    const runs = [];
    for (let i = 0; i < N.runs; i++) {
      await extra.front?.(task.app);
      runs.push(await runTask(task, d, apps[task.app]));
    }
    const good = runs.filter((r) => r.ok);
    const use = good.length ? good : runs;
    out.tasks[key] = {
      success: `${good.length}/${runs.length}`,
      // The first run of a task may learn what later runs remember (the API read learns the
      // site's calls once): its figures apart.
      first: runs[0] ? { calls: runs[0].calls, bytes: runs[0].bytes, ms: round(runs[0].ms, 0) } : null,
      calls: median(use.map((r) => r.calls)), bytes: median(use.map((r) => r.bytes)),
      ms: round(median(use.map((r) => r.ms)), 0), approvals: median(use.map((r) => r.approvals)),
      why: [...new Set(runs.filter((r) => !r.ok).map((r) => r.why.slice(0, 300)))].slice(0, 2),
    };
  }
  for (const app of Object.values(apps)) {
    phase(`${d.label}: acts on ${app.label}`);
    try {
      await extra.front?.(app.name);
      out.acts[app.name] = { front: await actFigures(d, app) };
      if (extra.background) out.acts[app.name].background = await actFigures(d, app, { background: () => extra.background(app.name) });
    } catch (err) {
      out.acts[app.name] = { error: err.message.slice(0, 300) };
    }
  }
  return out;
}

const results = { when: new Date().toISOString(), quick: opts.quick, node: process.version,
  loadavg_start: loadavg().map((l) => round(l, 2)), runs: N.runs, servers: {}, skipped: {}, targets: {} };

const whyApps = appsWhyNot();
if (whyApps) {
  console.log(`realsite bench: skipped: ${whyApps}`);
  process.exit(0);
}
if (!existsSync(D.CHROMIUM)) {
  console.log(`realsite bench: skipped: no Chromium at ${D.CHROMIUM}`);
  process.exit(0);
}

try {
  phase('starting TiddlyWiki, MailDev, Node-RED');
  const running = await startApps();
  cleanups.push(() => running.stop());
  const { apps } = running;
  results.apps = Object.fromEntries(Object.values(apps).map((a) => [a.name, a.label]));

  if (want('ours')) {
    const why = await chaperoneWhyNot();
    if (why) results.skipped.ours = why;
    else {
      phase('Chaperone: engine, Chromium with the extension, pairing, grant');
      try {
        // Chromium as a person runs it: a tab behind another is hidden and its timers throttled.
        const w = await startChaperoneWorld(Object.values(apps), { name: 'realsite-bench', throttled: true });
        cleanups.push(() => w.stop());
        results.servers.ours = await measure(w.driver, apps, {
          front: (name) => w.front(name),
          // Another tab in front of the app's, in its window (the app's page hidden, throttled).
          background: (name) => w.background(name),
        });
        results.chromium = w.browser.ctx.browser()?.version() ?? '';
      } catch (err) {
        results.skipped.ours = `failed: ${err.message}`.slice(0, 600);
        console.error(err.stack);
      }
    }
  }
  for (const Cls of [D.PlaywrightDriver, D.DevtoolsDriver]) {
    const d = new Cls();
    if (!want(d.name)) continue;
    const why = Cls.whyNot();
    if (why) { results.skipped[d.name] = why; continue; }
    try {
      phase(`${d.label}: starting`);
      await d.start();
      results.servers[d.name] = await measure(d, apps);
    } catch (err) {
      results.skipped[d.name] = `failed: ${err.message}`.slice(0, 600);
      console.error(err.stack);
    } finally {
      await d.close().catch(() => {});
    }
  }
} finally {
  await cleanup();
}

// ---- report ------------------------------------------------------------------------------------

const S = results.servers;
const cols = ['ours', 'playwright', 'devtools'].filter((c) => S[c]);
const head = { ours: 'Chaperone', playwright: 'Playwright MCP', devtools: 'DevTools MCP' };
const cell = (v) => (v === undefined || v === null || Number.isNaN(v) ? '—' : String(v));
const row = (label, get) => console.log(`${label.padEnd(46)} ${cols.map((c) => cell(get(S[c])).padStart(15)).join(' ')}`);
console.log(`\nReal-site tasks (${opts.quick ? 'quick' : 'full'}, ${N.runs} runs each; medians): ${Object.values(results.apps ?? {}).join(', ')}`);
console.log(`${''.padEnd(46)} ${cols.map((c) => head[c].padStart(15)).join(' ')}`);
for (const key of Object.keys(TASKS)) {
  console.log(TASKS[key].title);
  row('  success', (s) => s.tasks[key]?.success);
  row('  tool calls', (s) => s.tasks[key]?.calls);
  row('  bytes returned', (s) => s.tasks[key]?.bytes);
  row('  wall ms', (s) => s.tasks[key]?.ms);
  row('  approvals asked', (s) => s.tasks[key]?.approvals);
}
console.log('acts (median ms): fill | click + settle');
for (const name of Object.keys(ACTS)) {
  row(`  ${name}, tab in front`, (s) => (s.acts[name]?.front ? `${s.acts[name].front.fill_ms} | ${s.acts[name].front.click_ms}` : s.acts[name]?.error ? 'error' : undefined));
  if (S.ours?.acts[name]?.background) row(`  ${name}, tab in the background`, (s) => (s.acts[name]?.background ? `${s.acts[name].background.fill_ms} | ${s.acts[name].background.click_ms}` : undefined));
}
for (const c of cols) {
  for (const [name, a] of Object.entries(S[c].acts)) {
    for (const where of ['front', 'background']) {
      const f = a[where]?.failed;
      if (f) console.log(`${head[c]} acts on ${name} (${where}): ${f.fill} fill(s) and ${f.click} click(s) refused; first: ${f.first}`);
      const u = a[where]?.unsettled;
      if (u) console.log(`${head[c]} acts on ${name} (${where}) answered unsettled (capped): ${Object.entries(u).map(([k, n]) => `${n}× ${k}`).join(', ')}`);
    }
    if (a.error) console.log(`${head[c]} acts on ${name}: ${a.error.slice(0, 300)}`);
  }
}
for (const [n, why] of Object.entries(results.skipped)) console.log(`${head[n] ?? n}: skipped: ${why}`);
for (const c of cols) {
  for (const [key, t] of Object.entries(S[c].tasks)) if (t.why.length) console.log(`${head[c]} ${key}: ${t.why.join(' / ')}`);
}

// Ratios (Chaperone / the better peer): ≤ the bound meets the issue's target.
const peerBest = (get) => {
  const v = ['playwright', 'devtools'].map((c) => (S[c] ? (get(S[c]) ?? NaN) : NaN)).filter(Number.isFinite);
  return v.length ? Math.min(...v) : NaN;
};
const targets = [];
// A task's figures count only where it was done (a failed run's time or bytes beat nobody).
const done = (t) => t && !t.success.startsWith('0/');
for (const key of Object.keys(TASKS)) {
  if (TASKS[key].ours) continue;
  targets.push([`${key}: wall time ≤ the faster peer's`, (s) => (done(s.tasks[key]) ? s.tasks[key].ms : NaN), 1]);
  targets.push([`${key}: bytes ≤ the smaller peer's`, (s) => (done(s.tasks[key]) ? s.tasks[key].bytes : NaN), 1]);
}
// Issue 17: the wiki read through the site's own API, against the same read through the page's
// controls (Chaperone's own, same run) and against both peers' page-controls read.
const api = (get) => (s) => (done(s.tasks.wikiApiRead) ? get(s.tasks.wikiApiRead) : NaN);
targets.push(['wikiApiRead: wall time ≤ the faster peer\'s wikiRead', api((t) => t.ms), 1, (s) => (done(s.tasks.wikiRead) ? s.tasks.wikiRead.ms : NaN)]);
targets.push(['wikiApiRead: bytes ≤ the smaller peer\'s wikiRead', api((t) => t.bytes), 1, (s) => (done(s.tasks.wikiRead) ? s.tasks.wikiRead.bytes : NaN)]);
for (const name of Object.keys(ACTS)) {
  targets.push([`${name}: fill ≤ 1/2 of the faster peer's (front)`, (s) => s.acts[name]?.front?.fill_ms, 0.5]);
  targets.push([`${name}: click+settle ≤ 1/3 of the faster peer's (front)`, (s) => s.acts[name]?.front?.click_ms, 1 / 3]);
  targets.push([`${name}: fill ≤ 1/2 of the faster peer's (background)`, (s) => s.acts[name]?.background?.fill_ms, 0.5, (s) => s.acts[name]?.front?.fill_ms]);
  targets.push([`${name}: click+settle ≤ 1/3 of the faster peer's (background)`, (s) => s.acts[name]?.background?.click_ms, 1 / 3, (s) => s.acts[name]?.front?.click_ms]);
}
console.log('\ntargets (ratio = Chaperone / the better peer)');
for (const [what, get, bound, peerGet = get] of targets) {
  // A figure with nothing measured (every act refused) is no figure: never "met".
  const ours = S.ours ? (get(S.ours) ?? NaN) : NaN;
  const ref = peerBest(peerGet);
  const ratio = ours / ref;
  const met = Number.isFinite(ratio) ? ratio <= bound : null;
  results.targets[what] = { ours: round(ours), reference: round(ref), ratio: round(ratio), bound: round(bound), met };
  console.log(`  ${what.padEnd(60)} ${Number.isFinite(ratio) ? ratio.toFixed(3).padStart(7) : '    n/a'} (bound ${bound.toFixed(3)}) ${met === null ? 'n/a' : met ? 'met' : 'NOT met'}`);
}
// The API read against Chaperone's own page-controls read of the same task, in the same run.
const ui = S.ours?.tasks.wikiRead;
const viaApi = S.ours?.tasks.wikiApiRead;
if (done(ui) && done(viaApi)) {
  const bytesRatio = viaApi.bytes / ui.bytes;
  const msRatio = viaApi.ms / ui.ms;
  results.targets['wikiApiRead vs page controls: bytes ≤ 1/5'] = { ours: viaApi.bytes, reference: ui.bytes, ratio: round(bytesRatio), bound: 0.2, met: bytesRatio <= 0.2 };
  results.targets['wikiApiRead vs page controls: wall ≤ 1/3'] = { ours: viaApi.ms, reference: ui.ms, ratio: round(msRatio), bound: round(1 / 3), met: msRatio <= 1 / 3 };
  console.log(`  ${'wikiApiRead: bytes ≤ 1/5 of the page-controls read (Chaperone)'.padEnd(60)} ${bytesRatio.toFixed(3).padStart(7)} (bound 0.200) ${bytesRatio <= 0.2 ? 'met' : 'NOT met'}`);
  console.log(`  ${'wikiApiRead: wall ≤ 1/3 of the page-controls read (Chaperone)'.padEnd(60)} ${msRatio.toFixed(3).padStart(7)} (bound 0.333) ${msRatio <= 1 / 3 ? 'met' : 'NOT met'}`);
  if (viaApi.first) console.log(`  (the first API run, which learned the site's calls: ${viaApi.first.calls} calls, ${viaApi.first.bytes} bytes, ${viaApi.first.ms} ms)`);
}
results.loadavg_end = loadavg().map((l) => round(l, 2));
console.log(`load average: start ${results.loadavg_start.join(', ')}; end ${results.loadavg_end.join(', ')}; wall ${((performance.now() - t0) / 1000).toFixed(1)} s`);
try {
  await mkdir(dirname(opts.json), { recursive: true });
  await writeFile(opts.json, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`results: ${opts.json}`);
} catch (err) {
  console.error(`realsite-bench: could not write ${opts.json}: ${err.message}`);
}
process.exit(0);
