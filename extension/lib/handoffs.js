// SPDX-License-Identifier: GPL-3.0-or-later
// Handoffs: steps only the person can do in the browser (scan a QR code, type an MFA code, solve a
// CAPTCHA). The agent asks and gets an id at once; the person answers on the page banner or in the
// app; a handoff dies with its grant. State lives in chrome.storage.session so a killed worker
// still knows what is waiting.

import { randomId } from './protocol.js';
import { clipText } from './grants.js';

export const HANDOFFS_KEY = 'handoffs';
export const HANDOFF_REASONS = Object.freeze(['qr', 'mfa', 'captcha', 'device', 'login', 'other']);
export const HANDOFF_STATES = Object.freeze(['waiting', 'done', 'cancelled', 'expired']);
// Characters (code points, not UTF-16 units) of the agent's message to the person: the agent tool
// allows 250, and 250 code points are at most 1,000 bytes of UTF-8, within the app's 1,024-byte
// field limit (src/core/model/chp-handoff.c) whatever the script.
export const MAX_MESSAGE_CHARS = 250;

/** The length the person sees: code points, so a CJK or emoji message counts as it reads. */
export const messageChars = (s) => {
  let n = 0;
  for (const _ of s) n += 1;
  return n;
};
const MAX_FINISHED = 32; // ended handoffs kept so a late status call still gets the outcome

/** What handoff.changed carries (the grant id stays inside the extension). */
function publicView(h) {
  const view = {
    handoffId: h.handoffId, tabId: h.tabId, url: h.url, title: h.title, origin: h.origin,
    reason: h.reason, message: h.message, state: h.state, createdAt: h.createdAt, updatedAt: h.updatedAt,
  };
  if (h.by) view.by = h.by;
  return view;
}

export class HandoffStore {
  constructor({ storage, emit = () => {}, now = Date.now }) {
    this.storage = storage;
    this.emit = emit;
    this.now = now;
    this._all = new Map();
    this._listeners = new Set();
    this._saving = Promise.resolve();
    this._loading = null;
  }

  load() {
    this._loading ??= (async () => {
      const stored = (await this.storage.get(HANDOFFS_KEY))?.[HANDOFFS_KEY];
      if (!Array.isArray(stored)) return;
      for (const h of stored) {
        if (h && typeof h.handoffId === 'string' && Number.isSafeInteger(h.tabId) &&
            HANDOFF_STATES.includes(h.state) && !this._all.has(h.handoffId)) {
          this._all.set(h.handoffId, h);
        }
      }
    })();
    return this._loading;
  }

  flush() {
    return this._saving;
  }

  /** fn(handoff, waitingCount) after every change (the badge, the banner). Returns an unsubscribe. */
  onChange(fn) {
    this._listeners.add(fn);
    return () => this._listeners.delete(fn);
  }

  waitingCount() {
    let n = 0;
    for (const h of this._all.values()) if (h.state === 'waiting') n += 1;
    return n;
  }

  /** The record (with grantId), a copy; null when unknown. */
  get(handoffId) {
    const h = typeof handoffId === 'string' ? this._all.get(handoffId) : undefined;
    return h ? { ...h } : null;
  }

  waitingForTab(tabId) {
    for (const h of this._all.values()) if (h.tabId === tabId && h.state === 'waiting') return { ...h };
    return null;
  }

  list() {
    return [...this._all.values()].map(publicView);
  }

  /** A new waiting handoff. The caller has checked grant, scope and target. */
  create({ tabId, grantId, url, title, origin, reason, message }) {
    const at = this.now();
    const h = {
      handoffId: randomId(),
      tabId,
      grantId,
      url: clipText(url ?? '', 4096),
      title: clipText(title ?? '', 1024),
      origin: clipText(origin ?? '', 256),
      reason,
      message: clipText(message ?? '', 1024),
      state: 'waiting',
      createdAt: at,
      updatedAt: at,
    };
    this._all.set(h.handoffId, h);
    this._changed(h);
    return { ...h };
  }

  /**
   * Ends a waiting handoff with state 'done' | 'cancelled' | 'expired', by 'page' | 'app' | 'agent'
   * | 'grant'. An ended one keeps its first outcome. Returns the record, or null when unknown.
   */
  resolve(handoffId, state, by) {
    const h = this._all.get(handoffId);
    if (!h) return null;
    if (h.state === 'waiting' && HANDOFF_STATES.includes(state) && state !== 'waiting') {
      h.state = state;
      h.by = by;
      h.updatedAt = this.now();
      this._prune();
      this._changed(h);
    }
    return { ...h };
  }

  /** A grant ended: its handoffs end with it. */
  endForGrant(grantId) {
    for (const h of [...this._all.values()]) {
      if (h.grantId === grantId && h.state === 'waiting') this.resolve(h.handoffId, 'cancelled', 'grant');
    }
  }

  /** A tab closed (while its grant may live on in other tabs). */
  endForTab(tabId, by) {
    for (const h of [...this._all.values()]) {
      if (h.tabId === tabId && h.state === 'waiting') this.resolve(h.handoffId, 'cancelled', by);
    }
  }

  _prune() {
    const finished = [...this._all.values()].filter((h) => h.state !== 'waiting')
      .sort((a, b) => a.updatedAt - b.updatedAt);
    while (finished.length > MAX_FINISHED) this._all.delete(finished.shift().handoffId);
  }

  _changed(h) {
    const snapshot = [...this._all.values()].map((x) => ({ ...x }));
    this._saving = this._saving
      .then(() => this.storage.set({ [HANDOFFS_KEY]: snapshot }))
      .catch((e) => console.error('handoffs not saved', e));
    try {
      this.emit('handoff.changed', publicView(h));
    } catch (e) {
      console.error('handoff.changed not sent', e);
    }
    const count = this.waitingCount();
    for (const fn of this._listeners) {
      try {
        fn(publicView(h), count);
      } catch (e) {
        console.error('handoff listener failed', e);
      }
    }
  }
}
