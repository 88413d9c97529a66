// SPDX-License-Identifier: GPL-3.0-or-later
// The road page ops take (extension/lib/page-bridge.js): the page agent's own port, bound to the
// documentId Chrome names for it, with executeScript when no port is open for that document.
// The page side of the port runs in real Chromium in the e2e tests (extension-*.test.mjs).

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { NetworkWatch } from '../../extension/lib/network.js';
import { PAGE_FILES, PAGE_PORT, PageBridge } from '../../extension/lib/page-bridge.js';
import { ChaperoneError } from '../../extension/lib/scopes.js';
import { EXTENSION_ID, inertTimers } from './fake-chrome.mjs';

/** A page agent's port as the worker sees it; `answer(m)` is how the fake page answers an op. */
function pagePort({ tabId = 1, documentId = 'DOC1', id = EXTENSION_ID, name = PAGE_PORT, answer } = {}) {
  const onMessage = new Set();
  const onDisconnect = new Set();
  const port = {
    name, sender: { id, tab: { id: tabId }, frameId: 0, documentId },
    got: [], disconnected: false,
    postMessage(m) {
      if (port.disconnected) throw new Error('Attempting to use a disconnected port object');
      port.got.push(structuredClone(m));
      if (answer) queueMicrotask(() => answer(m, port));
    },
    disconnect() { port.disconnected = true; },
    onMessage: { addListener: (fn) => onMessage.add(fn) },
    onDisconnect: { addListener: (fn) => onDisconnect.add(fn) },
    fromPage(m) { for (const fn of onMessage) fn(structuredClone(m)); },
    pageGone() { port.disconnected = true; for (const fn of onDisconnect) fn(); },
  };
  return port;
}

function fakeChrome() {
  const calls = [];
  return {
    calls,
    runtime: { id: EXTENSION_ID },
    scripting: {
      async executeScript({ target, files, args }) {
        calls.push({ target, files, op: args?.[0] });
        if (files) return [{ result: null }];
        return [{ result: { ok: true, value: { via: 'executeScript', op: args[0] } } }];
      },
    },
  };
}

const okAnswer = (m, port) => { if (m.op) port.fromPage({ id: m.id, reply: { ok: true, value: { via: 'port', op: m.op, args: m.args } } }); };

test('the agent files: snapshot core, the outward classifier, the pill and banner, then the agent', () => {
  assert.deepEqual([...PAGE_FILES],
    ['content/snapshot-core.js', 'content/outward.js', 'content/page-ui.js', 'content/page-common.js',
      'content/page-read.js', 'content/page-wait.js', 'content/page-shot.js', 'content/page-settle.js',
      'content/page-holds.js', 'content/page-input.js', 'content/page-dialogs.js', 'content/page-act.js',
      'content/page-pointer.js', 'content/page-agent.js']);
});

test('an open port for the exact document carries the op; any other document goes by executeScript', async () => {
  const chrome = fakeChrome();
  const bridge = new PageBridge({ chrome });
  const where = { tabId: 1, frameId: 0, documentId: 'DOC1' };
  assert.equal((await bridge.run(where, 'pill', { show: true })).via, 'executeScript', 'no port yet');

  const port = pagePort({ answer: okAnswer });
  assert.equal(bridge.connect(port), true);
  assert.equal(bridge.hasPort('DOC1'), true);
  const v = await bridge.run(where, 'inspect', { ref: 'e1' });
  assert.deepEqual(v, { via: 'port', op: 'inspect', args: { ref: 'e1' } });
  assert.equal(chrome.calls.length, 1, 'no injection for an op over the port');

  // Another document (the tab navigated), another tab, or no documentId: never the port.
  assert.equal((await bridge.run({ tabId: 1, frameId: 0, documentId: 'DOC2' }, 'pill', {})).via, 'executeScript');
  assert.equal((await bridge.run({ tabId: 2, frameId: 0, documentId: 'DOC1' }, 'pill', {})).via, 'executeScript');
  assert.equal((await bridge.run({ tabId: 1, frameId: 0 }, 'pill', {})).via, 'executeScript');
  assert.deepEqual(chrome.calls.at(-1).target, { tabId: 1, frameIds: [0] });

  // The page's own error codes come through as on the other road.
  port.postMessage = (m) => queueMicrotask(() => port.fromPage({ id: m.id, reply: { ok: false, error: { code: 'stale_node', message: 'old ref' } } }));
  await assert.rejects(bridge.run(where, 'inspect', {}), (e) => e instanceof ChaperoneError && e.code === 'stale_node');
});

