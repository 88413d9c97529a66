// SPDX-License-Identifier: GPL-3.0-or-later
// The worker's own list of open tabs, kept from Chromium's tab events (as CDP clients keep theirs
// from target events), so browser.tabs does not ask chrome.tabs.query on every call: that round trip
// costs about 1 ms, most of the call. It only says which tabs exist and their window, index, URL,
// title and active flag; grants are still checked on every call from the grant store, and every
// per-tab op looks its tab and frame up itself (docs/extension.md, "Why browser.tabs keeps a tab list").
//
// The listeners are added in the constructor, which the worker runs at top level (MV3 only keeps
// listeners added in the first turn of the event loop). The list is primed by one chrome.tabs.query
// on first use; events that land while that query is in flight are queued and replayed on top of
// its answer. Events that move tabs between windows, or swap one tab for another, mark the list
// stale: the next list() asks again.

const FIELDS = ['id', 'windowId', 'index', 'url', 'title', 'active'];

function slim(tab) {
  const out = {};
  for (const k of FIELDS) if (tab[k] !== undefined) out[k] = tab[k];
  return out;
}

const validTab = (tab) => !!tab && typeof tab === 'object' && Number.isSafeInteger(tab.id);

export class TabCache {
  /** @param chrome the chrome.* namespace (or a fake with tabs.query and the tabs.on* events) */
  constructor({ chrome }) {
    this.chrome = chrome;
    this._tabs = new Map(); // tabId → slim tab
    this._primed = false;
    this._stale = false;
    this._priming = null; // the in-flight prime: a promise
    this._queued = null; // events seen while priming: [kind, ...args]
    this.generation = 0; // counts the events seen (tests and DevTools)
    this.queries = 0; // chrome.tabs.query calls made (tests and DevTools)
    const t = chrome?.tabs;
    const on = (event, kind) => event?.addListener?.((...args) => this._event(kind, args));
    on(t?.onCreated, 'created');
    on(t?.onUpdated, 'updated');
    on(t?.onRemoved, 'removed');
    on(t?.onReplaced, 'replaced');
    on(t?.onAttached, 'moved-window');
    on(t?.onDetached, 'moved-window');
    on(t?.onActivated, 'activated');
    on(t?.onMoved, 'moved');
  }

  /** True when the next list() answers from memory. */
  get fresh() {
    return this._primed && !this._stale && !this._priming;
  }

  /** Marks the list stale: the next list() asks the browser again. */
  invalidate() {
    this._stale = true;
  }

  /**
   * The open tabs, ordered as chrome.tabs.query({}) orders them within a window: by (windowId,
   * index). Copies: a caller cannot change the list.
   */
  async list() {
    if (!this.fresh) await this._prime();
    return [...this._tabs.values()]
      .sort((a, b) => (a.windowId ?? 0) - (b.windowId ?? 0) || (a.index ?? 0) - (b.index ?? 0))
      .map((tab) => ({ ...tab }));
  }

  /** Starts (or joins) one chrome.tabs.query; resolves once the list is primed from it. */
  _prime() {
    this._priming ??= (async () => {
      this._queued = [];
      this._stale = false;
      try {
        this.queries += 1;
        const all = (await this.chrome.tabs.query({})) ?? [];
        this._tabs = new Map();
        for (const tab of all) if (validTab(tab)) this._tabs.set(tab.id, slim(tab));
        // What happened while the query was out: applied on top of its answer, in order. A
        // replayed event the answer already shows changes nothing (the handlers are idempotent).
        const queued = this._queued;
        this._queued = null;
        this._primed = true;
        for (const [kind, args] of queued) this._apply(kind, args);
      } catch (e) {
        this._primed = false;
        throw e;
      } finally {
        this._queued = null;
        this._priming = null;
      }
    })();
    return this._priming;
  }

