#!/usr/bin/env node
// SPDX-License-Identifier: GPL-3.0-or-later
// extension-bench.mjs: what an agent's calls cost through the real path — the C core engine
// (tests/chaperone-test-engine) → WebSocket → the extension's service worker → the page and back —
// in real Chromium, set beside what Playwright/CDP pay for the same page in the same run.
// Figures, not assertions; not a test.
//
//   node bench/extension-bench.mjs [--quick] [--contexts=N] [--clicks=N] [--engine=PATH]
//
//   --quick        a few of each, to check the bench runs (5 captures, 30 clicks)
//   --contexts=N   browser.context captures of big.html, and as many aria snapshots (default 20)
//   --clicks=N     browser.node.action clicks, and as many CDP Runtime.evaluate clicks (default 200)
//   --engine=PATH  the engine harness (default: $CHAPERONE_TEST_ENGINE, else build/tests/chaperone-test-engine)
//   --acts=N       fills and clicks per page and per tab mode in part 3 (default 15)
//   --only-acts    part 3 only (no engine needed)
//
// What is measured:
//   0. in this process, no browser needed: the URL floor on hostile URLs and a 10 MB one, and
//      redaction of 1 MiB of hard input and of a value with 2^40 shared paths (the unit tests check
//      their answers and that they end; the time is measured here).
//   1. browser.context on big.html (10,000 elements), N times, interleaved one for one with
//      Playwright's `page.locator('body').ariaSnapshot()` of the same tab.
//   2. browser.node.action {ref, action:'click'} on handoff.html's button, N times, interleaved one
//      for one with a raw CDP Runtime.evaluate that clicks the same button.
//   3. acts and their settling on every bench page (compose, the 10k page, ticker, polling, long
//      animations, never-ending requests, spinner→toast), with the tab in front and in the
//      background (behind another tab of its window, hidden and throttled as a person's is): a
//      fill and a neutral click, N each, through the worker as browser.node.action runs them
//      (tests/js/settle-harness.mjs; part 2 gives the engine's hop on top). Targets: fill ≤ 11 ms
//      and click + settle ≤ 88 ms median everywhere (issue 15).
// "engine" times are the engine's own elapsedUs (bridge call to answer, inside the C engine).
// "extension" times are taken in the service worker by wrapping, at run time, the worker's request
// handler (bridge.onRequest) and the router's page runner (router.page.run) with performance.now();
// the extension reports no timing of its own and its files are not changed.
// Playwright and CDP times are wall times in this process around the awaited call.
//
// Needs Chromium (/usr/lib/chromium/chromium or $CHAPERONE_CHROMIUM), `npm ci` (playwright-core)
// and a built engine harness (ninja -C build tests/chaperone-test-engine). Without them it says
// why and exits 0.

import { existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { dirname, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

// ---- options ---------------------------------------------------------------------------------

const opts = { quick: false, contexts: null, clicks: null, engine: null, acts: null, onlyActs: false };
for (const arg of process.argv.slice(2)) {
  let m;
  if (arg === '--quick' || arg === '-q') opts.quick = true;
  else if ((m = /^--contexts=(\d+)$/.exec(arg))) opts.contexts = Number(m[1]);
  else if ((m = /^--clicks=(\d+)$/.exec(arg))) opts.clicks = Number(m[1]);
  else if ((m = /^--engine=(.+)$/.exec(arg))) opts.engine = m[1];
  else if ((m = /^--acts=(\d+)$/.exec(arg))) opts.acts = Number(m[1]);
  else if (arg === '--only-acts') opts.onlyActs = true;
  else if (arg === '--help' || arg === '-h') {
    console.log('usage: node bench/extension-bench.mjs [--quick] [--contexts=N] [--clicks=N] [--acts=N] [--only-acts] [--engine=PATH]');
    process.exit(0);
  } else {
    console.error(`extension-bench: unknown option ${arg} (see --help)`);
    process.exit(2);
  }
}
const N_CONTEXT = Math.max(1, opts.contexts ?? (opts.quick ? 5 : 20));
const N_CLICK = Math.max(1, opts.clicks ?? (opts.quick ? 30 : 200));
const N_ACT = Math.max(1, opts.acts ?? (opts.quick ? 5 : 15));
const WARMUP_CONTEXT = opts.quick ? 1 : 3;
const WARMUP_CLICK = opts.quick ? 5 : 20;

// The harness reads CHAPERONE_TEST_ENGINE when it is imported.
const enginePath = resolve(opts.engine ?? process.env.CHAPERONE_TEST_ENGINE
  ?? resolve(root, 'build', 'tests', 'chaperone-test-engine'));
process.env.CHAPERONE_TEST_ENGINE = enginePath;

const { ENGINE_PATH, TestEngine } = await import('../tests/js/engine-harness.mjs');
const { Browser, EXTENSION_ORIGIN, browserWhyNot } = await import('../tests/e2e/browser-harness.mjs');
const { startFixtureServer } = await import('../tests/fixtures/serve.mjs');

// ---- figures ---------------------------------------------------------------------------------

function uptimeLine() {
  try {
    return execFileSync('uptime', { encoding: 'utf8' }).trim();
  } catch {
    return `load average: ${loadavg().map((l) => l.toFixed(2)).join(', ')}`;
  }
}

/** Nearest-rank percentile of a list of numbers (NaN for an empty one). */
function pct(values, p) {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}
const median = (v) => pct(v, 50);
const p95 = (v) => pct(v, 95);
const fmt = (v, digits = 2) => (Number.isFinite(v) ? v.toFixed(digits) : 'n/a');
const ratio = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b > 0
  ? `${(a / b).toFixed(a / b < 10 ? 2 : 1)}x` : 'n/a');
const round = (v, digits = 3) => (Number.isFinite(v) ? Number(v.toFixed(digits)) : null);

function row(label, values, unit = 'ms', digits = 2) {
  const n = values.length;
  console.log(`${label.padEnd(52)} ${fmt(median(values), digits).padStart(10)} ${fmt(p95(values), digits).padStart(10)} ${unit.padEnd(5)} n=${n}`);
}
function header(title) {
  console.log(`\n${title}`);
  console.log(`${'measure'.padEnd(52)} ${'median'.padStart(10)} ${'p95'.padStart(10)}`);
  console.log(`${'-'.repeat(52)} ${'-'.repeat(10)} ${'-'.repeat(10)}`);
}

// ---- the run ---------------------------------------------------------------------------------

const results = {};

const loadStart = loadavg();
console.log(`\nChaperone extension benchmark (${opts.quick ? 'quick' : 'full'}: ${N_CONTEXT} captures, ${N_CLICK} clicks)`);
console.log(`start: ${uptimeLine()}`);

// ---- the extension's own bounded checks, in this process (no browser needed) -------------------
// What the unit tests used to assert as time bounds (tests/js/ext-floor, ext-redact): the tests
// now check that these answer right and end; how fast is measured here.
{
  const { floorLevel } = await import('../extension/lib/floor.js');
  const { redactText, redactValue } = await import('../extension/lib/redact.js');
  const timed = (fn, n) => {
    const out = [];
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      fn();
      out.push(performance.now() - t0);
    }
    return out;
  };
  const reps = opts.quick ? 3 : 10;
  header('the extension\'s checks on hostile input (this process)');
  const hostile = [
    `https://${'a.'.repeat(30000)}com/`, `https://${'%41'.repeat(20000)}/`,
    `https://chrome.google.com/${'../'.repeat(20000)}webstore`, `https://bank.example/${'/'.repeat(60000)}`,
    `https://[${':'.repeat(60000)}]/`, `https://xn--${'a'.repeat(60000)}/`, `https://${'\u0430'.repeat(30000)}/`,
    `blob:${'blob:'.repeat(13000)}`,
  ];
  row('floor: a hostile URL (8 kinds, ~60 KB)', hostile.flatMap((u) => timed(() => floorLevel(u), reps)));
  const huge = `https://bank.com/${'x'.repeat(10_000_000)}`;
  row('floor: a 10 MB URL (refused unparsed)', timed(() => floorLevel(huge), reps));
  const units = ['"password":"', 'Bearer ', 'eyJhbGciOiJIUzI1NiJ9.', '4111 ', 'verification code ', '?code='];
  row('redact: 1 MiB of one hard unit (6 kinds)', units.flatMap((u) => {
    const text = u.repeat(Math.ceil((1024 * 1024) / u.length));
    return timed(() => redactText(text), Math.max(1, reps >> 1));
  }));
  const page = 'Hello, world. Sign in with password: hunter22 and token=abc; '.repeat(20000);
  row('redact: 1.2 MB of page text with 20,000 secrets', timed(() => redactText(page), reps));
  let shared = { token: 'abc' };
  for (let i = 0; i < 40; i++) shared = { a: shared, b: shared };
  row('redact: a value with 2^40 shared paths', timed(() => redactValue(shared), reps));
}

