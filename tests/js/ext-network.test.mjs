// SPDX-License-Identifier: GPL-3.0-or-later
// The worker's per-tab request count for settling (extension/lib/network.js) over a fake
// chrome.webRequest, and the router handing it to browser.node.action. The page side (DOM quiet +
// this count) runs in real Chromium in ext-page-agent-settle.test.mjs.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { COUNTED_TYPES, NetworkWatch, SETTLE_PORT } from '../../extension/lib/network.js';
import { Router } from '../../extension/lib/router.js';
import { EXTENSION_ID, fakeClock, inertTimers, makeFakeChrome } from './fake-chrome.mjs';

/** chrome.webRequest's three events, remembering each listener's filter. */
function fakeWebRequest() {
  const ev = () => {
    const listeners = new Map();
    return {
      listeners,
      addListener: (fn, filter) => listeners.set(fn, filter),
      removeListener: (fn) => listeners.delete(fn),
      fire: (d) => {
        for (const [fn, filter] of [...listeners]) {
          if (filter?.tabId !== undefined && filter.tabId !== d.tabId) continue;
          if (filter?.types && !filter.types.includes(d.type)) continue;
          fn(d);
        }
      },
    };
  };
  return { onBeforeRequest: ev(), onCompleted: ev(), onErrorOccurred: ev() };
}

function fakePort({ tabId = 1, id = EXTENSION_ID, name = SETTLE_PORT } = {}) {
  const heard = [];
  const onDisconnect = new Set();
  const port = {
    name, sender: { id, tab: tabId === null ? undefined : { id: tabId }, frameId: 0 },
    heard, disconnected: false,
    postMessage: (m) => { if (port.disconnected) throw new Error('disconnected'); heard.push(m); },
    disconnect: () => { port.disconnected = true; },
    onDisconnect: { addListener: (fn) => onDisconnect.add(fn) },
    pageLeaves: () => { for (const fn of onDisconnect) fn(); },
  };
  return port;
}

// Each request its own URL (the same URL again is the tab's polling), dated as webRequest does.
const req = (requestId, tabId = 1, type = 'xmlhttprequest', url = `https://a.example/${requestId}`) =>
  ({ requestId, tabId, type, url, method: 'GET', timeStamp: 1000 });
const heardCounts = (port) => port.heard.map((m) => m.inflight);

test('the manifest asks for webRequest (non-blocking) and nothing that blocks', () => {
  const manifest = JSON.parse(readFileSync(new URL('../../extension/manifest.json', import.meta.url), 'utf8'));
  assert.ok(manifest.permissions.includes('webRequest'));
  assert.ok(!manifest.permissions.includes('webRequestBlocking'), 'MV3 does not allow it, and settling only counts');
  assert.deepEqual([...manifest.permissions].sort(),
    ['alarms', 'cookies', 'nativeMessaging', 'scripting', 'storage', 'tabs', 'webNavigation', 'webRequest']);
});

test('a watched tab: its new requests counted, others ignored; listeners only while watching', () => {
  const webRequest = fakeWebRequest();
  const net = new NetworkWatch({ chrome: { runtime: { id: EXTENSION_ID }, webRequest }, lingerMs: 0, tickMs: 0 });
  assert.equal(net.available, true);
  assert.equal(webRequest.onBeforeRequest.listeners.size, 0, 'nothing listens before an action');

  webRequest.onBeforeRequest.fire(req('early'));            // before the watch: not the action's
  const release = net.watch(1);
  const [filter] = [...webRequest.onBeforeRequest.listeners.values()];
  assert.equal(filter.tabId, 1, 'Chrome filters by tab: other tabs never reach the worker');
  assert.deepEqual(filter.types, [...COUNTED_TYPES]);
  const port = fakePort();
  assert.equal(net.connect(port), true);
  assert.deepEqual(port.heard, [{ inflight: 0, watching: true, requests: [] }]);

  webRequest.onBeforeRequest.fire(req('a'));
  webRequest.onBeforeRequest.fire(req('a'));                // a redirect keeps its id
  webRequest.onBeforeRequest.fire(req('b', 1, 'script'));
  webRequest.onBeforeRequest.fire(req('c', 2));             // another tab
  webRequest.onBeforeRequest.fire(req('d', 1, 'main_frame')); // a navigation: the page handles it
  webRequest.onBeforeRequest.fire(req('e', 1, 'websocket'));
  assert.equal(net.inflight(1), 2);
  assert.deepEqual(port.heard.at(-1).requests.map(([, at]) => at), [1000, 1000], 'each with the time it started');
  webRequest.onCompleted.fire(req('early'));                // unknown id: no change
  webRequest.onCompleted.fire(req('a'));
  webRequest.onErrorOccurred.fire(req('b'));
  assert.deepEqual(heardCounts(port), [0, 1, 2, 1, 0]);

  // Two actions on one tab share the listeners; the last one out removes them.
  const again = net.watch(1);
  assert.equal(webRequest.onBeforeRequest.listeners.size, 1);
  release();
  release();                                                // twice is harmless
  assert.equal(webRequest.onBeforeRequest.listeners.size, 1);
  again();
  for (const e of Object.values(webRequest)) assert.equal(e.listeners.size, 0);
  assert.deepEqual(port.heard.at(-1), { inflight: 0, watching: false });
  assert.equal(port.disconnected, true);
});

