// SPDX-License-Identifier: GPL-3.0-or-later
// Runs one page-agent operation in one exact document, by one of two roads:
//
//  - The page's own port. Once the agent is installed in a document it opens a long-lived
//    runtime port (PAGE_PORT); Chrome names the sender's documentId, and the port is filed under
//    that id alone, so an op sent on it can only reach that document. Ops and answers travel as
//    {id, op, args} / {id, reply}; while an action settles the worker also tells the page its
//    tab's request count on the same port (lib/network.js). A port that disconnects (navigation,
//    back/forward cache, closed frame, worker restart) fails its pending ops with stale_document.
//  - chrome.scripting.executeScript targeting documentIds:[documentId] when no port is open for
//    that document (first op, after a worker restart, or when the caller knows no documentId):
//    the agent is asked (and installed first into a document that has none), and asked to open
//    its port for the next op. Chrome's "frame/document is gone" failures become stale_document.

import { ChaperoneError } from './scopes.js';
import { isErrorCode } from './protocol-errors.js';
import { guardDialogs } from './page-dialogs-main.js';
import { trackTimers } from './page-timers-main.js';

// The documents whose main world is prepared already (at most this many remembered: one
// forgotten is prepared again, which the guard and the tracker themselves make harmless; the
// tracker takes the new name).
const GUARDED_MAX = 512;
// The longest timer a click's handlers queue that is the click's own (page-timers-main.js): a
// longer one is a debounce or a toast's dismissal, the page's schedule.
const CLICK_TIMERS_MS = 100;

// The one list of the page agent's files, in the order they must run: the snapshot core and the
// outward classifier, then page-ui.js (the pill and the banner), all three used by the agent;
// then the agent's parts, page-common.js first (the others build on it), page-read.js and
// page-wait.js before page-act.js (the walk finds a batch step's element; the wait's test says
// whether an act's words showed), page-input.js (the keyboard: fill, type, press) and
// page-dialogs.js (the page's own alert, confirm and prompt) before page-act.js, which uses
// them, page-pointer.js (hover and drag) after it, whose checks it uses, and page-agent.js
// last, which installs what they left as globalThis.__chaperonePage. The tests read this list.
export const PAGE_FILES = Object.freeze(['content/snapshot-core.js', 'content/outward.js', 'content/page-ui.js',
  'content/page-common.js', 'content/page-read.js', 'content/page-wait.js', 'content/page-shot.js',
  'content/page-settle.js', 'content/page-holds.js', 'content/page-input.js', 'content/page-dialogs.js', 'content/page-act.js',
  'content/page-pointer.js', 'content/page-agent.js']);

/** The runtime port a page agent opens to the worker (page-agent.js connectPort). */
export const PAGE_PORT = 'chaperone.page';

// Chrome's wording when the frame or document went away between the check and the injection.
const GONE = [
  /no frame with id/i,
  /frame with id \d+ (was|is) removed/i,
  /frame was removed/i,
  /no document with id/i,
  /document .*(gone|removed|unloaded|destroyed)/i,
  /no tab with id/i,
  /tab was closed/i,
  /navigated|navigation/i,
  /context invalidated/i,
  /back\/forward cache/i,
];
// Chrome's wording for a page it never lets extensions script (web store, chrome://, error pages).
const FORBIDDEN = [/cannot access/i, /cannot be scripted/i, /missing host permission/i, /error page/i];

/**
 * Chrome's injection failure → a protocol error. Chrome's messages can quote the page's URL, so
 * none of their text is passed on.
 */
export function mapInjectionError(error) {
  if (error instanceof ChaperoneError) return error;
  const message = String(error?.message ?? error ?? '');
  if (GONE.some((re) => re.test(message))) {
    return new ChaperoneError('stale_document', 'The document is gone (navigation or closed frame)');
  }
  if (FORBIDDEN.some((re) => re.test(message))) {
    return new ChaperoneError('target_denied', 'The browser does not let extensions into this page');
  }
  return new ChaperoneError('internal', 'The page could not be reached');
}

/** The error an aborted call ends with: the abort's own ChaperoneError (stop) or cancelled. */
export function abortError(signal) {
  const reason = signal?.reason;
  return reason instanceof ChaperoneError ? reason : new ChaperoneError('cancelled', 'The call was cancelled');
}

