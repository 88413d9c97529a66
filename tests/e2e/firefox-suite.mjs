// SPDX-License-Identifier: GPL-3.0-or-later
// What each Firefox test file (tests/e2e/firefox-*.test.mjs) shares around the browser driver
// (firefox-harness.mjs): its world `W`, filled by its own `before` (W.ff, W.engine or W.world,
// W.sites, W.agent, W.deviceId, pages and tabs); `step`, a test that marks the file failed; the
// teardown that then prints Firefox's console and the engine's (and agent's) last words and
// closes what W holds; and the app's calls to the paired device, each reply scanned for the
// values the file says must never come back.
//
//   const { W, step, marking, ok, refused, teardown } = firefoxSuite({ skip, never: [SECRET] });
//   before(() => marking(setUp), { timeout: 120000 });
//   after(teardown, { timeout: 30000 });

import assert from 'node:assert/strict';
import { test } from 'node:test';

/**
 * @param skip    why the file cannot run, or false
 * @param timeout each step's bound (ms)
 * @param never   strings no reply may contain (a cookie, a typed secret, a planted token)
 */
export function firefoxSuite({ skip, timeout = 60000, never = [] }) {
  const W = { pages: {}, tabs: {} };
  let failed = false;

  /** Runs `fn`; a failure marks the file failed (its teardown then shows why), and goes on. */
  async function marking(fn) {
    try {
      return await fn();
    } catch (err) {
      failed = true;
      throw err;
    }
  }

  const step = (name, fn, options = {}) => test(name, { skip, timeout, ...options }, (t) => marking(() => fn(t)));

  /** Fails when `reply` (anything JSON) carries one of the never-returned values. */
  function noValue(what, reply) {
    const text = JSON.stringify(reply);
    for (const v of never) assert.ok(!text.includes(v), `${what} replied with a value (${v}): ${text.slice(0, 300)}`);
  }

  /** One call as the app makes it to the paired device. */
  async function call(method, params = {}) {
    const reply = await W.engine.call(W.deviceId, method, params, { timeoutMs: 10000 });
    noValue(method, reply);
    return reply;
  }

  async function ok(method, params) {
    const reply = await call(method, params);
    assert.ok(reply.result !== undefined, `${method} ${JSON.stringify(params)} failed: ${JSON.stringify(reply.error)}`);
    return reply.result;
  }

  async function refused(code, method, params) {
    const reply = await call(method, params);
    assert.equal(reply.error?.code, code, `${method} should answer ${code}: ${JSON.stringify(reply.error ?? reply.result).slice(0, 300)}`);
    return reply.error;
  }

  async function teardown() {
    if (failed) {
      console.log(W.ff?.consoleLines.slice(-60).join('\n'));
      console.log(W.engine?.stderrTail());
      if (W.agent) console.log(W.agent.stderr().slice(-2000));
    }
    await W.agent?.close();
    await W.ff?.close();
    // A world owns its engine; a file without one started the engine itself.
    if (W.world) await W.world.stop();
    else await W.engine?.stop();
    await W.sites?.close();
  }

  return { W, step, marking, noValue, call, ok, refused, teardown };
}
