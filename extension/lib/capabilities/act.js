// SPDX-License-Identifier: GPL-3.0-or-later
// Acting on a node of a snapshot: click, focus, scroll, fill (setValue). A click that would send,
// delete or write is held for the person instead (lib/holds.js); their Approve runs it again in
// hold.js (extension.hold.resolve). Mirrors the agent tool browser_act
// (src/core/agent/tools/chp-tool-act.c).

import { ChaperoneError } from '../scopes.js';
import { publicHold } from '../holds.js';
import { bad, obj, oneOf, parseRef } from './common.js';
import { allowOf } from './plan.js';

export const ACTIONS = Object.freeze(['click', 'focus', 'scroll', 'setValue']);
const MAX_VALUE_CHARS = 65536;

export const HANDLERS = Object.freeze({
  'browser.node.action': {
    params(p) {
      const o = obj(p);
      const action = oneOf(o.action, 'action', ACTIONS);
      if (action === 'setValue' && (typeof o.value !== 'string' || o.value.length > MAX_VALUE_CHARS)) {
        throw bad('setValue needs a string value');
      }
      if (action !== 'setValue' && o.value !== undefined) throw bad('only setValue takes a value');
      const allow = allowOf(o.allow);
      if (allow && action !== 'click') throw bad('allow goes with a click');
      return { ref: o.ref, ...parseRef(o.ref), action, value: o.value, allow };
    },
    target: 'capture',
    async run({ router, chrome, params, signal, tabId: tab, frameId: frame, documentId, grant }) {
      const args = { captureId: params.captureId, ref: params.pageRef, action: params.action };
      if (params.action === 'setValue') args.value = params.value;
      if (params.allow) {
        // step/of only label the pill ("plan step 2 of 3"); the page checks them again.
        const { planId, sites, step, of } = params.allow;
        args.allow = { planId, sites, ...(step !== undefined && of !== undefined ? { step, of } : {}) };
      }
      // The page settles on DOM quiet and network quiet: count the tab's requests from now on
      // (before the page acts, so the action's own requests are seen), and let the page ask.
      const network = router.network;
      const release = network ? network.watch(tab) : () => {};
      if (network?.available) args.net = true;
      let value;
      try {
        value = await router.page.run({ tabId: tab, frameId: frame, documentId }, 'action', args,
          { signal, network: network?.available ? network : null });
      } catch (e) {
        if (e.code === 'stale_document') {
          throw new ChaperoneError('stale_document',
            'The page navigated away during the action; it may have run. Take a new snapshot.',
            { tabId: tab, frameId: frame, maybeDone: true });
        }
        throw e;
      } finally {
        release();
      }
      if (value && typeof value === 'object' && value.held && typeof value.held === 'object') {
        // Not acted: the person decides (extension.hold.resolve). Not an error for the agent.
        const h = router.holds.create({
          held: value.held, tabId: tab, frameId: frame, documentId, grantId: grant.grantId,
          captureId: params.captureId, ref: params.pageRef, action: params.action,
        });
        return { held: true, hold: publicHold(h), ref: params.ref };
      }
      // The act may have started a navigation: a result about a document that is gone would
      // mislead, so the agent hears stale_document (with done:true) and snapshots again. The
      // page watched for one from before it acted until it answered (changes.navigating); a
      // document that unloaded before answering never answers (stale_document above). So only
      // an answer that says a navigation started needs the browser's word on where it got to.
      const answer = value && typeof value === 'object' ? { ...value, ref: params.ref } : value;
      if (!value?.changes?.navigating) return answer;
      let now = null;
      try {
        now = await chrome.webNavigation.getFrame({ tabId: tab, frameId: frame });
      } catch {
        now = null;
      }
      if (!now || now.documentId !== documentId) {
        throw new ChaperoneError('stale_document',
          'The action ran, then the page navigated away. Take a new snapshot.',
          { tabId: tab, frameId: frame, done: true, action: params.action, ref: params.ref });
      }
      return answer;
    },
  },

});
