// SPDX-License-Identifier: GPL-3.0-or-later
// What every family of handlers shares: the params checks (each failure is invalid_params, said in
// words an agent can act on), wire refs, and bringing a tab to the front for the person.

import { ChaperoneError } from '../scopes.js';
import { isHoldId } from '../holds.js';

export const bad = (message) => new ChaperoneError('invalid_params', message);

export function obj(params) {
  if (params === undefined || params === null) return {};
  if (typeof params !== 'object' || Array.isArray(params)) throw bad('params is not an object');
  return params;
}
export function tabId(v) {
  if (!Number.isSafeInteger(v) || v < 0) throw bad('tabId is not a tab id');
  return v;
}
export function frameId(v) {
  if (v === undefined) return 0;
  if (!Number.isSafeInteger(v) || v < 0) throw bad('frameId is not a frame id');
  return v;
}
export function optString(v, name, max) {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || v.length === 0 || v.length > max) throw bad(`${name} is not a short string`);
  return v;
}
export function id(v, name) {
  if (typeof v !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(v)) throw bad(`${name} is not an id`);
  return v;
}
export function oneOf(v, name, allowed) {
  if (!allowed.includes(v)) throw bad(`${name} is not one of ${allowed.join(', ')}`);
  return v;
}

export function holdId(v) {
  if (!isHoldId(v)) throw bad('holdId is not a hold id');
  return v;
}

/** A wire ref `"<captureId>:<page ref>"` → its two halves. */
export function parseRef(ref) {
  if (typeof ref !== 'string') throw bad('ref is not a string');
  const m = /^([a-z0-9]{1,32}):([A-Za-z0-9_-]{1,32})$/.exec(ref);
  if (!m) throw bad('ref is not a ref from browser.context');
  return { captureId: m[1], pageRef: m[2] };
}

export async function focusTab(chrome, tab) {
  await chrome.tabs.update(tab.id, { active: true });
  await chrome.windows?.update(tab.windowId, { focused: true });
}
