// SPDX-License-Identifier: GPL-3.0-or-later
// Shared by the desktop-integration suites (background.test.mjs, notifications.test.mjs): the
// real app started with chosen arguments and settings, which of its windows are on screen (through
// the accessibility tree), a second launch, and a stand-in notification server.

import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

import { APP, run } from './app-harness.mjs';
import { endedCleanUnderSanitizers } from '../lib/sanitizer.mjs';
import { deadline } from '../lib/until.mjs';

const here = dirname(fileURLToPath(import.meta.url));

// The accessibility tree of one process, through atspi-driver.py narrowed to its pid: an app that
// just quit (a second launch, the previous test's) can still be listed for a moment, and nothing
// else can be taken for ours. Every wait is the driver's own (its one until()).
async function tree(pid, ...args) {
  const { stdout } = await run('/usr/bin/python3', [join(here, 'atspi-driver.py'), '--pid', String(pid),
                                                    ...args.map(String)], { timeout: 30000 });
  return stdout;
}

/** The titles of the showing windows of process @pid, now. */
export async function windowsOf(pid) {
  return (await tree(pid, 'windows')).split('\n').filter(Boolean);
}

/** Waits until process @pid shows a window titled @title. */
export async function waitWindow(pid, title, timeoutS = 15) {
  await tree(pid, 'wait-window', title, '--timeout', timeoutS);
}

/** Waits until process @pid shows no window titled @title (no window at all without one). */
export async function waitNoWindow(pid, title, timeoutS = 15) {
  await tree(pid, 'no-window', ...(title ? [title] : []), '--timeout', timeoutS);
}

/** The text of every label in the showing windows of process @pid. */
export async function labelsOf(pid) {
  return (await tree(pid, 'labels')).split('\n').filter(Boolean);
}

/** Waits until a label of process @pid contains @text. */
export async function waitLabel(pid, text, timeoutS = 15) {
  return (await tree(pid, 'wait-label', text, '--timeout', timeoutS)).trim();
}

/** Presses the button named @name in a window of process @pid, as a person would. */
export async function pressIn(pid, name, timeoutS = 15) {
  await tree(pid, 'press', name, '--timeout', timeoutS);
}

/**
 * A round trip through the app's own main loop (org.gtk.Actions.List on its D-Bus path, which
 * GApplication answers there): once it returns, everything the app was sent before has been
 * handled, and its main loop is still running.
 */
export async function appRoundTrip(env) {
  const { stdout } = await run('gdbus', ['call', '--session', '--dest', 'io.github.chaperone.Chaperone',
                                         '--object-path', '/io/github/chaperone/Chaperone',
                                         '--method', 'org.gtk.Actions.List'], { env, timeout: 10000 });
  return stdout;
}

export function appEnv(home, { backend = 'memory' } = {}) {
  const env = {
    ...process.env,
    GDK_BACKEND: 'x11',
    GSETTINGS_BACKEND: backend,
    XDG_DATA_HOME: join(home, 'data'),
    XDG_CONFIG_HOME: join(home, 'config'),
    XDG_CACHE_HOME: join(home, 'cache'),
    LANGUAGE: 'en',
    LC_ALL: 'C.UTF-8',
  };
  delete env.NO_AT_BRIDGE;
  delete env.GTK_A11Y;
  return env;
}

/** Starts `chaperone ...args` with @env; resolves once it listens, with its pid, port, log and exit. */
export async function startApp(env, args) {
  const child = spawn(APP, args, { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const log = [];
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => {
    log.push(`[the app exited: ${code ?? signal}]`);
    resolve(code ?? signal);
  }));
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
    exited.then(() => reject(new Error(`the app exited:\n${log.join('\n')}`)));
  });
  let gone = false;
  let how = null;
  child.once('close', (code, signal) => { how = { code, signal }; });
  exited.then(() => { gone = true; });
  return {
    pid: child.pid,
    port,
    log,
    exited,
    alive: () => !gone,
    /**
     * Stops it with SIGTERM (it quits through its main loop). An end that was not clean — a crash
     * before, or under LeakSanitizer a leak report at exit — fails the test that stops it.
     */
    async stop() {
      const already = gone;
      if (!gone) {
        try { process.kill(-child.pid, 'SIGTERM'); } catch { /* already gone */ }
        await deadline(exited, { timeout: 15000, what: 'the app to end on SIGTERM' }).catch(() => {});
      }
      try { process.kill(-child.pid, 'SIGKILL'); } catch { /* already gone */ }
      await new Promise((r) => (how ? r() : child.once('close', r)));
      if (how && (how.signal || how.code !== 0) && !endedCleanUnderSanitizers(log)) {
        throw new Error(`the app ${already ? 'died' : 'ended badly on SIGTERM'} (${how.signal ?? `exit ${how.code}`}); `
          + `its last output:\n${log.slice(-200).join('\n')}`);
      }
    },
  };
}

/** Runs `chaperone ...args` as a second launch would; it hands over to the running one and ends. */
export async function launchAgain(env, args = []) {
  const { stdout, stderr } = await run(APP, args, { env, timeout: 20000 });
  return stdout + stderr;
}

export function bridgeAccepts(port) {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port }, () => { socket.destroy(); resolve(true); });
    socket.once('error', () => resolve(false));
    socket.setTimeout(3000, () => { socket.destroy(); resolve(false); });
  });
}

/**
 * Starts fake-notifications.py on the session bus; resolves once it owns the name. `records` fills
 * with what the app sent, `next(predicate)` waits for a matching record, `invoke(id, action)`
 * clicks a notification.
 */
export async function startNotificationServer() {
  const child = spawn('/usr/bin/python3', [join(here, 'fake-notifications.py')],
                      { detached: true, stdio: ['pipe', 'pipe', 'inherit'] });
  const records = [];
  const waiters = new Set();
  const ready = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the notification server did not start')), 10000);
    createInterface({ input: child.stdout }).on('line', (line) => {
      const record = JSON.parse(line);
      if (record.ready) {
        clearTimeout(timer);
        resolve();
        return;
      }
      records.push(record);
      for (const waiter of waiters) waiter();
    });
    child.once('exit', () => reject(new Error('the notification server exited')));
  });
  await ready;

  return {
    records,
    next(predicate, timeoutMs = 15000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = records.find(predicate);
          if (found) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(found);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no such notification record; got ${JSON.stringify(records)}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    invoke(id, action = 'default') {
      child.stdin.write(`invoke ${id} ${action}\n`);
    },
    async stop() {
      try { process.kill(-child.pid, 'SIGTERM'); } catch { /* already gone */ }
      await new Promise((r) => { child.once('exit', r); setTimeout(r, 3000); });
    },
  };
}
