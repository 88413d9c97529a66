// SPDX-License-Identifier: GPL-3.0-or-later
// What a grant can allow: scope names, the presets a person picks from, the durations on offer, and
// the one table that says which scope each engine method needs. Pure data and pure functions, so
// the popup, the router and Node tests all read the same table.

import { isErrorCode } from './protocol-errors.js';

/**
 * The error every check throws. It lives in this lowest module (router.js re-exports it) so that
 * targets.js, grants.js and the rest can throw it without an import cycle through the router.
 */
export class ChaperoneError extends Error {
  constructor(code, message, data) {
    // An unknown code would reach the engine as a code it cannot map: fail loudly here instead.
    super(message || code);
    this.name = 'ChaperoneError';
    this.code = isErrorCode(code) ? code : 'internal';
    if (data !== undefined) this.data = data;
  }
}

export const SCOPES = Object.freeze({
  TABS_READ: 'browser.tabs.read',
  DOM_READ: 'browser.dom.read',
  DOM_WRITE: 'browser.dom.write',
  TAB_ACTIVATE: 'browser.tab.activate',
  HUMAN_TAKEOVER: 'browser.human.takeover',
  TAB_NAVIGATE: 'browser.tab.navigate',
  COOKIES_READ: 'browser.cookies.read',
  NETWORK_READ: 'browser.network.read',
  API_CALL: 'browser.api.call',
});

/** Every scope, in the order the popup lists them. */
export const ALL_SCOPES = Object.freeze(Object.values(SCOPES));

export const PRESETS = Object.freeze({
  read: Object.freeze([SCOPES.TABS_READ, SCOPES.DOM_READ]),
  control: Object.freeze([
    SCOPES.TABS_READ, SCOPES.DOM_READ, SCOPES.DOM_WRITE, SCOPES.TAB_ACTIVATE, SCOPES.HUMAN_TAKEOVER,
  ]),
});
export const DEFAULT_PRESET = 'read';

/** Added one by one in the popup on top of a preset (any scope of the other preset is allowed too). */
// The site's own API (network.read, api.call) is never in a preset: the person ticks it for a task
// that needs it, knowing the agent then sees the page's requests (names, never values) and can
// call the same API the page calls (writes still ask them).
export const EXTRAS = Object.freeze([SCOPES.TAB_NAVIGATE, SCOPES.COOKIES_READ, SCOPES.NETWORK_READ, SCOPES.API_CALL]);

/** Minutes a grant may last. Anything else is refused, so a grant can never outlive 8 hours. */
export const DURATIONS_MIN = Object.freeze([5, 15, 60, 480]);
export const DEFAULT_DURATION_MIN = 15;
export const MAX_DURATION_MIN = 480;

/**
 * The one method table. `scope`: what the grant must hold; null for the engine-only methods, which
 * the person's app makes (revoke, resume, resolve) and which need no grant. `stopExempt`: still
 * answered while stopped, so the app can always revoke, resume and resolve.
 */
export const METHODS = Object.freeze({
  'browser.tabs': { scope: SCOPES.TABS_READ },
  'browser.frames': { scope: SCOPES.TABS_READ },
  'browser.context': { scope: SCOPES.DOM_READ },
  'browser.node.inspect': { scope: SCOPES.DOM_READ },
  'browser.node.action': { scope: SCOPES.DOM_WRITE },
  'browser.navigate': { scope: SCOPES.TAB_NAVIGATE },
  'browser.takeover': { scope: SCOPES.TAB_ACTIVATE },
  'browser.handoff.request': { scope: SCOPES.HUMAN_TAKEOVER },
  'browser.handoff.status': { scope: SCOPES.HUMAN_TAKEOVER },
  'browser.handoff.cancel': { scope: SCOPES.HUMAN_TAKEOVER },
  'browser.hold.status': { scope: SCOPES.DOM_WRITE },
  'browser.cookies': { scope: SCOPES.COOKIES_READ },
  'browser.screenshot': { scope: SCOPES.DOM_READ },
  'browser.network.list': { scope: SCOPES.NETWORK_READ },
  'browser.api.learn': { scope: SCOPES.API_CALL },
  'browser.api.call': { scope: SCOPES.API_CALL },
  // A batch needs the union of its steps' scopes: every grant reads (both presets hold dom.read);
  // capabilities/batch.js checks dom.write and api.call for its act and api steps before any runs.
  'browser.batch': { scope: SCOPES.DOM_READ },
  'grant.revoke': { scope: null, stopExempt: true },
  'extension.grants': { scope: null, stopExempt: true },
  'extension.handoff.resolve': { scope: null, stopExempt: true },
  'extension.handoff.show': { scope: null, stopExempt: true },
  'extension.hold.resolve': { scope: null, stopExempt: true },
  'extension.stop': { scope: null, stopExempt: true },
  'extension.resume': { scope: null, stopExempt: true },
});

