#!/usr/bin/env node
// SPDX-License-Identifier: GPL-3.0-or-later
// mcp-bench.mjs: what an agent pays, through MCP, for the same work on the same pages — Chaperone
// (chaperone-mcp → the core → the extension in the person's browser) beside two other browser MCP
// servers, Playwright MCP and Chrome DevTools MCP, each driven by the same client code (the
// official MCP TypeScript SDK) on the same fixture pages (tests/fixtures/serve.mjs). Figures, not
// assertions; not a test.
//
//   node bench/mcp-bench.mjs [--quick] [--only=ours,playwright,devtools] [--json=PATH]
//
//   --quick     a few of each, to check the bench runs
//   --only=…    the servers to measure (default: all that are installed)
//   --json=PATH where to write the results (default: build/bench/mcp-bench.json)
//
// The peers are installed for the bench alone: `npm ci --prefix bench/peers` (run-bench.sh does it
// when they are missing). Chaperone needs a built relay and engine harness (ninja -C build) and
// Chromium with the extension; its chain here is SDK → chaperone-mcp → chaperone-test-engine (the
// app's core without GTK: pairing is approved through its JSON lines, not the app's Pair button)
// → WebSocket → the extension → the page, and back.
//
// Figures (median; p99 where said):
//   a) browser snapshot of mcp-large.html (10,000 elements, 500 actionable): bytes of the result
//      (JSON) and time; Chaperone's first page, and every actionable element reachable by paging
//      (distinct refs across pages) and by query
//   b) click "Load details" (its text changes 50 ms later, after a fetch), including each server's
//      own settle and what it reports back; whether that report shows the change
//   c) fill a text field (mcp-compose.html's Subject)
//   d) the tab list through the whole chain, median and p99, beside a raw CDP Runtime.evaluate round
//      trip (a WebSocket to a Chromium started with --remote-debugging-port) in the same run
//   e) bytes of tools/list (JSON of the result)
//   f) time from the agent connecting to its first snapshot; memory: what Chaperone adds (engine +
//      relay RSS; the browser is the person's own) against each peer's server + browser (the RSS of
//      its whole process tree, from /proc)

import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

import { bytes, report, round, stat } from './mcp-bench-report.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const PEERS_DIR = join(root, 'bench', 'peers', 'node_modules');

// ---- options ---------------------------------------------------------------------------------

const opts = { quick: false, only: null, json: join(root, 'build', 'bench', 'mcp-bench.json') };
for (const arg of process.argv.slice(2)) {
  let m;
  if (arg === '--quick' || arg === '-q') opts.quick = true;
  else if ((m = /^--only=(.+)$/.exec(arg))) opts.only = new Set(m[1].split(','));
  else if ((m = /^--json=(.+)$/.exec(arg))) opts.json = resolve(m[1]);
  else if (arg === '--help' || arg === '-h') {
    console.log('usage: node bench/mcp-bench.mjs [--quick] [--only=ours,playwright,devtools] [--json=PATH]');
    process.exit(0);
  } else {
    console.error(`mcp-bench: unknown option ${arg} (see --help)`);
    process.exit(2);
  }
}
const N = opts.quick
  ? { snapshot: 5, click: 5, fill: 5, tabs: 30, cdp: 50, warm: 1 }
  : { snapshot: 20, click: 20, fill: 20, tabs: 200, cdp: 200, warm: 2 };
const want = (name) => !opts.only || opts.only.has(name);

// The harnesses read these when imported.
process.env.CHAPERONE_TEST_ENGINE ??= join(root, 'build', 'tests', 'chaperone-test-engine');
process.env.CHAPERONE_MCP ??= join(root, 'build', 'src', 'relay', 'chaperone-mcp');
const CHROMIUM = process.env.CHAPERONE_CHROMIUM ?? '/usr/lib/chromium/chromium';

const H = await import('../tests/e2e/mcp-harness.mjs');
const { startFixtureServer } = await import('../tests/fixtures/serve.mjs');

// Flags every browser here gets (the ones TESTING.md found to work on this machine).
const CHROME_FLAGS = ['--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync'];

// ---- timing (percentiles, rounding and the report: mcp-bench-report.mjs) -----------------

