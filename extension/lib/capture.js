// SPDX-License-Identifier: GPL-3.0-or-later
// The network capture behind browser.network.list and browser.api.*: for each tab that holds a
// live grant with browser.network.read or browser.api.call, a ring of the last RING_SIZE requests
// of every frame of that tab, each reduced to names, kinds and sizes (lib/api-shape.js) — never a
// cookie, header, query or body value. It starts when such a grant appears and stops, dropping the
// ring, when the grant ends (Router calls sync() on every grant change and after a restart).
//
// Why webRequest and not the debugger: chrome.debugger would show the person a "started debugging
// this browser" banner on every granted tab and fail while DevTools is open on it; non-blocking
// webRequest listeners only observe, cannot delay or change a request, and are filtered to the
// granted tab (RequestFilter.tabId), so the rest of the browser's traffic never wakes the worker.
// Only the types that an API call or a navigation can be are listened to; images, scripts, styles,
// fonts and media would cost every page load for nothing an agent can call. Cookie and
// Authorization headers are only visible with 'extraHeaders', which makes the browser copy each
// request's headers to the extension: asked for XHR/fetch only, where the API calls are.
//
// With each of the page's own XHR/fetch requests, the names and values of its marker headers
// (X-Requested-With: TiddlyWiki and the like: plain words a CSRF guard checks, never a credential;
// api-shape.js isMarkerHeader), so a call of the same endpoint is sent as the page sends it. They
// too stay in the worker: a list shows header names only.
//
// Separately, and only in this worker's memory, the newest VALUE of each credential-ish header
// (authorization, x-*, *-token, *csrf*, *xsrf*; never Cookie) a granted tab sent, per tab, origin
// and header name: browser.api.call signs itself with it as the page did. It is never returned,
// logged or stored, and is dropped with the ring.
//
// The ring is memory only: a worker the browser stopped (MV3) comes back with none, and capture
// starts again for the granted tabs when the router loads the grants again. A request is bound
// to the document that made it (details.documentId; a navigation's to the document it commits),
// so a list only ever shows the requests of what the tab shows now.

import { templatePaths } from './api-learn.js';
import {
  credentialOfHeaders, forgetDocuments, isCredentialHeader, isMarkerHeader, mediaType, noBody, redactPath,
  requestBodyShape, splitUrl,
} from './api-shape.js';
import { SCOPES } from './scopes.js';

/**
 * Chromium shows Cookie and Authorization to onSendHeaders only with 'extraHeaders'; Firefox shows
 * them anyway and refuses the option ("Invalid enumeration value"): ask for it only where the
 * browser lists it.
 */
function sendHeadersOptions(wr) {
  const known = Object.values(wr.OnSendHeadersOptions ?? { EXTRA_HEADERS: 'extraHeaders' });
  return ['requestHeaders', ...(known.includes('extraHeaders') ? ['extraHeaders'] : [])];
}

export const RING_SIZE = 200;
/** webRequest ResourceTypes the capture records (see above for why not the others). */
export const CAPTURED_TYPES = Object.freeze(['xmlhttprequest', 'main_frame', 'sub_frame', 'ping', 'websocket', 'other']);
/** The scopes whose grants turn capture on for their tabs. */
export const CAPTURE_SCOPES = Object.freeze([SCOPES.NETWORK_READ, SCOPES.API_CALL]);
const NAVIGATIONS = new Set(['main_frame', 'sub_frame']);
const MAX_SECRETS = 64; // header values kept per tab
const MAX_MARKERS = 8; // marker headers kept per request
const MAX_OWN = 64; // calls of our own expected per tab: a batch's reads (≤ 50) go at once
const MAX_EARLY_COMMITS = 8; // commits told before their request, per tab
const OWN_LIFE_MS = 30000;

/**
 * A navigation's request that came after its frame's commit (Firefox can tell them in that order)
 * takes that commit's document: the same frame and URL, committed no earlier than the request
 * started. (An earlier commit of the same URL is the document a reload replaces.)
 */
