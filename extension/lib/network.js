// Per-tab network activity, for settling after an action (browser.node.action). The page agent
// waits until the DOM has been quiet for a short window AND no request the tab started since the
// action began is still in flight; a content script cannot see a request start (Resource Timing
// only reports completions), so the worker counts them with non-blocking chrome.webRequest and
// tells the page over a runtime port.
//
// Only while an action is settling: the listeners are added for that tab (RequestFilter.tabId)
// when the action starts and removed when it answers, so the worker is never woken by, and never
// looks at, the rest of the browser's traffic. Nothing about a request is kept but its id; no URL
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

export class NetworkWatch {
  constructor({ chrome }) {
    this.chrome = chrome;
    this._tabs = new Map(); // tabId → {users, inflight:Set<requestId>, ports:Set, remove()}
  }

  /** True when the browser lets this extension observe requests (the "webRequest" permission). */
  get available() {
    const wr = this.chrome?.webRequest;
    return !!(wr?.onBeforeRequest && wr?.onCompleted && wr?.onErrorOccurred);
  }

  /** In-flight requests of a watched tab (0 when not watched). */
  inflight(tabId) {
    return this._tabs.get(tabId)?.inflight.size ?? 0;
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
    t.users += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      t.users -= 1;
      if (t.users > 0) return;
      this._tabs.delete(tabId);
      t.remove();
      for (const port of [...t.ports]) {
        try {
          port.postMessage({ inflight: 0, watching: false });
          port.disconnect();
        } catch {
          // the page is gone
        }
      }
      t.ports.clear();
    };
  }

  _listen(tabId) {
    const wr = this.chrome.webRequest;
    const t = { users: 0, inflight: new Set(), ports: new Set(), remove: () => {} };
    const notify = () => {
      for (const port of t.ports) {
        try {
          port.postMessage({ inflight: t.inflight.size, watching: true });
        } catch {
          t.ports.delete(port);
        }
      }
    };
    const onStart = (d) => {
      if (!d || d.tabId !== tabId || !COUNTED.has(d.type)) return;
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
    if (!t) {
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