const textOf = H.textOf;

const t0 = performance.now();
const phase = (what) => console.error(`mcp-bench: ${what} (${((performance.now() - t0) / 1000).toFixed(1)} s)`);

async function timed(fn) {
  const start = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - start };
}

function versionOf(pkgDir) {
  try {
    return JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')).version;
  } catch {
    return null;
  }
}

// ---- cleanup and watchdog ------------------------------------------------------------------------

const cleanups = [];
let cleaning = null;
function cleanup() {
  cleaning ??= (async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn().catch(() => {});
  })();
  return cleaning;
}
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    console.error(`mcp-bench: ${sig}, stopping`);
    cleanup().finally(() => process.exit(130));
  });
}
const watchdogMs = opts.quick ? 300000 : 900000;
const watchdog = setTimeout(() => {
  console.error(`mcp-bench: gave up after ${watchdogMs / 1000} s`);
  cleanup().finally(() => process.exit(1));
}, watchdogMs);
watchdog.unref();

// ---- one MCP server, three ways ------------------------------------------------------------------

/**
 * A server adapter: how to start it, open a page, snapshot, find an element, click, fill and list
 * tabs with its own tools. `rssPids()` are the processes whose RSS it adds.
 */
class Peer {
  constructor(name, label) {
    this.name = name;
    this.label = label;
    this.agent = null;
  }

  /** The text an agent gets back from `result`, with any file the result links to for it to read. */
  async reportOf(result) {
    return JSON.stringify(result);
  }

  /** Untimed, before each repeat of the same click: nothing for most servers. */
  async beforeRepeat() {}

  async call(tool, args, options) {
    const r = await this.agent.call(tool, args, { timeout: 60000, ...options });
    if (r.isError) throw new Error(`${this.label} ${tool} failed: ${textOf(r).slice(0, 500)}`);
    return r;
  }
}

class PlaywrightPeer extends Peer {
  static dir = join(PEERS_DIR, '@playwright', 'mcp');
  static whyNot() {
    return existsSync(join(PlaywrightPeer.dir, 'cli.js')) ? null
      : '@playwright/mcp is not installed (npm ci --prefix bench/peers)';
  }

  constructor() {
    super('playwright', `Playwright MCP ${versionOf(PlaywrightPeer.dir) ?? ''}`.trim());
  }

  async start() {
    this.tmp = await mkdtemp(join(tmpdir(), 'chp-bench-pwmcp-'));
    const config = join(this.tmp, 'config.json');
    await writeFile(config, JSON.stringify({ browser: { launchOptions: { args: CHROME_FLAGS } } }));
    this.agent = await H.connectAgent({
      name: 'mcp-bench', command: process.execPath,
      args: [join(PlaywrightPeer.dir, 'cli.js'), '--executable-path', CHROMIUM, '--headless', '--isolated',
        '--no-sandbox', '--config', config, '--output-dir', join(this.tmp, 'out')],
      cwd: this.tmp, timeoutMs: 60000,
    });
    this.click_ = (await this.agent.client.listTools()).tools.find((t) => t.name === 'browser_click');
    this.refKey = this.click_?.inputSchema?.properties?.ref ? 'ref' : 'target';
  }

  open(url) { return this.call('browser_navigate', { url }); }
  snapshot() { return this.call('browser_snapshot', {}); }
  refOf(result, role, name) {
    const m = new RegExp(`${role} "${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"[^\\n]*?\\[ref=([^\\]]+)\\]`).exec(textOf(result));
    return m?.[1] ?? null;
  }
  click(ref, label) { return this.call('browser_click', { element: label, [this.refKey]: ref }); }
  fill(ref, label, value) { return this.call('browser_type', { element: label, [this.refKey]: ref, text: value }); }
  tabs() { return this.call('browser_tabs', { action: 'list' }); }
  // A large snapshot comes back as a link to a file ("- [Snapshot](out/page-….yml)"): the agent
  // must read that file to learn what changed, so the report includes it.
  async reportOf(result) {
    const text = textOf(result);
    const linked = [...text.matchAll(/\]\(([^)\s]+\.ya?ml)\)/g)].map((m) => resolve(this.tmp, m[1]));
    let files = '';
    for (const f of linked) files += readFileSync(f, 'utf8');
    return JSON.stringify(result) + files;
  }
  rssRoots() { return [this.agent.pid]; }
  async stop() {
    await this.agent?.close();
    if (this.tmp) await rm(this.tmp, { recursive: true, force: true });
  }
}