function bindEarlyCommit(t, entry) {
  const i = t.commits.findIndex((c) => c.frameId === entry.frameId && c.origin === entry.origin &&
    c.path === entry.path && Math.round(c.at) >= entry.startedAt);
  if (i < 0) return;
  entry.documentId = t.commits[i].documentId;
  t.commits.splice(i, 1);
}

/** A capture entry from onBeforeRequest's details, or null for what cannot be an entry. */
export function entryFromRequest(d, seq) {
  if (!d || typeof d.url !== 'string') return null;
  const where = splitUrl(d.url);
  if (!where) return null;
  const startedAt = Number.isFinite(d.timeStamp) ? Math.round(d.timeStamp) : Date.now();
  return {
    seq,
    requestId: String(d.requestId ?? ''),
    // A navigation has no document yet: it gets the one it commits (see onCommitted).
    documentId: NAVIGATIONS.has(d.type) ? null : (d.documentId ?? null),
    frameId: Number.isSafeInteger(d.frameId) ? d.frameId : 0,
    type: String(d.type ?? 'other'),
    method: String(d.method ?? 'GET').toUpperCase().slice(0, 16),
    origin: where.origin,
    path: where.path,
    queryKeys: where.queryKeys,
    body: d.requestBody ? requestBodyShape(d.requestBody) : noBody(),
    status: null,
    contentType: null,
    size: null,
    startedAt,
    ms: null,
    fromCache: false,
    error: null,
    // Looked at for XHR/fetch only (see above): null says "not looked at", not "none sent".
    credential: d.type === 'xmlhttprequest' ? { cookie: false, bearer: false, headers: [] } : null,
    agent: false,
  };
}

/** The end of a request (onCompleted, onBeforeRedirect, onErrorOccurred) written into its entry. */
export function finishEntry(entry, d, { error } = {}) {
  const end = Number.isFinite(d?.timeStamp) ? d.timeStamp : null;
  if (end !== null) entry.ms = Math.max(0, Math.round(end - entry.startedAt));
  if (error) {
    entry.error = String(d?.error ?? 'failed').replace(/^net::/, '').slice(0, 64);
    return entry;
  }
  if (Number.isSafeInteger(d?.statusCode)) entry.status = d.statusCode;
  entry.fromCache = d?.fromCache === true;
  for (const h of Array.isArray(d?.responseHeaders) ? d.responseHeaders : []) {
    const name = String(h?.name ?? '').toLowerCase();
    if (name === 'content-type') entry.contentType = mediaType(h.value);
    else if (name === 'content-length' && /^\d{1,15}$/.test(String(h.value ?? '').trim())) {
      entry.size = Number(String(h.value).trim());
    }
  }
  return entry;
}

/** An entry as browser.network.list shows it: no internals, the path through the redactor. */
export function publicEntry(e) {
  const { path, redacted } = redactPath(e.path);
  const out = {
    documentId: e.documentId, frameId: e.frameId, type: e.type, method: e.method, origin: e.origin, path,
    queryKeys: [...e.queryKeys], body: structuredClone(e.body), status: e.status, contentType: e.contentType,
    size: e.size, startedAt: e.startedAt, ms: e.ms, fromCache: e.fromCache, error: e.error,
    credential: e.credential ? { ...e.credential, headers: [...e.credential.headers] } : null,
  };
  if (redacted) out.redacted = true;
  if (e.agent) out.agent = true;
  return out;
}

/** webRequest's event.addListener with extraInfoSpec, falling back for a fake without it. */
function add(event, fn, filter, extra) {
  if (!event) return () => {};
  try {
    if (extra) event.addListener(fn, filter, extra);
    else event.addListener(fn, filter);
  } catch {
    event.addListener(fn, filter); // a browser (or fake) that does not know one of the extras
  }
  return () => event.removeListener(fn);
}

const withoutFragment = (url) => String(url ?? '').split('#')[0];

/** The worker's own monotonic clock (this.now is the entries' epoch clock, which tests fake). */
const monotonic = () => globalThis.performance.now();

/** Learning waits for the page's calls to be over: none in flight and none for this long... */
export const QUIET_MS = 300;
/** ...but never longer than this (a page that polls is never quiet). */
export const QUIET_CAP_MS = 2000;

