// SPDX-License-Identifier: GPL-3.0-or-later
// A small hand-written fake of the chrome.* surface the router uses (storage.session, tabs, windows,
// webNavigation, scripting, cookies, alarms, runtime). It sits below the unit under test only: the
// router, grant store and page bridge run for real on top of it. Imported by the ext-router,
// ext-grants tests; ext-fake-chrome.test.mjs checks the fake's own behaviour.

export const EXTENSION_ID = 'immigohjinbkkjncmhkefbfainfbcigp';

export function fakeEvent() {
  const listeners = new Set();
  return {
    addListener: (fn) => listeners.add(fn),
    removeListener: (fn) => listeners.delete(fn),
    hasListeners: () => listeners.size > 0,
    fire: (...args) => {
      for (const fn of [...listeners]) fn(...args);
    },
  };
}

/** chrome.storage.session over a Map that outlives any one fake chrome (a killed worker's memory). */
export function fakeStorageArea(backing = new Map()) {
  const area = {
    backing,
    // When set, each set() waits on this promise before writing (a slow storage write).
    gate: null,
    writes: 0,
    async get(keys) {
      const list = keys === null || keys === undefined ? [...backing.keys()]
        : Array.isArray(keys) ? keys : [keys];
      const out = {};
      for (const k of list) if (backing.has(k)) out[k] = structuredClone(backing.get(k));
      return out;
    },
    async set(items) {
      const copy = structuredClone(items);
      if (area.gate) await area.gate;
      for (const [k, v] of Object.entries(copy)) backing.set(k, v);
      area.writes += 1;
    },
  };
  return area;
}

/**
 * A real 64×40 JPEG (a light grey picture with a blue block), as chrome.tabs.captureVisibleTab
 * answers: a data URL. Made once by Chromium's canvas.
 */
export const TINY_JPEG = 'data:image/jpeg;base64,/9j/4AAQSkZJRgABAQAAAQABAAD/4gHYSUNDX1BST0ZJTEUAAQEAAAHIAAAAAAQwAABtbnRyUkdCIFhZWiAH4AABAAEAAAAAAABhY3NwAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAQAA9tYAAQAAAADTLQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAlkZXNjAAAA8AAAACRyWFlaAAABFAAAABRnWFlaAAABKAAAABRiWFlaAAABPAAAABR3dHB0AAABUAAAABRyVFJDAAABZAAAAChnVFJDAAABZAAAAChiVFJDAAABZAAAAChjcHJ0AAABjAAAADxtbHVjAAAAAAAAAAEAAAAMZW5VUwAAAAgAAAAcAHMAUgBHAEJYWVogAAAAAAAAb6IAADj1AAADkFhZWiAAAAAAAABimQAAt4UAABjaWFlaIAAAAAAAACSgAAAPhAAAts9YWVogAAAAAAAA9tYAAQAAAADTLXBhcmEAAAAAAAQAAAACZmYAAPKnAAANWQAAE9AAAApbAAAAAAAAAABtbHVjAAAAAAAAAAEAAAAMZW5VUwAAACAAAAAcAEcAbwBvAGcAbABlACAASQBuAGMALgAgADIAMAAxADb/2wBDABALDA4MChAODQ4SERATGCgaGBYWGDEjJR0oOjM9PDkzODdASFxOQERXRTc4UG1RV19iZ2hnPk1xeXBkeFxlZ2P/2wBDARESEhgVGC8aGi9jQjhCY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2P/wAARCAAoAEADASIAAhEBAxEB/8QAFgABAQEAAAAAAAAAAAAAAAAAAAYH/8QAGBABAAMBAAAAAAAAAAAAAAAAABZko+L/xAAXAQEBAQEAAAAAAAAAAAAAAAAAAwIE/8QAIREBAAEDAgcAAAAAAAAAAAAAAAIBAxMUURESITEyYWL/2gAMAwEAAhEDEQA/ALoGZr2bOTj1TnPkaYMzFtJ9J5vTTAHE6AABMxG9l0phuFyUPGrMo0l3TMRvZdERvZdKYU1FzdnFHYAQUAAAAAAAAAAf/9k=';

let documentCounter = 0;
export const newDocumentId = () => `DOC${String(++documentCounter).padStart(6, '0')}`;

/**
 * @param pageRun (op, args, {tabId, frameId, documentId}) → {ok, value} | {ok:false, error} — what the
 *                page agent answers; defaults to {ok:true, value:{}}
 */
