// SPDX-License-Identifier: GPL-3.0-or-later
// What the page's own requests look like: browser.network.list, the capture ring of lib/capture.js
// for the tab's current documents — names, kinds and sizes, never a value; paths through the
// redactor. Mirrors the agent tool browser_network (src/core/agent/tools/chp-tool-network.c).

import { bad, frameId, obj, oneOf, tabId } from './common.js';
import { webOrigin } from '../targets.js';

export const LIST_MAX = 200;
export const LIST_DEFAULT = 50;

/** {tabId, frameId: 0}: the API is the top document's, so these name the tab's top frame only. */
export function topFrameParams(o) {
  const p = { tabId: tabId(o.tabId), frameId: frameId(o.frameId) };
  if (p.frameId !== 0) throw bad('frameId is 0: the list is of the whole tab, its top document and its frames');
  return p;
}

export const HANDLERS = Object.freeze({
  'browser.network.list': {
    params(p) {
      const o = obj(p);
      const out = topFrameParams(o);
      out.limit = LIST_DEFAULT;
      if (o.limit !== undefined) {
        if (!Number.isSafeInteger(o.limit) || o.limit < 1 || o.limit > LIST_MAX) throw bad(`limit is 1 to ${LIST_MAX}`);
        out.limit = o.limit;
      }
      const f = o.filter === undefined || o.filter === null ? {} : o.filter;
      if (typeof f !== 'object' || Array.isArray(f)) throw bad('filter is not an object');
      out.type = f.type === undefined ? 'all' : oneOf(f.type, 'filter.type', ['api', 'all']);
      if (f.text !== undefined && (typeof f.text !== 'string' || f.text.length > 200)) {
        throw bad('filter.text is a short string');
      }
      out.text = f.text || undefined;
      return out;
    },
    target: (p) => ({ tabId: p.tabId, frameId: 0 }),
    async run({ router, params, tabId: tab, documentId, frame }) {
      const docs = await router.capture.documents(tab);
      const { entries, dropped, capturing } = router.capture.list(tab, docs,
        { limit: params.limit, type: params.type, text: params.text });
      return { documentId, origin: webOrigin(frame?.url), entries, dropped, capturing };
    },
  },
});
