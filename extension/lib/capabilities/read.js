// SPDX-License-Identifier: GPL-3.0-or-later
// Reading a granted page: the snapshot (browser.context), one node's details (browser.node.inspect)
// and the names of the site's cookies. Mirrors the agent tools browser_snapshot and browser_inspect
// (src/core/agent/tools/chp-tool-read.c); no agent tool reads cookies yet.

import { ChaperoneError } from '../scopes.js';
import { frameReadability, inheritsOrigin, webOrigin } from '../targets.js';
import { bad, frameId, obj, optString, parseRef, tabId } from './common.js';

export const CONTEXT_LIMITS = Object.freeze({ maxTextBytes: 20480, maxNodes: 2000, maxScan: 10000 });
// How long a snapshot waits for its `until` text (on the worker's clock: a hidden tab's timers
// run late). The app's call allows 20 s for the whole snapshot.
export const UNTIL_MAX_MS = 10000;
const UNTIL_MAX_CHARS = 200;

/**
 * Waits until the page shows `text` (page op waitText), at most `timeoutMs` (≤ UNTIL_MAX_MS).
 * → whether it did. A Stop or the app's own timeout (`signal`) still ends the call; only the
 * wait's bound does not. browser.batch's wait steps wait here too.
 */
export async function waitForText(router, where, text, signal, timeoutMs = UNTIL_MAX_MS) {
  const ms = Math.min(Math.max(0, timeoutMs), UNTIL_MAX_MS);
  const bound = new AbortController();
  const pass = () => bound.abort(signal.reason);
  if (signal?.aborted) pass();
  signal?.addEventListener('abort', pass, { once: true });
  const timer = setTimeout(() => bound.abort(), ms);
  try {
    // The page's own bound is the same (it lets its observer go then), on its own clock.
    const r = await router.page.run(where, 'waitText', { text, timeoutMs: ms }, { signal: bound.signal });
    return r?.found === true;
  } catch (e) {
    if (signal?.aborted || !bound.signal.aborted) throw e;
    return false;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', pass);
  }
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
  const all = navFrames ?? [];
  const children = all.filter((f) => f.parentFrameId === parentFrameId && f.frameId !== parentFrameId);
  // A frame inside a frame that is part of the page, itself inheriting its origin (Etherpad's
  // editor: a srcdoc frame in a srcdoc frame), is part of the page too: read with it, and listed
  // with its frame id when the page read it (else not at all: it is not a frame of this page's).
  const within = new Set(children.filter((f) => inheritsOrigin(f.url)).map((f) => f.frameId));
  const nested = [];
  for (let grew = true; grew && nested.length < 64;) {
    grew = false;
    for (const f of all) {
      if (within.has(f.parentFrameId) && !within.has(f.frameId) && inheritsOrigin(f.url)) {
        within.add(f.frameId);
        nested.push(f);
        grew = true;
      }
    }
  }
  const iframes = Array.isArray(pageIframes) ? [...pageIframes] : [];
  const used = new Set();
  const parentOrigin = grant?.targets?.find((t) => t.tabId === tabId && t.frameId === parentFrameId)?.origin ?? null;
  // The page says which of its frames each <iframe> is in (`parent`: its index, -1 for the page
  // itself): a frame is paired only with an <iframe> in the frame its parent was paired with, so
  // two about:srcdoc frames, one holding a third, are told apart. (An entry without it: anywhere.)
  const pagedAs = new Map([[parentFrameId, -1]]);   // frame id → the page's index of its <iframe>
  const under = (i, f) => !Number.isInteger(i.parent) || i.parent === pagedAs.get(f.parentFrameId);
  const out = children.map((f) => {
    // A frame the page read as its own part (it inherits the page's origin) is matched first:
    // by the URL its document has now (a written about:blank takes its writer's URL).
    let match = iframes.findIndex((i, k) => !used.has(k) && i && i.inline === true && under(i, f)
      && (i.docUrl === f.url || (inheritsOrigin(f.url) && i.src === f.url)));
    const inline = match >= 0;
    const { readable, reason } = frameReadability(grant, tabId, f, { inline });
    const origin = inline ? parentOrigin
      : reason === 'extension' || reason === 'not_web' ? null : webOrigin(f.url);
    if (match < 0) match = iframes.findIndex((i, k) => !used.has(k) && i && !i.inline && under(i, f) && i.src === f.url);
    if (match < 0 && origin) {
      const same = iframes.map((i, k) => [i, k]).filter(([i, k]) => !used.has(k) && i && !i.inline && under(i, f)
        && i.origin === origin);
      if (same.length === 1) match = same[0][1];
    }
    const entry = { frameId: f.frameId, parentFrameId: f.parentFrameId, documentId: f.documentId ?? null,
      origin, url: readable && !inline ? f.url : null, readable };
    if (inline) entry.inline = true;
    if (reason) entry.reason = reason;
    if (match >= 0) {
      used.add(match);
      const i = iframes[match];
      Object.assign(entry, { index: i.index, name: i.name, title: i.title });
      pagedAs.set(f.frameId, i.index);
    }
    return entry;
  });
  for (const f of nested) {
    const match = iframes.findIndex((i, k) => !used.has(k) && i && i.inline === true && pagedAs.has(f.parentFrameId)
      && under(i, f) && (i.docUrl === f.url || i.src === f.url));
    if (match < 0) continue;
    used.add(match);
    const i = iframes[match];
    pagedAs.set(f.frameId, i.index);
    out.push({ frameId: f.frameId, parentFrameId: f.parentFrameId, documentId: f.documentId ?? null, origin: parentOrigin,
      url: null, readable: true, inline: true, index: i.index, name: i.name, title: i.title });
  }
  // <iframe>s webNavigation does not know (not loaded yet, sandboxed to about:blank…): listed, unreachable.
  iframes.forEach((i, k) => {
    if (used.has(k) || !i) return;
    if (i.inline === true) {
      out.push({ frameId: null, parentFrameId, documentId: null, origin: parentOrigin, url: null,
        readable: true, inline: true, index: i.index, name: i.name, title: i.title });
      return;
    }
    out.push({ frameId: null, parentFrameId, documentId: null, origin: i.origin ?? null, url: null,
      readable: false, reason: 'not_granted', index: i.index, name: i.name, title: i.title });
  });
  return out;
}

