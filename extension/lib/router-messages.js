// SPDX-License-Identifier: GPL-3.0-or-later
// The router's other door: messages from the extension's own pages and content scripts, which is
// how the person acts outside the engine's reach — grants and Stop from the popup, Stop from the
// pill or Esc, Done / Cancel on the handoff banner. Part of the Router (router.js), whose state
// it reads and changes; kept apart because none of it is an engine request and none of its checks
// are the engine's (the sender is, instead).

import { ChaperoneError } from './scopes.js';
import { clipText } from './grants.js';
import { isExtensionUrl, unreachableReason, webOrigin } from './targets.js';

/** A page/popup reply: {ok:true, ...} or {ok:false, error:{code, message}} (never page data). */
function failure(e) {
  if (e instanceof ChaperoneError) return { ok: false, error: { code: e.code, message: e.message } };
  console.error('popup request failed', e);
  return { ok: false, error: { code: 'internal', message: 'Something went wrong' } };
}

/**
 * From a content script (chrome.runtime.onMessage, type 'page.*'). page.stop is honoured from any
 * tab — stopping only takes power away — and takes effect before this returns. page.handoff
 * counts only from the handoff's own tab, top frame. Returns a promise of the reply.
 */
export function pageMessage(router, message, sender = {}) {
  const ownId = router.chrome.runtime?.id;
  if (ownId && sender.id && sender.id !== ownId) return Promise.resolve(failure(new ChaperoneError('unauthorized', 'Not ours')));
  const type = message?.type;
  if (type === 'page.stop') {
    router.stop(message.source === 'esc' ? 'esc' : 'pill');
    return Promise.resolve({ ok: true, stopped: true });
  }
  if (type === 'page.handoff') return pageHandoff(router, message, sender).catch(failure);
  return Promise.resolve(failure(new ChaperoneError('unknown_method', 'Unknown page message')));
}

async function pageHandoff(router, message, sender) {
  await router.load();
  const h = router.handoffs.get(message.handoffId);
  const tabId = sender.tab?.id;
  if (!h || tabId !== h.tabId || (sender.frameId ?? 0) !== 0) {
    throw new ChaperoneError('target_denied', 'That banner does not belong to this tab');
  }
  if (message.outcome !== 'done' && message.outcome !== 'cancelled') {
    throw new ChaperoneError('invalid_params', 'outcome is done or cancelled');
  }
  const after = router.handoffs.resolve(h.handoffId, message.outcome, 'page');
  return { ok: true, handoffId: after.handoffId, state: after.state };
}

/**
 * From the popup (the worker checks the sender is an extension page). Returns a promise of
 * {ok:true, ...} or {ok:false, error:{code, message}}. popup.stop / popup.resume act before this
 * returns. popup.createGrant is the only path in the extension that creates a grant.
 */
export function popupMessage(router, message) {
  const type = message?.type;
  if (type === 'popup.stop') {
    router.stop('popup');
    return Promise.resolve({ ok: true, ...router.state() });
  }
  if (type === 'popup.resume') {
    // Resume waits for load(): it must also clear a stop that so far is only in storage.
    return router.load().then(() => {
      router.resume('popup');
      return { ok: true, ...router.state() };
    }).catch(failure);
  }
  return popup(router, message).catch(failure);
}

async function popup(router, message) {
  await router.load();
  switch (message?.type) {
    case 'popup.createGrant': {
      const grant = await router.grants.createFromPopup(message);
      for (const t of grant.targets) {
        router._steps.delete(t.tabId);
        router._plans.delete(t.tabId);
      }
      router._save();
      return { ok: true, grant };
    }
    case 'popup.revokeGrant': {
      const gone = typeof message.grantId === 'string' ? router.grants.revoke(message.grantId) : null;
      if (!gone) throw new ChaperoneError('invalid_params', 'No live grant has that id');
      return { ok: true, grantId: gone.grantId };
    }
    case 'popup.grants':
      return { ok: true, grants: router.grants.list() };
    case 'popup.state':
      return {
        ok: true, ...router.state(), grants: router.grants.list(),
        handoffsWaiting: router.handoffs.waitingCount(),
        handoffs: router.handoffs.list().filter((h) => h.state === 'waiting'),
      };
    case 'popup.tabs':
      return { ok: true, tabs: await popupTabs(router, message.windowId) };
    default:
      throw new ChaperoneError('unknown_method', 'Unknown popup message');
  }
}

/** The tabs of a window as the popup offers them: web pages can be granted, with their frames. */
async function popupTabs(router, windowId) {
  const query = Number.isSafeInteger(windowId) ? { windowId } : { lastFocusedWindow: true };
  const tabs = (await router.chrome.tabs.query(query)) ?? [];
  const granted = new Map();
  for (const g of router.grants.list()) for (const t of g.targets) granted.set(t.tabId, g.grantId);
  const out = [];
  for (const tab of tabs) {
    // Extension pages (this popup opened as a tab, options, other extensions) are never offered.
    if (isExtensionUrl(tab.url)) continue;
    const reason = unreachableReason(tab.url);
    const entry = {
      tabId: tab.id, windowId: tab.windowId, title: clipText(tab.title ?? '', 1024),
      url: tab.url ?? '', origin: webOrigin(tab.url), active: !!tab.active,
      grantable: reason === null && !granted.has(tab.id), frames: [],
    };
    if (reason) entry.reason = reason;
    if (granted.has(tab.id)) entry.grantId = granted.get(tab.id);
    if (reason === null) {
      let frames = [];
      try {
        frames = (await router.chrome.webNavigation.getAllFrames({ tabId: tab.id })) ?? [];
      } catch {
        frames = [];
      }
      for (const f of frames) {
        if (f.frameId === 0 || unreachableReason(f.url) !== null) continue;
        entry.frames.push({ frameId: f.frameId, parentFrameId: f.parentFrameId, url: f.url, origin: webOrigin(f.url) });
      }
    }
    out.push(entry);
  }
  return out;
}
