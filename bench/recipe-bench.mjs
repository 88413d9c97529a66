#!/usr/bin/env node
// SPDX-License-Identifier: GPL-3.0-or-later
// recipe-bench.mjs: what browser_batch saves an agent. The same 20 steps — reads of a site's own
// API (the fixture app tests/fixtures/sites/api-app.html, signed by its own cookie and CSRF
// header), then 10 fills and 10 reads-of-the-page mixed on its compose page — done by an agent
// as 20 separate tool calls, and as one replay of a recipe saved from them. The real stack:
// the official MCP SDK client → chaperone-mcp → the core engine harness (chaperone-test-engine)
// → the real extension in Chromium. Figures, not assertions; not a test.
//
//   node bench/recipe-bench.mjs [--runs=N] [--json=PATH]
//
// Per workload: the median wall time of the 20 calls and of the one replay over N runs (after a
// warm-up), and their ratio (issue 17 item 7 aims at ≥ 5×).

import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
process.env.CHAPERONE_TEST_ENGINE ??= join(root, 'build', 'tests', 'chaperone-test-engine');
process.env.CHAPERONE_MCP ??= join(root, 'build', 'src', 'relay', 'chaperone-mcp');

const opts = { runs: 12, json: join(root, 'build', 'bench', 'recipe-bench.json') };
for (const arg of process.argv.slice(2)) {
  let m;
  if ((m = /^--runs=(\d+)$/.exec(arg))) opts.runs = Math.max(1, Number(m[1]));
  else if ((m = /^--json=(.+)$/.exec(arg))) opts.json = resolve(m[1]);
  else if (arg === '--help' || arg === '-h') {
    console.log('usage: node bench/recipe-bench.mjs [--runs=N] [--json=PATH]');
    process.exit(0);
  } else {
    console.error(`recipe-bench: unknown option ${arg} (see --help)`);
    process.exit(2);
  }
}

const H = await import('../tests/e2e/mcp-harness.mjs');
const { Browser, browserWhyNot, domWait } = await import('../tests/e2e/browser-harness.mjs');
const { startFixtureServer } = await import('../tests/fixtures/serve.mjs');
const { median, round } = await import('./mcp-bench-report.mjs');

const why = H.mcpWhyNot() ?? browserWhyNot() ??
  (existsSync(process.env.CHAPERONE_TEST_ENGINE) ? null : `no engine harness at ${process.env.CHAPERONE_TEST_ENGINE}`);
if (why) {
  console.log(`recipe-bench: skipped: ${why}`);
  process.exit(0);
}

const STEPS = 20;
const stops = [];
const cleanup = async () => { for (const fn of stops.splice(0).reverse()) await fn().catch(() => {}); };
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => cleanup().finally(() => process.exit(130)));

/** A tool call that must succeed; → its result. */
async function ok(agent, tool, args) {
  const r = await agent.call(tool, args, { timeout: 60000 });
  if (r.isError) throw new Error(`${tool}: ${H.textOf(r).slice(0, 300)}`);
  return r;
}

