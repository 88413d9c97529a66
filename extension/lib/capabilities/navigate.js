// SPDX-License-Identifier: GPL-3.0-or-later
// Loading another page of the granted site in a granted tab, and waiting until it commits. Mirrors
// the agent tool browser_navigate (src/core/agent/tools/chp-tool-navigate.c).

import { ChaperoneError } from '../scopes.js';
import { webOrigin } from '../targets.js';
import { bad, obj, tabId } from './common.js';

export const NAVIGATE_TIMEOUT_MS = 15000;
// After the commit, how long the answer waits for the new document's load (its scripts, styles
// and images): an agent's next snapshot then sees the page, not its loading skeleton. Commit and
// load together stay inside the app's 25 s for the call.
export const NAVIGATE_LOAD_MS = 8000;
const MAX_URL_CHARS = 8192;

/** The URL as the browser spells it, to compare. */
function hrefOf(url) {
  try {
    return new URL(url).href;
  } catch {
    return null;
  }
}

/**
 * Waits for the tab's main frame to commit, or to change its URL within the document to `url`
 * (a link to an anchor). Only to that URL: the page's own script moving the hash while the
 * navigation is on its way (Node-RED writes #flow/… as it loads) is not the navigation ending,
 * and the agent's next call would then meet the old document going away.
 */
function waitForCommit(chrome, tabId, { signal, timeoutMs, url }) {
  const nav = chrome.webNavigation;
  const want = hrefOf(url);
  let cleanup = () => {};
  const promise = new Promise((resolve, reject) => {
    const mine = (d) => d && d.tabId === tabId && d.frameId === 0 && d.documentLifecycle !== 'prerender';
    const onCommitted = (d) => { if (mine(d)) done(resolve, { url: d.url, documentId: d.documentId }); };
    const onSameDoc = (d) => {
      if (mine(d) && hrefOf(d.url) === want) done(resolve, { url: d.url, documentId: d.documentId });
    };
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

/**
 * Notes the documents of the tab's main frame that finish loading (webNavigation.onCompleted),
 * from before the navigation starts, so that a load that ends before the commit is answered is
 * not missed. until(documentId) → whether that document loaded within NAVIGATE_LOAD_MS (false at
 * the bound, or when its load failed); stop() lets go of the events.
 */
function watchLoads(chrome, tabId, { signal, timeoutMs = NAVIGATE_LOAD_MS }) {
  const nav = chrome.webNavigation;
  const done = new Map();        // documentId → true (loaded) | false (failed)
  let waiter = null;
  const mine = (d) => d && d.tabId === tabId && d.frameId === 0;
  const onCompleted = (d) => { if (mine(d)) settle(d.documentId, true); };
  const onError = (d) => { if (mine(d)) settle(d.documentId, false); };
  function settle(documentId, loaded) {
    done.set(documentId, loaded);
    if (waiter && (waiter.documentId === documentId || !documentId)) waiter.resolve(loaded);
  }
  nav.onCompleted?.addListener(onCompleted);
  nav.onErrorOccurred?.addListener(onError);
  const stop = () => {
    nav.onCompleted?.removeListener(onCompleted);
    nav.onErrorOccurred?.removeListener(onError);
  };
  const until = (documentId) => {
    if (!nav.onCompleted) return Promise.resolve(true);    // a browser without the event: commit is all
    if (done.has(documentId)) return Promise.resolve(done.get(documentId));
    return new Promise((resolve, reject) => {
      const end = (fn, v) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        waiter = null;
        fn(v);
      };
      const onAbort = () => end(reject, signal.reason instanceof ChaperoneError
        ? signal.reason : new ChaperoneError('cancelled', 'The call was cancelled'));
      const timer = setTimeout(() => end(resolve, false), timeoutMs);
      timer?.unref?.();
      signal?.addEventListener('abort', onAbort, { once: true });
      waiter = { documentId, resolve: (v) => end(resolve, v) };
    });
  };
  return { until, stop };
}

export const HANDLERS = Object.freeze({
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
    async run({ chrome, params, signal, tabId: tab, target, documentId: before }) {
      if (webOrigin(params.url) !== target.origin) {
        throw new ChaperoneError('target_denied', 'Navigation stays within the granted site', { tabId: tab });
      }
      const wait = waitForCommit(chrome, tab, { signal, timeoutMs: NAVIGATE_TIMEOUT_MS, url: params.url });
      const loads = watchLoads(chrome, tab, { signal });
      try {
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
        // A new document: its load is waited for (a same-document move has nothing to load).
        const sameDocument = !!committed.documentId && committed.documentId === before;
        const loaded = sameDocument ? true : await loads.until(committed.documentId ?? null);
        return { tabId: tab, url: committed.url, documentId: committed.documentId ?? null, loaded };
      } finally {
        loads.stop();
      }
    },
  },
});
