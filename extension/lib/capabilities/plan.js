// SPDX-License-Identifier: GPL-3.0-or-later
// A plan the person approved in the app has no wire method of its own: the app sends its allowance
// with each click it covers (browser.node.action `allow`), and the page checks it again before a
// write goes through. Mirrors the agent tool browser_plan (src/core/agent/tools/chp-tool-plan.c).

import { bad, id } from './common.js';

const HOSTNAME = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** `allow: {planId, sites:[hostnames], step, of}`: set by the app only, from an approved plan. */
export function allowOf(v) {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) throw bad('allow is not an object');
  const planId = id(v.planId, 'allow.planId');
  if (!Array.isArray(v.sites) || v.sites.length === 0 || v.sites.length > 20 ||
      !v.sites.every((h) => typeof h === 'string' && h.length <= 253 && HOSTNAME.test(h))) {
    throw bad('allow.sites is a short list of host names');
  }
  const out = { planId, sites: [...v.sites] };
  for (const k of ['step', 'of']) {
    if (v[k] === undefined) continue;
    if (!Number.isSafeInteger(v[k]) || v[k] < 1 || v[k] > 1000) throw bad(`allow.${k} is not a step number`);
    out[k] = v[k];
  }
  return out;
}
