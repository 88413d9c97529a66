// SPDX-License-Identifier: GPL-3.0-or-later
// The grants the person made in the popup, kept in chrome.storage.session so a killed service worker
// comes back with them. Only createFromPopup makes a grant, and only the popup path calls it: nothing
// the engine can send creates or widens one. Grants end by expiry (timer + chrome.alarms + a check at
// every call), by revoke, or when their tabs close; a tombstone per tab remembers how the last grant
// ended, so a call on that tab answers grant_expired rather than a bare no_grant.

import { randomId } from './protocol.js';
import {
  ChaperoneError, DEFAULT_DURATION_MIN, DURATIONS_MIN, durationMs, expandScopes, isScope,
} from './scopes.js';
import { unreachableReason, webOrigin } from './targets.js';

export const GRANTS_KEY = 'grants';
export const TOMBSTONES_KEY = 'grantTombstones';
export const ALARM_PREFIX = 'chaperone-grant:';

// Bounds that match what the app accepts (src/core/model/chp-grant.c): a longer string would make the app
// refuse the whole list, so they are cut here, where the strings are made.
const MAX_TABS = 16;
const MAX_TARGETS = 64;
const MAX_LABEL_CHARS = 100;
const MAX_SHORT_BYTES = 256;
const MAX_TITLE_BYTES = 1024;
const MAX_URL_BYTES = 4096;
const MAX_TOMBSTONES = 64;
const TOMBSTONE_LIFE_MS = 8 * 60 * 60 * 1000;

const encoder = new TextEncoder();

/** One line, at most maxBytes of UTF-8, cut on a character boundary. */
export function clipText(value, maxBytes) {
  let text = String(value ?? '').replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, ' ');
  if (encoder.encode(text).length <= maxBytes) return text;
  const chars = Array.from(text);
  while (chars.length > 0 && encoder.encode(chars.join('')).length > maxBytes - 3) chars.pop();
  text = chars.join('') + '…';
  return text;
}

const copyGrant = (g) => structuredClone(g);

/** Calls a chrome API whose failure (thrown or rejected) changes nothing that matters. */
function quietly(fn) {
  try {
    Promise.resolve(fn()).catch(() => {});
  } catch {
    // as above
  }
}
const isInt = (n) => Number.isSafeInteger(n);
const invalid = (message) => new ChaperoneError('invalid_params', message);

/** A stored grant that still has the shape this code relies on (storage may hold anything). */
function isSaneGrant(g) {
  return g && typeof g === 'object' && typeof g.grantId === 'string' && g.grantId.length > 0 &&
    Array.isArray(g.targets) && g.targets.length > 0 &&
    g.targets.every((t) => t && isInt(t.tabId) && isInt(t.frameId) &&
      typeof t.origin === 'string' && webOrigin(t.origin) === t.origin) &&
    Array.isArray(g.scopes) && g.scopes.every(isScope) &&
    isInt(g.createdAt) && isInt(g.expiresAt);
}

export class GrantStore {
  /**
   * @param chrome  the chrome.* surface: storage.session, tabs.get, webNavigation.getAllFrames,
   *                alarms.create/clear (optional)
   * @param emit    (event, data) → sends an event to the engine
   * @param now     () → ms since the epoch
   * @param timers  {setTimeout, clearTimeout}; the default timers are unref'd so Node can exit
   */
  constructor({ chrome, emit = () => {}, now = Date.now, timers } = {}) {
    this.chrome = chrome;
    this.emit = emit;
    this.now = now;
    // Wrapped, not taken as methods: a service worker's setTimeout called on another object
    // throws "Illegal invocation" (Node does not mind, so only the browser would show it).
    this.timers = timers ?? { setTimeout: (fn, ms) => setTimeout(fn, ms), clearTimeout: (id) => clearTimeout(id) };
    this._grants = new Map();
    this._tombstones = new Map(); // tabId → {grantId, reason, at}
    this._timers = new Map(); // grantId → timer handle
    this._endedListeners = new Set();
    this._loading = null;
    this._saving = Promise.resolve();
  }

