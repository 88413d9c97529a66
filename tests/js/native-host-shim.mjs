// SPDX-License-Identifier: GPL-3.0-or-later
// `chrome.runtime.connectNative` as Chrome implements it on Linux, for Node: it starts the real,
// built chaperone-native-host with the caller's origin as argv[1] (and the browser's environment),
// frames messages as Chrome does (a 4-byte native-order length, then JSON), and reports the host's
// end through onDisconnect with runtime.lastError set during the call. A port the caller
// disconnects gets no onDisconnect, as in Chrome. Used by the ext-native-*.test.mjs files to run
// the extension's own transport code against the real host and the real engine.

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

import { ENGINE_PATH } from './engine-harness.mjs';

export const HOST_NAME = 'io.github.chaperone.native';

/** The built host: CHAPERONE_NATIVE_HOST, else beside the engine harness in the build tree. */
export const NATIVE_HOST_PATH = process.env.CHAPERONE_NATIVE_HOST
  ? resolve(process.env.CHAPERONE_NATIVE_HOST)
  : ENGINE_PATH ? resolve(dirname(ENGINE_PATH), '..', 'native-host', 'chaperone-native-host') : null;

export function nativeHostWhyNot() {
  if (!NATIVE_HOST_PATH) return 'neither CHAPERONE_NATIVE_HOST nor CHAPERONE_TEST_ENGINE is set';
  if (!existsSync(NATIVE_HOST_PATH)) return `no native host at ${NATIVE_HOST_PATH} (ninja -C build)`;
  return null;
}

const running = new Set();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

function listeners() {
  const list = [];
  return { list, addListener: (fn) => list.push(fn), removeListener: (fn) => list.splice(list.indexOf(fn), 1) };
}

/**
 * A stand-in for chrome.runtime. `origin` is what the browser would vouch for
 * (`chrome-extension://<id>`; the trailing slash is added as Chrome adds it); `env` is the
 * browser's environment (CHAPERONE_BRIDGE_PORT for a test). `ports` lists every port made.
 */
export function nativeRuntime({ origin, env = {}, hostPath = NATIVE_HOST_PATH, allowed = [HOST_NAME] }) {
  const runtime = {
    lastError: undefined,
    ports: [],
    connectNative(name) {
      const onMessage = listeners();
      const onDisconnect = listeners();
      const port = { name, onMessage, onDisconnect, posted: [], disconnected: false, child: null };
      runtime.ports.push(port);
      const report = (message) => {
        if (port.disconnected) return;
        port.disconnected = true;
        runtime.lastError = { message };
        try {
          for (const fn of [...onDisconnect.list]) fn(port);
        } finally {
          runtime.lastError = undefined;
        }
      };
      if (!allowed.includes(name)) {
        setImmediate(() => report('Specified native messaging host not found.'));
        port.postMessage = () => {};
        port.disconnect = () => { port.disconnected = true; };
        return port;
      }

      const child = spawn(hostPath, [`${origin}/`], {
        env: { ...process.env, CHAPERONE_BRIDGE_PORT: '', ...env },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      port.child = child;
      running.add(child);
      port.stderr = '';
      child.stderr.on('data', (d) => { port.stderr = (port.stderr + d).slice(-4000); });
      child.stdin.on('error', () => {}); // the host may be gone first; its exit says so
      let buffered = Buffer.alloc(0);
      child.stdout.on('data', (data) => {
        buffered = Buffer.concat([buffered, data]);
        while (buffered.length >= 4) {
          const len = buffered.readUInt32LE(0);
          if (buffered.length < 4 + len) break;
          const message = JSON.parse(buffered.subarray(4, 4 + len).toString('utf8'));
          buffered = buffered.subarray(4 + len);
          if (!port.disconnected) for (const fn of [...onMessage.list]) fn(message, port);
        }
      });
      child.on('exit', () => running.delete(child));
      // Chrome reports the end once the host's stdout is closed and it has exited.
      child.stdout.on('close', () => report('Native host has exited.'));
      child.on('error', (err) => report(`Failed to start native messaging host. (${err.message})`));

      port.postMessage = (message) => {
        if (port.disconnected) throw new Error('Attempting to use a disconnected port object');
        port.posted.push(message);
        const body = Buffer.from(JSON.stringify(message), 'utf8');
        const head = Buffer.alloc(4);
        head.writeUInt32LE(body.length, 0);
        child.stdin.write(Buffer.concat([head, body]));
      };
      port.disconnect = () => {
        port.disconnected = true;
        child.stdin.end();
      };
      return port;
    },
  };
  return runtime;
}

/** Resolves once every host started by `runtime` has exited. */
export function hostsExited(runtime) {
  return Promise.all(runtime.ports.filter((p) => p.child).map((p) => (
    p.child.exitCode !== null || p.child.signalCode !== null
      ? null : new Promise((r) => p.child.once('exit', r)))));
}