// ---- 3. acts and settling on every bench page, tab in front and behind -------------------------

// [path, field to fill, neutral button, a button whose result comes later (waited for)]
const ACT_PAGES = [
  ['/mcp-compose.html', 'Subject', 'Preview'],
  ['/mcp-large.html', 'Search orders', 'Quick action 0'],
  ['/settle-ticker.html', 'Note', 'Mark'],
  ['/settle-polling.html', 'Note', 'Mark', 'Load more'],
  ['/settle-animation.html', 'Note', 'Mark'],
  ['/settle-stream.html', 'Note', 'Mark'],
  ['/settle-spinner.html', 'Display name', null, 'Save'],
];

async function actsByPage() {
  const { SettleRig } = await import('../tests/js/settle-harness.mjs');
  const rig = await SettleRig.start();
  const out = {};
  try {
    header(`3. acts: page.run in the worker (settleMs in the page), median of ${N_ACT}, tab in front / behind`);
    for (const [path, field, neutral, later] of ACT_PAGES) {
      const tab = await rig.open(path);
      for (const mode of ['front', 'back']) {
        if (mode === 'back') await rig.background(tab);
        else await rig.front(tab);
        const ctx = await rig.capture(tab);
        const fill = [];
        const click = [];
        const slow = [];
        const unsettled = {};
        const note = (r) => {
          if (r.value?.changes?.settled) return;
          const why = r.value?.changes?.reason ?? (r.value?.changes?.navigating ? 'navigating' : 'capped');
          unsettled[why] = (unsettled[why] ?? 0) + 1;
        };
        for (let i = 0; i < N_ACT + 2; i++) {
          const f = await rig.act(tab, ctx, field, 'setValue', { value: `bench ${i}` });
          const c = neutral ? await rig.act(tab, ctx, neutral, 'click') : null;
          if (i < 2) continue;                 // warm-up
          fill.push(f.ms);
          note(f);
          if (c) {
            click.push(c.ms);
            note(c);
          }
        }
        if (later) {
          for (let i = 0; i < Math.min(N_ACT, 5); i++) {
            const r = await rig.act(tab, ctx, later, 'click');
            slow.push(r.ms);
            note(r);
          }
        }
        const name = path.replace(/^\//, '').replace(/\.html$/, '');
        row(`${name} ${mode}: fill "${field}"`, fill);
        if (click.length) row(`${name} ${mode}: click "${neutral}" + settle`, click);
        if (slow.length) row(`${name} ${mode}: click "${later}" (waits for its result)`, slow);
        const bad = Object.entries(unsettled).map(([k, v]) => `${k} ${v}`).join(', ');
        if (bad) console.log(`${''.padEnd(4)}settled:false: ${bad}`);
        out[`${name}_${mode}`] = { fill: median(fill), click: click.length ? median(click) : null,
          later: slow.length ? median(slow) : null, unsettled };
      }
      await tab.page.close();
    }
  } finally {
    await rig.close();
  }
  const worst = (k) => Math.max(...Object.values(out).map((v) => v[k]).filter(Number.isFinite));
  console.log(`worst median over pages and modes: fill ${fmt(worst('fill'))} ms (target 11), `
    + `click + settle ${fmt(worst('click'))} ms (target 88)`);
  return out;
}

if (opts.onlyActs || browserWhyNot() === null) {
  try {
    results.acts_ms = await actsByPage();
  } catch (err) {
    console.error(`extension-bench: part 3 failed: ${err?.stack ?? err}`);
    process.exitCode = 1;
  }
}
if (opts.onlyActs) {
  console.log(JSON.stringify({ extension_bench: { acts_ms: results.acts_ms ?? null } }));
  process.exit(process.exitCode ?? 0);
}

const whyNot = browserWhyNot()
  ?? (ENGINE_PATH && existsSync(ENGINE_PATH) ? null
    : `no engine harness at ${ENGINE_PATH} (ninja -C build tests/chaperone-test-engine)`);
if (whyNot) {
  console.log(`extension bench: skipped: ${whyNot}`);
  console.log(JSON.stringify({ extension_bench: null, skipped: whyNot }));
  process.exit(0);
}

let sites = null;
let engine = null;
let browser = null;
let cleaningUp = null;

function cleanup() {
  cleaningUp ??= (async () => {
    await browser?.close().catch(() => {});
    await engine?.stop().catch(() => {});
    await sites?.close().catch(() => {});
  })();
  return cleaningUp;
}
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    console.error(`extension-bench: ${sig}, stopping`);
    cleanup().finally(() => process.exit(130));
  });
}
// A bench that hangs must not hold the machine: everything is stopped after 3 minutes.
const watchdog = setTimeout(() => {
  console.error('extension-bench: gave up after 180 s');
  cleanup().finally(() => process.exit(1));
}, 180000);
watchdog.unref();