  /** Restores grants and tombstones; grants that ran out while the worker was gone expire now. */
  load() {
    this._loading ??= (async () => {
      const stored = await this.chrome.storage.session.get([GRANTS_KEY, TOMBSTONES_KEY]);
      const grants = Array.isArray(stored?.[GRANTS_KEY]) ? stored[GRANTS_KEY] : [];
      for (const g of grants) {
        // A grant created in this worker's life before load finished wins over the stored copy.
        if (isSaneGrant(g) && !this._grants.has(g.grantId)) this._grants.set(g.grantId, g);
      }
      const tombs = stored?.[TOMBSTONES_KEY];
      if (tombs && typeof tombs === 'object') {
        for (const [tab, t] of Object.entries(tombs)) {
          const tabId = Number(tab);
          if (isInt(tabId) && t && typeof t.grantId === 'string' && !this._tombstones.has(tabId) &&
              (t.reason === 'expired' || t.reason === 'revoked' || t.reason === 'closed')) {
            this._tombstones.set(tabId, { grantId: t.grantId, reason: t.reason, at: Number(t.at) || 0 });
          }
        }
      }
      if (this.expireDue().length === 0) this._save();
      for (const g of this._grants.values()) this._arm(g);
    })();
    return this._loading;
  }

  /** Resolves when everything changed so far is in storage. */
  flush() {
    return this._saving;
  }

  /** Live grants, oldest first, as copies. */
  list() {
    this.expireDue();
    return [...this._grants.values()].sort((a, b) => a.createdAt - b.createdAt).map(copyGrant);
  }

  get(grantId) {
    this.expireDue();
    const g = this._grants.get(grantId);
    return g ? copyGrant(g) : null;
  }

  /** Called with (grant, reason) whenever a grant ends, after it is gone from the list. */
  onEnded(fn) {
    this._endedListeners.add(fn);
    return () => this._endedListeners.delete(fn);
  }

  /**
   * The live grant covering a tab (the internal object: read it, do not change it), or the error a
   * call on that tab gets: grant_expired when the tab's last grant ran out, no_grant otherwise.
   */
  lookupTab(tabId) {
    this.expireDue();
    for (const g of this._grants.values()) {
      if (g.targets.some((t) => t.tabId === tabId)) return { grant: g };
    }
    const tomb = this._tombstones.get(tabId);
    if (tomb && tomb.reason === 'expired') {
      return { error: new ChaperoneError('grant_expired', 'The grant for this tab has run out', { tabId }) };
    }
    return { error: new ChaperoneError('no_grant', 'No grant covers this tab', { tabId }) };
  }

  /** Why no grant is live at all: grant_expired when the newest tombstone is an expiry. */
  noGrantError() {
    let newest = null;
    for (const t of this._tombstones.values()) if (!newest || t.at >= newest.at) newest = t;
    return newest?.reason === 'expired'
      ? new ChaperoneError('grant_expired', 'The grant has run out')
      : new ChaperoneError('no_grant', 'No grant is live');
  }

  /** Ends every grant whose time is up; returns the ones it ended. Synchronous. */
  expireDue() {
    const now = this.now();
    const due = [...this._grants.values()].filter((g) => g.expiresAt <= now);
    for (const g of due) this._end(g, 'expired');
    return due;
  }

