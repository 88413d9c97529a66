// SPDX-License-Identifier: GPL-3.0-or-later
// The page agent's shared part: its errors, its state in this document (captures and refs), the
// DOM facts that reading and acting both need, the sign-in floor, ref resolution, and the page's
// own port. The first of the agent's files (lib/page-bridge.js PAGE_FILES has the order): it opens
// globalThis.ChaperonePageParts, where each part leaves what the others use, and page-agent.js,
// the last, installs the whole. A classic script, in the extension's ISOLATED world, like the rest.

(function () {
  'use strict';

  if (globalThis.__chaperonePage) return;   // installed already: the first install wins

  class PageError extends Error {
    constructor(code, message, data) {
      super(message);
      this.code = code;
      if (data !== undefined) this.data = data;   // plain, fixed facts — never page content
    }
  }

  const fail = (code, message, data) => { throw new PageError(code, message, data); };

  const core = () => globalThis.ChaperoneSnapshotCore;
  const ui = () => globalThis.ChaperonePageUi;

  // ---- state ---------------------------------------------------------------------------------

  // Chaperone's own pill and banner hosts (page-ui.js): never scanned, never given a ref, and
  // their changes are not the page's.
  const owns = (el) => {
    const u = ui();
    return !!u && u.owns(el);
  };
  const state = {
    captures: new Map(),               // captureId → capture, oldest first
    lastCaptureId: null,
    refOf: new WeakMap(),              // element → its ref in this document (identity re-use)
    nextRef: 0,
    localSeq: 0,
    clickable: new WeakSet(),          // elements found clickable by their look (clickableByLook)
    draggable: new WeakSet(),          // elements found draggable by their look (lookOf)
  };

  // The page's own port to the worker, once open (page-agent.js connect()), and per op id the
  // settle wait's hook for the {net} messages on it (page-settle.js).
  const pagePort = { port: null, hooks: null };

  // ---- DOM helpers ---------------------------------------------------------------------------

  // Elements laid out as blocks (or a line break) by their tag: textContent runs their words into
  // the words around them, so a list option of a name, a description and a version (Verdaccio's
  // search) read "harbour-tidesTide tables…1.2.0".
  const BLOCKS = 'div,p,li,ul,ol,dl,dt,dd,h1,h2,h3,h4,h5,h6,br,hr,tr,td,th,table,section,article,header,'
    + 'footer,nav,aside,main,blockquote,pre,figure,figcaption,address';

  /** The text of `el` (at most 2000 characters) with a space on each side of every block in it. */
  function spacedText(el) {
    let out = '';
    const walk = (node, depth) => {
      for (let n = node.firstChild; n && out.length < 2000; n = n.nextSibling) {
        if (n.nodeType === 3) out += n.data;
        else if (n.nodeType === 1 && depth >= 32) out += n.textContent;   // a page nested this deep: as it is
        else if (n.nodeType === 1) {
          const block = n.matches(BLOCKS);
          if (block) out += ' ';
          walk(n, depth + 1);
          if (block) out += ' ';
        }
      }
    };
    walk(el, 0);
    return out.length > 2000 ? out.slice(0, 2000) : out;
  }

  /** An element-like description for snapshot-core, with text computed only on demand. */
  class Desc {
    constructor(el) {
      this.el = el;
      this.tag = el.localName;
    }

    attr(name) {
      return this.el.getAttribute(name);
    }

    get text() {
      // textContent, capped before collapsing so a huge card-link stays cheap; with a space
      // around each block inside, as a person reads them apart (below).
      const t = this.el.textContent || '';
      if (t.length > 2000) return t.slice(0, 2000);
      return this.el.firstElementChild && this.el.querySelector(BLOCKS) ? spacedText(this.el) : t;
    }

    get labelText() {
      const labels = this.el.labels;
      if (!labels || !labels.length) return '';
      let out = '';
      for (const l of labels) out += ' ' + labelTextOf(l, this.el);
      return out;
    }

    get labelledByText() {
      const ids = this.el.getAttribute('aria-labelledby');
      if (!ids) return '';
      const root = this.el.getRootNode();
      let out = '';
      for (const id of ids.split(/\s+/)) {
        const ref = id && root.getElementById ? root.getElementById(id) : null;
        if (ref && ref !== this.el) out += ' ' + (ref.textContent || '').slice(0, 2000);
      }
      return out;
    }
  }

  /** A label's text without the text of the control it wraps (a select's options, say). */
  function labelTextOf(label, control) {
    if (!label.contains(control)) return (label.textContent || '').slice(0, 2000);
    let out = '';
    const w = document.createTreeWalker(label, NodeFilter.SHOW_TEXT);
    for (let n = w.nextNode(); n && out.length < 2000; n = w.nextNode()) {
      if (!control.contains(n)) out += n.data;
    }
    return out;
  }

  // ---- frames that inherit this page's origin -------------------------------------------------
  //
  // An <iframe> whose document has no URL of its own — about:blank (often written by script, as
  // TiddlyWiki's editor is), about:srcdoc, a javascript: URL — shares this document's origin and
  // has nothing else to be judged by: it is part of this page. Its document is read and acted on
  // from here, through contentDocument, under this page's grant and this page's URL floor. Any
  // frame with a URL of its own (same-origin http(s) included: the floor judges URLs by path) or
  // another origin stays a frame of its own, granted or not (lib/targets.js).

  const MAX_FRAME_DEPTH = 4;

  /** The document of a frame element that inherits this page's origin, else null. */
  function inheritedDoc(frame) {
    if (!frame || (frame.localName !== 'iframe' && frame.localName !== 'frame')) return null;
    let doc = null;
    try {
      doc = frame.contentDocument;         // null across origins (and in an opaque sandbox)
    } catch (_) {
      return null;
    }
    if (!doc || !doc.documentElement) return null;
    const url = String(doc.URL || '');
    // document.open() (how script writes such a frame) gives it the URL of the page that wrote it:
    // the very URL this page is judged by.
    if (/^(about:|javascript:)/i.test(url) || url === frame.ownerDocument.URL) return doc;
    return null;
  }

  /** The frame element holding `doc` (a document inlined from its parent), or null. */
  function frameOf(doc) {
    if (!doc || doc === document) return null;
    try {
      const fe = doc.defaultView ? doc.defaultView.frameElement : null;
      return fe && inheritedDoc(fe) === doc ? fe : null;
    } catch (_) {
      return null;
    }
  }

  /** This document, or one inlined into it (through connected frames, at most 4 deep). */
  function docReachable(doc) {
    let d = doc;
    for (let depth = 0; d && depth <= MAX_FRAME_DEPTH; depth += 1) {
      if (d === document) return true;
      const fe = frameOf(d);
      if (!fe || !fe.isConnected) return false;
      d = fe.ownerDocument;
    }
    return false;
  }

  /** The frame elements from `el`'s document up to this one, innermost first. */
  function frameChain(el) {
    const out = [];
    for (let d = el.ownerDocument; d && d !== document && out.length <= MAX_FRAME_DEPTH;) {
      const fe = frameOf(d);
      if (!fe) break;
      out.push(fe);
      d = fe.ownerDocument;
    }
    return out;
  }

  /** True when `a` contains `b`, crossing shadow-root boundaries and inlined frames. */
  function composedContains(a, b) {
    for (let n = b; n; n = n.parentNode || (n.nodeType === 11 ? n.host : null)
      || (n.nodeType === 9 ? frameOf(n) : null)) {
      if (n === a) return true;
    }
    return false;
  }

  /**
   * The focused element, through open shadow roots and inlined frames. A frame's body is its
   * focused element when nothing in it has focus, unless the body is the editor itself
   * (contenteditable or designMode: Etherpad's, in a frame in a frame), where the caret is.
   */
  function deepActiveElement() {
    let a = document.activeElement;
    for (let i = 0; a && i < 64; i += 1) {
      if (a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
      else {
        const doc = inheritedDoc(a);
        const inner = doc && doc.activeElement;
        if (!inner || (inner === doc.body && !inner.isContentEditable)) break;
        a = inner;
      }
    }
    return a;
  }

  function isVisibleStyle(el) {
    if (typeof el.checkVisibility === 'function') {
      return el.checkVisibility({ visibilityProperty: true, checkVisibilityCSS: true });
    }
    return true;
  }

  /** Rendered: visible by style and with a box (a 0×0 control is not there for a person). */
  function isRendered(el, rect) {
    if (!isVisibleStyle(el)) return false;
    const r = rect || el.getBoundingClientRect();
    return r.width > 0 || r.height > 0;
  }

  // ---- where a pointer lands ----------------------------------------------------------------

  /** The innermost element at a point, through open shadow roots, ignoring Chaperone's own UI. */
  function elementAt(doc, x, y) {
    // The hit-test stack, topmost first, read past our own hosts (the pill may sit over the node)
    // without touching their style: page-ui.js watches that style and would re-mount them.
    let hit = null;
    for (const el of doc.elementsFromPoint(x, y)) {
      if (!owns(el)) {
        hit = el;
        break;
      }
    }
    while (hit && hit.shadowRoot) {
      const inner = hit.shadowRoot.elementFromPoint(x, y);
      if (!inner || inner === hit) break;
      hit = inner;
    }
    return hit;
  }

  function isFocusable(el) {
    return el.tabIndex >= 0 || el.isContentEditable || el.matches('a[href], button, input, select, textarea, summary, [tabindex]');
  }

  /**
   * Where a press on `el` puts the focus, as the browser's mousedown does: `el` or its nearest
   * ancestor in its document that takes focus (through shadow roots), else nothing (the body).
   */
  function focusTargetOf(el) {
    for (let n = el; n && n.nodeType !== 9; n = n.parentNode || (n.nodeType === 11 ? n.host : null)) {
      if (n.nodeType === 1 && isFocusable(n)) return n;
    }
    return null;
  }

  // ---- clickable or draggable by its look ---------------------------------------------------
  //
  // Nothing in the markup of a script-driven list item says it can be clicked (Node-RED's search
  // results, a React onClick on a div), but a person sees the pointer over it and clicks. An
  // element with attributes that nothing else makes actionable counts when its cursor is the
  // pointer — or, in an SVG drawing, the move or grab cursor of a diagram's node, which a click
  // selects and a double-click opens — and its parent's is not (the outermost such element: the
  // cursor is inherited), it is not inside a link, button or other control, it is shown, and it
  // has some text or a label. It keeps its role (generic, listitem …), takes its name from its
  // content as a button would, and is listed [clickable]. In HTML the move or grab cursor, or
  // draggable="true", marks something a person drags (a palette's item, a board's card): listed
  // [draggable], for browser_act's drag, and only for a query (the app leaves them out of a plain
  // snapshot: Node-RED's palette alone would add 60 lines to every one). Asking for a style is the
  // costly part: at most MAX_LOOKS per walk.

  const MAX_LOOKS = 5000;
  const INSIDE_CONTROL = 'a[href],button,summary,label,select,[role=button],[role=link],[role=menuitem],'
    + '[role=tab],[role=option],[role=treeitem],[role=checkbox],[role=radio],[role=switch]';

  /**
   * Whether `el` is clickable by its look now (see above), noted in state.clickable, and whether
   * it is draggable, noted in state.draggable, either way; `walk` counts the styles asked for.
   * → whether it is either.
   */
  function lookOf(el, walk) {
    if ((walk.looks = (walk.looks || 0) + 1) > MAX_LOOKS) return false;
    const look = looksActionable(el, walk.cursors || (walk.cursors = new Map()));
    for (const [set, yes] of [[state.clickable, look.click], [state.draggable, look.drag]]) {
      if (yes) set.add(el);
      else set.delete(el);
    }
    return look.click || look.drag;
  }

  /** Whether `el` is clickable by its look now (lookOf). */
  const clickableByLook = (el, walk) => lookOf(el, walk) && state.clickable.has(el);

  const DRAWN_CURSORS = new Set(['pointer', 'move', 'grab']);
  const DRAG_CURSORS = new Set(['move', 'grab']);
  const SVG_NS = 'http://www.w3.org/2000/svg';
  const NO_LOOK = Object.freeze({ click: false, drag: false });

  /**
   * `el`'s look (see above). `cursors`: the cursors asked for in this walk, by element, since an
   * element's is asked again as its children's parent's. The inherited cursor is looked at before
   * the controls around: on a drawing whose every shape inherits its node's cursor (Node-RED's
   * canvas), closest() up to the root for each shape was most of a snapshot's time.
   */
  function looksActionable(el, cursors = new Map()) {
    const view = el.ownerDocument.defaultView;
    const cursorOf = (e) => {
      let c = cursors.get(e);
      if (c === undefined) cursors.set(e, (c = view ? view.getComputedStyle(e).cursor : ''));
      return c;
    };
    const cursor = cursorOf(el);
    const svg = el.namespaceURI === SVG_NS;
    // draggable="true" says it outright, whatever the cursor; a cursor, only where it starts.
    // Not a link or an image, which a browser drags anyway (TiddlyWiki marks every link).
    const byAttribute = !svg && el.getAttribute('draggable') === 'true' && el.localName !== 'a' && el.localName !== 'img';
    const click = cursor === 'pointer' || (svg && DRAWN_CURSORS.has(cursor));
    const drag = byAttribute || (!svg && DRAG_CURSORS.has(cursor));
    if (!click && !drag) return NO_LOOK;
    const parent = el.parentElement;
    if (parent && !byAttribute && cursorOf(parent) === cursor) return NO_LOOK;
    if (parent && parent.closest(INSIDE_CONTROL)) return NO_LOOK;
    if (!/\S/.test(el.textContent) && !el.hasAttribute('aria-label') && !el.hasAttribute('title')) return NO_LOOK;
    // Only while shown: unlike a real control, nothing says a hidden one is a control at all.
    if (!isVisibleStyle(el)) return NO_LOOK;
    return { click, drag };
  }

  // Roles whose name is never their content: a field's content is what was typed into it.
  const FIELD_ROLES = new Set(['textbox', 'searchbox', 'combobox', 'listbox', 'spinbutton', 'slider']);

  /** {role, name} of an element as a node line gives them: a clickable one is named as a button is. */
  function roleAndName(el, d = new Desc(el)) {
    const C = core();
    const role = C.roleOf(d);
    const asButton = (state.clickable.has(el) || state.draggable.has(el)) && !FIELD_ROLES.has(role);
    // A table's row is named by its cells, one after the other ("Kittiwake B7 11.2 Jonas"), as
    // a person reads it, not by its text run together.
    if (role === 'row' && el.localName === 'tr' && !el.hasAttribute('aria-label') && !el.hasAttribute('aria-labelledby')) {
      // innerText: the words shown, not a cell's hidden ones.
      const cells = Array.from(el.cells || [], (c) => C.collapse((c.innerText ?? c.textContent ?? '').slice(0, 2000))).filter(Boolean);
      return { role, name: C.clip(cells.join(' '), 160) };
    }
    const name = C.nameOf(d, asButton ? 'button' : role);
    // A frame whose body is the editor (Etherpad's): named as its frame is, as a screen reader
    // names a frame's document.
    if (!name && role === 'textbox' && el === el.ownerDocument.body) {
      const frame = frameOf(el.ownerDocument);
      if (frame) return { role, name: C.nameOf(new Desc(frame), 'iframe') };
    }
    return { role, name };
  }

  // ---- the sign-in floor ---------------------------------------------------------------------
  //
  // A page that shows a password field is a sign-in page, and sign-in pages are blind (DESIGN §8,
  // floor.js pageLevel(): reason "sign_in"): no snapshot, inspect or act runs here for an agent,
  // whatever its URL, so neither the password nor anything around it (the username, the page's
  // text, refs to press "Sign in" with) ever leaves the page. The app refuses such a snapshot too,
  // but only after the page has answered; this check is the one that keeps the content home.
  // The pill and the handoff banner still work: "sign in yourself" is shown on exactly this page.

  // An autofill trap is a password field a page puts far out of the document on purpose, so that
  // the browser's password manager fills that one and not the page's own settings: Node-RED's node
  // editor keeps one at top −2000 px. Only that shape is exempt from the floor, and only in a page
  // laid out top to bottom and left to right, where nothing scrolls above or before the origin:
  // the field, or an ancestor, placed by `position: absolute` or `fixed` TRAP_PX or more above or
  // left of where it would be, and the field drawn wholly above or left of the document (its box
  // with the page's scroll, transforms included: a panel slid into view from there is in view).
  // A box between them that flows the other way (right to left, vertical, a reversed flex
  // column or row) may scroll it into view: never a trap.
  const TRAP_PX = 1000;

  function autofillTrap(el) {
    const doc = el.ownerDocument;
    const win = doc.defaultView;
    const forward = (cs) => cs.writingMode === 'horizontal-tb' && cs.direction === 'ltr' && !cs.flexDirection.endsWith('reverse');
    for (const e of [doc.documentElement, doc.body]) if (e && !forward(win.getComputedStyle(e))) return false;
    const r = el.getBoundingClientRect();
    const above = r.bottom + win.scrollY <= 0;
    const before = r.right + win.scrollX <= 0;
    if (!above && !before) return false;
    let placed = false;
    for (let e = el; e && e !== doc.body && e !== doc.documentElement; e = e.parentElement) {
      const cs = win.getComputedStyle(e);
      if (!forward(cs)) return false;
      if (cs.position === 'absolute' || cs.position === 'fixed') {
        placed = placed || (above && parseFloat(cs.top) <= -TRAP_PX) || (before && parseFloat(cs.left) <= -TRAP_PX);
      }
    }
    return placed;
  }

  /**
   * A password input a person can see: rendered (style, box) and not an autofill trap, as the
   * snapshot's auth signal.
   */
  function shownPassword(el) {
    return el.localName === 'input' && el.type === 'password' && el.isConnected && isRendered(el) && !autofillTrap(el);
  }

  /**
   * One selector query and a style/box check on its matches only (a page has few password
   * inputs; ~0.1 ms on a 10,000-element page). Light DOM: open shadow roots have no cheap index,
   * so they are checked by the ops that walk the page anyway (page-read.js opContext,
   * page-act.js opFind).
   */
  function docShowsPassword(doc, depth = 0) {
    for (const el of doc.querySelectorAll('input[type=password]')) if (shownPassword(el)) return true;
    // Frames that are part of this page (inheritedDoc): a password there is this page's.
    if (depth >= MAX_FRAME_DEPTH) return false;
    for (const f of doc.querySelectorAll('iframe, frame')) {
      const inner = inheritedDoc(f);
      if (inner && docShowsPassword(inner, depth + 1)) return true;
    }
    return false;
  }

  /** This document, or — from a same-origin child frame — the top one, shows a password field. */
  function showsPassword() {
    if (docShowsPassword(document)) return true;
    let top = null;
    try {
      top = window.top !== window ? window.top.document : null;
    } catch (_) {
      top = null;   // a cross-origin top document is not ours to read (the worker checks its URL)
    }
    return !!top && docShowsPassword(top);
  }

  function refuseSignIn() {
    fail('refused_floor', 'This page shows a password field: agents do not read or act on sign-in pages; ask the person (handoff)',
      { level: 'blind', reason: 'sign_in' });
  }

  /** Open modals: <dialog> shown with showModal(), and visible [aria-modal=true]. */
  function openModals(doc = document) {
    const out = [];
    for (const el of doc.querySelectorAll('dialog[open], [aria-modal="true"]')) {
      if (el.localName === 'dialog' && el.getAttribute('aria-modal') !== 'true') {
        let modal = false;
        try { modal = el.matches(':modal'); } catch (_) { modal = false; }
        if (!modal) continue;
      }
      if (!isRendered(el)) continue;
      out.push(el);
    }
    return out;
  }

  function isDisabled(el) {
    if (el.getAttribute('aria-disabled') === 'true') return true;
    try { return el.matches(':disabled'); } catch (_) { return false; }
  }

  // ---- ref resolution ------------------------------------------------------------------------

  function resolve(args) {
    let ref = args.ref;
    if (typeof ref !== 'string' || !ref) fail('invalid_params', 'ref must be a non-empty string');
    let captureId = typeof args.captureId === 'string' && args.captureId ? args.captureId : null;
    const colon = ref.lastIndexOf(':');
    if (colon >= 0) {
      if (!captureId) captureId = ref.slice(0, colon);
      ref = ref.slice(colon + 1);
    }
    const cap = state.captures.get(captureId || state.lastCaptureId);
    if (!cap) fail('stale_node', 'that capture is gone from this page; take a new context snapshot');
    const weak = cap.refs.get(ref);
    const el = weak ? weak.deref() : undefined;
    if (!el) fail('stale_node', `no node ${ref} in that capture; take a new context snapshot`);
    if (!el.isConnected || !docReachable(el.ownerDocument)) {
      fail('stale_node', `node ${ref} is no longer in the page; take a new context snapshot`);
    }
    return { el, ref, cap };
  }

  // ---- plan steps ----------------------------------------------------------------------------

  const PLAN_MAX_STEPS = 20;         // a plan the app approves has at most 20 steps (browser_plan)

  /**
   * {step, of} of a plan when both are whole numbers with 1 ≤ step ≤ of ≤ 20, else {} — the
   * worker checks them too; a page op never trusts its arguments to render or report.
   */
  function planStep(v) {
    if (!v || typeof v !== 'object') return {};
    const { step, of } = v;
    if (!Number.isSafeInteger(step) || !Number.isSafeInteger(of)) return {};
    if (step < 1 || step > of || of > PLAN_MAX_STEPS) return {};
    return { step, of };
  }

  globalThis.ChaperonePageParts = { PageError, fail, core, ui, owns, state, pagePort, Desc,
    labelTextOf, inheritedDoc, frameOf, docReachable, frameChain, composedContains, deepActiveElement, isVisibleStyle, isRendered, shownPassword,
    showsPassword, refuseSignIn, openModals, isDisabled, resolve, planStep, clickableByLook, lookOf, roleAndName, elementAt, isFocusable, focusTargetOf };
})();