/**
 * What browser.context answers for the page's capture `value` taken as `captureId` (by the context
 * op, or by an act right after it settled: act.js): the capture recorded as the document's
 * latest, its refs named by it, and its frames as the browser knows them.
 */
export async function capturedContext({ router, chrome, grant, tabId: tab, frameId: frame, documentId }, captureId, value) {
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

export const HANDLERS = Object.freeze({
  'browser.context': {
    params(p) {
      const o = obj(p);
      if (o.diff !== undefined && typeof o.diff !== 'boolean') throw bad('diff is not a boolean');
      const until = optString(o.until, 'until', UNTIL_MAX_CHARS);
      return {
        tabId: tabId(o.tabId), frameId: frameId(o.frameId),
        documentId: optString(o.documentId, 'documentId', 128), diff: o.diff === true, until,
      };
    },
    target: (p) => ({ tabId: p.tabId, frameId: p.frameId, documentId: p.documentId }),
    async run({ router, chrome, params, signal, tabId: tab, frameId: frame, documentId, grant }) {
      const where = { tabId: tab, frameId: frame, documentId };
      const untilFound = params.until ? await waitForText(router, where, params.until, signal) : undefined;
      const captureId = router.newCaptureId();
      const value = await router.page.run(where, 'context',
        { captureId, ...CONTEXT_LIMITS, diff: params.diff, ...(untilFound ? { until: params.until } : {}) }, { signal });
      if (!value || typeof value !== 'object') throw new ChaperoneError('internal', 'The page answered nothing');
      return {
        ...(await capturedContext({ router, chrome, grant, tabId: tab, frameId: frame, documentId }, captureId, value)),
        ...(untilFound === undefined ? {} : { untilFound }),
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
});
