// SPDX-License-Identifier: GPL-3.0-or-later
// Per-tab network activity, for settling after an action (browser.node.action). The page agent
// waits for the requests the action itself started (page-settle.js decides which, by when they
// started); a content script cannot see a request start (Resource Timing only reports
// completions), so the worker watches them with non-blocking chrome.webRequest and tells the page:
// over the page's own port when the op travelled on it (lib/page-bridge.js, listen()), else over a
// settle port the page opens for the action (connect()).
//
// What the page hears, on every change: {inflight, watching, requests: [[n, startedAt], …]} —
// the requests in flight that may be the action's, each as a small number and the time it started
// (the browser's clock, ms since the epoch, as the page's Date.now()), so the page can tell the
// ones its action started from the ones that merely ran at the same time. No URL leaves this file.
// Not counted at all: requests already in flight when the action began (a page's long poll from
// before is not the action's doing), navigations (the page agent ends its wait when the document
// navigates away), WebSockets, beacons, CSP reports and media streams, which may never end; an
// event stream (text/event-stream) once its headers say so; and a request the tab makes on its own
// schedule (polling): one whose method and URL the tab also requested while no action was
// settling there, or twice during one action.
//
// The worker's clock: while an action settles, every TICK_MS the page hears {tick} as well. A
// hidden tab's own timers fire about once a second (Chromium throttles them); the worker's do
// not, and a port message reaches a hidden tab at once, so the page waits on these instead.
//
// Only around actions: the listeners are added for that tab (RequestFilter.tabId) when an action
// starts, and removed LINGER_MS after the tab's last action answered (adding and removing them
// costs the worker ~1.5 ms of its thread and delays its next IPC answers, on every action of an
// agent working through a form), so the worker is never woken by, and never looks at, the rest of
// the browser's traffic, nor at that tab's once the agent has stopped acting in it. Between
// actions the listeners only note which URLs the tab requests on its own (kept in memory while
// they listen, then dropped); every action counts from an empty set.

export const SETTLE_PORT = 'chaperone.settle';

// webRequest ResourceTypes that count; the rest (main_frame, websocket, ping, csp_report, media)
// do not.
export const COUNTED_TYPES = Object.freeze(['sub_frame', 'stylesheet', 'script', 'image', 'font',
  'object', 'xmlhttprequest', 'other']);
const COUNTED = new Set(COUNTED_TYPES);

/** How long a tab's listeners stay after its last action answered (see above). */
export const LINGER_MS = 15000;

/** The worker's clock for a settling page: how often it hears a tick. */
export const TICK_MS = 4;

/** At most this many requests are listed to the page (the count says the rest). */
const MAX_LISTED = 64;
/** At most this many URLs are remembered per tab for telling polling apart. */
const MAX_KNOWN_URLS = 512;

const keyOf = (d) => `${d.method ?? 'GET'} ${String(d.url ?? '').split('#')[0]}`;

export class NetworkWatch {
  /**
   * @param timers   {setTimeout, clearTimeout} for the linger and the ticks (tests pass fakes)
   * @param lingerMs how long a tab's listeners outlive its last action (0: removed at once)
   * @param tickMs   the worker's clock for the page (0: no ticks)
   */
  constructor({ chrome, timers, lingerMs = LINGER_MS, tickMs = TICK_MS }) {
    this.chrome = chrome;
    this.timers = timers ?? { setTimeout: (fn, ms) => setTimeout(fn, ms), clearTimeout: (id) => clearTimeout(id) };
    this.lingerMs = lingerMs;
    this.tickMs = tickMs;
    // tabId → {users, inflight: Map<requestId, {n, at, key}>, ports, listeners, linger, tick,
    //          idleKeys: Set, actionKeys: Set, remove()}
    this._tabs = new Map();
    this._n = 0;
  }

  /** True when the browser lets this extension observe requests (the "webRequest" permission). */
  get available() {
    const wr = this.chrome?.webRequest;
    return !!(wr?.onBeforeRequest && wr?.onCompleted && wr?.onErrorOccurred);
  }