test('ports: only our own content scripts, only their own tab; none when no action settles', () => {
  const webRequest = fakeWebRequest();
  const net = new NetworkWatch({ chrome: { runtime: { id: EXTENSION_ID }, webRequest }, tickMs: 0 });
  const idle = fakePort();
  net.connect(idle);
  assert.deepEqual(idle.heard, [{ inflight: 0, watching: false }]);
  assert.equal(idle.disconnected, true);

  const release = net.watch(1);
  webRequest.onBeforeRequest.fire(req('a', 1));
  const foreign = fakePort({ id: 'abcdefghijklmnopabcdefghijklmnop' });
  net.connect(foreign);
  assert.deepEqual(foreign.heard, []);
  assert.equal(foreign.disconnected, true);
  const tabless = fakePort({ tabId: null });
  net.connect(tabless);
  assert.deepEqual(tabless.heard, []);
  const other = fakePort({ tabId: 2 });
  net.connect(other);
  assert.deepEqual(other.heard, [{ inflight: 0, watching: false }], 'tab 2 does not hear tab 1');
  assert.equal(net.connect(fakePort({ name: 'something.else' })), false, 'not ours to take');

  const mine = fakePort();
  net.connect(mine);
  assert.deepEqual(heardCounts(mine), [1]);
  mine.pageLeaves();
  webRequest.onCompleted.fire(req('a', 1));
  assert.equal(mine.heard.length, 1, 'a port that left hears nothing more');
  release();
  assert.equal(new NetworkWatch({ chrome: {} }).available, false);
  assert.equal(typeof new NetworkWatch({ chrome: {} }).watch(1), 'function', 'without webRequest: a no-op');
});

test('browser.node.action: the tab is watched from before the page acts until it answered', async () => {
  const webRequest = fakeWebRequest();
  let during = null;
  const fake = makeFakeChrome({
    pageRun: async (op, args) => {
      if (op === 'context') {
        return { ok: true, value: { url: 'https://a.example/', title: 'A', text: '', headings: [], forms: [],
          nodes: [{ ref: 'e1', role: 'button', name: 'Load' }], iframes: [], diff: null } };
      }
      if (op === 'action') {
        // The page's request, started by the click, is seen while the page settles.
        webRequest.onBeforeRequest.fire(req('r1', 1));
        during = { net: args.net, listeners: webRequest.onBeforeRequest.listeners.size, inflight: router.network.inflight(1) };
        webRequest.onCompleted.fire(req('r1', 1));
        return { ok: true, value: { action: args.action, ref: args.ref, done: true,
          changes: { added: 2, removed: 0, settled: true, settleMs: 120 } } };
      }
      return { ok: true, value: { shown: true } };
    },
  });
  fake.chrome.webRequest = webRequest;
  fake.addTab({ id: 1, url: 'https://a.example/', title: 'A', active: true });
  const router = new Router({ chrome: fake.chrome, now: fakeClock(), timers: inertTimers() });
  await router.load();
  const reply = await router.onPopupMessage({ type: 'popup.createGrant', tabs: [{ tabId: 1 }], preset: 'control', label: 'T' });
  assert.equal(reply.ok, true);
  const ctx = await router.handle('browser.context', { tabId: 1 });
  const r = await router.handle('browser.node.action', { ref: `${ctx.captureId}:e1`, action: 'click' });
  assert.deepEqual(during, { net: true, listeners: 1, inflight: 1 });
  assert.equal(r.changes.settled, true);
  assert.equal(router.network.watching(1), false, 'released once the page answered');
  // The listeners linger a while for the next action (inert timers here: they never fire).
  assert.equal(webRequest.onBeforeRequest.listeners.size, 1);

  // A failing action releases the watch too.
  fake.chrome.scripting.executeScript = async () => { throw new Error('Frame with ID 0 was removed.'); };
  await assert.rejects(router.handle('browser.node.action', { ref: `${ctx.captureId}:e1`, action: 'click' }));
  assert.equal(router.network.watching(1), false);
  assert.equal(webRequest.onBeforeRequest.listeners.size, 1);
});

