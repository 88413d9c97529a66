// Runs one page-agent operation in one exact document. The scripts go in with
// chrome.scripting.executeScript targeting documentIds:[documentId] when the caller knows it (the
// router always does after its target check), so the work can never land in a document that
// replaced the checked one; Chrome's "frame/document is gone" failures become stale_document.

import { ChaperoneError } from './scopes.js';
import { isErrorCode } from './protocol-errors.js';

export const PAGE_FILES = Object.freeze(['content/snapshot-core.js', 'content/page-agent.js']);

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
  return page.run(op, args);
}

export class PageBridge {
  constructor({ chrome }) {
    this.chrome = chrome;
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
  async run(where, op, args, { signal } = {}) {
    if (signal?.aborted) throw abortError(signal);
    const target = PageBridge.target(where);
    const scripting = this.chrome.scripting;
    const call = () => raceAbort(
      scripting.executeScript({ target, func: callPage, args: [op, args ?? {}] }), signal);
    let reply;
    try {
      // The agent stays installed for the document's life: ask it first, and inject the files
      // (the costly part: two files parsed in the page) only into a document that has none yet.
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
    // No result at all: the document unloaded before the op answered.
    if (reply === undefined || reply === null) {
      throw new ChaperoneError('stale_document', 'The document went away before it answered');
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
