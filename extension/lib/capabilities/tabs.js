// SPDX-License-Identifier: GPL-3.0-or-later
// Which granted tabs and frames there are: what an agent sees first, before it reads or acts on
// anything. Mirrors the agent tool browser_tabs (src/core/agent/tools/chp-tool-tabs.c).

import { frameReadability, isExtensionUrl, webOrigin } from '../targets.js';
import { tabCacheFor } from '../tab-cache.js';
import { obj, tabId } from './common.js';

export const HANDLERS = Object.freeze({
  'browser.tabs': {
    target: 'any',
    params: (p) => (obj(p), {}),
    async run({ router, chrome, grants }) {
      // The open tabs as the worker's tab list knows them (kept from the tab events; one
      // chrome.tabs.query only when it is new or stale, see tab-cache.js); a granted tab it does
      // not list is closed. The grants were read from the grant store for this call, as ever.
      const open = new Map();
      for (const tab of await tabCacheFor(chrome).list()) open.set(tab.id, tab);
      const tabs = [];
      for (const g of grants) {
        for (const t of g.targets) {
          if (t.frameId !== 0) continue;
          const tab = open.get(t.tabId);
          if (!tab || isExtensionUrl(tab.url)) continue;
          const here = webOrigin(tab.url) === t.origin;
          const entry = {
            tabId: t.tabId, windowId: tab.windowId, title: here ? (tab.title ?? '') : t.title,
            url: here ? tab.url : t.url, origin: t.origin, active: !!tab.active, grantId: g.grantId,
            label: g.label, scopes: [...g.scopes], expiresAt: g.expiresAt,
          };
          // The tab left the granted site: say so, and show only what the person granted.
          if (!here) entry.state = 'origin_changed';
          // A blind page (the URL floor): the agent learns only that it is there, and its origin.
          if (router.floorOf(tab.url).level === 'blind') {
            Object.assign(entry, { floor: 'blind', title: '', url: webOrigin(tab.url) ?? '' });
          }
          tabs.push(entry);
        }
      }
      return { tabs };
    },
  },

  'browser.frames': {
    params: (p) => ({ tabId: tabId(obj(p).tabId) }),
    target: (p) => ({ tabId: p.tabId, frameId: 0 }),
    async run({ chrome, tabId: tab, grant }) {
      const all = (await chrome.webNavigation.getAllFrames({ tabId: tab })) ?? [];
      const frames = all.map((f) => {
        const { readable, reason } = frameReadability(grant, tab, f);
        const entry = {
          frameId: f.frameId, parentFrameId: f.parentFrameId, documentId: f.documentId ?? null,
          url: readable ? f.url : null,
          origin: reason === 'extension' || reason === 'not_web' ? null : webOrigin(f.url),
          readable,
        };
        if (reason) entry.reason = reason;
        return entry;
      });
      return { frames };
    },
  },
});
