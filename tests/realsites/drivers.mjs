// SPDX-License-Identifier: GPL-3.0-or-later
// One scripted agent, three browser MCP servers: the same task code (tasks.mjs) drives Chaperone,
// Playwright MCP and Chrome DevTools MCP through the official MCP SDK client, each with its own
// tools used as its documentation says (Chaperone: the person's granted tab, browser_snapshot /
// browser_act, a plan before writes and browser_wait on a hold; the peers: their own browser,
// navigate / snapshot / click / type). A driver counts what the agent paid: tool calls, bytes of
// the results as JSON (with any file a result links to for the agent to read), and the approvals
// it had to ask of the person.
//
// The person is a callback the caller gives Chaperone's driver: {approveHold(holdId),
// approvePlan(planId, summary)} — the engine's JSON lines in the engine tests and the bench, the
// app's Approve buttons pressed through AT-SPI in the app test.

import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import * as H from '../e2e/mcp-harness.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const PEERS_DIR = join(root, 'bench', 'peers', 'node_modules');
export const CHROMIUM = process.env.CHAPERONE_CHROMIUM ?? '/usr/lib/chromium/chromium';
// The flags every browser here gets (tests/e2e/browser-harness.mjs uses the same).
const CHROME_FLAGS = ['--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync'];

export const bytesOf = (x) => Buffer.byteLength(JSON.stringify(x));

function versionOf(dir) {
  try { return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version; } catch { return null; }
}

/** Does item {role, name} match {role, name}: role a string or list, name a string (exact) or RegExp. */
export function matches(item, { role, name }) {
  if (role && !(Array.isArray(role) ? role : [role]).includes(item.role)) return false;
  if (name === undefined) return true;
  return name instanceof RegExp ? name.test(item.name) : item.name === name;
}

class Driver {
  constructor(name, label) {
    this.name = name;
    this.label = label;
    this.agent = null;
    this.reset();
  }

  /** Zeroes the counts (one task's figures). */
  reset() { this.counts = { calls: 0, bytes: 0, approvals: 0 }; }

  /** The bytes an agent reads for this result (peers may link a file). */
  reportBytes(result) { return bytesOf(result); }

  async call(tool, args = {}, { allowError = false } = {}) {
    this.counts.calls += 1;
    const r = await this.agent.call(tool, args, { timeout: 60000 });
    this.counts.bytes += this.reportBytes(r);
    // The whole message: an agent reads it all (and tasks.mjs's act() looks for "detached" in it).
    if (r.isError && !allowError) throw new Error(`${this.label} ${tool} failed: ${H.textOf(r).slice(0, 4000)}`);
    return r;
  }

  /** The first item of a snapshot matching `what` ({role, name}), after the first matching `after` if given. */
  find(result, what, { after } = {}) {
    let items = this.items(result);
    if (after) {
      const at = items.findIndex((i) => matches(i, after));
      if (at < 0) return null;
      items = items.slice(at + 1);
    }
    return items.find((i) => matches(i, what)) ?? null;
  }

  /** The text an agent reads in a result (a snapshot's, with the page's text). */
  text(result) { return H.textOf(result); }

  /**
   * Waits until an element named `name` is on the page (an app still loading): the server's own
   * wait for text where it has one (the peers), else a look again and again (Chaperone).
   */
  async waitFor(name) {
    const { until } = await import('../lib/until.mjs');
    await until(async () => {
      const r = await this.call(this.waitTool, { text: name, ...this.waitArgs?.(name) }, { allowError: true });
      // Its own wait gives up after a few seconds (an app still loading on a busy machine): look.
      return !r.isError || this.find(await this.snapshot(), { name });
    }, { timeout: 30000, what: `${name} on the page` });
  }

  /** Before a write: nothing, for servers that never ask the person. */
  async beginWrite() {}

  async close() {
    await this.agent?.close();
    if (this.tmp) await rm(this.tmp, { recursive: true, force: true });
  }
}

// ---- Chaperone ---------------------------------------------------------------------------------

export class ChaperoneDriver extends Driver {
  /** `agent`: connected (H.connectAgent); `person`: {approveHold, approvePlan}. */
  constructor(agent, person) {
    super('ours', 'Chaperone');
    this.agent = agent;
    this.person = person;
    this.tabs = new Map();   // origin → tab ref
  }

