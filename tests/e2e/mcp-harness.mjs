// SPDX-License-Identifier: GPL-3.0-or-later
// Shared by the agent-interface end-to-end suites (mcp-*.test.mjs) and bench/mcp-bench.mjs: a real
// MCP client — the official TypeScript SDK, which no one here wrote — launching the real relay
// (`chaperone-mcp`, $CHAPERONE_MCP) over stdio, the way Claude Code and other MCP clients do; the
// core engine harness serving the agent socket without GTK; a private D-Bus session bus with a
// service directory (for the relay's D-Bus activation); and helpers that read tool results.

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

import { deadline, watch } from '../lib/until.mjs';

export const RELAY = process.env.CHAPERONE_MCP ? resolve(process.env.CHAPERONE_MCP) : null;

let sdk = null;
try {
  const [{ Client }, { StdioClientTransport }, types] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/stdio.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  sdk = { Client, StdioClientTransport, McpError: types.McpError, ErrorCode: types.ErrorCode };
} catch {
  // reported by mcpWhyNot()
}
export const SDK = sdk;

/** Why the agent-interface suites cannot run here, or null. */
export function mcpWhyNot() {
  if (!RELAY) return 'CHAPERONE_MCP is not set (meson sets it)';
  if (!existsSync(RELAY)) return `no relay at ${RELAY} (ninja -C build src/relay/chaperone-mcp)`;
  if (!sdk) return '@modelcontextprotocol/sdk is not installed (npm ci)';
  return null;
}

/** The tools every build has (DESIGN §7; more may follow). */
export const CORE_TOOLS = ['browser_tabs', 'browser_snapshot', 'browser_inspect', 'browser_act',
  'browser_navigate', 'browser_handoff', 'browser_wait', 'browser_stop'];

// ---- the relay, launched by the SDK ------------------------------------------------------------

/**
 * The relay's environment: this process's, with `overrides` applied (a value of undefined removes
 * the variable). The SDK would otherwise pass only HOME, PATH, SHELL, TERM, USER and LOGNAME.
 */
export function relayEnv(overrides = {}) {
  const env = { ...process.env };
  delete env.CHAPERONE_AGENT_SOCKET;
  for (const [k, v] of Object.entries(overrides)) {
    if (v === undefined) delete env[k];
    else env[k] = String(v);
  }
  return env;
}

/**
 * Starts `chaperone-mcp` through the SDK's StdioClientTransport and completes the MCP handshake
 * (initialize) as client `name`. Pass `runtimeDir` (the app's XDG_RUNTIME_DIR) or `socket` (sets
 * CHAPERONE_AGENT_SOCKET), and/or `env` overrides. (`command`/`args`/`cwd` start another MCP
 * server instead: the benchmark's peers.)
 * → {client, transport, name, stderr(), pid, call(tool, args, options), close()}
 */
export async function connectAgent({ name = 'mcp-e2e', version = '1.0.0', runtimeDir, socket,
                                     env = {}, timeoutMs = 20000, command = RELAY, args = [],
                                     cwd } = {}) {
  const { Client, StdioClientTransport } = sdk;
  const overrides = { ...env };
  if (runtimeDir) overrides.XDG_RUNTIME_DIR = runtimeDir;
  if (socket) overrides.CHAPERONE_AGENT_SOCKET = socket;
  const transport = new StdioClientTransport({
    command, args, env: relayEnv(overrides), stderr: 'pipe', ...(cwd ? { cwd } : {}),
  });
  const errChunks = [];   // the server's stderr, the last 200 chunks
  transport.stderr?.on('data', (d) => {
    errChunks.push(d.toString());
    if (errChunks.length > 200) errChunks.splice(0, errChunks.length - 200);
  });
  const client = new Client({ name, version }, { capabilities: {} });
  // Every message the SDK writes to the relay, as it is written: `sent()` waits on one.
  const written = [];
  const writes = watch();
  const send = transport.send.bind(transport);
  transport.send = async (message, ...rest) => {
    await send(message, ...rest);
    written.push(message);
    writes.notify();
  };
  const agent = {
    client,
    transport,
    name,
    stderr: () => errChunks.join(''),
    /** Resolves with the first message written to the relay from now on that `match`es. */
    sent(match, what, timeout = 10000) {
      const from = written.length;
      return writes.when(() => written.slice(from).find(match), { timeout, what });
    },
    get pid() { return transport.pid; },
    /** tools/call; the result as the SDK returns it (validated against the tool's outputSchema). */
    call: (tool, toolArgs = {}, options = {}) => client.callTool({ name: tool, arguments: toolArgs },
      undefined, { timeout: 30000, ...options }),
    async close() {
      await client.close().catch(() => {});
    },
  };
  try {
    await deadline(client.connect(transport, { timeout: timeoutMs }),
                   { timeout: timeoutMs + 1000, what: `the MCP handshake with ${command} as ${name}` });
  } catch (err) {
    await agent.close();
    err.relayStderr = agent.stderr();
    throw err;
  }
  // tools/list once, so the SDK knows each tool's outputSchema and validates every result.
  await client.listTools();
  return agent;
}

