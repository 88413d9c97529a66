// SPDX-License-Identifier: GPL-3.0-or-later
// Runs the engine test harness (`chaperone-test-engine`, see notes/protocol-decisions.md) as a
// child process for one test: its own process group and data directory, JSON lines both ways,
// a time limit on every wait, and a check at the end that it did not die on its own.

import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';

export const ENGINE_PATH = process.env.CHAPERONE_TEST_ENGINE
  ? resolve(process.env.CHAPERONE_TEST_ENGINE)
  : null;

const running = new Set();
// A failed assertion must not leave an engine behind: kill each group we started, by its id.
process.on('exit', () => {
  for (const engine of running) engine.killGroup('SIGKILL');
});

let tagCounter = 0;

function matches(event, pattern) {
  if (typeof pattern === 'function') return pattern(event);
  return Object.entries(pattern).every(([k, v]) => event[k] === v);
}

export class TestEngine {
  #waiters = [];
  #stderr = '';

  /**
   * Starts the harness on an ephemeral port with a fresh data directory and resolves once it says
   * where it listens.
   */
  static async start({ heartbeatMs, timeoutMs = 10000, dataDir: givenDataDir, port = 0, policy } = {}) {
    if (!ENGINE_PATH) throw new Error('CHAPERONE_TEST_ENGINE is not set');
    // A restart passes the previous engine's dataDir (its key and paired devices) and port.
    const dataDir = givenDataDir ?? await mkdtemp(join(tmpdir(), 'chaperone-engine-'));
    const args = ['--port', String(port), '--data-dir', dataDir];
    if (heartbeatMs !== undefined) args.push('--heartbeat-ms', String(heartbeatMs));
    // An administrator's policy file (its path), as /etc/chaperone/policy.conf would be.
    if (policy !== undefined) args.push('--policy', policy);
    const child = spawn(ENGINE_PATH, args, { detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    const engine = new TestEngine(child, dataDir);
    try {
      const listening = await engine.waitFor({ event: 'listening' }, { timeoutMs });
      engine.port = listening.port;
      engine.engineId = listening.engineId;
      return engine;
    } catch (err) {
      await engine.stop();
      throw err;
    }
  }

  constructor(child, dataDir) {
    this.child = child;
    this.dataDir = dataDir;
    this.events = [];
    this.exit = null;
    running.add(this);
    createInterface({ input: child.stdout }).on('line', (line) => this.#onLine(line));
    child.stderr.on('data', (d) => {
      this.#stderr = (this.#stderr + d.toString()).slice(-8000);
    });
    child.stdin.on('error', () => {}); // writing after an early exit is reported through `exit`
    child.on('error', (err) => {
      this.#stderr += `\n[could not run ${ENGINE_PATH}: ${err.message}]`;
      this.exit ??= { code: null, signal: null, error: err.message };
      running.delete(this);
      for (const w of this.#waiters.splice(0)) w.reject(new Error(`could not run the engine: ${err.message}`));
    });
    child.on('exit', (code, signal) => {
      this.exit = { code, signal };
      running.delete(this);
      for (const w of this.#waiters.splice(0)) {
        w.reject(new Error(`the engine exited (${signal ?? code}) while waiting for ${w.what}\n${this.stderrTail()}`));
      }
    });
  }

  stderrTail() {
    return this.#stderr ? `engine stderr (tail):\n${this.#stderr.slice(-2000)}` : 'engine stderr: (empty)';
  }

  #onLine(line) {
    let event;
    try {
      event = JSON.parse(line);
    } catch {
      this.#stderr += `\n[unparsable stdout line] ${line.slice(0, 200)}`;
      return;
    }
    this.events.push(event);
    for (const w of [...this.#waiters]) {
      if (matches(event, w.pattern)) {
        this.#waiters.splice(this.#waiters.indexOf(w), 1);
        w.resolve(event);
      }
    }
  }

  /** Index to pass as `after` to wait only for events reported from now on. */
  mark() {
    return this.events.length;
  }

  /**
   * Resolves with the first reported event (at index >= after) matching `pattern`: an object whose
   * fields must all be equal, or a predicate.
   */
  waitFor(pattern, { after = 0, timeoutMs = 5000 } = {}) {
    const what = typeof pattern === 'function' ? 'a matching event' : JSON.stringify(pattern);
    const found = this.events.slice(after).find((e) => matches(e, pattern));
    if (found) return Promise.resolve(found);
    if (this.exit) return Promise.reject(new Error(`the engine has exited; no ${what}\n${this.stderrTail()}`));
    return new Promise((resolvePromise, reject) => {
      const waiter = {
        pattern,
        what,
        resolve: (e) => { clearTimeout(timer); resolvePromise(e); },
        reject: (e) => { clearTimeout(timer); reject(e); },
      };
      const timer = setTimeout(() => {
        this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
        reject(new Error(`no ${what} from the engine within ${timeoutMs} ms\n${this.stderrTail()}`));
      }, timeoutMs);
      this.#waiters.push(waiter);
    });
  }

  send(command) {
    this.child.stdin.write(`${JSON.stringify(command)}\n`);
  }

  /** Sends a tagged command and resolves with its reply event ({result} or {error}). */
  command(command, { timeoutMs = 5000 } = {}) {
    const tag = `t${++tagCounter}`;
    const reply = this.waitFor({ event: 'reply', tag }, { timeoutMs });
    this.send({ ...command, tag });
    return reply;
  }

  /**
   * Starts an engine → device call; returns {tag, reply} so a test can cancel it or run several.
   * The reply wait allows the call's own timeout plus slack.
   */
  startCall(deviceId, method, params = {}, { timeoutMs = 5000 } = {}) {
    const tag = `t${++tagCounter}`;
    const reply = this.waitFor({ event: 'reply', tag }, { timeoutMs: timeoutMs + 3000 });
    this.send({ cmd: 'call', tag, deviceId, method, params, timeoutMs });
    return { tag, reply };
  }

  call(deviceId, method, params, options) {
    return this.startCall(deviceId, method, params, options).reply;
  }

  approve(requestId) {
    this.send({ cmd: 'approve', requestId });
  }

  reject(requestId) {
    this.send({ cmd: 'reject', requestId });
  }

  async devices() {
    const reply = await this.command({ cmd: 'devices' });
    return reply.result;
  }

  async device(deviceId) {
    return (await this.devices()).find((d) => d.deviceId === deviceId);
  }

  killGroup(signal) {
    try {
      process.kill(-this.child.pid, signal);
    } catch {
      // already gone
    }
  }

  /**
   * Asks the engine to quit, kills its group if it lingers, removes its data unless `keepData`
   * (for a restart: `TestEngine.start({dataDir: engine.dataDir, port: engine.port})`).
   */
  async stop({ keepData = false } = {}) {
    let asked = false;
    if (!this.exit && this.child.pid !== undefined) {
      const exited = new Promise((r) => this.child.once('exit', r));
      this.send({ cmd: 'quit' });
      asked = true;
      // Deadlines for the quit, then the signals: teardown, which no test waits on.
      const timer = setTimeout(() => this.killGroup('SIGTERM'), 10000);
      const hard = setTimeout(() => this.killGroup('SIGKILL'), 15000);
      await exited;
      clearTimeout(timer);
      clearTimeout(hard);
    }
    // Children the harness may have started share its group.
    if (this.child.pid !== undefined) this.killGroup('SIGKILL');
    if (!keepData) await rm(this.dataDir, { recursive: true, force: true });
    // Told to quit, it must end cleanly: under LeakSanitizer a leak is reported at exit and the
    // exit status says so. (An engine a test kills on purpose is not asked to quit.)
    if (asked && this.exit && (this.exit.signal || this.exit.code !== 0)) {
      throw new Error(`the engine did not end cleanly on quit (${this.exit.signal ?? `exit ${this.exit.code}`})\n${this.stderrTail()}`);
    }
  }
}