export class Capture {
  /** @param chrome the chrome.* surface (webRequest, webNavigation); now: ms since the epoch */
  constructor({ chrome, now = Date.now }) {
    this.chrome = chrome;
    this.now = now;
    // tabId → {ring, pending: Map<requestId, entry>, dropped, seq, secrets: Map, own: [], remove()}
    this._tabs = new Map();
    this._committed = null;
  }

  /** True when the browser lets this extension observe requests. */
  get available() {
    const wr = this.chrome?.webRequest;
    return !!(wr?.onBeforeRequest && wr?.onCompleted && wr?.onErrorOccurred);
  }

  /** Whether the tab's requests are being captured now. */
  capturing(tabId) {
    return this._tabs.has(tabId);
  }

  /**
   * Starts capture for every tab a live grant with a capture scope covers and stops (dropping
   * its ring and header values) every other. Called with the live grant list on each change.
   */
  sync(grants) {
    // tabId → deep: a tab whose grant lets agents use the site's API is captured with its request
    // bodies' shapes and its XHR headers (the credential kinds, and the values a call signs itself
    // with); one granted only "See the requests" is captured lean: those two listeners are most of
    // what capture costs a page's burst of calls (bench/capture-bench.mjs), and the list needs
    // neither.
    const want = new Map();
    for (const g of Array.isArray(grants) ? grants : []) {
      if (!Array.isArray(g?.scopes) || !CAPTURE_SCOPES.some((s) => g.scopes.includes(s))) continue;
      const deep = g.scopes.includes(SCOPES.API_CALL);
      for (const t of g.targets ?? []) {
        if (Number.isSafeInteger(t?.tabId)) want.set(t.tabId, deep || want.get(t.tabId) === true);
      }
    }
    for (const tabId of [...this._tabs.keys()]) if (!want.has(tabId)) this.stop(tabId);
    if (!this.available) return;
    for (const [tabId, deep] of want) {
      const t = this._tabs.get(tabId);
      if (!t) this._start(tabId, deep);
      else if (t.deep !== deep) this._listen(tabId, t, deep);
    }
  }

  /** Stops capturing a tab and forgets everything captured there. */
  stop(tabId) {
    const t = this._tabs.get(tabId);
    if (!t) return;
    this._tabs.delete(tabId);
    t.remove();
    t.ring.length = 0;
    t.pending.clear();
    t.secrets.clear();
    // The GraphQL documents read last are the page's own bodies, inline arguments and all.
    forgetDocuments();
  }

  /**
   * The tab's frames now: Map documentId → {frameId, url}. Only these documents' requests are
   * ever listed, learned from or counted as "what the page talks to".
   */
  async documents(tabId) {
    let frames = null;
    try {
      frames = await this.chrome.webNavigation.getAllFrames({ tabId });
    } catch {
      frames = null;
    }
    const docs = new Map();
    for (const f of frames ?? []) {
      if (f?.documentId && (!f.documentLifecycle || f.documentLifecycle === 'active')) {
        docs.set(f.documentId, { frameId: f.frameId, url: f.url });
      }
    }
    return docs;
  }

  /** The raw entries of `docs`' documents, oldest first (internal: they keep raw paths). */
  entriesOf(tabId, docs) {
    const t = this._tabs.get(tabId);
    if (!t) return [];
    return t.ring.filter((e) => e.documentId !== null && docs.has(e.documentId));
  }

  /**
   * browser.network.list's answer for the tab's current documents: the newest `limit` entries
   * that pass the filter, newest last. `text` is matched against the path as shown (redacted),
   * so a filter cannot be used to guess what the redactor hid.
   */
  list(tabId, docs, { limit = 50, type = 'all', text } = {}) {
    const t = this._tabs.get(tabId);
    let shown = this.entriesOf(tabId, docs).filter((e) => type !== 'api' || e.type === 'xmlhttprequest')
      .map(publicEntry);
    if (typeof text === 'string' && text !== '') shown = shown.filter((e) => e.path.includes(text));
    return { entries: shown.slice(-limit), dropped: t?.dropped ?? 0, capturing: !!t };
  }