// ---- tool schemas ------------------------------------------------------------------------------

/**
 * What is wrong with the tools' schemas, as readable lines (empty when nothing): every tool must
 * have an inputSchema, and each inputSchema/outputSchema it has must be a JSON Schema object
 * (type "object") that Ajv — the validator the SDK itself uses — accepts against its meta-schema
 * (draft 2020-12 when it says so, else draft-07) and compiles. `requireOutput` names tools that
 * must declare an outputSchema.
 */
export async function schemaProblems(tools, { requireOutput = [] } = {}) {
  const { default: Ajv } = await import('ajv');
  const { default: Ajv2020 } = await import('ajv/dist/2020.js');
  const problems = [];
  for (const tool of tools) {
    if (requireOutput.includes(tool.name) && !tool.outputSchema) problems.push(`${tool.name}: no outputSchema`);
    for (const kind of ['inputSchema', 'outputSchema']) {
      const schema = tool[kind];
      if (schema === undefined) {
        if (kind === 'inputSchema') problems.push(`${tool.name}: no inputSchema`);
        continue;
      }
      if (!schema || typeof schema !== 'object' || Array.isArray(schema)) {
        problems.push(`${tool.name}.${kind}: not an object`);
        continue;
      }
      if (schema.type !== 'object') problems.push(`${tool.name}.${kind}: type is ${JSON.stringify(schema.type)}, not "object"`);
      const draft2020 = /2020-12/.test(schema.$schema ?? '');
      if (schema.$schema && !draft2020 && !/draft-07/.test(schema.$schema)) {
        problems.push(`${tool.name}.${kind}: unknown $schema ${schema.$schema}`);
        continue;
      }
      const ajv = draft2020 ? new Ajv2020({ strict: false }) : new Ajv({ strict: false });
      if (!ajv.validateSchema(schema)) {
        problems.push(`${tool.name}.${kind}: not a valid JSON Schema: ${ajv.errorsText(ajv.errors)}`);
        continue;
      }
      try {
        ajv.compile(schema);
      } catch (err) {
        problems.push(`${tool.name}.${kind}: does not compile: ${err.message}`);
      }
    }
  }
  return problems;
}

// ---- reading results ---------------------------------------------------------------------------

