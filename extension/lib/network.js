// SPDX-License-Identifier: GPL-3.0-or-later
// Per-tab network activity, for settling after an action (browser.node.action). The page agent
// waits until the DOM has been quiet for a short window AND no request the tab started since the
// action began is still in flight; a content script cannot see a request start (Resource Timing
// only reports completions), so the worker counts them with non-blocking chrome.webRequest and
// tells the page: over the page's own port when the op travelled on it (lib/page-bridge.js,
// listen()), else over a settle port the page opens for the action (connect()).
//
// Only around actions: the listeners are added for that tab (RequestFilter.tabId) when an action
// starts, and removed LINGER_MS after the tab's last action answered (adding and removing them
// costs the worker ~1.5 ms of its thread and delays its next IPC answers, on every action of an
// agent working through a form), so the worker is never woken by, and never looks at, the rest of
// the browser's traffic, nor at that tab's once the agent has stopped acting in it. Between
// actions the listeners ignore what they hear; every action counts from an empty set. Nothing about a request is kept but its id; no URL
// leaves this file. Requests already in flight when the action began are not counted (a page's
// long poll from before is not the action's doing), nor are navigations (the page agent ends its
// wait when the document navigates away), WebSockets, beacons, CSP reports and media streams,
// which may never end.

export const SETTLE_PORT = 'chaperone.settle';

// webRequest ResourceTypes that count; the rest (main_frame, websocket, ping, csp_report, media)
// do not.
export const COUNTED_TYPES = Object.freeze(['sub_frame', 'stylesheet', 'script', 'image', 'font',
  'object', 'xmlhttprequest', 'other']);
const COUNTED = new Set(COUNTED_TYPES);

/** How long a tab's listeners stay after its last action answered (see above). */
export const LINGER_MS = 15000;

export class NetworkWatch {
  /**
   * @param timers   {setTimeout, clearTimeout} for the linger (tests pass fakes)
   * @param lingerMs how long a tab's listeners outlive its last action (0: removed at once)
   */
  constructor({ chrome, timers, lingerMs = LINGER_MS }) {
    this.chrome = chrome;
    this.timers = timers ?? { setTimeout: (fn, ms) => setTimeout(fn, ms), clearTimeout: (id) => clearTimeout(id) };
    this.lingerMs = lingerMs;
    this._tabs = new Map(); // tabId → {users, inflight:Set<requestId>, ports:Set, listeners:Set, remove()}
  }

  /** True when the browser lets this extension observe requests (the "webRequest" permission). */
  get available() {
    const wr = this.chrome?.webRequest;
    return !!(wr?.onBeforeRequest && wr?.onCompleted && wr?.onErrorOccurred);
  }

  /** In-flight requests of a watched tab (0 when not watched). */
  inflight(tabId) {
    const t = this._tabs.get(tabId);
    return t && t.users > 0 ? t.inflight.size : 0;
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
    if (t.users === 0) t.inflight.clear(); // requests from before this action are not its doing
    t.users += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      t.users -= 1;
      if (t.users > 0) return;
      t.inflight.clear();
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
   * Calls fn({inflight, watching}) on every change of a watched tab's count, until the returned
   * function is called or the last watch of the tab is released (then once with watching:false).
   */
  listen(tabId, fn) {
    const t = this._tabs.get(tabId);
    if (!t || t.users === 0) return () => {};
    t.listeners.add(fn);
    return () => t.listeners.delete(fn);
  }

  _listen(tabId) {
    const wr = this.chrome.webRequest;
    const t = { users: 0, inflight: new Set(), ports: new Set(), listeners: new Set(), linger: null, remove: () => {} };
    const notify = () => {
      for (const fn of [...t.listeners]) {
        try {
          fn({ inflight: t.inflight.size, watching: true });
        } catch {
          t.listeners.delete(fn);
        }
      }
      for (const port of t.ports) {
        try {
          port.postMessage({ inflight: t.inflight.size, watching: true });
        } catch {
          t.ports.delete(port);
        }
      }
    };
    const onStart = (d) => {
      if (!d || t.users === 0 || d.tabId !== tabId || !COUNTED.has(d.type)) return;
      if (t.inflight.has(d.requestId)) return; // a redirect keeps its id
      t.inflight.add(d.requestId);
      notify();
    };
    const onEnd = (d) => {
      if (!d || d.tabId !== tabId) return;
      if (t.inflight.delete(d.requestId)) notify();
    };
    const filter = { urls: ['<all_urls>'], tabId, types: [...COUNTED_TYPES] };
    wr.onBeforeRequest.addListener(onStart, filter);
    wr.onCompleted.addListener(onEnd, filter);
    wr.onErrorOccurred.addListener(onEnd, filter);
    t.remove = () => {
      wr.onBeforeRequest.removeListener(onStart);
      wr.onCompleted.removeListener(onEnd);
      wr.onErrorOccurred.removeListener(onEnd);
    };
    return t;
  }

  /**
   * A page agent's port (runtime.onConnect). Only our own content scripts can connect (web pages
   * have no externally_connectable); the port hears its own tab's count and nothing else.
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
    port.postMessage({ inflight: t.inflight.size, watching: true });
    return true;
  }
}