class DevtoolsPeer extends Peer {
  static dir = join(PEERS_DIR, 'chrome-devtools-mcp');
  static whyNot() {
    return existsSync(join(DevtoolsPeer.dir, 'build', 'src', 'bin', 'chrome-devtools-mcp.js')) ? null
      : 'chrome-devtools-mcp is not installed (npm ci --prefix bench/peers)';
  }

  constructor() {
    super('devtools', `Chrome DevTools MCP ${versionOf(DevtoolsPeer.dir) ?? ''}`.trim());
  }

  async start() {
    this.tmp = await mkdtemp(join(tmpdir(), 'chp-bench-cdtmcp-'));
    // --no-sandbox: Chromium refuses to start as root without it (this machine runs as root).
    const flags = [...(process.getuid?.() === 0 ? ['--no-sandbox'] : []), ...CHROME_FLAGS];
    this.agent = await H.connectAgent({
      name: 'mcp-bench', command: process.execPath,
      args: [join(DevtoolsPeer.dir, 'build', 'src', 'bin', 'chrome-devtools-mcp.js'),
        '--executablePath', CHROMIUM, '--headless', '--isolated', '--no-usage-statistics',
        '--no-performance-crux', ...flags.map((f) => `--chromeArg=${f}`)],
      env: { CHROME_DEVTOOLS_MCP_NO_UPDATE_CHECKS: '1', CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS: '1' },
      cwd: this.tmp, timeoutMs: 60000,
    });
    this.pageId = null;
  }

  async currentPage() {
    if (this.pageId === null) {
      const text = textOf(await this.call('list_pages', {}));
      const m = /^(\d+):.*\[selected\]/m.exec(text) ?? /^(\d+):/m.exec(text);
      this.pageId = m ? Number(m[1]) : 1;
    }
    return this.pageId;
  }

  async open(url) { return this.call('navigate_page', { pageId: await this.currentPage(), type: 'url', url }); }
  async snapshot() { return this.call('take_snapshot', { pageId: await this.currentPage() }); }
  refOf(result, role, name) {
    const m = new RegExp(`uid=(\\S+) ${role} "${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"`).exec(textOf(result));
    return m?.[1] ?? null;
  }
  // What changed comes back only with includeSnapshot (false by default): ask for it, as an agent
  // that needs to know must. clickBare() is the default, for reference.
  click(ref) { return this.call('click', { pageId: this.pageId, uid: ref, includeSnapshot: true }); }
  clickBare(ref) { return this.call('click', { pageId: this.pageId, uid: ref }); }
  fill(ref, label, value) { return this.call('fill', { pageId: this.pageId, uid: ref, value }); }
  tabs() { return this.call('list_pages', {}); }
  rssRoots() { return [this.agent.pid]; }
  async stop() {
    await this.agent?.close();
    if (this.tmp) await rm(this.tmp, { recursive: true, force: true });
  }
}

class OursPeer extends Peer {
  static async whyNot() {
    const why = H.mcpWhyNot();
    if (why) return why;
    if (!existsSync(process.env.CHAPERONE_TEST_ENGINE)) {
      return `no engine harness at ${process.env.CHAPERONE_TEST_ENGINE} (ninja -C build tests/chaperone-test-engine)`;
    }
    const { browserWhyNot } = await import('../tests/e2e/browser-harness.mjs');
    return browserWhyNot();
  }

  constructor(sites) {
    super('ours', 'Chaperone');
    this.sites = sites;
  }