/** Rejects as soon as the signal aborts; the page work itself cannot be pulled back. */
export function raceAbort(promise, signal) {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(abortError(signal));
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(abortError(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => { signal.removeEventListener('abort', onAbort); resolve(v); },
      (e) => { signal.removeEventListener('abort', onAbort); reject(e); },
    );
  });
}

// Runs inside the page (serialized by Chrome, so it must not close over anything).
function callPage(op, args) {
  const page = globalThis.__chaperonePage;
  if (!page || typeof page.run !== 'function') return { notInstalled: true };
  // The next op can take the page's own port (a no-op when it is open already).
  try {
    if (typeof page.connect === 'function') page.connect();
  } catch (_) {
    // no port: the next op comes this way again
  }
  return page.run(op, args);
}

const stale = () => new ChaperoneError('stale_document', 'The document went away before it answered');

export class PageBridge {
  constructor({ chrome }) {
    this.chrome = chrome;
    this._ports = new Map(); // documentId → {port, tabId, documentId, open, pending: Map(id → op)}
    this._nextId = 1;
    this._guarded = new Map(); // documentId → the timer tracker's name, where the main world is prepared
  }

  /**
   * Before an act that may make the page open its own alert, confirm or prompt (a click, a key
   * press): the dialog guard (page-dialogs-main.js) and the timer tracker (page-timers-main.js) in
   * the document's main world, once per document. Resolves to the tracker's spec for the act's
   * args.timers ({name: what the tracker and the page agent talk under, longestMs: the longest
   * delay that is a click's}), or null where it could not go in.
   * Best effort: a page that cannot be scripted fails its act anyway, and says why there.
   */
  async prepareMainWorld(where, signal) {
    if (!where.documentId) return null;
    const known = this._guarded.get(where.documentId);
    if (known) return { name: known, longestMs: CLICK_TIMERS_MS };
    // Random, so that a page which has not patched the DOM's own functions can neither hear the
    // tracker nor speak for it (docs/security.md says what one that has can do).
    const name = `chaperone-${crypto.randomUUID()}`;
    const target = PageBridge.target(where);
    try {
      await raceAbort(Promise.all([
        this.chrome.scripting.executeScript({ target, world: 'MAIN', func: guardDialogs }),
        this.chrome.scripting.executeScript({ target, world: 'MAIN', func: trackTimers, args: [name] }),
      ]), signal);
    } catch {
      return null;
    }
    if (this._guarded.size >= GUARDED_MAX) this._guarded.delete(this._guarded.keys().next().value);
    this._guarded.set(where.documentId, name);
    return { name, longestMs: CLICK_TIMERS_MS };
  }

  /**
   * A page agent's port (runtime.onConnect). Taken only from our own content scripts, in a tab,
   * with the documentId Chrome names; filed under that documentId. Returns true when the port
   * was ours to take (whether kept or refused).
   */
  connect(port) {
    if (!port || port.name !== PAGE_PORT) return false;
    const sender = port.sender ?? {};
    const ownId = this.chrome?.runtime?.id;
    const tabId = sender.tab?.id;
    const documentId = sender.documentId;
    if ((ownId && sender.id !== ownId) || !Number.isSafeInteger(tabId)
        || typeof documentId !== 'string' || documentId.length === 0) {
      try { port.disconnect(); } catch { /* already gone */ }
      return true;
    }
    // The agent opens a new port only once its old one disconnected: the old one is done.
    const old = this._ports.get(documentId);
    if (old) this._closed(old);
    const entry = { port, tabId, documentId, open: true, pending: new Map() };
    this._ports.set(documentId, entry);
    port.onMessage.addListener((m) => this._onPortMessage(entry, m));
    port.onDisconnect.addListener(() => this._closed(entry));
    return true;
  }

  /** Whether ops for this document go over its port (for tests and diagnostics). */
  hasPort(documentId) {
    return this._ports.get(documentId)?.open === true;
  }

  _closed(entry) {
    if (!entry.open) return;
    entry.open = false;
    if (this._ports.get(entry.documentId) === entry) this._ports.delete(entry.documentId);
    for (const op of [...entry.pending.values()]) op.fail(stale());
    entry.pending.clear();
  }