  /**
   * Makes a grant from what the person chose in the popup. This is the only way a grant comes to
   * be; the router calls it from onPopupMessage and from nowhere else.
   * @param request {tabs:[{tabId, frameIds?:[frameId...]}], preset:'read'|'control',
   *                 extras? | extraScopes?:[scope], durationMin?:5|15|60|480 | durationMs?, label,
   *                 windowId?}  (frame 0 of each tab is always included)
   */
  async createFromPopup(request) {
    await this.load();
    if (!request || typeof request !== 'object') throw invalid('The request is empty');
    const { tabs, preset, windowId } = request;
    // The popup may name extras `extras` or `extraScopes`, and the duration in minutes or in ms;
    // either way it must be one of the four durations on offer.
    const scopes = expandScopes(preset, request.extras ?? request.extraScopes ?? []);
    const lifeMs = request.durationMs !== undefined
      ? durationMs(DURATIONS_MIN.find((m) => m * 60_000 === request.durationMs) ?? NaN)
      : durationMs(request.durationMin === undefined ? DEFAULT_DURATION_MIN : request.durationMin);
    const label = typeof request.label === 'string' ? request.label.trim() : '';
    if (label.length === 0) throw invalid('Give the task a name');
    if (Array.from(label).length > MAX_LABEL_CHARS) throw invalid('The task name is too long');
    if (!Array.isArray(tabs) || tabs.length === 0) throw invalid('Pick at least one tab');
    if (tabs.length > MAX_TABS) throw invalid('Too many tabs in one grant');
    if (windowId !== undefined && !isInt(windowId)) throw invalid('windowId is not a window id');

    const seen = new Set();
    for (const pick of tabs) {
      if (!pick || !isInt(pick.tabId) || pick.tabId < 0) throw invalid('A tab id is not valid');
      if (seen.has(pick.tabId)) throw invalid('A tab is picked twice');
      seen.add(pick.tabId);
      if (pick.frameIds !== undefined &&
          (!Array.isArray(pick.frameIds) || !pick.frameIds.every((f) => isInt(f) && f >= 0))) {
        throw invalid('frameIds is a list of frame ids');
      }
    }
    for (const tabId of seen) this._refuseIfGranted(tabId);

    const targets = [];
    for (const pick of tabs) targets.push(...await this._targetsOf(pick, windowId));
    if (targets.length > MAX_TARGETS) throw invalid('Too many frames in one grant');
    // The awaits above let other work run (another create, a revoke): check again.
    for (const tabId of seen) this._refuseIfGranted(tabId);

    const createdAt = this.now();
    const grant = {
      grantId: randomId(),
      taskId: randomId(),
      label: clipText(label, MAX_SHORT_BYTES),
      targets,
      scopes,
      createdAt,
      expiresAt: createdAt + lifeMs,
    };
    this._grants.set(grant.grantId, grant);
    for (const tabId of seen) this._tombstones.delete(tabId);
    this._arm(grant);
    this._save();
    this._changed('created', grant.grantId);
    return copyGrant(grant);
  }

  _refuseIfGranted(tabId) {
    for (const g of this._grants.values()) {
      if (g.targets.some((t) => t.tabId === tabId)) {
        throw invalid('This tab already has a grant; revoke it first');
      }
    }
  }

  async _targetsOf(pick, windowId) {
    let tab;
    try {
      tab = await this.chrome.tabs.get(pick.tabId);
    } catch {
      throw invalid('The tab is gone');
    }
    if (!tab) throw invalid('The tab is gone');
    if (windowId !== undefined && tab.windowId !== windowId) throw invalid('The tab is in another window');
    if (unreachableReason(tab.url) !== null) throw invalid('Only web pages can be granted');

    const frames = (await this.chrome.webNavigation.getAllFrames({ tabId: pick.tabId })) ?? [];
    const wanted = [0, ...(pick.frameIds ?? []).filter((f) => f !== 0)];
    const title = clipText(tab.title ?? '', MAX_TITLE_BYTES);
    const targets = [];
    for (const frameId of new Set(wanted)) {
      const frame = frames.find((f) => f.frameId === frameId);
      if (!frame) throw invalid('A picked frame is gone');
      if (unreachableReason(frame.url) !== null) throw invalid('Only web frames can be granted');
      if (frame.errorOccurred) throw invalid('A picked frame shows an error page');
      targets.push({
        tabId: pick.tabId,
        frameId,
        documentId: frame.documentId ?? null,
        origin: webOrigin(frame.url),
        url: clipText(frame.url, MAX_URL_BYTES),
        title,
      });
    }
    return targets;
  }

  /**
   * Ends a grant now (the person revoked it in the popup, or in the app through grant.revoke).
   * Returns the ended grant, or null when there is no such live grant. Synchronous; the storage
   * write follows (see flush()).
   */
  revoke(grantId) {
    this.expireDue();
    const g = this._grants.get(grantId);
    if (!g) return null;
    this._end(g, 'revoked');
    return copyGrant(g);
  }

  /** A frame committed a new document: a granted frame that stays on its origin keeps its grant. */
  handleCommitted(details) {
    if (!details || !isInt(details.tabId) || !isInt(details.frameId)) return;
    // A prerendered page is not in the tab yet; its commit says nothing about what the tab shows.
    if (details.documentLifecycle === 'prerender') return;
    let changed = false;
    for (const g of this._grants.values()) {
      for (const t of g.targets) {
        if (t.tabId !== details.tabId || t.frameId !== details.frameId) continue;
        // Another origin: the target keeps its old origin, so calls answer origin_changed until
        // the frame is back on the granted origin. The grant never follows the frame.
        if (webOrigin(details.url) !== t.origin) continue;
        t.documentId = details.documentId ?? null;
        t.url = clipText(details.url, MAX_URL_BYTES);
        changed = true;
      }
    }
    if (changed) this._save();
  }