  /** The person's side: the core engine with its agent socket, Chromium with the extension, paired, two tabs granted. */
  async prepare() {
    const { Browser, EXTENSION_ORIGIN } = await import('../tests/e2e/browser-harness.mjs');
    this.world = await H.startEngineWithAgents();
    cleanups.push(() => this.world.stop());
    const { engine } = this.world;
    this.browser = await Browser.launch();
    cleanups.push(() => this.browser.close());
    this.chromeVersion = this.browser.ctx.browser()?.version() ?? '';
    await this.browser.setPort(engine.port);
    this.large = await this.browser.ctx.newPage();
    await this.large.goto(`${this.sites.originA}/mcp-large.html`);
    this.compose = await this.browser.ctx.newPage();
    await this.compose.goto(`${this.sites.originA}/mcp-compose.html`);
    const popup = await this.browser.popup(this.large);
    const mark = engine.mark();
    await this.browser.startPairing(popup);
    const pairing = await engine.waitFor({ event: 'pairing' }, { after: mark, timeoutMs: 15000 });
    if (pairing.origin !== EXTENSION_ORIGIN) throw new Error(`pairing from ${pairing.origin}`);
    engine.approve(pairing.requestId);
    await engine.waitFor({ event: 'device-online' }, { after: mark, timeoutMs: 20000 });
    await this.browser.waitForState('connected');
    await this.browser.grant(popup, { pages: [this.large, this.compose], preset: 'control', label: 'MCP bench' });
    await popup.close();
    await this.large.bringToFront();
  }

  async start() {
    this.agent = await H.connectAgent({ name: 'mcp-bench', socket: this.world.socket, timeoutMs: 20000 });
  }

  async tabRefs() {
    const r = await this.tabs();
    const tabs = H.structuredOf(r).tabs ?? [];
    const find = (path) => tabs.find((t) => (t.url ?? '').includes(path))?.tab ?? null;
    this.largeTab = find('/mcp-large.html');
    this.composeTab = find('/mcp-compose.html');
    if (!this.largeTab || !this.composeTab) {
      throw new Error(`browser_tabs does not list both granted tabs: ${JSON.stringify(r.structuredContent).slice(0, 600)}`);
    }
    this.tab = this.largeTab;
  }

  async open(url) {
    this.tab = url.includes('mcp-compose') ? this.composeTab : this.largeTab;
    await (url.includes('mcp-compose') ? this.compose : this.large).bringToFront();
  }

  snapshot(extra = {}) { return this.call('browser_snapshot', { tab: this.tab, ...extra }); }
  refOf(result, role, name) {
    const node = H.nodesOf(result).find((n) => n.name === name && (!role || n.role === role))
      ?? H.nodesOf(result).find((n) => n.name === name);
    if (node?.ref) return node.ref;
    return H.refLines(textOf(result)).find((l) => l.name === name)?.ref ?? null;
  }
  click(ref) { return this.call('browser_act', { tab: this.tab, ref, action: 'click' }); }
  // The loop guard refuses the third identical act in a row and pauses the agent, as it should
  // for an agent stuck on one button: another act on the same element in between, untimed, makes
  // each click a new act, as for an agent that looked at the result before clicking again.
  beforeRepeat(ref) { return this.call('browser_act', { tab: this.tab, ref, action: 'focus' }); }
  fill(ref, label, value) { return this.call('browser_act', { tab: this.tab, ref, action: 'fill', value }); }
  tabs() { return this.call('browser_tabs', {}); }
  rssRoots() { return [this.world.pid, this.agent.pid]; }
  async stop() { await this.agent?.close(); }
}

// ---- the measurements ----------------------------------------------------------------------------

async function treeRss(roots) {
  let sum = 0;
  for (const pid of roots) if (pid) sum += await H.treeRssKiB(pid);
  return sum;
}