test('between actions the lingering listeners count nothing, and they go after the linger', () => {
  const webRequest = fakeWebRequest();
  const timers = inertTimers();
  const net = new NetworkWatch({ chrome: { runtime: { id: EXTENSION_ID }, webRequest }, timers, lingerMs: 15000, tickMs: 0 });
  const heard = [];
  let release = net.watch(1);
  const unlisten = net.listen(1, (m) => heard.push(m));
  webRequest.onBeforeRequest.fire(req('a'));
  assert.equal(net.inflight(1), 1);
  release();
  assert.deepEqual(heard.at(-1), { inflight: 0, watching: false }, 'a listener hears the end of the watch');
  unlisten();
  assert.equal(webRequest.onBeforeRequest.listeners.size, 1, 'still registered while lingering');
  assert.equal(timers.pending.size, 1);
  // Between actions: nothing counted, and no listener added.
  webRequest.onBeforeRequest.fire(req('between'));
  assert.equal(net.inflight(1), 0);
  assert.equal(net.watching(1), false);
  assert.deepEqual(net.listen(1, () => assert.fail('not watching')) instanceof Function, true);
  webRequest.onBeforeRequest.fire(req('between2'));
  // The next action reuses the listeners (the linger is cancelled) and counts from empty.
  release = net.watch(1);
  assert.equal(timers.pending.size, 0, 'the linger timer was cleared');
  assert.equal(net.inflight(1), 0);
  webRequest.onCompleted.fire(req('between'));             // unknown to this action: no change
  webRequest.onBeforeRequest.fire(req('b'));
  assert.equal(net.inflight(1), 1);
  release();
  // The linger ends: the listeners go.
  const [[, { fn }]] = [...timers.pending];
  fn();
  for (const e of Object.values(webRequest)) assert.equal(e.listeners.size, 0);
  assert.equal(net.watching(1), false);
});

test('polling, event streams and the worker\u2019s clock', () => {
  const webRequest = fakeWebRequest();
  webRequest.onResponseStarted = fakeWebRequest().onCompleted;
  const timers = inertTimers();
  const net = new NetworkWatch({ chrome: { runtime: { id: EXTENSION_ID }, webRequest }, timers, lingerMs: 15000, tickMs: 8 });
  let release = net.watch(1);
  const heard = [];
  net.listen(1, (m) => heard.push(m));
  // The worker's clock: a tick while someone listens (the inert timers fire only when told).
  const tick = [...timers.pending].find(([, t]) => t.ms === 8);
  assert.ok(tick, 'a tick is due while the action settles');
  timers.pending.delete(tick[0]);
  tick[1].fn();
  assert.deepEqual(heard.at(-1), { inflight: 0, watching: true, requests: [], tick: 1 });

  // An event stream is counted until its headers say what it is.
  webRequest.onBeforeRequest.fire(req('sse', 1, 'other'));
  assert.equal(net.inflight(1), 1);
  webRequest.onResponseStarted.fire({ ...req('sse', 1, 'other'), responseHeaders: [{ name: 'Content-Type', value: 'text/event-stream' }] });
  assert.equal(net.inflight(1), 0, 'a stream never ends: not waited for');
  // The same request twice in one action is the page's schedule; so is one it makes between actions.
  webRequest.onBeforeRequest.fire(req('p1', 1, 'xmlhttprequest', 'https://a.example/poll'));
  webRequest.onCompleted.fire(req('p1'));
  webRequest.onBeforeRequest.fire(req('p2', 1, 'xmlhttprequest', 'https://a.example/poll'));
  assert.equal(net.inflight(1), 0);
  release();
  assert.equal([...timers.pending].some(([, t]) => t.ms === 8), false, 'no clock once nobody settles');
  webRequest.onBeforeRequest.fire(req('i1', 1, 'xmlhttprequest', 'https://a.example/status'));
  release = net.watch(1);
  webRequest.onBeforeRequest.fire(req('i2', 1, 'xmlhttprequest', 'https://a.example/status'));
  webRequest.onBeforeRequest.fire(req('new', 1, 'xmlhttprequest', 'https://a.example/save'));
  assert.equal(net.inflight(1), 1, 'only the request that is new to the tab');
  release();
});