export function methodNames() {
  return Object.keys(METHODS);
}

/** The scope a method needs, null for an engine-only method, undefined for an unknown one. */
export function scopeForMethod(method) {
  return Object.hasOwn(METHODS, method) ? METHODS[method].scope : undefined;
}

/** Engine-only methods (and any `extension.*`) are answered even while stopped. */
export function isStopExempt(method) {
  return (Object.hasOwn(METHODS, method) && METHODS[method].stopExempt === true) ||
    (typeof method === 'string' && method.startsWith('extension.'));
}

export function isScope(s) {
  return typeof s === 'string' && ALL_SCOPES.includes(s);
}

/**
 * A preset plus extras → the concrete, de-duplicated scope list in ALL_SCOPES order.
 * Throws ChaperoneError('invalid_params') for an unknown preset or scope.
 */
export function expandScopes(preset, extras = []) {
  if (!Object.hasOwn(PRESETS, preset)) {
    throw new ChaperoneError('invalid_params', 'Pick Read or Control');
  }
  if (!Array.isArray(extras) || extras.length > ALL_SCOPES.length) {
    throw new ChaperoneError('invalid_params', 'extras is a short list of scopes');
  }
  const chosen = new Set(PRESETS[preset]);
  for (const extra of extras) {
    if (!isScope(extra)) throw new ChaperoneError('invalid_params', 'Unknown scope in extras');
    chosen.add(extra);
  }
  return ALL_SCOPES.filter((s) => chosen.has(s));
}

/** Minutes → milliseconds, or throws invalid_params for a duration that is not on offer. */
export function durationMs(minutes = DEFAULT_DURATION_MIN) {
  if (!DURATIONS_MIN.includes(minutes)) {
    throw new ChaperoneError('invalid_params', 'A grant lasts 5 min, 15 min, 1 h or 8 h');
  }
  return minutes * 60 * 1000;
}

// i18n keys only: the texts live in _locales (owned by the worker/popup helper), under these names.
export const SCOPE_LABEL_KEYS = Object.freeze({
  [SCOPES.TABS_READ]: 'scopeTabsRead',
  [SCOPES.DOM_READ]: 'scopeDomRead',
  [SCOPES.DOM_WRITE]: 'scopeDomWrite',
  [SCOPES.TAB_ACTIVATE]: 'scopeTabActivate',
  [SCOPES.HUMAN_TAKEOVER]: 'scopeHumanTakeover',
  [SCOPES.TAB_NAVIGATE]: 'scopeTabNavigate',
  [SCOPES.COOKIES_READ]: 'scopeCookiesRead',
  [SCOPES.NETWORK_READ]: 'scopeNetworkRead',
  [SCOPES.API_CALL]: 'scopeApiCall',
});

export const PRESET_LABEL_KEYS = Object.freeze({
  read: 'presetRead',
  control: 'presetControl',
});

export const DURATION_LABEL_KEYS = Object.freeze({
  5: 'duration5m',
  15: 'duration15m',
  60: 'duration1h',
  480: 'duration8h',
});
