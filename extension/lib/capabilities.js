// SPDX-License-Identifier: GPL-3.0-or-later
// The handlers behind every engine method: how each one's params are checked, what it targets, and
// what it does once the router has checked stop, grant, scope and target. The scope each method
// needs is in scopes.js (METHODS), the one table; this file must cover exactly its methods.

import { ChaperoneError } from './scopes.js';
import { HANDOFF_REASONS, MAX_MESSAGE_CHARS, messageChars } from './handoffs.js';
import { STOP_SOURCES } from './stop.js';
import { isHoldId, publicHold } from './holds.js';
import { frameReadability, isExtensionUrl, webOrigin } from './targets.js';
import { tabCacheFor } from './tab-cache.js';

export const CONTEXT_LIMITS = Object.freeze({ maxTextBytes: 20480, maxNodes: 2000, maxScan: 10000 });
export const NAVIGATE_TIMEOUT_MS = 15000;
export const ACTIONS = Object.freeze(['click', 'focus', 'scroll', 'setValue']);
const MAX_VALUE_CHARS = 65536;
const MAX_URL_CHARS = 8192;
const MAX_TAKEOVER_MESSAGE = 500; // accepted and not shown anywhere (the handoff's message is)

// ---- params ----------------------------------------------------------------------------------

const bad = (message) => new ChaperoneError('invalid_params', message);

function obj(params) {
  if (params === undefined || params === null) return {};
  if (typeof params !== 'object' || Array.isArray(params)) throw bad('params is not an object');
  return params;
}
function tabId(v) {
  if (!Number.isSafeInteger(v) || v < 0) throw bad('tabId is not a tab id');
  return v;
}
function frameId(v) {
  if (v === undefined) return 0;
  if (!Number.isSafeInteger(v) || v < 0) throw bad('frameId is not a frame id');
  return v;
}
function optString(v, name, max) {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || v.length === 0 || v.length > max) throw bad(`${name} is not a short string`);
  return v;
}
function id(v, name) {
  if (typeof v !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(v)) throw bad(`${name} is not an id`);
  return v;
}
function oneOf(v, name, allowed) {
  if (!allowed.includes(v)) throw bad(`${name} is not one of ${allowed.join(', ')}`);
  return v;
}

function holdId(v) {
  if (!isHoldId(v)) throw bad('holdId is not a hold id');
  return v;
}

const HOSTNAME = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** `allow: {planId, sites:[hostnames], step, of}`: set by the app only, from an approved plan. */
function allowOf(v) {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) throw bad('allow is not an object');
  const planId = id(v.planId, 'allow.planId');
  if (!Array.isArray(v.sites) || v.sites.length === 0 || v.sites.length > 20 ||
      !v.sites.every((h) => typeof h === 'string' && h.length <= 253 && HOSTNAME.test(h))) {
    throw bad('allow.sites is a short list of host names');
  }
  const out = { planId, sites: [...v.sites] };
  for (const k of ['step', 'of']) {
    if (v[k] === undefined) continue;
    if (!Number.isSafeInteger(v[k]) || v[k] < 1 || v[k] > 1000) throw bad(`allow.${k} is not a step number`);
    out[k] = v[k];
  }
  return out;
}

/** A wire ref `"<captureId>:<page ref>"` → its two halves. */
export function parseRef(ref) {
  if (typeof ref !== 'string') throw bad('ref is not a string');
  const m = /^([a-z0-9]{1,32}):([A-Za-z0-9_-]{1,32})$/.exec(ref);
  if (!m) throw bad('ref is not a ref from browser.context');
  return { captureId: m[1], pageRef: m[2] };
}

// ---- helpers ---------------------------------------------------------------------------------

async function focusTab(chrome, tab) {
  await chrome.tabs.update(tab.id, { active: true });
  await chrome.windows?.update(tab.windowId, { focused: true });
}

