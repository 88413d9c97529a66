// SPDX-License-Identifier: GPL-3.0-or-later
// Holds: a click that would send, delete or write (content/outward.js says which) is not made; the
// page answers what it would have done, and the person approves or declines it in the app. The
// approval is about one exact thing, the page's `canonical` string, which stays in the worker:
// approving reruns the click with it, and the page refuses if anything changed meanwhile. A write
// through the site's own API (browser.api.call, capabilities/api.js) is held the same way, with
// action 'api': its card names the request ("POST /api/messages") and its Approve sends it.
// State lives in chrome.storage.session like the handoffs (lib/handoffs.js), so a restarted
// worker still knows what is held.

export const HOLDS_KEY = 'holds';
export const HOLD_STATES = Object.freeze(['held', 'done', 'declined', 'changed', 'expired', 'failed']);
export const HOLD_KINDS = Object.freeze(['outward', 'delete', 'write']);
const MAX_FINISHED = 32; // ended holds kept so a late status call still gets the outcome
const MAX_HELD = 64;
const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** 'k' + 16 characters of [a-z0-9]. */
export function newHoldId() {
  const bytes = new Uint8Array(16);
  globalThis.crypto.getRandomValues(bytes);
  return 'k' + Array.from(bytes, (b) => ID_ALPHABET[b % 36]).join('');
}

export const isHoldId = (s) => typeof s === 'string' && /^k[a-z0-9]{16}$/.test(s);

/** A short hex hash of the canonical string, for display only (two FNV-1a 32-bit rounds). */
export function signatureOf(canonical) {
  const s = String(canonical ?? '');
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193) >>> 0;
    b = Math.imul(b ^ c ^ (i & 0xff), 0x01000193) >>> 0;
  }
  return a.toString(16).padStart(8, '0') + b.toString(16).padStart(8, '0');
}

const str = (v, max) => (typeof v === 'string' ? (v.length > max ? v.slice(0, max) : v) : '');

function cleanFields(fields) {
  if (!Array.isArray(fields)) return [];
  const out = [];
  for (const f of fields.slice(0, 30)) {
    if (!f || typeof f !== 'object') continue;
    if (f.secret === true) {
      out.push({ name: str(f.name, 80), secret: true, length: Number.isSafeInteger(f.length) ? f.length : 0 });
    } else {
      out.push({ name: str(f.name, 80), value: str(f.value, 200) });
    }
  }
  return out;
}

/** What hold.changed and the answers carry: no canonical, no capture or ref internals. */
export function publicHold(h) {
  const view = {
    holdId: h.holdId, state: h.state, kind: h.kind, reason: h.reason, word: h.word ?? null,
    control: h.control, site: h.site, fields: h.fields.map((f) => ({ ...f })),
    signature: h.signature, tabId: h.tabId, createdAt: h.createdAt,
  };
  if (h.source !== undefined) view.source = h.source;
  if (h.endedAt !== undefined) view.endedAt = h.endedAt;
  if (h.changes !== undefined) view.changes = h.changes;
  if (h.error !== undefined) view.error = h.error;
  return view;
}

export class HoldStore {
  constructor({ storage, emit = () => {}, now = Date.now }) {
    this.storage = storage;
    this.emit = emit;
    this.now = now;
    this._all = new Map();
    this._saving = Promise.resolve();
    this._loading = null;
  }

  load() {
    this._loading ??= (async () => {
      const stored = (await this.storage.get(HOLDS_KEY))?.[HOLDS_KEY];
      if (!Array.isArray(stored)) return;
      for (const h of stored) {
        if (h && isHoldId(h.holdId) && Number.isSafeInteger(h.tabId) && HOLD_STATES.includes(h.state) &&
            typeof h.canonical === 'string' && !this._all.has(h.holdId)) {
          this._all.set(h.holdId, h);
        }
      }
    })();
    return this._loading;
  }

  flush() {
    return this._saving;
  }

  /** The full record (with canonical and internals), a copy; null when unknown. */
  get(holdId) {
    const h = isHoldId(holdId) ? this._all.get(holdId) : undefined;
    return h ? { ...h } : null;
  }

  list() {
    return [...this._all.values()].map(publicHold);
  }

  heldCount() {
    let n = 0;
    for (const h of this._all.values()) if (h.state === 'held') n += 1;
    return n;
  }

  /**
   * A new held hold from the page's `held` answer and where it was made. The caller has checked
   * grant, scope and target. Returns the full record (a copy).
   */
  create({ held, tabId, frameId, documentId, grantId, captureId, ref, action, call }) {
    if (this.heldCount() >= MAX_HELD) {
      // Never more than MAX_HELD waiting: the oldest one expires (the agent is looping).
      const oldest = [...this._all.values()].filter((h) => h.state === 'held')
        .sort((a, b) => a.createdAt - b.createdAt)[0];
      if (oldest) this.end(oldest.holdId, 'expired');
    }
    let holdId;
    do holdId = newHoldId(); while (this._all.has(holdId));
    // A held API call's canonical holds its body (≤ 64 KiB of JSON): room for all of it.
    const canonical = str(held?.canonical, action === 'api' ? 81920 : 16384);
    const h = {
      holdId,
      state: 'held',
      kind: HOLD_KINDS.includes(held?.kind) ? held.kind : 'outward',
      reason: str(held?.reason, 32) || 'label',
      word: typeof held?.word === 'string' ? str(held.word, 80) : null,
      control: str(held?.control, 160),
      ...(typeof held?.source === 'string' ? { source: str(held.source, 160) } : {}),
      site: str(held?.site, 256),
      fields: cleanFields(held?.fields),
      signature: signatureOf(canonical),
      tabId, frameId, documentId: documentId ?? null, grantId, captureId, ref, action,
      createdAt: this.now(),
      canonical,
    };
    // A held API call (action 'api') keeps what its Approve sends: method, URL, the body the agent
    // gave and the credential's kind and header name — never a header value.
    if (call && typeof call === 'object') h.call = structuredClone(call);
    this._all.set(holdId, h);
    this._changed(h);
    return { ...h };
  }

  /**
   * Ends a held hold: 'done' (with changes), 'declined', 'changed', 'expired' or 'failed' (with
   * an error code). An ended hold keeps its first outcome. Returns the record, or null.
   */
  end(holdId, state, { changes, error } = {}) {
    const h = this._all.get(holdId);
    if (!h) return null;
    if (h.state === 'held' && HOLD_STATES.includes(state) && state !== 'held') {
      h.state = state;
      h.endedAt = this.now();
      if (changes !== undefined) h.changes = changes;
      if (error !== undefined) h.error = error;
      this._prune();
      this._changed(h);
    }
    return { ...h };
  }

  /** A grant ended: what it held can no longer be approved. */
  endForGrant(grantId) {
    for (const h of [...this._all.values()]) {
      if (h.grantId === grantId && h.state === 'held') this.end(h.holdId, 'expired');
    }
  }

  _prune() {
    const finished = [...this._all.values()].filter((h) => h.state !== 'held')
      .sort((a, b) => a.endedAt - b.endedAt);
    while (finished.length > MAX_FINISHED) this._all.delete(finished.shift().holdId);
  }

  _changed(h) {
    const snapshot = [...this._all.values()].map((x) => ({ ...x }));
    this._saving = this._saving
      .then(() => this.storage.set({ [HOLDS_KEY]: snapshot }))
      .catch((e) => console.error('holds not saved', e));
    try {
      this.emit('hold.changed', publicHold(h));
    } catch (e) {
      console.error('hold.changed not sent', e);
    }
  }
}
