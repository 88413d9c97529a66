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

const here = dirname(fileURLToPath(import.meta.url));

// The accessibility tree of one process, read through the driver's helpers but guarded at every
// step: an app that just quit (a second launch, the previous test's) can still be listed for a
// moment, and any call on it fails. Narrowed to a pid so that nothing else can be taken for ours.
//   windows PID          print the titles of its showing windows
//   labels PID           print the text of every label in them
//   press PID NAME       press its button named NAME; exit 1 if there is none
const TREE_SCRIPT = `
import importlib.util, sys
spec = importlib.util.spec_from_file_location("driver", sys.argv[1])
driver = importlib.util.module_from_spec(spec)
spec.loader.exec_module(driver)
Atspi = driver.Atspi
command, pid = sys.argv[2], int(sys.argv[3])

def windows():
    desktop = Atspi.get_desktop(0)
    for i in range(desktop.get_child_count()):
        try:
            app = desktop.get_child_at_index(i)
            if app is None or app.get_process_id() != pid:
                continue
            for j in range(app.get_child_count()):
                window = app.get_child_at_index(j)
                if window is not None and (driver.showing(window) or
                        window.get_role() in (Atspi.Role.DIALOG, Atspi.Role.ALERT)):
                    yield window
        except Exception:
            continue

if command == "windows":
    for window in windows():
        try:
            print(window.get_name() or "(untitled)")
        except Exception:
            pass
    sys.exit(0)

if command == "labels":
    for window in windows():
        for node in driver.walk(window):
            try:
                if node.get_role() == Atspi.Role.LABEL:
                    text = node.get_name() or ""
                    if not text and node.get_text_iface() is not None:
                        iface = node.get_text_iface()
                        text = iface.get_text(0, iface.get_character_count())
                    if text:
                        print(text)
            except Exception:
                continue
    sys.exit(0)

for window in windows():
    for node in driver.walk(window):
        try:
            if (node.get_role() == Atspi.Role.PUSH_BUTTON and node.get_name() == sys.argv[4]
                    and node.get_action_iface().do_action(0)):
                sys.exit(0)
        except Exception:
            continue
sys.exit(1)
`;

async function tree(...args) {
  const { stdout } = await run('/usr/bin/python3', ['-c', TREE_SCRIPT, join(here, 'atspi-driver.py'),
                                                    ...args.map(String)], { timeout: 30000 });
  return stdout;
}

/** The titles of the showing windows of process @pid. */
export async function windowsOf(pid) {
  return (await tree('windows', pid)).split('\n').filter(Boolean);
}

/** The text of every label in the showing windows of process @pid. */
export async function labelsOf(pid) {
  return (await tree('labels', pid)).split('\n').filter(Boolean);
}

/** Presses the button named @name in a window of process @pid, as a person would. */
export async function pressIn(pid, name, timeoutMs = 15000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await tree('press', pid, name);
      return;
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`no button named ${name} in ${pid}: ${err.message}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
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
  exited.then(() => { gone = true; });
  return {
    pid: child.pid,
    port,
    log,
    exited,
    alive: () => !gone,
    async stop() {
      try { process.kill(-child.pid, 'SIGTERM'); } catch { /* already gone */ }
      await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
      try { process.kill(-child.pid, 'SIGKILL'); } catch { /* already gone */ }
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