/** Runs a through f on one server; returns its figures. */
async function measure(peer, sites) {
  const out = { server: peer.label };
  const large = `${sites.originA}/mcp-large.html`;
  const compose = `${sites.originA}/mcp-compose.html`;

  // f) connect → first snapshot (peers start their own browser and load the page; Chaperone lists
  //    the person's granted tabs and reads the one already open)
  phase(`${peer.label}: connect and first snapshot`);
  const c0 = performance.now();
  await peer.start();
  const connectedMs = performance.now() - c0;
  if (peer instanceof OursPeer) await peer.tabRefs();
  await peer.open(large);
  const first = await peer.snapshot();
  out.connect_ms = round(connectedMs, 1);
  out.connect_to_first_snapshot_ms = round(performance.now() - c0, 1);

  // e) tools/list
  const list = await peer.agent.client.listTools();
  out.tools_list_bytes = bytes(list);
  out.tools = list.tools.length;

  // a) snapshot of the large page
  phase(`${peer.label}: snapshot x${N.snapshot}`);
  const snapMs = [];
  let snapBytes = 0;
  let snapText = 0;
  let snap = first;
  for (let i = 0; i < N.warm + N.snapshot; i++) {
    const { value, ms } = await timed(() => peer.snapshot());
    if (i >= N.warm) snapMs.push(ms);
    snap = value;
    snapBytes = bytes(value);
    snapText = textOf(value).length;
  }
  out.snapshot = { ...stat(snapMs), bytes: snapBytes, text_chars: snapText };
  const snapTextAll = textOf(snap);
  out.snapshot.sees_shadow = snapTextAll.includes('Quick action 2');
  out.snapshot.sees_iframe = snapTextAll.includes('Add note');
  out.snapshot.sees_last_order = snapTextAll.includes('Ship order 1476');

  if (peer instanceof OursPeer) out.reach = await reachability(peer, snap);

  // b) click "Load details", each server's settle and report included
  phase(`${peer.label}: click x${N.click}`);
  const loadRef = peer.refOf(snap, 'button', 'Load details');
  if (!loadRef) throw new Error(`${peer.label}: no ref for the "Load details" button in its snapshot`);
  const clickMs = [];
  let clickBytes = 0;
  let sawChange = 0;
  let sawChangeLinked = 0;
  const loadsBefore = await loadsOf(peer);
  for (let i = 0; i < N.warm + N.click; i++) {
    await peer.beforeRepeat(loadRef);
    const { value, ms } = await timed(() => peer.click(loadRef, 'Load details button'));
    if (i < N.warm) continue;
    clickMs.push(ms);
    clickBytes = bytes(value);
    if (/Details loaded \(\d+\)/.test(JSON.stringify(value))) sawChange += 1;
    if (/Details loaded \(\d+\)/.test(await peer.reportOf(value))) sawChangeLinked += 1;
  }
  out.click = { ...stat(clickMs), bytes: clickBytes, reported_change: `${sawChange}/${N.click}` };
  if (sawChangeLinked !== sawChange) out.click.reported_change += ` (file ${sawChangeLinked})`;
  const loadsAfter = await loadsOf(peer);
  if (loadsBefore !== null && loadsAfter !== null) out.click.page_saw_clicks = loadsAfter - loadsBefore;
  if (peer instanceof DevtoolsPeer) {
    const bare = [];
    for (let i = 0; i < N.click; i++) bare.push((await timed(() => peer.clickBare(loadRef))).ms);
    out.click_without_snapshot = stat(bare);
  }

  // c) fill the Subject field of the compose page
  phase(`${peer.label}: fill x${N.fill}`);
  await peer.open(compose);
  const composeSnap = await peer.snapshot();
  const subjectRef = peer.refOf(composeSnap, 'textbox', 'Subject');
  if (!subjectRef) throw new Error(`${peer.label}: no ref for the Subject field`);
  const fillMs = [];
  let fillBytes = 0;
  for (let i = 0; i < N.warm + N.fill; i++) {
    const { value, ms } = await timed(() => peer.fill(subjectRef, 'Subject textbox', `Quarterly report ${i}`));
    if (i < N.warm) continue;
    fillMs.push(ms);
    fillBytes = bytes(value);
  }
  out.fill = { ...stat(fillMs), bytes: fillBytes };

  // d) the tab list, through the whole chain
  phase(`${peer.label}: tab list x${N.tabs}`);
  const tabsMs = [];
  for (let i = 0; i < 5 + N.tabs; i++) {
    const { ms } = await timed(() => peer.tabs());
    if (i >= 5) tabsMs.push(ms);
  }
  out.tabs = stat(tabsMs);
  if (peer instanceof OursPeer) {
    // The part of the chain without the browser: SDK → relay → engine → back.
    const pingMs = [];
    for (let i = 0; i < 5 + N.tabs; i++) {
      const { ms } = await timed(() => peer.agent.client.ping());
      if (i >= 5) pingMs.push(ms);
    }
    out.ping = stat(pingMs);
  }

  // f) memory, now that it has done the work
  out.rss_kib = await treeRss(peer.rssRoots());
  return out;
}

