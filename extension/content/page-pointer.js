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
// - by HTML's drag and drop (draggable="true", a board's cards, and any link or image, as a
//   browser drags them: TiddlyWiki's links): the browser turns the press and first move into
//   dragstart, and then dragenter, dragover and drop on the target and dragend on the node, with
//   one DataTransfer the page fills and reads. No mouse move or release follows a drag that
//   started; one the page cancels (dragstart's preventDefault) goes on by the pointer.
// The drop happens only where the page said it would take it (dragover cancelled), as in a browser.
// What the press and the drop land on is judged as page-act.js judges the target (checkDrag,
// dropAt): a drag never presses or drops on a control a click on would have been held for.

(function () {
  'use strict';

  if (globalThis.__chaperonePage) return;   // installed already: the first install wins
  const P = globalThis.ChaperonePageParts;
  if (!P) return;                           // page-common.js did not run: nothing installs

  const { fail, state, owns, composedContains, elementAt } = P;

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

  const { mouseInit, pointerInit } = P;   // page-act.js: what a person's press sends, as a click's

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

  /**
   * What a browser's drag from `n` would carry: the nearest element from it up that is draggable
   * — by draggable="true", or by default, as a link or an image is (TiddlyWiki's links are
   * dragged so, with no attribute) — or null, when the press can only start a pointer drag.
   */
  function draggableOf(n) {
    for (; n && n.nodeType === 1; n = n.parentElement) if (n.draggable === true) return n;
    return null;
  }

  /**
   * Everything at (x, y), topmost first, into open shadow roots (their elements before their
   * host), past Chaperone's own pill and banner, as elementAt() sees the top of it.
   */
  function stackAt(root, x, y, depth = 0) {
    const out = [];
    for (const el of root.elementsFromPoint(x, y)) {
      if (owns(el) || out.includes(el)) continue;
      if (el.shadowRoot && depth < 8) {
        for (const inner of stackAt(el.shadowRoot, x, y, depth + 1)) {
          if (inner !== el && !out.includes(inner) && composedContains(el, inner)) out.push(inner);
        }
      }
      out.push(el);
    }
    return out;
  }

  const inside = (outer, n) => n === outer || composedContains(outer, n);
  const up = (n) => n.parentElement || (n.parentNode && n.parentNode.nodeType === 11 ? n.parentNode.host : null);

  /** A control from `n` up to (not including) `stop`, or to the top, that a click on would hold. */
  function heldControlFrom(n, stop) {
    for (; n && n !== stop; n = up(n)) {
      if ((n.matches(P.INNER_CONTROL) || state.clickable.has(n)) && P.classifyTarget(n).cls.kind !== 'none') return n;
    }
    return null;
  }

  /**
   * Where a drop at (x, y) onto `target` lands, and whether it may be judged as the target:
   * → {over, held}. `over`: the topmost element there that is `target` or inside it. `held`: a
   * control that a click would hold, in any layer above `over` (a person's drop would land on
   * it) or between `over` and `target` (a "Delete forever" button at the centre of a folder
   * list); or `target` itself when nothing of it is there. The drop is judged as a click on the
   * target, so what it lands on must not mean more than the target does. Neutral ones (a
   * diagram's nodes on a canvas, a copy that follows the pointer) do not count, nor does
   * `moving`, the element dragged, which may follow the pointer itself.
   */
  function dropAt(target, x, y, moving = null) {
    for (const n of stackAt(target.ownerDocument, x, y)) {
      if (moving && inside(moving, n)) continue;
      const held = heldControlFrom(n, inside(target, n) ? target : null);
      if (held) return { over: null, held };
      if (inside(target, n)) return { over: n, held: null };
    }
    return { over: null, held: target };
  }

  /**
   * Before a drag is judged: refused when a person could not make it, or when it would act
   * unjudged — the element pressed is a control a click on would hold (a press and release on
   * it may be that click), or the drop point is on such a control inside the target.
   */
  function checkDrag(el, target) {
    if (el === target || composedContains(el, target)) fail('invalid_params', 'to must be outside the element dragged');
    if (el.ownerDocument !== target.ownerDocument) fail('invalid_params', 'to must be in the same document as ref');
    P.checkUsable(el);
    // Draggable itself, not by a card or a link around it (a Delete button inside a card is a
    // button, pressed as one).
    const drags = state.draggable.has(el) || el.draggable === true;
    if (!drags && P.classifyTarget(el).cls.kind !== 'none') {
      fail('target_denied', `${P.describe(el)} sends, deletes or writes when pressed: it is not something to drag`);
    }
    const { x, y } = reach(target, 'nearest');
    const { held } = dropAt(target, x, y);
    if (held) fail('target_denied', `the drop point is on ${P.describe(held)}, a control of its own: drop on its ref`);
  }

  /** The button let go, not on what was pressed (a press and release there may be its click). */
  function letGo(grip, at, view) {
    grip.dispatchEvent(new PointerEvent('pointercancel', pointerInit(mouseInit(view, at.x, at.y, { cancelable: false }))));
    grip.ownerDocument.documentElement.dispatchEvent(new MouseEvent('mouseup', mouseInit(view, at.x, at.y, { buttons: 0 })));
  }

  const CONTROL_PUT = 'the page put a control under the drop point during the drag';

  /** Drags `el` onto `target` (see above; checkDrag first). → {dropped}: whether the page took the drop. */
  function doDrag(el, target) {
    const view = el.ownerDocument.defaultView;
    const from = reach(el, 'center');
    // Where the press lands: the node's own handlers, or a handle's inside it, hear it first.
    const grip = from.hit && composedContains(el, from.hit) ? from.hit : el;
    // What is pressed is what a click there would press: a control inside the element (a card's
    // Delete button) is judged as that click, and is no place to start a drag from.
    const pressed = heldControlFrom(grip, el);
    if (pressed) fail('target_denied', `the drag would be pressed on ${P.describe(pressed)}, which sends, deletes or writes when pressed`);
    doHover(grip, from);
    const down = mouseInit(view, from.x, from.y, { buttons: 1, detail: 1 });
    grip.dispatchEvent(new PointerEvent('pointerdown', pointerInit(down)));
    grip.dispatchEvent(new MouseEvent('mousedown', down));
    // The target is measured after the press: pressing may lift the node out of a list. One it
    // cannot reach now is refused with the button let go (letGo), so that the page is not left
    // in the middle of a drag — and not on what was pressed, where a release may be a click.
    let to;
    try {
      to = reach(target, 'nearest');
    } catch (e) {
      letGo(grip, from, view);
      throw e;
    }
    const dragged = draggableOf(grip);
    // What a browser's drag carries is the draggable element from the press up: one around the
    // element named would move more than the card says (a whole group for one of its items).
    if (dragged && dragged !== el && composedContains(dragged, el)) {
      letGo(grip, from, view);
      fail('target_denied', `the browser would drag ${P.describe(dragged)}, around the element named: drag its ref`);
    }
    if (dragged) {
      const data = new DataTransfer();
      const start = mouseInit(view, from.x, from.y, { buttons: 1, dataTransfer: data });
      if (dragged.dispatchEvent(new DragEvent('dragstart', start))) return dropByHtml(dragged, grip, from, to, target, data, view);
    }
    return dropByPointer(el, grip, from, to, target, view);
  }

  function dropByPointer(el, grip, from, to, target, view) {
    const doc = grip.ownerDocument;
    let under = grip;
    for (let i = 1; i <= DRAG_STEPS; i++) {
      const x = from.x + ((to.x - from.x) * i) / DRAG_STEPS;
      const y = from.y + ((to.y - from.y) * i) / DRAG_STEPS;
      // What a person's pointer is over now: the page's dragged copy, when it follows under it.
      under = elementAt(doc, x, y) || under;
      doHover(under, { x, y }, 1);
    }
    // Where the release lands, after the last move (the page's copy follows the pointer).
    under = elementAt(doc, to.x, to.y) || under;
    // What it lands on is judged again: the page may have moved its controls meanwhile. (Not
    // the target's place: a sortable list moves its items out of the way as one is dragged, and
    // the page decides where it drops by the pointer's point. Releasing on what was pressed, when
    // the page moves it along with the pointer, is no click of a control: none was pressed.)
    const { held } = dropAt(target, to.x, to.y, el);
    // What is under the release may be the dragged element itself, moved along with the pointer:
    // never one of its own controls a click on would hold (a card's Delete button).
    const own = composedContains(el, under) ? heldControlFrom(under, el) : null;
    if ((held && held !== target) || own) {
      doHover(grip, from, 1);
      letGo(grip, from, view);
      fail('target_denied', `${CONTROL_PUT}; the button was let go where the drag started`);
    }
    const up = mouseInit(view, to.x, to.y, { buttons: 0, detail: 1 });
    under.dispatchEvent(new PointerEvent('pointerup', pointerInit(up)));
    under.dispatchEvent(new MouseEvent('mouseup', up));
    return { dropped: true };
  }

  function dropByHtml(dragged, grip, from, to, target, data, view) {
    const at = (x, y, extra) => mouseInit(view, x, y, { dataTransfer: data, ...extra });
    // The browser's drag takes over the pointer: the press's pointer is cancelled.
    grip.dispatchEvent(new PointerEvent('pointercancel', pointerInit(mouseInit(view, from.x, from.y, { cancelable: false }))));
    dragged.dispatchEvent(new DragEvent('drag', at(from.x, from.y, {})));
    // Over the target, where it was judged: what lands there is judged again, from the element
    // that gets the drop up to the target and in any layer above it (the page may have moved
    // things on dragstart); anything else ends the drag with no drop.
    const { over, held } = dropAt(target, to.x, to.y, dragged);
    if (!over) {
      dragged.dispatchEvent(new DragEvent('dragend', at(from.x, from.y, {})));
      fail('target_denied', `${held !== target ? CONTROL_PUT : 'the target moved away from the drop point during the drag'}; `
        + 'the drag ended with nothing dropped');
    }
    // The drop goes to the target, the element judged, and rises from it as a browser's does: not
    // to what lies inside it there, whose own handlers nobody judged (a plain "Delete forever"
    // zone at the centre of a neutral container). A page that takes drops only there answers
    // dropped:false, and the agent drops on that element's ref, judged then.
    target.dispatchEvent(new DragEvent('dragenter', at(to.x, to.y, {})));
    const taken = !target.dispatchEvent(new DragEvent('dragover', at(to.x, to.y, {})));
    if (taken) target.dispatchEvent(new DragEvent('drop', at(to.x, to.y, {})));
    else target.dispatchEvent(new DragEvent('dragleave', at(to.x, to.y, {})));
    dragged.dispatchEvent(new DragEvent('dragend', at(to.x, to.y, {})));
    return { dropped: taken };
  }

  Object.assign(P, { doHover, checkDrag, doDrag });
})();
