// SPDX-License-Identifier: GPL-3.0-or-later
// The page agent's pointer: the events a person's mouse makes when it comes to rest on a node
// (hover) and when it drags one node onto another (drag), for page-act.js's `action` op, which
// judges, holds and settles them as it does a click. Loaded after page-act.js, whose checks it
// uses (a node a person could not reach is refused here as there).
//
// A drag is the two ways pages listen for one:
// - by the pointer (jQuery UI's draggable in Node-RED's palette, SortableJS's fallback, dnd-kit):
//   pressed on the node, moved in steps to the target's centre, released there. A page that moves
//   the node along with the pointer sees a real drag's events, on whatever is under the pointer
//   at each step, as a person's would be;
// - by HTML's drag and drop (draggable="true", a board's cards): the browser turns the press and
//   first move into dragstart, and then dragenter, dragover and drop on the target and dragend on
//   the node, with one DataTransfer the page fills and reads. No mouse move or release follows a
//   drag that started; one the page cancels (dragstart's preventDefault) goes on by the pointer.
// The drop happens only where the page said it would take it (dragover cancelled), as in a browser.

(function () {
  'use strict';

  if (globalThis.__chaperonePage) return;   // installed already: the first install wins
  const P = globalThis.ChaperonePageParts;
  if (!P) return;                           // page-common.js did not run: nothing installs

  const { fail, state, composedContains, elementAt } = P;

  // A pointer drag moves in this many steps: enough for a page's drag threshold (jQuery UI's
  // distance, dnd-kit's activation) to be passed on the way, and for one that tracks what is
  // under the pointer to see it pass over the targets between.
  const DRAG_STEPS = 8;

  /** An element and its ancestors (through shadow roots and inlined frames), innermost first. */
  function lineage(el) {
    const out = [];
    for (let n = el; n && out.length < 256; n = n.parentNode || (n.nodeType === 11 ? n.host : null)
      || (n.nodeType === 9 ? (n.defaultView && n.defaultView.frameElement) || null : null)) {
      if (n.nodeType === 1) out.push(n);
    }
    return out;
  }

  const mouseInit = (view, x, y, extra) => ({ bubbles: true, cancelable: true, composed: true, view, clientX: x,
    clientY: y, button: 0, ...extra });
  const pointerInit = (init) => ({ ...init, pointerId: 1, pointerType: 'mouse', isPrimary: true });

  /**
   * The pointer comes to rest on the node: pointer/mouse out and leave where it was (from the
   * last hover), over and enter on the node and each ancestor it newly enters, then a move.
   * Menus that open from script on these events open; a pure CSS :hover cannot be reached by
   * events a page makes (only a real pointer sets it). `at`: the point, when not the centre;
   * `buttons`: those held down (a drag's move).
   */
  function doHover(el, at = null, buttons = 0) {
    const { checkModal, scrollTo, checkCover } = P;
    let x;
    let y;
    if (at) ({ x, y } = at);
    else {
      checkModal(el);
      scrollTo(el, 'center');
      ({ x, y } = checkCover(el));
    }
    const base = mouseInit(el.ownerDocument.defaultView, x, y, buttons ? { buttons } : {});
    const ptr = pointerInit(base);
    const prev = state.hovered ? state.hovered.deref() : null;
    const entered = lineage(el);
    const left = prev && prev.isConnected && prev !== el ? lineage(prev) : [];
    const stay = new Set(entered.filter((n) => left.includes(n)));
    if (left.length) {
      prev.dispatchEvent(new PointerEvent('pointerout', { ...ptr, relatedTarget: el }));
      prev.dispatchEvent(new MouseEvent('mouseout', { ...base, relatedTarget: el }));
      for (const n of left) {
        if (stay.has(n)) break;
        n.dispatchEvent(new PointerEvent('pointerleave', { ...ptr, bubbles: false, cancelable: false, relatedTarget: el }));
        n.dispatchEvent(new MouseEvent('mouseleave', { ...base, bubbles: false, cancelable: false, relatedTarget: el }));
      }
    }
    if (prev !== el) {
      el.dispatchEvent(new PointerEvent('pointerover', { ...ptr, relatedTarget: prev || null }));
      el.dispatchEvent(new MouseEvent('mouseover', { ...base, relatedTarget: prev || null }));
      for (const n of entered.filter((e) => !stay.has(e)).reverse()) {
        n.dispatchEvent(new PointerEvent('pointerenter', { ...ptr, bubbles: false, cancelable: false }));
        n.dispatchEvent(new MouseEvent('mouseenter', { ...base, bubbles: false, cancelable: false }));
      }
    }
    el.dispatchEvent(new PointerEvent('pointermove', ptr));
    el.dispatchEvent(new MouseEvent('mousemove', base));
    state.hovered = new WeakRef(el);
  }

  /** The centre of `el` a person can reach, in its document's viewport, scrolled into view. */
  function reach(el, block) {
    P.checkModal(el);
    P.scrollTo(el, block);
    return P.checkCover(el);
  }

  /** Drags `el` onto `target` (see above). → {dropped}: whether the page took the drop. */
  function doDrag(el, target) {
    if (el === target || composedContains(el, target)) fail('invalid_params', 'to must be outside the element dragged');
    if (el.ownerDocument !== target.ownerDocument) fail('invalid_params', 'to must be in the same document as ref');
    P.checkUsable(el);
    const view = el.ownerDocument.defaultView;
    reach(target, 'nearest');                 // refused before anything is pressed
    const from = reach(el, 'center');
    // Where the press lands: the node's own handlers, or a handle's inside it, hear it first.
    const grip = from.hit && composedContains(el, from.hit) ? from.hit : el;
    doHover(grip, from);
    const down = mouseInit(view, from.x, from.y, { buttons: 1, detail: 1 });
    grip.dispatchEvent(new PointerEvent('pointerdown', pointerInit(down)));
    grip.dispatchEvent(new MouseEvent('mousedown', down));
    // The target is measured after the press: pressing may lift the node out of a list. One it
    // cannot reach now is refused with the button let go where it was pressed, as a person who
    // gives up lets go, so that the page is not left in the middle of a drag.
    let to;
    try {
      to = reach(target, 'nearest');
    } catch (e) {
      const up = mouseInit(view, from.x, from.y, { buttons: 0, detail: 1 });
      grip.dispatchEvent(new PointerEvent('pointerup', pointerInit(up)));
      grip.dispatchEvent(new MouseEvent('mouseup', up));
      throw e;
    }
    const dragged = el.closest('[draggable="true"]') || (grip.closest && grip.closest('[draggable="true"]'));
    if (dragged) {
      const data = new DataTransfer();
      const start = mouseInit(view, from.x, from.y, { buttons: 1, dataTransfer: data });
      if (dragged.dispatchEvent(new DragEvent('dragstart', start))) return dropByHtml(dragged, from, to, data, view);
    }
    return dropByPointer(grip, from, to, view);
  }

  function dropByPointer(grip, from, to, view) {
    const doc = grip.ownerDocument;
    let under = grip;
    for (let i = 1; i <= DRAG_STEPS; i++) {
      const x = from.x + ((to.x - from.x) * i) / DRAG_STEPS;
      const y = from.y + ((to.y - from.y) * i) / DRAG_STEPS;
      // What a person's pointer is over now: the page's dragged copy, when it follows under it.
      under = elementAt(doc, x, y) || under;
      doHover(under, { x, y }, 1);
    }
    const up = mouseInit(view, to.x, to.y, { buttons: 0, detail: 1 });
    under.dispatchEvent(new PointerEvent('pointerup', pointerInit(up)));
    under.dispatchEvent(new MouseEvent('mouseup', up));
    return { dropped: true };
  }

  function dropByHtml(dragged, from, to, data, view) {
    const doc = dragged.ownerDocument;
    const at = (x, y, extra) => mouseInit(view, x, y, { dataTransfer: data, ...extra });
    // The browser's drag takes over the pointer: the press's pointer is cancelled.
    dragged.dispatchEvent(new PointerEvent('pointercancel', pointerInit(mouseInit(view, from.x, from.y, {}))));
    dragged.dispatchEvent(new DragEvent('drag', at(from.x, from.y, {})));
    const over = elementAt(doc, to.x, to.y) || to.hit;
    over.dispatchEvent(new DragEvent('dragenter', at(to.x, to.y, {})));
    const taken = !over.dispatchEvent(new DragEvent('dragover', at(to.x, to.y, {})));
    if (taken) over.dispatchEvent(new DragEvent('drop', at(to.x, to.y, {})));
    else over.dispatchEvent(new DragEvent('dragleave', at(to.x, to.y, {})));
    dragged.dispatchEvent(new DragEvent('dragend', at(to.x, to.y, {})));
    return { dropped: taken };
  }

  Object.assign(P, { lineage, doHover, doDrag });
})();