/** How many times the page saw "Load details" (Chaperone: read from the page through Playwright). */
async function loadsOf(peer) {
  if (!(peer instanceof OursPeer)) return null;
  return peer.large.evaluate(() => window.__detailsLoads ?? 0);
}

/** Chaperone only: are all 500 actionable elements reachable, by paging and by query? */
async function reachability(peer, firstPage) {
  const expected = await peer.large.evaluate(() => window.__mcpLarge.actionable);
  const refs = new Set();
  const names = new Set();
  let page = firstPage;
  let pages = 1;
  let maxChars = 0;
  const add = (r) => {
    maxChars = Math.max(maxChars, textOf(r).length);
    for (const n of H.nodesOf(r)) { if (n.ref) refs.add(n.ref); if (n.name) names.add(n.name); }
    for (const l of H.refLines(textOf(r))) { refs.add(l.ref); if (l.name) names.add(l.name); }
  };
  add(page);
  const start = performance.now();
  while (H.nextPageOf(page) !== null && pages < 100) {
    page = await peer.snapshot({ page: H.nextPageOf(page) });
    pages += 1;
    add(page);
  }
  const pagingMs = performance.now() - start;
  // By query: the last order's control, far below the fold.
  const q = await peer.snapshot({ query: 'Open order 1477' });
  const queryNames = H.refLines(textOf(q)).map((l) => l.name);
  return {
    expected_actionable: expected, distinct_refs: refs.size, distinct_names: names.size, pages,
    max_page_chars: maxChars, paging_ms: round(pagingMs, 1),
    query_open_order_1477: queryNames,
  };
}