/** Refs in a page result get the capture's prefix, so a ref names its capture on the wire. */
export function prefixRefs(value, captureId, previousCaptureId) {
  const fix = (r) => (typeof r === 'string' && r.length > 0 ? `${captureId}:${r}` : r);
  const fixNode = (n) => (n && typeof n === 'object' ? { ...n, ref: fix(n.ref) } : n);
  const out = { ...value };
  if (Array.isArray(value.nodes)) out.nodes = value.nodes.map(fixNode);
  if (Array.isArray(value.forms)) {
    out.forms = value.forms.map((f) => {
      if (!f || typeof f !== 'object') return f;
      const form = { ...f, fields: Array.isArray(f.fields) ? f.fields.map(fixNode) : f.fields };
      if (f.ref !== undefined) form.ref = fix(f.ref);
      return form;
    });
  }
  if (value.diff && typeof value.diff === 'object') {
    const d = value.diff;
    // Removed nodes were named by the previous capture: give them the name the agent saw.
    const old = previousCaptureId ?? captureId;
    out.diff = {
      ...d,
      added: Array.isArray(d.added) ? d.added.map(fixNode) : d.added,
      changed: Array.isArray(d.changed) ? d.changed.map(fixNode) : d.changed,
      removed: Array.isArray(d.removed)
        ? d.removed.map((r) => (typeof r === 'string' ? `${old}:${r}` : r)) : d.removed,
    };
  }
  return out;
}

/**
 * The child frames of `parentFrameId` as webNavigation knows them, each matched (by URL, then by
 * a unique origin) with the page's own <iframe> entry. Only readable frames show their URL.
 */
export function mergeFrames(navFrames, pageIframes, grant, tabId, parentFrameId) {
  const children = (navFrames ?? []).filter((f) => f.parentFrameId === parentFrameId && f.frameId !== parentFrameId);
  const iframes = Array.isArray(pageIframes) ? [...pageIframes] : [];
  const used = new Set();
  const out = children.map((f) => {
    const { readable, reason } = frameReadability(grant, tabId, f);
    const origin = reason === 'extension' || reason === 'not_web' ? null : webOrigin(f.url);
    let match = iframes.findIndex((i, k) => !used.has(k) && i && i.src === f.url);
    if (match < 0 && origin) {
      const same = iframes.map((i, k) => [i, k]).filter(([i, k]) => !used.has(k) && i && i.origin === origin);
      if (same.length === 1) match = same[0][1];
    }
    const entry = { frameId: f.frameId, parentFrameId: f.parentFrameId, documentId: f.documentId ?? null,
      origin, url: readable ? f.url : null, readable };
    if (reason) entry.reason = reason;
    if (match >= 0) {
      used.add(match);
      const i = iframes[match];
      Object.assign(entry, { index: i.index, name: i.name, title: i.title });
    }
    return entry;
  });
  // <iframe>s webNavigation does not know (not loaded yet, sandboxed to about:blank…): listed, unreachable.
  iframes.forEach((i, k) => {
    if (used.has(k) || !i) return;
    out.push({ frameId: null, parentFrameId, documentId: null, origin: i.origin ?? null, url: null,
      readable: false, reason: 'not_granted', index: i.index, name: i.name, title: i.title });
  });
  return out;
}

function cookieView(c) {
  const view = {
    name: c.name, domain: c.domain, path: c.path, secure: !!c.secure, httpOnly: !!c.httpOnly,
    sameSite: c.sameSite ?? 'unspecified', session: !!c.session,
    valueLength: typeof c.value === 'string' ? c.value.length : 0,
  };
  if (!c.session && typeof c.expirationDate === 'number') view.expirationDate = c.expirationDate;
  return view;
}