  /** The origins the tab's current documents sent requests to (navigations included). */
  originsOf(tabId, docs) {
    const origins = new Set();
    for (const e of this.entriesOf(tabId, docs)) if (!e.agent) origins.add(e.origin);
    return origins;
  }

  /** The newest value the tab sent in header `name` to `origin`, or null. Never leaves the worker but to sign a call. */
  secret(tabId, origin, name) {
    return this._tabs.get(tabId)?.secrets.get(`${origin}\n${String(name).toLowerCase()}`) ?? null;
  }
  /**
   * Every credential value this tab's pages sent (see the top of this file), to any origin: what
   * no reply may carry back to the agent (a page that writes its CSRF token into the HTML it
   * serves). Memory only, as the values are.
   */
  secretValues(tabId) {
    const t = this._tabs.get(tabId);
    return t ? [...t.secrets.values()] : [];
  }


  /**
   * The marker headers (isMarkerHeader: X-Requested-With and the like, names and values) the
   * page itself sent with the endpoint `method` `url` calls — its newest request of that method
   * to that origin whose path has the same template (lib/api-learn.js) — so that a call is sent
   * as the page sends it; {} when the page sent none or never called it. Never returned.
   */
  markersFor(tabId, docs, method, url) {
    const where = splitUrl(url);
    if (!where) return {};
    const mine = this.entriesOf(tabId, docs)
      .filter((e) => e.type === 'xmlhttprequest' && !e.agent && e.origin === where.origin && e.method === method);
    if (mine.length === 0) return {};
    const templates = templatePaths([...mine.map((e) => e.path), where.path]);
    const want = templates.get(where.path);
    for (let i = mine.length - 1; i >= 0; i--) {
      if (templates.get(mine[i].path) === want) return { ...(mine[i].markers ?? {}) };
    }
    return {};
  }

  /** A call of ours is about to leave the tab: its entry is marked `agent` and teaches nothing. */
  expectOwn(tabId, method, url) {
    const t = this._tabs.get(tabId);
    if (!t) return;
    const at = this.now();
    t.own = t.own.filter((o) => at - o.at < OWN_LIFE_MS).slice(-(MAX_OWN - 1));
    t.own.push({ key: `${method} ${withoutFragment(url)}`, at });
  }

  /**
   * Resolves (true) once the tab's page has made its calls: no XHR/fetch in flight and none
   * started or ended for `quietMs`; or (false) after `capMs` whatever happens, or at once for a
   * tab not captured. On the worker's clock, so a hidden tab's throttled timers do not slow it.
   */
  quiet(tabId, { quietMs = QUIET_MS, capMs = QUIET_CAP_MS, timers = globalThis } = {}) {
    const t = this._tabs.get(tabId);
    if (!t) return Promise.resolve(false);
    const started = monotonic();
    return new Promise((resolve) => {
      const check = () => {
        const now = monotonic();
        const busy = [...t.pending.values()].some((e) => e.type === 'xmlhttprequest');
        if (now - started >= capMs) return resolve(false);
        if (!busy && now - t.lastAt >= quietMs) return resolve(true);
        // In flight: look again when it may have ended (its end also moves lastAt).
        const wait = busy ? quietMs / 4 : quietMs - (now - t.lastAt);
        timers.setTimeout(check, Math.max(1, Math.min(wait, capMs - (now - started))));
        return undefined;
      };
      check();
    });
  }

  _start(tabId, deep = true) {
    const t = { ring: [], pending: new Map(), dropped: 0, seq: 0, secrets: new Map(), own: [], remove: () => {},
      lastAt: -Infinity, deep, commits: [] };
    this._tabs.set(tabId, t);
    this._listen(tabId, t, deep);
    this._listenCommits();
  }