  /** The granted tabs, once (the agent's first look, not counted in a task). */
  async learnTabs(origins, { timeout = 15000 } = {}) {
    const { until } = await import('../lib/until.mjs');
    await until(async () => {
      const r = await this.agent.call('browser_tabs');
      for (const t of H.structuredOf(r).tabs ?? []) {
        const o = origins.find((x) => (t.url ?? '').startsWith(x));
        if (o) this.tabs.set(o, t.tab);
      }
      return origins.every((o) => this.tabs.has(o));
    }, { timeout, what: `browser_tabs to list the granted tabs of ${origins.join(', ')}` });
  }

  tabOf(app) {
    const tab = this.tabs.get(app.origin);
    if (!tab) throw new Error(`no granted tab for ${app.origin}`);
    return tab;
  }

  async open(app, url = app.url) {
    this.tab = this.tabOf(app);
    return this.call('browser_navigate', { tab: this.tab, url });
  }

  /** Works on the app's tab as it is (no navigation): the bench's act figures. */
  use(app) { this.tab = this.tabOf(app); }

  snapshot(extra = {}) { return this.call('browser_snapshot', { tab: this.tab, ...extra }); }

  // A snapshot that first waits for the text (`until`): one call where the peers make two.
  async waitFor(name) {
    const { until } = await import('../lib/until.mjs');
    await until(async () => {
      const r = await this.call('browser_snapshot', { tab: this.tab, until: name }, { allowError: true });
      // An app that navigates while it loads: "the page changed, take a new snapshot".
      if (r.isError && !/stale_document/.test(H.textOf(r))) throw new Error(`${this.label} browser_snapshot failed: ${H.textOf(r).slice(0, 4000)}`);
      return !r.isError && this.find(r, { name });
    }, { timeout: 30000, what: `${name} on the page` });
  }