const t0 = performance.now();
const phase = (what) => console.error(`extension-bench: ${what} (${((performance.now() - t0) / 1000).toFixed(1)} s)`);

/** Wraps, in the running worker, the request handler and the page runner with timers. */
async function instrumentWorker() {
  const sw = await browser.worker();
  return sw.evaluate(() => {
    const c = globalThis.chaperone;
    if (!c?.bridge || !c?.router?.page) return 'globalThis.chaperone has no bridge/router.page';
    if (globalThis.__chaperoneBench) return null;
    const times = { handle: [], page: [] };
    const { bridge, router } = c;
    const onRequest = bridge.onRequest;
    const pageRun = router.page.run.bind(router.page);
    try {
      bridge.onRequest = async (method, params, ctx) => {
        const start = performance.now();
        try {
          return await onRequest(method, params, ctx);
        } finally {
          times.handle.push({ method, ms: performance.now() - start });
        }
      };
      router.page.run = async (where, op, args, o) => {
        const start = performance.now();
        try {
          return await pageRun(where, op, args, o);
        } finally {
          times.page.push({ op, ms: performance.now() - start });
        }
      };
    } catch (e) {
      return `could not wrap the worker's handlers: ${e?.message}`;
    }
    globalThis.__chaperoneBench = times;
    return null;
  });
}

/** Takes (and clears) the worker's timings; null when the worker lost them (it restarted). */
async function workerTimes() {
  const sw = await browser.worker();
  return sw.evaluate(() => {
    const t = globalThis.__chaperoneBench;
    if (!t) return null;
    const out = { handle: t.handle.splice(0), page: t.page.splice(0) };
    return out;
  });
}