  _event(kind, args) {
    this.generation += 1;
    if (this._queued) {
      this._queued.push([kind, args]);
      return;
    }
    if (this._primed) this._apply(kind, args); // before the first prime there is nothing to keep
  }

  _apply(kind, args) {
    try {
      switch (kind) {
        case 'created': return this._created(args[0]);
        case 'updated': return this._updated(args[0], args[2]);
        case 'removed': return this._removed(args[0], args[1]);
        case 'replaced': // (addedTabId, removedTabId): the new tab is learnt by asking again
          this._tabs.delete(args[1]);
          this._stale = true;
          return undefined;
        case 'moved-window': // onAttached / onDetached: windowId and index change in two windows
          this._stale = true;
          return undefined;
        case 'activated': return this._activated(args[0]);
        case 'moved': return this._moved(args[0], args[1]);
        default: return undefined;
      }
    } catch (e) {
      // A malformed event: ask the browser rather than trust what is kept.
      this._stale = true;
      console.debug?.('[chaperone] tab event', kind, e?.message);
      return undefined;
    }
  }

  _created(tab) {
    if (!validTab(tab)) {
      this._stale = true;
      return;
    }
    // Known already: a replayed event the query's answer (or a later event) is newer than.
    if (this._tabs.has(tab.id)) return;
    if (Number.isSafeInteger(tab.index)) {
      for (const o of this._tabs.values()) if (o.windowId === tab.windowId && o.index >= tab.index) o.index += 1;
    }
    this._tabs.set(tab.id, slim(tab));
  }

  _updated(tabId, tab) {
    // The third argument is the whole tab as it is now; without one, ask again.
    if (!validTab(tab) || tab.id !== tabId) {
      this._stale = true;
      return;
    }
    // The index is kept from the list's own bookkeeping (other tabs' events move it, and a replayed
    // event may carry an older one); everything else is the tab as the event says it is now.
    const known = this._tabs.get(tabId);
    const next = slim(tab);
    if (known && Number.isSafeInteger(known.index)) next.index = known.index;
    this._tabs.set(tabId, next);
  }

  _removed(tabId, info) {
    const gone = this._tabs.get(tabId);
    if (!gone) return;
    this._tabs.delete(tabId);
    const windowId = info?.windowId ?? gone.windowId;
    if (Number.isSafeInteger(gone.index)) {
      for (const o of this._tabs.values()) if (o.windowId === windowId && o.index > gone.index) o.index -= 1;
    }
  }

  _activated(info) {
    const tab = this._tabs.get(info?.tabId);
    if (!tab) {
      // A tab the list does not know: it missed something.
      this._stale = true;
      return;
    }
    const windowId = info.windowId ?? tab.windowId;
    for (const o of this._tabs.values()) if (o.windowId === windowId) o.active = o.id === info.tabId;
  }

  _moved(tabId, info) {
    const tab = this._tabs.get(tabId);
    const { fromIndex, toIndex } = info ?? {};
    if (!tab || !Number.isSafeInteger(fromIndex) || !Number.isSafeInteger(toIndex)) {
      this._stale = true;
      return;
    }
    if (tab.index === toIndex) return; // already there (a replayed event)
    for (const o of this._tabs.values()) {
      if (o === tab || o.windowId !== tab.windowId) continue;
      if (fromIndex < toIndex && o.index > fromIndex && o.index <= toIndex) o.index -= 1;
      else if (toIndex < fromIndex && o.index >= toIndex && o.index < fromIndex) o.index += 1;
    }
    tab.index = toIndex;
  }
}

const caches = new WeakMap(); // chrome namespace → its TabCache

/**
 * The one TabCache of a chrome namespace. The worker calls it at top level so the listeners exist
 * from the start; a handler calling it later gets the same list.
 */
export function tabCacheFor(chrome) {
  let cache = caches.get(chrome);
  if (!cache) {
    cache = new TabCache({ chrome });
    caches.set(chrome, cache);
  }
  return cache;
}