async function timed(fn) {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

/**
 * A browser paired and granted as a person does it, the fixture app and the compose page open in
 * it, the app's API learned by an agent: {browser, agent, app, compose, entry}.
 * `detachable`: the browser Playwright lets go of once it is set up (see below).
 */
async function setUp(sites, world, { detachable }) {
  const { engine } = world;
  const browser = await Browser.launch({ detachable });
  stops.push(() => browser.close());
  await browser.setPort(engine.port);
  const pages = {};
  for (const [name, path] of [['app', '/api-app.html'], ['compose', '/mcp-compose.html']]) {
    pages[name] = await browser.ctx.newPage();
    await pages[name].goto(`${sites.originA}${path}`);
  }
  const popup = await browser.popup(pages.app);
  const mark = engine.mark();
  await browser.startPairing(popup);
  const pairing = await engine.waitFor({ event: 'pairing' }, { after: mark, timeoutMs: 15000 });
  engine.approve(pairing.requestId);
  await engine.waitFor({ event: 'device-online' }, { after: mark, timeoutMs: 20000 });
  await browser.waitForState('connected');
  await browser.grant(popup, { pages: [pages.app, pages.compose], preset: 'control',
    extras: ['browser.network.read', 'browser.api.call'], label: 'Recipe bench' });
  await popup.close();
  await pages.app.reload();
  await domWait(pages.app, () => document.getElementById('status')?.textContent === 'Ready', null,
    { what: 'the app to have made its calls' });

  const agent = await H.connectAgent({ name: 'recipe-bench', socket: world.socket, timeoutMs: 20000 });
  stops.push(() => agent.close());
  const tabs = H.structuredOf(await ok(agent, 'browser_tabs', {})).tabs;
  const tabOf = (path) => tabs.find((t) => t.url?.includes(path))?.tab;
  const app = tabOf('/api-app.html');
  const compose = tabOf('/mcp-compose.html');
  const learned = H.textOf(await ok(agent, 'browser_api', { tab: app, action: 'learn' }));
  const entry = /(e[0-9a-f]{12}) GET \/api\/contacts\/\{id\}/.exec(learned)?.[1];
  if (!app || !compose || !entry) throw new Error(`no tab or no learned entry: ${learned.slice(0, 400)}`);
  if (detachable) await browser.detach();
  return { browser, agent, app, compose, entry };
}

/** The two workloads on one set-up browser: {reads, fills} of the figures. */
async function measure({ agent, app, compose, entry }, suffix) {
  // The workloads: the 20 separate calls an agent makes, and the same 20 as batch steps.
  const reads = {
    label: '20 API reads (GET /api/contacts/{id})',
    tab: app,
    params: (i) => ({ c: String(1 + (i % 3)) }),
    calls: (p) => Array.from({ length: STEPS }, () => ['browser_api', { tab: app, action: 'call', entryId: entry,
      params: { id: p.c } }]),
    steps: Array.from({ length: STEPS }, () => ({ api: { entryId: entry, params: { id: '{{c}}' } } })),
  };
  const fills = {
    label: '10 fills + 10 waits for the page to show them (compose page)',
    tab: compose,
    // Ten different values: the same fill three times in a row is a loop Chaperone pauses.
    params: (i) => Object.fromEntries(Array.from({ length: STEPS / 2 }, (_, k) => [`s${k}`, `Lunch ${i}.${k}`])),
    // A fill, then a look that the page shows it (as an agent checks its work): browser_snapshot
    // until, the single-call form of a batch's wait step.
    calls: (p) => Array.from({ length: STEPS / 2 }, (_, k) => [
      ['browser_act', { tab: compose, ref: null, action: 'fill', value: p[`s${k}`] }],
      ['browser_snapshot', { tab: compose, query: 'Preview', until: 'Preview' }],
    ]).flat(),
    steps: Array.from({ length: STEPS / 2 }, (_, k) => [
      { act: { target: { role: 'textbox', name: 'Subject' }, action: 'fill', value: `{{s${k}}}` } },
      { wait: { text: 'Preview' } },
    ]).flat(),
  };

  const results = {};
  for (const [key, w] of Object.entries({ reads, fills })) {
    // The separate calls need a ref for the field: one snapshot, untimed, as an agent has it.
    let ref = null;
    if (key === 'fills') {
      const snap = await ok(agent, 'browser_snapshot', { tab: compose, query: 'Subject' });
      ref = H.nodesOf(snap).find((n) => n.role === 'textbox' && /Subject/.test(n.name))?.ref;
      if (!ref) throw new Error('no Subject field in the snapshot');
    }
    const separate = [];
    const recipe = [];
    const name = `bench-${key}${suffix}`;
    await ok(agent, 'browser_batch', { tab: w.tab, steps: w.steps, params: w.params(0), saveAs: name });
    for (let i = 0; i <= opts.runs; i++) {
      const p = w.params(i);
      const one = await timed(async () => {
        for (const [tool, args] of w.calls(p)) await ok(agent, tool, tool === 'browser_act' ? { ...args, ref } : args);
      });
      const replay = await timed(async () => {
        const r = await ok(agent, 'browser_batch', { tab: w.tab, recipe: name, params: p });
        const s = H.structuredOf(r);
        if (s.done !== STEPS) throw new Error(`the replay ran ${s.done} of ${s.of}: ${H.textOf(r).slice(0, 300)}`);
      });
      if (i > 0) { // the first of each is a warm-up
        separate.push(one);
        recipe.push(replay);
      }
    }
    const a = median(separate);
    const b = median(recipe);
    results[key] = { label: w.label, separate_ms: round(a, 1), recipe_ms: round(b, 1), ratio: round(a / b, 2),
      runs: opts.runs };
  }
  return results;
}

try {
  const sites = await startFixtureServer();
  stops.push(() => sites.close());
  const world = await H.startEngineWithAgents();
  stops.push(() => world.stop());
  // Each workload in two browsers: one Playwright drives throughout, as the tests and the peers'
  // figures run; and one it sets up and lets go of, as a person's browser is, with no debugger
  // attached (Playwright follows every request over the DevTools protocol).
  const results = {};
  for (const [detachable, suffix, under] of [[false, '-pw', 'Playwright attached'], [true, '', 'no debugger attached']]) {
    const set = await setUp(sites, world, { detachable });
    for (const [key, r] of Object.entries(await measure(set, suffix))) {
      results[`${key}${suffix ? '_under_playwright' : ''}`] = { ...r, label: `${r.label}, ${under}` };
    }
    await set.agent.close();
    await set.browser.close();
  }

  const out = { steps: STEPS, loadavg: loadavg().map((l) => round(l, 2)), results };
  for (const r of Object.values(results)) {
    console.log(`${r.label}: ${STEPS} separate calls ${r.separate_ms} ms, one recipe replay ${r.recipe_ms} ms ` +
      `(median of ${r.runs}): ${r.ratio}x`);
  }
  await mkdir(dirname(opts.json), { recursive: true });
  await writeFile(opts.json, `${JSON.stringify(out, null, 2)}\n`);
  console.log(`recipe-bench: ${opts.json}`);
} catch (err) {
  console.error(`recipe-bench: ${err.stack ?? err}`);
  process.exitCode = 1;
} finally {
  await cleanup();
}