/** d) the reference: raw CDP Runtime.evaluate round trips over a WebSocket to a fresh Chromium. */
async function rawCdp(sites) {
  const { default: WebSocket } = await import('ws');
  const dir = await mkdtemp(join(tmpdir(), 'chp-bench-cdp-'));
  const child = spawn(CHROMIUM, ['--headless=new', ...(process.getuid?.() === 0 ? ['--no-sandbox'] : []),
    ...CHROME_FLAGS, '--disable-dev-shm-usage', `--user-data-dir=${dir}`, '--remote-debugging-port=0',
    `${sites.originA}/mcp-compose.html`], { detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
  const stop = async () => {
    try { process.kill(-child.pid, 'SIGTERM'); } catch { /* gone */ }
    await new Promise((r) => { if (child.exitCode !== null) r(); else { child.once('exit', r); setTimeout(r, 3000); } });
    try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ }
    await rm(dir, { recursive: true, force: true });
  };
  cleanups.push(stop);
  const wsUrl = await new Promise((ok, fail) => {
    const timer = setTimeout(() => fail(new Error('Chromium did not print its DevTools address')), 20000);
    createInterface({ input: child.stderr }).on('line', (line) => {
      const m = /DevTools listening on (ws:\/\/\S+)/.exec(line);
      if (m) { clearTimeout(timer); ok(m[1]); }
    });
  });
  const ws = new WebSocket(wsUrl, { perMessageDeflate: false });
  await new Promise((ok, fail) => { ws.once('open', ok); ws.once('error', fail); });
  let id = 0;
  const pending = new Map();
  ws.on('message', (data) => {
    const msg = JSON.parse(data.toString());
    if (msg.id && pending.has(msg.id)) { pending.get(msg.id)(msg); pending.delete(msg.id); }
  });
  const send = (method, params = {}, sessionId) => new Promise((ok) => {
    const mid = ++id;
    pending.set(mid, ok);
    ws.send(JSON.stringify({ id: mid, method, params, ...(sessionId ? { sessionId } : {}) }));
  });
  const { until } = await import('../tests/lib/until.mjs');
  const targetId = await until(async () => {
    const { result } = await send('Target.getTargets');
    return result.targetInfos.find((t) => t.type === 'page' && t.url.includes('mcp-compose'))?.targetId;
  }, { timeout: 10000, what: 'the compose page among the CDP targets' });
  const { result: { sessionId } } = await send('Target.attachToTarget', { targetId, flatten: true });
  const times = [];
  for (let i = 0; i < 20 + N.cdp; i++) {
    const start = performance.now();
    const r = await send('Runtime.evaluate', { expression: 'document.title', returnByValue: true }, sessionId);
    if (i >= 20) times.push(performance.now() - start);
    if (r.error) throw new Error(`Runtime.evaluate: ${JSON.stringify(r.error)}`);
  }
  ws.close();
  await stop();
  cleanups.splice(cleanups.indexOf(stop), 1);
  return stat(times);
}

// ---- the run -------------------------------------------------------------------------------------

const results = {
  when: new Date().toISOString(), quick: opts.quick, node: process.version, loadavg_start: loadavg().map((l) => round(l, 2)),
  chain: 'SDK → chaperone-mcp (relay) → chaperone-test-engine (the app\'s core, no GTK) → extension → page',
  servers: {}, skipped: {}, targets: {},
};
console.log(`\nMCP benchmark (${opts.quick ? 'quick' : 'full'}): Chaperone beside Playwright MCP and Chrome DevTools MCP`);
console.log(`same client for all: @modelcontextprotocol/sdk ${versionOf(join(root, 'node_modules', '@modelcontextprotocol', 'sdk')) ?? '?'}; Chromium at ${CHROMIUM}`);

if (!existsSync(CHROMIUM)) {
  console.log(`mcp bench: skipped: no Chromium at ${CHROMIUM}`);
  process.exit(0);
}
if (!H.SDK) {
  console.log('mcp bench: skipped: @modelcontextprotocol/sdk is not installed (npm ci)');
  process.exit(0);
}

let sites;
try {
  sites = await startFixtureServer();
  cleanups.push(() => sites.close());

  phase('raw CDP Runtime.evaluate baseline');
  results.raw_cdp_evaluate_ms = await rawCdp(sites);

  const peers = [];
  if (want('ours')) {
    const why = await OursPeer.whyNot();
    if (why) results.skipped.ours = why;
    else peers.push(new OursPeer(sites));
  }
  for (const Cls of [PlaywrightPeer, DevtoolsPeer]) {
    const name = Cls === PlaywrightPeer ? 'playwright' : 'devtools';
    if (!want(name)) continue;
    const why = Cls.whyNot();
    if (why) results.skipped[name] = why;
    else peers.push(new Cls());
  }

  for (const peer of peers) {
    try {
      if (peer instanceof OursPeer) {
        phase('Chaperone: engine, Chromium with the extension, pairing, grant');
        await peer.prepare();
        results.chromium = peer.chromeVersion;
      }
      results.servers[peer.name] = await measure(peer, sites);
      if (peer instanceof OursPeer) {
        // The same raw CDP round trip in the very browser the extension runs in, for reference.
        const cdp = await peer.browser.ctx.newCDPSession(peer.compose);
        const times = [];
        for (let i = 0; i < 20 + N.cdp; i++) {
          const start = performance.now();
          await cdp.send('Runtime.evaluate', { expression: 'document.title', returnByValue: true });
          if (i >= 20) times.push(performance.now() - start);
        }
        await cdp.detach().catch(() => {});
        results.servers.ours.cdp_session_same_browser_ms = stat(times);
      }
    } catch (err) {
      results.skipped[peer.name] = `failed: ${err?.message ?? err}`.slice(0, 600);
      console.error(`mcp-bench: ${peer.label} failed: ${err?.stack ?? err}`);
      if (err.relayStderr) console.error(err.relayStderr.slice(-1500));
      if (peer.agent) console.error(peer.agent.stderr().slice(-1500));
      if (peer.world?.engine) console.error(peer.world.engine.stderrTail());
    } finally {
      await peer.stop().catch(() => {});
    }
  }
} catch (err) {
  console.error(`mcp-bench: failed: ${err?.stack ?? err}`);
  process.exitCode = 1;
} finally {
  await cleanup();
  clearTimeout(watchdog);
}

// ---- report --------------------------------------------------------------------------------------

await report(results, { json: opts.json, t0 });