  /** In-flight requests of a watched tab that may be the action's (0 when not watched). */
  inflight(tabId) {
    const t = this._tabs.get(tabId);
    return t && t.users > 0 ? t.inflight.size : 0;
  }

  /** What the page hears: the count and the requests in flight ([n, startedAt]). */
  state(tabId) {
    const t = this._tabs.get(tabId);
    if (!t || t.users === 0) return { inflight: 0, watching: false };
    return NetworkWatch._state(t);
  }

  static _state(t) {
    const requests = [];
    for (const r of t.inflight.values()) {
      if (requests.length >= MAX_LISTED) break;
      requests.push([r.n, r.at]);
    }
    return { inflight: t.inflight.size, watching: true, requests };
  }

  /** Whether an action in `tabId` is settling now (the listeners may linger after it). */
  watching(tabId) {
    return (this._tabs.get(tabId)?.users ?? 0) > 0;
  }

  /**
   * Starts counting `tabId`'s new requests; returns release(). Watches of one tab share one set
   * of listeners (several actions may settle at once).
   */
  watch(tabId) {
    if (!this.available) return () => {};
    let t = this._tabs.get(tabId);
    if (!t) {
      t = this._listen(tabId);
      this._tabs.set(tabId, t);
    }
    if (t.linger !== null) {
      this.timers.clearTimeout(t.linger);
      t.linger = null;
    }
    if (t.users === 0) {
      t.inflight.clear(); // requests from before this action are not its doing
      t.actionKeys.clear();
      this._startTicks(t);
    }
    t.users += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      t.users -= 1;
      if (t.users > 0) return;
      t.inflight.clear();
      t.actionKeys.clear();
      this._stopTicks(t);
      if (this.lingerMs > 0) {
        t.linger = this.timers.setTimeout(() => {
          t.linger = null;
          if (t.users === 0 && this._tabs.get(tabId) === t) {
            this._tabs.delete(tabId);
            t.remove();
          }
        }, this.lingerMs);
        t.linger?.unref?.();
      } else {
        this._tabs.delete(tabId);
        t.remove();
      }
      for (const port of [...t.ports]) {
        try {
          port.postMessage({ inflight: 0, watching: false });
          port.disconnect();
        } catch {
          // the page is gone
        }
      }
      t.ports.clear();
      for (const fn of [...t.listeners]) fn({ inflight: 0, watching: false });
      t.listeners.clear();
    };
  }

  /**
   * Calls fn({inflight, watching, requests, tick?}) on every change of a watched tab's requests
   * and on every tick, until the returned function is called or the last watch of the tab is
   * released (then once with watching:false).
   */
  listen(tabId, fn) {
    const t = this._tabs.get(tabId);
    if (!t || t.users === 0) return () => {};
    t.listeners.add(fn);
    return () => t.listeners.delete(fn);
  }

  _startTicks(t) {
    if (!(this.tickMs > 0) || t.tick !== null) return;
    let n = 0;
    const tick = () => {
      t.tick = null;
      if (t.users === 0) return;
      // Only when someone hears it: a page that settled and answered needs no clock.
      if (t.listeners.size > 0 || t.ports.size > 0) t.notify(++n);
      t.tick = this.timers.setTimeout(tick, this.tickMs);
    };
    t.tick = this.timers.setTimeout(tick, this.tickMs);
  }

  _stopTicks(t) {
    if (t.tick === null) return;
    this.timers.clearTimeout(t.tick);
    t.tick = null;
  }

  _listen(tabId) {
    const wr = this.chrome.webRequest;
    const t = {
      users: 0, inflight: new Map(), ports: new Set(), listeners: new Set(), linger: null, tick: null,
      idleKeys: new Set(), actionKeys: new Set(), remove: () => {}, notify: () => {},
    };
    t.notify = (tick) => {
      const state = NetworkWatch._state(t);
      if (tick !== undefined) state.tick = tick;
      for (const fn of [...t.listeners]) {
        try {
          fn(state);
        } catch {
          t.listeners.delete(fn);
        }
      }
      for (const port of t.ports) {
        try {
          port.postMessage(state);
        } catch {
          t.ports.delete(port);
        }
      }
    };
    const remember = (set, key) => {
      if (set.size >= MAX_KNOWN_URLS) set.delete(set.values().next().value);
      set.add(key);
    };
    const onStart = (d) => {
      if (!d || d.tabId !== tabId || !COUNTED.has(d.type)) return;
      const key = keyOf(d);
      if (t.users === 0) {
        remember(t.idleKeys, key);    // the tab asks for it on its own: polling, not an action
        return;
      }
      if (t.inflight.has(d.requestId)) return; // a redirect keeps its id
      // The same request again during one action, or one the tab makes between actions too:
      // the page's own schedule (polling), not the action's doing.
      const recurring = t.idleKeys.has(key) || t.actionKeys.has(key);
      remember(t.actionKeys, key);
      if (recurring) return;
      const at = Number.isFinite(d.timeStamp) ? d.timeStamp : Date.now();
      this._n = (this._n + 1) % Number.MAX_SAFE_INTEGER;
      t.inflight.set(d.requestId, { n: this._n, at: Math.round(at * 10) / 10 });
      t.notify();
    };
    const onEnd = (d) => {
      if (!d || d.tabId !== tabId) return;
      if (t.inflight.delete(d.requestId)) t.notify();
    };
    // An event stream never ends: once its headers say so, it is not waited for.
    const onResponse = (d) => {
      if (!d || d.tabId !== tabId || !t.inflight.has(d.requestId)) return;
      const type = (d.responseHeaders ?? []).find((h) => String(h?.name).toLowerCase() === 'content-type');
      if (!/^\s*text\/event-stream/i.test(String(type?.value ?? ''))) return;
      t.inflight.delete(d.requestId);
      t.notify();
    };
    const filter = { urls: ['<all_urls>'], tabId, types: [...COUNTED_TYPES] };
    wr.onBeforeRequest.addListener(onStart, filter);
    wr.onCompleted.addListener(onEnd, filter);
    wr.onErrorOccurred.addListener(onEnd, filter);
    const headers = wr.onResponseStarted;
    if (headers) {
      try {
        headers.addListener(onResponse, filter, ['responseHeaders']);
      } catch {
        headers.addListener(onResponse, filter);   // a fake without extraInfoSpec
      }
    }
    t.remove = () => {
      wr.onBeforeRequest.removeListener(onStart);
      wr.onCompleted.removeListener(onEnd);
      wr.onErrorOccurred.removeListener(onEnd);
      headers?.removeListener(onResponse);
      this._stopTicks(t);
    };
    return t;
  }

  /**
   * A page agent's port (runtime.onConnect). Only our own content scripts can connect (web pages
   * have no externally_connectable); the port hears its own tab's requests and nothing else.
   * Returns true when the port was ours to take.
   */
  connect(port) {
    if (!port || port.name !== SETTLE_PORT) return false;
    const sender = port.sender ?? {};
    const ownId = this.chrome?.runtime?.id;
    const tabId = sender.tab?.id;
    if ((ownId && sender.id !== ownId) || !Number.isSafeInteger(tabId)) {
      try { port.disconnect(); } catch { /* already gone */ }
      return true;
    }
    const t = this._tabs.get(tabId);
    if (!t || t.users === 0) {
      // No action is settling in this tab: nothing to count.
      try {
        port.postMessage({ inflight: 0, watching: false });
        port.disconnect();
      } catch {
        // the page is gone
      }
      return true;
    }
    t.ports.add(port);
    port.onDisconnect?.addListener(() => t.ports.delete(port));
    port.postMessage(NetworkWatch._state(t));
    return true;
  }
}
