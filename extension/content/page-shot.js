// SPDX-License-Identifier: GPL-3.0-or-later
// The page agent's `shotMask` op: the boxes a failure screenshot draws over this page's fields
// (lib/capabilities/trace.js says which and why), in this document and the frames that are part
// of it; refused on a sign-in page as the reading ops are.

(function () {
  'use strict';

  if (globalThis.__chaperonePage) return;   // installed already: the first install wins
  const P = globalThis.ChaperonePageParts;
  if (!P) return;                           // page-common.js did not run: nothing installs

  const { core, owns, Desc, inheritedDoc, isRendered, shownPassword, refuseSignIn, fail } = P;

  // ---- op: shotMask --------------------------------------------------------------------------
  // The boxes a failure screenshot draws (lib/capabilities/trace.js says which and why), as
  // [left, top, right, bottom] in viewport CSS px: whether a field holds anything, never what.

  const SHOT_UNTYPED = /^(hidden|submit|button|reset|image|checkbox|radio|range|color|file)$/;
  const SHOT_CARD = /(^|\s)cc-|card.?(number|num|no)|\bcc.?(num|csc|cvv|exp)/i;
  const meet = (a, b) => [Math.max(a[0], b[0]), Math.max(a[1], b[1]), Math.min(a[2], b[2]), Math.min(a[3], b[3])];
  const edges = (r) => [Math.floor(r[0]), Math.floor(r[1]), Math.ceil(r[2]), Math.ceil(r[3])];

  function shotBoxed(el) {
    const tag = el.localName;
    if (tag === 'input' ? SHOT_UNTYPED.test(el.type) : tag !== 'textarea'
      && (!el.isContentEditable || (el.parentElement && el.parentElement.isContentEditable))) return false;
    return core().isCredentialField(new Desc(el)) || core().isOtpField(new Desc(el))
      || SHOT_CARD.test(`${el.getAttribute('autocomplete') || ''} ${el.getAttribute('name') || ''} ${el.id}`)
      || (tag === 'input' || tag === 'textarea' ? el.value.length > 0 : /\S/.test(el.textContent));   // whether, not what
  }

  function opShotMask() {
    const out = { width: innerWidth, height: innerHeight, dpr: devicePixelRatio, scrollX, scrollY, boxes: [], frames: [] };
    const box = (r) => out.boxes.push(edges(r)) > 2000 && fail('too_large', 'too many fields to box');
    const walk = (root, dx, dy, clip, depth) => {
      if (root.designMode === 'on' && root.body && /\S/.test(root.body.textContent)) box(clip);
      const w = (root.ownerDocument || root).createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
      for (let el = w.nextNode(); el; el = w.nextNode()) {
        const tag = el.localName;
        if (owns(el)) continue;                  // Chaperone's pill and banner
        const sr = el.shadowRoot || (!tag.includes('-') ? null : globalThis.chrome && chrome.dom   // closed: Chrome's way,
          && chrome.dom.openOrClosedShadowRoot ? chrome.dom.openOrClosedShadowRoot(el) : el.openOrClosedShadowRoot || null);  // Firefox's
        if (sr) walk(sr, dx, dy, clip, depth);
        const isFrame = tag === 'iframe' || tag === 'frame';
        if (!isFrame && tag !== 'input' && tag !== 'textarea' && !el.hasAttribute('contenteditable')) continue;
        if (!isFrame && shownPassword(el)) refuseSignIn();
        const b = el.getBoundingClientRect();
        const own = meet([b.left + dx, b.top + dy, b.right + dx, b.bottom + dy], clip);
        if (!isRendered(el, b) || own[2] <= own[0] || own[3] <= own[1] || (!isFrame && !shotBoxed(el))) continue;
        const doc = isFrame ? el.contentDocument : null;     // null across origins
        if (!doc || !doc.documentElement || depth >= 4) { box(own); continue; }   // a field, or a frame not ours to read
        const cs = getComputedStyle(el);
        const [pl, pt] = [parseFloat(cs.paddingLeft), parseFloat(cs.paddingTop)];
        const [x, y] = [b.left + dx + el.clientLeft + pl, b.top + dy + el.clientTop + pt];
        const inner = [x, y, x + el.clientWidth - pl - parseFloat(cs.paddingRight), y + el.clientHeight - pt - parseFloat(cs.paddingBottom)];
        if (!inheritedDoc(el) && /^https?:/i.test(doc.URL)) out.frames.push({ url: String(doc.URL), box: edges(own) });
        walk(doc, x, y, meet(inner, clip), depth + 1);
      }
    };
    walk(document, 0, 0, [0, 0, innerWidth, innerHeight], 0);
    return out;
  }

  Object.assign(P, { opShotMask });
})();