  /**
   * A look for an element named by plain words (a string, or a RegExp that is only words): a
   * snapshot that first waits for those words to show, as an agent told of `until` does after a
   * search whose results come a moment later (MailDev asks its server as you type).
   */
  lookSnapshot({ name } = {}) {
    const words = typeof name === 'string' ? name
      : name instanceof RegExp && /^[\p{L}\p{N} ,.'-]+$/u.test(name.source) && !name.flags.includes('i') ? name.source : null;
    return this.snapshot(words && words.trim() ? { until: words.slice(0, 200) } : {});
  }

  // `[3:e12] button "Send" disabled`, one line per element in the text; those listed under "not
  // rendered now (hidden)" end in "hidden" and are not for acting on.
  items(result) {
    return H.refLines(H.textOf(result)).filter((l) => !/\shidden\s*$/.test(l.line))
      .map((l) => ({ ...l, disabled: /"\s.*\bdisabled\b|\]\s+[\w-]+\s+disabled\b/.test(l.line) }));
  }

  /** A click; a held one waits for the person (counted) and answers the hold's outcome. */
  async click(ref) {
    const r = await this.call('browser_act', { tab: this.tab, ref, action: 'click' });
    return this.#whenHeld(r);
  }

  /** A double-click (Chaperone's driver only: the suite's tasks). */
  async dblclick(ref) {
    const r = await this.call('browser_act', { tab: this.tab, ref, action: 'dblclick' });
    return this.#whenHeld(r);
  }

  /** The pointer moved onto `ref` and left resting there (Chaperone's driver only: the suite's tasks). */
  hover(ref) { return this.call('browser_act', { tab: this.tab, ref, action: 'hover' }); }

  async fill(ref, label, value) {
    const r = await this.call('browser_act', { tab: this.tab, ref, action: 'fill', value });
    return this.#whenHeld(r);
  }

  /** A key (Enter, Escape, Control+Enter …) pressed on `ref`, or on what has focus when ref is null. */
  async press(ref, key) {
    const r = await this.call('browser_act', { tab: this.tab, ...(ref ? { ref } : {}), action: 'press', key });
    return this.#whenHeld(r);
  }

  /** `ref` dragged onto `to`; a held drop waits for the person (Chaperone's driver only: the suite's tasks). */
  async drag(ref, to) {
    const r = await this.call('browser_act', { tab: this.tab, ref, action: 'drag', to });
    return this.#whenHeld(r);
  }

  /** Text typed at the caret of `ref`, or of what has focus when ref is null. */
  async type(ref, text) {
    const r = await this.call('browser_act', { tab: this.tab, ...(ref ? { ref } : {}), action: 'type', text });
    return this.#whenHeld(r);
  }

  async #whenHeld(r) {
    const s = H.structuredOf(r);
    if (s.held !== true) return r;
    this.counts.approvals += 1;
    await this.person.approveHold(s.holdId, s);
    const w = await this.call('browser_wait', { id: s.holdId, timeoutMs: 30000 });
    const state = w.structuredContent?.state;
    if (state !== 'done') throw new Error(`Chaperone: the approved hold ended ${state}: ${JSON.stringify(w.structuredContent).slice(0, 400)}`);
    return w;
  }

  /** The site's own API (browser_api): learn, list, route {hint, params} or call {entryId}. */
  api(args) { return this.call('browser_api', { tab: this.tab, ...args }); }

  /**
   * The JSON a browser_api answer carried, from inside its untrusted wrapper (the text says it
   * once; structuredContent says how it went), or null.
   */
  apiData(result) {
    const text = H.textOf(result);
    const from = text.search(/^[[{]/m);
    const to = Math.max(text.lastIndexOf(']'), text.lastIndexOf('}'));
    if (from < 0 || to < from) return null;
    try { return JSON.parse(text.slice(from, to + 1)); } catch { return null; }
  }

  /** Before a write the agent asks the person once, for the plan that covers it. */
  async beginWrite(app, summary, steps) {
    const site = new URL(app.origin).hostname;
    const r = await this.call('browser_plan', { summary, steps: steps.map((s) => ({ kind: s.kind, site, summary: s.summary })) });
    const { id } = r.structuredContent;
    this.counts.approvals += 1;
    await this.person.approvePlan(id, summary);
    const w = await this.call('browser_wait', { id, timeoutMs: 30000 });
    if (w.structuredContent?.state !== 'approved') throw new Error(`Chaperone: plan ${w.structuredContent?.state}`);
  }
}

// ---- Playwright MCP ----------------------------------------------------------------------------

export class PlaywrightDriver extends Driver {
  static dir = join(PEERS_DIR, '@playwright', 'mcp');
  static whyNot() {
    return existsSync(join(PlaywrightDriver.dir, 'cli.js')) ? null : '@playwright/mcp is not installed (npm ci --prefix bench/peers)';
  }

  constructor() { super('playwright', `Playwright MCP ${versionOf(PlaywrightDriver.dir) ?? ''}`.trim()); }

  async start() {
    this.tmp = await mkdtemp(join(tmpdir(), 'chp-realsite-pwmcp-'));
    const config = join(this.tmp, 'config.json');
    await writeFile(config, JSON.stringify({ browser: { launchOptions: { args: CHROME_FLAGS } } }));
    this.agent = await H.connectAgent({
      name: 'realsite-bench', command: process.execPath,
      args: [join(PlaywrightDriver.dir, 'cli.js'), '--executable-path', CHROMIUM, '--headless', '--isolated',
        '--no-sandbox', '--config', config, '--output-dir', join(this.tmp, 'out')],
      cwd: this.tmp, timeoutMs: 60000,
    });
    const click = (await this.agent.client.listTools()).tools.find((t) => t.name === 'browser_click');
    this.refKey = click?.inputSchema?.properties?.ref ? 'ref' : 'target';
  }

  // A page with unsaved state (TiddlyWiki after a search or an edit) asks "leave this page?"
  // on the way out; Playwright MCP stops at that dialog until the agent answers it, as an agent
  // told so does (the calls count).
  async open(app, url = app.url) {
    const r = await this.call('browser_navigate', { url }, { allowError: true });
    if (/Modal state[\s\S]*"beforeunload" dialog/.test(H.textOf(r))) {
      await this.call('browser_handle_dialog', { accept: true });
      return r;
    }
    if (r.isError) throw new Error(`${this.label} browser_navigate failed: ${H.textOf(r).slice(0, 4000)}`);
    return r;
  }

  snapshot() { return this.call('browser_snapshot', {}); }
  get waitTool() { return 'browser_wait_for'; }

  // A large snapshot comes back as a link to a file: the agent reads it, so it counts.
  #linked(result) {
    let files = '';
    for (const m of H.textOf(result).matchAll(/\]\(([^)\s]+\.ya?ml)\)/g)) {
      try { files += readFileSync(resolve(this.tmp, m[1]), 'utf8'); } catch { /* not there */ }
    }
    return files;
  }

  reportBytes(result) { return bytesOf(result) + Buffer.byteLength(this.#linked(result)); }
  text(result) { return H.textOf(result) + this.#linked(result); }

  // `- button "Send" [disabled] [ref=e12]: value`
  items(result) {
    const out = [];
    for (const line of this.text(result).split('\n')) {
      const m = /^\s*- ([\w-]+)(?: "((?:[^"\\]|\\.)*)")?[^\n]*?\[ref=([^\]]+)\](?::\s*(.*))?/.exec(line);
      if (m) {
        out.push({ role: m[1], name: (m[2] ?? '').replace(/\\"/g, '"'), ref: m[3], value: m[4] ?? '',
          disabled: /\[disabled\]/.test(line) });
      }
    }
    return out;
  }

  click(ref, label) { return this.call('browser_click', { element: label, [this.refKey]: ref }); }
  fill(ref, label, value) { return this.call('browser_type', { element: label, [this.refKey]: ref, text: value }); }
}

// ---- Chrome DevTools MCP -----------------------------------------------------------------------

export class DevtoolsDriver extends Driver {
  static dir = join(PEERS_DIR, 'chrome-devtools-mcp');
  static whyNot() {
    return existsSync(join(DevtoolsDriver.dir, 'build', 'src', 'bin', 'chrome-devtools-mcp.js')) ? null
      : 'chrome-devtools-mcp is not installed (npm ci --prefix bench/peers)';
  }

  constructor() { super('devtools', `Chrome DevTools MCP ${versionOf(DevtoolsDriver.dir) ?? ''}`.trim()); }

  async start() {
    this.tmp = await mkdtemp(join(tmpdir(), 'chp-realsite-cdtmcp-'));
    // --no-sandbox: Chromium refuses to start as root without it.
    const flags = [...(process.getuid?.() === 0 ? ['--no-sandbox'] : []), ...CHROME_FLAGS];
    this.agent = await H.connectAgent({
      name: 'realsite-bench', command: process.execPath,
      args: [join(DevtoolsDriver.dir, 'build', 'src', 'bin', 'chrome-devtools-mcp.js'),
        '--executablePath', CHROMIUM, '--headless', '--isolated', '--no-usage-statistics',
        '--no-performance-crux', ...flags.map((f) => `--chromeArg=${f}`)],
      env: { CHROME_DEVTOOLS_MCP_NO_UPDATE_CHECKS: '1', CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS: '1' },
      cwd: this.tmp, timeoutMs: 60000,
    });
    const text = H.textOf(await this.agent.call('list_pages', {}));
    const m = /^(\d+):.*\[selected\]/m.exec(text) ?? /^(\d+):/m.exec(text);
    this.pageId = m ? Number(m[1]) : 1;
  }

  open(app, url = app.url) { return this.call('navigate_page', { pageId: this.pageId, type: 'url', url }); }
  snapshot() { return this.call('take_snapshot', { pageId: this.pageId }); }
  get waitTool() { return 'wait_for'; }
  waitArgs(name) { return { pageId: this.pageId, text: [name] }; }

  // `uid=1_5 button "Send" disabled` / `uid=1_7 textbox value="…"`
  items(result) {
    const out = [];
    for (const line of H.textOf(result).split('\n')) {
      const m = /uid=(\S+) ([\w-]+)(?: "((?:[^"\\]|\\.)*)")?(?:.*?value="((?:[^"\\]|\\.)*)")?/.exec(line);
      if (m) {
        out.push({ ref: m[1], role: m[2], name: (m[3] ?? '').replace(/\\"/g, '"'), value: m[4] ?? '',
          disabled: /"\s.*\bdisabled\b|^\s*uid=\S+ [\w-]+ disabled\b/.test(line) });
      }
    }
    return out;
  }

  // What changed comes back only with includeSnapshot: an agent that must know asks for it.
  click(ref) { return this.call('click', { pageId: this.pageId, uid: ref, includeSnapshot: true }); }
  fill(ref, label, value) { return this.call('fill', { pageId: this.pageId, uid: ref, value }); }
}