/** The text content of a tool result, joined. */
export function textOf(result) {
  return (result?.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

/** The error code of an isError result (structuredContent.code), or null for a success. */
export function errorCode(result) {
  if (!result?.isError) return null;
  return result.structuredContent?.code ?? 'isError-without-code';
}

/** Throws with the result shown when a tool call failed; else returns it. */
export function ok(result, what = 'the call') {
  if (result?.isError) {
    throw new Error(`${what} failed: ${JSON.stringify(result.structuredContent ?? result.content).slice(0, 800)}`);
  }
  return result;
}

/**
 * The untrusted-content spans of a text: [{start, end, body}]. Accepts the wrapper as an element
 * (`<untrusted-…>…</untrusted-…>`, any tag whose name says untrusted — Chaperone's carries the
 * result's marker, `<untrusted-page-content-k3f9q2x7m4>`, and closes with the same name) or as a
 * pair of marker lines (a BEGIN/START … UNTRUSTED line and an END … UNTRUSTED line).
 */
export function untrustedSpans(text) {
  const spans = [];
  const tag = /<([A-Za-z][\w:-]*)(?:\s[^>]*)?>/g;
  let m;
  while ((m = tag.exec(text))) {
    if (!/untrusted/i.test(m[1])) continue;
    const close = text.indexOf(`</${m[1]}>`, m.index + m[0].length);
    if (close < 0) break;
    spans.push({ start: m.index, end: close + m[1].length + 3, body: text.slice(m.index + m[0].length, close) });
    tag.lastIndex = close;
  }
  if (spans.length) return spans;
  const open = /^.*\b(begin|start)\b.*untrusted.*$/gim;
  while ((m = open.exec(text))) {
    const rest = text.slice(m.index + m[0].length);
    const end = /^.*\bend\b.*untrusted.*$/im.exec(rest);
    if (!end) break;
    const endAt = m.index + m[0].length + end.index;
    spans.push({ start: m.index, end: endAt + end[0].length, body: text.slice(m.index + m[0].length, endAt) });
    open.lastIndex = endAt + end[0].length;
  }
  return spans;
}

/** Whether every occurrence of `needle` in `text` lies inside an untrusted span. */
export function onlyInsideUntrusted(text, needle) {
  const spans = untrustedSpans(text);
  let at = text.indexOf(needle);
  if (at < 0) return false;
  while (at >= 0) {
    if (!spans.some((s) => at > s.start && at + needle.length <= s.end)) return false;
    at = text.indexOf(needle, at + 1);
  }
  return true;
}

/**
 * The actionable-element lines of a snapshot's text: `[ref] role "name" …` → [{ref, role, name,
 * line}]. The ref is whatever the brackets hold (refs are opaque).
 */
export function refLines(text) {
  const out = [];
  for (const line of text.split('\n')) {
    const m = /^\s*(?:[-*]\s*)?\[([^\]\s]+)\]\s+([\w-]+)(?:\s+"((?:[^"\\]|\\.)*)")?/.exec(line);
    if (!m) continue;
    let name = m[3] ?? '';
    try { name = JSON.parse(`"${name}"`); } catch { /* not a JSON string escape: as it is */ }
    out.push({ ref: m[1], role: m[2], name, line });
  }
  return out;
}

/**
 * A page-derived string of structuredContent without its marking: Chaperone puts each between the
 * result's tags, `<untrusted-page-content-M>…</untrusted-page-content-M>`, M being the marker in
 * the result's `untrusted` (docs/agents.md). Other servers' strings come back as they are.
 */
export function unmark(value, marker) {
  if (!marker || typeof value !== 'string') return value;
  const open = `<untrusted-page-content-${marker}>`;
  const close = `</untrusted-page-content-${marker}>`;
  return value.startsWith(open) && value.endsWith(close) ? value.slice(open.length, -close.length) : value;
}

/** structuredContent with every marked string unmarked (a deep copy), for reading its values. */
export function structuredOf(result) {
  const s = result?.structuredContent ?? {};
  const marker = typeof s.untrusted === 'string' ? s.untrusted : null;
  const walk = (v) => {
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return unmark(v, marker);
  };
  return walk(s);
}

/**
 * The elements of a snapshot: its structuredContent's array when a server gives one (whatever it
 * is called), unmarked; else its text's element lines, which is where Chaperone says them (its
 * structuredContent does not repeat the text).
 */
export function nodesOf(result) {
  const s = structuredOf(result);
  const listed = s.nodes ?? s.elements ?? s.items;
  if (Array.isArray(listed)) return listed;
  return refLines(textOf(result)).map(({ ref, role, name }) => ({ ref, role, name }));
}

/** The next page token of a snapshot, or null at the last page. */
export function nextPageOf(result) {
  const s = result?.structuredContent ?? {};
  return s.nextPage ?? s.next_page ?? null;
}

// ---- the core engine, serving the agent socket without GTK -------------------------------------

/**
 * Starts `chaperone-test-engine --agent-socket PATH` (its own group, a fresh data folder and a
 * private 0700 runtime folder for the socket); resolves once it listens. Uses the shared
 * TestEngine class (JSON lines, approve, call) from tests/js/engine-harness.mjs.
 * → {engine, socket, runtimeDir, stop()}
 */
