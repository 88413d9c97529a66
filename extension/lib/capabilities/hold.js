// SPDX-License-Identifier: GPL-3.0-or-later
// The person's Approve or Decline of a held act (lib/holds.js), sent by the app's card
// (chp_engine_resolve_hold_async in src/core/engine/chp-engine-person.c); never an agent tool.
// Approve runs the act the card showed: the page finds the control whose canonical string is the
// one approved — the node of the capture when it is still there, else the control that now shows
// the very same thing (a framework that re-renders its toolbar replaces the node, not the act) —
// and clicks it once. Anything else is a new question: the hold ends 'changed', and the agent asks
// again. It never ends in a refusal of the target: what the person approved is the act, and when
// it cannot be done as shown, it has changed. A held API call (action 'api') is sent by
// capabilities/api.js instead: the same grant and document, the call exactly as held, once.

import { ChaperoneError } from '../scopes.js';
import { publicHold } from '../holds.js';
import { approveCall } from './api.js';
import { bad, holdId, obj, oneOf } from './common.js';

// Page answers that mean "the control as shown is not there to be clicked" (gone, replaced,
// covered, hidden, disabled, another document): the hold ends 'changed', never failed.
const CHANGED_CODES = new Set(['stale_document', 'stale_node', 'target_denied', 'origin_changed']);

export const HANDLERS = Object.freeze({
  'extension.hold.resolve': {
    target: 'none',
    params(p) {
      const o = obj(p);
      return { holdId: holdId(o.holdId), outcome: oneOf(o.outcome, 'outcome', ['approve', 'decline']) };
    },
    async run({ router, chrome, params, signal }) {
      const h = router.holds.get(params.holdId);
      if (!h) throw bad('No hold has that id');
      if (h.state !== 'held') return publicHold(h);
      if (params.outcome === 'decline') return publicHold(router.holds.end(h.holdId, 'declined'));
      if (router.stopState.stopped) throw new ChaperoneError('stopped', 'The person stopped the agent');
      if (h.action === 'api') return approveCall({ router, chrome, signal }, h);
      // Approve: the same grant, the same document, the same thing (the page checks canonical).
      const found = router.grants.lookupTab(h.tabId);
      if (found.error || found.grant.grantId !== h.grantId) {
        return publicHold(router.holds.end(h.holdId, 'expired'));
      }
      let now = null;
      try {
        now = await chrome.webNavigation.getFrame({ tabId: h.tabId, frameId: h.frameId });
      } catch {
        now = null;
      }
      if (!now || now.documentId !== h.documentId) return publicHold(router.holds.end(h.holdId, 'changed'));
      let value;
      try {
        const where = { tabId: h.tabId, frameId: h.frameId, documentId: h.documentId };
        const timers = await router.page.prepareMainWorld(where, signal);
        value = await router.page.run(where, 'action',
          { captureId: h.captureId, ref: h.ref, action: h.action, expect: h.canonical,
            ...(timers ? { timers } : {}) },
          { signal });
      } catch (e) {
        if (CHANGED_CODES.has(e?.code)) {
          return publicHold(router.holds.end(h.holdId, 'changed'));
        }
        return publicHold(router.holds.end(h.holdId, 'failed', { error: e?.code ?? 'internal' }));
      }
      if (!value || typeof value !== 'object' || value.changed) {
        return publicHold(router.holds.end(h.holdId, 'changed'));
      }
      return publicHold(router.holds.end(h.holdId, 'done', { changes: value.changes ?? {} }));
    },
  },
});