test('ports are taken only from our own content scripts with a documentId; others are left to the caller', () => {
  const bridge = new PageBridge({ chrome: fakeChrome() });
  assert.equal(bridge.connect(pagePort({ name: 'chaperone.settle' })), false, 'not a page port');
  const foreign = pagePort({ id: 'another-extension' });
  assert.equal(bridge.connect(foreign), true);
  assert.equal(foreign.disconnected, true);
  const noDoc = pagePort({ documentId: null });
  assert.equal(bridge.connect(noDoc), true);
  assert.equal(noDoc.disconnected, true);
  assert.equal(bridge.hasPort('DOC1'), false);
});

test('a port that goes (navigation, back/forward cache) fails its pending ops with stale_document', async () => {
  const chrome = fakeChrome();
  const bridge = new PageBridge({ chrome });
  const port = pagePort();                                  // never answers
  bridge.connect(port);
  const where = { tabId: 1, frameId: 0, documentId: 'DOC1' };
  const pending = bridge.run(where, 'action', { action: 'click' });
  await null;
  port.pageGone();
  await assert.rejects(pending, (e) => e.code === 'stale_document');
  assert.equal(bridge.hasPort('DOC1'), false);
  assert.equal((await bridge.run(where, 'pill', {})).via, 'executeScript', 'then by executeScript again');
  // A late answer on the dead port changes nothing.
  port.fromPage({ id: 1, reply: { ok: true, value: {} } });
});

test('Stop: an op over the port rejects at once with the abort\u2019s reason', async () => {
  const bridge = new PageBridge({ chrome: fakeChrome() });
  const port = pagePort();
  bridge.connect(port);
  const ac = new AbortController();
  const pending = bridge.run({ tabId: 1, frameId: 0, documentId: 'DOC1' }, 'action', {}, { signal: ac.signal });
  ac.abort(new ChaperoneError('stopped', 'The person stopped the agent'));
  await assert.rejects(pending, (e) => e.code === 'stopped');
  // The page's late answer is dropped.
  port.fromPage({ id: port.got[0].id, reply: { ok: true, value: {} } });
});

test('an action over the port hears its tab\u2019s request count there, and a sync gets the count as of now', async () => {
  const webRequest = (() => {
    const ev = () => { const l = new Map(); return { l, addListener: (fn, f) => l.set(fn, f), removeListener: (fn) => l.delete(fn),
      fire: (d) => { for (const fn of l.keys()) fn(d); } }; };
    return { onBeforeRequest: ev(), onCompleted: ev(), onErrorOccurred: ev() };
  })();
  const network = new NetworkWatch({ chrome: { runtime: { id: EXTENSION_ID }, webRequest }, timers: inertTimers() });
  const bridge = new PageBridge({ chrome: fakeChrome() });
  let finish;
  const port = pagePort({ answer: (m, p) => { if (m.op) finish = () => p.fromPage({ id: m.id, reply: { ok: true, value: { done: true } } }); } });
  bridge.connect(port);
  const release = network.watch(1);
  const req = (requestId) => ({ requestId, tabId: 1, type: 'xmlhttprequest', url: `https://a.example/${requestId}`, timeStamp: 5 });
  // The page hears the requests with the time each started (page-settle.js dates them against its act).
  const dated = (m) => (m.net?.requests ? { ...m, net: { ...m.net, requests: m.net.requests.map(([, at]) => at) } } : m);
  webRequest.onBeforeRequest.fire(req('before-op'));
  const pending = bridge.run({ tabId: 1, frameId: 0, documentId: 'DOC1' }, 'action', { action: 'click', net: true }, { network });
  await null;
  const id = port.got[0].id;
  assert.equal(port.got[0].args.inflight, 1, 'the count so far goes with the op');
  webRequest.onBeforeRequest.fire(req('by-the-click'));
  assert.deepEqual(dated(port.got.at(-1)), { id, net: { inflight: 2, watching: true, requests: [5, 5] } });
  port.fromPage({ id, sync: 1 });
  assert.deepEqual(port.got.at(-1), { id, synced: 1, net: { inflight: 2, watching: true } });
  webRequest.onCompleted.fire(req('by-the-click'));
  assert.deepEqual(dated(port.got.at(-1)), { id, net: { inflight: 1, watching: true, requests: [5] } });
  await null;
  finish();
  assert.deepEqual(await pending, { done: true });
  const heard = port.got.length;
  webRequest.onCompleted.fire(req('before-op'));
  assert.equal(port.got.length, heard, 'nothing more once the op answered');
  release();
});