  /** A tab's title changed: shown in lists only when the tab is still on the granted origin. */
  handleTabUpdated(tabId, changeInfo, tab) {
    if (!changeInfo || typeof changeInfo.title !== 'string') return;
    let changed = false;
    for (const g of this._grants.values()) {
      for (const t of g.targets) {
        if (t.tabId === tabId && webOrigin(tab?.url) === t.origin) {
          t.title = clipText(changeInfo.title, MAX_TITLE_BYTES);
          changed = true;
        }
      }
    }
    if (changed) this._save();
  }

  /** A closed tab leaves its grants; a grant left with no tab ends. */
  handleTabRemoved(tabId) {
    for (const g of [...this._grants.values()]) {
      if (!g.targets.some((t) => t.tabId === tabId)) continue;
      const rest = g.targets.filter((t) => t.tabId !== tabId);
      if (rest.length === 0) {
        this._end(g, 'closed');
      } else {
        g.targets = rest;
        this._save();
        this._changed('closed', g.grantId);
      }
    }
    this._tombstones.delete(tabId);
  }

  /** chrome.alarms.onAlarm: the backstop for a timer lost with a killed worker. */
  handleAlarm(alarm) {
    if (alarm && typeof alarm.name === 'string' && alarm.name.startsWith(ALARM_PREFIX)) this.expireDue();
  }

  _arm(grant) {
    const delay = Math.max(0, grant.expiresAt - this.now());
    const handle = this.timers.setTimeout(() => this.expireDue(), Math.min(delay + 5, 2 ** 31 - 1));
    handle?.unref?.();
    this._timers.set(grant.grantId, handle);
    // The timer and the check at each call still end the grant if the alarm cannot be set.
    quietly(() => this.chrome.alarms?.create(ALARM_PREFIX + grant.grantId, { when: grant.expiresAt }));
  }

  _end(grant, reason) {
    this._grants.delete(grant.grantId);
    const handle = this._timers.get(grant.grantId);
    if (handle !== undefined) this.timers.clearTimeout(handle);
    this._timers.delete(grant.grantId);
    // An alarm left behind finds nothing to expire.
    quietly(() => this.chrome.alarms?.clear(ALARM_PREFIX + grant.grantId));
    const at = this.now();
    if (reason !== 'closed') {
      for (const t of grant.targets) this._tombstones.set(t.tabId, { grantId: grant.grantId, reason, at });
    }
    this._pruneTombstones(at);
    this._save();
    this._changed(reason, grant.grantId);
    for (const fn of this._endedListeners) {
      try {
        fn(copyGrant(grant), reason);
      } catch (e) {
        console.error('grant end listener failed', e);
      }
    }
  }

  _pruneTombstones(now) {
    for (const [tabId, t] of this._tombstones) {
      if (now - t.at > TOMBSTONE_LIFE_MS) this._tombstones.delete(tabId);
    }
    while (this._tombstones.size > MAX_TOMBSTONES) {
      const oldest = [...this._tombstones.entries()].sort((a, b) => a[1].at - b[1].at)[0][0];
      this._tombstones.delete(oldest);
    }
  }

  _changed(reason, grantId) {
    const grants = [...this._grants.values()].sort((a, b) => a.createdAt - b.createdAt).map(copyGrant);
    try {
      this.emit('grant.changed', { grants, reason, grantId });
    } catch (e) {
      console.error('grant.changed not sent', e);
    }
  }

  /** Writes are chained so an older snapshot never lands after a newer one. */
  _save() {
    const snapshot = {
      [GRANTS_KEY]: [...this._grants.values()].map(copyGrant),
      [TOMBSTONES_KEY]: Object.fromEntries([...this._tombstones.entries()].map(([k, v]) => [String(k), { ...v }])),
    };
    this._saving = this._saving
      .then(() => this.chrome.storage.session.set(snapshot))
      .catch((e) => console.error('grants not saved', e));
    return this._saving;
  }
}
