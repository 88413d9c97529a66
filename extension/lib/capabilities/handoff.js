// SPDX-License-Identifier: GPL-3.0-or-later
// Handing a tab to the person: the handoff banner and the app's card, what becomes of them, and
// how a held act stands (what browser_wait asks). Mirrors the agent tools browser_handoff and
// browser_wait (src/core/agent/tools/chp-tool-handoff.c); the person's answers come from the app.

import { ChaperoneError } from '../scopes.js';
import { HANDOFF_REASONS, MAX_MESSAGE_CHARS, messageChars } from '../handoffs.js';
import { publicHold } from '../holds.js';
import { bad, focusTab, holdId, id, obj, oneOf, optString, tabId } from './common.js';

const MAX_TAKEOVER_MESSAGE = 500; // accepted and not shown anywhere (the handoff's message is)

export const HANDLERS = Object.freeze({
  'browser.takeover': {
    params(p) {
      const o = obj(p);
      return { tabId: tabId(o.tabId), message: optString(o.message, 'message', MAX_TAKEOVER_MESSAGE) };
    },
    target: (p) => ({ tabId: p.tabId, frameId: 0 }),
    async run({ chrome, tabId: tab }) {
      const info = await chrome.tabs.get(tab);
      await focusTab(chrome, info);
      return { tabId: tab, focused: true };
    },
  },

  'browser.handoff.request': {
    params(p) {
      const o = obj(p);
      if (o.message !== undefined && typeof o.message !== 'string') throw bad('message is not text');
      // Counted in code points, checked before anything else: the app refuses a longer one.
      if (typeof o.message === 'string' && o.message.length > MAX_MESSAGE_CHARS
          && messageChars(o.message) > MAX_MESSAGE_CHARS) {
        throw bad(`message is ${messageChars(o.message)} characters long; at most ${MAX_MESSAGE_CHARS} are allowed`);
      }
      return { tabId: tabId(o.tabId), reason: oneOf(o.reason, 'reason', HANDOFF_REASONS), message: o.message ?? '' };
    },
    target: (p) => ({ tabId: p.tabId, frameId: 0 }),
    async run({ router, chrome, params, tabId: tab, documentId, frame, grant, target }) {
      const waiting = router.handoffs.waitingForTab(tab);
      if (waiting) {
        throw new ChaperoneError('busy', 'A handoff is already waiting on this tab', { handoffId: waiting.handoffId });
      }
      let info = null;
      try {
        info = await chrome.tabs.get(tab);
      } catch {
        info = null;
      }
      const h = router.handoffs.create({
        tabId: tab, grantId: grant.grantId, url: frame.url, title: info?.title ?? target.title,
        origin: target.origin, reason: params.reason, message: params.message,
      });
      if (info) {
        try {
          await focusTab(chrome, info);
        } catch {
          // The banner and the app's card still tell the person.
        }
      }
      await router.page.fire({ tabId: tab, frameId: 0, documentId }, 'handoff',
        { show: true, handoffId: h.handoffId, reason: h.reason, message: h.message });
      return { handoffId: h.handoffId, state: 'waiting' };
    },
  },

  'browser.handoff.status': {
    params: (p) => ({ handoffId: id(obj(p).handoffId, 'handoffId') }),
    target: 'handoff',
    async run({ handoff }) {
      const out = { handoffId: handoff.handoffId, state: handoff.state };
      if (handoff.state === 'done' || handoff.state === 'cancelled') out.outcome = handoff.state;
      if (handoff.by) out.by = handoff.by;
      return out;
    },
  },

  'browser.handoff.cancel': {
    params: (p) => ({ handoffId: id(obj(p).handoffId, 'handoffId') }),
    target: 'handoff',
    async run({ router, handoff }) {
      const h = router.handoffs.resolve(handoff.handoffId, 'cancelled', 'agent');
      return { handoffId: h.handoffId, state: h.state };
    },
  },

  'browser.hold.status': {
    params: (p) => ({ holdId: holdId(obj(p).holdId) }),
    target: 'hold',
    async run({ hold }) {
      return publicHold(hold);
    },
  },

  'extension.handoff.resolve': {
    target: 'none',
    params(p) {
      const o = obj(p);
      return { handoffId: id(o.handoffId, 'handoffId'), outcome: oneOf(o.outcome, 'outcome', ['done', 'cancelled']) };
    },
    async run({ router, params }) {
      const h = router.handoffs.resolve(params.handoffId, params.outcome, 'app');
      if (!h) throw bad('No handoff has that id');
      return { handoffId: h.handoffId, state: h.state };
    },
  },

  'extension.handoff.show': {
    target: 'none',
    params: (p) => ({ handoffId: id(obj(p).handoffId, 'handoffId') }),
    async run({ router, chrome, params }) {
      const h = router.handoffs.get(params.handoffId);
      if (!h) throw bad('No handoff has that id');
      try {
        await focusTab(chrome, await chrome.tabs.get(h.tabId));
      } catch {
        return { handoffId: h.handoffId, shown: false };
      }
      return { handoffId: h.handoffId, shown: true };
    },
  },
});