  /** (Re)registers a tab's listeners, lean or deep, keeping what it captured so far. */
  _listen(tabId, t, deep) {
    const wr = this.chrome.webRequest;
    t.remove();
    t.deep = deep;
    if (!deep) t.secrets.clear();
    const push = (entry) => {
      t.ring.push(entry);
      while (t.ring.length > RING_SIZE) {
        const old = t.ring.shift();
        if (t.pending.get(old.requestId) === old) t.pending.delete(old.requestId);
        t.dropped += 1;
      }
    };
    const onBefore = (d) => {
      if (!d || d.tabId !== tabId) return;
      const entry = entryFromRequest(d, ++t.seq);
      if (!entry) return;
      if (!deep) {
        // Not looked at (lean capture): unknown, not "none".
        entry.body = null;
        entry.credential = null;
      }
      const key = `${entry.method} ${withoutFragment(d.url)}`;
      const own = t.own.findIndex((o) => o.key === key);
      if (own >= 0) {
        entry.agent = true;
        t.own.splice(own, 1);
      }
      if (NAVIGATIONS.has(entry.type)) bindEarlyCommit(t, entry);
      t.pending.set(entry.requestId, entry);
      t.lastAt = monotonic();
      push(entry);
    };
    const onHeaders = (d) => {
      const entry = d && d.tabId === tabId ? t.pending.get(String(d.requestId)) : null;
      if (!entry) return;
      entry.credential = credentialOfHeaders(d.requestHeaders);
      if (entry.agent) return; // our own call's values are the ones we already hold
      entry.markers = {};
      for (const h of Array.isArray(d.requestHeaders) ? d.requestHeaders : []) {
        const name = String(h?.name ?? '').toLowerCase();
        if (isMarkerHeader(name, h?.value) && Object.keys(entry.markers).length < MAX_MARKERS) {
          entry.markers[name] = h.value;
          continue;
        }
        if (!isCredentialHeader(name) || typeof h.value !== 'string') continue;
        const k = `${entry.origin}\n${name}`;
        t.secrets.delete(k);
        t.secrets.set(k, h.value);
        if (t.secrets.size > MAX_SECRETS) t.secrets.delete(t.secrets.keys().next().value);
      }
    };
    const end = (opts) => (d) => {
      const entry = d && d.tabId === tabId ? t.pending.get(String(d.requestId)) : null;
      if (!entry) return;
      finishEntry(entry, d, opts);
      t.lastAt = monotonic();
      // A redirect keeps its request id: the next onBeforeRequest starts the next entry.
      t.pending.delete(entry.requestId);
    };
    const filter = { urls: ['<all_urls>'], tabId, types: [...CAPTURED_TYPES] };
    const xhr = { urls: ['<all_urls>'], tabId, types: ['xmlhttprequest'] };
    const removers = [
      add(wr.onBeforeRequest, onBefore, filter, deep ? ['requestBody'] : undefined),
      ...(deep ? [add(wr.onSendHeaders, onHeaders, xhr, sendHeadersOptions(wr))] : []),
      add(wr.onBeforeRedirect, end({}), filter),
      add(wr.onCompleted, end({}), filter, ['responseHeaders']),
      add(wr.onErrorOccurred, end({ error: true }), filter),
    ];
    t.remove = () => { for (const r of removers) r(); };
  }

  /** A navigation's entry learns the document it started once the frame commits it. */
  _listenCommits() {
    if (this._committed || !this.chrome.webNavigation?.onCommitted) return;
    this._committed = (d) => {
      const t = d ? this._tabs.get(d.tabId) : null;
      if (!t || !d.documentId || d.documentLifecycle === 'prerender') return;
      const where = splitUrl(withoutFragment(d.url));
      if (!where) return;
      for (let i = t.ring.length - 1, n = 0; i >= 0 && n < 64; i--, n++) {
        const e = t.ring[i];
        if (!NAVIGATIONS.has(e.type) || e.frameId !== d.frameId || e.documentId !== null) continue;
        if (where.origin === e.origin && where.path === e.path) {
          e.documentId = d.documentId;
          return;
        }
      }
      // No request of it yet: Firefox may tell the commit before the request that loads it
      // (webNavigation and webRequest come by different ways). Kept for a moment: the request,
      // when it comes, takes it (bindEarlyCommit).
      const at = Number.isFinite(d.timeStamp) ? d.timeStamp : Date.now();
      t.commits.push({ frameId: d.frameId, origin: where.origin, path: where.path, documentId: d.documentId, at });
      if (t.commits.length > MAX_EARLY_COMMITS) t.commits.shift();
    };
    this.chrome.webNavigation.onCommitted.addListener(this._committed);
  }
}
