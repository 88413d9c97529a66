// SPDX-License-Identifier: GPL-3.0-or-later
// Shared by the end-to-end suites: the real app under the virtual display with private XDG
// folders, and the accessibility tree through which a test presses its buttons as a person would.

import { execFile, spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { endedCleanUnderSanitizers } from '../lib/sanitizer.mjs';
import { deadline } from '../lib/until.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const driver = join(here, 'atspi-driver.py');
export const APP = process.env.CHAPERONE_APP ? resolve(process.env.CHAPERONE_APP) : null;
export const run = promisify(execFile);

export function whyNot() {
  if (!APP) return 'CHAPERONE_APP is not set (meson sets it when the UI is built)';
  if (!process.env.DISPLAY) return 'no DISPLAY: run under xvfb-run';
  if (!process.env.DBUS_SESSION_BUS_ADDRESS) return 'no session bus: run under dbus-run-session';
  return null;
}

export async function atspi(...args) {
  // Debian's Python: it has the GObject bindings for AT-SPI, whatever else is first on PATH.
  const { stdout } = await run('/usr/bin/python3', [driver, ...args], { timeout: 30000 });
  return stdout.trim();
}

/** The agent socket (MCP) of an app whose XDG_RUNTIME_DIR is @runtimeDir. */
export const agentSocketIn = (runtimeDir) => join(runtimeDir, 'chaperone', 'agent.sock');

/**
 * Starts the app with private XDG folders; resolves once it listens.
 * @param home   an existing private tree to start again in (a restart keeps the pairing)
 * @param port   the bridge port; 0 for any free one
 * @param noLeakCheck  (under the sanitizers) why this app's exit is not checked for leaks: memory
 *                     errors are still fatal; only LeakSanitizer's exit report is off, and the
 *                     reason is printed so a run says what it did not check
 * Resolves with {port, log, home, runtimeDir, agentSocket, pid, stop(), stopKeepingData()}:
 * runtimeDir is the app's own XDG_RUNTIME_DIR (0700, inside home), agentSocket where it serves
 * agents (MCP) — an agent started with XDG_RUNTIME_DIR=runtimeDir, or
 * CHAPERONE_AGENT_SOCKET=agentSocket, reaches this app and no other.
 */
export async function startApp({ home: givenHome, port: wantedPort = 0, noLeakCheck = null } = {}) {
  const home = givenHome ?? await mkdtemp(join(tmpdir(), 'chaperone-e2e-'));
  const runtimeDir = join(home, 'run');
  await mkdir(runtimeDir, { recursive: true, mode: 0o700 });
  await chmod(runtimeDir, 0o700);
  const env = {
    ...process.env,
    GDK_BACKEND: 'x11',
    GSETTINGS_BACKEND: 'memory',
    XDG_DATA_HOME: join(home, 'data'),
    XDG_CONFIG_HOME: join(home, 'config'),
    XDG_CACHE_HOME: join(home, 'cache'),
    XDG_RUNTIME_DIR: runtimeDir,
    LANGUAGE: 'en',
    LC_ALL: 'C.UTF-8',
  };
  if (noLeakCheck && env.ASAN_OPTIONS !== undefined) {
    env.ASAN_OPTIONS = `${env.ASAN_OPTIONS}:detect_leaks=0`;
    console.log(`# the app's leak check is off for this test: ${noLeakCheck}`);
  }
  // The accessibility bridge is what the person's tools use; the unit tests turn it off.
  delete env.NO_AT_BRIDGE;
  delete env.GTK_A11Y;

  const child = spawn(APP, ['--bridge-port', String(wantedPort)],
                      { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const log = [];
  let exit = null;                       // {code, signal} once it has exited
  let stopping = false;                  // we asked it to stop: its end is no crash
  // 'close', not 'exit': by then all it printed has been read (a sanitizer report comes last).
  const exited = new Promise((r) => child.once('close', (code, signal) => { exit = { code, signal }; r(exit); }));
  const port = await new Promise((resolvePort, reject) => {
    const timer = setTimeout(() => reject(new Error(`the app did not listen:\n${log.join('\n')}`)),
                             20000);
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (line) => {
        log.push(line);
        const m = /bridge: listening on 127\.0\.0\.1:(\d+)/.exec(line);
        if (m) {
          clearTimeout(timer);
          resolvePort(Number(m[1]));
        }
      });
    }
    child.on('exit', (code, signal) => {
      log.push(`[the app exited: ${code ?? signal}]`);
      reject(new Error(`the app exited (${code ?? signal}):\n${log.join('\n')}`));
    });
  });

  // Stops the app with SIGTERM (it quits through its main loop) and says how that went: a crash
  // before it, an unclean end (under LeakSanitizer: a leak report, in the log), or an app that
  // did not end, fail the test that stops it. Never retried, never swallowed.
  const kill = async () => {
    const before = exit ? crash() : null;
    stopping = true;
    if (before) throw new Error(before);
    if (!exit) {
      try { process.kill(-child.pid, 'SIGTERM'); } catch { /* already gone */ }
      await deadline(exited, { timeout: 15000, what: 'the app to end on SIGTERM' }).catch(() => {});
    }
    try { process.kill(-child.pid, 'SIGKILL'); } catch { /* already gone */ }
    if (!exit) {
      await exited;
      throw new Error(`the app did not end within 15 s of SIGTERM; its last output:\n${log.slice(-100).join('\n')}`);
    }
    if (exit.code !== 0 && !endedCleanUnderSanitizers(log)) {
      throw new Error(`the app ended badly on SIGTERM (${exit.signal ?? `exit ${exit.code}`}); its last output:\n${log.slice(-200).join('\n')}`);
    }
  };
  const crash = () => (exit && !stopping && (exit.signal || exit.code !== 0) && !endedCleanUnderSanitizers(log)
    ? `the app died (${exit.signal ?? `exit ${exit.code}`}); its last output:\n${log.slice(-200).join('\n')}`
    : null);

  return {
    port,
    log,
    home,
    runtimeDir,
    agentSocket: agentSocketIn(runtimeDir),
    pid: child.pid,
    /** Whether the app's process is still running. */
    alive: () => exit === null,
    /** Resolves with {code, signal} when the app's process ends. */
    exited,
    /**
     * Why the app died, with what it printed last (under AddressSanitizer: the stack), or null
     * while it runs or after a clean exit. A test that sees this fails with it: a crash is never
     * retried away.
     */
    crash,
    async stop() {
      try {
        await kill();
      } finally {
        if (!givenHome) await rm(home, { recursive: true, force: true });
      }
    },
    /** Stops the app and keeps its data, for a restart with `startApp({home, port})`. */
    stopKeepingData: kill,
  };
}


export const display = (code) => `${code.slice(0, 3)} ${code.slice(3)}`;
