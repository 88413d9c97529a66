// SPDX-License-Identifier: GPL-3.0-or-later
// The app is not running when the agent starts: the relay starts it by D-Bus activation, and the
// MCP client's connect succeeds once the app listens; with no way to start it, the client hears
// an error at once instead of hanging. Each case has a private session bus of its own (no test can
// start or reach a real Chaperone), and the activated app private XDG folders.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';

import { APP, agentSocketIn, whyNot } from './app-harness.mjs';
import * as H from './mcp-harness.mjs';
import { sanitizerFinding } from '../lib/sanitizer.mjs';
import { until } from '../lib/until.mjs';

function dbusWhyNot() {
  try {
    execFileSync('dbus-daemon', ['--version'], { stdio: 'ignore' });
    return null;
  } catch {
    return 'dbus-daemon is not installed (Debian: dbus)';
  }
}

const relaySkip = H.mcpWhyNot() ?? dbusWhyNot() ?? false;
const appSkip = relaySkip || whyNot() || false;
if (relaySkip) console.log(`# skipped: ${relaySkip}`);
else if (appSkip) console.log(`# activation of the real app skipped: ${appSkip}`);

const APP_ID = 'io.github.chaperone.Chaperone';

async function privateHome() {
  const home = await mkdtemp(join(tmpdir(), 'chaperone-activation-'));
  const runtimeDir = join(home, 'run');
  await mkdir(runtimeDir, { mode: 0o700 });
  await chmod(runtimeDir, 0o700);
  return { home, runtimeDir };
}

const quote = (s) => `'${String(s).replaceAll("'", "'\\''")}'`;

test('the app is not running: the relay starts it by D-Bus activation and the SDK connects', { skip: appSkip, timeout: 90000 }, async () => {
  const { home, runtimeDir } = await privateHome();
  const services = join(home, 'services');
  await mkdir(services);
  const pidFile = join(home, 'app.pid');
  // What the installed service file does (Exec=chaperone --gapplication-service), with this
  // build's app, this display and private folders. The bus gives the started service its own
  // address as DBUS_STARTER_ADDRESS; GApplication registers on DBUS_SESSION_BUS_ADDRESS.
  const launcher = join(home, 'start-chaperone.sh');
  const schemaDir = process.env.GSETTINGS_SCHEMA_DIR ?? join(dirname(dirname(dirname(APP))), 'data');
  await writeFile(launcher, `#!/bin/sh
echo $$ > ${quote(pidFile)}
export DBUS_SESSION_BUS_ADDRESS="$DBUS_STARTER_ADDRESS"
export DISPLAY=${quote(process.env.DISPLAY)}
export GDK_BACKEND=x11 NO_AT_BRIDGE=1 GSETTINGS_BACKEND=memory LANGUAGE=en LC_ALL=C.UTF-8
export GSETTINGS_SCHEMA_DIR=${quote(schemaDir)}
export XDG_RUNTIME_DIR=${quote(runtimeDir)}
export XDG_DATA_HOME=${quote(join(home, 'data'))} XDG_CONFIG_HOME=${quote(join(home, 'config'))} XDG_CACHE_HOME=${quote(join(home, 'cache'))}
exec ${quote(resolve(APP))} --gapplication-service --bridge-port 0 >> ${quote(join(home, 'app.log'))} 2>&1
`);
  await chmod(launcher, 0o755);
  await writeFile(join(services, `${APP_ID}.service`), `[D-BUS Service]\nName=${APP_ID}\nExec=${launcher}\n`);
  const bus = await H.startPrivateBus({ serviceDir: services });
  let agent = null;
  try {
    assert.equal(existsSync(agentSocketIn(runtimeDir)), false, 'nothing listens before');
    const started = Date.now();
    agent = await H.connectAgent({
      name: 'mcp-e2e-activation', runtimeDir,
      env: { DBUS_SESSION_BUS_ADDRESS: bus.address, CHAPERONE_MCP_START_TIMEOUT_MS: 60000 },
      timeoutMs: 70000,
    });
    console.log(`# connected ${Date.now() - started} ms after the relay started (the app was started for it)`);
    assert.ok(existsSync(pidFile), 'the bus ran the service file');
    assert.ok(existsSync(agentSocketIn(runtimeDir)), 'the started app listens in its runtime folder');
    const { tools } = await agent.client.listTools();
    for (const name of H.CORE_TOOLS) assert.ok(tools.some((t) => t.name === name), name);
    const tabs = await agent.call('browser_tabs');
    assert.ok(!tabs.isError || typeof H.errorCode(tabs) === 'string', JSON.stringify(tabs));
  } catch (err) {
    console.log(await readFile(join(home, 'app.log'), 'utf8').catch(() => '(no app log)'));
    if (agent) console.log(agent.stderr());
    if (err.relayStderr) console.log(err.relayStderr);
    throw err;
  } finally {
    await agent?.close();
    const pid = Number(await readFile(pidFile, 'utf8').catch(() => '0'));
    let reported = null;
    if (pid > 0) {
      // Not our child (the bus started it): nothing tells us when it ends, so the shared until()
      // looks; SIGKILL if SIGTERM was not enough (teardown only).
      try { process.kill(pid, 'SIGTERM'); } catch { /* gone */ }
      const gone = () => { try { process.kill(pid, 0); return false; } catch { return true; } };
      await until(gone, { timeout: 15000, what: 'the activated app to end on SIGTERM' }).catch(() => {});
      try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
      // What a sanitizer said as it ended (under LeakSanitizer: a leak at exit) fails the test.
      const log = await readFile(join(home, 'app.log'), 'utf8').catch(() => '');
      reported = sanitizerFinding(log)?.slice(0, 6000) ?? null;
    }
    await bus.stop();
    await rm(home, { recursive: true, force: true });
    if (reported) throw new Error(`the activated app reported at exit:\n${reported}`);
  }
});

/** Connects with no app and no way to start one; resolves with the error and how long it took. */
async function failedConnect(env) {
  const { home, runtimeDir } = await privateHome();
  const started = Date.now();
  try {
    const agent = await H.connectAgent({ name: 'mcp-e2e-nothing', runtimeDir, env, timeoutMs: 30000 });
    await agent.close();
    return { error: null, ms: Date.now() - started };
  } catch (error) {
    return { error, ms: Date.now() - started };
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

test('no app and a bus that cannot start one: the SDK gets an error saying so', { skip: relaySkip, timeout: 30000 }, async () => {
  const bus = await H.startPrivateBus(); // an empty service directory
  try {
    const { error, ms } = await failedConnect({ DBUS_SESSION_BUS_ADDRESS: bus.address });
    assert.ok(error, 'connect fails');
    console.log(`# the failed connect took ${ms} ms`);
    assert.match(String(error.message), /not running|could not be started/i, String(error.message));
  } finally {
    await bus.stop();
  }
});

test('no app and no session bus: the SDK gets an error saying so', { skip: relaySkip, timeout: 30000 }, async () => {
  const { error, ms } = await failedConnect({ DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/chaperone-test-bus' });
  assert.ok(error, 'connect fails');
  console.log(`# the failed connect took ${ms} ms`);
  assert.match(String(error.message), /not running|could not be started|bus/i, String(error.message));
});