/** Waits for the tab's main frame to commit (or change its URL within the document). */
function waitForCommit(chrome, tabId, { signal, timeoutMs }) {
  const nav = chrome.webNavigation;
  let cleanup = () => {};
  const promise = new Promise((resolve, reject) => {
    const mine = (d) => d && d.tabId === tabId && d.frameId === 0 && d.documentLifecycle !== 'prerender';
    const onCommitted = (d) => { if (mine(d)) done(resolve, { url: d.url, documentId: d.documentId }); };
    const onSameDoc = (d) => { if (mine(d)) done(resolve, { url: d.url, documentId: d.documentId }); };
    const onError = (d) => {
      if (mine(d)) done(reject, new ChaperoneError('stale_document', 'The navigation failed; the tab shows an error page'));
    };
    const onAbort = () => done(reject, signal.reason instanceof ChaperoneError
      ? signal.reason : new ChaperoneError('cancelled', 'The call was cancelled'));
    const timer = setTimeout(() => done(reject, new ChaperoneError('timeout', 'The page did not commit in time')), timeoutMs);
    timer?.unref?.();
    function done(fn, v) {
      cleanup();
      fn(v);
    }
    cleanup = () => {
      clearTimeout(timer);
      nav.onCommitted.removeListener(onCommitted);
      nav.onReferenceFragmentUpdated?.removeListener(onSameDoc);
      nav.onHistoryStateUpdated?.removeListener(onSameDoc);
      nav.onErrorOccurred?.removeListener(onError);
      signal?.removeEventListener('abort', onAbort);
    };
    nav.onCommitted.addListener(onCommitted);
    nav.onReferenceFragmentUpdated?.addListener(onSameDoc);
    nav.onHistoryStateUpdated?.addListener(onSameDoc);
    nav.onErrorOccurred?.addListener(onError);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
  return { promise, cancel: () => cleanup() };
}

// ---- the handlers ----------------------------------------------------------------------------
// `target` says what the router must check before `run`:
//   'none'     engine-only, no grant (grant.revoke, extension.*)
//   'any'      a live grant of any tab (browser.tabs)
//   (p) => {tabId, frameId, documentId?}   a named frame
//   'capture'  the frame and document of the ref's capture
//   'handoff'  the tab of the handoff (grant and scope only: a login handoff may leave the origin)
// `run(ctx)` gets {router, chrome, params, signal, tabId, frameId, documentId, frame, grant, capture,
// handoff}; documentId and frame are the current ones, already checked.

export const HANDLERS = Object.freeze({
  'browser.tabs': {
    target: 'any',
    params: (p) => (obj(p), {}),
    async run({ router, chrome, grants }) {
      // The open tabs as the worker's tab list knows them (kept from the tab events; one
      // chrome.tabs.query only when it is new or stale, see tab-cache.js); a granted tab it does
      // not list is closed. The grants were read from the grant store for this call, as ever.
      const open = new Map();
      for (const tab of await tabCacheFor(chrome).list()) open.set(tab.id, tab);
      const tabs = [];
      for (const g of grants) {
        for (const t of g.targets) {
          if (t.frameId !== 0) continue;
          const tab = open.get(t.tabId);
          if (!tab || isExtensionUrl(tab.url)) continue;
          const here = webOrigin(tab.url) === t.origin;
          const entry = {
            tabId: t.tabId, windowId: tab.windowId, title: here ? (tab.title ?? '') : t.title,
            url: here ? tab.url : t.url, origin: t.origin, active: !!tab.active, grantId: g.grantId,
            label: g.label, scopes: [...g.scopes], expiresAt: g.expiresAt,
          };
          // The tab left the granted site: say so, and show only what the person granted.
          if (!here) entry.state = 'origin_changed';
          // A blind page (the URL floor): the agent learns only that it is there, and its origin.
          if (router.floorOf(tab.url).level === 'blind') {
            Object.assign(entry, { floor: 'blind', title: '', url: webOrigin(tab.url) ?? '' });
          }
          tabs.push(entry);
        }
      }
      return { tabs };
    },
  },

  'browser.frames': {
    params: (p) => ({ tabId: tabId(obj(p).tabId) }),
    target: (p) => ({ tabId: p.tabId, frameId: 0 }),
    async run({ chrome, tabId: tab, grant }) {
      const all = (await chrome.webNavigation.getAllFrames({ tabId: tab })) ?? [];
      const frames = all.map((f) => {
        const { readable, reason } = frameReadability(grant, tab, f);
        const entry = {
          frameId: f.frameId, parentFrameId: f.parentFrameId, documentId: f.documentId ?? null,
          url: readable ? f.url : null,
          origin: reason === 'extension' || reason === 'not_web' ? null : webOrigin(f.url),
          readable,
        };
        if (reason) entry.reason = reason;
        return entry;
      });
      return { frames };
    },
  },

  'browser.context': {
    params(p) {
      const o = obj(p);
      if (o.diff !== undefined && typeof o.diff !== 'boolean') throw bad('diff is not a boolean');
      return {
        tabId: tabId(o.tabId), frameId: frameId(o.frameId),
        documentId: optString(o.documentId, 'documentId', 128), diff: o.diff === true,
      };
    },
    target: (p) => ({ tabId: p.tabId, frameId: p.frameId, documentId: p.documentId }),
    async run({ router, chrome, params, signal, tabId: tab, frameId: frame, documentId, grant }) {
      const captureId = router.newCaptureId();
      const where = { tabId: tab, frameId: frame, documentId };
      const value = await router.page.run(where, 'context',
        { captureId, ...CONTEXT_LIMITS, diff: params.diff }, { signal });
      if (!value || typeof value !== 'object') throw new ChaperoneError('internal', 'The page answered nothing');
      const previous = router.lastCaptureOf(tab, frame, documentId);
      router.recordCapture(captureId, { tabId: tab, frameId: frame, documentId, grantId: grant.grantId });
      let navFrames = [];
      try {
        navFrames = (await chrome.webNavigation.getAllFrames({ tabId: tab })) ?? [];
      } catch {
        navFrames = [];
      }
      return {
        ...prefixRefs(value, captureId, previous?.captureId),
        captureId, tabId: tab, frameId: frame, documentId,
        frames: mergeFrames(navFrames, value.iframes, grant, tab, frame),
      };
    },
  },

  'browser.node.inspect': {
    params: (p) => ({ ref: obj(p).ref, ...parseRef(obj(p).ref) }),
    target: 'capture',
    async run({ router, params, signal, tabId: tab, frameId: frame, documentId }) {
      const value = await router.page.run({ tabId: tab, frameId: frame, documentId }, 'inspect',
        { captureId: params.captureId, ref: params.pageRef }, { signal });
      return value && typeof value === 'object' ? { ...value, ref: params.ref } : value;
    },
  },

  'browser.node.action': {
    params(p) {
      const o = obj(p);
      const action = oneOf(o.action, 'action', ACTIONS);
      if (action === 'setValue' && (typeof o.value !== 'string' || o.value.length > MAX_VALUE_CHARS)) {
        throw bad('setValue needs a string value');
      }
      if (action !== 'setValue' && o.value !== undefined) throw bad('only setValue takes a value');
      const allow = allowOf(o.allow);
      if (allow && action !== 'click') throw bad('allow goes with a click');
      return { ref: o.ref, ...parseRef(o.ref), action, value: o.value, allow };
    },
    target: 'capture',
    async run({ router, chrome, params, signal, tabId: tab, frameId: frame, documentId, grant }) {
      const args = { captureId: params.captureId, ref: params.pageRef, action: params.action };
      if (params.action === 'setValue') args.value = params.value;
      if (params.allow) {
        // step/of only label the pill ("plan step 2 of 3"); the page checks them again.
        const { planId, sites, step, of } = params.allow;
        args.allow = { planId, sites, ...(step !== undefined && of !== undefined ? { step, of } : {}) };
      }
      // The page settles on DOM quiet and network quiet: count the tab's requests from now on
      // (before the page acts, so the action's own requests are seen), and let the page ask.
      const network = router.network;
      const release = network ? network.watch(tab) : () => {};
      if (network?.available) args.net = true;
      let value;
      try {
        value = await router.page.run({ tabId: tab, frameId: frame, documentId }, 'action', args,
          { signal, network: network?.available ? network : null });
      } catch (e) {
        if (e.code === 'stale_document') {
          throw new ChaperoneError('stale_document',
            'The page navigated away during the action; it may have run. Take a new snapshot.',
            { tabId: tab, frameId: frame, maybeDone: true });
        }
        throw e;
      } finally {
        release();
      }
      if (value && typeof value === 'object' && value.held && typeof value.held === 'object') {
        // Not acted: the person decides (extension.hold.resolve). Not an error for the agent.
        const h = router.holds.create({
          held: value.held, tabId: tab, frameId: frame, documentId, grantId: grant.grantId,
          captureId: params.captureId, ref: params.pageRef, action: params.action,
        });
        return { held: true, hold: publicHold(h), ref: params.ref };
      }
      // The act may have started a navigation: a result about a document that is gone would
      // mislead, so the agent hears stale_document (with done:true) and snapshots again. The
      // page watched for one from before it acted until it answered (changes.navigating); a
      // document that unloaded before answering never answers (stale_document above). So only
      // an answer that says a navigation started needs the browser's word on where it got to.
      const answer = value && typeof value === 'object' ? { ...value, ref: params.ref } : value;
      if (!value?.changes?.navigating) return answer;
      let now = null;
      try {
        now = await chrome.webNavigation.getFrame({ tabId: tab, frameId: frame });
      } catch {
        now = null;
      }
      if (!now || now.documentId !== documentId) {
        throw new ChaperoneError('stale_document',
          'The action ran, then the page navigated away. Take a new snapshot.',
          { tabId: tab, frameId: frame, done: true, action: params.action, ref: params.ref });
      }
      return answer;
    },
  },

  'browser.navigate': {
    params(p) {
      const o = obj(p);
      if (typeof o.url !== 'string' || o.url.length === 0 || o.url.length > MAX_URL_CHARS) {
        throw bad('url is not a URL');
      }
      try {
        new URL(o.url);
      } catch {
        throw bad('url is not an absolute URL');
      }
      return { tabId: tabId(o.tabId), url: o.url };
    },
    target: (p) => ({ tabId: p.tabId, frameId: 0 }),
    async run({ chrome, params, signal, tabId: tab, target }) {
      if (webOrigin(params.url) !== target.origin) {
        throw new ChaperoneError('target_denied', 'Navigation stays within the granted site', { tabId: tab });
      }
      const wait = waitForCommit(chrome, tab, { signal, timeoutMs: NAVIGATE_TIMEOUT_MS });
      try {
        await chrome.tabs.update(tab, { url: params.url });
      } catch {
        wait.cancel();
        throw new ChaperoneError('stale_document', 'The tab is gone');
      }
      const committed = await wait.promise;
      // A server redirect can land elsewhere: the grant does not follow it.
      if (webOrigin(committed.url) !== target.origin) {
        throw new ChaperoneError('origin_changed', 'The page redirected to another site', { tabId: tab });
      }
      return { tabId: tab, url: committed.url, documentId: committed.documentId ?? null };
    },
  },

  'browser.takeover': {
    params(p) {
      const o = obj(p);
      return { tabId: tabId(o.tabId), message: optString(o.message, 'message', MAX_TAKEOVER_MESSAGE) };
    },
    target: (p) => ({ tabId: p.tabId, frameId: 0 }),
    async run({ chrome, tabId: tab }) {
      const info = await chrome.tabs.get(tab);
      await focusTab(chrome, info);
      return { tabId: tab, focused: true };
    },
  },

  'browser.handoff.request': {
    params(p) {
      const o = obj(p);
      if (o.message !== undefined && typeof o.message !== 'string') throw bad('message is not text');
      // Counted in code points, checked before anything else: the app refuses a longer one.
      if (typeof o.message === 'string' && o.message.length > MAX_MESSAGE_CHARS
          && messageChars(o.message) > MAX_MESSAGE_CHARS) {
        throw bad(`message is ${messageChars(o.message)} characters long; at most ${MAX_MESSAGE_CHARS} are allowed`);
      }
      return { tabId: tabId(o.tabId), reason: oneOf(o.reason, 'reason', HANDOFF_REASONS), message: o.message ?? '' };
    },
    target: (p) => ({ tabId: p.tabId, frameId: 0 }),
    async run({ router, chrome, params, tabId: tab, documentId, frame, grant, target }) {
      const waiting = router.handoffs.waitingForTab(tab);
      if (waiting) {
        throw new ChaperoneError('busy', 'A handoff is already waiting on this tab', { handoffId: waiting.handoffId });
      }
      let info = null;
      try {
        info = await chrome.tabs.get(tab);
      } catch {
        info = null;
      }
      const h = router.handoffs.create({
        tabId: tab, grantId: grant.grantId, url: frame.url, title: info?.title ?? target.title,
        origin: target.origin, reason: params.reason, message: params.message,
      });
      if (info) {
        try {
          await focusTab(chrome, info);
        } catch {
          // The banner and the app's card still tell the person.
        }
      }
      await router.page.fire({ tabId: tab, frameId: 0, documentId }, 'handoff',
        { show: true, handoffId: h.handoffId, reason: h.reason, message: h.message });
      return { handoffId: h.handoffId, state: 'waiting' };
    },
  },

  'browser.handoff.status': {
    params: (p) => ({ handoffId: id(obj(p).handoffId, 'handoffId') }),
    target: 'handoff',
    async run({ handoff }) {
      const out = { handoffId: handoff.handoffId, state: handoff.state };
      if (handoff.state === 'done' || handoff.state === 'cancelled') out.outcome = handoff.state;
      if (handoff.by) out.by = handoff.by;
      return out;
    },
  },

  'browser.handoff.cancel': {
    params: (p) => ({ handoffId: id(obj(p).handoffId, 'handoffId') }),
    target: 'handoff',
    async run({ router, handoff }) {
      const h = router.handoffs.resolve(handoff.handoffId, 'cancelled', 'agent');
      return { handoffId: h.handoffId, state: h.state };
    },
  },

  'browser.hold.status': {
    params: (p) => ({ holdId: holdId(obj(p).holdId) }),
    target: 'hold',
    async run({ hold }) {
      return publicHold(hold);
    },
  },

  'browser.cookies': {
    params: (p) => ({ tabId: tabId(obj(p).tabId) }),
    target: (p) => ({ tabId: p.tabId, frameId: 0 }),
    async run({ chrome, tabId: tab, frame }) {
      const query = { url: frame.url };
      // An incognito tab has its own cookie store; find the one holding this tab.
      try {
        const stores = (await chrome.cookies.getAllCookieStores?.()) ?? [];
        const store = stores.find((s) => Array.isArray(s.tabIds) && s.tabIds.includes(tab));
        if (store) query.storeId = store.id;
      } catch {
        // The default store is the right one for a normal tab.
      }
      const cookies = (await chrome.cookies.getAll(query)) ?? [];
      return { cookies: cookies.map(cookieView) };
    },
  },

  'grant.revoke': {
    target: 'none',
    params: (p) => ({ grantId: id(obj(p).grantId, 'grantId') }),
    async run({ router, params }) {
      if (!router.grants.revoke(params.grantId)) throw bad('No live grant has that id');
      return { grantId: params.grantId, revoked: true };
    },
  },

  'extension.grants': {
    target: 'none',
    params: (p) => (obj(p), {}),
    async run({ router }) {
      return { grants: router.grants.list() };
    },
  },

  'extension.handoff.resolve': {
    target: 'none',
    params(p) {
      const o = obj(p);
      return { handoffId: id(o.handoffId, 'handoffId'), outcome: oneOf(o.outcome, 'outcome', ['done', 'cancelled']) };
    },
    async run({ router, params }) {
      const h = router.handoffs.resolve(params.handoffId, params.outcome, 'app');
      if (!h) throw bad('No handoff has that id');
      return { handoffId: h.handoffId, state: h.state };
    },
  },

  'extension.hold.resolve': {
    target: 'none',
    params(p) {
      const o = obj(p);
      return { holdId: holdId(o.holdId), outcome: oneOf(o.outcome, 'outcome', ['approve', 'decline']) };
    },
    async run({ router, chrome, params, signal }) {
      const h = router.holds.get(params.holdId);
      if (!h) throw bad('No hold has that id');
      if (h.state !== 'held') return publicHold(h);
      if (params.outcome === 'decline') return publicHold(router.holds.end(h.holdId, 'declined'));
      if (router.stopState.stopped) throw new ChaperoneError('stopped', 'The person stopped the agent');
      // Approve: the same grant, the same document, the same thing (the page checks canonical).
      const found = router.grants.lookupTab(h.tabId);
      if (found.error || found.grant.grantId !== h.grantId) {
        return publicHold(router.holds.end(h.holdId, 'expired'));
      }
      let now = null;
      try {
        now = await chrome.webNavigation.getFrame({ tabId: h.tabId, frameId: h.frameId });
      } catch {
        now = null;
      }
      if (!now || now.documentId !== h.documentId) return publicHold(router.holds.end(h.holdId, 'changed'));
      let value;
      try {
        value = await router.page.run({ tabId: h.tabId, frameId: h.frameId, documentId: h.documentId }, 'action',
          { captureId: h.captureId, ref: h.ref, action: h.action, expect: h.canonical }, { signal });
      } catch (e) {
        if (e?.code === 'stale_document' || e?.code === 'stale_node') {
          return publicHold(router.holds.end(h.holdId, 'changed'));
        }
        return publicHold(router.holds.end(h.holdId, 'failed', { error: e?.code ?? 'internal' }));
      }
      if (!value || typeof value !== 'object' || value.changed) {
        return publicHold(router.holds.end(h.holdId, 'changed'));
      }
      return publicHold(router.holds.end(h.holdId, 'done', { changes: value.changes ?? {} }));
    },
  },

  'extension.handoff.show': {
    target: 'none',
    params: (p) => ({ handoffId: id(obj(p).handoffId, 'handoffId') }),
    async run({ router, chrome, params }) {
      const h = router.handoffs.get(params.handoffId);
      if (!h) throw bad('No handoff has that id');
      try {
        await focusTab(chrome, await chrome.tabs.get(h.tabId));
      } catch {
        return { handoffId: h.handoffId, shown: false };
      }
      return { handoffId: h.handoffId, shown: true };
    },
  },

  'extension.stop': {
    target: 'none',
    early: true, // run before anything is awaited, even before load(): the flag is set at once
    params(p) {
      const o = obj(p);
      if (o.source !== undefined) oneOf(o.source, 'source', STOP_SOURCES);
      return { source: o.source ?? 'app' };
    },
    async run({ router, params }) {
      router.stop(params.source);
      return { stopped: true };
    },
  },

  'extension.resume': {
    target: 'none', // after load(): a resume must also clear a stop that is only in storage
    params: (p) => (obj(p), {}),
    async run({ router }) {
      router.resume('app');
      return { stopped: false };
    },
  },
});