export async function startEngineWithAgents({ enginePath = process.env.CHAPERONE_TEST_ENGINE,
                                              timeoutMs = 15000 } = {}) {
  const { TestEngine } = await import('../js/engine-harness.mjs');
  const home = await mkdtemp(join(tmpdir(), 'chaperone-mcp-engine-'));
  const dataDir = join(home, 'data');
  const runtimeDir = join(home, 'run');
  await mkdir(dataDir, { mode: 0o700 });
  await mkdir(runtimeDir, { mode: 0o700 });
  await chmod(runtimeDir, 0o700);
  const socket = join(runtimeDir, 'chaperone', 'agent.sock');
  await mkdir(join(runtimeDir, 'chaperone'), { mode: 0o700 });
  const child = spawn(resolve(enginePath), ['--port', '0', '--data-dir', dataDir, '--agent-socket', socket],
                      { detached: true, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, XDG_RUNTIME_DIR: runtimeDir } });
  const engine = new TestEngine(child, dataDir);
  try {
    const listening = await engine.waitFor({ event: 'listening' }, { timeoutMs });
    engine.port = listening.port;
    engine.engineId = listening.engineId;
    engine.agentSocket = listening.agentSocket ?? null;
  } catch (err) {
    await engine.stop();
    await rm(home, { recursive: true, force: true });
    throw err;
  }
  return {
    engine,
    socket: engine.agentSocket ?? socket,
    runtimeDir,
    pid: child.pid,
    async stop() {
      await engine.stop();
      await rm(home, { recursive: true, force: true });
    },
  };
}

// ---- a private session bus -----------------------------------------------------------------------

/**
 * Starts a private D-Bus session bus whose only service directory is `serviceDir` (may be empty:
 * then nothing can be activated). → {address, pid, stop()}
 */
export async function startPrivateBus({ serviceDir, timeoutMs = 10000 } = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'chaperone-bus-'));
  const services = serviceDir ?? join(dir, 'services');
  await mkdir(services, { recursive: true });
  const config = join(dir, 'session.conf');
  await writeFile(config, `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:dir=${dir}</listen>
  <servicedir>${services}</servicedir>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`);
  const child = spawn('dbus-daemon', [`--config-file=${config}`, '--nofork', '--print-address=1'],
                      { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const address = await new Promise((ok, fail) => {
    const timer = setTimeout(() => fail(new Error('dbus-daemon did not print its address')), timeoutMs);
    createInterface({ input: child.stdout }).once('line', (line) => { clearTimeout(timer); ok(line.trim()); });
    child.once('error', (e) => { clearTimeout(timer); fail(e); });
    child.once('exit', (code) => { clearTimeout(timer); fail(new Error(`dbus-daemon exited (${code})`)); });
  });
  return {
    address,
    pid: child.pid,
    serviceDir: services,
    async stop() {
      try { process.kill(-child.pid, 'SIGTERM'); } catch { /* gone */ }
      await new Promise((r) => { if (child.exitCode !== null) r(); else { child.once('exit', r); setTimeout(r, 2000); } });
      await rm(dir, { recursive: true, force: true });
    },
  };
}

// ---- the app's pages, as a person switches them ------------------------------------------------

/**
 * Shows the app's page named `name` ("Needs You", "Browsers", "Grants", "Agents", "Activity"), as a
 * person clicks its tab in the switcher: a button on a page not shown takes no press (GTK ignores
 * it). The page tabs are "page tab" nodes, not buttons: atspi-driver.py's `page` presses them.
 */
export async function showPage(name, { timeoutS = 15 } = {}) {
  const { atspi } = await import('./app-harness.mjs');
  await atspi('page', name, '--timeout', String(timeoutS));
}

// ---- processes ---------------------------------------------------------------------------------

/** Pids of `pid` and all its descendants, from /proc. */
export async function processTree(pid) {
  const { readdir, readFile } = await import('node:fs/promises');
  const parent = new Map();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parent.set(Number(entry), ppid);
    } catch { /* gone */ }
  }
  const out = [pid];
  for (let i = 0; i < out.length; i++) {
    for (const [p, pp] of parent) if (pp === out[i] && !out.includes(p)) out.push(p);
  }
  return out.filter((p) => parent.has(p));
}

/** Resident set of one process in KiB (VmRSS), 0 when it is gone. */
export async function rssKiB(pid) {
  const { readFile } = await import('node:fs/promises');
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    return Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** The summed RSS (KiB) of a process and all its descendants. */
export async function treeRssKiB(pid) {
  let sum = 0;
  for (const p of await processTree(pid)) sum += await rssKiB(p);
  return sum;
}