export function makeFakeChrome({ storage, pageRun } = {}) {
  const tabs = new Map(); // tabId → {id, windowId, url, title, active, incognito}
  const frames = new Map(); // tabId → Map(frameId → frame)
  const cookies = [];
  const calls = { executeScript: [], tabsUpdate: [], windowsUpdate: [], alarms: [], cleared: [], page: [], capture: [] };
  const installed = new Set(); // documentIds the page agent was injected into
  let nextFrameId = 100;

  const webNavigation = {
    onCommitted: fakeEvent(),
    onDOMContentLoaded: fakeEvent(),
    onCompleted: fakeEvent(),
    onReferenceFragmentUpdated: fakeEvent(),
    onHistoryStateUpdated: fakeEvent(),
    onErrorOccurred: fakeEvent(),
    async getFrame({ tabId, frameId }) {
      const f = frames.get(tabId)?.get(frameId);
      if (!f) return null;
      const { frameId: _omit, ...details } = f;
      return structuredClone(details);
    },
    async getAllFrames({ tabId }) {
      const m = frames.get(tabId);
      return m ? [...m.values()].map((f) => structuredClone(f)) : null;
    },
  };

  const chrome = {
    runtime: { id: EXTENSION_ID, getURL: (p) => `chrome-extension://${EXTENSION_ID}/${p}` },
    storage: { session: storage ?? fakeStorageArea() },
    tabs: {
      onRemoved: fakeEvent(),
      onUpdated: fakeEvent(),
      // Fired by addTab, navigate, setTitle, closeTab and update({active}) below, as Chromium does;
      // tests fire onReplaced, onAttached, onDetached and onMoved themselves.
      onCreated: fakeEvent(),
      onActivated: fakeEvent(),
      onReplaced: fakeEvent(),
      onAttached: fakeEvent(),
      onDetached: fakeEvent(),
      onMoved: fakeEvent(),
      queries: 0, // how many times query() was asked
      async get(tabId) {
        const t = tabs.get(tabId);
        if (!t) throw new Error(`No tab with id: ${tabId}.`);
        return { ...t };
      },
      async query(q) {
        chrome.tabs.queries += 1;
        if (fake.queryGate) await fake.queryGate(q);
        return [...tabs.values()].filter((t) => q.windowId === undefined || t.windowId === q.windowId)
          .map((t) => ({ ...t }));
      },
      async update(tabId, props) {
        calls.tabsUpdate.push({ tabId, props });
        const t = tabs.get(tabId);
        if (!t) throw new Error(`No tab with id: ${tabId}.`);
        if (props.active) {
          for (const o of tabs.values()) if (o.windowId === t.windowId) o.active = o.id === tabId;
          chrome.tabs.onActivated.fire({ tabId, windowId: t.windowId });
        }
        if (props.url) setTimeout(() => fake.navigate(tabId, 0, props.url), 1);
        return { ...t };
      },
      /**
       * The window's active tab as a JPEG data URL (fake.captureDataUrl, TINY_JPEG by default).
       * fake.onCapture(windowId, options), when set, runs first and may throw (Chrome's refusals)
       * or change tabs (what the person does meanwhile).
       */
      async captureVisibleTab(windowId, options) {
        const shown = [...tabs.values()].find((t) => t.windowId === windowId && t.active);
        calls.capture.push({ windowId, options: structuredClone(options), tabId: shown?.id ?? null });
        if (fake.onCapture) await fake.onCapture(windowId, options);
        if (!shown) throw new Error(`No window with id: ${windowId}.`);
        return fake.captureDataUrl ?? TINY_JPEG;
      },
    },
    windows: {
      async update(windowId, props) {
        calls.windowsUpdate.push({ windowId, props });
        return { id: windowId };
      },
      /** {id, state}: 'normal' unless fake.windowStates says otherwise ('minimized'). */
      async get(windowId) {
        return { id: windowId, state: fake.windowStates.get(windowId) ?? 'normal' };
      },
    },
    webNavigation,
    scripting: {
      async executeScript({ target, files, func, args }) {
        calls.executeScript.push({ target: structuredClone(target), files, op: args?.[0] });
        const m = frames.get(target.tabId);
        if (!tabs.has(target.tabId) || !m) throw new Error(`No tab with id: ${target.tabId}`);
        let frame;
        if (target.documentIds) {
          frame = [...m.values()].find((f) => f.documentId === target.documentIds[0]);
          if (!frame) throw new Error(`No document with id ${target.documentIds[0]} in tab with id ${target.tabId}`);
        } else {
          frame = m.get(target.frameIds?.[0] ?? 0);
          if (!frame) throw new Error(`No frame with id ${target.frameIds?.[0]} in tab with id ${target.tabId}.`);
        }
        if (/^chrome:|^chrome-extension:/.test(frame.url)) throw new Error('Cannot access a chrome:// URL');
        const where = { tabId: target.tabId, frameId: frame.frameId, documentId: frame.documentId };
        // The page agent stays installed for a document's life, as it does in Chromium.
        if (files) {
          installed.add(frame.documentId);
          return [{ frameId: frame.frameId, documentId: frame.documentId, result: null }];
        }
        if (!installed.has(frame.documentId)) {
          return [{ frameId: frame.frameId, documentId: frame.documentId, result: { notInstalled: true } }];
        }
        const [op, opArgs] = args;
        calls.page.push({ op, args: structuredClone(opArgs), where });
        const result = pageRun ? await pageRun(op, opArgs, where) : { ok: true, value: {} };
        void func;
        return [{ frameId: frame.frameId, documentId: frame.documentId, result }];
      },
    },
    cookies: {
      async getAll({ url }) {
        const host = new URL(url).hostname;
        return cookies.filter((c) => host === c.domain.replace(/^\./, '') || host.endsWith(c.domain))
          .map((c) => ({ ...c }));
      },
      async getAllCookieStores() {
        return [{ id: '0', tabIds: [...tabs.keys()] }];
      },
    },
    alarms: {
      onAlarm: fakeEvent(),
      create(name, info) {
        calls.alarms.push({ name, info });
      },
      clear(name) {
        calls.cleared.push(name);
        return Promise.resolve(true);
      },
    },
  };

  const fake = {
    chrome,
    // When set, tabs.query awaits it before answering (a query still in flight while events land).
    queryGate: null,
    // tabs.captureVisibleTab: the picture it answers (TINY_JPEG when null) and a hook run first.
    captureDataUrl: null,
    onCapture: null,
    windowStates: new Map(), // windowId → 'minimized', …

    calls,
    tabs,
    frames,
    cookies,
    /** Adds a tab with its top frame (and child frames: [{url, frameId?}]). */
    addTab({ id, windowId = 1, url, title = 'A page', active = false, children = [] }) {
      const index = [...tabs.values()].filter((t) => t.windowId === windowId).length;
      tabs.set(id, { id, windowId, index, url, title, active, incognito: false });
      const m = new Map();
      m.set(0, { frameId: 0, parentFrameId: -1, documentId: newDocumentId(), url, errorOccurred: false,
        documentLifecycle: 'active', frameType: 'outermost_frame' });
      for (const child of children) {
        const frameId = child.frameId ?? nextFrameId++;
        m.set(frameId, { frameId, parentFrameId: child.parentFrameId ?? 0, documentId: newDocumentId(), url: child.url,
          errorOccurred: false, documentLifecycle: 'active', frameType: 'sub_frame' });
      }
      frames.set(id, m);
      chrome.tabs.onCreated.fire({ ...tabs.get(id) });
      return fake.frame(id, 0);
    },
    frame(tabId, frameId) {
      return frames.get(tabId)?.get(frameId);
    },
    /**
     * A frame commits a new document (a main-frame navigation drops the children), which loads
     * a moment later (webNavigation.onCompleted) unless `load` is false.
     */
    navigate(tabId, frameId, url, { fire = true, load = true } = {}) {
      const m = frames.get(tabId);
      const f = m.get(frameId);
      f.url = url;
      f.documentId = newDocumentId();
      if (frameId === 0) {
        for (const k of [...m.keys()]) if (k !== 0) m.delete(k);
        tabs.get(tabId).url = url;
        if (fire) chrome.tabs.onUpdated.fire(tabId, { url }, { ...tabs.get(tabId) });
      }
      if (fire) {
        webNavigation.onCommitted.fire({ tabId, frameId, url, documentId: f.documentId,
          documentLifecycle: 'active', frameType: frameId === 0 ? 'outermost_frame' : 'sub_frame',
          parentFrameId: f.parentFrameId, timeStamp: Date.now() });
        // The document loads a moment later, as a page with nothing slow to fetch does
        // (fake.navigate(…, {load: false}) leaves it loading).
        if (load) {
          const documentId = f.documentId;
          setTimeout(() => webNavigation.onCompleted.fire({ tabId, frameId, url, documentId,
            documentLifecycle: 'active', timeStamp: Date.now() }), 1);
        }
      }
      return f.documentId;
    },
    /** The tab's title changes (tabs.onUpdated with {title}). */
    setTitle(tabId, title) {
      const t = tabs.get(tabId);
      t.title = title;
      chrome.tabs.onUpdated.fire(tabId, { title }, { ...t });
    },
    closeTab(tabId) {
      const t = tabs.get(tabId);
      tabs.delete(tabId);
      frames.delete(tabId);
      if (t) for (const o of tabs.values()) if (o.windowId === t.windowId && o.index > t.index) o.index -= 1;
      chrome.tabs.onRemoved.fire(tabId, { windowId: t?.windowId ?? 1, isWindowClosing: false });
    },
  };
  return fake;
}

/** A clock tests move by hand. */
export function fakeClock(start = 1_700_000_000_000) {
  let t = start;
  const clock = () => t;
  clock.advance = (ms) => {
    t += ms;
  };
  return clock;
}

/** Timers that never fire on their own (expiry is then driven by the clock and the checks). */
export function inertTimers() {
  const pending = new Map();
  let n = 0;
  return {
    pending,
    setTimeout(fn, ms) {
      n += 1;
      pending.set(n, { fn, ms });
      return n;
    },
    clearTimeout(h) {
      pending.delete(h);
    },
    runAll() {
      for (const [h, { fn }] of [...pending]) {
        pending.delete(h);
        fn();
      }
    },
  };
}

/** Records engine events. */
export function eventLog() {
  const events = [];
  const emit = (event, data) => events.push({ event, data: structuredClone(data) });
  emit.events = events;
  emit.named = (name) => events.filter((e) => e.event === name).map((e) => e.data);
  return emit;
}
