// SPDX-License-Identifier: GPL-3.0-or-later
// The agent interface without GTK: the official MCP TypeScript SDK launches the real relay,
// which reaches the core engine harness (`chaperone-test-engine --agent-socket`), the app's core.
// No browser: what an agent sees before anything is paired, the schemas, the protocol errors, two
// sessions at once and a cancelled call. Runs in the sanitizer pass too (no GTK, no AT-SPI).

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, test } from 'node:test';

import * as H from './mcp-harness.mjs';

const ENGINE = process.env.CHAPERONE_TEST_ENGINE;
const skip = H.mcpWhyNot()
  ?? (!ENGINE ? 'CHAPERONE_TEST_ENGINE is not set (meson sets it)' : null)
  ?? (!existsSync(ENGINE) ? `no engine harness at ${ENGINE}` : null)
  ?? false;
if (skip) console.log(`# skipped: ${skip}`);

let world = null;
let agent = null;

before(async () => {
  if (skip) return;
  world = await H.startEngineWithAgents();
  agent = await H.connectAgent({ name: 'mcp-e2e-engine', socket: world.socket });
}, { timeout: 30000 });

after(async () => {
  await agent?.close();
  await world?.stop();
});

test('initialize: the server names itself, offers tools, and tells the agent how page text arrives', { skip }, async () => {
  const info = agent.client.getServerVersion();
  assert.equal(info?.name, 'chaperone');
  assert.ok(agent.client.getServerCapabilities()?.tools, 'tools capability');
  assert.match(agent.client.getInstructions?.() ?? '', /untrusted/i);
});

test('tools/list: the core tools, each with valid JSON Schema input and output schemas', { skip }, async () => {
  const { tools } = await agent.client.listTools();
  const names = tools.map((t) => t.name);
  for (const name of H.CORE_TOOLS) assert.ok(names.includes(name), `${name} among ${names}`);
  assert.deepEqual(await H.schemaProblems(tools, { requireOutput: H.CORE_TOOLS }), []);
  // The budget of issue 5 was half of Playwright MCP 0.0.83's 20,296 bytes (bench/mcp-bench.mjs
  // measures both in one run), 10,148 bytes, and its ten tools kept to it. The site's own API
  // (issue 17) adds browser_network and browser_api, 1,782 bytes between them, and browser_batch
  // (issue 17 item 7: steps and recipes in one call) 1,644 bytes: the budget grows by those and
  // no more, so any other growth still has to be paid for by trimming.
  const bytes = Buffer.byteLength(JSON.stringify({ tools }));
  assert.ok(bytes <= 13574, `tools/list stays within its budget: ${bytes} bytes`);
});

test('with no browser paired: browser_tabs answers (no tabs, or an error with a code), validated by the SDK', { skip }, async () => {
  const r = await agent.call('browser_tabs');
  if (r.isError) assert.equal(typeof H.errorCode(r), 'string', JSON.stringify(r));
  else assert.deepEqual(r.structuredContent?.tabs, [], JSON.stringify(r.structuredContent));
  const snap = await agent.call('browser_snapshot', { tab: 'b1:1' });
  assert.ok(snap.isError && typeof H.errorCode(snap) === 'string', JSON.stringify(snap));
});

test('bad arguments and unknown tools are JSON-RPC errors the SDK raises as McpError', { skip }, async () => {
  const { McpError, ErrorCode } = H.SDK;
  const invalid = (e) => e instanceof McpError && e.code === ErrorCode.InvalidParams;
  await assert.rejects(agent.call('browser_snapshot', {}), invalid);
  await assert.rejects(agent.call('browser_snapshot', { tab: 7 }), invalid);
  await assert.rejects(agent.call('browser_act', { tab: 'b1:1', ref: 'e1', action: 'explode' }), invalid);
  await assert.rejects(agent.call('browser_handoff', { tab: 'b1:1', reason: 'bored', message: 'x' }), invalid);
  await assert.rejects(agent.call('no_such_tool', {}),
    (e) => e instanceof McpError && [ErrorCode.InvalidParams, ErrorCode.MethodNotFound].includes(e.code));
  const still = await agent.call('browser_tabs');
  assert.ok(!still.isError || typeof H.errorCode(still) === 'string', 'the session goes on');
});

test('two agents at once, each its own session; a cancelled call does not end either', { skip, timeout: 30000 }, async () => {
  const other = await H.connectAgent({ name: 'mcp-e2e-engine-two', runtimeDir: world.runtimeDir });
  try {
    const [a, b] = await Promise.all([agent.client.listTools(), other.client.listTools()]);
    assert.equal(a.tools.length, b.tools.length);
    const controller = new AbortController();
    const pending = other.call('browser_wait', { id: 'no-such-handoff', timeoutMs: 10000 }, { signal: controller.signal });
    controller.abort(new Error('cancelled by the test'));
    // Either the cancellation wins or the server's own answer (an unknown id) came first.
    await pending.then((r) => assert.ok(r.isError), () => {});
    await other.client.ping();
    await agent.client.ping();
  } finally {
    await other.close();
  }
});

test('50 pings through the relay are each answered (the round trip is printed; bench/mcp-bench.mjs measures it)', { skip }, async () => {
  const times = [];
  for (let i = 0; i < 50; i++) {
    const start = performance.now();
    await agent.client.ping();
    times.push(performance.now() - start);
  }
  times.sort((x, y) => x - y);
  console.log(`# ping through relay and engine: median ${times[25].toFixed(2)} ms, max ${times[49].toFixed(2)} ms`);
  assert.equal(times.length, 50);
});