try {
  phase('starting the fixture server, the engine and Chromium');
  sites = await startFixtureServer();
  engine = await TestEngine.start();
  browser = await Browser.launch();
  const chromeVersion = browser.ctx.browser()?.version() ?? '';
  await browser.setPort(engine.port);

  const big = await browser.ctx.newPage();
  await big.goto(`${sites.originA}/big.html`);
  const simple = await browser.ctx.newPage();
  await simple.goto(`${sites.originA}/handoff.html`);
  const bigTab = await browser.tabIdOf(big);
  const simpleTab = await browser.tabIdOf(simple);
  const elementCount = await big.evaluate(() => document.getElementsByTagName('*').length);

  phase('pairing through the popup');
  const popup = await browser.popup(simple);
  const mark = engine.mark();
  await browser.startPairing(popup);
  const pairing = await engine.waitFor({ event: 'pairing' }, { after: mark, timeoutMs: 15000 });
  if (pairing.origin !== EXTENSION_ORIGIN) throw new Error(`pairing from ${pairing.origin}`);
  engine.approve(pairing.requestId);
  const deviceId = (await engine.waitFor({ event: 'device-online' }, { after: mark, timeoutMs: 20000 })).deviceId;
  await browser.waitForState('connected');

  phase('granting both tabs in the popup');
  await browser.grant(popup, { pages: [big, simple], preset: 'control', label: 'Bench' });
  await popup.close();

  const instrumentError = await instrumentWorker();
  if (instrumentError) console.error(`extension-bench: no worker-side timing: ${instrumentError}`);

  const call = async (method, params) => {
    const start = performance.now();
    const reply = await engine.call(deviceId, method, params, { timeoutMs: 15000 });
    const wallMs = performance.now() - start;
    if (reply.error) throw new Error(`${method} failed: ${JSON.stringify(reply.error)}`);
    return { reply, wallMs };
  };

  // ---- 1. browser.context on big.html vs Playwright's aria snapshot ---------------------------

  phase(`browser.context on big.html x${N_CONTEXT} against ariaSnapshot x${N_CONTEXT}`);
  await big.bringToFront();
  const ctxEngineMs = [];
  const ctxWallMs = [];
  const ctxBytes = [];
  const ctxNodes = [];
  const ctxScanned = [];
  const ctxFound = [];
  const ctxTruncated = [];
  const ariaMs = [];
  let ariaBytes = 0;
  let ariaLines = 0;
  for (let i = 0; i < WARMUP_CONTEXT + N_CONTEXT; i++) {
    const { reply, wallMs } = await call('browser.context', { tabId: bigTab });
    const start = performance.now();
    const snap = await big.locator('body').ariaSnapshot();
    const aMs = performance.now() - start;
    if (i < WARMUP_CONTEXT) {
      if (i === WARMUP_CONTEXT - 1) await workerTimes(); // drop the warm-up's
      continue;
    }
    const r = reply.result;
    ctxEngineMs.push(reply.elapsedUs / 1000);
    ctxWallMs.push(wallMs);
    ctxBytes.push(Buffer.byteLength(JSON.stringify(r)));
    ctxNodes.push(r.nodes?.length ?? NaN);
    ctxScanned.push(r.scanned ?? NaN);
    ctxFound.push(r.nodeCount ?? NaN);
    ctxTruncated.push(r.truncated === true);
    ariaMs.push(aMs);
    ariaBytes = Buffer.byteLength(snap);
    ariaLines = snap.split('\n').length;
  }
  const ctxTimes = instrumentError ? null : await workerTimes();
  const ctxHandleMs = ctxTimes?.handle.filter((t) => t.method === 'browser.context').map((t) => t.ms) ?? [];
  const ctxPageMs = ctxTimes?.page.filter((t) => t.op === 'context').map((t) => t.ms) ?? [];

  // ---- 2. click round trip vs raw CDP Runtime.evaluate ---------------------------------------

  phase(`click on handoff.html x${N_CLICK}, browser.node.action against CDP Runtime.evaluate`);
  // The tab in front: the page agent waits for an animation frame after acting (or 100 ms where
  // frames are throttled, as in a background tab).
  await simple.bringToFront();
  const firstButton = await simple.evaluate(() => {
    const b = document.querySelector('button');
    return b ? { id: b.id, text: b.textContent.trim() } : null;
  });
  if (!firstButton) throw new Error('handoff.html has no button');
  const { reply: simpleCtx } = await call('browser.context', { tabId: simpleTab });
  const node = simpleCtx.result.nodes.find((n) => n.name === firstButton.text);
  if (!node) throw new Error(`no node named "${firstButton.text}" in browser.context of handoff.html`);
  let clicks = 0;
  await simple.evaluate(() => {
    globalThis.__benchClicks = 0;
    document.querySelector('button').addEventListener('click', () => { globalThis.__benchClicks += 1; });
  });

  const cdp = await browser.ctx.newCDPSession(simple);
  const expression = 'document.querySelector("button").click()';
  const clickEngineMs = [];
  const clickWallMs = [];
  const cdpMs = [];
  let clickErrors = 0;
  for (let i = 0; i < WARMUP_CLICK + N_CLICK; i++) {
    const start = performance.now();
    const reply = await engine.call(deviceId, 'browser.node.action', { ref: node.ref, action: 'click' },
      { timeoutMs: 15000 });
    const wallMs = performance.now() - start;
    const cStart = performance.now();
    const evaluated = await cdp.send('Runtime.evaluate', { expression });
    const cMs = performance.now() - cStart;
    if (evaluated.exceptionDetails) throw new Error(`Runtime.evaluate threw: ${JSON.stringify(evaluated.exceptionDetails).slice(0, 300)}`);
    if (i < WARMUP_CLICK) {
      if (i === WARMUP_CLICK - 1) await workerTimes();
      continue;
    }
    if (reply.error || reply.result?.done !== true) {
      clickErrors += 1;
      continue;
    }
    clickEngineMs.push(reply.elapsedUs / 1000);
    clickWallMs.push(wallMs);
    cdpMs.push(cMs);
  }
  // For reference: the same CDP click, then one animation frame and a task, as the page agent's
  // settle() waits after acting.
  const frameExpression = `${expression}; new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)))`;
  const cdpFrameMs = [];
  const nFrame = Math.min(N_CLICK, 50);
  for (let i = 0; i < nFrame; i++) {
    const cStart = performance.now();
    await cdp.send('Runtime.evaluate', { expression: frameExpression, awaitPromise: true });
    cdpFrameMs.push(performance.now() - cStart);
  }
  await cdp.detach().catch(() => {});
  clicks = await simple.evaluate(() => globalThis.__benchClicks);
  const clickTimes = instrumentError ? null : await workerTimes();
  const clickHandleMs = clickTimes?.handle.filter((t) => t.method === 'browser.node.action').map((t) => t.ms) ?? [];
  const clickPageMs = clickTimes?.page.filter((t) => t.op === 'action').map((t) => t.ms) ?? [];

  // For reference: a bare chrome.scripting.executeScript round trip in the same tab, from the worker
  // (page.run makes two of these per op: the agent's files, then the call).
  const sw = await browser.worker();
  const injectMs = await sw.evaluate(async ({ tabId, n }) => {
    const out = [];
    for (let i = 0; i < n; i++) {
      const start = performance.now();
      await chrome.scripting.executeScript({ target: { tabId }, func: () => 1 });
      out.push(performance.now() - start);
    }
    return out;
  }, { tabId: simpleTab, n: opts.quick ? 10 : 50 });

  // ---- report --------------------------------------------------------------------------------

  const loadEnd = loadavg();
  const workerNote = instrumentError
    ? `  (no worker-side timing: ${instrumentError}; the engine's elapsedUs is the extension's time plus the socket)`
    : '  extension = wrapped in the worker at run time (the extension reports no timing; its files are unchanged)';

  console.log(`\nChromium ${chromeVersion}, playwright-core ${await playwrightVersion()}, node ${process.version}`);
  console.log(workerNote);

  header(`1. browser.context of big.html (${elementCount} elements), engine -> extension -> page -> engine`);
  row('engine elapsedUs (bridge call to answer)', ctxEngineMs);
  row('  extension: request handler in the worker', ctxHandleMs);
  row('  extension: page.run (2 executeScript + page agent)', ctxPageMs);
  row('  this process, engine.call incl. JSON-lines pipe', ctxWallMs);
  row('Playwright locator("body").ariaSnapshot()', ariaMs);
  row('result size, JSON bytes', ctxBytes, 'B', 0);
  console.log(`${'nodes returned / actionable found / elements scanned'.padEnd(52)} ${`${median(ctxNodes)} / ${median(ctxFound)} / ${median(ctxScanned)}`.padStart(21)}   truncated: ${ctxTruncated.every(Boolean) ? 'yes' : ctxTruncated.some(Boolean) ? 'sometimes' : 'no'}`);
  console.log(`${'aria snapshot size'.padEnd(52)} ${`${ariaBytes} B, ${ariaLines} lines`.padStart(21)}`);
  console.log(`ratio, median: engine elapsedUs / ariaSnapshot = ${ratio(median(ctxEngineMs), median(ariaMs))}; `
    + `aria bytes / context bytes = ${ratio(ariaBytes, median(ctxBytes))}`);

  header(`2. click on handoff.html's button, round trip from the controlling side`);
  row('engine elapsedUs, browser.node.action click', clickEngineMs);
  row('  extension: request handler in the worker', clickHandleMs);
  row('  extension: page.run (2 executeScript + act + settle)', clickPageMs);
  row('  this process, engine.call incl. JSON-lines pipe', clickWallMs);
  row('raw CDP Runtime.evaluate click (Playwright CDPSession)', cdpMs);
  row('ref: CDP click + one frame and a task (as settle)', cdpFrameMs);
  row('ref: bare executeScript from the worker', injectMs);
  console.log(`ratio engine elapsedUs / CDP: median ${ratio(median(clickEngineMs), median(cdpMs))}, `
    + `p95 ${ratio(p95(clickEngineMs), p95(cdpMs))}`);
  console.log(`button clicks seen by the page: ${clicks} (expected ${2 * (WARMUP_CLICK + N_CLICK) + nFrame - clickErrors}); failed actions: ${clickErrors}`);

  console.log(`\nload average: start ${loadStart.map((l) => l.toFixed(2)).join(', ')}; end ${loadEnd.map((l) => l.toFixed(2)).join(', ')}`);
  console.log(`end: ${uptimeLine()}`);
  console.log(`wall time ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  const stat = (v) => ({ median: round(median(v)), p95: round(p95(v)), n: v.length });
  Object.assign(results, {
    context_ms: {
      engine: stat(ctxEngineMs), worker_handler: stat(ctxHandleMs), worker_page_run: stat(ctxPageMs),
      pipe_wall: stat(ctxWallMs), aria_snapshot: stat(ariaMs),
      bytes_median: median(ctxBytes), nodes_median: median(ctxNodes), found_median: median(ctxFound),
      scanned_median: median(ctxScanned), aria_bytes: ariaBytes, aria_lines: ariaLines,
      ratio_engine_vs_aria: round(median(ctxEngineMs) / median(ariaMs)),
    },
    click_ms: {
      engine: stat(clickEngineMs), worker_handler: stat(clickHandleMs), worker_page_run: stat(clickPageMs),
      pipe_wall: stat(clickWallMs), cdp_evaluate: stat(cdpMs), cdp_click_and_frame: stat(cdpFrameMs), execute_script: stat(injectMs),
      ratio_median: round(median(clickEngineMs) / median(cdpMs)), ratio_p95: round(p95(clickEngineMs) / p95(cdpMs)),
      failures: clickErrors,
    },
    loadavg: { start: loadStart.map((l) => round(l, 2)), end: loadEnd.map((l) => round(l, 2)) },
  });
  console.log(JSON.stringify({ extension_bench: results }));
} catch (err) {
  console.error(`extension-bench: failed: ${err?.stack ?? err}`);
  if (engine) console.error(engine.stderrTail());
  if (browser) console.error(browser.consoleLines.slice(-20).join('\n'));
  process.exitCode = 1;
} finally {
  await cleanup();
  clearTimeout(watchdog);
}

async function playwrightVersion() {
  try {
    const { createRequire } = await import('node:module');
    return createRequire(import.meta.url)('playwright-core/package.json').version;
  } catch {
    return '?';
  }
}