  _onPortMessage(entry, m) {
    if (!m || typeof m !== 'object' || !Number.isSafeInteger(m.id)) return;
    const op = entry.pending.get(m.id);
    if (!op) return; // an answer to an op already given up on
    if (Object.hasOwn(m, 'reply')) {
      op.done(m.reply);
      return;
    }
    if (Number.isSafeInteger(m.sync)) {
      // The page acted and asks for the request count as of now (network.js counts).
      const network = op.network;
      const net = network ? { inflight: network.inflight(entry.tabId), watching: true } : { inflight: 0, watching: false };
      this._post(entry, { id: m.id, synced: m.sync, net });
    }
  }

  _post(entry, message) {
    try {
      entry.port.postMessage(message);
      return true;
    } catch {
      this._closed(entry);
      return false;
    }
  }

  /** One op over the document's port → the page's reply ({ok, value} | {ok:false, error}). */
  _viaPort(entry, op, args, { signal, network } = {}) {
    return new Promise((resolve, reject) => {
      const id = this._nextId++;
      let unlisten = null;
      const onAbort = () => pending.fail(abortError(signal));
      const end = () => {
        entry.pending.delete(id);
        unlisten?.();
        signal?.removeEventListener('abort', onAbort);
      };
      const pending = {
        network,
        done: (reply) => { end(); resolve(reply); },
        fail: (e) => { end(); reject(e); },
      };
      entry.pending.set(id, pending);
      signal?.addEventListener('abort', onAbort, { once: true });
      let sent = args ?? {};
      if (network) {
        // The count so far, and every change from now on, on the op's own id.
        sent = { ...sent, inflight: network.inflight(entry.tabId) };
        unlisten = network.listen(entry.tabId, (net) => this._post(entry, { id, net }));
      }
      if (!this._post(entry, { id, op, args: sent })) pending.fail(stale());
    });
  }

  /** The injection target: the exact document when known, else the frame. */
  static target({ tabId, frameId = 0, documentId }) {
    return documentId ? { tabId, documentIds: [documentId] } : { tabId, frameIds: [frameId] };
  }

  /**
   * Runs `op` in the page agent, installing it first in a document that has none.
   * Resolves with the op's value; throws ChaperoneError (the page's own code when it is a
   * protocol code, stale_document when the document went away, cancelled on abort).
   */
  async run(where, op, args, { signal, network } = {}) {
    if (signal?.aborted) throw abortError(signal);
    const entry = where.documentId ? this._ports.get(where.documentId) : undefined;
    if (entry?.open && entry.tabId === where.tabId) {
      return PageBridge.unwrap(await this._viaPort(entry, op, args, { signal, network }));
    }
    const target = PageBridge.target(where);
    const scripting = this.chrome.scripting;
    const call = () => raceAbort(
      scripting.executeScript({ target, func: callPage, args: [op, args ?? {}] }), signal);
    let reply;
    try {
      // The agent stays installed for the document's life: ask it first, and inject the files
      // (the costly part: the files parsed in the page) only into a document that has none yet.
      let results = await call();
      reply = Array.isArray(results) ? results[0]?.result : undefined;
      if (reply?.notInstalled === true) {
        await raceAbort(scripting.executeScript({ target, files: [...PAGE_FILES] }), signal);
        results = await call();
        reply = Array.isArray(results) ? results[0]?.result : undefined;
      }
    } catch (e) {
      throw mapInjectionError(e);
    }
    if (reply?.notInstalled === true) {
      throw new ChaperoneError('internal', 'The page agent could not be installed');
    }
    return PageBridge.unwrap(reply);
  }

  /** A page reply → its value, or the ChaperoneError it names. */
  static unwrap(reply) {
    // No result at all: the document unloaded before the op answered.
    if (reply === undefined || reply === null) {
      throw stale();
    }
    if (reply.ok === true) return reply.value;
    const code = isErrorCode(reply.error?.code) ? reply.error.code : 'internal';
    const message = typeof reply.error?.message === 'string' ? reply.error.message.slice(0, 300) : code;
    throw new ChaperoneError(code, message);
  }

  /** Best effort (pill, banner): never throws, never waits for more than the injection. */
  async fire(where, op, args) {
    try {
      return await this.run(where, op, args);
    } catch {
      return undefined;
    }
  }
}
